//! Matching semantics, default actions, capacity, control-plane operations and expiry.

use nevermiss_tables::*;

const MS: u64 = 1_000_000;

fn ad(action: u32, p: &[u8]) -> ActionData {
    ActionData::new(action, p)
}

fn ex(v: &[u8]) -> FieldMatch {
    FieldMatch::Exact(v.to_vec())
}

fn table(keys: Vec<KeySpec>, size: usize) -> Table {
    Table::new(TableSpec::new("t", keys, size)).unwrap()
}

#[test]
fn exact_hit_miss_and_default() {
    let t = table(
        vec![
            KeySpec::new("a", 32, MatchKind::Exact),
            KeySpec::new("b", 9, MatchKind::Exact),
        ],
        16,
    );
    assert_eq!(t.key_len(), 6);
    assert_eq!(t.default_action(), ActionData::default());
    assert_eq!(t.lookup(&[0; 6], 0).data.action, ACTION_NONE);
    t.set_default(ad(7, &[])).unwrap();
    let id = t
        .insert(&[ex(&[10, 0, 0, 1]), ex(&[1, 0xff])], 0, ad(1, &[5, 6]))
        .unwrap();
    let l = t.lookup(&[10, 0, 0, 1, 1, 0xff], 0);
    assert_eq!(l.hit, Some(id));
    assert_eq!(l.data, ad(1, &[5, 6]));
    assert_eq!(l.version, 0);
    let m = t.lookup(&[10, 0, 0, 1, 0, 0xff], 0);
    assert!(!m.is_hit());
    assert_eq!(m.data, ad(7, &[]));
    // wrong key length never panics, it misses
    assert!(!t.lookup(&[1, 2, 3], 0).is_hit());
    assert_eq!(
        t.insert(&[ex(&[10, 0, 0, 1]), ex(&[1, 0xff])], 0, ad(2, &[])),
        Err(TableError::Exists)
    );
    assert_eq!(
        t.insert(&[ex(&[10, 0, 0, 1]), ex(&[2, 0])], 0, ad(2, &[]))
            .unwrap_err()
            .to_string(),
        "bad key field 1: value is wider than the field"
    );
    assert_eq!(
        t.insert(&[ex(&[1])], 0, ad(2, &[]))
            .map(|_| ())
            .unwrap_err(),
        TableError::BadKey {
            field: None,
            reason: "number of field matches differs from the number of key fields"
        }
    );
    assert_eq!(
        t.insert(&[ex(&[1]), ex(&[1])], 5, ad(2, &[])),
        Err(TableError::BadPriority)
    );
    let s = t.stats();
    assert_eq!((s.hits, s.misses), (1, 3));
}

#[test]
fn keyless_table_always_misses() {
    let t = table(vec![], 4);
    t.set_default(ad(3, &[1])).unwrap();
    assert!(t.insert(&[], 0, ad(1, &[])).is_err());
    let l = t.lookup(&[], 0);
    assert!(!l.is_hit());
    assert_eq!(l.data, ad(3, &[1]));
    let mut out = vec![Lookup::default(); 3];
    assert_eq!(t.lookup_batch(&[], 0, &mut out), Ok(0));
    assert!(out.iter().all(|l| l.data == ad(3, &[1])));
}

#[test]
fn lpm_longest_prefix_wins_and_overlaps() {
    let t = table(vec![KeySpec::new("dst", 32, MatchKind::Lpm)], 64);
    t.set_default(ad(0, &[])).unwrap();
    let lpm = |v: [u8; 4], p| [FieldMatch::Lpm(v.to_vec(), p)];
    t.insert(&lpm([0, 0, 0, 0], 0), 0, ad(100, &[])).unwrap();
    t.insert(&lpm([10, 0, 0, 0], 8), 0, ad(8, &[])).unwrap();
    t.insert(&lpm([10, 1, 0, 0], 16), 0, ad(16, &[])).unwrap();
    t.insert(&lpm([10, 1, 2, 0], 24), 0, ad(24, &[])).unwrap();
    t.insert(&lpm([10, 1, 2, 3], 32), 0, ad(32, &[])).unwrap();
    // bits past the prefix are ignored (and canonicalized away)
    assert_eq!(
        t.insert(&lpm([10, 1, 2, 99], 24), 0, ad(1, &[])),
        Err(TableError::Exists)
    );
    let a = |k: [u8; 4]| t.lookup(&k, 0).data.action;
    assert_eq!(a([10, 1, 2, 3]), 32);
    assert_eq!(a([10, 1, 2, 4]), 24);
    assert_eq!(a([10, 1, 3, 4]), 16);
    assert_eq!(a([10, 2, 3, 4]), 8);
    assert_eq!(a([11, 2, 3, 4]), 100);
    t.delete(&lpm([10, 1, 0, 0], 16), 0).unwrap();
    assert_eq!(a([10, 1, 3, 4]), 8);
    t.delete(&lpm([0, 0, 0, 0], 0), 0).unwrap();
    assert_eq!(a([11, 2, 3, 4]), 0);
    assert!(!t.lookup(&[11, 2, 3, 4], 0).is_hit());
    let v = t.read(&lpm([10, 1, 2, 0], 24), 0).unwrap();
    assert_eq!(v.matches, lpm([10, 1, 2, 0], 24).to_vec());
    assert_eq!(v.priority, 0);
    assert_eq!(t.tuple_count(), 3);
}

#[test]
fn lpm_with_exact_field_and_odd_width() {
    let t = table(
        vec![
            KeySpec::new("vrf", 12, MatchKind::Exact),
            KeySpec::new("dst", 20, MatchKind::Lpm),
        ],
        16,
    );
    t.insert(
        &[ex(&[0, 1]), FieldMatch::Lpm(vec![0x0a, 0xbc, 0xd0], 12)],
        0,
        ad(1, &[]),
    )
    .unwrap();
    t.insert(
        &[ex(&[0, 1]), FieldMatch::Lpm(vec![0x0a, 0x00, 0x00], 4)],
        0,
        ad(2, &[]),
    )
    .unwrap();
    t.insert(
        &[ex(&[0, 2]), FieldMatch::Lpm(vec![0x0f, 0xff, 0xff], 20)],
        0,
        ad(3, &[]),
    )
    .unwrap();
    assert!(t
        .insert(
            &[ex(&[0, 2]), FieldMatch::Lpm(vec![0x1f, 0xff, 0xff], 20)],
            0,
            ad(3, &[])
        )
        .is_err());
    let a = |k: [u8; 5]| t.lookup(&k, 0).hit.map(|_| t.lookup(&k, 0).data.action);
    assert_eq!(a([0, 1, 0x0a, 0xbc, 0xde]), Some(1));
    assert_eq!(a([0, 1, 0x0a, 0xb0, 0x00]), Some(2));
    assert_eq!(a([0, 1, 0x0b, 0xbc, 0xde]), None);
    assert_eq!(a([0, 2, 0x0f, 0xff, 0xff]), Some(3));
    assert_eq!(a([0, 3, 0x0a, 0xbc, 0xde]), None);
}

#[test]
fn ternary_priority_larger_wins_ties_by_insertion_order() {
    let t = table(
        vec![
            KeySpec::new("a", 8, MatchKind::Ternary),
            KeySpec::new("b", 8, MatchKind::Ternary),
        ],
        16,
    );
    let tm = |v: u8, m: u8| FieldMatch::Ternary(vec![v], vec![m]);
    assert_eq!(
        t.insert(&[tm(1, 0xff), tm(0, 0)], 0, ad(1, &[])),
        Err(TableError::BadPriority)
    );
    t.insert(&[tm(1, 0xff), tm(0, 0)], 10, ad(1, &[])).unwrap();
    t.insert(&[tm(0, 0), tm(2, 0xff)], 20, ad(2, &[])).unwrap();
    t.insert(&[tm(1, 0x0f), tm(2, 0x0f)], 5, ad(3, &[]))
        .unwrap();
    // same mask and value, different priority: allowed (P4Runtime identity includes priority)
    t.insert(&[tm(1, 0xff), tm(0, 0)], 30, ad(4, &[])).unwrap();
    assert_eq!(
        t.insert(&[tm(1, 0xff), tm(0, 0)], 30, ad(9, &[])),
        Err(TableError::Exists)
    );
    let a = |k: [u8; 2]| t.lookup(&k, 0).data.action;
    assert_eq!(a([1, 2]), 4); // 30 beats 20 and 10
    assert_eq!(a([0, 2]), 2);
    assert_eq!(a([0x11, 0x12]), 3);
    t.delete(&[tm(1, 0xff), tm(0, 0)], 30).unwrap();
    assert_eq!(a([1, 2]), 2);
    // ties: the earlier insertion wins, independent of the mask
    t.insert(&[tm(0, 0), tm(0x12, 0xff)], 50, ad(5, &[]))
        .unwrap();
    t.insert(&[tm(0x11, 0xff), tm(0, 0)], 50, ad(6, &[]))
        .unwrap();
    assert_eq!(a([0x11, 0x12]), 5);
    // value bits outside the mask are ignored
    let v = t
        .insert(&[tm(0xff, 0x0f), tm(0, 0)], 1, ad(7, &[]))
        .unwrap();
    assert_eq!(t.get(v).unwrap().matches, vec![tm(0x0f, 0x0f), tm(0, 0)]);
    assert_eq!(t.get(v).unwrap().priority, 1);
}

#[test]
fn range_and_optional() {
    let t = table(
        vec![
            KeySpec::new("port", 16, MatchKind::Range),
            KeySpec::new("proto", 8, MatchKind::Optional),
        ],
        16,
    );
    let r =
        |lo: u16, hi: u16| FieldMatch::Range(lo.to_be_bytes().to_vec(), hi.to_be_bytes().to_vec());
    let any = FieldMatch::Optional(None);
    let tcp = FieldMatch::Optional(Some(vec![6]));
    t.insert(&[r(0, 1023), any.clone()], 1, ad(1, &[])).unwrap();
    t.insert(&[r(80, 80), tcp.clone()], 9, ad(2, &[])).unwrap();
    t.insert(&[r(1000, 2000), any.clone()], 5, ad(3, &[]))
        .unwrap();
    t.insert(&[r(0, 1023), any.clone()], 2, ad(4, &[])).unwrap();
    assert!(matches!(
        t.insert(&[r(9, 8), any.clone()], 1, ad(1, &[])),
        Err(TableError::BadKey { field: Some(0), .. })
    ));
    let a = |p: u16, pr: u8| {
        let mut k = p.to_be_bytes().to_vec();
        k.push(pr);
        let l = t.lookup(&k, 0);
        l.hit.map(|_| l.data.action)
    };
    assert_eq!(a(80, 6), Some(2));
    assert_eq!(a(80, 17), Some(4));
    assert_eq!(a(1010, 17), Some(3));
    assert_eq!(a(1023, 17), Some(3));
    assert_eq!(a(999, 17), Some(4));
    assert_eq!(a(2001, 6), None);
    let v = t.read(&[r(80, 80), tcp.clone()], 9).unwrap();
    assert_eq!(v.matches, vec![r(80, 80), tcp]);
    assert_eq!(t.read(&[r(80, 80), any], 9), Err(TableError::NotFound));
}

#[test]
fn full_table_and_reuse() {
    let t = table(vec![KeySpec::new("k", 16, MatchKind::Exact)], 100);
    for i in 0..100u16 {
        t.insert(&[ex(&i.to_be_bytes())], 0, ad(1, &[])).unwrap();
    }
    assert_eq!(
        t.insert(&[ex(&[1, 0])], 0, ad(1, &[])),
        Err(TableError::Full)
    );
    assert_eq!(t.len(), 100);
    t.delete(&[ex(&[0, 5])], 0).unwrap();
    assert_eq!(t.delete(&[ex(&[0, 5])], 0), Err(TableError::NotFound));
    t.insert(&[ex(&[1, 0])], 0, ad(1, &[])).unwrap();
    for i in 0..100u16 {
        assert_eq!(t.lookup(&i.to_be_bytes(), 0).is_hit(), i != 5, "key {i}");
    }
    assert!(t.lookup(&[1, 0], 0).is_hit());
    t.clear();
    assert!(t.is_empty());
    assert!(!t.lookup(&[0, 1], 0).is_hit());
    let z = table(vec![KeySpec::new("k", 8, MatchKind::Exact)], 0);
    assert_eq!(z.insert(&[ex(&[1])], 0, ad(1, &[])), Err(TableError::Full));
}

#[test]
fn add_on_miss_fills_to_declared_size() {
    let spec = TableSpec::new(
        "learn",
        vec![KeySpec::new("flow", 104, MatchKind::Exact)],
        10_000,
    )
    .with_add_on_miss(true);
    let t = Table::new(spec).unwrap();
    let key = |i: u32| {
        let mut k = [0u8; 13];
        k[..4].copy_from_slice(&i.to_be_bytes());
        k[12] = 6;
        k
    };
    for i in 0..10_000 {
        assert!(
            t.add_on_miss(&key(i), &ad(1, &i.to_le_bytes()), 0, 0)
                .is_added(),
            "insert {i} failed"
        );
    }
    assert_eq!(
        t.add_on_miss(&key(0), &ad(1, &[]), 0, 0),
        AddStatus::AlreadyPresent
    );
    assert_eq!(
        t.add_on_miss(&key(10_000), &ad(1, &[]), 0, 0),
        AddStatus::Full
    );
    for i in 0..10_000 {
        let l = t.lookup(&key(i), 0);
        assert_eq!(&*l.data.params, &i.to_le_bytes());
    }
    let s = t.stats();
    assert_eq!((s.inserts, s.inserts_full), (10_000, 1));
    assert!(matches!(
        t.add_on_miss(&[1], &ad(1, &[]), 0, 0),
        AddStatus::Rejected(TableError::BadKey { .. })
    ));
    let plain = table(vec![KeySpec::new("k", 8, MatchKind::Exact)], 4);
    assert_eq!(
        plain.add_on_miss(&[1], &ad(1, &[]), 0, 0),
        AddStatus::Rejected(TableError::NotAddOnMiss)
    );
    // add_on_miss needs all-exact keys
    let bad =
        TableSpec::new("t", vec![KeySpec::new("k", 8, MatchKind::Lpm)], 4).with_add_on_miss(true);
    assert!(matches!(Table::new(bad), Err(TableError::BadSpec(_))));
}

#[test]
fn modify_bumps_version_and_update_params_keeps_it() {
    let t = Table::new(
        TableSpec::new("t", vec![KeySpec::new("k", 8, MatchKind::Exact)], 4)
            .with_max_params_bytes(40),
    )
    .unwrap();
    let id = t.insert(&[ex(&[1])], 0, ad(1, &[1, 1])).unwrap();
    let h = t.lookup(&[1], 0).hit.unwrap();
    assert!(t.update_params(h, &[2, 2, 2]));
    let l = t.lookup(&[1], 0);
    assert_eq!((l.data.clone(), l.version), (ad(1, &[2, 2, 2]), 0));
    assert!(!t.update_params(h, &[0; 41]));
    let long: Vec<u8> = (0..40).collect();
    assert!(t.update_params(h, &long));
    assert_eq!(&*t.lookup(&[1], 0).data.params, &long[..]);
    assert_eq!(t.modify(&[ex(&[1])], 0, ad(5, &[9])).unwrap(), id);
    let l = t.lookup(&[1], 0);
    assert_eq!((l.data, l.version), (ad(5, &[9]), 1));
    assert_eq!(
        t.modify(&[ex(&[2])], 0, ad(5, &[9])),
        Err(TableError::NotFound)
    );
    assert!(matches!(
        t.modify(&[ex(&[1])], 0, ad(5, &[0; 41])),
        Err(TableError::ParamsTooLong { len: 41, max: 40 })
    ));
    // stale handles are refused after delete and slot reuse
    t.delete_id(id).unwrap();
    assert_eq!(t.delete_id(id), Err(TableError::NotFound));
    let id2 = t.insert(&[ex(&[2])], 0, ad(1, &[])).unwrap();
    assert_eq!(id2.slot(), id.slot());
    assert!(!t.update_params(h, &[7]));
    assert_eq!(t.get(h), None);
    assert_eq!(t.stats().updates, 2);
}

#[test]
fn lookup_batch_matches_single_lookups() {
    let t = table(vec![KeySpec::new("k", 32, MatchKind::Exact)], 1000);
    t.set_default(ad(99, &[])).unwrap();
    for i in (0..1000u32).step_by(2) {
        t.insert(&[ex(&i.to_be_bytes())], 0, ad(i, &[])).unwrap();
    }
    let keys: Vec<u8> = (0..100u32).flat_map(|i| i.to_be_bytes()).collect();
    let mut out = vec![Lookup::default(); 100];
    assert_eq!(t.lookup_batch(&keys, 0, &mut out), Ok(50));
    for (i, l) in out.iter().enumerate() {
        assert_eq!(*l, t.lookup(&(i as u32).to_be_bytes(), 0));
    }
    assert!(t.lookup_batch(&keys[1..], 0, &mut out).is_err());
    // batched lookups on a ternary table go through the same path as single ones
    let tt = table(vec![KeySpec::new("k", 8, MatchKind::Ternary)], 8);
    tt.insert(&[FieldMatch::Ternary(vec![1], vec![1])], 1, ad(1, &[]))
        .unwrap();
    let mut out = vec![Lookup::default(); 4];
    assert_eq!(tt.lookup_batch(&[0, 1, 2, 3], 0, &mut out), Ok(2));
}

fn timed(mode: IdleTimeout, size: usize) -> Table {
    let spec = TableSpec::new("t", vec![KeySpec::new("k", 16, MatchKind::Exact)], size)
        .with_add_on_miss(true)
        .with_idle_timeout(mode);
    let t = Table::new(spec).unwrap();
    t.set_profiles(&[10 * MS, 50 * MS, 0]).unwrap();
    t
}

#[test]
fn auto_delete_expiry_with_fake_clock() {
    let t = timed(IdleTimeout::AutoDelete, 8);
    let AddStatus::Added(h) = t.add_on_miss(&[0, 1], &ad(1, &[]), 0, 1000 * MS) else {
        panic!()
    };
    assert!(t.add_on_miss(&[0, 2], &ad(2, &[]), 1, 1000 * MS).is_added());
    assert!(matches!(
        t.add_on_miss(&[0, 3], &ad(2, &[]), 3, 1000 * MS),
        AddStatus::Rejected(TableError::BadProfile(3))
    ));
    assert!(t.expire(1005 * MS).is_empty());
    // a lookup does not restart the timer (PNA), restart_timer does
    assert!(t.lookup(&[0, 1], 1009 * MS).is_hit());
    assert!(t.restart_timer(h, 1005 * MS));
    assert!(t.lookup(&[0, 1], 1014 * MS).is_hit());
    assert!(
        !t.lookup(&[0, 1], 1015 * MS).is_hit(),
        "lazy expiry: a lookup misses past the deadline"
    );
    let e = t.expire(1015 * MS);
    assert_eq!(e.len(), 1);
    assert!(!e[0].notify);
    assert_eq!(e[0].entry.key, vec![0, 1]);
    assert_eq!(e[0].entry.data.action, 1);
    assert_eq!(t.len(), 1);
    assert!(!t.restart_timer(h, 1015 * MS), "stale handle");
    assert!(t.expire(1049 * MS).is_empty());
    let e = t.expire(1050 * MS);
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].entry.key, vec![0, 2]);
    assert!(t.is_empty());
    assert_eq!(t.stats().expirations, 2);
}

#[test]
fn auto_delete_shorter_profile_and_replacement() {
    let t = timed(IdleTimeout::AutoDelete, 2);
    let AddStatus::Added(h) = t.add_on_miss(&[0, 1], &ad(1, &[]), 1, 0) else {
        panic!()
    };
    assert!(t.set_expire_profile(h, 0, 2 * MS)); // deadline moves earlier: 12 ms
    assert!(!t.set_expire_profile(h, 7, 2 * MS));
    assert_eq!(t.get(h).unwrap().deadline_ns, Some(12 * MS));
    assert_eq!(t.get(h).unwrap().expire_profile, Some(0));
    assert_eq!(t.expire(12 * MS).len(), 1);
    // an expired entry that was not swept yet is replaced by add_on_miss
    assert!(t.add_on_miss(&[0, 1], &ad(1, &[]), 0, 100 * MS).is_added());
    assert!(t.add_on_miss(&[0, 2], &ad(1, &[]), 0, 100 * MS).is_added());
    assert_eq!(
        t.add_on_miss(&[0, 1], &ad(1, &[]), 0, 105 * MS),
        AddStatus::AlreadyPresent
    );
    assert!(t.add_on_miss(&[0, 1], &ad(3, &[]), 0, 110 * MS).is_added());
    assert_eq!(t.lookup(&[0, 1], 111 * MS).data.action, 3);
    // full, but [0,2] has expired: it is reclaimed instead of failing
    assert!(t.add_on_miss(&[0, 3], &ad(1, &[]), 0, 111 * MS).is_added());
    assert_eq!(
        t.add_on_miss(&[0, 4], &ad(1, &[]), 0, 111 * MS),
        AddStatus::Full
    );
    assert_eq!(t.len(), 2);
    // the sweep only reports what it removes; the swept-early ones are not reported twice
    let e = t.expire(200 * MS);
    assert_eq!(e.len(), 2);
}

#[test]
fn notify_control_reports_once_per_idle_period() {
    let t = timed(IdleTimeout::NotifyControl, 8);
    let AddStatus::Added(h) = t.add_on_miss(&[0, 1], &ad(1, &[4]), 0, 0) else {
        panic!()
    };
    let c = t
        .insert_with_timeout(&[ex(&[0, 9])], 0, ad(2, &[]), 1, 0)
        .unwrap();
    let forever = t.insert(&[ex(&[0, 8])], 0, ad(3, &[])).unwrap();
    assert_eq!(t.get(forever).unwrap().deadline_ns, None);
    let e = t.expire(10 * MS);
    assert_eq!(e.len(), 1);
    assert!(e[0].notify);
    assert_eq!(e[0].entry.id, h);
    assert_eq!(&*e[0].entry.data.params, &[4]);
    // kept and still matching, not reported again in the same idle period
    assert!(t.lookup(&[0, 1], 20 * MS).is_hit());
    assert!(t.expire(40 * MS).is_empty());
    assert!(t.restart_timer(h, 45 * MS));
    let e = t.expire(55 * MS);
    let ids: Vec<_> = e.iter().map(|x| x.entry.id).collect();
    assert_eq!(ids, vec![c, h]);
    assert!(t.expire(10_000 * MS).is_empty());
    assert_eq!(t.len(), 3);
    assert_eq!(t.stats().notifications, 3);
}

#[test]
fn expiry_over_long_gaps_and_many_wheel_turns() {
    let t = timed(IdleTimeout::AutoDelete, 100);
    t.set_profiles(&[30_000 * MS, 5 * MS]).unwrap(); // longer than a wheel revolution
    for i in 0..50u16 {
        assert!(t
            .add_on_miss(&i.to_be_bytes(), &ad(1, &[]), (i % 2) as u8, 0)
            .is_added());
    }
    let mut now = 0;
    let mut gone = 0;
    while now < 40_000 * MS {
        now += 7 * MS;
        gone += t.expire(now).len();
        if now < 29_990 * MS {
            assert!(gone <= 25);
        }
    }
    assert_eq!(gone, 50);
    assert_eq!(t.expire(u64::MAX).len(), 0);
}

#[test]
fn no_timeout_tables_refuse_timer_calls() {
    let t = table(vec![KeySpec::new("k", 8, MatchKind::Exact)], 4);
    let id = t.insert(&[ex(&[1])], 0, ad(1, &[])).unwrap();
    assert!(!t.restart_timer(id, 0));
    assert!(!t.set_expire_profile(id, 0, 0));
    assert!(t.expire(u64::MAX).is_empty());
    assert_eq!(
        t.insert_with_timeout(&[ex(&[2])], 0, ad(1, &[]), 0, 0),
        Err(TableError::NoIdleTimeout)
    );
    assert_eq!(t.get(id).unwrap().expire_profile, None);
    assert!(t.set_profiles(&[]).is_err());
    assert_eq!(t.profiles().len(), DEFAULT_PROFILES_S.len());
}

#[test]
fn iter_is_a_snapshot_with_data_plane_entries() {
    let spec =
        TableSpec::new("t", vec![KeySpec::new("k", 8, MatchKind::Exact)], 8).with_add_on_miss(true);
    let t = Table::new(spec).unwrap();
    t.insert(&[ex(&[1])], 0, ad(1, &[])).unwrap();
    assert!(t.add_on_miss(&[2], &ad(2, &[7]), 0, 0).is_added());
    let v = t.iter();
    assert_eq!(v.len(), 2);
    assert_eq!(v[1].matches, vec![ex(&[2])]);
    assert_eq!(v[1].data, ad(2, &[7]));
    // the control plane may modify and delete data-plane entries
    t.modify(&[ex(&[2])], 0, ad(3, &[])).unwrap();
    t.delete(&[ex(&[2])], 0).unwrap();
    assert_eq!(t.iter().len(), 1);
}

#[test]
fn bad_specs_are_errors_not_panics() {
    assert!(Table::new(TableSpec::new(
        "t",
        vec![KeySpec::new("k", 8, MatchKind::Exact)],
        usize::MAX
    ))
    .is_err());
    let two_lpm = TableSpec::new(
        "t",
        vec![
            KeySpec::new("a", 8, MatchKind::Lpm),
            KeySpec::new("b", 8, MatchKind::Lpm),
        ],
        4,
    );
    assert!(Table::new(two_lpm).is_err());
    // two lpm fields are fine when priorities are explicit
    let ok = TableSpec::new(
        "t",
        vec![
            KeySpec::new("a", 8, MatchKind::Lpm),
            KeySpec::new("b", 8, MatchKind::Lpm),
            KeySpec::new("c", 8, MatchKind::Ternary),
        ],
        4,
    );
    let t = Table::new(ok).unwrap();
    t.insert(
        &[
            FieldMatch::Lpm(vec![1], 8),
            FieldMatch::Lpm(vec![0], 0),
            FieldMatch::Ternary(vec![0], vec![0]),
        ],
        3,
        ad(1, &[]),
    )
    .unwrap();
    assert!(t.lookup(&[1, 77, 5], 0).is_hit());
}

/// `modify_versioned` reports the version a lookup then sees; `set_profile` adds one profile
/// without touching the others, and entries can be inserted with it.
#[test]
fn versioned_modify_and_single_profiles() {
    let t = Table::new(
        TableSpec::new("t", vec![KeySpec::new("k", 16, MatchKind::Exact)], 8)
            .with_idle_timeout(IdleTimeout::NotifyControl),
    )
    .unwrap();
    t.insert(&[ex(&[0, 1])], 0, ad(1, &[1])).unwrap();
    let (id, v) = t.modify_versioned(&[ex(&[0, 1])], 0, &ad(2, &[2])).unwrap();
    let l = t.lookup(&[0, 1], 0);
    assert_eq!((l.hit, l.version, l.data), (Some(id), v, ad(2, &[2])));
    assert_eq!(v, 1);
    assert_eq!(t.profile_duration(200), None);
    assert!(t
        .insert_with_timeout(&[ex(&[0, 2])], 0, ad(1, &[1]), 200, 0)
        .is_err());
    t.set_profile(200, 5 * MS);
    assert_eq!(t.profile_duration(200), Some(5 * MS));
    assert_eq!(t.profiles().len(), DEFAULT_PROFILES_S.len());
    t.insert_with_timeout(&[ex(&[0, 2])], 0, ad(1, &[1]), 200, 0)
        .unwrap();
    let ex_ = t.expire(6 * MS);
    assert_eq!(ex_.len(), 1);
    assert!(ex_[0].notify);
}
