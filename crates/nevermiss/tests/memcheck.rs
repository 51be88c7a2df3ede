//! The compiled engine under valgrind's memcheck: every example's and every `tests/stf/`
//! program's STF test, and batches of generated traffic through the add-on-miss example, run
//! with no invalid read or write, no use of uninitialised memory (generated code works through
//! raw pointers into the worker's state, which the differential tests cannot see go wrong when
//! the stale memory still holds the right values). Needs valgrind (`scripts/setup.sh` installs
//! it); skipped with a line saying so otherwise, a failure under `NEVERMISS_REQUIRE_CLIENTS`
//! (`scripts/test.sh`).

use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn valgrind() -> bool {
    let ok = Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("NEVERMISS_REQUIRE_CLIENTS").is_none(),
            "valgrind is missing (scripts/setup.sh installs it)"
        );
        eprintln!("skipped: valgrind is not installed");
    }
    ok
}

/// `nevermiss ARGS` under memcheck: exit 0 and no error (memcheck's errors exit 99).
fn memcheck(args: &[String]) -> Result<(), String> {
    let o = Command::new("valgrind")
        .args(["-q", "--error-exitcode=99", "--leak-check=no"])
        .arg(env!("CARGO_BIN_EXE_nevermiss"))
        .args(args)
        .current_dir(root())
        .output()
        .map_err(|e| e.to_string())?;
    if o.status.success() {
        Ok(())
    } else {
        Err(format!(
            "nevermiss {}: {}\n{}{}",
            args.join(" "),
            o.status,
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ))
    }
}

#[test]
fn generated_code_stays_inside_its_memory() {
    if !valgrind() {
        return;
    }
    let mut jobs: Vec<Vec<String>> = Vec::new();
    for dir in ["examples", "tests/stf"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                p.extension().is_some_and(|x| x == "p4") && p.with_extension("stf").exists()
            })
            .collect();
        files.sort();
        for p in files {
            jobs.push(vec![
                "stf".into(),
                p.display().to_string(),
                p.with_extension("stf").display().to_string(),
            ]);
        }
    }
    assert!(jobs.len() >= 12, "{jobs:?}");
    // Batches through the prefetching path, inserts and hits; and one core's packets one by one.
    for batch in ["32", "1"] {
        jobs.push(
            [
                "run",
                "examples/pna-add-on-miss.p4",
                "--batch",
                batch,
                "--port",
                "0=gen:two-phase,m=64,r=4,count=600,field=ipv4.dst",
            ]
            .map(String::from)
            .to_vec(),
        );
    }
    // Two at a time (the machine has two cores).
    let failures: Vec<String> = jobs
        .chunks(2)
        .flat_map(|pair| {
            let handles: Vec<_> = pair
                .iter()
                .cloned()
                .map(|args| std::thread::spawn(move || memcheck(&args)))
                .collect();
            handles
                .into_iter()
                .filter_map(|h| h.join().unwrap().err())
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
