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
mod child;
mod completions_cmd;
mod conformance_cmd;
mod ctl_cmd;
mod flags;
mod gen_cmd;
mod man_cmd;
mod p4info_cmd;
mod program;
mod run_cmd;
mod serve_cmd;
mod sim_cmd;
mod simple_switch_cmd;
mod stf_cmd;
mod testgen;

/// Exit code of a command that either completes or fails with a message: 0, or the message on
/// stderr (prefixed `error: ` unless it already carries diagnostics) and 2.
pub(crate) fn usage_result(r: Result<(), String>) -> u8 {
    match r {
        Ok(()) => 0,
        Err(e) => {
            let e = e.trim_end();
            if carries_diagnostics(e) {
                eprintln!("{e}");
            } else {
                eprintln!("error: {e}");
            }
            2
        }
    }
}

/// Whether a message already holds rendered diagnostics (`file:line:col: error: ...`,
/// `file: error: ...` or `error: ...` at the start of a line), which get no second prefix; a
/// message that merely mentions an error (`i/o error: ...`) does.
fn carries_diagnostics(e: &str) -> bool {
    e.lines()
        .any(|l| l.starts_with("error:") || l.contains(": error: "))
}

#[derive(Parser)]
#[command(
    name = "nevermiss",
    version = env!("NEVERMISS_SHORT_VERSION"),
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
    /// BMv2's simple_switch_grpc command line (`-i N@IFACE ... prog.json -- --grpc-server-addr
    /// A:P --cpu-port N`), served by `serve` (docs/drop-in.md; `--help` lists the flags).
    #[command(disable_help_flag = true)]
    SimpleSwitchGrpc {
        /// BMv2's flags and the JSON program.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Run a p4c STF test against a program; exit 0 only if it passes.
    Stf(stf_cmd::StfArgs),
    /// Trace-driven simulator of data hazards in stateful hardware pipelines.
    #[command(subcommand)]
    Sim(sim_cmd::SimCommand),
    /// Print a shell's completion script for nevermiss to stdout.
    Completions(completions_cmd::CompletionsArgs),
    /// Write the man pages (nevermiss.1 and one per subcommand) into a directory.
    #[command(hide = true)]
    Man(man_cmd::ManArgs),
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
    hyphen_values(Cli::command().long_version(long_version()))
}

/// `nevermiss --version`: the exact build (commit and whether the tree had changes, rustc,
/// profile, features, engines; `build.rs`), one `key: value` per line after the version, so
/// that results can name what produced them. `-V` gives the one-line form.
pub(crate) fn long_version() -> &'static str {
    static LONG: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    LONG.get_or_init(|| env!("NEVERMISS_LONG_VERSION").replace("\\n", "\n"))
}

/// Whether the executable is called as BMv2's (`simple_switch_grpc`, `nevermiss-simple-switch-grpc`).
fn called_as_simple_switch(argv0: &std::ffi::OsStr) -> bool {
    let name = std::path::Path::new(argv0)
        .file_name()
        .map(|n| n.to_string_lossy().replace('-', "_"))
        .unwrap_or_default();
    name.contains("simple_switch_grpc")
}

/// Runs `nevermiss serve` with these arguments (the first is `serve`).
pub(crate) fn serve_from(args: &[String]) -> u8 {
    let argv = std::iter::once("nevermiss".to_string()).chain(args.iter().cloned());
    match command()
        .try_get_matches_from(argv)
        .and_then(|m| Cli::from_arg_matches(&m))
    {
        Ok(Cli {
            command: Command::Serve(a),
        }) => serve_cmd::run(a),
        Ok(_) => 2,
        Err(e) => {
            let _ = e.print();
            2
        }
    }
}

fn main() -> ExitCode {
    // BMv2's command line is parsed by hand (its `--` separates target options, which clap
    // would take as the end of the flags).
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if argv.first().is_some_and(|a| called_as_simple_switch(a)) {
        return ExitCode::from(out::exit_code(simple_switch_cmd::run(&argv[1..])));
    }
    if argv.get(1).is_some_and(|a| a == "simple-switch-grpc") {
        return ExitCode::from(out::exit_code(simple_switch_cmd::run(&argv[2..])));
    }
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
        Command::SimpleSwitchGrpc { args } => {
            let args: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
            simple_switch_cmd::run(&args)
        }
        Command::Completions(args) => completions_cmd::run(args, command()),
        Command::Man(args) => man_cmd::run(args, command()),
    };
    ExitCode::from(out::exit_code(code))
}
