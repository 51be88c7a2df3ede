//! The P4Runtime entities (P4Runtime §9 "P4 Entity messages"), one child module each: a write's
//! entity becomes a change of the runtime's typed control API ([`translate`]) and a read's
//! entity is answered from the switch ([`read`]). Each arm of both dispatchers is one call, so
//! a new entity is a new child module and one arm in each.
//!
//! These modules only translate: every rule about entries lives in the runtime's control API,
//! whose [`ControlError`]s map one to one onto gRPC codes. Digest configurations are the
//! server's own state: a write of one never reaches [`translate`], and [`read`] is given them.

mod action_profile;
mod counter;
mod digest;
mod meter;
mod pre;
mod register;
mod table;
mod value_set;

use crate::pb::p4::v1 as p4;
use crate::pipeline::Pipeline;
use nevermiss_runtime::control::{Change, ControlError, Op};

use p4::entity::Entity as E;

/// Translates one entity of a write into a change of the typed control API.
pub(crate) fn translate(p: &Pipeline, op: Op, e: &E) -> Result<Change, ControlError> {
    match e {
        E::TableEntry(te) => table::translate(p, op, te),
        E::CounterEntry(ce) => counter::translate(p, op, ce),
        E::DirectCounterEntry(dc) => counter::translate_direct(p, op, dc),
        E::PacketReplicationEngineEntry(pre) => pre::translate(op, pre),
        E::RegisterEntry(r) => register::translate(p, op, r),
        E::MeterEntry(m) => meter::translate(p, op, m),
        E::DirectMeterEntry(dm) => meter::translate_direct(p, op, dm),
        E::ActionProfileMember(m) => action_profile::translate_member(p, op, m),
        E::ActionProfileGroup(g) => action_profile::translate_group(p, op, g),
        E::ValueSetEntry(v) => value_set::translate(p, op, v),
        _ => Err(ControlError::Unimplemented(
            "writing this entity is not supported yet (docs/p4runtime.md)".into(),
        )),
    }
}

/// The entities a read of `e` names (wildcards expanded, P4Runtime §11.5); `digests` gives
/// the digest configurations, by id in ascending order, when a digest entry is read.
pub(crate) fn read(
    p: &Pipeline,
    e: &E,
    digests: impl FnOnce() -> Vec<(u32, p4::digest_entry::Config)>,
) -> Result<Vec<p4::Entity>, ControlError> {
    match e {
        E::TableEntry(te) => table::read(p, te),
        E::CounterEntry(ce) => counter::read(p, ce),
        E::DirectCounterEntry(dc) => counter::read_direct(p, dc),
        E::PacketReplicationEngineEntry(pre) => pre::read(p, pre),
        E::DigestEntry(d) => Ok(digest::read(d, digests())),
        E::RegisterEntry(re) => register::read(p, re),
        E::MeterEntry(me) => meter::read(p, me),
        E::DirectMeterEntry(dm) => meter::read_direct(p, dm),
        E::ActionProfileMember(m) => action_profile::read_members(p, m),
        E::ActionProfileGroup(g) => action_profile::read_groups(p, g),
        E::ValueSetEntry(v) => value_set::read(p, v),
        _ => Err(ControlError::Unimplemented(
            "reading this entity is not supported yet (docs/p4runtime.md)".into(),
        )),
    }
}

/// An entity message holding `x`.
fn entity(x: E) -> p4::Entity {
    p4::Entity { entity: Some(x) }
}

/// Refuses every operation but MODIFY: `what` (e.g. "counter entries") exist for as long as
/// the pipeline does, so they are never inserted or deleted.
fn only_modified(op: Op, what: &str) -> Result<(), ControlError> {
    if op != Op::Modify {
        return Err(ControlError::InvalidArgument(format!(
            "{what} can only be modified"
        )));
    }
    Ok(())
}

/// The IR extern of a P4Info id.
fn extern_of(p: &Pipeline, id: u32, what: &str) -> Result<u32, ControlError> {
    p.ids
        .externs
        .get(&id)
        .copied()
        .ok_or_else(|| ControlError::NotFound(format!("unknown {what} id {id}")))
}

/// The cells a read of an indexed extern (counter, meter, register) names, as (P4Info id, IR
/// extern, index): id 0 means every instance in `all`, an unset index every cell of each
/// (P4Runtime §11.5 "Wildcard reads").
fn read_cells<'a>(
    p: &Pipeline,
    id: u32,
    all: impl Iterator<Item = Option<&'a crate::pb::p4::config::v1::Preamble>>,
    index: Option<&p4::Index>,
    what: &str,
    size: impl Fn(u32) -> Result<u32, ControlError>,
) -> Result<Vec<(u32, u32, u32)>, ControlError> {
    let mut out = Vec::new();
    for id in crate::pipeline::ids_or_all(id, all) {
        let x = extern_of(p, id, what)?;
        match index {
            Some(i) => out.push((id, x, index_of(i.index)?)),
            None => out.extend((0..size(x)?).map(|i| (id, x, i))),
        }
    }
    Ok(out)
}

/// An extern's cell index (P4Runtime §9.4, §9.5, §9.8: a negative one is
/// `INVALID_ARGUMENT`; one past the size is `OUT_OF_RANGE`, which the runtime answers).
fn index_of(i: i64) -> Result<u32, ControlError> {
    if i < 0 {
        return Err(ControlError::InvalidArgument(format!(
            "index {i} is negative"
        )));
    }
    u32::try_from(i).map_err(|_| ControlError::OutOfRange(format!("index {i} out of range")))
}

/// The index message of cell `i`.
fn index_msg(i: u32) -> Option<p4::Index> {
    Some(p4::Index {
        index: i64::from(i),
    })
}
