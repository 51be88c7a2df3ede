//! Checker types (P4_16 spec §7).
//!
//! A [`Type`] is fully resolved: typedef aliases are replaced by what they name, generic
//! structs/headers carry their substituted field types, and every fixed-width type carries its
//! width. Lowering can therefore compute the layout of any value from its [`Type`] alone
//! (e.g. [`Type::min_width_bits`]) without looking any name up again.

use std::fmt;
use std::sync::Arc;

/// Index of a declaration in [`super::Checked::decls`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DeclId(pub u32);

/// Kind of an aggregate type (spec §7.2.2–§7.2.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AggKind {
    /// `struct` (P4_16 §7.2.5).
    Struct,
    /// `header` (P4_16 §7.2.2).
    Header,
    /// `header_union` (P4_16 §7.2.4).
    HeaderUnion,
}

impl AggKind {
    /// The keyword that declares it.
    pub fn keyword(self) -> &'static str {
        match self {
            AggKind::Struct => "struct",
            AggKind::Header => "header",
            AggKind::HeaderUnion => "header_union",
        }
    }
}

/// A struct, header or header union type, with its type arguments substituted in `fields`.
#[derive(Clone, Debug)]
pub struct AggType {
    /// The declaration.
    pub decl: DeclId,
    /// Struct, header or header union.
    pub kind: AggKind,
    /// The type's name.
    pub name: String,
    /// Type arguments of a generic declaration (empty otherwise).
    pub args: Vec<Type>,
    /// Fields in declaration order.
    pub fields: Vec<(String, Type)>,
}

impl AggType {
    /// The field `name`: its index and type.
    pub fn field(&self, name: &str) -> Option<(usize, &Type)> {
        self.fields
            .iter()
            .enumerate()
            .find(|(_, (n, _))| n == name)
            .map(|(i, (_, t))| (i, t))
    }
}

/// An `enum` type; `underlying` is `Some` for serializable enums (spec §7.2.1).
#[derive(Clone, Debug)]
pub struct EnumType {
    /// The declaration.
    pub decl: DeclId,
    /// The enum's name.
    pub name: String,
    /// The underlying `bit<W>`/`int<W>` of a serializable enum.
    pub underlying: Option<Type>,
    /// The members' names, in order.
    pub members: Vec<String>,
}

/// A type introduced by `type T N;` (spec §7.6).
#[derive(Clone, Debug)]
pub struct NewType {
    /// The declaration.
    pub decl: DeclId,
    /// The type's name.
    pub name: String,
    /// The type it is made from.
    pub underlying: Type,
}

/// An extern, parser, control or package type, possibly specialized.
#[derive(Clone, Debug)]
pub struct ObjType {
    /// The declaration.
    pub decl: DeclId,
    /// The type's name.
    pub name: String,
    /// Its type arguments, when specialized.
    pub args: Vec<Type>,
}

/// A resolved P4 type.
#[derive(Clone, Debug)]
pub enum Type {
    /// The type of an erroneous expression: compatible with everything (avoids cascades).
    Error,
    /// `void` (P4_16 §7.1.1).
    Void,
    /// `bool` (P4_16 §7.1.4).
    Bool,
    /// `string` (P4_16 §7.1.5).
    String,
    /// Arbitrary-precision `int` (compile-time only, spec §7.1.6.5).
    Int,
    /// `bit<W>` (P4_16 §7.1.6.2).
    Bit(u32),
    /// `int<W>` (P4_16 §7.1.6.3).
    Signed(u32),
    /// `varbit<W>` (P4_16 §7.1.6.4).
    Varbit(u32),
    /// The `error` type.
    ErrorT,
    /// `match_kind` (P4_16 §7.1.3).
    MatchKind,
    /// An enum (P4_16 §7.2.1).
    Enum(Arc<EnumType>),
    /// A `type` (P4_16 §7.6).
    NewType(Arc<NewType>),
    /// A struct, header or header union.
    Agg(Arc<AggType>),
    /// Header stack or array `T[n]`.
    Stack(Box<Type>, u32),
    /// `tuple<...>` (P4_16 §7.2.6).
    Tuple(Vec<Type>),
    /// `list<T>` (P4_16 §7.2.7).
    List(Box<Type>),
    /// A type variable (generic parameter), by its declaration.
    Var(DeclId, Arc<str>),
    /// An extern object type (P4_16 §7.2.10.2).
    Extern(Arc<ObjType>),
    /// A parser: either a `parser` type prototype or a parser declaration.
    Parser(Arc<ObjType>),
    /// A control: a `control` type prototype or a control declaration.
    Control(Arc<ObjType>),
    /// A package type (P4_16 §7.2.13).
    Package(Arc<ObjType>),
    /// An action name used as a value (e.g. in a table's action list).
    Action(DeclId),
    /// A function name used as a value.
    Function(DeclId),
    /// A table name used as a value (`t.apply()`'s receiver).
    Table(DeclId),
    /// A parser state name (a transition's target).
    State,
    /// A `value_set<T>` (P4_16 §13.11).
    ValueSet(Box<Type>),
    /// `{#}` before it meets a header / header union type.
    Invalid,
    /// The type of an untyped list expression `{a, b}` (becomes a tuple, struct, header, ...).
    ListExpr(Vec<Type>),
    /// The type of an untyped structure-valued expression `{f = a}`.
    StructExpr(Vec<(String, Type)>),
    /// A type used as an expression, e.g. `E` in `E.X` or `bit<8>` in `bit<8>.minSizeInBits()`.
    TypeName(Box<Type>),
    /// Result of `t.apply()` for table `t`: has `hit`, `miss`, `action_run`.
    ApplyResult(DeclId),
    /// The type of `t.apply().action_run`.
    ActionRun(DeclId),
    /// A keyset (select label / table entry key): mask, range, default.
    Set(Box<Type>),
    /// `_` / `default` in a keyset or an argument.
    DontCare,
}

impl Type {
    /// Whether this is [`Type::Error`], the type of an erroneous expression.
    pub fn is_error(&self) -> bool {
        matches!(self, Type::Error)
    }

    /// `bit<W>`, `int<W>`, or a serializable enum / new type over them: a fixed-width integer.
    pub fn is_fixed_int(&self) -> bool {
        matches!(self.underlying_int(), Type::Bit(_) | Type::Signed(_))
    }

    /// Strips serializable enums (spec §8.3 implicit cast) to their underlying type.
    pub fn underlying_int(&self) -> &Type {
        match self {
            Type::Enum(e) => match &e.underlying {
                Some(u) => u,
                None => self,
            },
            _ => self,
        }
    }

    /// Strips `type` new types down to the base type (used for casts and header field rules).
    pub fn strip_newtype(&self) -> &Type {
        match self {
            Type::NewType(n) => n.underlying.strip_newtype(),
            _ => self,
        }
    }

    /// Whether this is a header type.
    pub fn is_header(&self) -> bool {
        matches!(self, Type::Agg(a) if a.kind == AggKind::Header)
    }

    /// Whether this is a header union type.
    pub fn is_union(&self) -> bool {
        matches!(self, Type::Agg(a) if a.kind == AggKind::HeaderUnion)
    }

    /// Whether this is a header or a header union (what has validity).
    pub fn is_header_like(&self) -> bool {
        matches!(self, Type::Agg(a) if a.kind != AggKind::Struct)
    }

    /// Whether the type mentions a type variable.
    pub fn has_vars(&self) -> bool {
        match self {
            Type::Var(..) => true,
            Type::Agg(a) => {
                a.args.iter().any(Type::has_vars) || a.fields.iter().any(|f| f.1.has_vars())
            }
            Type::Stack(t, _)
            | Type::List(t)
            | Type::ValueSet(t)
            | Type::Set(t)
            | Type::TypeName(t) => t.has_vars(),
            Type::Tuple(ts) | Type::ListExpr(ts) => ts.iter().any(Type::has_vars),
            Type::StructExpr(fs) => fs.iter().any(|f| f.1.has_vars()),
            Type::Extern(o) | Type::Parser(o) | Type::Control(o) | Type::Package(o) => {
                o.args.iter().any(Type::has_vars)
            }
            Type::NewType(n) => n.underlying.has_vars(),
            _ => false,
        }
    }

    /// Width in bits of a fixed-size serializable type (spec §8.23 `minSizeInBits`):
    /// varbit counts as 0 for the minimum; `None` for types without a bit layout.
    pub fn min_width_bits(&self) -> Option<u64> {
        self.size_bits(false)
    }

    /// Maximum width in bits (varbit counts with its bound).
    pub fn max_width_bits(&self) -> Option<u64> {
        self.size_bits(true)
    }

    fn size_bits(&self, max: bool) -> Option<u64> {
        Some(match self {
            Type::Bit(w) | Type::Signed(w) => u64::from(*w),
            Type::Varbit(w) => {
                if max {
                    u64::from(*w)
                } else {
                    0
                }
            }
            Type::Bool => 1,
            Type::Enum(e) => e.underlying.as_ref()?.size_bits(max)?,
            Type::NewType(n) => n.underlying.size_bits(max)?,
            Type::Agg(a) => match a.kind {
                AggKind::HeaderUnion => {
                    let mut m = 0u64;
                    for (_, t) in &a.fields {
                        m = m.max(t.size_bits(max)?);
                    }
                    m
                }
                _ => {
                    let mut s = 0u64;
                    for (_, t) in &a.fields {
                        s = s.saturating_add(t.size_bits(max)?);
                    }
                    s
                }
            },
            Type::Stack(t, n) => t.size_bits(max)?.saturating_mul(u64::from(*n)),
            Type::Tuple(ts) | Type::ListExpr(ts) => {
                let mut s = 0u64;
                for t in ts {
                    s = s.saturating_add(t.size_bits(max)?);
                }
                s
            }
            Type::Error => 0,
            _ => return None,
        })
    }

    /// The width of a `bit<W>`/`int<W>` (after stripping enums and new types).
    pub fn int_width(&self) -> Option<(u32, bool)> {
        match self.strip_newtype().underlying_int() {
            Type::Bit(w) => Some((*w, false)),
            Type::Signed(w) => Some((*w, true)),
            _ => None,
        }
    }
}

/// Structural type equality (spec §7: nominal for declared types, structural for the rest).
/// [`Type::Error`] equals everything.
pub fn same(a: &Type, b: &Type) -> bool {
    use Type::*;
    match (a, b) {
        (Error, _) | (_, Error) | (DontCare, _) | (_, DontCare) => true,
        (Void, Void) | (Bool, Bool) | (String, String) | (Int, Int) | (ErrorT, ErrorT) => true,
        (MatchKind, MatchKind) | (State, State) | (Invalid, Invalid) => true,
        (Bit(x), Bit(y)) | (Signed(x), Signed(y)) | (Varbit(x), Varbit(y)) => x == y,
        (Enum(x), Enum(y)) => x.decl == y.decl,
        (NewType(x), NewType(y)) => x.decl == y.decl,
        (Agg(x), Agg(y)) => x.decl == y.decl && all_same(&x.args, &y.args),
        (Stack(x, n), Stack(y, m)) => n == m && same(x, y),
        (Tuple(x), Tuple(y)) | (ListExpr(x), ListExpr(y)) => all_same(x, y),
        (List(x), List(y)) | (ValueSet(x), ValueSet(y)) | (Set(x), Set(y)) => same(x, y),
        (TypeName(x), TypeName(y)) => same(x, y),
        (Var(x, _), Var(y, _)) => x == y,
        (Extern(x), Extern(y))
        | (Parser(x), Parser(y))
        | (Control(x), Control(y))
        | (Package(x), Package(y)) => x.decl == y.decl && all_same(&x.args, &y.args),
        (Action(x), Action(y)) | (Function(x), Function(y)) | (Table(x), Table(y)) => x == y,
        (ApplyResult(x), ApplyResult(y)) | (ActionRun(x), ActionRun(y)) => x == y,
        (StructExpr(x), StructExpr(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| p.0 == q.0 && same(&p.1, &q.1))
        }
        _ => false,
    }
}

fn all_same(x: &[Type], y: &[Type]) -> bool {
    x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
}

/// Substitutes type variables by `subst` (declaration id → type).
pub fn substitute(t: &Type, subst: &[(DeclId, Type)]) -> Type {
    if subst.is_empty() || !t.has_vars() {
        return t.clone();
    }
    subst_rec(t, subst)
}

fn subst_rec(t: &Type, s: &[(DeclId, Type)]) -> Type {
    match t {
        Type::Var(d, _) => match s.iter().find(|(v, _)| v == d) {
            Some((_, ty)) => ty.clone(),
            None => t.clone(),
        },
        Type::Agg(a) => Type::Agg(Arc::new(AggType {
            decl: a.decl,
            kind: a.kind,
            name: a.name.clone(),
            args: a.args.iter().map(|x| subst_rec(x, s)).collect(),
            fields: a
                .fields
                .iter()
                .map(|(n, x)| (n.clone(), subst_rec(x, s)))
                .collect(),
        })),
        Type::Stack(x, n) => Type::Stack(Box::new(subst_rec(x, s)), *n),
        Type::List(x) => Type::List(Box::new(subst_rec(x, s))),
        Type::ValueSet(x) => Type::ValueSet(Box::new(subst_rec(x, s))),
        Type::Set(x) => Type::Set(Box::new(subst_rec(x, s))),
        Type::TypeName(x) => Type::TypeName(Box::new(subst_rec(x, s))),
        Type::Tuple(xs) => Type::Tuple(xs.iter().map(|x| subst_rec(x, s)).collect()),
        Type::ListExpr(xs) => Type::ListExpr(xs.iter().map(|x| subst_rec(x, s)).collect()),
        Type::StructExpr(fs) => Type::StructExpr(
            fs.iter()
                .map(|(n, x)| (n.clone(), subst_rec(x, s)))
                .collect(),
        ),
        Type::NewType(n) => Type::NewType(Arc::new(NewType {
            decl: n.decl,
            name: n.name.clone(),
            underlying: subst_rec(&n.underlying, s),
        })),
        Type::Extern(o) => Type::Extern(subst_obj(o, s)),
        Type::Parser(o) => Type::Parser(subst_obj(o, s)),
        Type::Control(o) => Type::Control(subst_obj(o, s)),
        Type::Package(o) => Type::Package(subst_obj(o, s)),
        _ => t.clone(),
    }
}

fn subst_obj(o: &ObjType, s: &[(DeclId, Type)]) -> Arc<ObjType> {
    Arc::new(ObjType {
        decl: o.decl,
        name: o.name.clone(),
        args: o.args.iter().map(|x| subst_rec(x, s)).collect(),
    })
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn list(f: &mut fmt::Formatter<'_>, ts: &[Type]) -> fmt::Result {
            for (i, t) in ts.iter().enumerate() {
                if i > 0 {
                    write!(f, ", ")?;
                }
                write!(f, "{t}")?;
            }
            Ok(())
        }
        fn obj(f: &mut fmt::Formatter<'_>, o: &ObjType) -> fmt::Result {
            write!(f, "{}", o.name)?;
            if !o.args.is_empty() {
                write!(f, "<")?;
                list(f, &o.args)?;
                write!(f, ">")?;
            }
            Ok(())
        }
        match self {
            Type::Error => write!(f, "<error>"),
            Type::Void => write!(f, "void"),
            Type::Bool => write!(f, "bool"),
            Type::String => write!(f, "string"),
            Type::Int => write!(f, "int"),
            Type::Bit(w) => write!(f, "bit<{w}>"),
            Type::Signed(w) => write!(f, "int<{w}>"),
            Type::Varbit(w) => write!(f, "varbit<{w}>"),
            Type::ErrorT => write!(f, "error"),
            Type::MatchKind => write!(f, "match_kind"),
            Type::Enum(e) => write!(f, "{}", e.name),
            Type::NewType(n) => write!(f, "{}", n.name),
            Type::Agg(a) => {
                write!(f, "{}", a.name)?;
                if !a.args.is_empty() {
                    write!(f, "<")?;
                    list(f, &a.args)?;
                    write!(f, ">")?;
                }
                Ok(())
            }
            Type::Stack(t, n) => write!(f, "{t}[{n}]"),
            Type::Tuple(ts) => {
                write!(f, "tuple<")?;
                list(f, ts)?;
                write!(f, ">")
            }
            Type::List(t) => write!(f, "list<{t}>"),
            Type::Var(_, n) => write!(f, "{n}"),
            Type::Extern(o) | Type::Parser(o) | Type::Control(o) | Type::Package(o) => obj(f, o),
            Type::Action(_) => write!(f, "action"),
            Type::Function(_) => write!(f, "function"),
            Type::Table(_) => write!(f, "table"),
            Type::State => write!(f, "state"),
            Type::ValueSet(t) => write!(f, "value_set<{t}>"),
            Type::Invalid => write!(f, "{{#}}"),
            Type::ListExpr(ts) => {
                write!(f, "{{")?;
                list(f, ts)?;
                write!(f, "}}")
            }
            Type::StructExpr(fs) => {
                write!(f, "{{")?;
                for (i, (n, t)) in fs.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{n}: {t}")?;
                }
                write!(f, "}}")
            }
            Type::TypeName(t) => write!(f, "type {t}"),
            Type::ApplyResult(_) => write!(f, "table apply result"),
            Type::ActionRun(_) => write!(f, "action_run"),
            Type::Set(t) => write!(f, "set<{t}>"),
            Type::DontCare => write!(f, "_"),
        }
    }
}
