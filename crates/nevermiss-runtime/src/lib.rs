//! nevermiss's P4 runtime: an interpreter for the IR of [`p4_ir`], the PNA and v1model
//! architectures, stateful tables from [`nevermiss_tables`] (PNA add-on-miss, data-plane
//! updates, expiry), the control-plane operations p4c's STF tests use, the run loop over
//! [`nevermiss_io`] ports, and the STF test runner.
//!
//! Design and semantics: `docs/runtime.md`.

//!
//! The crate is built in floors, each importing only the floors below it: `types`
//! vocabulary (`Config`, the control plane's entities and errors) → `state` (the [`Switch`]
//! and its owned sub-states) → [`engine`] (the interpreter and the compiled engine's helpers)
//! → [`arch`] (the PNA, v1model and PSA packet flows) → [`control`] (the typed control API) →
//! [`build`] (assembly of a switch) → [`worker`], [`workers`], [`run`], [`stf`].

#![deny(unsafe_code)]
#![deny(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod arch;
// unsafe: appending to a byte buffer through raw pointers (`Bits::append_raw`).
#[allow(unsafe_code)]
pub mod bits;
pub mod build;
pub mod control;
// unsafe: the compiled engine's entry and the helpers it calls (raw `Ctx` pointers), the
// packet read in place.
#[allow(unsafe_code)]
pub mod engine;
pub mod handover;
pub mod queues;
pub mod run;
mod state;
pub mod stf;
mod types;
// unsafe: the PNA parse of a batch's packets in place.
#[allow(unsafe_code)]
pub mod worker;
// unsafe: CPU affinity (`sched_getaffinity`, `sched_setaffinity`).
#[allow(unsafe_code)]
pub mod workers;

pub use engine::exec::TableOps;
pub use state::{Notification, PortStatus, Probe, Switch, SwitchStats};
pub use types::{BuildError, Config, Engine};
pub use worker::Worker;
