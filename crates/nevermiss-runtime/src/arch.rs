//! The architectures: how a packet goes through the blocks of `main`.
//!
//! - PNA (both dialects, PNA spec §"Packet processing"): main parser → (old dialect: pre
//!   control) → main control → main deparser. The packet leaves by the port given to the last
//!   `send_to_port` call; `drop_packet()` or no call at all drops it (as PSA's `drop` default).
//!   A parser error does not drop the packet: the main control sees it in
//!   `istd.parser_error`. `mirror_packet(slot, session)` sends a copy of the deparsed packet to
//!   the session's port; `recirculate()` (old dialect) runs the deparsed packet again.
//! - v1model (BMv2 `simple_switch` semantics): parser → verifyChecksum → ingress → traffic
//!   manager (clone I2E, resubmit, multicast via `mcast_grp`, drop when `egress_spec` is the
//!   drop port 511, else unicast to `egress_spec`) → egress → computeChecksum → deparser
//!   (clone E2E, recirculate, truncate).

use crate::exec::{Exec, Flow};
use crate::switch::Switch;
use p4_ir::*;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::PoisonError;

/// A field of a metadata struct: absolute word offset and type.
pub type Field = Option<(u32, Ty)>;

/// Resolved PNA blocks and metadata fields.
#[derive(Clone, Debug, Default)]
pub struct PnaInfo {
    pub parser: ParserId,
    pub pre: Option<FnId>,
    pub control: FnId,
    pub deparser: FnId,
    pub p_input_port: Field,
    pub p_direction: Field,
    pub p_pass: Field,
    pub p_loopedback: Field,
    pub p_recirculated: Field,
    pub pre_input_port: Field,
    pub pre_parser_error: Field,
    pub pre_direction: Field,
    pub pre_pass: Field,
    pub pre_loopedback: Field,
    pub m_input_port: Field,
    pub m_direction: Field,
    pub m_pass: Field,
    pub m_loopedback: Field,
    pub m_recirculated: Field,
    pub m_timestamp: Field,
    pub m_parser_error: Field,
    /// `NET_TO_HOST` / `HOST_TO_NET` codes of `PNA_Direction_t` (enum member order).
    pub net_to_host: u64,
    pub host_to_net: u64,
}

/// Resolved v1model blocks and `standard_metadata_t` fields (offsets relative to `sm`).
#[derive(Clone, Debug, Default)]
pub struct V1Info {
    pub parser: ParserId,
    pub verify: Option<FnId>,
    pub ingress: FnId,
    pub egress: Option<FnId>,
    pub compute: Option<FnId>,
    pub deparser: FnId,
    /// Word offset of the `standard_metadata_t` region.
    pub sm: u32,
    /// Its words.
    pub sm_words: u32,
    pub drop_port: u64,
    pub ingress_port: Option<u32>,
    pub egress_spec: Option<u32>,
    pub egress_port: Option<u32>,
    pub instance_type: Option<u32>,
    pub packet_length: Option<u32>,
    pub mcast_grp: Option<u32>,
    pub egress_rid: Option<u32>,
    pub checksum_error: Option<u32>,
    pub parser_error: Option<u32>,
    pub ingress_ts: Option<u32>,
    pub egress_ts: Option<u32>,
    /// The queueing fields egress sees (`crate::queues`) and the priority that picks a queue.
    pub enq_timestamp: Option<u32>,
    pub enq_qdepth: Option<u32>,
    pub deq_timedelta: Option<u32>,
    pub deq_qdepth: Option<u32>,
    pub qid: Option<u32>,
    pub priority: Option<u32>,
    /// The user metadata region (preserved across resubmit / recirculate / clone).
    pub meta: Option<(u32, u32)>,
    /// Whether the program clones, resubmits or recirculates (then snapshots are taken).
    pub uses_copies: bool,
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

/// What the switch needs to know about its architecture.
#[derive(Clone, Debug, Default)]
pub struct ArchInfo {
    pub pna: Option<PnaInfo>,
    pub v1: Option<V1Info>,
    pub psa: Option<PsaInfo>,
}

impl ArchInfo {
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
        if let Some(p) = &self.pna {
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
        if let Some(p) = &self.psa {
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
        if let Some(p) = &self.v1 {
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
    pub fn new(p: &Program) -> Result<ArchInfo, String> {
        let prog = p;
        let bl = &p.blocks;
        match p.arch {
            Arch::PnaV06 | Arch::PnaV07 => {
                let old = p.arch == Arch::PnaV06 && bl.len() == 4;
                let (pb, pre, cb, db) = if old {
                    (bl.first(), bl.get(1), bl.get(2), bl.get(3))
                } else {
                    (bl.first(), None, bl.get(1), bl.get(2))
                };
                let (Some(parser), Some(control), Some(deparser)) =
                    (parser_of(pb), control_of(cb), control_of(db))
                else {
                    return Err(
                        "the PNA_NIC package needs a parser, a control and a deparser".into(),
                    );
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
                Ok(ArchInfo {
                    pna: Some(i),
                    ..ArchInfo::default()
                })
            }
            Arch::V1Model => {
                if bl.len() < 6 {
                    return Err("the V1Switch package needs six blocks".into());
                }
                let (Some(parser), Some(ingress), Some(deparser)) = (
                    parser_of(bl.first()),
                    control_of(bl.get(2)),
                    control_of(bl.get(5)),
                ) else {
                    return Err(
                        "the V1Switch package needs a parser, an ingress and a deparser".into(),
                    );
                };
                let ig = &bl[2];
                let Some(sm) = ig.params.get(2).and_then(|p| p.region) else {
                    return Err("the ingress control has no standard_metadata parameter".into());
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
                Ok(ArchInfo {
                    pna: None,
                    psa: None,
                    v1: Some(V1Info {
                        parser,
                        verify: control_of(bl.get(1)),
                        ingress,
                        egress: control_of(bl.get(3)),
                        compute: control_of(bl.get(4)),
                        deparser,
                        sm,
                        sm_words,
                        drop_port: 511,
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
                    }),
                })
            }
            Arch::Psa => Ok(ArchInfo {
                psa: Some(PsaInfo::new(p)?),
                ..ArchInfo::default()
            }),
        }
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

/// `v.extend_from_slice(s)`, without a call for a slice of up to 128 bytes (a packet's payload
/// after its headers, or a whole small packet): two overlapping 16-, 32- or 64-byte copies.
#[inline(always)]
fn extend_small(v: &mut Vec<u8>, s: &[u8]) {
    let n = s.len();
    if !(16..=128).contains(&n) {
        return v.extend_from_slice(s);
    }
    v.reserve(n);
    let len = v.len();
    // SAFETY: `reserve` made room for `n` more bytes; every copy reads inside `s` (its blocks
    // are at most `n` bytes long, the second ending at `s`'s end) and writes inside the room;
    // `set_len` covers the `n` bytes they wrote.
    unsafe {
        let d = v.as_mut_ptr().add(len);
        let src = s.as_ptr();
        macro_rules! two {
            ($t:ty) => {{
                let k = std::mem::size_of::<$t>();
                let a = std::ptr::read_unaligned(src.cast::<$t>());
                let b = std::ptr::read_unaligned(src.add(n - k).cast::<$t>());
                std::ptr::write_unaligned(d.cast::<$t>(), a);
                std::ptr::write_unaligned(d.add(n - k).cast::<$t>(), b);
            }};
        }
        if n <= 32 {
            two!([u8; 16]);
        } else if n <= 64 {
            two!([u8; 32]);
        } else {
            two!([u8; 64]);
        }
        v.set_len(len + n);
    }
}

/// Output packets of one input packet (buffers reused between packets).
#[derive(Default, Debug)]
pub struct Outputs {
    bufs: Vec<(u32, Vec<u8>)>,
    n: usize,
    /// Copies bound for an egress queue (`crate::queues`): the run loop takes them after each
    /// packet. Empty unless the switch has queues (`Config::queues`).
    pub(crate) deferred: Vec<Deferred>,
}

impl Outputs {
    pub fn clear(&mut self) {
        self.n = 0;
        self.deferred.clear();
    }

    /// Appends a packet for `port` made of `head` followed by `tail`, truncated to `limit`.
    pub fn push(&mut self, port: u32, head: &[u8], tail: &[u8], limit: Option<u64>) {
        if self.n == self.bufs.len() {
            self.bufs.push((0, Vec::new()));
        }
        let (p, b) = &mut self.bufs[self.n];
        *p = port;
        b.clear();
        extend_small(b, head);
        extend_small(b, tail);
        if let Some(l) = limit {
            b.truncate(l as usize);
        }
        self.n += 1;
    }

    /// Appends a packet for `port` made of `head` followed by `tail`, taking `head`'s buffer
    /// (what [`Outputs::push`] would copy) and leaving a reused one in its place: one copy
    /// fewer for the packet a pass sends.
    #[inline]
    pub fn push_taking(&mut self, port: u32, head: &mut Vec<u8>, tail: &[u8]) {
        if self.n == self.bufs.len() {
            self.bufs.push((0, Vec::new()));
        }
        let (p, b) = &mut self.bufs[self.n];
        *p = port;
        extend_small(head, tail);
        std::mem::swap(b, head);
        head.clear();
        self.n += 1;
    }

    /// The packets: (port, bytes).
    pub fn as_slice(&self) -> &[(u32, Vec<u8>)] {
        &self.bufs[..self.n]
    }

    pub fn len(&self) -> usize {
        self.n
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Whether copies wait to be put on egress queues (`crate::queues`).
    pub fn has_deferred(&self) -> bool {
        !self.deferred.is_empty()
    }
}

#[inline]
fn set(ex: &mut Exec, f: Field, v: u64) {
    if let Some((o, t)) = f {
        if let Some(x) = ex.f.get_mut(o as usize) {
            *x = v & p4_ir::ops::mask(t.width.min(64));
        }
    }
}

#[inline]
fn set_rel(ex: &mut Exec, base: u32, rel: Option<u32>, v: u64) {
    if let Some(o) = rel {
        if let Some(x) = ex.f.get_mut((base + o) as usize) {
            *x = v;
        }
    }
}

#[inline]
fn get_rel(ex: &Exec, base: u32, rel: Option<u32>) -> u64 {
    rel.and_then(|o| ex.f.get((base + o) as usize).copied())
        .unwrap_or(0)
}

fn run_control(ex: &mut Exec, sw: &Switch, f: FnId) -> Flow {
    ex.call(sw, f, &[], &[])
}

/// Runs one packet through a PNA program.
#[inline(always)]
pub fn process_pna(
    ex: &mut Exec,
    sw: &Switch,
    pi: &PnaInfo,
    data: &[u8],
    port: u32,
    out: &mut Outputs,
) {
    if let (Some(n), None) = (sw.native.as_deref(), &ex.trace) {
        if let Some(pass) = n.pass_whole() {
            // Generated code runs the pass (`PnaInfo::glue`), on the packet where it lies:
            // `data` outlives this call, which is the whole of the packet's processing.
            unsafe { ex.reset_packet_in_place(data) };
            let dir = if sw.is_net_port(u64::from(port)) {
                pi.net_to_host
            } else {
                pi.host_to_net
            };
            (ex.c.port, ex.c.direction, ex.c.pass) = (u64::from(port), dir, 0);
            if ex.run_native(sw, pass) == nevermiss_jit::flow::REJECT {
                return;
            }
            return pna_output(ex, sw, pi, port, out);
        }
    }
    pna_parse(ex, sw, pi, data, port, 0);
    pna_finish(ex, sw, pi, port, 0, out);
}

/// The output of a pass generated code ran: the deparsed packet to its port (or nowhere), and
/// in the rare cases (mirrors, recirculation) the rest of [`pna_finish`].
#[inline]
fn pna_output(ex: &mut Exec, sw: &Switch, pi: &PnaInfo, port: u32, out: &mut Outputs) {
    if ex.ps.mirrors.is_empty() && !ex.ps.recirculate {
        ex.out.finish();
        if let Some(p) = ex.ps.dest.get() {
            let input = crate::exec::input_of(&ex.c);
            let start = ex.c.cursor.div_ceil(8).min(input.len() as u64) as usize;
            out.push_taking(p as u32, &mut ex.out.bytes, &input[start..]);
            ex.out.clear();
        }
        return;
    }
    pna_deliver(ex, sw, pi, port, 0, out);
}

/// The first part of a PNA pass: resets `ex` for `data`, runs the main parser and fills the
/// main control's input metadata. [`pna_finish`] does the rest; between the two a batch can
/// prefetch the tables the packets are about to look up.
pub fn pna_parse(ex: &mut Exec, sw: &Switch, pi: &PnaInfo, data: &[u8], port: u32, pass: u64) {
    pna_parse_at(ex, sw, pi, data, port, pass, false);
}

/// [`pna_parse`] of a packet's first pass, parsing `data` where it lies (no copy) when
/// generated code runs the pass.
///
/// # Safety
/// `data` must stay alive and unchanged until the packet's [`pna_finish`] returns.
pub(crate) unsafe fn pna_parse_in_place(
    ex: &mut Exec,
    sw: &Switch,
    pi: &PnaInfo,
    data: &[u8],
    port: u32,
) {
    pna_parse_at(ex, sw, pi, data, port, 0, true);
}

#[inline]
fn pna_parse_at(
    ex: &mut Exec,
    sw: &Switch,
    pi: &PnaInfo,
    data: &[u8],
    port: u32,
    pass: u64,
    in_place: bool,
) {
    let net = sw.is_net_port(u64::from(port));
    let dir = if net { pi.net_to_host } else { pi.host_to_net };
    if let (Some(f), None) = (sw.native.as_ref().and_then(|n| n.pass_parse()), &ex.trace) {
        // Generated code runs the whole of what follows (`PnaInfo::glue`).
        if in_place {
            // SAFETY: the callers of `pna_parse_in_place` keep `data` alive for the packet.
            unsafe { ex.reset_packet_in_place(data) };
        } else {
            ex.reset_packet(data);
        }
        (ex.c.port, ex.c.direction, ex.c.pass) = (u64::from(port), dir, pass);
        ex.run_native(sw, f);
        return;
    }
    pna_parse_interp(ex, sw, pi, data, port, pass, dir);
}

/// [`pna_parse_at`] by the interpreter (the interpreter engine, or a traced packet).
#[inline(never)]
fn pna_parse_interp(
    ex: &mut Exec,
    sw: &Switch,
    pi: &PnaInfo,
    data: &[u8],
    port: u32,
    pass: u64,
    dir: u64,
) {
    ex.reset(sw, data);
    set(ex, pi.p_input_port, u64::from(port));
    set(ex, pi.p_direction, dir);
    set(ex, pi.p_pass, pass);
    set(ex, pi.p_loopedback, 0);
    set(ex, pi.p_recirculated, u64::from(pass > 0));
    let _ = ex.run_parser(sw, pi.parser);
    let perr = ex.parser_error();
    set(ex, pi.m_input_port, u64::from(port));
    set(ex, pi.m_direction, dir);
    set(ex, pi.m_pass, pass);
    set(ex, pi.m_loopedback, 0);
    set(ex, pi.m_recirculated, u64::from(pass > 0));
    set(ex, pi.m_timestamp, ex.now_ns);
    set(ex, pi.m_parser_error, perr);
    if pi.pre.is_some() {
        set(ex, pi.pre_input_port, u64::from(port));
        set(ex, pi.pre_parser_error, perr);
        set(ex, pi.pre_direction, dir);
        set(ex, pi.pre_pass, pass);
        set(ex, pi.pre_loopedback, 0);
    }
}

/// The rest of a PNA packet after [`pna_parse`] of pass `pass`: pre-control, main control,
/// deparser, mirror copies, and further passes while the packet recirculates.
#[inline]
pub fn pna_finish(
    ex: &mut Exec,
    sw: &Switch,
    pi: &PnaInfo,
    port: u32,
    pass: u64,
    out: &mut Outputs,
) {
    // The common case, kept small: generated code runs the blocks and the packet leaves by one
    // port (or none), without mirrors or recirculation.
    if let (Some(f), None) = (sw.native.as_ref().and_then(|n| n.pass_run()), &ex.trace) {
        if ex.run_native(sw, f) == nevermiss_jit::flow::REJECT {
            return;
        }
        if pass == 0 {
            return pna_output(ex, sw, pi, port, out);
        }
        return pna_deliver(ex, sw, pi, port, pass, out);
    }
    pna_finish_all(ex, sw, pi, port, pass, out, false);
}

/// [`pna_finish`] in full: the blocks (unless generated code already ran them for this pass:
/// `ran`), mirrors, recirculation, the output.
#[cold]
fn pna_finish_all(
    ex: &mut Exec,
    sw: &Switch,
    pi: &PnaInfo,
    port: u32,
    mut pass: u64,
    out: &mut Outputs,
    mut ran: bool,
) {
    loop {
        match sw.native.as_ref().and_then(|n| n.pass_run()) {
            _ if ran => ran = false,
            // Generated code runs the blocks (`PnaInfo::glue`); traced packets are interpreted.
            Some(f) if ex.trace.is_none() => {
                if ex.run_native(sw, f) == nevermiss_jit::flow::REJECT {
                    return;
                }
            }
            _ => {
                if let Some(pre) = pi.pre {
                    if run_control(ex, sw, pre) == Flow::Reject {
                        return;
                    }
                }
                if run_control(ex, sw, pi.control) == Flow::Reject {
                    return;
                }
                ex.trace_headers(sw, BlockBody::Control(pi.deparser), "before deparser");
                if run_control(ex, sw, pi.deparser) == Flow::Reject {
                    return;
                }
            }
        }
        ex.out.finish();
        let start = ex.cursor().div_ceil(8).min(ex.input().len());
        if !ex.ps.mirrors.is_empty() {
            let sessions = sw.sessions.read().unwrap_or_else(PoisonError::into_inner);
            for (_, s) in &ex.ps.mirrors {
                if let Some(p) = sessions.get(&(*s as u32)) {
                    out.push(*p, &ex.out.bytes, &ex.input()[start..], None);
                }
            }
        }
        if ex.ps.recirculate {
            pass += 1;
            if pass > u64::from(sw.config.max_passes) {
                sw.stats.pass_limit_hits.fetch_add(1, Relaxed);
                return;
            }
            let mut b = ex.out.bytes.clone();
            b.extend_from_slice(&ex.input()[start..]);
            pna_parse(ex, sw, pi, &b, port, pass);
            continue;
        }
        if let Some(p) = ex.ps.dest.get() {
            out.push_taking(
                p as u32,
                &mut ex.out.bytes,
                &crate::exec::input_of(&ex.c)[start..],
            );
            ex.out.clear();
        }
        return;
    }
}

/// The rest of [`pna_finish`] after generated code ran the blocks of a packet that mirrors
/// or recirculates.
#[cold]
fn pna_deliver(ex: &mut Exec, sw: &Switch, pi: &PnaInfo, port: u32, pass: u64, out: &mut Outputs) {
    pna_finish_all(ex, sw, pi, port, pass, out, true);
}

/// BMv2 packet instance types.
mod itype {
    pub const NORMAL: u64 = 0;
    pub const INGRESS_CLONE: u64 = 1;
    pub const EGRESS_CLONE: u64 = 2;
    pub const RECIRC: u64 = 4;
    pub const REPLICATION: u64 = 5;
    pub const RESUBMIT: u64 = 6;
}

/// A packet waiting for (another) ingress pass.
pub(crate) struct IngressJob {
    data: Vec<u8>,
    itype: u64,
    port: u64,
    meta: Option<Vec<u64>>,
}

/// A copy of a packet waiting for the egress pipeline, with the frame it starts from.
#[derive(Debug)]
pub(crate) struct EgressJob {
    pub(crate) frame: Vec<u64>,
    pub(crate) input: Vec<u8>,
    pub(crate) cursor: usize,
    pub(crate) port: u64,
    rid: u64,
    itype: u64,
}

/// A copy bound for the egress queue of `port` (BMv2's traffic manager: every unicast copy,
/// multicast replica and clone is enqueued; `crate::queues` holds them), with the value of
/// `standard_metadata.priority` that picks the queue.
#[derive(Debug)]
pub(crate) struct Deferred {
    pub(crate) job: EgressJob,
    pub(crate) port: u32,
    pub(crate) priority: u64,
}

/// Whether copies to `port` wait in an egress queue rather than running egress at once: false
/// (one test of a field that is `None`) unless the switch was given queues.
#[inline(always)]
fn queued(sw: &Switch, port: u64) -> bool {
    match &sw.config.queues {
        None => false,
        Some(q) => q.queued(port),
    }
}

/// Puts a copy on its port's queue (see [`Deferred`]).
#[cold]
fn defer(vi: &V1Info, job: EgressJob, out: &mut Outputs) {
    let priority = vi
        .priority
        .and_then(|o| job.frame.get((vi.sm + o) as usize).copied())
        .unwrap_or(0);
    out.deferred.push(Deferred {
        port: job.port as u32,
        priority,
        job,
    });
}

/// The frame as ingress left it, as a copy for the egress queue of `port`.
#[cold]
fn frame_job(ex: &Exec, port: u64, rid: u64, itype_v: u64) -> EgressJob {
    EgressJob {
        frame: ex.f.clone(),
        input: ex.input().to_vec(),
        cursor: ex.cursor(),
        port,
        rid,
        itype: itype_v,
    }
}

/// What the queue a copy waited in says about it (v1model's queueing metadata, BMv2's units:
/// microseconds and packets).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueMeta {
    /// When it was enqueued, microseconds on the switch's clock.
    pub enq_timestamp: u64,
    /// Packets in its queue when it arrived (before it).
    pub enq_qdepth: u64,
    /// Microseconds it spent in the queue.
    pub deq_timedelta: u64,
    /// Packets left in its queue when it left.
    pub deq_qdepth: u64,
    /// The queue: its priority (`qid`, as BMv2 sets it).
    pub qid: u64,
}

/// Runs a copy taken from an egress queue: the queueing metadata written into its
/// `standard_metadata` (widths of v1model: 32, 19, 32, 19, 5 bits), then egress, and every pass
/// that follows from it (recirculations; clones and replicas go back to their queues).
pub(crate) fn v1_dequeued(
    ex: &mut Exec,
    sw: &Switch,
    vi: &V1Info,
    mut job: EgressJob,
    q: QueueMeta,
    out: &mut Outputs,
) {
    for (rel, v, bits) in [
        (vi.enq_timestamp, q.enq_timestamp, 32),
        (vi.enq_qdepth, q.enq_qdepth, 19),
        (vi.deq_timedelta, q.deq_timedelta, 32),
        (vi.deq_qdepth, q.deq_qdepth, 19),
        (vi.qid, q.qid, 5),
    ] {
        if let Some(w) = rel.and_then(|o| job.frame.get_mut((vi.sm + o) as usize)) {
            *w = v & p4_ir::ops::mask(bits);
        }
    }
    let mut pending: Vec<IngressJob> = Vec::new();
    let (port, rid, t) = (job.port, job.rid, job.itype);
    egress(ex, sw, vi, port, rid, t, Some(job), &mut pending, out, 0);
    if let Some(j) = pending.pop() {
        v1_passes(ex, sw, vi, Some(j), None, pending, out);
    }
}

/// Runs one packet through a v1model program.
pub fn process_v1(
    ex: &mut Exec,
    sw: &Switch,
    vi: &V1Info,
    data: &[u8],
    port: u32,
    out: &mut Outputs,
) {
    v1_parse(ex, sw, vi, data, itype::NORMAL, u64::from(port), None);
    v1_finish(ex, sw, vi, data, port, out);
}

/// The first part of a v1model packet's first ingress pass: the frame reset for `data`, the
/// standard metadata set, the parser run. [`v1_finish`] does the rest; between the two a batch
/// can prefetch the tables the packets are about to look up.
pub fn v1_parse_first(ex: &mut Exec, sw: &Switch, vi: &V1Info, data: &[u8], port: u32) {
    v1_parse(ex, sw, vi, data, itype::NORMAL, u64::from(port), None);
}

/// The rest of a v1model packet after [`v1_parse_first`]: its first ingress pass from the
/// verify-checksum control on, then every further pass (egress, clones, resubmits,
/// recirculations).
pub fn v1_finish(
    ex: &mut Exec,
    sw: &Switch,
    vi: &V1Info,
    data: &[u8],
    port: u32,
    out: &mut Outputs,
) {
    v1_passes(ex, sw, vi, None, Some((data, port)), Vec::new(), out);
}

/// The ingress passes of a packet and what follows each: the first one parsed already
/// (`parsed`: its bytes and port) or `first` to parse; then the `pending` ones.
fn v1_passes(
    ex: &mut Exec,
    sw: &Switch,
    vi: &V1Info,
    first: Option<IngressJob>,
    parsed: Option<(&[u8], u32)>,
    mut pending: Vec<IngressJob>,
    out: &mut Outputs,
) {
    let mut owned: Vec<u8>;
    let (mut cur, mut it, mut in_port, mut meta, mut passes): (&[u8], _, _, _, u32) =
        match (parsed, first) {
            (Some((data, port)), _) => (data, itype::NORMAL, u64::from(port), None, 0),
            (None, Some(j)) => {
                owned = j.data;
                // Counted as a further pass: it follows the pass that sent it here.
                (&owned[..], j.itype, j.port, j.meta, 1)
            }
            (None, None) => return,
        };
    let mut needs_parse = parsed.is_none();
    loop {
        passes += 1;
        if passes > sw.config.max_passes {
            sw.stats.pass_limit_hits.fetch_add(1, Relaxed);
            return;
        }
        let mut extra: Vec<EgressJob> = Vec::new();
        // The first pass of a packet was parsed by `v1_parse_first`.
        if needs_parse {
            v1_parse(ex, sw, vi, cur, it, in_port, meta.take());
        }
        needs_parse = true;
        if let Some(p) = ingress(ex, sw, vi, cur, in_port, &mut pending, &mut extra) {
            if queued(sw, p) {
                defer(vi, frame_job(ex, p, 0, it), out);
            } else {
                egress(ex, sw, vi, p, 0, it, None, &mut pending, out, 0);
            }
        }
        for job in extra {
            if queued(sw, job.port) {
                defer(vi, job, out);
                continue;
            }
            let (port, rid, t) = (job.port, job.rid, job.itype);
            egress(ex, sw, vi, port, rid, t, Some(job), &mut pending, out, 0);
        }
        let Some(j) = pending.pop() else { return };
        owned = j.data;
        cur = &owned;
        it = j.itype;
        in_port = j.port;
        meta = j.meta;
    }
}

/// The start of an ingress pass: the frame reset for `data`, the standard metadata (and the
/// user metadata a resubmit or recirculation carries) set, the parser run.
fn v1_parse(
    ex: &mut Exec,
    sw: &Switch,
    vi: &V1Info,
    data: &[u8],
    itype_v: u64,
    in_port: u64,
    meta: Option<Vec<u64>>,
) {
    ex.reset(sw, data);
    let sm = vi.sm;
    set_rel(ex, sm, vi.ingress_port, in_port);
    set_rel(ex, sm, vi.instance_type, itype_v);
    set_rel(ex, sm, vi.packet_length, data.len() as u64);
    set_rel(ex, sm, vi.ingress_ts, ex.now_ns / 1000);
    if let (Some(m), Some((off, w))) = (&meta, vi.meta) {
        let (o, w) = (off as usize, w as usize);
        if let Some(ws) = ex.f.get_mut(o..o + w) {
            let n = m.len().min(w);
            ws[..n].copy_from_slice(&m[..n]);
        }
    }
    if !ex.run_parser(sw, vi.parser) {
        let e = ex.parser_error();
        set_rel(ex, sm, vi.parser_error, sw.prog.error_value(e));
    } else if !sw.prog.error_values.is_empty() {
        // A program whose NoError is not 0 sees it after a parse that succeeded (BMv2 writes
        // the packet's error code, NoError, into `parser_error` after every parse).
        set_rel(ex, sm, vi.parser_error, sw.prog.error_value(0));
    }
}

/// The rest of an ingress pass after [`v1_parse`]; returns the unicast egress port, if the
/// packet goes to one.
fn ingress(
    ex: &mut Exec,
    sw: &Switch,
    vi: &V1Info,
    data: &[u8],
    in_port: u64,
    pending: &mut Vec<IngressJob>,
    extra: &mut Vec<EgressJob>,
) -> Option<u64> {
    let sm = vi.sm;
    if let Some(v) = vi.verify {
        if run_control(ex, sw, v) == Flow::Reject {
            return None;
        }
    }
    let post_parse = if vi.uses_copies {
        Some((ex.f.clone(), ex.cursor()))
    } else {
        None
    };
    if run_control(ex, sw, vi.ingress) == Flow::Reject {
        return None;
    }
    let meta_now = vi
        .meta
        .and_then(|(o, w)| ex.f.get(o as usize..(o + w) as usize).map(<[u64]>::to_vec));
    if let (Some((_, sess, _)), Some((mut frame, cursor))) = (ex.ps.clone, post_parse) {
        if let Some(p) = session_port(sw, sess) {
            // The clone is the packet as parsed, with the metadata as ingress left it.
            if let (Some(m), Some((o, w))) = (&meta_now, vi.meta) {
                if let Some(ws) = frame.get_mut(o as usize..(o + w) as usize) {
                    ws.copy_from_slice(m);
                }
            }
            extra.push(EgressJob {
                frame,
                input: data.to_vec(),
                cursor,
                port: u64::from(p),
                rid: 0,
                itype: itype::INGRESS_CLONE,
            });
        }
    }
    if ex.ps.resubmit.is_some() {
        pending.push(IngressJob {
            data: data.to_vec(),
            itype: itype::RESUBMIT,
            port: in_port,
            meta: meta_now,
        });
        return None;
    }
    let grp = get_rel(ex, sm, vi.mcast_grp);
    if grp != 0 {
        let members = sw
            .mc_groups
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&(grp as u32))
            .cloned()
            .unwrap_or_default();
        for (p, rid) in members {
            extra.push(EgressJob {
                frame: ex.f.clone(),
                input: ex.input().to_vec(),
                cursor: ex.cursor(),
                port: u64::from(p),
                rid: u64::from(rid),
                itype: itype::REPLICATION,
            });
        }
        return None;
    }
    let spec = get_rel(ex, sm, vi.egress_spec);
    if spec == vi.drop_port {
        return None;
    }
    Some(spec)
}

fn session_port(sw: &Switch, sess: u64) -> Option<u32> {
    sw.sessions
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&(sess as u32))
        .copied()
}

/// The egress pass of one copy (`job`: the frame it starts from; `None`: the frame as ingress
/// left it).
#[allow(clippy::too_many_arguments)]
fn egress(
    ex: &mut Exec,
    sw: &Switch,
    vi: &V1Info,
    port: u64,
    rid: u64,
    itype_v: u64,
    job: Option<EgressJob>,
    pending: &mut Vec<IngressJob>,
    out: &mut Outputs,
    depth: u32,
) {
    if let Some(job) = job {
        ex.reset(sw, &job.input);
        let n = job.frame.len().min(ex.f.len());
        ex.f[..n].copy_from_slice(&job.frame[..n]);
        ex.c.cursor = job.cursor as u64;
    }
    ex.ps.clone = None;
    ex.ps.resubmit = None;
    ex.ps.v1_recirculate = None;
    ex.ps.truncate = None;
    let sm = vi.sm;
    set_rel(ex, sm, vi.egress_port, port);
    set_rel(ex, sm, vi.egress_rid, rid);
    set_rel(ex, sm, vi.egress_ts, ex.now_ns / 1000);
    set_rel(ex, sm, vi.instance_type, itype_v);
    if let Some(e) = vi.egress {
        if run_control(ex, sw, e) == Flow::Reject {
            return;
        }
        if get_rel(ex, sm, vi.egress_spec) == vi.drop_port {
            return;
        }
    }
    if let Some(c) = vi.compute {
        if run_control(ex, sw, c) == Flow::Reject {
            return;
        }
    }
    // An E2E clone starts from the frame as egress left it.
    let e2e = match ex.ps.clone {
        Some((_, sess, _)) if depth < 4 => session_port(sw, sess).map(|p| EgressJob {
            frame: ex.f.clone(),
            input: ex.input().to_vec(),
            cursor: ex.cursor(),
            port: u64::from(p),
            rid: 0,
            itype: itype::EGRESS_CLONE,
        }),
        _ => None,
    };
    let recirc = ex.ps.v1_recirculate;
    let trunc = ex.ps.truncate;
    ex.out.clear();
    ex.trace_headers(sw, BlockBody::Control(vi.deparser), "before deparser");
    if run_control(ex, sw, vi.deparser) != Flow::Reject {
        ex.out.finish();
        let start = ex.cursor().div_ceil(8).min(ex.input().len());
        if recirc.is_some() {
            let mut b = ex.out.bytes.clone();
            b.extend_from_slice(&ex.input()[start..]);
            let meta = vi
                .meta
                .and_then(|(o, w)| ex.f.get(o as usize..(o + w) as usize).map(<[u64]>::to_vec));
            pending.push(IngressJob {
                data: b,
                itype: itype::RECIRC,
                port,
                meta,
            });
        } else {
            out.push(port as u32, &ex.out.bytes, &ex.input()[start..], trunc);
        }
    }
    if let Some(j) = e2e {
        if queued(sw, j.port) {
            defer(vi, j, out);
            return;
        }
        let (p, r, t) = (j.port, j.rid, j.itype);
        egress(ex, sw, vi, p, r, t, Some(j), pending, out, depth + 1);
    }
}

/// A metadata region carried from one block's parameter to another's: (from, to, words).
type Carry = Option<(u32, u32, u32)>;

/// Resolved PSA blocks and metadata fields (PSA v1.2 §6; BMv2 `psa_switch`).
#[derive(Clone, Debug, Default)]
pub struct PsaInfo {
    pub ip: ParserId,
    pub ig: FnId,
    pub id: FnId,
    pub ep: ParserId,
    pub eg: FnId,
    pub ed: FnId,
    pub ip_port: Field,
    pub ip_path: Field,
    pub ig_port: Field,
    pub ig_path: Field,
    pub ig_ts: Field,
    pub ig_perr: Field,
    pub io_clone: Field,
    pub io_sess: Field,
    pub io_drop: Field,
    pub io_resubmit: Field,
    pub io_mcast: Field,
    pub io_port: Field,
    pub io_cos: Field,
    pub ep_port: Field,
    pub ep_path: Field,
    pub eg_port: Field,
    pub eg_path: Field,
    pub eg_instance: Field,
    pub eg_ts: Field,
    pub eg_perr: Field,
    pub eg_cos: Field,
    pub eo_clone: Field,
    pub eo_sess: Field,
    pub eo_drop: Field,
    pub ed_port: Field,
    /// Ingress deparser `resubmit_meta` → ingress parser `resubmit_meta`.
    pub resub: Carry,
    /// Ingress deparser `normal_meta` → egress parser `normal_meta`.
    pub normal: Carry,
    /// Ingress deparser `clone_i2e_meta` → egress parser `clone_i2e_meta`.
    pub ci2e: Carry,
    /// Egress deparser `clone_e2e_meta` → egress parser `clone_e2e_meta`.
    pub ce2e: Carry,
    /// Egress deparser `recirculate_meta` → ingress parser `recirculate_meta`.
    pub recirc: Carry,
    /// Codes of `PSA_PacketPath_t` members: NORMAL, NORMAL_UNICAST, NORMAL_MULTICAST,
    /// CLONE_I2E, CLONE_E2E, RESUBMIT, RECIRCULATE.
    pub paths: [u64; 7],
}

/// `PSA_PORT_RECIRCULATE`.
pub const PSA_PORT_RECIRCULATE: u64 = 0xffff_fffa;

impl PsaInfo {
    fn new(p: &Program) -> Result<PsaInfo, String> {
        let bl = &p.blocks;
        if bl.len() < 6 {
            return Err("the PSA_Switch package needs six parsers, controls and deparsers".into());
        }
        let (Some(ip), Some(ig), Some(id), Some(ep), Some(eg), Some(ed)) = (
            parser_of(bl.first()),
            control_of(bl.get(1)),
            control_of(bl.get(2)),
            parser_of(bl.get(3)),
            control_of(bl.get(4)),
            control_of(bl.get(5)),
        ) else {
            return Err("the PSA_Switch package's blocks are not in the expected order".into());
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

fn get(ex: &Exec, f: Field) -> u64 {
    f.and_then(|(o, _)| ex.f.get(o as usize).copied())
        .unwrap_or(0)
}

/// The words of a carried region's source.
fn take(ex: &Exec, c: Carry) -> Option<Vec<u64>> {
    let (from, _, w) = c?;
    ex.f.get(from as usize..(from + w) as usize)
        .map(<[u64]>::to_vec)
}

/// Writes carried words into the region's destination.
fn put(ex: &mut Exec, c: Carry, v: &Option<Vec<u64>>) {
    if let (Some((_, to, w)), Some(v)) = (c, v) {
        if let Some(ws) = ex.f.get_mut(to as usize..(to + w) as usize) {
            let n = v.len().min(ws.len());
            ws[..n].copy_from_slice(&v[..n]);
        }
    }
}

/// Destinations of a clone session: a port, or the ports of a multicast group.
fn session_ports(sw: &Switch, sess: u64) -> Vec<(u32, u32)> {
    if let Some(p) = session_port(sw, sess) {
        return vec![(p, 0)];
    }
    let g = sw
        .session_groups
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&(sess as u32))
        .copied();
    match g {
        Some(g) => sw
            .mc_groups
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&g)
            .cloned()
            .unwrap_or_default(),
        None => Vec::new(),
    }
}

/// A PSA packet waiting for an ingress pass: packet, path, port, resubmit and recirculate
/// metadata.
type PsaIngress = (Vec<u8>, u64, u64, Option<Vec<u64>>, Option<Vec<u64>>);

/// A PSA packet waiting for the egress pipeline.
struct PsaEgress {
    data: Vec<u8>,
    cos: u64,
    port: u64,
    instance: u64,
    path: u64,
    normal: Option<Vec<u64>>,
    ci2e: Option<Vec<u64>>,
    ce2e: Option<Vec<u64>>,
}

/// Runs one packet through a PSA program.
pub fn process_psa(
    ex: &mut Exec,
    sw: &Switch,
    pi: &PsaInfo,
    data: &[u8],
    port: u32,
    out: &mut Outputs,
) {
    psa_parse_first(ex, sw, pi, data, port);
    psa_finish(ex, sw, pi, data, port, out);
}

/// The start of a PSA ingress pass: the frame reset for `pkt`, the carried metadata and the
/// parser's and ingress control's input metadata set, the ingress parser run.
fn psa_parse(
    ex: &mut Exec,
    sw: &Switch,
    pi: &PsaInfo,
    pkt: &[u8],
    (path, in_port): (u64, u64),
    resub: &Option<Vec<u64>>,
    recirc: &Option<Vec<u64>>,
) {
    ex.reset(sw, pkt);
    put(ex, pi.resub, resub);
    put(ex, pi.recirc, recirc);
    set(ex, pi.ip_port, in_port);
    set(ex, pi.ip_path, path);
    let _ = ex.run_parser(sw, pi.ip);
    let perr = ex.parser_error();
    set(ex, pi.ig_port, in_port);
    set(ex, pi.ig_path, path);
    set(ex, pi.ig_ts, ex.now_ns);
    set(ex, pi.ig_perr, perr);
    set(ex, pi.io_drop, 1);
}

/// The first part of a PSA packet's first ingress pass (a NORMAL packet from `port`): up to
/// and including the ingress parser. [`psa_finish`] does the rest; between the two a batch can
/// prefetch the tables the packets are about to look up.
pub fn psa_parse_first(ex: &mut Exec, sw: &Switch, pi: &PsaInfo, data: &[u8], port: u32) {
    psa_parse(
        ex,
        sw,
        pi,
        data,
        (pi.paths[0], u64::from(port)),
        &None,
        &None,
    );
}

/// The rest of a PSA packet after [`psa_parse_first`]: its first ingress pass from the ingress
/// control on, then every further pass (egress, clones, resubmits, recirculations).
pub fn psa_finish(
    ex: &mut Exec,
    sw: &Switch,
    pi: &PsaInfo,
    data: &[u8],
    port: u32,
    out: &mut Outputs,
) {
    // Ingress passes: (packet, path, port, resubmit meta, recirculate meta).
    let mut ingress_jobs: Vec<PsaIngress> =
        vec![(data.to_vec(), pi.paths[0], u64::from(port), None, None)];
    let mut passes = 0u32;
    while let Some((pkt, path, in_port, resub, recirc)) = ingress_jobs.pop() {
        passes += 1;
        if passes > sw.config.max_passes {
            sw.stats.pass_limit_hits.fetch_add(1, Relaxed);
            return;
        }
        let mut egress_jobs = Vec::new();
        // The first pass was parsed by `psa_parse_first`.
        if passes > 1 {
            psa_parse(ex, sw, pi, &pkt, (path, in_port), &resub, &recirc);
        }
        if run_control(ex, sw, pi.ig) == Flow::Reject {
            continue;
        }
        ex.out.clear();
        ex.trace_headers(sw, BlockBody::Control(pi.id), "before deparser");
        if run_control(ex, sw, pi.id) == Flow::Reject {
            continue;
        }
        ex.out.finish();
        let start = ex.cursor().div_ceil(8).min(ex.input().len());
        let mut deparsed = ex.out.bytes.clone();
        deparsed.extend_from_slice(&ex.input()[start..]);
        if get(ex, pi.io_clone) != 0 {
            // An I2E clone is of the packet as it arrived.
            for (p, rid) in session_ports(sw, get(ex, pi.io_sess)) {
                egress_jobs.push(PsaEgress {
                    data: pkt.clone(),
                    cos: get(ex, pi.io_cos),
                    port: u64::from(p),
                    instance: u64::from(rid),
                    path: pi.paths[3],
                    normal: None,
                    ci2e: take(ex, pi.ci2e),
                    ce2e: None,
                });
            }
        }
        let normal = take(ex, pi.normal);
        if get(ex, pi.io_drop) == 0 {
            if get(ex, pi.io_resubmit) != 0 {
                ingress_jobs.push((pkt.clone(), pi.paths[5], in_port, take(ex, pi.resub), None));
            } else {
                let grp = get(ex, pi.io_mcast);
                if grp != 0 {
                    let members = sw
                        .mc_groups
                        .read()
                        .unwrap_or_else(PoisonError::into_inner)
                        .get(&(grp as u32))
                        .cloned()
                        .unwrap_or_default();
                    for (p, rid) in members {
                        egress_jobs.push(PsaEgress {
                            data: deparsed.clone(),
                            cos: get(ex, pi.io_cos),
                            port: u64::from(p),
                            instance: u64::from(rid),
                            path: pi.paths[2],
                            normal: normal.clone(),
                            ci2e: None,
                            ce2e: None,
                        });
                    }
                } else {
                    egress_jobs.push(PsaEgress {
                        data: deparsed,
                        cos: get(ex, pi.io_cos),
                        port: get(ex, pi.io_port),
                        instance: 0,
                        path: pi.paths[1],
                        normal,
                        ci2e: None,
                        ce2e: None,
                    });
                }
            }
        }
        // Egress, in order (clones after the packet that made them).
        let mut k = 0;
        while k < egress_jobs.len() && k < 64 {
            let j = std::mem::replace(
                &mut egress_jobs[k],
                PsaEgress {
                    data: Vec::new(),
                    cos: 0,
                    port: 0,
                    instance: 0,
                    path: 0,
                    normal: None,
                    ci2e: None,
                    ce2e: None,
                },
            );
            k += 1;
            ex.reset(sw, &j.data);
            put(ex, pi.normal, &j.normal);
            put(ex, pi.ci2e, &j.ci2e);
            put(ex, pi.ce2e, &j.ce2e);
            set(ex, pi.ep_port, j.port);
            set(ex, pi.ep_path, j.path);
            let _ = ex.run_parser(sw, pi.ep);
            let perr = ex.parser_error();
            set(ex, pi.eg_port, j.port);
            set(ex, pi.eg_path, j.path);
            set(ex, pi.eg_instance, j.instance);
            set(ex, pi.eg_ts, ex.now_ns);
            set(ex, pi.eg_perr, perr);
            set(ex, pi.eg_cos, j.cos);
            if run_control(ex, sw, pi.eg) == Flow::Reject {
                continue;
            }
            set(ex, pi.ed_port, j.port);
            ex.out.clear();
            ex.trace_headers(sw, BlockBody::Control(pi.ed), "before deparser");
            if run_control(ex, sw, pi.ed) == Flow::Reject {
                continue;
            }
            ex.out.finish();
            let start = ex.cursor().div_ceil(8).min(ex.input().len());
            let mut bytes = ex.out.bytes.clone();
            bytes.extend_from_slice(&ex.input()[start..]);
            if get(ex, pi.eo_clone) != 0 {
                for (p, rid) in session_ports(sw, get(ex, pi.eo_sess)) {
                    egress_jobs.push(PsaEgress {
                        data: bytes.clone(),
                        cos: j.cos,
                        port: u64::from(p),
                        instance: u64::from(rid),
                        path: pi.paths[4],
                        normal: None,
                        ci2e: None,
                        ce2e: take(ex, pi.ce2e),
                    });
                }
            }
            if get(ex, pi.eo_drop) != 0 {
                continue;
            }
            if j.port == PSA_PORT_RECIRCULATE {
                ingress_jobs.push((bytes, pi.paths[6], j.port, None, take(ex, pi.recirc)));
                continue;
            }
            out.push(j.port as u32, &bytes, &[], None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::extend_small;

    /// Every length around the block sizes, onto empty and non-empty vectors, with and without
    /// spare capacity: the bytes `extend_from_slice` would give.
    #[test]
    fn extend_small_is_extend_from_slice() {
        let src: Vec<u8> = (0..200u32).map(|i| (i * 7 + 3) as u8).collect();
        for n in 0..=160 {
            for pre in [0usize, 1, 5, 63] {
                for spare in [0usize, 200] {
                    let mut v: Vec<u8> = Vec::with_capacity(pre + spare);
                    v.extend((0..pre).map(|i| i as u8 ^ 0x5a));
                    let mut want = v.clone();
                    want.extend_from_slice(&src[3..3 + n]);
                    extend_small(&mut v, &src[3..3 + n]);
                    assert_eq!(v, want, "n {n}, pre {pre}, spare {spare}");
                }
            }
        }
    }
}
