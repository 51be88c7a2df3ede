//! Interface ports on the testbed (scripts/testbed.sh: network namespaces and veth pairs):
//! frames sent from a namespace cross `nevermiss run` over AF_PACKET and come out where the
//! program sends them, with the expected bytes; SIGTERM ends the run with exit 0 and
//! statistics. Needs root and `ip`; skipped (with a line saying so) otherwise. What a test
//! creates is removed when it ends, also when it fails.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn can_run() -> bool {
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    let ip = Command::new("ip")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    let py = Command::new("python3")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if uid != 0 || !ip || !py {
        eprintln!("skipped: interface tests need root, iproute2 and python3");
        return false;
    }
    true
}

/// The testbed's ports `ns` (namespaces nm-hN with host end hN, switch ends nm-sN), removed
/// on drop.
struct Testbed(Vec<u32>);

impl Testbed {
    fn up(ns: &[u32]) -> Testbed {
        let tb = Testbed(ns.to_vec());
        tb.script("down");
        let o = tb.script("up");
        assert!(
            o.status.success(),
            "testbed up: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        tb
    }

    fn script(&self, what: &str) -> std::process::Output {
        Command::new("bash")
            .arg(root().join("scripts/testbed.sh"))
            .arg(what)
            .args(self.0.iter().map(|n| n.to_string()))
            .output()
            .unwrap()
    }
}

impl Drop for Testbed {
    fn drop(&mut self) {
        self.script("down");
    }
}

/// Numbers for testbed ports: `k` of them from `offset` (each test its own offsets), unique per
/// test process, < 256.
fn ports(offset: u32, k: u32) -> Vec<u32> {
    let base = 100 + (std::process::id() % 30) * 4;
    (0..k).map(|i| base + offset + i).collect()
}

/// The frames of this test (EtherType 0x88b5), without anything a host's stack sent.
fn ours(v: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    v.into_iter()
        .filter(|f| f.get(12..14) == Some(&[0x88, 0xb5]))
        .collect()
}

/// A running `nevermiss run`, killed on drop if still running.
struct Switch(Child);

impl Switch {
    fn start(args: &[&str]) -> Switch {
        let mut c = Command::new(env!("CARGO_BIN_EXE_nevermiss"));
        c.arg("run").args(args).current_dir(root());
        let child = c
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The rings are set up well within this; the frames that follow are not lost.
        std::thread::sleep(Duration::from_millis(700));
        Switch(child)
    }

    /// SIGTERM, then the exit code and the output.
    fn stop(mut self) -> (i32, String, String) {
        // SAFETY: signalling our own child.
        unsafe {
            libc::kill(self.0.id() as i32, libc::SIGTERM);
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.0.try_wait().unwrap().is_none() {
            assert!(
                Instant::now() < deadline,
                "nevermiss run did not stop at SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let child = std::mem::replace(&mut self.0, Command::new("true").spawn().unwrap());
        let o = child.wait_with_output().unwrap();
        (
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    }
}

impl Drop for Switch {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Sends `frames` from host end `n` and returns the frames that arrive there, waiting for
/// `want` (at most `secs` seconds).
fn xfer(n: u32, frames: &[Vec<u8>], want: usize, secs: f64) -> Vec<Vec<u8>> {
    let mut c = Command::new("ip")
        .args(["netns", "exec", &format!("nm-h{n}"), "python3"])
        .arg(root().join("tests/ifports/xfer.py"))
        .arg(format!("h{n}"))
        .args(["--count", &want.to_string(), "--gap", "0.001"])
        .args(["--timeout", &secs.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        let mut stdin = c.stdin.take().unwrap();
        for f in frames {
            let hex: String = f.iter().map(|b| format!("{b:02x}")).collect();
            writeln!(stdin, "{hex}").unwrap();
        }
    }
    let o = c.wait_with_output().unwrap();
    assert!(
        o.status.success(),
        "xfer: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| {
            (0..l.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&l[i..i + 2], 16).unwrap())
                .collect()
        })
        .collect()
}

/// An add-on-miss example frame: IPv4 from `src` to `dst` (the key), UDP, an empty result.
fn aom_frame(src: [u8; 4], dst: [u8; 4]) -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00];
    f.extend([0x45, 0, 0, 0x21, 0, 0, 0, 0, 0x40, 0x11, 0, 0]);
    f.extend(src);
    f.extend(dst);
    f.extend([0x04, 0x00, 0x12, 0xb7, 0x00, 0x0d, 0x00, 0x00]);
    f.extend([0, 0, 0, 0, 0]);
    f
}

#[test]
fn the_add_on_miss_example_answers_on_an_interface() {
    if !can_run() {
        return;
    }
    let p = ports(0, 1);
    let _tb = Testbed::up(&p);
    let sw = Switch::start(&[
        "examples/pna-add-on-miss.p4",
        "-i",
        &format!("0@nm-s{}", p[0]),
    ]);
    // 8 keys, each sent twice: the first of each is inserted (outcome 2), the second hits and
    // carries the first one's source (outcome 1).
    let mut frames = Vec::new();
    for k in 0..8u8 {
        frames.push(aom_frame([10, 0, 0, 1], [10, 9, 0, k]));
    }
    for k in 0..8u8 {
        frames.push(aom_frame([10, 0, 0, 2], [10, 9, 0, k]));
    }
    let got = xfer(p[0], &frames, frames.len(), 5.0);
    let (code, stdout, stderr) = sw.stop();
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(
        got.len(),
        frames.len(),
        "every frame comes back: {stdout}{stderr}"
    );
    for (sent, back) in frames.iter().zip(&got) {
        assert_eq!(back.len(), sent.len());
        assert_eq!(back[..42], sent[..42], "headers unchanged");
        let first = sent[26..30] == [10, 0, 0, 1];
        if first {
            assert_eq!(back[42..], [0, 0, 0, 0, 2], "miss, inserted");
        } else {
            assert_eq!(
                back[42..],
                [10, 0, 0, 1, 1],
                "hit with the inserter's source"
            );
        }
    }
    assert!(
        stdout.contains("MainControlImpl.flows: 8 entries"),
        "exactly the distinct keys: {stdout}"
    );
    assert!(stdout.contains("in 16 pkts"), "{stdout}");
}

#[test]
fn the_l2_switch_floods_between_two_interfaces() {
    if !can_run() {
        return;
    }
    let p = ports(1, 2);
    let _tb = Testbed::up(&p);
    let dir = std::env::temp_dir().join(format!("nevermiss-ifports-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let entries = dir.join("flood.entries");
    std::fs::write(
        &entries,
        "mc_mgrp_create 1\nmc_node_create 0 0 1\nmc_node_associate 1 0\n",
    )
    .unwrap();
    let sw = Switch::start(&[
        "examples/v1model-l2-learning.p4",
        "-i",
        &format!("0@nm-s{}", p[0]),
        "--port",
        &format!("1=if:nm-s{},backend=af_packet", p[1]),
        "--entries",
        entries.to_str().unwrap(),
    ]);
    // Unknown destinations from host 0: flooded to port 1 only (never back to port 0).
    let frames: Vec<Vec<u8>> = (0..5u8)
        .map(|i| {
            let mut f = vec![2, 0, 0, 0, 0xb, i, 2, 0, 0, 0, 0xa, i, 0x88, 0xb5];
            f.extend([0x5a; 46]);
            f.push(i);
            f
        })
        .collect();
    // Listen on host 1 while host 0 sends: start the receiver first.
    let rx = {
        let n = p[1];
        std::thread::spawn(move || xfer(n, &[], 5, 5.0))
    };
    std::thread::sleep(Duration::from_millis(300));
    let back = ours(xfer(p[0], &frames, 1, 1.0));
    let got = ours(rx.join().unwrap());
    let (code, stdout, stderr) = sw.stop();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(back.is_empty(), "nothing comes back to port 0: {back:?}");
    assert_eq!(got, frames, "flooded to port 1 unchanged: {stdout}{stderr}");
}

#[test]
fn bad_interfaces_are_errors_naming_them() {
    if !can_run() {
        return;
    }
    for (args, want) in [
        (vec!["-i", "0@nm-nosuch0"], "nm-nosuch0: no such interface"),
        (vec!["--port", "0=if:nm-nosuch1,backend=af_xdp"], "AF_XDP"),
        (vec!["--port", "0=if:lo,backend=bogus"], "backend=af_packet"),
        (vec!["-i", "0-lo"], "N@IFACE"),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_nevermiss"))
            .arg("run")
            .arg("examples/pna-forwarder.p4")
            .args(&args)
            .current_dir(root())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    // A down interface.
    let p = ports(3, 1);
    let _tb = Testbed::up(&p);
    let name = format!("nm-s{}", p[0]);
    assert!(Command::new("ip")
        .args(["link", "set", &name, "down"])
        .status()
        .unwrap()
        .success());
    let o = Command::new(env!("CARGO_BIN_EXE_nevermiss"))
        .args(["run", "examples/pna-forwarder.p4", "-i"])
        .arg(format!("0@{name}"))
        .current_dir(root())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("interface {name} is down")), "{err}");
}
