//! From a file to a checked program: the one path every command takes
//! (preprocess → parse → check), with the PNA dialect chosen before preprocessing.

use crate::ast::Program;
use crate::check::{self, Arch, Checked};
use crate::diag::{self, Diagnostic};
use crate::pna_dialect::{self, PnaDialect, DIALECT_MACRO};
use crate::preprocess;
use crate::source::Unit;
use std::path::{Path, PathBuf};

/// The architecture a user asks for with `--arch`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ArchChoice {
    /// Whatever the program's `main` package instantiates.
    #[default]
    Auto,
    /// v1model (`V1Switch`).
    V1Model,
    /// PSA (`PSA_Switch`).
    Psa,
    /// PNA (`PNA_NIC`, either dialect).
    Pna,
}

/// How to compile a file: include directories, macro definitions and the architecture.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// `-I` directories, searched after the project's own `p4include/`.
    pub include_dirs: Vec<PathBuf>,
    /// `-D NAME=VALUE` definitions.
    pub defines: Vec<(String, String)>,
    /// The architecture asked for (`--arch`); a program for another one is an error.
    pub arch: ArchChoice,
}

/// A program that passed every phase.
pub struct Compiled {
    /// The preprocessed text and its map back to files, lines and columns.
    pub unit: Unit,
    /// The parsed tree.
    pub program: Program,
    /// What the checker found out: types, resolved names, values, tables, `main`.
    pub checked: Checked,
    /// Which `pna.p4` dialect the program was compiled against ([`crate::pna_dialect`]).
    pub pna_dialect: PnaDialect,
}

/// What a program without a `main` package instance gets from every command that runs it
/// (`check` included: such a program type-checks, as in p4c's front end, but no target can run
/// it; P4_16 spec, "Example architecture program": a program instantiates its architecture's
/// top-level package as `main`).
pub const NO_MAIN: &str =
    "the program has no `main` package instance: nothing for an architecture to run";

impl Compiled {
    /// `Err` (a diagnostic without a position, which renders with the file's name) when the
    /// program has no `main` package instance.
    pub fn require_main(&self) -> Result<(), Diagnostic> {
        match self.checked.main {
            Some(_) => Ok(()),
            None => Err(Diagnostic::error_global(NO_MAIN)),
        }
    }
}

/// A program that failed: the diagnostics of the first failing phase (all of them for the checker).
pub struct Failed {
    /// The preprocessed unit, when preprocessing got that far; needed to render positions.
    pub unit: Option<Unit>,
    /// The first failing phase's diagnostics (every one the checker found).
    pub diagnostics: Vec<Diagnostic>,
}

impl Failed {
    /// Every diagnostic rendered as `file:line:col: error: message` with the source line and an underline.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for d in &self.diagnostics {
            match &self.unit {
                Some(u) => out.push_str(&diag::render(u, d)),
                None => out.push_str(&diag::render(&Unit::from_string("<input>", ""), d)),
            }
        }
        out
    }
}

/// Reads, preprocesses, parses and checks `path`.
pub fn compile_file(path: &Path, opts: &Options) -> Result<Compiled, Box<Failed>> {
    let bytes = std::fs::read(path).map_err(|e| {
        Box::new(Failed {
            unit: None,
            diagnostics: vec![Diagnostic::error_global(format!("{}: {e}", path.display()))],
        })
    })?;
    let text = String::from_utf8_lossy(&bytes);
    let (pp, dialect) = preprocess_options(&text, opts);
    let unit = preprocess::preprocess(path, &pp).map_err(|d| Failed {
        unit: None,
        diagnostics: vec![d],
    })?;
    finish(unit, dialect, opts)
}

/// Like [`compile_file`] for a program given as text (`name` is what diagnostics call the file).
pub fn compile_str(name: &str, text: &str, opts: &Options) -> Result<Compiled, Box<Failed>> {
    let (pp, dialect) = preprocess_options(text, opts);
    let unit = preprocess::preprocess_str(name, text, &pp).map_err(|d| Failed {
        unit: None,
        diagnostics: vec![d],
    })?;
    finish(unit, dialect, opts)
}

/// The preprocessor options for a program: the user's, plus the PNA dialect macro unless the user set it.
fn preprocess_options(text: &str, opts: &Options) -> (preprocess::Options, PnaDialect) {
    let user_choice = opts
        .defines
        .iter()
        .find(|(n, _)| n == DIALECT_MACRO)
        .map(|(_, v)| v.trim());
    let dialect = match user_choice {
        Some("3") => PnaDialect::V07ThreeBlock,
        Some(_) => PnaDialect::V06FourBlock,
        None => pna_dialect::detect(text),
    };
    let mut defines = opts.defines.clone();
    if user_choice.is_none() {
        defines.push((
            DIALECT_MACRO.to_string(),
            pna_dialect::macro_value(dialect).to_string(),
        ));
    }
    (
        preprocess::Options {
            include_dirs: opts.include_dirs.clone(),
            defines,
        },
        dialect,
    )
}

fn finish(unit: Unit, pna_dialect: PnaDialect, opts: &Options) -> Result<Compiled, Box<Failed>> {
    let fail = |unit, diagnostics| {
        Box::new(Failed {
            unit: Some(unit),
            diagnostics,
        })
    };
    let program = match crate::parser::parse(&unit) {
        Ok(p) => p,
        Err(d) => return Err(fail(unit, vec![d])),
    };
    let checked = match check::check(&program) {
        Ok(c) => c,
        Err(diagnostics) => return Err(fail(unit, diagnostics)),
    };
    if let Some(d) = arch_mismatch(opts.arch, &checked.arch) {
        return Err(fail(unit, vec![d]));
    }
    Ok(Compiled {
        unit,
        program,
        checked,
        pna_dialect,
    })
}

/// An error when the user asked for one architecture and the program's `main` is another.
fn arch_mismatch(choice: ArchChoice, found: &Arch) -> Option<Diagnostic> {
    let ok = match choice {
        ArchChoice::Auto => true,
        ArchChoice::V1Model => matches!(found, Arch::V1Model),
        ArchChoice::Psa => matches!(found, Arch::Psa),
        ArchChoice::Pna => matches!(found, Arch::Pna(_)),
    };
    let asked = match choice {
        ArchChoice::Auto => "auto",
        ArchChoice::V1Model => "v1model",
        ArchChoice::Psa => "psa",
        ArchChoice::Pna => "pna",
    };
    let found = match found {
        Arch::V1Model => "v1model (V1Switch)",
        Arch::Psa => "psa (PSA_Switch)",
        Arch::Pna(PnaDialect::V06FourBlock) => "pna (PNA_NIC, four-block pre-v0.7 dialect)",
        Arch::Pna(PnaDialect::V07ThreeBlock) => "pna (PNA_NIC, three-block v0.7+ dialect)",
        Arch::Unknown => "not one nevermiss knows (or there is no `main`)",
    };
    (!ok).then(|| {
        Diagnostic::error_global(format!(
            "--arch {asked}: the program's main package is {found}"
        ))
    })
}
