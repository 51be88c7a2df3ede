//! Meters: indexed and direct `execute` (and PNA's direct `read`), colours in, colour out.

use super::super::*;

impl Exec {
    /// The meters family of [`Exec::extern_call`].
    #[inline(always)]
    pub(super) fn meters(
        &mut self,
        x: &ExternCall,
        inst: Option<&RtExtern>,
        xk: Option<&ExternKind>,
    ) -> Flow {
        let args = &x.args;
        match &x.op {
            XOp::MeterExecute { colors } => {
                let mut c = state::GREEN;
                if let Some(RtExtern::Meter(cells)) = inst {
                    let i = self.xval(args.first()).unwrap_or(0);
                    let cin = self
                        .xval(args.get(1))
                        .map_or(state::GREEN, |v| color_index(colors, v));
                    let bytes = matches!(xk, Some(ExternKind::Meter { bytes: true, .. }));
                    let amount = if bytes {
                        self.xval(args.get(2)).unwrap_or(self.input().len() as u64)
                    } else {
                        1
                    };
                    let len = if bytes {
                        amount
                    } else {
                        self.input().len() as u64
                    };
                    if let Some(m) = cells.get(i as usize) {
                        c = m.lock().unwrap_or_else(PoisonError::into_inner).execute(
                            amount,
                            len,
                            self.now_ns,
                            cin,
                        );
                    }
                }
                if let Some((l, t)) = &x.ret {
                    self.xstore(l, *t, colors[c.min(RED)]);
                }
            }
            XOp::DirectMeterExecute { colors } | XOp::DirectMeterRead { colors } => {
                let mut c = state::GREEN;
                if let (Some(RtExtern::DirectMeter(cells)), Some(h)) = (inst, self.tctx.hit) {
                    let cin = self
                        .xval(args.first())
                        .map_or(state::GREEN, |v| color_index(colors, v));
                    let bytes = matches!(xk, Some(ExternKind::DirectMeter { bytes: true }));
                    let amount = if bytes {
                        self.xval(args.get(1)).unwrap_or(self.input().len() as u64)
                    } else {
                        1
                    };
                    let len = if bytes {
                        amount
                    } else {
                        self.input().len() as u64
                    };
                    if let Some(m) = cells.get(h.slot()) {
                        c = m.lock().unwrap_or_else(PoisonError::into_inner).execute(
                            amount,
                            len,
                            self.now_ns,
                            cin,
                        );
                    }
                }
                // v1model's `direct_meter.read` writes its color on a hit only: p4c makes the
                // read the table's `result_target`, which BMv2 sets when the table hits
                // (`MatchTableAbstract::apply_action`); a miss leaves the field as it was.
                let write = !matches!(x.op, XOp::DirectMeterRead { .. }) || self.tctx.hit.is_some();
                if let (Some((l, t)), true) = (&x.ret, write) {
                    self.xstore(l, *t, colors[c.min(RED)]);
                }
            }
            _ => {}
        }
        Flow::Next
    }
}
