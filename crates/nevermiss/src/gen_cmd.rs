//! `nevermiss gen --tx IFACE [--rx IFACE]`: sends the built-in generator's traffic (or a
//! capture's) to an interface at a chosen rate, each frame stamped with a sequence number and
//! the TSC at its send; listening on `--rx` it reports what came back: received, lost,
//! reordered, and per-packet latency percentiles (papers/000's MoonGen setup, on one machine;
//! docs/io.md "Traffic generator").
//!
//! The stamp is the frame's last 16 bytes: `NMG`, the sender's number (u8), its sequence number
//! (u32) and the TSC (u64), big-endian; frames are at least 64 bytes (padded, or `--size`) so
//! the stamp never overlaps the headers a program rewrites. With `--cores N`, N sender threads
//! (pinned unless `--no-pin`) each send every N-th frame of the source (sender `s` the frames
//! `i` with `i mod N = s`) at 1/N of the rate, through its own socket, numbering its frames in
//! its own sequence: loss, reordering and duplicates are counted per sender, exactly, and
//! summed. Generated frames get the Ethernet source 02:00:00:00:00:01
//! (the generator writes one address as both). Latency = TSC at receive − TSC at send, in ns by the TSC's
//! calibrated frequency.

use crate::flags::duration_ns;
use clap::Args;
use nevermiss_bench::tsc;
use nevermiss_io::afpacket::AfPacketPort;
use nevermiss_io::{Batch, BATCH_MAX};
use nevermiss_io::{PcapPort, Port, PortSpec};
use serde_json::json;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const MAGIC: &[u8; 3] = b"NMG";
const STAMP: usize = 16;
/// Most sender threads (the stamp numbers senders in a byte).
const MAX_SENDERS: usize = 64;

#[derive(Args, Debug)]
pub struct GenArgs {
    /// The interface to send on.
    #[arg(long, value_name = "IFACE")]
    pub tx: String,
    /// The interface to listen on for the frames coming back (may be --tx itself).
    #[arg(long, value_name = "IFACE")]
    pub rx: Option<String>,
    /// What to send: a generator spec as after `--port N=gen:` (default: two-phase keys on
    /// ipv4.dst) or `pcap:FILE` (replayed in a loop).
    #[arg(
        long,
        default_value = "two-phase,m=1024,r=100,field=ipv4.dst",
        value_name = "SPEC"
    )]
    pub source: String,
    /// Frames per second (`100000`, `250k`, `1M`), bits per second (`500Mbit`, `1Gbit`, on the
    /// frame bytes), or `max`.
    #[arg(long, default_value = "100k", value_parser = parse_rate, value_name = "RATE")]
    pub rate: Rate,
    /// Frames to send.
    #[arg(long, value_parser = crate::flags::count, value_name = "N")]
    pub count: Option<u64>,
    /// Send for this long (e.g. 5s); with --count, whichever ends first. Default: 1 s.
    #[arg(long, value_parser = duration_ns, value_name = "DURATION")]
    pub duration: Option<u64>,
    /// Frame size in bytes (64 to 2000): frames are padded (or cut) to it. Default: each
    /// frame's own size, padded to 64 bytes if shorter (the generator's frames are 84 bytes).
    #[arg(long, value_parser = clap::value_parser!(u16).range(64..=2000))]
    pub size: Option<u16>,
    /// After sending, wait for the frames to come back until none has for this long.
    #[arg(long, default_value = "200ms", value_parser = duration_ns, value_name = "DURATION")]
    pub drain: u64,
    /// Write the latencies as an HdrHistogram log (ns).
    #[arg(long, value_name = "FILE")]
    pub hdr: Option<PathBuf>,
    /// Write the report as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Sender threads (1 to 64): each sends its share of the frames, the rate and the count,
    /// through its own socket, with its own sequence numbers.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub cores: usize,
    /// Do not pin sender thread `s` to the `s`-th CPU this process may use.
    #[arg(long)]
    pub no_pin: bool,
}

/// A send rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rate {
    Pps(f64),
    Bps(f64),
    Max,
}

fn parse_rate(s: &str) -> Result<Rate, String> {
    let t = s.trim();
    if t == "max" {
        return Ok(Rate::Max);
    }
    let lower = t.to_ascii_lowercase();
    let (num, bits) = match lower.strip_suffix("bit") {
        Some(n) => (n, true),
        None => (lower.strip_suffix("pps").unwrap_or(&lower), false),
    };
    let (num, mult) = match num.chars().last() {
        Some('k') => (&num[..num.len() - 1], 1e3),
        Some('m') => (&num[..num.len() - 1], 1e6),
        Some('g') => (&num[..num.len() - 1], 1e9),
        _ => (num, 1.0),
    };
    let v: f64 = num.parse().map_err(|_| {
        format!("`{s}`: expected frames/s (100000, 250k, 1M), bits/s (1Gbit) or max")
    })?;
    let v = v * mult;
    if !(v.is_finite() && v > 0.0) {
        return Err(format!("`{s}`: the rate must be positive"));
    }
    Ok(if bits { Rate::Bps(v) } else { Rate::Pps(v) })
}

pub fn run(args: GenArgs) -> u8 {
    crate::usage_result(run_inner(args))
}

/// What the receiver saw.
#[derive(Default)]
struct Received {
    frames: u64,
    reordered: u64,
    duplicates: u64,
    hist: Option<hdrhistogram::Histogram<u64>>,
}

/// The receiver's state of one sender's sequence.
#[derive(Default)]
struct Sequence {
    seen: Vec<u64>,
    last: Option<u32>,
}

fn source(spec: &str, count: u64) -> Result<Box<dyn Port>, String> {
    if let Some(path) = spec.strip_prefix("pcap:") {
        return Ok(Box::new(
            PcapPort::open(0, Some(PathBuf::from(path)), None).map_err(|e| e.to_string())?,
        ));
    }
    let with_count = if spec.contains("count=") {
        spec.to_string()
    } else {
        format!("{spec},count={count}")
    };
    let p = PortSpec::parse(&format!("0=gen:{with_count}"))
        .map_err(|e| format!("--source: {}", e.message))?;
    p.open().map_err(|e| format!("--source: {e}"))
}

/// What one sender thread does: frames `i` of the source with `i mod of = id`, at most
/// `count`, paced at `pps`, until `duration`.
struct Sender {
    id: usize,
    of: usize,
    count: u64,
    pps: Option<f64>,
    duration: Option<Duration>,
    fixed: Option<usize>,
    spec: String,
    /// The count the source is opened with (the generator derives its keys from it).
    source_count: u64,
    cpu: Option<usize>,
}

/// A sender's result: frames and bytes sent, and when it stopped (from the common start).
struct Sent {
    frames: u64,
    bytes: u64,
    elapsed: Duration,
}

impl Sender {
    fn run(
        &self,
        mut tx: AfPacketPort,
        progress: &AtomicU64,
        start: Instant,
    ) -> Result<Sent, String> {
        if let Some(c) = self.cpu {
            nevermiss_runtime::workers::pin_current_thread(c)
                .map_err(|e| format!("sender {}: {e}", self.id))?;
        }
        let mut src = source(&self.spec, self.source_count)?;
        let generated = !self.spec.starts_with("pcap:");
        let (mut sent, mut sent_bytes, mut seq) = (0u64, 0u64, 0u32);
        // Frames of the source read so far (all senders' shares): this sender's are those
        // whose index is `id` modulo `of`.
        let mut index = 0u64;
        let mut b = Batch::with_capacity(BATCH_MAX);
        let mut out = Batch::with_capacity(32);
        let mut f: Vec<u8> = Vec::with_capacity(2048);
        let of = self.of as u64;
        'send: while sent < self.count && self.duration.is_none_or(|d| start.elapsed() < d) {
            // Pacing: this sender's frame i is due at start + i / pps.
            let want = match self.pps {
                Some(p) => {
                    let due = (start.elapsed().as_secs_f64() * p) as u64 + 1;
                    due.saturating_sub(sent).min(32).min(self.count - sent)
                }
                None => 32u64.min(self.count - sent),
            };
            if want == 0 {
                std::hint::spin_loop();
                continue;
            }
            // Enough of the source for `want` frames of this sender's share.
            let first = (self.id as u64 + of - index % of) % of;
            let read = ((want - 1) * of + first + 1).min(BATCH_MAX as u64);
            b.clear();
            b.set_capacity(read as usize);
            let n = src.rx_burst(&mut b).map_err(|e| format!("--source: {e}"))?;
            if n == 0 {
                if src.rx_done() {
                    if !generated {
                        src = source(&self.spec, 0)?;
                        continue;
                    }
                    break 'send;
                }
                continue;
            }
            out.clear();
            for p in b.as_slice() {
                let mine = index % of == self.id as u64;
                index += 1;
                if !mine || out.len() as u64 >= want {
                    continue;
                }
                f.clear();
                f.extend_from_slice(p.data());
                let size = self.fixed.unwrap_or(f.len().max(64));
                f.resize(size, 0);
                if generated && size >= 12 {
                    // The generator writes one address as source and destination; a distinct
                    // source keeps learning bridges (and switches) from dropping the frames.
                    f[6..12].copy_from_slice(&[0x02, 0, 0, 0, 0, 0x01]);
                }
                let t = tsc::stop();
                f[size - STAMP..size - 13].copy_from_slice(MAGIC);
                f[size - 13] = self.id as u8;
                f[size - 12..size - 8].copy_from_slice(&seq.to_be_bytes());
                f[size - 8..].copy_from_slice(&t.to_be_bytes());
                seq = seq.wrapping_add(1);
                out.push(&f, 0, 0);
            }
            if out.is_empty() {
                continue;
            }
            let taken = tx.tx(out.as_slice()).map_err(|e| format!("--tx: {e}"))?;
            sent += taken as u64;
            sent_bytes += out.as_slice()[..taken]
                .iter()
                .map(|p| p.len() as u64)
                .sum::<u64>();
            progress.store(sent, Ordering::Relaxed);
        }
        tx.flush().map_err(|e| format!("--tx: {e}"))?;
        Ok(Sent {
            frames: sent,
            bytes: sent_bytes,
            elapsed: start.elapsed(),
        })
    }
}

/// Frames `i < count` with `i mod of = id`.
fn share(count: u64, id: usize, of: usize) -> u64 {
    let (id, of) = (id as u64, of as u64);
    count / of + u64::from(id < count % of)
}

fn run_inner(a: GenArgs) -> Result<(), String> {
    let senders = a.cores;
    if !(1..=MAX_SENDERS).contains(&senders) {
        return Err(format!(
            "--cores {senders}: the number of senders must be 1 to {MAX_SENDERS}"
        ));
    }
    let cpus = nevermiss_runtime::workers::available_cpus();
    if !a.no_pin && senders > cpus.len() {
        return Err(format!(
            "--cores {senders}: only {} cpus to pin the senders to (or --no-pin)",
            cpus.len()
        ));
    }
    let duration = match (a.count, a.duration) {
        (Some(_), None) => None,
        (_, d) => Some(Duration::from_nanos(d.unwrap_or(1_000_000_000))),
    };
    let count = a.count.unwrap_or(u64::MAX);
    let fixed = a.size.map(usize::from);
    // The source is checked here (each sender opens its own); the generator derives its keys
    // from the count: a bounded one keeps them in 32 bits.
    let source_count = count.min(1 << 31);
    source(&a.source, source_count)?;
    let mut txs = Vec::with_capacity(senders);
    for _ in 0..senders {
        txs.push(AfPacketPort::open_tx(0, &a.tx).map_err(|e| format!("--tx: {e}"))?);
    }
    let rx = match &a.rx {
        Some(name) => Some(AfPacketPort::open(1, name).map_err(|e| format!("--rx: {e}"))?),
        None => None,
    };
    let hz = tsc::calibrate(Duration::from_millis(60));
    let pps = match a.rate {
        Rate::Pps(p) => Some(p),
        // On the frame's bytes plus Ethernet's preamble, start delimiter and gap (20 bytes).
        Rate::Bps(b) => Some(b / ((fixed.unwrap_or(84) + 20) * 8) as f64),
        Rate::Max => None,
    };
    let receiver = rx.map(|port| Receiver::spawn(port, senders, hz));
    let plan: Vec<(Sender, AfPacketPort)> = txs
        .into_iter()
        .enumerate()
        .map(|(id, tx)| {
            let s = Sender {
                id,
                of: senders,
                count: share(count, id, senders),
                pps: pps.map(|p| p / senders as f64),
                duration,
                fixed,
                spec: a.source.clone(),
                source_count,
                cpu: (!a.no_pin).then(|| cpus[id]),
            };
            (s, tx)
        })
        .collect();
    let total = match Total::of(send_all(plan)) {
        Ok(t) => t,
        Err(e) => {
            if let Some(r) = &receiver {
                r.stop.store(true, Ordering::Relaxed);
            }
            return Err(e);
        }
    };
    let got = receiver.map(|r| r.drain_and_join(total.sent, Duration::from_nanos(a.drain)));
    report(&a, &total, got.as_ref())
}

/// The receiving thread on `--rx` and what it shares with the main thread.
struct Receiver {
    stop: Arc<AtomicBool>,
    /// Frames received so far.
    received: Arc<AtomicU64>,
    handle: std::thread::JoinHandle<Received>,
}

impl Receiver {
    /// Starts receiving on `port` the frames of `senders` senders, timing them by a TSC of
    /// `hz` ticks per second.
    fn spawn(port: AfPacketPort, senders: usize, hz: f64) -> Receiver {
        let stop = Arc::new(AtomicBool::new(false));
        let received = Arc::new(AtomicU64::new(0));
        let (s, r) = (stop.clone(), received.clone());
        let handle = std::thread::spawn(move || receive(port, senders, hz, &s, &r));
        Receiver {
            stop,
            received,
            handle,
        }
    }

    /// Waits until every one of `sent` frames is back, or nothing has come back for `drain`;
    /// then stops the thread and returns what it saw.
    fn drain_and_join(self, sent: u64, drain: Duration) -> Received {
        let (mut last, mut since) = (self.received.load(Ordering::Relaxed), Instant::now());
        while last < sent && since.elapsed() < drain {
            std::thread::sleep(Duration::from_millis(5));
            let now = self.received.load(Ordering::Relaxed);
            if now != last {
                (last, since) = (now, Instant::now());
            }
        }
        self.stop.store(true, Ordering::Relaxed);
        self.handle.join().unwrap_or_default()
    }
}

/// Receives stamped frames until `stop`: counts them (per sender's sequence: duplicates and
/// reordering) and records their latency.
fn receive(
    mut port: AfPacketPort,
    senders: usize,
    hz: f64,
    stop: &AtomicBool,
    received: &AtomicU64,
) -> Received {
    let mut r = Received {
        hist: hdrhistogram::Histogram::<u64>::new(3).ok(),
        ..Received::default()
    };
    let mut seqs: Vec<Sequence> = (0..senders).map(|_| Sequence::default()).collect();
    let mut b = Batch::with_capacity(BATCH_MAX);
    while !stop.load(Ordering::Relaxed) {
        b.clear();
        let n = port.rx_burst(&mut b).unwrap_or(0);
        if n == 0 {
            std::thread::sleep(Duration::from_micros(20));
            continue;
        }
        let now = tsc::stop();
        for p in b.as_slice() {
            let d = p.data();
            if d.len() < STAMP || &d[d.len() - STAMP..d.len() - 13] != MAGIC {
                continue;
            }
            let Some(sq) = seqs.get_mut(usize::from(d[d.len() - 13])) else {
                continue;
            };
            let t = &d[d.len() - 12..];
            let seq = u32::from_be_bytes([t[0], t[1], t[2], t[3]]);
            let sent = u64::from_be_bytes(t[4..12].try_into().unwrap_or([0; 8]));
            let word = seq as usize / 64;
            if sq.seen.len() <= word {
                sq.seen.resize(word + 1, 0);
            }
            if sq.seen[word] & (1 << (seq % 64)) != 0 {
                r.duplicates += 1;
                continue;
            }
            sq.seen[word] |= 1 << (seq % 64);
            r.frames += 1;
            received.store(r.frames, Ordering::Relaxed);
            if sq.last.is_some_and(|l| seq < l) {
                r.reordered += 1;
            }
            sq.last = Some(seq);
            let ns = (now.saturating_sub(sent) as f64 * 1e9 / hz) as u64;
            if let Some(h) = r.hist.as_mut() {
                let _ = h.record(ns.max(1));
            }
        }
    }
    r
}

/// Runs every sender on its own thread from a common start, printing a progress line per
/// second (the senders summed); each sender's result.
fn send_all(senders: Vec<(Sender, AfPacketPort)>) -> Vec<Result<Sent, String>> {
    let progress: Vec<AtomicU64> = (0..senders.len()).map(|_| AtomicU64::new(0)).collect();
    let start = Instant::now();
    std::thread::scope(|sc| {
        let handles: Vec<_> = senders
            .into_iter()
            .zip(&progress)
            .map(|((s, tx), progress)| sc.spawn(move || s.run(tx, progress, start)))
            .collect();
        let (mut last_progress, mut last_sent) = (start, 0u64);
        while !handles.iter().all(|h| h.is_finished()) {
            std::thread::sleep(Duration::from_millis(10));
            if last_progress.elapsed() >= Duration::from_secs(1) {
                let sent: u64 = progress.iter().map(|p| p.load(Ordering::Relaxed)).sum();
                let dt = last_progress.elapsed().as_secs_f64();
                eprintln!(
                    "{:.0} s: {} frames sent, {:.0} frames/s",
                    start.elapsed().as_secs_f64(),
                    sent,
                    (sent - last_sent) as f64 / dt
                );
                last_progress = Instant::now();
                last_sent = sent;
            }
        }
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("a sender thread panicked".into()))
            })
            .collect()
    })
}

/// What the senders sent together.
struct Total {
    sent: u64,
    bytes: u64,
    /// The longest a sender took.
    time: Duration,
    per_sender: Vec<u64>,
}

impl Total {
    /// The senders' results summed; the first error if any failed.
    fn of(results: Vec<Result<Sent, String>>) -> Result<Total, String> {
        let mut t = Total {
            sent: 0,
            bytes: 0,
            time: Duration::ZERO,
            per_sender: Vec::with_capacity(results.len()),
        };
        let mut failed = None;
        for r in results {
            match r {
                Ok(s) => {
                    t.sent += s.frames;
                    t.bytes += s.bytes;
                    t.time = t.time.max(s.elapsed);
                    t.per_sender.push(s.frames);
                }
                Err(e) => {
                    failed.get_or_insert(e);
                }
            }
        }
        match failed {
            Some(e) => Err(e),
            None => Ok(t),
        }
    }
}

/// Prints what was sent and, with `--rx`, received, and writes `--hdr` and `--json`.
fn report(a: &GenArgs, total: &Total, got: Option<&Received>) -> Result<(), String> {
    let (sent, send_time, senders) = (total.sent, total.time, total.per_sender.len());
    let rate = sent as f64 / send_time.as_secs_f64().max(1e-9);
    let size = total.bytes.checked_div(sent).unwrap_or(0);
    outln!(
        "sent {sent} frames of {size} B (mean) on {} in {:.3} s: {:.0} frames/s, {:.1} Mbit/s{}",
        a.tx,
        send_time.as_secs_f64(),
        rate,
        total.bytes as f64 * 8.0 / send_time.as_secs_f64().max(1e-9) / 1e6,
        if senders > 1 {
            format!(
                " ({senders} senders: {})",
                total
                    .per_sender
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(" + ")
            )
        } else {
            String::new()
        }
    );
    let mut report = json!({
        "tx": a.tx, "frames_sent": sent, "frame_bytes": size,
        "send_s": send_time.as_secs_f64(), "frames_per_s": rate,
        "senders": senders, "frames_sent_per_sender": total.per_sender,
    });
    if let (Some(r), Some(name)) = (got, &a.rx) {
        report_received(a, name, total, r, &mut report)?;
    }
    if let Some(p) = &a.json {
        let text = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
        std::fs::write(p, text).map_err(|e| format!("--json {}: {e}", p.display()))?;
    }
    Ok(())
}

/// Prints what came back on `name` (loss, reordering, duplicates, latency), adds it to the
/// JSON report and writes the `--hdr` log.
fn report_received(
    a: &GenArgs,
    name: &str,
    total: &Total,
    r: &Received,
    report: &mut serde_json::Value,
) -> Result<(), String> {
    let sent = total.sent;
    let lost = sent.saturating_sub(r.frames);
    outln!(
        "received {} on {name}: lost {lost} ({:.3}%), reordered {}, duplicates {}",
        r.frames,
        if sent > 0 {
            lost as f64 * 100.0 / sent as f64
        } else {
            0.0
        },
        r.reordered,
        r.duplicates
    );
    report["rx"] = json!(name);
    report["frames_received"] = json!(r.frames);
    report["frames_lost"] = json!(lost);
    report["reordered"] = json!(r.reordered);
    report["duplicates"] = json!(r.duplicates);
    let Some(h) = r.hist.as_ref().filter(|h| !h.is_empty()) else {
        return Ok(());
    };
    let q = |p: f64| h.value_at_quantile(p) as f64 / 1e3;
    outln!(
        "latency (µs): p50 {:.1}, p99 {:.1}, p99.9 {:.1}, max {:.1}",
        q(0.5),
        q(0.99),
        q(0.999),
        h.max() as f64 / 1e3
    );
    report["latency_ns"] = json!({
        "p50": h.value_at_quantile(0.5), "p99": h.value_at_quantile(0.99),
        "p99_9": h.value_at_quantile(0.999), "max": h.max(),
    });
    if let Some(path) = &a.hdr {
        nevermiss_bench::hdr::write_log(
            path,
            &[format!(
                "nevermiss gen: latency per frame, ns ({} -> {name})",
                a.tx
            )],
            &[nevermiss_bench::hdr::Interval {
                tag: "latency".into(),
                start: Duration::ZERO,
                duration: total.time,
                hist: h,
            }],
        )
        .map_err(|e| e.to_string())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{parse_rate, share, Rate};

    #[test]
    fn senders_share_the_count_exactly() {
        for count in [0u64, 1, 2, 3, 7, 4000, 4001] {
            for of in 1..=5usize {
                let shares: Vec<u64> = (0..of).map(|id| share(count, id, of)).collect();
                assert_eq!(shares.iter().sum::<u64>(), count, "{count} over {of}");
                for (id, s) in shares.iter().enumerate() {
                    let by_index = (0..count).filter(|i| *i % of as u64 == id as u64).count();
                    assert_eq!(*s, by_index as u64, "{count} over {of}, sender {id}");
                }
            }
        }
    }

    #[test]
    fn rates_parse_with_units() {
        assert_eq!(parse_rate("100000"), Ok(Rate::Pps(100000.0)));
        assert_eq!(parse_rate("250k"), Ok(Rate::Pps(250000.0)));
        assert_eq!(parse_rate("1Mpps"), Ok(Rate::Pps(1e6)));
        assert_eq!(parse_rate("1Gbit"), Ok(Rate::Bps(1e9)));
        assert_eq!(parse_rate("500mbit"), Ok(Rate::Bps(5e8)));
        assert_eq!(parse_rate("max"), Ok(Rate::Max));
        for bad in ["", "fast", "-5", "0", "1Tbit"] {
            assert!(parse_rate(bad).is_err(), "{bad}");
        }
    }
}
