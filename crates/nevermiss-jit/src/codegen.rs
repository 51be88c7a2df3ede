//! The translation of p4-ir functions and parsers into Cranelift IR (docs/jit.md).
//!
//! Every generated function takes the [`Ctx`] pointer and returns a [`flow`] code (parsers: 1
//! accepted, 0 rejected). Frame words are loaded and stored at constant offsets from `Ctx::frame`;
//! nothing is cached in registers across a helper call, so a helper sees and changes the same frame.

use crate::access::{self, Access};
use crate::{
    flow, target, CodeUnit, Ctx, Glue, GlueSrc, GlueStore, Helpers, JitError, Limits, NativeFn,
};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    types, AbiParam, Block, FuncRef, InstBuilder, MemFlagsData, UserFuncName, Value,
};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_codegen::Context;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{FuncId, Linkage, Module};
use p4_ir::ir::*;
use p4_ir::ops::mask;
use std::collections::HashMap;
use std::mem::offset_of;
use std::sync::Arc;

mod checksum;
mod wide;

const I64: types::Type = types::I64;
const I32: types::Type = types::I32;
const I8: types::Type = types::I8;

/// Largest header the native `extract` handles (bytes); larger ones go through the helper.
const EXTRACT_MAX_BYTES: u32 = 128;
/// Copies of at most this many words are inline loads and stores; longer ones call the helper.
const COPY_INLINE_WORDS: u32 = 16;

/// The longest run of words a packet's start need not zero that [`Clean::kept_ranges`] still
/// zeroes, to join the ranges on either side of it.
const ZERO_GAP_WORDS: u32 = 16;
/// Callees of at most this many statements (nested ones counted) are generated in place of
/// their call, up to this depth of calls generated in place.
const INLINE_STMTS: usize = 48;
const INLINE_DEPTH: u32 = 3;

/// Tables whose `const` entries generated code matches itself have at most this many.
pub(crate) const CONST_INLINE_ENTRIES: usize = 16;

/// What a `const` entry's match of one key field requires of the field's value.
use crate::FieldTest as FieldCond;

/// The condition of entry match `m` on a field of kind `kind`, as the runtime installs it
/// (`nevermiss_runtime::build::entry_matches`); `None` where it installs no entry.
fn match_of(kind: MatchKind, m: &EntryMatch, w: u32) -> Option<FieldCond> {
    Some(match (kind, m) {
        (_, EntryMatch::Exact(v)) => FieldCond::Masked(v.low(), u64::MAX),
        (MatchKind::Lpm, EntryMatch::Lpm(v, l)) => FieldCond::prefix(v.low(), *l, w),
        (MatchKind::Lpm, EntryMatch::Any) => FieldCond::Any,
        (MatchKind::Ternary, EntryMatch::Ternary(v, m)) => FieldCond::Masked(v.low(), m.low()),
        (MatchKind::Ternary, EntryMatch::Lpm(v, l)) => FieldCond::prefix(v.low(), *l, w),
        (MatchKind::Ternary, EntryMatch::Any) => FieldCond::Any,
        (MatchKind::Range, EntryMatch::Range(lo, hi)) => FieldCond::Range(lo.low(), hi.low()),
        (MatchKind::Range, EntryMatch::Any) => FieldCond::Any,
        (MatchKind::Optional, EntryMatch::Any) => FieldCond::Any,
        (MatchKind::Optional, EntryMatch::Ternary(v, _)) => FieldCond::Masked(v.low(), u64::MAX),
        _ => return None,
    })
}

/// Whether statements `ss` (and the functions they call) use the entry a table apply matched:
/// `add_entry`, the expiry externs, direct counters and meters.
fn uses_entry(prog: &Program, ss: &[Stmt], depth: u32) -> bool {
    if depth > 8 {
        return true;
    }
    ss.iter().any(|s| match s {
        Stmt::Extern(x) => matches!(
            x.op,
            XOp::AddEntry { .. }
                | XOp::SetEntryExpireTime { .. }
                | XOp::RestartExpireTimer
                | XOp::UpdateExpireInfo
                | XOp::DirectCounterCount
                | XOp::DirectMeterExecute { .. }
                | XOp::DirectMeterRead { .. }
        ),
        Stmt::If(_, a, b) => uses_entry(prog, a, depth) || uses_entry(prog, b, depth),
        Stmt::Switch { bodies, .. } => bodies.iter().any(|b| uses_entry(prog, b, depth)),
        Stmt::Loop { body, update, .. } => {
            uses_entry(prog, body, depth) || uses_entry(prog, update, depth)
        }
        Stmt::Call {
            func,
            copy_in,
            copy_out,
        } => {
            uses_entry(prog, copy_in, depth)
                || uses_entry(prog, copy_out, depth)
                || prog
                    .functions
                    .get(*func as usize)
                    .is_some_and(|f| uses_entry(prog, &f.body, depth + 1))
        }
        _ => false,
    })
}

/// The entries of table `t` in the order they take precedence, when generated code matches
/// them itself (ESwitch's specialisation of a table to its contents; possible for contents
/// that can never change): a table whose entries are `const` (at most
/// [`CONST_INLINE_ENTRIES`] of them), with keys and action parameters of at most 64 bits,
/// no action profile, direct counter or meter, idle timeout or add-on-miss, and actions that
/// neither write parameters back (`@__ref`) nor use the matched entry (`add_entry`, the
/// expiry and direct externs). Entries the runtime does not install (a wildcard on an exact
/// field) are left out; the order is the runtime's: by priority (larger first) when a field is
/// ternary, range or optional, else by prefix length (longer first) when one is lpm, ties in
/// declaration order (the first of two equal entries wins, the second is refused).
fn const_entries(prog: &Program, t: TableId) -> Option<Vec<&ConstEntry>> {
    let td = prog.tables.get(t as usize)?;
    let keys: Vec<&TableKey> = td.keys.iter().collect();
    let ok = td.entries_const
        && !td.entries.is_empty()
        && td.entries.len() <= CONST_INLINE_ENTRIES
        && matchable(prog, td);
    if !ok {
        return None;
    }
    let priority = keys.iter().any(|k| {
        matches!(
            k.kind,
            MatchKind::Ternary | MatchKind::Range | MatchKind::Optional
        )
    });
    let mut es: Vec<&ConstEntry> = td
        .entries
        .iter()
        .filter(|e| {
            e.matches.len() == keys.len()
                && keys
                    .iter()
                    .zip(&e.matches)
                    .all(|(k, m)| match_of(k.kind, m, k.expr.ty().width).is_some())
                && td.actions.get(e.action as usize).is_some()
        })
        .collect();
    let prefix = |e: &ConstEntry| -> u32 {
        keys.iter()
            .zip(&e.matches)
            .filter(|(k, _)| k.kind == MatchKind::Lpm)
            .map(|(k, m)| match m {
                EntryMatch::Lpm(_, l) => (*l).min(k.expr.ty().width),
                EntryMatch::Exact(_) => k.expr.ty().width,
                _ => 0,
            })
            .sum()
    };
    if priority {
        es.sort_by_key(|e| std::cmp::Reverse(e.priority));
    } else if keys.iter().any(|k| k.kind == MatchKind::Lpm) {
        es.sort_by_key(|e| std::cmp::Reverse(prefix(e)));
    }
    Some(es)
}

/// Whether generated code can match table `td`'s entries itself, were they known: keys
/// without calls (and no selector field), keys and action parameters of at most 64 bits, no
/// action profile, direct counter or meter, idle timeout or add-on-miss, and actions that neither
/// write parameters back (`@__ref`) nor use the matched entry.
fn matchable(prog: &Program, td: &Table) -> bool {
    td.key_pre.is_empty()
        && !td.keys.is_empty()
        && td
            .keys
            .iter()
            .all(|k| k.kind != MatchKind::Selector && !k.expr.ty().is_wide())
        && td.implementation.is_none()
        && td.direct_counter.is_none()
        && td.direct_meter.is_none()
        && td.idle_timeout == IdleTimeout::None
        && !td.add_on_miss
        && td.actions.iter().all(|a| {
            a.params.iter().all(|p| !p.ty.is_wide() && !p.is_ref)
                && prog
                    .functions
                    .get(a.func as usize)
                    .is_some_and(|f| !uses_entry(prog, &f.body, 0))
        })
}

/// Whether table `t` is re-specialised to its control-plane entries ([`crate::respecialisable`]).
pub(crate) fn respecialisable(prog: &Program, t: TableId) -> bool {
    prog.tables
        .get(t as usize)
        .is_some_and(|td| !td.entries_const && matchable(prog, td))
}

/// Whether `key` (masked to its `w` bits) meets `c`: an `I8` that is 1 when it does (`None`:
/// always).
fn field_test(b: &mut FunctionBuilder<'_>, key: Value, c: FieldCond, w: u32) -> Option<Value> {
    Some(match c {
        FieldCond::Any => return None,
        FieldCond::Masked(v, msk) => {
            let (v, msk) = (v & mask(w), msk & mask(w));
            if msk == mask(w) {
                b.ins().icmp_imm_s(IntCC::Equal, key, (v & msk) as i64)
            } else {
                let km = b.ins().band_imm_u(key, msk as i64);
                b.ins().icmp_imm_s(IntCC::Equal, km, (v & msk) as i64)
            }
        }
        FieldCond::Range(lo, hi) => {
            let (lo, hi) = (lo & mask(w), hi & mask(w));
            let a = b
                .ins()
                .icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, key, lo as i64);
            let c = b
                .ins()
                .icmp_imm_s(IntCC::UnsignedLessThanOrEqual, key, hi as i64);
            b.ins().band(a, c)
        }
    })
}

/// The value of an action parameter of `width` bits in packed bytes `params` at `off`
/// (big-endian in `n` bytes).
fn param_value(params: &[u8], off: usize, n: usize, width: u32) -> u64 {
    params.get(off..off + n).map_or(0, |b| {
        b.iter().fold(0u64, |acc, x| (acc << 8) | u64::from(*x))
    }) & mask(width)
}

/// Whether the interpreter running `s` may write the frame: everything but an extern call
/// with no result and no `out` arguments, and `emit`.
fn writes_frame(s: &Stmt) -> bool {
    match s {
        Stmt::Emit(_) => false,
        Stmt::Extern(x) => {
            x.ret.is_some()
                || x.args
                    .iter()
                    .any(|a| matches!(a, XArg::Out(..) | XArg::Agg(..)))
        }
        _ => true,
    }
}

/// Statements in `ss`, nested ones included.
fn stmt_count(ss: &[Stmt]) -> usize {
    ss.iter()
        .map(|s| {
            1 + match s {
                Stmt::If(_, a, b) => stmt_count(a) + stmt_count(b),
                Stmt::Switch { bodies, .. } => bodies.iter().map(|b| stmt_count(b)).sum(),
                Stmt::Loop { body, update, .. } => stmt_count(body) + stmt_count(update),
                Stmt::Call {
                    copy_in, copy_out, ..
                }
                | Stmt::CallParser {
                    copy_in, copy_out, ..
                } => stmt_count(copy_in) + stmt_count(copy_out),
                _ => 0,
            }
        })
        .sum()
}

pub(crate) struct Output {
    pub module: JITModule,
    pub functions: Vec<NativeFn>,
    pub parsers: Vec<NativeFn>,
    pub keys: Vec<Option<NativeFn>>,
    pub pass: Option<(NativeFn, NativeFn, NativeFn)>,
    pub code_bytes: usize,
    /// Words the frame needs past `Program::frame_words` ([`Clean`]).
    pub extra_words: u32,
    /// The words of the frame's first `Program::zero_words` a packet's start must zero ([`Clean::kept_ranges`]).
    pub zero_ranges: Vec<(u32, u32)>,
    /// Whether generated code accessed a word the analysis of [`Clean`] missed.
    missed: bool,
}

fn err(e: impl std::fmt::Display) -> JitError {
    JitError::Cranelift(e.to_string())
}

/// Ids of the imported helpers.
struct Imports {
    stmt: FuncId,
    eval: FuncId,
    select: FuncId,
    loop_limit: FuncId,
    bin: FuncId,
    emit_reserve: FuncId,
    table_lookup: FuncId,
    table_find: FuncId,
    table_done: FuncId,
    write_back: FuncId,
    write_word: FuncId,
    add_entry: FuncId,
    const_hit: FuncId,
    count: FuncId,
    direct_count: FuncId,
}

pub(crate) fn compile(
    prog: &Arc<Program>,
    helpers: &Helpers,
    limits: Limits,
    glue: Option<&Glue>,
    arch: &[(u32, u32)],
) -> Result<Output, JitError> {
    let out = compile_with(
        prog,
        helpers,
        limits,
        glue,
        Clean::new(prog, glue, arch, true),
    )?;
    if !out.missed {
        return Ok(out);
    }
    // Generated code accessed a word the analysis said nothing does: a bug in it. The program
    // is compiled again with every field stored and no header sealed.
    if cfg!(debug_assertions) {
        panic!("the frame access analysis of `Clean` missed an access");
    }
    // SAFETY: nothing of the first module's code was handed out.
    unsafe { out.module.free_memory() };
    compile_with(
        prog,
        helpers,
        limits,
        glue,
        Clean::new(prog, glue, arch, false),
    )
}

fn compile_with(
    prog: &Arc<Program>,
    helpers: &Helpers,
    limits: Limits,
    glue: Option<&Glue>,
    clean: Clean,
) -> Result<Output, JitError> {
    let mut jb = JITBuilder::with_isa(isa()?, cranelift_module::default_libcall_names());
    jb.symbol("nm_stmt", helpers.stmt as *const u8);
    jb.symbol("nm_eval", helpers.eval as *const u8);
    jb.symbol("nm_select", helpers.select as *const u8);
    jb.symbol("nm_loop_limit", helpers.loop_limit as *const u8);
    jb.symbol("nm_bin", crate::bin_op as *const u8);
    jb.symbol("nm_emit_reserve", helpers.emit_reserve as *const u8);
    jb.symbol("nm_table_lookup", helpers.table_lookup as *const u8);
    jb.symbol("nm_table_find", helpers.table_find as *const u8);
    jb.symbol("nm_table_done", helpers.table_done as *const u8);
    jb.symbol("nm_write_back", helpers.write_back as *const u8);
    jb.symbol("nm_write_word", helpers.write_word as *const u8);
    jb.symbol("nm_add_entry", helpers.add_entry as *const u8);
    jb.symbol("nm_const_hit", helpers.const_hit as *const u8);
    jb.symbol("nm_count", helpers.count as *const u8);
    jb.symbol("nm_direct_count", helpers.direct_count as *const u8);
    let mut module = JITModule::new(jb);

    let sig = |params: &[types::Type], ret: Option<types::Type>, m: &JITModule| {
        let mut s = m.make_signature();
        for p in params {
            s.params.push(AbiParam::new(*p));
        }
        if let Some(r) = ret {
            s.returns.push(AbiParam::new(r));
        }
        s
    };
    let native_sig = sig(&[I64], Some(I32), &module);
    let imp = |m: &mut JITModule, name: &str, params: &[types::Type], ret: Option<types::Type>| {
        let s = sig(params, ret, m);
        m.declare_function(name, Linkage::Import, &s).map_err(err)
    };
    let imports = Imports {
        stmt: imp(&mut module, "nm_stmt", &[I64, I64], Some(I32))?,
        eval: imp(&mut module, "nm_eval", &[I64, I64], Some(I64))?,
        select: imp(&mut module, "nm_select", &[I64, I64], Some(I32))?,
        loop_limit: imp(&mut module, "nm_loop_limit", &[I64], None)?,
        bin: imp(&mut module, "nm_bin", &[I32, I32, I32, I64, I64], Some(I64))?,
        emit_reserve: imp(&mut module, "nm_emit_reserve", &[I64, I64], Some(I64))?,
        table_lookup: imp(
            &mut module,
            "nm_table_lookup",
            &[I64, I32, I32, I32, I64],
            Some(I32),
        )?,
        table_find: imp(&mut module, "nm_table_find", &[I64, I32, I64], Some(I64))?,
        table_done: imp(&mut module, "nm_table_done", &[I64, I32, I32], None)?,
        write_back: imp(&mut module, "nm_write_back", &[I64, I32, I64], None)?,
        write_word: imp(&mut module, "nm_write_word", &[I64, I32, I64, I64], None)?,
        add_entry: imp(
            &mut module,
            "nm_add_entry",
            &[I64, I32, I64, I64],
            Some(I32),
        )?,
        const_hit: imp(&mut module, "nm_const_hit", &[I64, I32], None)?,
        count: imp(&mut module, "nm_count", &[I64, I32, I64, I64], None)?,
        direct_count: imp(&mut module, "nm_direct_count", &[I64, I32, I64], None)?,
    };

    let mut fn_ids = Vec::with_capacity(prog.functions.len());
    for (i, _) in prog.functions.iter().enumerate() {
        let id = module
            .declare_function(&format!("f{i}"), Linkage::Local, &native_sig)
            .map_err(err)?;
        fn_ids.push(id);
    }
    let mut parser_ids = Vec::with_capacity(prog.parsers.len());
    for (i, _) in prog.parsers.iter().enumerate() {
        let id = module
            .declare_function(&format!("p{i}"), Linkage::Local, &native_sig)
            .map_err(err)?;
        parser_ids.push(id);
    }

    let mut fctx = FunctionBuilderContext::new();
    let mut ctx = module.make_context();
    let mut code_bytes = 0usize;
    let ids = Ids {
        functions: &fn_ids,
        parsers: &parser_ids,
        imports: &imports,
        clean: &clean,
        whole: glue
            .and_then(|g| g.controls.last())
            .and_then(|&d| whole_emit_run(prog, d)),
    };
    for (i, f) in prog.functions.iter().enumerate() {
        ctx.func.signature = native_sig.clone();
        ctx.func.name = UserFuncName::user(0, i as u32);
        build(&mut module, &mut ctx, &mut fctx, prog, &ids, limits, |g| {
            g.function_body(&f.body);
            Ok(())
        })
        .map_err(|e| e.in_unit(CodeUnit::Function(f.name.clone())))?;
        define(&mut module, fn_ids[i], &mut ctx, &mut code_bytes)
            .map_err(|e| e.in_unit(CodeUnit::Function(f.name.clone())))?;
    }
    for (i, p) in prog.parsers.iter().enumerate() {
        ctx.func.signature = native_sig.clone();
        ctx.func.name = UserFuncName::user(1, i as u32);
        build(&mut module, &mut ctx, &mut fctx, prog, &ids, limits, |g| {
            g.parser(p);
            Ok(())
        })
        .map_err(|e| e.in_unit(CodeUnit::Parser(p.name.clone())))?;
        define(&mut module, parser_ids[i], &mut ctx, &mut code_bytes)
            .map_err(|e| e.in_unit(CodeUnit::Parser(p.name.clone())))?;
    }
    // One key function per table whose key fields are all ≤ 64 bits.
    let mut key_ids = Vec::with_capacity(prog.tables.len());
    for (i, t) in prog.tables.iter().enumerate() {
        let narrow = t
            .keys
            .iter()
            .filter(|k| k.kind != MatchKind::Selector)
            .all(|k| !k.expr.ty().is_wide());
        if !narrow {
            key_ids.push(None);
            continue;
        }
        let id = module
            .declare_function(&format!("k{i}"), Linkage::Local, &native_sig)
            .map_err(err)?;
        ctx.func.signature = native_sig.clone();
        ctx.func.name = UserFuncName::user(2, i as u32);
        build(&mut module, &mut ctx, &mut fctx, prog, &ids, limits, |g| {
            g.table_key(t);
            Ok(())
        })
        .map_err(|e| e.in_unit(CodeUnit::TableKey(t.name.clone())))?;
        define(&mut module, id, &mut ctx, &mut code_bytes)
            .map_err(|e| e.in_unit(CodeUnit::TableKey(t.name.clone())))?;
        key_ids.push(Some(id));
    }
    // The architecture's packet pass: its two halves, and the two in one function.
    let mut pass_ids = None;
    if let Some(gl) = glue {
        let mut half = |name: &'static str, n: u32| -> Result<FuncId, JitError> {
            let id = module
                .declare_function(name, Linkage::Local, &native_sig)
                .map_err(err)?;
            ctx.func.signature = native_sig.clone();
            ctx.func.name = UserFuncName::user(3, n);
            build(
                &mut module,
                &mut ctx,
                &mut fctx,
                prog,
                &ids,
                limits,
                |g| match n {
                    0 => g.pass_parse(gl),
                    1 => g.pass_run(gl),
                    _ => g.pass_whole(gl),
                },
            )
            .map_err(|e| e.in_unit(CodeUnit::Pass(name)))?;
            define(&mut module, id, &mut ctx, &mut code_bytes)
                .map_err(|e| e.in_unit(CodeUnit::Pass(name)))?;
            Ok(id)
        };
        pass_ids = Some((
            half("pass_parse", 0)?,
            half("pass_run", 1)?,
            half("pass", 2)?,
        ));
    }
    module.finalize_definitions().map_err(err)?;
    let get = |id: FuncId| -> NativeFn {
        let p = module.get_finalized_function(id);
        // SAFETY: every function was defined with `native_sig`, i.e. `extern "C" fn(*mut Ctx) -> u32`
        // in the host's calling convention.
        unsafe { std::mem::transmute::<*const u8, NativeFn>(p) }
    };
    let functions = fn_ids.iter().map(|&id| get(id)).collect();
    let parsers = parser_ids.iter().map(|&id| get(id)).collect();
    let keys = key_ids.iter().map(|id| id.map(get)).collect();
    let pass = pass_ids.map(|(a, b, c)| (get(a), get(b), get(c)));
    Ok(Output {
        module,
        functions,
        parsers,
        keys,
        pass,
        code_bytes,
        extra_words: clean.words(),
        zero_ranges: clean.kept_ranges(prog.zero_words),
        missed: clean.missed.get(),
    })
}

/// The host's code generator, as every module uses it.
fn isa() -> Result<cranelift_codegen::isa::OwnedTargetIsa, JitError> {
    let mut flags = settings::builder();
    flags.set("opt_level", "speed").map_err(err)?;
    flags.set("is_pic", "false").map_err(err)?;
    flags.set("use_colocated_libcalls", "false").map_err(err)?;
    cranelift_native::builder()
        .map_err(err)?
        .finish(settings::Flags::new(flags))
        .map_err(err)
}

/// Table `t`'s matching code for `entries` ([`crate::specialise`]), in a module of its own:
/// (module, the function's address, bytes of code).
pub(crate) fn specialise(
    prog: &Program,
    helpers: &Helpers,
    t: TableId,
    entries: &[crate::SpecEntry],
) -> Result<(JITModule, usize, usize), JitError> {
    let td = prog
        .tables
        .get(t as usize)
        .filter(|_| respecialisable(prog, t))
        .ok_or(JitError::NotSpecialisable { table: t })?;
    if entries.len() > CONST_INLINE_ENTRIES {
        return Err(JitError::TooManyEntries.in_unit(CodeUnit::Spec(td.name.clone())));
    }
    let widths: Vec<u32> = td.keys.iter().map(|k| k.expr.ty().width).collect();
    let mut jb = JITBuilder::with_isa(isa()?, cranelift_module::default_libcall_names());
    jb.symbol("nm_const_hit", helpers.const_hit as *const u8);
    let mut module = JITModule::new(jb);
    let mut hs = module.make_signature();
    hs.params.push(AbiParam::new(I64));
    hs.params.push(AbiParam::new(I32));
    let const_hit = module
        .declare_function("nm_const_hit", Linkage::Import, &hs)
        .map_err(err)?;
    let mut sig = module.make_signature();
    for _ in 0..=widths.len() {
        sig.params.push(AbiParam::new(I64));
    }
    sig.returns.push(AbiParam::new(I32));
    let id = module
        .declare_function(&format!("s{t}"), Linkage::Local, &sig)
        .map_err(err)?;
    let mut ctx = module.make_context();
    ctx.func.signature = sig;
    ctx.func.name = UserFuncName::user(4, t);
    let mut fctx = FunctionBuilderContext::new();
    {
        let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let ps = b.block_params(entry).to_vec();
        let (ctxp, keys) = (ps[0], &ps[1..]);
        let hit_fn = module.declare_func_in_func(const_hit, b.func);
        for e in entries {
            if e.tests.len() != keys.len() {
                return Err(JitError::EntryKey.in_unit(CodeUnit::Spec(td.name.clone())));
            }
            let mut all = b.ins().iconst(I8, 1);
            for ((&k, &c), &w) in keys.iter().zip(&e.tests).zip(&widths) {
                if let Some(cond) = field_test(&mut b, k, c, w) {
                    all = b.ins().band(all, cond);
                }
            }
            let (hit_blk, next) = (b.create_block(), b.create_block());
            b.ins().brif(all, hit_blk, &[], next, &[]);
            b.switch_to_block(hit_blk);
            let tv = b.ins().iconst(I32, i64::from(t));
            b.ins().call(hit_fn, &[ctxp, tv]);
            if let Some(a) = td.actions.get(e.action as usize) {
                let frame = b.ins().load(
                    I64,
                    MemFlagsData::trusted(),
                    ctxp,
                    offset_of!(Ctx, frame) as i32,
                );
                let mut off = 0usize;
                for p in &a.params {
                    let n = p.ty.bytes();
                    let v = param_value(&e.params, off, n, p.ty.width);
                    off += n;
                    if p.slot < prog.frame_words {
                        let c = b.ins().iconst(I64, v as i64);
                        b.ins()
                            .store(MemFlagsData::trusted(), c, frame, (p.slot * 8) as i32);
                    }
                }
            }
            let av = b.ins().iconst(I32, i64::from(e.action));
            b.ins().return_(&[av]);
            b.switch_to_block(next);
        }
        let miss = b.ins().iconst(I32, i64::from(crate::SPEC_MISS as i32));
        b.ins().return_(&[miss]);
        b.seal_all_blocks();
        b.finalize(module.isa().frontend_config());
    }
    let mut code_bytes = 0;
    define(&mut module, id, &mut ctx, &mut code_bytes)
        .map_err(|e| e.in_unit(CodeUnit::Spec(td.name.clone())))?;
    module.finalize_definitions().map_err(err)?;
    let addr = module.get_finalized_function(id) as usize;
    Ok((module, addr, code_bytes))
}

struct Ids<'a> {
    functions: &'a [FuncId],
    parsers: &'a [FuncId],
    imports: &'a Imports,
    clean: &'a Clean,
    /// The deparser's run of `emit`s that is all it emits ([`whole_emit_run`]).
    whole: Option<WholeRun>,
}

/// A deparser's `emit`s that may be skipped for the packet as it came
/// ([`Gen::emit_run`]): the address of the run's first statement in the program and its
/// length. The program is behind an `Arc` and not changed while it is compiled, so the address
/// names the statement.
#[derive(Clone, Copy)]
struct WholeRun {
    first: *const Stmt,
    len: usize,
}

/// The run of `emit`s of the pass's deparser `d` ([`Glue::controls`]' last) when it is all the
/// deparser emits: `d`'s body has one run of ≥ 2 consecutive top-level `emit`s and no other
/// `emit`, call of a function or parser anywhere, and nothing calls `d`. The packet's output is
/// then empty when the run starts and holds nothing else when the deparser ends, so when the
/// valid headers of the run are clean copies that tile the packet from its first byte to
/// the parser's cursor, the output would be the packet itself ([`Gen::emit_run`]).
fn whole_emit_run(prog: &Program, d: u32) -> Option<WholeRun> {
    fn calls_or_emits(ss: &[Stmt], d: Option<u32>) -> bool {
        ss.iter().any(|s| match s {
            Stmt::Call { func, .. } => d.is_none_or(|d| *func == d),
            Stmt::CallParser { .. } => d.is_none(),
            Stmt::Emit(_) => d.is_none(),
            Stmt::If(_, a, b) => calls_or_emits(a, d) || calls_or_emits(b, d),
            Stmt::Switch { bodies, .. } => bodies.iter().any(|b| calls_or_emits(b, d)),
            Stmt::Loop { body, update, .. } => calls_or_emits(body, d) || calls_or_emits(update, d),
            _ => false,
        })
    }
    let called = prog
        .functions
        .iter()
        .any(|f| calls_or_emits(&f.body, Some(d)))
        || prog.parsers.iter().any(|p| {
            calls_or_emits(&p.init, Some(d))
                || p.states.iter().any(|st| calls_or_emits(&st.body, Some(d)))
        });
    let body = &prog.functions.get(d as usize)?.body;
    let start = body.iter().position(|s| matches!(s, Stmt::Emit(_)))?;
    let len = body[start..]
        .iter()
        .take_while(|s| matches!(s, Stmt::Emit(_)))
        .count();
    if called
        || len < 2
        || calls_or_emits(&body[..start], None)
        || calls_or_emits(&body[start + len..], None)
    {
        return None;
    }
    Some(WholeRun {
        first: &body[start],
        len,
    })
}

/// Headers whose bytes `emit` may copy from the packet instead of packing their fields (PISCES'
/// "inline editing"): a header extracted in place and written by nothing since is, byte for
/// byte, the packet's bytes at its extract. Words past the program's frame hold, per packet, a
/// word that makes every header dirty (`all`), then one word per tracked header: 0 (dirty, or
/// not extracted in place) or 1 + the byte offset in the packet it was extracted from. Every
/// store generated code makes into a tracked header clears its word; a call of a runtime
/// helper that may write the frame sets `all`.
///
/// A tracked header that nothing but its own `extract`s ever writes ([`Access`]: no statement,
/// no table apply, no extern, no architecture code) is *sealed*: its word alone says whether it
/// is clean (`all` does not concern it), and it is dirty only after the runtime's `extract`
/// filled every field. The inline `extract` stores only the fields something may read
/// ([`Clean::keeps`]); an emit of a sealed header reads none of them while it is clean.
pub(crate) struct Clean {
    /// Per frame word: the tracked header it belongs to (`u32::MAX`: none).
    of_word: Vec<u32>,
    /// Per tracked header: its validity word.
    headers: Vec<u32>,
    /// Per tracked header: whether it is sealed.
    sealed: Vec<bool>,
    /// Per frame word: whether anything may read it (the inline `extract` stores the fields
    /// whose word it is); empty: every word.
    read: Vec<bool>,
    /// Per frame word: read, but always written first in a packet
    /// ([`access::written_before_read`]), so a packet's start need not zero it.
    no_zero: Vec<bool>,
    /// The frame word of `all`; the header words follow it.
    base: u32,
    /// Set when generated code stores into a sealed header or loads a word nobody reads:
    /// the analysis missed an access, and [`compile`] compiles again without it.
    missed: std::cell::Cell<bool>,
}

impl Clean {
    /// Headers both extracted (in place) and emitted somewhere in `prog`; with `analyse`, which
    /// of them are sealed and which frame words anything reads, given the glue's stores and the
    /// frame regions the runtime's architecture code reads or writes itself (`arch`).
    fn new(prog: &Program, glue: Option<&Glue>, arch: &[(u32, u32)], analyse: bool) -> Clean {
        fn walk(ss: &[Stmt], ex: &mut Vec<(u32, HeaderId)>, em: &mut Vec<(u32, HeaderId)>) {
            for s in ss {
                match s {
                    Stmt::Extract {
                        hdr,
                        varbit_bits: None,
                    } if hdr.loc.fixed().is_some() => ex.push((hdr.loc.off, hdr.layout)),
                    Stmt::Emit(hdr) if hdr.loc.fixed().is_some() => {
                        em.push((hdr.loc.off, hdr.layout))
                    }
                    Stmt::If(_, a, b) => {
                        walk(a, ex, em);
                        walk(b, ex, em);
                    }
                    Stmt::Switch { bodies, .. } => bodies.iter().for_each(|b| walk(b, ex, em)),
                    Stmt::Loop { body, update, .. } => {
                        walk(body, ex, em);
                        walk(update, ex, em);
                    }
                    _ => {}
                }
            }
        }
        let (mut ex, mut em) = (Vec::new(), Vec::new());
        for f in &prog.functions {
            walk(&f.body, &mut ex, &mut em);
        }
        for p in &prog.parsers {
            walk(&p.init, &mut ex, &mut em);
            for st in &p.states {
                walk(&st.body, &mut ex, &mut em);
            }
        }
        let mut of_word = vec![u32::MAX; prog.frame_words as usize];
        let mut headers = Vec::new();
        let mut layouts = Vec::new();
        ex.sort_unstable();
        ex.dedup();
        for (off, h) in ex {
            let Some(hl) = prog.headers.get(h as usize) else {
                continue;
            };
            let end = u64::from(off) + u64::from(hl.words);
            if !em.contains(&(off, h)) || end > u64::from(prog.frame_words) {
                continue;
            }
            let range = off as usize..end as usize;
            // Two instances over the same words (unions): not tracked.
            if of_word[range.clone()].iter().any(|w| *w != u32::MAX) {
                continue;
            }
            of_word[range].fill(headers.len() as u32);
            headers.push(off);
            layouts.push(h);
        }
        let mut clean = Clean {
            sealed: vec![false; headers.len()],
            of_word,
            headers,
            read: Vec::new(),
            no_zero: Vec::new(),
            base: prog.frame_words,
            missed: std::cell::Cell::new(false),
        };
        if analyse {
            clean.analyse(prog, &layouts, glue, arch);
        }
        clean
    }

    /// [`Clean::sealed`] and [`Clean::read`] of `prog` ([`Access`]).
    fn analyse(
        &mut self,
        prog: &Program,
        layouts: &[HeaderId],
        glue: Option<&Glue>,
        arch: &[(u32, u32)],
    ) {
        let n = prog.frame_words as usize;
        let mut acc = Access::of_program(prog);
        for g in glue
            .iter()
            .flat_map(|g| g.before_parse.iter().chain(&g.after_parse))
        {
            acc.writes.push((u64::from(g.off), u64::from(g.off) + 1));
        }
        for &(o, w) in arch {
            let r = (u64::from(o), u64::from(o) + u64::from(w));
            acc.reads.push(r);
            acc.writes.push(r);
        }
        let mark = |v: &mut Vec<bool>, (lo, hi): (u64, u64)| {
            let (lo, hi) = (lo.min(n as u64) as usize, hi.min(n as u64) as usize);
            if lo < hi {
                v[lo..hi].fill(true);
            }
        };
        let hwords = |h: HeaderId| prog.headers.get(h as usize).map_or(1, |hl| hl.words);
        let mut written = vec![false; n];
        for r in &acc.writes {
            mark(&mut written, *r);
        }
        // An extract of anything but a tracked header, at its place and with its layout, writes.
        for &(o, h) in &acc.extracts {
            let exact = self.header_at(o).is_some_and(|i| layouts[i as usize] == h);
            if !exact {
                let o = u64::from(o);
                mark(&mut written, (o, o + u64::from(hwords(h))));
            }
        }
        // A header that is not whole bytes (or has a varbit field) leaves the deparser's output
        // off a byte boundary, where an inline emit calls the runtime's, which reads every field.
        let odd = acc.emits.iter().any(|h| {
            prog.headers.get(h.layout as usize).is_none_or(|hl| {
                hl.fixed_bits % 8 != 0 || hl.fields.iter().any(|f| f.varbit.is_some())
            })
        });
        for (i, &off) in self.headers.iter().enumerate() {
            let end = off + hwords(layouts[i]);
            self.sealed[i] = !odd
                && end <= prog.zero_words
                && !written[off as usize..end as usize].iter().any(|w| *w);
        }
        let mut read = vec![false; n];
        for r in &acc.reads {
            mark(&mut read, *r);
        }
        // An emit reads the validity word; the fields too unless the header is sealed (while it
        // is clean they are copied from the packet; after the runtime's extract, which stored
        // them all, they are packed).
        for h in &acc.emits {
            let sealed = h
                .loc
                .fixed()
                .and_then(|o| self.header_at(o))
                .is_some_and(|i| self.sealed[i as usize] && layouts[i as usize] == h.layout);
            let (lo, hi) = access::span(&h.loc, hwords(h.layout));
            mark(&mut read, if sealed { (lo, lo + 1) } else { (lo, hi) });
        }
        self.read = read;
        self.no_zero = access::written_before_read(prog, arch);
    }

    /// Words past the frame this needs (none without tracked headers).
    pub(crate) fn words(&self) -> u32 {
        if self.headers.is_empty() {
            0
        } else {
            1 + self.headers.len() as u32
        }
    }

    /// The frame word of tracked header `i`'s state.
    fn word(&self, i: u32) -> u32 {
        self.base + 1 + i
    }

    /// The tracked header whose validity word is `off`.
    fn header_at(&self, off: u32) -> Option<u32> {
        self.headers
            .iter()
            .position(|h| *h == off)
            .map(|i| i as u32)
    }

    /// Whether tracked header `i` is sealed.
    fn is_sealed(&self, i: u32) -> bool {
        self.sealed.get(i as usize).copied().unwrap_or(false)
    }

    /// Whether frame word `off` may be read by anything (words past the frame: always).
    fn keeps(&self, off: u32) -> bool {
        self.read.is_empty() || self.read.get(off as usize).copied().unwrap_or(true)
    }

    /// Whether a packet's start must zero frame word `off`: something may read it
    /// ([`Clean::keeps`]) and it is not always written first (`no_zero`).
    fn zeroes(&self, off: u32) -> bool {
        self.keeps(off) && !self.no_zero.get(off as usize).copied().unwrap_or(false)
    }

    /// The words of `[0, words)` that a packet's start must zero ([`Clean::zeroes`]), as sorted,
    /// disjoint half-open ranges: the only ones a packet's start must zero, since a word
    /// nothing reads keeps the previous packet's value unseen.
    pub(crate) fn kept_ranges(&self, words: u32) -> Vec<(u32, u32)> {
        let mut v: Vec<(u32, u32)> = Vec::new();
        for w in (0..words).filter(|&w| self.zeroes(w)) {
            match v.last_mut() {
                // A short gap of words nothing needs zeroed is zeroed too: one fill instead of
                // two (a fill call costs more than 16 words' stores; zeroing a word is never
                // wrong, the interpreter zeroes them all).
                Some((_, end)) if w - *end <= ZERO_GAP_WORDS => *end = w + 1,
                _ => v.push((w, w + 1)),
            }
        }
        v
    }
}

/// Whether generated code packs every key field of `t` (selector fields aside): any field of at
/// most 64 bits, a wider one of the forms [`Gen::wide_native`] accepts.
fn key_native(t: &Table) -> bool {
    t.keys
        .iter()
        .filter(|k| k.kind != MatchKind::Selector)
        .all(|k| !k.expr.ty().is_wide() || Gen::wide_native(&k.expr))
}

/// Whether statement `s` may move `Ctx::cursor` other than by an inline `extract` (which keeps
/// [`Parsing::cursor`] right itself): anything that may call the runtime or another parser.
/// Nested statements are generated by `Gen::stmts`, which looks at each of them.
fn may_move_cursor(s: &Stmt) -> bool {
    !matches!(
        s,
        Stmt::Assign(..)
            | Stmt::AssignSlice(..)
            | Stmt::Copy { .. }
            | Stmt::Zero { .. }
            | Stmt::SetValid { .. }
            | Stmt::If(..)
            | Stmt::Switch { .. }
            | Stmt::Loop { .. }
            | Stmt::Break
            | Stmt::Continue
            | Stmt::Return
            | Stmt::Exit
    ) && !matches!(s, Stmt::Extract { hdr, varbit_bits: None } if hdr.loc.fixed().is_some())
}

fn define(
    module: &mut JITModule,
    id: FuncId,
    ctx: &mut Context,
    code_bytes: &mut usize,
) -> Result<(), JitError> {
    // `NEVERMISS_JIT_DUMP=1` prints every function's machine code (docs/jit.md).
    let dump = std::env::var_os("NEVERMISS_JIT_DUMP").is_some_and(|v| v == "1");
    ctx.set_disasm(dump);
    let name = ctx.func.name.to_string();
    module
        .define_function(id, ctx)
        .map_err(|e| JitError::Cranelift(format!("{e:?}")))?;
    if let Some(c) = ctx.compiled_code() {
        *code_bytes += c.code_buffer().len();
        if let (true, Some(text)) = (dump, &c.vcode) {
            eprintln!("== {name} ({} bytes)\n{text}", c.code_buffer().len());
        }
    }
    module.clear_context(ctx);
    Ok(())
}

fn build(
    module: &mut JITModule,
    ctx: &mut Context,
    fctx: &mut FunctionBuilderContext,
    prog: &Program,
    ids: &Ids<'_>,
    limits: Limits,
    body: impl FnOnce(&mut Gen<'_, '_>) -> Result<(), JitError>,
) -> Result<(), JitError> {
    let frontend = module.isa().frontend_config();
    let mut b = FunctionBuilder::new(&mut ctx.func, fctx);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let ctxp = b.block_params(entry)[0];
    let frame = b.ins().load(
        I64,
        MemFlagsData::trusted(),
        ctxp,
        offset_of!(Ctx, frame) as i32,
    );
    let ret = b.create_block();
    b.append_block_param(ret, I32);
    let mut g = Gen {
        b,
        module,
        prog,
        ids,
        limits,
        ctx: ctxp,
        frame,
        refs: HashMap::new(),
        loops: Vec::new(),
        ret,
        inline_depth: 0,
        parsing: None,
    };
    body(&mut g)?;
    // The return block: every path that ends the function jumps here with its code.
    g.b.switch_to_block(g.ret);
    let code = g.b.block_params(g.ret)[0];
    g.b.ins().return_(&[code]);
    g.b.seal_all_blocks();
    g.b.finalize(frontend);
    Ok(())
}

/// A field of a header the inline `extract`/`emit` handle: (word offset from the validity word,
/// bit offset in the header, width).
type FastField = (u32, u32, u32);

/// Where a statement list goes when a statement ends it early (a helper's non-`NEXT` code, `return`,
/// `exit`, a reject): a block taking the [`flow`] code.
type Abort = Block;

struct Gen<'a, 'b> {
    b: FunctionBuilder<'b>,
    module: &'a mut JITModule,
    prog: &'a Program,
    ids: &'a Ids<'a>,
    limits: Limits,
    ctx: Value,
    frame: Value,
    refs: HashMap<FuncId, FuncRef>,
    /// Innermost last: (continue target, break target).
    loops: Vec<(Block, Block)>,
    ret: Block,
    /// Calls generated in place around the current statement.
    inline_depth: u32,
    /// Inside a parser: the cursor (`Ctx::cursor`, which every change also stores) as a
    /// variable, so a parse path from a known start folds its bounds checks and offsets into
    /// constants, and the packet's address and length (loaded once: they do not change while
    /// a parser runs).
    parsing: Option<Parsing>,
}

#[derive(Clone, Copy)]
struct Parsing {
    cursor: Variable,
    /// The parser's reject (its error already set).
    reject: Block,
    input: Value,
    input_len: Value,
}

impl Gen<'_, '_> {
    fn fref(&mut self, id: FuncId) -> FuncRef {
        if let Some(r) = self.refs.get(&id) {
            return *r;
        }
        let r = self.module.declare_func_in_func(id, self.b.func);
        self.refs.insert(id, r);
        r
    }

    fn iconst(&mut self, v: u64) -> Value {
        self.b.ins().iconst(I64, v as i64)
    }

    fn ctx_field(&mut self, off: usize) -> Value {
        self.b
            .ins()
            .load(I64, MemFlagsData::trusted(), self.ctx, off as i32)
    }

    fn ctx_store(&mut self, off: usize, v: Value) {
        self.b
            .ins()
            .store(MemFlagsData::trusted(), v, self.ctx, off as i32);
    }

    /// Continues code generation in a new block (after a terminator).
    fn fresh(&mut self) {
        let blk = self.b.create_block();
        self.b.switch_to_block(blk);
    }

    fn jump_code(&mut self, to: Block, code: u32) {
        let c = self.b.ins().iconst(I32, i64::from(code));
        self.b.ins().jump(to, &[c.into()]);
    }

    /// Whether the fixed word range `off..off+n` lies inside the frame.
    fn in_frame(&self, off: u32, n: u32) -> bool {
        u64::from(off) + u64::from(n) <= u64::from(self.prog.frame_words)
    }

    /// Loads frame word `off`, which the analysis of [`Clean`] must know may be read.
    fn ld(&mut self, off: u32) -> Value {
        if !self.ids.clean.keeps(off) {
            self.ids.clean.missed.set(true);
        }
        self.ld_raw(off)
    }

    fn ld_raw(&mut self, off: u32) -> Value {
        self.b
            .ins()
            .load(I64, MemFlagsData::trusted(), self.frame, (off * 8) as i32)
    }

    /// Stores frame word `off`; a store into a tracked header makes it dirty ([`Clean`]) — and
    /// must not be into a sealed one.
    fn st(&mut self, off: u32, v: Value) {
        self.st_raw(off, v);
        if let Some(&i) = self.ids.clean.of_word.get(off as usize) {
            if i != u32::MAX {
                if self.ids.clean.is_sealed(i) {
                    self.ids.clean.missed.set(true);
                }
                let z = self.iconst(0);
                self.st_raw(self.ids.clean.word(i), z);
            }
        }
    }

    fn st_raw(&mut self, off: u32, v: Value) {
        self.b
            .ins()
            .store(MemFlagsData::trusted(), v, self.frame, (off * 8) as i32);
    }

    /// Every tracked header dirty: after a runtime helper that may write the frame.
    fn all_dirty(&mut self) {
        if self.ids.clean.words() > 0 {
            let one = self.iconst(1);
            self.st_raw(self.ids.clean.base, one);
        }
    }

    fn mask_to(&mut self, v: Value, w: u32) -> Value {
        if w >= 64 {
            v
        } else {
            self.b.ins().band_imm_u(v, mask(w) as i64)
        }
    }

    /// Sign-extends the `w`-bit pattern `v` to 64 bits.
    fn sext(&mut self, v: Value, w: u32) -> Value {
        if w == 0 {
            return self.iconst(0);
        }
        if w >= 64 {
            return v;
        }
        let s = i64::from(64 - w);
        let l = self.b.ins().ishl_imm_u(v, s);
        self.b.ins().sshr_imm_u(l, s)
    }

    fn bool64(&mut self, cc: IntCC, a: Value, b: Value) -> Value {
        let c = self.b.ins().icmp(cc, a, b);
        self.b.ins().uextend(I64, c)
    }

    // ------------------------------------------------------------------ calls into the runtime

    fn call_stmt(&mut self, s: &Stmt) -> Value {
        let f = self.fref(self.ids.imports.stmt);
        let p = self.iconst(s as *const Stmt as u64);
        let call = self.b.ins().call(f, &[self.ctx, p]);
        self.b.inst_results(call)[0]
    }

    /// A statement the runtime runs: a non-`NEXT` code ends the list at `abort`.
    fn helper_stmt(&mut self, s: &Stmt, abort: Abort) {
        let code = self.call_stmt(s);
        // The interpreter's extract writes that header's words only, and only when it succeeds
        // (a failed one leaves the header as it was, clean or not).
        let extracted = match s {
            Stmt::Extract { hdr, .. } => hdr.loc.fixed().map(|o| self.ids.clean.header_at(o)),
            _ => None,
        };
        if extracted.is_none() && writes_frame(s) {
            self.all_dirty();
        }
        let next = self.b.create_block();
        self.b.ins().brif(code, abort, &[code.into()], next, &[]);
        self.b.switch_to_block(next);
        if let Some(Some(i)) = extracted {
            let z = self.iconst(0);
            self.st_raw(self.ids.clean.word(i), z);
        }
    }

    fn helper_eval(&mut self, e: &Expr) -> Value {
        let f = self.fref(self.ids.imports.eval);
        let p = self.iconst(e as *const Expr as u64);
        let call = self.b.ins().call(f, &[self.ctx, p]);
        self.b.inst_results(call)[0]
    }

    fn helper_bin(&mut self, op: u32, t: Ty, a: Value, b: Value) -> Value {
        let f = self.fref(self.ids.imports.bin);
        let op = self.b.ins().iconst(I32, i64::from(op));
        let w = self.b.ins().iconst(I32, i64::from(t.width));
        let s = self.b.ins().iconst(I32, i64::from(t.signed));
        let call = self.b.ins().call(f, &[op, w, s, a, b]);
        self.b.inst_results(call)[0]
    }

    // ------------------------------------------------------------------ expressions

    /// Whether `e` is computed by generated code (every operand ≤ 64 bits).
    fn native(e: &Expr) -> bool {
        if Self::narrow_of_wide(e) {
            return true;
        }
        match e {
            Expr::Const(_, t) | Expr::Load(_, t) => !t.is_wide(),
            Expr::Big(..) => false,
            Expr::LoadDyn(l, t) => !t.is_wide() && l.dyn_idx.iter().all(|d| Self::native(&d.index)),
            Expr::Un(_, t, a) => !t.is_wide() && Self::native(a),
            Expr::Bin(_, t, a, b) => !t.is_wide() && Self::native(a) && Self::native(b),
            Expr::Cmp(_, t, a, b) => !t.is_wide() && Self::native(a) && Self::native(b),
            Expr::And(a, b) | Expr::Or(a, b) => Self::native(a) && Self::native(b),
            Expr::Mux(c, a, b, t) => {
                !t.is_wide() && Self::native(c) && Self::native(a) && Self::native(b)
            }
            Expr::Cast(to, from, a) => !to.is_wide() && !from.is_wide() && Self::native(a),
            Expr::Slice(a, t, _, _) => !t.is_wide() && Self::native(a),
            Expr::Concat(a, b, t, bw) => {
                !t.is_wide() && *bw < 64 && Self::native(a) && Self::native(b)
            }
        }
    }

    /// The value of a scalar expression of width ≤ 64 (masked to its width).
    fn expr(&mut self, e: &Expr) -> Value {
        if !Self::native(e) {
            return self.helper_eval(e);
        }
        self.native_expr(e)
    }

    fn native_expr(&mut self, e: &Expr) -> Value {
        if Self::narrow_of_wide(e) {
            return self.narrow_of_wide_expr(e);
        }
        match e {
            Expr::Const(v, _) => self.iconst(*v),
            Expr::Big(..) => self.helper_eval(e),
            Expr::Load(o, _) => {
                if self.in_frame(*o, 1) {
                    self.ld(*o)
                } else {
                    self.iconst(0)
                }
            }
            Expr::LoadDyn(l, _) => match self.dyn_addr(l) {
                Some((ok, addr)) => {
                    let v = self.b.ins().load(I64, MemFlagsData::trusted(), addr, 0);
                    let z = self.iconst(0);
                    self.b.ins().select(ok, v, z)
                }
                None => self.iconst(0),
            },
            Expr::Un(op, t, a) => {
                let a = self.native_expr(a);
                match op {
                    UnOp::Not => {
                        let z = self.iconst(0);
                        self.bool64(IntCC::Equal, a, z)
                    }
                    UnOp::BitNot => {
                        let n = self.b.ins().bnot(a);
                        self.mask_to(n, t.width)
                    }
                    UnOp::Neg => {
                        let n = self.b.ins().ineg(a);
                        self.mask_to(n, t.width)
                    }
                }
            }
            Expr::Bin(op, t, a, b) => {
                let a = self.native_expr(a);
                let b = self.native_expr(b);
                self.bin(*op, *t, a, b)
            }
            Expr::Cmp(op, t, a, b) => {
                let mut a = self.native_expr(a);
                let mut b = self.native_expr(b);
                let cc = match (op, t.signed) {
                    (CmpOp::Eq, _) => IntCC::Equal,
                    (CmpOp::Ne, _) => IntCC::NotEqual,
                    (CmpOp::Lt, false) => IntCC::UnsignedLessThan,
                    (CmpOp::Le, false) => IntCC::UnsignedLessThanOrEqual,
                    (CmpOp::Gt, false) => IntCC::UnsignedGreaterThan,
                    (CmpOp::Ge, false) => IntCC::UnsignedGreaterThanOrEqual,
                    (CmpOp::Lt, true) => IntCC::SignedLessThan,
                    (CmpOp::Le, true) => IntCC::SignedLessThanOrEqual,
                    (CmpOp::Gt, true) => IntCC::SignedGreaterThan,
                    (CmpOp::Ge, true) => IntCC::SignedGreaterThanOrEqual,
                };
                if t.signed && !matches!(op, CmpOp::Eq | CmpOp::Ne) {
                    a = self.sext(a, t.width);
                    b = self.sext(b, t.width);
                }
                self.bool64(cc, a, b)
            }
            Expr::And(a, b) | Expr::Or(a, b) => {
                // Side-effect free and every load is in bounds: both sides are evaluated.
                let a = self.native_expr(a);
                let b = self.native_expr(b);
                let z = self.iconst(0);
                let x = self.b.ins().icmp(IntCC::NotEqual, a, z);
                let y = self.b.ins().icmp(IntCC::NotEqual, b, z);
                let r = if matches!(e, Expr::And(..)) {
                    self.b.ins().band(x, y)
                } else {
                    self.b.ins().bor(x, y)
                };
                self.b.ins().uextend(I64, r)
            }
            Expr::Mux(c, a, b, _) => {
                let c = self.native_expr(c);
                let a = self.native_expr(a);
                let b = self.native_expr(b);
                self.b.ins().select(c, a, b)
            }
            Expr::Cast(to, from, a) => {
                let a = self.native_expr(a);
                let v = if from.signed {
                    self.sext(a, from.width)
                } else {
                    a
                };
                self.mask_to(v, to.width)
            }
            Expr::Slice(a, _, hi, lo) => {
                let a = self.native_expr(a);
                let s = if *lo > 0 {
                    self.b.ins().ushr_imm_u(a, i64::from(*lo))
                } else {
                    a
                };
                self.mask_to(s, hi - lo + 1)
            }
            Expr::Concat(a, b, t, bw) => {
                let a = self.native_expr(a);
                let b = self.native_expr(b);
                let hi = self.b.ins().ishl_imm_u(a, i64::from(*bw));
                let v = self.b.ins().bor(hi, b);
                self.mask_to(v, t.width)
            }
        }
    }

    /// `ops::bin` on `w ≤ 64` values.
    fn bin(&mut self, op: BinOp, t: Ty, a: Value, b: Value) -> Value {
        let w = t.width;
        match op {
            BinOp::Add => {
                let v = self.b.ins().iadd(a, b);
                self.mask_to(v, w)
            }
            BinOp::Sub => {
                let v = self.b.ins().isub(a, b);
                self.mask_to(v, w)
            }
            BinOp::Mul => {
                let v = self.b.ins().imul(a, b);
                self.mask_to(v, w)
            }
            BinOp::And => self.b.ins().band(a, b),
            BinOp::Or => self.b.ins().bor(a, b),
            BinOp::Xor => self.b.ins().bxor(a, b),
            BinOp::Div | BinOp::Mod if !t.signed => {
                // Division by zero gives 0 (never a trap).
                let z = self.iconst(0);
                let one = self.iconst(1);
                let is_zero = self.b.ins().icmp(IntCC::Equal, b, z);
                let d = self.b.ins().select(is_zero, one, b);
                let r = if op == BinOp::Div {
                    self.b.ins().udiv(a, d)
                } else {
                    self.b.ins().urem(a, d)
                };
                self.b.ins().select(is_zero, z, r)
            }
            BinOp::Shl | BinOp::Shr if !(op == BinOp::Shr && t.signed) => {
                let z = self.iconst(0);
                let wv = self.iconst(u64::from(w));
                let big = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, b, wv);
                let v = if op == BinOp::Shl {
                    let s = self.b.ins().ishl(a, b);
                    self.mask_to(s, w)
                } else {
                    self.b.ins().ushr(a, b)
                };
                self.b.ins().select(big, z, v)
            }
            BinOp::Div => self.helper_bin(0, t, a, b),
            BinOp::Mod => self.helper_bin(1, t, a, b),
            BinOp::AddSat => self.helper_bin(2, t, a, b),
            BinOp::SubSat => self.helper_bin(3, t, a, b),
            BinOp::Shl | BinOp::Shr => self.helper_bin(4, t, a, b),
        }
    }

    /// The address of a location with run-time indices and whether every index is in bounds;
    /// out of bounds, the address is the (in-frame) base so that a load stays harmless. `None`
    /// when even the base or the last element lies outside the frame.
    fn dyn_addr(&mut self, l: &Loc) -> Option<(Value, Value)> {
        let mut last = u64::from(l.off);
        for d in &l.dyn_idx {
            last += u64::from(d.count.saturating_sub(1)) * u64::from(d.stride);
        }
        if d_count_zero(l) || last >= u64::from(self.prog.frame_words) {
            return None;
        }
        let mut words = self.iconst(u64::from(l.off));
        let mut ok = self.b.ins().iconst(I8, 1);
        for d in &l.dyn_idx {
            let i = self.expr(&d.index);
            let cnt = self.iconst(u64::from(d.count));
            let inb = self.b.ins().icmp(IntCC::UnsignedLessThan, i, cnt);
            ok = self.b.ins().band(ok, inb);
            let z = self.iconst(0);
            let i = self.b.ins().select(inb, i, z);
            let step = self.b.ins().imul_imm_u(i, i64::from(d.stride));
            words = self.b.ins().iadd(words, step);
        }
        let base = self.iconst(u64::from(l.off));
        let words = self.b.ins().select(ok, words, base);
        let bytes = self.b.ins().ishl_imm_u(words, 3);
        let addr = self.b.ins().iadd(self.frame, bytes);
        Some((ok, addr))
    }

    // ------------------------------------------------------------------ statements

    fn stmts(&mut self, ss: &[Stmt], abort: Abort) {
        let mut i = 0;
        while i < ss.len() {
            // Consecutive `emit`s (a deparser's `emit(hdr)` of a struct) share one reservation.
            let run = ss[i..]
                .iter()
                .take_while(|s| self.fast_emit(s).is_some())
                .count();
            if run >= 2 {
                let whole = self
                    .ids
                    .whole
                    .is_some_and(|w| std::ptr::eq(&ss[i], w.first) && w.len == run);
                self.emit_run(&ss[i..i + run], abort, whole);
                i += run;
            } else {
                self.stmt(&ss[i], abort);
                if self.parsing.is_some() && may_move_cursor(&ss[i]) {
                    self.cursor_reload();
                }
                i += 1;
            }
        }
    }

    /// One statement: inline code for what compiles natively (each kind by its helper below),
    /// a call of the runtime's helper for everything else.
    fn stmt(&mut self, s: &Stmt, abort: Abort) {
        match s {
            Stmt::Assign(l, t, e) if !t.is_wide() => self.assign(l, *t, e, abort, s),
            Stmt::Assign(l, t, e)
                if l.fixed().is_some()
                    && Self::wide_native(e)
                    && self.in_frame(l.off, t.words()) =>
            {
                self.assign_wide(l.off, *t, e)
            }
            Stmt::AssignSlice(l, t, hi, lo, e) if !t.is_wide() && l.fixed().is_some() => {
                self.assign_slice(l, *t, *hi, *lo, e)
            }
            Stmt::Copy { dst, src, words }
                if dst.fixed().is_some()
                    && src.fixed().is_some()
                    && self.in_frame(dst.off, *words)
                    && self.in_frame(src.off, *words) =>
            {
                if *words <= COPY_INLINE_WORDS {
                    self.copy_words(dst.off, src.off, *words)
                } else {
                    self.copy_block(dst.off, src.off, *words)
                }
            }
            Stmt::Zero { dst, words }
                if dst.fixed().is_some() && self.in_frame(dst.off, *words) =>
            {
                if *words <= COPY_INLINE_WORDS {
                    self.zero_words(dst.off, *words)
                } else {
                    self.zero_block(dst.off, *words)
                }
            }
            Stmt::SetValid { hdr, valid, others } if hdr.fixed().is_some() => {
                self.set_valid(hdr.off, *valid, others)
            }
            Stmt::If(c, a, b) => self.if_stmt(c, a, b, abort),
            Stmt::Switch {
                sel,
                cases,
                bodies,
                default,
            } => self.switch_stmt(sel, cases, bodies, *default, abort),
            Stmt::Loop { cond, body, update } => self.loop_stmt(cond, body, update, abort),
            Stmt::Break => self.loop_jump(true, abort),
            Stmt::Continue => self.loop_jump(false, abort),
            Stmt::Return => self.leave_with(flow::RETURN, abort),
            Stmt::Exit => self.leave_with(flow::EXIT, abort),
            Stmt::Call {
                func,
                copy_in,
                copy_out,
            } => self.call(*func, copy_in, copy_out, abort),
            Stmt::CallParser {
                parser,
                copy_in,
                copy_out,
            } => self.call_parser(s, *parser, copy_in, copy_out, abort),
            Stmt::Verify(c, e) => self.verify(c, e, abort),
            Stmt::Extract {
                hdr,
                varbit_bits: None,
            } if hdr.loc.fixed().is_some() => self.extract(s, hdr, abort),
            Stmt::Emit(hdr) if hdr.loc.fixed().is_some() => self.emit(s, hdr, abort),
            Stmt::Extern(x) if Self::dest_inline(x) => self.dest(x),
            Stmt::Extern(x) if self.checksum_inline(x) => self.checksum(s, x, abort),
            Stmt::Extern(x) if self.add_entry_inline(x) => self.add_entry(x),
            Stmt::Extern(x) if Self::count_inline(x) => self.count(x),
            Stmt::ApplyTable {
                table,
                hit,
                action_run,
            } if const_entries(self.prog, *table).is_some() => {
                self.apply_const(*table, *hit, *action_run, abort)
            }
            Stmt::ApplyTable {
                table,
                hit,
                action_run,
            } if respecialisable(self.prog, *table) => {
                self.apply_spec(*table, *hit, *action_run, abort)
            }
            Stmt::ApplyTable {
                table,
                hit,
                action_run,
            } if self.native_apply(*table) => self.apply(*table, *hit, *action_run, abort),
            // Everything else is the runtime's: tables, externs, emit, stacks, lookahead, advance,
            // values wider than 64 bits, locations with run-time indices.
            _ => self.helper_stmt(s, abort),
        }
    }

    /// `l = e` of at most 64 bits, truncated to `t`.
    fn assign(&mut self, l: &Loc, t: Ty, e: &Expr, abort: Abort, s: &Stmt) {
        let v = self.expr(e);
        let v = self.mask_to(v, t.width);
        self.store(l, v, abort, s);
    }

    /// `l[hi:lo] = e` at a fixed location (nothing outside the frame).
    fn assign_slice(&mut self, l: &Loc, t: Ty, hi: u32, lo: u32, e: &Expr) {
        let a = l.off;
        if !self.in_frame(a, 1) {
            return;
        }
        let w = hi - lo + 1;
        let cur = self.ld(a);
        let v = self.expr(e);
        let v = self.mask_to(v, w);
        let m = mask(w) << lo;
        let keep = self.b.ins().band_imm_u(cur, !m as i64);
        let sh = self.b.ins().ishl_imm_u(v, i64::from(lo));
        let nv = self.b.ins().bor(keep, sh);
        let nv = self.mask_to(nv, t.width);
        self.st(a, nv);
    }

    /// Copies `words` words from `src` to `dst` (fixed, in the frame).
    fn copy_words(&mut self, dst: u32, src: u32, words: u32) {
        // All loads first: source and destination may overlap.
        let vals: Vec<Value> = (0..words).map(|i| self.ld(src + i)).collect();
        for (i, v) in vals.into_iter().enumerate() {
            self.st(dst + i as u32, v);
        }
    }

    /// Copies more than [`COPY_INLINE_WORDS`] words `src` → `dst` (fixed, in the frame; they may
    /// overlap) with one call of libc's `memmove`: what a sub-control's or action's copy-in
    /// and copy-out of a whole headers or metadata struct is. Marks the tracked headers of the
    /// destination dirty as [`Gen::st`] does.
    fn copy_block(&mut self, dst: u32, src: u32, words: u32) {
        for o in src..src + words {
            if !self.ids.clean.keeps(o) {
                self.ids.clean.missed.set(true);
            }
        }
        self.dirty_range(dst, words);
        let cfg = self.module.isa().frontend_config();
        let d = self.b.ins().iadd_imm_s(self.frame, i64::from(dst) * 8);
        let s = self.b.ins().iadd_imm_s(self.frame, i64::from(src) * 8);
        let n = self.iconst(u64::from(words) * 8);
        self.b.call_memmove(cfg, d, s, n);
    }

    /// Zeroes more than [`COPY_INLINE_WORDS`] words at `dst` (fixed, in the frame) with one
    /// call of libc's `memset`, marking the destination's tracked headers dirty.
    fn zero_block(&mut self, dst: u32, words: u32) {
        self.dirty_range(dst, words);
        let cfg = self.module.isa().frontend_config();
        let d = self.b.ins().iadd_imm_s(self.frame, i64::from(dst) * 8);
        let z = self.b.ins().iconst(I8, 0);
        let n = self.iconst(u64::from(words) * 8);
        self.b.call_memset(cfg, d, z, n);
    }

    /// The tracked headers with a word in `dst..dst + words` dirty, as a store into each word
    /// makes them ([`Gen::st`]).
    fn dirty_range(&mut self, dst: u32, words: u32) {
        let mut seen = Vec::new();
        for o in dst..dst + words {
            if let Some(&i) = self.ids.clean.of_word.get(o as usize) {
                if i != u32::MAX && !seen.contains(&i) {
                    seen.push(i);
                    if self.ids.clean.is_sealed(i) {
                        self.ids.clean.missed.set(true);
                    }
                    let z = self.iconst(0);
                    self.st_raw(self.ids.clean.word(i), z);
                }
            }
        }
    }

    /// Zeroes `words` words at `dst` (fixed, in the frame).
    fn zero_words(&mut self, dst: u32, words: u32) {
        let z = self.iconst(0);
        for i in 0..words {
            self.st(dst + i, z);
        }
    }

    /// `setValid()`/`setInvalid()` of the header whose validity word is at `a`; a valid one
    /// invalidates the other members of its union (`others`, relative to `a`).
    fn set_valid(&mut self, a: u32, valid: bool, others: &[i32]) {
        if !self.in_frame(a, 1) {
            return;
        }
        let v = self.iconst(u64::from(valid));
        self.st(a, v);
        if valid {
            let z = self.iconst(0);
            for o in others {
                let x = i64::from(a) + i64::from(*o);
                if x >= 0 && self.in_frame(x as u32, 1) {
                    self.st(x as u32, z);
                }
            }
        }
    }

    /// `if (c) a else b`.
    fn if_stmt(&mut self, c: &Expr, a: &[Stmt], b: &[Stmt], abort: Abort) {
        let c = self.expr(c);
        let (tb, eb, join) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        self.b.ins().brif(c, tb, &[], eb, &[]);
        self.b.switch_to_block(tb);
        self.stmts(a, abort);
        self.b.ins().jump(join, &[]);
        self.b.switch_to_block(eb);
        self.stmts(b, abort);
        self.b.ins().jump(join, &[]);
        self.b.switch_to_block(join);
    }

    /// A switch: the body of the first case whose label equals the selector, else `default`.
    fn switch_stmt(
        &mut self,
        sel: &Expr,
        cases: &[(Vec<u64>, usize)],
        bodies: &[Vec<Stmt>],
        default: Option<usize>,
        abort: Abort,
    ) {
        let v = self.expr(sel);
        let join = self.b.create_block();
        let body_blocks: Vec<Block> = bodies.iter().map(|_| self.b.create_block()).collect();
        // The first case whose label equals the selector.
        for (labels, bi) in cases {
            let Some(&target) = body_blocks.get(*bi) else {
                continue;
            };
            for lab in labels {
                let next = self.b.create_block();
                let c = self.b.ins().icmp_imm_s(IntCC::Equal, v, *lab as i64);
                self.b.ins().brif(c, target, &[], next, &[]);
                self.b.switch_to_block(next);
            }
        }
        match default.and_then(|d| body_blocks.get(d)) {
            Some(&d) => self.b.ins().jump(d, &[]),
            None => self.b.ins().jump(join, &[]),
        };
        for (blk, body) in body_blocks.iter().zip(bodies) {
            self.b.switch_to_block(*blk);
            self.stmts(body, abort);
            self.b.ins().jump(join, &[]);
        }
        self.b.switch_to_block(join);
    }

    /// `while (cond) { body; update }`, counting the packet's iterations: past the loop limit
    /// the packet is rejected with `ParserTimeout`.
    fn loop_stmt(&mut self, cond: &Expr, body: &[Stmt], update: &[Stmt], abort: Abort) {
        let (head, upd, exit) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        self.b.ins().jump(head, &[]);
        self.b.switch_to_block(head);
        let c = self.expr(cond);
        let run = self.b.create_block();
        self.b.ins().brif(c, run, &[], exit, &[]);
        self.b.switch_to_block(run);
        // One more iteration of this packet's loops; past the limit the packet is dropped.
        let n = self.ctx_field(offset_of!(Ctx, loops));
        let n = self.b.ins().iadd_imm_s(n, 1);
        self.ctx_store(offset_of!(Ctx, loops), n);
        let over =
            self.b
                .ins()
                .icmp_imm_s(IntCC::UnsignedGreaterThan, n, self.limits.loop_limit as i64);
        let (stop, go) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(over, stop, &[], go, &[]);
        self.b.switch_to_block(stop);
        let f = self.fref(self.ids.imports.loop_limit);
        self.b.ins().call(f, &[self.ctx]);
        let code = self.iconst(p4_ir::ir::errors::PARSER_TIMEOUT);
        self.ctx_store(offset_of!(Ctx, perr), code);
        self.jump_code(abort, flow::REJECT);
        self.b.switch_to_block(go);
        self.loops.push((upd, exit));
        self.stmts(body, abort);
        self.loops.pop();
        self.b.ins().jump(upd, &[]);
        self.b.switch_to_block(upd);
        self.stmts(update, abort);
        self.b.ins().jump(head, &[]);
        self.b.switch_to_block(exit);
    }

    /// `break` (`brk`) or `continue`: a jump in the innermost loop of this function, else the
    /// flow code to the caller's loop.
    fn loop_jump(&mut self, brk: bool, abort: Abort) {
        match self.loops.last().copied() {
            Some((cont, exit)) => {
                let to = if brk { exit } else { cont };
                self.b.ins().jump(to, &[]);
            }
            None => {
                let code = if brk { flow::BREAK } else { flow::CONTINUE };
                self.jump_code(abort, code);
            }
        }
        self.fresh();
    }

    /// `return` or `exit`: the flow code to `abort`.
    fn leave_with(&mut self, code: u32, abort: Abort) {
        self.jump_code(abort, code);
        self.fresh();
    }

    /// A sub-parser run to completion; `copy_out` also when it rejects (as BMv2 does), then
    /// the caller rejects.
    fn call_parser(
        &mut self,
        s: &Stmt,
        parser: ParserId,
        copy_in: &[Stmt],
        copy_out: &[Stmt],
        abort: Abort,
    ) {
        self.stmts(copy_in, abort);
        let Some(&id) = self.ids.parsers.get(parser as usize) else {
            return self.helper_stmt(s, abort);
        };
        let f = self.fref(id);
        let call = self.b.ins().call(f, &[self.ctx]);
        let accepted = self.b.inst_results(call)[0];
        // A rejecting sub-parser still copies out (as BMv2 does), then rejects the caller.
        self.stmts(copy_out, abort);
        let rej = self.b.create_block();
        let next = self.b.create_block();
        self.b.ins().brif(accepted, next, &[], rej, &[]);
        self.b.switch_to_block(rej);
        self.jump_code(abort, flow::REJECT);
        self.b.switch_to_block(next);
    }

    /// `verify(c, e)`: rejects with error `e` when `c` is false.
    fn verify(&mut self, c: &Expr, e: &Expr, abort: Abort) {
        let c = self.expr(c);
        let (bad, next) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(c, next, &[], bad, &[]);
        self.b.switch_to_block(bad);
        let code = self.expr(e);
        self.ctx_store(offset_of!(Ctx, perr), code);
        self.jump_code(abort, flow::REJECT);
        self.b.switch_to_block(next);
    }

    /// Stores `v` at `l`: at a run-time index, only when it is in bounds.
    fn store(&mut self, l: &Loc, v: Value, abort: Abort, s: &Stmt) {
        if let Some(o) = l.fixed() {
            if self.in_frame(o, 1) {
                self.st(o, v);
            }
            return;
        }
        if l.dyn_idx.iter().any(|d| !Self::native(&d.index)) {
            return self.helper_stmt(s, abort);
        }
        if let Some((ok, addr)) = self.dyn_addr(l) {
            let (yes, join) = (self.b.create_block(), self.b.create_block());
            self.b.ins().brif(ok, yes, &[], join, &[]);
            self.b.switch_to_block(yes);
            self.b.ins().store(MemFlagsData::trusted(), v, addr, 0);
            self.b.ins().jump(join, &[]);
            self.b.switch_to_block(join);
            self.all_dirty();
        }
    }

    /// A call with copy-in/copy-out (P4_16 §6.8): the callee's `exit` still copies out; its
    /// reject does not.
    fn call(&mut self, func: FnId, copy_in: &[Stmt], copy_out: &[Stmt], abort: Abort) {
        self.stmts(copy_in, abort);
        let Some(&id) = self.ids.functions.get(func as usize) else {
            return;
        };
        let code = match self.prog.functions.get(func as usize) {
            // A small callee is generated in place: no call, no flow code on the normal path.
            Some(fun)
                if self.inline_depth < INLINE_DEPTH && stmt_count(&fun.body) <= INLINE_STMTS =>
            {
                let (end, done) = (self.b.create_block(), self.b.create_block());
                self.b.append_block_param(end, I32);
                // `break`/`continue` outside a loop of the callee end the callee, as in a call.
                let loops = std::mem::take(&mut self.loops);
                self.inline_depth += 1;
                self.stmts(&fun.body, end);
                self.inline_depth -= 1;
                self.loops = loops;
                self.b.ins().jump(done, &[]);
                self.b.switch_to_block(end);
                let code = self.b.block_params(end)[0];
                // An early end: reject and exit leave through `abort` below, the rest goes on.
                let is_early = self.b.ins().icmp_imm_s(
                    IntCC::UnsignedGreaterThanOrEqual,
                    code,
                    i64::from(flow::EXIT),
                );
                let (early, exit_or_rej) = (self.b.create_block(), self.b.create_block());
                self.b.ins().brif(is_early, exit_or_rej, &[], done, &[]);
                self.b.switch_to_block(exit_or_rej);
                self.b.ins().jump(early, &[]);
                self.b.switch_to_block(early);
                let is_rej = self
                    .b
                    .ins()
                    .icmp_imm_s(IntCC::Equal, code, i64::from(flow::REJECT));
                let is_exit = self
                    .b
                    .ins()
                    .icmp_imm_s(IntCC::Equal, code, i64::from(flow::EXIT));
                let (rej, exit, rest) = (
                    self.b.create_block(),
                    self.b.create_block(),
                    self.b.create_block(),
                );
                self.b.ins().brif(is_rej, rej, &[], rest, &[]);
                self.b.switch_to_block(rej);
                self.jump_code(abort, flow::REJECT);
                self.b.switch_to_block(rest);
                self.b.ins().brif(is_exit, exit, &[], done, &[]);
                self.b.switch_to_block(exit);
                self.stmts(copy_out, abort);
                self.jump_code(abort, flow::EXIT);
                self.b.switch_to_block(done);
                self.stmts(copy_out, abort);
                return;
            }
            _ => {
                let f = self.fref(id);
                let call = self.b.ins().call(f, &[self.ctx]);
                self.b.inst_results(call)[0]
            }
        };
        let (rej, exit, rest) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        let is_rej = self
            .b
            .ins()
            .icmp_imm_s(IntCC::Equal, code, i64::from(flow::REJECT));
        let not_rej = self.b.create_block();
        self.b.ins().brif(is_rej, rej, &[], not_rej, &[]);
        self.b.switch_to_block(rej);
        self.jump_code(abort, flow::REJECT);
        self.b.switch_to_block(not_rej);
        let is_exit = self
            .b
            .ins()
            .icmp_imm_s(IntCC::Equal, code, i64::from(flow::EXIT));
        self.b.ins().brif(is_exit, exit, &[], rest, &[]);
        self.b.switch_to_block(exit);
        self.stmts(copy_out, abort);
        self.jump_code(abort, flow::EXIT);
        self.b.switch_to_block(rest);
        self.stmts(copy_out, abort);
    }

    /// `extract` of a fixed header whose fields are all ≤ 64 bits and a whole number of bytes in
    /// all: inline when the cursor is byte-aligned and 16 bytes beyond the header are in the
    /// packet (the window of the wide loads), else the runtime's `extract` (which decides
    /// `PacketTooShort` and unaligned cursors).
    fn extract(&mut self, s: &Stmt, hdr: &HdrRef, abort: Abort) {
        let a = hdr.loc.off;
        let Some((bytes, fields)) = self.fast_layout(hdr.layout, a) else {
            self.helper_stmt(s, abort);
            return self.cursor_reload();
        };
        let bytes = i64::from(bytes);
        let cur = self.cursor();
        let len = match self.parsing {
            Some(ps) => ps.input_len,
            None => self.ctx_field(offset_of!(Ctx, input_len)),
        };
        let start = self.b.ins().ushr_imm_u(cur, 3);
        let end = self.b.ins().iadd_imm_s(start, bytes + 16);
        let room = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, end, len);
        let low = self.b.ins().band_imm_u(cur, 7);
        let aligned = self.b.ins().icmp_imm_s(IntCC::Equal, low, 0);
        let ok = self.b.ins().band(room, aligned);
        // The cursor after the header, either way: the runtime's `extract` of a fixed header
        // that does not reject moves it by the header's size, as the inline one does, so a parse
        // path from a known start keeps a known cursor past a short packet's slow extract.
        let nc = self.b.ins().iadd_imm_s(cur, bytes * 8);
        let (inline, slow, join) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        self.b.ins().brif(ok, inline, &[], slow, &[]);
        self.b.switch_to_block(slow);
        match self.parsing {
            // The runtime's `extract` either goes on or rejects (setting the parser error):
            // straight to the parser's reject, so that only a success reaches `join`.
            Some(ps) => {
                let code = self.call_stmt(s);
                let next = self.b.create_block();
                self.b.ins().brif(code, ps.reject, &[], next, &[]);
                self.b.switch_to_block(next);
                // It stored every field: no longer the packet's bytes as they are ([`Clean`]).
                if let Some(i) = self.ids.clean.header_at(a) {
                    let z = self.iconst(0);
                    self.st_raw(self.ids.clean.word(i), z);
                }
                self.b.def_var(ps.cursor, nc);
            }
            None => self.helper_stmt(s, abort),
        }
        self.b.ins().jump(join, &[]);

        self.b.switch_to_block(inline);
        // Only the fields something may read ([`Clean::keeps`]); the others keep their word.
        let fields: Vec<FastField> = fields
            .into_iter()
            .filter(|&(off, _, _)| self.ids.clean.keeps(a + off))
            .collect();
        let input = match self.parsing {
            Some(ps) => ps.input,
            None => self.ctx_field(offset_of!(Ctx, input)),
        };
        let p = self.b.ins().iadd(input, start);
        // The header as big-endian 8-byte words, each that holds a field loaded once (the window
        // of 16 bytes beyond the header covers the last word); every field is cut out of the one
        // or two words it lies in with shifts.
        let n = (bytes as u64).div_ceil(8) as usize;
        let mut need = vec![false; n];
        for &(_, bit, w) in &fields {
            for k in (bit / 64)..=((bit + w - 1) / 64) {
                need[k as usize] = true;
            }
        }
        let words: Vec<Option<Value>> = need
            .iter()
            .enumerate()
            .map(|(k, &needed)| {
                needed.then(|| {
                    let x = self
                        .b
                        .ins()
                        .load(I64, MemFlagsData::trusted(), p, (8 * k) as i32);
                    self.b.ins().bswap(x)
                })
            })
            .collect();
        let word = |k: usize| words[k].expect("a loaded word");
        for &(off, bit, w) in &fields {
            let (k, lsh) = ((bit / 64) as usize, bit % 64);
            let x = word(k);
            let v = if lsh + w <= 64 {
                if lsh == 0 {
                    self.b.ins().ushr_imm_u(x, i64::from(64 - w))
                } else if lsh + w == 64 {
                    self.b.ins().band_imm_u(x, mask(w) as i64)
                } else {
                    let l = self.b.ins().ishl_imm_u(x, i64::from(lsh));
                    self.b.ins().ushr_imm_u(l, i64::from(64 - w))
                }
            } else {
                // The field straddles two words: the next one supplies its low bits.
                let hi = self.b.ins().ishl_imm_u(x, i64::from(lsh));
                let lo = self.b.ins().ushr_imm_u(word(k + 1), i64::from(64 - lsh));
                let full = self.b.ins().bor(hi, lo);
                self.b.ins().ushr_imm_u(full, i64::from(64 - w))
            };
            self.st_raw(a + off, v);
        }
        let one = self.iconst(1);
        self.st_raw(a, one);
        // The header is, byte for byte, the packet's bytes from `start` on ([`Clean`]).
        if let Some(i) = self.ids.clean.header_at(a) {
            let at = self.b.ins().iadd_imm_s(start, 1);
            self.st_raw(self.ids.clean.word(i), at);
        }
        self.ctx_store(offset_of!(Ctx, cursor), nc);
        if let Some(ps) = self.parsing {
            self.b.def_var(ps.cursor, nc);
        }
        self.b.ins().jump(join, &[]);
        self.b.switch_to_block(join);
    }

    /// The parser's cursor ([`Parsing`]; outside a parser, `Ctx::cursor`).
    fn cursor(&mut self) -> Value {
        match self.parsing {
            Some(ps) => self.b.use_var(ps.cursor),
            None => self.ctx_field(offset_of!(Ctx, cursor)),
        }
    }

    /// After code that may have moved `Ctx::cursor` itself (a runtime helper, a sub-parser):
    /// the variable reads it again.
    fn cursor_reload(&mut self) {
        if let Some(ps) = self.parsing {
            let c = self.ctx_field(offset_of!(Ctx, cursor));
            self.b.def_var(ps.cursor, c);
        }
    }

    /// The byte-sized, all-fields-≤-64-bit layout of header `h` that the inline `extract` and
    /// `emit` handle at frame offset `a`: (bytes, fields as (word offset, bit offset, width)).
    fn fast_layout(&self, h: HeaderId, a: u32) -> Option<(u32, Vec<FastField>)> {
        let hl = self.prog.headers.get(h as usize)?;
        let fast = hl.fixed_bits % 8 == 0
            && hl.fixed_bits / 8 <= u64::from(EXTRACT_MAX_BYTES)
            && hl
                .fields
                .iter()
                .all(|f| f.varbit.is_none() && f.ty.width <= 64)
            && self.in_frame(a, hl.words);
        if !fast {
            return None;
        }
        let mut bit = 0u32;
        let mut fields = Vec::with_capacity(hl.fields.len());
        for f in &hl.fields {
            if f.ty.width > 0 {
                fields.push((f.off, bit, f.ty.width));
            }
            bit += f.ty.width;
        }
        Some(((hl.fixed_bits / 8) as u32, fields))
    }

    /// Whether `x` is a PNA `send_to_port(p)` (with `p` computed by generated code) or
    /// `drop_packet()`, which the code does itself (see [`Gen::dest`]).
    fn dest_inline(x: &ExternCall) -> bool {
        x.ret.is_none()
            && match (&x.op, x.args.first()) {
                (XOp::SendToPort, Some(XArg::Val(e))) => Self::native(e),
                (XOp::DropPacket, _) => true,
                _ => false,
            }
    }

    /// PNA `send_to_port(p)` / `drop_packet()` (PNA §6.1): the two words at `Ctx::dest`.
    fn dest(&mut self, x: &ExternCall) {
        let port = match (&x.op, x.args.first()) {
            (XOp::SendToPort, Some(XArg::Val(e))) => Some(self.expr(e)),
            _ => None,
        };
        let d = self.ctx_field(offset_of!(Ctx, dest));
        let set = self.iconst(u64::from(port.is_some()));
        self.b.ins().store(MemFlagsData::trusted(), set, d, 0);
        if let Some(p) = port {
            self.b.ins().store(MemFlagsData::trusted(), p, d, 8);
        }
    }

    /// Whether `x` is a PNA `add_entry[_if]` whose condition, parameter values and profile
    /// generated code computes (all ≤ 64 bits, as are the action's parameters) and whose result
    /// goes to a fixed location (see [`Gen::add_entry`]).
    /// An indexed counter's `count(index[, bytes])` or a direct counter's `count([bytes])` with
    /// scalar arguments: the runtime's counter cell is counted by `Helpers::count` /
    /// `Helpers::direct_count`, not through the interpreter.
    fn count_inline(x: &ExternCall) -> bool {
        let narrow = |a: Option<&XArg>| match a {
            Some(XArg::Val(e)) => !e.ty().is_wide() && Self::native(e),
            None | Some(XArg::None) => true,
            _ => false,
        };
        match x.op {
            XOp::CounterCount => {
                x.inst.is_some()
                    && x.args.len() <= 2
                    && x.args.first().is_some_and(|a| matches!(a, XArg::Val(_)))
                    && narrow(x.args.first())
                    && narrow(x.args.get(1))
            }
            XOp::DirectCounterCount => {
                x.inst.is_some() && x.args.len() <= 1 && narrow(x.args.first())
            }
            _ => false,
        }
    }

    /// `Helpers::count(inst, index, bytes)` or `Helpers::direct_count(inst, bytes)` (see
    /// [`Gen::count_inline`]).
    fn count(&mut self, x: &ExternCall) {
        let Some(inst) = x.inst else { return };
        let arg = |g: &mut Self, a: Option<&XArg>| match a {
            Some(XArg::Val(e)) => g.expr(e),
            _ => g.iconst(u64::MAX),
        };
        if matches!(x.op, XOp::DirectCounterCount) {
            let bytes = arg(self, x.args.first());
            let f = self.fref(self.ids.imports.direct_count);
            let inst = self.b.ins().iconst(I32, i64::from(inst));
            self.b.ins().call(f, &[self.ctx, inst, bytes]);
            return;
        }
        let index = arg(self, x.args.first());
        let bytes = arg(self, x.args.get(1));
        let f = self.fref(self.ids.imports.count);
        let inst = self.b.ins().iconst(I32, i64::from(inst));
        self.b.ins().call(f, &[self.ctx, inst, index, bytes]);
    }

    fn add_entry_inline(&self, x: &ExternCall) -> bool {
        let XOp::AddEntry {
            func, conditional, ..
        } = &x.op
        else {
            return false;
        };
        let narrow = |a: Option<&XArg>| match a {
            Some(XArg::Val(e)) => !e.ty().is_wide() && Self::native(e),
            None | Some(XArg::None) => true,
            _ => false,
        };
        let i = usize::from(*conditional);
        let data_ok = match x.args.get(i) {
            Some(XArg::Data(items)) => items.iter().all(|d| match d {
                Datum::Bits(e) => !e.ty().is_wide() && Self::native(e),
                Datum::Varbit(..) => true,
                Datum::IfValid(..) => false,
            }),
            None | Some(XArg::None) => true,
            _ => false,
        };
        let params_ok = self
            .action_params(*func)
            .is_none_or(|ps| ps.iter().all(|p| !p.ty.is_wide()));
        (!*conditional || narrow(x.args.first()))
            && data_ok
            && narrow(x.args.get(i + 1))
            && params_ok
            && x.ret
                .as_ref()
                .is_none_or(|(l, t)| l.fixed().is_some() && !t.is_wide() && self.in_frame(l.off, 1))
    }

    /// The directionless parameters of action function `func`, from a table that lists it
    /// (every table lists an action with the same parameters); `None` when no table does.
    fn action_params(&self, func: FnId) -> Option<&[ActionParam]> {
        self.prog
            .tables
            .iter()
            .flat_map(|t| &t.actions)
            .find(|a| a.func == func)
            .map(|a| a.params.as_slice())
    }

    /// PNA `add_entry[_if](action, params, profile)` (PNA §"add_entry"): the parameters packed
    /// big-endian at `Ctx::params` (the k-th bit-string item gives the action's k-th
    /// parameter, masked to its width; missing ones are 0), then the runtime's `add_entry`;
    /// the result is `success` when the entry was added, else its complement.
    fn add_entry(&mut self, x: &ExternCall) {
        let XOp::AddEntry {
            func,
            conditional,
            success,
        } = &x.op
        else {
            return;
        };
        let i = usize::from(*conditional);
        let (run, skip, join) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        self.b.append_block_param(join, I32);
        if *conditional {
            let c = match x.args.first() {
                Some(XArg::Val(e)) => self.expr(e),
                _ => self.iconst(0),
            };
            self.b.ins().brif(c, run, &[], skip, &[]);
        } else {
            self.b.ins().jump(run, &[]);
        }
        self.b.switch_to_block(skip);
        let no = self.b.ins().iconst(I32, 0);
        self.b.ins().jump(join, &[no.into()]);
        self.b.switch_to_block(run);
        // The items' values, all evaluated (side-effect free), in order.
        let vals: Vec<Value> = match x.args.get(i) {
            Some(XArg::Data(items)) => items
                .iter()
                .filter_map(|d| match d {
                    Datum::Bits(e) => Some(self.expr(e)),
                    Datum::Varbit(..) | Datum::IfValid(..) => None,
                })
                .collect(),
            _ => Vec::new(),
        };
        let widths: Vec<u32> = self
            .action_params(*func)
            .map(|ps| ps.iter().map(|p| p.ty.width).collect())
            .unwrap_or_default();
        let packed: Vec<(Value, u32)> = widths
            .iter()
            .enumerate()
            .map(|(k, &w)| (vals.get(k).copied().unwrap_or_else(|| self.iconst(0)), w))
            .collect();
        let off = self.pack_params(&packed);
        let profile = match x.args.get(i + 1) {
            Some(XArg::Val(e)) => self.expr(e),
            _ => self.iconst(0),
        };
        let f = self.fref(self.ids.imports.add_entry);
        let fv = self.b.ins().iconst(I32, i64::from(*func));
        let len = self.iconst(u64::from(off));
        let call = self.b.ins().call(f, &[self.ctx, fv, len, profile]);
        let ok = self.b.inst_results(call)[0];
        self.b.ins().jump(join, &[ok.into()]);
        self.b.switch_to_block(join);
        let ok = self.b.block_params(join)[0];
        if let Some((l, t)) = &x.ret {
            let yes = self.iconst(*success);
            let no = self.iconst(1 - (*success).min(1));
            let v = self.b.ins().select(ok, yes, no);
            let v = self.mask_to(v, t.width);
            self.st(l.off, v);
        }
    }

    /// The frame offset and fast layout of `s` when it is an `emit` that [`Gen::emit`] writes
    /// inline.
    fn fast_emit(&self, s: &Stmt) -> Option<(u32, u32, Vec<FastField>)> {
        match s {
            Stmt::Emit(hdr) if hdr.loc.fixed().is_some() => {
                let (bytes, fields) = self.fast_layout(hdr.layout, hdr.loc.off)?;
                Some((hdr.loc.off, bytes, fields))
            }
            _ => None,
        }
    }

    /// Consecutive inline `emit`s: one reservation of the valid headers' total size, then each
    /// valid header's words at its running offset (in order, so a header's trailing word spill
    /// is overwritten by the next header). When the output is not at a byte boundary, the
    /// runtime's `emit` of each, in order.
    ///
    /// `whole`: the run is all its deparser emits ([`whole_emit_run`]). When each valid
    /// header of it is clean ([`Clean`]) and was extracted where the one before it ended, the
    /// first at byte 0 and the last ending at the cursor, the deparsed packet is the packet as
    /// it came: nothing is emitted and `Ctx::cursor` becomes 0, so the runtime's output (what
    /// was emitted, then the packet from the cursor on) is the whole packet in one copy.
    fn emit_run(&mut self, ss: &[Stmt], abort: Abort, whole: bool) {
        let items: Vec<_> = ss.iter().filter_map(|s| self.fast_emit(s)).collect();
        if whole && items.len() == ss.len() {
            let (same, emit) = (self.b.create_block(), self.b.create_block());
            // A program that writes a header it emits usually does so to every packet: the
            // headers something may write ([`Clean::is_sealed`]) are looked at first, and a
            // valid one that is dirty goes straight to the emits.
            if let Some(dirty) = self.written_header_dirty(&items) {
                let check = self.b.create_block();
                self.b.ins().brif(dirty, emit, &[], check, &[]);
                self.b.switch_to_block(check);
            }
            let ok = self.same_as_packet(&items);
            self.b.ins().brif(ok, same, &[], emit, &[]);
            self.b.switch_to_block(same);
            let zero = self.iconst(0);
            self.ctx_store(offset_of!(Ctx, cursor), zero);
            let after = self.b.create_block();
            self.b.ins().jump(after, &[]);
            self.b.switch_to_block(emit);
            self.emit_run(ss, abort, false);
            self.b.ins().jump(after, &[]);
            self.b.switch_to_block(after);
            return;
        }
        let zero = self.iconst(0);
        let mut total = zero;
        let mut offs = Vec::with_capacity(items.len());
        let mut valids = Vec::with_capacity(items.len());
        for (a, bytes, _) in &items {
            let v = self.ld(*a);
            let n = self.iconst(u64::from(*bytes));
            let add = self.b.ins().select(v, n, zero);
            offs.push(total);
            valids.push(v);
            total = self.b.ins().iadd(total, add);
        }
        let (go, join) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(total, go, &[], join, &[]);
        self.b.switch_to_block(go);
        let f = self.fref(self.ids.imports.emit_reserve);
        let call = self.b.ins().call(f, &[self.ctx, total]);
        let p = self.b.inst_results(call)[0];
        let (inline, slow) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(p, inline, &[], slow, &[]);
        self.b.switch_to_block(slow);
        for s in ss {
            self.helper_stmt(s, abort);
        }
        self.b.ins().jump(join, &[]);
        self.b.switch_to_block(inline);
        for (((a, bytes, fields), off), valid) in items.iter().zip(offs).zip(valids) {
            let (st, next) = (self.b.create_block(), self.b.create_block());
            self.b.ins().brif(valid, st, &[], next, &[]);
            self.b.switch_to_block(st);
            let at = self.b.ins().iadd(p, off);
            self.emit_header(*a, *bytes, fields, at);
            self.b.ins().jump(next, &[]);
            self.b.switch_to_block(next);
        }
        self.b.ins().jump(join, &[]);
        self.b.switch_to_block(join);
    }

    /// Whether a valid header of `items` that something besides its extract may write is dirty
    /// (or every tracked header is: `all`); `None` when each of them is sealed or untracked.
    fn written_header_dirty(&mut self, items: &[(u32, u32, Vec<FastField>)]) -> Option<Value> {
        let written: Vec<(u32, u32)> = items
            .iter()
            .filter_map(|(a, _, _)| {
                let i = self.ids.clean.header_at(*a)?;
                (!self.ids.clean.is_sealed(i)).then_some((*a, i))
            })
            .collect();
        if written.is_empty() {
            return None;
        }
        let zero = self.iconst(0);
        let all = self.ld(self.ids.clean.base);
        let mut dirty = self.b.ins().icmp(IntCC::NotEqual, all, zero);
        for (a, i) in written {
            let valid = self.ld(a);
            let from = self.ld(self.ids.clean.word(i));
            let is_valid = self.b.ins().icmp(IntCC::NotEqual, valid, zero);
            let unclean = self.b.ins().icmp(IntCC::Equal, from, zero);
            let both = self.b.ins().band(is_valid, unclean);
            dirty = self.b.ins().bor(dirty, both);
        }
        Some(dirty)
    }

    /// Whether the valid headers of `items` (in order) are clean copies of consecutive bytes of
    /// the packet from byte 0 to the parser's cursor ([`Gen::emit_run`]); a valid header that
    /// is not tracked says no. Generated where [`Gen::written_header_dirty`] said no, which
    /// covers the every-header word (`all`) that only the headers it looks at heed.
    fn same_as_packet(&mut self, items: &[(u32, u32, Vec<FastField>)]) -> Value {
        let (zero, one) = (self.iconst(0), self.iconst(1));
        // The byte the next valid header must start at, plus 1 (a clean word's encoding).
        let mut next = one;
        let mut ok = self.b.ins().iconst(types::I8, 1);
        for (a, bytes, _) in items {
            let valid = self.ld(*a);
            let invalid = self.b.ins().icmp(IntCC::Equal, valid, zero);
            let fits = match self.ids.clean.header_at(*a) {
                Some(i) => {
                    let from = self.ld(self.ids.clean.word(i));
                    self.b.ins().icmp(IntCC::Equal, from, next)
                }
                None => self.b.ins().iconst(types::I8, 0),
            };
            let fine = self.b.ins().bor(invalid, fits);
            ok = self.b.ins().band(ok, fine);
            let n = self.iconst(u64::from(*bytes));
            let add = self.b.ins().select(valid, n, zero);
            next = self.b.ins().iadd(next, add);
        }
        let end = self.b.ins().isub(next, one);
        let end_bits = self.b.ins().ishl_imm_u(end, 3);
        let cursor = self.ctx_field(offset_of!(Ctx, cursor));
        let at_cursor = self.b.ins().icmp(IntCC::Equal, cursor, end_bits);
        self.b.ins().band(ok, at_cursor)
    }

    /// `emit` of a valid fixed header with a fast layout: the fields are packed into 8-byte words
    /// at compile-time positions and stored big-endian straight into the output; when the output
    /// is not at a byte boundary, the runtime's `emit`.
    fn emit(&mut self, s: &Stmt, hdr: &HdrRef, abort: Abort) {
        let a = hdr.loc.off;
        let Some((bytes, fields)) = self.fast_layout(hdr.layout, a) else {
            // The runtime's `emit` (wide or varbit fields), only for a valid header: an invalid
            // one emits nothing (P4_16 §15.1).
            if !self.in_frame(a, 1) {
                return self.helper_stmt(s, abort);
            }
            let valid = self.ld(a);
            let (go, join) = (self.b.create_block(), self.b.create_block());
            self.b.ins().brif(valid, go, &[], join, &[]);
            self.b.switch_to_block(go);
            self.helper_stmt(s, abort);
            self.b.ins().jump(join, &[]);
            self.b.switch_to_block(join);
            return;
        };
        let valid = self.ld(a);
        let (go, join) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(valid, go, &[], join, &[]);
        self.b.switch_to_block(go);
        let f = self.fref(self.ids.imports.emit_reserve);
        let n = self.iconst(u64::from(bytes));
        let call = self.b.ins().call(f, &[self.ctx, n]);
        let p = self.b.inst_results(call)[0];
        let (inline, slow) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(p, inline, &[], slow, &[]);
        self.b.switch_to_block(slow);
        self.helper_stmt(s, abort);
        self.b.ins().jump(join, &[]);
        self.b.switch_to_block(inline);
        self.emit_header(a, bytes, &fields, p);
        self.b.ins().jump(join, &[]);
        self.b.switch_to_block(join);
    }

    /// A valid header's bytes at `p`: copied from the packet when the header is clean
    /// ([`Clean`]), else packed from its fields ([`Gen::emit_words`]).
    fn emit_header(&mut self, a: u32, bytes: u32, fields: &[FastField], p: Value) {
        let Some(i) = self.ids.clean.header_at(a) else {
            return self.emit_words(a, bytes, fields, p);
        };
        let from = self.ld(self.ids.clean.word(i));
        let z = self.iconst(0);
        let has = self.b.ins().icmp(IntCC::NotEqual, from, z);
        // A sealed header is dirty only by its own word ([`Clean`]).
        let clean = if self.ids.clean.is_sealed(i) {
            has
        } else {
            let all = self.ld(self.ids.clean.base);
            let none = self.b.ins().icmp(IntCC::Equal, all, z);
            self.b.ins().band(has, none)
        };
        let (copy, pack, done) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        self.b.ins().brif(clean, copy, &[], pack, &[]);
        self.b.switch_to_block(copy);
        // 8-byte words from the packet: its extract checked that 16 bytes beyond the header
        // are in it, and the output has 8 bytes of room beyond the reservation.
        let input = self.ctx_field(offset_of!(Ctx, input));
        let src = self.b.ins().iadd(input, from);
        for k in 0..bytes.div_ceil(8) {
            let w = self
                .b
                .ins()
                .load(I64, MemFlagsData::trusted(), src, (8 * k) as i32 - 1);
            self.b
                .ins()
                .store(MemFlagsData::trusted(), w, p, (8 * k) as i32);
        }
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(pack);
        self.emit_words(a, bytes, fields, p);
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
    }

    /// Packs the fields of the header at frame offset `a` into big-endian 8-byte words stored
    /// from `p` on (`bytes` bytes, plus up to 7 of spill).
    fn emit_words(&mut self, a: u32, bytes: u32, fields: &[FastField], p: Value) {
        // A sealed header's fields are all stored whenever it is packed (after the runtime's
        // `extract`), though the analysis counts them as not read.
        let vals: Vec<Value> = fields
            .iter()
            .map(|&(off, _, w)| {
                let v = self.ld_raw(a + off);
                self.mask_to(v, w)
            })
            .collect();
        for k in 0..bytes.div_ceil(8) {
            // Word k holds header bits [64k, 64k + 64); a field's lowest bit lands at `pos` bits
            // above the word's lowest bit (negative: its low bits belong to the next word).
            let (lo, hi) = (64 * k, 64 * k + 64);
            let mut word: Option<Value> = None;
            for (&(_, b, w), &v) in fields.iter().zip(&vals) {
                if b >= hi || b + w <= lo {
                    continue;
                }
                let pos = i64::from(hi) - i64::from(b + w);
                let part = if pos > 0 {
                    self.b.ins().ishl_imm_u(v, pos)
                } else if pos < 0 {
                    self.b.ins().ushr_imm_u(v, -pos)
                } else {
                    v
                };
                word = Some(match word {
                    Some(x) => self.b.ins().bor(x, part),
                    None => part,
                });
            }
            let word = match word {
                Some(x) => x,
                None => self.iconst(0),
            };
            let be = self.b.ins().bswap(word);
            self.b
                .ins()
                .store(MemFlagsData::trusted(), be, p, (8 * k) as i32);
        }
    }

    // ------------------------------------------------------------------ functions and parsers

    /// A table's key function: the key at `Ctx::key` (see [`Gen::store_key`]); returns its length.
    fn table_key(&mut self, t: &Table) {
        let len = self.store_key(t);
        let ret = self.ret;
        self.jump_code(ret, len);
    }

    /// Whether an apply of table `t` is generated inline: its key needs no calls, and a field
    /// wider than 64 bits only forms generated code computes ([`Gen::wide_native`]).
    fn native_apply(&self, t: TableId) -> bool {
        self.prog
            .tables
            .get(t as usize)
            .is_some_and(|td| td.key_pre.is_empty() && key_native(td))
    }

    /// `t.apply()` of a table whose `const` entries generated code matches itself
    /// ([`const_entries`]): the key fields computed, the entries tested in precedence
    /// order; a hit counts itself in the table's statistics (`Helpers::const_hit`), stores
    /// `hit`, `action_run` and the entry's parameters as constants and runs the action in place;
    /// a miss takes the general apply (which looks the key up and finds no entry, and runs the
    /// default action, which the control plane may have changed).
    fn apply_const(&mut self, t: TableId, hit: Option<u32>, run: Option<u32>, abort: Abort) {
        let prog = self.prog;
        let (Some(td), Some(entries)) = (prog.tables.get(t as usize), const_entries(prog, t))
        else {
            return;
        };
        let kv: Vec<(Value, MatchKind, u32)> = td
            .keys
            .iter()
            .map(|k| {
                let w = k.expr.ty().width;
                let v = self.expr(&k.expr);
                (self.mask_to(v, w), k.kind, w)
            })
            .collect();
        let join = self.b.create_block();
        for e in entries {
            let mut all = self.b.ins().iconst(I8, 1);
            for (&(k, kind, w), m) in kv.iter().zip(&e.matches) {
                let Some(c) = match_of(kind, m, w) else {
                    continue;
                };
                let Some(cond) = field_test(&mut self.b, k, c, w) else {
                    continue;
                };
                all = self.b.ins().band(all, cond);
            }
            let (hit_blk, next) = (self.b.create_block(), self.b.create_block());
            self.b.ins().brif(all, hit_blk, &[], next, &[]);
            self.b.switch_to_block(hit_blk);
            let f = self.fref(self.ids.imports.const_hit);
            let tv = self.b.ins().iconst(I32, i64::from(t));
            self.b.ins().call(f, &[self.ctx, tv]);
            if let Some(h) = hit {
                let one = self.iconst(1);
                self.st(h, one);
            }
            if let Some(r) = run {
                let a = self.iconst(u64::from(e.action));
                self.st(r, a);
            }
            let Some(a) = td.actions.get(e.action as usize) else {
                self.b.ins().jump(join, &[]);
                self.b.switch_to_block(next);
                continue;
            };
            let mut off = 0usize;
            for p in &a.params {
                let n = p.ty.bytes();
                let v = param_value(&e.params, off, n, p.ty.width);
                off += n;
                let c = self.iconst(v);
                self.st(p.slot, c);
            }
            self.action_in_place(a, join, abort);
            self.b.switch_to_block(next);
        }
        // No entry matched: the general apply (a lookup that misses, the default action);
        // `const_entries` implies `native_apply`.
        self.apply(t, hit, run, abort);
        self.b.ins().jump(join, &[]);
        self.b.switch_to_block(join);
    }

    /// `t.apply()` of a table re-specialised to its control-plane entries
    /// ([`respecialisable`]): the code in the table's slot of `Ctx::spec` ([`specialise`]), when
    /// there is one, gets the key fields; on a hit it has counted it and stored the entry's
    /// parameters, and this code stores `hit` and `action_run` and runs the action it returned
    /// in place. No code, or a miss: the general apply (a lookup of the live table, which
    /// misses too or sees the write that replaced the code; the default action).
    fn apply_spec(&mut self, t: TableId, hit: Option<u32>, run: Option<u32>, abort: Abort) {
        let prog = self.prog;
        let Some(td) = prog.tables.get(t as usize) else {
            return;
        };
        let slots = self.ctx_field(offset_of!(Ctx, spec));
        // An aligned 8-byte load: atomic on the hosts Cranelift targets; the code it points at
        // was finalized before the runtime published its address (a release store).
        let code = self
            .b
            .ins()
            .load(I64, MemFlagsData::trusted(), slots, (8 * t) as i32);
        let (try_blk, general, join) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        self.b.ins().brif(code, try_blk, &[], general, &[]);
        self.b.switch_to_block(try_blk);
        let mut args = vec![self.ctx];
        for k in &td.keys {
            let v = self.expr(&k.expr);
            args.push(self.mask_to(v, k.expr.ty().width));
        }
        let mut sig = self.module.make_signature();
        for _ in &args {
            sig.params.push(AbiParam::new(I64));
        }
        sig.returns.push(AbiParam::new(I32));
        let sref = self.b.import_signature(sig);
        let call = self.b.ins().call_indirect(sref, code, &args);
        let action = self.b.inst_results(call)[0];
        let hit_blk = self.b.create_block();
        let miss =
            self.b
                .ins()
                .icmp_imm_s(IntCC::Equal, action, i64::from(crate::SPEC_MISS as i32));
        self.b.ins().brif(miss, general, &[], hit_blk, &[]);
        self.b.switch_to_block(hit_blk);
        if let Some(h) = hit {
            let one = self.iconst(1);
            self.st(h, one);
        }
        if let Some(r) = run {
            let a = self.b.ins().uextend(I64, action);
            self.st(r, a);
        }
        // The specialised code stored the parameters without marking headers dirty.
        if self.params_in_headers(td, None, None) {
            self.all_dirty();
        }
        for (i, a) in td.actions.iter().enumerate() {
            let (blk, next) = (self.b.create_block(), self.b.create_block());
            let c = self.b.ins().icmp_imm_s(IntCC::Equal, action, i as i64);
            self.b.ins().brif(c, blk, &[], next, &[]);
            self.b.switch_to_block(blk);
            self.action_in_place(a, join, abort);
            self.b.switch_to_block(next);
        }
        // An action out of range (never returned): nothing runs.
        self.b.ins().jump(join, &[]);
        self.b.switch_to_block(general);
        self.apply(t, hit, run, abort);
        self.b.ins().jump(join, &[]);
        self.b.switch_to_block(join);
    }

    /// `t.apply()` (P4_16 §14.2.2): the key stored inline; for a lean table
    /// (`p4_ir::Table::lean`) the runtime's `table_find` looks it up and this code stores `hit`,
    /// `action_run` and the chosen action's parameters, for other tables the runtime's
    /// `table_lookup` does the lookup and what surrounds it; the chosen action is called
    /// directly with its copy-in/copy-out, then its `@__ref` parameters are written back
    /// ([`Gen::write_back`]); the action's `exit` or reject ends the list after that.
    fn apply(&mut self, t: TableId, hit: Option<u32>, run: Option<u32>, abort: Abort) {
        let Some(td) = self.prog.tables.get(t as usize) else {
            return;
        };
        let len = self.store_key(td);
        // The table context the lookup replaces, restored after the action.
        let tp = self.ctx_field(offset_of!(Ctx, tctx));
        let saved: Vec<Value> = (0..3)
            .map(|i| self.b.ins().load(I64, MemFlagsData::trusted(), tp, 8 * i))
            .collect();
        let tv = self.b.ins().iconst(I32, i64::from(t));
        let lv = self.iconst(u64::from(len));
        let lean = td.lean(self.prog.arch);
        let action = if lean {
            // The lookup alone; `hit`, `action_run` and the parameters stored here.
            let f = self.fref(self.ids.imports.table_find);
            let call = self.b.ins().call(f, &[self.ctx, tv, lv]);
            let r = self.b.inst_results(call)[0];
            if let Some(h) = hit {
                let b = self.b.ins().ushr_imm_u(r, 32);
                self.st(h, b);
            }
            let action = self.b.ins().ireduce(I32, r);
            if let Some(rs) = run {
                let a = self.b.ins().uextend(I64, action);
                let none = self.b.ins().icmp_imm_s(IntCC::Equal, action, -1);
                let all = self.iconst(u64::MAX);
                let v = self.b.ins().select(none, all, a);
                self.st(rs, v);
            }
            action
        } else {
            let f = self.fref(self.ids.imports.table_lookup);
            let hv = self.b.ins().iconst(I32, i64::from(hit.unwrap_or(u32::MAX)));
            let rv = self.b.ins().iconst(I32, i64::from(run.unwrap_or(u32::MAX)));
            let call = self.b.ins().call(f, &[self.ctx, tv, hv, rv, lv]);
            let action = self.b.inst_results(call)[0];
            // The runtime wrote the `hit`/`action_run` slots and the action's parameters.
            if self.params_in_headers(td, hit, run) {
                self.all_dirty();
            }
            action
        };
        let join = self.b.create_block();
        let after = self.b.create_block();
        self.b.append_block_param(after, I32);
        let blocks: Vec<Block> = td.actions.iter().map(|_| self.b.create_block()).collect();
        for (i, blk) in blocks.iter().enumerate() {
            let next = self.b.create_block();
            let c = self.b.ins().icmp_imm_s(IntCC::Equal, action, i as i64);
            self.b.ins().brif(c, *blk, &[], next, &[]);
            self.b.switch_to_block(next);
        }
        // No action (or one out of range): the context was not replaced; nothing more to do.
        self.b.ins().jump(join, &[]);
        for (i, (a, blk)) in td.actions.iter().zip(&blocks).enumerate() {
            self.b.switch_to_block(*blk);
            if lean {
                self.unpack_found(a);
            }
            let wrote = self.b.create_block();
            self.b.append_block_param(wrote, I32);
            self.call(a.func, &a.copy_in, &a.copy_out, wrote);
            self.jump_code(wrote, flow::NEXT);
            self.b.switch_to_block(wrote);
            let code = self.b.block_params(wrote)[0];
            if a.params.iter().any(|p| p.is_ref) {
                self.write_back(a, tv, i);
            }
            self.b.ins().jump(after, &[code.into()]);
        }
        self.b.switch_to_block(after);
        let code = self.b.block_params(after)[0];
        let tp = self.ctx_field(offset_of!(Ctx, tctx));
        for (i, v) in saved.into_iter().enumerate() {
            self.b
                .ins()
                .store(MemFlagsData::trusted(), v, tp, 8 * i as i32);
        }
        self.after_action(code, join, abort);
        self.b.switch_to_block(join);
    }

    /// Stores action `a`'s parameters into their slots from `Ctx::found` (packed big-endian,
    /// `ceil(width/8)` bytes each, as the runtime's plan reads them): one 8-byte load per
    /// parameter, of the 8 bytes that end where it ends (or of the first 8, for one that ends
    /// before byte 8), swapped, shifted and masked.
    fn unpack_found(&mut self, a: &TableAction) {
        let fp = self.ctx_field(offset_of!(Ctx, found));
        let mut off = 0u32;
        for p in &a.params {
            let n = p.ty.bytes() as u32;
            let end = off + n;
            off = end;
            let v = if n == 0 {
                self.iconst(0)
            } else {
                let at = end.saturating_sub(8);
                let w = self
                    .b
                    .ins()
                    .load(I64, MemFlagsData::trusted(), fp, at as i32);
                let w = self.b.ins().bswap(w);
                let w = if end < 8 {
                    self.b.ins().ushr_imm_u(w, i64::from(64 - 8 * end))
                } else {
                    w
                };
                self.mask_to(w, p.ty.width)
            };
            self.st(p.slot, v);
        }
    }

    /// The `@__ref` write-back after hit action `a` (index `i` of table `tv`) ran: parameters
    /// of at most 8 bytes in all packed into one register as the entry holds them and the
    /// runtime's `write_word`; more, packed at `Ctx::params` and `write_back`; with a parameter
    /// wider than 64 bits, `table_done`, which reads them from the frame itself.
    fn write_back(&mut self, a: &TableAction, tv: Value, i: usize) {
        if a.params.iter().any(|p| p.ty.is_wide()) {
            let done = self.fref(self.ids.imports.table_done);
            let av = self.b.ins().iconst(I32, i as i64);
            self.b.ins().call(done, &[self.ctx, tv, av]);
            return;
        }
        let total: u32 = a.params.iter().map(|p| p.ty.width.div_ceil(8)).sum();
        if (1..=8).contains(&total) {
            // Byte k of the packed parameters is bits 8k..8k+8 of the word (a little-endian
            // load of them): each parameter's big-endian bytes, shifted to its offset.
            let mut word = self.iconst(0);
            let mut off = 0u32;
            for p in &a.params {
                let n = p.ty.width.div_ceil(8);
                if n == 0 {
                    continue;
                }
                let v = self.ld(p.slot);
                let v = self.mask_to(v, p.ty.width);
                let le = self.be_front(v, n);
                let at = if off > 0 {
                    self.b.ins().ishl_imm_u(le, i64::from(8 * off))
                } else {
                    le
                };
                word = self.b.ins().bor(word, at);
                off += n;
            }
            let f = self.fref(self.ids.imports.write_word);
            let len = self.iconst(u64::from(total));
            self.b.ins().call(f, &[self.ctx, tv, word, len]);
            return;
        }
        let vals: Vec<(Value, u32)> = a
            .params
            .iter()
            .map(|p| (self.ld(p.slot), p.ty.width))
            .collect();
        let off = self.pack_params(&vals);
        let f = self.fref(self.ids.imports.write_back);
        let len = self.iconst(u64::from(off));
        self.b.ins().call(f, &[self.ctx, tv, len]);
    }

    /// Packs `(value, width)`s at `Ctx::params` as an entry holds its action's parameters:
    /// each masked to its width, big-endian in `ceil(width/8)` bytes, back to back. Returns
    /// the bytes they take.
    fn pack_params(&mut self, vals: &[(Value, u32)]) -> u32 {
        let buf = self.ctx_field(offset_of!(Ctx, params));
        let mut off = 0u32;
        for &(v, w) in vals {
            let n = w.div_ceil(8);
            if n == 0 {
                continue;
            }
            let v = self.mask_to(v, w);
            self.store_be(v, n, buf, off);
            off += n;
        }
        off
    }

    /// A table's action `a` run in place after its apply chose it (its parameters stored): its
    /// `return` ends only the action (on to `join`), an `exit` or reject leaves through `abort`.
    fn action_in_place(&mut self, a: &TableAction, join: Block, abort: Abort) {
        let done = self.b.create_block();
        self.b.append_block_param(done, I32);
        self.call(a.func, &a.copy_in, &a.copy_out, done);
        self.jump_code(done, flow::NEXT);
        self.b.switch_to_block(done);
        let code = self.b.block_params(done)[0];
        self.after_action(code, join, abort);
    }

    /// Whether a word a table apply's helper stores without generated code's knowledge (the
    /// `hit` and `action_run` slots, the actions' parameters) lies in a clean-tracked header.
    fn params_in_headers(&self, td: &Table, hit: Option<u32>, run: Option<u32>) -> bool {
        let tracked = |w: u32| {
            self.ids
                .clean
                .of_word
                .get(w as usize)
                .is_some_and(|i| *i != u32::MAX)
        };
        [hit, run]
            .into_iter()
            .flatten()
            .chain(
                td.actions
                    .iter()
                    .flat_map(|a| a.params.iter().map(|p| p.slot)),
            )
            .any(tracked)
    }

    /// The end of a table's action with flow `code`: an action's `return` ends the action only
    /// (on to `join`), any other flow but `NEXT` leaves through `abort` with its code. Leaves
    /// the current block filled (the caller switches to its next one).
    fn after_action(&mut self, code: Value, join: Block, abort: Abort) {
        let ret = self
            .b
            .ins()
            .icmp_imm_s(IntCC::Equal, code, i64::from(flow::RETURN));
        let zero = self.b.ins().iconst(I32, 0);
        let code = self.b.ins().select(ret, zero, code);
        let stop = self.b.create_block();
        self.b.ins().brif(code, stop, &[], join, &[]);
        self.b.switch_to_block(stop);
        self.b.ins().jump(abort, &[code.into()]);
    }

    /// Stores a table's key at `Ctx::key`: each non-selector field's value big-endian in
    /// `ceil(width/8)` bytes, one after the other (an 8-byte store each; the buffer has 8 bytes of
    /// room beyond the key). Returns the key's length.
    fn store_key(&mut self, t: &Table) -> u32 {
        self.store_key_at(t, 0)
    }

    /// [`Gen::store_key`] at byte `at` past `Ctx::key`; returns the key's length.
    fn store_key_at(&mut self, t: &Table, at: u32) -> u32 {
        let key = self.ctx_field(offset_of!(Ctx, key));
        let mut off = at;
        for k in t.keys.iter().filter(|k| k.kind != MatchKind::Selector) {
            let w = k.expr.ty().width;
            let n = w.div_ceil(8);
            if k.expr.ty().is_wide() {
                self.store_be_wide(&k.expr, w, key, off);
                off += n;
                continue;
            }
            let v = self.expr(&k.expr);
            let v = self.mask_to(v, w);
            if n > 0 {
                self.store_be(v, n, key, off);
            }
            off += n;
        }
        off - at
    }

    /// Stores the `n` (1..=8) low bytes of `v`, most significant first, at `base + off`, as the
    /// front of one 8-byte store (the buffer has room for the word's other bytes).
    fn store_be(&mut self, v: Value, n: u32, base: Value, off: u32) {
        let be = self.be_front(v, n);
        self.b
            .ins()
            .store(MemFlagsData::trusted(), be, base, off as i32);
    }

    /// The word whose little-endian bytes are the `n` (1..=8) low bytes of `v`, most
    /// significant first, then zeros: what [`Gen::store_be`] stores.
    fn be_front(&mut self, v: Value, n: u32) -> Value {
        let up = if n < 8 {
            self.b.ins().ishl_imm_u(v, i64::from(64 - 8 * n))
        } else {
            v
        };
        self.b.ins().bswap(up)
    }

    // ------------------------------------------------------------------ the architecture's pass

    /// The first half of a packet pass ([`Glue`]): the frame's first `zero_words` words zeroed
    /// (16-byte stores), the glue's stores, the parser (a direct call), the stores after it,
    /// the prefetched tables' keys. Returns what the parser returned.
    fn pass_parse(&mut self, gl: &Glue) -> Result<(), JitError> {
        let accepted = self.parse_part(gl, true)?;
        let ret = self.ret;
        self.b.ins().jump(ret, &[accepted.into()]);
        Ok(())
    }

    /// A whole packet pass, for a packet no batch prefetches for: [`Gen::pass_parse`] without
    /// the keys, then [`Gen::pass_run`], in one function (one call and frame fewer).
    fn pass_whole(&mut self, gl: &Glue) -> Result<(), JitError> {
        self.parse_part(gl, false)?;
        self.pass_run(gl)
    }

    /// [`Gen::pass_parse`] up to its return (the keys only with `keys`): the parser's result.
    fn parse_part(&mut self, gl: &Glue, keys: bool) -> Result<Value, JitError> {
        let words = gl.zero_words.min(self.prog.frame_words);
        // Words the glue stores before the parser need no zero first.
        let stored: Vec<u32> = gl.before_parse.iter().map(|g| g.off).collect();
        self.zero_frame(words, &stored);
        // The clean-header words past the frame ([`Clean`]).
        let z = self.iconst(0);
        let base = self.ids.clean.base;
        for i in 0..self.ids.clean.words() {
            self.st_raw(base + i, z);
        }
        self.glue_stores(&gl.before_parse);
        let Some(p) = self.prog.parsers.get(gl.parser as usize) else {
            return Err(JitError::NoParser(gl.parser));
        };
        // The parser generated in place.
        let parsed = self.b.create_block();
        self.b.append_block_param(parsed, I32);
        // The runtime starts every pass with the cursor at 0 (`Glue`).
        self.parser_to(p, parsed, true);
        self.b.switch_to_block(parsed);
        let accepted = self.b.block_params(parsed)[0];
        self.glue_stores(&gl.after_parse);
        if !keys {
            return Ok(accepted);
        }
        // The prefetched tables' keys, for the runtime to hash and prefetch before `pass_run`.
        let (keys, _) = crate::prefetch_layout(self.prog, &gl.prefetch);
        for (t, off, _) in keys {
            let Some(td) = self
                .prog
                .tables
                .get(t as usize)
                .filter(|_| self.native_apply(t))
            else {
                return Err(JitError::PrefetchKey { table: t });
            };
            self.store_key_at(td, off);
        }
        Ok(accepted)
    }

    /// The second half: the glue's controls, each a direct call; a reject ends the pass.
    fn pass_run(&mut self, gl: &Glue) -> Result<(), JitError> {
        let ret = self.ret;
        for &c in &gl.controls {
            if self.ids.functions.get(c as usize).is_none() {
                return Err(JitError::NoFunction(c));
            }
            // The control as a call (generated in place when small): a reject ends the pass, an
            // exit ends only the control.
            let (ended, next) = (self.b.create_block(), self.b.create_block());
            self.b.append_block_param(ended, I32);
            self.call(c, &[], &[], ended);
            self.b.ins().jump(next, &[]);
            self.b.switch_to_block(ended);
            let code = self.b.block_params(ended)[0];
            let is_rej = self
                .b
                .ins()
                .icmp_imm_s(IntCC::Equal, code, i64::from(flow::REJECT));
            let rej = self.b.ins().iconst(I32, i64::from(flow::REJECT));
            self.b.ins().brif(is_rej, ret, &[rej.into()], next, &[]);
            self.b.switch_to_block(next);
        }
        self.jump_code(ret, flow::NEXT);
        Ok(())
    }

    /// Zeroes the words of `0..words` that something may read ([`Clean::keeps`]) and `stored`
    /// does not write anyway: a word nothing reads keeps the previous packet's value unseen (a
    /// sealed header's unread fields, metadata no block reads). 16-byte stores, unrolled for a
    /// run of up to 16 such pairs of words, a loop over a longer run.
    fn zero_frame(&mut self, words: u32, stored: &[u32]) {
        let z = self.iconst(0);
        let v = self.b.ins().splat(types::I64X2, z);
        let needs = |g: &Self, w: u32| g.ids.clean.zeroes(w) && !stored.contains(&w);
        let pairs = words / 2;
        let mut i = 0;
        while i < pairs {
            match (needs(self, 2 * i), needs(self, 2 * i + 1)) {
                (true, true) => {
                    let run = (i..pairs)
                        .take_while(|&j| needs(self, 2 * j) && needs(self, 2 * j + 1))
                        .count() as u32;
                    self.zero_pairs(v, i, run);
                    i += run;
                    continue;
                }
                (true, false) => self.st_raw(2 * i, z),
                (false, true) => self.st_raw(2 * i + 1, z),
                (false, false) => {}
            }
            i += 1;
        }
        if words % 2 == 1 && needs(self, words - 1) {
            self.st_raw(words - 1, z);
        }
    }

    /// Zeroes word pairs `first..first + n` with the 16-byte zero `v`.
    fn zero_pairs(&mut self, v: Value, first: u32, n: u32) {
        if n <= 16 {
            for i in first..first + n {
                self.b
                    .ins()
                    .store(MemFlagsData::trusted(), v, self.frame, (16 * i) as i32);
            }
            return;
        }
        let (head, body, done) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        self.b.append_block_param(head, I64);
        let start = self.iconst(u64::from(first) * 16);
        self.b.ins().jump(head, &[start.into()]);
        self.b.switch_to_block(head);
        let i = self.b.block_params(head)[0];
        let end = self.iconst(u64::from(first + n) * 16);
        let more = self.b.ins().icmp(IntCC::UnsignedLessThan, i, end);
        self.b.ins().brif(more, body, &[], done, &[]);
        self.b.switch_to_block(body);
        let at = self.b.ins().iadd(self.frame, i);
        self.b.ins().store(MemFlagsData::trusted(), v, at, 0);
        let n = self.b.ins().iadd_imm_s(i, 16);
        self.b.ins().jump(head, &[n.into()]);
        self.b.switch_to_block(done);
    }

    fn glue_stores(&mut self, stores: &[GlueStore]) {
        for g in stores {
            if !self.in_frame(g.off, 1) {
                continue;
            }
            let v = match g.src {
                GlueSrc::Const(c) => self.iconst(c),
                GlueSrc::Port => self.ctx_field(offset_of!(Ctx, port)),
                GlueSrc::Direction => self.ctx_field(offset_of!(Ctx, direction)),
                GlueSrc::Pass => self.ctx_field(offset_of!(Ctx, pass)),
                GlueSrc::Now => self.ctx_field(offset_of!(Ctx, now)),
                GlueSrc::Recirculated => {
                    let p = self.ctx_field(offset_of!(Ctx, pass));
                    let z = self.iconst(0);
                    self.bool64(IntCC::NotEqual, p, z)
                }
                GlueSrc::ParserError => self.ctx_field(offset_of!(Ctx, perr)),
            };
            let v = self.mask_to(v, g.width);
            self.st(g.off, v);
        }
    }

    fn function_body(&mut self, body: &[Stmt]) {
        let ret = self.ret;
        self.stmts(body, ret);
        self.jump_code(ret, flow::NEXT);
    }

    /// A parser: `init`, then the state machine (P4_16 §12), as `Exec::run_parser`.
    fn parser(&mut self, p: &Parser) {
        let ret = self.ret;
        self.parser_to(p, ret, false);
    }

    /// A parser's code, ending at `ret` with 1 (accepted) or 0 (rejected).
    fn parser_to(&mut self, p: &Parser, ret: Block, from_start: bool) {
        let steps = self.b.declare_var(I64);
        let z = self.iconst(0);
        self.b.def_var(steps, z);
        let outer = self.parsing;
        let accept = self.b.create_block();
        let reject = self.b.create_block();
        let cursor = self.b.declare_var(I64);
        let at = if from_start {
            z
        } else {
            self.ctx_field(offset_of!(Ctx, cursor))
        };
        self.b.def_var(cursor, at);
        self.parsing = Some(Parsing {
            cursor,
            reject,
            input: self.ctx_field(offset_of!(Ctx, input)),
            input_len: self.ctx_field(offset_of!(Ctx, input_len)),
        });
        // init: a reject rejects; anything else goes on to `start`.
        let init_end = self.b.create_block();
        self.b.append_block_param(init_end, I32);
        self.stmts(&p.init, init_end);
        self.jump_code(init_end, flow::NEXT);
        let states: Vec<Block> = p.states.iter().map(|_| self.b.create_block()).collect();
        self.b.switch_to_block(init_end);
        let code = self.b.block_params(init_end)[0];
        let is_rej = self
            .b
            .ins()
            .icmp_imm_s(IntCC::Equal, code, i64::from(flow::REJECT));
        let start = self.target_block(Target::State(p.start), &states, accept, reject);
        self.b.ins().brif(is_rej, reject, &[], start, &[]);

        for (si, st) in p.states.iter().enumerate() {
            self.b.switch_to_block(states[si]);
            self.count_step(steps, reject);
            // The body: a reject rejects, an exit accepts, any other early end goes to the
            // transition.
            let after = self.b.create_block();
            self.b.append_block_param(after, I32);
            let trans = self.b.create_block();
            self.stmts(&st.body, after);
            self.b.ins().jump(trans, &[]);
            self.b.switch_to_block(after);
            let code = self.b.block_params(after)[0];
            let (not_rej, not_exit) = (self.b.create_block(), self.b.create_block());
            let r = self
                .b
                .ins()
                .icmp_imm_s(IntCC::Equal, code, i64::from(flow::REJECT));
            self.b.ins().brif(r, reject, &[], not_rej, &[]);
            self.b.switch_to_block(not_rej);
            let x = self
                .b
                .ins()
                .icmp_imm_s(IntCC::Equal, code, i64::from(flow::EXIT));
            self.b.ins().brif(x, accept, &[], not_exit, &[]);
            self.b.switch_to_block(not_exit);
            self.b.ins().jump(trans, &[]);
            self.b.switch_to_block(trans);
            self.transition(st, &states, accept, reject);
        }
        self.b.switch_to_block(accept);
        self.jump_code(ret, 1);
        self.b.switch_to_block(reject);
        self.jump_code(ret, 0);
        self.parsing = outer;
    }

    /// The block of a target; a state index out of range accepts (as the interpreter does).
    fn target_block(&self, t: Target, states: &[Block], accept: Block, reject: Block) -> Block {
        match t {
            Target::Accept => accept,
            Target::Reject => reject,
            Target::State(i) => states.get(i as usize).copied().unwrap_or(accept),
        }
    }

    fn count_step(&mut self, steps: Variable, reject: Block) {
        let n = self.b.use_var(steps);
        let n = self.b.ins().iadd_imm_s(n, 1);
        self.b.def_var(steps, n);
        let over = self.b.ins().icmp_imm_s(
            IntCC::UnsignedGreaterThan,
            n,
            i64::from(self.limits.parser_steps),
        );
        let (timeout, go) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(over, timeout, &[], go, &[]);
        self.b.switch_to_block(timeout);
        self.set_perr(p4_ir::ir::errors::PARSER_TIMEOUT);
        self.b.ins().jump(reject, &[]);
        self.b.switch_to_block(go);
    }

    fn set_perr(&mut self, code: u64) {
        let c = self.iconst(code);
        self.ctx_store(offset_of!(Ctx, perr), c);
    }

    fn transition(&mut self, st: &State, states: &[Block], accept: Block, reject: Block) {
        let (keys, cases) = match &st.next {
            Transition::Go(t) => {
                let to = self.target_block(*t, states, accept, reject);
                self.b.ins().jump(to, &[]);
                return;
            }
            Transition::Select { keys, cases } => (keys, cases),
        };
        let native = keys.len() <= 8
            && keys.iter().all(|k| !k.ty().is_wide())
            && cases
                .iter()
                .all(|c| c.keysets.iter().all(|k| !matches!(k, KeySet::Set(_))));
        if !native {
            // Wide keys or value sets: the runtime's `select` picks the target.
            let f = self.fref(self.ids.imports.select);
            let p = self.iconst(st as *const State as u64);
            let call = self.b.ins().call(f, &[self.ctx, p]);
            let code = self.b.inst_results(call)[0];
            let no_match = self.b.create_block();
            let mut next = self.b.create_block();
            let c = self
                .b
                .ins()
                .icmp_imm_s(IntCC::Equal, code, i64::from(target::NO_MATCH));
            self.b.ins().brif(c, no_match, &[], next, &[]);
            let mut arms = vec![(target::ACCEPT, accept), (target::REJECT, reject)];
            for (i, b) in states.iter().enumerate() {
                arms.push((target::STATE + i as u32, *b));
            }
            for (code_v, blk) in arms {
                self.b.switch_to_block(next);
                next = self.b.create_block();
                let c = self
                    .b
                    .ins()
                    .icmp_imm_s(IntCC::Equal, code, i64::from(code_v));
                self.b.ins().brif(c, blk, &[], next, &[]);
            }
            self.b.switch_to_block(next);
            self.b.ins().jump(accept, &[]);
            self.b.switch_to_block(no_match);
            self.set_perr(p4_ir::ir::errors::NO_MATCH);
            self.b.ins().jump(reject, &[]);
            return;
        }
        let kv: Vec<(Value, Ty)> = keys.iter().map(|k| (self.expr(k), k.ty())).collect();
        for c in cases {
            let to = self.target_block(c.next, states, accept, reject);
            let mut all = self.b.ins().iconst(I8, 1);
            for (i, ks) in c.keysets.iter().enumerate() {
                let Some(&(k, t)) = kv.get(i) else { continue };
                let m = mask(t.width);
                let ok = match ks {
                    KeySet::Any => continue,
                    KeySet::Value(v) => {
                        self.b
                            .ins()
                            .icmp_imm_s(IntCC::Equal, k, (v.low() & m) as i64)
                    }
                    KeySet::Mask(v, msk) => {
                        let km = self.b.ins().band_imm_u(k, msk.low() as i64);
                        self.b
                            .ins()
                            .icmp_imm_s(IntCC::Equal, km, (v.low() & msk.low()) as i64)
                    }
                    KeySet::Range(lo, hi) => {
                        let (lo, hi) = (lo.low() & m, hi.low() & m);
                        if t.signed {
                            let kx = self.sext(k, t.width);
                            let l = p4_ir::ops::sext(lo, t.width);
                            let h = p4_ir::ops::sext(hi, t.width);
                            let a = self
                                .b
                                .ins()
                                .icmp_imm_s(IntCC::SignedGreaterThanOrEqual, kx, l);
                            let b = self.b.ins().icmp_imm_s(IntCC::SignedLessThanOrEqual, kx, h);
                            self.b.ins().band(a, b)
                        } else {
                            let a = self.b.ins().icmp_imm_s(
                                IntCC::UnsignedGreaterThanOrEqual,
                                k,
                                lo as i64,
                            );
                            let b = self.b.ins().icmp_imm_s(
                                IntCC::UnsignedLessThanOrEqual,
                                k,
                                hi as i64,
                            );
                            self.b.ins().band(a, b)
                        }
                    }
                    // Value sets take the runtime's select (checked above).
                    KeySet::Set(_) => self.b.ins().iconst(I8, 0),
                };
                all = self.b.ins().band(all, ok);
            }
            let next = self.b.create_block();
            self.b.ins().brif(all, to, &[], next, &[]);
            self.b.switch_to_block(next);
        }
        self.set_perr(p4_ir::ir::errors::NO_MATCH);
        self.b.ins().jump(reject, &[]);
    }
}

fn d_count_zero(l: &Loc) -> bool {
    l.dyn_idx.iter().any(|d| d.count == 0)
}
