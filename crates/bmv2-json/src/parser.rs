//! `parsers` (with `parse_vsets`) and `deparsers`.
//!
//! A parse state's `parser_ops` become its statements; its `transition_key` and `transitions`
//! a `select`. BMv2 concatenates the key's fields, each padded to whole bytes, and compares
//! `key & mask` with `value & mask` (`ParseSwitchCaseWithMask`); each transition is split back
//! into one keyset per key field here. A `null` next state is `accept`; no case matching and no
//! `default` case goes to the default next state, which is `accept` unless a `default` case says
//! otherwise (BMv2's `ParseState::find_next_state`; p4c adds an explicit `NoMatch` state where
//! P4 requires one).

use crate::expr::Cx;
use crate::json::{Result, J};
use crate::Builder;
use num_bigint::BigInt;
use num_traits::{One, Zero};
use p4_ir::*;
use std::collections::HashMap;

/// Bound on the number of states of one parser.
const MAX_STATES: usize = 100_000;

impl<'a> Builder<'a> {
    /// `parse_vsets` and `parsers`.
    pub(crate) fn parsers_all(&mut self, root: &J<'a>) -> Result<()> {
        for v in root.list("parse_vsets")? {
            let name = v.str_of("name")?.to_string();
            let w = v.get("compressed_bitwidth")?.u32()?;
            let size = match v.opt("max_size") {
                Some(s) => s.u32()?,
                None => 64,
            };
            let id = self.p.value_sets.len() as ValueSetId;
            self.p.value_sets.push(ValueSet {
                name: name.clone(),
                size,
                widths: vec![w],
                elem: CpType::Bit(w),
                annotations: Vec::new(),
            });
            self.value_sets.insert(name, id);
        }
        for p in root.list("parsers")? {
            self.parser(&p)?;
        }
        Ok(())
    }

    fn parser(&mut self, pj: &J<'a>) -> Result<ParserId> {
        let name = pj.str_of("name")?.to_string();
        let states = pj.list("parse_states")?;
        if states.len() > MAX_STATES {
            return Err(pj.unsupported(format!("a parser of {} states", states.len())));
        }
        let mut index: HashMap<String, u32> = HashMap::new();
        for (i, s) in states.iter().enumerate() {
            let sn = s.str_of("name")?.to_string();
            if index.insert(sn.clone(), i as u32).is_some() {
                return Err(s.err(format!("parse state {sn} is declared twice")));
            }
        }
        let target = |j: &J<'a>| -> Result<Target> {
            match j.opt("next_state") {
                None => Ok(Target::Accept),
                Some(n) => {
                    let sn = n.str()?;
                    index
                        .get(sn)
                        .map(|i| Target::State(*i))
                        .ok_or_else(|| n.err(format!("unknown parse state {sn}")))
                }
            }
        };
        let cx = Cx::default();
        let mut out = Vec::with_capacity(states.len());
        for s in &states {
            let mut body = Vec::new();
            for op in s.list("parser_ops")? {
                self.parser_op(&op, &cx, &mut body)?;
            }
            // The select's key: one expression per field (read after the state's operations).
            let mut keys = Vec::new();
            let mut widths = Vec::new();
            for k in s.list("transition_key")? {
                let (e, w) = self.transition_key(&k, &mut body)?;
                keys.push(e);
                widths.push(w);
            }
            let trans = s.list("transitions")?;
            let next = if keys.is_empty() {
                // No key: the first transition (a default) is the next state.
                match trans.first() {
                    Some(t) => Transition::Go(target(t)?),
                    None => Transition::Go(Target::Accept),
                }
            } else {
                let mut cases = Vec::new();
                let mut has_default = false;
                for t in &trans {
                    let kind = match t.opt("type") {
                        Some(k) => k.str()?.to_string(),
                        None => "hexstr".into(),
                    };
                    let kind = if kind == "hexstr"
                        && t.opt("value").and_then(|v| v.v.as_str()) == Some("default")
                    {
                        "default".to_string()
                    } else {
                        kind
                    };
                    let next = target(t)?;
                    match kind.as_str() {
                        "default" => {
                            has_default = true;
                            cases.push(SelectCase {
                                keysets: vec![KeySet::Any; keys.len()],
                                next,
                            });
                        }
                        "hexstr" => {
                            if let Some(ks) = split_case(t, &widths)? {
                                cases.push(SelectCase { keysets: ks, next });
                            }
                        }
                        "parse_vset" => {
                            let vn = t.get("value")?.str()?;
                            let Some(&vs) = self.value_sets.get(vn) else {
                                return Err(t.err(format!("unknown parse value set {vn}")));
                            };
                            if t.opt("mask").is_some() {
                                return Err(t.unsupported("a parse value set with a mask"));
                            }
                            let total: u32 = widths.iter().sum();
                            let vw = self.p.value_sets[vs as usize].widths.clone();
                            if vw.iter().sum::<u32>() != total {
                                return Err(t.unsupported(format!(
                                    "value set {vn} of {} bits on a key of {total} bits",
                                    vw.iter().sum::<u32>()
                                )));
                            }
                            // The set's members have one component per key field (a struct
                            // value set); a single keyset matches all keys jointly.
                            self.p.value_sets[vs as usize].widths = widths.clone();
                            cases.push(SelectCase {
                                keysets: vec![KeySet::Set(vs)],
                                next,
                            });
                        }
                        other => return Err(t.unsupported(format!("transitions of type {other}"))),
                    }
                }
                // BMv2: no matching case goes to the default next state, `accept`.
                if !has_default {
                    cases.push(SelectCase {
                        keysets: vec![KeySet::Any; keys.len()],
                        next: Target::Accept,
                    });
                }
                Transition::Select { keys, cases }
            };
            out.push(State {
                name: s.str_of("name")?.to_string(),
                body,
                next,
            });
        }
        let init = pj.str_of("init_state")?;
        let Some(&start) = index.get(init) else {
            return Err(pj
                .get("init_state")?
                .err(format!("unknown parse state {init}")));
        };
        let id = self.p.parsers.len() as ParserId;
        self.p.parsers.push(Parser {
            name,
            init: Vec::new(),
            states: out,
            start,
        });
        Ok(id)
    }

    /// One transition key element: its expression and width.
    fn transition_key(&mut self, k: &J<'a>, body: &mut Vec<Stmt>) -> Result<(Expr, u32)> {
        let v = k.get("value")?;
        match k.str_of("type")? {
            "field" => {
                let h = v.at(0)?.str()?;
                let f = v.at(1)?.str()?;
                if f == "$valid$" {
                    let i = self.inst_index(h, &v)?;
                    let inst = &self.lay.insts[i];
                    return Ok((
                        if inst.metadata {
                            Expr::Const(1, Ty::bits(1))
                        } else {
                            Expr::Load(inst.loc, Ty::bits(1))
                        },
                        1,
                    ));
                }
                let Some((off, t)) = self.field_place(h, f) else {
                    return Err(v.err(format!("unknown fixed-width field {h}.{f}")));
                };
                Ok((Expr::Load(off, t), t.width))
            }
            "stack_field" => {
                let (l, t) = self.stack_field(&v)?;
                Ok((Expr::load(&l, t), t.width))
            }
            "union_stack_field" => {
                let (l, t) = self.union_stack_field(&v)?;
                Ok((Expr::load(&l, t), t.width))
            }
            "lookahead" => {
                let (off, w) = (v.at(0)?.u32()?, v.at(1)?.u32()?);
                let e = self.lookahead(off, w, &v, body)?;
                Ok((e, w))
            }
            other => Err(k.unsupported(format!("transition keys of type {other}"))),
        }
    }

    /// One parser operation.
    fn parser_op(&mut self, op: &J<'a>, cx: &Cx, out: &mut Vec<Stmt>) -> Result<()> {
        let ps = op.list("parameters")?;
        let first = || {
            ps.first()
                .cloned()
                .ok_or_else(|| op.err("missing parameters"))
        };
        match op.str_of("op")? {
            "extract" | "extract_VL" => {
                let target = first()?;
                let varbit_bits = if op.str_of("op")? == "extract_VL" {
                    let lj = ps
                        .get(1)
                        .ok_or_else(|| op.err("extract_VL needs a length"))?;
                    let mut pre = Vec::new();
                    let e = self.int(lj, cx, &mut pre, None)?;
                    out.extend(pre);
                    Some(e)
                } else {
                    None
                };
                let v = target.get("value")?;
                match target.str_of("type")? {
                    "regular" => {
                        let i = self.inst_index(v.str()?, &v)?;
                        let h = self.lay.hdr_ref(i);
                        let others = self.lay.union_others(i);
                        self.check_extract(i, varbit_bits.is_some(), &v)?;
                        let hdr = h.loc.clone();
                        out.push(Stmt::Extract {
                            hdr: h,
                            varbit_bits,
                        });
                        if !others.is_empty() {
                            out.push(Stmt::SetValid {
                                hdr,
                                valid: true,
                                others,
                            });
                        }
                    }
                    "stack" => {
                        let sn = v.str()?;
                        let Some(&s) = self.lay.stack_by_name.get(sn) else {
                            return Err(v.err(format!("unknown header stack {sn}")));
                        };
                        let st = &self.lay.stacks[s];
                        if st.hty.is_none() {
                            return Err(v.err(format!("{sn} is a union stack")));
                        }
                        out.push(Stmt::ExtractNext {
                            stack: stack_ref(st),
                            member: None,
                            varbit_bits,
                        });
                    }
                    "union_stack" => {
                        let sn = v.at(0)?.str()?;
                        let mn = v.at(1)?.str()?;
                        let Some(&s) = self.lay.stack_by_name.get(sn) else {
                            return Err(v.err(format!("unknown header union stack {sn}")));
                        };
                        let st = &self.lay.stacks[s];
                        let Some(uty) = st.uty else {
                            return Err(v.err(format!("{sn} is not a union stack")));
                        };
                        let Some(m) = self.lay.union_types[uty]
                            .members
                            .iter()
                            .position(|(n, _)| n == mn)
                        else {
                            return Err(v.err(format!("the union has no member {mn}")));
                        };
                        out.push(Stmt::ExtractNext {
                            stack: stack_ref(st),
                            member: Some(m as u32),
                            varbit_bits,
                        });
                    }
                    other => return Err(target.unsupported(format!("extracts of type {other}"))),
                }
            }
            "set" => {
                let dst = first()?;
                let src = ps.get(1).ok_or_else(|| op.err("set needs a source"))?;
                let mut pre = Vec::new();
                match self.place(&dst, cx, &mut pre)? {
                    crate::expr::Place::Scalar(l, t) => {
                        let e = self.int(src, cx, &mut pre, Some(t.width))?;
                        pre.push(Stmt::Assign(l, t, crate::prims::retype(e, t)));
                    }
                    crate::expr::Place::Varbit(..) => {
                        return Err(dst.unsupported("set of a variable-length field"))
                    }
                }
                out.extend(pre);
            }
            "verify" => {
                let mut pre = Vec::new();
                let c = self.boolean(&first()?, cx, &mut pre)?;
                let ej = ps.get(1).ok_or_else(|| op.err("verify needs an error"))?;
                // Old JSON gives the error as a plain integer.
                let e = if let Some(n) = ej.v.as_i64() {
                    Expr::Const(n as u64, Ty::CODE)
                } else {
                    crate::expr::cast(self.int(ej, cx, &mut pre, None)?, Ty::CODE)
                };
                // The runtime raises the IR's code; the JSON's value is what it stands for.
                let e = if self.error_values.is_empty() {
                    e
                } else {
                    match e.as_const().map(|v| v.low()) {
                        Some(v) => match self.error_code_of(v) {
                            Some(c) => Expr::Const(c, Ty::CODE),
                            None => return Err(ej.err(format!("no error has the value {v}"))),
                        },
                        None => {
                            return Err(ej.unsupported(
                                "a verify whose error is computed, in a JSON that numbers \
                                 the core errors from 1",
                            ))
                        }
                    }
                };
                out.extend(pre);
                out.push(Stmt::Verify(c, e));
            }
            "shift" => {
                let n = first()?.int()?;
                let n = u64::try_from(n).map_err(|_| op.err("a negative shift"))?;
                out.push(Stmt::Advance(Expr::Const(n * 8, Ty::bits(64))));
            }
            "advance" => {
                let mut pre = Vec::new();
                let e = self.int(&first()?, cx, &mut pre, None)?;
                out.extend(pre);
                out.push(Stmt::Advance(e));
            }
            "primitive" => {
                let p = first()?;
                self.primitive(&p, cx, out)?;
            }
            other => return Err(op.unsupported(format!("the parser operation {other}"))),
        }
        Ok(())
    }

    /// BMv2 refuses `extract` of a header with a variable-length field but no length
    /// expression; nevermiss reads only `extract_VL`'s length.
    fn check_extract(&self, i: usize, has_len: bool, at: &J<'a>) -> Result<()> {
        let t = &self.lay.types[self.lay.insts[i].ty];
        if !has_len && t.fields.iter().any(|f| f.varbit.is_some()) {
            return Err(at.unsupported(format!(
                "extract of {} (a variable-length header) without extract_VL's length",
                self.lay.insts[i].name
            )));
        }
        Ok(())
    }

    /// `deparsers`: the deparser's primitives, then its headers emitted in order.
    pub(crate) fn deparser(&mut self, dj: &J<'a>) -> Result<FnId> {
        let name = dj.str_of("name")?.to_string();
        let mut body = Vec::new();
        let cx = Cx::default();
        for p in dj.list("primitives")? {
            self.primitive(&p, &cx, &mut body)?;
        }
        for h in dj.list("order")? {
            let hn = h.str()?;
            let i = self.inst_index(hn, &h)?;
            body.push(Stmt::Emit(self.lay.hdr_ref(i)));
        }
        Ok(self.add_fn(name, FnKind::Control, body))
    }
}

/// The IR reference of a stack.
pub(crate) fn stack_ref(st: &crate::layout::Stack) -> StackRef {
    StackRef {
        loc: Loc::at(st.loc),
        size: st.size,
        elem_words: st.elem_words,
        elem: st.elem.clone(),
    }
}

/// A `hexstr` transition split into one keyset per key field (each field byte-padded in the
/// value and mask). `None` when the case can never match (bits set in a field's padding that
/// the mask keeps, which BMv2 compares against the key's zero padding).
fn split_case(t: &J<'_>, widths: &[u32]) -> Result<Option<Vec<KeySet>>> {
    let vj = t.get("value")?;
    let value = BigInt::from_bytes_be(num_bigint::Sign::Plus, &vj.hex_bytes()?);
    let bytes: Vec<u32> = widths.iter().map(|w| w.div_ceil(8)).collect();
    let total: u32 = bytes.iter().sum();
    let vb = vj.hex_bytes()?.len() as u32;
    if vb != total {
        return Err(vj.err(format!(
            "the transition value has {vb} bytes, the key {total}"
        )));
    }
    let mask = match t.opt("mask") {
        Some(m) => {
            let mb = m.hex_bytes()?;
            if mb.len() as u32 != total {
                return Err(m.err(format!(
                    "the transition mask has {} bytes, the key {total}",
                    mb.len()
                )));
            }
            Some(BigInt::from_bytes_be(num_bigint::Sign::Plus, &mb))
        }
        None => None,
    };
    let mut out = Vec::with_capacity(widths.len());
    let mut shift = total * 8;
    for (w, b) in widths.iter().zip(&bytes) {
        shift -= b * 8;
        let part = |x: &BigInt| -> BigInt { (x >> shift) & ((BigInt::one() << (b * 8)) - 1) };
        let v = part(&value);
        let full = (BigInt::one() << *w) - 1;
        let m = mask
            .as_ref()
            .map_or_else(|| (BigInt::one() << (b * 8)) - 1, part);
        // Bits of the padding the mask keeps must be 0 in the value to ever match.
        let pad = &m & !&full & ((BigInt::one() << (b * 8)) - 1);
        if !(&v & &pad).is_zero() {
            return Ok(None);
        }
        let (v, m) = (v & &full, m & &full);
        let to = |x: &BigInt| p4_ir::Val::from_big(x.to_biguint().unwrap_or_default());
        out.push(if m.is_zero() {
            KeySet::Any
        } else if m == full {
            KeySet::Value(to(&v))
        } else {
            KeySet::Mask(to(&(&v & &m)), to(&m))
        });
    }
    Ok(Some(out))
}
