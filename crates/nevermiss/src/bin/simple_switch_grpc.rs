//! `nevermiss-simple-switch-grpc`: BMv2's `simple_switch_grpc` command line, for tools that
//! take the switch's executable by path (p4lang/tutorials' `BMV2_SWITCH_EXE`, p4-utils). It
//! runs `nevermiss simple-switch-grpc` with its arguments: the `nevermiss` beside this
//! executable, else the one on `PATH`.

use std::os::unix::process::CommandExt;
use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    let beside = std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(|d| d.join("nevermiss")))
        .filter(|p| p.is_file());
    let exe = beside.map_or_else(|| "nevermiss".into(), |p| p.into_os_string());
    let err = Command::new(&exe)
        .arg("simple-switch-grpc")
        .args(std::env::args_os().skip(1))
        .exec();
    eprintln!(
        "error: nevermiss-simple-switch-grpc: cannot run {}: {err}",
        std::path::Path::new(&exe).display()
    );
    ExitCode::from(2)
}
