//! Action profile members and groups (P4Runtime §9.2 "ActionProfileMember",
//! "ActionProfileGroup"), watch ports included.

use super::*;

impl Switch {
    pub(super) fn profile(&self, x: ExternId) -> ControlResult<&crate::state::ActionProfile> {
        self.externs()
            .profile(x)
            .ok_or_else(|| ControlError::NotFound(format!("{x} is not an action profile")))
    }

    /// The tables whose entries point into action profile `x` (members' actions are indices
    /// into the first one's actions).
    pub fn profile_tables(&self, x: ExternId) -> Vec<TableId> {
        self.rt_tables()
            .iter()
            .enumerate()
            .filter(|(_, rt)| rt.indirect() == Some(x))
            .map(|(i, _)| i as TableId)
            .collect()
    }

    pub(super) fn profile_table(&self, x: ExternId) -> ControlResult<&p4_ir::Table> {
        let t = self.profile_tables(x).first().copied().ok_or_else(|| {
            ControlError::FailedPrecondition(format!("no table uses action profile {x}"))
        })?;
        Ok(&self.prog().tables[t as usize])
    }

    /// The members of action profile `x`, by id.
    pub fn read_members(&self, x: ExternId) -> ControlResult<Vec<ProfileMember>> {
        let p = self.profile(x)?;
        let td = self.profile_table(x).ok();
        let st = p.read();
        let mut out: Vec<ProfileMember> = st
            .members
            .iter()
            .map(|(id, m)| {
                let a = td.and_then(|td| td.action_of(m.func));
                ProfileMember {
                    id: *id,
                    action: ActionCall {
                        action: a.unwrap_or(ACTION_NONE),
                        params: a
                            .and_then(|a| {
                                td.map(|td| unpack_params(&td.actions[a as usize], &m.params))
                            })
                            .unwrap_or_default(),
                    },
                }
            })
            .collect();
        out.sort_by_key(|m| m.id);
        Ok(out)
    }

    /// The groups of action selector `x`, by id.
    pub fn read_groups(&self, x: ExternId) -> ControlResult<Vec<ProfileGroup>> {
        let p = self.profile(x)?;
        let st = p.read();
        let mut out: Vec<ProfileGroup> = st
            .groups
            .iter()
            .map(|(id, g)| ProfileGroup {
                id: *id,
                members: g.members.clone(),
                max_size: g.max_size,
            })
            .collect();
        out.sort_by_key(|g| g.id);
        Ok(out)
    }

    pub(super) fn write_member(
        &self,
        op: Op,
        x: ExternId,
        m: &ProfileMember,
    ) -> ControlResult<(Applied, Change)> {
        let p = self.profile(x)?;
        let mut st = p.write();
        if op == Op::Insert && st.has_oneshots() {
            return Err(invalid(format!(
                "action profile {x} is programmed with one-shot action sets; members and \
                 groups cannot be mixed with them"
            )));
        }
        let old = st.members.get(&m.id).cloned();
        let old_call = |o: &Member| -> ControlResult<ProfileMember> {
            let td = self.profile_table(x)?;
            let a = td.action_of(o.func).unwrap_or(ACTION_NONE);
            Ok(ProfileMember {
                id: m.id,
                action: ActionCall {
                    action: a,
                    params: td
                        .actions
                        .get(a as usize)
                        .map(|ad| unpack_params(ad, &o.params))
                        .unwrap_or_default(),
                },
            })
        };
        let undo = match (op, &old) {
            (Op::Insert, Some(_)) => {
                return Err(ControlError::AlreadyExists(format!(
                    "member {} exists",
                    m.id
                )))
            }
            (Op::Modify | Op::Delete, None) => {
                return Err(ControlError::NotFound(format!(
                    "member {} does not exist",
                    m.id
                )))
            }
            (Op::Delete, Some(o)) if o.refs > 0 => {
                return Err(ControlError::FailedPrecondition(format!(
                    "member {} is used by {} groups or entries",
                    m.id, o.refs
                )))
            }
            (Op::Insert, None) => Change::Member(Op::Delete, x, m.clone()),
            (Op::Modify, Some(o)) => Change::Member(Op::Modify, x, old_call(o)?),
            (Op::Delete, Some(o)) => Change::Member(Op::Insert, x, old_call(o)?),
        };
        match op {
            Op::Delete => {
                st.members.remove(&m.id);
            }
            _ => {
                if op == Op::Insert && st.members.len() >= p.size.max(1) as usize {
                    return Err(ControlError::ResourceExhausted(format!(
                        "action profile {x} is full ({} members)",
                        p.size
                    )));
                }
                let td = self.profile_table(x)?;
                let data = self.pack_call(td, &m.action, true)?;
                let func = td.actions[data.action as usize].func;
                let refs = old.map_or(0, |o| o.refs);
                st.members.insert(
                    m.id,
                    Member {
                        func,
                        params: data.params.to_vec(),
                        refs,
                    },
                );
            }
        }
        Ok((self.applied(), undo))
    }

    pub(super) fn write_group(
        &self,
        op: Op,
        x: ExternId,
        g: &ProfileGroup,
    ) -> ControlResult<(Applied, Change)> {
        let p = self.profile(x)?;
        if !p.selector {
            return Err(invalid(format!(
                "action profile {x} is not a selector: it has no groups"
            )));
        }
        let mut st = p.write();
        if op == Op::Insert && st.has_oneshots() {
            return Err(invalid(format!(
                "action profile {x} is programmed with one-shot action sets; members and \
                 groups cannot be mixed with them"
            )));
        }
        let old = st.groups.get(&g.id).cloned();
        let undo = match (op, &old) {
            (Op::Insert, Some(_)) => {
                return Err(ControlError::AlreadyExists(format!(
                    "group {} exists",
                    g.id
                )))
            }
            (Op::Modify | Op::Delete, None) => {
                return Err(ControlError::NotFound(format!(
                    "group {} does not exist",
                    g.id
                )))
            }
            (Op::Delete, Some(o)) if o.refs > 0 => {
                return Err(ControlError::FailedPrecondition(format!(
                    "group {} is used by {} entries",
                    g.id, o.refs
                )))
            }
            (Op::Insert, None) => Change::Group(Op::Delete, x, g.clone()),
            (_, Some(o)) => Change::Group(
                if op == Op::Delete {
                    Op::Insert
                } else {
                    Op::Modify
                },
                x,
                ProfileGroup {
                    id: g.id,
                    members: o.members.clone(),
                    max_size: o.max_size,
                },
            ),
        };
        if op != Op::Delete {
            let max = if g.max_size == 0 { p.size } else { g.max_size };
            if g.members.len() > max as usize {
                return Err(ControlError::ResourceExhausted(format!(
                    "group {} has {} members, at most {max} allowed",
                    g.id,
                    g.members.len()
                )));
            }
            for m in &g.members {
                if !st.members.contains_key(&m.id) {
                    return Err(ControlError::NotFound(format!(
                        "member {} does not exist",
                        m.id
                    )));
                }
                if m.weight == 0 {
                    return Err(invalid(format!(
                        "member {}: weight must be at least 1",
                        m.id
                    )));
                }
            }
        }
        if let Some(o) = &old {
            for m in &o.members {
                if let Some(mm) = st.members.get_mut(&m.id) {
                    mm.refs = mm.refs.saturating_sub(1);
                }
            }
        }
        if op == Op::Delete {
            st.groups.remove(&g.id);
        } else {
            for m in &g.members {
                if let Some(mm) = st.members.get_mut(&m.id) {
                    mm.refs += 1;
                }
            }
            st.groups.insert(
                g.id,
                Group {
                    members: g.members.clone(),
                    max_size: g.max_size,
                    expanded: expand(&g.members),
                    refs: old.map_or(0, |o| o.refs),
                },
            );
        }
        Ok((self.applied(), undo))
    }
}
