//! Match-action tables for nevermiss: the runtime behind every `table.apply()` of a P4 program
//! (P4_16 §14.2) on PNA and v1model, including PNA add-on-miss, data-plane updates of action
//! parameters and idle timeouts (PNA §"Tables with add-on-miss capability", §"Table entry idle
//! timeout").
//!
//! One [`Table`] is shared by all worker threads and the control plane through `&self` methods.
//! Design, guarantees, memory and measurements: `docs/tables.md`.

#![cfg_attr(loom, allow(dead_code))]
#![deny(unsafe_code)]
#![deny(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

mod action;
// unsafe: arrays of atomics allocated zeroed (`alloc_zeroed`) and freed.
#[allow(unsafe_code)]
mod arena;
mod cell;
mod direct;
mod error;
// unsafe: buckets are `Zeroed`; a bucket's keys read with SSE2 loads (`asm!`).
#[allow(unsafe_code)]
mod exact;
mod gate;
mod hash;
mod hazard;
mod index;
#[cfg(loom)]
#[doc(hidden)]
pub mod loom_api;
mod slots;
pub mod spec;
// unsafe: reading the TSC.
#[allow(unsafe_code)]
pub mod stamp;
mod stats;
// unsafe: the `Zeroed` trait (all-zero bytes are a valid value) and zeroed allocation.
#[allow(unsafe_code)]
mod sync;
mod table;
mod wheel;

pub use action::{ActionData, Params, ACTION_NONE};
pub use error::TableError;
pub use gate::{Closed, Gate, GateTimeout, Ticket};
pub use spec::{
    EntryView, ExactEngine, FieldMatch, IdleTimeout, KeySpec, MatchKind, TableSpec, MAX_TABLE_SIZE,
};
pub use stats::TableStats;
pub use table::{
    AddStatus, EntryHandle, EntryId, Expired, Lookup, Prefetch, Table, DEFAULT_PROFILES_S,
    MAX_PROFILES,
};
pub use wheel::DEFAULT_TICK_NS;
