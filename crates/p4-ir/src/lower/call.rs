//! Calls (P4_16 §6.8 copy-in/copy-out), table and block applies, built-in methods (§8.17–8.19)
//! and the extern functions and methods of core.p4, v1model.p4 and pna.p4.

use super::expr::RV;
use super::{err_at, Bind, LResult, Lw};
use crate::ir::*;
use p4_front::ast::{self, Direction, ExprKind};
use p4_front::check::{
    AggKind, Builtin, CallArg, CallInfo, CallTarget, DeclId, MemberInfo, Type, Value,
};
use p4_front::source::Span;

mod extern_fn;

/// Where one parameter's value comes from.
#[derive(Clone)]
enum Src<'x> {
    Expr(&'x ast::Expr),
    Value(Value),
    Omitted,
}

impl<'a> Lw<'a> {
    /// Lowers a call; returns its value when it has one.
    pub fn call(&mut self, e: &ast::Expr, pre: &mut Vec<Stmt>, want: bool) -> LResult<Option<RV>> {
        let ExprKind::Call { callee, args, .. } = &e.kind else {
            return err_at(e.span, "expected a call");
        };
        let Some(ci) = self.ck.calls.get(&e.id).cloned() else {
            return err_at(e.span, "unresolved call");
        };
        let _ = want;
        match ci.target.clone() {
            CallTarget::Builtin(b) => self.builtin(b, callee, args, e, pre),
            CallTarget::Action(d) | CallTarget::Function(d) => self.user_call(d, &ci, args, e, pre),
            CallTarget::ExternFunction(d) => self.extern_fn(d, &ci, args, e, pre),
            CallTarget::ExternMethod(d) => self.extern_method(d, &ci, callee, args, e, pre),
            CallTarget::TableApply(d) => {
                self.apply_table(d, e.span, pre)?;
                Ok(None)
            }
            CallTarget::BlockApply { decl, direct } => {
                self.block_apply(decl, direct, &ci, callee, args, e, pre)?;
                Ok(None)
            }
            CallTarget::ExternCtor(_) | CallTarget::Instantiate(_) => {
                err_at(e.span, "instantiation is not allowed here")
            }
        }
    }

    /// Sources of each parameter of `callee` for a call.
    fn sources<'x>(&self, callee: DeclId, ci: &CallInfo, args: &'x [ast::Arg]) -> Vec<Src<'x>> {
        let params = &self.decl(callee).params;
        (0..params.len())
            .map(|i| match ci.args.get(i) {
                Some(CallArg::Arg(j)) => match args.get(*j) {
                    Some(a) => Src::Expr(&a.value),
                    None => Src::Omitted,
                },
                Some(CallArg::Default(_)) => match &params[i].default {
                    Some(v) => Src::Value(v.clone()),
                    None => Src::Omitted,
                },
                _ => Src::Omitted,
            })
            .collect()
    }

    /// The argument expression for the parameter named `name`.
    fn arg_named<'x>(
        &self,
        callee: DeclId,
        ci: &CallInfo,
        args: &'x [ast::Arg],
        name: &str,
    ) -> Option<&'x ast::Expr> {
        let params = &self.decl(callee).params;
        let i = params.iter().position(|p| p.name == name)?;
        match ci.args.get(i) {
            Some(CallArg::Arg(j)) => args.get(*j).map(|a| &a.value),
            _ => None,
        }
    }

    /// Copy-in / copy-out for a call with parameter slots `params` (P4_16 §6.8: arguments are
    /// evaluated left to right before the call; `out`/`inout` l-values are fixed before the call
    /// and written back after it).
    fn bind_args(
        &mut self,
        params: &[(Loc, Type, Direction)],
        srcs: Vec<Src<'_>>,
        pre: &mut Vec<Stmt>,
        span: Span,
    ) -> LResult<(Vec<Stmt>, Vec<Stmt>)> {
        enum B {
            In,
            Out(Option<super::expr::LV>, bool),
        }
        let mut bound: Vec<B> = Vec::with_capacity(params.len());
        let mut vals: Vec<RV> = Vec::new();
        for ((_, pt, dir), src) in params.iter().zip(srcs) {
            match (dir, src) {
                (Direction::In | Direction::None, Src::Expr(a)) => {
                    let mut p2 = Vec::new();
                    let rv = self.expr(a, &mut p2)?;
                    self.order_effects_pub(&mut vals, pre, p2, a.span)?;
                    vals.push(rv);
                    bound.push(B::In);
                }
                (Direction::In | Direction::None, Src::Value(v)) => {
                    let rv = self.const_value(&v, pt, span)?;
                    vals.push(rv);
                    bound.push(B::In);
                }
                (Direction::In | Direction::None, Src::Omitted) => {
                    vals.push(RV::Zero);
                    bound.push(B::In);
                }
                (Direction::Out | Direction::InOut, Src::Expr(a)) => {
                    if matches!(a.kind, ExprKind::DontCare) {
                        bound.push(B::Out(None, *dir == Direction::InOut));
                        continue;
                    }
                    let mut lv = self.lvalue(a, pre)?;
                    lv.loc = self.freeze(lv.loc, pre, a.span)?;
                    bound.push(B::Out(Some(lv), *dir == Direction::InOut));
                }
                (Direction::Out | Direction::InOut, _) => bound.push(B::Out(None, false)),
            }
        }
        let mut vals = vals.into_iter();
        let mut copy_in = Vec::new();
        let mut copy_out = Vec::new();
        for ((loc, pt, _), b) in params.iter().zip(bound) {
            match b {
                B::In => {
                    let rv = vals.next().unwrap_or(RV::Zero);
                    self.assign(loc, pt, rv, &mut copy_in, span)?;
                }
                B::Out(Some(lv), inout) => {
                    if inout {
                        let cur = self.lv_read(&lv);
                        self.assign(loc, pt, cur, &mut copy_in, span)?;
                    } else {
                        self.invalidate(loc, pt, &mut copy_in, span)?;
                    }
                    let rv = self.rv_at(loc.clone(), pt.clone());
                    self.lv_write(&lv, rv, &mut copy_out, span)?;
                }
                B::Out(None, _) => self.invalidate(loc, pt, &mut copy_in, span)?,
            }
        }
        Ok((copy_in, copy_out))
    }

    fn order_effects_pub(
        &mut self,
        earlier: &mut [RV],
        pre: &mut Vec<Stmt>,
        effects: Vec<Stmt>,
        span: Span,
    ) -> LResult<()> {
        if effects.is_empty() {
            return Ok(());
        }
        for rv in earlier.iter_mut() {
            match rv {
                RV::Scalar(x) if x.as_const().is_none() => {
                    let ty = x.ty();
                    let tmp = self.alloc_temp(ty.words(), span)?;
                    pre.push(Stmt::Assign(Loc::at(tmp), ty, x.clone()));
                    *x = Expr::Load(tmp, ty);
                }
                RV::Place(l, t) => {
                    let w = self.words(t, span)?;
                    let tmp = Loc::at(self.alloc_temp(w, span)?);
                    pre.push(Stmt::Copy {
                        dst: tmp.clone(),
                        src: l.clone(),
                        words: w,
                    });
                    *l = tmp;
                }
                _ => {}
            }
        }
        pre.extend(effects);
        Ok(())
    }

    fn user_call(
        &mut self,
        d: DeclId,
        ci: &CallInfo,
        args: &[ast::Arg],
        e: &ast::Expr,
        pre: &mut Vec<Stmt>,
    ) -> LResult<Option<RV>> {
        let (f, sig) = self.callable(d, &ci.type_args, e.span)?;
        let srcs = self.sources(d, ci, args);
        let (copy_in, mut copy_out) = self.bind_args(&sig.params, srcs, pre, e.span)?;
        let result = match &sig.ret {
            Some((rl, rt)) => {
                let w = self.words(rt, e.span)?;
                let tmp = Loc::at(self.alloc_temp(w, e.span)?);
                copy_out.push(Stmt::Copy {
                    dst: tmp.clone(),
                    src: rl.clone(),
                    words: w,
                });
                Some(self.rv_at(tmp, rt.clone()))
            }
            None => None,
        };
        pre.push(Stmt::Call {
            func: f,
            copy_in,
            copy_out,
        });
        Ok(result)
    }

    /// `t.apply()`: returns the temporaries holding hit and action_run.
    pub fn apply_table(
        &mut self,
        d: DeclId,
        span: Span,
        pre: &mut Vec<Stmt>,
    ) -> LResult<(u32, u32)> {
        let Some(Bind::Table(t)) = self.lookup(d).cloned() else {
            return err_at(span, "unresolved table");
        };
        let hit = self.alloc_temp(1, span)?;
        let run = self.alloc_temp(1, span)?;
        pre.push(Stmt::ApplyTable {
            table: t,
            hit: Some(hit),
            action_run: Some(run),
        });
        Ok((hit, run))
    }

    /// `t.apply().hit` / `.miss` / `.action_run`.
    pub fn apply_result(
        &mut self,
        e: &ast::Expr,
        base: &ast::Expr,
        pre: &mut Vec<Stmt>,
    ) -> LResult<RV> {
        let Some(ci) = self.ck.calls.get(&base.id).cloned() else {
            return err_at(base.span, "expected a table apply");
        };
        let CallTarget::TableApply(d) = ci.target else {
            return err_at(base.span, "expected a table apply");
        };
        let (hit, run) = self.apply_table(d, base.span, pre)?;
        Ok(RV::Scalar(match self.ck.members.get(&e.id) {
            Some(MemberInfo::Hit) => Expr::Load(hit, Ty::BOOL),
            Some(MemberInfo::Miss) => {
                Expr::Un(UnOp::Not, Ty::BOOL, Box::new(Expr::Load(hit, Ty::BOOL)))
            }
            _ => Expr::Load(run, Ty::CODE),
        }))
    }

    #[allow(clippy::too_many_arguments)]
    fn block_apply(
        &mut self,
        decl: DeclId,
        direct: bool,
        ci: &CallInfo,
        callee: &ast::Expr,
        args: &[ast::Arg],
        e: &ast::Expr,
        pre: &mut Vec<Stmt>,
    ) -> LResult<()> {
        let inst = if direct {
            let name = self.decl(decl).name.clone();
            let path = self.qualify(&name);
            let externs = self.extern_args(decl, ci, args, e.span)?;
            self.instantiate(decl, Vec::new(), path, None, &externs, e.span)?
        } else {
            let ExprKind::Member(base, _) = &callee.kind else {
                return err_at(e.span, "expected an instance");
            };
            let d = self.ck.resolved.get(&base.id).copied();
            match d.and_then(|d| self.lookup(d).cloned()) {
                Some(Bind::Block(i)) => {
                    let bdecl = self.insts[i as usize].decl;
                    let externs = self.extern_args(bdecl, ci, args, e.span)?;
                    if externs != self.insts[i as usize].externs {
                        return err_at(
                            e.span,
                            "applying an instance with other extern arguments than its first \
                             apply is not supported",
                        );
                    }
                    i
                }
                Some(Bind::PendingBlock(bd, bc, name)) => {
                    let path = self.block_path(&name);
                    let externs = self.extern_args(bd, ci, args, e.span)?;
                    let i = self.instantiate(bd, bc, path, None, &externs, e.span)?;
                    if let Some(d) = d {
                        self.bind(d, Bind::Block(i));
                    }
                    i
                }
                _ => return err_at(e.span, "unresolved parser or control instance"),
            }
        };
        let bi = self.insts[inst as usize].clone();
        let pinfo = self.decl(bi.decl).params.clone();
        let srcs = self.sources(bi.decl, ci, args);
        // Packet parameters have no slot.
        let mut params = Vec::new();
        let mut psrcs = Vec::new();
        for ((p, r), s) in pinfo.iter().zip(&bi.params).zip(srcs) {
            if let Some(l) = r {
                params.push((l.clone(), p.ty.clone(), p.dir));
                psrcs.push(s);
            }
        }
        let (copy_in, copy_out) = self.bind_args(&params, psrcs, pre, e.span)?;
        pre.push(match bi.body {
            BlockBody::Parser(p) => Stmt::CallParser {
                parser: p,
                copy_in,
                copy_out,
            },
            BlockBody::Control(f) => Stmt::Call {
                func: f,
                copy_in,
                copy_out,
            },
        });
        Ok(())
    }

    /// The extern instances given for the apply parameters of extern type of `callee`
    /// (parameter index, instance).
    fn extern_args(
        &self,
        callee: DeclId,
        ci: &CallInfo,
        args: &[ast::Arg],
        span: Span,
    ) -> LResult<Vec<(usize, ExternId)>> {
        let params = &self.decl(callee).params;
        let mut out = Vec::new();
        for (i, p) in params.iter().enumerate() {
            if !matches!(p.ty, Type::Extern(_)) || super::decl::is_packet_type(&p.ty) {
                continue;
            }
            let arg = match ci.args.get(i) {
                Some(CallArg::Arg(j)) => args.get(*j).map(|a| &a.value),
                _ => None,
            };
            let bound = arg
                .and_then(|a| self.ck.resolved.get(&a.id))
                .and_then(|d| self.lookup(*d));
            match bound {
                Some(Bind::Extern(x)) => out.push((i, *x)),
                _ => {
                    return err_at(
                        arg.map_or(span, |a| a.span),
                        format!("{}: expected an extern instance", p.name),
                    )
                }
            }
        }
        Ok(out)
    }

    /// The header stack at a location.
    fn stack_ref(&mut self, loc: Loc, t: &Type, span: Span) -> LResult<StackRef> {
        let Type::Stack(et, n) = t else {
            return err_at(span, format!("expected a header stack, found {t}"));
        };
        let ew = self.words(et, span)?;
        let elem = match &**et {
            Type::Agg(a) if a.kind == AggKind::Header => StackElem::Header(self.header(et, span)?),
            Type::Agg(a) if a.kind == AggKind::HeaderUnion => {
                let mut ms = Vec::new();
                let mut off = 0;
                for (_, ft) in &a.fields {
                    let h = self.header(ft, span)?;
                    ms.push((off, h));
                    off += self.p.headers[h as usize].words;
                }
                StackElem::Union(ms)
            }
            _ => StackElem::Other,
        };
        Ok(StackRef {
            loc,
            size: *n,
            elem_words: ew,
            elem,
        })
    }

    /// Validity words of the other members of the union `hdr` (an expression `u.member`) is in,
    /// relative to its own validity word.
    fn union_siblings(&mut self, hdr: &ast::Expr) -> LResult<Vec<i32>> {
        let ExprKind::Member(ub, _) = &hdr.kind else {
            return Ok(Vec::new());
        };
        let Some(MemberInfo::Field(i)) = self.ck.members.get(&hdr.id).cloned() else {
            return Ok(Vec::new());
        };
        let ut = self.ty_of(ub);
        let Type::Agg(a) = &ut else {
            return Ok(Vec::new());
        };
        if a.kind != AggKind::HeaderUnion {
            return Ok(Vec::new());
        }
        let mut offs = Vec::new();
        for j in 0..a.fields.len() {
            let (o, _) = self.field_of(&ut, j, hdr.span)?;
            offs.push(o as i32);
        }
        let me = offs[i];
        Ok(offs
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .map(|(_, o)| o - me)
            .collect())
    }

    fn builtin(
        &mut self,
        b: Builtin,
        callee: &ast::Expr,
        args: &[ast::Arg],
        e: &ast::Expr,
        pre: &mut Vec<Stmt>,
    ) -> LResult<Option<RV>> {
        if let Some(v) = self.ck.value_of(e.id).cloned() {
            let t = self.ty_of(e);
            return self.const_value(&v, &t, e.span).map(Some);
        }
        let ExprKind::Member(base, _) = &callee.kind else {
            return err_at(e.span, "expected a method call");
        };
        let bt = self.ty_of(base);
        match b {
            Builtin::IsValid => {
                let (loc, t) = self.place(base, pre)?;
                match &t {
                    Type::Agg(a) if a.kind == AggKind::HeaderUnion => {
                        let mut acc: Option<Expr> = None;
                        for j in 0..a.fields.len() {
                            let (o, _) = self.field_of(&t, j, e.span)?;
                            let v = Expr::load(&loc.plus(o), Ty::BOOL);
                            acc = Some(match acc {
                                None => v,
                                Some(x) => Expr::Or(Box::new(x), Box::new(v)),
                            });
                        }
                        Ok(Some(RV::Scalar(acc.unwrap_or(Expr::bool(false)))))
                    }
                    _ => Ok(Some(RV::Scalar(Expr::load(&loc, Ty::BOOL)))),
                }
            }
            Builtin::SetValid => {
                // BMv2's semantics (simple_switch's `add_header`): an invalid header's fields
                // are reset to 0, a valid one is left as it is.
                let (loc, t) = self.place(base, pre)?;
                let loc = self.freeze(loc, pre, base.span)?;
                let layout = self.header(&t, base.span)?;
                let words = self.p.headers[layout as usize].words;
                let others = self.union_siblings(base)?;
                pre.push(Stmt::set_valid_resetting(loc, words, others));
                Ok(None)
            }
            Builtin::SetInvalid => {
                let (loc, _) = self.place(base, pre)?;
                pre.push(Stmt::SetValid {
                    hdr: loc,
                    valid: false,
                    others: Vec::new(),
                });
                Ok(None)
            }
            Builtin::PushFront | Builtin::PopFront => {
                let (loc, t) = self.place(base, pre)?;
                let n = match args.first() {
                    Some(a) => self.const_u32(&a.value)? as i64,
                    None => 1,
                };
                let stack = self.stack_ref(loc, &t, e.span)?;
                pre.push(Stmt::Shift {
                    stack,
                    by: if b == Builtin::PushFront { n } else { -n },
                });
                Ok(None)
            }
            Builtin::MinSizeInBits
            | Builtin::MinSizeInBytes
            | Builtin::MaxSizeInBits
            | Builtin::MaxSizeInBytes => {
                let t = match &bt {
                    Type::TypeName(t) => (**t).clone(),
                    t => t.clone(),
                };
                let max = matches!(b, Builtin::MaxSizeInBits | Builtin::MaxSizeInBytes);
                let bits = if max {
                    t.max_width_bits()
                } else {
                    t.min_width_bits()
                }
                .unwrap_or(0);
                let v = if matches!(b, Builtin::MinSizeInBytes | Builtin::MaxSizeInBytes) {
                    bits.div_ceil(8)
                } else {
                    bits
                };
                let rt = self.scalar(&self.ty_of(e)).unwrap_or(Ty::bits(32));
                Ok(Some(RV::Scalar(Expr::Const(
                    v & crate::ops::mask(rt.width),
                    rt,
                ))))
            }
        }
    }

    // ------------------------------------------------------------------ externs

    /// Pushes an extern call; `ret` is the result type, returned as a temporary.
    fn xcall(
        &mut self,
        op: XOp,
        inst: Option<ExternId>,
        args: Vec<XArg>,
        ret: Option<Ty>,
        e: &ast::Expr,
        pre: &mut Vec<Stmt>,
    ) -> LResult<Option<RV>> {
        let r = match ret {
            Some(t) => Some((Loc::at(self.alloc_temp(t.words(), e.span)?), t)),
            None => None,
        };
        pre.push(Stmt::Extern(Box::new(ExternCall {
            op,
            inst,
            args,
            ret: r.clone(),
            what: self.here(e.span),
        })));
        Ok(r.map(|(l, t)| RV::Scalar(Expr::load(&l, t))))
    }

    fn val_arg(&mut self, a: Option<&ast::Expr>, pre: &mut Vec<Stmt>) -> LResult<XArg> {
        match a {
            Some(x) if !matches!(x.kind, ExprKind::DontCare) => {
                Ok(XArg::Val(self.scalar_expr(x, pre)?))
            }
            _ => Ok(XArg::None),
        }
    }

    fn data_arg(&mut self, a: Option<&ast::Expr>, pre: &mut Vec<Stmt>) -> LResult<XArg> {
        match a {
            Some(x) => {
                let rv = self.expr(x, pre)?;
                let t = self.ty_of(x);
                Ok(XArg::Data(self.data_items(rv, &t, x.span)?))
            }
            None => Ok(XArg::Data(Vec::new())),
        }
    }

    fn out_arg(
        &mut self,
        a: Option<&ast::Expr>,
        pre: &mut Vec<Stmt>,
    ) -> LResult<Option<(Loc, Ty)>> {
        let Some(x) = a else { return Ok(None) };
        if matches!(x.kind, ExprKind::DontCare) {
            return Ok(None);
        }
        let (l, t) = self.place(x, pre)?;
        let l = self.freeze(l, pre, x.span)?;
        match self.scalar(&t) {
            Some(s) => Ok(Some((l, s))),
            None => err_at(
                x.span,
                format!("expected a scalar location, found type {t}"),
            ),
        }
    }

    /// The lower-case enum member name of a constant argument.
    fn enum_arg(&self, a: Option<&ast::Expr>) -> String {
        match a.and_then(|x| self.ck.value_of(x.id)) {
            Some(Value::Enum {
                member: Some(m), ..
            }) => m.to_ascii_lowercase(),
            _ => String::new(),
        }
    }

    fn algo_of(name: &str) -> HashAlgo {
        match name {
            "identity" => HashAlgo::Identity,
            "crc16" => HashAlgo::Crc16,
            "crc16_custom" => HashAlgo::Crc16Custom,
            "crc32" => HashAlgo::Crc32,
            "crc32_custom" => HashAlgo::Crc32Custom,
            "crc64" => HashAlgo::Crc64,
            "csum16" | "ones_complement16" => HashAlgo::Csum16,
            "xor16" => HashAlgo::Xor16,
            "random" => HashAlgo::Random,
            _ => HashAlgo::TargetDefault,
        }
    }

    /// The program's codes for green, yellow, red in a meter result type.
    fn colors(&self, t: &Type) -> [u64; 3] {
        if let Type::Enum(en) = t {
            if en.underlying.is_none() {
                let pos = |n: &str| {
                    en.members
                        .iter()
                        .position(|m| m.eq_ignore_ascii_case(n))
                        .unwrap_or(0) as u64
                };
                return [pos("GREEN"), pos("YELLOW"), pos("RED")];
            }
        }
        [0, 1, 2]
    }

    /// The scalar field `name` of the struct an expression denotes.
    fn field_expr(&mut self, x: &ast::Expr, name: &str, pre: &mut Vec<Stmt>) -> LResult<Expr> {
        let (loc, t) = self.place(x, pre)?;
        let Type::Agg(a) = &t else {
            return err_at(x.span, format!("expected a struct with a field {name}"));
        };
        let Some(i) = a.fields.iter().position(|f| f.0 == name) else {
            return err_at(x.span, format!("{t} has no field {name}"));
        };
        let (off, ft) = self.field_of(&t, i, x.span)?;
        match self.scalar(&ft) {
            Some(s) => Ok(Expr::load(&loc.plus(off), s)),
            None => err_at(x.span, format!("field {name} is not a scalar")),
        }
    }

    /// An action declaration named `name` visible from the current instance.
    fn find_action(&self, name: &str) -> Option<DeclId> {
        let inst_decl = self.cur_inst.map(|i| self.insts[i as usize].decl);
        let mut global = None;
        for (i, d) in self.ck.decls.iter().enumerate() {
            if d.kind != p4_front::check::EntityKind::Action || d.name != name {
                continue;
            }
            let id = DeclId(i as u32);
            match d.parent {
                Some(p) if Some(p) == inst_decl => return Some(id),
                None => global = Some(id),
                _ => {}
            }
        }
        global
    }

    /// A method call on an extern instance (the externs of core.p4, v1model.p4 and pna.p4):
    /// each family of externs has its helper below.
    #[allow(clippy::too_many_arguments)]
    fn extern_method(
        &mut self,
        d: DeclId,
        ci: &CallInfo,
        callee: &ast::Expr,
        args: &[ast::Arg],
        e: &ast::Expr,
        pre: &mut Vec<Stmt>,
    ) -> LResult<Option<RV>> {
        let ExprKind::Member(base, _) = &callee.kind else {
            return err_at(e.span, "expected a method call");
        };
        let method = self.decl(d).name.clone();
        let ext = self
            .decl(d)
            .parent
            .map(|p| self.decl(p).name.clone())
            .unwrap_or_default();
        if ext == "packet_in" || ext == "packet_out" {
            let nth = |i: usize| method_arg(ci, args, i);
            return self.packet_method(&method, ci, nth(0), nth(1), e, pre);
        }
        let inst = match self.ck.resolved.get(&base.id).and_then(|x| self.lookup(*x)) {
            Some(Bind::Extern(x)) => *x,
            _ => {
                return err_at(
                    base.span,
                    format!("{ext}.{method}: unresolved extern instance"),
                )
            }
        };
        let rt_full = self.ty_of(e);
        let m = MethodCall {
            d,
            ci,
            args,
            e,
            inst: Some(inst),
            rty: self.scalar(&rt_full),
            rt_full,
            ext,
            method,
        };
        let (i, rty) = (m.inst, m.rty);
        match (m.ext.as_str(), m.method.as_str()) {
            ("counter" | "Counter" | "direct_counter" | "DirectCounter", "count") => {
                self.counter_method(&m, pre)
            }
            ("meter", "execute_meter")
            | ("Meter" | "DirectMeter", "execute" | "dpdk_execute")
            | ("direct_meter", "read") => self.meter_method(&m, pre),
            ("register" | "Register", "read") => self.register_read(&m, pre),
            ("register" | "Register", "write") => self.register_write(&m, pre),
            ("Hash", "get_hash") => self.hash_get(&m, pre),
            ("Checksum" | "Checksum16", "clear" | "get")
            | ("Checksum", "update")
            | (
                "InternetChecksum",
                "clear" | "add" | "subtract" | "get" | "get_state" | "set_state",
            ) => self.checksum_method(&m, pre),
            ("Random", "read") => self.xcall(XOp::RandomRead, i, vec![], rty, e, pre),
            ("Digest", "pack") => self.digest_pack(&m, pre),
            _ => unsupported_method(&m),
        }
    }

    /// The argument named `n` of a method call.
    fn named_arg<'c>(&self, m: &MethodCall<'c>, n: &str) -> Option<&'c ast::Expr> {
        self.arg_named(m.d, m.ci, m.args, n)
    }

    /// `count` of v1model's `counter`/`direct_counter` and PSA's/PNA's `Counter`/
    /// `DirectCounter` (the increment, when given, is PNA's).
    fn counter_method(&mut self, m: &MethodCall<'_>, pre: &mut Vec<Stmt>) -> LResult<Option<RV>> {
        if matches!(m.ext.as_str(), "counter" | "Counter") {
            let idx = self.val_arg(m.nth(0), pre)?;
            let inc = self.val_arg(m.nth(1), pre)?;
            return self.xcall(XOp::CounterCount, m.inst, vec![idx, inc], None, m.e, pre);
        }
        // v1model's tables count their `direct_counter` on every hit themselves; its `count()`
        // adds nothing (v1model.p4: "The count() method is actually unnecessary"; BMv2 counts
        // once). PSA's and PNA's `DirectCounter` count only when `count` is called.
        if m.ext == "direct_counter" {
            return Ok(None);
        }
        let inc = self.val_arg(m.nth(0), pre)?;
        self.xcall(XOp::DirectCounterCount, m.inst, vec![inc], None, m.e, pre)
    }

    /// Meters: v1model's `meter.execute_meter` and `direct_meter.read` (the color written to
    /// an out argument), PSA's/PNA's `Meter.execute` and `DirectMeter.execute` (returned; the
    /// color argument is a color-aware meter's input color).
    fn meter_method(&mut self, m: &MethodCall<'_>, pre: &mut Vec<Stmt>) -> LResult<Option<RV>> {
        let (i, rty, e) = (m.inst, m.rty, m.e);
        match (m.ext.as_str(), m.method.as_str()) {
            ("meter", _) | ("direct_meter", _) => {
                let idx = if m.ext == "meter" {
                    Some(self.val_arg(self.named_arg(m, "index"), pre)?)
                } else {
                    None
                };
                let rx = self.named_arg(m, "result");
                let colors = match rx {
                    Some(x) => self.colors(&self.ty_of(x)),
                    None => [0, 1, 2],
                };
                let out = self.out_arg(rx, pre)?;
                let (op, args) = match idx {
                    Some(idx) => (
                        XOp::MeterExecute { colors },
                        vec![idx, XArg::None, XArg::None],
                    ),
                    None => (XOp::DirectMeterRead { colors }, vec![]),
                };
                pre.push(Stmt::Extern(Box::new(ExternCall {
                    op,
                    inst: i,
                    args,
                    ret: out,
                    what: self.here(m.e.span),
                })));
                Ok(None)
            }
            ("Meter", _) => {
                let colors = self.colors(&m.rt_full);
                let idx = self.val_arg(self.named_arg(m, "index"), pre)?;
                let color = self.val_arg(self.named_arg(m, "color"), pre)?;
                let len = self.val_arg(self.named_arg(m, "pkt_len"), pre)?;
                let op = XOp::MeterExecute { colors };
                self.xcall(op, i, vec![idx, color, len], rty, e, pre)
            }
            _ => {
                let colors = self.colors(&m.rt_full);
                let color = self.val_arg(self.named_arg(m, "color"), pre)?;
                let len = self.val_arg(self.named_arg(m, "pkt_len"), pre)?;
                let op = XOp::DirectMeterExecute { colors };
                self.xcall(op, i, vec![color, len], rty, e, pre)
            }
        }
    }

    /// `read` of v1model's `register` (into its `result` argument) and PSA's/PNA's `Register`
    /// (returned).
    fn register_read(&mut self, m: &MethodCall<'_>, pre: &mut Vec<Stmt>) -> LResult<Option<RV>> {
        let e = m.e;
        let idx = self.val_arg(self.named_arg(m, "index"), pre)?;
        let (dst, t) = if m.ext == "register" {
            let Some(rx) = self.named_arg(m, "result") else {
                return Err(missing(e));
            };
            let (l, t) = self.place(rx, pre)?;
            (self.freeze(l, pre, rx.span)?, t)
        } else {
            let w = self.words(&m.rt_full, e.span)?;
            (Loc::at(self.alloc_temp(w, e.span)?), m.rt_full.clone())
        };
        let lay = self.layout(&t, e.span)?;
        pre.push(Stmt::Extern(Box::new(ExternCall {
            op: XOp::RegisterRead,
            inst: m.inst,
            args: vec![idx, XArg::Agg(dst.clone(), lay)],
            ret: None,
            what: self.here(m.e.span),
        })));
        if m.ext == "register" {
            Ok(None)
        } else {
            Ok(Some(self.rv_at(dst, t)))
        }
    }

    /// `write` of a register: the value through a temporary of its type.
    fn register_write(&mut self, m: &MethodCall<'_>, pre: &mut Vec<Stmt>) -> LResult<Option<RV>> {
        let idx = self.val_arg(self.named_arg(m, "index"), pre)?;
        let Some(vx) = self.named_arg(m, "value") else {
            return Err(missing(m.e));
        };
        let vt = self.ty_of(vx);
        let rv = self.expr(vx, pre)?;
        let w = self.words(&vt, vx.span)?;
        let tmp = Loc::at(self.alloc_temp(w, vx.span)?);
        self.assign(&tmp, &vt, rv, pre, vx.span)?;
        let lay = self.layout(&vt, vx.span)?;
        let args = vec![idx, XArg::Agg(tmp, lay)];
        self.xcall(XOp::RegisterWrite, m.inst, args, None, m.e, pre)
    }

    /// PSA's/PNA's `Hash.get_hash(base, data, max)`.
    fn hash_get(&mut self, m: &MethodCall<'_>, pre: &mut Vec<Stmt>) -> LResult<Option<RV>> {
        let base_a = self.val_arg(self.named_arg(m, "base"), pre)?;
        let data = self.data_arg(self.named_arg(m, "data"), pre)?;
        let max = self.val_arg(self.named_arg(m, "max"), pre)?;
        self.xcall(
            XOp::HashGet,
            m.inst,
            vec![base_a, data, max],
            m.rty,
            m.e,
            pre,
        )
    }

    /// Checksums: `Checksum` (`clear`, `update`, `get`), `Checksum16.get(data)` (a checksum of
    /// `data` alone), `InternetChecksum` (`clear`, `add`, `subtract`, `get`, `get_state`,
    /// `set_state`).
    fn checksum_method(&mut self, m: &MethodCall<'_>, pre: &mut Vec<Stmt>) -> LResult<Option<RV>> {
        let (i, rty, e) = (m.inst, m.rty, m.e);
        match (m.ext.as_str(), m.method.as_str()) {
            (_, "clear") => self.xcall(XOp::ChecksumClear, i, vec![], None, e, pre),
            ("Checksum16", "get") => {
                let data = self.data_arg(m.nth(0), pre)?;
                for (op, args) in [
                    (XOp::ChecksumClear, vec![]),
                    (XOp::ChecksumUpdate, vec![data]),
                ] {
                    pre.push(Stmt::Extern(Box::new(ExternCall {
                        op,
                        inst: i,
                        args,
                        ret: None,
                        what: self.here(m.e.span),
                    })));
                }
                self.xcall(XOp::ChecksumGet, i, vec![], rty, e, pre)
            }
            (_, "get") => self.xcall(XOp::ChecksumGet, i, vec![], rty, e, pre),
            (_, "update" | "add" | "subtract") => {
                let data = self.data_arg(m.nth(0), pre)?;
                let op = match m.method.as_str() {
                    "update" => XOp::ChecksumUpdate,
                    "add" => XOp::CsumAdd,
                    _ => XOp::CsumSubtract,
                };
                self.xcall(op, i, vec![data], None, e, pre)
            }
            (_, "get_state") => self.xcall(XOp::CsumGetState, i, vec![], rty, e, pre),
            (_, "set_state") => {
                let v = self.val_arg(m.nth(0), pre)?;
                self.xcall(XOp::CsumSetState, i, vec![v], None, e, pre)
            }
            _ => unsupported_method(m),
        }
    }

    /// PNA's `Digest.pack(data)`.
    fn digest_pack(&mut self, m: &MethodCall<'_>, pre: &mut Vec<Stmt>) -> LResult<Option<RV>> {
        let data = self.data_arg(m.nth(0), pre)?;
        self.xcall(XOp::DigestPack, m.inst, vec![data], None, m.e, pre)
    }

    fn packet_method(
        &mut self,
        method: &str,
        ci: &CallInfo,
        a0: Option<&ast::Expr>,
        a1: Option<&ast::Expr>,
        e: &ast::Expr,
        pre: &mut Vec<Stmt>,
    ) -> LResult<Option<RV>> {
        match method {
            "extract" => {
                let Some(h) = a0 else { return Err(missing(e)) };
                // `extract<T>(_)`: skip a T.
                if matches!(h.kind, ExprKind::DontCare) {
                    let t = match ci.type_args.first() {
                        Some(t) => t.clone(),
                        None => return err_at(h.span, "extract(_) needs a type argument"),
                    };
                    let bits = t.min_width_bits().unwrap_or(0);
                    pre.push(Stmt::Advance(Expr::Const(bits, Ty::bits(32))));
                    return Ok(None);
                }
                // `stack.next.member` of a stack of header unions.
                if let ExprKind::Member(ub, _) = &h.kind {
                    if let (Some(MemberInfo::Field(mi)), ExprKind::Member(sb, _)) =
                        (self.ck.members.get(&h.id).cloned(), &ub.kind)
                    {
                        if matches!(self.ck.members.get(&ub.id), Some(MemberInfo::StackNext)) {
                            let (sl, st) = self.place(sb, pre)?;
                            let sl = self.freeze(sl, pre, sb.span)?;
                            let stack = self.stack_ref(sl, &st, h.span)?;
                            pre.push(Stmt::ExtractNext {
                                stack,
                                member: Some(mi as u32),
                                varbit_bits: None,
                            });
                            return Ok(None);
                        }
                    }
                }
                // `stack.next`
                if let ExprKind::Member(sb, _) = &h.kind {
                    if matches!(self.ck.members.get(&h.id), Some(MemberInfo::StackNext)) {
                        let (sl, st) = self.place(sb, pre)?;
                        let sl = self.freeze(sl, pre, sb.span)?;
                        let stack = self.stack_ref(sl, &st, h.span)?;
                        let varbit_bits = match a1 {
                            Some(b) => Some(self.scalar_expr(b, pre)?),
                            None => None,
                        };
                        pre.push(Stmt::ExtractNext {
                            stack,
                            member: None,
                            varbit_bits,
                        });
                        return Ok(None);
                    }
                }
                let (l, t) = self.place(h, pre)?;
                let l = self.freeze(l, pre, h.span)?;
                let layout = self.header(&t, h.span)?;
                let varbit_bits = match a1 {
                    Some(b) => Some(self.scalar_expr(b, pre)?),
                    None => None,
                };
                let others = self.union_siblings(h)?;
                pre.push(Stmt::Extract {
                    hdr: HdrRef {
                        loc: l.clone(),
                        layout,
                    },
                    varbit_bits,
                });
                if !others.is_empty() {
                    pre.push(Stmt::SetValid {
                        hdr: l,
                        valid: true,
                        others,
                    });
                }
                Ok(None)
            }
            "lookahead" => {
                let t = match ci.type_args.first() {
                    Some(t) => t.clone(),
                    None => self.ty_of(e),
                };
                let layout = self.layout(&t, e.span)?;
                let w = layout.words(&self.p.headers);
                let dst = Loc::at(self.alloc_temp(w, e.span)?);
                pre.push(Stmt::Lookahead {
                    dst: dst.clone(),
                    layout,
                });
                Ok(Some(self.rv_at(dst, t)))
            }
            "advance" => {
                let Some(b) = a0 else { return Err(missing(e)) };
                let x = self.scalar_expr(b, pre)?;
                pre.push(Stmt::Advance(x));
                Ok(None)
            }
            "length" => {
                let rt = self.scalar(&self.ty_of(e)).unwrap_or(Ty::bits(32));
                self.xcall(XOp::PacketLength, None, vec![], Some(rt), e, pre)
            }
            "emit" => {
                let Some(h) = a0 else { return Err(missing(e)) };
                let rv = self.expr(h, pre)?;
                let t = self.ty_of(h);
                match rv {
                    RV::Place(l, pt) => self.emit_value(l, &pt, pre, h.span)?,
                    other => {
                        let w = self.words(&t, h.span)?;
                        let tmp = Loc::at(self.alloc_temp(w, h.span)?);
                        self.assign(&tmp, &t, other, pre, h.span)?;
                        self.emit_value(tmp, &t, pre, h.span)?;
                    }
                }
                Ok(None)
            }
            m => err_at(e.span, format!("packet method {m} is not supported")),
        }
    }

    /// `emit` of a header, union, stack or struct (its headers in order, P4_16 §15.2).
    fn emit_value(&mut self, l: Loc, t: &Type, pre: &mut Vec<Stmt>, span: Span) -> LResult<()> {
        match t {
            Type::Agg(a) if a.kind == AggKind::Header => {
                let layout = self.header(t, span)?;
                pre.push(Stmt::Emit(HdrRef { loc: l, layout }));
            }
            Type::Agg(a) => {
                for i in 0..a.fields.len() {
                    let (off, ft) = self.field_of(t, i, span)?;
                    self.emit_value(l.plus(off), &ft, pre, span)?;
                }
            }
            Type::Stack(et, n) => {
                let ew = self.words(et, span)?;
                for i in 0..*n {
                    self.emit_value(l.plus(1 + i * ew), et, pre, span)?;
                }
            }
            _ => {}
        }
        Ok(())
    }
}

/// An extern method call being lowered: the method's declaration and call info, the call's
/// arguments and expression, the extern's and the method's names, the instance, and the type
/// the call returns (as a scalar when it is one).
struct MethodCall<'c> {
    d: DeclId,
    ci: &'c CallInfo,
    args: &'c [ast::Arg],
    e: &'c ast::Expr,
    ext: String,
    method: String,
    inst: Option<ExternId>,
    rt_full: Type,
    rty: Option<Ty>,
}

impl<'c> MethodCall<'c> {
    /// The argument of the `i`-th parameter, when the call gives one.
    fn nth(&self, i: usize) -> Option<&'c ast::Expr> {
        method_arg(self.ci, self.args, i)
    }
}

/// The argument of a call's `i`-th parameter, when the call gives one.
fn method_arg<'c>(ci: &CallInfo, args: &'c [ast::Arg], i: usize) -> Option<&'c ast::Expr> {
    match ci.args.get(i) {
        Some(CallArg::Arg(j)) => args.get(*j).map(|a| &a.value),
        _ => None,
    }
}

/// The error for a method of an extern the runtime does not implement.
fn unsupported_method(m: &MethodCall<'_>) -> LResult<Option<RV>> {
    err_at(
        m.e.span,
        format!(
            "extern method {}.{} is not supported by the runtime",
            m.ext, m.method
        ),
    )
}

fn missing(e: &ast::Expr) -> p4_front::diag::Diagnostic {
    p4_front::diag::Diagnostic::error(e.span, "missing argument")
}
