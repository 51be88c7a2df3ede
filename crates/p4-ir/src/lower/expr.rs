//! Expressions (P4_16 §8): scalars become [`Expr`] trees; aggregates are frame regions or
//! list / struct expressions assigned field by field.

use super::{err_at, Bind, LResult, Lw};
use crate::ir::*;
use crate::ops;
use num_bigint::{BigInt, BigUint};
use p4_front::ast::{self, BinOp as AB, ExprKind, UnOp as AU};
use p4_front::check::{AggKind, MemberInfo, Type, Value};
use p4_front::source::Span;

/// A lowered value.
#[derive(Clone, Debug)]
pub(crate) enum RV {
    Scalar(Expr),
    /// An aggregate (or varbit) value stored in the frame.
    Place(Loc, Type),
    /// A list expression / tuple value, items in order.
    List(Vec<RV>),
    /// A structure-valued expression `{f = e, ...}` (fields by name).
    Fields(Vec<(String, RV)>),
    /// `{#}`.
    Invalid,
    /// `...`: the default value (zero / invalid).
    Zero,
}

/// An l-value: a location, possibly a bit slice of the scalar stored there.
#[derive(Clone, Debug)]
pub(crate) struct LV {
    pub loc: Loc,
    pub ty: Type,
    /// `(type of the whole scalar, hi, lo)` for `x[hi:lo]` (nested slices combined).
    pub slice: Option<(Ty, u32, u32)>,
}

/// One item of data serialized for hashes, checksums, digests and `add_entry` parameters.
pub(crate) type DataItems = Vec<Datum>;

impl<'a> Lw<'a> {
    /// The checker's type of an expression.
    pub fn ty_of(&self, e: &ast::Expr) -> Type {
        self.ck.type_of(e.id).cloned().unwrap_or(Type::Error)
    }

    /// The scalar type of an expression, or an error naming it.
    pub fn scalar_of(&self, e: &ast::Expr) -> LResult<Ty> {
        let t = self.ty_of(e);
        match self.scalar(&t) {
            Some(s) => Ok(s),
            None if matches!(t, Type::Int) => Ok(Ty::int(64)),
            None => err_at(e.span, format!("expected a scalar value, found type {t}")),
        }
    }

    /// Lowers an expression used as a scalar.
    pub fn scalar_expr(&mut self, e: &ast::Expr, pre: &mut Vec<Stmt>) -> LResult<Expr> {
        let rv = self.expr(e, pre)?;
        self.as_scalar(rv, e.span)
    }

    /// A lowered value as a scalar expression.
    pub fn as_scalar(&mut self, rv: RV, span: Span) -> LResult<Expr> {
        match rv {
            RV::Scalar(x) => Ok(x),
            RV::Place(l, t) => match self.scalar(&t) {
                Some(s) => Ok(Expr::load(&l, s)),
                None => err_at(span, format!("expected a scalar value, found type {t}")),
            },
            RV::List(mut items) if items.len() == 1 => {
                let one = items.pop().unwrap_or(RV::Zero);
                self.as_scalar(one, span)
            }
            RV::Zero => Ok(Expr::Const(0, Ty::bits(64))),
            _ => err_at(span, "expected a scalar value, found a list or structure"),
        }
    }

    /// A compile-time value of type `t`.
    pub fn const_value(&mut self, v: &Value, t: &Type, span: Span) -> LResult<RV> {
        let st = self.scalar(t);
        Ok(match v {
            Value::Bool(b) => RV::Scalar(Expr::bool(*b)),
            Value::Bits {
                value,
                width,
                signed,
            } => {
                let ty = st.unwrap_or(Ty {
                    width: *width,
                    signed: *signed,
                });
                RV::Scalar(Expr::constant(
                    &Val::from_big(ops::from_bigint(value, ty.width)),
                    ty,
                ))
            }
            Value::Int(i) => {
                let ty = st.unwrap_or(Ty::int(64));
                RV::Scalar(Expr::constant(
                    &Val::from_big(ops::from_bigint(i, ty.width)),
                    ty,
                ))
            }
            Value::Error(_) | Value::Enum { .. } => {
                let ty = st.unwrap_or(Ty::CODE);
                match self.enum_code(v) {
                    Some(c) => RV::Scalar(Expr::Const(c & ops::mask(ty.width), ty)),
                    None => return err_at(span, format!("cannot represent the value {v}")),
                }
            }
            Value::MatchKind(_) => RV::Scalar(Expr::Const(0, Ty::CODE)),
            Value::Invalid => RV::Invalid,
            Value::List(vs) => {
                let tys = self.elem_types(t, vs.len());
                let mut out = Vec::with_capacity(vs.len());
                for (x, ty) in vs.iter().zip(tys) {
                    out.push(self.const_value(x, &ty, span)?);
                }
                if let Type::Agg(a) = t {
                    if a.kind != AggKind::Header || out.len() == a.fields.len() {
                        let fs = a.fields.iter().map(|f| f.0.clone()).zip(out).collect();
                        return Ok(RV::Fields(fs));
                    }
                }
                RV::List(out)
            }
            Value::Struct(fs) => {
                let mut out = Vec::with_capacity(fs.len());
                for (n, x) in fs {
                    let ft = match t {
                        Type::Agg(a) => a.field(n).map(|f| f.1.clone()).unwrap_or(Type::Error),
                        Type::StructExpr(f2) => f2
                            .iter()
                            .find(|f| &f.0 == n)
                            .map(|f| f.1.clone())
                            .unwrap_or(Type::Error),
                        _ => Type::Error,
                    };
                    out.push((n.clone(), self.const_value(x, &ft, span)?));
                }
                RV::Fields(out)
            }
            Value::String(_) => return err_at(span, "a string is not a run-time value"),
        })
    }

    /// Element types of a list-like type with `n` items.
    fn elem_types(&self, t: &Type, n: usize) -> Vec<Type> {
        match t {
            Type::Tuple(ts) | Type::ListExpr(ts) => ts.clone(),
            Type::Agg(a) => a.fields.iter().map(|f| f.1.clone()).collect(),
            Type::Stack(e, _) => vec![(**e).clone(); n],
            Type::List(e) => vec![(**e).clone(); n],
            _ => vec![Type::Error; n],
        }
    }

    /// Lowers an expression; side effects (calls, table applies) are appended to `pre`.
    pub fn expr(&mut self, e: &ast::Expr, pre: &mut Vec<Stmt>) -> LResult<RV> {
        self.enter(e.span)?;
        let r = self.expr_inner(e, pre);
        self.leave();
        r
    }

    /// One expression (P4_16 spec §8): a compile-time value as a constant, else each kind of
    /// expression by its helper below.
    fn expr_inner(&mut self, e: &ast::Expr, pre: &mut Vec<Stmt>) -> LResult<RV> {
        let t = self.ty_of(e);
        // Compile-time values first (constants, enum members, folded expressions).
        if !matches!(e.kind, ExprKind::Call { .. }) {
            if let Some(v) = self.ck.value_of(e.id) {
                if !matches!(v, Value::String(_)) {
                    let v = v.clone();
                    return self.const_value(&v, &t, e.span);
                }
            }
        }
        match &e.kind {
            ExprKind::Bool(b) => Ok(RV::Scalar(Expr::bool(*b))),
            ExprKind::Int { value, width, .. } => Ok(self.int_literal(&t, value, *width)),
            ExprKind::Path(_) | ExprKind::Member(..) | ExprKind::Index(..) | ExprKind::This => {
                self.name_expr(e, &t, pre)
            }
            ExprKind::Slice(base, hi, lo) => self.slice_expr(e, base, hi, lo, pre),
            ExprKind::PlusSlice(base, start, width) => {
                self.plus_slice_expr(e, base, start, width, pre)
            }
            ExprKind::Call { .. } => self.call_value(e, pre),
            ExprKind::Unary(op, a) => self.unary_expr(e, *op, a, pre),
            ExprKind::Binary(op, a, b) => self.binary(e, *op, a, b, pre),
            ExprKind::Ternary(c, a, b) => self.ternary_expr(e, t, c, a, b, pre),
            ExprKind::Cast(_, a) => self.cast_expr(&t, a, pre),
            ExprKind::List { items, .. } => self.list_expr(e, items, pre),
            ExprKind::StructInit { fields, .. } => self.struct_init_expr(e, fields, pre),
            ExprKind::Invalid => Ok(RV::Invalid),
            ExprKind::Dots => Ok(RV::Zero),
            ExprKind::String(_) => err_at(e.span, "a string is not a run-time value"),
            ExprKind::Type(_) => err_at(e.span, "a type is not a value"),
            ExprKind::Mask(..) | ExprKind::Range(..) | ExprKind::Default | ExprKind::DontCare => {
                err_at(e.span, "a keyset is not a value here")
            }
        }
    }

    /// An integer literal (§6.4.3.3) of type `t`, or of its written width (`int` as 64 bits).
    fn int_literal(&self, t: &Type, value: &BigInt, width: Option<(u32, bool)>) -> RV {
        let ty = match (self.scalar(t), width) {
            (Some(s), _) => s,
            (None, Some((w, s))) => Ty {
                width: w,
                signed: s,
            },
            (None, None) => Ty::int(64),
        };
        RV::Scalar(Expr::constant(
            &Val::from_big(ops::from_bigint(value, ty.width)),
            ty,
        ))
    }

    /// A name, member or index: a table apply's result, a stack's `lastIndex`/`size`, a field
    /// of a value, a constant, or what is stored at its place.
    fn name_expr(&mut self, e: &ast::Expr, t: &Type, pre: &mut Vec<Stmt>) -> LResult<RV> {
        if let ExprKind::Member(base, _) = &e.kind {
            if let Some(rv) = self.member_value(e, base, pre)? {
                return Ok(rv);
            }
        }
        if let ExprKind::Path(_) = &e.kind {
            if let Some(rv) = self.path_const(e, t)? {
                return Ok(rv);
            }
        }
        let (loc, pt) = self.place(e, pre)?;
        match self.scalar(&pt) {
            Some(s) => Ok(RV::Scalar(Expr::load(&loc, s))),
            None => Ok(RV::Place(loc, pt)),
        }
    }

    /// `base.m` when it is not a place's member: `hit`/`miss`/`action_run` of an apply (§14.2.2),
    /// a stack's `lastIndex` and `size` (§8.18), a field of a list or struct expression.
    fn member_value(
        &mut self,
        e: &ast::Expr,
        base: &ast::Expr,
        pre: &mut Vec<Stmt>,
    ) -> LResult<Option<RV>> {
        match self.ck.members.get(&e.id) {
            Some(MemberInfo::Hit) | Some(MemberInfo::Miss) | Some(MemberInfo::ActionRun) => {
                self.apply_result(e, base, pre).map(Some)
            }
            Some(MemberInfo::StackLastIndex) => {
                let (loc, _) = self.place(base, pre)?;
                let next = Expr::load(&loc, Ty::bits(32));
                Ok(Some(RV::Scalar(Expr::Bin(
                    BinOp::Sub,
                    Ty::bits(32),
                    Box::new(next),
                    Box::new(Expr::Const(1, Ty::bits(32))),
                ))))
            }
            Some(MemberInfo::StackSize) => match self.ty_of(base) {
                Type::Stack(_, n) => Ok(Some(RV::Scalar(Expr::Const(u64::from(n), Ty::bits(32))))),
                _ => Ok(None),
            },
            // A field of a non-place value (a list / struct expression).
            Some(MemberInfo::Field(_)) if !self.is_place_expr(base) => {
                let b = self.expr(base, pre)?;
                self.field_of_rv(b, base, e, pre).map(Some)
            }
            _ => Ok(None),
        }
    }

    /// A name bound to a constant (in the scopes, or a declaration's value); an error for a
    /// name that denotes something other than a value.
    fn path_const(&mut self, e: &ast::Expr, t: &Type) -> LResult<Option<RV>> {
        let Some(d) = self.ck.resolved.get(&e.id).copied() else {
            return Ok(None);
        };
        match self.lookup(d).cloned() {
            Some(Bind::Const(v, ct)) => {
                let ty = if matches!(t, Type::Error | Type::Int) {
                    ct
                } else {
                    t.clone()
                };
                return self.const_value(&v, &ty, e.span).map(Some);
            }
            Some(Bind::Var(..)) | None => {}
            Some(_) => return err_at(e.span, "this name does not denote a value"),
        }
        if self.lookup(d).is_none() {
            if let Some(v) = self.decl(d).value.clone() {
                return self.const_value(&v, t, e.span).map(Some);
            }
        }
        Ok(None)
    }

    /// `base[hi:lo]` (§8.6), constant bounds within the base's width.
    fn slice_expr(
        &mut self,
        e: &ast::Expr,
        base: &ast::Expr,
        hi: &ast::Expr,
        lo: &ast::Expr,
        pre: &mut Vec<Stmt>,
    ) -> LResult<RV> {
        let (h, l) = (self.const_u32(hi)?, self.const_u32(lo)?);
        let bt = self.scalar_of(base)?;
        let b = self.scalar_expr(base, pre)?;
        if h < l || h >= bt.width {
            return err_at(e.span, format!("slice [{h}:{l}] out of range"));
        }
        Ok(RV::Scalar(Expr::Slice(Box::new(b), bt, h, l)))
    }

    /// `base[start +: width]`: a constant width; a run-time start shifts the base right.
    fn plus_slice_expr(
        &mut self,
        e: &ast::Expr,
        base: &ast::Expr,
        start: &ast::Expr,
        width: &ast::Expr,
        pre: &mut Vec<Stmt>,
    ) -> LResult<RV> {
        let w = self.const_u32(width)?;
        let bt = self.scalar_of(base)?;
        let b = self.scalar_expr(base, pre)?;
        if w == 0 || w > bt.width {
            return err_at(e.span, "slice width out of range");
        }
        if let Some(s) = self.ck.value_of(start.id).and_then(Value::as_u64) {
            let s = s as u32;
            if s + w > bt.width {
                return err_at(e.span, "slice out of range");
            }
            return Ok(RV::Scalar(Expr::Slice(Box::new(b), bt, s + w - 1, s)));
        }
        let s = self.scalar_expr(start, pre)?;
        let ut = Ty::bits(bt.width);
        let sh = Expr::Bin(
            BinOp::Shr,
            ut,
            Box::new(Expr::Cast(ut, bt, Box::new(b))),
            Box::new(s),
        );
        Ok(RV::Scalar(Expr::Cast(Ty::bits(w), ut, Box::new(sh))))
    }

    /// A call used as a value: it must return one.
    fn call_value(&mut self, e: &ast::Expr, pre: &mut Vec<Stmt>) -> LResult<RV> {
        match self.call(e, pre, true)? {
            Some(rv) => Ok(rv),
            None => err_at(e.span, "this call has no value"),
        }
    }

    /// `+a`, `!a`, `~a`, `-a` (§8.5–§8.6).
    fn unary_expr(
        &mut self,
        e: &ast::Expr,
        op: AU,
        a: &ast::Expr,
        pre: &mut Vec<Stmt>,
    ) -> LResult<RV> {
        let ty = self.scalar_of(e)?;
        let x = self.scalar_expr(a, pre)?;
        Ok(RV::Scalar(match op {
            AU::Plus => x,
            AU::Not => Expr::Un(UnOp::Not, Ty::BOOL, Box::new(x)),
            AU::BitNot => Expr::Un(UnOp::BitNot, ty, Box::new(x)),
            AU::Neg => Expr::Un(UnOp::Neg, ty, Box::new(x)),
        }))
    }

    /// `c ? a : b` (§8.5.1): a choice of scalars when neither branch has side effects, else a
    /// temporary assigned in an `if`.
    fn ternary_expr(
        &mut self,
        e: &ast::Expr,
        t: Type,
        c: &ast::Expr,
        a: &ast::Expr,
        b: &ast::Expr,
        pre: &mut Vec<Stmt>,
    ) -> LResult<RV> {
        let cx = self.scalar_expr(c, pre)?;
        let mut pa = Vec::new();
        let ra = self.expr(a, &mut pa)?;
        let mut pb = Vec::new();
        let rb = self.expr(b, &mut pb)?;
        if let (Some(ty), true, true) = (self.scalar(&t), pa.is_empty(), pb.is_empty()) {
            let xa = self.as_scalar(ra, a.span)?;
            let xb = self.as_scalar(rb, b.span)?;
            return Ok(RV::Scalar(Expr::Mux(
                Box::new(cx),
                Box::new(xa),
                Box::new(xb),
                ty,
            )));
        }
        // Side effects in a branch, or an aggregate: a temporary and an if.
        let w = self.words(&t, e.span)?;
        let tmp = Loc::at(self.alloc_temp(w, e.span)?);
        let mut then = pa;
        self.assign(&tmp, &t, ra, &mut then, e.span)?;
        let mut els = pb;
        self.assign(&tmp, &t, rb, &mut els, e.span)?;
        pre.push(Stmt::If(cx, then, els));
        Ok(self.rv_at(tmp, t))
    }

    /// `(T) a` (§8.11): a scalar conversion, or a list / struct expression read as `T`.
    fn cast_expr(&mut self, to: &Type, a: &ast::Expr, pre: &mut Vec<Stmt>) -> LResult<RV> {
        let from = self.ty_of(a);
        match (self.scalar(to), self.scalar(&from)) {
            (Some(ts), Some(fs)) => {
                let x = self.scalar_expr(a, pre)?;
                if ts == fs {
                    Ok(RV::Scalar(retype(x, ts)))
                } else {
                    Ok(RV::Scalar(Expr::Cast(ts, fs, Box::new(x))))
                }
            }
            (Some(ts), None) if matches!(from, Type::Int) => {
                let x = self.scalar_expr(a, pre)?;
                Ok(RV::Scalar(Expr::Cast(ts, Ty::int(64), Box::new(x))))
            }
            // Casting a list / struct expression to a struct or header type.
            _ => self.expr(a, pre),
        }
    }

    /// `{ e1, e2 }` (§8.12), evaluated left to right.
    fn list_expr(
        &mut self,
        e: &ast::Expr,
        items: &[ast::Expr],
        pre: &mut Vec<Stmt>,
    ) -> LResult<RV> {
        let mut out = Vec::with_capacity(items.len());
        for it in items {
            let mut p2 = Vec::new();
            let rv = self.expr(it, &mut p2)?;
            self.order_effects(&mut out, pre, p2, e.span)?;
            out.push(rv);
        }
        Ok(RV::List(out))
    }

    /// `{ f1 = e1, f2 = e2 }` (§8.13), evaluated left to right.
    fn struct_init_expr(
        &mut self,
        e: &ast::Expr,
        fields: &[(ast::Ident, ast::Expr)],
        pre: &mut Vec<Stmt>,
    ) -> LResult<RV> {
        let mut vals: Vec<RV> = Vec::with_capacity(fields.len());
        for (_, fe) in fields {
            let mut p2 = Vec::new();
            let rv = self.expr(fe, &mut p2)?;
            self.order_effects(&mut vals, pre, p2, e.span)?;
            vals.push(rv);
        }
        Ok(RV::Fields(
            fields
                .iter()
                .map(|(n, _)| n.name.clone())
                .zip(vals)
                .collect(),
        ))
    }

    /// When later items have side effects, earlier non-constant items are saved to temporaries
    /// first (left-to-right evaluation, P4_16 §8.1).
    fn order_effects(
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
            if let RV::Scalar(x) = rv {
                if x.as_const().is_none() {
                    let ty = x.ty();
                    let tmp = self.alloc_temp(ty.words(), span)?;
                    pre.push(Stmt::Assign(Loc::at(tmp), ty, x.clone()));
                    *x = Expr::Load(tmp, ty);
                }
            }
        }
        pre.extend(effects);
        Ok(())
    }

    /// The value stored at `loc` as an RV (scalar load or aggregate place).
    pub fn rv_at(&self, loc: Loc, t: Type) -> RV {
        match self.scalar(&t) {
            Some(s) => RV::Scalar(Expr::load(&loc, s)),
            None => RV::Place(loc, t),
        }
    }

    fn field_of_rv(
        &mut self,
        b: RV,
        base: &ast::Expr,
        e: &ast::Expr,
        pre: &mut Vec<Stmt>,
    ) -> LResult<RV> {
        let Some(MemberInfo::Field(i)) = self.ck.members.get(&e.id).cloned() else {
            return err_at(e.span, "unsupported member access");
        };
        let bt = self.ty_of(base);
        match b {
            RV::Place(loc, t) => {
                let (off, ft) = self.field_of(&t, i, e.span)?;
                Ok(self.rv_at(loc.plus(off), ft))
            }
            RV::List(mut items) if i < items.len() => Ok(items.swap_remove(i)),
            RV::Fields(fs) => {
                let ExprKind::Member(_, name) = &e.kind else {
                    return err_at(e.span, "unsupported member access");
                };
                match fs.into_iter().find(|f| f.0 == name.name) {
                    Some((_, rv)) => Ok(rv),
                    None => err_at(e.span, format!("no field {}", name.name)),
                }
            }
            other => {
                // Materialize and select.
                let w = self.words(&bt, e.span)?;
                let tmp = Loc::at(self.alloc_temp(w, e.span)?);
                self.assign(&tmp, &bt, other, pre, e.span)?;
                let (off, ft) = self.field_of(&bt, i, e.span)?;
                Ok(self.rv_at(tmp.plus(off), ft))
            }
        }
    }

    /// Whether an expression denotes storage (a variable, parameter, field, element).
    pub fn is_place_expr(&self, e: &ast::Expr) -> bool {
        match &e.kind {
            ExprKind::Path(_) => self
                .ck
                .resolved
                .get(&e.id)
                .and_then(|d| self.lookup(*d))
                .is_some_and(|b| matches!(b, Bind::Var(..))),
            ExprKind::Member(b, _) => match self.ck.members.get(&e.id) {
                Some(MemberInfo::Field(_))
                | Some(MemberInfo::StackNext)
                | Some(MemberInfo::StackLast) => self.is_place_expr(b),
                _ => false,
            },
            ExprKind::Index(b, _) => self.is_place_expr(b),
            _ => false,
        }
    }

    /// The location and type of a storage expression (an l-value, or a value read in place).
    pub fn place(&mut self, e: &ast::Expr, pre: &mut Vec<Stmt>) -> LResult<(Loc, Type)> {
        let t = self.ty_of(e);
        match &e.kind {
            ExprKind::Path(p) => {
                let Some(d) = self.ck.resolved.get(&e.id).copied() else {
                    return err_at(e.span, format!("{}: unresolved name", p.name.name));
                };
                match self.lookup(d) {
                    Some(Bind::Var(l, vt)) => {
                        let (l, vt) = (l.clone(), vt.clone());
                        let vt = if matches!(vt, Type::Error) { t } else { vt };
                        Ok((l, vt))
                    }
                    _ => err_at(
                        e.span,
                        format!("{}: not a variable or parameter", p.name.name),
                    ),
                }
            }
            ExprKind::Member(base, name) => match self.ck.members.get(&e.id).cloned() {
                Some(MemberInfo::Field(i)) => {
                    if !self.is_place_expr(base) {
                        // e.g. a field of a call's result: materialize the base.
                        let b = self.expr(base, pre)?;
                        let bt = self.ty_of(base);
                        let w = self.words(&bt, e.span)?;
                        let tmp = Loc::at(self.alloc_temp(w, e.span)?);
                        self.assign(&tmp, &bt, b, pre, e.span)?;
                        let (off, ft) = self.field_of(&bt, i, e.span)?;
                        return Ok((tmp.plus(off), ft));
                    }
                    let (l, bt) = self.place(base, pre)?;
                    let (off, ft) = self.field_of(&bt, i, e.span)?;
                    Ok((l.plus(off), ft))
                }
                Some(MemberInfo::StackNext) | Some(MemberInfo::StackLast) => {
                    let (l, bt) = self.place(base, pre)?;
                    let Type::Stack(et, n) = &bt else {
                        return err_at(e.span, "next/last of a non-stack");
                    };
                    let ew = self.words(et, e.span)?;
                    let next = Expr::load(&l, Ty::bits(32));
                    let idx = if name.name == "last" {
                        Expr::Bin(
                            BinOp::Sub,
                            Ty::bits(32),
                            Box::new(next),
                            Box::new(Expr::Const(1, Ty::bits(32))),
                        )
                    } else {
                        next
                    };
                    let mut loc = l.plus(1);
                    loc.dyn_idx.push(DynIndex {
                        index: idx,
                        stride: ew,
                        count: *n,
                    });
                    Ok((loc, (**et).clone()))
                }
                _ => err_at(e.span, format!("{}: not a storage location", name.name)),
            },
            ExprKind::Index(base, idx) => {
                let (l, bt) = self.place(base, pre)?;
                match &bt {
                    Type::Stack(et, n) => {
                        let ew = self.words(et, e.span)?;
                        if let Some(i) = self.ck.value_of(idx.id).and_then(Value::as_u64) {
                            if i >= u64::from(*n) {
                                // Out of bounds: an index that is never valid.
                                let mut loc = l.plus(1);
                                loc.dyn_idx.push(DynIndex {
                                    index: Expr::Const(u64::from(*n), Ty::bits(32)),
                                    stride: ew,
                                    count: *n,
                                });
                                return Ok((loc, (**et).clone()));
                            }
                            return Ok((l.plus(1 + i as u32 * ew), (**et).clone()));
                        }
                        let ix = self.scalar_expr(idx, pre)?;
                        let mut loc = l.plus(1);
                        loc.dyn_idx.push(DynIndex {
                            index: ix,
                            stride: ew,
                            count: *n,
                        });
                        Ok((loc, (**et).clone()))
                    }
                    Type::Tuple(_) => {
                        let Some(i) = self.ck.value_of(idx.id).and_then(Value::as_u64) else {
                            return err_at(e.span, "tuple index must be a constant");
                        };
                        let (off, ft) = self.field_of(&bt, i as usize, e.span)?;
                        Ok((l.plus(off), ft))
                    }
                    _ => err_at(e.span, format!("cannot index a value of type {bt}")),
                }
            }
            _ => {
                // A value that is not storage: evaluate it into a temporary.
                let rv = self.expr(e, pre)?;
                match rv {
                    RV::Place(l, pt) => Ok((l, pt)),
                    other => {
                        let w = self.words(&t, e.span)?;
                        let tmp = Loc::at(self.alloc_temp(w, e.span)?);
                        self.assign(&tmp, &t, other, pre, e.span)?;
                        Ok((tmp, t))
                    }
                }
            }
        }
    }

    /// The l-value an expression denotes (P4_16 §6.7: variables, fields, stack elements and
    /// bit slices of them); an error for anything else.
    pub fn lvalue(&mut self, e: &ast::Expr, pre: &mut Vec<Stmt>) -> LResult<LV> {
        let slice = match &e.kind {
            ExprKind::Slice(b, hi, lo) => Some((b, self.const_u32(hi)?, self.const_u32(lo)?)),
            ExprKind::PlusSlice(b, start, w) => {
                let w = self.const_u32(w)?;
                match self.ck.value_of(start.id).and_then(Value::as_u64) {
                    Some(s) if w > 0 => Some((b, s as u32 + w - 1, s as u32)),
                    _ => return err_at(e.span, "a slice l-value needs a constant start"),
                }
            }
            _ => None,
        };
        if let Some((base, hi, lo)) = slice {
            let inner = self.lvalue(base, pre)?;
            let (bt, off) = match inner.slice {
                Some((bt, _, l0)) => (bt, l0),
                None => match self.scalar(&inner.ty) {
                    Some(bt) => (bt, 0),
                    None => return err_at(e.span, "slice of a non-scalar"),
                },
            };
            let (h, l) = (off + hi, off + lo);
            if hi < lo || h >= bt.width {
                return err_at(e.span, format!("slice [{hi}:{lo}] out of range"));
            }
            return Ok(LV {
                loc: inner.loc,
                ty: Type::Bit(hi - lo + 1),
                slice: Some((bt, h, l)),
            });
        }
        if !self.is_place_expr(e) {
            return err_at(e.span, "this expression cannot be assigned to");
        }
        let (loc, ty) = self.place(e, pre)?;
        Ok(LV {
            loc,
            ty,
            slice: None,
        })
    }

    /// The value of an l-value.
    pub fn lv_read(&self, lv: &LV) -> RV {
        match lv.slice {
            Some((bt, hi, lo)) => {
                RV::Scalar(Expr::Slice(Box::new(Expr::load(&lv.loc, bt)), bt, hi, lo))
            }
            None => self.rv_at(lv.loc.clone(), lv.ty.clone()),
        }
    }

    /// Stores a value into an l-value.
    pub fn lv_write(&mut self, lv: &LV, rv: RV, pre: &mut Vec<Stmt>, span: Span) -> LResult<()> {
        match lv.slice {
            Some((bt, hi, lo)) => {
                let x = self.as_scalar(rv, span)?;
                pre.push(Stmt::AssignSlice(lv.loc.clone(), bt, hi, lo, x));
                Ok(())
            }
            None => self.assign(&lv.loc, &lv.ty, rv, pre, span),
        }
    }

    /// Replaces the run-time indices of a location by temporaries evaluated now.
    pub fn freeze(&mut self, loc: Loc, pre: &mut Vec<Stmt>, span: Span) -> LResult<Loc> {
        if loc.dyn_idx.is_empty() {
            return Ok(loc);
        }
        let mut out = Loc::at(loc.off);
        for d in loc.dyn_idx {
            if d.index.as_const().is_some() {
                out.dyn_idx.push(d);
                continue;
            }
            let ty = d.index.ty();
            let tmp = self.alloc_temp(ty.words(), span)?;
            pre.push(Stmt::Assign(Loc::at(tmp), ty, d.index));
            out.dyn_idx.push(DynIndex {
                index: Expr::Load(tmp, ty),
                stride: d.stride,
                count: d.count,
            });
        }
        Ok(out)
    }

    pub fn const_u32(&self, e: &ast::Expr) -> LResult<u32> {
        match self.ck.value_of(e.id).and_then(Value::as_u64) {
            Some(v) if v <= u64::from(u32::MAX) => Ok(v as u32),
            _ => err_at(e.span, "expected a compile-time constant"),
        }
    }

    fn binary(
        &mut self,
        e: &ast::Expr,
        op: AB,
        a: &ast::Expr,
        b: &ast::Expr,
        pre: &mut Vec<Stmt>,
    ) -> LResult<RV> {
        // Short-circuit operators keep the right operand's side effects conditional.
        if matches!(op, AB::And | AB::Or) {
            let xa = self.scalar_expr(a, pre)?;
            let mut pb = Vec::new();
            let xb = self.scalar_expr(b, &mut pb)?;
            if pb.is_empty() {
                return Ok(RV::Scalar(if op == AB::And {
                    Expr::And(Box::new(xa), Box::new(xb))
                } else {
                    Expr::Or(Box::new(xa), Box::new(xb))
                }));
            }
            let tmp = self.alloc_temp(1, e.span)?;
            pre.push(Stmt::Assign(Loc::at(tmp), Ty::BOOL, xa));
            pb.push(Stmt::Assign(Loc::at(tmp), Ty::BOOL, xb));
            let c = Expr::Load(tmp, Ty::BOOL);
            pre.push(if op == AB::And {
                Stmt::If(c, pb, Vec::new())
            } else {
                Stmt::If(c, Vec::new(), pb)
            });
            return Ok(RV::Scalar(Expr::Load(tmp, Ty::BOOL)));
        }
        let ta = self.ty_of(a);
        let ra = self.expr(a, pre)?;
        let mut pb = Vec::new();
        let rb = self.expr(b, &mut pb)?;
        let mut ras = vec![ra];
        self.order_effects(&mut ras, pre, pb, e.span)?;
        let ra = ras.pop().unwrap_or(RV::Zero);
        if matches!(op, AB::Eq | AB::Ne)
            && self.scalar(&ta).is_none()
            && !matches!(ta, Type::Int | Type::Error)
        {
            let eq = self.agg_eq(ra, rb, &ta, e.span)?;
            return Ok(RV::Scalar(if op == AB::Eq {
                eq
            } else {
                Expr::Un(UnOp::Not, Ty::BOOL, Box::new(eq))
            }));
        }
        let xa = self.as_scalar(ra, a.span)?;
        let xb = self.as_scalar(rb, b.span)?;
        let at = match self.scalar(&ta) {
            Some(s) => s,
            None => xa.ty(),
        };
        let rt = self.scalar(&self.ty_of(e)).unwrap_or(at);
        let cmp = |c| RV::Scalar(Expr::Cmp(c, at, Box::new(xa.clone()), Box::new(xb.clone())));
        let bin = |o| RV::Scalar(Expr::Bin(o, rt, Box::new(xa.clone()), Box::new(xb.clone())));
        Ok(match op {
            AB::Mul => bin(BinOp::Mul),
            AB::Div => bin(BinOp::Div),
            AB::Mod => bin(BinOp::Mod),
            AB::Add => bin(BinOp::Add),
            AB::Sub => bin(BinOp::Sub),
            AB::AddSat => bin(BinOp::AddSat),
            AB::SubSat => bin(BinOp::SubSat),
            AB::Shl => bin(BinOp::Shl),
            AB::Shr => bin(BinOp::Shr),
            AB::BitAnd => bin(BinOp::And),
            AB::BitXor => bin(BinOp::Xor),
            AB::BitOr => bin(BinOp::Or),
            AB::Le => cmp(CmpOp::Le),
            AB::Ge => cmp(CmpOp::Ge),
            AB::Lt => cmp(CmpOp::Lt),
            AB::Gt => cmp(CmpOp::Gt),
            AB::Eq => cmp(CmpOp::Eq),
            AB::Ne => cmp(CmpOp::Ne),
            AB::Concat => {
                let bw = xb.ty().width;
                RV::Scalar(Expr::Concat(Box::new(xa), Box::new(xb), rt, bw))
            }
            AB::And | AB::Or => unreachable_rv(),
        })
    }

    /// Equality of two aggregate values of type `t` (headers: both invalid, or both valid with
    /// equal fields; P4_16 §8.17, §8.12).
    fn agg_eq(&mut self, a: RV, b: RV, t: &Type, span: Span) -> LResult<Expr> {
        let la = self.leaves(a, t, span)?;
        let lb = self.leaves(b, t, span)?;
        if la.len() != lb.len() {
            return err_at(span, "cannot compare values of different shapes");
        }
        let mut acc = Expr::bool(true);
        for ((xa, va), (xb, _)) in la.into_iter().zip(lb) {
            let ty = xa.ty();
            let eq = Expr::Cmp(CmpOp::Eq, ty, Box::new(xa), Box::new(xb));
            // Fields of invalid headers do not take part (validity compared separately).
            let eq = match va {
                Some(valid) => Expr::Or(
                    Box::new(Expr::Un(UnOp::Not, Ty::BOOL, Box::new(valid))),
                    Box::new(eq),
                ),
                None => eq,
            };
            acc = and(acc, eq);
        }
        Ok(acc)
    }

    /// The scalar leaves of a value of type `t`, each with the validity of the header it is a
    /// field of (validity words are leaves too).
    fn leaves(&mut self, rv: RV, t: &Type, span: Span) -> LResult<Vec<(Expr, Option<Expr>)>> {
        let mut out = Vec::new();
        self.leaves_into(rv, t, None, &mut out, span)?;
        Ok(out)
    }

    fn leaves_into(
        &mut self,
        rv: RV,
        t: &Type,
        valid: Option<Expr>,
        out: &mut Vec<(Expr, Option<Expr>)>,
        span: Span,
    ) -> LResult<()> {
        if let Some(s) = self.scalar(t) {
            let x = match rv {
                RV::Zero | RV::Invalid => Expr::Const(0, s),
                other => self.as_scalar(other, span)?,
            };
            out.push((x, valid));
            return Ok(());
        }
        if let Type::Varbit(w) = t {
            // Length and value (bits past the length are zero).
            match rv {
                RV::Place(l, _) => {
                    out.push((Expr::load(&l, Ty::bits(32)), valid.clone()));
                    out.push((Expr::load(&l.plus(1), Ty::bits(*w)), valid));
                }
                _ => {
                    out.push((Expr::Const(0, Ty::bits(32)), valid.clone()));
                    out.push((Expr::constant(&Val::U(0), Ty::bits(*w)), valid));
                }
            }
            return Ok(());
        }
        let fields: Vec<(String, Type)> = match t {
            Type::Agg(a) => a.fields.clone(),
            Type::Tuple(ts) | Type::ListExpr(ts) => ts
                .iter()
                .enumerate()
                .map(|(i, t)| (i.to_string(), t.clone()))
                .collect(),
            Type::Stack(et, n) => (0..*n).map(|i| (i.to_string(), (**et).clone())).collect(),
            _ => return err_at(span, format!("cannot compare values of type {t}")),
        };
        let is_header = t.is_header();
        let items: Vec<RV> = match rv {
            RV::Place(loc, pt) => {
                let mut v = Vec::with_capacity(fields.len());
                if let Type::Stack(et, _) = &pt {
                    let ew = self.words(et, span)?;
                    for i in 0..fields.len() as u32 {
                        v.push(self.rv_at(loc.plus(1 + i * ew), (**et).clone()));
                    }
                } else {
                    for i in 0..fields.len() {
                        let (off, ft) = self.field_of(&pt, i, span)?;
                        v.push(self.rv_at(loc.plus(off), ft));
                    }
                }
                if is_header {
                    let vx = Expr::load(&loc, Ty::BOOL);
                    out.push((vx.clone(), None));
                    for (it, (_, ft)) in v.into_iter().zip(&fields) {
                        self.leaves_into(it, ft, Some(vx.clone()), out, span)?;
                    }
                    return Ok(());
                }
                v
            }
            RV::List(items) => {
                if is_header {
                    out.push((Expr::bool(true), None));
                }
                items
            }
            RV::Fields(fs) => {
                if is_header {
                    out.push((Expr::bool(true), None));
                }
                let mut v = Vec::with_capacity(fields.len());
                for (n, _) in &fields {
                    match fs.iter().find(|f| &f.0 == n) {
                        Some((_, rv)) => v.push(rv.clone()),
                        None => return err_at(span, format!("missing field {n}")),
                    }
                }
                v
            }
            RV::Invalid | RV::Zero => {
                if is_header {
                    out.push((Expr::bool(false), None));
                }
                vec![RV::Zero; fields.len()]
            }
            RV::Scalar(_) => return err_at(span, "cannot compare a scalar with an aggregate"),
        };
        for (it, (_, ft)) in items.into_iter().zip(&fields) {
            self.leaves_into(it, ft, valid.clone(), out, span)?;
        }
        Ok(())
    }

    /// Assigns `rv` to the region `dst` of type `t` (P4_16 §11.1; headers assigned from a list
    /// or structure expression become valid).
    pub fn assign(
        &mut self,
        dst: &Loc,
        t: &Type,
        rv: RV,
        pre: &mut Vec<Stmt>,
        span: Span,
    ) -> LResult<()> {
        if let Some(s) = self.scalar(t) {
            let x = match rv {
                RV::Zero => Expr::Const(0, s),
                other => self.as_scalar(other, span)?,
            };
            pre.push(Stmt::Assign(dst.clone(), s, x));
            return Ok(());
        }
        let words = self.words(t, span)?;
        match rv {
            RV::Place(src, st) => {
                if src == *dst {
                    return Ok(());
                }
                // A header assigned to a header union: that member becomes the valid one.
                if let (Type::Agg(u), true) = (t, st.is_header()) {
                    if u.kind == AggKind::HeaderUnion {
                        return self.assign_union_member(dst, u, &st, src, pre, span);
                    }
                }
                let sw = self.words(&st, span)?;
                pre.push(Stmt::Copy {
                    dst: dst.clone(),
                    src,
                    words: words.min(sw),
                });
                Ok(())
            }
            RV::Zero => {
                pre.push(Stmt::Zero {
                    dst: dst.clone(),
                    words,
                });
                Ok(())
            }
            RV::Invalid => {
                self.invalidate(dst, t, pre, span)?;
                Ok(())
            }
            RV::Scalar(_) => err_at(
                span,
                format!("cannot assign a scalar to a value of type {t}"),
            ),
            RV::List(_) | RV::Fields(_) => {
                // Build in a temporary when the value may read the destination.
                if dst.off < super::TEMP_BASE && rv_reads(&rv) {
                    let tmp = Loc::at(self.alloc_temp(words, span)?);
                    self.assign_fields(&tmp, t, rv, pre, span)?;
                    pre.push(Stmt::Copy {
                        dst: dst.clone(),
                        src: tmp,
                        words,
                    });
                    return Ok(());
                }
                self.assign_fields(dst, t, rv, pre, span)
            }
        }
    }

    fn assign_union_member(
        &mut self,
        dst: &Loc,
        u: &p4_front::check::AggType,
        member: &Type,
        src: Loc,
        pre: &mut Vec<Stmt>,
        span: Span,
    ) -> LResult<()> {
        let mut off = 0;
        let mut found = false;
        for (_, ft) in &u.fields {
            let w = self.words(ft, span)?;
            if !found && p4_front::check::types::same(ft, member) {
                pre.push(Stmt::Copy {
                    dst: dst.plus(off),
                    src: src.clone(),
                    words: w,
                });
                found = true;
            } else {
                pre.push(Stmt::Assign(dst.plus(off), Ty::BOOL, Expr::bool(false)));
            }
            off += w;
        }
        if !found {
            return err_at(span, "header type is not a member of the union");
        }
        Ok(())
    }

    /// Makes every header in the region invalid.
    pub fn invalidate(
        &mut self,
        dst: &Loc,
        t: &Type,
        pre: &mut Vec<Stmt>,
        span: Span,
    ) -> LResult<()> {
        match t {
            Type::Agg(a) if a.kind == AggKind::Header => {
                pre.push(Stmt::Assign(dst.clone(), Ty::BOOL, Expr::bool(false)));
            }
            Type::Agg(a) if a.kind == AggKind::HeaderUnion => {
                let mut off = 0;
                for (_, ft) in &a.fields {
                    pre.push(Stmt::Assign(dst.plus(off), Ty::BOOL, Expr::bool(false)));
                    off += self.words(ft, span)?;
                }
            }
            _ => {
                let w = self.words(t, span)?;
                pre.push(Stmt::Zero {
                    dst: dst.clone(),
                    words: w,
                });
            }
        }
        Ok(())
    }

    fn assign_fields(
        &mut self,
        dst: &Loc,
        t: &Type,
        rv: RV,
        pre: &mut Vec<Stmt>,
        span: Span,
    ) -> LResult<()> {
        let fields: Vec<(String, Type)> = match t {
            Type::Agg(a) => a.fields.clone(),
            Type::Tuple(ts) | Type::ListExpr(ts) => ts
                .iter()
                .enumerate()
                .map(|(i, t)| (i.to_string(), t.clone()))
                .collect(),
            Type::StructExpr(fs) => fs.clone(),
            Type::Stack(et, n) => {
                let ew = self.words(et, span)?;
                let RV::List(items) = rv else {
                    return err_at(span, "a stack can only be assigned a list");
                };
                pre.push(Stmt::Assign(
                    dst.clone(),
                    Ty::bits(32),
                    Expr::Const(0, Ty::bits(32)),
                ));
                for (i, it) in items.into_iter().enumerate().take(*n as usize) {
                    self.assign(&dst.plus(1 + i as u32 * ew), et, it, pre, span)?;
                }
                return Ok(());
            }
            _ => return err_at(span, format!("cannot assign a list to a value of type {t}")),
        };
        let items: Vec<RV> = match rv {
            RV::List(items) => items,
            RV::Fields(fs) => {
                let mut v = Vec::with_capacity(fields.len());
                for (n, _) in &fields {
                    match fs.iter().find(|f| &f.0 == n) {
                        Some((_, x)) => v.push(x.clone()),
                        None => v.push(RV::Zero),
                    }
                }
                v
            }
            _ => return err_at(span, "expected a list"),
        };
        if items.len() != fields.len() {
            return err_at(
                span,
                format!(
                    "{} values given for a {t} with {} fields",
                    items.len(),
                    fields.len()
                ),
            );
        }
        if t.is_header() {
            pre.push(Stmt::Assign(dst.clone(), Ty::BOOL, Expr::bool(true)));
        }
        for (i, it) in items.into_iter().enumerate() {
            let (off, ft) = self.field_of(t, i, span)?;
            self.assign(&dst.plus(off), &ft, it, pre, span)?;
        }
        Ok(())
    }

    /// Flattens a value into the scalars it is made of, in order, for hashing, checksums,
    /// digests and `add_entry` parameters (header validity bits are not part of the data).
    pub fn data_items(&mut self, rv: RV, t: &Type, span: Span) -> LResult<DataItems> {
        let mut out = Vec::new();
        self.data_into(rv, t, &mut out, span)?;
        Ok(out)
    }

    fn data_into(&mut self, rv: RV, t: &Type, out: &mut DataItems, span: Span) -> LResult<()> {
        if let Some(s) = self.scalar(t) {
            let x = match rv {
                RV::Zero => Expr::Const(0, s),
                other => self.as_scalar(other, span)?,
            };
            out.push(Datum::Bits(x));
            return Ok(());
        }
        if let Type::Varbit(w) = t {
            if let RV::Place(l, _) = rv {
                out.push(Datum::Varbit(l, *w));
            }
            return Ok(());
        }
        match rv {
            RV::Scalar(x) => {
                out.push(Datum::Bits(x));
                Ok(())
            }
            RV::Place(loc, pt) => {
                if let Type::Stack(et, n) = &pt {
                    let ew = self.words(et, span)?;
                    for i in 0..*n {
                        let it = self.rv_at(loc.plus(1 + i * ew), (**et).clone());
                        self.data_into(it, et, out, span)?;
                    }
                    return Ok(());
                }
                let n = match &pt {
                    Type::Agg(a) => a.fields.len(),
                    Type::Tuple(ts) | Type::ListExpr(ts) => ts.len(),
                    Type::StructExpr(fs) => fs.len(),
                    _ => return err_at(span, format!("cannot serialize a value of type {pt}")),
                };
                for i in 0..n {
                    let (off, ft) = self.field_of(&pt, i, span)?;
                    let it = self.rv_at(loc.plus(off), ft.clone());
                    self.data_into(it, &ft, out, span)?;
                }
                Ok(())
            }
            RV::List(items) => {
                let tys = self.elem_types(t, items.len());
                for (it, ty) in items.into_iter().zip(tys) {
                    let ty = if matches!(ty, Type::Error) {
                        self.rv_type_guess(&it)
                    } else {
                        ty
                    };
                    self.data_into(it, &ty, out, span)?;
                }
                Ok(())
            }
            RV::Fields(fs) => {
                let order: Vec<(String, Type)> = match t {
                    Type::Agg(a) => a.fields.clone(),
                    Type::StructExpr(f2) => f2.clone(),
                    _ => fs.iter().map(|f| (f.0.clone(), Type::Error)).collect(),
                };
                for (n, ft) in order {
                    if let Some((_, it)) = fs.iter().find(|f| f.0 == n) {
                        let ft = if matches!(ft, Type::Error) {
                            self.rv_type_guess(it)
                        } else {
                            ft
                        };
                        self.data_into(it.clone(), &ft, out, span)?;
                    }
                }
                Ok(())
            }
            RV::Zero | RV::Invalid => Ok(()),
        }
    }

    fn rv_type_guess(&self, rv: &RV) -> Type {
        match rv {
            RV::Scalar(x) => {
                let t = x.ty();
                if t.signed {
                    Type::Signed(t.width)
                } else {
                    Type::Bit(t.width)
                }
            }
            RV::Place(_, t) => t.clone(),
            _ => Type::Error,
        }
    }
}

fn unreachable_rv() -> RV {
    RV::Zero
}

/// Whether a list/structure value reads the frame (and so could alias its destination).
fn rv_reads(rv: &RV) -> bool {
    match rv {
        RV::Scalar(x) => x.as_const().is_none(),
        RV::Place(..) => true,
        RV::List(items) => items.iter().any(rv_reads),
        RV::Fields(fs) => fs.iter().any(|f| rv_reads(&f.1)),
        RV::Invalid | RV::Zero => false,
    }
}

/// `a && b`, folding constants.
pub(crate) fn and(a: Expr, b: Expr) -> Expr {
    match (a.as_const(), b.as_const()) {
        (Some(Val::U(1)), _) => b,
        (_, Some(Val::U(1))) => a,
        _ => Expr::And(Box::new(a), Box::new(b)),
    }
}

/// The same expression with another type of the same width (e.g. `bit<8>` → serializable enum).
pub(crate) fn retype(x: Expr, t: Ty) -> Expr {
    if x.ty() == t {
        return x;
    }
    Expr::Cast(t, x.ty(), Box::new(x))
}

/// A big integer as a [`Val`] of `w` bits.
pub(crate) fn val_of(i: &BigInt, w: u32) -> Val {
    Val::from_big(ops::from_bigint(i, w))
}

/// A value's bits as an unsigned big integer.
pub(crate) fn big_of(v: &Value) -> Option<BigUint> {
    let i = v.as_int()?;
    Some(match v {
        Value::Bits { width, .. } => ops::from_bigint(i, *width),
        _ => ops::from_bigint(i, 64.max(i.bits() as u32 + 1)),
    })
}
