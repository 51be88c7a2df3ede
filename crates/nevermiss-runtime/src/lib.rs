//! nevermiss's P4 runtime: an interpreter for the IR of [`p4_ir`], the PNA and v1model
//! architectures, stateful tables from [`nevermiss_tables`] (PNA add-on-miss, data-plane
//! updates, expiry), the control-plane operations p4c's STF tests use, the run loop over
//! [`nevermiss_io`] ports, and the STF test runner.
//!
//! Design and semantics: `docs/runtime.md`.

//!
//! The crate is built in floors, each importing only the floors below it: `types`
//! vocabulary (`Config`, the control plane's entities and errors) → `state` (the [`Switch`]
//! and its owned sub-states) → [`engine`] (the interpreter and the compiled engine's helpers)
//! → [`arch`] (the PNA, v1model and PSA packet flows) → [`control`] (the typed control API) →
//! [`build`] (assembly of a switch) → [`worker`], [`workers`], [`run`], [`stf`].

pub mod arch;
pub mod bits;
pub mod build;
pub mod control;
pub mod engine;
pub mod handover;
pub mod queues;
pub mod run;
mod state;
pub mod stf;
mod types;
pub mod worker;
pub mod workers;

pub use engine::exec::TableOps;
pub use state::{Notification, PortStatus, Probe, Switch, SwitchStats};
pub use types::{Config, Engine};
pub use worker::Worker;

use std::path::Path;

/// Loads a program: a BMv2 JSON document (detected by content, [`bmv2_json::is_bmv2_json`]) or
/// P4 source, compiled and lowered. Errors render as `file:line:col: error: ...` for P4 and as
/// `file: error: $.json.path: ...` for BMv2 JSON.
pub fn load(path: &Path, opts: &p4_front::driver::Options) -> Result<p4_ir::Program, String> {
    if let Some(bytes) = bmv2_json_bytes(path) {
        return bmv2_json::load_bytes(&bytes)
            .map_err(|e| format!("{}: error: {e}", path.display()));
    }
    not_a_bmv2_json(path)?;
    let c = p4_front::driver::compile_file(path, opts).map_err(|f| f.render())?;
    p4_ir::lower(&c).map_err(|d| p4_front::diag::render(&c.unit, &d))
}

/// An error when `path` is a JSON object that is not a BMv2 program (rather than reading it as
/// P4 source).
pub fn not_a_bmv2_json(path: &Path) -> Result<(), String> {
    let head = std::fs::read(path).unwrap_or_default();
    match bmv2_json::missing_bmv2_keys(&head) {
        Some(missing) => Err(format!(
            "{}: error: a JSON document, but not a BMv2 program: it lacks {}",
            path.display(),
            missing.join(", ")
        )),
        None => Ok(()),
    }
}

/// The bytes of `path` when it is a BMv2 JSON document (a JSON object with BMv2's keys).
pub fn bmv2_json_bytes(path: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut f = std::fs::File::open(path).ok()?;
    let mut first = [0u8; 64];
    let n = f.read(&mut first).ok()?;
    // Cheap test first: JSON starts with `{` (after white space); P4 source does not.
    if first[..n].iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return None;
    }
    let bytes = std::fs::read(path).ok()?;
    bmv2_json::is_bmv2_json(&bytes).then_some(bytes)
}

/// Compiles, lowers and builds a switch.
pub fn build(
    path: &Path,
    opts: &p4_front::driver::Options,
    config: Config,
) -> Result<std::sync::Arc<Switch>, String> {
    let prog = load(path, opts)?;
    Switch::new(prog, config)
        .map(std::sync::Arc::new)
        .map_err(|e| format!("{}: error: {e}", path.display()))
}
