//! The `nevermiss` command. Exit codes: 0 success, 1 the check/test failed, 2 bad usage or I/O error.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

mod check_cmd;
mod conformance_cmd;
mod sim_cmd;

#[derive(Parser)]
#[command(
    name = "nevermiss",
    version,
    about = "A stateful P4 software switch and the lab that measures it"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check a P4_16 program: preprocess, parse and type-check it.
    Check(check_cmd::CheckArgs),
    /// Run p4c's test suites (a local checkout) through the front end and count the outcomes.
    Conformance(conformance_cmd::ConformanceArgs),
    /// Trace-driven simulator of data hazards in stateful hardware pipelines.
    #[command(subcommand)]
    Sim(sim_cmd::SimCommand),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Check(args) => check_cmd::run(args),
        Command::Conformance(args) => conformance_cmd::run(args),
        Command::Sim(cmd) => sim_cmd::run(cmd),
    };
    ExitCode::from(code)
}
