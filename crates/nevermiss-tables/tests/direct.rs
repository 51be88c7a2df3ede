//! The direct engine (exact tables whose key is packed in 1 or 2 bytes: an array indexed by the
//! key) against the cuckoo hash (`ExactEngine::Hash`): the same random sequence of data-plane
//! and control-plane operations, idle timeouts on a fake clock included, on a table of each
//! kind with the same spec gives identical results and contents (handles up to each engine's
//! numbering, see `Names`). Then the concurrency guarantees on direct tables: one `Added` per
//! key among concurrent adds, no torn or missing entry during modifies, deletes and re-adds;
//! and, on both engines, replacements of expired entries and adds racing with expiry in a
//! full table that never report `Full`.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::*};
use std::sync::Arc;
use std::thread;

use proptest::prelude::*;

use nevermiss_tables::*;

const MS: u64 = 1_000_000;
const PROFILES_MS: [u64; 4] = [3, 10, 25, 40_000];

/// A table: exact field widths, size, largest parameter block, idle timeout, add-on-miss.
#[derive(Clone, Debug)]
struct Shape {
    widths: Vec<u32>,
    size: usize,
    params: usize,
    idle: IdleTimeout,
    add_on_miss: bool,
}

impl Shape {
    fn spec(&self, engine: ExactEngine) -> TableSpec {
        let keys = self
            .widths
            .iter()
            .enumerate()
            .map(|(i, &w)| KeySpec::new(format!("f{i}"), w, MatchKind::Exact))
            .collect();
        TableSpec::new("t", keys, self.size)
            .with_add_on_miss(self.add_on_miss)
            .with_idle_timeout(self.idle)
            .with_max_params_bytes(self.params)
            .with_exact_engine(engine)
    }

    fn bits(&self) -> u32 {
        self.widths.iter().sum()
    }

    /// The packed key (big-endian fields, right-aligned) of the flat value `x < 2^bits`.
    fn key(&self, x: u64) -> Vec<u8> {
        let mut out = Vec::new();
        let mut left = self.bits();
        for &w in &self.widths {
            left -= w;
            let v = (x >> left) & ((1u64 << w) - 1);
            let n = (w as usize).div_ceil(8);
            out.extend_from_slice(&v.to_be_bytes()[8 - n..]);
        }
        out
    }

    /// The field matches of the flat value `x`.
    fn matches(&self, x: u64) -> Vec<FieldMatch> {
        let k = self.key(x);
        let mut off = 0;
        self.widths
            .iter()
            .map(|&w| {
                let n = (w as usize).div_ceil(8);
                off += n;
                FieldMatch::Exact(k[off - n..off].to_vec())
            })
            .collect()
    }
}

fn shape() -> impl Strategy<Value = Shape> {
    let widths = prop::sample::select(vec![
        vec![3],
        vec![8],
        vec![9],
        vec![12],
        vec![16],
        vec![4, 4],
        vec![5, 8],
        vec![1, 1],
    ]);
    let idle = prop::sample::select(vec![
        IdleTimeout::NoTimeout,
        IdleTimeout::NotifyControl,
        IdleTimeout::AutoDelete,
    ]);
    (
        widths,
        prop::sample::select(vec![1usize, 6, 16, 40]),
        // One-line cells (with or without timer words) and multi-line ones.
        prop::sample::select(vec![0usize, 4, 8, 24, 40]),
        idle,
        prop::bool::weighted(0.9),
    )
        .prop_map(|(widths, size, params, idle, add_on_miss)| Shape {
            widths,
            size,
            params,
            idle,
            add_on_miss,
        })
}

/// The keys of a case: indices into a pool of distinct flat values.
const POOL: usize = 24;

#[derive(Clone, Debug)]
enum Op {
    Lookup(usize),
    /// With the key's own hash, or (true) another key's.
    LookupHashed(usize, bool),
    Batch(Vec<usize>),
    Prefetch(usize),
    /// key, action, profile, through `add_on_miss_hashed`
    Add(usize, u32, u8, bool),
    /// key, action, idle-timeout profile
    Insert(usize, u32, Option<u8>),
    Modify(usize, u32),
    Delete(usize),
    Read(usize),
    /// The operations on a handle seen earlier (maybe stale by now).
    DeleteId(usize),
    Get(usize),
    Update(usize, u8),
    Restart(usize),
    SetProfile(usize, u8),
    /// Advance the clock by this many ms (then run `expire` if true: AUTO_DELETE entries past
    /// their deadline stay until then, for lookups to skip and adds to replace).
    Advance(u64, bool),
    SetDefault(u32),
    Clear,
    WrongLength(bool),
}

fn op() -> impl Strategy<Value = Op> {
    let k = 0..POOL;
    let h = any::<usize>();
    let profile = prop_oneof![9 => 0u8..4, 1 => Just(200u8)];
    prop_oneof![
        6 => k.clone().prop_map(Op::Lookup),
        3 => (k.clone(), prop::bool::weighted(0.2)).prop_map(|(k, w)| Op::LookupHashed(k, w)),
        1 => prop::collection::vec(k.clone(), 0..40).prop_map(Op::Batch),
        1 => k.clone().prop_map(Op::Prefetch),
        8 => (k.clone(), 0u32..1000, profile.clone(), any::<bool>())
            .prop_map(|(k, a, p, h)| Op::Add(k, a, p, h)),
        3 => (k.clone(), 0u32..1000, prop::option::of(profile.clone()))
            .prop_map(|(k, a, p)| Op::Insert(k, a, p)),
        2 => (k.clone(), 0u32..1000).prop_map(|(k, a)| Op::Modify(k, a)),
        3 => k.clone().prop_map(Op::Delete),
        1 => k.clone().prop_map(Op::Read),
        1 => h.prop_map(Op::DeleteId),
        1 => h.prop_map(Op::Get),
        2 => (h, any::<u8>()).prop_map(|(h, b)| Op::Update(h, b)),
        2 => h.prop_map(Op::Restart),
        1 => (h, profile).prop_map(|(h, p)| Op::SetProfile(h, p)),
        3 => (prop_oneof![10 => 1u64..30, 1 => 15_000u64..50_000], any::<bool>())
            .prop_map(|(dt, e)| Op::Advance(dt, e)),
        1 => (0u32..1000).prop_map(Op::SetDefault),
        1 => Just(Op::Clear),
        1 => any::<bool>().prop_map(Op::WrongLength),
    ]
}

/// The parameters of action `a`: a length and bytes both derived from it.
fn params(a: u32, max: usize) -> Vec<u8> {
    let n = a as usize % (max + 1);
    (0..n)
        .map(|j| (a as u8).wrapping_add((j as u8).wrapping_mul(31)))
        .collect()
}

fn data(a: u32, max: usize) -> ActionData {
    ActionData::new(a, params(a, max))
}

/// Entry handles are the engines' own (a slot number and its generation), not part of what the
/// engines must agree on (both now replace an expired AUTO_DELETE entry in its own slot, but a
/// table's numbering of its slots is its own business), so results are compared with each
/// handle renamed to the order in which the run first saw it, one renaming per engine, and
/// the two renamings must pair the handles one to one.
#[derive(Default)]
struct Names {
    d: std::collections::HashMap<String, usize>,
    c: std::collections::HashMap<String, usize>,
}

/// The handles (`EntryHandle { … }`) in a result's debug text, and the text with them cut out
/// (and a lookup's `hash`, each engine's own: the direct array's is the key's index).
fn handles_in(text: &str) -> (Vec<String>, String) {
    let unhashed = without_hashes(text);
    let text = unhashed.as_str();
    const H: &str = "EntryHandle {";
    let (mut hs, mut rest, mut s) = (Vec::new(), String::new(), text);
    while let Some(i) = s.find(H) {
        let j = i + s[i..].find('}').unwrap_or(s.len() - i - 1) + 1;
        rest.push_str(&s[..i]);
        rest.push_str("EntryHandle");
        hs.push(s[i..j].to_string());
        s = &s[j..];
    }
    rest.push_str(s);
    (hs, rest)
}

/// `text` with the digits after each `hash: ` cut out.
fn without_hashes(text: &str) -> String {
    const K: &str = "hash: ";
    let (mut out, mut s) = (String::new(), text);
    while let Some(i) = s.find(K) {
        out.push_str(&s[..i + K.len()]);
        s = s[i + K.len()..].trim_start_matches(|ch: char| ch.is_ascii_digit());
    }
    out.push_str(s);
    out
}

/// `f` on both tables: equal results up to the engines' handle numbering ([`Names`]), both
/// returned (direct, cuckoo).
fn same<R: std::fmt::Debug>(
    nm: &mut Names,
    d: &Table,
    c: &Table,
    what: &str,
    f: impl Fn(&Table) -> R,
) -> Result<(R, R), TestCaseError> {
    let (a, b) = (f(d), f(c));
    let ((ha, ta), (hb, tb)) = (handles_in(&format!("{a:?}")), handles_in(&format!("{b:?}")));
    prop_assert_eq!(&ta, &tb, "{}: direct vs cuckoo", what);
    prop_assert_eq!(ha.len(), hb.len(), "{}: direct vs cuckoo handles", what);
    for (x, y) in ha.into_iter().zip(hb) {
        let next = nm.d.len();
        let (i, j) = (nm.d.get(&x).copied(), nm.c.get(&y).copied());
        match (i, j) {
            (None, None) => {
                nm.d.insert(x, next);
                nm.c.insert(y, next);
            }
            _ => prop_assert_eq!(i, j, "{}: direct {} vs cuckoo {}", what, x, y),
        }
    }
    Ok((a, b))
}

/// Whole contents (in key order), statistics and sizes: equal.
fn same_contents(nm: &mut Names, d: &Table, c: &Table) -> Result<(), TestCaseError> {
    same(nm, d, c, "iter", |t| {
        let mut v = t.iter();
        v.sort_by(|x, y| x.key.cmp(&y.key));
        v
    })?;
    same(nm, d, c, "len", |t| t.len())?;
    same(nm, d, c, "stats", |t| t.stats())?;
    same(nm, d, c, "default", |t| t.default_action())?;
    same(nm, d, c, "capacity", |t| t.capacity())?;
    same(nm, d, c, "cell_bytes", |t| t.cell_bytes())?;
    Ok(())
}

fn run(sh: Shape, seed: u64, ops: Vec<Op>) -> Result<(), TestCaseError> {
    let d = Table::new(sh.spec(ExactEngine::Auto)).unwrap();
    let c = Table::new(sh.spec(ExactEngine::Hash)).unwrap();
    prop_assert!(d.is_direct() && !c.is_direct());
    let durs: Vec<u64> = PROFILES_MS.iter().map(|d| d * MS).collect();
    for t in [&d, &c] {
        t.set_profiles(&durs).unwrap();
        t.set_default(data(7, sh.params)).unwrap();
    }
    // Distinct flat values (an odd multiplier permutes the values mod 2^bits).
    let space = 1u64 << sh.bits();
    let pool: Vec<u64> = (0..POOL as u64)
        .map(|j| (j.wrapping_mul(seed | 1).wrapping_add(seed >> 7)) % space)
        .collect();
    let key = |i: usize| sh.key(pool[i]);
    let mut handles: Vec<(EntryHandle, EntryHandle)> = Vec::new();
    let mut nm = Names::default();
    // The handle of an entry in table `t`: direct's or cuckoo's of a pair.
    let pick =
        |t: &Table, h: (EntryHandle, EntryHandle)| if std::ptr::eq(t, &d) { h.0 } else { h.1 };
    let mut now = 5 * MS;
    for op in ops {
        match op {
            Op::Lookup(i) => {
                let k = key(i);
                let l = same(&mut nm, &d, &c, "lookup", |t| {
                    let hit = t.lookup_into(&k, now, &mut Lookup::default());
                    (hit, t.lookup(&k, now))
                })?;
                handles.extend(l.0 .1.hit.zip(l.1 .1.hit));
            }
            Op::LookupHashed(i, wrong) => {
                let k = key(i);
                let other = key((i + 1) % POOL);
                same(&mut nm, &d, &c, "lookup_exact_hashed", |t| {
                    let h = t.hash_key(if wrong { &other } else { &k });
                    let mut o = Lookup::default();
                    let hit = t.lookup_exact_hashed(&k, h, now, &mut o);
                    (h != 0, hit, o)
                })?;
            }
            Op::Batch(is) => {
                let keys: Vec<u8> = is.iter().flat_map(|&i| key(i)).collect();
                let _ = same(&mut nm, &d, &c, "lookup_batch", |t| {
                    let mut outs = vec![Lookup::default(); is.len()];
                    let r = t.lookup_batch(&keys, now, &mut outs);
                    (r, outs)
                })?;
            }
            Op::Prefetch(i) => {
                let k = key(i);
                same(&mut nm, &d, &c, "prefetch", |t| {
                    let p = t.prefetch(&k);
                    if let Some(p) = p {
                        t.prefetch_entry(p);
                    }
                    if let Some(p) = t.prefetch_hashed(t.hash_key(&k)) {
                        t.prefetch_entry(p);
                    }
                    p.is_some()
                })?;
            }
            Op::Add(i, a, p, hashed) => {
                let k = key(i);
                let dt = data(a, sh.params);
                let r = same(&mut nm, &d, &c, "add_on_miss", |t| {
                    if hashed {
                        t.add_on_miss_hashed(&k, t.hash_key(&k), a, &dt.params, p, now)
                    } else {
                        t.add_on_miss(&k, &dt, p, now)
                    }
                })?;
                if let (AddStatus::Added(x), AddStatus::Added(y)) = r {
                    handles.push((x, y));
                }
            }
            Op::Insert(i, a, p) => {
                let m = sh.matches(pool[i]);
                let r = same(&mut nm, &d, &c, "insert", |t| match p {
                    None => t.insert(&m, 0, data(a, sh.params)),
                    Some(p) => t.insert_with_timeout(&m, 0, data(a, sh.params), p, now),
                })?;
                handles.extend(r.0.ok().zip(r.1.ok()));
            }
            Op::Modify(i, a) => {
                let m = sh.matches(pool[i]);
                let _ = same(&mut nm, &d, &c, "modify", |t| {
                    t.modify_versioned(&m, 0, &data(a, sh.params))
                })?;
            }
            Op::Delete(i) => {
                let m = sh.matches(pool[i]);
                let _ = same(&mut nm, &d, &c, "delete", |t| t.delete(&m, 0))?;
            }
            Op::Read(i) => {
                let m = sh.matches(pool[i]);
                let _ = same(&mut nm, &d, &c, "read", |t| t.read(&m, 0))?;
            }
            Op::DeleteId(h) if !handles.is_empty() => {
                let h = handles[h % handles.len()];
                let _ = same(&mut nm, &d, &c, "delete_id", |t| t.delete_id(pick(t, h)))?;
            }
            Op::Get(h) if !handles.is_empty() => {
                let h = handles[h % handles.len()];
                same(&mut nm, &d, &c, "get", |t| t.get(pick(t, h)))?;
            }
            Op::Update(h, b) if !handles.is_empty() => {
                let h = handles[h % handles.len()];
                let p = params(b as u32, sh.params);
                same(&mut nm, &d, &c, "update_params", |t| {
                    t.update_params(pick(t, h), &p)
                })?;
            }
            Op::Restart(h) if !handles.is_empty() => {
                let h = handles[h % handles.len()];
                same(&mut nm, &d, &c, "restart_timer", |t| {
                    t.restart_timer(pick(t, h), now)
                })?;
            }
            Op::SetProfile(h, p) if !handles.is_empty() => {
                let h = handles[h % handles.len()];
                same(&mut nm, &d, &c, "set_expire_profile", |t| {
                    t.set_expire_profile(pick(t, h), p, now)
                })?;
            }
            Op::Advance(dt, expire) => {
                now += dt * MS;
                if expire {
                    same(&mut nm, &d, &c, "expire", |t| t.expire(now))?;
                }
                same_contents(&mut nm, &d, &c)?;
            }
            Op::SetDefault(a) => {
                let _ = same(&mut nm, &d, &c, "set_default", |t| {
                    t.set_default(data(a, sh.params))
                })?;
            }
            Op::Clear => {
                same(&mut nm, &d, &c, "clear", |t| {
                    t.clear();
                    t.len()
                })?;
            }
            Op::WrongLength(long) => {
                let k = if long { vec![1u8; 3] } else { Vec::new() };
                same(&mut nm, &d, &c, "wrong length", |t| {
                    let hit = t.lookup_into(&k, now, &mut Lookup::default());
                    let add = t.add_on_miss(&k, &data(1, sh.params), 0, now);
                    (hit, t.hash_key(&k), t.prefetch(&k).is_some(), add)
                })?;
            }
            _ => {}
        }
    }
    same_contents(&mut nm, &d, &c)?;
    // Every pool key once more, one at a time and batched.
    for i in 0..POOL {
        let k = key(i);
        same(&mut nm, &d, &c, "final lookup", |t| t.lookup(&k, now))?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

    #[test]
    fn direct_and_cuckoo_agree(sh in shape(), seed in any::<u64>(), ops in prop::collection::vec(op(), 0..150)) {
        run(sh, seed, ops)?;
    }
}

// ---------------------------------------------------------------- what only the direct engine does

#[test]
fn narrow_exact_tables_are_direct_unless_told_otherwise() {
    let t = |widths: &[u32], e: ExactEngine| {
        let keys = widths
            .iter()
            .map(|&w| KeySpec::new("f", w, MatchKind::Exact))
            .collect();
        Table::new(TableSpec::new("t", keys, 64).with_exact_engine(e))
    };
    for w in [&[1u32][..], &[8], &[9], &[12], &[16], &[4, 4], &[8, 8]] {
        assert!(t(w, ExactEngine::Auto).unwrap().is_direct(), "{w:?}");
        assert!(t(w, ExactEngine::Direct).unwrap().is_direct(), "{w:?}");
        assert!(!t(w, ExactEngine::Hash).unwrap().is_direct(), "{w:?}");
    }
    // 3 bytes packed (even with 12 bits of key), no key, or a non-exact field: the hash or the
    // tuple index; asking for the direct array is an error.
    for w in [&[17u32][..], &[4, 4, 4], &[32], &[]] {
        assert!(!t(w, ExactEngine::Auto).unwrap().is_direct(), "{w:?}");
        assert!(
            matches!(t(w, ExactEngine::Direct), Err(TableError::BadSpec(_))),
            "{w:?}"
        );
    }
    let lpm = TableSpec::new("l", vec![KeySpec::new("f", 8, MatchKind::Lpm)], 8);
    assert!(!Table::new(lpm.clone()).unwrap().is_direct());
    assert!(Table::new(lpm.with_exact_engine(ExactEngine::Direct)).is_err());
}

/// Keys outside the layout's contract (non-zero pad bits above the array): a miss, a refused
/// add; no other key is disturbed.
#[test]
fn keys_with_pad_bits_miss_and_are_refused() {
    let spec = TableSpec::new("t", vec![KeySpec::new("port", 9, MatchKind::Exact)], 16)
        .with_add_on_miss(true)
        .with_max_params_bytes(4);
    let t = Table::new(spec).unwrap();
    assert!(t.is_direct());
    assert!(t
        .add_on_miss(&[1, 0xff], &ActionData::bare(1), 0, 0)
        .is_added());
    for bad in [[0x02u8, 0xff], [0xff, 0xff], [0x80, 0x00]] {
        assert!(!t.lookup(&bad, 0).is_hit());
        assert_eq!(
            t.add_on_miss(&bad, &ActionData::bare(2), 0, 0),
            AddStatus::Rejected(TableError::BadKey {
                field: None,
                reason: "non-zero pad bits"
            })
        );
        let mut out = Lookup::default();
        assert!(!t.lookup_exact_hashed(&bad, t.hash_key(&bad), 0, &mut out));
        let mut outs = vec![Lookup::default(); 2];
        let two = [bad, [1, 0xff]].concat();
        assert_eq!(t.lookup_batch(&two, 0, &mut outs), Ok(1));
        assert!(!outs[0].is_hit() && outs[1].is_hit());
    }
    // The control plane refuses them already (value wider than the field).
    assert!(t
        .insert(&[FieldMatch::Exact(vec![2, 0])], 0, ActionData::bare(1))
        .is_err());
    assert_eq!(t.len(), 1);
}

/// Memory: one 8-byte word per key value below the largest one without pad bits, and no more
/// entry slots than key values.
#[test]
fn the_array_is_as_large_as_the_key_space() {
    let mem = |w: u32, size: usize, e: ExactEngine| {
        let spec = TableSpec::new("t", vec![KeySpec::new("k", w, MatchKind::Exact)], size)
            .with_max_params_bytes(8)
            .with_exact_engine(e);
        Table::new(spec).unwrap().memory_bytes()
    };
    // A bit<9> table of 1 << 20 entries holds at most 512: its cells are 512 + 1, not 2^20.
    assert!(mem(9, 1 << 20, ExactEngine::Auto) < 200_000);
    assert!(mem(9, 1 << 20, ExactEngine::Hash) > 60_000_000);
    // bit<16>: 512 KiB of index words.
    let d16 = mem(16, 1 << 16, ExactEngine::Auto);
    let c16 = mem(16, 1 << 16, ExactEngine::Hash);
    assert!(d16 < c16, "{d16} {c16}");
    let spec = TableSpec::new("t", vec![KeySpec::new("k", 4, MatchKind::Exact)], 100)
        .with_add_on_miss(true);
    let t = Table::new(spec).unwrap();
    assert_eq!(t.capacity(), 100);
    for k in 0..16u8 {
        let s = t.add_on_miss(&[k], &ActionData::bare(k as u32), 0, 0);
        let AddStatus::Added(h) = s else {
            panic!("{s:?}")
        };
        assert!(h.slot() < 16);
    }
    assert_eq!(t.len(), 16);
}

// ---------------------------------------------------------------- concurrency

const P: usize = 24; // three 8-byte words: a torn read would mix patterns

fn table(size: usize, e: ExactEngine) -> Arc<Table> {
    let spec = TableSpec::new("t", vec![KeySpec::new("k", 16, MatchKind::Exact)], size)
        .with_add_on_miss(true)
        .with_max_params_bytes(P)
        .with_exact_engine(e);
    Arc::new(Table::new(spec).unwrap())
}

fn key(k: u32) -> [u8; 2] {
    (k as u16).to_be_bytes()
}

/// The entry data of key `k` in its round `r`: every byte the same, the key in the action.
fn pattern(k: u32, r: u8) -> ActionData {
    ActionData::new(k, vec![r; P])
}

fn check(k: u32, d: &ActionData) {
    assert_eq!(d.action, k, "another key's entry");
    assert!(
        d.params.len() == P && d.params.iter().all(|&x| x == d.params[0]),
        "torn: {d:?}"
    );
}

fn shuffled(n: u32, seed: u64) -> Vec<u32> {
    let mut v: Vec<u32> = (0..n).collect();
    let mut x = seed | 1;
    for i in (1..v.len()).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.swap(i, (x % (i as u64 + 1)) as usize);
    }
    v
}

/// Four threads add the same keys (both add calls, in their own orders): one `Added` per key.
#[test]
fn concurrent_adds_of_one_key_add_it_once() {
    for e in [ExactEngine::Auto, ExactEngine::Hash] {
        const N: u32 = 30_000;
        let t = table(N as usize, e);
        assert_eq!(t.is_direct(), e == ExactEngine::Auto);
        let added: Arc<Vec<AtomicU32>> = Arc::new((0..N).map(|_| AtomicU32::new(0)).collect());
        let workers: Vec<_> = (0..4u64)
            .map(|w| {
                let (t, added) = (t.clone(), added.clone());
                thread::spawn(move || {
                    let mut out = Lookup::default();
                    for k in shuffled(N, 0x9e37 + w) {
                        let kb = key(k);
                        let h = t.hash_key(&kb);
                        if t.lookup_exact_hashed(&kb, h, 0, &mut out) {
                            check(k, &out.data);
                            continue;
                        }
                        let d = pattern(k, w as u8);
                        let s = if (k as u64 + w).is_multiple_of(2) {
                            t.add_on_miss_hashed(&kb, h, d.action, &d.params, 0, 0)
                        } else {
                            t.add_on_miss(&kb, &d, 0, 0)
                        };
                        match s {
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
        for w in workers {
            w.join().unwrap();
        }
        assert!(
            added.iter().all(|a| a.load(Relaxed) == 1),
            "a key added twice or never"
        );
        assert_eq!(t.len(), N as usize);
        assert_eq!(t.stats().inserts, N as u64);
        let entries = t.iter();
        assert_eq!(entries.len(), N as usize);
        let mut seen = vec![false; 1 << 16];
        for e in &entries {
            let k = u16::from_be_bytes([e.key[0], e.key[1]]) as usize;
            assert!(!seen[k], "key {k} listed twice");
            seen[k] = true;
            check(k as u32, &e.data);
        }
    }
}

/// AUTO_DELETE: every key's entry has expired; four threads add them again at once: one
/// `Added` per key (the one that replaced the expired entry), and one expiration counted.
/// The table is full (every one of its `N` slots holds an expired entry), so a replacement
/// that needed a second slot before giving the old one back found none: `Full` (1 run in 10).
#[test]
fn concurrent_replacements_of_an_expired_entry_replace_it_once() {
    for lock_free in [false, true] {
        replace_every_expired_entry_at_once(ExactEngine::Auto, lock_free);
    }
}

/// [`concurrent_replacements_of_an_expired_entry_replace_it_once`] on the cuckoo hash: the
/// same full table of expired entries, the same four threads.
#[test]
fn concurrent_replacements_in_a_full_cuckoo_table_replace_each_entry_once() {
    for lock_free in [false, true] {
        replace_every_expired_entry_at_once(ExactEngine::Hash, lock_free);
    }
}

/// An add-on-miss AUTO_DELETE table of `n` entries, 16-bit keys, on `engine`; `lock_free`:
/// with lock-free data-plane writes (`data_plane_updates`: its removals in bulk wait for
/// hazard words once per batch, and a replacement in place once).
fn auto_delete_table(n: u32, engine: ExactEngine, lock_free: bool) -> Arc<Table> {
    let spec = TableSpec::new(
        "t",
        vec![KeySpec::new("k", 16, MatchKind::Exact)],
        n as usize,
    )
    .with_add_on_miss(true)
    .with_idle_timeout(IdleTimeout::AutoDelete)
    .with_max_params_bytes(P)
    .with_exact_engine(engine)
    .with_data_plane_updates(lock_free);
    Arc::new(Table::new(spec).unwrap())
}

/// A full AUTO_DELETE table of `N` entries, all expired, whose keys four threads add again at
/// once: exactly one `Added` per key, never `Full`; the replaced entries' handles are stale.
fn replace_every_expired_entry_at_once(engine: ExactEngine, lock_free: bool) {
    const N: u32 = 5_000;
    let t = auto_delete_table(N, engine, lock_free);
    assert_eq!(t.is_direct(), engine == ExactEngine::Auto);
    let mut old = Vec::new();
    for k in 0..N {
        match t.add_on_miss(&key(k), &pattern(k, 0), 0, 0) {
            AddStatus::Added(h) => old.push(h),
            other => panic!("unexpected {other:?}"),
        }
    }
    let later = 11 * 1_000 * MS; // past profile 0 (10 s)
    let added: Arc<Vec<AtomicU32>> = Arc::new((0..N).map(|_| AtomicU32::new(0)).collect());
    let workers: Vec<_> = (0..4u64)
        .map(|w| {
            let (t, added) = (t.clone(), added.clone());
            thread::spawn(move || {
                for k in shuffled(N, 0x51 + w) {
                    match t.add_on_miss(&key(k), &pattern(k, 1 + w as u8), 1, later) {
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
    for w in workers {
        w.join().unwrap();
    }
    assert!(added.iter().all(|a| a.load(Relaxed) == 1));
    assert_eq!(t.len(), N as usize);
    assert_eq!(t.stats().expirations, N as u64);
    for k in 0..N {
        let l = t.lookup(&key(k), later);
        assert!(l.is_hit());
        check(k, &l.data);
        assert_ne!(l.data.params[0], 0, "the expired entry survived");
        // The replaced entry's handle is stale, even where the new entry took its slot.
        assert!(!t.update_params(old[k as usize], &[0; P]));
        assert!(!t.restart_timer(old[k as usize], later));
        let again = t.lookup(&key(k), later);
        assert_eq!((again.data, again.version), (l.data, l.version));
    }
}

/// AUTO_DELETE, a full table whose entries have all expired, and new keys: in each round the
/// control thread's `expire` removes the expired entries while three threads add as many new
/// keys as the table has slots. Every add finds room — an expired entry's slot, reclaimed by
/// `expire`, by the adds' own sweep, or still on its way to a free list — so none may be
/// `Full`.
#[test]
fn adds_racing_with_expiry_in_a_full_table_never_find_it_full() {
    for engine in [ExactEngine::Auto, ExactEngine::Hash] {
        for lock_free in [false, true] {
            expire_and_add_in_a_full_table(engine, lock_free);
        }
    }
}

fn expire_and_add_in_a_full_table(engine: ExactEngine, lock_free: bool) {
    const N: u32 = 64;
    const ROUNDS: u32 = 3000;
    let t = auto_delete_table(N, engine, lock_free);
    let mut now = 0;
    for r in 0..ROUNDS {
        // Round r's N old keys and N new keys: disjoint (the table is emptied between rounds).
        let old = move |k: u32| (2 * r * N + k) % (1 << 16);
        let new = move |k: u32| ((2 * r + 1) * N + k) % (1 << 16);
        t.clear();
        for k in 0..N {
            assert!(t
                .add_on_miss(&key(old(k)), &pattern(old(k), 0), 0, now)
                .is_added());
        }
        now += 11 * 1_000 * MS; // past profile 0 (10 s): every old entry has expired
        let at = now;
        let expirer = {
            let t = t.clone();
            thread::spawn(move || t.expire(at).len())
        };
        let adders: Vec<_> = (0..3u32)
            .map(|w| {
                let t = t.clone();
                thread::spawn(move || {
                    for k in (w..N).step_by(3) {
                        let k = new(k);
                        match t.add_on_miss(&key(k), &pattern(k, 1), 1, at) {
                            AddStatus::Added(_) => {}
                            other => panic!(
                                "{engine:?} (lock-free {lock_free}) round {r}: key {k}: {other:?}"
                            ),
                        }
                    }
                })
            })
            .collect();
        for a in adders {
            a.join().unwrap();
        }
        expirer.join().unwrap();
        assert_eq!(t.len(), N as usize);
    }
}

/// Readers of a stable key set (lookups one at a time, hashed and batched) while the control
/// plane modifies it and the data plane updates its parameters, and other threads delete and
/// re-add a churn key set (slots reused at once, by other keys): a stable key is never missed
/// and never torn, its version never goes back; a churn key is missing or whole, and never
/// another key's entry.
#[test]
fn readers_see_whole_entries_during_modifies_and_churn() {
    const STABLE: u32 = 64;
    const CHURN: u32 = 192;
    let t = table((STABLE + CHURN) as usize, ExactEngine::Auto);
    assert!(t.is_direct());
    // Stable keys are the even ones below 2 * STABLE; churn keys the odd ones and those above.
    let stable: Vec<u32> = (0..STABLE).map(|i| 2 * i).collect();
    let churn: Vec<u32> = (0..CHURN)
        .map(|i| if i < STABLE { 2 * i + 1 } else { 1000 + i })
        .collect();
    for &k in &stable {
        assert!(t.add_on_miss(&key(k), &pattern(k, 0), 0, 0).is_added());
    }
    let stop = Arc::new(AtomicBool::new(false));
    let reads = Arc::new(AtomicU64::new(0));
    let readers: Vec<_> = (0..2)
        .map(|r| {
            let (t, stop, reads) = (t.clone(), stop.clone(), reads.clone());
            let (stable, churn) = (stable.clone(), churn.clone());
            thread::spawn(move || {
                let mut out = Lookup::default();
                let mut last = vec![0u64; stable.len()];
                let batch: Vec<u8> = stable.iter().chain(&churn).flat_map(|&k| key(k)).collect();
                let mut outs = vec![Lookup::default(); stable.len() + churn.len()];
                while !stop.load(Acquire) {
                    for (j, &k) in stable.iter().enumerate() {
                        let hit = if r == 0 {
                            t.lookup_into(&key(k), 0, &mut out)
                        } else {
                            t.lookup_exact_hashed(&key(k), t.hash_key(&key(k)), 0, &mut out)
                        };
                        assert!(hit, "stable key {k} missing");
                        check(k, &out.data);
                        assert!(out.version >= last[j], "version went back");
                        last[j] = out.version;
                    }
                    for &k in &churn {
                        if t.lookup_into(&key(k), 0, &mut out) {
                            check(k, &out.data);
                        }
                    }
                    t.lookup_batch(&batch, 0, &mut outs).unwrap();
                    for (o, &k) in outs.iter().zip(stable.iter().chain(&churn)) {
                        assert!(
                            o.is_hit() || k % 2 == 1 || k >= 1000,
                            "stable key {k} missing"
                        );
                        if o.is_hit() {
                            check(k, &o.data);
                        }
                    }
                    reads.fetch_add(1, Relaxed);
                }
            })
        })
        .collect();
    // Two churners: one deletes through the control plane, one adds through the data plane
    // and deletes by id.
    let churners: Vec<_> = (0..2u64)
        .map(|c| {
            let (t, stop, churn) = (t.clone(), stop.clone(), churn.clone());
            thread::spawn(move || {
                let mut round = 0u8;
                while !stop.load(Acquire) {
                    round = round.wrapping_add(1);
                    for k in shuffled(churn.len() as u32, 7 + c + round as u64) {
                        let k = churn[k as usize];
                        if c == 0 {
                            let _ = t.delete(&[FieldMatch::Exact(key(k).to_vec())], 0);
                        } else if let AddStatus::Added(h) =
                            t.add_on_miss(&key(k), &pattern(k, round), 0, 0)
                        {
                            if round.is_multiple_of(3) {
                                let _ = t.delete_id(h);
                            }
                        }
                    }
                }
            })
        })
        .collect();
    let mut i = 0u32;
    let mut out = Lookup::default();
    while i < 40_000 || reads.load(Relaxed) < 2_000 {
        i += 1;
        let k = stable[i as usize % stable.len()];
        let b = i as u8;
        if i.is_multiple_of(2) {
            t.modify(&[FieldMatch::Exact(key(k).to_vec())], 0, pattern(k, b))
                .unwrap();
        } else if t.lookup_into(&key(k), 0, &mut out) {
            assert!(t.update_params(out.hit.unwrap(), &[b ^ 0x55; P]));
        }
        if i.is_multiple_of(1024) {
            thread::yield_now();
        }
    }
    stop.store(true, Release);
    for r in readers.into_iter().chain(churners) {
        r.join().unwrap();
    }
    // Consistent at the end: every listed entry once, found by lookups, and len agrees.
    let entries = t.iter();
    assert_eq!(entries.len(), t.len());
    let mut seen = std::collections::HashSet::new();
    for e in &entries {
        let k = u16::from_be_bytes([e.key[0], e.key[1]]) as u32;
        assert!(seen.insert(k), "key {k} listed twice");
        let l = t.lookup(&key(k), 0);
        assert_eq!(l.hit, Some(e.id));
        check(k, &l.data);
    }
    for &k in &stable {
        assert!(seen.contains(&k));
    }
    // Every slot is accounted for: delete all, then the table fills to its size again.
    t.clear();
    assert_eq!(t.len(), 0);
    for k in 0..(STABLE + CHURN) {
        assert!(t.add_on_miss(&key(k), &pattern(k, 1), 0, 0).is_added());
    }
    assert_eq!(
        t.add_on_miss(&key(60_000), &pattern(60_000, 1), 0, 0),
        AddStatus::Full
    );
}

/// AUTO_DELETE, a 3-bit key (8 key values) in a table of 16: once every key value has an entry,
/// an add that replaces an expired one must not find the direct table full (which reclaimed
/// every other expired entry too, where the cuckoo engine replaces just that one): the direct
/// engine keeps a spare slot. The case `direct_and_cuckoo_agree` found, shrunk.
#[test]
fn auto_delete_contents_agree_after_an_add_at_the_deadline() {
    let sh = Shape {
        widths: vec![3],
        size: 16,
        params: 0,
        idle: IdleTimeout::AutoDelete,
        add_on_miss: true,
    };
    let ops = vec![
        Op::Add(20, 0, 0, false),
        Op::Insert(5, 0, None),
        Op::Add(1, 0, 0, false),
        Op::Add(11, 0, 0, false),
        Op::Insert(10, 0, None),
        Op::Lookup(0),
        Op::Get(0),
        Op::Insert(7, 0, Some(0)),
        Op::Lookup(0),
        Op::Lookup(0),
        Op::Add(6, 0, 0, false),
        Op::Add(8, 0, 0, false),
        Op::Get(0),
        Op::Advance(3, false),
        Op::Add(0, 0, 0, false),
    ];
    if let Err(e) = run(sh, 0, ops) {
        panic!("{e}");
    }
}
