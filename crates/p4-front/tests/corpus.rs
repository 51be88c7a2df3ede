//! The project's own corpus: every `tests/p4/ok/*.p4` must pass the front end; every `tests/p4/bad/*.p4`
//! must fail with the diagnostic its header names, and its rendered diagnostics must equal the snapshot
//! `tests/p4/bad/<name>.stderr` (run with `UPDATE_SNAPSHOTS=1` to rewrite the snapshots after a deliberate change).
//!
//! A bad program starts with comment lines:
//! `// reason: <why it must fail>` and `// expect: <line>:<col>: <substring of the message>`.

use p4_front::driver::{compile_file, Options};
use std::path::{Path, PathBuf};

/// Runs from the repository root, so that programs are named `tests/p4/...` in diagnostics and
/// snapshots do not depend on where the checkout is. Both tests of this binary agree on it.
fn corpus_dir(kind: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    std::env::set_current_dir(&root).expect("cannot enter the repository root");
    PathBuf::from("tests/p4").join(kind)
}

fn programs(kind: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(corpus_dir(kind))
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.retain(|p| p.extension().is_some_and(|x| x == "p4"));
    v.sort();
    v
}

#[test]
fn ok_programs_pass() {
    let files = programs("ok");
    assert!(!files.is_empty(), "no programs in tests/p4/ok");
    let mut failures = Vec::new();
    for path in &files {
        if let Err(f) = compile_file(path, &Options::default()) {
            failures.push(f.render());
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} ok programs were rejected:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}

/// The `// expect: L:C: text` header of a bad program.
fn expectation(text: &str) -> Option<(u32, u32, String)> {
    let line = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("// expect:"))?
        .trim();
    let mut parts = line.splitn(3, ':');
    let l = parts.next()?.trim().parse().ok()?;
    let c = parts.next()?.trim().parse().ok()?;
    Some((l, c, parts.next()?.trim().to_string()))
}

#[test]
fn bad_programs_fail_with_their_diagnostic() {
    let files = programs("bad");
    assert!(!files.is_empty(), "no programs in tests/p4/bad");
    let update = std::env::var_os("UPDATE_SNAPSHOTS").is_some();
    let mut failures = Vec::new();
    for path in &files {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).unwrap();
        let Some((line, col, needle)) = expectation(&text) else {
            failures.push(format!("{name}: no `// expect: L:C: message` header"));
            continue;
        };
        let rendered = match compile_file(path, &Options::default()) {
            Ok(_) => {
                failures.push(format!(
                    "{name}: accepted, expected an error at {line}:{col}: {needle}"
                ));
                continue;
            }
            // Paths of the checkout (e.g. the include path in a note) become `<root>`.
            Err(f) => {
                let root = std::env::current_dir().unwrap().display().to_string();
                f.render().replace(&root, "<root>")
            }
        };
        let want = format!("{name}:{line}:{col}: error: ");
        let found = rendered
            .lines()
            .any(|l| l.starts_with(&want) && l.contains(&needle));
        if !found {
            failures.push(format!(
                "{name}: expected `{want}...{needle}...`, got:\n{rendered}"
            ));
            continue;
        }
        let snapshot = path.with_extension("stderr");
        if update {
            std::fs::write(&snapshot, &rendered).unwrap();
        } else {
            match std::fs::read_to_string(&snapshot) {
                Ok(s) if s == rendered => {}
                Ok(s) => failures.push(format!(
                    "{name}: diagnostics differ from {}:\n--- snapshot\n{s}--- now\n{rendered}",
                    snapshot.display()
                )),
                Err(_) => failures.push(format!(
                    "{name}: no snapshot {} (run with UPDATE_SNAPSHOTS=1)",
                    snapshot.display()
                )),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} bad programs failed:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n\n")
    );
}
