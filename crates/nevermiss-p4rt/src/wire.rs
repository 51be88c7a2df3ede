//! A faster decoder of the one message a controller sends by the thousand: the `WriteRequest`
//! whose updates are table entries. It reads the protobuf wire format straight from the
//! frame (no `Buf` calls, no per-message recursion bookkeeping) and yields exactly the struct
//! prost yields. It handles the shapes controllers send — the fields of a table entry with
//! matches and a direct action — and hands anything else to prost: an update it does not
//! handle (another entity, a meter config, …) is decoded by prost on its own, and a request
//! with anything unexpected at the top (an unknown field, a field repeated where prost would
//! merge, a malformed varint) is decoded by prost whole, so errors are prost's. (An update
//! decoded by prost on its own starts prost's nesting count afresh: a request whose update
//! nests messages within two levels of prost's limit of 100 is accepted here; the server
//! refuses such updates anyway.)

#![allow(deprecated)] // `role_id` and `controller_metadata` are deprecated but still decoded, as prost does.

use crate::pb::p4::v1 as p4;
use prost::bytes::Bytes;
use prost::Message;

/// Decodes a `WriteRequest` from its frame: as `p4::WriteRequest::decode(frame)`.
pub fn decode_write_request(frame: Bytes) -> Result<p4::WriteRequest, prost::DecodeError> {
    match write_request(&frame) {
        Some(w) => Ok(w),
        None => p4::WriteRequest::decode(frame),
    }
}

/// A reader of the bytes `[pos, end)` of a frame.
struct Rd<'a> {
    b: &'a [u8],
    pos: usize,
    end: usize,
}

impl<'a> Rd<'a> {
    fn new(b: &'a [u8], (pos, end): (usize, usize)) -> Rd<'a> {
        Rd { b, pos, end }
    }

    fn more(&self) -> bool {
        self.pos < self.end
    }

    /// A varint of at most 10 bytes whose tenth byte is 0 or 1 (else prost's error).
    #[inline(always)]
    fn varint(&mut self) -> Option<u64> {
        // Keys, lengths and ids below 128: one byte.
        if self.pos < self.end {
            if let Some(&b) = self.b.get(self.pos) {
                if b < 0x80 {
                    self.pos += 1;
                    return Some(u64::from(b));
                }
            }
        }
        self.varint_long()
    }

    #[inline(never)]
    fn varint_long(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for i in 0..10 {
            if self.pos >= self.end {
                return None;
            }
            let byte = *self.b.get(self.pos)?;
            self.pos += 1;
            if i == 9 && byte > 1 {
                return None;
            }
            v |= u64::from(byte & 0x7f) << (7 * i);
            if byte < 0x80 {
                return Some(v);
            }
        }
        None
    }

    /// A field's key: (field number, wire type).
    #[inline(always)]
    fn key(&mut self) -> Option<(u64, u8)> {
        let k = self.varint()?;
        if k > u64::from(u32::MAX) {
            return None;
        }
        Some((k >> 3, (k & 7) as u8))
    }

    /// The range of a length-delimited field's contents.
    #[inline(always)]
    fn delimited(&mut self) -> Option<(usize, usize)> {
        let len = usize::try_from(self.varint()?).ok()?;
        if len > self.end - self.pos {
            return None;
        }
        let start = self.pos;
        self.pos += len;
        Some((start, self.pos))
    }
}

const VARINT: u8 = 0;
const DELIMITED: u8 = 2;

fn write_request(frame: &Bytes) -> Option<p4::WriteRequest> {
    let mut r = Rd::new(frame, (0, frame.len()));
    let mut w = p4::WriteRequest::default();
    while r.more() {
        match r.key()? {
            (1, VARINT) => w.device_id = r.varint()?,
            (2, VARINT) => w.role_id = r.varint()?,
            (3, DELIMITED) if w.election_id.is_none() => {
                w.election_id = Some(uint128(frame, r.delimited()?)?)
            }
            (4, DELIMITED) => {
                let at = r.delimited()?;
                w.updates.push(match update(frame, at) {
                    Some(u) => u,
                    None => p4::Update::decode(frame.slice(at.0..at.1)).ok()?,
                });
            }
            (5, VARINT) => w.atomicity = r.varint()? as i32,
            (6, DELIMITED) => {
                let (s, e) = r.delimited()?;
                w.role = std::str::from_utf8(&frame[s..e]).ok()?.to_owned();
            }
            _ => return None,
        }
    }
    Some(w)
}

fn uint128(frame: &[u8], at: (usize, usize)) -> Option<p4::Uint128> {
    let mut r = Rd::new(frame, at);
    let mut u = p4::Uint128::default();
    while r.more() {
        match r.key()? {
            (1, VARINT) => u.high = r.varint()?,
            (2, VARINT) => u.low = r.varint()?,
            _ => return None,
        }
    }
    Some(u)
}

fn update(frame: &Bytes, at: (usize, usize)) -> Option<p4::Update> {
    let mut r = Rd::new(frame, at);
    let mut u = p4::Update::default();
    while r.more() {
        match r.key()? {
            (1, VARINT) => u.r#type = r.varint()? as i32,
            (2, DELIMITED) if u.entity.is_none() => u.entity = Some(entity(frame, r.delimited()?)?),
            _ => return None,
        }
    }
    Some(u)
}

fn entity(frame: &Bytes, at: (usize, usize)) -> Option<p4::Entity> {
    let mut r = Rd::new(frame, at);
    let mut e = p4::Entity::default();
    while r.more() {
        match r.key()? {
            (2, DELIMITED) if e.entity.is_none() => {
                // Decoded in its box: a table entry is not moved once built.
                let mut te = Box::<p4::TableEntry>::default();
                table_entry(frame, r.delimited()?, &mut te)?;
                e.entity = Some(p4::entity::Entity::TableEntry(te));
            }
            _ => return None,
        }
    }
    Some(e)
}

fn table_entry(frame: &Bytes, at: (usize, usize), t: &mut p4::TableEntry) -> Option<()> {
    let mut r = Rd::new(frame, at);
    while r.more() {
        match r.key()? {
            (1, VARINT) => t.table_id = r.varint()? as u32,
            (2, DELIMITED) => t.r#match.push(field_match(frame, r.delimited()?)?),
            (3, DELIMITED) if t.action.is_none() => {
                t.action = Some(table_action(frame, r.delimited()?)?)
            }
            (4, VARINT) => t.priority = r.varint()? as i32,
            (5, VARINT) => t.controller_metadata = r.varint()?,
            (8, VARINT) => t.is_default_action = r.varint()? != 0,
            (9, VARINT) => t.idle_timeout_ns = r.varint()? as i64,
            (11, DELIMITED) => {
                let (s, e) = r.delimited()?;
                t.metadata = frame.slice(s..e);
            }
            (13, VARINT) => t.is_const = r.varint()? != 0,
            _ => return None,
        }
    }
    Some(())
}

/// The contents of a message whose fields are bytestrings: field number → slice, for field
/// numbers 1 and 2 (the last occurrence wins, as prost's), and a varint field 2 for `Lpm`.
fn two_fields(
    frame: &Bytes,
    at: (usize, usize),
    second_varint: bool,
) -> Option<(Bytes, Bytes, u64)> {
    let mut r = Rd::new(frame, at);
    let (mut a, mut b, mut n) = (Bytes::new(), Bytes::new(), 0);
    while r.more() {
        match r.key()? {
            (1, DELIMITED) => {
                let (s, e) = r.delimited()?;
                a = frame.slice(s..e);
            }
            (2, DELIMITED) if !second_varint => {
                let (s, e) = r.delimited()?;
                b = frame.slice(s..e);
            }
            (2, VARINT) if second_varint => n = r.varint()?,
            _ => return None,
        }
    }
    Some((a, b, n))
}

fn field_match(frame: &Bytes, at: (usize, usize)) -> Option<p4::FieldMatch> {
    use p4::field_match::{self as fm, FieldMatchType as F};
    let mut r = Rd::new(frame, at);
    let mut m = p4::FieldMatch::default();
    while r.more() {
        let (field, wire) = r.key()?;
        if field == 1 && wire == VARINT {
            m.field_id = r.varint()? as u32;
            continue;
        }
        if wire != DELIMITED || m.field_match_type.is_some() {
            return None;
        }
        let at = r.delimited()?;
        m.field_match_type = Some(match field {
            2 => F::Exact(fm::Exact {
                value: two_fields(frame, at, false).filter(|f| f.1.is_empty())?.0,
            }),
            3 => {
                let (value, mask, _) = two_fields(frame, at, false)?;
                F::Ternary(fm::Ternary { value, mask })
            }
            4 => {
                let (value, _, n) = two_fields(frame, at, true)?;
                F::Lpm(fm::Lpm {
                    value,
                    prefix_len: n as i32,
                })
            }
            6 => {
                let (low, high, _) = two_fields(frame, at, false)?;
                F::Range(fm::Range { low, high })
            }
            7 => F::Optional(fm::Optional {
                value: two_fields(frame, at, false).filter(|f| f.1.is_empty())?.0,
            }),
            _ => return None,
        });
    }
    Some(m)
}

fn table_action(frame: &Bytes, at: (usize, usize)) -> Option<p4::TableAction> {
    let mut r = Rd::new(frame, at);
    let mut a = p4::TableAction::default();
    while r.more() {
        match r.key()? {
            (1, DELIMITED) if a.r#type.is_none() => {
                a.r#type = Some(p4::table_action::Type::Action(action(
                    frame,
                    r.delimited()?,
                )?))
            }
            _ => return None,
        }
    }
    Some(a)
}

fn action(frame: &Bytes, at: (usize, usize)) -> Option<p4::Action> {
    let mut r = Rd::new(frame, at);
    let mut a = p4::Action::default();
    while r.more() {
        match r.key()? {
            (1, VARINT) => a.action_id = r.varint()? as u32,
            (4, DELIMITED) => {
                let mut pr = Rd::new(frame, r.delimited()?);
                let mut p = p4::action::Param::default();
                while pr.more() {
                    match pr.key()? {
                        (2, VARINT) => p.param_id = pr.varint()? as u32,
                        (3, DELIMITED) => {
                            let (s, e) = pr.delimited()?;
                            p.value = frame.slice(s..e);
                        }
                        _ => return None,
                    }
                }
                a.params.push(p);
            }
            _ => return None,
        }
    }
    Some(a)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn bytes() -> impl Strategy<Value = Bytes> {
        prop::collection::vec(any::<u8>(), 0..5).prop_map(Bytes::from)
    }

    fn field_match() -> impl Strategy<Value = p4::FieldMatch> {
        use p4::field_match::{self as fm, FieldMatchType as F};
        let kind = prop_oneof![
            bytes().prop_map(|value| Some(F::Exact(fm::Exact { value }))),
            (bytes(), bytes())
                .prop_map(|(value, mask)| Some(F::Ternary(fm::Ternary { value, mask }))),
            (bytes(), any::<i32>())
                .prop_map(|(value, prefix_len)| Some(F::Lpm(fm::Lpm { value, prefix_len }))),
            (bytes(), bytes()).prop_map(|(low, high)| Some(F::Range(fm::Range { low, high }))),
            bytes().prop_map(|value| Some(F::Optional(fm::Optional { value }))),
            Just(Some(F::Other(prost_types::Any::default()))),
            Just(None),
        ];
        (any::<u32>(), kind).prop_map(|(field_id, field_match_type)| p4::FieldMatch {
            field_id,
            field_match_type,
        })
    }

    fn table_entry() -> impl Strategy<Value = p4::TableEntry> {
        let action = prop_oneof![
            (
                any::<u32>(),
                prop::collection::vec((any::<u32>(), bytes()), 0..3)
            )
                .prop_map(|(action_id, ps)| Some(p4::TableAction {
                    r#type: Some(p4::table_action::Type::Action(p4::Action {
                        action_id,
                        params: ps
                            .into_iter()
                            .map(|(param_id, value)| p4::action::Param { param_id, value })
                            .collect(),
                    })),
                })),
            any::<u32>().prop_map(|m| Some(p4::TableAction {
                r#type: Some(p4::table_action::Type::ActionProfileMemberId(m)),
            })),
            Just(Some(p4::TableAction::default())),
            Just(None),
        ];
        (
            (any::<u32>(), prop::collection::vec(field_match(), 0..3), action),
            (any::<i32>(), any::<u64>(), any::<bool>(), any::<i64>(), bytes(), any::<bool>()),
            prop_oneof![3 => Just(None), 1 => Just(Some(p4::CounterData { byte_count: 1, packet_count: 2 }))],
        )
            .prop_map(
                |(
                    (table_id, r#match, action),
                    (priority, controller_metadata, is_default_action, idle_timeout_ns, metadata, is_const),
                    counter_data,
                )| {
                    #[allow(deprecated)]
                    p4::TableEntry {
                        table_id,
                        r#match,
                        action,
                        priority,
                        controller_metadata,
                        is_default_action,
                        idle_timeout_ns,
                        metadata,
                        is_const,
                        counter_data,
                        ..Default::default()
                    }
                },
            )
    }

    fn request() -> impl Strategy<Value = p4::WriteRequest> {
        let entity = prop_oneof![
            4 => table_entry().prop_map(|t| Some(p4::entity::Entity::TableEntry(Box::new(t)))),
            1 => (any::<u32>(), prop::option::of(any::<i64>())).prop_map(|(counter_id, i)| Some(
                p4::entity::Entity::CounterEntry(p4::CounterEntry {
                    counter_id,
                    index: i.map(|index| p4::Index { index }),
                    data: None,
                })
            )),
            1 => Just(None),
        ];
        let update = (any::<i32>(), prop::option::of(entity)).prop_map(|(t, e)| p4::Update {
            r#type: t,
            entity: e.map(|entity| p4::Entity { entity }),
        });
        (
            any::<u64>(),
            prop::option::of((any::<u64>(), any::<u64>())),
            prop::collection::vec(update, 0..4),
            any::<i32>(),
            "[a-z]{0,3}",
        )
            .prop_map(|(device_id, e, updates, atomicity, role)| {
                #[allow(deprecated)]
                p4::WriteRequest {
                    device_id,
                    election_id: e.map(|(high, low)| p4::Uint128 { high, low }),
                    updates,
                    atomicity,
                    role,
                    ..Default::default()
                }
            })
    }

    /// The fast decoder's answer equals prost's: the same message, or an error as prost's.
    fn same_as_prost(b: &[u8]) -> Result<(), TestCaseError> {
        let ours = decode_write_request(Bytes::copy_from_slice(b));
        let theirs = p4::WriteRequest::decode(b);
        match (ours, theirs) {
            (Ok(a), Ok(b)) => prop_assert_eq!(a, b),
            (Err(_), Err(_)) => {}
            (a, b) => prop_assert!(false, "ours {a:?}, prost {b:?}"),
        }
        Ok(())
    }

    proptest! {
        #[test]
        fn decodes_as_prost_does(req in request()) {
            let b = req.encode_to_vec();
            prop_assert_eq!(decode_write_request(Bytes::from(b.clone())).unwrap(), req);
            same_as_prost(&b)?;
        }

        #[test]
        fn damaged_requests_decode_or_fail_as_prost_does(
            req in request(),
            edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
            cut in any::<prop::sample::Index>(),
        ) {
            let mut b = req.encode_to_vec();
            if b.is_empty() {
                return Ok(());
            }
            for (i, v) in &edits {
                let i = i.index(b.len());
                b[i] = *v;
            }
            same_as_prost(&b)?;
            let n = cut.index(b.len());
            same_as_prost(&b[..n])?;
        }

        #[test]
        fn repeated_and_unknown_fields_decode_as_prost_does(req in request(), extra in prop::collection::vec(any::<u8>(), 0..12)) {
            // Two requests back to back are one request with every field twice.
            let mut b = req.encode_to_vec();
            b.extend(req.encode_to_vec());
            same_as_prost(&b)?;
            b.extend(&extra);
            same_as_prost(&b)?;
        }
    }

    #[test]
    fn table_entry_inserts_take_the_fast_path() {
        let te = p4::TableEntry {
            table_id: 7,
            r#match: vec![p4::FieldMatch {
                field_id: 1,
                field_match_type: Some(p4::field_match::FieldMatchType::Exact(
                    p4::field_match::Exact {
                        value: Bytes::from_static(&[10, 0, 0, 1]),
                    },
                )),
            }],
            action: Some(p4::TableAction {
                r#type: Some(p4::table_action::Type::Action(p4::Action {
                    action_id: 9,
                    params: vec![p4::action::Param {
                        param_id: 1,
                        value: Bytes::from_static(&[3]),
                    }],
                })),
            }),
            ..Default::default()
        };
        let req = p4::WriteRequest {
            device_id: 1,
            election_id: Some(p4::Uint128 { high: 0, low: 1 }),
            updates: vec![p4::Update {
                r#type: 1,
                entity: Some(p4::Entity {
                    entity: Some(p4::entity::Entity::TableEntry(Box::new(te))),
                }),
            }],
            ..Default::default()
        };
        let frame = Bytes::from(req.encode_to_vec());
        assert_eq!(write_request(&frame), Some(req));
    }
}
