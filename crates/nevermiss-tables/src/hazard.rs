//! Data-plane parameter updates without the cell lock (docs/tables.md, "Data-plane updates
//! without a lock").
//!
//! A PNA data-plane update (`@__ref` write-back, [`crate::Table::update_params`]) of a table
//! created with [`crate::TableSpec::with_data_plane_updates`] stores an entry's parameters,
//! when they fit one word, with a plain store instead of taking the cell's sequence lock (a
//! `lock cmpxchg`: ~18 TSC ticks, the whole update's cost beyond a hit). One aligned word
//! cannot tear, and the action and length stay as they are, so a reader's sequence-locked copy
//! holds the old word or the new one. What the lock did besides is kept by **hazard words**,
//! the protocol of hazard pointers with asymmetric fences (folly's `hazptr`): the updater
//! publishes the slot it writes in a word of its own, then checks the cell; a writer that must
//! exclude it (a control-plane modify, which may change the action; a kill, after which the
//! slot may be reused by another key) changes the cell first, then waits until no hazard word
//! names the slot.
//!
//! Protocol (Dekker style, as [`crate::Gate`]): updater: hazard := slot, fence, load the
//! sequence word (odd: take the locked path), the generation (not the handle's: stale, no
//! write), the version if the caller gives the one its lookup read (another: a modify came
//! between, no write) and the length (another: the locked path), store the word, hazard :=
//! none (release). Excluder: change the cell (under its lock), fence, wait while any hazard names the
//! slot (acquire). Either the updater sees the change, or the excluder sees the hazard and
//! waits for the store to be done. Where `membarrier(2)` exists the updater's fence is a
//! compiler fence and the excluder's a process-wide barrier ([`crate::sync::asym`]): the
//! frequent side has no `lock`ed instruction; the rare side pays a system call (≈ 13 µs on this
//! 2-vCPU VM with the other core busy, ≈ 0.1 µs with nothing else running). Without
//! `membarrier` the updater takes the lock as before (a full fence would cost as much). Under
//! loom both sides fence, and `tests/loom.rs` checks that version.
//!
//! Each hazard word has one writer: the thread that owns statistics stripe `i` of the process
//! ([`crate::stats`]) writes word `i`; threads without a stripe take the locked path.

use crate::stats::STRIPES;
use crate::sync::{asym, fence, AtomicU64, Backoff, Ordering::*};
use std::sync::atomic::compiler_fence;

/// One thread's hazard word, on a line of its own.
#[repr(align(128))]
struct Word(AtomicU64);

/// How the two sides order their store before their load.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    /// No lock-free updates: every update takes the cell lock; excluders wait for nothing.
    Off,
    /// The updater's fence is a compiler fence, the excluder's a `membarrier`.
    Asymmetric,
    /// Both sides fence (loom; the protocol's check).
    #[cfg_attr(not(loom), allow(dead_code))]
    Symmetric,
}

/// A table's hazard words (module documentation).
pub(crate) struct Hazards {
    words: Box<[Word]>,
    mode: Mode,
}

impl Hazards {
    /// Hazard words for a table the data plane updates (`on`) where the process can issue
    /// `membarrier`; otherwise none, and [`Hazards::enabled`] is false. Under loom: symmetric.
    pub fn new(on: bool) -> Hazards {
        #[cfg(loom)]
        let mode = if on { Mode::Symmetric } else { Mode::Off };
        #[cfg(not(loom))]
        let mode = if on && asym::register() {
            Mode::Asymmetric
        } else {
            Mode::Off
        };
        let n = if mode == Mode::Off { 0 } else { STRIPES };
        Hazards {
            words: (0..n).map(|_| Word(AtomicU64::new(0))).collect(),
            mode,
        }
    }

    /// Whether updates may skip the cell lock.
    #[inline(always)]
    pub fn enabled(&self) -> bool {
        self.mode != Mode::Off
    }

    /// Publishes that the owner of word `i` is about to write slot `slot` (then the caller
    /// checks the cell). `i < STRIPES`, and only that word's owner calls this.
    #[inline(always)]
    pub fn protect(&self, i: usize, slot: u32) {
        if let Some(w) = self.words.get(i) {
            w.0.store(u64::from(slot) + 1, Relaxed);
        }
        self.light_fence();
    }

    /// The frequent side's fence of a Dekker pair with [`Hazards::heavy_fence`]: orders the
    /// caller's stores before its later loads against a thread that issues the heavy one
    /// (a compiler fence where the heavy side is a `membarrier`).
    #[inline(always)]
    pub fn light_fence(&self) {
        match self.mode {
            Mode::Symmetric => fence(SeqCst),
            _ => compiler_fence(SeqCst),
        }
    }

    /// The rare side's fence of the pair: after it, this thread's earlier stores and every
    /// other thread's stores before its last [`Hazards::light_fence`] are ordered before this
    /// thread's later loads. A process-wide barrier with lock-free writes on, a full fence
    /// otherwise (whose writers then use locks and `SeqCst`).
    pub fn heavy_fence(&self) {
        match self.mode {
            Mode::Asymmetric => {
                // membarrier(2) lists no error for a registered process and a valid command;
                // the fence is what is left should a kernel refuse it anyway.
                if !asym::heavy() {
                    fence(SeqCst);
                }
            }
            _ => fence(SeqCst),
        }
    }

    /// Ends word `i`'s protection: everything its owner wrote before happens before an
    /// excluder's wait that sees the word clear.
    #[inline(always)]
    pub fn clear(&self, i: usize) {
        if let Some(w) = self.words.get(i) {
            w.0.store(0, Release);
        }
    }

    /// The excluder's side, after it changed the cells of `slots` (each under its lock): waits
    /// until no updater can still be writing one of them with what it read before. Nothing to
    /// do (not even the barrier) when the table has no lock-free updates.
    pub fn wait_clear(&self, slots: &[u32]) {
        if self.mode == Mode::Off || slots.is_empty() {
            return;
        }
        self.heavy_fence();
        for w in self.words.iter() {
            let mut backoff = Backoff::new();
            loop {
                let h = w.0.load(Acquire);
                if h == 0 || !slots.iter().any(|&s| u64::from(s) + 1 == h) {
                    break;
                }
                backoff.snooze();
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// Lock-free updates are on exactly where asked for and the kernel has `membarrier`;
    /// waiting with no hazard set returns, with one set on another slot too.
    #[test]
    fn enabled_where_membarrier_is_and_waits_return() {
        assert!(!Hazards::new(false).enabled());
        let h = Hazards::new(true);
        assert_eq!(h.enabled(), asym::register());
        h.wait_clear(&[3]);
        if h.enabled() {
            h.protect(5, 4);
            h.wait_clear(&[3]);
            h.clear(5);
            h.wait_clear(&[4]);
        }
    }
}
