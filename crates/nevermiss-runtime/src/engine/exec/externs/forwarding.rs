//! Forwarding: where the packet goes and what becomes of it — drops, ports, clones, mirrors,
//! resubmission, recirculation, truncation — and the port and packet queries, asserts and logs.

use super::super::*;

impl Exec {
    /// The forwarding family of [`Exec::extern_call`].
    #[inline(always)]
    pub(super) fn forwarding(&mut self, sw: &Switch, x: &ExternCall) -> Flow {
        let args = &x.args;
        match &x.op {
            XOp::MarkToDrop => {
                let base = match args.first() {
                    Some(XArg::Agg(l, _)) => self.addr(l),
                    _ => sw.arch().v1().map(|v| v.sm as usize),
                };
                if let (Some(b), Some(v1)) = (base, sw.arch().v1()) {
                    if let Some(o) = v1.egress_spec {
                        self.st(b + o as usize, v1.drop_port);
                    }
                    if let Some(o) = v1.mcast_grp {
                        self.st(b + o as usize, 0);
                    }
                }
            }
            XOp::Resubmit => self.ps.resubmit = Some(self.xval(args.first()).unwrap_or(0)),
            XOp::Recirculate => self.ps.v1_recirculate = Some(self.xval(args.first()).unwrap_or(0)),
            XOp::Clone => {
                let ty = self.xval(args.first()).unwrap_or(0);
                let sess = self.xval(args.get(1)).unwrap_or(0);
                let fl = self.xval(args.get(2)).unwrap_or(u64::MAX);
                self.ps.clone = Some((ty, sess, fl));
            }
            XOp::Truncate => self.ps.truncate = self.xval(args.first()),
            XOp::Assert | XOp::Assume => {
                let holds = self.xval(args.first()).unwrap_or(1) != 0;
                if !holds {
                    sw.stats().assertion_failures.fetch_add(1, Relaxed);
                }
            }
            XOp::Log => {}
            XOp::SendToPort => self.ps.dest.put(self.xval(args.first())),
            XOp::DropPacket => self.ps.dest.put(None),
            XOp::MirrorPacket => {
                let slot = self.xval(args.first()).unwrap_or(0);
                let sess = self.xval(args.get(1)).unwrap_or(0);
                self.ps.mirrors.retain(|m| m.0 != slot);
                self.ps.mirrors.push((slot, sess));
            }
            XOp::PnaRecirculate => self.ps.recirculate = true,
            XOp::IsNetPort | XOp::IsHostPort => {
                let p = self.xval(args.first()).unwrap_or(0);
                let net = sw.is_net_port(p);
                let v = if x.op == XOp::IsNetPort { net } else { !net };
                if let Some((l, t)) = &x.ret {
                    self.xstore(l, *t, u64::from(v));
                }
            }
            XOp::PacketLength => {
                if let Some((l, t)) = &x.ret {
                    self.xstore(l, *t, self.input().len() as u64);
                }
            }
            _ => {}
        }
        Flow::Next
    }
}
