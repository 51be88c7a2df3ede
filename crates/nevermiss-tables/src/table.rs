//! The shared table: `&self` methods for N data-plane workers and one control-plane thread.
//!
//! Concurrency scheme (issue 3; see docs/tables.md for the lock-free engine of issue 4):
//! - the match index (keys, masks, hash buckets, priority chains) sits behind one `RwLock`:
//!   lookups and batches take it shared, inserts and deletes (data plane or control plane) take it
//!   exclusive, so two cores adding the same key are serialized: one `Added`, one `AlreadyPresent`;
//! - each entry's action data, version, generation and timer live in a sequence-locked cell
//!   outside that lock ([`crate::cell`]): `modify`, `update_params`, `restart_timer` and
//!   `set_expire_profile` never take the index lock exclusively, and readers see the old or the
//!   new data, never a mix;
//! - idle timers are a timer wheel behind its own mutex, touched by the data plane only when a
//!   deadline moves earlier or a notified entry is re-armed.
//!
//! Lock order: index → cell → wheel; no thread waits for a lock while holding a cell lock.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::*};
use std::sync::{Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::action::ActionData;
use crate::cell::{alloc_slice, CellGuard, Cells, NEVER};
use crate::error::TableError;
use crate::hash::random_seed;
use crate::index::Index;
use crate::spec::{
    compile, decompile, Compiled, EntryView, FieldMatch, IdleTimeout, Layout, TableSpec,
};
use crate::stats::{Counter, Stats, TableStats};
use crate::wheel::{Wheel, DEFAULT_TICK_NS, NIL};

/// Identifies one live entry. Stays valid until the entry is deleted (then every operation given
/// it reports it as stale), and `slot()` is stable for the entry's lifetime, so direct counters
/// and meters can be plain arrays indexed by slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EntryHandle {
    slot: u32,
    gen: u32,
}

impl EntryHandle {
    /// Slot index in `0..capacity()`.
    pub fn slot(&self) -> usize {
        self.slot as usize
    }
    /// Generation of the slot when the handle was issued.
    pub fn generation(&self) -> u32 {
        self.gen
    }
}

/// Control-plane name for an entry handle.
pub type EntryId = EntryHandle;

/// Result of a lookup. On a miss `data` is the table's default action (P4_16 §14.2.2).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Lookup {
    /// The matched entry, `None` on a miss.
    pub hit: Option<EntryHandle>,
    /// Copy of the matched entry's (or the default) action data.
    pub data: ActionData,
    /// Version of the copied data (entry version, or default-action version on a miss).
    pub version: u64,
}

impl Lookup {
    /// Whether an entry matched.
    pub fn is_hit(&self) -> bool {
        self.hit.is_some()
    }
}

/// Outcome of a data-plane insert (PNA `add_entry`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AddStatus {
    /// The entry was added.
    Added(EntryHandle),
    /// An entry with this key exists (another core may have added it first).
    AlreadyPresent,
    /// No free slot.
    Full,
    /// Bad key length, parameters, profile, or a table without `add_on_miss`.
    Rejected(TableError),
}

impl AddStatus {
    /// Whether an entry was added (PNA `ADD_ENTRY_SUCCESS`).
    pub fn is_added(&self) -> bool {
        matches!(self, AddStatus::Added(_))
    }
}

/// An entry whose idle timer ran out, reported by [`Table::expire`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expired {
    /// The entry as it was when it expired.
    pub entry: EntryView,
    /// `true` for NOTIFY_CONTROL (entry kept, notify the control plane), `false` for
    /// AUTO_DELETE (entry removed).
    pub notify: bool,
}

/// Default expire-time profiles in seconds (those of p4c-dpdk's learner tables).
pub const DEFAULT_PROFILES_S: [u64; 8] = [10, 30, 60, 120, 300, 43200, 120, 120];
/// Number of expire-time profile ids (`ExpireTimeProfileId_t` is `bit<8>`).
pub const MAX_PROFILES: usize = 256;

/// Keys per batch stage in [`Table::lookup_batch`].
const BATCH: usize = 16;

/// A match-action table shared by worker threads and the control plane (`Send + Sync`).
pub struct Table {
    spec: TableSpec,
    layout: Layout,
    exact: bool,
    has_priority: bool,
    auto_delete: bool,
    size: usize,
    index: RwLock<Index>,
    cells: Cells,
    wheel: Option<Mutex<Wheel>>,
    profiles: Box<[AtomicU64]>,
    n_profiles: AtomicU32,
    stats: Stats,
}

impl Table {
    /// A table for `spec` with 1 ms expiry ticks. Allocates all memory now.
    pub fn new(spec: TableSpec) -> Result<Table, TableError> {
        Table::with_tick(spec, DEFAULT_TICK_NS)
    }

    /// A table whose idle timers have a resolution of `tick_ns` nanoseconds.
    pub fn with_tick(spec: TableSpec, tick_ns: u64) -> Result<Table, TableError> {
        spec.validate()?;
        let layout = Layout::new(&spec);
        let exact = spec.is_exact();
        let size = spec.size;
        let index = Index::new(size, &layout, exact, random_seed())?;
        let cells = Cells::new(size + 1, spec.max_params_bytes)?;
        // The default action starts as ACTION_NONE, version 0.
        cells.lock(size).write(&ActionData::default());
        let wheel = match spec.idle_timeout {
            IdleTimeout::NoTimeout => None,
            _ => Some(Mutex::new(Wheel::new(size, tick_ns)?)),
        };
        let profiles = alloc_slice(MAX_PROFILES, AtomicU64::default)?;
        for (p, s) in profiles.iter().zip(DEFAULT_PROFILES_S) {
            p.store(s * 1_000_000_000, Relaxed);
        }
        Ok(Table {
            has_priority: spec.has_priority(),
            auto_delete: spec.idle_timeout == IdleTimeout::AutoDelete,
            exact,
            size,
            layout,
            index: RwLock::new(index),
            cells,
            wheel,
            profiles,
            n_profiles: AtomicU32::new(DEFAULT_PROFILES_S.len() as u32),
            stats: Stats::new(),
            spec,
        })
    }

    /// The description the table was built from.
    pub fn spec(&self) -> &TableSpec {
        &self.spec
    }

    /// Bytes of a packed key.
    pub fn key_len(&self) -> usize {
        self.layout.key_len
    }

    /// Maximum number of entries.
    pub fn capacity(&self) -> usize {
        self.size
    }

    /// Number of entries (including AUTO_DELETE entries past their deadline not yet reclaimed).
    pub fn len(&self) -> usize {
        self.read_index().len()
    }

    /// Whether the table has no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Counters since creation.
    pub fn stats(&self) -> TableStats {
        self.stats.snapshot()
    }

    /// Number of tuples (distinct masks) a lookup may probe; 1 for exact tables.
    pub fn tuple_count(&self) -> usize {
        self.read_index().tuple_count()
    }

    fn read_index(&self) -> RwLockReadGuard<'_, Index> {
        self.index.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write_index(&self) -> RwLockWriteGuard<'_, Index> {
        self.index.write().unwrap_or_else(PoisonError::into_inner)
    }

    fn lock_wheel<'a>(&self, w: &'a Mutex<Wheel>) -> MutexGuard<'a, Wheel> {
        w.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn default_slot(&self) -> usize {
        self.size
    }

    // ------------------------------------------------------------------ data plane

    /// Looks `key` up (packed as described in [`crate::spec`]); at `now_ns` AUTO_DELETE entries
    /// past their deadline do not match. A key of the wrong length misses. Never allocates when
    /// the parameters fit [`crate::Params::INLINE`].
    pub fn lookup(&self, key: &[u8], now_ns: u64) -> Lookup {
        let mut out = Lookup::default();
        self.lookup_into(key, now_ns, &mut out);
        out
    }

    /// [`Table::lookup`] into a caller-owned result (reuses its parameter buffer); returns hit.
    pub fn lookup_into(&self, key: &[u8], now_ns: u64, out: &mut Lookup) -> bool {
        let slot = {
            let idx = self.read_index();
            let slot = if !self.key_ok(key) {
                None
            } else if idx.is_exact() {
                idx.probe_exact_hinted(idx.exact_hash(key), key, |s| {
                    self.cells.prefetch(s as usize)
                })
            } else {
                idx.lookup(key)
            };
            self.finish(slot, now_ns, out)
        };
        self.stats
            .add(if slot { Counter::Hits } else { Counter::Misses }, 1);
        slot
    }

    fn key_ok(&self, key: &[u8]) -> bool {
        key.len() == self.layout.key_len && !self.spec.keys.is_empty()
    }

    #[inline]
    fn finish(&self, slot: Option<u32>, now: u64, out: &mut Lookup) -> bool {
        if let Some(s) = slot {
            let (gen, version) = self.cells.read(s as usize, &mut out.data);
            if !self.auto_delete || self.cells.cell(s as usize).deadline.load(Relaxed) > now {
                out.hit = Some(EntryHandle { slot: s, gen });
                out.version = version;
                return true;
            }
        }
        let (_, version) = self.cells.read(self.default_slot(), &mut out.data);
        out.hit = None;
        out.version = version;
        false
    }

    /// Looks up `out.len()` keys packed back to back in `keys` (each [`Table::key_len`] bytes),
    /// writing result `i` to `out[i]`. Takes the index lock once per batch; for exact tables it
    /// hashes a group of keys and prefetches their buckets before probing any of them. Returns
    /// the number of hits.
    pub fn lookup_batch(
        &self,
        keys: &[u8],
        now_ns: u64,
        out: &mut [Lookup],
    ) -> Result<usize, TableError> {
        let kl = self.layout.key_len;
        if keys.len() != out.len() * kl {
            return Err(TableError::BadKey {
                field: None,
                reason: "batch length is not a multiple of the key length",
            });
        }
        let mut hits = 0;
        {
            let idx = self.read_index();
            if self.spec.keys.is_empty() || kl == 0 {
                for o in out.iter_mut() {
                    self.finish(None, now_ns, o);
                }
            } else if self.exact {
                let mut hashes = [0u64; BATCH];
                for (kc, oc) in keys.chunks(kl * BATCH).zip(out.chunks_mut(BATCH)) {
                    for (h, k) in hashes.iter_mut().zip(kc.chunks_exact(kl)) {
                        *h = idx.exact_hash(k);
                        idx.prefetch_bucket(*h);
                    }
                    // Second stage: the likely slot's key and cell, for the whole group.
                    for h in hashes.iter().take(oc.len()) {
                        if let Some(s) = idx.candidate(*h) {
                            idx.prefetch_key(s);
                            self.cells.prefetch(s as usize);
                        }
                    }
                    for ((h, k), o) in hashes.iter().zip(kc.chunks_exact(kl)).zip(oc.iter_mut()) {
                        hits += self.finish(idx.probe_exact(*h, k), now_ns, o) as usize;
                    }
                }
            } else {
                for (k, o) in keys.chunks_exact(kl).zip(out.iter_mut()) {
                    hits += self.finish(idx.lookup(k), now_ns, o) as usize;
                }
            }
        }
        self.stats.add(Counter::Hits, hits as u64);
        self.stats.add(Counter::Misses, (out.len() - hits) as u64);
        Ok(hits)
    }

    /// PNA `add_entry` from a miss: adds an entry for exactly `key` with `data` and, for tables
    /// with an idle timeout, expire profile `expire_profile` armed at `now_ns`. Of several
    /// threads adding the same key exactly one gets `Added`, the others `AlreadyPresent`. An
    /// AUTO_DELETE entry past its deadline counts as absent and is replaced. When the table is
    /// full, expired AUTO_DELETE entries are reclaimed before `Full` is reported.
    pub fn add_on_miss(
        &self,
        key: &[u8],
        data: &ActionData,
        expire_profile: u8,
        now_ns: u64,
    ) -> AddStatus {
        if !self.spec.add_on_miss {
            return AddStatus::Rejected(TableError::NotAddOnMiss);
        }
        if !self.key_ok(key) {
            return AddStatus::Rejected(TableError::BadKey {
                field: None,
                reason: "key length differs from the table's key length",
            });
        }
        if let Err(e) = self.check_params(data.params.len()) {
            return AddStatus::Rejected(e);
        }
        let deadline = match self.wheel {
            None => NEVER,
            Some(_) => match self.profile_ns(expire_profile) {
                Some(d) => now_ns.saturating_add(d),
                None => return AddStatus::Rejected(TableError::BadProfile(expire_profile as u32)),
            },
        };
        let mut idx = self.write_index();
        let h = idx.exact_hash(key);
        if let Some(s) = idx.probe_exact(h, key) {
            // Replace an AUTO_DELETE entry past its deadline; the deadline is re-checked under
            // the cell lock so a concurrent restart_timer either wins or sees a stale handle.
            if !(self.auto_delete && self.free_slot(&mut idx, s, |_| self.expired(s, now_ns))) {
                return AddStatus::AlreadyPresent;
            }
            self.stats.add(Counter::Expirations, 1);
        }
        let Some(s) = self.alloc(&mut idx, now_ns) else {
            self.stats.add(Counter::InsertsFull, 1);
            return AddStatus::Full;
        };
        idx.insert_exact(s, key);
        let handle = self.init_cell(s, data, expire_profile, deadline);
        self.stats.add(Counter::Inserts, 1);
        AddStatus::Added(handle)
    }

    /// Replaces the parameters of the entry `handle` (PNA data-plane update of a hit entry),
    /// keeping its action, and bumps its version. Atomic per entry: readers see the old or the
    /// new parameters, never a mix. Needs no index lock. Returns false for a stale handle or
    /// parameters longer than the table allows.
    pub fn update_params(&self, handle: EntryHandle, params: &[u8]) -> bool {
        if handle.slot as usize >= self.size || params.len() > self.cells.max_params() {
            return false;
        }
        let g = self.cells.lock(handle.slot as usize);
        if g.gen() != handle.gen {
            return false;
        }
        g.write_params(params);
        g.set_version(g.version().wrapping_add(1));
        drop(g);
        self.stats.add(Counter::Updates, 1);
        true
    }

    /// PNA `restart_expire_timer()`: the entry's deadline becomes `now_ns` + its profile's
    /// duration. False for a stale handle or a table without an idle timeout.
    pub fn restart_timer(&self, handle: EntryHandle, now_ns: u64) -> bool {
        self.rearm(handle, None, now_ns)
    }

    /// PNA `set_entry_expire_time(id)`: sets the entry's profile and restarts its timer.
    /// False for a stale handle, an unknown profile, or a table without an idle timeout.
    pub fn set_expire_profile(&self, handle: EntryHandle, profile: u8, now_ns: u64) -> bool {
        self.rearm(handle, Some(profile), now_ns)
    }

    fn rearm(&self, h: EntryHandle, profile: Option<u8>, now: u64) -> bool {
        let Some(wheel) = &self.wheel else {
            return false;
        };
        if h.slot as usize >= self.size {
            return false;
        }
        let cell = self.cells.cell(h.slot as usize);
        let deadline = {
            let g = self.cells.lock(h.slot as usize);
            if g.gen() != h.gen {
                return false;
            }
            let p = profile.map_or_else(|| g.profile(), u32::from);
            let Some(d) = self.profile_ns(p as u8).filter(|_| p < MAX_PROFILES as u32) else {
                return false;
            };
            g.set_profile(p);
            let deadline = now.saturating_add(d);
            cell.deadline.store(deadline, SeqCst);
            deadline
        };
        // Dekker pair with `expire`: it stores `sched` then loads `deadline`; we store
        // `deadline` then load `sched`, so one of us sees the other and re-links.
        if deadline < cell.sched.load(SeqCst) {
            let mut w = self.lock_wheel(wheel);
            if cell.gen() == h.gen {
                w.link(h.slot, cell.deadline.load(SeqCst), cell.sched);
            }
        }
        true
    }

    // ------------------------------------------------------------------ control plane

    fn check_params(&self, len: usize) -> Result<(), TableError> {
        if len > self.cells.max_params() {
            Err(TableError::ParamsTooLong {
                len,
                max: self.cells.max_params(),
            })
        } else {
            Ok(())
        }
    }

    fn compile(
        &self,
        matches: &[FieldMatch],
        priority: u32,
    ) -> Result<(Compiled, u32), TableError> {
        let c = compile(&self.spec, &self.layout, matches)?;
        let prio = if self.has_priority {
            if priority == 0 {
                return Err(TableError::BadPriority);
            }
            priority
        } else {
            if priority != 0 {
                return Err(TableError::BadPriority);
            }
            c.prefix_len
        };
        Ok((c, prio))
    }

    fn alloc(&self, idx: &mut Index, now: u64) -> Option<u32> {
        if let Some(s) = idx.alloc() {
            return Some(s);
        }
        if self.auto_delete {
            let expired: Vec<u32> = idx.live_slots().filter(|&s| self.expired(s, now)).collect();
            for s in expired {
                if self.free_slot(idx, s, |_| self.expired(s, now)) {
                    self.stats.add(Counter::Expirations, 1);
                }
            }
            return idx.alloc();
        }
        None
    }

    /// Whether slot `s`'s timer has run out at `now`.
    fn expired(&self, s: u32, now: u64) -> bool {
        self.cells.cell(s as usize).deadline.load(SeqCst) <= now
    }

    fn init_cell(&self, s: u32, data: &ActionData, profile: u8, deadline: u64) -> EntryHandle {
        let cell = self.cells.cell(s as usize);
        let gen = {
            let g = self.cells.lock(s as usize);
            let gen = g.gen().wrapping_add(1) | 1;
            g.set_gen(gen);
            g.write(data);
            g.set_version(0);
            g.set_profile(profile as u32);
            cell.deadline.store(deadline, SeqCst);
            gen
        };
        if let Some(w) = &self.wheel {
            if deadline != NEVER {
                self.lock_wheel(w).link(s, deadline, cell.sched);
            }
        }
        EntryHandle { slot: s, gen }
    }

    /// Frees live slot `s` if `cond` holds under its cell lock; returns whether it did.
    fn free_slot(
        &self,
        idx: &mut Index,
        s: u32,
        cond: impl FnOnce(&CellGuard<'_>) -> bool,
    ) -> bool {
        let cell = self.cells.cell(s as usize);
        {
            let g = self.cells.lock(s as usize);
            if g.gen() & 1 == 0 || !cond(&g) {
                return false;
            }
            g.set_gen(g.gen().wrapping_add(1));
            cell.deadline.store(NEVER, SeqCst);
        }
        if let Some(w) = &self.wheel {
            self.lock_wheel(w).unlink(s);
            cell.sched.store(NEVER, SeqCst);
        }
        idx.remove(s);
        true
    }

    /// Control-plane insert (P4Runtime INSERT). `priority` must be non-zero for tables with
    /// ternary, range or optional fields (larger wins) and zero otherwise. Entries of tables with
    /// an idle timeout get no timer; see [`Table::insert_with_timeout`].
    pub fn insert(
        &self,
        matches: &[FieldMatch],
        priority: u32,
        data: ActionData,
    ) -> Result<EntryId, TableError> {
        self.insert_inner(matches, priority, &data, None)
    }

    /// Control-plane insert with an idle timer of profile `profile` started at `now_ns`.
    pub fn insert_with_timeout(
        &self,
        matches: &[FieldMatch],
        priority: u32,
        data: ActionData,
        profile: u8,
        now_ns: u64,
    ) -> Result<EntryId, TableError> {
        if self.wheel.is_none() {
            return Err(TableError::NoIdleTimeout);
        }
        self.insert_inner(matches, priority, &data, Some((profile, now_ns)))
    }

    fn insert_inner(
        &self,
        matches: &[FieldMatch],
        priority: u32,
        data: &ActionData,
        timer: Option<(u8, u64)>,
    ) -> Result<EntryId, TableError> {
        let (c, prio) = self.compile(matches, priority)?;
        self.check_params(data.params.len())?;
        let (profile, deadline, now) = match timer {
            None => (0, NEVER, 0),
            Some((p, now)) => {
                let d = self.profile_ns(p).ok_or(TableError::BadProfile(p as u32))?;
                (p, now.saturating_add(d), now)
            }
        };
        let mut idx = self.write_index();
        if let Some(s) = idx.find_entry(&c, prio) {
            let replaced = self.auto_delete
                && timer.is_some()
                && self.free_slot(&mut idx, s, |_| self.expired(s, now));
            if !replaced {
                return Err(TableError::Exists);
            }
            self.stats.add(Counter::Expirations, 1);
        }
        let s = self.alloc(&mut idx, now).ok_or(TableError::Full)?;
        idx.insert(s, &c, prio);
        Ok(self.init_cell(s, data, profile, deadline))
    }

    /// Control-plane modify (P4Runtime MODIFY): replaces the action data of the entry with this
    /// match spec and priority, keeping its id and timer, and bumps its version. Lookups running
    /// concurrently see the old or the new data, never a miss or a mix.
    pub fn modify(
        &self,
        matches: &[FieldMatch],
        priority: u32,
        data: ActionData,
    ) -> Result<EntryId, TableError> {
        let (c, prio) = self.compile(matches, priority)?;
        self.check_params(data.params.len())?;
        let idx = self.read_index();
        let s = idx.find_entry(&c, prio).ok_or(TableError::NotFound)?;
        let g = self.cells.lock(s as usize);
        g.write(&data);
        g.set_version(g.version().wrapping_add(1));
        Ok(EntryHandle {
            slot: s,
            gen: g.gen(),
        })
    }

    /// Control-plane delete (P4Runtime DELETE) by match spec and priority.
    pub fn delete(&self, matches: &[FieldMatch], priority: u32) -> Result<(), TableError> {
        let (c, prio) = self.compile(matches, priority)?;
        let mut idx = self.write_index();
        let s = idx.find_entry(&c, prio).ok_or(TableError::NotFound)?;
        self.free_slot(&mut idx, s, |_| true);
        Ok(())
    }

    /// Deletes the entry `id`; `NotFound` if it is gone.
    pub fn delete_id(&self, id: EntryId) -> Result<(), TableError> {
        if id.slot as usize >= self.size {
            return Err(TableError::NotFound);
        }
        let mut idx = self.write_index();
        if idx.is_used(id.slot) && self.free_slot(&mut idx, id.slot, |g| g.gen() == id.gen) {
            Ok(())
        } else {
            Err(TableError::NotFound)
        }
    }

    /// Deletes every entry.
    pub fn clear(&self) {
        let mut idx = self.write_index();
        let live: Vec<u32> = idx.live_slots().collect();
        for s in live {
            self.free_slot(&mut idx, s, |_| true);
        }
    }

    /// The entry with this match spec and priority (P4Runtime READ of one entry).
    pub fn read(&self, matches: &[FieldMatch], priority: u32) -> Result<EntryView, TableError> {
        let (c, prio) = self.compile(matches, priority)?;
        let idx = self.read_index();
        let s = idx.find_entry(&c, prio).ok_or(TableError::NotFound)?;
        Ok(self.view(&idx, s))
    }

    /// The entry `id`, if it still exists.
    pub fn get(&self, id: EntryId) -> Option<EntryView> {
        let idx = self.read_index();
        if !idx.is_used(id.slot) {
            return None;
        }
        let v = self.view(&idx, id.slot);
        (v.id == id).then_some(v)
    }

    /// Snapshot of all entries (entries added by the data plane included), in slot order. Each
    /// entry is internally consistent; no entry is added or removed while the snapshot is taken.
    pub fn iter(&self) -> Vec<EntryView> {
        let idx = self.read_index();
        idx.live_slots().map(|s| self.view(&idx, s)).collect()
    }

    fn view(&self, idx: &Index, s: u32) -> EntryView {
        let key = idx.key(s).to_vec();
        let matches = decompile(&self.spec, &self.layout, &key, idx.mask(s), idx.ranges(s));
        let mut data = ActionData::default();
        let (gen, version) = self.cells.read(s as usize, &mut data);
        let cell = self.cells.cell(s as usize);
        let timed = self.wheel.is_some();
        let deadline = cell.deadline.load(SeqCst);
        EntryView {
            id: EntryHandle { slot: s, gen },
            key,
            matches,
            priority: if self.has_priority { idx.prio(s) } else { 0 },
            data,
            version,
            expire_profile: timed.then(|| cell.profile() as u8),
            deadline_ns: (timed && deadline != NEVER).then_some(deadline),
        }
    }

    /// Sets the default action (run on a miss), bumping the default's version.
    pub fn set_default(&self, data: ActionData) -> Result<(), TableError> {
        self.check_params(data.params.len())?;
        let g = self.cells.lock(self.default_slot());
        g.write(&data);
        g.set_version(g.version().wrapping_add(1));
        Ok(())
    }

    /// The default action ([`crate::ACTION_NONE`] until set).
    pub fn default_action(&self) -> ActionData {
        let mut d = ActionData::default();
        self.cells.read(self.default_slot(), &mut d);
        d
    }

    // ------------------------------------------------------------------ expiry

    /// Replaces the expire-time profiles: `durations_ns[i]` is the idle time of profile `i`
    /// (1 to 256 profiles). Running timers keep their deadline until re-armed.
    pub fn set_profiles(&self, durations_ns: &[u64]) -> Result<(), TableError> {
        if durations_ns.is_empty() || durations_ns.len() > MAX_PROFILES {
            return Err(TableError::BadProfile(durations_ns.len() as u32));
        }
        for (p, &d) in self.profiles.iter().zip(durations_ns) {
            p.store(d, Relaxed);
        }
        self.n_profiles.store(durations_ns.len() as u32, Release);
        Ok(())
    }

    /// Current profile durations in ns.
    pub fn profiles(&self) -> Vec<u64> {
        let n = self.n_profiles.load(Acquire) as usize;
        self.profiles[..n].iter().map(|p| p.load(Relaxed)).collect()
    }

    fn profile_ns(&self, id: u8) -> Option<u64> {
        ((id as u32) < self.n_profiles.load(Acquire))
            .then(|| self.profiles[id as usize].load(Relaxed))
    }

    /// Advances the idle timers to `now_ns` (call it every tick, e.g. each millisecond, from
    /// one control thread). AUTO_DELETE entries whose deadline is ≤ `now_ns` are removed and
    /// returned with `notify == false`; NOTIFY_CONTROL entries are returned with
    /// `notify == true` once per idle period and kept (re-armed by `restart_timer` or
    /// `set_expire_profile`). Cost: the due wheel slots, not the whole table. Empty for tables
    /// without an idle timeout.
    pub fn expire(&self, now_ns: u64) -> Vec<Expired> {
        let Some(wheel) = &self.wheel else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let mut victims = Vec::new();
        {
            let idx = self.read_index();
            let mut w = self.lock_wheel(wheel);
            let now_tick = now_ns / w.tick_ns;
            if now_tick > w.last_tick {
                let n = (now_tick - w.last_tick).min(Wheel::slots() as u64);
                let first = w.last_tick + 1;
                w.last_tick = now_tick;
                for k in 0..n {
                    let mut cur = w.detach(((first + k) as usize) & (Wheel::slots() - 1));
                    while cur != NIL {
                        let next = w.take_next(cur);
                        let cell = self.cells.cell(cur as usize);
                        cell.sched.store(NEVER, SeqCst);
                        let d = cell.deadline.load(SeqCst);
                        if d > now_ns {
                            w.link(cur, d, cell.sched);
                        } else if self.auto_delete {
                            victims.push((cur, cell.gen()));
                        } else if idx.is_used(cur) {
                            out.push(Expired {
                                entry: self.view(&idx, cur),
                                notify: true,
                            });
                        }
                        cur = next;
                    }
                }
            }
        }
        self.stats.add(Counter::Notifications, out.len() as u64);
        if !victims.is_empty() {
            let mut idx = self.write_index();
            for (s, gen) in victims {
                let cell = self.cells.cell(s as usize);
                if !idx.is_used(s) || cell.gen() != gen {
                    continue;
                }
                let view = self.view(&idx, s);
                let freed = self.free_slot(&mut idx, s, |g| {
                    g.gen() == gen && cell.deadline.load(SeqCst) <= now_ns
                });
                if freed {
                    self.stats.add(Counter::Expirations, 1);
                    out.push(Expired {
                        entry: view,
                        notify: false,
                    });
                } else if cell.gen() == gen {
                    // Re-armed concurrently: put it back in the wheel.
                    let mut w = self.lock_wheel(wheel);
                    w.link(s, cell.deadline.load(SeqCst), cell.sched);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<Table>();
    }
}
