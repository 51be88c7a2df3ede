//! `nevermiss completions SHELL`: the shell's completion script, made by clap_complete from the
//! command line's own definition (so it always matches the flags). The Debian package installs
//! the bash, zsh and fish ones; `source <(nevermiss completions bash)` loads it by hand.

use clap::Args;
use clap_complete::Shell;

#[derive(Args)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell.
    pub shell: Shell,
}

pub fn run(args: CompletionsArgs, mut cmd: clap::Command) -> u8 {
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "nevermiss", &mut out);
    out!("{}", String::from_utf8_lossy(&out));
    0
}
