//! `nevermiss bench`: the methodology of papers/000 (§IV cost model, §V two-phase scenario,
//! §VI evaluation) run on nevermiss's own switch and built-in generator, with no NIC.
//!
//! - [`latency`]: batch 1, one core, TSC ticks per packet classified by what it did to the
//!   table (insert, hit, hit+update, forward only, …); Eq. 4 on class medians.
//! - [`throughput`]: batches of 32 on 1..N cores; packets/s per phase; Eq. 3.
//! - [`samples`]: per-packet ticks in packet order (`--samples`, a CSV).
//! - [`run`] sweeps insertion rates, table sizes and core counts, repeating every point, and
//!   returns a [`report::BenchReport`] (text shaped like Table III, JSON, HdrHistogram logs).
//!
//! Documentation of the flags, the output and the JSON schema: docs/bench.md.

#![deny(unsafe_code)]
#![deny(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod component;
pub mod error;
pub mod estimate;
pub mod hdr;
pub mod latency;
pub mod learn;
pub mod model;
pub mod p4rt;
pub mod report;
pub mod samples;
pub mod scenario;
pub mod throughput;
// unsafe: reading the TSC (`rdtsc`, `lfence`, `rdtscp`).
#[allow(unsafe_code)]
pub mod tsc;

pub use error::BenchError;
use hdr::HdrError;
use hdrhistogram::Histogram;
use model::{ticks_to_ns, Class, Spread};
use nevermiss_io::TwoPhaseConfig;
pub use nevermiss_runtime::Engine;
use report::*;
use scenario::{build_switch, table_size_for, Scenario};
use serde::Serialize;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Smallest table size (phase-1 keys) accepted: 2^10.
pub const MIN_M: u64 = 1 << 10;
/// Largest table size accepted: 2^22.
pub const MAX_M: u64 = 1 << 22;
/// Largest `--count` (phase-2 packets held in memory by a throughput run: ~260 B each).
pub const MAX_COUNT: u64 = 1 << 24;
/// Largest phase-2 packet count of one latency run (generated as it goes).
pub const MAX_PHASE2: u64 = 1 << 27;
/// Default `--samples-every`: the stride papers/000's latency plots use (a prime, so it does
/// not fall into step with an insertion rate r).
pub const SAMPLES_EVERY: u64 = 997;
/// Default `--samples-max`: rare phase-2 packets kept per point.
pub const SAMPLES_MAX: u64 = 10_000;

/// What to measure.
#[derive(Clone, Debug, Serialize)]
pub struct BenchConfig {
    /// Scenarios besides the baseline (which always runs).
    pub scenarios: Vec<Scenario>,
    /// Run the latency-optimized mode.
    pub latency: bool,
    /// Run the throughput-optimized mode.
    pub throughput: bool,
    /// Phase-1 keys (table entries) for Table IIIa and the rate sweep.
    pub m: u64,
    /// Insertion rates r of the sweep (every r-th phase-2 packet is a new key).
    pub rates: Vec<u64>,
    /// Table sizes m of the size sweep (powers of two).
    pub sizes: Vec<u64>,
    /// Core counts of the throughput sweep.
    pub cores: Vec<usize>,
    /// Phase-2 packets per run (at least; see `new_keys`).
    pub count: u64,
    /// Latency mode: at least this many new-key inserts per rate point (phase 2 grows to
    /// `r * new_keys` packets, up to `max_phase2`).
    pub new_keys: u64,
    /// Cap on phase-2 packets of one run.
    pub max_phase2: u64,
    /// Repetitions of every point.
    pub runs: usize,
    /// Batch size of the throughput mode.
    pub batch: usize,
    /// Pin throughput workers to CPUs.
    pub pin: bool,
    /// Generator seed.
    pub seed: u64,
    /// Program of the add-on-miss scenario (default: examples/pna-add-on-miss.p4).
    pub program: Option<PathBuf>,
    /// Write HdrHistogram logs here.
    pub hdr_dir: Option<PathBuf>,
    /// What runs the programs.
    #[serde(serialize_with = "engine_name")]
    pub engine: Engine,
    /// Write per-packet samples (CSV, docs/bench.md) of each latency point's first run here.
    pub samples: Option<PathBuf>,
    /// Samples: every this-many-th packet of a run.
    pub samples_every: u64,
    /// Samples: besides the stride, the phase-2 packets that are not lookups (new-key inserts),
    /// evenly thinned to at most this many per point.
    pub samples_max: u64,
}

fn engine_name<S: serde::Serializer>(e: &Engine, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(e.name())
}

impl Default for BenchConfig {
    fn default() -> BenchConfig {
        BenchConfig {
            scenarios: vec![Scenario::AddOnMiss, Scenario::Update],
            latency: true,
            throughput: true,
            m: 1 << 20,
            rates: vec![1, 10, 100, 1000, 10_000, 100_000],
            sizes: vec![1 << 10, 1 << 14, 1 << 18, 1 << 20],
            cores: (1..=nevermiss_runtime::workers::available_cpus().len()).collect(),
            count: 1 << 20,
            new_keys: 50,
            max_phase2: 1 << 23,
            runs: 5,
            batch: 32,
            pin: true,
            seed: 1,
            program: None,
            hdr_dir: None,
            engine: Engine::default(),
            samples: None,
            samples_every: SAMPLES_EVERY,
            samples_max: SAMPLES_MAX,
        }
    }
}

impl BenchConfig {
    /// A configuration small enough for a smoke test (seconds).
    pub fn quick() -> BenchConfig {
        BenchConfig {
            m: 1 << 10,
            rates: vec![1, 10, 100],
            sizes: vec![1 << 10, 1 << 12],
            count: 4096,
            new_keys: 10,
            max_phase2: 1 << 14,
            runs: 2,
            ..BenchConfig::default()
        }
    }

    /// Checks every figure; the message names the flag.
    pub fn validate(&self) -> Result<(), BenchError> {
        let bad = |text: String| Err(BenchError::Options(text));
        let check_m = |flag: &str, m: u64| {
            if (MIN_M..=MAX_M).contains(&m) {
                Ok(())
            } else {
                Err(BenchError::Options(format!(
                    "{flag} {m}: table size m must be 2^10..2^22 ({MIN_M}..{MAX_M})"
                )))
            }
        };
        check_m("--m", self.m)?;
        for &s in &self.sizes {
            check_m("--sizes", s)?;
            if !s.is_power_of_two() {
                return bad(format!("--sizes {s}: sizes must be powers of two"));
            }
        }
        if self.rates.is_empty() && self.sizes.is_empty() && self.scenarios.is_empty() {
            return bad("nothing to measure".into());
        }
        for &r in &self.rates {
            if r == 0 {
                return bad("--rates: an insertion rate must be at least 1 (every r-th packet is a new key)".into());
            }
        }
        if self.runs == 0 {
            return bad("--runs must be at least 1".into());
        }
        if self.count == 0 || self.count > MAX_COUNT {
            return bad(format!("--count {}: must be 1..={MAX_COUNT}", self.count));
        }
        if self.max_phase2 == 0 || self.max_phase2 > MAX_PHASE2 {
            return bad(format!(
                "--max-phase2 {}: must be 1..={MAX_PHASE2}",
                self.max_phase2
            ));
        }
        if !(1..=nevermiss_io::BATCH_MAX).contains(&self.batch) {
            return bad(format!(
                "--batch {}: must be 1..={}",
                self.batch,
                nevermiss_io::BATCH_MAX
            ));
        }
        let ncpu = nevermiss_runtime::workers::available_cpus().len();
        if self.throughput && self.cores.is_empty() {
            return bad("--cores: give at least one core count".into());
        }
        for &c in &self.cores {
            if c == 0 {
                return bad("--cores: a core count must be at least 1".into());
            }
            if c > ncpu {
                return bad(format!(
                    "--cores {c}: only {ncpu} cpus are available to this process"
                ));
            }
        }
        if !self.latency && !self.throughput {
            return bad("neither latency nor throughput mode selected".into());
        }
        if self.samples_every == 0 {
            return bad("--samples-every must be at least 1 (1 keeps every packet)".into());
        }
        if self.samples_max == 0 {
            return bad("--samples-max must be at least 1".into());
        }
        if let Some(p) = &self.program {
            if !self.scenarios.contains(&Scenario::AddOnMiss) {
                return bad(format!(
                    "--program {}: it replaces the add-on-miss scenario's program, which this run does not measure",
                    p.display()
                ));
            }
            if !p.is_file() {
                return bad(format!("--program {}: no such file", p.display()));
            }
            // The add-on-miss scenario measures inserts and hits: a program without an
            // add-on-miss table would print figures that mean nothing.
            let sw = build_switch(p, 1024, self.engine)
                .map_err(|e| BenchError::Options(format!("--program: {e}")))?;
            if !sw.tables().any(|t| t.spec().add_on_miss) {
                return bad(format!(
                    "--program {}: the program has no add-on-miss table (`add_on_miss = true`), \
                     so the add-on-miss scenario would measure no insert",
                    p.display()
                ));
            }
        }
        Ok(())
    }

    fn program(&self, s: Scenario) -> PathBuf {
        match (s, &self.program) {
            (Scenario::AddOnMiss, Some(p)) => p.clone(),
            _ => s.default_program(),
        }
    }

    fn gen(&self, m: u64, r: u64, phase2: u64) -> TwoPhaseConfig {
        TwoPhaseConfig {
            m,
            r,
            count: m + phase2,
            seed: self.seed,
            ..TwoPhaseConfig::default()
        }
    }

    /// The packets `--samples` keeps of a point with `new_keys` phase-2 inserts.
    fn sample_rule(&self, new_keys: u64) -> Option<latency::SampleRule> {
        self.samples.as_ref()?;
        Some(latency::SampleRule {
            every: self.samples_every,
            rare_every: new_keys.div_ceil(self.samples_max).max(1),
        })
    }

    /// Phase-2 packets of a latency point at rate `r` (0: none new).
    fn latency_phase2(&self, r: u64) -> u64 {
        if r == 0 {
            self.count
        } else {
            self.count
                .max(r.saturating_mul(self.new_keys))
                .min(self.max_phase2.max(self.count))
        }
    }
}

/// Per-run data kept until the end (for the HdrHistogram logs).
struct RunHists {
    scenario: Scenario,
    tag: String,
    start: Duration,
    duration: Duration,
    hists: Vec<Histogram<u64>>,
}

/// Machine facts.
pub(crate) fn machine(tsc_hz: f64, overhead: u64, resolution: u64) -> Machine {
    Machine {
        nproc: std::thread::available_parallelism().map_or(1, |n| n.get()),
        available_cpus: nevermiss_runtime::workers::available_cpus(),
        arch: std::env::consts::ARCH.into(),
        os: std::env::consts::OS.into(),
        tick_source: tsc::source().into(),
        tsc_hz,
        timer_overhead_ticks: overhead,
        tick_resolution_ticks: resolution,
    }
}

/// Runs the whole benchmark; `progress` gets a line per point (for stderr).
pub fn run(
    cfg: &BenchConfig,
    mut progress: impl FnMut(&str) + Send,
) -> Result<BenchReport, BenchError> {
    cfg.validate()?;
    if let Some(d) = &cfg.hdr_dir {
        hdr::prepare_dir(d)?;
    }
    let mut samples_out = match &cfg.samples {
        Some(p) => Some(samples::SamplesOut::create(p)?),
        None => None,
    };
    let t_start = Instant::now();
    let tsc_hz = tsc::calibrate(Duration::from_millis(90));
    let overhead = tsc::overhead(10_000);
    let mut rep = BenchReport {
        schema: SCHEMA_VERSION,
        config: cfg.clone(),
        machine: machine(tsc_hz, overhead, tsc::resolution(100_000)),
        ..BenchReport::default()
    };
    // The cost of loading: the add-on-miss program built once on this engine.
    let probe = build_switch(
        &cfg.program(Scenario::AddOnMiss),
        table_size_for(cfg.m),
        cfg.engine,
    )?;
    rep.compile_ms = probe.native_stats().map(|(ns, _)| ns as f64 / 1e6);
    drop(probe);
    let mut kept: Vec<RunHists> = Vec::new();
    let wants = |s: Scenario| cfg.scenarios.contains(&s);

    if cfg.latency {
        // Points: (scenario, m, r, role).
        let mut points: Vec<(Scenario, u64, u64, &'static str)> =
            vec![(Scenario::Forward, cfg.m, 0, "baseline")];
        if wants(Scenario::AddOnMiss) {
            points.push((Scenario::AddOnMiss, cfg.m, 0, "operations"));
        }
        if wants(Scenario::Update) {
            points.push((Scenario::Update, cfg.m, 0, "operations"));
        }
        if wants(Scenario::AddOnMiss) {
            for &r in &cfg.rates {
                points.push((Scenario::AddOnMiss, cfg.m, r, "rates"));
            }
            for &s in &cfg.sizes {
                if s != cfg.m {
                    points.push((Scenario::AddOnMiss, s, 0, "sizes"));
                }
            }
        }
        // A latency-mode thread pinned to the first available CPU.
        let cpu0 = nevermiss_runtime::workers::available_cpus()
            .first()
            .copied()
            .unwrap_or(0);
        let pin = cfg.pin;
        let results = std::thread::scope(|sc| {
            sc.spawn(|| -> Result<Vec<LatencyOut>, BenchError> {
                if pin {
                    nevermiss_runtime::workers::pin_current_thread(cpu0)?;
                }
                let mut out = Vec::new();
                for &(s, m, r, role) in &points {
                    progress(&format!("latency   {:<11} m={m} r={r} ({role})", s.name()));
                    out.push(latency_point(cfg, s, m, r, role, t_start)?);
                }
                Ok(out)
            })
            .join()
            .map_err(|_| BenchError::Panicked("the latency thread"))?
        })?;
        for (p, hs, samples) in results {
            if let Some(out) = &mut samples_out {
                out.write_point(p.scenario, p.m, p.r, &samples)?;
            }
            rep.latency.push(p);
            kept.extend(hs);
        }
        apply_eq4(&mut rep, tsc_hz);
    }

    if cfg.throughput {
        let mut points: Vec<(Scenario, u64, u64, usize, &'static str)> = Vec::new();
        for &c in &cfg.cores {
            points.push((Scenario::Forward, cfg.m, 0, c, "baseline"));
            if wants(Scenario::AddOnMiss) {
                points.push((Scenario::AddOnMiss, cfg.m, 0, c, "operations"));
            }
            if wants(Scenario::Update) {
                points.push((Scenario::Update, cfg.m, 0, c, "operations"));
            }
            if wants(Scenario::AddOnMiss) {
                for &r in &cfg.rates {
                    points.push((Scenario::AddOnMiss, cfg.m, r, c, "rates"));
                }
            }
        }
        if wants(Scenario::AddOnMiss) {
            for &s in &cfg.sizes {
                if s != cfg.m {
                    points.push((Scenario::Forward, s, 0, 1, "baseline-sizes"));
                    points.push((Scenario::AddOnMiss, s, 0, 1, "sizes"));
                }
            }
        }
        for (s, m, r, c, role) in points {
            progress(&format!(
                "throughput {:<11} m={m} r={r} cores={c} ({role})",
                s.name()
            ));
            rep.throughput
                .push(throughput_point(cfg, s, m, r, c, role)?);
        }
        apply_eq3(&mut rep, tsc_hz);
    }

    if let Some(dir) = &cfg.hdr_dir {
        rep.hdr_logs = write_hdr_logs(dir, &kept, tsc_hz)?;
    }
    if let Some(out) = samples_out {
        rep.samples_rows = Some(out.finish()?);
    }
    rep.wall_s = t_start.elapsed().as_secs_f64();
    Ok(rep)
}

/// A latency point, its runs' histograms and the first run's samples.
type LatencyOut = (LatencyPoint, Vec<RunHists>, Vec<latency::Sample>);

fn latency_point(
    cfg: &BenchConfig,
    s: Scenario,
    m: u64,
    r: u64,
    role: &str,
    t0: Instant,
) -> Result<LatencyOut, BenchError> {
    let phase2 = cfg.latency_phase2(r);
    let gen = cfg.gen(m, r, phase2);
    let new_keys = gen.new_keys();
    let size = table_size_for(m + new_keys);
    let mut runs = Vec::with_capacity(cfg.runs);
    let mut merged: Vec<Histogram<u64>> = Class::ALL.iter().map(|_| latency::new_hist()).collect();
    let mut medians: Vec<Vec<f64>> = vec![Vec::new(); Class::ALL.len()];
    let mut counts: Vec<Vec<u64>> = vec![Vec::new(); Class::ALL.len()];
    let mut entries = Vec::new();
    let mut full = Vec::new();
    let mut samples = Vec::new();
    let mut stages: Vec<latency::StageHists> = Vec::new();
    for k in 0..cfg.runs {
        let sw = build_switch(&cfg.program(s), size, cfg.engine)?;
        let start = t0.elapsed();
        let rule = if k == 0 {
            cfg.sample_rule(new_keys)
        } else {
            None
        };
        let mut run = latency::run_once(&sw, s, &gen, rule)?;
        if k == 0 {
            samples = std::mem::take(&mut run.samples);
        }
        let duration = t0.elapsed() - start;
        if s == Scenario::AddOnMiss && run.table_entries == 0 {
            return Err(BenchError::NoInserts(cfg.program(s)));
        }
        for c in Class::ALL {
            let h = &run.hists[c.index()];
            counts[c.index()].push(h.len());
            if !h.is_empty() {
                medians[c.index()].push(h.value_at_quantile(0.5) as f64);
                merged[c.index()].add(h).map_err(HdrError::Add)?;
            }
        }
        for st in &run.stages {
            latency::StageHists::merge_into(&mut stages, st);
        }
        entries.push(run.table_entries);
        full.push(run.inserts_full);
        runs.push(RunHists {
            scenario: s,
            tag: format!("m{m}-r{r}-run{k}"),
            start,
            duration,
            hists: run.hists,
        });
    }
    let mut classes = Vec::new();
    for c in Class::ALL {
        let h = &merged[c.index()];
        if h.is_empty() {
            continue;
        }
        let per_run: Vec<&Histogram<u64>> = runs.iter().map(|r| &r.hists[c.index()]).collect();
        classes.push(ClassResult {
            class: c,
            count: h.len(),
            count_per_run: counts[c.index()].clone(),
            median_ticks: Spread::of(&medians[c.index()]).unwrap_or_default(),
            merged: Percentiles::of(h),
            trimmed_ticks: estimate::over_runs(&per_run, estimate::TRIM),
            eq4_ticks: None,
            eq4_ns: None,
            eq4_trimmed_ticks: None,
            eq4_trimmed_ns: None,
        });
    }
    Ok((
        LatencyPoint {
            scenario: s,
            role: role.into(),
            m,
            r,
            phase1_packets: m,
            phase2_packets: phase2,
            new_keys,
            table_size: size,
            runs: cfg.runs,
            table_entries_per_run: entries,
            inserts_full_per_run: full,
            classes,
            stages: stage_rows(&stages),
        },
        runs,
        samples,
    ))
}

/// The report's rows of a point's stage histograms, most packets first.
fn stage_rows(stages: &[latency::StageHists]) -> Vec<StageRow> {
    let mut rows: Vec<StageRow> = stages
        .iter()
        .map(|s| {
            let median = |h: &Histogram<u64>| h.value_at_quantile(0.5);
            let mut path: Vec<(String, u64)> = nevermiss_tables::stamp::ALL
                .iter()
                .enumerate()
                .filter(|&(i, _)| s.passed & (1 << i) != 0)
                .map(|(i, (_, name))| (name.to_string(), median(&s.hists[i])))
                .collect();
            path.push((
                "end".into(),
                median(&s.hists[nevermiss_tables::stamp::STAGES]),
            ));
            StageRow {
                class: s.class,
                packets: s.packets(),
                median_ticks: s.median(),
                stages: path,
            }
        })
        .collect();
    rows.sort_by_key(|r| std::cmp::Reverse(r.packets));
    rows
}

/// Eq. 4: every class median minus the baseline's median (ticks and ns), the same on trimmed
/// means with their intervals, and Table III's ratios from those.
fn apply_eq4(rep: &mut BenchReport, f: f64) {
    let Some(base) = rep
        .latency
        .iter()
        .find(|p| p.scenario == Scenario::Forward)
        .and_then(|p| p.classes.iter().find(|c| c.class == Class::Forward))
    else {
        return;
    };
    let (base_median, base_trimmed) = (base.median_ticks.median, base.trimmed_ticks);
    rep.baseline_latency_ticks = Some(base_median);
    rep.baseline_trimmed_ticks = base_trimmed;
    for p in &mut rep.latency {
        for c in &mut p.classes {
            if c.class == Class::Forward {
                continue;
            }
            let d = c.median_ticks.map(|t| model::eq4_ticks(t, base_median));
            c.eq4_ticks = Some(d);
            c.eq4_ns = Some(d.map(|t| ticks_to_ns(t, f)));
            if let (Some(t), Some(b)) = (c.trimmed_ticks, base_trimmed) {
                let d = t.minus(b);
                c.eq4_trimmed_ticks = Some(d);
                c.eq4_trimmed_ns = (f > 0.0).then(|| d.scale(1e9 / f));
            }
        }
    }
    rep.table3_ratios = report::table3_ratios(rep);
}

fn throughput_point(
    cfg: &BenchConfig,
    s: Scenario,
    m: u64,
    r: u64,
    cores: usize,
    role: &str,
) -> Result<ThroughputPoint, BenchError> {
    let gen = cfg.gen(m, r, cfg.count);
    let size = table_size_for(m + gen.new_keys());
    let w = throughput::Workload::generate(&gen, cores)?;
    let (n1, n2) = w.lens();
    let mut p1 = Vec::new();
    let mut p2 = Vec::new();
    let mut tot = Vec::new();
    let mut cpu = Vec::new();
    let mut entries = Vec::new();
    let mut full = Vec::new();
    for _ in 0..cfg.runs {
        let sw = build_switch(&cfg.program(s), size, cfg.engine)?;
        let run = throughput::run_once(&sw, &w, cfg.batch, cfg.pin)?;
        p1.push(run.pps1());
        p2.push(run.pps2());
        tot.push(run.pps_total());
        cpu.push(run.cpu_ns_per_packet());
        entries.push(run.table_entries);
        full.push(run.inserts_full);
    }
    Ok(ThroughputPoint {
        scenario: s,
        role: role.into(),
        m,
        r,
        cores,
        batch: cfg.batch,
        phase1_packets: n1,
        phase2_packets: n2,
        new_keys: gen.new_keys(),
        table_size: size,
        runs: cfg.runs,
        pps_phase1: Spread::of(&p1).unwrap_or_default(),
        pps_phase2: Spread::of(&p2).unwrap_or_default(),
        pps_total: Spread::of(&tot).unwrap_or_default(),
        pps_total_per_run: tot,
        cpu_ns_per_packet: Spread::of(&cpu).unwrap_or_default(),
        table_entries_per_run: entries,
        inserts_full_per_run: full,
        eq3: None,
    })
}

/// Eq. 3 against the baseline with the same core count and table size.
fn apply_eq3(rep: &mut BenchReport, f: f64) {
    let bases: Vec<(u64, usize, [f64; 3])> = rep
        .throughput
        .iter()
        .filter(|p| p.scenario == Scenario::Forward)
        .map(|p| {
            (
                p.m,
                p.cores,
                [p.pps_phase1.median, p.pps_phase2.median, p.pps_total.median],
            )
        })
        .collect();
    for p in &mut rep.throughput {
        if p.scenario == Scenario::Forward {
            continue;
        }
        let Some((_, _, b)) = bases.iter().find(|(m, c, _)| *m == p.m && *c == p.cores) else {
            continue;
        };
        let e = |s: Spread, base: f64| -> Option<Eq3> {
            // Higher rate = lower cost: the range flips.
            let med = model::eq3_ticks(f, s.median, base)?;
            let lo = model::eq3_ticks(f, s.max, base)?;
            let hi = model::eq3_ticks(f, s.min, base)?;
            let ticks = Spread {
                median: med,
                min: lo,
                max: hi,
            };
            Some(Eq3 {
                baseline_pps: base,
                ns: ticks.map(|t| ticks_to_ns(t, f)),
                ticks,
            })
        };
        p.eq3 = Some(Eq3Phases {
            phase1: e(p.pps_phase1, b[0]),
            phase2: e(p.pps_phase2, b[1]),
            total: e(p.pps_total, b[2]),
        });
    }
}

fn write_hdr_logs(
    dir: &std::path::Path,
    kept: &[RunHists],
    f: f64,
) -> Result<Vec<HdrFile>, BenchError> {
    let mut files = Vec::new();
    for s in Scenario::ALL {
        for c in Class::ALL {
            let ivs: Vec<hdr::Interval<'_>> = kept
                .iter()
                .filter(|k| k.scenario == s && !k.hists[c.index()].is_empty())
                .map(|k| hdr::Interval {
                    tag: k.tag.clone(),
                    start: k.start,
                    duration: k.duration,
                    hist: &k.hists[c.index()],
                })
                .collect();
            if ivs.is_empty() {
                continue;
            }
            let name = hdr::file_name(s.name(), c.name());
            let comments = vec![
                format!(
                    "nevermiss bench: {} / {}: ticks per packet (latency mode, batch 1)",
                    s.name(),
                    c.name()
                ),
                format!("tick source {}, {:.0} ticks per second", tsc::source(), f),
                "interval tag: m<table keys>-r<insertion rate>-run<k>".to_string(),
            ];
            hdr::write_log(&dir.join(&name), &comments, &ivs)?;
            files.push(HdrFile {
                file: name,
                scenario: s,
                class: c,
                intervals: ivs.len(),
            });
        }
    }
    Ok(files)
}
