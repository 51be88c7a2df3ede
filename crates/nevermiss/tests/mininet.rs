//! nevermiss as a Mininet switch (mininet/nevermiss_mininet.py): two hosts ping each other
//! across it (mininet/ping.py, one link shaped by TCLink). Needs root and Debian's `mininet`
//! (scripts/setup.sh installs it; Mininet's Python is /usr/bin/python3's); skipped, with a line
//! saying so, otherwise. Mininet removes its hosts and links when the script ends, also when
//! it fails.

use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Debian's Python with Mininet importable, if this machine can run Mininet.
fn mininet_python() -> Option<&'static str> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: Mininet needs root");
        return None;
    }
    let py = "/usr/bin/python3";
    let ok = Command::new(py)
        .args(["-c", "import mininet.net"])
        .output()
        .is_ok_and(|o| o.status.success());
    let mnexec = Command::new("mnexec").arg("-h").output().is_ok();
    if !ok || !mnexec {
        eprintln!("skipped: Mininet is not installed (Debian's `mininet`: scripts/setup.sh)");
        return None;
    }
    Some(py)
}

#[test]
fn two_hosts_ping_across_a_nevermiss_switch() {
    let Some(py) = mininet_python() else {
        return;
    };
    let log = std::env::temp_dir().join(format!("nevermiss-mininet-{}.log", std::process::id()));
    // A gRPC port of this process's own, out of the tutorials' range.
    let grpc = 52000 + std::process::id() % 1000;
    let o = Command::new(py)
        .arg(root().join("mininet/ping.py"))
        .args(["--nevermiss", env!("CARGO_BIN_EXE_nevermiss")])
        .arg("--program")
        .arg(root().join("tests/mininet/wire.p4"))
        .args(["--count", "5", "--grpc-port", &grpc.to_string()])
        .arg("--log")
        .arg(&log)
        .current_dir(root())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let switch_log = std::fs::read_to_string(&log).unwrap_or_default();
    let _ = std::fs::remove_file(&log);
    assert!(
        o.status.success(),
        "ping.py: {out}{err}\nswitch log:\n{switch_log}"
    );
    let v: serde_json::Value = serde_json::from_str(out.trim().lines().last().unwrap()).unwrap();
    assert_eq!(v["received"], 5, "{out}");
    eprintln!("mininet: {out}");
    // The switch served P4Runtime and its ports went through the qdisc with egress queues.
    assert!(
        switch_log.contains("nevermiss serve: P4Runtime"),
        "{switch_log}"
    );
    assert!(
        switch_log.contains("sending through the qdisc"),
        "{switch_log}"
    );
    assert!(switch_log.contains("egress queues:"), "{switch_log}");
}
