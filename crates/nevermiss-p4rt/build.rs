//! Compiles the P4Runtime protocol (messages and the gRPC service) from a FileDescriptorSet of
//! the PyPI packages `p4runtime` and `googleapis-common-protos`, pinned in
//! `p4runtime-pins.txt`. No `.proto` file is in the repository and no `protoc` is needed.
//!
//! Where the descriptors come from, first found:
//! 1. `NEVERMISS_P4RUNTIME_FDS`: a FileDescriptorSet made by `scripts/p4runtime-fds.py` (for
//!    builds without network, e.g. a distribution's);
//! 2. `.venv/protos/p4runtime.fds`, which `scripts/setup.sh` makes, when its pins are these;
//! 3. made here: a virtualenv in `OUT_DIR` with the pinned packages from PyPI (`python3 -m
//!    venv`, `pip`), then `scripts/p4runtime-fds.py` — so `cargo build` works on a fresh clone.

use prost::Message;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The pinned requirements (comments and blank lines dropped), one string as `setup.sh`
/// records them in `.venv/protos/pins`.
fn pins(manifest: &Path) -> Vec<String> {
    let path = manifest.join("p4runtime-pins.txt");
    println!("cargo:rerun-if-changed={}", path.display());
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect()
}

fn run(cmd: &mut Command, what: &str) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("nevermiss-p4rt: {what}: cannot run {cmd:?}: {e}"));
    if !out.status.success() {
        panic!(
            "nevermiss-p4rt: {what} failed ({}):\n{}{}\n\
             The P4Runtime descriptors come from PyPI (p4runtime-pins.txt). Without network, \
             set NEVERMISS_P4RUNTIME_FDS to a FileDescriptorSet made by scripts/p4runtime-fds.py.",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Makes a virtualenv with the pinned packages in `dir` and writes the descriptors there.
fn make_fds(root: &Path, dir: &Path, pins: &[String]) -> PathBuf {
    let fds = dir.join("p4runtime.fds");
    let stamp = dir.join("pins");
    if fds.is_file() && std::fs::read_to_string(&stamp).ok().as_deref() == Some(&pins.join(" ")) {
        return fds;
    }
    let _ = std::fs::remove_dir_all(dir);
    let python = std::env::var("PYTHON3").unwrap_or_else(|_| "python3".into());
    run(
        Command::new(&python).args(["-m", "venv"]).arg(dir),
        "making a virtualenv for the P4Runtime descriptors",
    );
    run(
        Command::new(dir.join("bin/pip"))
            .args(["install", "-q", "--disable-pip-version-check", "--no-deps"])
            .args(pins),
        "installing the P4Runtime packages",
    );
    run(
        Command::new(dir.join("bin/python"))
            .arg(root.join("scripts/p4runtime-fds.py"))
            .arg(&fds),
        "writing the P4Runtime descriptors",
    );
    std::fs::write(&stamp, pins.join(" ")).unwrap();
    fds
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let root = manifest.join("../..");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let pins = pins(&manifest);
    println!("cargo:rerun-if-env-changed=NEVERMISS_P4RUNTIME_FDS");
    println!("cargo:rerun-if-changed=../../scripts/p4runtime-fds.py");
    let setup = root.join(".venv/protos");
    let fds_path = match std::env::var_os("NEVERMISS_P4RUNTIME_FDS") {
        Some(p) => PathBuf::from(p),
        None if setup.join("p4runtime.fds").is_file()
            && std::fs::read_to_string(setup.join("pins"))
                .is_ok_and(|p| p.trim() == pins.join(" ")) =>
        {
            setup.join("p4runtime.fds")
        }
        None => make_fds(&root, &out.join("protos"), &pins),
    };
    println!("cargo:rerun-if-changed={}", fds_path.display());
    let bytes = std::fs::read(&fds_path)
        .unwrap_or_else(|e| panic!("nevermiss-p4rt: {}: {e}", fds_path.display()));
    let fds = prost_types::FileDescriptorSet::decode(bytes.as_slice())
        .unwrap_or_else(|e| panic!("{}: not a FileDescriptorSet: {e}", fds_path.display()));
    std::fs::write(out.join("p4runtime.fds"), &bytes).unwrap();
    tonic_prost_build::configure()
        .build_server(true)
        .build_client(true)
        // Bytestrings as `Bytes`: decoded from a request's buffer they are slices of it
        // (`codec.rs`), not one allocation and copy each.
        .bytes(".p4.v1")
        // The large entities boxed: an `Update` is then 96 bytes, not 416, and decoding a
        // Write does not move every table entry through several copies.
        .boxed(".p4.v1.Entity.entity.table_entry")
        .boxed(".p4.v1.Entity.entity.direct_meter_entry")
        .boxed(".p4.v1.Entity.entity.direct_counter_entry")
        .boxed(".p4.v1.Entity.entity.meter_entry")
        .codec_path("crate::codec::Codec")
        .compile_fds(fds)
        .unwrap_or_else(|e| panic!("compiling the P4Runtime protos: {e}"));
}
