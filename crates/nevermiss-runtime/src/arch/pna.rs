//! PNA (both dialects, PNA spec §"Packet processing"): main parser → (old dialect: pre
//! control) → main control → main deparser; mirrors and recirculation.

use super::{run_control, set, Outputs};
use crate::engine::exec::{Exec, Flow};
use crate::state::{PnaInfo, Switch};
use nevermiss_jit::NativeFn;
use p4_ir::*;
use std::sync::atomic::Ordering::Relaxed;

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
    if let (Some(n), None) = (sw.plan().native(), &ex.trace) {
        if let Some(pass) = n.pass_whole() {
            // SAFETY: generated code runs the pass (`PnaInfo::glue`) on the packet where it
            // lies: `data` outlives this call, which is the whole of the packet's processing.
            unsafe { pna_enter(ex, sw, pi, data, port) };
            if ex.run_native(sw, pass) == nevermiss_jit::flow::REJECT {
                return;
            }
            return pna_output(ex, sw, pi, port, out);
        }
    }
    pna_parse(ex, sw, pi, data, port, 0);
    pna_finish(ex, sw, pi, port, 0, out);
}

/// A packet's first pass about to run in generated code: `ex` reset for `data` where it lies,
/// and the values the pass's glue stores (port, direction, pass 0) in `ex.c`.
///
/// # Safety
/// `data` must stay alive and unchanged until the packet's processing ends.
#[inline(always)]
unsafe fn pna_enter(ex: &mut Exec, sw: &Switch, pi: &PnaInfo, data: &[u8], port: u32) {
    // SAFETY: the function's contract.
    unsafe { ex.reset_packet_in_place(data) };
    let dir = if sw.is_net_port(u64::from(port)) {
        pi.net_to_host
    } else {
        pi.host_to_net
    };
    (ex.c.port, ex.c.direction, ex.c.pass) = (u64::from(port), dir, 0);
}

/// A switch's generated PNA pass (`PnaInfo::glue`), looked up once for a batch of packets:
/// the worker's batch loops run it through [`Exec::run_bound`] on states [`Exec::bind`] set
/// up once per batch, with none of the per-packet look-ups and checks of [`process_pna`],
/// [`pna_parse`] and [`pna_finish`] (which packets that are traced, or run by the
/// interpreter, still take). Each function does what its per-packet twin's generated-code
/// branch does.
#[derive(Clone, Copy)]
pub(crate) struct PnaPass {
    parse: NativeFn,
    run: NativeFn,
    whole: NativeFn,
}

impl PnaPass {
    /// `sw`'s generated pass, `None` without one (the interpreter engine).
    #[inline]
    pub(crate) fn of(sw: &Switch) -> Option<PnaPass> {
        let n = sw.plan().native()?;
        Some(PnaPass {
            parse: n.pass_parse()?,
            run: n.pass_run()?,
            whole: n.pass_whole()?,
        })
    }

    /// [`process_pna`] of a packet alone.
    ///
    /// # Safety
    /// `ex` is bound to `sw` ([`Exec::run_bound`]'s contract) and not traced; `data` stays
    /// alive and unchanged until the call returns.
    #[inline(always)]
    pub(crate) unsafe fn process(
        &self,
        ex: &mut Exec,
        sw: &Switch,
        pi: &PnaInfo,
        data: &[u8],
        port: u32,
        out: &mut Outputs,
    ) {
        // SAFETY: the function's contract.
        unsafe {
            pna_enter(ex, sw, pi, data, port);
            if ex.run_bound(self.whole) == nevermiss_jit::flow::REJECT {
                return;
            }
        }
        pna_output(ex, sw, pi, port, out)
    }

    /// [`pna_parse_in_place`] of a batch's packet.
    ///
    /// # Safety
    /// As [`PnaPass::process`], and `data` stays alive and unchanged until the packet's
    /// [`PnaPass::finish`] returns.
    #[inline(always)]
    pub(crate) unsafe fn parse(
        &self,
        ex: &mut Exec,
        sw: &Switch,
        pi: &PnaInfo,
        data: &[u8],
        port: u32,
    ) {
        // SAFETY: the function's contract.
        unsafe {
            pna_enter(ex, sw, pi, data, port);
            ex.run_bound(self.parse);
        }
    }

    /// [`pna_finish`] of a packet [`PnaPass::parse`] parsed.
    ///
    /// # Safety
    /// As [`PnaPass::parse`].
    #[inline(always)]
    pub(crate) unsafe fn finish(
        &self,
        ex: &mut Exec,
        sw: &Switch,
        pi: &PnaInfo,
        port: u32,
        out: &mut Outputs,
    ) {
        // SAFETY: the function's contract.
        if unsafe { ex.run_bound(self.run) } == nevermiss_jit::flow::REJECT {
            return;
        }
        pna_output(ex, sw, pi, port, out)
    }
}

/// The output of a pass generated code ran: the deparsed packet to its port (or nowhere), and
/// in the rare cases (mirrors, recirculation) the rest of [`pna_finish`]. Always inlined into
/// the batch loop: as a call of its own it cost ~28 instructions a packet in saved registers
/// and argument moves (callgrind, `scripts/callgrind-bench.sh`).
#[inline(always)]
fn pna_output(ex: &mut Exec, sw: &Switch, pi: &PnaInfo, port: u32, out: &mut Outputs) {
    if ex.ps.mirrors.is_empty() && !ex.ps.recirculate {
        ex.out.finish();
        if let Some(p) = ex.ps.dest.get() {
            let input = crate::engine::exec::input_of(&ex.c);
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
    if let (Some(f), None) = (
        sw.plan().native().as_ref().and_then(|n| n.pass_parse()),
        &ex.trace,
    ) {
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
    if let (Some(f), None) = (
        sw.plan().native().as_ref().and_then(|n| n.pass_run()),
        &ex.trace,
    ) {
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
        match sw.plan().native().as_ref().and_then(|n| n.pass_run()) {
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
            let sessions = sw.pre().sessions();
            for (_, s) in &ex.ps.mirrors {
                if let Some(p) = sessions.get(&(*s as u32)) {
                    out.push(*p, &ex.out.bytes, &ex.input()[start..], None);
                }
            }
        }
        if ex.ps.recirculate {
            pass += 1;
            if pass > u64::from(sw.config().max_passes) {
                sw.stats().pass_limit_hits.fetch_add(1, Relaxed);
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
                &crate::engine::exec::input_of(&ex.c)[start..],
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
