//! Action profiles and action selectors (PSA §7.8–7.9, v1model `action_profile` /
//! `action_selector`; P4Runtime §9.2 "ActionProfileMember", "ActionProfileGroup").
//!
//! A table whose `implementation` is a profile stores no action in its entries but a reference:
//! a member (one action with its parameters) or, for selectors, a group of members. The entry's
//! action data is a tag ([`ACTION_MEMBER`] or [`ACTION_GROUP`]) and the 4-byte big-endian id;
//! on a hit the data plane replaces it with the member's action ([`ActionProfile::resolve`]),
//! choosing a group's member by a hash of the table's `selector` key fields. Members and groups
//! live behind one `RwLock` per profile: the data plane takes it shared, once per hit of an
//! indirect table; the control plane exclusively for a write.

use nevermiss_tables::ActionData;
use p4_ir::ir::{FnId, Table as TableDef};
use std::collections::HashMap;
use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Action id of an entry that points to a member (parameters: the member id, big-endian).
pub const ACTION_MEMBER: u32 = u32::MAX - 1;
/// Action id of an entry that points to a group (parameters: the group id, big-endian).
pub const ACTION_GROUP: u32 = u32::MAX - 2;

/// A member: an action (by function, so that every table sharing the profile finds it in its
/// own action list) with packed parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Member {
    pub func: FnId,
    pub params: Vec<u8>,
    /// Groups and entries that point to it.
    pub refs: u32,
}

/// A group: members with weights; `expanded` repeats each member `weight` times (what the
/// data plane indexes with its hash).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Group {
    pub members: Vec<(u32, u32)>,
    pub max_size: u32,
    pub expanded: Vec<u32>,
    /// Entries that point to it.
    pub refs: u32,
}

#[derive(Default, Clone, Debug)]
pub(crate) struct ProfileState {
    pub members: HashMap<u32, Member>,
    pub groups: HashMap<u32, Group>,
}

/// One action profile or selector instance.
pub(crate) struct ActionProfile {
    /// Selectors have groups; plain profiles only members.
    pub selector: bool,
    /// The `size` argument: most members (P4Runtime: and most total group members).
    pub size: u32,
    state: RwLock<ProfileState>,
}

impl ActionProfile {
    pub fn new(size: u32, selector: bool) -> ActionProfile {
        ActionProfile {
            selector,
            size,
            state: RwLock::new(ProfileState::default()),
        }
    }

    pub fn read(&self) -> RwLockReadGuard<'_, ProfileState> {
        self.state.read().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn write(&self) -> RwLockWriteGuard<'_, ProfileState> {
        self.state.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// Replaces a hit's tag in `data` by the member's action (the index in `td`'s actions) and
    /// parameters. `sel` is the hash of the selector fields (groups). Returns false, leaving
    /// `data` unusable (`ACTION_NONE`), for a dangling reference or an action `td` lacks.
    pub fn resolve(&self, td: &TableDef, data: &mut ActionData, sel: impl FnOnce() -> u64) -> bool {
        let id = match <[u8; 4]>::try_from(&data.params[..]) {
            Ok(b) => u32::from_be_bytes(b),
            Err(_) => return false,
        };
        let st = self.read();
        let member = match data.action {
            ACTION_MEMBER => st.members.get(&id),
            ACTION_GROUP => st.groups.get(&id).and_then(|g| {
                let n = g.expanded.len() as u64;
                (n > 0)
                    .then(|| g.expanded[(sel() % n) as usize])
                    .and_then(|m| st.members.get(&m))
            }),
            _ => return true,
        };
        match member.and_then(|m| td.action_of(m.func).map(|a| (a, m))) {
            Some((a, m)) => {
                data.action = a;
                data.params.set(&m.params);
                true
            }
            None => {
                data.action = nevermiss_tables::ACTION_NONE;
                data.params.set(&[]);
                false
            }
        }
    }
}

/// The action data of an entry pointing to member or group `id`.
pub(crate) fn reference(tag: u32, id: u32) -> ActionData {
    ActionData::new(tag, &id.to_be_bytes()[..])
}

/// `Group::expanded` of a member list.
pub(crate) fn expand(members: &[(u32, u32)]) -> Vec<u32> {
    let mut out = Vec::new();
    for &(m, w) in members {
        for _ in 0..w.max(1) {
            out.push(m);
        }
    }
    out
}
