//! Digest entries (P4Runtime §9.10 "DigestEntry"): their configurations are the server's own
//! state (`server.rs` writes them and sends the digest lists); this is their read.

use super::entity;
use crate::pb::p4::v1 as p4;

use p4::entity::Entity as E;

/// A read of one digest's configuration or all (id 0), from `configs` (by id, ascending).
pub(super) fn read(
    d: &p4::DigestEntry,
    configs: Vec<(u32, p4::digest_entry::Config)>,
) -> Vec<p4::Entity> {
    configs
        .into_iter()
        .filter(|(id, _)| d.digest_id == 0 || *id == d.digest_id)
        .map(|(id, config)| {
            entity(E::DigestEntry(p4::DigestEntry {
                digest_id: id,
                config: Some(config),
            }))
        })
        .collect()
}
