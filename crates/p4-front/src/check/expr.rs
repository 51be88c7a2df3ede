//! Expressions: name resolution, type inference with implicit `int` casts, compile-time
//! folding, l-values and compile-time-known-ness (P4_16 spec §8, §17.1).

use super::consteval::{self, Value};
use super::scope::{DeclInfo, EntityKind, ParamInfo};
use super::types::{same, substitute, AggKind, AggType, DeclId, ObjType, Type};
use super::{
    BlockKind, Builtin, CallArg, CallInfo, CallTarget, Checker, ExternCall, MemberInfo, MAX_DEPTH,
};
use crate::ast::{self, Arg, BinOp, Direction, Expr, ExprKind, UnOp};
use crate::source::Span;
use num_bigint::BigInt;
use num_traits::{Signed, ToPrimitive, Zero};
use std::collections::HashSet;
use std::sync::Arc;

/// Substitution of type variables.
pub(crate) type Subst = Vec<(DeclId, Type)>;

/// What a callee expression denotes.
enum Callee {
    /// Candidate declarations (functions / actions / extern functions / methods / constructors)
    /// with the substitution of the receiver's type arguments.
    Decls {
        cands: Vec<DeclId>,
        subst: Subst,
        infer: Vec<DeclId>,
        receiver: Option<DeclId>,
    },
    /// Instantiation of a parser/control/package/extern type.
    Ctor(Type),
    TableApply(DeclId),
    BlockApply {
        obj: Arc<ObjType>,
        direct: bool,
    },
    Builtin(Builtin, Type),
    Error,
}

/// The candidates of a call of declarations ([`Callee::Decls`]), borrowed.
#[derive(Clone, Copy)]
struct DeclsCall<'c> {
    cands: &'c [DeclId],
    subst: &'c Subst,
    infer: &'c [DeclId],
    receiver: Option<DeclId>,
}

impl<'a> Checker<'a> {
    /// Checks `e` with an optional expected type (a hint for literals, lists, `{#}`); records and
    /// returns its type. Callers needing a specific type use [`Self::check_expr_expect`].
    pub fn check_expr(&mut self, e: &Expr, expected: Option<&Type>) -> Type {
        if !self.enter(e.span) {
            self.set_type(e.id, Type::Error);
            return Type::Error;
        }
        let t = self.expr_inner(e, expected);
        self.leave();
        self.set_type(e.id, t.clone());
        t
    }

    /// Checks `e` against the type `want` (with implicit casts), reporting a mismatch.
    pub fn check_expr_expect(&mut self, e: &Expr, want: &Type, what: &str) -> Type {
        let t = self.check_expr(e, Some(want));
        if self.coerce(e, &t, want, what) {
            self.type_of(e.id)
        } else {
            Type::Error
        }
    }

    /// Whether a value of type `from` may be used where `to` is expected; on success the
    /// expression is re-typed (implicit casts of `int`, list/struct expressions).
    pub fn coerce(&mut self, e: &Expr, from: &Type, to: &Type, what: &str) -> bool {
        if self.assignable(from, to) {
            self.retype(e, from, to, 0);
            true
        } else {
            if matches!(from, Type::Int) && matches!(to, Type::Var(..)) {
                self.err(e.span, "could not infer a width");
            } else {
                self.err(
                    e.span,
                    format!("{what}: type mismatch: expected {to}, found {from}"),
                );
            }
            false
        }
    }

    /// Assignment compatibility (spec §8.11.2 implicit casts, §8.13 list and structure expressions).
    pub fn assignable(&self, from: &Type, to: &Type) -> bool {
        self.assignable_d(from, to, 0)
    }

    fn assignable_d(&self, from: &Type, to: &Type, depth: u32) -> bool {
        if depth > 64 {
            return true;
        }
        if same(from, to) {
            return match (from, to) {
                (Type::Parser(a), Type::Parser(b)) | (Type::Control(a), Type::Control(b))
                    if a.decl == b.decl =>
                {
                    true
                }
                _ => true,
            };
        }
        match (from, to) {
            (Type::DontCare, _) => true,
            (Type::Int, t) => match t {
                Type::Bit(_) | Type::Signed(_) => true,
                // p4c also converts an `int` to a `type` over a fixed-width integer
                // (`const vrf_id_t kDefaultVrf = 0;` in p4c's pins samples).
                Type::NewType(n) => {
                    matches!(n.underlying.strip_newtype(), Type::Bit(_) | Type::Signed(_))
                }
                _ => false,
            },
            // p4c also converts fixed-width values to `int` implicitly.
            (Type::Bit(_) | Type::Signed(_), Type::Int) => true,
            (Type::Enum(e), t) => match &e.underlying {
                Some(u) => same(u, t),
                None => false,
            },
            (Type::Invalid, t) => t.is_header_like(),
            (Type::ListExpr(items), Type::Tuple(ts)) => {
                items.len() == ts.len()
                    && items
                        .iter()
                        .zip(ts)
                        .all(|(a, b)| self.assignable_d(a, b, depth + 1))
            }
            (Type::ListExpr(items), Type::List(t)) => {
                items.iter().all(|a| self.assignable_d(a, t, depth + 1))
            }
            (Type::ListExpr(items), Type::Stack(t, n)) => {
                items.len() == *n as usize
                    && items.iter().all(|a| self.assignable_d(a, t, depth + 1))
            }
            (Type::ListExpr(items), Type::Agg(a)) if a.kind != AggKind::HeaderUnion => {
                items.len() == a.fields.len()
                    && items
                        .iter()
                        .zip(&a.fields)
                        .all(|(x, (_, f))| self.assignable_d(x, f, depth + 1))
            }
            (Type::StructExpr(fs), Type::Agg(a)) if a.kind != AggKind::HeaderUnion => {
                fs.len() == a.fields.len()
                    && fs.iter().all(|(n, t)| match a.field(n) {
                        Some((_, ft)) => self.assignable_d(t, ft, depth + 1),
                        None => false,
                    })
            }
            (Type::Tuple(xs), Type::Tuple(ys)) => {
                xs.len() == ys.len()
                    && xs
                        .iter()
                        .zip(ys)
                        .all(|(a, b)| self.assignable_d(a, b, depth + 1))
            }
            (Type::Parser(a), Type::Parser(b)) | (Type::Control(a), Type::Control(b)) => {
                if a.decl == b.decl {
                    return a.args.len() == b.args.len()
                        && a.args
                            .iter()
                            .zip(&b.args)
                            .all(|(x, y)| same(x, y) || y.has_vars() || x.has_vars());
                }
                let pa = self.apply_params(a);
                let pb = self.apply_params(b);
                pa.len() <= pb.len()
                    && pb[pa.len()..].iter().all(|y| y.2)
                    && pa.iter().zip(&pb).all(|(x, y)| {
                        x.0 == y.0 && (same(&x.1, &y.1) || y.1.has_vars() || x.1.has_vars())
                    })
            }
            (Type::Package(a), Type::Package(b)) => {
                a.decl == b.decl
                    && a.args.iter().zip(&b.args).all(|(x, y)| {
                        same(x, y) || x.has_vars() || y.has_vars() || x.is_error() || y.is_error()
                    })
            }
            (Type::Extern(a), Type::Extern(b)) => {
                a.decl == b.decl && (b.args.is_empty() || a.args.is_empty() || same(from, to))
            }
            (Type::Stack(a, n), Type::Stack(b, m)) => n == m && self.assignable_d(a, b, depth + 1),
            (_, Type::Var(..)) | (Type::Var(..), _) => false,
            _ => false,
        }
    }

    /// Directions and types of the apply parameters of a parser/control (type), specialized.
    pub fn apply_params(&self, o: &ObjType) -> Vec<(Direction, Type, bool)> {
        let d = self.decl(o.decl);
        let subst: Subst = d
            .type_params
            .iter()
            .copied()
            .zip(o.args.iter().cloned())
            .collect();
        d.params
            .iter()
            .map(|p| {
                (
                    p.dir,
                    substitute(&p.ty, &subst),
                    p.optional || p.has_default,
                )
            })
            .collect()
    }

    /// Records the implicit conversion of `e` from `from` to `to`.
    fn retype(&mut self, e: &Expr, from: &Type, to: &Type, depth: u32) {
        if depth > MAX_DEPTH || same(from, to) && !matches!(from, Type::Error) {
            if let (Type::ListExpr(_), _) | (Type::StructExpr(_), _) = (from, to) {
            } else {
                return;
            }
        }
        match (from, to) {
            (Type::Int, Type::Bit(w) | Type::Signed(w)) => {
                let signed = matches!(to, Type::Signed(_));
                self.set_type(e.id, to.clone());
                if let Some(Value::Int(v)) = self.value_of(e.id) {
                    if !consteval::fits(&v, *w, signed) {
                        self.warn(
                            e.span,
                            format!("{v}: value does not fit in {to}; truncated"),
                        );
                    }
                    self.set_value(e.id, consteval::bits(v, *w, signed));
                }
                if let ExprKind::Ternary(_, a, b) = &e.kind {
                    let (ta, tb) = (self.type_of(a.id), self.type_of(b.id));
                    self.retype(a, &ta, to, depth + 1);
                    self.retype(b, &tb, to, depth + 1);
                }
            }
            (Type::Int, Type::NewType(n)) => {
                let u = n.underlying.strip_newtype().clone();
                self.retype(e, from, &u, depth + 1);
                self.set_type(e.id, to.clone());
            }
            (Type::Invalid, _) => self.set_type(e.id, to.clone()),
            (Type::ListExpr(_), _) | (Type::StructExpr(_), _) => {
                self.set_type(e.id, to.clone());
                match (&e.kind, to) {
                    (ExprKind::List { items, .. }, Type::Tuple(ts)) => {
                        for (i, t) in items.iter().zip(ts) {
                            let it = self.type_of(i.id);
                            self.retype(i, &it, t, depth + 1);
                        }
                    }
                    (ExprKind::List { items, .. }, Type::Stack(t, _) | Type::List(t)) => {
                        for i in items {
                            let it = self.type_of(i.id);
                            self.retype(i, &it, t, depth + 1);
                        }
                    }
                    (ExprKind::List { items, .. }, Type::Agg(a)) => {
                        for (i, (_, t)) in items.iter().zip(&a.fields) {
                            let it = self.type_of(i.id);
                            self.retype(i, &it, t, depth + 1);
                        }
                        if let Some(Value::List(vs)) = self.value_of(e.id) {
                            let fs = a.fields.iter().map(|f| f.0.clone()).zip(vs).collect();
                            self.set_value(e.id, Value::Struct(fs));
                        }
                    }
                    (ExprKind::StructInit { fields, .. }, Type::Agg(a)) => {
                        for (n, x) in fields {
                            if let Some((_, t)) = a.field(&n.name) {
                                let t = t.clone();
                                let it = self.type_of(x.id);
                                self.retype(x, &it, &t, depth + 1);
                            }
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }

    fn expr_inner(&mut self, e: &Expr, expected: Option<&Type>) -> Type {
        match &e.kind {
            ExprKind::Bool(b) => {
                self.set_value(e.id, Value::Bool(*b));
                Type::Bool
            }
            ExprKind::Int { value, width, .. } => {
                match width {
                    Some((w, s)) => {
                        let too_wide = u64::from(*w) > super::decls::MAX_WIDTH;
                        if too_wide {
                            self.err(e.span, format!("{w}: this implementation does not support bitstrings this large"));
                            return Type::Error;
                        }
                        if *s && *w == 0 {
                            self.err(e.span, "width of signed type cannot be zero");
                            return Type::Error;
                        }
                        if !consteval::fits(value, *w, *s) {
                            self.warn(
                                e.span,
                                format!("{value}: value does not fit in {w} bits; truncated"),
                            );
                        }
                        self.set_value(e.id, consteval::bits(value.clone(), *w, *s));
                        if *s {
                            Type::Signed(*w)
                        } else {
                            Type::Bit(*w)
                        }
                    }
                    None => {
                        self.set_value(e.id, Value::Int(value.clone()));
                        Type::Int
                    }
                }
            }
            ExprKind::String(s) => {
                self.set_value(e.id, Value::String(s.clone()));
                Type::String
            }
            ExprKind::Path(p) => self.path_expr(e, p),
            ExprKind::Type(t) => {
                let ty = self.resolve_type(t);
                if ty.is_error() {
                    Type::Error
                } else {
                    Type::TypeName(Box::new(ty))
                }
            }
            ExprKind::Member(base, m) => self.member_expr(e, base, m),
            ExprKind::Index(base, idx) => self.index_expr(e, base, idx),
            ExprKind::Slice(base, hi, lo) => self.slice_expr(e, base, hi, lo),
            ExprKind::PlusSlice(base, lo, w) => self.plus_slice_expr(e, base, lo, w),
            ExprKind::Dots => match expected {
                Some(
                    t @ (Type::List(_)
                    | Type::Extern(_)
                    | Type::Parser(_)
                    | Type::Control(_)
                    | Type::Package(_)
                    | Type::String),
                ) => {
                    self.err(
                        e.span,
                        format!("...: could not find a default value for type {t}"),
                    );
                    Type::Error
                }
                Some(t) => t.clone(),
                None => {
                    self.err(e.span, "...: cannot infer the type of a default value here");
                    Type::Error
                }
            },
            ExprKind::Call {
                callee,
                type_args,
                args,
            } => self.call_expr(e, callee, type_args, args, expected),
            ExprKind::Unary(op, x) => self.unary_expr(e, *op, x, expected),
            ExprKind::Binary(op, a, b) => self.binary_expr(e, *op, a, b, expected),
            ExprKind::Ternary(c, a, b) => self.ternary_expr(e, c, a, b, expected),
            ExprKind::Cast(t, x) => self.cast_expr(e, t, x),
            ExprKind::List { items, has_dots } => self.list_expr(e, items, *has_dots, expected),
            ExprKind::StructInit { fields, has_dots } => {
                self.struct_init_expr(e, fields, *has_dots, expected)
            }
            ExprKind::Invalid => {
                self.set_value(e.id, Value::Invalid);
                match expected {
                    Some(t) if t.is_header_like() => t.clone(),
                    _ => Type::Invalid,
                }
            }
            ExprKind::Mask(a, b) | ExprKind::Range(a, b) => {
                let want = expected.cloned();
                let ta = self.check_expr(a, want.as_ref());
                let tb = self.check_expr(b, want.as_ref());
                let t = self.unify_operands(
                    a,
                    &ta,
                    b,
                    &tb,
                    if matches!(e.kind, ExprKind::Mask(..)) {
                        "&&&"
                    } else {
                        ".."
                    },
                );
                Type::Set(Box::new(t))
            }
            ExprKind::Default | ExprKind::DontCare => Type::DontCare,
            ExprKind::This => match &self.ctx.this_ty {
                Some(t) => t.clone(),
                None => {
                    self.err(
                        e.span,
                        "this: can only be used in abstract method implementations",
                    );
                    Type::Error
                }
            },
        }
    }

    // -----------------------------------------------------------------------------------------
    // Names

    /// Looks a value name up; records the resolution.
    fn path_expr(&mut self, e: &Expr, p: &ast::Path) -> Type {
        let all = self.scopes.lookup(&p.name.name, p.global, |_| true);
        let Some(&d) = all.first() else {
            self.err(p.span, format!("{}: declaration not found", p.name.name));
            return Type::Error;
        };
        self.out.resolved.insert(e.id, d);
        self.type_of_decl_ref(e, d)
    }

    /// The type of a reference to declaration `d` (and its value, if constant).
    fn type_of_decl_ref(&mut self, e: &Expr, d: DeclId) -> Type {
        let info = self.decl(d).clone();
        match info.kind {
            EntityKind::Const
            | EntityKind::MatchKindMember
            | EntityKind::EnumMember
            | EntityKind::ErrorMember => {
                if let Some(v) = info.value {
                    self.set_value(e.id, v);
                }
                info.ty
            }
            EntityKind::Variable
            | EntityKind::Param
            | EntityKind::CtorParam
            | EntityKind::Instance => info.ty,
            EntityKind::ValueSet => info.ty,
            EntityKind::Action => Type::Action(d),
            EntityKind::Function | EntityKind::ExternFunction => Type::Function(d),
            EntityKind::ExternMethod | EntityKind::ExternCtor => Type::Function(d),
            EntityKind::Table => Type::Table(d),
            EntityKind::State => Type::State,
            k if k.is_type() => {
                let t = self.type_of_decl(d, &[], e.span);
                Type::TypeName(Box::new(t))
            }
            _ => Type::Error,
        }
    }

    // -----------------------------------------------------------------------------------------
    // Members, indices, slices

    fn member_expr(&mut self, e: &Expr, base: &Expr, m: &ast::Ident) -> Type {
        let allow_ar = std::mem::replace(&mut self.allow_action_run, false);
        let bt = self.check_expr(base, None);
        self.allow_action_run = allow_ar;
        let name = m.name.as_str();
        match &bt {
            Type::Error => Type::Error,
            Type::TypeName(inner) => match inner.as_ref() {
                Type::Enum(en) => {
                    let members = self.decl(en.decl).methods.clone();
                    match members.iter().find(|id| self.decl(**id).name == name) {
                        Some(&mid) => {
                            self.out.resolved.insert(e.id, mid);
                            self.out.members.insert(e.id, MemberInfo::EnumMember(mid));
                            if let Some(v) = self.decl(mid).value.clone() {
                                self.set_value(e.id, v);
                            }
                            (**inner).clone()
                        }
                        None => {
                            self.err(m.span, format!("{}.{name}: invalid enum tag", en.name));
                            Type::Error
                        }
                    }
                }
                Type::ErrorT => match self.error_members.get(name).copied() {
                    Some(mid) => {
                        self.out.resolved.insert(e.id, mid);
                        self.out.members.insert(e.id, MemberInfo::ErrorMember(mid));
                        self.set_value(e.id, Value::Error(name.to_string()));
                        Type::ErrorT
                    }
                    None => {
                        self.err(m.span, format!("error.{name}: invalid enum tag"));
                        Type::Error
                    }
                },
                Type::Error => Type::Error,
                t => {
                    self.err(
                        m.span,
                        format!("{name}: cannot extract member from type {t}"),
                    );
                    Type::Error
                }
            },
            Type::Agg(a) => match a.field(name) {
                Some((i, t)) => {
                    let t = t.clone();
                    self.out.members.insert(e.id, MemberInfo::Field(i));
                    if let Some(Value::Struct(fs)) = self.value_of(base.id) {
                        if let Some((_, v)) = fs.iter().find(|(n, _)| n == name) {
                            self.set_value(e.id, v.clone());
                        }
                    }
                    t
                }
                None => {
                    self.err(
                        m.span,
                        format!(
                            "field {name} is not a member of {} {}",
                            a.kind.keyword(),
                            a.name
                        ),
                    );
                    Type::Error
                }
            },
            Type::Stack(elem, n) => match name {
                "next" | "last" => {
                    if self.ctx.block_kind != BlockKind::Parser || self.ctx.action.is_some() {
                        self.err(
                            m.span,
                            format!("{name} for stacks can only be used in a parser"),
                        );
                    }
                    self.out.members.insert(
                        e.id,
                        if name == "next" {
                            MemberInfo::StackNext
                        } else {
                            MemberInfo::StackLast
                        },
                    );
                    (**elem).clone()
                }
                "lastIndex" => {
                    if self.ctx.block_kind != BlockKind::Parser || self.ctx.action.is_some() {
                        self.err(
                            m.span,
                            format!("{name} for stacks can only be used in a parser"),
                        );
                    }
                    self.out.members.insert(e.id, MemberInfo::StackLastIndex);
                    Type::Bit(32)
                }
                "size" => {
                    self.out.members.insert(e.id, MemberInfo::StackSize);
                    self.set_value(e.id, consteval::bits(BigInt::from(*n), 32, false));
                    Type::Bit(32)
                }
                _ => {
                    self.err(m.span, format!("{name}: not a member of a header stack"));
                    Type::Error
                }
            },
            Type::ApplyResult(t) => match name {
                "hit" => {
                    self.out.members.insert(e.id, MemberInfo::Hit);
                    Type::Bool
                }
                "miss" => {
                    self.out.members.insert(e.id, MemberInfo::Miss);
                    Type::Bool
                }
                "action_run" => {
                    if !self.allow_action_run {
                        self.err(e.span, "action_run: only allowed in switch statements");
                    }
                    self.out.members.insert(e.id, MemberInfo::ActionRun);
                    Type::ActionRun(*t)
                }
                _ => {
                    self.err(
                        m.span,
                        format!("{name}: not a member of a table apply result"),
                    );
                    Type::Error
                }
            },
            t => {
                self.err(
                    m.span,
                    format!("{name}: cannot extract member from value of type {t}"),
                );
                Type::Error
            }
        }
    }

    fn index_expr(&mut self, e: &Expr, base: &Expr, idx: &Expr) -> Type {
        let bt = self.check_expr(base, None);
        let it = self.check_expr(idx, None);
        let iv = self.value_of(idx.id).and_then(|v| v.as_int().cloned());
        if !it.is_error()
            && !matches!(
                it.strip_newtype().underlying_int(),
                Type::Int | Type::Bit(_) | Type::Signed(_)
            )
        {
            self.err(
                idx.span,
                format!("array index must be an integer, found {it}"),
            );
        }
        if let Some(v) = &iv {
            if v.is_negative() {
                self.err(idx.span, format!("negative array index {v}"));
                return Type::Error;
            }
        }
        match &bt {
            Type::Error => Type::Error,
            Type::Stack(elem, n) => {
                if let Some(v) = &iv {
                    if *n > 0 && v >= &BigInt::from(*n) {
                        self.err(
                            idx.span,
                            format!("array index {v} larger or equal to array size {n}"),
                        );
                    }
                }
                if matches!(it, Type::Int) {
                    self.retype(idx, &Type::Int, &Type::Bit(32), 0);
                }
                if let (Some(Value::List(vs)), Some(i)) = (
                    self.value_of(base.id),
                    iv.as_ref().and_then(|v| v.to_usize()),
                ) {
                    if let Some(v) = vs.get(i) {
                        self.set_value(e.id, v.clone());
                    }
                }
                (**elem).clone()
            }
            Type::Tuple(ts) | Type::ListExpr(ts) => match iv.and_then(|v| v.to_usize()) {
                Some(i) if i < ts.len() => {
                    if let Some(Value::List(vs)) = self.value_of(base.id) {
                        if let Some(v) = vs.get(i) {
                            self.set_value(e.id, v.clone());
                        }
                    }
                    ts[i].clone()
                }
                Some(i) => {
                    self.err(idx.span, format!("index {i} out of bounds for {bt}"));
                    Type::Error
                }
                None => {
                    self.err(idx.span, "tuple index must be a compile-time constant");
                    Type::Error
                }
            },
            t => {
                self.err(
                    base.span,
                    format!("indexing is not defined on values of type {t}"),
                );
                Type::Error
            }
        }
    }

    fn slice_expr(&mut self, e: &Expr, base: &Expr, hi: &Expr, lo: &Expr) -> Type {
        let bt = self.check_expr(base, None);
        let ht = self.check_expr(hi, None);
        let lt = self.check_expr(lo, None);
        if bt.is_error() || ht.is_error() || lt.is_error() {
            return Type::Error;
        }
        let (Some(h), Some(l)) = (
            self.value_of(hi.id).and_then(|v| v.as_int().cloned()),
            self.value_of(lo.id).and_then(|v| v.as_int().cloned()),
        ) else {
            self.err(e.span, "slice bit index values must be constants");
            return Type::Error;
        };
        if h.is_negative() || l.is_negative() {
            self.err(e.span, "slice bit indices must be non-negative");
            return Type::Error;
        }
        if h < l {
            self.err(
                e.span,
                format!(
                    "bit slice [{h}:{l}]: the high index must not be smaller than the low index"
                ),
            );
            return Type::Error;
        }
        let width = match bt.strip_newtype().underlying_int() {
            Type::Bit(w) | Type::Signed(w) => Some(*w),
            Type::Int => None,
            t => {
                self.err(
                    base.span,
                    format!("bit extraction only defined for bit<> types, found {t}"),
                );
                return Type::Error;
            }
        };
        let (Some(hu), Some(lu)) = (h.to_u32(), l.to_u32()) else {
            self.err(e.span, format!("bit index {h} too large"));
            return Type::Error;
        };
        if let Some(w) = width {
            if hu >= w {
                self.err(hi.span, format!("bit index {hu} greater than width {w}"));
                return Type::Error;
            }
        } else if u64::from(hu) >= super::decls::MAX_WIDTH {
            self.err(hi.span, format!("bit index {hu} too large"));
            return Type::Error;
        }
        if let Some(v) = self.value_of(base.id) {
            if let Some(r) = consteval::slice(&v, hu, lu) {
                self.set_value(e.id, r);
            }
        }
        Type::Bit(hu - lu + 1)
    }

    /// `e[lo +: w]`: `w` bits from bit `lo`; `w` must be a local compile-time constant.
    fn plus_slice_expr(&mut self, e: &Expr, base: &Expr, lo: &Expr, w: &Expr) -> Type {
        let bt = self.check_expr(base, None);
        let lt = self.check_expr(lo, None);
        let wt = self.check_expr(w, None);
        if bt.is_error() || lt.is_error() || wt.is_error() {
            return Type::Error;
        }
        let width = match bt.strip_newtype().underlying_int() {
            Type::Bit(x) | Type::Signed(x) => *x,
            t => {
                self.err(
                    base.span,
                    format!("bit extraction only defined for bit<> types, found {t}"),
                );
                return Type::Error;
            }
        };
        let Some(n) = self.value_of(w.id).and_then(|v| v.as_int().cloned()) else {
            self.err(w.span, "slice width must be a compile-time constant");
            return Type::Error;
        };
        let Some(n) = n.to_u32().filter(|n| *n >= 1 && *n <= width) else {
            self.err(w.span, format!("slice width {n} out of range for {bt}"));
            return Type::Error;
        };
        match self.value_of(lo.id).and_then(|v| v.as_int().cloned()) {
            Some(l) if l.is_negative() || l >= BigInt::from(width) => {
                self.err(lo.span, format!("bit index {l} out of range for {bt}"));
                return Type::Error;
            }
            Some(l) => {
                if matches!(lt, Type::Int) {
                    self.retype(lo, &Type::Int, &Type::Bit(32), 0);
                }
                if let (Some(v), Some(l)) = (self.value_of(base.id), l.to_u32()) {
                    let hi = l.saturating_add(n - 1).min(width - 1);
                    if let Some(r) = consteval::slice(&v, hi, l) {
                        self.set_value(
                            e.id,
                            consteval::bits(r.as_int().cloned().unwrap_or_default(), n, false),
                        );
                    }
                }
            }
            None => {
                if !matches!(lt.underlying_int(), Type::Bit(_)) {
                    self.err(
                        lo.span,
                        format!(
                            "a slice index that is not a constant must be unsigned, found {lt}"
                        ),
                    );
                    return Type::Error;
                }
            }
        }
        Type::Bit(n)
    }

    // -----------------------------------------------------------------------------------------
    // Operators

    /// Numeric operand types after the implicit casts of spec §8.11.2: `int` adopts the other
    /// side's width, serializable enums become their underlying type.
    fn unify_operands(&mut self, a: &Expr, ta: &Type, b: &Expr, tb: &Type, op: &str) -> Type {
        let ua = ta.underlying_int().clone();
        let ub = tb.underlying_int().clone();
        match (&ua, &ub) {
            (Type::Error, _) | (_, Type::Error) => Type::Error,
            (Type::Int, Type::Int) => Type::Int,
            (Type::Int, t @ (Type::Bit(_) | Type::Signed(_))) => {
                self.retype(a, &Type::Int, t, 0);
                t.clone()
            }
            (t @ (Type::Bit(_) | Type::Signed(_)), Type::Int) => {
                self.retype(b, &Type::Int, t, 0);
                t.clone()
            }
            (x, y) if same(x, y) => {
                if matches!(x, Type::Enum(_) | Type::NewType(_)) || !ta.is_fixed_int() {
                    ta.clone()
                } else {
                    x.clone()
                }
            }
            (Type::Bit(w1) | Type::Signed(w1), Type::Bit(w2) | Type::Signed(w2)) if w1 != w2 => {
                self.err(
                    a.span.to(b.span),
                    format!("{op}: cannot operate on values with different widths {w1} and {w2}"),
                );
                Type::Error
            }
            _ => {
                self.err(
                    a.span.to(b.span),
                    format!("{op}: cannot operate on values of types {ta} and {tb}"),
                );
                Type::Error
            }
        }
    }

    fn unary_expr(&mut self, e: &Expr, op: UnOp, x: &Expr, expected: Option<&Type>) -> Type {
        let hint = match (op, expected) {
            (UnOp::Neg | UnOp::Plus | UnOp::BitNot, Some(t)) if t.is_fixed_int() => Some(t.clone()),
            _ => None,
        };
        let t = self.check_expr(x, hint.as_ref());
        let u = t.underlying_int().clone();
        let r = match (op, &u) {
            (_, Type::Error) => return Type::Error,
            (UnOp::Not, Type::Bool) => Type::Bool,
            (UnOp::Neg | UnOp::Plus, Type::Int | Type::Bit(_) | Type::Signed(_)) => u.clone(),
            (UnOp::BitNot, Type::Bit(_) | Type::Signed(_)) => u.clone(),
            (UnOp::BitNot, Type::Int) => {
                self.err(
                    e.span,
                    "~: operation cannot be applied to values with unknown width",
                );
                return Type::Error;
            }
            _ => {
                let sym = match op {
                    UnOp::Not => "!",
                    UnOp::BitNot => "~",
                    UnOp::Neg => "-",
                    UnOp::Plus => "+",
                };
                self.err(
                    e.span,
                    format!("{sym}: cannot be applied to an expression of type {t}"),
                );
                return Type::Error;
            }
        };
        if let Some(v) = self.value_of(x.id) {
            let v = match v {
                Value::Enum { repr: Some(r), .. } => *r,
                v => v,
            };
            if let Ok(r) = consteval::unary(op, &v) {
                self.set_value(e.id, r);
            }
        }
        r
    }

    /// A binary operation `a op b` (P4_16 spec §8: the operations on each base type): the
    /// operands' types, the result's type, and its value when both operands are constants.
    fn binary_expr(
        &mut self,
        e: &Expr,
        op: BinOp,
        a: &Expr,
        b: &Expr,
        expected: Option<&Type>,
    ) -> Type {
        use BinOp::*;
        let arith = matches!(
            op,
            Add | Sub | Mul | Div | Mod | AddSat | SubSat | BitAnd | BitOr | BitXor
        );
        let hint = match expected {
            Some(t) if arith && t.is_fixed_int() => Some(t.clone()),
            _ => None,
        };
        let ta = self.check_expr(a, hint.as_ref());
        let tb = if matches!(op, Shl | Shr) {
            self.check_expr(b, None)
        } else {
            self.check_expr(b, hint.as_ref())
        };
        if ta.is_error() || tb.is_error() {
            return Type::Error;
        }
        let o = Binary {
            e,
            op,
            sym: op.symbol(),
            a,
            b,
            ta,
            tb,
        };
        if matches!(op, Div | Mod) && (self.is_negative(a) || self.is_negative(b)) {
            self.err(
                e.span,
                format!("{}: not defined on negative numbers", o.sym),
            );
            return Type::Error;
        }
        let r = match op {
            And | Or => self.logical_type(&o),
            Eq | Ne => self.equality_type(&o),
            Lt | Le | Gt | Ge => self.ordering_type(&o),
            Add | Sub | Mul | Div | Mod | AddSat | SubSat | BitAnd | BitOr | BitXor => {
                self.arith_type(&o)
            }
            Shl | Shr => self.shift_type(&o),
            Concat => self.concat_type(&o),
        };
        if r.is_error() || !self.fold_binary(&o) {
            return Type::Error;
        }
        r
    }

    /// Whether `x` is a negative compile-time constant.
    fn is_negative(&self, x: &Expr) -> bool {
        self.value_of(x.id)
            .and_then(|v| v.as_int().cloned())
            .is_some_and(|v| v.is_negative())
    }

    /// `&&`, `||`: on booleans.
    fn logical_type(&mut self, o: &Binary<'_>) -> Type {
        if !matches!(o.ta, Type::Bool) || !matches!(o.tb, Type::Bool) {
            let (sym, ta, tb) = (o.sym, &o.ta, &o.tb);
            self.err(o.e.span, format!("{sym}: not defined on {ta} and {tb}"));
            return Type::Error;
        }
        Type::Bool
    }

    /// `==`, `!=`: see [`Checker::compare_types`].
    fn equality_type(&mut self, o: &Binary<'_>) -> Type {
        let t = self.compare_types(o.e, o.a, &o.ta, o.b, &o.tb);
        if t.is_error() {
            return Type::Error;
        }
        Type::Bool
    }

    /// `<`, `<=`, `>`, `>=`: on integers of one type (§8.5, §8.6).
    fn ordering_type(&mut self, o: &Binary<'_>) -> Type {
        let t = self.unify_operands(o.a, &o.ta, o.b, &o.tb, o.sym);
        match t {
            Type::Error => Type::Error,
            Type::Int | Type::Bit(_) | Type::Signed(_) => Type::Bool,
            _ => {
                let (sym, ta, tb) = (o.sym, &o.ta, &o.tb);
                self.err(o.e.span, format!("{sym}: not defined on {ta} and {tb}"));
                Type::Error
            }
        }
    }

    /// The arithmetic and bitwise operations (§8.5–§8.7): operands of one integer type; no
    /// saturation on `int`, no bitwise operation on an `int` that is not constant, no division
    /// of signed values.
    fn arith_type(&mut self, o: &Binary<'_>) -> Type {
        use BinOp::*;
        let (sym, ta, tb) = (o.sym, &o.ta, &o.tb);
        let t = self.unify_operands(o.a, ta, o.b, tb, sym);
        let msg = match (&t, o.op) {
            (Type::Error, _) => return Type::Error,
            (Type::Int, AddSat | SubSat) => {
                format!("{sym}: saturating arithmetic is not defined on int")
            }
            (Type::Int, BitAnd | BitOr | BitXor)
                if self.value_of(o.a.id).is_none() || self.value_of(o.b.id).is_none() =>
            {
                format!("{sym}: operation cannot be applied to values with unknown width")
            }
            (Type::Signed(_), Div | Mod) => {
                format!("{sym}: division and modulo are not defined on signed values")
            }
            (_, Div | Mod) if self.is_negative(o.a) || self.is_negative(o.b) => {
                format!("{sym}: not defined on negative numbers")
            }
            (Type::Int | Type::Bit(_) | Type::Signed(_), _) => return t.underlying_int().clone(),
            _ => format!("{sym}: cannot be applied to values of type {ta} and {tb}"),
        };
        self.err(o.e.span, msg);
        Type::Error
    }

    /// `<<`, `>>` (§8.5): a numeric left operand, an unsigned or non-negative constant
    /// amount; an `int` left operand needs a constant amount.
    fn shift_type(&mut self, o: &Binary<'_>) -> Type {
        let (sym, ta, tb) = (o.sym, &o.ta, &o.tb);
        let la = ta.underlying_int().clone();
        let lb = tb.underlying_int().clone();
        if !matches!(la, Type::Int | Type::Bit(_) | Type::Signed(_)) {
            self.err(
                o.a.span,
                format!("{sym}: left operand of shift must be a numeric type, not {ta}"),
            );
            return Type::Error;
        }
        let bv = self.value_of(o.b.id).and_then(|v| v.as_int().cloned());
        let bad_amount = match (&lb, &bv) {
            (Type::Bit(_), _) => None,
            (Type::Int, Some(v)) if v.is_negative() => Some(format!(
                "{sym}: shifts with negative amounts are not permitted"
            )),
            (Type::Int, Some(_)) => None,
            (Type::Int, None) => Some(format!(
                "{sym}: shift amount must be a compile-time constant or unsigned"
            )),
            (Type::Signed(_), Some(v)) if !v.is_negative() => None,
            (Type::Signed(_), _) => {
                Some(format!("{sym}: shift amount must be unsigned, found {tb}"))
            }
            _ => Some(format!(
                "{sym}: shift amount must be an integer, found {tb}"
            )),
        };
        if let Some(msg) = bad_amount {
            self.err(o.b.span, msg);
            return Type::Error;
        }
        if matches!(la, Type::Int) && bv.is_none() {
            self.err(
                o.e.span,
                format!("{sym}: shift result type is arbitrary-precision int, but right operand is not constant; width of left operand of shift needs to be specified"),
            );
            return Type::Error;
        }
        if let (Type::Bit(w) | Type::Signed(w), Some(v)) = (&la, &bv) {
            if v >= &BigInt::from(*w) {
                self.warn(
                    o.b.span,
                    format!("{sym}: shifting value with {w} bits by {v}"),
                );
            }
        }
        la
    }

    /// `++` (§8.5): of strings, or of bit strings whose widths are known (the result signed
    /// when the left operand is).
    fn concat_type(&mut self, o: &Binary<'_>) -> Type {
        let (ta, tb) = (&o.ta, &o.tb);
        if matches!(ta, Type::String) && matches!(tb, Type::String) {
            return Type::String;
        }
        let la = ta.underlying_int().clone();
        let lb = tb.underlying_int().clone();
        match (&la, &lb) {
            (Type::Bit(w1) | Type::Signed(w1), Type::Bit(w2) | Type::Signed(w2)) => {
                let w = u64::from(*w1) + u64::from(*w2);
                if w > super::decls::MAX_WIDTH {
                    self.err(
                        o.e.span,
                        "++: this implementation does not support bitstrings this large",
                    );
                    return Type::Error;
                }
                if matches!(la, Type::Signed(_)) {
                    Type::Signed(w as u32)
                } else {
                    Type::Bit(w as u32)
                }
            }
            (Type::Int, _) => {
                self.err(o.a.span, "could not infer a width");
                Type::Error
            }
            (_, Type::Int) => {
                self.err(o.b.span, "could not infer a width");
                Type::Error
            }
            _ => {
                self.err(o.e.span, format!("++: cannot concatenate {ta} and {tb}"));
                Type::Error
            }
        }
    }

    /// Constant folding of `a op b` when both are constants; false (after the error) on a
    /// division or modulo by zero or another fold that fails.
    fn fold_binary(&mut self, o: &Binary<'_>) -> bool {
        use BinOp::*;
        let (e, op, sym) = (o.e, o.op, o.sym);
        if let (Some(va), Some(vb)) = (self.value_of(o.a.id), self.value_of(o.b.id)) {
            match consteval::binary(op, &va, &vb) {
                Ok(v) => self.set_value(e.id, v),
                Err(consteval::FoldError::NotFoldable) => {}
                Err(consteval::FoldError::DivisionByZero) if matches!(op, Div | Mod) => {
                    let what = if op == Div {
                        "division by zero"
                    } else {
                        "modulo by zero"
                    };
                    self.err(e.span, format!("{sym}: {what}"));
                    return false;
                }
                Err(err) => {
                    self.err(e.span, err.to_string());
                    return false;
                }
            }
        } else if matches!(op, Div | Mod) {
            if let Some(vb) = self.value_of(o.b.id).and_then(|v| v.as_int().cloned()) {
                if vb.is_zero() {
                    self.err(
                        e.span,
                        format!(
                            "{sym}: {} by zero",
                            if op == Div { "division" } else { "modulo" }
                        ),
                    );
                    return false;
                }
            }
        }
        true
    }

    /// Operand types for `==`/`!=` (spec §8: defined on base types, headers, structs, tuples, ...).
    fn compare_types(&mut self, e: &Expr, a: &Expr, ta: &Type, b: &Expr, tb: &Type) -> Type {
        let bad = |t: &Type| {
            matches!(
                t,
                Type::Table(_)
                    | Type::Extern(_)
                    | Type::Parser(_)
                    | Type::Control(_)
                    | Type::Package(_)
                    | Type::ApplyResult(_)
                    | Type::Action(_)
                    | Type::Function(_)
                    | Type::TypeName(_)
                    | Type::Void
                    | Type::State
                    | Type::ValueSet(_)
                    | Type::ActionRun(_)
            )
        };
        if bad(ta) || bad(tb) {
            let what = match (ta, tb) {
                (Type::Table(_), _) | (_, Type::Table(_)) => "tables cannot be compared",
                (Type::Extern(_), _) | (_, Type::Extern(_)) => "externs cannot be compared",
                (Type::ApplyResult(_), _) | (_, Type::ApplyResult(_)) => {
                    "table application results cannot be compared"
                }
                _ => "values of this type cannot be compared",
            };
            self.err(e.span, what.to_string());
            return Type::Error;
        }
        if matches!(ta, Type::Var(..)) || matches!(tb, Type::Var(..)) {
            self.err(e.span, "values of a type variable cannot be compared");
            return Type::Error;
        }
        if matches!(ta, Type::ListExpr(_) | Type::StructExpr(_))
            && matches!(tb, Type::ListExpr(_) | Type::StructExpr(_))
        {
            self.err(
                e.span,
                format!("{ta} and {tb}: cannot compare two untyped list or structure expressions"),
            );
            return Type::Error;
        }
        if ta.is_fixed_int()
            || tb.is_fixed_int()
            || matches!(ta, Type::Int)
            || matches!(tb, Type::Int)
        {
            return self.unify_operands(a, ta, b, tb, "==");
        }
        if same(ta, tb) {
            return ta.clone();
        }
        if self.assignable(tb, ta) {
            self.retype(b, tb, ta, 0);
            return ta.clone();
        }
        if self.assignable(ta, tb) {
            self.retype(a, ta, tb, 0);
            return tb.clone();
        }
        self.err(e.span, format!("{ta} cannot be compared to {tb}"));
        Type::Error
    }

    fn ternary_expr(
        &mut self,
        e: &Expr,
        c: &Expr,
        a: &Expr,
        b: &Expr,
        expected: Option<&Type>,
    ) -> Type {
        self.check_expr_expect(c, &Type::Bool, "condition");
        let ta = self.check_expr(a, expected);
        let tb = self.check_expr(b, expected);
        if ta.is_error() || tb.is_error() {
            return Type::Error;
        }
        let t = if matches!(ta, Type::Int) && matches!(tb, Type::Int) {
            Type::Int
        } else if matches!(ta, Type::Int) && tb.is_fixed_int() {
            self.retype(a, &ta, &tb, 0);
            tb.clone()
        } else if matches!(tb, Type::Int) && ta.is_fixed_int() {
            self.retype(b, &tb, &ta, 0);
            ta.clone()
        } else if same(&ta, &tb) {
            ta.clone()
        } else if self.assignable(&tb, &ta) {
            self.retype(b, &tb, &ta, 0);
            ta.clone()
        } else if self.assignable(&ta, &tb) {
            self.retype(a, &ta, &tb, 0);
            tb.clone()
        } else {
            self.err(
                e.span,
                format!("?: branches have different types {ta} and {tb}"),
            );
            return Type::Error;
        };
        if matches!(t, Type::Int) && !self.is_ctk(c) && expected.is_none_or(|x| !x.is_fixed_int()) {
            self.err(e.span, "?: could not infer a width for the branches");
            return Type::Error;
        }
        if let Some(Value::Bool(cv)) = self.value_of(c.id) {
            let src = if cv { a } else { b };
            if let Some(v) = self.value_of(src.id) {
                self.set_value(e.id, v);
            }
        }
        t
    }

    fn cast_expr(&mut self, e: &Expr, t: &ast::TypeRef, x: &Expr) -> Type {
        let to = self.resolve_type(t);
        let hint = match &x.kind {
            ExprKind::List { .. } | ExprKind::StructInit { .. } | ExprKind::Invalid => {
                Some(to.clone())
            }
            _ => None,
        };
        let from = self.check_expr(x, hint.as_ref());
        if to.is_error() || from.is_error() {
            return Type::Error;
        }
        if !self.cast_ok(&from, &to) {
            self.err(
                e.span,
                format!("cast not supported: cannot cast {from} to {to}"),
            );
            return Type::Error;
        }
        if self.assignable(&from, &to) && !matches!(from, Type::Int) {
            self.retype(x, &from, &to, 0);
        }
        if let Some(v) = self.value_of(x.id) {
            if let (Type::Int, Type::Bool) = (&from, &to) {
                if consteval::cast(&v, &to).is_none() {
                    self.err(e.span, "only 0 and 1 can be cast to bool");
                    return Type::Error;
                }
            }
            if let Some(r) = consteval::cast(&v, &to) {
                self.set_value(e.id, r);
            }
        }
        to
    }

    /// Explicit casts allowed by spec §8.11.1.
    fn cast_ok(&self, from: &Type, to: &Type) -> bool {
        if same(from, to) {
            return !matches!(
                to,
                Type::Extern(_) | Type::Parser(_) | Type::Control(_) | Type::Package(_)
            );
        }
        match (from, to) {
            (Type::Bit(1), Type::Bool) | (Type::Bool, Type::Bit(1)) => true,
            (Type::Int, Type::Bool | Type::Bit(_) | Type::Signed(_)) => true,
            (Type::Bit(_), Type::Bit(_)) | (Type::Signed(_), Type::Signed(_)) => true,
            (Type::Bit(a), Type::Signed(b)) | (Type::Signed(a), Type::Bit(b)) => a == b,
            (Type::Bit(_) | Type::Signed(_), Type::Int) => true,
            (f, Type::NewType(n)) if same(f, &n.underlying) => true,
            (Type::NewType(n), t) if same(&n.underlying, t) => true,
            (Type::Int, Type::NewType(n)) => self.cast_ok(&Type::Int, &n.underlying),
            (Type::Enum(e), t) => match &e.underlying {
                Some(u) => self.cast_ok(u, t),
                None => false,
            },
            (f, Type::Enum(e)) => match &e.underlying {
                Some(u) => {
                    same(f, u)
                        || matches!(f, Type::Int)
                        || (f.is_fixed_int() && !matches!(f, Type::Enum(_)))
                }
                None => false,
            },
            (
                Type::ListExpr(_) | Type::StructExpr(_) | Type::Tuple(_),
                Type::Agg(_) | Type::Stack(..) | Type::Tuple(_),
            ) => self.assignable(from, to),
            (Type::Invalid, t) => t.is_header_like(),
            _ => false,
        }
    }

    fn list_expr(
        &mut self,
        e: &Expr,
        items: &[Expr],
        has_dots: bool,
        expected: Option<&Type>,
    ) -> Type {
        let hints: Vec<Option<Type>> = match expected {
            Some(Type::Tuple(ts))
                if ts.len() == items.len() || has_dots && ts.len() >= items.len() =>
            {
                ts.iter().take(items.len()).cloned().map(Some).collect()
            }
            Some(Type::Agg(a))
                if a.kind != AggKind::HeaderUnion
                    && (a.fields.len() == items.len() || has_dots) =>
            {
                a.fields
                    .iter()
                    .map(|f| Some(f.1.clone()))
                    .chain(std::iter::repeat(None))
                    .take(items.len())
                    .collect()
            }
            Some(Type::Stack(t, _) | Type::List(t)) => vec![Some((**t).clone()); items.len()],
            _ => vec![None; items.len()],
        };
        let mut ts = Vec::new();
        let mut vals = Some(Vec::new());
        for (i, h) in items.iter().zip(hints) {
            let t = match &h {
                Some(h) => {
                    let t = self.check_expr(i, Some(h));
                    if self.coerce(i, &t, h, "list element") {
                        h.clone()
                    } else {
                        Type::Error
                    }
                }
                None => self.check_expr(i, None),
            };
            match (self.value_of(i.id), vals.as_mut()) {
                (Some(v), Some(vs)) => vs.push(v),
                _ => vals = None,
            }
            ts.push(t);
        }
        if let Some(vs) = vals {
            self.set_value(e.id, Value::List(vs));
        }
        if has_dots {
            if let Some(t @ (Type::Agg(_) | Type::Stack(..) | Type::Tuple(_))) = expected {
                return t.clone();
            }
        }
        match expected {
            Some(t @ (Type::Tuple(_) | Type::Agg(_) | Type::Stack(..) | Type::List(_)))
                if self.assignable(&Type::ListExpr(ts.clone()), t) =>
            {
                self.retype(e, &Type::ListExpr(ts.clone()), t, 0);
                t.clone()
            }
            _ => Type::ListExpr(ts),
        }
    }

    fn struct_init_expr(
        &mut self,
        e: &Expr,
        fields: &[(ast::Ident, Expr)],
        has_dots: bool,
        expected: Option<&Type>,
    ) -> Type {
        let agg = match expected {
            Some(Type::Agg(a)) if a.kind != AggKind::HeaderUnion => Some(a.clone()),
            _ => None,
        };
        let mut seen = HashSet::new();
        let mut ts = Vec::new();
        let mut vals = Some(Vec::new());
        for (n, x) in fields {
            if !seen.insert(n.name.clone()) {
                self.err(
                    n.span,
                    format!("{}: duplicate field in structure expression", n.name),
                );
            }
            let hint = agg
                .as_ref()
                .and_then(|a| a.field(&n.name).map(|(_, t)| t.clone()));
            let t = match &hint {
                Some(h) => {
                    let t = self.check_expr(x, Some(h));
                    if self.coerce(x, &t, h, &n.name) {
                        h.clone()
                    } else {
                        Type::Error
                    }
                }
                None => self.check_expr(x, None),
            };
            match (self.value_of(x.id), vals.as_mut()) {
                (Some(v), Some(vs)) => vs.push((n.name.clone(), v)),
                _ => vals = None,
            }
            ts.push((n.name.clone(), t));
        }
        if let Some(a) = &agg {
            for (n, _) in &ts {
                if a.field(n).is_none() {
                    let span = fields
                        .iter()
                        .find(|f| f.0.name == *n)
                        .map(|f| f.0.span)
                        .unwrap_or(e.span);
                    self.err(
                        span,
                        format!("{n}: not a field of {} {}", a.kind.keyword(), a.name),
                    );
                }
            }
            if !has_dots {
                for (f, _) in &a.fields {
                    if !seen.contains(f) {
                        self.err(
                            e.span,
                            format!(
                                "{f}: field missing from structure expression for {}",
                                a.name
                            ),
                        );
                    }
                }
            }
            if let Some(vs) = vals {
                // Order values as the fields of the type.
                let ordered: Vec<(String, Value)> = a
                    .fields
                    .iter()
                    .filter_map(|(f, _)| vs.iter().find(|(n, _)| n == f).cloned())
                    .collect();
                self.set_value(e.id, Value::Struct(ordered));
            }
            return Type::Agg(a.clone());
        }
        if let Some(vs) = vals {
            self.set_value(e.id, Value::Struct(vs));
        }
        Type::StructExpr(ts)
    }

    // -----------------------------------------------------------------------------------------
    // Calls (spec §8.20, §8.21, §6.8.2)

    fn call_expr(
        &mut self,
        e: &Expr,
        callee: &Expr,
        type_args: &[ast::TypeRef],
        args: &[Arg],
        expected: Option<&Type>,
    ) -> Type {
        let _ = expected;
        self.call_args
            .insert(e.id, args.iter().map(|a| a.value.id).collect());
        let allow_ar = std::mem::replace(&mut self.allow_action_run, false);
        let c = self.callee(callee, type_args);
        self.allow_action_run = allow_ar;
        let targs: Vec<Type> = type_args.iter().map(|t| self.resolve_type(t)).collect();
        match c {
            Callee::Error => {
                for a in args {
                    self.check_expr(&a.value, None);
                }
                Type::Error
            }
            Callee::Builtin(b, base_ty) => self.builtin_call(e, callee, b, &base_ty, args),
            Callee::TableApply(t) => self.table_apply_call(e, t, args),
            Callee::BlockApply { obj, direct } => self.block_apply_call(e, &obj, direct, args),
            Callee::Ctor(ty) => self.ctor_call(e, callee, ty, &targs, args),
            Callee::Decls {
                cands,
                subst,
                infer,
                receiver,
            } => {
                let call = DeclsCall {
                    cands: &cands,
                    subst: &subst,
                    infer: &infer,
                    receiver,
                };
                self.decls_call(e, call, &targs, args)
            }
        }
    }

    /// `t.apply()` (P4_16 §14.2.2): no arguments, not from actions, functions or parsers.
    fn table_apply_call(&mut self, e: &Expr, t: DeclId, args: &[Arg]) -> Type {
        if !args.is_empty() {
            self.err(e.span, "apply: tables take no arguments");
        }
        if self.ctx.action.is_some() {
            self.err(e.span, "apply cannot be called from actions");
        } else if self.ctx.function.is_some() {
            self.err(e.span, "tables cannot be applied from functions");
        } else if self.ctx.block_kind == BlockKind::Parser {
            self.err(e.span, "tables cannot be applied in parsers");
        }
        self.out.calls.insert(
            e.id,
            CallInfo {
                target: CallTarget::TableApply(t),
                type_args: vec![],
                args: vec![],
            },
        );
        Type::ApplyResult(t)
    }

    /// A parser's or control's `apply` (P4_16 §15.1 "Direct type invocation" when `direct`):
    /// parsers from parsers, controls from controls.
    fn block_apply_call(&mut self, e: &Expr, obj: &ObjType, direct: bool, args: &[Arg]) -> Type {
        let d = self.decl(obj.decl).clone();
        let is_parser = matches!(d.kind, EntityKind::Parser | EntityKind::ParserType);
        if self.ctx.action.is_some() {
            self.err(e.span, "apply cannot be called from actions");
        } else if self.ctx.function.is_some() {
            self.err(e.span, "apply cannot be called from functions");
        } else if is_parser && self.ctx.block_kind != BlockKind::Parser {
            self.err(e.span, "parsers can only be invoked from parsers");
        } else if !is_parser && self.ctx.block_kind != BlockKind::Control {
            self.err(e.span, "controls can only be invoked from controls");
        }
        if direct && !d.ctor_params.is_empty() {
            self.err(
                e.span,
                format!(
                    "{}: cannot directly invoke a block with constructor parameters",
                    d.name
                ),
            );
        }
        let subst: Subst = d
            .type_params
            .iter()
            .copied()
            .zip(obj.args.iter().cloned())
            .collect();
        let params: Vec<ParamInfo> = d
            .params
            .iter()
            .map(|p| ParamInfo {
                ty: substitute(&p.ty, &subst),
                ..p.clone()
            })
            .collect();
        let vars: Vec<DeclId> = if obj.args.is_empty() {
            d.type_params.clone()
        } else {
            vec![]
        };
        let r = self.match_call(&params, &vars, &[], args, e.span, &d.name, false, true);
        if let Some((_, map)) = r {
            self.out.calls.insert(
                e.id,
                CallInfo {
                    target: CallTarget::BlockApply {
                        decl: obj.decl,
                        direct,
                    },
                    type_args: obj.args.clone(),
                    args: map,
                },
            );
        }
        Type::Void
    }

    /// A constructor call (P4_16 §10.3.1 "Instantiating objects with abstract methods" and
    /// §11.3): not inside functions or actions; an extern with abstract methods needs a
    /// declaration.
    fn ctor_call(
        &mut self,
        e: &Expr,
        callee: &Expr,
        ty: Type,
        targs: &[Type],
        args: &[Arg],
    ) -> Type {
        if self.ctx.action.is_some() || self.ctx.function.is_some() {
            self.err(
                e.span,
                "invalid declaration. instantiations cannot be in a function or action",
            );
        }
        let ty = if !targs.is_empty() {
            match &ty {
                Type::TypeName(_) => ty.clone(),
                _ => {
                    let d = match &ty {
                        Type::Extern(o) | Type::Parser(o) | Type::Control(o) | Type::Package(o) => {
                            Some(o.decl)
                        }
                        _ => None,
                    };
                    match d {
                        Some(d) => self.type_of_decl(d, targs, callee.span),
                        None => ty.clone(),
                    }
                }
            }
        } else {
            ty
        };
        let (ity, ctor, map) = self.instantiate(&ty, args, callee.span, e.span);
        if let Type::Extern(o) = &ity {
            if self
                .decl(o.decl)
                .methods
                .iter()
                .any(|m| self.decl(*m).is_abstract)
            {
                self.err(e.span, format!("{}: extern type with abstract methods cannot be instantiated using a constructor call; use a declaration", o.name));
            }
        }
        if let Some(c) = ctor {
            let target = if matches!(ity, Type::Extern(_)) {
                CallTarget::ExternCtor(c)
            } else {
                CallTarget::Instantiate(c)
            };
            let type_args = match &ity {
                Type::Extern(o) | Type::Parser(o) | Type::Control(o) | Type::Package(o) => {
                    o.args.clone()
                }
                _ => vec![],
            };
            self.out.calls.insert(
                e.id,
                CallInfo {
                    target,
                    type_args,
                    args: map,
                },
            );
        }
        ity
    }

    /// A call of a function, action, extern function or method: where it may be called, the
    /// overload chosen (P4_16 §8.21), what it records (extern calls, packet rules,
    /// `static_assert`) and its return type.
    fn decls_call(&mut self, e: &Expr, call: DeclsCall<'_>, targs: &[Type], args: &[Arg]) -> Type {
        let first = self.decl(call.cands[0]).clone();
        let name = first.name.clone();
        self.call_context_rules(e, &first);
        let ctk_dirless = matches!(
            first.kind,
            EntityKind::ExternFunction | EntityKind::ExternMethod
        );
        let r = self.resolve_overload(
            call.cands,
            call.subst,
            call.infer,
            targs,
            args,
            e.span,
            &name,
            ctk_dirless,
        );
        let Some((chosen, s, map)) = r else {
            return Type::Error;
        };
        let d = self.decl(chosen).clone();
        let target = match d.kind {
            EntityKind::Action => CallTarget::Action(chosen),
            EntityKind::Function => CallTarget::Function(chosen),
            EntityKind::ExternFunction => CallTarget::ExternFunction(chosen),
            _ => CallTarget::ExternMethod(chosen),
        };
        let type_args: Vec<Type> = d
            .type_params
            .iter()
            .map(|t| {
                s.iter()
                    .find(|(v, _)| v == t)
                    .map(|(_, x)| x.clone())
                    .unwrap_or(Type::Error)
            })
            .collect();
        self.out.calls.insert(
            e.id,
            CallInfo {
                target,
                type_args,
                args: map.clone(),
            },
        );
        if matches!(
            d.kind,
            EntityKind::ExternFunction | EntityKind::ExternMethod
        ) && self.mute == 0
        {
            self.record_extern_call(e, &d, call.receiver);
        }
        if d.kind == EntityKind::ExternMethod {
            let ext = d
                .parent
                .map(|p| self.decl(p).name.clone())
                .unwrap_or_default();
            self.packet_rules(&ext, &d.name, d.params.len(), args);
        }
        if d.kind == EntityKind::ExternFunction && d.name == "static_assert" {
            self.static_assert(e, args);
        }
        let ret = substitute(&d.ret, &s);
        let ret = if d.kind == EntityKind::Action {
            Type::Void
        } else {
            ret
        };
        if ret.has_vars() {
            let vars: Vec<DeclId> = call
                .infer
                .iter()
                .chain(d.type_params.iter())
                .copied()
                .collect();
            if has_any_var(&ret, &vars) {
                self.err(
                    e.span,
                    format!("{name}: cannot infer the return type; supply type arguments"),
                );
                return Type::Error;
            }
        }
        ret
    }

    /// Where a callee may be called: actions not from functions, parsers (outside actions)
    /// or table properties; `verify` only in parsers.
    fn call_context_rules(&mut self, e: &Expr, first: &DeclInfo) {
        let name = &first.name;
        match first.kind {
            EntityKind::Action => {
                if self.ctx.function.is_some() {
                    self.err(e.span, format!("{name}(): functions cannot call actions"));
                }
                if self.ctx.block_kind == BlockKind::Parser && self.ctx.action.is_none() {
                    self.err(
                        e.span,
                        format!("{name}: actions cannot be called from parsers"),
                    );
                }
                if self.ctx.in_table {
                    self.err(
                        e.span,
                        format!("{name}(): no function calls allowed in this context"),
                    );
                }
            }
            EntityKind::ExternFunction
                if name == "verify" && self.ctx.block_kind != BlockKind::Parser =>
            {
                self.err(e.span, "verify: may only be invoked in parsers");
            }
            _ => {}
        }
    }

    /// Records a call of an extern function or method for the architecture's rules.
    fn record_extern_call(&mut self, e: &Expr, d: &DeclInfo, receiver: Option<DeclId>) {
        let qual = match d.parent {
            Some(p) if d.kind == EntityKind::ExternMethod => {
                format!("{}.{}", self.decl(p).name, d.name)
            }
            _ => d.name.clone(),
        };
        self.extern_calls.push(ExternCall {
            name: qual,
            instance: receiver,
            action: self.ctx.action,
            block: self.ctx.block,
            call: e.id,
            span: e.span,
        });
    }

    /// `static_assert(condition[, message])` (core.p4): a compile-time check; the call's value
    /// is `true` when it holds.
    fn static_assert(&mut self, e: &Expr, args: &[Arg]) {
        let Some(a0) = args.first() else {
            return;
        };
        match self.value_of(a0.value.id) {
            Some(Value::Bool(true)) => self.set_value(e.id, Value::Bool(true)),
            Some(Value::Bool(false)) => {
                let msg = args
                    .get(1)
                    .and_then(|a| match self.value_of(a.value.id) {
                        Some(Value::String(s)) => Some(s),
                        _ => None,
                    })
                    .unwrap_or_else(|| "static_assert failed".to_string());
                self.err(e.span, msg);
            }
            _ => self.err(
                a0.value.span,
                "static_assert: condition must be a compile-time constant",
            ),
        }
    }

    /// Classifies a callee expression.
    fn callee(&mut self, callee: &Expr, type_args: &[ast::TypeRef]) -> Callee {
        let _ = type_args;
        match &callee.kind {
            ExprKind::Path(p) => {
                let all = self.scopes.lookup(&p.name.name, p.global, |_| true);
                let Some(&first) = all.first() else {
                    self.err(p.span, format!("{}: declaration not found", p.name.name));
                    self.set_type(callee.id, Type::Error);
                    return Callee::Error;
                };
                self.out.resolved.insert(callee.id, first);
                let k = self.decl(first).kind;
                match k {
                    EntityKind::Action
                    | EntityKind::Function
                    | EntityKind::ExternFunction
                    | EntityKind::ExternMethod => {
                        let cands: Vec<DeclId> = all
                            .iter()
                            .copied()
                            .filter(|d| {
                                self.decl(*d).kind == k || self.decl(*d).kind.overloadable()
                            })
                            .collect();
                        self.set_type(callee.id, Type::Function(first));
                        Callee::Decls {
                            cands,
                            subst: vec![],
                            infer: vec![],
                            receiver: None,
                        }
                    }
                    EntityKind::Extern
                    | EntityKind::Parser
                    | EntityKind::Control
                    | EntityKind::PackageType
                    | EntityKind::ParserType
                    | EntityKind::ControlType
                    | EntityKind::Typedef => {
                        let t = self.type_of_decl(first, &[], callee.span);
                        self.set_type(callee.id, Type::TypeName(Box::new(t.clone())));
                        match t {
                            Type::Extern(_)
                            | Type::Parser(_)
                            | Type::Control(_)
                            | Type::Package(_) => Callee::Ctor(t),
                            Type::Error => Callee::Error,
                            _ => {
                                self.err(
                                    callee.span,
                                    format!("{}: cannot call a value of type {t}", p.name.name),
                                );
                                Callee::Error
                            }
                        }
                    }
                    _ => {
                        let t = self.check_expr(callee, None);
                        if !t.is_error() {
                            self.err(callee.span, format!("{} is not a function", p.name.name));
                        }
                        Callee::Error
                    }
                }
            }
            ExprKind::Type(t) => {
                let ty = self.resolve_type(t);
                self.set_type(callee.id, Type::TypeName(Box::new(ty.clone())));
                match ty {
                    Type::Extern(_) | Type::Parser(_) | Type::Control(_) | Type::Package(_) => {
                        Callee::Ctor(ty)
                    }
                    Type::Error => Callee::Error,
                    _ => {
                        self.err(callee.span, format!("cannot call type {ty}"));
                        Callee::Error
                    }
                }
            }
            ExprKind::Member(base, m) => {
                let name = m.name.as_str();
                let bt = self.check_expr(base, None);
                self.set_type(callee.id, Type::Error);
                self.out.members.insert(callee.id, MemberInfo::Method);
                let size_builtin = match name {
                    "minSizeInBits" => Some(Builtin::MinSizeInBits),
                    "minSizeInBytes" => Some(Builtin::MinSizeInBytes),
                    "maxSizeInBits" => Some(Builtin::MaxSizeInBits),
                    "maxSizeInBytes" => Some(Builtin::MaxSizeInBytes),
                    _ => None,
                };
                match &bt {
                    Type::Error => Callee::Error,
                    Type::TypeName(inner) => {
                        if let Some(b) = size_builtin {
                            return Callee::Builtin(b, (**inner).clone());
                        }
                        match inner.as_ref() {
                            Type::Parser(o) | Type::Control(o) if name == "apply" => {
                                let k = self.decl(o.decl).kind;
                                if matches!(k, EntityKind::Parser | EntityKind::Control) {
                                    Callee::BlockApply {
                                        obj: o.clone(),
                                        direct: true,
                                    }
                                } else {
                                    self.err(
                                        callee.span,
                                        format!("{}: cannot apply a type", o.name),
                                    );
                                    Callee::Error
                                }
                            }
                            t => {
                                self.err(m.span, format!("{name}: not a method of type {t}"));
                                Callee::Error
                            }
                        }
                    }
                    Type::Extern(o)
                        if size_builtin.is_some()
                            && !self
                                .decl(o.decl)
                                .methods
                                .iter()
                                .any(|m| self.decl(*m).name == name) =>
                    {
                        Callee::Builtin(size_builtin.unwrap_or(Builtin::MinSizeInBits), bt.clone())
                    }
                    Type::Extern(_) => self.extern_method_callee(base, &bt, m),
                    _ if size_builtin.is_some() => {
                        Callee::Builtin(size_builtin.unwrap_or(Builtin::MinSizeInBits), bt.clone())
                    }
                    Type::Agg(a) if a.kind == AggKind::Header => match name {
                        "isValid" => Callee::Builtin(Builtin::IsValid, bt.clone()),
                        "setValid" => Callee::Builtin(Builtin::SetValid, bt.clone()),
                        "setInvalid" => Callee::Builtin(Builtin::SetInvalid, bt.clone()),
                        _ => {
                            self.err(m.span, format!("{name}: not a method of header {}", a.name));
                            Callee::Error
                        }
                    },
                    Type::Agg(a) if a.kind == AggKind::HeaderUnion => match name {
                        "isValid" => Callee::Builtin(Builtin::IsValid, bt.clone()),
                        _ => {
                            self.err(
                                m.span,
                                format!("{name}: not a method of header_union {}", a.name),
                            );
                            Callee::Error
                        }
                    },
                    Type::Stack(e, _) if e.is_header_like() => match name {
                        "push_front" => Callee::Builtin(Builtin::PushFront, bt.clone()),
                        "pop_front" => Callee::Builtin(Builtin::PopFront, bt.clone()),
                        _ => {
                            self.err(m.span, format!("{name}: not a method of a header stack"));
                            Callee::Error
                        }
                    },
                    Type::Table(t) if name == "apply" => Callee::TableApply(*t),
                    Type::Parser(o) | Type::Control(o) if name == "apply" => Callee::BlockApply {
                        obj: o.clone(),
                        direct: false,
                    },

                    t => {
                        self.err(
                            m.span,
                            format!("{name}: not a method of a value of type {t}"),
                        );
                        Callee::Error
                    }
                }
            }
            _ => {
                let t = self.check_expr(callee, None);
                if !t.is_error() {
                    self.err(callee.span, format!("a value of type {t} cannot be called"));
                }
                Callee::Error
            }
        }
    }

    fn extern_method_callee(&mut self, base: &Expr, bt: &Type, m: &ast::Ident) -> Callee {
        let name = m.name.as_str();
        let Type::Extern(o) = bt else {
            return Callee::Error;
        };
        let ext = self.decl(o.decl).clone();
        let cands: Vec<DeclId> = ext
            .methods
            .iter()
            .copied()
            .filter(|mm| {
                self.decl(*mm).kind == EntityKind::ExternMethod && self.decl(*mm).name == name
            })
            .collect();
        if cands.is_empty() {
            self.err(
                m.span,
                format!(
                    "{name}: extern {} does not have a method named {name}",
                    ext.name
                ),
            );
            return Callee::Error;
        }
        let subst: Subst = if o.args.is_empty() {
            vec![]
        } else {
            ext.type_params
                .iter()
                .copied()
                .zip(o.args.iter().cloned())
                .collect()
        };
        let infer = if o.args.is_empty() {
            ext.type_params.clone()
        } else {
            vec![]
        };
        let receiver = match &base.kind {
            ExprKind::Path(_) => self.out.resolved.get(&base.id).copied(),
            _ => None,
        };
        Callee::Decls {
            cands,
            subst,
            infer,
            receiver,
        }
    }

    fn builtin_call(
        &mut self,
        e: &Expr,
        callee: &Expr,
        b: Builtin,
        base_ty: &Type,
        args: &[Arg],
    ) -> Type {
        let base = match &callee.kind {
            ExprKind::Member(base, _) => Some(base.as_ref()),
            _ => None,
        };
        let want_args = matches!(b, Builtin::PushFront | Builtin::PopFront) as usize;
        if args.len() != want_args {
            self.err(
                e.span,
                format!(
                    "{}: expected {want_args} arguments, found {}",
                    builtin_name(b),
                    args.len()
                ),
            );
            for a in args {
                self.check_expr(&a.value, None);
            }
            return Type::Error;
        }
        self.out.calls.insert(
            e.id,
            CallInfo {
                target: CallTarget::Builtin(b),
                type_args: vec![],
                args: (0..want_args).map(CallArg::Arg).collect(),
            },
        );
        match b {
            Builtin::IsValid => Type::Bool,
            Builtin::SetValid | Builtin::SetInvalid => {
                if let Some(base) = base {
                    self.check_lvalue(base);
                }
                Type::Void
            }
            Builtin::PushFront | Builtin::PopFront => {
                if let Some(base) = base {
                    self.check_lvalue(base);
                }
                let a = &args[0].value;
                let t = self.check_expr(a, None);
                match self.value_of(a.id).and_then(|v| v.as_int().cloned()) {
                    Some(v) if !v.is_negative() => {}
                    Some(v) => self.err(a.span, format!("{}: negative count {v}", builtin_name(b))),
                    None if !t.is_error() => self.err(
                        a.span,
                        format!(
                            "{}: argument must be a compile-time constant",
                            builtin_name(b)
                        ),
                    ),
                    None => {}
                }
                Type::Void
            }
            _ => {
                let max = matches!(b, Builtin::MaxSizeInBits | Builtin::MaxSizeInBytes);
                let bits = if max {
                    base_ty.max_width_bits()
                } else {
                    base_ty.min_width_bits()
                };
                match bits {
                    Some(n) if !base_ty.has_vars() => {
                        let n = if matches!(b, Builtin::MinSizeInBytes | Builtin::MaxSizeInBytes) {
                            n.div_ceil(8)
                        } else {
                            n
                        };
                        self.set_value(e.id, Value::Int(BigInt::from(n)));
                    }
                    None if !base_ty.has_vars() && !base_ty.is_error() => {
                        self.err(
                            e.span,
                            format!("{}: not defined on type {base_ty}", builtin_name(b)),
                        );
                        return Type::Error;
                    }
                    _ => {}
                }
                Type::Int
            }
        }
    }

    /// Argument rules of `packet_in.extract` and `packet_out.emit` (spec §12.8, §16.1).
    fn packet_rules(&mut self, ext: &str, method: &str, nparams: usize, args: &[Arg]) {
        let Some(a) = args.first() else { return };
        let t = self.type_of(a.value.id);
        if t.is_error() || matches!(t, Type::DontCare) {
            return;
        }
        match (ext, method) {
            ("packet_in", "extract") => {
                if !t.is_header() {
                    self.err(
                        a.value.span,
                        format!("extract: argument must be a header, found {t}"),
                    );
                    return;
                }
                let varbits = match &t {
                    Type::Agg(ag) => ag
                        .fields
                        .iter()
                        .filter(|f| matches!(f.1, Type::Varbit(_)))
                        .count(),
                    _ => 0,
                };
                if nparams == 2 && varbits == 0 {
                    self.err(
                        a.value.span,
                        format!("extract: {t} is not a variable-sized header"),
                    );
                } else if nparams == 2 && varbits > 1 {
                    self.err(
                        a.value.span,
                        format!("{t}: multiple varbit fields in a header"),
                    );
                } else if nparams == 1 && varbits > 0 {
                    self.err(
                        a.value.span,
                        format!("extract: {t} has a varbit field; use the two-argument extract"),
                    );
                }
            }
            ("packet_out", "emit") if !emittable(&t, 0) => {
                self.err(
                    a.value.span,
                    format!("emit: argument must be a header, header stack, header union or struct of those, found {t}"),
                );
            }
            _ => {}
        }
    }

    /// Chooses among overloads by arity and argument names, then by argument types.
    #[allow(clippy::too_many_arguments)]
    pub fn resolve_overload(
        &mut self,
        cands: &[DeclId],
        subst: &Subst,
        infer: &[DeclId],
        explicit: &[Type],
        args: &[Arg],
        span: Span,
        name: &str,
        ctk_dirless: bool,
    ) -> Option<(DeclId, Subst, Vec<CallArg>)> {
        let fitting: Vec<DeclId> = cands
            .iter()
            .copied()
            .filter(|c| self.arity_fits(&self.decl(*c).params, args))
            .collect();
        let chosen = match fitting.len() {
            0 => {
                if cands.len() == 1 {
                    cands[0]
                } else {
                    self.err(
                        span,
                        format!("{name}: no overload accepts {} arguments", args.len()),
                    );
                    for a in args {
                        self.check_expr(&a.value, None);
                    }
                    return None;
                }
            }
            1 => fitting[0],
            _ => {
                // Try each candidate silently; take the first that type-checks.
                let mut passing = Vec::new();
                if self.mute < 2 {
                    for &c in &fitting {
                        self.mute += 1;
                        let ok = self
                            .try_candidate(c, subst, infer, explicit, args, span, name, ctk_dirless)
                            .is_some();
                        self.mute -= 1;
                        if ok {
                            passing.push(c);
                        }
                    }
                    let same_arity = passing
                        .windows(2)
                        .all(|w| self.decl(w[0]).params.len() == self.decl(w[1]).params.len());
                    if passing.len() > 1 && same_arity && args.iter().all(|a| a.name.is_none()) {
                        self.err(
                            span,
                            format!("{name}: ambiguous call; several overloads match"),
                        );
                        return None;
                    }
                }
                passing.first().copied().unwrap_or(fitting[0])
            }
        };
        let (s, map) = self.try_candidate(
            chosen,
            subst,
            infer,
            explicit,
            args,
            span,
            name,
            ctk_dirless,
        )?;
        Some((chosen, s, map))
    }

    #[allow(clippy::too_many_arguments)]
    fn try_candidate(
        &mut self,
        c: DeclId,
        subst: &Subst,
        infer: &[DeclId],
        explicit: &[Type],
        args: &[Arg],
        span: Span,
        name: &str,
        ctk_dirless: bool,
    ) -> Option<(Subst, Vec<CallArg>)> {
        let d = self.decl(c).clone();
        let mut s: Subst = subst.clone();
        if !explicit.is_empty() {
            if let Some(t) = explicit
                .iter()
                .find(|t| matches!(t, Type::Void | Type::Int | Type::String))
            {
                self.err(span, format!("{t}: illegal type argument for '{name}'"));
                return None;
            }
            if name == "lookahead"
                && explicit
                    .iter()
                    .any(|t| t.min_width_bits() != t.max_width_bits())
            {
                self.err(
                    span,
                    format!("{}: type argument must be a fixed-width type", explicit[0]),
                );
                return None;
            }
            if explicit.len() != d.type_params.len() {
                self.err(
                    span,
                    format!(
                        "{name}: expected {} type arguments, found {}",
                        d.type_params.len(),
                        explicit.len()
                    ),
                );
                return None;
            }
            for (tp, t) in d.type_params.iter().zip(explicit) {
                if !matches!(t, Type::DontCare) {
                    s.push((*tp, t.clone()));
                }
            }
        }
        let params: Vec<ParamInfo> = d
            .params
            .iter()
            .map(|p| ParamInfo {
                ty: substitute(&p.ty, &s),
                ..p.clone()
            })
            .collect();
        let vars: Vec<DeclId> = infer
            .iter()
            .chain(d.type_params.iter())
            .copied()
            .filter(|v| !s.iter().any(|(x, _)| x == v))
            .collect();
        let is_ctor = d.kind == EntityKind::ExternCtor;
        let (s2, map) =
            self.match_call(&params, &vars, &[], args, span, name, ctk_dirless, is_ctor)?;
        let mut all = s;
        all.extend(s2);
        Some((all, map))
    }

    /// Whether `args` can be mapped onto `params` (counts and names only).
    pub fn arity_fits(&self, params: &[ParamInfo], args: &[Arg]) -> bool {
        let named = args.iter().any(|a| a.name.is_some());
        if named {
            let names: HashSet<&str> = args
                .iter()
                .filter_map(|a| a.name.as_ref().map(|n| n.name.as_str()))
                .collect();
            names.iter().all(|n| params.iter().any(|p| p.name == *n))
                && params
                    .iter()
                    .all(|p| names.contains(p.name.as_str()) || p.optional || p.has_default)
        } else {
            let required = params
                .iter()
                .filter(|p| !p.optional && !p.has_default)
                .count();
            args.len() >= required && args.len() <= params.len()
        }
    }

    /// Maps arguments to parameters, infers type variables `vars`, checks every argument.
    /// Returns the inferred substitution and the parameter ↔ argument map.
    #[allow(clippy::too_many_arguments)]
    pub fn match_call(
        &mut self,
        params: &[ParamInfo],
        vars: &[DeclId],
        init: &[(DeclId, Type)],
        args: &[Arg],
        span: Span,
        name: &str,
        ctk_dirless: bool,
        is_ctor: bool,
    ) -> Option<(Subst, Vec<CallArg>)> {
        let c = CallSite {
            params,
            vars,
            args,
            span,
            name,
            ctk_dirless,
            is_ctor,
        };
        // 1. Map arguments to parameters.
        let (map, call_args) = self.map_args(&c)?;
        // 2. Type the arguments, inferring type variables.
        let (subst, arg_types) = self.infer_args(&c, init, &map)?;
        // 3. Check each argument against its (substituted) parameter type.
        let mut good = true;
        for (pi, p) in params.iter().enumerate() {
            let (Some(ai), Some(at)) = (map[pi], arg_types[pi].clone()) else {
                continue;
            };
            let pty = substitute(&p.ty, &subst);
            if at.is_error() || pty.is_error() {
                continue;
            }
            if !self.check_arg(&c, p, &args[ai].value, &at, &pty) {
                good = false;
            }
        }
        good.then_some((subst, call_args))
    }

    /// Which argument each parameter gets (P4_16 spec §6.8.1: all arguments named or none,
    /// a parameter without an argument needs a default or to be optional), and what the call
    /// passes for each parameter. `None` after the errors (every argument still checked).
    fn map_args(&mut self, c: &CallSite<'_>) -> Option<(Vec<Option<usize>>, Vec<CallArg>)> {
        let (params, args, span, name) = (c.params, c.args, c.span, c.name);
        let mut map: Vec<Option<usize>> = vec![None; params.len()];
        let mut ok = true;
        if args.iter().any(|a| a.name.is_some()) {
            if args.iter().any(|a| a.name.is_none()) {
                self.err(
                    span,
                    format!("{name}: either all or none of the arguments must be named"),
                );
                ok = false;
            }
            for (i, a) in args.iter().enumerate() {
                let Some(n) = &a.name else { continue };
                match params.iter().position(|p| p.name == n.name) {
                    Some(pi) => {
                        if map[pi].is_some() {
                            self.err(n.span, format!("{}: same argument name used twice", n.name));
                            ok = false;
                        }
                        map[pi] = Some(i);
                    }
                    None => {
                        self.err(
                            n.span,
                            format!("{}: no parameter named {} in {name}", n.name, n.name),
                        );
                        ok = false;
                    }
                }
            }
        } else {
            if args.len() > params.len() {
                self.err(
                    span,
                    format!(
                        "{name}: too many arguments: expected at most {}, found {}",
                        params.len(),
                        args.len()
                    ),
                );
                ok = false;
            }
            for (i, _) in args.iter().enumerate().take(params.len()) {
                map[i] = Some(i);
            }
        }
        let mut call_args = Vec::with_capacity(params.len());
        for (p, m) in params.iter().zip(&map) {
            call_args.push(match m {
                Some(i) => CallArg::Arg(*i),
                None if p.has_default => CallArg::Default(p.decl),
                None if p.optional => CallArg::Omitted,
                None => {
                    self.err(
                        span,
                        format!("{name}: no argument supplied for parameter {}", p.name),
                    );
                    ok = false;
                    CallArg::Omitted
                }
            });
        }
        if !ok {
            for a in args {
                self.check_expr(&a.value, None);
            }
            return None;
        }
        Some((map, call_args))
    }

    /// Types the arguments (each with its parameter's type as a hint when that has no type
    /// variable) and infers the type variables from them (§16.1: every variable of a parameter
    /// that gets an argument inferred, and not only from `int` literals).
    fn infer_args(
        &mut self,
        c: &CallSite<'_>,
        init: &[(DeclId, Type)],
        map: &[Option<usize>],
    ) -> Option<(Subst, Vec<Option<Type>>)> {
        let (params, vars, args) = (c.params, c.vars, c.args);
        let mut subst: Subst = init.to_vec();
        let mut weak: HashSet<DeclId> = HashSet::new();
        let mut arg_types: Vec<Option<Type>> = vec![None; params.len()];
        for (pi, p) in params.iter().enumerate() {
            let Some(ai) = map[pi] else { continue };
            let a = &args[ai].value;
            let pty = substitute(&p.ty, &subst);
            let hint = if has_any_var(&pty, vars) {
                None
            } else {
                Some(pty.clone())
            };
            let at = if matches!(a.kind, ExprKind::DontCare) {
                self.set_type(a.id, Type::DontCare);
                Type::DontCare
            } else {
                self.check_expr(a, hint.as_ref())
            };
            if !c.is_ctor {
                if let Type::Table(_) | Type::Parser(_) | Type::Control(_) | Type::Package(_) = at {
                    self.err(
                        a.span,
                        format!("{}: argument cannot have type {at}", p.name),
                    );
                    return None;
                }
            }
            if matches!(at, Type::StructExpr(_)) && has_any_var(&p.ty, vars) {
                self.err(
                    a.span,
                    "cannot infer the type of a structure expression; add a cast",
                );
                return None;
            }
            self.unify(&p.ty, &at, vars, &mut subst, &mut weak, 0);
            arg_types[pi] = Some(at);
        }
        // Type variables of parameters that got an argument must be inferred.
        for (pi, p) in params.iter().enumerate() {
            let Some(ai) = map[pi] else { continue };
            if matches!(
                p.ty,
                Type::Parser(_) | Type::Control(_) | Type::Package(_) | Type::Extern(_)
            ) {
                continue;
            }
            for v in vars {
                if type_mentions(&p.ty, *v) && !subst.iter().any(|(x, _)| x == v) {
                    let n = self.decl(*v).name.clone();
                    self.err(
                        args[ai].value.span,
                        format!("{}: could not infer a type for variable {n}", c.name),
                    );
                    return None;
                }
            }
        }
        // Variables bound only by `int` literals have no width.
        for v in &weak {
            let site = params
                .iter()
                .enumerate()
                .find_map(|(pi, p)| match (&p.ty, map[pi]) {
                    (Type::Var(x, _), Some(ai)) if x == v => Some(ai),
                    _ => None,
                });
            if let Some(ai) = site {
                self.err(args[ai].value.span, "could not infer a width");
                return None;
            }
        }
        Some((subst, arg_types))
    }

    /// One argument `a` of type `at` against its parameter `p` of (substituted) type `pty`
    /// (§6.8: `out`/`inout` take an l-value of the same type or `_`; `in` and directionless
    /// ones a value that converts implicitly, directionless ones of constructors and of
    /// `ctk_dirless` calls a compile-time constant). False after the error.
    fn check_arg(
        &mut self,
        c: &CallSite<'_>,
        p: &ParamInfo,
        a: &Expr,
        at: &Type,
        pty: &Type,
    ) -> bool {
        if p.dir != Direction::None && matches!(pty, Type::String) {
            self.err(
                a.span,
                format!(
                    "{}: a parameter with type string cannot have a direction",
                    p.name
                ),
            );
            return false;
        }
        if matches!(pty, Type::DontCare) {
            self.err(
                a.span,
                format!(
                    "could not infer a type for parameter {} (inferred type is don't care '_')",
                    p.name
                ),
            );
            return false;
        }
        let dont_care = matches!(a.kind, ExprKind::DontCare);
        match p.dir {
            Direction::Out | Direction::InOut => {
                if dont_care {
                    return true;
                }
                if !same(at, pty) && !has_any_var(pty, c.vars) {
                    self.err(a.span, format!("{}: type mismatch: argument of type {at} for {} parameter of type {pty}", p.name, dir_name(p.dir)));
                    return false;
                }
                self.check_lvalue(a)
            }
            Direction::In | Direction::None => {
                if dont_care {
                    if !c.is_ctor {
                        self.err(
                            a.span,
                            format!(
                                "{}: don't care argument only allowed for out parameters",
                                p.name
                            ),
                        );
                        return false;
                    }
                    return true;
                }
                if has_any_var(pty, c.vars) {
                    return true;
                }
                if !self.coerce(a, at, pty, &p.name) {
                    return false;
                }
                let object = matches!(
                    pty,
                    Type::Extern(_) | Type::Parser(_) | Type::Control(_) | Type::Package(_)
                );
                if p.dir == Direction::None
                    && (c.ctk_dirless || c.is_ctor)
                    && !object
                    && !self.is_ctk(a)
                {
                    self.err(
                        a.span,
                        format!("argument used for directionless parameter '{}' must be a compile-time constant", p.name),
                    );
                    return false;
                }
                true
            }
        }
    }

    /// Binds type variables of `p` by matching against the argument type `a`.
    fn unify(
        &self,
        p: &Type,
        a: &Type,
        vars: &[DeclId],
        subst: &mut Subst,
        weak: &mut HashSet<DeclId>,
        depth: u32,
    ) {
        if depth > 64 {
            return;
        }
        match p {
            Type::Var(v, _) if vars.contains(v) => {
                let a = match a {
                    Type::ListExpr(ts) => Type::Tuple(ts.clone()),
                    Type::DontCare | Type::Invalid | Type::Error => return,
                    t => t.clone(),
                };
                match subst.iter().position(|(x, _)| x == v) {
                    None => {
                        if matches!(a, Type::Int) {
                            weak.insert(*v);
                        }
                        subst.push((*v, a));
                    }
                    Some(i) => {
                        if weak.contains(v) && !matches!(a, Type::Int) {
                            subst[i].1 = a;
                            weak.remove(v);
                        }
                    }
                }
            }
            Type::Agg(pa) => {
                if let Type::Agg(aa) = a {
                    if pa.decl == aa.decl {
                        for (x, y) in pa.args.iter().zip(&aa.args) {
                            self.unify(x, y, vars, subst, weak, depth + 1);
                        }
                    }
                }
            }
            Type::Stack(pe, _) | Type::List(pe) => match a {
                Type::Stack(ae, _) | Type::List(ae) => {
                    self.unify(pe, ae, vars, subst, weak, depth + 1)
                }
                Type::ListExpr(ts) => {
                    for t in ts {
                        self.unify(pe, t, vars, subst, weak, depth + 1);
                    }
                }
                _ => {}
            },
            Type::Tuple(ps) => {
                if let Type::Tuple(xs) | Type::ListExpr(xs) = a {
                    for (x, y) in ps.iter().zip(xs) {
                        self.unify(x, y, vars, subst, weak, depth + 1);
                    }
                }
            }
            Type::Extern(po) | Type::Package(po) => match a {
                Type::Extern(ao) | Type::Package(ao) if ao.decl == po.decl => {
                    for (x, y) in po.args.iter().zip(&ao.args) {
                        self.unify(x, y, vars, subst, weak, depth + 1);
                    }
                }
                _ => {}
            },
            Type::Parser(po) | Type::Control(po) => match a {
                Type::Parser(ao) | Type::Control(ao) => {
                    if ao.decl == po.decl {
                        for (x, y) in po.args.iter().zip(&ao.args) {
                            self.unify(x, y, vars, subst, weak, depth + 1);
                        }
                    } else {
                        let pp = self.apply_params(po);
                        let ap = self.apply_params(ao);
                        for (x, y) in pp.iter().zip(&ap) {
                            self.unify(&x.1, &y.1, vars, subst, weak, depth + 1);
                        }
                    }
                }
                _ => {}
            },
            Type::NewType(_) | Type::Set(_) | Type::ValueSet(_) => {}
            _ => {}
        }
    }

    // -----------------------------------------------------------------------------------------
    // L-values and compile-time known values

    /// Checks that `e` can be written (spec §6.6); reports and returns `false` otherwise.
    pub fn check_lvalue(&mut self, e: &Expr) -> bool {
        self.lvalue_rec(e, 0)
    }

    fn lvalue_rec(&mut self, e: &Expr, depth: u32) -> bool {
        if depth > MAX_DEPTH {
            return true;
        }
        match &e.kind {
            ExprKind::Path(p) => {
                let Some(d) = self.out.resolved.get(&e.id).copied() else {
                    return true;
                };
                let info = self.decl(d).clone();
                match info.kind {
                    EntityKind::Variable => true,
                    EntityKind::Param => match info.dir {
                        Direction::Out | Direction::InOut => true,
                        Direction::In => {
                            self.err(
                                e.span,
                                format!("{}: cannot write to an in parameter", p.name.name),
                            );
                            false
                        }
                        // `@__ref` action data is written back into the table entry by the
                        // data plane (nevermiss extension, docs/runtime.md; papers/000 §III).
                        Direction::None
                            if info.annotations.iter().any(|a| a == "__ref")
                                && info
                                    .parent
                                    .is_some_and(|a| self.decl(a).kind == EntityKind::Action) =>
                        {
                            true
                        }
                        Direction::None => {
                            self.err(
                                e.span,
                                format!(
                                    "{}: cannot write to a directionless parameter",
                                    p.name.name
                                ),
                            );
                            false
                        }
                    },
                    EntityKind::Const => {
                        self.err(
                            e.span,
                            format!("{}: cannot write to a constant", p.name.name),
                        );
                        false
                    }
                    _ => {
                        self.err(e.span, format!("{}: must be a left-value", p.name.name));
                        false
                    }
                }
            }
            ExprKind::Member(base, m) => match self.out.members.get(&e.id) {
                Some(MemberInfo::Field(_))
                | Some(MemberInfo::StackNext)
                | Some(MemberInfo::StackLast) => self.lvalue_rec(base, depth + 1),
                None => self.type_of(e.id).is_error(),
                _ => {
                    self.err(e.span, format!("{}: must be a left-value", m.name));
                    false
                }
            },
            ExprKind::Index(base, _)
            | ExprKind::Slice(base, _, _)
            | ExprKind::PlusSlice(base, _, _) => self.lvalue_rec(base, depth + 1),
            ExprKind::This => true,
            _ => {
                if !self.type_of(e.id).is_error() {
                    self.err(e.span, "expression must be a left-value");
                }
                false
            }
        }
    }

    /// Whether `e` applies a table.
    pub fn contains_table_apply(&self, e: &Expr, depth: u32) -> bool {
        if depth > MAX_DEPTH {
            return false;
        }
        let r = |x: &Expr| self.contains_table_apply(x, depth + 1);
        match &e.kind {
            ExprKind::Call { callee, args, .. } => {
                matches!(
                    self.out.calls.get(&e.id).map(|c| &c.target),
                    Some(CallTarget::TableApply(_))
                ) || r(callee)
                    || args.iter().any(|a| r(&a.value))
            }
            ExprKind::Member(b, _) | ExprKind::Unary(_, b) | ExprKind::Cast(_, b) => r(b),
            ExprKind::Index(a, b) | ExprKind::Binary(_, a, b) => r(a) || r(b),
            ExprKind::Slice(a, b, c)
            | ExprKind::PlusSlice(a, b, c)
            | ExprKind::Ternary(a, b, c) => r(a) || r(b) || r(c),
            ExprKind::List { items, .. } => items.iter().any(r),
            ExprKind::StructInit { fields, .. } => fields.iter().any(|(_, x)| r(x)),
            _ => false,
        }
    }

    /// Whether `e` calls a function or an action (not allowed in table keys / select labels).
    pub fn contains_user_call(&self, e: &Expr, depth: u32) -> bool {
        if depth > MAX_DEPTH {
            return false;
        }
        let r = |x: &Expr| self.contains_user_call(x, depth + 1);
        match &e.kind {
            ExprKind::Call { callee, args, .. } => {
                matches!(
                    self.out.calls.get(&e.id).map(|c| &c.target),
                    Some(CallTarget::Function(_)) | Some(CallTarget::Action(_))
                ) || r(callee)
                    || args.iter().any(|a| r(&a.value))
            }
            ExprKind::Member(b, _) | ExprKind::Unary(_, b) | ExprKind::Cast(_, b) => r(b),
            ExprKind::Index(a, b)
            | ExprKind::Binary(_, a, b)
            | ExprKind::Mask(a, b)
            | ExprKind::Range(a, b) => r(a) || r(b),
            ExprKind::Slice(a, b, c)
            | ExprKind::PlusSlice(a, b, c)
            | ExprKind::Ternary(a, b, c) => r(a) || r(b) || r(c),
            ExprKind::List { items, .. } => items.iter().any(r),
            ExprKind::StructInit { fields, .. } => fields.iter().any(|(_, x)| r(x)),
            _ => false,
        }
    }

    /// Whether `e` is a compile-time known value (spec §17.1).
    pub fn is_ctk(&self, e: &Expr) -> bool {
        self.ctk_rec(e, 0)
    }

    fn ctk_rec(&self, e: &Expr, depth: u32) -> bool {
        if depth > MAX_DEPTH * 2 {
            return false;
        }
        if self.out.values.contains_key(&e.id) {
            return true;
        }
        let r = |x: &Expr| self.ctk_rec(x, depth + 1);
        match &e.kind {
            ExprKind::Bool(_) | ExprKind::Int { .. } | ExprKind::String(_) | ExprKind::Invalid => {
                true
            }
            ExprKind::Default
            | ExprKind::DontCare
            | ExprKind::Type(_)
            | ExprKind::This
            | ExprKind::Dots => true,
            ExprKind::Path(_) => match self.out.resolved.get(&e.id) {
                Some(d) => {
                    let info = self.decl(*d);
                    match info.kind {
                        EntityKind::Variable => false,
                        // Directionless parameters are constant within their body.
                        EntityKind::Param => info.dir == Direction::None,
                        _ => true,
                    }
                }
                None => true,
            },
            ExprKind::Member(b, _) => match self.out.members.get(&e.id) {
                Some(MemberInfo::EnumMember(_))
                | Some(MemberInfo::ErrorMember(_))
                | Some(MemberInfo::StackSize) => true,
                Some(MemberInfo::Field(_)) => r(b),
                None => self.type_of(e.id).is_error(),
                _ => false,
            },
            ExprKind::Index(a, b)
            | ExprKind::Mask(a, b)
            | ExprKind::Range(a, b)
            | ExprKind::Binary(_, a, b) => r(a) && r(b),
            ExprKind::Slice(a, b, c)
            | ExprKind::PlusSlice(a, b, c)
            | ExprKind::Ternary(a, b, c) => r(a) && r(b) && r(c),
            ExprKind::Unary(_, x) | ExprKind::Cast(_, x) => r(x),
            ExprKind::List { items, .. } => items.iter().all(r),
            ExprKind::StructInit { fields, .. } => fields.iter().all(|(_, x)| r(x)),
            ExprKind::Call { args, .. } => match self.out.calls.get(&e.id).map(|c| &c.target) {
                Some(CallTarget::ExternCtor(_)) | Some(CallTarget::Instantiate(_)) => true,
                Some(CallTarget::ExternFunction(_)) => args.iter().all(|a| r(&a.value)),
                Some(CallTarget::Builtin(
                    Builtin::MinSizeInBits
                    | Builtin::MinSizeInBytes
                    | Builtin::MaxSizeInBits
                    | Builtin::MaxSizeInBytes,
                )) => true,
                None => self.type_of(e.id).is_error(),
                _ => false,
            },
        }
    }
}

fn builtin_name(b: Builtin) -> &'static str {
    match b {
        Builtin::IsValid => "isValid",
        Builtin::SetValid => "setValid",
        Builtin::SetInvalid => "setInvalid",
        Builtin::PushFront => "push_front",
        Builtin::PopFront => "pop_front",
        Builtin::MinSizeInBits => "minSizeInBits",
        Builtin::MinSizeInBytes => "minSizeInBytes",
        Builtin::MaxSizeInBits => "maxSizeInBits",
        Builtin::MaxSizeInBytes => "maxSizeInBytes",
    }
}

fn dir_name(d: Direction) -> &'static str {
    match d {
        Direction::None => "directionless",
        Direction::In => "in",
        Direction::Out => "out",
        Direction::InOut => "inout",
    }
}

/// Whether `t` mentions any of `vars`.
pub(crate) fn has_any_var(t: &Type, vars: &[DeclId]) -> bool {
    if vars.is_empty() || !t.has_vars() {
        return false;
    }
    vars.iter().any(|v| type_mentions(t, *v))
}

/// Whether `t` mentions the type variable `v`.
pub(crate) fn type_mentions(t: &Type, v: DeclId) -> bool {
    fn rec(t: &Type, v: DeclId, d: u32) -> bool {
        if d > 64 {
            return false;
        }
        match t {
            Type::Var(x, _) => *x == v,
            Type::Agg(a) => {
                a.args.iter().any(|x| rec(x, v, d + 1))
                    || a.fields.iter().any(|f| rec(&f.1, v, d + 1))
            }
            Type::Stack(x, _)
            | Type::List(x)
            | Type::ValueSet(x)
            | Type::Set(x)
            | Type::TypeName(x) => rec(x, v, d + 1),
            Type::Tuple(xs) | Type::ListExpr(xs) => xs.iter().any(|x| rec(x, v, d + 1)),
            Type::StructExpr(fs) => fs.iter().any(|f| rec(&f.1, v, d + 1)),
            Type::Extern(o) | Type::Parser(o) | Type::Control(o) | Type::Package(o) => {
                o.args.iter().any(|x| rec(x, v, d + 1))
            }
            Type::NewType(n) => rec(&n.underlying, v, d + 1),
            _ => false,
        }
    }
    rec(t, v, 0)
}

/// Unused helper kept for symmetry with [`AggType`] construction in lowering.
#[allow(dead_code)]
pub(crate) fn agg_field_type(a: &AggType, name: &str) -> Option<Type> {
    a.field(name).map(|(_, t)| t.clone())
}

/// Types `packet_out.emit` accepts.
fn emittable(t: &Type, depth: u32) -> bool {
    if depth > 32 {
        return true;
    }
    match t {
        Type::Agg(a) => {
            a.kind != AggKind::Struct || a.fields.iter().all(|f| emittable(&f.1, depth + 1))
        }
        Type::Stack(e, _) => e.is_header_like(),
        Type::Error | Type::Var(..) => true,
        Type::Tuple(ts) | Type::ListExpr(ts) => ts.iter().all(|x| emittable(x, depth + 1)),
        _ => false,
    }
}

/// A binary operation being checked: the expression, its operator (and the operator's symbol,
/// as messages name it), its operands and their types.
struct Binary<'e> {
    e: &'e Expr,
    op: BinOp,
    sym: &'static str,
    a: &'e Expr,
    b: &'e Expr,
    ta: Type,
    tb: Type,
}

/// A call being matched against its parameters: what [`Checker::match_call`] was given.
struct CallSite<'c> {
    params: &'c [ParamInfo],
    vars: &'c [DeclId],
    args: &'c [Arg],
    span: Span,
    name: &'c str,
    ctk_dirless: bool,
    is_ctor: bool,
}
