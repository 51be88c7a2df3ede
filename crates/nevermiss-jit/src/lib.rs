//! nevermiss's compiler from the lowered program ([`p4_ir::Program`]) to machine code, at load
//! time, with Cranelift (docs/jit.md).
//!
//! Every function (actions, P4 functions, control bodies) and every parser of the program becomes
//! one native function `extern "C" fn(*mut Ctx) -> u32` over the program's frame. What the code does
//! itself: control flow (`if`, `switch`, loops, `return`, `exit`, calls of functions and
//! sub-parsers with their copy-in/copy-out), every scalar expression of width ≤ 64 with field offsets,
//! widths and masks as constants (P4_16 §8), assignments and slices, header validity, copies,
//! `verify`, parser state machines with their `select`s, and `extract` of byte-sized headers
//! (each field one big-endian load and two shifts). What it calls back into the runtime for —
//! the same functions the interpreter runs, through [`Helpers`]: table applies, externs, `emit`,
//! lookahead/advance, header stacks, value sets, and values wider than 64 bits.
//!
//! This crate knows nothing of the runtime: the runtime passes the addresses of its helpers and an
//! opaque host pointer in every [`Ctx`].

#![deny(missing_docs)]

mod access;
mod codegen;

use p4_ir::ir::{Expr, Program, State, Stmt};
use p4_ir::ops;
use std::ffi::c_void;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// What generated code is called with: the packet's frame, parser input and per-packet
/// registers, and the runtime's state behind `host`. The runtime keeps one per worker and
/// updates it as packets come (pointers into buffers that are never reallocated while a packet
/// runs); generated code reads and writes the register fields in place.
#[repr(C)]
pub struct Ctx {
    /// The runtime's own state (its helpers know what it is); the runtime keeps it right for
    /// every call (it points into the runtime's per-packet state, set again when that moves).
    pub host: *mut c_void,
    /// The frame: `Program::frame_words` words.
    pub frame: *mut u64,
    /// The packet being parsed, `input_len` bytes.
    pub input: *const u8,
    /// The length of `input` in bytes; parser bounds checks compare against it (P4_16 §13.8.1:
    /// an `extract` past it is `PacketTooShort`).
    pub input_len: u64,
    /// Bits of `input` consumed by the parser.
    pub cursor: u64,
    /// Parser error code of a reject.
    pub perr: u64,
    /// Loop iterations so far in this packet.
    pub loops: u64,
    /// Where a table's key function writes the key (its length plus 8 bytes of room).
    pub key: *mut u8,
    /// Where generated code packs an `add_entry`'s action parameters (each big-endian in
    /// `ceil(width/8)` bytes) for [`Helpers::add_entry`], and a hit action's parameters for
    /// [`Helpers::write_back`]; room for every action's parameters plus 8 bytes.
    pub params: *mut u8,
    /// The runtime's table context (three words), which a table apply replaces while its
    /// action runs: generated code saves the words before [`Helpers::table_lookup`] and
    /// restores them after the action. Kept right by the runtime as `host`.
    pub tctx: *mut u64,
    /// PNA's destination of the packet, two words: 1 after `send_to_port` (0 after
    /// `drop_packet`), then the port. Kept right by the runtime as `host`.
    pub dest: *mut u64,
    /// The packet's input port, stored by [`GlueSrc::Port`]. This field and the three after it
    /// are the packet's values the architecture glue stores into the frame ([`Glue`]).
    pub port: u64,
    /// The packet's direction as the program codes it (the value of PNA's `NET_TO_HOST` or
    /// `HOST_TO_NET` of `PNA_Direction_t`), stored by [`GlueSrc::Direction`].
    pub direction: u64,
    /// The packet's pass through the pipeline, 0 for the first (PNA's `PassNumber_t`); 1 or more
    /// after a recirculation ([`GlueSrc::Recirculated`]).
    pub pass: u64,
    /// The packet's arrival time in ns, stored by [`GlueSrc::Now`] (PNA's `timestamp`).
    pub now: u64,
    /// Per table, the address of its re-specialised matching code ([`specialise`]) or 0: an
    /// array with one slot per table of the program, which the runtime owns and keeps alive
    /// while generated code runs (set with `host`).
    pub spec: *const AtomicUsize,
    /// The parameters of the action [`Helpers::table_find`] returned, packed big-endian as
    /// the entry holds them: at least the action's bytes, and 8 readable bytes from the start
    /// and up to each parameter's end.
    pub found: *const u8,
}

impl Default for Ctx {
    fn default() -> Ctx {
        let null = std::ptr::null_mut();
        Ctx {
            host: null,
            frame: std::ptr::null_mut(),
            input: std::ptr::null(),
            input_len: 0,
            cursor: 0,
            perr: 0,
            loops: 0,
            key: std::ptr::null_mut(),
            params: std::ptr::null_mut(),
            tctx: std::ptr::null_mut(),
            dest: std::ptr::null_mut(),
            port: 0,
            direction: 0,
            pass: 0,
            now: 0,
            spec: std::ptr::null(),
            found: std::ptr::null(),
        }
    }
}

/// Where a value the architecture glue stores into the frame comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GlueSrc {
    /// A constant, the same for every packet.
    Const(u64),
    /// `Ctx::port`.
    Port,
    /// `Ctx::direction`.
    Direction,
    /// `Ctx::pass`.
    Pass,
    /// 1 when `Ctx::pass` > 0.
    Recirculated,
    /// `Ctx::now`.
    Now,
    /// The parser error (`*Ctx::perr`), after the parser ran.
    ParserError,
}

/// One store of the architecture glue: `src` masked to `width` bits at frame word `off`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GlueStore {
    /// The frame word the value is stored at.
    pub off: u32,
    /// The field's width in bits (≤ 64); the value is masked to it.
    pub width: u32,
    /// Where the value comes from.
    pub src: GlueSrc,
}

/// An architecture's packet pass, described by the runtime so that generated code runs it whole
/// ([`Compiled::pass_parse`], [`Compiled::pass_run`]) instead of the runtime calling each block:
/// the frame's first `zero_words` words zeroed, `before_parse` stored, the parser run, then
/// `after_parse` stored (they may read the parser error) and the keys of the `prefetch` tables
/// stored for the runtime's batch prefetch; then the `controls` run in order, a reject ending
/// the pass.
///
/// What the generated pass relies on: the runtime starts every pass with `Ctx::cursor` 0 (the
/// parser's bounds checks fold into constants), and the last of `controls` is the deparser,
/// whose output is empty when it starts and which the runtime takes as its output followed by
/// the packet from `Ctx::cursor` (rounded up to a byte) on — so a deparser that would emit the
/// packet's own first bytes unchanged emits nothing and sets `Ctx::cursor` to 0.
#[derive(Clone, Debug, Default)]
pub struct Glue {
    /// Words at the frame's start zeroed before anything else (the metadata and headers a
    /// packet must start without; [`Compiled::zero_ranges`] narrows them).
    pub zero_words: u32,
    /// The parser run (index into `Program::parsers`); a missing one is a [`JitError`].
    pub parser: u32,
    /// Stores before the parser runs (the parser's input metadata).
    pub before_parse: Vec<GlueStore>,
    /// Stores after the parser ran; they may read its error ([`GlueSrc::ParserError`]).
    pub after_parse: Vec<GlueStore>,
    /// Tables (without key calls, no key field wider than 64 bits) whose keys `pass_parse`
    /// stores past `Ctx::key` after the parser, where [`Compiled::prefetch_keys`] says.
    pub prefetch: Vec<u32>,
    /// The functions run after the parser, in order (indices into `Program::functions`), each
    /// called as a control; the last one is the deparser.
    pub controls: Vec<u32>,
}

/// Where `pass_parse` stores the keys of `tables` past `Ctx::key`: (table, byte offset, length),
/// each key packed as [`Compiled::table_key`] packs it, 8 bytes of room after each; and the
/// bytes all of them take.
pub(crate) fn prefetch_layout(prog: &Program, tables: &[u32]) -> (Vec<(u32, u32, u32)>, u32) {
    let mut off = 0u32;
    let mut out = Vec::with_capacity(tables.len());
    for &t in tables {
        let len: u32 = prog.tables.get(t as usize).map_or(0, |td| {
            td.keys
                .iter()
                .filter(|k| k.kind != p4_ir::ir::MatchKind::Selector)
                .map(|k| k.expr.ty().width.div_ceil(8))
                .sum()
        });
        out.push((t, off, len));
        off += len + 8;
    }
    (out, off)
}

/// How a native function ended: the codes of the runtime's `Flow`.
pub mod flow {
    /// The statement completed normally; run the next one.
    pub const NEXT: u32 = 0;
    /// A `return` (P4_16 §12.4): the function or action ends.
    pub const RETURN: u32 = 1;
    /// An `exit` (P4_16 §12.5): every enclosing control ends.
    pub const EXIT: u32 = 2;
    /// A `break` out of the innermost loop (P4_16 §12.8, the `for` statement of the spec
    /// after v1.2.5).
    pub const BREAK: u32 = 3;
    /// A `continue` of the innermost loop (P4_16 §12.8).
    pub const CONTINUE: u32 = 4;
    /// The parser rejected the packet (its error is in `Ctx::perr`); also ends a packet a helper
    /// aborted.
    pub const REJECT: u32 = 5;
}

/// What a parser's `select` helper returns: no case matched, accept, reject, or state `i`.
pub mod target {
    /// No case of the `select` matched (the parser then rejects with `NoMatch`, P4_16 §13.6).
    pub const NO_MATCH: u32 = 0;
    /// The next state is `accept`.
    pub const ACCEPT: u32 = 1;
    /// The next state is `reject`.
    pub const REJECT: u32 = 2;
    /// State `i` is `STATE + i`.
    pub const STATE: u32 = 3;
}

/// The runtime functions generated code calls.
#[derive(Clone, Copy)]
pub struct Helpers {
    /// Runs one statement exactly as the interpreter does; returns a [`flow`] code.
    pub stmt: unsafe extern "C" fn(*mut Ctx, *const Stmt) -> u32,
    /// Evaluates a scalar expression of width ≤ 64 (one with wider operands).
    pub eval: unsafe extern "C" fn(*mut Ctx, *const Expr) -> u64,
    /// Evaluates the `select` of a state (wide keys, value sets); returns a [`target`] code.
    pub select: unsafe extern "C" fn(*mut Ctx, *const State) -> u32,
    /// Counts a packet that ran past the loop limit (the code then rejects it).
    pub loop_limit: unsafe extern "C" fn(*mut Ctx),
    /// Appends `n` bytes to the deparser's output and returns where they start, with 8 writable
    /// bytes of capacity beyond them; null when the output is not at a byte boundary.
    pub emit_reserve: unsafe extern "C" fn(*mut Ctx, u64) -> *mut u8,
    /// A table apply up to its action, with the key (`len` bytes) at `Ctx::key`:
    /// `(ctx, table, hit slot, action_run slot, len)` (slots `u32::MAX`: none); returns the action
    /// to run, `u32::MAX` for none; it replaces the table context (`Ctx::tctx`) only when it
    /// returns an action.
    pub table_lookup: unsafe extern "C" fn(*mut Ctx, u32, u32, u32, u64) -> u32,
    /// The lookup of a lean table apply (`p4_ir::Table::lean`), with the key (`len` bytes) at
    /// `Ctx::key`: `(ctx, table, len)`; returns the action the lookup chose (`u32::MAX` for
    /// none; any value, in range or not, is what `action_run` gets) in the low 32 bits and
    /// 1 << 32 on a hit, and points `Ctx::found` at the action's parameters, which generated
    /// code unpacks itself. It replaces the table context only when the action is one of the
    /// table's.
    pub table_find: unsafe extern "C" fn(*mut Ctx, u32, u64) -> u64,
    /// The write-back of an action's `@__ref` parameters into the entry that matched, after
    /// the action ran: `(ctx, table, action)`; called only for actions that have such
    /// parameters.
    pub table_done: unsafe extern "C" fn(*mut Ctx, u32, u32),
    /// The same write-back for an action whose parameters are all ≤ 64 bits: generated code
    /// packed them at `Ctx::params` after the action ran (each big-endian in `ceil(width/8)`
    /// bytes, `len` bytes in all): `(ctx, table, len)`; the entry that matched gets them when
    /// they differ from what the lookup read.
    pub write_back: unsafe extern "C" fn(*mut Ctx, u32, u64),
    /// The same write-back for parameters of at most 8 bytes in all, packed as for
    /// `write_back` but into one word (byte `k` of them is bits `8k..8k+8`, the bytes past `len`
    /// zero): `(ctx, table, word, len)`.
    pub write_word: unsafe extern "C" fn(*mut Ctx, u32, u64, u64),
    /// PNA `add_entry` of action function `func` with the `len` bytes of parameters at
    /// `Ctx::params` and expire profile `profile`, into the table being applied with the key it
    /// was looked up with: `(ctx, func, len, profile)`; returns 1 when the entry was added.
    pub add_entry: unsafe extern "C" fn(*mut Ctx, u32, u64, u64) -> u32,
    /// A hit generated code found among table `t`'s `const` entries itself (it matches them in
    /// place): counted as the table's lookups count theirs: `(ctx, table)`.
    pub const_hit: unsafe extern "C" fn(*mut Ctx, u32),
    /// `count(index)` of indexed counter extern `inst` (P4_16 core `counter`, v1model's and
    /// PSA's `Counter`): one packet and `bytes` bytes into cell `index` (none when out of
    /// range); `bytes` is `u64::MAX` for the packet's length: `(ctx, inst, index, bytes)`.
    pub count: unsafe extern "C" fn(*mut Ctx, u32, u64, u64),
    /// `count([bytes])` of direct counter extern `inst`: one packet and `bytes` bytes (`u64::MAX`:
    /// the packet's length) into the cell of the entry the table being applied matched (none
    /// on a miss): `(ctx, inst, bytes)`.
    pub direct_count: unsafe extern "C" fn(*mut Ctx, u32, u64),
}

/// Limits the generated code enforces, as the interpreter does.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Most parser state transitions per parser run before `ParserTimeout`.
    pub parser_steps: u32,
    /// Most loop iterations per packet.
    pub loop_limit: u64,
}

/// A native function of the program.
pub type NativeFn = unsafe extern "C" fn(*mut Ctx) -> u32;

/// Why a program or a table's entries could not be compiled: a Cranelift failure, or a request
/// the program does not allow; [`JitError::In`] names the function, parser or table it happened
/// in. Displayed as `native code: ` followed by the places, outermost first, and the kind
/// (`native code: function `ingress`: …`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JitError {
    /// Cranelift refused: the host's code generator, a declaration, the definition of a
    /// function (its verifier's or register allocator's message) or the finalisation of the
    /// module.
    Cranelift(String),
    /// [`specialise`] of table `table`, which is out of range or not [`respecialisable`].
    NotSpecialisable {
        /// The table's index in `Program::tables`.
        table: u32,
    },
    /// [`specialise`] given more than [`SPEC_MAX_ENTRIES`] entries.
    TooManyEntries,
    /// A [`SpecEntry`] whose number of key tests differs from the table's number of key fields.
    EntryKey,
    /// [`Glue::parser`] names no parser of the program.
    NoParser(u32),
    /// One of [`Glue::controls`] names no function of the program.
    NoFunction(u32),
    /// A table of [`Glue::prefetch`] whose key generated code does not compute (an apply
    /// through the runtime, or a key field wider than 64 bits).
    PrefetchKey {
        /// The table's index in `Program::tables`.
        table: u32,
    },
    /// An error while compiling one unit of code, named by `unit`.
    In {
        /// The function, parser, key or table being compiled.
        unit: CodeUnit,
        /// What went wrong there.
        error: Box<JitError>,
    },
}

/// A unit of generated code, as a [`JitError`] names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CodeUnit {
    /// A function of the program (action, P4 function or control body), by its name.
    Function(String),
    /// A parser of the program, by its name.
    Parser(String),
    /// The key function of a table, by the table's name.
    TableKey(String),
    /// One of the architecture pass's functions ([`Glue`]): `pass_parse`, `pass_run` or `pass`.
    Pass(&'static str),
    /// The re-specialised matching code of a table ([`specialise`]), by the table's name.
    Spec(String),
}

impl JitError {
    /// This error as it happened in `unit`.
    pub(crate) fn in_unit(self, unit: CodeUnit) -> JitError {
        JitError::In {
            unit,
            error: Box::new(self),
        }
    }

    /// The message without the `native code: ` prefix.
    fn detail(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JitError::Cranelift(msg) => write!(f, "{msg}"),
            JitError::NotSpecialisable { table } => {
                write!(f, "table {table} cannot be specialised")
            }
            JitError::TooManyEntries => write!(f, "too many entries"),
            JitError::EntryKey => write!(f, "an entry's key"),
            JitError::NoParser(p) => write!(f, "no parser {p}"),
            JitError::NoFunction(c) => write!(f, "no function {c}"),
            JitError::PrefetchKey { table } => {
                write!(f, "prefetch of table {table}: its key is not generated")
            }
            JitError::In { unit, error } => {
                match unit {
                    CodeUnit::Function(name) => write!(f, "function `{name}`: ")?,
                    CodeUnit::Parser(name) => write!(f, "parser `{name}`: ")?,
                    CodeUnit::TableKey(name) => write!(f, "key of table `{name}`: ")?,
                    CodeUnit::Pass(name) => write!(f, "{name}: ")?,
                    CodeUnit::Spec(name) => write!(f, "table `{name}`: ")?,
                }
                error.detail(f)
            }
        }
    }
}

impl std::fmt::Display for JitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "native code: ")?;
        self.detail(f)
    }
}

impl std::error::Error for JitError {}

/// A program compiled to machine code. The code refers to the program's statements (the helpers
/// get pointers to them), so it keeps the program alive.
pub struct Compiled {
    module: Option<cranelift_jit::JITModule>,
    functions: Vec<NativeFn>,
    parsers: Vec<NativeFn>,
    keys: Vec<Option<NativeFn>>,
    pass: Option<(NativeFn, NativeFn, NativeFn)>,
    _prog: Arc<Program>,
    /// Wall time of the compilation.
    pub compile_ns: u64,
    /// Bytes of machine code.
    pub code_bytes: usize,
    /// Words the frame must have past `Program::frame_words`, zeroed at every packet's start
    /// like the frame's first `Program::zero_words` (generated code's per-packet state).
    pub extra_words: u32,
    /// The words of the frame's first `Program::zero_words` that anything may read (generated
    /// code, the interpreter's statements, the architecture's `arch` regions) before a packet
    /// writes them, as sorted, disjoint half-open ranges (joined across gaps of at most 16
    /// words, which are zeroed too: one fill fewer): all a packet's start must zero before the
    /// engine runs it; the previous values of the other words stay unseen (docs/jit.md).
    pub zero_ranges: Vec<(u32, u32)>,
    /// The keys `pass_parse` stores for the batch prefetch ([`Glue::prefetch`]): (table, byte
    /// offset past `Ctx::key`, length).
    prefetch: Vec<(u32, u32, u32)>,
    /// Bytes past `Ctx::key` those keys take (the key buffer must have this many, plus 8).
    pub key_room: u32,
}

// SAFETY: after `finalize_definitions` the module's code is immutable and only executed; the
// function pointers are plain addresses into it. Nothing in `Compiled` is mutated after `compile`.
unsafe impl Send for Compiled {}
unsafe impl Sync for Compiled {}

impl Drop for Compiled {
    fn drop(&mut self) {
        if let Some(m) = self.module.take() {
            // SAFETY: the pointers into the code die with `self`; no generated code runs any more
            // (callers hold an `Arc<Compiled>` while they run it).
            unsafe { m.free_memory() };
        }
    }
}

impl Compiled {
    /// The native code of function `f` (`Program::functions` index).
    #[inline]
    pub fn function(&self, f: u32) -> Option<NativeFn> {
        self.functions.get(f as usize).copied()
    }

    /// The native code of parser `p`: returns 1 when it accepted, 0 when it rejected.
    #[inline]
    pub fn parser(&self, p: u32) -> Option<NativeFn> {
        self.parsers.get(p as usize).copied()
    }

    /// The key function of table `t`: writes the table's packed key (each field big-endian in
    /// `ceil(width/8)` bytes, selector fields left out) at `Ctx::key` and returns its length.
    /// `None` for tables with a key field wider than 64 bits (the runtime builds those).
    #[inline]
    pub fn table_key(&self, t: u32) -> Option<NativeFn> {
        self.keys.get(t as usize).copied().flatten()
    }

    /// The first half of a packet pass ([`Glue`]): the frame reset, the glue's stores and the
    /// parser; returns 1 when the parser accepted. `None` when no glue was given.
    #[inline]
    pub fn pass_parse(&self) -> Option<NativeFn> {
        self.pass.map(|p| p.0)
    }

    /// The second half of a packet pass: the glue's controls in order; returns
    /// [`flow::REJECT`] when one rejected, else [`flow::NEXT`].
    #[inline]
    pub fn pass_run(&self) -> Option<NativeFn> {
        self.pass.map(|p| p.1)
    }

    /// Both halves in one function, for a packet that runs alone (no batch prefetches between
    /// them, no keys stored for it): what `pass_parse` then `pass_run` do, one call and frame
    /// fewer; returns what `pass_run` returns.
    #[inline]
    pub fn pass_whole(&self) -> Option<NativeFn> {
        self.pass.map(|p| p.2)
    }

    /// The keys `pass_parse` stores for the batch prefetch, in [`Glue::prefetch`]'s order:
    /// (table, byte offset past `Ctx::key`, length).
    #[inline]
    pub fn prefetch_keys(&self) -> &[(u32, u32, u32)] {
        &self.prefetch
    }
}

/// Compiles every function and parser of `prog`, and the architecture's packet pass when `glue`
/// describes it. `arch` lists the frame regions (word offset, words) that the runtime's own
/// architecture code reads or writes besides the glue's stores (metadata it sets and reads,
/// regions it carries from one pass to the next): the inline `extract` stores every field in
/// them, and no header in them is sealed (docs/jit.md, "clean headers").
pub fn compile(
    prog: &Arc<Program>,
    helpers: &Helpers,
    limits: Limits,
    glue: Option<&Glue>,
    arch: &[(u32, u32)],
) -> Result<Compiled, JitError> {
    let t0 = std::time::Instant::now();
    let out = codegen::compile(prog, helpers, limits, glue, arch)?;
    let (prefetch, key_room) = glue.map_or((Vec::new(), 0), |g| prefetch_layout(prog, &g.prefetch));
    Ok(Compiled {
        module: Some(out.module),
        functions: out.functions,
        parsers: out.parsers,
        keys: out.keys,
        pass: out.pass,
        _prog: Arc::clone(prog),
        compile_ns: t0.elapsed().as_nanos() as u64,
        code_bytes: out.code_bytes,
        extra_words: out.extra_words,
        zero_ranges: out.zero_ranges,
        prefetch,
        key_room,
    })
}

/// What an entry requires of one key field's value (its `w` low bits): anything, `value & mask
/// == v & mask`, or `lo <= value <= hi`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldTest {
    /// The field is not tested (a "don't care" ternary mask or optional value, a `/0`
    /// prefix).
    Any,
    /// `(value, mask)`: the field's bits under `mask` equal `value`'s (exact, ternary, lpm and
    /// optional matches; P4_16 §14.2.1.1).
    Masked(u64, u64),
    /// `(lo, hi)`: the field lies in `lo..=hi`, unsigned (a `range` match).
    Range(u64, u64),
}

impl FieldTest {
    /// The test of a prefix: the first `len` bits of a `width`-bit field equal `value`'s.
    pub fn prefix(value: u64, len: u32, width: u32) -> FieldTest {
        let len = len.min(width);
        let mask = if len == 0 {
            0
        } else {
            ops::mask(len) << (width - len)
        };
        FieldTest::Masked(value, mask)
    }
}

/// A control-plane entry of a table whose code is re-specialised to its contents
/// ([`specialise`]): one test per key field, the action (index among the table's actions) and
/// its parameters packed as the runtime packs them (each big-endian in `ceil(width/8)` bytes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecEntry {
    /// One test per key field, in the table's key order.
    pub tests: Vec<FieldTest>,
    /// The action, as an index into the table's actions (`p4_ir::Table::actions`).
    pub action: u32,
    /// The action's parameters, each big-endian in `ceil(width/8)` bytes, in declaration order.
    pub params: Vec<u8>,
}

/// What a re-specialised table function returns when no entry matched.
pub const SPEC_MISS: u32 = u32::MAX;

/// The matching code of one table, specialised to its entries at one moment: a function
/// `extern "C" fn(*mut Ctx, k0: u64, …) -> u32` (the key fields' values as arguments) that tests
/// the entries in the order given, and on a hit counts it (`Helpers::const_hit`), stores the
/// entry's parameters into the action's parameter slots and returns the action's index; else
/// [`SPEC_MISS`]. Dropping it frees the code: the owner must know no thread still runs it.
pub struct Spec {
    module: Option<cranelift_jit::JITModule>,
    addr: usize,
    /// Bytes of machine code.
    pub code_bytes: usize,
}

// SAFETY: as `Compiled`: the code is immutable after `finalize_definitions`.
unsafe impl Send for Spec {}
unsafe impl Sync for Spec {}

impl Spec {
    /// The function's address, for the table's slot in `Ctx::spec`.
    pub fn addr(&self) -> usize {
        self.addr
    }
}

impl Drop for Spec {
    fn drop(&mut self) {
        if let Some(m) = self.module.take() {
            // SAFETY: the owner guarantees nothing runs the code any more (the type's contract).
            unsafe { m.free_memory() };
        }
    }
}

/// Whether table `t`'s applies are generated to try the code [`specialise`] makes for its
/// current entries first (docs/jit.md, "Re-specialising a table's code"): a table whose
/// entries are not `const` that [`Compiled`]'s const-table matching could otherwise handle
/// (keys and parameters ≤ 64 bits, no action profile, direct counter or meter, idle timeout,
/// add-on-miss, `@__ref` parameter, or action using the matched entry).
pub fn respecialisable(prog: &Program, t: u32) -> bool {
    codegen::respecialisable(prog, t)
}

/// Compiles table `t`'s matching code for `entries`, given in the order they take precedence
/// (at most 16 of them; more is an error). Its own small module: ~0.1–1 ms.
pub fn specialise(
    prog: &Program,
    helpers: &Helpers,
    t: u32,
    entries: &[SpecEntry],
) -> Result<Spec, JitError> {
    let (module, addr, code_bytes) = codegen::specialise(prog, helpers, t, entries)?;
    Ok(Spec {
        module: Some(module),
        addr,
        code_bytes,
    })
}

/// The most entries [`specialise`] takes.
pub const SPEC_MAX_ENTRIES: usize = codegen::CONST_INLINE_ENTRIES;

/// `ops::bin` for the operators generated code does not inline (signed division and remainder,
/// saturating arithmetic, signed shift right): one semantics for both engines.
extern "C" fn bin_op(op: u32, width: u32, signed: u32, a: u64, b: u64) -> u64 {
    use p4_ir::ir::{BinOp, Ty};
    let op = match op {
        0 => BinOp::Div,
        1 => BinOp::Mod,
        2 => BinOp::AddSat,
        3 => BinOp::SubSat,
        _ => BinOp::Shr,
    };
    ops::bin(
        op,
        Ty {
            width,
            signed: signed != 0,
        },
        a,
        b,
    )
}

#[cfg(test)]
mod tests {
    use super::{CodeUnit, JitError};

    /// The messages are the ones the compiler gave when its error was a string: the places
    /// outermost first, then the kind, after one `native code: `.
    #[test]
    fn jit_error_messages() {
        let cases = [
            (
                JitError::Cranelift("Verifier errors".into())
                    .in_unit(CodeUnit::Function("ingress".into())),
                "native code: function `ingress`: Verifier errors",
            ),
            (
                JitError::NoParser(4).in_unit(CodeUnit::Pass("pass_parse")),
                "native code: pass_parse: no parser 4",
            ),
            (
                JitError::TooManyEntries.in_unit(CodeUnit::Spec("fwd".into())),
                "native code: table `fwd`: too many entries",
            ),
            (
                JitError::EntryKey.in_unit(CodeUnit::Spec("fwd".into())),
                "native code: table `fwd`: an entry's key",
            ),
            (
                JitError::NotSpecialisable { table: 2 },
                "native code: table 2 cannot be specialised",
            ),
            (
                JitError::PrefetchKey { table: 3 }.in_unit(CodeUnit::Pass("pass")),
                "native code: pass: prefetch of table 3: its key is not generated",
            ),
            (
                JitError::Cranelift("bad".into())
                    .in_unit(CodeUnit::TableKey("acl".into()))
                    .in_unit(CodeUnit::Parser("p".into())),
                "native code: parser `p`: key of table `acl`: bad",
            ),
            (
                JitError::NoFunction(9).in_unit(CodeUnit::Pass("pass_run")),
                "native code: pass_run: no function 9",
            ),
        ];
        for (e, want) in cases {
            assert_eq!(e.to_string(), want);
        }
    }
}
