//! The one way every subcommand prints to standard output.
//!
//! Guarantee: a closed standard output (the reader of a pipe went away, as in
//! `nevermiss sim info -t t.pcap | head -1`) never panics and never fails a command: the first
//! failed write marks the output closed, later writes are dropped, long loops can ask
//! [`closed`] to stop early, and `main` then exits 0 — as `cat` and ripgrep do. Any other
//! write error (a full disk behind a redirection) is kept and reported by `main` with exit 2.
//!
//! Use `outln!` and `out!` instead of `println!`/`print!` (which panic on a closed pipe).

use std::fmt;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Mutex;

static CLOSED: AtomicBool = AtomicBool::new(false);
static ERROR: Mutex<Option<String>> = Mutex::new(None);

/// Writes formatted text to standard output (see the module documentation).
pub fn write(args: fmt::Arguments<'_>) {
    if CLOSED.load(Relaxed) {
        return;
    }
    let mut o = io::stdout().lock();
    if let Err(e) = o.write_fmt(args) {
        fail(e);
    }
}

/// Flushes standard output (see [`write()`] for what a failure does).
pub fn flush() {
    if CLOSED.load(Relaxed) {
        return;
    }
    if let Err(e) = io::stdout().lock().flush() {
        fail(e);
    }
}

fn fail(e: io::Error) {
    CLOSED.store(true, Relaxed);
    if e.kind() != io::ErrorKind::BrokenPipe {
        let mut g = ERROR.lock().unwrap_or_else(|p| p.into_inner());
        g.get_or_insert_with(|| format!("cannot write to standard output: {e}"));
    }
}

/// True once standard output can no longer be written: a command in a long loop stops.
pub fn closed() -> bool {
    CLOSED.load(Relaxed)
}

/// The exit code of a command that returned `code`, given what happened to standard output:
/// a reader that went away ends the command successfully (0); another write error is exit 2
/// with its message.
pub fn exit_code(code: u8) -> u8 {
    flush();
    let err = ERROR.lock().unwrap_or_else(|p| p.into_inner()).take();
    match err {
        Some(e) => {
            eprintln!("error: {e}");
            2
        }
        None if closed() => 0,
        None => code,
    }
}

/// `print!` that never panics: writes through [`write()`].
macro_rules! out {
    ($($arg:tt)*) => { $crate::out::write(format_args!($($arg)*)) };
}

/// `println!` that never panics: writes through [`write()`].
macro_rules! outln {
    () => { $crate::out::write(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::out::write(format_args!("{}\n", format_args!($($arg)*))) };
}
