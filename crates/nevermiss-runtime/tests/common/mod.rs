//! What the engine comparison tests share.

use nevermiss_runtime::{build, Config, Engine, Switch};
use p4_front::driver::Options;
use p4_ir::Arch;
use std::path::Path;
use std::sync::Arc;

/// A switch running `path` on `engine`: port 1 a host port of PNA programs, no insert-path
/// warming (so both engines see exactly the same packets); `Err` if the program does not load.
pub fn switch(path: &Path, engine: Engine) -> Result<Arc<Switch>, String> {
    let prog = nevermiss_runtime::load(path, &Options::default())?;
    let host_ports = if matches!(prog.arch, Arch::PnaV06 | Arch::PnaV07) {
        vec![1]
    } else {
        Vec::new()
    };
    let config = Config {
        host_ports,
        engine,
        warm_insert_every: 0,
        ..Config::default()
    };
    build(path, &Options::default(), config)
}
