//! What `nevermiss --version` says about the build: the commit and whether the work tree had
//! changes, rustc, the profile and target, the cargo features, and the engines (Cranelift's
//! version from Cargo.lock). Built outside a git checkout (a source tarball), the commit is
//! `NEVERMISS_COMMIT` if the builder sets it, else "unknown"; nothing here fails a build.

use std::path::{Path, PathBuf};
use std::process::Command;

fn git(root: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// `full hash`, `(dirty)` or not, and the commit date; `None` outside a git checkout.
fn commit(root: &Path) -> Option<(String, bool, String)> {
    let hash = git(root, &["rev-parse", "HEAD"])?;
    // Tracked files that differ from the commit (untracked files do not change the build).
    let dirty =
        git(root, &["status", "--porcelain", "--untracked-files=no"]).is_none_or(|s| !s.is_empty());
    let date = git(root, &["log", "-1", "--format=%cs"]).unwrap_or_default();
    Some((hash, dirty, date))
}

fn cranelift_version(root: &Path) -> String {
    let lock = std::fs::read_to_string(root.join("Cargo.lock")).unwrap_or_default();
    let mut lines = lock.lines();
    while let Some(l) = lines.next() {
        if l.trim() == "name = \"cranelift-codegen\"" {
            if let Some(v) = lines
                .next()
                .and_then(|v| v.trim().strip_prefix("version = "))
            {
                return v.trim_matches('"').to_string();
            }
        }
    }
    "unknown".into()
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let root = manifest.join("../..");
    let version = std::env::var("CARGO_PKG_VERSION").unwrap();
    let commit_line = match commit(&root) {
        Some((hash, dirty, date)) => format!(
            "{hash}{} ({date})",
            if dirty {
                ", dirty: the work tree differed from it"
            } else {
                ""
            }
        ),
        None => match std::env::var("NEVERMISS_COMMIT") {
            Ok(c) if !c.trim().is_empty() => format!("{} (given by NEVERMISS_COMMIT)", c.trim()),
            _ => "unknown (built outside a git checkout)".into(),
        },
    };
    let short = match commit(&root) {
        Some((hash, dirty, _)) => format!("{}{}", &hash[..12], if dirty { "-dirty" } else { "" }),
        None => "unknown commit".into(),
    };
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let rustc_version = Command::new(&rustc)
        .arg("--version")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into());
    let mut features: Vec<String> = std::env::vars()
        .filter_map(|(k, _)| {
            k.strip_prefix("CARGO_FEATURE_")
                .map(|f| f.to_lowercase().replace('_', "-"))
        })
        .filter(|f| f != "default")
        .collect();
    features.sort();
    let features = if features.is_empty() {
        "none".to_string()
    } else {
        features.join(", ")
    };
    let profile = std::env::var("PROFILE").unwrap_or_default();
    let target = std::env::var("TARGET").unwrap_or_default();
    let long = format!(
        "{version}\n\
         commit: {commit_line}\n\
         rustc: {rustc_version}\n\
         profile: {profile}, target: {target}\n\
         features: {features}\n\
         engines: jit (Cranelift {}; the default), interp",
        cranelift_version(&root)
    );
    println!(
        "cargo:rustc-env=NEVERMISS_LONG_VERSION={}",
        long.replace('\n', "\\n")
    );
    println!("cargo:rustc-env=NEVERMISS_SHORT_VERSION={version} ({short}, {rustc_version})");
    // Again when the commit, the index or any tracked file changes (cargo scans the folders),
    // or the fallback's inputs do.
    if let Some(dir) = git(&root, &["rev-parse", "--absolute-git-dir"]) {
        let dir = PathBuf::from(dir);
        println!("cargo:rerun-if-changed={}", dir.join("HEAD").display());
        println!("cargo:rerun-if-changed={}", dir.join("index").display());
        if let Some(common) = git(&root, &["rev-parse", "--git-common-dir"]) {
            let common = root.join(common);
            println!("cargo:rerun-if-changed={}", common.join("refs").display());
            println!(
                "cargo:rerun-if-changed={}",
                common.join("packed-refs").display()
            );
        }
    }
    for d in [
        "crates",
        "p4include",
        "examples",
        "scripts",
        "lab/src",
        "docs",
        "tests",
        "data",
        "Cargo.toml",
        "Cargo.lock",
        "README.md",
        "ARCHITECTURE.md",
    ] {
        println!("cargo:rerun-if-changed={}", root.join(d).display());
    }
    println!("cargo:rerun-if-env-changed=NEVERMISS_COMMIT");
    println!("cargo:rerun-if-env-changed=GIT_DIR");
}
