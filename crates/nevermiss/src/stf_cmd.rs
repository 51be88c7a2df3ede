//! `nevermiss stf prog.p4 test.stf`: runs a p4c STF test against the program.
//!
//! The test file may carry the options it needs in `# nevermiss-options: FLAGS` header lines
//! (docs/runtime.md); flags on the command line come after them.
//!
//! Exit codes: 0 the test passed; 1 it failed (the first mismatch, or the command that could
//! not be applied, is printed); 2 bad usage, an unreadable file, a test with a syntax error
//! (`file:line:col`), or a program that does not compile or cannot run.
//!
//! `--against OTHER` runs the test on a second form of the program too (the BMv2 JSON
//! p4c-bm2-ss made of it, say) and compares what the two sent: exit 0 when every port got the
//! same packets and both reached the same verdict, 1 with the first difference otherwise.

use crate::flags::{SourceArgs, StfHeader, SwitchArgs};
use clap::Args;
use nevermiss_runtime::stf::{record_stf, run_stf, StfRun};
use nevermiss_runtime::Switch;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Args)]
pub struct StfArgs {
    /// The P4_16 program.
    pub program: PathBuf,
    /// The STF test.
    pub test: PathBuf,
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub switch: SwitchArgs,
    /// Print what the test did when it passes.
    #[arg(long)]
    pub verbose: bool,
    /// Also run the test on this form of the program (P4 source or BMv2 JSON) and compare the
    /// packets both send and their verdicts.
    #[arg(long, value_name = "PROGRAM")]
    pub against: Option<PathBuf>,
}

pub fn run(args: StfArgs) -> u8 {
    match run_inner(&args) {
        Ok(code) => code,
        Err(e) => crate::usage_result(Err(e)),
    }
}

fn run_inner(args: &StfArgs) -> Result<u8, String> {
    let text =
        std::fs::read_to_string(&args.test).map_err(|e| format!("{}: {e}", args.test.display()))?;
    // A test that does not parse is one that cannot be read (exit 2), not one that failed.
    nevermiss_io::parse_stf(&text).map_err(|e| {
        format!(
            "{}:{}:{}: {}",
            args.test.display(),
            e.line,
            e.col,
            e.message
        )
    })?;
    let header = StfHeader::of(&text, &args.test)?;
    let source = SourceArgs {
        include: [&header.source.include[..], &args.source.include[..]].concat(),
        define: [&header.source.define[..], &args.source.define[..]].concat(),
    };
    let build = |path: &PathBuf| -> Result<Arc<Switch>, String> {
        let prog = source.load(path)?;
        let config = header.switch.then(&args.switch).config(&prog, path)?;
        Switch::new(prog, config)
            .map(Arc::new)
            .map_err(|e| format!("{}: {e}", path.display()))
    };
    let sw = build(&args.program)?;
    if let Some(other) = &args.against {
        let sw2 = build(other)?;
        let (a, b) = (record_stf(sw, &text), record_stf(sw2, &text));
        return Ok(match compare(&a, &b) {
            None => {
                if args.verbose {
                    let n: usize = a.outputs.values().map(Vec::len).sum();
                    outln!("agree: {n} packets out, verdict {}", verdict(&a));
                }
                0
            }
            Some(d) => {
                outln!(
                    "DIFFER {} ({} vs {}): {d}",
                    args.test.display(),
                    args.program.display(),
                    other.display()
                );
                1
            }
        });
    }
    match run_stf(sw, &text) {
        Ok(r) => {
            if args.verbose {
                outln!(
                    "pass: {} packets in, {} out, {} expectations",
                    r.packets_in,
                    r.packets_out,
                    r.expectations
                );
            }
            Ok(0)
        }
        Err(e) => {
            outln!("FAIL {}: {e}", args.test.display());
            Ok(1)
        }
    }
}

/// A verdict in words.
fn verdict(r: &StfRun) -> String {
    match &r.verdict {
        Ok(_) => "pass".into(),
        Err(e) => format!("fail ({e})"),
    }
}

/// The first difference between two runs of one test, if any: per port, the packets in order;
/// then the verdicts.
fn compare(a: &StfRun, b: &StfRun) -> Option<String> {
    let ports: std::collections::BTreeSet<u32> =
        a.outputs.keys().chain(b.outputs.keys()).copied().collect();
    for p in ports {
        let (x, y) = (
            a.outputs.get(&p).map_or(&[][..], Vec::as_slice),
            b.outputs.get(&p).map_or(&[][..], Vec::as_slice),
        );
        for (k, (u, v)) in x.iter().zip(y).enumerate() {
            if u != v {
                return Some(format!(
                    "port {p} packet {}: {} vs {}",
                    k + 1,
                    hex(u),
                    hex(v)
                ));
            }
        }
        if x.len() != y.len() {
            return Some(format!("port {p}: {} packets vs {}", x.len(), y.len()));
        }
    }
    let (va, vb) = (verdict(a), verdict(b));
    (va != vb).then(|| format!("verdicts differ: {va} vs {vb}"))
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
