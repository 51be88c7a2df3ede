//! The pipeline's arrival model and the division of a trace into batches.
//!
//! Reference A.4: a packet takes `ceil(iplen/chunk)` clock cycles to read (at least 1); the
//! simulator runs `ceil(iplen/chunk) - 1` cycles with no arrival and then, in the next cycle,
//! the packet arrives. With the default back-to-back model trace timestamps are ignored.
//! Reference A.5: batches of 100 000 packets; opp-sim resets its cycle counter after each batch
//! while scheduler state carries over, and drops a final incomplete batch.

use crate::error::ParseError;
use crate::trace::Trace;
use serde::Serialize;

/// Cycles to read a packet of IP length `len` in chunks of `chunk` bytes: `max(1, ceil(len/chunk))`
/// (opp-sim: `if 0 < read_chunk < iplen: extra = ceil(iplen/read_chunk) - 1`). A chunk of 0
/// reads any packet in one cycle.
pub fn read_cycles(len: u16, chunk: u32) -> u32 {
    let len = u32::from(len);
    if chunk == 0 || len <= chunk {
        1
    } else {
        len.div_ceil(chunk)
    }
}

/// Parses a rate in bit/s with an optional k/M/G/T suffix (powers of 1000), e.g. `640G`.
pub fn parse_rate(s: &str) -> Result<f64, ParseError> {
    let t = s.trim().trim_end_matches("bps").trim_end_matches("b/s");
    let (num, mult) = match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 1e3),
        Some('M') => (&t[..t.len() - 1], 1e6),
        Some('G' | 'g') => (&t[..t.len() - 1], 1e9),
        Some('T' | 't') => (&t[..t.len() - 1], 1e12),
        _ => (t, 1.0),
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| ParseError::NotRate(s.to_string()))?;
    let v = v * mult;
    if !(v.is_finite() && v > 0.0) {
        return Err(ParseError::NotPositiveRate(s.to_string()));
    }
    Ok(v)
}

/// When packets arrive.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub enum Timing {
    /// Back to back at line rate, timestamps ignored (opp-sim `clock_freq=0`, every CCR run).
    BackToBack,
    /// Trace timestamps on a clock of `clock_hz` (opp-sim `clock_freq > 0`): a packet arrives
    /// when it has been read and not before its timestamp (scaled by `time_scale`) relative to
    /// the batch's first packet.
    Timestamps {
        /// The pipeline's clock in Hz.
        clock_hz: f64,
        /// Factor applied to the trace's timestamps.
        time_scale: f64,
    },
}

/// Which packets form batches.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub enum SkipPolicy {
    /// Batches follow each other.
    None,
    /// Skip this many packets after each batch.
    Packets(u64),
    /// opp-sim's rule, Python 2 integer arithmetic included (`simulator.py`): after each batch
    /// skip `total * (10_000_000 // total)` packets, i.e. nothing for traces of more than 10 M
    /// packets and the whole rest otherwise, and stop when `next + batch >= total`.
    OppSim,
}

/// Batch parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct BatchConfig {
    /// Packets per batch (opp-sim `MAX_PKT_REPORT_COUNT` = 100 000).
    pub size: u32,
    /// At most this many batches per trace (opp-sim `max_samples` = 5).
    pub max_batches: Option<u32>,
    /// Which packets are skipped between batches.
    pub skip: SkipPolicy,
    /// Also report a final batch with fewer than `size` packets (opp-sim drops it).
    pub keep_partial: bool,
}

impl Default for BatchConfig {
    fn default() -> Self {
        BatchConfig {
            size: 100_000,
            max_batches: None,
            skip: SkipPolicy::None,
            keep_partial: false,
        }
    }
}

impl BatchConfig {
    /// opp-sim's sampling: 5 batches at most, its skip rule.
    pub fn opp_sim() -> Self {
        BatchConfig {
            size: 100_000,
            max_batches: Some(5),
            skip: SkipPolicy::OppSim,
            keep_partial: false,
        }
    }
}

/// The pipeline model.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ModelConfig {
    /// Bytes read per clock cycle (80 in the paper).
    pub chunk: u32,
    /// When packets arrive.
    pub timing: Timing,
    /// How the trace is cut into batches.
    pub batch: BatchConfig,
}

impl Default for ModelConfig {
    fn default() -> Self {
        ModelConfig {
            chunk: 80,
            timing: Timing::BackToBack,
            batch: BatchConfig::default(),
        }
    }
}

/// One batch: packets `start..end` of the trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Batch {
    /// Index of the batch's first packet.
    pub start: usize,
    /// Index one past the batch's last packet.
    pub end: usize,
    /// Clock cycles of the batch: the sum of its packets' deltas.
    pub cycles: u64,
    /// Cycles spent reading packets (equal to `cycles` back to back).
    pub read_cycles: u64,
}

/// Arrival times and batches of a trace under a model.
#[derive(Clone, Debug)]
pub struct Schedule {
    /// Per packet, cycles from the previous simulated arrival to this one (≥ 1); saturates at
    /// `u32::MAX` for idle gaps longer than that (exact totals are in the batches).
    pub deltas: Vec<u32>,
    /// The batches, in trace order.
    pub batches: Vec<Batch>,
    /// The last batch has fewer packets than the batch size.
    pub last_partial: bool,
}

impl Schedule {
    /// Packets in all batches.
    pub fn packets(&self) -> u64 {
        self.batches.iter().map(|b| (b.end - b.start) as u64).sum()
    }
}

/// Computes arrivals and batches.
pub fn schedule(trace: &Trace, m: &ModelConfig) -> Schedule {
    let n = trace.len();
    let size = m.batch.size.max(1) as usize;
    let mut deltas = vec![0u32; n];
    let mut batches = Vec::new();
    let mut last_partial = false;
    let mut i = 0usize;
    let max_b = m.batch.max_batches.map_or(usize::MAX, |x| x as usize);
    while i < n && batches.len() < max_b {
        let end = (i + size).min(n);
        if end - i < size && !m.batch.keep_partial {
            break;
        }
        let mut cycles = 0u64;
        let mut read = 0u64;
        let mut clock = 0u64; // cycles executed since the batch began
        let start_ts = trace.ts_ns[i];
        for (j, slot) in deltas.iter_mut().enumerate().take(end).skip(i) {
            let rc = u64::from(read_cycles(trace.lens[j], m.chunk));
            let mut d = rc;
            if let Timing::Timestamps {
                clock_hz,
                time_scale,
            } = m.timing
            {
                if j > i {
                    let tick_ns = 1e9 / clock_hz;
                    let rel = trace.ts_ns[j].saturating_sub(start_ts) as f64 * time_scale;
                    let sim = clock as f64 * tick_ns;
                    if rel > sim {
                        d += ((rel - sim) / tick_ns).ceil() as u64;
                    }
                }
            }
            clock += d;
            cycles += d;
            read += rc;
            *slot = u32::try_from(d).unwrap_or(u32::MAX);
        }
        last_partial = end - i < size;
        batches.push(Batch {
            start: i,
            end,
            cycles,
            read_cycles: read,
        });
        i = end;
        match m.batch.skip {
            SkipPolicy::None => {}
            SkipPolicy::Packets(k) => i = i.saturating_add(k as usize),
            SkipPolicy::OppSim => {
                let step = 10_000_000 / n.max(1);
                i = i.saturating_add(n.saturating_mul(step));
                if i.saturating_add(size) >= n {
                    break;
                }
            }
        }
    }
    Schedule {
        deltas,
        batches,
        last_partial,
    }
}

/// A schedule of hand-written arrival deltas cut into batches of `batch` packets, every cycle a
/// read cycle (for the hand-computed tests of the detector and the locking scheme).
#[cfg(test)]
pub(crate) fn test_schedule(deltas: Vec<u32>, batch: usize) -> Schedule {
    let n = deltas.len();
    let batches = (0..n)
        .step_by(batch)
        .map(|s| {
            let e = (s + batch).min(n);
            let c = deltas[s..e].iter().map(|&d| u64::from(d)).sum();
            Batch {
                start: s,
                end: e,
                cycles: c,
                read_cycles: c,
            }
        })
        .collect();
    Schedule {
        deltas,
        batches,
        last_partial: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::TraceBuilder;

    fn trace(lens: &[u16], ts: &[u64]) -> Trace {
        let mut b = TraceBuilder::new("t", &[], Default::default());
        for (&l, &t) in lens.iter().zip(ts) {
            b.push_digests(l, t, &[]);
        }
        b.finish()
    }

    #[test]
    fn cycles() {
        assert_eq!(read_cycles(0, 80), 1);
        assert_eq!(read_cycles(80, 80), 1);
        assert_eq!(read_cycles(81, 80), 2);
        assert_eq!(read_cycles(1500, 80), 19);
        assert_eq!(read_cycles(1500, 0), 1);
    }

    #[test]
    fn rates() {
        assert_eq!(parse_rate("640G").unwrap(), 640e9);
        assert_eq!(parse_rate("10Gbps").unwrap(), 10e9);
        assert!(parse_rate("x").is_err());
        assert!(parse_rate("0").is_err());
    }

    #[test]
    fn batches_and_partial() {
        let t = trace(&[100; 7], &[0; 7]);
        let mut m = ModelConfig::default();
        m.batch.size = 3;
        let s = schedule(&t, &m);
        assert_eq!(s.batches.len(), 2);
        assert_eq!(
            s.batches[1],
            Batch {
                start: 3,
                end: 6,
                cycles: 6,
                read_cycles: 6
            }
        );
        m.batch.keep_partial = true;
        let s = schedule(&t, &m);
        assert_eq!(s.batches.len(), 3);
        assert!(s.last_partial);
        m.batch.skip = SkipPolicy::Packets(2);
        m.batch.keep_partial = false;
        let s = schedule(&t, &m);
        assert_eq!(
            s.batches.iter().map(|b| b.start).collect::<Vec<_>>(),
            vec![0]
        );
        m.batch.max_batches = Some(1);
        m.batch.skip = SkipPolicy::None;
        assert_eq!(schedule(&t, &m).batches.len(), 1);
    }

    #[test]
    fn opp_sim_skip_rule() {
        // fewer than 10 M packets: one batch, then everything is skipped
        let t = trace(&[40; 10], &[0; 10]);
        let m = ModelConfig {
            batch: BatchConfig {
                size: 2,
                ..BatchConfig::opp_sim()
            },
            ..Default::default()
        };
        assert_eq!(schedule(&t, &m).batches.len(), 1);
    }

    #[test]
    fn timestamps_add_idle_cycles() {
        // 1 GHz clock, 80 B chunks; packets at 0, 10 ns and 11 ns
        let t = trace(&[160, 80, 80], &[0, 10, 11]);
        let m = ModelConfig {
            timing: Timing::Timestamps {
                clock_hz: 1e9,
                time_scale: 1.0,
            },
            batch: BatchConfig {
                size: 3,
                ..Default::default()
            },
            ..Default::default()
        };
        let s = schedule(&t, &m);
        // first: 2 read cycles; second: clock=2, rel=10 -> 8 idle + 1; third: clock=11, rel=11 -> 1
        assert_eq!(s.deltas, vec![2, 9, 1]);
        assert_eq!(s.batches[0].cycles, 12);
        assert_eq!(s.batches[0].read_cycles, 4);
    }
}
