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
    /// Width in bits (0 for `bit<0>`/`int<0>`).
    pub width: u32,
    /// Two's complement `int<W>` (P4_16 §7.1.6.3) rather than `bit<W>`.
    pub signed: bool,
}

impl Ty {
    /// `bool`, as `bit<1>` (1 is true).
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
    /// Word offset of the location with every run-time index 0.
    pub off: u32,
    /// The run-time indices, outermost first; empty for a fixed location.
    pub dyn_idx: Vec<DynIndex>,
}

/// One run-time index of a [`Loc`].
#[derive(Clone, Debug, PartialEq)]
pub struct DynIndex {
    /// The index's value (any unsigned scalar).
    pub index: Expr,
    /// Words between two consecutive elements.
    pub stride: u32,
    /// Elements there are; an index ≥ `count` is out of bounds.
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
    /// `+`, modulo 2^W (P4_16 §8.6, §8.7).
    Add,
    /// `-`, modulo 2^W.
    Sub,
    /// `*`, modulo 2^W.
    Mul,
    /// `/`, truncating; a zero divisor gives 0 at run time, never a trap.
    Div,
    /// `%` (as `/`; a zero divisor gives 0).
    Mod,
    /// `|+|`: addition saturating at the type's bounds (P4_16 §8.6, §8.7).
    AddSat,
    /// `|-|`: subtraction saturating at the type's bounds.
    SubSat,
    /// `<<`; shifting by the width or more gives 0 (P4_16 §8.9.2).
    Shl,
    /// `>>`: logical for `bit<W>`, arithmetic (sign-filling) for `int<W>` (P4_16 §8.9.2).
    Shr,
    /// `&`.
    And,
    /// `|`.
    Or,
    /// `^`.
    Xor,
}

/// Comparisons (result `bool`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    /// `==`.
    Eq,
    /// `!=`.
    Ne,
    /// `<`, signed when the operands are `int<W>`.
    Lt,
    /// `<=`, signed when the operands are `int<W>`.
    Le,
    /// `>`, signed when the operands are `int<W>`.
    Gt,
    /// `>=`, signed when the operands are `int<W>`.
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
    /// A unary operator applied to an operand of type `Ty` (the result's type too).
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
    /// Where its validity word is; its fields follow at their [`FieldLayout::off`]sets.
    pub loc: Loc,
    /// Its header type's layout (index into [`Program::headers`]).
    pub layout: HeaderId,
}

/// A header stack in the frame.
#[derive(Clone, Debug, PartialEq)]
pub struct StackRef {
    /// The `nextIndex` word; element `i` starts at `loc + 1 + i * elem_words`.
    pub loc: Loc,
    /// Elements of the stack (its declared size, P4_16 §8.18).
    pub size: u32,
    /// Words of one element.
    pub elem_words: u32,
    /// Layout of each element (headers; for unions, see `union_members`).
    pub elem: StackElem,
}

/// What a stack holds.
#[derive(Clone, Debug, PartialEq)]
pub enum StackElem {
    /// Headers of this layout.
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
        /// Where the words go.
        dst: Loc,
        /// Where they come from.
        src: Loc,
        /// How many.
        words: u32,
    },
    /// Zeroes `words` words.
    Zero {
        /// The first word zeroed.
        dst: Loc,
        /// How many.
        words: u32,
    },
    /// `setValid()` / `setInvalid()` of the header whose validity word is at `hdr`; `others` are
    /// the validity words of the other members of its header union (made invalid by `setValid`),
    /// relative to `hdr` (as signed offsets).
    SetValid {
        /// The header's validity word.
        hdr: Loc,
        /// `setValid()` (true) or `setInvalid()` (false).
        valid: bool,
        /// Validity words of the union's other members, relative to `hdr`.
        others: Vec<i32>,
    },
    /// `if (cond) then else` (P4_16 §12.6); an empty `else` when there is none.
    If(Expr, Vec<Stmt>, Vec<Stmt>),
    /// Runs the body of the first case whose label equals the selector, else `default`.
    Switch {
        /// The selector: an `action_run` index, or a scalar (P4_16 §12.7).
        sel: Expr,
        /// Each case's labels and the index of its body in `bodies` (cases that fall through share
        /// one).
        cases: Vec<(Vec<u64>, usize)>,
        /// The bodies.
        bodies: Vec<Vec<Stmt>>,
        /// The `default` body's index, if there is one.
        default: Option<usize>,
    },
    /// `while (cond) { body; update }`; `break` and `continue` apply to it.
    Loop {
        /// Evaluated before every iteration; false ends the loop.
        cond: Expr,
        /// The loop's body.
        body: Vec<Stmt>,
        /// Runs after the body and after a `continue` (a `for` loop's update).
        update: Vec<Stmt>,
    },
    /// `break`: ends the innermost [`Stmt::Loop`] (P4_16 §12.8).
    Break,
    /// `continue`: runs the innermost loop's `update`, then its next iteration.
    Continue,
    /// Runs `copy_in`, the function's body, then `copy_out` (also after `exit` inside the body,
    /// P4_16 §12.4; not after a parser reject).
    Call {
        /// The function called.
        func: FnId,
        /// Stores of the `in` and `inout` arguments into the callee's parameters (P4_16 §6.8).
        copy_in: Vec<Stmt>,
        /// Stores of the `out` and `inout` parameters back into the arguments.
        copy_out: Vec<Stmt>,
    },
    /// Runs a sub-parser to completion, then `copy_out` (also when it rejects, as BMv2 does);
    /// its reject rejects the caller with the same error.
    CallParser {
        /// The sub-parser (P4_16 §13.10).
        parser: ParserId,
        /// Stores of the `in` and `inout` arguments into its parameters.
        copy_in: Vec<Stmt>,
        /// Stores of its `out` and `inout` parameters back into the arguments.
        copy_out: Vec<Stmt>,
    },
    /// `t.apply()`, storing whether it hit and the index of the action that ran.
    ApplyTable {
        /// The table applied (P4_16 §14.2.2).
        table: TableId,
        /// Word where `hit` (1) or `miss` (0) is stored, when the program reads it.
        hit: Option<u32>,
        /// Word where the index of the action that ran is stored (`action_run`), when the program
        /// switches on it.
        action_run: Option<u32>,
    },
    /// `return` (P4_16 §12.4): ends the enclosing function or action.
    Return,
    /// `exit` (P4_16 §12.5): ends every enclosing control.
    Exit,
    /// A call of an extern function or method.
    Extern(Box<ExternCall>),
    /// `pkt.extract(hdr)` / `pkt.extract(hdr, varbit_bits)`.
    Extract {
        /// The header extracted into (P4_16 §13.8).
        hdr: HdrRef,
        /// The varbit field's length in bits, for the two-argument form (§13.8.2).
        varbit_bits: Option<Expr>,
    },
    /// `pkt.extract(stack.next)` (or `stack.next.member` for a stack of header unions, `member`
    /// indexing the union's members): fails with `StackOutOfBounds` when the stack is full.
    ExtractNext {
        /// The stack.
        stack: StackRef,
        /// The union member extracted, for a stack of header unions.
        member: Option<u32>,
        /// The varbit field's length in bits, for the two-argument form.
        varbit_bits: Option<Expr>,
    },
    /// `pkt.lookahead<T>()` into a region with this layout.
    Lookahead {
        /// Where the value goes.
        dst: Loc,
        /// Its layout (P4_16 §13.8.3: the bits are read, the cursor stays).
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
        /// The stack.
        stack: StackRef,
        /// Elements shifted: positive pushes to the front, negative pops from it.
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
    /// A scalar.
    Scalar(Ty),
    /// A `varbit<max>`: a length word, then the value's words.
    Varbit(u32),
    /// A header of this layout: its validity word, then its fields.
    Header(HeaderId),
    /// Fields with their word offsets relative to the struct.
    Struct(Vec<(String, u32, Layout)>),
    /// Member headers with their word offsets.
    Union(Vec<(String, u32, HeaderId)>),
    /// A header stack or array: `nextIndex` word, then the elements.
    Stack {
        /// Each element's layout.
        elem: Box<Layout>,
        /// Elements.
        size: u32,
        /// Words of one element.
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
    /// The field's name as declared.
    pub name: String,
    /// Word offset from the header's validity word (≥ 1).
    pub off: u32,
    /// Its type (`bit<max>` for a varbit field).
    pub ty: Ty,
    /// `Some(max)` for a `varbit<max>` field (then `ty` is `bit<max>` and the word at `off` is
    /// the current length, the value follows).
    pub varbit: Option<u32>,
}

/// A header type's layout.
#[derive(Clone, Debug, PartialEq)]
pub struct HeaderLayout {
    /// The header type's name.
    pub name: String,
    /// Its fields in declaration order, which is the order on the wire (P4_16 §7.2.2).
    pub fields: Vec<FieldLayout>,
    /// Words in the frame, validity word included.
    pub words: u32,
    /// Bits of the fixed-width fields (varbit fields count 0).
    pub fixed_bits: u64,
}

/// A parser.
#[derive(Clone, Debug, PartialEq)]
pub struct Parser {
    /// The parser's control-plane name.
    pub name: String,
    /// Runs when the parser starts (local variable initialization).
    pub init: Vec<Stmt>,
    /// Its states; `accept` and `reject` are [`Target`]s, not states (P4_16 §13.4).
    pub states: Vec<State>,
    /// Index of `start`.
    pub start: u32,
}

/// A parser state.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    /// The state's name as declared.
    pub name: String,
    /// Its statements, run in order.
    pub body: Vec<Stmt>,
    /// Where it goes after them (P4_16 §13.5).
    pub next: Transition,
}

/// Where a transition goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// `accept`: the parser ends successfully.
    Accept,
    /// `reject`: the parser ends with its error (P4_16 §13.3).
    Reject,
    /// A state of the parser, by index into [`Parser::states`].
    State(u32),
}

/// A state's transition.
#[derive(Clone, Debug, PartialEq)]
pub enum Transition {
    /// `transition target;`.
    Go(Target),
    /// `select(keys) { cases }`; no matching case rejects with `NoMatch`.
    Select {
        /// The select's keys (P4_16 §13.6).
        keys: Vec<Expr>,
        /// Its cases, tried in order; the first that matches wins.
        cases: Vec<SelectCase>,
    },
}

/// One `keyset: state` of a select.
#[derive(Clone, Debug, PartialEq)]
pub struct SelectCase {
    /// One keyset per key.
    pub keysets: Vec<KeySet>,
    /// Where the parser goes when the case matches.
    pub next: Target,
}

/// A keyset element.
#[derive(Clone, Debug, PartialEq)]
pub enum KeySet {
    /// `default` / `_`.
    Any,
    /// Exactly this value.
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
    /// The value set's control-plane name (P4_16 §13.11).
    pub name: String,
    /// The most members the control plane may put in it (its size argument).
    pub size: u32,
    /// Widths of the members' components (one per select key it is used with).
    pub widths: Vec<u32>,
    /// The element type (a struct gives one match field per member).
    pub elem: CpType,
    /// Its annotations, for P4Info.
    pub annotations: Annotations,
}

/// A function body: an action, a P4 function, or a control's apply block.
#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    /// The control-plane name (fully qualified for actions).
    pub name: String,
    /// What it is.
    pub kind: FnKind,
    /// Its statements.
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
    /// An action (P4_16 §14.1).
    Action,
    /// A P4 function (P4_16 §10).
    Function,
    /// A control's `apply` block (P4_16 §14).
    Control,
}

/// Match kind of a table key field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MatchKind {
    /// `exact`: the field equals the entry's value (P4_16 §14.2.1.1).
    Exact,
    /// `lpm`: the entry's prefix of the field matches; the longest matching prefix wins.
    Lpm,
    /// `ternary`: the field's bits under the entry's mask match; the highest priority wins.
    Ternary,
    /// `range` (v1model, PSA, PNA): the field lies in the entry's inclusive bounds.
    Range,
    /// `optional` (v1model, PSA, PNA): exact, or any value when the entry leaves it out.
    Optional,
    /// `selector` (action selectors): not part of the match.
    Selector,
}

/// One key field of a table.
#[derive(Clone, Debug, PartialEq)]
pub struct TableKey {
    /// Control-plane name (`@name` or the expression as written).
    pub name: String,
    /// The key's value, evaluated when the table is applied.
    pub expr: Expr,
    /// How it is matched.
    pub kind: MatchKind,
    /// The key expression's type.
    pub ty: CpType,
    /// Its annotations, for P4Info.
    pub annotations: Annotations,
}

/// A parameter of a table action (directionless: supplied by the entry).
#[derive(Clone, Debug, PartialEq)]
pub struct ActionParam {
    /// The parameter's name as declared.
    pub name: String,
    /// Its type.
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
    /// The action's function.
    pub func: FnId,
    /// Directionless parameters, in order; packed back to back, each `ceil(w/8)` bytes,
    /// big-endian.
    pub params: Vec<ActionParam>,
    /// Copy-in / copy-out of the directional arguments bound in the `actions` list.
    pub copy_in: Vec<Stmt>,
    /// Stores of the action's `out`/`inout` parameters back into the bound arguments.
    pub copy_out: Vec<Stmt>,
    /// `@defaultonly`: only the default action may be this one (P4_16 §14.2.1.2).
    pub default_only: bool,
    /// `@tableonly`: never the default action.
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
    /// The field's value.
    Exact(Val),
    /// A prefix: the value and the prefix's length in bits.
    Lpm(Val, u32),
    /// Value and mask (`value &&& mask`).
    Ternary(Val, Val),
    /// Inclusive bounds (`lo .. hi`).
    Range(Val, Val),
    /// `_` / `default`.
    Any,
}

/// An entry of an `entries` property.
#[derive(Clone, Debug, PartialEq)]
pub struct ConstEntry {
    /// One match per key field, in key order (P4_16 §14.2.1.4).
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
    /// Entries do not age.
    #[default]
    None,
    /// The control plane is told when an entry has been idle for its timeout (PNA's
    /// `NOTIFY_CONTROL`, v1model's `support_timeout`, PSA's `psa_idle_timeout`).
    NotifyControl,
    /// An entry idle for its expire time is deleted by the data plane (PNA's `AUTO_DELETE`).
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
    /// Its key fields, in order (P4_16 §14.2.1.1); empty for a keyless table.
    pub keys: Vec<TableKey>,
    /// The actions it may run (P4_16 §14.2.1.2), in the `actions` list's order.
    pub actions: Vec<TableAction>,
    /// Index of the default action and its packed parameters (`None`: no action runs on a miss).
    pub default_action: Option<(u32, Vec<u8>)>,
    /// `const default_action`: the control plane may not change it (P4_16 §14.2.1.3).
    pub default_const: bool,
    /// The entries the program gives it (`entries`, P4_16 §14.2.1.4).
    pub entries: Vec<ConstEntry>,
    /// `const entries`: the control plane may not change them.
    pub entries_const: bool,
    /// The most entries it holds (`declared_size`, else the default size; P4_16 §14.2.1.5).
    pub size: u64,
    /// PNA's `add_on_miss = true`: the miss action may insert with `add_entry`.
    pub add_on_miss: bool,
    /// Whether and how its entries age.
    pub idle_timeout: IdleTimeout,
    /// Its direct counter (`counters`/`pna_direct_counter`/`psa_direct_counter`), if any.
    pub direct_counter: Option<ExternId>,
    /// Its direct meter (`meters`/`pna_direct_meter`/`psa_direct_meter`), if any.
    pub direct_meter: Option<ExternId>,
    /// An action profile / selector providing the actions (entries then name members).
    pub implementation: Option<ExternId>,
    /// Its annotations, for P4Info.
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
        /// Cells.
        size: u32,
        /// What each cell counts.
        kind: CounterKind,
    },
    /// A direct counter: one cell per entry of the table it is attached to.
    DirectCounter {
        /// What each cell counts.
        kind: CounterKind,
    },
    /// An indexed two-rate three-color meter (RFC 2698).
    Meter {
        /// Cells.
        size: u32,
        /// Measures bytes rather than packets.
        bytes: bool,
    },
    /// A direct meter: one per entry of the table it is attached to.
    DirectMeter {
        /// Measures bytes rather than packets.
        bytes: bool,
    },
    /// Cells of `layout` (a scalar, or a struct of scalars), initialized to `init`.
    Register {
        /// Cells.
        size: u32,
        /// Each cell's layout.
        layout: Layout,
        /// Each cell's initial words.
        init: Vec<u64>,
    },
    /// `Hash<T>` (PNA/PSA): `get_hash` computes `algo` over its data.
    Hash {
        /// The algorithm.
        algo: HashAlgo,
    },
    /// `Checksum<W>` (PNA/PSA) and v1model's `Checksum16`: state is `state` words in the frame.
    Checksum {
        /// The algorithm.
        algo: HashAlgo,
        /// Word offset of the state.
        state: u32,
    },
    /// `InternetChecksum`: state (the running one's-complement sum) at `state` in the frame.
    InternetChecksum {
        /// Word offset of the state.
        state: u32,
    },
    /// `Random<T>(lo, hi)` (PNA/PSA): `read` gives a value in `lo..=hi`.
    Random {
        /// The smallest value.
        lo: u64,
        /// The largest value.
        hi: u64,
        /// The values' type.
        ty: Ty,
    },
    /// PNA/PSA `Digest<T>`: messages of `layout`.
    Digest {
        /// The message's layout.
        layout: Layout,
    },
    /// An action profile: `size` members the control plane programs, shared by the tables that
    /// name it as their `implementation`.
    ActionProfile {
        /// The most members.
        size: u32,
    },
    /// An action selector: an action profile whose groups choose a member by hashing the table's
    /// `selector` key fields with `algo`.
    ActionSelector {
        /// The most members.
        size: u32,
        /// The hash that chooses a group's member.
        algo: HashAlgo,
    },
}

/// What a counter counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CounterKind {
    /// Packets.
    Packets,
    /// Bytes.
    Bytes,
    /// Packets and bytes.
    PacketsAndBytes,
}

/// Hash and checksum algorithms (v1model `HashAlgorithm`, PNA/PSA `*_HashAlgorithm_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HashAlgo {
    /// The data itself, truncated to the result's width.
    Identity,
    /// CRC-16/ARC (reflected, polynomial 0x8005, init 0), BMv2's `crc16`.
    Crc16,
    /// A CRC-16 whose parameters the control plane may set (v1model's `crc16_custom`).
    Crc16Custom,
    /// CRC-32 (IEEE 802.3: reflected, polynomial 0x04C11DB7), BMv2's `crc32`.
    Crc32,
    /// A CRC-32 whose parameters the control plane may set (v1model's `crc32_custom`).
    Crc32Custom,
    /// CRC-64/ECMA-182 (polynomial 0x42F0E1EBA9EA3693, init 0).
    Crc64,
    /// The 16-bit one's complement sum of the Internet checksum (RFC 1071).
    Csum16,
    /// The XOR of the data's 16-bit words.
    Xor16,
    /// A random value (v1model's `random`, PSA's `RANDOM`).
    Random,
    /// The target's choice (PNA/PSA `TARGET_DEFAULT`).
    TargetDefault,
}

/// An extern instance.
#[derive(Clone, Debug, PartialEq)]
pub struct ExternInst {
    /// Control-plane name (fully qualified; one constructed in a table property is named by
    /// the property's `@name`, else `table.property`).
    pub name: String,
    /// What it is, with its constructor arguments.
    pub kind: ExternKind,
    /// Where it was made, which decides whether the control plane sees it.
    pub site: ExternSite,
    /// The declared instance's type arguments (`register<bit<32>>` → `[bit<32>]`).
    pub type_args: Vec<CpType>,
    /// Its annotations, for P4Info.
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
    /// `count(index)` of an indexed counter.
    CounterCount,
    /// `count()` of a direct counter: the cell of the entry that matched.
    DirectCounterCount,
    /// `colors`: the program's codes for green, yellow and red.
    MeterExecute {
        /// The program's codes for green, yellow and red.
        colors: [u64; 3],
    },
    /// `execute()` of a direct meter: the meter of the entry that matched.
    DirectMeterExecute {
        /// The program's codes for green, yellow and red.
        colors: [u64; 3],
    },
    /// v1model `direct_meter.read(out)`.
    DirectMeterRead {
        /// The program's codes for green, yellow and red.
        colors: [u64; 3],
    },
    /// `read(index)` of a register (an index out of range reads 0).
    RegisterRead,
    /// `write(index, value)` of a register (an index out of range writes nothing).
    RegisterWrite,
    /// `get_hash(data)` or `get_hash(base, data, max)` of a `Hash` instance.
    HashGet,
    /// `clear()` of a `Checksum` instance.
    ChecksumClear,
    /// `update(data)` of a `Checksum` instance.
    ChecksumUpdate,
    /// `get()` of a `Checksum` instance.
    ChecksumGet,
    /// `InternetChecksum.add`/`subtract`.
    CsumAdd,
    /// `InternetChecksum.subtract(data)`.
    CsumSubtract,
    /// `InternetChecksum.get_state()`.
    CsumGetState,
    /// `InternetChecksum.set_state(state)`.
    CsumSetState,
    /// `read()` of a `Random` instance.
    RandomRead,
    /// `pack(data)` of a `Digest` instance: a message for the control plane.
    DigestPack,
    // ---- core / v1model functions
    /// v1model's `mark_to_drop(standard_metadata)`.
    MarkToDrop,
    /// `hash(out result, algo, base, data, max)`.
    V1Hash(HashAlgo),
    /// `random(out, lo, hi)`.
    V1Random,
    /// v1model's `verify_checksum(cond, data, checksum, algo)` and `verify_checksum_with_payload`.
    VerifyChecksum {
        /// The algorithm.
        algo: HashAlgo,
        /// `verify_checksum_with_payload`: the packet's payload is part of the data.
        with_payload: bool,
    },
    /// v1model's `update_checksum(cond, data, checksum, algo)` and `update_checksum_with_payload`.
    UpdateChecksum {
        /// The algorithm.
        algo: HashAlgo,
        /// `update_checksum_with_payload`: the packet's payload is part of the data.
        with_payload: bool,
    },
    /// v1model's `resubmit_preserving_field_list(index)`.
    Resubmit,
    /// v1model's `recirculate_preserving_field_list(index)`.
    Recirculate,
    /// v1model's `clone(type, session)` and `clone_preserving_field_list`.
    Clone,
    /// v1model's `truncate(length)`: the packet sent is cut to `length` bytes.
    Truncate,
    /// `digest<T>(receiver, data)`.
    V1Digest,
    /// v1model's `assert(cond)`: a false condition aborts the packet.
    Assert,
    /// v1model's `assume(cond)`: as `assert`.
    Assume,
    /// v1model's `log_msg(message[, data])`: a line to the log.
    Log,
    // ---- PNA
    /// PNA's `send_to_port(port)`.
    SendToPort,
    /// PNA's `drop_packet()`.
    DropPacket,
    /// PNA's `mirror_packet(slot, session)`.
    MirrorPacket,
    /// The old PNA dialect's `recirculate()`.
    PnaRecirculate,
    /// `add_entry[_if](...)`: the action (function) to add; arguments: [cond?, params data,
    /// profile]; result: `success` on success, `1 - success` otherwise.
    AddEntry {
        /// The action the entry runs.
        func: FnId,
        /// `add_entry_if`: the first argument is the condition.
        conditional: bool,
        /// The value the call returns when the entry was added.
        success: u64,
    },
    /// PNA's `set_entry_expire_time[_if](profile)`: the matched entry's expire profile.
    SetEntryExpireTime {
        /// `set_entry_expire_time_if`: the first argument is the condition.
        conditional: bool,
    },
    /// PNA's `restart_expire_timer()`: the matched entry's timer starts again.
    RestartExpireTimer,
    /// PNA's `update_expire_info(...)` (the old dialect).
    UpdateExpireInfo,
    /// PNA's `is_net_port(port)`.
    IsNetPort,
    /// PNA's `is_host_port(port)`.
    IsHostPort,
    /// PNA's `allocate_flow_id()`.
    AllocateFlowId,
    /// `packet_in.length()` in bytes.
    PacketLength,
}

/// An extern call: operation, instance (for methods), arguments, and where the result goes.
#[derive(Clone, Debug, PartialEq)]
pub struct ExternCall {
    /// The operation.
    pub op: XOp,
    /// The instance, for a method; `None` for an extern function.
    pub inst: Option<ExternId>,
    /// The arguments, in the declaration's parameter order.
    pub args: Vec<XArg>,
    /// Where the result is stored, and its type; `None` when it is unused or there is none.
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
    /// v1model (`V1Switch`).
    V1Model,
    /// Old (four blocks, pre-v0.7) PNA dialect.
    PnaV06,
    /// New (three blocks, v0.7+) PNA dialect.
    PnaV07,
    /// PSA (`PSA_Switch`).
    Psa,
}

/// A parameter of an architecture block, bound to a frame region.
#[derive(Clone, Debug, PartialEq)]
pub struct BlockParam {
    /// The parameter's name as declared.
    pub name: String,
    /// The declared type's name (e.g. `standard_metadata_t`).
    pub type_name: String,
    /// `None` for `packet_in`/`packet_out`.
    pub region: Option<u32>,
    /// The region's layout; `None` for `packet_in`/`packet_out`.
    pub layout: Option<Layout>,
}

/// What an architecture block runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockBody {
    /// A parser.
    Parser(ParserId),
    /// A control (its `apply` block's function).
    Control(FnId),
}

/// One block passed to the `main` package.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    /// The package's parameter name (e.g. `ig`, `main_control`).
    pub role: String,
    /// The block's declaration name.
    pub name: String,
    /// What it runs.
    pub body: BlockBody,
    /// Its parameters, in order.
    pub params: Vec<BlockParam>,
}

/// A lowered program.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    /// The architecture, which decides how packets flow through `blocks`.
    pub arch: Arch,
    /// Words of a frame.
    pub frame_words: u32,
    /// Words at the start of the frame that are zeroed for every packet (headers invalid,
    /// metadata and variables zero); the rest holds temporaries.
    pub zero_words: u32,
    /// The blocks passed to `main`, in the package's parameter order.
    pub blocks: Vec<Block>,
    /// Actions, P4 functions and control bodies ([`FnId`]).
    pub functions: Vec<Function>,
    /// Parsers ([`ParserId`]).
    pub parsers: Vec<Parser>,
    /// Tables ([`TableId`]).
    pub tables: Vec<Table>,
    /// Extern instances ([`ExternId`]).
    pub externs: Vec<ExternInst>,
    /// Header type layouts ([`HeaderId`]).
    pub headers: Vec<HeaderLayout>,
    /// Parser value sets ([`ValueSetId`]).
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
    /// `NoError`.
    pub const NO_ERROR: u64 = 0;
    /// `PacketTooShort`: an `extract` past the packet's end (P4_16 §13.8.1).
    pub const PACKET_TOO_SHORT: u64 = 1;
    /// `NoMatch`: no case of a `select` matched (P4_16 §13.6).
    pub const NO_MATCH: u64 = 2;
    /// `StackOutOfBounds`: `next` of a full header stack (P4_16 §13.9).
    pub const STACK_OUT_OF_BOUNDS: u64 = 3;
    /// `HeaderTooShort`: a varbit length beyond the field's maximum (P4_16 §13.8.2).
    pub const HEADER_TOO_SHORT: u64 = 4;
    /// `ParserTimeout`: the parser ran too many states.
    pub const PARSER_TIMEOUT: u64 = 5;
    /// `ParserInvalidArgument`: a parser operation given a value it does not support.
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
