//! Entry cells: the mutable, data-plane-visible part of every entry (action, parameters,
//! version, generation, expiry state), kept outside the index lock.
//!
//! Each cell is a sequence lock (Lameter; Boehm, "Can seqlocks get along with programming
//! language memory models?", MSPC'12): a writer makes `seq` odd with a CAS (which also excludes
//! other writers), stores the fields, and makes it even again; a reader copies the fields and
//! retries when `seq` was odd or changed. All fields are atomics, so torn reads are detected and
//! retried, never observed. Guarantees: a reader gets either the complete old or the complete new
//! action data and version; writers of one cell are serialized; readers never block writers.
//!
//! The generation `gen` is odd while the slot holds a live entry and changes whenever the slot is
//! freed or reused, so an [`crate::EntryHandle`] held across a delete is detected as stale.

use crate::action::ActionData;
use crate::arena::Arena;
use crate::error::TableError;
use crate::hash::{Key, ProbeKey};
use crate::sync::{fence, AtomicU64, Backoff, Ordering::*};

/// Deadline / schedule value meaning "no timer".
pub(crate) const NEVER: u64 = u64::MAX;

// Word offsets inside an entry's cell. A cell is: the header words below, the deadline (tables
// with an idle timeout), the key (exact tables), the parameters, and the wheel's schedule word
// (tables with an idle timeout), rounded up to whole 64-byte lines. An exact entry with a 16-byte
// key and 16 bytes of parameters, without idle timeout, is one line: a hit reads one line of
// cell data and the key compare touches no other memory.
const SEQ: usize = 0;
const VERSION: usize = 1;
/// action id (low 32 bits) | parameter length (high 32 bits)
const ACTION_LEN: usize = 2;
/// generation (low 32 bits) | expire profile (high 32 bits)
const GEN_PROFILE: usize = 3;
const HEADER: usize = 4;
/// Offset of the stored key (exact tables).
const KEY: usize = HEADER;

pub(crate) struct Cells {
    /// All cells' words; the arena is 64-byte aligned and `stride` a multiple of 8, so every
    /// cell starts a cache line.
    words: Arena<AtomicU64>,
    /// Words per entry, a multiple of 8.
    stride: usize,
    max_params: usize,
    key_len: usize,
    params_off: usize,
    /// Offsets of the deadline and schedule words, or of `dummy` for tables without timers.
    timed: bool,
    deadline_off: usize,
    sched_off: usize,
    /// Lines to prefetch for a hit: up to the end of the parameters (at most 2).
    hit_lines: usize,
    /// Stand-ins for the timer words of tables without idle timeout.
    dummy: [AtomicU64; 2],
}

/// The timer fields of one cell, readable and writable without the cell lock.
pub(crate) struct CellRef<'a> {
    gen_profile: &'a AtomicU64,
    /// Expiry deadline (ns); `NEVER` without a timer. Written under the cell lock.
    pub deadline: &'a AtomicU64,
    /// Deadline the timer wheel placed the entry for; `NEVER` when not in the wheel.
    pub sched: &'a AtomicU64,
}

impl CellRef<'_> {
    /// Current generation (odd while live).
    pub fn gen(&self) -> u32 {
        self.gen_profile.load(SeqCst) as u32
    }
    /// Current expire profile id.
    pub fn profile(&self) -> u32 {
        (self.gen_profile.load(Relaxed) >> 32) as u32
    }
}

pub(crate) fn alloc_slice<T>(n: usize, f: impl FnMut() -> T) -> Result<Box<[T]>, TableError> {
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| TableError::OutOfMemory)?;
    v.resize_with(n, f);
    Ok(v.into_boxed_slice())
}

impl Cells {
    /// `n` cells with room for `max_params` parameter bytes each, a stored key of `key_len`
    /// bytes (0: keys are kept elsewhere) and, if `timed`, the deadline and wheel words.
    pub fn new(
        n: usize,
        key_len: usize,
        max_params: usize,
        timed: bool,
    ) -> Result<Cells, TableError> {
        // header | key | parameters | deadline | schedule: the key sits at a fixed offset, and
        // with small parameters the deadline an AUTO_DELETE lookup checks shares the first line.
        let key_off = HEADER;
        let params_off = key_off + key_len.div_ceil(8);
        let mut off = params_off + max_params.div_ceil(8);
        let deadline_off = off;
        let sched_off = off + 1;
        if timed {
            off += 2;
        }
        let stride = off.div_ceil(8) * 8;
        let nwords = n.checked_mul(stride).ok_or(TableError::OutOfMemory)?;
        let end = params_off + max_params.div_ceil(8);
        let cells = Cells {
            words: Arena::new(nwords)?,
            stride,
            max_params,
            key_len,
            params_off,
            timed,
            deadline_off,
            sched_off,
            hit_lines: end.div_ceil(8).min(2),
            dummy: [AtomicU64::new(NEVER), AtomicU64::new(NEVER)],
        };
        if timed {
            for i in 0..n {
                cells.w(i, deadline_off).store(NEVER, Relaxed);
                cells.w(i, sched_off).store(NEVER, Relaxed);
            }
        }
        Ok(cells)
    }

    #[inline(always)]
    fn w(&self, i: usize, k: usize) -> &AtomicU64 {
        &self.words[i * self.stride + k]
    }

    /// The words of cell `i`.
    #[inline(always)]
    fn c(&self, i: usize) -> &[AtomicU64] {
        let o = i * self.stride;
        &self.words[o..o + self.stride]
    }

    /// Bytes of cell memory.
    pub fn bytes(&self) -> usize {
        self.words.bytes()
    }

    /// Bytes one entry's cell takes.
    pub fn stride_bytes(&self) -> usize {
        self.stride * 8
    }

    #[inline]
    pub fn cell(&self, i: usize) -> CellRef<'_> {
        let (deadline, sched) = if self.timed {
            (self.w(i, self.deadline_off), self.w(i, self.sched_off))
        } else {
            (&self.dummy[0], &self.dummy[1])
        };
        CellRef {
            gen_profile: self.w(i, GEN_PROFILE),
            deadline,
            sched,
        }
    }

    /// Hint that cell `i` is about to be read by a lookup.
    #[inline(always)]
    pub fn prefetch(&self, i: usize) {
        self.hot().prefetch(i)
    }

    /// The fields a batched lookup reads for every key, copied out once per group.
    #[inline(always)]
    pub fn hot(&self) -> CellsHot<'_> {
        CellsHot {
            words: &self.words,
            stride: self.stride,
            params_off: self.params_off,
            max_params: self.max_params,
            two_lines: self.hit_lines > 1,
        }
    }

    /// Whether cell `i` stores exactly `key` (exact tables). Reads the key words without the
    /// cell lock: the caller validates the generation afterwards (see [`Cells::read_match`]).
    #[inline(always)]
    pub fn key_eq(&self, i: usize, key: &impl ProbeKey) -> bool {
        key.eq_words(&self.c(i)[KEY..])
    }

    /// The stored key of cell `i` (exact tables).
    pub fn key(&self, i: usize) -> Vec<u8> {
        let mut k = Vec::with_capacity(self.key_len.div_ceil(8) * 8);
        for j in 0..self.key_len.div_ceil(8) {
            k.extend_from_slice(&self.w(i, KEY + j).load(Relaxed).to_le_bytes());
        }
        k.truncate(self.key_len);
        k
    }

    /// See [`CellsHot::read_match`].
    #[inline(always)]
    pub fn read_match(
        &self,
        i: usize,
        key: &impl ProbeKey,
        g7: u64,
        out: &mut ActionData,
    ) -> Option<(u32, u64)> {
        self.hot().read_match(i, key, g7, out)
    }

    /// Consistent copy of cell `i`'s action data into `out`; returns (gen, version).
    #[inline(always)]
    pub fn read(&self, i: usize, out: &mut ActionData) -> (u32, u64) {
        let h = self.hot();
        h.read_cell(h.c(i), out)
    }

    /// Exclusive write access to cell `i` (readers retry while it is held).
    #[inline]
    pub fn lock(&self, i: usize) -> CellGuard<'_> {
        let c = &self.c(i)[SEQ];
        let mut backoff = Backoff::new();
        loop {
            let s = c.load(Relaxed);
            if s & 1 == 0 && c.compare_exchange_weak(s, s + 1, Acquire, Relaxed).is_ok() {
                fence(Release);
                return CellGuard {
                    cells: self,
                    c: self.c(i),
                    seq: s,
                };
            }
            backoff.snooze();
        }
    }

    pub fn max_params(&self) -> usize {
        self.max_params
    }
}

/// The cell array and its layout, copied out of [`Cells`] once per batch group: kept in
/// registers, they are not re-read after every atomic load of a lookup.
#[derive(Clone, Copy)]
pub(crate) struct CellsHot<'a> {
    words: &'a [AtomicU64],
    stride: usize,
    params_off: usize,
    max_params: usize,
    two_lines: bool,
}

impl CellsHot<'_> {
    /// The words of cell `i` (empty if `i` is out of range).
    #[inline(always)]
    fn c(&self, i: usize) -> &[AtomicU64] {
        let o = i * self.stride;
        self.words.get(o..o + self.stride).unwrap_or_default()
    }

    /// Hint that cell `i` is about to be read by a lookup.
    #[inline(always)]
    pub fn prefetch(&self, i: usize) {
        if let Some(w) = self.words.get(i * self.stride) {
            crate::sync::prefetch(w);
            if self.two_lines {
                if let Some(w) = self.words.get(i * self.stride + 8) {
                    crate::sync::prefetch(w);
                }
            }
        }
    }

    /// For an exact lookup that found slot `i` through a bucket word carrying generation bits
    /// `g7`: if the cell holds `key` and is the live entry the word was published for, copies
    /// its action data into `out` and returns (gen, version).
    ///
    /// Why this is enough without any lock: the key words of a cell change only when the slot is
    /// reused, and a reuse gives the cell a new generation before its key is written; the
    /// generation is read inside the seqlock after the key compare, so a key read from another
    /// incarnation shows up as a generation that differs from the bucket word's (modulo 128
    /// reuses of the slot during one lookup).
    #[inline(always)]
    pub fn read_match(
        &self,
        i: usize,
        key: &impl ProbeKey,
        g7: u64,
        out: &mut ActionData,
    ) -> Option<(u32, u64)> {
        let c = self.c(i);
        if !key.eq_words(c.get(KEY..).unwrap_or_default()) {
            return None;
        }
        let (gen, version) = self.read_cell(c, out);
        (gen & 1 == 1 && gen7(gen) == g7).then_some((gen, version))
    }

    /// Consistent copy of the action data of the cell whose words are `c` into `out`; returns
    /// (gen, version).
    #[inline(always)]
    fn read_cell(&self, c: &[AtomicU64], out: &mut ActionData) -> (u32, u64) {
        let Some(h) = c.first_chunk::<HEADER>() else {
            return (0, 0);
        };
        let p = c.get(self.params_off..).unwrap_or_default();
        let mut backoff = Backoff::new();
        loop {
            let s1 = h[SEQ].load(Acquire);
            if s1 & 1 == 1 {
                backoff.snooze();
                continue;
            }
            let al = h[ACTION_LEN].load(Relaxed);
            let gen = h[GEN_PROFILE].load(Relaxed) as u32;
            let version = h[VERSION].load(Relaxed);
            let len = ((al >> 32) as usize).min(self.max_params);
            out.params
                .fill_words(len, |j| p.get(j).map_or(0, |w| w.load(Relaxed)));
            fence(Acquire);
            if h[SEQ].load(Relaxed) == s1 {
                out.action = al as u32;
                return (gen, version);
            }
            backoff.snooze();
        }
    }
}

/// The generation bits a bucket word carries: bits 1..8 of the generation (bit 0 is the
/// live flag), so 128 reuses of a slot pass before the bits repeat.
#[inline(always)]
pub(crate) fn gen7(gen: u32) -> u64 {
    ((gen >> 1) & 0x7f) as u64
}

/// Holder of a cell's write lock; releases it on drop.
pub(crate) struct CellGuard<'a> {
    cells: &'a Cells,
    /// The cell's words.
    c: &'a [AtomicU64],
    seq: u64,
}

/// Stores the words of `bytes` (zero-padded) into `dst`.
#[inline(always)]
fn store_words(dst: &[AtomicU64], bytes: &[u8]) {
    let chunks = bytes.chunks_exact(8);
    let tail = chunks.remainder();
    let mut n = 0;
    for (d, c) in dst.iter().zip(chunks) {
        d.store(
            u64::from_le_bytes(c.try_into().unwrap_or_default()),
            Relaxed,
        );
        n += 1;
    }
    if !tail.is_empty() {
        if let Some(d) = dst.get(n) {
            let w = match bytes.last_chunk::<8>() {
                // The last 8 bytes, shifted so that only the partial word's bytes remain.
                Some(l) => u64::from_le_bytes(*l) >> (8 * (8 - tail.len())),
                None => Key::new(tail).word(0),
            };
            d.store(w, Relaxed);
        }
    }
}

impl CellGuard<'_> {
    fn w(&self, k: usize) -> &AtomicU64 {
        &self.c[k]
    }

    pub fn gen(&self) -> u32 {
        self.w(GEN_PROFILE).load(Relaxed) as u32
    }

    pub fn set_gen(&self, g: u32) {
        let gp = self.w(GEN_PROFILE);
        gp.store((gp.load(Relaxed) & !0xffff_ffff) | g as u64, Release)
    }

    pub fn profile(&self) -> u32 {
        (self.w(GEN_PROFILE).load(Relaxed) >> 32) as u32
    }

    pub fn set_profile(&self, p: u32) {
        let gp = self.w(GEN_PROFILE);
        gp.store(
            (gp.load(Relaxed) & 0xffff_ffff) | ((p as u64) << 32),
            Release,
        )
    }

    /// Makes the cell a fresh entry: new (odd) generation, `key` as prepared words (exact
    /// tables; `None` for none), `data`, version 0, expire profile `profile`. Returns the
    /// generation.
    #[inline(always)]
    pub fn init_k(&self, key: Option<&impl ProbeKey>, data: &ActionData, profile: u32) -> u32 {
        let gen = self.gen().wrapping_add(1) | 1;
        self.w(GEN_PROFILE)
            .store(gen as u64 | (profile as u64) << 32, Release);
        if let Some(k) = key {
            k.store_words(self.c.get(KEY..).unwrap_or_default());
        }
        let p = &data.params;
        debug_assert!(p.len() <= self.cells.max_params);
        store_words(&self.c[self.cells.params_off..], p);
        self.w(ACTION_LEN)
            .store(data.action as u64 | (p.len() as u64) << 32, Relaxed);
        self.w(VERSION).store(0, Relaxed);
        gen
    }

    /// Stores parameters; the caller has checked `params.len() <= max_params`.
    pub fn write_params(&self, params: &[u8]) {
        debug_assert!(params.len() <= self.cells.max_params);
        store_words(&self.c[self.cells.params_off..], params);
        let al = self.w(ACTION_LEN);
        al.store(
            (al.load(Relaxed) & 0xffff_ffff) | ((params.len() as u64) << 32),
            Relaxed,
        );
    }

    pub fn write(&self, data: &ActionData) {
        let p = &data.params;
        debug_assert!(p.len() <= self.cells.max_params);
        store_words(&self.c[self.cells.params_off..], p);
        self.w(ACTION_LEN)
            .store(data.action as u64 | (p.len() as u64) << 32, Relaxed);
    }

    /// Stores the entry's key (exact tables; the slot is not yet published).
    #[cfg(any(test, loom))]
    pub fn write_key(&self, key: &[u8]) {
        debug_assert_eq!(key.len(), self.cells.key_len);
        store_words(&self.c[KEY..], key);
    }

    pub fn version(&self) -> u64 {
        self.w(VERSION).load(Relaxed)
    }

    pub fn set_version(&self, v: u64) {
        self.w(VERSION).store(v, Relaxed)
    }
}

impl Drop for CellGuard<'_> {
    fn drop(&mut self) {
        self.w(SEQ).store(self.seq + 2, Release);
    }
}
