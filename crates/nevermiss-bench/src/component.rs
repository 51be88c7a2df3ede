//! `nevermiss bench component`: the cost of any program against a baseline forwarder
//! (papers/004's component micro-benchmarks; papers/000 Eq. 3 and Eq. 4).
//!
//! Both programs see the same generated packets (the two-phase generator with any key field,
//! frame size and key count), each run builds fresh switches (the caller's `build` closures
//! compile the programs and load their entries), and the program's and the baseline's runs
//! alternate so that drifts of a shared machine hit both alike. Latency mode times each
//! packet's `Worker::process` in TSC ticks at batch 1; throughput mode runs batches on one
//! pinned core. Reported: medians over runs with min–max, and the differences of Eq. 4
//! (ticks per packet) and Eq. 3 (from packets/s).

use crate::error::BenchError;
use crate::hdr::HdrError;
use crate::latency::{new_hist, record};
use crate::model::{eq3_ticks, eq4_ticks, ticks_to_ns, Spread};
use crate::predict::{predict, Models, Prediction, Shape};
use crate::report::{Machine, Percentiles};
use crate::throughput::run_once as run_throughput;
use crate::traffic::Traffic;
use crate::{hdr, machine, tsc};
use hdrhistogram::Histogram;
use nevermiss_runtime::engine::profile::Block;
use nevermiss_runtime::run::table_reports;
use nevermiss_runtime::{Switch, Worker};
use p4_ir::ir::{MatchKind, Stmt};
use serde::Serialize;
use std::path::PathBuf;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Builds a fresh switch of a program (compiled, entries loaded).
pub type Build<'a> = dyn Fn() -> Result<Arc<Switch>, BuildFailed> + 'a;

/// Why the caller's builder could not build a switch (its own error, shown as it is).
pub type BuildFailed = Box<dyn std::error::Error + Send + Sync>;

/// The switches a component bench builds, fresh for every run.
pub struct Builds<'a> {
    /// The program measured.
    pub program: &'a Build<'a>,
    /// The baseline it is measured against.
    pub baseline: &'a Build<'a>,
    /// The program's profiling build (`Config::profile` with [`tsc::start`] as its clock),
    /// for the stage and table-lookup costs; `None`: no profile runs.
    pub profile: Option<&'a Build<'a>>,
}

/// What to measure.
#[derive(Clone, Debug, Serialize)]
pub struct ComponentConfig {
    /// The program measured (for the report).
    pub program: String,
    /// The baseline (for the report).
    pub baseline: String,
    /// The packets of every run.
    #[serde(skip)]
    pub traffic: Traffic,
    /// The generator spec as given (for the report; `None` with a capture file).
    pub gen_spec: Option<String>,
    /// The capture file of the traffic (for the report; `None` with the generator).
    pub pcap: Option<String>,
    /// Run the latency mode (batch 1, one core, TSC ticks per packet; Eq. 4).
    pub latency: bool,
    /// Run the throughput mode (batches of `batch` on one core, packets/s; Eq. 3).
    pub throughput: bool,
    /// Repetitions of each mode, program and baseline alternating.
    pub runs: usize,
    /// Throughput-mode batch size.
    pub batch: usize,
    /// Core counts of the throughput mode (Eq. 3 at the first).
    pub cores: Vec<usize>,
    /// Pin the throughput runs' worker threads to cores.
    pub pin: bool,
    /// Write HdrHistogram logs (ticks per packet, `program.packet.hlog`,
    /// `baseline.packet.hlog`) here.
    pub hdr_dir: Option<PathBuf>,
}

/// One quantile of the latency per packet, over all runs' packets.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Quantile {
    /// 0.5, 0.9, 0.99, 0.999.
    pub q: f64,
    /// The quantile's ticks (HdrHistogram, 3 significant digits).
    pub ticks: u64,
    /// The same in ns at the calibrated TSC frequency.
    pub ns: f64,
}

/// The quantiles the report gives.
pub const QUANTILES: [f64; 4] = [0.5, 0.9, 0.99, 0.999];

/// Packets/s at one core count.
#[derive(Clone, Debug, Serialize)]
pub struct CoresResult {
    /// Worker threads (one pinned per core).
    pub cores: usize,
    /// Packets/s of each run, as a spread over runs.
    pub pps: Option<Spread>,
    /// Worker CPU ns per packet.
    pub cpu_ns_per_packet: Option<Spread>,
}

/// One table of a program: what one run's packets did to it.
#[derive(Clone, Debug, Serialize)]
pub struct TableRow {
    /// The table's control-plane name.
    pub name: String,
    /// `exact`, `lpm`, `ternary`, `range`, `optional` (the widest of its keys) or `keyless`.
    pub match_kind: &'static str,
    /// Entries after the run.
    pub entries: u64,
    /// Applies in the run: hits + misses (a table counts every apply as one or the other).
    pub applies: u64,
    /// Applies that matched an entry.
    pub hits: u64,
    /// Applies that matched none (the default action ran).
    pub misses: u64,
    /// Entries the data plane added (add-on-miss).
    pub inserts: u64,
    /// Applies per packet of the run.
    pub applies_per_packet: f64,
    /// Profile runs: lookups generated code called into the runtime for, per run (a `const`
    /// table's hits are matched in generated code and not among them).
    pub lookups_timed: Option<u64>,
    /// Profile runs: ticks per timed lookup, the trimmed mean (20 % of each tail) over the
    /// packets that looked it up (spread over runs); the action runs in its control's code and is counted in that stage.
    pub lookup_ticks: Option<Spread>,
    /// `lookup_ticks` in ns at the calibrated TSC frequency.
    pub lookup_ns: Option<Spread>,
}

/// One program's figures.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Side {
    /// Median ticks per packet of each latency run, as a spread over runs.
    pub latency_median_ticks: Option<Spread>,
    /// Percentiles of all latency runs' packets together.
    pub latency_merged: Option<Percentiles>,
    /// p50, p90, p99, p99.9 of all latency runs' packets, in ticks and ns.
    pub latency_quantiles: Vec<Quantile>,
    /// Packets/s of each throughput run at the first core count, as a spread over runs.
    pub pps: Option<Spread>,
    /// Worker CPU ns per packet of those runs.
    pub cpu_ns_per_packet: Option<Spread>,
    /// Throughput at every core count.
    pub throughput: Vec<CoresResult>,
    /// Table entries after a run (summed over tables; the last run).
    pub table_entries: u64,
    /// Packets each latency run timed.
    pub packets_per_run: u64,
    /// Every table: applies, hits and misses of one run (the last latency run, else the last
    /// throughput run at the first core count).
    pub tables: Vec<TableRow>,
    /// Packets of that run.
    pub counted_packets: u64,
    /// Interpreter fallbacks of that run (`SwitchStats::fallbacks`; docs/jit.md "Fallbacks").
    pub fallbacks: u64,
    /// Fallbacks per packet of that run.
    pub fallbacks_per_packet: f64,
}

/// One block of the architecture in the profile runs.
#[derive(Clone, Debug, Serialize)]
pub struct StageRow {
    /// The parser's or control's name.
    pub block: String,
    /// `parser` or `control`.
    pub kind: &'static str,
    /// Runs of the block per packet.
    pub calls_per_packet: f64,
    /// Ticks a packet spent in the block: the trimmed mean (20 % of each tail) over the packets
    /// that ran it (spread over runs).
    pub ticks_per_packet: Spread,
    /// `ticks_per_packet` in ns at the calibrated TSC frequency.
    pub ns_per_packet: Spread,
}

/// The program's profiling build, measured in runs of its own (`Builds::profile`).
#[derive(Clone, Debug, Serialize)]
pub struct Stages {
    /// Profile runs (as many as `--runs`).
    pub runs: usize,
    /// Packets of each profile run.
    pub packets_per_run: u64,
    /// Ticks per packet (trimmed mean) of the whole `Worker::process` in the profiling build (higher
    /// than the plain build's: its clock reads, its blocks called one by one).
    pub total_ticks_per_packet: Spread,
    /// Every block that ran, in the order it first ran.
    pub blocks: Vec<StageRow>,
    /// What no block holds: the whole packet's figure minus each block's times its calls per
    /// packet (the frame's reset, the architecture's metadata, the output).
    pub rest_ticks_per_packet: Spread,
}

/// The report of a component bench; `schema` changes when fields change meaning.
#[derive(Clone, Debug, Serialize)]
pub struct ComponentReport {
    /// [`COMPONENT_SCHEMA`].
    pub schema: u32,
    /// What was measured, as asked.
    pub config: ComponentConfig,
    /// The machine the bench ran on (CPUs, architecture, OS, tick source and its frequency).
    pub machine: Machine,
    /// Milliseconds to build the program's switch (compile + load entries; median over runs).
    pub build_ms: f64,
    /// The program's figures.
    pub program: Side,
    /// The baseline's figures, measured alternating with the program's.
    pub baseline: Side,
    /// Eq. 4: median ticks per packet of the program minus the baseline's (per run pair).
    pub eq4_ticks: Option<Spread>,
    /// `eq4_ticks` in ns at the measured TSC frequency.
    pub eq4_ns: Option<Spread>,
    /// Eq. 3: f/r − f/r_baseline in ticks (per run pair, at the first core count).
    pub eq3_ticks: Option<Spread>,
    /// `eq3_ticks` in ns at the measured TSC frequency.
    pub eq3_ns: Option<Spread>,
    /// The profile runs (`None` without a profiling build).
    pub stages: Option<Stages>,
    /// The component models' prediction beside the measurement (with `--models` and the
    /// latency mode).
    pub prediction: Option<Prediction>,
    /// Wall time of the whole bench in seconds.
    pub wall_s: f64,
}

/// Schema version of [`ComponentReport`].
pub const COMPONENT_SCHEMA: u32 = 1;

fn latency_run(sw: &Arc<Switch>, traffic: &Traffic) -> Result<Histogram<u64>, BenchError> {
    let mut w = Worker::new(sw.clone(), 0);
    let mut h = new_hist();
    traffic.for_each(|p| {
        let t0 = tsc::start();
        w.process(p.data(), p.port, p.ts_ns);
        let t1 = tsc::stop();
        record(&mut h, t1.saturating_sub(t0));
        w.maintain();
    })?;
    Ok(h)
}

fn entries(sw: &Switch) -> u64 {
    table_reports(sw).iter().map(|t| t.entries as u64).sum()
}

/// The widest match kind of a table's keys (selectors are not matched).
fn match_kind(t: &p4_ir::Table) -> &'static str {
    let kinds: Vec<MatchKind> = t
        .keys
        .iter()
        .map(|k| k.kind)
        .filter(|k| *k != MatchKind::Selector)
        .collect();
    let has = |k: MatchKind| kinds.contains(&k);
    if kinds.is_empty() {
        "keyless"
    } else if has(MatchKind::Ternary) {
        "ternary"
    } else if has(MatchKind::Range) {
        "range"
    } else if has(MatchKind::Optional) {
        "optional"
    } else if has(MatchKind::Lpm) {
        "lpm"
    } else {
        "exact"
    }
}

/// Per table, what the `packets` packets of the run just finished on `sw` did to it, and the
/// switch's fallbacks (a fresh switch per run: its counters are the run's).
fn run_counts(sw: &Switch, packets: u64, side: &mut Side) {
    side.tables = sw
        .prog()
        .tables
        .iter()
        .zip(table_reports(sw))
        .map(|(td, r)| {
            let applies = r.stats.hits + r.stats.misses;
            TableRow {
                name: td.name.clone(),
                match_kind: match_kind(td),
                entries: r.entries as u64,
                applies,
                hits: r.stats.hits,
                misses: r.stats.misses,
                inserts: r.stats.inserts,
                applies_per_packet: applies as f64 / packets.max(1) as f64,
                lookups_timed: None,
                lookup_ticks: None,
                lookup_ns: None,
            }
        })
        .collect();
    side.counted_packets = packets;
    side.fallbacks = sw.stats().fallbacks.load(Relaxed);
    side.fallbacks_per_packet = side.fallbacks as f64 / packets.max(1) as f64;
}

/// `extract` statements of every parser of `prog`.
fn extracts(prog: &p4_ir::Program) -> u64 {
    let mut n = 0;
    for p in &prog.parsers {
        for st in &p.states {
            p4_ir::visit::nested(&st.body, &mut |s| {
                if matches!(s, Stmt::Extract { .. } | Stmt::ExtractNext { .. }) {
                    n += 1;
                }
            });
        }
    }
    n
}

/// A profile figure of one run: the trimmed mean of its packets' ticks
/// ([`crate::estimate::TRIM`] of each tail: a packet the machine descheduled does not move it,
/// and the counter's 10 ns step averages out), the median when too few packets ran it.
fn typical(h: &Histogram<u64>) -> f64 {
    crate::estimate::trimmed_mean(&crate::estimate::hist_values(h), crate::estimate::TRIM)
        .map_or(h.value_at_quantile(0.5) as f64, |e| e.value)
}

/// The profile runs: a fresh profiling build per run, every packet through `Worker::process`
/// at batch 1; per packet, the ticks each block and each table lookup took (the profile's
/// growth over the packet), as the [`typical`] figure of the packets that ran them.
fn profile_runs(
    cfg: &ComponentConfig,
    build: &Build<'_>,
    tsc_hz: f64,
    tables: &mut [TableRow],
    progress: &mut impl FnMut(&str),
) -> Result<Option<Stages>, BenchError> {
    let mut totals = Vec::new();
    let mut rests = Vec::new();
    // Per block (in the order first seen): name, kind, calls per packet, median ticks of each run.
    let mut blocks: Vec<(Block, String, &'static str, f64, Vec<f64>)> = Vec::new();
    let mut lookups: Vec<(u64, Vec<f64>)> = vec![(0, Vec::new()); tables.len()];
    let mut packets = 0;
    for run in 0..cfg.runs {
        let sw = build().map_err(BenchError::Build)?;
        let mut w = Worker::new(sw.clone(), 0);
        let Some(p) = w.profile() else {
            return Ok(None);
        };
        p.clear();
        let mut prev = p.clone();
        let mut whole = new_hist();
        let mut block_hists: Vec<Histogram<u64>> = Vec::new();
        let mut table_hists: Vec<Histogram<u64>> = (0..tables.len()).map(|_| new_hist()).collect();
        let mut n = 0u64;
        cfg.traffic.for_each(|p| {
            let t0 = tsc::start();
            w.process(p.data(), p.port, p.ts_ns);
            record(&mut whole, tsc::stop().saturating_sub(t0));
            n += 1;
            w.maintain();
            let Some(now) = w.profile() else { return };
            for (i, (_, t)) in now.blocks.iter().enumerate() {
                let before = prev.blocks.get(i).map_or(Default::default(), |b| b.1);
                if t.calls > before.calls {
                    if block_hists.len() <= i {
                        block_hists.resize_with(i + 1, new_hist);
                    }
                    record(&mut block_hists[i], t.ticks.wrapping_sub(before.ticks));
                }
            }
            for (i, t) in now.tables.iter().enumerate() {
                let before = prev.tables.get(i).copied().unwrap_or_default();
                let per_lookup = t
                    .ticks
                    .wrapping_sub(before.ticks)
                    .checked_div(t.calls - before.calls);
                if let (Some(x), Some(h)) = (per_lookup, table_hists.get_mut(i)) {
                    record(h, x);
                }
            }
            prev.clone_from(now);
        })?;
        packets = n;
        let per = |x: u64| x as f64 / n.max(1) as f64;
        let mut in_blocks = 0.0;
        for (i, (b, t)) in prev.blocks.iter().enumerate() {
            let (name, kind) = match *b {
                Block::Parser(i) => (
                    sw.prog().parsers.get(i as usize).map(|x| x.name.clone()),
                    "parser",
                ),
                Block::Control(i) => (
                    sw.prog().functions.get(i as usize).map(|x| x.name.clone()),
                    "control",
                ),
            };
            let row = match blocks.iter_mut().find(|x| x.0 == *b) {
                Some(r) => r,
                None => {
                    blocks.push((
                        *b,
                        name.unwrap_or_else(|| "?".into()),
                        kind,
                        per(t.calls),
                        Vec::new(),
                    ));
                    blocks
                        .last_mut()
                        .ok_or(BenchError::Internal("no block row"))?
                }
            };
            let med = block_hists
                .get(i)
                .map_or(0.0, |h| h.value_at_quantile(0.5) as f64);
            row.4.push(med);
            in_blocks += med * per(t.calls);
        }
        for (i, t) in prev.tables.iter().enumerate() {
            if let (Some(l), Some(h)) = (lookups.get_mut(i), table_hists.get(i)) {
                l.0 = t.calls;
                if t.calls > 0 {
                    l.1.push(typical(h));
                }
            }
        }
        let total = typical(&whole);
        totals.push(total);
        rests.push(total - in_blocks);
        progress(&format!(
            "profile run {}/{}: {total:.0} ticks per packet (trimmed mean)",
            run + 1,
            cfg.runs,
        ));
    }
    let ns = |s: Spread| s.map(|t| ticks_to_ns(t, tsc_hz));
    for (row, (calls, ticks)) in tables.iter_mut().zip(lookups) {
        row.lookups_timed = Some(calls);
        row.lookup_ticks = Spread::of(&ticks);
        row.lookup_ns = row.lookup_ticks.map(ns);
    }
    let spread = |v: &[f64]| Spread::of(v).unwrap_or_default();
    Ok(Some(Stages {
        runs: cfg.runs,
        packets_per_run: packets,
        total_ticks_per_packet: spread(&totals),
        blocks: blocks
            .into_iter()
            .map(|(_, block, kind, calls_per_packet, ticks)| StageRow {
                block,
                kind,
                calls_per_packet,
                ticks_per_packet: spread(&ticks),
                ns_per_packet: ns(spread(&ticks)),
            })
            .collect(),
        rest_ticks_per_packet: spread(&rests),
    }))
}

/// Runs the component bench; `progress` gets a line per run.
pub fn run(
    cfg: &ComponentConfig,
    builds: &Builds<'_>,
    models: Option<&Models>,
    mut progress: impl FnMut(&str),
) -> Result<ComponentReport, BenchError> {
    if cfg.runs == 0 {
        return Err(BenchError::Options("--runs must be at least 1".into()));
    }
    if !cfg.latency && !cfg.throughput {
        return Err(BenchError::Options(
            "nothing to measure: enable latency or throughput mode".into(),
        ));
    }
    if cfg.throughput {
        crate::check_cores(&cfg.cores).map_err(BenchError::Options)?;
    }
    if let Some(d) = &cfg.hdr_dir {
        hdr::prepare_dir(d)?;
    }
    let start = Instant::now();
    let tsc_hz = tsc::calibrate(Duration::from_millis(90));
    let overhead = tsc::overhead(10_000);
    // Index 0 is the baseline, 1 the program; runs alternate baseline, program.
    const WHO: [&str; 2] = ["baseline", "program"];
    let mut sides = [Side::default(), Side::default()];
    let mut build_ms = Vec::new();
    let mut build = |side: usize| -> Result<Arc<Switch>, BenchError> {
        if side == 0 {
            return (builds.baseline)().map_err(BenchError::Build);
        }
        let t = Instant::now();
        let sw = (builds.program)().map_err(BenchError::Build)?;
        build_ms.push(t.elapsed().as_secs_f64() * 1e3);
        Ok(sw)
    };
    let mut eq4 = Vec::new();
    let mut eq3 = Vec::new();
    if cfg.latency {
        let mut medians: [Vec<f64>; 2] = Default::default();
        let mut merged = [new_hist(), new_hist()];
        // Per side: (start, duration, histogram) of each run, for --hdr-dir.
        let mut intervals: [Vec<(Duration, Duration, Histogram<u64>)>; 2] = Default::default();
        for run in 0..cfg.runs {
            for side in 0..2 {
                let sw = build(side)?;
                let t = Instant::now();
                let h = latency_run(&sw, &cfg.traffic)?;
                sides[side].table_entries = entries(&sw);
                sides[side].packets_per_run = h.len();
                run_counts(&sw, h.len(), &mut sides[side]);
                let med = h.value_at_quantile(0.5) as f64;
                medians[side].push(med);
                merged[side].add(&h).map_err(HdrError::Add)?;
                progress(&format!(
                    "latency run {}/{} {}: median {med} ticks",
                    run + 1,
                    cfg.runs,
                    WHO[side]
                ));
                if cfg.hdr_dir.is_some() {
                    intervals[side].push((t.duration_since(start), t.elapsed(), h));
                }
            }
            eq4.push(eq4_ticks(medians[1][run], medians[0][run]));
        }
        for side in 0..2 {
            sides[side].latency_median_ticks = Spread::of(&medians[side]);
            sides[side].latency_merged = Some(Percentiles::of(&merged[side]));
            sides[side].latency_quantiles = QUANTILES
                .iter()
                .map(|&q| {
                    let ticks = merged[side].value_at_quantile(q);
                    Quantile {
                        q,
                        ticks,
                        ns: ticks_to_ns(ticks as f64, tsc_hz),
                    }
                })
                .collect();
        }
        if let Some(dir) = &cfg.hdr_dir {
            for (side, name) in [(1, &cfg.program), (0, &cfg.baseline)] {
                let ivs: Vec<hdr::Interval<'_>> = intervals[side]
                    .iter()
                    .enumerate()
                    .map(|(run, (start, duration, hist))| hdr::Interval {
                        tag: format!("run{run}"),
                        start: *start,
                        duration: *duration,
                        hist,
                    })
                    .collect();
                let who = WHO[side];
                hdr::write_log(
                    &dir.join(hdr::file_name(who, "packet")),
                    &[
                        format!("nevermiss bench component: {who} {name}"),
                        format!("TSC ticks per packet; tsc_hz {tsc_hz:.0}"),
                    ],
                    &ivs,
                )?;
            }
        }
    }
    if cfg.throughput {
        for (ci, &cores) in cfg.cores.iter().enumerate() {
            let w = cfg.traffic.workload(cores)?;
            let mut pps: [Vec<f64>; 2] = Default::default();
            let mut cpu: [Vec<f64>; 2] = Default::default();
            for run in 0..cfg.runs {
                for side in 0..2 {
                    let sw = build(side)?;
                    let r = run_throughput(&sw, &w, cfg.batch, cfg.pin)?;
                    sides[side].table_entries = entries(&sw);
                    if !cfg.latency && ci == 0 {
                        run_counts(&sw, r.packets1 + r.packets2, &mut sides[side]);
                    }
                    pps[side].push(r.pps_total());
                    cpu[side].push(r.cpu_ns_per_packet());
                    progress(&format!(
                        "throughput run {}/{} {}, {cores} core{}: {:.3} Mpps",
                        run + 1,
                        cfg.runs,
                        WHO[side],
                        if cores == 1 { "" } else { "s" },
                        r.pps_total() / 1e6
                    ));
                }
                if ci == 0 {
                    if let Some(c) = eq3_ticks(tsc_hz, pps[1][run], pps[0][run]) {
                        eq3.push(c);
                    }
                }
            }
            for side in 0..2 {
                let res = CoresResult {
                    cores,
                    pps: Spread::of(&pps[side]),
                    cpu_ns_per_packet: Spread::of(&cpu[side]),
                };
                if ci == 0 {
                    sides[side].pps = res.pps;
                    sides[side].cpu_ns_per_packet = res.cpu_ns_per_packet;
                }
                sides[side].throughput.push(res);
            }
        }
    }
    let [base, mut prog] = sides;
    let stages = match builds.profile {
        Some(b) => profile_runs(cfg, b, tsc_hz, &mut prog.tables, &mut progress)?,
        None => None,
    };
    let prediction = match (models, prog.latency_median_ticks, base.latency_median_ticks) {
        (Some(m), Some(p), Some(b)) => {
            let sw = (builds.program)().map_err(BenchError::Build)?;
            let shape = Shape {
                extracts: extracts(sw.prog()),
                tables: prog
                    .tables
                    .iter()
                    .filter(|t| t.match_kind != "keyless")
                    .map(|t| {
                        let comp = match t.match_kind {
                            "exact" => "exact-entries",
                            "lpm" => "lpm-entries",
                            _ => "ternary-entries",
                        };
                        (t.name.clone(), comp, t.entries, t.applies_per_packet)
                    })
                    .collect(),
            };
            Some(predict(
                m,
                &shape,
                ticks_to_ns(b.median, tsc_hz),
                ticks_to_ns(p.median, tsc_hz),
            ))
        }
        _ => None,
    };
    let eq4_ticks = Spread::of(&eq4);
    let eq3_ticks = Spread::of(&eq3);
    Ok(ComponentReport {
        schema: COMPONENT_SCHEMA,
        config: cfg.clone(),
        machine: machine(tsc_hz, overhead, tsc::resolution(100_000)),
        build_ms: Spread::of(&build_ms).map_or(0.0, |s| s.median),
        program: prog,
        baseline: base,
        eq4_ns: eq4_ticks.map(|s| s.map(|t| ticks_to_ns(t, tsc_hz))),
        eq4_ticks,
        eq3_ns: eq3_ticks.map(|s| s.map(|t| ticks_to_ns(t, tsc_hz))),
        eq3_ticks,
        stages,
        prediction,
        wall_s: start.elapsed().as_secs_f64(),
    })
}

impl ComponentReport {
    /// The report as text.
    pub fn render(&self) -> String {
        let f = self.machine.tsc_hz;
        let ns = |t: f64| ticks_to_ns(t, f);
        let mut s = String::new();
        s.push_str(
            "nevermiss bench component: a program's cost against a baseline (Eq. 3, Eq. 4)\n",
        );
        let traffic = match (&self.config.gen_spec, &self.config.pcap) {
            (_, Some(p)) => format!("pcap {p}"),
            (Some(g), None) => format!("gen {g}"),
            (None, None) => "-".into(),
        };
        s.push_str(&format!(
            "program:  {}\nbaseline: {}\ntraffic:  {traffic}\n",
            self.config.program, self.config.baseline
        ));
        s.push_str(&format!(
            "machine: rdtsc {:.1} MHz; {} runs each, program and baseline alternating; build {:.1} ms\n",
            f / 1e6,
            self.config.runs,
            self.build_ms
        ));
        let spread = |x: &Option<Spread>, digits: usize| match x {
            Some(s) => format!(
                "{:.d$} [{:.d$}..{:.d$}]",
                s.median,
                s.min,
                s.max,
                d = digits
            ),
            None => "-".into(),
        };
        if self.config.latency {
            s.push_str("latency (batch 1, ticks per packet: median over runs [min..max])\n");
            for (who, side) in [("baseline", &self.baseline), ("program", &self.program)] {
                let m = side.latency_merged.unwrap_or_default();
                s.push_str(&format!(
                    "  {who:<9} median {:>22}  p99 {:>6}  p99.9 {:>6}  ({} packets per run, {} entries)\n",
                    spread(&side.latency_median_ticks, 0),
                    m.p99,
                    m.p999,
                    side.packets_per_run,
                    side.table_entries
                ));
            }
            s.push_str("  percentiles of every run's packets, ticks (ns):\n");
            for (who, side) in [("baseline", &self.baseline), ("program", &self.program)] {
                let qs: Vec<String> = side
                    .latency_quantiles
                    .iter()
                    .map(|q| format!("p{} {} ({:.0})", q.q * 100.0, q.ticks, q.ns))
                    .collect();
                s.push_str(&format!("  {who:<9} {}\n", qs.join("  ")));
            }
            s.push_str(&format!(
                "  Eq. 4 cost: {} ticks = {} ns per packet\n",
                spread(&self.eq4_ticks, 0),
                spread(&self.eq4_ns, 1)
            ));
        }
        if self.config.throughput {
            s.push_str(&format!(
                "throughput (batch {}: Mpps median over runs [min..max])\n",
                self.config.batch
            ));
            for (who, side) in [("baseline", &self.baseline), ("program", &self.program)] {
                for c in &side.throughput {
                    s.push_str(&format!(
                        "  {who:<9} {} core{} {:>26} Mpps  cpu {} ns/packet\n",
                        c.cores,
                        if c.cores == 1 { " " } else { "s" },
                        spread(&c.pps.map(|x| x.map(|v| v / 1e6)), 3),
                        spread(&c.cpu_ns_per_packet, 1)
                    ));
                }
            }
            s.push_str(&format!(
                "  Eq. 3 cost ({} core{}): {} ticks = {} ns per packet\n",
                self.config.cores.first().copied().unwrap_or(1),
                if self.config.cores.first() == Some(&1) {
                    ""
                } else {
                    "s"
                },
                spread(&self.eq3_ticks, 0),
                spread(&self.eq3_ns, 1)
            ));
        }
        let p = &self.program;
        s.push_str(&format!(
            "interpreter fallbacks: {} per packet ({} in a run of {} packets); baseline {}\n",
            fmt_per(p.fallbacks_per_packet),
            p.fallbacks,
            p.counted_packets,
            fmt_per(self.baseline.fallbacks_per_packet)
        ));
        if !p.tables.is_empty() {
            s.push_str(
                "tables (one run; lookup: ticks (ns) per lookup the profile runs timed, trimmed mean)\n",
            );
            let w = p
                .tables
                .iter()
                .map(|t| t.name.len())
                .max()
                .unwrap_or(0)
                .max(5);
            s.push_str(&format!(
                "  {:<w$} {:<8} {:>8} {:>9} {:>9} {:>9} {:>8} {:>8}  {}\n",
                "table",
                "match",
                "entries",
                "applies",
                "hits",
                "misses",
                "/packet",
                "inserts",
                "lookup"
            ));
            for t in &p.tables {
                let lookup = match (t.lookup_ticks, t.lookup_ns, t.lookups_timed) {
                    (Some(k), Some(n), Some(c)) => {
                        format!("{:.0} ({:.1} ns) over {c}", k.median, n.median)
                    }
                    (None, _, Some(0)) if t.applies > 0 => "matched in generated code".into(),
                    _ => "-".into(),
                };
                s.push_str(&format!(
                    "  {:<w$} {:<8} {:>8} {:>9} {:>9} {:>9} {:>8.2} {:>8}  {lookup}\n",
                    t.name,
                    t.match_kind,
                    t.entries,
                    t.applies,
                    t.hits,
                    t.misses,
                    t.applies_per_packet,
                    t.inserts
                ));
            }
        }
        if let Some(st) = &self.stages {
            s.push_str(&format!(
                "stages (profiling build, {} separate runs of {} packets at batch 1; ticks per packet in each block, trimmed mean, \
                 median over runs; each figure holds one empty timed region, {} ticks):\n",
                st.runs, st.packets_per_run, self.machine.timer_overhead_ticks
            ));
            for b in &st.blocks {
                s.push_str(&format!(
                    "  {:<8} {:<32} {:>8.0} ticks {:>8.1} ns  ({:.2} calls per packet)\n",
                    b.kind,
                    b.block,
                    b.ticks_per_packet.median,
                    b.ns_per_packet.median,
                    b.calls_per_packet
                ));
            }
            s.push_str(&format!(
                "  {:<41} {:>8.0} ticks {:>8.1} ns\n  {:<41} {:>8.0} ticks {:>8.1} ns  (the plain build: {})\n",
                "rest (reset, metadata, output)",
                st.rest_ticks_per_packet.median,
                ns(st.rest_ticks_per_packet.median),
                "whole packet, profiling build",
                st.total_ticks_per_packet.median,
                ns(st.total_ticks_per_packet.median),
                p.latency_median_ticks.map_or("-".into(), |m| format!("median {:.0} ticks", m.median))
            ));
        }
        if let Some(pr) = &self.prediction {
            s.push_str(&format!(
                "component models ({}): predicted vs measured, ns per packet\n",
                pr.models
            ));
            let w = pr
                .terms
                .iter()
                .map(|t| t.what.len())
                .max()
                .unwrap_or(0)
                .max(17);
            s.push_str(&format!(
                "  {:<w$}   {:>10.1}\n",
                "baseline (measured)", pr.baseline_ns
            ));
            for t in &pr.terms {
                s.push_str(&format!(
                    "  + {:<w$} {:>10}  {} at x = {}, {:.2} per packet\n",
                    t.what,
                    t.ns.map_or("no model".into(), |v| format!("{v:.1}")),
                    t.component,
                    t.x,
                    t.times
                ));
            }
            s.push_str(&format!(
                "  predicted {:.1} ns, measured {:.1} ns: error {:+.1} %\n",
                pr.predicted_ns, pr.measured_ns, pr.error_pct
            ));
        }
        s.push_str(&format!("wall time: {:.1} s\n", self.wall_s));
        s
    }
}

/// A per-packet figure: whole numbers as they are, others with two decimals.
fn fmt_per(x: f64) -> String {
    if x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{build_switch, Scenario};
    use nevermiss_io::TwoPhaseConfig;

    #[test]
    fn a_table_program_costs_more_than_the_forwarder() {
        let gen = TwoPhaseConfig {
            m: 256,
            count: 2048,
            ..TwoPhaseConfig::default()
        };
        let cfg = ComponentConfig {
            program: "add-on-miss".into(),
            baseline: "forward".into(),
            traffic: Traffic::Gen(gen),
            gen_spec: Some("two-phase,m=256,count=2048".into()),
            pcap: None,
            latency: true,
            throughput: true,
            runs: 2,
            batch: 32,
            cores: vec![1],
            pin: false,
            hdr_dir: None,
        };
        let prog = || {
            build_switch(
                &Scenario::AddOnMiss.default_program(),
                1024,
                nevermiss_runtime::Engine::Jit,
            )
            .map_err(BuildFailed::from)
        };
        let base = || {
            build_switch(
                &Scenario::Forward.default_program(),
                1024,
                nevermiss_runtime::Engine::Jit,
            )
            .map_err(BuildFailed::from)
        };
        let builds = Builds {
            program: &prog,
            baseline: &base,
            profile: None,
        };
        let mut lines = 0;
        let rep = run(&cfg, &builds, None, |_| lines += 1).unwrap();
        assert_eq!(lines, 8, "2 runs × 2 modes × 2 programs");
        assert_eq!(rep.program.table_entries, 256);
        assert_eq!(rep.baseline.table_entries, 0);
        assert_eq!(rep.program.packets_per_run, 2048);
        // Every packet applies the one table: 256 inserting misses, then hits.
        let t = &rep.program.tables[0];
        assert_eq!((t.applies, t.misses, t.hits), (2048, 256, 2048 - 256));
        assert_eq!(t.inserts, 256);
        assert_eq!(rep.program.fallbacks, 0);
        assert!(rep.baseline.tables.is_empty());
        assert_eq!(rep.program.latency_quantiles.len(), 4);
        assert_eq!(rep.eq4_ticks.map(|_| ()), Some(()));
        assert!(rep.program.pps.unwrap().median > 0.0);
        let text = rep.render();
        assert!(
            text.contains("Eq. 4 cost") && text.contains("Eq. 3 cost"),
            "{text}"
        );
        let bad = ComponentConfig { runs: 0, ..cfg };
        assert!(run(&bad, &builds, None, |_| ()).is_err());
    }
}
