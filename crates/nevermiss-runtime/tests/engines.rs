//! The compiled engine against the interpreter (docs/jit.md): every example and every program of
//! tests/stf/ runs the same random and mutated packets, after the same random table entries, under
//! both engines; output packets, ports, table operations, table contents (data-plane inserts
//! included), counters, registers and digests must be identical byte for byte.

mod common;

use common::{pkt, random_entries, state};
use nevermiss_runtime::{stf::run_stf, Engine, Switch, Worker};
use proptest::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every program under test, with the STF file whose table entries it starts from: the
/// examples, tests/stf/, and the BMv2 JSON of examples in tests/bmv2-json/ (with their
/// example's STF file).
fn programs() -> &'static Vec<(PathBuf, String)> {
    static P: OnceLock<Vec<(PathBuf, String)>> = OnceLock::new();
    P.get_or_init(|| {
        let mut out = Vec::new();
        for (dir, ext) in [
            ("examples", "p4"),
            ("tests/stf", "p4"),
            ("tests/bmv2-json", "json"),
        ] {
            let mut files: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|x| x == ext))
                .collect();
            files.sort();
            for p in files {
                let stf = if ext == "json" {
                    common::json_fixture_source(&p).with_extension("stf")
                } else {
                    p.with_extension("stf")
                };
                out.push((
                    p,
                    common::setup_of(&std::fs::read_to_string(&stf).unwrap_or_default()),
                ));
            }
        }
        assert!(out.len() >= 10, "{out:?}");
        out
    })
}

fn switch(path: &Path, engine: Engine) -> Arc<Switch> {
    common::switch(path, engine).unwrap_or_else(|e| panic!("{e}"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn both_engines_agree_on_every_program(
        pkts in proptest::collection::vec(pkt(), 1..24),
        seed in any::<u64>(),
    ) {
        for (path, setup) in programs() {
            let jit = switch(path, Engine::Jit);
            let interp = switch(path, Engine::Interp);
            prop_assert_eq!(jit.engine(), Engine::Jit);
            let entries = random_entries(jit.prog(), seed);
            for sw in [&jit, &interp] {
                // Entries a program refuses are refused by both (same control plane).
                let _ = run_stf(sw.clone(), setup);
                let _ = run_stf(sw.clone(), &entries);
            }
            let mut wj = Worker::new(jit.clone(), 3);
            let mut wi = Worker::new(interp.clone(), 3);
            for (i, (p, port)) in pkts.iter().enumerate() {
                let data = p.bytes();
                let now = 1_000 * i as u64;
                let oj = wj.process(&data, *port, now).as_slice().to_vec();
                let ops_j = wj.last_ops();
                let oi = wi.process(&data, *port, now).as_slice().to_vec();
                prop_assert_eq!(&oj, &oi, "{}: packet {} {:02x?}", path.display(), i, data);
                prop_assert_eq!(ops_j, wi.last_ops(), "{}: packet {}", path.display(), i);
            }
            prop_assert_eq!(state(&jit), state(&interp), "{}", path.display());
        }
    }
}
