//! Every example under examples/ passes its STF test.

use nevermiss_runtime::{build, stf::run_stf, Config};
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn run_example(name: &str) {
    let p4 = root().join("examples").join(format!("{name}.p4"));
    let stf = root().join("examples").join(format!("{name}.stf"));
    let sw = build(&p4, &Default::default(), Config::default()).unwrap_or_else(|e| panic!("{e}"));
    let text = std::fs::read_to_string(&stf).unwrap();
    if let Err(e) = run_stf(sw, &text) {
        panic!("{}: {e}", stf.display());
    }
}

#[test]
fn pna_add_on_miss() {
    run_example("pna-add-on-miss");
}
