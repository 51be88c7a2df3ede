//! The executable IR: every name resolved, every value at a fixed place in a flat per-packet
//! frame of 64-bit words.
//!
//! Frame layout (the contract between lowering and the interpreter):
//! - a scalar of width `w ≤ 64` (`bit<w>`, `int<w>` in two's complement, `bool` as 0/1, enums,
//!   `error`) takes one word holding the value masked to `w` bits;
//! - a scalar of width `w > 64` takes `ceil(w/64)` words, least significant word first;
//! - a header takes one validity word (0 or 1) followed by its fields;
//! - a `varbit<n>` field takes one word with its current length in bits followed by
//!   `ceil(n/64)` words holding the value (as a scalar of width `n`);
//! - a struct (and a tuple) is its fields in order; a header union is its member headers in
//!   order; a header stack (or array) is one word holding `nextIndex` followed by its elements.
//!
//! No run-time operation looks anything up by name: tables, externs, functions, parsers and
//! header layouts are referred to by index into [`Program`].

pub use crate::control_plane::{Annotations, ControlPlane, CpParam, CpType};
use num_bigint::BigUint;

/// Index of a [`Function`] in [`Program::functions`].
pub type FnId = u32;
/// Index of a [`Parser`] in [`Program::parsers`].
pub type ParserId = u32;
/// Index of a [`Table`] in [`Program::tables`].
pub type TableId = u32;
/// Index of an [`ExternInst`] in [`Program::externs`].
pub type ExternId = u32;
/// Index of a [`HeaderLayout`] in [`Program::headers`].
pub type HeaderId = u32;
/// Index of a [`ValueSet`] in [`Program::value_sets`].
pub type ValueSetId = u32;

/// A scalar's run-time type: its width in bits and whether it is signed (`int<W>`).
/// `bool` is `bit<1>`; enums without a representation and `error` are 32-bit codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ty {
    pub width: u32,
    pub signed: bool,
}

impl Ty {
    pub const BOOL: Ty = Ty {
        width: 1,
        signed: false,
    };
    /// Type of `error` values and enums without an underlying type.
    pub const CODE: Ty = Ty {
        width: 32,
        signed: false,
    };

    /// `bit<w>`.
    pub const fn bits(width: u32) -> Ty {
        Ty {
            width,
            signed: false,
        }
    }

    /// `int<w>`.
    pub const fn int(width: u32) -> Ty {
        Ty {
            width,
            signed: true,
        }
    }

    /// Words the value takes in the frame (at least 1, also for width 0).
    pub fn words(self) -> u32 {
        self.width.div_ceil(64).max(1)
    }

    /// Wider than one word: evaluated on the arbitrary-precision path.
    pub fn is_wide(self) -> bool {
        self.width > 64
    }

    /// Bytes the value takes in a packed table key or action parameter block.
    pub fn bytes(self) -> usize {
        (self.width as usize).div_ceil(8)
    }
}

/// A compile-time constant of any width.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Val {
    /// Fits in 64 bits.
    U(u64),
    /// Wider.
    B(Box<BigUint>),
}

impl Val {
    /// The value as a big integer.
    pub fn to_big(&self) -> BigUint {
        match self {
            Val::U(v) => BigUint::from(*v),
            Val::B(b) => (**b).clone(),
        }
    }

    /// The value, normalized: `U` when it fits in 64 bits.
    pub fn from_big(b: BigUint) -> Val {
        match u64::try_from(&b) {
            Ok(v) => Val::U(v),
            Err(_) => Val::B(Box::new(b)),
        }
    }

    /// The low 64 bits.
    pub fn low(&self) -> u64 {
        match self {
            Val::U(v) => *v,
            Val::B(b) => b.iter_u64_digits().next().unwrap_or(0),
        }
    }
}

/// Where a value lives: a word offset plus zero or more run-time indices (header stacks and
/// arrays indexed by a non-constant expression). The address is
/// `off + Σ index_i * stride_i`; an index `≥ count` makes the location out of bounds (a read
/// gives 0, a write does nothing, P4_16 §8.18).
#[derive(Clone, Debug, PartialEq)]
pub struct Loc {
    pub off: u32,
    pub dyn_idx: Vec<DynIndex>,
}

/// One run-time index of a [`Loc`].
#[derive(Clone, Debug, PartialEq)]
pub struct DynIndex {
    pub index: Expr,
    pub stride: u32,
    pub count: u32,
}

impl Loc {
    /// A fixed location.
    pub fn at(off: u32) -> Loc {
        Loc {
            off,
            dyn_idx: Vec::new(),
        }
    }

    /// The same location moved by `delta` words.
    pub fn plus(&self, delta: u32) -> Loc {
        Loc {
            off: self.off + delta,
            dyn_idx: self.dyn_idx.clone(),
        }
    }

    /// The fixed offset, if the location has no run-time index.
    pub fn fixed(&self) -> Option<u32> {
        self.dyn_idx.is_empty().then_some(self.off)
    }
}

/// Unary operators on scalars.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    /// `!` on bool.
    Not,
    /// `~`.
    BitNot,
    /// `-` (two's complement, modulo 2^W).
    Neg,
}

/// Binary operators whose result has the operands' type (shifts: the left operand's type).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    AddSat,
    SubSat,
    Shl,
    Shr,
    And,
    Or,
    Xor,
}

/// Comparisons (result `bool`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// A side-effect-free scalar expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// A constant of width ≤ 64 (already masked to the type's width).
    Const(u64, Ty),
    /// A constant wider than 64 bits.
    Big(Box<BigUint>, Ty),
    /// The scalar at a fixed word offset.
    Load(u32, Ty),
    /// The scalar at a location with run-time indices.
    LoadDyn(Box<Loc>, Ty),
    Un(UnOp, Ty, Box<Expr>),
    /// Arithmetic / bitwise; for shifts the right operand may have any unsigned type.
    Bin(BinOp, Ty, Box<Expr>, Box<Expr>),
    /// Comparison of two operands of type `Ty`.
    Cmp(CmpOp, Ty, Box<Expr>, Box<Expr>),
    /// Short-circuit `&&`.
    And(Box<Expr>, Box<Expr>),
    /// Short-circuit `||`.
    Or(Box<Expr>, Box<Expr>),
    /// `c ? a : b`.
    Mux(Box<Expr>, Box<Expr>, Box<Expr>, Ty),
    /// Cast from the second type to the first (truncation, zero or sign extension).
    Cast(Ty, Ty, Box<Expr>),
    /// `e[hi:lo]` of an operand of type `Ty`; the result is `bit<hi-lo+1>`.
    Slice(Box<Expr>, Ty, u32, u32),
    /// `a ++ b`: the result type and the width of `b`.
    Concat(Box<Expr>, Box<Expr>, Ty, u32),
}

impl Expr {
    /// The expression's result type.
    pub fn ty(&self) -> Ty {
        match self {
            Expr::Const(_, t)
            | Expr::Big(_, t)
            | Expr::Load(_, t)
            | Expr::LoadDyn(_, t)
            | Expr::Un(_, t, _)
            | Expr::Bin(_, t, _, _)
            | Expr::Mux(_, _, _, t)
            | Expr::Cast(t, _, _)
            | Expr::Concat(_, _, t, _) => *t,
            Expr::Cmp(..) | Expr::And(..) | Expr::Or(..) => Ty::BOOL,
            Expr::Slice(_, _, hi, lo) => Ty::bits(hi - lo + 1),
        }
    }

    /// A boolean constant.
    pub fn bool(b: bool) -> Expr {
        Expr::Const(u64::from(b), Ty::BOOL)
    }

    /// A load of the scalar at `loc`.
    pub fn load(loc: &Loc, ty: Ty) -> Expr {
        match loc.fixed() {
            Some(o) => Expr::Load(o, ty),
            None => Expr::LoadDyn(Box::new(loc.clone()), ty),
        }
    }

    /// The constant value, if the expression is a constant.
    pub fn as_const(&self) -> Option<Val> {
        match self {
            Expr::Const(v, _) => Some(Val::U(*v)),
            Expr::Big(b, _) => Some(Val::from_big((**b).clone())),
            _ => None,
        }
    }

    /// A constant of type `ty` (the value is masked to the width).
    pub fn constant(v: &Val, ty: Ty) -> Expr {
        let b = crate::ops::mask_big(&v.to_big(), ty.width);
        if ty.is_wide() {
            Expr::Big(Box::new(b), ty)
        } else {
            Expr::Const(u64::try_from(&b).unwrap_or(0), ty)
        }
    }
}

/// A header in the frame: its validity word and its layout.
#[derive(Clone, Debug, PartialEq)]
pub struct HdrRef {
    pub loc: Loc,
    pub layout: HeaderId,
}

/// A header stack in the frame.
#[derive(Clone, Debug, PartialEq)]
pub struct StackRef {
    /// The `nextIndex` word; element `i` starts at `loc + 1 + i * elem_words`.
    pub loc: Loc,
    pub size: u32,
    pub elem_words: u32,
    /// Layout of each element (headers; for unions, see `union_members`).
    pub elem: StackElem,
}

/// What a stack holds.
#[derive(Clone, Debug, PartialEq)]
pub enum StackElem {
    Header(HeaderId),
    /// A header union: the offsets of each member's validity word within the element and layouts.
    Union(Vec<(u32, HeaderId)>),
    /// Anything else (an array of structs or scalars): no validity.
    Other,
}

/// A statement.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// Stores a scalar (masked to `Ty`).
    Assign(Loc, Ty, Expr),
    /// Stores bits `hi..=lo` of the scalar of type `Ty` at the location.
    AssignSlice(Loc, Ty, u32, u32, Expr),
    /// Copies `words` words (aggregates). Source and destination may overlap.
    Copy {
        dst: Loc,
        src: Loc,
        words: u32,
    },
    /// Zeroes `words` words.
    Zero {
        dst: Loc,
        words: u32,
    },
    /// `setValid()` / `setInvalid()` of the header whose validity word is at `hdr`; `others` are
    /// the validity words of the other members of its header union (made invalid by `setValid`),
    /// relative to `hdr` (as signed offsets).
    SetValid {
        hdr: Loc,
        valid: bool,
        others: Vec<i32>,
    },
    If(Expr, Vec<Stmt>, Vec<Stmt>),
    /// Runs the body of the first case whose label equals the selector, else `default`.
    Switch {
        sel: Expr,
        cases: Vec<(Vec<u64>, usize)>,
        bodies: Vec<Vec<Stmt>>,
        default: Option<usize>,
    },
    /// `while (cond) { body; update }`; `break` and `continue` apply to it.
    Loop {
        cond: Expr,
        body: Vec<Stmt>,
        update: Vec<Stmt>,
    },
    Break,
    Continue,
    /// Runs `copy_in`, the function's body, then `copy_out` (also after `exit` inside the body,
    /// P4_16 §12.4; not after a parser reject).
    Call {
        func: FnId,
        copy_in: Vec<Stmt>,
        copy_out: Vec<Stmt>,
    },
    /// Runs a sub-parser to completion, then `copy_out` (also when it rejects, as BMv2 does);
    /// its reject rejects the caller with the same error.
    CallParser {
        parser: ParserId,
        copy_in: Vec<Stmt>,
        copy_out: Vec<Stmt>,
    },
    /// `t.apply()`, storing whether it hit and the index of the action that ran.
    ApplyTable {
        table: TableId,
        hit: Option<u32>,
        action_run: Option<u32>,
    },
    Return,
    Exit,
    /// A call of an extern function or method.
    Extern(Box<ExternCall>),
    /// `pkt.extract(hdr)` / `pkt.extract(hdr, varbit_bits)`.
    Extract {
        hdr: HdrRef,
        varbit_bits: Option<Expr>,
    },
    /// `pkt.extract(stack.next)` (or `stack.next.member` for a stack of header unions, `member`
    /// indexing the union's members): fails with `StackOutOfBounds` when the stack is full.
    ExtractNext {
        stack: StackRef,
        member: Option<u32>,
        varbit_bits: Option<Expr>,
    },
    /// `pkt.lookahead<T>()` into a region with this layout.
    Lookahead {
        dst: Loc,
        layout: Layout,
    },
    /// `pkt.advance(bits)`.
    Advance(Expr),
    /// `verify(cond, error)`: rejects with the error (code) when the condition is false.
    Verify(Expr, Expr),
    /// `pkt.emit(hdr)` when the header is valid.
    Emit(HdrRef),
    /// `stack.push_front(n)` / `pop_front(n)` (negative `n` pops), as BMv2 shifts
    /// (`StackP4_16`): elements are swapped `n` apart, so the `n` elements made invalid hold
    /// the values shifted out of the other end (P4_16 §8.18 leaves them unspecified).
    Shift {
        stack: StackRef,
        by: i64,
    },
}

impl Stmt {
    /// `setValid()` as BMv2 runs it, for both front ends (P4_16 §8.17 leaves the fields of a
    /// header made valid unspecified; simple_switch's `add_header`, which p4c writes for
    /// `setValid()`, fixes them): when the header whose validity word is at `hdr` is invalid,
    /// its other `words - 1` words (the fields) are reset to 0 and it becomes valid, which
    /// invalidates the other members of its union (`others`, as in [`Stmt::SetValid`]); a
    /// header that is valid already is left as it is. `hdr`'s run-time indices must not read
    /// the header's own fields (they are read again after the reset).
    pub fn set_valid_resetting(hdr: Loc, words: u32, others: Vec<i32>) -> Stmt {
        let mut then = Vec::with_capacity(2);
        if words > 1 {
            then.push(Stmt::Zero {
                dst: hdr.plus(1),
                words: words - 1,
            });
        }
        let invalid = Expr::Un(UnOp::Not, Ty::BOOL, Box::new(Expr::load(&hdr, Ty::BOOL)));
        then.push(Stmt::SetValid {
            hdr,
            valid: true,
            others,
        });
        Stmt::If(invalid, then, Vec::new())
    }
}

/// Run-time layout of a value, for copies, lookahead, extern data and the architecture.
#[derive(Clone, Debug, PartialEq)]
pub enum Layout {
    Scalar(Ty),
    Varbit(u32),
    Header(HeaderId),
    /// Fields with their word offsets relative to the struct.
    Struct(Vec<(String, u32, Layout)>),
    /// Member headers with their word offsets.
    Union(Vec<(String, u32, HeaderId)>),
    /// A header stack or array: `nextIndex` word, then the elements.
    Stack {
        elem: Box<Layout>,
        size: u32,
        elem_words: u32,
    },
}

impl Layout {
    /// Words taken in the frame (`headers` gives the sizes of header layouts).
    pub fn words(&self, headers: &[HeaderLayout]) -> u32 {
        match self {
            Layout::Scalar(t) => t.words(),
            Layout::Varbit(w) => 1 + w.div_ceil(64).max(1),
            Layout::Header(h) => headers.get(*h as usize).map_or(1, |h| h.words),
            Layout::Struct(fs) => fs
                .iter()
                .map(|(_, o, l)| o + l.words(headers))
                .max()
                .unwrap_or(0),
            Layout::Union(ms) => ms
                .iter()
                .map(|(_, o, h)| o + headers.get(*h as usize).map_or(1, |h| h.words))
                .max()
                .unwrap_or(0),
            Layout::Stack {
                size, elem_words, ..
            } => 1 + size * elem_words,
        }
    }

    /// Bits of the value when serialized (headers: their fields; varbit: its maximum).
    pub fn bits(&self, headers: &[HeaderLayout]) -> u64 {
        match self {
            Layout::Scalar(t) => u64::from(t.width),
            Layout::Varbit(w) => u64::from(*w),
            Layout::Header(h) => headers.get(*h as usize).map_or(0, |h| h.fixed_bits),
            Layout::Struct(fs) => fs.iter().map(|(_, _, l)| l.bits(headers)).sum(),
            Layout::Union(ms) => ms
                .iter()
                .map(|(_, _, h)| headers.get(*h as usize).map_or(0, |h| h.fixed_bits))
                .max()
                .unwrap_or(0),
            Layout::Stack { elem, size, .. } => elem.bits(headers) * u64::from(*size),
        }
    }

    /// Looks up a field of a struct layout by name: offset and layout.
    pub fn field(&self, name: &str) -> Option<(u32, &Layout)> {
        match self {
            Layout::Struct(fs) => fs.iter().find(|f| f.0 == name).map(|f| (f.1, &f.2)),
            _ => None,
        }
    }
}

/// One field of a header.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldLayout {
    pub name: String,
    /// Word offset from the header's validity word (≥ 1).
    pub off: u32,
    pub ty: Ty,
    /// `Some(max)` for a `varbit<max>` field (then `ty` is `bit<max>` and the word at `off` is
    /// the current length, the value follows).
    pub varbit: Option<u32>,
}

/// A header type's layout.
#[derive(Clone, Debug, PartialEq)]
pub struct HeaderLayout {
    pub name: String,
    pub fields: Vec<FieldLayout>,
    /// Words in the frame, validity word included.
    pub words: u32,
    /// Bits of the fixed-width fields (varbit fields count 0).
    pub fixed_bits: u64,
}

/// A parser.
#[derive(Clone, Debug, PartialEq)]
pub struct Parser {
    pub name: String,
    /// Runs when the parser starts (local variable initialization).
    pub init: Vec<Stmt>,
    pub states: Vec<State>,
    /// Index of `start`.
    pub start: u32,
}

/// A parser state.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    pub name: String,
    pub body: Vec<Stmt>,
    pub next: Transition,
}

/// Where a transition goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Accept,
    Reject,
    State(u32),
}

/// A state's transition.
#[derive(Clone, Debug, PartialEq)]
pub enum Transition {
    Go(Target),
    /// `select(keys) { cases }`; no matching case rejects with `NoMatch`.
    Select {
        keys: Vec<Expr>,
        cases: Vec<SelectCase>,
    },
}

/// One `keyset: state` of a select.
#[derive(Clone, Debug, PartialEq)]
pub struct SelectCase {
    /// One keyset per key.
    pub keysets: Vec<KeySet>,
    pub next: Target,
}

/// A keyset element.
#[derive(Clone, Debug, PartialEq)]
pub enum KeySet {
    /// `default` / `_`.
    Any,
    Value(Val),
    /// `value &&& mask`.
    Mask(Val, Val),
    /// `lo .. hi` (inclusive; signed comparison when the key is signed).
    Range(Val, Val),
    /// A `value_set` (matches when any of its members does).
    Set(ValueSetId),
}

/// A `value_set` declared in a parser.
#[derive(Clone, Debug, PartialEq)]
pub struct ValueSet {
    pub name: String,
    pub size: u32,
    /// Widths of the members' components (one per select key it is used with).
    pub widths: Vec<u32>,
    /// The element type (a struct gives one match field per member).
    pub elem: CpType,
    pub annotations: Annotations,
}

/// A function body: an action, a P4 function, or a control's apply block.
#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    pub name: String,
    pub kind: FnKind,
    pub body: Vec<Stmt>,
    /// An action's annotations (empty for other functions).
    pub annotations: Annotations,
    /// An action's parameters as the control plane sees them (empty for other functions).
    pub params: Vec<CpParam>,
    /// An action or function declared outside every control and parser (P4_16 §14.1, §10):
    /// it reaches the frame only through its parameters (and its own locals).
    pub top_level: bool,
}

/// What a [`Function`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FnKind {
    Action,
    Function,
    Control,
}

/// Match kind of a table key field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MatchKind {
    Exact,
    Lpm,
    Ternary,
    Range,
    Optional,
    /// `selector` (action selectors): not part of the match.
    Selector,
}

/// One key field of a table.
#[derive(Clone, Debug, PartialEq)]
pub struct TableKey {
    /// Control-plane name (`@name` or the expression as written).
    pub name: String,
    pub expr: Expr,
    pub kind: MatchKind,
    /// The key expression's type.
    pub ty: CpType,
    pub annotations: Annotations,
}

/// A parameter of a table action (directionless: supplied by the entry).
#[derive(Clone, Debug, PartialEq)]
pub struct ActionParam {
    pub name: String,
    pub ty: Ty,
    /// Word offset of the parameter's slot.
    pub slot: u32,
    /// `@__ref`: the action may write it; the new value is written back into the entry.
    pub is_ref: bool,
}

/// One action a table may run.
#[derive(Clone, Debug, PartialEq)]
pub struct TableAction {
    /// Control-plane name (fully qualified).
    pub name: String,
    pub func: FnId,
    /// Directionless parameters, in order; packed back to back, each `ceil(w/8)` bytes,
    /// big-endian.
    pub params: Vec<ActionParam>,
    /// Copy-in / copy-out of the directional arguments bound in the `actions` list.
    pub copy_in: Vec<Stmt>,
    pub copy_out: Vec<Stmt>,
    pub default_only: bool,
    pub table_only: bool,
    /// The annotations of the reference in the `actions` list.
    pub annotations: Annotations,
}

impl TableAction {
    /// Bytes of the packed parameters.
    pub fn params_bytes(&self) -> usize {
        self.params.iter().map(|p| p.ty.bytes()).sum()
    }
}

/// One field of a constant entry.
#[derive(Clone, Debug, PartialEq)]
pub enum EntryMatch {
    Exact(Val),
    Lpm(Val, u32),
    Ternary(Val, Val),
    Range(Val, Val),
    /// `_` / `default`.
    Any,
}

/// An entry of an `entries` property.
#[derive(Clone, Debug, PartialEq)]
pub struct ConstEntry {
    pub matches: Vec<EntryMatch>,
    /// Larger wins (already converted from the program's priorities).
    pub priority: u32,
    /// Index into the table's actions.
    pub action: u32,
    /// Packed parameters.
    pub params: Vec<u8>,
}

/// PNA idle-timeout mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum IdleTimeout {
    #[default]
    None,
    NotifyControl,
    AutoDelete,
}

/// A table instance.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    /// Control-plane name, e.g. `MainControlImpl.ipv4_da`.
    pub name: String,
    /// Statements computing parts of the key (calls in key expressions), run before the keys
    /// are evaluated.
    pub key_pre: Vec<Stmt>,
    pub keys: Vec<TableKey>,
    pub actions: Vec<TableAction>,
    /// Index of the default action and its packed parameters (`None`: no action runs on a miss).
    pub default_action: Option<(u32, Vec<u8>)>,
    pub default_const: bool,
    pub entries: Vec<ConstEntry>,
    pub entries_const: bool,
    pub size: u64,
    pub add_on_miss: bool,
    pub idle_timeout: IdleTimeout,
    pub direct_counter: Option<ExternId>,
    pub direct_meter: Option<ExternId>,
    /// An action profile / selector providing the actions (entries then name members).
    pub implementation: Option<ExternId>,
    pub annotations: Annotations,
    /// The `size` property as written (`size` above defaults it).
    pub declared_size: Option<u64>,
    /// Whether the program declares `default_action`; without one the default is `NoAction`
    /// (P4_16 §14.2.1.3), which the control plane lists with `@defaultonly`.
    pub default_declared: bool,
}

impl Table {
    /// Whether a hit or miss needs nothing of the entry but its action and parameters, all of
    /// them at most 64 bits: no action profile or selector, no timer restarted by a hit
    /// (v1model and PSA restart a `NotifyControl` table's timers), no v1model direct counter
    /// (counted on each hit). Both engines look such tables up on a lean path (the
    /// runtime's parameter plan; generated code unpacks the parameters itself).
    pub fn lean(&self, arch: Arch) -> bool {
        self.implementation.is_none()
            && !self.restarts_on_hit(arch)
            && !(self.direct_counter.is_some() && arch == Arch::V1Model)
            && self
                .actions
                .iter()
                .all(|a| a.params.iter().all(|p| !p.ty.is_wide()))
    }

    /// Whether a hit restarts the entry's idle timer (v1model and PSA, for a `NotifyControl`
    /// table: the time since the last hit); PNA restarts timers only when the program says so.
    pub fn restarts_on_hit(&self, arch: Arch) -> bool {
        self.idle_timeout == IdleTimeout::NotifyControl && matches!(arch, Arch::V1Model | Arch::Psa)
    }

    /// Index of the action implemented by `func`.
    pub fn action_of(&self, func: FnId) -> Option<u32> {
        self.actions
            .iter()
            .position(|a| a.func == func)
            .map(|i| i as u32)
    }
}

/// The kind of an extern instance, with its constructor arguments.
#[derive(Clone, Debug, PartialEq)]
pub enum ExternKind {
    /// `counter` / `Counter`: `size` cells of packets and/or bytes.
    Counter {
        size: u32,
        kind: CounterKind,
    },
    DirectCounter {
        kind: CounterKind,
    },
    Meter {
        size: u32,
        bytes: bool,
    },
    DirectMeter {
        bytes: bool,
    },
    /// Cells of `layout` (a scalar, or a struct of scalars), initialized to `init`.
    Register {
        size: u32,
        layout: Layout,
        init: Vec<u64>,
    },
    Hash {
        algo: HashAlgo,
    },
    /// `Checksum<W>` (PNA/PSA) and v1model's `Checksum16`: state is `state` words in the frame.
    Checksum {
        algo: HashAlgo,
        state: u32,
    },
    /// `InternetChecksum`: state (the running one's-complement sum) at `state` in the frame.
    InternetChecksum {
        state: u32,
    },
    Random {
        lo: u64,
        hi: u64,
        ty: Ty,
    },
    /// PNA/PSA `Digest<T>`: messages of `layout`.
    Digest {
        layout: Layout,
    },
    ActionProfile {
        size: u32,
    },
    ActionSelector {
        size: u32,
        algo: HashAlgo,
    },
}

/// What a counter counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CounterKind {
    Packets,
    Bytes,
    PacketsAndBytes,
}

/// Hash and checksum algorithms (v1model `HashAlgorithm`, PNA/PSA `*_HashAlgorithm_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HashAlgo {
    Identity,
    Crc16,
    Crc16Custom,
    Crc32,
    Crc32Custom,
    Crc64,
    Csum16,
    Xor16,
    Random,
    TargetDefault,
}

/// An extern instance.
#[derive(Clone, Debug, PartialEq)]
pub struct ExternInst {
    /// Control-plane name (fully qualified; one constructed in a table property is named by
    /// the property's `@name`, else `table.property`).
    pub name: String,
    pub kind: ExternKind,
    pub site: ExternSite,
    /// The declared instance's type arguments (`register<bit<32>>` → `[bit<32>]`).
    pub type_args: Vec<CpType>,
    pub annotations: Annotations,
}

/// Where an extern instance was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExternSite {
    /// A declared instance (`counter(64, CounterType.packets) hits;`).
    Declared,
    /// Constructed in a table property (`implementation = action_profile(128)`).
    TableProperty,
    /// Constructed as a constructor argument of a parser or control.
    Argument,
}

impl ExternInst {
    /// Whether the control plane sees it: a declared instance or one constructed in a table
    /// property, not one constructed as a constructor argument.
    pub fn visible(&self) -> bool {
        self.site != ExternSite::Argument
    }
}

/// One item of data serialized by an extern (hash and checksum inputs, digests, `add_entry`
/// parameters).
#[derive(Clone, Debug, PartialEq)]
pub enum Datum {
    /// A scalar of the expression's width.
    Bits(Expr),
    /// A `varbit<max>` field at this location: its current length word, then its value.
    Varbit(Loc, u32),
    /// The item, only while the header whose validity word is at this location is valid;
    /// nothing otherwise. BMv2's calculations (hash and checksum inputs) skip the fields of
    /// invalid headers (`BufBuilder`); the BMv2 JSON front end writes their inputs so.
    IfValid(Loc, Box<Datum>),
}

/// An argument of an extern call.
#[derive(Clone, Debug, PartialEq)]
pub enum XArg {
    /// An `in` scalar.
    Val(Expr),
    /// An `out`/`inout` scalar location.
    Out(Loc, Ty),
    /// A list of scalars concatenated into bits (`hash` data, checksum field lists, digests).
    Data(Vec<Datum>),
    /// An aggregate location with its layout (e.g. register cells of struct type).
    Agg(Loc, Layout),
    /// A compile-time string (log messages).
    Str(String),
    /// Not given (`@optional`).
    None,
}

/// Which extern operation a call performs.
#[derive(Clone, Debug, PartialEq)]
pub enum XOp {
    // ---- methods of extern instances
    CounterCount,
    DirectCounterCount,
    /// `colors`: the program's codes for green, yellow and red.
    MeterExecute {
        colors: [u64; 3],
    },
    DirectMeterExecute {
        colors: [u64; 3],
    },
    /// v1model `direct_meter.read(out)`.
    DirectMeterRead {
        colors: [u64; 3],
    },
    RegisterRead,
    RegisterWrite,
    HashGet,
    ChecksumClear,
    ChecksumUpdate,
    ChecksumGet,
    /// `InternetChecksum.add`/`subtract`.
    CsumAdd,
    CsumSubtract,
    CsumGetState,
    CsumSetState,
    RandomRead,
    DigestPack,
    // ---- core / v1model functions
    MarkToDrop,
    /// `hash(out result, algo, base, data, max)`.
    V1Hash(HashAlgo),
    /// `random(out, lo, hi)`.
    V1Random,
    VerifyChecksum {
        algo: HashAlgo,
        with_payload: bool,
    },
    UpdateChecksum {
        algo: HashAlgo,
        with_payload: bool,
    },
    Resubmit,
    Recirculate,
    Clone,
    Truncate,
    /// `digest<T>(receiver, data)`.
    V1Digest,
    Assert,
    Assume,
    Log,
    // ---- PNA
    SendToPort,
    DropPacket,
    MirrorPacket,
    PnaRecirculate,
    /// `add_entry[_if](...)`: the action (function) to add; arguments: [cond?, params data,
    /// profile]; result: `success` on success, `1 - success` otherwise.
    AddEntry {
        func: FnId,
        conditional: bool,
        success: u64,
    },
    SetEntryExpireTime {
        conditional: bool,
    },
    RestartExpireTimer,
    UpdateExpireInfo,
    IsNetPort,
    IsHostPort,
    AllocateFlowId,
    /// `packet_in.length()` in bytes.
    PacketLength,
}

/// An extern call: operation, instance (for methods), arguments, and where the result goes.
#[derive(Clone, Debug, PartialEq)]
pub struct ExternCall {
    pub op: XOp,
    pub inst: Option<ExternId>,
    pub args: Vec<XArg>,
    pub ret: Option<(Loc, Ty)>,
    /// The source text position, for messages.
    pub what: String,
}

/// v1model's drop port (simple_switch's default `drop_port`): `mark_to_drop` stores it into
/// `egress_spec`, and a packet whose `egress_spec` holds it after ingress is dropped.
pub const V1_DROP_PORT: u64 = 511;

/// The architecture a program is written for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arch {
    V1Model,
    /// Old (four blocks, pre-v0.7) PNA dialect.
    PnaV06,
    /// New (three blocks, v0.7+) PNA dialect.
    PnaV07,
    Psa,
}

/// A parameter of an architecture block, bound to a frame region.
#[derive(Clone, Debug, PartialEq)]
pub struct BlockParam {
    pub name: String,
    /// The declared type's name (e.g. `standard_metadata_t`).
    pub type_name: String,
    /// `None` for `packet_in`/`packet_out`.
    pub region: Option<u32>,
    pub layout: Option<Layout>,
}

/// What an architecture block runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockBody {
    Parser(ParserId),
    Control(FnId),
}

/// One block passed to the `main` package.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    /// The package's parameter name (e.g. `ig`, `main_control`).
    pub role: String,
    /// The block's declaration name.
    pub name: String,
    pub body: BlockBody,
    pub params: Vec<BlockParam>,
}

/// A lowered program.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    pub arch: Arch,
    /// Words of a frame.
    pub frame_words: u32,
    /// Words at the start of the frame that are zeroed for every packet (headers invalid,
    /// metadata and variables zero); the rest holds temporaries.
    pub zero_words: u32,
    pub blocks: Vec<Block>,
    pub functions: Vec<Function>,
    pub parsers: Vec<Parser>,
    pub tables: Vec<Table>,
    pub externs: Vec<ExternInst>,
    pub headers: Vec<HeaderLayout>,
    pub value_sets: Vec<ValueSet>,
    /// `error` members by code.
    pub errors: Vec<String>,
    /// Enum member names by (enum name, code), for messages and the control plane.
    pub enums: Vec<(String, Vec<String>)>,
    /// What else the control plane sees (types, annotations, P4Info's order of actions).
    pub control_plane: ControlPlane,
    /// The value the program sees for each error code, by code, when it is not the code itself
    /// (a BMv2 JSON from p4c builds that numbered `core.p4`'s errors from 1); empty: the codes
    /// are the values. The runtime raises errors by their code and writes their value into
    /// the parser-error metadata.
    pub error_values: Vec<u64>,
}

/// Standard error codes (P4_16 core library order, as BMv2 numbers them).
pub mod errors {
    pub const NO_ERROR: u64 = 0;
    pub const PACKET_TOO_SHORT: u64 = 1;
    pub const NO_MATCH: u64 = 2;
    pub const STACK_OUT_OF_BOUNDS: u64 = 3;
    pub const HEADER_TOO_SHORT: u64 = 4;
    pub const PARSER_TIMEOUT: u64 = 5;
    pub const PARSER_INVALID_ARGUMENT: u64 = 6;
    /// Names of the standard codes, by code.
    pub const NAMES: [&str; 7] = [
        "NoError",
        "PacketTooShort",
        "NoMatch",
        "StackOutOfBounds",
        "HeaderTooShort",
        "ParserTimeout",
        "ParserInvalidArgument",
    ];
}

impl Program {
    /// A program of `arch` with nothing in it yet but the standard errors (what a front end
    /// starts from).
    pub fn empty(arch: Arch) -> Program {
        Program {
            arch,
            frame_words: 0,
            zero_words: 0,
            blocks: Vec::new(),
            functions: Vec::new(),
            parsers: Vec::new(),
            tables: Vec::new(),
            externs: Vec::new(),
            headers: Vec::new(),
            value_sets: Vec::new(),
            errors: errors::NAMES.iter().map(|s| s.to_string()).collect(),
            enums: Vec::new(),
            control_plane: ControlPlane::default(),
            error_values: Vec::new(),
        }
    }

    /// The block with this package role.
    pub fn block(&self, role: &str) -> Option<&Block> {
        self.blocks.iter().find(|b| b.role == role)
    }

    /// The value the program sees for error `code` ([`Program::error_values`]).
    pub fn error_value(&self, code: u64) -> u64 {
        self.error_values
            .get(code as usize)
            .copied()
            .unwrap_or(code)
    }

    /// The code of an `error` member.
    pub fn error_code(&self, name: &str) -> Option<u64> {
        self.errors.iter().position(|e| e == name).map(|i| i as u64)
    }

    /// The table with this control-plane name, or the unique one whose name ends in `.name`.
    pub fn find_table(&self, name: &str) -> Option<TableId> {
        find_by_name(self.tables.iter().map(|t| t.name.as_str()), name)
    }

    /// The extern instance with this name, or the unique one whose name ends in `.name`.
    pub fn find_extern(&self, name: &str) -> Option<ExternId> {
        find_by_name(self.externs.iter().map(|t| t.name.as_str()), name)
    }
}

/// Index of the name equal to `want`, or else of the only name ending in `.want` (p4c's STF
/// runners match names this way).
pub fn find_by_name<'a>(names: impl Iterator<Item = &'a str> + Clone, want: &str) -> Option<u32> {
    let want = want.trim_start_matches('.');
    if let Some(i) = names.clone().position(|n| n == want) {
        return Some(i as u32);
    }
    let suffix = format!(".{want}");
    let mut found = None;
    for (i, n) in names.enumerate() {
        if n.ends_with(&suffix) {
            if found.is_some() {
                return None;
            }
            found = Some(i as u32);
        }
    }
    found
}
