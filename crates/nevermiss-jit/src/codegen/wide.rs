//! Values wider than 64 bits in generated code (P4_16 §7.1.6.2: `bit<W>` of any width): IPv6
//! addresses, DASH's 128-bit keys and metadata. A wide value is a list of 64-bit words, least
//! significant first, as the frame holds it (`p4_ir::ops::big_to_words`), masked to its width.
//!
//! Generated code computes the forms real programs move such values with — constants, fixed
//! loads, casts, `&` `|` `^`, `?:`, `==`/`!=`, slices of at most 64 bits — and packs them into
//! table keys; the rest (arithmetic, ordering, shifts) stays with the interpreter's `BigUint`
//! code, which gives the same results (`tests/stf/wide-values-native`).

use super::*;

impl Gen<'_, '_> {
    /// Whether generated code computes the words of `e`, an expression of any width.
    pub(super) fn wide_native(e: &Expr) -> bool {
        match e {
            Expr::Const(..) | Expr::Big(..) | Expr::Load(..) => true,
            Expr::Cast(to, from, a) if to.is_wide() || from.is_wide() => {
                if from.is_wide() {
                    Self::wide_native(a)
                } else {
                    Self::native(a)
                }
            }
            Expr::Bin(BinOp::And | BinOp::Or | BinOp::Xor, t, a, b) if t.is_wide() => {
                Self::wide_native(a) && Self::wide_native(b)
            }
            Expr::Mux(c, a, b, t) if t.is_wide() => {
                Self::native(c) && Self::wide_native(a) && Self::wide_native(b)
            }
            _ => !e.ty().is_wide() && Self::native(e),
        }
    }

    /// Whether `e`, a scalar of at most 64 bits with a wide operand, is computed by generated
    /// code: `==`/`!=` of wide values, a truncating cast, a slice of at most 64 bits.
    pub(super) fn narrow_of_wide(e: &Expr) -> bool {
        match e {
            Expr::Cmp(CmpOp::Eq | CmpOp::Ne, t, a, b) => {
                t.is_wide() && Self::wide_native(a) && Self::wide_native(b)
            }
            Expr::Cast(to, from, a) => !to.is_wide() && from.is_wide() && Self::wide_native(a),
            Expr::Slice(a, t, hi, lo) => t.is_wide() && hi - lo < 64 && Self::wide_native(a),
            _ => false,
        }
    }

    /// The value of an expression [`Gen::narrow_of_wide`] accepts.
    pub(super) fn narrow_of_wide_expr(&mut self, e: &Expr) -> Value {
        match e {
            Expr::Cmp(op, t, a, b) => {
                let n = t.words();
                let (a, b) = (self.wide_words(a, n), self.wide_words(b, n));
                let mut diff = self.iconst(0);
                for (x, y) in a.into_iter().zip(b) {
                    let d = self.b.ins().bxor(x, y);
                    diff = self.b.ins().bor(diff, d);
                }
                let z = self.iconst(0);
                let cc = if *op == CmpOp::Eq {
                    IntCC::Equal
                } else {
                    IntCC::NotEqual
                };
                self.bool64(cc, diff, z)
            }
            Expr::Cast(to, _, a) => {
                let w = self.wide_words(a, 1)[0];
                self.mask_to(w, to.width)
            }
            Expr::Slice(a, t, hi, lo) => {
                let words = self.wide_words(a, t.words());
                let (i, sh) = ((lo / 64) as usize, i64::from(lo % 64));
                let low = words.get(i).copied().unwrap_or_else(|| self.iconst(0));
                let mut v = if sh > 0 {
                    self.b.ins().ushr_imm_u(low, sh)
                } else {
                    low
                };
                if let Some(&next) = words.get(i + 1).filter(|_| sh > 0) {
                    let up = self.b.ins().ishl_imm_u(next, 64 - sh);
                    v = self.b.ins().bor(v, up);
                }
                self.mask_to(v, hi - lo + 1)
            }
            _ => self.helper_eval(e),
        }
    }

    /// The `n` words of `e` ([`Gen::wide_native`]), least significant first, masked to its
    /// width; words past its width are 0.
    pub(super) fn wide_words(&mut self, e: &Expr, n: u32) -> Vec<Value> {
        let n = n as usize;
        let mut w: Vec<Value> = match e {
            Expr::Const(v, _) => vec![self.iconst(*v)],
            Expr::Big(b, _) => b
                .iter_u64_digits()
                .take(n)
                .map(|d| self.iconst(d))
                .collect(),
            Expr::Load(o, t) => (0..t.words().min(n as u32))
                .map(|i| {
                    if self.in_frame(o + i, 1) {
                        self.ld(o + i)
                    } else {
                        self.iconst(0)
                    }
                })
                .collect(),
            Expr::Cast(to, from, a) if from.is_wide() => {
                let mut w = self.wide_words(a, n as u32);
                self.mask_words(&mut w, to.width);
                w
            }
            Expr::Cast(to, from, a) => {
                let v = self.native_expr(a);
                if from.signed && to.width > from.width {
                    // Sign extension: the upper words are copies of the sign.
                    let s = self.sext(v, from.width);
                    let sign = self.b.ins().sshr_imm_s(s, 63);
                    let mut w = vec![s];
                    w.resize(n, sign);
                    self.mask_words(&mut w, to.width);
                    w
                } else {
                    let v = self.mask_to(v, to.width.min(from.width));
                    vec![v]
                }
            }
            Expr::Bin(op, _, a, b) if e.ty().is_wide() => {
                let (a, b) = (self.wide_words(a, n as u32), self.wide_words(b, n as u32));
                a.into_iter()
                    .zip(b)
                    .map(|(x, y)| match op {
                        BinOp::And => self.b.ins().band(x, y),
                        BinOp::Or => self.b.ins().bor(x, y),
                        _ => self.b.ins().bxor(x, y),
                    })
                    .collect()
            }
            Expr::Mux(c, a, b, t) if t.is_wide() => {
                let c = self.native_expr(c);
                let (a, b) = (self.wide_words(a, n as u32), self.wide_words(b, n as u32));
                a.into_iter()
                    .zip(b)
                    .map(|(x, y)| self.b.ins().select(c, x, y))
                    .collect()
            }
            _ => vec![self.native_expr(e)],
        };
        w.truncate(n);
        while w.len() < n {
            let z = self.iconst(0);
            w.push(z);
        }
        w
    }

    /// Clears the bits of `words` at and above bit `width`.
    fn mask_words(&mut self, words: &mut [Value], width: u32) {
        for (i, w) in words.iter_mut().enumerate() {
            let base = 64 * i as u32;
            if base >= width {
                *w = self.iconst(0);
            } else if width - base < 64 {
                *w = self.mask_to(*w, width - base);
            }
        }
    }

    /// `l = e` for a wide `t` at a fixed location inside the frame.
    pub(super) fn assign_wide(&mut self, off: u32, t: Ty, e: &Expr) {
        let words = self.wide_words(e, t.words());
        for (i, v) in words.into_iter().enumerate() {
            self.st(off + i as u32, v);
        }
    }

    /// Packs wide key field `e` of `width` bits big-endian into its `ceil(width / 8)` bytes at
    /// `base + off`, as the interpreter packs keys (the buffer has 8 bytes of room past a key).
    pub(super) fn store_be_wide(&mut self, e: &Expr, width: u32, base: Value, off: u32) {
        let words = self.wide_words(e, width.div_ceil(64));
        let bytes = width.div_ceil(8);
        let mut at = off;
        // The top word holds the first `bytes % 8` bytes (all 8 when it is full).
        let top = match bytes % 8 {
            0 => 8,
            r => r,
        };
        for (i, w) in words.iter().enumerate().rev() {
            let n = if i == words.len() - 1 { top } else { 8 };
            self.store_be(*w, n, base, at);
            at += n;
        }
    }
}
