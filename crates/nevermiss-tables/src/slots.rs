//! The slot allocator of the exact engines (the cuckoo hash of [`crate::exact`] and the direct
//! array of [`crate::direct`]): which of the table's entry cells are free.
//!
//! **16 striped free lists** (Treiber stacks with an ABA counter in the head word, each on its own
//! cache line; a thread uses the stripe of its statistics), then a bump pointer over never-used
//! slots taken 64 at a time. A thread touches only its own stripe's head on the common path, so
//! inserts on different cores share no written cache line here; a slot freed on one stripe is
//! found from every other one. Slots are reused at once: the generation checks of the engines
//! make reuse safe without epochs or grace periods.
//!
//! **Frees in flight.** A removal takes its entry out of the index before its slot reaches a
//! free list (in between: the rest of the index protocol, the wheel's lock, a preemption), so
//! an allocation that only looked at the lists could report the table full while a slot is on
//! its way back — a spurious `Full` at 100 % fill, e.g. when the only expired entry left is the
//! one `expire` or another insert's sweep is removing. So a removal announces its free
//! ([`Slots::freeing`], before it kills the entry) and ends it when the slot is on a list
//! ([`Slots::freed`]); both update one word, `frees` = (frees completed << 32 | frees in
//! flight). The same holds for never-used slots: a stripe that took a chunk of them pushes it
//! after the shared counter moved on, so `Shared::pushed` counts the chunks' slots once they
//! are pushed. An allocation that finds every list empty and no never-used slot left reports
//! `None` only if, before its scan, every chunk was pushed and `frees` showed no free in
//! flight, and `frees` did not change until after the scan; otherwise it scans again, waiting
//! while a free or a chunk is in flight. Between the two equal reads nothing was pushed (every
//! push lies inside an announcement, or before the chunks were all counted), so every list was
//! empty at the second read, with nothing on its way: all `size` slots were in use or being
//! taken by concurrent inserts. The wait cannot deadlock: a removal announces with its key's
//! index lock already held, and from there to its free takes no index lock and allocates
//! nothing; the only lock it still takes is the timer wheel's, whose holders wait for nothing
//! (docs/tables.md, "Concurrency"); a chunk's push takes no lock at all.
//!
//! **Limbo.** A table with lock-free data-plane writes (`hazard.rs`) must wait, before a killed
//! slot is reused, until no writer can still store into it: one process-wide barrier. A batch
//! of removals (an expiry sweep, a reclaim, a clear) pays one barrier for all of them by
//! retiring each slot into the limbo ([`Slots::retire`], its free still announced) and freeing
//! the limbo at the end ([`Slots::drain`]). The batch takes index locks while its earlier frees
//! are still announced, so the wait above would deadlock against an insert that holds an index
//! lock and waits for them; instead a waiting allocation drains the limbo itself. A drain takes
//! no index lock (the limbo's mutex, held for a swap, and the hazard wait, which waits only for
//! writers that hold no lock), so every announced free still completes.

use crate::arena::Arena;
use crate::cell::Cells;
use crate::error::TableError;
use crate::hazard::Hazards;
use crate::stats::{stripe, STRIPES};
use crate::sync::{lock, prefetch, AtomicU32, AtomicU64, Backoff, Mutex, Ordering::*};
use std::sync::Arc;

/// Never-used slots a free-list stripe takes at a time.
const CHUNK: u64 = 64;

#[repr(align(128))]
pub(crate) struct Padded<T>(pub T);

/// The counters of a [`Slots`] shared by all stripes, on one cache line: written once per
/// [`CHUNK`] allocations while never-used slots last, and by removals; read by an allocation
/// only when its own list is empty.
struct Shared {
    /// The first never-used slot not taken yet; taken [`CHUNK`] slots at a time by a stripe.
    fresh: AtomicU64,
    /// Never-used slots taken and pushed onto a free list (or handed out): a chunk counts once
    /// its pre-linked rest is on its stripe's list.
    pushed: AtomicU64,
    /// (frees completed << 32) | frees in flight: see the module documentation.
    frees: AtomicU64,
}

pub(crate) struct Slots {
    size: u32,
    /// Striped free lists, one per [`stripe`]: (ABA counter << 32) | (slot + 1), 0 = empty.
    free_heads: Box<[Padded<AtomicU64>; STRIPES]>,
    /// The never-used slots and the frees in flight.
    shared: Padded<Shared>,
    /// Free-list links: slot + 1 of the next free slot, 0 = end.
    next: Arena<AtomicU32>,
    /// Retired slots: out of the index, their frees announced, waiting for one hazard wait
    /// (module documentation, "Limbo").
    limbo: Mutex<Vec<u32>>,
    /// Slots in the limbo (written under its mutex): an allocation looks here before it takes
    /// the mutex.
    retired: AtomicU32,
    /// The hazard words of the table the slots belong to (none: nothing to wait for).
    hazards: Option<Arc<Hazards>>,
}

impl Slots {
    /// An allocator of the slots `0..size`, all free.
    pub fn new(size: usize) -> Result<Slots, TableError> {
        Ok(Slots {
            size: size as u32,
            free_heads: Box::new(std::array::from_fn(|_| Padded(AtomicU64::new(0)))),
            shared: Padded(Shared {
                fresh: AtomicU64::new(0),
                pushed: AtomicU64::new(0),
                frees: AtomicU64::new(0),
            }),
            next: Arena::new(size)?,
            limbo: Mutex::new(Vec::new()),
            retired: AtomicU32::new(0),
            hazards: None,
        })
    }

    /// Makes a [`Slots::drain`] wait for `hazards` before it frees the limbo's slots.
    pub(crate) fn bind_hazards(&mut self, hazards: Arc<Hazards>) {
        self.hazards = Some(hazards);
    }

    /// Bytes of the free-list links and heads.
    pub fn bytes(&self) -> usize {
        self.next.bytes()
            + std::mem::size_of_val(&*self.free_heads)
            + std::mem::size_of_val(&self.shared)
    }

    /// Hint that the next insert's slot is about to be written: its cell (and free-list link)
    /// is fetched while the caller does other work, so an insert that comes rarely does not pay
    /// a DRAM miss for it.
    #[inline]
    pub fn prefetch_alloc(&self, cells: &Cells) {
        let top = self.free_heads[stripe()].0.load(Relaxed) as u32;
        if top != 0 && top <= self.size {
            cells.prefetch(top as usize - 1);
            prefetch(&self.next[top as usize - 1]);
        }
    }

    /// A free slot, or `None` when all `size` slots are in use; from this thread's stripe.
    pub fn alloc(&self) -> Option<u32> {
        self.alloc_in(stripe())
    }

    /// [`Slots::alloc`], popping the own free list inline (one CAS) and prefetching the cell
    /// and link of a slot a later allocation will take ([`Slots::prefetch_after`]).
    #[inline(always)]
    pub fn alloc_hint(&self, cells: &Cells) -> Option<u32> {
        let st = stripe();
        let head = &self.free_heads[st].0;
        let h = head.load(Acquire);
        let top = h as u32;
        if let Some(link) = self.next.get((top as usize).wrapping_sub(1)) {
            let next = link.load(Relaxed);
            let new = ((h >> 32).wrapping_add(1) << 32) | next as u64;
            if head.compare_exchange(h, new, Acquire, Relaxed).is_ok() {
                self.prefetch_after(next, cells);
                return Some(top - 1);
            }
        }
        self.alloc_cold(st)
    }

    /// [`Slots::alloc_hint`] without its fallback: `None` when this thread's free list is
    /// empty (or its pop met another thread's), for a caller whose slow path allocates again.
    /// No call on its path, so an inlining caller keeps its values in registers.
    #[inline(always)]
    pub fn alloc_own(&self, cells: &Cells) -> Option<u32> {
        let head = &self.free_heads[stripe()].0;
        let h = head.load(Acquire);
        let top = h as u32;
        let link = self.next.get((top as usize).wrapping_sub(1))?;
        let next = link.load(Relaxed);
        let new = ((h >> 32).wrapping_add(1) << 32) | next as u64;
        head.compare_exchange(h, new, Acquire, Relaxed).ok()?;
        self.prefetch_after(next, cells);
        Some(top - 1)
    }

    /// With `next` (stored as slot + 1) now on top of the list, starts fetching the cell and
    /// link of the slot below it, which the allocation after next takes: two allocations
    /// ahead, because one insert's time is about one DRAM latency (measured: the insert's
    /// first read of its cell still waited with the cell fetched one allocation ahead).
    /// `next`'s own link was fetched by the allocation before (or shares its line with
    /// ours); another thread may pop meanwhile, which only wastes the hint.
    #[inline(always)]
    fn prefetch_after(&self, next: u32, cells: &Cells) {
        if let Some(l) = self.next.get((next as usize).wrapping_sub(1)) {
            let after = l.load(Relaxed);
            if let Some(l2) = self.next.get((after as usize).wrapping_sub(1)) {
                cells.prefetch_first(after as usize - 1);
                prefetch(l2);
            }
        }
    }

    #[inline(never)]
    fn alloc_cold(&self, st: usize) -> Option<u32> {
        self.alloc_in(st)
    }

    /// A free slot from free list `st` first: its own list, then a fresh chunk of never-used
    /// slots (whose rest goes to list `st`), then the other stripes' lists (so no slot is ever
    /// stranded in another stripe). `None` only when all `size` slots were in use at one
    /// instant of the call: every list empty, no fresh slot left and no free in flight (it
    /// waits for those; see the module documentation).
    ///
    /// The lists are Treiber stacks with an ABA counter in the head word; a thread touches
    /// only its own stripe's head on the common path, so inserts on different cores share no
    /// written cache line here.
    pub fn alloc_in(&self, st: usize) -> Option<u32> {
        let st = st % STRIPES;
        if let Some(s) = self.pop(st) {
            return Some(s);
        }
        if let Some(s) = self.refill(st) {
            return Some(s);
        }
        // No never-used slot is left to take (`refill` failed, and `shared.fresh` only grows).
        let mut backoff = Backoff::new();
        loop {
            let f0 = self.shared.0.frees.load(SeqCst);
            let pushed = self.shared.0.pushed.load(SeqCst) >= self.size as u64;
            for i in 0..STRIPES {
                if let Some(s) = self.pop((st + i) % STRIPES) {
                    return Some(s);
                }
            }
            let f1 = self.shared.0.frees.load(SeqCst);
            let in_flight = !pushed || f1 as u32 != 0;
            if f1 == f0 && !in_flight {
                return None;
            }
            // A free in flight may be a retired slot: free the limbo rather than wait for
            // the batch that retired it (module documentation, "Limbo").
            if in_flight && self.drain() == 0 {
                backoff.snooze();
            }
        }
    }

    /// Pops the top of free list `st`.
    fn pop(&self, st: usize) -> Option<u32> {
        let head = &self.free_heads[st].0;
        let mut h = head.load(Acquire);
        loop {
            let top = h as u32;
            if top == 0 {
                return None;
            }
            let next = self.next[top as usize - 1].load(Relaxed);
            let new = ((h >> 32).wrapping_add(1) << 32) | next as u64;
            match head.compare_exchange_weak(h, new, Acquire, Acquire) {
                Ok(_) => return Some(top - 1),
                Err(x) => h = x,
            }
        }
    }

    /// Takes the next [`CHUNK`] never-used slots: returns the first, pushes the rest onto free
    /// list `st` as one pre-linked chain (one CAS).
    fn refill(&self, st: usize) -> Option<u32> {
        let size = self.size as u64;
        if self.shared.0.fresh.load(Relaxed) >= size {
            return None;
        }
        let f = self.shared.0.fresh.fetch_add(CHUNK, Relaxed);
        if f >= size {
            return None;
        }
        let end = (f + CHUNK).min(size) as u32;
        let f = f as u32;
        if end > f + 1 {
            let links = self
                .next
                .get(f as usize + 1..end as usize - 1)
                .unwrap_or_default();
            for (x, l) in (f + 1..).zip(links) {
                // slot x links to slot x + 1, stored as (x + 1) + 1
                l.store(x + 2, Relaxed);
            }
            self.push_chain(st, f + 1, end - 1);
        }
        // After the push: an allocation that sees every never-used slot counted finds them.
        self.shared.0.pushed.fetch_add((end - f) as u64, SeqCst);
        Some(f)
    }

    /// Pushes the chain `first ..= last` (already linked through `next`, except `last`) onto
    /// free list `st`.
    fn push_chain(&self, st: usize, first: u32, last: u32) {
        let head = &self.free_heads[st].0;
        let mut h = head.load(Relaxed);
        loop {
            self.next[last as usize].store(h as u32, Relaxed);
            let new = ((h >> 32).wrapping_add(1) << 32) | (first as u64 + 1);
            match head.compare_exchange_weak(h, new, Release, Relaxed) {
                Ok(_) => return,
                Err(x) => h = x,
            }
        }
    }

    /// Announces that a slot is about to be freed: called by a removal before it kills its
    /// entry, and ended by [`Slots::freed`] (exactly once). Until then an allocation that
    /// finds no free slot waits instead of reporting the table full.
    pub fn freeing(&self) {
        self.shared.0.frees.fetch_add(1, SeqCst);
    }

    /// Returns slot `s`, whose free was announced with [`Slots::freeing`], to this thread's
    /// free list, and ends the announcement (one more free completed, one fewer in flight).
    pub fn freed(&self, s: u32) {
        self.freed_in(stripe(), s)
    }

    /// [`Slots::freed`] onto free list `st`.
    pub fn freed_in(&self, st: usize, s: u32) {
        self.free_in(st, s);
        self.shared.0.frees.fetch_add((1 << 32) - 1, SeqCst);
    }

    /// Retires slot `s`, whose free was announced with [`Slots::freeing`] and whose entry is
    /// out of the index: it reaches a free list at the next [`Slots::drain`]. Returns how many
    /// slots the limbo holds now.
    pub fn retire(&self, s: u32) -> usize {
        let mut limbo = lock(&self.limbo);
        limbo.push(s);
        self.retired.store(limbo.len() as u32, Relaxed);
        limbo.len()
    }

    /// Frees every retired slot: one hazard wait for all of them (no lock-free writer can
    /// still store into one; one process-wide barrier), then each onto this thread's free
    /// list, ending its announcement. Returns how many. Takes no index lock.
    pub fn drain(&self) -> usize {
        if self.retired.load(Relaxed) == 0 {
            return 0;
        }
        let batch = {
            let mut limbo = lock(&self.limbo);
            self.retired.store(0, Relaxed);
            std::mem::take(&mut *limbo)
        };
        if batch.is_empty() {
            return 0;
        }
        if let Some(h) = &self.hazards {
            h.wait_clear(&batch);
        }
        for &s in &batch {
            self.freed(s);
        }
        batch.len()
    }

    /// Returns slot `s` to free list `st`, unannounced: for a slot no allocation could be
    /// waiting for (the allocator's tests and models). A removal from a table announces its
    /// free: [`Slots::freeing`], then [`Slots::freed`].
    pub fn free_in(&self, st: usize, s: u32) {
        self.push_chain(st % STRIPES, s, s)
    }

    /// Slots that have ever been handed out (all live slots are below this).
    pub fn high_water(&self) -> usize {
        (self.shared.0.fresh.load(Acquire) as usize).min(self.size as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_list_is_lifo_then_fresh() {
        let x = Slots::new(3).unwrap();
        assert_eq!((x.alloc_in(0), x.alloc_in(0)), (Some(0), Some(1)));
        x.free_in(0, 0);
        assert_eq!(x.alloc_in(0), Some(0));
        assert_eq!((x.alloc_in(0), x.alloc_in(0)), (Some(2), None));
        x.free_in(0, 2);
        x.free_in(0, 1);
        assert_eq!(
            (x.alloc_in(0), x.alloc_in(0), x.alloc_in(0)),
            (Some(1), Some(2), None)
        );
    }

    #[test]
    fn slots_freed_on_one_stripe_are_found_from_every_other() {
        let n = 3 * CHUNK as usize + 5;
        let x = Slots::new(n).unwrap();
        let mut got: Vec<u32> = (0..n).map(|i| x.alloc_in(i % 3).unwrap()).collect();
        assert_eq!(x.alloc_in(5), None);
        got.sort_unstable();
        assert_eq!(got, (0..n as u32).collect::<Vec<_>>(), "each slot once");
        for s in 0..n as u32 {
            x.free_in(s as usize % 7, s);
        }
        let mut again: Vec<u32> = (0..n).map(|_| x.alloc_in(11).unwrap()).collect();
        assert_eq!(x.alloc_in(0), None);
        again.sort_unstable();
        assert_eq!(again, got);
    }
}
