//! Egress queues between v1model's ingress and egress, as BMv2's `simple_switch` has them
//! (behavioral-model `targets/simple_switch/simple_switch.cpp` and `QueueingLogicPriRL`):
//!
//! - one queue per port, or `priorities` per port (`--priority-queues N`: the copy's
//!   `standard_metadata.priority` picks one; a priority of N or more is dropped, as BMv2 drops
//!   it); every copy bound for a queued port waits in it: unicast, multicast replicas, clones;
//! - a depth in packets (BMv2's default 64): a copy that finds its queue full is dropped
//!   (tail drop) and counted;
//! - an optional rate in packets per second: a copy's departure time is the later of its
//!   arrival and its predecessor's departure plus 1/rate, fixed when it is enqueued;
//! - the highest priority whose head may leave goes first;
//! - a port whose transmission is busy ([`nevermiss_io::Port::can_block`]: an interface sending
//!   through its qdisc, when tc shaping holds it back) takes nothing more from its queue until
//!   it has sent what it holds, so the queue backs up as BMv2's does behind a blocking send;
//! - egress sees `enq_timestamp` (µs on the switch's clock), `enq_qdepth` (packets ahead of it
//!   when it arrived), `deq_timedelta` (µs it waited) and `deq_qdepth` (packets behind it when
//!   it left), BMv2's meanings and units, and `qid` (the priority of the queue it waited in).
//!
//! Ports without a queue run every packet to completion as before: the only test on that path
//! is whether the switch has queues at all (`Config::queues`, `None` by default), and then
//! whether the packet's port is queued.
//!
//! [`QueueSettings`] are shared with the control plane, which changes depths and rates while
//! the switch runs (`set_depth`, `set_rate`: BMv2's `set_queue_depth`, `set_queue_rate`); the
//! run loop's [`EgressQueues`] picks a change up at its next round (one relaxed load).

use crate::arch::{Deferred, Outputs, QueueMeta};
use crate::run::RunReport;
use crate::worker::Worker;
use nevermiss_io::{Batch, Port, PortError};
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Mutex, PoisonError};

/// BMv2's depth of a queue when none is set (`simple_switch`'s `egress_buffers`, 64 packets).
pub const DEFAULT_DEPTH: usize = 64;

/// How long an otherwise idle run loop sleeps while copies wait in its queues (for their
/// departure time, or for a port whose qdisc holds it back) before it looks again.
pub const RECHECK: std::time::Duration = std::time::Duration::from_micros(20);

/// The most priorities per port (v1model's `priority` is 3 bits wide).
pub const MAX_PRIORITIES: usize = 8;

/// Why queue settings or a change of them (`set_queue_depth`, `set_queue_rate`) were refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum QueueError {
    /// Priorities per port outside `1..=MAX_PRIORITIES`.
    Priorities(usize),
    /// A command named a port without an egress queue.
    NotQueued {
        /// The port named.
        port: u32,
        /// The queued ports, sorted (empty when every port is queued).
        queued: Vec<u32>,
    },
    /// A command named a priority but no port.
    PriorityWithoutPort,
    /// A command named a priority the ports do not have.
    Priority {
        /// The priority named.
        priority: usize,
        /// Priorities per port (at least 1).
        priorities: usize,
    },
}

impl fmt::Display for QueueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QueueError::Priorities(n) => {
                write!(
                    f,
                    "{n} priority queues: from 1 to {MAX_PRIORITIES} per port"
                )
            }
            QueueError::NotQueued { port, queued } => write!(
                f,
                "port {port} has no egress queue (the queued ports are {})",
                queued
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            QueueError::PriorityWithoutPort => f.write_str("a priority needs a port"),
            QueueError::Priority {
                priority,
                priorities,
            } => write!(
                f,
                "priority {priority}: the ports have {priorities} priority queue{} (0 to {})",
                if *priorities == 1 { "" } else { "s" },
                priorities - 1
            ),
        }
    }
}

impl std::error::Error for QueueError {}

/// Which ports have queues, how many priorities each has, and their depths and rates; shared
/// by the run loop and the control plane.
#[derive(Debug)]
pub struct QueueSettings {
    /// Queued ports, sorted; `None`: every port.
    ports: Option<Vec<u32>>,
    priorities: usize,
    limits: Mutex<Limits>,
    /// Bumped by every change of the limits.
    version: AtomicU64,
}

/// A value per (port, priority).
type PerQueue<T> = HashMap<(u32, usize), T>;

#[derive(Clone, Debug)]
struct Limits {
    depth: usize,
    rate_pps: u64,
    /// Per (port, priority): depth and rate set for it.
    depths: PerQueue<usize>,
    rates: PerQueue<u64>,
}

impl QueueSettings {
    /// Queues on `ports` (`None`: every port) with `priorities` priorities each (1 to
    /// [`MAX_PRIORITIES`]), `depth` packets deep and no rate limit.
    pub fn new(
        ports: Option<Vec<u32>>,
        priorities: usize,
        depth: usize,
    ) -> Result<QueueSettings, QueueError> {
        if !(1..=MAX_PRIORITIES).contains(&priorities) {
            return Err(QueueError::Priorities(priorities));
        }
        let ports = ports.map(|mut p| {
            p.sort_unstable();
            p.dedup();
            p
        });
        Ok(QueueSettings {
            ports,
            priorities,
            limits: Mutex::new(Limits {
                depth,
                rate_pps: 0,
                depths: HashMap::new(),
                rates: HashMap::new(),
            }),
            version: AtomicU64::new(0),
        })
    }

    /// Whether copies to `port` wait in a queue.
    #[inline]
    pub fn queued(&self, port: u64) -> bool {
        match &self.ports {
            None => true,
            Some(p) => u32::try_from(port).is_ok_and(|port| p.binary_search(&port).is_ok()),
        }
    }

    /// Priorities per port.
    pub fn priorities(&self) -> usize {
        self.priorities
    }

    /// The queued ports (`None`: every port).
    pub fn ports(&self) -> Option<&[u32]> {
        self.ports.as_deref()
    }

    /// Checks a (port, priority) a command names: the port must be queued, the priority below
    /// [`QueueSettings::priorities`].
    fn check(&self, port: Option<u32>, priority: Option<usize>) -> Result<(), QueueError> {
        if let Some(p) = port {
            if !self.queued(u64::from(p)) {
                return Err(QueueError::NotQueued {
                    port: p,
                    queued: self.ports.clone().unwrap_or_default(),
                });
            }
        }
        if let Some(pri) = priority {
            if port.is_none() {
                return Err(QueueError::PriorityWithoutPort);
            }
            if pri >= self.priorities {
                return Err(QueueError::Priority {
                    priority: pri,
                    priorities: self.priorities,
                });
            }
        }
        Ok(())
    }

    fn change(&self, f: impl FnOnce(&mut Limits)) {
        f(&mut self.limits.lock().unwrap_or_else(PoisonError::into_inner));
        self.version.fetch_add(1, Relaxed);
    }

    /// BMv2's `set_queue_depth`: the depth in packets of every queue (`port` `None`), of a
    /// port's queues (`priority` `None`) or of one. Copies already queued beyond a smaller
    /// depth stay; new ones are dropped until the queue is below it.
    pub fn set_depth(
        &self,
        port: Option<u32>,
        priority: Option<usize>,
        depth: usize,
    ) -> Result<(), QueueError> {
        self.set(port, priority, depth, |l| (&mut l.depth, &mut l.depths))
    }

    /// BMv2's `set_queue_rate`: the rate in packets per second (0: no limit) of every queue,
    /// of a port's or of one, as [`QueueSettings::set_depth`].
    pub fn set_rate(
        &self,
        port: Option<u32>,
        priority: Option<usize>,
        pps: u64,
    ) -> Result<(), QueueError> {
        self.set(port, priority, pps, |l| (&mut l.rate_pps, &mut l.rates))
    }

    /// Sets one limit (`which`: its default and its per-queue values) for every queue, a
    /// port's or one.
    fn set<T: Copy>(
        &self,
        port: Option<u32>,
        priority: Option<usize>,
        v: T,
        which: fn(&mut Limits) -> (&mut T, &mut PerQueue<T>),
    ) -> Result<(), QueueError> {
        self.check(port, priority)?;
        let pris = self.priorities;
        self.change(|l| {
            let (all, each) = which(l);
            match (port, priority) {
                (None, _) => {
                    *all = v;
                    each.clear();
                }
                (Some(p), None) => each.extend((0..pris).map(|pri| ((p, pri), v))),
                (Some(p), Some(pri)) => {
                    each.insert((p, pri), v);
                }
            }
        });
        Ok(())
    }

    /// The depth and rate of queue (`port`, `priority`).
    pub fn limits(&self, port: u32, priority: usize) -> (usize, u64) {
        let l = self.limits.lock().unwrap_or_else(PoisonError::into_inner);
        (
            l.depths.get(&(port, priority)).copied().unwrap_or(l.depth),
            l.rates
                .get(&(port, priority))
                .copied()
                .unwrap_or(l.rate_pps),
        )
    }

    /// The settings as text: the default depth and rate, then each queue set apart from them
    /// (`port P priority Q: depth D, rate R pps`), by port and priority.
    pub fn describe(&self) -> String {
        let l = self.limits.lock().unwrap_or_else(PoisonError::into_inner);
        let rate = |r: u64| match r {
            0 => "no rate limit".to_string(),
            r => format!("rate {r} pps"),
        };
        let ports = match &self.ports {
            None => "every port".to_string(),
            Some(p) => format!(
                "ports {}",
                p.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
            ),
        };
        let mut s = format!(
            "egress queues on {ports}, {} priorit{} each: depth {}, {}",
            self.priorities,
            if self.priorities == 1 { "y" } else { "ies" },
            l.depth,
            rate(l.rate_pps)
        );
        let mut set: Vec<(u32, usize)> = l.depths.keys().chain(l.rates.keys()).copied().collect();
        set.sort_unstable();
        set.dedup();
        for (p, pri) in set {
            let d = l.depths.get(&(p, pri)).copied().unwrap_or(l.depth);
            let r = l.rates.get(&(p, pri)).copied().unwrap_or(l.rate_pps);
            s.push_str(&format!(
                "\nport {p} priority {pri}: depth {d}, {}",
                rate(r)
            ));
        }
        s
    }
}

/// Nanoseconds between departures at `pps` packets per second (0: no limit).
fn gap_ns(pps: u64) -> u64 {
    1_000_000_000u64.checked_div(pps).unwrap_or(0)
}

/// What the queues did, for the statistics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueStats {
    /// Copies enqueued.
    pub enqueued: u64,
    /// Copies dropped because their queue was full.
    pub dropped_full: u64,
    /// Copies dropped because their priority had no queue.
    pub dropped_priority: u64,
    /// Copies dropped when a new pipeline took over (they belonged to the old one).
    pub dropped_handover: u64,
    /// The deepest any queue was.
    pub max_depth: u64,
}

struct Item {
    d: Deferred,
    enq_ns: u64,
    enq_depth: u64,
    send_at: u64,
}

#[derive(Default)]
struct Queue {
    items: VecDeque<Item>,
    depth: usize,
    /// Nanoseconds between departures (0: no limit).
    gap_ns: u64,
    /// The departure time of the last copy enqueued (none yet: the next leaves on arrival).
    last_send: Option<u64>,
}

/// The queues of one run loop's ports.
pub struct EgressQueues {
    settings: std::sync::Arc<QueueSettings>,
    version: u64,
    /// Port → its queues, one per priority.
    ports: HashMap<u32, Vec<Queue>>,
    len: usize,
    /// What the queues did: copies enqueued, dropped (queue full, no queue for the priority, at a
    /// handover) and the deepest queue.
    pub stats: QueueStats,
    scratch: Vec<u32>,
}

impl EgressQueues {
    /// Empty queues under `settings`.
    pub fn new(settings: std::sync::Arc<QueueSettings>) -> EgressQueues {
        EgressQueues {
            version: u64::MAX,
            settings,
            ports: HashMap::new(),
            len: 0,
            stats: QueueStats::default(),
            scratch: Vec::new(),
        }
    }

    /// Copies waiting in all queues.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no copy waits.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Copies waiting for `port`, all priorities.
    pub fn depth(&self, port: u32) -> usize {
        self.ports
            .get(&port)
            .map_or(0, |qs| qs.iter().map(|q| q.items.len()).sum())
    }

    /// Whether copies to `port` wait in a queue.
    pub fn queued(&self, port: u32) -> bool {
        self.settings.queued(u64::from(port))
    }

    /// Takes up a change of the settings (one relaxed load when there is none).
    fn refresh(&mut self) {
        let v = self.settings.version.load(Relaxed);
        if v == self.version {
            return;
        }
        self.version = v;
        for (&port, qs) in &mut self.ports {
            for (pri, q) in qs.iter_mut().enumerate() {
                let (depth, rate) = self.settings.limits(port, pri);
                q.depth = depth;
                q.gap_ns = gap_ns(rate);
            }
        }
    }

    /// Moves the copies `out` holds for queues into them, at `now_ns`; returns how many were
    /// dropped (their queue full, or their priority without a queue).
    pub fn enqueue(&mut self, out: &mut Outputs, now_ns: u64) -> u64 {
        if out.deferred.is_empty() {
            return 0;
        }
        let before = self.stats.dropped_full + self.stats.dropped_priority;
        self.refresh();
        let pris = self.settings.priorities;
        for d in out.deferred.drain(..) {
            let Ok(pri) = usize::try_from(d.priority) else {
                self.stats.dropped_priority += 1;
                continue;
            };
            if pri >= pris {
                self.stats.dropped_priority += 1;
                continue;
            }
            let settings = &self.settings;
            let qs = self.ports.entry(d.port).or_insert_with(|| {
                (0..pris)
                    .map(|p| {
                        let (depth, rate) = settings.limits(d.port, p);
                        Queue {
                            depth,
                            gap_ns: gap_ns(rate),
                            ..Queue::default()
                        }
                    })
                    .collect()
            });
            let q = &mut qs[pri];
            if q.items.len() >= q.depth {
                self.stats.dropped_full += 1;
                continue;
            }
            let send_at = match q.last_send {
                Some(last) if q.gap_ns > 0 => now_ns.max(last.saturating_add(q.gap_ns)),
                _ => now_ns,
            };
            q.last_send = Some(send_at);
            let enq_depth = q.items.len() as u64;
            q.items.push_back(Item {
                d,
                enq_ns: now_ns,
                enq_depth,
                send_at,
            });
            self.len += 1;
            self.stats.enqueued += 1;
            self.stats.max_depth = self.stats.max_depth.max(enq_depth + 1);
        }
        self.stats.dropped_full + self.stats.dropped_priority - before
    }

    /// Takes the next copy `port` may send at `now_ns` (the highest priority whose head's
    /// departure time has come) through egress on `w`; its outputs are in `w.out`. False when
    /// none may leave now.
    pub fn dequeue_one(&mut self, w: &mut Worker, port: u32, now_ns: u64) -> bool {
        let Some(qs) = self.ports.get_mut(&port) else {
            return false;
        };
        let Some((qid, q)) = qs
            .iter_mut()
            .enumerate()
            .rev()
            .find(|(_, q)| q.items.front().is_some_and(|i| i.send_at <= now_ns))
        else {
            return false;
        };
        let Some(item) = q.items.pop_front() else {
            return false;
        };
        self.len -= 1;
        let meta = QueueMeta {
            enq_timestamp: item.enq_ns / 1000,
            enq_qdepth: item.enq_depth,
            deq_timedelta: now_ns.saturating_sub(item.enq_ns) / 1000,
            deq_qdepth: q.items.len() as u64,
            qid: qid as u64,
        };
        w.run_dequeued(item.d.job, meta, now_ns);
        true
    }

    /// The ports with copies waiting.
    pub fn busy_ports(&self) -> impl Iterator<Item = u32> + '_ {
        self.ports
            .iter()
            .filter(|(_, qs)| qs.iter().any(|q| !q.items.is_empty()))
            .map(|(&p, _)| p)
    }

    /// The earliest departure time of any waiting copy (rate-limited queues wait for it).
    pub fn next_departure(&self) -> Option<u64> {
        self.ports
            .values()
            .flat_map(|qs| qs.iter().filter_map(|q| q.items.front().map(|i| i.send_at)))
            .min()
    }

    /// One round of the queues at `now_ns`: every port with copies waiting and nothing left
    /// unsent (`tx[i]` for port `ids[i]` empty) takes up to `batch` copies whose time has
    /// come through egress on `w`, and sends their packets (`flush`); copies the egress
    /// passes make for queues (clones, recirculated packets' copies) join them. Returns the
    /// copies taken.
    #[allow(clippy::too_many_arguments)]
    pub fn service(
        &mut self,
        w: &mut Worker,
        ports: &mut [Box<dyn Port>],
        ids: &[u32],
        tx: &mut [Batch],
        batch: usize,
        now_ns: u64,
        report: &mut RunReport,
    ) -> Result<usize, PortError> {
        // Ports with copies waiting, and queued ports holding what they did not take.
        let settings = self.settings.clone();
        let held = |ti: usize| !tx[ti].is_empty() && settings.queued(u64::from(ids[ti]));
        if self.len == 0 && !(0..tx.len()).any(held) {
            return Ok(0);
        }
        let mut busy = std::mem::take(&mut self.scratch);
        busy.clear();
        busy.extend((0..tx.len()).filter(|&ti| held(ti)).map(|ti| ids[ti]));
        self.refresh();
        busy.extend(self.busy_ports());
        busy.sort_unstable();
        busy.dedup();
        let mut taken = 0;
        for &port in &busy {
            let ti = ids.iter().position(|&i| i == port);
            if let Some(ti) = ti.filter(|&ti| !tx[ti].is_empty()) {
                // What the port did not take last time goes first; while it holds some, its
                // queue waits (backs up).
                flush(Some(self), ports[ti].as_mut(), &mut tx[ti])?;
                if !tx[ti].is_empty() {
                    continue;
                }
            }
            for _ in 0..batch {
                // A full batch waits for the next round rather than be flushed half-taken.
                if ti.is_some_and(|ti| tx[ti].is_full()) || !self.dequeue_one(w, port, now_ns) {
                    break;
                }
                taken += 1;
                if w.out.is_empty() && !w.out.has_deferred() {
                    // Egress dropped it.
                    report.dropped += 1;
                    if let Some(ti) = ti {
                        ports[ti].stats().add_dropped(1);
                    }
                }
                let q = crate::run::queue_outputs(
                    &w.out,
                    ids,
                    tx,
                    now_ns,
                    &mut report.unknown_ports,
                    |i, b| flush(Some(self), ports[i].as_mut(), b),
                );
                report.packets_out += q?;
                let mut out = std::mem::take(&mut w.out);
                report.dropped += self.enqueue(&mut out, now_ns);
                w.out = out;
            }
            if let Some(ti) = ti {
                if !tx[ti].is_empty() {
                    flush(Some(self), ports[ti].as_mut(), &mut tx[ti])?;
                }
            }
        }
        self.scratch = busy;
        Ok(taken)
    }

    /// Drops every waiting copy (a new pipeline took over: their frames are the old one's).
    pub fn clear(&mut self) {
        let n = self.len as u64;
        for qs in self.ports.values_mut() {
            for q in qs {
                q.items.clear();
            }
        }
        self.len = 0;
        self.stats.dropped_handover += n;
    }
}

/// Keeps a run loop's queues in step with the switch it runs (`w`; at the start and at every
/// handover): made when the switch has queues, emptied of the old pipeline's copies (counted as
/// dropped) when another takes over.
pub(crate) fn follow(q: &mut Option<EgressQueues>, w: Option<&Worker>, report: &mut RunReport) {
    if let Some(q) = q.as_mut() {
        let before = q.stats.dropped_handover;
        q.clear();
        report.dropped += q.stats.dropped_handover - before;
    }
    let settings = w.and_then(|w| w.sw.config().queues.clone());
    match (q.as_ref(), settings) {
        (None, Some(s)) => *q = Some(EgressQueues::new(s)),
        (Some(_), None) => *q = None,
        _ => {}
    }
}

/// Transmits `b` on `port`, as the run loop's flush does (what the port does not take is
/// dropped and counted), except that a queued port that may block
/// ([`nevermiss_io::Port::can_block`]) keeps what it did not take, in order, for the next
/// round: its queue waits behind it.
pub(crate) fn flush(
    q: Option<&EgressQueues>,
    port: &mut dyn Port,
    b: &mut Batch,
) -> Result<(), PortError> {
    let keep = q.is_some_and(|q| q.queued(port.id())) && port.can_block();
    if !keep {
        return crate::run::flush(port, b);
    }
    let taken = port.tx(b.as_slice())?;
    let mut i = 0;
    b.retain(|_| {
        i += 1;
        i > taken
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_check_ports_and_priorities() {
        let s = QueueSettings::new(Some(vec![3, 1]), 2, DEFAULT_DEPTH).unwrap();
        assert!(s.queued(1) && s.queued(3) && !s.queued(2) && !s.queued(1 << 40));
        assert_eq!(s.limits(1, 0), (64, 0));
        s.set_depth(Some(1), None, 10).unwrap();
        s.set_rate(Some(1), Some(1), 100).unwrap();
        assert_eq!(s.limits(1, 0), (10, 0));
        assert_eq!(s.limits(1, 1), (10, 100));
        assert_eq!(s.limits(3, 1), (64, 0));
        let e = s.set_depth(Some(2), None, 5).unwrap_err().to_string();
        assert!(e.contains("port 2 has no egress queue"), "{e}");
        let e = s.set_rate(Some(1), Some(2), 5).unwrap_err().to_string();
        assert!(e.contains("priority 2") && e.contains("0 to 1"), "{e}");
        s.set_depth(None, None, 7).unwrap();
        assert_eq!(s.limits(1, 0), (7, 0));
        assert!(QueueSettings::new(None, 0, 1).is_err());
        assert!(QueueSettings::new(None, 9, 1).is_err());
    }
}
