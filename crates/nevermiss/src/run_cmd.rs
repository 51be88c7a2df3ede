//! `nevermiss run prog.p4 --port N=pcap:IN[,OUT] --port N=gen:two-phase,... [--entries FILE]`:
//! runs a program over packet ports and prints what happened (per port: packets in, out,
//! dropped; per table: hits, misses, inserts, failed inserts, updates, expirations; packets
//! per second).
//!
//! Exit codes: 0 the run completed; 2 bad usage, an unreadable file, a program that does not
//! compile, or an entries file naming an unknown table, action, field or parameter.

use crate::check_cmd::{options, ArchArg};
use clap::{Args, ValueEnum};
use nevermiss_io::port::parse_port_specs;
use nevermiss_io::Rss;
use nevermiss_io::{parse_stf, StfCommand};
use nevermiss_runtime::control::ControlPlane;
use nevermiss_runtime::run::{run as run_loop, Clock, RunOptions};
use nevermiss_runtime::workers::{available_cpus, run_parallel, ParallelOptions};
use nevermiss_runtime::{load, Config, Switch};
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
    /// Add a directory to the include path.
    #[arg(short = 'I', value_name = "DIR")]
    pub include: Vec<PathBuf>,
    /// Define a preprocessor macro: NAME or NAME=VALUE.
    #[arg(short = 'D', value_name = "NAME[=VAL]")]
    pub define: Vec<String>,
    /// Packets per batch (1 to 256).
    #[arg(long, default_value_t = 32)]
    pub batch: usize,
    /// Where packet time comes from.
    #[arg(long, value_enum, default_value_t = ClockArg::Wall)]
    pub clock: ClockArg,
    /// PNA: a host-side port (repeatable); all other ports are network ports.
    #[arg(long = "host-port", value_name = "PORT")]
    pub host_ports: Vec<u32>,
    /// PNA expire-time profile: ID=DURATION (e.g. 1=30s, 2=500ms); repeatable.
    #[arg(long = "expire-profile", value_name = "ID=DURATION")]
    pub expire_profiles: Vec<String>,
    /// Resolution of idle timers (e.g. 1ms).
    #[arg(long, default_value = "1ms")]
    pub tick: String,
    /// Print statistics every N seconds while running.
    #[arg(long, value_name = "SECS")]
    pub stats_every: Option<f64>,
    /// Stop after this many packets.
    #[arg(long)]
    pub max_packets: Option<u64>,
    /// Worker threads, each pinned to its own CPU; packets are spread over them by `--rss`.
    /// The inputs are read into memory first and the time covers processing only (without
    /// --cores: one loop on this thread that reads while it runs).
    #[arg(long, value_name = "N")]
    pub cores: Option<usize>,
    /// Header fields that spread packets over workers, like a NIC's RSS: `default` (IPv4/IPv6
    /// addresses and L4 ports) or a list of eth.dst, eth.src, eth.type, ipv4.src, ipv4.dst,
    /// ipv4.proto, ipv6.src, ipv6.dst, l4.src, l4.dst, @OFFSET:LEN.
    #[arg(long, default_value = "default", value_name = "FIELDS")]
    pub rss: String,
    /// PNA: how many exact tables per packet a batch prefetches after parsing (0 = off).
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

/// Parses `10s`, `500ms`, `20us`, `100ns`, `2m`, `1h` or a plain number of seconds.
pub fn parse_duration_ns(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let (num, unit) = match s.find(|c: char| c.is_ascii_alphabetic()) {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, "s"),
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a duration (e.g. 30s, 500ms)"))?;
    let mul = match unit {
        "ns" => 1.0,
        "us" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "m" => 60e9,
        "h" => 3600e9,
        _ => {
            return Err(format!(
                "`{s}`: unknown unit `{unit}` (ns, us, ms, s, m, h)"
            ))
        }
    };
    let ns = v * mul;
    if !(0.0..=1.8e19).contains(&ns) {
        return Err(format!("`{s}` is out of range"));
    }
    Ok(ns as u64)
}

fn profiles(specs: &[String]) -> Result<Option<Vec<u64>>, String> {
    if specs.is_empty() {
        return Ok(None);
    }
    let mut p: Vec<u64> = nevermiss_tables::DEFAULT_PROFILES_S
        .iter()
        .map(|s| s * 1_000_000_000)
        .collect();
    for s in specs {
        let Some((id, d)) = s.split_once('=') else {
            return Err(format!("--expire-profile {s}: expected ID=DURATION"));
        };
        let id: usize = id
            .trim()
            .parse()
            .map_err(|_| format!("--expire-profile {s}: `{id}` is not a profile id"))?;
        if id >= nevermiss_tables::MAX_PROFILES {
            return Err(format!("--expire-profile {s}: profile ids are 0 to 255"));
        }
        let ns = parse_duration_ns(d)?;
        if p.len() <= id {
            p.resize(id + 1, 0);
        }
        p[id] = ns;
    }
    Ok(Some(p))
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
    let opts = options(&args.include, &args.define, ArchArg::Auto)?;
    if !args.program.is_file() {
        return Err(format!("{}: no such file", args.program.display()));
    }
    let prog = load(&args.program, &opts)?;
    if args.dump_ir {
        out!("{}", p4_ir::dump::dump(&prog));
        return Ok(());
    }
    if args.cores == Some(0) {
        return Err("--cores must be at least 1".into());
    }
    let cpus = available_cpus().len();
    if let Some(n) = args.cores.filter(|n| !args.no_pin && *n > cpus) {
        return Err(format!(
            "--cores {n}: only {cpus} cpus available to pin workers to (--no-pin allows more)"
        ));
    }
    let rss = Rss::parse(&args.rss).map_err(|e| format!("--rss: {e}"))?;
    let specs = parse_port_specs(&args.ports).map_err(|e| e.to_string())?;
    if specs.is_empty() {
        return Err(
            "no ports: give at least one --port N=pcap:IN,OUT or N=gen:two-phase,...".into(),
        );
    }
    let config = Config {
        host_ports: args.host_ports.clone(),
        expire_profiles_ns: profiles(&args.expire_profiles)?,
        tick_ns: parse_duration_ns(&args.tick)?.max(1),
        prefetch_tables: args.prefetch_tables,
        ..Config::default()
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
        stats_every: args
            .stats_every
            .filter(|s| *s > 0.0)
            .map(Duration::from_secs_f64),
        max_packets: args.max_packets,
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
    let notes = sw.notifications.lock().map(|n| n.len()).unwrap_or(0);
    if notes > 0 {
        outln!("idle-timeout notifications for the control plane: {notes}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration_ns("30s"), Ok(30_000_000_000));
        assert_eq!(parse_duration_ns("500ms"), Ok(500_000_000));
        assert_eq!(parse_duration_ns("2"), Ok(2_000_000_000));
        assert!(parse_duration_ns("5 parsecs").is_err());
        assert_eq!(profiles(&["1=1ms".into()]).unwrap().unwrap()[1], 1_000_000);
    }
}
