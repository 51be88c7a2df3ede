//! `nevermiss run prog.p4 --port N=pcap:IN[,OUT] --port N=gen:two-phase,... [--entries FILE]`:
//! runs a program over packet ports and prints what happened (per port: packets in, out,
//! dropped; per table: hits, misses, inserts, failed inserts, updates, expirations; packets
//! per second).
//!
//! Exit codes: 0 the run completed; 2 bad usage, an unreadable file, a program that does not
//! compile, or an entries file naming an unknown table, action, field or parameter.

use crate::flags::{self, SourceArgs, SwitchArgs};
use clap::{Args, ValueEnum};
use nevermiss_io::port::parse_port_specs;
use nevermiss_io::Rss;
use nevermiss_io::{parse_stf, StfCommand};
use nevermiss_runtime::control::ControlPlane;
use nevermiss_runtime::run::{run as run_loop, Clock, RunOptions};
use nevermiss_runtime::workers::{available_cpus, run_parallel, ParallelOptions};
use nevermiss_runtime::{Config, Switch};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

#[derive(Args)]
pub struct RunArgs {
    /// The P4_16 program.
    pub program: PathBuf,
    /// A port: N=pcap:IN[,OUT], N=pcap:,OUT, N=gen:two-phase,KEY=VALUE,... or N=null (repeatable).
    #[arg(long = "port", value_name = "SPEC")]
    pub ports: Vec<String>,
    /// Table entries and other control-plane commands, in STF syntax (add, setdefault,
    /// mirroring_add, mc_*, register_write, meter_set_rates).
    #[arg(long, value_name = "FILE")]
    pub entries: Vec<PathBuf>,
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub switch: SwitchArgs,
    /// Packets per batch (1 to 256).
    #[arg(long, default_value = "32", value_parser = flags::batch)]
    pub batch: usize,
    /// Where packet time comes from.
    #[arg(long, value_enum, default_value_t = ClockArg::Wall)]
    pub clock: ClockArg,
    /// Print statistics to stderr this often while running (e.g. 1s, 500ms).
    #[arg(long, value_name = "DURATION", value_parser = flags::duration_ns)]
    pub stats_every: Option<u64>,
    /// Stop after this many received packets.
    #[arg(long, value_name = "N", value_parser = flags::count)]
    pub max_packets: Option<u64>,
    /// Worker threads, each pinned to its own CPU; packets are spread over them by `--rss`.
    /// The inputs are read into memory first and the time covers processing only (without
    /// --cores: one loop on this thread that reads while it runs).
    #[arg(long, value_name = "N", value_parser = flags::count_usize)]
    pub cores: Option<usize>,
    /// Header fields that spread packets over workers, like a NIC's RSS: `default` (IPv4/IPv6
    /// addresses and L4 ports) or a list of eth.dst, eth.src, eth.type, ipv4.src, ipv4.dst,
    /// ipv4.proto, ipv6.src, ipv6.dst, l4.src, l4.dst, @OFFSET:LEN.
    #[arg(long, default_value = "default", value_name = "FIELDS")]
    pub rss: String,
    /// How many exact tables per packet a batch prefetches after parsing (0 = off; PNA).
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub prefetch_tables: usize,
    /// Do not pin workers to CPUs (allows more workers than CPUs).
    #[arg(long)]
    pub no_pin: bool,
    /// Print the program's IR and exit.
    #[arg(long)]
    pub dump_ir: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ClockArg {
    /// Monotonic time since the start.
    Wall,
    /// The packets' timestamps (pcap capture times, generator times).
    Packet,
}

/// Applies the control-plane commands of an entries file.
pub fn apply_entries(sw: &Switch, path: &std::path::Path) -> Result<usize, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let stmts = parse_stf(&text)
        .map_err(|e| format!("{}:{}:{}: {}", path.display(), e.line, e.col, e.message))?;
    let mut cp = ControlPlane::new(sw);
    let mut n = 0;
    for st in &stmts {
        match &st.command {
            StfCommand::Packet { .. }
            | StfCommand::Expect { .. }
            | StfCommand::CheckCounter { .. } => {
                return Err(format!(
                    "{}:{}: only control-plane commands are allowed in an entries file",
                    path.display(),
                    st.line
                ))
            }
            cmd => cp
                .apply(cmd)
                .map_err(|e| format!("{}:{}: {e}", path.display(), st.line))?,
        }
        n += 1;
    }
    Ok(n)
}

pub fn run(args: RunArgs) -> u8 {
    crate::usage_result(run_inner(args))
}

fn run_inner(args: RunArgs) -> Result<(), String> {
    let prog = args.source.load(&args.program)?;
    if args.dump_ir {
        out!("{}", p4_ir::dump::dump(&prog));
        return Ok(());
    }
    let cpus = available_cpus().len();
    if let Some(n) = args.cores.filter(|n| !args.no_pin && *n > cpus) {
        return Err(format!(
            "--cores {n}: only {cpus} cpus available to pin workers to (--no-pin allows more)"
        ));
    }
    if args.cores.is_none() {
        // Flags of the multi-core path are an error without it, never silently ignored.
        if args.rss != "default" {
            return Err("--rss spreads packets over workers: it needs --cores".into());
        }
        if args.no_pin {
            return Err("--no-pin is about the workers of --cores: it needs --cores".into());
        }
    }
    let rss = Rss::parse(&args.rss).map_err(|e| format!("--rss: {e}"))?;
    let specs = parse_port_specs(&args.ports).map_err(|e| e.to_string())?;
    if specs.is_empty() {
        return Err(
            "no ports: give at least one --port N=pcap:IN,OUT or N=gen:two-phase,...".into(),
        );
    }
    let config = Config {
        prefetch_tables: args.prefetch_tables,
        ..args.switch.config(&prog, &args.program)?
    };
    let sw = Arc::new(
        Switch::new(prog, config).map_err(|e| format!("{}: {e}", args.program.display()))?,
    );
    for e in &args.entries {
        apply_entries(&sw, e)?;
    }
    let mut ports = Vec::with_capacity(specs.len());
    for s in &specs {
        ports.push(s.open().map_err(|e| e.to_string())?);
    }
    let ropts = RunOptions {
        batch: args.batch,
        clock: match args.clock {
            ClockArg::Wall => Clock::Wall,
            ClockArg::Packet => Clock::Packet,
        },
        stats_every: args.stats_every.map(Duration::from_nanos),
        max_packets: args.max_packets,
        stop: None,
    };
    let report = match args.cores {
        None => run_loop(sw.clone(), ports, &ropts)?,
        Some(cores) => {
            let par = ParallelOptions {
                cores,
                rss,
                pin: !args.no_pin,
                ..ParallelOptions::default()
            };
            run_parallel(sw.clone(), ports, &ropts, &par)?
        }
    };
    out!("{}", report.render());
    let notes = sw.pending_notifications();
    if notes > 0 {
        outln!("idle-timeout notifications for the control plane: {notes}");
    }
    match report.error {
        // Everything before the damage was processed and written; the error comes last.
        Some(e) => Err(format!("{e} (the run stopped there)")),
        None => Ok(()),
    }
}
