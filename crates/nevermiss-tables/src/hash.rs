//! Key hashing: a seeded folded-multiply hash over 8-byte words, with optional masking so a
//! tuple's hash of `key & mask` needs no temporary buffer.

const K0: u64 = 0x9e37_79b9_7f4a_7c15;
const K1: u64 = 0xbf58_476d_1ce4_e5b9;

#[inline(always)]
fn fold(a: u64, b: u64) -> u64 {
    let r = (a as u128).wrapping_mul(b as u128);
    (r as u64) ^ ((r >> 64) as u64)
}

#[inline(always)]
fn word(b: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w[..b.len()].copy_from_slice(b);
    u64::from_le_bytes(w)
}

/// Hash of `key` (masked by `mask` when given; `mask.len() == key.len()`), seeded with `seed`.
/// Guarantee: `hash(k, Some(m), s) == hash(k & m, None, s)`.
#[inline]
pub(crate) fn hash(key: &[u8], mask: Option<&[u8]>, seed: u64) -> u64 {
    let mut h = seed ^ (key.len() as u64).wrapping_mul(K1);
    let kc = key.chunks(8);
    match mask {
        None => {
            for c in kc {
                h = fold(h ^ word(c), K0);
            }
        }
        Some(m) => {
            for (c, mc) in kc.zip(m.chunks(8)) {
                h = fold(h ^ (word(c) & word(mc)), K0);
            }
        }
    }
    fold(h, K1)
}

/// `stored == key & mask` (bytewise), or `stored == key` without a mask.
#[inline]
pub(crate) fn masked_eq(stored: &[u8], key: &[u8], mask: Option<&[u8]>) -> bool {
    match mask {
        None => stored == key,
        Some(m) => {
            stored.len() == key.len()
                && stored
                    .chunks(8)
                    .zip(key.chunks(8))
                    .zip(m.chunks(8))
                    .all(|((s, k), m)| word(s) == word(k) & word(m))
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
}
