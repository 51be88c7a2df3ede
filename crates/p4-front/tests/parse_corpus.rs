//! Parses p4c's test programs: every sample must parse and round-trip through the printer, and no
//! program in any test directory may panic or hang the parser.
//!
//! Runs only when `P4C_DIR` names a p4c checkout (with `testdata/` and `p4include/`). Files are
//! preprocessed with the system `cpp` against p4c's own `p4include/` (the test is skipped if there
//! is no `cpp`), or, with `P4C_CORPUS_PREPROCESSOR=nevermiss`, with our preprocessor against the
//! project's `p4include/`. Set `P4C_CORPUS_VERBOSE=1` to list every failure.

use p4_front::parser::parse_str;
use p4_front::printer::print_program;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc;
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_secs(10);

fn preprocess(file: &Path, include: &Path, ours: bool) -> Option<String> {
    if ours {
        let opts = p4_front::preprocess::Options::default();
        return p4_front::preprocess::preprocess(file, &opts)
            .ok()
            .map(|u| u.text);
    }
    let out = Command::new("cpp")
        .args(["-P", "-undef", "-nostdinc", "-I"])
        .arg(include)
        .arg(file)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    String::from_utf8(out.stdout).ok()
}

/// The Debug form of `p` without spans and ids: equal trees give equal strings.
fn shape(p: &p4_front::ast::Program) -> String {
    let d = format!("{p:?}");
    let mut out = String::with_capacity(d.len());
    let mut rest = d.as_str();
    loop {
        let a = rest.find("Span {");
        let b = rest.find("NodeId(");
        let (i, close) = match (a, b) {
            (Some(a), Some(b)) if a < b => (a, '}'),
            (Some(a), None) => (a, '}'),
            (_, Some(b)) => (b, ')'),
            (None, None) => break,
        };
        out.push_str(&rest[..i]);
        let j = rest[i..].find(close).map_or(rest.len(), |j| i + j + 1);
        rest = &rest[j..];
    }
    out.push_str(rest);
    out.replace("node_count", "")
}

enum Outcome {
    Parsed,
    Rejected(String),
    RoundTripMismatch(String),
    Panicked,
    TimedOut,
}

/// Parses `text` on a separate thread, with a timeout, and checks the printer round trip.
fn run(text: String) -> Outcome {
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(move || {
            let r = std::panic::catch_unwind(|| {
                let p = match parse_str(&text) {
                    Ok(p) => p,
                    Err(d) => {
                        let lo = d.span.map(|s| s.lo as usize).unwrap_or(0);
                        let line = text[..lo.min(text.len())].matches('\n').count() + 1;
                        return Outcome::Rejected(format!("line {line}: {}", d.message));
                    }
                };
                let once = print_program(&p);
                match parse_str(&once) {
                    Ok(p2) => {
                        let twice = print_program(&p2);
                        if once == twice && shape(&p) == shape(&p2) {
                            Outcome::Parsed
                        } else if once == twice {
                            Outcome::RoundTripMismatch("reparsed tree differs".to_string())
                        } else {
                            let a: Vec<&str> = once.lines().collect();
                            let b: Vec<&str> = twice.lines().collect();
                            let i = a
                                .iter()
                                .zip(&b)
                                .position(|(x, y)| x != y)
                                .unwrap_or(a.len().min(b.len()));
                            Outcome::RoundTripMismatch(format!(
                                "printed line {}: {:?} vs {:?}",
                                i + 1,
                                a.get(i),
                                b.get(i)
                            ))
                        }
                    }
                    Err(d) => {
                        let lo = d.span.map(|s| s.lo as usize).unwrap_or(0);
                        let line = once[..lo.min(once.len())].matches('\n').count() + 1;
                        Outcome::RoundTripMismatch(format!("reparse line {line}: {}", d.message))
                    }
                }
            });
            let _ = tx.send(r.unwrap_or(Outcome::Panicked));
        })
        .expect("spawn");
    rx.recv_timeout(TIMEOUT).unwrap_or(Outcome::TimedOut)
}

fn p4_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.retain(|p| p.extension().is_some_and(|e| e == "p4"));
    v.sort();
    v
}

#[test]
fn p4c_corpus() {
    let Some(root) = std::env::var_os("P4C_DIR").map(PathBuf::from) else {
        eprintln!("P4C_DIR not set: skipping the p4c corpus");
        return;
    };
    let ours = std::env::var("P4C_CORPUS_PREPROCESSOR").is_ok_and(|v| v == "nevermiss");
    if !ours && Command::new("cpp").arg("--version").output().is_err() {
        eprintln!("no `cpp`: skipping the p4c corpus");
        return;
    }
    let verbose = std::env::var_os("P4C_CORPUS_VERBOSE").is_some();
    let include = root.join("p4include");
    let dirs = [
        "p4_16_samples",
        "p4_16_errors",
        "p4_16_pna_errors",
        "p4_16_dpdk_errors",
        "p4_16_psa_errors",
        "p4_16_bmv_errors",
        "p4_16_ebpf_errors",
    ];
    let mut crashes = Vec::new();
    let mut sample_failures = Vec::new();
    for dir in dirs {
        let files = p4_files(&root.join("testdata").join(dir));
        let (mut parsed, mut rejected, mut unpreprocessed) = (0, 0, 0);
        let mut slowest = (Duration::ZERO, PathBuf::new());
        for f in &files {
            let Some(text) = preprocess(f, &include, ours) else {
                unpreprocessed += 1;
                continue;
            };
            let t0 = Instant::now();
            let outcome = run(text);
            let dt = t0.elapsed();
            if dt > slowest.0 {
                slowest = (dt, f.clone());
            }
            let name = f
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .to_string();
            match outcome {
                Outcome::Parsed => parsed += 1,
                Outcome::Rejected(msg) | Outcome::RoundTripMismatch(msg) => {
                    rejected += 1;
                    if dir == "p4_16_samples" {
                        sample_failures.push(format!("{name}: {msg}"));
                    } else if verbose {
                        eprintln!("  {dir}/{name}: {msg}");
                    }
                }
                Outcome::Panicked => crashes.push(format!("{dir}/{name}: panic")),
                Outcome::TimedOut => crashes.push(format!("{dir}/{name}: timeout")),
            }
        }
        eprintln!(
            "{dir}: {} files, {parsed} parsed, {rejected} rejected, {unpreprocessed} not preprocessable; slowest {:?} ({})",
            files.len(),
            slowest.0,
            slowest.1.file_name().unwrap_or_default().to_string_lossy()
        );
    }
    for f in &sample_failures {
        eprintln!("  sample failure: {f}");
    }
    assert!(crashes.is_empty(), "crashes: {crashes:#?}");
    assert!(
        sample_failures.is_empty(),
        "{} samples failed to parse",
        sample_failures.len()
    );
}
