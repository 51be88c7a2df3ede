//! `nevermiss run prog.p4 --port N=pcap:IN[,OUT] --port N=gen:two-phase,... [--entries FILE]`:
//! runs a program over packet ports and prints what happened (per port: packets in, out,
//! dropped; per table: hits, misses, inserts, failed inserts, updates, expirations; packets
//! per second).
//!
//! Exit codes: 0 the run completed; 2 bad usage, an unreadable file, a program that does not
//! compile, or an entries file naming an unknown table, action, field or parameter.

use crate::flags::{SourceArgs, SwitchArgs, TrafficArgs};
use clap::Args;
use nevermiss_io::{parse_stf, StfCommand};
use nevermiss_runtime::control::ControlPlane;
use nevermiss_runtime::Switch;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Args)]
pub struct RunArgs {
    /// The P4_16 program.
    pub program: PathBuf,
    /// A port: N=pcap:IN[,OUT], N=pcap:,OUT, N=gen:two-phase,KEY=VALUE,..., N=if:IFACE or
    /// N=null (repeatable).
    #[arg(long = "port", value_name = "SPEC")]
    pub ports: Vec<String>,
    /// An interface port, BMv2's form: `-i 0@veth0` is `--port 0=if:veth0` (repeatable).
    #[arg(short = 'i', value_name = "N@IFACE")]
    pub interfaces: Vec<String>,
    /// Table entries and other control-plane commands, in STF syntax (add, setdefault,
    /// mirroring_add, mc_*, register_write, meter_set_rates).
    #[arg(long, value_name = "FILE")]
    pub entries: Vec<PathBuf>,
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub switch: SwitchArgs,
    #[command(flatten)]
    pub traffic: TrafficArgs,
    /// Stop after this long (e.g. 10s, 500ms), as SIGINT would: the batch in flight finished,
    /// outputs flushed, statistics printed, exit 0. Inputs that end sooner end the run sooner.
    #[arg(long, value_name = "DURATION", value_parser = crate::flags::duration_ns)]
    pub duration: Option<u64>,
    /// Print the program's IR and exit.
    #[arg(long)]
    pub dump_ir: bool,
    /// After the statistics, list every interpreter fallback site of the compiled engine:
    /// how many times packets took it, where it is and what construct it is, most taken first
    /// (docs/jit.md, "Fallbacks").
    #[arg(long)]
    pub fallbacks: bool,
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

/// `--fallbacks`: one line per site, most taken first: `  N (X per packet)  PLACE: WHAT`.
fn fallback_sites(sw: &Switch, packets: u64) -> String {
    let sites = sw.fallback_sites();
    let mut s = format!("fallback sites: {}\n", sites.len());
    for f in &sites {
        s.push_str(&format!(
            "  {:>10} ({:.2} per packet)  {}: {}\n",
            f.count,
            f.count as f64 / packets.max(1) as f64,
            f.place,
            f.what
        ));
    }
    s
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
    args.traffic.check()?;
    let specs = crate::flags::port_specs(&args.ports, &args.interfaces)?;
    if specs.is_empty() {
        return Err(
            "no ports: give at least one --port N=pcap:IN,OUT, N=gen:two-phase,... or N=if:IFACE"
                .into(),
        );
    }
    let mut config = args
        .traffic
        .config(args.switch.config(&prog, &args.program)?)?;
    config.fallback_sites = args.fallbacks;
    let sw = Arc::new(
        Switch::new(prog, config).map_err(|e| format!("{}: {e}", args.program.display()))?,
    );
    for e in &args.entries {
        apply_entries(&sw, e)?;
    }
    // Until the inputs end, `--duration`, or SIGINT/SIGTERM (interface ports never end by
    // themselves).
    // SIGUSR1 prints the statistics so far.
    let sig = crate::flags::signals();
    if let Some(ns) = args.duration {
        let stop = sig.stop.clone();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_nanos(ns));
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
        });
    }
    let report = args.traffic.run_specs(
        &nevermiss_runtime::handover::Handover::new(Some(sw.clone())),
        &specs,
        &|_| Vec::new(),
        Some(sig.stop),
        Some(sig.stats),
    )?;
    out!("{}", report.render());
    outln!("{}", crate::flags::engine_line(&sw));
    if let Some(line) = crate::flags::fallbacks_line(&sw, report.packets_in) {
        outln!("{line}");
        if args.fallbacks {
            out!("{}", fallback_sites(&sw, report.packets_in));
        }
    }
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
