//! Instructions per operation of the exact engine's data-plane calls, counted by callgrind.
//!
//! ```text
//! cargo build --release -p nevermiss-tables --example icount
//! target/release/examples/icount [FILTER]          # runs itself under valgrind once per op
//! target/release/examples/icount run OP [N]        # one op, N times (what valgrind runs)
//! ```
//! Each operation is a `#[inline(never)]` function `op_<name>` looping N times over prepared
//! keys; callgrind collects only inside it (`--toggle-collect`), so table setup is not counted.
//! Column A: (the loop − the same loop without the table call) / N — what a caller pays,
//! including the call and the loop's use of the result (1–3 instructions). Column B: the
//! inclusive instructions / N of the table function that the (inline) API reaches through its
//! per-table function pointer (`lookup_shape`, `add_shape`, `hash_shape`), where there is one;
//! `update_params` is not inline, so B is all of it.
//! Tables: `k4` = one 32-bit exact field, 4-byte parameters (the add-on-miss example);
//! `k13` = a 5-tuple (32+32+16+16+8 bits), 8-byte parameters; `k2` = one 16-bit exact field,
//! 4-byte parameters (a direct table: the key indexes an array), and `k2h` the same table
//! forced onto the cuckoo hash (`ExactEngine::Hash`). Lookups run on 1024 stored keys (in
//! cache); inserts add N new keys to a 2^20-entry table (bucket almost never full), for `k2`
//! and `k2h` to a 2^16-entry one (N keys, 25 % of the key space). `fill` is `add_hashed` into
//! a table of N + N/8 + 64 entries, sized as `nevermiss bench` sizes its add-on-miss table for
//! N keys: the average insert of the bench's phase 1 (its ways end 75 % full; full primary
//! buckets, secondary buckets and cuckoo moves included).
//! `*_hashed` ops call the API for callers that have the key's hash (`hash_key`, measured as
//! `hash`): `lookup_exact_hashed`, `prefetch_hashed` + `prefetch_entry`, `add_on_miss_hashed`.
//! Numbers are deterministic (same binary, same N), so two builds compare exactly.
use std::hint::black_box;
use std::process::Command;

use nevermiss_tables::*;

const N: usize = 1 << 14;
const STORED: usize = 1024;

/// One measured operation: its name, the loop it runs, and the table functions whose
/// inclusive instructions are its cost (none: the loop minus the same loop doing nothing, for
/// calls that are inlined into the loop).
struct Op {
    name: &'static str,
    run: fn(&Ctx, usize),
    collect: &'static [&'static str],
}

/// A table shape: key bytes and whether the cuckoo hash is forced.
#[derive(Clone, Copy)]
struct Shape {
    kl: usize,
    hash: bool,
}

/// Prepared tables and keys for one key shape.
struct Ctx {
    t: Table,
    kl: usize,
    /// `STORED` keys present in `t`, back to back.
    hits: Vec<u8>,
    /// `STORED` keys absent from `t`.
    misses: Vec<u8>,
    /// `N` fresh keys for inserts (absent).
    fresh: Vec<u8>,
    /// `hash_key` of each key of `hits`, `misses`, `fresh`.
    hits_h: Vec<u64>,
    misses_h: Vec<u64>,
    fresh_h: Vec<u64>,
    data: ActionData,
}

fn mix(i: u64) -> u64 {
    let x = i.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    x ^ (x >> 29)
}

fn key(kl: usize, i: u64) -> Vec<u8> {
    if kl == 2 {
        // Distinct for distinct i < 2^16: an odd multiplier is a permutation of the 16-bit keys.
        return ((i as u16).wrapping_mul(0x9e37) ^ 0x5a5a)
            .to_be_bytes()
            .to_vec();
    }
    let a = mix(i).to_le_bytes();
    let b = mix(i ^ 0x5555_0000_0000).to_le_bytes();
    a.iter().chain(&b).take(kl).copied().collect()
}

/// `fill`: the table sized as `nevermiss bench` sizes its add-on-miss table for the keys it
/// inserts (`N + N/8 + 64`), so the inserts fill it as the bench's phase 1 does.
fn ctx(shape: Shape, fresh: bool, fill: bool) -> Ctx {
    let kl = shape.kl;
    let (keys, params) = if kl == 4 {
        (vec![KeySpec::new("dst", 32, MatchKind::Exact)], 4)
    } else if kl == 2 {
        (vec![KeySpec::new("port", 16, MatchKind::Exact)], 4)
    } else {
        let f = |n: &str, w| KeySpec::new(n, w, MatchKind::Exact);
        (
            vec![
                f("src", 32),
                f("dst", 32),
                f("sport", 16),
                f("dport", 16),
                f("proto", 8),
            ],
            8,
        )
    };
    let size = match (fresh, kl) {
        _ if fill => N + N / 8 + 64,
        (true, 2) => 1 << 16,
        (true, _) => 1 << 20,
        (false, _) => 4 * STORED,
    };
    let engine = if shape.hash {
        ExactEngine::Hash
    } else {
        ExactEngine::Auto
    };
    let t = Table::new(
        TableSpec::new("flows", keys, size)
            .with_add_on_miss(true)
            .with_max_params_bytes(params)
            .with_exact_engine(engine),
    )
    .expect("table");
    assert_eq!(t.is_direct(), kl <= 2 && !shape.hash);
    t.set_default(ActionData::bare(2)).expect("default");
    let data = ActionData::new(1, vec![7u8; params]);
    let hits: Vec<u8> = (0..STORED as u64).flat_map(|i| key(kl, i)).collect();
    // (2-byte keys: disjoint ranges of the 2^16 distinct ones.)
    let (miss0, fresh0, warm0) = if kl == 2 {
        (
            STORED as u64,
            2 * STORED as u64,
            2 * STORED as u64 + N as u64,
        )
    } else {
        (1 << 40, 1 << 41, 1 << 42)
    };
    let misses: Vec<u8> = (0..STORED as u64)
        .flat_map(|i| key(kl, i + miss0))
        .collect();
    let fresh: Vec<u8> = if fresh {
        (0..N as u64).flat_map(|i| key(kl, i + fresh0)).collect()
    } else {
        Vec::new()
    };
    if !fresh.is_empty() {
        // A few entries so the insert path's free list and counters are warm.
        for i in 0..64u64 {
            t.add_on_miss(&key(kl, i + warm0), &data, 0, 0);
        }
    } else {
        for k in hits.chunks_exact(kl) {
            assert!(t.add_on_miss(k, &data, 0, 0).is_added());
        }
    }
    let hashes = |v: &[u8]| {
        v.chunks_exact(kl)
            .map(|k| t.hash_key(k))
            .collect::<Vec<_>>()
    };
    Ctx {
        hits_h: hashes(&hits),
        misses_h: hashes(&misses),
        fresh_h: hashes(&fresh),
        t,
        kl,
        hits,
        misses,
        fresh,
        data,
    }
}

/// The loop every op runs, without the table call.
#[inline(never)]
fn op_empty(c: &Ctx, n: usize) {
    for k in c.hits.chunks_exact(c.kl).cycle().take(n) {
        black_box(k);
    }
}

#[inline(never)]
fn op_hit(c: &Ctx, n: usize) {
    let mut out = Lookup::default();
    let mut h = 0;
    for k in c.hits.chunks_exact(c.kl).cycle().take(n) {
        h += c.t.lookup_into(black_box(k), 0, &mut out) as usize;
    }
    assert_eq!(h, n);
}

#[inline(never)]
fn op_miss(c: &Ctx, n: usize) {
    let mut out = Lookup::default();
    let mut h = 0;
    for k in c.misses.chunks_exact(c.kl).cycle().take(n) {
        h += c.t.lookup_into(black_box(k), 0, &mut out) as usize;
    }
    assert_eq!(h, 0);
}

/// `lookup_batch` of 32 stored keys per call; the count is per key.
#[inline(never)]
fn op_batch(c: &Ctx, n: usize) {
    let mut outs = vec![Lookup::default(); 32];
    let b = 32 * c.kl;
    let mut h = 0;
    for keys in c.hits.chunks_exact(b).cycle().take(n / 32) {
        h += c.t.lookup_batch(black_box(keys), 0, &mut outs).unwrap_or(0);
    }
    assert_eq!(h, n / 32 * 32);
}

/// The loop of `op_batch` without the call.
#[inline(never)]
fn op_empty_batch(c: &Ctx, n: usize) {
    for keys in c.hits.chunks_exact(32 * c.kl).cycle().take(n / 32) {
        black_box(keys);
    }
}

#[inline(never)]
fn op_prefetch(c: &Ctx, n: usize) {
    for k in c.hits.chunks_exact(c.kl).cycle().take(n) {
        if let Some(p) = c.t.prefetch(black_box(k)) {
            c.t.prefetch_entry(p);
        }
    }
}

#[inline(never)]
fn op_add(c: &Ctx, n: usize) {
    let mut a = 0;
    for k in c.fresh.chunks_exact(c.kl).cycle().take(n) {
        a += c.t.add_on_miss(black_box(k), &c.data, 0, 0).is_added() as usize;
    }
    assert_eq!(a, n.min(N));
}

/// The loop of the `*_hashed` ops, without the table call.
#[inline(never)]
fn op_empty_hashed(c: &Ctx, n: usize) {
    for (k, h) in c.hits.chunks_exact(c.kl).zip(&c.hits_h).cycle().take(n) {
        black_box((k, h));
    }
}

#[inline(never)]
fn op_hash(c: &Ctx, n: usize) {
    for k in c.hits.chunks_exact(c.kl).cycle().take(n) {
        black_box(c.t.hash_key(black_box(k)));
    }
}

#[inline(never)]
fn op_hit_hashed(c: &Ctx, n: usize) {
    let mut out = Lookup::default();
    let mut h = 0;
    for (k, &hash) in c.hits.chunks_exact(c.kl).zip(&c.hits_h).cycle().take(n) {
        h += c.t.lookup_exact_hashed(black_box(k), hash, 0, &mut out) as usize;
    }
    assert_eq!(h, n);
}

#[inline(never)]
fn op_miss_hashed(c: &Ctx, n: usize) {
    let mut out = Lookup::default();
    let mut h = 0;
    for (k, &hash) in c.misses.chunks_exact(c.kl).zip(&c.misses_h).cycle().take(n) {
        h += c.t.lookup_exact_hashed(black_box(k), hash, 0, &mut out) as usize;
    }
    assert_eq!(h, 0);
}

#[inline(never)]
fn op_prefetch_hashed(c: &Ctx, n: usize) {
    for (_, &hash) in c.hits.chunks_exact(c.kl).zip(&c.hits_h).cycle().take(n) {
        if let Some(p) = c.t.prefetch_hashed(black_box(hash)) {
            c.t.prefetch_entry(p);
        }
    }
}

#[inline(never)]
fn op_add_hashed(c: &Ctx, n: usize) {
    let mut a = 0;
    let p = &c.data.params[..];
    for (k, &hash) in c.fresh.chunks_exact(c.kl).zip(&c.fresh_h).cycle().take(n) {
        a +=
            c.t.add_on_miss_hashed(black_box(k), hash, 1, p, 0, 0)
                .is_added() as usize;
    }
    assert_eq!(a, n.min(N));
}

/// `add_hashed` into a table sized for the keys it gets (see [`ctx`]): the average insert
/// of a fill to the load the bench's phase 1 ends at, secondary buckets and cuckoo moves included.
#[inline(never)]
fn op_fill(c: &Ctx, n: usize) {
    op_add_hashed(c, n)
}

#[inline(never)]
fn op_update(c: &Ctx, n: usize) {
    let mut out = Lookup::default();
    c.t.lookup_into(&c.hits[..c.kl], 0, &mut out);
    let h = out.hit.expect("hit");
    let p = c.data.params.clone();
    for _ in 0..n {
        assert!(c.t.update_params(h, black_box(&p)));
    }
}

const OPS: &[Op] = &[
    Op {
        name: "empty",
        run: op_empty,
        collect: &[],
    },
    Op {
        name: "hit",
        run: op_hit,
        collect: &["lookup_shape", "lookup_direct"],
    },
    Op {
        name: "miss",
        run: op_miss,
        collect: &["lookup_shape", "lookup_direct"],
    },
    Op {
        name: "prefetch",
        run: op_prefetch,
        collect: &[],
    },
    Op {
        name: "add",
        run: op_add,
        collect: &["add_shape", "add_direct"],
    },
    Op {
        name: "update",
        run: op_update,
        collect: &["update_params"],
    },
    Op {
        name: "batch",
        run: op_batch,
        collect: &["lookup_batch"],
    },
    Op {
        name: "empty_batch",
        run: op_empty_batch,
        collect: &[],
    },
    Op {
        name: "hash",
        run: op_hash,
        collect: &["hash_shape", "hash_direct"],
    },
    Op {
        name: "hit_hashed",
        run: op_hit_hashed,
        collect: &["lookup_shape", "lookup_direct"],
    },
    Op {
        name: "miss_hashed",
        run: op_miss_hashed,
        collect: &["lookup_shape", "lookup_direct"],
    },
    Op {
        name: "prefetch_hashed",
        run: op_prefetch_hashed,
        collect: &[],
    },
    Op {
        name: "add_hashed",
        run: op_add_hashed,
        collect: &["add_shape", "add_direct"],
    },
    Op {
        name: "fill",
        run: op_fill,
        collect: &["add_shape", "add_direct"],
    },
    Op {
        name: "empty_hashed",
        run: op_empty_hashed,
        collect: &[],
    },
];

/// `k4_hit` → (4-byte keys, the `hit` op).
fn parse(name: &str) -> Option<(Shape, &'static Op)> {
    let (shape, op) = name.split_once('_')?;
    let (kl, hash) = match shape {
        "k4" => (4, false),
        "k13" => (13, false),
        "k2" => (2, false),
        "k2h" => (2, true),
        _ => return None,
    };
    Some((Shape { kl, hash }, OPS.iter().find(|o| o.name == op)?))
}

fn names() -> Vec<String> {
    ["k4", "k13", "k2", "k2h"]
        .iter()
        .flat_map(|s| OPS.iter().map(move |o| format!("{s}_{}", o.name)))
        .collect()
}

/// Instructions callgrind collected inside the functions `collect` (or `icount::op_<op>`)
/// for `icount run NAME N`.
fn measure(exe: &str, name: &str, collect: &[&str], n: usize) -> u64 {
    let (_, op) = parse(name).expect("op");
    let out = format!("/tmp/icount.{}.{name}.out", std::process::id());
    let mut args = vec![
        "--tool=callgrind".to_string(),
        "-q".to_string(),
        format!("--callgrind-out-file={out}"),
    ];
    if collect.is_empty() {
        args.push(format!("--toggle-collect=icount::op_{}", op.name));
    }
    for f in collect {
        args.push(format!(
            "--toggle-collect=nevermiss_tables::table::Table::{f}"
        ));
    }
    let st = Command::new("valgrind")
        .args(&args)
        .args([exe, "run", name, &n.to_string()])
        .status()
        .expect("valgrind (apt-get install valgrind)");
    assert!(st.success(), "valgrind failed for {name}");
    let text = std::fs::read_to_string(&out).expect("callgrind output");
    let _ = std::fs::remove_file(&out);
    text.lines()
        .find_map(|l| {
            l.strip_prefix("totals:")
                .or_else(|| l.strip_prefix("summary:"))
        })
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .expect("totals line")
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("run") {
        let name = args.get(2).expect("op name");
        let n = args.get(3).map_or(N, |s| s.parse().expect("N"));
        let (shape, op) = parse(name).unwrap_or_else(|| panic!("unknown op {name}: {:?}", names()));
        let fill = op.name == "fill";
        let c = ctx(shape, op.name.starts_with("add") || fill, fill);
        (op.run)(&c, n);
        return;
    }
    let filter = args.get(1).cloned().unwrap_or_default();
    let exe = std::env::current_exe().expect("own path");
    let exe = exe.to_str().expect("utf-8 path");
    let mut empty = std::collections::HashMap::new();
    println!("instructions per operation (N = {N}): A = the loop minus the same loop without the");
    println!("call (what a caller pays, call included); B = inside the table function the inline");
    println!("API calls through its per-table function pointer (A minus the caller's share)");
    println!("{:<20} {:>8} {:>8}  B measured inside", "op", "A", "B");
    for name in names() {
        if !name.contains(&filter) || name.contains("_empty") {
            continue;
        }
        let (_, op) = parse(&name).expect("op");
        let shape = name.split('_').next().unwrap_or_default().to_string();
        let e = if name.ends_with("_hashed") || name.ends_with("_fill") {
            "empty_hashed"
        } else if name.ends_with("_batch") {
            "empty_batch"
        } else {
            "empty"
        };
        let base = *empty
            .entry(format!("{shape}_{e}"))
            .or_insert_with(|| measure(exe, &format!("{shape}_{e}"), &[], N));
        let a = (measure(exe, &name, &[], N) as f64 - base as f64) / N as f64;
        let b = if op.collect.is_empty() {
            "-".to_string()
        } else {
            format!(
                "{:.1}",
                measure(exe, &name, op.collect, N) as f64 / N as f64
            )
        };
        println!("{name:<20} {a:>8.1} {b:>8}  {}", op.collect.join(", "));
    }
}
