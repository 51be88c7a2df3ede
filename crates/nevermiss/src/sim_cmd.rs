//! `nevermiss sim ...`
use clap::Subcommand;

#[derive(Subcommand)]
pub enum SimCommand {
    /// Placeholder until the simulator lands.
    Version,
}

pub fn run(_cmd: SimCommand) -> u8 {
    0
}
