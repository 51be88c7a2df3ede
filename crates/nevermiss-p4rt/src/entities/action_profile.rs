//! Action profile members and groups (P4Runtime §9.2 "ActionProfileMember", §9.3
//! "ActionProfileGroup"); the pipeline's `profiles` translates their contents.

use super::entity;
use crate::pb::p4::v1 as p4;
use crate::pipeline::Pipeline;
use nevermiss_runtime::control::{Change, ControlError, Op};

use p4::entity::Entity as E;

/// A write of a member (a delete needs only its id).
pub(super) fn translate_member(
    p: &Pipeline,
    op: Op,
    m: &p4::ActionProfileMember,
) -> Result<Change, ControlError> {
    let (x, member) = p.profile_member(m, op == Op::Delete)?;
    Ok(Change::Member(op, x, member))
}

/// A write of a group (a delete needs only its id).
pub(super) fn translate_group(
    p: &Pipeline,
    op: Op,
    g: &p4::ActionProfileGroup,
) -> Result<Change, ControlError> {
    let (x, group) = p.profile_group(g, op == Op::Delete)?;
    Ok(Change::Group(op, x, group))
}

/// A read of members: of one profile or all (id 0), one member or all (id 0).
pub(super) fn read_members(
    p: &Pipeline,
    m: &p4::ActionProfileMember,
) -> Result<Vec<p4::Entity>, ControlError> {
    let mut out = Vec::new();
    for id in p.profile_ids(m.action_profile_id)? {
        out.extend(
            p.read_profile_members(id)?
                .into_iter()
                .filter(|x| m.member_id == 0 || x.member_id == m.member_id)
                .map(|x| entity(E::ActionProfileMember(x))),
        );
    }
    Ok(out)
}

/// A read of groups: of one profile or all (id 0), one group or all (id 0).
pub(super) fn read_groups(
    p: &Pipeline,
    g: &p4::ActionProfileGroup,
) -> Result<Vec<p4::Entity>, ControlError> {
    let mut out = Vec::new();
    for id in p.profile_ids(g.action_profile_id)? {
        out.extend(
            p.read_profile_groups(id)?
                .into_iter()
                .filter(|x| g.group_id == 0 || x.group_id == g.group_id)
                .map(|x| entity(E::ActionProfileGroup(x))),
        );
    }
    Ok(out)
}
