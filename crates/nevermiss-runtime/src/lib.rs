//! nevermiss's P4 runtime: an interpreter for the IR of [`p4_ir`], the PNA and v1model
//! architectures, stateful tables from [`nevermiss_tables`] (PNA add-on-miss, data-plane
//! updates, expiry), the control-plane operations p4c's STF tests use, the run loop over
//! [`nevermiss_io`] ports, and the STF test runner.
//!
//! Design and semantics: `docs/runtime.md`.

pub mod arch;
pub mod bits;
pub mod build;
pub mod control;
pub mod exec;
pub mod handover;
mod native;
mod state;
mod types;
pub mod worker;
pub mod workers;

pub use state::{Notification, PortStatus, Probe, Switch, SwitchStats};
pub use types::{Config, Engine};
pub use worker::Worker;
pub mod run;
pub mod stf;

use std::path::Path;

/// Compiles and lowers a P4 program, rendering any diagnostic as `file:line:col: error: ...`.
pub fn load(path: &Path, opts: &p4_front::driver::Options) -> Result<p4_ir::Program, String> {
    let c = p4_front::driver::compile_file(path, opts).map_err(|f| f.render())?;
    p4_ir::lower(&c).map_err(|d| p4_front::diag::render(&c.unit, &d))
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
