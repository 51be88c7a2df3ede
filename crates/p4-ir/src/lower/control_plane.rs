//! The control plane's view of the program ([`crate::control_plane`]): annotations as the
//! control plane reads them, checked types as P4Runtime describes them (each named type
//! registered once, by name), and the program-wide parts (controller headers, `main`'s
//! annotations, `NoAction`).

use super::{Lw, Node};
use crate::control_plane::{
    self as cp, Annotation, AnnotationArg, AnnotationBody, AnnotationValue, CpField, CpParam,
    CpType, NamedKind, NamedType, TypeId,
};
use p4_front::ast::{self, DeclKind, ExprKind};
use p4_front::check::types::AggType;
use p4_front::check::{AggKind, DeclId, EntityKind, Type, Value};
use std::collections::HashMap;

/// The action of core.p4 that does nothing (P4_16 §14.1).
pub(crate) const NO_ACTION: &str = "NoAction";

/// What P4Info's order of actions is made from, collected while lowering. p4c lists, for each
/// block `main` runs (in order), the top-level actions the block uses in order of first use —
/// in its declarations (table properties) first, then in its apply block, with the controls
/// it instantiates inlined — then the actions declared in it and in the controls it
/// instantiates, in declaration order; an action already listed is not listed again.
#[derive(Default)]
pub(crate) struct ActionOrder {
    /// The block of `main` being lowered.
    pub block: u32,
    /// A table declaration is being lowered (its uses come before those of apply blocks).
    pub in_table: bool,
    /// The depth of action bodies and branches ruled out by a constant condition being
    /// lowered: uses in them are not counted.
    pub uncounted: u32,
    /// A running count of declarations and uses.
    seq: u64,
    /// Each local declaration of each instance: its position in the running count.
    decls: HashMap<(Option<u32>, DeclId), u64>,
    /// Each top-level action's first use: block, in a table (0) or an apply block (1), and
    /// position.
    global_uses: HashMap<DeclId, (u32, u8, u64)>,
    /// Where each action function comes from: a top-level action, or one declared in an
    /// instance (block, position of its declaration).
    origins: HashMap<crate::FnId, Result<DeclId, (u32, u64)>>,
}

impl ActionOrder {
    /// A local declaration of an instance, met in declaration order.
    pub fn declared(&mut self, inst: Option<u32>, d: DeclId) {
        self.seq += 1;
        self.decls.entry((inst, d)).or_insert(self.seq);
    }

    /// A reference to an action (a table's `actions`, `default_action`, entries, a call, a
    /// switch label, `NoAction` as an implicit default).
    pub fn used(&mut self, d: DeclId) {
        if self.uncounted > 0 {
            return;
        }
        self.seq += 1;
        let at = (self.block, u8::from(!self.in_table), self.seq);
        let first = self.global_uses.entry(d).or_insert(at);
        *first = (*first).min(at);
    }

    /// A new action function: of the top-level action `d` (`inst` None) or of the one `inst`
    /// declares.
    pub fn function(&mut self, f: crate::FnId, inst: Option<u32>, d: DeclId) {
        let origin = match inst {
            None => Ok(d),
            Some(_) => Err((
                self.block,
                self.decls.get(&(inst, d)).copied().unwrap_or(u64::MAX),
            )),
        };
        self.origins.insert(f, origin);
    }

    /// The action functions in P4Info's order.
    pub fn order(&self, functions: &[crate::Function]) -> Vec<crate::FnId> {
        let key = |f: crate::FnId| match self.origins.get(&f) {
            Some(Ok(d)) => match self.global_uses.get(d) {
                Some(&(b, phase, s)) => (b, phase, s),
                None => (u32::MAX, 0, 0),
            },
            Some(Err((b, s))) => (*b, 2, *s),
            None => (u32::MAX, 3, 0),
        };
        let mut out: Vec<crate::FnId> = (0..functions.len() as crate::FnId)
            .filter(|&f| functions[f as usize].kind == crate::FnKind::Action)
            .collect();
        out.sort_by_key(|&f| (key(f), f));
        out
    }
}

impl Lw<'_> {
    /// The annotations of an element as the control plane reads them: unstructured bodies as
    /// P4 text and their literal arguments, structured ones (P4_16 §18.2) with the values the
    /// checker folded.
    pub(crate) fn cp_annotations(&self, anns: &ast::Annotations) -> cp::Annotations {
        anns.iter().map(|a| self.cp_annotation(a)).collect()
    }

    fn cp_annotation(&self, a: &ast::Annotation) -> Annotation {
        let body = match &a.body {
            ast::AnnotationBody::Empty => AnnotationBody::Empty,
            ast::AnnotationBody::Expressions(es) => AnnotationBody::Unstructured {
                text: es
                    .iter()
                    .map(p4_front::printer::print_expr)
                    .collect::<Vec<_>>()
                    .join(", "),
                args: Some(
                    es.iter()
                        .map(|e| match &e.kind {
                            ExprKind::String(s) => AnnotationArg::String(s.clone()),
                            ExprKind::Int { value, .. } => AnnotationArg::Int(value.clone()),
                            ExprKind::Path(p) => AnnotationArg::Name(p.name.name.clone()),
                            _ => AnnotationArg::Other,
                        })
                        .collect(),
                ),
            },
            ast::AnnotationBody::Unparsed(s) => AnnotationBody::Unstructured {
                text: s.trim().to_string(),
                args: None,
            },
            ast::AnnotationBody::StructuredExpressions(es) => {
                AnnotationBody::ExpressionList(es.iter().map(|e| self.cp_value(e)).collect())
            }
            ast::AnnotationBody::KeyValues(kvs) => AnnotationBody::KeyValues(
                kvs.iter()
                    .map(|(k, e)| (k.name.clone(), self.cp_value(e)))
                    .collect(),
            ),
        };
        Annotation {
            name: a.name.name.clone(),
            body,
        }
    }

    /// The value of a structured annotation's expression: the checker made it a
    /// compile-time `int`, `string` or `bool`. (An expression the checker did not fold, which
    /// it reports, is taken as written.)
    fn cp_value(&self, e: &ast::Expr) -> AnnotationValue {
        match (self.ck.value_of(e.id), &e.kind) {
            (Some(Value::Int(i)), _) => AnnotationValue::Int(i.clone()),
            (Some(Value::Bool(b)), _) => AnnotationValue::Bool(*b),
            (Some(Value::String(s)), _) => AnnotationValue::String(s.clone()),
            (_, ExprKind::Int { value, .. }) => AnnotationValue::Int(value.clone()),
            (_, ExprKind::Bool(b)) => AnnotationValue::Bool(*b),
            (_, ExprKind::String(s)) => AnnotationValue::String(s.clone()),
            _ => AnnotationValue::String(p4_front::printer::print_expr(e)),
        }
    }

    /// The annotations of a declaration by id (empty if it has none or is not found).
    fn decl_annotations(&self, d: DeclId) -> cp::Annotations {
        let Some(Node::Decl(decl)) = self.nodes.get(&d).copied() else {
            return Vec::new();
        };
        let anns = match &decl.kind {
            DeclKind::Header(s) | DeclKind::HeaderUnion(s) | DeclKind::Struct(s) => &s.annotations,
            DeclKind::Enum(e) => &e.annotations,
            DeclKind::Typedef(t) => &t.annotations,
            DeclKind::Instantiation(i) => &i.annotations,
            _ => return Vec::new(),
        };
        self.cp_annotations(anns)
    }

    /// The annotations of the fields of a struct-like declaration, by field index.
    fn field_annotations(&self, d: DeclId) -> Vec<cp::Annotations> {
        match self.nodes.get(&d).copied() {
            Some(Node::Decl(ast::Decl {
                kind: DeclKind::Header(s) | DeclKind::HeaderUnion(s) | DeclKind::Struct(s),
                ..
            })) => s
                .fields
                .iter()
                .map(|f| self.cp_annotations(&f.annotations))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The control-plane type of a checked type; registers the named types it uses.
    pub(crate) fn cp_type(&mut self, t: &Type) -> CpType {
        match t {
            Type::Bit(w) => CpType::Bit(*w),
            Type::Signed(w) => CpType::Int(*w),
            Type::Varbit(w) => CpType::Varbit(*w),
            Type::Bool => CpType::Bool,
            Type::ErrorT => CpType::Error,
            Type::Tuple(ts) => CpType::Tuple(ts.iter().map(|t| self.cp_type(t)).collect()),
            Type::Stack(e, n) => CpType::Stack(Box::new(self.cp_type(e)), *n),
            Type::NewType(n) => {
                let name = n.name.clone();
                let underlying = n.underlying.clone();
                let decl = n.decl;
                CpType::Named(self.named(&name, |lw| NamedType {
                    name: name.clone(),
                    annotations: lw.decl_annotations(decl),
                    kind: NamedKind::NewType {
                        underlying: lw.cp_type(&underlying),
                    },
                }))
            }
            Type::Enum(e) => {
                let e = e.clone();
                CpType::Named(self.named(&e.name, |lw| {
                    let kind = match &e.underlying {
                        None => NamedKind::Enum(e.members.clone()),
                        Some(u) => NamedKind::SerializableEnum {
                            underlying: lw.cp_type(u),
                            members: lw
                                .ck
                                .decls
                                .iter()
                                .filter(|d| {
                                    d.kind == EntityKind::EnumMember && d.parent == Some(e.decl)
                                })
                                .map(|d| {
                                    let v = d.value.as_ref().and_then(|v| v.as_int()).cloned();
                                    (d.name.clone(), v)
                                })
                                .collect(),
                        },
                    };
                    NamedType {
                        name: e.name.clone(),
                        annotations: lw.decl_annotations(e.decl),
                        kind,
                    }
                }))
            }
            Type::Agg(a) => {
                let name = self.agg_name(a);
                let a = a.clone();
                CpType::Named(self.named(&name, |lw| {
                    let anns = lw.field_annotations(a.decl);
                    let fields = a
                        .fields
                        .iter()
                        .enumerate()
                        .map(|(i, (n, t))| CpField {
                            name: n.clone(),
                            ty: lw.cp_type(t),
                            annotations: anns.get(i).cloned().unwrap_or_default(),
                        })
                        .collect();
                    NamedType {
                        name: name.clone(),
                        annotations: lw.decl_annotations(a.decl),
                        kind: match a.kind {
                            AggKind::Struct => NamedKind::Struct(fields),
                            AggKind::Header => NamedKind::Header(fields),
                            AggKind::HeaderUnion => NamedKind::HeaderUnion(fields),
                        },
                    }
                }))
            }
            _ => CpType::Other,
        }
    }

    /// The id of the named type `name`, made by `make` the first time (a type's fields may
    /// name other types, registered as they are met).
    fn named(&mut self, name: &str, make: impl FnOnce(&mut Self) -> NamedType) -> TypeId {
        if let Some(&id) = self.cp_types.get(name) {
            return id;
        }
        let id = self.p.control_plane.types.len() as TypeId;
        self.cp_types.insert(name.to_string(), id);
        self.p.control_plane.types.push(NamedType {
            name: name.to_string(),
            annotations: Vec::new(),
            kind: NamedKind::Struct(Vec::new()),
        });
        let t = make(self);
        self.p.control_plane.types[id as usize] = t;
        id
    }

    /// The control-plane name of a struct-like type: its `@name`; a specialized generic one
    /// as p4c names it (`s2_t<bit<32>>` → `s2_t_bit32`).
    pub(crate) fn agg_name(&self, a: &AggType) -> String {
        let declared = match self.nodes.get(&a.decl).copied() {
            Some(Node::Decl(ast::Decl {
                kind: DeclKind::Header(s) | DeclKind::HeaderUnion(s) | DeclKind::Struct(s),
                ..
            })) => Self::name_annotation(&s.annotations),
            _ => None,
        };
        if let Some(n) = declared {
            return n.trim_start_matches('.').to_string();
        }
        let mut n = a.name.clone();
        for t in &a.args {
            n.push('_');
            n.push_str(&match t {
                Type::Bit(w) => format!("bit{w}"),
                Type::Signed(w) => format!("int{w}"),
                Type::Bool => "bool".to_string(),
                Type::Agg(x) => self.agg_name(x),
                other => other.to_string(),
            });
        }
        n
    }

    /// The program-wide part: the headers annotated `@controller_header` (registered first,
    /// in declaration order, whether the program uses them or not) and `main`'s annotations.
    pub(crate) fn cp_program(&mut self) {
        let ck = self.ck;
        for (i, info) in ck.decls.iter().enumerate() {
            if info.kind != EntityKind::Header {
                continue;
            }
            let Some(Node::Decl(ast::Decl {
                kind: DeclKind::Header(s),
                ..
            })) = self.nodes.get(&DeclId(i as u32)).copied()
            else {
                continue;
            };
            if s.annotations
                .iter()
                .any(|a| a.name.name == "controller_header")
            {
                let t = info.ty.clone();
                self.cp_type(&t);
            }
        }
        if let Some(m) = ck.main {
            self.p.control_plane.package = self.decl_annotations(m);
        }
    }

    /// An action's parameters as the control plane sees them (`infos`: the checker's, in the
    /// same order).
    pub(crate) fn cp_params(
        &mut self,
        params: &[ast::Param],
        infos: &[p4_front::check::ParamInfo],
    ) -> Vec<CpParam> {
        params
            .iter()
            .map(|p| {
                let ty = infos
                    .iter()
                    .find(|q| q.name == p.name.name)
                    .map_or(CpType::Other, |q| self.cp_type(&q.ty.clone()));
                CpParam {
                    name: Self::name_annotation(&p.annotations)
                        .unwrap_or_else(|| p.name.name.clone()),
                    directionless: p.direction == ast::Direction::None,
                    ty,
                    annotations: self.cp_annotations(&p.annotations),
                }
            })
            .collect()
    }

    /// core.p4's top-level `NoAction`, if declared.
    pub(crate) fn no_action_decl(&self) -> Option<DeclId> {
        self.ck
            .decls
            .iter()
            .position(|d| d.kind == EntityKind::Action && d.parent.is_none() && d.name == NO_ACTION)
            .map(|i| DeclId(i as u32))
    }

    /// Lowers core.p4's `NoAction` when a table declares no `default_action` (its default is
    /// `NoAction`, P4_16 §14.2.1.3, which the control plane lists).
    pub(crate) fn cp_no_action(&mut self) -> super::LResult<()> {
        if self.p.tables.iter().all(|t| t.default_declared) {
            return Ok(());
        }
        if let Some(d) = self.no_action_decl() {
            let span = self.ck.decl(d).span;
            let f = self.action_fn(d, span)?;
            self.p.control_plane.no_action = Some(f);
        }
        Ok(())
    }
}
