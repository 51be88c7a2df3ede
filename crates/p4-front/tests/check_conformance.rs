//! Measures the checker against p4c's test suites (env-gated: set `P4C_DIR` to a p4c checkout or
//! to the directory holding its `testdata/`; p4c's files are read at run time, never committed).
//!
//! Counts, per suite: programs accepted / rejected, and lists the failures:
//! - `p4_16_samples` restricted to programs including only core/v1model/psa/pna (and the
//!   bmv2/ and dpdk/ variants): must be accepted;
//! - `p4_16_errors`: must be rejected (by the preprocessor, the parser or the checker);
//! - `p4_16_pna_errors`: must be rejected.
//!
//! Programs go through the real pipeline (`driver::compile_file`: our preprocessor, the project's
//! `p4include/`, PNA dialect detection); `CHECK_CPP=1` preprocesses with the system `cpp` against
//! `p4include/` (or `P4INCLUDE`) instead. Optional: `CHECK_SUITE` (substring filter),
//! `CHECK_VERBOSE=1` (print every error), `CHECK_FILE` (one file: print all its diagnostics).
//! An accepted program must have a recorded type for every expression.
//! Run: `P4C_DIR=/work/p4c cargo test -p p4-front --test check_conformance -- --nocapture`

use p4_front::{check, driver, parser};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc;
use std::time::Duration;

const SUPPORTED: &[&str] = &[
    "core.p4",
    "v1model.p4",
    "psa.p4",
    "pna.p4",
    "bmv2/psa.p4",
    "dpdk/psa.p4",
    "dpdk/pna.p4",
    "bmv2/pna.p4",
];

enum Outcome {
    Accepted,
    Rejected(String),
    Crashed(String),
}

fn includes_ok(text: &str) -> bool {
    for line in text.lines() {
        let l = line.trim_start();
        if let Some(rest) = l.strip_prefix('#') {
            let rest = rest.trim_start();
            if let Some(inc) = rest.strip_prefix("include") {
                let inc = inc.trim();
                let name = inc.trim_matches(|c| c == '<' || c == '>' || c == '"');
                if !SUPPORTED.contains(&name) {
                    return false;
                }
            }
        }
    }
    true
}

fn preprocess(file: &Path, include: &Path) -> Result<String, String> {
    let out = Command::new("cpp")
        .args(["-P", "-undef", "-nostdinc", "-w"])
        .arg("-I")
        .arg(include)
        .arg(file)
        .output()
        .map_err(|e| format!("cannot run cpp: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "preprocess: {}",
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .next()
                .unwrap_or("")
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn run_one(file: &Path, include: &Path, all: bool) -> Outcome {
    if std::env::var("CHECK_CPP").is_err() {
        return run_driver(file, all);
    }
    let text = match preprocess(file, include) {
        Ok(t) => t,
        Err(e) => return Outcome::Rejected(e),
    };
    let (tx, rx) = mpsc::channel();
    let handle = std::thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(move || {
            let r = std::panic::catch_unwind(|| match parser::parse_str(&text) {
                Err(d) => Err(format!("parse: {}", d.message)),
                Ok(p) => match check::check(&p) {
                    Ok(_) => Ok(()),
                    Err(ds) => {
                        let msgs: Vec<String> = ds.iter().map(|d| d.message.clone()).collect();
                        Err(if all {
                            msgs.join("\n      ")
                        } else {
                            msgs[0].clone()
                        })
                    }
                },
            });
            let _ = tx.send(r);
        });
    if handle.is_err() {
        return Outcome::Crashed("cannot spawn".into());
    }
    match rx.recv_timeout(Duration::from_secs(20)) {
        Ok(Ok(Ok(()))) => Outcome::Accepted,
        Ok(Ok(Err(m))) => Outcome::Rejected(m),
        Ok(Err(_)) => Outcome::Crashed("panic".into()),
        Err(_) => Outcome::Crashed("timeout".into()),
    }
}

/// The real pipeline (`nevermiss check`): our preprocessor and `p4include/`, dialect detection.
fn run_driver(file: &Path, all: bool) -> Outcome {
    let (tx, rx) = mpsc::channel();
    let file = file.to_path_buf();
    let handle = std::thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(move || {
            let r = std::panic::catch_unwind(|| {
                match driver::compile_file(&file, &driver::Options::default()) {
                    // The side tables must type every expression (lowering relies on it).
                    Ok(c) if c.checked.expr_types.iter().any(Option::is_none) => {
                        Err("accepted, but some expressions have no recorded type".to_string())
                    }
                    Ok(_) => Ok(()),
                    Err(f) => {
                        let msgs: Vec<String> = f
                            .diagnostics
                            .iter()
                            .filter(|d| d.severity == p4_front::diag::Severity::Error)
                            .map(|d| d.message.clone())
                            .collect();
                        if msgs.is_empty() {
                            Err(String::new())
                        } else {
                            Err(if all {
                                msgs.join("\n      ")
                            } else {
                                msgs[0].clone()
                            })
                        }
                    }
                }
            });
            let _ = tx.send(r);
        });
    if handle.is_err() {
        return Outcome::Crashed("cannot spawn".into());
    }
    match rx.recv_timeout(Duration::from_secs(20)) {
        Ok(Ok(Ok(()))) => Outcome::Accepted,
        Ok(Ok(Err(m))) if m.is_empty() => {
            Outcome::Crashed("rejected without an error diagnostic".into())
        }
        Ok(Ok(Err(m))) => Outcome::Rejected(m),
        Ok(Err(_)) => Outcome::Crashed("panic".into()),
        Err(_) => Outcome::Crashed("timeout".into()),
    }
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "p4"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn conformance() {
    let Ok(root) = std::env::var("P4C_DIR") else {
        eprintln!("P4C_DIR not set: skipping");
        return;
    };
    let root = PathBuf::from(root);
    let testdata = if root.join("testdata").is_dir() {
        root.join("testdata")
    } else {
        root.clone()
    };
    let include = std::env::var("P4INCLUDE")
        .map(PathBuf::from)
        .unwrap_or_else(|_| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../p4include"));
    let filter = std::env::var("CHECK_SUITE").unwrap_or_default();
    let verbose = std::env::var("CHECK_VERBOSE").is_ok();
    if let Ok(f) = std::env::var("CHECK_FILE") {
        match run_one(Path::new(&f), &include, true) {
            Outcome::Accepted => println!("accepted"),
            Outcome::Rejected(m) => println!("rejected:\n      {m}"),
            Outcome::Crashed(m) => println!("crashed: {m}"),
        }
        return;
    }
    let suites: [(&str, bool); 3] = [
        ("p4_16_samples", true),
        ("p4_16_errors", false),
        ("p4_16_pna_errors", false),
    ];
    let mut crashes = 0;
    for (name, accept) in suites {
        if !name.contains(filter.as_str()) {
            continue;
        }
        let mut list = files(&testdata.join(name));
        if accept {
            list.retain(|f| {
                std::fs::read_to_string(f)
                    .map(|t| includes_ok(&t))
                    .unwrap_or(false)
            });
        }
        let (mut acc, mut rej, mut crash) = (0, 0, 0);
        let mut fails = Vec::new();
        for f in &list {
            let n = f
                .file_name()
                .map(|x| x.to_string_lossy().into_owned())
                .unwrap_or_default();
            match run_one(f, &include, verbose) {
                Outcome::Accepted => {
                    acc += 1;
                    if !accept {
                        fails.push(format!("accepted: {n}"));
                    }
                }
                Outcome::Rejected(m) => {
                    rej += 1;
                    if accept {
                        fails.push(format!("rejected: {n}: {m}"));
                    }
                }
                Outcome::Crashed(m) => {
                    crash += 1;
                    fails.push(format!("CRASH: {n}: {m}"));
                }
            }
        }
        crashes += crash;
        let total = list.len().max(1);
        let good = if accept { acc } else { rej };
        println!(
            "== {name}: {} files, accepted {acc}, rejected {rej}, crashed {crash}; {} {:.1}%",
            list.len(),
            if accept { "accept rate" } else { "reject rate" },
            100.0 * good as f64 / total as f64
        );
        for f in &fails {
            println!("  {f}");
        }
    }
    assert_eq!(crashes, 0, "crashes");
}
