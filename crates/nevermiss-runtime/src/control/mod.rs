//! The control plane's typed API: everything a controller can change or read in a running
//! switch, keyed by the runtime's own indices (a table is an index into `Program::tables`, an
//! action an index into that table's `actions`, a counter, meter, register or action profile an
//! index into `Program::externs`, a value set an index into `Program::value_sets`). Names and
//! P4Info ids are the business of the layers above (the STF adapter in [`stf`], the P4Runtime
//! server in `nevermiss-p4rt`); protobuf never comes down here.
//!
//! Semantics follow the P4Runtime specification (v1.5, §9 "P4 Entity Messages", §12 "Write"),
//! so that the server only translates: every error is a [`ControlError`] whose variant is the
//! gRPC status code the specification asks for. Guarantees:
//! - writes are serialized and a read sees all or none of any write ([`Switch::write`] holds a
//!   write lock, reads a read lock);
//! - a rejected change changes nothing;
//! - a modify of an entry is atomic for packets (the table's sequence-locked cell: a packet sees
//!   the old or the new action, never a miss, never a mix; docs/tables.md);
//! - [`Atomicity::DataplaneAtomic`]: packets see the whole batch or none of it (the workers'
//!   quiescence gate, `nevermiss_tables::Gate`), and a failed batch is rolled back before any
//!   packet runs; [`Atomicity::RollbackOnError`]: a failed batch is rolled back (packets may see
//!   the intermediate states);
//! - entries the data plane added (PNA `add_entry`) are read, modified and deleted like any
//!   other.

mod batch;
mod counters;
mod meters;
mod pre;
mod profiles;
mod registers;
pub mod stf;
mod tables;
mod value_sets;

pub use crate::state::PortStatus;
pub use crate::types::{
    ActionCall, Applied, Atomicity, Change, CloneSession, ControlError, ControlResult, CounterData,
    EntryAction, EntryKey, EntryState, GroupMember, IdleNotification, MeterConfig,
    MeterCounterData, MulticastGroup, Op, ProfileGroup, ProfileMember, Replica, SavedCells,
    SetAction, TableEntry, WatchPort,
};
pub use stf::{CommandError, ControlPlane};

use meters::{configure_meter, meter_counts, set_meter_counts};

use crate::state::EntryMeta;
use crate::state::{
    expand, reference, Group, Member, OneShot, ACTION_GROUP, ACTION_MEMBER, ACTION_ONESHOT,
};
use crate::state::{Meter, GREEN, RED, YELLOW};
use crate::state::{RtExtern, RtTable, Switch};
use crate::types::Saved;
use nevermiss_tables::{ActionData, EntryHandle, EntryView, FieldMatch, Params, ACTION_NONE};
use p4_ir::ir::{ExternId, TableId, ValueSetId};
use p4_ir::{ExternKind, Layout, MatchKind, Ty};
use std::borrow::Cow;

use std::sync::{Mutex, PoisonError, RwLock};

/// An `INVALID_ARGUMENT` error.
fn invalid(m: impl Into<String>) -> ControlError {
    ControlError::InvalidArgument(m.into())
}

// ---------------------------------------------------------------------------------------------
// Control-plane state kept beside the tables

/// The idle timeout given to control-plane entries with `idle_timeout_ns == 0` in tables that
/// have idle timeouts: long enough never to run out (146 years), and it keeps the entry's
/// timer running so that `elapsed_ns` can be reported.
const NEVER_NS: u64 = 1 << 62;

// ---------------------------------------------------------------------------------------------
// Values

/// Whether big-endian `v` fits `width` bits (leading zero bytes allowed).
fn fits(v: &[u8], width: u32) -> bool {
    let Some(first) = v.iter().position(|&b| b != 0) else {
        return true;
    };
    let bits = (v.len() - first) as u32 * 8 - v[first].leading_zeros();
    bits <= width
}

/// `v` as exactly `ceil(width/8)` bytes; `OutOfRange` if it does not fit.
fn sized(v: &[u8], width: u32, what: &dyn Fn() -> String) -> ControlResult<Vec<u8>> {
    if !fits(v, width) {
        return Err(ControlError::OutOfRange(format!(
            "{} does not fit {width} bits",
            what()
        )));
    }
    let n = (width as usize).div_ceil(8);
    let mut out = vec![0u8; n];
    let v = &v[v.len().saturating_sub(n)..];
    out[n - v.len()..].copy_from_slice(v);
    Ok(out)
}

/// Writes big-endian `v` right-aligned into `out` (`ceil(width/8)` bytes, zeroed);
/// `OutOfRange` if it does not fit `width` bits.
fn sized_into(
    out: &mut [u8],
    v: &[u8],
    width: u32,
    what: &dyn Fn() -> String,
) -> ControlResult<()> {
    if !fits(v, width) {
        return Err(ControlError::OutOfRange(format!(
            "{} does not fit {width} bits",
            what()
        )));
    }
    let v = &v[v.len().saturating_sub(out.len())..];
    let n = out.len();
    out[n - v.len()..].copy_from_slice(v);
    Ok(())
}

/// Whether a match is already as [`Switch::check_key`] would make it: of the field's kind,
/// every value of exactly `ceil(width/8)` bytes that fit, no bits outside an lpm prefix or a
/// ternary mask, low ≤ high.
fn is_normal(kind: MatchKind, width: u32, m: &FieldMatch) -> bool {
    let n = (width as usize).div_ceil(8);
    let ok = |v: &[u8]| v.len() == n && fits(v, width);
    match (kind, m) {
        (MatchKind::Exact, FieldMatch::Exact(v)) => ok(v),
        (MatchKind::Lpm, FieldMatch::Lpm(v, plen)) => {
            // Bits from `first` on (counted from the most significant bit of the bytes) are
            // past the prefix and must be 0.
            let first = (n * 8 - width as usize) + *plen as usize;
            *plen <= width
                && ok(v)
                && v.iter().enumerate().all(|(i, b)| {
                    let lo = i * 8;
                    let past = if first <= lo {
                        0xff
                    } else if first >= lo + 8 {
                        0
                    } else {
                        0xffu8 >> (first - lo)
                    };
                    b & past == 0
                })
        }
        (MatchKind::Ternary, FieldMatch::Ternary(v, m)) => {
            ok(v) && ok(m) && v.iter().zip(m).all(|(a, b)| a & !b == 0)
        }
        (MatchKind::Range, FieldMatch::Range(lo, hi)) => ok(lo) && ok(hi) && lo <= hi,
        (MatchKind::Optional, FieldMatch::Optional(None)) => true,
        (MatchKind::Optional, FieldMatch::Optional(Some(v))) => ok(v),
        _ => false,
    }
}

/// Mask of the first `plen` bits of a `width`-bit field in `ceil(width/8)` bytes.
fn prefix_mask(width: u32, plen: u32) -> Vec<u8> {
    let n = (width as usize).div_ceil(8);
    let pad = n as u32 * 8 - width;
    let mut m = vec![0u8; n];
    for bit in pad..pad + plen.min(width) {
        m[(bit / 8) as usize] |= 0x80 >> (bit % 8);
    }
    m
}

impl Switch {
    fn rt(&self, t: TableId) -> ControlResult<(&p4_ir::Table, &RtTable)> {
        match (
            self.prog().tables.get(t as usize),
            self.rt_tables().get(t as usize),
        ) {
            (Some(td), Some(rt)) => Ok((td, rt)),
            _ => Err(ControlError::NotFound(format!("unknown table {t}"))),
        }
    }

    /// Checks an entry key against the table (P4Runtime §9.1 "TableEntry"): one match per key
    /// field of the field's kind, values that fit, no bits outside an lpm prefix or a ternary
    /// mask, low ≤ high, a priority iff the table needs one. Returns the matches sized to the
    /// fields (`key`'s own when they already are).
    fn check_key<'k>(
        &self,
        td: &p4_ir::Table,
        key: &'k EntryKey,
    ) -> ControlResult<Cow<'k, [FieldMatch]>> {
        let fields = || td.keys.iter().filter(|k| k.kind != MatchKind::Selector);
        let count = fields().count();
        if count == 0 {
            return Err(invalid(format!("table {} has no key", td.name)));
        }
        if key.matches.len() != count {
            return Err(invalid(format!(
                "table {} has {} key fields, {} matches given",
                td.name,
                count,
                key.matches.len()
            )));
        }
        let needs_priority = fields().any(|k| {
            matches!(
                k.kind,
                MatchKind::Ternary | MatchKind::Range | MatchKind::Optional
            )
        });
        if needs_priority && key.priority == 0 {
            return Err(invalid(format!(
                "table {} needs a priority (it has ternary, range or optional fields)",
                td.name
            )));
        }
        if !needs_priority && key.priority != 0 {
            return Err(invalid(format!(
                "table {} takes no priority (only exact and lpm fields)",
                td.name
            )));
        }
        if fields()
            .zip(&key.matches)
            .all(|(k, m)| is_normal(k.kind, k.expr.ty().width, m))
        {
            return Ok(Cow::Borrowed(&key.matches));
        }
        let mut out = Vec::with_capacity(count);
        for (k, m) in fields().zip(&key.matches) {
            let w = k.expr.ty().width;
            let name = || format!("field {}", k.name);
            let m = match (k.kind, m) {
                (MatchKind::Exact, FieldMatch::Exact(v)) => FieldMatch::Exact(sized(v, w, &name)?),
                (MatchKind::Lpm, FieldMatch::Lpm(v, plen)) => {
                    if *plen > w {
                        return Err(invalid(format!(
                            "field {}: prefix length {plen} exceeds its width {w}",
                            k.name
                        )));
                    }
                    let v = sized(v, w, &name)?;
                    let m = prefix_mask(w, *plen);
                    if v.iter().zip(&m).any(|(a, b)| a & !b != 0) {
                        return Err(invalid(format!(
                            "field {}: bits beyond the prefix length must be 0",
                            k.name
                        )));
                    }
                    FieldMatch::Lpm(v, *plen)
                }
                (MatchKind::Lpm, FieldMatch::Exact(v)) => FieldMatch::Lpm(sized(v, w, &name)?, w),
                (MatchKind::Ternary, FieldMatch::Ternary(v, m)) => {
                    let v = sized(v, w, &name)?;
                    let m = sized(m, w, &name)?;
                    if v.iter().zip(&m).any(|(a, b)| a & !b != 0) {
                        return Err(invalid(format!(
                            "field {}: value has bits outside the mask",
                            k.name
                        )));
                    }
                    FieldMatch::Ternary(v, m)
                }
                (MatchKind::Ternary, FieldMatch::Exact(v)) => {
                    FieldMatch::Ternary(sized(v, w, &name)?, prefix_mask(w, w))
                }
                (MatchKind::Range, FieldMatch::Range(lo, hi)) => {
                    let (lo, hi) = (sized(lo, w, &name)?, sized(hi, w, &name)?);
                    if lo > hi {
                        return Err(invalid(format!(
                            "field {}: range low bound above the high bound",
                            k.name
                        )));
                    }
                    FieldMatch::Range(lo, hi)
                }
                (MatchKind::Range, FieldMatch::Exact(v)) => {
                    let v = sized(v, w, &name)?;
                    FieldMatch::Range(v.clone(), v)
                }
                (MatchKind::Optional, FieldMatch::Optional(v)) => FieldMatch::Optional(match v {
                    Some(v) => Some(sized(v, w, &name)?),
                    None => None,
                }),
                (MatchKind::Optional, FieldMatch::Exact(v)) => {
                    FieldMatch::Optional(Some(sized(v, w, &name)?))
                }
                _ => {
                    return Err(invalid(format!(
                        "field {}: match kind differs from the field's ({:?})",
                        k.name, k.kind
                    )))
                }
            };
            out.push(m);
        }
        Ok(Cow::Owned(out))
    }

    /// Packs an action call's parameters for table `td`; `in_entry` says whether it is for an
    /// entry (rather than the default action), for the action's scope.
    fn pack_call(
        &self,
        td: &p4_ir::Table,
        call: &ActionCall,
        in_entry: bool,
    ) -> ControlResult<ActionData> {
        let Some(a) = td.actions.get(call.action as usize) else {
            return Err(invalid(format!(
                "table {} has no action {}",
                td.name, call.action
            )));
        };
        if in_entry && a.default_only {
            return Err(ControlError::PermissionDenied(format!(
                "action {} is @defaultonly in table {}",
                a.name, td.name
            )));
        }
        if !in_entry && a.table_only {
            return Err(ControlError::PermissionDenied(format!(
                "action {} is @tableonly in table {}",
                a.name, td.name
            )));
        }
        Ok(ActionData::new(call.action, pack_params(a, &call.params)?))
    }

    fn probe_id(&self) -> u64 {
        self.probes().next_id()
    }

    /// Arms table `t`'s update-delay probe (with `Config::track_updates`).
    fn arm_probe(&self, rt: &RtTable, h: EntryHandle, version: u64, visible: u64) -> Option<u64> {
        if !self.config().track_updates {
            return None;
        }
        let id = self.probe_id();
        if let Some(old) = rt.watch().arm(id, h, version, visible) {
            self.probes().push(old);
        }
        Some(id)
    }

    fn applied(&self) -> Applied {
        Applied {
            visible_ns: self.now_ns(),
            probe: None,
        }
    }

    // ------------------------------------------------------------------ one change

    /// Applies one change (the caller holds the write lock); returns what it did and, with
    /// `undo`, the change that undoes it (table entries: `None` without `undo`, sparing a
    /// batch that is not rolled back the copies).
    fn apply_change(&self, c: &Change, undo: bool) -> ControlResult<(Applied, Option<Change>)> {
        let r = match c {
            // Each with the table's specialised code out of the way (`spec.rs`).
            Change::Entry(Op::Insert, t, e) => {
                return self.respec(*t as usize, || self.insert_entry(*t, e, undo))
            }
            Change::Entry(Op::Modify, t, e) => {
                return self.respec(*t as usize, || self.modify_entry(*t, e, undo))
            }
            Change::Entry(Op::Delete, t, e) => {
                return self.respec(*t as usize, || self.delete_entry(*t, &e.key, undo))
            }
            Change::Default(t, a) => self.set_default(*t, a.as_ref()),
            Change::Counter {
                counter,
                index,
                data,
            } => return self.write_counter(*counter, *index, *data, undo),
            Change::DirectCounter { table, key, data } => {
                self.write_direct_counter(*table, key, *data)
            }
            Change::Meter {
                meter,
                index,
                config,
                counters,
            } => return self.write_meter(*meter, *index, *config, *counters, undo),
            Change::DirectMeter {
                table,
                key,
                config,
                counters,
            } => self.write_direct_meter(*table, key, *config, *counters),
            Change::Register {
                register,
                index,
                value,
            } => return self.write_register(*register, *index, value, undo),
            Change::Restore(saved) => return self.restore(saved),
            Change::Member(op, x, m) => self.write_member(*op, *x, m),
            Change::Group(op, x, g) => self.write_group(*op, *x, g),
            Change::Multicast(op, g) => self.write_multicast(*op, g),
            Change::Clone(op, s) => self.write_clone(*op, s),
            Change::ValueSet { set, members } => self.write_value_set(*set, members),
        };
        r.map(|(a, u)| (a, Some(u)))
    }
}

/// Packs parameter values (one per parameter, any length that fits) into the table's layout.
fn pack_params(a: &p4_ir::TableAction, values: &[Vec<u8>]) -> ControlResult<Params> {
    if values.len() != a.params.len() {
        return Err(invalid(format!(
            "action {} takes {} parameters, {} given",
            a.name,
            a.params.len(),
            values.len()
        )));
    }
    let mut inline = [0u8; Params::INLINE];
    let mut heap = Vec::new();
    let total = a.params_bytes();
    let out: &mut [u8] = if total <= Params::INLINE {
        &mut inline[..total]
    } else {
        heap.resize(total, 0);
        &mut heap
    };
    let mut off = 0;
    for (p, v) in a.params.iter().zip(values) {
        let n = p.ty.bytes();
        sized_into(&mut out[off..off + n], v, p.ty.width, &|| {
            format!("parameter {} of action {}", p.name, a.name)
        })?;
        off += n;
    }
    Ok(Params::from_slice(out))
}

/// Splits packed parameters into one value per parameter (`ceil(w/8)` bytes each).
fn unpack_params(a: &p4_ir::TableAction, packed: &[u8]) -> Vec<Vec<u8>> {
    let mut off = 0;
    a.params
        .iter()
        .map(|p| {
            let n = p.ty.bytes();
            let v = packed
                .get(off..off + n)
                .map_or_else(|| vec![0; n], <[u8]>::to_vec);
            off += n;
            v
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::registers::{bytes_to_words, words_to_bytes};
    use super::*;

    #[test]
    fn values_fit_and_are_sized() {
        assert!(fits(&[0x0f, 0xff], 12));
        assert!(fits(&[0, 0, 0x0f, 0xff], 12));
        assert!(!fits(&[0x10, 0x63], 12));
        assert!(fits(&[], 1));
        let name = || "x".to_string();
        assert_eq!(sized(&[0x63], 12, &name).unwrap(), vec![0, 0x63]);
        assert_eq!(sized(&[0, 0, 0x63], 12, &name).unwrap(), vec![0, 0x63]);
        assert!(matches!(
            sized(&[0x10, 0x63], 12, &name),
            Err(ControlError::OutOfRange(_))
        ));
        assert_eq!(prefix_mask(12, 4), vec![0x0f, 0]);
        assert_eq!(prefix_mask(32, 24), vec![0xff, 0xff, 0xff, 0]);
    }

    #[test]
    fn register_words_round_trip() {
        let mut w = vec![0u64; 2];
        bytes_to_words(
            &[0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09],
            &mut w,
        );
        assert_eq!(w, vec![0x0203_0405_0607_0809, 0x01]);
        assert_eq!(words_to_bytes(&w, 72), vec![1, 2, 3, 4, 5, 6, 7, 8, 9]);
        assert_eq!(words_to_bytes(&[0x1ff], 9), vec![1, 0xff]);
    }
}
