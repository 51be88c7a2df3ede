//! Several threads on one table: data-plane inserts of overlapping keys, control-plane modify
//! and delete, readers checking that they never see a torn or missing entry.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::*};
use std::sync::Arc;
use std::thread;

use nevermiss_tables::*;

const P: usize = 24; // three 8-byte words: a torn read would mix patterns

fn pattern(b: u8) -> ActionData {
    ActionData::new(b as u32, vec![b; P])
}

fn consistent(d: &ActionData) -> bool {
    d.params.len() == P && d.params.iter().all(|&x| x == d.params[0])
}

fn key(i: u32) -> [u8; 4] {
    i.to_be_bytes()
}

fn learner(size: usize) -> Arc<Table> {
    let spec = TableSpec::new("flows", vec![KeySpec::new("k", 32, MatchKind::Exact)], size)
        .with_add_on_miss(true)
        .with_max_params_bytes(P);
    Arc::new(Table::new(spec).unwrap())
}

/// Simple xorshift so each thread walks the keys in its own order.
fn shuffled(n: u32, seed: u64) -> Vec<u32> {
    let mut v: Vec<u32> = (0..n).collect();
    let mut x = seed | 1;
    for i in (1..v.len()).rev() {
        xorshift(&mut x);
        v.swap(i, (x % (i as u64 + 1)) as usize);
    }
    v
}

#[test]
fn same_key_added_by_many_threads_exactly_once() {
    const N: u32 = 20_000;
    let t = learner(N as usize);
    let added: Arc<Vec<AtomicU32>> = Arc::new((0..N).map(|_| AtomicU32::new(0)).collect());
    let handles: Vec<_> = (0..4)
        .map(|w| {
            let (t, added) = (t.clone(), added.clone());
            thread::spawn(move || {
                for k in shuffled(N, 0x9e37 + w) {
                    let l = t.lookup(&key(k), 0);
                    if l.is_hit() {
                        continue;
                    }
                    match t.add_on_miss(&key(k), &pattern(k as u8), 0, 0) {
                        AddStatus::Added(_) => {
                            added[k as usize].fetch_add(1, Relaxed);
                        }
                        AddStatus::AlreadyPresent => {}
                        other => panic!("unexpected {other:?}"),
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert!(
        added.iter().all(|a| a.load(Relaxed) == 1),
        "some key added twice or never"
    );
    assert_eq!(t.len(), N as usize);
    let keys: HashSet<Vec<u8>> = t.iter().into_iter().map(|e| e.key).collect();
    assert_eq!(keys.len(), N as usize);
    assert_eq!(t.stats().inserts, N as u64);
}

#[test]
fn inserters_modifier_deleter_and_reader() {
    const N: u32 = 6_000;
    let t = learner(N as usize);
    let done = Arc::new(AtomicBool::new(false));
    let bad = Arc::new(AtomicU64::new(0));
    // Three inserters over overlapping ranges [0,3000), [1500,4500), [3000,6000), twice.
    let inserters: Vec<_> = (0..3u32)
        .map(|w| {
            let t = t.clone();
            thread::spawn(move || {
                for _round in 0..2 {
                    for k in shuffled(N / 2, w as u64 + 7) {
                        let k = k + w * N / 4;
                        if !t.lookup(&key(k), 0).is_hit() {
                            let s = t.add_on_miss(&key(k), &pattern(k as u8), 0, 0);
                            assert!(
                                matches!(s, AddStatus::Added(_) | AddStatus::AlreadyPresent),
                                "{s:?}"
                            );
                        }
                    }
                }
            })
        })
        .collect();
    let control = {
        let (t, done) = (t.clone(), done.clone());
        thread::spawn(move || {
            let mut b = 0u8;
            loop {
                let finished = done.load(Acquire);
                for k in 0..N {
                    let m = [FieldMatch::Exact(key(k).to_vec())];
                    if k % 5 == 0 {
                        let _ = t.delete(&m, 0);
                    } else {
                        b = b.wrapping_add(1);
                        let _ = t.modify(&m, 0, pattern(b));
                    }
                }
                if finished {
                    break;
                }
            }
        })
    };
    let readers: Vec<_> = (0..2u64)
        .map(|r| {
            let (t, done, bad) = (t.clone(), done.clone(), bad.clone());
            thread::spawn(move || {
                let mut out = vec![Lookup::default(); 32];
                let mut x = 0x1234_5678u64 + r;
                while !done.load(Acquire) {
                    let mut keys = Vec::with_capacity(32 * 4);
                    for _ in 0..32 {
                        xorshift(&mut x);
                        keys.extend_from_slice(&key((x % N as u64) as u32));
                    }
                    t.lookup_batch(&keys, 0, &mut out).unwrap();
                    for l in &out {
                        if l.is_hit() && !consistent(&l.data) {
                            bad.fetch_add(1, Relaxed);
                        }
                        // data-plane updates race with control-plane modifies: both atomic
                        if let Some(h) = l.hit {
                            let b = l.data.params[0].wrapping_add(1);
                            t.update_params(h, &[b; P]);
                        }
                    }
                }
            })
        })
        .collect();
    for h in inserters {
        h.join().unwrap();
    }
    done.store(true, Release);
    control.join().unwrap();
    for h in readers {
        h.join().unwrap();
    }
    assert_eq!(bad.load(Relaxed), 0, "torn reads observed");
    let entries = t.iter();
    let keys: Vec<u32> = entries
        .iter()
        .map(|e| u32::from_be_bytes(e.key[..].try_into().unwrap()))
        .collect();
    let set: HashSet<u32> = keys.iter().copied().collect();
    assert_eq!(set.len(), keys.len(), "duplicate entries");
    let expected: HashSet<u32> = (0..N).filter(|k| k % 5 != 0).collect();
    assert_eq!(set, expected);
    assert!(entries.iter().all(|e| consistent(&e.data)));
    assert_eq!(t.len(), expected.len());
}

#[test]
fn modify_is_never_missing_or_torn_for_every_engine() {
    let specs = [
        (
            vec![KeySpec::new("k", 32, MatchKind::Exact)],
            FieldMatch::Exact(key(7).to_vec()),
            0,
        ),
        (
            vec![KeySpec::new("k", 32, MatchKind::Lpm)],
            FieldMatch::Lpm(key(7).to_vec(), 24),
            0,
        ),
        (
            vec![KeySpec::new("k", 32, MatchKind::Ternary)],
            FieldMatch::Ternary(key(7).to_vec(), key(0xffff).to_vec()),
            3,
        ),
    ];
    for (keys, m, prio) in specs {
        let t =
            Arc::new(Table::new(TableSpec::new("t", keys, 64).with_max_params_bytes(P)).unwrap());
        t.insert(std::slice::from_ref(&m), prio, pattern(0))
            .unwrap();
        // other entries in other tuples so lookups do real work
        let stop = Arc::new(AtomicBool::new(false));
        let reads = Arc::new(AtomicU64::new(0));
        let readers: Vec<_> = (0..2)
            .map(|_| {
                let (t, stop, reads) = (t.clone(), stop.clone(), reads.clone());
                thread::spawn(move || {
                    let mut l = Lookup::default();
                    while !stop.load(Acquire) {
                        assert!(
                            t.lookup_into(&key(7), 0, &mut l),
                            "entry missing during modify"
                        );
                        assert!(
                            consistent(&l.data) && l.data.action == l.data.params[0] as u32,
                            "torn: {:?}",
                            l.data
                        );
                        reads.fetch_add(1, Relaxed);
                    }
                })
            })
            .collect();
        // Keep modifying until the readers have overlapped with plenty of modifies.
        let mut i = 0u32;
        while i < 20_000 || reads.load(Relaxed) < 20_000 {
            i += 1;
            t.modify(std::slice::from_ref(&m), prio, pattern(i as u8))
                .unwrap();
            if i.is_multiple_of(1024) {
                thread::yield_now();
            }
        }
        stop.store(true, Release);
        for r in readers {
            r.join().unwrap();
        }
        let l = t.lookup(&key(7), 0);
        assert_eq!(l.version, i as u64);
    }
}

#[test]
fn expiry_races_with_restarts_and_adds() {
    let spec = TableSpec::new("t", vec![KeySpec::new("k", 32, MatchKind::Exact)], 4096)
        .with_add_on_miss(true)
        .with_idle_timeout(IdleTimeout::AutoDelete)
        .with_max_params_bytes(P);
    let t = Arc::new(Table::new(spec).unwrap());
    t.set_profiles(&[5_000_000, 20_000_000]).unwrap();
    let clock = Arc::new(AtomicU64::new(1));
    let stop = Arc::new(AtomicBool::new(false));
    let added = Arc::new(AtomicU64::new(0));
    let workers: Vec<_> = (0..2u64)
        .map(|w| {
            let (t, clock, stop, added) = (t.clone(), clock.clone(), stop.clone(), added.clone());
            thread::spawn(move || {
                let mut x = 99 + w;
                while !stop.load(Acquire) {
                    xorshift(&mut x);
                    let k = key((x % 3000) as u32);
                    let now = clock.load(Acquire);
                    let l = t.lookup(&k, now);
                    match l.hit {
                        Some(h) => {
                            if x % 3 == 0 {
                                t.set_expire_profile(h, (x % 2) as u8, now);
                            } else {
                                t.restart_timer(h, now);
                            }
                        }
                        None => {
                            if t.add_on_miss(&k, &pattern(1), (x % 2) as u8, now)
                                .is_added()
                            {
                                added.fetch_add(1, Relaxed);
                            }
                        }
                    }
                }
            })
        })
        .collect();
    let mut removed = 0u64;
    for _ in 0..3000 {
        let now = clock.fetch_add(100_000, AcqRel) + 100_000;
        for e in t.expire(now) {
            assert!(!e.notify);
            assert!(
                e.entry.deadline_ns.is_some_and(|d| d <= now),
                "expired early: {e:?} at {now}"
            );
            removed += 1;
        }
    }
    stop.store(true, Release);
    for w in workers {
        w.join().unwrap();
    }
    let end = clock.load(Acquire) + 1_000_000_000;
    removed += t.expire(end).len() as u64;
    assert!(t.is_empty(), "{} entries left", t.len());
    let s = t.stats();
    // entries replaced by add_on_miss after expiring lazily count as expirations too
    assert_eq!(s.expirations, added.load(Relaxed));
    assert!(removed <= s.expirations);
    assert_eq!(s.inserts, added.load(Relaxed));
}

/// The exact engine under load: the table is filled to 100 % of its declared size (cuckoo
/// displacements all the time) by two data-plane inserters with overlapping key sets, while a
/// control thread modifies a stable set of entries and deletes and re-adds a churn set, and two
/// readers look the stable set up in batches. Readers never miss a stable entry and never see a
/// torn one; at the end the table holds exactly the expected keys, once each.
#[test]
fn full_table_churn_never_hides_or_duplicates_entries() {
    const STABLE: u32 = 4_000;
    const LEARN: u32 = 12_000;
    const CHURN: u32 = 400;
    const N: usize = (STABLE + LEARN + CHURN) as usize;
    let t = learner(N);
    // Stable keys 0.., learned keys 1_000_000.., churn keys 2_000_000..
    for k in 0..STABLE {
        assert!(t.add_on_miss(&key(k), &pattern(k as u8), 0, 0).is_added());
    }
    for k in 0..CHURN {
        let m = [FieldMatch::Exact(key(2_000_000 + k).to_vec())];
        t.insert(&m, 0, pattern(7)).unwrap();
    }
    let done = Arc::new(AtomicBool::new(false));
    let reads = Arc::new(AtomicU64::new(0));
    let inserters: Vec<_> = (0..2u32)
        .map(|w| {
            let (t, reads) = (t.clone(), reads.clone());
            thread::spawn(move || {
                // Start once the readers run, so that they overlap with the displacements.
                while reads.load(Relaxed) == 0 {
                    thread::yield_now();
                }
                // Each thread adds 3/4 of the learned keys; the middle half is added by both.
                for i in shuffled(LEARN * 3 / 4, w as u64 + 11) {
                    let k = 1_000_000 + i + w * LEARN / 4;
                    let s = t.add_on_miss(&key(k), &pattern(k as u8), 0, 0);
                    assert!(
                        matches!(s, AddStatus::Added(_) | AddStatus::AlreadyPresent),
                        "key {k}: {s:?}"
                    );
                }
            })
        })
        .collect();
    let control = {
        let (t, done) = (t.clone(), done.clone());
        thread::spawn(move || {
            let mut round = 0u32;
            while !done.load(Acquire) || round < 2 {
                for k in 0..CHURN {
                    let m = [FieldMatch::Exact(key(2_000_000 + k).to_vec())];
                    t.delete(&m, 0).unwrap();
                    t.insert(&m, 0, pattern(round as u8)).unwrap();
                }
                for k in (round % 7..STABLE).step_by(7) {
                    let m = [FieldMatch::Exact(key(k).to_vec())];
                    t.modify(&m, 0, pattern((k + round) as u8)).unwrap();
                }
                round += 1;
            }
        })
    };
    let readers: Vec<_> = (0..2u64)
        .map(|r| {
            let (t, done, reads) = (t.clone(), done.clone(), reads.clone());
            thread::spawn(move || {
                let mut out = vec![Lookup::default(); 32];
                let mut x = 0xabcd_0123u64 + r;
                let mut single = Lookup::default();
                while !done.load(Acquire) {
                    let mut keys = Vec::with_capacity(32 * 4);
                    for _ in 0..32 {
                        xorshift(&mut x);
                        keys.extend_from_slice(&key((x % STABLE as u64) as u32));
                    }
                    assert_eq!(t.lookup_batch(&keys, 0, &mut out).unwrap(), 32, "miss");
                    assert!(out.iter().all(|l| consistent(&l.data)), "torn read");
                    let k = key((x >> 20) as u32 % STABLE);
                    assert!(t.lookup_into(&k, 0, &mut single), "single lookup missed");
                    assert!(consistent(&single.data));
                    reads.fetch_add(33, Relaxed);
                }
            })
        })
        .collect();
    for h in inserters {
        h.join().unwrap();
    }
    done.store(true, Release);
    control.join().unwrap();
    for h in readers {
        h.join().unwrap();
    }
    let entries = t.iter();
    let keys: Vec<u32> = entries
        .iter()
        .map(|e| u32::from_be_bytes(e.key[..].try_into().unwrap()))
        .collect();
    let set: HashSet<u32> = keys.iter().copied().collect();
    assert_eq!(set.len(), keys.len(), "duplicate entries");
    let expected: HashSet<u32> = (0..STABLE)
        .chain(1_000_000..1_000_000 + LEARN)
        .chain(2_000_000..2_000_000 + CHURN)
        .collect();
    assert_eq!(set, expected);
    assert_eq!(t.len(), N);
    assert!(entries.iter().all(|e| consistent(&e.data)));
    // Full at exactly the declared size.
    assert_eq!(
        t.add_on_miss(&key(3_000_000), &pattern(1), 0, 0),
        AddStatus::Full
    );
}

/// Lock-free data-plane updates (`TableSpec::data_plane_updates`, `hazard.rs`) against a control
/// plane that deletes keys and adds others into the freed slots at once and modifies entries to
/// another action with another parameter length and back: every entry's
/// parameters start with its own key, so an update through a stale handle that landed in a
/// reused slot, or after a modify, shows as a key that is not the entry's. Readers and the
/// final contents must never see one.
#[test]
fn lock_free_updates_never_land_in_a_reused_or_modified_entry() {
    const KEYS: u32 = 48;
    const SIZE: usize = 32;
    let spec = TableSpec::new("t", vec![KeySpec::new("k", 32, MatchKind::Exact)], SIZE)
        .with_max_params_bytes(12)
        .with_data_plane_updates(true);
    let t = Arc::new(Table::new(spec).unwrap());
    if !t.lock_free_updates() {
        eprintln!("no membarrier(2) here: every update takes the cell lock");
    }
    // Action 1: the key, then a 4-byte count (8 bytes: one word, updated without the lock).
    // Action 2: the key, then 8 bytes (12: always the lock).
    let own = |k: u32, action: u32, n: u32| {
        let mut p = key(k).to_vec();
        p.extend_from_slice(&n.to_be_bytes());
        if action == 2 {
            p.extend_from_slice(&[0xee; 4]);
        }
        ActionData::new(action, p)
    };
    let fine = |k: u32, d: &ActionData| match d.action {
        1 => d.params.len() == 8 && d.params[..4] == key(k),
        2 => d.params.len() == 12 && d.params[..4] == key(k) && d.params[8..] == [0xee; 4],
        _ => false,
    };
    let done = Arc::new(AtomicBool::new(false));
    let bad = Arc::new(AtomicU64::new(0));
    let updates = Arc::new(AtomicU64::new(0));
    let updaters: Vec<_> = (0..2u64)
        .map(|u| {
            let (t, done, bad, updates) = (t.clone(), done.clone(), bad.clone(), updates.clone());
            thread::spawn(move || {
                let mut x = 0x9e37_79b9u64 + u;
                while !done.load(Acquire) {
                    xorshift(&mut x);
                    let k = (x % u64::from(KEYS)) as u32;
                    let l = t.lookup(&key(k), 0);
                    let Some(h) = l.hit else { continue };
                    if !fine(k, &l.data) {
                        bad.fetch_add(1, Relaxed);
                    }
                    let n = u32::from_be_bytes(l.data.params[4..8].try_into().unwrap());
                    let mut p = key(k).to_vec();
                    p.extend_from_slice(&n.wrapping_add(1).to_be_bytes());
                    if l.data.action == 2 {
                        p.extend_from_slice(&[0xee; 4]);
                    }
                    if t.update_params_at(h, l.version, &p) {
                        updates.fetch_add(1, Relaxed);
                    }
                }
            })
        })
        .collect();
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(1500);
    let mut x = 0x1234_5678u64;
    let mut ops = 0u64;
    while std::time::Instant::now() < deadline {
        xorshift(&mut x);
        let k = (x % u64::from(KEYS)) as u32;
        let m = [FieldMatch::Exact(key(k).to_vec())];
        match x >> 60 {
            0..=7 => {
                // Delete, then add another key: LIFO free lists hand it the freed slot.
                if t.delete(&m, 0).is_ok() {
                    let k2 = (k + 1 + (x >> 32) as u32 % (KEYS - 1)) % KEYS;
                    let _ = t.insert(&[FieldMatch::Exact(key(k2).to_vec())], 0, own(k2, 1, 0));
                }
            }
            8..=11 => {
                let _ = t.insert(&m, 0, own(k, 1, 0));
            }
            _ => {
                let action = 1 + (x >> 40) as u32 % 2;
                let _ = t.modify(&m, 0, own(k, action, 7));
            }
        }
        ops += 1;
    }
    stop_and_check(&done, updaters, &bad);
    for e in t.iter() {
        let k = u32::from_be_bytes(e.key[..].try_into().unwrap());
        assert!(fine(k, &e.data), "entry {k}: {:?}", e.data);
    }
    assert!(
        updates.load(Relaxed) > 1000,
        "updates {}",
        updates.load(Relaxed)
    );
    assert!(ops > 1000, "control-plane operations {ops}");
}

/// Lock-free timer restarts and updates in an AUTO_DELETE table (`data_plane_updates`: both
/// skip the cell lock) against a control thread that advances the clock and expires entries in
/// batches (one hazard wait per sweep: `slots.rs`, "Limbo"), deletes keys and adds others into
/// the freed slots at once. Even keys live 5 ticks (profile 0) and are only updated; odd keys
/// live 40 (profile 1) and are only restarted, now and then, so both expire. A slot freed by
/// one parity is taken by either: a restart through a stale handle that landed in a reused
/// slot would give an even key's entry a deadline past 5 ticks, and a stale update another
/// key's parameters to an odd key's entry; neither is ever written again by a good write, so
/// either would show. The window of such a write is a few instructions, so this checks the
/// whole table under real threads (no deadlock between batches and full-table inserts, no
/// lost timer); the loom models `lock_free_restart_*` and `allocation_drains_the_limbo_itself`
/// check the protocol itself and fail without each of its parts.
#[test]
fn lock_free_restarts_never_land_in_a_reused_entry() {
    const KEYS: u32 = 48;
    const SIZE: usize = 32;
    const TICK: u64 = 1_000;
    const SHORT: u64 = 5 * TICK;
    let spec = TableSpec::new("t", vec![KeySpec::new("k", 32, MatchKind::Exact)], SIZE)
        .with_max_params_bytes(8)
        .with_add_on_miss(true)
        .with_idle_timeout(IdleTimeout::AutoDelete)
        .with_data_plane_updates(true);
    let t = Arc::new(Table::with_tick(spec, TICK).unwrap());
    t.set_profiles(&[SHORT, 40 * TICK]).unwrap();
    if !t.lock_free_updates() {
        eprintln!("no membarrier(2) here: every restart takes the cell lock");
    }
    let own = |k: u32, n: u32| {
        let mut p = key(k).to_vec();
        p.extend_from_slice(&n.to_be_bytes());
        ActionData::new(1, p)
    };
    let fine = |k: u32, d: &ActionData| d.params.len() == 8 && d.params[..4] == key(k);
    let now = Arc::new(AtomicU64::new(TICK));
    let done = Arc::new(AtomicBool::new(false));
    let bad = Arc::new(AtomicU64::new(0));
    let (restarts, updates) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let writers: Vec<_> = (0..2u64)
        .map(|u| {
            let (t, now, done, bad) = (t.clone(), now.clone(), done.clone(), bad.clone());
            let (restarts, updates) = (restarts.clone(), updates.clone());
            thread::spawn(move || {
                let mut x = 0x9e37_79b9u64 + u;
                while !done.load(Acquire) {
                    xorshift(&mut x);
                    let k = (x % u64::from(KEYS)) as u32;
                    let at = now.load(Acquire);
                    let l = t.lookup(&key(k), at);
                    let Some(h) = l.hit else { continue };
                    if !fine(k, &l.data) {
                        bad.fetch_add(1, Relaxed);
                    }
                    if k.is_multiple_of(2) {
                        let n = u32::from_be_bytes(l.data.params[4..8].try_into().unwrap());
                        let mut p = key(k).to_vec();
                        p.extend_from_slice(&n.wrapping_add(1).to_be_bytes());
                        if t.update_params_at(h, l.version, &p) {
                            updates.fetch_add(1, Relaxed);
                        }
                    } else if x >> 61 == 0 && t.restart_timer(h, at) {
                        restarts.fetch_add(1, Relaxed);
                    }
                }
            })
        })
        .collect();
    let check = |at: u64| {
        for e in t.iter() {
            let k = u32::from_be_bytes(e.key[..].try_into().unwrap());
            assert!(fine(k, &e.data), "entry {k}: {:?}", e.data);
            assert_eq!(e.expire_profile, Some((k % 2) as u8), "entry {k}");
            if k.is_multiple_of(2) {
                let d = e.deadline_ns.unwrap_or(0);
                assert!(
                    d <= at + SHORT,
                    "entry {k} of 5 ticks has deadline {d} at {at}"
                );
            }
        }
    };
    let end = std::time::Instant::now() + std::time::Duration::from_millis(1500);
    let mut x = 0x1234_5678u64;
    let (mut expired, mut rounds) = (0usize, 0u64);
    while std::time::Instant::now() < end {
        let at = now.fetch_add(TICK, AcqRel) + TICK;
        expired += t.expire(at).len();
        for _ in 0..4 {
            xorshift(&mut x);
            let k = (x % u64::from(KEYS)) as u32;
            if x >> 62 == 0 {
                // Delete, then add another key: LIFO free lists hand it the freed slot.
                if t.delete(&[FieldMatch::Exact(key(k).to_vec())], 0).is_ok() {
                    let k2 = (k + 1 + (x >> 32) as u32 % (KEYS - 1)) % KEYS;
                    let _ = t.add_on_miss(&key(k2), &own(k2, 0), (k2 % 2) as u8, at);
                }
            } else {
                let _ = t.add_on_miss(&key(k), &own(k, 0), (k % 2) as u8, at);
            }
        }
        rounds += 1;
        if rounds.is_multiple_of(8) {
            check(at);
        }
    }
    stop_and_check(&done, writers, &bad);
    check(now.load(Acquire));
    let (r, u) = (restarts.load(Relaxed), updates.load(Relaxed));
    assert!(r > 1000 && u > 1000, "restarts {r}, updates {u}");
    assert!(expired > 100, "expired {expired}");
    assert!(rounds > 1000, "rounds {rounds}");
}

/// Stops the writer threads of a lock-free update test and checks that none of their lookups
/// saw an entry holding another key's parameters.
fn stop_and_check(done: &AtomicBool, writers: Vec<thread::JoinHandle<()>>, bad: &AtomicU64) {
    done.store(true, Release);
    for h in writers {
        h.join().unwrap();
    }
    assert_eq!(
        bad.load(Relaxed),
        0,
        "an entry held another key's parameters"
    );
}

/// One step of the xorshift64 generator the tests draw keys and operations from.
fn xorshift(x: &mut u64) {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
}
