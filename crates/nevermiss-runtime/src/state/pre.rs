//! The packet replication engine: clone and mirror sessions, multicast groups (P4Runtime §9.6
//! "PacketReplicationEngineEntry"; BMv2's `mirroring_*` and `mc_*` CLI commands). The data
//! plane reads the maps under shared locks; the control plane writes them, and keeps the
//! entities as it wrote them ([`Written`]) for reads and undo.

use crate::types::{CloneSession, MulticastGroup, Replica};
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Sessions and groups as the data plane uses them.
#[derive(Default)]
pub(crate) struct Pre {
    /// Clone / mirror session → egress port.
    sessions: RwLock<HashMap<u32, u32>>,
    /// Clone / mirror session → multicast group (`mirroring_add_mc`).
    session_groups: RwLock<HashMap<u32, u32>>,
    /// Multicast group → (port, replication id) list.
    mc_groups: RwLock<HashMap<u32, Vec<(u32, u32)>>>,
    /// Clone session → its replicas (P4Runtime sessions of more than one replica).
    clone_replicas: RwLock<HashMap<u32, Vec<(u32, u32)>>>,
    /// The entities as the controller wrote them.
    written: Mutex<Written>,
}

/// Multicast groups and clone sessions as the controller wrote them.
#[derive(Default, Clone)]
pub(crate) struct Written {
    pub groups: HashMap<u32, MulticastGroup>,
    pub sessions: HashMap<u32, CloneSession>,
}

fn read<T>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(PoisonError::into_inner)
}

fn write<T>(l: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(PoisonError::into_inner)
}

/// (port, instance) of each replica.
fn pairs(rs: &[Replica]) -> Vec<(u32, u32)> {
    rs.iter().map(|r| (r.port, r.instance)).collect()
}

impl Pre {
    // ------------------------------------------------------------------ the data plane

    /// The clone / mirror sessions' ports, held for reading.
    pub(crate) fn sessions(&self) -> RwLockReadGuard<'_, HashMap<u32, u32>> {
        read(&self.sessions)
    }

    /// The port of clone session `sess`.
    pub(crate) fn session_port(&self, sess: u32) -> Option<u32> {
        read(&self.sessions).get(&sess).copied()
    }

    /// The destinations of clone session `sess`: its port, or the ports of its multicast
    /// group, as (port, replication id).
    pub(crate) fn session_ports(&self, sess: u32) -> Vec<(u32, u32)> {
        if let Some(p) = self.session_port(sess) {
            return vec![(p, 0)];
        }
        let g = read(&self.session_groups).get(&sess).copied();
        match g {
            Some(g) => self.group(g),
            None => Vec::new(),
        }
    }

    /// The (port, replication id) members of multicast group `g` (none for an unknown group).
    pub(crate) fn group(&self, g: u32) -> Vec<(u32, u32)> {
        read(&self.mc_groups).get(&g).cloned().unwrap_or_default()
    }

    // ------------------------------------------------------------------ P4Runtime

    /// The entities as the controller wrote them, locked (the lock serializes the writes of
    /// the maps below).
    pub(crate) fn written(&self) -> MutexGuard<'_, Written> {
        self.written.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Multicast group `id`'s members become `replicas` (`None`: the group is removed).
    pub(crate) fn set_group(&self, id: u32, replicas: Option<&[Replica]>) {
        let mut groups = write(&self.mc_groups);
        match replicas {
            Some(rs) => {
                groups.insert(id, pairs(rs));
            }
            None => {
                groups.remove(&id);
            }
        }
    }

    /// Clone session `id`'s replicas become `replicas` (`None`: the session is removed): the
    /// first replica's port is the session's, and a session of several keeps them all.
    pub(crate) fn set_session(&self, id: u32, replicas: Option<&[Replica]>) {
        let mut ports = write(&self.sessions);
        let mut reps = write(&self.clone_replicas);
        ports.remove(&id);
        reps.remove(&id);
        let Some(rs) = replicas else {
            return;
        };
        if let Some(r) = rs.first() {
            ports.insert(id, r.port);
        }
        if rs.len() > 1 {
            reps.insert(id, pairs(rs));
        }
    }

    // ------------------------------------------------------------------ BMv2's CLI (STF)

    /// `mirroring_add`: session `sess` sends to `port`.
    pub(crate) fn add_mirror(&self, sess: u32, port: u32) {
        write(&self.sessions).insert(sess, port);
    }

    /// `mirroring_delete`.
    pub(crate) fn delete_mirror(&self, sess: u32) {
        write(&self.sessions).remove(&sess);
    }

    /// `mirroring_add_mc`: session `sess` sends to multicast group `g`.
    pub(crate) fn add_mirror_group(&self, sess: u32, g: u32) {
        write(&self.session_groups).insert(sess, g);
    }

    /// `mc_mgrp_create`: group `g` exists (without members if new).
    pub(crate) fn create_group(&self, g: u32) {
        write(&self.mc_groups).entry(g).or_default();
    }

    /// `mc_node_associate`: `ports` join group `g` with replication id `rid`.
    pub(crate) fn add_to_group(&self, g: u32, rid: u32, ports: &[u32]) {
        let mut groups = write(&self.mc_groups);
        let members = groups.entry(g).or_default();
        for &p in ports {
            members.push((p, rid));
        }
    }
}
