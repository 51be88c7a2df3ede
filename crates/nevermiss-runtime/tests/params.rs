//! Action parameters as each engine reads them from a matched entry: the compiled engine's lean
//! apply unpacks them from the entry's packed bytes itself (one 8-byte load per parameter,
//! docs/jit.md), the interpreter through the runtime's plan. Entries whose parameter block is
//! shorter than the action's (the table API allows it; a parameter not wholly present reads 0), exactly as
//! long, and 40 bytes long (kept on the heap by the table) give the same packets on both, and
//! the values the program copies into the packet are the entry's.

mod common;

use nevermiss_runtime::{Engine, Switch, Worker};
use nevermiss_tables::{ActionData, FieldMatch};
use std::path::PathBuf;
use std::sync::Arc;

fn setup(engine: Engine) -> Arc<Switch> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/p4/params.p4");
    let sw = common::switch(&path, engine).unwrap_or_else(|e| panic!("{e}"));
    let prog = sw.prog().clone();
    let (tid, td) = prog
        .tables
        .iter()
        .enumerate()
        .find(|(_, t)| t.name.ends_with(".t"))
        .expect("table t");
    let action = |name: &str| {
        td.actions
            .iter()
            .position(|a| a.name.ends_with(name))
            .expect("action") as u32
    };
    let t = sw.table(tid as u32).expect("table t at runtime");
    let wide: Vec<u8> = (1..=40).collect();
    let entries: [(u32, u32, Vec<u8>); 5] = [
        (
            1,
            action("small"),
            vec![0x12, 0x34, 0xde, 0xad, 0xbe, 0xef, 0x77],
        ),
        (2, action("small"), vec![0x12, 0x34]),
        (3, action("small"), vec![]),
        (4, action("wide"), wide.clone()),
        (5, action("wide"), wide[..13].to_vec()),
    ];
    for (key, a, params) in entries {
        t.insert(
            &[FieldMatch::Exact(key.to_be_bytes().to_vec())],
            0,
            ActionData::new(a, params.as_slice()),
        )
        .unwrap_or_else(|e| panic!("insert {key}: {e:?}"));
    }
    sw
}

/// The packet for `key`, every other field 0xaa.
fn packet(key: u32) -> Vec<u8> {
    let mut p = key.to_be_bytes().to_vec();
    p.resize(4 + 2 + 4 + 1 + 40, 0xaa);
    p
}

fn run(sw: &Arc<Switch>) -> Vec<Vec<(u32, Vec<u8>)>> {
    let mut w = Worker::new(sw.clone(), 0);
    (1..=6)
        .map(|k| w.process(&packet(k), 0, 0).as_slice().to_vec())
        .collect()
}

#[test]
fn both_engines_read_every_parameter_of_the_entry() {
    let jit = run(&setup(Engine::Jit));
    let interp = run(&setup(Engine::Interp));
    assert_eq!(jit, interp, "the engines disagree");
    let out = |k: usize| -> &(u32, Vec<u8>) {
        assert_eq!(jit[k].len(), 1, "one packet out for key {}", k + 1);
        &jit[k][0]
    };
    // small(a, b, c) writes bytes 4..11; a missing parameter reads 0.
    assert_eq!(out(0).0, 1);
    assert_eq!(out(0).1[4..11], [0x12, 0x34, 0xde, 0xad, 0xbe, 0xef, 0x77]);
    assert_eq!(out(1).1[4..11], [0x12, 0x34, 0, 0, 0, 0, 0]);
    assert_eq!(out(2).1[4..11], [0; 7]);
    // wide(p0..p4) writes bytes 11..51 and leaves small's fields alone.
    assert_eq!(out(3).0, 2);
    assert_eq!(out(3).1[11..51], (1..=40).collect::<Vec<u8>>()[..]);
    assert_eq!(out(3).1[4..11], [0xaa; 7]);
    // 13 bytes: p0 whole, p1 only in part, which reads 0 as a missing one does.
    let mut short = (1..=8).collect::<Vec<u8>>();
    short.resize(40, 0);
    assert_eq!(out(4).1[11..51], short[..]);
    // No entry: the default action.
    assert_eq!(out(5).0, 3);
    assert_eq!(out(5).1, packet(6));
}
