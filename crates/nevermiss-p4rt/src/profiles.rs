//! Action profile members and groups (P4Runtime §9.2 "ActionProfileMember" and §9.3
//! "ActionProfileGroup") and parser value sets (§9.9 "ValueSetEntry"): their P4Runtime messages
//! ↔ the runtime's typed control API.
//!
//! A member's action is an action of the tables that share the profile; the runtime keeps it
//! as an index into the first such table's actions ([`Switch::profile_tables`]). Groups carry
//! members with weights (≥ 1) and watch ports (`watch_port` bytes, or the deprecated `watch`
//! int32, read back in the field they were written in; a member whose port is down is not
//! selected: [`Switch::set_port_up`]). A value set is
//! written whole with MODIFY (its members replace the old ones; INSERT and DELETE are
//! `INVALID_ARGUMENT`); each member has one match per component of the set's P4Info `match`
//! list, exact, ternary or LPM as that list declares (kept as value and mask).
//!
//! [`Switch::profile_tables`]: nevermiss_runtime::Switch::profile_tables
//! [`Switch::set_port_up`]: nevermiss_runtime::Switch::set_port_up

use crate::pb::p4::config::v1 as pi;
use crate::pb::p4::v1 as p4;
use crate::pipeline::{canonical, check_bytes, ids_or_all, Pipeline};
use nevermiss_runtime::control::{
    ActionCall, ControlError, ControlResult, GroupMember, ProfileGroup, ProfileMember, WatchPort,
};
use nevermiss_tables::FieldMatch;
use p4_ir::ir::{ExternId, TableId};

fn invalid(m: impl Into<String>) -> ControlError {
    ControlError::InvalidArgument(m.into())
}

/// The top byte of an action profile id (P4Runtime §6.3 "Id allocation").
const PROFILE_PREFIX: u32 = 0x11;

impl Pipeline {
    /// Every action profile id of the P4Info, or the one asked for (`0` = every one, the read
    /// wildcard).
    pub fn profile_ids(&self, id: u32) -> ControlResult<Vec<u32>> {
        if id != 0 {
            self.profile_extern(id)?;
        }
        let all = self
            .p4info
            .action_profiles
            .iter()
            .map(|a| a.preamble.as_ref());
        Ok(ids_or_all(id, all))
    }

    /// The IR extern of an action profile id.
    fn profile_extern(&self, id: u32) -> ControlResult<ExternId> {
        if id == 0 {
            return Err(invalid("action_profile_id must be set"));
        }
        match self.ids.externs.get(&id) {
            Some(x) if id >> 24 == PROFILE_PREFIX => Ok(*x),
            _ => Err(ControlError::NotFound(format!(
                "unknown action profile id {id}"
            ))),
        }
    }

    /// The table whose actions a profile's members index.
    fn profile_table(&self, x: ExternId, id: u32) -> ControlResult<TableId> {
        self.sw.profile_tables(x).first().copied().ok_or_else(|| {
            ControlError::FailedPrecondition(format!("no table uses action profile {id}"))
        })
    }

    /// The member of a write. A DELETE names the member only.
    pub fn profile_member(
        &self,
        m: &p4::ActionProfileMember,
        delete: bool,
    ) -> ControlResult<(ExternId, ProfileMember)> {
        let x = self.profile_extern(m.action_profile_id)?;
        let action = if delete {
            ActionCall {
                action: 0,
                params: Vec::new(),
            }
        } else {
            let Some(a) = &m.action else {
                return Err(invalid(format!("member {}: action unset", m.member_id)));
            };
            let t = self.profile_table(x, m.action_profile_id)?;
            self.action_call(t, a)?
        };
        Ok((
            x,
            ProfileMember {
                id: m.member_id,
                action,
            },
        ))
    }

    /// The group of a write. A DELETE names the group only.
    pub fn profile_group(
        &self,
        g: &p4::ActionProfileGroup,
        delete: bool,
    ) -> ControlResult<(ExternId, ProfileGroup)> {
        let x = self.profile_extern(g.action_profile_id)?;
        if g.max_size < 0 {
            return Err(invalid("max_size must not be negative"));
        }
        let mut members = Vec::with_capacity(g.members.len());
        if !delete {
            for m in &g.members {
                if m.weight < 1 {
                    return Err(invalid(format!(
                        "group {} member {}: weight must be at least 1",
                        g.group_id, m.member_id
                    )));
                }
                use p4::action_profile_group::member::WatchKind as W;
                #[allow(deprecated)]
                let watch = match &m.watch_kind {
                    None => None,
                    Some(W::Watch(p)) => watch_int(*p)?,
                    Some(W::WatchPort(b)) => watch_bytes(b)?,
                };
                if members.iter().any(|x: &GroupMember| x.id == m.member_id) {
                    return Err(invalid(format!(
                        "group {}: member {} given twice",
                        g.group_id, m.member_id
                    )));
                }
                members.push(GroupMember {
                    id: m.member_id,
                    weight: m.weight as u32,
                    watch,
                });
            }
        }
        Ok((
            x,
            ProfileGroup {
                id: g.group_id,
                members,
                max_size: g.max_size as u32,
            },
        ))
    }

    /// The members of profile `id` as read.
    pub fn read_profile_members(&self, id: u32) -> ControlResult<Vec<p4::ActionProfileMember>> {
        let x = self.profile_extern(id)?;
        let members = self.sw.read_members(x)?;
        let t = self.profile_table(x, id).ok();
        Ok(members
            .into_iter()
            .map(|m| p4::ActionProfileMember {
                action_profile_id: id,
                member_id: m.id,
                action: t.map(|t| self.action_of(t, &m.action)),
            })
            .collect())
    }

    /// The groups of profile `id` as read (none for a profile that is not a selector).
    pub fn read_profile_groups(&self, id: u32) -> ControlResult<Vec<p4::ActionProfileGroup>> {
        let x = self.profile_extern(id)?;
        let selector = self
            .p4info
            .action_profiles
            .iter()
            .any(|a| a.with_selector && a.preamble.as_ref().is_some_and(|p| p.id == id));
        if !selector {
            return Ok(Vec::new());
        }
        Ok(self
            .sw
            .read_groups(x)?
            .into_iter()
            .map(|g| p4::ActionProfileGroup {
                action_profile_id: id,
                group_id: g.id,
                members: g
                    .members
                    .iter()
                    .map(|m| {
                        use p4::action_profile_group::member::WatchKind as W;
                        #[allow(deprecated)]
                        let watch_kind = m.watch.map(|w| match w.legacy {
                            true => W::Watch(w.port as i32),
                            false => W::WatchPort(watch_msg(w)),
                        });
                        p4::action_profile_group::Member {
                            member_id: m.id,
                            weight: m.weight as i32,
                            watch_kind,
                        }
                    })
                    .collect(),
                max_size: g.max_size as i32,
            })
            .collect())
    }

    // ------------------------------------------------------------------ value sets

    fn value_set_info(&self, id: u32) -> ControlResult<(u32, &pi::ValueSet)> {
        if id == 0 {
            return Err(invalid("value_set_id must be set"));
        }
        let vs = self.ids.value_sets.get(&id).copied();
        let info = self
            .p4info
            .value_sets
            .iter()
            .find(|v| v.preamble.as_ref().is_some_and(|p| p.id == id));
        match (vs, info) {
            (Some(vs), Some(info)) => Ok((vs, info)),
            _ => Err(ControlError::NotFound(format!("unknown value set id {id}"))),
        }
    }

    /// Every value set id of the P4Info, or the one asked for (`0` = every one).
    pub fn value_set_ids(&self, id: u32) -> ControlResult<Vec<u32>> {
        if id != 0 {
            self.value_set_info(id)?;
        }
        let all = self.p4info.value_sets.iter().map(|v| v.preamble.as_ref());
        Ok(ids_or_all(id, all))
    }

    /// The IR value set and members of a MODIFY of a value set.
    pub fn value_set_members(
        &self,
        e: &p4::ValueSetEntry,
    ) -> ControlResult<(u32, Vec<Vec<FieldMatch>>)> {
        use p4::field_match::FieldMatchType as F;
        let (vs, info) = self.value_set_info(e.value_set_id)?;
        let mut out = Vec::with_capacity(e.members.len());
        for (mi, member) in e.members.iter().enumerate() {
            let mut comps: Vec<Option<FieldMatch>> = vec![None; info.r#match.len()];
            for m in &member.r#match {
                let Some(pos) = info.r#match.iter().position(|f| f.id == m.field_id) else {
                    return Err(invalid(format!(
                        "value set {} member {mi}: unknown match field id {}",
                        e.value_set_id, m.field_id
                    )));
                };
                if comps[pos].is_some() {
                    return Err(invalid(format!(
                        "value set {} member {mi}: match field id {} given twice",
                        e.value_set_id, m.field_id
                    )));
                }
                let f = &info.r#match[pos];
                let w = f.bitwidth as u32;
                let what = || format!("value set {} field {}", e.value_set_id, f.id);
                let kind = match_type(f);
                comps[pos] = Some(match (&m.field_match_type, kind) {
                    (Some(F::Exact(x)), pi::match_field::MatchType::Exact) => {
                        check_bytes(&x.value, w, &what)?;
                        FieldMatch::Exact(x.value.to_vec())
                    }
                    (Some(F::Ternary(x)), pi::match_field::MatchType::Ternary) => {
                        check_bytes(&x.value, w, &what)?;
                        check_bytes(&x.mask, w, &what)?;
                        FieldMatch::Ternary(x.value.to_vec(), x.mask.to_vec())
                    }
                    (Some(F::Lpm(x)), pi::match_field::MatchType::Lpm) => {
                        check_bytes(&x.value, w, &what)?;
                        if x.prefix_len <= 0 || x.prefix_len as u32 > w {
                            return Err(invalid(format!(
                                "{}: prefix length {} must be in 1..={w}",
                                what(),
                                x.prefix_len
                            )));
                        }
                        let mask = prefix_mask(w, x.prefix_len as u32);
                        FieldMatch::Ternary(x.value.to_vec(), mask)
                    }
                    (None, _) => return Err(invalid(format!("{}: match type unset", what()))),
                    _ => {
                        return Err(invalid(format!(
                            "{}: the match type differs from the field's ({kind:?})",
                            what()
                        )))
                    }
                });
            }
            let mut full = Vec::with_capacity(comps.len());
            for (c, f) in comps.into_iter().zip(&info.r#match) {
                match c {
                    Some(c) => full.push(c),
                    None if match_type(f) == pi::match_field::MatchType::Exact => {
                        return Err(invalid(format!(
                            "value set {} member {mi}: exact field {} cannot be omitted",
                            e.value_set_id, f.id
                        )))
                    }
                    // A don't-care ternary or LPM component.
                    None => {
                        let n = (f.bitwidth as usize).div_ceil(8).max(1);
                        full.push(FieldMatch::Ternary(vec![0; n], vec![0; n]));
                    }
                }
            }
            out.push(full);
        }
        Ok((vs, out))
    }

    /// Value set `id` as read: its members in the match kinds of its P4Info.
    pub fn read_value_set_entry(&self, id: u32) -> ControlResult<p4::ValueSetEntry> {
        use p4::field_match::{self as fm, FieldMatchType as F};
        let (vs, info) = self.value_set_info(id)?;
        let members = self.sw.read_value_set(vs)?;
        let mut out = Vec::with_capacity(members.len());
        for member in members {
            let mut matches = Vec::new();
            for (c, f) in member.iter().zip(&info.r#match) {
                let FieldMatch::Ternary(v, m) = c else {
                    continue;
                };
                if m.iter().all(|b| *b == 0) {
                    continue;
                }
                let t = match match_type(f) {
                    pi::match_field::MatchType::Exact => F::Exact(fm::Exact {
                        value: canonical(v),
                    }),
                    pi::match_field::MatchType::Lpm => F::Lpm(fm::Lpm {
                        value: canonical(v),
                        prefix_len: m.iter().map(|b| b.count_ones()).sum::<u32>() as i32,
                    }),
                    _ => F::Ternary(fm::Ternary {
                        value: canonical(v),
                        mask: canonical(m),
                    }),
                };
                matches.push(p4::FieldMatch {
                    field_id: f.id,
                    field_match_type: Some(t),
                });
            }
            out.push(p4::ValueSetMember { r#match: matches });
        }
        Ok(p4::ValueSetEntry {
            value_set_id: id,
            members: out,
        })
    }
}

/// A watch port from P4Runtime's deprecated `int32 watch` field.
pub fn watch_int(p: i32) -> ControlResult<Option<WatchPort>> {
    match u32::try_from(p) {
        Ok(port) => Ok(Some(WatchPort { port, legacy: true })),
        Err(_) => Err(invalid(format!("watch port {p} is negative"))),
    }
}

/// A watch port from `bytes watch_port` (P4Runtime §9.3: empty = none; otherwise a port
/// number of at most 32 bits, any length as for every bytestring).
pub fn watch_bytes(b: &[u8]) -> ControlResult<Option<WatchPort>> {
    if b.is_empty() {
        return Ok(None);
    }
    let first = b.iter().position(|x| *x != 0).unwrap_or(b.len());
    if b.len() - first > 4 {
        return Err(invalid(
            "watch_port must be a port number of at most 32 bits",
        ));
    }
    let port = b.iter().fold(0u32, |a, x| (a << 8) | u32::from(*x));
    Ok(Some(WatchPort {
        port,
        legacy: false,
    }))
}

/// The canonical `watch_port` bytes of a watch port.
pub fn watch_msg(w: WatchPort) -> prost::bytes::Bytes {
    canonical(&w.port.to_be_bytes())
}

/// The P4Runtime match kind of a value set's match field (exact when unspecified).
fn match_type(f: &pi::MatchField) -> pi::match_field::MatchType {
    match &f.r#match {
        Some(pi::match_field::Match::MatchType(t)) => {
            pi::match_field::MatchType::try_from(*t).unwrap_or(pi::match_field::MatchType::Exact)
        }
        _ => pi::match_field::MatchType::Exact,
    }
}

/// The big-endian mask of the top `len` of `width` bits.
fn prefix_mask(width: u32, len: u32) -> Vec<u8> {
    let n = (width as usize).div_ceil(8);
    let mut out = vec![0u8; n];
    let pad = n as u32 * 8 - width;
    for i in 0..len {
        let bit = pad + i;
        out[(bit / 8) as usize] |= 0x80 >> (bit % 8);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::prefix_mask;

    #[test]
    fn prefix_masks_cover_the_top_bits_of_the_width() {
        assert_eq!(prefix_mask(16, 4), vec![0xf0, 0x00]);
        assert_eq!(prefix_mask(12, 4), vec![0x0f, 0x00]);
        assert_eq!(prefix_mask(12, 12), vec![0x0f, 0xff]);
        assert_eq!(prefix_mask(1, 1), vec![0x01]);
    }
}
