//! The program file every command reads (`check`, `run`, `stf`, `serve`, `p4info`, `bench
//! component`): checked before it is opened, so that a directory, a FIFO, a device or a
//! BMv2 JSON gets a message that says what it is (and a FIFO or `/dev/zero` is never read:
//! no hang, no endless read).

use std::path::Path;

/// `Ok` when `path` is a regular file that is not a BMv2 JSON; else the message for the user
/// (the caller prefixes `error: `; exit 2).
pub fn readable(path: &Path) -> Result<(), String> {
    let shown = path.display();
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(format!("{shown}: no such file"))
        }
        Err(e) => return Err(format!("{shown}: {e}")),
    };
    let kind = meta.file_type();
    if !kind.is_file() {
        use std::os::unix::fs::FileTypeExt;
        let what = if kind.is_dir() {
            "a directory"
        } else if kind.is_fifo() {
            "a named pipe (FIFO)"
        } else if kind.is_char_device() {
            "a character device"
        } else if kind.is_block_device() {
            "a block device"
        } else if kind.is_socket() {
            "a socket"
        } else {
            "not a regular file"
        };
        return Err(format!(
            "{shown}: is {what}, not a P4 program: give the path of a .p4 source file"
        ));
    }
    let mut head = [0u8; 4096];
    let n = {
        use std::io::Read;
        let mut f = std::fs::File::open(path).map_err(|e| format!("{shown}: {e}"))?;
        f.read(&mut head).map_err(|e| format!("{shown}: {e}"))?
    };
    if let Some(why) = bmv2_json(&head[..n]) {
        return Err(format!("{shown}: {why}"));
    }
    Ok(())
}

/// What to tell a user who gave a BMv2 JSON (p4c-bm2-ss's output) as the program, judged by its
/// first bytes: a JSON object with BMv2's top-level keys. `None` for anything else (P4 source
/// goes on to the front end, which reports its own errors).
///
/// Today's build compiles P4 source only; when nevermiss loads BMv2 JSON, this is the one
/// place that turns it away.
pub fn bmv2_json(head: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(head);
    let body = text.trim_start_matches('\u{feff}').trim_start();
    if !body.starts_with('{') {
        return None;
    }
    const BMV2_KEYS: [&str; 6] = [
        "\"header_types\"",
        "\"headers\"",
        "\"parsers\"",
        "\"pipelines\"",
        "\"__meta__\"",
        "\"deparsers\"",
    ];
    if !BMV2_KEYS.iter().any(|k| body.contains(k)) {
        return None;
    }
    Some(
        "this is a BMv2 JSON (the output of p4c-bm2-ss), not P4 source: nevermiss compiles \
         P4_16 programs itself; give it the .p4 file the JSON was made from"
            .into(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bmv2_json_is_recognised_by_its_keys() {
        let j = br#"{
  "header_types" : [ {"name" : "scalars_0", "id" : 0, "fields" : []} ],
  "__meta__" : {"version" : [2, 23]}"#;
        assert!(bmv2_json(j).unwrap().contains("BMv2 JSON"));
        assert!(bmv2_json(b"\xef\xbb\xbf  {\"pipelines\": []}").is_some());
        assert!(bmv2_json(b"#include <core.p4>\n").is_none());
        assert!(bmv2_json(b"{\"name\": 1}").is_none());
        assert!(bmv2_json(b"").is_none());
    }
}
