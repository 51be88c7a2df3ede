//! The API for callers that have the key's hash (`hash_key`, `lookup_exact_hashed`,
//! `prefetch_hashed`, `add_on_miss_hashed`): the same results as the plain calls for every key
//! shape and cell layout, the same refusals, and the same guarantees under concurrency (one
//! `Added` per key, no torn or missing entry during modifies).

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::*};
use std::sync::Arc;
use std::thread;

use nevermiss_tables::*;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// A key of `len` bytes from `i` (distinct for distinct `i`).
fn key(len: usize, i: u64) -> Vec<u8> {
    let mut r = Rng(i.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut k: Vec<u8> = (0..len).map(|_| r.next() as u8).collect();
    let n = len.min(8);
    k[..n].copy_from_slice(&i.to_le_bytes()[..n]);
    k
}

/// Key shapes (bytes) × parameter sizes × idle-timeout modes: one-line cells (4- and 13-byte
/// keys with small parameters), multi-line cells (64-byte parameters, timers), keys of 1 to 6
/// words and longer ones (> 48 bytes).
fn specs() -> Vec<(usize, usize, IdleTimeout)> {
    let mut v = Vec::new();
    for kl in [1usize, 3, 4, 5, 8, 13, 16, 24, 40, 48, 60] {
        for p in [0usize, 4, 8, 24, 64] {
            v.push((kl, p, IdleTimeout::NoTimeout));
        }
    }
    for (kl, p) in [(4, 4), (13, 8), (4, 24)] {
        v.push((kl, p, IdleTimeout::NotifyControl));
        v.push((kl, p, IdleTimeout::AutoDelete));
    }
    v
}

fn table(kl: usize, p: usize, idle: IdleTimeout, size: usize) -> Table {
    // One field per key (widths up to 64 bits per field, so split long keys).
    let mut keys = Vec::new();
    let mut left = kl;
    let mut i = 0;
    while left > 0 {
        let w = left.min(8);
        keys.push(KeySpec::new(
            format!("f{i}"),
            (w * 8) as u32,
            MatchKind::Exact,
        ));
        left -= w;
        i += 1;
    }
    Table::new(
        TableSpec::new("t", keys, size)
            .with_add_on_miss(true)
            .with_idle_timeout(idle)
            .with_max_params_bytes(p),
    )
    .expect("table")
}

fn params(p: usize, i: u64) -> Vec<u8> {
    (0..p)
        .map(|j| (i as u8).wrapping_add((j as u8).wrapping_mul(7)))
        .collect()
}

#[test]
fn hashed_calls_give_the_plain_calls_results() {
    for (kl, p, idle) in specs() {
        let n = if kl == 1 { 100 } else { 300u64 }; // 1-byte keys: 256 in all
        let t = table(kl, p, idle, 1024);
        t.set_default(ActionData::new(9, params(p.min(8), 99)))
            .unwrap();
        // Half the keys added by the plain call, half by the hashed one.
        for i in 0..n {
            let k = key(kl, i);
            let d = ActionData::new(i as u32 % 5, params(p, i));
            let s = if i.is_multiple_of(2) {
                t.add_on_miss(&k, &d, 0, 1_000)
            } else {
                t.add_on_miss_hashed(&k, t.hash_key(&k), d.action, &d.params, 0, 1_000)
            };
            assert!(s.is_added(), "{kl} {p} {idle:?} key {i}: {s:?}");
        }
        let (mut a, mut b) = (Lookup::default(), Lookup::default());
        for i in 0..2 * n {
            let k = key(kl, i);
            let h = t.hash_key(&k);
            assert_ne!(h, 0, "an exact key's hash");
            assert!(t.prefetch_hashed(h).is_some());
            if let Some(pf) = t.prefetch_hashed(h) {
                t.prefetch_entry(pf);
            }
            let hit = t.lookup_into(&k, 2_000, &mut a);
            let hit_h = t.lookup_exact_hashed(&k, h, 2_000, &mut b);
            assert_eq!((hit, &a), (hit_h, &b), "{kl} {p} {idle:?} key {i}");
            assert_eq!((a.key_hash(), b.key_hash()), (h, h), "the lookup's hash");
            assert_eq!(hit, i < n);
            if hit {
                assert_eq!(a.data, ActionData::new(i as u32 % 5, params(p, i)));
                // Present: both adds say so, whoever added it.
                let d = &a.data;
                assert_eq!(
                    t.add_on_miss_hashed(&k, h, d.action, &d.params, 0, 2_000),
                    AddStatus::AlreadyPresent
                );
                assert_eq!(t.add_on_miss(&k, d, 0, 2_000), AddStatus::AlreadyPresent);
            } else {
                assert_eq!(a.data, t.default_action());
            }
        }
        assert_eq!(t.len(), n as usize);
        // AUTO_DELETE: past the deadline both miss, and both adds replace the expired entry.
        if idle == IdleTimeout::AutoDelete {
            let late = 1_000 + 11 * 1_000_000_000;
            for i in 0..4 {
                let k = key(kl, i);
                let h = t.hash_key(&k);
                assert!(!t.lookup_into(&k, late, &mut a));
                assert!(!t.lookup_exact_hashed(&k, h, late, &mut b));
                assert_eq!(a, b);
                let s = t.add_on_miss_hashed(&k, h, 3, &params(p, 7), 0, late);
                assert!(s.is_added(), "{s:?}");
                assert!(t.lookup_exact_hashed(&k, h, late, &mut b));
                assert_eq!(b.data, ActionData::new(3, params(p, 7)));
            }
        }
    }
}

#[test]
fn hashed_calls_refuse_what_the_plain_calls_refuse() {
    let t = table(4, 8, IdleTimeout::NoTimeout, 16);
    let mut out = Lookup::default();
    // Wrong key length: no hash, a miss, a refusal.
    assert_eq!(t.hash_key(&[1, 2, 3]), 0);
    assert!(!t.lookup_exact_hashed(&[1, 2, 3], 0, 0, &mut out));
    assert!(out.hit.is_none());
    assert!(matches!(
        t.add_on_miss_hashed(&[1, 2, 3], 0, 1, &[], 0, 0),
        AddStatus::Rejected(TableError::BadKey { .. })
    ));
    // Parameters too long.
    let k = [1u8, 2, 3, 4];
    assert!(matches!(
        t.add_on_miss_hashed(&k, t.hash_key(&k), 1, &[0; 9], 0, 0),
        AddStatus::Rejected(TableError::ParamsTooLong { len: 9, max: 8 })
    ));
    // A wrong hash never gives a wrong hit.
    assert!(t
        .add_on_miss_hashed(&k, t.hash_key(&k), 1, &[5; 8], 0, 0)
        .is_added());
    assert!(t.lookup_exact_hashed(&k, t.hash_key(&k), 0, &mut out));
    let other = [9u8, 9, 9, 9];
    assert!(!t.lookup_exact_hashed(&other, t.hash_key(&k), 0, &mut out));
    // Full.
    for i in 0..64u32 {
        let k = (i + 100).to_be_bytes();
        let s = t.add_on_miss_hashed(&k, t.hash_key(&k), 1, &[], 0, 0);
        assert!(matches!(s, AddStatus::Added(_) | AddStatus::Full), "{s:?}");
    }
    assert_eq!(t.len(), 16);
    assert!(t.stats().inserts_full > 0);
    // Not an add-on-miss table.
    let plain = Table::new(TableSpec::new(
        "p",
        vec![KeySpec::new("k", 32, MatchKind::Exact)],
        16,
    ))
    .unwrap();
    assert_eq!(
        plain.add_on_miss_hashed(&k, plain.hash_key(&k), 1, &[], 0, 0),
        AddStatus::Rejected(TableError::NotAddOnMiss)
    );
    // Bad expire profile on a timed table.
    let timed = table(4, 8, IdleTimeout::NotifyControl, 16);
    assert_eq!(
        timed.add_on_miss_hashed(&k, timed.hash_key(&k), 1, &[], 200, 0),
        AddStatus::Rejected(TableError::BadProfile(200))
    );
    // Other engines: no hash, and the hash argument is ignored.
    let lpm = Table::new(TableSpec::new(
        "l",
        vec![KeySpec::new("k", 32, MatchKind::Lpm)],
        16,
    ))
    .unwrap();
    lpm.insert(
        &[FieldMatch::Lpm(vec![10, 0, 0, 0], 8)],
        0,
        ActionData::bare(4),
    )
    .unwrap();
    assert_eq!(lpm.hash_key(&[10, 1, 2, 3]), 0);
    assert!(lpm.prefetch_hashed(0).is_none());
    assert!(lpm.lookup_exact_hashed(&[10, 1, 2, 3], 12345, 0, &mut out));
    assert_eq!(out.data.action, 4);
}

/// Threads add the same keys with both add calls at once: exactly one `Added` per key.
#[test]
fn concurrent_hashed_adds_of_one_key_add_it_once() {
    for kl in [4usize, 13] {
        const N: u64 = 8_000;
        let t = Arc::new(table(kl, 8, IdleTimeout::NoTimeout, N as usize));
        let added: Arc<Vec<AtomicU32>> = Arc::new((0..N).map(|_| AtomicU32::new(0)).collect());
        let workers: Vec<_> = (0..4u64)
            .map(|w| {
                let (t, added) = (t.clone(), added.clone());
                thread::spawn(move || {
                    let mut out = Lookup::default();
                    let mut r = Rng(0x9e37 + w);
                    let mut order: Vec<u64> = (0..N).collect();
                    for i in (1..order.len()).rev() {
                        order.swap(i, (r.next() % (i as u64 + 1)) as usize);
                    }
                    for i in order {
                        let k = key(kl, i);
                        let h = t.hash_key(&k);
                        if t.lookup_exact_hashed(&k, h, 0, &mut out) {
                            continue;
                        }
                        let p = params(8, i);
                        let s = if (i + w).is_multiple_of(2) {
                            t.add_on_miss_hashed(&k, h, 1, &p, 0, 0)
                        } else {
                            t.add_on_miss(&k, &ActionData::new(1, p), 0, 0)
                        };
                        match s {
                            AddStatus::Added(_) => {
                                added[i as usize].fetch_add(1, Relaxed);
                            }
                            AddStatus::AlreadyPresent => {}
                            other => panic!("unexpected {other:?}"),
                        }
                    }
                })
            })
            .collect();
        for w in workers {
            w.join().unwrap();
        }
        assert!(
            added.iter().all(|a| a.load(Relaxed) == 1),
            "a key added twice or never"
        );
        assert_eq!(t.len(), N as usize);
        assert_eq!(t.stats().inserts, N);
        let mut out = Lookup::default();
        for i in 0..N {
            let k = key(kl, i);
            assert!(t.lookup_exact_hashed(&k, t.hash_key(&k), 0, &mut out));
            assert_eq!(out.data.params[..], params(8, i)[..]);
        }
    }
}

/// Readers using the hashed lookup while the control plane modifies and the data plane updates
/// parameters in place: never a miss, never a torn entry (all parameter bytes equal), versions
/// never going back.
#[test]
fn hashed_lookups_see_modifies_whole() {
    const P: usize = 24; // with a 4-byte key: one line; with 13 bytes: two
    for kl in [4usize, 13] {
        let t = Arc::new(table(kl, P, IdleTimeout::NoTimeout, 64));
        let keys: Vec<Vec<u8>> = (0..8).map(|i| key(kl, i)).collect();
        for k in &keys {
            assert!(t
                .add_on_miss(k, &ActionData::new(0, vec![0u8; P]), 0, 0)
                .is_added());
        }
        let stop = Arc::new(AtomicBool::new(false));
        let reads = Arc::new(AtomicU64::new(0));
        let readers: Vec<_> = (0..2)
            .map(|_| {
                let (t, stop, reads, keys) = (t.clone(), stop.clone(), reads.clone(), keys.clone());
                thread::spawn(move || {
                    let mut out = Lookup::default();
                    let mut last = vec![0u64; keys.len()];
                    while !stop.load(Acquire) {
                        for (j, k) in keys.iter().enumerate() {
                            let h = t.hash_key(k);
                            assert!(t.lookup_exact_hashed(k, h, 0, &mut out), "missing");
                            let d = &out.data;
                            assert!(
                                d.params.len() == P && d.params.iter().all(|&b| b == d.params[0]),
                                "torn: {d:?}"
                            );
                            assert!(out.version >= last[j], "version went back");
                            last[j] = out.version;
                        }
                        reads.fetch_add(1, Relaxed);
                    }
                })
            })
            .collect();
        let mut i = 0u32;
        let mut out = Lookup::default();
        while i < 20_000 || reads.load(Relaxed) < 5_000 {
            i += 1;
            let k = &keys[i as usize % keys.len()];
            let b = i as u8;
            if i.is_multiple_of(2) {
                let m: Vec<FieldMatch> =
                    k.chunks(8).map(|c| FieldMatch::Exact(c.to_vec())).collect();
                t.modify(&m, 0, ActionData::new(b as u32, vec![b; P]))
                    .unwrap();
            } else if t.lookup_exact_hashed(k, t.hash_key(k), 0, &mut out) {
                assert!(t.update_params(out.hit.unwrap(), &[b ^ 0x55; P]));
            }
            if i.is_multiple_of(1024) {
                thread::yield_now();
            }
        }
        stop.store(true, Release);
        for r in readers {
            r.join().unwrap();
        }
    }
}

/// `Lookup::key_hash` is the key's `hash_key` after every lookup of an exact table (the cuckoo
/// hash and the direct array, single and batched, hits and misses), 0 for other tables, and
/// an add-on-miss with it adds the key as the plain call does.
#[test]
fn lookups_report_the_keys_hash() {
    let direct = Table::new(
        TableSpec::new("d", vec![KeySpec::new("k", 16, MatchKind::Exact)], 64)
            .with_add_on_miss(true)
            .with_max_params_bytes(4),
    )
    .unwrap();
    assert!(direct.is_direct());
    let lpm = Table::new(TableSpec::new(
        "l",
        vec![KeySpec::new("k", 32, MatchKind::Lpm)],
        64,
    ))
    .unwrap();
    for (t, kl) in [
        (table(4, 4, IdleTimeout::NoTimeout, 64), 4),
        (table(13, 8, IdleTimeout::NoTimeout, 64), 13),
        (table(60, 8, IdleTimeout::NoTimeout, 64), 60),
        (direct, 2),
        (lpm, 4),
    ] {
        let exact = t.hash_key(&key(kl, 0)) != 0;
        let keys: Vec<u8> = (0..40).flat_map(|i| key(kl, i)).collect();
        let mut outs = vec![Lookup::default(); 40];
        t.lookup_batch(&keys, 0, &mut outs).unwrap();
        let mut one = Lookup::default();
        for (i, k) in keys.chunks_exact(kl).enumerate() {
            let h = t.hash_key(k);
            t.lookup_into(k, 0, &mut one);
            assert_eq!((one.key_hash(), outs[i].key_hash()), (h, h), "{kl} key {i}");
            if exact && i % 2 == 0 {
                let s = t.add_on_miss_hashed(k, one.key_hash(), 1, &[1, 2, 3, 4], 0, 0);
                assert!(s.is_added(), "{kl} key {i}: {s:?}");
            }
        }
        for (i, k) in keys.chunks_exact(kl).enumerate() {
            assert_eq!(t.lookup_into(k, 0, &mut one), exact && i % 2 == 0);
            assert_eq!(one.key_hash(), t.hash_key(k));
        }
        // A key of the wrong length: no hash.
        t.lookup_into(&key(kl + 1, 0), 0, &mut one);
        assert_eq!(one.key_hash(), 0);
    }
}
