//! The p4testgen suites of `nevermiss conformance` (issue 14): p4c's test generator p4testgen
//! (an external binary, `--p4testgen` / `P4TESTGEN`) writes STF tests with BMv2's semantics for
//! p4c's v1model samples (`p4testgen v1model samples`) and for this repository's v1model examples
//! (`p4testgen examples`); each test runs through `nevermiss stf` in a child process and is
//! counted as passed, failed (a command that could not be applied, an output that differs, a
//! program nevermiss rejects), unsupported or crashed.
//!
//! Nothing generated goes into the repository: tests are written under `--testgen-out` (default:
//! a directory in the system's temp dir), one folder per program and seed. Programs that p4c
//! itself expects to fail on BMv2 are skipped, read at run time from p4c's CMake files
//! (`backends/p4tools/modules/testgen/targets/bmv2/test/BMV2STFXfail.cmake` and the
//! `XFAIL_TESTS` of `backends/bmv2/CMakeLists.txt`) when `P4C_DIR` holds them.

use crate::child::{par_map, run_child, ChildRun};
use clap::Args;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Flags of the p4testgen suites (flattened into `nevermiss conformance`).
#[derive(Args, Clone, Debug)]
pub struct TestgenArgs {
    /// p4testgen binary: also run the tests it generates for p4c's v1model samples and for the
    /// repository's v1model examples (suites `p4testgen v1model samples`, `p4testgen examples`).
    #[arg(long, env = "P4TESTGEN")]
    pub p4testgen: Option<PathBuf>,
    /// Tests generated per program and seed (p4testgen's `--max-tests`; fewer when the program
    /// has fewer paths).
    #[arg(long, default_value = "20", value_parser = crate::flags::count)]
    pub testgen_tests: u64,
    /// Seeds, comma-separated: each program's tests are generated once per seed.
    #[arg(long, default_value = "1,2", value_delimiter = ',')]
    pub testgen_seeds: Vec<u64>,
    /// Where generated tests are written (default: `nevermiss-testgen` in the temp dir).
    #[arg(long)]
    pub testgen_out: Option<PathBuf>,
    /// Reuse tests already generated in `--testgen-out` for a program and seed.
    #[arg(long)]
    pub testgen_reuse: bool,
    /// Seconds p4testgen may take for one program and seed.
    #[arg(long, default_value = "300", value_parser = crate::flags::count)]
    pub testgen_timeout: u64,
    /// The repository's examples (for `p4testgen examples`).
    #[arg(long, default_value = "examples")]
    pub examples: PathBuf,
}

/// Names of the suites this module runs.
pub const SUITES: [&str; 2] = ["p4testgen v1model samples", "p4testgen examples"];

/// One program to generate tests for.
#[derive(Clone, Debug)]
struct Program {
    path: PathBuf,
    /// Name in reports and in the output folder (the path below the suite's root, `/` → `_`).
    name: String,
}

/// How one generated test ended.
#[derive(Clone, Debug, PartialEq, Eq)]
enum TestOutcome {
    Passed,
    /// An STF command could not be applied (a table, key, action or parameter name not found...).
    FailedSetup(String),
    /// The output packets differ from the expected ones.
    FailedOutput(String),
    /// nevermiss rejected the program (exit 2 without "not supported").
    Rejected(String),
    /// nevermiss does not support a construct of the program.
    Unsupported(String),
    Crashed(String),
}

impl TestOutcome {
    fn word(&self) -> &'static str {
        match self {
            TestOutcome::Passed => "pass",
            TestOutcome::FailedSetup(_) => "fail-setup",
            TestOutcome::FailedOutput(_) => "fail-output",
            TestOutcome::Rejected(_) => "rejected",
            TestOutcome::Unsupported(_) => "unsupported",
            TestOutcome::Crashed(_) => "crash",
        }
    }

    fn message(&self) -> &str {
        match self {
            TestOutcome::Passed => "",
            TestOutcome::FailedSetup(m)
            | TestOutcome::FailedOutput(m)
            | TestOutcome::Rejected(m)
            | TestOutcome::Unsupported(m)
            | TestOutcome::Crashed(m) => m,
        }
    }
}

/// What p4testgen did for one program and seed.
#[derive(Clone, Debug)]
enum Generated {
    Tests(Vec<PathBuf>),
    Failed(String),
}

/// Counts of one suite.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Counts {
    tests: usize,
    passed: usize,
    failed_setup: usize,
    failed_output: usize,
    rejected: usize,
    unsupported: usize,
    crashed: usize,
}

impl Counts {
    fn add(&mut self, o: &TestOutcome) {
        self.tests += 1;
        match o {
            TestOutcome::Passed => self.passed += 1,
            TestOutcome::FailedSetup(_) => self.failed_setup += 1,
            TestOutcome::FailedOutput(_) => self.failed_output += 1,
            TestOutcome::Rejected(_) => self.rejected += 1,
            TestOutcome::Unsupported(_) => self.unsupported += 1,
            TestOutcome::Crashed(_) => self.crashed += 1,
        }
    }

    fn failed(&self) -> usize {
        self.failed_setup + self.failed_output + self.rejected
    }
}

/// Settings shared by the suites of one run.
pub struct Run<'a> {
    pub exe: &'a Path,
    pub p4c: &'a Path,
    pub args: &'a TestgenArgs,
    pub jobs: usize,
    /// Time limit of one `nevermiss stf` run.
    pub timeout: Duration,
    pub verbose: bool,
}

/// Runs one p4testgen suite (a name of [`SUITES`]); returns its summary line and whether
/// anything crashed, or an error (exit 2) when the suite cannot run at all.
pub fn run_suite(r: &Run<'_>, suite: &str) -> Result<(String, bool), String> {
    let Some(bin) = &r.args.p4testgen else {
        return Err("--p4testgen (or P4TESTGEN) is not set".into());
    };
    if !bin.is_file() {
        return Err(format!("--p4testgen {}: no such file", bin.display()));
    }
    if r.args.testgen_seeds.is_empty() {
        return Err("--testgen-seeds: give at least one seed".into());
    }
    let out_root = r
        .args
        .testgen_out
        .clone()
        .unwrap_or_else(|| std::env::temp_dir().join("nevermiss-testgen"));
    let tag = if suite == SUITES[0] {
        "samples"
    } else {
        "examples"
    };
    let out_dir = out_root.join(tag);
    std::fs::create_dir_all(&out_dir)
        .map_err(|e| format!("--testgen-out {}: {e}", out_dir.display()))?;
    let (programs, skipped, notes) = if suite == SUITES[0] {
        sample_programs(r.p4c)?
    } else {
        example_programs(&r.args.examples)?
    };
    let seeds = &r.args.testgen_seeds;
    outln!(
        "== {suite} ({} programs; seeds {}; up to {} tests each; tests in {})",
        programs.len(),
        seeds
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(","),
        r.args.testgen_tests,
        out_dir.display()
    );
    for n in &notes {
        outln!("  note: {n}");
    }
    if !skipped.is_empty() {
        outln!("  skipped {} programs:", skipped.len());
        for (name, why) in &skipped {
            outln!("    {name}: {why}");
        }
    }
    // Generation, one job per program and seed.
    let jobs: Vec<(usize, u64)> = (0..programs.len())
        .flat_map(|i| seeds.iter().map(move |s| (i, *s)))
        .collect();
    let gen_start = Instant::now();
    let generated = par_map(&jobs, r.jobs, |(i, seed)| {
        let p = &programs[*i];
        let dir = out_dir.join(&p.name).join(format!("seed{seed}"));
        generate(bin, r.args, &p.path, &dir, *seed)
    });
    let gen_secs = gen_start.elapsed().as_secs_f64();
    // Runs, one job per test.
    let mut runs: Vec<(usize, u64, PathBuf)> = Vec::new();
    // Program and seed → why p4testgen gave no tests.
    let mut no_tests: Vec<(usize, u64, String)> = Vec::new();
    for ((i, seed), g) in jobs.iter().zip(&generated) {
        match g {
            Generated::Tests(ts) if ts.is_empty() => {
                no_tests.push((*i, *seed, "p4testgen wrote no tests".into()));
            }
            Generated::Tests(ts) => runs.extend(ts.iter().map(|t| (*i, *seed, t.clone()))),
            Generated::Failed(why) => no_tests.push((*i, *seed, why.clone())),
        }
    }
    let with_tests: BTreeSet<usize> = runs.iter().map(|(i, _, _)| *i).collect();
    let run_start = Instant::now();
    let outcomes = par_map(&runs, r.jobs, |(i, _, test)| {
        run_test(r.exe, &programs[*i].path, test, r.timeout)
    });
    let run_secs = run_start.elapsed().as_secs_f64();
    // Report.
    for (i, seed, why) in &no_tests {
        outln!("  NOGEN {} seed {seed}: {why}", programs[*i].name);
    }
    let mut counts = Counts::default();
    let mut tsv = String::from("program\tseed\ttest\toutcome\tmessage\n");
    let mut unsupported_shown: BTreeSet<usize> = BTreeSet::new();
    for ((i, seed, test), o) in runs.iter().zip(&outcomes) {
        counts.add(o);
        let test_name = test
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let _ = writeln!(
            tsv,
            "{}\t{seed}\t{test_name}\t{}\t{}",
            programs[*i].name,
            o.word(),
            o.message().replace(['\t', '\n'], " ")
        );
        let what = format!("{} seed {seed} {test_name}", programs[*i].name);
        match o {
            TestOutcome::Passed if r.verbose => outln!("  ok   {what}"),
            TestOutcome::Passed => {}
            TestOutcome::Unsupported(m) => {
                // Once per program: every test of it says the same.
                if unsupported_shown.insert(*i) {
                    outln!("  UNSUPPORTED {}: {m}", programs[*i].name);
                }
            }
            TestOutcome::Crashed(m) => outln!("  CRASH {what}: {m}"),
            other => outln!("  FAIL {what}: {}", other.message()),
        }
    }
    let tsv_path = out_dir.join("results.tsv");
    if let Err(e) = std::fs::write(&tsv_path, tsv) {
        outln!("  note: cannot write {}: {e}", tsv_path.display());
    }
    let pct = |n: usize| 100.0 * n as f64 / counts.tests.max(1) as f64;
    let line = format!(
        "{suite}: {} tests from {} programs; {} passed ({:.2}%), {} failed ({} setup, {} output, \
         {} rejected), {} unsupported, {} crashed; {} program-seeds without tests, {} programs \
         skipped; generation {:.0} s, runs {:.0} s (results: {})",
        counts.tests,
        with_tests.len(),
        counts.passed,
        pct(counts.passed),
        counts.failed(),
        counts.failed_setup,
        counts.failed_output,
        counts.rejected,
        counts.unsupported,
        counts.crashed,
        no_tests.len(),
        skipped.len(),
        gen_secs,
        run_secs,
        tsv_path.display()
    );
    outln!("{line}");
    Ok((line, counts.crashed > 0))
}

/// Programs selected as p4c's CMake selects the v1model samples of p4testgen's BMv2 suites (a
/// line matching `include.*v1model.p4` and one matching `main|common_v1_test`), minus p4c's
/// BMv2 xfails; with the skipped programs and notes about the xfail sources.
#[allow(clippy::type_complexity)]
fn sample_programs(
    p4c: &Path,
) -> Result<(Vec<Program>, Vec<(String, String)>, Vec<String>), String> {
    let samples = p4c.join("testdata/p4_16_samples");
    if !samples.is_dir() {
        return Err(format!("{} is not a directory", samples.display()));
    }
    let mut files = p4_files_in(&samples);
    for sub in ["dash", "omec", "pins"] {
        files.extend(p4_files_in(&samples.join(sub)));
    }
    if let Ok(rd) = std::fs::read_dir(&samples) {
        let mut fabric: Vec<PathBuf> = rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("fabric_"))
            })
            .map(|d| d.join("fabric.p4"))
            .filter(|f| f.is_file())
            .collect();
        fabric.sort();
        files.extend(fabric);
    }
    let mut notes = Vec::new();
    let mut xfails: BTreeMap<String, String> = BTreeMap::new();
    let testgen_xfail =
        p4c.join("backends/p4tools/modules/testgen/targets/bmv2/test/BMV2STFXfail.cmake");
    match std::fs::read_to_string(&testgen_xfail) {
        Ok(t) => xfails.extend(testgen_stf_xfails(&t)),
        Err(_) => notes.push(format!(
            "{} not found (P4C_DIR without p4c's sources): p4testgen's own xfails are not skipped",
            testgen_xfail.display()
        )),
    }
    let bmv2 = p4c.join("backends/bmv2/CMakeLists.txt");
    match std::fs::read_to_string(&bmv2) {
        Ok(t) => {
            for f in bmv2_xfails(&t) {
                xfails
                    .entry(f)
                    .or_insert_with(|| "BMv2 xfail (backends/bmv2/CMakeLists.txt)".into());
            }
        }
        Err(_) => notes.push(format!(
            "{} not found: BMv2's xfails are not skipped",
            bmv2.display()
        )),
    }
    let mut programs = Vec::new();
    let mut skipped = Vec::new();
    for f in files {
        let Ok(bytes) = std::fs::read(&f) else {
            continue;
        };
        if !is_v1model_test(&String::from_utf8_lossy(&bytes)) {
            continue;
        }
        let name = f
            .strip_prefix(&samples)
            .unwrap_or(&f)
            .to_string_lossy()
            .replace('/', "_");
        let base = f
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        match xfails.get(&base) {
            Some(why) => skipped.push((name, format!("p4c xfail: {why}"))),
            None => programs.push(Program { path: f, name }),
        }
    }
    Ok((programs, skipped, notes))
}

/// The repository's examples: the v1model ones run; the others are listed as skipped (p4testgen
/// writes STF tests only for BMv2's v1model).
#[allow(clippy::type_complexity)]
fn example_programs(
    dir: &Path,
) -> Result<(Vec<Program>, Vec<(String, String)>, Vec<String>), String> {
    if !dir.is_dir() {
        return Err(format!(
            "--examples {}: not a directory (run from the repository's root or pass --examples)",
            dir.display()
        ));
    }
    let mut programs = Vec::new();
    let mut skipped = Vec::new();
    for f in p4_files_in(dir) {
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        let name = f
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        if is_v1model_test(&text) {
            programs.push(Program { path: f, name });
        } else {
            skipped.push((
                name,
                "not v1model: p4testgen's STF back end is BMv2 v1model only (PNA: PTF, see \
                 docs/conformance.md)"
                    .into(),
            ));
        }
    }
    Ok((programs, skipped, Vec::new()))
}

fn p4_files_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "p4") && p.is_file())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// p4c's selection of v1model tests: a line matching the regex `include.*v1model.p4` and a
/// line matching `main|common_v1_test`.
fn is_v1model_test(text: &str) -> bool {
    let includes = text.lines().any(|l| {
        l.find("include").is_some_and(|i| {
            let rest = &l[i + "include".len()..];
            rest.match_indices("v1model").any(|(j, _)| {
                let after = &rest[j + "v1model".len()..];
                let mut cs = after.chars();
                cs.next().is_some() && cs.as_str().starts_with("p4")
            })
        })
    });
    includes
        && text
            .lines()
            .any(|l| l.contains("main") || l.contains("common_v1_test"))
}

/// Removes `#` comments of a CMake file (outside quoted strings).
fn strip_cmake_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let mut in_str = false;
        for c in line.chars() {
            match c {
                '"' => in_str = !in_str,
                '#' if !in_str => break,
                _ => {}
            }
            out.push(c);
        }
        out.push('\n');
    }
    out
}

/// The arguments of each call `name( ... )` in a CMake text (comments removed): quoted
/// strings without their quotes, other words as they are.
fn cmake_calls(text: &str, name: &str) -> Vec<Vec<String>> {
    let text = strip_cmake_comments(text);
    let mut calls = Vec::new();
    let mut rest = text.as_str();
    while let Some(i) = rest.find(name) {
        let after = rest[i + name.len()..].trim_start();
        let prev_ok = i == 0
            || !rest[..i]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_');
        let Some(body) = after.strip_prefix('(') else {
            rest = &rest[i + name.len()..];
            continue;
        };
        let end = body.find(')').unwrap_or(body.len());
        if prev_ok {
            let mut args = Vec::new();
            let mut s = &body[..end];
            loop {
                s = s.trim_start();
                if s.is_empty() {
                    break;
                }
                if let Some(q) = s.strip_prefix('"') {
                    let e = q.find('"').unwrap_or(q.len());
                    args.push(q[..e].to_string());
                    s = q.get(e + 1..).unwrap_or("");
                } else {
                    let e = s.find(char::is_whitespace).unwrap_or(s.len());
                    args.push(s[..e].to_string());
                    s = &s[e..];
                }
            }
            calls.push(args);
        }
        rest = &body[end..];
    }
    calls
}

/// p4testgen's BMv2 STF xfails: `p4tools_add_xfail_reason("testgen-p4c-bmv2-stf" "reason"
/// file.p4 ...)` → file name → reason.
fn testgen_stf_xfails(text: &str) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    for args in cmake_calls(text, "p4tools_add_xfail_reason") {
        if args.first().map(String::as_str) != Some("testgen-p4c-bmv2-stf") {
            continue;
        }
        let reason = args.get(1).cloned().unwrap_or_default();
        for f in args.iter().skip(2) {
            m.entry(base_name(f))
                .or_insert_with(|| format!("p4testgen STF xfail \"{reason}\""));
        }
    }
    m
}

/// The `XFAIL_TESTS` of p4c's `backends/bmv2/CMakeLists.txt` (file names).
fn bmv2_xfails(text: &str) -> Vec<String> {
    let mut v = Vec::new();
    for args in cmake_calls(text, "set") {
        if args.first().map(String::as_str) == Some("XFAIL_TESTS") {
            v.extend(args.iter().skip(1).map(|f| base_name(f)));
        }
    }
    for args in cmake_calls(text, "list") {
        if args.first().map(String::as_str) == Some("APPEND")
            && args.get(1).map(String::as_str) == Some("XFAIL_TESTS")
        {
            v.extend(args.iter().skip(2).map(|f| base_name(f)));
        }
    }
    v
}

fn base_name(f: &str) -> String {
    f.rsplit('/').next().unwrap_or(f).to_string()
}

/// Runs p4testgen for one program and seed into `dir` (or reuses the tests there).
fn generate(bin: &Path, args: &TestgenArgs, prog: &Path, dir: &Path, seed: u64) -> Generated {
    let list = |dir: &Path| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|rd| {
                rd.filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|x| x == "stf"))
                    .collect()
            })
            .unwrap_or_default();
        v.sort_by_key(|p| test_number(p));
        v
    };
    let done = dir.join(".generated");
    if args.testgen_reuse && done.is_file() {
        return Generated::Tests(list(dir));
    }
    let _ = std::fs::remove_dir_all(dir);
    if let Err(e) = std::fs::create_dir_all(dir) {
        return Generated::Failed(format!("{}: {e}", dir.display()));
    }
    let mut cmd = Command::new(bin);
    cmd.args([
        "--target",
        "bmv2",
        "--arch",
        "v1model",
        "--test-backend",
        "STF",
    ])
    .arg("--max-tests")
    .arg(args.testgen_tests.to_string())
    .arg("--seed")
    .arg(seed.to_string())
    .arg("--print-traces")
    .arg("--out-dir")
    .arg(dir)
    .arg(prog);
    let timeout = Duration::from_secs(args.testgen_timeout);
    let run: ChildRun = match run_child(&mut cmd, timeout) {
        Ok(r) => r,
        Err(e) => return Generated::Failed(format!("p4testgen {e}")),
    };
    match run.status {
        None => Generated::Failed(format!("p4testgen timed out after {} s", timeout.as_secs())),
        Some(s) if s.success() => {
            let _ = std::fs::write(&done, "");
            Generated::Tests(list(dir))
        }
        Some(s) => {
            let text = format!("{}\n{}", run.stderr, run.stdout);
            let why = text
                .lines()
                .find(|l| {
                    let l = l.to_ascii_lowercase();
                    l.contains("error") || l.contains("exception") || l.contains("bug")
                })
                .or_else(|| run.stderr.lines().rev().find(|l| !l.trim().is_empty()))
                .unwrap_or("")
                .trim();
            Generated::Failed(format!(
                "p4testgen failed ({}): {}",
                s.code()
                    .map_or_else(|| "signal".to_string(), |c| format!("exit {c}")),
                why.chars().take(200).collect::<String>()
            ))
        }
    }
}

/// The number p4testgen puts at the end of a test's name (`prog_12.stf` → 12).
fn test_number(p: &Path) -> u64 {
    p.file_stem()
        .and_then(|s| s.to_str())
        .and_then(|s| s.rsplit('_').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(u64::MAX)
}

/// Runs one generated test through `nevermiss stf` in a child process.
fn run_test(exe: &Path, prog: &Path, test: &Path, timeout: Duration) -> TestOutcome {
    let mut cmd = Command::new(exe);
    cmd.arg("stf").arg(prog).arg(test);
    match run_child(&mut cmd, timeout) {
        Err(e) => TestOutcome::Crashed(e),
        Ok(run) => classify(&run, timeout),
    }
}

/// Classifies a `nevermiss stf` run (exit codes of stf_cmd.rs).
fn classify(run: &ChildRun, timeout: Duration) -> TestOutcome {
    let first = |s: &str, pat: &[&str]| -> String {
        s.lines()
            .find(|l| pat.iter().any(|p| l.contains(p)))
            .or_else(|| s.lines().find(|l| !l.trim().is_empty()))
            .unwrap_or("")
            .trim()
            .chars()
            .take(300)
            .collect()
    };
    let Some(status) = run.status else {
        return TestOutcome::Crashed(format!("timeout after {} s", timeout.as_secs()));
    };
    match status.code() {
        Some(0) => TestOutcome::Passed,
        Some(1) => {
            let line = first(&run.stdout, &["FAIL"]);
            // "FAIL <test>: line N: ..." is a command that could not be applied.
            let msg = line
                .split_once(".stf: ")
                .map_or(line.as_str(), |(_, m)| m)
                .to_string();
            let detail: String = run
                .stdout
                .lines()
                .skip_while(|l| !l.contains("FAIL"))
                .skip(1)
                .take(2)
                .map(str::trim)
                .collect::<Vec<_>>()
                .join(" / ");
            let full = if detail.is_empty() {
                msg.clone()
            } else {
                format!("{msg} [{detail}]")
            };
            if msg.starts_with("line ") {
                TestOutcome::FailedSetup(full)
            } else {
                TestOutcome::FailedOutput(full)
            }
        }
        Some(2) => {
            let msg = first(&run.stderr, &["error"]);
            if msg.contains("not supported") || msg.contains("unsupported") {
                TestOutcome::Unsupported(msg)
            } else {
                TestOutcome::Rejected(msg)
            }
        }
        Some(c) => TestOutcome::Crashed(format!(
            "exit code {c}: {}",
            first(&run.stderr, &["panicked", "error"])
        )),
        None => TestOutcome::Crashed(format!(
            "killed by a signal: {}",
            first(&run.stderr, &["panicked", "overflow"])
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selects_v1model_programs_as_p4c_does() {
        assert!(is_v1model_test(
            "#include <core.p4>\n#include <v1model.p4>\nV1Switch(p(), ...) main;\n"
        ));
        assert!(is_v1model_test(
            "#include \"v1model.p4\"\n#include \"common_v1_test.p4\"\n"
        ));
        // No `main` anywhere.
        assert!(!is_v1model_test("#include <v1model.p4>\ncontrol c() {}\n"));
        assert!(!is_v1model_test("#include <psa.p4>\nPSA_Switch() main;\n"));
        // `v1model` followed by one character and `p4`, as the regex `v1model.p4` matches.
        assert!(!is_v1model_test("#include <v1model.h>\nmain\n"));
    }

    #[test]
    fn reads_testgen_xfails_with_reasons() {
        let cmake = r#"
# A comment ( with a paren
p4tools_add_xfail_reason(
  "testgen-p4c-bmv2-stf"
  "simple_switch died with return code -6"
  # why
  issue1607-bmv2.p4
  bmv2_copy_headers.p4
)
p4tools_add_xfail_reason(
  "testgen-p4c-bmv2-ptf"
  "other"
  ptf-only.p4
)
p4tools_add_xfail_reason(
  "testgen-p4c-bmv2-stf"
  "differs|Expected ([0-9]+) packets on port ([0-9]+) got ([0-9]+)"
)
p4tools_add_xfail_reason(
  "testgen-p4c-bmv2-stf"
  "nested stack"
  array1.p4 # inline comment
)
"#;
        let m = testgen_stf_xfails(cmake);
        let names: Vec<&str> = m.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            ["array1.p4", "bmv2_copy_headers.p4", "issue1607-bmv2.p4"]
        );
        assert!(m["array1.p4"].contains("nested stack"));
    }

    #[test]
    fn reads_bmv2_xfail_tests() {
        let cmake = "set (XFAIL_TESTS\n  # c\n  testdata/p4_16_samples/issue907-bmv2.p4\n  testdata/p4_16_samples/psa-meter4.p4 # Compiler Bug: x.cpp:574: Null info\n)\nset (OTHER a.p4)\nif (X)\n  list(APPEND XFAIL_TESTS\n    testdata/p4_14_samples/issue60.p4\n  )\nendif()\n";
        assert_eq!(
            bmv2_xfails(cmake),
            ["issue907-bmv2.p4", "psa-meter4.p4", "issue60.p4"]
        );
    }

    #[test]
    fn orders_tests_by_number() {
        assert_eq!(test_number(Path::new("/x/prog-bmv2_12.stf")), 12);
        assert_eq!(test_number(Path::new("/x/prog.stf")), u64::MAX);
    }
}
