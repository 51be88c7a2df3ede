//! `nevermiss serve`: the switch with a P4Runtime server (docs/p4runtime.md).

use crate::flags::{SourceArgs, SwitchArgs, TrafficArgs};
use clap::Args;
use nevermiss_io::PortSpec;
use nevermiss_p4rt::server::{self, Device, ServeOptions};
use nevermiss_runtime::run::RunReport;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// The P4_16 program to load at start; without it the server waits for a controller's
    /// SetForwardingPipelineConfig.
    pub program: Option<PathBuf>,
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub switch: SwitchArgs,
    /// Address of the gRPC server (port 0: any free port; the one taken is printed).
    #[arg(long, default_value = "127.0.0.1:9559", value_name = "ADDR:PORT")]
    pub grpc_addr: String,
    /// The P4Runtime device id.
    #[arg(long, default_value = "1", value_parser = clap::value_parser!(u64))]
    pub device_id: u64,
    /// The port PacketOuts enter on and packets sent to become PacketIns.
    #[arg(long, default_value = "510", value_parser = clap::value_parser!(u32))]
    pub cpu_port: u32,
    /// A traffic port, as `nevermiss run --port` (repeatable): every pipeline a controller
    /// commits (or the PROGRAM) runs over the ports, opened afresh, while the server runs.
    #[arg(long = "port", value_name = "SPEC")]
    pub ports: Vec<String>,
    /// An interface port, BMv2's form: `-i 0@veth0` is `--port 0=if:veth0` (repeatable).
    #[arg(short = 'i', value_name = "N@IFACE")]
    pub interfaces: Vec<String>,
    #[command(flatten)]
    pub traffic: TrafficArgs,
    /// Serve over TLS with this certificate (PEM; needs --tls-key).
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The private key of --tls-cert (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Mutual TLS: accept only clients whose certificate this CA signed (PEM; needs --tls-cert).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_ca: Option<PathBuf>,
    /// At the end, write every update's delays here as CSV (received_ns, d_control_ns,
    /// d_data_ns, d_all_ns), and HdrHistogram logs of them beside it (FILE.d_control.hlog,
    /// FILE.d_data.hlog, FILE.d_all.hlog).
    #[arg(long, value_name = "FILE")]
    pub update_log: Option<PathBuf>,
    /// Stop after this long (e.g. 30s) instead of at SIGINT/SIGTERM.
    #[arg(long, value_name = "DURATION", value_parser = crate::flags::duration_ns)]
    pub duration: Option<u64>,
    /// Log to stderr, as simple_switch --log-console: every RPC (info), and at debug every
    /// packet's path through the program (as --trace, without its limit).
    #[arg(long)]
    pub log_console: bool,
    /// Log to this file instead (or as well).
    #[arg(long, value_name = "FILE")]
    pub log_file: Option<PathBuf>,
    /// How much to log: trace, debug, info, warn, error or off (BMv2's names; `warning` and
    /// `critical` too) [default: info with --log-console or --log-file].
    #[arg(long, value_name = "LEVEL", value_parser = crate::flags::log_level)]
    pub log_level: Option<tracing::level_filters::LevelFilter>,
}

pub fn run(args: ServeArgs) -> u8 {
    crate::usage_result(run_inner(args))
}

fn run_inner(args: ServeArgs) -> Result<(), String> {
    let addr = crate::flags::socket_addr(&args.grpc_addr)
        .map_err(|e| format!("--grpc-addr {}: {e}", args.grpc_addr))?;
    if let Some(p) = &args.update_log {
        std::fs::write(p, "").map_err(|e| format!("--update-log {}: {e}", p.display()))?;
    }
    args.traffic.check()?;
    let logging =
        crate::flags::start_logging(args.log_console, args.log_file.as_deref(), args.log_level)?;
    let specs = crate::flags::port_specs(&args.ports, &args.interfaces)?;
    if specs.iter().any(|s| s.id == args.cpu_port) {
        return Err(format!(
            "--port: port {} is the CPU port (--cpu-port): PacketOuts enter there and what the \
             program sends there becomes PacketIns",
            args.cpu_port
        ));
    }
    // Every port opens (inputs exist, outputs can be written) before the server starts.
    for s in &specs {
        s.open().map_err(|e| e.to_string())?;
    }
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(c), Some(k)) => {
            Some(server::tls_config(c, k, args.tls_ca.as_deref()).map_err(|e| e.to_string())?)
        }
        _ => None,
    };
    let mut config = args.traffic.config(args.switch.config_any())?;
    let mut preload = None;
    if let Some(path) = &args.program {
        crate::program::readable(path)?;
        if let Some(bytes) = crate::program::bmv2_json_bytes(path) {
            // A BMv2 JSON program is its own device config.
            let prog = bmv2_json::load_bytes(&bytes)
                .map_err(|e| format!("{}: error: {e}", path.display()))?;
            config = args.traffic.config(args.switch.config(&prog, path)?)?;
            preload = Some(bytes);
        }
    }
    if let (Some(path), None) = (&args.program, &preload) {
        let opts = crate::check_cmd::options(
            &args.source.include,
            &args.source.define,
            crate::check_cmd::ArchArg::Auto,
        )?;
        let compiled = p4_front::driver::compile_file(path, &opts).map_err(|f| f.render())?;
        let prog =
            p4_ir::lower(&compiled).map_err(|d| p4_front::diag::render(&compiled.unit, &d))?;
        config = args.traffic.config(args.switch.config(&prog, path)?)?;
        preload = Some(nevermiss_p4rt::device_config::encode(
            &compiled,
            &path.display().to_string(),
        ));
    }
    // The egress queues every pipeline shares, for `nevermiss ctl set-queue-*` at run time.
    let queues = config.queues.clone();
    let dev = Device::new(ServeOptions {
        device_id: args.device_id,
        cpu_port: args.cpu_port,
        config,
        ..ServeOptions::default()
    });
    if let Some(bytes) = preload {
        let p = dev
            .load(&bytes, None, None)
            .map_err(|s| s.message().to_string())?;
        dev.commit(p).map_err(|s| s.message().to_string())?;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    // --log-level debug (or trace) shows every packet's path, as simple_switch's log does.
    let mut how = args.traffic.clone();
    if logging.packets && how.cores.is_none() {
        how.trace = true;
        how.trace_limit = u64::MAX;
    }
    let traffic = Traffic::start(dev.clone(), specs, how);
    let dev2 = dev.clone();
    let duration = args.duration;
    let args_tls = tls.is_some();
    let served = rt.block_on(async move {
        let (incoming, local) =
            server::listen(addr).map_err(|e| format!("--grpc-addr {addr}: {e}"))?;
        outln!(
            "nevermiss serve: P4Runtime {} on {local}{} (device id {}, cpu port {}){}",
            server::API_VERSION,
            if args_tls { " with TLS" } else { "" },
            dev2.opts.device_id,
            dev2.opts.cpu_port,
            match dev2.pipeline() {
                Some(_) => String::new(),
                None => "; waiting for SetForwardingPipelineConfig".into(),
            }
        );
        crate::out::flush();
        let hk = tokio::spawn(server::housekeeping(dev2.clone()));
        // At the signal every stream ends (UNAVAILABLE) and the server stops taking
        // requests; connections still open after STOP_GRACE are dropped.
        let (fired, stopped) = tokio::sync::oneshot::channel::<()>();
        let dev3 = dev2.clone();
        let stop = async move {
            stop_signal(duration).await;
            tracing::info!("stopping: closing every stream");
            dev3.shutdown();
            let _ = fired.send(());
        };
        let mut builder = tonic::transport::Server::builder();
        if let Some(tls) = tls {
            builder = builder.tls_config(tls).map_err(|e| {
                let cause =
                    std::error::Error::source(&e).map_or(String::new(), |c| format!(": {c}"));
                format!("--tls-cert/--tls-key: {e}{cause}")
            })?;
        }
        let server = builder
            .add_service(server::grpc_service(dev2.clone()))
            .add_service(nevermiss_p4rt::queues::QueueService::new(queues))
            .serve_with_incoming_shutdown(incoming, stop);
        let grace = async {
            if stopped.await.is_ok() {
                tokio::time::sleep(STOP_GRACE).await;
            } else {
                std::future::pending::<()>().await;
            }
        };
        let r = tokio::select! {
            r = server => r.map_err(|e| format!("gRPC server: {e}")),
            () = grace => Ok(()),
        };
        hk.abort();
        r
    });
    // Whatever is left of the connections goes with the runtime.
    rt.shutdown_timeout(Duration::from_millis(100));
    served?;
    if let Some(report) = traffic.stop()? {
        out!("traffic ports:\n{}", report.render());
    }
    print_stats(&dev);
    let delays = dev.update_delays();
    print_delays(&delays);
    if let Some(path) = &args.update_log {
        write_update_log(path, &delays)?;
    }
    Ok(())
}

/// How long connections may take to close after the signal before they are dropped.
const STOP_GRACE: Duration = Duration::from_millis(300);

fn print_delays(delays: &[server::UpdateDelay]) {
    if delays.is_empty() {
        return;
    }
    let us = |v: [u64; 4]| {
        format!(
            "p50 {:.1}, p99 {:.1}, p99.99 {:.1}, max {:.1}",
            v[0] as f64 / 1e3,
            v[1] as f64 / 1e3,
            v[2] as f64 / 1e3,
            v[3] as f64 / 1e3
        )
    };
    let mut c: Vec<u64> = delays.iter().map(|d| d.d_control_ns).collect();
    let mut d: Vec<u64> = delays.iter().filter_map(|d| d.d_data_ns).collect();
    let mut a: Vec<u64> = delays.iter().filter_map(|d| d.d_all_ns()).collect();
    outln!("update delays (µs) over {} updates:", delays.len());
    if let Some(v) = server::percentiles(&mut c) {
        outln!("  d_control: {}", us(v));
    }
    match server::percentiles(&mut d) {
        Some(v) => outln!("  d_data ({} updates a packet used): {}", d.len(), us(v)),
        None => outln!("  d_data: no packet used an updated entry"),
    }
    if let Some(v) = server::percentiles(&mut a) {
        outln!("  d_all: {}", us(v));
    }
}

/// The CSV and HdrHistogram logs of `--update-log`.
fn write_update_log(path: &std::path::Path, delays: &[server::UpdateDelay]) -> Result<(), String> {
    let mut csv = String::from("received_ns,d_control_ns,d_data_ns,d_all_ns\n");
    for d in delays {
        let opt = |v: Option<u64>| v.map_or_else(String::new, |v| v.to_string());
        csv.push_str(&format!(
            "{},{},{},{}\n",
            d.received_ns,
            d.d_control_ns,
            opt(d.d_data_ns),
            opt(d.d_all_ns())
        ));
    }
    std::fs::write(path, csv).map_err(|e| format!("--update-log {}: {e}", path.display()))?;
    let series: [(&str, Vec<u64>); 3] = [
        ("d_control", delays.iter().map(|d| d.d_control_ns).collect()),
        (
            "d_data",
            delays.iter().filter_map(|d| d.d_data_ns).collect(),
        ),
        (
            "d_all",
            delays.iter().filter_map(|d| d.d_all_ns()).collect(),
        ),
    ];
    for (name, values) in series {
        let mut h = hdrhistogram::Histogram::<u64>::new(3).map_err(|e| e.to_string())?;
        for v in values {
            h.record(v.max(1)).map_err(|e| e.to_string())?;
        }
        let file = PathBuf::from(format!("{}.{name}.hlog", path.display()));
        nevermiss_bench::hdr::write_log(
            &file,
            &[format!("nevermiss serve: {name} per update, ns")],
            &[nevermiss_bench::hdr::Interval {
                tag: name.to_string(),
                start: std::time::Duration::ZERO,
                duration: std::time::Duration::ZERO,
                hist: &h,
            }],
        )
        .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// The traffic ports: a thread that runs them (`nevermiss run`'s loop) from the start to the
/// end, over whatever pipeline the device holds: a commit hands the new one over to the loop
/// between two batches (`nevermiss_runtime::handover`), the ports stay open. Interfaces run
/// at once (what arrives before the first pipeline is dropped, as BMv2 drops it); files and
/// the generator wait for the first pipeline. One loop's CPU port takes the PacketOuts.
struct Traffic {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<Result<Option<RunReport>, String>>>,
}

impl Traffic {
    fn start(dev: Arc<Device>, specs: Vec<PortSpec>, how: TrafficArgs) -> Traffic {
        let stop = Arc::new(AtomicBool::new(false));
        if specs.is_empty() {
            return Traffic { stop, thread: None };
        }
        let stop2 = stop.clone();
        let thread = std::thread::spawn(move || -> Result<Option<RunReport>, String> {
            let live = specs.iter().any(|s| s.is_live());
            while !live && dev.pipeline().is_none() {
                if stop2.load(Ordering::Relaxed) {
                    return Ok(None);
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            // Inputs read into memory first (--cores over files) cannot take PacketOuts.
            let receive = live || how.cores.is_none();
            let cpu = |w: usize| vec![dev.cpu_port(receive && w == 0)];
            let r = how.run_specs(&dev.handover, &specs, &cpu, Some(stop2), None)?;
            Ok(Some(r))
        });
        Traffic {
            stop,
            thread: Some(thread),
        }
    }

    /// Stops the traffic (outputs flushed) and returns its report.
    fn stop(mut self) -> Result<Option<RunReport>, String> {
        self.stop.store(true, Ordering::Relaxed);
        match self.thread.take() {
            Some(t) => t
                .join()
                .map_err(|_| "the traffic thread panicked".to_string())?,
            None => Ok(None),
        }
    }
}

/// SIGINT, SIGTERM or the end of `--duration`.
async fn stop_signal(duration: Option<u64>) {
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    let timer = async {
        match duration {
            Some(ns) => tokio::time::sleep(std::time::Duration::from_nanos(ns)).await,
            None => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {},
        _ = term => {},
        _ = timer => {},
    }
}

fn print_stats(dev: &Arc<Device>) {
    let s = dev
        .stats
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    outln!(
        "p4runtime: {} pipeline commits ({} keeping the forwarding state), {} writes ({} \
         updates, {} failed), {} reads, {} packet-outs, {} packet-ins, {} digest lists, {} \
         idle-timeout notifications, {} packets to ports not attached",
        s.commits,
        s.reconciles,
        s.writes,
        s.updates,
        s.failed_updates,
        s.reads,
        s.packet_outs,
        s.packet_ins,
        s.digest_lists,
        s.idle_notifications,
        s.unsent
    );
    if let Some(p) = dev.pipeline() {
        for (t, td) in p.sw.tables().zip(&p.sw.prog().tables) {
            let st = t.stats();
            outln!(
                "  {}: {} entries; hits {}, misses {}, inserts {}",
                td.name,
                t.len(),
                st.hits,
                st.misses,
                st.inserts
            );
        }
    }
}
