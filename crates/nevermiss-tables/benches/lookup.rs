//! The exact engine at 2^16 and 2^20 entries against hashbrown and papaya (lookups one by one and
//! batched, in-place updates, add-on-miss inserts dense, rare and very rare); a 16-bit exact key
//! on the direct array against the same table on the cuckoo hash (`narrow_*`); then lpm,
//! ternary, range and optional lookups at 10^3..10^5 entries. Multi-core scaling: `benches/scaling.rs`.
//! Run: `cargo bench -p nevermiss-tables` (one group: `cargo bench -p nevermiss-tables -- exact`).
//! Criterion reports time per iteration and, via `Throughput::Elements`, operations per second;
//! ns per operation = 1e9 / throughput (exact benchmarks: 32 operations per iteration).

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use nevermiss_tables::*;

const SIZES: [usize; 3] = [1_000, 10_000, 100_000];

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// 5-tuple key: src ip, dst ip, src port, dst port, proto (13 bytes).
fn flow_key(r: &mut Rng) -> Vec<u8> {
    let a = r.next();
    let b = r.next();
    let mut k = Vec::with_capacity(13);
    k.extend_from_slice(&(a as u32).to_be_bytes());
    k.extend_from_slice(&((a >> 32) as u32).to_be_bytes());
    k.extend_from_slice(&(b as u16).to_be_bytes());
    k.extend_from_slice(&((b >> 16) as u16).to_be_bytes());
    k.push(6);
    k
}

fn flow_spec(kind: MatchKind) -> Vec<KeySpec> {
    vec![
        KeySpec::new("src", 32, kind),
        KeySpec::new("dst", 32, kind),
        KeySpec::new("sport", 16, kind),
        KeySpec::new("dport", 16, kind),
        KeySpec::new("proto", 8, kind),
    ]
}

fn split(k: &[u8]) -> [&[u8]; 5] {
    [&k[0..4], &k[4..8], &k[8..10], &k[10..12], &k[12..13]]
}

/// The benchmark group; `NEVERMISS_BENCH_QUICK=1` shortens it (10 samples, 0.2 s warm-up, 0.6 s
/// measurement) so that `scripts/bench-tables.sh` can repeat the whole suite several times.
fn config(c: &mut Criterion) -> criterion::BenchmarkGroup<'_, criterion::measurement::WallTime> {
    let mut g = c.benchmark_group("tables");
    if std::env::var_os("NEVERMISS_BENCH_QUICK").is_some() {
        g.sample_size(10)
            .warm_up_time(Duration::from_millis(200))
            .measurement_time(Duration::from_millis(600));
    } else {
        g.sample_size(20)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(2));
    }
    g
}

/// Sizes of the exact-table comparison: in L2/L3 (2^16) and in DRAM (2^20).
const EXACT_SIZES: [usize; 2] = [1 << 16, 1 << 20];
/// Keys in the precomputed lookup stream (read sequentially, so the stream itself stays cheap).
const STREAM: usize = 1 << 16;
const B: usize = 32;

fn flat_key(r: &mut Rng) -> [u8; 13] {
    flow_key(r).try_into().unwrap()
}

type Hb = hashbrown::HashMap<[u8; 13], [u8; 8]>;
type Pap = papaya::HashMap<[u8; 13], [u8; 8], hashbrown::DefaultHashBuilder>;

fn learner(n: usize) -> Table {
    Table::new(
        TableSpec::new("flows", flow_spec(MatchKind::Exact), n)
            .with_add_on_miss(true)
            .with_max_params_bytes(8),
    )
    .unwrap()
}

fn params(i: usize) -> [u8; 8] {
    (i as u64).to_le_bytes()
}

/// A full table of `n` random flows, its keys, and a stream of `STREAM` of those keys in random
/// order, packed back to back.
fn filled(n: usize, seed: u64) -> (Table, Vec<[u8; 13]>, Vec<u8>) {
    let t = learner(n);
    let mut r = Rng(seed);
    let keys: Vec<[u8; 13]> = (0..n).map(|_| flat_key(&mut r)).collect();
    for (i, k) in keys.iter().enumerate() {
        assert!(t
            .add_on_miss(k, &ActionData::new(1, params(i)), 0, 0)
            .is_added());
    }
    let stream: Vec<u8> = (0..STREAM)
        .flat_map(|_| keys[r.next() as usize % n])
        .collect();
    (t, keys, stream)
}

/// The exact engine against hashbrown (one thread) and papaya (concurrent): lookups one by one
/// and in batches of 32, on a full table; every reference stores the same keys and values.
fn exact(c: &mut Criterion) {
    let mut g = config(c);
    for n in EXACT_SIZES {
        let (t, keys, stream) = filled(n, 0x1234_5678 + n as u64);
        eprintln!(
            "exact n={n}: memory {} B = {:.1} B/entry (cell {} B); seed model {:.1} B/entry",
            t.memory_bytes(),
            t.memory_bytes() as f64 / n as f64,
            t.cell_bytes(),
            128.0 / n as f64 + (13 + 8 + 72) as f64,
        );
        let mut hb = Hb::with_capacity(n);
        let pap = Pap::with_capacity_and_hasher(n, Default::default());
        for (i, k) in keys.iter().enumerate() {
            hb.insert(*k, params(i));
            pap.pin().insert(*k, params(i));
        }
        g.throughput(Throughput::Elements(B as u64));
        g.bench_with_input(BenchmarkId::new("exact_single", n), &n, |b, _| {
            let mut j = 0;
            let mut out = Lookup::default();
            b.iter(|| {
                j = (j + B * 13) % stream.len();
                let mut h = 0;
                for k in stream[j..j + B * 13].chunks_exact(13) {
                    h += t.lookup_into(k, 0, &mut out) as usize;
                }
                black_box(h)
            })
        });
        // The interpreter's pattern (`Worker::process_batch`): the buckets of 32 keys prefetched,
        // then their likely entries, then each key looked up on its own.
        g.bench_with_input(BenchmarkId::new("exact_prefetched32", n), &n, |b, _| {
            let mut j = 0;
            let mut out = Lookup::default();
            let mut pf = Vec::with_capacity(B);
            b.iter(|| {
                j = (j + B * 13) % stream.len();
                let keys = &stream[j..j + B * 13];
                pf.clear();
                pf.extend(keys.chunks_exact(13).filter_map(|k| t.prefetch(k)));
                for p in &pf {
                    t.prefetch_entry(*p);
                }
                let mut h = 0;
                for k in keys.chunks_exact(13) {
                    h += t.lookup_into(k, 0, &mut out) as usize;
                }
                black_box(h)
            })
        });
        // The same with the hashed calls: each key hashed once for its prefetch and lookup.
        g.bench_with_input(
            BenchmarkId::new("exact_prefetched32_hashed", n),
            &n,
            |b, _| {
                let mut j = 0;
                let mut out = Lookup::default();
                let mut pf = Vec::with_capacity(B);
                let mut hs = [0u64; B];
                b.iter(|| {
                    j = (j + B * 13) % stream.len();
                    let keys = &stream[j..j + B * 13];
                    pf.clear();
                    for (h, k) in hs.iter_mut().zip(keys.chunks_exact(13)) {
                        *h = t.hash_key(k);
                        pf.extend(t.prefetch_hashed(*h));
                    }
                    for p in &pf {
                        t.prefetch_entry(*p);
                    }
                    let mut n = 0;
                    for (h, k) in hs.iter().zip(keys.chunks_exact(13)) {
                        n += t.lookup_exact_hashed(k, *h, 0, &mut out) as usize;
                    }
                    black_box(n)
                })
            },
        );
        g.bench_with_input(BenchmarkId::new("exact_batch32", n), &n, |b, _| {
            let mut j = 0;
            let mut out = vec![Lookup::default(); B];
            b.iter(|| {
                j = (j + B * 13) % stream.len();
                black_box(t.lookup_batch(&stream[j..j + B * 13], 0, &mut out).unwrap())
            })
        });
        g.bench_with_input(BenchmarkId::new("hashbrown_get", n), &n, |b, _| {
            let mut j = 0;
            b.iter(|| {
                j = (j + B * 13) % stream.len();
                let mut h = 0u64;
                for k in stream[j..j + B * 13].chunks_exact(13) {
                    let k: &[u8; 13] = k.try_into().unwrap();
                    h += hb.get(k).map_or(0, |v| v[0] as u64);
                }
                black_box(h)
            })
        });
        g.bench_with_input(BenchmarkId::new("papaya_get", n), &n, |b, _| {
            let mut j = 0;
            b.iter(|| {
                j = (j + B * 13) % stream.len();
                let m = pap.pin();
                let mut h = 0u64;
                for k in stream[j..j + B * 13].chunks_exact(13) {
                    let k: &[u8; 13] = k.try_into().unwrap();
                    h += m.get(k).map_or(0, |v| v[0] as u64);
                }
                black_box(h)
            })
        });
        // In-place data-plane update of every hit of a batch (PNA: an action writing back to its
        // entry), after the batched lookup; compare with exact_batch32.
        g.bench_with_input(BenchmarkId::new("exact_batch32_update", n), &n, |b, _| {
            let mut j = 0;
            let mut out = vec![Lookup::default(); B];
            b.iter(|| {
                j = (j + B * 13) % stream.len();
                t.lookup_batch(&stream[j..j + B * 13], 0, &mut out).unwrap();
                for l in &out {
                    if let Some(h) = l.hit {
                        t.update_params(h, &[l.data.params[0].wrapping_add(1); 8]);
                    }
                }
            })
        });
        g.bench_with_input(BenchmarkId::new("hashbrown_get_update", n), &n, |b, _| {
            let mut j = 0;
            b.iter(|| {
                j = (j + B * 13) % stream.len();
                for k in stream[j..j + B * 13].chunks_exact(13) {
                    let k: &[u8; 13] = k.try_into().unwrap();
                    if let Some(v) = hb.get_mut(k) {
                        v[0] = v[0].wrapping_add(1);
                    }
                }
            })
        });
        drop(t);
        drop(pap);
        drop(hb);
        inserts(&mut g, n);
    }
    g.finish();
}

/// A learner table kept between 50 % and 95 % full: fresh keys are added until 95 %, then the
/// table is rebuilt at 50 % outside the timed part.
struct Bed {
    t: Table,
    r: Rng,
    added: usize,
    n: usize,
    /// The keys of the initial half, for hits.
    old: Vec<[u8; 13]>,
}

impl Bed {
    fn new(n: usize) -> Bed {
        let t = learner(n);
        let mut r = Rng(0x5eed + n as u64);
        let old: Vec<[u8; 13]> = (0..n / 2).map(|_| flat_key(&mut r)).collect();
        for (i, k) in old.iter().enumerate() {
            t.add_on_miss(k, &ActionData::new(1, params(i)), 0, 0);
        }
        Bed {
            t,
            r,
            added: n / 2,
            n,
            old,
        }
    }

    /// `B` fresh keys, rebuilding the table first when it would pass 95 %.
    fn fresh(&mut self) -> Vec<u8> {
        if self.added + B > self.n * 95 / 100 {
            *self = Bed::new(self.n);
        }
        self.added += B;
        (0..B).flat_map(|_| flat_key(&mut self.r)).collect()
    }

    /// `B - new` keys present in the table (random) followed by `new` fresh keys.
    fn mixed(&mut self, new: usize) -> Vec<u8> {
        if self.added + new > self.n * 95 / 100 {
            *self = Bed::new(self.n);
        }
        self.added += new;
        let mut v: Vec<u8> = (0..B - new)
            .flat_map(|_| self.old[self.r.next() as usize % self.old.len()])
            .collect();
        v.extend((0..new).flat_map(|_| flat_key(&mut self.r)));
        v
    }
}

/// Timed `iters` runs of `f` on keys from `bed`: `B` fresh ones if `new` is `B`, else `B - new`
/// present ones followed by `new` fresh ones.
fn timed(iters: u64, bed: &mut Bed, new: usize, mut f: impl FnMut(&Table, &[u8])) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        let keys = if new == B {
            bed.fresh()
        } else {
            bed.mixed(new)
        };
        let t0 = std::time::Instant::now();
        f(&bed.t, &keys);
        total += t0.elapsed();
    }
    total
}

fn inserts(g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>, n: usize) {
    let data = ActionData::new(1, [7u8; 8]);
    let mut bed = Bed::new(n);
    let mut out = vec![Lookup::default(); B];
    // The learner's path: a batched lookup of 32 new keys (all miss, not timed), then
    // add_on_miss of each (timed): the cost of one insert whose bucket the lookup brought in.
    g.bench_with_input(BenchmarkId::new("exact_add_after_miss", n), &n, |b, _| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let keys = bed.fresh();
                bed.t.lookup_batch(&keys, 0, &mut out).unwrap();
                let t0 = std::time::Instant::now();
                for k in keys.chunks_exact(13) {
                    black_box(bed.t.add_on_miss(k, &data, 0, 0));
                }
                total += t0.elapsed();
            }
            total
        })
    });
    // The same with the hashed call (the hash, computed before the add, is timed too).
    g.bench_with_input(
        BenchmarkId::new("exact_add_after_miss_hashed", n),
        &n,
        |b, _| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let keys = bed.fresh();
                    bed.t.lookup_batch(&keys, 0, &mut out).unwrap();
                    let t0 = std::time::Instant::now();
                    for k in keys.chunks_exact(13) {
                        let h = bed.t.hash_key(k);
                        black_box(bed.t.add_on_miss_hashed(k, h, 1, &[7u8; 8], 0, 0));
                    }
                    total += t0.elapsed();
                }
                total
            })
        },
    );
    // Rare inserts: a batch of 31 hits and 1 new key (not timed), then the add of that key
    // alone (timed, including ~20-40 ns of clock reads; see `clock_overhead`).
    g.throughput(Throughput::Elements(1));
    g.bench_with_input(BenchmarkId::new("exact_add_rare", n), &n, |b, _| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let keys = bed.mixed(1);
                bed.t.lookup_batch(&keys, 0, &mut out).unwrap();
                let t0 = std::time::Instant::now();
                black_box(bed.t.add_on_miss(&keys[(B - 1) * 13..], &data, 0, 0));
                total += t0.elapsed();
            }
            total
        })
    });
    // Very rare inserts (issue 4: insertion rate 100000): 100000 hits in batches of 32 (not
    // timed, they evict the insert path's code and data from the caches), then a batch with one
    // new key and the add of that key (timed, clock reads included as above).
    g.bench_with_input(BenchmarkId::new("exact_add_rare100k", n), &n, |b, _| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                for _ in 0..100_000 / B {
                    let keys = bed.mixed(0);
                    black_box(bed.t.lookup_batch(&keys, 0, &mut out).unwrap());
                }
                let keys = bed.mixed(1);
                bed.t.lookup_batch(&keys, 0, &mut out).unwrap();
                let t0 = std::time::Instant::now();
                black_box(bed.t.add_on_miss(&keys[(B - 1) * 13..], &data, 0, 0));
                total += t0.elapsed();
            }
            total
        })
    });
    g.bench_with_input(BenchmarkId::new("clock_overhead", n), &n, |b, _| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let t0 = std::time::Instant::now();
                total += black_box(t0).elapsed();
            }
            total
        })
    });
    g.throughput(Throughput::Elements(B as u64));
    // The batched lookup on the same table (32 present keys), the reference for the inserts.
    g.bench_with_input(BenchmarkId::new("exact_hits_batch32", n), &n, |b, _| {
        b.iter_custom(|iters| {
            timed(iters, &mut bed, 0, |t, keys| {
                black_box(t.lookup_batch(keys, 0, &mut out).unwrap());
            })
        })
    });
    // add_on_miss without a preceding lookup (the key's bucket is not in cache).
    g.bench_with_input(BenchmarkId::new("exact_add_cold", n), &n, |b, _| {
        b.iter_custom(|iters| {
            timed(iters, &mut bed, B, |t, keys| {
                for k in keys.chunks_exact(13) {
                    black_box(t.add_on_miss(k, &data, 0, 0));
                }
            })
        })
    });
    let mut hbed = (Hb::with_capacity(n), Rng(0xfeed), 0usize);
    g.bench_with_input(BenchmarkId::new("hashbrown_insert", n), &n, |b, _| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                if hbed.2 + B > n * 95 / 100 {
                    hbed = (Hb::with_capacity(n), Rng(0xfeed), 0);
                }
                let keys: Vec<[u8; 13]> = (0..B).map(|_| flat_key(&mut hbed.1)).collect();
                hbed.2 += B;
                let t0 = std::time::Instant::now();
                for k in keys {
                    hbed.0.insert(k, [7; 8]);
                }
                total += t0.elapsed();
            }
            total
        })
    });
    let new_pap = || Pap::with_capacity_and_hasher(n, Default::default());
    let mut pbed = (new_pap(), Rng(0xfeed), 0usize);
    g.bench_with_input(BenchmarkId::new("papaya_insert", n), &n, |b, _| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                if pbed.2 + B > n * 95 / 100 {
                    pbed = (new_pap(), Rng(0xfeed), 0);
                }
                let keys: Vec<[u8; 13]> = (0..B).map(|_| flat_key(&mut pbed.1)).collect();
                pbed.2 += B;
                let t0 = std::time::Instant::now();
                let m = pbed.0.pin();
                for k in keys {
                    m.insert(k, [7; 8]);
                }
                total += t0.elapsed();
            }
            total
        })
    });
}

fn lpm(c: &mut Criterion) {
    let mut g = config(c);
    g.throughput(Throughput::Elements(1));
    for n in SIZES {
        let t = Table::new(
            TableSpec::new("routes", vec![KeySpec::new("dst", 32, MatchKind::Lpm)], n)
                .with_max_params_bytes(8),
        )
        .unwrap();
        let mut r = Rng(0xabcdef);
        // Prefix lengths roughly like a routing table: mostly /24, some /16../23, a few /8../15, /32.
        let mut prefixes = Vec::new();
        while prefixes.len() < n {
            let x = r.next();
            let plen = match x % 100 {
                0..=59 => 24,
                60..=84 => 16 + (x >> 8) as u32 % 8,
                85..=94 => 8 + (x >> 8) as u32 % 8,
                _ => 32,
            };
            let v = ((x >> 32) as u32) & (u32::MAX.checked_shl(32 - plen).unwrap_or(0));
            if t.insert(
                &[FieldMatch::Lpm(v.to_be_bytes().to_vec(), plen)],
                0,
                ActionData::bare(plen),
            )
            .is_ok()
            {
                prefixes.push((v, plen));
            }
        }
        // Look up addresses inside random stored prefixes (hits of varying length).
        let addrs: Vec<[u8; 4]> = (0..4096)
            .map(|_| {
                let (v, plen) = prefixes[r.next() as usize % n];
                let host = (r.next() as u32).checked_shr(plen).unwrap_or(0);
                (v | host).to_be_bytes()
            })
            .collect();
        let tuples = t.tuple_count();
        g.bench_with_input(
            BenchmarkId::new(format!("lpm_{tuples}_lengths"), n),
            &n,
            |b, _| {
                let mut i = 0;
                let mut out = Lookup::default();
                b.iter(|| {
                    i = (i + 1) & 4095;
                    black_box(t.lookup_into(&addrs[i], 0, &mut out))
                })
            },
        );
    }
    g.finish();
}

fn ternary(c: &mut Criterion) {
    let mut g = config(c);
    g.throughput(Throughput::Elements(1));
    for n in SIZES {
        let t = Table::new(
            TableSpec::new("acl", flow_spec(MatchKind::Ternary), n).with_max_params_bytes(8),
        )
        .unwrap();
        let mut r = Rng(0x5151);
        // 32 distinct masks: src/dst prefix lengths from {8,16,24,32} x {0,16,24,32} x dport on/off.
        let src_l = [8u32, 16, 24, 32];
        let dst_l = [0u32, 16, 24, 32];
        let pm = |l: u32| u32::MAX.checked_shl(32 - l).unwrap_or(0);
        let mut stored = Vec::new();
        while stored.len() < n {
            let k = flow_key(&mut r);
            let x = r.next();
            let (sl, dl, dp) = (
                src_l[x as usize % 4],
                dst_l[(x >> 2) as usize % 4],
                (x >> 4) & 1 == 1,
            );
            let f = split(&k);
            let m = [
                FieldMatch::Ternary(f[0].to_vec(), pm(sl).to_be_bytes().to_vec()),
                FieldMatch::Ternary(f[1].to_vec(), pm(dl).to_be_bytes().to_vec()),
                FieldMatch::Ternary(vec![0, 0], vec![0, 0]),
                FieldMatch::Ternary(
                    f[3].to_vec(),
                    if dp { vec![0xff, 0xff] } else { vec![0, 0] },
                ),
                FieldMatch::Ternary(vec![6], vec![0xff]),
            ];
            let prio = 1 + (r.next() % 1000) as u32;
            if t.insert(&m, prio, ActionData::bare(prio)).is_ok() {
                stored.push(k);
            }
        }
        let keys: Vec<Vec<u8>> = (0..4096)
            .map(|_| stored[r.next() as usize % n].clone())
            .collect();
        let tuples = t.tuple_count();
        g.bench_with_input(
            BenchmarkId::new(format!("ternary_{tuples}_masks"), n),
            &n,
            |b, _| {
                let mut i = 0;
                let mut out = Lookup::default();
                b.iter(|| {
                    i = (i + 1) & 4095;
                    black_box(t.lookup_into(&keys[i], 0, &mut out))
                })
            },
        );
    }
    g.finish();
}

/// Range table: a 32-bit address range (the space cut into `n` intervals at random points) and
/// an exact protocol byte; random priorities. Lookups: addresses inside random stored intervals.
fn range(c: &mut Criterion) {
    let mut g = config(c);
    g.throughput(Throughput::Elements(1));
    for n in SIZES {
        let t = Table::new(
            TableSpec::new(
                "ranges",
                vec![
                    KeySpec::new("dst", 32, MatchKind::Range),
                    KeySpec::new("proto", 8, MatchKind::Exact),
                ],
                n,
            )
            .with_max_params_bytes(8),
        )
        .unwrap();
        let mut r = Rng(0x7a7a);
        let mut cuts: Vec<u32> = (0..n - 1).map(|_| r.next() as u32).collect();
        cuts.push(0);
        cuts.sort_unstable();
        cuts.dedup();
        let mut stored = Vec::new();
        for (i, &lo) in cuts.iter().enumerate() {
            let hi = cuts.get(i + 1).map_or(u32::MAX, |&x| x - 1);
            let proto = if r.next() & 1 == 0 { 6u8 } else { 17 };
            let m = [
                FieldMatch::Range(lo.to_be_bytes().to_vec(), hi.to_be_bytes().to_vec()),
                FieldMatch::Exact(vec![proto]),
            ];
            let prio = 1 + (r.next() % 1000) as u32;
            if t.insert(&m, prio, ActionData::bare(prio)).is_ok() {
                stored.push((lo, hi, proto));
            }
        }
        let keys: Vec<[u8; 5]> = (0..4096)
            .map(|_| {
                let (lo, hi, proto) = stored[r.next() as usize % stored.len()];
                let a = lo + (r.next() % (hi as u64 - lo as u64 + 1)) as u32;
                let mut k = [0u8; 5];
                k[..4].copy_from_slice(&a.to_be_bytes());
                k[4] = proto;
                k
            })
            .collect();
        let tuples = t.tuple_count();
        g.bench_with_input(
            BenchmarkId::new(format!("range_{tuples}_tuples"), n),
            &n,
            |b, _| {
                let mut i = 0;
                let mut out = Lookup::default();
                b.iter(|| {
                    i = (i + 1) & 4095;
                    assert!(t.lookup_into(&keys[i], 0, &mut out));
                    black_box(&out);
                })
            },
        );
    }
    g.finish();
}

/// Optional table: the 5-tuple as optional fields, each entry with src and proto set and a
/// random subset of dst, sport, dport (8 patterns); random priorities.
fn optional(c: &mut Criterion) {
    let mut g = config(c);
    g.throughput(Throughput::Elements(1));
    for n in SIZES {
        let t = Table::new(
            TableSpec::new("opt", flow_spec(MatchKind::Optional), n).with_max_params_bytes(8),
        )
        .unwrap();
        let mut r = Rng(0x0b7);
        let mut stored = Vec::new();
        while stored.len() < n {
            let k = flow_key(&mut r);
            let x = r.next();
            let f = split(&k);
            let opt = |on: bool, v: &[u8]| FieldMatch::Optional(on.then(|| v.to_vec()));
            let m = [
                opt(true, f[0]),
                opt(x & 1 == 1, f[1]),
                opt(x & 2 == 2, f[2]),
                opt(x & 4 == 4, f[3]),
                opt(true, f[4]),
            ];
            let prio = 1 + (r.next() % 1000) as u32;
            if t.insert(&m, prio, ActionData::bare(prio)).is_ok() {
                stored.push(k);
            }
        }
        let keys: Vec<Vec<u8>> = (0..4096)
            .map(|_| stored[r.next() as usize % n].clone())
            .collect();
        let tuples = t.tuple_count();
        g.bench_with_input(
            BenchmarkId::new(format!("optional_{tuples}_masks"), n),
            &n,
            |b, _| {
                let mut i = 0;
                let mut out = Lookup::default();
                b.iter(|| {
                    i = (i + 1) & 4095;
                    assert!(t.lookup_into(&keys[i], 0, &mut out));
                    black_box(&out);
                })
            },
        );
    }
    g.finish();
}

/// A table of 16-bit keys (a port, a VLAN id, an EtherType), 4-byte parameters, room for every
/// key: the direct array (`ExactEngine::Auto`) or the cuckoo hash (`ExactEngine::Hash`).
fn narrow_table(e: ExactEngine) -> Table {
    Table::new(
        TableSpec::new(
            "ports",
            vec![KeySpec::new("port", 16, MatchKind::Exact)],
            1 << 16,
        )
        .with_add_on_miss(true)
        .with_max_params_bytes(4)
        .with_exact_engine(e),
    )
    .unwrap()
}

/// All 2^16 keys in a random order (from `seed`), packed.
fn narrow_keys(seed: u64) -> Vec<[u8; 2]> {
    let mut r = Rng(seed);
    let mut v: Vec<[u8; 2]> = (0..=u16::MAX).map(u16::to_be_bytes).collect();
    for i in (1..v.len()).rev() {
        v.swap(i, r.next() as usize % (i + 1));
    }
    v
}

/// 16-bit keys, direct array against cuckoo hash (same spec): one-at-a-time hits and misses,
/// batched hits, on tables holding `n` of the 2^16 keys (256: a port table, in L1; 32768: half
/// the key space, its cells 2 MiB); then add-on-miss after a miss, the table kept between 50 %
/// and 95 % full.
fn narrow(c: &mut Criterion) {
    let mut g = config(c);
    g.throughput(Throughput::Elements(B as u64));
    for n in [256usize, 1 << 15] {
        let keys = narrow_keys(0xabc + n as u64);
        let (present, absent) = keys.split_at(n);
        let mut r = Rng(7);
        let hits: Vec<u8> = (0..STREAM)
            .flat_map(|_| present[r.next() as usize % n])
            .collect();
        let misses: Vec<u8> = (0..STREAM)
            .flat_map(|_| absent[r.next() as usize % absent.len()])
            .collect();
        for (name, e) in [("direct", ExactEngine::Auto), ("cuckoo", ExactEngine::Hash)] {
            let t = narrow_table(e);
            assert_eq!(t.is_direct(), name == "direct");
            for (i, k) in present.iter().enumerate() {
                assert!(t
                    .add_on_miss(k, &ActionData::new(1, (i as u32).to_le_bytes()), 0, 0)
                    .is_added());
            }
            for (what, stream) in [("hit", &hits), ("miss", &misses)] {
                g.bench_with_input(
                    BenchmarkId::new(format!("narrow_{what}_{name}"), n),
                    &n,
                    |b, _| {
                        let mut j = 0;
                        let mut out = Lookup::default();
                        b.iter(|| {
                            j = (j + B * 2) % stream.len();
                            let mut h = 0;
                            for k in stream[j..j + B * 2].chunks_exact(2) {
                                h += t.lookup_into(k, 0, &mut out) as usize;
                            }
                            black_box(h)
                        })
                    },
                );
            }
            g.bench_with_input(
                BenchmarkId::new(format!("narrow_batch32_{name}"), n),
                &n,
                |b, _| {
                    let mut j = 0;
                    let mut out = vec![Lookup::default(); B];
                    b.iter(|| {
                        j = (j + B * 2) % hits.len();
                        black_box(t.lookup_batch(&hits[j..j + B * 2], 0, &mut out).unwrap())
                    })
                },
            );
        }
    }
    // add_on_miss of 32 absent keys after their (missed, untimed) batched lookup.
    for (name, e) in [("direct", ExactEngine::Auto), ("cuckoo", ExactEngine::Hash)] {
        let keys = narrow_keys(0xadd);
        let fill = |t: &Table| {
            for k in &keys[..1 << 15] {
                t.add_on_miss(k, &ActionData::new(1, [7u8; 4]), 0, 0);
            }
        };
        let mut bed = (narrow_table(e), 1usize << 15);
        fill(&bed.0);
        let data = ActionData::new(2, [9u8; 4]);
        let mut out = vec![Lookup::default(); B];
        g.bench_function(format!("narrow_add_after_miss_{name}"), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    if bed.1 + B > keys.len() * 95 / 100 {
                        bed = (narrow_table(e), 1 << 15);
                        fill(&bed.0);
                    }
                    let batch: Vec<u8> = keys[bed.1..bed.1 + B].concat();
                    bed.1 += B;
                    bed.0.lookup_batch(&batch, 0, &mut out).unwrap();
                    let t0 = std::time::Instant::now();
                    for k in batch.chunks_exact(2) {
                        black_box(bed.0.add_on_miss(k, &data, 0, 0));
                    }
                    total += t0.elapsed();
                }
                total
            })
        });
    }
    g.finish();
}

criterion_group!(benches, exact, narrow, lpm, ternary, range, optional);
criterion_main!(benches);
