//! Timer wheel for idle timeouts (Varghese & Lauck, SOSP'87, scheme 4 with lazy re-arming).
//!
//! An entry sits in the slot of tick `ceil(sched / tick_ns)`, where `sched <= deadline`. The data
//! plane re-arms a timer by storing a later deadline into the entry's cell without touching the
//! wheel; when the entry's slot comes due, [`crate::Table::expire`] sees the later deadline and moves
//! the entry. Only a deadline that moves *earlier* than `sched` (or an entry not in the wheel)
//! needs the wheel lock. Lists are intrusive (index arrays), so linking never allocates.

use crate::cell::{alloc_slice, NEVER};
use crate::error::TableError;
use crate::sync::{AtomicU64, Ordering::SeqCst};

pub(crate) const NIL: u32 = u32::MAX;

/// Default tick: 1 ms.
pub const DEFAULT_TICK_NS: u64 = 1_000_000;
/// Slots in the wheel (one revolution = 16.384 s at 1 ms ticks).
const SLOTS: usize = 1 << 14;

pub(crate) struct Wheel {
    pub tick_ns: u64,
    heads: Box<[u32]>,
    next: Box<[u32]>,
    prev: Box<[u32]>,
    /// Slot index an entry is linked in, or NIL.
    at: Box<[u32]>,
    /// Ticks up to and including this one have been processed.
    pub last_tick: u64,
}

impl Wheel {
    pub fn new(entries: usize, tick_ns: u64) -> Result<Wheel, TableError> {
        Ok(Wheel {
            tick_ns: tick_ns.max(1),
            heads: alloc_slice(SLOTS, || NIL)?,
            next: alloc_slice(entries, || NIL)?,
            prev: alloc_slice(entries, || NIL)?,
            at: alloc_slice(entries, || NIL)?,
            last_tick: 0,
        })
    }

    /// Bytes of the wheel's arrays.
    pub fn bytes(&self) -> usize {
        4 * (self.heads.len() + self.next.len() + self.prev.len() + self.at.len())
    }

    pub fn slots() -> usize {
        SLOTS
    }

    pub fn unlink(&mut self, s: u32) {
        let si = s as usize;
        let w = self.at[si];
        if w == NIL {
            return;
        }
        let (p, n) = (self.prev[si], self.next[si]);
        if p == NIL {
            self.heads[w as usize] = n;
        } else {
            self.next[p as usize] = n;
        }
        if n != NIL {
            self.prev[n as usize] = p;
        }
        self.at[si] = NIL;
        self.next[si] = NIL;
        self.prev[si] = NIL;
    }

    /// (Re)places entry `s` for `deadline` and records it in `sched`. `NEVER` just unlinks.
    pub fn link(&mut self, s: u32, deadline: u64, sched: &AtomicU64) {
        self.unlink(s);
        if deadline == NEVER {
            sched.store(NEVER, SeqCst);
            return;
        }
        let tick = deadline.div_ceil(self.tick_ns).max(self.last_tick + 1);
        let w = (tick as usize) & (SLOTS - 1);
        let si = s as usize;
        let h = self.heads[w];
        self.next[si] = h;
        self.prev[si] = NIL;
        if h != NIL {
            self.prev[h as usize] = s;
        }
        self.heads[w] = s;
        self.at[si] = w as u32;
        sched.store(deadline, SeqCst);
    }

    /// Detaches the whole list of wheel slot `w`; walk it with [`Wheel::take_next`].
    pub fn detach(&mut self, w: usize) -> u32 {
        std::mem::replace(&mut self.heads[w], NIL)
    }

    /// Successor of `s` in a detached list; marks `s` as not in the wheel.
    pub fn take_next(&mut self, s: u32) -> u32 {
        let si = s as usize;
        let n = self.next[si];
        self.next[si] = NIL;
        self.prev[si] = NIL;
        self.at[si] = NIL;
        n
    }
}
