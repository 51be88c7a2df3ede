//! Generator speed: two-phase frames into a reused batch of 256 (target ≥ 50 M packets/s on one core).
//!
//! Time is the benchmark thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`), not wall-clock time, so
//! that other processes sharing the machine's cores do not inflate the numbers.

use criterion::measurement::{Measurement, ValueFormatter};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use nevermiss_io::gen::{parse_gen_spec, TwoPhaseGen, TwoPhaseKeys};
use nevermiss_io::Batch;
use std::hint::black_box;

/// CPU time of the calling thread, in nanoseconds.
struct ThreadCpuTime;

fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant the kernel knows.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

struct NsFormatter;

impl ValueFormatter for NsFormatter {
    fn scale_values(&self, typical: f64, values: &mut [f64]) -> &'static str {
        let (factor, unit) = if typical < 1e3 {
            (1.0, "ns")
        } else if typical < 1e6 {
            (1e-3, "µs")
        } else if typical < 1e9 {
            (1e-6, "ms")
        } else {
            (1e-9, "s")
        };
        for v in values {
            *v *= factor;
        }
        unit
    }

    fn scale_throughputs(&self, _typical: f64, t: &Throughput, values: &mut [f64]) -> &'static str {
        let n = match t {
            Throughput::Elements(n) | Throughput::Bytes(n) | Throughput::BytesDecimal(n) => {
                *n as f64
            }
            Throughput::Bits(n) => *n as f64,
        };
        for v in values {
            *v = n * 1e9 / *v / 1e6;
        }
        "Melem/s (CPU time)"
    }

    fn scale_for_machines(&self, _values: &mut [f64]) -> &'static str {
        "ns"
    }
}

impl Measurement for ThreadCpuTime {
    type Intermediate = u64;
    type Value = u64;
    fn start(&self) -> u64 {
        thread_cpu_ns()
    }
    fn end(&self, i: u64) -> u64 {
        thread_cpu_ns().saturating_sub(i)
    }
    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }
    fn zero(&self) -> u64 {
        0
    }
    fn to_f64(&self, v: &u64) -> f64 {
        *v as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        &NsFormatter
    }
}

fn bench_gen(c: &mut Criterion<ThreadCpuTime>) {
    let mut group = c.benchmark_group("two-phase");
    group.throughput(Throughput::Elements(256));
    for (name, spec) in [
        // The paper's setup: key in the IPv4 destination (header checksum recomputed per packet).
        (
            "ipv4.dst m=65536 r=100",
            "two-phase,m=65536,r=100,count=100000000,field=ipv4.dst",
        ),
        // Key outside the IPv4 header: no checksum work.
        (
            "udp.dport m=60000 r=0",
            "two-phase,m=60000,r=0,count=100000000,field=udp.dport",
        ),
        // Not a power of two: cycle walking skips about a quarter of the LCG states.
        (
            "payload m=100000 r=10",
            "two-phase,m=100000,r=10,count=100000000,field=payload",
        ),
    ] {
        let fresh = TwoPhaseGen::new(parse_gen_spec(spec, 0).unwrap()).unwrap();
        let mut g = fresh.clone();
        let mut batch = Batch::new();
        group.bench_function(format!("fill batch/{name}"), |b| {
            b.iter(|| {
                if g.is_done() {
                    g = fresh.clone();
                }
                batch.clear();
                black_box(g.fill(&mut batch));
                black_box(batch[0].data()[33]);
            })
        });
    }
    group.finish();

    let mut group = c.benchmark_group("keys only");
    group.throughput(Throughput::Elements(1024));
    let cfg = parse_gen_spec("two-phase,m=100000,r=100,count=100000000,field=payload", 0).unwrap();
    let mut keys = TwoPhaseKeys::new(&cfg).unwrap();
    group.bench_function("m=100000 r=100", |b| {
        b.iter(|| {
            let mut acc = 0u64;
            for _ in 0..1024 {
                match keys.next() {
                    Some(e) => acc ^= e.key,
                    None => keys = TwoPhaseKeys::new(&cfg).unwrap(),
                }
            }
            black_box(acc)
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().with_measurement(ThreadCpuTime);
    targets = bench_gen
}
criterion_main!(benches);
