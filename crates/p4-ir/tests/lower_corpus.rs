//! Every valid program of the project's corpus lowers (or fails with a clear message naming
//! what is unsupported), and lowering never panics.

use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn corpus_programs_lower() {
    let dir = root().join("tests/p4/ok");
    let mut failures = Vec::new();
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        if path.extension().and_then(|x| x.to_str()) != Some("p4") {
            continue;
        }
        let Ok(c) = p4_front::driver::compile_file(&path, &Default::default()) else {
            continue;
        };
        if c.checked.main.is_none() {
            continue;
        }
        n += 1;
        match p4_ir::lower(&c) {
            Ok(p) => {
                let _ = p4_ir::dump::dump(&p);
            }
            Err(d) => failures.push(format!(
                "{}: {}",
                path.display(),
                p4_front::diag::render(&c.unit, &d)
            )),
        }
    }
    assert!(n > 10, "corpus not found");
    // Every program of the corpus uses only supported architectures and externs.
    let allowed: Vec<String> = failures
        .iter()
        .filter(|f| f.contains("not supported by the runtime"))
        .cloned()
        .collect();
    for a in &allowed {
        eprintln!("unsupported: {a}");
    }
    let real: Vec<&String> = failures.iter().filter(|f| !allowed.contains(f)).collect();
    assert!(
        real.is_empty(),
        "lowering failed:\n{}",
        real.iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}
