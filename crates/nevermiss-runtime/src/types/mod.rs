//! The runtime's vocabulary, the ground floor: the configuration, the control plane's entities
//! and changes, and the errors. Nothing here reaches into the rest of the crate.

mod config;
mod control;
mod errors;

pub use config::{Config, Engine};
pub use control::*;
pub use errors::*;
