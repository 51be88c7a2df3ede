//! Declarations known to the checker and lexical scopes (P4_16 spec §6.8 "Name resolution").
//!
//! Every named thing the program declares — top-level declarations, parser/control locals,
//! parameters, type parameters, parser states, enum/error/match_kind members, extern methods —
//! gets a [`DeclId`] into [`super::Checked::decls`]. A [`DeclInfo`] records its kind, name,
//! span, enclosing declaration and resolved type/signature.

use super::consteval::Value;
use super::types::{DeclId, Type};
use crate::ast::Direction;
use crate::source::Span;
use std::collections::HashMap;

/// What a declaration declares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EntityKind {
    /// `const` (P4_16 §11.1).
    Const,
    /// A variable (P4_16 §11.2).
    Variable,
    /// A runtime parameter (of an action, function, parser, control, method).
    Param,
    /// A constructor parameter of a parser / control / package / extern (compile-time known).
    CtorParam,
    /// `typedef T N;`
    Typedef,
    /// `type T N;`
    NewType,
    /// `header` (P4_16 §7.2.2).
    Header,
    /// `header_union` (P4_16 §7.2.4).
    HeaderUnion,
    /// `struct` (P4_16 §7.2.5).
    Struct,
    /// `enum` (P4_16 §7.2.1).
    Enum,
    /// A member of an enum.
    EnumMember,
    /// A member of `error` (P4_16 §7.1.2).
    ErrorMember,
    /// A member of `match_kind` (P4_16 §7.1.3).
    MatchKindMember,
    /// An extern object type (P4_16 §7.2.10.2).
    Extern,
    /// A method of an extern (also abstract methods); `parent` is the extern.
    ExternMethod,
    /// A constructor of an extern; `parent` is the extern.
    ExternCtor,
    /// An extern function (P4_16 §7.2.10.1).
    ExternFunction,
    /// A parser type prototype (P4_16 §7.2.12.1).
    ParserType,
    /// A control type prototype (P4_16 §7.2.12.2).
    ControlType,
    /// A package type (P4_16 §7.2.13).
    PackageType,
    /// A parser declaration (P4_16 §13.2).
    Parser,
    /// A control declaration (P4_16 §14).
    Control,
    /// An action (P4_16 §14.1).
    Action,
    /// A function with a body (P4_16 §10).
    Function,
    /// A table (P4_16 §14.2).
    Table,
    /// An instantiation `T(args) name;`.
    Instance,
    /// A parser value set (P4_16 §13.11).
    ValueSet,
    /// A parser state (P4_16 §13.4).
    State,
    /// A generic type parameter.
    TypeParam,
}

impl EntityKind {
    /// Whether the declaration names a type.
    pub fn is_type(self) -> bool {
        matches!(
            self,
            EntityKind::Typedef
                | EntityKind::NewType
                | EntityKind::Header
                | EntityKind::HeaderUnion
                | EntityKind::Struct
                | EntityKind::Enum
                | EntityKind::Extern
                | EntityKind::ParserType
                | EntityKind::ControlType
                | EntityKind::PackageType
                | EntityKind::Parser
                | EntityKind::Control
                | EntityKind::TypeParam
        )
    }

    /// Whether the name may be overloaded (several declarations with different arities).
    pub fn overloadable(self) -> bool {
        matches!(
            self,
            EntityKind::ExternFunction
                | EntityKind::Function
                | EntityKind::ExternMethod
                | EntityKind::ExternCtor
        )
    }

    /// Human-readable kind name for messages.
    pub fn describe(self) -> &'static str {
        match self {
            EntityKind::Const => "constant",
            EntityKind::Variable => "variable",
            EntityKind::Param => "parameter",
            EntityKind::CtorParam => "constructor parameter",
            EntityKind::Typedef => "typedef",
            EntityKind::NewType => "type",
            EntityKind::Header => "header",
            EntityKind::HeaderUnion => "header_union",
            EntityKind::Struct => "struct",
            EntityKind::Enum => "enum",
            EntityKind::EnumMember => "enum member",
            EntityKind::ErrorMember => "error",
            EntityKind::MatchKindMember => "match_kind",
            EntityKind::Extern => "extern",
            EntityKind::ExternMethod => "method",
            EntityKind::ExternCtor => "constructor",
            EntityKind::ExternFunction => "extern function",
            EntityKind::ParserType => "parser type",
            EntityKind::ControlType => "control type",
            EntityKind::PackageType => "package",
            EntityKind::Parser => "parser",
            EntityKind::Control => "control",
            EntityKind::Action => "action",
            EntityKind::Function => "function",
            EntityKind::Table => "table",
            EntityKind::Instance => "instance",
            EntityKind::ValueSet => "value_set",
            EntityKind::State => "state",
            EntityKind::TypeParam => "type parameter",
        }
    }
}

/// A parameter of a callable, resolved.
#[derive(Clone, Debug)]
pub struct ParamInfo {
    /// The parameter's own declaration.
    pub decl: DeclId,
    /// Its name.
    pub name: String,
    /// Its direction (P4_16 §6.8).
    pub dir: Direction,
    /// Its type.
    pub ty: Type,
    /// `@optional`: may be omitted (spec §6.8.2).
    pub optional: bool,
    /// Default value, when declared (`= e`), evaluated if compile-time known.
    pub has_default: bool,
    /// The default value, when declared and compile-time known (P4_16 §6.8.2).
    pub default: Option<Value>,
    /// Where the parameter is declared.
    pub span: Span,
}

/// One declaration.
#[derive(Clone, Debug)]
pub struct DeclInfo {
    /// What it declares.
    pub kind: EntityKind,
    /// The declared name.
    pub name: String,
    /// Span of the whole declaration (unique per declaration; usable as a key into the AST).
    pub span: Span,
    /// Span of the declared name.
    pub name_span: Span,
    /// Enclosing parser / control / action / function / extern / enum, if any.
    pub parent: Option<DeclId>,
    /// For values: their type. For type declarations: the type they define.
    /// For parsers/controls/packages/externs: the object type. For actions/tables: `Action`/`Table`.
    pub ty: Type,
    /// Direction of a parameter ([`Direction::None`] otherwise).
    pub dir: Direction,
    /// Generic type parameters (their [`EntityKind::TypeParam`] ids).
    pub type_params: Vec<DeclId>,
    /// Runtime parameters: action/function/method/extern function parameters, or the apply
    /// parameters of parsers, controls and their type prototypes; package parameters.
    pub params: Vec<ParamInfo>,
    /// Constructor parameters of parsers / controls (and of extern constructors).
    pub ctor_params: Vec<ParamInfo>,
    /// Return type of functions / methods (`Void` otherwise).
    pub ret: Type,
    /// Extern: its methods and constructors.
    pub methods: Vec<DeclId>,
    /// The compile-time value of a constant / enum member / error / match_kind member.
    pub value: Option<Value>,
    /// Annotation names present on the declaration (e.g. `defaultonly`, `optional`, `pure`).
    pub annotations: Vec<String>,
    /// Extern method: declared `abstract`.
    pub is_abstract: bool,
}

impl DeclInfo {
    /// A declaration of `kind` named `name` with no type, parameters or value yet.
    pub fn new(
        kind: EntityKind,
        name: &str,
        span: Span,
        name_span: Span,
        parent: Option<DeclId>,
    ) -> Self {
        DeclInfo {
            kind,
            name: name.to_string(),
            span,
            name_span,
            parent,
            ty: Type::Error,
            dir: Direction::None,
            type_params: Vec::new(),
            params: Vec::new(),
            ctor_params: Vec::new(),
            ret: Type::Void,
            methods: Vec::new(),
            value: None,
            annotations: Vec::new(),
            is_abstract: false,
        }
    }

    /// Whether the declaration carries the annotation `@name`.
    pub fn has_annotation(&self, name: &str) -> bool {
        self.annotations.iter().any(|a| a == name)
    }
}

/// One lexical scope: names to declarations (several for overloads).
#[derive(Clone, Debug, Default)]
pub struct Scope {
    pub names: HashMap<String, Vec<DeclId>>,
}

/// The stack of lexical scopes; index 0 is the top level.
#[derive(Clone, Debug, Default)]
pub struct Scopes {
    pub stack: Vec<Scope>,
}

impl Scopes {
    pub fn new() -> Self {
        Scopes {
            stack: vec![Scope::default()],
        }
    }

    pub fn push(&mut self) {
        self.stack.push(Scope::default());
    }

    pub fn pop(&mut self) {
        if self.stack.len() > 1 {
            self.stack.pop();
        }
    }

    /// Declarations of `name` in the innermost scope only.
    pub fn in_current(&self, name: &str) -> &[DeclId] {
        self.stack
            .last()
            .and_then(|s| s.names.get(name))
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    pub fn insert(&mut self, name: &str, id: DeclId) {
        if let Some(s) = self.stack.last_mut() {
            s.names.entry(name.to_string()).or_default().push(id);
        }
    }

    pub fn insert_top(&mut self, name: &str, id: DeclId) {
        if let Some(s) = self.stack.first_mut() {
            s.names.entry(name.to_string()).or_default().push(id);
        }
    }

    /// Innermost declarations of `name` accepted by `filter` (inside-out search, spec §6.8).
    pub fn lookup(&self, name: &str, global: bool, filter: impl Fn(DeclId) -> bool) -> Vec<DeclId> {
        let scopes: Box<dyn Iterator<Item = &Scope>> = if global {
            Box::new(self.stack.iter().take(1))
        } else {
            Box::new(self.stack.iter().rev())
        };
        for s in scopes {
            if let Some(ids) = s.names.get(name) {
                let found: Vec<DeclId> = ids.iter().copied().filter(|d| filter(*d)).collect();
                if !found.is_empty() {
                    return found;
                }
            }
        }
        Vec::new()
    }
}
