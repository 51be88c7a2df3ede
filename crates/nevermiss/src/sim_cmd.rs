//! `nevermiss sim ...`: the stateful-pipeline hazard simulator (docs/hazard-sim.md).
//!
//! Exit codes: 0 success; 1 the run produced no result (no complete batch); 2 bad arguments,
//! unreadable or malformed input, or an output that cannot be written.

use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use nevermiss_sim::keys::paper_keys;
use nevermiss_sim::model::parse_rate;
use nevermiss_sim::sweep::{
    self, distinct_per_window, qlen_str, Prepared, Report, SweepResults, SweepSpec, TraceSummary,
};
use nevermiss_sim::synth::{parse_count, SizeSource, SynthSpec};
use nevermiss_sim::{
    BatchConfig, HashMode, KeySpec, LockConfig, ModelConfig, SkipPolicy, Timing, TraceSource,
};
use std::path::{Path, PathBuf};

/// Subcommands; arguments are boxed to keep the enum small.
#[derive(Subcommand)]
pub enum SimCommand {
    /// Generate a synthetic trace and write it as pcap (raw IP, nanosecond timestamps).
    Gen(Box<GenArgs>),
    /// Describe traces: packets kept and skipped, read cycles, distinct keys per 1M packets.
    Info(Box<InfoArgs>),
    /// Fraction of data hazards (FDH) for pipelines of N stages (the paper's Fig. 3).
    Hazards(Box<HazardArgs>),
    /// Run the locking scheme for one configuration (the paper's §5).
    Lock(Box<LockArgs>),
    /// Sweep N, Q, Q_len, W and keys in parallel; write CSV and JSON.
    Sweep(Box<SweepArgs>),
}

/// Failure of a subcommand: message and exit code.
struct Fail(u8, String);

impl<E: std::fmt::Display> From<E> for Fail {
    fn from(e: E) -> Self {
        Fail(2, e.to_string())
    }
}

pub fn run(cmd: SimCommand) -> u8 {
    let r = match cmd {
        SimCommand::Gen(a) => gen(*a),
        SimCommand::Info(a) => info(*a),
        SimCommand::Hazards(a) => hazards(*a),
        SimCommand::Lock(a) => lock(*a),
        SimCommand::Sweep(a) => sweep_cmd(*a),
    };
    match r {
        Ok(()) => 0,
        Err(Fail(code, msg)) => {
            eprintln!("error: {msg}");
            code
        }
    }
}

fn parse_source(s: &str) -> Result<TraceSource, String> {
    s.parse()
        .map_err(|e: nevermiss_sim::ParseError| e.to_string())
}

/// A comma-separated list given as one argument.
#[derive(Clone, Debug)]
pub struct List<T>(Vec<T>);

fn parse_key_list(s: &str) -> Result<List<KeySpec>, String> {
    s.split(',')
        .map(|k| {
            k.parse()
                .map_err(|e: nevermiss_sim::ParseError| e.to_string())
        })
        .collect::<Result<_, _>>()
        .map(List)
}

/// `1..30`, `1,4,8,16`, `1..5,10`.
fn parse_u32_list(s: &str) -> Result<Vec<u32>, String> {
    let mut v = Vec::new();
    for part in s.split(',') {
        let part = part.trim();
        if let Some((a, b)) = part.split_once("..") {
            let a: u32 = a
                .trim()
                .parse()
                .map_err(|_| format!("`{part}`: bad range start"))?;
            let b: u32 = b
                .trim()
                .trim_start_matches('=')
                .parse()
                .map_err(|_| format!("`{part}`: bad range end"))?;
            if b < a || b - a > 100_000 {
                return Err(format!("`{part}`: bad range"));
            }
            v.extend(a..=b);
        } else {
            v.push(
                part.parse()
                    .map_err(|_| format!("`{part}` is not a whole number"))?,
            );
        }
    }
    if v.is_empty() {
        return Err("empty list".into());
    }
    Ok(v)
}

fn parse_stages(s: &str) -> Result<List<u32>, String> {
    let v = parse_u32_list(s)?;
    if v.contains(&0) {
        return Err("N must be at least 1".into());
    }
    Ok(List(v))
}

fn parse_queue_list(s: &str) -> Result<List<u32>, String> {
    let v = parse_u32_list(s)?;
    if v.contains(&0) {
        return Err("Q must be at least 1".into());
    }
    Ok(List(v))
}

/// A queue length: at least 1 (the head-of-line slot), or `inf`.
fn parse_qlen(s: &str) -> Result<Option<u32>, String> {
    match s.trim() {
        "inf" | "infinite" => Ok(None),
        t => match t.parse::<u32>() {
            Ok(0) => Err("a queue length is at least 1 (the head-of-line slot), or inf".into()),
            Ok(n) => Ok(Some(n)),
            Err(_) => Err(format!("`{t}` is not a queue length (a number or inf)")),
        },
    }
}

/// A queue length: `None` is infinite.
#[derive(Clone, Copy, Debug)]
pub struct QueueLen(Option<u32>);

fn parse_queue_len(s: &str) -> Result<QueueLen, String> {
    parse_qlen(s).map(QueueLen)
}

fn parse_qlen_list(s: &str) -> Result<List<Option<u32>>, String> {
    s.split(',')
        .map(parse_qlen)
        .collect::<Result<_, _>>()
        .map(List)
}

fn parse_width(s: &str) -> Result<u8, String> {
    let w: u8 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a width in bits"))?;
    if w > 16 {
        return Err("W is at most 16 bits (the hash is CRC-16)".into());
    }
    Ok(w)
}

fn parse_width_list(s: &str) -> Result<List<u8>, String> {
    s.split(',')
        .map(parse_width)
        .collect::<Result<_, _>>()
        .map(List)
}

fn parse_fraction_list(s: &str) -> Result<List<f64>, String> {
    s.split(',')
        .map(|x| {
            let v: f64 = x
                .trim()
                .parse()
                .map_err(|_| format!("`{x}` is not a number"))?;
            if !(0.0..=1.0).contains(&v) {
                return Err(format!("`{x}` is not a fraction between 0 and 1"));
            }
            Ok(v)
        })
        .collect::<Result<_, _>>()
        .map(List)
}

fn parse_positive_count(s: &str) -> Result<u32, String> {
    let v = parse_count(s).map_err(|e| e.to_string())?;
    if v == 0 || v > u64::from(u32::MAX) {
        return Err(format!("`{s}` must be between 1 and {}", u32::MAX));
    }
    Ok(v as u32)
}

#[derive(Args)]
pub struct TraceArgs {
    /// A pcap/pcapng file; several joined by `+` are merged by timestamp; or
    /// `synthetic:dist=FILE,flows=N,zipf=S,packets=N,seed=N`. Repeat to pool the batches of
    /// several traces.
    #[arg(long = "trace", short = 't', required = true, value_parser = parse_source)]
    traces: Vec<TraceSource>,
}

#[derive(Args)]
pub struct ModelArgs {
    /// Bytes read per clock cycle.
    #[arg(long, default_value_t = 80, value_parser = clap::value_parser!(u32).range(1..))]
    chunk: u32,
    /// Use the trace's timestamps at this line rate (bit/s, e.g. 640G; the clock is
    /// rate / (8 * chunk)); default: packets back to back.
    #[arg(long, value_parser = parse_rate)]
    line_rate: Option<f64>,
    /// Multiply timestamp gaps by this factor (with --line-rate).
    #[arg(long, default_value_t = 1.0)]
    time_scale: f64,
    /// Packets per batch.
    #[arg(long, default_value = "100000", value_parser = parse_positive_count)]
    batch: u32,
    /// At most this many batches per trace.
    #[arg(long, value_parser = parse_positive_count)]
    max_batches: Option<u32>,
    /// Packets skipped after each batch.
    #[arg(long, value_parser = parse_count)]
    skip: Option<u64>,
    /// opp-sim's sampling: at most 5 batches per trace and its skip rule.
    #[arg(long, conflicts_with_all = ["skip", "max_batches"])]
    opp_sampling: bool,
    /// Also report a final batch with fewer packets than --batch.
    #[arg(long)]
    keep_partial: bool,
}

impl ModelArgs {
    fn model(&self) -> Result<ModelConfig, Fail> {
        if !(self.time_scale.is_finite() && self.time_scale > 0.0) {
            return Err(Fail(2, "--time-scale must be positive".into()));
        }
        let timing = match self.line_rate {
            None => Timing::BackToBack,
            Some(r) => Timing::Timestamps {
                clock_hz: r / (8.0 * f64::from(self.chunk)),
                time_scale: self.time_scale,
            },
        };
        let mut batch = if self.opp_sampling {
            BatchConfig::opp_sim()
        } else {
            BatchConfig::default()
        };
        batch.size = self.batch;
        if let Some(m) = self.max_batches {
            batch.max_batches = Some(m);
        }
        if let Some(k) = self.skip {
            batch.skip = SkipPolicy::Packets(k);
        }
        batch.keep_partial = self.keep_partial;
        Ok(ModelConfig {
            chunk: self.chunk,
            timing,
            batch,
        })
    }
}

fn load(
    traces: &[TraceSource],
    keys: &[KeySpec],
    hash: HashMode,
    model: &ModelConfig,
) -> Result<Vec<Prepared>, Fail> {
    let mut out = Vec::new();
    for src in traces {
        let t = src.load(keys, hash)?;
        let p = Prepared::new(t, model);
        if p.schedule.batches.is_empty() {
            return Err(Fail(
                1,
                format!(
                    "trace {} has {} usable packets, fewer than one batch of {} (use --batch or --keep-partial)",
                    p.trace.name,
                    p.trace.len(),
                    model.batch.size
                ),
            ));
        }
        out.push(p);
    }
    Ok(out)
}

fn dedup_keys(keys: Vec<List<KeySpec>>, default: Vec<KeySpec>) -> Vec<KeySpec> {
    let mut out: Vec<KeySpec> = Vec::new();
    for k in keys.into_iter().flat_map(|l| l.0) {
        if !out.contains(&k) {
            out.push(k);
        }
    }
    if out.is_empty() {
        default
    } else {
        out
    }
}

fn progress_bar(total: u64, quiet: bool) -> ProgressBar {
    if quiet || total == 0 {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(
        "{elapsed_precise} [{bar:40}] {percent:>3}% {human_pos}/{human_len} packet-runs, eta {eta}",
    ) {
        pb.set_style(style.progress_chars("=> "));
    }
    pb
}

fn print_trace_header(traces: &[Prepared], chunk: u32) {
    for p in traces {
        let s = TraceSummary::of(p, chunk);
        outln!(
            "trace {}: {} packets ({} skipped), {} batches, mean read cycles {:.4}",
            s.name,
            s.packets,
            s.stats.skipped(),
            s.batches,
            s.mean_read_cycles
        );
    }
}

fn fmt_opt(v: Option<f64>, prec: usize) -> String {
    v.map_or_else(|| "-".to_string(), |x| format!("{x:.prec$}"))
}

// ---------------------------------------------------------------- gen

#[derive(Args)]
pub struct GenArgs {
    /// Packet-size distribution file (`<IP length> <fraction>` lines, `#` comments).
    #[arg(long, conflicts_with = "size")]
    dist: Option<PathBuf>,
    /// Give every packet this IP length (20 to 65535) instead of drawing from a distribution.
    #[arg(long, value_parser = clap::value_parser!(u16).range(i64::from(nevermiss_sim::synth::MIN_IP_LEN)..))]
    size: Option<u16>,
    /// Number of flows (distinct 5-tuples).
    #[arg(long, default_value = "100000", value_parser = parse_positive_count)]
    flows: u32,
    /// Zipf exponent of flow popularity (0 = uniform).
    #[arg(long, default_value_t = 0.0)]
    zipf: f64,
    /// Number of packets.
    #[arg(long, default_value = "1000000", value_parser = parse_count)]
    packets: u64,
    /// RNG seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Distinct source addresses (default: one per flow).
    #[arg(long, value_parser = parse_positive_count)]
    srcs: Option<u32>,
    /// Distinct destination addresses (default: one per flow).
    #[arg(long, value_parser = parse_positive_count)]
    dsts: Option<u32>,
    /// Distinct destination /16 prefixes.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=65536))]
    prefixes: Option<u32>,
    /// Fraction of TCP flows (the rest are UDP).
    #[arg(long, default_value_t = 0.8)]
    tcp: f64,
    /// Line rate spacing the timestamps back to back (bit/s).
    #[arg(long, default_value = "640G", value_parser = parse_rate)]
    rate: f64,
    /// Output pcap file.
    #[arg(long, short = 'o')]
    out: PathBuf,
}

fn gen(a: GenArgs) -> Result<(), Fail> {
    let sizes = match (a.dist, a.size) {
        (Some(d), None) => SizeSource::Dist(d),
        (None, Some(s)) => SizeSource::Fixed(s),
        _ => return Err(Fail(2, "give --dist FILE or --size BYTES".into())),
    };
    if !(a.zipf.is_finite() && a.zipf >= 0.0) {
        return Err(Fail(2, "--zipf must be a number >= 0".into()));
    }
    if !(0.0..=1.0).contains(&a.tcp) {
        return Err(Fail(2, "--tcp must be a fraction between 0 and 1".into()));
    }
    let spec = SynthSpec {
        sizes,
        flows: a.flows,
        zipf: a.zipf,
        packets: a.packets,
        seed: a.seed,
        srcs: a.srcs,
        dsts: a.dsts,
        prefixes: a.prefixes,
        tcp: a.tcp,
        rate: a.rate,
    };
    let n = spec.write_pcap(&a.out)?;
    outln!(
        "wrote {n} packets to {} (synthetic:{spec})",
        a.out.display()
    );
    Ok(())
}

// ---------------------------------------------------------------- info

#[derive(Args)]
pub struct InfoArgs {
    #[command(flatten)]
    trace: TraceArgs,
    /// Flow keys to count (comma-separated or repeated); default: the paper's five.
    #[arg(long = "key", short = 'k', value_parser = parse_key_list)]
    keys: Vec<List<KeySpec>>,
    /// Bytes read per clock cycle.
    #[arg(long, default_value_t = 80, value_parser = clap::value_parser!(u32).range(1..))]
    chunk: u32,
}

fn info(a: InfoArgs) -> Result<(), Fail> {
    let keys = dedup_keys(a.keys, paper_keys());
    for src in &a.trace.traces {
        let t = src.load(&keys, HashMode::Exact)?;
        let s = &t.stats;
        outln!("trace {}", t.name);
        outln!(
            "  frames {}  kept {}  skipped: not-ipv4 {} not-tcp/udp {} fragments {} truncated {} malformed {} unsupported-link {}",
            s.frames, s.kept, s.not_ipv4, s.not_tcp_udp, s.fragments, s.truncated, s.malformed, s.unsupported_link_type
        );
        if t.is_empty() {
            continue;
        }
        let cyc: u64 = t
            .lens
            .iter()
            .map(|&l| u64::from(nevermiss_sim::model::read_cycles(l, a.chunk)))
            .sum();
        let mean = cyc as f64 / t.len() as f64;
        let bytes: u64 = t.lens.iter().map(|&l| u64::from(l)).sum();
        outln!(
            "  mean IP length {:.1} B  mean read cycles {:.4}  global-key FDH plateau 1/mean {:.4}",
            bytes as f64 / t.len() as f64,
            mean,
            1.0 / mean
        );
        let window = 1_000_000.min(t.len());
        outln!("  distinct keys per {window} packets:");
        for c in &t.keys {
            let ids = c.ids.as_deref().unwrap_or(&[]);
            outln!(
                "    {:<28} {}  (whole trace {})",
                c.spec.to_string(),
                fmt_opt(distinct_per_window(ids, c.distinct, window), 1),
                c.distinct
            );
        }
    }
    Ok(())
}

// ---------------------------------------------------------------- hazards

#[derive(Args)]
pub struct HazardArgs {
    #[command(flatten)]
    trace: TraceArgs,
    /// Flow keys (comma-separated or repeated): global, 5tuple, ipdst, ipdst16, ipsrc+ipdst,
    /// bytes:ip[a..b]+l4[c..d].
    #[arg(long = "key", short = 'k', value_parser = parse_key_list)]
    keys: Vec<List<KeySpec>>,
    /// Pipeline lengths N, e.g. 1..30 or 2,10,20.
    #[arg(long, short = 'N', default_value = "1..30", value_parser = parse_stages)]
    stages: List<u32>,
    /// Compare keys by CRC-16 digest as the paper does, or exactly.
    #[arg(long, default_value = "crc16")]
    hash: HashMode,
    #[command(flatten)]
    model: ModelArgs,
    /// Write the rows as CSV.
    #[arg(long)]
    csv: Option<PathBuf>,
    /// Write rows, parameters and per-batch samples as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
}

fn hazards(a: HazardArgs) -> Result<(), Fail> {
    let model = a.model.model()?;
    let keys = dedup_keys(a.keys, vec![KeySpec::Global]);
    let traces = load(&a.trace.traces, &keys, a.hash, &model)?;
    let spec = SweepSpec {
        keys,
        ns: a.stages.0.clone(),
        queues: vec![],
        qlens: vec![],
        w_bits: vec![],
        hazards: true,
        lock: false,
        tolerances: vec![],
        hash: a.hash,
    };
    let res = spec.run(&traces, a.json.is_some(), &|_| {})?;
    print_trace_header(&traces, model.chunk);
    outln!(
        "{:<16} {:>4} {:>10} {:>10} {:>10} {:>12}",
        "key",
        "N",
        "FDH p99",
        "FDH mean",
        "FDH max",
        "pkt-FDH p99"
    );
    for r in &res.hazards {
        outln!(
            "{:<16} {:>4} {:>10} {:>10} {:>10} {:>12}",
            r.key,
            r.n,
            fmt_opt(r.fdh_p99, 5),
            fmt_opt(r.fdh_mean, 5),
            fmt_opt(r.fdh_max, 5),
            fmt_opt(r.fdh_packets_p99, 5)
        );
    }
    if let Some(p) = &a.csv {
        sweep::write_csv(p, &res.hazards)?;
    }
    if let Some(p) = &a.json {
        write_report(p, &model, &spec, &traces, &res)?;
    }
    Ok(())
}

fn write_report(
    path: &Path,
    model: &ModelConfig,
    spec: &SweepSpec,
    traces: &[Prepared],
    res: &SweepResults,
) -> Result<(), Fail> {
    let report = Report {
        tool: "nevermiss sim",
        version: env!("CARGO_PKG_VERSION"),
        model,
        sweep: spec,
        traces: traces
            .iter()
            .map(|p| TraceSummary::of(p, model.chunk))
            .collect(),
        results: res,
    };
    sweep::write_json(path, &report)?;
    Ok(())
}

// ---------------------------------------------------------------- lock

#[derive(Args)]
pub struct LockArgs {
    #[command(flatten)]
    trace: TraceArgs,
    /// Flow key.
    #[arg(long = "key", short = 'k', default_value = "5tuple")]
    key: KeySpec,
    /// Pipeline stages between state read and write.
    #[arg(short = 'N', long = "stages", value_parser = clap::value_parser!(u32).range(1..))]
    n: u32,
    /// Number of queues.
    #[arg(short = 'Q', long = "queues", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..))]
    q: u32,
    /// Queue length, head-of-line slot included, or inf.
    #[arg(long, default_value = "100", value_parser = parse_queue_len)]
    qlen: QueueLen,
    /// Lock hash width in bits (2^W buckets).
    #[arg(short = 'W', long = "width", default_value = "4", value_parser = parse_width)]
    w: u8,
    #[command(flatten)]
    model: ModelArgs,
    /// Print every batch.
    #[arg(long)]
    batches: bool,
    /// Write the result, parameters and per-batch samples as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
}

fn lock(a: LockArgs) -> Result<(), Fail> {
    let model = a.model.model()?;
    let cfg = LockConfig {
        n: a.n,
        queues: a.q,
        qlen: a.qlen.0,
        w_bits: a.w,
    };
    cfg.validate()?;
    let traces = load(
        &a.trace.traces,
        std::slice::from_ref(&a.key),
        HashMode::Crc16,
        &model,
    )?;
    let spec = SweepSpec {
        keys: vec![a.key.clone()],
        ns: vec![a.n],
        queues: vec![a.q],
        qlens: vec![a.qlen.0],
        w_bits: vec![a.w],
        hazards: false,
        lock: true,
        tolerances: vec![0.0, 0.001, 0.01],
        hash: HashMode::Crc16,
    };
    let res = spec.run(&traces, true, &|_| {})?;
    print_trace_header(&traces, model.chunk);
    let r = &res.lock[0];
    outln!(
        "key {}  N {}  Q {}  Q_len {}  W {} bits",
        r.key,
        r.n,
        r.q,
        r.qlen,
        r.w_bits
    );
    if a.batches {
        outln!(
            "{:>5} {:>8} {:>8} {:>7} {:>9} {:>9} {:>9} {:>9} {:>9}",
            "batch",
            "thrpt",
            "drop",
            "stall",
            "lat p50",
            "lat p99",
            "lat max",
            "qmax p99",
            "qsum p99"
        );
        for (i, b) in res.lock_batches[0].batches.iter().enumerate() {
            outln!(
                "{:>5} {:>8.5} {:>8.5} {:>7.4} {:>9} {:>9} {:>9} {:>9} {:>9}",
                i,
                b.throughput(),
                b.drop_fraction(),
                b.stall_cycles as f64 / b.cycles as f64,
                fmt_opt(b.latency.map(|s| s.median), 1),
                fmt_opt(b.latency.map(|s| s.p99), 1),
                fmt_opt(b.latency.map(|s| s.max), 0),
                fmt_opt(b.queue_max.map(|s| s.p99), 1),
                fmt_opt(b.queue_sum.map(|s| s.p99), 1),
            );
        }
    }
    outln!("batches                    {}", r.batches);
    outln!("throughput min             {}", fmt_opt(r.thrpt_min, 6));
    outln!("throughput overall         {}", fmt_opt(r.thrpt_overall, 6));
    outln!("drop fraction p99          {}", fmt_opt(r.drop_p99, 6));
    outln!("drop fraction max          {}", fmt_opt(r.drop_max, 6));
    outln!(
        "latency p99 max (cycles)   {}{}",
        fmt_opt(r.latency_p99_max, 1),
        if r.latency_valid {
            ""
        } else {
            "  (3+ batches below 99% throughput: the paper does not plot it)"
        }
    );
    outln!("latency max (cycles)       {}", fmt_opt(r.latency_max, 0));
    outln!(
        "queue max p99 max          {}",
        fmt_opt(r.queue_max_p99_max, 1)
    );
    outln!(
        "queue sum p99 max          {}",
        fmt_opt(r.queue_sum_p99_max, 1)
    );
    outln!(
        "stall fraction mean        {}",
        fmt_opt(r.stall_fraction_mean, 5)
    );
    if let Some(p) = &a.json {
        write_report(p, &model, &spec, &traces, &res)?;
    }
    Ok(())
}

// ---------------------------------------------------------------- sweep

#[derive(Args)]
pub struct SweepArgs {
    #[command(flatten)]
    trace: TraceArgs,
    /// Flow keys (comma-separated or repeated); default: global,5tuple,ipdst,ipdst16,ipsrc+ipdst.
    #[arg(long = "key", short = 'k', value_parser = parse_key_list)]
    keys: Vec<List<KeySpec>>,
    /// Pipeline lengths N.
    #[arg(long, short = 'N', default_value = "1..30", value_parser = parse_stages)]
    stages: List<u32>,
    /// Numbers of queues Q.
    #[arg(long, short = 'Q', default_value = "1,4,8,16", value_parser = parse_queue_list)]
    queues: List<u32>,
    /// Queue lengths (head-of-line slot included); inf = infinite.
    #[arg(long, default_value = "inf,10,100", value_parser = parse_qlen_list)]
    qlen: List<Option<u32>>,
    /// Lock hash widths W in bits.
    #[arg(long, short = 'W', default_value = "4", value_parser = parse_width_list)]
    width: List<u8>,
    /// Drop tolerances for "maximum N" (0, 0.001, 0.01 = 100%, 99.9%, 99% throughput).
    #[arg(long, default_value = "0,0.001,0.01", value_parser = parse_fraction_list)]
    tolerances: List<f64>,
    /// Skip the hazard detector.
    #[arg(long)]
    no_hazards: bool,
    /// Skip the locking scheme.
    #[arg(long)]
    no_lock: bool,
    /// Key comparison of the hazard detector.
    #[arg(long, default_value = "crc16")]
    hash: HashMode,
    #[command(flatten)]
    model: ModelArgs,
    /// Output directory (created): hazards.csv, lock.csv, max_n.csv, results.json.
    #[arg(long, short = 'o')]
    out: PathBuf,
    /// Worker threads (default: all cores).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    threads: Option<u32>,
    /// Include every batch's samples in results.json.
    #[arg(long)]
    per_batch: bool,
    /// No progress bar.
    #[arg(long, short = 'q')]
    quiet: bool,
}

fn sweep_cmd(a: SweepArgs) -> Result<(), Fail> {
    if a.no_hazards && a.no_lock {
        return Err(Fail(
            2,
            "--no-hazards and --no-lock leave nothing to run".into(),
        ));
    }
    let model = a.model.model()?;
    let flat = |v: List<u32>| -> Vec<u32> {
        let mut o = v.0;
        o.sort_unstable();
        o.dedup();
        o
    };
    let queues = flat(a.queues);
    let mut qlens: Vec<Option<u32>> = Vec::new();
    for q in a.qlen.0 {
        if !qlens.contains(&q) {
            qlens.push(q);
        }
    }
    let mut w_bits: Vec<u8> = a.width.0;
    w_bits.sort_unstable();
    w_bits.dedup();
    let mut tolerances: Vec<f64> = a.tolerances.0;
    tolerances.dedup();
    let spec = SweepSpec {
        keys: dedup_keys(a.keys, paper_keys()),
        ns: flat(a.stages),
        queues,
        qlens,
        w_bits,
        hazards: !a.no_hazards,
        lock: !a.no_lock,
        tolerances,
        hash: a.hash,
    };
    std::fs::create_dir_all(&a.out).map_err(|e| Fail(2, format!("{}: {e}", a.out.display())))?;
    let start = std::time::Instant::now();
    let traces = load(&a.trace.traces, &spec.keys, spec.hash, &model)?;
    let loaded = start.elapsed();
    if !a.quiet {
        print_trace_header(&traces, model.chunk);
        eprintln!(
            "loaded in {:.2} s; running {} hazard and {} lock configurations",
            loaded.as_secs_f64(),
            if spec.hazards { spec.keys.len() } else { 0 },
            if spec.lock {
                spec.lock_configs().len()
            } else {
                0
            }
        );
    }
    let pb = progress_bar(spec.work(&traces), a.quiet);
    let inc = |n: u64| pb.inc(n);
    let res = sweep::with_threads(a.threads.map(|t| t as usize), || {
        spec.run(&traces, a.per_batch, &inc)
    })??;
    pb.finish_and_clear();
    if spec.hazards {
        sweep::write_csv(&a.out.join("hazards.csv"), &res.hazards)?;
    }
    if spec.lock {
        sweep::write_csv(&a.out.join("lock.csv"), &res.lock)?;
        sweep::write_csv(&a.out.join("max_n.csv"), &res.max_n)?;
    }
    write_report(&a.out.join("results.json"), &model, &spec, &traces, &res)?;
    let total = start.elapsed();
    if !a.quiet {
        print_max_n(&res);
    }
    outln!(
        "wrote {} hazard rows, {} lock rows, {} max-N rows to {} in {:.2} s",
        res.hazards.len(),
        res.lock.len(),
        res.max_n.len(),
        a.out.display(),
        total.as_secs_f64()
    );
    Ok(())
}

fn print_max_n(res: &SweepResults) {
    if res.max_n.is_empty() {
        return;
    }
    outln!(
        "{:<16} {:>3} {:>6} {:>3} {:>8} {:>6} {:>12}",
        "key",
        "Q",
        "Q_len",
        "W",
        "thrpt",
        "max N",
        "lat p99 max"
    );
    for r in &res.max_n {
        outln!(
            "{:<16} {:>3} {:>6} {:>3} {:>7.1}% {:>6} {:>12}",
            r.key,
            r.q,
            qlen_str(Some(r.qlen)),
            r.w_bits,
            r.target_throughput * 100.0,
            r.max_n.map_or_else(|| "-".into(), |n| n.to_string()),
            fmt_opt(r.latency_p99_max, 1)
        );
    }
}
