//! Trace-driven simulator of data hazards and of a locking scheme in stateful hardware pipelines.
//!
//! It reproduces the simulator of Cascone et al., "Relaxing state-access constraints in stateful
//! programmable data planes" (CCR 2018, papers/003), opp-sim, exactly as
//! `shared/reference/hazard-sim.md` describes it (cited as "reference A.x" in this crate):
//!
//! * traces: pcap/pcapng files (read and written by `nevermiss_io::pcap`, decoded by [`packet`])
//!   or synthetic ([`synth`]), loaded with one digest column per flow key ([`keys`], [`trace`]);
//! * the pipeline's arrival model and batches ([`model`]);
//! * the hazard detector, FDH over clock cycles ([`hazard`]);
//! * the locking scheme with queues and a round-robin scheduler ([`lock`]);
//! * aggregation over batches as the paper does and parameter sweeps in parallel ([`sweep`]).

pub mod hazard;
pub mod keys;
pub mod lock;
pub mod model;
pub mod packet;
pub mod stats;
pub mod sweep;
pub mod synth;
pub mod trace;

pub use keys::KeySpec;
pub use lock::LockConfig;
pub use model::{BatchConfig, ModelConfig, SkipPolicy, Timing};
pub use trace::{HashMode, Trace, TraceSource};

use std::fmt;

/// Errors of the simulator: input files and parameters. Messages are lowercase.
#[derive(Debug)]
pub enum SimError {
    /// A file could not be opened, read or written.
    Io { path: String, message: String },
    /// A capture file is malformed or truncated.
    Capture {
        path: String,
        error: nevermiss_io::PcapError,
    },
    /// Some other input (a distribution file, a parameter) is unusable.
    Input { what: String, message: String },
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Io { path, message } => write!(f, "{path}: {message}"),
            SimError::Capture { path, error } => write!(f, "{path}: {error}"),
            SimError::Input { what, message } => write!(f, "{what}: {message}"),
        }
    }
}

impl std::error::Error for SimError {}
