//! The pipeline a set of run loops runs, replaced while they run: a control plane that commits
//! another program (P4Runtime `SetForwardingPipelineConfig`) hands the new [`Switch`] over, and
//! each loop picks it up at its quiescent point between batches — its ports stay open, nothing
//! restarts. [`Handover::replace`] returns only when every loop has acknowledged the new
//! switch, so a packet a loop reads after that runs on the new program with its new state
//! (P4Runtime §"SetForwardingPipelineConfig": the config is in force when the RPC returns).
//!
//! Cost on the data plane: [`Member::changed`], one relaxed load per batch; the lock is taken
//! only at a handover.

use crate::state::Switch;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// The switch the loops run and who runs which.
pub struct Handover {
    /// The epoch of `State::current`, read by the loops without the lock.
    epoch: AtomicU64,
    state: Mutex<State>,
    acked: Condvar,
}

struct State {
    current: Option<Arc<Switch>>,
    epoch: u64,
    /// Per member slot: the epoch its loop runs (`None`: a free slot).
    members: Vec<Option<u64>>,
}

/// A loop that did not pick up a new switch in time (it is stuck in a port's transmit, or
/// not scheduled at all).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HandoverTimeout {
    /// Loops that had not acknowledged.
    pub waiting: usize,
}

impl std::fmt::Display for HandoverTimeout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} packet loop(s) did not take the new pipeline in time",
            self.waiting
        )
    }
}

impl Handover {
    /// A handover starting with `sw` (`None`: no pipeline yet; the loops drop what they read).
    pub fn new(sw: Option<Arc<Switch>>) -> Arc<Handover> {
        Arc::new(Handover {
            epoch: AtomicU64::new(0),
            state: Mutex::new(State {
                current: sw,
                epoch: 0,
                members: Vec::new(),
            }),
            acked: Condvar::new(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The current switch.
    pub fn current(&self) -> Option<Arc<Switch>> {
        self.lock().current.clone()
    }

    /// Loops registered now.
    pub fn members(&self) -> usize {
        self.lock().members.iter().filter(|m| m.is_some()).count()
    }

    /// Makes `sw` current and waits until every registered loop runs it (at most `timeout`);
    /// returns how long that took. A loop that joins meanwhile starts on `sw`.
    pub fn replace(
        &self,
        sw: Option<Arc<Switch>>,
        timeout: Duration,
    ) -> Result<Duration, HandoverTimeout> {
        let start = Instant::now();
        let mut st = self.lock();
        st.current = sw;
        st.epoch += 1;
        let epoch = st.epoch;
        self.epoch.store(epoch, Ordering::Release);
        loop {
            let waiting = st
                .members
                .iter()
                .filter(|m| m.is_some_and(|e| e != epoch))
                .count();
            if waiting == 0 {
                return Ok(start.elapsed());
            }
            let left = timeout.saturating_sub(start.elapsed());
            if left.is_zero() {
                return Err(HandoverTimeout { waiting });
            }
            st = self
                .acked
                .wait_timeout(st, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// Registers a loop; it runs the current switch ([`Member::switch`]).
    pub fn join(self: &Arc<Handover>) -> Member {
        let mut st = self.lock();
        let epoch = st.epoch;
        let slot = match st.members.iter().position(Option::is_none) {
            Some(i) => {
                st.members[i] = Some(epoch);
                i
            }
            None => {
                st.members.push(Some(epoch));
                st.members.len() - 1
            }
        };
        Member {
            h: self.clone(),
            slot,
            epoch,
            switch: st.current.clone(),
        }
    }
}

/// One loop's membership: the switch it runs and the epoch of it. Leaving (drop) never holds
/// up a handover.
pub struct Member {
    h: Arc<Handover>,
    slot: usize,
    epoch: u64,
    switch: Option<Arc<Switch>>,
}

impl Member {
    /// Whether another switch was handed over since this loop took its own: one relaxed load
    /// (call it between batches).
    #[inline]
    pub fn changed(&self) -> bool {
        self.h.epoch.load(Ordering::Relaxed) != self.epoch
    }

    /// The switch this loop runs.
    pub fn switch(&self) -> Option<&Arc<Switch>> {
        self.switch.as_ref()
    }

    /// Takes the current switch (after [`Member::changed`]) and acknowledges it: once every
    /// loop has, [`Handover::replace`] returns. Call it at the quiescent point, with nothing
    /// of the old switch's left to send, and run the next packet on the result.
    pub fn take(&mut self) -> Option<Arc<Switch>> {
        let mut st = self.h.lock();
        self.epoch = st.epoch;
        self.switch = st.current.clone();
        st.members[self.slot] = Some(self.epoch);
        drop(st);
        self.h.acked.notify_all();
        self.switch.clone()
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        let mut st = self.h.lock();
        st.members[self.slot] = None;
        drop(st);
        self.h.acked.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn switch() -> Arc<Switch> {
        let src = "#include <core.p4>\n#include <v1model.p4>\n\
            struct H {} struct M {}\n\
            parser P(packet_in p, out H h, inout M m, inout standard_metadata_t s) { state start { transition accept; } }\n\
            control C(inout H h, inout M m) { apply {} }\n\
            control I(inout H h, inout M m, inout standard_metadata_t s) { apply {} }\n\
            control E(inout H h, inout M m, inout standard_metadata_t s) { apply {} }\n\
            control D(packet_out p, in H h) { apply {} }\n\
            V1Switch(P(), C(), I(), E(), C(), D()) main;\n";
        let c = p4_front::driver::compile_str("p.p4", src, &Default::default())
            .unwrap_or_else(|f| panic!("{}", f.render()));
        let prog = p4_ir::lower(&c).unwrap();
        Arc::new(Switch::new(prog, crate::Config::default()).unwrap())
    }

    #[test]
    fn replace_waits_for_every_member_and_not_for_those_gone() {
        let a = switch();
        let b = switch();
        let h = Handover::new(Some(a.clone()));
        assert!(
            h.replace(Some(a.clone()), Duration::ZERO).is_ok(),
            "no members"
        );
        let mut m1 = h.join();
        let m2 = h.join();
        assert!(!m1.changed());
        // Nobody picks b up: the handover times out, naming both.
        let e = h.replace(Some(b.clone()), Duration::from_millis(20));
        assert_eq!(e, Err(HandoverTimeout { waiting: 2 }));
        assert!(m1.changed() && m2.changed());
        let got = m1.take();
        assert!(got.is_some_and(|s| Arc::ptr_eq(&s, &b)));
        drop(m2);
        // A member that takes it on another thread while replace waits.
        let h2 = h.clone();
        let t = std::thread::spawn(move || {
            while !m1.changed() {
                std::thread::yield_now();
            }
            m1.take()
        });
        assert!(h2.replace(Some(a.clone()), Duration::from_secs(10)).is_ok());
        assert!(t.join().unwrap().is_some_and(|s| Arc::ptr_eq(&s, &a)));
        // A late joiner starts on the current one.
        let m3 = h.join();
        assert!(m3.switch().is_some_and(|s| Arc::ptr_eq(s, &a)) && !m3.changed());
    }
}
