//! What the control plane sees of a program beyond what runs per packet: the annotations of
//! its tables, keys, actions, parameters, externs and types (structured ones included, P4_16
//! §18), the types of keys, parameters and extern data as P4Runtime describes them (P4Runtime
//! spec §"P4 Type Information"), and the order P4Info lists actions and digests in.
//!
//! Lowering fills it from the checked program (one walk: the table properties, actions and
//! instances it lowers anyway); another front end that builds a [`crate::Program`] fills it
//! from its own input. nevermiss-p4rt makes the P4Info from the [`crate::Program`] alone.

use num_bigint::BigInt;
use num_traits::ToPrimitive;

/// The annotations of one element, in source order.
pub type Annotations = Vec<Annotation>;

/// One annotation (P4_16 §20).
#[derive(Clone, Debug, PartialEq)]
pub struct Annotation {
    /// The name after `@`.
    pub name: String,
    /// What follows the name.
    pub body: AnnotationBody,
}

/// The body of an annotation.
#[derive(Clone, Debug, PartialEq)]
pub enum AnnotationBody {
    /// `@name`.
    Empty,
    /// `@name(...)`, unstructured (§20.1): `text` is the body as P4 text (its expressions
    /// printed back when it is a list of expressions, else the tokens as written), `args` the
    /// expressions when it is a list of them.
    Unstructured {
        /// The body as P4 text.
        text: String,
        /// The expressions, when the body is a list of them.
        args: Option<Vec<AnnotationArg>>,
    },
    /// `@name[e1, e2, ...]` (§20.2): the values, folded.
    ExpressionList(Vec<AnnotationValue>),
    /// `@name[k1 = e1, ...]` (§20.2): keys and folded values, in order.
    KeyValues(Vec<(String, AnnotationValue)>),
}

/// One expression of an unstructured annotation, as far as the control plane reads it.
#[derive(Clone, Debug, PartialEq)]
pub enum AnnotationArg {
    /// A string literal (without its quotes).
    String(String),
    /// An integer literal.
    Int(BigInt),
    /// A name (`@match(ternary)`).
    Name(String),
    /// Any other expression.
    Other,
}

/// A value of a structured annotation: a compile-time `int`, `string` or `bool` (§20.2).
#[derive(Clone, Debug, PartialEq)]
pub enum AnnotationValue {
    /// An integer.
    Int(BigInt),
    /// A string (without its quotes).
    String(String),
    /// A boolean.
    Bool(bool),
}

impl Annotation {
    /// Whether the annotation is structured (`@name[...]`).
    pub fn is_structured(&self) -> bool {
        matches!(
            self.body,
            AnnotationBody::ExpressionList(_) | AnnotationBody::KeyValues(_)
        )
    }

    /// The annotation as P4 text, as p4c's P4Info carries an unstructured one:
    /// `@noWarn("unused")`, `@hidden`.
    pub fn text(&self) -> String {
        match &self.body {
            AnnotationBody::Unstructured { text, .. } => format!("@{}({text})", self.name),
            _ => format!("@{}", self.name),
        }
    }

    /// The first expression as a string literal (the body itself, unquoted, when it is no
    /// list of expressions).
    pub fn string_arg(&self) -> Option<String> {
        match &self.body {
            AnnotationBody::Unstructured {
                args: Some(args), ..
            } => match args.first() {
                Some(AnnotationArg::String(s)) => Some(s.clone()),
                _ => None,
            },
            AnnotationBody::Unstructured { text, args: None } => {
                Some(text.trim().trim_matches('"').to_string())
            }
            _ => None,
        }
    }

    /// The first expression as an integer literal (the body itself when it is no list of
    /// expressions).
    pub fn int_arg(&self) -> Option<u64> {
        match &self.body {
            AnnotationBody::Unstructured {
                args: Some(args), ..
            } => match args.first() {
                Some(AnnotationArg::Int(v)) => v.to_u64(),
                _ => None,
            },
            AnnotationBody::Unstructured { text, args: None } => text.trim().parse().ok(),
            _ => None,
        }
    }

    /// The expressions of an unstructured body, when it is a list of them.
    pub fn args(&self) -> Option<&[AnnotationArg]> {
        match &self.body {
            AnnotationBody::Unstructured {
                args: Some(args), ..
            } => Some(args),
            _ => None,
        }
    }

    /// `k = v` pairs of `@a[k1 = v1]`, or of an unstructured `@a(k1 = v1, k2 = v2)`
    /// (`@pkginfo`); string values unquoted.
    pub fn key_values(&self) -> Vec<(String, String)> {
        match &self.body {
            AnnotationBody::KeyValues(kvs) => kvs
                .iter()
                .map(|(k, v)| {
                    let v = match v {
                        AnnotationValue::String(s) => s.clone(),
                        AnnotationValue::Int(i) => i.to_string(),
                        AnnotationValue::Bool(b) => b.to_string(),
                    };
                    (k.clone(), v)
                })
                .collect(),
            AnnotationBody::Unstructured { text, args: None } => text
                .split(',')
                .filter_map(|kv| {
                    let (k, v) = kv.split_once('=')?;
                    Some((k.trim().to_string(), v.trim().trim_matches('"').to_string()))
                })
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// The first annotation of this name.
pub fn find<'a>(anns: &'a [Annotation], name: &str) -> Option<&'a Annotation> {
    anns.iter().find(|a| a.name == name)
}

/// Whether an annotation of this name is there.
pub fn has(anns: &[Annotation], name: &str) -> bool {
    find(anns, name).is_some()
}

/// Index of a named type in [`ControlPlane::types`].
pub type TypeId = u32;

/// A type as P4Runtime describes it (P4Runtime v1.5 §8.5 and §10.4).
#[derive(Clone, Debug, PartialEq)]
pub enum CpType {
    /// `bit<W>`.
    Bit(u32),
    /// `int<W>`.
    Int(u32),
    /// `varbit<W>` (W the maximum width).
    Varbit(u32),
    /// `bool`.
    Bool,
    /// The `error` type.
    Error,
    /// A tuple of these types (P4_16 §7.2.6).
    Tuple(Vec<CpType>),
    /// A struct, header, header union, enum, serializable enum or `type`.
    Named(TypeId),
    /// A header (union) stack of this many elements.
    Stack(Box<CpType>, u32),
    /// A type P4Runtime has no description of (`string`, an extern, …).
    Other,
}

/// A named type.
#[derive(Clone, Debug, PartialEq)]
pub struct NamedType {
    /// The name P4Info uses: the declaration's `@name` or name; a specialized generic type as
    /// p4c names it (`s2_t<bit<32>>` → `s2_t_bit32`).
    pub name: String,
    /// The declaration's annotations.
    pub annotations: Annotations,
    /// What it is.
    pub kind: NamedKind,
}

/// What a named type is.
#[derive(Clone, Debug, PartialEq)]
pub enum NamedKind {
    /// A struct's fields (P4_16 §7.2.5).
    Struct(Vec<CpField>),
    /// A header's fields (P4_16 §7.2.2).
    Header(Vec<CpField>),
    /// A header union's members (P4_16 §7.2.4).
    HeaderUnion(Vec<CpField>),
    /// A plain enum: its members.
    Enum(Vec<String>),
    /// `enum bit<W> E { … }`: the underlying type and each member's value.
    SerializableEnum {
        /// The underlying `bit<W>` or `int<W>`.
        underlying: CpType,
        /// Each member's name and value (`None` when it is not a compile-time constant).
        members: Vec<(String, Option<BigInt>)>,
    },
    /// `type T N;` (P4_16 §7.6), with `@p4runtime_translation` among the annotations when the
    /// control plane sees another type.
    NewType {
        /// The type it is made from.
        underlying: CpType,
    },
}

/// A field of a struct, header or header union.
#[derive(Clone, Debug, PartialEq)]
pub struct CpField {
    /// The field's name.
    pub name: String,
    /// Its type.
    pub ty: CpType,
    /// Its annotations.
    pub annotations: Annotations,
}

/// A parameter of an action, as the control plane sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct CpParam {
    /// The control-plane name: `@name` or the parameter's name.
    pub name: String,
    /// Directionless: the control plane supplies it.
    pub directionless: bool,
    /// Its type.
    pub ty: CpType,
    /// Its annotations.
    pub annotations: Annotations,
}

/// A v1model `digest<T>(receiver, data)` call: the control plane names its digest after the
/// data's type.
#[derive(Clone, Debug, PartialEq)]
pub struct V1Digest {
    /// The data type's control-plane name (a struct's name, or the type as written).
    pub name: String,
    /// The data's type.
    pub ty: CpType,
}

/// The program-wide part of the control plane's view.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ControlPlane {
    /// The annotations of the `main` instance (`@pkginfo`, `@platform_property`, …).
    pub package: Annotations,
    /// The named types keys, parameters, registers, digests and value sets use, and every
    /// header annotated `@controller_header` (those first, in declaration order).
    pub types: Vec<NamedType>,
    /// Every v1model `digest` call, in the order P4Info lists them.
    pub v1_digests: Vec<V1Digest>,
    /// Every action function, in the order P4Info lists actions (p4c's: the blocks `main`
    /// runs in order; in each, the top-level actions it uses in order of first use, then its
    /// own actions and those of the controls it instantiates, in declaration order).
    pub actions: Vec<crate::FnId>,
    /// core.p4's `NoAction`, lowered when a table declares no `default_action` (its default
    /// is then `NoAction`, P4_16 §14.2.1.3, which runs no code).
    pub no_action: Option<crate::FnId>,
    /// v1model: a control calls an extern function the lowering turned into plain statements
    /// (`mark_to_drop`'s two stores), which p4c's P4Info still shows by its `type_info`.
    pub v1_extern_function_inlined: bool,
}

impl ControlPlane {
    /// The named type with this id.
    pub fn ty(&self, id: TypeId) -> Option<&NamedType> {
        self.types.get(id as usize)
    }
}
