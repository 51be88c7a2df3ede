//! Key hashing: a seeded folded-multiply hash over 8-byte words, with optional masking so a
//! tuple's hash of `key & mask` needs no temporary buffer.

use crate::sync::{AtomicU64, Ordering::Relaxed};

const K0: u64 = 0x9e37_79b9_7f4a_7c15;
const K1: u64 = 0xbf58_476d_1ce4_e5b9;

#[inline(always)]
fn fold(a: u64, b: u64) -> u64 {
    let r = (a as u128).wrapping_mul(b as u128);
    (r as u64) ^ ((r >> 64) as u64)
}

/// Little-endian load of exactly 8 bytes.
#[inline(always)]
fn word8(c: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&c[..8]);
    u64::from_le_bytes(w)
}

/// Load of a 1..=7-byte tail, injective for a fixed length, and bytewise: every output byte is
/// one input byte, so `tail(k) & tail(m) == tail(k & m)`.
#[inline(always)]
fn tail(b: &[u8]) -> u64 {
    let n = b.len();
    if n >= 4 {
        let lo = u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u64;
        let hi = u32::from_le_bytes([b[n - 4], b[n - 3], b[n - 2], b[n - 1]]) as u64;
        lo | (hi << 32)
    } else if n > 0 {
        (b[0] as u64) | ((b[n / 2] as u64) << 8) | ((b[n - 1] as u64) << 16)
    } else {
        0
    }
}

/// The zero-padded little-endian word of a 0..=7-byte slice (the form cells store keys and
/// parameters in): two overlapping 4-byte loads, or three byte loads, instead of a byte loop.
#[inline(always)]
pub(crate) fn short_word(b: &[u8]) -> u64 {
    let n = b.len();
    if n >= 4 {
        let lo = u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u64;
        if n == 4 {
            // The commonest length (an IPv4 address): one load.
            return lo;
        }
        let hi = u32::from_le_bytes([b[n - 4], b[n - 3], b[n - 2], b[n - 1]]) as u64;
        // The two loads overlap by 8 - n bytes, which are equal in both.
        lo | hi << (8 * (n - 4))
    } else if n > 0 {
        (b[0] as u64) | (b[n / 2] as u64) << (8 * (n / 2)) | (b[n - 1] as u64) << (8 * (n - 1))
    } else {
        0
    }
}

/// Word `j` of `b` as cells store it (little-endian, the last one zero-padded); 0 past the end.
#[inline(always)]
pub(crate) fn word_at(b: &[u8], j: usize) -> u64 {
    let len = b.len();
    let o = j * 8;
    if o + 8 <= len {
        word8(&b[o..])
    } else if o >= len {
        0
    } else if len >= 8 {
        // The last 8 bytes, shifted so that only the partial word's bytes remain.
        word8(&b[len - 8..]) >> (8 * (o + 8 - len))
    } else {
        short_word(b)
    }
}

/// Hash of `key` (masked by `mask` when given; `mask.len() == key.len()`), seeded with `seed`.
/// Guarantee: `hash(k, Some(m), s) == hash(k & m, None, s)`.
#[inline]
pub(crate) fn hash(key: &[u8], mask: Option<&[u8]>, seed: u64) -> u64 {
    let mut h = seed ^ (key.len() as u64).wrapping_mul(K1);
    let kc = key.chunks_exact(8);
    let kt = kc.remainder();
    match mask {
        None => {
            for c in kc {
                h = fold(h ^ word8(c), K0);
            }
            if !kt.is_empty() {
                h = fold(h ^ tail(kt), K0);
            }
        }
        Some(m) => {
            let mc = m.chunks_exact(8);
            let mt = mc.remainder();
            for (c, mc) in kc.zip(mc) {
                h = fold(h ^ (word8(c) & word8(mc)), K0);
            }
            if !kt.is_empty() {
                h = fold(h ^ (tail(kt) & tail(mt)), K0);
            }
        }
    }
    fold(h, K1)
}

/// Word of a key of at most 8 bytes such that `hash_small(load_small(k) & load_small(m), ..)`
/// equals `hash(k, Some(m), ..)` and word equality is byte equality.
#[inline(always)]
pub(crate) fn load_small(b: &[u8]) -> u64 {
    if b.len() == 8 {
        word8(b)
    } else {
        tail(b)
    }
}

/// [`hash`] of a key of `len` (1..=8) bytes given as its [`load_small`] word.
#[inline(always)]
pub(crate) fn hash_small(w: u64, len: usize, seed: u64) -> u64 {
    let h = seed ^ (len as u64).wrapping_mul(K1);
    fold(fold(h ^ w, K0), K1)
}

/// `stored == key & mask` (bytewise), or `stored == key` without a mask.
#[inline]
pub(crate) fn masked_eq(stored: &[u8], key: &[u8], mask: Option<&[u8]>) -> bool {
    if stored.len() != key.len() {
        return false;
    }
    let (sc, kc) = (stored.chunks_exact(8), key.chunks_exact(8));
    let (st, kt) = (sc.remainder(), kc.remainder());
    match mask {
        None => {
            let mut diff = 0;
            for (s, k) in sc.zip(kc) {
                diff |= word8(s) ^ word8(k);
            }
            diff == 0 && tail(st) == tail(kt)
        }
        Some(m) => {
            let mc = m.chunks_exact(8);
            let mt = mc.remainder();
            let mut diff = 0;
            for ((s, k), m) in sc.zip(kc).zip(mc) {
                diff |= word8(s) ^ (word8(k) & word8(m));
            }
            diff == 0 && tail(st) == tail(kt) & tail(mt)
        }
    }
}

/// An exact-match key prepared once per lookup: its bytes as little-endian words, the last one
/// zero-padded (the form entry cells store keys in), so comparing against a stored key is a few
/// word compares and hashing it needs no byte shuffling.
#[derive(Clone, Copy)]
pub(crate) struct Key<'a> {
    /// The whole 8-byte words of the key.
    body: &'a [u8],
    /// The zero-padded last partial word (0 if the length is a multiple of 8).
    tail: u64,
    has_tail: bool,
    len: usize,
}

impl<'a> Key<'a> {
    #[inline(always)]
    pub fn new(k: &'a [u8]) -> Key<'a> {
        let len = k.len();
        let nb = len & !7;
        let t = len - nb;
        let tail = if t == 0 {
            0
        } else if len >= 8 {
            // The last 8 bytes, shifted so that only the partial word's bytes remain.
            word8(&k[len - 8..]) >> (8 * (8 - t))
        } else {
            short_word(k)
        };
        Key {
            body: &k[..nb],
            tail,
            has_tail: t != 0,
            len,
        }
    }

    /// Number of words.
    #[inline(always)]
    pub fn words(&self) -> usize {
        self.len.div_ceil(8)
    }

    /// Word `j` (`j < words()`).
    #[inline(always)]
    pub fn word(&self, j: usize) -> u64 {
        match self.body.get(j * 8..j * 8 + 8) {
            Some(c) => word8(c),
            None => self.tail,
        }
    }
}

/// A key as the exact engine probes it: its hash and a compare against the words a cell stores.
pub(crate) trait ProbeKey {
    /// Number of key words if fixed by the type (0: known at run time only).
    const WORDS: usize;
    /// Seeded hash; equal for equal key bytes whatever the representation.
    #[inline(always)]
    fn hash(&self, seed: u64) -> u64 {
        self.hash_from(hash_start(self.len(), seed))
    }
    /// [`ProbeKey::hash`] from `hash_start(len, seed)` (precomputed per table).
    fn hash_from(&self, h0: u64) -> u64;
    /// Bytes of the key.
    fn len(&self) -> usize;
    /// Whether `stored` (the key words of a cell) equals this key.
    fn eq_words(&self, stored: &[AtomicU64]) -> bool;
    /// Stores the key's words (the last one zero-padded) into `dst` (a cell's key words).
    fn store_words(&self, dst: &[AtomicU64]);
}

/// The state a key's hash starts from: the seed and the key's length (fixed for a table).
#[inline(always)]
pub(crate) fn hash_start(len: usize, seed: u64) -> u64 {
    seed ^ (len as u64).wrapping_mul(K1)
}

impl ProbeKey for Key<'_> {
    const WORDS: usize = 0;
    #[inline(always)]
    fn len(&self) -> usize {
        self.len
    }
    #[inline(always)]
    fn hash_from(&self, h0: u64) -> u64 {
        let mut h = h0;
        for c in self.body.chunks_exact(8) {
            h = fold(h ^ word8(c), K0);
        }
        if self.has_tail {
            h = fold(h ^ self.tail, K0);
        }
        fold(h, K1)
    }

    #[inline(always)]
    fn eq_words(&self, stored: &[AtomicU64]) -> bool {
        if stored.len() < self.words() {
            return false;
        }
        let mut diff = 0;
        for (c, w) in self.body.chunks_exact(8).zip(stored) {
            diff |= w.load(Relaxed) ^ word8(c);
        }
        if self.has_tail {
            diff |= stored[self.body.len() / 8].load(Relaxed) ^ self.tail;
        }
        diff == 0
    }

    #[inline(always)]
    fn store_words(&self, dst: &[AtomicU64]) {
        for (j, d) in dst.iter().take(self.words()).enumerate() {
            d.store(self.word(j), Relaxed);
        }
    }
}

/// A key of `N` words (at most `8 * N` bytes) held in registers: the fast path for short keys.
#[derive(Clone, Copy)]
pub(crate) struct Words<const N: usize> {
    w: [u64; N],
    len: usize,
}

impl<const N: usize> Words<N> {
    /// The words of `k` (zero-padded); meant for `k.len()` in `8 * (N - 1) + 1..=8 * N`.
    #[inline(always)]
    pub fn new(k: &[u8]) -> Words<N> {
        let len = k.len();
        let mut w = [0u64; N];
        if len >= 8 && len <= 8 * N {
            for (j, c) in k.chunks_exact(8).enumerate().take(N) {
                w[j] = word8(c);
            }
            let t = len & 7;
            if t != 0 {
                // The last 8 bytes, shifted so that only the partial word's bytes remain.
                w[N - 1] = word8(&k[len - 8..]) >> (8 * (8 - t));
            }
        } else if len < 8 {
            w[0] = short_word(k);
        } else {
            let key = Key::new(k);
            for (j, x) in w.iter_mut().enumerate().take(key.words()) {
                *x = key.word(j);
            }
        }
        Words { w, len }
    }
}

impl Words<1> {
    /// The key of `len` (at most 8) bytes whose stored word (zero-padded little-endian) is `w`.
    #[inline(always)]
    pub fn from_word(w: u64, len: usize) -> Words<1> {
        Words { w: [w], len }
    }
}

impl<const N: usize> ProbeKey for Words<N> {
    const WORDS: usize = N;
    #[inline(always)]
    fn len(&self) -> usize {
        self.len
    }
    #[inline(always)]
    fn hash_from(&self, h0: u64) -> u64 {
        let mut h = h0;
        for w in self.w {
            h = fold(h ^ w, K0);
        }
        fold(h, K1)
    }

    #[inline(always)]
    fn eq_words(&self, stored: &[AtomicU64]) -> bool {
        let Some(stored) = stored.first_chunk::<N>() else {
            return false;
        };
        let mut diff = 0;
        for (s, w) in stored.iter().zip(self.w) {
            diff |= s.load(Relaxed) ^ w;
        }
        diff == 0
    }

    #[inline(always)]
    fn store_words(&self, dst: &[AtomicU64]) {
        if let Some(dst) = dst.first_chunk::<N>() {
            for (d, w) in dst.iter().zip(self.w) {
                d.store(w, Relaxed);
            }
        }
    }
}

/// A [`ProbeKey`] held in registers, made from a key's bytes.
pub(crate) trait FromKey: ProbeKey + Copy {
    /// The key length the type is made for, 0 if several.
    const LEN: usize = 0;
    /// The key `k` (of the length the type is meant for).
    fn from_key(k: &[u8]) -> Self;
    /// Whether `k` has the table's key length `len` (compared with [`FromKey::LEN`] when the
    /// type fixes it, which the compiler then knows when loading the key).
    #[inline(always)]
    fn len_ok(k: &[u8], len: usize) -> bool {
        if Self::LEN != 0 {
            k.len() == Self::LEN
        } else {
            k.len() == len
        }
    }
}

impl<const N: usize> FromKey for Words<N> {
    #[inline(always)]
    fn from_key(k: &[u8]) -> Self {
        Words::new(k)
    }
}

impl FromKey for Four {
    const LEN: usize = 4;
    #[inline(always)]
    fn from_key(k: &[u8]) -> Self {
        Four::new(k)
    }
}

/// A key of exactly 4 bytes (an IPv4 address, the commonest exact key): one 32-bit load.
/// Equal to [`Words<1>`] of the same bytes in hash and stored form.
#[derive(Clone, Copy)]
pub(crate) struct Four(u32);

impl Four {
    /// `k` must be 4 bytes long (anything else reads as zero).
    #[inline(always)]
    pub fn new(k: &[u8]) -> Four {
        Four(k.first_chunk::<4>().map_or(0, |b| u32::from_le_bytes(*b)))
    }
}

impl ProbeKey for Four {
    const WORDS: usize = 1;
    #[inline(always)]
    fn len(&self) -> usize {
        4
    }
    #[inline(always)]
    fn hash_from(&self, h0: u64) -> u64 {
        fold(fold(h0 ^ self.0 as u64, K0), K1)
    }
    #[inline(always)]
    fn eq_words(&self, stored: &[AtomicU64]) -> bool {
        stored
            .first()
            .is_some_and(|s| s.load(Relaxed) == self.0 as u64)
    }
    #[inline(always)]
    fn store_words(&self, dst: &[AtomicU64]) {
        if let Some(d) = dst.first() {
            d.store(self.0 as u64, Relaxed);
        }
    }
}

/// A per-table seed, different for every table and process (fixed under loom, whose models
/// must replay identically).
#[cfg(loom)]
pub(crate) fn random_seed() -> u64 {
    0x5eed
}

/// A per-table seed, different for every table and process.
#[cfg(not(loom))]
pub(crate) fn random_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(K0);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masked_hash_equals_hash_of_masked_key() {
        let key: Vec<u8> = (0..37u8).map(|i| i.wrapping_mul(91)).collect();
        let mask: Vec<u8> = (0..37u8)
            .map(|i| if i % 3 == 0 { 0xf0 } else { 0xff })
            .collect();
        let masked: Vec<u8> = key.iter().zip(&mask).map(|(k, m)| k & m).collect();
        assert_eq!(hash(&key, Some(&mask), 7), hash(&masked, None, 7));
        assert_ne!(hash(&key, None, 7), hash(&key, None, 8));
        assert!(masked_eq(&masked, &key, Some(&mask)));
        assert!(!masked_eq(&masked, &key, None));
    }

    #[test]
    fn key_words_are_zero_padded_little_endian() {
        for n in 0..20usize {
            let k: Vec<u8> = (1..=n as u8).collect();
            let key = Key::new(&k);
            assert_eq!(key.words(), n.div_ceil(8));
            for j in 0..key.words() {
                let mut b = [0u8; 8];
                let c = &k[j * 8..(j * 8 + 8).min(n)];
                b[..c.len()].copy_from_slice(c);
                assert_eq!(key.word(j), u64::from_le_bytes(b), "len {n} word {j}");
            }
            let mut other = k.clone();
            if n > 0 {
                other[n - 1] ^= 1;
                assert_ne!(Key::new(&other).hash(3), key.hash(3));
            }
            macro_rules! same {
                ($($n:literal),*) => {$(
                    if n.div_ceil(8) == $n {
                        assert_eq!(Words::<$n>::new(&k).hash(3), key.hash(3));
                    }
                )*};
            }
            same!(1, 2, 3);
            if n == 4 {
                assert_eq!(Four::new(&k).hash(3), key.hash(3));
                assert_eq!(Four::new(&k).0 as u64, key.word(0));
            }
        }
    }

    #[test]
    fn short_words_and_word_at_match_key_words() {
        for n in 0..40usize {
            let k: Vec<u8> = (0..n as u8)
                .map(|i| i.wrapping_mul(37).wrapping_add(1))
                .collect();
            let key = Key::new(&k);
            if n < 8 {
                assert_eq!(
                    short_word(&k),
                    if n == 0 { 0 } else { key.word(0) },
                    "len {n}"
                );
                assert_eq!(
                    Words::<1>::new(&k).w[0],
                    if n == 0 { 0 } else { key.word(0) }
                );
            }
            for j in 0..6 {
                let want = if j < key.words() { key.word(j) } else { 0 };
                assert_eq!(word_at(&k, j), want, "len {n} word {j}");
            }
        }
    }

    #[test]
    fn tails_are_exact_for_every_length() {
        for n in 0..20usize {
            let a: Vec<u8> = (0..n as u8).collect();
            for i in 0..n {
                let mut b = a.clone();
                b[i] ^= 0x40;
                assert!(!masked_eq(&a, &b, None), "len {n} byte {i}");
                let mut m = vec![0xffu8; n];
                assert!(!masked_eq(&a, &b, Some(&m)));
                m[i] = 0x0f;
                let am: Vec<u8> = a.iter().zip(&m).map(|(x, y)| x & y).collect();
                assert!(masked_eq(&am, &b, Some(&m)), "len {n} byte {i}");
                assert_eq!(hash(&b, Some(&m), 1), hash(&am, None, 1));
                if n <= 8 {
                    let w = load_small(&b) & load_small(&m);
                    assert_eq!(hash_small(w, n, 1), hash(&am, None, 1));
                    assert_eq!(w, load_small(&am));
                }
            }
            assert!(masked_eq(&a, &a, None));
        }
    }
}
