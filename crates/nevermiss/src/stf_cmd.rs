//! `nevermiss stf prog.p4 test.stf`: runs a p4c STF test against the program.
//!
//! Exit codes: 0 the test passed; 1 it failed (the first mismatch, or the command that could
//! not be applied, is printed); 2 bad usage, an unreadable file, or a program that does not
//! compile or cannot run.

use crate::check_cmd::{options, ArchArg};
use clap::Args;
use nevermiss_runtime::{build, stf::run_stf, Config};
use std::path::PathBuf;

#[derive(Args)]
pub struct StfArgs {
    /// The P4_16 program.
    pub program: PathBuf,
    /// The STF test.
    pub test: PathBuf,
    /// Add a directory to the include path.
    #[arg(short = 'I', value_name = "DIR")]
    pub include: Vec<PathBuf>,
    /// Define a preprocessor macro: NAME or NAME=VALUE.
    #[arg(short = 'D', value_name = "NAME[=VAL]")]
    pub define: Vec<String>,
    /// PNA: a host-side port (repeatable); all other ports are network ports.
    #[arg(long = "host-port", value_name = "PORT")]
    pub host_ports: Vec<u32>,
    /// Print what the test did when it passes.
    #[arg(long)]
    pub verbose: bool,
}

pub fn run(args: StfArgs) -> u8 {
    let opts = match options(&args.include, &args.define, ArchArg::Auto) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    let text = match std::fs::read_to_string(&args.test) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {}: {e}", args.test.display());
            return 2;
        }
    };
    if !args.program.is_file() {
        eprintln!("error: {}: no such file", args.program.display());
        return 2;
    }
    let config = Config {
        host_ports: args.host_ports.clone(),
        ..Config::default()
    };
    let sw = match build(&args.program, &opts, config) {
        Ok(s) => s,
        Err(e) => {
            eprint!("{e}");
            if !e.ends_with('\n') {
                eprintln!();
            }
            return 2;
        }
    };
    match run_stf(sw, &text) {
        Ok(r) => {
            if args.verbose {
                outln!(
                    "pass: {} packets in, {} out, {} expectations",
                    r.packets_in, r.packets_out, r.expectations
                );
            }
            0
        }
        Err(e) => {
            outln!("FAIL {}: {e}", args.test.display());
            1
        }
    }
}
