//! `nevermiss bench p4rt`: papers/002's control-plane experiment on nevermiss, with no external
//! box. One process runs `nevermiss serve`'s server on 127.0.0.1 (on its own runtime of two
//! worker threads, as `serve` runs it) and a gRPC client (tonic, over TCP, on a single-threaded
//! runtime of the calling thread, as a controller process would) that
//! - inserts entries (exact keys into the add-on-miss example's table) in Write requests of 1, 10,
//!   100 and 1000 updates, and reports entries/s and, for single updates, the Write latency
//!   (the requests of a run are built and encoded before the clock starts, unless
//!   `build_in_loop`);
//! - with a worker sending packets through the v1model router at a fixed rate, modifies one
//!   route back and forth between two next hops (ports 1 and 2), one Write each, and reports the
//!   server's d_control (request arrived → change visible), d_data (visible → first packet that
//!   used it) and d_all, and the number of packets that saw no entry or the default action
//!   (dropped) during the modifies.
//!
//! Timing is wall clock (ns); medians over `runs` repetitions are reported (docs/p4runtime.md).
//! With `hdr_dir`, every update's d_control, d_data, d_all and client Write latency is kept as
//! HdrHistogram interval logs (one interval per run; [`HDR_LOGS`]).

use crate::error::BenchError;
use crate::hdr;
use nevermiss_p4rt::codec::PreparedCodec;
use nevermiss_p4rt::pb::p4::v1 as p4;
use nevermiss_p4rt::pb::p4::v1::p4_runtime_client::P4RuntimeClient;
use nevermiss_p4rt::server::{self, Device, ServeOptions};
use nevermiss_runtime::Worker;
use p4_ir::lower::source::SourceError;
use prost::bytes::Bytes;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tonic::transport::Channel;

/// What to measure.
#[derive(Clone, Debug)]
pub struct P4rtOptions {
    /// Entries inserted per batch size and run.
    pub inserts: u64,
    /// Batch sizes (updates per Write).
    pub batches: Vec<usize>,
    /// Modifies per run.
    pub modifies: u64,
    /// Packets per second through the router during the modifies.
    pub rate_pps: u64,
    /// Runs of the whole experiment (inserts and modifies).
    pub runs: usize,
    /// Insert Writes the client keeps in flight at once (1: each waits for the previous
    /// one's response). P4Runtime lets a client pipeline Writes; the server applies them one
    /// at a time, in arrival order.
    pub in_flight: usize,
    /// Build and encode each insert Write inside the timed loop, as it is sent; by default
    /// every Write of a run is built and encoded before the clock starts, so that the rate
    /// is the server's and the transport's (a controller with its entries ready).
    pub build_in_loop: bool,
    /// Write HdrHistogram interval logs (ns, one interval per run) into this directory.
    pub hdr_dir: Option<PathBuf>,
    /// What runs the pipelines.
    pub engine: nevermiss_runtime::Engine,
}

/// The logs of `hdr_dir`: file name and what it holds (ns per update). `insert.write.hlog` is
/// written only when batch size 1 is measured with one Write in flight.
pub const HDR_LOGS: [(&str, &str); 5] = [
    (
        "modify.d_control.hlog",
        "d_control of each modify: Write arrived at the server -> change visible to the data plane",
    ),
    (
        "modify.d_data.hlog",
        "d_data of each modify: change visible -> first packet that used it",
    ),
    (
        "modify.d_all.hlog",
        "d_all = d_control + d_data of each modify",
    ),
    (
        "modify.write.hlog",
        "client-side latency of each modify Write (request sent -> response received)",
    ),
    (
        "insert.write.hlog",
        "client-side latency of each single-update insert Write (batch 1, one in flight)",
    ),
];

impl Default for P4rtOptions {
    fn default() -> P4rtOptions {
        P4rtOptions {
            inserts: 100_000,
            batches: vec![1, 10, 100, 1000],
            modifies: 10_000,
            rate_pps: 1_000_000,
            runs: 5,
            in_flight: 1,
            build_in_loop: false,
            hdr_dir: None,
            engine: nevermiss_runtime::Engine::default(),
        }
    }
}

/// One batch size's insert rate.
#[derive(Clone, Debug, Serialize)]
pub struct InsertRate {
    /// Updates per Write.
    pub batch: usize,
    /// Writes in flight at once.
    pub in_flight: usize,
    /// Whether the Writes were built and encoded inside the timed loop (else before it).
    pub built_in_loop: bool,
    /// Entries inserted per run.
    pub entries: u64,
    /// Median over the runs.
    pub entries_per_s: f64,
    /// Entries per second of each run.
    pub runs_entries_per_s: Vec<f64>,
}

/// p50, p99, p99.99, max in ns.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Percentiles {
    /// The median.
    pub p50: u64,
    /// The 99th percentile.
    pub p99: u64,
    /// The 99.99th percentile.
    pub p99_99: u64,
    /// The largest value.
    pub max: u64,
    /// Values the percentiles are of (0: all fields 0).
    pub n: usize,
}

impl Percentiles {
    pub(crate) fn of(mut v: Vec<u64>) -> Percentiles {
        let n = v.len();
        match server::percentiles(&mut v) {
            Some([p50, p99, p99_99, max]) => Percentiles {
                p50,
                p99,
                p99_99,
                max,
                n,
            },
            None => Percentiles::default(),
        }
    }
}

/// One HdrHistogram log written to `hdr_dir`.
#[derive(Clone, Debug, Serialize)]
pub struct P4rtHdrFile {
    /// The log's file name in `hdr_dir` (`insert.write.hlog`, `modify.d_control.hlog`, …).
    pub file: String,
    /// Intervals (runs) in the file.
    pub intervals: usize,
    /// Values recorded, all intervals together.
    pub values: u64,
}

/// The report.
#[derive(Clone, Debug, Serialize)]
pub struct P4rtReport {
    /// One insert rate per batch size (and Writes in flight), in the order measured.
    pub inserts: Vec<InsertRate>,
    /// Client-side latency of single-update Writes (inserts), all runs.
    pub write_latency_ns: Percentiles,
    /// Modifies per run.
    pub modifies: u64,
    /// Packets per second through the router during the modifies.
    pub rate_pps: u64,
    /// Packets the worker sent during the modifies, and how many of them were dropped (no
    /// entry or the default action).
    pub packets: u64,
    /// Packets of those dropped.
    pub packets_dropped: u64,
    /// d_control of the modifies (papers/002 §IV): Write arrival → visible to the data plane.
    pub d_control_ns: Percentiles,
    /// d_data of the modifies: visible → the first packet that used the new entry.
    pub d_data_ns: Percentiles,
    /// d_all = d_control + d_data of the modifies.
    pub d_all_ns: Percentiles,
    /// Client-side latency of the modify Writes.
    pub modify_latency_ns: Percentiles,
    /// Runs of the experiment.
    pub runs: usize,
    /// The HdrHistogram logs written (empty without `hdr_dir`).
    pub hdr_logs: Vec<P4rtHdrFile>,
}

/// One run's values of one log: tag, start since the bench began, duration, values (ns).
struct RunValues {
    tag: String,
    start: Duration,
    duration: Duration,
    values: Vec<u64>,
}

/// Writes the logs of [`HDR_LOGS`] that have runs (`series[i]` belongs to `HDR_LOGS[i]`).
fn write_hdr_logs(
    dir: &Path,
    opts: &P4rtOptions,
    series: &[Vec<RunValues>; 5],
) -> Result<Vec<P4rtHdrFile>, BenchError> {
    let mut files = Vec::new();
    for ((file, what), runs) in HDR_LOGS.iter().zip(series) {
        if runs.is_empty() {
            continue;
        }
        let hists = runs
            .iter()
            .map(|r| hdr::histogram_of(&r.values, file))
            .collect::<Result<Vec<_>, _>>()?;
        let ivs: Vec<hdr::Interval<'_>> = runs
            .iter()
            .zip(&hists)
            .map(|(r, h)| hdr::Interval {
                tag: r.tag.clone(),
                start: r.start,
                duration: r.duration,
                hist: h,
            })
            .collect();
        let comments = [
            format!("nevermiss bench p4rt: {what}; ns"),
            format!(
                "{} inserts per batch size, {} modifies per run under {} packets/s, {} runs",
                opts.inserts, opts.modifies, opts.rate_pps, opts.runs
            ),
            "interval tag: run<k> (modifies), batch1-run<k> (inserts)".to_string(),
        ];
        hdr::write_log(&dir.join(file), &comments, &ivs)?;
        files.push(P4rtHdrFile {
            file: file.to_string(),
            intervals: ivs.len(),
            values: hists.iter().map(|h| h.len()).sum(),
        });
    }
    Ok(files)
}

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

fn config_of(name: &str, defines: &[(&str, &str)]) -> Result<Vec<u8>, BenchError> {
    device_config(&examples().join(name), name, defines)
}

/// The device config (for SetForwardingPipelineConfig) of the program at `path`, compiled with
/// `defines`; `name` is the name recorded in it.
pub(crate) fn device_config(
    path: &Path,
    name: &str,
    defines: &[(&str, &str)],
) -> Result<Vec<u8>, BenchError> {
    let opts = p4_front::driver::Options {
        defines: defines
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect(),
        ..Default::default()
    };
    let c = p4_front::driver::compile_file(path, &opts).map_err(SourceError::Front)?;
    Ok(nevermiss_p4rt::device_config::encode(&c, name))
}

fn election() -> Option<p4::Uint128> {
    Some(p4::Uint128 { high: 0, low: 1 })
}

/// `nevermiss serve`'s server on 127.0.0.1 (an unused port), with its housekeeping task; for
/// the benches that drive it through a client. Call [`Server::stop`] inside the runtime.
pub(crate) struct Server {
    pub dev: Arc<Device>,
    pub addr: std::net::SocketAddr,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Server {
    pub(crate) fn start(opts: ServeOptions) -> Result<Server, BenchError> {
        let dev = Device::new(opts);
        let (incoming, addr) =
            server::listen(([127, 0, 0, 1], 0).into()).map_err(BenchError::Io)?;
        let serve = tokio::spawn({
            let svc = server::grpc_service(dev.clone());
            async move {
                let _ = tonic::transport::Server::builder()
                    .add_service(svc)
                    .serve_with_incoming(incoming)
                    .await;
            }
        });
        let hk = tokio::spawn(server::housekeeping(dev.clone()));
        Ok(Server {
            dev,
            addr,
            tasks: vec![serve, hk],
        })
    }

    pub(crate) fn stop(&self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

/// A P4Runtime client over TCP, primary (election id 1) of device 1.
#[derive(Clone)]
pub(crate) struct Client {
    c: P4RuntimeClient<Channel>,
    /// For Writes sent as prepared bytes ([`Client::write_prepared`]).
    ch: Channel,
    /// The stream channel's request side (arbitration, then e.g. digest acks).
    stream: mpsc::Sender<p4::StreamMessageRequest>,
}

impl Client {
    /// Connects and becomes primary; what the server sends on the stream afterwards is
    /// discarded.
    pub(crate) async fn connect(addr: std::net::SocketAddr) -> Result<Client, BenchError> {
        Client::connect_inner(addr, None).await
    }

    /// Connects and becomes primary; what the server sends on the stream afterwards (digest
    /// lists, PacketIns, …) comes out of the receiver, with the time it arrived.
    pub(crate) async fn connect_with_messages(
        addr: std::net::SocketAddr,
    ) -> Result<
        (
            Client,
            mpsc::UnboundedReceiver<(Instant, p4::stream_message_response::Update)>,
        ),
        BenchError,
    > {
        let (tx, rx) = mpsc::unbounded_channel();
        Ok((Client::connect_inner(addr, Some(tx)).await?, rx))
    }

    async fn connect_inner(
        addr: std::net::SocketAddr,
        forward: Option<mpsc::UnboundedSender<(Instant, p4::stream_message_response::Update)>>,
    ) -> Result<Client, BenchError> {
        // The server reports a failed Write's per-update errors in a trailer; hyper's default
        // limit (16 KiB of headers) is exceeded by a batch of a few hundred failed updates.
        let ch = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
            .map_err(BenchError::Connect)?
            .http2_max_header_list_size(16 << 20)
            .connect()
            .await
            .map_err(BenchError::Connect)?;
        let mut c = P4RuntimeClient::new(ch.clone());
        let (tx, rx) = mpsc::channel(4);
        tx.send(p4::StreamMessageRequest {
            update: Some(p4::stream_message_request::Update::Arbitration(
                p4::MasterArbitrationUpdate {
                    device_id: 1,
                    election_id: election(),
                    ..Default::default()
                },
            )),
        })
        .await
        .map_err(|_| BenchError::StreamClosed)?;
        let mut resp = c
            .stream_channel(tokio_stream::wrappers::ReceiverStream::new(rx))
            .await
            .map_err(BenchError::Stream)?
            .into_inner();
        use tokio_stream::StreamExt;
        let first = resp.next().await;
        if !matches!(first, Some(Ok(_))) {
            return Err(BenchError::ArbitrationFailed);
        }
        tokio::spawn(async move {
            while let Some(m) = resp.next().await {
                if let (Some(f), Ok(p4::StreamMessageResponse { update: Some(u) })) = (&forward, m)
                {
                    let _ = f.send((Instant::now(), u));
                }
            }
        });
        Ok(Client { c, ch, stream: tx })
    }

    /// Sends a message on the stream channel.
    pub(crate) async fn send(&self, m: p4::StreamMessageRequest) -> Result<(), BenchError> {
        self.stream
            .send(m)
            .await
            .map_err(|_| BenchError::StreamClosed)
    }

    pub(crate) async fn set_pipeline(&mut self, cfg: Vec<u8>) -> Result<(), BenchError> {
        self.c
            .set_forwarding_pipeline_config(p4::SetForwardingPipelineConfigRequest {
                device_id: 1,
                election_id: election(),
                action: p4::set_forwarding_pipeline_config_request::Action::VerifyAndCommit as i32,
                config: Some(p4::ForwardingPipelineConfig {
                    p4_device_config: cfg.into(),
                    ..Default::default()
                }),
                ..Default::default()
            })
            .await
            .map_err(|status| BenchError::Rpc {
                call: "SetForwardingPipelineConfig",
                status,
            })?;
        Ok(())
    }

    /// A Write of updates, or of a request prepared beforehand.
    async fn send_write(&mut self, w: Write) -> Result<(), BenchError> {
        match w {
            Write::Updates(u) => self.write(u).await,
            Write::Prepared(b) => self.write_prepared(b).await,
        }
    }

    pub(crate) async fn write(&mut self, updates: Vec<p4::Update>) -> Result<(), BenchError> {
        self.write_status(updates)
            .await
            .map_err(|status| BenchError::Rpc {
                call: "Write",
                status,
            })
    }

    /// A Write of a request encoded beforehand ([`prepare`]).
    pub(crate) async fn write_prepared(&mut self, req: Bytes) -> Result<(), BenchError> {
        let mut g = tonic::client::Grpc::new(self.ch.clone());
        g.ready().await.map_err(BenchError::NotReady)?;
        let path = tonic::codegen::http::uri::PathAndQuery::from_static("/p4.v1.P4Runtime/Write");
        g.unary(
            tonic::Request::new(req),
            path,
            PreparedCodec::<p4::WriteResponse>::default(),
        )
        .await
        .map_err(|status| BenchError::Rpc {
            call: "Write",
            status,
        })?;
        Ok(())
    }

    /// A Write whose failure is returned as the gRPC status (per-update errors are in its
    /// details: [`update_errors`]).
    pub(crate) async fn write_status(
        &mut self,
        updates: Vec<p4::Update>,
    ) -> Result<(), tonic::Status> {
        self.c
            .write(p4::WriteRequest {
                device_id: 1,
                election_id: election(),
                updates,
                ..Default::default()
            })
            .await?;
        Ok(())
    }
}

/// What an insert Write sends.
enum Write {
    Updates(Vec<p4::Update>),
    Prepared(Bytes),
}

/// The canonical code of every update of a failed Write (P4Runtime §12.3: one `p4.v1.Error`
/// per update in the status details, OK ones included); `None` when the status carries none
/// (the whole request was refused).
pub(crate) fn update_errors(st: &tonic::Status) -> Option<Vec<i32>> {
    use prost::Message;
    let rpc = nevermiss_p4rt::pb::google::rpc::Status::decode(st.details()).ok()?;
    if rpc.details.is_empty() {
        return None;
    }
    rpc.details
        .iter()
        .map(|a| {
            p4::Error::decode(&a.value[..])
                .ok()
                .map(|e| e.canonical_code)
        })
        .collect()
}

/// The encoded WriteRequest (device 1, election id 1) of `updates`, as [`Client::write`]
/// would send it.
pub(crate) fn prepare(updates: Vec<p4::Update>) -> Bytes {
    use prost::Message;
    p4::WriteRequest {
        device_id: 1,
        election_id: election(),
        updates,
        ..Default::default()
    }
    .encode_to_vec()
    .into()
}

pub(crate) fn update(t: p4::update::Type, e: p4::TableEntry) -> p4::Update {
    p4::Update {
        r#type: t as i32,
        entity: Some(p4::Entity {
            entity: Some(p4::entity::Entity::TableEntry(Box::new(e))),
        }),
    }
}

pub(crate) fn exact(field: u32, v: &[u8]) -> p4::FieldMatch {
    p4::FieldMatch {
        field_id: field,
        field_match_type: Some(p4::field_match::FieldMatchType::Exact(
            p4::field_match::Exact {
                value: v.to_vec().into(),
            },
        )),
    }
}

pub(crate) fn action(id: u32, params: &[&[u8]]) -> Option<p4::TableAction> {
    Some(p4::TableAction {
        r#type: Some(p4::table_action::Type::Action(p4::Action {
            action_id: id,
            params: params
                .iter()
                .enumerate()
                .map(|(i, v)| p4::action::Param {
                    param_id: i as u32 + 1,
                    value: v.to_vec().into(),
                })
                .collect(),
        })),
    })
}

pub(crate) fn id_of(dev: &Device, name: &str) -> Result<u32, BenchError> {
    let p = dev.pipeline().ok_or(BenchError::NoPipeline)?;
    p.p4info
        .tables
        .iter()
        .filter_map(|t| t.preamble.as_ref())
        .chain(p.p4info.actions.iter().filter_map(|a| a.preamble.as_ref()))
        .chain(p.p4info.digests.iter().filter_map(|d| d.preamble.as_ref()))
        .find(|pre| pre.name == name || pre.alias == name)
        .map(|pre| pre.id)
        .ok_or_else(|| BenchError::NotInP4Info(name.to_string()))
}

/// An IPv4/UDP packet to `dst` with a correct header checksum.
fn router_packet(dst: [u8; 4]) -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00];
    let mut ip = vec![0x45, 0, 0, 28, 0, 0, 0, 0, 64, 17, 0, 0, 10, 9, 9, 9];
    ip.extend(dst);
    let sum: u32 = ip
        .chunks(2)
        .map(|w| u32::from(u16::from_be_bytes([w[0], w[1]])))
        .sum();
    let folded = (sum & 0xffff) + (sum >> 16);
    let csum = !(((folded & 0xffff) + (folded >> 16)) as u16);
    ip[10..12].copy_from_slice(&csum.to_be_bytes());
    f.extend(ip);
    f.extend([0x04, 0xd2, 0x16, 0x2e, 0, 8, 0, 0]);
    f
}

/// Runs the benchmark.
pub fn run(opts: &P4rtOptions, mut progress: impl FnMut(&str)) -> Result<P4rtReport, BenchError> {
    let bad = |text: &str| Err(BenchError::Options(text.to_string()));
    if opts.batches.is_empty() || opts.batches.contains(&0) {
        return bad("--batches: give batch sizes of at least 1");
    }
    if opts.in_flight == 0 {
        return bad("--in-flight must be at least 1");
    }
    if opts.runs == 0 || opts.inserts == 0 || opts.modifies == 0 || opts.rate_pps == 0 {
        return bad("--runs, --inserts, --modifies and --rate must be at least 1");
    }
    if let Some(d) = &opts.hdr_dir {
        hdr::prepare_dir(d)?;
    }
    // The server on its own runtime, as `nevermiss serve` runs it (two worker threads); the
    // client on a single-threaded runtime of this thread, as a controller process would be.
    let server_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("p4rt-server")
        .enable_all()
        .build()
        .map_err(BenchError::Io)?;
    let srv = server_rt.block_on(async {
        let mut serve = ServeOptions::default();
        serve.config.engine = opts.engine;
        Server::start(serve)
    })?;
    let r = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(BenchError::Io)
        .and_then(|rt| rt.block_on(run_async(opts, &srv, &mut progress)));
    srv.stop();
    server_rt.shutdown_timeout(Duration::from_secs(1));
    r
}

/// Runs a bench's server, client and traffic to completion on a 2-thread tokio runtime.
pub(crate) fn on_runtime<T>(
    f: impl std::future::Future<Output = Result<T, BenchError>>,
) -> Result<T, BenchError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(BenchError::Io)?
        .block_on(f)
}

async fn run_async(
    opts: &P4rtOptions,
    srv: &Server,
    progress: &mut dyn FnMut(&str),
) -> Result<P4rtReport, BenchError> {
    let began = Instant::now();
    let client = Client::connect(srv.addr).await?;
    let size = opts.inserts.next_power_of_two().max(1024).to_string();
    let aom = config_of("pna-add-on-miss.p4", &[("FLOW_TABLE_SIZE", &size)])?;
    let router = config_of("v1model-router.p4", &[])?;
    let mut b = P4rtBench {
        opts,
        dev: srv.dev.clone(),
        client,
        began,
        series: Default::default(),
        progress,
    };
    // (a) Insert rates.
    let mut inserts = Vec::new();
    let mut single_latency = Vec::new();
    for &batch in &opts.batches {
        let mut rates = Vec::new();
        for run in 0..opts.runs {
            rates.push(b.insert_run(&aom, batch, run, &mut single_latency).await?);
        }
        inserts.push(InsertRate {
            batch,
            in_flight: opts.in_flight,
            built_in_loop: opts.build_in_loop,
            entries: opts.inserts,
            entries_per_s: median(&rates),
            runs_entries_per_s: rates,
        });
    }
    // (b) Modifies under traffic.
    let mut m = ModifyTotals::default();
    for run in 0..opts.runs {
        b.modify_run(&router, run, &mut m).await?;
    }
    let hdr_logs = match &opts.hdr_dir {
        Some(dir) => write_hdr_logs(dir, opts, &b.series)?,
        None => Vec::new(),
    };
    Ok(P4rtReport {
        inserts,
        write_latency_ns: Percentiles::of(single_latency),
        modifies: opts.modifies,
        rate_pps: opts.rate_pps,
        packets: m.packets,
        packets_dropped: m.dropped,
        d_control_ns: Percentiles::of(m.d_control),
        d_data_ns: Percentiles::of(m.d_data),
        d_all_ns: Percentiles::of(m.d_all),
        modify_latency_ns: Percentiles::of(m.latency),
        runs: opts.runs,
        hdr_logs,
    })
}

/// The P4Runtime benchmark in progress: its client of the server's device, and each run's
/// values for the interval logs (`series[i]` for `HDR_LOGS[i]`).
struct P4rtBench<'a> {
    opts: &'a P4rtOptions,
    dev: Arc<Device>,
    client: Client,
    /// When the benchmark began: the logs' intervals start from it.
    began: Instant,
    series: [Vec<RunValues>; 5],
    progress: &'a mut dyn FnMut(&str),
}

/// What the modify runs measured, over all runs: the traffic's packets and drops, and each
/// modify's delays (ns): to the control plane, to the data plane, both, and the Write's latency.
#[derive(Default)]
struct ModifyTotals {
    packets: u64,
    dropped: u64,
    d_control: Vec<u64>,
    d_data: Vec<u64>,
    d_all: Vec<u64>,
    latency: Vec<u64>,
}

/// The ids of the router program's tables and actions a modify run writes.
struct RouterIds {
    lpm: u32,
    next_hop: u32,
    mac: u32,
    set_dmac: u32,
}

impl RouterIds {
    /// The route 10.0.0.0/8 to `port`.
    fn route(&self, port: u8) -> p4::TableEntry {
        p4::TableEntry {
            table_id: self.lpm,
            r#match: vec![p4::FieldMatch {
                field_id: 1,
                field_match_type: Some(p4::field_match::FieldMatchType::Lpm(
                    p4::field_match::Lpm {
                        value: vec![10, 0, 0, 0].into(),
                        prefix_len: 8,
                    },
                )),
            }],
            action: action(self.next_hop, &[&[port], &[port]]),
            ..Default::default()
        }
    }
}

impl P4rtBench<'_> {
    /// One run of inserts in Writes of `batch` updates into a fresh add-on-miss pipeline
    /// (`cfg`); with batches of 1 and one Write in flight each Write's latency goes to
    /// `single_latency`. Returns the entries per second.
    async fn insert_run(
        &mut self,
        cfg: &[u8],
        batch: usize,
        run: usize,
        single_latency: &mut Vec<u64>,
    ) -> Result<f64, BenchError> {
        let opts = self.opts;
        self.client.set_pipeline(cfg.to_vec()).await?;
        let (flows, hit) = (id_of(&self.dev, "flows")?, id_of(&self.dev, "flow_hit")?);
        let n = opts.inserts;
        let build = |k: u64, m: u64| -> Vec<p4::Update> {
            (k..k + m)
                .map(|i| {
                    let key = (i as u32).to_be_bytes();
                    update(
                        p4::update::Type::Insert,
                        p4::TableEntry {
                            table_id: flows,
                            r#match: vec![exact(1, &key)],
                            action: action(hit, &[&key]),
                            ..Default::default()
                        },
                    )
                })
                .collect()
        };
        let chunks: Vec<(u64, u64)> = (0..n)
            .step_by(batch)
            .map(|k| (k, (batch as u64).min(n - k)))
            .collect();
        let mut prepared: Vec<Bytes> = if opts.build_in_loop {
            Vec::new()
        } else {
            chunks.iter().map(|&(k, m)| prepare(build(k, m))).collect()
        };
        prepared.reverse();
        let writes = chunks.iter().map(|&(k, m)| match prepared.pop() {
            Some(bytes) => Write::Prepared(bytes),
            None => Write::Updates(build(k, m)),
        });
        let start = Instant::now();
        let first_single = single_latency.len();
        let single = (batch == 1).then_some(&mut *single_latency);
        self.send_writes(writes, single).await?;
        let secs = start.elapsed().as_secs_f64();
        if opts.hdr_dir.is_some() && single_latency.len() > first_single {
            self.series[4].push(RunValues {
                tag: format!("batch1-run{run}"),
                start: start.duration_since(self.began),
                duration: start.elapsed(),
                values: single_latency[first_single..].to_vec(),
            });
        }
        (self.progress)(&format!(
            "inserts, batch {batch}, run {}: {:.0} entries/s",
            run + 1,
            n as f64 / secs
        ));
        Ok(n as f64 / secs)
    }

    /// Sends `writes` in order, up to `in_flight` at once; one at a time, each one's latency
    /// goes to `latency` when given.
    async fn send_writes(
        &mut self,
        writes: impl Iterator<Item = Write>,
        mut latency: Option<&mut Vec<u64>>,
    ) -> Result<(), BenchError> {
        let in_flight = self.opts.in_flight;
        let joined = |r: Result<Result<(), BenchError>, tokio::task::JoinError>| {
            r.map_err(|error| BenchError::Task { what: None, error })?
        };
        let mut pending = tokio::task::JoinSet::new();
        for req in writes {
            if in_flight > 1 {
                while pending.len() >= in_flight {
                    if let Some(r) = pending.join_next().await {
                        joined(r)?;
                    }
                }
                let mut c = self.client.clone();
                pending.spawn(async move { c.send_write(req).await });
            } else {
                let t = Instant::now();
                self.client.send_write(req).await?;
                if let Some(l) = latency.as_mut() {
                    l.push(t.elapsed().as_nanos() as u64);
                }
            }
        }
        while let Some(r) = pending.join_next().await {
            joined(r)?;
        }
        Ok(())
    }

    /// Loads the router program (`cfg`) and its entries: the route 10.0.0.0/8 to port 1 and
    /// the MACs of next hops 1 and 2.
    async fn router_setup(&mut self, cfg: &[u8]) -> Result<RouterIds, BenchError> {
        self.client.set_pipeline(cfg.to_vec()).await?;
        let dev = &self.dev;
        let ids = RouterIds {
            lpm: id_of(dev, "ipv4_lpm")?,
            next_hop: id_of(dev, "set_next_hop")?,
            mac: id_of(dev, "next_hop_mac")?,
            set_dmac: id_of(dev, "set_dmac")?,
        };
        let mut setup = vec![update(p4::update::Type::Insert, ids.route(1))];
        for hop in [1u8, 2] {
            setup.push(update(
                p4::update::Type::Insert,
                p4::TableEntry {
                    table_id: ids.mac,
                    r#match: vec![exact(1, &[hop])],
                    action: action(ids.set_dmac, &[&[2, 0, 0, 0, 0, hop]]),
                    ..Default::default()
                },
            ));
        }
        self.client.write(setup).await?;
        Ok(ids)
    }

    /// One run of modifies of the route under traffic at the configured rate, alternating its
    /// next hop; the delays and latencies go to `m`.
    async fn modify_run(
        &mut self,
        cfg: &[u8],
        run: usize,
        m: &mut ModifyTotals,
    ) -> Result<(), BenchError> {
        let opts = self.opts;
        let ids = self.router_setup(cfg).await?;
        self.dev.clear_update_delays();
        let sw = self
            .dev
            .pipeline()
            .ok_or(BenchError::NoPipeline)?
            .sw
            .clone();
        let stop = Arc::new(AtomicBool::new(false));
        let traffic = router_traffic(sw, opts.rate_pps, stop.clone());
        tokio::time::sleep(Duration::from_millis(20)).await;
        let run_start = Instant::now();
        let first_write = m.latency.len();
        for i in 0..opts.modifies {
            let port = if i % 2 == 0 { 2 } else { 1 };
            let t = Instant::now();
            self.client
                .write(vec![update(p4::update::Type::Modify, ids.route(port))])
                .await?;
            m.latency.push(t.elapsed().as_nanos() as u64);
        }
        // Let the last modify be used, then stop the traffic.
        tokio::time::sleep(Duration::from_millis(20)).await;
        stop.store(true, Ordering::Relaxed);
        let (s, l) = traffic
            .join()
            .map_err(|_| BenchError::Panicked("traffic thread"))?;
        m.packets += s;
        m.dropped += l;
        // The delays were cleared after the setup write: every row is a modify.
        let mods = self.dev.update_delays();
        let run_dc: Vec<u64> = mods.iter().map(|d| d.d_control_ns).collect();
        let run_dd: Vec<u64> = mods.iter().filter_map(|d| d.d_data_ns).collect();
        let run_da: Vec<u64> = mods.iter().filter_map(|d| d.d_all_ns()).collect();
        m.d_control.extend_from_slice(&run_dc);
        m.d_data.extend_from_slice(&run_dd);
        m.d_all.extend_from_slice(&run_da);
        if opts.hdr_dir.is_some() {
            let run_ml = m.latency[first_write..].to_vec();
            for (i, values) in [run_dc, run_dd, run_da, run_ml].into_iter().enumerate() {
                self.series[i].push(RunValues {
                    tag: format!("run{run}"),
                    start: run_start.duration_since(self.began),
                    duration: run_start.elapsed(),
                    values,
                });
            }
        }
        (self.progress)(&format!(
            "modifies, run {}: {} modifies, {s} packets, {l} dropped",
            run + 1,
            opts.modifies
        ));
        Ok(())
    }
}

/// The modify runs' traffic: one worker sending packets to 10.0.0.1 at `rate` packets per
/// second until `stop` is set. Returns the packets sent and those the switch dropped.
fn router_traffic(
    sw: Arc<nevermiss_runtime::Switch>,
    rate: u64,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<(u64, u64)> {
    std::thread::spawn(move || {
        let mut w = Worker::new(sw.clone(), 1);
        let pkt = router_packet([10, 0, 0, 1]);
        let (mut sent, mut lost) = (0u64, 0u64);
        let start = Instant::now();
        let gap_ns = 1_000_000_000 / rate;
        while !stop.load(Ordering::Relaxed) {
            let due = start + Duration::from_nanos(gap_ns.saturating_mul(sent));
            while Instant::now() < due {
                std::hint::spin_loop();
            }
            if w.process(&pkt, 0, sw.now_ns()).is_empty() {
                lost += 1;
            }
            sent += 1;
        }
        (sent, lost)
    })
}

pub(crate) fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    match s.len() {
        0 => 0.0,
        n if n % 2 == 1 => s[n / 2],
        n => (s[n / 2 - 1] + s[n / 2]) / 2.0,
    }
}

impl P4rtReport {
    /// The report as text.
    pub fn render(&self) -> String {
        let us = |p: &Percentiles| {
            format!(
                "p50 {:.1} µs, p99 {:.1} µs, p99.99 {:.1} µs, max {:.1} µs ({} updates)",
                p.p50 as f64 / 1e3,
                p.p99 as f64 / 1e3,
                p.p99_99 as f64 / 1e3,
                p.max as f64 / 1e3,
                p.n
            )
        };
        let mut s = String::from(
            "P4Runtime Write (tonic client over TCP on 127.0.0.1), medians of runs:\n",
        );
        for r in &self.inserts {
            s.push_str(&format!(
                "  inserts in batches of {:>4}: {:>10.0} entries/s ({} entries per run, {} Write{} in flight, {})\n",
                r.batch,
                r.entries_per_s,
                r.entries,
                r.in_flight,
                if r.in_flight == 1 { "" } else { "s" },
                if r.built_in_loop {
                    "built and encoded as sent"
                } else {
                    "requests prepared before the clock"
                }
            ));
        }
        // Measured only on runs of single-update Writes, one in flight (`--batches 1`).
        if self.write_latency_ns.n > 0 {
            s.push_str(&format!(
                "  single-update Write latency (client): {}\n",
                us(&self.write_latency_ns)
            ));
        }
        s.push_str(&format!(
            "modifies of one route between two next hops, {} per run, under {} packets/s:\n",
            self.modifies, self.rate_pps
        ));
        s.push_str(&format!("  d_control: {}\n", us(&self.d_control_ns)));
        s.push_str(&format!("  d_data:    {}\n", us(&self.d_data_ns)));
        s.push_str(&format!("  d_all:     {}\n", us(&self.d_all_ns)));
        s.push_str(&format!(
            "  Write latency (client): {}\n",
            us(&self.modify_latency_ns)
        ));
        s.push_str(&format!(
            "  packets: {}, dropped (no entry or the default action): {}\n",
            self.packets, self.packets_dropped
        ));
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hdr_logs_skip_empty_series_and_keep_runs_apart() {
        let dir = std::env::temp_dir().join(format!("nm-p4rt-hdr-{}", std::process::id()));
        hdr::prepare_dir(&dir).unwrap();
        let run = |k: usize, values: Vec<u64>| RunValues {
            tag: format!("run{k}"),
            start: Duration::from_millis(k as u64),
            duration: Duration::from_millis(1),
            values,
        };
        let mut series: [Vec<RunValues>; 5] = Default::default();
        series[0] = vec![run(0, vec![1_000, 2_000]), run(1, vec![3_000])];
        series[1] = vec![run(0, vec![0, 5])];
        let opts = P4rtOptions {
            hdr_dir: Some(dir.clone()),
            ..Default::default()
        };
        let files = write_hdr_logs(&dir, &opts, &series).unwrap();
        let names: Vec<&str> = files.iter().map(|f| f.file.as_str()).collect();
        assert_eq!(names, ["modify.d_control.hlog", "modify.d_data.hlog"]);
        assert_eq!((files[0].intervals, files[0].values), (2, 3));
        let back = hdr::read_log(&dir.join("modify.d_control.hlog")).unwrap();
        assert_eq!(back.len(), 2);
        assert_eq!(back[1].0, "run1");
        assert_eq!(back[0].1.len(), 2);
        assert!(back[1].1.equivalent(back[1].1.max(), 3_000));
        assert!(!dir.join("insert.write.hlog").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
