//! Packets per second of the interpreter on one core, without packet I/O: the PNA forwarder
//! (two routes) and the add-on-miss example over the paper's two-phase workload (65536 keys,
//! a new key every 100th packet in phase 2). Run: `cargo bench -p nevermiss-runtime`.
//! Criterion's throughput is packets per second (per-packet ns = 1e9 / throughput).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use nevermiss_io::gen::{TwoPhaseConfig, TwoPhaseGen};
use nevermiss_io::Packet;
use nevermiss_runtime::{Config, Switch, Worker};
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

fn example(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name)
}

/// `n` packets of the two-phase workload (keys in the IPv4 destination).
fn workload(m: u64, r: u64, n: u64) -> Vec<Packet> {
    let cfg = TwoPhaseConfig {
        m,
        r,
        count: n,
        ..TwoPhaseConfig::default()
    };
    let mut g = TwoPhaseGen::new(cfg).unwrap();
    let mut out = Vec::new();
    let mut b = nevermiss_io::Batch::with_capacity(256);
    while !g.is_done() {
        b.clear();
        g.fill(&mut b);
        out.extend(b.iter().cloned());
    }
    out
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("pps");
    g.measurement_time(Duration::from_secs(5));
    let pkts = workload(65_536, 100, 262_144);
    g.throughput(Throughput::Elements(pkts.len() as u64));

    let fwd = build(
        &example("pna-forwarder.p4"),
        &Default::default(),
        Config::default(),
    )
    .unwrap();
    let entries = std::fs::read_to_string(example("pna-forwarder.entries")).unwrap();
    nevermiss_runtime::stf::run_stf(fwd.clone(), &entries).unwrap();
    let mut w = Worker::new(fwd, 0);
    g.bench_function("pna-forwarder", |b| {
        b.iter(|| {
            for p in &pkts {
                black_box(w.process(p.data(), p.port, p.ts_ns).len());
            }
        })
    });

    g.bench_function("pna-add-on-miss (two-phase)", |b| {
        b.iter_with_setup(
            || {
                let sw = build(
                    &example("pna-add-on-miss.p4"),
                    &Default::default(),
                    Config::default(),
                )
                .unwrap();
                Worker::new(sw, 0)
            },
            |mut w| {
                for p in &pkts {
                    black_box(w.process(p.data(), p.port, p.ts_ns).len());
                }
            },
        )
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

/// A switch of the P4 program at `path`.
fn build(
    path: &Path,
    opts: &p4_front::driver::Options,
    config: Config,
) -> Result<Arc<Switch>, String> {
    let prog = p4_ir::lower::source::compile_file(path, opts).map_err(|e| e.to_string())?;
    Switch::new(prog, config)
        .map(Arc::new)
        .map_err(|e| e.to_string())
}
