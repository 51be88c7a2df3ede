//! Client arbitration (P4Runtime §5 "Client Arbitration and Controller Replication", v1.1+
//! semantics): per role, the primary is the client whose election id equals the highest ever
//! seen for that role; when it leaves there is no primary until a client reaches that id again.
//! Every client of a role is told (`MasterArbitrationUpdate` with `OK` for the primary,
//! `ALREADY_EXISTS` for backups when a primary exists, `NOT_FOUND` when none does, and the
//! highest election id) whenever the primary changes.

use crate::pb::google::rpc;
use crate::pb::p4::v1 as p4;
use std::collections::HashMap;
use tokio::sync::mpsc;
use tonic::{Code, Status};

/// Where a stream's messages go.
#[derive(Clone)]
pub struct Outbox(pub mpsc::Sender<Result<p4::StreamMessageResponse, Status>>);

struct Client {
    outbox: Outbox,
    /// `None` until the first arbitration message.
    role: Option<String>,
    device_id: u64,
    role_msg: Option<p4::Role>,
    election_id: Option<u128>,
}

#[derive(Default)]
struct RoleState {
    highest: Option<u128>,
    config: Option<prost_types::Any>,
}

/// The arbitration state of a device.
#[derive(Default)]
pub struct Arbitration {
    clients: HashMap<u64, Client>,
    roles: HashMap<String, RoleState>,
    next: u64,
}

fn u128_msg(v: u128) -> p4::Uint128 {
    p4::Uint128 {
        high: (v >> 64) as u64,
        low: v as u64,
    }
}

impl Arbitration {
    /// Registers a new stream; returns its handle.
    pub fn open(&mut self, outbox: Outbox) -> u64 {
        self.next += 1;
        self.clients.insert(
            self.next,
            Client {
                outbox,
                role: None,
                device_id: 0,
                role_msg: None,
                election_id: None,
            },
        );
        self.next
    }

    /// Whether the stream has already arbitrated (so a different device id is a change).
    pub fn is_open_with_device(&self, stream: u64) -> bool {
        self.clients.get(&stream).is_some_and(|c| c.role.is_some())
    }

    fn primary_of(&self, role: &str) -> Option<u64> {
        let highest = self.roles.get(role)?.highest?;
        self.clients
            .iter()
            .find(|(_, c)| c.role.as_deref() == Some(role) && c.election_id == Some(highest))
            .map(|(id, _)| *id)
    }

    /// Handles an arbitration message of `stream`. An error terminates the stream.
    pub fn arbitrate(
        &mut self,
        stream: u64,
        device_id: u64,
        role: Option<p4::Role>,
        election_id: Option<u128>,
    ) -> Result<(), Status> {
        let name = role.as_ref().map(|r| r.name.clone()).unwrap_or_default();
        let Some(c) = self.clients.get(&stream) else {
            return Err(Status::internal("unknown stream"));
        };
        if let Some(r) = &c.role {
            if *r != name || c.device_id != device_id {
                return Err(Status::failed_precondition(
                    "a stream cannot change its device id or role",
                ));
            }
        }
        if let Some(e) = election_id {
            if self.clients.iter().any(|(id, o)| {
                *id != stream
                    && o.role.as_deref() == Some(name.as_str())
                    && o.election_id == Some(e)
            }) {
                return Err(Status::invalid_argument("Election id already exists"));
            }
        }
        let before = self.primary_of(&name);
        if let Some(c) = self.clients.get_mut(&stream) {
            c.role = Some(name.clone());
            c.device_id = device_id;
            c.role_msg = role.clone();
            c.election_id = election_id;
        }
        let st = self.roles.entry(name.clone()).or_default();
        if let Some(e) = election_id {
            if st.highest.is_none_or(|h| e >= h) {
                st.highest = Some(e);
                if let Some(cfg) = role.as_ref().and_then(|r| r.config.clone()) {
                    st.config = Some(cfg);
                }
            }
        }
        let after = self.primary_of(&name);
        if before != after {
            self.notify_all(&name);
        } else {
            self.notify(stream);
        }
        Ok(())
    }

    /// Removes a stream; if it was the primary, every other client of its role is told.
    pub fn close(&mut self, stream: u64) {
        let Some(c) = self.clients.get(&stream) else {
            return;
        };
        let role = c.role.clone();
        let was_primary = role
            .as_deref()
            .is_some_and(|r| self.primary_of(r) == Some(stream));
        self.clients.remove(&stream);
        if let (true, Some(r)) = (was_primary, role) {
            self.notify_all(&r);
        }
    }

    fn message_for(&self, stream: u64) -> Option<(Outbox, p4::StreamMessageResponse)> {
        let c = self.clients.get(&stream)?;
        let role = c.role.clone()?;
        let st = self.roles.get(&role);
        let primary = self.primary_of(&role);
        let (code, text) = match primary {
            Some(p) if p == stream => (Code::Ok, "primary"),
            Some(_) => (Code::AlreadyExists, "backup; a primary exists"),
            None => (Code::NotFound, "backup; no primary"),
        };
        let role_msg = c.role_msg.clone().map(|mut r| {
            r.config = st.and_then(|s| s.config.clone());
            r
        });
        let m = p4::MasterArbitrationUpdate {
            device_id: c.device_id,
            role: role_msg,
            election_id: st.and_then(|s| s.highest).map(u128_msg),
            status: Some(rpc::Status {
                code: code as i32,
                message: text.into(),
                details: Vec::new(),
            }),
        };
        Some((
            c.outbox.clone(),
            p4::StreamMessageResponse {
                update: Some(p4::stream_message_response::Update::Arbitration(m)),
            },
        ))
    }

    fn notify(&self, stream: u64) {
        if let Some((o, m)) = self.message_for(stream) {
            let _ = o.0.try_send(Ok(m));
        }
    }

    fn notify_all(&self, role: &str) {
        for (id, c) in &self.clients {
            if c.role.as_deref() == Some(role) {
                self.notify(*id);
            }
        }
    }

    /// Whether a request with this role and election id comes from the primary.
    pub fn is_primary(&self, role: &str, election_id: Option<u128>) -> bool {
        match (self.roles.get(role).and_then(|s| s.highest), election_id) {
            (Some(h), Some(e)) => h == e && self.primary_of(role).is_some(),
            _ => false,
        }
    }

    /// Whether a stream is its role's primary.
    pub fn stream_is_primary(&self, stream: u64) -> bool {
        let Some(role) = self.clients.get(&stream).and_then(|c| c.role.clone()) else {
            return false;
        };
        self.primary_of(&role) == Some(stream)
    }

    /// Sends a message to the primary of `role`; false if there is none (or its queue is
    /// full: the message is dropped, as the spec allows for PacketIn and digests).
    pub fn send_to_primary(&self, role: &str, m: p4::StreamMessageResponse) -> bool {
        match self.primary_of(role).and_then(|p| self.clients.get(&p)) {
            Some(c) => c.outbox.0.try_send(Ok(m)).is_ok(),
            None => false,
        }
    }
}
