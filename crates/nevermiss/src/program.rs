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
