//! Per-table statistics as striped atomic counters: each thread adds to its own cache line, so
//! counting costs no cross-core traffic; [`Stats::snapshot`] sums the stripes.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};

/// Stripes of the statistics counters and of the exact engine's free lists.
pub(crate) const STRIPES: usize = 16;

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

#[repr(align(128))]
#[derive(Default)]
struct Stripe([AtomicU64; N]);

pub(crate) struct Stats {
    stripes: Box<[Stripe]>,
}

static NEXT_STRIPE: AtomicUsize = AtomicUsize::new(0);
thread_local! {
    static STRIPE: usize = NEXT_STRIPE.fetch_add(1, Relaxed) % STRIPES;
}

/// This thread's stripe (threads get stripes round-robin).
#[inline(always)]
pub(crate) fn stripe() -> usize {
    STRIPE.with(|s| *s)
}

impl Stats {
    pub fn new() -> Stats {
        Stats {
            stripes: (0..STRIPES).map(|_| Stripe::default()).collect(),
        }
    }

    #[inline]
    pub fn add(&self, c: Counter, n: u64) {
        if n != 0 {
            let s = stripe();
            self.stripes[s].0[c as usize].fetch_add(n, Relaxed);
        }
    }

    fn sum(&self, c: Counter) -> u64 {
        self.stripes
            .iter()
            .map(|s| s.0[c as usize].load(Relaxed))
            .sum()
    }

    /// Current number of live entries (sum of the stripes' `Live` and `Inserts`).
    pub fn live(&self) -> usize {
        let sum = self.stripes.iter().fold(0u64, |a, s| {
            a.wrapping_add(s.0[Counter::Live as usize].load(Relaxed))
                .wrapping_add(s.0[Counter::Inserts as usize].load(Relaxed))
        });
        (sum as i64).max(0) as usize
    }

    /// Bytes of the stripes.
    pub fn bytes(&self) -> usize {
        std::mem::size_of_val(&*self.stripes)
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
