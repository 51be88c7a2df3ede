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
use crate::report::{Machine, Percentiles};
use crate::throughput::{run_once as run_throughput, Workload};
use crate::{hdr, machine, tsc};
use hdrhistogram::Histogram;
use nevermiss_io::{Batch, TwoPhaseConfig, TwoPhaseGen};
use nevermiss_runtime::run::table_reports;
use nevermiss_runtime::{Switch, Worker};
use serde::Serialize;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Builds a fresh switch of a program (compiled, entries loaded).
pub type Build<'a> = dyn Fn() -> Result<Arc<Switch>, BuildFailed> + 'a;

/// Why the caller's builder could not build a switch (its own error, shown as it is).
pub type BuildFailed = Box<dyn std::error::Error + Send + Sync>;

/// What to measure.
#[derive(Clone, Debug, Serialize)]
pub struct ComponentConfig {
    /// The program measured (for the report).
    pub program: String,
    /// The baseline (for the report).
    pub baseline: String,
    /// The generated packets of every run (`count` packets over `m` keys at `field`).
    #[serde(skip)]
    pub gen: TwoPhaseConfig,
    /// The generator spec as given (for the report).
    pub gen_spec: String,
    /// Run the latency mode (batch 1, one core, TSC ticks per packet; Eq. 4).
    pub latency: bool,
    /// Run the throughput mode (batches of `batch` on one core, packets/s; Eq. 3).
    pub throughput: bool,
    /// Repetitions of each mode, program and baseline alternating.
    pub runs: usize,
    /// Throughput-mode batch size.
    pub batch: usize,
    /// Pin the throughput run's worker thread to a core.
    pub pin: bool,
    /// Write HdrHistogram logs (ticks per packet, `program.packet.hlog`,
    /// `baseline.packet.hlog`) here.
    pub hdr_dir: Option<PathBuf>,
}

/// One program's figures.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Side {
    /// Median ticks per packet of each latency run, as a spread over runs.
    pub latency_median_ticks: Option<Spread>,
    /// Percentiles of all latency runs' packets together.
    pub latency_merged: Option<Percentiles>,
    /// Packets/s of each throughput run (one core), as a spread over runs.
    pub pps: Option<Spread>,
    /// Worker CPU ns per packet of the throughput runs.
    pub cpu_ns_per_packet: Option<Spread>,
    /// Table entries after a run (summed over tables; the last run).
    pub table_entries: u64,
    /// Packets each latency run timed.
    pub packets_per_run: u64,
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
    /// Eq. 3: f/r − f/r_baseline in ticks (per run pair).
    pub eq3_ticks: Option<Spread>,
    /// `eq3_ticks` in ns at the measured TSC frequency.
    pub eq3_ns: Option<Spread>,
    /// Wall time of the whole bench in seconds.
    pub wall_s: f64,
}

/// Schema version of [`ComponentReport`].
pub const COMPONENT_SCHEMA: u32 = 1;

fn latency_run(sw: &Arc<Switch>, gen_cfg: &TwoPhaseConfig) -> Result<Histogram<u64>, BenchError> {
    let mut gen = TwoPhaseGen::new(gen_cfg.clone())?;
    let mut w = Worker::new(sw.clone(), 0);
    let mut h = new_hist();
    let mut batch = Batch::with_capacity(nevermiss_io::BATCH_MAX);
    while !gen.is_done() {
        batch.clear();
        gen.fill(&mut batch);
        for p in batch.iter() {
            let t0 = tsc::start();
            w.process(p.data(), p.port, p.ts_ns);
            let t1 = tsc::stop();
            record(&mut h, t1.saturating_sub(t0));
            w.maintain();
        }
    }
    Ok(h)
}

fn entries(sw: &Switch) -> u64 {
    table_reports(sw).iter().map(|t| t.entries as u64).sum()
}

/// Runs the component bench; `progress` gets a line per run.
pub fn run(
    cfg: &ComponentConfig,
    build_program: &Build<'_>,
    build_baseline: &Build<'_>,
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
            return build_baseline().map_err(BenchError::Build);
        }
        let t = Instant::now();
        let sw = build_program().map_err(BenchError::Build)?;
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
                let h = latency_run(&sw, &cfg.gen)?;
                sides[side].table_entries = entries(&sw);
                sides[side].packets_per_run = h.len();
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
        let w = Workload::generate(&cfg.gen, 1)?;
        let mut pps: [Vec<f64>; 2] = Default::default();
        let mut cpu: [Vec<f64>; 2] = Default::default();
        for run in 0..cfg.runs {
            for side in 0..2 {
                let sw = build(side)?;
                let r = run_throughput(&sw, &w, cfg.batch, cfg.pin)?;
                sides[side].table_entries = entries(&sw);
                pps[side].push(r.pps_total());
                cpu[side].push(r.cpu_ns_per_packet());
                progress(&format!(
                    "throughput run {}/{} {}: {:.3} Mpps",
                    run + 1,
                    cfg.runs,
                    WHO[side],
                    r.pps_total() / 1e6
                ));
            }
            if let Some(c) = eq3_ticks(tsc_hz, pps[1][run], pps[0][run]) {
                eq3.push(c);
            }
        }
        for side in 0..2 {
            sides[side].pps = Spread::of(&pps[side]);
            sides[side].cpu_ns_per_packet = Spread::of(&cpu[side]);
        }
    }
    let [base, prog] = sides;
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
        wall_s: start.elapsed().as_secs_f64(),
    })
}

impl ComponentReport {
    /// The report as text.
    pub fn render(&self) -> String {
        let f = self.machine.tsc_hz;
        let mut s = String::new();
        s.push_str(
            "nevermiss bench component: a program's cost against a baseline (Eq. 3, Eq. 4)\n",
        );
        s.push_str(&format!(
            "program:  {}\nbaseline: {}\ntraffic:  {}\n",
            self.config.program, self.config.baseline, self.config.gen_spec
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
            s.push_str(&format!(
                "  Eq. 4 cost: {} ticks = {} ns per packet\n",
                spread(&self.eq4_ticks, 0),
                spread(&self.eq4_ns, 1)
            ));
        }
        if self.config.throughput {
            s.push_str(&format!(
                "throughput (batch {}, 1 core: Mpps median over runs [min..max])\n",
                self.config.batch
            ));
            for (who, side) in [("baseline", &self.baseline), ("program", &self.program)] {
                s.push_str(&format!(
                    "  {who:<9} {:>26} Mpps  cpu {} ns/packet\n",
                    spread(&side.pps.map(|x| x.map(|v| v / 1e6)), 3),
                    spread(&side.cpu_ns_per_packet, 1)
                ));
            }
            s.push_str(&format!(
                "  Eq. 3 cost: {} ticks = {} ns per packet\n",
                spread(&self.eq3_ticks, 0),
                spread(&self.eq3_ns, 1)
            ));
        }
        s.push_str(&format!("wall time: {:.1} s\n", self.wall_s));
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{build_switch, Scenario};

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
            gen,
            gen_spec: "two-phase,m=256,count=2048".into(),
            latency: true,
            throughput: true,
            runs: 2,
            batch: 32,
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
        let mut lines = 0;
        let rep = run(&cfg, &prog, &base, |_| lines += 1).unwrap();
        assert_eq!(lines, 8, "2 runs × 2 modes × 2 programs");
        assert_eq!(rep.program.table_entries, 256);
        assert_eq!(rep.baseline.table_entries, 0);
        assert_eq!(rep.program.packets_per_run, 2048);
        assert_eq!(rep.eq4_ticks.map(|_| ()), Some(()));
        assert!(rep.program.pps.unwrap().median > 0.0);
        let text = rep.render();
        assert!(
            text.contains("Eq. 4 cost") && text.contains("Eq. 3 cost"),
            "{text}"
        );
        let bad = ComponentConfig { runs: 0, ..cfg };
        assert!(run(&bad, &prog, &base, |_| ()).is_err());
    }
}
