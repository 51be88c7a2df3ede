//! Several cores: N worker threads, each pinned to its own CPU, run their own in-memory packet
//! queues through one shared [`Switch`] — one set of tables for all cores, so add-on-miss
//! inserts, data-plane updates and lookups from every worker meet in the same table
//! (papers/000 §VI: multi-core scaling).
//!
//! How packets reach a worker: the inputs are read completely into memory first and spread over
//! the workers by [`nevermiss_io::rss`] (a Toeplitz hash of configurable header fields, as a NIC's
//! RSS), so every packet of a flow is handled by one worker, in order, and no dispatcher thread
//! competes with the workers for a CPU. Then all workers start together (a barrier) and each runs
//! its queue in batches of `batch` packets (1 = latency-optimized, 32 = throughput-optimized,
//! papers/000 §IV). Outputs go to the output ports under a per-port lock, flushed per batch: the
//! order of packets within a worker is kept, across workers it is not (as on a multi-queue NIC).
//!
//! Idle-timer expiry runs on whichever worker first sees a tick boundary pass (one atomic
//! compare-and-swap per batch, no per-packet cost).

use crate::handover::Handover;
use crate::run::{
    self, per_second, queue_outputs, table_reports, Clock, RunOptions, RunReport, UnknownPorts,
};
use crate::state::Switch;
use crate::types::RunError;
use crate::worker::Worker;
use nevermiss_io::rss::{spread, Rss};
use nevermiss_io::PortStats;
use nevermiss_io::{Batch, Packet, Port, PortError};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How workers run.
#[derive(Clone, Debug)]
pub struct WorkerOptions {
    /// Packets per batch (1..=256).
    pub batch: usize,
    /// Pin worker `i` to the `i`-th CPU this process may use.
    pub pin: bool,
    /// Where packet time comes from.
    pub clock: Clock,
    /// Each worker stops after its batch in flight once this is set (a server replacing the
    /// pipeline, a signal).
    pub stop: Option<Arc<AtomicBool>>,
}

impl Default for WorkerOptions {
    fn default() -> WorkerOptions {
        WorkerOptions {
            batch: 32,
            pin: true,
            clock: Clock::Wall,
            stop: None,
        }
    }
}

/// What one worker did.
#[derive(Clone, Debug, Default)]
pub struct WorkerStat {
    /// Packets it received.
    pub packets: u64,
    /// Packets it sent.
    pub packets_out: u64,
    /// Received packets that produced no output.
    pub dropped: u64,
    /// Outputs to ports that do not exist.
    pub unknown_ports: UnknownPorts,
    /// From the common start to this worker's last packet.
    pub elapsed: Duration,
    /// The CPU it was pinned to.
    pub cpu: Option<usize>,
    /// CPU time the thread spent over the same interval (less than `elapsed` when other
    /// processes took its CPU: compare CPU time per packet on a busy machine).
    pub cpu_time: Duration,
}

/// What a run of in-memory queues did.
#[derive(Clone, Debug, Default)]
pub struct InMemoryReport {
    /// From the common start to the last worker's last packet.
    pub elapsed: Duration,
    /// Packets received, over all workers.
    pub packets_in: u64,
    /// Packets sent, over all workers.
    pub packets_out: u64,
    /// Received packets that produced no output.
    pub dropped: u64,
    /// Outputs to ports that do not exist, as (port, packets), by port.
    pub unknown_ports: UnknownPorts,
    /// Each worker's own figures, in worker order.
    pub per_worker: Vec<WorkerStat>,
}

impl InMemoryReport {
    /// Received packets per second over [`InMemoryReport::elapsed`].
    pub fn pps(&self) -> f64 {
        per_second(self.packets_in, self.elapsed)
    }
}

/// The CPUs this process may run on, in increasing order (all CPUs `0..n` when the affinity
/// mask cannot be read).
pub fn available_cpus() -> Vec<usize> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: cpu_set_t is plain data; sched_getaffinity writes at most its size.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: `set` is a valid cpu_set_t of the size passed.
        let r =
            unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
        if r == 0 {
            let cpus: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
                // SAFETY: i < CPU_SETSIZE.
                .filter(|&i| unsafe { libc::CPU_ISSET(i, &set) })
                .collect();
            if !cpus.is_empty() {
                return cpus;
            }
        }
    }
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    (0..n).collect()
}

/// Pins the calling thread to `cpu`.
pub fn pin_current_thread(cpu: usize) -> Result<(), RunError> {
    #[cfg(target_os = "linux")]
    {
        if cpu >= libc::CPU_SETSIZE as usize {
            return Err(RunError::CpuOutOfRange(cpu));
        }
        // SAFETY: cpu_set_t is plain data; cpu < CPU_SETSIZE.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: `cpu` < CPU_SETSIZE (checked above), inside `set`.
        unsafe { libc::CPU_SET(cpu, &mut set) };
        // SAFETY: `set` is a valid cpu_set_t of the size passed; the call only reads it.
        let r = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
        if r != 0 {
            return Err(RunError::Pin {
                cpu,
                error: std::io::Error::last_os_error(),
            });
        }
        Ok(())
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = cpu;
        Ok(())
    }
}

/// CPU time of the calling thread (zero where it cannot be read).
pub fn thread_cpu_time() -> Duration {
    #[cfg(unix)]
    {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: ts is a valid timespec to write to.
        if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } == 0 {
            return Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32);
        }
    }
    Duration::ZERO
}

/// Output ports shared by the workers, each under its own lock.
struct OutPorts {
    ids: Vec<u32>,
    ports: Vec<Mutex<Box<dyn Port>>>,
    /// The ports' counters, reachable without the lock (input drops are counted there).
    stats: Vec<Arc<PortStats>>,
}

/// Per-worker counters the main thread may read while the run goes on.
#[repr(align(128))]
#[derive(Default)]
struct Progress {
    packets: AtomicU64,
}

struct Shared<'a> {
    /// The switch the workers run (replaced between their batches: `crate::handover`).
    h: &'a Arc<Handover>,
    opts: &'a WorkerOptions,
    out: Option<&'a OutPorts>,
    /// Workers ready to start; all start when it reaches the worker count.
    ready: AtomicUsize,
    workers: usize,
    next_expire: AtomicU64,
    progress: Vec<Progress>,
    failed: AtomicBool,
    finished: AtomicUsize,
}

/// Counts a worker as finished however it leaves.
struct Finished<'a>(&'a AtomicUsize);

impl Drop for Finished<'_> {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Release);
    }
}

/// Runs `inputs[i]` on worker `i` (one thread each) through `sw`, all starting together;
/// outputs are counted and discarded. Returns when every worker is done. Fails if a worker
/// cannot be pinned (with `pin`) — never because of packet contents.
pub fn run_in_memory(
    sw: &Arc<Switch>,
    inputs: Vec<Vec<Packet>>,
    opts: &WorkerOptions,
) -> Result<InMemoryReport, RunError> {
    run_queues(&Handover::new(Some(sw.clone())), inputs, opts, None, |_| {})
}

fn run_queues(
    h: &Arc<Handover>,
    inputs: Vec<Vec<Packet>>,
    opts: &WorkerOptions,
    out: Option<&OutPorts>,
    mut while_running: impl FnMut(&dyn Fn() -> (u64, bool)),
) -> Result<InMemoryReport, RunError> {
    if !(1..=nevermiss_io::BATCH_MAX).contains(&opts.batch) {
        return Err(RunError::BatchSize(opts.batch));
    }
    let n = inputs.len().max(1);
    let cpus = available_cpus();
    if opts.pin && n > cpus.len() {
        return Err(RunError::TooFewCpus {
            workers: n,
            cpus: cpus.len(),
        });
    }
    let tick = h.current().map_or(1, |sw| sw.config().tick_ns.max(1));
    let shared = Shared {
        h,
        opts,
        out,
        ready: AtomicUsize::new(0),
        workers: n,
        next_expire: AtomicU64::new(tick),
        progress: (0..n).map(|_| Progress::default()).collect(),
        failed: AtomicBool::new(false),
        finished: AtomicUsize::new(0),
    };
    let start_cell: Mutex<Option<Instant>> = Mutex::new(None);
    let results: Vec<Result<WorkerStat, RunError>> = std::thread::scope(|s| {
        let handles: Vec<_> = inputs
            .into_iter()
            .enumerate()
            .map(|(i, q)| {
                let shared = &shared;
                let cpu = opts.pin.then(|| cpus[i]);
                let start_cell = &start_cell;
                std::thread::Builder::new()
                    .name(format!("nevermiss-worker-{i}"))
                    .spawn_scoped(s, move || {
                        let _done = Finished(&shared.finished);
                        worker_main(shared, i, cpu, q, start_cell)
                    })
                    .map_err(|e| {
                        // The others must not wait for this one.
                        shared.failed.store(true, Ordering::Release);
                        RunError::Spawn {
                            worker: i,
                            error: e,
                        }
                    })
            })
            .collect();
        let read = || {
            let done = shared.finished.load(Ordering::Acquire) >= n;
            let packets = shared
                .progress
                .iter()
                .map(|p| p.packets.load(Ordering::Relaxed))
                .sum::<u64>();
            (packets, done)
        };
        if handles.iter().all(Result::is_ok) {
            while_running(&read);
        }
        handles
            .into_iter()
            .map(|h| match h {
                Ok(h) => h.join().unwrap_or(Err(RunError::WorkerPanicked)),
                Err(e) => Err(e),
            })
            .collect()
    });
    let mut rep = InMemoryReport::default();
    for r in results {
        let st = r?;
        rep.packets_in += st.packets;
        rep.packets_out += st.packets_out;
        rep.dropped += st.dropped;
        rep.unknown_ports.merge(&st.unknown_ports);
        rep.elapsed = rep.elapsed.max(st.elapsed);
        rep.per_worker.push(st);
    }
    Ok(rep)
}

fn worker_main(
    sh: &Shared<'_>,
    id: usize,
    cpu: Option<usize>,
    queue: Vec<Packet>,
    start_cell: &Mutex<Option<Instant>>,
) -> Result<WorkerStat, RunError> {
    let pinned = cpu.map(pin_current_thread).transpose();
    if pinned.is_err() {
        sh.failed.store(true, Ordering::Release);
    }
    let mut member = sh.h.join();
    let mut worker = member.switch().map(|sw| Worker::new(sw.clone(), id as u64));
    let mut tx: Vec<Batch> = match sh.out {
        Some(o) => o
            .ids
            .iter()
            .map(|_| Batch::with_capacity(nevermiss_io::BATCH_MAX))
            .collect(),
        None => Vec::new(),
    };
    let batch = sh.opts.batch;
    let tick_of = |w: &Option<Worker>| w.as_ref().map_or(1, |w| w.sw.config().tick_ns.max(1));
    let mut tick = tick_of(&worker);
    let mut st = WorkerStat {
        cpu,
        ..WorkerStat::default()
    };
    // Everyone starts together, after all setup (pinning, allocation).
    sh.ready.fetch_add(1, Ordering::AcqRel);
    while sh.ready.load(Ordering::Acquire) < sh.workers && !sh.failed.load(Ordering::Acquire) {
        std::thread::yield_now();
    }
    if sh.failed.load(Ordering::Acquire) {
        pinned?;
        return Err(RunError::OtherWorkerNotPinned);
    }
    let start = {
        let mut s = start_cell.lock().unwrap_or_else(PoisonError::into_inner);
        *s.get_or_insert_with(Instant::now)
    };
    let cpu0 = thread_cpu_time();
    for (i, chunk) in queue.chunks(batch).enumerate() {
        // The queue waits in memory, not in a NIC's ring: while this batch runs, its worker
        // fetches the next one's headers (`process_batch_ahead`; without it a parser's first
        // read of each packet waits for DRAM, docs/jit.md). The descriptors (`Packet`s) are
        // read in order; the hardware's stream prefetcher has them (prefetching them too
        // measured slower).
        let next = queue
            .get((i + 1) * batch..)
            .map_or(&[][..], |r| &r[..r.len().min(batch)]);
        if sh
            .opts
            .stop
            .as_ref()
            .is_some_and(|s| s.load(Ordering::Relaxed))
        {
            break;
        }
        // The quiescent point between batches: a switch handed over is taken here.
        if member.changed() {
            drop(worker.take());
            worker = member.take().map(|sw| Worker::new(sw, id as u64));
            tick = tick_of(&worker);
            sh.next_expire.store(0, Ordering::Relaxed);
        }
        let (Some(worker), Some(sw)) = (worker.as_mut(), member.switch()) else {
            // No pipeline: the batch is dropped.
            st.packets += chunk.len() as u64;
            st.dropped += chunk.len() as u64;
            sh.progress[id].packets.store(st.packets, Ordering::Relaxed);
            continue;
        };
        let wall = start.elapsed().as_nanos() as u64;
        let clock = sh.opts.clock;
        let time = |p: &Packet| match clock {
            Clock::Wall => wall,
            Clock::Packet => p.ts_ns,
        };
        let now = chunk.last().map_or(wall, time);
        let mut failed = None;
        worker.process_batch_ahead(chunk, next, time, |i, outs| {
            if outs.is_empty() {
                st.dropped += 1;
                if let Some(o) = sh.out {
                    if let Some(pi) = o.ids.iter().position(|id| *id == chunk[i].port) {
                        o.stats[pi].add_dropped(1);
                    }
                }
            }
            match sh.out {
                None => st.packets_out += outs.len() as u64,
                Some(o) => {
                    let q = queue_outputs(
                        outs,
                        &o.ids,
                        &mut tx,
                        time(&chunk[i]),
                        &mut st.unknown_ports,
                        |ti, b| flush(&o.ports[ti], b),
                    );
                    match q {
                        Ok(out) => st.packets_out += out,
                        Err(e) => {
                            failed.get_or_insert(e);
                        }
                    }
                }
            }
        });
        if let Some(e) = failed {
            return Err(e.into());
        }
        worker.maintain();
        if let Some(o) = sh.out {
            for (ti, b) in tx.iter_mut().enumerate() {
                if !b.is_empty() {
                    flush(&o.ports[ti], b)?;
                }
            }
        }
        st.packets += chunk.len() as u64;
        sh.progress[id].packets.store(st.packets, Ordering::Relaxed);
        let due = sh.next_expire.load(Ordering::Relaxed);
        if now >= due
            && sh
                .next_expire
                .compare_exchange(
                    due,
                    now.saturating_add(tick),
                    Ordering::AcqRel,
                    Ordering::Relaxed,
                )
                .is_ok()
        {
            sw.expire(now);
        }
    }
    st.elapsed = start.elapsed();
    st.cpu_time = thread_cpu_time().saturating_sub(cpu0);
    Ok(st)
}

fn flush(port: &Mutex<Box<dyn Port>>, b: &mut Batch) -> Result<(), PortError> {
    let mut p = port.lock().unwrap_or_else(PoisonError::into_inner);
    run::flush(p.as_mut(), b)
}

/// Options of a multi-core run of ports.
#[derive(Clone, Debug)]
pub struct ParallelOptions {
    /// Number of workers (≥ 1). Even one worker reads its input into memory first, so runs
    /// with different numbers of workers measure the same thing.
    pub cores: usize,
    /// How packets are spread over workers.
    pub rss: Rss,
    /// Pin each worker to its own CPU.
    pub pin: bool,
    /// Most bytes of packets read into memory before the run.
    pub preload_limit: usize,
}

impl Default for ParallelOptions {
    fn default() -> ParallelOptions {
        ParallelOptions {
            cores: 1,
            rss: Rss::default(),
            pin: true,
            preload_limit: 4 << 30,
        }
    }
}

/// Runs `ports` on `par.cores` workers: reads every input port to its end (at most
/// `opts.max_packets` packets, at most `par.preload_limit` bytes), spreads the packets with RSS,
/// runs them (see the module documentation) and reports like [`crate::run::run`]. The reported
/// time covers the processing only, not the reading.
pub fn run_parallel(
    sw: Arc<Switch>,
    ports: Vec<Box<dyn Port>>,
    opts: &RunOptions,
    par: &ParallelOptions,
) -> Result<RunReport, RunError> {
    run_parallel_handed(&Handover::new(Some(sw)), ports, opts, par)
}

/// [`run_parallel`] on whatever switch `h` holds, each worker taking over a switch handed to
/// it between its batches (`crate::handover`).
pub fn run_parallel_handed(
    h: &Arc<Handover>,
    mut ports: Vec<Box<dyn Port>>,
    opts: &RunOptions,
    par: &ParallelOptions,
) -> Result<RunReport, RunError> {
    let limit = opts.max_packets.unwrap_or(u64::MAX);
    let mut all: Vec<Packet> = Vec::new();
    let mut bytes = 0usize;
    let mut rx = Batch::with_capacity(nevermiss_io::BATCH_MAX);
    let mut idle = 0u32;
    // An input error ends the reading; the packets read before it still run.
    let mut error = None;
    'read: loop {
        if opts
            .stop
            .as_ref()
            .is_some_and(|s| s.load(Ordering::Relaxed))
        {
            break;
        }
        let mut any = false;
        for p in ports.iter_mut() {
            let want = limit.saturating_sub(all.len() as u64);
            if want == 0 {
                break 'read;
            }
            rx.clear();
            rx.set_capacity(want.min(nevermiss_io::BATCH_MAX as u64) as usize);
            let n = match p.rx_burst(&mut rx) {
                Ok(n) => n,
                Err(e) => {
                    error = Some(e.to_string());
                    break 'read;
                }
            };
            any |= n > 0;
            for pkt in rx.iter() {
                bytes += pkt.len() + std::mem::size_of::<Packet>() + nevermiss_io::DEFAULT_HEADROOM;
                if bytes > par.preload_limit {
                    return Err(RunError::PreloadLimit {
                        cores: par.cores,
                        limit_mib: par.preload_limit >> 20,
                    });
                }
                all.push(Packet::from_bytes(pkt.data(), pkt.port, pkt.ts_ns));
            }
        }
        if ports.iter().all(|p| p.rx_done()) {
            break;
        }
        if any {
            idle = 0;
        } else {
            idle += 1;
            if idle > 10_000 {
                return Err(RunError::EndlessInput);
            }
            std::thread::sleep(Duration::from_micros(100));
        }
    }
    let queues = spread(all, &par.rss, par.cores.max(1));
    let out = OutPorts {
        ids: ports.iter().map(|p| p.id()).collect(),
        stats: ports.iter().map(|p| p.stats().clone()).collect(),
        ports: ports.into_iter().map(Mutex::new).collect(),
    };
    let wopts = WorkerOptions {
        batch: opts.batch,
        pin: par.pin,
        clock: opts.clock,
        stop: opts.stop.clone(),
    };
    let rep = run_queues(h, queues, &wopts, Some(&out), |read| {
        let Some(every) = opts.stats_every else {
            return;
        };
        // Print progress until the workers finish (the scope joins them after this returns).
        let mut last = 0;
        let mut next = Instant::now() + every;
        loop {
            std::thread::sleep(Duration::from_millis(10));
            let (now, done) = read();
            if done {
                break;
            }
            if Instant::now() >= next {
                eprintln!(
                    "{} packets processed, {:.0} packets/s in the last {:.1} s",
                    now,
                    (now - last) as f64 / every.as_secs_f64(),
                    every.as_secs_f64()
                );
                for t in h.current().map(|sw| table_reports(&sw)).unwrap_or_default() {
                    eprintln!(
                        "  {}: {} entries, inserts {}, failed inserts {}",
                        t.name, t.entries, t.stats.inserts, t.stats.inserts_full
                    );
                }
                last = now;
                next += every;
            }
        }
    });
    let rep = rep?;
    let mut ports: Vec<Box<dyn Port>> = out
        .ports
        .into_iter()
        .map(|m| m.into_inner().unwrap_or_else(PoisonError::into_inner))
        .collect();
    for p in ports.iter_mut() {
        p.flush()?;
    }
    let dropped_by_port = rep.dropped;
    let sw = h.current();
    let digests = sw.as_ref().map_or(0, |sw| sw.pending_digests());
    Ok(RunReport {
        ports: ports.iter().map(|p| p.stats().snapshot()).collect(),
        tables: sw.map(|sw| table_reports(&sw)).unwrap_or_default(),
        packets_in: rep.packets_in,
        packets_out: rep.packets_out,
        dropped: dropped_by_port,
        unknown_ports: rep.unknown_ports,
        digests,
        elapsed: rep.elapsed,
        workers: rep
            .per_worker
            .iter()
            .map(|w| (w.packets, w.cpu_time))
            .collect(),
        queues: None,
        error,
    })
}

/// Runs endless ports (network interfaces) on one worker per port set: worker `i` runs
/// [`crate::run::run`]'s loop over `sets[i]` (its own sockets of the same interfaces, which the
/// kernel spreads packets over: AF_PACKET fanout), pinned to the `i`-th CPU with `pin`, until
/// `opts.stop` is set or every input ends. Worker 0 runs the tables' expiry. The report sums
/// the ports by number and lists each worker's packets and CPU time.
pub fn run_live(
    h: &Arc<Handover>,
    sets: Vec<Vec<Box<dyn Port>>>,
    opts: &RunOptions,
    pin: bool,
) -> Result<RunReport, RunError> {
    let cpus = available_cpus();
    if pin && sets.len() > cpus.len() {
        return Err(RunError::TooFewCpus {
            workers: sets.len(),
            cpus: cpus.len(),
        });
    }
    let start = Instant::now();
    let results: Vec<Result<(RunReport, Duration), RunError>> = std::thread::scope(|s| {
        let handles: Vec<_> = sets
            .into_iter()
            .enumerate()
            .map(|(i, ports)| {
                // Only worker 0 prints progress (its own share of the ports).
                let o = RunOptions {
                    worker: i as u64,
                    stats_every: opts.stats_every.filter(|_| i == 0),
                    stats_now: opts.stats_now.clone().filter(|_| i == 0),
                    ..opts.clone()
                };
                let cpu = cpus.get(i).copied();
                s.spawn(move || {
                    if let (true, Some(c)) = (pin, cpu) {
                        pin_current_thread(c)?;
                    }
                    let cpu0 = thread_cpu_time();
                    let r = crate::run::run_handed(h, ports, &o)?;
                    Ok((r, thread_cpu_time().saturating_sub(cpu0)))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or(Err(RunError::WorkerPanicked)))
            .collect()
    });
    let mut out = RunReport::default();
    for r in results {
        let (r, cpu) = r?;
        for p in r.ports {
            match out.ports.iter_mut().find(|q| q.port == p.port) {
                Some(q) => {
                    q.rx_packets += p.rx_packets;
                    q.rx_bytes += p.rx_bytes;
                    q.tx_packets += p.tx_packets;
                    q.tx_bytes += p.tx_bytes;
                    q.dropped += p.dropped;
                }
                None => out.ports.push(p),
            }
        }
        out.packets_in += r.packets_in;
        out.packets_out += r.packets_out;
        out.dropped += r.dropped;
        out.unknown_ports.merge(&r.unknown_ports);
        out.workers.push((r.packets_in, cpu));
        if out.error.is_none() {
            out.error = r.error;
        }
    }
    out.ports.sort_by_key(|p| p.port);
    if let Some(sw) = h.current() {
        out.tables = table_reports(&sw);
        out.digests = sw.pending_digests();
    }
    out.elapsed = start.elapsed();
    Ok(out)
}
