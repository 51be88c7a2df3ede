//! PSA (`psa_switch`): blocks and externs.

use crate::arch::{block, param};
use crate::expr::{Cx, Place};
use crate::json::{Result, J};
use crate::prims::xcall;
use crate::Builder;
use p4_ir::*;

impl<'a> Builder<'a> {
    /// PSA_Switch's six blocks, in the order and with the parameters of `psa.p4`'s
    /// `IngressParser`, `Ingress`, `IngressDeparser`, `EgressParser`, `Egress` and
    /// `EgressDeparser` (the runtime reads the standard metadata by parameter position and
    /// field name, PSA v1.2 §6). psa_switch looks its blocks up by the names `ingress_parser`,
    /// `ingress`, `ingress_deparser`, `egress_parser`, `egress`, `egress_deparser`, and its
    /// standard metadata as the instances `psa_ingress_parser_input_metadata`, ...
    ///
    /// The headers and the user metadata are one set of instances shared by ingress and
    /// egress, as in psa_switch, whose egress makes the headers invalid but keeps the metadata
    /// of the packet's ingress (`PHV::reset`): the user metadata region is each deparser's
    /// `normal_meta` and the egress parser's, so the runtime carries it from ingress to egress
    /// of a normal (unicast or multicast) packet. Clones, resubmitted and recirculated packets
    /// start with their metadata reset (`reset_metadata` in psa_switch): their carried
    /// parameters have no region.
    pub(crate) fn assemble_psa(&mut self, root: &J<'a>) -> Result<()> {
        if let Some(c) = root.list("checksums")?.first() {
            return Err(c.unsupported("top-level checksums in a PSA program"));
        }
        let ip = self.parser_named("ingress_parser", root)?;
        let ig = self.pipeline_named("ingress", root)?;
        let id = self.deparser_named("ingress_deparser", root)?;
        let ep = self.parser_named("egress_parser", root)?;
        let eg = self.pipeline_named("egress", root)?;
        let ed = self.deparser_named("egress_deparser", root)?;
        let std = |inst: &str, name: &str| {
            let ty = format!("{inst}_t");
            param(name, &ty, self.lay.regions.get(inst))
        };
        let none = |name: &str| param(name, "", None);
        let hdr = param("hdr", "headers", Some(&self.lay.hdr));
        let meta = param("user_meta", "metadata", Some(&self.lay.meta));
        let normal = param("normal_meta", "metadata", Some(&self.lay.meta));
        let packet = |n: &str, t: &str| param(n, t, None);
        self.p.blocks = vec![
            block(
                "ingress.ip",
                "ingress_parser",
                BlockBody::Parser(ip),
                vec![
                    packet("buffer", "packet_in"),
                    hdr.clone(),
                    meta.clone(),
                    std("psa_ingress_parser_input_metadata", "istd"),
                    none("resubmit_meta"),
                    none("recirculate_meta"),
                ],
            ),
            block(
                "ingress.ig",
                "ingress",
                BlockBody::Control(ig),
                vec![
                    hdr.clone(),
                    meta.clone(),
                    std("psa_ingress_input_metadata", "istd"),
                    std("psa_ingress_output_metadata", "ostd"),
                ],
            ),
            block(
                "ingress.id",
                "ingress_deparser",
                BlockBody::Control(id),
                vec![
                    packet("buffer", "packet_out"),
                    none("clone_i2e_meta"),
                    none("resubmit_meta"),
                    normal.clone(),
                    hdr.clone(),
                    meta.clone(),
                    std("psa_ingress_output_metadata", "istd"),
                ],
            ),
            block(
                "egress.ep",
                "egress_parser",
                BlockBody::Parser(ep),
                vec![
                    packet("buffer", "packet_in"),
                    hdr.clone(),
                    meta.clone(),
                    std("psa_egress_parser_input_metadata", "istd"),
                    normal,
                    none("clone_i2e_meta"),
                    none("clone_e2e_meta"),
                ],
            ),
            block(
                "egress.eg",
                "egress",
                BlockBody::Control(eg),
                vec![
                    hdr.clone(),
                    meta.clone(),
                    std("psa_egress_input_metadata", "istd"),
                    std("psa_egress_output_metadata", "ostd"),
                ],
            ),
            block(
                "egress.ed",
                "egress_deparser",
                BlockBody::Control(ed),
                vec![
                    packet("buffer", "packet_out"),
                    none("clone_e2e_meta"),
                    none("recirculate_meta"),
                    hdr,
                    meta,
                    std("psa_egress_output_metadata", "istd"),
                    std("psa_egress_deparser_input_metadata", "edstd"),
                ],
            ),
        ];
        Ok(())
    }

    /// One instance of `extern_instances`, as psa_switch has it (`targets/psa_switch/externs`):
    /// `Counter` and `DirectCounter` are the counter arrays of the same name (BMv2 counts
    /// packets and bytes whatever the declared type); `Meter` is a meter array of its own
    /// (`n_meters`, `type`, `rate_count` 2). Other PSA externs are refused by name.
    pub(crate) fn extern_instance(&mut self, x: &J<'a>, name: &str, ty: &str) -> Result<ExternId> {
        match ty {
            "Counter" | "DirectCounter" => self
                .counters
                .get(name)
                .copied()
                .ok_or_else(|| x.err(format!("the {ty} {name} has no counter array"))),
            "Meter" => {
                let attr = |n: &str| attr_value(x, n);
                let int = |j: &J<'a>| -> Result<u64> {
                    let v = j.get("value")?;
                    match v.v.as_u64() {
                        Some(n) => Ok(n),
                        None => num_traits::ToPrimitive::to_u64(&v.hexstr()?)
                            .ok_or_else(|| v.err("expected a non-negative number")),
                    }
                };
                if int(&attr("rate_count")?)? != 2 {
                    return Err(x.unsupported("meters with a rate count other than 2"));
                }
                if int(&attr("is_direct")?)? != 0 {
                    return Err(x.unsupported("a direct meter among the extern instances"));
                }
                let size = int(&attr("n_meters")?)?;
                let size = u32::try_from(size).map_err(|_| x.err("too many meters"))?;
                let bytes = attr("type")?.str_of("value")? == "bytes";
                Ok(self.add_extern(name.to_string(), ExternKind::Meter { size, bytes }))
            }
            "Hash" => {
                let a = attr_value(x, "algo")?;
                let an = a.str_of("value")?;
                let Some(algo) = crate::externs::algo(an) else {
                    return Err(a.unsupported(format!("the hash algorithm {an}")));
                };
                Ok(self.add_extern(name.to_string(), ExternKind::Hash { algo }))
            }
            "InternetChecksum" => {
                // The running sum is per packet (psa_switch's object is cleared by `clear`,
                // which p4c's programs call first).
                let state = self.alloc_state(1, x)?;
                Ok(self.add_extern(name.to_string(), ExternKind::InternetChecksum { state }))
            }
            _ => Err(x.unsupported(format!("PSA extern instances of type {ty}"))),
        }
    }

    /// A method call on an extern instance: `_Counter_count(c, index)`,
    /// `_Meter_execute(m, index, color)`; psa_switch's meter writes PSA's colors
    /// (`PSA_MeterColor_t`: RED 0, GREEN 1, YELLOW 2).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn extern_call(
        &mut self,
        p: &J<'a>,
        x: ExternId,
        ty: &str,
        method: &str,
        args: &[J<'a>],
        cx: &Cx,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let arg = |k: usize| nth_arg(p, args, k, ty, method);
        let what = format!("{ty}.{method}");
        match (ty, method) {
            ("Counter", "count") => {
                let idx = self.int(&arg(0)?, cx, out, None)?;
                out.push(xcall(
                    XOp::CounterCount,
                    Some(x),
                    vec![XArg::Val(idx), XArg::None],
                    None,
                    what,
                ));
            }
            ("Meter", "execute") => {
                let idx = self.int(&arg(0)?, cx, out, None)?;
                let Place::Scalar(dl, dt) = self.place(&arg(1)?, cx, out)? else {
                    return Err(p.err("the color's destination is a variable-length field"));
                };
                let colors = self.psa_colors();
                out.push(xcall(
                    XOp::MeterExecute { colors },
                    Some(x),
                    vec![XArg::Val(idx), XArg::None, XArg::None],
                    Some((dl, dt)),
                    what,
                ));
            }
            ("Hash", "get_hash" | "get_hash_mod") => {
                // psa_switch: the fields' bits back to back (`get_hash`), plus
                // `base + hash % max` (`get_hash_mod`).
                let Place::Scalar(dl, dt) = self.place(&arg(0)?, cx, out)? else {
                    return Err(p.err("the hash's destination is a variable-length field"));
                };
                let (base, list, max) = if method == "get_hash" {
                    (XArg::None, arg(1)?, XArg::None)
                } else {
                    let base = XArg::Val(self.int(&arg(1)?, cx, out, None)?);
                    let max = XArg::Val(self.int(&arg(3)?, cx, out, None)?);
                    (base, arg(2)?, max)
                };
                let data = self.field_list_data(&list, cx, out)?;
                out.push(xcall(
                    XOp::HashGet,
                    Some(x),
                    vec![base, data, max],
                    Some((dl, dt)),
                    what,
                ));
            }
            ("InternetChecksum", _) => self.internet_checksum(p, x, method, args, cx, out)?,
            _ => return Err(p.unsupported(format!("the method {ty}.{method}"))),
        }
        Ok(())
    }

    /// psa_switch's `InternetChecksum` methods: `clear`, `add` and `subtract` of a field list,
    /// `get` (the sum's complement), `get_state`, `set_state`, and `get_verify(dst, value)`
    /// (whether `value` equals what `get` gives).
    fn internet_checksum(
        &mut self,
        p: &J<'a>,
        x: ExternId,
        method: &str,
        args: &[J<'a>],
        cx: &Cx,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let arg = |k: usize| nth_arg(p, args, k, "InternetChecksum", method);
        let what = format!("InternetChecksum.{method}");
        let call = |op: XOp, args: Vec<XArg>, ret: Option<(Loc, Ty)>| {
            xcall(op, Some(x), args, ret, what.clone())
        };
        let dst = |b: &mut Self, out: &mut Vec<Stmt>| -> Result<(Loc, Ty)> {
            match b.place(&arg(0)?, cx, out)? {
                Place::Scalar(l, t) => Ok((l, t)),
                Place::Varbit(..) => Err(p.err("the destination is a variable-length field")),
            }
        };
        match method {
            "clear" => out.push(call(XOp::ChecksumClear, vec![], None)),
            "add" | "subtract" => {
                let data = self.field_list_data(&arg(0)?, cx, out)?;
                let op = if method == "add" {
                    XOp::CsumAdd
                } else {
                    XOp::CsumSubtract
                };
                out.push(call(op, vec![data], None));
            }
            "get" => {
                let d = dst(self, out)?;
                out.push(call(XOp::ChecksumGet, vec![], Some(d)));
            }
            "get_state" => {
                let d = dst(self, out)?;
                out.push(call(XOp::CsumGetState, vec![], Some(d)));
            }
            "set_state" => {
                let v = self.int(&arg(0)?, cx, out, Some(16))?;
                out.push(call(XOp::CsumSetState, vec![XArg::Val(v)], None));
            }
            "get_verify" => {
                let (dl, dt) = dst(self, out)?;
                let t16 = Ty::bits(16);
                let tmp = self.alloc_temp(1, p)?;
                out.push(call(XOp::ChecksumGet, vec![], Some((Loc::at(tmp), t16))));
                let v = self.int(&arg(1)?, cx, out, Some(16))?;
                let v = crate::expr::cast(v, t16);
                let eq = Expr::Cmp(CmpOp::Eq, t16, Box::new(v), Box::new(Expr::Load(tmp, t16)));
                out.push(Stmt::Assign(dl, dt, crate::expr::cast(eq, dt)));
            }
            _ => {
                return Err(p.unsupported(format!("the method InternetChecksum.{method}")));
            }
        }
        Ok(())
    }

    /// A `field_list` argument of a PSA extern method as data: its items' bits back to back
    /// (psa_switch takes the fields as they are, valid or not).
    fn field_list_data(&mut self, j: &J<'a>, cx: &Cx, out: &mut Vec<Stmt>) -> Result<XArg> {
        if j.str_of("type")? != "field_list" {
            return Err(j.err("expected a field_list"));
        }
        let mut items = Vec::new();
        for item in j.get("value")?.arr()? {
            items.push(Datum::Bits(self.int(&item, cx, out, None)?));
        }
        Ok(XArg::Data(items))
    }

    /// The codes of green, yellow and red: `PSA_MeterColor_t`'s values in the JSON, else
    /// psa.p4's (RED 0, GREEN 1, YELLOW 2).
    fn psa_colors(&self) -> [u64; 3] {
        let members = self
            .p
            .enums
            .iter()
            .find(|(n, _)| n == "PSA_MeterColor_t")
            .map(|(_, ms)| ms.clone())
            .unwrap_or_default();
        let code = |m: &str, d: u64| members.iter().position(|x| x == m).map_or(d, |i| i as u64);
        [code("GREEN", 1), code("YELLOW", 2), code("RED", 0)]
    }
}

/// The attribute `name` of an extern instance (`attribute_values`).
fn attr_value<'a>(x: &J<'a>, name: &str) -> Result<J<'a>> {
    x.list("attribute_values")?
        .into_iter()
        .find(|a| a.str_of("name").is_ok_and(|v| v == name))
        .ok_or_else(|| x.err(format!("the extern instance has no attribute {name}")))
}

/// The `k`-th argument of a call to `ty.method`, or an error naming the call at `p`.
fn nth_arg<'a>(p: &J<'a>, args: &[J<'a>], k: usize, ty: &str, method: &str) -> Result<J<'a>> {
    args.get(k)
        .cloned()
        .ok_or_else(|| p.err(format!("{ty}.{method} needs {} arguments", k + 1)))
}
