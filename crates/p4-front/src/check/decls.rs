//! Declarations: types (spec §7), constants and variables (§11), externs (§7.2.10), parsers (§12),
//! controls (§13), actions (§14.1), functions (§10), instantiations (§11.3).

use super::scope::{DeclInfo, EntityKind, ParamInfo};
use super::types::{AggKind, AggType, DeclId, EnumType, NewType, ObjType, Type};
use super::{BlockKind, CallArg, Checker, Ctx, InstanceInfo, Value};
use crate::ast::{self, DeclKind, Direction, TypeKind, TypeRef};
use crate::source::Span;
use std::collections::HashSet;
use std::sync::Arc;

/// Largest `bit<W>` width accepted (p4c's limit).
pub(crate) const MAX_WIDTH: u64 = 2048;
/// Largest header stack / array size accepted.
pub(crate) const MAX_STACK: u64 = 1 << 16;

/// Where a type is used, for the nesting rules of spec §7.2.8.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Container {
    Header,
    Union,
    Struct,
    Tuple,
    Stack,
    Array,
}

impl<'a> Checker<'a> {
    // -----------------------------------------------------------------------------------------
    // Types

    /// Resolves a type reference and records it in [`super::Checked::type_refs`].
    pub fn resolve_type(&mut self, t: &TypeRef) -> Type {
        if !self.enter(t.span) {
            return Type::Error;
        }
        let ty = self.resolve_type_inner(t);
        self.leave();
        self.out.type_refs.insert(t.span, ty.clone());
        ty
    }

    fn resolve_type_inner(&mut self, t: &TypeRef) -> Type {
        match &t.kind {
            TypeKind::Bool => Type::Bool,
            TypeKind::Error => Type::ErrorT,
            TypeKind::MatchKind => Type::MatchKind,
            TypeKind::String => Type::String,
            TypeKind::Void => Type::Void,
            TypeKind::Int => Type::Int,
            TypeKind::DontCare => Type::DontCare,
            TypeKind::Bit(w) => match self.width(w, "bit") {
                Some(w) => Type::Bit(w),
                None => Type::Error,
            },
            TypeKind::SignedInt(w) => match self.width(w, "int") {
                Some(0) => {
                    self.err(w.span, "width of signed type cannot be zero");
                    Type::Error
                }
                Some(w) => Type::Signed(w),
                None => Type::Error,
            },
            TypeKind::Varbit(w) => match self.width(w, "varbit") {
                Some(w) => Type::Varbit(w),
                None => Type::Error,
            },
            TypeKind::Named(p) => self.named_type(p, &[], t.span),
            TypeKind::Specialized(p, args) => {
                let args: Vec<Type> = args.iter().map(|a| self.resolve_type(a)).collect();
                self.named_type(p, &args, t.span)
            }
            TypeKind::Stack(elem, size) => {
                let et = self.resolve_type(elem);
                let n = self.check_expr(size, None);
                let n = match self.value_of(size.id).and_then(|v| v.as_int().cloned()) {
                    Some(v) => v,
                    None => {
                        if !n.is_error() {
                            self.err(size.span, "size of header stack type should be a constant");
                        }
                        return Type::Error;
                    }
                };
                let n = match u64::try_from(&n) {
                    Ok(n) if n <= MAX_STACK => n as u32,
                    _ => {
                        self.err(size.span, format!("illegal array size: {n}"));
                        return Type::Error;
                    }
                };
                let kind = if et.is_header_like() {
                    Container::Stack
                } else {
                    Container::Array
                };
                self.check_nesting(&et, kind, elem.span);
                Type::Stack(Box::new(et), n)
            }
            TypeKind::Tuple(ts) => {
                let ts: Vec<Type> = ts.iter().map(|x| self.resolve_type(x)).collect();
                for (x, r) in ts.iter().zip(match &t.kind {
                    TypeKind::Tuple(v) => v.iter(),
                    _ => [].iter(),
                }) {
                    self.check_nesting(x, Container::Tuple, r.span);
                }
                Type::Tuple(ts)
            }
            TypeKind::List(e) => Type::List(Box::new(self.resolve_type(e))),
        }
    }

    /// Evaluates a type width `W` (a local compile-time known non-negative integer).
    fn width(&mut self, e: &ast::Expr, what: &str) -> Option<u32> {
        let t = self.check_expr(e, None);
        if t.is_error() {
            return None;
        }
        let v = match self.value_of(e.id).and_then(|v| v.as_int().cloned()) {
            Some(v) => v,
            None => {
                self.err(
                    e.span,
                    format!("{what}<...>: width must be a compile-time constant"),
                );
                return None;
            }
        };
        match u64::try_from(&v) {
            Ok(w) if w <= MAX_WIDTH => Some(w as u32),
            Ok(_) => {
                self.err(
                    e.span,
                    format!(
                        "{what}<{v}>: this implementation does not support bitstrings this large"
                    ),
                );
                None
            }
            Err(_) => {
                self.err(e.span, format!("{what}<{v}>: invalid type size"));
                None
            }
        }
    }

    /// Looks a type name up (types only).
    pub fn lookup_type(&mut self, p: &ast::Path) -> Option<DeclId> {
        let kinds: Vec<DeclId> = {
            let decls = &self.out.decls;
            self.scopes.lookup(&p.name.name, p.global, |d| {
                decls[d.0 as usize].kind.is_type()
            })
        };
        if let Some(d) = kinds.first() {
            return Some(*d);
        }
        let any = self.scopes.lookup(&p.name.name, p.global, |_| true);
        if any.is_empty() {
            self.err(p.span, format!("{}: declaration not found", p.name.name));
        } else {
            self.err(p.span, format!("{} is not a type", p.name.name));
        }
        None
    }

    fn named_type(&mut self, p: &ast::Path, args: &[Type], span: Span) -> Type {
        let Some(d) = self.lookup_type(p) else {
            return Type::Error;
        };
        self.type_of_decl(d, args, span)
    }

    /// The type named by a type declaration, specialized with `args`.
    pub fn type_of_decl(&mut self, d: DeclId, args: &[Type], span: Span) -> Type {
        let info = self.decl(d).clone();
        let tps = info.type_params.clone();
        if !args.is_empty() && args.len() != tps.len() {
            self.err(
                span,
                format!(
                    "{}: expected {} type arguments, found {}",
                    info.name,
                    tps.len(),
                    args.len()
                ),
            );
            return Type::Error;
        }
        if args.is_empty() && !tps.is_empty() {
            match info.kind {
                EntityKind::Header | EntityKind::HeaderUnion | EntityKind::Struct => {
                    self.err(
                        span,
                        format!(
                            "{}: no type parameters supplied for generic type",
                            info.name
                        ),
                    );
                    return Type::Error;
                }
                _ => return info.ty.clone(),
            }
        }
        for a in args {
            if let Type::Parser(_) | Type::Control(_) | Type::Package(_) = a {
                self.err(
                    span,
                    format!("{}: cannot use {} as a type argument", info.name, a),
                );
                return Type::Error;
            }
            if mentions_decl(a, d, 0) {
                self.err(
                    span,
                    format!(
                        "{}: contains self '{}' as type argument",
                        info.name, info.name
                    ),
                );
                return Type::Error;
            }
        }
        if args.is_empty() {
            return info.ty.clone();
        }
        let subst: Vec<(DeclId, Type)> = tps.iter().copied().zip(args.iter().cloned()).collect();
        match &info.ty {
            Type::Agg(a) => {
                let fields: Vec<(String, Type)> = a
                    .fields
                    .iter()
                    .map(|(n, t)| (n.clone(), super::types::substitute(t, &subst)))
                    .collect();
                let container = match a.kind {
                    AggKind::Header => Container::Header,
                    AggKind::HeaderUnion => Container::Union,
                    AggKind::Struct => Container::Struct,
                };
                for (orig, (_, t)) in a.fields.iter().zip(&fields) {
                    if orig.1.has_vars() && !t.has_vars() && !self.check_nesting(t, container, span)
                    {
                        return Type::Error;
                    }
                }
                Type::Agg(Arc::new(AggType {
                    decl: a.decl,
                    kind: a.kind,
                    name: a.name.clone(),
                    args: args.to_vec(),
                    fields,
                }))
            }
            Type::Extern(o) => Type::Extern(Arc::new(ObjType {
                decl: o.decl,
                name: o.name.clone(),
                args: args.to_vec(),
            })),
            Type::Parser(o) => Type::Parser(Arc::new(ObjType {
                decl: o.decl,
                name: o.name.clone(),
                args: args.to_vec(),
            })),
            Type::Control(o) => Type::Control(Arc::new(ObjType {
                decl: o.decl,
                name: o.name.clone(),
                args: args.to_vec(),
            })),
            Type::Package(o) => Type::Package(Arc::new(ObjType {
                decl: o.decl,
                name: o.name.clone(),
                args: args.to_vec(),
            })),
            _ => {
                self.err(span, format!("{} is not a generic type", info.name));
                Type::Error
            }
        }
    }

    /// Checks that `t` may appear inside a `container` (spec §7.2.8 "Type nesting rules").
    pub fn check_nesting(&mut self, t: &Type, container: Container, span: Span) -> bool {
        let ok = match container {
            Container::Header => header_field_ok(t, 0),
            Container::Union => t.is_header() || t.is_error(),
            Container::Stack => t.is_header_like() || t.is_error(),
            Container::Tuple => !matches!(
                t,
                Type::Void
                    | Type::Parser(_)
                    | Type::Control(_)
                    | Type::Package(_)
                    | Type::Extern(_)
            ),
            Container::Struct => !matches!(
                t,
                Type::Int
                    | Type::Void
                    | Type::String
                    | Type::MatchKind
                    | Type::List(_)
                    | Type::Parser(_)
                    | Type::Control(_)
                    | Type::Package(_)
                    | Type::Extern(_)
                    | Type::State
                    | Type::ValueSet(_)
                    | Type::Table(_)
                    | Type::Action(_)
                    | Type::Function(_)
            ),
            Container::Array => {
                !matches!(
                    t,
                    Type::Int
                        | Type::Void
                        | Type::String
                        | Type::MatchKind
                        | Type::ErrorT
                        | Type::List(_)
                        | Type::Tuple(_)
                        | Type::Parser(_)
                        | Type::Control(_)
                        | Type::Package(_)
                ) && !matches!(t, Type::Stack(e, _) if e.is_header_like())
            }
        };
        if !ok {
            let what = match container {
                Container::Header => "header",
                Container::Union => "header_union",
                Container::Struct => "struct",
                Container::Tuple => "tuple",
                Container::Stack => "header stack",
                Container::Array => "array",
            };
            self.err(span, format!("type {t} cannot be used in a {what}"));
        }
        ok
    }

    // -----------------------------------------------------------------------------------------
    // Top-level and local declarations

    /// Checks a top-level declaration and makes it visible.
    pub fn top_decl(&mut self, d: &ast::Decl) {
        match &d.kind {
            DeclKind::Variable(v) => {
                self.err(
                    v.name.span,
                    format!(
                        "{}: variables cannot be declared at the top level",
                        v.name.name
                    ),
                );
            }
            DeclKind::Table(t) => {
                self.err(
                    t.name.span,
                    format!("{}: tables can only be declared in controls", t.name.name),
                );
            }
            DeclKind::ValueSet(v) => {
                self.err(
                    v.name.span,
                    format!(
                        "{}: value sets can only be declared in parsers",
                        v.name.name
                    ),
                );
            }
            DeclKind::Instantiation(_) => {
                self.decl_any(d, None);
            }
            _ => {
                if let Some(n) = d
                    .name()
                    .filter(|n| n.name == "main" && matches!(d.kind, DeclKind::Extern(_)))
                {
                    self.err(n.span, "main: must be a package declaration");
                }
                self.decl_any(d, None);
            }
        }
    }

    /// Checks a declaration in the current scope (top level, parser/control locals, blocks).
    pub fn decl_any(&mut self, d: &ast::Decl, parent: Option<DeclId>) -> Option<DeclId> {
        if !self.enter(d.span) {
            return None;
        }
        if let Some(anns) = decl_annotations(d) {
            self.check_annotations(anns);
        }
        let cp_name = decl_annotations(d).and_then(|anns| {
            anns.iter()
                .find(|a| a.name.name == "name")
                .and_then(|a| match &a.body {
                    ast::AnnotationBody::Expressions(es) if es.len() == 1 => {
                        match self.value_of(es[0].id) {
                            Some(Value::String(s)) => Some(s),
                            _ => None,
                        }
                    }
                    _ => None,
                })
        });
        let r = match &d.kind {
            DeclKind::Const(c) => Some(self.decl_const(c, d.span, parent)),
            DeclKind::Variable(v) => Some(self.decl_variable(v, d.span, parent)),
            DeclKind::Typedef(t) => Some(self.decl_typedef(t, d.span, parent)),
            DeclKind::Header(s) => Some(self.decl_agg(s, AggKind::Header, d.span, parent)),
            DeclKind::HeaderUnion(s) => {
                Some(self.decl_agg(s, AggKind::HeaderUnion, d.span, parent))
            }
            DeclKind::Struct(s) => Some(self.decl_agg(s, AggKind::Struct, d.span, parent)),
            DeclKind::Enum(e) => Some(self.decl_enum(e, d.span, parent)),
            DeclKind::Error(ms) => {
                self.decl_members(ms, EntityKind::ErrorMember);
                None
            }
            DeclKind::MatchKind(ms) => {
                self.decl_members(ms, EntityKind::MatchKindMember);
                None
            }
            DeclKind::Extern(e) => Some(self.decl_extern(e, d.span, parent)),
            DeclKind::ExternFunction(f) => Some(self.decl_extern_function(f, parent)),
            DeclKind::ParserType(p) => {
                Some(self.decl_type_proto(p, EntityKind::ParserType, parent))
            }
            DeclKind::ControlType(p) => {
                Some(self.decl_type_proto(p, EntityKind::ControlType, parent))
            }
            DeclKind::PackageType(p) => {
                Some(self.decl_type_proto(p, EntityKind::PackageType, parent))
            }
            DeclKind::Parser(p) => Some(self.decl_parser(p, d.span, parent)),
            DeclKind::Control(c) => Some(self.decl_control(c, d.span, parent)),
            DeclKind::Action(a) => Some(self.decl_action(a, d.span, parent)),
            DeclKind::Function(f) => Some(self.decl_function(f, d.span, parent)),
            DeclKind::Table(t) => Some(self.decl_table(t, d.span, parent)),
            DeclKind::Instantiation(i) => self.decl_instantiation(i, d.span, parent),
            DeclKind::ValueSet(v) => Some(self.decl_value_set(v, d.span, parent)),
        };
        if let (Some(id), Some(n)) = (r, cp_name) {
            self.cp_names.insert(id, n);
        }
        self.leave();
        r
    }

    fn decl_const(&mut self, c: &ast::ConstDecl, span: Span, parent: Option<DeclId>) -> DeclId {
        let ty = self.resolve_type(&c.ty);
        self.check_storable(&ty, c.ty.span, true);
        let before = self.error_count();
        self.check_expr_expect(&c.value, &ty, "initializer");
        let mut info = DeclInfo::new(EntityKind::Const, &c.name.name, span, c.name.span, parent);
        info.ty = ty;
        info.annotations = Self::annotation_names(&c.annotations);
        info.value = self.value_of(c.value.id);
        if info.value.is_none() && self.error_count() == before && !self.is_ctk(&c.value) {
            self.err(
                c.value.span,
                format!(
                    "{}: cannot evaluate initializer to a compile-time constant",
                    c.name.name
                ),
            );
        }
        let id = self.new_decl(info);
        self.bind(id);
        id
    }

    fn decl_variable(
        &mut self,
        v: &ast::VariableDecl,
        span: Span,
        parent: Option<DeclId>,
    ) -> DeclId {
        let ty = self.resolve_type(&v.ty);
        self.check_storable(&ty, v.ty.span, false);
        if let Some(init) = &v.init {
            self.check_expr_expect(init, &ty, "initializer");
        }
        let mut info = DeclInfo::new(
            EntityKind::Variable,
            &v.name.name,
            span,
            v.name.span,
            parent,
        );
        info.ty = ty;
        info.annotations = Self::annotation_names(&v.annotations);
        let id = self.new_decl(info);
        self.bind(id);
        id
    }

    /// Types that can be the type of a variable or constant.
    fn check_storable(&mut self, t: &Type, span: Span, is_const: bool) {
        if contains_dont_care(t, 0) {
            self.err(
                span,
                format!("{t}: the type of a declaration cannot contain '_'"),
            );
            return;
        }
        let bad = match t {
            Type::Void => Some("void"),
            Type::Int | Type::String | Type::MatchKind if !is_const => Some("this type"),
            Type::Extern(_) | Type::Parser(_) | Type::Control(_) | Type::Package(_) => {
                Some("this type")
            }
            Type::Var(..) if !is_const => None,
            _ => None,
        };
        if bad.is_some() {
            if matches!(
                t,
                Type::Extern(_) | Type::Parser(_) | Type::Control(_) | Type::Package(_)
            ) {
                self.err(
                    span,
                    format!(
                        "cannot declare variables of type {t} (consider using an instantiation)"
                    ),
                );
            } else {
                self.err(
                    span,
                    format!(
                        "cannot declare {} of type {t}",
                        if is_const { "constants" } else { "variables" }
                    ),
                );
            }
        }
    }

    fn decl_typedef(&mut self, t: &ast::TypedefDecl, span: Span, parent: Option<DeclId>) -> DeclId {
        let ty = self.resolve_type(&t.ty);
        let kind = if t.is_new_type {
            EntityKind::NewType
        } else {
            EntityKind::Typedef
        };
        let mut info = DeclInfo::new(kind, &t.name.name, span, t.name.span, parent);
        info.annotations = Self::annotation_names(&t.annotations);
        let id = self.new_decl(info);
        let result = if t.is_new_type {
            let ok = matches!(
                ty,
                Type::Bit(_) | Type::Signed(_) | Type::Bool | Type::NewType(_) | Type::Error
            );
            if !ok {
                self.err(
                    t.ty.span,
                    format!("{}: `type' can only be applied to base types", t.name.name),
                );
                Type::Error
            } else {
                Type::NewType(Arc::new(NewType {
                    decl: id,
                    name: t.name.name.clone(),
                    underlying: ty,
                }))
            }
        } else {
            match ty {
                Type::Void | Type::MatchKind | Type::String | Type::DontCare => {
                    self.err(
                        t.ty.span,
                        format!("{}: invalid type for typedef: {ty}", t.name.name),
                    );
                    Type::Error
                }
                _ => ty,
            }
        };
        self.decl_mut(id).ty = result;
        self.bind(id);
        id
    }

    /// Declares type parameters in the current scope.
    pub fn type_params(&mut self, tps: &[ast::Ident], parent: Option<DeclId>) -> Vec<DeclId> {
        let mut ids = Vec::new();
        for tp in tps {
            let mut info = DeclInfo::new(EntityKind::TypeParam, &tp.name, tp.span, tp.span, parent);
            info.ty = Type::Var(
                DeclId(self.out.decls.len() as u32),
                Arc::from(tp.name.as_str()),
            );
            let id = self.new_decl(info);
            self.bind(id);
            ids.push(id);
        }
        ids
    }

    fn decl_agg(
        &mut self,
        s: &ast::StructDecl,
        kind: AggKind,
        span: Span,
        parent: Option<DeclId>,
    ) -> DeclId {
        let ek = match kind {
            AggKind::Struct => EntityKind::Struct,
            AggKind::Header => EntityKind::Header,
            AggKind::HeaderUnion => EntityKind::HeaderUnion,
        };
        let mut info = DeclInfo::new(ek, &s.name.name, span, s.name.span, parent);
        info.annotations = Self::annotation_names(&s.annotations);
        let id = self.new_decl(info);
        let (tps, fields) = self.scoped(|c| {
            let tps = c.type_params(&s.type_params, Some(id));
            let mut fields: Vec<(String, Type)> = Vec::new();
            let mut varbits = 0u32;
            for f in &s.fields {
                c.check_annotations(&f.annotations);
                let t = c.resolve_type(&f.ty);
                if let Type::Agg(a) = &t {
                    if a.decl == id {
                        c.err(
                            f.ty.span,
                            format!(
                                "self-referencing types not supported: {} within {}",
                                a.name, s.name.name
                            ),
                        );
                    }
                }
                let container = match kind {
                    AggKind::Struct => Container::Struct,
                    AggKind::Header => Container::Header,
                    AggKind::HeaderUnion => Container::Union,
                };
                let check_now =
                    !t.has_vars() || container == Container::Union && !matches!(t, Type::Var(..));
                if check_now && !c.check_nesting(&t, container, f.ty.span) {
                    // reported
                }
                if matches!(t, Type::Varbit(_)) {
                    varbits += 1;
                }
                if fields.iter().any(|(n, _)| *n == f.name.name) {
                    c.err(
                        f.name.span,
                        format!("{}: duplicate field name", f.name.name),
                    );
                    continue;
                }
                fields.push((f.name.name.clone(), t));
            }
            let _ = varbits;
            (tps, fields)
        });
        let args: Vec<Type> = tps.iter().map(|t| self.decl(*t).ty.clone()).collect();
        let d = self.decl_mut(id);
        d.type_params = tps;
        d.ty = Type::Agg(Arc::new(AggType {
            decl: id,
            kind,
            name: s.name.name.clone(),
            args,
            fields,
        }));
        self.bind(id);
        id
    }

    fn decl_enum(&mut self, e: &ast::EnumDecl, span: Span, parent: Option<DeclId>) -> DeclId {
        let underlying = e
            .underlying
            .as_ref()
            .map(|u| (self.resolve_type(u), u.span));
        let mut info = DeclInfo::new(EntityKind::Enum, &e.name.name, span, e.name.span, parent);
        info.annotations = Self::annotation_names(&e.annotations);
        let id = self.new_decl(info);
        let under = match underlying {
            Some((t @ (Type::Bit(_) | Type::Signed(_)), _)) => Some(t),
            Some((Type::Error, _)) => Some(Type::Error),
            Some((t, sp)) => {
                self.err(
                    sp,
                    format!("{t}: illegal type for enum; only bit<> and int<> are allowed"),
                );
                Some(Type::Error)
            }
            None => None,
        };
        let members: Vec<String> = e.members.iter().map(|m| m.name.name.clone()).collect();
        let ety = Type::Enum(Arc::new(EnumType {
            decl: id,
            name: e.name.name.clone(),
            underlying: under.clone(),
            members: members.clone(),
        }));
        let mut seen = HashSet::new();
        let mut member_ids = Vec::new();
        // Later member values may refer to earlier members by name.
        self.scopes.push();
        for m in &e.members {
            self.check_annotations(&m.annotations);
            if !seen.insert(m.name.name.clone()) {
                self.err(
                    m.name.span,
                    format!("{}: duplicate enum member", m.name.name),
                );
            }
            let repr = match (&under, &m.value) {
                (Some(u), Some(v)) => {
                    self.check_expr_expect(v, u, "enum value");
                    match self.value_of(v.id) {
                        Some(val) => Some(Box::new(val)),
                        None => {
                            self.err(
                                v.span,
                                format!(
                                    "{}: enum value must be a compile-time constant",
                                    m.name.name
                                ),
                            );
                            None
                        }
                    }
                }
                (Some(_), None) => {
                    self.err(
                        m.name.span,
                        format!(
                            "{}: serializable enum member must have a value",
                            m.name.name
                        ),
                    );
                    None
                }
                (None, Some(v)) => {
                    self.err(
                        v.span,
                        format!(
                            "{}: enum without underlying type cannot have values",
                            m.name.name
                        ),
                    );
                    None
                }
                (None, None) => None,
            };
            let mut mi = DeclInfo::new(
                EntityKind::EnumMember,
                &m.name.name,
                m.name.span,
                m.name.span,
                Some(id),
            );
            mi.ty = ety.clone();
            mi.value = Some(Value::Enum {
                decl: id,
                member: Some(m.name.name.clone()),
                repr,
            });
            let mid = self.new_decl(mi);
            member_ids.push(mid);
            if under.is_some() {
                self.scopes.insert(&m.name.name, mid);
            }
        }
        self.scopes.pop();
        let d = self.decl_mut(id);
        d.ty = ety;
        d.methods = member_ids;
        self.bind(id);
        id
    }

    /// `error { ... }` and `match_kind { ... }`.
    fn decl_members(&mut self, ms: &[ast::Ident], kind: EntityKind) {
        for m in ms {
            let exists = match kind {
                EntityKind::ErrorMember => self.error_members.contains_key(&m.name),
                _ => {
                    let decls = &self.out.decls;
                    !self
                        .scopes
                        .lookup(&m.name, true, |d| decls[d.0 as usize].kind == kind)
                        .is_empty()
                }
            };
            if exists {
                self.err(m.span, format!("{}: duplicate declaration", m.name));
                continue;
            }
            let mut info = DeclInfo::new(kind, &m.name, m.span, m.span, None);
            if kind == EntityKind::ErrorMember {
                info.ty = Type::ErrorT;
                info.value = Some(Value::Error(m.name.clone()));
                let id = self.new_decl(info);
                self.error_members.insert(m.name.clone(), id);
            } else {
                info.ty = Type::MatchKind;
                info.value = Some(Value::MatchKind(m.name.clone()));
                let id = self.new_decl(info);
                self.scopes.insert_top(&m.name, id);
            }
        }
    }

    /// Parameters of a callable (not yet bound in any scope).
    pub fn params(
        &mut self,
        ps: &[ast::Param],
        parent: Option<DeclId>,
        kind: EntityKind,
    ) -> Vec<ParamInfo> {
        let mut out: Vec<ParamInfo> = Vec::new();
        for p in ps {
            self.check_annotations(&p.annotations);
            let ty = self.resolve_type(&p.ty);
            let mut info = DeclInfo::new(kind, &p.name.name, p.span, p.name.span, parent);
            info.ty = ty.clone();
            info.dir = p.direction;
            info.annotations = Self::annotation_names(&p.annotations);
            let optional = info.has_annotation("optional");
            let id = self.new_decl(info);
            if out.iter().any(|q| q.name == p.name.name) {
                self.err(
                    p.name.span,
                    format!("{}: duplicate parameter name", p.name.name),
                );
            }
            if kind == EntityKind::CtorParam && p.direction != Direction::None {
                self.err(
                    p.name.span,
                    format!(
                        "{}: invalid direction. constructor parameters cannot have a direction",
                        p.name.name
                    ),
                );
            }
            match (&ty, p.direction) {
                (Type::Void, _) => self.err(
                    p.ty.span,
                    format!("{}: parameter cannot have type void", p.name.name),
                ),
                (Type::String | Type::Extern(_) | Type::MatchKind, d) if d != Direction::None => {
                    self.err(
                        p.name.span,
                        format!(
                            "{}: a parameter with type {ty} cannot have a direction",
                            p.name.name
                        ),
                    )
                }
                (Type::Int, d) if d != Direction::None => self.err(
                    p.name.span,
                    format!(
                        "{}: parameters with type int must be directionless",
                        p.name.name
                    ),
                ),
                (Type::Parser(_) | Type::Control(_) | Type::Package(_), d)
                    if d != Direction::None || kind == EntityKind::Param =>
                {
                    self.err(
                        p.ty.span,
                        format!("{}: parameter cannot have type {ty}", p.name.name),
                    )
                }
                _ => {}
            }
            if let Type::Parser(o) | Type::Control(o) = &ty {
                if matches!(
                    self.decl(o.decl).kind,
                    EntityKind::Parser | EntityKind::Control
                ) {
                    self.err(
                        p.ty.span,
                        format!(
                            "{}: parameter cannot have type {} {}",
                            p.name.name,
                            self.decl(o.decl).kind.describe(),
                            o.name
                        ),
                    );
                }
            }
            let (has_default, default) = match &p.default {
                Some(d) => {
                    if matches!(p.direction, Direction::Out | Direction::InOut) {
                        self.err(
                            d.span,
                            format!("{}: out parameters cannot have default values", p.name.name),
                        );
                    }
                    if optional {
                        self.err(
                            d.span,
                            format!(
                                "{}: optional parameters cannot have default values",
                                p.name.name
                            ),
                        );
                    }
                    let dt = self.check_expr_expect(d, &ty, "default value");
                    if !dt.is_error() && !self.is_ctk(d) {
                        self.err(
                            d.span,
                            format!(
                                "{}: default value must be a compile-time constant",
                                p.name.name
                            ),
                        );
                    }
                    (true, self.value_of(d.id))
                }
                None => (false, None),
            };
            out.push(ParamInfo {
                decl: id,
                name: p.name.name.clone(),
                dir: p.direction,
                ty,
                optional,
                has_default,
                default,
                span: p.span,
            });
        }
        out
    }

    /// `@optional` is only allowed on packages, parser/control types and externs (spec §6.8.2).
    fn no_optional(&mut self, ps: &[ParamInfo], ast_ps: &[ast::Param]) {
        for (p, a) in ps.iter().zip(ast_ps) {
            if p.optional {
                self.err(
                    a.name.span,
                    format!("{}: optional parameter not allowed here", p.name),
                );
            }
        }
    }

    pub fn bind_params(&mut self, ps: &[ParamInfo]) {
        for p in ps {
            self.bind(p.decl);
        }
    }

    fn decl_extern(&mut self, e: &ast::ExternDecl, span: Span, parent: Option<DeclId>) -> DeclId {
        let mut info = DeclInfo::new(EntityKind::Extern, &e.name.name, span, e.name.span, parent);
        info.annotations = Self::annotation_names(&e.annotations);
        let id = self.new_decl(info);
        // The extern's own name is visible inside (constructors, methods returning it).
        self.scoped(|c| {
            let tps = c.type_params(&e.type_params, Some(id));
            let args: Vec<Type> = tps.iter().map(|t| c.decl(*t).ty.clone()).collect();
            let ety = Type::Extern(Arc::new(ObjType {
                decl: id,
                name: e.name.name.clone(),
                args,
            }));
            {
                let d = c.decl_mut(id);
                d.type_params = tps;
                d.ty = ety.clone();
            }
            c.scopes.insert(&e.name.name, id);
            let mut methods = Vec::new();
            for m in &e.methods {
                let is_ctor = m.ret.is_none() && m.name.name == e.name.name;
                if m.ret.is_none() && !is_ctor {
                    c.err(
                        m.name.span,
                        format!("{}: invalid type; method has no return type", m.name.name),
                    );
                    continue;
                }
                if m.ret.is_some() && m.name.name == e.name.name {
                    c.err(
                        m.name.span,
                        format!(
                            "{}: invalid constructor; cannot have a return type",
                            m.name.name
                        ),
                    );
                    continue;
                }
                let kind = if is_ctor {
                    EntityKind::ExternCtor
                } else {
                    EntityKind::ExternMethod
                };
                let mid = c.decl_proto(m, kind, Some(id));
                for (p, ap) in c.decl(mid).params.clone().iter().zip(&m.params) {
                    match &p.ty {
                        Type::Parser(_) | Type::Control(_) | Type::Package(_) => c.err(
                            ap.ty.span,
                            format!("{}: parameter cannot have type {}", p.name, p.ty),
                        ),
                        Type::Extern(o) if o.decl == id => c.err(
                            ap.ty.span,
                            format!(
                                "self-referencing types not supported: '{}' within '{}'",
                                e.name.name, e.name.name
                            ),
                        ),
                        _ => {}
                    }
                }
                if is_ctor {
                    c.decl_mut(mid).ret = ety.clone();
                }
                // Overloads must differ in arity or parameter names.
                let sig = (c.decl(mid).name.clone(), c.param_names_of(mid));
                if methods
                    .iter()
                    .any(|o: &DeclId| (c.decl(*o).name.clone(), c.param_names_of(*o)) == sig)
                {
                    c.err(
                        m.name.span,
                        format!("{}: duplicate method declaration", m.name.name),
                    );
                }
                methods.push(mid);
            }
            c.decl_mut(id).methods = methods;
        });
        self.bind(id);
        id
    }

    fn param_names_of(&self, id: DeclId) -> Vec<String> {
        self.decl(id)
            .params
            .iter()
            .map(|p| p.name.clone())
            .collect()
    }

    /// A function prototype (extern function, extern method or constructor).
    fn decl_proto(
        &mut self,
        f: &ast::FunctionProto,
        kind: EntityKind,
        parent: Option<DeclId>,
    ) -> DeclId {
        if kind != EntityKind::ExternFunction {
            self.check_annotations(&f.annotations);
        }
        let mut info = DeclInfo::new(kind, &f.name.name, f.span, f.name.span, parent);
        info.annotations = Self::annotation_names(&f.annotations);
        info.is_abstract = f.is_abstract;
        let id = self.new_decl(info);
        self.scoped(|c| {
            let tps = c.type_params(&f.type_params, Some(id));
            let pkind = if kind == EntityKind::ExternCtor {
                EntityKind::CtorParam
            } else {
                EntityKind::Param
            };
            let params = c.params(&f.params, Some(id), pkind);
            let ret = match &f.ret {
                Some(r) => {
                    let t = c.resolve_type(r);
                    if matches!(
                        t,
                        Type::Int | Type::Parser(_) | Type::Control(_) | Type::Package(_)
                    ) && kind != EntityKind::ExternFunction
                    {
                        c.err(r.span, format!("{t}: illegal return type for method"));
                    }
                    t
                }
                None => Type::Void,
            };
            let d = c.decl_mut(id);
            d.type_params = tps;
            d.params = params;
            d.ret = ret;
        });
        id
    }

    fn decl_extern_function(&mut self, f: &ast::FunctionProto, parent: Option<DeclId>) -> DeclId {
        let id = self.decl_proto(f, EntityKind::ExternFunction, parent);
        self.decl_mut(id).ty = Type::Function(id);
        self.bind(id);
        id
    }

    fn decl_type_proto(
        &mut self,
        p: &ast::TypeProto,
        kind: EntityKind,
        parent: Option<DeclId>,
    ) -> DeclId {
        let mut info = DeclInfo::new(kind, &p.name.name, p.span, p.name.span, parent);
        info.annotations = Self::annotation_names(&p.annotations);
        let id = self.new_decl(info);
        self.scoped(|c| {
            let tps = c.type_params(&p.type_params, Some(id));
            let pk = if kind == EntityKind::PackageType {
                EntityKind::CtorParam
            } else {
                EntityKind::Param
            };
            let params = c.params(&p.params, Some(id), pk);
            let args: Vec<Type> = tps.iter().map(|t| c.decl(*t).ty.clone()).collect();
            let obj = Arc::new(ObjType {
                decl: id,
                name: p.name.name.clone(),
                args,
            });
            let d = c.decl_mut(id);
            d.type_params = tps;
            d.ty = match kind {
                EntityKind::ParserType => Type::Parser(obj),
                EntityKind::ControlType => Type::Control(obj),
                _ => Type::Package(obj),
            };
            if kind == EntityKind::PackageType {
                d.ctor_params = params;
            } else {
                d.params = params;
            }
        });
        self.bind(id);
        id
    }

    fn decl_parser(&mut self, p: &ast::ParserDecl, span: Span, parent: Option<DeclId>) -> DeclId {
        if self.ctx.block.is_some() || self.ctx.action.is_some() || self.ctx.function.is_some() {
            self.err(
                p.name.span,
                format!("{}: parsers cannot be nested", p.name.name),
            );
        }
        let mut info = DeclInfo::new(EntityKind::Parser, &p.name.name, span, p.name.span, parent);
        info.annotations = Self::annotation_names(&p.annotations);
        let id = self.new_decl(info);
        self.scoped(|c| {
            let tps = c.type_params(&p.type_params, Some(id));
            let params = c.params(&p.params, Some(id), EntityKind::Param);
            let ctor = c.params(&p.ctor_params, Some(id), EntityKind::CtorParam);
            c.no_optional(&ctor, &p.ctor_params);
            let args: Vec<Type> = tps.iter().map(|t| c.decl(*t).ty.clone()).collect();
            {
                let d = c.decl_mut(id);
                d.type_params = tps;
                d.params = params.clone();
                d.ctor_params = ctor.clone();
                d.ty = Type::Parser(Arc::new(ObjType {
                    decl: id,
                    name: p.name.name.clone(),
                    args,
                }));
            }
            c.bind_params(&params);
            c.bind_params(&ctor);
            let ctx = Ctx {
                block: Some(id),
                block_kind: BlockKind::Parser,
                ..Ctx::default()
            };
            // Locals live in an inner scope: they may shadow parameters (p4c warns).
            c.with_ctx(ctx, |c| c.scoped(|c| c.parser_body(p, id)));
        });
        self.bind(id);
        id
    }

    fn decl_control(
        &mut self,
        ct: &ast::ControlDecl,
        span: Span,
        parent: Option<DeclId>,
    ) -> DeclId {
        if self.ctx.block.is_some() || self.ctx.action.is_some() || self.ctx.function.is_some() {
            self.err(
                ct.name.span,
                format!("{}: controls cannot be nested", ct.name.name),
            );
        }
        let mut info = DeclInfo::new(
            EntityKind::Control,
            &ct.name.name,
            span,
            ct.name.span,
            parent,
        );
        info.annotations = Self::annotation_names(&ct.annotations);
        let id = self.new_decl(info);
        self.scoped(|c| {
            let tps = c.type_params(&ct.type_params, Some(id));
            let params = c.params(&ct.params, Some(id), EntityKind::Param);
            let ctor = c.params(&ct.ctor_params, Some(id), EntityKind::CtorParam);
            c.no_optional(&ctor, &ct.ctor_params);
            let args: Vec<Type> = tps.iter().map(|t| c.decl(*t).ty.clone()).collect();
            {
                let d = c.decl_mut(id);
                d.type_params = tps;
                d.params = params.clone();
                d.ctor_params = ctor.clone();
                d.ty = Type::Control(Arc::new(ObjType {
                    decl: id,
                    name: ct.name.name.clone(),
                    args,
                }));
            }
            c.bind_params(&params);
            c.bind_params(&ctor);
            let ctx = Ctx {
                block: Some(id),
                block_kind: BlockKind::Control,
                ..Ctx::default()
            };
            c.with_ctx(ctx, |c| {
                c.scoped(|c| {
                    for l in &ct.locals {
                        c.local_decl(l, id);
                    }
                    c.block(&ct.apply);
                })
            });
        });
        self.bind(id);
        id
    }

    /// A local declaration of a parser or control.
    fn local_decl(&mut self, d: &ast::Decl, owner: DeclId) {
        let in_parser = self.ctx.block_kind == BlockKind::Parser;
        let ok = match &d.kind {
            DeclKind::Const(_) | DeclKind::Variable(_) | DeclKind::Instantiation(_) => true,
            DeclKind::Action(_) | DeclKind::Table(_) => !in_parser,
            DeclKind::ValueSet(_) => in_parser,
            DeclKind::Function(_) => true,
            _ => false,
        };
        if !ok {
            let what = if in_parser { "parser" } else { "control" };
            let name = d.name().map(|n| n.name.clone()).unwrap_or_default();
            self.err(
                d.span,
                format!("{name}: declaration not allowed in a {what}"),
            );
            return;
        }
        self.decl_any(d, Some(owner));
    }

    fn decl_action(&mut self, a: &ast::ActionDecl, span: Span, parent: Option<DeclId>) -> DeclId {
        let mut info = DeclInfo::new(EntityKind::Action, &a.name.name, span, a.name.span, parent);
        info.annotations = Self::annotation_names(&a.annotations);
        let id = self.new_decl(info);
        self.decl_mut(id).ty = Type::Action(id);
        self.scoped(|c| {
            let params = c.params(&a.params, Some(id), EntityKind::Param);
            let mut seen_dirless = false;
            for (p, ap) in params.iter().zip(&a.params) {
                if matches!(p.ty, Type::Int) {
                    c.err(
                        ap.name.span,
                        format!("{}: actions cannot have parameters with type int", p.name),
                    );
                }
                if matches!(p.ty, Type::Extern(_)) {
                    c.err(
                        ap.name.span,
                        format!("{}: action parameters cannot have extern types", p.name),
                    );
                }
                if p.dir == Direction::None {
                    seen_dirless = true;
                } else if seen_dirless {
                    c.err(
                        ap.name.span,
                        format!(
                            "{}: direction-less action parameters have to be at the end",
                            p.name
                        ),
                    );
                }
                if p.optional {
                    c.err(
                        ap.name.span,
                        format!("{}: optional parameter not allowed here", p.name),
                    );
                }
            }
            c.decl_mut(id).params = params.clone();
            c.bind_params(&params);
            let ctx = Ctx {
                action: Some(id),
                ..c.ctx.clone()
            };
            c.with_ctx(ctx, |c| c.block(&a.body));
        });
        self.bind(id);
        id
    }

    fn decl_function(
        &mut self,
        f: &ast::FunctionDecl,
        span: Span,
        parent: Option<DeclId>,
    ) -> DeclId {
        let mut info = DeclInfo::new(
            EntityKind::Function,
            &f.proto.name.name,
            span,
            f.proto.name.span,
            parent,
        );
        info.annotations = Self::annotation_names(&f.proto.annotations);
        let id = self.new_decl(info);
        self.decl_mut(id).ty = Type::Function(id);
        self.scoped(|c| {
            let tps = c.type_params(&f.proto.type_params, Some(id));
            let params = c.params(&f.proto.params, Some(id), EntityKind::Param);
            for (p, ap) in params.iter().zip(&f.proto.params) {
                if p.optional {
                    c.err(
                        ap.name.span,
                        format!("{}: optional parameter not allowed here", p.name),
                    );
                }
                if matches!(p.ty, Type::Extern(_)) && c.ctx.block.is_none() {
                    // extern-typed parameters of functions are allowed (e.g. packet_in)
                }
            }
            let ret = match &f.proto.ret {
                Some(r) => c.resolve_type(r),
                None => Type::Void,
            };
            {
                let d = c.decl_mut(id);
                d.type_params = tps;
                d.params = params.clone();
                d.ret = ret.clone();
            }
            c.bind_params(&params);
            let ctx = Ctx {
                function: Some(id),
                ret: Some(ret.clone()),
                block: c.ctx.block,
                block_kind: c.ctx.block_kind,
                this_ty: c.ctx.this_ty.clone(),
                ..Ctx::default()
            };
            c.with_ctx(ctx, |c| {
                c.block(&f.body);
                if !matches!(ret, Type::Void | Type::Error) && !super::stmt::block_returns(&f.body)
                {
                    c.err(
                        f.proto.name.span,
                        format!(
                            "{}: function does not return a value on all paths",
                            f.proto.name.name
                        ),
                    );
                }
            });
        });
        // Functions are visible only after their declaration (no recursion, spec §10).
        self.bind(id);
        id
    }

    fn decl_value_set(
        &mut self,
        v: &ast::ValueSetDecl,
        span: Span,
        parent: Option<DeclId>,
    ) -> DeclId {
        let et = self.resolve_type(&v.elem_ty);
        match &et {
            Type::Bit(_)
            | Type::Signed(_)
            | Type::Bool
            | Type::Enum(_)
            | Type::NewType(_)
            | Type::Error => {}
            Type::Agg(a) if a.kind == AggKind::Struct => {}
            Type::Tuple(_) => {}
            _ => self.err(v.elem_ty.span, format!("{et}: illegal type for value_set")),
        }
        self.check_expr(&v.size, None);
        if self
            .value_of(v.size.id)
            .and_then(|x| x.as_int().cloned())
            .is_none()
        {
            self.err(
                v.size.span,
                format!("{}: value_set size must be constant", v.name.name),
            );
        }
        let mut info = DeclInfo::new(
            EntityKind::ValueSet,
            &v.name.name,
            span,
            v.name.span,
            parent,
        );
        info.annotations = Self::annotation_names(&v.annotations);
        info.ty = Type::ValueSet(Box::new(et));
        let id = self.new_decl(info);
        self.bind(id);
        id
    }

    // -----------------------------------------------------------------------------------------
    // Instantiations (spec §11.3)

    fn decl_instantiation(
        &mut self,
        inst: &ast::Instantiation,
        span: Span,
        parent: Option<DeclId>,
    ) -> Option<DeclId> {
        if self.ctx.function.is_some() || self.ctx.action.is_some() {
            self.err(
                inst.name.span,
                "invalid declaration. instantiations cannot be in a function or action",
            );
        }
        let ty = match self.block_overload(&inst.ty, &inst.args) {
            Some(d) => {
                let t = self.type_of_decl(d, &[], inst.ty.span);
                self.out.type_refs.insert(inst.ty.span, t.clone());
                t
            }
            None => self.resolve_type(&inst.ty),
        };
        // An array of instances: `T(args) name[n];`.
        let (ity, ctor, args) = match &ty {
            Type::Stack(elem, n) => {
                let (et, c, a) = self.instantiate(elem, &inst.args, inst.ty.span, span);
                let t = if et.is_error() {
                    Type::Error
                } else {
                    Type::Stack(Box::new(et), *n)
                };
                (t, c, a)
            }
            _ => self.instantiate(&ty, &inst.args, inst.ty.span, span),
        };
        if self.ctx.block.is_none() && matches!(ity, Type::Parser(_) | Type::Control(_)) {
            // Top-level instances of parsers/controls are only allowed as package arguments.
            self.err(
                inst.name.span,
                format!("{}: cannot instantiate at top-level", inst.name.name),
            );
        }
        let mut info = DeclInfo::new(
            EntityKind::Instance,
            &inst.name.name,
            span,
            inst.name.span,
            parent,
        );
        info.ty = ity.clone();
        info.annotations = Self::annotation_names(&inst.annotations);
        let id = self.new_decl(info);
        self.out.instances.insert(
            id,
            InstanceInfo {
                ty: ity.clone(),
                ctor,
                args,
            },
        );
        if let Some(init) = &inst.initializer {
            self.abstract_impls(&ity, init, inst.name.span);
        } else if let Type::Extern(o) = &ity {
            let missing: Vec<String> = self
                .decl(o.decl)
                .methods
                .iter()
                .filter(|m| {
                    self.decl(**m).is_abstract && !self.decl(**m).has_annotation("optional")
                })
                .map(|m| self.decl(*m).name.clone())
                .collect();
            for m in missing {
                self.err(
                    inst.name.span,
                    format!("{m}: abstract method not implemented"),
                );
            }
        }
        self.bind(id);
        if inst.name.name == "main" && self.ctx.block.is_none() {
            self.out.main = Some(id);
        }
        Some(id)
    }

    /// When `t` names several parsers / controls / packages (overloaded by constructor
    /// parameters), the one whose constructor parameters fit `args`.
    fn block_overload(&mut self, t: &TypeRef, args: &[ast::Arg]) -> Option<DeclId> {
        let TypeKind::Named(p) = &t.kind else {
            return None;
        };
        let decls = &self.out.decls;
        let all = self.scopes.lookup(&p.name.name, p.global, |d| {
            matches!(
                decls[d.0 as usize].kind,
                EntityKind::Parser | EntityKind::Control | EntityKind::PackageType
            )
        });
        if all.len() < 2 {
            return None;
        }
        all.iter()
            .copied()
            .find(|d| self.arity_fits(&self.decl(*d).ctor_params, args))
            .or(all.first().copied())
    }

    /// Checks constructor arguments for type `ty`; returns the instance type (type arguments
    /// inferred), the constructor and the argument map.
    pub fn instantiate(
        &mut self,
        ty: &Type,
        args: &[ast::Arg],
        ty_span: Span,
        span: Span,
    ) -> (Type, Option<DeclId>, Vec<CallArg>) {
        match ty {
            Type::Error => {
                for a in args {
                    self.check_expr(&a.value, None);
                }
                (Type::Error, None, Vec::new())
            }
            Type::Extern(o) => {
                let ctors: Vec<DeclId> = self
                    .decl(o.decl)
                    .methods
                    .iter()
                    .copied()
                    .filter(|m| self.decl(*m).kind == EntityKind::ExternCtor)
                    .collect();
                if ctors.is_empty() {
                    self.err(
                        ty_span,
                        format!("type {} has no matching constructor", o.name),
                    );
                    for a in args {
                        self.check_expr(&a.value, None);
                    }
                    return (Type::Error, None, Vec::new());
                }
                let ext_tps = self.decl(o.decl).type_params.clone();
                // Explicit type arguments fix the extern's type parameters; the rest are inferred.
                let mut subst = Vec::new();
                let mut infer = Vec::new();
                for (i, tp) in ext_tps.iter().enumerate() {
                    match o.args.get(i) {
                        Some(Type::Var(v, _)) if v == tp => infer.push(*tp),
                        Some(Type::DontCare) | None => infer.push(*tp),
                        Some(t) => subst.push((*tp, t.clone())),
                    }
                }
                let r =
                    self.resolve_overload(&ctors, &subst, &infer, &[], args, span, &o.name, true);
                match r {
                    Some((chosen, subst, map)) => {
                        // Uninferred type parameters stay don't-care; using them is an error later.
                        let targs: Vec<Type> = ext_tps
                            .iter()
                            .map(|t| {
                                subst
                                    .iter()
                                    .find(|(v, _)| v == t)
                                    .map(|(_, x)| x.clone())
                                    .unwrap_or(Type::DontCare)
                            })
                            .collect();
                        let ity = Type::Extern(Arc::new(ObjType {
                            decl: o.decl,
                            name: o.name.clone(),
                            args: targs,
                        }));
                        (ity, Some(chosen), map)
                    }
                    None => (Type::Error, None, Vec::new()),
                }
            }
            Type::Parser(o) | Type::Control(o) | Type::Package(o) => {
                let d = self.decl(o.decl).clone();
                if matches!(d.kind, EntityKind::ParserType | EntityKind::ControlType) {
                    self.err(
                        ty_span,
                        format!("{}: cannot instantiate a {}", o.name, d.kind.describe()),
                    );
                    return (Type::Error, None, Vec::new());
                }
                let params = d.ctor_params.clone();
                let tps = d.type_params.clone();
                let mut init = Vec::new();
                let mut vars = Vec::new();
                for (i, tp) in tps.iter().enumerate() {
                    match o.args.get(i) {
                        Some(Type::Var(v, _)) if v == tp => vars.push(*tp),
                        Some(Type::DontCare) | None => vars.push(*tp),
                        Some(t) => init.push((*tp, t.clone())),
                    }
                }
                let params: Vec<ParamInfo> = params
                    .iter()
                    .map(|p| ParamInfo {
                        ty: super::types::substitute(&p.ty, &init),
                        ..p.clone()
                    })
                    .collect();
                let r = self.match_call(&params, &vars, &init, args, span, &o.name, true, true);
                match r {
                    Some((subst, map)) => {
                        let mut targs = Vec::new();
                        for t in &tps {
                            match subst.iter().find(|(v, _)| v == t) {
                                Some((_, x)) => targs.push(x.clone()),
                                None => targs.push(Type::Error),
                            }
                        }
                        let obj = Arc::new(ObjType {
                            decl: o.decl,
                            name: o.name.clone(),
                            args: targs,
                        });
                        let ity = match ty {
                            Type::Parser(_) => Type::Parser(obj),
                            Type::Control(_) => Type::Control(obj),
                            _ => Type::Package(obj),
                        };
                        (ity, Some(o.decl), map)
                    }
                    None => (Type::Error, Some(o.decl), Vec::new()),
                }
            }
            _ => {
                self.err(ty_span, format!("{ty}: cannot instantiate this type"));
                for a in args {
                    self.check_expr(&a.value, None);
                }
                (Type::Error, None, Vec::new())
            }
        }
    }

    /// Implementations of abstract methods in an instantiation initializer (spec §11.3.1).
    fn abstract_impls(&mut self, ity: &Type, init: &[ast::Decl], span: Span) {
        let Type::Extern(o) = ity else {
            if !ity.is_error() {
                self.err(span, "initializers only allowed for extern instances");
            }
            return;
        };
        let ext = self.decl(o.decl).clone();
        let abstracts: Vec<DeclId> = ext
            .methods
            .iter()
            .copied()
            .filter(|m| self.decl(*m).is_abstract)
            .collect();
        if abstracts.is_empty() {
            self.err(
                span,
                "instance initializers for extern without abstract methods",
            );
            return;
        }
        let subst: Vec<(DeclId, Type)> = ext
            .type_params
            .iter()
            .copied()
            .zip(o.args.iter().cloned())
            .collect();
        let mut implemented = HashSet::new();
        self.scopes.push();
        for d in init {
            let f = match &d.kind {
                DeclKind::Function(f) => f,
                DeclKind::Instantiation(_) | DeclKind::Const(_) => {
                    self.decl_any(d, None);
                    continue;
                }
                _ => {
                    self.err(
                        d.span,
                        "only abstract method implementations are allowed in an initializer",
                    );
                    continue;
                }
            };
            let name = &f.proto.name.name;
            // Abstract methods cannot be overloaded: match by name (spec §11.3.1).
            let Some(m) = abstracts
                .iter()
                .copied()
                .find(|m| self.decl(*m).name == *name)
            else {
                self.err(
                    f.proto.name.span,
                    format!("{name}: no matching abstract method in {}", ext.name),
                );
                continue;
            };
            implemented.insert(m);
            let ctx = Ctx {
                this_ty: Some(ity.clone()),
                block: self.ctx.block,
                block_kind: self.ctx.block_kind,
                ..Ctx::default()
            };
            let fid = self.with_ctx(ctx, |c| c.scoped(|c| c.decl_function(f, d.span, None)));
            // The implementation must match the abstract signature (omitting only @optional parameters).
            let want = self.decl(m).clone();
            let have = self.decl(fid).clone();
            let ret = super::types::substitute(&want.ret, &subst);
            let mut ok =
                super::types::same(&ret, &have.ret) && have.params.len() <= want.params.len();
            ok &= want.params[have.params.len().min(want.params.len())..]
                .iter()
                .all(|p| p.optional);
            for (pw, ph) in want.params.iter().zip(&have.params) {
                let pt = super::types::substitute(&pw.ty, &subst);
                if pw.dir != ph.dir || !super::types::same(&pt, &ph.ty) {
                    ok = false;
                }
            }
            if !ok {
                self.err(
                    f.proto.name.span,
                    format!(
                        "{name}: implementation does not match the abstract method's signature"
                    ),
                );
            }
        }
        self.scopes.pop();
        for m in abstracts {
            if !implemented.contains(&m) && !self.decl(m).has_annotation("optional") {
                let n = self.decl(m).name.clone();
                self.err(span, format!("{n}: abstract method not implemented"));
            }
        }
    }
}

/// Whether `t` may be a header field (spec §7.2.2): bit/int/varbit/bool, serializable enums,
/// new types over those, and structs of those.
fn header_field_ok(t: &Type, depth: u32) -> bool {
    if depth > 64 {
        return false;
    }
    match t {
        Type::Bit(_) | Type::Signed(_) | Type::Bool | Type::Error | Type::Var(..) => true,
        Type::Varbit(_) => depth == 0,
        Type::Enum(e) => e.underlying.is_some(),
        Type::NewType(n) => header_field_ok(&n.underlying, depth),
        Type::Agg(a) if a.kind == AggKind::Struct => a
            .fields
            .iter()
            .all(|(_, f)| header_field_ok(f, depth + 1) && !matches!(f, Type::Varbit(_))),
        Type::Stack(e, _) => !e.is_header_like() && header_field_ok(e, depth + 1),
        _ => false,
    }
}

/// Whether `t` mentions the declaration `d` (a type used as its own type argument).
fn mentions_decl(t: &Type, d: DeclId, depth: u32) -> bool {
    if depth > 32 {
        return false;
    }
    match t {
        Type::Agg(a) => a.decl == d || a.args.iter().any(|x| mentions_decl(x, d, depth + 1)),
        Type::Extern(o) | Type::Parser(o) | Type::Control(o) | Type::Package(o) => {
            o.decl == d || o.args.iter().any(|x| mentions_decl(x, d, depth + 1))
        }
        Type::Stack(x, _) | Type::List(x) => mentions_decl(x, d, depth + 1),
        Type::Tuple(xs) => xs.iter().any(|x| mentions_decl(x, d, depth + 1)),
        _ => false,
    }
}

/// The annotations attached to a declaration.
fn decl_annotations(d: &ast::Decl) -> Option<&ast::Annotations> {
    Some(match &d.kind {
        DeclKind::Const(c) => &c.annotations,
        DeclKind::Variable(v) => &v.annotations,
        DeclKind::Typedef(t) => &t.annotations,
        DeclKind::Header(s) | DeclKind::HeaderUnion(s) | DeclKind::Struct(s) => &s.annotations,
        DeclKind::Enum(e) => &e.annotations,
        DeclKind::Extern(e) => &e.annotations,
        DeclKind::ExternFunction(f) => &f.annotations,
        DeclKind::ParserType(p) | DeclKind::ControlType(p) | DeclKind::PackageType(p) => {
            &p.annotations
        }
        DeclKind::Parser(p) => &p.annotations,
        DeclKind::Control(c) => &c.annotations,
        DeclKind::Action(a) => &a.annotations,
        DeclKind::Function(f) => &f.proto.annotations,
        DeclKind::Table(t) => &t.annotations,
        DeclKind::Instantiation(i) => &i.annotations,
        DeclKind::ValueSet(v) => &v.annotations,
        DeclKind::Error(_) | DeclKind::MatchKind(_) => return None,
    })
}

fn contains_dont_care(t: &Type, depth: u32) -> bool {
    if depth > 32 {
        return false;
    }
    match t {
        Type::DontCare => true,
        Type::Tuple(ts) => ts.iter().any(|x| contains_dont_care(x, depth + 1)),
        Type::Stack(x, _) | Type::List(x) => contains_dont_care(x, depth + 1),
        Type::Agg(a) => a.args.iter().any(|x| contains_dont_care(x, depth + 1)),
        _ => false,
    }
}
