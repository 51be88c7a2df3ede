//! Counters: indexed (`count`) and direct, counted in packets and bytes.

use super::super::*;

impl Exec {
    /// The counters family of [`Exec::extern_call`].
    #[inline(always)]
    pub(super) fn counters(&mut self, x: &ExternCall, inst: Option<&RtExtern>) -> Flow {
        let args = &x.args;
        match &x.op {
            XOp::CounterCount => {
                let i = self.xval(args.first()).unwrap_or(0);
                let inc = self.xval(args.get(1));
                self.count_indexed(inst, i, inc);
            }
            XOp::DirectCounterCount => {
                let inc = self.xval(args.first());
                self.count_direct(inst, inc);
            }
            _ => {}
        }
        Flow::Next
    }

    /// `count(index[, bytes])` of an indexed counter (`inst`): one packet and `bytes` (by
    /// default the packet's length) into cell `index`, none when out of range. Generated code
    /// calls it through `Helpers::count`.
    #[inline]
    pub(crate) fn count_indexed(&self, inst: Option<&RtExtern>, index: u64, bytes: Option<u64>) {
        if let Some(RtExtern::Counter(cells)) = inst {
            let inc = bytes.unwrap_or(self.input().len() as u64);
            if let Some(c) = usize::try_from(index).ok().and_then(|i| cells.get(i)) {
                c.count(1, inc);
            }
        }
    }

    /// `count([bytes])` of a direct counter (`inst`): into the cell of the entry the table
    /// being applied matched, none on a miss. Generated code calls it through
    /// `Helpers::direct_count`.
    #[inline]
    pub(crate) fn count_direct(&self, inst: Option<&RtExtern>, bytes: Option<u64>) {
        if let (Some(RtExtern::DirectCounter(cells)), Some(h)) = (inst, self.tctx.hit) {
            let inc = bytes.unwrap_or(self.input().len() as u64);
            if let Some(c) = cells.get(h.slot()) {
                c.count(1, inc);
            }
        }
    }
}
