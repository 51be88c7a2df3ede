//! The results: JSON-serializable structs (schema in docs/bench.md) and the text report
//! shaped like papers/000 Table III.

use crate::estimate::{self, Estimate};
use crate::model::{ticks_to_ns, Class, Spread};
use crate::scenario::Scenario;
use crate::BenchConfig;
use hdrhistogram::Histogram;
use serde::Serialize;
use std::fmt::Write;

/// Version of the JSON layout; bumped on incompatible changes.
pub const SCHEMA_VERSION: u32 = 1;

/// Facts about the machine and the clock.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Machine {
    /// Logical CPUs the process may use (`std::thread::available_parallelism`).
    pub nproc: usize,
    /// The CPUs workers may be pinned to (the process's affinity mask), in order.
    pub available_cpus: Vec<usize>,
    /// The CPU architecture (`std::env::consts::ARCH`).
    pub arch: String,
    /// The operating system (`std::env::consts::OS`).
    pub os: String,
    /// `rdtsc` or `instant-ns`.
    pub tick_source: String,
    /// Ticks per second (calibrated against the monotonic clock).
    pub tsc_hz: f64,
    /// Median ticks of an empty timed region (cancels out of Eq. 4).
    pub timer_overhead_ticks: u64,
    /// Most frequent step of the counter between consecutive reads, in ticks.
    pub tick_resolution_ticks: u64,
}

/// Percentiles of a merged histogram (all runs of a point), in ticks.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Percentiles {
    /// The fewest ticks a packet took.
    pub min: u64,
    /// The 50th percentile.
    pub median: u64,
    /// The 99th percentile.
    pub p99: u64,
    /// The 99.9th percentile.
    pub p999: u64,
    /// The most ticks a packet took.
    pub max: u64,
    /// The mean ticks per packet.
    pub mean: f64,
}

impl Percentiles {
    /// Of `h`.
    pub fn of(h: &Histogram<u64>) -> Percentiles {
        Percentiles {
            min: h.min(),
            median: h.value_at_quantile(0.5),
            p99: h.value_at_quantile(0.99),
            p999: h.value_at_quantile(0.999),
            max: h.max(),
            mean: h.mean(),
        }
    }
}

/// One packet class of a latency point.
#[derive(Clone, Debug, Serialize)]
pub struct ClassResult {
    /// What the packets of this class did to the table.
    pub class: Class,
    /// Packets over all runs.
    pub count: u64,
    /// Packets of each run.
    pub count_per_run: Vec<u64>,
    /// Median ticks: median, min and max over the runs' medians.
    pub median_ticks: Spread,
    /// Over all runs' packets together.
    pub merged: Percentiles,
    /// Trimmed mean of the ticks per packet ([`estimate::TRIM`] of each tail) with its 95 %
    /// interval over the runs ([`estimate::over_runs`]).
    pub trimmed_ticks: Option<Estimate>,
    /// Eq. 4 (class median − baseline median), from the runs' medians.
    pub eq4_ticks: Option<Spread>,
    /// `eq4_ticks` in ns at the measured TSC frequency.
    pub eq4_ns: Option<Spread>,
    /// Eq. 4 on trimmed means (class − baseline), with its 95 % interval: resolves less than
    /// the counter's step, which the medians cannot.
    pub eq4_trimmed_ticks: Option<Estimate>,
    /// `eq4_trimmed_ticks` in ns at the measured TSC frequency.
    pub eq4_trimmed_ns: Option<Estimate>,
}

/// One of Table III's relative costs (what carries over between machines), as a ratio of
/// trimmed-mean Eq. 4 deltas with its 95 % interval.
#[derive(Clone, Debug, Serialize)]
pub struct Ratio {
    /// `insert / lookup`, `update / lookup` or `rare insert / insert`.
    pub name: String,
    /// What is divided by what, in words.
    pub what: String,
    /// The project's goal: the ratio at most this.
    pub goal_max: f64,
    /// The ratio with its standard error and 95 % interval (delta method).
    pub estimate: Estimate,
}

/// A latency-mode point.
#[derive(Clone, Debug, Serialize)]
pub struct LatencyPoint {
    /// The program measured (the forwarder is the baseline).
    pub scenario: Scenario,
    /// `baseline`, `operations` (Table IIIa), `rates` (Table IIIb), `sizes`.
    pub role: String,
    /// Keys of phase 1 (the table's entries after it; papers/000's m).
    pub m: u64,
    /// Phase 2's insertion rate: every `r`-th packet carries a new key (0: none; papers/000's r).
    pub r: u64,
    /// Packets of phase 1 per run (`m`).
    pub phase1_packets: u64,
    /// Packets of phase 2 per run.
    pub phase2_packets: u64,
    /// New keys in phase 2 (per run).
    pub new_keys: u64,
    /// FLOW_TABLE_SIZE the program was compiled with.
    pub table_size: u64,
    /// Runs of the point.
    pub runs: usize,
    /// Entries in the table after each run (m + new keys for add-on-miss).
    pub table_entries_per_run: Vec<u64>,
    /// Inserts of each run that failed because the table was full.
    pub inserts_full_per_run: Vec<u64>,
    /// One result per packet class that occurred, in [`Class::ALL`] order.
    pub classes: Vec<ClassResult>,
    /// Where the ticks went, stage by stage (only from a build with the `stage-stamps`
    /// feature), most packets first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stages: Vec<StageRow>,
}

/// The packets of one class that passed one set of stamped stages
/// (`nevermiss_tables::stamp`), over all runs of a point.
#[derive(Clone, Debug, Serialize)]
pub struct StageRow {
    /// What the packets did to the table.
    pub class: Class,
    /// Packets of the class that passed exactly these stages, over all runs.
    pub packets: u64,
    /// Median ticks per packet (of the stamped build).
    pub median_ticks: u64,
    /// The stages passed, in order, each with the median ticks from the stamp before it (the
    /// packet's start for the first); `end` is from the last stamp to the packet's end.
    pub stages: Vec<(String, u64)>,
}

impl LatencyPoint {
    /// The result of `c`, if any packet had it.
    pub fn class(&self, c: Class) -> Option<&ClassResult> {
        self.classes.iter().find(|x| x.class == c)
    }
}

/// Eq. 3 against the baseline's median packet rate.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Eq3 {
    /// The baseline's median packets/s (Eq. 3's r_baseline).
    pub baseline_pps: f64,
    /// c_avg = f/r − f/r_baseline in TSC ticks per packet (f: the TSC frequency), over the runs.
    pub ticks: Spread,
    /// The same in ns.
    pub ns: Spread,
}

/// Eq. 3 per phase and for both phases together.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Eq3Phases {
    /// Eq. 3 of phase 1 (the inserts).
    pub phase1: Option<Eq3>,
    /// Eq. 3 of phase 2 (lookups and new keys at rate r).
    pub phase2: Option<Eq3>,
    /// Eq. 3 of both phases together.
    pub total: Option<Eq3>,
}

/// A throughput-mode point.
#[derive(Clone, Debug, Serialize)]
pub struct ThroughputPoint {
    /// The program measured (the forwarder is the baseline).
    pub scenario: Scenario,
    /// `baseline`, `operations`, `rates`, `baseline-sizes`, `sizes`.
    pub role: String,
    /// Keys of phase 1 (papers/000's m).
    pub m: u64,
    /// Phase 2's insertion rate: every `r`-th packet carries a new key (0: none).
    pub r: u64,
    /// Worker threads, each with its own RSS-spread queue.
    pub cores: usize,
    /// Packets per batch a worker takes from its queue.
    pub batch: usize,
    /// Packets of phase 1 per run.
    pub phase1_packets: u64,
    /// Packets of phase 2 per run.
    pub phase2_packets: u64,
    /// New keys in phase 2 (per run).
    pub new_keys: u64,
    /// FLOW_TABLE_SIZE the program was compiled with.
    pub table_size: u64,
    /// Runs of the point.
    pub runs: usize,
    /// Packets/s: median and range over runs.
    pub pps_phase1: Spread,
    /// Packets/s of phase 2: median and range over runs.
    pub pps_phase2: Spread,
    /// Packets/s of both phases together: median and range over runs.
    pub pps_total: Spread,
    /// Packets/s of both phases of each run.
    pub pps_total_per_run: Vec<f64>,
    /// Worker CPU time per packet (ns), both phases: not inflated when another process of this
    /// machine takes a worker's CPU (the host's steal and cache contention still show).
    pub cpu_ns_per_packet: Spread,
    /// Entries in the table after each run.
    pub table_entries_per_run: Vec<u64>,
    /// Inserts of each run that failed because the table was full.
    pub inserts_full_per_run: Vec<u64>,
    /// Eq. 3 (absent for the baseline).
    pub eq3: Option<Eq3Phases>,
}

/// An HdrHistogram log written to `--hdr-dir`.
#[derive(Clone, Debug, Serialize)]
pub struct HdrFile {
    /// The log's path (`DIR/<scenario>.<class>.hlog`).
    pub file: String,
    /// The program its packets ran through.
    pub scenario: Scenario,
    /// The packet class it holds.
    pub class: Class,
    /// Intervals in it: one per run of each point.
    pub intervals: usize,
}

/// Everything `nevermiss bench` measured.
#[derive(Clone, Debug, Default, Serialize)]
pub struct BenchReport {
    /// [`SCHEMA_VERSION`].
    pub schema: u32,
    /// What was measured, as asked.
    pub config: BenchConfig,
    /// The machine and its clock.
    pub machine: Machine,
    /// Median ticks per packet of the forwarder (Eq. 4's t_baseline).
    pub baseline_latency_ticks: Option<f64>,
    /// Trimmed mean ticks per packet of the forwarder, with its interval.
    pub baseline_trimmed_ticks: Option<Estimate>,
    /// Table III's ratios on trimmed means (absent when a scenario was not run).
    pub table3_ratios: Vec<Ratio>,
    /// The latency-mode points, baseline first.
    pub latency: Vec<LatencyPoint>,
    /// The throughput-mode points, baseline first.
    pub throughput: Vec<ThroughputPoint>,
    /// The HdrHistogram logs written (empty without `--hdr-dir`).
    pub hdr_logs: Vec<HdrFile>,
    /// Time to compile the add-on-miss program to machine code (engine `jit`), ms.
    pub compile_ms: Option<f64>,
    /// Rows written to `--samples` (absent without it).
    pub samples_rows: Option<u64>,
    /// Wall time of the whole bench, seconds.
    pub wall_s: f64,
}

fn fmt_spread(s: &Spread, prec: usize) -> String {
    format!("{:.p$} [{:.p$}..{:.p$}]", s.median, s.min, s.max, p = prec)
}

fn mpps(s: &Spread) -> String {
    format!(
        "{:.3} [{:.3}..{:.3}]",
        s.median / 1e6,
        s.min / 1e6,
        s.max / 1e6
    )
}

/// Table III's ratios from `rep`'s trimmed-mean Eq. 4 deltas: insert / lookup and update /
/// lookup at m (r = 0), and the rarest rate's new-key insert / the densest rate's (papers/000
/// Table IIIb: a rare insert finds colder caches).
pub fn table3_ratios(rep: &BenchReport) -> Vec<Ratio> {
    let m = rep.config.m;
    let delta = |s: Scenario, role: &str, r: u64, c: Class| {
        rep.lat(s, role, m, r)
            .and_then(|p| p.class(c))
            .and_then(|x| x.eq4_trimmed_ticks)
    };
    let lookup = delta(Scenario::AddOnMiss, "operations", 0, Class::Hit);
    let mut out = Vec::new();
    let mut push =
        |name: &str, what: &str, goal_max: f64, a: Option<Estimate>, b: Option<Estimate>| {
            if let Some(e) = a.zip(b).and_then(|(a, b)| a.ratio(b)) {
                out.push(Ratio {
                    name: name.into(),
                    what: what.into(),
                    goal_max,
                    estimate: e,
                });
            }
        };
    push(
        "insert / lookup",
        "phase-1 insert / phase-2 hit, add-on-miss program",
        1.5,
        delta(Scenario::AddOnMiss, "operations", 0, Class::Insert),
        lookup,
    );
    push(
        "update / lookup",
        "hit that writes its entry (update program) / hit (add-on-miss program)",
        1.1,
        delta(Scenario::Update, "operations", 0, Class::HitUpdate),
        lookup,
    );
    let rates: Vec<u64> = rep
        .latency
        .iter()
        .filter(|p| p.role == "rates" && p.m == m && p.class(Class::NewKeyInsert).is_some())
        .map(|p| p.r)
        .collect();
    if let (Some(&lo), Some(&hi)) = (rates.iter().min(), rates.iter().max()) {
        if hi > lo {
            push(
                "rare insert / insert",
                &format!("new-key insert at r={hi} / at r={lo}"),
                1.5,
                delta(Scenario::AddOnMiss, "rates", hi, Class::NewKeyInsert),
                delta(Scenario::AddOnMiss, "rates", lo, Class::NewKeyInsert),
            );
        }
    }
    out
}

impl BenchReport {
    fn lat(&self, s: Scenario, role: &str, m: u64, r: u64) -> Option<&LatencyPoint> {
        self.latency
            .iter()
            .find(|p| p.scenario == s && p.role == role && p.m == m && p.r == r)
    }

    fn thr(&self, s: Scenario, m: u64, r: u64, cores: usize) -> Option<&ThroughputPoint> {
        self.throughput
            .iter()
            .find(|p| p.scenario == s && p.m == m && p.r == r && p.cores == cores)
    }

    /// The text report.
    pub fn render(&self) -> String {
        let mut o = String::new();
        let f = self.machine.tsc_hz;
        let c = &self.config;
        let _ = writeln!(
            o,
            "nevermiss bench: papers/000 cost model (Eq. 3, Eq. 4) on the built-in two-phase generator"
        );
        let _ = writeln!(
            o,
            "machine: {} cpus ({} available), {} {:.1} MHz (calibrated), counter step {} ticks, empty timed region {} ticks",
            self.machine.nproc,
            self.machine.available_cpus.len(),
            self.machine.tick_source,
            f / 1e6,
            self.machine.tick_resolution_ticks,
            self.machine.timer_overhead_ticks
        );
        let _ = writeln!(
            o,
            "config: m={} rates={:?} sizes={:?} cores={:?} phase-2 packets={} runs={} batch={}",
            c.m, c.rates, c.sizes, c.cores, c.count, c.runs, c.batch
        );
        match self.compile_ms {
            Some(ms) => {
                let _ = writeln!(
                    o,
                    "engine: {} (add-on-miss program compiled in {ms:.1} ms)",
                    c.engine.name()
                );
            }
            None => {
                let _ = writeln!(o, "engine: {}", c.engine.name());
            }
        }
        let _ = writeln!(
            o,
            "figures: median over runs [min..max over runs]; latencies in TSC ticks; ns = ticks / f"
        );
        if !self.latency.is_empty() {
            self.render_latency(&mut o, f);
        }
        if !self.throughput.is_empty() {
            self.render_throughput(&mut o);
        }
        if let (Some(rows), Some(path)) = (self.samples_rows, &c.samples) {
            let _ = writeln!(
                o,
                "\nper-packet samples: {rows} rows in {} (first run of each latency point)",
                path.display()
            );
        }
        let _ = writeln!(o, "\nwall time: {:.1} s", self.wall_s);
        o
    }

    fn class_row(o: &mut String, label: &str, cr: &ClassResult, f: f64) {
        let (dt, dn) = match (&cr.eq4_ticks, &cr.eq4_ns) {
            (Some(t), Some(n)) => (fmt_spread(t, 0), fmt_spread(n, 1)),
            _ => ("-".into(), "-".into()),
        };
        let p = &cr.merged;
        let _ = writeln!(
            o,
            "  {:<26} {:>9} {:>22} {:>24} {:>7} {:>7} {:>7} {:>9}  ({:.0} ns median)",
            label,
            cr.count,
            dn,
            dt,
            p.median,
            p.p99,
            p.p999,
            p.max,
            ticks_to_ns(cr.median_ticks.median, f)
        );
    }

    /// Table III again on trimmed means with 95 % intervals, and its ratios against their goals.
    fn render_trimmed(&self, o: &mut String) {
        let c = &self.config;
        let ci = |e: &Estimate, prec: usize| {
            format!("{:.p$} [{:.p$}..{:.p$}]", e.value, e.lo, e.hi, p = prec)
        };
        let ops = self.lat(Scenario::AddOnMiss, "operations", c.m, 0);
        let mut wanted: Vec<(String, Option<&LatencyPoint>, Class)> = vec![
            (
                "baseline forwarder".into(),
                self.lat(Scenario::Forward, "baseline", c.m, 0),
                Class::Forward,
            ),
            ("insertion (phase 1)".into(), ops, Class::Insert),
            ("lookup (hit)".into(), ops, Class::Hit),
            (
                "update (hit + write)".into(),
                self.lat(Scenario::Update, "operations", c.m, 0),
                Class::HitUpdate,
            ),
        ];
        for p in self.latency.iter().filter(|p| p.role == "rates") {
            wanted.push((
                format!("new-key insert r={}", p.r),
                Some(p),
                Class::NewKeyInsert,
            ));
        }
        let rows: Vec<(String, &ClassResult)> = wanted
            .into_iter()
            .filter_map(|(label, p, class)| p.and_then(|p| p.class(class)).map(|x| (label, x)))
            .collect();
        if rows.iter().all(|(_, x)| x.trimmed_ticks.is_none()) {
            return;
        }
        let _ = writeln!(
            o,
            "\nTable III on trimmed means ({:.0} % of each tail trimmed; mean of the runs' trimmed means, {:.0} % interval over the runs)",
            estimate::TRIM * 100.0,
            estimate::CONFIDENCE * 100.0
        );
        let _ = writeln!(
            o,
            "  {:<26} {:>9} {:>26} {:>26} {:>24}",
            "operation", "packets", "ticks per packet", "delta ticks (Eq. 4)", "delta ns"
        );
        for (label, x) in rows {
            let Some(t) = &x.trimmed_ticks else { continue };
            let (dt, dn) = match (&x.eq4_trimmed_ticks, &x.eq4_trimmed_ns) {
                (Some(d), Some(n)) => (ci(d, 1), ci(n, 1)),
                (Some(d), None) => (ci(d, 1), "-".into()),
                _ => ("-".into(), "-".into()),
            };
            let _ = writeln!(
                o,
                "  {:<26} {:>9} {:>26} {:>26} {:>24}",
                label,
                x.count,
                ci(t, 1),
                dt,
                dn
            );
        }
        if !self.table3_ratios.is_empty() {
            let _ = writeln!(o, "  ratios of the deltas:");
            for r in &self.table3_ratios {
                let e = &r.estimate;
                let verdict = if e.hi <= r.goal_max {
                    "within"
                } else if e.lo > r.goal_max {
                    "above"
                } else {
                    "interval spans"
                };
                let _ = writeln!(
                    o,
                    "  {:<26} {:>22}  (±{:.0} %; goal ≤ {}: {verdict})  {}",
                    r.name,
                    ci(e, 2),
                    e.rel_half_width() * 100.0,
                    r.goal_max,
                    r.what
                );
            }
        }
    }

    fn render_latency(&self, o: &mut String, f: f64) {
        let c = &self.config;
        let _ = writeln!(
            o,
            "\nlatency-optimized: batch 1, 1 core; Eq. 4: c_i = t_i(median) - t_baseline(median)"
        );
        if let Some(b) = self
            .lat(Scenario::Forward, "baseline", c.m, 0)
            .and_then(|p| p.class(Class::Forward))
        {
            let _ = writeln!(
                o,
                "baseline (examples/bench/forward.p4): median {} ticks ({:.0} ns), p99 {}, p99.9 {}, max {} ticks; {} packets",
                fmt_spread(&b.median_ticks, 0),
                ticks_to_ns(b.median_ticks.median, f),
                b.merged.p99,
                b.merged.p999,
                b.merged.max,
                b.count
            );
        }
        let head = format!(
            "  {:<26} {:>9} {:>22} {:>24} {:>7} {:>7} {:>7} {:>9}",
            "operation",
            "packets",
            "delta ns (Eq. 4)",
            "delta ticks",
            "median",
            "p99",
            "p99.9",
            "max"
        );
        let _ = writeln!(
            o,
            "\nTable III (a) Operations (m={}, insertions only in phase 1; latency columns in ticks over all runs)",
            c.m
        );
        let _ = writeln!(o, "{head}");
        if let Some(p) = self.lat(Scenario::AddOnMiss, "operations", c.m, 0) {
            if let Some(x) = p.class(Class::Insert) {
                Self::class_row(o, "insertion (phase 1)", x, f);
            }
            if let Some(x) = p.class(Class::Hit) {
                Self::class_row(o, "lookup (hit)", x, f);
            }
        }
        if let Some(p) = self.lat(Scenario::Update, "operations", c.m, 0) {
            if let Some(x) = p.class(Class::HitUpdate) {
                Self::class_row(o, "update (hit + write)", x, f);
            }
            if let Some(x) = p.class(Class::Insert) {
                Self::class_row(o, "insert (update prog)", x, f);
            }
        }
        for p in self.latency.iter().filter(|p| p.role == "operations") {
            for x in &p.classes {
                if matches!(x.class, Class::InsertFailed | Class::Other) {
                    Self::class_row(
                        o,
                        &format!("{} ({})", x.class.name(), p.scenario.name()),
                        x,
                        f,
                    );
                }
            }
        }
        let res = self.machine.tick_resolution_ticks;
        let _ = writeln!(
            o,
            "  {:<26} {:>9} {:>22} {:>24}",
            "resolution (counter step)",
            "",
            format!("{:.1}", ticks_to_ns(res as f64, f)),
            res
        );
        let rates: Vec<&LatencyPoint> = self.latency.iter().filter(|p| p.role == "rates").collect();
        if !rates.is_empty() {
            let _ = writeln!(
                o,
                "\nTable III (b) Insertions with different rates r (every r-th phase-2 packet a new key; Eq. 4 on those inserts)"
            );
            let _ = writeln!(
                o,
                "  {:<26} {:>9} {:>22} {:>24} {:>7} {:>7} {:>7} {:>9}",
                "rate r",
                "inserts",
                "delta ns (Eq. 4)",
                "delta ticks",
                "median",
                "p99",
                "p99.9",
                "max"
            );
            for p in &rates {
                match p.class(Class::NewKeyInsert) {
                    Some(x) => Self::class_row(o, &format!("r={}", p.r), x, f),
                    None => {
                        let _ = writeln!(o, "  r={:<24} no new keys (phase 2 too short)", p.r);
                    }
                }
            }
            let _ = writeln!(o, "  lookups at the same rates:");
            for p in &rates {
                if let Some(x) = p.class(Class::Hit) {
                    Self::class_row(o, &format!("  hit, r={}", p.r), x, f);
                }
            }
        }
        let sizes: Vec<&LatencyPoint> = self
            .latency
            .iter()
            .filter(|p| {
                p.scenario == Scenario::AddOnMiss
                    && p.r == 0
                    && (p.role == "sizes" || p.role == "operations")
                    && c.sizes.contains(&p.m)
            })
            .collect();
        self.render_trimmed(o);
        self.render_stages(o);
        if !sizes.is_empty() {
            let _ = writeln!(o, "\nTable size sweep (latency, r=0)");
            let _ = writeln!(o, "{head}");
            let mut sizes = sizes;
            sizes.sort_by_key(|p| p.m);
            for p in sizes {
                if let Some(x) = p.class(Class::Insert) {
                    Self::class_row(o, &format!("insert m=2^{}", p.m.trailing_zeros()), x, f);
                }
                if let Some(x) = p.class(Class::Hit) {
                    Self::class_row(o, &format!("lookup m=2^{}", p.m.trailing_zeros()), x, f);
                }
            }
        }
    }

    /// The `stage-stamps` build's per-stage medians, per latency point (nothing otherwise).
    fn render_stages(&self, o: &mut String) {
        if self.latency.iter().all(|p| p.stages.is_empty()) {
            return;
        }
        let _ = writeln!(
            o,
            "\nStages (build with the stage-stamps feature: median TSC ticks from the stamp before; \
             each stamp is lfence + rdtsc, so stages do not overlap and totals are higher than \
             the plain build's; docs/bench.md)"
        );
        for p in self.latency.iter().filter(|p| !p.stages.is_empty()) {
            let _ = writeln!(
                o,
                "  {} m=2^{} r={}:",
                p.scenario.name(),
                p.m.trailing_zeros(),
                p.r
            );
            for s in p.stages.iter().take(8) {
                let path: Vec<String> = s.stages.iter().map(|(n, t)| format!("{n} {t}")).collect();
                let _ = writeln!(
                    o,
                    "    {:<16} {:>9} pkts  median {:>6}: {}",
                    s.class.name(),
                    s.packets,
                    s.median_ticks,
                    path.join(", ")
                );
            }
        }
    }

    fn render_throughput(&self, o: &mut String) {
        let c = &self.config;
        let _ = writeln!(
            o,
            "\nthroughput-optimized: batch {}, packets generated in memory first; Mpps median [min..max]; Eq. 3: c_avg = f/r - f/r_baseline",
            c.batch
        );
        let _ = writeln!(
            o,
            "  {:<12} {:>8} {:>5} {:>25} {:>25} {:>25} {:>22} {:>16}",
            "scenario",
            "r",
            "cores",
            "phase 1 Mpps",
            "phase 2 Mpps",
            "total Mpps",
            "c_avg ns (Eq. 3)",
            "c_avg ticks"
        );
        let mut rows: Vec<&ThroughputPoint> =
            self.throughput.iter().filter(|p| p.m == c.m).collect();
        rows.sort_by_key(|p| {
            (
                p.cores,
                p.scenario != Scenario::Forward,
                p.scenario.name(),
                p.r,
            )
        });
        for p in rows {
            self.thr_row(o, p, p.scenario.name());
        }
        let mut sizes: Vec<&ThroughputPoint> = self
            .throughput
            .iter()
            .filter(|p| {
                p.scenario == Scenario::AddOnMiss
                    && p.cores == 1
                    && p.r == 0
                    && (p.role == "sizes" || p.role == "operations")
                    && c.sizes.contains(&p.m)
            })
            .collect();
        sizes.sort_by_key(|p| p.m);
        if !sizes.is_empty() {
            let _ = writeln!(o, "\nTable size sweep (throughput, 1 core, r=0: phase 1 inserts only, phase 2 lookups only)");
            for p in sizes {
                self.thr_row(o, p, &format!("m=2^{}", p.m.trailing_zeros()));
            }
        }
        // Scaling: total Mpps at each core count relative to one core.
        let one: Vec<&ThroughputPoint> = self
            .throughput
            .iter()
            .filter(|p| p.cores == 1 && p.m == c.m)
            .collect();
        let multi: Vec<usize> = c.cores.iter().copied().filter(|&n| n > 1).collect();
        if !multi.is_empty() && !one.is_empty() {
            let _ = writeln!(o, "\nscaling (total Mpps at N cores / at 1 core, medians)");
            for p1 in one {
                let mut line = format!("  {:<12} r={:<7}", p1.scenario.name(), p1.r);
                for &n in &multi {
                    if let Some(pn) = self.thr(p1.scenario, p1.m, p1.r, n) {
                        let _ = write!(
                            line,
                            " {n} cores: {:.2}x",
                            pn.pps_total.median / p1.pps_total.median.max(1e-9)
                        );
                    }
                }
                let _ = writeln!(o, "{line}");
            }
            let _ = writeln!(
                o,
                "scaling by CPU time (N x cpu ns/packet at 1 core / cpu ns/packet at N cores: the \
                 speedup were every worker's CPU its own)"
            );
            for p1 in self
                .throughput
                .iter()
                .filter(|p| p.cores == 1 && p.m == c.m)
            {
                let mut line = format!(
                    "  {:<12} r={:<7} 1 core: {:.0} ns cpu/packet",
                    p1.scenario.name(),
                    p1.r,
                    p1.cpu_ns_per_packet.median
                );
                for &n in &multi {
                    if let Some(pn) = self.thr(p1.scenario, p1.m, p1.r, n) {
                        let _ = write!(
                            line,
                            "; {n} cores: {:.0} ns, {:.2}x",
                            pn.cpu_ns_per_packet.median,
                            n as f64 * p1.cpu_ns_per_packet.median
                                / pn.cpu_ns_per_packet.median.max(1e-9)
                        );
                    }
                }
                let _ = writeln!(o, "{line}");
            }
        }
    }

    fn thr_row(&self, o: &mut String, p: &ThroughputPoint, label: &str) {
        let (cn, ct) = match p.eq3.and_then(|e| e.total) {
            Some(e) => (fmt_spread(&e.ns, 1), fmt_spread(&e.ticks, 0)),
            None => ("-".into(), "-".into()),
        };
        let _ = writeln!(
            o,
            "  {:<12} {:>8} {:>5} {:>25} {:>25} {:>25} {:>22} {:>16}",
            label,
            p.r,
            p.cores,
            mpps(&p.pps_phase1),
            mpps(&p.pps_phase2),
            mpps(&p.pps_total),
            cn,
            ct
        );
    }
}

/// `--engine both`: the two engines' figures side by side, point by point (medians of the same
/// points measured in one run of the command, compiled engine first), with their ratio.
pub fn render_engines(jit: &BenchReport, interp: &BenchReport) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "\nengines side by side (jit vs interp, same points, medians):"
    );
    if !jit.throughput.is_empty() {
        let _ = writeln!(
            o,
            "  throughput       scenario            r cores   jit Mpps  interp Mpps  jit/interp"
        );
        for p in &jit.throughput {
            let Some(q) = interp.throughput.iter().find(|q| {
                q.scenario == p.scenario
                    && q.role == p.role
                    && q.m == p.m
                    && q.r == p.r
                    && q.cores == p.cores
            }) else {
                continue;
            };
            let (a, b) = (p.pps_total.median / 1e6, q.pps_total.median / 1e6);
            let _ = writeln!(
                o,
                "  {:<16} {:<15} {:>5} {:>5} {:>10.3} {:>12.3} {:>11.2}",
                p.role,
                p.scenario.name(),
                p.r,
                p.cores,
                a,
                b,
                if b > 0.0 { a / b } else { f64::NAN }
            );
        }
    }
    if !jit.latency.is_empty() {
        let _ = writeln!(
            o,
            "  latency          scenario            r class           jit ticks  interp ticks  interp/jit"
        );
        for p in &jit.latency {
            let Some(q) = interp
                .latency
                .iter()
                .find(|q| q.scenario == p.scenario && q.role == p.role && q.m == p.m && q.r == p.r)
            else {
                continue;
            };
            for c in &p.classes {
                let Some(d) = q.classes.iter().find(|d| d.class == c.class) else {
                    continue;
                };
                let (a, b) = (c.median_ticks.median, d.median_ticks.median);
                let _ = writeln!(
                    o,
                    "  {:<16} {:<15} {:>5} {:<15} {:>9.0} {:>13.0} {:>11.2}",
                    p.role,
                    p.scenario.name(),
                    p.r,
                    c.class.name(),
                    a,
                    b,
                    if a > 0.0 { b / a } else { f64::NAN }
                );
            }
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(s: Scenario, role: &str, r: u64, classes: &[(Class, f64)]) -> LatencyPoint {
        LatencyPoint {
            scenario: s,
            role: role.into(),
            m: 1024,
            r,
            phase1_packets: 1024,
            phase2_packets: 4096,
            new_keys: 0,
            table_size: 2048,
            runs: 3,
            table_entries_per_run: vec![],
            inserts_full_per_run: vec![],
            classes: classes
                .iter()
                .map(|&(class, delta)| ClassResult {
                    class,
                    count: 100,
                    count_per_run: vec![],
                    median_ticks: Spread::default(),
                    merged: Percentiles::default(),
                    trimmed_ticks: Some(Estimate::new(delta + 100.0, delta / 1000.0, 1e6)),
                    eq4_ticks: None,
                    eq4_ns: None,
                    eq4_trimmed_ticks: Some(Estimate::new(delta, delta / 1000.0, 1e6)),
                    eq4_trimmed_ns: None,
                })
                .collect(),
            stages: vec![],
        }
    }

    /// The ratios take the right classes of the right points: insert and update over the
    /// add-on-miss program's hit at m, and the rarest rate's new-key insert over the densest's;
    /// the text report says where each stands against its goal.
    #[test]
    fn table3_ratios_divide_the_right_deltas() {
        let mut rep = BenchReport::default();
        rep.config.m = 1024;
        rep.latency = vec![
            point(
                Scenario::AddOnMiss,
                "operations",
                0,
                &[(Class::Insert, 300.0), (Class::Hit, 200.0)],
            ),
            point(
                Scenario::Update,
                "operations",
                0,
                &[(Class::HitUpdate, 210.0)],
            ),
            point(
                Scenario::AddOnMiss,
                "rates",
                10,
                &[(Class::NewKeyInsert, 400.0)],
            ),
            point(
                Scenario::AddOnMiss,
                "rates",
                1,
                &[(Class::NewKeyInsert, 250.0)],
            ),
            point(
                Scenario::AddOnMiss,
                "rates",
                1000,
                &[(Class::NewKeyInsert, 500.0)],
            ),
        ];
        let rs = table3_ratios(&rep);
        let got: Vec<(&str, f64)> = rs
            .iter()
            .map(|r| (r.name.as_str(), r.estimate.value))
            .collect();
        assert_eq!(
            got,
            vec![
                ("insert / lookup", 1.5),
                ("update / lookup", 1.05),
                ("rare insert / insert", 2.0)
            ]
        );
        assert!(rs[2].what.contains("r=1000") && rs[2].what.contains("r=1"));
        rep.table3_ratios = rs;
        let mut o = String::new();
        rep.render_trimmed(&mut o);
        assert!(o.contains("goal ≤ 1.1: within"), "{o}");
        assert!(o.contains("goal ≤ 1.5: above"), "{o}");
        // A lookup whose interval reaches zero gives no ratio over it.
        rep.latency[0] = point(
            Scenario::AddOnMiss,
            "operations",
            0,
            &[(Class::Insert, 300.0), (Class::Hit, 0.5)],
        );
        rep.latency[0].classes[1].eq4_trimmed_ticks = Some(Estimate::new(0.5, 2.0, 2.0));
        let names: Vec<String> = table3_ratios(&rep).into_iter().map(|r| r.name).collect();
        assert_eq!(names, vec!["rare insert / insert".to_string()]);
    }
}
