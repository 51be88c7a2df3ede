//! The synchronization primitives the hand-made concurrent structures are built from: std's in a
//! normal build, loom's under `--cfg loom` so that `tests/loom.rs` can model-check every
//! interleaving of the bucket, cell and free-list protocols (see docs/tables.md, "Testing").

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{fence, AtomicU32, AtomicU64};
#[cfg(loom)]
pub(crate) use loom::sync::Mutex;
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{fence, AtomicU32, AtomicU64};
#[cfg(not(loom))]
pub(crate) use std::sync::Mutex;

pub(crate) use std::sync::atomic::Ordering;

/// Locks `m`, ignoring poisoning (no critical section leaves its data inconsistent on panic).
#[inline]
pub(crate) fn lock<T>(m: &Mutex<T>) -> impl std::ops::DerefMut<Target = T> + '_ {
    #[cfg(loom)]
    {
        m.lock().unwrap()
    }
    #[cfg(not(loom))]
    {
        m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The guard of a locked `Mutex<()>`.
#[cfg(loom)]
pub(crate) type MutexGuardOf<'a> = loom::sync::MutexGuard<'a, ()>;
/// The guard of a locked `Mutex<()>`.
#[cfg(not(loom))]
pub(crate) type MutexGuardOf<'a> = std::sync::MutexGuard<'a, ()>;

/// Locks a `Mutex<()>`, ignoring poisoning, and returns its named guard.
#[inline]
pub(crate) fn lock_unit(m: &Mutex<()>) -> MutexGuardOf<'_> {
    #[cfg(loom)]
    {
        m.lock().unwrap()
    }
    #[cfg(not(loom))]
    {
        m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
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
        #[cfg(loom)]
        {
            loom::thread::yield_now();
        }
        #[cfg(not(loom))]
        {
            if self.0 < 64 {
                std::hint::spin_loop();
                self.0 += 1;
            } else {
                std::thread::yield_now();
            }
        }
    }
}

/// An atomic that is valid when all its bytes are zero, so arrays of it can come from zeroed
/// memory ([`crate::arena::Arena`]).
///
/// # Safety
/// Implementors must be valid (and mean "zero") when every byte is 0.
pub(crate) unsafe trait Zeroed: Sized {
    /// A zero value (used where memory cannot simply be zeroed: under loom).
    #[cfg_attr(not(loom), allow(dead_code))]
    fn zero() -> Self;
}

// SAFETY: atomic integers have the layout of the integer; all-zero bytes are the value 0 (under
// loom the arena never uses zeroed memory, only `zero()`).
unsafe impl Zeroed for AtomicU64 {
    fn zero() -> Self {
        AtomicU64::new(0)
    }
}
// SAFETY: as above.
unsafe impl Zeroed for AtomicU32 {
    fn zero() -> Self {
        AtomicU32::new(0)
    }
}

/// Hint that `p` is about to be read.
#[inline(always)]
pub(crate) fn prefetch<T>(p: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint; it never faults or changes memory.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
            p as *const T as *const i8,
        )
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Hint that the bytes at `p` (code or data) will be needed soon: fetch them into the
/// second-level cache. Never faults, whatever `p` is.
#[inline(always)]
pub(crate) fn prefetch_l2(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint; it never faults or changes memory, for any address.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T1 }>(p as *const i8)
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Asymmetric fences: a process-wide memory barrier the rare side issues with Linux's
/// `membarrier(2)` (`MEMBARRIER_CMD_PRIVATE_EXPEDITED`), so the frequent side needs only a
/// compiler fence where a Dekker-style protocol would put a full fence on both sides. When
/// `membarrier` returns, every thread of the process has run a full memory barrier (a running
/// one by IPI, one not running at its context switch), which orders its earlier stores before
/// its later loads as the frequent side's own `fence(SeqCst)` would. This is the pattern of
/// liburcu's membarrier flavour and folly's `asymmetricLightBarrier`/`asymmetricHeavyBarrier`.
/// Never under loom (it cannot model the kernel's barrier): there both sides fence.
pub(crate) mod asym {
    /// `MEMBARRIER_CMD_PRIVATE_EXPEDITED` and its registration (linux/membarrier.h).
    #[cfg(all(target_os = "linux", not(loom)))]
    const PRIVATE_EXPEDITED: libc::c_int = 1 << 3;
    #[cfg(all(target_os = "linux", not(loom)))]
    const REGISTER_PRIVATE_EXPEDITED: libc::c_int = 1 << 4;

    #[cfg(all(target_os = "linux", not(loom)))]
    fn membarrier(cmd: libc::c_int) -> bool {
        // SAFETY: membarrier takes two integers and a CPU id it ignores without the RSEQ flag;
        // it touches no memory of ours.
        unsafe {
            libc::syscall(
                libc::SYS_membarrier,
                cmd,
                0 as libc::c_uint,
                0 as libc::c_int,
            ) == 0
        }
    }

    /// Registers the process for [`heavy`]; false where the kernel has no `membarrier` (before
    /// Linux 4.14, or blocked by a seccomp filter), and always false off Linux and under loom.
    /// Registering again is harmless.
    pub(crate) fn register() -> bool {
        #[cfg(all(target_os = "linux", not(loom)))]
        {
            membarrier(REGISTER_PRIVATE_EXPEDITED)
        }
        #[cfg(not(all(target_os = "linux", not(loom))))]
        {
            false
        }
    }

    /// The heavy side: a full barrier on every thread of the process. Only after [`register`]
    /// returned true; false if the kernel refused it anyway.
    pub(crate) fn heavy() -> bool {
        #[cfg(all(target_os = "linux", not(loom)))]
        {
            membarrier(PRIVATE_EXPEDITED)
        }
        #[cfg(not(all(target_os = "linux", not(loom))))]
        {
            false
        }
    }
}
