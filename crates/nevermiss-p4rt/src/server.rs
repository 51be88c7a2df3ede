//! The P4Runtime gRPC service (`p4.v1.P4Runtime`, spec v1.5): arbitration, pipeline config,
//! Write, Read, the stream channel (PacketIn/PacketOut, DigestList, IdleTimeoutNotification)
//! and Capabilities, over one device. What is served and the choices made where the spec
//! leaves room: docs/p4runtime.md.

#![allow(deprecated)] // `controller_metadata` is deprecated in P4Runtime 1.4 but must still be stored and read back.

use crate::arbitration::{Arbitration, Outbox};
use crate::device_config;
use crate::entities;
use crate::p4info;
use crate::pb::google::rpc;
use crate::pb::p4::config::v1 as pi;
use crate::pb::p4::v1 as p4;
use crate::pb::p4::v1::p4_runtime_server::{P4Runtime, P4RuntimeServer};
use crate::pipeline::{IdMap, Pipeline, ReadWants};
use nevermiss_io::{Batch, Packet, Port, PortError, PortStats};
use nevermiss_runtime::control::{Atomicity, Change, ControlError, Op};
use nevermiss_runtime::handover::Handover;
use nevermiss_runtime::{Config, Switch};
use prost::Message;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::{Stream, StreamExt};
use tonic::{Code, Request, Response, Status, Streaming};

/// The version `Capabilities` reports.
pub const API_VERSION: &str = "1.5.0";

/// What PI says when no pipeline is set (clients match this text).
pub const NO_PIPELINE: &str = "No forwarding pipeline config set for this device";

/// Server settings.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// The `device_id` a request must name (P4Runtime §7.1); others get `NOT_FOUND`.
    pub device_id: u64,
    /// The port PacketOuts enter on and packets to which become PacketIns.
    pub cpu_port: u32,
    /// The runtime configuration of every pipeline loaded.
    pub config: Config,
    /// How often expiry, idle-timeout notifications and digests are processed.
    pub tick: Duration,
    /// Largest request accepted (larger ones get `RESOURCE_EXHAUSTED`); the spec asks for at
    /// least 4 MiB and enough for a device config, PI allows 256 MiB.
    pub max_message_bytes: usize,
}

impl Default for ServeOptions {
    fn default() -> ServeOptions {
        ServeOptions {
            device_id: 1,
            cpu_port: 510,
            config: Config::default(),
            tick: Duration::from_millis(10),
            max_message_bytes: 256 << 20,
        }
    }
}

/// A digest's configuration (P4Runtime `DigestEntry.Config`) and its pending list.
#[derive(Clone, Debug, Default)]
struct DigestState {
    config: p4::digest_entry::Config,
    pending: Vec<p4::P4Data>,
    first_ns: u64,
    /// Messages sent and not yet acknowledged (P4Runtime §16.1 "DigestList"): their encoded
    /// data → (list id, when sent). A message in here is not sent again until its list is
    /// acknowledged or `ack_timeout_ns` passes. Empty when `ack_timeout_ns` is 0.
    unacked: HashMap<Vec<u8>, (u64, u64)>,
}

impl DigestState {
    /// Forgets the messages of list `list_id` (acknowledged).
    fn ack(&mut self, list_id: u64) {
        self.unacked.retain(|_, (l, _)| *l != list_id);
    }

    /// Forgets messages sent `ack_timeout_ns` ago or earlier.
    fn expire(&mut self, now: u64) {
        let t = self.config.ack_timeout_ns.max(0) as u64;
        self.unacked
            .retain(|_, (_, sent)| t > 0 && now.saturating_sub(*sent) < t);
    }
}

/// The delays of one applied update (papers/002 §IV): d_control from the Write's arrival to the
/// change being visible to the data plane, d_data from then to the first packet that used the
/// new or modified entry (entry inserts and modifies only; `None` until a packet has).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UpdateDelay {
    /// When the Write arrived (ns on the switch's clock).
    pub received_ns: u64,
    /// d_control: from the Write's arrival to the change being visible to the data plane (ns).
    pub d_control_ns: u64,
    /// d_data: from the change being visible to the first packet that used it (ns); `None` until
    /// a packet has, and for updates other than inserts and modifies.
    pub d_data_ns: Option<u64>,
}

impl UpdateDelay {
    /// d_all = d_control + d_data.
    pub fn d_all_ns(&self) -> Option<u64> {
        self.d_data_ns.map(|d| d + self.d_control_ns)
    }
}

/// p50, p99, p99.99 and max of `v` (sorted in place); `None` when empty.
pub fn percentiles(v: &mut [u64]) -> Option<[u64; 4]> {
    if v.is_empty() {
        return None;
    }
    v.sort_unstable();
    let at = |q: f64| v[((v.len() as f64 * q).ceil() as usize).clamp(1, v.len()) - 1];
    Some([at(0.5), at(0.99), at(0.9999), v[v.len() - 1]])
}

#[derive(Default)]
struct Delays {
    rows: Rows,
    /// Probe id → row.
    pending: IdMap<u64, usize>,
}

/// Every update's delays, in chunks of a fixed size: recording one never moves the others
/// (a single vector of millions of rows would be copied whenever it grows, inside a Write).
#[derive(Default)]
struct Rows {
    chunks: Vec<Vec<UpdateDelay>>,
    len: usize,
}

impl Rows {
    /// Rows per chunk (2 MiB).
    const CHUNK: usize = 1 << 16;

    fn push(&mut self, r: UpdateDelay) {
        if self.len.is_multiple_of(Self::CHUNK) {
            self.chunks.push(Vec::with_capacity(Self::CHUNK));
        }
        if let Some(c) = self.chunks.last_mut() {
            c.push(r);
            self.len += 1;
        }
    }

    fn get_mut(&mut self, i: usize) -> Option<&mut UpdateDelay> {
        self.chunks
            .get_mut(i / Self::CHUNK)
            .and_then(|c| c.get_mut(i % Self::CHUNK))
    }

    fn to_vec(&self) -> Vec<UpdateDelay> {
        self.chunks.concat()
    }

    fn clear(&mut self) {
        self.chunks.clear();
        self.len = 0;
    }
}

/// Counters of what the server did.
#[derive(Debug, Default)]
pub struct ServerStats {
    /// `Write` RPCs served.
    pub writes: u64,
    /// Updates in them, applied or not.
    pub updates: u64,
    /// Updates that failed (an error in the Write's `details`, P4Runtime §14.3).
    pub failed_updates: u64,
    /// `Read` RPCs served.
    pub reads: u64,
    /// PacketOuts received on the stream (P4Runtime §18.1).
    pub packet_outs: u64,
    /// PacketIns sent: packets the pipeline sent to the CPU port.
    pub packet_ins: u64,
    /// `DigestList`s sent (P4Runtime §18.3).
    pub digest_lists: u64,
    /// Table entries reported in `IdleTimeoutNotification`s sent to the primary (P4Runtime §18.4).
    pub idle_notifications: u64,
    /// Packets a PacketOut produced for ports other than the CPU port when no traffic loop
    /// runs them (no port is attached).
    pub unsent: u64,
    /// Pipeline commits: a new pipeline made current (`VERIFY_AND_COMMIT`, `COMMIT`,
    /// `RECONCILE_AND_COMMIT`; P4Runtime §16).
    pub commits: u64,
    /// The commits that were RECONCILE_AND_COMMIT (P4Runtime §16), counted in `commits` too.
    pub reconciles: u64,
}

/// How long a commit waits for every traffic loop to take the new pipeline
/// ([`Handover::replace`]); a loop takes it between two batches, within microseconds.
const HANDOVER_TIMEOUT: Duration = Duration::from_secs(5);

/// Most PacketOuts waiting for the traffic loop; beyond, a PacketOut gets a `StreamError`
/// `RESOURCE_EXHAUSTED`.
const PACKET_OUT_QUEUE: usize = 4096;

/// One translated update of a Write.
enum Item {
    Change(Change),
    Digest(Op, p4::DigestEntry),
}

/// The device: the current pipeline, the saved one, arbitration, digests.
pub struct Device {
    /// The settings the server was started with.
    pub opts: ServeOptions,
    pipeline: RwLock<Option<Arc<Pipeline>>>,
    /// The switch the traffic loops run: a commit hands the new pipeline's over and returns
    /// when every loop runs it (`nevermiss_runtime::handover`).
    pub handover: Arc<Handover>,
    /// Writes hold it shared, a commit exclusively: no Write applies to a pipeline on its way
    /// out, and RECONCILE_AND_COMMIT copies a state no Write changes meanwhile.
    config_lock: RwLock<()>,
    /// PacketOuts waiting for a traffic loop's CPU port ([`Device::cpu_port`]), and how many.
    packet_outs: Mutex<VecDeque<Vec<u8>>>,
    packet_outs_queued: AtomicUsize,
    /// A traffic loop's CPU port receives PacketOuts (else they run on `Pipeline::worker`).
    packet_out_loop: AtomicBool,
    /// Set at shutdown: every stream ends with `UNAVAILABLE`.
    closing: tokio::sync::watch::Sender<bool>,
    saved: Mutex<Option<Arc<Pipeline>>>,
    arbitration: Mutex<Arbitration>,
    digests: Mutex<BTreeMap<u32, DigestState>>,
    next_list: Mutex<u64>,
    /// What the server did so far ([`ServerStats`]).
    pub stats: Mutex<ServerStats>,
    delays: Mutex<Delays>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// RESOURCE_EXHAUSTED for a request over the server's limit: its size as received (counted
/// by [`GrpcService`]), else as encoded again.
fn check_size<T: Message>(r: &Request<T>, max: usize) -> Result<(), Status> {
    let n = match r.extensions().get::<BodySize>() {
        Some(b) => {
            b.0.load(std::sync::atomic::Ordering::Relaxed)
                .saturating_sub(5)
        }
        None => r.get_ref().encoded_len(),
    };
    if n > max {
        return Err(Status::resource_exhausted(format!(
            "request of {n} bytes is over the server's limit of {max} bytes"
        )));
    }
    Ok(())
}

fn status_of(e: &ControlError) -> Status {
    Status::new(Code::from_i32(e.code()), e.message())
}

impl Device {
    /// A device with no pipeline yet (requests but `SetForwardingPipelineConfig` and arbitration
    /// get `FAILED_PRECONDITION`), no controller and no traffic loop attached.
    pub fn new(opts: ServeOptions) -> Arc<Device> {
        Arc::new(Device {
            opts,
            pipeline: RwLock::new(None),
            handover: Handover::new(None),
            config_lock: RwLock::new(()),
            packet_outs: Mutex::new(VecDeque::new()),
            packet_outs_queued: AtomicUsize::new(0),
            packet_out_loop: AtomicBool::new(false),
            closing: tokio::sync::watch::Sender::new(false),
            saved: Mutex::new(None),
            arbitration: Mutex::new(Arbitration::default()),
            digests: Mutex::new(BTreeMap::new()),
            next_list: Mutex::new(0),
            stats: Mutex::new(ServerStats::default()),
            delays: Mutex::new(Delays::default()),
        })
    }

    /// The current pipeline.
    pub fn pipeline(&self) -> Option<Arc<Pipeline>> {
        self.pipeline
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Loads a pipeline from a device config (and the controller's P4Info, which must match
    /// the program's ids and names).
    pub fn load(
        &self,
        device_config: &[u8],
        given: Option<pi::P4Info>,
        cookie: Option<u64>,
    ) -> Result<Arc<Pipeline>, Status> {
        let loaded = device_config::decode(device_config)
            .map_err(|e| Status::invalid_argument(format!("device config: {e}")))?;
        // The P4Info is made from the IR, so a BMv2 JSON program gets one as a P4 program does.
        let built = p4info::build(&loaded.program)
            .map_err(|e| Status::invalid_argument(format!("P4Info: {e}")))?;
        let p4info = match given {
            Some(g) => {
                check_compatible(&built.p4info, &g)?;
                g
            }
            None => built.p4info,
        };
        let config = Config {
            track_updates: true,
            ..self.opts.config.clone()
        };
        let sw = Switch::new(loaded.program, config)
            .map_err(|e| Status::invalid_argument(format!("cannot build the switch: {e}")))?;
        Ok(Arc::new(Pipeline::new(
            Arc::new(sw),
            p4info,
            built.ids,
            prost::bytes::Bytes::copy_from_slice(device_config),
            cookie,
        )))
    }

    /// Makes `p` the current pipeline (forwarding state starts empty: VERIFY_AND_COMMIT,
    /// COMMIT) and drops digest configurations. Returns when every traffic loop runs `p`
    /// (P4Runtime §"SetForwardingPipelineConfig": the next packet sees the new pipeline),
    /// with the time the handover took.
    pub fn commit(&self, p: Arc<Pipeline>) -> Result<Duration, Status> {
        let _g = self
            .config_lock
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        lock(&self.digests).clear();
        self.install(p)
    }

    /// RECONCILE_AND_COMMIT (P4Runtime §"SetForwardingPipelineConfig": realize the new config
    /// "while preserving the forwarding state"): the current pipeline's state is read as
    /// P4Runtime entities — action profile members and groups, table entries, modified
    /// default entries, multicast groups, clone sessions, value sets, digest configurations —
    /// and written into `p` by id, before `p` takes over; what no longer fits the new P4Info
    /// (a table, action or field gone or changed) is left out. Counters, meters and registers
    /// start anew. Returns (entities kept, entities read).
    pub fn reconcile(&self, p: Arc<Pipeline>) -> Result<(usize, usize), Status> {
        let _g = self
            .config_lock
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        let Some(old) = self.pipeline() else {
            self.install(p)?;
            return Ok((0, 0));
        };
        use p4::entity::Entity as E;
        let mut wanted: Vec<(Op, E)> = Vec::new();
        let read = |e: E| self.read_entity(&old, &e).unwrap_or_default();
        for (op, e) in [
            (Op::Insert, E::ActionProfileMember(Default::default())),
            (Op::Insert, E::ActionProfileGroup(Default::default())),
            (Op::Insert, E::TableEntry(Box::default())),
        ] {
            wanted.extend(
                read(e)
                    .into_iter()
                    .filter_map(|x| x.entity)
                    .map(|x| (op, x)),
            );
        }
        for (id, t) in old.all_tables() {
            if !old.sw.default_changed(t).unwrap_or(false) {
                continue;
            }
            let d = E::TableEntry(Box::new(p4::TableEntry {
                table_id: id,
                is_default_action: true,
                ..Default::default()
            }));
            wanted.extend(
                read(d)
                    .into_iter()
                    .filter_map(|x| x.entity)
                    .map(|x| (Op::Modify, x)),
            );
        }
        use p4::packet_replication_engine_entry::Type as T;
        for pre in [
            T::MulticastGroupEntry(Default::default()),
            T::CloneSessionEntry(Default::default()),
        ] {
            let e = E::PacketReplicationEngineEntry(p4::PacketReplicationEngineEntry {
                r#type: Some(pre),
            });
            wanted.extend(
                read(e)
                    .into_iter()
                    .filter_map(|x| x.entity)
                    .map(|x| (Op::Insert, x)),
            );
        }
        wanted.extend(
            read(E::ValueSetEntry(Default::default()))
                .into_iter()
                .filter_map(|x| x.entity)
                .map(|x| (Op::Modify, x)),
        );
        // Constant entries come with the program.
        wanted.retain(|(_, e)| !matches!(e, E::TableEntry(t) if t.is_const));
        let total = wanted.len();
        let changes: Vec<Change> = wanted
            .iter()
            .filter_map(|(op, e)| entities::translate(&p, *op, e).ok())
            .collect();
        let kept =
            p.sw.write(&changes, Atomicity::ContinueOnError)
                .iter()
                .filter(|r| r.is_ok())
                .count();
        // Digest configurations of digests the new program still has.
        let mut digests = lock(&self.digests);
        let old_digests = std::mem::take(&mut *digests);
        let total = total + old_digests.len();
        let mut kept = kept;
        for (id, st) in old_digests {
            let known = p
                .p4info
                .digests
                .iter()
                .any(|x| x.preamble.as_ref().is_some_and(|pre| pre.id == id));
            if known {
                digests.insert(
                    id,
                    DigestState {
                        config: st.config,
                        ..Default::default()
                    },
                );
                kept += 1;
            }
        }
        drop(digests);
        self.install(p)?;
        lock(&self.stats).reconciles += 1;
        Ok((kept, total))
    }

    /// `p` becomes current, and the traffic loops' switch (waiting for them to take it).
    fn install(&self, p: Arc<Pipeline>) -> Result<Duration, Status> {
        let sw = p.sw.clone();
        *self
            .pipeline
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Some(p);
        lock(&self.stats).commits += 1;
        self.handover
            .replace(Some(sw), HANDOVER_TIMEOUT)
            .map_err(|e| Status::internal(format!("the pipeline was not taken over: {e}")))
    }

    /// Ends every stream (the clients see `UNAVAILABLE`): the server is stopping.
    pub fn shutdown(&self) {
        self.closing.send_replace(true);
    }

    fn check_device(&self, id: u64) -> Result<(), Status> {
        if id != self.opts.device_id {
            return Err(Status::not_found(format!("unknown device id {id}")));
        }
        Ok(())
    }

    fn check_primary(&self, role: &str, election_id: Option<&p4::Uint128>) -> Result<(), Status> {
        let arb = lock(&self.arbitration);
        if !arb.is_primary(role, election_id.map(u128_of)) {
            return Err(Status::permission_denied("Not primary"));
        }
        Ok(())
    }

    fn current(&self) -> Result<Arc<Pipeline>, Status> {
        self.pipeline()
            .ok_or_else(|| Status::failed_precondition(NO_PIPELINE))
    }

    /// Sends a message to the primary of the default role, if there is one.
    fn to_primary(&self, m: p4::stream_message_response::Update) -> bool {
        let arb = lock(&self.arbitration);
        arb.send_to_primary("", p4::StreamMessageResponse { update: Some(m) })
    }

    /// Runs one PacketOut through the pipeline from the CPU port, as BMv2 does: with traffic
    /// ports, it enters the traffic loop on the CPU port ([`Device::cpu_port`]) and leaves on
    /// whatever ports the program chooses (traffic ports, multicast, clones); packets to the
    /// CPU port come back as PacketIns to the primary. Without a traffic loop it runs here
    /// and only the CPU port's packets go anywhere.
    fn packet_out(&self, po: &p4::PacketOut) -> Result<(), ControlError> {
        let Some(p) = self.pipeline() else {
            return Err(ControlError::FailedPrecondition(NO_PIPELINE.into()));
        };
        let bytes = p.packet_out_bytes(po)?;
        if self.packet_out_loop.load(Ordering::Acquire) {
            let mut q = lock(&self.packet_outs);
            if q.len() >= PACKET_OUT_QUEUE {
                return Err(ControlError::ResourceExhausted(format!(
                    "{PACKET_OUT_QUEUE} PacketOuts are waiting for the data plane"
                )));
            }
            q.push_back(bytes);
            self.packet_outs_queued.store(q.len(), Ordering::Release);
            drop(q);
            lock(&self.stats).packet_outs += 1;
            return Ok(());
        }
        let outs: Vec<(u32, Vec<u8>)> = {
            let mut w = lock(&p.worker);
            let now = p.sw.now_ns();
            w.process(&bytes, self.opts.cpu_port, now)
                .as_slice()
                .to_vec()
        };
        lock(&self.stats).packet_outs += 1;
        self.deliver(&p, outs);
        Ok(())
    }

    fn deliver(&self, p: &Pipeline, outs: Vec<(u32, Vec<u8>)>) {
        for (port, data) in outs {
            if port == self.opts.cpu_port {
                let pin = p.packet_in(&data);
                if self.to_primary(p4::stream_message_response::Update::Packet(pin)) {
                    lock(&self.stats).packet_ins += 1;
                }
            } else {
                lock(&self.stats).unsent += 1;
            }
        }
    }

    /// The CPU port as a traffic port (`nevermiss serve --port`): packets the program sends
    /// to it become PacketIns to the primary (in the current pipeline's `packet_in` format).
    /// With `receive` (one traffic loop's), PacketOuts enter the pipeline through it.
    pub fn cpu_port(self: &Arc<Device>, receive: bool) -> Box<dyn Port> {
        if receive {
            self.packet_out_loop.store(true, Ordering::Release);
        }
        Box::new(CpuPort {
            stats: PortStats::new(self.opts.cpu_port),
            dev: self.clone(),
            receive,
        })
    }

    /// Expiry, idle-timeout notifications and digest lists: called every tick.
    pub fn tick(&self) {
        let Some(p) = self.pipeline() else { return };
        let now = p.sw.now_ns();
        p.sw.expire(now);
        let notes = p.sw.take_idle_notifications();
        if !notes.is_empty() {
            let entries: Vec<p4::TableEntry> = notes
                .iter()
                .map(|n| {
                    let mut e = p.entry_of(n.table, &n.entry, ReadWants::default());
                    e.action = None;
                    e.is_const = false;
                    e
                })
                .collect();
            let n = entries.len() as u64;
            let sent = self.to_primary(
                p4::stream_message_response::Update::IdleTimeoutNotification(
                    p4::IdleTimeoutNotification {
                        table_entry: entries,
                        timestamp: unix_ns(),
                    },
                ),
            );
            if sent {
                lock(&self.stats).idle_notifications += n;
            }
        }
        self.harvest_probes(&p, false);
        let msgs = p.sw.take_digests();
        let mut digests = lock(&self.digests);
        for st in digests.values_mut() {
            st.expire(now);
        }
        for m in msgs {
            let Some((id, data)) = p.digest_data(&m.name, &m.data) else {
                continue;
            };
            let Some(st) = digests.get_mut(&id) else {
                continue;
            };
            // Duplicates are filtered within a list and against the sent, unacknowledged ones.
            if st.pending.contains(&data)
                || (!st.unacked.is_empty() && st.unacked.contains_key(&data.encode_to_vec()))
            {
                continue;
            }
            if st.pending.is_empty() {
                st.first_ns = now;
            }
            st.pending.push(data);
        }
        let mut lists = Vec::new();
        let mut next_list = lock(&self.next_list);
        for (id, st) in digests.iter_mut() {
            if st.pending.is_empty() {
                continue;
            }
            let c = st.config;
            let full = c.max_list_size > 0 && st.pending.len() >= c.max_list_size as usize;
            let due = now.saturating_sub(st.first_ns) >= c.max_timeout_ns.max(0) as u64;
            if !(full || due) {
                continue;
            }
            let pending = std::mem::take(&mut st.pending);
            // max_timeout_ns 0 or max_list_size 1: a list per message; else lists of at most
            // max_list_size (0: no limit).
            let per_list = if c.max_timeout_ns == 0 || c.max_list_size == 1 {
                1
            } else if c.max_list_size > 0 {
                c.max_list_size as usize
            } else {
                pending.len()
            };
            for chunk in pending.chunks(per_list.max(1)) {
                *next_list += 1;
                let list_id = *next_list;
                if c.ack_timeout_ns > 0 {
                    for d in chunk {
                        st.unacked.insert(d.encode_to_vec(), (list_id, now));
                    }
                }
                lists.push((*id, list_id, chunk.to_vec()));
            }
        }
        drop(next_list);
        drop(digests);
        for (id, list_id, data) in lists {
            if self.to_primary(p4::stream_message_response::Update::Digest(
                p4::DigestList {
                    digest_id: id,
                    list_id,
                    data,
                    timestamp: unix_ns(),
                },
            )) {
                lock(&self.stats).digest_lists += 1;
            }
        }
    }

    fn harvest_probes(&self, p: &Pipeline, all: bool) {
        let probes = p.sw.take_update_probes(all);
        if probes.is_empty() {
            return;
        }
        let mut d = lock(&self.delays);
        for pr in probes {
            if let Some(i) = d.pending.remove(&pr.id) {
                if let Some(row) = d.rows.get_mut(i) {
                    row.d_data_ns = pr.d_data_ns();
                }
            }
        }
    }

    /// The delays of every update applied so far (packets' first uses up to now included).
    pub fn update_delays(&self) -> Vec<UpdateDelay> {
        if let Some(p) = self.pipeline() {
            self.harvest_probes(&p, false);
        }
        lock(&self.delays).rows.to_vec()
    }

    /// Forgets the recorded delays.
    pub fn clear_update_delays(&self) {
        let mut d = lock(&self.delays);
        d.rows.clear();
        d.pending.clear();
    }

    fn record(&self, received_ns: u64, applied: &[Option<nevermiss_runtime::control::Applied>]) {
        let mut d = lock(&self.delays);
        for a in applied.iter().flatten() {
            let i = d.rows.len;
            d.rows.push(UpdateDelay {
                received_ns,
                d_control_ns: a.visible_ns.saturating_sub(received_ns),
                d_data_ns: None,
            });
            if let Some(pr) = a.probe {
                d.pending.insert(pr, i);
            }
        }
    }

    // ------------------------------------------------------------------ Write

    fn write_updates(
        &self,
        p: &Pipeline,
        req: &p4::WriteRequest,
        received_ns: u64,
    ) -> Vec<Result<(), ControlError>> {
        let atomicity = match req.atomicity {
            0 => Atomicity::ContinueOnError,
            1 => Atomicity::RollbackOnError,
            2 => Atomicity::DataplaneAtomic,
            a => {
                return req
                    .updates
                    .iter()
                    .map(|_| {
                        Err(ControlError::InvalidArgument(format!(
                            "unknown atomicity {a}"
                        )))
                    })
                    .collect()
            }
        };
        // Translate every update; digest configurations are the server's own state.
        let items: Vec<Result<Item, ControlError>> = req
            .updates
            .iter()
            .map(|u| {
                let op = match u.r#type {
                    1 => Op::Insert,
                    2 => Op::Modify,
                    3 => Op::Delete,
                    _ => {
                        return Err(ControlError::InvalidArgument(
                            "update type unspecified".into(),
                        ))
                    }
                };
                let Some(ent) = u.entity.as_ref().and_then(|e| e.entity.as_ref()) else {
                    return Err(ControlError::InvalidArgument("entity unset".into()));
                };
                match ent {
                    p4::entity::Entity::DigestEntry(d) => Ok(Item::Digest(op, *d)),
                    other => entities::translate(p, op, other).map(Item::Change),
                }
            })
            .collect();
        if atomicity != Atomicity::ContinueOnError {
            // Digest configurations are the server's own state, applied after the switch's
            // changes: check them first, so that a batch that fails fails before anything.
            let items: Vec<Result<Item, ControlError>> = items
                .into_iter()
                .map(|r| match r {
                    Ok(Item::Digest(op, d)) => {
                        self.check_digest(p, op, &d).map(|()| Item::Digest(op, d))
                    }
                    other => other,
                })
                .collect();
            if let Some(i) = items.iter().position(|r| r.is_err()) {
                return items
                    .into_iter()
                    .enumerate()
                    .map(|(j, r)| match r {
                        Err(e) if j == i => Err(e),
                        _ => Err(ControlError::Aborted(format!(
                            "update {} is invalid; nothing of the batch was applied",
                            i + 1
                        ))),
                    })
                    .collect();
            }
            return self.apply_items(p, items, atomicity, received_ns);
        }
        self.apply_items(p, items, atomicity, received_ns)
    }

    fn apply_items(
        &self,
        p: &Pipeline,
        items: Vec<Result<Item, ControlError>>,
        atomicity: Atomicity,
        received_ns: u64,
    ) -> Vec<Result<(), ControlError>> {
        // The changes move out of the items; each item keeps its place (`None`: a change).
        let mut changes: Vec<Change> = Vec::with_capacity(items.len());
        let items: Vec<Result<Option<(Op, p4::DigestEntry)>, ControlError>> = items
            .into_iter()
            .map(|r| match r {
                Ok(Item::Change(c)) => {
                    changes.push(c);
                    Ok(None)
                }
                Ok(Item::Digest(op, d)) => Ok(Some((op, d))),
                Err(e) => Err(e),
            })
            .collect();
        let results = p.sw.write(&changes, atomicity);
        drop(changes);
        let ok: Vec<Option<nevermiss_runtime::control::Applied>> =
            results.iter().map(|r| r.as_ref().ok().copied()).collect();
        self.record(received_ns, &ok);
        let mut applied = results.into_iter();
        let mut out = Vec::with_capacity(items.len());
        let mut failed = false;
        for r in items {
            out.push(match r {
                Err(e) => Err(e),
                Ok(None) => match applied.next() {
                    Some(Ok(_)) => Ok(()),
                    Some(Err(e)) => {
                        failed = true;
                        Err(e)
                    }
                    None => Err(ControlError::Internal("no result".into())),
                },
                Ok(Some((op, d))) => {
                    if failed && atomicity != Atomicity::ContinueOnError {
                        Err(ControlError::Aborted("the batch was rolled back".into()))
                    } else {
                        self.write_digest(p, op, &d)
                    }
                }
            });
        }
        out
    }

    /// Whether a digest configuration update would succeed (without applying it).
    fn check_digest(&self, p: &Pipeline, op: Op, d: &p4::DigestEntry) -> Result<(), ControlError> {
        if !p
            .p4info
            .digests
            .iter()
            .any(|x| x.preamble.as_ref().is_some_and(|pre| pre.id == d.digest_id))
        {
            return Err(ControlError::NotFound(format!(
                "unknown digest id {}",
                d.digest_id
            )));
        }
        let exists = lock(&self.digests).contains_key(&d.digest_id);
        match op {
            Op::Insert | Op::Modify => match &d.config {
                None => Err(ControlError::InvalidArgument("digest config unset".into())),
                Some(c) if c.max_timeout_ns < 0 || c.max_list_size < 0 || c.ack_timeout_ns < 0 => {
                    Err(ControlError::InvalidArgument(
                        "digest config values must not be negative".into(),
                    ))
                }
                Some(_) if op == Op::Insert && exists => Err(ControlError::AlreadyExists(format!(
                    "digest {} is already configured",
                    d.digest_id
                ))),
                Some(_) if op == Op::Modify && !exists => Err(ControlError::NotFound(format!(
                    "digest {} is not configured",
                    d.digest_id
                ))),
                Some(_) => Ok(()),
            },
            Op::Delete if !exists => Err(ControlError::NotFound(format!(
                "digest {} is not configured",
                d.digest_id
            ))),
            Op::Delete => Ok(()),
        }
    }

    fn write_digest(&self, p: &Pipeline, op: Op, d: &p4::DigestEntry) -> Result<(), ControlError> {
        if !p
            .p4info
            .digests
            .iter()
            .any(|x| x.preamble.as_ref().is_some_and(|pre| pre.id == d.digest_id))
        {
            return Err(ControlError::NotFound(format!(
                "unknown digest id {}",
                d.digest_id
            )));
        }
        let mut digests = lock(&self.digests);
        match op {
            Op::Insert | Op::Modify => {
                let Some(c) = &d.config else {
                    return Err(ControlError::InvalidArgument("digest config unset".into()));
                };
                if c.max_timeout_ns < 0 || c.max_list_size < 0 || c.ack_timeout_ns < 0 {
                    return Err(ControlError::InvalidArgument(
                        "digest config values must not be negative".into(),
                    ));
                }
                let exists = digests.contains_key(&d.digest_id);
                if op == Op::Insert && exists {
                    return Err(ControlError::AlreadyExists(format!(
                        "digest {} is already configured",
                        d.digest_id
                    )));
                }
                if op == Op::Modify && !exists {
                    return Err(ControlError::NotFound(format!(
                        "digest {} is not configured",
                        d.digest_id
                    )));
                }
                let st = digests.entry(d.digest_id).or_default();
                st.config = *c;
                Ok(())
            }
            Op::Delete => match digests.remove(&d.digest_id) {
                Some(_) => Ok(()),
                None => Err(ControlError::NotFound(format!(
                    "digest {} is not configured",
                    d.digest_id
                ))),
            },
        }
    }

    // ------------------------------------------------------------------ Read

    /// The entities a read of `e` names ([`entities::read`]); digest configurations are this
    /// server's own.
    fn read_entity(
        &self,
        p: &Pipeline,
        e: &p4::entity::Entity,
    ) -> Result<Vec<p4::Entity>, ControlError> {
        entities::read(p, e, || {
            let digests = lock(&self.digests);
            digests.iter().map(|(id, st)| (*id, st.config)).collect()
        })
    }
}

/// The controller's P4Info must give every table and action of the program the id nevermiss
/// gives it (p4c's allocation), so that the server's translation is the controller's.
fn check_compatible(ours: &pi::P4Info, given: &pi::P4Info) -> Result<(), Status> {
    let names = |p: &pi::P4Info| -> HashMap<String, u32> {
        let mut m = HashMap::new();
        for pre in p
            .tables
            .iter()
            .filter_map(|t| t.preamble.as_ref())
            .chain(p.actions.iter().filter_map(|a| a.preamble.as_ref()))
        {
            m.insert(pre.name.clone(), pre.id);
        }
        m
    };
    let (a, b) = (names(ours), names(given));
    for (name, id) in &a {
        match b.get(name) {
            Some(g) if g == id => {}
            Some(g) => {
                return Err(Status::invalid_argument(format!(
                    "the P4Info gives {name} id {g}, the program's P4Info {id} \
                     (nevermiss p4info PROGRAM writes the matching one)"
                )))
            }
            None => {
                return Err(Status::invalid_argument(format!(
                    "the P4Info lacks {name} of the program (nevermiss p4info PROGRAM writes \
                     the matching one)"
                )))
            }
        }
    }
    Ok(())
}

fn u128_of(u: &p4::Uint128) -> u128 {
    (u128::from(u.high) << 64) | u128::from(u.low)
}

fn unix_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

/// Most bytes of the encoded `google.rpc.Status` of `batch_status` (its details, code and
/// message). gRPC core (grpcio, so
/// p4runtime-shell, finsy and p4c's PTF base test) refuses trailers over its soft limit of
/// 8192 bytes (`grpc.max_metadata_size`), counting every entry as its name, its value *as
/// sent* — a binary header's value base64-encoded, 4/3 of its bytes — and 32 bytes; a Write's
/// error comes as one header block with `:status`, `content-type`, `grpc-status`,
/// `grpc-message` (at most `TOP_MESSAGE_MAX` bytes, percent-encoded) and
/// `grpc-status-details-bin`: 5120 bytes of status (6827 base64) keep the block under 7700.
pub const DETAILS_BUDGET: usize = 5120;

/// Most bytes of the top-level message as sent (`grpc-message`, percent-encoded).
const TOP_MESSAGE_MAX: usize = 512;

/// Most bytes of one update's `message` (longer ones are cut at a character boundary).
const MESSAGE_MAX: usize = 200;

/// The Any type URL of a `p4.v1.Error`.
const ERROR_TYPE_URL: &str = "type.googleapis.com/p4.v1.Error";

/// `s` cut to at most `max` bytes at a character boundary.
fn cut(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut i = max;
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    &s[..i]
}

/// Encoded length of one `details` element (the `Any` with its field tag and length).
fn any_len(e: &p4::Error) -> usize {
    let v = e.encoded_len();
    let any = prost::encoding::key_len(1)
        + prost::encoding::encoded_len_varint(ERROR_TYPE_URL.len() as u64)
        + ERROR_TYPE_URL.len()
        + if v > 0 {
            prost::encoding::key_len(2) + prost::encoding::encoded_len_varint(v as u64) + v
        } else {
            0
        };
    prost::encoding::key_len(3) + prost::encoding::encoded_len_varint(any as u64) + any
}

/// The gRPC status of a write or read with per-update results (P4Runtime §12.3: all OK → OK;
/// else `UNKNOWN` with one `p4.v1.Error` per update, in order, in the details; successful
/// updates get `Error{canonical_code: OK}`).
///
/// The details are bounded by [`DETAILS_BUDGET`], so that clients with gRPC's default limit
/// of received metadata read them (P4Runtime §"gRPC Metadata Maximum Size" asks clients for
/// more, but grpcio's default client is what p4runtime-shell, finsy and p4c's tests use):
/// first every update keeps its `canonical_code` and the failures their messages; when that
/// does not fit, the later failures carry no message; when even the codes do not fit (beyond
/// about 130 updates), the details hold the first updates only, as many as fit. The top-level
/// message says what was left out, and names the failed updates by ranges and codes.
fn batch_status(results: &[Result<(), ControlError>]) -> Result<(), Status> {
    if results.iter().all(|r| r.is_ok()) {
        return Ok(());
    }
    let bare = |e: &ControlError| p4::Error {
        canonical_code: e.code(),
        ..Default::default()
    };
    let full = |e: &ControlError| p4::Error {
        canonical_code: e.code(),
        message: cut(e.message(), MESSAGE_MAX).to_string(),
        space: "nevermiss".into(),
        code: 0,
        details: None,
    };
    // The codes alone, as many updates as fit; then messages in update order while they fit.
    // The status holds the top-level message too.
    let budget = DETAILS_BUDGET - TOP_MESSAGE_MAX - 8;
    let mut errors: Vec<p4::Error> = Vec::with_capacity(results.len());
    let mut size = 0usize;
    for r in results {
        let e = match r {
            Ok(()) => p4::Error::default(),
            Err(e) => bare(e),
        };
        if size + any_len(&e) > budget {
            break;
        }
        size += any_len(&e);
        errors.push(e);
    }
    let covered = errors.len();
    let mut without = 0usize;
    for (slot, r) in errors.iter_mut().zip(results) {
        let Err(e) = r else { continue };
        let f = full(e);
        let extra = any_len(&f) - any_len(slot);
        if without == 0 && size + extra <= budget {
            size += extra;
            *slot = f;
        } else {
            without += 1;
        }
    }
    let failed = results.iter().filter(|r| r.is_err()).count();
    let (first_at, first) = results
        .iter()
        .enumerate()
        .find_map(|(i, r)| r.as_ref().err().map(|e| (i, e)))
        .map(|(i, e)| {
            (
                i,
                format!("{}: {}", code_name(e.code()), cut(e.message(), MESSAGE_MAX)),
            )
        })
        .unwrap_or_default();
    let mut message = if results.len() == 1 {
        first
    } else {
        format!(
            "{failed} of {} updates failed; first (update {}): {first}",
            results.len(),
            first_at + 1
        )
    };
    if covered < results.len() {
        message.push_str(&format!(
            "; the details hold updates 1-{covered} of {} (gRPC clients accept 8 KiB of \
             metadata by default); failed: {}",
            results.len(),
            failed_ranges(results)
        ));
    } else if without > 0 {
        message.push_str(&format!(
            "; the last {without} failures carry their codes without messages, to fit the \
             gRPC trailer"
        ));
    }
    let message = cut_encoded(&message, TOP_MESSAGE_MAX);
    let st = rpc::Status {
        code: Code::Unknown as i32,
        message: message.clone(),
        details: errors
            .into_iter()
            .map(|e| prost_types::Any {
                type_url: ERROR_TYPE_URL.into(),
                value: e.encode_to_vec(),
            })
            .collect(),
    };
    Err(Status::with_details(
        Code::Unknown,
        message,
        st.encode_to_vec().into(),
    ))
}

/// The failed updates of `results` as ranges by code: `257-300 RESOURCE_EXHAUSTED, 301
/// INVALID_ARGUMENT` (1-based).
fn failed_ranges(results: &[Result<(), ControlError>]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < results.len() {
        let Err(e) = &results[i] else {
            i += 1;
            continue;
        };
        let code = e.code();
        let mut j = i;
        while matches!(results.get(j + 1), Some(Err(x)) if x.code() == code) {
            j += 1;
        }
        out.push(if i == j {
            format!("{} {}", i + 1, code_name(code))
        } else {
            format!("{}-{} {}", i + 1, j + 1, code_name(code))
        });
        i = j + 1;
    }
    out.join(", ")
}

/// `s` cut (with `…`) so that percent-encoded as `grpc-message` it takes at most `max` bytes
/// (bytes outside printable ASCII, and `%`, take three).
fn cut_encoded(s: &str, max: usize) -> String {
    let enc = |c: char| {
        if c.is_ascii() && (' '..='~').contains(&c) && c != '%' {
            1
        } else {
            3 * c.len_utf8()
        }
    };
    if s.chars().map(enc).sum::<usize>() <= max {
        return s.to_string();
    }
    let mut out = String::new();
    let mut n = 0;
    for c in s.chars() {
        if n + enc(c) > max - 9 {
            break;
        }
        n += enc(c);
        out.push(c);
    }
    out.push('…');
    out
}

/// The name of a Write's atomicity, for the log.
fn atomicity_name(a: i32) -> &'static str {
    p4::write_request::Atomicity::try_from(a).map_or("unknown atomicity", |a| a.as_str_name())
}

/// The name of a gRPC code, for messages and the log.
pub fn code_name(code: i32) -> &'static str {
    match Code::from_i32(code) {
        Code::Ok => "OK",
        Code::Cancelled => "CANCELLED",
        Code::Unknown => "UNKNOWN",
        Code::InvalidArgument => "INVALID_ARGUMENT",
        Code::DeadlineExceeded => "DEADLINE_EXCEEDED",
        Code::NotFound => "NOT_FOUND",
        Code::AlreadyExists => "ALREADY_EXISTS",
        Code::PermissionDenied => "PERMISSION_DENIED",
        Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
        Code::FailedPrecondition => "FAILED_PRECONDITION",
        Code::Aborted => "ABORTED",
        Code::OutOfRange => "OUT_OF_RANGE",
        Code::Unimplemented => "UNIMPLEMENTED",
        Code::Internal => "INTERNAL",
        Code::Unavailable => "UNAVAILABLE",
        Code::DataLoss => "DATA_LOSS",
        Code::Unauthenticated => "UNAUTHENTICATED",
    }
}

/// Writes of more updates than this (about a millisecond's work) run with
/// `tokio::task::block_in_place` on a multi-threaded runtime.
const LONG_WRITE_UPDATES: usize = 2048;

/// The service.
#[derive(Clone)]
pub struct Service {
    /// The device every request is served on; share it (it is an `Arc`) to reach the same switch
    /// from the process.
    pub dev: Arc<Device>,
}

type BoxStream<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send + 'static>>;

#[tonic::async_trait]
impl P4Runtime for Service {
    async fn write(
        &self,
        request: Request<p4::WriteRequest>,
    ) -> Result<Response<p4::WriteResponse>, Status> {
        let dev = &self.dev;
        check_size(&request, dev.opts.max_message_bytes)?;
        let req = request.into_inner();
        dev.check_device(req.device_id)?;
        dev.check_primary(&req.role, req.election_id.as_ref())?;
        // No commit replaces the pipeline while its Write applies.
        let _config = dev
            .config_lock
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        let p = dev.current()?;
        let received = p.sw.now_ns();
        // An update takes about a microsecond: a Write runs on this thread, without a hop to
        // another. One that may take long (a dataplane-atomic batch waits for the workers'
        // quiescent point; a batch of many thousands of updates) tells a multi-threaded
        // runtime that it blocks, which hands this worker's other tasks to another thread;
        // that handover costs tens of microseconds, too much for every Write.
        let long = req.atomicity == p4::write_request::Atomicity::DataplaneAtomic as i32
            || req.updates.len() > LONG_WRITE_UPDATES;
        let results = if long
            && tokio::runtime::Handle::current().runtime_flavor()
                == tokio::runtime::RuntimeFlavor::MultiThread
        {
            tokio::task::block_in_place(|| dev.write_updates(&p, &req, received))
        } else {
            dev.write_updates(&p, &req, received)
        };
        let failed = results.iter().filter(|r| r.is_err()).count();
        {
            let mut s = lock(&dev.stats);
            s.writes += 1;
            s.updates += results.len() as u64;
            s.failed_updates += failed as u64;
        }
        tracing::info!(
            "Write: {} updates ({}), {failed} failed{}",
            results.len(),
            atomicity_name(req.atomicity),
            match results.iter().find_map(|r| r.as_ref().err()) {
                Some(e) => format!("; first: {}: {}", code_name(e.code()), e.message()),
                None => String::new(),
            }
        );
        batch_status(&results)?;
        Ok(Response::new(p4::WriteResponse {}))
    }

    type ReadStream = BoxStream<p4::ReadResponse>;

    async fn read(
        &self,
        request: Request<p4::ReadRequest>,
    ) -> Result<Response<Self::ReadStream>, Status> {
        let req = request.into_inner();
        let dev = &self.dev;
        dev.check_device(req.device_id)?;
        let p = dev.current()?;
        lock(&dev.stats).reads += 1;
        let mut entities = Vec::new();
        let mut results = Vec::new();
        for e in &req.entities {
            match e.entity.as_ref() {
                None => return Err(Status::invalid_argument("entity unset")),
                Some(x) => match dev.read_entity(&p, x) {
                    Ok(v) => {
                        entities.extend(v);
                        results.push(Ok(()));
                    }
                    Err(e) => results.push(Err(e)),
                },
            }
        }
        if results.len() == 1 {
            if let Some(Err(e)) = results.first() {
                return Err(status_of(e));
            }
        }
        tracing::info!(
            "Read: {} entities asked, {} read{}",
            req.entities.len(),
            entities.len(),
            match results.iter().find_map(|r| r.as_ref().err()) {
                Some(e) => format!("; error: {}: {}", code_name(e.code()), e.message()),
                None => String::new(),
            }
        );
        batch_status(&results)?;
        let resp = p4::ReadResponse { entities };
        Ok(Response::new(Box::pin(tokio_stream::once(Ok(resp)))))
    }

    async fn set_forwarding_pipeline_config(
        &self,
        request: Request<p4::SetForwardingPipelineConfigRequest>,
    ) -> Result<Response<p4::SetForwardingPipelineConfigResponse>, Status> {
        use p4::set_forwarding_pipeline_config_request::Action as A;
        let dev = &self.dev;
        check_size(&request, dev.opts.max_message_bytes)?;
        let req = request.into_inner();
        dev.check_device(req.device_id)?;
        dev.check_primary(&req.role, req.election_id.as_ref())?;
        let action = A::try_from(req.action).unwrap_or(A::Unspecified);
        tracing::info!("SetForwardingPipelineConfig: {}", action.as_str_name());
        let load = |dev: &Device| -> Result<Arc<Pipeline>, Status> {
            let Some(c) = &req.config else {
                return Err(Status::invalid_argument("config unset"));
            };
            dev.load(
                &c.p4_device_config,
                c.p4info.clone(),
                c.cookie.as_ref().map(|k| k.cookie),
            )
        };
        match action {
            A::Verify => {
                load(dev)?;
            }
            A::VerifyAndSave => {
                let p = load(dev)?;
                *lock(&dev.saved) = Some(p);
            }
            A::VerifyAndCommit => {
                let p = load(dev)?;
                let took = blocking(|| dev.commit(p))?;
                tracing::info!("pipeline committed; the data plane took it in {took:?}");
            }
            A::Commit => {
                if req.config.is_some() {
                    return Err(Status::invalid_argument("COMMIT takes no config"));
                }
                let Some(p) = lock(&dev.saved).take() else {
                    return Err(Status::not_found("no saved config to commit"));
                };
                let took = blocking(|| dev.commit(p))?;
                tracing::info!("saved pipeline committed; the data plane took it in {took:?}");
            }
            A::ReconcileAndCommit => {
                let p = load(dev)?;
                let (kept, total) = blocking(|| dev.reconcile(p))?;
                tracing::info!(
                    "pipeline committed keeping the forwarding state: {kept} of {total} \
                     entities fit the new one"
                );
            }
            A::Unspecified => return Err(Status::invalid_argument("action unspecified")),
        }
        Ok(Response::new(p4::SetForwardingPipelineConfigResponse {}))
    }

    async fn get_forwarding_pipeline_config(
        &self,
        request: Request<p4::GetForwardingPipelineConfigRequest>,
    ) -> Result<Response<p4::GetForwardingPipelineConfigResponse>, Status> {
        use p4::get_forwarding_pipeline_config_request::ResponseType as R;
        let req = request.into_inner();
        self.dev.check_device(req.device_id)?;
        let p = self.dev.current()?;
        let rt = R::try_from(req.response_type).unwrap_or(R::All);
        tracing::info!("GetForwardingPipelineConfig: {}", rt.as_str_name());
        let cookie = p
            .cookie
            .map(|c| p4::forwarding_pipeline_config::Cookie { cookie: c });
        let config = match rt {
            R::All => p4::ForwardingPipelineConfig {
                p4info: Some(p.p4info.clone()),
                p4_device_config: p.device_config.clone(),
                cookie,
            },
            R::CookieOnly => p4::ForwardingPipelineConfig {
                cookie,
                ..Default::default()
            },
            R::P4infoAndCookie => p4::ForwardingPipelineConfig {
                p4info: Some(p.p4info.clone()),
                cookie,
                ..Default::default()
            },
            R::DeviceConfigAndCookie => p4::ForwardingPipelineConfig {
                p4_device_config: p.device_config.clone(),
                cookie,
                ..Default::default()
            },
        };
        Ok(Response::new(p4::GetForwardingPipelineConfigResponse {
            config: Some(config),
        }))
    }

    type StreamChannelStream = BoxStream<p4::StreamMessageResponse>;

    async fn stream_channel(
        &self,
        request: Request<Streaming<p4::StreamMessageRequest>>,
    ) -> Result<Response<Self::StreamChannelStream>, Status> {
        let mut inbound = request.into_inner();
        let (tx, rx) = mpsc::channel::<Result<p4::StreamMessageResponse, Status>>(1024);
        let dev = self.dev.clone();
        let stream = lock(&dev.arbitration).open(Outbox(tx.clone()));
        tracing::info!("StreamChannel {stream}: opened");
        let mut closing = dev.closing.subscribe();
        tokio::spawn(async move {
            while let Some(msg) = inbound.next().await {
                let Ok(msg) = msg else { break };
                use p4::stream_message_request::Update as U;
                match msg.update {
                    Some(U::Arbitration(a)) => {
                        if a.device_id != dev.opts.device_id {
                            let known = lock(&dev.arbitration).is_open_with_device(stream);
                            let st = if known {
                                Status::failed_precondition("Invalid device id")
                            } else {
                                Status::not_found(format!("unknown device id {}", a.device_id))
                            };
                            let _ = tx.send(Err(st)).await;
                            break;
                        }
                        tracing::info!(
                            "StreamChannel {stream}: arbitration, role {:?}, election id {}",
                            a.role.as_ref().map_or("", |r| r.name.as_str()),
                            a.election_id.as_ref().map_or(0, u128_of)
                        );
                        let r = lock(&dev.arbitration).arbitrate(
                            stream,
                            a.device_id,
                            a.role.clone(),
                            a.election_id.as_ref().map(u128_of),
                        );
                        if let Err(st) = r {
                            let _ = tx.send(Err(st)).await;
                            break;
                        }
                    }
                    Some(U::Packet(po)) => {
                        let primary = lock(&dev.arbitration).stream_is_primary(stream);
                        if !primary {
                            continue;
                        }
                        tracing::debug!(
                            "StreamChannel {stream}: PacketOut of {} bytes",
                            po.payload.len()
                        );
                        if let Err(e) = dev.packet_out(&po) {
                            let _ = tx
                                .send(Ok(p4::StreamMessageResponse {
                                    update: Some(p4::stream_message_response::Update::Error(
                                        p4::StreamError {
                                            canonical_code: e.code(),
                                            message: e.message().to_string(),
                                            space: "nevermiss".into(),
                                            code: 0,
                                            details: Some(p4::stream_error::Details::PacketOut(
                                                p4::PacketOutError {
                                                    packet_out: Some(po),
                                                },
                                            )),
                                        },
                                    )),
                                }))
                                .await;
                        }
                    }
                    Some(U::DigestAck(a)) => {
                        let known = match lock(&dev.digests).get_mut(&a.digest_id) {
                            Some(st) => {
                                st.ack(a.list_id);
                                true
                            }
                            None => false,
                        };
                        if !known {
                            let _ = tx
                                .send(Ok(p4::StreamMessageResponse {
                                    update: Some(p4::stream_message_response::Update::Error(
                                        p4::StreamError {
                                            canonical_code: Code::NotFound as i32,
                                            message: format!(
                                                "digest {} is not configured",
                                                a.digest_id
                                            ),
                                            space: "nevermiss".into(),
                                            code: 0,
                                            details: Some(
                                                p4::stream_error::Details::DigestListAck(
                                                    p4::DigestListAckError {
                                                        digest_list_ack: Some(a),
                                                    },
                                                ),
                                            ),
                                        },
                                    )),
                                }))
                                .await;
                        }
                    }
                    Some(U::Other(_)) | None => {}
                }
            }
            lock(&dev.arbitration).close(stream);
            tracing::info!("StreamChannel {stream}: closed");
        });
        // At shutdown the stream ends with UNAVAILABLE, whatever is queued.
        let stop = async move {
            while !*closing.borrow_and_update() {
                if closing.changed().await.is_err() {
                    std::future::pending::<()>().await;
                }
            }
        };
        Ok(Response::new(Box::pin(Closing {
            inner: ReceiverStream::new(rx),
            stop: Box::pin(stop),
            done: false,
        })))
    }

    async fn capabilities(
        &self,
        request: Request<p4::CapabilitiesRequest>,
    ) -> Result<Response<p4::CapabilitiesResponse>, Status> {
        let req = request.into_inner();
        tracing::info!("Capabilities");
        if req.device_id != 0 {
            self.dev.check_device(req.device_id)?;
        }
        Ok(Response::new(p4::CapabilitiesResponse {
            p4runtime_api_version: API_VERSION.into(),
            ..Default::default()
        }))
    }
}

/// A stream channel's responses, ended by the server's shutdown ([`Device::shutdown`]) with
/// `UNAVAILABLE`.
struct Closing {
    inner: ReceiverStream<Result<p4::StreamMessageResponse, Status>>,
    stop: Pin<Box<dyn std::future::Future<Output = ()> + Send>>,
    done: bool,
}

impl Stream for Closing {
    type Item = Result<p4::StreamMessageResponse, Status>;

    fn poll_next(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        use std::task::Poll;
        if self.done {
            return Poll::Ready(None);
        }
        if std::future::Future::poll(self.stop.as_mut(), cx).is_ready() {
            self.done = true;
            return Poll::Ready(Some(Err(Status::unavailable(
                "the switch is shutting down",
            ))));
        }
        Pin::new(&mut self.inner).poll_next(cx)
    }
}

/// Runs `f`, which may block for a while (a commit waiting for the data plane), telling a
/// multi-threaded runtime so (its other tasks move to another thread).
fn blocking<T>(f: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(f)
        }
        _ => f(),
    }
}

/// The tonic server of a device (requests up to `ServeOptions::max_message_bytes`).
pub fn grpc_service(dev: Arc<Device>) -> GrpcService {
    let max = dev.opts.max_message_bytes;
    GrpcService(
        P4RuntimeServer::new(Service { dev })
            // Up to twice the limit is decoded so that the handlers can answer
            // RESOURCE_EXHAUSTED (gRPC's code for a message over the limit); tonic answers
            // OUT_OF_RANGE beyond that.
            .max_decoding_message_size(max.saturating_mul(2))
            .max_encoding_message_size(256 << 20),
    )
}

/// The P4Runtime service as served ([`grpc_service`]): the generated server, with the bytes of
/// each request's body counted on their way in, so that a handler knows a request's size
/// without encoding it again.
#[derive(Clone)]
pub struct GrpcService(P4RuntimeServer<Service>);

/// The bytes of a request's body received so far (gRPC's 5-byte message prefix included).
#[derive(Clone)]
struct BodySize(Arc<std::sync::atomic::AtomicUsize>);

impl tonic::server::NamedService for GrpcService {
    const NAME: &'static str = <P4RuntimeServer<Service> as tonic::server::NamedService>::NAME;
}

impl tonic::codegen::Service<tonic::codegen::http::Request<tonic::body::Body>> for GrpcService {
    type Response = tonic::codegen::http::Response<tonic::body::Body>;
    type Error = std::convert::Infallible;
    type Future = tonic::codegen::BoxFuture<Self::Response, Self::Error>;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        tonic::codegen::Service::<tonic::codegen::http::Request<Counted>>::poll_ready(
            &mut self.0,
            cx,
        )
    }

    fn call(&mut self, req: tonic::codegen::http::Request<tonic::body::Body>) -> Self::Future {
        let size = BodySize(Arc::default());
        let (mut parts, inner) = req.into_parts();
        parts.extensions.insert(size.clone());
        let body = Counted { inner, size };
        self.0
            .call(tonic::codegen::http::Request::from_parts(parts, body))
    }
}

/// A request body that counts its bytes into a [`BodySize`].
struct Counted {
    inner: tonic::body::Body,
    size: BodySize,
}

impl tonic::codegen::Body for Counted {
    type Data = prost::bytes::Bytes;
    type Error = Status;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.inner).poll_frame(cx);
        if let std::task::Poll::Ready(Some(Ok(f))) = &r {
            if let Some(d) = f.data_ref() {
                this.size
                    .0
                    .fetch_add(d.len(), std::sync::atomic::Ordering::Relaxed);
            }
        }
        r
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// A listening socket for the server on `addr` (port 0: any free port) with Nagle's algorithm
/// off (a small Write reply must not wait for the peer's delayed ACK: ~40 ms otherwise), and
/// the address it took. Call inside the async runtime.
pub fn listen(
    addr: std::net::SocketAddr,
) -> std::io::Result<(tonic::transport::server::TcpIncoming, std::net::SocketAddr)> {
    let inc = tonic::transport::server::TcpIncoming::bind(addr)?.with_nodelay(Some(true));
    let local = inc.local_addr()?;
    Ok((inc, local))
}

/// Why the server's TLS files were refused; `flag` names the option that gave the file.
#[derive(Debug)]
pub enum TlsError {
    /// The file could not be read.
    Read {
        /// The option (`--tls-cert`, `--tls-key`, `--tls-ca`).
        flag: &'static str,
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// A certificate file that is not PEM.
    NotPem {
        /// The option.
        flag: &'static str,
        /// The file.
        path: std::path::PathBuf,
        /// The PEM parser's error.
        error: rustls_pki_types::pem::Error,
    },
    /// A PEM file without a certificate.
    NoCertificate {
        /// The option.
        flag: &'static str,
        /// The file.
        path: std::path::PathBuf,
    },
    /// A key file without a private key.
    NoKey {
        /// The file.
        path: std::path::PathBuf,
        /// The PEM parser's error.
        error: rustls_pki_types::pem::Error,
    },
}

impl std::fmt::Display for TlsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TlsError::Read { flag, path, error } => {
                write!(f, "{flag} {}: {error}", path.display())
            }
            TlsError::NotPem { flag, path, error } => write!(
                f,
                "{flag} {}: not a PEM certificate file: {error}",
                path.display()
            ),
            TlsError::NoCertificate { flag, path } => write!(
                f,
                "{flag} {}: no certificate in it (expected PEM: -----BEGIN CERTIFICATE-----)",
                path.display()
            ),
            TlsError::NoKey { path, error } => write!(
                f,
                "--tls-key {}: no private key in it (expected PEM: -----BEGIN PRIVATE KEY-----, \
                 RSA or EC): {error}",
                path.display()
            ),
        }
    }
}

impl std::error::Error for TlsError {}

/// TLS for the server (`--tls-cert`, `--tls-key`; with `--tls-ca` clients must present a
/// certificate that CA signed: mutual TLS). PEM files.
pub fn tls_config(
    cert: &std::path::Path,
    key: &std::path::Path,
    ca: Option<&std::path::Path>,
) -> Result<tonic::transport::ServerTlsConfig, TlsError> {
    use rustls_pki_types::pem::PemObject;
    use rustls_pki_types::{CertificateDer, PrivateKeyDer};
    let read = |p: &std::path::Path, flag: &'static str| {
        std::fs::read(p).map_err(|error| TlsError::Read {
            flag,
            path: p.to_path_buf(),
            error,
        })
    };
    // The files are checked here, so that a wrong one is named with what is wrong with it
    // (the TLS stack would only say "transport error" when the server starts).
    let certs = |p: &std::path::Path, flag: &'static str| {
        let bytes = read(p, flag)?;
        let n = CertificateDer::pem_slice_iter(&bytes)
            .try_fold(0usize, |n, c| c.map(|_| n + 1))
            .map_err(|error| TlsError::NotPem {
                flag,
                path: p.to_path_buf(),
                error,
            })?;
        if n == 0 {
            return Err(TlsError::NoCertificate {
                flag,
                path: p.to_path_buf(),
            });
        }
        Ok(bytes)
    };
    let cert_pem = certs(cert, "--tls-cert")?;
    let key_pem = read(key, "--tls-key")?;
    PrivateKeyDer::from_pem_slice(&key_pem).map_err(|error| TlsError::NoKey {
        path: key.to_path_buf(),
        error,
    })?;
    let identity = tonic::transport::Identity::from_pem(cert_pem, key_pem);
    let mut cfg = tonic::transport::ServerTlsConfig::new().identity(identity);
    if let Some(ca) = ca {
        cfg = cfg.client_ca_root(tonic::transport::Certificate::from_pem(certs(
            ca, "--tls-ca",
        )?));
    }
    Ok(cfg)
}

/// Runs the device's housekeeping (expiry, notifications, digests) until `stop` resolves.
pub async fn housekeeping(dev: Arc<Device>) {
    let mut iv = tokio::time::interval(dev.opts.tick);
    iv.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        iv.tick().await;
        let d = dev.clone();
        let _ = tokio::task::spawn_blocking(move || d.tick()).await;
    }
}

/// The CPU port among traffic ports: its input is the PacketOuts of the primary (for the one
/// loop that receives them); what it transmits goes to the primary as PacketIns (without a
/// primary the packets count as dropped).
struct CpuPort {
    dev: Arc<Device>,
    stats: Arc<PortStats>,
    receive: bool,
}

impl Drop for CpuPort {
    fn drop(&mut self) {
        if self.receive {
            self.dev.packet_out_loop.store(false, Ordering::Release);
        }
    }
}

impl Port for CpuPort {
    fn id(&self) -> u32 {
        self.dev.opts.cpu_port
    }

    fn rx_burst(&mut self, batch: &mut Batch) -> Result<usize, PortError> {
        if !self.receive || self.dev.packet_outs_queued.load(Ordering::Relaxed) == 0 {
            return Ok(0);
        }
        let mut q = lock(&self.dev.packet_outs);
        let mut n = 0;
        while batch.len() < batch.capacity() {
            let Some(data) = q.pop_front() else { break };
            if batch.push(&data, self.dev.opts.cpu_port, 0) {
                self.stats.add_rx(1, data.len() as u64);
                n += 1;
            }
        }
        self.dev
            .packet_outs_queued
            .store(q.len(), Ordering::Release);
        Ok(n)
    }

    fn rx_done(&self) -> bool {
        // The loop that receives PacketOuts runs until it is stopped.
        !self.receive
    }

    fn tx(&mut self, pkts: &[Packet]) -> Result<usize, PortError> {
        let Some(p) = self.dev.pipeline() else {
            return Ok(0);
        };
        let mut sent = 0;
        for pkt in pkts {
            let pin = p.packet_in(pkt.data());
            if self
                .dev
                .to_primary(p4::stream_message_response::Update::Packet(pin))
            {
                sent += 1;
                self.stats.add_tx(1, pkt.len() as u64);
            }
        }
        lock(&self.dev.stats).packet_ins += sent as u64;
        Ok(sent)
    }

    fn flush(&mut self) -> Result<(), PortError> {
        Ok(())
    }

    fn stats(&self) -> &Arc<PortStats> {
        &self.stats
    }

    fn describe(&self) -> String {
        format!(
            "{}=cpu (PacketOut in, PacketIn to the primary)",
            self.dev.opts.cpu_port
        )
    }
}
