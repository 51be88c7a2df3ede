//! The packet replication engine's entries (P4Runtime §9.7
//! "PacketReplicationEngineEntry"): multicast groups and clone sessions.

use super::entity;
use crate::pb::p4::v1 as p4;
use crate::pipeline::Pipeline;
use nevermiss_runtime::control::{Change, CloneSession, ControlError, MulticastGroup, Op, Replica};

use p4::entity::Entity as E;
use p4::packet_replication_engine_entry::Type as T;

/// A write of a multicast group or a clone session (id 0 is refused).
pub(super) fn translate(
    op: Op,
    pre: &p4::PacketReplicationEngineEntry,
) -> Result<Change, ControlError> {
    match &pre.r#type {
        Some(T::MulticastGroupEntry(g)) => {
            if g.multicast_group_id == 0 {
                return Err(ControlError::InvalidArgument(
                    "multicast_group_id must be set".into(),
                ));
            }
            Ok(Change::Multicast(
                op,
                MulticastGroup {
                    id: g.multicast_group_id,
                    replicas: replicas(&g.replicas)?,
                    metadata: g.metadata.to_vec(),
                },
            ))
        }
        Some(T::CloneSessionEntry(s)) => {
            if s.session_id == 0 {
                return Err(ControlError::InvalidArgument(
                    "session_id must be set".into(),
                ));
            }
            Ok(Change::Clone(
                op,
                CloneSession {
                    id: s.session_id,
                    replicas: replicas(&s.replicas)?,
                    class_of_service: s.class_of_service,
                    packet_length_bytes: s.packet_length_bytes,
                },
            ))
        }
        None => Err(ControlError::InvalidArgument(
            "replication entry unset".into(),
        )),
    }
}

/// A read of multicast groups or clone sessions (id 0: all of them).
pub(super) fn read(
    p: &Pipeline,
    pre: &p4::PacketReplicationEngineEntry,
) -> Result<Vec<p4::Entity>, ControlError> {
    let wrap = |t: T| {
        entity(E::PacketReplicationEngineEntry(
            p4::PacketReplicationEngineEntry { r#type: Some(t) },
        ))
    };
    match &pre.r#type {
        Some(T::MulticastGroupEntry(g)) => {
            let id = (g.multicast_group_id != 0).then_some(g.multicast_group_id);
            Ok(p.sw
                .read_multicast_groups(id)
                .into_iter()
                .map(|g| {
                    wrap(T::MulticastGroupEntry(p4::MulticastGroupEntry {
                        multicast_group_id: g.id,
                        replicas: g.replicas.iter().map(replica_of).collect(),
                        metadata: g.metadata.into(),
                    }))
                })
                .collect())
        }
        Some(T::CloneSessionEntry(s)) => {
            let id = (s.session_id != 0).then_some(s.session_id);
            Ok(p.sw
                .read_clone_sessions(id)
                .into_iter()
                .map(|s| {
                    wrap(T::CloneSessionEntry(p4::CloneSessionEntry {
                        session_id: s.id,
                        replicas: s.replicas.iter().map(replica_of).collect(),
                        class_of_service: s.class_of_service,
                        packet_length_bytes: s.packet_length_bytes,
                    }))
                })
                .collect())
        }
        None => Err(ControlError::InvalidArgument(
            "replication entry unset".into(),
        )),
    }
}

/// The message of a replica (its port as a canonical bytestring).
fn replica_of(r: &Replica) -> p4::Replica {
    p4::Replica {
        instance: r.instance,
        backup_replicas: Vec::new(),
        port_kind: Some(p4::replica::PortKind::Port(crate::pipeline::canonical(
            &r.port.to_be_bytes(),
        ))),
    }
}

/// The replicas of a write: a port as a bytestring of at most 32 bits, or the deprecated
/// `egress_port`.
fn replicas(rs: &[p4::Replica]) -> Result<Vec<Replica>, ControlError> {
    rs.iter()
        .map(|r| {
            #[allow(deprecated)]
            let port = match &r.port_kind {
                Some(p4::replica::PortKind::EgressPort(p)) => *p,
                Some(p4::replica::PortKind::Port(b)) => {
                    if b.is_empty() || b.len() > 4 && b[..b.len() - 4].iter().any(|x| *x != 0) {
                        return Err(ControlError::InvalidArgument(
                            "replica port must be a bytestring of at most 32 bits".into(),
                        ));
                    }
                    b.iter().fold(0u32, |a, x| (a << 8) | u32::from(*x))
                }
                None => return Err(ControlError::InvalidArgument("replica port unset".into())),
            };
            Ok(Replica {
                port,
                instance: r.instance,
            })
        })
        .collect()
}
