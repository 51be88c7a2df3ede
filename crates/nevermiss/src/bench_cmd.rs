//! `nevermiss bench`: papers/000's cost model (Eq. 3, Eq. 4, Table III) measured on the
//! built-in two-phase generator; see docs/bench.md. Flags → [`BenchConfig`] →
//! [`nevermiss_bench::run`].
//!
//! Exit codes: 0 the bench completed; 2 bad flags, an unwritable output, a program that does
//! not compile, or a run that could not start (e.g. pinning failed).

use clap::{Args, Subcommand, ValueEnum};
use nevermiss_bench::scenario::Scenario;
use nevermiss_bench::{BenchConfig, Engine};
use std::io::Write;
use std::path::PathBuf;

#[derive(Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct BenchArgs {
    #[command(subcommand)]
    pub what: Option<BenchWhat>,
    /// Small sweep for a smoke test (m=2^10, r ∈ {1,10,100}, sizes 2^10 and 2^12, 2 runs);
    /// other flags override it.
    #[arg(long)]
    pub quick: bool,
    /// Which modes to run.
    #[arg(long, value_enum, default_value_t = ModeArg::Both)]
    pub mode: ModeArg,
    /// Scenarios besides the baseline forwarder: add-on-miss, update (comma-separated) or all.
    #[arg(long, value_name = "LIST")]
    pub scenario: Option<String>,
    /// Phase-1 keys m (= table entries) for Table III (a) and the rate sweep: 1024..4194304
    /// or 2^10..2^22.
    #[arg(long, value_name = "N")]
    pub m: Option<String>,
    /// Insertion rates r (every r-th phase-2 packet carries a new key), e.g. 1,10,100.
    #[arg(long, value_name = "LIST")]
    pub rates: Option<String>,
    /// Table sizes of the size sweep, powers of two (e.g. 2^10,2^16,2^20 or 1024,65536).
    #[arg(long, value_name = "LIST")]
    pub sizes: Option<String>,
    /// Core counts of the throughput sweep: a list (1,2) or a range (1..2).
    #[arg(long, value_name = "LIST")]
    pub cores: Option<String>,
    /// Phase-2 packets per run.
    #[arg(long, value_name = "N")]
    pub count: Option<String>,
    /// Phase-2 packets per run as a multiple of m (instead of --count).
    #[arg(long, value_name = "K", conflicts_with = "count", value_parser = crate::flags::count)]
    pub count_m: Option<u64>,
    /// Latency mode: at least this many new-key inserts per rate point (phase 2 grows to
    /// r × this, up to --max-phase2).
    #[arg(long, value_name = "K", value_parser = crate::flags::count)]
    pub new_keys: Option<u64>,
    /// Cap on the phase-2 packets of one latency run.
    #[arg(long, value_name = "N")]
    pub max_phase2: Option<String>,
    /// Repetitions of every point (medians and min–max are reported).
    #[arg(long, value_name = "K", value_parser = crate::flags::count_usize)]
    pub runs: Option<usize>,
    /// Throughput-mode batch size, 1 to 256 (latency mode always uses 1).
    #[arg(long, value_name = "N", value_parser = crate::flags::batch)]
    pub batch: Option<usize>,
    /// Do not pin threads to CPUs.
    #[arg(long)]
    pub no_pin: bool,
    /// Generator seed.
    #[arg(long)]
    pub seed: Option<u64>,
    /// The add-on-miss program (default examples/pna-add-on-miss.p4); must take
    /// -D FLOW_TABLE_SIZE and key on ipv4.dst.
    #[arg(long, value_name = "FILE")]
    pub program: Option<PathBuf>,
    /// Write every figure as JSON here.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write HdrHistogram interval logs (ticks per packet, one per scenario × class) here.
    #[arg(long, value_name = "DIR")]
    pub hdr_dir: Option<PathBuf>,
    /// What runs the programs: jit (machine code, the default), interp (the interpreter), or
    /// both, one after the other, with their figures side by side (docs/jit.md).
    #[arg(long, value_enum, default_value_t = EngineArg::Jit)]
    pub engine: EngineArg,
    /// Write per-packet samples of each latency point's first run here, in packet order
    /// (CSV: scenario,m,r,index,phase,class,ticks).
    #[arg(long, value_name = "FILE")]
    pub samples: Option<PathBuf>,
    /// With --samples: keep every K-th packet (default 997, as papers/000's plots).
    #[arg(long, value_name = "K", requires = "samples", value_parser = crate::flags::count)]
    pub samples_every: Option<u64>,
    /// With --samples: also keep the phase-2 packets that are not lookups (new-key inserts),
    /// evenly thinned to at most N per point (default 10000).
    #[arg(long, value_name = "N", requires = "samples", value_parser = crate::flags::count)]
    pub samples_max: Option<u64>,
    /// No progress lines on stderr.
    #[arg(long, short)]
    pub quiet: bool,
}

/// `nevermiss bench --engine`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum EngineArg {
    Jit,
    Interp,
    Both,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    Both,
    Latency,
    Throughput,
}

/// Parses `N` or `2^K`.
fn parse_num(flag: &str, s: &str) -> Result<u64, String> {
    let s = s.trim();
    if let Some(e) = s.strip_prefix("2^") {
        let e: u32 = e
            .parse()
            .map_err(|_| format!("{flag} {s}: `{e}` is not an exponent"))?;
        if e > 62 {
            return Err(format!("{flag} {s}: exponent too large"));
        }
        return Ok(1 << e);
    }
    s.replace('_', "")
        .parse()
        .map_err(|_| format!("{flag} {s}: not a number (N or 2^K)"))
}

fn parse_list(flag: &str, s: &str) -> Result<Vec<u64>, String> {
    let v = s
        .split(',')
        .filter(|x| !x.trim().is_empty())
        .map(|x| parse_num(flag, x))
        .collect::<Result<Vec<_>, _>>()?;
    if v.is_empty() {
        return Err(format!("{flag}: empty list"));
    }
    Ok(v)
}

fn parse_cores(s: &str) -> Result<Vec<usize>, String> {
    let v: Vec<u64> = match s.split_once("..") {
        Some((a, b)) => {
            let a = parse_num("--cores", a)?;
            let b = parse_num("--cores", b.trim_start_matches('='))?;
            if a > b {
                return Err(format!("--cores {s}: empty range"));
            }
            if b - a > 4096 {
                return Err(format!("--cores {s}: range too large"));
            }
            (a..=b).collect()
        }
        None => parse_list("--cores", s)?,
    };
    v.into_iter()
        .map(|c| usize::try_from(c).map_err(|_| format!("--cores {c}: too large")))
        .collect()
}

fn parse_scenarios(s: &str) -> Result<Vec<Scenario>, String> {
    if s.trim() == "all" {
        return Ok(vec![Scenario::AddOnMiss, Scenario::Update]);
    }
    let mut v = Vec::new();
    for x in s.split(',') {
        let sc = Scenario::parse(x).map_err(|e| e.to_string())?;
        if sc != Scenario::Forward && !v.contains(&sc) {
            v.push(sc);
        }
    }
    Ok(v)
}

/// The configuration the flags describe.
pub fn config(a: &BenchArgs) -> Result<BenchConfig, String> {
    let mut c = if a.quick {
        BenchConfig::quick()
    } else {
        BenchConfig::default()
    };
    (c.latency, c.throughput) = match a.mode {
        ModeArg::Both => (true, true),
        ModeArg::Latency => (true, false),
        ModeArg::Throughput => (false, true),
    };
    // A flag of the mode that does not run is an error, never silently ignored.
    for (flag, given, latency_only) in [
        ("--batch", a.batch.is_some(), false),
        ("--cores", a.cores.is_some(), false),
        ("--new-keys", a.new_keys.is_some(), true),
        ("--max-phase2", a.max_phase2.is_some(), true),
        ("--samples-every", a.samples_every.is_some(), true),
        ("--samples-max", a.samples_max.is_some(), true),
    ] {
        let runs = if latency_only {
            c.latency
        } else {
            c.throughput
        };
        if given && !runs {
            let mode = if latency_only {
                "latency"
            } else {
                "throughput"
            };
            return Err(format!(
                "{flag} applies to the {mode} mode, which --mode does not run"
            ));
        }
    }
    if let Some(s) = &a.scenario {
        c.scenarios = parse_scenarios(s)?;
    }
    if let Some(m) = &a.m {
        c.m = parse_num("--m", m)?;
    }
    if let Some(r) = &a.rates {
        c.rates = parse_list("--rates", r)?;
    }
    if let Some(s) = &a.sizes {
        c.sizes = parse_list("--sizes", s)?;
    }
    if let Some(s) = &a.cores {
        c.cores = parse_cores(s)?;
    }
    if let Some(n) = &a.count {
        c.count = parse_num("--count", n)?;
    }
    if let Some(k) = a.count_m {
        c.count = k
            .checked_mul(c.m)
            .ok_or_else(|| format!("--count-m {k}: too large"))?;
    }
    if let Some(k) = a.new_keys {
        c.new_keys = k;
    }
    if let Some(n) = &a.max_phase2 {
        c.max_phase2 = parse_num("--max-phase2", n)?;
    }
    if let Some(r) = a.runs {
        c.runs = r;
    }
    if let Some(b) = a.batch {
        c.batch = b;
    }
    if a.no_pin {
        c.pin = false;
    }
    if let Some(s) = a.seed {
        c.seed = s;
    }
    c.program = a.program.clone();
    c.hdr_dir = a.hdr_dir.clone();
    c.samples = a.samples.clone();
    if let Some(k) = a.samples_every {
        c.samples_every = k;
    }
    if let Some(n) = a.samples_max {
        c.samples_max = n;
    }
    c.validate().map_err(|e| e.to_string())?;
    Ok(c)
}

/// Benchmarks other than the table-cost sweep.
#[derive(Subcommand)]
pub enum BenchWhat {
    /// papers/002's control-plane experiment: P4Runtime insert rates by batch size, and
    /// d_control/d_data/d_all of modifies under traffic with packets that saw no entry counted
    /// (docs/p4runtime.md).
    P4rt(P4rtArgs),
    /// Any program's cost per packet against a baseline forwarder on the same packets
    /// (generated or from a capture): latency (TSC ticks, Eq. 4, percentiles) and throughput
    /// on 1..N cores (Eq. 3), runs alternating; each table's applies, hits and misses,
    /// interpreter fallbacks per packet, per-stage and per-lookup costs from a profiling
    /// build, and the component models' prediction (papers/004; docs/bench.md).
    #[command(visible_alias = "program")]
    Component(Box<ComponentArgs>),
    /// papers/001's comparison: the same flow table learning its entries with add-on-miss
    /// (add_entry in the data plane) and with a digest to an in-process controller that
    /// inserts them with P4Runtime; packets that missed before their flow's entry existed and
    /// time to first hit, per flow (docs/bench.md).
    Learn(LearnArgs),
}

#[derive(Args)]
pub struct LearnArgs {
    /// Variants: add-on-miss, digest (comma-separated) or both.
    #[arg(long, value_name = "LIST", default_value = "both")]
    pub variant: String,
    /// Flows per run [default: 1000].
    #[arg(long, value_name = "N", value_parser = crate::flags::count)]
    pub flows: Option<u64>,
    /// New flows per second [default: 1000].
    #[arg(long, value_name = "N", value_parser = crate::flags::count)]
    pub flow_rate: Option<u64>,
    /// Packets per flow [default: 100].
    #[arg(long, value_name = "N", value_parser = crate::flags::count)]
    pub packets: Option<u64>,
    /// Time between two packets of a flow, e.g. 1ms, 200us [default: 1ms].
    #[arg(long, value_name = "DURATION", value_parser = crate::flags::duration_ns)]
    pub interval: Option<u64>,
    /// Repetitions of each variant [default: 3].
    #[arg(long, value_name = "K", value_parser = crate::flags::count_usize)]
    pub runs: Option<usize>,
    /// The server's housekeeping period, on whose ticks digest lists are sent; 1ms to 10s
    /// [default: 10ms, as `nevermiss serve`].
    #[arg(long, value_name = "DURATION", value_parser = crate::flags::duration_ns)]
    pub tick: Option<u64>,
    /// Digest config: most digests per DigestList, 0 = no limit [default: 1].
    #[arg(long, value_name = "N")]
    pub max_list_size: Option<i32>,
    /// Digest config: longest a digest waits for its list to fill, 0 = none [default: 0].
    #[arg(long, value_name = "DURATION", value_parser = duration_or_zero)]
    pub max_timeout: Option<u64>,
    /// Digest config: how long a sent, unacknowledged digest suppresses its duplicates,
    /// 0 = not at all [default: 1s].
    #[arg(long, value_name = "DURATION", value_parser = duration_or_zero)]
    pub ack_timeout: Option<u64>,
    /// Seed of the flow arrivals (a Poisson process; run K uses SEED + K) [default: 1].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Also write the report as JSON here.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write HdrHistogram interval logs (VARIANT.MEASURE.hlog: misses, time-to-first-hit,
    /// time-to-entry, digest-wait, write-latency; one interval per run) here.
    #[arg(long, value_name = "DIR")]
    pub hdr_dir: Option<PathBuf>,
    /// No progress lines on stderr.
    #[arg(long, short)]
    pub quiet: bool,
}

/// A duration that may be 0 (digest config values).
fn duration_or_zero(s: &str) -> Result<u64, String> {
    nevermiss_io::parse_duration_ns(s).map_err(|e| e.to_string())
}

/// The options `bench learn`'s flags describe.
fn learn_options(a: &LearnArgs) -> Result<nevermiss_bench::learn::LearnOptions, String> {
    use nevermiss_bench::learn::{LearnOptions, Variant};
    let mut o = LearnOptions::default();
    if a.variant.trim() != "both" {
        let mut v = Vec::new();
        for x in a.variant.split(',') {
            let x = Variant::parse(x).map_err(|e| format!("--variant: {e}"))?;
            if !v.contains(&x) {
                v.push(x);
            }
        }
        o.variants = v;
    }
    let signed =
        |flag: &str, ns: u64| i64::try_from(ns).map_err(|_| format!("{flag} {ns} ns: too large"));
    o.flows = a.flows.unwrap_or(o.flows);
    o.flow_rate = a.flow_rate.unwrap_or(o.flow_rate);
    o.packets = a.packets.unwrap_or(o.packets);
    o.interval_ns = a.interval.unwrap_or(o.interval_ns);
    o.runs = a.runs.unwrap_or(o.runs);
    o.tick_ns = a.tick.unwrap_or(o.tick_ns);
    o.seed = a.seed.unwrap_or(o.seed);
    if let Some(n) = a.max_list_size {
        if n < 0 {
            return Err(format!("--max-list-size {n}: must be 0 (no limit) or more"));
        }
        o.digest.max_list_size = n;
    }
    if let Some(t) = a.max_timeout {
        o.digest.max_timeout_ns = signed("--max-timeout", t)?;
    }
    if let Some(t) = a.ack_timeout {
        o.digest.ack_timeout_ns = signed("--ack-timeout", t)?;
    }
    o.hdr_dir = a.hdr_dir.clone();
    o.validate().map_err(|e| e.to_string())?;
    Ok(o)
}

#[derive(Args)]
pub struct ComponentArgs {
    /// The program measured.
    pub program: PathBuf,
    #[command(flatten)]
    pub source: crate::flags::SourceArgs,
    #[command(flatten)]
    pub switch: crate::flags::SwitchArgs,
    /// Control-plane commands (STF syntax) loaded into the program before every run.
    #[arg(long, value_name = "FILE")]
    pub entries: Vec<PathBuf>,
    /// P4Runtime WriteRequests in protobuf text format (`updates { type: INSERT entity { ... }
    /// }`, ids of the program's P4Info as `nevermiss p4info` prints it) applied to the program
    /// after --entries before every run.
    #[arg(long, value_name = "FILE")]
    pub writes: Vec<PathBuf>,
    /// The baseline (default examples/bench/forward.p4); compiled with the same -I/-D.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Control-plane commands loaded into the baseline.
    #[arg(long, value_name = "FILE")]
    pub baseline_entries: Vec<PathBuf>,
    /// The packets of every run: a two-phase generator spec as in `--port N=gen:...`
    /// (keys m, r, count, field, seed, size, flows) [default: two-phase,m=1024,count=65536].
    #[arg(long, value_name = "SPEC", conflicts_with = "pcap")]
    pub gen: Option<String>,
    /// The packets of every run: the frames of this pcap or pcapng file, in order.
    #[arg(long, value_name = "FILE")]
    pub pcap: Option<PathBuf>,
    /// Core counts of the throughput mode: a list (1,2) or a range (1..2); Eq. 3 at the first.
    #[arg(long, value_name = "LIST", default_value = "1")]
    pub cores: String,
    /// No profile runs (the per-stage and per-lookup costs of a profiling build).
    #[arg(long)]
    pub no_stages: bool,
    /// Component models to predict the program's cost from: the `models.json` that
    /// `nevermiss-lab reproduce 004` writes (latency mode).
    #[arg(long, value_name = "FILE")]
    pub models: Option<PathBuf>,
    /// Which modes to run.
    #[arg(long, value_enum, default_value_t = ModeArg::Both)]
    pub mode: ModeArg,
    /// Runs of each mode (program and baseline alternate).
    #[arg(long, default_value = "5", value_parser = crate::flags::count_usize)]
    pub runs: usize,
    /// Throughput-mode batch size, 1 to 256.
    #[arg(long, default_value = "32", value_parser = crate::flags::batch)]
    pub batch: usize,
    /// Do not pin the throughput worker to a CPU.
    #[arg(long)]
    pub no_pin: bool,
    /// Write the report as JSON here.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write HdrHistogram logs of ticks per packet (program.packet.hlog,
    /// baseline.packet.hlog) here.
    #[arg(long, value_name = "DIR")]
    pub hdr_dir: Option<PathBuf>,
    /// No progress lines on stderr.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Args)]
pub struct P4rtArgs {
    /// Entries inserted per batch size and run.
    #[arg(long, default_value = "100000", value_parser = crate::flags::count)]
    pub inserts: u64,
    /// Updates per Write request, comma-separated.
    #[arg(long, default_value = "1,10,100,1000", value_delimiter = ',', value_parser = crate::flags::count_usize)]
    pub batches: Vec<usize>,
    /// Modifies of one route per run.
    #[arg(long, default_value = "10000", value_parser = crate::flags::count)]
    pub modifies: u64,
    /// Packets per second through the router during the modifies.
    #[arg(long, default_value = "1000000", value_parser = crate::flags::count)]
    pub rate: u64,
    /// Repetitions (medians are reported).
    #[arg(long, default_value = "5", value_parser = crate::flags::count_usize)]
    pub runs: usize,
    /// Insert Writes kept in flight at once (1: each waits for the previous response).
    #[arg(long, default_value = "1", value_parser = crate::flags::count_usize)]
    pub in_flight: usize,
    /// Build and encode each insert Write in the timed loop, as it is sent (by default every
    /// Write of a run is prepared before the clock starts).
    #[arg(long)]
    pub build_in_loop: bool,
    /// Also write the report as JSON here.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write HdrHistogram interval logs (ns, one interval per run) here: modify.d_control.hlog,
    /// modify.d_data.hlog, modify.d_all.hlog, modify.write.hlog (the client's modify Write
    /// latency) and insert.write.hlog (single-update insert Writes; batch size 1 with
    /// --in-flight 1 only).
    #[arg(long, value_name = "DIR")]
    pub hdr_dir: Option<PathBuf>,
    /// What runs the pipelines: jit or interp (docs/jit.md) [default: jit].
    #[arg(long, value_name = "ENGINE", value_parser = crate::flags::engine)]
    pub engine: Option<Engine>,
    /// No progress lines.
    #[arg(long, short)]
    pub quiet: bool,
}

/// The `--json FILE` of a bench: created before measuring (an unwritable path fails at once,
/// not after minutes of work), written with the report at the end.
struct JsonOut(Option<(PathBuf, std::fs::File)>);

impl JsonOut {
    fn open(path: &Option<PathBuf>) -> Result<JsonOut, String> {
        Ok(JsonOut(match path {
            Some(p) => Some((
                p.clone(),
                std::fs::File::create(p).map_err(|e| format!("--json {}: {e}", p.display()))?,
            )),
            None => None,
        }))
    }

    /// Writes a report's JSON (`serde_json::to_string_pretty` of it) and a newline; nothing
    /// without `--json`.
    fn write(self, text: serde_json::Result<String>) -> Result<(), String> {
        let Some((p, mut f)) = self.0 else {
            return Ok(());
        };
        let text = text.map_err(|e| format!("json: {e}"))?;
        f.write_all(text.as_bytes())
            .and_then(|()| f.write_all(b"\n"))
            .map_err(|e| format!("--json {}: {e}", p.display()))
    }
}

pub fn run(args: BenchArgs) -> u8 {
    match args.what {
        Some(BenchWhat::P4rt(a)) => crate::usage_result(run_p4rt(a)),
        Some(BenchWhat::Component(a)) => crate::usage_result(run_component(*a)),
        Some(BenchWhat::Learn(a)) => crate::usage_result(run_learn(a)),
        None => crate::usage_result(run_inner(args)),
    }
}

fn run_p4rt(a: P4rtArgs) -> Result<(), String> {
    let json = JsonOut::open(&a.json)?;
    let opts = nevermiss_bench::p4rt::P4rtOptions {
        inserts: a.inserts,
        batches: a.batches.clone(),
        modifies: a.modifies,
        rate_pps: a.rate,
        runs: a.runs,
        in_flight: a.in_flight,
        build_in_loop: a.build_in_loop,
        hdr_dir: a.hdr_dir.clone(),
        engine: a.engine.unwrap_or_default(),
    };
    let quiet = a.quiet;
    let rep = nevermiss_bench::p4rt::run(&opts, |line| {
        if !quiet {
            eprintln!("{line}");
        }
    })
    .map_err(|e| e.to_string())?;
    out!("{}", rep.render());
    JsonOut::write(json, serde_json::to_string_pretty(&rep))
}

fn run_learn(a: LearnArgs) -> Result<(), String> {
    let opts = learn_options(&a)?;
    let json = JsonOut::open(&a.json)?;
    let quiet = a.quiet;
    let rep = nevermiss_bench::learn::run(&opts, |line| {
        if !quiet {
            eprintln!("bench learn: {line}");
        }
    })
    .map_err(|e| e.to_string())?;
    out!("{}", rep.render());
    JsonOut::write(json, serde_json::to_string_pretty(&rep))
}

/// Loads a program once; every run builds a fresh switch of it and loads its entries (STF
/// commands) and P4Runtime writes (a profiling build with `profile`: `Config::profile` read
/// with the TSC).
fn builder(
    a: &ComponentArgs,
    path: &std::path::Path,
    entries: &[PathBuf],
    writes: &[PathBuf],
    profile: bool,
) -> Result<
    impl Fn() -> Result<
        std::sync::Arc<nevermiss_runtime::Switch>,
        nevermiss_bench::component::BuildFailed,
    >,
    String,
> {
    let prog = a.source.load(path)?;
    let mut config = a.switch.config(&prog, path)?;
    // The program's WriteRequests, read and parsed once.
    let writes = writes
        .iter()
        .map(|w| {
            let text =
                std::fs::read_to_string(w).map_err(|e| format!("--writes {}: {e}", w.display()))?;
            nevermiss_p4rt::format::parse_write_text(&text)
                .map_err(|e| format!("--writes {}: {e}", w.display()))
                .map(|r| (w.clone(), r))
        })
        .collect::<Result<Vec<_>, String>>()?;
    if profile {
        config.profile = Some(nevermiss_bench::tsc::start);
    }
    let (path, entries) = (path.to_path_buf(), entries.to_vec());
    let build = move || -> Result<_, nevermiss_bench::component::BuildFailed> {
        let sw = std::sync::Arc::new(
            nevermiss_runtime::Switch::new(prog.clone(), config.clone())
                .map_err(|e| format!("{}: {e}", path.display()))?,
        );
        for e in &entries {
            crate::run_cmd::apply_entries(&sw, e)?;
        }
        for (w, req) in &writes {
            nevermiss_p4rt::writes::apply(&sw, req)
                .map_err(|e| format!("--writes {}: {e}", w.display()))?;
        }
        Ok(sw)
    };
    // Fail on bad entries before measuring anything.
    build().map_err(|e| e.to_string())?;
    Ok(build)
}

fn run_component(a: ComponentArgs) -> Result<(), String> {
    use nevermiss_bench::component::{Builds, ComponentConfig};
    use nevermiss_bench::traffic::Traffic;
    let (traffic, gen_spec) = match &a.pcap {
        Some(p) => (Traffic::from_pcap(p).map_err(|e| e.to_string())?, None),
        None => {
            let spec = a
                .gen
                .clone()
                .unwrap_or_else(|| "two-phase,m=1024,count=65536".into());
            let gen =
                nevermiss_io::gen::parse_gen_spec(&spec, 0).map_err(|e| format!("--gen: {e}"))?;
            (Traffic::Gen(gen), Some(spec))
        }
    };
    let cores = parse_cores(&a.cores)?;
    let throughput = a.mode != ModeArg::Latency;
    if throughput {
        nevermiss_bench::check_cores(&cores)?;
    }
    let models = match &a.models {
        Some(p) => Some(nevermiss_bench::predict::Models::read(p).map_err(|e| e.to_string())?),
        None => None,
    };
    let json = JsonOut::open(&a.json)?;
    let baseline = a
        .baseline
        .clone()
        .unwrap_or_else(|| Scenario::Forward.default_program());
    let prog = builder(&a, &a.program, &a.entries, &a.writes, false)?;
    let base = builder(&a, &baseline, &a.baseline_entries, &[], false)?;
    let profiled = if a.no_stages {
        None
    } else {
        Some(builder(&a, &a.program, &a.entries, &a.writes, true)?)
    };
    let cfg = ComponentConfig {
        program: a.program.display().to_string(),
        baseline: baseline.display().to_string(),
        traffic,
        gen_spec,
        pcap: a.pcap.as_ref().map(|p| p.display().to_string()),
        latency: a.mode != ModeArg::Throughput,
        throughput,
        runs: a.runs,
        batch: a.batch,
        cores,
        pin: !a.no_pin,
        hdr_dir: a.hdr_dir.clone(),
    };
    let builds = Builds {
        program: &prog,
        baseline: &base,
        profile: profiled
            .as_ref()
            .map(|b| b as &nevermiss_bench::component::Build<'_>),
    };
    let quiet = a.quiet;
    let rep = nevermiss_bench::component::run(&cfg, &builds, models.as_ref(), |line| {
        if !quiet {
            eprintln!("bench component: {line}");
        }
    })
    .map_err(|e| e.to_string())?;
    out!("{}", rep.render());
    JsonOut::write(json, serde_json::to_string_pretty(&rep))
}

fn run_inner(args: BenchArgs) -> Result<(), String> {
    let cfg = config(&args)?;
    let json = JsonOut::open(&args.json)?;
    let quiet = args.quiet;
    let engines: &[Engine] = match args.engine {
        EngineArg::Jit => &[Engine::Jit],
        EngineArg::Interp => &[Engine::Interp],
        EngineArg::Both => &[Engine::Jit, Engine::Interp],
    };
    let mut reps = Vec::new();
    for &engine in engines {
        let mut c = BenchConfig {
            engine,
            ..cfg.clone()
        };
        if engines.len() > 1 {
            // One HdrHistogram folder and one samples file per engine.
            c.hdr_dir = cfg.hdr_dir.as_ref().map(|d| d.join(engine.name()));
            c.samples = cfg
                .samples
                .as_ref()
                .map(|f| f.with_extension(format!("{}.csv", engine.name())));
        }
        let rep = nevermiss_bench::run(&c, |line| {
            if !quiet {
                eprintln!("bench ({}): {line}", engine.name());
            }
        })
        .map_err(|e| e.to_string())?;
        out!("{}", rep.render());
        reps.push(rep);
    }
    match &reps[..] {
        [jit, interp] => {
            out!("{}", nevermiss_bench::report::render_engines(jit, interp));
            let both = serde_json::json!({ "jit": jit, "interp": interp });
            JsonOut::write(json, serde_json::to_string_pretty(&both))
        }
        [rep] => JsonOut::write(json, serde_json::to_string_pretty(rep)),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_lists() {
        assert_eq!(parse_num("--m", "2^10"), Ok(1024));
        assert_eq!(parse_num("--m", "65_536"), Ok(65536));
        assert!(parse_num("--m", "2^x").is_err());
        assert!(parse_num("--m", "2^99").is_err());
        assert!(parse_num("--m", "-1").is_err());
        assert_eq!(parse_list("--rates", "1,10, 100"), Ok(vec![1, 10, 100]));
        assert!(parse_list("--rates", ",").is_err());
        assert_eq!(parse_cores("1..3"), Ok(vec![1, 2, 3]));
        assert_eq!(parse_cores("2"), Ok(vec![2]));
        assert!(parse_cores("3..1").is_err());
        assert_eq!(
            parse_scenarios("all"),
            Ok(vec![Scenario::AddOnMiss, Scenario::Update])
        );
        assert_eq!(
            parse_scenarios("forward,update"),
            Ok(vec![Scenario::Update])
        );
        assert!(parse_scenarios("x").is_err());
    }
}
