//! p4lang/tutorials' exercises, solutions in place, run unmodified with nevermiss in BMv2's
//! place (tests/tutorials/run.py; docs/drop-in.md). Env-gated: `TUTORIALS_DIR` (a checkout of
//! p4lang/tutorials, never committed) and `P4C_BM2_SS` (p4c's BMv2 back end, which compiles the
//! solutions as the exercises' Makefiles do), root, Debian's `mininet`, `.venv/ptf` (p4runtime,
//! grpcio and scapy for the exercises' controllers and scripts) and `.venv/p4runtime-shell`
//! (flowcache's controller imports p4runtime-shell); scripts/setup.sh makes them, and installs
//! the `ethtool` and `libpcap0.8` the exercises' hosts and scripts use.
//! Skipped, with a line saying why, when one is missing. `TUTORIALS` (a space-separated list)
//! picks exercises; by default every one the runner has a check for.

use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn tutorials_exercises_pass_with_nevermiss_in_bmv2s_place() {
    let (Some(tut), Some(p4c)) = (
        std::env::var_os("TUTORIALS_DIR"),
        std::env::var_os("P4C_BM2_SS"),
    ) else {
        eprintln!("skipped: set TUTORIALS_DIR and P4C_BM2_SS to run p4lang/tutorials' exercises");
        return;
    };
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: Mininet needs root");
        return;
    }
    // .venv/ptf's p4runtime, grpcio and scapy, and p4runtime-shell (flowcache's controller
    // imports it) from .venv/p4runtime-shell, which pins the same protobuf and grpcio.
    let site = std::env::join_paths(
        ["ptf", "p4runtime-shell"]
            .map(|v| root().join(format!(".venv/{v}/lib/python3.11/site-packages"))),
    )
    .unwrap();
    let ok = Command::new("/usr/bin/python3")
        .args([
            "-c",
            "import mininet.net, p4.v1.p4runtime_pb2, grpc, scapy.all, p4runtime_sh.p4runtime",
        ])
        .env("PYTHONPATH", &site)
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!(
            "skipped: /usr/bin/python3 with Mininet and the packages of .venv/ptf and \
             .venv/p4runtime-shell is needed (scripts/setup.sh)"
        );
        return;
    }
    let switch = PathBuf::from(env!("CARGO_BIN_EXE_nevermiss"))
        .with_file_name("nevermiss-simple-switch-grpc");
    let picked = std::env::var("TUTORIALS").unwrap_or_default();
    let o = Command::new("/usr/bin/python3")
        .arg(root().join("tests/tutorials/run.py"))
        .arg("--switch")
        .arg(&switch)
        .arg("--p4c")
        .arg(&p4c)
        .args(picked.split_whitespace())
        .env("TUTORIALS_DIR", &tut)
        .env("PYTHONPATH", &site)
        // Debian's Python (with Mininet) first, for the exercises' `#!/usr/bin/env python3`.
        .env(
            "PATH",
            format!(
                "/usr/sbin:/usr/bin:/sbin:/bin:{}",
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    eprintln!("{out}{}", String::from_utf8_lossy(&o.stderr));
    let summary: serde_json::Value = out
        .lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("no summary from run.py: {out}"));
    assert!(summary["run"].as_u64().unwrap_or(0) > 0, "{out}");
    let failed: Vec<&String> = summary["failed"]
        .as_object()
        .map(|m| m.keys().collect())
        .unwrap_or_default();
    assert!(failed.is_empty(), "{failed:?}: {out}");
}
