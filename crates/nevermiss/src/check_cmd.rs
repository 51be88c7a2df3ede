//! `nevermiss check`
use clap::Args;

#[derive(Args)]
pub struct CheckArgs {
    /// The P4 program.
    pub file: std::path::PathBuf,
}

pub fn run(_args: CheckArgs) -> u8 {
    0
}
