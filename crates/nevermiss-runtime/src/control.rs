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
pub mod stf;

pub use crate::state::PortStatus;
pub use crate::types::{
    ActionCall, Applied, Atomicity, Change, CloneSession, ControlError, ControlResult, CounterData,
    EntryAction, EntryKey, EntryState, GroupMember, IdleNotification, MeterConfig,
    MeterCounterData, MulticastGroup, Op, ProfileGroup, ProfileMember, Replica, SavedCells,
    SetAction, TableEntry, WatchPort,
};
pub use stf::ControlPlane;

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

    // ------------------------------------------------------------------ entries

    /// The expire profile of a control-plane idle timeout in table `rt` (allocated from 255
    /// down, after the profiles the program's `add_entry` calls use).
    fn ttl_profile(&self, td: &p4_ir::Table, rt: &RtTable, ttl: u64) -> ControlResult<u8> {
        let ttl = if ttl == 0 { NEVER_NS } else { ttl };
        let mut m = rt.meta().ttl_profiles();
        if let Some(&p) = m.get(&ttl) {
            return Ok(p);
        }
        let used = rt.table().profiles().len();
        let taken: Vec<u8> = m.values().copied().collect();
        let Some(p) = (used..256)
            .rev()
            .map(|p| p as u8)
            .find(|p| !taken.contains(p))
        else {
            return Err(ControlError::ResourceExhausted(format!(
                "table {}: too many distinct idle timeouts",
                td.name
            )));
        };
        rt.table().set_profile(p, ttl);
        m.insert(ttl, p);
        Ok(p)
    }

    fn check_resources(&self, td: &p4_ir::Table, e: &TableEntry) -> ControlResult<()> {
        if e.idle_timeout_ns > 0 && td.idle_timeout == p4_ir::IdleTimeout::None {
            return Err(invalid(format!(
                "table {} has no idle timeout; idle_timeout_ns must be 0",
                td.name
            )));
        }
        if e.counter.is_some() && td.direct_counter.is_none() {
            return Err(invalid(format!("table {} has no direct counter", td.name)));
        }
        if (e.meter.is_some() || e.meter_counters.is_some()) && td.direct_meter.is_none() {
            return Err(invalid(format!("table {} has no direct meter", td.name)));
        }
        Ok(())
    }

    /// The action data of an entry's action for table `t` (checks references exist).
    fn entry_data(
        &self,
        td: &p4_ir::Table,
        rt: &RtTable,
        a: &EntryAction,
    ) -> ControlResult<ActionData> {
        match (a, rt.indirect()) {
            (EntryAction::Call(c), None) => self.pack_call(td, c, true),
            (EntryAction::Member(m), Some(x)) => {
                let p = self.profile(x)?;
                if !p.read().members.contains_key(m) {
                    return Err(ControlError::NotFound(format!("member {m} does not exist")));
                }
                Ok(reference(ACTION_MEMBER, *m))
            }
            (EntryAction::Group(g), Some(x)) => {
                let p = self.profile(x)?;
                if !p.selector {
                    return Err(invalid(format!(
                        "table {}: its action profile has no groups (not a selector)",
                        td.name
                    )));
                }
                if !p.read().groups.contains_key(g) {
                    return Err(ControlError::NotFound(format!("group {g} does not exist")));
                }
                Ok(reference(ACTION_GROUP, *g))
            }
            // Checked and stored by `store_data`.
            (EntryAction::ActionSet(_), Some(_)) => Ok(reference(ACTION_ONESHOT, 0)),
            (EntryAction::Call(_), Some(_)) => Err(invalid(format!(
                "table {} is indirect: entries name a member or group",
                td.name
            ))),
            (_, None) => Err(invalid(format!(
                "table {} is direct: entries name an action",
                td.name
            ))),
        }
    }

    /// The hidden one-shot set of `set` for selector `x` used by table `td` (checked: the
    /// profile is a selector programmed with one-shot sets only, weights ≥ 1, actions of the
    /// table, at most the profile's size of actions in all its sets).
    fn oneshot_of(
        &self,
        td: &p4_ir::Table,
        x: ExternId,
        set: &[SetAction],
        replacing: Option<u32>,
    ) -> ControlResult<OneShot> {
        let p = self.profile(x)?;
        if !p.selector {
            return Err(invalid(format!(
                "table {}: a one-shot action set needs an action selector",
                td.name
            )));
        }
        let st = p.read();
        if !st.members.is_empty() || !st.groups.is_empty() {
            return Err(invalid(format!(
                "table {}: its action selector is programmed with members and groups; \
                 one-shot action sets cannot be mixed with them",
                td.name
            )));
        }
        if set.is_empty() {
            return Err(invalid("a one-shot action set needs at least one action"));
        }
        let replaced = replacing
            .and_then(|id| st.oneshots.get(&id))
            .filter(|o| o.retired_ns.is_none())
            .map_or(0, |o| o.actions.len());
        if st.oneshot_actions() - replaced + set.len() > p.size.max(1) as usize {
            return Err(ControlError::ResourceExhausted(format!(
                "table {}: its action selector holds at most {} actions",
                td.name, p.size
            )));
        }
        let mut actions = Vec::with_capacity(set.len());
        for a in set {
            if a.weight == 0 {
                return Err(invalid("one-shot action weight must be at least 1"));
            }
            let data = self.pack_call(td, &a.call, true)?;
            let func = td.actions[data.action as usize].func;
            actions.push((func, data.params.to_vec(), a.weight, a.watch));
        }
        Ok(OneShot::new(actions))
    }

    /// The action data to store for an entry's action: `data` from [`Switch::entry_data`],
    /// where a one-shot set becomes a new hidden set (or replaces `reuse`'s in place: a modify
    /// of an entry that already has one).
    fn store_data(
        &self,
        td: &p4_ir::Table,
        rt: &RtTable,
        a: &EntryAction,
        data: ActionData,
        reuse: Option<&ActionData>,
    ) -> ControlResult<ActionData> {
        let (EntryAction::ActionSet(set), Some(x)) = (a, rt.indirect()) else {
            return Ok(data);
        };
        let reuse = reuse
            .filter(|d| d.action == ACTION_ONESHOT && d.params.len() == 4)
            .map(|d| {
                (
                    d,
                    u32::from_be_bytes(d.params[..4].try_into().unwrap_or([0; 4])),
                )
            });
        let o = self.oneshot_of(td, x, set, reuse.map(|r| r.1))?;
        let p = self.profile(x)?;
        let mut st = p.write();
        if let Some((old, id)) = reuse {
            if st.oneshots.get(&id).is_some_and(|o| o.retired_ns.is_none()) {
                st.oneshots.insert(id, o);
                return Ok(old.clone());
            }
        }
        let id = st.add_oneshot(o, self.now_ns());
        Ok(reference(ACTION_ONESHOT, id))
    }

    /// Drops a hidden set that was never stored in the table (a failed insert).
    fn drop_oneshot(&self, rt: &RtTable, data: &ActionData) {
        if let (Some(x), ACTION_ONESHOT, true) =
            (rt.indirect(), data.action, data.params.len() == 4)
        {
            let id = u32::from_be_bytes(data.params[..4].try_into().unwrap_or([0; 4]));
            if let Ok(p) = self.profile(x) {
                p.write().oneshots.remove(&id);
            }
        }
    }

    /// Adjusts the reference counts of the member or group `data` points to; a one-shot set
    /// (one entry's own) is retired when its entry lets go of it.
    fn count_ref(&self, rt: &RtTable, data: &ActionData, delta: i32) {
        let (Some(x), true) = (rt.indirect(), data.params.len() == 4) else {
            return;
        };
        let Ok(p) = self.profile(x) else { return };
        let id = u32::from_be_bytes(data.params[..4].try_into().unwrap_or([0; 4]));
        let mut st = p.write();
        if data.action == ACTION_ONESHOT {
            if delta < 0 {
                let now = self.now_ns();
                if let Some(o) = st.oneshots.get_mut(&id) {
                    o.retired_ns = Some(now);
                }
            }
            return;
        }
        let refs = match data.action {
            ACTION_MEMBER => st.members.get_mut(&id).map(|m| &mut m.refs),
            ACTION_GROUP => st.groups.get_mut(&id).map(|g| &mut g.refs),
            _ => None,
        };
        if let Some(r) = refs {
            *r = r.saturating_add_signed(delta);
        }
    }

    fn insert_entry(
        &self,
        t: TableId,
        e: &TableEntry,
        undo: bool,
    ) -> ControlResult<(Applied, Option<Change>)> {
        let (td, rt) = self.rt(t)?;
        if td.entries_const {
            return Err(ControlError::PermissionDenied(format!(
                "table {} is const: its entries cannot be changed",
                td.name
            )));
        }
        let matches = self.check_key(td, &e.key)?;
        let Some(action) = &e.action else {
            return Err(invalid("an inserted entry needs an action"));
        };
        self.check_resources(td, e)?;
        let data = self.entry_data(td, rt, action)?;
        let ttl = match td.idle_timeout {
            p4_ir::IdleTimeout::None => None,
            _ => Some(self.ttl_profile(td, rt, e.idle_timeout_ns)?),
        };
        let data = self.store_data(td, rt, action, data, None)?;
        let h = match ttl {
            Some(p) => rt.table().insert_with_timeout(
                &matches,
                e.key.priority,
                data.clone(),
                p,
                self.now_ns(),
            ),
            None => rt.table().insert(&matches, e.key.priority, data.clone()),
        }
        .map_err(|err| {
            self.drop_oneshot(rt, &data);
            ControlError::from(err).context(&td.name)
        })?;
        let visible = self.now_ns();
        self.count_ref(rt, &data, 1);
        self.reset_direct(t as usize, h.slot());
        self.write_direct(td, h, e.counter, e.meter, e.meter_counters);
        rt.meta().entries().insert(
            h.slot() as u32,
            EntryMeta {
                gen: h.generation(),
                controller_metadata: e.controller_metadata,
                metadata: e.metadata.clone(),
                idle_timeout_ns: e.idle_timeout_ns,
                meter: e.meter,
            },
        );
        let probe = self.arm_probe(rt, h, 0, visible);
        let undo = undo.then(|| {
            Change::Entry(
                Op::Delete,
                t,
                TableEntry {
                    key: e.key.clone(),
                    ..TableEntry::default()
                },
            )
        });
        Ok((
            Applied {
                visible_ns: visible,
                probe,
            },
            undo,
        ))
    }

    /// Writes an entry's direct counter and meter (`None` meter: unconfigured) and, if given,
    /// the meter's color counts.
    fn write_direct(
        &self,
        td: &p4_ir::Table,
        h: EntryHandle,
        counter: Option<CounterData>,
        meter: Option<MeterConfig>,
        meter_counters: Option<MeterCounterData>,
    ) {
        if let (Some(c), Some(dc)) = (counter, td.direct_counter) {
            if let Some(RtExtern::DirectCounter(cells)) = self.externs().get(dc) {
                if let Some(cell) = cells.get(h.slot()) {
                    cell.reset();
                    cell.count(c.packets, c.bytes);
                }
            }
        }
        if let Some(dm) = td.direct_meter {
            if let Some(RtExtern::DirectMeter(cells)) = self.externs().get(dm) {
                if let Some(cell) = cells.get(h.slot()) {
                    let mut m = cell.lock().unwrap_or_else(PoisonError::into_inner);
                    configure_meter(&mut m, meter);
                    if let Some(c) = meter_counters {
                        set_meter_counts(&mut m, c);
                    }
                }
            }
        }
    }

    /// The entry with this key, or `NotFound`.
    fn find(&self, td: &p4_ir::Table, rt: &RtTable, key: &EntryKey) -> ControlResult<EntryView> {
        let matches = self.check_key(td, key)?;
        rt.table()
            .read(&matches, key.priority)
            .map_err(|e| ControlError::from(e).context(&td.name))
    }

    fn modify_entry(
        &self,
        t: TableId,
        e: &TableEntry,
        undo: bool,
    ) -> ControlResult<(Applied, Option<Change>)> {
        let (td, rt) = self.rt(t)?;
        let old = self.find(td, rt, &e.key)?;
        if td.entries_const && e.action.is_some() {
            return Err(ControlError::PermissionDenied(format!(
                "table {} is const: only direct resources of its entries can be modified",
                td.name
            )));
        }
        self.check_resources(td, e)?;
        let undo = undo.then(|| {
            let old_state = self.entry_state(t, td, rt, &old);
            let (old_counter, old_meter_counters) = (old_state.counter, old_state.meter_counters);
            let mut undo_entry = old_state.into_entry();
            // What the modify overwrites of the direct resources, the undo writes back.
            undo_entry.counter = e.counter.and(old_counter);
            undo_entry.meter_counters = e.meter_counters.and(old_meter_counters);
            Change::Entry(Op::Modify, t, undo_entry)
        });
        let new_data = match &e.action {
            Some(a) => Some(self.entry_data(td, rt, a)?),
            None => None,
        };
        let ttl = if e.idle_timeout_ns != self.meta_of(rt, &old).idle_timeout_ns
            && td.idle_timeout != p4_ir::IdleTimeout::None
        {
            Some(self.ttl_profile(td, rt, e.idle_timeout_ns)?)
        } else {
            None
        };
        let matches = self.check_key(td, &e.key)?;
        // Nothing is changed before this point; a one-shot set replaces the entry's own set
        // in place (`reused`: the entry's data stays the same reference).
        let new_data = match (&e.action, new_data) {
            (Some(a), Some(d)) => Some(self.store_data(td, rt, a, d, Some(&old.data))?),
            (_, d) => d,
        };
        let reused = new_data
            .as_ref()
            .is_some_and(|d| d.action == ACTION_ONESHOT && *d == old.data);
        if let Some(p) = ttl {
            rt.table().set_expire_profile(old.id, p, self.now_ns());
        }
        let (h, version) = match &new_data {
            Some(d) => {
                let r = rt
                    .table()
                    .modify_versioned(&matches, e.key.priority, d)
                    .map_err(|err| {
                        if !reused {
                            self.drop_oneshot(rt, d);
                        }
                        ControlError::from(err).context(&td.name)
                    })?;
                if !reused {
                    self.count_ref(rt, d, 1);
                    self.count_ref(rt, &old.data, -1);
                }
                r
            }
            None => (old.id, old.version),
        };
        let visible = self.now_ns();
        if e.counter.is_some() || td.direct_meter.is_some() {
            // P4Runtime: an unset counter is left alone; an unset meter config is reset.
            self.write_direct(td, h, e.counter, e.meter, e.meter_counters);
        }
        rt.meta().entries().insert(
            h.slot() as u32,
            EntryMeta {
                gen: h.generation(),
                controller_metadata: e.controller_metadata,
                metadata: e.metadata.clone(),
                idle_timeout_ns: e.idle_timeout_ns,
                meter: e.meter,
            },
        );
        let probe = match new_data {
            Some(_) => self.arm_probe(rt, h, version, visible),
            None => None,
        };
        Ok((
            Applied {
                visible_ns: visible,
                probe,
            },
            undo,
        ))
    }

    fn delete_entry(
        &self,
        t: TableId,
        key: &EntryKey,
        undo: bool,
    ) -> ControlResult<(Applied, Option<Change>)> {
        let (td, rt) = self.rt(t)?;
        if td.entries_const {
            return Err(ControlError::PermissionDenied(format!(
                "table {} is const: its entries cannot be deleted",
                td.name
            )));
        }
        let old = self.find(td, rt, key)?;
        let undo = undo.then(|| {
            let mut undo_entry = self.entry_state(t, td, rt, &old).into_entry();
            undo_entry.counter = self.direct_counter_of(td, old.id);
            Change::Entry(Op::Insert, t, undo_entry)
        });
        rt.table()
            .delete_id(old.id)
            .map_err(|e| ControlError::from(e).context(&td.name))?;
        let visible = self.now_ns();
        self.count_ref(rt, &old.data, -1);
        rt.meta().entries().remove(old.id.slot() as u32);
        Ok((
            Applied {
                visible_ns: visible,
                probe: None,
            },
            undo,
        ))
    }

    fn meta_of(&self, rt: &RtTable, v: &EntryView) -> EntryMeta {
        rt.meta()
            .entries()
            .get(v.id.slot() as u32, v.id.generation())
            .unwrap_or_default()
    }

    fn direct_meter_counters_of(
        &self,
        td: &p4_ir::Table,
        h: EntryHandle,
    ) -> Option<MeterCounterData> {
        let dm = td.direct_meter?;
        match self.externs().get(dm) {
            Some(RtExtern::DirectMeter(cells)) => cells
                .get(h.slot())
                .map(|m| meter_counts(&m.lock().unwrap_or_else(PoisonError::into_inner))),
            _ => None,
        }
    }

    fn direct_counter_of(&self, td: &p4_ir::Table, h: EntryHandle) -> Option<CounterData> {
        let dc = td.direct_counter?;
        match self.externs().get(dc) {
            Some(RtExtern::DirectCounter(cells)) => cells.get(h.slot()).map(|c| {
                let (packets, bytes) = c.read();
                CounterData { packets, bytes }
            }),
            _ => None,
        }
    }

    /// The typed state of a table's entry.
    fn entry_state(
        &self,
        t: TableId,
        td: &p4_ir::Table,
        rt: &RtTable,
        v: &EntryView,
    ) -> EntryState {
        let meta = rt
            .meta()
            .entries()
            .get(v.id.slot() as u32, v.id.generation());
        let from_data_plane = meta.is_none() && td.add_on_miss;
        let meta = meta.unwrap_or_default();
        let action = match v.data.action {
            ACTION_MEMBER | ACTION_GROUP | ACTION_ONESHOT if v.data.params.len() == 4 => {
                let id = u32::from_be_bytes(v.data.params[..4].try_into().unwrap_or([0; 4]));
                match v.data.action {
                    ACTION_MEMBER => EntryAction::Member(id),
                    ACTION_GROUP => EntryAction::Group(id),
                    _ => EntryAction::ActionSet(self.action_set(td, rt, id)),
                }
            }
            a => EntryAction::Call(ActionCall {
                action: a,
                params: td
                    .actions
                    .get(a as usize)
                    .map(|ad| unpack_params(ad, &v.data.params))
                    .unwrap_or_default(),
            }),
        };
        let profile_ns = v
            .expire_profile
            .and_then(|p| rt.table().profile_duration(p))
            .filter(|&d| d != NEVER_NS);
        let idle_timeout_ns = if from_data_plane {
            profile_ns.unwrap_or(0)
        } else {
            meta.idle_timeout_ns
        };
        let elapsed_ns = match (v.deadline_ns, v.expire_profile) {
            (Some(d), Some(p)) => {
                let ttl = rt.table().profile_duration(p).unwrap_or(0);
                Some(self.now_ns().saturating_sub(d.saturating_sub(ttl)))
            }
            _ if td.idle_timeout != p4_ir::IdleTimeout::None => Some(0),
            _ => None,
        };
        let _ = t;
        EntryState {
            key: EntryKey {
                matches: v.matches.clone(),
                priority: v.priority,
            },
            action,
            controller_metadata: meta.controller_metadata,
            metadata: meta.metadata,
            idle_timeout_ns,
            elapsed_ns,
            counter: self.direct_counter_of(td, v.id),
            meter: meta.meter,
            meter_counters: self.direct_meter_counters_of(td, v.id),
            is_const: td.entries_const,
            from_data_plane,
            handle: v.id,
        }
    }

    /// The actions of one-shot set `id` of table `td`'s selector, as written.
    fn action_set(&self, td: &p4_ir::Table, rt: &RtTable, id: u32) -> Vec<SetAction> {
        let Some(p) = rt.indirect().and_then(|x| self.profile(x).ok()) else {
            return Vec::new();
        };
        let st = p.read();
        let Some(o) = st.oneshots.get(&id) else {
            return Vec::new();
        };
        o.actions
            .iter()
            .map(|(func, params, weight, watch)| {
                let a = td.action_of(*func).unwrap_or(ACTION_NONE);
                SetAction {
                    call: ActionCall {
                        action: a,
                        params: td
                            .actions
                            .get(a as usize)
                            .map(|ad| unpack_params(ad, params))
                            .unwrap_or_default(),
                    },
                    weight: *weight,
                    watch: *watch,
                }
            })
            .collect()
    }

    /// The entry of table `t` with this key.
    pub fn read_entry(&self, t: TableId, key: &EntryKey) -> ControlResult<EntryState> {
        let _r = self.control_read();
        let (td, rt) = self.rt(t)?;
        let v = self.find(td, rt, key)?;
        Ok(self.entry_state(t, td, rt, &v))
    }

    /// Every entry of table `t` (those the data plane added included), in slot order.
    pub fn read_entries(&self, t: TableId) -> ControlResult<Vec<EntryState>> {
        let _r = self.control_read();
        let (td, rt) = self.rt(t)?;
        Ok(rt
            .table()
            .iter()
            .iter()
            .map(|v| self.entry_state(t, td, rt, v))
            .collect())
    }

    /// Whether the control plane changed table `t`'s default action from the program's (what
    /// a pipeline change that keeps the forwarding state carries over).
    pub fn default_changed(&self, t: TableId) -> ControlResult<bool> {
        let _r = self.control_read();
        let (td, rt) = self.rt(t)?;
        let d = rt.table().default_action();
        Ok(match &td.default_action {
            Some((a, params)) => {
                // The cell may hold the parameters padded to the table's widest action.
                let p = d.params.as_slice();
                d.action != *a
                    || p.get(..params.len()) != Some(&params[..])
                    || p.iter().skip(params.len()).any(|b| *b != 0)
            }
            None => true,
        })
    }

    /// Table `t`'s default action: `None` when no action runs on a miss.
    pub fn read_default(&self, t: TableId) -> ControlResult<Option<ActionCall>> {
        let _r = self.control_read();
        let (td, rt) = self.rt(t)?;
        let d = rt.table().default_action();
        Ok(td.actions.get(d.action as usize).map(|a| ActionCall {
            action: d.action,
            params: unpack_params(a, &d.params),
        }))
    }

    fn set_default(
        &self,
        t: TableId,
        call: Option<&ActionCall>,
    ) -> ControlResult<(Applied, Change)> {
        let (td, rt) = self.rt(t)?;
        if td.default_const {
            return Err(ControlError::PermissionDenied(format!(
                "table {} has a const default action",
                td.name
            )));
        }
        let old = rt.table().default_action();
        let undo = Change::Default(
            t,
            td.actions.get(old.action as usize).map(|a| ActionCall {
                action: old.action,
                params: unpack_params(a, &old.params),
            }),
        );
        let data = match call {
            Some(c) => self.pack_call(td, c, false)?,
            None => match &td.default_action {
                Some((a, p)) => ActionData::new(*a, p.as_slice()),
                None => ActionData::new(ACTION_NONE, &[][..]),
            },
        };
        rt.table()
            .set_default(data)
            .map_err(|e| ControlError::from(e).context(&td.name))?;
        Ok((
            Applied {
                visible_ns: self.now_ns(),
                probe: None,
            },
            undo,
        ))
    }

    /// The idle-timeout notifications waiting for the controller, as typed entries (entries
    /// deleted since are skipped). Each notified entry's timer is restarted, so a still idle
    /// entry is notified again one idle timeout later (P4Runtime §9.1.5).
    pub fn take_idle_notifications(&self) -> Vec<IdleNotification> {
        let notes = self.take_notifications();
        if notes.is_empty() {
            return Vec::new();
        }
        let _r = self.control_read();
        let now = self.now_ns();
        let mut out = Vec::with_capacity(notes.len());
        for n in notes {
            let Ok((td, rt)) = self.rt(n.table) else {
                continue;
            };
            let Some(v) = rt.table().get(n.entry.id) else {
                continue;
            };
            out.push(IdleNotification {
                table: n.table,
                entry: self.entry_state(n.table, td, rt, &v),
            });
            rt.table().restart_timer(v.id, now);
        }
        out
    }

    // ------------------------------------------------------------------ counters, meters

    fn counter_cells(&self, x: ExternId) -> ControlResult<&[crate::state::CounterCell]> {
        match self.externs().get(x) {
            Some(RtExtern::Counter(c)) => Ok(c),
            _ => Err(ControlError::NotFound(format!(
                "{x} is not an indexed counter"
            ))),
        }
    }

    /// Number of cells of indexed counter `x`.
    pub fn counter_size(&self, x: ExternId) -> ControlResult<u32> {
        Ok(self.counter_cells(x)?.len() as u32)
    }

    /// Cell `index` of indexed counter `x`.
    pub fn read_counter(&self, x: ExternId, index: u32) -> ControlResult<CounterData> {
        let cells = self.counter_cells(x)?;
        let c = cells.get(index as usize).ok_or_else(|| {
            ControlError::OutOfRange(format!(
                "counter index {index} is past its size {}",
                cells.len()
            ))
        })?;
        let (packets, bytes) = c.read();
        Ok(CounterData { packets, bytes })
    }

    /// The direct counter of table `t`'s entry with this key.
    pub fn read_direct_counter(&self, t: TableId, key: &EntryKey) -> ControlResult<CounterData> {
        let _r = self.control_read();
        let (td, rt) = self.rt(t)?;
        if td.direct_counter.is_none() {
            return Err(invalid(format!("table {} has no direct counter", td.name)));
        }
        let v = self.find(td, rt, key)?;
        Ok(self.direct_counter_of(td, v.id).unwrap_or_default())
    }

    /// Writes cell `index` of counter `x`, or every cell; returns the undo if asked.
    fn write_counter(
        &self,
        x: ExternId,
        index: Option<u32>,
        d: Option<CounterData>,
        undo: bool,
    ) -> ControlResult<(Applied, Option<Change>)> {
        let cells = self.counter_cells(x)?;
        let set = |c: &crate::state::CounterCell, d: CounterData| {
            c.reset();
            c.count(d.packets, d.bytes);
        };
        let saved = match index {
            Some(i) => {
                let old = self.read_counter(x, i)?;
                if let (Some(d), Some(c)) = (d, cells.get(i as usize)) {
                    set(c, d);
                }
                d.map(|_| Change::Counter {
                    counter: x,
                    index: Some(i),
                    data: Some(old),
                })
            }
            None => {
                let Some(d) = d else {
                    return Ok((self.applied(), None));
                };
                let old = undo.then(|| {
                    cells
                        .iter()
                        .map(|c| {
                            let (packets, bytes) = c.read();
                            CounterData { packets, bytes }
                        })
                        .collect()
                });
                for c in cells.iter() {
                    set(c, d);
                }
                old.map(|o| Change::Restore(SavedCells(Saved::Counter(x, o))))
            }
        };
        Ok((self.applied(), saved.filter(|_| undo)))
    }

    fn applied(&self) -> Applied {
        Applied {
            visible_ns: self.now_ns(),
            probe: None,
        }
    }

    fn meter_cells(&self, x: ExternId) -> ControlResult<&[Mutex<Meter>]> {
        match self.externs().get(x) {
            Some(RtExtern::Meter(c)) => Ok(c),
            _ => Err(ControlError::NotFound(format!(
                "{x} is not an indexed meter"
            ))),
        }
    }

    /// Number of cells of indexed meter `x`.
    pub fn meter_size(&self, x: ExternId) -> ControlResult<u32> {
        Ok(self.meter_cells(x)?.len() as u32)
    }

    /// The configuration of cell `index` of meter `x` (`None`: unconfigured).
    pub fn read_meter(&self, x: ExternId, index: u32) -> ControlResult<Option<MeterConfig>> {
        let cells = self.meter_cells(x)?;
        let m = cells.get(index as usize).ok_or_else(|| {
            ControlError::OutOfRange(format!(
                "meter index {index} is past its size {}",
                cells.len()
            ))
        })?;
        Ok(m.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .config
            .map(from_units))
    }

    /// The color counts of cell `index` of meter `x`.
    pub fn read_meter_counters(&self, x: ExternId, index: u32) -> ControlResult<MeterCounterData> {
        let cells = self.meter_cells(x)?;
        let m = cells.get(index as usize).ok_or_else(|| {
            ControlError::OutOfRange(format!(
                "meter index {index} is past its size {}",
                cells.len()
            ))
        })?;
        Ok(meter_counts(
            &m.lock().unwrap_or_else(PoisonError::into_inner),
        ))
    }

    /// Writes cell `index` of meter `x`, or every cell; returns the undo if asked.
    fn write_meter(
        &self,
        x: ExternId,
        index: Option<u32>,
        c: Option<MeterConfig>,
        counters: Option<MeterCounterData>,
        undo: bool,
    ) -> ControlResult<(Applied, Option<Change>)> {
        let cells = self.meter_cells(x)?;
        let write = |m: &Mutex<Meter>| {
            let mut m = m.lock().unwrap_or_else(PoisonError::into_inner);
            let old = (m.config.map(from_units), counters.map(|_| meter_counts(&m)));
            configure_meter(&mut m, c);
            if let Some(n) = counters {
                set_meter_counts(&mut m, n);
            }
            old
        };
        let saved = match index {
            Some(i) => {
                let Some(m) = cells.get(i as usize) else {
                    return Err(ControlError::OutOfRange(format!(
                        "meter index {i} is past its size {}",
                        cells.len()
                    )));
                };
                let (config, counters) = write(m);
                Change::Meter {
                    meter: x,
                    index: Some(i),
                    config,
                    counters,
                }
            }
            None => {
                let mut old = Vec::with_capacity(if undo { cells.len() } else { 0 });
                for m in cells.iter() {
                    let o = write(m);
                    if undo {
                        old.push(o);
                    }
                }
                Change::Restore(SavedCells(Saved::Meter(x, old)))
            }
        };
        Ok((self.applied(), undo.then_some(saved)))
    }

    /// The direct meter configuration of table `t`'s entry with this key.
    pub fn read_direct_meter(
        &self,
        t: TableId,
        key: &EntryKey,
    ) -> ControlResult<Option<MeterConfig>> {
        let _r = self.control_read();
        let (td, rt) = self.rt(t)?;
        if td.direct_meter.is_none() {
            return Err(invalid(format!("table {} has no direct meter", td.name)));
        }
        let v = self.find(td, rt, key)?;
        Ok(self.meta_of(rt, &v).meter)
    }

    fn write_direct_meter(
        &self,
        t: TableId,
        key: &EntryKey,
        c: Option<MeterConfig>,
        counters: Option<MeterCounterData>,
    ) -> ControlResult<(Applied, Change)> {
        let (td, rt) = self.rt(t)?;
        if td.direct_meter.is_none() {
            return Err(invalid(format!("table {} has no direct meter", td.name)));
        }
        let v = self.find(td, rt, key)?;
        let mut meta = self.meta_of(rt, &v);
        let old = meta.meter;
        let old_counters = counters.and(self.direct_meter_counters_of(td, v.id));
        self.write_direct(td, v.id, None, c, counters);
        meta.gen = v.id.generation();
        meta.meter = c;
        rt.meta().entries().insert(v.id.slot() as u32, meta);
        Ok((
            self.applied(),
            Change::DirectMeter {
                table: t,
                key: key.clone(),
                config: old,
                counters: old_counters,
            },
        ))
    }

    fn write_direct_counter(
        &self,
        t: TableId,
        key: &EntryKey,
        d: Option<CounterData>,
    ) -> ControlResult<(Applied, Change)> {
        let (td, rt) = self.rt(t)?;
        if td.direct_counter.is_none() {
            return Err(invalid(format!("table {} has no direct counter", td.name)));
        }
        let v = self.find(td, rt, key)?;
        let old = self.direct_counter_of(td, v.id).unwrap_or_default();
        if d.is_some() {
            self.write_direct(td, v.id, d, self.meta_of(rt, &v).meter, None);
        }
        Ok((
            self.applied(),
            Change::DirectCounter {
                table: t,
                key: key.clone(),
                data: d.map(|_| old),
            },
        ))
    }

    // ------------------------------------------------------------------ registers

    fn register(&self, x: ExternId) -> ControlResult<(&crate::state::RegisterStore, &Layout)> {
        match (self.externs().get(x), self.prog().externs.get(x as usize)) {
            (Some(RtExtern::Register(r)), Some(def)) => match &def.kind {
                ExternKind::Register { layout, .. } => Ok((r, layout)),
                _ => Err(ControlError::NotFound(format!("{x} is not a register"))),
            },
            _ => Err(ControlError::NotFound(format!("{x} is not a register"))),
        }
    }

    /// The scalar fields of register `x`'s cell type, in order (one for a `bit<W>` register),
    /// with their word offsets in a cell.
    pub fn register_fields(&self, x: ExternId) -> ControlResult<Vec<(u32, Ty)>> {
        let (_, layout) = self.register(x)?;
        let mut out = Vec::new();
        scalars(layout, 0, &mut out).map_err(ControlError::Unimplemented)?;
        Ok(out)
    }

    /// Number of cells of register `x`.
    pub fn register_size(&self, x: ExternId) -> ControlResult<u32> {
        Ok(self.register(x)?.0.size)
    }

    /// Cell `index` of register `x`: one big-endian value per field (`ceil(w/8)` bytes).
    pub fn read_register(&self, x: ExternId, index: u32) -> ControlResult<Vec<Vec<u8>>> {
        let (r, _) = self.register(x)?;
        if index >= r.size {
            return Err(ControlError::OutOfRange(format!(
                "register index {index} is past its size {}",
                r.size
            )));
        }
        let fields = self.register_fields(x)?;
        let mut words = vec![0u64; r.words as usize];
        r.read(u64::from(index), &mut words);
        Ok(fields
            .iter()
            .map(|(off, ty)| words_to_bytes(&words[*off as usize..], ty.width))
            .collect())
    }

    /// Writes cell `index` of register `x`, or every cell; returns the undo if asked.
    fn write_register(
        &self,
        x: ExternId,
        index: Option<u32>,
        value: &[Vec<u8>],
        undo: bool,
    ) -> ControlResult<(Applied, Option<Change>)> {
        let (r, _) = self.register(x)?;
        let fields = self.register_fields(x)?;
        if let Some(i) = index {
            if i >= r.size {
                return Err(ControlError::OutOfRange(format!(
                    "register index {i} is past its size {}",
                    r.size
                )));
            }
        }
        if value.len() != fields.len() {
            return Err(invalid(format!(
                "register cell has {} fields, {} values given",
                fields.len(),
                value.len()
            )));
        }
        let mut words = vec![0u64; r.words as usize];
        for ((off, ty), v) in fields.iter().zip(value) {
            if !fits(v, ty.width) {
                return Err(ControlError::OutOfRange(format!(
                    "register value does not fit {} bits",
                    ty.width
                )));
            }
            bytes_to_words(v, &mut words[*off as usize..]);
        }
        let saved = match index {
            Some(i) => {
                let old = self.read_register(x, i)?;
                r.write(u64::from(i), &words);
                Change::Register {
                    register: x,
                    index: Some(i),
                    value: old,
                }
            }
            None => {
                let n = r.words as usize;
                let mut old = vec![0u64; if undo { n * r.size as usize } else { 0 }];
                for i in 0..r.size {
                    if undo {
                        let at = i as usize * n;
                        r.read(u64::from(i), &mut old[at..at + n]);
                    }
                    r.write(u64::from(i), &words);
                }
                Change::Restore(SavedCells(Saved::Register(x, old)))
            }
        };
        Ok((self.applied(), undo.then_some(saved)))
    }

    /// Puts back the cells a write of every cell saved.
    fn restore(&self, s: &SavedCells) -> ControlResult<(Applied, Option<Change>)> {
        match &s.0 {
            Saved::Counter(x, cells) => {
                for (c, d) in self.counter_cells(*x)?.iter().zip(cells) {
                    c.reset();
                    c.count(d.packets, d.bytes);
                }
            }
            Saved::Meter(x, cells) => {
                for (m, (config, counters)) in self.meter_cells(*x)?.iter().zip(cells) {
                    let mut m = m.lock().unwrap_or_else(PoisonError::into_inner);
                    configure_meter(&mut m, *config);
                    if let Some(n) = counters {
                        set_meter_counts(&mut m, *n);
                    }
                }
            }
            Saved::Register(x, words) => {
                let (r, _) = self.register(*x)?;
                let n = r.words as usize;
                if n > 0 {
                    for (i, w) in words.chunks(n).enumerate() {
                        r.write(i as u64, w);
                    }
                }
            }
        }
        Ok((self.applied(), None))
    }

    // ------------------------------------------------------------------ action profiles

    fn profile(&self, x: ExternId) -> ControlResult<&crate::state::ActionProfile> {
        self.externs()
            .profile(x)
            .ok_or_else(|| ControlError::NotFound(format!("{x} is not an action profile")))
    }

    /// The tables whose entries point into action profile `x` (members' actions are indices
    /// into the first one's actions).
    pub fn profile_tables(&self, x: ExternId) -> Vec<TableId> {
        self.rt_tables()
            .iter()
            .enumerate()
            .filter(|(_, rt)| rt.indirect() == Some(x))
            .map(|(i, _)| i as TableId)
            .collect()
    }

    fn profile_table(&self, x: ExternId) -> ControlResult<&p4_ir::Table> {
        let t = self.profile_tables(x).first().copied().ok_or_else(|| {
            ControlError::FailedPrecondition(format!("no table uses action profile {x}"))
        })?;
        Ok(&self.prog().tables[t as usize])
    }

    /// The members of action profile `x`, by id.
    pub fn read_members(&self, x: ExternId) -> ControlResult<Vec<ProfileMember>> {
        let p = self.profile(x)?;
        let td = self.profile_table(x).ok();
        let st = p.read();
        let mut out: Vec<ProfileMember> = st
            .members
            .iter()
            .map(|(id, m)| {
                let a = td.and_then(|td| td.action_of(m.func));
                ProfileMember {
                    id: *id,
                    action: ActionCall {
                        action: a.unwrap_or(ACTION_NONE),
                        params: a
                            .and_then(|a| {
                                td.map(|td| unpack_params(&td.actions[a as usize], &m.params))
                            })
                            .unwrap_or_default(),
                    },
                }
            })
            .collect();
        out.sort_by_key(|m| m.id);
        Ok(out)
    }

    /// The groups of action selector `x`, by id.
    pub fn read_groups(&self, x: ExternId) -> ControlResult<Vec<ProfileGroup>> {
        let p = self.profile(x)?;
        let st = p.read();
        let mut out: Vec<ProfileGroup> = st
            .groups
            .iter()
            .map(|(id, g)| ProfileGroup {
                id: *id,
                members: g.members.clone(),
                max_size: g.max_size,
            })
            .collect();
        out.sort_by_key(|g| g.id);
        Ok(out)
    }

    fn write_member(
        &self,
        op: Op,
        x: ExternId,
        m: &ProfileMember,
    ) -> ControlResult<(Applied, Change)> {
        let p = self.profile(x)?;
        let mut st = p.write();
        if op == Op::Insert && st.has_oneshots() {
            return Err(invalid(format!(
                "action profile {x} is programmed with one-shot action sets; members and \
                 groups cannot be mixed with them"
            )));
        }
        let old = st.members.get(&m.id).cloned();
        let old_call = |o: &Member| -> ControlResult<ProfileMember> {
            let td = self.profile_table(x)?;
            let a = td.action_of(o.func).unwrap_or(ACTION_NONE);
            Ok(ProfileMember {
                id: m.id,
                action: ActionCall {
                    action: a,
                    params: td
                        .actions
                        .get(a as usize)
                        .map(|ad| unpack_params(ad, &o.params))
                        .unwrap_or_default(),
                },
            })
        };
        let undo = match (op, &old) {
            (Op::Insert, Some(_)) => {
                return Err(ControlError::AlreadyExists(format!(
                    "member {} exists",
                    m.id
                )))
            }
            (Op::Modify | Op::Delete, None) => {
                return Err(ControlError::NotFound(format!(
                    "member {} does not exist",
                    m.id
                )))
            }
            (Op::Delete, Some(o)) if o.refs > 0 => {
                return Err(ControlError::FailedPrecondition(format!(
                    "member {} is used by {} groups or entries",
                    m.id, o.refs
                )))
            }
            (Op::Insert, None) => Change::Member(Op::Delete, x, m.clone()),
            (Op::Modify, Some(o)) => Change::Member(Op::Modify, x, old_call(o)?),
            (Op::Delete, Some(o)) => Change::Member(Op::Insert, x, old_call(o)?),
        };
        match op {
            Op::Delete => {
                st.members.remove(&m.id);
            }
            _ => {
                if op == Op::Insert && st.members.len() >= p.size.max(1) as usize {
                    return Err(ControlError::ResourceExhausted(format!(
                        "action profile {x} is full ({} members)",
                        p.size
                    )));
                }
                let td = self.profile_table(x)?;
                let data = self.pack_call(td, &m.action, true)?;
                let func = td.actions[data.action as usize].func;
                let refs = old.map_or(0, |o| o.refs);
                st.members.insert(
                    m.id,
                    Member {
                        func,
                        params: data.params.to_vec(),
                        refs,
                    },
                );
            }
        }
        Ok((self.applied(), undo))
    }

    fn write_group(
        &self,
        op: Op,
        x: ExternId,
        g: &ProfileGroup,
    ) -> ControlResult<(Applied, Change)> {
        let p = self.profile(x)?;
        if !p.selector {
            return Err(invalid(format!(
                "action profile {x} is not a selector: it has no groups"
            )));
        }
        let mut st = p.write();
        if op == Op::Insert && st.has_oneshots() {
            return Err(invalid(format!(
                "action profile {x} is programmed with one-shot action sets; members and \
                 groups cannot be mixed with them"
            )));
        }
        let old = st.groups.get(&g.id).cloned();
        let undo = match (op, &old) {
            (Op::Insert, Some(_)) => {
                return Err(ControlError::AlreadyExists(format!(
                    "group {} exists",
                    g.id
                )))
            }
            (Op::Modify | Op::Delete, None) => {
                return Err(ControlError::NotFound(format!(
                    "group {} does not exist",
                    g.id
                )))
            }
            (Op::Delete, Some(o)) if o.refs > 0 => {
                return Err(ControlError::FailedPrecondition(format!(
                    "group {} is used by {} entries",
                    g.id, o.refs
                )))
            }
            (Op::Insert, None) => Change::Group(Op::Delete, x, g.clone()),
            (_, Some(o)) => Change::Group(
                if op == Op::Delete {
                    Op::Insert
                } else {
                    Op::Modify
                },
                x,
                ProfileGroup {
                    id: g.id,
                    members: o.members.clone(),
                    max_size: o.max_size,
                },
            ),
        };
        if op != Op::Delete {
            let max = if g.max_size == 0 { p.size } else { g.max_size };
            if g.members.len() > max as usize {
                return Err(ControlError::ResourceExhausted(format!(
                    "group {} has {} members, at most {max} allowed",
                    g.id,
                    g.members.len()
                )));
            }
            for m in &g.members {
                if !st.members.contains_key(&m.id) {
                    return Err(ControlError::NotFound(format!(
                        "member {} does not exist",
                        m.id
                    )));
                }
                if m.weight == 0 {
                    return Err(invalid(format!(
                        "member {}: weight must be at least 1",
                        m.id
                    )));
                }
            }
        }
        if let Some(o) = &old {
            for m in &o.members {
                if let Some(mm) = st.members.get_mut(&m.id) {
                    mm.refs = mm.refs.saturating_sub(1);
                }
            }
        }
        if op == Op::Delete {
            st.groups.remove(&g.id);
        } else {
            for m in &g.members {
                if let Some(mm) = st.members.get_mut(&m.id) {
                    mm.refs += 1;
                }
            }
            st.groups.insert(
                g.id,
                Group {
                    members: g.members.clone(),
                    max_size: g.max_size,
                    expanded: expand(&g.members),
                    refs: old.map_or(0, |o| o.refs),
                },
            );
        }
        Ok((self.applied(), undo))
    }

    // ------------------------------------------------------------------ replication

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

    fn write_multicast(&self, op: Op, g: &MulticastGroup) -> ControlResult<(Applied, Change)> {
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

    fn write_clone(&self, op: Op, s: &CloneSession) -> ControlResult<(Applied, Change)> {
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

    // ------------------------------------------------------------------ value sets

    /// The members of parser value set `vs`: per member one `Ternary(value, mask)` per
    /// component.
    pub fn read_value_set(&self, vs: ValueSetId) -> ControlResult<Vec<Vec<FieldMatch>>> {
        let (def, set) = self.value_set_of(vs)?;
        let m = set.read().unwrap_or_else(PoisonError::into_inner);
        Ok(m.iter()
            .map(|member| {
                member
                    .iter()
                    .zip(&def.widths)
                    .map(|((v, mask), w)| {
                        let n = (*w as usize).div_ceil(8);
                        let b = |x: u64| x.to_be_bytes()[8 - n.min(8)..].to_vec();
                        FieldMatch::Ternary(b(*v), b(*mask))
                    })
                    .collect()
            })
            .collect())
    }

    fn value_set_of(
        &self,
        vs: ValueSetId,
    ) -> ControlResult<(&p4_ir::ir::ValueSet, &RwLock<crate::state::ValueSetMembers>)> {
        match (self.prog().value_sets.get(vs as usize), self.value_set(vs)) {
            (Some(d), Some(s)) => Ok((d, s)),
            _ => Err(ControlError::NotFound(format!("unknown value set {vs}"))),
        }
    }

    fn write_value_set(
        &self,
        vs: ValueSetId,
        members: &[Vec<FieldMatch>],
    ) -> ControlResult<(Applied, Change)> {
        let old = self.read_value_set(vs)?;
        let (def, set) = self.value_set_of(vs)?;
        if members.len() > def.size as usize {
            return Err(ControlError::ResourceExhausted(format!(
                "value set {} holds at most {} members",
                def.name, def.size
            )));
        }
        let mut new = Vec::with_capacity(members.len());
        for m in members {
            if m.len() != def.widths.len() {
                return Err(invalid(format!(
                    "value set {} has {} components, {} matches given",
                    def.name,
                    def.widths.len(),
                    m.len()
                )));
            }
            let mut comps = Vec::with_capacity(m.len());
            for (f, &w) in m.iter().zip(&def.widths) {
                if w > 64 {
                    return Err(ControlError::Unimplemented(format!(
                        "value set {}: components wider than 64 bits",
                        def.name
                    )));
                }
                let full = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
                let val = |v: &[u8]| -> ControlResult<u64> {
                    if !fits(v, w) {
                        return Err(ControlError::OutOfRange(format!(
                            "value set {}: value does not fit {w} bits",
                            def.name
                        )));
                    }
                    Ok(v.iter()
                        .fold(0u64, |a, b| a.wrapping_shl(8) | u64::from(*b)))
                };
                comps.push(match f {
                    FieldMatch::Exact(v) => (val(v)?, full),
                    FieldMatch::Ternary(v, m) => {
                        let (v, m) = (val(v)?, val(m)?);
                        if v & !m != 0 {
                            return Err(invalid(format!(
                                "value set {}: value has bits outside the mask",
                                def.name
                            )));
                        }
                        (v, m)
                    }
                    _ => {
                        return Err(invalid(format!(
                            "value set {}: members are exact or ternary matches",
                            def.name
                        )))
                    }
                });
            }
            new.push(comps);
        }
        *set.write().unwrap_or_else(PoisonError::into_inner) = new;
        Ok((
            self.applied(),
            Change::ValueSet {
                set: vs,
                members: old,
            },
        ))
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

/// The color counts of meter `m`.
fn meter_counts(m: &Meter) -> MeterCounterData {
    let c = |i: usize| CounterData {
        packets: m.counts[i][0],
        bytes: m.counts[i][1],
    };
    MeterCounterData {
        green: c(GREEN),
        yellow: c(YELLOW),
        red: c(RED),
    }
}

/// Sets meter `m`'s color counts.
fn set_meter_counts(m: &mut Meter, counts: MeterCounterData) {
    for (i, c) in [counts.green, counts.yellow, counts.red].iter().enumerate() {
        m.counts[i] = [c.packets, c.bytes];
    }
}

fn check_replicas(rs: &[Replica]) -> ControlResult<()> {
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

/// Configures a meter from P4Runtime units (rates per second) or resets it (`None`).
fn configure_meter(m: &mut Meter, c: Option<MeterConfig>) {
    match c {
        Some(c) => {
            m.configure(c.cir as f64 / 1e6, c.cburst, c.pir as f64 / 1e6, c.pburst);
            m.config = Some([c.cir, c.cburst, c.pir, c.pburst]);
        }
        None => m.unconfigure(),
    }
}

fn from_units(u: [u64; 4]) -> MeterConfig {
    MeterConfig {
        cir: u[0],
        cburst: u[1],
        pir: u[2],
        pburst: u[3],
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

/// The scalar fields of a register layout with their word offsets.
fn scalars(l: &Layout, base: u32, out: &mut Vec<(u32, Ty)>) -> Result<(), String> {
    match l {
        Layout::Scalar(t) => {
            out.push((base, *t));
            Ok(())
        }
        Layout::Struct(fs) => {
            for (_, off, f) in fs {
                scalars(f, base + off, out)?;
            }
            Ok(())
        }
        _ => Err("registers of headers, unions, stacks or varbits".into()),
    }
}

/// A value of `width` bits stored in words (least significant first) as big-endian bytes.
fn words_to_bytes(words: &[u64], width: u32) -> Vec<u8> {
    let n = (width as usize).div_ceil(8);
    let mut out = vec![0u8; n];
    for (i, b) in out.iter_mut().rev().enumerate() {
        let w = words.get(i / 8).copied().unwrap_or(0);
        *b = (w >> (8 * (i % 8))) as u8;
    }
    if !width.is_multiple_of(8) && n > 0 {
        out[0] &= (1u8 << (width % 8)) - 1;
    }
    out
}

/// Big-endian bytes into words (least significant first).
fn bytes_to_words(v: &[u8], words: &mut [u64]) {
    for (i, b) in v.iter().rev().enumerate() {
        if let Some(w) = words.get_mut(i / 8) {
            *w |= u64::from(*b) << (8 * (i % 8));
        }
    }
}

#[cfg(test)]
mod tests {
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
