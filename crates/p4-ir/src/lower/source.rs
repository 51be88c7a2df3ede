//! P4 source to IR in one call: p4-front's driver (read, preprocess, parse, check), then
//! [`crate::lower()`]. For the tools that take a P4 file: the CLI, the benchmarks, tests.

use crate::ir::Program;
use p4_front::diag::Diagnostic;
use p4_front::driver::{Failed, Options};
use p4_front::source::Unit;
use std::fmt;
use std::path::Path;

/// Why P4 source did not become IR. Renders every diagnostic as `file:line:col: error:
/// message` with the source line and an underline ([`p4_front::diag::render`]).
pub enum SourceError {
    /// The front end refused it: unreadable, or a preprocessing, parse or check error.
    Front(Box<Failed>),
    /// It passed the front end but could not be lowered.
    Lower {
        /// The preprocessed source, which the diagnostic's position refers to.
        unit: Box<Unit>,
        /// Why.
        diagnostic: Box<Diagnostic>,
    },
}

impl fmt::Display for SourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SourceError::Front(failed) => f.write_str(&failed.render()),
            SourceError::Lower { unit, diagnostic } => {
                f.write_str(&p4_front::diag::render(unit, diagnostic))
            }
        }
    }
}

impl fmt::Debug for SourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for SourceError {}

/// Compiles the P4 file at `path` with `opts` and lowers it.
pub fn compile_file(path: &Path, opts: &Options) -> Result<Program, SourceError> {
    let c = p4_front::driver::compile_file(path, opts).map_err(SourceError::Front)?;
    match crate::lower(&c) {
        Ok(prog) => Ok(prog),
        Err(diagnostic) => Err(SourceError::Lower {
            unit: Box::new(c.unit),
            diagnostic: Box::new(diagnostic),
        }),
    }
}
