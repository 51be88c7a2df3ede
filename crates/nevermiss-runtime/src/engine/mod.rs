//! The engine, the third floor: the interpreter ([`exec`], the reference) and the compiled
//! engine's side in the runtime (`native`: the helpers generated code calls, the entry into
//! it). Both run over a [`crate::Switch`]'s state and know no architecture: the packet flows
//! of `crate::arch` drive them.

pub mod exec;
pub(crate) mod native;
pub mod profile;
pub mod sites;
