//! Per-table statistics as striped counters: each thread adds to its own cache line, so counting
//! costs no cross-core traffic; [`Stats::snapshot`] sums the stripes.
//!
//! The first [`STRIPES`] threads that count (per process) each *own* a stripe until they exit: an
//! owned stripe has exactly one writer, so its counters are bumped with a plain load and store
//! (no locked read-modify-write, which would cost ~20 cycles and drain the store buffer). Why
//! that is exact: the counters are atomics (a snapshot reads them without tearing), and a stripe
//! changes owner only through [`OWNED`]: the old owner clears its bit with a release RMW when its
//! thread ends (after its last store), the new owner sets it with an acquire CAS, so the new
//! owner's first load happens after, and sees, the old owner's last store. Threads beyond the
//! first [`STRIPES`] share one extra stripe and use `fetch_add` there.

use std::cell::Cell;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering::*};

/// Stripes of the statistics counters owned by one thread each, and of the exact engine's free
/// lists.
pub(crate) const STRIPES: usize = 16;
/// The stripe shared (with `fetch_add`) by threads that found every owned stripe taken.
const SHARED: usize = STRIPES;

#[derive(Clone, Copy)]
pub(crate) enum Counter {
    Hits = 0,
    Misses,
    Inserts,
    InsertsFull,
    Updates,
    Expirations,
    Notifications,
    /// Live entries other than data-plane inserts (control-plane inserts +1, removals -1, as
    /// wrapping adds); not part of [`TableStats`]. Live entries = `Live` + `Inserts`, so a
    /// data-plane insert costs one counter update, not two.
    Live,
}
const N: usize = 8;

impl Counter {
    /// `Hits` or `Misses`.
    #[inline(always)]
    pub fn hit_or_miss(hit: bool) -> Counter {
        if hit {
            Counter::Hits
        } else {
            Counter::Misses
        }
    }
}

#[repr(align(128))]
#[derive(Default)]
struct Stripe([AtomicU64; N]);

pub(crate) struct Stats {
    /// `STRIPES` owned stripes, then the shared one (inside the table, so that a counter's
    /// address is the table's plus a constant and the stripe's offset).
    stripes: [Stripe; STRIPES + 1],
}

/// Bit `i`: stripe `i` has an owner thread.
static OWNED: AtomicU32 = AtomicU32::new(0);
/// Round-robin free-list stripes for threads without an owned stripe.
static NEXT_SHARED: AtomicUsize = AtomicUsize::new(0);
/// `MINE` before the thread's first use (negative, as a shared stripe).
const UNSET: i32 = -1;
/// `MINE`'s flag for a thread without an owned stripe.
const NOT_OWNED: i32 = i32::MIN;

thread_local! {
    /// This thread's stripes: bits 0..4 the owned statistics stripe, bits 8..12 the free-list
    /// stripe, [`NOT_OWNED`] set for a thread without an owned stripe; [`UNSET`] before the
    /// first use. No destructor, so it is readable during every other thread-local's destructor.
    static MINE: Cell<i32> = const { Cell::new(UNSET) };
    /// Gives the owned stripe back when the thread ends.
    static OWNER: Owner = const { Owner(Cell::new(u32::MAX)) };
}

struct Owner(Cell<u32>);

impl Drop for Owner {
    fn drop(&mut self) {
        let i = self.0.get();
        if (i as usize) < STRIPES {
            // Counting after this point (other thread-locals' destructors) goes to the shared
            // stripe, before the stripe is handed over.
            let _ = MINE.try_with(|m| m.set(NOT_OWNED | (i << 8) as i32));
            OWNED.fetch_and(!(1 << i), Release);
        }
    }
}

/// Claims a stripe for this thread (first use).
#[cold]
#[inline(never)]
fn claim() -> i32 {
    let mut owned = OWNED.load(Relaxed);
    let mine = loop {
        let free = !owned & ((1u32 << STRIPES) - 1);
        if free == 0 {
            let fl = NEXT_SHARED.fetch_add(1, Relaxed) % STRIPES;
            break NOT_OWNED | (fl << 8) as i32;
        }
        let i = free.trailing_zeros();
        match OWNED.compare_exchange_weak(owned, owned | 1 << i, Acquire, Relaxed) {
            Ok(_) => {
                if OWNER.try_with(|o| o.0.set(i)).is_err() {
                    // Thread-locals are being destroyed: nothing would give the stripe back.
                    OWNED.fetch_and(!(1 << i), Release);
                    break NOT_OWNED | (i << 8) as i32;
                }
                break (i | i << 8) as i32;
            }
            Err(x) => owned = x,
        }
    };
    let _ = MINE.try_with(|m| m.set(mine));
    mine
}

#[inline(always)]
fn mine() -> i32 {
    MINE.try_with(Cell::get).unwrap_or(UNSET)
}

/// The statistics stripe this thread owns (`< STRIPES`), claiming one on first use; `None` for
/// a thread that shares the extra stripe. An owned stripe has one writer, which also makes the
/// thread the only writer of a table's hazard word of that index ([`crate::hazard`]).
#[inline(always)]
pub(crate) fn owned_stripe() -> Option<usize> {
    let mut m = mine();
    if m == UNSET {
        m = claim();
    }
    (m >= 0).then_some((m & 15) as usize)
}

/// This thread's free-list stripe (`< STRIPES`).
#[inline(always)]
pub(crate) fn stripe() -> usize {
    let mut m = mine();
    if m == UNSET {
        m = claim();
    }
    ((m >> 8) as usize) % STRIPES
}

impl Stats {
    pub fn new() -> Stats {
        Stats {
            stripes: Default::default(),
        }
    }

    #[inline(always)]
    pub fn add(&self, c: Counter, n: u64) {
        let m = mine();
        if m >= 0 {
            // This thread's own stripe: the only writer (module documentation).
            let w = &self.stripes[(m & 15) as usize].0[c as usize];
            w.store(w.load(Relaxed).wrapping_add(n), Relaxed);
        } else {
            self.add_shared(c, n);
        }
    }

    /// [`Stats::add`] by the owner of stripe `i` ([`owned_stripe`]), which it already knows.
    #[inline(always)]
    pub fn add_owned(&self, i: usize, c: Counter, n: u64) {
        if let Some(s) = self.stripes.get(i) {
            let w = &s.0[c as usize];
            w.store(w.load(Relaxed).wrapping_add(n), Relaxed);
        }
    }

    /// [`Stats::add`] of a thread without an owned stripe (claims one on first use).
    #[cold]
    #[inline(never)]
    fn add_shared(&self, c: Counter, n: u64) {
        let mut m = mine();
        if m == UNSET {
            m = claim();
        }
        if m >= 0 {
            let w = &self.stripes[(m & 15) as usize].0[c as usize];
            w.store(w.load(Relaxed).wrapping_add(n), Relaxed);
        } else {
            self.stripes[SHARED].0[c as usize].fetch_add(n, Relaxed);
        }
    }

    fn sum(&self, c: Counter) -> u64 {
        self.stripes
            .iter()
            .fold(0u64, |a, s| a.wrapping_add(s.0[c as usize].load(Relaxed)))
    }

    /// Current number of live entries (sum of the stripes' `Live` and `Inserts`).
    pub fn live(&self) -> usize {
        let sum = self.stripes.iter().fold(0u64, |a, s| {
            a.wrapping_add(s.0[Counter::Live as usize].load(Relaxed))
                .wrapping_add(s.0[Counter::Inserts as usize].load(Relaxed))
        });
        (sum as i64).max(0) as usize
    }

    pub fn snapshot(&self) -> TableStats {
        TableStats {
            hits: self.sum(Counter::Hits),
            misses: self.sum(Counter::Misses),
            inserts: self.sum(Counter::Inserts),
            inserts_full: self.sum(Counter::InsertsFull),
            updates: self.sum(Counter::Updates),
            expirations: self.sum(Counter::Expirations),
            notifications: self.sum(Counter::Notifications),
        }
    }
}

/// Counters of one table since its creation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TableStats {
    /// Lookups that matched an entry.
    pub hits: u64,
    /// Lookups that matched nothing (the default action ran).
    pub misses: u64,
    /// Entries added by the data plane (`add_on_miss` returning `Added`).
    pub inserts: u64,
    /// Data-plane adds refused because the table was full.
    pub inserts_full: u64,
    /// Data-plane parameter updates (`update_params`).
    pub updates: u64,
    /// Entries removed by AUTO_DELETE expiry.
    pub expirations: u64,
    /// Idle notifications reported for NOTIFY_CONTROL entries.
    pub notifications: u64,
}
