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
            k.iter()
                .enumerate()
                .fold(0, |w, (i, &b)| w | (b as u64) << (8 * i))
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
    /// Seeded hash; equal for equal key bytes whatever the representation.
    fn hash(&self, seed: u64) -> u64;
    /// Whether `stored` (the key words of a cell) equals this key.
    fn eq_words(&self, stored: &[AtomicU64]) -> bool;
    /// Stores the key's words (the last one zero-padded) into `dst` (a cell's key words).
    fn store_words(&self, dst: &[AtomicU64]);
}

#[inline(always)]
fn hash_start(len: usize, seed: u64) -> u64 {
    seed ^ (len as u64).wrapping_mul(K1)
}

impl ProbeKey for Key<'_> {
    #[inline(always)]
    fn hash(&self, seed: u64) -> u64 {
        let mut h = hash_start(self.len, seed);
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
        } else {
            let key = Key::new(k);
            for (j, x) in w.iter_mut().enumerate().take(key.words()) {
                *x = key.word(j);
            }
        }
        Words { w, len }
    }
}

impl<const N: usize> ProbeKey for Words<N> {
    #[inline(always)]
    fn hash(&self, seed: u64) -> u64 {
        let mut h = hash_start(self.len, seed);
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
