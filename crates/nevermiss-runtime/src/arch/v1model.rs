//! v1model (BMv2 `simple_switch` semantics): parser → verifyChecksum → ingress → traffic
//! manager (clone I2E, resubmit, multicast, drop, unicast) → egress → computeChecksum →
//! deparser (clone E2E, recirculate, truncate).

use super::{get_rel, run_control, run_parser, set_rel, Outputs};
use crate::engine::exec::{Exec, Flow};
use crate::state::{Switch, V1Info};
use p4_ir::*;
use std::sync::atomic::Ordering::Relaxed;

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
    match &sw.config().queues {
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
        if passes > sw.config().max_passes {
            sw.stats().pass_limit_hits.fetch_add(1, Relaxed);
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
    if !run_parser(ex, sw, vi.parser) {
        let e = ex.parser_error();
        set_rel(ex, sm, vi.parser_error, sw.prog().error_value(e));
    } else if !sw.prog().error_values.is_empty() {
        // A program whose NoError is not 0 sees it after a parse that succeeded (BMv2 writes
        // the packet's error code, NoError, into `parser_error` after every parse).
        set_rel(ex, sm, vi.parser_error, sw.prog().error_value(0));
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
        let members = sw.pre().group(grp as u32);
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
    sw.pre().session_port(sess as u32)
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
