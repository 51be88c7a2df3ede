//! Where one packet's ticks go, stage by stage: TSC stamps at the boundaries of a table
//! apply and an add-on-miss insert, for `nevermiss bench --mode latency` built with the cargo
//! feature `stage-stamps` (docs/bench.md "Stages"). Without the feature (the default) every
//! function here is empty and inlined away: the data path has no trace of it.
//!
//! A stamp is `lfence; rdtsc`: it waits until the loads before it have completed, so a
//! stage's ticks include the cache misses of its own loads. That also keeps the misses of
//! different stages from overlapping, so the stamped build's totals are higher than the plain
//! build's, and a store that misses is charged to the next locked instruction (which waits
//! for the store buffer to drain), not to the stage that issued it. Stamps are per thread.

/// The stamped points of a packet, in the order a packet that misses and inserts passes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum Stage {
    /// Generated code called the table's lookup (the compiled engine's helpers are stamped,
    /// not the interpreter's table applies).
    LookupIn,
    /// The lookup returned to generated code.
    LookupOut,
    /// Generated code called `add_entry` (compiled engine).
    AddIn,
    /// The table's add-on-miss function started.
    TableAdd,
    /// The inline insert is about to lock the key's primary bucket.
    LockIn,
    /// The primary bucket is locked.
    Locked,
    /// A free slot was taken for the entry.
    SlotTaken,
    /// The inline insert published the entry.
    Inserted,
    /// The inline insert did not apply; the out-of-line insert runs (a full primary bucket, no
    /// slot on this thread's free list, a way with the key's tag).
    OutOfLine,
    /// The table's add-on-miss function returned to the runtime.
    AddReturned,
    /// `add_entry` returned to generated code.
    AddOut,
}

/// Number of [`Stage`]s.
pub const STAGES: usize = 11;

/// Every stage in order, with the name reports use.
pub const ALL: [(Stage, &str); STAGES] = [
    (Stage::LookupIn, "lookup-in"),
    (Stage::LookupOut, "lookup-out"),
    (Stage::AddIn, "add-in"),
    (Stage::TableAdd, "table-add"),
    (Stage::LockIn, "lock-in"),
    (Stage::Locked, "locked"),
    (Stage::SlotTaken, "slot-taken"),
    (Stage::Inserted, "inserted"),
    (Stage::OutOfLine, "out-of-line"),
    (Stage::AddReturned, "add-returned"),
    (Stage::AddOut, "add-out"),
];

/// Whether this build stamps (the `stage-stamps` feature).
pub const ENABLED: bool = cfg!(all(feature = "stage-stamps", target_arch = "x86_64"));

#[cfg(all(feature = "stage-stamps", target_arch = "x86_64"))]
std::thread_local! {
    static STAMPS: std::cell::Cell<[u64; STAGES]> = const { std::cell::Cell::new([0; STAGES]) };
}

/// Records the TSC at `s` for this thread (the last pass wins).
#[inline(always)]
pub fn stamp(s: Stage) {
    #[cfg(all(feature = "stage-stamps", target_arch = "x86_64"))]
    {
        // SAFETY: lfence and rdtsc have no preconditions on x86-64.
        let t = unsafe {
            core::arch::x86_64::_mm_lfence();
            core::arch::x86_64::_rdtsc()
        };
        STAMPS.with(|c| {
            let mut v = c.get();
            v[s as usize] = t;
            c.set(v);
        });
    }
    #[cfg(not(all(feature = "stage-stamps", target_arch = "x86_64")))]
    let _ = s;
}

/// This thread's stamps since the last call (0: the stage was not passed), and clears them.
#[inline(always)]
pub fn take() -> [u64; STAGES] {
    #[cfg(all(feature = "stage-stamps", target_arch = "x86_64"))]
    {
        STAMPS.with(|c| c.replace([0; STAGES]))
    }
    #[cfg(not(all(feature = "stage-stamps", target_arch = "x86_64")))]
    {
        [0; STAGES]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_are_per_stage_and_taken_once() {
        let _ = take();
        stamp(Stage::LookupIn);
        stamp(Stage::AddOut);
        let t = take();
        if ENABLED {
            assert!(t[Stage::LookupIn as usize] > 0);
            assert!(t[Stage::AddOut as usize] >= t[Stage::LookupIn as usize]);
            assert_eq!(t[Stage::Locked as usize], 0, "not passed");
        } else {
            assert_eq!(t, [0; STAGES], "no stamps without the feature");
        }
        assert_eq!(take(), [0; STAGES], "cleared by take");
        assert_eq!(
            ALL.iter().map(|(s, _)| *s as usize).collect::<Vec<_>>(),
            (0..STAGES).collect::<Vec<_>>()
        );
    }
}
