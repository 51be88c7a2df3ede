//! The direct-indexed exact engine, for tables whose packed key is at most [`MAX_KEY_BYTES`]
//! bytes (a port, a VLAN id, an EtherType, a next-hop index): the key's value is the index of
//! an array of words, each naming the entry's slot and generation, so a lookup is one array
//! read and one sequence-locked read of the entry's cell — no hash, no bucket probe, no key
//! compare (ESwitch's idea of specializing a table's code to its contents; Molnár et al.,
//! SIGCOMM 2016).
//!
//! The entries are the same sequence-locked cells ([`crate::cell`]) as the cuckoo engine's, from
//! the same slot allocator ([`crate::slots`]); only the index differs.
//!
//! An index word is `gen:32 | slot+1:31 | lock:1` (0: no entry). Its protocol:
//! - **Writers** of key `k` (insert, delete, replacement of an expired entry) hold the lock bit of
//!   `k`'s word ([`crate::exact`]'s bucket-header spin lock, on one word), so two threads adding
//!   the same key are serialized: one `Added`, the other `AlreadyPresent`. An insert writes the
//!   new entry's cell first (key, data, odd generation), then publishes its word with one release
//!   store, which also unlocks. A delete marks the cell dead (generation even, under the cell's
//!   lock) and then clears the word. A replacement (of an expired AUTO_DELETE entry) kills the
//!   cell, rewrites the same cell as the new entry (generation + 2 in all) and republishes the
//!   word with the new generation, all under the word's lock: the key owns its index, so its
//!   new entry needs no second slot and replacing never finds the table full. So whenever
//!   cell `s`'s generation is the `g` of the published word `(s, g)`, it holds the live entry
//!   of generation `g` of key `k`.
//! - **Readers** take no lock and never wait for an index writer (the lock bit is ignored). A
//!   word without a slot is a valid miss: there was no entry at the instant of the load. A word
//!   `(s, g)` is a hit if the cell's generation, read inside its sequence lock with the data, is
//!   `g`: the entry was live and published at that instant (the kill comes before the clear). A
//!   different generation means the entry was killed after the word was read, so there was an
//!   instant between the two reads without it: also a valid miss. No retry, ever; the full 32-bit
//!   generation makes a slot reused 2^31 times during one lookup the only way to be fooled.
//!
//! Keys are indexed by their big-endian value; the array has one word per value whose pad bits
//! (the unused high bits of each field's first byte) are zero up to the largest such value, so a
//! `bit<9>` port table has 512 words (4 KiB) and a `bit<16>` one 65 536 (512 KiB). A key with
//! non-zero pad bits beyond that (outside the key layout's contract) misses and cannot be added.

use std::sync::atomic::AtomicUsize;

use crate::action::ActionData;
use crate::arena::Arena;
use crate::cell::{Cells, EntryRead, LineCells};
use crate::error::TableError;
use crate::exact::{lock_hdr, Ins, Line};
use crate::hash::Words;
use crate::slots::Slots;
use crate::spec::Layout;
use crate::sync::{prefetch, AtomicU64, Ordering::*};

/// Largest packed key (bytes) of a table that gets the direct engine: at most 2^16 index words
/// (512 KiB), whatever the table's size.
pub(crate) const MAX_KEY_BYTES: usize = 2;

/// The lock bit of an index word.
const LOCK: u64 = 1;

/// What a direct table's `hash_key` sets besides the key's index (its low 32 bits, all a
/// lookup checks), so that no key's hash is 0 (0 means "not an exact key").
pub(crate) const HASH_BIT: u64 = 1 << 32;

/// The index word of the entry in slot `slot` with generation `gen` (unlocked).
#[inline(always)]
fn word(slot: u32, gen: u32) -> u64 {
    (gen as u64) << 32 | (slot as u64 + 1) << 1
}

/// Slot + 1 of an index word, 0 for none (the lock bit ignored).
#[inline(always)]
fn slot1(w: u64) -> usize {
    (w as u32 >> 1) as usize
}

/// The slot of an index word, if it names one.
#[inline(always)]
fn slot_of(w: u64) -> Option<u32> {
    (slot1(w) as u32).checked_sub(1)
}

/// A direct table's key, prepared once: its index in the array and the word its cell stores.
#[derive(Clone, Copy)]
pub(crate) struct DKey {
    pub index: usize,
    pub key: Words<1>,
}

impl DKey {
    /// The key `k` of exactly `KL` (1 or 2) bytes; `None` for another length.
    #[inline(always)]
    pub fn new<const KL: usize>(k: &[u8]) -> Option<DKey> {
        if k.len() != KL {
            return None;
        }
        match KL {
            1 => {
                let b = *k.first()?;
                Some(DKey {
                    index: b as usize,
                    key: Words::from_word(b as u64, 1),
                })
            }
            2 => {
                let le = u16::from_le_bytes(*k.first_chunk::<2>()?);
                Some(DKey {
                    index: le.swap_bytes() as usize,
                    key: Words::from_word(le as u64, 2),
                })
            }
            _ => None,
        }
    }

    /// The key `k` of 1 or 2 bytes.
    #[inline]
    pub fn of(k: &[u8]) -> Option<DKey> {
        match k.len() {
            1 => DKey::new::<1>(k),
            2 => DKey::new::<2>(k),
            _ => None,
        }
    }

    /// The key's `hash_key`.
    #[inline(always)]
    pub fn hash(&self) -> u64 {
        HASH_BIT | self.index as u64
    }
}

pub(crate) struct Direct {
    /// One word per key value: `gen:32 | slot+1:31 | lock:1`, 0 = no entry.
    idx: Arena<AtomicU64>,
    /// The entry slots' allocator.
    pub slots: Slots,
    /// Address of the code of the first instance of [`Direct::insert`] that ran (0 before), for
    /// [`crate::Table`]'s warming of the insert path; written once.
    pub insert_code: AtomicUsize,
}

impl Direct {
    /// Whether a table with this key layout can be direct (all fields exact is the caller's
    /// check): a key of 1 to [`MAX_KEY_BYTES`] bytes.
    pub fn fits(layout: &Layout) -> bool {
        (1..=MAX_KEY_BYTES).contains(&layout.key_len)
    }

    /// Index words a table with this key layout needs: one more than the largest key whose pad
    /// bits are zero (its big-endian value).
    pub fn indices(layout: &Layout) -> usize {
        let mut max = 0usize;
        for &(_, n, top) in &layout.fields {
            for j in 0..n {
                max = max << 8 | if j == 0 { top as usize } else { 0xff };
            }
        }
        max + 1
    }

    /// An index for keys of `layout` over `slots` entry slots (at most `Direct::indices` + 1).
    pub fn new(layout: &Layout, slots: usize) -> Result<Direct, TableError> {
        Ok(Direct {
            idx: Arena::new(Direct::indices(layout))?,
            slots: Slots::new(slots)?,
            insert_code: AtomicUsize::new(0),
        })
    }

    /// An index of `indices` key values over `slots` entry slots (the loom models).
    #[cfg(loom)]
    pub fn with_indices(indices: usize, slots: usize) -> Direct {
        Direct {
            idx: Arena::new(indices).expect("index"),
            slots: Slots::new(slots).expect("slots"),
            insert_code: AtomicUsize::new(0),
        }
    }

    /// Bytes of the index and the free lists.
    pub fn bytes(&self) -> usize {
        self.idx.bytes() + self.slots.bytes()
    }

    /// Whether `i` is the index of a key the table can hold (its pad bits are zero).
    #[inline(always)]
    pub fn holds(&self, i: usize) -> bool {
        i < self.idx.len()
    }

    // ------------------------------------------------------------------ lookups

    /// The live entry of key index `i`: copies its action data into `out` and returns (slot,
    /// gen, version). Lock-free; waits only for a writer in the middle of the entry's cell.
    #[inline]
    pub fn find(&self, cells: &Cells, i: usize, out: &mut ActionData) -> Option<(u32, u32, u64)> {
        let w = self.idx.get(i)?.load(Acquire);
        let s = slot_of(w)?;
        let (gen, version) = cells.read(s as usize, out);
        (gen == (w >> 32) as u32).then_some((s, gen, version))
    }

    /// The one-line-cell lookup's inline path: the hit's or (cell `default`) the default
    /// action's data and version stored straight into `out` and `version`. `Slow` when a writer
    /// interfered, the generation differs or the key cannot be held: run [`Direct::find`].
    #[inline(always)]
    pub fn lookup_line(
        &self,
        lc: &LineCells<'_>,
        default: usize,
        i: usize,
        out: &mut ActionData,
        version: &mut u64,
    ) -> Line {
        let Some(wd) = self.idx.get(i) else {
            return Line::Slow;
        };
        let w = wd.load(Acquire);
        let s = slot1(w).wrapping_sub(1);
        if s != usize::MAX {
            return match lc.try_read::<Words<1>>(s, out, version) {
                Some(gen) if gen == (w >> 32) as u32 => Line::Hit(s as u32, gen),
                _ => Line::Slow,
            };
        }
        match lc.try_read::<Words<1>>(default, out, version) {
            Some(_) => Line::Miss,
            None => Line::Slow,
        }
    }

    /// Hint: key index `i`'s word is about to be read.
    #[inline(always)]
    pub fn prefetch_index(&self, i: usize) {
        if let Some(w) = self.idx.get(i) {
            prefetch(w);
        }
    }

    /// Hint: the entry of key index `i` is about to be read (its word, likely at hand, names
    /// it). Prefetches the default action's cell `default` for a key without an entry.
    #[inline(always)]
    pub fn prefetch_entry(&self, cells: &impl EntryRead, i: usize, default: usize) {
        if let Some(w) = self.idx.get(i) {
            match slot_of(w.load(Relaxed)) {
                Some(s) => cells.prefetch(s as usize),
                None => cells.prefetch(default),
            }
        }
    }

    // ------------------------------------------------------------------ writers

    /// The common case of [`Direct::insert`], for inlining: key index `i` has no entry and no
    /// writer. Under its word's lock a slot is allocated, `init(slot)` writes the cell and
    /// returns its generation, and the word is published (which unlocks it). `None`: not the
    /// common case, or no free slot on this thread's stripe; nothing was changed.
    #[inline(always)]
    pub fn insert_fast(
        &self,
        cells: &Cells,
        i: usize,
        init: impl FnOnce(u32) -> u32,
    ) -> Option<(u32, u32)> {
        let wd = self.idx.get(i)?;
        if wd.load(Relaxed) != 0 || wd.compare_exchange(0, LOCK, Acquire, Relaxed).is_err() {
            return None;
        }
        if let Some(s) = self.slots.alloc_hint(cells) {
            let gen = init(s);
            wd.store(word(s, gen), Release);
            return Some((s, gen));
        }
        wd.store(0, Release);
        None
    }

    /// Adds an entry for key index `i` unless it has one. Under the word's lock: if an entry is
    /// present in slot `s`, `replace(s)` decides whether it is replaced (it must make the slot's
    /// generation even if it returns true): then `init(s)` rewrites that same slot and the word
    /// is republished with the new generation (`Replaced`: the key owns its index, so a
    /// replacement needs no second slot and never finds the table full); otherwise a slot is
    /// allocated, `init(slot)` writes the cell (key included) and returns its new generation,
    /// and the word is published. `i` must be held ([`Direct::holds`]; else `Full`).
    #[inline(never)]
    pub fn insert<R: FnOnce(u32) -> bool, I: FnOnce(u32) -> u32>(
        &self,
        i: usize,
        replace: R,
        init: I,
    ) -> Ins {
        if self.insert_code.load(Relaxed) == 0 {
            type F<R, I> = fn(&Direct, usize, R, I) -> Ins;
            let f: F<R, I> = Direct::insert::<R, I>;
            self.insert_code.store(f as usize, Relaxed);
        }
        let Some(wd) = self.idx.get(i) else {
            return Ins::Full;
        };
        let w = lock_hdr(wd);
        if let Some(s) = slot_of(w) {
            if !replace(s) {
                wd.store(w, Release);
                return Ins::Present(s);
            }
            // A reader that loaded the old word finds the cell's generation changed (killed,
            // then rewritten): a miss, valid at an instant between the kill and this store.
            let gen = init(s);
            wd.store(word(s, gen), Release);
            return Ins::Replaced(s, gen);
        }
        let Some(s) = self.slots.alloc() else {
            wd.store(0, Release);
            return Ins::Full;
        };
        let gen = init(s);
        wd.store(word(s, gen), Release);
        Ins::Added(s, gen)
    }

    /// Removes the entry of key index `i`, if `slot` is `None` or its slot, and if `cond(slot)`
    /// — run under the word's lock — returns true (it must make the slot's generation even,
    /// and announce the free: [`Slots::freeing`]). Returns the removed slot, to be released
    /// with [`Slots::freed`].
    pub fn remove(
        &self,
        i: usize,
        slot: Option<u32>,
        cond: impl FnOnce(u32) -> bool,
    ) -> Option<u32> {
        let wd = self.idx.get(i)?;
        let w = lock_hdr(wd);
        let r = slot_of(w).filter(|&s| slot.is_none_or(|x| x == s) && cond(s));
        wd.store(if r.is_some() { 0 } else { w }, Release);
        r
    }
}
