//! The program file every command reads (`check`, `run`, `stf`, `serve`, `p4info`, `bench
//! component`): checked before it is opened, so that a directory, a FIFO or a device gets a
//! message that says what it is (and a FIFO or `/dev/zero` is never read: no hang, no endless
//! read). What the file holds, P4 source or a BMv2 JSON, is for the loaders to tell.

use std::path::Path;

/// `Ok` when `path` is a regular file; else the message for the user (the caller prefixes
/// `error: `; exit 2).
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
            "{shown}: is {what}, not a program: give the path of a .p4 source file (or a BMv2 JSON)"
        ));
    }
    Ok(())
}

/// Loads a program: a BMv2 JSON document (detected by content, [`bmv2_json::is_bmv2_json`]) or
/// P4 source, compiled and lowered. Errors render as `file:line:col: error: ...` for P4 and as
/// `file: error: $.json.path: ...` for BMv2 JSON.
pub fn load(path: &Path, opts: &p4_front::driver::Options) -> Result<p4_ir::Program, String> {
    if let Some(bytes) = bmv2_json_bytes(path) {
        return bmv2_json::load_bytes(&bytes)
            .map_err(|e| format!("{}: error: {e}", path.display()));
    }
    not_a_bmv2_json(path)?;
    p4_ir::lower::source::compile_file(path, opts).map_err(|e| e.to_string())
}

/// An error when `path` is a JSON object that is not a BMv2 program (rather than reading it as
/// P4 source).
pub fn not_a_bmv2_json(path: &Path) -> Result<(), String> {
    let head = std::fs::read(path).unwrap_or_default();
    match bmv2_json::missing_bmv2_keys(&head) {
        Some(missing) => Err(format!(
            "{}: error: a JSON document, but not a BMv2 program: it lacks {}",
            path.display(),
            missing.join(", ")
        )),
        None => Ok(()),
    }
}

/// The bytes of `path` when it is a BMv2 JSON document (a JSON object with BMv2's keys).
pub fn bmv2_json_bytes(path: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut f = std::fs::File::open(path).ok()?;
    let mut first = [0u8; 64];
    let n = f.read(&mut first).ok()?;
    // Cheap test first: JSON starts with `{` (after white space); P4 source does not.
    if first[..n].iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return None;
    }
    let bytes = std::fs::read(path).ok()?;
    bmv2_json::is_bmv2_json(&bytes).then_some(bytes)
}
