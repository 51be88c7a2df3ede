//! Action data: the action id chosen by the compiler plus the packed action parameters.
//!
//! Parameters are stored inline up to [`Params::INLINE`] bytes, so copying a hit's data into a
//! reused [`crate::Lookup`] never allocates for typical actions (ports, MACs, IPv6 addresses).

use std::fmt;
use std::ops::{Deref, DerefMut};

/// Action id meaning "no action set yet" (the default action of a fresh table).
pub const ACTION_NONE: u32 = u32::MAX;

/// Packed action parameters (the layout is the compiler's business; the table copies bytes).
///
/// Guarantee: `len() <= INLINE` never touches the heap; longer parameters reuse the heap buffer
/// once it has grown, so a `Params` that is written over and over allocates at most once.
#[derive(Clone, Default)]
pub struct Params {
    len: u32,
    inline: [u8; Params::INLINE],
    heap: Vec<u8>,
}

impl Params {
    /// Bytes held without a heap allocation.
    pub const INLINE: usize = 32;

    /// Empty parameters.
    #[inline]
    pub const fn new() -> Self {
        Params {
            len: 0,
            inline: [0; Params::INLINE],
            heap: Vec::new(),
        }
    }

    /// Copy of `bytes`.
    #[inline]
    pub fn from_slice(bytes: &[u8]) -> Self {
        let mut p = Params::new();
        p.set(bytes);
        p
    }

    /// Replaces the contents with `bytes`, reusing storage.
    #[inline]
    pub fn set(&mut self, bytes: &[u8]) {
        self.resize(bytes.len()).copy_from_slice(bytes);
    }

    /// Sets the length to `len` (contents unspecified) and returns the bytes for writing.
    #[inline]
    pub(crate) fn resize(&mut self, len: usize) -> &mut [u8] {
        self.len = len as u32;
        if len <= Self::INLINE {
            &mut self.inline[..len]
        } else {
            self.heap.resize(len, 0);
            &mut self.heap[..len]
        }
    }

    /// Sets the length to `len` and the contents to the little-endian bytes of `word(0)`,
    /// `word(1)`, ... (the last word truncated): the copy of an entry's parameters.
    #[inline(always)]
    pub(crate) fn fill_words(&mut self, len: usize, mut word: impl FnMut(usize) -> u64) {
        self.len = len as u32;
        if len <= Self::INLINE {
            for (j, d) in self
                .inline
                .chunks_exact_mut(8)
                .take(len.div_ceil(8))
                .enumerate()
            {
                d.copy_from_slice(&word(j).to_le_bytes());
            }
        } else {
            self.heap.resize(len, 0);
            for (j, d) in self.heap.chunks_mut(8).enumerate() {
                d.copy_from_slice(&word(j).to_le_bytes()[..d.len()]);
            }
        }
    }

    /// [`Params::fill_words`] for parameters of at most [`Params::INLINE`] bytes copied as `pw`
    /// (≤ 4, covering `len`) whole words: no loop, no bounds checks.
    #[inline(always)]
    pub(crate) fn fill_inline(
        &mut self,
        len: usize,
        pw: usize,
        mut word: impl FnMut(usize) -> u64,
    ) {
        debug_assert!(pw <= 4);
        // No clamp: callers pass a length read from a cell, at most `max_params` ≤ INLINE in a
        // consistent read (a torn one is overwritten by the retry; even a longer length would
        // only make `as_slice` panic on the empty heap buffer, never read out of bounds).
        self.len = len as u32;
        let [a, b, c, d] = self.inline.as_chunks_mut::<8>().0 else {
            return;
        };
        if pw > 0 {
            *a = word(0).to_le_bytes();
            if pw > 1 {
                *b = word(1).to_le_bytes();
                if pw > 2 {
                    *c = word(2).to_le_bytes();
                    if pw > 3 {
                        *d = word(3).to_le_bytes();
                    }
                }
            }
        }
    }

    /// Word `j` of the parameters as cells store them (little-endian; the last one's bytes
    /// past the length are unspecified), for `j < len().div_ceil(8)`.
    #[inline(always)]
    pub(crate) fn word(&self, j: usize) -> u64 {
        let len = self.len as usize;
        if len <= Self::INLINE {
            match self.inline.as_chunks::<8>().0.get(j) {
                Some(w) => u64::from_le_bytes(*w),
                None => 0,
            }
        } else {
            crate::hash::word_at(&self.heap[..len.min(self.heap.len())], j)
        }
    }

    /// The first 8 bytes as a little-endian word, the bytes past the length zero (the word
    /// [`crate::Table::update_word_at`] takes for parameters of at most 8 bytes).
    #[inline(always)]
    pub fn first_word(&self) -> u64 {
        let w = self.word(0);
        match self.len {
            0 => 0,
            n @ 1..=7 => w & ((1u64 << (8 * n)) - 1),
            _ => w,
        }
    }

    /// Bytes `off..off + n` as a big-endian number (the last 8 of them if `n > 8`), 0 when
    /// they are not all within the parameters: one load, no loop, for `n ≤ 8` bytes held
    /// inline.
    #[inline]
    pub fn be_at(&self, off: usize, n: usize) -> u64 {
        let len = self.len as usize;
        let Some(end) = off.checked_add(n).filter(|&e| e <= len) else {
            return 0;
        };
        if n == 0 {
            return 0;
        }
        if n <= 8 && len <= Self::INLINE {
            if let Some(w) = self.inline.get(off..off + 8) {
                let mut b = [0u8; 8];
                b.copy_from_slice(w);
                // The first `n` of the 8 bytes read are the value's (8n ≥ 8: the shift is < 64).
                return u64::from_be_bytes(b) >> (64 - 8 * n);
            }
        }
        let bytes = &self.as_slice()[off..end];
        if let Some(last) = bytes.last_chunk::<8>() {
            return u64::from_be_bytes(*last);
        }
        bytes.iter().fold(0, |v, &b| (v << 8) | u64::from(b))
    }

    /// The bytes as a slice.
    #[inline]
    pub fn as_slice(&self) -> &[u8] {
        let len = self.len as usize;
        if len <= Self::INLINE {
            &self.inline[..len]
        } else {
            &self.heap[..len]
        }
    }

    #[inline]
    fn as_mut_slice(&mut self) -> &mut [u8] {
        let len = self.len as usize;
        if len <= Self::INLINE {
            &mut self.inline[..len]
        } else {
            &mut self.heap[..len]
        }
    }
}

impl Deref for Params {
    type Target = [u8];
    #[inline]
    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl DerefMut for Params {
    #[inline]
    fn deref_mut(&mut self) -> &mut [u8] {
        self.as_mut_slice()
    }
}

impl PartialEq for Params {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}
impl Eq for Params {}

impl std::hash::Hash for Params {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_slice().hash(state)
    }
}

impl fmt::Debug for Params {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0x")?;
        for b in self.as_slice() {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl From<&[u8]> for Params {
    fn from(b: &[u8]) -> Self {
        Params::from_slice(b)
    }
}

impl From<Vec<u8>> for Params {
    fn from(b: Vec<u8>) -> Self {
        Params::from_slice(&b)
    }
}

impl<const N: usize> From<[u8; N]> for Params {
    fn from(b: [u8; N]) -> Self {
        Params::from_slice(&b)
    }
}

/// An action and its parameters, as stored in an entry or as a table's default action.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct ActionData {
    /// Action id assigned by the compiler.
    pub action: u32,
    /// Packed parameters.
    pub params: Params,
}

impl ActionData {
    /// Action `action` with parameters `params`.
    #[inline]
    pub fn new(action: u32, params: impl Into<Params>) -> Self {
        ActionData {
            action,
            params: params.into(),
        }
    }

    /// Action `action` without parameters.
    #[inline]
    pub fn bare(action: u32) -> Self {
        ActionData {
            action,
            params: Params::new(),
        }
    }
}

impl Default for ActionData {
    /// [`ACTION_NONE`] without parameters.
    fn default() -> Self {
        ActionData::bare(ACTION_NONE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_and_heap_round_trip() {
        let mut p = Params::from_slice(&[1, 2, 3]);
        assert_eq!(&*p, &[1, 2, 3]);
        let long: Vec<u8> = (0..100).collect();
        p.set(&long);
        assert_eq!(&*p, &long[..]);
        p.set(&[9]);
        assert_eq!(&*p, &[9]);
        assert_eq!(p, Params::from([9u8]));
        assert_eq!(format!("{p:?}"), "0x09");
    }

    /// `be_at` reads what a byte loop over the slice reads, inline and on the heap, in and
    /// out of bounds.
    #[test]
    fn be_at_is_the_bytes_big_endian() {
        fn slow(b: &[u8], off: usize, n: usize) -> u64 {
            let Some(s) = b.get(off..off + n) else {
                return 0;
            };
            let s = &s[s.len().saturating_sub(8)..];
            s.iter().fold(0, |v, &x| (v << 8) | u64::from(x))
        }
        for len in [0usize, 1, 3, 4, 9, 31, 32, 33, 40] {
            let bytes: Vec<u8> = (0..len as u8).map(|i| i.wrapping_mul(37) ^ 0x5a).collect();
            let mut p = Params::from_slice(&[0xff; 40]);
            p.set(&bytes);
            for off in 0..len + 2 {
                for n in 0..11 {
                    assert_eq!(p.be_at(off, n), slow(&bytes, off, n), "{len} {off} {n}");
                }
            }
        }
    }
}
