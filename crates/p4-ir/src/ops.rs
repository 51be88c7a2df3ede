//! Scalar arithmetic exactly as P4_16 defines it (§8.5 booleans, §8.6 `bit<W>`, §8.7
//! `int<W>`, §8.11 casts): modular arithmetic on `W` bits, saturating `|+|`/`|-|`, two's
//! complement for signed values, shifts by any amount (≥ W gives 0, or all sign bits for a
//! signed `>>`), slices and concatenation.
//!
//! Two implementations of every operation: on `u64` (widths ≤ 64, the fast path) and on
//! [`BigUint`] (any width). Values are always kept masked to their width; signed values are their
//! two's complement bit pattern.

use crate::ir::{BinOp, CmpOp, Ty, UnOp};
use num_bigint::{BigInt, BigUint, Sign};
use num_traits::{One, ToPrimitive, Zero};

/// All ones in the low `w` bits (`w ≤ 64`).
#[inline(always)]
pub fn mask(w: u32) -> u64 {
    if w >= 64 {
        u64::MAX
    } else {
        (1u64 << w) - 1
    }
}

/// `v` reduced to its low `w` bits.
pub fn mask_big(v: &BigUint, w: u32) -> BigUint {
    if v.bits() <= u64::from(w) {
        return v.clone();
    }
    v & ((BigUint::one() << w) - 1u32)
}

/// The signed value of the `w`-bit pattern `v` (1 ≤ w ≤ 64).
#[inline(always)]
pub fn sext(v: u64, w: u32) -> i64 {
    if w == 0 {
        return 0;
    }
    if w >= 64 {
        return v as i64;
    }
    let s = 64 - w;
    ((v << s) as i64) >> s
}

/// The value of a `Ty` bit pattern as a signed big integer (unsigned types: as is).
pub fn to_bigint(v: &BigUint, t: Ty) -> BigInt {
    if t.signed && t.width > 0 && v.bit(u64::from(t.width) - 1) {
        BigInt::from_biguint(Sign::Plus, v.clone()) - (BigInt::one() << t.width)
    } else {
        BigInt::from_biguint(Sign::Plus, v.clone())
    }
}

/// The `w`-bit two's complement pattern of `v`.
pub fn from_bigint(v: &BigInt, w: u32) -> BigUint {
    let m = BigInt::one() << w;
    let mut r = v % &m;
    if r.sign() == Sign::Minus {
        r += &m;
    }
    r.to_biguint().unwrap_or_default()
}

/// Unary operator on a `w ≤ 64` value.
#[inline]
pub fn un(op: UnOp, t: Ty, a: u64) -> u64 {
    match op {
        UnOp::Not => u64::from(a == 0),
        UnOp::BitNot => !a & mask(t.width),
        UnOp::Neg => a.wrapping_neg() & mask(t.width),
    }
}

/// Binary operator on `w ≤ 64` values (`b` of a shift may be any amount).
#[inline]
pub fn bin(op: BinOp, t: Ty, a: u64, b: u64) -> u64 {
    let w = t.width;
    let m = mask(w);
    match op {
        BinOp::Add => a.wrapping_add(b) & m,
        BinOp::Sub => a.wrapping_sub(b) & m,
        BinOp::Mul => a.wrapping_mul(b) & m,
        BinOp::Div | BinOp::Mod => {
            if b == 0 {
                return 0;
            }
            if t.signed {
                let (x, y) = (sext(a, w), sext(b, w));
                let r = if op == BinOp::Div {
                    x.wrapping_div(y)
                } else {
                    x.wrapping_rem(y)
                };
                r as u64 & m
            } else if op == BinOp::Div {
                a / b
            } else {
                a % b
            }
        }
        BinOp::AddSat | BinOp::SubSat => {
            if t.signed {
                let (x, y) = (i128::from(sext(a, w)), i128::from(sext(b, w)));
                let r = if op == BinOp::AddSat { x + y } else { x - y };
                let max = (1i128 << (w - 1)) - 1;
                let min = -(1i128 << (w - 1));
                (r.clamp(min, max) as u64) & m
            } else if op == BinOp::AddSat {
                let r = u128::from(a) + u128::from(b);
                if r > u128::from(m) {
                    m
                } else {
                    r as u64
                }
            } else {
                a.saturating_sub(b)
            }
        }
        BinOp::Shl => {
            if b >= u64::from(w) {
                0
            } else {
                (a << b) & m
            }
        }
        BinOp::Shr => {
            if t.signed {
                let x = sext(a, w);
                let s = b.min(63) as u32;
                let r = if b >= u64::from(w) { x >> 63 } else { x >> s };
                r as u64 & m
            } else if b >= u64::from(w) {
                0
            } else {
                a >> b
            }
        }
        BinOp::And => a & b,
        BinOp::Or => a | b,
        BinOp::Xor => a ^ b,
    }
}

/// Comparison of two `w ≤ 64` values of type `t`.
#[inline]
pub fn cmp(op: CmpOp, t: Ty, a: u64, b: u64) -> bool {
    let ord = if t.signed {
        sext(a, t.width).cmp(&sext(b, t.width))
    } else {
        a.cmp(&b)
    };
    match op {
        CmpOp::Eq => a == b,
        CmpOp::Ne => a != b,
        CmpOp::Lt => ord.is_lt(),
        CmpOp::Le => ord.is_le(),
        CmpOp::Gt => ord.is_gt(),
        CmpOp::Ge => ord.is_ge(),
    }
}

/// Cast of a `from.width ≤ 64` value to `to` (`to.width ≤ 64`): sign extension when the source is
/// signed, then truncation (P4_16 §8.11).
#[inline]
pub fn cast(to: Ty, from: Ty, v: u64) -> u64 {
    if from.signed {
        (sext(v, from.width) as u64) & mask(to.width)
    } else {
        v & mask(to.width)
    }
}

/// Unary operator on a value of any width.
pub fn un_big(op: UnOp, t: Ty, a: &BigUint) -> BigUint {
    let all = (BigUint::one() << t.width) - 1u32;
    match op {
        UnOp::Not => BigUint::from(u8::from(a.is_zero())),
        UnOp::BitNot => a ^ &all,
        UnOp::Neg => {
            if a.is_zero() {
                BigUint::zero()
            } else {
                (all + 1u32) - mask_big(a, t.width)
            }
        }
    }
}

/// Binary operator on values of any width.
pub fn bin_big(op: BinOp, t: Ty, a: &BigUint, b: &BigUint) -> BigUint {
    let w = t.width;
    let wrap = |v: BigInt| from_bigint(&v, w);
    match op {
        BinOp::Add => mask_big(&(a + b), w),
        BinOp::Sub => wrap(BigInt::from(a.clone()) - BigInt::from(b.clone())),
        BinOp::Mul => mask_big(&(a * b), w),
        BinOp::Div | BinOp::Mod => {
            if b.is_zero() {
                return BigUint::zero();
            }
            if t.signed {
                let (x, y) = (to_bigint(a, t), to_bigint(b, t));
                wrap(if op == BinOp::Div { x / y } else { x % y })
            } else if op == BinOp::Div {
                a / b
            } else {
                a % b
            }
        }
        BinOp::AddSat | BinOp::SubSat => {
            let (x, y) = (to_bigint(a, t), to_bigint(b, t));
            let r = if op == BinOp::AddSat { x + y } else { x - y };
            let (min, max) = if t.signed {
                (-(BigInt::one() << (w - 1)), (BigInt::one() << (w - 1)) - 1)
            } else {
                (BigInt::zero(), (BigInt::one() << w) - 1)
            };
            wrap(r.clamp(min, max))
        }
        BinOp::Shl => {
            let s = b.to_u64().unwrap_or(u64::MAX);
            if s >= u64::from(w) {
                BigUint::zero()
            } else {
                mask_big(&(a << s), w)
            }
        }
        BinOp::Shr => {
            let s = b.to_u64().unwrap_or(u64::MAX).min(u64::from(w));
            if t.signed {
                wrap(to_bigint(a, t) >> s)
            } else {
                a >> s
            }
        }
        BinOp::And => a & b,
        BinOp::Or => a | b,
        BinOp::Xor => a ^ b,
    }
}

/// Comparison of values of any width.
pub fn cmp_big(op: CmpOp, t: Ty, a: &BigUint, b: &BigUint) -> bool {
    let ord = if t.signed {
        to_bigint(a, t).cmp(&to_bigint(b, t))
    } else {
        a.cmp(b)
    };
    match op {
        CmpOp::Eq => a == b,
        CmpOp::Ne => a != b,
        CmpOp::Lt => ord.is_lt(),
        CmpOp::Le => ord.is_le(),
        CmpOp::Gt => ord.is_gt(),
        CmpOp::Ge => ord.is_ge(),
    }
}

/// Cast of a value of any width.
pub fn cast_big(to: Ty, from: Ty, v: &BigUint) -> BigUint {
    if from.signed {
        from_bigint(&to_bigint(v, from), to.width)
    } else {
        mask_big(v, to.width)
    }
}

/// Bits `hi..=lo` of a value of any width.
pub fn slice_big(v: &BigUint, hi: u32, lo: u32) -> BigUint {
    mask_big(&(v >> lo), hi - lo + 1)
}

/// Bits `hi..=lo` of a `u64`.
#[inline]
pub fn slice(v: u64, hi: u32, lo: u32) -> u64 {
    if lo >= 64 {
        return 0;
    }
    (v >> lo) & mask(hi - lo + 1)
}

/// The words (least significant first) of a value, `n` of them.
pub fn big_to_words(v: &BigUint, out: &mut [u64]) {
    let mut it = v.iter_u64_digits();
    for w in out.iter_mut() {
        *w = it.next().unwrap_or(0);
    }
}

/// The value held in words (least significant first).
pub fn words_to_big(ws: &[u64]) -> BigUint {
    let mut digits: Vec<u32> = Vec::with_capacity(ws.len() * 2);
    for w in ws {
        digits.push(*w as u32);
        digits.push((*w >> 32) as u32);
    }
    BigUint::new(digits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ops() -> impl Strategy<Value = BinOp> {
        prop_oneof![
            Just(BinOp::Add),
            Just(BinOp::Sub),
            Just(BinOp::Mul),
            Just(BinOp::Div),
            Just(BinOp::Mod),
            Just(BinOp::AddSat),
            Just(BinOp::SubSat),
            Just(BinOp::Shl),
            Just(BinOp::Shr),
            Just(BinOp::And),
            Just(BinOp::Or),
            Just(BinOp::Xor),
        ]
    }

    #[test]
    fn saturating_and_shifts() {
        let t = Ty::bits(8);
        assert_eq!(bin(BinOp::AddSat, t, 250, 10), 255);
        assert_eq!(bin(BinOp::SubSat, t, 5, 10), 0);
        let s = Ty::int(8);
        assert_eq!(bin(BinOp::AddSat, s, 120, 10), 127);
        assert_eq!(bin(BinOp::SubSat, s, 0x80, 1), 0x80);
        assert_eq!(bin(BinOp::Shr, s, 0x80, 3), 0xf0);
        assert_eq!(bin(BinOp::Shr, s, 0x80, 100), 0xff);
        assert_eq!(bin(BinOp::Shl, t, 1, 8), 0);
        assert_eq!(cast(Ty::bits(16), Ty::int(8), 0xff), 0xffff);
        assert_eq!(cast(Ty::bits(4), Ty::bits(8), 0xab), 0xb);
        assert!(cmp(CmpOp::Lt, s, 0xff, 0));
        assert!(!cmp(CmpOp::Lt, t, 0xff, 0));
    }

    proptest! {
        #[test]
        fn narrow_agrees_with_big(op in ops(), w in 1u32..=64, signed: bool, a: u64, b: u64) {
            let t = Ty { width: w, signed };
            let (a, b) = (a & mask(w), b & mask(w));
            let b = if matches!(op, BinOp::Shl | BinOp::Shr) { b % 70 } else { b };
            let n = bin(op, t, a, b);
            let g = bin_big(op, t, &BigUint::from(a), &BigUint::from(b));
            prop_assert_eq!(BigUint::from(n), g);
            for c in [CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge, CmpOp::Eq] {
                prop_assert_eq!(cmp(c, t, a, b), cmp_big(c, t, &BigUint::from(a), &BigUint::from(b)));
            }
            for u in [UnOp::BitNot, UnOp::Neg] {
                prop_assert_eq!(BigUint::from(un(u, t, a)), un_big(u, t, &BigUint::from(a)));
            }
            let to = Ty { width: (w * 7 % 64) + 1, signed: !signed };
            prop_assert_eq!(BigUint::from(cast(to, t, a)), cast_big(to, t, &BigUint::from(a)));
        }

        #[test]
        fn words_round_trip(a: u64, b: u64, c: u64) {
            let v = words_to_big(&[a, b, c]);
            let mut out = [0u64; 3];
            big_to_words(&v, &mut out);
            prop_assert_eq!(out, [a, b, c]);
        }
    }
}
