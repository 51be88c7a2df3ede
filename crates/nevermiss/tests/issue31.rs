//! Regression tests of issue 31 ("what a user sees"): the small things a new user met, through
//! the binary as a user runs it — each failed before its fix.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_nevermiss"))
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn ex(name: &str) -> String {
    root().join("examples").join(name).display().to_string()
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("nevermiss-issue31-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

/// Runs the binary with a time limit (a hang fails the test instead of stalling it).
fn run(args: &[&str]) -> Output {
    let mut child = bin()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run nevermiss");
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("`nevermiss {}` did not finish in 60 s", args.join(" "));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `nevermiss check` (and `run`) on a directory, a FIFO or a device: exit 2 with a message that
/// says what the path is, never "no such file", and never a read of the FIFO or device (a FIFO
/// with no writer would block forever, `/dev/zero` never ends).
#[test]
fn a_path_that_is_not_a_file_is_named_for_what_it_is() {
    let fifo = tmp("prog.fifo");
    let _ = std::fs::remove_file(&fifo);
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let dir = std::env::temp_dir();
    let stf = ex("v1model-router.stf");
    for (path, what) in [
        (dir.to_str().unwrap(), "is a directory"),
        (fifo.to_str().unwrap(), "is a named pipe (FIFO)"),
        ("/dev/zero", "is a character device"),
    ] {
        for cmd in [
            vec!["check", path],
            vec!["run", path, "--port", "0=null"],
            vec!["stf", path, &stf],
            vec!["p4info", path],
        ] {
            let o = run(&cmd);
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(2), "{cmd:?}: {err}");
            assert!(
                err.starts_with("error: ") && err.contains(what) && !err.contains("no such file"),
                "{cmd:?}: {err}"
            );
        }
    }
    let o = run(&["check", "/no/such/prog.p4"]);
    assert!(stderr(&o).contains("/no/such/prog.p4: no such file"));
}

/// An empty program and one without `main`: `check` exits 1 naming the file, with the message
/// `run` gives (which names the file too).
#[test]
fn a_program_without_main_fails_check_and_run_naming_the_file() {
    let empty = tmp("empty.p4");
    std::fs::write(&empty, "").unwrap();
    let headers = tmp("headers-only.p4");
    std::fs::write(&headers, "header h_t { bit<8> a; }\n").unwrap();
    for prog in [&empty, &headers] {
        let p = prog.to_str().unwrap();
        let want = format!("{p}: error: the program has no `main` package instance");
        let o = run(&["check", p]);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(stderr(&o).contains(&want), "check: {}", stderr(&o));
        let o = run(&["run", p, "--port", "0=null"]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains(&want), "run: {}", stderr(&o));
    }
    // A library of declarations checks with --library (p4c's front end accepts it; the
    // conformance suites check p4c's programs so).
    let o = run(&["check", "--library", headers.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // A whole program still checks.
    assert!(run(&["check", &ex("pna-forwarder.p4")]).status.success());
}

/// `run --port 0=pcap:/tmp`: an `error:` line that says the input is a directory.
#[test]
fn a_directory_as_a_capture_file_is_an_error_line() {
    let o = run(&[
        "run",
        &ex("pna-forwarder.p4"),
        "--port",
        &format!("0=pcap:{}", std::env::temp_dir().display()),
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.starts_with("error: ") && err.contains("is a directory, not a capture file"),
        "{err}"
    );
}

/// A syntax error in an STF test: exit 2 (the test cannot be read) with file:line:col, as
/// docs/runtime.md says; a failing test is exit 1.
#[test]
fn an_stf_syntax_error_exits_2_with_its_position() {
    let stf = tmp("broken.stf");
    std::fs::write(&stf, "packet 0 00 11\nexpect 0 00 11\npacket zero 00\n").unwrap();
    let o = run(&["stf", &ex("v1model-router.p4"), stf.to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.starts_with("error: ") && err.contains(&format!("{}:3:", stf.display())),
        "{err}"
    );
    // A test that parses and fails is still exit 1.
    let failing = tmp("failing.stf");
    std::fs::write(&failing, "packet 0 00 11\nexpect 7 ffff\n").unwrap();
    let o = run(&["stf", &ex("v1model-router.p4"), failing.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
}

/// `run --duration` stops a run whose input never ends, as SIGINT does: statistics, exit 0.
#[test]
fn run_stops_after_its_duration() {
    let start = Instant::now();
    let o = run(&[
        "run",
        &ex("pna-add-on-miss.p4"),
        "--port",
        "0=gen:two-phase,m=1024,count=1000000000000,field=ipv4.dst",
        "--duration",
        "400ms",
    ]);
    let took = start.elapsed();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("total: ") && out.contains("port   0: in "),
        "{out}"
    );
    assert!(took < Duration::from_secs(30), "took {took:?}");
    let o = run(&[
        "run",
        &ex("pna-forwarder.p4"),
        "--port",
        "0=null",
        "--duration",
        "0s",
    ]);
    assert_eq!(o.status.code(), Some(2));
}

/// `nevermiss --version` names the build: the commit (and whether the tree differed), rustc,
/// features and the engines; `-V` is one line.
#[test]
fn version_names_the_build() {
    let o = run(&["--version"]);
    assert!(o.status.success());
    let v = String::from_utf8_lossy(&o.stdout).into_owned();
    let head = Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(root())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    assert!(
        v.starts_with(&format!("nevermiss {}", env!("CARGO_PKG_VERSION"))),
        "{v}"
    );
    for key in [
        "\ncommit: ",
        "\nrustc: rustc ",
        "\nfeatures: ",
        "\nengines: jit (Cranelift ",
    ] {
        assert!(v.contains(key), "{key:?} missing: {v}");
    }
    if let Some(h) = head {
        assert!(v.contains(&format!("commit: {h}")), "{v}");
    }
    let o = run(&["-V"]);
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 1);
}

/// `scripts/testbed.sh up 7 8` twice: the second leaves the testbed as it is, exit 0 (root only).
#[test]
fn testbed_up_twice_is_fine() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: needs root");
        return;
    }
    let tb = root().join("scripts/testbed.sh");
    let sh = |args: &[&str]| Command::new("bash").arg(&tb).args(args).output().unwrap();
    struct Down<'a>(&'a dyn Fn(&[&str]) -> Output);
    impl Drop for Down<'_> {
        fn drop(&mut self) {
            (self.0)(&["down", "47", "48"]);
        }
    }
    let _down = Down(&sh);
    for _ in 0..2 {
        let o = sh(&["up", "47", "48"]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let o = sh(&["up", "--queues", "2", "47"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let q = std::fs::read_dir("/sys/class/net/nm-s47/queues")
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("rx-")
        })
        .count();
    assert_eq!(q, 2, "made anew with two queues");
}
