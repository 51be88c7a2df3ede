//! `nevermiss serve` under PTF (PyPI `ptf`, in `.venv/ptf` from scripts/setup.sh), as BMv2 users
//! and p4c's PTF tests drive it: the switch and ptf run in a private network namespace made for
//! the test, joined by veth pairs, the switch on one end of each (AF_XDP and AF_PACKET), ptf on
//! the other; the controller is P4Runtime over the namespace's loopback.
//!
//! - `tests/ptf/tests/serve_tests.py` (issue 26): a frame sent 0 ms after each commit's reply,
//!   a second commit clearing the entries, RECONCILE_AND_COMMIT keeping them, PacketOut to
//!   traffic ports, a Write of 300 inserts into a 256-entry table read by grpcio's default
//!   client, `nevermiss ctl table-dump`; here, SIGTERM with two clients connected.
//! - With `P4C_DIR`: p4c's own PTF tests (`ternary2-bmv2.py`, `pna-dpdk-small_sample.py`,
//!   `pna-dpdk-add_on_miss0.py`), set up as p4c's runners set them up
//!   (`backends/bmv2/run-bmv2-ptf-test.py --use-veth`: 10 veth pairs `K`/`br_K`, device 0,
//!   `packet_wait_time` 0.5; `backends/dpdk/run-dpdk-ptf-test.py`: 2 ports, device 1), with the
//!   P4Info and device config of `nevermiss p4info`.
//!
//! Needs root and iproute2; skipped otherwise, and without `.venv/ptf` unless
//! `NEVERMISS_REQUIRE_CLIENTS=1` (scripts/test.sh). The namespace (and every process left in
//! it) is removed when a test ends, also when it fails.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The `nevermiss` under test: this build, or `NEVERMISS_BIN` (to measure another build the
/// same way, e.g. the one before a change).
fn bin() -> PathBuf {
    std::env::var_os("NEVERMISS_BIN").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_nevermiss")),
        PathBuf::from,
    )
}

/// `.venv/ptf`'s python, or `None` (skip) when the test cannot run here.
fn ptf_python() -> Option<PathBuf> {
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    let ip = Command::new("ip")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if uid != 0 || !ip {
        eprintln!("skipped: the PTF tests need root and iproute2");
        return None;
    }
    let py = root().join(".venv/ptf/bin/python");
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

/// A network namespace of veth pairs (both ends inside), removed with everything in it on drop.
struct Netns(String);

impl Netns {
    /// Namespace `nm-ptf-TAG-PID` with the pairs (switch end, host end), IPv6 off (no chatter).
    fn new(tag: &str, pairs: &[(String, String)]) -> Netns {
        let ns = Netns(format!("nm-ptf-{tag}-{}", std::process::id()));
        ns.remove();
        run(Command::new("ip").args(["netns", "add", &ns.0]));
        ns.sh("ip link set lo up; sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1");
        for (a, b) in pairs {
            ns.sh(&format!(
                "ip link add '{a}' type veth peer name '{b}' && ip link set '{a}' up && ip link set '{b}' up && ip link set '{a}' mtu 1500 && ip link set '{b}' mtu 1500"
            ));
        }
        ns
    }

    fn cmd(&self, prog: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.0]).arg(prog);
        c
    }

    fn sh(&self, script: &str) {
        run(self.cmd("sh").args(["-c", script]));
    }

    fn remove(&self) {
        let _ = Command::new("sh")
            .args([
                "-c",
                &format!(
                    "ip netns pids {0} 2>/dev/null | xargs -r kill -9; ip netns del {0} 2>/dev/null",
                    self.0
                ),
            ])
            .status();
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        self.remove();
    }
}

fn run(c: &mut Command) -> Output {
    let o = c.output().unwrap();
    assert!(
        o.status.success(),
        "{c:?}: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// A `nevermiss serve` in a namespace; its output lines are collected by threads.
struct Serve {
    child: Child,
    lines: Receiver<String>,
    seen: Vec<String>,
}

impl Serve {
    /// Starts `nevermiss serve ARGS` in `ns` and waits until it serves and has opened its
    /// `interfaces` interface ports.
    fn start(ns: &Netns, args: &[String], interfaces: usize) -> Serve {
        let mut child = ns
            .cmd(bin())
            .arg("serve")
            .args(args)
            .current_dir(root())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, lines) = channel();
        for out in [
            Box::new(child.stdout.take().unwrap()) as Box<dyn std::io::Read + Send>,
            Box::new(child.stderr.take().unwrap()),
        ] {
            let tx = tx.clone();
            std::thread::spawn(move || {
                for l in BufReader::new(out).lines().map_while(Result::ok) {
                    if tx.send(l).is_err() {
                        return;
                    }
                }
            });
        }
        let mut s = Serve {
            child,
            lines,
            seen: Vec::new(),
        };
        // Serving, then its interfaces open (a build that opens them only at the first
        // commit, as before issue 26, goes on after 10 s and fails the tests that need them).
        let start = Instant::now();
        loop {
            let serving = s
                .seen
                .iter()
                .position(|l| l.starts_with("nevermiss serve: P4Runtime"));
            let ports = s.seen.iter().filter(|l| l.contains("=if:")).count();
            if ports >= interfaces {
                return s;
            }
            let deadline = match serving {
                Some(_) if start.elapsed() > Duration::from_secs(10) => return s,
                Some(_) => start + Duration::from_secs(11),
                None => start + Duration::from_secs(60),
            };
            match s
                .lines
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            {
                Ok(l) => s.seen.push(l),
                Err(_) if serving.is_some() => return s,
                Err(_) => panic!("nevermiss serve did not start: {:?}", s.seen),
            }
        }
    }

    /// SIGTERM; the time it took to exit, its exit code and its output.
    fn stop(mut self) -> (Duration, i32, String) {
        // SAFETY: signalling our own child.
        unsafe {
            libc::kill(self.child.id() as i32, libc::SIGTERM);
        }
        let t = Instant::now();
        let deadline = t + Duration::from_secs(20);
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                break self.child.wait().unwrap();
            }
            std::thread::sleep(Duration::from_millis(2));
        };
        let took = t.elapsed();
        while let Ok(l) = self.lines.recv_timeout(Duration::from_millis(300)) {
            self.seen.push(l);
        }
        use std::os::unix::process::ExitStatusExt;
        let code = status
            .code()
            .unwrap_or(-1000 - status.signal().unwrap_or(0));
        (took, code, self.seen.join("\n"))
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `nevermiss p4info PROGRAM -o DIR/NAME.p4info.txtpb --device-config DIR/NAME.nmconfig FLAGS`.
fn p4info(program: &Path, dir: &Path, name: &str, flags: &[&str]) -> (PathBuf, PathBuf) {
    let info = dir.join(format!("{name}.p4info.txtpb"));
    let cfg = dir.join(format!("{name}.nmconfig"));
    run(Command::new(bin())
        .arg("p4info")
        .arg(program)
        .arg("-o")
        .arg(&info)
        .arg("--device-config")
        .arg(&cfg)
        .args(flags));
    (info, cfg)
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("nm-ptf-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs ptf in `ns` (`-i K@IFACE` for each of `ifaces`, `params` as --test-params) on the tests
/// in `test_dir`, from `cwd`; returns (cases passed, cases run, output).
fn ptf(
    ns: &Netns,
    py: &Path,
    test_dir: &Path,
    pypath: &[PathBuf],
    ifaces: &[String],
    params: &str,
    cwd: &Path,
) -> (usize, usize, String) {
    let mut c = ns.cmd(py);
    c.arg(py.with_file_name("ptf"))
        .arg("--test-dir")
        .arg(test_dir)
        .arg("--log-file")
        .arg(cwd.join("ptf.log"))
        .arg(format!("--test-params={params}"));
    for p in pypath {
        c.arg("--pypath").arg(p);
    }
    for (k, i) in ifaces.iter().enumerate() {
        c.args(["-i", &format!("{k}@{i}")]);
    }
    let o = c.current_dir(cwd).output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    // unittest's summary: `Ran N tests in ...`, then `OK` or `FAILED (failures=F, errors=E)`.
    let run: usize = text
        .lines()
        .find_map(|l| l.strip_prefix("Ran ")?.split(' ').next()?.parse().ok())
        .unwrap_or(0);
    let count = |what: &str| -> usize {
        text.lines()
            .filter_map(|l| l.strip_prefix("FAILED ("))
            .flat_map(|l| l.trim_end_matches(')').split(", "))
            .filter_map(|kv| kv.strip_prefix(what)?.parse::<usize>().ok())
            .sum()
    };
    let bad = count("failures=") + count("errors=");
    let ok = if o.status.success() || bad > 0 {
        run.saturating_sub(bad)
    } else {
        0
    };
    (ok, run, text)
}

/// p50 and p99 of `v` (sorted in place).
fn p50_p99(v: &mut [u64]) -> (u64, u64) {
    v.sort_unstable();
    let at = |q: f64| v[((v.len() as f64 * q).ceil() as usize).clamp(1, v.len()) - 1];
    (at(0.5), at(0.99))
}

/// How the suite's switch runs: device 0, BMv2's CPU port, the namespace's loopback.
const SWITCH: [&str; 6] = [
    "--device-id",
    "0",
    "--cpu-port",
    "255",
    "--grpc-addr",
    "127.0.0.1:9559",
];

/// The suite of issue 26 on one interface back end (`af_xdp` or `af_packet`).
fn serve_suite(backend: &str) {
    let Some(py) = ptf_python() else { return };
    let dir = scratch(&format!("suite-{backend}"));
    let prog = root().join("tests/ptf/p4/ptf-switch.p4");
    let (ia, ca) = p4info(&prog, &dir, "a", &["-D", "DEFAULT_PORT=1"]);
    let (ib, cb) = p4info(&prog, &dir, "b", &["-D", "DEFAULT_PORT=2"]);
    let pairs: Vec<(String, String)> = (0..4)
        .map(|k| (format!("sw{k}"), format!("h{k}")))
        .collect();
    let ns = Netns::new(&backend.replace('_', ""), &pairs);
    let mut args: Vec<String> = SWITCH.map(String::from).to_vec();
    for k in 0..4 {
        args.extend(["--port".into(), format!("{k}=if:sw{k},backend={backend}")]);
    }
    let serve = Serve::start(&ns, &args, 4);
    let lat = dir.join("latency.txt");
    let params = format!(
        "grpcaddr='127.0.0.1:9559';device_id=0;p4info_a='{}';config_a='{}';p4info_b='{}';config_b='{}';latency_log='{}';nevermiss='{}'",
        ia.display(),
        ca.display(),
        ib.display(),
        cb.display(),
        lat.display(),
        bin().display()
    );
    let hosts: Vec<String> = (0..4).map(|k| format!("h{k}")).collect();
    let (ok, ran, text) = ptf(
        &ns,
        &py,
        &root().join("tests/ptf/tests"),
        &[root().join("tests/ptf/lib")],
        &hosts,
        &params,
        &dir,
    );
    let (took, code, out) = serve.stop();
    eprintln!("{backend}: {ok} of {ran} PTF cases passed");
    if let Ok(t) = std::fs::read_to_string(&lat) {
        let mut us: Vec<u64> = t.lines().filter_map(|l| l.parse().ok()).collect();
        if !us.is_empty() {
            let (p50, p99) = p50_p99(&mut us);
            eprintln!(
                "{backend}: commit reply to the first frame out of the new pipeline (send included): p50 {p50} µs, p99 {p99} µs over {} commits",
                us.len()
            );
        }
    }
    assert!(
        ran >= 5 && ok == ran,
        "{backend}: ptf:\n{text}\nserve:\n{out}"
    );
    assert!(
        code == 0 && took < Duration::from_secs(1),
        "{backend}: serve stopped in {took:?} with {code}:\n{out}"
    );
}

#[test]
fn serve_passes_its_ptf_suite_on_af_xdp() {
    serve_suite("af_xdp");
}

#[test]
fn serve_passes_its_ptf_suite_on_af_packet() {
    serve_suite("af_packet");
}

/// SIGTERM stops the switch within 1 s while two controllers hold their streams: both streams
/// end (UNAVAILABLE or CANCELLED), the statistics are printed, the exit code is 0.
#[test]
fn sigterm_with_two_clients_connected_stops_serve_within_a_second() {
    let Some(py) = ptf_python() else { return };
    let pairs: Vec<(String, String)> = (0..2)
        .map(|k| (format!("sw{k}"), format!("h{k}")))
        .collect();
    let ns = Netns::new("sigterm", &pairs);
    let mut args: Vec<String> = SWITCH.map(String::from).to_vec();
    args.extend(["tests/ptf/p4/ptf-switch.p4", "-i", "0@sw0", "-i", "1@sw1"].map(String::from));
    let serve = Serve::start(&ns, &args, 2);
    let mut clients = ns
        .cmd(&py)
        .arg(root().join("tests/ptf/lib/hold_streams.py"))
        .args(["127.0.0.1:9559", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(clients.stdout.take().unwrap()).lines();
    let ready = out.next().and_then(Result::ok);
    assert_eq!(
        ready.as_deref(),
        Some("ready"),
        "the clients did not connect"
    );
    let (took, code, text) = serve.stop();
    let ends = out.next().and_then(Result::ok).unwrap_or_default();
    let _ = clients.wait();
    assert!(
        took < Duration::from_secs(1),
        "serve took {took:?} to stop:\n{text}"
    );
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("p4runtime: ") && text.contains("traffic ports:"),
        "no statistics:\n{text}"
    );
    let ends: Vec<&str> = ends.split_whitespace().collect();
    assert!(
        ends.len() == 2
            && ends
                .iter()
                .all(|e| *e == "UNAVAILABLE" || *e == "CANCELLED"),
        "the streams ended with {ends:?}"
    );
}

/// p4c's PTF tests for BMv2 and P4-DPDK, run as p4c's runners run them, against nevermiss
/// (`P4C_DIR` set; skipped otherwise): 13 cases, each must pass.
#[test]
fn p4c_ptf_tests_pass() {
    let Some(p4c) = std::env::var_os("P4C_DIR").map(PathBuf::from) else {
        eprintln!("skipped: P4C_DIR is not set");
        return;
    };
    let Some(py) = ptf_python() else { return };
    let samples = p4c.join("testdata/p4_16_samples");
    let mut total = (0, 0);
    let mut failures = String::new();
    for (name, bmv2) in [
        ("ternary2-bmv2", true),
        ("pna-dpdk-small_sample", false),
        ("pna-dpdk-add_on_miss0", false),
    ] {
        for backend in ["af_xdp", "af_packet"] {
            let dir = scratch(&format!("p4c-{name}-{backend}"));
            let tests = dir.join("tests");
            std::fs::create_dir_all(&tests).unwrap();
            std::fs::copy(
                samples.join(format!("{name}.py")),
                tests.join(format!("{name}.py")),
            )
            .unwrap();
            let (info, cfg) = p4info(&samples.join(format!("{name}.p4")), &dir, name, &[]);
            // BMv2's runner: 10 pairs, the switch on `K`, ptf on `br_K`, device 0, the
            // server on 0.0.0.0; DPDK's: 2 ports, device 1.
            let (n, device) = if bmv2 { (10, 0) } else { (2, 1) };
            let pairs: Vec<(String, String)> = (0..n)
                .map(|k| {
                    if bmv2 {
                        (format!("{k}"), format!("br_{k}"))
                    } else {
                        (format!("sw{k}"), format!("TAP{k}"))
                    }
                })
                .collect();
            let ns = Netns::new(&format!("p4c{}", name.len() % 97), &pairs);
            let mut args: Vec<String> = vec![
                "--device-id".into(),
                device.to_string(),
                "--grpc-addr".into(),
                "0.0.0.0:9559".into(),
            ];
            for (k, (sw, _)) in pairs.iter().enumerate() {
                args.extend(["--port".into(), format!("{k}=if:{sw},backend={backend}")]);
            }
            let serve = Serve::start(&ns, &args, n);
            let mut params = format!(
                "grpcaddr='0.0.0.0:9559';p4info='{}';config='{}';",
                info.display(),
                cfg.display()
            );
            params.push_str(if bmv2 {
                "packet_wait_time='0.5';"
            } else {
                "device_id=1"
            });
            let hosts: Vec<String> = pairs.iter().map(|(_, h)| h.clone()).collect();
            let (ok, ran, text) = ptf(
                &ns,
                &py,
                &tests,
                &[p4c.join("tools/ptf"), p4c.join("tools")],
                &hosts,
                &params,
                &dir,
            );
            let (_, _, out) = serve.stop();
            eprintln!("p4c {name} on {backend}: {ok} of {ran} cases passed");
            total.0 += ok;
            total.1 += ran;
            if ok != ran || ran == 0 {
                failures.push_str(&format!(
                    "== {name} on {backend}: {ok} of {ran}\n{text}\n-- serve:\n{out}\n"
                ));
            }
        }
    }
    eprintln!("p4c's PTF tests: {} of {} cases passed", total.0, total.1);
    assert!(failures.is_empty(), "{failures}");
}
