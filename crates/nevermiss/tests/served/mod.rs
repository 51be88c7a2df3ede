//! A running `nevermiss serve` in a test: the P4Runtime address it printed, and `nevermiss ctl`
//! against it (serve.rs, queues.rs).

use std::io::BufRead;
use std::process::{Child, Command};

/// The address of `child`'s server, from its line `nevermiss serve: P4Runtime ... on ADDR ...`
/// (after the ports' lines); takes the child's stdout. Empty when the child ended first.
pub fn grpc_addr(child: &mut Child) -> String {
    let mut lines = std::io::BufReader::new(child.stdout.take().expect("stdout piped"));
    let mut line = String::new();
    while !line.contains("P4Runtime") {
        line.clear();
        if lines.read_line(&mut line).unwrap_or(0) == 0 {
            return String::new();
        }
    }
    // The rest of its output is drained in the background, so that it never blocks on a
    // full pipe.
    std::thread::spawn(move || std::io::copy(&mut lines, &mut std::io::sink()));
    line.split(" on ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_default()
        .to_string()
}

/// `nevermiss ctl ARGS --grpc-addr ADDR`: its exit code, stdout and stderr.
pub fn ctl(addr: &str, args: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_nevermiss"))
        .arg("ctl")
        .args(args)
        .args(["--grpc-addr", addr])
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}
