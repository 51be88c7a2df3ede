//! Bounded fuzzing of the whole front end (preprocess → parse → check): random bytes, random token
//! streams, and mutations of the project's own valid programs must give a result or a diagnostic —
//! never a panic and never a hang. The time budget is `NEVERMISS_FUZZ_SECS` (default 15 s);
//! a longer campaign is the same test with a larger budget.

use p4_front::driver::{compile_str, Options};
use std::path::Path;
use std::time::{Duration, Instant};

/// xorshift64*: a seeded generator, so a failing input can be replayed from the printed seed.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const VOCAB: &[&str] = &[
    "header",
    "struct",
    "header_union",
    "enum",
    "typedef",
    "type",
    "const",
    "extern",
    "parser",
    "control",
    "package",
    "action",
    "table",
    "state",
    "transition",
    "select",
    "apply",
    "key",
    "actions",
    "entries",
    "default_action",
    "size",
    "if",
    "else",
    "switch",
    "return",
    "exit",
    "for",
    "in",
    "bit",
    "int",
    "varbit",
    "bool",
    "error",
    "match_kind",
    "tuple",
    "list",
    "void",
    "string",
    "true",
    "false",
    "default",
    "_",
    "this",
    "value_set",
    "out",
    "inout",
    "abstract",
    "#",
    "{#}",
    "x",
    "y",
    "T",
    "main",
    "hdr",
    "meta",
    "accept",
    "reject",
    "NoAction",
    "exact",
    "lpm",
    "ternary",
    "8w255",
    "4s3",
    "0x1F",
    "1",
    "0",
    "64",
    "\"s\"",
    "@name",
    "@tableonly",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    "<",
    ">",
    ">>",
    "<<",
    "=",
    "==",
    "!=",
    ";",
    ":",
    ",",
    ".",
    "...",
    "..",
    "&&&",
    "&&",
    "||",
    "|+|",
    "|-|",
    "++",
    "+",
    "-",
    "*",
    "/",
    "%",
    "!",
    "~",
    "&",
    "|",
    "^",
    "?",
    "\n",
    "#include <core.p4>\n",
    "#define M(a) a\n",
    "#if 1\n",
    "#endif\n",
    "M(",
    "add_entry",
    "add_on_miss",
];

fn seeds() -> Vec<String> {
    let mut out = Vec::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for dir in ["tests/p4/ok", "examples"] {
        if let Ok(rd) = std::fs::read_dir(root.join(dir)) {
            for e in rd.flatten() {
                if e.path().extension().is_some_and(|x| x == "p4") {
                    if let Ok(t) = std::fs::read_to_string(e.path()) {
                        out.push(t);
                    }
                }
            }
        }
    }
    out.sort();
    out
}

fn mutate(rng: &mut Rng, seed: &str) -> String {
    let mut s: Vec<u8> = seed.as_bytes().to_vec();
    for _ in 0..1 + rng.below(4) {
        let len = s.len().max(1);
        let at = rng.below(len);
        match rng.below(5) {
            0 => {
                let end = (at + rng.below(40)).min(s.len());
                s.drain(at.min(s.len())..end);
            }
            1 => {
                let tok = VOCAB[rng.below(VOCAB.len())];
                let at = at.min(s.len());
                s.splice(at..at, format!(" {tok} ").into_bytes());
            }
            2 => {
                let end = (at + rng.below(80)).min(s.len());
                let chunk = s[at.min(end)..end].to_vec();
                let to = rng.below(s.len() + 1);
                s.splice(to..to, chunk);
            }
            3 => {
                if at < s.len() {
                    s[at] = rng.next() as u8;
                }
            }
            _ => s.truncate(at),
        }
    }
    String::from_utf8_lossy(&s).into_owned()
}

fn input(rng: &mut Rng, seeds: &[String]) -> String {
    match rng.below(4) {
        0 => {
            let n = rng.below(300);
            let bytes: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
            String::from_utf8_lossy(&bytes).into_owned()
        }
        1 => {
            let n = rng.below(200);
            (0..n)
                .map(|_| VOCAB[rng.below(VOCAB.len())])
                .collect::<Vec<_>>()
                .join(" ")
        }
        _ if !seeds.is_empty() => {
            let pick = rng.below(seeds.len());
            mutate(rng, &seeds[pick])
        }
        _ => String::new(),
    }
}

#[test]
fn front_end_never_panics_or_hangs() {
    let budget = std::env::var("NEVERMISS_FUZZ_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(15u64);
    let seed = std::env::var("NEVERMISS_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x6e65_7665_726d_6973u64);
    let seeds = seeds();
    let mut rng = Rng(seed);
    let start = Instant::now();
    let mut execs = 0u64;
    let opts = Options::default();
    while start.elapsed() < Duration::from_secs(budget) {
        let text = input(&mut rng, &seeds);
        let t0 = Instant::now();
        let result = std::panic::catch_unwind(|| {
            let _ = compile_str("fuzz.p4", &text, &opts);
        });
        let took = t0.elapsed();
        if result.is_err() {
            let _ = std::fs::write("fuzz-crash.p4", &text);
            panic!("the front end panicked on input {execs} (written to fuzz-crash.p4):\n{text}");
        }
        if took > Duration::from_secs(5) {
            let _ = std::fs::write("fuzz-slow.p4", &text);
            panic!("the front end took {took:?} on input {execs} (written to fuzz-slow.p4)");
        }
        execs += 1;
    }
    eprintln!(
        "fuzz: {execs} inputs in {:?} from {} seed programs, no panic",
        start.elapsed(),
        seeds.len()
    );
    assert!(execs > 0);
}
