//! Robustness of the checker: mutated versions of real programs that still parse must be checked
//! without a panic. Seeds are the p4c samples (env-gated: `P4C_DIR`); iterations per seed with
//! `CHECK_FUZZ_ITERS` (default 20). Deterministic (fixed-seed xorshift).

use p4_front::{check, driver, parser};
use std::path::PathBuf;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// Splits text into identifier / number / other tokens (rough, for mutation only).
fn tokens(s: &str) -> Vec<(usize, usize)> {
    let b = s.as_bytes();
    let mut v = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_alphanumeric() || c == b'_' {
            let st = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            v.push((st, i));
        } else {
            if !c.is_ascii_whitespace() {
                v.push((i, i + 1));
            }
            i += 1;
        }
    }
    v
}

fn mutate(rng: &mut Rng, text: &str) -> String {
    let toks = tokens(text);
    if toks.is_empty() {
        return text.to_string();
    }
    let (a, b) = toks[rng.below(toks.len())];
    let (c, d) = toks[rng.below(toks.len())];
    match rng.below(4) {
        // Replace a token by another token of the program.
        0 | 1 => format!("{}{}{}", &text[..a], &text[c..d], &text[b..]),
        // Delete a token.
        2 => format!("{}{}", &text[..a], &text[b..]),
        // Duplicate a token.
        _ => format!("{}{} {}", &text[..b], &text[a..b], &text[b..]),
    }
}

#[test]
fn mutated_programs_do_not_crash_the_checker() {
    let Ok(root) = std::env::var("P4C_DIR") else {
        eprintln!("P4C_DIR not set: skipping");
        return;
    };
    let dir = PathBuf::from(root).join("testdata/p4_16_samples");
    let iters: usize = std::env::var("CHECK_FUZZ_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "p4"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut checked = 0usize;
    for f in files {
        // Preprocess with the real pipeline's preprocessor (through the driver's unit).
        let Ok(c) = driver::compile_file(&f, &driver::Options::default()) else {
            continue;
        };
        let text = c.unit.text.clone();
        if !text.is_ascii() {
            continue;
        }
        for _ in 0..iters {
            let m = mutate(&mut rng, &text);
            let m = if rng.below(2) == 0 {
                mutate(&mut rng, &m)
            } else {
                m
            };
            if let Ok(prog) = parser::parse_str(&m) {
                let r = std::panic::catch_unwind(|| {
                    let _ = check::check(&prog);
                });
                if r.is_err() {
                    let out = std::env::temp_dir().join("check_fuzz_crash.p4");
                    let _ = std::fs::write(&out, &m);
                    panic!(
                        "checker panicked on a mutation of {} (saved to {})",
                        f.display(),
                        out.display()
                    );
                }
                checked += 1;
            }
        }
    }
    eprintln!("checked {checked} mutated programs");
}
