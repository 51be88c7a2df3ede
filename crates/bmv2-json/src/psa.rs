//! PSA (`psa_switch`): blocks and externs.

use crate::expr::Cx;
use crate::json::{Result, J};
use crate::layout::Region;
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
        let param = |name: &str, ty: &str, r: Option<&Region>| BlockParam {
            name: name.into(),
            type_name: ty.into(),
            region: r.map(|r| r.base),
            layout: r.and_then(|r| r.layout.clone()),
        };
        let std = |inst: &str, name: &str| {
            let ty = format!("{inst}_t");
            param(name, &ty, self.lay.regions.get(inst))
        };
        let none = |name: &str| param(name, "", None);
        let hdr = param("hdr", "headers", Some(&self.lay.hdr));
        let meta = param("user_meta", "metadata", Some(&self.lay.meta));
        let normal = param("normal_meta", "metadata", Some(&self.lay.meta));
        let packet = |n: &str, t: &str| param(n, t, None);
        let block = |role: &str, name: &str, body: BlockBody, params: Vec<BlockParam>| Block {
            role: role.into(),
            name: name.into(),
            body,
            params,
        };
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

    /// One instance of `extern_instances`.
    pub(crate) fn extern_instance(&mut self, x: &J<'a>, _name: &str, ty: &str) -> Result<ExternId> {
        Err(x.unsupported(format!("extern instances of type {ty}")))
    }

    /// A method call on an extern instance.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn extern_call(
        &mut self,
        p: &J<'a>,
        _x: ExternId,
        ty: &str,
        method: &str,
        _args: &[J<'a>],
        _cx: &Cx,
        _out: &mut Vec<Stmt>,
    ) -> Result<()> {
        Err(p.unsupported(format!("the method {ty}.{method}")))
    }
}
