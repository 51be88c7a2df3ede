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

mod codegen;

use p4_ir::ir::{Expr, Program, State, Stmt};
use p4_ir::ops;
use std::ffi::c_void;
use std::sync::Arc;

/// What generated code is called with: the packet's frame and parser input, and the runtime's
/// state behind `host`. Built by the runtime for every call into generated code.
#[repr(C)]
pub struct Ctx {
    /// The runtime's own state (its helpers know what it is).
    pub host: *mut c_void,
    /// The frame: `Program::frame_words` words.
    pub frame: *mut u64,
    /// The packet being parsed, `input_len` bytes.
    pub input: *const u8,
    pub input_len: u64,
    /// Bits of `input` consumed by the parser.
    pub cursor: *mut u64,
    /// Parser error code of a reject.
    pub perr: *mut u64,
    /// Loop iterations so far in this packet.
    pub loops: *mut u64,
    /// Where a table's key function writes the key (its length plus 8 bytes of room).
    pub key: *mut u8,
    /// PNA's destination of the packet, two words: 1 after `send_to_port` (0 after
    /// `drop_packet`), then the port.
    pub dest: *mut u64,
}

/// How a native function ended: the codes of the runtime's `Flow`.
pub mod flow {
    pub const NEXT: u32 = 0;
    pub const RETURN: u32 = 1;
    pub const EXIT: u32 = 2;
    pub const BREAK: u32 = 3;
    pub const CONTINUE: u32 = 4;
    pub const REJECT: u32 = 5;
}

/// What a parser's `select` helper returns: no case matched, accept, reject, or state `i`.
pub mod target {
    pub const NO_MATCH: u32 = 0;
    pub const ACCEPT: u32 = 1;
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
    /// to run, `u32::MAX` for none. An action returned is followed by `table_done`.
    pub table_lookup: unsafe extern "C" fn(*mut Ctx, u32, u32, u32, u64) -> u32,
    /// The rest of a table apply after its action ran: `(ctx, table, action)`.
    pub table_done: unsafe extern "C" fn(*mut Ctx, u32, u32),
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

/// A construct the compiler does not handle, or a Cranelift failure; names what and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JitError(pub String);

impl std::fmt::Display for JitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "native code: {}", self.0)
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
    _prog: Arc<Program>,
    /// Wall time of the compilation.
    pub compile_ns: u64,
    /// Bytes of machine code.
    pub code_bytes: usize,
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
}

/// Compiles every function and parser of `prog`.
pub fn compile(
    prog: &Arc<Program>,
    helpers: &Helpers,
    limits: Limits,
) -> Result<Compiled, JitError> {
    let t0 = std::time::Instant::now();
    let out = codegen::compile(prog, helpers, limits)?;
    Ok(Compiled {
        module: Some(out.module),
        functions: out.functions,
        parsers: out.parsers,
        keys: out.keys,
        _prog: Arc::clone(prog),
        compile_ns: t0.elapsed().as_nanos() as u64,
        code_bytes: out.code_bytes,
    })
}

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
