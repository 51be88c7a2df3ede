//! `nevermiss gen --tx IFACE [--rx IFACE]`: sends the built-in generator's traffic (or a
//! capture's) to an interface at a chosen rate, each frame stamped with a sequence number and
//! the TSC at its send; listening on `--rx` it reports what came back: received, lost,
//! reordered, and per-packet latency percentiles (papers/000's MoonGen setup, on one machine;
//! docs/io.md "Traffic generator").
//!
//! The stamp is the frame's last 16 bytes: `NMGN`, the sequence number (u32) and the TSC (u64),
//! big-endian; frames are at least 64 bytes (padded, or `--size`) so the stamp never overlaps
//! the headers a program rewrites. Generated frames get the Ethernet source 02:00:00:00:00:01
//! (the generator writes one address as both). Latency = TSC at receive − TSC at send, in ns by the TSC's
//! calibrated frequency.

use crate::flags::duration_ns;
use clap::Args;
use nevermiss_bench::tsc;
use nevermiss_io::afpacket::AfPacketPort;
use nevermiss_io::port::{PcapPort, Port, PortSpec};
use nevermiss_io::{Batch, BATCH_MAX};
use serde_json::json;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const MAGIC: &[u8; 4] = b"NMGN";
const STAMP: usize = 16;

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

fn run_inner(a: GenArgs) -> Result<(), String> {
    let duration = match (a.count, a.duration) {
        (Some(_), None) => None,
        (_, d) => Some(Duration::from_nanos(d.unwrap_or(1_000_000_000))),
    };
    let count = a.count.unwrap_or(u64::MAX);
    let fixed = a.size.map(usize::from);
    // The generator derives its keys from the count: a bounded one keeps them in 32 bits.
    let mut src = source(&a.source, count.min(1 << 31))?;
    let mut tx = AfPacketPort::open_tx(0, &a.tx).map_err(|e| format!("--tx: {e}"))?;
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
    let stop_rx = Arc::new(AtomicBool::new(false));
    let received = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let receiver = rx.map(|mut port| {
        let stop = stop_rx.clone();
        let received = received.clone();
        std::thread::spawn(move || -> Received {
            let mut r = Received {
                hist: hdrhistogram::Histogram::<u64>::new(3).ok(),
                ..Received::default()
            };
            let mut seen: Vec<u64> = Vec::new();
            let mut last = None::<u32>;
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
                    if d.len() < STAMP || &d[d.len() - STAMP..d.len() - 12] != MAGIC {
                        continue;
                    }
                    let t = &d[d.len() - 12..];
                    let seq = u32::from_be_bytes([t[0], t[1], t[2], t[3]]);
                    let sent = u64::from_be_bytes(t[4..12].try_into().unwrap_or([0; 8]));
                    let word = seq as usize / 64;
                    if seen.len() <= word {
                        seen.resize(word + 1, 0);
                    }
                    if seen[word] & (1 << (seq % 64)) != 0 {
                        r.duplicates += 1;
                        continue;
                    }
                    seen[word] |= 1 << (seq % 64);
                    r.frames += 1;
                    received.store(r.frames, Ordering::Relaxed);
                    if last.is_some_and(|l| seq < l) {
                        r.reordered += 1;
                    }
                    last = Some(seq);
                    let ns = (now.saturating_sub(sent) as f64 * 1e9 / hz) as u64;
                    if let Some(h) = r.hist.as_mut() {
                        let _ = h.record(ns.max(1));
                    }
                }
            }
            r
        })
    });
    let mut sent = 0u64;
    let mut sent_bytes = 0u64;
    let mut seq = 0u32;
    let mut b = Batch::with_capacity(32);
    let mut out = Batch::with_capacity(32);
    let mut f: Vec<u8> = Vec::with_capacity(2048);
    let generated = !a.source.starts_with("pcap:");
    let start = Instant::now();
    let mut last_progress = start;
    let mut last_sent = 0u64;
    'send: while sent < count && duration.is_none_or(|d| start.elapsed() < d) {
        // Pacing: frame i is due at start + i / pps.
        let want = match pps {
            Some(p) => {
                let due = (start.elapsed().as_secs_f64() * p) as u64 + 1;
                due.saturating_sub(sent).min(32).min(count - sent)
            }
            None => 32u64.min(count - sent),
        };
        if want == 0 {
            std::hint::spin_loop();
            continue;
        }
        b.clear();
        b.set_capacity(want as usize);
        let n = src.rx_burst(&mut b).map_err(|e| format!("--source: {e}"))?;
        if n == 0 {
            if src.rx_done() {
                if a.source.starts_with("pcap:") {
                    src = source(&a.source, 0)?;
                    continue;
                }
                break 'send;
            }
            continue;
        }
        out.clear();
        for p in b.as_slice() {
            f.clear();
            f.extend_from_slice(p.data());
            let size = fixed.unwrap_or(f.len().max(64));
            f.resize(size, 0);
            if generated && size >= 12 {
                // The generator writes one address as source and destination; a distinct
                // source keeps learning bridges (and switches) from dropping the frames.
                f[6..12].copy_from_slice(&[0x02, 0, 0, 0, 0, 0x01]);
            }
            let t = tsc::stop();
            f[size - STAMP..size - 12].copy_from_slice(MAGIC);
            f[size - 12..size - 8].copy_from_slice(&seq.to_be_bytes());
            f[size - 8..].copy_from_slice(&t.to_be_bytes());
            seq = seq.wrapping_add(1);
            out.push(&f, 0, 0);
        }
        let taken = tx.tx(out.as_slice()).map_err(|e| format!("--tx: {e}"))?;
        sent += taken as u64;
        sent_bytes += out.as_slice()[..taken]
            .iter()
            .map(|p| p.len() as u64)
            .sum::<u64>();
        if last_progress.elapsed() >= Duration::from_secs(1) {
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
    tx.flush().map_err(|e| format!("--tx: {e}"))?;
    let send_time = start.elapsed();
    // Drain: until every frame is back, or nothing has come back for --drain.
    if receiver.is_some() {
        let (mut last, mut since) = (received.load(Ordering::Relaxed), Instant::now());
        while last < sent && since.elapsed() < Duration::from_nanos(a.drain) {
            std::thread::sleep(Duration::from_millis(5));
            let now = received.load(Ordering::Relaxed);
            if now != last {
                (last, since) = (now, Instant::now());
            }
        }
    }
    stop_rx.store(true, Ordering::Relaxed);
    let got = receiver.map(|h| h.join().unwrap_or_default());
    let rate = sent as f64 / send_time.as_secs_f64().max(1e-9);
    let size = sent_bytes.checked_div(sent).unwrap_or(0);
    outln!(
        "sent {sent} frames of {size} B (mean) on {} in {:.3} s: {:.0} frames/s, {:.1} Mbit/s",
        a.tx,
        send_time.as_secs_f64(),
        rate,
        sent_bytes as f64 * 8.0 / send_time.as_secs_f64().max(1e-9) / 1e6
    );
    let mut report = json!({
        "tx": a.tx, "frames_sent": sent, "frame_bytes": size,
        "send_s": send_time.as_secs_f64(), "frames_per_s": rate,
    });
    if let (Some(r), Some(name)) = (&got, &a.rx) {
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
        if let Some(h) = r.hist.as_ref().filter(|h| !h.is_empty()) {
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
                        duration: send_time,
                        hist: h,
                    }],
                )?;
            }
        }
    }
    if let Some(p) = &a.json {
        let text = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
        std::fs::write(p, text).map_err(|e| format!("--json {}: {e}", p.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{parse_rate, Rate};

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
