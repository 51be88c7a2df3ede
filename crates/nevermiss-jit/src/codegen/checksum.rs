//! v1model's `verify_checksum` / `update_checksum` with `HashAlgorithm.csum16` (RFC 1071, the
//! IPv4 header checksum) computed in registers, without serialising the field list.
//!
//! The runtime serialises the list (zero bits in front up to a whole byte, BMv2's rule), pads an
//! odd byte count with a zero byte and sums 16-bit words with end-around carry
//! (`state::ones_sum16`). That sum S is 0 when every field is 0 and otherwise the value in
//! 1..=0xffff congruent to the list's bits modulo 0xffff (2^16 ≡ 1), so each field contributes
//! `v · 2^(k mod 16)`, k its distance in bits from the padded list's end, and generated code adds
//! those up: a few shifts and adds per field. The checksum is `!S & 0xffff`.

use super::*;

impl Gen<'_, '_> {
    /// Whether generated code computes checksum call `x` ([`Gen::checksum`]): csum16 without the
    /// payload, a condition and fields of at most 64 bits it computes, and the checksum field a
    /// fixed location (`update`) or an expression it computes (`verify`).
    pub(super) fn checksum_inline(&self, x: &ExternCall) -> bool {
        let csum = matches!(
            x.op,
            XOp::VerifyChecksum {
                algo: HashAlgo::Csum16,
                with_payload: false
            } | XOp::UpdateChecksum {
                algo: HashAlgo::Csum16,
                with_payload: false
            }
        );
        let cond = matches!(x.args.first(), Some(XArg::Val(e)) if Self::native(e));
        let data = matches!(x.args.get(1), Some(XArg::Data(items)) if items.iter().all(
            |d| matches!(d, Datum::Bits(e) if !e.ty().is_wide() && Self::native(e))
        ));
        let field = match (&x.op, x.args.get(2)) {
            (XOp::UpdateChecksum { .. }, Some(XArg::Out(l, t))) => {
                !t.is_wide() && l.fixed().is_some_and(|o| self.in_frame(o, 1))
            }
            (XOp::VerifyChecksum { .. }, Some(XArg::Val(e))) => Self::native(e),
            _ => false,
        };
        csum && cond && data && field && x.ret.is_none()
    }

    /// A checksum call [`Gen::checksum_inline`] accepts. A `verify` that finds the checksum
    /// wrong runs the call in the runtime, which sets `checksum_error` (a rare path).
    pub(super) fn checksum(&mut self, s: &Stmt, x: &ExternCall, abort: Abort) {
        let (Some(XArg::Val(cond)), Some(XArg::Data(items))) = (x.args.first(), x.args.get(1))
        else {
            return self.helper_stmt(s, abort);
        };
        let c = self.expr(cond);
        let (run, done) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(c, run, &[], done, &[]);
        self.b.switch_to_block(run);
        let sum = self.csum16(items);
        match x.args.get(2) {
            Some(XArg::Out(l, t)) => {
                let v = self.mask_to(sum, t.width);
                self.st(l.off, v);
            }
            Some(XArg::Val(e)) => {
                let want = self.expr(e);
                let got = self.mask_to(sum, e.ty().width);
                let (bad, ok) = (self.b.create_block(), self.b.create_block());
                let same = self.b.ins().icmp(IntCC::Equal, got, want);
                self.b.ins().brif(same, ok, &[], bad, &[]);
                self.b.switch_to_block(bad);
                self.helper_stmt(s, abort);
                self.b.ins().jump(ok, &[]);
                self.b.switch_to_block(ok);
            }
            _ => {}
        }
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
    }

    /// `!S & 0xffff` for the fields `items` (see the module).
    fn csum16(&mut self, items: &[Datum]) -> Value {
        let widths: Vec<u32> = items.iter().map(datum_width).collect();
        let bits: u32 = widths.iter().sum();
        let bytes = bits.div_ceil(8);
        // The serialised list: zero bits in front to a whole byte, a zero byte after an odd count.
        let total = 8 * bytes + if bytes % 2 == 1 { 8 } else { 0 };
        let mut end = total - if bytes % 2 == 1 { 8 } else { 0 };
        let mut acc = self.iconst(0);
        let mut any = self.iconst(0);
        // From the last field back: its distance from the end is known.
        for (d, w) in items.iter().zip(&widths).rev() {
            let Datum::Bits(e) = d else { continue };
            let dist = total - end;
            end -= w;
            let v = self.expr(e);
            let v = self.mask_to(v, *w);
            any = self.b.ins().bor(any, v);
            let r = if *w > 16 { self.fold16(v, 3) } else { v };
            let sh = i64::from(dist % 16);
            let t = if sh > 0 {
                self.b.ins().ishl_imm_u(r, sh)
            } else {
                r
            };
            acc = self.b.ins().iadd(acc, t);
        }
        let m = self.fold16(acc, 4);
        // S: 0 when every field is 0, else m with 0 read as 0xffff (both are ≡ 0).
        let z = self.iconst(0);
        let ffff = self.iconst(0xffff);
        let is0 = self.b.ins().icmp(IntCC::Equal, m, z);
        let m = self.b.ins().select(is0, ffff, m);
        let anyz = self.b.ins().icmp(IntCC::Equal, any, z);
        let sum = self.b.ins().select(anyz, z, m);
        let not = self.b.ins().bnot(sum);
        self.b.ins().band_imm_u(not, 0xffff)
    }

    /// `v` folded `n` times into 16 bits with end-around carry (congruent modulo 0xffff).
    fn fold16(&mut self, mut v: Value, n: u32) -> Value {
        for _ in 0..n {
            let lo = self.b.ins().band_imm_u(v, 0xffff);
            let hi = self.b.ins().ushr_imm_u(v, 16);
            v = self.b.ins().iadd(lo, hi);
        }
        v
    }
}

/// Bits item `d` adds to a field list ([`Gen::checksum_inline`] admits `Bits` items only).
fn datum_width(d: &Datum) -> u32 {
    match d {
        Datum::Bits(e) => e.ty().width,
        _ => 0,
    }
}
