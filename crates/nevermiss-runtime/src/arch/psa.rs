//! PSA (PSA v1.2 §6, BMv2 `psa_switch`): ingress parser, control and deparser, the traffic
//! manager (clones, resubmit, multicast), egress parser, control and deparser, recirculation.

use super::{run_control, run_parser, set, Outputs};
use crate::engine::exec::{Exec, Flow};
use crate::state::{Carry, Field, PsaInfo, Switch, PSA_PORT_RECIRCULATE};
use p4_ir::*;
use std::sync::atomic::Ordering::Relaxed;

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
    sw.pre().session_ports(sess as u32)
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
    let _ = run_parser(ex, sw, pi.ip);
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
        if passes > sw.config().max_passes {
            sw.stats().pass_limit_hits.fetch_add(1, Relaxed);
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
                    let members = sw.pre().group(grp as u32);
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
            let _ = run_parser(ex, sw, pi.ep);
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
