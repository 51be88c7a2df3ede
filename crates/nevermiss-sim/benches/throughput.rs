//! Packets per second per core, measured on the thread's own CPU time
//! (`/proc/thread-self/schedstat`) as well as wall time, so that the numbers stay meaningful on a
//! shared, loaded machine: `cargo bench -p nevermiss-sim --bench throughput`.
//! Same trace as the criterion bench `sim`: CHI15 packet sizes, 100 k flows, Zipf 1.0.

use nevermiss_sim::hazard;
use nevermiss_sim::lock::{self, LockConfig};
use nevermiss_sim::model::{schedule, ModelConfig};
use nevermiss_sim::synth::SynthSpec;
use nevermiss_sim::{HashMode, KeySpec};
use std::hint::black_box;
use std::time::Instant;

const PACKETS: u64 = 2_000_000;
const RUNS: usize = 7;

fn cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

fn spec() -> SynthSpec {
    let dist = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../data/trace-stats/chi-15_pkt_size_pmf.dat"
    );
    format!("dist={dist},flows=100000,zipf=1.0,packets={PACKETS},seed=1")
        .parse()
        .expect("the bench's trace spec")
}

fn stats(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[0], v[v.len() - 1])
}

fn measure(name: &str, reps: u32, mut f: impl FnMut()) {
    let pk = PACKETS as f64 * f64::from(reps);
    f(); // warm up
    let mut cpu = Vec::new();
    let mut wall = Vec::new();
    for _ in 0..RUNS {
        let c0 = cpu_ns();
        let w0 = Instant::now();
        for _ in 0..reps {
            f();
        }
        let w = w0.elapsed().as_secs_f64();
        wall.push(pk / w / 1e6);
        if let (Some(a), Some(b)) = (c0, cpu_ns()) {
            cpu.push(pk / ((b - a) as f64 / 1e9) / 1e6);
        }
    }
    let (wm, wl, wh) = stats(wall);
    if cpu.is_empty() {
        println!("{name:<40} wall {wm:8.1} M pkt/s (min {wl:.1}, max {wh:.1})");
    } else {
        let (cm, cl, ch) = stats(cpu);
        println!(
            "{name:<40} cpu {cm:8.1} M pkt/s (min {cl:.1}, max {ch:.1})   wall {wm:8.1} (min {wl:.1}, max {wh:.1})"
        );
    }
}

fn main() {
    // `cargo bench` passes --bench; `cargo test --benches` passes nothing we need.
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let keys = [KeySpec::Global, KeySpec::FiveTuple];
    let trace = spec().generate("bench", &keys, HashMode::Crc16).unwrap();
    let sched = schedule(&trace, &ModelConfig::default());
    println!(
        "{PACKETS} packets, {} batches; medians of {RUNS} runs (M packets/s per core)",
        sched.batches.len()
    );
    for (k, col) in keys.iter().zip(&trace.keys) {
        measure(
            &format!("hazard detector, N=1..30 at once, {k}"),
            50,
            || {
                black_box(hazard::detect(&col.crc, &sched, 30, 1 << 16, &|_| {}));
            },
        );
    }
    for (k, col) in keys.iter().zip(&trace.keys) {
        for (q, ql) in [(4, Some(100)), (4, None)] {
            let cfg = LockConfig {
                n: 30,
                queues: q,
                qlen: ql,
                w_bits: 4,
            };
            let ql = ql.map_or("inf".to_string(), |x| x.to_string());
            measure(&format!("lock N=30 Q={q} Q_len={ql} W=4, {k}"), 1, || {
                black_box(lock::simulate(&col.crc, &sched, &cfg, &|_| {}));
            });
        }
    }
}
