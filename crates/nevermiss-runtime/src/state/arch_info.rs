//! What the switch knows of its architecture: the blocks of `main` and where the metadata
//! fields the architecture sets and reads live in the frame (PNA, v1model, PSA), resolved
//! once from the program when the switch is built. The packet flows themselves are
//! `crate::arch`'s.

use crate::types::PackageError;
use p4_ir::*;

/// A field of a metadata struct: absolute word offset and type.
pub type Field = Option<(u32, Ty)>;

/// Resolved PNA blocks and metadata fields.
#[derive(Clone, Debug, Default)]
pub struct PnaInfo {
    pub(crate) parser: ParserId,
    pub(crate) pre: Option<FnId>,
    pub(crate) control: FnId,
    pub(crate) deparser: FnId,
    pub(crate) p_input_port: Field,
    pub(crate) p_direction: Field,
    pub(crate) p_pass: Field,
    pub(crate) p_loopedback: Field,
    pub(crate) p_recirculated: Field,
    pub(crate) pre_input_port: Field,
    pub(crate) pre_parser_error: Field,
    pub(crate) pre_direction: Field,
    pub(crate) pre_pass: Field,
    pub(crate) pre_loopedback: Field,
    pub(crate) m_input_port: Field,
    pub(crate) m_direction: Field,
    pub(crate) m_pass: Field,
    pub(crate) m_loopedback: Field,
    pub(crate) m_recirculated: Field,
    pub(crate) m_timestamp: Field,
    pub(crate) m_parser_error: Field,
    /// `NET_TO_HOST` / `HOST_TO_NET` codes of `PNA_Direction_t` (enum member order).
    pub(crate) net_to_host: u64,
    pub(crate) host_to_net: u64,
}

/// Resolved v1model blocks and `standard_metadata_t` fields (offsets relative to `sm`).
#[derive(Clone, Debug, Default)]
pub struct V1Info {
    pub(crate) parser: ParserId,
    pub(crate) verify: Option<FnId>,
    pub(crate) ingress: FnId,
    pub(crate) egress: Option<FnId>,
    pub(crate) compute: Option<FnId>,
    pub(crate) deparser: FnId,
    /// Word offset of the `standard_metadata_t` region.
    pub(crate) sm: u32,
    /// Its words.
    pub(crate) sm_words: u32,
    pub(crate) drop_port: u64,
    pub(crate) ingress_port: Option<u32>,
    pub(crate) egress_spec: Option<u32>,
    pub(crate) egress_port: Option<u32>,
    pub(crate) instance_type: Option<u32>,
    pub(crate) packet_length: Option<u32>,
    pub(crate) mcast_grp: Option<u32>,
    pub(crate) egress_rid: Option<u32>,
    pub(crate) checksum_error: Option<u32>,
    pub(crate) parser_error: Option<u32>,
    pub(crate) ingress_ts: Option<u32>,
    pub(crate) egress_ts: Option<u32>,
    /// The queueing fields egress sees (`crate::queues`) and the priority that picks a queue.
    pub(crate) enq_timestamp: Option<u32>,
    pub(crate) enq_qdepth: Option<u32>,
    pub(crate) deq_timedelta: Option<u32>,
    pub(crate) deq_qdepth: Option<u32>,
    pub(crate) qid: Option<u32>,
    pub(crate) priority: Option<u32>,
    /// The user metadata region (preserved across resubmit / recirculate / clone).
    pub(crate) meta: Option<(u32, u32)>,
    /// Whether the program clones, resubmits or recirculates (then snapshots are taken).
    pub(crate) uses_copies: bool,
}

impl PnaInfo {
    /// The PNA pass as generated code runs it (`nevermiss_jit::Glue`): exactly the stores of
    /// [`pna_parse`] and the blocks of [`pna_finish`]'s first pass.
    pub(crate) fn glue(&self, prog: &Program, prefetch: Vec<u32>) -> nevermiss_jit::Glue {
        use nevermiss_jit::{GlueSrc as S, GlueStore};
        let put = |v: &mut Vec<GlueStore>, f: Field, src: S| {
            if let Some((off, t)) = f {
                v.push(GlueStore {
                    off,
                    width: t.width.min(64),
                    src,
                });
            }
        };
        let mut before = Vec::new();
        put(&mut before, self.p_input_port, S::Port);
        put(&mut before, self.p_direction, S::Direction);
        put(&mut before, self.p_pass, S::Pass);
        put(&mut before, self.p_loopedback, S::Const(0));
        put(&mut before, self.p_recirculated, S::Recirculated);
        let mut after = Vec::new();
        put(&mut after, self.m_input_port, S::Port);
        put(&mut after, self.m_direction, S::Direction);
        put(&mut after, self.m_pass, S::Pass);
        put(&mut after, self.m_loopedback, S::Const(0));
        put(&mut after, self.m_recirculated, S::Recirculated);
        put(&mut after, self.m_timestamp, S::Now);
        put(&mut after, self.m_parser_error, S::ParserError);
        if self.pre.is_some() {
            put(&mut after, self.pre_input_port, S::Port);
            put(&mut after, self.pre_parser_error, S::ParserError);
            put(&mut after, self.pre_direction, S::Direction);
            put(&mut after, self.pre_pass, S::Pass);
            put(&mut after, self.pre_loopedback, S::Const(0));
        }
        nevermiss_jit::Glue {
            zero_words: prog.zero_words,
            parser: self.parser,
            before_parse: before,
            after_parse: after,
            prefetch,
            controls: self
                .pre
                .into_iter()
                .chain([self.control, self.deparser])
                .collect(),
        }
    }
}

/// What the switch needs to know about its architecture: exactly one architecture's blocks and
/// metadata fields, the program's (`Program::arch`).
///
/// One per switch, read for every packet: the variants stay inline (no box to chase), whatever
/// their sizes.
#[derive(Clone, Debug)]
#[allow(clippy::large_enum_variant)]
pub enum ArchInfo {
    /// PNA (`PNA_NIC`, either dialect).
    Pna(PnaInfo),
    /// v1model (`V1Switch`).
    V1(V1Info),
    /// PSA (`PSA_Switch`).
    Psa(PsaInfo),
}

impl ArchInfo {
    /// The PNA info, when the program is PNA.
    #[inline]
    pub fn pna(&self) -> Option<&PnaInfo> {
        match self {
            ArchInfo::Pna(p) => Some(p),
            _ => None,
        }
    }

    /// The v1model info, when the program is v1model.
    #[inline]
    pub fn v1(&self) -> Option<&V1Info> {
        match self {
            ArchInfo::V1(v) => Some(v),
            _ => None,
        }
    }

    /// The PSA info, when the program is PSA.
    #[inline]
    pub fn psa(&self) -> Option<&PsaInfo> {
        match self {
            ArchInfo::Psa(p) => Some(p),
            _ => None,
        }
    }

    /// The frame regions (word offset, words) this module reads or writes itself, around the
    /// blocks it runs (`nevermiss_jit::compile`'s `arch`): the metadata fields it sets and
    /// reads, v1model's whole `standard_metadata_t` (`mark_to_drop` and `verify_checksum` write
    /// it too) and user metadata (carried across resubmits, recirculations and clones), PSA's
    /// regions carried from a deparser to the next parser.
    pub(crate) fn frame_regions(&self) -> Vec<(u32, u32)> {
        let mut v = Vec::new();
        let mut field = |f: Field| {
            if let Some((o, t)) = f {
                v.push((o, t.words()));
            }
        };
        if let Some(p) = self.pna() {
            for f in [
                p.p_input_port,
                p.p_direction,
                p.p_pass,
                p.p_loopedback,
                p.p_recirculated,
                p.pre_input_port,
                p.pre_parser_error,
                p.pre_direction,
                p.pre_pass,
                p.pre_loopedback,
                p.m_input_port,
                p.m_direction,
                p.m_pass,
                p.m_loopedback,
                p.m_recirculated,
                p.m_timestamp,
                p.m_parser_error,
            ] {
                field(f);
            }
        }
        if let Some(p) = self.psa() {
            for f in [
                p.ip_port,
                p.ip_path,
                p.ig_port,
                p.ig_path,
                p.ig_ts,
                p.ig_perr,
                p.io_clone,
                p.io_sess,
                p.io_drop,
                p.io_resubmit,
                p.io_mcast,
                p.io_port,
                p.io_cos,
                p.ep_port,
                p.ep_path,
                p.eg_port,
                p.eg_path,
                p.eg_instance,
                p.eg_ts,
                p.eg_perr,
                p.eg_cos,
                p.eo_clone,
                p.eo_sess,
                p.eo_drop,
                p.ed_port,
            ] {
                field(f);
            }
            for (from, to, w) in [p.resub, p.normal, p.ci2e, p.ce2e, p.recirc]
                .into_iter()
                .flatten()
            {
                v.push((from, w));
                v.push((to, w));
            }
        }
        if let Some(p) = self.v1() {
            v.push((p.sm, p.sm_words));
            v.extend(p.meta);
        }
        v
    }
}

fn field_of(b: &Block, param: usize, name: &str) -> Field {
    let p = b.params.get(param)?;
    let base = p.region?;
    let (off, l) = p.layout.as_ref()?.field(name)?;
    match l {
        Layout::Scalar(t) => Some((base + off, *t)),
        _ => None,
    }
}

fn rel_field(b: &Block, param: usize, name: &str) -> Option<u32> {
    let p = b.params.get(param)?;
    let (off, _) = p.layout.as_ref()?.field(name)?;
    Some(off)
}

fn control_of(b: Option<&Block>) -> Option<FnId> {
    match b?.body {
        BlockBody::Control(f) => Some(f),
        BlockBody::Parser(_) => None,
    }
}

fn parser_of(b: Option<&Block>) -> Option<ParserId> {
    match b?.body {
        BlockBody::Parser(p) => Some(p),
        BlockBody::Control(_) => None,
    }
}

impl ArchInfo {
    /// Resolves the architecture's blocks and metadata fields of a program.
    pub fn new(p: &Program) -> Result<ArchInfo, PackageError> {
        Ok(match p.arch {
            Arch::PnaV06 | Arch::PnaV07 => ArchInfo::Pna(PnaInfo::new(p)?),
            Arch::V1Model => ArchInfo::V1(V1Info::new(p)?),
            Arch::Psa => ArchInfo::Psa(PsaInfo::new(p)?),
        })
    }
}

impl PnaInfo {
    /// The PNA_NIC package's blocks (old dialect: with the pre control) and metadata fields.
    fn new(p: &Program) -> Result<PnaInfo, PackageError> {
        let bl = &p.blocks;
        let old = p.arch == Arch::PnaV06 && bl.len() == 4;
        let (pb, pre, cb, db) = if old {
            (bl.first(), bl.get(1), bl.get(2), bl.get(3))
        } else {
            (bl.first(), None, bl.get(1), bl.get(2))
        };
        let (Some(parser), Some(control), Some(deparser)) =
            (parser_of(pb), control_of(cb), control_of(db))
        else {
            return Err(PackageError::PnaBlocks);
        };
        let (pb, cb) = (pb.unwrap_or(&bl[0]), cb.unwrap_or(&bl[0]));
        let (nth, htn) = p
            .enums
            .iter()
            .find(|(n, _)| n == "PNA_Direction_t")
            .map(|(_, ms)| {
                let pos = |x: &str| ms.iter().position(|m| m == x).unwrap_or(0) as u64;
                (pos("NET_TO_HOST"), pos("HOST_TO_NET"))
            })
            .unwrap_or((0, 1));
        let mut i = PnaInfo {
            parser,
            pre: control_of(pre),
            control,
            deparser,
            p_input_port: field_of(pb, 3, "input_port"),
            p_direction: field_of(pb, 3, "direction"),
            p_pass: field_of(pb, 3, "pass"),
            p_loopedback: field_of(pb, 3, "loopedback"),
            p_recirculated: field_of(pb, 3, "recirculated"),
            m_input_port: field_of(cb, 2, "input_port"),
            m_direction: field_of(cb, 2, "direction"),
            m_pass: field_of(cb, 2, "pass"),
            m_loopedback: field_of(cb, 2, "loopedback"),
            m_recirculated: field_of(cb, 2, "recirculated"),
            m_timestamp: field_of(cb, 2, "timestamp"),
            m_parser_error: field_of(cb, 2, "parser_error"),
            net_to_host: nth,
            host_to_net: htn,
            ..PnaInfo::default()
        };
        if let Some(pre) = pre {
            i.pre_input_port = field_of(pre, 2, "input_port");
            i.pre_parser_error = field_of(pre, 2, "parser_error");
            i.pre_direction = field_of(pre, 2, "direction");
            i.pre_pass = field_of(pre, 2, "pass");
            i.pre_loopedback = field_of(pre, 2, "loopedback");
        }
        Ok(i)
    }
}

impl V1Info {
    /// The V1Switch package's blocks and `standard_metadata_t` fields.
    fn new(p: &Program) -> Result<V1Info, PackageError> {
        let prog = p;
        let bl = &p.blocks;
        if bl.len() < 6 {
            return Err(PackageError::V1BlockCount);
        }
        let (Some(parser), Some(ingress), Some(deparser)) = (
            parser_of(bl.first()),
            control_of(bl.get(2)),
            control_of(bl.get(5)),
        ) else {
            return Err(PackageError::V1Blocks);
        };
        let ig = &bl[2];
        let Some(sm) = ig.params.get(2).and_then(|p| p.region) else {
            return Err(PackageError::V1StandardMetadata);
        };
        let f = |n: &str| rel_field(ig, 2, n);
        let sm_words = ig.params[2]
            .layout
            .as_ref()
            .map_or(0, |l| l.words(&prog.headers));
        let meta = ig.params.get(1).and_then(|p| {
            let w = p.layout.as_ref()?.words(&prog.headers);
            Some((p.region?, w))
        });
        let uses_copies = p.functions.iter().any(|fun| uses_copy_ops(&fun.body));
        Ok(V1Info {
            parser,
            verify: control_of(bl.get(1)),
            ingress,
            egress: control_of(bl.get(3)),
            compute: control_of(bl.get(4)),
            deparser,
            sm,
            sm_words,
            drop_port: p4_ir::ir::V1_DROP_PORT,
            ingress_port: f("ingress_port"),
            egress_spec: f("egress_spec"),
            egress_port: f("egress_port"),
            instance_type: f("instance_type"),
            packet_length: f("packet_length"),
            mcast_grp: f("mcast_grp"),
            egress_rid: f("egress_rid"),
            checksum_error: f("checksum_error"),
            parser_error: f("parser_error"),
            ingress_ts: f("ingress_global_timestamp"),
            egress_ts: f("egress_global_timestamp"),
            enq_timestamp: f("enq_timestamp"),
            enq_qdepth: f("enq_qdepth"),
            deq_timedelta: f("deq_timedelta"),
            deq_qdepth: f("deq_qdepth"),
            qid: f("qid"),
            priority: f("priority"),
            meta,
            uses_copies,
        })
    }
}

fn uses_copy_ops(ss: &[Stmt]) -> bool {
    ss.iter().any(|s| match s {
        Stmt::Extern(x) => matches!(x.op, XOp::Clone | XOp::Resubmit | XOp::Recirculate),
        Stmt::If(_, a, b) => uses_copy_ops(a) || uses_copy_ops(b),
        Stmt::Switch { bodies, .. } => bodies.iter().any(|b| uses_copy_ops(b)),
        Stmt::Loop { body, update, .. } => uses_copy_ops(body) || uses_copy_ops(update),
        _ => false,
    })
}

/// A metadata region carried from one block's parameter to another's: (from, to, words).
pub(crate) type Carry = Option<(u32, u32, u32)>;

/// Resolved PSA blocks and metadata fields (PSA v1.2 §6; BMv2 `psa_switch`).
#[derive(Clone, Debug, Default)]
pub struct PsaInfo {
    pub(crate) ip: ParserId,
    pub(crate) ig: FnId,
    pub(crate) id: FnId,
    pub(crate) ep: ParserId,
    pub(crate) eg: FnId,
    pub(crate) ed: FnId,
    pub(crate) ip_port: Field,
    pub(crate) ip_path: Field,
    pub(crate) ig_port: Field,
    pub(crate) ig_path: Field,
    pub(crate) ig_ts: Field,
    pub(crate) ig_perr: Field,
    pub(crate) io_clone: Field,
    pub(crate) io_sess: Field,
    pub(crate) io_drop: Field,
    pub(crate) io_resubmit: Field,
    pub(crate) io_mcast: Field,
    pub(crate) io_port: Field,
    pub(crate) io_cos: Field,
    pub(crate) ep_port: Field,
    pub(crate) ep_path: Field,
    pub(crate) eg_port: Field,
    pub(crate) eg_path: Field,
    pub(crate) eg_instance: Field,
    pub(crate) eg_ts: Field,
    pub(crate) eg_perr: Field,
    pub(crate) eg_cos: Field,
    pub(crate) eo_clone: Field,
    pub(crate) eo_sess: Field,
    pub(crate) eo_drop: Field,
    pub(crate) ed_port: Field,
    /// Ingress deparser `resubmit_meta` → ingress parser `resubmit_meta`.
    pub(crate) resub: Carry,
    /// Ingress deparser `normal_meta` → egress parser `normal_meta`.
    pub(crate) normal: Carry,
    /// Ingress deparser `clone_i2e_meta` → egress parser `clone_i2e_meta`.
    pub(crate) ci2e: Carry,
    /// Egress deparser `clone_e2e_meta` → egress parser `clone_e2e_meta`.
    pub(crate) ce2e: Carry,
    /// Egress deparser `recirculate_meta` → ingress parser `recirculate_meta`.
    pub(crate) recirc: Carry,
    /// Codes of `PSA_PacketPath_t` members: NORMAL, NORMAL_UNICAST, NORMAL_MULTICAST,
    /// CLONE_I2E, CLONE_E2E, RESUBMIT, RECIRCULATE.
    pub(crate) paths: [u64; 7],
}

/// `PSA_PORT_RECIRCULATE`.
pub const PSA_PORT_RECIRCULATE: u64 = 0xffff_fffa;

impl PsaInfo {
    fn new(p: &Program) -> Result<PsaInfo, PackageError> {
        let bl = &p.blocks;
        if bl.len() < 6 {
            return Err(PackageError::PsaBlockCount);
        }
        let (Some(ip), Some(ig), Some(id), Some(ep), Some(eg), Some(ed)) = (
            parser_of(bl.first()),
            control_of(bl.get(1)),
            control_of(bl.get(2)),
            parser_of(bl.get(3)),
            control_of(bl.get(4)),
            control_of(bl.get(5)),
        ) else {
            return Err(PackageError::PsaOrder);
        };
        let carry = |from: (usize, usize), to: (usize, usize)| -> Carry {
            let a = bl.get(from.0)?.params.get(from.1)?;
            let b = bl.get(to.0)?.params.get(to.1)?;
            let w = a.layout.as_ref()?.words(&p.headers);
            Some((a.region?, b.region?, w))
        };
        let paths = p
            .enums
            .iter()
            .find(|(n, _)| n == "PSA_PacketPath_t")
            .map(|(_, ms)| {
                let pos = |x: &str| ms.iter().position(|m| m == x).unwrap_or(0) as u64;
                [
                    pos("NORMAL"),
                    pos("NORMAL_UNICAST"),
                    pos("NORMAL_MULTICAST"),
                    pos("CLONE_I2E"),
                    pos("CLONE_E2E"),
                    pos("RESUBMIT"),
                    pos("RECIRCULATE"),
                ]
            })
            .unwrap_or([0, 1, 2, 3, 4, 5, 6]);
        Ok(PsaInfo {
            ip,
            ig,
            id,
            ep,
            eg,
            ed,
            ip_port: field_of(&bl[0], 3, "ingress_port"),
            ip_path: field_of(&bl[0], 3, "packet_path"),
            ig_port: field_of(&bl[1], 2, "ingress_port"),
            ig_path: field_of(&bl[1], 2, "packet_path"),
            ig_ts: field_of(&bl[1], 2, "ingress_timestamp"),
            ig_perr: field_of(&bl[1], 2, "parser_error"),
            io_clone: field_of(&bl[1], 3, "clone"),
            io_sess: field_of(&bl[1], 3, "clone_session_id"),
            io_drop: field_of(&bl[1], 3, "drop"),
            io_resubmit: field_of(&bl[1], 3, "resubmit"),
            io_mcast: field_of(&bl[1], 3, "multicast_group"),
            io_port: field_of(&bl[1], 3, "egress_port"),
            io_cos: field_of(&bl[1], 3, "class_of_service"),
            ep_port: field_of(&bl[3], 3, "egress_port"),
            ep_path: field_of(&bl[3], 3, "packet_path"),
            eg_port: field_of(&bl[4], 2, "egress_port"),
            eg_path: field_of(&bl[4], 2, "packet_path"),
            eg_instance: field_of(&bl[4], 2, "instance"),
            eg_ts: field_of(&bl[4], 2, "egress_timestamp"),
            eg_perr: field_of(&bl[4], 2, "parser_error"),
            eg_cos: field_of(&bl[4], 2, "class_of_service"),
            eo_clone: field_of(&bl[4], 3, "clone"),
            eo_sess: field_of(&bl[4], 3, "clone_session_id"),
            eo_drop: field_of(&bl[4], 3, "drop"),
            ed_port: field_of(&bl[5], 6, "egress_port"),
            resub: carry((2, 2), (0, 4)),
            normal: carry((2, 3), (3, 4)),
            ci2e: carry((2, 1), (3, 5)),
            ce2e: carry((5, 1), (3, 6)),
            recirc: carry((5, 2), (0, 5)),
            paths,
        })
    }
}
