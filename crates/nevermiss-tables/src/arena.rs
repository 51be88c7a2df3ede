//! Large zero-initialized arrays of atomics, allocated once per table.
//!
//! Arrays of 2 MiB or more are 2 MiB-aligned and advised as transparent huge pages
//! (`MADV_HUGEPAGE`) *before* they are first touched, so the bucket array and the entry cells of a
//! 2^20-entry table are mapped with a few dozen TLB entries instead of tens of thousands
//! (machine.md: DRAM latency 150–176 ns with huge pages, ~194 ns without). Where huge pages are
//! unavailable the advice is simply ignored.

#[cfg(not(loom))]
use std::alloc::{alloc, dealloc, Layout};
use std::ops::Deref;
#[cfg(not(loom))]
use std::ptr::NonNull;

use crate::error::TableError;
use crate::sync::Zeroed;

#[cfg(not(loom))]
const HUGE: usize = 2 << 20;

/// A fixed-size, zero-initialized `[T]`.
pub(crate) struct Arena<T: Zeroed> {
    #[cfg(not(loom))]
    ptr: NonNull<T>,
    #[cfg(not(loom))]
    len: usize,
    #[cfg(not(loom))]
    layout: Layout,
    #[cfg(loom)]
    v: Box<[T]>,
}

// SAFETY: an `Arena<T>` owns its `T`s like a `Box<[T]>` does.
unsafe impl<T: Zeroed + Send> Send for Arena<T> {}
// SAFETY: shared access only hands out `&[T]`, like `Box<[T]>`.
unsafe impl<T: Zeroed + Sync> Sync for Arena<T> {}

impl<T: Zeroed> Arena<T> {
    /// `len` zero values; `OutOfMemory` if the size overflows or the allocation fails.
    #[cfg(not(loom))]
    pub fn new(len: usize) -> Result<Arena<T>, TableError> {
        let bytes = len
            .checked_mul(std::mem::size_of::<T>())
            .ok_or(TableError::OutOfMemory)?;
        if bytes == 0 || std::mem::size_of::<T>() == 0 {
            return Ok(Arena {
                ptr: NonNull::dangling(),
                len: if std::mem::size_of::<T>() == 0 {
                    len
                } else {
                    0
                },
                layout: Layout::new::<()>(),
            });
        }
        let align = if bytes >= HUGE {
            HUGE
        } else {
            std::mem::align_of::<T>().max(64)
        };
        let size = bytes
            .checked_next_multiple_of(align)
            .ok_or(TableError::OutOfMemory)?;
        let layout = Layout::from_size_align(size, align).map_err(|_| TableError::OutOfMemory)?;
        // SAFETY: `layout` has a non-zero size.
        let raw = unsafe { alloc(layout) };
        let ptr = NonNull::new(raw.cast::<T>()).ok_or(TableError::OutOfMemory)?;
        #[cfg(target_os = "linux")]
        if align == HUGE {
            // SAFETY: the range is exactly the allocation made above, 2 MiB-aligned; madvise
            // only changes how the kernel backs it (a failure is harmless and ignored).
            unsafe {
                libc::madvise(raw.cast(), size, libc::MADV_HUGEPAGE);
            }
        }
        // SAFETY: `raw` is valid for `size >= bytes` bytes of writes; zero bytes are a valid `T`
        // (the `Zeroed` contract), so afterwards the first `len` elements are initialized.
        unsafe { std::ptr::write_bytes(raw, 0, size) };
        Ok(Arena { ptr, len, layout })
    }

    /// `len` zero values (loom build: an ordinary boxed slice of `T::zero()`).
    #[cfg(loom)]
    pub fn new(len: usize) -> Result<Arena<T>, TableError> {
        Ok(Arena {
            v: (0..len).map(|_| T::zero()).collect(),
        })
    }

    /// Bytes reserved for the array.
    pub fn bytes(&self) -> usize {
        #[cfg(not(loom))]
        {
            self.layout.size()
        }
        #[cfg(loom)]
        {
            std::mem::size_of_val(&*self.v)
        }
    }
}

impl<T: Zeroed> Deref for Arena<T> {
    type Target = [T];
    #[inline(always)]
    fn deref(&self) -> &[T] {
        #[cfg(not(loom))]
        {
            // SAFETY: `ptr` points to `len` initialized `T`s (or is dangling with `len` 0 / a
            // zero-sized `T`), owned by `self` and never mutated through a unique reference.
            unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
        }
        #[cfg(loom)]
        {
            &self.v
        }
    }
}

#[cfg(not(loom))]
impl<T: Zeroed> Drop for Arena<T> {
    fn drop(&mut self) {
        if self.layout.size() != 0 {
            // SAFETY: the elements are atomics without drop glue (the `Zeroed` types), and the
            // memory was allocated in `new` with exactly this layout.
            unsafe { dealloc(self.ptr.as_ptr().cast(), self.layout) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sync::{AtomicU64, Ordering::Relaxed};

    #[test]
    fn zeroed_small_and_huge() {
        for n in [0usize, 1, 100, (4 << 20) / 8 + 3] {
            let a: Arena<AtomicU64> = Arena::new(n).unwrap();
            assert_eq!(a.len(), n);
            assert!(a.iter().all(|x| x.load(Relaxed) == 0));
            if n > 0 {
                a[n - 1].store(7, Relaxed);
                assert_eq!(a[n - 1].load(Relaxed), 7);
                assert_eq!(a.as_ptr() as usize % 64, 0);
            }
        }
        assert!(Arena::<AtomicU64>::new(usize::MAX / 4).is_err());
    }
}
