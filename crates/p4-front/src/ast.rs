//! The abstract syntax tree of a P4_16 program (P4_16 spec v1.2.4, Appendix "P4 grammar").
//!
//! The tree is exactly what the source says: no name is resolved and no type is inferred here.
//! Every node carries a [`Span`]; every expression carries a [`NodeId`], unique within one parse,
//! so that later phases keep their results (types, resolved declarations, constant values) in side
//! tables keyed by id instead of mutating the tree.

use crate::source::Span;
use num_bigint::BigInt;

/// Unique id of an expression within one [`Program`]; dense from 0, assigned by the parser.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u32);

/// An identifier as written (also used for keywords that name things, e.g. `apply`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

/// A possibly top-level-qualified name: `x` or `.x` (spec §6.8 "Name resolution").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Path {
    /// `true` for `.x`: resolve in the top-level scope only.
    pub global: bool,
    pub name: Ident,
    pub span: Span,
}

/// The whole program after preprocessing: its top-level declarations in source order.
#[derive(Clone, Debug, Default)]
pub struct Program {
    pub decls: Vec<Decl>,
    /// Number of [`NodeId`]s handed out; ids are `0..node_count`.
    pub node_count: u32,
}

// ---------------------------------------------------------------------------------------------
// Annotations (spec §18)

#[derive(Clone, Debug)]
pub struct Annotation {
    pub name: Ident,
    pub body: AnnotationBody,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum AnnotationBody {
    /// `@name`
    Empty,
    /// `@name(e1, e2, ...)` where the body parses as a list of expressions.
    Expressions(Vec<Expr>),
    /// `@name[k1 = e1, k2 = e2]` (structured, key-value).
    KeyValues(Vec<(Ident, Expr)>),
    /// `@name[e1, e2]` (structured, expression list).
    StructuredExpressions(Vec<Expr>),
    /// `@name(...)` whose body is not a list of expressions: the raw token text, kept verbatim.
    Unparsed(String),
}

pub type Annotations = Vec<Annotation>;

// ---------------------------------------------------------------------------------------------
// Types (spec §7)

#[derive(Clone, Debug)]
pub struct TypeRef {
    pub kind: TypeKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum TypeKind {
    Bool,
    Error,
    MatchKind,
    String,
    Void,
    /// `int`: arbitrary-precision integer (compile-time only).
    Int,
    /// `bit<W>`; plain `bit` is `bit<1>`.
    Bit(Box<Expr>),
    /// `int<W>`
    SignedInt(Box<Expr>),
    /// `varbit<W>`
    Varbit(Box<Expr>),
    /// A declared type or type variable: `T`, `.T`.
    Named(Path),
    /// A generic type applied to arguments: `Register<bit<32>, bit<16>>`.
    Specialized(Path, Vec<TypeRef>),
    /// Header stack `T[size]`.
    Stack(Box<TypeRef>, Box<Expr>),
    /// `tuple<T1, T2>`
    Tuple(Vec<TypeRef>),
    /// `list<T>` (spec §7.2.8)
    List(Box<TypeRef>),
    /// `_` as a type argument: to be inferred.
    DontCare,
}

// ---------------------------------------------------------------------------------------------
// Declarations

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// No direction: a compile-time (directionless) parameter.
    None,
    In,
    Out,
    InOut,
}

/// A parameter of an action, function, method, parser, control, package or constructor.
#[derive(Clone, Debug)]
pub struct Param {
    pub annotations: Annotations,
    pub direction: Direction,
    pub ty: TypeRef,
    pub name: Ident,
    /// Default value (spec §6.8.2 "Optional parameters and default values").
    pub default: Option<Expr>,
    pub span: Span,
}

/// Signature shared by functions, extern functions and extern methods.
#[derive(Clone, Debug)]
pub struct FunctionProto {
    pub annotations: Annotations,
    /// `abstract` extern methods (spec §7.2.10.2).
    pub is_abstract: bool,
    /// Return type; `None` for an extern constructor.
    pub ret: Option<TypeRef>,
    pub name: Ident,
    pub type_params: Vec<Ident>,
    pub params: Vec<Param>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Decl {
    pub kind: DeclKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum DeclKind {
    Const(ConstDecl),
    /// A variable (only as a local of a control/parser/block).
    Variable(VariableDecl),
    /// `typedef T N;` or `type T N;` (`is_new_type`).
    Typedef(TypedefDecl),
    Header(StructDecl),
    HeaderUnion(StructDecl),
    Struct(StructDecl),
    Enum(EnumDecl),
    /// `error { ... }`: adds members to the single `error` type (spec §7.1.2).
    Error(Vec<Ident>),
    /// `match_kind { ... }`
    MatchKind(Vec<Ident>),
    Extern(ExternDecl),
    ExternFunction(FunctionProto),
    ParserType(TypeProto),
    ControlType(TypeProto),
    PackageType(TypeProto),
    Parser(ParserDecl),
    Control(ControlDecl),
    Action(ActionDecl),
    Function(FunctionDecl),
    Table(TableDecl),
    Instantiation(Instantiation),
    ValueSet(ValueSetDecl),
}

impl Decl {
    /// The declared name, if the declaration has one.
    pub fn name(&self) -> Option<&Ident> {
        match &self.kind {
            DeclKind::Const(d) => Some(&d.name),
            DeclKind::Variable(d) => Some(&d.name),
            DeclKind::Typedef(d) => Some(&d.name),
            DeclKind::Header(d) | DeclKind::HeaderUnion(d) | DeclKind::Struct(d) => Some(&d.name),
            DeclKind::Enum(d) => Some(&d.name),
            DeclKind::Error(_) | DeclKind::MatchKind(_) => None,
            DeclKind::Extern(d) => Some(&d.name),
            DeclKind::ExternFunction(d) => Some(&d.name),
            DeclKind::ParserType(d) | DeclKind::ControlType(d) | DeclKind::PackageType(d) => {
                Some(&d.name)
            }
            DeclKind::Parser(d) => Some(&d.name),
            DeclKind::Control(d) => Some(&d.name),
            DeclKind::Action(d) => Some(&d.name),
            DeclKind::Function(d) => Some(&d.proto.name),
            DeclKind::Table(d) => Some(&d.name),
            DeclKind::Instantiation(d) => Some(&d.name),
            DeclKind::ValueSet(d) => Some(&d.name),
        }
    }
}

#[derive(Clone, Debug)]
pub struct ConstDecl {
    pub annotations: Annotations,
    pub ty: TypeRef,
    pub name: Ident,
    pub value: Expr,
}

#[derive(Clone, Debug)]
pub struct VariableDecl {
    pub annotations: Annotations,
    pub ty: TypeRef,
    pub name: Ident,
    pub init: Option<Expr>,
}

#[derive(Clone, Debug)]
pub struct TypedefDecl {
    pub annotations: Annotations,
    /// `type` (a new type, spec §7.6) rather than `typedef` (an alias).
    pub is_new_type: bool,
    pub ty: TypeRef,
    pub name: Ident,
}

/// `header`, `header_union` or `struct`; may be generic (spec §7.2.12).
#[derive(Clone, Debug)]
pub struct StructDecl {
    pub annotations: Annotations,
    pub name: Ident,
    pub type_params: Vec<Ident>,
    pub fields: Vec<Field>,
}

#[derive(Clone, Debug)]
pub struct Field {
    pub annotations: Annotations,
    pub ty: TypeRef,
    pub name: Ident,
    pub span: Span,
}

/// `enum N { A, B }` or serializable `enum bit<8> N { A = 1, B = 2 }` (spec §7.2.1).
#[derive(Clone, Debug)]
pub struct EnumDecl {
    pub annotations: Annotations,
    pub underlying: Option<TypeRef>,
    pub name: Ident,
    pub members: Vec<EnumMember>,
}

#[derive(Clone, Debug)]
pub struct EnumMember {
    pub annotations: Annotations,
    pub name: Ident,
    pub value: Option<Expr>,
}

/// `extern N<T> { ctor; methods }` (spec §7.2.10).
#[derive(Clone, Debug)]
pub struct ExternDecl {
    pub annotations: Annotations,
    pub name: Ident,
    pub type_params: Vec<Ident>,
    /// Constructors have `ret == None` and `name == extern name`.
    pub methods: Vec<FunctionProto>,
}

/// The signature of a parser, control or package type.
#[derive(Clone, Debug)]
pub struct TypeProto {
    pub annotations: Annotations,
    pub name: Ident,
    pub type_params: Vec<Ident>,
    pub params: Vec<Param>,
    pub span: Span,
}

/// `parser P(...)(ctor params) { locals; states }` (spec §12).
#[derive(Clone, Debug)]
pub struct ParserDecl {
    pub annotations: Annotations,
    pub name: Ident,
    pub type_params: Vec<Ident>,
    pub params: Vec<Param>,
    pub ctor_params: Vec<Param>,
    pub locals: Vec<Decl>,
    pub states: Vec<ParserState>,
}

#[derive(Clone, Debug)]
pub struct ParserState {
    pub annotations: Annotations,
    pub name: Ident,
    pub stmts: Vec<Stmt>,
    /// `None` only for a state with no transition (an error the checker reports; implicitly reject).
    pub transition: Option<Transition>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum Transition {
    /// `transition s;` (the target is a path: a state name, `accept` or `reject`).
    Direct(Path),
    /// `transition select(e1, e2) { keyset: state; ... }`
    Select {
        exprs: Vec<Expr>,
        cases: Vec<SelectCase>,
        span: Span,
    },
}

#[derive(Clone, Debug)]
pub struct SelectCase {
    pub annotations: Annotations,
    /// A keyset expression: a value, `v &&& m`, `lo .. hi`, `default`, `_`, a value set name,
    /// or a tuple of these written `(k1, k2)` (as [`ExprKind::List`]).
    pub keyset: Expr,
    pub next: Path,
    pub span: Span,
}

/// `control C(...)(ctor params) { locals; apply { ... } }` (spec §13).
#[derive(Clone, Debug)]
pub struct ControlDecl {
    pub annotations: Annotations,
    pub name: Ident,
    pub type_params: Vec<Ident>,
    pub params: Vec<Param>,
    pub ctor_params: Vec<Param>,
    pub locals: Vec<Decl>,
    pub apply: Block,
}

/// `action a(params) { body }` (spec §14.1).
#[derive(Clone, Debug)]
pub struct ActionDecl {
    pub annotations: Annotations,
    pub name: Ident,
    pub params: Vec<Param>,
    pub body: Block,
}

/// A function with a body (spec §10).
#[derive(Clone, Debug)]
pub struct FunctionDecl {
    pub proto: FunctionProto,
    pub body: Block,
}

/// `table t { properties }` (spec §14.2).
#[derive(Clone, Debug)]
pub struct TableDecl {
    pub annotations: Annotations,
    pub name: Ident,
    pub properties: Vec<TableProperty>,
}

#[derive(Clone, Debug)]
pub struct TableProperty {
    pub annotations: Annotations,
    /// `const` before the property name.
    pub is_const: bool,
    pub kind: TablePropertyKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum TablePropertyKind {
    Key(Vec<KeyElement>),
    Actions(Vec<ActionRef>),
    Entries(Vec<Entry>),
    /// Any other property, e.g. `default_action = a(1);`, `size = 1024;`,
    /// `implementation = ...;`, `add_on_miss = true;`, `pna_idle_timeout = ...;`.
    Other {
        name: Ident,
        value: Expr,
    },
}

#[derive(Clone, Debug)]
pub struct KeyElement {
    pub annotations: Annotations,
    pub expr: Expr,
    pub match_kind: Path,
    pub span: Span,
}

/// An action named in a table's `actions` list, or the action of an entry.
#[derive(Clone, Debug)]
pub struct ActionRef {
    pub annotations: Annotations,
    pub name: Path,
    /// `None` when written without parentheses.
    pub args: Option<Vec<Arg>>,
    pub span: Span,
}

/// One entry of `entries = { ... }` (spec §14.2.1.4).
#[derive(Clone, Debug)]
pub struct Entry {
    pub annotations: Annotations,
    /// `const` before an entry (for non-const `entries` lists).
    pub is_const: bool,
    /// `priority = e :`
    pub priority: Option<Expr>,
    /// The keyset (a tuple written `(k1, k2)` is [`ExprKind::List`]).
    pub keyset: Expr,
    pub action: ActionRef,
    pub span: Span,
}

/// `T(args) name;` or `T(args) name = { abstract method bodies };` (spec §11.3).
#[derive(Clone, Debug)]
pub struct Instantiation {
    pub annotations: Annotations,
    pub ty: TypeRef,
    pub args: Vec<Arg>,
    pub name: Ident,
    /// Implementations of abstract extern methods.
    pub initializer: Option<Vec<Decl>>,
}

/// `value_set<T>(size) name;` (spec §12.11).
#[derive(Clone, Debug)]
pub struct ValueSetDecl {
    pub annotations: Annotations,
    pub elem_ty: TypeRef,
    pub size: Expr,
    pub name: Ident,
}

// ---------------------------------------------------------------------------------------------
// Statements (spec §11)

#[derive(Clone, Debug)]
pub struct Block {
    pub annotations: Annotations,
    pub stmts: Vec<Stmt>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum StmtKind {
    /// `lhs = rhs;`
    Assign(Expr, Expr),
    /// `lhs op= rhs;` (compound assignment as p4c accepts it).
    OpAssign(BinOp, Expr, Expr),
    /// A method or function call used as a statement: `t.apply();`, `f(x);`.
    Call(Expr),
    Empty,
    Block(Block),
    If {
        cond: Expr,
        then: Box<Stmt>,
        otherwise: Option<Box<Stmt>>,
    },
    Switch {
        expr: Expr,
        cases: Vec<SwitchCase>,
    },
    Exit,
    Return(Option<Expr>),
    /// A local constant or variable declaration (or, in a parser state, an instantiation).
    Decl(Box<Decl>),
    /// `for (init; cond; update) body` (spec v1.2.4 §11.8).
    For {
        init: Vec<Stmt>,
        cond: Option<Expr>,
        update: Vec<Stmt>,
        body: Box<Stmt>,
    },
    /// `for (T x in range) body`; `ty` is `None` for `for (x in range)`.
    ForIn {
        ty: Option<TypeRef>,
        var: Ident,
        range: Expr,
        body: Box<Stmt>,
    },
    Break,
    Continue,
}

#[derive(Clone, Debug)]
pub struct SwitchCase {
    pub label: SwitchLabel,
    /// `None` for a fall-through label `a:` with no block.
    pub body: Option<Block>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum SwitchLabel {
    Default(Span),
    /// An action name (switch on `t.apply().action_run`) or a constant expression.
    Expr(Expr),
}

// ---------------------------------------------------------------------------------------------
// Expressions (spec §8)

#[derive(Clone, Debug)]
pub struct Expr {
    pub id: NodeId,
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum ExprKind {
    Bool(bool),
    /// An integer literal. `width` is `Some((w, signed))` for `8w5`, `4s3`; `None` for `int`.
    Int {
        value: BigInt,
        width: Option<(u32, bool)>,
        /// The base it was written in (2, 8, 10 or 16): p4c's control-plane names print
        /// constants in it.
        radix: u32,
    },
    String(String),
    /// A name: variable, constant, parameter, action, table, instance, type (as in `T.minSizeInBits()`).
    Path(Path),
    /// A type used where an expression is expected: `error.X`, `bit<8>.minSizeInBits()`,
    /// the callee of a nameless instantiation `Counter<bit<32>>(...)` when written with type args.
    Type(TypeRef),
    /// `e.name`
    Member(Box<Expr>, Ident),
    /// `e[i]`
    Index(Box<Expr>, Box<Expr>),
    /// `e[hi:lo]`
    Slice(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `e[base +: width]`: the `width` bits starting at bit `base` (spec "Operations on fixed-width
    /// bit types"); `width` must be a compile-time constant.
    PlusSlice(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `f<T>(args)`, `e.m(args)`, `T(args)` (nameless instantiation).
    Call {
        callee: Box<Expr>,
        type_args: Vec<TypeRef>,
        args: Vec<Arg>,
    },
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `c ? a : b`
    Ternary(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `(T) e`
    Cast(TypeRef, Box<Expr>),
    /// `{ e1, e2 }`, also a parenthesised keyset tuple `(k1, k2)`; `has_dots` for a trailing `...`.
    List {
        items: Vec<Expr>,
        has_dots: bool,
    },
    /// `{ f1 = e1, f2 = e2 }`; `has_dots` for a trailing `...`.
    StructInit {
        fields: Vec<(Ident, Expr)>,
        has_dots: bool,
    },
    /// `{#}`: an invalid header or header union (spec §8.17).
    Invalid,
    /// `v &&& m` (keysets only)
    Mask(Box<Expr>, Box<Expr>),
    /// `lo .. hi` (keysets only)
    Range(Box<Expr>, Box<Expr>),
    /// `default` (keysets only)
    Default,
    /// `_`: don't care (keysets, out arguments)
    DontCare,
    /// `this` (in abstract method implementations)
    This,
    /// `...` on its own: the default value of the expected type (spec "Initializing with default
    /// values"). Inside `{ ... }` a trailing `...` is `has_dots` instead.
    Dots,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    /// `!`
    Not,
    /// `~`
    BitNot,
    /// `-`
    Neg,
    /// `+`
    Plus,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Mul,
    Div,
    Mod,
    Add,
    Sub,
    /// `|+|`
    AddSat,
    /// `|-|`
    SubSat,
    Shl,
    Shr,
    Le,
    Ge,
    Lt,
    Gt,
    Eq,
    Ne,
    BitAnd,
    BitXor,
    BitOr,
    /// `++`
    Concat,
    /// `&&`
    And,
    /// `||`
    Or,
}

impl BinOp {
    /// The operator as written in P4.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Mod => "%",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::AddSat => "|+|",
            BinOp::SubSat => "|-|",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::Le => "<=",
            BinOp::Ge => ">=",
            BinOp::Lt => "<",
            BinOp::Gt => ">",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::BitAnd => "&",
            BinOp::BitXor => "^",
            BinOp::BitOr => "|",
            BinOp::Concat => "++",
            BinOp::And => "&&",
            BinOp::Or => "||",
        }
    }
}

/// A call argument: positional or named (`name = value`); `_` is [`ExprKind::DontCare`].
#[derive(Clone, Debug)]
pub struct Arg {
    pub name: Option<Ident>,
    pub value: Expr,
    pub span: Span,
}

/// An integer literal's value in the base it was written in, as p4c prints constants: `0x`, `0o`
/// or `0b` before lowercase digits, `-` first for a negative value, no width.
pub fn int_text(v: &BigInt, radix: u32) -> String {
    let (prefix, radix) = match radix {
        16 => ("0x", 16),
        8 => ("0o", 8),
        2 => ("0b", 2),
        _ => ("", 10),
    };
    let sign = if v.sign() == num_bigint::Sign::Minus {
        "-"
    } else {
        ""
    };
    format!("{sign}{prefix}{}", v.magnitude().to_str_radix(radix))
}
