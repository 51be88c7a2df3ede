//! The three programs of papers/000 §V-b/§VI and how they are built.

use crate::error::BenchError;
use nevermiss_runtime::{Config, Engine, Switch};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A benchmark scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scenario {
    /// Baseline: a forwarder that only sets the egress port (examples/bench/forward.p4).
    Forward,
    /// The two-phase add-on-miss program (examples/pna-add-on-miss.p4).
    AddOnMiss,
    /// The update variant: the hit action writes the entry (examples/pna-dataplane-update.p4).
    Update,
}

impl Scenario {
    /// Every scenario, baseline first.
    pub const ALL: [Scenario; 3] = [Scenario::Forward, Scenario::AddOnMiss, Scenario::Update];

    /// Its name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Scenario::Forward => "forward",
            Scenario::AddOnMiss => "add-on-miss",
            Scenario::Update => "update",
        }
    }

    /// Parses a name of [`Scenario::name`].
    pub fn parse(s: &str) -> Result<Scenario, BenchError> {
        Scenario::ALL
            .into_iter()
            .find(|x| x.name() == s.trim())
            .ok_or_else(|| BenchError::Unknown {
                what: "scenario",
                name: s.to_string(),
                known: "forward, add-on-miss, update",
            })
    }

    /// The program in the source tree (found from this crate's manifest directory at compile
    /// time, as p4-front finds p4include/).
    pub fn default_program(self) -> PathBuf {
        let ex = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
        match self {
            Scenario::Forward => ex.join("bench/forward.p4"),
            Scenario::AddOnMiss => ex.join("pna-add-on-miss.p4"),
            Scenario::Update => ex.join("pna-dataplane-update.p4"),
        }
    }

    /// Whether it is the baseline (no table).
    pub fn is_baseline(self) -> bool {
        self == Scenario::Forward
    }
}

/// Table size declared for a run that inserts `keys` distinct keys: room for all of them with
/// the engine's load-factor margin (inserts succeed up to ≥ 95% of the declared size,
/// docs/tables.md, so 1.125× plus 64 keeps every insert successful).
pub fn table_size_for(keys: u64) -> u64 {
    keys + keys / 8 + 64
}

/// Compiles `program` with `FLOW_TABLE_SIZE=table_size` and builds a switch whose program runs on
/// `engine`.
pub fn build_switch(
    program: &Path,
    table_size: u64,
    engine: Engine,
) -> Result<Arc<Switch>, BenchError> {
    if !program.is_file() {
        return Err(BenchError::NoSuchFile(program.to_path_buf()));
    }
    let opts = p4_front::driver::Options {
        defines: vec![("FLOW_TABLE_SIZE".into(), table_size.to_string())],
        ..Default::default()
    };
    let config = Config {
        engine,
        ..Config::default()
    };
    let prog = p4_ir::lower::source::compile_file(program, &opts)?;
    match Switch::new(prog, config) {
        Ok(sw) => Ok(Arc::new(sw)),
        Err(error) => Err(BenchError::Switch {
            path: program.to_path_buf(),
            error,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_exist_and_build() {
        for s in Scenario::ALL {
            assert_eq!(Scenario::parse(s.name()).ok(), Some(s));
            let sw = build_switch(&s.default_program(), 1024, Engine::Jit).unwrap();
            assert_eq!(sw.tables().len(), usize::from(!s.is_baseline()));
        }
        assert!(Scenario::parse("nope").is_err());
        assert!(build_switch(Path::new("/nonexistent.p4"), 8, Engine::Jit).is_err());
    }

    #[test]
    fn table_sizes() {
        assert_eq!(table_size_for(1024), 1216);
        assert!(table_size_for(1 << 20) as f64 * 0.95 >= (1 << 20) as f64);
    }
}
