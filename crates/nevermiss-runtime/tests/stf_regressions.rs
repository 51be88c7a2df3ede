//! Regression tests of BMv2-equal semantics found by p4testgen-generated tests (issue 14): every
//! `tests/stf/NAME.p4` runs its `tests/stf/NAME.stf` (packets in, packets expected out). Each
//! program says in its header comment which behaviour it pins down. Both engines run them.

mod common;
use common::build;

use nevermiss_runtime::{stf::run_stf, Config, Engine};
use p4_front::driver::Options;
use std::path::PathBuf;

#[test]
fn every_stf_regression_passes() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/stf");
    let mut programs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "p4"))
        .collect();
    programs.sort();
    let mut failures = Vec::new();
    for (prog, engine) in programs
        .iter()
        .flat_map(|p| [(p, Engine::Jit), (p, Engine::Interp)])
    {
        let stf = prog.with_extension("stf");
        let text = std::fs::read_to_string(&stf)
            .unwrap_or_else(|e| panic!("{}: {e} (every program needs its .stf)", stf.display()));
        let config = Config {
            engine,
            ..Config::default()
        };
        let result = build(prog, &Options::default(), config)
            .map_err(|e| e.to_string())
            .and_then(|sw| run_stf(sw, &text).map_err(|e| e.to_string()));
        match result {
            Ok(r) => assert!(
                r.expectations > 0,
                "{}: a test without expectations cannot fail",
                stf.display()
            ),
            Err(e) => failures.push(format!("{} ({}): {e}", prog.display(), engine.name())),
        }
    }
    assert!(!programs.is_empty(), "no programs in {}", dir.display());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
