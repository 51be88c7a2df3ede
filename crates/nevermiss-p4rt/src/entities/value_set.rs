//! Parser value set entries (P4Runtime §9.9 "ValueSetEntry").

use super::entity;
use crate::pb::p4::v1 as p4;
use crate::pipeline::Pipeline;
use nevermiss_runtime::control::{Change, ControlError, Op};

use p4::entity::Entity as E;

/// A write of a value set: its members replace the old ones, so only MODIFY is allowed.
pub(super) fn translate(
    p: &Pipeline,
    op: Op,
    v: &p4::ValueSetEntry,
) -> Result<Change, ControlError> {
    if op != Op::Modify {
        return Err(ControlError::InvalidArgument(
            "value set entries can only be modified (the members replace the old ones)".into(),
        ));
    }
    let (set, members) = p.value_set_members(v)?;
    Ok(Change::ValueSet { set, members })
}

/// A read of one value set or all (id 0).
pub(super) fn read(p: &Pipeline, v: &p4::ValueSetEntry) -> Result<Vec<p4::Entity>, ControlError> {
    p.value_set_ids(v.value_set_id)?
        .into_iter()
        .map(|id| Ok(entity(E::ValueSetEntry(p.read_value_set_entry(id)?))))
        .collect()
}
