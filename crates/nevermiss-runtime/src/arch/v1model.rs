//! v1model (BMv2 `simple_switch` semantics): parser → verifyChecksum → ingress → traffic
//! manager (clone I2E, resubmit, multicast, drop, unicast) → egress → computeChecksum →
//! deparser (clone E2E, recirculate, truncate).

use super::{get_rel, run_control, set_rel, Outputs};
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
struct IngressJob {
    data: Vec<u8>,
    itype: u64,
    port: u64,
    meta: Option<Vec<u64>>,
}

/// A copy of a packet waiting for the egress pipeline, with the frame it starts from.
struct EgressJob {
    frame: Vec<u64>,
    input: Vec<u8>,
    cursor: usize,
    port: u64,
    rid: u64,
    itype: u64,
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
    let mut pending: Vec<IngressJob> = Vec::new();
    let mut owned: Vec<u8>;
    let mut cur: &[u8] = data;
    let (mut it, mut in_port, mut meta) = (itype::NORMAL, u64::from(port), None);
    let mut passes = 0u32;
    loop {
        passes += 1;
        if passes > sw.config().max_passes {
            sw.stats().pass_limit_hits.fetch_add(1, Relaxed);
            return;
        }
        let mut extra: Vec<EgressJob> = Vec::new();
        // The first pass was parsed by `v1_parse_first`.
        if passes > 1 {
            v1_parse(ex, sw, vi, cur, it, in_port, meta.take());
        }
        if let Some(p) = ingress(ex, sw, vi, cur, in_port, &mut pending, &mut extra) {
            egress(ex, sw, vi, p, 0, it, None, &mut pending, out, 0);
        }
        for job in extra {
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
        let (p, r, t) = (j.port, j.rid, j.itype);
        egress(ex, sw, vi, p, r, t, Some(j), pending, out, depth + 1);
    }
}
