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
    let size = if mode == "add" { n * (reps + 1) } else { n };
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
