//! Regression tests of issue 9 ("nothing a user types panics, loses packets or is silently
//! ignored"): one test per defect the issue lists, through the binary as a user runs it.

use nevermiss_io::gen::{TwoPhaseConfig, TwoPhaseGen};
use nevermiss_io::{Batch, PcapWriter};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

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
    let d = std::env::temp_dir().join(format!("nevermiss-issue9-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("run nevermiss")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// `n` two-phase generator frames (84 bytes each) written to a pcap file; returns its bytes.
fn capture(path: &Path, n: u64) -> Vec<u8> {
    let mut g = TwoPhaseGen::new(TwoPhaseConfig {
        m: 64,
        r: 1,
        count: n,
        ..TwoPhaseConfig::default()
    })
    .unwrap();
    let mut w = PcapWriter::create(path).unwrap();
    let mut b = Batch::new();
    while !g.is_done() {
        b.clear();
        g.fill(&mut b);
        for pkt in b.iter() {
            w.write_packet(pkt.data(), pkt.ts_ns).unwrap();
        }
    }
    w.flush().unwrap();
    drop(w);
    std::fs::read(path).unwrap()
}

/// Packets in a pcap file.
fn packets_in(path: &Path) -> usize {
    nevermiss_io::pcap::read_file(path).unwrap().len()
}

/// Runs a command whose stdout is a pipe that the reader closes before reading anything
/// (`| head -0`): the command must end with exit 0 and no panic.
fn with_stdout_closed(args: &[&str]) -> (Option<i32>, String) {
    let mut child = bin()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (child.wait().unwrap().code(), err)
}

#[test]
fn defect1_a_closed_stdout_ends_every_command_with_exit_0() {
    let t = tmp("t.pcap");
    let o = run(&[
        "sim",
        "gen",
        "--size",
        "100",
        "--packets",
        "20000",
        "-o",
        p(&t),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let big = tmp("big.p4");
    let gen = Command::new("python3")
        .arg(root().join("scripts/gen-large-p4.py"))
        .arg("500")
        .output()
        .unwrap();
    std::fs::write(&big, gen.stdout).unwrap();
    for args in [
        vec!["sim", "info", "-t", p(&t)],
        vec!["check", p(&big), "--dump", "tokens"],
        vec![
            "sim",
            "hazards",
            "-t",
            p(&t),
            "-k",
            "global",
            "-N",
            "1..30",
            "--batch",
            "1000",
        ],
        vec!["check", p(&big), "--dump", "ast"],
    ] {
        let (code, err) = with_stdout_closed(&args);
        assert_eq!(code, Some(0), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

/// The three kinds of damage of issue 9: (capture bytes, complete packets before the damage,
/// byte offset the error must name).
fn damaged(whole: &[u8], n: usize) -> Vec<(&'static str, Vec<u8>, usize, usize)> {
    let rec = (whole.len() - 24) / n;
    let mut truncated = whole.to_vec();
    truncated.truncate(whole.len() - rec / 2);
    let mut garbage = whole.to_vec();
    garbage.extend_from_slice(&[0xde, 0xad, 0xbe, 0xef, 0x01, 0x02, 0x03]);
    let mut corrupt = whole.to_vec();
    let at = 24 + 49 * rec;
    corrupt[at + 8..at + 12].copy_from_slice(&u32::MAX.to_le_bytes());
    vec![
        ("truncated", truncated, n - 1, 24 + (n - 1) * rec),
        ("garbage-tailed", garbage, n, whole.len()),
        // The error names the record's length field.
        ("mid-file-corrupted", corrupt, 49, at + 8),
    ]
}

#[test]
fn defect2_a_damaged_capture_keeps_every_complete_packet_on_1_and_2_cores() {
    let whole = capture(&tmp("whole.pcap"), 99);
    for (what, bytes, complete, offset) in damaged(&whole, 99) {
        let input = tmp(&format!("{what}.pcap"));
        std::fs::write(&input, bytes).unwrap();
        for cores in [None, Some("2")] {
            let out = tmp(&format!("{what}-{}-out.pcap", cores.unwrap_or("1")));
            let spec = format!("0=pcap:{},{}", p(&input), p(&out));
            let mut args = vec!["run"];
            let prog = ex("pna-add-on-miss.p4");
            args.extend([prog.as_str(), "--port", &spec]);
            if let Some(c) = cores {
                args.extend(["--cores", c, "--no-pin"]);
            }
            let o = run(&args);
            let (so, se) = (stdout(&o), stderr(&o));
            assert_eq!(o.status.code(), Some(2), "{what} {cores:?}: {so}{se}");
            assert!(
                so.contains(&format!("total: {complete} packets in, {complete} out")),
                "{what} {cores:?}: statistics missing or wrong:\n{so}"
            );
            assert!(
                se.contains(&format!("at byte offset {offset}")),
                "{what} {cores:?}: {se}"
            );
            assert!(!se.contains("panicked"), "{se}");
            assert_eq!(packets_in(&out), complete, "{what} {cores:?}: output");
        }
    }
}

#[test]
fn defect3_every_example_passes_its_stf_test_exactly_as_the_readme_shows() {
    let mut n = 0;
    for e in std::fs::read_dir(root().join("examples")).unwrap() {
        let stf = e.unwrap().path();
        if stf.extension().is_some_and(|x| x == "stf") {
            let prog = stf.with_extension("p4");
            let o = run(&["stf", p(&prog), p(&stf)]);
            assert_eq!(
                o.status.code(),
                Some(0),
                "{}: {}{}",
                p(&stf),
                stdout(&o),
                stderr(&o)
            );
            n += 1;
        }
    }
    assert!(n >= 6, "only {n} example tests found");
}

#[test]
fn defect4_flags_are_checked_not_ignored_or_bent() {
    let router = ex("v1model-router.p4");
    let aom = ex("pna-add-on-miss.p4");
    let router_stf = ex("v1model-router.stf");
    let t = tmp("lock.pcap");
    run(&[
        "sim",
        "gen",
        "--size",
        "100",
        "--packets",
        "1000",
        "-o",
        p(&t),
    ]);
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["run", &aom, "--port", "0=null", "--batch", "0"],
            "--batch",
        ),
        (
            vec!["run", &aom, "--port", "0=null", "--batch", "300"],
            "--batch",
        ),
        (vec!["bench", "--quick", "--batch", "300"], "--batch"),
        (
            vec!["sim", "lock", "-t", p(&t), "-N", "4", "--qlen", "0"],
            "--qlen",
        ),
        (
            vec!["run", &router, "--port", "0=null", "--host-port", "1"],
            "--host-port applies to PNA programs only",
        ),
        (
            vec![
                "run",
                &router,
                "--port",
                "0=null",
                "--expire-profile",
                "1=1s",
            ],
            "--expire-profile applies to PNA programs only",
        ),
        (
            vec!["stf", &router, &router_stf, "--host-port", "1"],
            "--host-port applies to PNA programs only",
        ),
        (
            vec!["bench", "--quick", "--program", &router],
            "no add-on-miss table",
        ),
        (
            vec!["run", &aom, "--port", "0=null", "--rss", "ipv4.src"],
            "--rss",
        ),
        (
            vec!["run", &aom, "--port", "0=null", "--max-packets", "0"],
            "--max-packets",
        ),
        (
            vec!["run", &aom, "--port", "0=null", "--stats-every", "0"],
            "--stats-every",
        ),
    ];
    for (args, want) in cases {
        let o = run(&args);
        let se = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}{se}", stdout(&o));
        assert!(se.contains(want), "{args:?}: expected `{want}` in: {se}");
        assert!(!se.contains("panicked"), "{se}");
    }
    // --max-packets N processes exactly N, not a batch's worth.
    let o = run(&[
        "run",
        &aom,
        "--port",
        "0=gen:two-phase,m=64,r=1,count=1000",
        "--max-packets",
        "10",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("total: 10 packets in"),
        "{}",
        stdout(&o)
    );
    assert!(
        stdout(&o).contains("port   0: in 10 pkts"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn defect5_prefixes_and_masks_longer_than_the_field_are_errors() {
    for (entry, want) in [
        (
            "add IngressImpl.ipv4_lpm hdr.ipv4.dst_addr:0x0a000107/33 set_next_hop(next_hop:1, port:1)",
            "prefix length 33",
        ),
        (
            "add IngressImpl.ipv4_lpm hdr.ipv4.dst_addr:0x0a000107/240 set_next_hop(next_hop:1, port:1)",
            "prefix length 240",
        ),
    ] {
        let f = tmp("bad-entries.txt");
        std::fs::write(&f, format!("{entry}\n")).unwrap();
        let o = run(&[
            "run",
            &ex("v1model-router.p4"),
            "--entries",
            p(&f),
            "--port",
            "0=null",
        ]);
        assert_eq!(o.status.code(), Some(2), "{entry}");
        let se = stderr(&o);
        assert!(se.contains(want) && se.contains("32 bits"), "{se}");
    }
}

#[test]
fn defect6_messages_point_at_what_is_wrong() {
    let aom = ex("pna-add-on-miss.p4");
    // No byte offset for a file that cannot be opened.
    let o = run(&["run", &aom, "--port", "0=pcap:/nonexistent/nosuch.pcap"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("nosuch.pcap: cannot open") && !stderr(&o).contains("byte offset"),
        "{}",
        stderr(&o)
    );
    // Generator option errors point at the option, not at the start of the spec.
    let o = run(&["run", &aom, "--port", "0=gen:two-phase,m=65536,r=abc"]);
    assert!(stderr(&o).contains("column 25"), "{}", stderr(&o));
    // Packets to a port that no --port configures are reported per port.
    let o = run(&[
        "run",
        &ex("pna-forwarder.p4"),
        "--entries",
        &ex("pna-forwarder.entries"),
        "--port",
        "1=gen:two-phase,m=64,r=1,count=50",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("port   0: not configured") && stdout(&o).contains("50 packets"),
        "{}",
        stdout(&o)
    );
}
