//! The P4Info of a program (P4Runtime spec v1.5 §"P4Info"), as p4c writes it after its front
//! end: the same objects, names, aliases and ids (p4-ir's [`p4_ir::names`]), so a controller
//! written against p4c's P4Info works unchanged against nevermiss.
//!
//! Built from the checked program (annotations, types) and its IR ([`p4_ir::Origins`] says
//! which declaration each IR object comes from). [`ControlPlaneIds`] maps P4Info ids to the IR's
//! tables, actions and externs, for the server.
//!
//! What nevermiss emits for PNA tables (reference §1.12, no P4Info field exists), as p4c's PNA
//! handler does: an `add_on_miss` table is an ordinary table; `pna_idle_timeout =
//! NOTIFY_CONTROL` gives `idle_timeout_behavior: NOTIFY_CONTROL`; `AUTO_DELETE` gives none (the
//! data plane removes expired entries without telling the controller).

use crate::pb::p4::config::v1 as pi;
use p4_front::ast::{self, AnnotationBody, Annotations, DeclKind, ExprKind};
use p4_front::check::{AggKind, Checked, DeclId, EntityKind, Type};
use p4_front::driver::Compiled;
use p4_front::source::Span;
use p4_ir::names::{Allocation, Kind, Symbols};
use p4_ir::{Arch, ExternId, ExternKind, ExternOrigin, FnId, Program, TableId};
use std::collections::{BTreeMap, HashMap};

/// The P4Info of a program and the map between its ids and the IR.
pub struct Built {
    pub p4info: pi::P4Info,
    pub ids: ControlPlaneIds,
}

/// P4Info ids ↔ IR objects.
#[derive(Clone, Debug, Default)]
pub struct ControlPlaneIds {
    /// Table id → IR table.
    pub tables: HashMap<u32, TableId>,
    /// Action id → the IR functions of that control-plane name (one per instance).
    pub actions: HashMap<u32, Vec<FnId>>,
    /// Counter, direct counter, meter, direct meter, register, action profile and digest ids
    /// → IR extern.
    pub externs: HashMap<u32, ExternId>,
    /// Value set id → IR value set.
    pub value_sets: HashMap<u32, u32>,
    /// Digest id → name of the v1model digest type (v1model digests are calls, not externs).
    pub v1_digests: HashMap<u32, String>,
    /// The id of `NoAction` when the P4Info lists it for tables declared without a
    /// `default_action` (P4_16 §14.2.1.3: their default is `NoAction`; p4c adds it to their
    /// action list as `@defaultonly`; in the IR such a table runs no action on a miss).
    pub no_action: Option<u32>,
}

/// Declarations of the AST by id.
struct Ast<'a> {
    ck: &'a Checked,
    by_span: HashMap<Span, &'a ast::Decl>,
}

impl<'a> Ast<'a> {
    fn new(c: &'a Compiled) -> Ast<'a> {
        fn walk<'a>(ds: &'a [ast::Decl], out: &mut HashMap<Span, &'a ast::Decl>) {
            for d in ds {
                out.insert(d.span, d);
                match &d.kind {
                    DeclKind::Control(c) => walk(&c.locals, out),
                    DeclKind::Parser(p) => walk(&p.locals, out),
                    DeclKind::Instantiation(i) => {
                        if let Some(init) = &i.initializer {
                            walk(init, out)
                        }
                    }
                    _ => {}
                }
            }
        }
        let mut by_span = HashMap::new();
        walk(&c.program.decls, &mut by_span);
        Ast {
            ck: &c.checked,
            by_span,
        }
    }

    fn decl(&self, id: u32) -> Option<&'a ast::Decl> {
        let info = self.ck.decls.get(id as usize)?;
        self.by_span.get(&info.span).copied()
    }
}

/// The action of core.p4 that does nothing (P4_16 §14.1).
const NO_ACTION: &str = "NoAction";

/// Whether a table declares its `default_action`.
fn has_default_action(td: &ast::TableDecl) -> bool {
    td.properties.iter().any(|p| {
        matches!(&p.kind, ast::TablePropertyKind::Other { name, .. } if name.name == "default_action")
    })
}

/// Annotations of a declaration kind that carries them.
fn annotations_of(d: &ast::Decl) -> &Annotations {
    static NONE: Annotations = Vec::new();
    match &d.kind {
        DeclKind::Table(t) => &t.annotations,
        DeclKind::Action(a) => &a.annotations,
        DeclKind::Instantiation(i) => &i.annotations,
        DeclKind::ValueSet(v) => &v.annotations,
        DeclKind::Header(s) | DeclKind::HeaderUnion(s) | DeclKind::Struct(s) => &s.annotations,
        DeclKind::Enum(e) => &e.annotations,
        DeclKind::Typedef(t) => &t.annotations,
        DeclKind::Control(c) => &c.annotations,
        DeclKind::Parser(p) => &p.annotations,
        _ => &NONE,
    }
}

fn find<'x>(anns: &'x Annotations, name: &str) -> Option<&'x ast::Annotation> {
    anns.iter().find(|a| a.name.name == name)
}

fn has(anns: &Annotations, name: &str) -> bool {
    find(anns, name).is_some()
}

/// The first expression of an annotation as a string literal.
fn string_arg(a: &ast::Annotation) -> Option<String> {
    match &a.body {
        AnnotationBody::Expressions(es) => match es.first().map(|e| &e.kind) {
            Some(ExprKind::String(s)) => Some(s.clone()),
            _ => None,
        },
        AnnotationBody::Unparsed(s) => Some(s.trim().trim_matches('"').to_string()),
        _ => None,
    }
}

/// The first expression of an annotation as an integer.
fn int_arg(a: &ast::Annotation) -> Option<u64> {
    match &a.body {
        AnnotationBody::Expressions(es) => match es.first().map(|e| &e.kind) {
            Some(ExprKind::Int { value, .. }) => u64::try_from(value).ok(),
            _ => None,
        },
        AnnotationBody::Unparsed(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// `k = v` pairs of an annotation written `@a(k1 = v1, k2 = v2)` or `@a[k1 = v1]`; string
/// values unquoted.
fn key_values(a: &ast::Annotation) -> Vec<(String, String)> {
    match &a.body {
        AnnotationBody::KeyValues(kvs) => kvs
            .iter()
            .map(|(k, v)| {
                let v = match &v.kind {
                    ExprKind::String(s) => s.clone(),
                    _ => p4_front::printer::print_expr(v),
                };
                (k.name.clone(), v)
            })
            .collect(),
        AnnotationBody::Unparsed(t) => t
            .split(',')
            .filter_map(|kv| {
                let (k, v) = kv.split_once('=')?;
                Some((k.trim().to_string(), v.trim().trim_matches('"').to_string()))
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn at_id(anns: &Annotations) -> Option<u64> {
    find(anns, "id").and_then(int_arg)
}

/// The annotation as P4 text (`@noWarn("unused")`), as p4c's P4Info carries it.
fn annotation_text(a: &ast::Annotation) -> String {
    match &a.body {
        AnnotationBody::Empty => format!("@{}", a.name.name),
        AnnotationBody::Expressions(es) => format!(
            "@{}({})",
            a.name.name,
            es.iter()
                .map(p4_front::printer::print_expr)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        AnnotationBody::Unparsed(s) => format!("@{}({})", a.name.name, s.trim()),
        AnnotationBody::KeyValues(_) | AnnotationBody::StructuredExpressions(_) => {
            format!("@{}", a.name.name)
        }
    }
}

/// A preamble: annotations except `@name`, `@id`, `@brief`, `@description` (and those `skip`
/// says), and the documentation from `@brief` / `@description`.
fn preamble(
    ck: &Checked,
    id: u32,
    name: &str,
    alias: &str,
    anns: &Annotations,
    skip: &[&str],
) -> Result<pi::Preamble, String> {
    let mut p = pi::Preamble {
        id,
        name: name.to_string(),
        alias: alias.to_string(),
        ..Default::default()
    };
    add_annotations(ck, &mut p, anns, skip)?;
    p.doc = doc(anns);
    Ok(p)
}

/// A P4Info message with `annotations` and `structured_annotations` (P4Runtime spec
/// §"Annotating P4 code with structured annotations").
trait Annotated {
    fn lists(&mut self) -> (&mut Vec<String>, &mut Vec<pi::StructuredAnnotation>);
}

macro_rules! annotated {
    ($($t:ty),*) => {$(
        impl Annotated for $t {
            fn lists(&mut self) -> (&mut Vec<String>, &mut Vec<pi::StructuredAnnotation>) {
                (&mut self.annotations, &mut self.structured_annotations)
            }
        }
    )*};
}

annotated!(
    pi::Preamble,
    pi::MatchField,
    pi::ActionRef,
    pi::action::Param,
    pi::controller_packet_metadata::Metadata,
    pi::PkgInfo,
    pi::P4NewTypeSpec
);

/// The annotations of an element as p4c's P4Info carries them: every structured annotation
/// (P4_16 §18.2) with its values, and the unstructured ones as P4 text, except `@name`, `@id`,
/// `@brief`, `@description` and those `skip` names.
fn add_annotations(
    ck: &Checked,
    out: &mut impl Annotated,
    anns: &Annotations,
    skip: &[&str],
) -> Result<(), String> {
    let (texts, structured) = out.lists();
    for a in anns {
        let n = a.name.name.as_str();
        let body = match &a.body {
            AnnotationBody::StructuredExpressions(es) => {
                pi::structured_annotation::Body::ExpressionList(pi::ExpressionList {
                    expressions: es
                        .iter()
                        .map(|e| structured_value(ck, n, e))
                        .collect::<Result<_, _>>()?,
                })
            }
            AnnotationBody::KeyValues(kvs) => {
                pi::structured_annotation::Body::KvPairList(pi::KeyValuePairList {
                    kv_pairs: kvs
                        .iter()
                        .map(|(k, e)| {
                            Ok(pi::KeyValuePair {
                                key: k.name.clone(),
                                value: Some(structured_value(ck, n, e)?),
                            })
                        })
                        .collect::<Result<_, String>>()?,
                })
            }
            _ => {
                if !matches!(n, "name" | "id" | "brief" | "description") && !skip.contains(&n) {
                    texts.push(annotation_text(a));
                }
                continue;
            }
        };
        structured.push(pi::StructuredAnnotation {
            name: n.to_string(),
            body: Some(body),
            ..Default::default()
        });
    }
    Ok(())
}

/// The value of one expression of a structured annotation: the checker made it a compile-time
/// `int`, `string` or `bool` (P4_16 §18.2); P4Info holds integers as int64 (P4Runtime spec
/// §"Structured annotations").
fn structured_value(ck: &Checked, ann: &str, e: &ast::Expr) -> Result<pi::Expression, String> {
    use p4_front::check::Value;
    use pi::expression::Value as V;
    let v = match ck.value_of(e.id) {
        Some(Value::Int(i)) => V::Int64Value(i64::try_from(i).map_err(|_| {
            format!(
                "@{ann}: integer {i} in a structured annotation does not fit in int64 (P4Info \
                 holds 64-bit integers; use a string for larger values)"
            )
        })?),
        Some(Value::Bool(b)) => V::BoolValue(*b),
        Some(Value::String(s)) => V::StringValue(s.clone()),
        _ => return Err(format!("@{ann}: a structured annotation value is not an int, string or bool")),
    };
    Ok(pi::Expression { value: Some(v) })
}

fn doc(anns: &Annotations) -> Option<pi::Documentation> {
    let brief = find(anns, "brief").and_then(string_arg);
    let description = find(anns, "description").and_then(string_arg);
    (brief.is_some() || description.is_some()).then(|| pi::Documentation {
        brief: brief.unwrap_or_default(),
        description: description.unwrap_or_default(),
    })
}

/// Ids 1..n for fields, params and metadata, `@id` first (p4c's `FieldIdAllocator`).
fn field_ids(ats: &[Option<u64>]) -> Vec<u32> {
    let mut used: std::collections::BTreeSet<u32> = ats
        .iter()
        .filter_map(|a| a.and_then(|v| u32::try_from(v).ok()))
        .collect();
    let mut out = Vec::with_capacity(ats.len());
    let mut next = 1u32;
    for a in ats {
        match a.and_then(|v| u32::try_from(v).ok()) {
            Some(v) => {
                out.push(v);
                next += 1;
            }
            None => {
                while used.contains(&next) {
                    next += 1;
                }
                out.push(next);
                used.insert(next);
            }
        }
    }
    out
}

/// The P4 architecture name P4Info's `pkg_info.arch` carries.
fn arch_name(a: Arch) -> &'static str {
    match a {
        Arch::V1Model => "v1model",
        Arch::Psa => "psa",
        Arch::PnaV06 | Arch::PnaV07 => "pna",
    }
}

/// Builds the P4Info of a compiled and lowered program.
pub fn build(c: &Compiled, prog: &Program) -> Result<Built, String> {
    Builder::new(c, prog).run()
}

struct Builder<'a> {
    ast: Ast<'a>,
    ck: &'a Checked,
    prog: &'a Program,
    types: TypeInfo,
}

/// The objects of the P4Info before ids are known: (kind, name, `@id`) of each.
struct Object<'a> {
    kind: Kind,
    name: String,
    anns: &'a Annotations,
}

impl<'a> Builder<'a> {
    fn new(c: &'a Compiled, prog: &'a Program) -> Builder<'a> {
        Builder {
            ast: Ast::new(c),
            ck: &c.checked,
            prog,
            types: TypeInfo::default(),
        }
    }

    fn table_decl(&self, t: TableId) -> Option<&'a ast::Decl> {
        let id = *self.prog.origins.tables.get(t as usize)?;
        self.ast.decl(id)
    }

    fn fn_decl(&self, f: FnId) -> Option<&'a ast::Decl> {
        let id = (*self.prog.origins.functions.get(f as usize)?)?;
        self.ast.decl(id)
    }

    /// The P4Info name and annotations of an extern instance, and whether it is exposed.
    fn extern_name(&self, x: ExternId) -> Option<(String, &'a Annotations)> {
        let inst = self.prog.externs.get(x as usize)?;
        match self.prog.origins.externs.get(x as usize)? {
            ExternOrigin::Instance(d) => {
                let decl = self.ast.decl(*d)?;
                Some((inst.name.clone(), annotations_of(decl)))
            }
            ExternOrigin::TableProperty { table, property } => {
                // Constructed in place: named by the property's `@name`. p4c refuses an
                // anonymous one ("not supported by P4Runtime"); nevermiss names it after the
                // table and the property (`C.t.implementation`), unique, as the IR does.
                let decl = self.ast.decl(*table)?;
                let DeclKind::Table(t) = &decl.kind else {
                    return None;
                };
                let p = t.properties.iter().find(|p| {
                    matches!(&p.kind, ast::TablePropertyKind::Other { name, .. } if name.name == *property)
                })?;
                let name = find(&p.annotations, "name")
                    .and_then(string_arg)
                    .map(|n| n.trim_start_matches('.').to_string())
                    .unwrap_or_else(|| inst.name.clone());
                Some((name, &p.annotations))
            }
            ExternOrigin::Argument => None,
        }
    }

    fn run(mut self) -> Result<Built, String> {
        let prog = self.prog;
        let mut syms = Symbols::default();
        let mut objects: Vec<Object<'a>> = Vec::new();
        // Tables and the actions they reference.
        let mut used_actions: BTreeMap<String, Vec<FnId>> = BTreeMap::new();
        for (ti, t) in prog.tables.iter().enumerate() {
            let Some(d) = self.table_decl(ti as TableId) else {
                continue;
            };
            let anns = annotations_of(d);
            if has(anns, "hidden") {
                continue;
            }
            objects.push(Object {
                kind: Kind::Table,
                name: t.name.clone(),
                anns,
            });
        }
        // Tables without `default_action` get p4c's implicit `@defaultonly NoAction`.
        let implicit_no_action = prog.tables.iter().enumerate().any(|(ti, _)| {
            self.table_decl(ti as TableId)
                .is_some_and(|d| matches!(&d.kind, DeclKind::Table(td) if !has_default_action(td)))
        });
        // The actions of the P4Info, one per control-plane name: those tables list and those a
        // control's apply block calls (p4c's front end inlines actions called by actions).
        let mut listed: Vec<FnId> = prog
            .tables
            .iter()
            .flat_map(|t| t.actions.iter().map(|a| a.func))
            .collect();
        for f in &prog.functions {
            if f.kind == p4_ir::FnKind::Control {
                direct_action_calls(prog, &f.body, &mut listed);
            }
        }
        for fi in listed {
            if let Some(f) = prog.functions.get(fi as usize) {
                let fns = used_actions.entry(f.name.clone()).or_default();
                if !fns.contains(&fi) {
                    fns.push(fi);
                }
            }
        }
        let no_action_decl = self.global_no_action();
        if implicit_no_action && no_action_decl.is_some() {
            used_actions.entry(NO_ACTION.to_string()).or_default();
        }
        for (name, fns) in &used_actions {
            let anns = match fns.first() {
                Some(f) => self.fn_decl(*f).map(annotations_of),
                None => no_action_decl.map(annotations_of),
            };
            if let Some(anns) = anns {
                if has(anns, "hidden") {
                    continue;
                }
                objects.push(Object {
                    kind: Kind::Action,
                    name: name.clone(),
                    anns,
                });
            }
        }
        // Externs.
        let mut externs: Vec<(ExternId, Kind, String, &'a Annotations)> = Vec::new();
        for (xi, x) in prog.externs.iter().enumerate() {
            let xi = xi as ExternId;
            let kind = match x.kind {
                ExternKind::Counter { .. } => Kind::Counter,
                ExternKind::DirectCounter { .. } => Kind::DirectCounter,
                ExternKind::Meter { .. } => Kind::Meter,
                ExternKind::DirectMeter { .. } => Kind::DirectMeter,
                ExternKind::Register { .. } => Kind::Register,
                ExternKind::ActionProfile { .. } | ExternKind::ActionSelector { .. } => {
                    Kind::ActionProfile
                }
                ExternKind::Digest { .. } => Kind::Digest,
                _ => continue,
            };
            let Some((name, anns)) = self.extern_name(xi) else {
                continue;
            };
            if has(anns, "hidden") {
                continue;
            }
            objects.push(Object {
                kind,
                name: name.clone(),
                anns,
            });
            externs.push((xi, kind, name, anns));
        }
        // v1model digests: one per data type.
        let mut v1_digests: BTreeMap<String, Type> = BTreeMap::new();
        for &node in &prog.origins.v1_digests {
            if let Some(t) = self.ck.type_of(ast::NodeId(node)) {
                v1_digests
                    .entry(type_name_of(t, &self.ast))
                    .or_insert_with(|| t.clone());
            }
        }
        static NONE: Annotations = Vec::new();
        for name in v1_digests.keys() {
            objects.push(Object {
                kind: Kind::Digest,
                name: name.clone(),
                anns: &NONE,
            });
        }
        // Value sets.
        for (vi, v) in prog.value_sets.iter().enumerate() {
            let Some(d) = prog
                .origins
                .value_sets
                .get(vi)
                .and_then(|d| self.ast.decl(*d))
            else {
                continue;
            };
            objects.push(Object {
                kind: Kind::ValueSet,
                name: v.name.clone(),
                anns: annotations_of(d),
            });
        }
        // Controller packet metadata: headers annotated @controller_header.
        let controller_headers = self.controller_headers();
        for (name, anns, _) in &controller_headers {
            objects.push(Object {
                kind: Kind::ControllerHeader,
                name: name.clone(),
                anns,
            });
        }
        for o in &objects {
            syms.add(o.kind, &o.name, at_id(o.anns))?;
        }
        let alloc = syms.allocate()?;
        let mut out = pi::P4Info {
            pkg_info: Some(self.pkg_info()?),
            ..Default::default()
        };
        let mut ids = ControlPlaneIds::default();
        let id_of = |k: Kind, n: &str| alloc.id(k, n).unwrap_or(0);
        // Tables.
        for (ti, t) in prog.tables.iter().enumerate() {
            let Some(d) = self.table_decl(ti as TableId) else {
                continue;
            };
            let DeclKind::Table(td) = &d.kind else {
                continue;
            };
            if has(&td.annotations, "hidden") {
                continue;
            }
            let id = id_of(Kind::Table, &t.name);
            ids.tables.insert(id, ti as TableId);
            let decl = prog.origins.tables[ti];
            let table = self.table(t, td, decl, id, &alloc, prog)?;
            out.tables.push(table);
        }
        // Actions (one per name; p4c deduplicates the per-instance copies).
        for (name, fns) in &used_actions {
            let decl = match fns.first() {
                Some(f) => self.fn_decl(*f),
                None => no_action_decl,
            };
            let Some(decl) = decl else {
                continue;
            };
            let DeclKind::Action(ad) = &decl.kind else {
                continue;
            };
            if has(&ad.annotations, "hidden") {
                continue;
            }
            let id = id_of(Kind::Action, name);
            ids.actions.insert(id, fns.clone());
            if name == NO_ACTION {
                ids.no_action = Some(id);
            }
            // p4c's front end turns the directionless parameters of an action that no table
            // lists into locals (its calls bind them all): such an action has no parameters.
            let in_table = prog
                .tables
                .iter()
                .any(|t| t.actions.iter().any(|a| a.name == *name));
            out.actions
                .push(self.action(ad, decl, id, name, &alloc, in_table)?);
        }
        // Externs.
        for (xi, kind, name, anns) in &externs {
            let id = id_of(*kind, name);
            ids.externs.insert(id, *xi);
            let ck = self.ck;
            let pre = |skip: &[&str]| preamble(ck, id, name, &alloc.alias(name), anns, skip);
            let inst = &prog.externs[*xi as usize];
            let direct_table = || {
                prog.tables
                    .iter()
                    .find(|t| t.direct_counter == Some(*xi) || t.direct_meter == Some(*xi))
                    .map_or(0, |t| id_of(Kind::Table, &t.name))
            };
            let type_args = self.instance_type_args(*xi);
            match &inst.kind {
                ExternKind::Counter { size, kind } => out.counters.push(pi::Counter {
                    preamble: Some(pre(&[])?),
                    spec: Some(counter_spec(*kind)),
                    size: i64::from(*size),
                    index_type_name: self.index_type_name(&type_args, 1),
                }),
                ExternKind::DirectCounter { kind } => out.direct_counters.push(pi::DirectCounter {
                    preamble: Some(pre(&[])?),
                    spec: Some(counter_spec(*kind)),
                    direct_table_id: direct_table(),
                }),
                ExternKind::Meter { size, bytes } => out.meters.push(pi::Meter {
                    preamble: Some(pre(&[])?),
                    spec: Some(meter_spec(*bytes)),
                    size: i64::from(*size),
                    index_type_name: self.index_type_name(&type_args, 0),
                }),
                ExternKind::DirectMeter { bytes } => out.direct_meters.push(pi::DirectMeter {
                    preamble: Some(pre(&[])?),
                    spec: Some(meter_spec(*bytes)),
                    direct_table_id: direct_table(),
                }),
                ExternKind::Register { size, .. } => {
                    let elem = type_args.first().cloned().unwrap_or(Type::Bit(32));
                    let spec = self.types.spec(&elem, &self.ast);
                    out.registers.push(pi::Register {
                        preamble: Some(pre(&[])?),
                        type_spec: Some(spec),
                        size: i32::try_from(*size).unwrap_or(i32::MAX),
                        index_type_name: self.index_type_name(&type_args, 1),
                    })
                }
                ExternKind::ActionProfile { size } | ExternKind::ActionSelector { size, .. } => {
                    let selector = matches!(inst.kind, ExternKind::ActionSelector { .. });
                    let max_group = find(anns, "max_group_size").and_then(int_arg);
                    let mut table_ids: Vec<u32> = prog
                        .tables
                        .iter()
                        .filter(|t| t.implementation == Some(*xi))
                        .map(|t| id_of(Kind::Table, &t.name))
                        .collect();
                    table_ids.sort_unstable();
                    out.action_profiles.push(pi::ActionProfile {
                        preamble: Some(pre(&[
                            "max_group_size",
                            "selector_size_semantics",
                            "max_member_weight",
                        ])?),
                        table_ids,
                        with_selector: selector,
                        size: i64::from(*size),
                        max_group_size: if selector {
                            max_group.and_then(|v| i32::try_from(v).ok()).unwrap_or(0)
                        } else {
                            0
                        },
                        ..Default::default()
                    })
                }
                ExternKind::Digest { .. } => {
                    let t = type_args.first().cloned().unwrap_or(Type::Bit(32));
                    let spec = self.types.spec(&t, &self.ast);
                    out.digests.push(pi::Digest {
                        preamble: Some(pre(&[])?),
                        type_spec: Some(spec),
                    })
                }
                _ => {}
            }
        }
        for (name, t) in &v1_digests {
            let id = id_of(Kind::Digest, name);
            ids.v1_digests.insert(id, name.clone());
            let spec = self.types.spec(t, &self.ast);
            out.digests.push(pi::Digest {
                preamble: Some(preamble(self.ck, id, name, &alloc.alias(name), &NONE, &[])?),
                type_spec: Some(spec),
            });
        }
        // Value sets.
        for (vi, v) in prog.value_sets.iter().enumerate() {
            let Some(d) = prog
                .origins
                .value_sets
                .get(vi)
                .and_then(|d| self.ast.decl(*d))
            else {
                continue;
            };
            let id = id_of(Kind::ValueSet, &v.name);
            ids.value_sets.insert(id, vi as u32);
            out.value_sets.push(self.value_set(v, d, id, &alloc)?);
        }
        // Controller packet metadata.
        for (name, anns, fields) in &controller_headers {
            let id = id_of(Kind::ControllerHeader, name);
            let cname = find(anns, "controller_header")
                .and_then(string_arg)
                .unwrap_or_else(|| name.clone());
            let fids = field_ids(&fields.iter().map(|f| at_id(f.2)).collect::<Vec<_>>());
            let mut metadata = Vec::with_capacity(fields.len());
            for ((fname, ty, fanns), id) in fields.iter().zip(fids) {
                let mut m = pi::controller_packet_metadata::Metadata {
                    id,
                    name: fname.clone(),
                    bitwidth: width_of(ty, &self.ast),
                    type_name: self.types.type_name(ty, &self.ast),
                    ..Default::default()
                };
                add_annotations(self.ck, &mut m, fanns, &[])?;
                metadata.push(m);
            }
            out.controller_packet_metadata
                .push(pi::ControllerPacketMetadata {
                    preamble: Some(preamble(self.ck, id, &cname, &cname, anns, &[])?),
                    metadata,
                });
        }
        if let Some(e) = self.types.errors.first() {
            return Err(e.clone());
        }
        out.type_info = Some(std::mem::take(&mut self.types).into_proto());
        Ok(Built { p4info: out, ids })
    }

    fn pkg_info(&self) -> Result<pi::PkgInfo, String> {
        let mut p = pi::PkgInfo {
            arch: arch_name(self.prog.arch).to_string(),
            ..Default::default()
        };
        // `@pkginfo(name = "...", version = "...", ...)` and `@platform_property(k = N, ...)`
        // on `main`.
        if let Some(m) = self.ck.main.and_then(|d| self.ast.decl(d.0)) {
            let anns = annotations_of(m);
            for (k, v) in find(anns, "pkginfo").map(key_values).unwrap_or_default() {
                match k.as_str() {
                    "name" => p.name = v,
                    "version" => p.version = v,
                    "organization" => p.organization = v,
                    "contact" => p.contact = v,
                    "url" => p.url = v,
                    "arch" => p.arch = v,
                    _ => {}
                }
            }
            if let Some(a) = find(anns, "platform_property") {
                let mut pp = pi::PlatformProperties::default();
                for (k, v) in key_values(a) {
                    let n: i32 = v.parse().unwrap_or(0);
                    match k.as_str() {
                        "multicast_group_table_size" => pp.multicast_group_table_size = n,
                        "multicast_group_table_total_replicas" => {
                            pp.multicast_group_table_total_replicas = n
                        }
                        "multicast_group_table_max_replicas_per_entry" => {
                            pp.multicast_group_table_max_replicas_per_entry = n
                        }
                        _ => {}
                    }
                }
                p.platform_properties = Some(pp);
            }
            add_annotations(self.ck, &mut p, anns, &["pkginfo", "platform_property"])?;
            p.doc = doc(anns);
        }
        Ok(p)
    }

    fn table(
        &mut self,
        t: &p4_ir::Table,
        td: &ast::TableDecl,
        decl: u32,
        id: u32,
        alloc: &Allocation,
        prog: &Program,
    ) -> Result<pi::Table, String> {
        let info = self
            .ck
            .tables
            .get(&DeclId(decl))
            .ok_or_else(|| format!("table {}: not checked", t.name))?;
        let keys: Vec<&ast::KeyElement> = td
            .properties
            .iter()
            .filter_map(|p| match &p.kind {
                ast::TablePropertyKind::Key(ks) => Some(ks.iter()),
                _ => None,
            })
            .flatten()
            .collect();
        let kids = field_ids(
            &keys
                .iter()
                .map(|k| at_id(&k.annotations))
                .collect::<Vec<_>>(),
        );
        let mut match_fields = Vec::new();
        for ((k, ak), kid) in info.keys.iter().zip(&keys).zip(kids) {
            let mt = match k.match_kind.as_str() {
                "exact" => pi::match_field::MatchType::Exact,
                "lpm" => pi::match_field::MatchType::Lpm,
                "ternary" => pi::match_field::MatchType::Ternary,
                "range" => pi::match_field::MatchType::Range,
                "optional" => pi::match_field::MatchType::Optional,
                "selector" => continue,
                _ => pi::match_field::MatchType::Unspecified,
            };
            let mut f = pi::MatchField {
                id: kid,
                name: k.name.trim_start_matches('.').to_string(),
                bitwidth: width_of(&k.ty, &self.ast),
                type_name: self.types.type_name(&k.ty, &self.ast),
                doc: doc(&ak.annotations),
                ..Default::default()
            };
            if mt == pi::match_field::MatchType::Unspecified {
                f.r#match = Some(pi::match_field::Match::OtherMatchType(k.match_kind.clone()));
            } else {
                f.r#match = Some(pi::match_field::Match::MatchType(mt as i32));
            }
            add_annotations(self.ck, &mut f, &ak.annotations, &[])?;
            match_fields.push(f);
        }
        let action_id = |name: &str| alloc.id(Kind::Action, name).unwrap_or(0);
        let mut action_refs = Vec::new();
        let refs: Vec<&ast::ActionRef> = td
            .properties
            .iter()
            .filter_map(|p| match &p.kind {
                ast::TablePropertyKind::Actions(a) => Some(a.iter()),
                _ => None,
            })
            .flatten()
            .collect();
        for (a, r) in t.actions.iter().zip(&refs) {
            let scope = if a.table_only {
                pi::action_ref::Scope::TableOnly
            } else if a.default_only {
                pi::action_ref::Scope::DefaultOnly
            } else {
                pi::action_ref::Scope::TableAndDefault
            };
            let mut ar = pi::ActionRef {
                id: action_id(&a.name),
                scope: scope as i32,
                ..Default::default()
            };
            add_annotations(self.ck, &mut ar, &r.annotations, &[])?;
            action_refs.push(ar);
        }
        if !has_default_action(td) {
            // p4c's front end: `default_action = NoAction()`, and `@defaultonly NoAction` in the
            // action list unless it is there already.
            let na = action_id(NO_ACTION);
            if !t.actions.iter().any(|a| a.name == NO_ACTION) {
                action_refs.push(pi::ActionRef {
                    id: na,
                    scope: pi::action_ref::Scope::DefaultOnly as i32,
                    annotations: vec!["@defaultonly".to_string()],
                    ..Default::default()
                });
            }
        }
        let mut table = pi::Table {
            preamble: Some(preamble(
                self.ck,
                id,
                &t.name,
                &alloc.alias(&t.name),
                &td.annotations,
                &[],
            )?),
            match_fields,
            action_refs,
            size: i64::try_from(info.size.filter(|s| *s > 0).unwrap_or(1024)).unwrap_or(i64::MAX),
            is_const_table: t.entries_const,
            has_initial_entries: !t.entries.is_empty(),
            ..Default::default()
        };
        if let Some((ai, params)) = &t.default_action {
            if let Some(a) = t.actions.get(*ai as usize) {
                let aid = action_id(&a.name);
                if t.default_const {
                    table.const_default_action_id = aid;
                }
                // Arguments as p4c writes them: each parameter's value padded to its width in
                // bytes, ids as the action's parameters have them.
                let pdecl = self.fn_decl(a.func).and_then(|d| match &d.kind {
                    DeclKind::Action(ad) => Some(ad),
                    _ => None,
                });
                let pids = pdecl
                    .map(|ad| {
                        field_ids(
                            &ad.params
                                .iter()
                                .filter(|p| p.direction == ast::Direction::None)
                                .map(|p| at_id(&p.annotations))
                                .collect::<Vec<_>>(),
                        )
                    })
                    .unwrap_or_default();
                let mut arguments = Vec::new();
                let mut off = 0usize;
                for (i, p) in a.params.iter().enumerate() {
                    let n = (p.ty.width as usize).div_ceil(8);
                    arguments.push(pi::table_action_call::Argument {
                        param_id: pids.get(i).copied().unwrap_or(i as u32 + 1),
                        value: params.get(off..off + n).unwrap_or(&[]).to_vec(),
                    });
                    off += n;
                }
                table.initial_default_action = Some(pi::TableActionCall {
                    action_id: aid,
                    arguments,
                });
            }
        }
        if !has_default_action(td) {
            table.initial_default_action = Some(pi::TableActionCall {
                action_id: action_id(NO_ACTION),
                arguments: Vec::new(),
            });
        }
        if let Some(x) = t.implementation {
            if let Some((n, _)) = self.extern_name(x) {
                table.implementation_id = alloc.id(Kind::ActionProfile, &n).unwrap_or(0);
            }
        }
        for (x, k) in [
            (t.direct_counter, Kind::DirectCounter),
            (t.direct_meter, Kind::DirectMeter),
        ] {
            if let Some((n, _)) = x.and_then(|x| self.extern_name(x)) {
                table.direct_resource_ids.push(alloc.id(k, &n).unwrap_or(0));
            }
        }
        let idle = info.idle_timeout.as_deref();
        let notify = match prog.arch {
            Arch::V1Model => idle == Some("support_timeout"),
            _ => idle == Some("NOTIFY_CONTROL"),
        };
        if notify {
            table.idle_timeout_behavior = pi::table::IdleTimeoutBehavior::NotifyControl as i32;
        }
        Ok(table)
    }

    fn action(
        &mut self,
        ad: &ast::ActionDecl,
        decl: &ast::Decl,
        id: u32,
        name: &str,
        alloc: &Allocation,
        with_params: bool,
    ) -> Result<pi::Action, String> {
        let info = self
            .ck
            .decl_by_span
            .get(&decl.span)
            .map(|d| self.ck.decl(*d));
        // Directionless parameters only: the control plane supplies them.
        let params: Vec<(&ast::Param, Option<Type>)> = ad
            .params
            .iter()
            .filter(|p| with_params && p.direction == ast::Direction::None)
            .map(|p| {
                let t = info
                    .and_then(|i| i.params.iter().find(|q| q.name == p.name.name))
                    .map(|q| q.ty.clone());
                (p, t)
            })
            .collect();
        let pids = field_ids(
            &params
                .iter()
                .map(|(p, _)| at_id(&p.annotations))
                .collect::<Vec<_>>(),
        );
        let mut out = pi::Action {
            preamble: Some(preamble(
                self.ck,
                id,
                name,
                &alloc.alias(name),
                &ad.annotations,
                &[],
            )?),
            params: Vec::new(),
        };
        for ((p, t), pid) in params.iter().zip(pids) {
            let t = t.clone().unwrap_or(Type::Bit(0));
            let pname = find(&p.annotations, "name")
                .and_then(string_arg)
                .unwrap_or_else(|| p.name.name.clone());
            let mut param = pi::action::Param {
                id: pid,
                name: pname,
                bitwidth: if matches!(t, Type::Enum(ref e) if e.underlying.is_none()) {
                    0
                } else {
                    width_of(&t, &self.ast)
                },
                type_name: self.types.type_name(&t, &self.ast),
                doc: doc(&p.annotations),
                ..Default::default()
            };
            add_annotations(self.ck, &mut param, &p.annotations, &[])?;
            out.params.push(param);
        }
        Ok(out)
    }

    fn value_set(
        &mut self,
        v: &p4_ir::ValueSet,
        d: &ast::Decl,
        id: u32,
        alloc: &Allocation,
    ) -> Result<pi::ValueSet, String> {
        let anns = annotations_of(d);
        let elem = self
            .ck
            .decl_by_span
            .get(&d.span)
            .map(|i| self.ck.decl(*i).ty.clone());
        let elem = match elem {
            Some(Type::ValueSet(t)) => *t,
            Some(t) => t,
            None => Type::Bit(0),
        };
        // A struct element gives one match field per member, a scalar one field.
        let members: Vec<(String, Type, Option<&ast::Field>)> = match &elem {
            Type::Agg(a) if a.kind == AggKind::Struct => {
                let fields = self.struct_fields(a.decl);
                a.fields
                    .iter()
                    .enumerate()
                    .map(|(i, (n, t))| (n.clone(), t.clone(), fields.and_then(|f| f.get(i))))
                    .collect()
            }
            t => vec![(String::new(), t.clone(), None)],
        };
        let fids = field_ids(
            &members
                .iter()
                .map(|m| m.2.and_then(|f| at_id(&f.annotations)))
                .collect::<Vec<_>>(),
        );
        let mut matches = Vec::new();
        for ((n, t, f), fid) in members.iter().zip(fids) {
            let kind = f
                .and_then(|f| find(&f.annotations, "match"))
                .and_then(|a| match &a.body {
                    AnnotationBody::Expressions(es) => match es.first().map(|e| &e.kind) {
                        Some(ExprKind::Path(p)) => Some(p.name.name.clone()),
                        _ => None,
                    },
                    AnnotationBody::Unparsed(s) => Some(s.trim().to_string()),
                    _ => None,
                })
                .unwrap_or_else(|| "exact".to_string());
            let mt = match kind.as_str() {
                "exact" => pi::match_field::MatchType::Exact,
                "lpm" => pi::match_field::MatchType::Lpm,
                "ternary" => pi::match_field::MatchType::Ternary,
                "range" => pi::match_field::MatchType::Range,
                "optional" => pi::match_field::MatchType::Optional,
                _ => pi::match_field::MatchType::Unspecified,
            };
            let mut mf = pi::MatchField {
                id: fid,
                name: n.clone(),
                bitwidth: width_of(t, &self.ast),
                type_name: self.types.type_name(t, &self.ast),
                ..Default::default()
            };
            mf.r#match = Some(if mt == pi::match_field::MatchType::Unspecified {
                pi::match_field::Match::OtherMatchType(kind)
            } else {
                pi::match_field::Match::MatchType(mt as i32)
            });
            if let Some(f) = f {
                add_annotations(self.ck, &mut mf, &f.annotations, &["match"])?;
            }
            matches.push(mf);
        }
        Ok(pi::ValueSet {
            preamble: Some(preamble(
                self.ck,
                id,
                &v.name,
                &alloc.alias(&v.name),
                anns,
                &[],
            )?),
            r#match: matches,
            size: i32::try_from(v.size).unwrap_or(i32::MAX),
        })
    }

    /// The top-level `action NoAction()` of core.p4.
    fn global_no_action(&self) -> Option<&'a ast::Decl> {
        self.ck.decls.iter().enumerate().find_map(|(i, d)| {
            (d.kind == EntityKind::Action && d.parent.is_none() && d.name == NO_ACTION)
                .then(|| self.ast.decl(i as u32))
                .flatten()
        })
    }

    /// The AST fields of a struct/header declaration.
    fn struct_fields(&self, d: DeclId) -> Option<&'a Vec<ast::Field>> {
        match &self.ast.decl(d.0)?.kind {
            DeclKind::Header(s) | DeclKind::HeaderUnion(s) | DeclKind::Struct(s) => Some(&s.fields),
            _ => None,
        }
    }

    /// Headers annotated `@controller_header("name")`: (control-plane name, annotations,
    /// fields (name, type, annotations)).
    #[allow(clippy::type_complexity)]
    fn controller_headers(
        &self,
    ) -> Vec<(
        String,
        &'a Annotations,
        Vec<(String, Type, &'a Annotations)>,
    )> {
        let mut out = Vec::new();
        for (i, info) in self.ck.decls.iter().enumerate() {
            if info.kind != EntityKind::Header {
                continue;
            }
            let Some(d) = self.ast.decl(i as u32) else {
                continue;
            };
            let DeclKind::Header(s) = &d.kind else {
                continue;
            };
            if !has(&s.annotations, "controller_header") || has(&s.annotations, "hidden") {
                continue;
            }
            let name = find(&s.annotations, "name")
                .and_then(string_arg)
                .map(|n| n.trim_start_matches('.').to_string())
                .unwrap_or_else(|| s.name.name.clone());
            let Type::Agg(a) = &info.ty else { continue };
            // Struct-typed fields are flattened to `s.f` (p4c's FlattenHeader).
            let mut fields = Vec::new();
            for ((n, t), f) in a.fields.iter().zip(&s.fields) {
                if has(&f.annotations, "hidden") {
                    continue;
                }
                flatten_fields(n, t, &f.annotations, &mut fields);
            }
            out.push((name, &s.annotations, fields));
        }
        out
    }

    /// The type arguments of an extern instance (`register<bit<32>>` → `[bit<32>]`).
    fn instance_type_args(&self, x: ExternId) -> Vec<Type> {
        match self.prog.origins.externs.get(x as usize) {
            Some(ExternOrigin::Instance(d)) => match self.ck.instances.get(&DeclId(*d)) {
                Some(i) => match &i.ty {
                    Type::Extern(o) => o.args.clone(),
                    _ => Vec::new(),
                },
                None => Vec::new(),
            },
            _ => Vec::new(),
        }
    }

    /// PSA/PNA counters, meters and registers name their index type when it is a `type`.
    fn index_type_name(&mut self, args: &[Type], i: usize) -> Option<pi::P4NamedType> {
        if self.prog.arch == Arch::V1Model {
            return None;
        }
        args.get(i).and_then(|t| self.types.type_name(t, &self.ast))
    }
}

fn counter_spec(k: p4_ir::CounterKind) -> pi::CounterSpec {
    use pi::counter_spec::Unit;
    pi::CounterSpec {
        unit: match k {
            p4_ir::CounterKind::Packets => Unit::Packets,
            p4_ir::CounterKind::Bytes => Unit::Bytes,
            p4_ir::CounterKind::PacketsAndBytes => Unit::Both,
        } as i32,
    }
}

fn meter_spec(bytes: bool) -> pi::MeterSpec {
    use pi::meter_spec::Unit;
    pi::MeterSpec {
        unit: if bytes { Unit::Bytes } else { Unit::Packets } as i32,
        ..Default::default()
    }
}

/// Width in bits of a scalar type as P4Info states it (`bool` is 1, an `error` 0; a `type` with
/// `@p4runtime_translation` has its controller type's width, 0 for a string).
fn width_of(t: &Type, ast: &Ast<'_>) -> i32 {
    match t {
        Type::Bit(w) | Type::Signed(w) | Type::Varbit(w) => *w as i32,
        Type::Bool => 1,
        Type::NewType(n) => match translation(n, ast) {
            Some((_, w)) => w,
            None => width_of(&n.underlying, ast),
        },
        Type::Enum(e) => e.underlying.as_ref().map_or(32, |u| width_of(u, ast)),
        _ => 0,
    }
}

/// A new type's `@p4runtime_translation(URI, W)` (`W` a number, `bit<W>` or `string`): the URI
/// and the controller's width (0 for a string).
fn translation(n: &p4_front::check::types::NewType, ast: &Ast<'_>) -> Option<(String, i32)> {
    let d = ast.decl(n.decl.0)?;
    let a = find(annotations_of(d), "p4runtime_translation")?;
    let (uri, second) = match &a.body {
        AnnotationBody::Expressions(es) => {
            let uri = match es.first().map(|e| &e.kind) {
                Some(ExprKind::String(s)) => s.clone(),
                _ => String::new(),
            };
            let w = match es.get(1).map(|e| &e.kind) {
                Some(ExprKind::Int { value, .. }) => i32::try_from(value).unwrap_or(0),
                _ => 0,
            };
            return Some((uri, w));
        }
        AnnotationBody::Unparsed(t) => {
            let (u, rest) = t.split_once(',').unwrap_or((t, ""));
            (
                u.trim().trim_matches('"').to_string(),
                rest.trim().to_string(),
            )
        }
        _ => return None,
    };
    let w = if let Some(x) = second
        .strip_prefix("bit<")
        .and_then(|x| x.strip_suffix('>'))
    {
        x.trim().parse().unwrap_or(0)
    } else {
        second.parse().unwrap_or(0)
    };
    Some((uri, w))
}

/// Actions a control body calls directly (not through other functions).
fn direct_action_calls(prog: &Program, body: &[p4_ir::Stmt], out: &mut Vec<FnId>) {
    use p4_ir::Stmt;
    for st in body {
        match st {
            Stmt::Call { func, .. }
                if prog
                    .functions
                    .get(*func as usize)
                    .is_some_and(|f| f.kind == p4_ir::FnKind::Action) =>
            {
                out.push(*func);
            }
            Stmt::If(_, a, b) => {
                direct_action_calls(prog, a, out);
                direct_action_calls(prog, b, out);
            }
            Stmt::Switch { bodies, .. } => {
                for b in bodies {
                    direct_action_calls(prog, b, out);
                }
            }
            Stmt::Loop { body, update, .. } => {
                direct_action_calls(prog, body, out);
                direct_action_calls(prog, update, out);
            }
            _ => {}
        }
    }
}

/// A field, or the members of a struct-typed field as `f.m` (recursively).
fn flatten_fields<'a>(
    name: &str,
    t: &Type,
    anns: &'a Annotations,
    out: &mut Vec<(String, Type, &'a Annotations)>,
) {
    match t {
        Type::Agg(a) if a.kind == AggKind::Struct => {
            for (n, ft) in &a.fields {
                flatten_fields(&format!("{name}.{n}"), ft, anns, out);
            }
        }
        _ => out.push((name.to_string(), t.clone(), anns)),
    }
}

/// The name of a type for a v1model digest (its control-plane name).
fn type_name_of(t: &Type, ast: &Ast<'_>) -> String {
    match t {
        Type::Agg(a) => agg_name(a, ast),
        other => other.to_string(),
    }
}

/// `type_info` under construction: every named type a P4Info object refers to.
#[derive(Default)]
struct TypeInfo {
    structs: BTreeMap<String, pi::P4StructTypeSpec>,
    headers: BTreeMap<String, pi::P4HeaderTypeSpec>,
    header_unions: BTreeMap<String, pi::P4HeaderUnionTypeSpec>,
    enums: BTreeMap<String, pi::P4EnumTypeSpec>,
    serializable_enums: BTreeMap<String, pi::P4SerializableEnumTypeSpec>,
    new_types: BTreeMap<String, pi::P4NewTypeSpec>,
    /// Annotations of named types P4Info cannot hold.
    errors: Vec<String>,
}

impl TypeInfo {
    fn into_proto(self) -> pi::P4TypeInfo {
        pi::P4TypeInfo {
            structs: self.structs.into_iter().collect(),
            headers: self.headers.into_iter().collect(),
            header_unions: self.header_unions.into_iter().collect(),
            enums: self.enums.into_iter().collect(),
            serializable_enums: self.serializable_enums.into_iter().collect(),
            new_types: self.new_types.into_iter().collect(),
            ..Default::default()
        }
    }

    /// The `type_name` of a scalar of a user-defined `type` (registering it), else `None`.
    fn type_name(&mut self, t: &Type, ast: &Ast<'_>) -> Option<pi::P4NamedType> {
        match t {
            Type::NewType(n) => {
                self.spec(t, ast);
                Some(pi::P4NamedType {
                    name: n.name.clone(),
                })
            }
            // A serializable enum is registered in type_info but named by no type_name.
            Type::Enum(e) if e.underlying.is_some() => {
                self.spec(t, ast);
                None
            }
            Type::Enum(e) => {
                self.spec(t, ast);
                Some(pi::P4NamedType {
                    name: e.name.clone(),
                })
            }
            _ => None,
        }
    }

    /// The type spec of `t`, registering the named types it uses.
    fn spec(&mut self, t: &Type, ast: &Ast<'_>) -> pi::P4DataTypeSpec {
        use pi::p4_data_type_spec::TypeSpec as S;
        let spec = match t {
            Type::Bit(w) => S::Bitstring(bits(false, *w)),
            Type::Signed(w) => S::Bitstring(bits(true, *w)),
            Type::Varbit(w) => S::Bitstring(pi::P4BitstringLikeTypeSpec {
                type_spec: Some(pi::p4_bitstring_like_type_spec::TypeSpec::Varbit(
                    pi::P4VarbitTypeSpec {
                        max_bitwidth: *w as i32,
                    },
                )),
                ..Default::default()
            }),
            Type::Bool => S::Bool(pi::P4BoolType {}),
            Type::ErrorT => S::Error(pi::P4ErrorType {}),
            Type::Tuple(ts) => S::Tuple(pi::P4TupleTypeSpec {
                members: ts.iter().map(|t| self.spec(t, ast)).collect(),
            }),
            Type::NewType(n) => {
                if !self.new_types.contains_key(&n.name) {
                    let mut u = &n.underlying;
                    while let Type::NewType(m) = u {
                        u = &m.underlying;
                    }
                    let orig = self.spec(u, ast);
                    let mut nt = pi::P4NewTypeSpec {
                        representation: Some(pi::p4_new_type_spec::Representation::OriginalType(
                            orig,
                        )),
                        ..Default::default()
                    };
                    if let Some(d) = ast.decl(n.decl.0) {
                        let anns = annotations_of(d);
                        if let Err(e) =
                            add_annotations(ast.ck, &mut nt, anns, &["p4runtime_translation"])
                        {
                            self.errors.push(e);
                        }
                        if let Some(a) = find(anns, "p4runtime_translation") {
                            if let AnnotationBody::Expressions(es) = &a.body {
                                let uri = match es.first().map(|e| &e.kind) {
                                    Some(ExprKind::String(s)) => s.clone(),
                                    _ => String::new(),
                                };
                                let tt = match es.get(1).map(|e| &e.kind) {
                                    Some(ExprKind::Int { value, .. }) => {
                                        pi::p4_new_type_translation::SdnType::SdnBitwidth(
                                            i32::try_from(value).unwrap_or(0),
                                        )
                                    }
                                    _ => pi::p4_new_type_translation::SdnType::SdnString(
                                        pi::p4_new_type_translation::SdnString {},
                                    ),
                                };
                                nt.representation =
                                    Some(pi::p4_new_type_spec::Representation::TranslatedType(
                                        pi::P4NewTypeTranslation {
                                            uri,
                                            sdn_type: Some(tt),
                                        },
                                    ));
                            }
                        }
                    }
                    self.new_types.insert(n.name.clone(), nt);
                }
                S::NewType(pi::P4NamedType {
                    name: n.name.clone(),
                })
            }
            Type::Enum(e) => match &e.underlying {
                None => {
                    self.enums
                        .entry(e.name.clone())
                        .or_insert_with(|| pi::P4EnumTypeSpec {
                            members: e
                                .members
                                .iter()
                                .map(|m| pi::p4_enum_type_spec::Member {
                                    name: m.clone(),
                                    ..Default::default()
                                })
                                .collect(),
                            ..Default::default()
                        });
                    S::Enum(pi::P4NamedType {
                        name: e.name.clone(),
                    })
                }
                Some(u) => {
                    if !self.serializable_enums.contains_key(&e.name) {
                        let u_spec = match self.spec(u, ast).type_spec {
                            Some(S::Bitstring(b)) => match b.type_spec {
                                Some(pi::p4_bitstring_like_type_spec::TypeSpec::Bit(x)) => Some(x),
                                _ => None,
                            },
                            _ => None,
                        };
                        let values = ast
                            .ck
                            .decls
                            .iter()
                            .filter(|d| {
                                d.kind == EntityKind::EnumMember && d.parent == Some(e.decl)
                            })
                            .map(|d| pi::p4_serializable_enum_type_spec::Member {
                                name: d.name.clone(),
                                value: d
                                    .value
                                    .as_ref()
                                    .and_then(|v| v.as_int())
                                    .map(|v| v.magnitude().to_bytes_be())
                                    .unwrap_or_default(),
                                ..Default::default()
                            })
                            .collect();
                        self.serializable_enums.insert(
                            e.name.clone(),
                            pi::P4SerializableEnumTypeSpec {
                                underlying_type: u_spec,
                                members: values,
                                ..Default::default()
                            },
                        );
                    }
                    S::SerializableEnum(pi::P4NamedType {
                        name: e.name.clone(),
                    })
                }
            },
            Type::Agg(a) => {
                let name = agg_name(a, ast);
                match a.kind {
                    AggKind::Struct => {
                        if !self.structs.contains_key(&name) {
                            self.structs.insert(name.clone(), Default::default());
                            let members = a
                                .fields
                                .iter()
                                .map(|(n, t)| pi::p4_struct_type_spec::Member {
                                    name: n.clone(),
                                    type_spec: Some(self.spec(t, ast)),
                                })
                                .collect();
                            self.structs.insert(
                                name.clone(),
                                pi::P4StructTypeSpec {
                                    members,
                                    ..Default::default()
                                },
                            );
                        }
                        S::Struct(pi::P4NamedType { name })
                    }
                    AggKind::Header => {
                        if !self.headers.contains_key(&name) {
                            let mut members = Vec::new();
                            flatten_header(&a.fields, "", &mut members);
                            self.headers.insert(
                                name.clone(),
                                pi::P4HeaderTypeSpec {
                                    members,
                                    ..Default::default()
                                },
                            );
                        }
                        S::Header(pi::P4NamedType { name })
                    }
                    AggKind::HeaderUnion => {
                        if !self.header_unions.contains_key(&name) {
                            let members = a
                                .fields
                                .iter()
                                .map(|(n, t)| {
                                    let hname = match t {
                                        Type::Agg(h) => {
                                            self.spec(t, ast);
                                            agg_name(h, ast)
                                        }
                                        _ => String::new(),
                                    };
                                    pi::p4_header_union_type_spec::Member {
                                        name: n.clone(),
                                        header: Some(pi::P4NamedType { name: hname }),
                                    }
                                })
                                .collect();
                            self.header_unions.insert(
                                name.clone(),
                                pi::P4HeaderUnionTypeSpec {
                                    members,
                                    ..Default::default()
                                },
                            );
                        }
                        S::HeaderUnion(pi::P4NamedType { name })
                    }
                }
            }
            Type::Stack(e, n) => match e.as_ref() {
                Type::Agg(h) if h.kind == AggKind::HeaderUnion => {
                    self.spec(e, ast);
                    S::HeaderUnionStack(pi::P4HeaderUnionStackTypeSpec {
                        header_union: Some(pi::P4NamedType {
                            name: agg_name(h, ast),
                        }),
                        size: *n as i32,
                    })
                }
                Type::Agg(h) => {
                    self.spec(e, ast);
                    S::HeaderStack(pi::P4HeaderStackTypeSpec {
                        header: Some(pi::P4NamedType {
                            name: agg_name(h, ast),
                        }),
                        size: *n as i32,
                    })
                }
                _ => S::Bitstring(bits(false, 0)),
            },
            _ => S::Bitstring(bits(false, 0)),
        };
        pi::P4DataTypeSpec {
            type_spec: Some(spec),
        }
    }
}

/// A type declaration's `@name`, if it has one.
fn declared_name(d: DeclId, ast: &Ast<'_>) -> Option<String> {
    let decl = ast.decl(d.0)?;
    find(annotations_of(decl), "name")
        .and_then(string_arg)
        .map(|n| n.trim_start_matches('.').to_string())
}

/// The name of a struct-like type; a specialized generic one is named as p4c names it
/// (`s2_t<bit<32>>` → `s2_t_bit32`).
fn agg_name(a: &p4_front::check::types::AggType, ast: &Ast<'_>) -> String {
    if let Some(n) = declared_name(a.decl, ast) {
        return n;
    }
    if a.args.is_empty() {
        return a.name.clone();
    }
    let mut n = a.name.clone();
    for t in &a.args {
        n.push('_');
        n.push_str(&match t {
            Type::Bit(w) => format!("bit{w}"),
            Type::Signed(w) => format!("int{w}"),
            Type::Bool => "bool".to_string(),
            Type::Agg(x) => agg_name(x, ast),
            other => other.to_string(),
        });
    }
    n
}

fn bits(signed: bool, w: u32) -> pi::P4BitstringLikeTypeSpec {
    use pi::p4_bitstring_like_type_spec::TypeSpec as B;
    pi::P4BitstringLikeTypeSpec {
        type_spec: Some(if signed {
            B::Int(pi::P4IntTypeSpec { bitwidth: w as i32 })
        } else {
            B::Bit(pi::P4BitTypeSpec { bitwidth: w as i32 })
        }),
        ..Default::default()
    }
}

/// A header's fields as P4Info lists them: struct-typed fields flattened to `s.f`.
fn flatten_header(
    fields: &[(String, Type)],
    prefix: &str,
    out: &mut Vec<pi::p4_header_type_spec::Member>,
) {
    for (n, t) in fields {
        let name = format!("{prefix}{n}");
        match t {
            Type::Agg(a) if a.kind == AggKind::Struct => {
                flatten_header(&a.fields, &format!("{name}."), out)
            }
            Type::Bit(w) | Type::Signed(w) | Type::Varbit(w) => {
                let b = match t {
                    Type::Signed(_) => bits(true, *w),
                    Type::Varbit(_) => pi::P4BitstringLikeTypeSpec {
                        type_spec: Some(pi::p4_bitstring_like_type_spec::TypeSpec::Varbit(
                            pi::P4VarbitTypeSpec {
                                max_bitwidth: *w as i32,
                            },
                        )),
                        ..Default::default()
                    },
                    _ => bits(false, *w),
                };
                out.push(pi::p4_header_type_spec::Member {
                    name,
                    type_spec: Some(b),
                })
            }
            Type::Bool => out.push(pi::p4_header_type_spec::Member {
                name,
                type_spec: Some(bits(false, 1)),
            }),
            _ => out.push(pi::p4_header_type_spec::Member {
                name,
                type_spec: Some(bits(false, 0)),
                // (only bit<W>, int<W>, varbit, bool and structs of them occur in headers)
            }),
        }
    }
}
