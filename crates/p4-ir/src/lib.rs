//! nevermiss's executable IR of a P4_16 program and the lowering that produces it from the
//! front end's checked program.
//!
//! - [`ir`]: the IR (frame layout, expressions, statements, parsers, tables, externs, the
//!   architecture's blocks). Every name is resolved and every value has a fixed place, so the
//!   interpreter looks nothing up by name per packet.
//! - [`mod@lower`]: AST + [`p4_front::check::Checked`] → [`ir::Program`] (the second front end,
//!   `crates/bmv2-json`, builds a `Program` from BMv2 JSON with the same frame conventions,
//!   [`relocate`] and [`pack`]).
//! - [`control_plane`]: what the control plane sees beyond the packet path (annotations,
//!   P4Runtime types, P4Info's order); with [`names`], all a P4Info is made from.
//! - [`elide`]: copy elision of `inout` arguments of controls applied from one place.
//! - [`ops`]: P4's scalar arithmetic, shared by lowering and the interpreter.
//! - [`dump`]: a readable text form (`nevermiss check --dump-ir`).
//!
//! Design notes: `docs/runtime.md`.

#![deny(missing_docs)]

pub mod control_plane;
pub mod dump;
pub mod elide;
pub mod ir;
pub mod lower;
pub mod offsets;
pub mod ops;
pub mod visit;

pub mod names;
pub use ir::*;
pub use lower::{lower, lower_program, pack, relocate, TEMP_BASE};
pub use offsets::map_offsets;
