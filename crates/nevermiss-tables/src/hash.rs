//! Key hashing: a seeded folded-multiply hash over 8-byte words, with optional masking so a
//! tuple's hash of `key & mask` needs no temporary buffer.

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

/// A per-table seed, different for every table and process.
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
