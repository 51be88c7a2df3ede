//! `nevermiss p4info` against p4c's P4Info of its own test programs (env-gated: needs a local
//! copy of p4c, `P4C_DIR`, as the conformance suites; nothing of p4c is in this repository).
//!
//! For every `testdata/p4_16_samples_outputs/X.p4.p4info.txtpb` whose program nevermiss
//! compiles, both P4Infos are compared at three levels: normalised (repeated fields sorted by
//! id, annotations dropped), with every annotation, and byte for byte in text format. The
//! report counts the programs equal at each level, the different ones (with the first
//! difference) and the unsupported ones; the test fails when a program crashes the builder or
//! when fewer programs are equal than `MIN_EQUAL_PERCENT` (normalised).

use nevermiss_p4rt::format::{p4info_text, parse_p4info_text};
use nevermiss_p4rt::p4info;
use nevermiss_p4rt::pb::p4::config::v1::P4Info;
use std::path::PathBuf;

/// Regression floors for the share of comparable programs whose P4Info equals p4c's:
/// normalised, and byte for byte (601 of 605 at both levels on 2026-11-28's p4c).
const MIN_EQUAL_PERCENT: f64 = 97.0;
const MIN_EXACT_PERCENT: f64 = 97.0;

fn normalise(p: &mut P4Info, annotations: bool) {
    fn pre(p: &mut Option<nevermiss_p4rt::pb::p4::config::v1::Preamble>, a: bool) {
        if let Some(p) = p {
            if !a {
                p.annotations.clear();
                p.structured_annotations.clear();
            }
        }
    }
    macro_rules! sort_by_id {
        ($v:expr) => {
            $v.sort_by_key(|x| x.preamble.as_ref().map_or(0, |p| p.id));
            for x in $v.iter_mut() {
                pre(&mut x.preamble, annotations);
            }
        };
    }
    sort_by_id!(p.tables);
    sort_by_id!(p.actions);
    sort_by_id!(p.action_profiles);
    sort_by_id!(p.counters);
    sort_by_id!(p.direct_counters);
    sort_by_id!(p.meters);
    sort_by_id!(p.direct_meters);
    sort_by_id!(p.controller_packet_metadata);
    sort_by_id!(p.value_sets);
    sort_by_id!(p.registers);
    sort_by_id!(p.digests);
    for t in &mut p.tables {
        t.match_fields.sort_by_key(|m| m.id);
        t.action_refs.sort_by_key(|a| a.id);
        t.direct_resource_ids.sort_unstable();
        if !annotations {
            for m in &mut t.match_fields {
                m.annotations.clear();
                m.structured_annotations.clear();
            }
            for a in &mut t.action_refs {
                a.annotations.clear();
                a.structured_annotations.clear();
            }
        }
    }
    for a in &mut p.actions {
        a.params.sort_by_key(|x| x.id);
        if !annotations {
            for x in &mut a.params {
                x.annotations.clear();
                x.structured_annotations.clear();
            }
        }
    }
    for ap in &mut p.action_profiles {
        ap.table_ids.sort_unstable();
    }
    if let Some(pk) = &mut p.pkg_info {
        if !annotations {
            pk.annotations.clear();
            pk.structured_annotations.clear();
        }
    }
    // An empty type_info is p4c's way of saying it looked at a type; it means nothing.
    if p.type_info
        .as_ref()
        .is_some_and(|t| *t == Default::default())
    {
        p.type_info = None;
    }
    if !annotations {
        if let Some(ti) = &mut p.type_info {
            for v in ti.new_types.values_mut() {
                v.annotations.clear();
                v.structured_annotations.clear();
            }
        }
    }
}

/// The repository's examples and test programs (`examples/`, `tests/p4/ok/`, `tests/stf/`)
/// against p4c's P4Info of them, made by p4c's `p4test` (env-gated: `P4TEST=<p4test binary>`),
/// byte for byte. PNA programs compile with nevermiss's own `pna.p4`; a program p4test rejects
/// (nevermiss extensions such as `@__ref` write-back, constructs p4c does not take) or
/// nevermiss does not run is reported and skipped.
#[test]
fn examples_p4info_equals_p4test() {
    let Some(p4test) = std::env::var_os("P4TEST").map(PathBuf::from) else {
        eprintln!("P4TEST not set: skipping the comparison of the examples with p4test's P4Info");
        return;
    };
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = std::env::temp_dir().join(format!("nevermiss-p4test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut compared = 0;
    let mut differ = Vec::new();
    let mut sources: Vec<PathBuf> = ["examples", "tests/p4/ok", "tests/stf"]
        .iter()
        .flat_map(|d| std::fs::read_dir(root.join(d)).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "p4"))
        .collect();
    sources.sort();
    for src in sources {
        let name = src.file_stem().unwrap().to_string_lossy().to_string();
        let Ok(compiled) = p4_front::driver::compile_file(&src, &Default::default()) else {
            eprintln!("SKIP {name}: nevermiss rejects it");
            continue;
        };
        let Ok(prog) = p4_ir::lower(&compiled) else {
            eprintln!("SKIP {name}: nevermiss does not run it");
            continue;
        };
        let Ok(built) = p4info::build(&prog) else {
            eprintln!("SKIP {name}: no P4Info");
            continue;
        };
        let ours = built.p4info;
        let arch = ours
            .pkg_info
            .as_ref()
            .map(|p| p.arch.clone())
            .unwrap_or_default();
        let out = dir.join(format!("{name}.txtpb"));
        let mut cmd = std::process::Command::new(&p4test);
        cmd.arg("--arch")
            .arg(&arch)
            .arg("--p4runtime-files")
            .arg(&out);
        if arch == "pna" {
            let d = match compiled.pna_dialect {
                p4_front::pna_dialect::PnaDialect::V07ThreeBlock => 3,
                p4_front::pna_dialect::PnaDialect::V06FourBlock => 4,
            };
            cmd.arg("-I")
                .arg(root.join("p4include"))
                .arg(format!("-DNEVERMISS_PNA_DIALECT={d}"));
        }
        let st = cmd.arg(&src).output().unwrap();
        if !st.status.success() {
            eprintln!(
                "SKIP {name}: p4test rejects it: {}",
                String::from_utf8_lossy(&st.stderr)
                    .lines()
                    .find(|l| l.contains("rror"))
                    .unwrap_or("")
            );
            continue;
        }
        let theirs = std::fs::read_to_string(&out).unwrap();
        compared += 1;
        let mut ours = p4info_text(&ours);
        if arch == "pna" {
            // The one deliberate difference (p4info.rs): nevermiss tells the controller that a
            // `pna_idle_timeout = NOTIFY_CONTROL` table notifies; p4c does not write it.
            ours = ours.replace("  idle_timeout_behavior: NOTIFY_CONTROL\n", "");
        }
        if ours != theirs {
            differ.push(format!("{name}: {}", first_difference(&ours, &theirs)));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!(
        "examples and test programs vs p4test: {compared} compared, {} differ {differ:?}",
        differ.len()
    );
    assert!(compared >= 25, "only {compared} programs compared");
    assert!(
        differ.is_empty(),
        "P4Info differs from p4test's for {differ:?}"
    );
}

/// How closely one P4Info matches p4c's.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Match {
    /// Differs even with annotations dropped and lists sorted by id.
    Differs,
    /// Equal with annotations dropped and lists sorted by id.
    Normalised,
    /// Also equal with every annotation (unstructured and structured), lists sorted by id.
    Annotations,
    /// The same bytes as p4c's file: objects in p4c's order too.
    Exact,
}

/// The first line where two texts differ.
fn first_difference(a: &str, b: &str) -> String {
    a.lines()
        .zip(b.lines())
        .enumerate()
        .find(|(_, (x, y))| x != y)
        .map(|(i, (x, y))| format!("line {}: ours `{}`, p4c `{}`", i + 1, x.trim(), y.trim()))
        .unwrap_or_else(|| "lengths differ".into())
}

/// Compares at every level; returns the closest level reached and, below exact, the first
/// difference at the next level.
fn compare(ours: &P4Info, theirs_text: &str) -> Result<(Match, Option<String>), String> {
    let theirs =
        parse_p4info_text(theirs_text).map_err(|e| format!("p4c's file does not parse: {e}"))?;
    let at = |annotations: bool| {
        let (mut a, mut b) = (ours.clone(), theirs.clone());
        normalise(&mut a, annotations);
        normalise(&mut b, annotations);
        (p4info_text(&a), p4info_text(&b))
    };
    let (a, b) = at(false);
    if a != b {
        return Ok((Match::Differs, Some(first_difference(&a, &b))));
    }
    let (a, b) = at(true);
    if a != b {
        return Ok((Match::Normalised, Some(first_difference(&a, &b))));
    }
    let a = p4info_text(ours);
    if a != theirs_text {
        return Ok((Match::Annotations, Some(first_difference(&a, theirs_text))));
    }
    Ok((Match::Exact, None))
}

/// Every `.p4info.txtpb` of p4c's samples whose program nevermiss compiles, compared at three
/// levels: normalised (annotations dropped, lists sorted by id), with annotations, and byte
/// for byte. `NEVERMISS_P4INFO_LEVEL=annotations|exact` lists the differences at that level
/// (default: normalised).
#[test]
fn p4info_equals_p4cs_where_p4c_has_one() {
    let Some(root) = std::env::var_os("P4C_DIR").map(PathBuf::from) else {
        eprintln!("P4C_DIR not set: skipping the comparison with p4c's P4Info files");
        return;
    };
    let shown = match std::env::var("NEVERMISS_P4INFO_LEVEL").as_deref() {
        Ok("annotations") => Match::Annotations,
        Ok("exact") => Match::Exact,
        _ => Match::Normalised,
    };
    let outs = root.join("testdata/p4_16_samples_outputs");
    let samples = root.join("testdata/p4_16_samples");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&outs)
        .expect("P4C_DIR/testdata/p4_16_samples_outputs")
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".p4.p4info.txtpb"))
        .collect();
    files.sort();
    let mut results: Vec<(String, Match, Option<String>)> = Vec::new();
    let mut unsupported = Vec::new();
    for f in &files {
        let name = f
            .file_name()
            .unwrap()
            .to_string_lossy()
            .replace(".p4info.txtpb", "");
        let src = samples.join(&name);
        let opts = p4_front::driver::Options {
            include_dirs: vec![samples.clone()],
            ..Default::default()
        };
        let compiled = match p4_front::driver::compile_file(&src, &opts) {
            Ok(c) => c,
            Err(_) => {
                unsupported.push(format!("{name}: front end"));
                continue;
            }
        };
        if matches!(compiled.checked.arch, p4_front::check::Arch::Unknown) {
            unsupported.push(format!("{name}: architecture"));
            continue;
        }
        let prog = match p4_ir::lower(&compiled) {
            Ok(p) => p,
            Err(d) => {
                unsupported.push(format!("{name}: lowering: {}", d.message));
                continue;
            }
        };
        let ours = match std::panic::catch_unwind(|| p4info::build(&prog)) {
            Ok(Ok(b)) => b.p4info,
            Ok(Err(e)) => {
                unsupported.push(format!("{name}: {e}"));
                continue;
            }
            Err(_) => panic!("{name}: the P4Info builder panicked"),
        };
        let text = std::fs::read_to_string(f).unwrap();
        match compare(&ours, &text) {
            Ok((m, diff)) => results.push((name, m, diff)),
            Err(e) => unsupported.push(format!("{name}: {e}")),
        }
    }
    for (name, m, diff) in &results {
        if *m < shown {
            eprintln!("DIFF {name}: {}", diff.as_deref().unwrap_or(""));
        }
    }
    for u in &unsupported {
        eprintln!("UNSUPPORTED {u}");
    }
    let compared = results.len();
    let at_least = |m: Match| results.iter().filter(|r| r.1 >= m).count();
    let equal = at_least(Match::Normalised);
    let pct = 100.0 * equal as f64 / compared.max(1) as f64;
    eprintln!(
        "p4info vs p4c: {} files, {compared} compared, {} unsupported; equal normalised {equal} \
         ({pct:.1}%), with annotations {}, byte for byte {}",
        files.len(),
        unsupported.len(),
        at_least(Match::Annotations),
        at_least(Match::Exact),
    );
    assert!(
        pct >= MIN_EQUAL_PERCENT,
        "only {pct:.1}% of the P4Infos equal p4c's (floor {MIN_EQUAL_PERCENT}%)"
    );
    let exact = 100.0 * at_least(Match::Exact) as f64 / compared.max(1) as f64;
    assert!(
        exact >= MIN_EXACT_PERCENT,
        "only {exact:.1}% of the P4Infos equal p4c's byte for byte (floor {MIN_EXACT_PERCENT}%)"
    );
}
