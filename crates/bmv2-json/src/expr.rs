//! BMv2 expressions (`"type": "expression"` and the other type-value objects) → IR expressions.
//!
//! BMv2 evaluates integers with arbitrary precision (`Data` is a GMP integer; JSON_format.md,
//! "General information"): `a + b` of two 8-bit fields may be 256, `a - b` may be negative, and
//! only a store into a field truncates. p4c therefore masks every arithmetic result it wants
//! truncated (`(a + b) & 0xff`, `two_comp_mod` for signed types). The IR computes on fixed
//! widths, so each operation here gets a width at which it is exact:
//!
//! - with a *demand* of `w` bits (the value is stored into a `w`-bit field, or masked by a
//!   constant of `w` bits, or used by an operation whose low `w` bits depend only on its
//!   operands' low `w` bits: `+ - * << & | ^ ~`), the operation is computed modulo `2^w`;
//! - otherwise (comparisons, `>>`, `/`, `%`, conditions, indices) at a width that holds the
//!   exact result (`a + b`: one bit more than the wider operand; a subtraction, or anything
//!   signed, as a signed type), up to [`MAX_EXACT`] bits.
//!
//! A register in an expression (`"type": "register"`) and a `lookahead` are read into a
//! temporary by a statement before the expression.

use crate::json::{Result, J};
use crate::Builder;
use num_bigint::{BigInt, Sign};
use num_traits::{Signed, ToPrimitive, Zero};
use p4_ir::*;

/// The widest intermediate value computed exactly (bits).
pub const MAX_EXACT: u32 = 4096;

/// A BMv2 value.
#[derive(Clone, Debug)]
pub enum Val {
    /// An integer: the expression's value read in its type (exact, or modulo `2^w` when a
    /// demand of `w` bits was given).
    Int(Expr),
    Bool(Expr),
    Hdr(HRef),
    /// A header stack or header union stack (index into the layouts' stacks).
    Stack(usize),
    Union(URef),
}

/// A header: where (possibly indexed at run time) and of what type.
#[derive(Clone, Debug)]
pub struct HRef {
    pub loc: Loc,
    pub ty: usize,
    pub metadata: bool,
    /// The instance, when known statically (for union siblings).
    pub inst: Option<usize>,
}

/// A header union: where its first member starts, and its type.
#[derive(Clone, Debug)]
pub struct URef {
    pub loc: Loc,
    pub ty: usize,
}

/// Where a value can be stored.
#[derive(Clone, Debug)]
pub enum Place {
    Scalar(Loc, Ty),
    /// A variable-length field: its length word, then `max` bits of value.
    Varbit(Loc, u32),
}

/// The context of an expression: the runtime data of the action it is in.
#[derive(Clone, Debug, Default)]
pub struct Cx {
    pub params: Vec<ActionParam>,
}

/// The number of bits needed for a non-negative integer (at least 1).
pub fn bitlen(v: &BigInt) -> u32 {
    (v.bits() as u32).max(1)
}

/// An IR constant of type `ty` holding `v` modulo `2^width` (two's complement).
pub fn constant(v: &BigInt, ty: Ty) -> Expr {
    let b = ops::from_bigint(v, ty.width);
    Expr::constant(&Val_::from_big(b), ty)
}

use p4_ir::Val as Val_;

/// `e` converted to `to` (truncation, zero or sign extension by `e`'s own signedness).
pub fn cast(e: Expr, to: Ty) -> Expr {
    let from = e.ty();
    if from == to {
        return e;
    }
    if let Some(c) = e.as_const() {
        let v = ops::to_bigint(&c.to_big(), from);
        return constant(&v, to);
    }
    Expr::Cast(to, from, Box::new(e))
}

/// The type in which two values compare or combine exactly.
pub fn common(a: Ty, b: Ty) -> Ty {
    if !a.signed && !b.signed {
        Ty::bits(a.width.max(b.width))
    } else {
        let sw = |t: Ty| t.width + u32::from(!t.signed);
        Ty::int(sw(a).max(sw(b)))
    }
}

/// The value of an integer constant expression, if it is one.
fn const_int(e: &Expr) -> Option<BigInt> {
    let c = e.as_const()?;
    Some(ops::to_bigint(&c.to_big(), e.ty()))
}

impl<'a> Builder<'a> {
    /// A type-value object as a value; `demand` as described in the module docs.
    pub(crate) fn val(
        &mut self,
        j: &J<'a>,
        cx: &Cx,
        pre: &mut Vec<Stmt>,
        demand: Option<u32>,
    ) -> Result<Val> {
        // An operation object (the value of an "expression") may appear directly.
        if j.v.get("op").is_some() && j.v.get("type").is_none() {
            return self.op(j, cx, pre, demand);
        }
        let ty = j.str_of("type")?;
        let v = j.get("value")?;
        match ty {
            "expression" => {
                if v.v.get("op").is_some() {
                    self.op(&v, cx, pre, demand)
                } else {
                    self.val(&v, cx, pre, demand)
                }
            }
            "hexstr" => {
                let x = v.hexstr()?;
                Ok(Val::Int(match demand {
                    Some(w) => constant(&x, Ty::bits(w)),
                    None => self.exact_const(&x, &v)?,
                }))
            }
            "bool" => Ok(Val::Bool(Expr::bool(v.bool()?))),
            "field" => self.field_val(&v),
            "local" | "runtime_data" => {
                let i = v.int()?;
                let p = usize::try_from(i)
                    .ok()
                    .and_then(|i| cx.params.get(i))
                    .ok_or_else(|| v.err(format!("no action parameter {i}")))?;
                Ok(Val::Int(Expr::Load(p.slot, p.ty)))
            }
            "header" => {
                let name = v.str()?;
                let i = self.inst_index(name, &v)?;
                Ok(Val::Hdr(self.inst_href(i)))
            }
            "header_stack" | "header_union_stack" => {
                let name = v.str()?;
                let s = self
                    .lay
                    .stack_by_name
                    .get(name)
                    .copied()
                    .ok_or_else(|| v.err(format!("unknown header stack {name}")))?;
                Ok(Val::Stack(s))
            }
            "header_union" => {
                let name = v.str()?;
                let u = self
                    .lay
                    .union_by_name
                    .get(name)
                    .copied()
                    .ok_or_else(|| v.err(format!("unknown header union {name}")))?;
                let un = &self.lay.unions[u];
                Ok(Val::Union(URef {
                    loc: Loc::at(un.loc),
                    ty: un.ty,
                }))
            }
            "stack_field" => {
                let (loc, t) = self.stack_field(&v)?;
                Ok(Val::Int(Expr::load(&loc, t)))
            }
            "union_stack_field" => {
                let (loc, t) = self.union_stack_field(&v)?;
                Ok(Val::Int(Expr::load(&loc, t)))
            }
            "register" => {
                let name = v.at(0)?.str()?;
                let Some(&(x, w)) = self.registers.get(name) else {
                    return Err(v.err(format!("unknown register array {name}")));
                };
                let idx = self.int(&v.at(1)?, cx, pre, None)?;
                let t = Ty::bits(w);
                let tmp = self.alloc_temp(t.words(), &v)?;
                pre.push(Stmt::Extern(Box::new(ExternCall {
                    op: XOp::RegisterRead,
                    inst: Some(x),
                    args: vec![XArg::Val(idx), XArg::Agg(Loc::at(tmp), Layout::Scalar(t))],
                    ret: None,
                    what: format!("register {name}"),
                })));
                Ok(Val::Int(Expr::Load(tmp, t)))
            }
            "lookahead" => {
                let (off, w) = (v.at(0)?.u32()?, v.at(1)?.u32()?);
                Ok(Val::Int(self.lookahead(off, w, &v, pre)?))
            }
            other => Err(j.unsupported(format!("values of type \"{other}\" here"))),
        }
    }

    /// An exact constant: unsigned when non-negative, else signed, as narrow as possible.
    fn exact_const(&self, x: &BigInt, at: &J<'a>) -> Result<Expr> {
        let w = if x.sign() == Sign::Minus {
            bitlen(&(-x - 1)) + 1
        } else {
            bitlen(x)
        };
        if w > MAX_EXACT {
            return Err(at.unsupported(format!("a constant of {w} bits")));
        }
        let t = Ty {
            width: w,
            signed: x.sign() == Sign::Minus,
        };
        Ok(constant(x, t))
    }

    /// `w` bits at `off` bits past the parser's cursor, read by a `Lookahead` statement.
    pub(crate) fn lookahead(
        &mut self,
        off: u32,
        w: u32,
        at: &J<'a>,
        pre: &mut Vec<Stmt>,
    ) -> Result<Expr> {
        if w == 0 || off.saturating_add(w) > MAX_EXACT {
            return Err(at.unsupported(format!("a lookahead of {w} bits at {off}")));
        }
        let t = Ty::bits(off + w);
        let tmp = self.alloc_temp(t.words(), at)?;
        pre.push(Stmt::Lookahead {
            dst: Loc::at(tmp),
            layout: Layout::Scalar(t),
        });
        let all = Expr::Load(tmp, t);
        Ok(if off == 0 {
            all
        } else {
            Expr::Slice(Box::new(all), t, w - 1, 0)
        })
    }

    /// An integer value: `demand` bits (then of type `bit<demand>`), or exact.
    pub(crate) fn int(
        &mut self,
        j: &J<'a>,
        cx: &Cx,
        pre: &mut Vec<Stmt>,
        demand: Option<u32>,
    ) -> Result<Expr> {
        let e = match self.val(j, cx, pre, demand)? {
            Val::Int(e) => e,
            // BMv2 wants d2b/b2d, but a boolean read as data is 0 or 1.
            Val::Bool(e) => e,
            _ => return Err(j.err("expected an integer value")),
        };
        Ok(match demand {
            Some(w) => cast(e, Ty::bits(w)),
            None => e,
        })
    }

    /// A boolean value.
    pub(crate) fn boolean(&mut self, j: &J<'a>, cx: &Cx, pre: &mut Vec<Stmt>) -> Result<Expr> {
        match self.val(j, cx, pre, None)? {
            Val::Bool(e) => Ok(e),
            Val::Int(e) => {
                let t = e.ty();
                Ok(Expr::Cmp(
                    CmpOp::Ne,
                    t,
                    Box::new(e),
                    Box::new(Expr::Const(0, t)),
                ))
            }
            _ => Err(j.err("expected a boolean value")),
        }
    }

    /// A header value.
    pub(crate) fn header(&mut self, j: &J<'a>, cx: &Cx, pre: &mut Vec<Stmt>) -> Result<HRef> {
        match self.val(j, cx, pre, None)? {
            Val::Hdr(h) => Ok(h),
            _ => Err(j.err("expected a header")),
        }
    }

    /// A header stack (or union stack) value.
    pub(crate) fn stack(&mut self, j: &J<'a>, cx: &Cx, pre: &mut Vec<Stmt>) -> Result<usize> {
        match self.val(j, cx, pre, None)? {
            Val::Stack(s) => Ok(s),
            _ => Err(j.err("expected a header stack")),
        }
    }

    /// A header union value.
    pub(crate) fn union(&mut self, j: &J<'a>, cx: &Cx, pre: &mut Vec<Stmt>) -> Result<URef> {
        match self.val(j, cx, pre, None)? {
            Val::Union(u) => Ok(u),
            _ => Err(j.err("expected a header union")),
        }
    }

    pub(crate) fn inst_index(&self, name: &str, at: &J<'a>) -> Result<usize> {
        self.lay
            .inst_by_name
            .get(name)
            .copied()
            .ok_or_else(|| at.err(format!("unknown header {name}")))
    }

    pub(crate) fn inst_href(&self, i: usize) -> HRef {
        let inst = &self.lay.insts[i];
        HRef {
            loc: Loc::at(inst.loc),
            ty: inst.ty,
            metadata: inst.metadata,
            inst: Some(i),
        }
    }

    /// A `["header", "field"]` reference as a value (`$valid$` is the validity bit).
    fn field_val(&mut self, v: &J<'a>) -> Result<Val> {
        let h = v.at(0)?.str()?;
        let f = v.at(1)?.str()?;
        let i = self.inst_index(h, v)?;
        let inst = &self.lay.insts[i];
        if f == "$valid$" {
            return Ok(Val::Int(if inst.metadata {
                Expr::Const(1, Ty::bits(1))
            } else {
                Expr::Load(inst.loc, Ty::bits(1))
            }));
        }
        match self.field_in(&self.inst_href(i), f, v)? {
            Place::Scalar(l, t) => Ok(Val::Int(Expr::load(&l, t))),
            // BMv2 reads a variable-length field as the integer its bits spell (its `Data`),
            // whatever its length: the value words after the length word.
            Place::Varbit(l, max) => Ok(Val::Int(Expr::load(&l.plus(1), Ty::bits(max)))),
        }
    }

    /// The place of field `f` of a header.
    pub(crate) fn field_in(&self, h: &HRef, f: &str, at: &J<'a>) -> Result<Place> {
        let t = &self.lay.types[h.ty];
        let Some(fl) = t.fields.iter().find(|x| x.name == f) else {
            return Err(at.err(format!("header type {} has no field {f}", t.name)));
        };
        Ok(match fl.varbit {
            Some(m) => Place::Varbit(h.loc.plus(fl.off), m),
            None => Place::Scalar(h.loc.plus(fl.off), fl.ty),
        })
    }

    /// The place of field number `k` of a header.
    fn field_at(&self, h: &HRef, k: i64, at: &J<'a>) -> Result<Place> {
        let t = &self.lay.types[h.ty];
        let Some(fl) = usize::try_from(k).ok().and_then(|k| t.fields.get(k)) else {
            return Err(at.err(format!("header type {} has no field number {k}", t.name)));
        };
        let name = fl.name.clone();
        self.field_in(h, &name, at)
    }

    /// Element `idx` of a stack as a header (a header stack) or union (a union stack).
    fn stack_elem(&self, s: usize, idx: Expr) -> Result<Val> {
        let st = &self.lay.stacks[s];
        let loc = match const_int(&idx).and_then(|v| v.to_u32()) {
            Some(k) if k < st.size => Loc::at(st.loc + 1 + k * st.elem_words),
            _ => Loc {
                off: st.loc + 1,
                dyn_idx: vec![DynIndex {
                    index: idx,
                    stride: st.elem_words,
                    count: st.size,
                }],
            },
        };
        Ok(match (st.hty, st.uty) {
            (Some(ty), _) => {
                let inst = loc
                    .fixed()
                    .and_then(|_| const_int(&loc_index(&loc, st)).and_then(|k| k.to_usize()))
                    .and_then(|k| st.members.get(k).copied());
                Val::Hdr(HRef {
                    loc,
                    ty,
                    metadata: false,
                    inst,
                })
            }
            (None, Some(uty)) => Val::Union(URef { loc, ty: uty }),
            _ => Val::Stack(s),
        })
    }

    /// The location of the stack's last extracted element (`nextIndex - 1`), as BMv2's
    /// `stack_field` reads it.
    fn last_index(&self, s: usize) -> Expr {
        let st = &self.lay.stacks[s];
        Expr::Bin(
            BinOp::Sub,
            Ty::bits(32),
            Box::new(Expr::Load(st.loc, Ty::bits(32))),
            Box::new(Expr::Const(1, Ty::bits(32))),
        )
    }

    /// `["stack", "field"]`: the field of the stack's last extracted element.
    pub(crate) fn stack_field(&mut self, v: &J<'a>) -> Result<(Loc, Ty)> {
        let sn = v.at(0)?.str()?;
        let f = v.at(1)?.str()?;
        let s = self
            .lay
            .stack_by_name
            .get(sn)
            .copied()
            .ok_or_else(|| v.err(format!("unknown header stack {sn}")))?;
        let idx = self.last_index(s);
        let Val::Hdr(h) = self.stack_elem(s, idx)? else {
            return Err(v.err(format!("{sn} is not a header stack")));
        };
        match self.field_in(&h, f, v)? {
            Place::Scalar(l, t) => Ok((l, t)),
            Place::Varbit(..) => Err(v.unsupported("a variable-length stack field as a value")),
        }
    }

    /// `["union_stack", "member", "field"]`: a field of a member of the last element.
    pub(crate) fn union_stack_field(&mut self, v: &J<'a>) -> Result<(Loc, Ty)> {
        let sn = v.at(0)?.str()?;
        let m = v.at(1)?.str()?;
        let f = v.at(2)?.str()?;
        let s = self
            .lay
            .stack_by_name
            .get(sn)
            .copied()
            .ok_or_else(|| v.err(format!("unknown header union stack {sn}")))?;
        let idx = self.last_index(s);
        let Val::Union(u) = self.stack_elem(s, idx)? else {
            return Err(v.err(format!("{sn} is not a header union stack")));
        };
        let h = self.union_member_named(&u, m, v)?;
        match self.field_in(&h, f, v)? {
            Place::Scalar(l, t) => Ok((l, t)),
            Place::Varbit(..) => Err(v.unsupported("a variable-length union field as a value")),
        }
    }

    fn union_member_at(&self, u: &URef, k: usize, at: &J<'a>) -> Result<HRef> {
        let ut = &self.lay.union_types[u.ty];
        let Some((_, ty)) = ut.members.get(k) else {
            return Err(at.err(format!("union type {} has no member number {k}", ut.name)));
        };
        let off: u32 = ut.members[..k]
            .iter()
            .map(|(_, t)| self.lay.types[*t].words)
            .sum();
        Ok(HRef {
            loc: u.loc.plus(off),
            ty: *ty,
            metadata: false,
            inst: None,
        })
    }

    fn union_member_named(&self, u: &URef, m: &str, at: &J<'a>) -> Result<HRef> {
        let ut = &self.lay.union_types[u.ty];
        let Some(k) = ut.members.iter().position(|(n, _)| n == m) else {
            return Err(at.err(format!("union type {} has no member {m}", ut.name)));
        };
        self.union_member_at(u, k, at)
    }

    /// The validity words of a union's members.
    pub(crate) fn union_valid_words(&self, u: &URef, at: &J<'a>) -> Result<Vec<Loc>> {
        let n = self.lay.union_types[u.ty].members.len();
        (0..n)
            .map(|k| self.union_member_at(u, k, at).map(|h| h.loc))
            .collect()
    }

    /// The validity of a header as a boolean.
    pub(crate) fn valid_of(&self, h: &HRef) -> Expr {
        if h.metadata {
            Expr::bool(true)
        } else {
            Expr::load(&h.loc, Ty::BOOL)
        }
    }

    /// A place to store into: `field`, `stack_field`, or an `access_field` expression.
    pub(crate) fn place(&mut self, j: &J<'a>, cx: &Cx, pre: &mut Vec<Stmt>) -> Result<Place> {
        if j.v.get("op").is_some() && j.v.get("type").is_none() {
            return self.op_place(j, cx, pre);
        }
        let ty = j.str_of("type")?;
        let v = j.get("value")?;
        match ty {
            "field" => {
                let h = v.at(0)?.str()?;
                let f = v.at(1)?.str()?;
                if f == "$valid$" {
                    return Err(v.err("$valid$ is read-only"));
                }
                let i = self.inst_index(h, &v)?;
                let hr = self.inst_href(i);
                self.field_in(&hr, f, &v)
            }
            "stack_field" => {
                let (l, t) = self.stack_field(&v)?;
                Ok(Place::Scalar(l, t))
            }
            "expression" => {
                if v.v.get("op").is_some() {
                    self.op_place(&v, cx, pre)
                } else {
                    self.place(&v, cx, pre)
                }
            }
            other => Err(j.err(format!("a {other} value cannot be assigned to"))),
        }
    }

    fn op_place(&mut self, j: &J<'a>, cx: &Cx, pre: &mut Vec<Stmt>) -> Result<Place> {
        let op = j.str_of("op")?;
        match op {
            "access_field" => {
                let h = self.header(&j.get("left")?, cx, pre)?;
                let k = j.get("right")?.int()?;
                self.field_at(&h, k, j)
            }
            _ => Err(j.err(format!("the result of \"{op}\" cannot be assigned to"))),
        }
    }

    /// An operation object `{op, left, right[, cond]}`.
    fn op(&mut self, j: &J<'a>, cx: &Cx, pre: &mut Vec<Stmt>, demand: Option<u32>) -> Result<Val> {
        let op = j.str_of("op")?;
        let left = j.opt("left");
        let right = j.get("right")?;
        self.operation(op, left, right, j, cx, pre, demand)
    }

    /// Operation `op` on `left` (absent for unary operations) and `right`; `j` is the
    /// operation object (for `cond` and messages). JSON_format.md, "expressions", lists the
    /// operations; each family has its helper below.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn operation(
        &mut self,
        op: &str,
        left: Option<J<'a>>,
        right: J<'a>,
        j: &J<'a>,
        cx: &Cx,
        pre: &mut Vec<Stmt>,
        demand: Option<u32>,
    ) -> Result<Val> {
        let o = Operands {
            op,
            left,
            right,
            j,
            demand,
        };
        match op {
            "+" | "-" | "*" => self.op_add_sub_mul(&o, cx, pre),
            "/" | "%" => self.op_div_mod(&o, cx, pre),
            "<<" | ">>" => self.op_shift(&o, cx, pre),
            "&" | "|" | "^" | "~" => self.op_bitwise(&o, cx, pre),
            "==" | "!=" | "<" | "<=" | ">" | ">=" => self.op_compare(&o, cx, pre),
            "and" | "or" | "not" | "d2b" | "b2d" => self.op_logic(&o, cx, pre),
            "two_comp_mod" | "sat_cast" | "usat_cast" => self.op_width_cast(&o, cx, pre),
            "?" => self.op_conditional(&o, cx, pre),
            "valid" | "valid_union" => self.op_valid(&o, cx, pre),
            "dereference_header_stack"
            | "dereference_union_stack"
            | "access_field"
            | "access_union_header"
            | "last_stack_index"
            | "size_stack" => self.op_member(&o, cx, pre),
            other => Err(j.unsupported(format!("the expression operation \"{other}\""))),
        }
    }

    /// `+`, `-`, `*` (a unary `+`/`-` has no left operand: BMv2 reads it as 0).
    fn op_add_sub_mul(
        &mut self,
        o: &Operands<'_, 'a>,
        cx: &Cx,
        pre: &mut Vec<Stmt>,
    ) -> Result<Val> {
        let bop = match o.op {
            "+" => BinOp::Add,
            "-" => BinOp::Sub,
            _ => BinOp::Mul,
        };
        // BMv2: a unary + or - has a left operand of 0.
        let zero = |w: Option<u32>| match w {
            Some(w) => Expr::Const(0, Ty::bits(w)),
            None => Expr::Const(0, Ty::bits(1)),
        };
        if let Some(w) = o.demand {
            let a = match &o.left {
                Some(l) => self.int(l, cx, pre, Some(w))?,
                None => zero(Some(w)),
            };
            let b = self.int(&o.right, cx, pre, Some(w))?;
            return Ok(Val::Int(bin(bop, Ty::bits(w), a, b)));
        }
        let a = match &o.left {
            Some(l) => self.int(l, cx, pre, None)?,
            None => zero(None),
        };
        let b = self.int(&o.right, cx, pre, None)?;
        let (ta, tb) = (a.ty(), b.ty());
        let c = common(ta, tb);
        // Widths in the common signedness.
        let sw = |t: Ty| t.width + u32::from(c.signed && !t.signed);
        let t = match bop {
            BinOp::Add => Ty {
                width: c.width + 1,
                signed: c.signed,
            },
            // A difference may be negative: signed, one bit wider than both operands
            // read as signed values.
            BinOp::Sub => Ty::int(c.width + u32::from(!c.signed) + 1),
            _ => Ty {
                width: sw(ta) + sw(tb),
                signed: c.signed,
            },
        };
        self.check_width(t, o.j)?;
        Ok(Val::Int(bin(bop, t, cast(a, t), cast(b, t))))
    }

    /// `/` and `%`, at the operands' common type.
    fn op_div_mod(&mut self, o: &Operands<'_, 'a>, cx: &Cx, pre: &mut Vec<Stmt>) -> Result<Val> {
        let l = o.left()?;
        let a = self.int(&l, cx, pre, None)?;
        let b = self.int(&o.right, cx, pre, None)?;
        let t = common(a.ty(), b.ty());
        let bop = if o.op == "/" { BinOp::Div } else { BinOp::Mod };
        Ok(fit(Val::Int(bin(bop, t, cast(a, t), cast(b, t))), o.demand))
    }

    /// `<<` (exact: as wide as the shifted bits can reach) and `>>`.
    fn op_shift(&mut self, o: &Operands<'_, 'a>, cx: &Cx, pre: &mut Vec<Stmt>) -> Result<Val> {
        let l = o.left()?;
        if o.op == ">>" {
            let a = self.int(&l, cx, pre, None)?;
            let s = self.int(&o.right, cx, pre, None)?;
            let s = self.shift_amount(s, &o.right)?;
            let t = a.ty();
            return Ok(fit(Val::Int(bin(BinOp::Shr, t, a, s)), o.demand));
        }
        let s = self.int(&o.right, cx, pre, None)?;
        let s = self.shift_amount(s, &o.right)?;
        if let Some(w) = o.demand {
            let a = self.int(&l, cx, pre, Some(w))?;
            return Ok(Val::Int(bin(BinOp::Shl, Ty::bits(w), a, s)));
        }
        let a = self.int(&l, cx, pre, None)?;
        let ta = a.ty();
        let extra = match const_int(&s).and_then(|v| v.to_u32()) {
            Some(k) => k,
            None => {
                let sw = s.ty().width;
                if sw >= 12 {
                    MAX_EXACT
                } else {
                    (1u32 << sw) - 1
                }
            }
        };
        let t = Ty {
            width: ta.width.saturating_add(extra),
            signed: ta.signed,
        };
        self.check_width(t, o.j)?;
        Ok(Val::Int(bin(BinOp::Shl, t, cast(a, t), s)))
    }

    /// `&`, `|`, `^` and the unary `~`; `x & mask` with a non-negative constant mask is exact
    /// at the mask's width.
    fn op_bitwise(&mut self, o: &Operands<'_, 'a>, cx: &Cx, pre: &mut Vec<Stmt>) -> Result<Val> {
        let bop = match o.op {
            "&" => BinOp::And,
            "|" => BinOp::Or,
            "^" => BinOp::Xor,
            _ => return self.op_bitnot(o, cx, pre),
        };
        let (l, right) = (o.left()?, &o.right);
        // `x & 0xff` (a non-negative constant): only the mask's bits of x matter, and the
        // result is exact at the mask's width.
        if bop == BinOp::And {
            let mask_of = |x: &J<'a>| -> Option<BigInt> {
                if x.v.get("type")?.as_str()? != "hexstr" {
                    return None;
                }
                let m = x.get("value").ok()?.hexstr().ok()?;
                (m.sign() != Sign::Minus).then_some(m)
            };
            let (m, other) = match (mask_of(right), mask_of(&l)) {
                (Some(m), _) => (Some(m), l.clone()),
                (None, Some(m)) => (Some(m), right.clone()),
                _ => (None, l.clone()),
            };
            if let Some(m) = m {
                let mw = bitlen(&m);
                let w = o.demand.map_or(mw, |d| d.min(mw));
                self.check_width(Ty::bits(w), o.j)?;
                let x = self.int(&other, cx, pre, Some(w))?;
                let t = Ty::bits(w);
                return Ok(Val::Int(bin(BinOp::And, t, x, constant(&m, t))));
            }
        }
        if let Some(w) = o.demand {
            let a = self.int(&l, cx, pre, Some(w))?;
            let b = self.int(right, cx, pre, Some(w))?;
            return Ok(Val::Int(bin(bop, Ty::bits(w), a, b)));
        }
        let a = self.int(&l, cx, pre, None)?;
        let b = self.int(right, cx, pre, None)?;
        let t = common(a.ty(), b.ty());
        Ok(Val::Int(bin(bop, t, cast(a, t), cast(b, t))))
    }

    /// The unary `~`.
    fn op_bitnot(&mut self, o: &Operands<'_, 'a>, cx: &Cx, pre: &mut Vec<Stmt>) -> Result<Val> {
        if let Some(w) = o.demand {
            let a = self.int(&o.right, cx, pre, Some(w))?;
            return Ok(Val::Int(Expr::Un(UnOp::BitNot, Ty::bits(w), Box::new(a))));
        }
        let a = self.int(&o.right, cx, pre, None)?;
        let ta = a.ty();
        // ~x is -x-1: signed, one bit wider than an unsigned x.
        let t = if ta.signed { ta } else { Ty::int(ta.width + 1) };
        Ok(Val::Int(Expr::Un(UnOp::BitNot, t, Box::new(cast(a, t)))))
    }

    /// The comparisons; `==`/`!=` also of headers (BMv2's header equality).
    fn op_compare(&mut self, o: &Operands<'_, 'a>, cx: &Cx, pre: &mut Vec<Stmt>) -> Result<Val> {
        let cop = match o.op {
            "==" => CmpOp::Eq,
            "!=" => CmpOp::Ne,
            "<" => CmpOp::Lt,
            "<=" => CmpOp::Le,
            ">" => CmpOp::Gt,
            _ => CmpOp::Ge,
        };
        let l = o.left()?;
        let a = self.val(&l, cx, pre, None)?;
        let b = self.val(&o.right, cx, pre, None)?;
        let e = match (a, b) {
            (Val::Bool(x), Val::Bool(y)) => Expr::Cmp(cop, Ty::BOOL, Box::new(x), Box::new(y)),
            (Val::Int(x) | Val::Bool(x), Val::Int(y) | Val::Bool(y)) => {
                let t = common(x.ty(), y.ty());
                Expr::Cmp(cop, t, Box::new(cast(x, t)), Box::new(cast(y, t)))
            }
            (Val::Hdr(x), Val::Hdr(y)) if matches!(cop, CmpOp::Eq | CmpOp::Ne) => {
                let eq = self.headers_equal(&x, &y, o.j)?;
                if cop == CmpOp::Eq {
                    eq
                } else {
                    Expr::Un(UnOp::Not, Ty::BOOL, Box::new(eq))
                }
            }
            _ => return Err(o.j.unsupported(format!("\"{}\" on these operands", o.op))),
        };
        Ok(fit(Val::Bool(e), o.demand))
    }

    /// `and`, `or`, `not` and the conversions `d2b` (integer to boolean) and `b2d`.
    fn op_logic(&mut self, o: &Operands<'_, 'a>, cx: &Cx, pre: &mut Vec<Stmt>) -> Result<Val> {
        match o.op {
            "and" | "or" => {
                let l = o.left()?;
                let a = self.boolean(&l, cx, pre)?;
                let b = self.boolean(&o.right, cx, pre)?;
                let e = if o.op == "and" {
                    Expr::And(Box::new(a), Box::new(b))
                } else {
                    Expr::Or(Box::new(a), Box::new(b))
                };
                Ok(fit(Val::Bool(e), o.demand))
            }
            "not" => {
                let a = self.boolean(&o.right, cx, pre)?;
                let e = Expr::Un(UnOp::Not, Ty::BOOL, Box::new(a));
                Ok(fit(Val::Bool(e), o.demand))
            }
            "d2b" => {
                let a = self.int(&o.right, cx, pre, None)?;
                let t = a.ty();
                let zero = Expr::Const(0, t);
                Ok(Val::Bool(Expr::Cmp(
                    CmpOp::Ne,
                    t,
                    Box::new(a),
                    Box::new(zero),
                )))
            }
            _ => {
                let a = self.boolean(&o.right, cx, pre)?;
                Ok(fit(Val::Int(a), o.demand))
            }
        }
    }

    /// `two_comp_mod` (wrap into `int<w>`) and the saturating casts `sat_cast` (`int<w>`) and
    /// `usat_cast` (`bit<w>`), `w` a constant.
    fn op_width_cast(&mut self, o: &Operands<'_, 'a>, cx: &Cx, pre: &mut Vec<Stmt>) -> Result<Val> {
        let l = o.left()?;
        let w = self.const_width(&o.right, cx, pre)?;
        if o.op == "two_comp_mod" {
            let a = self.int(&l, cx, pre, Some(w))?;
            return Ok(fit(Val::Int(cast_same(a, Ty::int(w))), o.demand));
        }
        let a = self.int(&l, cx, pre, None)?;
        let (lo, hi, to) = if o.op == "sat_cast" {
            let h = (BigInt::from(1) << (w - 1)) - 1;
            (-(&h) - 1, h, Ty::int(w))
        } else {
            (BigInt::zero(), (BigInt::from(1) << w) - 1, Ty::bits(w))
        };
        let t = common(common(a.ty(), to), Ty::int(w + 1));
        let x = cast(a, t);
        let clamp_hi = Expr::Cmp(
            CmpOp::Gt,
            t,
            Box::new(x.clone()),
            Box::new(constant(&hi, t)),
        );
        let clamp_lo = Expr::Cmp(
            CmpOp::Lt,
            t,
            Box::new(x.clone()),
            Box::new(constant(&lo, t)),
        );
        let e = Expr::Mux(
            Box::new(clamp_hi),
            Box::new(constant(&hi, t)),
            Box::new(Expr::Mux(
                Box::new(clamp_lo),
                Box::new(constant(&lo, t)),
                Box::new(x),
                t,
            )),
            t,
        );
        Ok(fit(Val::Int(cast(e, to)), o.demand))
    }

    /// `?`: `cond ? left : right` of integers or booleans.
    fn op_conditional(
        &mut self,
        o: &Operands<'_, 'a>,
        cx: &Cx,
        pre: &mut Vec<Stmt>,
    ) -> Result<Val> {
        let c = self.boolean(&o.j.get("cond")?, cx, pre)?;
        let l = o.left()?;
        // Both branches' side statements run before the choice; they only read.
        let a = self.val(&l, cx, pre, o.demand)?;
        let b = self.val(&o.right, cx, pre, o.demand)?;
        match (a, b) {
            (Val::Bool(x), Val::Bool(y)) => Ok(Val::Bool(Expr::Mux(
                Box::new(c),
                Box::new(x),
                Box::new(y),
                Ty::BOOL,
            ))),
            (Val::Int(x) | Val::Bool(x), Val::Int(y) | Val::Bool(y)) => {
                let t = match o.demand {
                    Some(w) => Ty::bits(w),
                    None => common(x.ty(), y.ty()),
                };
                Ok(Val::Int(Expr::Mux(
                    Box::new(c),
                    Box::new(cast(x, t)),
                    Box::new(cast(y, t)),
                    t,
                )))
            }
            _ => Err(o.j.unsupported("a conditional choosing between headers")),
        }
    }

    /// `valid` of a header and `valid_union` (any member of a union valid).
    fn op_valid(&mut self, o: &Operands<'_, 'a>, cx: &Cx, pre: &mut Vec<Stmt>) -> Result<Val> {
        if o.op == "valid" {
            let h = self.header(&o.right, cx, pre)?;
            return Ok(fit(Val::Bool(self.valid_of(&h)), o.demand));
        }
        let u = self.union(&o.right, cx, pre)?;
        let ws = self.union_valid_words(&u, o.j)?;
        let mut e = Expr::bool(false);
        for w in ws {
            let v = Expr::load(&w, Ty::BOOL);
            e = if matches!(e, Expr::Const(0, _)) {
                v
            } else {
                Expr::Or(Box::new(e), Box::new(v))
            };
        }
        Ok(fit(Val::Bool(e), o.demand))
    }

    /// Members of headers, unions and stacks: `dereference_header_stack`/
    /// `dereference_union_stack`, `access_field`, `access_union_header`, `last_stack_index`,
    /// `size_stack`.
    fn op_member(&mut self, o: &Operands<'_, 'a>, cx: &Cx, pre: &mut Vec<Stmt>) -> Result<Val> {
        let right = &o.right;
        match o.op {
            "last_stack_index" => {
                let s = self.stack(right, cx, pre)?;
                Ok(fit(Val::Int(self.last_index(s)), o.demand))
            }
            "size_stack" => {
                let s = self.stack(right, cx, pre)?;
                let st = &self.lay.stacks[s];
                Ok(fit(Val::Int(Expr::Load(st.loc, Ty::bits(32))), o.demand))
            }
            "access_field" => {
                let h = self.header(&o.left()?, cx, pre)?;
                let k = right.int()?;
                match self.field_at(&h, k, o.j)? {
                    Place::Scalar(loc, t) => Ok(fit(Val::Int(Expr::load(&loc, t)), o.demand)),
                    Place::Varbit(..) => {
                        Err(o.j.unsupported("a variable-length field in an expression"))
                    }
                }
            }
            "access_union_header" => {
                let u = self.union(&o.left()?, cx, pre)?;
                let k = right.int()?;
                let k = usize::try_from(k).map_err(|_| right.err("a negative member number"))?;
                Ok(Val::Hdr(self.union_member_at(&u, k, o.j)?))
            }
            _ => {
                let s = self.stack(&o.left()?, cx, pre)?;
                let idx = self.index(right, cx, pre)?;
                self.stack_elem(s, idx)
            }
        }
    }

    /// A run-time index (an unsigned value).
    fn index(&mut self, j: &J<'a>, cx: &Cx, pre: &mut Vec<Stmt>) -> Result<Expr> {
        let e = self.int(j, cx, pre, None)?;
        let t = e.ty();
        Ok(if t.signed {
            // A negative index is out of bounds, like a huge one.
            cast(e, Ty::bits(64))
        } else {
            e
        })
    }

    /// A shift amount: non-negative.
    fn shift_amount(&self, s: Expr, at: &J<'a>) -> Result<Expr> {
        if !s.ty().signed {
            return Ok(s);
        }
        match const_int(&s) {
            Some(v) if !v.is_negative() => Ok(cast(s.clone(), Ty::bits(s.ty().width))),
            Some(_) => Err(at.unsupported("a shift by a negative amount")),
            None => Err(at.unsupported("a shift by a signed run-time amount")),
        }
    }

    /// The constant width operand of `two_comp_mod` and the saturating casts.
    fn const_width(&mut self, j: &J<'a>, cx: &Cx, pre: &mut Vec<Stmt>) -> Result<u32> {
        let e = self.int(j, cx, pre, None)?;
        match const_int(&e).and_then(|v| v.to_u32()) {
            Some(w) if (1..=MAX_EXACT).contains(&w) => Ok(w),
            _ => Err(j.unsupported("a width that is not a constant between 1 and 4096")),
        }
    }

    fn check_width(&self, t: Ty, at: &J<'a>) -> Result<()> {
        if t.width > MAX_EXACT {
            return Err(at.unsupported(format!(
                "an intermediate value of {} bits (not truncated by a mask or a store)",
                t.width
            )));
        }
        Ok(())
    }

    /// BMv2's header equality: both invalid, or both valid with equal fields.
    fn headers_equal(&self, x: &HRef, y: &HRef, at: &J<'a>) -> Result<Expr> {
        if x.ty != y.ty {
            return Err(at.err("comparing headers of different types"));
        }
        let (vx, vy) = (self.valid_of(x), self.valid_of(y));
        let mut fields = Expr::bool(true);
        for f in &self.lay.types[x.ty].fields {
            if f.varbit.is_some() {
                return Err(at.unsupported("comparing headers with variable-length fields"));
            }
            let eq = Expr::Cmp(
                CmpOp::Eq,
                f.ty,
                Box::new(Expr::load(&x.loc.plus(f.off), f.ty)),
                Box::new(Expr::load(&y.loc.plus(f.off), f.ty)),
            );
            fields = Expr::And(Box::new(fields), Box::new(eq));
        }
        let both_invalid = Expr::And(
            Box::new(Expr::Un(UnOp::Not, Ty::BOOL, Box::new(vx.clone()))),
            Box::new(Expr::Un(UnOp::Not, Ty::BOOL, Box::new(vy.clone()))),
        );
        let both_valid = Expr::And(Box::new(vx), Box::new(vy));
        Ok(Expr::Or(
            Box::new(both_invalid),
            Box::new(Expr::And(Box::new(both_valid), Box::new(fields))),
        ))
    }
}

/// The operands of one operation object: `op`, `left` (absent for unary operations), `right`,
/// the object itself (`j`: its `cond`, and where errors point) and the demanded width.
struct Operands<'o, 'a> {
    op: &'o str,
    left: Option<J<'a>>,
    right: J<'a>,
    j: &'o J<'a>,
    demand: Option<u32>,
}

impl<'a> Operands<'_, 'a> {
    /// The left operand, or an error naming the operation that needs one.
    fn left(&self) -> Result<J<'a>> {
        self.left
            .clone()
            .ok_or_else(|| self.j.err(format!("\"{}\" needs a left operand", self.op)))
    }
}

/// The index a fixed stack location stands for.
fn loc_index(loc: &Loc, st: &crate::layout::Stack) -> Expr {
    let k = (loc.off - st.loc - 1) / st.elem_words.max(1);
    Expr::Const(u64::from(k), Ty::bits(32))
}

/// A binary operation, folded when both operands are constants of at most 64 bits.
fn bin(op: BinOp, t: Ty, a: Expr, b: Expr) -> Expr {
    if let (Expr::Const(x, _), Expr::Const(y, _)) = (&a, &b) {
        if !t.is_wide() && !matches!(op, BinOp::Div | BinOp::Mod) {
            return Expr::Const(ops::bin(op, t, *x, *y), t);
        }
    }
    Expr::Bin(op, t, Box::new(a), Box::new(b))
}

/// The same bits read as another type of the same width.
fn cast_same(e: Expr, to: Ty) -> Expr {
    let from = e.ty();
    if from == to {
        return e;
    }
    Expr::Cast(to, from, Box::new(e))
}

/// A value truncated to a demand, when there is one.
fn fit(v: Val, demand: Option<u32>) -> Val {
    match (v, demand) {
        (Val::Int(e), Some(w)) => Val::Int(cast(e, Ty::bits(w))),
        (Val::Bool(e), Some(w)) if w != 1 => Val::Int(cast(e, Ty::bits(w))),
        (v, _) => v,
    }
}
