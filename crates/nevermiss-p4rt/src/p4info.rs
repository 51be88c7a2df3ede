//! The P4Info of a program (P4Runtime spec v1.5 §"P4Info"), as p4c writes it after its front
//! end: the same objects, names, aliases and ids (p4-ir's [`p4_ir::names`]), so a controller
//! written against p4c's P4Info works unchanged against nevermiss.
//!
//! A function of the lowered program alone ([`p4_ir::Program`]: its tables, actions and
//! externs, and [`p4_ir::control_plane`]'s annotations, types and order), so a program that
//! reaches p4-ir by any front end gets its P4Info. [`ControlPlaneIds`] maps P4Info ids to the
//! IR's tables, actions and externs, for the server.
//!
//! What nevermiss emits for PNA tables (reference §1.12, no P4Info field exists): an
//! `add_on_miss` table is an ordinary table, as p4c writes it; `pna_idle_timeout =
//! NOTIFY_CONTROL` gives `idle_timeout_behavior: NOTIFY_CONTROL`, so that a controller may set
//! `idle_timeout_ns` (P4Runtime spec §"TableEntry"), where p4c writes none (its PSA/PNA handler
//! reads `psa_idle_timeout` only): the one deliberate difference from p4c's P4Info;
//! `AUTO_DELETE` gives none (the data plane removes expired entries without telling the
//! controller).

use crate::pb::p4::config::v1 as pi;
use p4_ir::control_plane::{
    find, has, Annotation, AnnotationArg, AnnotationBody, AnnotationValue, Annotations, CpField,
    CpType, NamedKind, NamedType,
};
use p4_ir::names::{Allocation, IdError, Kind, Symbols};
use p4_ir::{Arch, ExternId, ExternKind, FnId, IdleTimeout, MatchKind, Program, TableId};
use std::collections::{BTreeMap, HashMap};

/// The P4Info of a program and the map between its ids and the IR.
pub struct Built {
    /// The P4Info message, with ids as p4c allocates them (P4Runtime §8.3).
    pub p4info: pi::P4Info,
    /// The map between the P4Info's ids and the IR's tables, actions and externs.
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

/// Why a program has no P4Info. Every message is made here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum P4InfoError {
    /// An `@id` that cannot be used, or ids that collide ([`p4_ir::names`]).
    Id(IdError),
    /// An integer of a structured annotation beyond int64 (P4Runtime spec §"Structured
    /// annotations": P4Info holds 64-bit integers).
    WideInteger {
        /// The annotation's name.
        annotation: String,
        /// The integer as written.
        value: String,
    },
    /// An `@selector_size_semantics` that is neither `sum_of_weights` nor `sum_of_members`.
    SizeSemantics(String),
}

impl From<IdError> for P4InfoError {
    fn from(e: IdError) -> P4InfoError {
        P4InfoError::Id(e)
    }
}

impl std::fmt::Display for P4InfoError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            P4InfoError::Id(e) => e.fmt(f),
            P4InfoError::WideInteger { annotation, value } => write!(
                f,
                "@{annotation}: integer {value} in a structured annotation does not fit in int64 \
                 (P4Info holds 64-bit integers; use a string for larger values)"
            ),
            P4InfoError::SizeSemantics(v) => write!(
                f,
                "@selector_size_semantics: expected \"sum_of_weights\" or \"sum_of_members\", \
                 found \"{v}\""
            ),
        }
    }
}

impl std::error::Error for P4InfoError {}

/// The action of core.p4 that does nothing (P4_16 §14.1).
const NO_ACTION: &str = "NoAction";

/// No annotations (a v1model digest has none).
static NONE: Annotations = Vec::new();

fn at_id(anns: &Annotations) -> Option<u64> {
    find(anns, "id").and_then(Annotation::int_arg)
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
    out: &mut impl Annotated,
    anns: &Annotations,
    skip: &[&str],
) -> Result<(), P4InfoError> {
    let (texts, structured) = out.lists();
    for a in anns {
        let n = a.name.as_str();
        let body = match &a.body {
            AnnotationBody::ExpressionList(vs) => {
                pi::structured_annotation::Body::ExpressionList(pi::ExpressionList {
                    expressions: vs
                        .iter()
                        .map(|v| structured_value(n, v))
                        .collect::<Result<_, _>>()?,
                })
            }
            AnnotationBody::KeyValues(kvs) => {
                pi::structured_annotation::Body::KvPairList(pi::KeyValuePairList {
                    kv_pairs: kvs
                        .iter()
                        .map(|(k, v)| {
                            Ok(pi::KeyValuePair {
                                key: k.clone(),
                                value: Some(structured_value(n, v)?),
                            })
                        })
                        .collect::<Result<_, P4InfoError>>()?,
                })
            }
            _ => {
                if !matches!(n, "name" | "id" | "brief" | "description") && !skip.contains(&n) {
                    texts.push(a.text());
                }
                continue;
            }
        };
        // An empty list (`@a[]`) has no body, as p4c writes it.
        let empty = matches!(&body, pi::structured_annotation::Body::ExpressionList(l) if l.expressions.is_empty());
        structured.push(pi::StructuredAnnotation {
            name: n.to_string(),
            body: (!empty).then_some(body),
            ..Default::default()
        });
    }
    Ok(())
}

/// One value of a structured annotation; P4Info holds integers as int64 (P4Runtime spec
/// §"Structured annotations").
fn structured_value(ann: &str, v: &AnnotationValue) -> Result<pi::Expression, P4InfoError> {
    use pi::expression::Value as V;
    let v = match v {
        AnnotationValue::Int(i) => {
            V::Int64Value(i64::try_from(i).map_err(|_| P4InfoError::WideInteger {
                annotation: ann.to_string(),
                value: i.to_string(),
            })?)
        }
        AnnotationValue::Bool(b) => V::BoolValue(*b),
        AnnotationValue::String(s) => V::StringValue(s.clone()),
    };
    Ok(pi::Expression { value: Some(v) })
}

/// A preamble: annotations except `@name`, `@id`, `@brief`, `@description` (and those `skip`
/// says), and the documentation from `@brief` / `@description`.
fn preamble(
    id: u32,
    name: &str,
    alias: &str,
    anns: &Annotations,
    skip: &[&str],
) -> Result<pi::Preamble, P4InfoError> {
    let mut p = pi::Preamble {
        id,
        name: name.to_string(),
        alias: alias.to_string(),
        ..Default::default()
    };
    add_annotations(&mut p, anns, skip)?;
    p.doc = doc(anns);
    Ok(p)
}

fn doc(anns: &Annotations) -> Option<pi::Documentation> {
    let brief = find(anns, "brief").and_then(Annotation::string_arg);
    let description = find(anns, "description").and_then(Annotation::string_arg);
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

/// The P4 match kind P4Info names.
fn match_type(k: MatchKind) -> Option<pi::match_field::MatchType> {
    use pi::match_field::MatchType as M;
    Some(match k {
        MatchKind::Exact => M::Exact,
        MatchKind::Lpm => M::Lpm,
        MatchKind::Ternary => M::Ternary,
        MatchKind::Range => M::Range,
        MatchKind::Optional => M::Optional,
        MatchKind::Selector => return None,
    })
}

/// Builds the P4Info of a lowered program.
pub fn build(prog: &Program) -> Result<Built, P4InfoError> {
    Builder {
        prog,
        types: TypeInfo::new(prog),
    }
    .run()
}

struct Builder<'a> {
    prog: &'a Program,
    types: TypeInfo<'a>,
}

/// The objects of the P4Info before ids are known: (kind, name, `@id`) of each.
struct Object<'a> {
    kind: Kind,
    name: String,
    anns: &'a Annotations,
}

/// A header annotated `@controller_header`: its control-plane name, annotations and fields
/// (struct-typed ones flattened to `s.f`: name, type, annotations).
struct ControllerHeader<'a> {
    name: String,
    anns: &'a Annotations,
    fields: Vec<(String, &'a CpType, &'a Annotations)>,
}

impl<'a> Builder<'a> {
    /// The P4Info name and annotations of an extern instance, if the control plane sees it.
    fn extern_name(&self, x: ExternId) -> Option<(&'a str, &'a Annotations)> {
        let prog = self.prog;
        let inst = prog.externs.get(x as usize)?;
        inst.visible()
            .then_some((inst.name.as_str(), &inst.annotations))
    }

    /// The annotations of the action the P4Info lists under a name (`fns` empty: core.p4's
    /// `NoAction`, listed for tables without `default_action`).
    fn action_annotations(&self, fns: &[FnId]) -> Option<&'a Annotations> {
        let prog = self.prog;
        let f = fns.first().copied().or(prog.control_plane.no_action)?;
        prog.functions.get(f as usize).map(|f| &f.annotations)
    }

    fn run(mut self) -> Result<Built, P4InfoError> {
        let actions = self.used_actions();
        let externs = self.visible_externs();
        let v1_digests = self.v1_digests();
        let controller_headers = self.controller_headers();
        let alloc = self.allocate(&actions, &externs, &v1_digests, &controller_headers)?;
        let mut out = pi::P4Info {
            pkg_info: Some(self.pkg_info()?),
            ..Default::default()
        };
        let mut ids = ControlPlaneIds::default();
        self.add_tables(&alloc, &mut out, &mut ids)?;
        self.add_actions(&actions, &alloc, &mut out, &mut ids)?;
        for x in &externs {
            self.add_extern(x, &alloc, &mut out, &mut ids)?;
        }
        self.add_v1_digests(&v1_digests, &alloc, &mut out, &mut ids)?;
        self.add_value_sets(&alloc, &mut out, &mut ids)?;
        self.add_controller_headers(&controller_headers, &alloc, &mut out)?;
        let looked = self.looks_at_types(&out);
        let type_info = self.types.into_proto()?;
        if looked || type_info != pi::P4TypeInfo::default() {
            out.type_info = Some(type_info);
        }
        Ok(Built { p4info: out, ids })
    }

    /// The actions of the P4Info, one per control-plane name with its IR functions, in
    /// P4Info's order: those tables list and those a control's apply block calls (p4c's front
    /// end inlines actions called by actions), and `NoAction` for tables without
    /// `default_action` (p4c's implicit `@defaultonly NoAction`, with no function).
    fn used_actions(&self) -> Vec<(String, Vec<FnId>)> {
        let prog = self.prog;
        let implicit_no_action = prog.tables.iter().any(|t| !t.default_declared);
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
        let mut used_actions: BTreeMap<String, Vec<FnId>> = BTreeMap::new();
        for fi in listed {
            if let Some(f) = prog.functions.get(fi as usize) {
                let fns = used_actions.entry(f.name.clone()).or_default();
                if !fns.contains(&fi) {
                    fns.push(fi);
                }
            }
        }
        if implicit_no_action {
            if let Some(f) = prog.control_plane.no_action {
                used_actions
                    .entry(prog.functions[f as usize].name.clone())
                    .or_default();
            }
        }
        // In P4Info's order (p4c's, `ControlPlane::actions`): a name where its first function is.
        let position: HashMap<FnId, usize> = (prog.control_plane.actions.iter())
            .enumerate()
            .map(|(i, &f)| (f, i))
            .collect();
        let mut used_actions: Vec<(String, Vec<FnId>)> = used_actions.into_iter().collect();
        used_actions.sort_by_key(|(_, fns)| {
            let implicit = fns.is_empty().then_some(prog.control_plane.no_action);
            (fns.iter().copied().chain(implicit.flatten()))
                .filter_map(|f| position.get(&f).copied())
                .min()
                .unwrap_or(usize::MAX)
        });
        used_actions
    }

    /// The externs the P4Info lists (counters, meters, registers, action profiles and
    /// selectors, digests; not hidden), with their kind, name and annotations.
    fn visible_externs(&self) -> Vec<(ExternId, Kind, &'a str, &'a Annotations)> {
        let mut externs = Vec::new();
        for (xi, x) in self.prog.externs.iter().enumerate() {
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
            externs.push((xi, kind, name, anns));
        }
        externs
    }

    /// v1model digests: one per data type, in the order of their first call.
    fn v1_digests(&self) -> Vec<(&'a str, &'a CpType)> {
        let mut v1_digests: Vec<(&'a str, &'a CpType)> = Vec::new();
        for d in &self.prog.control_plane.v1_digests {
            if v1_digests.iter().all(|(n, _)| *n != d.name) {
                v1_digests.push((&d.name, &d.ty));
            }
        }
        v1_digests
    }

    /// The ids of every object of the P4Info (p4-ir's [`Symbols`]: `@id`s kept, the others
    /// allocated as p4c does), the objects taken in P4Info's order: tables, actions, externs,
    /// v1model digests, value sets, controller headers.
    fn allocate(
        &self,
        actions: &[(String, Vec<FnId>)],
        externs: &[(ExternId, Kind, &'a str, &'a Annotations)],
        v1_digests: &[(&'a str, &'a CpType)],
        controller_headers: &[ControllerHeader<'a>],
    ) -> Result<Allocation, P4InfoError> {
        let prog = self.prog;
        let mut objects: Vec<Object<'a>> = Vec::new();
        let mut add = |kind: Kind, name: &str, anns: &'a Annotations| {
            objects.push(Object {
                kind,
                name: name.to_string(),
                anns,
            })
        };
        for t in &prog.tables {
            if !has(&t.annotations, "hidden") {
                add(Kind::Table, &t.name, &t.annotations);
            }
        }
        for (name, fns) in actions {
            if let Some(anns) = self.action_annotations(fns) {
                if !has(anns, "hidden") {
                    add(Kind::Action, name, anns);
                }
            }
        }
        for &(_, kind, name, anns) in externs {
            add(kind, name, anns);
        }
        for (name, _) in v1_digests {
            add(Kind::Digest, name, &NONE);
        }
        for v in &prog.value_sets {
            add(Kind::ValueSet, &v.name, &v.annotations);
        }
        for h in controller_headers {
            add(Kind::ControllerHeader, &h.name, h.anns);
        }
        let mut syms = Symbols::default();
        for o in &objects {
            syms.add(o.kind, &o.name, at_id(o.anns))?;
        }
        Ok(syms.allocate()?)
    }

    /// The tables (not hidden).
    fn add_tables(
        &mut self,
        alloc: &Allocation,
        out: &mut pi::P4Info,
        ids: &mut ControlPlaneIds,
    ) -> Result<(), P4InfoError> {
        let prog = self.prog;
        for (ti, t) in prog.tables.iter().enumerate() {
            if has(&t.annotations, "hidden") {
                continue;
            }
            let id = alloc.id(Kind::Table, &t.name).unwrap_or(0);
            ids.tables.insert(id, ti as TableId);
            let table = self.table(t, id, alloc)?;
            out.tables.push(table);
        }
        Ok(())
    }

    /// The actions (one per name; p4c deduplicates the per-instance copies).
    fn add_actions(
        &mut self,
        actions: &[(String, Vec<FnId>)],
        alloc: &Allocation,
        out: &mut pi::P4Info,
        ids: &mut ControlPlaneIds,
    ) -> Result<(), P4InfoError> {
        let prog = self.prog;
        for (name, fns) in actions {
            let Some(f) = fns.first().copied().or(prog.control_plane.no_action) else {
                continue;
            };
            let func = &prog.functions[f as usize];
            if has(&func.annotations, "hidden") {
                continue;
            }
            let id = alloc.id(Kind::Action, name).unwrap_or(0);
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
                .push(self.action(func, id, name, alloc, in_table)?);
        }
        Ok(())
    }

    /// One extern of [`Self::visible_externs`]. A direct resource is listed with the table it
    /// is attached to (p4c lists it when it lists the table): none, or a hidden one, and it is
    /// not listed.
    fn add_extern(
        &mut self,
        &(xi, kind, name, anns): &(ExternId, Kind, &'a str, &'a Annotations),
        alloc: &Allocation,
        out: &mut pi::P4Info,
        ids: &mut ControlPlaneIds,
    ) -> Result<(), P4InfoError> {
        let prog = self.prog;
        let id_of = |k: Kind, n: &str| alloc.id(k, n).unwrap_or(0);
        let id = id_of(kind, name);
        ids.externs.insert(id, xi);
        let inst = &prog.externs[xi as usize];
        let pre = |skip: &[&str]| preamble(id, name, &alloc.alias(name), anns, skip);
        let direct_table = (prog.tables.iter())
            .find(|t| t.direct_counter == Some(xi) || t.direct_meter == Some(xi))
            .filter(|t| !has(&t.annotations, "hidden"))
            .map(|t| id_of(Kind::Table, &t.name));
        if matches!(
            inst.kind,
            ExternKind::DirectCounter { .. } | ExternKind::DirectMeter { .. }
        ) && direct_table.is_none()
        {
            return Ok(());
        }
        let direct_table_id = direct_table.unwrap_or(0);
        let type_args = &inst.type_args;
        match &inst.kind {
            ExternKind::Counter { size, kind } => out.counters.push(pi::Counter {
                preamble: Some(pre(&[])?),
                spec: Some(counter_spec(*kind)),
                size: i64::from(*size),
                index_type_name: self.index_type_name(type_args, 1),
            }),
            ExternKind::DirectCounter { kind } => out.direct_counters.push(pi::DirectCounter {
                preamble: Some(pre(&[])?),
                spec: Some(counter_spec(*kind)),
                direct_table_id,
            }),
            ExternKind::Meter { size, bytes } => out.meters.push(pi::Meter {
                preamble: Some(pre(&[])?),
                spec: Some(meter_spec(*bytes)),
                size: i64::from(*size),
                index_type_name: self.index_type_name(type_args, 0),
            }),
            ExternKind::DirectMeter { bytes } => out.direct_meters.push(pi::DirectMeter {
                preamble: Some(pre(&[])?),
                spec: Some(meter_spec(*bytes)),
                direct_table_id,
            }),
            ExternKind::Register { size, .. } => {
                let elem = type_args.first().unwrap_or(&CpType::Bit(32));
                let spec = self.types.spec(elem);
                out.registers.push(pi::Register {
                    preamble: Some(pre(&[])?),
                    type_spec: Some(spec),
                    size: i32::try_from(*size).unwrap_or(i32::MAX),
                    index_type_name: self.index_type_name(type_args, 1),
                })
            }
            ExternKind::ActionProfile { size } | ExternKind::ActionSelector { size, .. } => {
                let profile = self.action_profile(
                    xi,
                    *size,
                    anns,
                    alloc,
                    pre(&[
                        "max_group_size",
                        "selector_size_semantics",
                        "max_member_weight",
                    ])?,
                )?;
                out.action_profiles.push(profile)
            }
            ExternKind::Digest { .. } => {
                let t = type_args.first().unwrap_or(&CpType::Bit(32));
                let spec = self.types.spec(t);
                out.digests.push(pi::Digest {
                    preamble: Some(pre(&[])?),
                    type_spec: Some(spec),
                })
            }
            _ => {}
        }
        Ok(())
    }

    /// An action profile or selector: the tables it serves, by name (p4c keeps them in a
    /// sorted set of names), and a selector's group size and its semantics.
    fn action_profile(
        &self,
        xi: ExternId,
        size: u32,
        anns: &Annotations,
        alloc: &Allocation,
        preamble: pi::Preamble,
    ) -> Result<pi::ActionProfile, P4InfoError> {
        let prog = self.prog;
        let selector = matches!(
            prog.externs[xi as usize].kind,
            ExternKind::ActionSelector { .. }
        );
        let max_group = find(anns, "max_group_size").and_then(Annotation::int_arg);
        let mut tables: Vec<&str> = (prog.tables.iter())
            .filter(|t| t.implementation == Some(xi))
            .map(|t| t.name.as_str())
            .collect();
        tables.sort_unstable();
        let table_ids = (tables.iter())
            .map(|t| alloc.id(Kind::Table, t).unwrap_or(0))
            .collect();
        Ok(pi::ActionProfile {
            preamble: Some(preamble),
            table_ids,
            with_selector: selector,
            size: i64::from(size),
            max_group_size: if selector {
                max_group.and_then(|v| i32::try_from(v).ok()).unwrap_or(0)
            } else {
                0
            },
            selector_size_semantics: if selector {
                size_semantics(anns)?
            } else {
                None
            },
            ..Default::default()
        })
    }

    /// v1model digests (calls, not externs: named by their data type).
    fn add_v1_digests(
        &mut self,
        v1_digests: &[(&'a str, &'a CpType)],
        alloc: &Allocation,
        out: &mut pi::P4Info,
        ids: &mut ControlPlaneIds,
    ) -> Result<(), P4InfoError> {
        for (name, t) in v1_digests {
            let id = alloc.id(Kind::Digest, name).unwrap_or(0);
            ids.v1_digests.insert(id, name.to_string());
            let spec = self.types.spec(t);
            out.digests.push(pi::Digest {
                preamble: Some(preamble(id, name, &alloc.alias(name), &NONE, &[])?),
                type_spec: Some(spec),
            });
        }
        Ok(())
    }

    /// Parser value sets.
    fn add_value_sets(
        &mut self,
        alloc: &Allocation,
        out: &mut pi::P4Info,
        ids: &mut ControlPlaneIds,
    ) -> Result<(), P4InfoError> {
        for (vi, v) in self.prog.value_sets.iter().enumerate() {
            let id = alloc.id(Kind::ValueSet, &v.name).unwrap_or(0);
            ids.value_sets.insert(id, vi as u32);
            let vs = self.value_set(v, id, alloc)?;
            out.value_sets.push(vs);
        }
        Ok(())
    }

    /// Controller packet metadata: headers annotated `@controller_header`.
    fn add_controller_headers(
        &mut self,
        controller_headers: &[ControllerHeader<'a>],
        alloc: &Allocation,
        out: &mut pi::P4Info,
    ) -> Result<(), P4InfoError> {
        for h in controller_headers {
            let id = alloc.id(Kind::ControllerHeader, &h.name).unwrap_or(0);
            let cname = find(h.anns, "controller_header")
                .and_then(Annotation::string_arg)
                .unwrap_or_else(|| h.name.clone());
            let fids = field_ids(&h.fields.iter().map(|f| at_id(f.2)).collect::<Vec<_>>());
            let mut metadata = Vec::with_capacity(h.fields.len());
            for (&(ref fname, ty, fanns), id) in h.fields.iter().zip(fids) {
                let mut m = pi::controller_packet_metadata::Metadata {
                    id,
                    name: fname.clone(),
                    bitwidth: self.types.width_of(ty),
                    type_name: self.types.type_name(ty),
                    ..Default::default()
                };
                add_annotations(&mut m, fanns, &[])?;
                metadata.push(m);
            }
            out.controller_packet_metadata
                .push(pi::ControllerPacketMetadata {
                    preamble: Some(preamble(id, &cname, &cname, h.anns, &[])?),
                    metadata,
                });
        }
        Ok(())
    }

    /// Whether p4c's P4Info has a `type_info`, even an empty one: p4c writes it once it has
    /// looked at a type for it — the key types of a table, the parameters of an action, the
    /// fields of a controller header, the type arguments of a declared extern instance, and
    /// (v1model) the arguments of an extern function a control calls.
    fn looks_at_types(&self, out: &pi::P4Info) -> bool {
        let prog = self.prog;
        !out.tables.is_empty()
            || out.actions.iter().any(|a| !a.params.is_empty())
            || out
                .controller_packet_metadata
                .iter()
                .any(|c| !c.metadata.is_empty())
            || prog
                .externs
                .iter()
                .any(|x| x.site == p4_ir::ExternSite::Declared)
            || (prog.arch == Arch::V1Model
                && (prog.control_plane.v1_extern_function_inlined
                    || prog
                        .functions
                        .iter()
                        .any(|f| calls_extern_function(&f.body))))
    }

    fn pkg_info(&self) -> Result<pi::PkgInfo, P4InfoError> {
        let mut p = pi::PkgInfo {
            arch: arch_name(self.prog.arch).to_string(),
            ..Default::default()
        };
        // `@pkginfo(name = "...", version = "...", ...)` and `@platform_property(k = N, ...)`
        // on `main`.
        let anns = &self.prog.control_plane.package;
        for (k, v) in find(anns, "pkginfo")
            .map(Annotation::key_values)
            .unwrap_or_default()
        {
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
            for (k, v) in a.key_values() {
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
        add_annotations(&mut p, anns, &["pkginfo", "platform_property"])?;
        p.doc = doc(anns);
        Ok(p)
    }

    fn table(
        &mut self,
        t: &p4_ir::Table,
        id: u32,
        alloc: &Allocation,
    ) -> Result<pi::Table, P4InfoError> {
        let prog = self.prog;
        let kids = field_ids(
            &t.keys
                .iter()
                .map(|k| at_id(&k.annotations))
                .collect::<Vec<_>>(),
        );
        let mut match_fields = Vec::new();
        for (k, kid) in t.keys.iter().zip(kids) {
            let Some(mt) = match_type(k.kind) else {
                continue;
            };
            let mut f = pi::MatchField {
                id: kid,
                name: k.name.trim_start_matches('.').to_string(),
                bitwidth: self.types.width_of(&k.ty),
                type_name: self.types.type_name(&k.ty),
                doc: doc(&k.annotations),
                r#match: Some(pi::match_field::Match::MatchType(mt as i32)),
                ..Default::default()
            };
            add_annotations(&mut f, &k.annotations, &[])?;
            match_fields.push(f);
        }
        let action_id = |name: &str| alloc.id(Kind::Action, name).unwrap_or(0);
        let mut action_refs = Vec::new();
        for a in &t.actions {
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
            add_annotations(&mut ar, &a.annotations, &[])?;
            action_refs.push(ar);
        }
        if !t.default_declared && !t.actions.iter().any(|a| a.name == NO_ACTION) {
            // p4c's front end: `default_action = NoAction()`, and `@defaultonly NoAction` in
            // the action list unless it is there already.
            action_refs.push(pi::ActionRef {
                id: action_id(NO_ACTION),
                scope: pi::action_ref::Scope::DefaultOnly as i32,
                annotations: vec!["@defaultonly".to_string()],
                ..Default::default()
            });
        }
        let mut table = pi::Table {
            preamble: Some(preamble(
                id,
                &t.name,
                &alloc.alias(&t.name),
                &t.annotations,
                &[],
            )?),
            match_fields,
            action_refs,
            size: i64::try_from(t.declared_size.filter(|s| *s > 0).unwrap_or(1024))
                .unwrap_or(i64::MAX),
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
                let pids = prog
                    .functions
                    .get(a.func as usize)
                    .map(|f| {
                        field_ids(
                            &f.params
                                .iter()
                                .filter(|p| p.directionless)
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
        if !t.default_declared {
            table.initial_default_action = Some(pi::TableActionCall {
                action_id: action_id(NO_ACTION),
                arguments: Vec::new(),
            });
        }
        if let Some((n, _)) = t.implementation.and_then(|x| self.extern_name(x)) {
            table.implementation_id = alloc.id(Kind::ActionProfile, n).unwrap_or(0);
        }
        for (x, k) in [
            (t.direct_counter, Kind::DirectCounter),
            (t.direct_meter, Kind::DirectMeter),
        ] {
            if let Some((n, _)) = x.and_then(|x| self.extern_name(x)) {
                table.direct_resource_ids.push(alloc.id(k, n).unwrap_or(0));
            }
        }
        if t.idle_timeout == IdleTimeout::NotifyControl {
            table.idle_timeout_behavior = pi::table::IdleTimeoutBehavior::NotifyControl as i32;
        }
        Ok(table)
    }

    fn action(
        &mut self,
        func: &p4_ir::Function,
        id: u32,
        name: &str,
        alloc: &Allocation,
        with_params: bool,
    ) -> Result<pi::Action, P4InfoError> {
        // Directionless parameters only: the control plane supplies them.
        let params: Vec<&p4_ir::CpParam> = func
            .params
            .iter()
            .filter(|p| with_params && p.directionless)
            .collect();
        let pids = field_ids(
            &params
                .iter()
                .map(|p| at_id(&p.annotations))
                .collect::<Vec<_>>(),
        );
        let mut out = pi::Action {
            preamble: Some(preamble(
                id,
                name,
                &alloc.alias(name),
                &func.annotations,
                &[],
            )?),
            params: Vec::new(),
        };
        for (p, pid) in params.iter().zip(pids) {
            let plain_enum = matches!(self.types.kind(&p.ty), Some(NamedKind::Enum(_)));
            let mut param = pi::action::Param {
                id: pid,
                name: p.name.clone(),
                bitwidth: if plain_enum {
                    0
                } else {
                    self.types.width_of(&p.ty)
                },
                type_name: self.types.type_name(&p.ty),
                doc: doc(&p.annotations),
                ..Default::default()
            };
            add_annotations(&mut param, &p.annotations, &[])?;
            out.params.push(param);
        }
        Ok(out)
    }

    fn value_set(
        &mut self,
        v: &'a p4_ir::ValueSet,
        id: u32,
        alloc: &Allocation,
    ) -> Result<pi::ValueSet, P4InfoError> {
        // A struct element gives one match field per member, a scalar one field.
        let members: Vec<(&str, &CpType, Option<&Annotations>)> = match self.types.named(&v.elem) {
            Some(NamedType {
                kind: NamedKind::Struct(fields),
                ..
            }) => fields
                .iter()
                .map(|f| (f.name.as_str(), &f.ty, Some(&f.annotations)))
                .collect(),
            _ => vec![("", &v.elem, None)],
        };
        let fids = field_ids(
            &members
                .iter()
                .map(|m| m.2.and_then(at_id))
                .collect::<Vec<_>>(),
        );
        let mut matches = Vec::new();
        for (&(n, t, anns), fid) in members.iter().zip(fids) {
            let kind = anns
                .and_then(|a| find(a, "match"))
                .and_then(|a| match &a.body {
                    AnnotationBody::Unstructured {
                        args: Some(args), ..
                    } => match args.first() {
                        Some(AnnotationArg::Name(n)) => Some(n.clone()),
                        _ => None,
                    },
                    AnnotationBody::Unstructured { text, args: None } => {
                        Some(text.trim().to_string())
                    }
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
                name: n.to_string(),
                bitwidth: self.types.width_of(t),
                type_name: self.types.type_name(t),
                ..Default::default()
            };
            mf.r#match = Some(if mt == pi::match_field::MatchType::Unspecified {
                pi::match_field::Match::OtherMatchType(kind)
            } else {
                pi::match_field::Match::MatchType(mt as i32)
            });
            if let Some(a) = anns {
                add_annotations(&mut mf, a, &["match"])?;
            }
            matches.push(mf);
        }
        Ok(pi::ValueSet {
            preamble: Some(preamble(
                id,
                &v.name,
                &alloc.alias(&v.name),
                &v.annotations,
                &[],
            )?),
            r#match: matches,
            size: i32::try_from(v.size).unwrap_or(i32::MAX),
        })
    }

    /// Headers annotated `@controller_header("name")`, in declaration order.
    fn controller_headers(&self) -> Vec<ControllerHeader<'a>> {
        let cp = &self.prog.control_plane;
        let mut out = Vec::new();
        for t in &cp.types {
            let NamedKind::Header(fields) = &t.kind else {
                continue;
            };
            if !has(&t.annotations, "controller_header") || has(&t.annotations, "hidden") {
                continue;
            }
            // Struct-typed fields are flattened to `s.f` (p4c's FlattenHeader).
            let mut flat = Vec::new();
            for f in fields {
                if has(&f.annotations, "hidden") {
                    continue;
                }
                self.types
                    .flatten_fields(&f.name, &f.ty, &f.annotations, &mut flat);
            }
            out.push(ControllerHeader {
                name: t.name.clone(),
                anns: &t.annotations,
                fields: flat,
            });
        }
        out
    }

    /// PSA/PNA counters, meters and registers name their index type when it is a `type`.
    fn index_type_name(&mut self, args: &[CpType], i: usize) -> Option<pi::P4NamedType> {
        if self.prog.arch == Arch::V1Model {
            return None;
        }
        args.get(i).and_then(|t| self.types.type_name(t))
    }
}

/// An action selector's `@selector_size_semantics("sum_of_weights" | "sum_of_members")`, with
/// `@max_member_weight(N)` for the latter (P4Runtime spec §"ActionProfile"; none: the default,
/// sum of weights, left unwritten as p4c leaves it).
fn size_semantics(
    anns: &Annotations,
) -> Result<Option<pi::action_profile::SelectorSizeSemantics>, P4InfoError> {
    use pi::action_profile::{SelectorSizeSemantics as S, SumOfMembers, SumOfWeights};
    let Some(v) = find(anns, "selector_size_semantics").and_then(Annotation::string_arg) else {
        return Ok(None);
    };
    match v.to_ascii_uppercase().as_str() {
        "SUM_OF_WEIGHTS" => Ok(Some(S::SumOfWeights(SumOfWeights {}))),
        "SUM_OF_MEMBERS" => {
            let w = find(anns, "max_member_weight").and_then(Annotation::int_arg);
            Ok(Some(S::SumOfMembers(SumOfMembers {
                max_member_weight: w.and_then(|w| i32::try_from(w).ok()).unwrap_or(0),
            })))
        }
        _ => Err(P4InfoError::SizeSemantics(v)),
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

/// What the controller sees of a translated type.
enum Sdn {
    /// `bit<W>` (`W` written as a number or as `bit<W>`).
    Bits(i32),
    /// `string`.
    String,
}

/// A new type's `@p4runtime_translation(URI, T)` (P4Runtime spec §"Translation of
/// port numbers and other types"): the URI and the controller's type, `T` a number, `bit<W>`
/// or `string`.
fn translation(anns: &Annotations) -> Option<(String, Sdn)> {
    let a = find(anns, "p4runtime_translation")?;
    match &a.body {
        AnnotationBody::Unstructured {
            args: Some(args), ..
        } => {
            let uri = match args.first() {
                Some(AnnotationArg::String(s)) => s.clone(),
                _ => String::new(),
            };
            let sdn = match args.get(1) {
                Some(AnnotationArg::Int(v)) => Sdn::Bits(i32::try_from(v).unwrap_or(0)),
                _ => Sdn::String,
            };
            Some((uri, sdn))
        }
        AnnotationBody::Unstructured { text, args: None } => {
            let (u, rest) = text.split_once(',').unwrap_or((text, ""));
            let rest = rest.trim();
            let sdn = if rest == "string" {
                Sdn::String
            } else if let Some(w) = rest.strip_prefix("bit<").and_then(|x| x.strip_suffix('>')) {
                Sdn::Bits(w.trim().parse().unwrap_or(0))
            } else {
                Sdn::Bits(rest.parse().unwrap_or(0))
            };
            Some((u.trim().trim_matches('"').to_string(), sdn))
        }
        _ => None,
    }
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

/// Whether a body calls a v1model extern function (`mark_to_drop`, `hash`, `digest`, …; not a
/// method of an extern instance).
fn calls_extern_function(body: &[p4_ir::Stmt]) -> bool {
    use p4_ir::{Stmt, XOp};
    body.iter().any(|st| match st {
        Stmt::Extern(c) => matches!(
            c.op,
            XOp::MarkToDrop
                | XOp::V1Hash(_)
                | XOp::V1Random
                | XOp::VerifyChecksum { .. }
                | XOp::UpdateChecksum { .. }
                | XOp::Resubmit
                | XOp::Recirculate
                | XOp::Clone
                | XOp::Truncate
                | XOp::V1Digest
                | XOp::Assert
                | XOp::Assume
                | XOp::Log
        ),
        Stmt::If(_, a, b) => calls_extern_function(a) || calls_extern_function(b),
        Stmt::Switch { bodies, .. } => bodies.iter().any(|b| calls_extern_function(b)),
        Stmt::Loop { body, update, .. } => {
            calls_extern_function(body) || calls_extern_function(update)
        }
        _ => false,
    })
}

/// `type_info` under construction: every named type a P4Info object refers to.
struct TypeInfo<'a> {
    prog: &'a Program,
    structs: BTreeMap<String, pi::P4StructTypeSpec>,
    headers: BTreeMap<String, pi::P4HeaderTypeSpec>,
    header_unions: BTreeMap<String, pi::P4HeaderUnionTypeSpec>,
    enums: BTreeMap<String, pi::P4EnumTypeSpec>,
    serializable_enums: BTreeMap<String, pi::P4SerializableEnumTypeSpec>,
    new_types: BTreeMap<String, pi::P4NewTypeSpec>,
    /// The `error` type's members, once a type uses it.
    error: Option<pi::P4ErrorTypeSpec>,
    /// Annotations of named types P4Info cannot hold.
    errors: Vec<P4InfoError>,
}

impl<'a> TypeInfo<'a> {
    fn new(prog: &'a Program) -> TypeInfo<'a> {
        TypeInfo {
            prog,
            structs: BTreeMap::new(),
            headers: BTreeMap::new(),
            header_unions: BTreeMap::new(),
            enums: BTreeMap::new(),
            serializable_enums: BTreeMap::new(),
            new_types: BTreeMap::new(),
            error: None,
            errors: Vec::new(),
        }
    }

    fn into_proto(self) -> Result<pi::P4TypeInfo, P4InfoError> {
        if let Some(e) = self.errors.into_iter().next() {
            return Err(e);
        }
        Ok(pi::P4TypeInfo {
            structs: self.structs.into_iter().collect(),
            headers: self.headers.into_iter().collect(),
            header_unions: self.header_unions.into_iter().collect(),
            enums: self.enums.into_iter().collect(),
            serializable_enums: self.serializable_enums.into_iter().collect(),
            new_types: self.new_types.into_iter().collect(),
            error: self.error,
        })
    }

    /// The named type a type is, if it is one.
    fn named(&self, t: &CpType) -> Option<&'a NamedType> {
        match t {
            CpType::Named(id) => self.prog.control_plane.ty(*id),
            _ => None,
        }
    }

    fn kind(&self, t: &CpType) -> Option<&'a NamedKind> {
        self.named(t).map(|n| &n.kind)
    }

    /// Width in bits of a scalar type as P4Info states it (`bool` is 1, an `error` 0; a `type`
    /// with `@p4runtime_translation` has its controller type's width, 0 for a string, one
    /// without the width of the bits under it; a plain enum 32).
    fn width_of(&self, t: &CpType) -> i32 {
        match t {
            CpType::Bit(w) | CpType::Int(w) | CpType::Varbit(w) => *w as i32,
            CpType::Bool => 1,
            CpType::Named(_) => match self.named(t) {
                Some(n) => match &n.kind {
                    // Only the type's own translation counts (p4c's getTypeWidth); under it,
                    // the width of the bits it is made of.
                    NamedKind::NewType { underlying } => match translation(&n.annotations) {
                        Some((_, Sdn::Bits(w))) => w,
                        Some((_, Sdn::String)) => 0,
                        None => {
                            let mut u = underlying;
                            while let Some(NamedKind::NewType { underlying }) = self.kind(u) {
                                u = underlying;
                            }
                            self.width_of(u)
                        }
                    },
                    NamedKind::Enum(_) => 32,
                    NamedKind::SerializableEnum { underlying, .. } => self.width_of(underlying),
                    _ => 0,
                },
                None => 0,
            },
            _ => 0,
        }
    }

    /// A field, or the members of a struct-typed field as `f.m` (recursively), each with the
    /// field's annotations.
    fn flatten_fields(
        &self,
        name: &str,
        t: &'a CpType,
        anns: &'a Annotations,
        out: &mut Vec<(String, &'a CpType, &'a Annotations)>,
    ) {
        match self.kind(t) {
            Some(NamedKind::Struct(fields)) => {
                for f in fields {
                    self.flatten_fields(&format!("{name}.{}", f.name), &f.ty, anns, out);
                }
            }
            _ => out.push((name.to_string(), t, anns)),
        }
    }

    /// The `type_name` of a scalar of a user-defined `type` or enum (registering it), else
    /// `None`.
    fn type_name(&mut self, t: &CpType) -> Option<pi::P4NamedType> {
        let n = self.named(t)?;
        match &n.kind {
            NamedKind::NewType { .. } | NamedKind::Enum(_) => {
                self.spec(t);
                Some(pi::P4NamedType {
                    name: n.name.clone(),
                })
            }
            // A serializable enum is registered in type_info but named by no type_name.
            NamedKind::SerializableEnum { .. } => {
                self.spec(t);
                None
            }
            _ => None,
        }
    }

    /// The type spec of `t`, registering the named types it uses.
    fn spec(&mut self, t: &CpType) -> pi::P4DataTypeSpec {
        use pi::p4_data_type_spec::TypeSpec as S;
        let spec = match t {
            CpType::Bit(w) => S::Bitstring(bits(false, *w)),
            CpType::Int(w) => S::Bitstring(bits(true, *w)),
            CpType::Varbit(w) => S::Bitstring(varbit(*w)),
            CpType::Bool => S::Bool(pi::P4BoolType {}),
            CpType::Error => {
                // p4c lists every member of `error` (the core library's, then the program's).
                let prog = self.prog;
                self.error.get_or_insert_with(|| pi::P4ErrorTypeSpec {
                    members: prog.errors.clone(),
                });
                S::Error(pi::P4ErrorType {})
            }
            CpType::Tuple(ts) => S::Tuple(pi::P4TupleTypeSpec {
                members: ts.iter().map(|t| self.spec(t)).collect(),
            }),
            CpType::Named(_) => match self.named(t) {
                Some(n) => self.named_spec(n),
                None => S::Bitstring(bits(false, 0)),
            },
            CpType::Stack(e, size) => match self.named(e) {
                Some(
                    n @ NamedType {
                        kind: NamedKind::HeaderUnion(_),
                        ..
                    },
                ) => {
                    self.spec(e);
                    S::HeaderUnionStack(pi::P4HeaderUnionStackTypeSpec {
                        header_union: Some(pi::P4NamedType {
                            name: n.name.clone(),
                        }),
                        size: *size as i32,
                    })
                }
                Some(
                    n @ NamedType {
                        kind: NamedKind::Header(_) | NamedKind::Struct(_),
                        ..
                    },
                ) => {
                    self.spec(e);
                    S::HeaderStack(pi::P4HeaderStackTypeSpec {
                        header: Some(pi::P4NamedType {
                            name: n.name.clone(),
                        }),
                        size: *size as i32,
                    })
                }
                _ => S::Bitstring(bits(false, 0)),
            },
            CpType::Other => S::Bitstring(bits(false, 0)),
        };
        pi::P4DataTypeSpec {
            type_spec: Some(spec),
        }
    }

    /// The spec of a named type (registering it and the types it uses).
    fn named_spec(&mut self, n: &'a NamedType) -> pi::p4_data_type_spec::TypeSpec {
        use pi::p4_data_type_spec::TypeSpec as S;
        let name = n.name.clone();
        match &n.kind {
            NamedKind::NewType { underlying } => {
                if !self.new_types.contains_key(&name) {
                    let mut u = underlying;
                    while let Some(NamedKind::NewType { underlying }) = self.kind(u) {
                        u = underlying;
                    }
                    let orig = self.spec(u);
                    let mut nt = pi::P4NewTypeSpec {
                        representation: Some(pi::p4_new_type_spec::Representation::OriginalType(
                            orig,
                        )),
                        ..Default::default()
                    };
                    if let Err(e) =
                        add_annotations(&mut nt, &n.annotations, &["p4runtime_translation"])
                    {
                        self.errors.push(e);
                    }
                    if let Some((uri, sdn)) = translation(&n.annotations) {
                        use pi::p4_new_type_translation::{SdnString, SdnType};
                        let sdn_type = match sdn {
                            Sdn::Bits(w) => SdnType::SdnBitwidth(w),
                            Sdn::String => SdnType::SdnString(SdnString {}),
                        };
                        nt.representation =
                            Some(pi::p4_new_type_spec::Representation::TranslatedType(
                                pi::P4NewTypeTranslation {
                                    uri,
                                    sdn_type: Some(sdn_type),
                                },
                            ));
                    }
                    self.new_types.insert(name.clone(), nt);
                }
                S::NewType(pi::P4NamedType { name })
            }
            NamedKind::Enum(members) => {
                self.enums
                    .entry(name.clone())
                    .or_insert_with(|| pi::P4EnumTypeSpec {
                        members: members
                            .iter()
                            .map(|m| pi::p4_enum_type_spec::Member {
                                name: m.clone(),
                                ..Default::default()
                            })
                            .collect(),
                        ..Default::default()
                    });
                S::Enum(pi::P4NamedType { name })
            }
            NamedKind::SerializableEnum {
                underlying,
                members,
            } => {
                if !self.serializable_enums.contains_key(&name) {
                    // `enum bit<W>` and `enum int<W>` alike: P4Info has a width only.
                    let u_spec = match underlying {
                        CpType::Bit(w) | CpType::Int(w) => Some(pi::P4BitTypeSpec {
                            bitwidth: *w as i32,
                        }),
                        _ => None,
                    };
                    let width = self.width_of(underlying);
                    let values = members
                        .iter()
                        .map(|(m, v)| pi::p4_serializable_enum_type_spec::Member {
                            name: m.clone(),
                            // Padded to the underlying type's width, as p4c writes them.
                            value: v
                                .as_ref()
                                .map(|v| padded(v.magnitude().to_bytes_be(), width))
                                .unwrap_or_default(),
                            ..Default::default()
                        })
                        .collect();
                    self.serializable_enums.insert(
                        name.clone(),
                        pi::P4SerializableEnumTypeSpec {
                            underlying_type: u_spec,
                            members: values,
                            ..Default::default()
                        },
                    );
                }
                S::SerializableEnum(pi::P4NamedType { name })
            }
            NamedKind::Struct(fields) => {
                if !self.structs.contains_key(&name) {
                    self.structs.insert(name.clone(), Default::default());
                    let members = fields
                        .iter()
                        .map(|f| pi::p4_struct_type_spec::Member {
                            name: f.name.clone(),
                            type_spec: Some(self.spec(&f.ty)),
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
            NamedKind::Header(fields) => {
                if !self.headers.contains_key(&name) {
                    let mut members = Vec::new();
                    self.flatten_header(fields, "", &mut members);
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
            NamedKind::HeaderUnion(fields) => {
                if !self.header_unions.contains_key(&name) {
                    let members = fields
                        .iter()
                        .map(|f| {
                            let hname = match self.named(&f.ty) {
                                Some(h) => {
                                    self.spec(&f.ty);
                                    h.name.clone()
                                }
                                None => String::new(),
                            };
                            pi::p4_header_union_type_spec::Member {
                                name: f.name.clone(),
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

    /// A header's fields as P4Info lists them: struct-typed fields flattened to `s.f`.
    fn flatten_header(
        &self,
        fields: &[CpField],
        prefix: &str,
        out: &mut Vec<pi::p4_header_type_spec::Member>,
    ) {
        for f in fields {
            let name = format!("{prefix}{}", f.name);
            if let Some(NamedKind::Struct(inner)) = self.kind(&f.ty) {
                self.flatten_header(inner, &format!("{name}."), out);
                continue;
            }
            // (only bit<W>, int<W>, varbit, bool and structs of them occur in headers)
            let b = match f.ty {
                CpType::Bit(w) => bits(false, w),
                CpType::Int(w) => bits(true, w),
                CpType::Varbit(w) => varbit(w),
                CpType::Bool => bits(false, 1),
                _ => bits(false, 0),
            };
            out.push(pi::p4_header_type_spec::Member {
                name,
                type_spec: Some(b),
            });
        }
    }
}

/// Big-endian bytes left-padded with zeros to `ceil(width / 8)` bytes (never cut).
fn padded(bytes: Vec<u8>, width: i32) -> Vec<u8> {
    let n = usize::try_from(width).unwrap_or(0).div_ceil(8);
    let bytes = if bytes == [0] { Vec::new() } else { bytes };
    if bytes.len() >= n {
        return bytes;
    }
    let mut out = vec![0; n - bytes.len()];
    out.extend(bytes);
    out
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

fn varbit(max: u32) -> pi::P4BitstringLikeTypeSpec {
    pi::P4BitstringLikeTypeSpec {
        type_spec: Some(pi::p4_bitstring_like_type_spec::TypeSpec::Varbit(
            pi::P4VarbitTypeSpec {
                max_bitwidth: max as i32,
            },
        )),
        ..Default::default()
    }
}
