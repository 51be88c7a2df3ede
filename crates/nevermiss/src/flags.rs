//! Flags shared by several subcommands, parsed and checked in one place, so `run`, `stf`,
//! `bench`, `sim` (and every subcommand added later) take the same values with the same
//! messages.
//!
//! Guarantees: a value outside a flag's domain is a clap error that names the flag (exit 2)
//! before anything runs; a flag that does not apply to the program's architecture is an error
//! that says so ([`SwitchArgs::config`]), never silently ignored.

use crate::check_cmd::{options, ArchArg};
use clap::{Args, ValueEnum};
use nevermiss_io::Port;
use nevermiss_io::Rss;
use nevermiss_runtime::handover::Handover;
use nevermiss_runtime::queues::QueueSettings;
use nevermiss_runtime::run::{Clock, RunOptions, RunReport};
use nevermiss_runtime::workers::{available_cpus, run_parallel_handed, ParallelOptions};
use nevermiss_runtime::{Config, Engine, Switch};
use p4_ir::{Arch, Program};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// `--batch`: packets per batch, 1 to [`nevermiss_io::BATCH_MAX`].
pub fn batch(s: &str) -> Result<usize, String> {
    let n: usize = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number"))?;
    if !(1..=nevermiss_io::BATCH_MAX).contains(&n) {
        return Err(format!("must be 1 to {}", nevermiss_io::BATCH_MAX));
    }
    Ok(n)
}

/// A count of at least 1: `N`, `1_000_000` or `2^K` (`--max-packets`, `--cores`, ...).
pub fn count(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let n = match t.strip_prefix("2^") {
        Some(e) => {
            let e: u32 = e.parse().map_err(|_| format!("`{e}` is not an exponent"))?;
            if e > 62 {
                return Err("exponent too large (at most 2^62)".into());
            }
            1u64 << e
        }
        None => t
            .replace('_', "")
            .parse()
            .map_err(|_| format!("`{s}` is not a count (N or 2^K)"))?,
    };
    if n == 0 {
        return Err("must be at least 1".into());
    }
    Ok(n)
}

/// [`count`] as a `usize` (worker counts).
pub fn count_usize(s: &str) -> Result<usize, String> {
    usize::try_from(count(s)?).map_err(|_| "too large".into())
}

/// A duration longer than zero: `10s`, `500ms`, `20us`, `100ns`, `2m`, `1h` or plain seconds.
pub fn duration_ns(s: &str) -> Result<u64, String> {
    let ns = nevermiss_io::parse_duration_ns(s).map_err(|e| e.to_string())?;
    if ns == 0 {
        return Err("must be longer than 0".into());
    }
    Ok(ns)
}

/// `ADDR:PORT` or `HOST:PORT` (`localhost:9559`, as BMv2's `--grpc-server-addr` takes): the
/// first address the name resolves to.
pub fn socket_addr(s: &str) -> Result<std::net::SocketAddr, String> {
    use std::net::ToSocketAddrs;
    if let Ok(a) = s.parse() {
        return Ok(a);
    }
    if !s.contains(':') {
        return Err("expected ADDR:PORT or HOST:PORT (e.g. 127.0.0.1:9559)".into());
    }
    let mut addrs = s
        .to_socket_addrs()
        .map_err(|e| format!("expected ADDR:PORT or HOST:PORT: {e}"))?;
    addrs
        .next()
        .ok_or_else(|| "the name resolves to no address".into())
}

/// `--log-level`: tracing's level names and BMv2's (`trace`, `debug`, `info`, `warn` or
/// `warning`, `error`, `critical` (as error), `off`).
pub fn log_level(s: &str) -> Result<tracing::level_filters::LevelFilter, String> {
    use tracing::level_filters::LevelFilter as L;
    Ok(match s.trim().to_ascii_lowercase().as_str() {
        "trace" => L::TRACE,
        "debug" => L::DEBUG,
        "info" => L::INFO,
        "warn" | "warning" => L::WARN,
        "error" | "critical" => L::ERROR,
        "off" => L::OFF,
        _ => {
            return Err(format!(
                "`{s}`: the levels are trace, debug, info, warn, error and off"
            ))
        }
    })
}

/// What [`start_logging`] set up.
pub struct Logging {
    /// Every packet's path is logged (debug or trace level): run the traffic traced.
    pub packets: bool,
}

/// Logs nevermiss's events (`--log-console` to stderr, `--log-file FILE`) at `level` (info by
/// default), each line stamped with the time; other crates' events only at warn and above.
pub fn start_logging(
    console: bool,
    file: Option<&Path>,
    level: Option<tracing::level_filters::LevelFilter>,
) -> Result<Logging, String> {
    use tracing::level_filters::LevelFilter as L;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::Layer;
    if !console && file.is_none() {
        if level.is_some() {
            return Err("--log-level: give --log-console or --log-file too".into());
        }
        return Ok(Logging { packets: false });
    }
    let level = level.unwrap_or(L::INFO);
    let ours = tracing_subscriber::filter::Targets::new()
        .with_default(L::WARN.min(level))
        .with_target("nevermiss", level)
        .with_target("nevermiss_p4rt", level)
        .with_target("nevermiss_runtime", level);
    let console_layer = console.then(|| {
        tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_ansi(false)
            .with_filter(ours.clone())
    });
    let file_layer = match file {
        Some(p) => {
            let f =
                std::fs::File::create(p).map_err(|e| format!("--log-file {}: {e}", p.display()))?;
            Some(
                tracing_subscriber::fmt::layer()
                    .with_writer(std::sync::Mutex::new(f))
                    .with_ansi(false)
                    .with_filter(ours),
            )
        }
        None => None,
    };
    let sub = tracing_subscriber::registry()
        .with(console_layer)
        .with(file_layer);
    tracing::subscriber::set_global_default(sub)
        .map_err(|e| format!("cannot start logging: {e}"))?;
    Ok(Logging {
        packets: level >= L::DEBUG,
    })
}

/// The program and how it is preprocessed.
#[derive(Args, Clone, Debug, Default)]
pub struct SourceArgs {
    /// Add a directory to the include path.
    #[arg(short = 'I', value_name = "DIR")]
    pub include: Vec<PathBuf>,
    /// Define a preprocessor macro: NAME or NAME=VALUE.
    #[arg(short = 'D', value_name = "NAME[=VAL]")]
    pub define: Vec<String>,
}

impl SourceArgs {
    /// Loads and lowers `program`, with file:line:col diagnostics on failure.
    pub fn load(&self, program: &Path) -> Result<Program, String> {
        let opts = options(&self.include, &self.define, ArchArg::Auto)?;
        crate::program::readable(program)?;
        crate::program::load(program, &opts)
    }
}

/// How a switch is configured, shared by `run`, `stf` (and the header of an STF file) and
/// every later command that runs a program.
#[derive(Args, Clone, Debug, Default)]
pub struct SwitchArgs {
    /// PNA: a host-side port (repeatable); all other ports are network ports.
    #[arg(long = "host-port", value_name = "PORT")]
    pub host_ports: Vec<u32>,
    /// PNA: expire-time profile ID=DURATION (e.g. 1=30s, 2=500ms); repeatable.
    #[arg(long = "expire-profile", value_name = "ID=DURATION", value_parser = expire_profile)]
    pub expire_profiles: Vec<(usize, u64)>,
    /// Resolution of idle timers [default: 1ms].
    #[arg(long, value_name = "DURATION", value_parser = duration_ns)]
    pub tick: Option<u64>,
    /// What runs the program: machine code compiled at load time, or the interpreter
    /// (the reference; docs/jit.md) [default: jit].
    #[arg(long, value_name = "ENGINE", env = "NEVERMISS_ENGINE", value_parser = engine)]
    pub engine: Option<Engine>,
    /// A table's size in entries, replacing its `size` property: NAME=N, N decimal or 2^K
    /// (e.g. `dash_ingress.dash_match_stage.inbound.ConntrackOut.conntrackOut=2^25`);
    /// repeatable.
    #[arg(long = "table-size", value_name = "NAME=N", value_parser = table_size)]
    pub table_sizes: Vec<(String, u64)>,
    /// PNA: the port a packet leaves on when the main control calls neither send_to_port nor
    /// drop_packet, as on P4-DPDK (port 0 there) [default: such a packet is dropped].
    #[arg(long = "pna-default-port", value_name = "PORT")]
    pub pna_default_port: Option<u32>,
}

/// What ran the program, for the statistics: `engine: jit (compiled in 2.1 ms, 14.2 KiB of
/// machine code; a packet's start zeroes 30 of 35 state words)` or `engine: interp`.
pub fn engine_line(sw: &Switch) -> String {
    let (zeroed, state) = sw.zeroed_words();
    match sw.native_stats() {
        Some((ns, bytes)) => format!(
            "engine: jit (compiled in {:.1} ms, {:.1} KiB of machine code; a packet's start zeroes {zeroed} of {state} state words)",
            ns as f64 / 1e6,
            bytes as f64 / 1024.0
        ),
        None => format!("engine: {}", sw.engine().name()),
    }
}

/// With machine code: how much of the program the interpreter still ran (docs/jit.md,
/// "Fallbacks"), e.g. `interpreter fallbacks: 0 (0.00 per packet)`; `None` for the interpreter.
pub fn fallbacks_line(sw: &Switch, packets: u64) -> Option<String> {
    sw.native_stats()?;
    let n = sw
        .stats()
        .fallbacks
        .load(std::sync::atomic::Ordering::Relaxed);
    Some(format!(
        "interpreter fallbacks: {n} ({:.2} per packet)",
        n as f64 / packets.max(1) as f64
    ))
}

/// `--engine jit|interp`.
pub fn engine(s: &str) -> Result<Engine, String> {
    match s {
        "jit" => Ok(Engine::Jit),
        "interp" => Ok(Engine::Interp),
        _ => Err(format!("`{s}`: the engines are jit and interp")),
    }
}

/// `--expire-profile ID=DURATION`.
fn expire_profile(s: &str) -> Result<(usize, u64), String> {
    let Some((id, d)) = s.split_once('=') else {
        return Err("expected ID=DURATION (e.g. 1=30s)".into());
    };
    let id: usize = id
        .trim()
        .parse()
        .map_err(|_| format!("`{id}` is not a profile id"))?;
    if id >= nevermiss_tables::MAX_PROFILES {
        return Err(format!(
            "profile ids are 0 to {}",
            nevermiss_tables::MAX_PROFILES - 1
        ));
    }
    Ok((id, duration_ns(d)?))
}

/// `--table-size NAME=N`: N in decimal or as 2^K, from 1 to 2^28 (`MAX_TABLE_SIZE`).
pub fn table_size(s: &str) -> Result<(String, u64), String> {
    let Some((name, n)) = s.rsplit_once('=') else {
        return Err(format!(
            "expected NAME=N (e.g. MainControlImpl.flows=2^20), got `{s}`"
        ));
    };
    let size = match n.split_once('^') {
        Some(("2", k)) => k
            .parse::<u32>()
            .ok()
            .and_then(|k| 1u64.checked_shl(k).filter(|_| k < 64)),
        Some(_) => None,
        None => n.parse::<u64>().ok(),
    };
    match size {
        Some(n) if name.is_empty() => Err(format!("no table name before `={n}`")),
        Some(n) if (1..=nevermiss_tables::MAX_TABLE_SIZE as u64).contains(&n) => {
            Ok((name.to_string(), n))
        }
        _ => Err(format!(
            "`{n}`: a table size is a number or 2^K from 1 to 2^28"
        )),
    }
}

impl SwitchArgs {
    /// These flags and then `later`'s (the command line after an STF file's header): lists
    /// are joined, a single value of `later` wins.
    pub fn then(&self, later: &SwitchArgs) -> SwitchArgs {
        SwitchArgs {
            host_ports: [&self.host_ports[..], &later.host_ports[..]].concat(),
            expire_profiles: [&self.expire_profiles[..], &later.expire_profiles[..]].concat(),
            tick: later.tick.or(self.tick),
            engine: later.engine.or(self.engine),
            table_sizes: [&self.table_sizes[..], &later.table_sizes[..]].concat(),
            pna_default_port: later.pna_default_port.or(self.pna_default_port),
        }
    }

    /// The switch configuration for `prog` (loaded from `path`). A PNA-only flag on a program
    /// of another architecture is an error naming the flag and the architecture.
    pub fn config(&self, prog: &Program, path: &Path) -> Result<Config, String> {
        let pna = matches!(prog.arch, Arch::PnaV06 | Arch::PnaV07);
        let arch = match prog.arch {
            Arch::V1Model => "v1model",
            Arch::Psa => "PSA",
            Arch::PnaV06 | Arch::PnaV07 => "PNA",
        };
        for (flag, given) in [
            ("--host-port", !self.host_ports.is_empty()),
            ("--expire-profile", !self.expire_profiles.is_empty()),
            ("--pna-default-port", self.pna_default_port.is_some()),
        ] {
            if given && !pna {
                return Err(format!(
                    "{flag} applies to PNA programs only; {} is a {arch} program",
                    path.display()
                ));
            }
        }
        for (name, _) in &self.table_sizes {
            if !prog.tables.iter().any(|t| t.name == *name) {
                let names: Vec<&str> = prog.tables.iter().map(|t| t.name.as_str()).collect();
                return Err(format!(
                    "--table-size: {} has no table `{name}`; its tables: {}",
                    path.display(),
                    names.join(", ")
                ));
            }
        }
        Ok(self.config_any())
    }

    /// The switch configuration, whatever program it will run (`serve` without a program:
    /// the flags apply to the pipeline a controller loads).
    pub fn config_any(&self) -> Config {
        let expire_profiles_ns = (!self.expire_profiles.is_empty()).then(|| {
            let mut p: Vec<u64> = nevermiss_tables::DEFAULT_PROFILES_S
                .iter()
                .map(|s| s * 1_000_000_000)
                .collect();
            for &(id, ns) in &self.expire_profiles {
                if p.len() <= id {
                    p.resize(id + 1, 0);
                }
                p[id] = ns;
            }
            p
        });
        Config {
            host_ports: self.host_ports.clone(),
            expire_profiles_ns,
            tick_ns: self.tick.unwrap_or(Config::default().tick_ns),
            engine: self.engine.unwrap_or_default(),
            table_sizes: self.table_sizes.clone(),
            pna_default_port: self.pna_default_port,
            ..Config::default()
        }
    }
}

/// The ports of `--port SPEC` and BMv2's `-i N@IFACE` (the same as `--port N=if:IFACE`),
/// parsed and checked (no port number twice).
pub fn port_specs(
    ports: &[String],
    interfaces: &[String],
) -> Result<Vec<nevermiss_io::PortSpec>, String> {
    let mut all: Vec<String> = ports.to_vec();
    for i in interfaces {
        let Some((n, name)) = i.split_once('@') else {
            return Err(format!("-i {i}: expected N@IFACE (e.g. 0@veth0)"));
        };
        all.push(format!("{n}=if:{name}"));
    }
    nevermiss_io::parse_port_specs(&all).map_err(|e| e.to_string())
}

/// Flags the signals set: `stop` by SIGINT or SIGTERM (the first stops the run gracefully:
/// batches in flight finished, outputs flushed, statistics printed; a second of the same kind
/// ends the process as usual), `stats` by SIGUSR1 (print statistics now).
pub struct Signals {
    pub stop: Arc<AtomicBool>,
    pub stats: Arc<AtomicBool>,
}

/// Installs the handlers of [`Signals`] (for loops that run until stopped: interface ports).
pub fn signals() -> Signals {
    use std::sync::atomic::Ordering::Relaxed;
    static STOP: AtomicBool = AtomicBool::new(false);
    static STATS: AtomicBool = AtomicBool::new(false);
    extern "C" fn on_stop(sig: libc::c_int) {
        STOP.store(true, std::sync::atomic::Ordering::Relaxed);
        // SAFETY: signal() is async-signal-safe.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
        }
    }
    extern "C" fn on_stats(_: libc::c_int) {
        STATS.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    let stop: extern "C" fn(libc::c_int) = on_stop;
    let stats: extern "C" fn(libc::c_int) = on_stats;
    // SAFETY: installing handlers that only store to atomics (async-signal-safe).
    unsafe {
        libc::signal(libc::SIGINT, stop as libc::sighandler_t);
        libc::signal(libc::SIGTERM, stop as libc::sighandler_t);
        libc::signal(libc::SIGUSR1, stats as libc::sighandler_t);
    }
    let out = Signals {
        stop: Arc::new(AtomicBool::new(false)),
        stats: Arc::new(AtomicBool::new(false)),
    };
    let (f, g) = (out.stop.clone(), out.stats.clone());
    std::thread::spawn(move || loop {
        if STATS.swap(false, Relaxed) {
            g.store(true, Relaxed);
        }
        if STOP.load(Relaxed) {
            f.store(true, Relaxed);
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    });
    out
}

/// How ports are run, shared by `run` and `serve`: batches, the clock, progress, and the
/// workers of `--cores`.
#[derive(Args, Clone, Debug)]
pub struct TrafficArgs {
    /// Packets per batch (1 to 256).
    #[arg(long, default_value = "32", value_parser = batch)]
    pub batch: usize,
    /// Where packet time comes from.
    #[arg(long, value_enum, default_value_t = ClockArg::Wall)]
    pub clock: ClockArg,
    /// Print statistics to stderr this often while running (e.g. 1s, 500ms).
    #[arg(long, value_name = "DURATION", value_parser = duration_ns)]
    pub stats_every: Option<u64>,
    /// Stop after this many received packets.
    #[arg(long, value_name = "N", value_parser = count)]
    pub max_packets: Option<u64>,
    /// Worker threads, each pinned to its own CPU; packets are spread over them by `--rss`.
    /// The inputs are read into memory first and the time covers processing only (without
    /// --cores: one loop on this thread that reads while it runs).
    #[arg(long, value_name = "N", value_parser = count_usize)]
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
    /// Print each packet's path to stderr: parser states, tables applied (hit or miss, action,
    /// parameters), add_entry results, outputs or the drop (as simple_switch --log-console).
    #[arg(long)]
    pub trace: bool,
    /// With --trace, trace only the first N packets (then run at full speed).
    #[arg(long, default_value = "100", value_name = "N", value_parser = count, requires = "trace")]
    pub trace_limit: u64,
    /// Write every port's received and sent packets to DIR/N_in.pcap and DIR/N_out.pcap (as
    /// BMv2's `--pcap`; with --cores on interfaces, worker W > 0 writes N_in.wW.pcap, ...).
    #[arg(long, value_name = "DIR")]
    pub pcap_dir: Option<PathBuf>,
    /// With --pcap-dir, name an interface port's files by the interface (IFACE_in.pcap,
    /// IFACE_out.pcap), as BMv2 names them, so that switches sharing DIR do not collide.
    #[arg(long, requires = "pcap_dir")]
    pub pcap_by_interface: bool,
    /// Poll the ports without pause even when no packets come (a whole core per loop, the
    /// lowest latency); by default an idle loop waits for its interfaces' sockets after 200 µs
    /// without a packet (docs/io.md "Idle").
    #[arg(long)]
    pub busy_poll: bool,
    /// Egress queues between ingress and egress (v1model), as BMv2's simple_switch has them:
    /// `all` ports or a list (`1,2`). Egress then sees `enq_timestamp`, `enq_qdepth`,
    /// `deq_timedelta` and `deq_qdepth`; without it every packet runs to completion
    /// (docs/runtime.md, "Egress queues").
    #[arg(long, value_name = "all|PORTS")]
    pub egress_queues: Option<String>,
    /// Depth of each egress queue in packets [default: 64, BMv2's] (needs --egress-queues).
    #[arg(long, value_name = "N", value_parser = count_usize)]
    pub queue_depth: Option<usize>,
    /// Packets per second each egress queue lets out (BMv2's set_queue_rate; 0: no limit)
    /// (needs --egress-queues).
    #[arg(long, value_name = "PPS", value_parser = count)]
    pub queue_rate: Option<u64>,
    /// Queues per port, picked by `standard_metadata.priority` (BMv2's --priority-queues; 1
    /// to 8) (needs --egress-queues).
    #[arg(long, value_name = "N", value_parser = count_usize)]
    pub priority_queues: Option<usize>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ClockArg {
    /// Monotonic time since the start.
    Wall,
    /// The packets' timestamps (pcap capture times, generator times).
    Packet,
}

impl TrafficArgs {
    /// Checks the flags against each other and this machine: the multi-core flags need
    /// `--cores`, never silently ignored; pinned workers need as many CPUs.
    pub fn check(&self) -> Result<(), String> {
        let cpus = available_cpus().len();
        if let Some(n) = self.cores.filter(|n| !self.no_pin && *n > cpus) {
            return Err(format!(
                "--cores {n}: only {cpus} cpus available to pin workers to (--no-pin allows more)"
            ));
        }
        if self.trace && self.cores.is_some() {
            return Err(
                "--trace follows packets one at a time on one loop: leave out --cores".into(),
            );
        }
        if self.cores.is_none() {
            if self.rss != "default" {
                return Err("--rss spreads packets over workers: it needs --cores".into());
            }
            if self.no_pin {
                return Err("--no-pin is about the workers of --cores: it needs --cores".into());
            }
        }
        Rss::parse(&self.rss).map_err(|e| format!("--rss: {e}"))?;
        let queues = self.queue_settings()?;
        if queues.is_some() && self.cores.is_some() {
            return Err("--egress-queues: the queues belong to one loop: leave out --cores".into());
        }
        Ok(())
    }

    /// The egress queues of `--egress-queues` and the flags that shape them; `None` without
    /// it (a shaping flag without it is an error, never ignored).
    pub fn queue_settings(&self) -> Result<Option<Arc<QueueSettings>>, String> {
        let Some(which) = &self.egress_queues else {
            for (set, flag) in [
                (self.queue_depth.is_some(), "--queue-depth"),
                (self.queue_rate.is_some(), "--queue-rate"),
                (self.priority_queues.is_some(), "--priority-queues"),
            ] {
                if set {
                    return Err(format!(
                        "{flag} shapes the egress queues: it needs --egress-queues all|PORTS"
                    ));
                }
            }
            return Ok(None);
        };
        let ports = match which.trim() {
            "all" => None,
            list => Some(
                list.split(',')
                    .map(|p| {
                        p.trim().parse::<u32>().map_err(|_| {
                            format!(
                                "--egress-queues {which}: `{p}` is not a port number \
                                 (expected `all` or a list such as 1,2)"
                            )
                        })
                    })
                    .collect::<Result<Vec<u32>, String>>()?,
            ),
        };
        let q = QueueSettings::new(
            ports,
            self.priority_queues.unwrap_or(1),
            self.queue_depth
                .unwrap_or(nevermiss_runtime::queues::DEFAULT_DEPTH),
        )
        .map_err(|e| format!("--priority-queues: {e}"))?;
        if let Some(pps) = self.queue_rate {
            q.set_rate(None, None, pps).map_err(|e| e.to_string())?;
        }
        Ok(Some(Arc::new(q)))
    }

    /// `config` with these flags' share of the switch configuration.
    pub fn config(&self, config: Config) -> Result<Config, String> {
        Ok(Config {
            prefetch_tables: self.prefetch_tables,
            queues: self.queue_settings()?,
            ..config
        })
    }

    /// Opens `specs` (plus `extra()`'s ports) and runs them on `sw` until the inputs end or
    /// `stop` is set. Interface ports with `--cores N`: N workers, each with its own sockets
    /// of every interface (AF_XDP: on its own receive queues; AF_PACKET: in one fanout group
    /// per interface) and its own `extra()` ports; all ports must then be interfaces. Otherwise
    /// one loop, or the preloading workers of `--cores`.
    pub fn run_specs(
        &self,
        h: &Arc<Handover>,
        specs: &[nevermiss_io::PortSpec],
        extra: &dyn Fn(usize) -> Vec<Box<dyn Port>>,
        stop: Option<Arc<AtomicBool>>,
        stats_now: Option<Arc<AtomicBool>>,
    ) -> Result<RunReport, String> {
        let live = specs.iter().any(|s| s.is_live());
        let opts = self.options(stop, stats_now);
        // Interface ports say which back end they got (the description names it).
        let say = |s: &nevermiss_io::PortSpec, p: &dyn Port| {
            if s.is_live() {
                eprintln!("port {}", p.describe());
            }
        };
        match self.cores {
            Some(n) if live => {
                if !specs.iter().all(|s| s.is_live()) {
                    return Err(
                        "--cores with interface ports: every --port must then be an \
                                interface (files and the generator are read into memory first)"
                            .into(),
                    );
                }
                // One fanout group per interface (a group belongs to one device), numbered
                // from the process id. Worker 0 settles each interface's back end (`Auto`:
                // AF_XDP with a queue per worker, else AF_PACKET fanout); the others follow it.
                let group = (std::process::id() & 0xffff) as u16;
                let mut specs = specs.to_vec();
                let mut sets: Vec<Vec<Box<dyn Port>>> = Vec::with_capacity(n);
                for w in 0..n {
                    let mut ports = Vec::with_capacity(specs.len() + 1);
                    for (i, s) in specs.iter_mut().enumerate() {
                        let (p, backend) = s
                            .open_worker(w, n, Some(group.wrapping_add(i as u16)))
                            .map_err(|e| e.to_string())?;
                        if w == 0 {
                            *s = s.with_backend(backend);
                        }
                        let p = self.capture(p, s, w)?;
                        if s.is_live() {
                            eprintln!("worker {w}: port {}", p.describe());
                        }
                        ports.push(p);
                    }
                    ports.extend(extra(w));
                    sets.push(ports);
                }
                nevermiss_runtime::workers::run_live(h, sets, &opts, !self.no_pin)
                    .map_err(|e| e.to_string())
            }
            _ => {
                let mut ports = Vec::with_capacity(specs.len() + 1);
                for s in specs {
                    let p = s.open().map_err(|e| e.to_string())?;
                    let p = self.capture(p, s, 0)?;
                    say(s, p.as_ref());
                    ports.push(p);
                }
                ports.extend(extra(0));
                self.run_ports(h, ports, &opts)
            }
        }
    }

    /// `p` (opened from `spec`), capturing to `--pcap-dir` if given (worker `w`'s files).
    fn capture(
        &self,
        p: Box<dyn Port>,
        spec: &nevermiss_io::PortSpec,
        w: usize,
    ) -> Result<Box<dyn Port>, String> {
        let Some(dir) = &self.pcap_dir else {
            return Ok(p);
        };
        std::fs::create_dir_all(dir).map_err(|e| format!("--pcap-dir {}: {e}", dir.display()))?;
        let suffix = if w == 0 {
            String::new()
        } else {
            format!(".w{w}")
        };
        let name = match &spec.kind {
            nevermiss_io::PortKind::Interface { name, .. } if self.pcap_by_interface => {
                name.clone()
            }
            _ => p.id().to_string(),
        };
        let c = nevermiss_io::CapturePort::new(
            p,
            dir.join(format!("{name}_in{suffix}.pcap")),
            dir.join(format!("{name}_out{suffix}.pcap")),
        )
        .map_err(|e| format!("--pcap-dir: {e}"))?;
        Ok(Box::new(c))
    }

    fn options(
        &self,
        stop: Option<Arc<AtomicBool>>,
        stats_now: Option<Arc<AtomicBool>>,
    ) -> RunOptions {
        RunOptions {
            batch: self.batch,
            clock: match self.clock {
                ClockArg::Wall => Clock::Wall,
                ClockArg::Packet => Clock::Packet,
            },
            stats_every: self.stats_every.map(Duration::from_nanos),
            max_packets: self.max_packets,
            stop,
            stats_now,
            trace: self.trace.then_some(self.trace_limit),
            worker: 0,
            polling: if self.busy_poll {
                nevermiss_io::Polling::Busy
            } else {
                nevermiss_io::Polling::Adaptive
            },
        }
    }

    /// Runs `ports` on `sw` to their end (or until `opts.stop` is set): one loop on this
    /// thread, or the workers of `--cores` (inputs read into memory first).
    fn run_ports(
        &self,
        h: &Arc<Handover>,
        ports: Vec<Box<dyn Port>>,
        opts: &RunOptions,
    ) -> Result<RunReport, String> {
        match self.cores {
            None => nevermiss_runtime::run::run_handed(h, ports, opts).map_err(|e| e.to_string()),
            Some(cores) => {
                let par = ParallelOptions {
                    cores,
                    rss: Rss::parse(&self.rss).map_err(|e| format!("--rss: {e}"))?,
                    pin: !self.no_pin,
                    ..ParallelOptions::default()
                };
                run_parallel_handed(h, ports, opts, &par).map_err(|e| e.to_string())
            }
        }
    }
}

/// The options an STF file asks for in its `# nevermiss-options:` header lines
/// (docs/runtime.md): the [`SourceArgs`] and [`SwitchArgs`] flags, parsed exactly as on the
/// command line.
#[derive(clap::Parser, Debug, Default)]
#[command(name = "nevermiss-options", no_binary_name = true)]
pub struct StfHeader {
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub switch: SwitchArgs,
}

impl StfHeader {
    /// The header of `text` (the STF file at `path`).
    pub fn of(text: &str, path: &Path) -> Result<StfHeader, String> {
        use clap::Parser;
        let tokens = nevermiss_io::stf_header_options(text);
        StfHeader::try_parse_from(&tokens).map_err(|e| {
            let msg = e.to_string();
            let first = msg
                .lines()
                .next()
                .unwrap_or("")
                .trim_start_matches("error: ");
            format!("{}: # nevermiss-options: {first}", path.display())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domains() {
        assert_eq!(batch("256"), Ok(256));
        assert!(batch("0").is_err() && batch("257").is_err() && batch("x").is_err());
        assert_eq!(count("2^10"), Ok(1024));
        assert_eq!(count("1_000"), Ok(1000));
        assert!(count("0").is_err() && count("-1").is_err() && count("2^63").is_err());
        assert_eq!(duration_ns("500ms"), Ok(500_000_000));
        assert!(duration_ns("0s").is_err());
        assert_eq!(expire_profile("1=1ms"), Ok((1, 1_000_000)));
        assert!(expire_profile("300=1s").is_err() && expire_profile("1").is_err());
    }

    #[test]
    fn addresses_and_log_levels() {
        assert_eq!(
            socket_addr("127.0.0.1:9559").unwrap(),
            "127.0.0.1:9559".parse().unwrap()
        );
        assert!(socket_addr("localhost:9559").unwrap().ip().is_loopback());
        assert!(socket_addr("nowhere").is_err());
        use tracing::level_filters::LevelFilter as L;
        for (name, want) in [
            ("trace", L::TRACE),
            ("debug", L::DEBUG),
            ("info", L::INFO),
            ("warn", L::WARN),
            ("warning", L::WARN),
            ("error", L::ERROR),
            ("critical", L::ERROR),
            ("off", L::OFF),
        ] {
            assert_eq!(log_level(name), Ok(want), "{name}");
        }
        assert!(log_level("loud").is_err());
    }

    #[test]
    fn header_then_command_line() {
        let h = StfHeader::of(
            "# comment\n# nevermiss-options: --host-port 1 --tick 2ms\npacket 0 00\n",
            Path::new("t.stf"),
        )
        .unwrap();
        assert_eq!(h.switch.host_ports, vec![1]);
        let cli = SwitchArgs {
            host_ports: vec![2],
            tick: Some(5),
            ..SwitchArgs::default()
        };
        let m = h.switch.then(&cli);
        assert_eq!((m.host_ports, m.tick), (vec![1, 2], Some(5)));
        let e =
            StfHeader::of("# nevermiss-options: --host-port x\n", Path::new("t.stf")).unwrap_err();
        assert!(
            e.starts_with("t.stf: # nevermiss-options:") && e.contains("--host-port"),
            "{e}"
        );
    }
}
