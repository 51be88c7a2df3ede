//! `nevermiss man DIR` (hidden; for packagers): the man pages, made by clap_mangen from the
//! command line's own definition: `nevermiss.1` and `nevermiss-SUBCOMMAND.1` for every
//! subcommand (`nevermiss-sim-hazards.1`, ...).

use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct ManArgs {
    /// Where to write the pages (made if missing).
    pub dir: PathBuf,
}

pub fn run(args: ManArgs, cmd: clap::Command) -> u8 {
    crate::usage_result(write(&args.dir, cmd))
}

fn write(dir: &std::path::Path, cmd: clap::Command) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    // Hidden subcommands (`man` itself) get no page.
    clap_mangen::generate_to(cmd, dir).map_err(|e| format!("{}: {e}", dir.display()))
}
