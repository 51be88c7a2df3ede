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

use crate::action::{ActionData, Params};
use crate::arena::Arena;
use crate::error::TableError;
use crate::hash::{word_at, ProbeKey};
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

/// The first 64-byte line of a cell: the header, then (exact tables) the key and parameters.
pub(crate) type Line = [AtomicU64; 8];

pub(crate) struct Cells {
    /// All cells' words; the arena is 64-byte aligned and `stride` a multiple of 8, so every
    /// cell starts a cache line.
    words: Arena<AtomicU64>,
    /// Words per entry, a multiple of 8.
    stride: usize,
    max_params: usize,
    key_len: usize,
    params_off: usize,
    /// Words of parameters (`ceil(max_params / 8)`).
    pwords: usize,
    /// Whether a cell is one 64-byte line (header, key, parameters and timer words) and its
    /// parameters fit [`Params::INLINE`]: lookups then read it as a [`Line`] at word offsets
    /// known in advance.
    one_line: bool,
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
            pwords: max_params.div_ceil(8),
            one_line: stride == 8 && max_params <= Params::INLINE,
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

    /// The generation and expire profile of cell `i` for a lock-free timer restart
    /// ([`crate::hazard`]; the caller's hazard on slot `i` already published); `None` while a
    /// writer holds the cell (the caller takes the lock instead).
    #[inline(always)]
    pub fn gen_profile_unlocked(&self, i: usize) -> Option<(u32, u32)> {
        let c = self.c(i);
        let (Some(seq), Some(gp)) = (c.get(SEQ), c.get(GEN_PROFILE)) else {
            return None;
        };
        if seq.load(Acquire) & 1 != 0 {
            return None;
        }
        let gp = gp.load(Acquire);
        Some((gp as u32, (gp >> 32) as u32))
    }

    /// The lock-free half of a data-plane update ([`crate::hazard`]): with the caller's hazard
    /// on slot `i` already published, stores `word` as the parameters of the live entry of
    /// generation `gen` (and `version`, if given) if it is not being written and its
    /// parameters are `len` bytes (`len` ≤ 8; `word` holds them as [`word_at`] gives them).
    /// `Some(true)`: stored; `Some(false)`: the entry is gone (a stale handle) or was modified;
    /// `None`: the caller takes the cell lock instead.
    #[inline(always)]
    pub fn store_params_unlocked(
        &self,
        i: usize,
        gen: u32,
        version: Option<u64>,
        word: u64,
        len: usize,
    ) -> Option<bool> {
        if len == 0 || len > 8 || len > self.max_params {
            return None;
        }
        let c = self.c(i);
        let (Some(seq), Some(ver), Some(gp), Some(al), Some(p)) = (
            c.get(SEQ),
            c.get(VERSION),
            c.get(GEN_PROFILE),
            c.get(ACTION_LEN),
            c.get(self.params_off),
        ) else {
            return None;
        };
        if seq.load(Acquire) & 1 != 0 {
            return None;
        }
        if gp.load(Acquire) as u32 != gen || version.is_some_and(|v| v != ver.load(Relaxed)) {
            return Some(false);
        }
        if (al.load(Relaxed) >> 32) as usize != len {
            return None;
        }
        p.store(word, Relaxed);
        Some(true)
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

    /// Hint that cell `i`'s first line (its header, where a writer starts) is about to be
    /// written.
    #[inline(always)]
    pub fn prefetch_first(&self, i: usize) {
        if let Some(w) = self.words.get(i.wrapping_mul(self.stride)) {
            crate::sync::prefetch(w);
        }
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

    /// The cells as lines, if every entry's action data lies in its first line
    /// ([`LineCells`]).
    #[inline(always)]
    pub fn lines(&self) -> Option<LineCells<'_>> {
        self.one_line.then(|| LineCells {
            lines: self.words.as_chunks::<8>().0,
            pwords: self.pwords,
        })
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

    /// Consistent copy of cell `i`'s action data into `out`; returns (gen, version).
    #[inline(always)]
    pub fn read(&self, i: usize, out: &mut ActionData) -> (u32, u64) {
        match self.lines() {
            Some(l) => l.read(i, self.params_off, out),
            None => {
                let h = self.hot();
                h.read_cell(h.c(i), out)
            }
        }
    }

    /// Exclusive write access to cell `i` (readers retry while it is held).
    #[inline(always)]
    pub fn lock(&self, i: usize) -> CellGuard<'_> {
        let c = self.c(i);
        let s = lock_seq(&c[SEQ]);
        CellGuard {
            cells: self,
            c,
            seq: s,
        }
    }

    /// [`Cells::lock`] of a slot the caller just allocated, to init it ([`lock_for_init`]).
    pub fn lock_fresh(&self, i: usize) -> CellGuard<'_> {
        let c = self.c(i);
        let s = lock_for_init(&c[SEQ], &c[GEN_PROFILE]);
        CellGuard {
            cells: self,
            c,
            seq: s,
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

/// How a lookup reads the entry a bucket word points to: [`CellsHot`] for every layout,
/// [`LineCells`] for entries whose action data lies in their first line.
pub(crate) trait EntryRead {
    /// For an exact lookup that found slot `i` through a bucket word whose high half is `hi`
    /// (`tag:24 | secondary:1 | gen:7`), looking for tag `tag`: if the cell holds `key` and is
    /// the live entry a word with that tag was published for ([`word_matches`]), copies its
    /// action data into `out` and returns (gen, version).
    ///
    /// Why this is enough without any lock: the key words of a cell change only when the slot
    /// is reused, and a reuse gives the cell a new generation before its key is written; the
    /// generation is read inside the seqlock after the key compare, so a key read from another
    /// incarnation shows up as a generation that differs from the bucket word's (modulo 128
    /// reuses of the slot during one lookup).
    fn read_match<K: ProbeKey>(
        &self,
        i: usize,
        key: &K,
        hi: u32,
        tag: u32,
        out: &mut ActionData,
    ) -> Option<(u32, u64)>;

    /// Hint that cell `i` is about to be read by a lookup.
    fn prefetch(&self, i: usize);

    /// [`EntryRead::read_match`] for an inline fast path: `Err(())` instead of waiting when a
    /// writer holds or took the cell meanwhile (the caller then runs the whole lookup again).
    #[inline(always)]
    fn quick_match<K: ProbeKey>(
        &self,
        i: usize,
        key: &K,
        hi: u32,
        tag: u32,
        out: &mut ActionData,
    ) -> Result<Option<(u32, u64)>, ()> {
        Ok(self.read_match(i, key, hi, tag, out))
    }
}

/// The cells of a table whose entries are one line each (exact tables with key words +
/// parameter words (+ 2 timer words) ≤ 4, e.g. a 13-byte key with ≤ 16 bytes of parameters): a
/// lookup reads that line at word offsets known in advance and copies the parameters as whole
/// words — no loop over the length, no bounds check but the slot's.
#[derive(Clone, Copy)]
pub(crate) struct LineCells<'a> {
    /// Cell `i` is line `i`.
    lines: &'a [Line],
    pwords: usize,
}

impl LineCells<'_> {
    /// Consistent copy of cell `i`'s action data into `out`, its parameters at word `po` of the
    /// line; returns (gen, version). A slot out of range reads as (0, 0), no data.
    #[inline(always)]
    pub fn read(&self, i: usize, po: usize, out: &mut ActionData) -> (u32, u64) {
        match self.lines.get(i) {
            Some(line) => self.read_line(line, po, self.pwords, out),
            None => (0, 0),
        }
    }

    /// Makes cell `i` (a slot just allocated, not reachable from the index) a fresh entry, as
    /// [`CellGuard::init_k`] does: under the cell's lock, a new odd generation and expire
    /// profile `profile`, the key, action `action` with parameters `params` (at most
    /// `max_params` bytes), version 0. Returns the generation; `None` (nothing written) for a
    /// slot out of range.
    #[inline(always)]
    pub fn init<K: ProbeKey>(
        &self,
        i: usize,
        key: &K,
        action: u32,
        params: &[u8],
        profile: u32,
    ) -> Option<u32> {
        if K::WORDS == 0 || K::WORDS > 4 {
            return None;
        }
        let line = self.lines.get(i)?;
        let s = lock_for_init(&line[SEQ], &line[GEN_PROFILE]);
        let gp = &line[GEN_PROFILE];
        let gen = (gp.load(Relaxed) as u32).wrapping_add(1) | 1;
        gp.store(gen as u64 | (profile as u64) << 32, Release);
        key.store_words(&line[KEY..]);
        // The table's parameter words (the line's words past them may be timer words).
        let (po, pw) = (KEY + K::WORDS, self.pwords);
        for j in 0..4 - K::WORDS {
            if j < pw {
                line[(po + j) & 7].store(word_at(params, j), Relaxed);
            }
        }
        line[ACTION_LEN].store(action as u64 | (params.len() as u64) << 32, Relaxed);
        line[VERSION].store(0, Relaxed);
        line[SEQ].store(s + 2, Release);
        Some(gen)
    }

    /// The lookup's read of cell `i` in an exact table whose keys are `K`s (`K::WORDS` in
    /// 1..=4) holding `key`, found through a bucket word whose high half xor the tag looked
    /// for, with bit 7 set, is `want` ([`word_matches`]): `Some(gen)` if it is that live
    /// entry, its action data and version stored into `out` and `version`; `None` otherwise
    /// or if a writer interfered (then `out` and `version` hold garbage: the caller runs the
    /// whole lookup again).
    #[inline(always)]
    pub fn try_hit<K: ProbeKey>(
        &self,
        i: usize,
        key: &K,
        want: u32,
        out: &mut ActionData,
        version: &mut u64,
    ) -> Option<u32> {
        if K::WORDS == 0 || K::WORDS > 4 {
            return None;
        }
        let line = self.lines.get(i)?;
        if !key.eq_words(&line[KEY..]) {
            return None;
        }
        let gen = try_read_line_into(line, KEY + K::WORDS, 4 - K::WORDS, out, version)?;
        ((gen as u8).rotate_right(1) as u32 == want).then_some(gen)
    }

    /// One attempt of [`LineCells::try_hit`]'s read of cell `i` without the key and generation
    /// checks, for cells whose keys are `K`s: the default action's read of a lookup that
    /// missed, and a direct table's read of an entry (whose generation the caller compares).
    /// `Some(gen)`, the action data and version stored into `out` and `version`; `None` if a
    /// writer held or took the cell meanwhile (then they hold garbage).
    #[inline(always)]
    pub fn try_read<K: ProbeKey>(
        &self,
        i: usize,
        out: &mut ActionData,
        version: &mut u64,
    ) -> Option<u32> {
        try_read_line_into(
            self.lines.get(i)?,
            KEY + K::WORDS,
            4 - K::WORDS,
            out,
            version,
        )
    }

    /// [`CellsHot::read_cell`] of the line `line`, parameters at word `po`, copying `pw` words
    /// (`po + pw <= 8`, `pw <= 4`, covering the parameters). Exact lookups copy every word from
    /// the parameters to the end of the line, a number known at compile time: the words past
    /// the parameters are the same line's padding or timer words, read as atomics inside the
    /// sequence lock like the rest, and past the length, so never seen.
    #[inline(always)]
    fn read_line(&self, line: &Line, po: usize, pw: usize, out: &mut ActionData) -> (u32, u64) {
        match try_read_line(line, po, pw, out) {
            Some(r) => r,
            None => read_line_slow(line, po, pw, out),
        }
    }
}

/// One attempt of a sequence-locked read of a line's action data (see
/// [`LineCells::read_line`]); `None` if a writer was active or came meanwhile.
#[inline(always)]
fn try_read_line(line: &Line, po: usize, pw: usize, out: &mut ActionData) -> Option<(u32, u64)> {
    let s1 = line[SEQ].load(Acquire);
    if s1 & 1 != 0 {
        return None;
    }
    let al = line[ACTION_LEN].load(Relaxed);
    let gen = line[GEN_PROFILE].load(Relaxed) as u32;
    let version = line[VERSION].load(Relaxed);
    // ≤ max_params in a consistent read; a torn one is overwritten by the retry.
    let len = (al >> 32) as usize;
    // `po + j < 8` for `j < pw` (`one_line`); the mask only spares a bounds check.
    out.params
        .fill_inline(len, pw, |j| line[(po + j) & 7].load(Relaxed));
    fence(Acquire);
    if line[SEQ].load(Relaxed) != s1 {
        return None;
    }
    out.action = al as u32;
    Some((gen, version))
}

/// [`try_read_line`] for a lookup's inline path, which needs few registers: the action, the
/// parameters and the version are stored into `out` and `version` as they are read (the
/// caller discards them, running the whole lookup again, unless this returns `Some`); returns
/// the generation, `None` if a writer was active or came meanwhile.
#[inline(always)]
fn try_read_line_into(
    line: &Line,
    po: usize,
    pw: usize,
    out: &mut ActionData,
    version: &mut u64,
) -> Option<u32> {
    let s1 = line[SEQ].load(Acquire);
    if s1 & 1 != 0 {
        return None;
    }
    let al = line[ACTION_LEN].load(Relaxed);
    out.action = al as u32;
    out.params.fill_inline((al >> 32) as usize, pw, |j| {
        line[(po + j) & 7].load(Relaxed)
    });
    *version = line[VERSION].load(Relaxed);
    let gen = line[GEN_PROFILE].load(Relaxed) as u32;
    fence(Acquire);
    (line[SEQ].load(Relaxed) == s1).then_some(gen)
}

/// [`LineCells::read_line`] after a first attempt met a writer: wait, retry.
#[cold]
#[inline(never)]
fn read_line_slow(line: &Line, po: usize, pw: usize, out: &mut ActionData) -> (u32, u64) {
    loop {
        wait_writer(&line[SEQ]);
        if let Some(r) = try_read_line(line, po, pw, out) {
            return r;
        }
    }
}

/// A seqlock reader met a writer: waits until the cell's sequence word is even again.
#[cold]
#[inline(never)]
fn wait_writer(seq: &AtomicU64) {
    let mut backoff = Backoff::new();
    while seq.load(Relaxed) & 1 == 1 {
        backoff.snooze();
    }
}

impl EntryRead for LineCells<'_> {
    #[inline(always)]
    fn read_match<K: ProbeKey>(
        &self,
        i: usize,
        key: &K,
        hi: u32,
        tag: u32,
        out: &mut ActionData,
    ) -> Option<(u32, u64)> {
        if K::WORDS == 0 || K::WORDS > 4 {
            // Never: a table whose key words + parameter words fit in 4 has keys of ≤ 4 words,
            // and its lookups prepare keys as `Words`.
            return None;
        }
        let line = self.lines.get(i)?;
        if !key.eq_words(&line[KEY..]) {
            return None;
        }
        let (gen, version) = self.read_line(line, KEY + K::WORDS, 4 - K::WORDS, out);
        word_matches(hi, tag, gen).then_some((gen, version))
    }

    #[inline(always)]
    fn prefetch(&self, i: usize) {
        if let Some(l) = self.lines.get(i) {
            crate::sync::prefetch(l);
        }
    }

    #[inline(always)]
    fn quick_match<K: ProbeKey>(
        &self,
        i: usize,
        key: &K,
        hi: u32,
        tag: u32,
        out: &mut ActionData,
    ) -> Result<Option<(u32, u64)>, ()> {
        if K::WORDS == 0 || K::WORDS > 4 {
            return Ok(None);
        }
        let Some(line) = self.lines.get(i) else {
            return Ok(None);
        };
        if !key.eq_words(&line[KEY..]) {
            return Ok(None);
        }
        let (gen, version) = try_read_line(line, KEY + K::WORDS, 4 - K::WORDS, out).ok_or(())?;
        Ok(word_matches(hi, tag, gen).then_some((gen, version)))
    }
}

impl EntryRead for CellsHot<'_> {
    #[inline(always)]
    fn read_match<K: ProbeKey>(
        &self,
        i: usize,
        key: &K,
        hi: u32,
        tag: u32,
        out: &mut ActionData,
    ) -> Option<(u32, u64)> {
        CellsHot::read_match(self, i, key, hi, tag, out)
    }

    #[inline(always)]
    fn prefetch(&self, i: usize) {
        CellsHot::prefetch(self, i)
    }
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

    /// [`EntryRead::read_match`] for every cell layout.
    #[inline(always)]
    pub fn read_match<K: ProbeKey>(
        &self,
        i: usize,
        key: &K,
        hi: u32,
        tag: u32,
        out: &mut ActionData,
    ) -> Option<(u32, u64)> {
        let c = self.c(i);
        if !key.eq_words(c.get(KEY..).unwrap_or_default()) {
            return None;
        }
        let (gen, version) = self.read_cell(c, out);
        word_matches(hi, tag, gen).then_some((gen, version))
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

/// [`lock_seq`] for the init of a slot the caller just took from the free list: a cell that
/// never held an entry (sequence and generation words still 0) is locked with a plain store.
/// No other writer can touch it: the only writers besides the slot's owner are holders of a
/// handle of an earlier entry of the slot (docs/tables.md, "Atomics an uncontended data-plane
/// insert performs"), and it has had none (an entry's generation is odd, and a slot's earlier
/// stores reach its next owner through the free list's release/acquire). Saves the `lock
/// cmpxchg` of every insert into a slot used for the first time (~18 TSC ticks).
#[inline(always)]
fn lock_for_init(seq: &AtomicU64, gen_profile: &AtomicU64) -> u64 {
    if seq.load(Relaxed) == 0 && gen_profile.load(Relaxed) as u32 == 0 {
        seq.store(1, Relaxed);
        fence(Release);
        0
    } else {
        lock_seq(seq)
    }
}

/// Locks a cell's sequence word against other writers (makes it odd); returns its value before
/// locking. The writer's field stores follow; unlocking stores that value + 2 (release).
#[inline(always)]
fn lock_seq(seq: &AtomicU64) -> u64 {
    let s = seq.load(Relaxed);
    let s = if s & 1 == 0 && seq.compare_exchange(s, s + 1, Acquire, Relaxed).is_ok() {
        s
    } else {
        lock_slow(seq)
    };
    // Orders the locking store before the writer's field stores (Boehm's seqlock writer; free
    // on x86).
    fence(Release);
    s
}

/// Locks a cell's sequence word against other writers (contended case); returns its value
/// before locking.
#[cold]
#[inline(never)]
fn lock_slow(seq: &AtomicU64) -> u64 {
    let mut backoff = Backoff::new();
    loop {
        let s = seq.load(Relaxed);
        if s & 1 == 0
            && seq
                .compare_exchange_weak(s, s + 1, Acquire, Relaxed)
                .is_ok()
        {
            return s;
        }
        backoff.snooze();
    }
}

/// Whether a cell whose generation is `gen` holds the live entry that a bucket word with high
/// half `hi` (`tag:24 | secondary:1 | gen:7`) was published for, with tag `tag`: the cell is
/// live, and the word's tag and generation bits are `tag` and the cell's. (Checked after the
/// cell's sequence-locked read, this also covers a way word that changed since the bucket's
/// tags were compared.)
#[inline(always)]
pub(crate) fn word_matches(hi: u32, tag: u32, gen: u32) -> bool {
    (gen as u8).rotate_right(1) as u32 == word_want(hi, tag)
}

/// What [`word_matches`] compares a cell's rotated generation byte with.
#[inline(always)]
pub(crate) fn word_want(hi: u32, tag: u32) -> u32 {
    // The low byte of `gen` rotated right by one is `live:1 | gen:7`; the word's tag bits
    // xor `tag` are zero exactly when the tags match, and its secondary bit is set to stand for
    // `live`: one compare for both.
    (hi ^ tag << 8) | 0x80
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
    /// tables; `None` for none), action `action` with `len` parameter bytes whose words
    /// `word(j)` gives (`len <= max_params`), version 0, expire profile `profile`. Returns the
    /// generation.
    #[inline(always)]
    pub fn init_k(
        &self,
        key: Option<&impl ProbeKey>,
        action: u32,
        len: usize,
        word: impl Fn(usize) -> u64,
        profile: u32,
    ) -> u32 {
        let gp = self.w(GEN_PROFILE);
        let gen = (gp.load(Relaxed) as u32).wrapping_add(1) | 1;
        gp.store(gen as u64 | (profile as u64) << 32, Release);
        if let Some(k) = key {
            k.store_words(self.c.get(KEY..).unwrap_or_default());
        }
        self.put_params(len, word);
        self.w(ACTION_LEN)
            .store(action as u64 | (len as u64) << 32, Relaxed);
        self.w(VERSION).store(0, Relaxed);
        gen
    }

    /// Stores `len` parameter bytes given as words (the last one's bytes past `len` are
    /// unspecified: nothing reads past the length); the caller checked `len <= max_params`.
    #[inline(always)]
    fn put_params(&self, len: usize, word: impl Fn(usize) -> u64) {
        debug_assert!(len <= self.cells.max_params);
        let p = self.c.get(self.cells.params_off..).unwrap_or_default();
        for (j, d) in p.iter().take(len.div_ceil(8)).enumerate() {
            d.store(word(j), Relaxed);
        }
    }

    /// Stores parameters; the caller has checked `params.len() <= max_params`.
    #[inline(always)]
    pub fn write_params(&self, params: &[u8]) {
        self.put_params(params.len(), |j| word_at(params, j));
        let al = self.w(ACTION_LEN);
        al.store(
            (al.load(Relaxed) & 0xffff_ffff) | ((params.len() as u64) << 32),
            Relaxed,
        );
    }

    pub fn write(&self, data: &ActionData) {
        let p = &data.params;
        self.put_params(p.len(), |j| p.word(j));
        self.w(ACTION_LEN)
            .store(data.action as u64 | (p.len() as u64) << 32, Relaxed);
    }

    /// Stores the entry's key (exact tables; the slot is not yet published).
    #[cfg(any(test, loom))]
    pub fn write_key(&self, key: &[u8]) {
        debug_assert_eq!(key.len(), self.cells.key_len);
        for (j, d) in self.c[KEY..].iter().take(key.len().div_ceil(8)).enumerate() {
            d.store(word_at(key, j), Relaxed);
        }
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

#[cfg(test)]
mod word_match_tests {
    use super::*;

    /// `word_matches` is exactly: live, same tag, same 7 generation bits (secondary ignored).
    #[test]
    fn word_matches_is_tag_generation_and_liveness() {
        for gen in [0u32, 1, 2, 3, 0x7f, 0x80, 0xff, 0x101, 0xfffe, 0xffff_ffff] {
            for g7 in [0u32, 1, 0x3f, 0x7f] {
                for sec in [0u32, 0x80] {
                    for (wtag, tag) in [
                        (1u32, 1u32),
                        (0xabcdef, 0xabcdef),
                        (1, 2),
                        (0xffffff, 0x7fffff),
                    ] {
                        let hi = wtag << 8 | sec | g7;
                        let want = gen & 1 == 1 && wtag == tag && (gen >> 1) & 0x7f == g7;
                        assert_eq!(
                            word_matches(hi, tag, gen),
                            want,
                            "{hi:#x} {tag:#x} {gen:#x}"
                        );
                    }
                }
            }
        }
    }
}
