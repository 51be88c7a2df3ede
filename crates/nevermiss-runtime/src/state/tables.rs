//! A table as the switch holds it: the match-action table of `nevermiss-tables`, what the
//! engine needs to apply it fast, and what the control plane keeps beside its entries.

use super::delay::Watch;
use crate::types::MeterConfig;
use nevermiss_tables::Table;
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// A table at run time.
pub(crate) struct RtTable {
    t: Table,
    /// Per action: whether it has `@__ref` parameters (written back into the entry).
    writes_back: Vec<bool>,
    /// v1model/PSA tables with an idle timeout: a hit restarts the entry's timer (the idle time
    /// is the time since the last hit). PNA restarts timers only when the program says so.
    restart_on_hit: bool,
    /// The action profile or selector the table's entries point into.
    indirect: Option<u32>,
    /// The update-delay probe (`super::delay`).
    watch: Watch,
    /// Per action: where each parameter goes, when every parameter is at most 64 bits, for
    /// the lean apply path (`Exec::table_lookup_core`); `None` for a table that needs the
    /// general one (`p4_ir::Table::lean`: an action profile, v1model's direct counter, a timer
    /// restarted on hits, wide parameters).
    plan: Option<Vec<Vec<ParamPlan>>>,
    /// Control-plane state of the table's entries (metadata, idle timeouts).
    meta: TableMeta,
    /// The table has a direct counter or meter, whose cell a new entry's slot resets
    /// (`Switch::reset_direct`).
    direct_cells: bool,
}

/// Where one action parameter goes: (frame slot, byte offset in the packed parameters, bytes,
/// mask of its width).
pub(crate) type ParamPlan = (u32, u32, u32, u64);

impl RtTable {
    /// A table with its per-action facts: which actions write back (`writes_back`), the lean
    /// plan if it has one, whether hits restart timers, its action profile, whether it has
    /// direct cells.
    pub(crate) fn new(
        t: Table,
        writes_back: Vec<bool>,
        restart_on_hit: bool,
        indirect: Option<u32>,
        plan: Option<Vec<Vec<ParamPlan>>>,
        direct_cells: bool,
    ) -> RtTable {
        RtTable {
            t,
            writes_back,
            restart_on_hit,
            indirect,
            watch: Watch::default(),
            plan,
            meta: TableMeta::default(),
            direct_cells,
        }
    }

    /// The match-action table.
    #[inline(always)]
    pub(crate) fn table(&self) -> &Table {
        &self.t
    }

    /// Whether action `a` writes its `@__ref` parameters back into the entry.
    #[inline]
    pub(crate) fn writes_back(&self, a: u32) -> bool {
        self.writes_back.get(a as usize).copied().unwrap_or(false)
    }

    /// Whether a hit restarts the entry's idle timer.
    #[inline(always)]
    pub(crate) fn restarts_on_hit(&self) -> bool {
        self.restart_on_hit
    }

    /// The action profile or selector (extern index) the entries point into.
    #[inline(always)]
    pub(crate) fn indirect(&self) -> Option<u32> {
        self.indirect
    }

    /// The update-delay probe.
    #[inline(always)]
    pub(crate) fn watch(&self) -> &Watch {
        &self.watch
    }

    /// Per action, where its parameters go (lean tables only).
    #[inline(always)]
    pub(crate) fn plan(&self) -> Option<&[Vec<ParamPlan>]> {
        self.plan.as_deref()
    }

    /// The control plane's state of the entries.
    #[inline]
    pub(crate) fn meta(&self) -> &TableMeta {
        &self.meta
    }

    /// Whether the table has a direct counter or meter.
    #[inline(always)]
    pub(crate) fn direct_cells(&self) -> bool {
        self.direct_cells
    }
}

/// Control-plane state of one entry (what the table itself does not store).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct EntryMeta {
    /// The generation of the slot's entry it belongs to.
    pub(crate) gen: u32,
    pub(crate) controller_metadata: u64,
    pub(crate) metadata: Vec<u8>,
    pub(crate) idle_timeout_ns: u64,
    pub(crate) meter: Option<MeterConfig>,
}

/// Per table: which slots hold an entry the controller wrote, its metadata (checked against
/// the slot's generation), and the expire profiles allocated to control-plane idle timeouts.
#[derive(Default)]
pub(crate) struct TableMeta {
    entries: Mutex<MetaSlots>,
    ttl_profiles: Mutex<HashMap<u64, u8>>,
}

impl TableMeta {
    /// The controller's entries, by slot.
    pub(crate) fn entries(&self) -> MutexGuard<'_, MetaSlots> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Control-plane idle timeout (ns) → the expire profile allocated to it.
    pub(crate) fn ttl_profiles(&self) -> MutexGuard<'_, HashMap<u64, u8>> {
        self.ttl_profiles
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// Entry metadata by slot, compact for the common case: a controller entry with default
/// metadata costs one `u32` (its generation + 1; 0 = no controller entry, e.g. one the data
/// plane added); only non-default metadata goes to the map.
#[derive(Default)]
pub(crate) struct MetaSlots {
    owners: Vec<u32>,
    extras: HashMap<u32, EntryMeta>,
}

impl MetaSlots {
    /// Records the controller's entry in `slot` with `meta` (`meta.gen` its generation).
    pub(crate) fn insert(&mut self, slot: u32, meta: EntryMeta) {
        let i = slot as usize;
        if self.owners.len() <= i {
            self.owners.resize((i + 1).next_power_of_two().max(1024), 0);
        }
        self.owners[i] = meta.gen.wrapping_add(1).max(1);
        let plain = meta.controller_metadata == 0
            && meta.metadata.is_empty()
            && meta.idle_timeout_ns == 0
            && meta.meter.is_none();
        if plain {
            if !self.extras.is_empty() {
                self.extras.remove(&slot);
            }
        } else {
            self.extras.insert(slot, meta);
        }
    }

    /// Forgets the entry in `slot`.
    pub(crate) fn remove(&mut self, slot: u32) {
        if let Some(o) = self.owners.get_mut(slot as usize) {
            *o = 0;
        }
        if !self.extras.is_empty() {
            self.extras.remove(&slot);
        }
    }

    /// The metadata of the controller's entry in `slot` at generation `gen`; `None` if the
    /// controller did not write the entry there now.
    pub(crate) fn get(&self, slot: u32, gen: u32) -> Option<EntryMeta> {
        let owner = self.owners.get(slot as usize).copied().unwrap_or(0);
        if owner != gen.wrapping_add(1).max(1) {
            return None;
        }
        Some(match self.extras.get(&slot) {
            Some(m) if m.gen == gen => m.clone(),
            _ => EntryMeta {
                gen,
                ..EntryMeta::default()
            },
        })
    }
}
