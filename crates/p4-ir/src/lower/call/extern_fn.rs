//! The extern functions of core.p4, v1model.p4, psa.p4 and pna.p4 (P4_16 §7.2.10.1 "Extern
//! functions"): [`Lw::extern_fn`] only dispatches, one call per function; each lowering pushes
//! the call's argument statements onto `pre` in argument order and returns the call's value.

use super::super::expr::RV;
use super::super::{err_at, LResult, Lw};
use super::missing;
use crate::ir::*;
use crate::ops::mask;
use p4_front::ast::{self, ExprKind};
use p4_front::check::{CallArg, CallInfo, DeclId, Type, Value};

/// One call of an extern function: what its lowering needs to find its arguments.
#[derive(Clone, Copy)]
struct FnCall<'c> {
    /// The function.
    d: DeclId,
    ci: &'c CallInfo,
    args: &'c [ast::Arg],
    /// The call expression.
    e: &'c ast::Expr,
}

impl<'c> FnCall<'c> {
    /// The argument in position `i`.
    fn nth(&self, i: usize) -> Option<&'c ast::Expr> {
        match self.ci.args.get(i) {
            Some(CallArg::Arg(j)) => self.args.get(*j).map(|a| &a.value),
            _ => None,
        }
    }
}

impl<'a> Lw<'a> {
    /// Lowers a call of extern function `d`.
    pub(super) fn extern_fn(
        &mut self,
        d: DeclId,
        ci: &CallInfo,
        args: &[ast::Arg],
        e: &ast::Expr,
        pre: &mut Vec<Stmt>,
    ) -> LResult<Option<RV>> {
        let name = self.decl(d).name.clone();
        let c = FnCall { d, ci, args, e };
        let pna = matches!(self.p.arch, Arch::PnaV06 | Arch::PnaV07);
        match name.as_str() {
            "verify" => self.fn_verify(c, pre),
            "static_assert" => Ok(Some(RV::Scalar(Expr::bool(true)))),
            "mark_to_drop" => self.fn_mark_to_drop(c, pre),
            "hash" => self.fn_hash(c, pre),
            "random" => self.fn_random(c, pre),
            "verify_checksum"
            | "verify_checksum_with_payload"
            | "update_checksum"
            | "update_checksum_with_payload" => self.fn_checksum(c, &name, pre),
            "resubmit" | "resubmit_preserving_field_list" => self.fn_index(XOp::Resubmit, c, pre),
            "recirculate" if pna => self.xcall(XOp::PnaRecirculate, None, vec![], None, e, pre),
            "recirculate" | "recirculate_preserving_field_list" => {
                self.fn_index(XOp::Recirculate, c, pre)
            }
            "clone" | "clone3" | "clone_preserving_field_list" => self.fn_clone(c, pre),
            "truncate" => self.fn_values(XOp::Truncate, c, 1, None, pre),
            "digest" => self.fn_digest(c, pre),
            "assert" => self.fn_values(XOp::Assert, c, 1, None, pre),
            "assume" => self.fn_values(XOp::Assume, c, 1, None, pre),
            "log_msg" => self.fn_log_msg(c, pre),
            // ---- PNA
            "send_to_port" => self.fn_values(XOp::SendToPort, c, 1, None, pre),
            "drop_packet" => self.xcall(XOp::DropPacket, None, vec![], None, e, pre),
            "mirror_packet" => self.fn_values(XOp::MirrorPacket, c, 2, None, pre),
            "add_entry" => self.fn_add_entry(c, false, pre),
            "add_entry_if" => self.fn_add_entry(c, true, pre),
            "set_entry_expire_time" => {
                let op = XOp::SetEntryExpireTime { conditional: false };
                self.fn_values(op, c, 1, None, pre)
            }
            "set_entry_expire_time_if" => {
                let op = XOp::SetEntryExpireTime { conditional: true };
                self.fn_values(op, c, 2, None, pre)
            }
            "restart_expire_timer" => {
                self.xcall(XOp::RestartExpireTimer, None, vec![], None, e, pre)
            }
            "update_expire_info" => self.fn_values(XOp::UpdateExpireInfo, c, 3, None, pre),
            "SelectByDirection" => self.fn_select_by_direction(c, pre),
            "is_net_port" => self.fn_values(XOp::IsNetPort, c, 1, Some(Ty::BOOL), pre),
            "is_host_port" => self.fn_values(XOp::IsHostPort, c, 1, Some(Ty::BOOL), pre),
            "allocate_flow_id" => {
                let rt = self.scalar(&self.ty_of(e)).unwrap_or(Ty::bits(32));
                self.xcall(XOp::AllocateFlowId, None, vec![], Some(rt), e, pre)
            }
            // PSA deparser queries: fields of the output metadata.
            "psa_clone_i2e" | "psa_clone_e2e" | "psa_resubmit" | "psa_normal"
            | "psa_recirculate" => self.fn_psa_query(c, &name, pre),
            other => err_at(
                e.span,
                format!("extern function {other} is not supported by the runtime"),
            ),
        }
    }

    /// The argument for the parameter named `name`.
    fn fn_arg<'c>(&self, c: FnCall<'c>, name: &str) -> Option<&'c ast::Expr> {
        self.arg_named(c.d, c.ci, c.args, name)
    }

    /// An extern call whose arguments are the first `n` positional arguments as values.
    fn fn_values(
        &mut self,
        op: XOp,
        c: FnCall<'_>,
        n: usize,
        ret: Option<Ty>,
        pre: &mut Vec<Stmt>,
    ) -> LResult<Option<RV>> {
        let mut xs = Vec::with_capacity(n);
        for i in 0..n {
            xs.push(self.val_arg(c.nth(i), pre)?);
        }
        self.xcall(op, None, xs, ret, c.e, pre)
    }

    /// An extern call with the argument `index` (v1model's resubmit and recirculate).
    fn fn_index(&mut self, op: XOp, c: FnCall<'_>, pre: &mut Vec<Stmt>) -> LResult<Option<RV>> {
        let a = self.val_arg(self.fn_arg(c, "index"), pre)?;
        self.xcall(op, None, vec![a], None, c.e, pre)
    }

    /// An optional `out` scalar as an extern argument.
    fn fn_out(&mut self, a: Option<&ast::Expr>, pre: &mut Vec<Stmt>) -> LResult<XArg> {
        Ok(match self.out_arg(a, pre)? {
            Some((l, t)) => XArg::Out(l, t),
            None => XArg::None,
        })
    }

    /// `verify(condition, error)` (core.p4): a parser statement, no extern call.
    fn fn_verify(&mut self, c: FnCall<'_>, pre: &mut Vec<Stmt>) -> LResult<Option<RV>> {
        let cond = self.scalar_expr(c.nth(0).ok_or_else(|| missing(c.e))?, pre)?;
        let er = self.scalar_expr(c.nth(1).ok_or_else(|| missing(c.e))?, pre)?;
        pre.push(Stmt::Verify(cond, er));
        Ok(None)
    }

    /// `mark_to_drop(standard_metadata)` (v1model), or the older form without an argument.
    fn fn_mark_to_drop(&mut self, c: FnCall<'_>, pre: &mut Vec<Stmt>) -> LResult<Option<RV>> {
        let a = match c.nth(0) {
            Some(x) => {
                let (l, t) = self.place(x, pre)?;
                let l = self.freeze(l, pre, x.span)?;
                let lay = self.layout(&t, x.span)?;
                // At a fixed place: the two stores the runtime's `mark_to_drop` makes
                // (simple_switch's: `egress_spec` ← the drop port 511, `mcast_grp` ← 0), as
                // plain assignments both engines run without an extern call.
                if let (Some(base), Some((es, Layout::Scalar(est)))) =
                    (l.fixed(), lay.field("egress_spec"))
                {
                    pre.push(Stmt::Assign(
                        Loc::at(base + es),
                        *est,
                        Expr::Const(V1_DROP_PORT & mask(est.width), *est),
                    ));
                    if let Some((mg, Layout::Scalar(mgt))) = lay.field("mcast_grp") {
                        pre.push(Stmt::Assign(Loc::at(base + mg), *mgt, Expr::Const(0, *mgt)));
                    }
                    self.p.control_plane.v1_extern_function_inlined = true;
                    return Ok(None);
                }
                XArg::Agg(l, lay)
            }
            None => XArg::None,
        };
        self.xcall(XOp::MarkToDrop, None, vec![a], None, c.e, pre)
    }

    /// `hash(result, algo, base, data, max)` (v1model).
    fn fn_hash(&mut self, c: FnCall<'_>, pre: &mut Vec<Stmt>) -> LResult<Option<RV>> {
        let algo = Self::algo_of(&self.enum_arg(self.fn_arg(c, "algo")));
        let out = self.fn_out(self.fn_arg(c, "result"), pre)?;
        let base = self.val_arg(self.fn_arg(c, "base"), pre)?;
        let data = self.data_arg(self.fn_arg(c, "data"), pre)?;
        let max = self.val_arg(self.fn_arg(c, "max"), pre)?;
        let xs = vec![out, base, data, max];
        self.xcall(XOp::V1Hash(algo), None, xs, None, c.e, pre)
    }

    /// `random(result, lo, hi)` (v1model).
    fn fn_random(&mut self, c: FnCall<'_>, pre: &mut Vec<Stmt>) -> LResult<Option<RV>> {
        let out = self.fn_out(self.fn_arg(c, "result"), pre)?;
        let lo = self.val_arg(self.fn_arg(c, "lo"), pre)?;
        let hi = self.val_arg(self.fn_arg(c, "hi"), pre)?;
        self.xcall(XOp::V1Random, None, vec![out, lo, hi], None, c.e, pre)
    }

    /// v1model's `verify_checksum`, `update_checksum` and their `_with_payload` forms.
    fn fn_checksum(
        &mut self,
        c: FnCall<'_>,
        name: &str,
        pre: &mut Vec<Stmt>,
    ) -> LResult<Option<RV>> {
        let algo = Self::algo_of(&self.enum_arg(self.fn_arg(c, "algo")));
        let with_payload = name.ends_with("_with_payload");
        let cond = self.val_arg(self.fn_arg(c, "condition"), pre)?;
        let data = self.data_arg(self.fn_arg(c, "data"), pre)?;
        let checksum = self.fn_arg(c, "checksum");
        let (op, ck) = if name.starts_with("verify") {
            let op = XOp::VerifyChecksum { algo, with_payload };
            (op, self.val_arg(checksum, pre)?)
        } else {
            let op = XOp::UpdateChecksum { algo, with_payload };
            (op, self.fn_out(checksum, pre)?)
        };
        self.xcall(op, None, vec![cond, data, ck], None, c.e, pre)
    }

    /// v1model's `clone`, `clone3` and `clone_preserving_field_list`: the clone type as a
    /// code (0 ingress to egress, 1 egress to egress), the session and the field list.
    fn fn_clone(&mut self, c: FnCall<'_>, pre: &mut Vec<Stmt>) -> LResult<Option<RV>> {
        let ty = match self.enum_arg(self.fn_arg(c, "type")).as_str() {
            "e2e" => 1,
            _ => 0,
        };
        let sess = self.val_arg(self.fn_arg(c, "session"), pre)?;
        let idx = self.val_arg(self.fn_arg(c, "index"), pre)?;
        let xs = vec![XArg::Val(Expr::Const(ty, Ty::CODE)), sess, idx];
        self.xcall(XOp::Clone, None, xs, None, c.e, pre)
    }

    /// v1model's `digest(receiver, data)`; the data's type is recorded for the P4Info (one
    /// digest per type, in the order of the calls).
    fn fn_digest(&mut self, c: FnCall<'_>, pre: &mut Vec<Stmt>) -> LResult<Option<RV>> {
        let ck = self.ck;
        if let Some(t) = self.fn_arg(c, "data").and_then(|d| ck.type_of(d.id)) {
            let name = match t {
                Type::Agg(a) => self.agg_name(a),
                other => other.to_string(),
            };
            let ty = self.cp_type(t);
            self.p
                .control_plane
                .v1_digests
                .push(crate::control_plane::V1Digest { name, ty });
        }
        let r = self.val_arg(self.fn_arg(c, "receiver"), pre)?;
        let data = self.data_arg(self.fn_arg(c, "data"), pre)?;
        self.xcall(XOp::V1Digest, None, vec![r, data], None, c.e, pre)
    }

    /// v1model's `log_msg(message[, data])`.
    fn fn_log_msg(&mut self, c: FnCall<'_>, pre: &mut Vec<Stmt>) -> LResult<Option<RV>> {
        let msg = c
            .nth(0)
            .and_then(|x| match &x.kind {
                ExprKind::String(s) => Some(s.clone()),
                _ => None,
            })
            .unwrap_or_default();
        let data = self.data_arg(c.nth(1), pre)?;
        self.xcall(XOp::Log, None, vec![XArg::Str(msg), data], None, c.e, pre)
    }

    /// PNA's `add_entry(action_name, action_params, expire_time_profile_id)` and
    /// `add_entry_if(do_add_entry, ...)`: the action named by a string literal.
    fn fn_add_entry(
        &mut self,
        c: FnCall<'_>,
        conditional: bool,
        pre: &mut Vec<Stmt>,
    ) -> LResult<Option<RV>> {
        let Some(an) = self.fn_arg(c, "action_name") else {
            return err_at(c.e.span, "add_entry: missing action_name");
        };
        let aname = match (&an.kind, self.ck.value_of(an.id)) {
            (ExprKind::String(s), _) => s.clone(),
            (_, Some(Value::String(s))) => s.clone(),
            _ => return err_at(an.span, "add_entry: action_name must be a string literal"),
        };
        let Some(ad) = self.find_action(&aname) else {
            return err_at(an.span, format!("add_entry: no action named {aname}"));
        };
        let func = self.action_fn(ad, an.span)?;
        let mut xs = Vec::new();
        if conditional {
            xs.push(self.val_arg(self.fn_arg(c, "do_add_entry"), pre)?);
        }
        xs.push(self.data_arg(self.fn_arg(c, "action_params"), pre)?);
        xs.push(self.val_arg(self.fn_arg(c, "expire_time_profile_id"), pre)?);
        let t = self.ty_of(c.e);
        let rt = self.scalar(&t).unwrap_or(Ty::BOOL);
        let success = if matches!(t, Type::Bool) { 1 } else { 0 };
        let op = XOp::AddEntry {
            func,
            conditional,
            success,
        };
        self.xcall(op, None, xs, Some(rt), c.e, pre)
    }

    /// PNA's `SelectByDirection(direction, n2h_value, h2n_value)`: a multiplexer for scalars,
    /// a temporary assigned in both branches for aggregates.
    fn fn_select_by_direction(
        &mut self,
        c: FnCall<'_>,
        pre: &mut Vec<Stmt>,
    ) -> LResult<Option<RV>> {
        let e = c.e;
        let (Some(dx), Some(ax), Some(bx)) = (c.nth(0), c.nth(1), c.nth(2)) else {
            return Err(missing(e));
        };
        let dt = self.ty_of(dx);
        let dv = self.scalar_expr(dx, pre)?;
        let cond = match &dt {
            Type::Bool => dv,
            Type::Enum(en) => {
                let code = en
                    .members
                    .iter()
                    .position(|m| m == "NET_TO_HOST")
                    .unwrap_or(0) as u64;
                Expr::Cmp(
                    CmpOp::Eq,
                    Ty::CODE,
                    Box::new(dv),
                    Box::new(Expr::Const(code, Ty::CODE)),
                )
            }
            _ => dv,
        };
        let t = self.ty_of(e);
        let ra = self.expr(ax, pre)?;
        let rb = self.expr(bx, pre)?;
        if let Some(s) = self.scalar(&t) {
            let xa = self.as_scalar(ra, ax.span)?;
            let xb = self.as_scalar(rb, bx.span)?;
            return Ok(Some(RV::Scalar(Expr::Mux(
                Box::new(cond),
                Box::new(xa),
                Box::new(xb),
                s,
            ))));
        }
        let w = self.words(&t, e.span)?;
        let tmp = Loc::at(self.alloc_temp(w, e.span)?);
        let mut then = Vec::new();
        self.assign(&tmp, &t, ra, &mut then, e.span)?;
        let mut els = Vec::new();
        self.assign(&tmp, &t, rb, &mut els, e.span)?;
        pre.push(Stmt::If(cond, then, els));
        Ok(Some(RV::Place(tmp, t)))
    }

    /// PSA's deparser queries (`psa_clone_i2e`, `psa_clone_e2e`, `psa_resubmit`,
    /// `psa_normal`, `psa_recirculate`): expressions over fields of the output metadata.
    fn fn_psa_query(
        &mut self,
        c: FnCall<'_>,
        name: &str,
        pre: &mut Vec<Stmt>,
    ) -> LResult<Option<RV>> {
        let Some(m) = c.nth(0) else {
            return Err(missing(c.e));
        };
        let not = |x: Expr| Expr::Un(UnOp::Not, Ty::BOOL, Box::new(x));
        let x = match name {
            "psa_clone_i2e" | "psa_clone_e2e" => self.field_expr(m, "clone", pre)?,
            "psa_resubmit" => self.field_expr(m, "resubmit", pre)?,
            "psa_normal" => {
                let d = self.field_expr(m, "drop", pre)?;
                let r = self.field_expr(m, "resubmit", pre)?;
                Expr::And(Box::new(not(d)), Box::new(not(r)))
            }
            _ => {
                let d = self.field_expr(m, "drop", pre)?;
                let Some(ed) = c.nth(1) else {
                    return Err(missing(c.e));
                };
                let p = self.field_expr(ed, "egress_port", pre)?;
                let pt = p.ty();
                let recirculate = Expr::Const(0xffff_fffa & crate::ops::mask(pt.width), pt);
                Expr::And(
                    Box::new(not(d)),
                    Box::new(Expr::Cmp(CmpOp::Eq, pt, Box::new(p), Box::new(recirculate))),
                )
            }
        };
        Ok(Some(RV::Scalar(x)))
    }
}
