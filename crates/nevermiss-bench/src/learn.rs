//! `nevermiss bench learn`: papers/001's comparison of the two ways a P4 program learns a flow.
//!
//! The same flow table (exact match on the IPv4 destination address, one key per flow) learns
//! its entries
//! - **add-on-miss** (examples/bench/learn-add-on-miss.p4): the miss action calls `add_entry`,
//!   so the flow's entry exists once its first packet has been processed;
//! - **digest** (examples/bench/learn-digest.p4): a packet that misses sends a digest (key and
//!   value); the server (`nevermiss serve`'s, in process, on 127.0.0.1) sends it to the primary
//!   in a DigestList on its next housekeeping tick, and a controller task (a tonic client over
//!   TCP) inserts the entry with a P4Runtime Write and acknowledges the list. Packets of the
//!   flow miss until the entry is there.
//!
//! Traffic is generated in process: new flows arrive at `flow_rate` flows/s, each sends
//! `packets` packets `interval_ns` apart; one worker thread runs every packet at its scheduled
//! time, so the packets of a flow are processed in order by one worker. Per flow the bench
//! counts the packets that missed before the entry existed and the time from the flow's first
//! packet to its first packet that hit (both on the schedule), and the time until the entry
//! existed (wall clock: after the inserting packet, or when the Write that inserted it
//! returned). After the traffic one more packet per flow checks that every flow hits.
//!
//! Documentation of the flags, the output and the JSON: docs/bench.md.

use crate::error::BenchError;
use crate::hdr;
use crate::p4rt::{self, Client, Percentiles, Server};
use crate::scenario::table_size_for;
use nevermiss_io::gen::{KeyEvent, KeyKind, TwoPhaseConfig, TwoPhaseGen};
use nevermiss_p4rt::pb::p4::v1 as p4;
use nevermiss_p4rt::server::ServeOptions;
use nevermiss_runtime::TableOps;
use nevermiss_runtime::{Switch, Worker};
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, oneshot};

/// Most flows of one run.
pub const MAX_FLOWS: u64 = 1 << 20;
/// Most packets of one run (flows × packets per flow).
pub const MAX_PACKETS: u64 = 1 << 26;
/// Longest run the schedule may describe.
pub const MAX_RUN: Duration = Duration::from_secs(3600);
/// The first flow's key (11.0.0.0); flow `i` has key `KEY_BASE + i`.
const KEY_BASE: u32 = 0x0b00_0000;
/// Per-update status of a Write refused because the entry exists (gRPC ALREADY_EXISTS).
const ALREADY_EXISTS: i32 = tonic::Code::AlreadyExists as i32;
/// Most updates of one Write: a refused Write of this many still carries every update's
/// status in its details (the server trims details past 5 KiB, about 120 updates).
const UPDATES_PER_WRITE: usize = 64;

/// How the table learns its entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Variant {
    /// `add_entry` in the miss action.
    AddOnMiss,
    /// A digest to the controller, which inserts the entry with P4Runtime.
    Digest,
}

impl Variant {
    /// Both variants, add-on-miss first.
    pub const ALL: [Variant; 2] = [Variant::AddOnMiss, Variant::Digest];

    /// The variant's name on the command line and in the report (`add-on-miss`, `digest`).
    pub fn name(self) -> &'static str {
        match self {
            Variant::AddOnMiss => "add-on-miss",
            Variant::Digest => "digest",
        }
    }

    /// Parses a name of [`Variant::name`].
    pub fn parse(s: &str) -> Result<Variant, BenchError> {
        Variant::ALL
            .into_iter()
            .find(|v| v.name() == s.trim())
            .ok_or_else(|| BenchError::Unknown {
                what: "variant",
                name: s.to_string(),
                known: "add-on-miss, digest",
            })
    }

    /// The program's path under examples/.
    pub fn program_name(self) -> &'static str {
        match self {
            Variant::AddOnMiss => "bench/learn-add-on-miss.p4",
            Variant::Digest => "bench/learn-digest.p4",
        }
    }

    /// The program in the source tree (found from this crate's manifest directory, as the
    /// other bench programs are).
    pub fn program(self) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../examples")
            .join(self.program_name())
    }
}

/// The digest configuration the controller writes (P4Runtime `DigestEntry.Config`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct DigestConfig {
    /// Most digests per `DigestList` (P4Runtime §11.8 `max_list_size`; 1: a list per digest).
    pub max_list_size: i32,
    /// Longest a digest waits for its list to fill before the list is sent (`max_timeout_ns`).
    pub max_timeout_ns: i64,
    /// How long the server suppresses a digest already sent in a list the controller has not
    /// acknowledged (`ack_timeout_ns`).
    pub ack_timeout_ns: i64,
}

/// What to measure.
#[derive(Clone, Debug)]
pub struct LearnOptions {
    /// The variants measured, in this order, alternating run by run.
    pub variants: Vec<Variant>,
    /// Flows per run.
    pub flows: u64,
    /// New flows per second.
    pub flow_rate: u64,
    /// Packets per flow.
    pub packets: u64,
    /// Time between two packets of a flow.
    pub interval_ns: u64,
    /// Runs of each variant.
    pub runs: usize,
    /// The server's housekeeping period (digest lists are sent on its ticks).
    pub tick_ns: u64,
    /// The digest configuration the controller writes (digest variant).
    pub digest: DigestConfig,
    /// Seed of the flow arrivals (run `k` uses `seed + k`).
    pub seed: u64,
    /// Write HdrHistogram interval logs here.
    pub hdr_dir: Option<PathBuf>,
}

impl Default for LearnOptions {
    fn default() -> LearnOptions {
        LearnOptions {
            variants: Variant::ALL.to_vec(),
            flows: 1000,
            flow_rate: 1000,
            packets: 100,
            interval_ns: 1_000_000,
            runs: 3,
            tick_ns: ServeOptions::default().tick.as_nanos() as u64,
            digest: DigestConfig {
                max_list_size: 1,
                max_timeout_ns: 0,
                ack_timeout_ns: 1_000_000_000,
            },
            seed: 1,
            hdr_dir: None,
        }
    }
}

impl LearnOptions {
    /// Arrival times of the flows of run `run` (ns after its start): a Poisson process of
    /// `flow_rate` flows/s (exponential gaps), the first flow at 0. Fixed by the seed.
    fn arrivals(&self, run: usize) -> Vec<u64> {
        let mut x = self
            .seed
            .wrapping_add(run as u64)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            | 1;
        let mut t = 0.0f64;
        let mean_gap_ns = 1e9 / self.flow_rate as f64;
        (0..self.flows)
            .map(|i| {
                if i > 0 {
                    // xorshift64*; u uniform in (0, 1].
                    x ^= x >> 12;
                    x ^= x << 25;
                    x ^= x >> 27;
                    let r = x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11;
                    let u = (r as f64 + 1.0) / (1u64 << 53) as f64;
                    t += -u.ln() * mean_gap_ns;
                }
                t as u64
            })
            .collect()
    }

    /// When the last packet of a run is due, on average.
    fn schedule_ns(&self) -> u128 {
        u128::from(self.flows - 1) * 1_000_000_000 / u128::from(self.flow_rate)
            + u128::from(self.packets - 1) * u128::from(self.interval_ns)
    }

    /// Checks every figure; the message names the flag.
    pub fn validate(&self) -> Result<(), BenchError> {
        if self.variants.is_empty() {
            return Err(BenchError::Options(
                "--variant: give add-on-miss, digest or both".into(),
            ));
        }
        if !(1..=MAX_FLOWS).contains(&self.flows) {
            return Err(BenchError::Options(format!(
                "--flows {}: must be 1..={MAX_FLOWS}",
                self.flows
            )));
        }
        if !(1..=10_000_000).contains(&self.flow_rate) {
            return Err(BenchError::Options(format!(
                "--flow-rate {}: must be 1..=10000000 flows/s",
                self.flow_rate
            )));
        }
        if self.packets == 0 {
            return Err(BenchError::Options("--packets must be at least 1".into()));
        }
        if self.flows.saturating_mul(self.packets) > MAX_PACKETS {
            return Err(BenchError::Options(format!(
                "--flows {} × --packets {}: at most {MAX_PACKETS} packets per run",
                self.flows, self.packets
            )));
        }
        if self.interval_ns == 0 {
            return Err(BenchError::Options(
                "--interval must be longer than 0".into(),
            ));
        }
        if self.runs == 0 {
            return Err(BenchError::Options("--runs must be at least 1".into()));
        }
        if !(1_000_000..=10_000_000_000).contains(&self.tick_ns) {
            return Err(BenchError::Options(format!(
                "--tick {} ns: must be 1ms..10s (the server's timer has millisecond resolution)",
                self.tick_ns
            )));
        }
        let d = self.digest;
        if d.max_list_size < 0 || d.max_timeout_ns < 0 || d.ack_timeout_ns < 0 {
            return Err(BenchError::Options(
                "digest config values must not be negative".into(),
            ));
        }
        if self.schedule_ns() > MAX_RUN.as_nanos() {
            return Err(BenchError::Options(format!(
                "a run would last {:.0} s (flows / flow rate + packets × interval); at most {} s",
                self.schedule_ns() as f64 / 1e9,
                MAX_RUN.as_secs()
            )));
        }
        Ok(())
    }
}

/// The digest variant's controller side.
#[derive(Clone, Debug, Default, Serialize)]
pub struct DigestStats {
    /// Digests the program packed (one per packet that missed).
    pub digests_packed: u64,
    /// Digests the switch dropped because its queue was full.
    pub digests_dropped: u64,
    /// DigestLists the controller received, and the digests in them (the server filters
    /// duplicates within a list and against sent, unacknowledged lists).
    pub lists_received: u64,
    /// The digests in the lists received.
    pub digests_received: u64,
    /// Write requests (one per list) and their latency at the client.
    pub writes: u64,
    /// The client-side latency of those Writes.
    pub write_latency_ns: Percentiles,
    /// Entries the Writes inserted.
    pub entries_inserted: u64,
    /// Inserts refused because the entry existed (a second digest of a flow, sent after the
    /// first list was acknowledged and before the entry existed).
    pub already_exists: u64,
    /// Inserts refused for another reason.
    pub other_errors: u64,
    /// Digests whose key is no flow of the run (never expected).
    pub unknown_keys: u64,
    /// First packet of a flow → its first digest arrived at the controller (on the stream, before
    /// the controller's queue of lists).
    pub digest_wait_ns: Percentiles,
}

/// One run of a variant.
#[derive(Clone, Debug, Serialize)]
pub struct RunSummary {
    /// The run's number, from 1.
    pub run: usize,
    /// Packets that missed before their flow's entry existed.
    pub misses: u64,
    /// Flows none of whose packets hit.
    pub flows_without_hit: u64,
    /// Median time from a flow's first packet to its first packet that hit (ns, on the schedule).
    pub time_to_first_hit_p50_ns: u64,
    /// Wall time of the run in ms.
    pub wall_ms: u64,
}

/// One variant, all runs together.
#[derive(Clone, Debug, Serialize)]
pub struct VariantReport {
    /// How the table learned.
    pub variant: Variant,
    /// The program (under examples/).
    pub program: String,
    /// Flows and packets of all runs.
    pub flows: u64,
    /// Packets of all runs.
    pub packets: u64,
    /// Packets that missed before their flow's entry existed, in total and per flow.
    pub misses: u64,
    /// Misses per flow: percentiles over all flows of all runs.
    pub misses_per_flow: Percentiles,
    /// Mean misses per flow.
    pub misses_per_flow_mean: f64,
    /// (misses, flows with that many) for every count that occurred.
    pub misses_histogram: Vec<[u64; 2]>,
    /// Packets that missed after their flow had hit (never expected: entries are not removed).
    pub misses_after_first_hit: u64,
    /// Flows none of whose packets hit.
    pub flows_without_hit: u64,
    /// Flows whose check packet after the traffic hit.
    pub flows_hit_at_end: u64,
    /// First packet of the flow → first packet that hit, on the schedule (flows that hit).
    pub time_to_first_hit_ns: Percentiles,
    /// First packet of the flow (scheduled) → its entry existed (wall clock).
    pub time_to_entry_ns: Percentiles,
    /// How late packets were processed after their scheduled time.
    pub lag_ns: Percentiles,
    /// Misses whose add_entry failed (add-on-miss).
    pub insert_failures: u64,
    /// The controller's side (digest variant only).
    pub digest: Option<DigestStats>,
    /// Each run's summary, in order.
    pub runs: Vec<RunSummary>,
}

/// The report.
#[derive(Clone, Debug, Serialize)]
pub struct LearnReport {
    /// Flows per run.
    pub flows: u64,
    /// New flows per second.
    pub flow_rate: u64,
    /// Packets per flow.
    pub packets_per_flow: u64,
    /// Time between two packets of a flow (ns).
    pub interval_ns: u64,
    /// Runs of each variant.
    pub runs: usize,
    /// The server's housekeeping period (ns), on whose ticks digest lists are sent.
    pub tick_ns: u64,
    /// The digest configuration the controller wrote.
    pub digest_config: DigestConfig,
    /// The flow table's declared size (room for every flow, [`crate::scenario::table_size_for`]).
    pub table_size: u64,
    /// One report per variant measured, in the order asked.
    pub variants: Vec<VariantReport>,
}

/// One flow's record, kept by the traffic thread.
#[derive(Clone, Copy, Debug, Default)]
struct FlowRec {
    arrival_ns: u64,
    misses: u64,
    /// Scheduled time of the first packet that hit.
    first_hit_ns: Option<u64>,
    /// Wall time (since the run's start) when add_entry had inserted the entry.
    entry_ns: Option<u64>,
}

struct TrafficOut {
    flows: Vec<FlowRec>,
    packets: u64,
    misses_after_hit: u64,
    insert_failures: u64,
    lag: Vec<u64>,
}

/// Runs the flows of one run on one worker, each packet at its scheduled time.
fn traffic(
    sw: Arc<Switch>,
    opts: &LearnOptions,
    arrivals: &[u64],
    start: Instant,
) -> Result<TrafficOut, BenchError> {
    let gen = TwoPhaseGen::new(TwoPhaseConfig::default())?;
    let mut w = Worker::new(sw.clone(), 1);
    let n = opts.flows;
    let mut flows = vec![FlowRec::default(); n as usize];
    // (due, flow, packet of the flow): the next packet of every active flow.
    let mut heap: BinaryHeap<Reverse<(u64, u32, u64)>> = BinaryHeap::new();
    let mut frames: HashMap<u32, Vec<u8>> = HashMap::new();
    let mut next_flow = 0u64;
    let mut out = TrafficOut {
        flows: Vec::new(),
        packets: 0,
        misses_after_hit: 0,
        insert_failures: 0,
        lag: Vec::with_capacity((n * opts.packets).min(1 << 22) as usize),
    };
    loop {
        let top = heap.peek().map(|Reverse((due, _, _))| *due);
        if next_flow < n {
            let at = arrivals[next_flow as usize];
            if top.is_none_or(|t| at <= t) {
                let f = next_flow as u32;
                flows[f as usize].arrival_ns = at;
                frames.insert(f, flow_frame(&gen, f));
                heap.push(Reverse((at, f, 0)));
                next_flow += 1;
                continue;
            }
        }
        let Some(Reverse((due, f, k))) = heap.pop() else {
            break;
        };
        let target = start + Duration::from_nanos(due);
        wait_until(target);
        out.lag
            .push(Instant::now().saturating_duration_since(target).as_nanos() as u64);
        let frame = frames
            .get(&f)
            .ok_or(BenchError::Internal("internal: a packet of no flow"))?;
        w.process(frame, 0, sw.now_ns());
        let ops = w.last_ops();
        let rec = &mut flows[f as usize];
        out.packets += 1;
        if ops.contains(TableOps::HIT) {
            if rec.first_hit_ns.is_none() {
                rec.first_hit_ns = Some(due);
            }
        } else if !ops.contains(TableOps::MISS) {
            return Err(BenchError::NoTableApplied { packet: k, flow: f });
        } else if rec.first_hit_ns.is_some() {
            out.misses_after_hit += 1;
        } else {
            rec.misses += 1;
            if ops.contains(TableOps::INSERT) {
                if rec.entry_ns.is_none() {
                    rec.entry_ns = Some(start.elapsed().as_nanos() as u64);
                }
            } else if ops.contains(TableOps::INSERT_FULL) || ops.contains(TableOps::INSERT_OTHER) {
                out.insert_failures += 1;
            }
        }
        if k + 1 < opts.packets {
            heap.push(Reverse((due + opts.interval_ns, f, k + 1)));
        } else {
            frames.remove(&f);
        }
    }
    out.flows = flows;
    Ok(out)
}

/// The frame of flow `f`: the generator's 84-byte IPv4/UDP frame with the flow's key as the
/// destination address (checksum included).
fn flow_frame(gen: &TwoPhaseGen, f: u32) -> Vec<u8> {
    let ev = KeyEvent {
        index: u64::from(f),
        key: u64::from(KEY_BASE + f),
        kind: KeyKind::NewKey,
    };
    gen.frame_for(&ev).data().to_vec()
}

/// Sleeps while the target is far, then spins (pacing without a busy core between flows).
fn wait_until(target: Instant) {
    loop {
        let now = Instant::now();
        if now >= target {
            return;
        }
        let left = target - now;
        if left > Duration::from_micros(300) {
            std::thread::sleep(left - Duration::from_micros(200));
        } else {
            std::hint::spin_loop();
        }
    }
}

/// One packet per flow after the traffic: how many hit.
fn check_hits(sw: Arc<Switch>, flows: u64) -> Result<u64, BenchError> {
    let gen = TwoPhaseGen::new(TwoPhaseConfig::default())?;
    let mut w = Worker::new(sw.clone(), 2);
    let mut hits = 0;
    for f in 0..flows as u32 {
        w.process(&flow_frame(&gen, f), 0, sw.now_ns());
        if w.last_ops().contains(TableOps::HIT) {
            hits += 1;
        }
    }
    Ok(hits)
}

/// What the controller saw in one run.
#[derive(Default)]
struct CtlLog {
    stats: DigestStats,
    write_latency: Vec<u64>,
    /// Per flow: when its first digest arrived, when its entry was inserted (ns since the
    /// run's start).
    first_digest_ns: Vec<Option<u64>>,
    installed_ns: Vec<Option<u64>>,
}

struct CtlIds {
    table: u32,
    hit: u32,
    digest: u32,
}

/// A digest's key and value (a struct of two bit strings).
fn digest_fields(d: &p4::P4Data) -> Option<(Vec<u8>, Vec<u8>)> {
    use p4::p4_data::Data;
    let Some(Data::Struct(s)) = &d.data else {
        return None;
    };
    let bits = |i: usize| match s.members.get(i).and_then(|m| m.data.as_ref()) {
        Some(Data::Bitstring(b)) => Some(b.to_vec()),
        _ => None,
    };
    Some((bits(0)?, bits(1)?))
}

/// The controller: for every DigestList, one Write inserting an entry per digest, then the
/// list's ack. Runs until `stop` fires.
async fn controller(
    mut client: Client,
    rx: &mut mpsc::UnboundedReceiver<(Instant, p4::stream_message_response::Update)>,
    mut stop: oneshot::Receiver<()>,
    ids: CtlIds,
    flows: u64,
    start: Instant,
    installed: Arc<AtomicU64>,
) -> Result<CtlLog, BenchError> {
    use p4::stream_message_response::Update as U;
    let mut log = CtlLog {
        first_digest_ns: vec![None; flows as usize],
        installed_ns: vec![None; flows as usize],
        ..CtlLog::default()
    };
    loop {
        let (arrived, dl) = tokio::select! {
            m = rx.recv() => match m {
                Some((at, U::Digest(dl))) => (at, dl),
                Some(_) => continue,
                None => return Err(BenchError::ServerClosedStream),
            },
            _ = &mut stop => return Ok(log),
        };
        let t = arrived.saturating_duration_since(start).as_nanos() as u64;
        log.stats.lists_received += 1;
        let mut updates = Vec::new();
        let mut owners = Vec::new();
        for d in &dl.data {
            log.stats.digests_received += 1;
            let Some((key, value)) = digest_fields(d) else {
                log.stats.unknown_keys += 1;
                continue;
            };
            let k = key.iter().fold(0u64, |a, b| (a << 8) | u64::from(*b));
            let flow = k
                .checked_sub(u64::from(KEY_BASE))
                .filter(|f| *f < flows)
                .map(|f| f as usize);
            match flow {
                Some(f) => {
                    log.first_digest_ns[f].get_or_insert(t);
                }
                None => log.stats.unknown_keys += 1,
            }
            owners.push(flow);
            updates.push(p4rt::update(
                p4::update::Type::Insert,
                p4::TableEntry {
                    table_id: ids.table,
                    r#match: vec![p4rt::exact(1, &key)],
                    action: p4rt::action(ids.hit, &[&value]),
                    ..Default::default()
                },
            ));
        }
        // One Write per chunk: the server keeps a refused Write's per-update details within
        // what gRPC clients accept by default (about 120 updates), so a chunk's statuses are
        // always all there.
        let mut owners = owners.into_iter();
        let mut updates = updates.into_iter().peekable();
        while updates.peek().is_some() {
            let chunk: Vec<p4::Update> = updates.by_ref().take(UPDATES_PER_WRITE).collect();
            let n = chunk.len();
            let t0 = Instant::now();
            let r = client.write_status(chunk).await;
            log.write_latency.push(t0.elapsed().as_nanos() as u64);
            log.stats.writes += 1;
            let done = start.elapsed().as_nanos() as u64;
            let codes = match r {
                Ok(()) => vec![0; n],
                Err(st) => p4rt::update_errors(&st)
                    .filter(|c| c.len() == n)
                    .ok_or(BenchError::WriteRefused(st))?,
            };
            for (flow, code) in owners.by_ref().take(n).zip(codes) {
                match code {
                    0 => {
                        log.stats.entries_inserted += 1;
                        if let Some(f) = flow {
                            if log.installed_ns[f].is_none() {
                                log.installed_ns[f] = Some(done);
                                installed.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                    }
                    ALREADY_EXISTS => log.stats.already_exists += 1,
                    _ => log.stats.other_errors += 1,
                }
            }
        }
        client
            .send(p4::StreamMessageRequest {
                update: Some(p4::stream_message_request::Update::DigestAck(
                    p4::DigestListAck {
                        digest_id: dl.digest_id,
                        list_id: dl.list_id,
                    },
                )),
            })
            .await?;
    }
}

/// One run's raw results.
struct RunData {
    traffic: TrafficOut,
    ctl: Option<CtlLog>,
    hits_at_end: u64,
    digests_dropped: u64,
    start: Duration,
    wall: Duration,
}

/// Runs the benchmark.
pub fn run(opts: &LearnOptions, mut progress: impl FnMut(&str)) -> Result<LearnReport, BenchError> {
    opts.validate()?;
    if let Some(d) = &opts.hdr_dir {
        hdr::prepare_dir(d).map_err(|e| BenchError::Options(format!("--hdr-dir {e}")))?;
    }
    crate::p4rt::on_runtime(run_async(opts, &mut progress))
}

async fn run_async(
    opts: &LearnOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<LearnReport, BenchError> {
    let srv = Server::start(ServeOptions {
        tick: Duration::from_nanos(opts.tick_ns),
        ..ServeOptions::default()
    })?;
    let r = measure(opts, &srv, progress).await;
    srv.stop();
    r
}

async fn measure(
    opts: &LearnOptions,
    srv: &Server,
    progress: &mut dyn FnMut(&str),
) -> Result<LearnReport, BenchError> {
    let bench_start = Instant::now();
    let (mut client, mut rx) = Client::connect_with_messages(srv.addr).await?;
    let table_size = table_size_for(opts.flows);
    let size = table_size.to_string();
    let mut variants = Vec::new();
    let mut hdr_runs: Vec<(Variant, Vec<RunData>)> = Vec::new();
    for &v in &opts.variants {
        let cfg = p4rt::device_config(
            &v.program(),
            v.program_name(),
            &[("FLOW_TABLE_SIZE", &size)],
        )?;
        let mut runs = Vec::new();
        for run in 0..opts.runs {
            client.set_pipeline(cfg.clone()).await?;
            let dev = &srv.dev;
            let sw = dev.pipeline().ok_or(BenchError::NoPipeline)?.sw.clone();
            // Messages of an earlier run's pipeline.
            while rx.try_recv().is_ok() {}
            let installed = Arc::new(AtomicU64::new(0));
            let start = Instant::now();
            let ctl = if v == Variant::Digest {
                let ids = CtlIds {
                    table: p4rt::id_of(dev, "flows")?,
                    hit: p4rt::id_of(dev, "flow_hit")?,
                    digest: p4rt::id_of(dev, "learn_digest")?,
                };
                client
                    .write(vec![p4::Update {
                        r#type: p4::update::Type::Insert as i32,
                        entity: Some(p4::Entity {
                            entity: Some(p4::entity::Entity::DigestEntry(p4::DigestEntry {
                                digest_id: ids.digest,
                                config: Some(p4::digest_entry::Config {
                                    max_timeout_ns: opts.digest.max_timeout_ns,
                                    max_list_size: opts.digest.max_list_size,
                                    ack_timeout_ns: opts.digest.ack_timeout_ns,
                                }),
                            })),
                        }),
                    }])
                    .await?;
                let (stop_tx, stop_rx) = oneshot::channel();
                let (c, inst, flows) = (client.clone(), installed.clone(), opts.flows);
                let mut rx_moved = std::mem::replace(&mut rx, mpsc::unbounded_channel().1);
                let task = tokio::spawn(async move {
                    let r = controller(c, &mut rx_moved, stop_rx, ids, flows, start, inst).await;
                    (rx_moved, r)
                });
                Some((stop_tx, task))
            } else {
                None
            };
            let t_run = bench_start.elapsed();
            let traffic = {
                let (sw, o, arr) = (sw.clone(), opts.clone(), opts.arrivals(run));
                tokio::task::spawn_blocking(move || traffic(sw, &o, &arr, start))
                    .await
                    .map_err(|error| BenchError::Task {
                        what: Some("traffic"),
                        error,
                    })??
            };
            let ctl = match ctl {
                Some((stop_tx, task)) => {
                    // Digests of the last packets are still on their way: wait for the
                    // controller to install every flow (or give up after a while).
                    let deadline = Instant::now()
                        + Duration::from_secs(5)
                        + Duration::from_nanos(opts.tick_ns.saturating_mul(100));
                    while installed.load(Ordering::Relaxed) < opts.flows
                        && Instant::now() < deadline
                    {
                        tokio::time::sleep(Duration::from_millis(1)).await;
                    }
                    let _ = stop_tx.send(());
                    let (back, log) = task.await.map_err(|error| BenchError::Task {
                        what: Some("controller"),
                        error,
                    })?;
                    rx = back;
                    Some(log?)
                }
                None => None,
            };
            let wall = bench_start.elapsed() - t_run;
            let hits_at_end = {
                let (sw, n) = (sw.clone(), opts.flows);
                tokio::task::spawn_blocking(move || check_hits(sw, n))
                    .await
                    .map_err(|error| BenchError::Task {
                        what: Some("check"),
                        error,
                    })??
            };
            let d = RunData {
                digests_dropped: sw.stats().digests_dropped.load(Ordering::Relaxed),
                traffic,
                ctl,
                hits_at_end,
                start: t_run,
                wall,
            };
            let misses: u64 = d.traffic.flows.iter().map(|f| f.misses).sum();
            progress(&format!(
                "{}, run {}: {} flows, {} packets, {misses} misses, {} of {} flows hit at the end",
                v.name(),
                run + 1,
                opts.flows,
                d.traffic.packets,
                d.hits_at_end,
                opts.flows
            ));
            runs.push(d);
        }
        variants.push(summarize(v, opts, &runs));
        hdr_runs.push((v, runs));
    }
    if let Some(dir) = &opts.hdr_dir {
        write_logs(dir, opts, &hdr_runs)?;
    }
    Ok(LearnReport {
        flows: opts.flows,
        flow_rate: opts.flow_rate,
        packets_per_flow: opts.packets,
        interval_ns: opts.interval_ns,
        runs: opts.runs,
        tick_ns: opts.tick_ns,
        digest_config: opts.digest,
        table_size,
        variants,
    })
}

/// Per-flow values of one run.
struct FlowValues {
    misses: Vec<u64>,
    ttfh: Vec<u64>,
    entry: Vec<u64>,
    digest_wait: Vec<u64>,
}

fn flow_values(d: &RunData) -> FlowValues {
    let fl = &d.traffic.flows;
    let mut v = FlowValues {
        misses: fl.iter().map(|f| f.misses).collect(),
        ttfh: fl
            .iter()
            .filter_map(|f| f.first_hit_ns.map(|h| h - f.arrival_ns))
            .collect(),
        entry: Vec::new(),
        digest_wait: Vec::new(),
    };
    match &d.ctl {
        None => {
            v.entry = fl
                .iter()
                .filter_map(|f| f.entry_ns.map(|e| e.saturating_sub(f.arrival_ns)))
                .collect()
        }
        Some(c) => {
            for (f, rec) in fl.iter().enumerate() {
                if let Some(e) = c.installed_ns[f] {
                    v.entry.push(e.saturating_sub(rec.arrival_ns));
                }
                if let Some(e) = c.first_digest_ns[f] {
                    v.digest_wait.push(e.saturating_sub(rec.arrival_ns));
                }
            }
        }
    }
    v
}

fn summarize(v: Variant, opts: &LearnOptions, runs: &[RunData]) -> VariantReport {
    let mut all = FlowValues {
        misses: Vec::new(),
        ttfh: Vec::new(),
        entry: Vec::new(),
        digest_wait: Vec::new(),
    };
    let mut lag = Vec::new();
    let mut summaries = Vec::new();
    let mut digest = v.eq(&Variant::Digest).then(DigestStats::default);
    let mut write_latency = Vec::new();
    let (mut packets, mut after, mut failures, mut without, mut at_end) = (0, 0, 0, 0, 0);
    for (i, d) in runs.iter().enumerate() {
        let fv = flow_values(d);
        let no_hit = d
            .traffic
            .flows
            .iter()
            .filter(|f| f.first_hit_ns.is_none())
            .count() as u64;
        summaries.push(RunSummary {
            run: i + 1,
            misses: fv.misses.iter().sum(),
            flows_without_hit: no_hit,
            time_to_first_hit_p50_ns: Percentiles::of(fv.ttfh.clone()).p50,
            wall_ms: d.wall.as_millis() as u64,
        });
        packets += d.traffic.packets;
        after += d.traffic.misses_after_hit;
        failures += d.traffic.insert_failures;
        without += no_hit;
        at_end += d.hits_at_end;
        lag.extend_from_slice(&d.traffic.lag);
        if let (Some(s), Some(c)) = (digest.as_mut(), &d.ctl) {
            let t = &c.stats;
            s.digests_packed += fv.misses.iter().sum::<u64>();
            s.digests_dropped += d.digests_dropped;
            s.lists_received += t.lists_received;
            s.digests_received += t.digests_received;
            s.writes += t.writes;
            s.entries_inserted += t.entries_inserted;
            s.already_exists += t.already_exists;
            s.other_errors += t.other_errors;
            s.unknown_keys += t.unknown_keys;
            write_latency.extend_from_slice(&c.write_latency);
        }
        all.misses.extend(fv.misses);
        all.ttfh.extend(fv.ttfh);
        all.entry.extend(fv.entry);
        all.digest_wait.extend(fv.digest_wait);
    }
    if let Some(s) = digest.as_mut() {
        s.write_latency_ns = Percentiles::of(write_latency);
        s.digest_wait_ns = Percentiles::of(all.digest_wait.clone());
    }
    let mut hist: BTreeMap<u64, u64> = BTreeMap::new();
    for &m in &all.misses {
        *hist.entry(m).or_default() += 1;
    }
    let total: u64 = all.misses.iter().sum();
    let nflows = opts.flows * runs.len() as u64;
    VariantReport {
        variant: v,
        program: format!("examples/{}", v.program_name()),
        flows: nflows,
        packets,
        misses: total,
        misses_per_flow: Percentiles::of(all.misses),
        misses_per_flow_mean: total as f64 / nflows.max(1) as f64,
        misses_histogram: hist.into_iter().map(|(k, n)| [k, n]).collect(),
        misses_after_first_hit: after,
        flows_without_hit: without,
        flows_hit_at_end: at_end,
        time_to_first_hit_ns: Percentiles::of(all.ttfh),
        time_to_entry_ns: Percentiles::of(all.entry),
        lag_ns: Percentiles::of(lag),
        insert_failures: failures,
        digest,
        runs: summaries,
    }
}

/// One interval log per variant × measure (ns, or packets for misses), one interval per run.
fn write_logs(
    dir: &Path,
    opts: &LearnOptions,
    runs: &[(Variant, Vec<RunData>)],
) -> Result<(), BenchError> {
    type Pick = fn(&RunData, &FlowValues) -> Vec<u64>;
    let measures: [(&str, &str, Pick); 5] = [
        (
            "misses",
            "packets that missed before the flow's entry existed, per flow",
            |_, v| v.misses.clone(),
        ),
        (
            "time-to-first-hit",
            "first packet -> first packet that hit, ns per flow",
            |_, v| v.ttfh.clone(),
        ),
        (
            "time-to-entry",
            "first packet -> entry exists, ns per flow",
            |_, v| v.entry.clone(),
        ),
        (
            "digest-wait",
            "first packet -> first digest at the controller, ns per flow",
            |_, v| v.digest_wait.clone(),
        ),
        (
            "write-latency",
            "P4Runtime Write latency at the controller, ns per Write",
            |d, _| {
                d.ctl
                    .as_ref()
                    .map(|c| c.write_latency.clone())
                    .unwrap_or_default()
            },
        ),
    ];
    for (v, rs) in runs {
        let values: Vec<FlowValues> = rs.iter().map(flow_values).collect();
        for (name, what, pick) in measures {
            if *v == Variant::AddOnMiss && matches!(name, "digest-wait" | "write-latency") {
                continue;
            }
            let hists = rs
                .iter()
                .zip(&values)
                .map(|(d, fv)| hdr::histogram_of(&pick(d, fv), name))
                .collect::<Result<Vec<_>, _>>()?;
            let intervals: Vec<hdr::Interval<'_>> = rs
                .iter()
                .zip(&hists)
                .enumerate()
                .map(|(i, (d, h))| hdr::Interval {
                    tag: format!("rate{}-run{i}", opts.flow_rate),
                    start: d.start,
                    duration: d.wall,
                    hist: h,
                })
                .collect();
            let comments = vec![
                format!("nevermiss bench learn, {}: {what}", v.name()),
                format!(
                    "flows {} at {} flows/s, {} packets per flow every {} ns",
                    opts.flows, opts.flow_rate, opts.packets, opts.interval_ns
                ),
            ];
            hdr::write_log(
                &dir.join(hdr::file_name(v.name(), name)),
                &comments,
                &intervals,
            )?;
        }
    }
    Ok(())
}

fn us(ns: u64) -> String {
    if ns >= 10_000_000 {
        format!("{:.1} ms", ns as f64 / 1e6)
    } else {
        format!("{:.1} µs", ns as f64 / 1e3)
    }
}

fn times(p: &Percentiles) -> String {
    format!(
        "median {}, p99 {}, max {} ({} values)",
        us(p.p50),
        us(p.p99),
        us(p.max),
        p.n
    )
}

impl LearnReport {
    fn variant(&self, v: Variant) -> Option<&VariantReport> {
        self.variants.iter().find(|r| r.variant == v)
    }

    /// The report as text.
    pub fn render(&self) -> String {
        let mut s = format!(
            "Learning flows: add-on-miss vs digest → controller → P4Runtime Write\n\
             {} flows per run arriving at {} flows/s (Poisson), {} packets per flow every {}, {} run{}; \
             server tick {}, digest lists of {} (max_timeout {}), ack timeout {}\n",
            self.flows,
            self.flow_rate,
            self.packets_per_flow,
            us(self.interval_ns),
            self.runs,
            if self.runs == 1 { "" } else { "s" },
            us(self.tick_ns),
            self.digest_config.max_list_size,
            us(self.digest_config.max_timeout_ns as u64),
            us(self.digest_config.ack_timeout_ns as u64),
        );
        for r in &self.variants {
            let m = &r.misses_per_flow;
            s.push_str(&format!("{} ({}):\n", r.variant.name(), r.program));
            s.push_str(&format!(
                "  packets that missed before the entry existed: {} in all; per flow median {}, \
                 p99 {}, max {}, mean {:.2}\n",
                r.misses, m.p50, m.p99, m.max, r.misses_per_flow_mean
            ));
            s.push_str(&format!(
                "  flows: {}, without a hit among their packets: {}, hit at the end: {}; \
                 misses after a hit: {}\n",
                r.flows, r.flows_without_hit, r.flows_hit_at_end, r.misses_after_first_hit
            ));
            s.push_str(&format!(
                "  time to first hit: {}\n",
                times(&r.time_to_first_hit_ns)
            ));
            s.push_str(&format!(
                "  time to entry:     {}\n",
                times(&r.time_to_entry_ns)
            ));
            if let Some(d) = &r.digest {
                s.push_str(&format!(
                    "  digest at the controller: {}\n",
                    times(&d.digest_wait_ns)
                ));
                s.push_str(&format!(
                    "  digests packed {}, dropped {}; lists received {} ({} digests); \
                     Writes {}: {}\n",
                    d.digests_packed,
                    d.digests_dropped,
                    d.lists_received,
                    d.digests_received,
                    d.writes,
                    times(&d.write_latency_ns)
                ));
                s.push_str(&format!(
                    "  entries inserted {}, refused as ALREADY_EXISTS {}, other errors {}\n",
                    d.entries_inserted, d.already_exists, d.other_errors
                ));
            } else if r.insert_failures > 0 {
                s.push_str(&format!("  add_entry failures: {}\n", r.insert_failures));
            }
            s.push_str(&format!(
                "  packets {}, processed late by: {}\n",
                r.packets,
                times(&r.lag_ns)
            ));
        }
        if let (Some(a), Some(d)) = (
            self.variant(Variant::AddOnMiss),
            self.variant(Variant::Digest),
        ) {
            let ratio = |x: f64, y: f64| {
                if y > 0.0 {
                    format!("{:.1}×", x / y)
                } else {
                    "—".into()
                }
            };
            s.push_str(&format!(
                "digest / add-on-miss: misses per flow {} (means), time to first hit {} \
                 (medians), time to entry {} (medians)\n",
                ratio(d.misses_per_flow_mean, a.misses_per_flow_mean),
                ratio(
                    d.time_to_first_hit_ns.p50 as f64,
                    a.time_to_first_hit_ns.p50 as f64
                ),
                ratio(d.time_to_entry_ns.p50 as f64, a.time_to_entry_ns.p50 as f64),
            ));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variants_parse_and_programs_build() {
        for v in Variant::ALL {
            assert_eq!(Variant::parse(v.name()).ok(), Some(v));
            let sw =
                crate::scenario::build_switch(&v.program(), 1024, nevermiss_runtime::Engine::Jit)
                    .unwrap();
            assert_eq!(sw.tables().len(), 1);
            assert_eq!(
                sw.tables().any(|t| t.spec().add_on_miss),
                v == Variant::AddOnMiss
            );
        }
        assert!(Variant::parse("both").is_err());
    }

    #[test]
    fn validation_names_the_flag() {
        let ok = LearnOptions::default();
        assert!(ok.validate().is_ok());
        let bad = |f: fn(&mut LearnOptions), want: &str| {
            let mut o = LearnOptions::default();
            f(&mut o);
            let e = o.validate().unwrap_err().to_string();
            assert!(e.contains(want), "{e}");
        };
        bad(|o| o.flows = 0, "--flows");
        bad(|o| o.flow_rate = 0, "--flow-rate");
        bad(|o| o.packets = 0, "--packets");
        bad(|o| o.interval_ns = 0, "--interval");
        bad(|o| o.runs = 0, "--runs");
        bad(|o| o.tick_ns = 10, "--tick");
        bad(|o| o.variants.clear(), "--variant");
        bad(|o| o.packets = 1 << 20, "packets per run");
        bad(|o| o.interval_ns = 100_000_000_000, "a run would last");
    }

    #[test]
    fn schedule_is_in_order_and_frames_carry_the_key() {
        let o = LearnOptions {
            flows: 20_000,
            flow_rate: 1000,
            ..LearnOptions::default()
        };
        let a = o.arrivals(0);
        assert_eq!(a[0], 0);
        assert!(a.windows(2).all(|w| w[0] <= w[1]));
        // 20000 exponential gaps of mean 1 ms: the mean is within a few percent.
        let mean = a[a.len() - 1] as f64 / (a.len() - 1) as f64;
        assert!((mean - 1e6).abs() < 0.05e6, "{mean}");
        assert_eq!(a, o.arrivals(0));
        assert_ne!(a, o.arrivals(1));
        let gen = TwoPhaseGen::new(TwoPhaseConfig::default()).unwrap();
        let f = flow_frame(&gen, 5);
        assert_eq!(&f[30..34], &(KEY_BASE + 5).to_be_bytes());
        let d = p4::P4Data {
            data: Some(p4::p4_data::Data::Struct(p4::P4StructLike {
                members: vec![
                    p4::P4Data {
                        data: Some(p4::p4_data::Data::Bitstring(vec![11, 0, 0, 5].into())),
                    },
                    p4::P4Data {
                        data: Some(p4::p4_data::Data::Bitstring(vec![1].into())),
                    },
                ],
            })),
        };
        assert_eq!(digest_fields(&d), Some((vec![11, 0, 0, 5], vec![1])));
        assert_eq!(digest_fields(&p4::P4Data::default()), None);
    }
}
