//! The run loop: receive a batch from each port in turn, run every packet of it to completion,
//! transmit the outputs batched per port. One worker thread (issue 4 adds more); the switch
//! is shared, so N loops over N port sets could run at once.
//!
//! Time: with [`Clock::Wall`] packets are stamped with the monotonic time since the start of
//! the run (one reading per batch); with [`Clock::Packet`] with their own timestamps (pcap
//! capture times, generator times). Idle timers advance every `Config::tick_ns` of that time.

use crate::arch::Outputs;
use crate::handover::{Handover, Member};
use crate::queues::EgressQueues;
use crate::state::Switch;
pub use crate::types::RunError;
use crate::worker::Worker;
use nevermiss_io::{Batch, Packet, Port, PortError, StatsSnapshot};
use nevermiss_tables::TableStats;
use std::fmt::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Where packet time comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Clock {
    /// Monotonic time on the switch's clock (`Switch::now_ns`), which control-plane timers share.
    #[default]
    Wall,
    /// The packets' own timestamps.
    Packet,
}

/// Options of a run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Packets per batch (1..=256).
    pub batch: usize,
    /// Which time the switch sees (tables' idle timeouts, meters, expiry).
    pub clock: Clock,
    /// Print statistics this often while running (to stderr).
    pub stats_every: Option<Duration>,
    /// Stop after this many received packets.
    pub max_packets: Option<u64>,
    /// Stop (after the batch in flight, flushing outputs) once this is set: a server replacing
    /// the pipeline the ports run.
    pub stop: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// Print statistics (to stderr) at the next round once this is set, and clear it
    /// (SIGUSR1).
    pub stats_now: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// Trace the first this-many packets (`--trace`): each one's parser states, table applies
    /// (hit or miss, action, parameters), `add_entry` results and outputs, printed to stderr.
    /// Traced packets are processed one at a time.
    pub trace: Option<u64>,
    /// Which worker this loop is (0 when alone): its `Worker` id; only worker 0 runs the
    /// tables' expiry, so that several loops over one switch do not repeat it.
    pub worker: u64,
    /// What the loop does when no port has a packet: wait (adaptive, the default) or spin
    /// (`--busy-poll`); `nevermiss_io::idle`.
    pub polling: nevermiss_io::Polling,
}

impl Default for RunOptions {
    fn default() -> RunOptions {
        RunOptions {
            batch: 32,
            clock: Clock::Wall,
            stats_every: None,
            max_packets: None,
            stop: None,
            stats_now: None,
            trace: None,
            worker: 0,
            polling: nevermiss_io::Polling::Adaptive,
        }
    }
}

/// Statistics of a table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableReport {
    /// The table's control-plane name.
    pub name: String,
    /// Entries in it at the end.
    pub entries: usize,
    /// The most entries it holds ([`nevermiss_tables::Table::capacity`]; from its `size`, P4_16
    /// §14.2.1.5).
    pub capacity: usize,
    /// Its hits, misses, inserts (and those refused because it was full), updates and expirations.
    pub stats: TableStats,
}

/// What a run did.
#[derive(Clone, Debug, Default)]
pub struct RunReport {
    /// Every port's counters, in port order.
    pub ports: Vec<StatsSnapshot>,
    /// Every table's statistics, in program order.
    pub tables: Vec<TableReport>,
    /// Packets received on all ports.
    pub packets_in: u64,
    /// Packets sent on all ports.
    pub packets_out: u64,
    /// Input packets that produced no output.
    pub dropped: u64,
    /// Outputs to ports that do not exist, as (port, packets), by port.
    pub unknown_ports: UnknownPorts,
    /// Digests waiting for a control plane to take them.
    pub digests: usize,
    /// Wall time of the run.
    pub elapsed: Duration,
    /// Per worker (runs with `--cores`): packets and CPU time.
    pub workers: Vec<(u64, Duration)>,
    /// What the egress queues did (runs with queues, `Config::queues`).
    pub queues: Option<crate::queues::QueueStats>,
    /// The input error that ended the run early. Every complete packet before it was
    /// processed and its outputs written; the caller reports it after the statistics.
    pub error: Option<String>,
}

/// Packets sent to ports the run does not have, counted per port number.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UnknownPorts(Vec<(u32, u64)>);

impl UnknownPorts {
    /// Counts one packet to `port`.
    pub fn add(&mut self, port: u32, n: u64) {
        match self.0.iter_mut().find(|(p, _)| *p == port) {
            Some((_, c)) => *c += n,
            None => {
                self.0.push((port, n));
                self.0.sort_unstable();
            }
        }
    }

    /// Adds every count of `other`.
    pub fn merge(&mut self, other: &UnknownPorts) {
        for &(p, n) in &other.0 {
            self.add(p, n);
        }
    }

    /// Packets to unknown ports in all.
    pub fn total(&self) -> u64 {
        self.0.iter().map(|(_, n)| n).sum()
    }

    /// (port, packets), by port.
    pub fn as_slice(&self) -> &[(u32, u64)] {
        &self.0
    }
}

impl RunReport {
    /// Received packets per second of processing time.
    pub fn pps(&self) -> f64 {
        per_second(self.packets_in, self.elapsed)
    }

    /// The report as text (ports, tables, totals).
    pub fn render(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "ports:");
        for p in &self.ports {
            let _ = writeln!(
                s,
                "  port {:>3}: in {} pkts ({} B), out {} pkts ({} B), dropped {}",
                p.port, p.rx_packets, p.rx_bytes, p.tx_packets, p.tx_bytes, p.dropped
            );
        }
        for (port, n) in self.unknown_ports.as_slice() {
            let _ = writeln!(
                s,
                "  port {port:>3}: not configured (no --port {port}=...); {n} packets sent to it were dropped"
            );
        }
        if !self.tables.is_empty() {
            let _ = writeln!(s, "tables:");
        }
        for t in &self.tables {
            let st = &t.stats;
            let _ = writeln!(
                s,
                "  {}: {} entries of {}; hits {}, misses {}, inserts {}, failed inserts {}, updates {}, expirations {}, notifications {}",
                t.name, t.entries, t.capacity, st.hits, st.misses, st.inserts, st.inserts_full, st.updates, st.expirations, st.notifications
            );
        }
        for (i, (n, cpu)) in self.workers.iter().enumerate() {
            let c = cpu.as_secs_f64();
            let _ = writeln!(
                s,
                "  worker {i}: {n} packets, {c:.3} s cpu, {:.0} ns cpu per packet",
                if *n > 0 { c * 1e9 / *n as f64 } else { 0.0 }
            );
        }
        if let Some(q) = &self.queues {
            let _ = writeln!(
                s,
                "egress queues: {} copies enqueued, deepest {} packets; dropped: {} (queue full), {} (no queue for their priority), {} (a new pipeline took over)",
                q.enqueued, q.max_depth, q.dropped_full, q.dropped_priority, q.dropped_handover
            );
        }
        // The ports' drops are the program's (counted on the input port) and the outputs a
        // port did not take (counted on it): the total counts both, like the lines above.
        let not_taken = self
            .ports
            .iter()
            .map(|p| p.dropped)
            .sum::<u64>()
            .saturating_sub(self.dropped);
        let _ = writeln!(
            s,
            "total: {} packets in, {} out, {} dropped{}{}; {} digests; {:.3} s, {:.0} packets/s",
            self.packets_in,
            self.packets_out.saturating_sub(not_taken),
            self.dropped + not_taken,
            if not_taken > 0 {
                format!(
                    " ({} by the program, {not_taken} outputs their port did not take)",
                    self.dropped
                )
            } else {
                String::new()
            },
            if self.unknown_ports.total() > 0 {
                format!(", {} to unconfigured ports", self.unknown_ports.total())
            } else {
                String::new()
            },
            self.digests,
            self.elapsed.as_secs_f64(),
            self.pps()
        );
        s
    }
}

/// `n` per second of `d` (0 for an empty interval).
pub fn per_second(n: u64, d: Duration) -> f64 {
    let s = d.as_secs_f64();
    if s > 0.0 {
        n as f64 / s
    } else {
        0.0
    }
}

/// Table statistics of a switch.
pub fn table_reports(sw: &Switch) -> Vec<TableReport> {
    sw.prog()
        .tables
        .iter()
        .zip(sw.rt_tables())
        .map(|(td, rt)| TableReport {
            name: td.name.clone(),
            entries: rt.table().len(),
            capacity: rt.table().capacity(),
            stats: rt.table().stats(),
        })
        .collect()
}

/// How often the run loop asks its ports whether their link is up ([`Port::link_up`]).
pub const LINK_POLL: Duration = Duration::from_millis(100);

/// Runs until every port's input is exhausted (or `max_packets` were received).
pub fn run(
    sw: Arc<Switch>,
    ports: Vec<Box<dyn Port>>,
    opts: &RunOptions,
) -> Result<RunReport, RunError> {
    run_handed(&Handover::new(Some(sw)), ports, opts)
}

/// [`run`] on whatever switch `h` holds, taking over each one handed to it at the quiescent
/// point between batches (the ports stay open; `crate::handover`). While it holds none,
/// received packets are dropped (counted on their port).
pub fn run_handed(
    h: &Arc<Handover>,
    ports: Vec<Box<dyn Port>>,
    opts: &RunOptions,
) -> Result<RunReport, RunError> {
    if !(1..=nevermiss_io::BATCH_MAX).contains(&opts.batch) {
        return Err(RunError::BatchSize(opts.batch));
    }
    let mut lp = RunLoop::new(h, ports, opts);
    while lp.round()? {}
    lp.finish()
}

/// One run loop's state ([`run_handed`]): its ports and their transmit batches, the switch it
/// runs (through its handover membership) and its worker, the report so far, and when its
/// periodic work (expiry, link polls, statistics) is next due.
struct RunLoop<'o> {
    opts: &'o RunOptions,
    member: Member,
    /// The worker of the member's switch; `None` while the handover holds no switch.
    worker: Option<Worker>,
    ports: Vec<Box<dyn Port>>,
    /// `ids[i]` is the number of `ports[i]`.
    ids: Vec<u32>,
    rx: Batch,
    /// `tx[i]`: outputs waiting for `ports[i]`.
    tx: Vec<Batch>,
    start: Instant,
    report: RunReport,
    /// The expiry period in ns of packet time (`Config::tick_ns`, at least 1).
    tick: u64,
    /// Packet time (ns) at which worker 0 next runs the tables' expiry.
    next_expire: u64,
    next_stats: Option<Instant>,
    /// When the interface ports' link states are read next (`Switch::set_port_up`).
    next_link_poll: Instant,
    idle: nevermiss_io::IdleWait,
    trace: TraceState,
    /// Egress queues, when the switch has them (`Config::queues`; otherwise none of this runs).
    queues: Option<EgressQueues>,
}

/// How far `--trace` has got: packets traced of the limit, and whether the end of tracing was
/// announced.
struct TraceState {
    traced: u64,
    limit: u64,
    cut: bool,
}

/// What one port's turn in a round did.
enum Turn {
    /// Nothing arrived.
    Empty,
    /// A batch arrived (and ran, when there is a switch).
    Received,
    /// `max_packets` were received: the round goes on without the other ports' input.
    Limit,
    /// The port's input failed (the error is in the report): the loop ends.
    InputError,
}

/// The expiry period of `w`'s switch (1 without one).
fn tick_of(w: &Option<Worker>) -> u64 {
    w.as_ref().map_or(1, |w| w.sw.config().tick_ns.max(1))
}

impl<'o> RunLoop<'o> {
    fn new(h: &Arc<Handover>, ports: Vec<Box<dyn Port>>, opts: &'o RunOptions) -> RunLoop<'o> {
        let member = h.join();
        let mut worker = member
            .switch()
            .map(|sw| Worker::new(sw.clone(), opts.worker));
        let tick = tick_of(&worker);
        let next_expire = worker
            .as_ref()
            .map_or(0, |w| w.sw.now_ns().saturating_add(tick));
        let trace = TraceState {
            traced: 0,
            limit: opts.trace.unwrap_or(0),
            cut: false,
        };
        if let (true, Some(w)) = (trace.limit > 0, worker.as_mut()) {
            w.ex.trace = Some(Vec::new());
        }
        let start = Instant::now();
        let mut lp = RunLoop {
            opts,
            member,
            worker,
            ids: ports.iter().map(|p| p.id()).collect(),
            rx: Batch::with_capacity(opts.batch),
            tx: ports
                .iter()
                .map(|_| Batch::with_capacity(nevermiss_io::BATCH_MAX))
                .collect(),
            ports,
            start,
            report: RunReport::default(),
            tick,
            next_expire,
            next_stats: opts.stats_every.map(|d| start + d),
            // Interface ports' link state, for watch ports: now, then every LINK_POLL (and at
            // once on a switch handed over).
            next_link_poll: start,
            idle: nevermiss_io::IdleWait::new(opts.polling),
            trace,
            queues: None,
        };
        crate::queues::follow(&mut lp.queues, lp.worker.as_ref(), &mut lp.report);
        lp
    }

    /// One round: a batch from each port in turn, then the egress queues, the link states and
    /// the statistics; waits when nothing happened. Returns whether the loop goes on.
    fn round(&mut self) -> Result<bool, RunError> {
        let mut any = false;
        for pi in 0..self.ports.len() {
            match self.port_turn(pi)? {
                Turn::Empty => {}
                Turn::Received => any = true,
                Turn::Limit => break,
                Turn::InputError => return Ok(false),
            }
        }
        any |= self.service_queues()?;
        self.poll_links();
        self.print_stats();
        if self.finished() {
            return Ok(false);
        }
        self.wait(any);
        Ok(true)
    }

    /// Port `pi`'s turn: at the quiescent point take over a switch handed over, then receive
    /// a batch and run it.
    fn port_turn(&mut self, pi: usize) -> Result<Turn, RunError> {
        if self.member.changed() {
            self.take_over();
        }
        let tracing = self.tracing();
        let batch_size = if tracing { 1 } else { self.opts.batch };
        let want = self.opts.max_packets.map_or(batch_size as u64, |m| {
            m.saturating_sub(self.report.packets_in)
        });
        if want == 0 {
            return Ok(Turn::Limit);
        }
        self.rx.clear();
        self.rx.set_capacity(want.min(batch_size as u64) as usize);
        match self.ports[pi].rx_burst(&mut self.rx) {
            Ok(0) => Ok(Turn::Empty),
            Ok(_) => {
                self.run_batch(pi, tracing)?;
                Ok(Turn::Received)
            }
            Err(e) => {
                self.report.error = Some(e.to_string());
                Ok(Turn::InputError)
            }
        }
    }

    /// Takes over the switch handed over (the old worker leaves the old switch's gate first).
    fn take_over(&mut self) {
        drop(self.worker.take());
        self.worker = self
            .member
            .take()
            .map(|sw| Worker::new(sw, self.opts.worker));
        crate::queues::follow(&mut self.queues, self.worker.as_ref(), &mut self.report);
        self.tick = tick_of(&self.worker);
        if let Some(w) = self.worker.as_mut() {
            self.next_expire = w.sw.now_ns().saturating_add(self.tick);
            if self.trace.traced < self.trace.limit {
                w.ex.trace = Some(Vec::new());
            }
        }
        self.next_link_poll = Instant::now();
    }

    /// Whether the next packet is traced; turns tracing off (once, saying so) past the limit.
    fn tracing(&mut self) -> bool {
        let t = &mut self.trace;
        let tracing = t.traced < t.limit && self.worker.is_some();
        if let Some(w) = self
            .worker
            .as_mut()
            .filter(|w| !tracing && w.ex.trace.is_some())
        {
            w.ex.trace = None;
            if !t.cut && t.limit > 0 {
                t.cut = true;
                eprintln!(
                    "trace: the first {} packets were traced (--trace-limit); \
                     the rest run untraced",
                    t.limit
                );
            }
        }
        tracing
    }

    /// Runs the received batch (from port `pi`) to completion: outputs batched per port,
    /// copies for the egress queues enqueued, expiry when due; then transmits what is batched.
    fn run_batch(&mut self, pi: usize, tracing: bool) -> Result<(), RunError> {
        let n = self.rx.len() as u64;
        let (Some(worker), Some(sw)) = (self.worker.as_mut(), self.member.switch()) else {
            // No pipeline: what arrives is dropped.
            self.report.packets_in += n;
            self.report.dropped += n;
            self.ports[pi].stats().add_dropped(n);
            return Ok(());
        };
        // The switch's clock, which the control plane's timers also use.
        let wall = sw.now_ns();
        let clock = self.opts.clock;
        let time = |p: &Packet| match clock {
            Clock::Wall => wall,
            Clock::Packet => p.ts_ns,
        };
        let mut failed = None;
        let pkts = self.rx.as_slice();
        let mut traced = TracedOutputs::default();
        let (report, ports, tx, ids) = (&mut self.report, &mut self.ports, &mut self.tx, &self.ids);
        let (queues, next_expire) = (&mut self.queues, &mut self.next_expire);
        let (tick, expires) = (self.tick, self.opts.worker == 0);
        worker.process_batch(pkts, time, |i, outs| {
            let now = time(&pkts[i]);
            report.packets_in += 1;
            if tracing {
                traced.record(outs);
            }
            if outs.is_empty() && !outs.has_deferred() {
                report.dropped += 1;
                ports[pi].stats().add_dropped(1);
            }
            let q = queue_outputs(outs, ids, tx, now, &mut report.unknown_ports, |ti, b| {
                flush(ports[ti].as_mut(), b)
            });
            match q {
                Ok(out) => report.packets_out += out,
                Err(e) => {
                    failed.get_or_insert(e);
                }
            }
            if let Some(q) = queues.as_mut() {
                report.dropped += q.enqueue(outs, now);
            }
            if now >= *next_expire && expires {
                sw.expire(now);
                *next_expire = now.saturating_add(tick);
            }
        });
        if let Some(e) = failed {
            return Err(e.into());
        }
        if tracing {
            self.trace.traced += 1;
            traced.print(self.trace.traced, &pkts[0], worker);
        }
        worker.maintain();
        for (port, b) in self.ports.iter_mut().zip(&mut self.tx) {
            if !b.is_empty() {
                crate::queues::flush(self.queues.as_ref(), port.as_mut(), b)?;
            }
        }
        Ok(())
    }

    /// Serves the egress queues (when the switch has them) at the time of the run's clock.
    /// Returns whether copies left a queue.
    fn service_queues(&mut self) -> Result<bool, RunError> {
        let (Some(q), Some(w)) = (self.queues.as_mut(), self.worker.as_mut()) else {
            return Ok(false);
        };
        let now = match self.opts.clock {
            Clock::Wall => w.sw.now_ns(),
            // Packet time stands still once the inputs end: the queues' time goes on to
            // their next departure, so a rate-limited queue drains.
            Clock::Packet if self.ports.iter().all(|p| p.rx_done()) => {
                w.ex.now_ns.max(q.next_departure().unwrap_or(0))
            }
            Clock::Packet => w.ex.now_ns,
        };
        let taken = q.service(
            w,
            &mut self.ports,
            &self.ids,
            &mut self.tx,
            self.opts.batch,
            now,
            &mut self.report,
        )?;
        Ok(taken > 0)
    }

    /// Tells the switch its ports' link states, every [`LINK_POLL`].
    fn poll_links(&mut self) {
        if Instant::now() < self.next_link_poll {
            return;
        }
        if let Some(w) = &self.worker {
            for p in &self.ports {
                w.sw.set_port_up(p.id(), p.link_up());
            }
        }
        self.next_link_poll = Instant::now() + LINK_POLL;
    }

    /// Prints the statistics (to stderr) when asked (SIGUSR1) or due (`stats_every`).
    fn print_stats(&mut self) {
        let asked = self
            .opts
            .stats_now
            .as_ref()
            .is_some_and(|f| f.swap(false, std::sync::atomic::Ordering::Relaxed));
        let due = self.next_stats.is_some_and(|t| Instant::now() >= t);
        if asked || due {
            let sw = self.member.switch().map(|s| &**s);
            let r = snapshot(sw, &self.ports, &self.report, self.start.elapsed());
            eprint!("{}", r.render());
        }
        if due {
            self.next_stats = self.opts.stats_every.map(|d| Instant::now() + d);
        }
    }

    /// Copies in the queues, or packets a port that may block has not taken yet.
    fn waiting(&self) -> bool {
        self.queues.is_some()
            && (self.queues.as_ref().is_some_and(|q| !q.is_empty())
                || self.tx.iter().any(|b| !b.is_empty()))
    }

    /// Whether the loop ends: `max_packets` received, stopped, or every input ended and
    /// everything sent.
    fn finished(&self) -> bool {
        let limit = self
            .opts
            .max_packets
            .is_some_and(|m| self.report.packets_in >= m);
        let stopped = self
            .opts
            .stop
            .as_ref()
            .is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed));
        let drained = !self.waiting() && self.tx.iter().all(|b| b.is_empty());
        limit || stopped || (self.ports.iter().all(|p| p.rx_done()) && drained)
    }

    /// After a round: go on at once when it did something, else wait for input.
    fn wait(&mut self, any: bool) {
        if any {
            self.idle.busy();
        } else if self.waiting() {
            // Copies wait for their time (a queue rate) or for a port the qdisc holds back:
            // look again soon rather than wait for input.
            std::thread::sleep(crate::queues::RECHECK);
        } else {
            self.idle.idle(&self.ports);
        }
    }

    /// Flushes what is batched and the ports themselves, and makes the report.
    fn finish(mut self) -> Result<RunReport, RunError> {
        let elapsed = self.start.elapsed();
        for (port, b) in self.ports.iter_mut().zip(&mut self.tx) {
            if !b.is_empty() {
                flush(port.as_mut(), b)?;
            }
        }
        for p in self.ports.iter_mut() {
            p.flush()?;
        }
        let sw = self.member.switch().map(|s| &**s);
        let mut r = snapshot(sw, &self.ports, &self.report, elapsed);
        r.error = self.report.error;
        r.queues = self.queues.map(|q| q.stats);
        Ok(r)
    }
}

/// What a traced packet sent: (port, bytes) of each output, and the ports of copies queued.
#[derive(Default)]
struct TracedOutputs {
    outs: Vec<(u32, usize)>,
    queued: Vec<u32>,
}

impl TracedOutputs {
    fn record(&mut self, outs: &Outputs) {
        self.outs
            .extend(outs.as_slice().iter().map(|(p, d)| (*p, d.len())));
        self.queued.extend(outs.deferred.iter().map(|d| d.port));
    }

    /// Prints the trace of packet number `n` (`p`): the worker's trace lines, then its outputs.
    fn print(&self, n: u64, p: &Packet, worker: &mut Worker) {
        let mut text = format!("packet {n}: in on port {}, {} bytes\n", p.port, p.len());
        for line in worker
            .ex
            .trace
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
        {
            text.push_str(&format!("  {line}\n"));
        }
        if self.outs.is_empty() && self.queued.is_empty() {
            text.push_str("  dropped\n");
        }
        for (port, len) in &self.outs {
            text.push_str(&format!("  out on port {port}, {len} bytes\n"));
        }
        for port in &self.queued {
            text.push_str(&format!(
                "  queued for port {port} (egress runs when it leaves the queue)\n"
            ));
        }
        eprint!("{text}");
    }
}

/// Appends one packet's outputs to the per-port transmit batches (`tx[i]` for port `ids[i]`),
/// first flushing a full batch with `flush(i, batch)`; outputs to ports not in `ids` are
/// counted in `unknown`. Returns the packets queued.
pub(crate) fn queue_outputs(
    outs: &Outputs,
    ids: &[u32],
    tx: &mut [Batch],
    now: u64,
    unknown: &mut UnknownPorts,
    mut flush: impl FnMut(usize, &mut Batch) -> Result<(), PortError>,
) -> Result<u64, PortError> {
    let mut queued = 0;
    for (port, data) in outs.as_slice() {
        match ids.iter().position(|i| i == port) {
            Some(ti) => {
                if tx[ti].is_full() {
                    flush(ti, &mut tx[ti])?;
                }
                tx[ti].push(data, *port, now);
                queued += 1;
            }
            None => unknown.add(*port, 1),
        }
    }
    Ok(queued)
}

/// Transmits `b` on `port` (packets the port does not take count as dropped) and empties it.
pub(crate) fn flush(port: &mut dyn Port, b: &mut Batch) -> Result<(), PortError> {
    let taken = port.tx(b.as_slice())?;
    if taken < b.len() {
        port.stats().add_dropped((b.len() - taken) as u64);
    }
    b.clear();
    Ok(())
}

/// The report so far: `ports`' counters, `sw`'s tables and digests (none without a switch).
fn snapshot(
    sw: Option<&Switch>,
    ports: &[Box<dyn Port>],
    r: &RunReport,
    elapsed: Duration,
) -> RunReport {
    RunReport {
        ports: ports.iter().map(|p| p.stats().snapshot()).collect(),
        tables: sw.map(table_reports).unwrap_or_default(),
        packets_in: r.packets_in,
        packets_out: r.packets_out,
        dropped: r.dropped,
        unknown_ports: r.unknown_ports.clone(),
        digests: sw.map_or(0, |sw| sw.pending_digests()),
        elapsed,
        workers: Vec::new(),
        queues: None,
        error: None,
    }
}

/// Runs packets given in memory (for tests): returns the outputs (port, bytes) in order.
pub fn run_packets(sw: Arc<Switch>, pkts: &[Packet]) -> Vec<(u32, Vec<u8>)> {
    let mut w = Worker::new(sw, 0);
    let mut out = Vec::new();
    for p in pkts {
        for (port, d) in w.process(p.data(), p.port, p.ts_ns).as_slice() {
            out.push((*port, d.clone()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The total counts the drops the port lines count: the program's (on the input port) and
    /// the outputs a port did not take (here the CPU port without a primary, port 255).
    #[test]
    fn the_total_adds_up_the_ports_drops() {
        let port = |port, rx_packets, tx_packets, dropped| StatsSnapshot {
            port,
            rx_packets,
            tx_packets,
            dropped,
            ..StatsSnapshot::default()
        };
        let r = RunReport {
            ports: vec![port(0, 10, 0, 2), port(1, 0, 5, 0), port(255, 0, 0, 3)],
            packets_in: 10,
            packets_out: 8,
            dropped: 2,
            ..RunReport::default()
        };
        let text = r.render();
        assert!(
            text.contains(
                "total: 10 packets in, 5 out, 5 dropped (2 by the program, 3 outputs their port \
                 did not take);"
            ),
            "{text}"
        );
    }
}
