//! The BMv2 JSON front end against the P4 front end (docs/bmv2-json.md): every BMv2 JSON in
//! tests/bmv2-json/ is an example or an STF regression program (tests/stf/) in BMv2's format;
//! loaded from JSON it must pass the source's STF test, send what the P4 source sends on it,
//! and — after the same random table entries, on the same random and mutated packets — send
//! the same packets and leave the same counters, registers, digests and entries in the tables
//! both have (the JSON's compiler-made tables, such as p4c's `tbl_*` for direct action calls,
//! have no twin in the source).

mod common;

use common::{pkt, random_entries, state};
use nevermiss_runtime::stf::{record_stf, run_stf};
use nevermiss_runtime::{Engine, Switch, Worker};
use proptest::prelude::*;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Each fixture: (JSON, its P4 source, the source's STF text).
fn fixtures() -> &'static Vec<(PathBuf, PathBuf, String)> {
    static F: OnceLock<Vec<(PathBuf, PathBuf, String)>> = OnceLock::new();
    F.get_or_init(|| {
        let mut out = Vec::new();
        for e in std::fs::read_dir(root().join("tests/bmv2-json")).unwrap() {
            let json = e.unwrap().path();
            if json.extension().is_none_or(|x| x != "json") {
                continue;
            }
            let p4 = common::json_fixture_source(&json);
            let stf = std::fs::read_to_string(p4.with_extension("stf"))
                .unwrap_or_else(|e| panic!("{}: the source's STF: {e}", json.display()));
            out.push((json, p4, stf));
        }
        out.sort();
        assert!(!out.is_empty());
        out
    })
}

fn switch(path: &std::path::Path, engine: Engine) -> Arc<Switch> {
    common::switch(path, engine).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn json_passes_the_examples_stf_and_sends_what_the_source_sends() {
    for (json, p4, stf) in fixtures() {
        for engine in [Engine::Jit, Engine::Interp] {
            let a = record_stf(switch(json, engine), stf);
            let b = record_stf(switch(p4, engine), stf);
            assert!(a.verdict.is_ok(), "{}: {:?}", json.display(), a.verdict);
            assert_eq!(a.outputs, b.outputs, "{}", json.display());
        }
        // Generated code runs the JSON program (no fallback to the interpreter).
        assert_eq!(switch(json, Engine::Jit).engine(), Engine::Jit);
    }
}

#[test]
fn a_wrong_json_is_told_apart() {
    // The comparison is not vacuous: the router's JSON whose set_next_hop takes 2 from the
    // TTL (`(ttl + 0xfe) & 0xff`) instead of 1 fails the example's test and sends differently
    // from the source.
    let (json, p4, stf) = fixtures()
        .iter()
        .find(|f| f.0.ends_with("v1model-router.json"))
        .expect("the router's JSON");
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap();
    let action = v["actions"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|a| a["name"] == "IngressImpl.set_next_hop")
        .unwrap();
    let sum = &mut action["primitives"][2]["parameters"][1]["value"]["value"]["left"]["value"];
    assert_eq!(sum["op"], "+");
    sum["right"]["value"] = "0xfe".into();
    let wrong = std::env::temp_dir().join(format!("nevermiss-wrong-{}.json", std::process::id()));
    std::fs::write(&wrong, serde_json::to_vec(&v).unwrap()).unwrap();
    let a = record_stf(switch(&wrong, Engine::Jit), stf);
    let _ = std::fs::remove_file(&wrong);
    let b = record_stf(switch(p4, Engine::Jit), stf);
    assert!(a.verdict.is_err());
    assert_ne!(a.outputs, b.outputs);
}

/// The lines of `state` about objects both programs have.
fn shared_state(a: &Switch, b: &Switch) -> (Vec<String>, Vec<String>) {
    let names = |sw: &Switch| -> Vec<String> {
        let p = sw.prog();
        p.tables
            .iter()
            .map(|t| t.name.clone())
            .chain(p.externs.iter().map(|x| x.name.clone()))
            .collect()
    };
    let (na, nb) = (names(a), names(b));
    let keep = |line: &String, others: &[String]| {
        let Some(rest) = line.split_once(' ').map(|x| x.1) else {
            return true;
        };
        let obj = rest.split(':').next().unwrap_or("");
        line.starts_with("digests") || others.iter().any(|n| n == obj)
    };
    (
        state(a).into_iter().filter(|l| keep(l, &nb)).collect(),
        state(b).into_iter().filter(|l| keep(l, &na)).collect(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn json_and_source_agree_on_random_entries_and_packets(
        pkts in proptest::collection::vec(pkt(), 1..24),
        seed in any::<u64>(),
    ) {
        for (json, p4, stf) in fixtures() {
            let from_json = switch(json, Engine::Jit);
            let from_p4 = switch(p4, Engine::Jit);
            let setup = common::setup_of(stf);
            let entries = random_entries(from_p4.prog(), seed);
            for sw in [&from_json, &from_p4] {
                let _ = run_stf(sw.clone(), &setup);
                let _ = run_stf(sw.clone(), &entries);
            }
            let mut wj = Worker::new(from_json.clone(), 3);
            let mut wp = Worker::new(from_p4.clone(), 3);
            for (i, (p, port)) in pkts.iter().enumerate() {
                let data = p.bytes();
                let now = 1_000 * i as u64;
                let oj = wj.process(&data, *port, now).as_slice().to_vec();
                let op = wp.process(&data, *port, now).as_slice().to_vec();
                prop_assert_eq!(&oj, &op, "{}: packet {} {:02x?}", json.display(), i, data);
            }
            let (sj, sp) = shared_state(&from_json, &from_p4);
            prop_assert_eq!(sj, sp, "{}", json.display());
        }
    }
}

#[test]
fn errors_numbered_from_one_are_seen_with_the_jsons_values() {
    // Older p4c builds numbered core.p4's errors from 1 (NoError 1, PacketTooShort 2): the
    // program compares `parser_error` with those values, so it must see them. Ingress sends a
    // packet whose parser_error is PacketTooShort (2) to port 2, NoError (1) to port 1, anything
    // else (0 included) to port 3.
    let f = |h: &str, n: &str| serde_json::json!({"type": "field", "value": [h, n]});
    let eq = |v: &str| {
        serde_json::json!({"type": "expression", "value": {"op": "==",
        "left": f("standard_metadata", "parser_error"), "right": {"type": "hexstr", "value": v}}})
    };
    let set = |id: i64, port: &str| {
        serde_json::json!({"name": format!("to{id}"), "id": id,
        "runtime_data": [], "primitives": [{"op": "assign", "parameters": [
            f("standard_metadata", "egress_spec"), {"type": "hexstr", "value": port}]}]})
    };
    let tbl = |name: &str, id: i64| {
        serde_json::json!({"name": name, "id": 0, "key": [],
        "type": "simple", "max_size": 1, "action_ids": [id], "actions": [format!("to{id}")],
        "next_tables": {format!("to{id}"): null},
        "default_entry": {"action_id": id, "action_const": true, "action_data": [], "action_entry_const": true}})
    };
    let doc = serde_json::json!({
        "header_types": [
            {"name": "h_t", "id": 0, "fields": [["a", 32, false]]},
            {"name": "standard_metadata", "id": 1, "fields": [["ingress_port", 9, false], ["egress_spec", 9, false], ["egress_port", 9, false], ["instance_type", 32, false], ["packet_length", 32, false], ["parser_error", 32, false]]}
        ],
        "headers": [
            {"name": "standard_metadata", "id": 0, "header_type": "standard_metadata", "metadata": true},
            {"name": "h", "id": 1, "header_type": "h_t", "metadata": false}
        ],
        "errors": [["NoError", 1], ["PacketTooShort", 2], ["NoMatch", 3], ["StackOutOfBounds", 4], ["HeaderTooShort", 5], ["ParserTimeout", 6]],
        "parsers": [{"name": "parser", "id": 0, "init_state": "start", "parse_states": [
            {"name": "start", "id": 0, "parser_ops": [{"op": "extract", "parameters": [{"type": "regular", "value": "h"}]}],
             "transition_key": [], "transitions": [{"type": "default", "value": null, "mask": null, "next_state": null}]}]}],
        "deparsers": [{"name": "deparser", "id": 0, "order": ["h"], "primitives": []}],
        "actions": [set(1, "0x1"), set(2, "0x2"), set(3, "0x3")],
        "pipelines": [
            {"name": "ingress", "id": 0, "init_table": "c1", "action_profiles": [],
             "tables": [tbl("t1", 1), tbl("t2", 2), tbl("t3", 3)],
             "conditionals": [
                {"name": "c1", "id": 0, "expression": eq("0x02"), "true_next": "t2", "false_next": "c2"},
                {"name": "c2", "id": 1, "expression": eq("0x01"), "true_next": "t1", "false_next": "t3"}]},
            {"name": "egress", "id": 1, "init_table": null, "tables": [], "conditionals": [], "action_profiles": []}
        ]
    });
    let path = std::env::temp_dir().join(format!("nevermiss-errors-{}.json", std::process::id()));
    std::fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
    let sw = switch(&path, Engine::Jit);
    let _ = std::fs::remove_file(&path);
    let mut w = Worker::new(sw, 0);
    let short = w.process(&[1, 2], 0, 1).as_slice().to_vec();
    assert_eq!(
        short.iter().map(|o| o.0).collect::<Vec<_>>(),
        vec![2],
        "{short:?}"
    );
    let ok = w.process(&[1, 2, 3, 4, 5], 0, 2).as_slice().to_vec();
    assert_eq!(
        ok.iter().map(|o| o.0).collect::<Vec<_>>(),
        vec![1],
        "{ok:?}"
    );
}
