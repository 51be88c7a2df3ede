//! The checker: name resolution, type inference and checking, compile-time evaluation and the
//! table / parser / architecture rules nevermiss relies on (P4_16 spec v1.2.4, PNA spec).
//!
//! [`check`] walks the whole [`ast::Program`] once, in declaration order (P4 requires declaration
//! before use, spec §6.8), collects every error it finds and keeps going: an erroneous expression
//! gets [`Type::Error`], which is compatible with everything, so one mistake does not cascade.
//! It never panics, limits its recursion depth and bounds compile-time arithmetic
//! (`consteval::MAX_BITS`).
//!
//! Its results are side tables in [`Checked`], keyed by [`NodeId`] (expressions), by
//! [`DeclId`] (declarations) or by [`Span`] (type references):
//!
//! | table | key | contents |
//! |---|---|---|
//! | [`Checked::decls`] | [`DeclId`] | every declaration: kind, name, span, parent, type, parameters |
//! | [`Checked::expr_types`] | [`NodeId`] | the type of every expression (after implicit `int` casts) |
//! | [`Checked::resolved`] | [`NodeId`] | the declaration a `Path` expression (or a `Member` naming an enum/error member) refers to |
//! | [`Checked::values`] | [`NodeId`] | the compile-time value of every foldable constant expression |
//! | [`Checked::type_refs`] | [`Span`] | the resolved type of every [`ast::TypeRef`] |
//! | [`Checked::members`] | [`NodeId`] | what a `Member` expression selects (field index, stack `next`, ...) |
//! | [`Checked::calls`] | [`NodeId`] | what a `Call` invokes, inferred type arguments, argument ↔ parameter map |
//! | [`Checked::tables`] | [`DeclId`] | keys, actions, default action, entries, size, PNA properties of each table |
//! | [`Checked::instances`] | [`DeclId`] | type and constructor of each instantiation |
//! | [`Checked::decl_by_span`] | [`Span`] | the [`DeclId`] of an AST declaration / parameter / state, by its span |
//!
//! Guarantees for lowering (issue 3):
//! - every expression of an accepted program has a type in `expr_types` (also those inside
//!   annotations); `int` literals carry the width they were implicitly cast to;
//! - an expression whose type is fixed-width but whose operands are `int` has an entry in
//!   `values`; every `int`-typed expression is compile-time known and has a value unless it
//!   depends on a constructor parameter;
//! - a serializable enum value may appear where its underlying type is expected (spec §8.3
//!   implicit cast): its type stays the enum, its value carries the underlying bits;
//! - struct/header/union [`Type`]s list their fields with resolved types (generic ones
//!   substituted), `typedef`s are transparent, so offsets and widths follow from
//!   [`Type::min_width_bits`] and [`MemberInfo::Field`] indices without any name lookup;
//! - a call's [`CallInfo::args`] maps every parameter to an argument, a default value (the
//!   parameter's declaration, whose AST node is found through `decl_by_span`) or an omitted
//!   `@optional` parameter.
//!
//! [`check`] runs on a thread of its own with a large stack ([`Type`] uses `Arc`, so [`Checked`]
//! is `Send`).

mod annotations;
mod arch;
mod consteval;
mod decls;
mod expr;
mod scope;
mod stmt;
mod summary;
mod tables;
pub mod types;

pub use consteval::Value;
pub use scope::{DeclInfo, EntityKind, ParamInfo};
pub use summary::summary;
pub use types::{AggKind, AggType, DeclId, EnumType, NewType, ObjType, Type};

use crate::ast::{self, NodeId, Program};
use crate::diag::Diagnostic;
use crate::source::Span;
use scope::Scopes;
use std::collections::{HashMap, HashSet};

/// The target architecture, detected from the package instantiated as `main`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Arch {
    /// `V1Switch(...) main;` (v1model.p4)
    V1Model,
    /// `PSA_Switch(...) main;` (psa.p4)
    Psa,
    /// `PNA_NIC(...) main;` (pna.p4), with the dialect told by the number of blocks.
    Pna(PnaDialect),
    /// No `main`, or a package nevermiss does not know.
    Unknown,
}

/// The two incompatible `pna.p4` dialects (see the PNA notes: p4c's test corpus uses the old one).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PnaDialect {
    /// `PNA_NIC(main_parser, pre_control, main_control, main_deparser)` (PNA ≤ v0.6, p4c's pna.p4).
    V06FourBlock,
    /// `PNA_NIC(main_parser, main_control, main_deparser)` (PNA v0.7+).
    V07ThreeBlock,
}

/// A built-in method (spec §8.17–§8.19, §8.23).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Builtin {
    /// `h.isValid()` of a header or header union (P4_16 §8.17, §8.19).
    IsValid,
    /// `h.setValid()` (P4_16 §8.17).
    SetValid,
    /// `h.setInvalid()` (P4_16 §8.17).
    SetInvalid,
    /// `s.push_front(n)` of a header stack (P4_16 §8.18).
    PushFront,
    /// `s.pop_front(n)` of a header stack (P4_16 §8.18).
    PopFront,
    /// `T.minSizeInBits()` / `e.minSizeInBits()` (P4_16 §9).
    MinSizeInBits,
    /// `minSizeInBytes()` (P4_16 §9).
    MinSizeInBytes,
    /// `maxSizeInBits()` (P4_16 §9).
    MaxSizeInBits,
    /// `maxSizeInBytes()` (P4_16 §9).
    MaxSizeInBytes,
}

/// What a call expression invokes.
#[derive(Clone, Debug, PartialEq)]
pub enum CallTarget {
    /// An action called directly (P4_16 §14.1.1).
    Action(DeclId),
    /// A P4 function (P4_16 §10).
    Function(DeclId),
    /// An extern function (P4_16 §7.2.10.1).
    ExternFunction(DeclId),
    /// A method of an extern object; the receiver is the base of the callee `Member` (or `this`).
    ExternMethod(DeclId),
    /// A nameless instantiation of an extern: the chosen constructor.
    ExternCtor(DeclId),
    /// A nameless instantiation of a parser, control or package declaration.
    Instantiate(DeclId),
    /// `t.apply()`.
    TableApply(DeclId),
    /// `x.apply(...)` of a parser or control: `decl` is the parser/control (type) declaration;
    /// `direct` for a direct type invocation `C.apply(...)` (spec §15.1).
    BlockApply {
        /// The parser or control (type) declaration.
        decl: DeclId,
        /// A direct type invocation `C.apply(...)` rather than an instance's.
        direct: bool,
    },
    /// A built-in method.
    Builtin(Builtin),
}

/// How one parameter of a call gets its value.
#[derive(Clone, Debug, PartialEq)]
pub enum CallArg {
    /// From the call's argument with this index (in source order).
    Arg(usize),
    /// From the parameter's declared default value (the parameter's declaration).
    Default(DeclId),
    /// An omitted `@optional` parameter.
    Omitted,
}

/// Resolution of one call expression.
#[derive(Clone, Debug)]
pub struct CallInfo {
    /// What is called.
    pub target: CallTarget,
    /// Type arguments (explicit or inferred), in the order of the callee's type parameters.
    pub type_args: Vec<Type>,
    /// One entry per parameter of the callee, in parameter order.
    pub args: Vec<CallArg>,
}

/// What a member expression `e.m` selects.
#[derive(Clone, Debug, PartialEq)]
pub enum MemberInfo {
    /// Field with this index of a struct / header / header union.
    Field(usize),
    /// `s.next` of a header stack, in a parser (P4_16 §8.18).
    StackNext,
    /// `s.last` (P4_16 §8.18).
    StackLast,
    /// `s.lastIndex` (P4_16 §8.18).
    StackLastIndex,
    /// `s.size` (P4_16 §8.18).
    StackSize,
    /// A member of an enum (`E.X`), by its declaration.
    EnumMember(DeclId),
    /// A member of `error` (`error.X`), by its declaration.
    ErrorMember(DeclId),
    /// `t.apply().hit` (P4_16 §14.2.2).
    Hit,
    /// `t.apply().miss` (P4_16 §14.2.2).
    Miss,
    /// `t.apply().action_run` (P4_16 §12.7.1).
    ActionRun,
    /// The callee of a method call (see [`Checked::calls`] of the enclosing call).
    Method,
}

/// One key element of a table.
#[derive(Clone, Debug)]
pub struct TableKey {
    /// The key expression's node.
    pub expr: NodeId,
    /// Its match kind's name (`exact`, `ternary`, `lpm`, …).
    pub match_kind: String,
    /// The key expression's type.
    pub ty: Type,
    /// The control-plane name: `@name` if given, else the expression text.
    pub name: String,
    /// Where the key element is written.
    pub span: Span,
}

/// One action of a table's `actions` list.
#[derive(Clone, Debug)]
pub struct TableAction {
    /// The action.
    pub action: DeclId,
    /// The arguments bound in the list (directional parameters), as in [`CallInfo::args`];
    /// directionless parameters are [`CallArg::Omitted`] (supplied by the control plane).
    pub args: Vec<CallArg>,
    /// `@defaultonly`: only as the default action (P4_16 §20.3.2).
    pub default_only: bool,
    /// `@tableonly`: never as the default action (P4_16 §20.3.2).
    pub table_only: bool,
    /// Where the action is listed.
    pub span: Span,
}

/// The `default_action` of a table.
#[derive(Clone, Debug)]
pub struct DefaultAction {
    /// The action.
    pub action: DeclId,
    /// The value expression of the property (a `Path` or a `Call`).
    pub expr: NodeId,
    /// `const default_action`: the control plane may not change it (P4_16 §14.2.1.3).
    pub is_const: bool,
    /// Where the property is written.
    pub span: Span,
}

/// One `entries` entry; key values are in [`Checked::values`] by the keyset's node ids.
#[derive(Clone, Debug)]
pub struct TableEntry {
    /// The keyset expressions, one per key (a single-key entry has one).
    pub keys: Vec<NodeId>,
    /// The action the entry runs.
    pub action: DeclId,
    /// The action's argument expressions, one per parameter.
    pub args: Vec<NodeId>,
    /// The `priority = e` expression, if written (P4_16 §14.2.1.4.1).
    pub priority: Option<NodeId>,
    /// Where the entry is written.
    pub span: Span,
}

/// Everything the checker found out about one table (spec §14.2, PNA §"Table properties").
#[derive(Clone, Debug)]
pub struct TableInfo {
    /// The table's declaration.
    pub decl: DeclId,
    /// Its key elements, in order (P4_16 §14.2.1.1).
    pub keys: Vec<TableKey>,
    /// Its `actions` list, in order (P4_16 §14.2.1.2).
    pub actions: Vec<TableAction>,
    /// Its `default_action`, if declared (P4_16 §14.2.1.3).
    pub default_action: Option<DefaultAction>,
    /// Its `entries`, in order (P4_16 §14.2.1.4).
    pub entries: Vec<TableEntry>,
    /// `const entries`: the control plane may not change them.
    pub entries_const: bool,
    /// The `size` property's value, if written (P4_16 §14.2.1.5).
    pub size: Option<u64>,
    /// `add_on_miss = true` (PNA).
    pub add_on_miss: bool,
    /// `pna_idle_timeout` / `psa_idle_timeout` / `support_timeout` / `idle_timeout_with_auto_delete`
    /// as written (enum member name, or `true`).
    pub idle_timeout: Option<String>,
    /// Every other property: name, value expression, its compile-time value if any.
    pub properties: Vec<(String, NodeId, Option<Value>)>,
}

/// An instantiation (`T(args) name;`).
#[derive(Clone, Debug)]
pub struct InstanceInfo {
    /// The instance's type.
    pub ty: Type,
    /// The extern constructor chosen, or the parser/control/package declaration.
    pub ctor: Option<DeclId>,
    /// Parameter ↔ argument map (indices into the instantiation's arguments).
    pub args: Vec<CallArg>,
}

/// The result of a successful check. See the module documentation for the side tables.
#[derive(Clone, Debug)]
pub struct Checked {
    /// Warnings found (errors fail the check instead).
    pub warnings: Vec<Diagnostic>,
    /// The architecture the program is written for, from its includes and `main`.
    pub arch: Arch,
    /// Every declaration, by [`DeclId`].
    pub decls: Vec<DeclInfo>,
    /// Every expression's type, by [`NodeId`] (`None` for nodes the checker did not type).
    pub expr_types: Vec<Option<Type>>,
    /// The declaration each name expression refers to.
    pub resolved: HashMap<NodeId, DeclId>,
    /// Compile-time known values of expressions (P4_16 §18.1).
    pub values: HashMap<NodeId, Value>,
    /// The type each type reference written in the source stands for, by its span.
    pub type_refs: HashMap<Span, Type>,
    /// What each member expression `e.m` selects.
    pub members: HashMap<NodeId, MemberInfo>,
    /// What each call expression invokes and how its arguments bind.
    pub calls: HashMap<NodeId, CallInfo>,
    /// Every table's checked properties.
    pub tables: HashMap<DeclId, TableInfo>,
    /// Every instantiation's type and constructor.
    pub instances: HashMap<DeclId, InstanceInfo>,
    /// The declaration whose whole span this is (AST node → declaration).
    pub decl_by_span: HashMap<Span, DeclId>,
    /// The `main` instance, if declared.
    pub main: Option<DeclId>,
    /// The blocks passed to `main`: package parameter name and the parser/control declaration.
    pub main_blocks: Vec<(String, DeclId)>,
}

impl Checked {
    fn new(node_count: u32) -> Self {
        Checked {
            warnings: Vec::new(),
            arch: Arch::Unknown,
            decls: Vec::new(),
            expr_types: vec![None; node_count as usize],
            resolved: HashMap::new(),
            values: HashMap::new(),
            type_refs: HashMap::new(),
            members: HashMap::new(),
            calls: HashMap::new(),
            tables: HashMap::new(),
            instances: HashMap::new(),
            decl_by_span: HashMap::new(),
            main: None,
            main_blocks: Vec::new(),
        }
    }

    /// The declaration with this id.
    pub fn decl(&self, id: DeclId) -> &DeclInfo {
        &self.decls[id.0 as usize]
    }

    /// The type of an expression.
    pub fn type_of(&self, id: NodeId) -> Option<&Type> {
        self.expr_types.get(id.0 as usize).and_then(Option::as_ref)
    }

    /// The compile-time value of an expression, if it has one.
    pub fn value_of(&self, id: NodeId) -> Option<&Value> {
        self.values.get(&id)
    }

    /// The declaration a path expression resolves to.
    pub fn resolution(&self, id: NodeId) -> Option<&DeclInfo> {
        self.resolved.get(&id).map(|d| self.decl(*d))
    }

    /// The resolved type of a type reference.
    pub fn type_of_ref(&self, t: &ast::TypeRef) -> Option<&Type> {
        self.type_refs.get(&t.span)
    }

    /// The fully-qualified name `Control.table` of a declaration (by its parents).
    pub fn qualified_name(&self, id: DeclId) -> String {
        let d = self.decl(id);
        match d.parent {
            Some(p) if !matches!(self.decl(p).kind, EntityKind::Extern) => {
                format!("{}.{}", self.qualified_name(p), d.name)
            }
            _ => d.name.clone(),
        }
    }
}

/// Stack of the checker's thread: enough for [`MAX_DEPTH`] nesting in an unoptimized build.
const CHECK_STACK: usize = 256 << 20;

/// Checks a parsed program. On success returns the side tables and the warnings; otherwise every
/// error found (warnings are dropped).
///
/// Runs on a thread of its own with a large stack, so deep (but bounded) nesting cannot overflow
/// the caller's stack; an internal panic is reported as an error instead of unwinding into the
/// caller.
pub fn check(program: &Program) -> Result<Checked, Vec<Diagnostic>> {
    std::thread::scope(|s| {
        match std::thread::Builder::new()
            .name("p4-check".into())
            .stack_size(CHECK_STACK)
            .spawn_scoped(s, || check_here(program))
        {
            Ok(h) => h.join().unwrap_or_else(|_| {
                Err(vec![Diagnostic::error_global(
                    "internal error: the checker failed; please report this program",
                )])
            }),
            Err(_) => check_here(program),
        }
    })
}

/// [`check`] on the current thread.
fn check_here(program: &Program) -> Result<Checked, Vec<Diagnostic>> {
    let mut c = Checker::new(program);
    c.run();
    if c.errors.is_empty() {
        c.out.warnings = c.warnings;
        Ok(c.out)
    } else {
        Err(c.errors)
    }
}

/// What kind of block the checker is inside.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) enum BlockKind {
    #[default]
    TopLevel,
    Parser,
    Control,
}

/// The lexical context of the code being checked.
#[derive(Clone, Debug, Default)]
pub(crate) struct Ctx {
    pub block: Option<DeclId>,
    pub block_kind: BlockKind,
    pub action: Option<DeclId>,
    pub function: Option<DeclId>,
    /// Return type of the enclosing function.
    pub ret: Option<Type>,
    pub in_state: bool,
    pub loop_depth: u32,
    /// Type of `this` inside abstract method implementations.
    pub this_ty: Option<Type>,
    /// Inside a table property value (nameless instantiations allowed).
    pub in_table: bool,
}

/// A call to an extern function or method, remembered for architecture rules.
#[derive(Clone, Debug)]
pub(crate) struct ExternCall {
    pub name: String,
    /// For methods: the instance declaration (if the receiver is a named instance).
    pub instance: Option<DeclId>,
    pub action: Option<DeclId>,
    pub block: Option<DeclId>,
    pub call: NodeId,
    pub span: Span,
}

/// Maximum nesting of expressions / statements the checker descends into.
pub(crate) const MAX_DEPTH: u32 = 256;
/// Maximum number of errors reported.
const MAX_ERRORS: usize = 500;

pub(crate) struct Checker<'a> {
    pub prog: &'a Program,
    pub out: Checked,
    pub errors: Vec<Diagnostic>,
    pub warnings: Vec<Diagnostic>,
    pub scopes: Scopes,
    pub error_members: HashMap<String, DeclId>,
    pub ctx: Ctx,
    pub depth: u32,
    /// When > 0, diagnostics are discarded (trial checks for overload resolution).
    pub mute: u32,
    pub extern_calls: Vec<ExternCall>,
    /// States of the parser being checked.
    pub states: HashMap<String, DeclId>,
    reported: HashSet<(Span, String)>,
    pub depth_reported: bool,
    /// Argument expression ids of every call (for architecture rules).
    pub call_args: HashMap<NodeId, Vec<NodeId>>,
    /// Set while checking the expression of a `switch` (where `action_run` is allowed).
    pub allow_action_run: bool,
    /// `@name` annotations of declarations.
    pub cp_names: HashMap<DeclId, String>,
    /// Arguments written in table action lists, by the action reference's span.
    pub list_args: HashMap<Span, Vec<ast::Expr>>,
}

impl<'a> Checker<'a> {
    fn new(prog: &'a Program) -> Self {
        Checker {
            prog,
            out: Checked::new(prog.node_count),
            errors: Vec::new(),
            warnings: Vec::new(),
            scopes: Scopes::new(),
            error_members: HashMap::new(),
            ctx: Ctx::default(),
            depth: 0,
            mute: 0,
            extern_calls: Vec::new(),
            states: HashMap::new(),
            reported: HashSet::new(),
            depth_reported: false,
            call_args: HashMap::new(),
            allow_action_run: false,
            list_args: HashMap::new(),
            cp_names: HashMap::new(),
        }
    }

    fn run(&mut self) {
        for d in &self.prog.decls {
            self.top_decl(d);
        }
        self.check_main();
        self.control_plane_names();
        self.arch_rules();
    }

    /// Reports an error at `span` (deduplicated; muted during trial checks).
    pub fn err(&mut self, span: Span, msg: impl Into<String>) {
        if self.mute > 0 {
            return;
        }
        let msg = msg.into();
        if self.errors.len() >= MAX_ERRORS || !self.reported.insert((span, msg.clone())) {
            return;
        }
        self.errors.push(Diagnostic::error(span, msg));
    }

    pub fn warn(&mut self, span: Span, msg: impl Into<String>) {
        if self.mute > 0 {
            return;
        }
        let msg = msg.into();
        if self.warnings.len() >= MAX_ERRORS || !self.reported.insert((span, msg.clone())) {
            return;
        }
        self.warnings.push(Diagnostic::warning(span, msg));
    }

    /// Number of errors so far (to detect whether a sub-check failed).
    pub fn error_count(&self) -> usize {
        self.errors.len()
    }

    pub fn decl(&self, id: DeclId) -> &DeclInfo {
        &self.out.decls[id.0 as usize]
    }

    pub fn decl_mut(&mut self, id: DeclId) -> &mut DeclInfo {
        &mut self.out.decls[id.0 as usize]
    }

    /// Registers a declaration (not yet visible in any scope).
    pub fn new_decl(&mut self, info: DeclInfo) -> DeclId {
        let id = DeclId(self.out.decls.len() as u32);
        self.out.decl_by_span.entry(info.span).or_insert(id);
        self.out.decls.push(info);
        id
    }

    /// Makes `id` visible under its name in the innermost scope, reporting duplicates.
    pub fn bind(&mut self, id: DeclId) {
        let (name, kind, span) = {
            let d = self.decl(id);
            (d.name.clone(), d.kind, d.name_span)
        };
        let existing: Vec<DeclId> = self.scopes.in_current(&name).to_vec();
        for e in existing {
            let ek = self.decl(e).kind;
            let blocks = |k: EntityKind| {
                matches!(
                    k,
                    EntityKind::Parser | EntityKind::Control | EntityKind::PackageType
                )
            };
            let functions =
                |k: EntityKind| matches!(k, EntityKind::Function | EntityKind::ExternFunction);
            let overload = if functions(kind) && functions(ek) {
                // p4c accepts even identical signatures; calls resolve by arity/types.
                true
            } else if kind.overloadable() && ek.overloadable() {
                let (a, b) = (self.decl(e), self.decl(id));
                a.params.len() != b.params.len()
                    || self.param_names(e) != self.param_names(id)
                    || a.params
                        .iter()
                        .zip(&b.params)
                        .any(|(x, y)| !types::same(&x.ty, &y.ty))
            } else if blocks(kind) && kind == ek {
                let (a, b) = (self.decl(e), self.decl(id));
                let names = |d: &DeclInfo| {
                    d.ctor_params
                        .iter()
                        .map(|p| p.name.clone())
                        .collect::<Vec<_>>()
                };
                names(a) != names(b)
            } else {
                false
            };
            if !overload {
                self.err(span, format!("{name}: duplicate declaration"));
                return;
            }
        }
        self.scopes.insert(&name, id);
    }

    fn param_names(&self, id: DeclId) -> Vec<String> {
        self.decl(id)
            .params
            .iter()
            .map(|p| p.name.clone())
            .collect()
    }

    /// Records the type of an expression.
    pub fn set_type(&mut self, id: NodeId, t: Type) {
        if let Some(slot) = self.out.expr_types.get_mut(id.0 as usize) {
            *slot = Some(t);
        }
    }

    pub fn type_of(&self, id: NodeId) -> Type {
        self.out.type_of(id).cloned().unwrap_or(Type::Error)
    }

    pub fn set_value(&mut self, id: NodeId, v: Value) {
        self.out.values.insert(id, v);
    }

    pub fn value_of(&self, id: NodeId) -> Option<Value> {
        self.out.values.get(&id).cloned()
    }

    /// Annotation names of a list.
    pub fn annotation_names(anns: &ast::Annotations) -> Vec<String> {
        anns.iter().map(|a| a.name.name.clone()).collect()
    }

    /// Runs `f` with a fresh context, restoring the old one afterwards.
    pub fn with_ctx<R>(&mut self, ctx: Ctx, f: impl FnOnce(&mut Self) -> R) -> R {
        let saved = std::mem::replace(&mut self.ctx, ctx);
        let r = f(self);
        self.ctx = saved;
        r
    }

    /// Runs `f` inside a new scope.
    pub fn scoped<R>(&mut self, f: impl FnOnce(&mut Self) -> R) -> R {
        self.scopes.push();
        let r = f(self);
        self.scopes.pop();
        r
    }

    /// Enters one level of recursion; `false` (after reporting once) when too deep.
    pub fn enter(&mut self, span: Span) -> bool {
        if self.depth >= MAX_DEPTH {
            if !self.depth_reported {
                self.depth_reported = true;
                self.err(span, "program nested too deeply");
            }
            return false;
        }
        self.depth += 1;
        true
    }

    pub fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }
}
