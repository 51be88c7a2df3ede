//! Multi-core scaling of one shared exact table (issue 4: 2 workers ≥ 1.8× the throughput of 1
//! worker at insertion rates 1, 10 and 100). Each worker thread (pinned to its own CPU) runs the
//! learner's data path on its own packet stream: a batched lookup of 32 keys, then `add_on_miss`
//! of every miss; every r-th packet carries a new key, the others hit keys of the prefilled half.
//! One worker and two workers run on a fresh table each time, alternating, in the same process,
//! on the same packets (one worker runs both streams): the same keys are added in both runs.
//!
//! Run: `cargo bench -p nevermiss-tables --bench scaling` (env `NEVERMISS_SCALING_REPS`, default 5).
//! Output: one `RESULT` line per (rate, workers) with the median ns per packet per worker and the
//! total Mpps, and one `RATIO` line per rate: median over repetitions of Mpps(2) / Mpps(1).

use std::hint::black_box;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use nevermiss_tables::*;

/// Table size (in DRAM, like the 2^20 goal).
const N: usize = 1 << 20;
/// Packets per worker per run at insertion rate r: `min(P * r, P_MAX)`; at any rate two workers
/// add at most 0.4 N keys to the half-full table.
const P: usize = 200_000;
const P_MAX: usize = 1_000_000;
const B: usize = 32;
const KL: usize = 13;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn key(r: &mut Rng) -> [u8; KL] {
    let (a, b) = (r.next(), r.next());
    let mut k = [0u8; KL];
    k[..8].copy_from_slice(&a.to_be_bytes());
    k[8..12].copy_from_slice(&(b as u32).to_be_bytes());
    k[12] = 6;
    k
}

fn table(old: &[[u8; KL]]) -> Table {
    let t = Table::new(
        TableSpec::new(
            "flows",
            ["src", "dst", "sport", "dport", "proto"]
                .iter()
                .zip([32, 32, 16, 16, 8])
                .map(|(n, w)| KeySpec::new(*n, w, MatchKind::Exact))
                .collect(),
            N,
        )
        .with_add_on_miss(true)
        .with_max_params_bytes(8),
    )
    .expect("table");
    for (i, k) in old.iter().enumerate() {
        assert!(t
            .add_on_miss(k, &ActionData::new(1, (i as u64).to_le_bytes()), 0, 0)
            .is_added());
    }
    t
}

/// Worker `w`'s packets at insertion rate `rate`: every `rate`-th a new key (distinct across
/// workers), the others random keys of `old`.
fn stream(old: &[[u8; KL]], rate: usize, w: usize, seed: u64) -> Vec<u8> {
    let p = (P * rate).min(P_MAX);
    let mut hits = Rng(seed ^ (w as u64 + 1).wrapping_mul(0x9e37_79b9));
    let mut fresh = Rng(0xf00d ^ seed ^ (w as u64 + 7).wrapping_mul(0x1234_5678_9abc));
    (0..p)
        .flat_map(|j| {
            if j % rate == 0 {
                let mut k = key(&mut fresh);
                k[12] = 17 + w as u8; // never equal to an old key (proto 6) or another worker's
                k
            } else {
                old[hits.next() as usize % old.len()]
            }
        })
        .collect()
}

fn pin(cpu: usize) {
    #[cfg(target_os = "linux")]
    // SAFETY: a zeroed cpu_set_t is a valid empty set; CPU_SET writes inside it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = cpu;
}

/// One run: `workers` threads on a fresh table; returns (wall time, packets, inserts added).
fn run(old: &[[u8; KL]], streams: &[Vec<u8>], workers: usize) -> (Duration, usize, u64) {
    let t = table(old);
    let barrier = Barrier::new(workers);
    let data = ActionData::new(2, [9u8; 8]);
    let times: Vec<(Duration, u64)> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..workers)
            .map(|w| {
                // One worker runs both streams one after the other, so both runs add the same
                // keys and the table goes through the same fill levels.
                let mine: Vec<&Vec<u8>> = streams.iter().skip(w).step_by(workers).collect();
                let (t, barrier, data) = (&t, &barrier, &data);
                s.spawn(move || {
                    pin(w);
                    let mut out = vec![Lookup::default(); B];
                    let mut added = 0u64;
                    barrier.wait();
                    let t0 = Instant::now();
                    for batch in mine.iter().flat_map(|s| s.chunks_exact(B * KL)) {
                        let hits = t.lookup_batch(batch, 0, &mut out).expect("batch");
                        if hits < B {
                            for (k, o) in batch.chunks_exact(KL).zip(&out) {
                                if o.hit.is_none() {
                                    added += t.add_on_miss(k, data, 0, 0).is_added() as u64;
                                }
                            }
                        }
                        black_box(&out);
                    }
                    (t0.elapsed(), added)
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().expect("worker")).collect()
    });
    let wall = times.iter().map(|x| x.0).max().unwrap_or_default();
    let pkts = streams.iter().map(|s| s.len() / KL).sum();
    (wall, pkts, times.iter().map(|x| x.1).sum())
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn main() {
    // `cargo bench` passes `--bench`; a name filter may follow (ignored).
    let reps: usize = std::env::var("NEVERMISS_SCALING_REPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let mut r = Rng(0xabad_cafe);
    let old: Vec<[u8; KL]> = (0..N / 2).map(|_| key(&mut r)).collect();
    for rate in [1usize, 10, 100] {
        let streams: Vec<Vec<u8>> = (0..2).map(|w| stream(&old, rate, w, 0x51)).collect();
        let p = streams[0].len() / KL;
        let expect = p.div_ceil(rate) as u64;
        let mut mpps = [Vec::new(), Vec::new()];
        let mut ns = [Vec::new(), Vec::new()];
        let mut ratios = Vec::new();
        for rep in 0..reps {
            let mut m = [0.0; 2];
            let order = if rep % 2 == 0 { [1, 2] } else { [2, 1] };
            for workers in order {
                let (wall, pkts, added) = run(&old, &streams, workers);
                assert_eq!(added, expect * 2, "every new key added once");
                let x = pkts as f64 / wall.as_secs_f64() / 1e6;
                m[workers - 1] = x;
                mpps[workers - 1].push(x);
                ns[workers - 1].push(wall.as_nanos() as f64 * workers as f64 / (2 * p) as f64);
            }
            ratios.push(m[1] / m[0]);
        }
        for w in 0..2 {
            println!(
                "RESULT scaling/rate_{rate}/workers_{} ns_per_pkt_per_worker={:.1} mpps={:.2}",
                w + 1,
                median(&mut ns[w]),
                median(&mut mpps[w])
            );
        }
        let lo = ratios.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = ratios.iter().copied().fold(0.0, f64::max);
        println!(
            "RATIO scaling/rate_{rate} two_over_one={:.2} (min {lo:.2} max {hi:.2}, {reps} reps)",
            median(&mut ratios)
        );
    }
}
