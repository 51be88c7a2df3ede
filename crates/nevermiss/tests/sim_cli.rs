//! `nevermiss sim ...` end to end: hand-made traces whose hazards, stalls, drops and latencies
//! are computed by hand, synthetic traces, malformed input and bad arguments.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_nevermiss"))
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

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("nevermiss-sim-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// An Ethernet frame carrying IPv4 with the given total length, addresses and UDP ports.
fn frame(ip_len: u16, src: [u8; 4], dst: [u8; 4], sport: u16, dport: u16) -> Vec<u8> {
    let mut f = vec![0u8; 12];
    f.extend_from_slice(&[0x08, 0x00]);
    let mut ip = vec![0x45, 0];
    ip.extend_from_slice(&ip_len.to_be_bytes());
    ip.extend_from_slice(&[0, 0, 0, 0, 64, 17, 0, 0]);
    ip.extend_from_slice(&src);
    ip.extend_from_slice(&dst);
    ip.extend_from_slice(&sport.to_be_bytes());
    ip.extend_from_slice(&dport.to_be_bytes());
    ip.extend_from_slice(&[0, 8, 0, 0]);
    f.extend_from_slice(&ip);
    f
}

fn write_pcap(path: &Path, frames: &[Vec<u8>]) {
    let mut b = Vec::new();
    b.extend_from_slice(&0xa1b2c3d4u32.to_le_bytes());
    b.extend_from_slice(&2u16.to_le_bytes());
    b.extend_from_slice(&4u16.to_le_bytes());
    b.extend_from_slice(&[0; 8]);
    b.extend_from_slice(&65535u32.to_le_bytes());
    b.extend_from_slice(&1u32.to_le_bytes()); // Ethernet
    for (i, f) in frames.iter().enumerate() {
        b.extend_from_slice(&(i as u32).to_le_bytes());
        b.extend_from_slice(&0u32.to_le_bytes());
        b.extend_from_slice(&(f.len() as u32).to_le_bytes());
        b.extend_from_slice(&(f.len() as u32).to_le_bytes());
        b.extend_from_slice(f);
    }
    std::fs::write(path, b).unwrap();
}

/// Four packets: flow A (100 B, 2 cycles), flow B (40 B, 1), A (160 B, 2), A (80 B, 1), plus an
/// ARP frame that is skipped. Arrival cycles 1, 2, 4, 5; the batch has 6 cycles.
fn hand_trace(dir: &Path) -> PathBuf {
    let a = ([10, 0, 0, 1], [10, 0, 0, 2], 1000, 53);
    let b = ([10, 0, 0, 3], [10, 0, 0, 4], 2000, 80);
    let mut arp = vec![0u8; 12];
    arp.extend_from_slice(&[0x08, 0x06, 0, 1]);
    let frames = vec![
        frame(100, a.0, a.1, a.2, a.3),
        arp,
        frame(40, b.0, b.1, b.2, b.3),
        frame(160, a.0, a.1, a.2, a.3),
        frame(80, a.0, a.1, a.2, a.3),
    ];
    let p = dir.join("hand.pcap");
    write_pcap(&p, &frames);
    p
}

fn row<'a>(out: &'a str, key: &str, n: u32) -> Vec<&'a str> {
    out.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|w| w.len() >= 6 && w[0] == key && w[1] == n.to_string())
        .unwrap_or_else(|| panic!("no row {key} {n} in\n{out}"))
}

#[test]
fn hazards_on_a_hand_made_trace() {
    let d = tmpdir("haz");
    let t = hand_trace(&d);
    let csv = d.join("h.csv");
    let o = run(&[
        "sim",
        "hazards",
        "-t",
        t.to_str().unwrap(),
        "-k",
        "global,5tuple",
        "-N",
        "1..4",
        "--batch",
        "4",
        "--csv",
        csv.to_str().unwrap(),
    ]);
    let out = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(out.contains("4 packets (1 skipped), 1 batches"), "{out}");
    // global: distances 1, 2, 1 -> hazards N=2: 2, N=3: 3 over 6 cycles
    assert_eq!(row(&out, "global", 1)[2], "0.00000");
    assert_eq!(row(&out, "global", 2)[2], "0.33333");
    assert_eq!(row(&out, "global", 3)[2], "0.50000");
    assert_eq!(row(&out, "global", 3)[5], "0.75000");
    // 5-tuple: A at cycles 1, 4, 5 -> distances 3 and 1: N=2: 1, N=4: 2 hazards
    assert_eq!(row(&out, "5tuple", 2)[2], "0.16667");
    assert_eq!(row(&out, "5tuple", 3)[2], "0.16667");
    assert_eq!(row(&out, "5tuple", 4)[2], "0.33333");
    let c = std::fs::read_to_string(csv).unwrap();
    assert!(c.starts_with("key,n,batches,fdh_p99,"), "{c}");
    assert_eq!(c.lines().count(), 1 + 8);
}

fn value(out: &str, label: &str) -> String {
    out.lines()
        .find(|l| l.starts_with(label))
        .unwrap_or_else(|| panic!("no `{label}` in\n{out}"))[label.len()..]
        .split_whitespace()
        .next()
        .unwrap()
        .to_string()
}

#[test]
fn lock_on_a_hand_made_trace() {
    let d = tmpdir("lock");
    let t = hand_trace(&d);
    let t = t.to_str().unwrap();
    // Global key, N = 3, one queue: P0 admitted at cycle 1 (lock until 4); P1 stalls at 2, 3;
    // at 4 P2 arrives and P1 is admitted (latency 2); at 5 P3 arrives, P2 is locked: stall.
    let o = run(&[
        "sim",
        "lock",
        "-t",
        t,
        "-k",
        "global",
        "-N",
        "3",
        "-Q",
        "1",
        "--qlen",
        "inf",
        "--batch",
        "4",
        "--batches",
    ]);
    let out = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(value(&out, "throughput min"), "0.500000");
    assert_eq!(value(&out, "drop fraction max"), "0.000000");
    assert_eq!(value(&out, "latency max (cycles)"), "2");
    // p99 of latencies {0, 2}: 0 * 0.01 + 2 * 0.99
    assert_eq!(value(&out, "latency p99 max (cycles)"), "2.0");
    // 3 stall cycles out of 6
    assert_eq!(value(&out, "stall fraction mean"), "0.50000");
    // Q_len = 1 (head of line only): P2 finds P1 waiting there and is dropped.
    let o = run(&[
        "sim", "lock", "-t", t, "-k", "global", "-N", "3", "-Q", "1", "--qlen", "1", "--batch", "4",
    ]);
    let out = stdout(&o);
    assert_eq!(value(&out, "drop fraction max"), "0.250000");
    assert_eq!(value(&out, "throughput min"), "0.500000");
    // 5-tuple key, W = 16 bits: A and B never collide; A's packets are 3 and 1 cycles apart, so
    // P3 waits until A's lock from cycle 4 is released at 7: it is still queued when the batch
    // ends. Admitted: P0, P1, P2 -> 0.75.
    let o = run(&[
        "sim", "lock", "-t", t, "-k", "5tuple", "-N", "3", "-Q", "4", "-W", "16", "--batch", "4",
    ]);
    let out = stdout(&o);
    assert_eq!(value(&out, "throughput min"), "0.750000");
    assert_eq!(value(&out, "latency max (cycles)"), "0");
}

#[test]
fn gen_info_sweep_and_synthetic_traces() {
    let d = tmpdir("gen");
    let dist = d.join("mix.dat");
    std::fs::write(&dist, "# mix\n64 0.5\n1500 0.5\n").unwrap();
    let pcap = d.join("syn.pcap");
    let o = run(&[
        "sim",
        "gen",
        "--dist",
        dist.to_str().unwrap(),
        "--flows",
        "200",
        "--zipf",
        "1.2",
        "--packets",
        "30000",
        "--seed",
        "3",
        "-o",
        pcap.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&["sim", "info", "-t", pcap.to_str().unwrap()]);
    let out = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(out.contains("kept 30000"), "{out}");
    assert!(out.contains("mean read cycles"), "{out}");
    // The same trace as a synthetic spec gives the same hazards as its pcap.
    let spec = format!(
        "synthetic:dist={},flows=200,zipf=1.2,packets=30000,seed=3",
        dist.display()
    );
    let args = |t: &str| {
        run(&[
            "sim", "hazards", "-t", t, "-k", "5tuple", "--batch", "10000", "-N", "5,30",
        ])
    };
    let a = stdout(&args(pcap.to_str().unwrap()));
    let b = stdout(&args(&spec));
    let body = |s: &str| s.lines().skip(1).collect::<Vec<_>>().join("\n");
    assert_eq!(body(&a), body(&b));
    // A small sweep writes the CSV and JSON files.
    let out_dir = d.join("out");
    let o = run(&[
        "sim",
        "sweep",
        "-t",
        &spec,
        "-k",
        "global,5tuple",
        "-N",
        "1..4",
        "-Q",
        "1,4",
        "--qlen",
        "inf,10",
        "--batch",
        "10000",
        "-o",
        out_dir.to_str().unwrap(),
        "--quiet",
        "--threads",
        "2",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let lock = std::fs::read_to_string(out_dir.join("lock.csv")).unwrap();
    assert_eq!(lock.lines().count(), 1 + 2 * 2 * 2 * 4);
    let haz = std::fs::read_to_string(out_dir.join("hazards.csv")).unwrap();
    assert_eq!(haz.lines().count(), 1 + 2 * 4);
    let maxn = std::fs::read_to_string(out_dir.join("max_n.csv")).unwrap();
    // finite queues only: 2 keys x 2 Q x 1 Q_len x 3 tolerances
    assert_eq!(maxn.lines().count(), 1 + 12);
    let json = std::fs::read_to_string(out_dir.join("results.json")).unwrap();
    assert!(json.contains("\"max_n\"") && json.contains("\"traces\""));
}

#[test]
fn malformed_pcap_reports_the_byte_offset() {
    let d = tmpdir("bad");
    let t = hand_trace(&d);
    let mut b = std::fs::read(&t).unwrap();
    // The last record's offset: the one the error must name.
    let mut last = 24;
    loop {
        let incl = u32::from_le_bytes(b[last + 8..last + 12].try_into().unwrap()) as usize;
        if last + 16 + incl >= b.len() {
            break;
        }
        last += 16 + incl;
    }
    b.truncate(b.len() - 3);
    let bad = d.join("trunc.pcap");
    std::fs::write(&bad, &b).unwrap();
    let o = run(&[
        "sim",
        "hazards",
        "-t",
        bad.to_str().unwrap(),
        "--batch",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("truncated packet record data")
            && e.contains(&format!("at byte offset {last}\n")),
        "{e}"
    );
    let junk = d.join("junk.pcap");
    std::fs::write(&junk, b"this is not a capture").unwrap();
    let o = run(&["sim", "info", "-t", junk.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("junk.pcap: not a pcap or pcapng file (magic 74686973) at byte offset 0"),
        "{e}"
    );
    let o = run(&[
        "sim",
        "info",
        "-t",
        d.join("missing.pcap").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn bad_arguments_exit_2_and_empty_runs_exit_1() {
    for args in [
        vec!["sim", "hazards", "-t", "synthetic:size=64", "-k", "nope"],
        vec!["sim", "hazards", "-t", "synthetic:size=64", "-N", "0..3"],
        vec!["sim", "hazards", "-t", "synthetic:flows=3"],
        vec![
            "sim",
            "lock",
            "-t",
            "synthetic:size=64",
            "-N",
            "3",
            "-W",
            "17",
        ],
        vec![
            "sim",
            "lock",
            "-t",
            "synthetic:size=64",
            "-N",
            "3",
            "-Q",
            "0",
        ],
        vec![
            "sim",
            "sweep",
            "-t",
            "synthetic:size=64",
            "-o",
            "/tmp/x",
            "--qlen",
            "ten",
        ],
        vec![
            "sim",
            "gen",
            "--size",
            "64",
            "--packets",
            "-5",
            "-o",
            "/tmp/x.pcap",
        ],
        vec!["sim", "hazards"],
    ] {
        let o = run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{args:?}");
    }
    let o = run(&["sim", "hazards", "-t", "synthetic:size=64,packets=10"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("fewer than one batch"),
        "{}",
        stderr(&o)
    );
}
