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

use std::sync::atomic::{fence, AtomicU64, Ordering::*};

use crate::action::ActionData;
use crate::error::TableError;

/// Deadline / schedule value meaning "no timer".
pub(crate) const NEVER: u64 = u64::MAX;

// Word offsets inside an entry's cell. An entry occupies whole 64-byte lines: the header and up
// to 16 bytes of parameters share one line, so a hit reads a single line of cell data.
const SEQ: usize = 0;
const VERSION: usize = 1;
/// action id (low 32 bits) | parameter length (high 32 bits)
const ACTION_LEN: usize = 2;
/// generation (low 32 bits) | expire profile (high 32 bits)
const GEN_PROFILE: usize = 3;
const DEADLINE: usize = 4;
const SCHED: usize = 5;
const PARAMS: usize = 6;

#[repr(C, align(64))]
#[derive(Default)]
struct Line([AtomicU64; 8]);

pub(crate) struct Cells {
    lines: Box<[Line]>,
    /// Words per entry, a multiple of 8.
    stride: usize,
    max_params: usize,
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

/// Spin a little, then give the core away: on 2 cores a preempted writer must get to run.
pub(crate) struct Backoff(u32);
impl Backoff {
    pub fn new() -> Self {
        Backoff(0)
    }
    #[inline]
    pub fn snooze(&mut self) {
        if self.0 < 64 {
            std::hint::spin_loop();
            self.0 += 1;
        } else {
            std::thread::yield_now();
        }
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
    /// `n` cells with room for `max_params` parameter bytes each.
    pub fn new(n: usize, max_params: usize) -> Result<Cells, TableError> {
        let stride = (PARAMS + max_params.div_ceil(8)).div_ceil(8) * 8;
        let nlines = n.checked_mul(stride / 8).ok_or(TableError::OutOfMemory)?;
        let cells = Cells {
            lines: alloc_slice(nlines, Line::default)?,
            stride,
            max_params,
        };
        for i in 0..n {
            cells.w(i, DEADLINE).store(NEVER, Relaxed);
            cells.w(i, SCHED).store(NEVER, Relaxed);
        }
        Ok(cells)
    }

    #[inline(always)]
    fn w(&self, i: usize, k: usize) -> &AtomicU64 {
        let x = i * self.stride + k;
        &self.lines[x >> 3].0[x & 7]
    }

    #[inline]
    pub fn cell(&self, i: usize) -> CellRef<'_> {
        CellRef {
            gen_profile: self.w(i, GEN_PROFILE),
            deadline: self.w(i, DEADLINE),
            sched: self.w(i, SCHED),
        }
    }

    /// Hint that cell `i` is about to be read.
    #[inline(always)]
    pub fn prefetch(&self, i: usize) {
        crate::index::prefetch(self.w(i, SEQ));
    }

    /// Consistent copy of cell `i`'s action data into `out`; returns (gen, version).
    #[inline]
    pub fn read(&self, i: usize, out: &mut ActionData) -> (u32, u64) {
        let seq = self.w(i, SEQ);
        let base = i * self.stride;
        let mut backoff = Backoff::new();
        loop {
            let s1 = seq.load(Acquire);
            if s1 & 1 == 1 {
                backoff.snooze();
                continue;
            }
            let al = self.w(i, ACTION_LEN).load(Relaxed);
            let gen = self.w(i, GEN_PROFILE).load(Relaxed) as u32;
            let version = self.w(i, VERSION).load(Relaxed);
            let len = ((al >> 32) as usize).min(self.max_params);
            let buf = out.params.resize(len);
            let mut chunks = buf.chunks_exact_mut(8);
            let mut k = base + PARAMS;
            for chunk in &mut chunks {
                chunk.copy_from_slice(&self.lines[k >> 3].0[k & 7].load(Relaxed).to_le_bytes());
                k += 1;
            }
            let rest = chunks.into_remainder();
            if !rest.is_empty() {
                let b = self.lines[k >> 3].0[k & 7].load(Relaxed).to_le_bytes();
                for (d, s) in rest.iter_mut().zip(b) {
                    *d = s;
                }
            }
            fence(Acquire);
            if seq.load(Relaxed) == s1 {
                out.action = al as u32;
                return (gen, version);
            }
            backoff.snooze();
        }
    }

    /// Exclusive write access to cell `i` (readers retry while it is held).
    #[inline]
    pub fn lock(&self, i: usize) -> CellGuard<'_> {
        let c = self.w(i, SEQ);
        let mut backoff = Backoff::new();
        loop {
            let s = c.load(Relaxed);
            if s & 1 == 0 && c.compare_exchange_weak(s, s + 1, Acquire, Relaxed).is_ok() {
                fence(Release);
                return CellGuard {
                    cells: self,
                    i,
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

/// Holder of a cell's write lock; releases it on drop.
pub(crate) struct CellGuard<'a> {
    cells: &'a Cells,
    i: usize,
    seq: u64,
}

impl CellGuard<'_> {
    fn w(&self, k: usize) -> &AtomicU64 {
        self.cells.w(self.i, k)
    }

    pub fn gen(&self) -> u32 {
        self.w(GEN_PROFILE).load(Relaxed) as u32
    }

    pub fn set_gen(&self, g: u32) {
        let gp = self.w(GEN_PROFILE);
        gp.store((gp.load(Relaxed) & !0xffff_ffff) | g as u64, SeqCst)
    }

    pub fn profile(&self) -> u32 {
        (self.w(GEN_PROFILE).load(Relaxed) >> 32) as u32
    }

    pub fn set_profile(&self, p: u32) {
        let gp = self.w(GEN_PROFILE);
        gp.store(
            (gp.load(Relaxed) & 0xffff_ffff) | ((p as u64) << 32),
            SeqCst,
        )
    }

    /// Stores parameters; the caller has checked `params.len() <= max_params`.
    pub fn write_params(&self, params: &[u8]) {
        debug_assert!(params.len() <= self.cells.max_params);
        for (j, chunk) in params.chunks(8).enumerate() {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            self.w(PARAMS + j).store(u64::from_le_bytes(b), Relaxed);
        }
        let al = self.w(ACTION_LEN);
        al.store(
            (al.load(Relaxed) & 0xffff_ffff) | ((params.len() as u64) << 32),
            Relaxed,
        );
    }

    pub fn write(&self, data: &ActionData) {
        self.write_params(&data.params);
        let al = self.w(ACTION_LEN);
        al.store(
            (al.load(Relaxed) & !0xffff_ffff) | data.action as u64,
            Relaxed,
        );
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
