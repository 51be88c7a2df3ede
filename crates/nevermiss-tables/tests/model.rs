//! Property tests: every engine against a naive linear-scan model of P4_16 §14.2 matching
//! (exact, lpm = longest prefix, ternary/range/optional = larger priority, ties by insertion order).

use proptest::prelude::*;

use nevermiss_tables::*;

const SIZE: usize = 24;

type Shape = Vec<(u32, MatchKind)>;

fn shapes() -> Vec<Shape> {
    use MatchKind::*;
    vec![
        vec![(6, Exact), (9, Exact)],
        vec![(3, Exact), (10, Lpm)],
        vec![(16, Lpm)],
        vec![(4, Ternary), (4, Ternary)],
        vec![(8, Ternary), (6, Range), (2, Optional), (5, Lpm)],
        vec![(12, Range)],
        // keys longer than 8 bytes take the general (multi-word) lookup path
        vec![(48, Exact), (24, Lpm)],
        vec![(32, Ternary), (32, Ternary), (16, Range), (8, Optional)],
        vec![(72, Exact)],
    ]
}

fn nbytes(w: u32) -> usize {
    (w as usize).div_ceil(8)
}

fn be(v: u64, w: u32) -> Vec<u8> {
    let n = nbytes(w);
    let mut out = vec![0u8; n.saturating_sub(8)];
    let b = v.to_be_bytes();
    out.extend_from_slice(&b[8 - n.min(8)..]);
    out
}

/// Values drawn for a field: all of them for narrow fields, a small range for wide ones so that
/// entries and keys still collide.
fn vmax(w: u32) -> u64 {
    1u64 << w.min(6)
}

/// Masks: wildcard, full, and random ones within and beyond the drawn value range.
fn mask_strategy(w: u32) -> BoxedStrategy<u64> {
    prop_oneof![Just(0), Just(full(w)), 0..vmax(w), 0..=full(w)].boxed()
}

/// Largest value of a field (saturating at 64 bits).
fn full(w: u32) -> u64 {
    if w >= 64 {
        u64::MAX
    } else {
        (1u64 << w) - 1
    }
}

fn field_strategy(w: u32, kind: MatchKind) -> BoxedStrategy<FieldMatch> {
    let max = vmax(w);
    let exact = (0..max).prop_map(move |v| FieldMatch::Exact(be(v, w)));
    match kind {
        MatchKind::Exact => exact.boxed(),
        MatchKind::Lpm => prop_oneof![
            4 => (0..max, 0..=w).prop_map(move |(v, p)| FieldMatch::Lpm(be(v, w), p)),
            1 => exact,
        ]
        .boxed(),
        MatchKind::Ternary => prop_oneof![
            4 => (0..max, mask_strategy(w)).prop_map(move |(v, m)| FieldMatch::Ternary(be(v, w), be(m, w))),
            1 => (0..max).prop_map(move |v| FieldMatch::Ternary(be(v, w), be(full(w), w))),
            1 => exact,
        ]
        .boxed(),
        MatchKind::Range => prop_oneof![
            4 => (0..max, 0..max).prop_map(move |(a, b)| FieldMatch::Range(be(a.min(b), w), be(a.max(b), w))),
            1 => exact,
        ]
        .boxed(),
        MatchKind::Optional => prop_oneof![
            Just(FieldMatch::Optional(None)),
            (0..max).prop_map(move |v| FieldMatch::Optional(Some(be(v, w)))),
        ]
        .boxed(),
    }
}

#[derive(Clone, Debug)]
enum Op {
    Insert(Vec<FieldMatch>, u32, u32),
    Delete(usize),
    Modify(usize, u32),
    Lookup(Vec<u64>),
}

fn key_strategy(shape: &Shape) -> BoxedStrategy<Vec<u64>> {
    shape
        .iter()
        .map(|&(w, _)| (0..vmax(w)).boxed())
        .collect::<Vec<_>>()
        .boxed()
}

fn op_strategy(shape: &Shape) -> BoxedStrategy<Op> {
    let prio = shape.iter().any(|&(_, k)| {
        matches!(
            k,
            MatchKind::Ternary | MatchKind::Range | MatchKind::Optional
        )
    });
    let fields: Vec<_> = shape.iter().map(|&(w, k)| field_strategy(w, k)).collect();
    let prios = if prio {
        (1u32..4).boxed()
    } else {
        Just(0u32).boxed()
    };
    prop_oneof![
        5 => (fields, prios, 0u32..1000).prop_map(|(m, p, a)| Op::Insert(m, p, a)),
        1 => any::<usize>().prop_map(Op::Delete),
        1 => (any::<usize>(), 0u32..1000).prop_map(|(i, a)| Op::Modify(i, a)),
        4 => key_strategy(shape).prop_map(Op::Lookup),
    ]
    .boxed()
}

// ---------------------------------------------------------------- the model

fn val(b: &[u8]) -> u64 {
    b.iter().fold(0, |a, &x| (a << 8) | x as u64)
}

/// Canonical form of a field match: (kind tag, value, mask/plen/hi).
fn canon(m: &FieldMatch, w: u32, kind: MatchKind) -> (u8, u64, u64) {
    let full = full(w);
    match (kind, m) {
        (MatchKind::Exact, FieldMatch::Exact(v)) => (0, val(v), 0),
        (MatchKind::Lpm, FieldMatch::Exact(v)) => (1, val(v), w as u64),
        (MatchKind::Lpm, FieldMatch::Lpm(v, p)) => {
            let mask = if *p == 0 {
                0
            } else {
                full & !((1u64 << (w - p)) - 1)
            };
            (1, val(v) & mask, *p as u64)
        }
        (MatchKind::Ternary, FieldMatch::Exact(v)) => (2, val(v), full),
        (MatchKind::Ternary, FieldMatch::Ternary(v, m)) => (2, val(v) & val(m), val(m)),
        (MatchKind::Range, FieldMatch::Exact(v)) => (3, val(v), val(v)),
        (MatchKind::Range, FieldMatch::Range(lo, hi)) => (3, val(lo), val(hi)),
        (MatchKind::Optional, FieldMatch::Optional(None)) => (4, 0, 0),
        (MatchKind::Optional, FieldMatch::Optional(Some(v)))
        | (MatchKind::Optional, FieldMatch::Exact(v)) => (4, val(v), 1),
        _ => unreachable!(),
    }
}

fn field_matches(c: (u8, u64, u64), w: u32, k: u64) -> bool {
    match c.0 {
        0 => k == c.1,
        1 => c.2 == 0 || (k >> (w as u64 - c.2)) == (c.1 >> (w as u64 - c.2)),
        2 => k & c.2 == c.1,
        3 => c.1 <= k && k <= c.2,
        _ => c.2 == 0 || k == c.1,
    }
}

/// Canonical match of a whole entry.
type Canon = Vec<(u8, u64, u64)>;

struct ModelEntry {
    canon: Canon,
    prio: u32,
    action: u32,
    seq: u64,
}

struct Model {
    shape: Shape,
    entries: Vec<ModelEntry>,
    seq: u64,
}

impl Model {
    fn canon(&self, ms: &[FieldMatch]) -> Canon {
        ms.iter()
            .zip(&self.shape)
            .map(|(m, &(w, k))| canon(m, w, k))
            .collect()
    }

    fn find(&self, c: &[(u8, u64, u64)], prio: u32) -> Option<usize> {
        self.entries
            .iter()
            .position(|e| e.canon == c && e.prio == prio)
    }

    fn lookup(&self, key: &[u64]) -> Option<u32> {
        let has_prio = self.shape.iter().any(|&(_, k)| {
            matches!(
                k,
                MatchKind::Ternary | MatchKind::Range | MatchKind::Optional
            )
        });
        self.entries
            .iter()
            .filter(|e| {
                e.canon
                    .iter()
                    .zip(&self.shape)
                    .zip(key)
                    .all(|((&c, &(w, _)), &k)| field_matches(c, w, k))
            })
            .max_by(|a, b| {
                let rank = |e: &ModelEntry| {
                    if has_prio {
                        e.prio
                    } else {
                        e.canon
                            .iter()
                            .filter(|c| c.0 == 1)
                            .map(|c| c.2 as u32)
                            .sum()
                    }
                };
                rank(a).cmp(&rank(b)).then(b.seq.cmp(&a.seq))
            })
            .map(|e| e.action)
    }
}

fn pack(shape: &Shape, key: &[u64]) -> Vec<u8> {
    shape
        .iter()
        .zip(key)
        .flat_map(|(&(w, _), &v)| be(v, w))
        .collect()
}

fn run(shape: Shape, ops: Vec<Op>, probes: Vec<Vec<u64>>) -> Result<(), TestCaseError> {
    let keys = shape
        .iter()
        .enumerate()
        .map(|(i, &(w, k))| KeySpec::new(format!("f{i}"), w, k))
        .collect();
    let t = Table::new(TableSpec::new("t", keys, SIZE)).unwrap();
    t.set_default(ActionData::bare(u32::MAX - 1)).unwrap();
    let mut m = Model {
        shape: shape.clone(),
        entries: Vec::new(),
        seq: 0,
    };
    let mut specs: Vec<(Vec<FieldMatch>, u32)> = Vec::new();
    let check = |m: &Model, key: &[u64]| -> Result<(), TestCaseError> {
        let l = t.lookup(&pack(&shape, key), 0);
        let got = l.hit.map(|_| l.data.action);
        prop_assert_eq!(got, m.lookup(key), "key {:?}", key);
        if got.is_none() {
            prop_assert_eq!(l.data.action, u32::MAX - 1);
        }
        Ok(())
    };
    for op in ops {
        match op {
            Op::Insert(ms, prio, action) => {
                let c = m.canon(&ms);
                let r = t.insert(&ms, prio, ActionData::bare(action));
                if m.find(&c, prio).is_some() {
                    prop_assert_eq!(r, Err(TableError::Exists));
                } else if m.entries.len() == SIZE {
                    prop_assert_eq!(r, Err(TableError::Full));
                } else {
                    prop_assert!(r.is_ok(), "{:?}", r);
                    m.entries.push(ModelEntry {
                        canon: c,
                        prio,
                        action,
                        seq: m.seq,
                    });
                    m.seq += 1;
                    specs.push((ms, prio));
                }
            }
            Op::Delete(i) if !specs.is_empty() => {
                let (ms, prio) = &specs[i % specs.len()];
                let c = m.canon(ms);
                let r = t.delete(ms, *prio);
                match m.find(&c, *prio) {
                    Some(p) => {
                        prop_assert_eq!(r, Ok(()));
                        m.entries.remove(p);
                    }
                    None => prop_assert_eq!(r, Err(TableError::NotFound)),
                }
            }
            Op::Modify(i, a) if !specs.is_empty() => {
                let (ms, prio) = &specs[i % specs.len()];
                let c = m.canon(ms);
                let r = t.modify(ms, *prio, ActionData::bare(a));
                match m.find(&c, *prio) {
                    Some(p) => {
                        prop_assert!(r.is_ok());
                        m.entries[p].action = a;
                    }
                    None => prop_assert_eq!(r, Err(TableError::NotFound)),
                }
            }
            Op::Lookup(k) => check(&m, &k)?,
            _ => {}
        }
    }
    for k in &probes {
        check(&m, k)?;
    }
    // batched lookups agree with single ones
    let packed: Vec<u8> = probes.iter().flat_map(|k| pack(&shape, k)).collect();
    let mut out = vec![Lookup::default(); probes.len()];
    t.lookup_batch(&packed, 0, &mut out).unwrap();
    for (k, l) in probes.iter().zip(&out) {
        prop_assert_eq!(l.hit.map(|_| l.data.action), m.lookup(k));
    }
    // the snapshot holds exactly the model's entries, and reading each back round-trips
    let mut got: Vec<(Canon, u32, u32)> = t
        .iter()
        .iter()
        .map(|e| (m.canon(&e.matches), e.priority, e.data.action))
        .collect();
    let mut want: Vec<_> = m
        .entries
        .iter()
        .map(|e| (e.canon.clone(), e.prio, e.action))
        .collect();
    got.sort();
    want.sort();
    prop_assert_eq!(got, want);
    for e in t.iter() {
        let r = t.read(&e.matches, e.priority).unwrap();
        prop_assert_eq!(r.id, e.id);
    }
    Ok(())
}

fn case(shape: Shape) -> impl Strategy<Value = (Shape, Vec<Op>, Vec<Vec<u64>>)> {
    let ops = prop::collection::vec(op_strategy(&shape), 0..80);
    let probes = prop::collection::vec(key_strategy(&shape), 32);
    (Just(shape), ops, probes)
}

fn all_cases() -> impl Strategy<Value = (Shape, Vec<Op>, Vec<Vec<u64>>)> {
    let s = shapes();
    prop::sample::select(s).prop_flat_map(case)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    #[test]
    fn table_agrees_with_linear_scan((shape, ops, probes) in all_cases()) {
        run(shape, ops, probes)?;
    }

    /// Keys longer than 8 bytes with priorities: the general multi-word path.
    #[test]
    fn wide_ternary_agrees_with_linear_scan((shape, ops, probes) in case(shapes()[7].clone())) {
        run(shape, ops, probes)?;
    }
}

// ---------------------------------------------------------------- exact engine under churn

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Many inserts and deletes at high load: backward-shift deletion keeps every key findable.
    #[test]
    fn exact_churn_agrees_with_hash_set(ops in prop::collection::vec((any::<bool>(), 0u16..1500), 4000)) {
        let t = Table::new(TableSpec::new("t", vec![KeySpec::new("k", 16, MatchKind::Exact)], 1000)).unwrap();
        let mut m = std::collections::BTreeSet::new();
        for (ins, k) in ops {
            let spec = [FieldMatch::Exact(k.to_be_bytes().to_vec())];
            if ins {
                let r = t.insert(&spec, 0, ActionData::bare(k as u32));
                if m.contains(&k) {
                    prop_assert_eq!(r, Err(TableError::Exists));
                } else if m.len() == 1000 {
                    prop_assert_eq!(r, Err(TableError::Full));
                } else {
                    prop_assert!(r.is_ok());
                    m.insert(k);
                }
            } else {
                prop_assert_eq!(t.delete(&spec, 0).is_ok(), m.remove(&k));
            }
        }
        for k in 0u16..1500 {
            let l = t.lookup(&k.to_be_bytes(), 0);
            prop_assert_eq!(l.is_hit(), m.contains(&k));
            if l.is_hit() {
                prop_assert_eq!(l.data.action, k as u32);
            }
        }
    }
}

// ---------------------------------------------------------------- idle timeouts

const MS: u64 = 1_000_000;
const PROFILES_MS: [u64; 4] = [3, 10, 25, 40_000];

#[derive(Clone, Debug)]
enum TOp {
    Add(u8, u8),
    Restart(u8),
    SetProfile(u8, u8),
    Advance(u64),
    Lookup(u8),
}

fn top() -> impl Strategy<Value = TOp> {
    prop_oneof![
        4 => (0u8..16, 0u8..4).prop_map(|(k, p)| TOp::Add(k, p)),
        3 => (0u8..16).prop_map(TOp::Restart),
        1 => (0u8..16, 0u8..4).prop_map(|(k, p)| TOp::SetProfile(k, p)),
        3 => prop_oneof![10 => 1u64..40, 1 => 15_000u64..50_000].prop_map(TOp::Advance),
        3 => (0u8..16).prop_map(TOp::Lookup),
    ]
}

fn run_timeouts(mode: IdleTimeout, ops: Vec<TOp>) -> Result<(), TestCaseError> {
    let auto = mode == IdleTimeout::AutoDelete;
    let spec = TableSpec::new("t", vec![KeySpec::new("k", 8, MatchKind::Exact)], 16)
        .with_add_on_miss(true)
        .with_idle_timeout(mode);
    let t = Table::new(spec).unwrap();
    let durs: Vec<u64> = PROFILES_MS.iter().map(|d| d * MS).collect();
    t.set_profiles(&durs).unwrap();
    // key -> (deadline, profile, notified)
    let mut m: std::collections::BTreeMap<u8, (u64, u8, bool)> = Default::default();
    let mut now = 5 * MS;
    for op in ops {
        let live = |m: &std::collections::BTreeMap<u8, (u64, u8, bool)>, k: u8, now: u64| {
            m.get(&k).is_some_and(|e| !(auto && e.0 <= now))
        };
        match op {
            TOp::Add(k, p) => {
                let r = t.add_on_miss(&[k], &ActionData::bare(k as u32), p, now);
                if live(&m, k, now) {
                    prop_assert_eq!(r, AddStatus::AlreadyPresent);
                } else {
                    prop_assert!(r.is_added(), "{:?}", r);
                    m.insert(k, (now + durs[p as usize], p, false));
                }
            }
            TOp::Restart(k) | TOp::SetProfile(k, _) => {
                let l = t.lookup(&[k], now);
                prop_assert_eq!(l.is_hit(), live(&m, k, now));
                if let Some(h) = l.hit {
                    let e = m.get_mut(&k).unwrap();
                    if let TOp::SetProfile(_, p) = op {
                        prop_assert!(t.set_expire_profile(h, p, now));
                        e.1 = p;
                    } else {
                        prop_assert!(t.restart_timer(h, now));
                    }
                    *e = (now + durs[e.1 as usize], e.1, false);
                }
            }
            TOp::Lookup(k) => {
                prop_assert_eq!(t.lookup(&[k], now).is_hit(), live(&m, k, now));
            }
            TOp::Advance(dt) => {
                now += dt * MS;
                let mut got: Vec<(u8, bool)> = t
                    .expire(now)
                    .iter()
                    .map(|e| (e.entry.key[0], e.notify))
                    .collect();
                got.sort();
                let mut want = Vec::new();
                for (&k, e) in m.iter_mut() {
                    if e.0 <= now && !e.2 {
                        e.2 = true;
                        want.push((k, !auto));
                    }
                }
                if auto {
                    m.retain(|_, e| !e.2);
                }
                // AUTO_DELETE entries replaced lazily by add_on_miss were already removed.
                prop_assert_eq!(got, want, "at {} ms", now / MS);
                prop_assert_eq!(t.len(), m.len());
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn auto_delete_agrees_with_model(ops in prop::collection::vec(top(), 0..120)) {
        run_timeouts(IdleTimeout::AutoDelete, ops)?;
    }

    #[test]
    fn notify_control_agrees_with_model(ops in prop::collection::vec(top(), 0..120)) {
        run_timeouts(IdleTimeout::NotifyControl, ops)?;
    }
}
