//! Compile-time values and their arithmetic (P4_16 spec §8.5–§8.7, §8.11 casts, §17.1).
//!
//! Fixed-width values are kept normalized: `bit<W>` in `[0, 2^W)`, `int<W>` in
//! `[-2^(W-1), 2^(W-1))`. `int` values are unbounded, but every operation refuses results wider
//! than [`MAX_BITS`] so that evaluation cannot exhaust memory.

use super::types::{DeclId, Type};
use crate::ast::{BinOp, UnOp};
use num_bigint::{BigInt, Sign};
use num_traits::{One, Signed, ToPrimitive, Zero};

/// Largest magnitude, in bits, of any compile-time integer.
pub const MAX_BITS: u64 = 1 << 16;

/// A compile-time known value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// An `int` (arbitrary precision).
    Int(BigInt),
    /// A `bit<W>` (`signed == false`) or `int<W>` value, normalized.
    Bits {
        /// The value, in the type's range.
        value: BigInt,
        /// The width W.
        width: u32,
        /// `int<W>` rather than `bit<W>`.
        signed: bool,
    },
    /// A `bool`.
    Bool(bool),
    /// A `string`.
    String(String),
    /// A member of `error`.
    Error(String),
    /// A member of `match_kind`.
    MatchKind(String),
    /// An enum value; `member` is `None` for an unnamed value of a serializable enum (from a cast);
    /// `repr` is the underlying value of a serializable enum.
    Enum {
        /// The enum's declaration.
        decl: DeclId,
        /// The member's name; `None` for a value no member names.
        member: Option<String>,
        /// The underlying value, for a serializable enum.
        repr: Option<Box<Value>>,
    },
    /// Tuple / list / header stack value.
    List(Vec<Value>),
    /// Struct or header value, fields in order.
    Struct(Vec<(String, Value)>),
    /// `{#}`.
    Invalid,
}

impl Value {
    /// The integer of an `int`, `bit<W>`, `int<W>` or serializable enum value.
    pub fn as_int(&self) -> Option<&BigInt> {
        match self {
            Value::Int(v) | Value::Bits { value: v, .. } => Some(v),
            Value::Enum { repr: Some(r), .. } => r.as_int(),
            _ => None,
        }
    }

    /// The value of a `bool`.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The value as a `u64`, if it is a non-negative integer that fits.
    pub fn as_u64(&self) -> Option<u64> {
        self.as_int().and_then(|v| v.to_u64())
    }
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Int(v) => write!(f, "{v}"),
            Value::Bits {
                value,
                width,
                signed,
            } => write!(f, "{}{}{}", width, if *signed { "s" } else { "w" }, value),
            Value::Bool(b) => write!(f, "{b}"),
            Value::String(s) => write!(f, "{s:?}"),
            Value::Error(e) => write!(f, "error.{e}"),
            Value::MatchKind(m) => write!(f, "{m}"),
            Value::Enum {
                member: Some(m), ..
            } => write!(f, "{m}"),
            Value::Enum { repr: Some(r), .. } => write!(f, "{r}"),
            Value::Enum { .. } => write!(f, "<enum>"),
            Value::List(vs) => {
                write!(f, "{{")?;
                for (i, v) in vs.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{v}")?;
                }
                write!(f, "}}")
            }
            Value::Struct(fs) => {
                write!(f, "{{")?;
                for (i, (n, v)) in fs.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{n} = {v}")?;
                }
                write!(f, "}}")
            }
            Value::Invalid => write!(f, "{{#}}"),
        }
    }
}

/// Normalizes `v` to `W` bits (two's complement when `signed`).
pub fn truncate(v: &BigInt, width: u32, signed: bool) -> BigInt {
    if width == 0 {
        return BigInt::zero();
    }
    let modulus: BigInt = BigInt::one() << width;
    let mut r = v % &modulus;
    if r.sign() == Sign::Minus {
        r += &modulus;
    }
    if signed {
        let half: BigInt = BigInt::one() << (width - 1);
        if r >= half {
            r -= modulus;
        }
    }
    r
}

/// Whether `v` fits `W` bits without loss (for overflow warnings).
pub fn fits(v: &BigInt, width: u32, signed: bool) -> bool {
    &truncate(v, width, signed) == v
}

fn check_size(v: &BigInt) -> Result<(), FoldError> {
    if v.bits() > MAX_BITS {
        Err(FoldError::TooLarge)
    } else {
        Ok(())
    }
}

/// Why an operation on constants gives no value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FoldError {
    /// The operation is not folded at compile time (not an error).
    NotFoldable,
    /// The result would exceed the largest compile-time value.
    TooLarge,
    /// A division or modulo by zero.
    DivisionByZero,
    /// A division or modulo (the operator) of a negative value (P4_16 §8.7).
    NegativeDivision(BinOp),
    /// A shift by a negative amount.
    NegativeShift,
    /// A shift of an arbitrary-precision integer beyond the largest compile-time value.
    ShiftTooLarge,
}

impl std::fmt::Display for FoldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FoldError::NotFoldable => f.write_str("not a compile-time operation"),
            FoldError::TooLarge => f.write_str("compile-time value too large"),
            FoldError::DivisionByZero => f.write_str("division by zero"),
            FoldError::NegativeDivision(op) => {
                write!(f, "{}: division or modulo of negative values", op.symbol())
            }
            FoldError::NegativeShift => f.write_str("shift amount must be non-negative"),
            FoldError::ShiftTooLarge => f.write_str("shift amount too large"),
        }
    }
}

impl std::error::Error for FoldError {}

/// Builds a fixed-width value.
pub fn bits(value: BigInt, width: u32, signed: bool) -> Value {
    Value::Bits {
        value: truncate(&value, width, signed),
        width,
        signed,
    }
}

/// Unary operator on a value (spec §8.5–§8.7).
pub fn unary(op: UnOp, v: &Value) -> Result<Value, FoldError> {
    Ok(match (op, v) {
        (UnOp::Not, Value::Bool(b)) => Value::Bool(!b),
        (UnOp::Plus, x @ (Value::Int(_) | Value::Bits { .. })) => x.clone(),
        (UnOp::Neg, Value::Int(x)) => Value::Int(-x),
        (
            UnOp::Neg,
            Value::Bits {
                value,
                width,
                signed,
            },
        ) => bits(-value, *width, *signed),
        (
            UnOp::BitNot,
            Value::Bits {
                value,
                width,
                signed,
            },
        ) => bits(-value - 1, *width, *signed),
        _ => return Err(FoldError::NotFoldable),
    })
}

fn shift_amount(b: &BigInt) -> Result<u64, FoldError> {
    if b.is_negative() {
        return Err(FoldError::NegativeShift);
    }
    Ok(b.to_u64().unwrap_or(u64::MAX))
}

/// Binary operator on two values of the same kind (after implicit casts were applied).
/// [`FoldError::NotFoldable`] when the operation is not folded, another error for a
/// compile-time error.
pub fn binary(op: BinOp, a: &Value, b: &Value) -> Result<Value, FoldError> {
    use BinOp::*;
    match (a, b) {
        (Value::Bool(x), Value::Bool(y)) => Ok(Value::Bool(match op {
            And => *x && *y,
            Or => *x || *y,
            Eq => x == y,
            Ne => x != y,
            _ => return Err(FoldError::NotFoldable),
        })),
        (Value::Int(x), Value::Int(y)) => {
            let r = match op {
                Add => x + y,
                Sub => x - y,
                Mul => {
                    if x.bits() + y.bits() > MAX_BITS {
                        return Err(FoldError::TooLarge);
                    }
                    x * y
                }
                Div | Mod => {
                    if y.is_zero() {
                        return Err(FoldError::DivisionByZero);
                    }
                    if x.is_negative() || y.is_negative() {
                        return Err(FoldError::NegativeDivision(op));
                    }
                    if op == Div {
                        x / y
                    } else {
                        x % y
                    }
                }
                Shl => {
                    let s = shift_amount(y)?;
                    if s.saturating_add(x.bits()) > MAX_BITS {
                        return Err(FoldError::ShiftTooLarge);
                    }
                    x << s
                }
                Shr => {
                    let s = shift_amount(y)?;
                    if s > MAX_BITS {
                        if x.is_negative() {
                            BigInt::from(-1)
                        } else {
                            BigInt::zero()
                        }
                    } else {
                        x >> s
                    }
                }
                BitAnd => x & y,
                BitOr => x | y,
                BitXor => x ^ y,
                Eq => return Ok(Value::Bool(x == y)),
                Ne => return Ok(Value::Bool(x != y)),
                Lt => return Ok(Value::Bool(x < y)),
                Le => return Ok(Value::Bool(x <= y)),
                Gt => return Ok(Value::Bool(x > y)),
                Ge => return Ok(Value::Bool(x >= y)),
                _ => return Err(FoldError::NotFoldable),
            };
            check_size(&r)?;
            Ok(Value::Int(r))
        }
        (
            Value::Bits {
                value: x,
                width: w,
                signed: s,
            },
            Value::Bits {
                value: y,
                width: w2,
                signed: s2,
            },
        ) if matches!(op, Shl | Shr) || (w == w2 && s == s2) || op == Concat => {
            let (w, s) = (*w, *s);
            let r = match op {
                Add => x + y,
                Sub => x - y,
                Mul => x * y,
                Div | Mod => {
                    if y.is_zero() {
                        return Err(FoldError::DivisionByZero);
                    }
                    if x.is_negative() || y.is_negative() {
                        return Err(FoldError::NegativeDivision(op));
                    }
                    if op == Div {
                        x / y
                    } else {
                        x % y
                    }
                }
                AddSat | SubSat => {
                    let r = if op == AddSat { x + y } else { x - y };
                    let (lo, hi) = range(w, s);
                    return Ok(Value::Bits {
                        value: r.clamp(lo, hi),
                        width: w,
                        signed: s,
                    });
                }
                Shl => {
                    let n = shift_amount(y)?;
                    if n >= u64::from(w) {
                        BigInt::zero()
                    } else {
                        x << n
                    }
                }
                Shr => {
                    let n = shift_amount(y)?.min(u64::from(w) + 1);
                    x >> n
                }
                BitAnd | BitOr | BitXor => {
                    let ux = truncate(x, w, false);
                    let uy = truncate(y, w, false);
                    match op {
                        BitAnd => ux & uy,
                        BitOr => ux | uy,
                        _ => ux ^ uy,
                    }
                }
                Concat => {
                    let w2 = *w2;
                    let total = w.saturating_add(w2);
                    if u64::from(total) > MAX_BITS {
                        return Err(FoldError::TooLarge);
                    }
                    let r = (truncate(x, w, false) << w2) | truncate(y, w2, false);
                    return Ok(bits(r, total, s));
                }
                Eq => return Ok(Value::Bool(x == y)),
                Ne => return Ok(Value::Bool(x != y)),
                Lt => return Ok(Value::Bool(x < y)),
                Le => return Ok(Value::Bool(x <= y)),
                Gt => return Ok(Value::Bool(x > y)),
                Ge => return Ok(Value::Bool(x >= y)),
                And | Or => return Err(FoldError::NotFoldable),
            };
            Ok(bits(r, w, s))
        }
        (
            Value::Bits {
                value: x,
                width,
                signed,
            },
            Value::Int(y),
        ) if matches!(op, Shl | Shr) => {
            let n = shift_amount(y)?;
            let r = if op == Shl {
                if n >= u64::from(*width) {
                    BigInt::zero()
                } else {
                    x << n
                }
            } else {
                x >> n.min(u64::from(*width) + 1)
            };
            Ok(bits(r, *width, *signed))
        }
        (Value::Int(x), Value::Bits { value: y, .. }) if matches!(op, Shl | Shr) => {
            binary(op, &Value::Int(x.clone()), &Value::Int(y.clone()))
        }
        (Value::Enum { repr: Some(r), .. }, _) => binary(op, r, b),
        (_, Value::Enum { repr: Some(r), .. }) => binary(op, a, r),
        (Value::String(x), Value::String(y)) if op == Concat => {
            Ok(Value::String(format!("{x}{y}")))
        }
        (Value::Error(x), Value::Error(y)) | (Value::MatchKind(x), Value::MatchKind(y)) => match op
        {
            Eq => Ok(Value::Bool(x == y)),
            Ne => Ok(Value::Bool(x != y)),
            _ => Err(FoldError::NotFoldable),
        },
        (
            Value::Enum {
                decl: d1,
                member: m1,
                ..
            },
            Value::Enum {
                decl: d2,
                member: m2,
                ..
            },
        ) => match op {
            Eq => Ok(Value::Bool(d1 == d2 && m1 == m2)),
            Ne => Ok(Value::Bool(!(d1 == d2 && m1 == m2))),
            _ => Err(FoldError::NotFoldable),
        },
        _ => Err(FoldError::NotFoldable),
    }
}

/// `[lo, hi]` of a fixed-width type.
pub fn range(width: u32, signed: bool) -> (BigInt, BigInt) {
    if width == 0 {
        return (BigInt::zero(), BigInt::zero());
    }
    if signed {
        let half: BigInt = BigInt::one() << (width - 1);
        (-half.clone(), half - 1)
    } else {
        (BigInt::zero(), (BigInt::one() << width) - 1)
    }
}

/// Converts a value to type `to` (explicit cast, spec §8.11.1, or implicit `int` conversion).
/// `None` when the conversion is not foldable.
pub fn cast(v: &Value, to: &Type) -> Option<Value> {
    match to {
        Type::Bit(w) | Type::Signed(w) => {
            let signed = matches!(to, Type::Signed(_));
            match v {
                Value::Int(x) | Value::Bits { value: x, .. } => Some(bits(x.clone(), *w, signed)),
                Value::Bool(b) => Some(bits(BigInt::from(u8::from(*b)), *w, signed)),
                Value::Enum { repr: Some(r), .. } => cast(r, to),
                _ => None,
            }
        }
        Type::Int => match v {
            Value::Int(_) => Some(v.clone()),
            Value::Bits { value, .. } => Some(Value::Int(value.clone())),
            Value::Enum { repr: Some(r), .. } => cast(r, to),
            _ => None,
        },
        Type::Bool => match v {
            Value::Bool(_) => Some(v.clone()),
            Value::Int(x) | Value::Bits { value: x, .. } => {
                if x.is_zero() {
                    Some(Value::Bool(false))
                } else if x.is_one() {
                    Some(Value::Bool(true))
                } else {
                    None
                }
            }
            _ => None,
        },
        Type::Enum(e) => match (&e.underlying, v) {
            (_, Value::Enum { decl, .. }) if *decl == e.decl => Some(v.clone()),
            (Some(u), _) => {
                let r = cast(v, u)?;
                Some(Value::Enum {
                    decl: e.decl,
                    member: None,
                    repr: Some(Box::new(r)),
                })
            }
            _ => None,
        },
        Type::NewType(n) => cast(v, &n.underlying),
        Type::Error => Some(v.clone()),
        _ => Some(v.clone()),
    }
}

/// `v[hi:lo]` (spec §8.5): an unsigned `bit<hi-lo+1>`.
pub fn slice(v: &Value, hi: u32, lo: u32) -> Option<Value> {
    let x = v.as_int()?;
    let width = hi.checked_sub(lo)?.checked_add(1)?;
    let u = match v {
        Value::Bits { width: w, .. } => truncate(x, *w, false),
        _ => x.clone(),
    };
    Some(bits(u >> lo, width, false))
}
