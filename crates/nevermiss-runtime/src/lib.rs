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
pub use types::{BuildError, Config, Engine};
pub use worker::Worker;

use std::fmt;
use std::path::{Path, PathBuf};

/// Why a program could not be loaded or built. Renders as `file:line:col: error: ...` (with
/// the source line) for P4 and as `file: error: $.json.path: ...` for BMv2 JSON.
pub enum LoadError {
    /// A BMv2 JSON document that does not load.
    Bmv2Json {
        /// The file.
        path: PathBuf,
        /// Where in the document and why.
        error: bmv2_json::Error,
    },
    /// A JSON object that is not a BMv2 program.
    NotBmv2 {
        /// The file.
        path: PathBuf,
        /// The BMv2 keys it lacks.
        missing: Vec<&'static str>,
    },
    /// P4 source the front end refused (unreadable, preprocessing, parsing or checking).
    Front(Box<p4_front::driver::Failed>),
    /// P4 source that checked but could not be lowered to the IR.
    Lower {
        /// The preprocessed source, for the diagnostic's position.
        unit: Box<p4_front::source::Unit>,
        /// Why.
        diagnostic: Box<p4_front::diag::Diagnostic>,
    },
    /// The program loaded, but no switch could be built of it.
    Build {
        /// The file.
        path: PathBuf,
        /// Why.
        error: BuildError,
    },
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Bmv2Json { path, error } => write!(f, "{}: error: {error}", path.display()),
            LoadError::NotBmv2 { path, missing } => write!(
                f,
                "{}: error: a JSON document, but not a BMv2 program: it lacks {}",
                path.display(),
                missing.join(", ")
            ),
            LoadError::Front(failed) => f.write_str(&failed.render()),
            LoadError::Lower { unit, diagnostic } => {
                f.write_str(&p4_front::diag::render(unit, diagnostic))
            }
            LoadError::Build { path, error } => write!(f, "{}: error: {error}", path.display()),
        }
    }
}

impl fmt::Debug for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for LoadError {}

/// Loads a program: a BMv2 JSON document (detected by content, [`bmv2_json::is_bmv2_json`]) or
/// P4 source, compiled and lowered.
pub fn load(path: &Path, opts: &p4_front::driver::Options) -> Result<p4_ir::Program, LoadError> {
    if let Some(bytes) = bmv2_json_bytes(path) {
        return bmv2_json::load_bytes(&bytes).map_err(|error| LoadError::Bmv2Json {
            path: path.to_path_buf(),
            error,
        });
    }
    not_a_bmv2_json(path)?;
    let c = p4_front::driver::compile_file(path, opts).map_err(LoadError::Front)?;
    match p4_ir::lower(&c) {
        Ok(prog) => Ok(prog),
        Err(diagnostic) => Err(LoadError::Lower {
            unit: Box::new(c.unit),
            diagnostic: Box::new(diagnostic),
        }),
    }
}

/// An error when `path` is a JSON object that is not a BMv2 program (rather than reading it as
/// P4 source).
pub fn not_a_bmv2_json(path: &Path) -> Result<(), LoadError> {
    let head = std::fs::read(path).unwrap_or_default();
    match bmv2_json::missing_bmv2_keys(&head) {
        Some(missing) => Err(LoadError::NotBmv2 {
            path: path.to_path_buf(),
            missing,
        }),
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
) -> Result<std::sync::Arc<Switch>, LoadError> {
    let prog = load(path, opts)?;
    Switch::new(prog, config)
        .map(std::sync::Arc::new)
        .map_err(|error| LoadError::Build {
            path: path.to_path_buf(),
            error,
        })
}
