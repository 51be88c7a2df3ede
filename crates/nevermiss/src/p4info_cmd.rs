//! `nevermiss p4info PROGRAM [-o FILE] [--format text|binary|json] [--device-config FILE]`: the
//! P4Info of a program (P4 source or BMv2 JSON), as p4c would write it (names, aliases and ids
//! allocated as p4c allocates them), and the device config `SetForwardingPipelineConfig`
//! carries to load it (docs/p4runtime.md; for BMv2 JSON, the JSON itself).
//!
//! Exit codes: 0 written; 2 bad usage, an unreadable or invalid program, an unwritable output.

use crate::flags::SourceArgs;
use clap::{Args, ValueEnum};
use nevermiss_p4rt::{device_config, format, p4info};
use prost::Message;
use std::path::PathBuf;

#[derive(Args)]
pub struct P4InfoArgs {
    /// The program: P4_16 source, or BMv2 JSON (as p4c-bm2-ss writes it).
    pub program: PathBuf,
    #[command(flatten)]
    pub source: SourceArgs,
    /// Write the P4Info here instead of to standard output.
    #[arg(short = 'o', long = "out", value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Protobuf text format (as p4c's .p4info.txtpb), binary, or JSON.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Also write the device config for SetForwardingPipelineConfig here.
    #[arg(long, value_name = "FILE")]
    pub device_config: Option<PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Binary,
    Json,
}

pub fn run(args: P4InfoArgs) -> u8 {
    crate::usage_result(run_inner(&args))
}

fn run_inner(args: &P4InfoArgs) -> Result<(), String> {
    let opts = crate::check_cmd::options(
        &args.source.include,
        &args.source.define,
        crate::check_cmd::ArchArg::Auto,
    )?;
    crate::program::readable(&args.program)?;
    // The P4Info is made from the lowered program, so a BMv2 JSON program (its own device
    // config) gets one as P4 source does.
    let (prog, config) = match crate::program::bmv2_json_bytes(&args.program) {
        Some(json) => {
            let prog = bmv2_json::load_bytes(&json)
                .map_err(|e| format!("{}: error: {e}", args.program.display()))?;
            (prog, json)
        }
        None => {
            crate::program::not_a_bmv2_json(&args.program)?;
            let compiled =
                p4_front::driver::compile_file(&args.program, &opts).map_err(|f| f.render())?;
            let prog =
                p4_ir::lower(&compiled).map_err(|d| p4_front::diag::render(&compiled.unit, &d))?;
            let name = args.program.display().to_string();
            (prog, device_config::encode(&compiled, &name))
        }
    };
    let built = p4info::build(&prog).map_err(|e| format!("{}: {e}", args.program.display()))?;
    let bytes = match args.format {
        Format::Text => format::p4info_text(&built.p4info).into_bytes(),
        Format::Json => format::p4info_json(&built.p4info).into_bytes(),
        Format::Binary => built.p4info.encode_to_vec(),
    };
    if let Some(p) = &args.device_config {
        std::fs::write(p, config).map_err(|e| format!("--device-config {}: {e}", p.display()))?;
    }
    match &args.out {
        Some(p) => std::fs::write(p, bytes).map_err(|e| format!("-o {}: {e}", p.display())),
        None if args.format == Format::Binary => {
            use std::io::Write;
            let mut o = std::io::stdout().lock();
            match o.write_all(&bytes).and_then(|()| o.flush()) {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                    Err(format!("cannot write to standard output: {e}"))
                }
                _ => Ok(()),
            }
        }
        None => {
            out!("{}", String::from_utf8_lossy(&bytes));
            Ok(())
        }
    }
}
