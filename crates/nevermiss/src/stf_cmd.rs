//! `nevermiss stf prog.p4 test.stf`: runs a p4c STF test against the program.
//!
//! The test file may carry the options it needs in `# nevermiss-options: FLAGS` header lines
//! (docs/runtime.md); flags on the command line come after them.
//!
//! Exit codes: 0 the test passed; 1 it failed (the first mismatch, or the command that could
//! not be applied, is printed); 2 bad usage, an unreadable file, a test with a syntax error
//! (`file:line:col`), or a program that does not compile or cannot run.

use crate::flags::{SourceArgs, StfHeader, SwitchArgs};
use clap::Args;
use nevermiss_runtime::{stf::run_stf, Switch};
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
    let prog = source.load(&args.program)?;
    let config = header
        .switch
        .then(&args.switch)
        .config(&prog, &args.program)?;
    let sw = Switch::new(prog, config).map_err(|e| format!("{}: {e}", args.program.display()))?;
    match run_stf(Arc::new(sw), &text) {
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
