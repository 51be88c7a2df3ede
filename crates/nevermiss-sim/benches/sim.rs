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
use std::path::PathBuf;

const PACKETS: u64 = 2_000_000;

fn spec() -> SynthSpec {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dist = here
        .ancestors()
        .map(|a| a.join("shared/data/trace-stats/chi-15_pkt_size_pmf.dat"))
        .chain(std::iter::once(PathBuf::from(
            "/work/shared/data/trace-stats/chi-15_pkt_size_pmf.dat",
        )))
        .find(|p| p.is_file());
    let sizes = match dist {
        Some(p) => format!("dist={}", p.display()),
        None => {
            let p = std::env::temp_dir().join("nevermiss-bench-mix.dat");
            std::fs::write(&p, "64 0.4\n1500 0.6\n").unwrap();
            format!("dist={}", p.display())
        }
    };
    format!("{sizes},flows=100000,zipf=1.0,packets={PACKETS},seed=1")
        .parse()
        .unwrap()
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
