//! `nevermiss check prog.p4 [-I dir] [-D NAME=VAL] [--arch ...] [--dump ...]`
//!
//! Prints nothing and exits 0 on a valid program; prints every diagnostic to stderr and exits 1
//! on an invalid one (a program without a `main` package instance is one: nothing could run
//! it); exits 2 on bad usage or a path that is not a regular file (`program.rs`). A BMv2 JSON
//! program (detected by content) is loaded by the second front end (`bmv2-json`); only
//! `--dump ir` applies to it.

use clap::{Args, ValueEnum};
use p4_front::driver::{self, ArchChoice, Options};
use std::path::PathBuf;

#[derive(Args)]
pub struct CheckArgs {
    /// The program: P4_16 source, or the BMv2 JSON p4c-bm2-ss / p4c-bm2-psa wrote.
    pub file: PathBuf,
    /// Add a directory to the include path (searched after nevermiss's own p4include/).
    #[arg(short = 'I', value_name = "DIR")]
    pub include: Vec<PathBuf>,
    /// Define a preprocessor macro: NAME or NAME=VALUE.
    #[arg(short = 'D', value_name = "NAME[=VAL]")]
    pub define: Vec<String>,
    /// The architecture the program must be written for.
    #[arg(long, value_enum, default_value_t = ArchArg::Auto)]
    pub arch: ArchArg,
    /// Print an intermediate form to stdout (may be repeated).
    #[arg(long, value_enum)]
    pub dump: Vec<Dump>,
    /// Print the lowered IR (same as `--dump ir`).
    #[arg(long)]
    pub dump_ir: bool,
    /// The file is a library of declarations: no `main` package instance is needed (as p4c's
    /// front end accepts); without it a program must have one, since nothing could run it.
    #[arg(long)]
    pub library: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ArchArg {
    Auto,
    V1model,
    Psa,
    Pna,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Dump {
    /// The preprocessed source.
    Preprocessed,
    /// One token per line.
    Tokens,
    /// The parsed program, printed back as P4.
    Ast,
    /// Tables, actions, externs, blocks and the main package.
    Summary,
    /// The lowered program the runtime executes (every field at an offset and width).
    Ir,
}

/// Splits `NAME=VAL` (or `NAME`, meaning `NAME=1`).
pub fn parse_define(s: &str) -> Result<(String, String), String> {
    let (name, val) = s.split_once('=').unwrap_or((s, "1"));
    let valid = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if valid {
        Ok((name.to_string(), val.to_string()))
    } else {
        Err(format!("-D {s}: not a macro name"))
    }
}

/// The front-end options from the shared flags (also used by `run` and `stf`).
pub fn options(include: &[PathBuf], define: &[String], arch: ArchArg) -> Result<Options, String> {
    let defines = define
        .iter()
        .map(|d| parse_define(d))
        .collect::<Result<Vec<_>, _>>()?;
    let arch = match arch {
        ArchArg::Auto => ArchChoice::Auto,
        ArchArg::V1model => ArchChoice::V1Model,
        ArchArg::Psa => ArchChoice::Psa,
        ArchArg::Pna => ArchChoice::Pna,
    };
    Ok(Options {
        include_dirs: include.to_vec(),
        defines,
        arch,
    })
}

pub fn run(args: CheckArgs) -> u8 {
    let opts = match options(&args.include, &args.define, args.arch) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    if let Err(e) = crate::program::readable(&args.file) {
        eprintln!("error: {e}");
        return 2;
    }
    if let Some(bytes) = crate::program::bmv2_json_bytes(&args.file) {
        return check_bmv2_json(&args, &bytes);
    }
    if let Err(e) = crate::program::not_a_bmv2_json(&args.file) {
        eprintln!("{e}");
        return 1;
    }
    match driver::compile_file(&args.file, &opts) {
        Ok(c) => {
            for w in c.unit.warnings().iter().chain(&c.checked.warnings) {
                eprint!("{}", p4_front::diag::render(&c.unit, w));
            }
            let ir_flag = args.dump_ir.then_some(Dump::Ir);
            for d in args.dump.iter().chain(ir_flag.iter()) {
                match d {
                    Dump::Preprocessed => out!("{}", c.unit.text),
                    Dump::Tokens => match p4_front::lexer::lex(&c.unit.text) {
                        Ok(tokens) => {
                            out!("{}", p4_front::parser::dump_tokens(&tokens, &c.unit.text))
                        }
                        Err(e) => eprint!("{}", p4_front::diag::render(&c.unit, &e)),
                    },
                    Dump::Ast => out!("{}", p4_front::printer::print_program(&c.program)),
                    Dump::Summary => out!("{}", p4_front::check::summary(&c.program, &c.checked)),
                    Dump::Ir => match p4_ir::lower(&c) {
                        Ok(ir) => out!("{}", p4_ir::dump::dump(&ir)),
                        Err(e) => {
                            eprint!("{}", p4_front::diag::render(&c.unit, &e));
                            return 1;
                        }
                    },
                }
            }
            // Valid P4, but nothing `run`, `serve` or `stf` could run: the same error they give
            // (unless the file is meant as a library).
            if !args.library {
                if let Err(d) = c.require_main() {
                    eprint!("{}", p4_front::diag::render(&c.unit, &d));
                    return 1;
                }
            }
            0
        }
        Err(failed) => {
            eprint!("{}", failed.render());
            1
        }
    }
}

/// `check` of a BMv2 JSON program: it loads (every construct supported), and `--dump ir` prints
/// the IR; the source dumps do not apply.
fn check_bmv2_json(args: &CheckArgs, bytes: &[u8]) -> u8 {
    let ir_flag = args.dump_ir.then_some(Dump::Ir);
    if args.dump.iter().any(|d| *d != Dump::Ir) {
        eprintln!(
            "error: {}: a BMv2 JSON program has no P4 source; only --dump ir applies",
            args.file.display()
        );
        return 2;
    }
    match bmv2_json::load_bytes(bytes) {
        Ok(ir) => {
            if args.dump.iter().chain(ir_flag.iter()).next().is_some() {
                out!("{}", p4_ir::dump::dump(&ir));
            }
            0
        }
        Err(e) => {
            eprintln!("{}: error: {e}", args.file.display());
            1
        }
    }
}
