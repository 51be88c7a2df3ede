//! Digests: PNA's `Digest.pack` and v1model's `digest`, queued for the control plane.

use super::super::*;

impl Exec {
    /// The digests family of [`Exec::extern_call`].
    #[inline(always)]
    pub(super) fn digests(&mut self, sw: &Switch, x: &ExternCall) -> Flow {
        let args = &x.args;
        match &x.op {
            XOp::DigestPack | XOp::V1Digest => {
                let (name, items) = if x.op == XOp::DigestPack {
                    let n = x
                        .inst
                        .and_then(|i| sw.prog().externs.get(i as usize))
                        .map_or_else(String::new, |e| e.name.clone());
                    (n, args.first())
                } else {
                    (
                        format!("receiver {}", self.xval(args.first()).unwrap_or(0)),
                        args.get(1),
                    )
                };
                if let Some(XArg::Data(items)) = items {
                    self.serialize(items);
                    sw.push_digest(DigestMsg {
                        name,
                        data: self.data.bytes.clone(),
                    });
                }
            }
            _ => {}
        }
        Flow::Next
    }
}
