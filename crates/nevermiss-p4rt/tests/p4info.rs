//! The P4Info of small programs of this repository: structured annotations (P4_16 §18.2,
//! P4Runtime spec §"Annotating P4 code with structured annotations") on every element that
//! carries them, their values folded, unstructured annotations beside them, and the errors
//! P4Info cannot hold.

use nevermiss_p4rt::format::p4info_text;
use nevermiss_p4rt::p4info;
use nevermiss_p4rt::pb::p4::config::v1 as pi;
use pi::expression::Value as V;
use pi::structured_annotation::Body;
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn p4info_of_file(rel: &str) -> pi::P4Info {
    let c = p4_front::driver::compile_file(&root().join(rel), &Default::default())
        .unwrap_or_else(|f| panic!("{}", f.render()));
    let prog = p4_ir::lower(&c).unwrap();
    p4info::build(&prog).unwrap().p4info
}

fn build_str(text: &str) -> Result<pi::P4Info, String> {
    let c = p4_front::driver::compile_str("t.p4", text, &Default::default())
        .unwrap_or_else(|f| panic!("{}", f.render()));
    let prog = p4_ir::lower(&c).unwrap();
    p4info::build(&prog).map(|b| b.p4info)
}

fn int(i: i64) -> pi::Expression {
    pi::Expression {
        value: Some(V::Int64Value(i)),
    }
}

fn string(s: &str) -> pi::Expression {
    pi::Expression {
        value: Some(V::StringValue(s.to_string())),
    }
}

fn boolean(b: bool) -> pi::Expression {
    pi::Expression {
        value: Some(V::BoolValue(b)),
    }
}

fn list(name: &str, es: Vec<pi::Expression>) -> pi::StructuredAnnotation {
    pi::StructuredAnnotation {
        name: name.to_string(),
        body: Some(Body::ExpressionList(pi::ExpressionList { expressions: es })),
        source_location: None,
    }
}

fn kvs(name: &str, pairs: Vec<(&str, pi::Expression)>) -> pi::StructuredAnnotation {
    pi::StructuredAnnotation {
        name: name.to_string(),
        body: Some(Body::KvPairList(pi::KeyValuePairList {
            kv_pairs: pairs
                .into_iter()
                .map(|(k, v)| pi::KeyValuePair {
                    key: k.to_string(),
                    value: Some(v),
                })
                .collect(),
        })),
        source_location: None,
    }
}

fn preamble_of<'a>(pres: impl Iterator<Item = &'a pi::Preamble>, name: &str) -> &'a pi::Preamble {
    let pres: Vec<_> = pres.collect();
    pres.iter()
        .copied()
        .find(|p| p.name == name)
        .unwrap_or_else(|| {
            panic!(
                "no {name} among {:?}",
                pres.iter().map(|p| &p.name).collect::<Vec<_>>()
            )
        })
}

#[test]
fn structured_annotations_reach_every_element() {
    let p = p4info_of_file("tests/p4/ok/v1model-structured-annotations.p4");
    let acl = p
        .tables
        .iter()
        .find(|t| t.preamble.as_ref().unwrap().name == "Ing.acl")
        .unwrap();
    let pre = acl.preamble.as_ref().unwrap();
    // Values folded as the checker folds them (`SAI_API` a macro, `PRIO_BASE * 2` a constant).
    assert_eq!(
        pre.structured_annotations,
        vec![kvs(
            "SaiTable",
            vec![
                ("name", string("acl_rule")),
                ("api", string("dash_acl")),
                ("order", int(20)),
                ("isobject", boolean(false)),
            ]
        )]
    );
    assert!(pre.annotations.is_empty(), "{:?}", pre.annotations);
    assert_eq!(pre.doc.as_ref().unwrap().brief, "the ACL");
    let dmac = &acl.match_fields[0];
    assert_eq!(dmac.name, "dmac");
    assert_eq!(
        dmac.structured_annotations,
        vec![kvs("SaiVal", vec![("type", string("sai_mac_t"))])]
    );
    assert_eq!(
        acl.match_fields[1].structured_annotations,
        vec![kvs("SaiVal", vec![("type", string("sai_ip_address_t"))])]
    );
    assert_eq!(
        acl.match_fields[1].type_name.as_ref().unwrap().name,
        "ip_addr_t"
    );
    assert_eq!(
        acl.action_refs[0].structured_annotations,
        vec![list("Choice", vec![string("permit")])]
    );
    assert_eq!(
        acl.action_refs[1].structured_annotations,
        vec![list("Choice", vec![string("deny")])]
    );

    let actions = || p.actions.iter().map(|a| a.preamble.as_ref().unwrap());
    let permit = preamble_of(actions(), "Ing.permit");
    // `@SaiAction[]`: an empty list has no body, as p4c writes it.
    assert_eq!(
        permit.structured_annotations,
        vec![pi::StructuredAnnotation {
            name: "SaiAction".into(),
            body: None,
            source_location: None,
        }]
    );
    // The same name unstructured on another element is an unstructured annotation there.
    assert_eq!(permit.annotations, vec!["@Trace(\"unstructured here\")"]);
    let deny = preamble_of(actions(), "Ing.deny");
    assert_eq!(
        deny.structured_annotations,
        vec![list(
            "Trace",
            vec![
                int(1),
                string("two"),
                boolean(true),
                boolean(false),
                int(11)
            ]
        )]
    );
    let permit_action = p
        .actions
        .iter()
        .find(|a| a.preamble.as_ref().unwrap().name == "Ing.permit")
        .unwrap();
    assert_eq!(
        permit_action.params[0].structured_annotations,
        vec![kvs(
            "SaiVal",
            vec![("type", string("sai_uint32_t")), ("initial", int(0))]
        )]
    );
    assert_eq!(
        permit_action.params[1].structured_annotations,
        vec![kvs("SaiVal", vec![("isresourcetype", boolean(true))])]
    );

    let hits = p.counters[0].preamble.as_ref().unwrap();
    assert_eq!(
        hits.structured_annotations,
        vec![kvs(
            "SaiCounter",
            vec![("name", string("acl_hits")), ("attr_type", string("stats"))]
        )]
    );

    let ti = p.type_info.as_ref().unwrap();
    assert_eq!(
        ti.new_types["ip_addr_t"].structured_annotations,
        vec![kvs(
            "SaiType",
            vec![("kind", string("ip")), ("width", int(32))]
        )]
    );

    let cpm = &p.controller_packet_metadata[0];
    assert_eq!(
        cpm.preamble.as_ref().unwrap().structured_annotations,
        vec![kvs("Wire", vec![("format", string("pi"))])]
    );
    assert_eq!(
        cpm.metadata[0].structured_annotations,
        vec![kvs("SaiVal", vec![("type", string("sai_uint16_t"))])]
    );

    assert_eq!(
        p.pkg_info.as_ref().unwrap().structured_annotations,
        vec![kvs(
            "Pipeline",
            vec![("name", string("structured")), ("version", int(1))]
        )]
    );

    // Text format as p4c writes it.
    let text = p4info_text(&p);
    assert!(
        text.contains(
            "    structured_annotations {\n      name: \"SaiTable\"\n      kv_pair_list {\n        kv_pairs {\n          key: \"name\"\n          value {\n            string_value: \"acl_rule\"\n          }\n        }\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("      expression_list {\n        expressions {\n          int64_value: 1\n"),
        "{text}"
    );
}

/// core.p4's `NoAction` carries one `@noWarn("unused")`, as p4c's P4Info lists it.
#[test]
fn no_action_has_one_no_warn() {
    let p = build_str(&SMALL.replace("ANNOTATION", "")).unwrap();
    let text = p4info_text(&p);
    assert!(text.contains("name: \"NoAction\""), "{text}");
    assert_eq!(text.matches("@noWarn(\\\"unused\\\")").count(), 1, "{text}");
}

const SMALL: &str = r#"
#include <core.p4>
#include <v1model.p4>
struct h_t {}
struct m_t {}
parser P(packet_in b, out h_t h, inout m_t m, inout standard_metadata_t s) {
    state start { transition accept; }
}
control C(inout h_t h, inout m_t m) { apply {} }
control I(inout h_t h, inout m_t m, inout standard_metadata_t s) {
    ANNOTATION
    action a() {}
    table t { key = { s.ingress_port: exact; } actions = { a; } }
    apply { t.apply(); }
}
control E(inout h_t h, inout m_t m, inout standard_metadata_t s) { apply {} }
control D(packet_out b, in h_t h) { apply {} }
V1Switch(P(), C(), I(), E(), C(), D()) main;
"#;

/// P4Info holds integers of structured annotations as int64: a larger one is an error
/// naming the annotation, as p4c reports it; the bounds themselves pass.
#[test]
fn structured_integer_beyond_int64_is_an_error() {
    let big = SMALL.replace("ANNOTATION", "@Big[v = 9223372036854775808]");
    let e = build_str(&big).unwrap_err();
    assert!(e.contains("@Big") && e.contains("int64"), "{e}");
    // The checker points at it: legal P4, but no P4Info can carry it.
    let c = p4_front::driver::compile_str("t.p4", &big, &Default::default())
        .unwrap_or_else(|f| panic!("{}", f.render()));
    let w: String = c
        .checked
        .warnings
        .iter()
        .map(|w| p4_front::diag::render(&c.unit, w))
        .collect();
    assert!(
        w.contains("t.p4:11:14: warning: integer in a structured annotation does not fit in int64"),
        "{w}"
    );
    let p = build_str(&SMALL.replace(
        "ANNOTATION",
        "@Big[hi = 9223372036854775807, lo = -9223372036854775808]",
    ))
    .unwrap();
    let a = p
        .actions
        .iter()
        .find(|a| a.preamble.as_ref().unwrap().name == "I.a")
        .unwrap();
    assert_eq!(
        a.preamble.as_ref().unwrap().structured_annotations,
        vec![kvs(
            "Big",
            vec![("hi", int(i64::MAX)), ("lo", int(i64::MIN))]
        )]
    );
}

fn names<'a>(pres: impl Iterator<Item = &'a pi::Preamble>) -> Vec<&'a str> {
    pres.map(|p| p.name.as_str()).collect()
}

/// Actions in p4c's order: for each block `main` runs, the top-level actions it uses in order
/// of first use (`NoAction` where a table without `default_action` uses it), then its own
/// actions and those of the controls it instantiates, in declaration order.
#[test]
fn actions_are_listed_in_p4c_order() {
    let p = build_str(
        r#"
#include <core.p4>
#include <v1model.p4>
struct h_t {}
struct m_t {}
action global_b() {}
action global_a() {}
parser P(packet_in b, out h_t h, inout m_t m, inout standard_metadata_t s) {
    state start { transition accept; }
}
control C(inout h_t h, inout m_t m) { apply {} }
control Sub(inout standard_metadata_t s) {
    action sub_z(bit<9> p) { s.egress_spec = p; }
    table st { key = { s.ingress_port: exact; } actions = { sub_z; global_a; } }
    apply { st.apply(); }
}
control I(inout h_t h, inout m_t m, inout standard_metadata_t s) {
    action zeta() {}
    Sub() sub;
    action alpha(bit<9> p) { s.egress_spec = p; }
    table t1 { key = { s.ingress_port: exact; } actions = { alpha; global_b; zeta; } default_action = zeta; }
    apply { t1.apply(); sub.apply(s); }
}
control E(inout h_t h, inout m_t m, inout standard_metadata_t s) {
    action omega() {}
    table t2 { key = { s.egress_port: exact; } actions = { omega; global_a; } }
    apply { t2.apply(); }
}
control D(packet_out b, in h_t h) { apply {} }
V1Switch(P(), C(), I(), E(), C(), D()) main;
"#,
    )
    .unwrap();
    assert_eq!(
        names(p.actions.iter().map(|a| a.preamble.as_ref().unwrap())),
        // As p4test lists them for this program.
        [
            // I: top-level actions by first use — sub (declared before t1, and inlined where
            // it is declared) lists global_a and uses NoAction as its default, then t1 lists
            // global_b — then I's own and sub's in declaration order.
            "global_a",
            "NoAction",
            "global_b",
            "I.zeta",
            "I.sub.sub_z",
            "I.alpha",
            // E: its top-level actions are listed already.
            "E.omega",
        ]
    );
}

/// `type_info` is written once p4c has looked at a type for it, even when it stays empty: a
/// table, an action with parameters, a declared extern instance, or (v1model) an extern
/// function a control calls; a program with none of them has no `type_info`.
#[test]
fn type_info_is_written_when_p4c_writes_it() {
    let program = |ingress: &str| {
        format!(
            r#"
#include <core.p4>
#include <v1model.p4>
struct h_t {{}}
struct m_t {{}}
parser P(packet_in b, out h_t h, inout m_t m, inout standard_metadata_t s) {{
    state start {{ transition accept; }}
}}
control C(inout h_t h, inout m_t m) {{ apply {{}} }}
control I(inout h_t h, inout m_t m, inout standard_metadata_t s) {{ {ingress} }}
control E(inout h_t h, inout m_t m, inout standard_metadata_t s) {{ apply {{}} }}
control D(packet_out b, in h_t h) {{ apply {{}} }}
V1Switch(P(), C(), I(), E(), C(), D()) main;
"#
        )
    };
    let none = build_str(&program("apply { s.egress_spec = 1; }")).unwrap();
    assert!(none.type_info.is_none(), "{}", p4info_text(&none));
    assert!(!p4info_text(&none).contains("type_info"));
    for ingress in [
        "action a() {} table t { actions = { a; } } apply { t.apply(); }",
        "counter(4, CounterType.packets) c; apply { c.count(0); }",
        "apply { mark_to_drop(s); }",
    ] {
        let p = build_str(&program(ingress)).unwrap();
        assert_eq!(
            p.type_info,
            Some(Default::default()),
            "{ingress}: {}",
            p4info_text(&p)
        );
        assert!(p4info_text(&p).ends_with("type_info {\n}\n"), "{ingress}");
    }
}

/// Types as p4c writes them: a serializable enum's values padded to its width (`enum int<W>`
/// too), a new type translated as `bit<W>` or `string` in any spelling, the width of a `type`
/// over a translated one that of its bits, and `error` listed once a type uses it.
#[test]
fn types_as_p4c_writes_them() {
    let p = build_str(
        r#"
#include <core.p4>
#include <v1model.p4>
enum bit<16> E16 { A = 10, B = 0x102 }
enum int<8> S8 { X = 1 }
@p4runtime_translation("x.org/a", bit<32>) type bit<9> A_t;
@p4runtime_translation("x.org/b", string) type bit<9> B_t;
@p4runtime_translation("x.org/c", 12) type bit<8> C_t;
type C_t D_t;
error { Mine }
header h { bit<16> f; }
struct digest_t { error e; E16 v; }
struct h_t { h hh; }
struct m_t { A_t a; B_t b; D_t d; S8 s; }
parser P(packet_in b, out h_t h, inout m_t m, inout standard_metadata_t s) {
    state start { transition accept; }
}
control C(inout h_t h, inout m_t m) { apply {} }
control I(inout h_t h, inout m_t m, inout standard_metadata_t s) {
    action a() {}
    table t {
        key = { m.a: exact; m.b: exact; m.d: exact; m.s: exact; }
        actions = { a; }
    }
    apply {
        t.apply();
        digest<digest_t>(1, { s.parser_error, (E16)h.hh.f });
    }
}
control E(inout h_t h, inout m_t m, inout standard_metadata_t s) { apply {} }
control D(packet_out b, in h_t h) { apply {} }
V1Switch(P(), C(), I(), E(), C(), D()) main;
"#,
    )
    .unwrap();
    let ti = p.type_info.as_ref().unwrap();
    let e16 = &ti.serializable_enums["E16"];
    assert_eq!(e16.members[0].value, vec![0, 10]);
    assert_eq!(e16.members[1].value, vec![1, 2]);
    assert_eq!(
        ti.serializable_enums["S8"]
            .underlying_type
            .unwrap()
            .bitwidth,
        8
    );
    use pi::p4_new_type_spec::Representation as R;
    use pi::p4_new_type_translation::SdnType;
    let sdn = |n: &str| match &ti.new_types[n].representation {
        Some(R::TranslatedType(t)) => t.sdn_type,
        other => panic!("{n}: {other:?}"),
    };
    assert_eq!(sdn("A_t"), Some(SdnType::SdnBitwidth(32)));
    assert!(matches!(sdn("B_t"), Some(SdnType::SdnString(_))));
    let t = &p.tables[0];
    let width = |n: &str| {
        t.match_fields
            .iter()
            .find(|m| m.name == n)
            .unwrap()
            .bitwidth
    };
    assert_eq!(width("m.a"), 32);
    assert_eq!(width("m.b"), 0);
    assert_eq!(width("m.d"), 8, "the bits under D_t, not C_t's translation");
    let errors = &ti.error.as_ref().unwrap().members;
    assert_eq!(errors.first().map(String::as_str), Some("NoError"));
    assert_eq!(errors.last().map(String::as_str), Some("Mine"));
}

/// An action selector's size semantics from its annotations; a direct counter no table uses
/// is not listed (p4c lists one with its table).
#[test]
fn selector_semantics_and_direct_resources() {
    let p = build_str(
        r#"
#include <core.p4>
#include <v1model.p4>
struct h_t {}
struct m_t {}
parser P(packet_in b, out h_t h, inout m_t m, inout standard_metadata_t s) {
    state start { transition accept; }
}
control C(inout h_t h, inout m_t m) { apply {} }
control I(inout h_t h, inout m_t m, inout standard_metadata_t s) {
    @selector_size_semantics("sum_of_members") @max_member_weight(4000) @max_group_size(8)
    action_selector(HashAlgorithm.crc16, 32w64, 32w16) sel;
    direct_counter(CounterType.packets) used;
    direct_counter(CounterType.packets) unused;
    action a() {}
    table t {
        key = { s.ingress_port: exact; s.egress_port: selector; }
        actions = { a; }
        implementation = sel;
        counters = used;
    }
    apply { t.apply(); }
}
control E(inout h_t h, inout m_t m, inout standard_metadata_t s) { apply {} }
control D(packet_out b, in h_t h) { apply {} }
V1Switch(P(), C(), I(), E(), C(), D()) main;
"#,
    )
    .unwrap();
    use pi::action_profile::{SelectorSizeSemantics as S, SumOfMembers};
    let ap = &p.action_profiles[0];
    assert_eq!(ap.max_group_size, 8);
    assert_eq!(
        ap.selector_size_semantics,
        Some(S::SumOfMembers(SumOfMembers {
            max_member_weight: 4000
        }))
    );
    assert!(ap.preamble.as_ref().unwrap().annotations.is_empty());
    assert_eq!(
        names(
            p.direct_counters
                .iter()
                .map(|c| c.preamble.as_ref().unwrap())
        ),
        ["I.used"]
    );
}

/// A program's BMv2 JSON (p4c-bm2-ss's, tests/bmv2-json/) gets the P4Info its P4 source gets:
/// the same tables, actions (p4c's synthesized `@hidden` ones left out), ids, NoAction's
/// annotation and digests. Only a digest's member names may differ: the JSON does not keep
/// them, so they come from the learn list's source fragment.
#[test]
fn bmv2_json_gets_the_p4info_of_its_source() {
    for name in ["v1model-router", "v1model-l2-learning"] {
        let from_source = p4info_of_file(&format!("examples/{name}.p4"));
        let json = std::fs::read(root().join(format!("tests/bmv2-json/{name}.json"))).unwrap();
        let prog = bmv2_json::load_bytes(&json).unwrap();
        let mut from_json = p4info::build(&prog).unwrap().p4info;
        let mut expected = from_source.clone();
        for p in [&mut from_json, &mut expected] {
            for s in p.type_info.iter_mut().flat_map(|t| t.structs.values_mut()) {
                for (i, m) in s.members.iter_mut().enumerate() {
                    m.name = format!("m{i}");
                }
            }
        }
        assert_eq!(
            p4info_text(&from_json),
            p4info_text(&expected),
            "{name}: the JSON's P4Info differs from the source's"
        );
        assert_eq!(from_json.digests.len(), from_source.digests.len(), "{name}");
    }
}
