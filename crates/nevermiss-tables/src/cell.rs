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

use std::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering::*};

use crate::action::ActionData;
use crate::error::TableError;

/// Deadline / schedule value meaning "no timer".
pub(crate) const NEVER: u64 = u64::MAX;

#[derive(Default)]
pub(crate) struct Cell {
    seq: AtomicU64,
    version: AtomicU64,
    action: AtomicU32,
    len: AtomicU32,
    pub gen: AtomicU32,
    pub profile: AtomicU32,
    /// Expiry deadline (ns); `NEVER` without a timer. Written under the cell lock.
    pub deadline: AtomicU64,
    /// Deadline the timer wheel placed the entry for; `NEVER` when not in the wheel.
    pub sched: AtomicU64,
}

pub(crate) struct Cells {
    cells: Box<[Cell]>,
    words: Box<[AtomicU64]>,
    stride: usize,
    max_params: usize,
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
        let stride = max_params.div_ceil(8);
        let nwords = n.checked_mul(stride).ok_or(TableError::OutOfMemory)?;
        Ok(Cells {
            cells: alloc_slice(n, || Cell {
                deadline: AtomicU64::new(NEVER),
                sched: AtomicU64::new(NEVER),
                ..Cell::default()
            })?,
            words: alloc_slice(nwords, AtomicU64::default)?,
            stride,
            max_params,
        })
    }

    #[inline]
    pub fn cell(&self, i: usize) -> &Cell {
        &self.cells[i]
    }

    /// Consistent copy of cell `i`'s action data into `out`; returns (gen, version).
    #[inline]
    pub fn read(&self, i: usize, out: &mut ActionData) -> (u32, u64) {
        let c = &self.cells[i];
        let mut backoff = Backoff::new();
        loop {
            let s1 = c.seq.load(Acquire);
            if s1 & 1 == 1 {
                backoff.snooze();
                continue;
            }
            let action = c.action.load(Relaxed);
            let len = (c.len.load(Relaxed) as usize).min(self.max_params);
            let gen = c.gen.load(Relaxed);
            let version = c.version.load(Relaxed);
            let buf = out.params.resize(len);
            let words = &self.words[i * self.stride..];
            let mut chunks = buf.chunks_exact_mut(8);
            let mut wi = words.iter();
            for (chunk, w) in (&mut chunks).zip(&mut wi) {
                chunk.copy_from_slice(&w.load(Relaxed).to_le_bytes());
            }
            let rest = chunks.into_remainder();
            if let (false, Some(w)) = (rest.is_empty(), wi.next()) {
                let b = w.load(Relaxed).to_le_bytes();
                for (d, s) in rest.iter_mut().zip(b) {
                    *d = s;
                }
            }
            fence(Acquire);
            if c.seq.load(Relaxed) == s1 {
                out.action = action;
                return (gen, version);
            }
            backoff.snooze();
        }
    }

    /// Exclusive write access to cell `i` (readers retry while it is held).
    #[inline]
    pub fn lock(&self, i: usize) -> CellGuard<'_> {
        let c = &self.cells[i];
        let mut backoff = Backoff::new();
        loop {
            let s = c.seq.load(Relaxed);
            if s & 1 == 0
                && c.seq
                    .compare_exchange_weak(s, s + 1, Acquire, Relaxed)
                    .is_ok()
            {
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
    fn cell(&self) -> &Cell {
        &self.cells.cells[self.i]
    }

    pub fn gen(&self) -> u32 {
        self.cell().gen.load(Relaxed)
    }

    pub fn set_gen(&self, g: u32) {
        self.cell().gen.store(g, Relaxed)
    }

    /// Stores parameters; the caller has checked `params.len() <= max_params`.
    pub fn write_params(&self, params: &[u8]) {
        debug_assert!(params.len() <= self.cells.max_params);
        let words = &self.cells.words[self.i * self.cells.stride..];
        for (chunk, w) in params.chunks(8).zip(words) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            w.store(u64::from_le_bytes(b), Relaxed);
        }
        self.cell().len.store(params.len() as u32, Relaxed);
    }

    pub fn write(&self, data: &ActionData) {
        self.cell().action.store(data.action, Relaxed);
        self.write_params(&data.params);
    }

    pub fn version(&self) -> u64 {
        self.cell().version.load(Relaxed)
    }

    pub fn set_version(&self, v: u64) {
        self.cell().version.store(v, Relaxed)
    }
}

impl Drop for CellGuard<'_> {
    fn drop(&mut self) {
        self.cells.cells[self.i].seq.store(self.seq + 2, Release);
    }
}
