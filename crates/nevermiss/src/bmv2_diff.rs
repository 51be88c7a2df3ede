//! The BMv2 JSON differential suite of `nevermiss conformance` (`bmv2-json differential`):
//! every program of p4c's BMv2 STF suite (`*-bmv2.p4` with a `.stf`) and every v1model example
//! of this repository is compiled by p4c-bm2-ss, and its STF test runs through the P4 source and
//! through the JSON (`nevermiss stf PROG.p4 PROG.stf --against PROG.json`, a child process with
//! a time limit). Outcomes: agree (same packets on every port, same verdict); differ (the first
//! difference is printed); unsupported (the JSON does not load: the construct is named);
//! source-fails (nevermiss does not run the P4 source itself, so there is nothing to compare
//! against); p4c-fails (p4c-bm2-ss rejects the program); crash.
//!
//! Runs when a p4c-bm2-ss binary is given (`--p4c-bm2-ss`, `P4C_BM2_SS`) or found in
//! `<p4c>/build/`. Nothing generated is committed; `--bmv2-json-out` keeps the JSON.

use crate::conformance_cmd::{par_map, run_child};
use clap::Args;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

#[derive(Args, Clone, Debug, Default)]
pub struct Bmv2DiffArgs {
    /// p4c-bm2-ss binary: also run the BMv2 JSON differential suite (`bmv2-json differential`;
    /// default: `<p4c>/build/p4c-bm2-ss` when it exists).
    #[arg(long, env = "P4C_BM2_SS")]
    pub p4c_bm2_ss: Option<PathBuf>,
    /// Where the JSON p4c-bm2-ss writes goes (default: a folder in the temporary directory).
    #[arg(long, value_name = "DIR")]
    pub bmv2_json_out: Option<PathBuf>,
}

/// The suite's name.
pub const SUITE: &str = "bmv2-json differential";

/// What one program did.
#[derive(Clone, Debug)]
enum Outcome {
    Agree,
    Differ(String),
    Unsupported(String),
    SourceFails(String),
    P4cFails(String),
    Crash(String),
}

/// The p4c-bm2-ss to use, if any.
pub fn compiler(args: &Bmv2DiffArgs, p4c: &Path) -> Option<PathBuf> {
    args.p4c_bm2_ss
        .clone()
        .or_else(|| Some(p4c.join("build/p4c-bm2-ss")).filter(|p| p.is_file()))
}

/// Runs the suite; returns its summary line and whether anything crashed.
pub fn run_suite(
    exe: &Path,
    p4c: &Path,
    examples: &Path,
    args: &Bmv2DiffArgs,
    jobs: usize,
    timeout: Duration,
    verbose: bool,
) -> Result<(String, bool), String> {
    let Some(bm2) = compiler(args, p4c) else {
        return Err("no p4c-bm2-ss (--p4c-bm2-ss, P4C_BM2_SS or <p4c>/build/)".into());
    };
    let out = match &args.bmv2_json_out {
        Some(d) => d.clone(),
        None => std::env::temp_dir().join(format!("nevermiss-bmv2-json-{}", std::process::id())),
    };
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    let mut programs = programs_with_stf(&p4c.join("testdata/p4_16_samples"))?;
    // The repository's v1model examples.
    if let Ok(rd) = std::fs::read_dir(examples) {
        let mut ex: Vec<PathBuf> = rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.extension().is_some_and(|x| x == "p4")
                    && p.with_extension("stf").is_file()
                    && std::fs::read_to_string(p).is_ok_and(|t| t.contains("v1model.p4"))
            })
            .collect();
        ex.sort();
        programs.extend(ex);
    }
    outln!(
        "== {SUITE} ({} programs, compiler {})",
        programs.len(),
        bm2.display()
    );
    let outcomes = par_map(&programs, jobs, |p| one(exe, &bm2, p4c, p, &out, timeout));
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    let mut crashed = false;
    for (p, o) in programs.iter().zip(&outcomes) {
        let name = p
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let (kind, why) = match o {
            Outcome::Agree => ("agree", String::new()),
            Outcome::Differ(w) => ("differ", w.clone()),
            Outcome::Unsupported(w) => {
                *reasons.entry(reason_key(w)).or_default() += 1;
                ("unsupported", w.clone())
            }
            Outcome::SourceFails(w) => ("source-fails", w.clone()),
            Outcome::P4cFails(w) => ("p4c-fails", w.clone()),
            Outcome::Crash(w) => {
                crashed = true;
                ("crash", w.clone())
            }
        };
        *counts.entry(kind).or_default() += 1;
        if kind != "agree" && (verbose || matches!(kind, "differ" | "crash" | "unsupported")) {
            outln!("  {kind:12} {name}: {why}");
        } else if verbose {
            outln!("  {kind:12} {name}");
        }
    }
    if !reasons.is_empty() {
        outln!("  unsupported constructs:");
        for (r, n) in &reasons {
            outln!("    {n:4} {r}");
        }
    }
    let get = |k: &str| counts.get(k).copied().unwrap_or(0);
    let line = format!(
        "{SUITE}: {} programs, {} agree, {} differ, {} unsupported, {} source-fails, {} p4c-fails, {} crashed",
        programs.len(),
        get("agree"),
        get("differ"),
        get("unsupported"),
        get("source-fails"),
        get("p4c-fails"),
        get("crash")
    );
    outln!("{line}");
    Ok((line, crashed))
}

/// `*-bmv2.p4` programs with an `.stf` beside them (p4c's BMv2 STF suite).
fn programs_with_stf(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().ends_with("-bmv2.p4"))
                && p.with_extension("stf").is_file()
        })
        .collect();
    v.sort();
    Ok(v)
}

/// The construct of an "unsupported: ..." message, for counting (the JSON path dropped).
fn reason_key(w: &str) -> String {
    let r = w.split("unsupported: ").nth(1).unwrap_or(w);
    r.chars().take(100).collect()
}

fn one(exe: &Path, bm2: &Path, p4c: &Path, prog: &Path, out: &Path, timeout: Duration) -> Outcome {
    let stem = prog
        .file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    let json = out.join(format!("{stem}.json"));
    let psa = std::fs::read_to_string(prog).is_ok_and(|t| t.contains("psa.p4"));
    let compiler = if psa {
        bm2.with_file_name("p4c-bm2-psa")
    } else {
        bm2.to_path_buf()
    };
    if !compiler.is_file() {
        return Outcome::P4cFails(format!("no {} beside p4c-bm2-ss", compiler.display()));
    }
    let mut cmd = Command::new(&compiler);
    cmd.arg("-I")
        .arg(p4c.join("p4include"))
        .arg("-o")
        .arg(&json)
        .arg(prog);
    match run_child(&mut cmd, timeout * 6) {
        Ok(r) if r.status.is_some_and(|s| s.success()) => {}
        Ok(r) => {
            let why = r
                .stderr
                .lines()
                .find(|l| l.contains("rror"))
                .unwrap_or("exit status not 0")
                .trim()
                .chars()
                .take(160)
                .collect();
            return Outcome::P4cFails(why);
        }
        Err(e) => return Outcome::P4cFails(format!("{}: {e}", compiler.display())),
    }
    let mut cmd = Command::new(exe);
    cmd.arg("stf")
        .arg(prog)
        .arg(prog.with_extension("stf"))
        .arg("--against")
        .arg(&json);
    let run = match run_child(&mut cmd, timeout) {
        Ok(r) => r,
        Err(e) => return Outcome::Crash(e),
    };
    let first_err = |s: &str| -> String {
        s.lines()
            .find(|l| l.contains("error"))
            .or_else(|| s.lines().next())
            .unwrap_or("")
            .trim()
            .chars()
            .take(240)
            .collect()
    };
    match run.status.and_then(|s| s.code()) {
        Some(0) => Outcome::Agree,
        Some(1) => Outcome::Differ(
            run.stdout
                .lines()
                .next()
                .unwrap_or("")
                .trim()
                .chars()
                .take(240)
                .collect(),
        ),
        Some(2) => {
            let e = first_err(&run.stderr);
            let json_s = json.display().to_string();
            if e.contains(&json_s) || e.contains("$.") {
                Outcome::Unsupported(e.replace(&json_s, "").trim_start_matches(": ").to_string())
            } else {
                Outcome::SourceFails(e)
            }
        }
        Some(c) => Outcome::Crash(format!("exit code {c}: {}", first_err(&run.stderr))),
        None => Outcome::Crash("timeout or signal".into()),
    }
}
