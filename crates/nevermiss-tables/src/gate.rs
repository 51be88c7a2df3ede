//! A quiescence gate: the control plane can close it to wait until no worker is inside a batch
//! of packets, change several tables while every worker waits at its quiescent point, and open
//! it again. A packet processed inside a batch therefore sees the tables either before or after
//! everything done while the gate was closed, never part of it (P4Runtime's DATAPLANE_ATOMIC:
//! "packets see the whole batch or none of it").
//!
//! This is the barrier of run-to-completion software switches (VPP's worker barrier,
//! `vlib_worker_thread_barrier_sync`): workers pay two stores and one load per batch on lines of
//! their own; the control plane pays the wait for the batches in flight to finish.
//!
//! Protocol (Dekker style, a sequentially consistent fence between each side's store and load):
//! a worker entering a batch marks its slot busy, fence, *then* reads `closed`; if it is closed
//! it clears its slot and waits for it to open before trying again. A closer sets `closed`,
//! fence, *then* reads every slot and waits until each is idle. The two fences are ordered one
//! way or the other, so either the closer sees the worker's mark (and waits for it to leave)
//! or the worker sees `closed` (and backs off), so when [`Gate::close`] returns no worker is inside a batch, and
//! none enters until the [`Closed`] guard is dropped. Leaving is a release store, opening a
//! release store, so everything a batch did happens before the close returns, and everything
//! done while closed happens before the next batch. Checked by the loom models in
//! `tests/loom.rs` (`gate_*`).
//!
//! **The workers' fence is the closer's.** Where the kernel has `membarrier(2)` (Linux ≥ 4.14),
//! the worker's fence is only a compiler fence and the closer's is a process-wide barrier that
//! runs a full fence on every worker thread ([`crate::sync::asym`]): the same ordering, paid
//! by the rare side (a system call and an IPI per running worker, a few µs per close) instead of
//! a `lock`ed instruction per batch that waits for the worker's store buffer to drain
//! (measured with one packet per batch, as in latency mode: 1–2 of the forwarder's ~100 TSC
//! ticks; nothing measurable at 32 packets per batch).
//! [`Gate::symmetric`] keeps both fences; loom checks that version, and the asymmetric one by
//! the argument above: a worker whose mark was stored before the barrier ran on its core is
//! seen by the closer's loads after it, and one whose mark came after loads `closed` after a
//! full fence that followed the closer's store.
//!
//! Workers register for a slot of their own ([`Gate::register`]); when the slots run out they
//! share slot 0, which counts entries instead of flagging them (a read-modify-write per batch).

use crate::sync::{asym, fence, lock_unit, AtomicU64, Mutex, Ordering::*};
use std::sync::atomic::compiler_fence;
use std::time::{Duration, Instant};

/// A worker's slot in a [`Gate`], from [`Gate::register`].
#[derive(Debug, PartialEq, Eq)]
pub struct Ticket(usize);

#[repr(align(128))]
struct Slot {
    /// Exclusive slots: 1 inside a batch, 0 outside. Slot 0: the number of sharers inside.
    busy: AtomicU64,
    /// Exclusive slots: whether a worker owns it.
    owned: AtomicU64,
}

/// The gate (see the module documentation). `Send + Sync`.
pub struct Gate {
    closed: AtomicU64,
    slots: Box<[Slot]>,
    /// One closer at a time.
    closer: Mutex<()>,
    /// The workers' fence is a compiler fence and the closer's a `membarrier` (module docs).
    asymmetric: bool,
}

/// Why the gate could not be closed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GateTimeout;

impl std::fmt::Display for GateTimeout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the data plane did not reach a quiescent point in time")
    }
}

impl std::error::Error for GateTimeout {}

/// The gate, closed: no worker is inside a batch until this is dropped.
pub struct Closed<'g> {
    gate: &'g Gate,
    _one: crate::sync::MutexGuardOf<'g>,
}

impl Drop for Closed<'_> {
    fn drop(&mut self) {
        self.gate.closed.store(0, Release);
    }
}

impl Gate {
    /// A gate with `slots` slots (at least 2: slot 0 is the shared one), with asymmetric fences
    /// where the kernel offers them (module docs).
    pub fn new(slots: usize) -> Gate {
        let asymmetric = asym::register();
        Gate {
            asymmetric,
            ..Gate::symmetric(slots)
        }
    }

    /// A gate whose workers and closer both fence (the protocol loom checks).
    pub fn symmetric(slots: usize) -> Gate {
        Gate {
            closed: AtomicU64::new(0),
            slots: (0..slots.max(2))
                .map(|_| Slot {
                    busy: AtomicU64::new(0),
                    owned: AtomicU64::new(0),
                })
                .collect(),
            closer: Mutex::new(()),
            asymmetric: false,
        }
    }

    /// Whether workers enter with a compiler fence only (module docs).
    pub fn is_asymmetric(&self) -> bool {
        self.asymmetric
    }

    /// A slot for one worker: its own if one is free, else the shared slot 0.
    pub fn register(&self) -> Ticket {
        for (i, s) in self.slots.iter().enumerate().skip(1) {
            if s.owned.load(Relaxed) == 0 && s.owned.compare_exchange(0, 1, AcqRel, Relaxed).is_ok()
            {
                return Ticket(i);
            }
        }
        Ticket(0)
    }

    /// Gives a slot back (the worker must be outside a batch).
    pub fn unregister(&self, t: Ticket) {
        if t.0 != 0 {
            if let Some(s) = self.slots.get(t.0) {
                s.owned.store(0, Release);
            }
        }
    }

    /// Enters a batch: waits while the gate is closed. Pair with [`Gate::leave`].
    #[inline]
    pub fn enter(&self, t: &Ticket) {
        let Some(s) = self.slots.get(t.0) else { return };
        let mut backoff = crate::sync::Backoff::new();
        loop {
            if t.0 == 0 {
                s.busy.fetch_add(1, Relaxed);
            } else {
                s.busy.store(1, Relaxed);
            }
            if self.asymmetric {
                compiler_fence(SeqCst);
            } else {
                fence(SeqCst);
            }
            if self.closed.load(Acquire) == 0 {
                return;
            }
            self.leave(t);
            while self.closed.load(Acquire) != 0 {
                backoff.snooze();
            }
        }
    }

    /// Leaves a batch.
    #[inline]
    pub fn leave(&self, t: &Ticket) {
        let Some(s) = self.slots.get(t.0) else { return };
        if t.0 == 0 {
            s.busy.fetch_sub(1, Release);
        } else {
            s.busy.store(0, Release);
        }
    }

    /// Closes the gate: returns once no worker is inside a batch (workers then wait at their
    /// next [`Gate::enter`] until the guard is dropped). Gives up, reopening the gate, if some
    /// worker stays inside a batch for longer than `timeout` (or, with asymmetric fences, if
    /// the kernel refused the barrier it agreed to at registration).
    pub fn close(&self, timeout: Duration) -> Result<Closed<'_>, GateTimeout> {
        let one = lock_unit(&self.closer);
        self.closed.store(1, Relaxed);
        if self.asymmetric {
            if !asym::heavy() {
                self.closed.store(0, Release);
                return Err(GateTimeout);
            }
        } else {
            fence(SeqCst);
        }
        let start = Instant::now();
        let mut backoff = crate::sync::Backoff::new();
        for s in self.slots.iter() {
            while s.busy.load(Acquire) != 0 {
                if start.elapsed() > timeout {
                    self.closed.store(0, Release);
                    return Err(GateTimeout);
                }
                backoff.snooze();
            }
        }
        Ok(Closed {
            gate: self,
            _one: one,
        })
    }

    /// Whether the gate is closed now (for tests and statistics).
    pub fn is_closed(&self) -> bool {
        self.closed.load(Acquire) != 0
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, AtomicU64 as StdU64};
    use std::sync::Arc;

    #[test]
    fn slots_are_own_then_shared() {
        let g = Gate::new(3);
        let a = g.register();
        let b = g.register();
        let c = g.register();
        assert_eq!((a.0, b.0, c.0), (1, 2, 0));
        g.unregister(a);
        assert_eq!(g.register().0, 1);
    }

    /// A worker stuck inside a batch makes `close` give up (and reopen) instead of hanging.
    #[test]
    fn close_times_out_while_a_batch_runs() {
        let g = Gate::new(2);
        let t = g.register();
        g.enter(&t);
        assert_eq!(g.close(Duration::from_millis(20)).err(), Some(GateTimeout));
        assert!(!g.is_closed());
        g.leave(&t);
        let c = g
            .close(Duration::from_millis(20))
            .expect("closes when idle");
        assert!(g.is_closed());
        drop(c);
        assert!(!g.is_closed());
    }

    /// This kernel (Linux ≥ 4.14) gives the gate its asymmetric fences.
    #[cfg(target_os = "linux")]
    #[test]
    fn linux_gates_are_asymmetric() {
        assert!(Gate::new(2).is_asymmetric());
        assert!(!Gate::symmetric(2).is_asymmetric());
    }

    #[test]
    fn batches_never_see_half_an_update() {
        never_half_an_update(Gate::new(4));
    }

    #[test]
    fn batches_never_see_half_an_update_symmetric() {
        never_half_an_update(Gate::symmetric(4));
    }

    /// Stress: two workers run batches that read a pair of values while a closer rewrites the
    /// pair under the closed gate many times; no batch ever sees a mixed pair.
    fn never_half_an_update(g: Gate) {
        let g = Arc::new(g);
        let pair = Arc::new([StdU64::new(0), StdU64::new(0)]);
        let stop = Arc::new(AtomicBool::new(false));
        let workers: Vec<_> = (0..2)
            .map(|_| {
                let (g, pair, stop) = (g.clone(), pair.clone(), stop.clone());
                std::thread::spawn(move || {
                    let t = g.register();
                    let mut batches = 0u64;
                    while !stop.load(Relaxed) {
                        g.enter(&t);
                        let a = pair[0].load(Relaxed);
                        std::hint::spin_loop();
                        let b = pair[1].load(Relaxed);
                        g.leave(&t);
                        assert_eq!(a, b, "a batch saw half an update");
                        batches += 1;
                    }
                    g.unregister(t);
                    batches
                })
            })
            .collect();
        // Keep closing until both workers have run batches between the closes.
        let mut i = 0u64;
        while i < 2000 || pair[0].load(Relaxed) == 0 {
            i += 1;
            let c = g.close(Duration::from_secs(10)).expect("closes");
            pair[0].store(i, Relaxed);
            pair[1].store(i, Relaxed);
            drop(c);
            if i > 2000 {
                std::thread::yield_now();
            }
        }
        std::thread::sleep(Duration::from_millis(20));
        stop.store(true, Relaxed);
        for w in workers {
            assert!(w.join().expect("worker") > 0);
        }
    }
}
