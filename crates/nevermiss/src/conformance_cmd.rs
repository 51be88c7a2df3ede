//! `nevermiss conformance --p4c DIR`: run p4c's test suites (a local copy, never committed) through
//! `nevermiss check` and count what was accepted, rejected and crashed; run the BMv2 STF tests
//! through `nevermiss stf` and the PNA add-on-miss programs through `nevermiss run`, counting
//! what passed, failed and crashed.
//!
//! Every file runs in a child process of this same binary with a time limit, so a panic, a stack
//! overflow or a hang in one file is counted as a crash instead of taking the runner down.
//! A rejection counts only if the child printed an `error:` diagnostic and exited with 1.

use clap::Args;
use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(Args)]
pub struct ConformanceArgs {
    /// Root of a p4c checkout (or of an extracted `testdata/`'s parent).
    #[arg(long, env = "P4C_DIR")]
    pub p4c: PathBuf,
    /// Run only the suites whose name contains this string.
    #[arg(long)]
    pub suite: Option<String>,
    /// Seconds before a check counts as hung.
    #[arg(long, default_value = "20", value_parser = crate::flags::count)]
    pub timeout: u64,
    /// Parallel child processes (default: number of cores).
    #[arg(long, value_parser = crate::flags::count_usize)]
    pub jobs: Option<usize>,
    /// Print every file's outcome, not only the failures.
    #[arg(long)]
    pub verbose: bool,
    #[command(flatten)]
    pub testgen: crate::testgen::TestgenArgs,
    #[command(flatten)]
    pub bmv2: crate::bmv2_diff::Bmv2DiffArgs,
}

/// What a suite expects of its programs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Expect {
    Accept,
    Reject,
    /// `nevermiss stf PROG PROG.stf` passes (exit 0).
    StfPass,
    /// `nevermiss run PROG` over a few generated packets completes (exit 0).
    RunOk,
}

struct Suite {
    name: &'static str,
    files: Vec<PathBuf>,
    expect: Expect,
}

#[derive(Clone, Debug)]
enum Outcome {
    Accepted,
    Rejected(String),
    Crashed(String),
}

/// Include files of the architectures nevermiss supports; a sample including anything else is out of scope.
const SUPPORTED_INCLUDES: &[&str] = &[
    "core.p4",
    "v1model.p4",
    "psa.p4",
    "pna.p4",
    "bmv2/psa.p4",
    "dpdk/psa.p4",
    "dpdk/pna.p4",
    "bmv2/pna.p4",
];

pub fn run(args: ConformanceArgs) -> u8 {
    let testdata = args.p4c.join("testdata");
    if !testdata.is_dir() {
        eprintln!("error: {} has no testdata/ directory", args.p4c.display());
        return 2;
    }
    let mut suites = match collect_suites(&testdata) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    // The p4testgen suites run when a p4testgen binary is given.
    let mut testgen_suites: Vec<&str> = crate::testgen::SUITES.to_vec();
    // The BMv2 JSON differential runs when a p4c-bm2-ss is given or found.
    let bm2 = crate::bmv2_diff::compiler(&args.bmv2, &args.p4c);
    let mut run_bmv2 = true;
    if let Some(filter) = &args.suite {
        suites.retain(|s| s.name.contains(filter.as_str()));
        testgen_suites.retain(|s| s.contains(filter.as_str()));
        run_bmv2 = crate::bmv2_diff::SUITE.contains(filter.as_str());
        if suites.is_empty() && testgen_suites.is_empty() && !run_bmv2 {
            eprintln!("error: --suite {filter}: no suite's name contains it");
            return 2;
        }
        if run_bmv2 && bm2.is_none() && suites.is_empty() && testgen_suites.is_empty() {
            eprintln!(
                "error: --suite {filter}: the BMv2 JSON differential needs --p4c-bm2-ss (or \
                 P4C_BM2_SS, or <p4c>/build/p4c-bm2-ss)"
            );
            return 2;
        }
        if suites.is_empty() && !run_bmv2 && args.testgen.p4testgen.is_none() {
            eprintln!(
                "error: --suite {filter}: the p4testgen suites need --p4testgen (or P4TESTGEN)"
            );
            return 2;
        }
    }
    if args.testgen.p4testgen.is_none() {
        testgen_suites.clear();
    }
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: cannot find own executable: {e}");
            return 2;
        }
    };
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()));
    let timeout = Duration::from_secs(args.timeout);
    let mut any_crash = false;
    let mut summary = Vec::new();
    for suite in &suites {
        let outcomes = run_all(&exe, &suite.files, suite.expect, jobs, timeout);
        let (mut acc, mut rej, mut crash) = (0, 0, 0);
        outln!(
            "== {} ({} files, expected: {})",
            suite.name,
            suite.files.len(),
            expect_word(suite.expect)
        );
        for (file, outcome) in suite.files.iter().zip(&outcomes) {
            let name = file
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            match outcome {
                Outcome::Accepted => {
                    acc += 1;
                    if suite.expect == Expect::Reject {
                        outln!("  FAIL accepted: {name}");
                    } else if args.verbose {
                        outln!("  ok   accepted: {name}");
                    }
                }
                Outcome::Rejected(why) => {
                    rej += 1;
                    if suite.expect != Expect::Reject {
                        outln!("  FAIL rejected: {name}: {why}");
                    } else if args.verbose {
                        outln!("  ok   rejected: {name}: {why}");
                    }
                }
                Outcome::Crashed(why) => {
                    crash += 1;
                    outln!("  CRASH {name}: {why}");
                }
            }
        }
        any_crash |= crash > 0;
        let good = if suite.expect == Expect::Reject {
            rej
        } else {
            acc
        };
        let total = suite.files.len().max(1);
        let (yes, no) = match suite.expect {
            Expect::StfPass | Expect::RunOk => ("passed", "failed"),
            _ => ("accepted", "rejected"),
        };
        let line = format!(
            "{}: {} files, {} {yes}, {} {no}, {} crashed; {:.1}% as expected",
            suite.name,
            suite.files.len(),
            acc,
            rej,
            crash,
            100.0 * good as f64 / total as f64
        );
        outln!("{line}");
        summary.push(line);
    }
    let testgen_run = crate::testgen::Run {
        exe: &exe,
        p4c: &args.p4c,
        args: &args.testgen,
        jobs,
        timeout,
        verbose: args.verbose,
    };
    for suite in testgen_suites {
        match crate::testgen::run_suite(&testgen_run, suite) {
            Ok((line, crashed)) => {
                any_crash |= crashed;
                summary.push(line);
            }
            Err(e) => {
                eprintln!("error: {suite}: {e}");
                return 2;
            }
        }
    }
    if run_bmv2 && bm2.is_some() {
        match crate::bmv2_diff::run_suite(
            &exe,
            &args.p4c,
            &args.testgen.examples,
            &args.bmv2,
            jobs,
            timeout,
            args.verbose,
        ) {
            Ok((line, crashed)) => {
                any_crash |= crashed;
                summary.push(line);
            }
            Err(e) => {
                eprintln!("error: {}: {e}", crate::bmv2_diff::SUITE);
                return 2;
            }
        }
    }
    outln!("== summary");
    for line in &summary {
        outln!("{line}");
    }
    if any_crash {
        1
    } else {
        0
    }
}

fn expect_word(e: Expect) -> &'static str {
    match e {
        Expect::Accept => "accept",
        Expect::Reject => "reject",
        Expect::StfPass => "STF test passes",
        Expect::RunOk => "runs on generated packets",
    }
}

fn p4_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "p4") && p.is_file())
        .collect();
    files.sort();
    Ok(files)
}

fn collect_suites(testdata: &Path) -> Result<Vec<Suite>, String> {
    let samples_dir = testdata.join("p4_16_samples");
    let samples = p4_files(&samples_dir).map_err(|e| format!("{}: {e}", samples_dir.display()))?;
    let in_scope: Vec<PathBuf> = samples
        .iter()
        .filter(|p| includes_supported(p, &mut BTreeSet::new()))
        .cloned()
        .collect();
    let pna: Vec<PathBuf> = samples
        .iter()
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("pna-"))
        })
        .cloned()
        .collect();
    let mut suites = vec![
        Suite {
            name: "p4_16_samples (core/v1model/psa/pna)",
            files: in_scope,
            expect: Expect::Accept,
        },
        Suite {
            name: "p4_16_samples pna-*",
            files: pna,
            expect: Expect::Accept,
        },
    ];
    // BMv2 STF tests: `*-bmv2.p4` with a sibling `.stf`.
    let stf: Vec<PathBuf> = samples
        .iter()
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().ends_with("-bmv2.p4"))
                && p.with_extension("stf").is_file()
        })
        .cloned()
        .collect();
    suites.push(Suite {
        name: "p4_16_samples bmv2 STF",
        files: stf,
        expect: Expect::StfPass,
    });
    // PNA programs with add-on-miss tables, run over generated packets.
    let aom: Vec<PathBuf> = samples
        .iter()
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("pna-"))
                && std::fs::read_to_string(p).is_ok_and(|t| t.contains("add_on_miss"))
        })
        .cloned()
        .collect();
    suites.push(Suite {
        name: "p4_16_samples pna add_on_miss (run)",
        files: aom,
        expect: Expect::RunOk,
    });
    for (name, dir) in [
        ("p4_16_errors", "p4_16_errors"),
        ("p4_16_pna_errors", "p4_16_pna_errors"),
    ] {
        if let Ok(files) = p4_files(&testdata.join(dir)) {
            suites.push(Suite {
                name,
                files,
                expect: Expect::Reject,
            });
        }
    }
    Ok(suites)
}

/// True if every `#include` of the file (followed through quoted includes of local files) names a
/// supported architecture's include file.
fn includes_supported(file: &Path, seen: &mut BTreeSet<PathBuf>) -> bool {
    if !seen.insert(file.to_path_buf()) {
        return true;
    }
    let Ok(bytes) = std::fs::read(file) else {
        return false;
    };
    let text = String::from_utf8_lossy(&bytes);
    for line in text.lines() {
        let l = line.trim_start();
        let Some(rest) = l.strip_prefix('#') else {
            continue;
        };
        let Some(rest) = rest.trim_start().strip_prefix("include") else {
            continue;
        };
        let rest = rest.trim();
        let (quoted, name) = match (rest.strip_prefix('<'), rest.strip_prefix('"')) {
            (Some(r), _) => (false, r.split('>').next().unwrap_or("")),
            (_, Some(r)) => (true, r.split('"').next().unwrap_or("")),
            _ => return false,
        };
        if SUPPORTED_INCLUDES.contains(&name) {
            continue;
        }
        let local = file.parent().map(|d| d.join(name));
        match local {
            Some(p) if quoted && p.is_file() => {
                if !includes_supported(&p, seen) {
                    return false;
                }
            }
            _ => return false,
        }
    }
    true
}

fn run_all(
    exe: &Path,
    files: &[PathBuf],
    expect: Expect,
    jobs: usize,
    timeout: Duration,
) -> Vec<Outcome> {
    par_map(files, jobs, |file| check_one(exe, file, expect, timeout))
}

/// `f` over every item on `jobs` threads; results in the items' order.
pub(crate) fn par_map<T: Sync, R: Send>(
    items: &[T],
    jobs: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                let r = f(item);
                if let Ok(mut rs) = results.lock() {
                    rs[i] = Some(r);
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .into_iter()
        .map(|r| r.expect("every item ran"))
        .collect()
}

/// What a child process did: its exit status (`None`: killed at the time limit) and output.
pub(crate) struct ChildRun {
    pub status: Option<std::process::ExitStatus>,
    pub stdout: String,
    pub stderr: String,
}

/// Runs a child process to completion or until `timeout` (then kills it); stdout and stderr
/// are drained while it runs, so a chatty child cannot block on a full pipe.
pub(crate) fn run_child(cmd: &mut Command, timeout: Duration) -> Result<ChildRun, String> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start: {e}"))?;
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let err_reader = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let out_reader = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if start.elapsed() > timeout => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(_) => break None,
        }
    };
    Ok(ChildRun {
        status,
        stderr: err_reader.join().unwrap_or_default(),
        stdout: out_reader.join().unwrap_or_default(),
    })
}

fn check_one(exe: &Path, file: &Path, expect: Expect, timeout: Duration) -> Outcome {
    let mut cmd = Command::new(exe);
    match expect {
        Expect::StfPass => {
            cmd.arg("stf").arg(file).arg(file.with_extension("stf"));
        }
        Expect::RunOk => {
            cmd.arg("run")
                .arg(file)
                .arg("--port")
                .arg("0=gen:two-phase,m=4,r=2,count=16")
                .arg("--port")
                .arg("1=null");
        }
        _ => {
            // p4c's test programs include declarations-only files (no `main`), which p4c's
            // front end accepts: checked as libraries.
            cmd.arg("check").arg("--library").arg(file);
        }
    }
    let run = match run_child(&mut cmd, timeout) {
        Ok(r) => r,
        Err(e) => return Outcome::Crashed(e),
    };
    let (err, out) = (run.stderr, run.stdout);
    let Some(status) = run.status else {
        return Outcome::Crashed(format!("timeout after {} s", timeout.as_secs()));
    };
    if matches!(expect, Expect::StfPass | Expect::RunOk) {
        let first = |s: &str| -> String {
            let l = s
                .lines()
                .find(|l| l.contains("error") || l.contains("FAIL"))
                .or_else(|| s.lines().next())
                .unwrap_or("");
            l.trim().chars().take(240).collect()
        };
        return match status.code() {
            Some(0) => Outcome::Accepted,
            Some(1) => Outcome::Rejected(format!(
                "{} {}",
                first(&out),
                out.lines().nth(1).unwrap_or("").trim()
            )),
            Some(2) => Outcome::Rejected(first(&err)),
            Some(c) => Outcome::Crashed(format!("exit code {c}: {}", first(&err))),
            None => Outcome::Crashed("killed by a signal".into()),
        };
    }
    match status.code() {
        Some(0) => Outcome::Accepted,
        Some(1) if err.contains("error:") => {
            let first = err
                .lines()
                .find(|l| l.contains("error:"))
                .unwrap_or("")
                .trim();
            Outcome::Rejected(first.chars().take(200).collect())
        }
        Some(c) => Outcome::Crashed(format!(
            "exit code {c}: {}",
            err.lines()
                .last()
                .unwrap_or("")
                .chars()
                .take(200)
                .collect::<String>()
        )),
        None => Outcome::Crashed("killed by a signal".into()),
    }
}
