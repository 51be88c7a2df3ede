//! The packet replication engine: multicast groups and clone sessions (P4Runtime §9.6
//! "PacketReplicationEngineEntry").

use super::*;

impl Switch {
    /// The multicast groups (all, or the one with id `id`).
    pub fn read_multicast_groups(&self, id: Option<u32>) -> Vec<MulticastGroup> {
        let pre = self.pre().written();
        let mut out: Vec<MulticastGroup> = pre
            .groups
            .values()
            .filter(|g| id.is_none_or(|i| i == g.id))
            .cloned()
            .collect();
        out.sort_by_key(|g| g.id);
        out
    }

    /// The clone sessions (all, or the one with id `id`).
    pub fn read_clone_sessions(&self, id: Option<u32>) -> Vec<CloneSession> {
        let pre = self.pre().written();
        let mut out: Vec<CloneSession> = pre
            .sessions
            .values()
            .filter(|s| id.is_none_or(|i| i == s.id))
            .cloned()
            .collect();
        out.sort_by_key(|s| s.id);
        out
    }

    pub(super) fn write_multicast(
        &self,
        op: Op,
        g: &MulticastGroup,
    ) -> ControlResult<(Applied, Change)> {
        if g.id == 0 {
            return Err(invalid("multicast group id 0 is reserved"));
        }
        let mut pre = self.pre().written();
        let old = pre.groups.get(&g.id).cloned();
        let undo = match (op, old) {
            (Op::Insert, Some(_)) => {
                return Err(ControlError::AlreadyExists(format!(
                    "multicast group {} exists",
                    g.id
                )))
            }
            (Op::Modify | Op::Delete, None) => {
                return Err(ControlError::NotFound(format!(
                    "multicast group {} does not exist",
                    g.id
                )))
            }
            (Op::Insert, None) => Change::Multicast(Op::Delete, g.clone()),
            (Op::Modify, Some(o)) => Change::Multicast(Op::Modify, o),
            (Op::Delete, Some(o)) => Change::Multicast(Op::Insert, o),
        };
        if op != Op::Delete {
            check_replicas(&g.replicas)?;
        }
        if op == Op::Delete {
            pre.groups.remove(&g.id);
            self.pre().set_group(g.id, None);
        } else {
            pre.groups.insert(g.id, g.clone());
            self.pre().set_group(g.id, Some(&g.replicas));
        }
        Ok((self.applied(), undo))
    }

    pub(super) fn write_clone(&self, op: Op, s: &CloneSession) -> ControlResult<(Applied, Change)> {
        if s.id == 0 {
            return Err(invalid("clone session id 0 is reserved"));
        }
        let mut pre = self.pre().written();
        let old = pre.sessions.get(&s.id).cloned();
        let undo = match (op, old) {
            (Op::Insert, Some(_)) => {
                return Err(ControlError::AlreadyExists(format!(
                    "clone session {} exists",
                    s.id
                )))
            }
            (Op::Modify | Op::Delete, None) => {
                return Err(ControlError::NotFound(format!(
                    "clone session {} does not exist",
                    s.id
                )))
            }
            (Op::Insert, None) => Change::Clone(Op::Delete, s.clone()),
            (Op::Modify, Some(o)) => Change::Clone(Op::Modify, o),
            (Op::Delete, Some(o)) => Change::Clone(Op::Insert, o),
        };
        if op != Op::Delete {
            check_replicas(&s.replicas)?;
            if s.packet_length_bytes < 0 {
                return Err(invalid("packet_length_bytes must not be negative"));
            }
        }
        if op == Op::Delete {
            pre.sessions.remove(&s.id);
            self.pre().set_session(s.id, None);
        } else {
            pre.sessions.insert(s.id, s.clone());
            self.pre().set_session(s.id, Some(&s.replicas));
        }
        Ok((self.applied(), undo))
    }
}

pub(super) fn check_replicas(rs: &[Replica]) -> ControlResult<()> {
    let mut seen = std::collections::HashSet::new();
    for r in rs {
        if !seen.insert((r.port, r.instance)) {
            return Err(invalid(format!(
                "replica (port {}, instance {}) is given twice",
                r.port, r.instance
            )));
        }
    }
    Ok(())
}
