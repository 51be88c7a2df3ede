//! The runtime's side of the compiled engine (`Engine::Jit`, docs/jit.md): the helpers generated
//! code calls back into — the interpreter's own statement, expression and `select`
//! implementations, so both engines share one semantics for tables, externs, `emit`, stacks and
//! wide values — and the entry from [`Exec`] into generated code.

use crate::engine::exec::{Exec, Flow};
use crate::engine::sites::Site;
use crate::state::Switch;
use crate::types::BuildError;
use crate::types::Config;
use nevermiss_jit::{flow, target, Compiled, Ctx, Helpers, Limits, NativeFn};
use nevermiss_tables::stamp::{stamp, Stage};
use p4_ir::ir::{Expr, MatchKind, State, Stmt, Target, Transition};
use p4_ir::Program;
use std::ffi::c_void;
use std::ptr::addr_of_mut;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

// `Ctx::cursor` points at `Exec::cursor`.
const _: () = assert!(std::mem::size_of::<usize>() == std::mem::size_of::<u64>());

/// What `Ctx::host` points at while generated code runs: the `Exec` whose `Ctx` it is (this
/// `Host` is the `Exec`'s own `host` field) and the switch it runs for.
pub(crate) struct Host {
    ex: *mut Exec,
    sw: *const Switch,
}

impl Default for Host {
    fn default() -> Host {
        Host {
            ex: std::ptr::null_mut(),
            sw: std::ptr::null(),
        }
    }
}

const HELPERS: Helpers = Helpers {
    stmt: h_stmt,
    eval: h_eval,
    select: h_select,
    loop_limit: h_loop_limit,
    emit_reserve: h_emit_reserve,
    table_lookup: h_table_lookup,
    table_find: h_table_find,
    table_done: h_table_done,
    write_back: h_write_back,
    write_word: h_write_word,
    add_entry: h_add_entry,
    const_hit: h_const_hit,
    count: h_count,
    direct_count: h_direct_count,
};

/// A profiling build's helpers (`Config::profile`, `crate::engine::profile`): the table
/// lookups timed.
const PROFILED_HELPERS: Helpers = Helpers {
    table_lookup: h_table_lookup_timed,
    table_find: h_table_find_timed,
    ..HELPERS
};

/// The helpers generated code calls (also those of a table's re-specialised code).
pub(crate) fn helpers() -> Helpers {
    HELPERS
}

/// Compiles `prog` for a switch with `config`; an error names the function or parser.
pub(crate) fn compile(prog: &Arc<Program>, config: &Config) -> Result<Compiled, BuildError> {
    let limits = Limits {
        parser_steps: config.parser_steps,
        loop_limit: config.loop_limit,
    };
    let arch = crate::state::ArchInfo::new(prog).ok();
    let glue = arch.as_ref().and_then(|a| {
        // The tables `Switch::prefetch` will hold, if their keys can be generated.
        let prefetch = crate::state::prefetch_list(prog, a, config.prefetch_tables, |t| {
            prog.tables.get(t as usize).is_some_and(|td| {
                let mut keys = td.keys.iter().filter(|k| k.kind != MatchKind::Selector);
                keys.clone().next().is_some()
                    && keys.all(|k| k.kind == MatchKind::Exact && !k.expr.ty().is_wide())
            })
        });
        a.pna().map(|pi| pi.glue(prog, prefetch))
    });
    let regions = arch.as_ref().map(|a| a.frame_regions()).unwrap_or_default();
    // A profiling build runs PNA's blocks one by one (each timed), not as one generated pass.
    let (helpers, glue) = match config.profile {
        Some(_) => (&PROFILED_HELPERS, None),
        None => (&HELPERS, glue),
    };
    nevermiss_jit::compile(prog, helpers, limits, glue.as_ref(), &regions).map_err(BuildError::Jit)
}

impl Exec {
    /// Runs the native function `f` on this packet's state.
    #[inline(always)]
    pub(crate) fn run_native(&mut self, sw: &Switch, f: NativeFn) -> u32 {
        let me: *mut Exec = self;
        // SAFETY: `self.c`'s buffer pointers are set by `Exec::new` and `Exec::reset_packet` to
        // buffers that are not reallocated while a packet runs (the frame, the input, the key and
        // parameter buffers). Its pointers into this `Exec` (`host`, `tctx`, `dest`) are set
        // again whenever the `Exec` has moved or runs for another switch since they were set
        // (`Exec::host` remembers both), so they point into this `Exec`, which does not move
        // during the call; `spec` is set at every call to `sw`'s slots of re-specialised table
        // code, which live as long as `sw`; a nested call (a helper running the interpreter, which calls
        // generated code again) finds them right and changes nothing. The helpers reborrow
        // `*me` one at a time, on this thread, and reach the registers through `Exec::c`, the
        // `Ctx` the code was given.
        unsafe {
            let c = addr_of_mut!((*me).c);
            let h = addr_of_mut!((*me).host);
            if (*h).ex != me || !std::ptr::eq((*h).sw, sw) {
                *h = Host { ex: me, sw };
                (*c).host = h.cast::<c_void>();
                (*c).tctx = addr_of_mut!((*me).tctx).cast::<u64>();
                (*c).dest = addr_of_mut!((*me).ps.dest).cast::<u64>();
            }
            // Every call: a switch at the address of a dropped one has slots elsewhere.
            (*c).spec = sw.plan().specs().slots.as_ptr();
            (*c).now = (*me).now_ns;
            f(c)
        }
    }

    /// What [`Exec::run_native`] sets up before each call, done once for a batch of packets
    /// that [`Exec::run_bound`] then runs: `Ctx`'s pointers into this `Exec` and to `sw`'s
    /// slots of re-specialised code.
    #[inline]
    pub(crate) fn bind(&mut self, sw: &Switch) {
        let me: *mut Exec = self;
        // SAFETY: as in `run_native`: the pointers point into this `Exec` and `sw`.
        unsafe {
            let c = addr_of_mut!((*me).c);
            let h = addr_of_mut!((*me).host);
            *h = Host { ex: me, sw };
            (*c).host = h.cast::<c_void>();
            (*c).tctx = addr_of_mut!((*me).tctx).cast::<u64>();
            (*c).dest = addr_of_mut!((*me).ps.dest).cast::<u64>();
            (*c).spec = sw.plan().specs().slots.as_ptr();
        }
    }

    /// [`Exec::run_native`] of `f` for an `Exec` [`Exec::bind`] set up: only the clock is
    /// stored before the call (the per-batch set-up of the compiled engine's batch loops).
    ///
    /// # Safety
    /// [`Exec::bind`] was called on this `Exec` for the switch `f` belongs to, and the `Exec`
    /// has not moved since (a batch's states are not moved while it runs).
    #[inline(always)]
    pub(crate) unsafe fn run_bound(&mut self, f: NativeFn) -> u32 {
        let me: *mut Exec = self;
        debug_assert!(std::ptr::eq(self.host.ex, me));
        // SAFETY: the function's contract: `c`'s pointers were set by `bind` for this `Exec`
        // at this address and this switch (what `run_native` would check and find right).
        unsafe {
            let c = addr_of_mut!((*me).c);
            (*c).now = (*me).now_ns;
            f(c)
        }
    }
}

/// The flow of a native function's code.
pub(crate) fn to_flow(code: u32) -> Flow {
    match code {
        flow::RETURN => Flow::Return,
        flow::EXIT => Flow::Exit,
        flow::BREAK => Flow::Break,
        flow::CONTINUE => Flow::Continue,
        flow::REJECT => Flow::Reject,
        _ => Flow::Next,
    }
}

fn from_flow(f: Flow) -> u32 {
    match f {
        Flow::Next => flow::NEXT,
        Flow::Return => flow::RETURN,
        Flow::Exit => flow::EXIT,
        Flow::Break => flow::BREAK,
        Flow::Continue => flow::CONTINUE,
        Flow::Reject => flow::REJECT,
    }
}

/// # Safety
/// `ctx` is a [`Ctx`] built by [`Exec::run_native`] whose call is still running.
unsafe fn host<'a>(ctx: *mut Ctx) -> (&'a mut Exec, &'a Switch) {
    // SAFETY: see the function's contract.
    unsafe {
        let h = &*((*ctx).host as *const Host);
        (&mut *h.ex, &*h.sw)
    }
}

/// Runs one statement as the interpreter does.
unsafe extern "C" fn h_stmt(ctx: *mut Ctx, s: *const Stmt) -> u32 {
    // SAFETY: called by generated code with its `Ctx` and a statement of the program it keeps alive.
    let (ex, sw, s) = unsafe {
        let (ex, sw) = host(ctx);
        (ex, sw, &*s)
    };
    ex.fallbacks += 1;
    if let Some(m) = ex.sites.as_deref_mut() {
        m.add(Site::Stmt(s));
    }
    from_flow(ex.stmt(sw, s))
}

/// Evaluates a scalar expression with operands wider than 64 bits.
unsafe extern "C" fn h_eval(ctx: *mut Ctx, e: *const Expr) -> u64 {
    // SAFETY: as `h_stmt`.
    let (ex, e) = unsafe { (host(ctx).0, &*e) };
    ex.fallbacks += 1;
    if let Some(m) = ex.sites.as_deref_mut() {
        m.add(Site::Expr(e));
    }
    ex.eval(e)
}

/// A state's `select` with wide keys or value sets.
unsafe extern "C" fn h_select(ctx: *mut Ctx, st: *const State) -> u32 {
    // SAFETY: as `h_stmt`.
    let (ex, sw, st) = unsafe {
        let (ex, sw) = host(ctx);
        (ex, sw, &*st)
    };
    let Transition::Select { keys, cases } = &st.next else {
        return target::ACCEPT;
    };
    ex.fallbacks += 1;
    if let Some(m) = ex.sites.as_deref_mut() {
        m.add(Site::Select(st));
    }
    match ex.select(sw, keys, cases) {
        None => target::NO_MATCH,
        Some(Target::Accept) => target::ACCEPT,
        Some(Target::Reject) => target::REJECT,
        Some(Target::State(i)) => target::STATE.saturating_add(i),
    }
}

/// `count(index[, bytes])` of an indexed counter (`Helpers::count`; `bytes == u64::MAX`: the
/// packet's length), as the interpreter counts it.
unsafe extern "C" fn h_count(ctx: *mut Ctx, inst: u32, index: u64, bytes: u64) {
    // SAFETY: as `h_stmt`.
    let (ex, sw) = unsafe { host(ctx) };
    ex.count_indexed(
        sw.externs().get(inst),
        index,
        (bytes != u64::MAX).then_some(bytes),
    );
}

/// `count([bytes])` of a direct counter (`Helpers::direct_count`), as the interpreter counts it.
unsafe extern "C" fn h_direct_count(ctx: *mut Ctx, inst: u32, bytes: u64) {
    // SAFETY: as `h_stmt`.
    let (ex, sw) = unsafe { host(ctx) };
    ex.count_direct(sw.externs().get(inst), (bytes != u64::MAX).then_some(bytes));
}

/// A packet ran past the loop limit.
unsafe extern "C" fn h_loop_limit(ctx: *mut Ctx) {
    // SAFETY: as `h_stmt`.
    let sw = unsafe { host(ctx).1 };
    sw.stats().loop_limit_hits.fetch_add(1, Relaxed);
}

/// Room for `n` bytes of a header at the end of the deparser's output.
unsafe extern "C" fn h_emit_reserve(ctx: *mut Ctx, n: u64) -> *mut u8 {
    // SAFETY: as `h_stmt`.
    let ex = unsafe { host(ctx).0 };
    ex.out
        .append_raw(n as usize)
        .unwrap_or(std::ptr::null_mut())
}

/// A table apply up to its action; the key is the `len` bytes generated code stored at `Ctx::key`.
unsafe extern "C" fn h_table_lookup(ctx: *mut Ctx, t: u32, hit: u32, run: u32, len: u64) -> u32 {
    stamp(Stage::LookupIn);
    // SAFETY: as `h_stmt`; `Ctx::key` is `Exec::key`'s buffer, whose capacity holds every table's
    // key (reserved by `Exec::new`) and into which the code wrote `len` bytes.
    let (ex, sw) = unsafe { host(ctx) };
    let len = (len as usize).min(ex.key.capacity());
    // SAFETY: `len` is at most the capacity, and generated code wrote those bytes.
    unsafe { ex.key.set_len(len) };
    let slot = |s: u32| (s != u32::MAX).then_some(s);
    let r = ex
        .table_lookup_core(sw, t, slot(hit), slot(run))
        .unwrap_or(u32::MAX);
    stamp(Stage::LookupOut);
    r
}

/// The lookup of a lean table apply; the key is the `len` bytes generated code stored at
/// `Ctx::key` (`Helpers::table_find`).
unsafe extern "C" fn h_table_find(ctx: *mut Ctx, t: u32, len: u64) -> u64 {
    stamp(Stage::LookupIn);
    // SAFETY: as `h_table_lookup`.
    let (ex, sw) = unsafe { host(ctx) };
    let len = (len as usize).min(ex.key.capacity());
    // SAFETY: `len` is at most the capacity, and generated code wrote those bytes.
    unsafe { ex.key.set_len(len) };
    let r = ex.table_find(sw, t);
    stamp(Stage::LookupOut);
    r
}

/// `f` (a lookup helper) bracketed by two readings of the profiling build's clock, added to
/// table `t`'s lookups.
///
/// # Safety
/// As `h_stmt`, and `f` is safe to call with this `ctx`.
unsafe fn timed_lookup<R>(ctx: *mut Ctx, t: u32, f: impl FnOnce() -> R) -> R {
    // SAFETY: the function's contract; the `Exec` is reborrowed once before and once after
    // the lookup, never across it.
    let t0 = unsafe { host(ctx).0 }
        .profile
        .as_ref()
        .map_or(0, |p| p.now());
    let r = f();
    // SAFETY: as above.
    if let Some(p) = unsafe { host(ctx).0 }.profile.as_mut() {
        let t1 = p.now();
        p.add_table(t, t1.wrapping_sub(t0));
    }
    r
}

/// [`h_table_lookup`] timed (a profiling build).
unsafe extern "C" fn h_table_lookup_timed(
    ctx: *mut Ctx,
    t: u32,
    hit: u32,
    run: u32,
    len: u64,
) -> u32 {
    // SAFETY: as `h_table_lookup`, whose contract generated code keeps.
    unsafe { timed_lookup(ctx, t, || h_table_lookup(ctx, t, hit, run, len)) }
}

/// [`h_table_find`] timed (a profiling build).
unsafe extern "C" fn h_table_find_timed(ctx: *mut Ctx, t: u32, len: u64) -> u64 {
    // SAFETY: as `h_table_find`, whose contract generated code keeps.
    unsafe { timed_lookup(ctx, t, || h_table_find(ctx, t, len)) }
}

/// The `@__ref` write-back of a table apply after its action ran (generated code restores the
/// table context itself).
unsafe extern "C" fn h_table_done(ctx: *mut Ctx, t: u32, action: u32) {
    // SAFETY: as `h_stmt`.
    let (ex, sw) = unsafe { host(ctx) };
    ex.table_write_back(sw, t, action);
}

/// The `@__ref` write-back with the parameters generated code packed at `Ctx::params`.
unsafe extern "C" fn h_write_back(ctx: *mut Ctx, t: u32, len: u64) {
    // SAFETY: as `h_stmt`; generated code wrote `len` bytes at `Ctx::params` (`Exec::abuf`),
    // never more than its length.
    let (ex, sw) = unsafe { host(ctx) };
    ex.write_back_packed(sw, t, len as usize);
}

/// The `@__ref` write-back of parameters of at most 8 bytes that generated code packed into
/// `word`.
unsafe extern "C" fn h_write_word(ctx: *mut Ctx, t: u32, word: u64, len: u64) {
    // SAFETY: as `h_stmt`.
    let (ex, sw) = unsafe { host(ctx) };
    ex.write_back_word(sw, t, word, len as usize);
}

/// PNA `add_entry` with the parameters generated code packed at `Ctx::params`.
unsafe extern "C" fn h_add_entry(ctx: *mut Ctx, func: u32, len: u64, profile: u64) -> u32 {
    stamp(Stage::AddIn);
    // SAFETY: as `h_stmt`; `Ctx::params` is `Exec::abuf`, which generated code wrote `len` bytes
    // into (never more than its length: the parameters of an action plus 8).
    let (ex, sw) = unsafe { host(ctx) };
    let r = u32::from(ex.add_entry_packed(sw, func, len as usize, profile));
    stamp(Stage::AddOut);
    r
}

/// A hit among a `const` table's entries that generated code matched itself: counted as
/// `Exec::table_lookup_core` counts a hit (the table's statistics, the packet's operations).
unsafe extern "C" fn h_const_hit(ctx: *mut Ctx, t: u32) {
    // SAFETY: as `h_stmt`.
    let (ex, sw) = unsafe { host(ctx) };
    if let Some(rt) = sw.rt_tables().get(t as usize) {
        rt.table().count_hit();
    }
    ex.ops |= crate::engine::exec::TableOps::HIT;
}
