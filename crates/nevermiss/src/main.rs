//! The `nevermiss` command. Exit codes: 0 success, 1 the check/test failed, 2 bad usage or I/O error.

/// mimalloc instead of glibc's malloc: the P4Runtime server allocates per update (protobuf
/// decoding, translation), and glibc's free/consolidate was ~20% of a batched insert's CPU time
/// (docs/p4runtime.md). The data plane does not allocate per packet.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use std::process::ExitCode;

#[macro_use]
mod out;

mod bench_cmd;
mod bmv2_diff;
mod check_cmd;
mod conformance_cmd;
mod ctl_cmd;
mod flags;
mod gen_cmd;
mod p4info_cmd;
mod run_cmd;
mod serve_cmd;
mod sim_cmd;
mod stf_cmd;
mod testgen;

/// Exit code of a command that either completes or fails with a message: 0, or the message on
/// stderr (prefixed `error: ` unless it already carries diagnostics) and 2.
pub(crate) fn usage_result(r: Result<(), String>) -> u8 {
    match r {
        Ok(()) => 0,
        Err(e) => {
            let e = e.trim_end();
            if e.contains("error:") {
                eprintln!("{e}");
            } else {
                eprintln!("error: {e}");
            }
            2
        }
    }
}

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
    /// Measure the cost of table operations (papers/000 Eq. 3, Eq. 4, Table III) on the
    /// built-in generator.
    Bench(bench_cmd::BenchArgs),
    /// Check a P4_16 program: preprocess, parse and type-check it.
    Check(check_cmd::CheckArgs),
    /// Send generated traffic (or a capture) to an interface at a rate and measure what comes
    /// back on another: loss, reordering, latency percentiles.
    Gen(gen_cmd::GenArgs),
    /// Look at a running switch over P4Runtime: tables, entries, counters, registers,
    /// multicast groups (as BMv2's simple_switch_CLI).
    Ctl(ctl_cmd::CtlArgs),
    /// Run p4c's test suites (a local checkout) through the front end and count the outcomes.
    Conformance(conformance_cmd::ConformanceArgs),
    /// Write the P4Info of a program (as p4c would) and its P4Runtime device config.
    P4info(p4info_cmd::P4InfoArgs),
    /// Run a program over packet ports (pcap files, the built-in generator) and print statistics.
    Run(run_cmd::RunArgs),
    /// Run the switch with a P4Runtime gRPC server (p4runtime-shell, finsy and other
    /// controllers drive it).
    Serve(serve_cmd::ServeArgs),
    /// Run a p4c STF test against a program; exit 0 only if it passes.
    Stf(stf_cmd::StfArgs),
    /// Trace-driven simulator of data hazards in stateful hardware pipelines.
    #[command(subcommand)]
    Sim(sim_cmd::SimCommand),
}

/// The command line as clap sees it: the word after a flag that takes a value is its value even
/// when it starts with `-` (`--zipf -1`, `--stats-every -1s`), so a bad value is an error about
/// that flag, not about an unknown argument — in every subcommand.
fn command() -> clap::Command {
    fn hyphen_values(c: clap::Command) -> clap::Command {
        c.mut_args(|a| {
            if !a.is_positional() && a.get_action().takes_values() {
                a.allow_hyphen_values(true)
            } else {
                a
            }
        })
        .mut_subcommands(hyphen_values)
    }
    hyphen_values(Cli::command())
}

fn main() -> ExitCode {
    let cli = match Cli::from_arg_matches(&command().get_matches()) {
        Ok(c) => c,
        Err(e) => e.exit(),
    };
    let code = match cli.command {
        Command::Bench(args) => bench_cmd::run(args),
        Command::Check(args) => check_cmd::run(args),
        Command::Gen(args) => gen_cmd::run(args),
        Command::Conformance(args) => conformance_cmd::run(args),
        Command::Ctl(args) => ctl_cmd::run(args),
        Command::Sim(cmd) => sim_cmd::run(cmd),
        Command::P4info(args) => p4info_cmd::run(args),
        Command::Run(args) => run_cmd::run(args),
        Command::Serve(args) => serve_cmd::run(args),
        Command::Stf(args) => stf_cmd::run(args),
    };
    ExitCode::from(out::exit_code(code))
}
