//! Instruction counts of the exact engine's hot paths, for `valgrind --tool=callgrind`:
//! `cargo build --release -p nevermiss-tables --example prof`, then
//! `valgrind --tool=callgrind target/release/examples/prof {single|batch|add} REPS`
//! and subtract a run with `REPS` = 0 (setup). 1024 entries (in cache): CPU cost only.
use nevermiss_tables::*;

fn main() {
    let n = 1024usize;
    let mode = std::env::args().nth(1).unwrap_or_default();
    let reps: usize = std::env::args()
        .nth(2)
        .map_or(100, |s| s.parse().unwrap_or(100));
    // add: a fixed size (setup independent of REPS), REPS ≤ 60 keeps the fill below 95 %.
    let size = if mode == "add" { n * 64 } else { n };
    let t = Table::new(
        TableSpec::new("f", vec![KeySpec::new("k", 104, MatchKind::Exact)], size)
            .with_add_on_miss(true)
            .with_max_params_bytes(8),
    )
    .expect("table");
    let key = |i: u64| {
        let mut k = [0u8; 13];
        k[..8].copy_from_slice(&i.wrapping_mul(0x9e37_79b9_7f4a_7c15).to_le_bytes());
        k
    };
    let keys: Vec<[u8; 13]> = (0..n as u64).map(key).collect();
    for (i, k) in keys.iter().enumerate() {
        t.add_on_miss(k, &ActionData::new(1, (i as u64).to_le_bytes()), 0, 0);
    }
    let mut out = Lookup::default();
    let mut outs = vec![Lookup::default(); 32];
    let flat: Vec<u8> = keys.iter().flatten().copied().collect();
    let data = ActionData::new(1, [7u8; 8]);
    if mode == "rare" {
        rare(reps);
        return;
    }
    let mut h = 0;
    for r in 0..reps {
        match mode.as_str() {
            "batch" => {
                for c in flat.chunks(32 * 13) {
                    h += t.lookup_batch(c, 0, &mut outs).unwrap_or(0);
                }
            }
            "add" => {
                for i in 0..n as u64 {
                    h += t
                        .add_on_miss(&key(n as u64 * (r as u64 + 1) + i), &data, 0, 0)
                        .is_added() as usize;
                }
            }
            _ => {
                for k in &keys {
                    h += t.lookup_into(k, 0, &mut out) as usize;
                }
            }
        }
    }
    println!("{h}");
    if mode == "thp" {
        // Huge-page check: a 2^20-entry table, then the process's AnonHugePages.
        let big = Table::new(
            TableSpec::new("f", vec![KeySpec::new("k", 104, MatchKind::Exact)], 1 << 20)
                .with_add_on_miss(true)
                .with_max_params_bytes(8),
        )
        .expect("table");
        for i in 0..(1u64 << 20) {
            big.add_on_miss(&key(i), &data, 0, 0);
        }
        let smaps = std::fs::read_to_string("/proc/self/smaps_rollup").unwrap_or_default();
        for l in smaps
            .lines()
            .filter(|l| l.starts_with("Rss") || l.starts_with("AnonHuge"))
        {
            println!("{l}");
        }
        println!("memory_bytes {}", big.memory_bytes());
    }
}

/// `prof rare GAP`: a 2^20-entry table half full; `GAP` hits in batches of 32, then two adds of
/// new keys timed one by one (the first after the gap, the second right after it), 200 times;
/// prints the median ns of each (clock reads included).
fn rare(gap: usize) {
    let n = 1usize << 20;
    let t = Table::new(
        TableSpec::new("f", vec![KeySpec::new("k", 104, MatchKind::Exact)], n)
            .with_add_on_miss(true)
            .with_max_params_bytes(8),
    )
    .expect("table");
    let key = |i: u64| {
        let mut k = [0u8; 13];
        k[..8].copy_from_slice(&i.wrapping_mul(0x9e37_79b9_7f4a_7c15).to_le_bytes());
        k[8] = 1;
        k
    };
    let data = ActionData::new(1, [7u8; 8]);
    for i in 0..(n / 2) as u64 {
        t.add_on_miss(&key(i), &data, 0, 0);
    }
    let mut outs = vec![Lookup::default(); 32];
    let mut x = 0x1234_5678u64;
    let mut next = n as u64;
    let (mut first, mut second) = (Vec::new(), Vec::new());
    for _ in 0..200 {
        for _ in 0..gap / 32 {
            let mut b = Vec::with_capacity(32 * 13);
            for _ in 0..32 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                b.extend_from_slice(&key(x % (n as u64 / 2)));
            }
            std::hint::black_box(t.lookup_batch(&b, 0, &mut outs).unwrap_or(0));
        }
        for v in [&mut first, &mut second] {
            let k = key(next);
            next += 1;
            t.lookup_batch(&k, 0, &mut outs[..1]).unwrap_or(0);
            let t0 = tsc();
            std::hint::black_box(t.add_on_miss(&k, &data, 0, 0));
            v.push(tsc() - t0);
        }
    }
    first.sort_unstable();
    second.sort_unstable();
    println!(
        "gap {gap}: first add {} ticks, second add {} ticks (medians; TSC ticks, 2596 per µs here)",
        first[100], second[100]
    );
}

/// The time-stamp counter (serialized against earlier instructions).
fn tsc() -> u64 {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: rdtscp only reads the time-stamp counter.
    unsafe {
        let mut aux = 0;
        core::arch::x86_64::__rdtscp(&mut aux)
    }
    #[cfg(not(target_arch = "x86_64"))]
    0
}
