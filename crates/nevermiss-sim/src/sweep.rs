//! Aggregation over batches as the paper does, and parameter sweeps run in parallel.
//!
//! Aggregates (reference A.7, opp-sim `result_parser.py`), over all batches of all trace files:
//! FDH → 99th percentile; throughput → min (each batch capped at 1); 99th-percentile latency →
//! max (the paper plots it only where fewer than 3 batches had throughput < 0.99); queue max and
//! queue sum 99th percentiles → max; drop fraction → 99th percentile.
//! "Maximum N for a target throughput" (`parse_max_budget`): for each finite queue length, Q, W
//! and key, the largest swept N whose max-over-batches drop fraction is ≤ the tolerance; smaller
//! N are not required to pass.

use crate::hazard::{self, HazardBatch};
use crate::keys::KeySpec;
use crate::lock::{self, LockBatch, LockConfig};
use crate::model::{schedule, ModelConfig, Schedule};
use crate::stats::percentile;
use crate::trace::{HashMode, Trace};
use rayon::prelude::*;
use serde::Serialize;

/// A trace with its schedule under the model.
pub struct Prepared {
    /// The trace.
    pub trace: Trace,
    /// Its arrivals and batches.
    pub schedule: Schedule,
}

impl Prepared {
    /// Computes the schedule of `trace`.
    pub fn new(trace: Trace, model: &ModelConfig) -> Self {
        let schedule = schedule(&trace, model);
        Prepared { trace, schedule }
    }
}

/// Hazard-detector results of one key and N.
#[derive(Clone, Debug, Serialize)]
pub struct HazardRow {
    /// The flow key.
    pub key: String,
    /// Pipeline stages.
    pub n: u32,
    /// Batches the figures are over.
    pub batches: usize,
    /// 99th percentile over batches of hazard cycles / cycles (the paper's FDH).
    pub fdh_p99: Option<f64>,
    /// Mean over batches of the FDH.
    pub fdh_mean: Option<f64>,
    /// Largest FDH of a batch.
    pub fdh_max: Option<f64>,
    /// 99th percentile over batches of hazardous packets / packets.
    pub fdh_packets_p99: Option<f64>,
}

/// Locking-scheme results of one configuration.
#[derive(Clone, Debug, Serialize)]
pub struct LockRow {
    /// The flow key.
    pub key: String,
    /// Pipeline stages.
    pub n: u32,
    /// Queues.
    pub q: u32,
    /// Queue length or `inf`.
    pub qlen: String,
    /// Lock hash width in bits.
    pub w_bits: u8,
    /// Batches the figures are over.
    pub batches: usize,
    /// Min over batches of min(1, admitted/offered).
    pub thrpt_min: Option<f64>,
    /// Admitted over offered, all batches together.
    pub thrpt_overall: Option<f64>,
    /// 99th percentile over batches of the dropped fraction.
    pub drop_p99: Option<f64>,
    /// Largest dropped fraction of a batch.
    pub drop_max: Option<f64>,
    /// Max over batches of the per-batch 99th-percentile queueing latency (cycles).
    pub latency_p99_max: Option<f64>,
    /// True when fewer than 3 batches had throughput < 0.99 (the paper plots latency only then).
    pub latency_valid: bool,
    /// Largest queueing latency of any batch (cycles).
    pub latency_max: Option<f64>,
    /// Max over batches of the median queueing latency (cycles).
    pub latency_median_max: Option<f64>,
    /// Max over batches of the 99th percentile of the largest queue's occupancy.
    pub queue_max_p99_max: Option<f64>,
    /// Max over batches of the 99th percentile of the total backlog.
    pub queue_sum_p99_max: Option<f64>,
    /// Mean over batches of stall cycles / cycles.
    pub stall_fraction_mean: Option<f64>,
}

/// Largest N meeting a drop tolerance.
#[derive(Clone, Debug, Serialize)]
pub struct MaxNRow {
    /// The flow key.
    pub key: String,
    /// Queues.
    pub q: u32,
    /// Queue length (0 for infinite).
    pub qlen: u32,
    /// Lock hash width in bits.
    pub w_bits: u8,
    /// 1 - tolerance.
    pub target_throughput: f64,
    /// The drop tolerance met.
    pub drop_tolerance: f64,
    /// `None` when no swept N meets the tolerance.
    pub max_n: Option<u32>,
    /// At `max_n`: max over batches of the 99th-percentile queueing latency (cycles).
    pub latency_p99_max: Option<f64>,
    /// At `max_n`: max over batches of the 99th percentile of the largest queue's occupancy.
    pub queue_max_p99_max: Option<f64>,
    /// At `max_n`: max over batches of the 99th percentile of the total backlog.
    pub queue_sum_p99_max: Option<f64>,
}

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

fn max(v: impl Iterator<Item = f64>) -> Option<f64> {
    v.fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))))
}

fn min(v: impl Iterator<Item = f64>) -> Option<f64> {
    v.fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.min(x))))
}

/// Aggregates hazard batches (pooled over trace files) into one row per N.
pub fn hazard_rows(key: &KeySpec, batches: &[HazardBatch], max_n: u32) -> Vec<HazardRow> {
    (1..=max_n)
        .map(|n| {
            let f: Vec<f64> = batches.iter().map(|b| b.fdh(n)).collect();
            let fp: Vec<f64> = batches.iter().map(|b| b.fdh_packets(n)).collect();
            HazardRow {
                key: key.to_string(),
                n,
                batches: batches.len(),
                fdh_p99: percentile(&f, 0.99),
                fdh_mean: mean(&f),
                fdh_max: max(f.iter().copied()),
                fdh_packets_p99: percentile(&fp, 0.99),
            }
        })
        .collect()
}

/// Renders a queue length.
pub fn qlen_str(q: Option<u32>) -> String {
    q.map_or_else(|| "inf".to_string(), |x| x.to_string())
}

/// Aggregates lock batches (pooled over trace files) into one row.
pub fn lock_row(key: &KeySpec, cfg: &LockConfig, batches: &[LockBatch]) -> LockRow {
    let thr: Vec<f64> = batches.iter().map(|b| b.throughput().min(1.0)).collect();
    let drops: Vec<f64> = batches.iter().map(|b| b.drop_fraction()).collect();
    let offered: u64 = batches.iter().map(|b| b.packets).sum();
    let admitted: u64 = batches.iter().map(|b| b.admitted).sum();
    let low = thr.iter().filter(|&&t| t < 0.99).count();
    LockRow {
        key: key.to_string(),
        n: cfg.n,
        q: cfg.queues,
        qlen: qlen_str(cfg.qlen),
        w_bits: cfg.w_bits,
        batches: batches.len(),
        thrpt_min: min(thr.iter().copied()),
        thrpt_overall: (offered > 0).then(|| admitted as f64 / offered as f64),
        drop_p99: percentile(&drops, 0.99),
        drop_max: max(drops.iter().copied()),
        latency_p99_max: max(batches.iter().filter_map(|b| b.latency.map(|s| s.p99))),
        latency_valid: low < 3,
        latency_max: max(batches.iter().filter_map(|b| b.latency.map(|s| s.max))),
        latency_median_max: max(batches.iter().filter_map(|b| b.latency.map(|s| s.median))),
        queue_max_p99_max: max(batches.iter().filter_map(|b| b.queue_max.map(|s| s.p99))),
        queue_sum_p99_max: max(batches.iter().filter_map(|b| b.queue_sum.map(|s| s.p99))),
        stall_fraction_mean: mean(
            &batches
                .iter()
                .map(|b| b.stall_cycles as f64 / b.cycles as f64)
                .collect::<Vec<_>>(),
        ),
    }
}

/// "Maximum N for a target throughput" over lock rows (finite queues only).
pub fn max_n_rows(rows: &[LockRow], tolerances: &[f64]) -> Vec<MaxNRow> {
    let mut groups: Vec<(String, u32, u32, u8)> = Vec::new();
    for r in rows {
        let Ok(ql) = r.qlen.parse::<u32>() else {
            continue;
        };
        let g = (r.key.clone(), r.q, ql, r.w_bits);
        if !groups.contains(&g) {
            groups.push(g);
        }
    }
    let mut out = Vec::new();
    for (key, q, ql, w) in groups {
        for &tol in tolerances {
            let best = rows
                .iter()
                .filter(|r| r.key == key && r.q == q && r.qlen == ql.to_string() && r.w_bits == w)
                .filter(|r| r.drop_max.is_some_and(|d| d <= tol))
                .max_by_key(|r| r.n);
            out.push(MaxNRow {
                key: key.clone(),
                q,
                qlen: ql,
                w_bits: w,
                target_throughput: 1.0 - tol,
                drop_tolerance: tol,
                max_n: best.map(|r| r.n),
                latency_p99_max: best.and_then(|r| r.latency_p99_max),
                queue_max_p99_max: best.and_then(|r| r.queue_max_p99_max),
                queue_sum_p99_max: best.and_then(|r| r.queue_sum_p99_max),
            });
        }
    }
    out
}

/// Runs the hazard detector for `key` (which must be loaded in every trace) over all traces.
pub fn run_hazards(
    traces: &[Prepared],
    key: &KeySpec,
    hash: HashMode,
    max_n: u32,
    progress: &(dyn Fn(u64) + Sync),
) -> Vec<HazardBatch> {
    let mut all = Vec::new();
    for p in traces {
        let col = p.trace.column(key).expect("key loaded in trace");
        let b = match (&col.ids, hash) {
            (Some(ids), HashMode::Exact) => {
                hazard::detect(ids, &p.schedule, max_n, col.distinct, progress)
            }
            _ => hazard::detect(&col.crc, &p.schedule, max_n, 1 << 16, progress),
        };
        all.extend(b);
    }
    all
}

/// Runs the locking scheme for `key` over all traces.
pub fn run_lock(
    traces: &[Prepared],
    key: &KeySpec,
    cfg: &LockConfig,
    progress: &(dyn Fn(u64) + Sync),
) -> Vec<LockBatch> {
    let mut all = Vec::new();
    for p in traces {
        let col = p.trace.column(key).expect("key loaded in trace");
        all.extend(lock::simulate(&col.crc, &p.schedule, cfg, progress));
    }
    all
}

/// What a sweep covers.
#[derive(Clone, Debug, Serialize)]
pub struct SweepSpec {
    /// Flow keys.
    pub keys: Vec<KeySpec>,
    /// Pipeline stages N.
    pub ns: Vec<u32>,
    /// Queue counts Q.
    pub queues: Vec<u32>,
    /// Queue lengths (`None` = infinite).
    pub qlens: Vec<Option<u32>>,
    /// Lock hash widths W in bits.
    pub w_bits: Vec<u8>,
    /// Run the hazard detector.
    pub hazards: bool,
    /// Run the locking scheme.
    pub lock: bool,
    /// Drop tolerances for "maximum N" (0, 0.001, 0.01 = 100 %, 99.9 %, 99 % throughput).
    pub tolerances: Vec<f64>,
    /// How keys are compared.
    pub hash: HashMode,
}

/// Per-batch samples of one configuration (kept when asked for).
#[derive(Clone, Debug, Serialize)]
pub struct LockBatches {
    /// The flow key.
    pub key: String,
    /// The configuration.
    pub config: LockConfig,
    /// One entry per batch.
    pub batches: Vec<LockBatch>,
}

/// Per-batch hazard samples of one key.
#[derive(Clone, Debug, Serialize)]
pub struct HazardBatches {
    /// The flow key.
    pub key: String,
    /// One entry per batch.
    pub batches: Vec<HazardBatch>,
}

/// Everything a sweep produced.
#[derive(Clone, Debug, Serialize, Default)]
pub struct SweepResults {
    /// Hazard-detector rows, one per key and N.
    pub hazards: Vec<HazardRow>,
    /// Locking-scheme rows, one per configuration.
    pub lock: Vec<LockRow>,
    /// Largest N per drop tolerance.
    pub max_n: Vec<MaxNRow>,
    /// Per-batch hazard samples (when kept).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hazard_batches: Vec<HazardBatches>,
    /// Per-batch locking samples (when kept).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lock_batches: Vec<LockBatches>,
}

enum Job {
    Hazard(usize),
    Lock(usize, LockConfig),
}

impl SweepSpec {
    /// The lock configurations, in output order (key, Q, qlen, W, N).
    pub fn lock_configs(&self) -> Vec<(usize, LockConfig)> {
        let mut v = Vec::new();
        for k in 0..self.keys.len() {
            for &q in &self.queues {
                for &ql in &self.qlens {
                    for &w in &self.w_bits {
                        for &n in &self.ns {
                            v.push((
                                k,
                                LockConfig {
                                    n,
                                    queues: q,
                                    qlen: ql,
                                    w_bits: w,
                                },
                            ));
                        }
                    }
                }
            }
        }
        v
    }

    /// Units of work (packets simulated) the sweep will report to `progress`.
    pub fn work(&self, traces: &[Prepared]) -> u64 {
        let per: u64 = traces.iter().map(|p| p.schedule.packets()).sum();
        let jobs = if self.hazards { self.keys.len() } else { 0 }
            + if self.lock {
                self.lock_configs().len()
            } else {
                0
            };
        per * jobs as u64
    }

    /// Runs the sweep on the current rayon pool.
    pub fn run(
        &self,
        traces: &[Prepared],
        keep_batches: bool,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<SweepResults, crate::ConfigError> {
        for (_, c) in self.lock_configs() {
            c.validate()?;
        }
        let max_n = self.ns.iter().copied().max().unwrap_or(1);
        let mut jobs = Vec::new();
        if self.hazards {
            jobs.extend((0..self.keys.len()).map(Job::Hazard));
        }
        if self.lock {
            jobs.extend(
                self.lock_configs()
                    .into_iter()
                    .map(|(k, c)| Job::Lock(k, c)),
            );
        }
        enum Out {
            H(usize, Vec<HazardBatch>),
            L(usize, LockConfig, Vec<LockBatch>),
        }
        let outs: Vec<Out> = jobs
            .par_iter()
            .map(|j| match j {
                Job::Hazard(k) => Out::H(
                    *k,
                    run_hazards(traces, &self.keys[*k], self.hash, max_n, progress),
                ),
                Job::Lock(k, c) => Out::L(*k, *c, run_lock(traces, &self.keys[*k], c, progress)),
            })
            .collect();
        let mut res = SweepResults::default();
        for o in outs {
            match o {
                Out::H(k, b) => {
                    let key = &self.keys[k];
                    res.hazards.extend(
                        hazard_rows(key, &b, max_n)
                            .into_iter()
                            .filter(|r| self.ns.contains(&r.n)),
                    );
                    if keep_batches {
                        res.hazard_batches.push(HazardBatches {
                            key: key.to_string(),
                            batches: b,
                        });
                    }
                }
                Out::L(k, c, b) => {
                    let key = &self.keys[k];
                    res.lock.push(lock_row(key, &c, &b));
                    if keep_batches {
                        res.lock_batches.push(LockBatches {
                            key: key.to_string(),
                            config: c,
                            batches: b,
                        });
                    }
                }
            }
        }
        res.max_n = max_n_rows(&res.lock, &self.tolerances);
        Ok(res)
    }
}

/// Writes rows as CSV.
pub fn write_csv<T: Serialize>(path: &std::path::Path, rows: &[T]) -> Result<(), crate::SimError> {
    let io = |e: csv::Error| crate::SimError::io(path, e);
    let mut w = csv::Writer::from_path(path).map_err(io)?;
    for r in rows {
        w.serialize(r).map_err(io)?;
    }
    w.flush().map_err(|e| crate::SimError::io(path, e))
}

/// What a report says about one trace.
#[derive(Clone, Debug, Serialize)]
pub struct TraceSummary {
    /// The trace's label.
    pub name: String,
    /// Packets kept (IPv4 TCP/UDP).
    pub packets: usize,
    /// Complete batches (plus a partial one with `keep_partial`).
    pub batches: usize,
    /// Frames read and skipped.
    pub stats: crate::packet::ReadStats,
    /// Mean of max(1, ceil(len/chunk)).
    pub mean_read_cycles: f64,
}

impl TraceSummary {
    /// Summarises a prepared trace.
    pub fn of(p: &Prepared, chunk: u32) -> Self {
        let n = p.trace.len();
        let cyc: u64 = p
            .trace
            .lens
            .iter()
            .map(|&l| u64::from(crate::model::read_cycles(l, chunk)))
            .sum();
        TraceSummary {
            name: p.trace.name.clone(),
            packets: n,
            batches: p.schedule.batches.len(),
            stats: p.trace.stats.clone(),
            mean_read_cycles: if n == 0 { 0.0 } else { cyc as f64 / n as f64 },
        }
    }
}

/// The JSON document a sweep writes.
#[derive(Serialize)]
pub struct Report<'a> {
    /// The tool's name.
    pub tool: &'static str,
    /// The tool's version.
    pub version: &'static str,
    /// The arrival model.
    pub model: &'a ModelConfig,
    /// What was swept.
    pub sweep: &'a SweepSpec,
    /// One summary per trace.
    pub traces: Vec<TraceSummary>,
    /// The results.
    #[serde(flatten)]
    pub results: &'a SweepResults,
}

/// Writes any serialisable value as pretty JSON.
pub fn write_json<T: Serialize>(path: &std::path::Path, v: &T) -> Result<(), crate::SimError> {
    let f = std::fs::File::create(path).map_err(|e| crate::SimError::io(path, e))?;
    let mut w = std::io::BufWriter::new(f);
    serde_json::to_writer_pretty(&mut w, v).map_err(|e| crate::SimError::io(path, e))?;
    std::io::Write::flush(&mut w).map_err(|e| crate::SimError::io(path, e))
}

/// Runs `f` on a rayon pool of `threads` threads (all cores when `None`).
pub fn with_threads<R: Send>(
    threads: Option<usize>,
    f: impl FnOnce() -> R + Send,
) -> Result<R, crate::SimError> {
    match threads {
        None => Ok(f()),
        Some(n) => rayon::ThreadPoolBuilder::new()
            .num_threads(n.max(1))
            .build()
            .map(|p| p.install(f))
            .map_err(|error| crate::SimError::Threads { n, error }),
    }
}

/// Average number of distinct keys per window of `window` packets (the paper's "flows per 1 M
/// packets", Table 1); over the whole trace when it is shorter. Needs exact ids.
pub fn distinct_per_window(ids: &[u32], distinct: usize, window: usize) -> Option<f64> {
    if ids.is_empty() || window == 0 {
        return None;
    }
    let mut stamp = vec![u32::MAX; distinct.max(1)];
    let mut counts = Vec::new();
    for (w, chunk) in ids.chunks(window).enumerate() {
        if chunk.len() < window && w > 0 {
            break;
        }
        let mut c = 0u64;
        for &k in chunk {
            let s = &mut stamp[k as usize];
            if *s != w as u32 {
                *s = w as u32;
                c += 1;
            }
        }
        counts.push(c as f64);
    }
    mean(&counts)
}
