//! Actions and their primitives → IR functions and statements.
//!
//! An action's `primitives` run in order, except that p4c writes an `if` inside an action as
//! `_jump_if_zero(cond, else)` … `_jump(end)` … (JSON_format.md, "actions"), and a `for` loop
//! as a `_jump_if_zero` that a `_jump` at the loop's end goes back to; [`Builder::structure`]
//! turns such jumps back into `If` and `Loop` statements and refuses jumps that do not nest
//! that way.
//! Each primitive does what BMv2's implementation of it does (`src/bm_sim/core/primitives.cpp`
//! and `targets/simple_switch/primitives.cpp`); where that differs from the P4 lowering, the
//! primitive's comment says how.

use crate::expr::{cast, Cx, HRef, Place, Val};
use crate::json::{Result, J};
use crate::{ActionInfo, Builder};
use p4_ir::*;

/// Where `break` and `continue` jump in the loop being structured: the primitive after the
/// loop, and the first primitive of its update.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LoopJumps {
    brk: usize,
    cont: usize,
}

/// Most primitives of one action (bounds the structuring's work).
const MAX_PRIMITIVES: usize = 100_000;

impl<'a> Builder<'a> {
    /// `actions`: one function per action; its runtime data in parameter slots.
    pub(crate) fn actions_all(&mut self, root: &J<'a>) -> Result<()> {
        for a in root.list("actions")? {
            let name = a.str_of("name")?.to_string();
            let id = a.int_of("id")?;
            let mut params = Vec::new();
            for rd in a.list("runtime_data")? {
                let pname = rd.str_of("name")?.to_string();
                let w = rd.get("bitwidth")?.u32()?;
                if w == 0 || w > 65_536 {
                    return Err(rd.unsupported(format!("an action parameter of {w} bits")));
                }
                let ty = Ty::bits(w);
                let slot = self.alloc_temp(ty.words(), &rd)?;
                params.push(ActionParam {
                    name: pname,
                    ty,
                    slot,
                    is_ref: false,
                });
            }
            let cx = Cx {
                params: params.clone(),
            };
            let prims = a.list("primitives")?;
            if prims.len() > MAX_PRIMITIVES {
                return Err(a.unsupported(format!("an action of {} primitives", prims.len())));
            }
            let mut body = Vec::new();
            self.structure(&prims, 0, prims.len(), &cx, None, &mut body)?;
            let func = self.add_fn(name.clone(), FnKind::Action, body);
            // The control plane supplies every runtime parameter.
            self.p.functions[func as usize].params = params
                .iter()
                .map(|p| CpParam {
                    name: p.name.clone(),
                    directionless: true,
                    ty: CpType::Bit(p.ty.width),
                    annotations: Vec::new(),
                })
                .collect();
            if self
                .actions
                .insert(id, ActionInfo { name, func, params })
                .is_some()
            {
                return Err(a.err(format!("two actions have the id {id}")));
            }
        }
        Ok(())
    }

    /// The primitives `lo..hi` as structured statements. `_jump_if_zero(c, t)` with the jump
    /// target inside the region opens an `if (c)` whose body ends at `t`; when the body's last
    /// primitive is `_jump(e)` forward past `t`, `t..e` is its `else`. When that last primitive
    /// jumps back to the `_jump_if_zero` itself, the region is p4c's `for` loop instead
    /// ([`Builder::structure_loop`]). Any other `_jump` must go to the next primitive, to the
    /// end of the action (`return`), or, inside a loop (`lp`), to its end (`break`) or to its
    /// update (`continue`); anything else is refused, so what is accepted runs exactly as the
    /// jumps would.
    pub(crate) fn structure(
        &mut self,
        prims: &[J<'a>],
        lo: usize,
        hi: usize,
        cx: &Cx,
        lp: Option<LoopJumps>,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let mut i = lo;
        while i < hi {
            let p = &prims[i];
            match p.str_of("op")? {
                "_jump_if_zero" => {
                    let ps = p.get("parameters")?;
                    let t = jump_target(&ps.at(1)?)?;
                    if t <= i || t > hi {
                        return Err(p.unsupported(format!(
                            "a jump from primitive {i} to {t} that does not end an if block"
                        )));
                    }
                    // The last primitive of the block: `_jump` back here (a loop) or forward
                    // past `t` (an else block).
                    let last = match t > i + 1 && prims[t - 1].str_of("op")? == "_jump" {
                        true => Some(jump_target(&prims[t - 1].get("parameters")?.at(0)?)?),
                        false => None,
                    };
                    if last == Some(i) {
                        self.structure_loop(prims, i, t, cx, out)?;
                        i = t;
                        continue;
                    }
                    let mut pre = Vec::new();
                    let cond = self.boolean(&ps.at(0)?, cx, &mut pre)?;
                    out.extend(pre);
                    let else_end = last.filter(|e| *e >= t && *e <= hi);
                    let mut then = Vec::new();
                    let mut els = Vec::new();
                    match else_end {
                        Some(e) => {
                            self.structure(prims, i + 1, t - 1, cx, lp, &mut then)?;
                            self.structure(prims, t, e, cx, lp, &mut els)?;
                            i = e;
                        }
                        None => {
                            self.structure(prims, i + 1, t, cx, lp, &mut then)?;
                            i = t;
                        }
                    }
                    out.push(Stmt::If(cond, then, els));
                }
                "_jump" => {
                    let t = jump_target(&p.get("parameters")?.at(0)?)?;
                    match lp {
                        _ if t == i + 1 => {}
                        Some(l) if t == l.brk => out.push(Stmt::Break),
                        Some(l) if t == l.cont => out.push(Stmt::Continue),
                        _ if t == prims.len() => out.push(Stmt::Return),
                        _ => {
                            return Err(p.unsupported(format!(
                                "a jump from primitive {i} to {t} outside an if/else block"
                            )))
                        }
                    }
                    i += 1;
                }
                _ => {
                    self.primitive(p, cx, out)?;
                    i += 1;
                }
            }
        }
        Ok(())
    }

    /// p4c's `for` loop in an action (`backends/bmv2/common/action.cpp`): the condition's
    /// `_jump_if_zero(c, end)` at `at`, the body, the update (where `continue` jumps), and a
    /// `_jump` back to `at` just before `end`; `break` jumps to `end`.
    fn structure_loop(
        &mut self,
        prims: &[J<'a>],
        at: usize,
        end: usize,
        cx: &Cx,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let back = end - 1;
        // The update starts at the last target of a jump in the loop that lies after every
        // jump of the loop (p4c's update label; the end of the last if block of the body when
        // there is no `continue`, which runs the same primitives in the same order).
        let mut last_jump = at;
        let mut targets = Vec::new();
        for (k, p) in prims.iter().enumerate().take(back).skip(at + 1) {
            let t = match p.str_of("op")? {
                "_jump" => jump_target(&p.get("parameters")?.at(0)?)?,
                "_jump_if_zero" => jump_target(&p.get("parameters")?.at(1)?)?,
                _ => continue,
            };
            last_jump = k;
            targets.push(t);
        }
        let cont = targets
            .into_iter()
            .filter(|t| *t > last_jump && *t <= back)
            .max()
            .unwrap_or(back);
        let jumps = LoopJumps { brk: end, cont };
        let ps = prims[at].get("parameters")?;
        let mut pre = Vec::new();
        let cond = self.boolean(&ps.at(0)?, cx, &mut pre)?;
        let mut body = Vec::new();
        self.structure(prims, at + 1, cont, cx, Some(jumps), &mut body)?;
        let mut update = Vec::new();
        self.structure(prims, cont, back, cx, Some(jumps), &mut update)?;
        if pre.is_empty() {
            out.push(Stmt::Loop { cond, body, update });
        } else {
            // The condition's statements run before each test.
            pre.push(Stmt::If(cond, Vec::new(), vec![Stmt::Break]));
            pre.extend(body);
            out.push(Stmt::Loop {
                cond: Expr::bool(true),
                body: pre,
                update,
            });
        }
        Ok(())
    }

    /// One primitive call.
    pub(crate) fn primitive(&mut self, p: &J<'a>, cx: &Cx, out: &mut Vec<Stmt>) -> Result<()> {
        let op = p.str_of("op")?;
        let ps = p.list("parameters")?;
        let arg = |k: usize| -> Result<J<'a>> {
            ps.get(k).cloned().ok_or_else(|| {
                p.err(format!(
                    "primitive {op} needs at least {} parameters",
                    k + 1
                ))
            })
        };
        let what = format!("primitive {op}");
        let mut pre = Vec::new();
        match op {
            "assign" | "modify_field" => {
                let dst = self.place(&arg(0)?, cx, &mut pre)?;
                let src = arg(1)?;
                match dst {
                    Place::Scalar(l, t) => {
                        let e = self.int(&src, cx, &mut pre, Some(t.width))?;
                        pre.push(Stmt::Assign(l, t, retype(e, t)));
                    }
                    Place::Varbit(l, m) => {
                        let Place::Varbit(s, m2) = self.place(&src, cx, &mut pre)? else {
                            return Err(src.err("expected a variable-length field"));
                        };
                        if m != m2 {
                            return Err(src.err("variable-length fields of different sizes"));
                        }
                        pre.push(copy(l, s, 1 + m.div_ceil(64).max(1)));
                    }
                }
            }
            "assign_VL" => {
                let dst = self.place(&arg(0)?, cx, &mut pre)?;
                let src = self.place(&arg(1)?, cx, &mut pre)?;
                match (dst, src) {
                    (Place::Varbit(l, m), Place::Varbit(s, m2)) if m == m2 => {
                        pre.push(copy(l, s, 1 + m.div_ceil(64).max(1)));
                    }
                    _ => return Err(p.err("assign_VL needs two variable-length fields")),
                }
            }
            "assign_header" | "copy_header" => {
                let d = self.header(&arg(0)?, cx, &mut pre)?;
                let s = self.header(&arg(1)?, cx, &mut pre)?;
                self.assign_header(&d, &s, p, &mut pre)?;
            }
            "assign_union" => {
                let d = self.union(&arg(0)?, cx, &mut pre)?;
                let s = self.union(&arg(1)?, cx, &mut pre)?;
                self.assign_union(&d, &s, p, &mut pre)?;
            }
            "assign_header_stack" | "assign_union_stack" => {
                let d = self.stack(&arg(0)?, cx, &mut pre)?;
                let s = self.stack(&arg(1)?, cx, &mut pre)?;
                self.assign_stack(d, s, p, &mut pre)?;
            }
            "push" | "pop" => {
                let s = self.stack(&arg(0)?, cx, &mut pre)?;
                let n = self.int(&arg(1)?, cx, &mut pre, None)?;
                let Some(n) = n.as_const().map(|v| v.low()) else {
                    return Err(p.unsupported(format!("{op} by a run-time count")));
                };
                let n = n.min(1 << 20) as i64;
                let st = &self.lay.stacks[s];
                pre.push(Stmt::Shift {
                    stack: StackRef {
                        loc: Loc::at(st.loc),
                        size: st.size,
                        elem_words: st.elem_words,
                        elem: st.elem.clone(),
                    },
                    by: if op == "push" { n } else { -n },
                });
            }
            "exit" => pre.push(Stmt::Exit),
            "assert" | "assume" => {
                let c = self.boolean(&arg(0)?, cx, &mut pre)?;
                let xop = if op == "assert" {
                    XOp::Assert
                } else {
                    XOp::Assume
                };
                pre.push(xcall(xop, None, vec![XArg::Val(c)], None, what));
            }
            "log_msg" => {
                let fmt = arg(0)?;
                let msg = fmt.get("value")?.str()?.to_string();
                let mut items = Vec::new();
                if let Ok(v) = arg(1) {
                    for x in v.get("value")?.arr()? {
                        items.push(Datum::Bits(self.int(&x, cx, &mut pre, None)?));
                    }
                }
                pre.push(xcall(
                    XOp::Log,
                    None,
                    vec![XArg::Str(msg), XArg::Data(items)],
                    None,
                    what,
                ));
            }
            "add_header" => {
                // BMv2 (simple_switch's add_header): a header that was invalid has its fields
                // reset to 0 when it becomes valid; a valid one is left as it is.
                let h = self.header(&arg(0)?, cx, &mut pre)?;
                if !h.metadata {
                    pre.push(self.add_header(&h));
                }
            }
            "add_header_fast" => {
                let h = self.header(&arg(0)?, cx, &mut pre)?;
                if !h.metadata {
                    pre.push(self.set_valid(&h, true));
                }
            }
            "remove_header" => {
                let h = self.header(&arg(0)?, cx, &mut pre)?;
                if !h.metadata {
                    pre.push(self.set_valid(&h, false));
                }
            }
            "mark_to_drop" => {
                let h = self.header(&arg(0)?, cx, &mut pre)?;
                let lay = crate::layout::fields_layout(&self.lay.types[h.ty], 0);
                pre.push(xcall(
                    XOp::MarkToDrop,
                    None,
                    vec![XArg::Agg(h.loc, lay)],
                    None,
                    what,
                ));
            }
            "drop" => pre.push(xcall(XOp::MarkToDrop, None, vec![XArg::None], None, what)),
            "no_op" => {}
            "generate_digest" => {
                let r = self.int(&arg(0)?, cx, &mut pre, None)?;
                let idj = arg(1)?;
                let id = self.int(&idj, cx, &mut pre, None)?;
                let Some(id) = id.as_const().map(|v| v.low() as i64) else {
                    return Err(idj.unsupported("a digest with a run-time learn list"));
                };
                let data = self.learn_list_data(id, &idj)?;
                pre.push(xcall(
                    XOp::V1Digest,
                    None,
                    vec![XArg::Val(r), data],
                    None,
                    what,
                ));
            }
            "clone_ingress_pkt_to_egress" | "clone_egress_pkt_to_egress" => {
                let ty = u64::from(op == "clone_egress_pkt_to_egress");
                let s = self.int(&arg(0)?, cx, &mut pre, None)?;
                let fl = match ps.get(1) {
                    Some(f) => self.int(f, cx, &mut pre, None)?,
                    None => Expr::Const(0, Ty::bits(32)),
                };
                pre.push(xcall(
                    XOp::Clone,
                    None,
                    vec![
                        XArg::Val(Expr::Const(ty, Ty::CODE)),
                        XArg::Val(s),
                        XArg::Val(fl),
                    ],
                    None,
                    what,
                ));
            }
            "resubmit" | "recirculate" => {
                let fl = match ps.first() {
                    Some(f) => self.int(f, cx, &mut pre, None)?,
                    None => Expr::Const(0, Ty::bits(32)),
                };
                let xop = if op == "resubmit" {
                    XOp::Resubmit
                } else {
                    XOp::Recirculate
                };
                pre.push(xcall(xop, None, vec![XArg::Val(fl)], None, what));
            }
            "modify_field_with_hash_based_offset" => {
                let Place::Scalar(dl, dt) = self.place(&arg(0)?, cx, &mut pre)? else {
                    return Err(p.err("the destination is a variable-length field"));
                };
                let base = self.int(&arg(1)?, cx, &mut pre, None)?;
                let cj = arg(2)?;
                let (algo, data, payload) = self.calculation_ref(&cj)?;
                if payload {
                    return Err(cj.unsupported("a hash over the packet's payload"));
                }
                let size = self.int(&arg(3)?, cx, &mut pre, None)?;
                pre.push(xcall(
                    XOp::V1Hash(algo),
                    None,
                    vec![XArg::Out(dl, dt), XArg::Val(base), data, XArg::Val(size)],
                    None,
                    what,
                ));
            }
            "modify_field_rng_uniform" => {
                let Place::Scalar(dl, dt) = self.place(&arg(0)?, cx, &mut pre)? else {
                    return Err(p.err("the destination is a variable-length field"));
                };
                let lo = self.int(&arg(1)?, cx, &mut pre, None)?;
                let hi = self.int(&arg(2)?, cx, &mut pre, None)?;
                pre.push(xcall(
                    XOp::V1Random,
                    None,
                    vec![XArg::Out(dl, dt), XArg::Val(lo), XArg::Val(hi)],
                    None,
                    what,
                ));
            }
            "execute_meter" => {
                let mj = arg(0)?;
                let m = self.meter_ref(&mj)?;
                let idx = self.int(&arg(1)?, cx, &mut pre, None)?;
                let Place::Scalar(dl, dt) = self.place(&arg(2)?, cx, &mut pre)? else {
                    return Err(p.err("the destination is a variable-length field"));
                };
                pre.push(xcall(
                    XOp::MeterExecute { colors: [0, 1, 2] },
                    Some(m),
                    vec![XArg::Val(idx), XArg::None, XArg::None],
                    Some((dl, dt)),
                    what,
                ));
            }
            "count" => {
                let cj = arg(0)?;
                let c = self.counter_ref(&cj)?;
                let idx = self.int(&arg(1)?, cx, &mut pre, None)?;
                pre.push(xcall(
                    XOp::CounterCount,
                    Some(c),
                    vec![XArg::Val(idx), XArg::None],
                    None,
                    what,
                ));
            }
            "register_read" => {
                // Read into a temporary of the register's width, then store (BMv2 truncates
                // to the destination field).
                let Place::Scalar(dl, dt) = self.place(&arg(0)?, cx, &mut pre)? else {
                    return Err(p.err("the destination is a variable-length field"));
                };
                let rj = arg(1)?;
                let (r, w) = self.register_ref(&rj)?;
                let idx = self.int(&arg(2)?, cx, &mut pre, None)?;
                let t = Ty::bits(w);
                let tmp = self.alloc_temp(t.words(), p)?;
                pre.push(xcall(
                    XOp::RegisterRead,
                    Some(r),
                    vec![XArg::Val(idx), XArg::Agg(Loc::at(tmp), Layout::Scalar(t))],
                    None,
                    what,
                ));
                pre.push(Stmt::Assign(
                    dl,
                    dt,
                    retype(cast(Expr::Load(tmp, t), Ty::bits(dt.width)), dt),
                ));
            }
            "register_write" => {
                let rj = arg(0)?;
                let (r, w) = self.register_ref(&rj)?;
                let idx = self.int(&arg(1)?, cx, &mut pre, None)?;
                let v = self.int(&arg(2)?, cx, &mut pre, Some(w))?;
                let t = Ty::bits(w);
                let tmp = self.alloc_temp(t.words(), p)?;
                pre.push(Stmt::Assign(Loc::at(tmp), t, v));
                pre.push(xcall(
                    XOp::RegisterWrite,
                    Some(r),
                    vec![XArg::Val(idx), XArg::Agg(Loc::at(tmp), Layout::Scalar(t))],
                    None,
                    what,
                ));
            }
            "truncate" => {
                let n = self.int(&arg(0)?, cx, &mut pre, None)?;
                pre.push(xcall(XOp::Truncate, None, vec![XArg::Val(n)], None, what));
            }
            "add_to_field" | "subtract_from_field" => {
                let Place::Scalar(l, t) = self.place(&arg(0)?, cx, &mut pre)? else {
                    return Err(p.err("expected a fixed-width field"));
                };
                let d = self.int(&arg(1)?, cx, &mut pre, Some(t.width))?;
                let bop = if op == "add_to_field" {
                    BinOp::Add
                } else {
                    BinOp::Sub
                };
                let w = Ty::bits(t.width);
                let cur = cast(Expr::load(&l, t), w);
                let e = Expr::Bin(bop, w, Box::new(cur), Box::new(d));
                pre.push(Stmt::Assign(l, t, retype(e, t)));
            }
            "add" | "subtract" | "bit_xor" | "bit_or" | "bit_and" | "shift_left"
            | "shift_right" => {
                // P4_14's two-operand primitives: dst = a op b, truncated to dst.
                let Place::Scalar(l, t) = self.place(&arg(0)?, cx, &mut pre)? else {
                    return Err(p.err("expected a fixed-width field"));
                };
                let sym = match op {
                    "add" => "+",
                    "subtract" => "-",
                    "bit_xor" => "^",
                    "bit_or" => "|",
                    "bit_and" => "&",
                    "shift_left" => "<<",
                    _ => ">>",
                };
                let v =
                    self.operation(sym, Some(arg(1)?), arg(2)?, p, cx, &mut pre, Some(t.width))?;
                let (Val::Int(e) | Val::Bool(e)) = v else {
                    return Err(p.err(format!("{op} needs integer operands")));
                };
                let e = cast(e, Ty::bits(t.width));
                pre.push(Stmt::Assign(l, t, retype(e, t)));
            }
            other => {
                if other.starts_with('_') {
                    return self.extern_method(p, other, &ps, cx, out);
                }
                return Err(p.unsupported(format!("the primitive {other}")));
            }
        }
        out.extend(pre);
        Ok(())
    }

    /// `SetValid` of a header, invalidating the other members of its union.
    pub(crate) fn set_valid(&self, h: &HRef, valid: bool) -> Stmt {
        Stmt::SetValid {
            hdr: h.loc.clone(),
            valid,
            others: self.union_others_of(h),
        }
    }

    /// BMv2's `add_header` (`setValid()`): [`Stmt::set_valid_resetting`], the reset and
    /// union semantics the P4 front end gives `setValid()` too.
    pub(crate) fn add_header(&self, h: &HRef) -> Stmt {
        let words = self.lay.types[h.ty].words;
        Stmt::set_valid_resetting(h.loc.clone(), words, self.union_others_of(h))
    }

    /// The validity words of the other members of `h`'s union, relative to `h`'s.
    fn union_others_of(&self, h: &HRef) -> Vec<i32> {
        match h.inst {
            Some(i) => self.lay.union_others(i),
            None => Vec::new(),
        }
    }

    /// BMv2's `assign_header`: an invalid source makes the destination invalid (its fields
    /// stay); a valid one is copied field by field and makes the destination valid.
    fn assign_header(&self, d: &HRef, s: &HRef, at: &J<'a>, out: &mut Vec<Stmt>) -> Result<()> {
        if d.ty != s.ty {
            return Err(at.err(format!(
                "assigning a {} header to a {} header",
                self.lay.types[s.ty].name, self.lay.types[d.ty].name
            )));
        }
        let words = self.lay.types[d.ty].words;
        let mut then = Vec::new();
        if words > 1 {
            then.push(copy(d.loc.plus(1), s.loc.plus(1), words - 1));
        }
        if !d.metadata {
            then.push(self.set_valid(d, true));
        }
        if s.metadata {
            out.extend(then);
            return Ok(());
        }
        let els = if d.metadata {
            Vec::new()
        } else {
            vec![self.set_valid(d, false)]
        };
        out.push(Stmt::If(self.valid_of(s), then, els));
        Ok(())
    }

    /// BMv2's `assign_union`: member by member.
    fn assign_union(
        &self,
        d: &crate::expr::URef,
        s: &crate::expr::URef,
        at: &J<'a>,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        if d.ty != s.ty {
            return Err(at.err("assigning unions of different types"));
        }
        let mut off = 0;
        for (_, ht) in &self.lay.union_types[d.ty].members {
            let mk = |u: &crate::expr::URef| HRef {
                loc: u.loc.plus(off),
                ty: *ht,
                metadata: false,
                inst: None,
            };
            self.assign_header(&mk(d), &mk(s), at, out)?;
            off += self.lay.types[*ht].words;
        }
        Ok(())
    }

    /// BMv2's `assign_header_stack` / `assign_union_stack`: `nextIndex`, then each element.
    fn assign_stack(&self, d: usize, s: usize, at: &J<'a>, out: &mut Vec<Stmt>) -> Result<()> {
        let (ds, ss) = (&self.lay.stacks[d], &self.lay.stacks[s]);
        if ds.size != ss.size || ds.hty != ss.hty || ds.uty != ss.uty {
            return Err(at.err("assigning stacks of different types or sizes"));
        }
        out.push(copy(Loc::at(ds.loc), Loc::at(ss.loc), 1));
        for k in 0..ds.size {
            let (dl, sl) = (
                ds.loc + 1 + k * ds.elem_words,
                ss.loc + 1 + k * ss.elem_words,
            );
            match (ds.hty, ds.uty) {
                (Some(ty), _) => {
                    let mk = |l: u32| HRef {
                        loc: Loc::at(l),
                        ty,
                        metadata: false,
                        inst: None,
                    };
                    self.assign_header(&mk(dl), &mk(sl), at, out)?;
                }
                (None, Some(uty)) => {
                    let mk = |l: u32| crate::expr::URef {
                        loc: Loc::at(l),
                        ty: uty,
                    };
                    self.assign_union(&mk(dl), &mk(sl), at, out)?;
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// An extern method call, `_<type>_<method>` with the instance first (PSA's externs).
    fn extern_method(
        &mut self,
        p: &J<'a>,
        op: &str,
        ps: &[J<'a>],
        cx: &Cx,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let Some(first) = ps.first() else {
            return Err(p.unsupported(format!("the primitive {op}")));
        };
        let inst = match (
            first.str_of("type"),
            first.get("value").and_then(|v| v.str()),
        ) {
            (Ok("extern"), Ok(n)) => n.to_string(),
            _ => return Err(p.unsupported(format!("the primitive {op}"))),
        };
        let Some((x, ty)) = self.extern_insts.get(&inst).cloned() else {
            return Err(first.err(format!("unknown extern instance {inst}")));
        };
        let method = op
            .strip_prefix(&format!("_{ty}_"))
            .ok_or_else(|| p.unsupported(format!("the primitive {op}")))?
            .to_string();
        self.extern_call(p, x, &ty, &method, &ps[1..], cx, out)
    }
}

/// A `_jump` target: a non-negative primitive index.
fn jump_target(j: &J<'_>) -> Result<usize> {
    let v = match j.str_of("type") {
        Ok("hexstr") => j.get("value")?.hexstr()?,
        _ => return Err(j.unsupported("a jump target that is not a constant")),
    };
    num_traits::ToPrimitive::to_usize(&v).ok_or_else(|| j.err("a negative jump target"))
}

/// An expression of `bit<w>` read as `t` (same width; `int<w>` fields store the same bits).
pub(crate) fn retype(e: Expr, t: Ty) -> Expr {
    let from = e.ty();
    if from == t {
        return e;
    }
    if from.width == t.width {
        return Expr::Cast(t, from, Box::new(e));
    }
    cast(e, t)
}

pub(crate) fn copy(dst: Loc, src: Loc, words: u32) -> Stmt {
    Stmt::Copy { dst, src, words }
}

pub(crate) fn xcall(
    op: XOp,
    inst: Option<ExternId>,
    args: Vec<XArg>,
    ret: Option<(Loc, Ty)>,
    what: String,
) -> Stmt {
    Stmt::Extern(Box::new(ExternCall {
        op,
        inst,
        args,
        ret,
        what,
    }))
}
