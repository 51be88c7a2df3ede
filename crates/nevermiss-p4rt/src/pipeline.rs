//! A loaded pipeline: the switch, its P4Info, and the translation between P4Runtime messages
//! (ids, canonical bytestrings) and the runtime's typed control API (IR indices, sized values).
//!
//! Bytestrings follow P4Runtime §8.4 "Bytestrings": any length is accepted as long as the value
//! fits the field's width (else `OUT_OF_RANGE`); what the server sends is canonical (the
//! shortest string, zero as one `\0` byte).

#![allow(deprecated)] // `controller_metadata` is deprecated in P4Runtime 1.4 but must still be stored and read back.

use crate::p4info::ControlPlaneIds;
use crate::pb::p4::config::v1 as pi;
use crate::pb::p4::v1 as p4;
use nevermiss_runtime::control::{
    ActionCall, ControlError, ControlResult, CounterData, EntryAction, EntryKey, EntryState,
    MeterCounterData, SetAction, TableEntry,
};
use nevermiss_runtime::{Switch, Worker};
use nevermiss_tables::FieldMatch;
use p4_ir::{FnId, MatchKind, TableId};
use prost::bytes::Bytes;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Arc, Mutex};

/// Hashes the integer ids of P4Info objects (and other integer keys) with one multiply:
/// they are already spread (p4c's ids are a hash of the name) or small and dense, and a
/// Write looks several of them up per update, where SipHash's cost shows.
#[derive(Clone, Copy, Debug, Default)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        // Folded 128-bit product: every bit of the id reaches the low bits (the bucket)
        // and the high bits (the tag).
        let p = u128::from(self.0) * 0x9E37_79B9_7F4A_7C15;
        (p >> 64) as u64 ^ p as u64
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u32(&mut self, i: u32) {
        self.0 = self.0.rotate_left(32) ^ u64::from(i);
    }

    fn write_u64(&mut self, i: u64) {
        self.0 = self.0.rotate_left(32) ^ i;
    }

    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }
}

/// A map keyed by ids, hashed with [`IdHasher`].
pub type IdMap<K, V> = HashMap<K, V, BuildHasherDefault<IdHasher>>;

/// One key field of a table, in key order.
struct FieldInfo {
    id: u32,
    kind: MatchKind,
    width: u32,
}

/// One table's P4Info view.
struct TableInfo {
    ir: TableId,
    /// The table's (non-selector) key fields, in key order.
    fields: Vec<FieldInfo>,
    const_default: bool,
    idle_timeout: bool,
}

/// One action's P4Info view.
struct ActionInfo {
    /// Parameters in order: (id, width).
    params: Vec<(u32, u32)>,
    /// The IR functions of the action (one per instance).
    fns: Vec<FnId>,
}

/// A pipeline the server runs.
pub struct Pipeline {
    /// The switch the pipeline's entries are written to and whose packets the traffic loops run.
    pub sw: Arc<Switch>,
    /// The P4Info the controller set, returned by `GetForwardingPipelineConfig` (P4Runtime §17).
    pub p4info: pi::P4Info,
    /// The `p4_device_config` bytes the controller set ([`crate::device_config`]).
    pub device_config: Bytes,
    /// The controller's `ForwardingPipelineConfig.cookie`, `None` when it sent none (P4Runtime §16).
    pub cookie: Option<u64>,
    /// The map between the P4Info's ids and the IR, which every translation goes through.
    pub ids: ControlPlaneIds,
    tables: IdMap<u32, TableInfo>,
    table_ids: IdMap<TableId, u32>,
    actions: IdMap<u32, ActionInfo>,
    fn_ids: IdMap<FnId, u32>,
    /// The worker that runs PacketOuts.
    pub worker: Mutex<Worker>,
    /// Controller header fields of `packet_in`: (id, bitwidth), in header order (P4Runtime
    /// §18.1: a PacketIn's metadata, taken from the front of the packet sent to the CPU port).
    pub packet_in: Vec<(u32, u32)>,
    /// Controller header fields of `packet_out`: (id, bitwidth), in header order (P4Runtime §18.1:
    /// a PacketOut's metadata, prepended to its payload).
    pub packet_out: Vec<(u32, u32)>,
}

fn invalid(m: impl Into<String>) -> ControlError {
    ControlError::InvalidArgument(m.into())
}

/// `[id]`, or for the read wildcard id 0 the ids of every object in `all` (P4Info order).
pub(crate) fn ids_or_all<'a>(
    id: u32,
    all: impl Iterator<Item = Option<&'a pi::Preamble>>,
) -> Vec<u32> {
    if id != 0 {
        return vec![id];
    }
    all.flatten().map(|p| p.id).collect()
}

/// The canonical bytestring of a big-endian value.
pub fn canonical(v: &[u8]) -> Bytes {
    match v.iter().position(|&b| b != 0) {
        Some(i) => Bytes::copy_from_slice(&v[i..]),
        None => Bytes::from_static(&[0]),
    }
}

/// A received bytestring checked against a width (non-empty and fits: see [`check_bytes`]),
/// as exactly `ceil(width/8)` big-endian bytes.
pub(crate) fn sized_bytes(
    v: &[u8],
    width: u32,
    what: &dyn Fn() -> String,
) -> ControlResult<Vec<u8>> {
    check_bytes(v, width, what)?;
    let n = (width as usize).div_ceil(8);
    if v.len() == n {
        return Ok(v.to_vec());
    }
    let mut out = vec![0u8; n];
    // Longer values have only zeros in front (they fit).
    let v = &v[v.len().saturating_sub(n)..];
    out[n - v.len()..].copy_from_slice(v);
    Ok(out)
}

/// Checks a received bytestring against a width: non-empty and fits.
pub(crate) fn check_bytes(v: &[u8], width: u32, what: &dyn Fn() -> String) -> ControlResult<()> {
    if v.is_empty() {
        return Err(invalid(format!("{}: empty bytestring", what())));
    }
    let first = v.iter().position(|&b| b != 0);
    if let Some(i) = first {
        let bits = (v.len() - i) as u32 * 8 - v[i].leading_zeros();
        if bits > width {
            return Err(ControlError::OutOfRange(format!(
                "{}: value does not fit {width} bits",
                what()
            )));
        }
    }
    Ok(())
}

fn is_zero(v: &[u8]) -> bool {
    v.iter().all(|&b| b == 0)
}

fn all_ones(v: &[u8], width: u32) -> bool {
    let n = (width as usize).div_ceil(8);
    let pad = n as u32 * 8 - width;
    v.len() == n
        && v.iter()
            .enumerate()
            .all(|(i, &b)| if i == 0 { b == 0xff >> pad } else { b == 0xff })
}

/// Big-endian value of bits `[off, off+width)` of `data` as `ceil(width/8)` bytes.
pub fn get_bits(data: &[u8], off: usize, width: u32) -> Vec<u8> {
    let n = (width as usize).div_ceil(8);
    let mut out = vec![0u8; n];
    for i in 0..width as usize {
        let src = off + i;
        let bit = data.get(src / 8).map_or(0, |b| (b >> (7 - src % 8)) & 1);
        let dst = n * 8 - width as usize + i;
        out[dst / 8] |= bit << (7 - dst % 8);
    }
    out
}

/// Writes big-endian `v` (any length; its low `width` bits) at bit `off` of `data`.
pub fn put_bits(data: &mut [u8], off: usize, width: u32, v: &[u8]) {
    let total = v.len() * 8;
    for i in 0..width as usize {
        let bit_index_from_lsb = width as usize - 1 - i;
        let bit = if bit_index_from_lsb < total {
            let src = total - 1 - bit_index_from_lsb;
            (v[src / 8] >> (7 - src % 8)) & 1
        } else {
            0
        };
        let dst = off + i;
        if let Some(b) = data.get_mut(dst / 8) {
            *b |= bit << (7 - dst % 8);
        }
    }
}

impl Pipeline {
    /// Builds the index of a switch and its P4Info.
    pub fn new(
        sw: Arc<Switch>,
        p4info: pi::P4Info,
        ids: ControlPlaneIds,
        device_config: Bytes,
        cookie: Option<u64>,
    ) -> Pipeline {
        let prog = sw.prog().clone();
        let mut tables = IdMap::default();
        let mut table_ids = IdMap::default();
        for t in &p4info.tables {
            let Some(pre) = &t.preamble else { continue };
            let Some(&ir) = ids.tables.get(&pre.id) else {
                continue;
            };
            let Some(td) = prog.tables.get(ir as usize) else {
                continue;
            };
            let keys: Vec<&p4_ir::TableKey> = td
                .keys
                .iter()
                .filter(|k| k.kind != MatchKind::Selector)
                .collect();
            let fields = t
                .match_fields
                .iter()
                .zip(&keys)
                .map(|(mf, k)| FieldInfo {
                    id: mf.id,
                    kind: k.kind,
                    width: k.expr.ty().width,
                })
                .collect();
            tables.insert(
                pre.id,
                TableInfo {
                    ir,
                    fields,
                    const_default: t.const_default_action_id != 0,
                    idle_timeout: t.idle_timeout_behavior
                        == pi::table::IdleTimeoutBehavior::NotifyControl as i32,
                },
            );
            table_ids.insert(ir, pre.id);
        }
        let mut actions = IdMap::default();
        for a in &p4info.actions {
            let Some(pre) = &a.preamble else { continue };
            let params = a.params.iter().map(|p| (p.id, p.bitwidth as u32)).collect();
            let fns = ids.actions.get(&pre.id).cloned().unwrap_or_default();
            actions.insert(pre.id, ActionInfo { params, fns });
        }
        let mut fn_ids = IdMap::default();
        for (id, fns) in &ids.actions {
            for f in fns {
                fn_ids.insert(*f, *id);
            }
        }
        let header = |name: &str| -> Vec<(u32, u32)> {
            p4info
                .controller_packet_metadata
                .iter()
                .find(|c| c.preamble.as_ref().is_some_and(|p| p.name == name))
                .map(|c| {
                    c.metadata
                        .iter()
                        .map(|m| (m.id, m.bitwidth as u32))
                        .collect()
                })
                .unwrap_or_default()
        };
        let packet_in = header("packet_in");
        let packet_out = header("packet_out");
        let worker = Mutex::new(Worker::new(sw.clone(), 0x9559));
        Pipeline {
            sw,
            p4info,
            device_config,
            cookie,
            ids,
            tables,
            table_ids,
            actions,
            fn_ids,
            worker,
            packet_in,
            packet_out,
        }
    }

    /// Whether the P4Info has a `packet_out` controller header.
    pub fn has_packet_out(&self) -> bool {
        self.p4info
            .controller_packet_metadata
            .iter()
            .any(|c| c.preamble.as_ref().is_some_and(|p| p.name == "packet_out"))
    }

    fn table(&self, id: u32) -> ControlResult<&TableInfo> {
        if id == 0 {
            return Err(invalid("table_id must be set"));
        }
        self.tables
            .get(&id)
            .ok_or_else(|| ControlError::NotFound(format!("unknown table id {id}")))
    }

    /// The IR table of a P4Info table id.
    pub fn ir_table(&self, id: u32) -> ControlResult<TableId> {
        self.table(id).map(|t| t.ir)
    }

    /// Every table: (P4Info id, IR table), in P4Info order.
    pub fn all_tables(&self) -> Vec<(u32, TableId)> {
        self.p4info
            .tables
            .iter()
            .filter_map(|t| t.preamble.as_ref())
            .filter_map(|p| self.tables.get(&p.id).map(|t| (p.id, t.ir)))
            .collect()
    }

    /// Whether a table notifies the controller of idle entries.
    pub fn has_idle_timeout(&self, id: u32) -> bool {
        self.tables.get(&id).is_some_and(|t| t.idle_timeout)
    }

    /// The P4Info id of an IR table.
    pub fn table_id(&self, t: TableId) -> u32 {
        self.table_ids.get(&t).copied().unwrap_or(0)
    }

    fn td(&self, t: TableId) -> &p4_ir::Table {
        &self.sw.prog().tables[t as usize]
    }

    /// The entry key of a P4Runtime table entry (omitted fields are don't-cares; P4Runtime
    /// §9.1.1 "Match format").
    pub fn key(&self, e: &p4::TableEntry) -> ControlResult<EntryKey> {
        let ti = self.table(e.table_id)?;
        self.key_of(ti, e)
    }

    /// [`Pipeline::key`] for table `ti`. Values are checked and given the field's byte size.
    fn key_of(&self, ti: &TableInfo, e: &p4::TableEntry) -> ControlResult<EntryKey> {
        let n = ti.fields.len();
        let mut out = Vec::with_capacity(n);
        // Every field given, in key order: the common case, without the bookkeeping of
        // fields given in any order or left out.
        let in_order = e.r#match.len() == n
            && e.r#match
                .iter()
                .zip(&ti.fields)
                .all(|(m, f)| m.field_id == f.id);
        if in_order {
            for (m, f) in e.r#match.iter().zip(&ti.fields) {
                out.push(self.field_match(ti, f, m)?);
            }
        } else {
            let mut matches: Vec<Option<FieldMatch>> = vec![None; n];
            for m in &e.r#match {
                let Some(pos) = ti.fields.iter().position(|f| f.id == m.field_id) else {
                    return Err(invalid(format!(
                        "table {}: unknown match field id {}",
                        self.td(ti.ir).name,
                        m.field_id
                    )));
                };
                if matches[pos].is_some() {
                    return Err(invalid(format!(
                        "table {}: match field id {} given twice",
                        self.td(ti.ir).name,
                        m.field_id
                    )));
                }
                matches[pos] = Some(self.field_match(ti, &ti.fields[pos], m)?);
            }
            for (m, f) in matches.into_iter().zip(&ti.fields) {
                let w = f.width;
                let n = (w as usize).div_ceil(8);
                out.push(match (m, f.kind) {
                    (Some(m), _) => m,
                    (None, MatchKind::Exact) => {
                        let td = self.td(ti.ir);
                        let name = td
                            .keys
                            .iter()
                            .filter(|k| k.kind != MatchKind::Selector)
                            .nth(out.len())
                            .map_or("?", |k| k.name.as_str());
                        return Err(invalid(format!(
                            "table {}: exact field {name} cannot be omitted",
                            td.name
                        )));
                    }
                    (None, MatchKind::Lpm) => FieldMatch::Lpm(vec![0; n], 0),
                    (None, MatchKind::Ternary) => FieldMatch::Ternary(vec![0; n], vec![0; n]),
                    (None, MatchKind::Range) => {
                        let mut hi = vec![0xff; n];
                        if n > 0 {
                            hi[0] = 0xff >> (n as u32 * 8 - w);
                        }
                        FieldMatch::Range(vec![0; n], hi)
                    }
                    (None, MatchKind::Optional) => FieldMatch::Optional(None),
                    (None, MatchKind::Selector) => continue,
                });
            }
        }
        if e.priority < 0 {
            return Err(invalid("priority must not be negative"));
        }
        Ok(EntryKey {
            matches: out,
            priority: e.priority as u32,
        })
    }

    /// One field's match, checked against the field (kind, width, no zero mask, no full
    /// range or prefix 0: those are don't-cares, written by omitting the field).
    fn field_match(
        &self,
        ti: &TableInfo,
        f: &FieldInfo,
        m: &p4::FieldMatch,
    ) -> ControlResult<FieldMatch> {
        use p4::field_match::FieldMatchType as F;
        let w = f.width;
        let what = || format!("table {} field {}", self.td(ti.ir).name, m.field_id);
        Ok(match (&m.field_match_type, f.kind) {
            (Some(F::Exact(x)), MatchKind::Exact) => {
                FieldMatch::Exact(sized_bytes(&x.value, w, &what)?)
            }
            (Some(F::Lpm(x)), MatchKind::Lpm) => {
                let v = sized_bytes(&x.value, w, &what)?;
                if x.prefix_len <= 0 || x.prefix_len as u32 > w {
                    return Err(invalid(format!(
                        "{}: prefix length {} must be in 1..={w} (omit the field for a \
                         don't-care)",
                        what(),
                        x.prefix_len
                    )));
                }
                FieldMatch::Lpm(v, x.prefix_len as u32)
            }
            (Some(F::Ternary(x)), MatchKind::Ternary) => {
                let v = sized_bytes(&x.value, w, &what)?;
                let mask = sized_bytes(&x.mask, w, &what)?;
                if is_zero(&mask) {
                    return Err(invalid(format!(
                        "{}: a zero mask is a don't-care: omit the field",
                        what()
                    )));
                }
                FieldMatch::Ternary(v, mask)
            }
            (Some(F::Range(x)), MatchKind::Range) => {
                let lo = sized_bytes(&x.low, w, &what)?;
                let hi = sized_bytes(&x.high, w, &what)?;
                if is_zero(&lo) && all_ones(&hi, w) {
                    return Err(invalid(format!(
                        "{}: the full range is a don't-care: omit the field",
                        what()
                    )));
                }
                FieldMatch::Range(lo, hi)
            }
            (Some(F::Optional(x)), MatchKind::Optional) => {
                FieldMatch::Optional(Some(sized_bytes(&x.value, w, &what)?))
            }
            (None, _) => return Err(invalid(format!("{}: match type unset", what()))),
            (_, kind) => {
                return Err(invalid(format!(
                    "{}: the match type differs from the field's ({kind:?})",
                    what()
                )))
            }
        })
    }

    /// The P4Runtime match of an entry key (don't-care fields omitted, canonical values).
    pub fn match_of(&self, t: TableId, key: &EntryKey) -> Vec<p4::FieldMatch> {
        use p4::field_match::{self as fm, FieldMatchType as F};
        let id = self.table_id(t);
        let Some(ti) = self.tables.get(&id) else {
            return Vec::new();
        };
        let mut out = Vec::with_capacity(key.matches.len());
        for (m, f) in key.matches.iter().zip(&ti.fields) {
            let w = f.width;
            let t = match m {
                FieldMatch::Exact(v) => Some(F::Exact(fm::Exact {
                    value: canonical(v),
                })),
                FieldMatch::Lpm(_, 0) => None,
                FieldMatch::Lpm(v, l) => Some(F::Lpm(fm::Lpm {
                    value: canonical(v),
                    prefix_len: *l as i32,
                })),
                FieldMatch::Ternary(_, m) if is_zero(m) => None,
                FieldMatch::Ternary(v, m) => Some(F::Ternary(fm::Ternary {
                    value: canonical(v),
                    mask: canonical(m),
                })),
                FieldMatch::Range(lo, hi) if is_zero(lo) && all_ones(&pad(hi, w), w) => None,
                FieldMatch::Range(lo, hi) => Some(F::Range(fm::Range {
                    low: canonical(lo),
                    high: canonical(hi),
                })),
                FieldMatch::Optional(None) => None,
                FieldMatch::Optional(Some(v)) => Some(F::Optional(fm::Optional {
                    value: canonical(v),
                })),
            };
            if let Some(t) = t {
                out.push(p4::FieldMatch {
                    field_id: f.id,
                    field_match_type: Some(t),
                });
            }
        }
        out
    }

    /// The action call of a P4Runtime action for IR table `t`.
    pub fn action_call(&self, t: TableId, a: &p4::Action) -> ControlResult<ActionCall> {
        let td = self.td(t);
        if a.action_id == 0 {
            return Err(invalid("action_id must be set"));
        }
        let Some(ai) = self.actions.get(&a.action_id) else {
            return Err(ControlError::NotFound(format!(
                "unknown action id {}",
                a.action_id
            )));
        };
        let Some(index) = ai.fns.iter().find_map(|f| td.action_of(*f)) else {
            return Err(invalid(format!(
                "action id {} is not an action of table {}",
                a.action_id, td.name
            )));
        };
        let what = |id: u32| move || format!("action id {} param {id}", a.action_id);
        let n = ai.params.len();
        let mut out = Vec::with_capacity(n);
        // Every parameter given, in order: the common case.
        if a.params.len() == n
            && a.params
                .iter()
                .zip(&ai.params)
                .all(|(p, (id, _))| p.param_id == *id)
        {
            for (p, (id, w)) in a.params.iter().zip(&ai.params) {
                out.push(sized_bytes(&p.value, *w, &what(*id))?);
            }
        } else {
            let mut params: Vec<Option<Vec<u8>>> = vec![None; n];
            for p in &a.params {
                let Some(pos) = ai.params.iter().position(|(id, _)| *id == p.param_id) else {
                    return Err(invalid(format!(
                        "action id {}: unknown param id {}",
                        a.action_id, p.param_id
                    )));
                };
                if params[pos].is_some() {
                    return Err(invalid(format!(
                        "action id {}: param id {} given twice",
                        a.action_id, p.param_id
                    )));
                }
                params[pos] = Some(sized_bytes(&p.value, ai.params[pos].1, &what(p.param_id))?);
            }
            for (i, p) in params.into_iter().enumerate() {
                match p {
                    Some(v) => out.push(v),
                    None => {
                        return Err(invalid(format!(
                            "action id {}: param id {} missing",
                            a.action_id, ai.params[i].0
                        )))
                    }
                }
            }
        }
        Ok(ActionCall {
            action: index,
            params: out,
        })
    }

    /// The P4Runtime action of an action call of IR table `t`.
    pub fn action_of(&self, t: TableId, c: &ActionCall) -> p4::Action {
        let td = self.td(t);
        let Some(ta) = td.actions.get(c.action as usize) else {
            return p4::Action::default();
        };
        let id = self.fn_ids.get(&ta.func).copied().unwrap_or(0);
        let pids = self.actions.get(&id).map_or(&[][..], |a| &a.params[..]);
        p4::Action {
            action_id: id,
            params: c
                .params
                .iter()
                .zip(pids)
                .map(|(v, (pid, _))| p4::action::Param {
                    param_id: *pid,
                    value: canonical(v),
                })
                .collect(),
        }
    }

    /// A table entry of a write (not a default entry).
    pub fn entry(&self, e: &p4::TableEntry, t: TableId) -> ControlResult<TableEntry> {
        if e.is_const {
            return Err(invalid("is_const must be false in writes"));
        }
        if e.time_since_last_hit.is_some() {
            return Err(invalid("time_since_last_hit must be unset in writes"));
        }
        if e.idle_timeout_ns < 0 {
            return Err(invalid("idle_timeout_ns must not be negative"));
        }
        let ti = self.table(e.table_id)?;
        if e.idle_timeout_ns > 0 && !ti.idle_timeout {
            return Err(invalid(format!(
                "table {} has no idle timeout (idle_timeout_behavior NOTIFY_CONTROL); \
                 idle_timeout_ns must be 0",
                self.td(t).name
            )));
        }
        let meter_counters = meter_counters_reset(e.meter_counter_data.as_ref())?;
        let meter = match &e.meter_config {
            None => None,
            Some(c) if c.cir < 0 || c.cburst < 0 || c.pir < 0 || c.pburst < 0 || c.pir < c.cir => {
                return Err(invalid(
                    "meter_config: rates and bursts must not be negative, pir not below cir",
                ))
            }
            Some(c) => Some(nevermiss_runtime::control::MeterConfig {
                cir: c.cir as u64,
                cburst: c.cburst as u64,
                pir: c.pir as u64,
                pburst: c.pburst as u64,
            }),
        };
        let action = match &e.action {
            None => None,
            Some(ta) => Some(self.entry_action(t, ta)?),
        };
        Ok(TableEntry {
            key: self.key_of(ti, e)?,
            action,
            controller_metadata: e.controller_metadata,
            metadata: e.metadata.to_vec(),
            idle_timeout_ns: e.idle_timeout_ns as u64,
            counter: e.counter_data.as_ref().map(|c| CounterData {
                packets: c.packet_count.max(0) as u64,
                bytes: c.byte_count.max(0) as u64,
            }),
            meter,
            meter_counters,
        })
    }

    fn entry_action(&self, t: TableId, ta: &p4::TableAction) -> ControlResult<EntryAction> {
        use p4::table_action::Type as A;
        match &ta.r#type {
            Some(A::Action(a)) => Ok(EntryAction::Call(self.action_call(t, a)?)),
            Some(A::ActionProfileMemberId(m)) => Ok(EntryAction::Member(*m)),
            Some(A::ActionProfileGroupId(g)) => Ok(EntryAction::Group(*g)),
            Some(A::ActionProfileActionSet(set)) => self.action_set(t, set),
            None => Err(invalid("table action unset")),
        }
    }

    /// A one-shot action set (P4Runtime §9.2.3 "One Shot Action Selector Programming"): each
    /// action of the table with a weight ≥ 1 and an optional watch port. Per-group selection
    /// modes and size semantics other than the selector's own are `UNIMPLEMENTED`; more
    /// actions than the profile's `max_group_size` (when set) are `INVALID_ARGUMENT`.
    fn action_set(
        &self,
        t: TableId,
        set: &p4::ActionProfileActionSet,
    ) -> ControlResult<EntryAction> {
        use p4::action_profile_action::WatchKind as W;
        if set.action_selection_mode != 0 || set.size_semantics != 0 {
            return Err(ControlError::Unimplemented(
                "per-group action selection modes and size semantics are not supported \
                 (the selector's own apply)"
                    .into(),
            ));
        }
        let max = self
            .p4info
            .action_profiles
            .iter()
            .find(|a| a.table_ids.contains(&self.table_id(t)))
            .map_or(0, |a| a.max_group_size);
        if max > 0 && set.action_profile_actions.len() > max as usize {
            return Err(invalid(format!(
                "the action set has {} actions, the selector's max_group_size is {max}",
                set.action_profile_actions.len()
            )));
        }
        let mut out = Vec::with_capacity(set.action_profile_actions.len());
        for (i, a) in set.action_profile_actions.iter().enumerate() {
            let Some(action) = &a.action else {
                return Err(invalid(format!("action set action {i}: action unset")));
            };
            if a.weight < 1 {
                return Err(invalid(format!(
                    "action set action {i}: weight must be at least 1"
                )));
            }
            #[allow(deprecated)]
            let watch = match &a.watch_kind {
                None => None,
                Some(W::Watch(p)) => crate::profiles::watch_int(*p)?,
                Some(W::WatchPort(b)) => crate::profiles::watch_bytes(b)?,
            };
            out.push(SetAction {
                call: self.action_call(t, action)?,
                weight: a.weight as u32,
                watch,
            });
        }
        Ok(EntryAction::ActionSet(out))
    }

    /// Whether table `id` has a const default action.
    pub fn const_default(&self, id: u32) -> bool {
        self.tables.get(&id).is_some_and(|t| t.const_default)
    }

    /// The default action of a write (`None`: back to the program's initial default).
    pub fn default_call(
        &self,
        e: &p4::TableEntry,
        t: TableId,
    ) -> ControlResult<Option<ActionCall>> {
        if !e.r#match.is_empty() || e.priority != 0 {
            return Err(invalid("a default entry has no match and priority 0"));
        }
        if e.idle_timeout_ns != 0 || e.time_since_last_hit.is_some() {
            return Err(invalid("a default entry has no idle timeout"));
        }
        if self.const_default(e.table_id) {
            return Err(ControlError::PermissionDenied(format!(
                "table {}: its default action is const",
                self.td(t).name
            )));
        }
        use p4::table_action::Type as A;
        match e.action.as_ref().and_then(|a| a.r#type.as_ref()) {
            None => Ok(None),
            Some(A::Action(a)) => {
                // `NoAction` as p4c lists it for tables without a default action: the IR runs
                // no action on their miss, which is what the initial default does.
                if Some(a.action_id) == self.ids.no_action
                    && self.action_call(t, a).is_err()
                    && a.params.is_empty()
                {
                    return Ok(None);
                }
                Ok(Some(self.action_call(t, a)?))
            }
            Some(_) => Err(invalid(
                "the default entry of a table names an action (indirect tables: const NoAction)",
            )),
        }
    }

    /// The P4Runtime form of an entry as read; `want` says which optional fields the read
    /// asked for (P4Runtime §9.1.2 "Direct resources": each is returned only if requested).
    pub fn entry_of(&self, t: TableId, s: &EntryState, want: ReadWants) -> p4::TableEntry {
        use p4::table_action::Type as A;
        let action = match &s.action {
            EntryAction::Call(c) => A::Action(self.action_of(t, c)),
            EntryAction::Member(m) => A::ActionProfileMemberId(*m),
            EntryAction::Group(g) => A::ActionProfileGroupId(*g),
            EntryAction::ActionSet(set) => A::ActionProfileActionSet(p4::ActionProfileActionSet {
                action_profile_actions: set
                    .iter()
                    .map(|a| {
                        use p4::action_profile_action::WatchKind as W;
                        #[allow(deprecated)]
                        let watch_kind = a.watch.map(|w| match w.legacy {
                            true => W::Watch(w.port as i32),
                            false => W::WatchPort(crate::profiles::watch_msg(w)),
                        });
                        p4::ActionProfileAction {
                            action: Some(self.action_of(t, &a.call)),
                            weight: a.weight as i32,
                            watch_kind,
                        }
                    })
                    .collect(),
                ..Default::default()
            }),
        };
        p4::TableEntry {
            table_id: self.table_id(t),
            r#match: self.match_of(t, &s.key),
            action: Some(p4::TableAction {
                r#type: Some(action),
            }),
            priority: s.key.priority as i32,
            controller_metadata: s.controller_metadata,
            metadata: s.metadata.clone().into(),
            is_const: s.is_const,
            idle_timeout_ns: s.idle_timeout_ns as i64,
            time_since_last_hit: if want.elapsed {
                Some(p4::table_entry::IdleTimeout {
                    elapsed_ns: s.elapsed_ns.unwrap_or(0) as i64,
                })
            } else {
                None
            },
            counter_data: if want.counter {
                s.counter.map(counter_msg)
            } else {
                None
            },
            // The default configuration (all green) reads as unset.
            meter_config: if want.meter_config {
                s.meter.map(meter_config_msg)
            } else {
                None
            },
            meter_counter_data: if want.meter_counters {
                s.meter_counters.map(meter_counters_msg)
            } else {
                None
            },
            ..Default::default()
        }
    }

    /// The default entry of table `t` as read.
    pub fn default_entry_of(&self, t: TableId, call: Option<&ActionCall>) -> p4::TableEntry {
        let action = match call {
            Some(c) => Some(self.action_of(t, c)),
            None => self.ids.no_action.map(|id| p4::Action {
                action_id: id,
                params: Vec::new(),
            }),
        };
        p4::TableEntry {
            table_id: self.table_id(t),
            is_default_action: true,
            action: action.map(|a| p4::TableAction {
                r#type: Some(p4::table_action::Type::Action(a)),
            }),
            ..Default::default()
        }
    }

    /// The bytes a PacketOut enters the pipeline with: the `packet_out` header (its fields
    /// packed in order, big-endian) then the payload.
    pub fn packet_out_bytes(&self, po: &p4::PacketOut) -> ControlResult<Vec<u8>> {
        if self.packet_out.is_empty() {
            if !po.metadata.is_empty() {
                return Err(invalid("the program has no packet_out controller header"));
            }
            return Ok(po.payload.to_vec());
        }
        let bits: u32 = self.packet_out.iter().map(|(_, w)| w).sum();
        let mut hdr = vec![0u8; (bits as usize).div_ceil(8)];
        let mut off = 0usize;
        for (id, w) in &self.packet_out {
            let Some(m) = po.metadata.iter().find(|m| m.metadata_id == *id) else {
                return Err(invalid(format!("packet_out metadata id {id} missing")));
            };
            check_bytes(&m.value, *w, &|| format!("packet_out metadata id {id}"))?;
            put_bits(&mut hdr, off, *w, &m.value);
            off += *w as usize;
        }
        if let Some(m) = po
            .metadata
            .iter()
            .find(|m| !self.packet_out.iter().any(|(id, _)| *id == m.metadata_id))
        {
            return Err(invalid(format!(
                "unknown packet_out metadata id {}",
                m.metadata_id
            )));
        }
        hdr.extend_from_slice(&po.payload);
        Ok(hdr)
    }

    /// A packet the program sent to the CPU port as a PacketIn: its `packet_in` header
    /// becomes the metadata, the rest the payload.
    pub fn packet_in(&self, data: &[u8]) -> p4::PacketIn {
        let bits: u32 = self.packet_in.iter().map(|(_, w)| w).sum();
        let n = (bits as usize).div_ceil(8);
        if self.packet_in.is_empty() || data.len() < n {
            return p4::PacketIn {
                payload: Bytes::copy_from_slice(data),
                metadata: Vec::new(),
            };
        }
        let mut off = 0usize;
        let metadata = self
            .packet_in
            .iter()
            .map(|(id, w)| {
                let v = get_bits(data, off, *w);
                off += *w as usize;
                p4::PacketMetadata {
                    metadata_id: *id,
                    value: canonical(&v),
                }
            })
            .collect();
        p4::PacketIn {
            payload: Bytes::copy_from_slice(&data[n..]),
            metadata,
        }
    }

    /// The digest id and P4Data of a digest message of the data plane.
    pub fn digest_data(&self, name: &str, data: &[u8]) -> Option<(u32, p4::P4Data)> {
        let p = &self.p4info;
        let digest = p.digests.iter().find(|d| {
            let Some(pre) = &d.preamble else { return false };
            match self.ids.externs.get(&pre.id) {
                Some(x) => self
                    .sw
                    .prog()
                    .externs
                    .get(*x as usize)
                    .is_some_and(|e| e.name == name),
                // v1model digests (calls): matched by the size of their data below.
                None => name.starts_with("receiver "),
            }
        })?;
        let id = digest.preamble.as_ref()?.id;
        let widths = self.type_widths(digest.type_spec.as_ref()?)?;
        // The data plane packs the fields back to back, right-aligned in whole bytes (zero
        // bits in front), as BMv2 does.
        let total: u32 = widths.iter().sum();
        if data.len() != (total as usize).div_ceil(8) {
            return None;
        }
        let mut off = data.len() * 8 - total as usize;
        let mut members = Vec::new();
        for w in &widths {
            members.push(get_bits(data, off, *w));
            off += *w as usize;
        }
        let data = if widths.len() == 1
            && matches!(
                digest.type_spec.as_ref()?.type_spec,
                Some(pi::p4_data_type_spec::TypeSpec::Bitstring(_))
            ) {
            p4::P4Data {
                data: Some(p4::p4_data::Data::Bitstring(canonical(&members[0]))),
            }
        } else {
            p4::P4Data {
                data: Some(p4::p4_data::Data::Struct(p4::P4StructLike {
                    members: members
                        .into_iter()
                        .map(|m| p4::P4Data {
                            data: Some(p4::p4_data::Data::Bitstring(canonical(&m))),
                        })
                        .collect(),
                })),
            }
        };
        Some((id, data))
    }

    /// Widths of the bit-string members of a digest's type (flat structs and headers).
    fn type_widths(&self, t: &pi::P4DataTypeSpec) -> Option<Vec<u32>> {
        use pi::p4_data_type_spec::TypeSpec as T;
        let info = self.p4info.type_info.as_ref();
        let bits = |b: &pi::P4BitstringLikeTypeSpec| -> Option<u32> {
            use pi::p4_bitstring_like_type_spec::TypeSpec as B;
            match &b.type_spec {
                Some(B::Bit(x)) => Some(x.bitwidth as u32),
                Some(B::Int(x)) => Some(x.bitwidth as u32),
                Some(B::Varbit(_)) | None => None,
            }
        };
        match &t.type_spec {
            Some(T::Bitstring(b)) => Some(vec![bits(b)?]),
            Some(T::Bool(_)) => Some(vec![1]),
            Some(T::Struct(n)) => {
                let s = info?.structs.get(&n.name)?;
                let mut out = Vec::new();
                for m in &s.members {
                    out.extend(self.type_widths(m.type_spec.as_ref()?)?);
                }
                Some(out)
            }
            Some(T::Header(n)) => {
                let h = info?.headers.get(&n.name)?;
                h.members
                    .iter()
                    .map(|m| m.type_spec.as_ref().and_then(bits))
                    .collect()
            }
            _ => None,
        }
    }
}

/// `v` left-padded with zeros to the byte size of `width` bits (when shorter).
fn pad(v: &[u8], width: u32) -> Vec<u8> {
    let n = (width as usize).div_ceil(8);
    if v.len() >= n {
        return v[v.len() - n..].to_vec();
    }
    let mut out = vec![0u8; n - v.len()];
    out.extend_from_slice(v);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_bytestrings() {
        assert_eq!(canonical(&[0, 0, 0x63]), vec![0x63]);
        assert_eq!(canonical(&[0, 0]), vec![0]);
        assert!(check_bytes(&[0x10, 0x63], 12, &|| "f".into()).is_err());
        assert!(check_bytes(&[0x00, 0x00, 0x63], 12, &|| "f".into()).is_ok());
        assert!(check_bytes(&[], 12, &|| "f".into()).is_err());
    }

    #[test]
    fn bits_round_trip() {
        let mut d = vec![0u8; 2];
        put_bits(&mut d, 0, 9, &[0x01, 0x23]);
        put_bits(&mut d, 9, 7, &[0x55]);
        assert_eq!(get_bits(&d, 0, 9), vec![0x01, 0x23]);
        assert_eq!(get_bits(&d, 9, 7), vec![0x55]);
    }
}

/// Which optional fields of a table entry a read asked for (set in the request: P4Runtime
/// §11.1.7 "Direct Resources", §11.1.8 "Idle-timeout").
#[derive(Clone, Copy, Debug, Default)]
pub struct ReadWants {
    /// `time_since_last_hit` (P4Runtime §11.1.8).
    pub elapsed: bool,
    /// The direct counter's `counter_data` (P4Runtime §11.1.7).
    pub counter: bool,
    /// The direct meter's `meter_config` (P4Runtime §11.1.7).
    pub meter_config: bool,
    /// The direct meter's per-color `meter_counter_data` (P4Runtime §11.4.3).
    pub meter_counters: bool,
}

impl ReadWants {
    /// What a read's table entry asks for.
    pub fn of(te: &p4::TableEntry) -> ReadWants {
        ReadWants {
            elapsed: te.time_since_last_hit.is_some(),
            counter: te.counter_data.is_some(),
            meter_config: te.meter_config.is_some(),
            meter_counters: te.meter_counter_data.is_some(),
        }
    }
}

/// A write's `MeterCounterData` (P4Runtime §9.1.2 and §9.5): unset leaves the color counts
/// alone, set resets them to zero; a non-zero value in it is `INVALID_ARGUMENT`.
pub fn meter_counters_reset(
    d: Option<&p4::MeterCounterData>,
) -> ControlResult<Option<MeterCounterData>> {
    let Some(d) = d else { return Ok(None) };
    let nonzero = [&d.green, &d.yellow, &d.red]
        .iter()
        .filter_map(|c| c.as_ref())
        .any(|c| c.packet_count != 0 || c.byte_count != 0);
    if nonzero {
        return Err(invalid(
            "meter_counter_data can only reset the color counters: its values must be 0",
        ));
    }
    Ok(Some(MeterCounterData::default()))
}

/// The P4Runtime form of packets and bytes.
pub fn counter_msg(c: CounterData) -> p4::CounterData {
    p4::CounterData {
        packet_count: c.packets as i64,
        byte_count: c.bytes as i64,
    }
}

/// The P4Runtime form of a meter's color counts.
pub fn meter_counters_msg(c: MeterCounterData) -> p4::MeterCounterData {
    p4::MeterCounterData {
        green: Some(counter_msg(c.green)),
        yellow: Some(counter_msg(c.yellow)),
        red: Some(counter_msg(c.red)),
    }
}

/// The P4Runtime form of a meter configuration.
pub fn meter_config_msg(c: nevermiss_runtime::control::MeterConfig) -> p4::MeterConfig {
    p4::MeterConfig {
        cir: c.cir as i64,
        cburst: c.cburst as i64,
        pir: c.pir as i64,
        pburst: c.pburst as i64,
        eburst: 0,
    }
}
