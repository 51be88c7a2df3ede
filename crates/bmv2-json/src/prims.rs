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

    /// One primitive call (JSON_format.md, "actions"): each family of primitives has its helper
    /// below; `_<type>_<method>` calls go to `extern_method`.
    pub(crate) fn primitive(&mut self, p: &J<'a>, cx: &Cx, out: &mut Vec<Stmt>) -> Result<()> {
        let op = p.str_of("op")?;
        let a = Prim {
            p,
            op,
            ps: p.list("parameters")?,
        };
        let mut pre = Vec::new();
        match op {
            "assign" | "modify_field" | "assign_VL" => self.prim_assign(&a, cx, &mut pre)?,
            "assign_header"
            | "copy_header"
            | "assign_union"
            | "assign_header_stack"
            | "assign_union_stack" => self.prim_assign_aggregate(&a, cx, &mut pre)?,
            "push" | "pop" => self.prim_push_pop(&a, cx, &mut pre)?,
            "add_header" | "add_header_fast" | "remove_header" => {
                self.prim_validity(&a, cx, &mut pre)?
            }
            "exit" | "no_op" | "assert" | "assume" | "log_msg" | "truncate" => {
                self.prim_control(&a, cx, &mut pre)?
            }
            "mark_to_drop"
            | "drop"
            | "generate_digest"
            | "clone_ingress_pkt_to_egress"
            | "clone_egress_pkt_to_egress"
            | "resubmit"
            | "recirculate" => self.prim_packet(&a, cx, &mut pre)?,
            "modify_field_with_hash_based_offset" | "modify_field_rng_uniform" => {
                self.prim_hash_random(&a, cx, &mut pre)?
            }
            "execute_meter" | "count" | "register_read" | "register_write" => {
                self.prim_stateful(&a, cx, &mut pre)?
            }
            "add_to_field"
            | "subtract_from_field"
            | "add"
            | "subtract"
            | "bit_xor"
            | "bit_or"
            | "bit_and"
            | "shift_left"
            | "shift_right" => self.prim_arith(&a, cx, &mut pre)?,
            other if other.starts_with('_') => return self.extern_method(p, other, &a.ps, cx, out),
            other => return Err(p.unsupported(format!("the primitive {other}"))),
        }
        out.extend(pre);
        Ok(())
    }

    /// `assign`/`modify_field` (a scalar or a variable-length field) and `assign_VL`.
    fn prim_assign(&mut self, a: &Prim<'_, 'a>, cx: &Cx, pre: &mut Vec<Stmt>) -> Result<()> {
        let dst = self.place(&a.arg(0)?, cx, pre)?;
        if a.op == "assign_VL" {
            let src = self.place(&a.arg(1)?, cx, pre)?;
            return match (dst, src) {
                (Place::Varbit(l, m), Place::Varbit(s, m2)) if m == m2 => {
                    pre.push(copy(l, s, 1 + m.div_ceil(64).max(1)));
                    Ok(())
                }
                _ => Err(a.p.err("assign_VL needs two variable-length fields")),
            };
        }
        let src = a.arg(1)?;
        match dst {
            Place::Scalar(l, t) => {
                let e = self.int(&src, cx, pre, Some(t.width))?;
                pre.push(Stmt::Assign(l, t, retype(e, t)));
            }
            Place::Varbit(l, m) => {
                let Place::Varbit(s, m2) = self.place(&src, cx, pre)? else {
                    return Err(src.err("expected a variable-length field"));
                };
                if m != m2 {
                    return Err(src.err("variable-length fields of different sizes"));
                }
                pre.push(copy(l, s, 1 + m.div_ceil(64).max(1)));
            }
        }
        Ok(())
    }

    /// Whole headers, unions and stacks: `assign_header`/`copy_header`, `assign_union`,
    /// `assign_header_stack`/`assign_union_stack`.
    fn prim_assign_aggregate(
        &mut self,
        a: &Prim<'_, 'a>,
        cx: &Cx,
        pre: &mut Vec<Stmt>,
    ) -> Result<()> {
        match a.op {
            "assign_header" | "copy_header" => {
                let d = self.header(&a.arg(0)?, cx, pre)?;
                let s = self.header(&a.arg(1)?, cx, pre)?;
                self.assign_header(&d, &s, a.p, pre)
            }
            "assign_union" => {
                let d = self.union(&a.arg(0)?, cx, pre)?;
                let s = self.union(&a.arg(1)?, cx, pre)?;
                self.assign_union(&d, &s, a.p, pre)
            }
            _ => {
                let d = self.stack(&a.arg(0)?, cx, pre)?;
                let s = self.stack(&a.arg(1)?, cx, pre)?;
                self.assign_stack(d, s, a.p, pre)
            }
        }
    }

    /// `push`/`pop` of a header stack by a constant count.
    fn prim_push_pop(&mut self, a: &Prim<'_, 'a>, cx: &Cx, pre: &mut Vec<Stmt>) -> Result<()> {
        let s = self.stack(&a.arg(0)?, cx, pre)?;
        let n = self.int(&a.arg(1)?, cx, pre, None)?;
        let Some(n) = n.as_const().map(|v| v.low()) else {
            return Err(a.p.unsupported(format!("{} by a run-time count", a.op)));
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
            by: if a.op == "push" { n } else { -n },
        });
        Ok(())
    }

    /// A header's validity: `add_header`, `add_header_fast`, `remove_header` (no effect on
    /// metadata).
    fn prim_validity(&mut self, a: &Prim<'_, 'a>, cx: &Cx, pre: &mut Vec<Stmt>) -> Result<()> {
        let h = self.header(&a.arg(0)?, cx, pre)?;
        if h.metadata {
            return Ok(());
        }
        match a.op {
            // BMv2 (simple_switch's add_header): a header that was invalid has its fields
            // reset to 0 when it becomes valid; a valid one is left as it is.
            "add_header" => pre.push(self.add_header(&h)),
            "add_header_fast" => pre.push(self.set_valid(&h, true)),
            _ => pre.push(self.set_valid(&h, false)),
        }
        Ok(())
    }

    /// Control flow and diagnostics: `exit`, `no_op`, `assert`/`assume`, `log_msg`, `truncate`.
    fn prim_control(&mut self, a: &Prim<'_, 'a>, cx: &Cx, pre: &mut Vec<Stmt>) -> Result<()> {
        match a.op {
            "exit" => pre.push(Stmt::Exit),
            "no_op" => {}
            "assert" | "assume" => {
                let c = self.boolean(&a.arg(0)?, cx, pre)?;
                let xop = if a.op == "assert" {
                    XOp::Assert
                } else {
                    XOp::Assume
                };
                pre.push(xcall(xop, None, vec![XArg::Val(c)], None, a.what()));
            }
            "log_msg" => {
                let fmt = a.arg(0)?;
                let msg = fmt.get("value")?.str()?.to_string();
                let mut items = Vec::new();
                if let Ok(v) = a.arg(1) {
                    for x in v.get("value")?.arr()? {
                        items.push(Datum::Bits(self.int(&x, cx, pre, None)?));
                    }
                }
                let args = vec![XArg::Str(msg), XArg::Data(items)];
                pre.push(xcall(XOp::Log, None, args, None, a.what()));
            }
            _ => {
                let n = self.int(&a.arg(0)?, cx, pre, None)?;
                pre.push(xcall(
                    XOp::Truncate,
                    None,
                    vec![XArg::Val(n)],
                    None,
                    a.what(),
                ));
            }
        }
        Ok(())
    }

    /// What becomes of the packet: `mark_to_drop`/`drop`, `generate_digest`, the clones,
    /// `resubmit`/`recirculate`.
    fn prim_packet(&mut self, a: &Prim<'_, 'a>, cx: &Cx, pre: &mut Vec<Stmt>) -> Result<()> {
        let what = a.what();
        match a.op {
            "mark_to_drop" => {
                let h = self.header(&a.arg(0)?, cx, pre)?;
                let lay = crate::layout::fields_layout(&self.lay.types[h.ty], 0);
                let args = vec![XArg::Agg(h.loc, lay)];
                pre.push(xcall(XOp::MarkToDrop, None, args, None, what));
            }
            "drop" => pre.push(xcall(XOp::MarkToDrop, None, vec![XArg::None], None, what)),
            "generate_digest" => {
                let r = self.int(&a.arg(0)?, cx, pre, None)?;
                let idj = a.arg(1)?;
                let id = self.int(&idj, cx, pre, None)?;
                let Some(id) = id.as_const().map(|v| v.low() as i64) else {
                    return Err(idj.unsupported("a digest with a run-time learn list"));
                };
                let data = self.learn_list_data(id, &idj)?;
                let args = vec![XArg::Val(r), data];
                pre.push(xcall(XOp::V1Digest, None, args, None, what));
            }
            "clone_ingress_pkt_to_egress" | "clone_egress_pkt_to_egress" => {
                let ty = u64::from(a.op == "clone_egress_pkt_to_egress");
                let s = self.int(&a.arg(0)?, cx, pre, None)?;
                let fl = match a.ps.get(1) {
                    Some(f) => self.int(f, cx, pre, None)?,
                    None => Expr::Const(0, Ty::bits(32)),
                };
                let args = vec![
                    XArg::Val(Expr::Const(ty, Ty::CODE)),
                    XArg::Val(s),
                    XArg::Val(fl),
                ];
                pre.push(xcall(XOp::Clone, None, args, None, what));
            }
            _ => {
                let fl = match a.ps.first() {
                    Some(f) => self.int(f, cx, pre, None)?,
                    None => Expr::Const(0, Ty::bits(32)),
                };
                let xop = if a.op == "resubmit" {
                    XOp::Resubmit
                } else {
                    XOp::Recirculate
                };
                pre.push(xcall(xop, None, vec![XArg::Val(fl)], None, what));
            }
        }
        Ok(())
    }

    /// `modify_field_with_hash_based_offset` and `modify_field_rng_uniform`.
    fn prim_hash_random(&mut self, a: &Prim<'_, 'a>, cx: &Cx, pre: &mut Vec<Stmt>) -> Result<()> {
        let Place::Scalar(dl, dt) = self.place(&a.arg(0)?, cx, pre)? else {
            return Err(a.p.err("the destination is a variable-length field"));
        };
        if a.op == "modify_field_rng_uniform" {
            let lo = self.int(&a.arg(1)?, cx, pre, None)?;
            let hi = self.int(&a.arg(2)?, cx, pre, None)?;
            let args = vec![XArg::Out(dl, dt), XArg::Val(lo), XArg::Val(hi)];
            pre.push(xcall(XOp::V1Random, None, args, None, a.what()));
            return Ok(());
        }
        let base = self.int(&a.arg(1)?, cx, pre, None)?;
        let cj = a.arg(2)?;
        let (algo, data, payload) = self.calculation_ref(&cj)?;
        if payload {
            return Err(cj.unsupported("a hash over the packet's payload"));
        }
        let size = self.int(&a.arg(3)?, cx, pre, None)?;
        let args = vec![XArg::Out(dl, dt), XArg::Val(base), data, XArg::Val(size)];
        pre.push(xcall(XOp::V1Hash(algo), None, args, None, a.what()));
        Ok(())
    }

    /// The stateful externs of P4_14/v1model: `execute_meter`, `count`, `register_read`,
    /// `register_write`.
    fn prim_stateful(&mut self, a: &Prim<'_, 'a>, cx: &Cx, pre: &mut Vec<Stmt>) -> Result<()> {
        let what = a.what();
        match a.op {
            "execute_meter" => {
                let m = self.meter_ref(&a.arg(0)?)?;
                let idx = self.int(&a.arg(1)?, cx, pre, None)?;
                let Place::Scalar(dl, dt) = self.place(&a.arg(2)?, cx, pre)? else {
                    return Err(a.p.err("the destination is a variable-length field"));
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
                let c = self.counter_ref(&a.arg(0)?)?;
                let idx = self.int(&a.arg(1)?, cx, pre, None)?;
                let args = vec![XArg::Val(idx), XArg::None];
                pre.push(xcall(XOp::CounterCount, Some(c), args, None, what));
            }
            "register_read" => {
                // Read into a temporary of the register's width, then store (BMv2 truncates
                // to the destination field).
                let Place::Scalar(dl, dt) = self.place(&a.arg(0)?, cx, pre)? else {
                    return Err(a.p.err("the destination is a variable-length field"));
                };
                let (r, w) = self.register_ref(&a.arg(1)?)?;
                let idx = self.int(&a.arg(2)?, cx, pre, None)?;
                let t = Ty::bits(w);
                let tmp = self.alloc_temp(t.words(), a.p)?;
                let args = vec![XArg::Val(idx), XArg::Agg(Loc::at(tmp), Layout::Scalar(t))];
                pre.push(xcall(XOp::RegisterRead, Some(r), args, None, what));
                let v = retype(cast(Expr::Load(tmp, t), Ty::bits(dt.width)), dt);
                pre.push(Stmt::Assign(dl, dt, v));
            }
            _ => {
                let (r, w) = self.register_ref(&a.arg(0)?)?;
                let idx = self.int(&a.arg(1)?, cx, pre, None)?;
                let v = self.int(&a.arg(2)?, cx, pre, Some(w))?;
                let t = Ty::bits(w);
                let tmp = self.alloc_temp(t.words(), a.p)?;
                pre.push(Stmt::Assign(Loc::at(tmp), t, v));
                let args = vec![XArg::Val(idx), XArg::Agg(Loc::at(tmp), Layout::Scalar(t))];
                pre.push(xcall(XOp::RegisterWrite, Some(r), args, None, what));
            }
        }
        Ok(())
    }

    /// P4_14's arithmetic primitives, truncated to the destination: `add_to_field`/
    /// `subtract_from_field` (dst op= a) and the two-operand `add`, `subtract`, `bit_xor`,
    /// `bit_or`, `bit_and`, `shift_left`, `shift_right` (dst = a op b).
    fn prim_arith(&mut self, a: &Prim<'_, 'a>, cx: &Cx, pre: &mut Vec<Stmt>) -> Result<()> {
        let Place::Scalar(l, t) = self.place(&a.arg(0)?, cx, pre)? else {
            return Err(a.p.err("expected a fixed-width field"));
        };
        let w = Ty::bits(t.width);
        let e = match a.op {
            "add_to_field" | "subtract_from_field" => {
                let d = self.int(&a.arg(1)?, cx, pre, Some(t.width))?;
                let bop = if a.op == "add_to_field" {
                    BinOp::Add
                } else {
                    BinOp::Sub
                };
                let cur = cast(Expr::load(&l, t), w);
                Expr::Bin(bop, w, Box::new(cur), Box::new(d))
            }
            op => {
                let sym = match op {
                    "add" => "+",
                    "subtract" => "-",
                    "bit_xor" => "^",
                    "bit_or" => "|",
                    "bit_and" => "&",
                    "shift_left" => "<<",
                    _ => ">>",
                };
                let (x, y) = (a.arg(1)?, a.arg(2)?);
                let v = self.operation(sym, Some(x), y, a.p, cx, pre, Some(t.width))?;
                let (Val::Int(e) | Val::Bool(e)) = v else {
                    return Err(a.p.err(format!("{op} needs integer operands")));
                };
                cast(e, w)
            }
        };
        pre.push(Stmt::Assign(l, t, retype(e, t)));
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

/// One primitive call being lowered: its JSON, its `op` and its `parameters`.
pub(crate) struct Prim<'p, 'a> {
    p: &'p J<'a>,
    op: &'a str,
    ps: Vec<J<'a>>,
}

impl<'a> Prim<'_, 'a> {
    /// Parameter `k`, or an error naming how many parameters the primitive needs.
    fn arg(&self, k: usize) -> Result<J<'a>> {
        self.ps.get(k).cloned().ok_or_else(|| {
            self.p.err(format!(
                "primitive {} needs at least {} parameters",
                self.op,
                k + 1
            ))
        })
    }

    /// The name its extern calls carry (`primitive <op>`).
    fn what(&self) -> String {
        format!("primitive {}", self.op)
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
