//! The architecture: which one a document is written for, and its blocks.
//!
//! - v1model (`simple_switch`): the parser `parser`, the pipelines `ingress` and `egress`, the
//!   deparser `deparser` (the names `simple_switch` looks up); the `checksums` become the
//!   verify-checksum control (run after the parser, as BMv2's parser verifies them at its end)
//!   and the compute-checksum control (run before the deparser, as BMv2's deparser updates them
//!   first). The six blocks are V1Switch's, bound to the header, user metadata and
//!   `standard_metadata` regions ([`crate::layout`]).
//! - PSA (`psa_switch`): see [`crate::psa`].

use crate::json::{Result, J};
use crate::layout::Region;
use crate::Builder;
use p4_ir::*;

/// The architecture a document is written for, from its parsers' and pipelines' names (the
/// names the BMv2 targets look up).
pub fn detect(root: &J<'_>) -> Result<Arch> {
    let names = |key: &str| -> Result<Vec<String>> {
        root.list(key)?
            .iter()
            .map(|x| x.str_of("name").map(str::to_string))
            .collect()
    };
    let parsers = names("parsers")?;
    let pipelines = names("pipelines")?;
    let has = |v: &[String], n: &str| v.iter().any(|x| x == n);
    if has(&parsers, "ingress_parser") && has(&parsers, "egress_parser") {
        return Ok(Arch::Psa);
    }
    if has(&parsers, "parser") && has(&pipelines, "ingress") {
        return Ok(Arch::V1Model);
    }
    if has(&parsers, "main_parser") {
        return Err(root
            .get("parsers")?
            .unsupported("PNA programs (pna_nic's JSON); load the P4 source instead"));
    }
    Err(root.get("parsers")?.unsupported(format!(
        "an architecture with parsers {parsers:?} and pipelines {pipelines:?} \
         (nevermiss reads simple_switch's v1model and psa_switch's PSA)"
    )))
}

impl<'a> Builder<'a> {
    /// The architecture's blocks.
    pub(crate) fn assemble(&mut self, root: &J<'a>) -> Result<()> {
        match self.p.arch {
            Arch::Psa => self.assemble_psa(root),
            _ => self.assemble_v1model(root),
        }
    }

    pub(crate) fn parser_named(&self, name: &str, root: &J<'a>) -> Result<ParserId> {
        self.p
            .parsers
            .iter()
            .position(|p| p.name == name)
            .map(|i| i as ParserId)
            .ok_or_else(|| {
                root.get("parsers")
                    .map(|j| j.err(format!("no parser is called {name}")))
                    .unwrap_or_else(|e| e)
            })
    }

    pub(crate) fn pipeline_named(&self, name: &str, root: &J<'a>) -> Result<FnId> {
        self.pipeline_fns.get(name).copied().ok_or_else(|| {
            root.get("pipelines")
                .map(|j| j.err(format!("no pipeline is called {name}")))
                .unwrap_or_else(|e| e)
        })
    }

    pub(crate) fn deparser_named(&mut self, name: &str, root: &J<'a>) -> Result<FnId> {
        for d in root.list("deparsers")? {
            if d.str_of("name")? == name {
                return self.deparser(&d);
            }
        }
        Err(root
            .get("deparsers")?
            .err(format!("no deparser is called {name}")))
    }

    fn assemble_v1model(&mut self, root: &J<'a>) -> Result<()> {
        let parser = self.parser_named("parser", root)?;
        let ingress = self.pipeline_named("ingress", root)?;
        let egress = self.pipeline_named("egress", root)?;
        let deparser = self.deparser_named("deparser", root)?;
        let (verify, update) = self.checksums(root)?;
        let verify = self.add_fn("verifyChecksum".into(), FnKind::Control, verify);
        let update = self.add_fn("computeChecksum".into(), FnKind::Control, update);
        let hdr = param("hdr", "headers", Some(&self.lay.hdr));
        let meta = param("meta", "metadata", Some(&self.lay.meta));
        let sm = param(
            "standard_metadata",
            "standard_metadata_t",
            Some(&self.lay.sm),
        );
        let packet = |n: &str, t: &str| param(n, t, None);
        self.p.blocks = vec![
            block(
                "p",
                "parser",
                BlockBody::Parser(parser),
                vec![
                    packet("packet", "packet_in"),
                    hdr.clone(),
                    meta.clone(),
                    sm.clone(),
                ],
            ),
            block(
                "vr",
                "verifyChecksum",
                BlockBody::Control(verify),
                vec![hdr.clone(), meta.clone()],
            ),
            block(
                "ig",
                "ingress",
                BlockBody::Control(ingress),
                vec![hdr.clone(), meta.clone(), sm.clone()],
            ),
            block(
                "eg",
                "egress",
                BlockBody::Control(egress),
                vec![hdr.clone(), meta.clone(), sm],
            ),
            block(
                "ck",
                "computeChecksum",
                BlockBody::Control(update),
                vec![hdr.clone(), meta],
            ),
            block(
                "dep",
                "deparser",
                BlockBody::Control(deparser),
                vec![packet("packet", "packet_out"), hdr],
            ),
        ];
        Ok(())
    }
}

/// A block parameter bound to a frame region (`None`: `packet_in`/`packet_out`, or a
/// parameter the program cannot have).
pub(crate) fn param(name: &str, ty: &str, r: Option<&Region>) -> BlockParam {
    BlockParam {
        name: name.into(),
        type_name: ty.into(),
        region: r.map(|r| r.base),
        layout: r.and_then(|r| r.layout.clone()),
    }
}

/// An architecture block.
pub(crate) fn block(role: &str, name: &str, body: BlockBody, params: Vec<BlockParam>) -> Block {
    Block {
        role: role.into(),
        name: name.into(),
        body,
        params,
    }
}
