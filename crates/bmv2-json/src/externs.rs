//! Stateful objects and lists: `counter_arrays`, `meter_arrays`, `register_arrays`,
//! `calculations`, `checksums`, `field_lists`, `learn_lists`, and PSA's `extern_instances`.

use crate::expr::Cx;
use crate::json::{Result, J};
use crate::prims::xcall;
use crate::Builder;
use p4_ir::*;

/// A meter array: its extern, and for a direct meter the table it is bound to and the field
/// the color goes to.
#[derive(Clone, Debug)]
pub struct MeterInfo {
    pub id: ExternId,
    pub direct: Option<(String, (String, String))>,
}

/// A named calculation: its algorithm and inputs.
#[derive(Clone)]
pub struct Calc<'a> {
    pub algo: HashAlgo,
    pub input: Vec<J<'a>>,
}

/// BMv2's hash algorithm names (the ones p4c writes; BMv2 registers them in
/// `src/bm_sim/calculations.cpp`) → the runtime's algorithms.
pub fn algo(name: &str) -> Option<HashAlgo> {
    Some(match name {
        "crc16" => HashAlgo::Crc16,
        "crc16_custom" => HashAlgo::Crc16Custom,
        "crc32" => HashAlgo::Crc32,
        "crc32_custom" => HashAlgo::Crc32Custom,
        "csum16" => HashAlgo::Csum16,
        "xor16" => HashAlgo::Xor16,
        "identity" => HashAlgo::Identity,
        "random" => HashAlgo::Random,
        _ => return None,
    })
}

impl<'a> Builder<'a> {
    /// Every stateful object and list, before the actions that use them.
    pub(crate) fn externs(&mut self, root: &J<'a>) -> Result<()> {
        for c in root.list("counter_arrays")? {
            let name = c.str_of("name")?.to_string();
            let kind = if c.bool_or("is_direct", false)? {
                ExternKind::DirectCounter {
                    kind: CounterKind::PacketsAndBytes,
                }
            } else {
                ExternKind::Counter {
                    size: c.get("size")?.u32()?,
                    kind: CounterKind::PacketsAndBytes,
                }
            };
            let id = self.add_extern(name.clone(), kind);
            if self.counters.insert(name.clone(), id).is_some() {
                return Err(c.err(format!("counter array {name} is declared twice")));
            }
        }
        for m in root.list("meter_arrays")? {
            let name = m.str_of("name")?.to_string();
            let bytes = match m.str_of("type")? {
                "bytes" => true,
                "packets" => false,
                other => return Err(m.get("type")?.err(format!("meter type {other}"))),
            };
            if let Some(rc) = m.opt("rate_count") {
                if rc.int()? != 2 {
                    return Err(rc.unsupported("meters with a rate count other than 2"));
                }
            }
            let direct = m.bool_or("is_direct", false)?;
            let (kind, d) = if direct {
                let table = m.str_of("binding")?.to_string();
                let t = m.get("result_target")?;
                let target = (t.at(0)?.str()?.to_string(), t.at(1)?.str()?.to_string());
                (ExternKind::DirectMeter { bytes }, Some((table, target)))
            } else {
                let size = m.get("size")?.u32()?;
                (ExternKind::Meter { size, bytes }, None)
            };
            let id = self.add_extern(name.clone(), kind);
            if self
                .meters
                .insert(name.clone(), MeterInfo { id, direct: d })
                .is_some()
            {
                return Err(m.err(format!("meter array {name} is declared twice")));
            }
        }
        for r in root.list("register_arrays")? {
            let name = r.str_of("name")?.to_string();
            let size = r.get("size")?.u32()?;
            let w = r.get("bitwidth")?.u32()?;
            if w == 0 || w > 65_536 {
                return Err(r.unsupported(format!("registers of {w} bits")));
            }
            let t = Ty::bits(w);
            let id = self.add_extern(
                name.clone(),
                ExternKind::Register {
                    size,
                    layout: Layout::Scalar(t),
                    init: vec![0; t.words() as usize],
                },
            );
            self.p.externs[id as usize].type_args = vec![CpType::Bit(w)];
            if self.registers.insert(name.clone(), (id, w)).is_some() {
                return Err(r.err(format!("register array {name} is declared twice")));
            }
        }
        for c in root.list("calculations")? {
            let name = c.str_of("name")?.to_string();
            let an = c.str_of("algo")?;
            let Some(a) = algo(an) else {
                return Err(c
                    .get("algo")?
                    .unsupported(format!("the hash algorithm {an}")));
            };
            let input = c.list("input")?;
            self.calcs.insert(name, Calc { algo: a, input });
        }
        for f in root.list("field_lists")? {
            self.field_lists.insert(f.int_of("id")?, f);
        }
        for l in root.list("learn_lists")? {
            self.learn_lists.insert(l.int_of("id")?, l);
        }
        self.extern_instances(root)
    }

    /// A `{"type": "counter_array", "value": NAME}` parameter.
    pub(crate) fn counter_ref(&self, j: &J<'a>) -> Result<ExternId> {
        let n = j.get("value")?.str()?;
        self.counters
            .get(n)
            .copied()
            .ok_or_else(|| j.err(format!("unknown counter array {n}")))
    }

    /// A `{"type": "meter_array", "value": NAME}` parameter.
    pub(crate) fn meter_ref(&self, j: &J<'a>) -> Result<ExternId> {
        let n = j.get("value")?.str()?;
        self.meters
            .get(n)
            .map(|m| m.id)
            .ok_or_else(|| j.err(format!("unknown meter array {n}")))
    }

    /// A `{"type": "register_array", "value": NAME}` parameter: the extern and cell width.
    pub(crate) fn register_ref(&self, j: &J<'a>) -> Result<(ExternId, u32)> {
        let n = j.get("value")?.str()?;
        self.registers
            .get(n)
            .copied()
            .ok_or_else(|| j.err(format!("unknown register array {n}")))
    }

    /// A `{"type": "calculation", "value": NAME}` parameter: algorithm, data, and whether the
    /// payload follows.
    pub(crate) fn calculation_ref(&mut self, j: &J<'a>) -> Result<(HashAlgo, XArg, bool)> {
        let n = j.get("value")?.str()?;
        let Some(c) = self.calcs.get(n).cloned() else {
            return Err(j.err(format!("unknown calculation {n}")));
        };
        let (items, payload) = self.calc_data(&c)?;
        Ok((c.algo, XArg::Data(items), payload))
    }

    /// A calculation's input as data. BMv2 (`BufBuilder`) skips the fields and headers of
    /// invalid headers; `payload` makes the packet's unparsed bytes follow.
    pub(crate) fn calc_data(&mut self, c: &Calc<'a>) -> Result<(Vec<Datum>, bool)> {
        let mut items = Vec::new();
        let mut payload = false;
        for j in &c.input {
            match j.str_of("type")? {
                "field" => {
                    let fj = j.get("value")?;
                    items.push(self.field_datum(&fj)?);
                }
                "hexstr" => {
                    let x = j.get("value")?.hexstr()?;
                    let w = j.get("bitwidth")?.u32()?;
                    if w == 0 {
                        return Err(j.err("a constant of 0 bits"));
                    }
                    items.push(Datum::Bits(crate::expr::constant(&x, Ty::bits(w))));
                }
                "header" => {
                    let hn = j.get("value")?.str()?;
                    let i = self.inst_index(hn, j)?;
                    let inst = self.lay.insts[i].clone();
                    let mut fs = Vec::new();
                    for f in &self.lay.types[inst.ty].fields {
                        let l = Loc::at(inst.loc + f.off);
                        fs.push(match f.varbit {
                            Some(m) => Datum::Varbit(l, m),
                            None => Datum::Bits(Expr::Load(l.off, f.ty)),
                        });
                    }
                    items.extend(self.only_if_valid(&inst, fs));
                }
                "payload" => payload = true,
                other => return Err(j.unsupported(format!("calculation input of type {other}"))),
            }
        }
        Ok((items, payload))
    }

    /// A `["header", "field"]` as data (empty when the header is invalid, as BMv2 builds it).
    fn field_datum(&mut self, fj: &J<'a>) -> Result<Datum> {
        let h = fj.at(0)?.str()?;
        let f = fj.at(1)?.str()?;
        let i = self.inst_index(h, fj)?;
        let inst = self.lay.insts[i].clone();
        let t = &self.lay.types[inst.ty];
        let d = if f == "$valid$" {
            Datum::Bits(Expr::Load(inst.loc, Ty::bits(1)))
        } else {
            let Some(fl) = t.fields.iter().find(|x| x.name == f) else {
                return Err(fj.err(format!("header type {} has no field {f}", t.name)));
            };
            let l = Loc::at(inst.loc + fl.off);
            match fl.varbit {
                Some(m) => Datum::Varbit(l, m),
                None => Datum::Bits(Expr::Load(l.off, fl.ty)),
            }
        };
        Ok(self
            .only_if_valid(&inst, vec![d])
            .pop()
            .unwrap_or(Datum::Bits(Expr::Const(0, Ty::bits(1)))))
    }

    /// Data of a header's fields, serialized only while the header is valid (metadata always).
    fn only_if_valid(&self, inst: &crate::layout::Inst, items: Vec<Datum>) -> Vec<Datum> {
        if inst.metadata {
            return items;
        }
        items
            .into_iter()
            .map(|d| Datum::IfValid(Loc::at(inst.loc), Box::new(d)))
            .collect()
    }

    /// The fields of learn list `id` as digest data (BMv2 packs them back to back).
    pub(crate) fn learn_list_data(&mut self, id: i64, at: &J<'a>) -> Result<XArg> {
        let Some(l) = self.learn_lists.get(&id).cloned() else {
            return Err(at.err(format!("no learn list has the id {id}")));
        };
        let mut items = Vec::new();
        let mut fields = Vec::new();
        let elements = l.list("elements")?;
        // The JSON keeps no member names (p4c copies the data into scalars `tmp`, `tmp_0`, …);
        // the source fragment `{ hdr.eth.src_addr, meta.port }` names what each member holds.
        let from_source: Vec<String> = l
            .opt("source_info")
            .and_then(|si| si.v.get("source_fragment").and_then(|v| v.as_str()))
            .map(|f| {
                f.trim_matches(|c: char| c == '{' || c == '}' || c.is_whitespace())
                    .split(',')
                    .map(|x| x.trim().rsplit('.').next().unwrap_or("").to_string())
                    .collect()
            })
            .filter(|v: &Vec<String>| {
                v.len() == elements.len()
                    && v.iter().all(|n| {
                        !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    })
            })
            .unwrap_or_default();
        for (i, e) in elements.iter().enumerate() {
            match e.str_of("type")? {
                "field" => {
                    let fj = e.get("value")?;
                    let h = fj.at(0)?.str()?;
                    let f = fj.at(1)?.str()?;
                    let Some((off, t)) = self.field_place(h, f) else {
                        return Err(fj.err(format!("unknown fixed-width field {h}.{f}")));
                    };
                    items.push(Datum::Bits(Expr::Load(off, t)));
                    fields.push(control_plane::CpField {
                        name: from_source.get(i).cloned().unwrap_or_else(|| f.to_string()),
                        ty: control_plane::CpType::Bit(t.width),
                        annotations: Vec::new(),
                    });
                }
                other => return Err(e.unsupported(format!("learn list elements of type {other}"))),
            }
        }
        // The control plane names the digest after the learn list (p4c names both after the
        // data's type), a struct of the members in order.
        let name = l.str_of("name")?.to_string();
        let cp = &mut self.p.control_plane;
        let ty = match cp.types.iter().position(|t| t.name == name) {
            Some(i) => i as control_plane::TypeId,
            None => {
                cp.types.push(control_plane::NamedType {
                    name: name.clone(),
                    annotations: Vec::new(),
                    kind: control_plane::NamedKind::Struct(fields),
                });
                (cp.types.len() - 1) as control_plane::TypeId
            }
        };
        cp.v1_digests.push(control_plane::V1Digest {
            name,
            ty: control_plane::CpType::Named(ty),
        });
        Ok(XArg::Data(items))
    }

    /// `checksums`: the statements that verify them (after the parser) and that update them
    /// (before the deparser), in the document's order. As BMv2's `Checksum::verify`: a checksum
    /// whose target field's header is invalid, or whose `if_cond` is false, is not verified;
    /// a failed verification sets `standard_metadata.checksum_error`.
    pub(crate) fn checksums(&mut self, root: &J<'a>) -> Result<(Vec<Stmt>, Vec<Stmt>)> {
        let mut verify = Vec::new();
        let mut update = Vec::new();
        for c in root.list("checksums")? {
            let ty = c
                .opt("type")
                .map(|t| t.str())
                .transpose()?
                .unwrap_or("generic");
            if ty != "generic" {
                return Err(c.unsupported(format!("checksums of type {ty}")));
            }
            let tj = c.get("target")?;
            let (h, f) = (tj.at(0)?.str()?, tj.at(1)?.str()?);
            let Some((off, t)) = self.field_place(h, f) else {
                return Err(tj.err(format!("unknown fixed-width field {h}.{f}")));
            };
            let inst = self.lay.insts[self.inst_index(h, &tj)?].clone();
            let cn = c.str_of("calculation")?;
            let Some(calc) = self.calcs.get(cn).cloned() else {
                return Err(c
                    .get("calculation")?
                    .err(format!("unknown calculation {cn}")));
            };
            let (items, payload) = self.calc_data(&calc)?;
            let mut pre = Vec::new();
            let cond = match c.opt("if_cond") {
                Some(cj) => self.boolean(&cj, &Cx::default(), &mut pre)?,
                None => Expr::bool(true),
            };
            let what = format!("checksum {}", c.str_of("name")?);
            if c.bool_or("verify", true)? {
                let mut cond_v = cond.clone();
                if !inst.metadata {
                    cond_v = Expr::And(Box::new(Expr::Load(inst.loc, Ty::BOOL)), Box::new(cond_v));
                }
                verify.extend(pre.iter().cloned());
                verify.push(xcall(
                    XOp::VerifyChecksum {
                        algo: calc.algo,
                        with_payload: payload,
                    },
                    None,
                    vec![
                        XArg::Val(cond_v),
                        XArg::Data(items.clone()),
                        XArg::Val(Expr::Load(off, t)),
                    ],
                    None,
                    what.clone(),
                ));
            }
            if c.bool_or("update", true)? {
                update.extend(pre);
                update.push(xcall(
                    XOp::UpdateChecksum {
                        algo: calc.algo,
                        with_payload: payload,
                    },
                    None,
                    vec![
                        XArg::Val(cond),
                        XArg::Data(items),
                        XArg::Out(Loc::at(off), t),
                    ],
                    None,
                    what,
                ));
            }
        }
        Ok((verify, update))
    }

    /// `extern_instances` (PSA's externs; v1model programs have none).
    fn extern_instances(&mut self, root: &J<'a>) -> Result<()> {
        for x in root.list("extern_instances")? {
            let name = x.str_of("name")?.to_string();
            let ty = x.str_of("type")?.to_string();
            let id = self.extern_instance(&x, &name, &ty)?;
            self.extern_insts.insert(name, (id, ty));
        }
        Ok(())
    }
}
