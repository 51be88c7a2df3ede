use nevermiss_tables::*;
fn main() {
    let n = 1024usize;
    let t = Table::new(
        TableSpec::new("f", vec![KeySpec::new("k", 104, MatchKind::Exact)], n)
            .with_add_on_miss(true)
            .with_max_params_bytes(8),
    )
    .unwrap();
    let keys: Vec<[u8; 13]> = (0..n as u64)
        .map(|i| {
            let mut k = [0u8; 13];
            k[..8].copy_from_slice(&(i.wrapping_mul(0x9e3779b97f4a7c15)).to_le_bytes());
            k
        })
        .collect();
    for (i, k) in keys.iter().enumerate() {
        t.add_on_miss(k, &ActionData::new(1, (i as u64).to_le_bytes()), 0, 0);
    }
    let mode = std::env::args().nth(1).unwrap_or_default();
    let mut out = Lookup::default();
    let mut outs = vec![Lookup::default(); 32];
    let flat: Vec<u8> = keys.iter().flatten().copied().collect();
    let mut h = 0;
    let reps: usize = std::env::args().nth(2).map_or(100, |s| s.parse().unwrap());
    for _ in 0..reps {
        if mode == "batch" {
            for c in flat.chunks(32 * 13) {
                h += t.lookup_batch(c, 0, &mut outs).unwrap();
            }
        } else {
            for k in &keys {
                h += t.lookup_into(k, 0, &mut out) as usize;
            }
        }
    }
    println!("{h}");
}
