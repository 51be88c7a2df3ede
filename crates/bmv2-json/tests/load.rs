//! Loading BMv2 JSON: what is refused and how the message says where; what p4c's constructs
//! become (jumps turned back into `if`, exact arithmetic widths, BMv2's header semantics).

use bmv2_json::{is_bmv2_json, load_bytes, load_value};
use p4_ir::*;
use serde_json::{json, Value};

/// A minimal v1model document: one header, a parser extracting it, empty pipelines, a
/// deparser, and the actions given.
fn doc(actions: Value, ingress_tables: Value, init: Value) -> Value {
    json!({
        "header_types": [
            {"name": "h_t", "id": 0, "fields": [["a", 8, false], ["b", 16, false], ["s", 8, true]]},
            {"name": "standard_metadata", "id": 1, "fields": [["ingress_port", 9, false], ["egress_spec", 9, false], ["egress_port", 9, false], ["instance_type", 32, false], ["packet_length", 32, false], ["mcast_grp", 16, false]]}
        ],
        "headers": [
            {"name": "standard_metadata", "id": 0, "header_type": "standard_metadata", "metadata": true},
            {"name": "h", "id": 1, "header_type": "h_t", "metadata": false},
            {"name": "g", "id": 2, "header_type": "h_t", "metadata": false}
        ],
        "parsers": [{"name": "parser", "id": 0, "init_state": "start", "parse_states": [
            {"name": "start", "id": 0, "parser_ops": [{"op": "extract", "parameters": [{"type": "regular", "value": "h"}]}],
             "transition_key": [], "transitions": [{"type": "default", "value": null, "mask": null, "next_state": null}]}
        ]}],
        "deparsers": [{"name": "deparser", "id": 0, "order": ["h", "g"], "primitives": []}],
        "actions": actions,
        "pipelines": [
            {"name": "ingress", "id": 0, "init_table": init, "tables": ingress_tables, "conditionals": [], "action_profiles": []},
            {"name": "egress", "id": 1, "init_table": null, "tables": [], "conditionals": [], "action_profiles": []}
        ],
        "__meta__": {"version": [2, 23]}
    })
}

fn err(v: &Value) -> String {
    match load_value(v) {
        Ok(_) => panic!("loaded: {v}"),
        Err(e) => e.to_string(),
    }
}

/// A keyless table whose const default action is `action 0`.
fn call_table() -> Value {
    json!([{"name": "tbl", "id": 0, "key": [], "type": "simple", "max_size": 1,
            "action_ids": [0], "actions": ["a"], "next_tables": {"a": null},
            "default_entry": {"action_id": 0, "action_const": true, "action_data": [], "action_entry_const": true}}])
}

#[test]
fn detection_is_by_content() {
    let d = doc(json!([]), json!([]), Value::Null);
    let bytes = serde_json::to_vec(&d).unwrap();
    assert!(is_bmv2_json(&bytes));
    assert!(is_bmv2_json(&[b"  \n".as_slice(), &bytes].concat()));
    assert!(!is_bmv2_json(b"#include <core.p4>\n"));
    assert!(!is_bmv2_json(br#"{"format": "nevermiss-device-config"}"#));
    assert!(!is_bmv2_json(b"{ not json"));
    assert!(load_value(&d).is_ok());
}

#[test]
fn malformed_documents_are_errors_with_a_json_path() {
    let e = load_bytes(b"{\"headers\": [").unwrap_err().to_string();
    assert!(e.starts_with("$: not valid JSON"), "{e}");
    let mut d = doc(json!([]), json!([]), Value::Null);
    d["headers"][1]["header_type"] = json!("nope");
    assert_eq!(
        err(&d),
        "$.headers[1].header_type: unknown header type nope"
    );
    let mut d = doc(json!([]), json!([]), Value::Null);
    d["parsers"][0]["parse_states"][0]["parser_ops"][0]["parameters"][0]["value"] = json!(7);
    assert_eq!(
        err(&d),
        "$.parsers[0].parse_states[0].parser_ops[0].parameters[0].value: expected a string, found a number"
    );
    let mut d = doc(json!([]), json!([]), Value::Null);
    d.as_object_mut().unwrap().remove("deparsers");
    assert_eq!(err(&d), "$: missing \"deparsers\"");
}

#[test]
fn versions_are_checked_as_bmv2_checks_them() {
    let mut d = doc(json!([]), json!([]), Value::Null);
    d["__meta__"]["version"] = json!([3, 0]);
    assert!(err(&d).contains("major version 2"), "{}", err(&d));
    d["__meta__"]["version"] = json!([2, 99]);
    assert!(err(&d).contains("2.24"), "{}", err(&d));
    // No version at all: accepted (old JSON).
    d.as_object_mut().unwrap().remove("__meta__");
    assert!(load_value(&d).is_ok());
}

#[test]
fn unsupported_constructs_are_named() {
    let a = json!([{"name": "a", "id": 0, "runtime_data": [], "primitives": [
        {"op": "frobnicate", "parameters": []}]}]);
    let e = err(&doc(a, call_table(), json!("tbl")));
    assert_eq!(
        e,
        "$.actions[0].primitives[0]: unsupported: the primitive frobnicate"
    );
    // A jump that does not close an if block.
    let a = json!([{"name": "a", "id": 0, "runtime_data": [], "primitives": [
        {"op": "_jump", "parameters": [{"type": "hexstr", "value": "0x0"}]}]}]);
    let e = err(&doc(a, call_table(), json!("tbl")));
    assert!(
        e.contains("unsupported: a jump from primitive 0 to 0"),
        "{e}"
    );
    // PNA's JSON.
    let mut d = doc(json!([]), json!([]), Value::Null);
    d["parsers"][0]["name"] = json!("main_parser");
    assert!(err(&d).contains("unsupported: PNA programs"));
}

/// A minimal PSA document (p4c-bm2-psa's block and metadata names), with extern instances.
fn psa_doc(externs: Value) -> Value {
    let parser = |name: &str| {
        json!({"name": name, "id": 0, "init_state": "start", "parse_states": [
        {"name": "start", "id": 0, "parser_ops": [], "transition_key": [],
         "transitions": [{"type": "default", "value": null, "mask": null, "next_state": null}]}]})
    };
    let pipe = |name: &str| {
        json!({"name": name, "id": 0, "init_table": null, "tables": [],
        "conditionals": [], "action_profiles": []})
    };
    let deparser = |name: &str| json!({"name": name, "id": 0, "order": ["h"], "primitives": []});
    json!({
        "header_types": [
            {"name": "h_t", "id": 0, "fields": [["a", 8, false]]},
            {"name": "psa_ingress_output_metadata_t", "id": 1, "fields": [["egress_port", 32, false], ["drop", 1, false]]}
        ],
        "headers": [
            {"name": "h", "id": 0, "header_type": "h_t", "metadata": false},
            {"name": "psa_ingress_output_metadata", "id": 1, "header_type": "psa_ingress_output_metadata_t", "metadata": true}
        ],
        "parsers": [parser("ingress_parser"), parser("egress_parser")],
        "deparsers": [deparser("ingress_deparser"), deparser("egress_deparser")],
        "actions": [],
        "pipelines": [pipe("ingress"), pipe("egress")],
        "extern_instances": externs,
        "__meta__": {"version": [2, 23]}
    })
}

#[test]
fn psa_blocks_are_psa_switchs() {
    let p = load_value(&psa_doc(json!([]))).unwrap();
    assert_eq!(p.arch, Arch::Psa);
    let names: Vec<&str> = p.blocks.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "ingress_parser",
            "ingress",
            "ingress_deparser",
            "egress_parser",
            "egress",
            "egress_deparser"
        ]
    );
    // The ingress control's ostd is the psa_ingress_output_metadata instance.
    let ostd = &p.blocks[1].params[3];
    assert!(ostd.region.is_some());
    assert!(ostd.layout.as_ref().unwrap().field("drop").is_some());
    // An extern psa_switch has but nevermiss does not read is named.
    let e = err(&psa_doc(
        json!([{"name": "x", "id": 0, "type": "Frobnicator", "attribute_values": []}]),
    ));
    assert_eq!(
        e,
        "$.extern_instances[0]: unsupported: PSA extern instances of type Frobnicator"
    );
}

/// The body of action 0 once loaded.
fn body_of(actions: Value) -> Vec<Stmt> {
    let p = load_value(&doc(actions, call_table(), json!("tbl"))).unwrap();
    let f = p.tables[0].actions[0].func;
    p.functions[f as usize].body.clone()
}

#[test]
fn jumps_become_if_else() {
    // if (h.a == 1) { h.b = 2 } else { h.b = 3 }; h.a = 4, as p4c writes it.
    let cond = json!({"type": "expression", "value": {"op": "==",
        "left": {"type": "field", "value": ["h", "a"]}, "right": {"type": "hexstr", "value": "0x01"}}});
    let set = |v: &str| json!({"op": "assign", "parameters": [{"type": "field", "value": ["h", "b"]}, {"type": "hexstr", "value": v}]});
    let a = json!([{"name": "a", "id": 0, "runtime_data": [], "primitives": [
        {"op": "_jump_if_zero", "parameters": [cond, {"type": "hexstr", "value": "0x3"}]},
        set("0x2"),
        {"op": "_jump", "parameters": [{"type": "hexstr", "value": "0x4"}]},
        set("0x3"),
        {"op": "assign", "parameters": [{"type": "field", "value": ["h", "a"]}, {"type": "hexstr", "value": "0x04"}]}
    ]}]);
    let body = body_of(a);
    assert_eq!(body.len(), 2, "{body:#?}");
    let Stmt::If(_, then, els) = &body[0] else {
        panic!("{body:#?}")
    };
    assert!(
        matches!(&then[..], [Stmt::Assign(_, _, Expr::Const(2, _))]),
        "{then:#?}"
    );
    assert!(
        matches!(&els[..], [Stmt::Assign(_, _, Expr::Const(3, _))]),
        "{els:#?}"
    );
}

#[test]
fn jumps_back_become_loops() {
    // for (; h.a != 9; h.a = h.a + 1) { if (h.a == 3) continue; if (h.a == 7) break;
    // h.b = h.b + 1; } as p4c writes a `for` (the condition's jump, a jump back to it).
    let cmp = |op: &str, v: &str| {
        json!({"type": "expression", "value": {"op": op,
        "left": {"type": "field", "value": ["h", "a"]}, "right": {"type": "hexstr", "value": v}}})
    };
    let jz = |c: Value, t: &str| json!({"op": "_jump_if_zero", "parameters": [c, {"type": "hexstr", "value": t}]});
    let jump = |t: &str| json!({"op": "_jump", "parameters": [{"type": "hexstr", "value": t}]});
    let inc = |f: &str| {
        json!({"op": "assign", "parameters": [{"type": "field", "value": ["h", f]},
        {"type": "expression", "value": {"op": "+", "left": {"type": "field", "value": ["h", f]},
            "right": {"type": "hexstr", "value": "0x01"}}}]})
    };
    let prims = json!([
        jz(cmp("!=", "0x09"), "0x8"),
        jz(cmp("==", "0x03"), "0x3"),
        jump("0x6"),
        jz(cmp("==", "0x07"), "0x5"),
        jump("0x8"),
        inc("b"),
        inc("a"),
        jump("0x0"),
    ]);
    let body = body_of(json!([{"name": "a", "id": 0, "runtime_data": [], "primitives": prims}]));
    let [Stmt::Loop { body, update, .. }] = &body[..] else {
        panic!("{body:#?}")
    };
    // The update is h.a = h.a + 1; `continue` became the if's else (the rest of the body).
    assert!(matches!(&update[..], [Stmt::Assign(..)]), "{update:#?}");
    let [Stmt::If(_, then, els)] = &body[..] else {
        panic!("{body:#?}")
    };
    assert!(then.is_empty(), "{then:#?}");
    assert!(
        matches!(&els[..], [Stmt::If(_, brk, e2), Stmt::Assign(..)]
            if matches!(&brk[..], [Stmt::Break]) && e2.is_empty()),
        "{els:#?}"
    );
    // `if (h.a == 3) { continue; } else { h.b = h.b + 1; } if (h.a == 5) { return; }` in the
    // loop, then h.b = h.b + 1 after it (a `return` is a jump to the end of the action).
    let prims = json!([
        jz(cmp("!=", "0x09"), "0x9"),
        jz(cmp("==", "0x03"), "0x4"),
        jump("0x7"),
        jump("0x5"),
        inc("b"),
        jz(cmp("==", "0x05"), "0x7"),
        jump("0xa"),
        inc("a"),
        jump("0x0"),
        inc("b"),
    ]);
    let body = body_of(json!([{"name": "a", "id": 0, "runtime_data": [], "primitives": prims}]));
    let [Stmt::Loop { body, update, .. }, Stmt::Assign(..)] = &body[..] else {
        panic!("{body:#?}")
    };
    assert!(matches!(&update[..], [Stmt::Assign(..)]), "{update:#?}");
    assert!(
        matches!(&body[..], [Stmt::If(_, t1, e1), Stmt::If(_, t2, e2)]
            if matches!(&t1[..], [Stmt::Continue]) && matches!(&e1[..], [Stmt::Assign(..)])
                && matches!(&t2[..], [Stmt::Return]) && e2.is_empty()),
        "{body:#?}"
    );
    // A jump back that is not to a loop's condition is refused.
    let prims = json!([inc("a"), jz(cmp("==", "0x03"), "0x3"), jump("0x0")]);
    let e = err(&doc(
        json!([{"name": "a", "id": 0, "runtime_data": [], "primitives": prims}]),
        call_table(),
        json!("tbl"),
    ));
    assert!(
        e.contains("unsupported: a jump from primitive 2 to 0 outside an if/else block"),
        "{e}"
    );
}

#[test]
fn arithmetic_is_exact_where_bmv2_is() {
    // h.b = (h.a - 200) >> 1: BMv2 computes a - 200 as a (possibly negative) integer and
    // shifts it; the store keeps 16 bits. The subtraction must be signed and wide enough.
    let e = json!({"type": "expression", "value": {"op": ">>",
        "left": {"type": "expression", "value": {"op": "-",
            "left": {"type": "field", "value": ["h", "a"]}, "right": {"type": "hexstr", "value": "0xc8"}}},
        "right": {"type": "hexstr", "value": "0x01"}}});
    let body = body_of(
        json!([{"name": "a", "id": 0, "runtime_data": [], "primitives": [
        {"op": "assign", "parameters": [{"type": "field", "value": ["h", "b"]}, e]}]}]),
    );
    let Stmt::Assign(_, t, Expr::Cast(_, _, shr)) = &body[0] else {
        panic!("{body:#?}")
    };
    assert_eq!(*t, Ty::bits(16));
    let Expr::Bin(BinOp::Shr, st, sub, _) = &**shr else {
        panic!("{shr:#?}")
    };
    assert!(st.signed && st.width >= 10, "{st:?}");
    assert!(matches!(&**sub, Expr::Bin(BinOp::Sub, _, _, _)));
    // (h.a + h.a) & 0xff: computed at the mask's 8 bits.
    let e = json!({"type": "expression", "value": {"op": "&",
        "left": {"type": "expression", "value": {"op": "+",
            "left": {"type": "field", "value": ["h", "a"]}, "right": {"type": "field", "value": ["h", "a"]}}},
        "right": {"type": "hexstr", "value": "0xff"}}});
    let body = body_of(
        json!([{"name": "a", "id": 0, "runtime_data": [], "primitives": [
        {"op": "assign", "parameters": [{"type": "field", "value": ["h", "a"]}, e]}]}]),
    );
    let Stmt::Assign(_, _, Expr::Bin(BinOp::And, t, add, _)) = &body[0] else {
        panic!("{body:#?}")
    };
    assert_eq!(*t, Ty::bits(8));
    assert!(matches!(&**add, Expr::Bin(BinOp::Add, t2, _, _) if *t2 == Ty::bits(8)));
}

#[test]
fn add_header_resets_an_invalid_header_as_bmv2_does() {
    let body = body_of(
        json!([{"name": "a", "id": 0, "runtime_data": [], "primitives": [
        {"op": "add_header", "parameters": [{"type": "header", "value": "g"}]}]}]),
    );
    let Stmt::If(Expr::Un(UnOp::Not, _, _), then, els) = &body[0] else {
        panic!("{body:#?}")
    };
    assert!(els.is_empty());
    assert!(
        matches!(
            &then[..],
            [
                Stmt::Zero { words: 3, .. },
                Stmt::SetValid { valid: true, .. }
            ]
        ),
        "{then:#?}"
    );
    // assign_header of an invalid source invalidates the destination.
    let body = body_of(
        json!([{"name": "a", "id": 0, "runtime_data": [], "primitives": [
        {"op": "assign_header", "parameters": [{"type": "header", "value": "g"}, {"type": "header", "value": "h"}]}]}]),
    );
    let Stmt::If(_, then, els) = &body[0] else {
        panic!("{body:#?}")
    };
    assert!(matches!(
        &then[..],
        [
            Stmt::Copy { words: 3, .. },
            Stmt::SetValid { valid: true, .. }
        ]
    ));
    assert!(matches!(&els[..], [Stmt::SetValid { valid: false, .. }]));
}

#[test]
fn pipelines_become_structured_statements() {
    // cond ? t1 : t2, both then t3: the branches meet at t3, which is emitted once.
    let t = |name: &str, next: Value| {
        json!({"name": name, "id": 0, "key": [], "type": "simple", "max_size": 1,
               "action_ids": [0], "actions": ["a"], "next_tables": {"a": next},
               "default_entry": {"action_id": 0, "action_const": true, "action_data": [], "action_entry_const": true}})
    };
    let mut d = doc(
        json!([{"name": "a", "id": 0, "runtime_data": [], "primitives": []}]),
        json!([
            t("t1", json!("t3")),
            t("t2", json!("t3")),
            t("t3", Value::Null)
        ]),
        json!("c"),
    );
    d["pipelines"][0]["conditionals"] = json!([{"name": "c", "id": 0,
        "expression": {"type": "expression", "value": {"op": "d2b", "left": null, "right": {"type": "field", "value": ["h", "$valid$"]}}},
        "true_next": "t1", "false_next": "t2"}]);
    let p = load_value(&d).unwrap();
    let ig = match p.block("ig").unwrap().body {
        BlockBody::Control(f) => &p.functions[f as usize].body,
        _ => panic!(),
    };
    assert!(
        matches!(&ig[..], [Stmt::If(..), Stmt::ApplyTable { table: 2, .. }]),
        "{ig:#?}"
    );
    // A cycle is refused.
    d["pipelines"][0]["tables"][2]["next_tables"]["a"] = json!("c");
    assert!(err(&d).contains("cycle"), "{}", err(&d));
}

#[test]
fn json_that_is_not_bmv2_says_what_it_lacks() {
    assert_eq!(
        bmv2_json::missing_bmv2_keys(br#"{"headers": []}"#),
        Some(vec!["header_types", "parsers", "deparsers", "pipelines"])
    );
    assert_eq!(bmv2_json::missing_bmv2_keys(b"control c() {}"), None);
    let d = doc(json!([]), json!([]), Value::Null);
    assert_eq!(
        bmv2_json::missing_bmv2_keys(&serde_json::to_vec(&d).unwrap()),
        None
    );
}

#[test]
fn p4cs_tables_for_direct_action_calls_become_calls() {
    // `tbl_a`: no key, a constant default action with data: a call of the action, its
    // parameter set first; no table is left for it.
    let a = json!([{"name": "a", "id": 0, "runtime_data": [{"name": "v", "bitwidth": 8}], "primitives": [
        {"op": "assign", "parameters": [{"type": "field", "value": ["h", "a"]}, {"type": "runtime_data", "value": 0}]}]}]);
    let t = json!([{"name": "tbl_a", "id": 0, "key": [], "type": "simple", "max_size": 1,
        "action_ids": [0], "actions": ["a"], "next_tables": {"a": null},
        "default_entry": {"action_id": 0, "action_const": true, "action_data": ["0x2a"], "action_entry_const": true}}]);
    let p = load_value(&doc(a, t, json!("tbl_a"))).unwrap();
    assert!(p.tables.is_empty());
    let ig = match p.block("ig").unwrap().body {
        BlockBody::Control(f) => &p.functions[f as usize].body,
        _ => panic!(),
    };
    let [Stmt::Call { copy_in, .. }] = &ig[..] else {
        panic!("{ig:#?}")
    };
    assert!(
        matches!(&copy_in[..], [Stmt::Assign(_, _, Expr::Const(42, _))]),
        "{copy_in:#?}"
    );
}

#[test]
fn a_numeric_signed_flag_is_read_as_bmv2_reads_it() {
    // p4c writes `["f", 1, 0]` for bool fields; BMv2 reads the flag with jsoncpp's asBool.
    let mut d = doc(json!([]), json!([]), Value::Null);
    d["header_types"][0]["fields"][0] = json!(["a", 8, 0]);
    d["header_types"][0]["fields"][2] = json!(["s", 8, 1]);
    let p = load_value(&d).unwrap();
    let h = p.headers.iter().find(|h| h.name == "h_t").unwrap();
    assert!(!h.fields[0].ty.signed && h.fields[2].ty.signed);
}

/// p4c turns `switch (value) { ... }` into a table `switch_0_table` keyed on the value, with
/// actions `switch_0_case*`; p4c's P4Info hides them (the tutorials' flowcache has one), so the
/// IR marks them `@hidden`. A table the program declares (control-qualified) stays visible.
#[test]
fn p4cs_tables_for_switch_statements_are_hidden() {
    let a = json!([
        {"name": "switch_0_case", "id": 0, "runtime_data": [], "primitives": []},
        {"name": "switch_0_case_0", "id": 1, "runtime_data": [], "primitives": []},
        {"name": "ig.set", "id": 2, "runtime_data": [], "primitives": []}
    ]);
    let t = json!([
        {"name": "switch_0_table", "id": 0, "key": [{"match_type": "exact", "target": ["h", "a"], "mask": null}],
         "type": "simple", "max_size": 1, "action_ids": [0, 1], "actions": ["switch_0_case", "switch_0_case_0"],
         "next_tables": {"switch_0_case": "ig.t", "switch_0_case_0": null},
         "default_entry": {"action_id": 1, "action_const": true, "action_data": [], "action_entry_const": true},
         "entries": [{"match_key": [{"match_type": "exact", "key": "0x01"}],
                      "action_entry": {"action_id": 0, "action_data": []}, "priority": 1}]},
        {"name": "ig.t", "id": 1, "key": [{"match_type": "exact", "target": ["h", "b"], "mask": null}],
         "type": "simple", "max_size": 16, "action_ids": [2], "actions": ["ig.set"],
         "next_tables": {"ig.set": null},
         "default_entry": {"action_id": 2, "action_const": false, "action_data": [], "action_entry_const": false}}
    ]);
    let p = load_value(&doc(a, t, json!("switch_0_table"))).unwrap();
    let hidden = |anns: &[control_plane::Annotation]| anns.iter().any(|x| x.name == "hidden");
    let table = |n: &str| p.tables.iter().find(|t| t.name == n).unwrap();
    assert!(hidden(&table("switch_0_table").annotations));
    assert!(!hidden(&table("ig.t").annotations));
    for t in &p.tables {
        for a in &t.actions {
            let f = &p.functions[a.func as usize];
            assert_eq!(
                hidden(&f.annotations),
                a.name.starts_with("switch_0_case"),
                "{}",
                a.name
            );
        }
    }
}
