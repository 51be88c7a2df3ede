//! The interpreter: runs IR statements over one packet's frame (P4_16 semantics: §8
//! expressions, §11 statements, §12 parsers, §13–14 controls and tables, §15 deparsing).
//!
//! One [`Exec`] belongs to one worker thread; it owns the frame, the packet being parsed, the
//! deparser's output, the table key buffer and the lookup result, all reused from packet to
//! packet, so the fast path allocates nothing. Shared state is reached through `&Switch`.

use crate::bits::{put_be, read_bits, read_wide, BitWriter};
use crate::state::{self, RED};
use crate::state::{FastHeader, RtExtern, Switch, FAST_HEADER_MAX_BYTES};
use crate::types::DigestMsg;
use nevermiss_tables::stamp::{stamp, Stage};
use nevermiss_tables::{AddStatus, EntryHandle, Lookup, ACTION_NONE};
use num_bigint::BigUint;
use p4_ir::errors::*;
use p4_ir::ops::{self, mask};
use p4_ir::*;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::PoisonError;

mod externs;

/// The packet `c` describes (borrowing only the registers, so the frame can be written
/// meanwhile).
#[inline]
pub(crate) fn input_of(c: &nevermiss_jit::Ctx) -> &[u8] {
    if c.input.is_null() {
        return &[];
    }
    // SAFETY: `c.input`/`c.input_len` describe `Exec::own` or, between
    // `Exec::reset_packet_in_place` and the end of that packet's processing, the caller's
    // packet, which outlives it.
    unsafe { std::slice::from_raw_parts(c.input, c.input_len as usize) }
}

/// How a statement list ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// The statement completed; run the next one.
    Next,
    /// A `return` (P4_16 §12.4): the enclosing action or function ends.
    Return,
    /// An `exit` (P4_16 §12.5): every enclosing control ends.
    Exit,
    /// A `break` (P4_16 §12.8): the innermost loop ends.
    Break,
    /// A `continue` (P4_16 §12.8): the innermost loop's next iteration.
    Continue,
    /// The parser rejected (the error is in `Exec::perr`); also used to abort a packet.
    Reject,
}

/// The table being applied (for `add_entry`, direct counters/meters, expiry externs).
/// Plain data of at most three words: generated code saves it before a table apply and
/// restores it after the action by copying the words (`nevermiss_jit::Ctx::tctx`).
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(8))]
pub(crate) struct TableCtx {
    table: u32,
    hit: Option<EntryHandle>,
    active: bool,
}

const _: () = assert!(std::mem::size_of::<TableCtx>() <= 24);

/// What one packet did to tables: a set of bit flags, ORed in as the packet runs (one `u8` OR per
/// table apply / insert / update) and cleared by [`crate::Worker::process`] before each packet.
/// Empty means no table was applied. Read with [`crate::Worker::last_ops`]; `nevermiss bench`
/// classifies per-packet latencies by it (papers/000 §VI: insert, lookup, update).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct TableOps(pub u8);

impl TableOps {
    /// No table was applied.
    pub const NONE: TableOps = TableOps(0);
    /// A lookup matched an entry.
    pub const HIT: TableOps = TableOps(1);
    /// A lookup matched no entry.
    pub const MISS: TableOps = TableOps(1 << 1);
    /// An add-on-miss insert (`add_entry`) added an entry.
    pub const INSERT: TableOps = TableOps(1 << 2);
    /// An add-on-miss insert failed because the table was full.
    pub const INSERT_FULL: TableOps = TableOps(1 << 3);
    /// An add-on-miss insert found the key already present (another worker added it first) or
    /// was rejected.
    pub const INSERT_OTHER: TableOps = TableOps(1 << 4);
    /// A hit action wrote its `@__ref` parameters back into the entry (in-place update).
    pub const UPDATE: TableOps = TableOps(1 << 5);

    /// Whether every flag of `other` is set.
    #[inline]
    pub fn contains(self, other: TableOps) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether no flag is set (no table was applied).
    #[inline]
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

impl std::ops::BitOr for TableOps {
    type Output = TableOps;
    #[inline]
    fn bitor(self, rhs: TableOps) -> TableOps {
        TableOps(self.0 | rhs.0)
    }
}

impl std::ops::BitOrAssign for TableOps {
    #[inline]
    fn bitor_assign(&mut self, rhs: TableOps) {
        self.0 |= rhs.0;
    }
}

/// Per-packet decisions of the architecture-level externs.
#[derive(Clone, Debug, Default)]
pub struct PktState {
    /// PNA: `send_to_port(p)` or `drop_packet()` (the default).
    pub dest: Dest,
    /// PNA: mirror requests (slot, session).
    pub mirrors: Vec<(u64, u64)>,
    /// PNA (old dialect): `recirculate()` was called.
    pub recirculate: bool,
    /// v1model: `resubmit` (field list index).
    pub resubmit: Option<u64>,
    /// v1model: `recirculate` (field list index).
    pub v1_recirculate: Option<u64>,
    /// v1model: `clone` (type, session, field list index).
    pub clone: Option<(u64, u64, u64)>,
    /// v1model: `truncate(bytes)`.
    pub truncate: Option<u64>,
}

/// PNA's destination of a packet: `send_to_port(p)` makes it `Some(p)`, `drop_packet()`
/// `None`; without a call it stays what `Exec::reset` made it (`Config::pna_default_port`). Two words, so that generated code stores it directly
/// (`nevermiss_jit::Ctx::dest`: `set` then `port`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Dest {
    /// 1 after `send_to_port`, 0 otherwise.
    pub set: u64,
    /// The port, meaningful only when `set` is 1.
    pub port: u64,
}

impl Dest {
    /// The port the packet goes to, `None` when it is dropped.
    pub fn get(&self) -> Option<u64> {
        (self.set != 0).then_some(self.port)
    }

    /// `Some(p)` as `send_to_port(p)` sets it, `None` as `drop_packet()` does.
    pub fn put(&mut self, p: Option<u64>) {
        *self = Dest {
            set: u64::from(p.is_some()),
            port: p.unwrap_or(0),
        };
    }
}

/// The per-worker interpreter state.
pub struct Exec {
    /// The frame (see `p4_ir::ir`).
    pub f: Vec<u64>,
    /// A copy of the packet being parsed, when it is not parsed where it lies
    /// ([`Exec::input`] is the packet either way).
    own: Vec<u8>,
    /// The per-packet registers generated code reads and writes in place (the parser's
    /// cursor, the parser error, the loop count, the architecture glue's values) and the
    /// pointers it works through (`nevermiss_jit::Ctx`). The interpreter uses the same
    /// registers, so both engines share one packet state.
    pub(crate) c: nevermiss_jit::Ctx,
    /// What `c.host` points at: this `Exec` and its switch, as of the last call into generated
    /// code (`Exec::run_native` sets `c`'s pointers into the `Exec` again when it moved).
    pub(crate) host: crate::engine::native::Host,
    /// The deparser's output.
    pub out: BitWriter,
    /// Time of the packet (ns), for tables with idle timeouts and meters.
    pub now_ns: u64,
    /// The architecture externs' decisions about the current packet (cleared per packet).
    pub ps: PktState,
    /// What the current packet did to tables (cleared per packet by the worker).
    pub ops: TableOps,
    pub(crate) key: Vec<u8>,
    /// Where generated code packs an `add_entry`'s parameters (`nevermiss_jit::Ctx::params`):
    /// as long as every action's parameters plus 8 bytes, never reallocated.
    pub(crate) abuf: Vec<u8>,
    lookup: Lookup,
    pbuf: Vec<u8>,
    /// A lookup's parameters padded for generated code ([`Exec::table_find`]).
    fbuf: Vec<u8>,
    vals: Vec<(u64, u32)>,
    data: BitWriter,
    pub(crate) tctx: TableCtx,
    /// The last action index `add_entry` looked up: (table, action function, index).
    add_ai: (TableId, FnId, u32),
    /// Table contexts of the applies in progress around the current one.
    tctx_stack: Vec<TableCtx>,
    rng: u64,
    /// `Some` while tracing (`nevermiss run --trace`): what the packet did, one line per
    /// parser state, table apply and `add_entry`. Off, it costs one branch per state and table.
    pub trace: Option<Vec<String>>,
    /// Statements, expressions and `select`s generated code left to the interpreter since the
    /// worker last moved them into `SwitchStats::fallbacks` (docs/jit.md, "Fallbacks").
    pub(crate) fallbacks: u64,
    /// A packet's destination before its main control runs (`Config::pna_default_port`).
    dest_default: Dest,
    /// A profiling build's clock readings (`Config::profile`; `None` in the plain build).
    pub(crate) profile: Option<Box<crate::engine::profile::Profile>>,
    /// With `Config::fallback_sites`: the fallbacks by site since the last move into
    /// `SwitchStats::fallback_sites`.
    pub(crate) sites: Option<Box<crate::engine::sites::SiteCounts>>,
}

// SAFETY: the raw pointers of `Exec::c` and `Exec::host` point into this `Exec`'s own heap
// buffers (frame, input, key and parameter buffers, which move with it), into the `Exec` itself
// (set again by `Exec::run_native` after it moved) or at the switch it runs for, which is
// `Sync`; nothing in them is shared with another thread.
unsafe impl Send for Exec {}

impl Exec {
    /// An interpreter for `sw`'s program.
    pub fn new(sw: &Switch, worker: u64) -> Exec {
        let extra = sw.plan().native().as_ref().map_or(0, |n| n.extra_words);
        let mut ex = Exec {
            f: vec![0; (sw.prog().frame_words + extra) as usize],
            own: Vec::with_capacity(2048),
            c: nevermiss_jit::Ctx::default(),
            host: crate::engine::native::Host::default(),
            out: BitWriter::default(),
            now_ns: 0,
            ps: PktState::default(),
            ops: TableOps::NONE,
            // Every table's key fits without growing, and so do the keys `pass_parse` stores
            // for the batch prefetch: generated code keeps a pointer into it while it runs
            // (`native.rs`). Zeroed, so that every byte of it is initialised.
            key: {
                let most = sw
                    .prog()
                    .tables
                    .iter()
                    .map(|t| t.keys.iter().map(|k| k.expr.ty().bytes()).sum::<usize>())
                    .max()
                    .unwrap_or(0);
                let room = sw
                    .plan()
                    .native()
                    .as_ref()
                    .map_or(0, |n| n.key_room as usize);
                let mut key = vec![0u8; most.max(room) + 64];
                key.clear();
                key
            },
            abuf: vec![
                0;
                sw.prog()
                    .tables
                    .iter()
                    .flat_map(|t| &t.actions)
                    .map(|a| a.params_bytes())
                    .max()
                    .unwrap_or(0)
                    + 8
            ],
            lookup: Lookup::default(),
            pbuf: Vec::with_capacity(64),
            fbuf: Vec::new(),
            vals: Vec::with_capacity(8),
            data: BitWriter::default(),
            tctx: TableCtx::default(),
            add_ai: (TableId::MAX, FnId::MAX, 0),
            tctx_stack: Vec::with_capacity(4),
            rng: sw.config().seed
                ^ worker.wrapping_mul(0x9e37_79b9_7f4a_7c15)
                ^ 0x2545_f491_4f6c_dd1d,
            trace: None,
            fallbacks: 0,
            dest_default: Dest::default(),
            profile: sw.config().profile.map(|clock| {
                Box::new(crate::engine::profile::Profile::new(
                    clock,
                    sw.prog().tables.len(),
                ))
            }),
            sites: sw.config().fallback_sites.then(Box::default),
        };
        ex.dest_default
            .put(sw.config().pna_default_port.map(u64::from));
        ex.c.frame = ex.f.as_mut_ptr();
        ex.c.key = ex.key.as_mut_ptr();
        ex.c.params = ex.abuf.as_mut_ptr();
        ex.c.input = ex.own.as_ptr();
        ex
    }

    /// The packet being parsed.
    #[inline]
    pub fn input(&self) -> &[u8] {
        input_of(&self.c)
    }

    /// Bits of the packet the parser consumed.
    #[inline]
    pub fn cursor(&self) -> usize {
        self.c.cursor as usize
    }

    /// The parser error code of the last reject (0: none).
    #[inline]
    pub fn parser_error(&self) -> u64 {
        self.c.perr
    }

    /// Prepares for a new packet: zeroes the per-packet state (headers invalid, metadata 0).
    pub fn reset(&mut self, sw: &Switch, data: &[u8]) {
        let z = (sw.prog().zero_words as usize).min(self.f.len());
        match sw.plan().native() {
            // Machine code runs the packet: only the words anything may read
            // (`Compiled::zero_ranges`); a traced packet runs in the interpreter, whose trace
            // shows the whole frame, so it gets all of it.
            Some(n) if self.trace.is_none() => {
                for &(lo, hi) in &n.zero_ranges {
                    let (lo, hi) = ((lo as usize).min(z), (hi as usize).min(z));
                    self.f[lo..hi].fill(0);
                }
            }
            _ => self.f[..z].fill(0),
        }
        // Generated code's words past the frame (`nevermiss_jit::Compiled::extra_words`).
        let past = (sw.prog().frame_words as usize).min(self.f.len());
        self.f[past..].fill(0);
        self.reset_packet(data);
    }

    /// [`Exec::reset`] but for the frame, which generated code zeroes itself
    /// (`nevermiss_jit::Compiled::pass_parse`).
    pub(crate) fn reset_packet(&mut self, data: &[u8]) {
        self.own.clear();
        self.own.extend_from_slice(data);
        // The buffer may have grown.
        self.c.input = self.own.as_ptr();
        self.c.input_len = self.own.len() as u64;
        self.reset_state();
    }

    /// [`Exec::reset_packet`] without copying the packet: it is parsed where it lies.
    ///
    /// # Safety
    /// `data` must stay alive and unchanged until this packet's processing ends (the next reset),
    /// and nothing may read [`Exec::input`] after that.
    pub(crate) unsafe fn reset_packet_in_place(&mut self, data: &[u8]) {
        self.c.input = data.as_ptr();
        self.c.input_len = data.len() as u64;
        self.reset_state();
    }

    /// The per-packet state but the input.
    #[inline]
    fn reset_state(&mut self) {
        self.c.cursor = 0;
        self.out.clear();
        self.c.perr = 0;
        // Field by field (the same as `PktState::default()` with `mirrors`' buffer kept).
        let dest_default = self.dest_default;
        let PktState {
            dest,
            mirrors,
            recirculate,
            resubmit,
            v1_recirculate,
            clone,
            truncate,
        } = &mut self.ps;
        *dest = dest_default;
        mirrors.clear();
        *recirculate = false;
        *resubmit = None;
        *v1_recirculate = None;
        *clone = None;
        *truncate = None;
        self.tctx = TableCtx::default();
        self.tctx_stack.clear();
        self.c.loops = 0;
    }

    #[inline]
    fn next_rand(&mut self) -> u64 {
        // xorshift64*
        let mut x = self.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    // ------------------------------------------------------------------ frame access

    #[inline(always)]
    fn ld(&self, off: usize) -> u64 {
        match self.f.get(off) {
            Some(v) => *v,
            None => 0,
        }
    }

    #[inline(always)]
    fn st(&mut self, off: usize, v: u64) {
        if let Some(x) = self.f.get_mut(off) {
            *x = v;
        }
    }

    /// The word offset of a location, `None` when an index is out of bounds.
    #[inline]
    pub fn addr(&self, l: &Loc) -> Option<usize> {
        let mut a = l.off as usize;
        for d in &l.dyn_idx {
            let i = self.eval_index(&d.index);
            if i >= u64::from(d.count) {
                return None;
            }
            a += i as usize * d.stride as usize;
        }
        Some(a)
    }

    fn eval_index(&self, e: &Expr) -> u64 {
        if e.ty().is_wide() {
            let b = self.eval_big(e);
            u64::try_from(&b).unwrap_or(u64::MAX)
        } else {
            self.eval(e)
        }
    }

    fn load_big(&self, a: usize, t: Ty) -> BigUint {
        let n = t.words() as usize;
        match self.f.get(a..a + n) {
            Some(ws) => ops::mask_big(&ops::words_to_big(ws), t.width),
            None => BigUint::default(),
        }
    }

    fn store_big(&mut self, a: usize, t: Ty, v: &BigUint) {
        let n = t.words() as usize;
        let v = ops::mask_big(v, t.width);
        if let Some(ws) = self.f.get_mut(a..a + n) {
            ops::big_to_words(&v, ws);
        }
    }

    // ------------------------------------------------------------------ expressions

    /// Evaluates an expression of width ≤ 64.
    pub fn eval(&self, e: &Expr) -> u64 {
        match e {
            Expr::Const(v, _) => *v,
            Expr::Load(o, _) => self.ld(*o as usize),
            Expr::Cmp(op, t, a, b) => {
                if t.is_wide() {
                    u64::from(ops::cmp_big(*op, *t, &self.eval_big(a), &self.eval_big(b)))
                } else {
                    u64::from(ops::cmp(*op, *t, self.eval(a), self.eval(b)))
                }
            }
            Expr::And(a, b) => u64::from(self.eval(a) != 0 && self.eval(b) != 0),
            Expr::Or(a, b) => u64::from(self.eval(a) != 0 || self.eval(b) != 0),
            Expr::Bin(op, t, a, b) => {
                if t.is_wide() {
                    return self.eval_big(e).iter_u64_digits().next().unwrap_or(0);
                }
                let bv = if b.ty().is_wide() {
                    u64::try_from(&self.eval_big(b)).unwrap_or(u64::MAX)
                } else {
                    self.eval(b)
                };
                ops::bin(*op, *t, self.eval(a), bv)
            }
            Expr::Un(op, t, a) => {
                if t.is_wide() {
                    ops::un_big(*op, *t, &self.eval_big(a))
                        .iter_u64_digits()
                        .next()
                        .unwrap_or(0)
                } else {
                    ops::un(*op, *t, self.eval(a))
                }
            }
            Expr::Mux(c, a, b, _) => {
                if self.eval(c) != 0 {
                    self.eval(a)
                } else {
                    self.eval(b)
                }
            }
            Expr::Cast(to, from, a) => {
                if from.is_wide() {
                    ops::cast_big(*to, *from, &self.eval_big(a))
                        .iter_u64_digits()
                        .next()
                        .unwrap_or(0)
                } else {
                    ops::cast(*to, *from, self.eval(a))
                }
            }
            Expr::Slice(a, at, hi, lo) => {
                if at.is_wide() {
                    ops::slice_big(&self.eval_big(a), *hi, *lo)
                        .iter_u64_digits()
                        .next()
                        .unwrap_or(0)
                } else {
                    ops::slice(self.eval(a), *hi, *lo)
                }
            }
            Expr::Concat(a, b, t, bw) => {
                if t.is_wide() || *bw >= 64 {
                    return self.eval_big(e).iter_u64_digits().next().unwrap_or(0);
                }
                ((self.eval(a) << bw) | self.eval(b)) & mask(t.width)
            }
            Expr::LoadDyn(l, _) => match self.addr(l) {
                Some(a) => self.ld(a),
                None => 0,
            },
            Expr::Big(b, _) => b.iter_u64_digits().next().unwrap_or(0),
        }
    }

    /// Evaluates an expression of any width.
    pub fn eval_big(&self, e: &Expr) -> BigUint {
        match e {
            Expr::Const(v, _) => BigUint::from(*v),
            Expr::Big(b, _) => (**b).clone(),
            Expr::Load(o, t) => {
                if t.is_wide() {
                    self.load_big(*o as usize, *t)
                } else {
                    BigUint::from(self.ld(*o as usize))
                }
            }
            Expr::LoadDyn(l, t) => match self.addr(l) {
                Some(a) if t.is_wide() => self.load_big(a, *t),
                Some(a) => BigUint::from(self.ld(a)),
                None => BigUint::default(),
            },
            Expr::Un(op, t, a) => ops::un_big(*op, *t, &self.eval_big(a)),
            Expr::Bin(op, t, a, b) => ops::bin_big(*op, *t, &self.eval_big(a), &self.eval_big(b)),
            Expr::Cmp(..) | Expr::And(..) | Expr::Or(..) => BigUint::from(self.eval(e)),
            Expr::Mux(c, a, b, _) => {
                if self.eval(c) != 0 {
                    self.eval_big(a)
                } else {
                    self.eval_big(b)
                }
            }
            Expr::Cast(to, from, a) => ops::cast_big(*to, *from, &self.eval_big(a)),
            Expr::Slice(a, _, hi, lo) => ops::slice_big(&self.eval_big(a), *hi, *lo),
            Expr::Concat(a, b, t, bw) => {
                ops::mask_big(&((self.eval_big(a) << *bw) | self.eval_big(b)), t.width)
            }
        }
    }

    /// Stores the value of `e` at `a` as type `t`.
    #[inline]
    fn store_expr(&mut self, a: usize, t: Ty, e: &Expr) {
        if t.is_wide() {
            let v = self.eval_big(e);
            self.store_big(a, t, &v);
        } else {
            let v = self.eval(e) & mask(t.width);
            self.st(a, v);
        }
    }

    // ------------------------------------------------------------------ statements

    /// Runs a statement list.
    pub fn exec(&mut self, sw: &Switch, ss: &[Stmt]) -> Flow {
        for s in ss {
            let f = self.stmt(sw, s);
            if f != Flow::Next {
                return f;
            }
        }
        Flow::Next
    }

    /// Runs a function body with copy-in / copy-out.
    pub fn call(&mut self, sw: &Switch, func: FnId, copy_in: &[Stmt], copy_out: &[Stmt]) -> Flow {
        let f = self.exec(sw, copy_in);
        if f != Flow::Next {
            return f;
        }
        let Some(fun) = sw.prog().functions.get(func as usize) else {
            return Flow::Next;
        };
        let r = match sw.plan().native().as_ref().and_then(|n| n.function(func)) {
            // A traced packet runs in the interpreter, which writes the trace.
            Some(f) if self.trace.is_none() => {
                crate::engine::native::to_flow(self.run_native(sw, f))
            }
            _ => self.exec(sw, &fun.body),
        };
        match r {
            Flow::Reject => Flow::Reject,
            Flow::Exit => {
                let _ = self.exec(sw, copy_out);
                Flow::Exit
            }
            _ => self.exec(sw, copy_out),
        }
    }

    pub(crate) fn stmt(&mut self, sw: &Switch, s: &Stmt) -> Flow {
        match s {
            Stmt::Assign(l, t, e) => {
                if l.dyn_idx.is_empty() {
                    self.store_expr(l.off as usize, *t, e);
                } else if let Some(a) = self.addr(l) {
                    self.store_expr(a, *t, e);
                }
                Flow::Next
            }
            Stmt::If(c, a, b) => {
                if self.eval(c) != 0 {
                    self.exec(sw, a)
                } else {
                    self.exec(sw, b)
                }
            }
            Stmt::ApplyTable {
                table,
                hit,
                action_run,
            } => self.apply_table(sw, *table, *hit, *action_run),
            Stmt::Extern(x) => self.extern_call(sw, x),
            Stmt::Call {
                func,
                copy_in,
                copy_out,
            } => match self.call(sw, *func, copy_in, copy_out) {
                Flow::Return | Flow::Next => Flow::Next,
                f => f,
            },
            Stmt::Copy { dst, src, words } => self.copy(dst, src, words),
            Stmt::Zero { dst, words } => self.zero(dst, words),
            Stmt::AssignSlice(l, t, hi, lo, e) => self.assign_slice(l, t, hi, lo, e),
            Stmt::SetValid { hdr, valid, others } => self.set_valid(hdr, valid, others),
            Stmt::Switch {
                sel,
                cases,
                bodies,
                default,
            } => self.switch(sw, sel, cases, bodies, default),
            Stmt::Loop { cond, body, update } => self.run_loop(sw, cond, body, update),
            Stmt::Break => Flow::Break,
            Stmt::Continue => Flow::Continue,
            Stmt::Return => Flow::Return,
            Stmt::Exit => Flow::Exit,
            Stmt::CallParser {
                parser,
                copy_in,
                copy_out,
            } => self.call_parser(sw, parser, copy_in, copy_out),
            Stmt::Extract { hdr, varbit_bits } => {
                let Some(a) = self.addr(&hdr.loc) else {
                    self.c.perr = STACK_OUT_OF_BOUNDS;
                    return Flow::Reject;
                };
                let vb = varbit_bits.as_ref().map(|e| self.eval_index(e));
                self.extract(sw, a, hdr.layout, vb)
            }
            Stmt::ExtractNext {
                stack,
                member,
                varbit_bits,
            } => self.extract_next(sw, stack, member, varbit_bits),
            Stmt::Lookahead { dst, layout } => self.lookahead(sw, dst, layout),
            Stmt::Advance(e) => self.advance(e),
            Stmt::Verify(c, e) => {
                if self.eval(c) == 0 {
                    self.c.perr = self.eval(e);
                    return Flow::Reject;
                }
                Flow::Next
            }
            Stmt::Emit(h) => {
                if let Some(a) = self.addr(&h.loc) {
                    if self.ld(a) != 0 {
                        self.emit(sw, a, h.layout);
                    }
                }
                Flow::Next
            }
            Stmt::Shift { stack, by } => {
                self.shift_stack(sw, stack, *by);
                Flow::Next
            }
        }
    }

    /// A copy of `words` frame words.
    #[inline(always)]
    fn copy(&mut self, dst: &Loc, src: &Loc, words: &u32) -> Flow {
        if let (Some(d), Some(s)) = (self.addr(dst), self.addr(src)) {
            let n = *words as usize;
            if d + n <= self.f.len() && s + n <= self.f.len() {
                self.f.copy_within(s..s + n, d);
            }
        }
        Flow::Next
    }

    /// `words` frame words set to 0.
    #[inline(always)]
    fn zero(&mut self, dst: &Loc, words: &u32) -> Flow {
        if let Some(d) = self.addr(dst) {
            let n = *words as usize;
            if let Some(ws) = self.f.get_mut(d..d + n) {
                ws.fill(0);
            }
        }
        Flow::Next
    }

    /// `x[hi:lo] = e`: the bits `hi..=lo` of `l` replaced.
    #[inline(always)]
    fn assign_slice(&mut self, l: &Loc, t: &Ty, hi: &u32, lo: &u32, e: &Expr) -> Flow {
        let Some(a) = self.addr(l) else {
            return Flow::Next;
        };
        let w = hi - lo + 1;
        if t.is_wide() {
            let cur = self.load_big(a, *t);
            let v = ops::mask_big(&self.eval_big(e), w);
            let m = ((BigUint::from(1u8) << w) - 1u8) << *lo;
            let all = (BigUint::from(1u8) << t.width) - 1u8;
            let nv = (cur & (all ^ m)) | (v << *lo);
            self.store_big(a, *t, &nv);
        } else {
            let cur = self.ld(a);
            let v = self.eval(e) & mask(w);
            let m = mask(w) << lo;
            self.st(a, ((cur & !m) | (v << lo)) & mask(t.width));
        }
        Flow::Next
    }

    /// `setValid`/`setInvalid` of a header (a union member made valid invalidates the others).
    #[inline(always)]
    fn set_valid(&mut self, hdr: &Loc, valid: &bool, others: &[i32]) -> Flow {
        if let Some(a) = self.addr(hdr) {
            self.st(a, u64::from(*valid));
            if *valid {
                for o in others {
                    let x = a as i64 + i64::from(*o);
                    if x >= 0 {
                        self.st(x as usize, 0);
                    }
                }
            }
        }
        Flow::Next
    }

    /// A `switch` on a value: the body of the first case that lists it, else the default.
    #[inline(always)]
    fn switch(
        &mut self,
        sw: &Switch,
        sel: &Expr,
        cases: &[(Vec<u64>, usize)],
        bodies: &[Vec<Stmt>],
        default: &Option<usize>,
    ) -> Flow {
        let v = self.eval(sel);
        let mut which = *default;
        for (labels, b) in cases {
            if labels.contains(&v) {
                which = Some(*b);
                break;
            }
        }
        match which.and_then(|b| bodies.get(b)) {
            Some(body) => self.exec(sw, body),
            None => Flow::Next,
        }
    }

    /// A loop (`for`): at most `Config::loop_limit` iterations per packet in all.
    #[inline(always)]
    fn run_loop(&mut self, sw: &Switch, cond: &Expr, body: &[Stmt], update: &[Stmt]) -> Flow {
        loop {
            if self.eval(cond) == 0 {
                return Flow::Next;
            }
            self.c.loops += 1;
            if self.c.loops > sw.config().loop_limit {
                sw.stats().loop_limit_hits.fetch_add(1, Relaxed);
                self.c.perr = PARSER_TIMEOUT;
                return Flow::Reject;
            }
            match self.exec(sw, body) {
                Flow::Next | Flow::Continue => {}
                Flow::Break => return Flow::Next,
                f => return f,
            }
            match self.exec(sw, update) {
                Flow::Next => {}
                f => return f,
            }
        }
    }

    /// A sub-parser call: copy in, run, copy out (also after a reject).
    #[inline(always)]
    fn call_parser(
        &mut self,
        sw: &Switch,
        parser: &ParserId,
        copy_in: &[Stmt],
        copy_out: &[Stmt],
    ) -> Flow {
        let f = self.exec(sw, copy_in);
        if f != Flow::Next {
            return f;
        }
        // A rejecting sub-parser still copies out: what it extracted stays valid in
        // the caller, as in BMv2 (p4c inlines sub-parsers, so their writes land in the
        // caller's headers directly; issue1470-bmv2).
        let accepted = self.run_parser(sw, *parser);
        let f = self.exec(sw, copy_out);
        if !accepted {
            return Flow::Reject;
        }
        f
    }

    /// `extract` into a stack's next element (`.next`), a union member included.
    #[inline(always)]
    fn extract_next(
        &mut self,
        sw: &Switch,
        stack: &StackRef,
        member: &Option<u32>,
        varbit_bits: &Option<Expr>,
    ) -> Flow {
        let Some(a) = self.addr(&stack.loc) else {
            self.c.perr = STACK_OUT_OF_BOUNDS;
            return Flow::Reject;
        };
        let next = self.ld(a);
        if next >= u64::from(stack.size) {
            self.c.perr = STACK_OUT_OF_BOUNDS;
            return Flow::Reject;
        }
        let ea = a + 1 + next as usize * stack.elem_words as usize;
        let (ha, h) = match (&stack.elem, member) {
            (StackElem::Header(h), None) => (ea, *h),
            (StackElem::Union(ms), Some(m)) => match ms.get(*m as usize) {
                Some((o, h)) => (ea + *o as usize, *h),
                None => return Flow::Next,
            },
            _ => {
                self.c.perr = STACK_OUT_OF_BOUNDS;
                return Flow::Reject;
            }
        };
        let vb = varbit_bits.as_ref().map(|e| self.eval_index(e));
        let f = self.extract(sw, ha, h, vb);
        if f == Flow::Next {
            if let StackElem::Union(ms) = &stack.elem {
                for (k, (o, _)) in ms.iter().enumerate() {
                    if Some(k as u32) != *member {
                        self.st(ea + *o as usize, 0);
                    }
                }
            }
            self.st(a, next + 1);
        }
        f
    }

    /// `lookahead`: the bits at the cursor read into `dst` without moving it.
    #[inline(always)]
    fn lookahead(&mut self, sw: &Switch, dst: &Loc, layout: &Layout) -> Flow {
        let Some(a) = self.addr(dst) else {
            return Flow::Next;
        };
        let bits = layout.bits(&sw.prog().headers);
        if self.c.cursor + bits > 8 * self.input().len() as u64 {
            self.c.perr = PACKET_TOO_SHORT;
            return Flow::Reject;
        }
        let mut pos = self.cursor();
        self.read_layout(sw, a, layout, &mut pos);
        Flow::Next
    }

    /// `advance`: the cursor moved by `e` bits, if the packet has them.
    #[inline(always)]
    fn advance(&mut self, e: &Expr) -> Flow {
        let n = self.eval_index(e);
        let end = self.c.cursor.saturating_add(n);
        if end > 8 * self.input().len() as u64 {
            self.c.perr = PACKET_TOO_SHORT;
            return Flow::Reject;
        }
        self.c.cursor = end;
        Flow::Next
    }

    // ------------------------------------------------------------------ parsing

    /// Runs a parser; false when it rejected (error code in `perr`). Tracing, the headers
    /// valid when it ends follow its states ([`Exec::trace_headers`]).
    pub fn run_parser(&mut self, sw: &Switch, pid: ParserId) -> bool {
        let accepted = self.run_parser_states(sw, pid);
        if self.trace.is_some() {
            self.trace_headers(sw, BlockBody::Parser(pid), "after parser");
        }
        accepted
    }

    /// With `--trace`: one line `WHAT BLOCK: headers valid: hdr.a, hdr.b; invalid: hdr.c` listing the
    /// headers (stack elements as `name[i]`, union members as `name.member`) of the parameters
    /// of the block that runs `body`, by their validity bit (P4_16 §8.17 `isValid()`), as
    /// simple_switch's log shows which headers were extracted and which are deparsed. Nothing
    /// when not tracing, or when `body` is no block of the package (a sub-parser).
    pub fn trace_headers(&mut self, sw: &Switch, body: BlockBody, what: &str) {
        if self.trace.is_none() {
            return;
        }
        let Some(block) = sw.prog().blocks.iter().find(|b| b.body == body) else {
            return;
        };
        let mut all: Vec<(String, u32)> = Vec::new();
        for p in &block.params {
            if let (Some(region), Some(layout)) = (p.region, p.layout.as_ref()) {
                header_slots(layout, region, &p.name, &mut all);
            }
        }
        if all.is_empty() {
            return;
        }
        let (valid, invalid): (Vec<_>, Vec<_>) = all
            .into_iter()
            .partition(|(_, a)| self.ld(*a as usize) != 0);
        let names = |v: Vec<(String, u32)>| {
            if v.is_empty() {
                "none".to_string()
            } else {
                v.into_iter().map(|(n, _)| n).collect::<Vec<_>>().join(", ")
            }
        };
        let line = format!(
            "{what} {}: headers valid: {}; invalid: {}",
            block.name,
            names(valid),
            names(invalid)
        );
        if let Some(t) = self.trace.as_mut() {
            t.push(line);
        }
    }

    fn run_parser_states(&mut self, sw: &Switch, pid: ParserId) -> bool {
        let Some(p) = sw.prog().parsers.get(pid as usize) else {
            return true;
        };
        if let Some(f) = sw.plan().native().as_ref().and_then(|n| n.parser(pid)) {
            if self.trace.is_none() {
                return self.run_native(sw, f) != 0;
            }
        }
        if self.exec(sw, &p.init) == Flow::Reject {
            return false;
        }
        let mut st = p.start as usize;
        let mut steps = 0u32;
        loop {
            steps += 1;
            if steps > sw.config().parser_steps {
                self.c.perr = PARSER_TIMEOUT;
                return false;
            }
            let Some(s) = p.states.get(st) else {
                return true;
            };
            if let Some(t) = self.trace.as_mut() {
                t.push(format!("parser {}: state {}", p.name, s.name));
            }
            match self.exec(sw, &s.body) {
                Flow::Reject => return false,
                Flow::Exit => return true,
                _ => {}
            }
            let target = match &s.next {
                Transition::Go(t) => *t,
                Transition::Select { keys, cases } => match self.select(sw, keys, cases) {
                    Some(t) => t,
                    None => {
                        self.c.perr = NO_MATCH;
                        return false;
                    }
                },
            };
            match target {
                Target::Accept => {
                    if let Some(t) = self.trace.as_mut() {
                        t.push(format!("parser {}: accept", p.name));
                    }
                    return true;
                }
                Target::Reject => {
                    if let Some(t) = self.trace.as_mut() {
                        t.push(format!("parser {}: reject", p.name));
                    }
                    return false;
                }
                Target::State(i) => st = i as usize,
            }
        }
    }

    pub(crate) fn select(
        &mut self,
        sw: &Switch,
        keys: &[Expr],
        cases: &[SelectCase],
    ) -> Option<Target> {
        let mut kv = [0u64; 8];
        let narrow = keys.len() <= 8 && keys.iter().all(|k| !k.ty().is_wide());
        if narrow {
            for (i, k) in keys.iter().enumerate() {
                kv[i] = self.eval(k);
            }
            for c in cases {
                if c.keysets.len() == 1 && keys.len() > 1 {
                    // A value set matching all keys jointly.
                    if let KeySet::Set(id) = &c.keysets[0] {
                        if self.in_value_set(sw, *id, &kv[..keys.len()]) {
                            return Some(c.next);
                        }
                        continue;
                    }
                }
                let ok = c.keysets.iter().enumerate().all(|(i, ks)| {
                    let t = keys.get(i).map_or(Ty::bits(64), |k| k.ty());
                    match ks {
                        KeySet::Any => true,
                        KeySet::Value(v) => kv[i] == v.low() & mask(t.width),
                        KeySet::Mask(v, m) => kv[i] & m.low() == v.low() & m.low(),
                        KeySet::Range(lo, hi) => {
                            let (lo, hi) = (lo.low() & mask(t.width), hi.low() & mask(t.width));
                            ops::cmp(CmpOp::Ge, t, kv[i], lo) && ops::cmp(CmpOp::Le, t, kv[i], hi)
                        }
                        KeySet::Set(id) => self.in_value_set(sw, *id, &kv[i..=i]),
                    }
                });
                if ok {
                    return Some(c.next);
                }
            }
            return None;
        }
        let kb: Vec<BigUint> = keys.iter().map(|k| self.eval_big(k)).collect();
        for c in cases {
            let ok = c.keysets.iter().enumerate().all(|(i, ks)| {
                let Some(k) = kb.get(i) else { return true };
                let t = keys[i].ty();
                match ks {
                    KeySet::Any => true,
                    KeySet::Value(v) => *k == ops::mask_big(&v.to_big(), t.width),
                    KeySet::Mask(v, m) => {
                        let m = m.to_big();
                        (k & &m) == (v.to_big() & &m)
                    }
                    KeySet::Range(lo, hi) => {
                        ops::cmp_big(CmpOp::Ge, t, k, &lo.to_big())
                            && ops::cmp_big(CmpOp::Le, t, k, &hi.to_big())
                    }
                    KeySet::Set(_) => false,
                }
            });
            if ok {
                return Some(c.next);
            }
        }
        None
    }

    fn in_value_set(&self, sw: &Switch, id: ValueSetId, keys: &[u64]) -> bool {
        let Some(vs) = sw.value_set(id) else {
            return false;
        };
        let members = vs.read().unwrap_or_else(PoisonError::into_inner);
        members.iter().any(|m| {
            m.len() == keys.len() && m.iter().zip(keys).all(|((v, msk), k)| k & msk == v & msk)
        })
    }

    /// Extracts header `h` at frame offset `a` from the packet (P4_16 §12.8.2).
    fn extract(&mut self, sw: &Switch, a: usize, h: HeaderId, varbit: Option<u64>) -> Flow {
        if let Some(fh) = sw.plan().fast_header(h) {
            if let Some(f) = self.extract_fast(fh, a) {
                return f;
            }
        }
        let Some(hl) = sw.prog().headers.get(h as usize) else {
            return Flow::Next;
        };
        let vmax = hl.fields.iter().find_map(|f| f.varbit);
        let vbits = match (varbit, vmax) {
            (Some(n), Some(m)) => {
                if n > u64::from(m) {
                    self.c.perr = HEADER_TOO_SHORT;
                    return Flow::Reject;
                }
                if n % 8 != 0 {
                    self.c.perr = PARSER_INVALID_ARGUMENT;
                    return Flow::Reject;
                }
                n
            }
            _ => 0,
        };
        let total = hl.fixed_bits + vbits;
        if self.c.cursor + total > 8 * self.input().len() as u64 {
            self.c.perr = PACKET_TOO_SHORT;
            return Flow::Reject;
        }
        let mut pos = self.cursor();
        for fl in &hl.fields {
            let fa = a + fl.off as usize;
            if fl.varbit.is_some() {
                self.st(fa, vbits);
                let n = fl.ty.words() as usize;
                let w = vbits as u32;
                let input = input_of(&self.c);
                if let Some(ws) = self.f.get_mut(fa + 1..fa + 1 + n) {
                    ws.fill(0);
                    let used = w.div_ceil(64).max(1) as usize;
                    read_wide(input, pos, w, &mut ws[..used.min(n)]);
                }
                pos += vbits as usize;
            } else if fl.ty.width <= 64 {
                let v = read_bits(self.input(), pos, fl.ty.width);
                self.st(fa, v);
                pos += fl.ty.width as usize;
            } else {
                let n = fl.ty.words() as usize;
                let input = input_of(&self.c);
                if let Some(ws) = self.f.get_mut(fa..fa + n) {
                    read_wide(input, pos, fl.ty.width, ws);
                }
                pos += fl.ty.width as usize;
            }
        }
        self.st(a, 1);
        self.c.cursor = pos as u64;
        Flow::Next
    }

    /// `extract` of a header with a [`FastHeader`] layout at a byte-aligned cursor: each field
    /// is one 8-byte (or, when it straddles, 16-byte) big-endian load and two shifts. `None`
    /// when the slow path must decide (unaligned cursor, the header runs past the end of the
    /// packet or too close to it for a whole window, or the frame is short).
    #[inline]
    fn extract_fast(&mut self, fh: &FastHeader, a: usize) -> Option<Flow> {
        if !self.c.cursor.is_multiple_of(8) {
            return None;
        }
        let start = self.cursor() / 8;
        let win = input_of(&self.c).get(start..start + fh.bytes + 16)?;
        let dst = self.f.get_mut(a..a + fh.words)?;
        for fl in fh.fields.iter() {
            let i = (fl.bit / 8) as usize;
            let lsh = fl.bit % 8;
            let v = if lsh + fl.width <= 64 {
                let x = u64::from_be_bytes(win[i..i + 8].try_into().ok()?);
                (x << lsh) >> (64 - fl.width)
            } else {
                let x = u128::from_be_bytes(win[i..i + 16].try_into().ok()?);
                ((x << lsh) >> (128 - fl.width)) as u64
            };
            dst[fl.off as usize] = v;
        }
        dst[0] = 1;
        self.c.cursor += (fh.bytes * 8) as u64;
        Some(Flow::Next)
    }

    /// `emit` of a header with a [`FastHeader`] layout: the fields are packed into a stack
    /// buffer through a 128-bit accumulator and the header's bytes appended at once.
    #[inline]
    fn emit_fast(&mut self, fh: &FastHeader, a: usize) -> bool {
        let Some(src) = self.f.get(a..a + fh.words) else {
            return false;
        };
        let mut buf = [0u8; FAST_HEADER_MAX_BYTES + 8];
        let mut acc: u128 = 0;
        let mut n = 0u32;
        let mut o = 0usize;
        for fl in fh.fields.iter() {
            let w = fl.width;
            acc = (acc << w) | u128::from(src[fl.off as usize] & mask(w));
            n += w;
            if n >= 64 {
                n -= 64;
                let word = (acc >> n) as u64;
                if let Some(d) = buf.get_mut(o..o + 8) {
                    d.copy_from_slice(&word.to_be_bytes());
                }
                o += 8;
                acc &= (1u128 << n) - 1;
            }
        }
        if n > 0 {
            let word = (acc << (64 - n)) as u64;
            if let Some(d) = buf.get_mut(o..o + 8) {
                d.copy_from_slice(&word.to_be_bytes());
            }
        }
        self.out.put_bytes(&buf[..fh.bytes]);
        true
    }

    /// Reads a value of `layout` at bit `pos` of the packet into frame offset `a` (lookahead).
    fn read_layout(&mut self, sw: &Switch, a: usize, layout: &Layout, pos: &mut usize) {
        match layout {
            Layout::Scalar(t) => {
                if t.width <= 64 {
                    let v = read_bits(self.input(), *pos, t.width);
                    self.st(a, v);
                } else {
                    let n = t.words() as usize;
                    let input = input_of(&self.c);
                    if let Some(ws) = self.f.get_mut(a..a + n) {
                        read_wide(input, *pos, t.width, ws);
                    }
                }
                *pos += t.width as usize;
            }
            Layout::Header(h) => {
                if let Some(hl) = sw.prog().headers.get(*h as usize) {
                    for fl in &hl.fields {
                        if fl.varbit.is_some() {
                            continue;
                        }
                        self.read_layout(sw, a + fl.off as usize, &Layout::Scalar(fl.ty), pos);
                    }
                }
                self.st(a, 1);
            }
            Layout::Struct(fs) => {
                for (_, o, l) in fs {
                    self.read_layout(sw, a + *o as usize, l, pos);
                }
            }
            Layout::Stack {
                elem,
                size,
                elem_words,
            } => {
                // Every element is read (a header element made valid); `nextIndex` is 0.
                self.st(a, 0);
                for i in 0..*size as usize {
                    self.read_layout(sw, a + 1 + i * *elem_words as usize, elem, pos);
                }
            }
            Layout::Varbit(_) | Layout::Union(_) => {}
        }
    }

    /// Appends the fields of the (valid) header at `a` to the output.
    fn emit(&mut self, sw: &Switch, a: usize, h: HeaderId) {
        if let Some(fh) = sw.plan().fast_header(h) {
            if self.emit_fast(fh, a) {
                return;
            }
        }
        let Some(hl) = sw.prog().headers.get(h as usize) else {
            return;
        };
        for fl in &hl.fields {
            let fa = a + fl.off as usize;
            if fl.varbit.is_some() {
                let len = self.ld(fa).min(u64::from(fl.ty.width)) as u32;
                let n = fl.ty.words() as usize;
                if let Some(ws) = self.f.get(fa + 1..fa + 1 + n) {
                    let used = len.div_ceil(64).max(1) as usize;
                    if len > 0 {
                        self.out.put_wide(&ws[..used.min(n)], len);
                    }
                }
            } else if fl.ty.width <= 64 {
                let v = self.ld(fa);
                self.out.put(v, fl.ty.width);
            } else {
                let n = fl.ty.words() as usize;
                if let Some(ws) = self.f.get(fa..fa + n) {
                    self.out.put_wide(ws, fl.ty.width);
                }
            }
        }
    }

    fn shift_stack(&mut self, _sw: &Switch, s: &StackRef, by: i64) {
        let Some(a) = self.addr(&s.loc) else { return };
        let size = s.size as usize;
        let ew = s.elem_words as usize;
        let base = a + 1;
        if base + size * ew > self.f.len() {
            return;
        }
        let n = by.unsigned_abs() as usize;
        let next = self.ld(a);
        let invalidate = |f: &mut Vec<u64>, i: usize| {
            let ea = base + i * ew;
            match &s.elem {
                StackElem::Header(_) => f[ea] = 0,
                StackElem::Union(ms) => {
                    for (o, _) in ms {
                        f[ea + *o as usize] = 0;
                    }
                }
                StackElem::Other => f[ea..ea + ew].fill(0),
            }
        };
        // As BMv2 shifts (`StackP4_16`): element swaps, so the elements made invalid hold the
        // values shifted out (visible to a program that reads an invalid header's fields).
        let swap = |f: &mut Vec<u64>, i: usize, j: usize| {
            for w in 0..ew {
                f.swap(base + i * ew + w, base + j * ew + w);
            }
        };
        let gone = n.min(size);
        if by > 0 {
            for i in (n..size).rev() {
                swap(&mut self.f, i, i - n);
            }
            for i in 0..gone {
                invalidate(&mut self.f, i);
            }
            self.st(a, (next + n as u64).min(size as u64));
        } else {
            for i in 0..size.saturating_sub(n) {
                swap(&mut self.f, i, i + n);
            }
            for i in size - gone..size {
                invalidate(&mut self.f, i);
            }
            self.st(a, next.saturating_sub(n as u64));
        }
    }

    /// The hash an action selector picks a group's member with: CRC-32 of the table's
    /// `selector` key fields, each as its big-endian bytes.
    fn selector_hash(&mut self, td: &p4_ir::ir::Table) -> u64 {
        let mut bytes = Vec::new();
        for k in &td.keys {
            if k.kind != MatchKind::Selector {
                continue;
            }
            let t = k.expr.ty();
            if t.is_wide() {
                bytes.extend(self.eval_big(&k.expr).to_bytes_be());
            } else {
                bytes.extend(self.eval(&k.expr).to_be_bytes());
            }
        }
        u64::from(crate::state::crc32(&bytes))
    }

    /// Evaluates a table's key expressions into `self.key` (`key_pre` must have run).
    #[inline]
    fn build_key(&mut self, sw: &Switch, tid: TableId, td: &p4_ir::ir::Table) {
        if let Some(f) = sw.plan().native().as_ref().and_then(|n| n.table_key(tid)) {
            self.key.clear();
            let len = self.run_native(sw, f) as usize;
            // SAFETY: `Exec::new` gave the buffer room for every table's key plus 64 bytes (the
            // key function's 8-byte stores fit); the function wrote `len` bytes at its start.
            unsafe { self.key.set_len(len.min(self.key.capacity())) };
            return;
        }
        self.build_key_interp(td);
    }

    /// The key in `self.key` as `{field=0x.., ...}`, for the trace.
    fn trace_key(&self, td: &p4_ir::ir::Table) -> String {
        let mut at = 0;
        let fields: Vec<String> = td
            .keys
            .iter()
            .filter(|k| k.kind != MatchKind::Selector)
            .map(|k| {
                let n = k.expr.ty().bytes();
                let b = self.key.get(at..at + n).unwrap_or(&[]);
                at += n;
                let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
                format!("{}=0x{hex}", k.name)
            })
            .collect();
        format!("{{{}}}", fields.join(", "))
    }

    /// [`Exec::build_key`] by the interpreter (no key function: the interpreter engine, or a
    /// field wider than 64 bits).
    #[inline(never)]
    fn build_key_interp(&mut self, td: &p4_ir::ir::Table) {
        self.key.clear();
        for k in &td.keys {
            if k.kind == MatchKind::Selector {
                continue;
            }
            let t = k.expr.ty();
            if t.is_wide() {
                let v = self.eval_big(&k.expr);
                let n = t.bytes();
                let b = v.to_bytes_be();
                let start = self.key.len();
                self.key.resize(start + n, 0);
                let m = b.len().min(n);
                if !(b.len() == 1 && b[0] == 0) {
                    self.key[start + n - m..].copy_from_slice(&b[b.len() - m..]);
                }
            } else {
                let v = self.eval(&k.expr);
                put_be(&mut self.key, v, t.width);
            }
        }
    }

    /// [`Exec::prefetch_table`] of table `tid` whose key generated `pass_parse` stored at byte
    /// `off` past the key buffer, `len` bytes (`Switch::prefetch_keys`).
    #[inline]
    pub(crate) fn prefetch_stored(
        &self,
        sw: &Switch,
        tid: TableId,
        off: u32,
        len: u32,
    ) -> Option<nevermiss_tables::Prefetch> {
        let rt = sw.rt_tables().get(tid as usize)?;
        let (off, len) = (off as usize, len as usize);
        if off + len > self.key.capacity() {
            return None;
        }
        // SAFETY: the key buffer's capacity (initialised by `Exec::new`, never reallocated)
        // holds `off + len` bytes, which generated code wrote or left as they were.
        let key = unsafe { std::slice::from_raw_parts(self.key.as_ptr().add(off), len) };
        rt.table().prefetch(key)
    }

    /// Speculative prefetch for a table the packet is about to apply (papers/000 §IV: batches
    /// hide DRAM latency only if their lookups overlap): evaluates the key as it stands now and
    /// starts fetching its bucket. A hint only: nothing is read or written, a key that changes
    /// before the apply just wastes the fetch. Tables whose key needs calls (`key_pre`) are skipped.
    #[inline]
    pub fn prefetch_table(
        &mut self,
        sw: &Switch,
        tid: TableId,
    ) -> Option<nevermiss_tables::Prefetch> {
        let td = sw.prog().tables.get(tid as usize)?;
        let rt = sw.rt_tables().get(tid as usize)?;
        if !td.key_pre.is_empty() {
            return None;
        }
        self.build_key(sw, tid, td);
        rt.table().prefetch(&self.key)
    }

    // ------------------------------------------------------------------ tables

    fn apply_table(
        &mut self,
        sw: &Switch,
        tid: TableId,
        hit_slot: Option<u32>,
        run_slot: Option<u32>,
    ) -> Flow {
        let Some(td) = sw.prog().tables.get(tid as usize) else {
            return Flow::Next;
        };
        if !td.key_pre.is_empty() {
            let f = self.exec(sw, &td.key_pre);
            if f != Flow::Next {
                return f;
            }
        }
        self.build_key(sw, tid, td);
        let Some(action) = self.table_lookup(sw, tid, hit_slot, run_slot) else {
            return Flow::Next;
        };
        let Some(a) = td.actions.get(action as usize) else {
            return Flow::Next;
        };
        let flow = self.call(sw, a.func, &a.copy_in, &a.copy_out);
        self.table_done(sw, tid, action);
        match flow {
            Flow::Return | Flow::Next => Flow::Next,
            f => f,
        }
    }

    /// The part of a table apply before its action runs, with the key in `self.key` (P4_16
    /// §14.2.2): the lookup, hit/miss flags, idle timers, the `hit`/`action_run` slots, v1model's
    /// direct counter, the action's parameters stored in their slots, and the table context of
    /// `add_entry` and the direct externs. Returns the action to run; `Some` must be followed by
    /// [`Exec::table_done`] once the action ran. Shared by both engines.
    pub(crate) fn table_lookup(
        &mut self,
        sw: &Switch,
        tid: TableId,
        hit_slot: Option<u32>,
        run_slot: Option<u32>,
    ) -> Option<u32> {
        let outer = self.tctx;
        let action = self.table_lookup_core(sw, tid, hit_slot, run_slot)?;
        self.tctx_stack.push(outer);
        Some(action)
    }

    /// [`Exec::table_lookup`] without saving the table context it replaces: generated code
    /// saves and restores it itself (`nevermiss_jit::Ctx::tctx`). `self.tctx` changes only when
    /// an action is returned.
    #[inline(always)]
    pub(crate) fn table_lookup_core(
        &mut self,
        sw: &Switch,
        tid: TableId,
        hit_slot: Option<u32>,
        run_slot: Option<u32>,
    ) -> Option<u32> {
        let rt = sw.rt_tables().get(tid as usize)?;
        if let (Some(plan), None) = (rt.plan(), &self.trace) {
            return self.table_lookup_lean(sw, tid, rt, plan, hit_slot, run_slot);
        }
        self.table_lookup_full(sw, tid, rt, hit_slot, run_slot)
    }

    /// The lookup of a lean apply for generated code (`nevermiss_jit::Helpers::table_find`):
    /// the steps of [`Exec::table_lookup_lean`] but the `hit`/`action_run` slots and the
    /// parameters, which the code stores itself from the result and `Ctx::found`. Returns
    /// the lookup's action (`u32::MAX` for none) | 1 << 32 on a hit. A table without a plan
    /// (or a traced packet) takes the general path, whose parameter stores the code repeats.
    #[inline(always)]
    pub(crate) fn table_find(&mut self, sw: &Switch, tid: TableId) -> u64 {
        let Some(rt) = sw.rt_tables().get(tid as usize) else {
            return u64::from(u32::MAX);
        };
        // The bytes the action's parameters take, and where each of them ends.
        let (need, ends): (usize, &[crate::state::ParamPlan]) = match (rt.plan(), &self.trace) {
            (Some(plan), None) => match self.lean_lookup(sw, tid, rt, plan) {
                Some(ps) => {
                    let need = ps.last().map_or(0, |&(_, off, n, _)| (off + n) as usize);
                    (need, ps)
                }
                None => (0, &[]),
            },
            _ => {
                self.table_lookup_full(sw, tid, rt, None, None);
                let need = sw
                    .prog()
                    .tables
                    .get(tid as usize)
                    .and_then(|td| td.actions.get(self.lookup.data.action as usize))
                    .map_or(0, |a| a.params_bytes());
                // Only the lean path's tables are compiled to call this: no plan is an
                // engine bug; the parameter words are the full path's anyway.
                let ends = rt
                    .plan()
                    .and_then(|p| p.get(self.lookup.data.action as usize))
                    .map_or(&[][..], |p| p.as_slice());
                (need, ends)
            }
        };
        let p = &self.lookup.data.params;
        self.c.found = if p.len() >= need {
            p.as_ptr()
        } else {
            let keep = ends
                .iter()
                .map(|&(_, off, n, _)| (off + n) as usize)
                .filter(|&e| e <= p.len())
                .max()
                .unwrap_or(0);
            self.found_padded(need, keep)
        };
        u64::from(self.lookup.data.action) | u64::from(self.lookup.hit.is_some()) << 32
    }

    /// The lookup's parameters, shorter than the `need` bytes of their action: the `keep`
    /// bytes of the parameters wholly present, then zeros (a parameter not wholly present
    /// reads 0, as `Params::be_at` gives it to the interpreter).
    #[cold]
    fn found_padded(&mut self, need: usize, keep: usize) -> *const u8 {
        let p = &self.lookup.data.params;
        self.fbuf.clear();
        self.fbuf.extend_from_slice(&p[..keep.min(p.len())]);
        self.fbuf.resize(need + 8, 0);
        self.fbuf.as_ptr()
    }

    /// [`Exec::table_lookup_core`] of a table without a lean plan (or of a traced packet).
    #[inline(never)]
    fn table_lookup_full(
        &mut self,
        sw: &Switch,
        tid: TableId,
        rt: &crate::state::RtTable,
        hit_slot: Option<u32>,
        run_slot: Option<u32>,
    ) -> Option<u32> {
        let td = sw.prog().tables.get(tid as usize)?;
        rt.table()
            .lookup_into(&self.key, self.now_ns, &mut self.lookup);
        let hit = self.lookup.hit;
        if let Some(h) = hit {
            rt.watch().on_hit(h, self.lookup.version, || sw.now_ns());
            if rt.restarts_on_hit() {
                let _ = rt.table().restart_timer(h, self.now_ns);
            }
            if let Some(p) = rt.indirect().and_then(|x| sw.externs().profile(x)) {
                let mut data = std::mem::take(&mut self.lookup.data);
                p.resolve(td, &mut data, sw.ports(), || self.selector_hash(td));
                self.lookup.data = data;
            }
        }
        let action = self.lookup.data.action;
        self.note_apply(hit.is_some(), action, hit_slot, run_slot);
        if self.trace.is_some() {
            let keys = self.trace_key(td);
            let name = td
                .actions
                .get(action as usize)
                .map_or("(none)", |a| &a.name);
            let params: String = self
                .lookup
                .data
                .params
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            self.trace.get_or_insert_with(Vec::new).push(format!(
                "table {}: key {keys}: {} -> {name}({})",
                td.name,
                if hit.is_some() { "hit" } else { "miss" },
                if params.is_empty() {
                    String::new()
                } else {
                    format!("0x{params}")
                }
            ));
        }
        let a = td.actions.get(action as usize)?;
        // Action parameters from the entry.
        let mut off = 0usize;
        for p in &a.params {
            let n = p.ty.bytes();
            let bytes = self.lookup.data.params.get(off..off + n).unwrap_or(&[]);
            if p.ty.is_wide() {
                let v = BigUint::from_bytes_be(bytes);
                self.store_big(p.slot as usize, p.ty, &v);
            } else {
                let v = crate::bits::get_be(bytes) & mask(p.ty.width);
                self.st(p.slot as usize, v);
            }
            off += n;
        }
        // v1model direct counters count every hit.
        if let (Some(h), Some(dc), Arch::V1Model) = (hit, td.direct_counter, sw.prog().arch) {
            if let Some(RtExtern::DirectCounter(cells)) = sw.externs().get(dc) {
                if let Some(c) = cells.get(h.slot()) {
                    c.count(1, self.input().len() as u64);
                }
            }
        }
        self.tctx = TableCtx {
            table: tid,
            hit,
            active: true,
        };
        Some(action)
    }

    /// [`Exec::table_lookup_core`] of a table whose entries need nothing but their action and
    /// narrow parameters (`RtTable::plan`): the same steps, with the parameters' slots, offsets
    /// and masks computed at load time.
    #[inline(always)]
    fn table_lookup_lean(
        &mut self,
        sw: &Switch,
        tid: TableId,
        rt: &crate::state::RtTable,
        plan: &[Vec<crate::state::ParamPlan>],
        hit_slot: Option<u32>,
        run_slot: Option<u32>,
    ) -> Option<u32> {
        let params = self.lean_lookup(sw, tid, rt, plan);
        let action = self.lookup.data.action;
        self.note_slots(self.lookup.hit.is_some(), action, hit_slot, run_slot);
        let bytes = &self.lookup.data.params;
        for &(slot, off, n, m) in params? {
            let v = bytes.be_at(off as usize, n as usize) & m;
            if let Some(x) = self.f.get_mut(slot as usize) {
                *x = v;
            }
        }
        Some(action)
    }

    /// The lookup of a lean apply (`RtTable::plan`), shared by both engines: the entry or the
    /// default action into `self.lookup`, the update-delay probe, the packet's hit/miss
    /// operation and, when the action is one of the table's, the table context. Returns that
    /// action's parameter plan (`None`: no action runs).
    #[inline(always)]
    fn lean_lookup<'p>(
        &mut self,
        sw: &Switch,
        tid: TableId,
        rt: &crate::state::RtTable,
        plan: &'p [Vec<crate::state::ParamPlan>],
    ) -> Option<&'p [crate::state::ParamPlan]> {
        rt.table()
            .lookup_into(&self.key, self.now_ns, &mut self.lookup);
        let hit = self.lookup.hit;
        if let Some(h) = hit {
            rt.watch().on_hit(h, self.lookup.version, || sw.now_ns());
        }
        self.ops |= if hit.is_some() {
            TableOps::HIT
        } else {
            TableOps::MISS
        };
        let ps = plan.get(self.lookup.data.action as usize)?;
        self.tctx = TableCtx {
            table: tid,
            hit,
            active: true,
        };
        Some(ps)
    }

    /// An apply's outcome where the program sees it: the packet's hit/miss operation, the
    /// `hit` slot (1 on a hit) and the `action_run` slot (the action, `u64::MAX` for none).
    #[inline(always)]
    fn note_apply(&mut self, hit: bool, action: u32, hit_slot: Option<u32>, run_slot: Option<u32>) {
        self.ops |= if hit { TableOps::HIT } else { TableOps::MISS };
        self.note_slots(hit, action, hit_slot, run_slot);
    }

    /// The `hit` and `action_run` slots of [`Exec::note_apply`].
    #[inline(always)]
    fn note_slots(&mut self, hit: bool, action: u32, hit_slot: Option<u32>, run_slot: Option<u32>) {
        if let Some(h) = hit_slot {
            self.st(h as usize, u64::from(hit));
        }
        if let Some(r) = run_slot {
            let v = if action == ACTION_NONE {
                u64::MAX
            } else {
                u64::from(action)
            };
            self.st(r as usize, v);
        }
    }

    /// The part of a table apply after its action ran (`action`, as [`Exec::table_lookup`]
    /// returned it): `@__ref` parameters written back into the entry, the table context restored.
    pub(crate) fn table_done(&mut self, sw: &Switch, tid: TableId, action: u32) {
        self.table_write_back(sw, tid, action);
        self.tctx = self.tctx_stack.pop().unwrap_or_default();
    }

    /// The `@__ref` write-back of [`Exec::table_done`], without restoring the table context.
    pub(crate) fn table_write_back(&mut self, sw: &Switch, tid: TableId, action: u32) {
        let hit = self.tctx.hit;
        if let (Some(td), Some(rt)) = (
            sw.prog().tables.get(tid as usize),
            sw.rt_tables().get(tid as usize),
        ) {
            if let (Some(a), Some(h), true) =
                (td.actions.get(action as usize), hit, rt.writes_back(action))
            {
                self.pbuf.clear();
                for p in &a.params {
                    if p.ty.is_wide() {
                        let v = self.load_big(p.slot as usize, p.ty);
                        let n = p.ty.bytes();
                        let b = v.to_bytes_be();
                        let start = self.pbuf.len();
                        self.pbuf.resize(start + n, 0);
                        let m = b.len().min(n);
                        self.pbuf[start + n - m..].copy_from_slice(&b[b.len() - m..]);
                    } else {
                        let v = self.ld(p.slot as usize);
                        put_be(&mut self.pbuf, v, p.ty.width);
                    }
                }
                if write_changed(rt, h, &self.pbuf, &self.lookup) {
                    self.ops |= TableOps::UPDATE;
                }
            }
        }
    }

    /// [`Exec::table_write_back`] of an action whose parameters generated code packed into
    /// `abuf`'s first `len` bytes (all of them ≤ 64 bits): the entry that matched gets them
    /// when they differ from what the lookup read.
    pub(crate) fn write_back_packed(&mut self, sw: &Switch, tid: TableId, len: usize) {
        let (Some(h), Some(rt), Some(new)) = (
            self.tctx.hit,
            sw.rt_tables().get(tid as usize),
            self.abuf.get(..len),
        ) else {
            return;
        };
        if write_changed(rt, h, new, &self.lookup) {
            self.ops |= TableOps::UPDATE;
        }
    }

    /// [`Exec::write_back_packed`] of parameters of at most 8 bytes, packed into `word` (byte
    /// `k` of them is bits `8k..8k+8`; `Table::update_word_at`).
    pub(crate) fn write_back_word(&mut self, sw: &Switch, tid: TableId, word: u64, len: usize) {
        let (Some(h), Some(rt)) = (self.tctx.hit, sw.rt_tables().get(tid as usize)) else {
            return;
        };
        let read = &self.lookup;
        if read.data.params.len() == len && read.data.params.first_word() == word {
            return;
        }
        if rt.table().update_word_at(h, read.version, word, len) {
            self.ops |= TableOps::UPDATE;
        }
    }

    // ------------------------------------------------------------------ externs

    fn xval(&self, a: Option<&XArg>) -> Option<u64> {
        match a {
            Some(XArg::Val(e)) => Some(self.eval(e)),
            _ => None,
        }
    }

    fn xstore(&mut self, l: &Loc, t: Ty, v: u64) {
        if let Some(a) = self.addr(l) {
            if t.is_wide() {
                self.store_big(a, t, &BigUint::from(v));
            } else {
                self.st(a, v & mask(t.width));
            }
        }
    }

    /// Serializes data items into `self.data`.
    fn serialize(&mut self, items: &[Datum]) {
        self.data.clear();
        // As BMv2, a bit string that is not a whole number of bytes is right-aligned: zero
        // bits go in front.
        let mut total = 0u64;
        for it in items {
            total += match self.present(it) {
                Some(Datum::Bits(e)) => u64::from(e.ty().width),
                Some(Datum::Varbit(l, max)) => {
                    self.addr(l).map_or(0, |a| self.ld(a).min(u64::from(*max)))
                }
                Some(Datum::IfValid(..)) | None => 0,
            };
        }
        let pad = ((8 - total % 8) % 8) as u32;
        self.data.put(0, pad);
        for it in items {
            let Some(it) = self.present(it) else {
                continue;
            };
            match it {
                Datum::Bits(e) => {
                    let t = e.ty();
                    if t.is_wide() {
                        let v = self.eval_big(e);
                        let mut ws = vec![0u64; t.words() as usize];
                        ops::big_to_words(&v, &mut ws);
                        self.data.put_wide(&ws, t.width);
                    } else {
                        let v = self.eval(e);
                        self.data.put(v, t.width);
                    }
                }
                Datum::Varbit(l, max) => {
                    if let Some(a) = self.addr(l) {
                        let len = self.ld(a).min(u64::from(*max)) as u32;
                        let n = max.div_ceil(64).max(1) as usize;
                        if len > 0 {
                            if let Some(ws) = self.f.get(a + 1..a + 1 + n) {
                                let used = len.div_ceil(64).max(1) as usize;
                                let ws: Vec<u64> = ws[..used.min(n)].to_vec();
                                self.data.put_wide(&ws, len);
                            }
                        }
                    }
                }
                Datum::IfValid(..) => {}
            }
        }
        self.data.finish();
    }

    /// The item a datum serializes: itself, the item of a valid header's `IfValid`, or nothing.
    fn present<'d>(&self, it: &'d Datum) -> Option<&'d Datum> {
        match it {
            Datum::IfValid(l, d) => {
                let valid = self.addr(l).is_some_and(|a| self.ld(a) != 0);
                if valid {
                    self.present(d)
                } else {
                    None
                }
            }
            d => Some(d),
        }
    }

    /// The data arguments' values, one per item (truncated to 64 bits).
    fn item_values(&self, items: &[Datum], out: &mut Vec<(u64, u32)>) {
        out.clear();
        for it in items {
            if let Datum::Bits(e) = it {
                out.push((self.eval(e), e.ty().width));
            }
        }
    }

    /// PNA `add_entry`: inserts the key that just missed with `func`'s action and parameters.
    fn add_entry(&mut self, sw: &Switch, func: FnId, params: Option<&XArg>, profile: u64) -> bool {
        if !self.tctx.active || self.tctx.hit.is_some() {
            return false;
        }
        let Some(ai) = self.add_action(sw, func) else {
            return false;
        };
        let Some(a) = sw
            .prog()
            .tables
            .get(self.tctx.table as usize)
            .and_then(|td| td.actions.get(ai as usize))
        else {
            return false;
        };
        self.pbuf.clear();
        // The parameters' values, evaluated in order (no allocation: `vals` is reused).
        let mut vals = std::mem::take(&mut self.vals);
        vals.clear();
        if let Some(XArg::Data(items)) = params {
            self.item_values(items, &mut vals);
        }
        for (k, p) in a.params.iter().enumerate() {
            let v = vals.get(k).map_or(0, |x| x.0);
            put_be(&mut self.pbuf, v & mask(p.ty.width.min(64)), p.ty.width);
        }
        self.vals = vals;
        self.add_entry_data(sw, ai, profile, None)
    }

    /// `add_entry` of action `func` whose parameters generated code packed into `abuf`'s first
    /// `len` bytes (`nevermiss_jit::Helpers::add_entry`); the same as [`Exec::add_entry`].
    #[inline(always)]
    pub(crate) fn add_entry_packed(
        &mut self,
        sw: &Switch,
        func: FnId,
        len: usize,
        profile: u64,
    ) -> bool {
        if !self.tctx.active || self.tctx.hit.is_some() {
            return false;
        }
        let Some(ai) = self.add_action(sw, func) else {
            return false;
        };
        self.add_entry_data(sw, ai, profile, Some(len))
    }

    /// The index of action `func` in the table of the current apply, `None` if it has none;
    /// the last answer is kept (a program's `add_entry`s name one action per table, mostly).
    #[inline(always)]
    fn add_action(&mut self, sw: &Switch, func: FnId) -> Option<u32> {
        let (table, f, ai) = self.add_ai;
        if table == self.tctx.table && f == func {
            return Some(ai);
        }
        let ai = sw
            .prog()
            .tables
            .get(self.tctx.table as usize)?
            .action_of(func)?;
        self.add_ai = (self.tctx.table, func, ai);
        Some(ai)
    }

    /// For [`crate::Worker::maintain`]: brings the lines of this `Exec` and of the switch's
    /// tables that only an `add_entry` touches back into the caches, so that an insert among
    /// 100000 hits does not wait for them. The parameter buffers are written (each line with its
    /// own bytes, so the line is owned): a store that misses holds up the bucket lock's `lock
    /// cmpxchg` behind it until it drains. Measured with TSC stamps per stage (docs/jit.md):
    /// without this, a rare insert's lock took ~300 ticks instead of ~45, and the return from
    /// the insert ~350 instead of ~35. Changes no value.
    pub(crate) fn warm_insert_lines(&mut self, sw: &Switch) {
        for buf in [&mut self.abuf, &mut self.pbuf] {
            for i in (0..buf.len()).step_by(64) {
                buf[i] = std::hint::black_box(buf[i]);
            }
        }
        std::hint::black_box((self.trace.is_some(), self.add_ai));
        for rt in sw.rt_tables().iter() {
            std::hint::black_box(rt.direct_cells());
        }
    }

    /// The insert of [`Exec::add_entry`] with the action's parameters in `self.pbuf`
    /// (`packed`: `None`) or in `self.abuf`'s first `packed` bytes, keyed by `self.key` as
    /// the table's lookup left it.
    #[inline(always)]
    fn add_entry_data(
        &mut self,
        sw: &Switch,
        ai: u32,
        profile: u64,
        packed: Option<usize>,
    ) -> bool {
        let tid = self.tctx.table as usize;
        let Some(rt) = sw.rt_tables().get(tid) else {
            return false;
        };
        let profile = u8::try_from(profile).unwrap_or(u8::MAX);
        let params: &[u8] = match packed {
            Some(n) => self.abuf.get(..n).unwrap_or(&[]),
            None => &self.pbuf,
        };
        // The lookup that missed (of this table, the apply's: an action applies no table) has
        // hashed the key already.
        let hash = match self.lookup.key_hash() {
            0 => rt.table().hash_key(&self.key),
            h => h,
        };
        // The action as its index and parameter bytes, no `ActionData` built.
        let status =
            rt.table()
                .add_on_miss_hashed(&self.key, hash, ai, params, profile, self.now_ns);
        stamp(Stage::AddReturned);
        if status.is_added() && !rt.direct_cells() && self.trace.is_none() {
            self.ops |= TableOps::INSERT;
            return true;
        }
        self.add_entry_done(sw, tid, status)
    }

    /// The rest of [`Exec::add_entry_data`] after the insert: the direct counter's or meter's
    /// cell reset, the trace, the packet's operation.
    #[cold]
    #[inline(never)]
    fn add_entry_done(&mut self, sw: &Switch, tid: usize, status: AddStatus) -> bool {
        if let Some(t) = self.trace.as_mut() {
            t.push(format!(
                "add_entry into {}: {}",
                sw.prog().tables.get(tid).map_or("?", |td| &td.name),
                match &status {
                    AddStatus::Added(_) => "inserted".to_string(),
                    AddStatus::Full => "failed: the table is full".to_string(),
                    other => format!("not inserted ({other:?})"),
                }
            ));
        }
        match status {
            AddStatus::Added(h) => {
                self.ops |= TableOps::INSERT;
                sw.reset_direct(tid, h.slot());
                true
            }
            AddStatus::Full => {
                self.ops |= TableOps::INSERT_FULL;
                false
            }
            _ => {
                self.ops |= TableOps::INSERT_OTHER;
                false
            }
        }
    }

    /// PNA `set_entry_expire_time(p)` (`Some`) / `restart_expire_timer()` (`None`) on the entry
    /// that just matched.
    fn set_expire(&mut self, sw: &Switch, profile: Option<u64>) {
        let (true, Some(h)) = (self.tctx.active, self.tctx.hit) else {
            return;
        };
        let Some(rt) = sw.rt_tables().get(self.tctx.table as usize) else {
            return;
        };
        match profile {
            Some(p) => {
                let _ = rt.table().set_expire_profile(
                    h,
                    u8::try_from(p).unwrap_or(u8::MAX),
                    self.now_ns,
                );
            }
            None => {
                let _ = rt.table().restart_timer(h, self.now_ns);
            }
        }
    }
}

fn color_index(colors: &[u64; 3], v: u64) -> usize {
    colors.iter().position(|c| *c == v).unwrap_or(state::GREEN)
}

#[inline]
fn crc32_step(c: u32, b: u8) -> u32 {
    let mut c = c ^ u32::from(b);
    for _ in 0..8 {
        c = if c & 1 != 0 {
            0xEDB8_8320 ^ (c >> 1)
        } else {
            c >> 1
        };
    }
    c
}

/// The headers inside `layout` at word `at` (their validity words), named from `name`.
fn header_slots(layout: &Layout, at: u32, name: &str, out: &mut Vec<(String, u32)>) {
    match layout {
        Layout::Header(_) => out.push((name.to_string(), at)),
        Layout::Struct(fs) => {
            for (f, o, l) in fs {
                header_slots(l, at + o, &format!("{name}.{f}"), out);
            }
        }
        Layout::Union(ms) => {
            for (m, o, _) in ms {
                out.push((format!("{name}.{m}"), at + o));
            }
        }
        Layout::Stack {
            elem,
            size,
            elem_words,
        } => {
            for i in 0..*size {
                header_slots(elem, at + 1 + i * elem_words, &format!("{name}[{i}]"), out);
            }
        }
        Layout::Scalar(_) | Layout::Varbit(_) => {}
    }
}

/// The `@__ref` write-back's update: entry `h` gets parameters `new` when they differ from
/// those the lookup `read` and no control-plane modify changed the entry since
/// (`Table::update_params_at`); whether it did (the entry may be gone).
fn write_changed(rt: &crate::state::RtTable, h: EntryHandle, new: &[u8], read: &Lookup) -> bool {
    !same_bytes(new, &read.data.params) && rt.table().update_params_at(h, read.version, new)
}

/// `a == b`, without a call of libc's `memcmp` for up to 16 bytes (an entry's parameters,
/// compared on every data-plane write-back): two overlapping 8- or 4-byte loads each.
#[inline]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let w8 = |s: &[u8], i: usize| {
        s.get(i..i + 8)
            .map(|x| u64::from_ne_bytes(x.try_into().unwrap_or_default()))
    };
    let w4 = |s: &[u8], i: usize| {
        s.get(i..i + 4)
            .map(|x| u32::from_ne_bytes(x.try_into().unwrap_or_default()))
    };
    match n {
        8..=16 => w8(a, 0) == w8(b, 0) && w8(a, n - 8) == w8(b, n - 8),
        4..=7 => w4(a, 0) == w4(b, 0) && w4(a, n - 4) == w4(b, n - 4),
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::same_bytes;

    /// Equal and unequal slices of every length to 40, differing in each byte in turn: the
    /// answer `==` gives.
    #[test]
    fn same_bytes_is_slice_equality() {
        let a: Vec<u8> = (0..40u8).map(|i| i.wrapping_mul(29) ^ 0x3c).collect();
        let copy = a.clone();
        for n in 0..=40 {
            assert!(same_bytes(&a[..n], &copy[..n]), "n {n}");
            for k in 0..n {
                let mut b = a[..n].to_vec();
                b[k] ^= 0x80;
                assert!(!same_bytes(&a[..n], &b), "n {n}, byte {k}");
            }
            if n > 0 {
                assert!(!same_bytes(&a[..n], &a[..n - 1]), "n {n}, shorter");
            }
        }
    }
}
