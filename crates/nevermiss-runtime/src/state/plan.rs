//! The engine's plan of a program, made when the switch is built: its machine code and the
//! slots of tables' re-specialised code (the compiled engine), the headers laid out for the
//! extract/emit fast paths, and the tables a batch prefetches.

use super::arch_info::ArchInfo;
use super::specs::Specs;
use nevermiss_jit::Compiled;
use p4_ir::ir::{FnId, FnKind, Stmt, TableId};
use p4_ir::Program;
use std::sync::Arc;

/// How the engine runs a program.
pub(crate) struct Plan {
    /// The program as machine code (`Engine::Jit`), shared with the shadow switch.
    native: Option<Arc<Compiled>>,
    /// Tables whose code is re-specialised to their control-plane entries.
    specs: Specs,
    /// Per header type: its compact layout when every field is fixed-width ≤ 64 bits and the
    /// header is a whole number of bytes (`Exec::extract`/`emit` fast paths).
    fast_headers: Vec<Option<FastHeader>>,
    /// Exact tables a batch prefetches for after parsing: the first `Config::prefetch_tables`
    /// exact tables whose key needs no calls that the control after the parser applies (PNA:
    /// the pre-control, then the main control; v1model: ingress; PSA: ingress); see
    /// `Worker::process_batch`.
    prefetch: Vec<TableId>,
    /// Where generated `pass_parse` left the keys of the `prefetch` tables past `Ctx::key`
    /// ((table, byte offset, length) each, in `prefetch`'s order), when it stores them (PNA,
    /// compiled engine).
    prefetch_keys: Option<Vec<(TableId, u32, u32)>>,
}

impl Plan {
    /// The plan of a program: its code (if compiled), re-specialisation slots, header layouts
    /// and prefetched tables (and where generated code stores their keys).
    pub(crate) fn new(
        native: Option<Arc<Compiled>>,
        specs: Specs,
        fast_headers: Vec<Option<FastHeader>>,
        prefetch: Vec<TableId>,
        prefetch_keys: Option<Vec<(TableId, u32, u32)>>,
    ) -> Plan {
        Plan {
            native,
            specs,
            fast_headers,
            prefetch,
            prefetch_keys,
        }
    }

    /// The program's machine code (`Engine::Jit`).
    #[inline(always)]
    pub(crate) fn native(&self) -> Option<&Arc<Compiled>> {
        self.native.as_ref()
    }

    /// The slots of re-specialised table code.
    #[inline(always)]
    pub(crate) fn specs(&self) -> &Specs {
        &self.specs
    }

    /// Header type `h`'s fast layout, if it has one.
    #[inline(always)]
    pub(crate) fn fast_header(&self, h: u32) -> Option<&FastHeader> {
        self.fast_headers.get(h as usize)?.as_ref()
    }

    /// The exact tables a batch prefetches for.
    #[inline(always)]
    pub(crate) fn prefetch(&self) -> &[TableId] {
        &self.prefetch
    }

    /// Where generated code stores the prefetched tables' keys, if it does.
    #[inline(always)]
    pub(crate) fn prefetch_keys(&self) -> Option<&[(TableId, u32, u32)]> {
        self.prefetch_keys.as_deref()
    }
}

/// A header type laid out for the extract/emit fast paths: one compact record per field.
#[derive(Clone, Debug)]
pub(crate) struct FastHeader {
    /// Bytes on the wire.
    pub bytes: usize,
    /// Frame words, validity word included.
    pub words: usize,
    pub fields: Box<[FastField]>,
}

/// A field of a [`FastHeader`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct FastField {
    /// Word offset from the validity word.
    pub off: u32,
    /// Bit offset from the start of the header.
    pub bit: u32,
    /// Width in bits, 1..=64.
    pub width: u32,
}

/// Largest header the fast paths take (their stack buffers).
pub(crate) const FAST_HEADER_MAX_BYTES: usize = 128;

impl FastHeader {
    /// The fast layout of `h`, if it has one.
    pub(crate) fn new(h: &p4_ir::ir::HeaderLayout) -> Option<FastHeader> {
        if !h.fixed_bits.is_multiple_of(8) || h.fixed_bits as usize / 8 > FAST_HEADER_MAX_BYTES {
            return None;
        }
        let mut bit = 0u32;
        let mut fields = Vec::with_capacity(h.fields.len());
        for f in &h.fields {
            if f.varbit.is_some() || f.ty.width > 64 {
                return None;
            }
            if f.ty.width > 0 {
                fields.push(FastField {
                    off: f.off,
                    bit,
                    width: f.ty.width,
                });
            }
            bit += f.ty.width;
        }
        let words = h.words as usize;
        if fields.iter().any(|f| f.off as usize >= words) {
            return None;
        }
        Some(FastHeader {
            bytes: h.fixed_bits as usize / 8,
            words,
            fields: fields.into_boxed_slice(),
        })
    }
}

/// The exact tables a batch prefetches for (`Switch::prefetch`): up to `max` distinct tables
/// without key calls for which `exact` holds, in the order the control that runs first after a
/// packet's first parser applies them (through `if`/`switch` bodies and called controls, not
/// actions); for PNA's old dialect, then the main control's after the pre-control's.
pub(crate) fn prefetch_list(
    prog: &Program,
    arch: &ArchInfo,
    max: usize,
    exact: impl Fn(TableId) -> bool,
) -> Vec<TableId> {
    let first = match arch {
        ArchInfo::Pna(pi) => pi.pre.unwrap_or(pi.control),
        ArchInfo::V1(vi) => vi.ingress,
        ArchInfo::Psa(pi) => pi.ig,
    };
    let mut out = Vec::new();
    prefetch_walk(prog, first, max, &exact, &mut out);
    if let Some(pi) = arch.pna().filter(|pi| pi.pre.is_some()) {
        let mut more = Vec::new();
        prefetch_walk(prog, pi.control, max, &exact, &mut more);
        for t in more {
            if out.len() < max && !out.contains(&t) {
                out.push(t);
            }
        }
    }
    out
}

/// Up to `max` distinct tables of [`prefetch_list`] in the order `control` applies them.
fn prefetch_walk(
    prog: &Program,
    control: FnId,
    max: usize,
    exact: &impl Fn(TableId) -> bool,
    out: &mut Vec<TableId>,
) {
    fn walk(
        prog: &Program,
        body: &[Stmt],
        depth: u32,
        max: usize,
        exact: &impl Fn(TableId) -> bool,
        out: &mut Vec<TableId>,
    ) {
        for st in body {
            if out.len() >= max || depth > 8 {
                return;
            }
            match st {
                Stmt::ApplyTable { table, .. } => {
                    let ok = prog
                        .tables
                        .get(*table as usize)
                        .is_some_and(|td| td.key_pre.is_empty())
                        && exact(*table);
                    if ok && !out.contains(table) {
                        out.push(*table);
                    }
                }
                Stmt::If(_, a, b) => {
                    walk(prog, a, depth + 1, max, exact, out);
                    walk(prog, b, depth + 1, max, exact, out);
                }
                Stmt::Switch { bodies, .. } => {
                    for b in bodies {
                        walk(prog, b, depth + 1, max, exact, out);
                    }
                }
                Stmt::Call { func, .. } => {
                    if let Some(f) = prog.functions.get(*func as usize) {
                        if f.kind == FnKind::Control {
                            walk(prog, &f.body, depth + 1, max, exact, out);
                        }
                    }
                }
                _ => {}
            }
        }
    }
    if let Some(f) = prog.functions.get(control as usize) {
        walk(prog, &f.body, 0, max, exact, out);
    }
}
