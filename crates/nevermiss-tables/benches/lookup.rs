//! Lookup cost per key at 10^3, 10^4 and 10^5 entries for each engine, plus data-plane inserts.
//! Run: `cargo bench -p nevermiss-tables`. Criterion reports time per iteration and, via
//! `Throughput::Elements`, lookups per second; per-lookup ns = 1e9 / throughput.

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

fn config(c: &mut Criterion) -> criterion::BenchmarkGroup<'_, criterion::measurement::WallTime> {
    let mut g = c.benchmark_group("tables");
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    g
}

fn exact(c: &mut Criterion) {
    let mut g = config(c);
    for n in SIZES {
        let t = Table::new(
            TableSpec::new("flows", flow_spec(MatchKind::Exact), n)
                .with_add_on_miss(true)
                .with_max_params_bytes(8),
        )
        .unwrap();
        let mut r = Rng(0x1234_5678);
        let keys: Vec<Vec<u8>> = (0..n).map(|_| flow_key(&mut r)).collect();
        for (i, k) in keys.iter().enumerate() {
            let m: Vec<FieldMatch> = split(k)
                .iter()
                .map(|f| FieldMatch::Exact(f.to_vec()))
                .collect();
            t.insert(&m, 0, ActionData::new(1, (i as u32).to_le_bytes()))
                .unwrap();
        }
        let order: Vec<usize> = (0..4096).map(|_| r.next() as usize % n).collect();
        g.throughput(Throughput::Elements(1));
        g.bench_with_input(BenchmarkId::new("exact_hit", n), &n, |b, _| {
            let mut i = 0;
            let mut out = Lookup::default();
            b.iter(|| {
                i = (i + 1) & 4095;
                black_box(t.lookup_into(&keys[order[i]], 0, &mut out))
            })
        });
        let misses: Vec<Vec<u8>> = (0..4096).map(|_| flow_key(&mut r)).collect();
        g.bench_with_input(BenchmarkId::new("exact_miss", n), &n, |b, _| {
            let mut i = 0;
            let mut out = Lookup::default();
            b.iter(|| {
                i = (i + 1) & 4095;
                black_box(t.lookup_into(&misses[i], 0, &mut out))
            })
        });
        let batches: Vec<Vec<u8>> = (0..128)
            .map(|j| {
                (0..32)
                    .flat_map(|i| keys[order[j * 32 + i]].clone())
                    .collect()
            })
            .collect();
        g.throughput(Throughput::Elements(32));
        g.bench_with_input(BenchmarkId::new("exact_hit_batch32", n), &n, |b, _| {
            let mut j = 0;
            let mut out = vec![Lookup::default(); 32];
            b.iter(|| {
                j = (j + 1) & 127;
                black_box(t.lookup_batch(&batches[j], 0, &mut out).unwrap())
            })
        });
    }
    g.finish();
}

fn add_on_miss(c: &mut Criterion) {
    let mut g = config(c);
    g.throughput(Throughput::Elements(1));
    for n in SIZES {
        let t = Table::new(
            TableSpec::new("flows", flow_spec(MatchKind::Exact), n)
                .with_add_on_miss(true)
                .with_max_params_bytes(8),
        )
        .unwrap();
        let mut r = Rng(0x9999);
        let keys: Vec<Vec<u8>> = (0..n).map(|_| flow_key(&mut r)).collect();
        let data = ActionData::new(1, [0u8; 8]);
        g.bench_with_input(
            BenchmarkId::new("add_on_miss_then_delete", n),
            &n,
            |b, _| {
                // Keep the table at ~half full: add a fresh key, delete an old one.
                for k in &keys[..n / 2] {
                    t.add_on_miss(k, &data, 0, 0);
                }
                let mut i = n / 2;
                b.iter(|| {
                    let k = &keys[i % n];
                    let old = &keys[(i + n / 2) % n];
                    i += 1;
                    let s = t.add_on_miss(k, &data, 0, 0);
                    let m: Vec<FieldMatch> = split(old)
                        .iter()
                        .map(|f| FieldMatch::Exact(f.to_vec()))
                        .collect();
                    let _ = t.delete(&m, 0);
                    black_box(s)
                });
                t.clear();
            },
        );
    }
    g.finish();
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

criterion_group!(benches, exact, add_on_miss, lpm, ternary);
criterion_main!(benches);
