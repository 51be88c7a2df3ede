//! Compiles the P4Runtime protocol (messages and the gRPC service) from the FileDescriptorSet
//! that `scripts/setup.sh` writes from the PyPI packages `p4runtime` and
//! `googleapis-common-protos` (`scripts/p4runtime-fds.py`). No `.proto` file is in the
//! repository and no `protoc` is needed.

use prost::Message;
use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let fds_path = std::env::var_os("NEVERMISS_P4RUNTIME_FDS")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest.join("../../.venv/protos/p4runtime.fds"));
    println!("cargo:rerun-if-env-changed=NEVERMISS_P4RUNTIME_FDS");
    println!("cargo:rerun-if-changed={}", fds_path.display());
    let bytes = std::fs::read(&fds_path).unwrap_or_else(|e| {
        panic!(
            "nevermiss-p4rt needs the P4Runtime descriptors at {}: {e}\n\
             run scripts/setup.sh (it installs them from PyPI into .venv/protos), or set \
             NEVERMISS_P4RUNTIME_FDS to a FileDescriptorSet made by scripts/p4runtime-fds.py",
            fds_path.display()
        )
    });
    let fds = prost_types::FileDescriptorSet::decode(bytes.as_slice())
        .unwrap_or_else(|e| panic!("{}: not a FileDescriptorSet: {e}", fds_path.display()));
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
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
