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
    /// The identifier's text.
    pub name: String,
    /// Where it is written.
    pub span: Span,
}

/// A possibly top-level-qualified name: `x` or `.x` (spec §6.9 "Name resolution").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Path {
    /// `true` for `.x`: resolve in the top-level scope only.
    pub global: bool,
    /// The name.
    pub name: Ident,
    /// Where it is in the preprocessed text.
    pub span: Span,
}

/// The whole program after preprocessing: its top-level declarations in source order.
#[derive(Clone, Debug, Default)]
pub struct Program {
    /// The top-level declarations, in source order.
    pub decls: Vec<Decl>,
    /// Number of [`NodeId`]s handed out; ids are `0..node_count`.
    pub node_count: u32,
}

// ---------------------------------------------------------------------------------------------
// Annotations (spec §20)

/// An annotation: `@name`, `@name(…)` or `@name[…]` (P4_16 §20).
#[derive(Clone, Debug)]
pub struct Annotation {
    /// The annotation's name, after `@`.
    pub name: Ident,
    /// What follows the name.
    pub body: AnnotationBody,
    /// Where it is in the preprocessed text.
    pub span: Span,
}

/// What an annotation says after its name (P4_16 §20.1, §20.2).
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

/// The annotations of one element, in source order.
pub type Annotations = Vec<Annotation>;

// ---------------------------------------------------------------------------------------------
// Types (spec §7)

/// A type as written (P4_16 §7).
#[derive(Clone, Debug)]
pub struct TypeRef {
    /// Which type.
    pub kind: TypeKind,
    /// Where the type is written.
    pub span: Span,
}

/// Which type a [`TypeRef`] writes.
#[derive(Clone, Debug)]
pub enum TypeKind {
    /// `bool` (P4_16 §7.1.4).
    Bool,
    /// `error` (P4_16 §7.1.2).
    Error,
    /// `match_kind` (P4_16 §7.1.3).
    MatchKind,
    /// `string` (P4_16 §7.1.5).
    String,
    /// `void` (P4_16 §7.1.1).
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
    /// `list<T>` (spec §7.2.7)
    List(Box<TypeRef>),
    /// `_` as a type argument: to be inferred.
    DontCare,
}

// ---------------------------------------------------------------------------------------------
// Declarations

/// A parameter's direction (P4_16 §6.8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// No direction: a compile-time (directionless) parameter.
    None,
    /// `in`: copied in, read-only (P4_16 §6.8).
    In,
    /// `out`: copied out; uninitialized on entry (P4_16 §6.8).
    Out,
    /// `inout`: copied in and out (P4_16 §6.8).
    InOut,
}

/// A parameter of an action, function, method, parser, control, package or constructor.
#[derive(Clone, Debug)]
pub struct Param {
    /// The annotations written before it (P4_16 §20).
    pub annotations: Annotations,
    /// `in`, `out`, `inout` or none (P4_16 §6.8).
    pub direction: Direction,
    /// Its declared type.
    pub ty: TypeRef,
    /// Its name.
    pub name: Ident,
    /// Default value (spec §6.8.2 "Optional parameters and default values").
    pub default: Option<Expr>,
    /// Where it is in the preprocessed text.
    pub span: Span,
}

/// Signature shared by functions, extern functions and extern methods.
#[derive(Clone, Debug)]
pub struct FunctionProto {
    /// The annotations written before it (P4_16 §20).
    pub annotations: Annotations,
    /// `abstract` extern methods (spec §7.2.10.2.1).
    pub is_abstract: bool,
    /// Return type; `None` for an extern constructor.
    pub ret: Option<TypeRef>,
    /// The function's or method's name (an extern's name for its constructor).
    pub name: Ident,
    /// Its type parameters (`<T, …>`, P4_16 §7.2.11); empty when it is not generic.
    pub type_params: Vec<Ident>,
    /// Its parameters, in order (P4_16 §6.8).
    pub params: Vec<Param>,
    /// Where it is in the preprocessed text.
    pub span: Span,
}

/// A declaration.
#[derive(Clone, Debug)]
pub struct Decl {
    /// Which declaration it is.
    pub kind: DeclKind,
    /// Where it is in the preprocessed text.
    pub span: Span,
}

/// Which declaration a [`Decl`] is.
#[derive(Clone, Debug)]
pub enum DeclKind {
    /// `const T n = e;` (P4_16 §11.1).
    Const(ConstDecl),
    /// A variable (only as a local of a control/parser/block).
    Variable(VariableDecl),
    /// `typedef T N;` or `type T N;` (`is_new_type`).
    Typedef(TypedefDecl),
    /// `header H { … }` (P4_16 §7.2.2).
    Header(StructDecl),
    /// `header_union U { … }` (P4_16 §7.2.4).
    HeaderUnion(StructDecl),
    /// `struct S { … }` (P4_16 §7.2.5).
    Struct(StructDecl),
    /// `enum` (P4_16 §7.2.1).
    Enum(EnumDecl),
    /// `error { ... }`: adds members to the single `error` type (spec §7.1.2).
    Error(Vec<Ident>),
    /// `match_kind { ... }`
    MatchKind(Vec<Ident>),
    /// `extern E { … }`: an extern object type (P4_16 §7.2.10.2).
    Extern(ExternDecl),
    /// `extern R f(…);`: an extern function (P4_16 §7.2.10.1).
    ExternFunction(FunctionProto),
    /// `parser P(…);`: a parser type (P4_16 §7.2.12.1).
    ParserType(TypeProto),
    /// `control C(…);`: a control type (P4_16 §7.2.12.2).
    ControlType(TypeProto),
    /// `package P(…);`: a package type (P4_16 §7.2.13).
    PackageType(TypeProto),
    /// A parser with its states (P4_16 §13.2).
    Parser(ParserDecl),
    /// A control with its `apply` block (P4_16 §14).
    Control(ControlDecl),
    /// An action (P4_16 §14.1).
    Action(ActionDecl),
    /// A function with a body (P4_16 §10).
    Function(FunctionDecl),
    /// A table (P4_16 §14.2).
    Table(TableDecl),
    /// An instance: `T(args) name;` (P4_16 §11.3).
    Instantiation(Instantiation),
    /// A parser value set (P4_16 §13.11).
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

/// `const T name = value;` (P4_16 §11.1).
#[derive(Clone, Debug)]
pub struct ConstDecl {
    /// The annotations written before it (P4_16 §20).
    pub annotations: Annotations,
    /// The declared type.
    pub ty: TypeRef,
    /// The constant's name.
    pub name: Ident,
    /// Its value, a compile-time known expression (P4_16 §18.1).
    pub value: Expr,
}

/// `T name;` or `T name = init;` (P4_16 §11.2).
#[derive(Clone, Debug)]
pub struct VariableDecl {
    /// The annotations written before it (P4_16 §20).
    pub annotations: Annotations,
    /// The declared type.
    pub ty: TypeRef,
    /// The variable's name.
    pub name: Ident,
    /// The initializer, if written; without one the value is unspecified (P4_16 §8.25).
    pub init: Option<Expr>,
}

/// `typedef T name;` (P4_16 §7.5) or `type T name;` (§7.6).
#[derive(Clone, Debug)]
pub struct TypedefDecl {
    /// The annotations written before it (P4_16 §20).
    pub annotations: Annotations,
    /// `type` (a new type, spec §7.6) rather than `typedef` (an alias).
    pub is_new_type: bool,
    /// The type it names.
    pub ty: TypeRef,
    /// The new name.
    pub name: Ident,
}

/// `header`, `header_union` or `struct`; may be generic (spec §7.2.11).
#[derive(Clone, Debug)]
pub struct StructDecl {
    /// The annotations written before it (P4_16 §20).
    pub annotations: Annotations,
    /// The type's name.
    pub name: Ident,
    /// Its type parameters (`<T, …>`, P4_16 §7.2.11); empty when it is not generic.
    pub type_params: Vec<Ident>,
    /// Its fields (a header union's members), in order.
    pub fields: Vec<Field>,
}

/// A field of a header, header union or struct.
#[derive(Clone, Debug)]
pub struct Field {
    /// The annotations written before it (P4_16 §20).
    pub annotations: Annotations,
    /// The field's type.
    pub ty: TypeRef,
    /// The field's name.
    pub name: Ident,
    /// Where it is in the preprocessed text.
    pub span: Span,
}

/// `enum N { A, B }` or serializable `enum bit<8> N { A = 1, B = 2 }` (spec §7.2.1).
#[derive(Clone, Debug)]
pub struct EnumDecl {
    /// The annotations written before it (P4_16 §20).
    pub annotations: Annotations,
    /// The underlying `bit<W>`/`int<W>` of a serializable enum; `None` for a plain one.
    pub underlying: Option<TypeRef>,
    /// The enum's name.
    pub name: Ident,
    /// Its members, in order.
    pub members: Vec<EnumMember>,
}

/// A member of an enum.
#[derive(Clone, Debug)]
pub struct EnumMember {
    /// The annotations written before it (P4_16 §20).
    pub annotations: Annotations,
    /// The member's name.
    pub name: Ident,
    /// Its value (`A = 1`), serializable enums only.
    pub value: Option<Expr>,
}

/// `extern N<T> { ctor; methods }` (spec §7.2.10).
#[derive(Clone, Debug)]
pub struct ExternDecl {
    /// The annotations written before it (P4_16 §20).
    pub annotations: Annotations,
    /// The extern's name.
    pub name: Ident,
    /// Its type parameters (`<T, …>`, P4_16 §7.2.11); empty when it is not generic.
    pub type_params: Vec<Ident>,
    /// Constructors have `ret == None` and `name == extern name`.
    pub methods: Vec<FunctionProto>,
}

/// The signature of a parser, control or package type.
#[derive(Clone, Debug)]
pub struct TypeProto {
    /// The annotations written before it (P4_16 §20).
    pub annotations: Annotations,
    /// The type's name.
    pub name: Ident,
    /// Its type parameters (`<T, …>`, P4_16 §7.2.11); empty when it is not generic.
    pub type_params: Vec<Ident>,
    /// Its parameters, in order (P4_16 §6.8).
    pub params: Vec<Param>,
    /// Where it is in the preprocessed text.
    pub span: Span,
}

/// `parser P(...)(ctor params) { locals; states }` (spec §13).
#[derive(Clone, Debug)]
pub struct ParserDecl {
    /// The annotations written before it (P4_16 §20).
    pub annotations: Annotations,
    /// The parser's name.
    pub name: Ident,
    /// Its type parameters (`<T, …>`, P4_16 §7.2.11); empty when it is not generic.
    pub type_params: Vec<Ident>,
    /// Its parameters, in order (P4_16 §6.8).
    pub params: Vec<Param>,
    /// Its constructor parameters: the second parameter list, bound when it is instantiated (P4_16 §15).
    pub ctor_params: Vec<Param>,
    /// Its local declarations (constants, variables, instantiations, and in a control its actions and tables), in order.
    pub locals: Vec<Decl>,
    /// Its states, in order (P4_16 §13.4).
    pub states: Vec<ParserState>,
}

/// `state name { statements transition }` (P4_16 §13.4).
#[derive(Clone, Debug)]
pub struct ParserState {
    /// The annotations written before it (P4_16 §20).
    pub annotations: Annotations,
    /// The state's name.
    pub name: Ident,
    /// Its statements, before the transition.
    pub stmts: Vec<Stmt>,
    /// `None` only for a state with no transition (an error the checker reports; implicitly reject).
    pub transition: Option<Transition>,
    /// Where it is in the preprocessed text.
    pub span: Span,
}

/// A parser state's transition (P4_16 §13.5).
#[derive(Clone, Debug)]
pub enum Transition {
    /// `transition s;` (the target is a path: a state name, `accept` or `reject`).
    Direct(Path),
    /// `transition select(e1, e2) { keyset: state; ... }`
    Select {
        /// The expressions selected on.
        exprs: Vec<Expr>,
        /// The cases, in order (P4_16 §13.6).
        cases: Vec<SelectCase>,
        /// Where the `select` is written.
        span: Span,
    },
}

/// `keyset: state;`, one case of a `select` (P4_16 §13.6).
#[derive(Clone, Debug)]
pub struct SelectCase {
    /// The annotations written before it (P4_16 §20).
    pub annotations: Annotations,
    /// A keyset expression: a value, `v &&& m`, `lo .. hi`, `default`, `_`, a value set name,
    /// or a tuple of these written `(k1, k2)` (as [`ExprKind::List`]).
    pub keyset: Expr,
    /// The state it goes to: a state name, `accept` or `reject`.
    pub next: Path,
    /// Where it is in the preprocessed text.
    pub span: Span,
}

/// `control C(...)(ctor params) { locals; apply { ... } }` (spec §14).
#[derive(Clone, Debug)]
pub struct ControlDecl {
    /// The annotations written before it (P4_16 §20).
    pub annotations: Annotations,
    /// The control's name.
    pub name: Ident,
    /// Its type parameters (`<T, …>`, P4_16 §7.2.11); empty when it is not generic.
    pub type_params: Vec<Ident>,
    /// Its parameters, in order (P4_16 §6.8).
    pub params: Vec<Param>,
    /// Its constructor parameters: the second parameter list, bound when it is instantiated (P4_16 §15).
    pub ctor_params: Vec<Param>,
    /// Its local declarations (constants, variables, instantiations, and in a control its actions and tables), in order.
    pub locals: Vec<Decl>,
    /// Its `apply` block.
    pub apply: Block,
}

/// `action a(params) { body }` (spec §14.1).
#[derive(Clone, Debug)]
pub struct ActionDecl {
    /// The annotations written before it (P4_16 §20).
    pub annotations: Annotations,
    /// The action's name.
    pub name: Ident,
    /// Its parameters: directional ones bound where it is called or listed, then directionless ones the control plane supplies (P4_16 §14.1).
    pub params: Vec<Param>,
    /// Its body.
    pub body: Block,
}

/// A function with a body (spec §10).
#[derive(Clone, Debug)]
pub struct FunctionDecl {
    /// Its signature.
    pub proto: FunctionProto,
    /// Its body.
    pub body: Block,
}

/// `table t { properties }` (spec §14.2).
#[derive(Clone, Debug)]
pub struct TableDecl {
    /// The annotations written before it (P4_16 §20).
    pub annotations: Annotations,
    /// The table's name.
    pub name: Ident,
    /// Its properties, in order (P4_16 §14.2.1).
    pub properties: Vec<TableProperty>,
}

/// One property of a table (P4_16 §14.2.1).
#[derive(Clone, Debug)]
pub struct TableProperty {
    /// The annotations written before it (P4_16 §20).
    pub annotations: Annotations,
    /// `const` before the property name.
    pub is_const: bool,
    /// Which property, with its value.
    pub kind: TablePropertyKind,
    /// Where it is in the preprocessed text.
    pub span: Span,
}

/// Which property a [`TableProperty`] is.
#[derive(Clone, Debug)]
pub enum TablePropertyKind {
    /// `key = { … }` (P4_16 §14.2.1.1).
    Key(Vec<KeyElement>),
    /// `actions = { … }` (P4_16 §14.2.1.2).
    Actions(Vec<ActionRef>),
    /// `entries = { … }` (P4_16 §14.2.1.4).
    Entries(Vec<Entry>),
    /// Any other property, e.g. `default_action = a(1);`, `size = 1024;`,
    /// `implementation = ...;`, `add_on_miss = true;`, `pna_idle_timeout = ...;`.
    Other {
        /// The property's name.
        name: Ident,
        /// Its value.
        value: Expr,
    },
}

/// `expr: match_kind;`, one field of a table's key (P4_16 §14.2.1.1).
#[derive(Clone, Debug)]
pub struct KeyElement {
    /// The annotations written before it (P4_16 §20).
    pub annotations: Annotations,
    /// The expression matched.
    pub expr: Expr,
    /// Its match kind (`exact`, `ternary`, `lpm`, … ; P4_16 §14.2.1.1).
    pub match_kind: Path,
    /// Where it is in the preprocessed text.
    pub span: Span,
}

/// An action named in a table's `actions` list, or the action of an entry.
#[derive(Clone, Debug)]
pub struct ActionRef {
    /// The annotations written before it (P4_16 §20).
    pub annotations: Annotations,
    /// The action's name.
    pub name: Path,
    /// `None` when written without parentheses.
    pub args: Option<Vec<Arg>>,
    /// Where it is in the preprocessed text.
    pub span: Span,
}

/// One entry of `entries = { ... }` (spec §14.2.1.4).
#[derive(Clone, Debug)]
pub struct Entry {
    /// The annotations written before it (P4_16 §20).
    pub annotations: Annotations,
    /// `const` before an entry (for non-const `entries` lists).
    pub is_const: bool,
    /// `priority = e :`
    pub priority: Option<Expr>,
    /// The keyset (a tuple written `(k1, k2)` is [`ExprKind::List`]).
    pub keyset: Expr,
    /// The action the entry runs, with its arguments.
    pub action: ActionRef,
    /// Where it is in the preprocessed text.
    pub span: Span,
}

/// `T(args) name;` or `T(args) name = { abstract method bodies };` (spec §11.3).
#[derive(Clone, Debug)]
pub struct Instantiation {
    /// The annotations written before it (P4_16 §20).
    pub annotations: Annotations,
    /// The type instantiated.
    pub ty: TypeRef,
    /// The constructor's arguments.
    pub args: Vec<Arg>,
    /// The instance's name.
    pub name: Ident,
    /// Implementations of abstract extern methods.
    pub initializer: Option<Vec<Decl>>,
}

/// `value_set<T>(size) name;` (spec §13.11).
#[derive(Clone, Debug)]
pub struct ValueSetDecl {
    /// The annotations written before it (P4_16 §20).
    pub annotations: Annotations,
    /// The type of its members (P4_16 §13.11).
    pub elem_ty: TypeRef,
    /// The most members the control plane may add.
    pub size: Expr,
    /// The value set's name.
    pub name: Ident,
}

// ---------------------------------------------------------------------------------------------
// Statements (spec §12)

/// `{ statements }` (P4_16 §12.3).
#[derive(Clone, Debug)]
pub struct Block {
    /// The annotations written before it (P4_16 §20).
    pub annotations: Annotations,
    /// Its statements, in order.
    pub stmts: Vec<Stmt>,
    /// Where it is in the preprocessed text.
    pub span: Span,
}

/// A statement (P4_16 §12).
#[derive(Clone, Debug)]
pub struct Stmt {
    /// Which statement.
    pub kind: StmtKind,
    /// Where it is in the preprocessed text.
    pub span: Span,
}

/// Which statement a [`Stmt`] is.
#[derive(Clone, Debug)]
pub enum StmtKind {
    /// `lhs = rhs;`
    Assign(Expr, Expr),
    /// `lhs op= rhs;` (compound assignment as p4c accepts it).
    OpAssign(BinOp, Expr, Expr),
    /// A method or function call used as a statement: `t.apply();`, `f(x);`.
    Call(Expr),
    /// `;` (P4_16 §12.2).
    Empty,
    /// `{ … }` (P4_16 §12.3).
    Block(Block),
    /// `if (cond) then else otherwise` (P4_16 §12.6).
    If {
        /// The condition.
        cond: Expr,
        /// The statement run when it holds.
        then: Box<Stmt>,
        /// The `else` branch, if there is one.
        otherwise: Option<Box<Stmt>>,
    },
    /// `switch (e) { … }` (P4_16 §12.7).
    Switch {
        /// The expression switched on: `t.apply().action_run` or a value (P4_16 §12.7).
        expr: Expr,
        /// The cases, in order.
        cases: Vec<SwitchCase>,
    },
    /// `exit;` (P4_16 §12.5).
    Exit,
    /// `return;` or `return e;` (P4_16 §12.4).
    Return(Option<Expr>),
    /// A local constant or variable declaration (or, in a parser state, an instantiation).
    Decl(Box<Decl>),
    /// `for (init; cond; update) body` (§12.8 of the spec after v1.2.5).
    For {
        /// The initialisation statements.
        init: Vec<Stmt>,
        /// The condition tested before every iteration; `None` loops until a `break`.
        cond: Option<Expr>,
        /// The statements run after every iteration.
        update: Vec<Stmt>,
        /// The body.
        body: Box<Stmt>,
    },
    /// `for (T x in range) body`; `ty` is `None` for `for (x in range)`.
    ForIn {
        /// The loop variable's declared type, if written.
        ty: Option<TypeRef>,
        /// The loop variable.
        var: Ident,
        /// What it ranges over (`lo .. hi`, or a list).
        range: Expr,
        /// The body.
        body: Box<Stmt>,
    },
    /// `break;` in a `for` loop.
    Break,
    /// `continue;` in a `for` loop.
    Continue,
}

/// One case of a `switch` statement (P4_16 §12.7).
#[derive(Clone, Debug)]
pub struct SwitchCase {
    /// The case's label.
    pub label: SwitchLabel,
    /// `None` for a fall-through label `a:` with no block.
    pub body: Option<Block>,
    /// Where it is in the preprocessed text.
    pub span: Span,
}

/// The label of a switch case.
#[derive(Clone, Debug)]
pub enum SwitchLabel {
    /// `default:`, where it is written.
    Default(Span),
    /// An action name (switch on `t.apply().action_run`) or a constant expression.
    Expr(Expr),
}

// ---------------------------------------------------------------------------------------------
// Expressions (spec §8)

/// An expression (P4_16 §8).
#[derive(Clone, Debug)]
pub struct Expr {
    /// Its id, the key of every side table of the checker.
    pub id: NodeId,
    /// Which expression.
    pub kind: ExprKind,
    /// Where it is in the preprocessed text.
    pub span: Span,
}

/// Which expression an [`Expr`] is.
#[derive(Clone, Debug)]
pub enum ExprKind {
    /// `true` or `false`.
    Bool(bool),
    /// An integer literal. `width` is `Some((w, signed))` for `8w5`, `4s3`; `None` for `int`.
    Int {
        /// Its value.
        value: BigInt,
        /// `Some((width, signed))` for `8w5`, `4s3`.
        width: Option<(u32, bool)>,
        /// The base it was written in (2, 8, 10 or 16): p4c's control-plane names print
        /// constants in it.
        radix: u32,
    },
    /// A string literal, escapes decoded (P4_16 §6.4.3.3).
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
        /// What is called: a function, method, action, `apply`, or a type for an instantiation.
        callee: Box<Expr>,
        /// Explicit type arguments (`f<bit<8>>(…)`).
        type_args: Vec<TypeRef>,
        /// The arguments, in order.
        args: Vec<Arg>,
    },
    /// A unary operator and its operand.
    Unary(UnOp, Box<Expr>),
    /// A binary operator and its operands (P4_16 §8).
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `c ? a : b`
    Ternary(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `(T) e`
    Cast(TypeRef, Box<Expr>),
    /// `{ e1, e2 }`, also a parenthesised keyset tuple `(k1, k2)`; `has_dots` for a trailing `...`.
    List {
        /// The elements, in order.
        items: Vec<Expr>,
        /// Ends with `...`: the remaining elements take their default values.
        has_dots: bool,
    },
    /// `{ f1 = e1, f2 = e2 }`; `has_dots` for a trailing `...`.
    StructInit {
        /// The fields and their values, as written.
        fields: Vec<(Ident, Expr)>,
        /// Ends with `...`: the other fields take their default values (P4_16 §8.26).
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

/// Unary operators (P4_16 §8.5, §8.6, §8.7).
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

/// Binary operators (P4_16 §8.5–§8.9).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Mod,
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `|+|`
    AddSat,
    /// `|-|`
    SubSat,
    /// `<<`
    Shl,
    /// `>>`
    Shr,
    /// `<=`
    Le,
    /// `>=`
    Ge,
    /// `<`
    Lt,
    /// `>`
    Gt,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `&`
    BitAnd,
    /// `^`
    BitXor,
    /// `|`
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
    /// The parameter it binds, for a named argument (`name = value`).
    pub name: Option<Ident>,
    /// The value.
    pub value: Expr,
    /// Where it is in the preprocessed text.
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
