//! Hashes: PNA/PSA's `Hash.get_hash` and v1model's `hash`.

use super::super::*;

impl Exec {
    /// The hash family of [`Exec::extern_call`].
    #[inline(always)]
    pub(super) fn hashes(&mut self, x: &ExternCall, xk: Option<&ExternKind>) -> Flow {
        let args = &x.args;
        match &x.op {
            XOp::HashGet => {
                let algo = match xk {
                    Some(ExternKind::Hash { algo }) => *algo,
                    _ => HashAlgo::Crc32,
                };
                if let Some(XArg::Data(items)) = args.get(1) {
                    self.serialize(items);
                }
                let r = self.next_rand();
                let h = state::hash(algo, &self.data.bytes, r);
                let base = self.xval(args.first());
                let max = self.xval(args.get(2));
                let v = match (base, max) {
                    (Some(b), Some(m)) if m > 0 => b.wrapping_add(h % m),
                    (Some(b), _) => b.wrapping_add(h),
                    _ => h,
                };
                if let Some((l, t)) = &x.ret {
                    self.xstore(l, *t, v);
                }
            }
            XOp::V1Hash(algo) => {
                if let Some(XArg::Data(items)) = args.get(2) {
                    self.serialize(items);
                }
                let r = self.next_rand();
                let h = state::hash(*algo, &self.data.bytes, r);
                let base = self.xval(args.get(1)).unwrap_or(0);
                let max = self.xval(args.get(3)).unwrap_or(0);
                // v1model.p4: the result is in [base, base + max - 1]; "if max=0, the value
                // written to result will always be base".
                let v = if max > 0 {
                    base.wrapping_add(h % max)
                } else {
                    base
                };
                if let Some(XArg::Out(l, t)) = args.first() {
                    self.xstore(l, *t, v);
                }
            }
            _ => {}
        }
        Flow::Next
    }
}
