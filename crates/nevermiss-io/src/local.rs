//! The ports inside the process: [`PcapPort`] (a pcap/pcapng input file and/or a pcap output
//! file), [`CapturePort`] (any port, with what it receives and sends written to capture files),
//! [`QueuePort`] (in-memory queues, driven through a [`QueueHandle`]), [`GenPort`] (the built-in
//! two-phase generator) and [`NullPort`] (no input, output discarded). The guarantees of
//! [`Port`] hold for each.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::gen::{TwoPhaseConfig, TwoPhaseGen};
use crate::packet::{Batch, Packet};
use crate::pcap::{PcapError, PcapReader, PcapWriter, LINKTYPE_ETHERNET};
use crate::port::{bytes_of, Port, PortError};
use crate::stats::PortStats;

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
