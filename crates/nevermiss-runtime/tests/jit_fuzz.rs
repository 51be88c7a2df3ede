//! Time-bounded differential fuzzing of the compiled engine (docs/jit.md): the packets of every
//! STF test — the examples', tests/stf/'s and, when `P4C_DIR` is set, p4c's bmv2 suite — mutated
//! (bytes flipped, cut short, extended with garbage) and random bytes, through both engines after
//! the test's own table entries. Generated code must never crash, and every output packet and port
//! must equal the interpreter's. `NEVERMISS_FUZZ_SECS` bounds the run (default 10 s in all).

mod common;

use nevermiss_runtime::{stf::run_stf, Engine, Switch, Worker};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

struct Case {
    program: PathBuf,
    /// The control-plane lines of its STF file.
    setup: String,
    /// Its packets (port, bytes).
    packets: Vec<(u32, Vec<u8>)>,
}

fn parse_hex(s: &str) -> Option<Vec<u8>> {
    let h: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    if !h.len().is_multiple_of(2) {
        return None;
    }
    (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&h[i..i + 2], 16).ok())
        .collect()
}

fn case(program: PathBuf) -> Option<Case> {
    let text = std::fs::read_to_string(program.with_extension("stf")).ok()?;
    let mut setup = Vec::new();
    let mut packets = Vec::new();
    for l in text.lines() {
        let mut w = l.split_whitespace();
        match w.next() {
            Some("packet") => {
                let port = w.next()?.parse().ok()?;
                let rest: Vec<&str> = w.collect();
                packets.push((port, parse_hex(&rest.join(""))?));
            }
            Some("expect" | "wait") | None => {}
            Some(_) => setup.push(l),
        }
    }
    Some(Case {
        program,
        setup: setup.join("\n"),
        packets,
    })
}

fn p4_files(dir: &Path, filter: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.retain(|p| {
        p.extension().is_some_and(|x| x == "p4")
            && p.with_extension("stf").is_file()
            && p.file_name().and_then(|n| n.to_str()).is_some_and(&filter)
    });
    v.sort();
    v
}

fn switch(path: &Path, engine: Engine) -> Option<Arc<Switch>> {
    common::switch(path, engine).ok()
}

/// xorshift64*: a seeded generator, so a failure can be replayed from the seed it prints.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn mutate(rng: &mut Rng, base: &[u8]) -> Vec<u8> {
    let mut p = base.to_vec();
    match rng.below(5) {
        0 => {
            for _ in 0..=rng.below(4) {
                if !p.is_empty() {
                    let i = rng.below(p.len() as u64) as usize;
                    p[i] ^= 1 << rng.below(8);
                }
            }
        }
        1 => p.truncate(rng.below(p.len() as u64 + 1) as usize),
        2 => {
            for _ in 0..rng.below(40) {
                p.push(rng.next() as u8);
            }
        }
        3 => {
            p = (0..rng.below(100)).map(|_| rng.next() as u8).collect();
        }
        _ => {
            if !p.is_empty() {
                let i = rng.below(p.len() as u64) as usize;
                p[i] = rng.next() as u8;
            }
        }
    }
    p
}

#[test]
fn generated_code_never_crashes_and_agrees_with_the_interpreter() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut programs = p4_files(&root.join("examples"), |_| true);
    programs.extend(p4_files(&root.join("tests/stf"), |_| true));
    if let Ok(p4c) = std::env::var("P4C_DIR") {
        programs.extend(p4_files(
            &Path::new(&p4c).join("testdata/p4_16_samples"),
            |n| n.ends_with("-bmv2.p4"),
        ));
    }
    let secs: u64 = std::env::var("NEVERMISS_FUZZ_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    let cases: Vec<(Case, Arc<Switch>, Arc<Switch>)> = programs
        .into_iter()
        .filter_map(case)
        .filter_map(|c| {
            let j = switch(&c.program, Engine::Jit)?;
            let i = switch(&c.program, Engine::Interp)?;
            for sw in [&j, &i] {
                let _ = run_stf(sw.clone(), &c.setup);
            }
            Some((c, j, i))
        })
        .collect();
    assert!(cases.len() >= 10, "only {} programs", cases.len());
    let budget = Duration::from_secs(secs);
    let per_case = budget / cases.len() as u32;
    let t0 = Instant::now();
    let mut packets = 0u64;
    for (k, (c, j, i)) in cases.iter().enumerate() {
        let seed = 0x9e37_79b9 ^ (k as u64) << 20;
        let mut rng = Rng(seed | 1);
        let mut wj = Worker::new(j.clone(), 1);
        let mut wi = Worker::new(i.clone(), 1);
        let start = Instant::now();
        let mut n = 0u64;
        while n < 16 || start.elapsed() < per_case {
            let (port, base) = match c.packets.get(rng.below(c.packets.len() as u64) as usize) {
                Some((p, b)) => (*p, b.clone()),
                None => (0, Vec::new()),
            };
            let pkt = mutate(&mut rng, &base);
            let now = n * 1000;
            let oj = wj.process(&pkt, port, now).as_slice().to_vec();
            let oi = wi.process(&pkt, port, now).as_slice().to_vec();
            assert_eq!(
                oj,
                oi,
                "{} (seed {seed:#x}, packet {n}): port {port} {pkt:02x?}",
                c.program.display()
            );
            n += 1;
        }
        packets += n;
    }
    eprintln!(
        "jit fuzz: {} programs, {packets} packets, {:.1} s, both engines agreed",
        cases.len(),
        t0.elapsed().as_secs_f64()
    );
}
