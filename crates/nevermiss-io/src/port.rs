//! Ports: where packets come from and go to.
//!
//! A [`Port`] receives bursts into a caller's [`Batch`] and transmits slices of packets.
//! Implementations: [`PcapPort`] (a pcap/pcapng input file and/or a pcap output file),
//! [`QueuePort`] (in-memory queues, driven through a [`QueueHandle`]), [`GenPort`] (the
//! built-in two-phase generator) and [`NullPort`] (no input, output discarded).
//! [`PortSpec`] parses the command-line syntax `N=pcap:IN[,OUT]`, `N=gen:...`, `N=null`.
//!
//! Guarantees: `rx_burst` only appends to the batch (never more than its free room) and stamps
//! every received packet with the port's number; every port counts what it receives and
//! transmits in its [`PortStats`].

use std::collections::VecDeque;
use std::fmt;
use std::fs::File;
use std::io::{self, BufReader, BufWriter};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::gen::{parse_gen_spec_at, GenError, TwoPhaseConfig, TwoPhaseGen};
use crate::packet::{Batch, Packet};
use crate::pcap::{PcapError, PcapReader, PcapWriter, LINKTYPE_ETHERNET};
use crate::stats::PortStats;

/// An error of a port.
#[derive(Debug)]
pub enum PortError {
    /// Reading the input capture failed.
    Pcap {
        /// The file.
        path: PathBuf,
        /// What went wrong, with the byte offset.
        error: PcapError,
    },
    /// An I/O error on a file.
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        error: io::Error,
    },
    /// The generator's configuration was rejected.
    Gen(GenError),
    /// Anything else.
    Other(String),
}

impl fmt::Display for PortError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PortError::Pcap { path, error } => write!(f, "{}: {error}", path.display()),
            PortError::Io { path, error } => write!(f, "{}: {error}", path.display()),
            PortError::Gen(e) => write!(f, "generator: {e}"),
            PortError::Other(s) => f.write_str(s),
        }
    }
}

impl std::error::Error for PortError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PortError::Pcap { error, .. } => Some(error),
            PortError::Io { error, .. } => Some(error),
            PortError::Gen(e) => Some(e),
            PortError::Other(_) => None,
        }
    }
}

/// A packet source and sink.
pub trait Port: Send {
    /// The port's number.
    fn id(&self) -> u32;

    /// Appends up to `batch.free()` received packets to `batch`, each with `port` set to
    /// [`Port::id`]; returns how many. 0 means nothing is available now (see [`Port::rx_done`]).
    ///
    /// An input error (a truncated or corrupt capture) never takes the packets read before it
    /// with it: a burst that meets the error returns those complete packets, and the error comes
    /// from the next call; after it the port is done.
    fn rx_burst(&mut self, batch: &mut Batch) -> Result<usize, PortError>;

    /// True when the input is exhausted and will never yield another packet.
    fn rx_done(&self) -> bool;

    /// Transmits the packets (their `port` field is not looked at); returns how many were taken.
    /// Packets not taken are counted as dropped.
    fn tx(&mut self, pkts: &[Packet]) -> Result<usize, PortError>;

    /// Writes out anything buffered.
    fn flush(&mut self) -> Result<(), PortError>;

    /// The port's counters.
    fn stats(&self) -> &Arc<PortStats>;

    /// A one-line description, e.g. `0=pcap:in.pcap,out.pcap`.
    fn describe(&self) -> String;

    /// Whether the port's link is up: interface ports ask the kernel (the interface is up and
    /// has carrier: `IFF_UP` and `IFF_RUNNING`, a system call, so callers poll it sparingly);
    /// every other port is always up. P4Runtime watch ports depend on it.
    fn link_up(&self) -> bool {
        true
    }

    /// Whether [`Port::tx`] may take fewer packets than it is given because the port is busy
    /// for now (an interface sending through its qdisc, which tc shaping holds back), so that
    /// what it did not take may be offered again later rather than being dropped. Egress
    /// queues wait behind such a port (`nevermiss_runtime::queues`); every other port takes
    /// what it can at once and counts the rest as dropped.
    fn can_block(&self) -> bool {
        false
    }

    /// Pushes the file descriptors that become readable (`poll(2)`, `POLLIN`) when this port
    /// may have a packet to receive, and returns true; false (the default) when the port
    /// cannot be waited on that way (an in-memory queue), so that an idle run loop sleeps in
    /// short steps instead ([`crate::idle::IdleWait`]). Interface ports push their sockets.
    fn wait_fds(&self, out: &mut Vec<std::os::fd::RawFd>) -> bool {
        let _ = out;
        false
    }
}

fn bytes_of(pkts: &[Packet]) -> u64 {
    pkts.iter().map(|p| p.len() as u64).sum()
}

/// A port over capture files: packets are read from an optional pcap/pcapng input and written
/// to an optional pcap output (nanosecond timestamps, Ethernet).
pub struct PcapPort {
    id: u32,
    input: Option<(PathBuf, PcapReader<BufReader<File>>)>,
    output: Option<(PathBuf, PcapWriter<BufWriter<File>>)>,
    done: bool,
    /// An input error met after the packets of the last burst, returned by the next burst.
    pending: Option<PortError>,
    stats: Arc<PortStats>,
}

impl PcapPort {
    /// Opens the input (if any) and creates the output (if any).
    pub fn open(
        id: u32,
        input: Option<PathBuf>,
        output: Option<PathBuf>,
    ) -> Result<Self, PortError> {
        let input = match input {
            Some(p) => {
                let r = PcapReader::open(&p).map_err(|error| PortError::Pcap {
                    path: p.clone(),
                    error,
                })?;
                Some((p, r))
            }
            None => None,
        };
        let output = match output {
            Some(p) => {
                let w = PcapWriter::create(&p).map_err(|error| PortError::Io {
                    path: p.clone(),
                    error,
                })?;
                Some((p, w))
            }
            None => None,
        };
        Ok(PcapPort {
            id,
            done: input.is_none(),
            input,
            output,
            pending: None,
            stats: PortStats::new(id),
        })
    }
}

impl Port for PcapPort {
    fn id(&self) -> u32 {
        self.id
    }

    fn rx_burst(&mut self, batch: &mut Batch) -> Result<usize, PortError> {
        if let Some(e) = self.pending.take() {
            return Err(e);
        }
        let Some((path, r)) = self.input.as_mut() else {
            return Ok(0);
        };
        if self.done {
            return Ok(0);
        }
        let mut n = 0;
        let mut bytes = 0u64;
        while let Some(p) = batch.push_slot_raw() {
            let error = match r.next_packet(p) {
                Ok(Some(info)) if info.link_type == LINKTYPE_ETHERNET => {
                    p.port = self.id;
                    bytes += p.len() as u64;
                    n += 1;
                    continue;
                }
                Ok(Some(info)) => PcapError {
                    offset: info.offset,
                    message: format!(
                        "unsupported link type {} (only Ethernet, link type 1, is supported)",
                        info.link_type
                    ),
                    source: None,
                    whole_file: false,
                },
                Ok(None) => {
                    batch.pop();
                    self.done = true;
                    break;
                }
                Err(error) => error,
            };
            batch.pop();
            self.done = true;
            let e = PortError::Pcap {
                path: path.clone(),
                error,
            };
            if n == 0 {
                return Err(e);
            }
            self.pending = Some(e);
            break;
        }
        self.stats.add_rx(n as u64, bytes);
        Ok(n)
    }

    fn rx_done(&self) -> bool {
        self.done && self.pending.is_none()
    }

    fn tx(&mut self, pkts: &[Packet]) -> Result<usize, PortError> {
        let Some((path, w)) = self.output.as_mut() else {
            self.stats.add_dropped(pkts.len() as u64);
            return Ok(0);
        };
        for p in pkts {
            w.write_packet(p.data(), p.ts_ns)
                .map_err(|error| PortError::Io {
                    path: path.clone(),
                    error,
                })?;
        }
        self.stats.add_tx(pkts.len() as u64, bytes_of(pkts));
        Ok(pkts.len())
    }

    fn flush(&mut self) -> Result<(), PortError> {
        if let Some((path, w)) = self.output.as_mut() {
            w.flush().map_err(|error| PortError::Io {
                path: path.clone(),
                error,
            })?;
        }
        Ok(())
    }

    fn stats(&self) -> &Arc<PortStats> {
        &self.stats
    }

    fn describe(&self) -> String {
        let i = self
            .input
            .as_ref()
            .map(|(p, _)| p.display().to_string())
            .unwrap_or_default();
        match &self.output {
            Some((o, _)) => format!("{}=pcap:{i},{}", self.id, o.display()),
            None => format!("{}=pcap:{i}", self.id),
        }
    }
}

impl Drop for PcapPort {
    fn drop(&mut self) {
        // Best effort; call `flush` to see errors.
        let _ = self.flush();
    }
}

/// A port that receives nothing and discards (and counts as transmitted) what it is given.
pub struct NullPort {
    id: u32,
    stats: Arc<PortStats>,
}

impl NullPort {
    /// A null port numbered `id`.
    pub fn new(id: u32) -> NullPort {
        NullPort {
            id,
            stats: PortStats::new(id),
        }
    }
}

impl Port for NullPort {
    fn id(&self) -> u32 {
        self.id
    }
    fn rx_burst(&mut self, _batch: &mut Batch) -> Result<usize, PortError> {
        Ok(0)
    }
    fn rx_done(&self) -> bool {
        true
    }
    fn tx(&mut self, pkts: &[Packet]) -> Result<usize, PortError> {
        self.stats.add_tx(pkts.len() as u64, bytes_of(pkts));
        Ok(pkts.len())
    }
    fn flush(&mut self) -> Result<(), PortError> {
        Ok(())
    }
    fn stats(&self) -> &Arc<PortStats> {
        &self.stats
    }
    fn describe(&self) -> String {
        format!("{}=null", self.id)
    }
}

/// A port fed by the built-in two-phase generator; what it transmits is discarded (counted as transmitted).
pub struct GenPort {
    id: u32,
    gen: TwoPhaseGen,
    spec: String,
    stats: Arc<PortStats>,
}

impl GenPort {
    /// A generator port; the configuration's `port` is replaced by `id`.
    pub fn new(id: u32, mut cfg: TwoPhaseConfig) -> Result<GenPort, PortError> {
        cfg.port = id;
        let spec = format!(
            "{id}=gen:two-phase,m={},r={},count={},field={}:{},seed={},size={},flows={},ipg_ns={}",
            cfg.m,
            cfg.r,
            cfg.count,
            cfg.field.offset,
            cfg.field.width,
            cfg.seed,
            cfg.frame_len,
            cfg.flows,
            cfg.ipg_ns
        );
        Ok(GenPort {
            id,
            gen: TwoPhaseGen::new(cfg).map_err(PortError::Gen)?,
            spec,
            stats: PortStats::new(id),
        })
    }

    /// The generator.
    pub fn generator(&self) -> &TwoPhaseGen {
        &self.gen
    }
}

impl Port for GenPort {
    fn id(&self) -> u32 {
        self.id
    }
    fn rx_burst(&mut self, batch: &mut Batch) -> Result<usize, PortError> {
        let first = batch.len();
        let n = self.gen.fill(batch);
        let bytes = bytes_of(&batch.as_slice()[first..]);
        self.stats.add_rx(n as u64, bytes);
        Ok(n)
    }
    fn rx_done(&self) -> bool {
        self.gen.is_done()
    }
    fn tx(&mut self, pkts: &[Packet]) -> Result<usize, PortError> {
        self.stats.add_tx(pkts.len() as u64, bytes_of(pkts));
        Ok(pkts.len())
    }
    fn flush(&mut self) -> Result<(), PortError> {
        Ok(())
    }
    fn stats(&self) -> &Arc<PortStats> {
        &self.stats
    }
    fn describe(&self) -> String {
        self.spec.clone()
    }
}

#[derive(Default)]
struct Queues {
    rx: VecDeque<Packet>,
    tx: VecDeque<Packet>,
    /// Buffers of packets handed out and given back, reused to avoid allocation.
    spare: Vec<Packet>,
    rx_closed: bool,
    tx_limit: Option<usize>,
}

/// In-memory port for tests and tools: packets pushed through the [`QueueHandle`] are received;
/// transmitted packets are collected for the handle to take.
///
/// Guarantees: one lock per burst, not per packet; receive and transmit reuse packet buffers, so
/// a steady stream through the port allocates nothing. With a transmit limit, packets beyond it
/// are dropped (and counted).
pub struct QueuePort {
    id: u32,
    q: Arc<Mutex<Queues>>,
    stats: Arc<PortStats>,
}

/// The test side of a [`QueuePort`]. Cloneable and usable from any thread.
#[derive(Clone)]
pub struct QueueHandle {
    q: Arc<Mutex<Queues>>,
    stats: Arc<PortStats>,
}

fn lock(q: &Mutex<Queues>) -> MutexGuard<'_, Queues> {
    // A panic while holding the lock leaves consistent queues: recover them.
    q.lock().unwrap_or_else(|e| e.into_inner())
}

impl QueuePort {
    /// A queue port and its handle. Its input stays open (not [`Port::rx_done`]) until
    /// [`QueueHandle::close_rx`].
    pub fn new(id: u32) -> (QueuePort, QueueHandle) {
        let q = Arc::new(Mutex::new(Queues::default()));
        let stats = PortStats::new(id);
        (
            QueuePort {
                id,
                q: Arc::clone(&q),
                stats: Arc::clone(&stats),
            },
            QueueHandle { q, stats },
        )
    }

    /// A queue port whose input holds `pkts` and is then closed.
    pub fn with_input(id: u32, pkts: impl IntoIterator<Item = Packet>) -> (QueuePort, QueueHandle) {
        let (p, h) = QueuePort::new(id);
        for pkt in pkts {
            h.push(pkt);
        }
        h.close_rx();
        (p, h)
    }
}

impl QueueHandle {
    /// Queues a packet for the port to receive.
    pub fn push(&self, pkt: Packet) {
        lock(&self.q).rx.push_back(pkt);
    }

    /// Queues a copy of `data` for the port to receive (timestamp 0).
    pub fn push_bytes(&self, data: &[u8]) {
        let mut q = lock(&self.q);
        let mut p = q.spare.pop().unwrap_or_default();
        p.set_data(data);
        p.ts_ns = 0;
        q.rx.push_back(p);
    }

    /// Marks the input as finished: once drained, the port reports [`Port::rx_done`].
    pub fn close_rx(&self) {
        lock(&self.q).rx_closed = true;
    }

    /// Limits the number of transmitted packets held; further ones are dropped. `None` = unbounded.
    pub fn set_tx_limit(&self, limit: Option<usize>) {
        lock(&self.q).tx_limit = limit;
    }

    /// Takes every transmitted packet, oldest first.
    pub fn take_tx(&self) -> Vec<Packet> {
        lock(&self.q).tx.drain(..).collect()
    }

    /// Moves transmitted packets into `batch` (as many as fit), keeping buffers for reuse; returns how many.
    pub fn take_tx_into(&self, batch: &mut Batch) -> usize {
        let mut q = lock(&self.q);
        let mut n = 0;
        while !batch.is_full() {
            let Some(mut p) = q.tx.pop_front() else {
                break;
            };
            if let Some(slot) = batch.push_slot_raw() {
                std::mem::swap(slot, &mut p);
                q.spare.push(p);
                n += 1;
            }
        }
        n
    }

    /// Number of transmitted packets waiting.
    pub fn tx_len(&self) -> usize {
        lock(&self.q).tx.len()
    }

    /// Number of packets waiting to be received.
    pub fn rx_len(&self) -> usize {
        lock(&self.q).rx.len()
    }

    /// The port's counters.
    pub fn stats(&self) -> &Arc<PortStats> {
        &self.stats
    }
}

impl Port for QueuePort {
    fn id(&self) -> u32 {
        self.id
    }

    fn rx_burst(&mut self, batch: &mut Batch) -> Result<usize, PortError> {
        let mut q = lock(&self.q);
        let mut n = 0;
        let mut bytes = 0;
        while !batch.is_full() {
            let Some(mut p) = q.rx.pop_front() else {
                break;
            };
            p.port = self.id;
            bytes += p.len() as u64;
            if let Some(slot) = batch.push_slot_raw() {
                std::mem::swap(slot, &mut p);
                q.spare.push(p);
                n += 1;
            }
        }
        drop(q);
        self.stats.add_rx(n as u64, bytes);
        Ok(n)
    }

    fn rx_done(&self) -> bool {
        let q = lock(&self.q);
        q.rx_closed && q.rx.is_empty()
    }

    fn tx(&mut self, pkts: &[Packet]) -> Result<usize, PortError> {
        let mut q = lock(&self.q);
        let room = q
            .tx_limit
            .map_or(usize::MAX, |l| l.saturating_sub(q.tx.len()));
        let take = pkts.len().min(room);
        for src in &pkts[..take] {
            let mut p = q.spare.pop().unwrap_or_default();
            p.set_data(src.data());
            p.port = self.id;
            p.ts_ns = src.ts_ns;
            q.tx.push_back(p);
        }
        drop(q);
        self.stats.add_tx(take as u64, bytes_of(&pkts[..take]));
        self.stats.add_dropped((pkts.len() - take) as u64);
        Ok(take)
    }

    fn flush(&mut self) -> Result<(), PortError> {
        Ok(())
    }

    fn stats(&self) -> &Arc<PortStats> {
        &self.stats
    }

    fn describe(&self) -> String {
        format!("{}=queue", self.id)
    }
}

/// An error in a `--port` specification: the message and the 1-based column it refers to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError {
    /// 1-based character column in the spec string.
    pub col: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "port spec, column {}: {}", self.col, self.message)
    }
}

impl std::error::Error for SpecError {}

/// What a port is, as given on the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PortKind {
    /// `pcap:IN`, `pcap:IN,OUT` or `pcap:,OUT` (an empty input means none).
    Pcap {
        /// Input capture file.
        input: Option<PathBuf>,
        /// Output capture file.
        output: Option<PathBuf>,
    },
    /// `gen:two-phase,...`.
    Gen(TwoPhaseConfig),
    /// `null`.
    Null,
    /// `if:NAME[,backend=af_packet|af_xdp][,qdisc]`: a network interface.
    Interface {
        /// The interface's name.
        name: String,
        /// The kernel interface it is driven through.
        backend: Backend,
        /// Send through the interface's qdisc (AF_PACKET; [`crate::afpacket`]), so tc
        /// shaping limits and backs up what the port sends.
        qdisc: bool,
    },
}

/// How an interface port reaches the interface.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// The best available: AF_XDP where the kernel, libxdp and the interface allow it (a
    /// receive queue per worker), else AF_PACKET; the port's description says which.
    Auto,
    /// An AF_PACKET socket with TPACKET_V3 rings ([`crate::afpacket`]).
    AfPacket,
    /// An AF_XDP socket set up by libxdp ([`crate::afxdp`]).
    AfXdp,
}

/// A parsed `--port` argument: `N=pcap:IN[,OUT]`, `N=gen:two-phase,KEY=VALUE,...`,
/// `N=if:NAME[,backend=...]` or `N=null`.
/// File names cannot contain `,`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortSpec {
    /// The port number.
    pub id: u32,
    /// What the port is.
    pub kind: PortKind,
}

impl PortSpec {
    /// Parses one `--port` argument.
    pub fn parse(s: &str) -> Result<PortSpec, SpecError> {
        let err = |col: usize, m: String| SpecError { col, message: m };
        let Some((num, rest)) = s.split_once('=') else {
            return Err(err(
                1,
                format!("expected N=pcap:IN[,OUT], N=gen:..., N=if:NAME or N=null, found `{s}`"),
            ));
        };
        let id: u32 = num.trim().parse().map_err(|_| {
            err(
                1,
                format!("port number `{num}` is not a number from 0 to 2^32-1"),
            )
        })?;
        let body_col = num.chars().count() + 2;
        let (kind, args) = match rest.split_once(':') {
            Some((k, a)) => (k, Some(a)),
            None => (rest, None),
        };
        let args_col = body_col + kind.chars().count() + 1;
        let kind = match (kind, args) {
            ("null", None) => PortKind::Null,
            ("null", Some(_)) => return Err(err(args_col - 1, "`null` takes no arguments".into())),
            ("pcap", Some(a)) => {
                let mut files = a.split(',');
                let input = files.next().unwrap_or("");
                let output = files.next();
                if files.next().is_some() {
                    return Err(err(
                        args_col,
                        "expected pcap:IN or pcap:IN,OUT (file names cannot contain `,`)".into(),
                    ));
                }
                let input = (!input.is_empty()).then(|| PathBuf::from(input));
                let output = match output {
                    Some("") => {
                        return Err(err(
                            args_col + a.chars().count(),
                            "empty output file name after `,`".into(),
                        ))
                    }
                    Some(o) => Some(PathBuf::from(o)),
                    None => None,
                };
                if input.is_none() && output.is_none() {
                    return Err(err(
                        args_col,
                        "pcap port needs an input or an output file".into(),
                    ));
                }
                PortKind::Pcap { input, output }
            }
            ("gen", Some(a)) => {
                PortKind::Gen(parse_gen_spec_at(a, id).map_err(|(at, e)| err(args_col + at, e.0))?)
            }
            ("if", Some(a)) => {
                let mut parts = a.split(',');
                let name = parts.next().unwrap_or("").to_string();
                if name.is_empty() {
                    return Err(err(
                        args_col,
                        "expected an interface name after `if:`".into(),
                    ));
                }
                let mut backend = Backend::Auto;
                let mut qdisc = false;
                for p in parts {
                    backend = match p {
                        "backend=af_packet" => Backend::AfPacket,
                        "backend=af_xdp" => Backend::AfXdp,
                        "backend=auto" => Backend::Auto,
                        "qdisc" => {
                            qdisc = true;
                            backend
                        }
                        other => {
                            return Err(err(
                                args_col,
                                format!(
                                    "unknown interface option `{other}`: expected \
                                     backend=af_packet, backend=af_xdp, backend=auto or qdisc"
                                ),
                            ))
                        }
                    };
                }
                if qdisc && backend == Backend::AfXdp {
                    return Err(err(
                        args_col,
                        "`qdisc` sends through the interface's queueing discipline, which \
                         AF_XDP bypasses: use backend=af_packet (or leave the backend out)"
                            .into(),
                    ));
                }
                PortKind::Interface {
                    name,
                    backend,
                    qdisc,
                }
            }
            ("pcap" | "gen" | "if", None) => {
                return Err(err(
                    args_col - 1,
                    format!("expected `:` and arguments after `{kind}`"),
                ))
            }
            _ => {
                return Err(err(
                    body_col,
                    format!("unknown port kind `{kind}`: expected pcap, gen, if or null"),
                ))
            }
        };
        Ok(PortSpec { id, kind })
    }

    /// Opens the port.
    pub fn open(&self) -> Result<Box<dyn Port>, PortError> {
        Ok(match &self.kind {
            PortKind::Pcap { input, output } => {
                Box::new(PcapPort::open(self.id, input.clone(), output.clone())?)
            }
            PortKind::Gen(cfg) => Box::new(GenPort::new(self.id, cfg.clone())?),
            PortKind::Null => Box::new(NullPort::new(self.id)),
            PortKind::Interface { .. } => self.open_worker(0, 1, None)?.0,
        })
    }

    /// Opens an interface port as worker `worker`'s of `workers` (`--cores`), with the back end
    /// it got. AF_XDP: the worker's own sockets on its receive queues (`q mod workers =
    /// worker`, [`crate::afxdp`]); AF_PACKET: with `Some(group)`, a socket in fanout group
    /// `group`, over which the kernel spreads packets by flow. `Auto` takes AF_XDP when the
    /// interface has at least `workers` receive queues and libxdp can set the sockets up, else
    /// AF_PACKET, and says why on stderr (worker 0). Other kinds of port are opened as by
    /// [`PortSpec::open`] and reported as `Auto`.
    pub fn open_worker(
        &self,
        worker: usize,
        workers: usize,
        group: Option<u16>,
    ) -> Result<(Box<dyn Port>, Backend), PortError> {
        let PortKind::Interface {
            name,
            backend,
            qdisc,
        } = &self.kind
        else {
            return Ok((self.open()?, Backend::Auto));
        };
        if *qdisc {
            if workers > 1 {
                return Err(PortError::Other(format!(
                    "port {} (interface {name}): `qdisc` ports run on one loop (leave out \
                     --cores)",
                    self.id
                )));
            }
            return Ok((
                Box::new(crate::afpacket::AfPacketPort::open_qdisc(self.id, name)?),
                Backend::AfPacket,
            ));
        }
        let packet = || -> Result<(Box<dyn Port>, Backend), PortError> {
            Ok((
                Box::new(crate::afpacket::AfPacketPort::open_fanout(
                    self.id, name, group,
                )?),
                Backend::AfPacket,
            ))
        };
        match backend {
            Backend::AfXdp => Ok((
                Box::new(crate::afxdp::AfXdpPort::open_worker(
                    self.id, name, worker, workers,
                )?),
                Backend::AfXdp,
            )),
            Backend::AfPacket => packet(),
            Backend::Auto => {
                let nq = crate::afxdp::rx_queues(name);
                if nq == 0 {
                    // No such interface: AF_PACKET's error names it.
                    return packet();
                }
                let why = if nq < workers {
                    format!("AF_XDP needs a receive queue per worker ({workers}), and it has {nq}")
                } else {
                    match crate::afxdp::AfXdpPort::open_worker(self.id, name, worker, workers) {
                        Ok(p) => return Ok((Box::new(p), Backend::AfXdp)),
                        Err(e) => format!("AF_XDP could not be set up: {e}"),
                    }
                };
                if worker == 0 {
                    eprintln!(
                        "port {} (interface {name}): {why}; using AF_PACKET",
                        self.id
                    );
                }
                packet()
            }
        }
    }

    /// This spec with back end `backend` (interfaces; other kinds unchanged).
    pub fn with_backend(&self, backend: Backend) -> PortSpec {
        let mut s = self.clone();
        if let PortKind::Interface { backend: b, .. } = &mut s.kind {
            *b = backend;
        }
        s
    }

    /// Whether the port's input never ends by itself (an interface).
    pub fn is_live(&self) -> bool {
        matches!(self.kind, PortKind::Interface { .. })
    }
}

impl std::str::FromStr for PortSpec {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<PortSpec, SpecError> {
        PortSpec::parse(s)
    }
}

/// Parses several `--port` arguments and checks that no port number repeats.
pub fn parse_port_specs<S: AsRef<str>>(args: &[S]) -> Result<Vec<PortSpec>, SpecError> {
    let mut out: Vec<PortSpec> = Vec::with_capacity(args.len());
    for a in args {
        let spec = PortSpec::parse(a.as_ref())?;
        if out.iter().any(|s| s.id == spec.id) {
            return Err(SpecError {
                col: 1,
                message: format!("port {} is given twice", spec.id),
            });
        }
        // Two ports on one interface would each take a share of its frames.
        if let PortKind::Interface { name, .. } = &spec.kind {
            let twice = out
                .iter()
                .find(|s| matches!(&s.kind, PortKind::Interface { name: n, .. } if n == name));
            if let Some(other) = twice {
                return Err(SpecError {
                    col: 1,
                    message: format!(
                        "interface {name} is given to port {} and to port {}: an interface \
                         is one port",
                        other.id, spec.id
                    ),
                });
            }
        }
        out.push(spec);
    }
    Ok(out)
}

/// A port that also writes what it receives and what it sends to two pcap files, as BMv2's
/// `simple_switch --pcap DIR` does (`nevermiss run --pcap-dir`). Capture write errors end the
/// run like any port error, naming the file.
pub struct CapturePort {
    inner: Box<dyn Port>,
    rx: (PathBuf, PcapWriter<BufWriter<File>>),
    tx: (PathBuf, PcapWriter<BufWriter<File>>),
    origin: std::time::Instant,
}

impl CapturePort {
    /// Wraps `inner`, creating `rx_path` and `tx_path`.
    pub fn new(
        inner: Box<dyn Port>,
        rx_path: PathBuf,
        tx_path: PathBuf,
    ) -> Result<CapturePort, PortError> {
        let open = |p: &PathBuf| {
            PcapWriter::create(p)
                .map(|w| (p.clone(), w))
                .map_err(|error| PortError::Io {
                    path: p.clone(),
                    error,
                })
        };
        Ok(CapturePort {
            rx: open(&rx_path)?,
            tx: open(&tx_path)?,
            inner,
            origin: std::time::Instant::now(),
        })
    }

    fn ts(&self, p: &Packet) -> u64 {
        if p.ts_ns != 0 {
            p.ts_ns
        } else {
            self.origin.elapsed().as_nanos() as u64
        }
    }
}

impl Port for CapturePort {
    fn id(&self) -> u32 {
        self.inner.id()
    }
    fn rx_burst(&mut self, batch: &mut Batch) -> Result<usize, PortError> {
        let first = batch.len();
        let n = self.inner.rx_burst(batch)?;
        for p in &batch.as_slice()[first..] {
            let ts = self.ts(p);
            let (path, w) = &mut self.rx;
            w.write_packet(p.data(), ts)
                .map_err(|error| PortError::Io {
                    path: path.clone(),
                    error,
                })?;
        }
        Ok(n)
    }
    fn rx_done(&self) -> bool {
        self.inner.rx_done()
    }
    fn link_up(&self) -> bool {
        self.inner.link_up()
    }
    fn can_block(&self) -> bool {
        self.inner.can_block()
    }
    fn wait_fds(&self, out: &mut Vec<std::os::fd::RawFd>) -> bool {
        self.inner.wait_fds(out)
    }
    /// Captures what the port took (a port that may block takes a prefix and is offered the
    /// rest again: each packet is captured once, when it is sent).
    fn tx(&mut self, pkts: &[Packet]) -> Result<usize, PortError> {
        let taken = self.inner.tx(pkts)?;
        let capture = if self.inner.can_block() {
            &pkts[..taken.min(pkts.len())]
        } else {
            pkts
        };
        for p in capture {
            let ts = self.ts(p);
            let (path, w) = &mut self.tx;
            w.write_packet(p.data(), ts)
                .map_err(|error| PortError::Io {
                    path: path.clone(),
                    error,
                })?;
        }
        Ok(taken)
    }
    fn flush(&mut self) -> Result<(), PortError> {
        for (path, w) in [&mut self.rx, &mut self.tx] {
            w.flush().map_err(|error| PortError::Io {
                path: path.clone(),
                error,
            })?;
        }
        self.inner.flush()
    }
    fn stats(&self) -> &Arc<PortStats> {
        self.inner.stats()
    }
    fn describe(&self) -> String {
        format!(
            "{} (captured to {}, {})",
            self.inner.describe(),
            self.rx.0.display(),
            self.tx.0.display()
        )
    }
}
