//! The exact-match engine: a bucketized cuckoo hash table over the table's fixed arena of entry
//! cells, read without locks by any number of workers and written concurrently by all of them.
//!
//! Structure (MemC3, Fan et al. NSDI'13; libcuckoo, Li et al. EuroSys'14; Cuckoo++, Le Scouarnec
//! ANCS'18):
//! - `nb` buckets of one 64-byte line each: a header word and [`WAYS`] way words. A way word is
//!   `tag:24 | secondary:1 | gen:7 | slot+1:32` (0 = empty): the tag filters key compares, the
//!   generation bits tie the word to one incarnation of the slot, and the whole word is published
//!   with a single release store after the entry's cell (key and action data) is written.
//! - Every key has two buckets, `b1` from its hash and `b2 = alt(b1, tag)`, where
//!   `alt(b, t) = (c(t) - b) mod nb` is an involution, so an entry can be moved between its two
//!   buckets knowing only its bucket and tag (partial-key cuckoo hashing).
//! - The header word is `overflow:32 | counter:31 | lock:1`. `lock` is a per-bucket writer spin
//!   lock (libcuckoo); `counter` is bumped whenever an entry whose primary bucket this is moves
//!   between its two buckets (see [`Exact::move_entry`]); `overflow` counts the entries whose primary bucket this is but which live in their secondary bucket, so
//!   a lookup whose key is not in `b1` reads `b2` only when that count is non-zero (Cuckoo++).
//!
//! Readers never lock and never wait for a writer of the index:
//! - a hit is valid when the cell holds the key and is live with the word's generation bits
//!   ([`Cells::read_match`]): the entry existed at that instant;
//! - a miss is valid when the counter of the key's primary bucket did not change (no entry of
//!   that bucket was moved meanwhile); otherwise the lookup retries, which happens only when a displacement
//!   ran concurrently (lock-free: a retry means some writer made progress).
//!
//! Writers: an insert or delete of key `k` locks both buckets of `k` (in index order), so two
//! threads adding the same key are serialized and the second one sees the first one's entry. A
//! displacement (both buckets full) searches a short cuckoo path breadth-first and executes it
//! from its free end, one move at a time under the two buckets' locks; each move first publishes
//! the entry in the destination and then removes it from the source, so the entry is always
//! reachable. Displacements are serialized by one mutex (inserts that find room do not take it).
//!
//! Slots come from a lock-free free list (a Treiber stack with an ABA counter, then a bump pointer
//! over never-used slots) and are reused at once: the generation check above makes reuse safe
//! without epochs or grace periods.

use crate::action::ActionData;
use crate::arena::Arena;
use crate::cell::{gen7, word_want, Cells, EntryRead, LineCells};
use crate::error::TableError;
use crate::hash::ProbeKey;
use crate::slots::{Padded, Slots};
use crate::stamp::{stamp, Stage};
use crate::sync::{fence, lock, prefetch, AtomicU64, Backoff, Mutex, Ordering::*, Zeroed};
use std::sync::atomic::AtomicUsize;

/// Ways per bucket (7 words of 8 bytes after the header fill one line).
pub(crate) const WAYS: usize = 7;
/// Highest load of the ways the bucket array is sized for at the declared size (the arena has
/// exactly `size` slots, so the table is full at 100 % of its size, not at a cuckoo failure).
const MAX_LOAD: f64 = 0.85;
/// Bucket count below which a table is not made smaller: with a handful of buckets, an unlucky hash
/// seed leaves some key sets without a cuckoo path below the declared size (a 16-entry table in 3
/// buckets failed at its 9th key for 1 seed in 200); 64 lines are nothing next to that surprise.
const MIN_BUCKETS: usize = 64;
/// Buckets visited by one breadth-first search for a cuckoo path (paths of up to 4 moves).
const MAX_BFS: usize = 2 + 2 * WAYS + 2 * WAYS * WAYS + 2 * WAYS * WAYS * WAYS;
/// Attempts to insert before reporting `Full` when displacements keep racing with others.
const MAX_TRIES: usize = 8;

const LOCK: u64 = 1;
const CTR_ONE: u64 = 2;
const CTR_MASK: u64 = 0xffff_fffe;
const OVF_ONE: u64 = 1 << 32;

const SEC: u64 = 1 << 39;
/// Stage-2 result: look in the secondary bucket (never a valid way word: slot+1 is 0).
pub(crate) const SECOND: u64 = 1 << 32;

#[repr(C, align(64))]
pub(crate) struct Bucket {
    hdr: AtomicU64,
    way: [AtomicU64; WAYS],
}

// SAFETY: a bucket is eight atomics, valid (empty, unlocked) when zeroed.
unsafe impl Zeroed for Bucket {
    fn zero() -> Self {
        Bucket {
            hdr: AtomicU64::zero(),
            way: std::array::from_fn(|_| AtomicU64::zero()),
        }
    }
}

/// A node of the breadth-first search for a cuckoo path: bucket `bucket`, reached by moving the
/// entry `word` out of way `way` of node `parent`'s bucket.
#[derive(Clone, Copy)]
struct Node {
    bucket: u32,
    parent: u32,
    way: u8,
    word: u64,
}

const ROOT: u32 = u32::MAX;

/// Result of [`Exact::insert`] (and [`crate::direct::Direct::insert`]).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Ins {
    /// Added in slot with generation.
    Added(u32, u32),
    /// The key's entry in this slot was replaced (`replace` returned true) by a new one with
    /// this generation, in the same slot: the old entry's cell was rewritten in place and its
    /// index word republished; no slot was allocated or freed.
    Replaced(u32, u32),
    /// The key is present in this slot.
    Present(u32),
    /// No free slot, or no cuckoo path.
    Full,
}

/// Outcome of [`Hot::lookup_line`].
pub(crate) enum Line {
    /// (slot, gen): the entry's data and version are in the outputs.
    Hit(u32, u32),
    /// A valid miss; the default action's data and version are in the outputs.
    Miss,
    /// Undecided: run the whole lookup.
    Slow,
}

/// Outcome of [`Hot::find_quick`].
pub(crate) enum Quick {
    /// (slot, gen, version); the entry's data is in the output.
    Hit(u32, u32, u64),
    /// A valid miss.
    Miss,
    /// Undecided: run [`Exact::find`].
    Slow,
}

/// Candidate found by the second stage of a batched lookup.
#[derive(Clone, Copy, Default)]
pub(crate) struct Probe {
    b1: u32,
    tag: u32,
}

impl Probe {
    /// A direct table's probe ([`crate::direct`]): the key's index.
    #[inline(always)]
    pub fn direct(i: usize) -> Probe {
        Probe {
            b1: i as u32,
            tag: 0,
        }
    }

    /// The key index of a direct table's probe.
    #[inline(always)]
    pub fn index(&self) -> usize {
        self.b1 as usize
    }
}

#[inline(always)]
fn tag_of(e: u64) -> u32 {
    (e >> 40) as u32
}

#[inline(always)]
fn slot_of(e: u64) -> u32 {
    (e as u32).wrapping_sub(1)
}

#[inline(always)]
fn word(tag: u32, sec: bool, gen: u32, slot: u32) -> u64 {
    ((tag as u64) << 40) | if sec { SEC } else { 0 } | (gen7(gen) << 32) | (slot as u64 + 1)
}

pub(crate) struct Exact {
    buckets: Arena<Bucket>,
    nb: u64,
    seed: u64,
    /// The entry slots' allocator.
    pub slots: Slots,
    /// Address of the code of the first instance of [`Exact::insert`] that ran (0 before), for
    /// [`crate::Table`]'s warming of the insert path; written once.
    pub insert_code: AtomicUsize,
    /// Padded: it is written by displacements, while `buckets`, `nb` and `seed` beside it are read
    /// by every lookup.
    displace: Padded<Mutex<Vec<Node>>>,
}

/// Holds the locks of one or two buckets; releases them on drop.
struct Pair<'a> {
    x: &'a Exact,
    a: usize,
    b: usize,
}

impl Drop for Pair<'_> {
    fn drop(&mut self) {
        self.x.unlock(self.b);
        if self.a != self.b {
            self.x.unlock(self.a);
        }
    }
}

impl Exact {
    /// An index for `size` entries (slots `0..size`).
    pub fn new(size: usize, seed: u64) -> Result<Exact, TableError> {
        let nb = (size as f64 / (WAYS as f64 * MAX_LOAD)).ceil() as usize;
        Exact::with_buckets(size, nb.max(size.min(MIN_BUCKETS)), seed)
    }

    /// An index for `size` entries in `nb` buckets (at least 2).
    pub fn with_buckets(size: usize, nb: usize, seed: u64) -> Result<Exact, TableError> {
        let nb = nb.max(2);
        Ok(Exact {
            buckets: Arena::new(nb)?,
            nb: nb as u64,
            seed,
            slots: Slots::new(size)?,
            insert_code: AtomicUsize::new(0),
            displace: Padded(Mutex::new(Vec::new())),
        })
    }

    /// Bytes of the bucket array and the free lists.
    pub fn bytes(&self) -> usize {
        self.buckets.bytes() + self.slots.bytes() + std::mem::size_of_val(&self.displace)
    }

    #[inline(always)]
    pub fn hash(&self, key: &impl ProbeKey) -> u64 {
        key.hash(self.seed)
    }

    /// Primary bucket and tag of a hash. Tags are never 0, so an empty way (word 0) never
    /// matches a tag compare ([`match_mask`]).
    #[inline(always)]
    fn place(&self, h: u64) -> (usize, u32) {
        place(self.nb, h)
    }

    /// The other bucket of an entry with tag `tag` in bucket `b`.
    #[inline(always)]
    fn alt(&self, b: usize, tag: u32) -> usize {
        alt(self.nb, b, tag)
    }

    /// The fields a batched lookup reads for every key, copied out once per group.
    #[inline(always)]
    pub fn hot(&self) -> Hot<'_> {
        Hot {
            buckets: &self.buckets,
            nb: self.nb,
        }
    }

    // ------------------------------------------------------------------ lookups

    /// The live entry holding `key` (hash `h`): copies its action data into `out` and returns
    /// (slot, gen, version). Lock-free; see the module documentation for why a result is valid.
    #[inline]
    pub fn find(
        &self,
        cells: &Cells,
        h: u64,
        key: &impl ProbeKey,
        out: &mut ActionData,
    ) -> Option<(u32, u32, u64)> {
        self.hot().find(&cells.hot(), h, key, out)
    }

    // ------------------------------------------------------------------ writer side

    fn lock(&self, b: usize) {
        lock_hdr(&self.buckets[b].hdr);
    }

    fn unlock(&self, b: usize) {
        let hdr = &self.buckets[b].hdr;
        hdr.store(hdr.load(Relaxed) & !LOCK, Release);
    }

    /// Locks buckets `a` and `b` (in index order: no deadlock between writers).
    fn lock_pair(&self, a: usize, b: usize) -> Pair<'_> {
        let (a, b) = (a.min(b), a.max(b));
        self.lock(a);
        if b != a {
            self.lock(b);
        }
        Pair { x: self, a, b }
    }

    /// Adds `v` (wrapping) to bucket `b`'s header; the caller holds its lock.
    fn hdr_add(&self, b: usize, v: u64) {
        let hdr = &self.buckets[b].hdr;
        hdr.store(hdr.load(Relaxed).wrapping_add(v), Release);
    }

    /// (bucket, way, slot, secondary) of `key` in its buckets; the caller holds both locks.
    fn find_locked(
        &self,
        cells: &Cells,
        b1: usize,
        b2: usize,
        tag: u32,
        key: &impl ProbeKey,
    ) -> Option<(usize, usize, u32, bool)> {
        let n = if b1 == b2 { 1 } else { 2 };
        for &b in &[b1, b2][..n] {
            let bk = &self.buckets[b];
            let mut m = match_mask(bk, tag).0;
            while m != 0 {
                let i = m.trailing_zeros() as usize;
                m &= m - 1;
                let e = bk.way[i].load(Relaxed);
                if tag_of(e) == tag && e as u32 != 0 && cells.key_eq(slot_of(e) as usize, key) {
                    return Some((b, i, slot_of(e), e & SEC != 0));
                }
            }
        }
        None
    }

    /// A free way of bucket `b` (the caller holds its lock, or only searches).
    fn free_way(&self, b: usize) -> Option<usize> {
        free_in(&self.buckets[b])
    }

    /// Clears way `i` of bucket `b` (a delete); the caller holds the locks of the entry's two
    /// buckets, `primary` is the entry's primary bucket.
    fn clear_way(&self, b: usize, i: usize, sec: bool, primary: usize) {
        self.buckets[b].way[i].store(0, Release);
        if sec {
            self.hdr_add(primary, OVF_ONE.wrapping_neg());
        }
    }

    /// Adds `key` (hash `h`) unless present. Under the locks of the key's two buckets:
    /// if the key is present, `replace(slot)` decides whether that entry is replaced (it must
    /// make the slot's generation even if it returns true): then `init(slot)` rewrites the same
    /// slot and its way word is republished with the new generation (`Replaced`; a replacement
    /// never needs a second slot, so it cannot find the table full); otherwise a slot is
    /// allocated, `init(slot)` writes the cell (key included) and returns its new generation,
    /// and the entry is published.
    ///
    /// Tries [`Exact::insert_fast`] and [`Exact::insert_second`] first. (The table's calls run
    /// these three steps themselves, each where it keeps the calling function small; this one
    /// is for the unit tests and the loom models.)
    #[cfg(any(test, loom))]
    #[inline]
    pub fn insert<K: ProbeKey, R: FnMut(u32) -> bool, I: FnMut(u32) -> u32>(
        &self,
        cells: &Cells,
        h: u64,
        key: &K,
        replace: R,
        mut init: I,
    ) -> Ins {
        if let Some((s, gen)) = self.insert_fast(cells, h, &mut init) {
            return Ins::Added(s, gen);
        }
        if let Some((s, gen)) = self.insert_second(cells, h, &mut init) {
            return Ins::Added(s, gen);
        }
        self.insert_slow(cells, h, key, replace, init)
    }

    /// The common case of [`Exact::insert`], for inlining: the primary bucket has no way with
    /// the key's tag and a free way, and the key is not in its secondary bucket. The key's
    /// entry gets into either of its buckets, moves between them or leaves them only under its
    /// primary's lock, which counts an entry in the secondary in the primary's overflow count;
    /// so with the primary locked the key's presence is fixed. Without overflowed entries the
    /// key can only be in the primary; with them (most primaries of a table filled past ~70 %),
    /// the secondary's ways are read without its lock (no entry of this key can come or go
    /// there; a way with the key's tag is left to the general case). The key is absent then, and
    /// this alone decides, under the primary bucket's lock: a slot is allocated, `init(slot)`
    /// writes the cell and returns its generation, the way word is published in the primary.
    /// `None`: not the common case (or no free slot here), nothing was changed; run
    /// [`Exact::insert_second`], then [`Exact::insert_slow`].
    #[inline(always)]
    pub fn insert_fast(
        &self,
        cells: &Cells,
        h: u64,
        init: impl FnOnce(u32) -> u32,
    ) -> Option<(u32, u32)> {
        let (b1, tag) = self.place(h);
        let bk = self.buckets.get(b1)?;
        stamp(Stage::LockIn);
        let v = lock_hdr(&bk.hdr);
        stamp(Stage::Locked);
        let (m, empty) = match_mask(bk, tag);
        // `empty == 0`: index 32, no way.
        if let (0, Some(w)) = (m, bk.way.get(empty.trailing_zeros() as usize)) {
            if v < OVF_ONE || self.not_in_second(b1, tag) {
                if let Some(s) = self.slots.alloc_own(cells) {
                    stamp(Stage::SlotTaken);
                    let gen = init(s);
                    w.store(word(tag, false, gen, s), Release);
                    // Unlock: the header does not change while its lock is held.
                    bk.hdr.store(v, Release);
                    return Some((s, gen));
                }
            }
        }
        bk.hdr.store(v, Release);
        None
    }

    /// Whether no way of the secondary bucket of a key with primary `b1` and tag `tag` holds
    /// that tag, read without the secondary's lock; for a caller that holds `b1`'s lock, which
    /// fixes where the key's entry is ([`Exact::insert_fast`]). A bucket that is its own
    /// secondary holds no way of the key either (the caller matched it already).
    #[inline(always)]
    fn not_in_second(&self, b1: usize, tag: u32) -> bool {
        let b2 = self.alt(b1, tag);
        b2 == b1
            || self
                .buckets
                .get(b2)
                .is_some_and(|bk2| match_mask(bk2, tag).0 == 0)
    }

    /// The next commonest case of [`Exact::insert`] (a full primary bucket as the table fills,
    /// or no slot on this thread's free list): no way of the primary bucket holds the key's
    /// tag, and its secondary bucket is free to lock. With the primary bucket locked the key's
    /// presence cannot change (an entry of the key gets into either of its buckets, moves
    /// between them or leaves them only under its primary's lock); the secondary is locked with
    /// a try-lock (nothing waits while holding a lock, so the index order of
    /// [`Exact::lock_pair`] is not needed). The key is absent if the primary has no overflowed
    /// entries or the secondary no way with its tag; it goes into a free way of the primary,
    /// else of the secondary (counted in the primary's overflow count before its way word is
    /// published, as [`Exact::insert_slow`] does). `None`: not this case (a way with the key's
    /// tag, a locked secondary, both buckets full, no free slot), nothing was changed.
    #[inline(always)]
    pub fn insert_second(
        &self,
        cells: &Cells,
        h: u64,
        init: impl FnOnce(u32) -> u32,
    ) -> Option<(u32, u32)> {
        let (b1, tag) = self.place(h);
        let b2 = self.alt(b1, tag);
        let (bk1, bk2) = (self.buckets.get(b1)?, self.buckets.get(b2)?);
        if b1 == b2 {
            return None;
        }
        let v = lock_hdr(&bk1.hdr);
        let (m1, empty1) = match_mask(bk1, tag);
        // A way with the key's tag: not this case (the secondary is not locked then).
        let Some(v2) = (m1 == 0).then(|| try_lock_hdr(&bk2.hdr)).flatten() else {
            bk1.hdr.store(v, Release);
            return None;
        };
        let (m2, empty2) = match_mask(bk2, tag);
        // Without overflowed entries of `b1` no entry of `b2` is the key.
        if v < OVF_ONE || m2 == 0 {
            let to = if empty1 != 0 {
                Some((bk1, empty1, false))
            } else if empty2 != 0 {
                Some((bk2, empty2, true))
            } else {
                None
            };
            if let Some((bk, empty, sec)) = to {
                if let Some(s) = self.slots.alloc_hint(cells) {
                    let gen = init(s);
                    let v = if sec { v + OVF_ONE } else { v };
                    if sec {
                        // Counted before the entry is reachable (as `hdr_add` in
                        // `insert_slow`): a lookup that read the old count, and so skips
                        // `b2`, read it before the entry was published; its miss is valid then.
                        bk1.hdr.store(v | LOCK, Release);
                    }
                    if let Some(w) = bk.way.get(empty.trailing_zeros() as usize) {
                        w.store(word(tag, sec, gen, s), Release);
                    }
                    bk2.hdr.store(v2, Release);
                    bk1.hdr.store(v, Release);
                    return Some((s, gen));
                }
            }
        }
        bk2.hdr.store(v2, Release);
        bk1.hdr.store(v, Release);
        None
    }

    /// [`Exact::insert`]'s general case (for callers that tried [`Exact::insert_fast`] first).
    #[inline(never)]
    pub fn insert_slow<K: ProbeKey, R: FnMut(u32) -> bool, I: FnMut(u32) -> u32>(
        &self,
        cells: &Cells,
        h: u64,
        key: &K,
        mut replace: R,
        mut init: I,
    ) -> Ins {
        if self.insert_code.load(Relaxed) == 0 {
            type F<K, R, I> = fn(&Exact, &Cells, u64, &K, R, I) -> Ins;
            let f: F<K, R, I> = Exact::insert_slow::<K, R, I>;
            self.insert_code.store(f as usize, Relaxed);
        }
        let (b1, tag) = self.place(h);
        let b2 = self.alt(b1, tag);
        // Fast path, one lock: with the primary bucket locked and no overflowed entries, the key
        // can only be in the primary bucket (an entry gets into its secondary bucket, or leaves
        // it, only under its primary's lock, which counts it), so the secondary bucket is not
        // touched at all; after a lookup miss the primary bucket is in cache.
        {
            self.lock(b1);
            let _g = Pair {
                x: self,
                a: b1,
                b: b1,
            };
            let bk = &self.buckets[b1];
            if bk.hdr.load(Relaxed) < OVF_ONE {
                let (mut m, empty) = match_mask(bk, tag);
                while m != 0 {
                    let i = m.trailing_zeros() as usize;
                    m &= m - 1;
                    let e = bk.way[i].load(Relaxed);
                    if tag_of(e) == tag && e as u32 != 0 && cells.key_eq(slot_of(e) as usize, key) {
                        let s = slot_of(e);
                        if !replace(s) {
                            return Ins::Present(s);
                        }
                        let gen = init(s);
                        self.republish(b1, i, e, gen);
                        return Ins::Replaced(s, gen);
                    }
                }
                if empty != 0 {
                    let i = empty.trailing_zeros() as usize;
                    let Some(s) = self.slots.alloc() else {
                        return Ins::Full;
                    };
                    let gen = init(s);
                    self.buckets[b1].way[i].store(word(tag, false, gen, s), Release);
                    return Ins::Added(s, gen);
                }
            }
        }
        for _ in 0..MAX_TRIES {
            {
                let _g = self.lock_pair(b1, b2);
                if let Some((b, i, s, _)) = self.find_locked(cells, b1, b2, tag, key) {
                    if !replace(s) {
                        return Ins::Present(s);
                    }
                    let e = self.buckets[b].way[i].load(Relaxed);
                    let gen = init(s);
                    self.republish(b, i, e, gen);
                    return Ins::Replaced(s, gen);
                }
                let free = match self.free_way(b1) {
                    Some(i) => Some((b1, i, false)),
                    None => self.free_way(b2).map(|i| (b2, i, b2 != b1)),
                };
                if let Some((b, i, sec)) = free {
                    let Some(s) = self.slots.alloc() else {
                        return Ins::Full;
                    };
                    let gen = init(s);
                    if sec {
                        self.hdr_add(b1, OVF_ONE);
                    }
                    self.buckets[b].way[i].store(word(tag, sec, gen, s), Release);
                    return Ins::Added(s, gen);
                }
            }
            if !self.make_room(b1, b2) {
                break;
            }
        }
        Ins::Full
    }

    /// Republishes way `i` of bucket `b`, whose word was `e`, for the entry that replaced it in
    /// the same slot with generation `gen` (the caller holds the bucket's lock; the entry stays
    /// in its bucket, so no counter changes). A reader that read `e` finds the cell's
    /// generation changed (killed, then rewritten), so it skips the way as it skips a deleted
    /// entry's: the kill and the republication bound an instant without the key, where its
    /// miss is valid.
    fn republish(&self, b: usize, i: usize, e: u64, gen: u32) {
        self.buckets[b].way[i].store(word(tag_of(e), e & SEC != 0, gen, slot_of(e)), Release);
    }

    /// Removes the entry holding `key` (hash `h`), if `slot` is `None` or its slot, and if
    /// `cond(slot)` — run under the buckets' locks — returns true (it must make the slot's
    /// generation even, and announce the free: [`crate::slots::Slots::freeing`]). Returns the
    /// removed slot, to be released with [`crate::slots::Slots::freed`].
    pub fn remove(
        &self,
        cells: &Cells,
        h: u64,
        key: &impl ProbeKey,
        slot: Option<u32>,
        cond: impl FnOnce(u32) -> bool,
    ) -> Option<u32> {
        let (b1, tag) = self.place(h);
        let b2 = self.alt(b1, tag);
        let _g = self.lock_pair(b1, b2);
        let (b, i, s, sec) = self.find_locked(cells, b1, b2, tag, key)?;
        if slot.is_some_and(|x| x != s) || !cond(s) {
            return None;
        }
        self.clear_way(b, i, sec, b1);
        Some(s)
    }

    /// Makes a way free in bucket `b1` or `b2` by moving entries along a cuckoo path; false when
    /// no path of up to 4 moves exists.
    fn make_room(&self, b1: usize, b2: usize) -> bool {
        let mut nodes = lock(&self.displace.0);
        for _ in 0..MAX_TRIES {
            if self.free_way(b1).is_some() || self.free_way(b2).is_some() {
                return true;
            }
            let Some(end) = self.bfs(&mut nodes, b1, b2) else {
                return false;
            };
            if self.execute(&nodes, end) {
                return true;
            }
        }
        false
    }

    /// Breadth-first search from `b1` and `b2` for a bucket with a free way; returns its node.
    fn bfs(&self, nodes: &mut Vec<Node>, b1: usize, b2: usize) -> Option<usize> {
        nodes.clear();
        for b in [b1, b2] {
            nodes.push(Node {
                bucket: b as u32,
                parent: ROOT,
                way: 0,
                word: 0,
            });
        }
        // A node is checked for a free way when it is queued, not when it is visited: the
        // same first node in breadth-first order, found before the rest of its level is queued.
        let mut i = 0;
        while i < nodes.len() {
            let b = nodes[i].bucket as usize;
            for (w, way) in self.buckets[b].way.iter().enumerate() {
                if nodes.len() >= MAX_BFS {
                    break;
                }
                let e = way.load(Relaxed);
                if e as u32 == 0 {
                    continue;
                }
                let a = self.alt(b, tag_of(e));
                if a != b {
                    nodes.push(Node {
                        bucket: a as u32,
                        parent: i as u32,
                        way: w as u8,
                        word: e,
                    });
                    if self.free_way(a).is_some() {
                        return Some(nodes.len() - 1);
                    }
                }
            }
            i += 1;
        }
        None
    }

    /// Executes the path ending at node `end`, from its free end backwards; false if a bucket
    /// changed since the search (the caller searches again).
    fn execute(&self, nodes: &[Node], end: usize) -> bool {
        let mut n = end;
        while nodes[n].parent != ROOT {
            let node = nodes[n];
            let (src, dst) = (
                nodes[node.parent as usize].bucket as usize,
                node.bucket as usize,
            );
            if !self.move_entry(src, node.way as usize, node.word, dst) {
                return false;
            }
            n = node.parent as usize;
        }
        true
    }

    /// Moves the entry `e` from way `way` of bucket `src` to a free way of its other bucket
    /// `dst`: publish it in `dst`, bump the counter of its *primary* bucket (and adjust that
    /// bucket's overflow count), then clear it in `src`. A reader of the entry's key scans the
    /// primary first and the secondary second, and validates only the primary's counter on a
    /// miss: if its scan of `src` saw the clear, its re-read of the counter sees the bump, and if
    /// its first read of the header saw the bump, its scan of the primary sees the entry.
    fn move_entry(&self, src: usize, way: usize, e: u64, dst: usize) -> bool {
        let _g = self.lock_pair(src, dst);
        if self.buckets[src].way[way].load(Relaxed) != e {
            return false;
        }
        let Some(free) = self.free_way(dst) else {
            return false;
        };
        self.buckets[dst].way[free].store(e ^ SEC, Release);
        if e & SEC != 0 {
            // Back to the primary `dst`: one overflowed entry less.
            self.hdr_add(dst, CTR_ONE.wrapping_sub(OVF_ONE));
        } else {
            // Out of the primary `src`: one overflowed entry more.
            self.hdr_add(src, CTR_ONE + OVF_ONE);
        }
        self.buckets[src].way[way].store(0, Release);
        true
    }

    /// The primary and secondary bucket of the key whose hash is `h` (loom models).
    #[cfg(loom)]
    pub fn buckets_of(&self, h: u64) -> (usize, usize) {
        let (b1, tag) = self.place(h);
        (b1, self.alt(b1, tag))
    }

    /// Moves `key`'s entry to its other bucket if that one has a free way (tests and loom
    /// models of [`Exact::move_entry`]).
    #[cfg(loom)]
    pub fn relocate(&self, cells: &Cells, h: u64, key: &impl ProbeKey) -> bool {
        let (b1, tag) = self.place(h);
        let b2 = self.alt(b1, tag);
        if b1 == b2 {
            return false;
        }
        for (b, other) in [(b1, b2), (b2, b1)] {
            for (i, w) in self.buckets[b].way.iter().enumerate() {
                let e = w.load(Acquire);
                if e as u32 != 0 && tag_of(e) == tag && cells.key_eq(slot_of(e) as usize, key) {
                    return self.move_entry(b, i, e, other);
                }
            }
        }
        false
    }
}

/// Locks a bucket header (its spin lock bit); returns its value without the lock bit. Every
/// change of a header is made under its lock, so the holder unlocks by storing that value back
/// (plus its own changes). Also the lock of a direct table's index words ([`crate::direct`]),
/// whose bit 0 is a lock bit too.
#[inline(always)]
pub(crate) fn lock_hdr(hdr: &AtomicU64) -> u64 {
    try_lock_hdr(hdr).unwrap_or_else(|| lock_hdr_slow(hdr))
}

/// One attempt at [`lock_hdr`]: the header's value before it was locked, `None` if it was
/// locked (or changed meanwhile).
#[inline(always)]
fn try_lock_hdr(hdr: &AtomicU64) -> Option<u64> {
    let v = hdr.load(Relaxed);
    (v & LOCK == 0 && hdr.compare_exchange(v, v | LOCK, Acquire, Relaxed).is_ok()).then_some(v)
}

#[cold]
#[inline(never)]
fn lock_hdr_slow(hdr: &AtomicU64) -> u64 {
    let mut backoff = Backoff::new();
    loop {
        let v = hdr.load(Relaxed);
        if v & LOCK == 0
            && hdr
                .compare_exchange_weak(v, v | LOCK, Acquire, Relaxed)
                .is_ok()
        {
            return v;
        }
        backoff.snooze();
    }
}

/// Primary bucket (of `nb`) and tag of a hash. Tags are never 0, so an empty way (word 0) never
/// matches a tag compare ([`match_mask`]).
#[inline(always)]
fn place(nb: u64, h: u64) -> (usize, u32) {
    let t = (h >> 40) as u32;
    (((h as u32 as u64 * nb) >> 32) as usize, t | (t == 0) as u32)
}

/// The other bucket (of `nb`) of an entry with tag `tag` in bucket `b`.
#[inline(always)]
fn alt(nb: u64, b: usize, tag: u32) -> usize {
    let c = ((tag.wrapping_mul(0x9e37_79b1) as u64 * nb) >> 32) as usize;
    if c >= b {
        c - b
    } else {
        c + nb as usize - b
    }
}

/// The bucket array and its size, copied out of [`Exact`] once per batch group: kept in
/// registers, they are not re-read from the index after every atomic load of a lookup.
#[derive(Clone, Copy)]
pub(crate) struct Hot<'a> {
    buckets: &'a [Bucket],
    nb: u64,
}

impl Hot<'_> {
    /// [`Exact::find`] with the bucket and cell arrays at hand.
    #[inline(always)]
    pub fn find(
        &self,
        cells: &impl EntryRead,
        h: u64,
        key: &impl ProbeKey,
        out: &mut ActionData,
    ) -> Option<(u32, u32, u64)> {
        match self.find_quick(cells, h, key, out) {
            Quick::Hit(s, gen, version) => Some((s, gen, version)),
            Quick::Miss => None,
            Quick::Slow => self.find_slow(cells, h, key, out),
        }
    }

    /// The common cases of [`Exact::find`], for inlining: a hit in the primary bucket, and a
    /// miss of a primary bucket without overflowed entries whose counter did not change
    /// meanwhile. `Slow`: run the whole protocol ([`Hot::find_slow`]).
    #[inline(always)]
    pub fn find_quick(
        &self,
        cells: &impl EntryRead,
        h: u64,
        key: &impl ProbeKey,
        out: &mut ActionData,
    ) -> Quick {
        let (b1, tag) = place(self.nb, h);
        let Some(bk1) = self.buckets.get(b1) else {
            return Quick::Miss;
        };
        let h1 = bk1.hdr.load(Acquire);
        let m = match_mask(bk1, tag).0;
        if m != 0 {
            // The first candidate only (a second one means a tag collision, 7 in 2^24).
            let e = bk1.way[m.trailing_zeros() as usize].load(Acquire);
            let s = slot_of(e);
            return match cells.quick_match(s as usize, key, (e >> 32) as u32, tag, out) {
                Ok(Some((gen, version))) => Quick::Hit(s, gen, version),
                _ => Quick::Slow,
            };
        }
        if h1 < OVF_ONE {
            fence(Acquire);
            if (bk1.hdr.load(Relaxed) ^ h1) & CTR_MASK == 0 {
                return Quick::Miss;
            }
        }
        Quick::Slow
    }

    /// The one-line-cell lookup's inline path ([`crate::Table`]'s `lookup_line`): like
    /// [`Hot::find_quick`], with the hit's or the default action's data and version stored
    /// straight into `out` and `version` (cell `default` is the default action's).
    #[inline(always)]
    pub fn lookup_line<K: ProbeKey>(
        &self,
        lc: &LineCells<'_>,
        default: usize,
        h: u64,
        key: &K,
        out: &mut ActionData,
        version: &mut u64,
    ) -> Line {
        let (b1, tag) = place(self.nb, h);
        let Some(bk1) = self.buckets.get(b1) else {
            return Line::Slow;
        };
        let h1 = bk1.hdr.load(Acquire);
        let m = match_mask(bk1, tag).0;
        if m != 0 {
            // The first candidate only (a second one means a tag collision, 7 in 2^24).
            let e = bk1.way[m.trailing_zeros() as usize].load(Acquire);
            let want = word_want((e >> 32) as u32, tag);
            return match lc.try_hit(slot_of(e) as usize, key, want, out, version) {
                Some(gen) => Line::Hit(slot_of(e), gen),
                None => Line::Slow,
            };
        }
        if h1 >= OVF_ONE {
            return Line::Slow;
        }
        fence(Acquire);
        if (bk1.hdr.load(Relaxed) ^ h1) & CTR_MASK != 0 {
            return Line::Slow;
        }
        match lc.try_read::<K>(default, out, version) {
            Some(_) => Line::Miss,
            None => Line::Slow,
        }
    }

    /// The whole protocol of [`Exact::find`]: scan the primary bucket, then the secondary one
    /// if the primary has overflowed entries; a miss is valid if the primary's counter did not
    /// change meanwhile, else start again.
    #[inline(never)]
    fn find_slow(
        &self,
        cells: &impl EntryRead,
        h: u64,
        key: &impl ProbeKey,
        out: &mut ActionData,
    ) -> Option<(u32, u32, u64)> {
        let (b1, tag) = place(self.nb, h);
        let bk1 = self.buckets.get(b1)?;
        loop {
            let h1 = bk1.hdr.load(Acquire);
            if let Some(r) = scan(bk1, tag, cells, key, out) {
                return Some(r);
            }
            if h1 >= OVF_ONE {
                let b2 = alt(self.nb, b1, tag);
                if b2 != b1 {
                    if let Some(r) = scan(self.buckets.get(b2)?, tag, cells, key, out) {
                        return Some(r);
                    }
                }
            }
            fence(Acquire);
            if (bk1.hdr.load(Relaxed) ^ h1) & CTR_MASK == 0 {
                return None;
            }
        }
    }

    /// Batch stage 1: hash-derived place of a key, with its primary bucket prefetched.
    #[inline(always)]
    pub fn stage1(&self, h: u64) -> Probe {
        let (b1, tag) = place(self.nb, h);
        if let Some(bk) = self.buckets.get(b1) {
            prefetch(bk);
        }
        Probe { b1: b1 as u32, tag }
    }

    /// [`crate::Table::prefetch_entry`]: with the primary bucket (likely) at hand, prefetches
    /// the cell of its first way whose tag matches, or else the secondary bucket if the key may
    /// be there or an insert of it would go there (a full primary). A hint: a way that changed
    /// meanwhile only wastes the prefetch.
    #[inline(always)]
    pub fn prefetch_entry(&self, cells: &Cells, p: Probe) {
        let Some(bk) = self.buckets.get(p.b1 as usize) else {
            return;
        };
        let (m, empty) = match_mask(bk, p.tag);
        if m != 0 {
            let e = bk.way[m.trailing_zeros() as usize].load(Relaxed);
            cells.prefetch(slot_of(e) as usize);
        } else if empty == 0 || bk.hdr.load(Relaxed) >= OVF_ONE {
            if let Some(b2) = self.buckets.get(alt(self.nb, p.b1 as usize, p.tag)) {
                prefetch(b2);
            }
        }
    }

    /// Batch stage 2: with the primary bucket at hand, find the first way whose tag matches and
    /// prefetch its entry's cell; if there is none and the key may live in its secondary bucket,
    /// prefetch that bucket instead. Returns the matching way word, 0 for none, or `SECOND` when
    /// stage 3 should look at the secondary bucket.
    #[inline(always)]
    pub fn stage2(&self, cells: &impl EntryRead, p: Probe) -> u64 {
        let Some(bk) = self.buckets.get(p.b1 as usize) else {
            return 0;
        };
        if let Some(e) = first_match(bk, p.tag) {
            cells.prefetch(slot_of(e) as usize);
            return e;
        }
        if bk.hdr.load(Relaxed) >= OVF_ONE {
            if let Some(b2) = self.buckets.get(alt(self.nb, p.b1 as usize, p.tag)) {
                prefetch(b2);
            }
            return SECOND;
        }
        0
    }

    /// Batch stage 3 (after stage 2 returned `SECOND`): the first matching way of the secondary
    /// bucket, its cell prefetched, or 0.
    #[inline(always)]
    pub fn stage3(&self, cells: &impl EntryRead, p: Probe) -> u64 {
        let Some(bk) = self.buckets.get(alt(self.nb, p.b1 as usize, p.tag)) else {
            return 0;
        };
        match first_match(bk, p.tag) {
            Some(e) => {
                cells.prefetch(slot_of(e) as usize);
                e
            }
            None => 0,
        }
    }

    /// Batch stage 4 for a candidate way word `e` of stage 2 or 3: the hit, if `e`'s entry holds
    /// `key` (valid by [`Cells::read_match`]'s argument alone). `None` means: run
    /// [`Exact::find`] (a miss, or a candidate that was not the key).
    #[inline(always)]
    pub fn stage4(
        &self,
        cells: &impl EntryRead,
        e: u64,
        key: &impl ProbeKey,
        out: &mut ActionData,
    ) -> Option<(u32, u32, u64)> {
        if e == 0 || e == SECOND {
            return None;
        }
        let s = slot_of(e);
        let (gen, version) = cells.read_match(s as usize, key, (e >> 32) as u32, tag_of(e), out)?;
        Some((s, gen, version))
    }
}

/// (ways of `bk` whose tag is `tag`, empty ways) as bit masks (bit i = way i), from one read of
/// the bucket's line. `tag` must not be 0. Only a filter: every candidate way is re-read with an
/// atomic load and checked again before it is used, so a way that changes meanwhile is seen in
/// its newer state, exactly as a scalar scan that reached it later would.
///
/// x86-64: the line is read by four 16-byte SSE2 loads in inline assembly (each of its aligned
/// 8-byte words is read atomically, in program order with the atomics around it on x86-TSO;
/// assembly keeps the racing read out of the Rust memory model), then the tags of the words
/// (their high halves shifted right by 8) are compared four at a time.
#[cfg(all(target_arch = "x86_64", not(loom)))]
#[inline(always)]
fn match_mask(bk: &Bucket, tag: u32) -> (u32, u32) {
    use core::arch::x86_64::*;
    let p = bk as *const Bucket;
    let (a, b, c, d): (__m128i, __m128i, __m128i, __m128i);
    // SAFETY: `p` points to a live, 64-byte aligned bucket of 64 bytes; the loads only read it.
    // SSE2 is part of the x86-64 baseline.
    unsafe {
        core::arch::asm!(
            "movdqa {a}, [{p}]",
            "movdqa {b}, [{p} + 16]",
            "movdqa {c}, [{p} + 32]",
            "movdqa {d}, [{p} + 48]",
            p = in(reg) p,
            a = out(xmm_reg) a,
            b = out(xmm_reg) b,
            c = out(xmm_reg) c,
            d = out(xmm_reg) d,
            options(nostack, readonly, preserves_flags),
        );
        // High dwords: [hdr, w0, w1, w2] and [w3, w4, w5, w6].
        let hi = |x: __m128i, y: __m128i| {
            _mm_castps_si128(_mm_shuffle_ps::<0b11_01_11_01>(
                _mm_castsi128_ps(x),
                _mm_castsi128_ps(y),
            ))
        };
        // The tags: the high dwords shifted right by 8.
        let (h0, h1) = (_mm_srli_epi32::<8>(hi(a, b)), _mm_srli_epi32::<8>(hi(c, d)));
        let t = _mm_set1_epi32(tag as i32);
        let z = _mm_setzero_si128();
        let bits = |v: __m128i| _mm_movemask_ps(_mm_castsi128_ps(v)) as u32;
        let tags = bits(_mm_cmpeq_epi32(h0, t)) | bits(_mm_cmpeq_epi32(h1, t)) << 4;
        // A live way's tag is never 0; an empty way is all 0.
        let empty = bits(_mm_cmpeq_epi32(h0, z)) | bits(_mm_cmpeq_epi32(h1, z)) << 4;
        (tags >> 1, (empty >> 1) & 0x7f)
    }
}

/// [`match_mask`] with one atomic load per way (loom models, other architectures).
#[cfg(not(all(target_arch = "x86_64", not(loom))))]
#[inline(always)]
fn match_mask(bk: &Bucket, tag: u32) -> (u32, u32) {
    let (mut tags, mut empty) = (0, 0);
    for (i, w) in bk.way.iter().enumerate() {
        let e = w.load(Acquire);
        tags |= ((tag_of(e) == tag && e as u32 != 0) as u32) << i;
        empty |= ((e == 0) as u32) << i;
    }
    (tags, empty)
}

/// The first empty way of `bk`.
#[inline(always)]
fn free_in(bk: &Bucket) -> Option<usize> {
    let (_, empty) = match_mask(bk, u32::MAX);
    (empty != 0).then(|| empty.trailing_zeros() as usize)
}

/// The first occupied way of `bk` whose tag is `tag`.
#[inline(always)]
fn first_match(bk: &Bucket, tag: u32) -> Option<u64> {
    let mut m = match_mask(bk, tag).0;
    while m != 0 {
        let e = bk.way[m.trailing_zeros() as usize].load(Acquire);
        if tag_of(e) == tag && e as u32 != 0 {
            return Some(e);
        }
        m &= m - 1;
    }
    None
}

/// Looks for `key` in bucket `bk`.
#[inline(always)]
fn scan(
    bk: &Bucket,
    tag: u32,
    cells: &impl EntryRead,
    key: &impl ProbeKey,
    out: &mut ActionData,
) -> Option<(u32, u32, u64)> {
    let mut m = match_mask(bk, tag).0;
    while m != 0 {
        // The way may have changed since the tags were compared: its slot is checked by the
        // cell read (an empty way's slot is out of range), its tag with the generation after
        // the read (`word_matches`).
        let e = bk.way[m.trailing_zeros() as usize].load(Acquire);
        m &= m - 1;
        let s = slot_of(e);
        if let Some((gen, version)) = cells.read_match(s as usize, key, (e >> 32) as u32, tag, out)
        {
            return Some((s, gen, version));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alt_is_an_involution() {
        for nb in [2usize, 3, 7, 100, 1 << 18] {
            let x = Exact {
                buckets: Arena::new(0).unwrap(),
                nb: nb as u64,
                seed: 0,
                slots: Slots::new(0).unwrap(),
                insert_code: AtomicUsize::new(0),
                displace: Padded(Mutex::new(Vec::new())),
            };
            for b in [0, 1, nb / 2, nb - 1] {
                for tag in [0u32, 1, 0xabcdef, 0xffffff] {
                    let a = x.alt(b, tag);
                    assert!(a < nb);
                    assert_eq!(x.alt(a, tag), b);
                }
            }
        }
    }

    /// Fills `nb` buckets with distinct random keys until the first failure; returns the fill
    /// level of the ways then, and checks every key is still found.
    fn fill_to_failure(nb: usize, seed: u64) -> f64 {
        let ways = nb * WAYS;
        let x = Exact::with_buckets(ways, nb, seed).unwrap();
        let cells = Cells::new(ways, 8, 0, false).unwrap();
        let mut n = 0u64;
        loop {
            let kb = (n.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ seed).to_le_bytes();
            let k = crate::hash::Key::new(&kb);
            let r = x.insert(
                &cells,
                x.hash(&k),
                &k,
                |_| false,
                |s| {
                    let g = cells.lock(s as usize);
                    g.set_gen(1);
                    g.write_key(&kb);
                    1
                },
            );
            match r {
                Ins::Added(..) => n += 1,
                Ins::Present(_) | Ins::Replaced(..) => panic!("distinct keys"),
                Ins::Full => break,
            }
        }
        for i in 0..n {
            let kb = (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ seed).to_le_bytes();
            let k = crate::hash::Key::new(&kb);
            let mut out = ActionData::default();
            assert!(
                x.find(&cells, x.hash(&k), &k, &mut out).is_some(),
                "lost key {i}"
            );
        }
        n as f64 / ways as f64
    }

    /// A table holds the size it was declared with, whatever the seed: small tables have few
    /// buckets, where an unlucky hash leaves no cuckoo path (regression: a 16-entry table
    /// reported `Full` at its 15th distinct key in tests/model.rs).
    #[test]
    fn small_tables_hold_their_declared_size_for_every_seed() {
        let mut failures = Vec::new();
        for size in 1..=300usize {
            for seed in 0..200u64 {
                let x = Exact::new(size, seed.wrapping_mul(0x2545_f491_4f6c_dd1d)).unwrap();
                let cells = Cells::new(size, 8, 0, false).unwrap();
                for n in 0..size as u64 {
                    let kb = (n ^ (seed << 20)).to_le_bytes();
                    let k = crate::hash::Key::new(&kb);
                    let r = x.insert(
                        &cells,
                        x.hash(&k),
                        &k,
                        |_| false,
                        |s| {
                            let g = cells.lock(s as usize);
                            g.set_gen(1);
                            g.write_key(&kb);
                            1
                        },
                    );
                    if r == Ins::Full {
                        failures.push((size, seed, n));
                        break;
                    }
                }
            }
        }
        assert!(
            failures.is_empty(),
            "{} failures, first {:?}",
            failures.len(),
            &failures[..failures.len().min(5)]
        );
    }

    #[test]
    fn cuckoo_fills_past_95_percent_before_the_first_failure() {
        for (nb, seed) in [(64, 1), (1000, 2), (1000, 3), (20_000, 4)] {
            let fill = fill_to_failure(nb, seed);
            assert!(fill >= 0.95, "{nb} buckets: first failure at {fill:.3}");
        }
    }
}
