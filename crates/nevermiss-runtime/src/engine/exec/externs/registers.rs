//! Registers: `read` and `write` of a cell.

use super::super::*;

impl Exec {
    /// The registers family of [`Exec::extern_call`].
    #[inline(always)]
    pub(super) fn registers(
        &mut self,
        sw: &Switch,
        x: &ExternCall,
        inst: Option<&RtExtern>,
    ) -> Flow {
        let args = &x.args;
        match &x.op {
            XOp::RegisterRead => {
                if let (Some(RtExtern::Register(r)), Some(XArg::Agg(l, lay))) = (inst, args.get(1))
                {
                    let i = self.xval(args.first()).unwrap_or(u64::MAX);
                    let w = lay.words(&sw.prog().headers) as usize;
                    if let Some(a) = self.addr(l) {
                        if let Some(ws) = self.f.get_mut(a..a + w) {
                            r.read(i, ws);
                        }
                    }
                }
            }
            XOp::RegisterWrite => {
                if let (Some(RtExtern::Register(r)), Some(XArg::Agg(l, lay))) = (inst, args.get(1))
                {
                    let i = self.xval(args.first()).unwrap_or(u64::MAX);
                    let w = lay.words(&sw.prog().headers) as usize;
                    if let Some(a) = self.addr(l) {
                        if let Some(ws) = self.f.get(a..a + w) {
                            r.write(i, ws);
                        }
                    }
                }
            }
            _ => {}
        }
        Flow::Next
    }
}
