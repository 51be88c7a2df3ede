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

/// The Mininet example the issue asks for (mininet/triangle.py): three nevermiss switches in a
/// triangle, a host on each, examples/v1model-router.p4 pushed and routes installed by a
/// P4Runtime controller (mininet/router_controller.py, p4runtime-shell in
/// .venv/p4runtime-shell); every pair of hosts pings, h1 <-> h2 through all three switches
/// (the controller routes around the costly s1-s2 link; TTL 61 on arrival). Mininet removes
/// its hosts, links and switches at the end, also when the script fails; what a killed run
/// leaves (its links, named after the tag) is removed here.
#[test]
fn three_switches_route_what_a_controller_installs() {
    let Some(py) = mininet_python() else {
        return;
    };
    let controller = root().join(".venv/p4runtime-shell/bin/python");
    if !controller.exists() {
        eprintln!("skipped: .venv/p4runtime-shell is missing (scripts/setup.sh makes it)");
        return;
    }
    let tag = (std::process::id() % 1000).to_string();
    let base = 53000 + std::process::id() % 1000 * 4;
    let o = Command::new(py)
        .arg(root().join("mininet/triangle.py"))
        .args(["--nevermiss", env!("CARGO_BIN_EXE_nevermiss")])
        .arg("--controller-python")
        .arg(&controller)
        .args(["--grpc-base", &base.to_string(), "--tag", &tag])
        .current_dir(root())
        .output()
        .unwrap();
    for i in 1..=3 {
        for port in 1..=3 {
            let _ = Command::new("ip")
                .args(["link", "del", &format!("s{tag}{i}-eth{port}")])
                .output();
        }
    }
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let report: serde_json::Value = out
        .trim()
        .lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("triangle.py printed no report: {out}{err}"));
    let logs = report["logs"].as_str().unwrap_or_default().to_string();
    let switch_logs: String = (1..=3)
        .map(|i| std::fs::read_to_string(format!("{logs}/s{i}.log")).unwrap_or_default())
        .collect();
    assert!(
        o.status.success(),
        "triangle.py: {out}{err}\nswitch logs:\n{switch_logs}"
    );
    for (pair, ttl) in [
        ("h1->h2", 61),
        ("h2->h1", 61),
        ("h1->h3", 62),
        ("h3->h2", 62),
    ] {
        assert_eq!(report["pairs"][pair]["received"], 3, "{pair}: {out}");
        assert_eq!(
            report["pairs"][pair]["ttl"],
            serde_json::json!([ttl]),
            "{pair}: {out}"
        );
    }
    // Each switch was programmed over P4Runtime, not at start.
    for i in 1..=3 {
        let log = std::fs::read_to_string(format!("{logs}/s{i}.log")).unwrap_or_default();
        assert!(
            log.contains("waiting for SetForwardingPipelineConfig"),
            "s{i}: {log}"
        );
    }
    let _ = std::fs::remove_dir_all(&logs);
    eprintln!("mininet triangle: {out}");
}
