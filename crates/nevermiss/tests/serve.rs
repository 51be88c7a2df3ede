//! `nevermiss serve` from the command line: traffic ports run the served pipeline and the
//! server stops cleanly (statistics printed, captures flushed); bad flags are errors (exit 2).

mod served;

use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn serve(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_nevermiss"))
        .arg("serve")
        .args(["--grpc-addr", "127.0.0.1:0"])
        .args(args)
        .current_dir(root())
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn traffic_ports_run_the_served_pipeline_until_the_server_stops() {
    let dir = std::env::temp_dir().join(format!("nevermiss-serve-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("out.pcap");
    let port = format!("0=pcap:tests/docs/in.pcap,{}", out.display());
    let log = dir.join("delays.csv");
    let (code, stdout, stderr) = serve(&[
        "examples/pna-forwarder.p4",
        "--port",
        &port,
        "--duration",
        "500ms",
        "--update-log",
        log.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("traffic ports:"), "{stdout}");
    assert!(stdout.contains("port   0: in 100 pkts"), "{stdout}");
    // The capture was written (a pcap header at least) and the update log exists.
    assert!(std::fs::metadata(&out).unwrap().len() >= 24);
    assert!(std::fs::read_to_string(&log)
        .unwrap()
        .starts_with("received_ns,d_control_ns"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn traffic_ports_run_on_several_workers() {
    let dir = std::env::temp_dir().join(format!("nevermiss-serve-cores-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("out.pcap");
    let port = format!("0=pcap:tests/docs/in.pcap,{}", out.display());
    let (code, stdout, stderr) = serve(&[
        "examples/pna-forwarder.p4",
        "--port",
        &port,
        "--cores",
        "2",
        "--no-pin",
        "--duration",
        "500ms",
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("port   0: in 100 pkts"), "{stdout}");
    assert!(stdout.contains("worker"), "per-worker statistics: {stdout}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_serve_flags_are_errors() {
    for (args, want) in [
        (
            vec![
                "examples/pna-forwarder.p4",
                "--port",
                "0=pcap:nosuch.pcap,o.pcap",
            ],
            "nosuch.pcap",
        ),
        (vec!["--grpc-addr", "nowhere"], "--grpc-addr"),
        (
            vec![
                "examples/pna-forwarder.p4",
                "--port",
                "510=pcap:tests/docs/in.pcap,o.pcap",
            ],
            "CPU port",
        ),
        (vec!["--rss", "ipv4.src"], "needs --cores"),
        (vec!["--cores", "0"], "--cores"),
        (vec!["--batch", "999"], "--batch"),
        (vec!["nosuch.p4"], "nosuch.p4"),
        (vec!["--tls-cert", "c.pem"], "--tls-key"),
        // A file that is not PEM is named with what is wrong with it.
        (
            vec!["--tls-cert", "/etc/passwd", "--tls-key", "/etc/passwd"],
            "--tls-cert /etc/passwd: no certificate in it",
        ),
        (
            vec!["-i", "0@lo", "-i", "1@lo"],
            "interface lo is given to port 0 and to port 1",
        ),
        (vec!["--log-console", "--log-level", "loud"], "--log-level"),
        (vec!["--log-level", "debug"], "give --log-console"),
        (
            vec!["--update-log", "/nonexistent-dir/x.csv"],
            "--update-log",
        ),
    ] {
        let (code, stdout, stderr) = serve(&args);
        assert_eq!(code, 2, "{args:?}: {stdout}{stderr}");
        assert!(stderr.contains(want), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

/// `--grpc-addr` takes a host name; `--log-console` logs every RPC; `nevermiss ctl` shows the
/// running switch's tables as simple_switch_CLI does; SIGTERM stops it with exit 0.
#[test]
fn a_named_address_logs_and_ctl_look_at_a_running_switch() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_nevermiss"))
        .args([
            "serve",
            "examples/v1model-router.p4",
            "--grpc-addr",
            "localhost:0",
        ])
        .args(["--log-console", "--log-level", "info"])
        .current_dir(root())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let addr = served::grpc_addr(&mut child);
    assert!(addr.contains(':'), "no server address printed");
    let ctl = |args: &[&str]| served::ctl(&addr, args);
    let (code, out, err) = ctl(&["show-tables"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("IngressImpl.ipv4_lpm") && out.contains("(lpm, 32)"),
        "{out}"
    );
    let (code, out, err) = ctl(&["table-dump", "ipv4_lpm"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.starts_with("==========\nTABLE ENTRIES\n==========\nDumping default entry\n")
            && out.contains("Action entry: IngressImpl.drop - "),
        "{out}"
    );
    let (code, out, _) = ctl(&["table-num-entries", "IngressImpl.acl"]);
    assert_eq!((code, out.trim()), (0, "0"));
    let (code, _, err) = ctl(&["table-dump", "nosuch"]);
    assert!(code == 2 && err.contains("no table nosuch"), "{err}");
    // SAFETY: signalling our own child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let o = child.wait_with_output().unwrap();
    let log = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{log}");
    assert!(
        log.contains("GetForwardingPipelineConfig: P4INFO_AND_COOKIE")
            && log.contains("Read: 1 entities asked"),
        "{log}"
    );
}
