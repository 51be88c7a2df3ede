//! Random numbers: `Random.read` and v1model's `random`, from the worker's generator.

use super::super::*;

impl Exec {
    /// The random family of [`Exec::extern_call`].
    #[inline(always)]
    pub(super) fn random(&mut self, x: &ExternCall, xk: Option<&ExternKind>) -> Flow {
        let args = &x.args;
        match &x.op {
            XOp::RandomRead => {
                if let (Some(ExternKind::Random { lo, hi, ty }), Some((l, t))) = (xk, &x.ret) {
                    let (lo, hi) = (*lo, *hi);
                    let r = self.next_rand();
                    let v = if hi > lo {
                        lo + r % (hi - lo + 1).max(1)
                    } else {
                        lo
                    };
                    let v = v & mask(ty.width);
                    self.xstore(l, *t, v);
                }
            }
            XOp::V1Random => {
                let lo = self.xval(args.get(1)).unwrap_or(0);
                let hi = self.xval(args.get(2)).unwrap_or(u64::MAX);
                let r = self.next_rand();
                let span = hi.wrapping_sub(lo).wrapping_add(1);
                let v = if hi < lo {
                    lo
                } else if span == 0 {
                    r
                } else {
                    lo + r % span
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
