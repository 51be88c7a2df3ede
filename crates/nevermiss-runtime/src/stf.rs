//! The STF test runner (p4c's format, `shared/reference/conformance.md`): commands run in
//! order — packets are processed to completion when they are read, so table changes apply to
//! the packets after them — and at the end every port's output is compared with its
//! `expect` lines.

use crate::control::ControlPlane;
use crate::state::Switch;
use crate::worker::Worker;
use nevermiss_io::{parse_stf, Expectations, StfCommand};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// Why a test did not pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StfFailure {
    /// The STF file could not be read or parsed, or a command could not be applied (unknown
    /// table, action, field, parameter, ...). `line` is 1-based (0 when unknown).
    Setup {
        /// The command's line in the STF file, from 1 (0 when unknown).
        line: u32,
        /// What was wrong with it.
        message: String,
    },
    /// The output differs from the expectations (the first difference).
    Mismatch(String),
}

impl fmt::Display for StfFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StfFailure::Setup { line, message } if *line > 0 => write!(f, "line {line}: {message}"),
            StfFailure::Setup { message, .. } => f.write_str(message),
            StfFailure::Mismatch(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for StfFailure {}

/// What a passing test did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StfReport {
    /// `packet` commands sent into the switch.
    pub packets_in: usize,
    /// Packets the switch sent.
    pub packets_out: usize,
    /// `expect` commands, all met.
    pub expectations: usize,
}

/// Runs an STF test (its text) against a switch.
pub fn run_stf(sw: Arc<Switch>, text: &str) -> Result<StfReport, StfFailure> {
    record_stf(sw, text).verdict
}

/// What an STF run did: the packets each port sent, in order (up to the command that could
/// not be applied, if one could not), and the test's verdict.
#[derive(Clone, Debug)]
pub struct StfRun {
    /// Per port, the packets it sent, in order.
    pub outputs: BTreeMap<u32, Vec<Vec<u8>>>,
    /// The report of a passing test, or why it failed.
    pub verdict: Result<StfReport, StfFailure>,
}

/// Runs an STF test and keeps what it sent (to compare two programs on one test).
pub fn record_stf(sw: Arc<Switch>, text: &str) -> StfRun {
    let mut outputs: BTreeMap<u32, Vec<Vec<u8>>> = BTreeMap::new();
    let verdict = stf_into(sw, text, &mut outputs);
    StfRun { outputs, verdict }
}

fn stf_into(
    sw: Arc<Switch>,
    text: &str,
    outputs: &mut BTreeMap<u32, Vec<Vec<u8>>>,
) -> Result<StfReport, StfFailure> {
    let stmts = parse_stf(text).map_err(|e| StfFailure::Setup {
        line: e.line,
        message: format!("column {}: {}", e.col, e.message),
    })?;
    let mut worker = Worker::new(sw.clone(), 0);
    let mut cp = ControlPlane::new(&sw);
    let mut report = StfReport::default();
    let mut now = 1_000u64;
    for st in &stmts {
        match &st.command {
            StfCommand::Packet { port, data } => {
                // The control plane is at rest between STF commands: tables run their
                // specialised code (`spec.rs`).
                sw.specialise_now();
                report.packets_in += 1;
                now += 1_000;
                let outs = worker.process(data, *port, now);
                for (p, d) in outs.as_slice() {
                    outputs.entry(*p).or_default().push(d.clone());
                    report.packets_out += 1;
                }
            }
            StfCommand::Expect { .. } => report.expectations += 1,
            cmd => cp.apply(cmd).map_err(|e| StfFailure::Setup {
                line: st.line,
                message: e.to_string(),
            })?,
        }
    }
    let exp = Expectations::from_statements(&stmts);
    exp.check(outputs)
        .map_err(|m| StfFailure::Mismatch(m.to_string()))?;
    Ok(report)
}
