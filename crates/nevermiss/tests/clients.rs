//! Real P4Runtime clients against `nevermiss serve`: each client's script (tests/clients/) runs
//! with the interpreter of its own virtualenv (`.venv/<client>`, made by scripts/setup.sh from
//! the pins in scripts/clients/). The test starts the server on a free port of 127.0.0.1 and
//! stops it (SIGTERM) when it ends, also when it fails.
//!
//! Without the virtualenv the test is skipped, unless `NEVERMISS_REQUIRE_CLIENTS=1` (set by
//! scripts/test.sh), which makes a missing client a failure.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A running `nevermiss serve`, stopped with SIGTERM when dropped.
struct Server {
    child: Child,
    addr: String,
    output: std::sync::mpsc::Receiver<String>,
}

impl Server {
    fn start(args: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_nevermiss"))
            .arg("serve")
            .args(["--grpc-addr", "127.0.0.1:0"])
            .args(args)
            .current_dir(root())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start nevermiss serve");
        let out = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let first = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("nevermiss serve prints its address");
        let addr = first
            .split(" on ")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .unwrap_or_else(|| panic!("no address in `{first}`"))
            .to_string();
        Server {
            child,
            addr,
            output: rx,
        }
    }

    /// Stops the server (SIGTERM) and returns what it printed after its first line.
    fn stop(mut self) -> String {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(10) {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let mut text = String::new();
        while let Ok(l) = self.output.recv_timeout(Duration::from_millis(200)) {
            text.push_str(&l);
            text.push('\n');
        }
        text
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The interpreter of a client's virtualenv, or `None` (skip) when it is absent.
fn client_python(client: &str) -> Option<PathBuf> {
    let py = root().join(".venv").join(client).join("bin/python");
    if py.is_file() {
        return Some(py);
    }
    if std::env::var_os("NEVERMISS_REQUIRE_CLIENTS").is_some() {
        panic!("{} is missing: scripts/setup.sh makes it", py.display());
    }
    eprintln!(
        "skipped: {} is missing (scripts/setup.sh makes it)",
        py.display()
    );
    None
}

fn p4info_and_config(program: &str, dir: &Path) -> (PathBuf, PathBuf) {
    let p4info = dir.join("p4info.txtpb");
    let cfg = dir.join("device-config.json");
    let st = Command::new(env!("CARGO_BIN_EXE_nevermiss"))
        .current_dir(root())
        .args(["p4info", program, "-o"])
        .arg(&p4info)
        .arg("--device-config")
        .arg(&cfg)
        .status()
        .unwrap();
    assert!(st.success());
    (p4info, cfg)
}

fn run_script(python: &Path, script: &str, args: &[&str]) -> (bool, String) {
    let mut child = Command::new(python)
        .arg(root().join("tests/clients").join(script))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = child.wait_with_output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (status.is_some_and(|s| s.success()), text)
}

fn tempdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("nevermiss-clients-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs a client's script against a fresh server running nothing until the client loads
/// `program`; returns the server's final statistics.
fn drive(client: &str, script: &str, program: &str, device_id: &str) -> Option<String> {
    let py = client_python(client)?;
    let dir = tempdir(&format!("{client}-{script}"));
    let (p4info, cfg) = p4info_and_config(program, &dir);
    let server = Server::start(&["--device-id", device_id]);
    let (ok, text) = run_script(
        &py,
        script,
        &[
            &server.addr,
            p4info.to_str().unwrap(),
            cfg.to_str().unwrap(),
        ],
    );
    let stats = server.stop();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(ok, "{client} script {script} failed:\n{text}");
    Some(stats)
}

#[test]
fn p4runtime_shell_programs_the_router() {
    let Some(stats) = drive(
        "p4runtime-shell",
        "p4runtime_shell_router.py",
        "examples/v1model-router.p4",
        "0",
    ) else {
        return;
    };
    assert!(
        stats.contains("IngressImpl.ipv4_lpm: 0 entries"),
        "final statistics:\n{stats}"
    );
}

#[test]
fn finsy_programs_the_router() {
    let Some(stats) = drive(
        "finsy",
        "finsy_router.py",
        "examples/v1model-router.p4",
        "1",
    ) else {
        return;
    };
    assert!(stats.contains("3 failed"), "final statistics:\n{stats}");
}

#[test]
fn p4runtime_shell_packets_digests_and_idle_timeouts() {
    let Some(stats) = drive(
        "p4runtime-shell",
        "p4runtime_shell_stream.py",
        "tests/clients/l2-cpu.p4",
        "1",
    ) else {
        return;
    };
    assert!(
        stats.contains("1 packet-outs, 1 packet-ins, 1 digest lists"),
        "final statistics:\n{stats}"
    );
}

#[test]
fn finsy_packets_digests_and_idle_timeouts() {
    let Some(stats) = drive("finsy", "finsy_stream.py", "tests/clients/l2-cpu.p4", "1") else {
        return;
    };
    assert!(
        stats.contains("1 packet-outs, 1 packet-ins, 1 digest lists"),
        "final statistics:\n{stats}"
    );
}
