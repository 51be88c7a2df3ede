//! Trace-driven simulator of data hazards and of a locking scheme in stateful hardware pipelines.
//!
//! It reproduces the simulator of Cascone et al., "Relaxing state-access constraints in stateful
//! programmable data planes" (CCR 2018, papers/003), opp-sim, exactly as
//! `shared/reference/hazard-sim.md` describes it (cited as "reference A.x" in this crate):
//!
//! * traces: pcap/pcapng files (read and written by `nevermiss_io::pcap`, decoded by [`packet`],
//!   merged by [`capture`]) or synthetic ([`synth`]), named by a [`source`] and loaded with one
//!   digest column per flow key ([`keys`], [`trace`]);
//! * the pipeline's arrival model and batches ([`model`]);
//! * the hazard detector, FDH over clock cycles ([`hazard`]);
//! * the locking scheme with queues and a round-robin scheduler ([`lock`]);
//! * aggregation over batches as the paper does and parameter sweeps in parallel ([`sweep`]);
//! * errors, every message made in one place ([`error`]).

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod capture;
pub mod error;
pub mod hazard;
pub mod keys;
pub mod lock;
pub mod model;
pub mod packet;
pub mod source;
pub mod stats;
pub mod sweep;
pub mod synth;
pub mod trace;

pub use error::{ConfigError, ParseError, SimError};
pub use keys::KeySpec;
pub use lock::LockConfig;
pub use model::{BatchConfig, ModelConfig, SkipPolicy, Timing};
pub use source::TraceSource;
pub use trace::{HashMode, Trace};
