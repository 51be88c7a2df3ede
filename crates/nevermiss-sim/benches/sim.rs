//! Packets per second of the hazard detector and the locking scheme (release mode):
//! `cargo bench -p nevermiss-sim --bench sim`.
//! The trace is synthetic with CHI15's packet-size distribution when `shared/data/trace-stats`
//! is found beside the repository (else a 40 % 64 B / 60 % 1500 B mix), 100 k flows, Zipf 1.0.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use nevermiss_sim::hazard;
use nevermiss_sim::lock::{self, LockConfig};
use nevermiss_sim::model::{schedule, ModelConfig};
use nevermiss_sim::synth::SynthSpec;
use nevermiss_sim::{HashMode, KeySpec};
use std::hint::black_box;

const PACKETS: u64 = 2_000_000;

fn spec() -> SynthSpec {
    let dist = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../data/trace-stats/chi-15_pkt_size_pmf.dat"
    );
    format!("dist={dist},flows=100000,zipf=1.0,packets={PACKETS},seed=1")
        .parse()
        .expect("the bench's trace spec")
}

fn benches(c: &mut Criterion) {
    let keys = [KeySpec::Global, KeySpec::FiveTuple];
    let trace = spec().generate("bench", &keys, HashMode::Crc16).unwrap();
    let sched = schedule(&trace, &ModelConfig::default());

    let mut g = c.benchmark_group("hazard_detector");
    g.throughput(Throughput::Elements(PACKETS));
    g.sample_size(20);
    for (k, col) in keys.iter().zip(&trace.keys) {
        g.bench_with_input(BenchmarkId::new("N1..30", k), &col.crc, |b, crc| {
            b.iter(|| black_box(hazard::detect(crc, &sched, 30, 1 << 16, &|_| {})))
        });
    }
    g.finish();

    let mut g = c.benchmark_group("lock");
    g.throughput(Throughput::Elements(PACKETS));
    g.sample_size(10);
    let cfg = LockConfig {
        n: 30,
        queues: 4,
        qlen: Some(100),
        w_bits: 4,
    };
    for (k, col) in keys.iter().zip(&trace.keys) {
        g.bench_with_input(
            BenchmarkId::new("N30_Q4_Qlen100_W4", k),
            &col.crc,
            |b, crc| b.iter(|| black_box(lock::simulate(crc, &sched, &cfg, &|_| {}))),
        );
    }
    g.finish();
}

criterion_group!(sim, benches);
criterion_main!(sim);
