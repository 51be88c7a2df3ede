//! PNA table operations from the data plane: `add_entry` on a miss, the expire-time and
//! timer calls of an entry that hit, `allocate_flow_id`.

use super::super::*;

impl Exec {
    /// The table ops family of [`Exec::extern_call`].
    #[inline(always)]
    pub(super) fn table_ops(&mut self, sw: &Switch, x: &ExternCall) -> Flow {
        let args = &x.args;
        match &x.op {
            XOp::AddEntry {
                func,
                conditional,
                success,
            } => {
                let mut i = 0;
                let doit = if *conditional {
                    i = 1;
                    self.xval(args.first()).unwrap_or(0) != 0
                } else {
                    true
                };
                let ok = doit
                    && self.add_entry(
                        sw,
                        *func,
                        args.get(i),
                        self.xval(args.get(i + 1)).unwrap_or(0),
                    );
                if let Some((l, t)) = &x.ret {
                    let v = if ok { *success } else { 1 - success.min(&1) };
                    self.xstore(l, *t, v);
                }
            }
            XOp::SetEntryExpireTime { conditional } => {
                let (cond, p) = if *conditional {
                    (
                        self.xval(args.first()).unwrap_or(0) != 0,
                        self.xval(args.get(1)).unwrap_or(0),
                    )
                } else {
                    (true, self.xval(args.first()).unwrap_or(0))
                };
                if cond {
                    self.set_expire(sw, Some(p));
                }
            }
            XOp::RestartExpireTimer => self.set_expire(sw, None),
            XOp::UpdateExpireInfo => {
                let a = self.xval(args.first()).unwrap_or(0) != 0;
                let b = self.xval(args.get(1)).unwrap_or(0) != 0;
                let p = self.xval(args.get(2)).unwrap_or(0);
                if a {
                    self.set_expire(sw, if b { Some(p) } else { None });
                }
            }
            XOp::AllocateFlowId => {
                let v = u64::from(sw.externs().next_flow_id());
                if let Some((l, t)) = &x.ret {
                    self.xstore(l, *t, v);
                }
            }
            _ => {}
        }
        Flow::Next
    }
}
