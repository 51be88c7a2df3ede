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
//!
//! One-shot action sets (P4Runtime §9.2.3 "One Shot Action Selector Programming") are hidden
//! groups with their actions inline ([`OneShot`], tag [`ACTION_ONESHOT`]): they belong to one
//! entry, are not members or groups a read of the profile shows, and a modify of the entry
//! replaces the set in place under the lock (packets see the old or the new set, never none).
//!
//! Watch ports (P4Runtime §9.3 "watch_port"): a group member or set action whose watch port is
//! down ([`PortStatus`]) is left out of the selection; when every one is down the group is
//! empty for the packet: the entry hits and runs no action (nevermiss has no
//! `psa_empty_group_action`), as for a group without members.

use crate::types::{GroupMember, WatchPort};
use nevermiss_tables::ActionData;
use p4_ir::ir::{FnId, Table as TableDef};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Action id of an entry that points to a member (parameters: the member id, big-endian).
pub const ACTION_MEMBER: u32 = u32::MAX - 1;
/// Action id of an entry that points to a group (parameters: the group id, big-endian).
pub const ACTION_GROUP: u32 = u32::MAX - 2;
/// Action id of an entry with a one-shot action set (parameters: its hidden id, big-endian).
pub const ACTION_ONESHOT: u32 = u32::MAX - 3;

/// How long a one-shot set stays resolvable after its entry was deleted or replaced, for the
/// packets that looked the entry up just before (they run its action, never none).
pub(crate) const RETIRE_NS: u64 = 1_000_000_000;

/// Which ports are down (P4Runtime watch ports). Every port is up until told otherwise; the
/// run loop reports the link state of interface ports ([`nevermiss_io::Port::link_up`]).
#[derive(Default)]
pub struct PortStatus {
    down: RwLock<Vec<u32>>,
    n_down: AtomicUsize,
}

impl PortStatus {
    /// Records port `port`'s state; true if it changed.
    pub fn set(&self, port: u32, up: bool) -> bool {
        if self.is_up(port) == up {
            return false;
        }
        let mut d = self.down.write().unwrap_or_else(PoisonError::into_inner);
        match (d.binary_search(&port), up) {
            (Ok(i), true) => {
                d.remove(i);
            }
            (Err(i), false) => d.insert(i, port),
            _ => return false,
        }
        self.n_down.store(d.len(), Relaxed);
        true
    }

    /// Whether port `port` is up.
    pub fn is_up(&self, port: u32) -> bool {
        if self.n_down.load(Relaxed) == 0 {
            return true;
        }
        let d = self.down.read().unwrap_or_else(PoisonError::into_inner);
        d.binary_search(&port).is_err()
    }

    /// The ports that are down, in order.
    pub fn down(&self) -> Vec<u32> {
        self.down
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// One slot of a group's weighted selection: a member (or a one-shot set's action index) and
/// the port its liveness depends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Slot {
    pub member: u32,
    pub watch: Option<u32>,
}

/// The slots of `(member, weight, watch)`: each member `weight` times.
pub(crate) fn slots(members: impl Iterator<Item = (u32, u32, Option<u32>)>) -> Vec<Slot> {
    let mut out = Vec::new();
    for (member, w, watch) in members {
        for _ in 0..w.max(1) {
            out.push(Slot { member, watch });
        }
    }
    out
}

/// The slot a packet with selector hash `sel()` takes among the live ones; `None` when there
/// is none (an empty group, or every watch port down).
fn pick(slots: &[Slot], ports: &PortStatus, sel: impl FnOnce() -> u64) -> Option<u32> {
    let n = slots.len() as u64;
    if n == 0 {
        return None;
    }
    if ports.n_down.load(Relaxed) == 0 || slots.iter().all(|s| s.watch.is_none()) {
        return Some(slots[(sel() % n) as usize].member);
    }
    let down = ports.down.read().unwrap_or_else(PoisonError::into_inner);
    let up = |s: &&Slot| s.watch.is_none_or(|p| down.binary_search(&p).is_err());
    let live = slots.iter().filter(up).count() as u64;
    if live == 0 {
        return None;
    }
    let k = (sel() % live) as usize;
    slots.iter().filter(up).nth(k).map(|s| s.member)
}

/// A member: an action (by function, so that every table sharing the profile finds it in its
/// own action list) with packed parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Member {
    pub func: FnId,
    pub params: Vec<u8>,
    /// Groups and entries that point to it.
    pub refs: u32,
}

/// A group: members with weights and watch ports; `expanded` repeats each member `weight`
/// times (what the data plane indexes with its hash).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Group {
    pub members: Vec<GroupMember>,
    pub max_size: u32,
    pub expanded: Vec<Slot>,
    /// Entries that point to it.
    pub refs: u32,
}

/// A one-shot action set: its actions (function, packed parameters, weight, watch port) and
/// their slots (`Slot::member` is an index into `actions`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct OneShot {
    pub actions: Vec<(FnId, Vec<u8>, u32, Option<WatchPort>)>,
    pub expanded: Vec<Slot>,
    /// When its entry let go of it (`Switch::now_ns`); removed [`RETIRE_NS`] later.
    pub retired_ns: Option<u64>,
}

impl OneShot {
    pub fn new(actions: Vec<(FnId, Vec<u8>, u32, Option<WatchPort>)>) -> OneShot {
        let expanded = slots(
            actions
                .iter()
                .enumerate()
                .map(|(i, a)| (i as u32, a.2, a.3.map(|w| w.port))),
        );
        OneShot {
            actions,
            expanded,
            retired_ns: None,
        }
    }
}

#[derive(Default, Clone, Debug)]
pub(crate) struct ProfileState {
    pub members: HashMap<u32, Member>,
    pub groups: HashMap<u32, Group>,
    /// One-shot sets by hidden id (retired ones included until removed).
    pub oneshots: HashMap<u32, OneShot>,
    pub next_oneshot: u32,
}

impl ProfileState {
    /// Actions of the live one-shot sets (each counts as a member of the profile).
    pub fn oneshot_actions(&self) -> usize {
        self.oneshots
            .values()
            .filter(|o| o.retired_ns.is_none())
            .map(|o| o.actions.len())
            .sum()
    }

    /// Whether the profile is programmed with one-shot sets (live ones).
    pub fn has_oneshots(&self) -> bool {
        self.oneshots.values().any(|o| o.retired_ns.is_none())
    }

    /// Stores a new one-shot set; returns its hidden id. Removes sets retired long enough.
    pub fn add_oneshot(&mut self, o: OneShot, now_ns: u64) -> u32 {
        self.oneshots.retain(|_, o| {
            o.retired_ns
                .is_none_or(|t| now_ns.saturating_sub(t) < RETIRE_NS)
        });
        loop {
            self.next_oneshot = self.next_oneshot.wrapping_add(1);
            let id = self.next_oneshot;
            if let std::collections::hash_map::Entry::Vacant(v) = self.oneshots.entry(id) {
                v.insert(o);
                return id;
            }
        }
    }
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
    /// parameters. `sel` is the hash of the selector fields (groups and one-shot sets), `ports`
    /// which watch ports are down. Returns false, leaving `data` unusable (`ACTION_NONE`), for
    /// a dangling reference, an action `td` lacks, or a group with no live member.
    pub fn resolve(
        &self,
        td: &TableDef,
        data: &mut ActionData,
        ports: &PortStatus,
        sel: impl FnOnce() -> u64,
    ) -> bool {
        let id = match <[u8; 4]>::try_from(&data.params[..]) {
            Ok(b) => u32::from_be_bytes(b),
            Err(_) => return false,
        };
        let st = self.read();
        let member = match data.action {
            ACTION_MEMBER => st.members.get(&id).map(|m| (m.func, &m.params[..])),
            ACTION_GROUP => st.groups.get(&id).and_then(|g| {
                pick(&g.expanded, ports, sel)
                    .and_then(|m| st.members.get(&m))
                    .map(|m| (m.func, &m.params[..]))
            }),
            ACTION_ONESHOT => st.oneshots.get(&id).and_then(|o| {
                pick(&o.expanded, ports, sel)
                    .and_then(|i| o.actions.get(i as usize))
                    .map(|a| (a.0, &a.1[..]))
            }),
            _ => return true,
        };
        match member.and_then(|(f, p)| td.action_of(f).map(|a| (a, p))) {
            Some((a, params)) => {
                data.action = a;
                data.params.set(params);
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
pub(crate) fn expand(members: &[GroupMember]) -> Vec<Slot> {
    slots(
        members
            .iter()
            .map(|m| (m.id, m.weight, m.watch.map(|w| w.port))),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selection_skips_slots_whose_watch_port_is_down() {
        let ports = PortStatus::default();
        let s = slots([(1, 1, Some(7)), (2, 2, None), (3, 1, Some(8))].into_iter());
        assert_eq!(s.len(), 4);
        let all: Vec<u32> = (0..4).map(|h| pick(&s, &ports, || h).unwrap()).collect();
        assert_eq!(all, vec![1, 2, 2, 3]);
        assert!(ports.set(7, false));
        assert!(!ports.set(7, false));
        assert!(!ports.is_up(7) && ports.is_up(8));
        let live: Vec<u32> = (0..6).map(|h| pick(&s, &ports, || h).unwrap()).collect();
        assert_eq!(live, vec![2, 2, 3, 2, 2, 3]);
        ports.set(8, false);
        let s2 = slots([(1, 1, Some(7)), (3, 1, Some(8))].into_iter());
        assert_eq!(
            pick(&s2, &ports, || 0),
            None,
            "every watch port down: no member"
        );
        ports.set(7, true);
        assert_eq!(pick(&s2, &ports, || 5), Some(1));
        assert_eq!(ports.down(), vec![8]);
        assert_eq!(pick(&[], &ports, || 0), None);
    }
}
