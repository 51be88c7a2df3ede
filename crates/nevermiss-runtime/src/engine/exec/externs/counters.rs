//! Counters: indexed (`count`) and direct, counted in packets and bytes.

use super::super::*;

impl Exec {
    /// The counters family of [`Exec::extern_call`].
    #[inline(always)]
    pub(super) fn counters(&mut self, x: &ExternCall, inst: Option<&RtExtern>) -> Flow {
        let args = &x.args;
        match &x.op {
            XOp::CounterCount => {
                if let Some(RtExtern::Counter(cells)) = inst {
                    let i = self.xval(args.first()).unwrap_or(0);
                    let inc = self.xval(args.get(1)).unwrap_or(self.input().len() as u64);
                    if let Some(c) = cells.get(i as usize) {
                        c.count(1, inc);
                    }
                }
            }
            XOp::DirectCounterCount => {
                if let (Some(RtExtern::DirectCounter(cells)), Some(h)) = (inst, self.tctx.hit) {
                    let inc = self.xval(args.first()).unwrap_or(self.input().len() as u64);
                    if let Some(c) = cells.get(h.slot()) {
                        c.count(1, inc);
                    }
                }
            }
            _ => {}
        }
        Flow::Next
    }
}
