//! Egress queues (`--egress-queues`, crates/nevermiss-runtime/src/queues.rs) through the
//! binary, over pcap ports: the queueing metadata egress sees (tests/queues/qdepth.p4 writes
//! it into each frame), tail drop at the depth, the rate on the packet clock, priorities, and
//! the flags' errors.

mod served;

use nevermiss_io::Packet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn prog() -> PathBuf {
    root().join("tests/queues/qdepth.p4")
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("nevermiss-queues-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `n` frames on port 0, all at time 0, EtherType `types(i)`.
fn input(name: &str, n: usize, types: impl Fn(usize) -> u16) -> PathBuf {
    let path = tmp(name);
    let pkts: Vec<Packet> = (0..n)
        .map(|i| {
            let mut f = vec![0u8; 60];
            f[12..14].copy_from_slice(&types(i).to_be_bytes());
            f[14] = i as u8;
            Packet::from_bytes(&f, 0, 0)
        })
        .collect();
    nevermiss_io::pcap::write_file(&path, &pkts).unwrap();
    path
}

/// What egress wrote into a frame: (deq_timedelta µs, enq_qdepth, deq_qdepth, marked, seq).
fn meta(f: &[u8]) -> (u64, u64, u64, bool, u8) {
    let be = |b: &[u8]| b.iter().fold(0u64, |a, &x| a << 8 | u64::from(x));
    let src = be(&f[6..12]);
    (
        be(&f[0..6]),
        (src >> 19) & 0x7ffff,
        src & 0x7ffff,
        f[12] & 0x80 != 0,
        f[14],
    )
}

/// Runs the program from `inp` (port 0) to a capture (port 1) with `flags`.
fn run(inp: &Path, out: &str, flags: &[&str]) -> (Output, Vec<Packet>) {
    let out = tmp(out);
    let spec0 = format!("0=pcap:{}", p(inp));
    let spec1 = format!("1=pcap:,{}", p(&out));
    let o = Command::new(env!("CARGO_BIN_EXE_nevermiss"))
        .args(["run", p(&prog()), "--port", &spec0, "--port", &spec1])
        .args(flags)
        .output()
        .unwrap();
    let got = nevermiss_io::pcap::read_file(&out).unwrap_or_default();
    (o, got)
}

#[test]
fn without_queues_the_metadata_is_zero() {
    let inp = input("plain.pcap", 40, |_| 0x0800);
    let (o, got) = run(&inp, "plain-out.pcap", &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(got.len(), 40);
    for f in &got {
        let (delta, enq, deq, marked, _) = meta(f.data());
        assert_eq!((delta, enq, deq, marked), (0, 0, 0, false));
    }
    assert!(!text(&o).contains("egress queues"), "{}", text(&o));
}

#[test]
fn a_burst_backs_up_the_queue_and_egress_sees_its_depths() {
    // 100 frames at once, read 32 a round: each round's frames wait behind each other.
    let inp = input("burst.pcap", 100, |_| 0x0800);
    let (o, got) = run(
        &inp,
        "burst-out.pcap",
        &["--egress-queues", "all", "--batch", "32"],
    );
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert_eq!(got.len(), 100, "{t}");
    for (i, f) in got.iter().enumerate() {
        let (_, enq, deq, marked, seq) = meta(f.data());
        let k = (i % 32) as u64;
        let round = if i < 96 { 32 } else { 4 };
        assert_eq!(seq as usize, i, "in order");
        assert_eq!((enq, deq), (k, round - 1 - k), "frame {i}");
        assert_eq!(marked, enq >= 5, "frame {i}");
    }
    assert!(
        t.contains(
            "egress queues: 100 copies enqueued, deepest 32 packets; dropped: 0 (queue full)"
        ),
        "{t}"
    );
}

#[test]
fn a_full_queue_drops_the_tail() {
    let inp = input("full.pcap", 100, |_| 0x0800);
    let (o, got) = run(
        &inp,
        "full-out.pcap",
        &[
            "--egress-queues",
            "1",
            "--queue-depth",
            "8",
            "--batch",
            "32",
        ],
    );
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    // 8 of each round of 32 (and the last 4 of 4).
    assert_eq!(got.len(), 28, "{t}");
    let seqs: Vec<u8> = got.iter().map(|f| meta(f.data()).4).collect();
    let want: Vec<u8> = (0..100u8).filter(|i| i % 32 < 8).collect();
    assert_eq!(seqs, want);
    assert!(t.contains("dropped: 72 (queue full)"), "{t}");
    assert!(
        t.contains("total: 100 packets in, 28 out, 72 dropped"),
        "{t}"
    );
}

#[test]
fn a_rate_spaces_departures_on_the_packet_clock() {
    // 20 frames at time 0, 1000 packets/s: frame k leaves at k ms.
    let inp = input("rate.pcap", 20, |_| 0x0800);
    let (o, got) = run(
        &inp,
        "rate-out.pcap",
        &[
            "--egress-queues",
            "all",
            "--queue-rate",
            "1000",
            "--clock",
            "packet",
        ],
    );
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert_eq!(got.len(), 20, "{t}");
    for (k, f) in got.iter().enumerate() {
        let (delta, enq, deq, _, _) = meta(f.data());
        assert_eq!(delta, 1000 * k as u64, "frame {k}");
        assert_eq!((enq, deq), (k as u64, 19 - k as u64), "frame {k}");
        assert_eq!(f.ts_ns, 1_000_000 * k as u64, "sent at its departure time");
    }
}

#[test]
fn the_higher_priority_leaves_first() {
    // Alternating priorities 0 and 1 in one round: the eight of priority 1 go first.
    let inp = input("pri.pcap", 16, |i| 0x0800 | (i as u16 & 1));
    let (o, got) = run(
        &inp,
        "pri-out.pcap",
        &["--egress-queues", "all", "--priority-queues", "2"],
    );
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    let seqs: Vec<u8> = got.iter().map(|f| meta(f.data()).4).collect();
    assert_eq!(
        seqs,
        [1, 3, 5, 7, 9, 11, 13, 15, 0, 2, 4, 6, 8, 10, 12, 14],
        "{t}"
    );
    // Each priority has its own queue and depths.
    let depths: Vec<(u64, u64)> = got
        .iter()
        .map(|f| (meta(f.data()).1, meta(f.data()).2))
        .collect();
    assert_eq!(depths[0], (0, 7));
    assert_eq!(depths[8], (0, 7));
    // A priority beyond the queues is dropped, as BMv2 drops it.
    let inp = input("pri-out-of-range.pcap", 4, |_| 0x0802);
    let (o, got) = run(
        &inp,
        "pri-oor-out.pcap",
        &["--egress-queues", "all", "--priority-queues", "2"],
    );
    let t = text(&o);
    assert_eq!(got.len(), 0, "{t}");
    assert!(t.contains("4 (no queue for their priority)"), "{t}");
}

#[test]
fn queue_flags_are_checked() {
    let inp = input("flags.pcap", 1, |_| 0x0800);
    for (flags, want) in [
        (
            &["--queue-depth", "8"][..],
            "error: --queue-depth shapes the egress queues: it needs --egress-queues all|PORTS",
        ),
        (
            &["--egress-queues", "1,x"][..],
            "error: --egress-queues 1,x: `x` is not a port number",
        ),
        (
            &["--egress-queues", "all", "--priority-queues", "9"][..],
            "error: --priority-queues: 9 priority queues: from 1 to 8 per port",
        ),
        (
            &["--egress-queues", "all", "--cores", "1"][..],
            "error: --egress-queues: the queues belong to one loop: leave out --cores",
        ),
    ] {
        let (o, _) = run(&inp, "flags-out.pcap", flags);
        assert_eq!(o.status.code(), Some(2), "{flags:?}: {}", text(&o));
        assert!(text(&o).contains(want), "{flags:?}: {}", text(&o));
    }
}

#[test]
fn a_trace_says_a_packet_was_queued_not_dropped() {
    let inp = input("trace.pcap", 2, |_| 0x0800);
    let (o, got) = run(
        &inp,
        "trace-out.pcap",
        &["--egress-queues", "all", "--trace"],
    );
    let t = text(&o);
    assert_eq!(got.len(), 2, "{t}");
    assert!(t.contains("queued for port 1"), "{t}");
    assert!(!t.contains("  dropped"), "{t}");
}

/// `nevermiss ctl set-queue-rate` and `set-queue-depth` change a running switch's queues
/// (BMv2's set_queue_rate/set_queue_depth; `nevermiss_p4rt::queues`): with the generator
/// keeping port 1's queue full, departures go from 1000 to 250 packets/s and the depth packets
/// find on arrival from 63 to at most 7. Wall clock, so the rates are checked within ±35%.
#[test]
fn ctl_changes_the_rate_and_depth_while_traffic_flows() {
    let out = tmp("live-out.pcap");
    let spec1 = format!("1=pcap:,{}", p(&out));
    let mut child = Command::new(env!("CARGO_BIN_EXE_nevermiss"))
        .args(["serve", p(&prog()), "--grpc-addr", "127.0.0.1:0"])
        .args(["--port", "0=gen:two-phase,m=16,count=1000000000"])
        .args(["--port", &spec1])
        .args(["--egress-queues", "all", "--queue-rate", "1000"])
        .args(["--duration", "8s", "--log-console"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let addr = served::grpc_addr(&mut child);
    let ctl = |args: &[&str]| {
        let (code, out, err) = served::ctl(&addr, args);
        (code, out + &err)
    };
    let (code, t) = ctl(&["show-queues"]);
    assert_eq!(code, 0, "{t}");
    assert!(
        t.contains("egress queues on every port, 1 priority each: depth 64, rate 1000 pps"),
        "{t}"
    );
    std::thread::sleep(std::time::Duration::from_millis(2500));
    let (code, t) = ctl(&["set-queue-rate", "250", "1"]);
    assert_eq!(code, 0, "{t}");
    assert!(
        t.contains("port 1 priority 0: depth 64, rate 250 pps"),
        "{t}"
    );
    let (code, t) = ctl(&["set-queue-depth", "8"]);
    assert_eq!(code, 0, "{t}");
    assert!(
        t.contains("port 1 priority 0: depth 8, rate 250 pps"),
        "{t}"
    );
    // Errors: a port without a queue, a priority the ports do not have.
    let (code, t) = ctl(&["set-queue-rate", "5", "1", "3"]);
    assert!(
        code == 2 && t.contains("INVALID_ARGUMENT") && t.contains("priority 3"),
        "{t}"
    );
    std::thread::sleep(std::time::Duration::from_millis(3000));
    // SAFETY: signalling our own child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let o = child.wait_with_output().unwrap();
    let log = text(&o);
    assert_eq!(o.status.code(), Some(0), "{log}");
    assert!(log.contains("EgressQueues.Set"), "{log}");
    let got = nevermiss_io::pcap::read_file(&out).unwrap();
    assert!(got.len() > 1000, "{} departures: {log}", got.len());
    let (t0, t1) = (got[0].ts_ns, got[got.len() - 1].ts_ns);
    // Departures per second in [from, to) ns.
    let rate = |from: u64, to: u64| {
        got.iter().filter(|f| (from..to).contains(&f.ts_ns)).count() as f64 * 1e9
            / (to - from) as f64
    };
    let before = rate(t0 + 300_000_000, t0 + 1_800_000_000);
    let after = rate(t1 - 2_000_000_000, t1);
    assert!((650.0..1350.0).contains(&before), "before: {before} pps");
    assert!((160.0..340.0).contains(&after), "after: {after} pps");
    let depth = |f: &Packet| meta(f.data()).1;
    let early: Vec<u64> = got
        .iter()
        .filter(|f| f.ts_ns < t0 + 1_800_000_000)
        .map(depth)
        .collect();
    let late: Vec<u64> = got
        .iter()
        .filter(|f| f.ts_ns >= t1 - 2_000_000_000)
        .map(depth)
        .collect();
    assert_eq!(early.iter().max(), Some(&63), "{early:?}");
    assert!(late.iter().all(|&d| d <= 7), "{late:?}");
    eprintln!(
        "departures: {before:.0} pps before, {after:.0} pps after; depth on arrival {} then \
         at most {}",
        early.iter().max().unwrap(),
        late.iter().max().unwrap()
    );
}
