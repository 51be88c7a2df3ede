//! A small handle on the exact engines' primitives for the loom models in `tests/loom.rs`
//! (built only with `--cfg loom`): the bucket publish/move/validate protocol of
//! [`crate::exact`], the index-word protocol of [`crate::direct`], the sequence-locked cells of
//! [`crate::cell`] and the free list, without the rest of the table.

use crate::action::ActionData;
use crate::cell::Cells;
use crate::direct::Direct;
use crate::exact::{Exact, Ins, Line};
use crate::hash::{Key, Words};
use crate::sync::Ordering::{Relaxed, SeqCst};

/// An exact index of 8-byte keys whose entries carry a 16-byte value (the same `u64` twice, so a
/// torn read shows as two different halves).
pub struct Model {
    x: Exact,
    cells: Cells,
}

/// Kills the live entry in slot `s` (generation made even under the cell lock), as the
/// table's replacement of an expired entry does; false if it is not live.
fn kill(cells: &Cells, s: u32) -> bool {
    let g = cells.lock(s as usize);
    if g.gen() & 1 == 0 {
        return false;
    }
    g.set_gen(g.gen().wrapping_add(1));
    true
}

/// Writes a fresh entry of key `kb` and value `v` into slot `s`; returns its generation.
fn init(cells: &Cells, s: u32, kb: &[u8], v: u64) -> u32 {
    let g = cells.lock(s as usize);
    let gen = g.gen().wrapping_add(1) | 1;
    g.set_gen(gen);
    g.write_key(kb);
    g.write(&data(v));
    gen
}

/// Writes value `v` into slot `s` if its generation is `gen` (a handle's update).
fn update(cells: &Cells, s: u32, gen: u32, v: u64) -> bool {
    let g = cells.lock(s as usize);
    if g.gen() != gen {
        return false;
    }
    g.write(&data(v));
    true
}

fn data(v: u64) -> ActionData {
    let mut p = [0u8; 16];
    p[..8].copy_from_slice(&v.to_le_bytes());
    p[8..].copy_from_slice(&v.to_le_bytes());
    ActionData::new(1, p)
}

impl Model {
    /// Room for `size` entries in `buckets` buckets.
    pub fn new(size: usize, buckets: usize) -> Model {
        Model {
            x: Exact::with_buckets(size, buckets, 0x5eed).expect("index"),
            cells: Cells::new(size, 8, 16, false).expect("cells"),
        }
    }

    /// Adds `key` with value `v`: `Some(true)` added, `Some(false)` already present, `None` full.
    pub fn insert(&self, key: u64, v: u64) -> Option<bool> {
        let kb = key.to_le_bytes();
        let k = Key::new(&kb);
        let r = self.x.insert(
            &self.cells,
            self.x.hash(&k),
            &k,
            |_| false,
            |s| init(&self.cells, s, &kb, v),
        );
        match r {
            Ins::Added(..) | Ins::Replaced(..) => Some(true),
            Ins::Present(_) => Some(false),
            Ins::Full => None,
        }
    }

    /// The value of `key`. Panics on a torn value (the two halves differ).
    pub fn get(&self, key: u64) -> Option<u64> {
        let kb = key.to_le_bytes();
        let k = Key::new(&kb);
        let mut out = ActionData::default();
        let (_, gen, _) = self.x.find(&self.cells, self.x.hash(&k), &k, &mut out)?;
        assert_eq!(gen & 1, 1, "dead entry returned");
        let lo = u64::from_le_bytes(out.params[..8].try_into().expect("8 bytes"));
        let hi = u64::from_le_bytes(out.params[8..].try_into().expect("8 bytes"));
        assert_eq!(lo, hi, "torn value");
        Some(lo)
    }

    /// [`Model::insert`] with the cell written by `LineCells::init` and the insert's inline
    /// fast path, as the table's add-on-miss calls do for one-line cells.
    pub fn insert_line(&self, key: u64, v: u64) -> Option<bool> {
        let kb = key.to_le_bytes();
        let k = Words::<1>::new(&kb);
        let lc = self.cells.lines().expect("one-line cells");
        let p = data(v).params;
        let r = self.x.insert(
            &self.cells,
            self.x.hash(&k),
            &k,
            |_| false,
            |s| lc.init(s as usize, &k, 1, &p, 0).expect("slot in range"),
        );
        match r {
            Ins::Added(..) | Ins::Replaced(..) => Some(true),
            Ins::Present(_) => Some(false),
            Ins::Full => None,
        }
    }

    /// [`Model::get`] through the one-line cell reader the table's lookups use (first
    /// candidate inline, the rest of the protocol out of line). Panics on a torn value.
    pub fn get_line(&self, key: u64) -> Option<u64> {
        let kb = key.to_le_bytes();
        let k = Words::<1>::new(&kb);
        let lc = self.cells.lines().expect("one-line cells");
        let mut out = ActionData::default();
        let (_, gen, _) = self.x.hot().find(&lc, self.x.hash(&k), &k, &mut out)?;
        assert_eq!(gen & 1, 1, "dead entry returned");
        let lo = u64::from_le_bytes(out.params[..8].try_into().expect("8 bytes"));
        let hi = u64::from_le_bytes(out.params[8..].try_into().expect("8 bytes"));
        assert_eq!(lo, hi, "torn value");
        Some(lo)
    }

    /// Replaces the value of `key` in place; false if absent.
    pub fn modify(&self, key: u64, v: u64) -> bool {
        let kb = key.to_le_bytes();
        let k = Key::new(&kb);
        let mut tmp = ActionData::default();
        let Some((s, gen, _)) = self.x.find(&self.cells, self.x.hash(&k), &k, &mut tmp) else {
            return false;
        };
        update(&self.cells, s, gen, v)
    }

    /// Deletes `key` and frees its slot at once; false if absent.
    pub fn remove(&self, key: u64) -> bool {
        let kb = key.to_le_bytes();
        let k = Key::new(&kb);
        let removed = self.x.remove(&self.cells, self.x.hash(&k), &k, None, |s| {
            let g = self.cells.lock(s as usize);
            self.x.slots.freeing();
            g.set_gen(g.gen().wrapping_add(1));
            true
        });
        if let Some(s) = removed {
            self.x.slots.freed(s);
        }
        removed.is_some()
    }

    /// Adds `key` with value `v`, replacing its entry if present (as an expired AUTO_DELETE
    /// entry is replaced: killed under the index lock, then its slot rewritten): `Some(true)`
    /// added or replaced, `None` full.
    pub fn replace(&self, key: u64, v: u64) -> Option<bool> {
        let kb = key.to_le_bytes();
        let k = Key::new(&kb);
        let r = self.x.insert(
            &self.cells,
            self.x.hash(&k),
            &k,
            |s| kill(&self.cells, s),
            |s| init(&self.cells, s, &kb, v),
        );
        match r {
            Ins::Added(..) | Ins::Replaced(..) => Some(true),
            Ins::Present(_) => Some(false),
            Ins::Full => None,
        }
    }

    /// The slot and generation of `key`'s entry (its handle), if present.
    pub fn handle(&self, key: u64) -> Option<(u32, u32)> {
        let kb = key.to_le_bytes();
        let k = Key::new(&kb);
        let mut out = ActionData::default();
        let (s, gen, _) = self.x.find(&self.cells, self.x.hash(&k), &k, &mut out)?;
        Some((s, gen))
    }

    /// Writes value `v` into the entry of handle `(slot, gen)`, as `Table::update_params`
    /// does: only if the cell's generation is still `gen`.
    pub fn update(&self, (s, gen): (u32, u32), v: u64) -> bool {
        update(&self.cells, s, gen, v)
    }

    /// Announces a free ([`crate::slots::Slots::freeing`]), as a removal does before it kills
    /// its entry.
    pub fn freeing(&self) {
        self.x.slots.freeing()
    }

    /// Ends an announced free of slot `s` onto free list `st` ([`crate::slots::Slots::freed`]).
    pub fn freed_in(&self, st: usize, s: u32) {
        self.x.slots.freed_in(st, s)
    }

    /// The primary and secondary bucket of `key`.
    pub fn buckets(&self, key: u64) -> (usize, usize) {
        let kb = key.to_le_bytes();
        self.x.buckets_of(self.x.hash(&Key::new(&kb)))
    }

    /// Moves `key`'s entry to its other bucket (one cuckoo move); false if it cannot.
    pub fn relocate(&self, key: u64) -> bool {
        let kb = key.to_le_bytes();
        let k = Key::new(&kb);
        self.x.relocate(&self.cells, self.x.hash(&k), &k)
    }

    /// A free slot (the free lists alone), from stripe 0.
    pub fn alloc(&self) -> Option<u32> {
        self.x.slots.alloc_in(0)
    }

    /// Returns a slot to free list 0.
    pub fn free(&self, s: u32) {
        self.x.slots.free_in(0, s)
    }

    /// A free slot, taken as a thread of stripe `st` takes it (own list, fresh chunk, others).
    pub fn alloc_in(&self, st: usize) -> Option<u32> {
        self.x.slots.alloc_in(st)
    }

    /// Returns a slot to free list `st`.
    pub fn free_in(&self, st: usize, s: u32) {
        self.x.slots.free_in(st, s)
    }
}

/// A direct index of 1-byte keys (the key is the index) whose entries carry a 16-byte value
/// (the same `u64` twice) in one-line cells, written and read the way the table's calls do:
/// the inline insert, then the whole one; the inline one-line lookup, then the whole one.
pub struct DirectModel {
    d: Direct,
    cells: Cells,
    /// The default action's cell.
    default: usize,
}

impl DirectModel {
    /// Room for `slots` entries of keys `0..keys`.
    pub fn new(keys: usize, slots: usize) -> DirectModel {
        DirectModel {
            d: Direct::with_indices(keys, slots),
            cells: Cells::new(slots + 1, 1, 16, false).expect("cells"),
            default: slots,
        }
    }

    /// Adds `key` with value `v`: `Some(true)` added, `Some(false)` already present, `None` full.
    pub fn insert(&self, key: u8, v: u64) -> Option<bool> {
        let k = Words::<1>::from_word(key as u64, 1);
        let lc = self.cells.lines().expect("one-line cells");
        let p = data(v).params;
        let init = |s: u32| lc.init(s as usize, &k, 1, &p, 0).expect("slot in range");
        if self
            .d
            .insert_fast(&self.cells, key as usize, init)
            .is_some()
        {
            return Some(true);
        }
        match self.d.insert(key as usize, |_| false, init) {
            Ins::Added(..) | Ins::Replaced(..) => Some(true),
            Ins::Present(_) => Some(false),
            Ins::Full => None,
        }
    }

    /// The value of `key`, read as a table lookup reads it. Panics on a torn value or a dead
    /// entry.
    pub fn get(&self, key: u8) -> Option<u64> {
        let lc = self.cells.lines().expect("one-line cells");
        let mut out = ActionData::default();
        let mut version = 0;
        let gen = match self
            .d
            .lookup_line(&lc, self.default, key as usize, &mut out, &mut version)
        {
            Line::Hit(_, gen) => gen,
            Line::Miss => return None,
            Line::Slow => self.d.find(&self.cells, key as usize, &mut out)?.1,
        };
        assert_eq!(gen & 1, 1, "dead entry returned");
        let lo = u64::from_le_bytes(out.params[..8].try_into().expect("8 bytes"));
        let hi = u64::from_le_bytes(out.params[8..].try_into().expect("8 bytes"));
        assert_eq!(lo, hi, "torn value");
        Some(lo)
    }

    /// Replaces the value of `key` in place; false if absent.
    pub fn modify(&self, key: u8, v: u64) -> bool {
        let mut tmp = ActionData::default();
        let Some((s, gen, _)) = self.d.find(&self.cells, key as usize, &mut tmp) else {
            return false;
        };
        update(&self.cells, s, gen, v)
    }

    /// Deletes `key` and frees its slot at once; false if absent.
    pub fn remove(&self, key: u8) -> bool {
        let removed = self.d.remove(key as usize, None, |s| {
            let g = self.cells.lock(s as usize);
            self.d.slots.freeing();
            g.set_gen(g.gen().wrapping_add(1));
            true
        });
        if let Some(s) = removed {
            self.d.slots.freed(s);
        }
        removed.is_some()
    }

    /// Adds `key` with value `v`, replacing its entry if present (as an expired AUTO_DELETE
    /// entry is replaced: killed under the word's lock, then its slot rewritten), through the
    /// whole insert: `Some(true)` added or replaced, `None` full.
    pub fn replace(&self, key: u8, v: u64) -> Option<bool> {
        let k = Words::<1>::from_word(key as u64, 1);
        let lc = self.cells.lines().expect("one-line cells");
        let p = data(v).params;
        let init = |s: u32| lc.init(s as usize, &k, 1, &p, 0).expect("slot in range");
        match self.d.insert(key as usize, |s| kill(&self.cells, s), init) {
            Ins::Added(..) | Ins::Replaced(..) => Some(true),
            Ins::Present(_) => Some(false),
            Ins::Full => None,
        }
    }

    /// The slot and generation of `key`'s entry (its handle), if present.
    pub fn handle(&self, key: u8) -> Option<(u32, u32)> {
        let mut out = ActionData::default();
        let (s, gen, _) = self.d.find(&self.cells, key as usize, &mut out)?;
        Some((s, gen))
    }

    /// Writes value `v` into the entry of handle `(slot, gen)`, as `Table::update_params`
    /// does: only if the cell's generation is still `gen`.
    pub fn update(&self, (s, gen): (u32, u32), v: u64) -> bool {
        update(&self.cells, s, gen, v)
    }
}

/// One cell with 8-byte parameters, updated without its lock through hazard words
/// ([`crate::hazard`], symmetric fences under loom), and the writers that must exclude such
/// updates: a kill before the slot's reuse, a modify to another action.
pub struct HazardModel {
    cells: Cells,
    hz: crate::hazard::Hazards,
}

impl HazardModel {
    /// Slot 0 holds a live entry of value `v` (action 1); returns its generation.
    pub fn new(v: u64) -> (HazardModel, u32) {
        let m = HazardModel {
            cells: Cells::new(1, 8, 8, false).expect("cells"),
            hz: crate::hazard::Hazards::new(true),
        };
        let gen = m.init(v);
        (m, gen)
    }

    /// A fresh entry of value `v` in slot 0 (its reuse); returns its generation.
    pub fn init(&self, v: u64) -> u32 {
        let g = self.cells.lock(0);
        let gen = g.gen().wrapping_add(1) | 1;
        g.set_gen(gen);
        g.write(&ActionData::new(1, v.to_le_bytes()));
        gen
    }

    /// The lock-free update by the owner of hazard word `i` of the entry of generation `gen`
    /// read at version `version`, as `Table::update_word_at`; `None`: it would take the lock.
    pub fn update(&self, i: usize, gen: u32, version: u64, v: u64) -> Option<bool> {
        self.hz.protect(i, 0);
        let r = self
            .cells
            .store_params_unlocked(0, gen, Some(version), v, 8);
        self.hz.clear(i);
        r
    }

    /// Kills the entry of generation `gen` and waits for the updates that may still write it,
    /// as a removal does before it releases the slot; false if it was not live.
    pub fn kill(&self, gen: u32) -> bool {
        let g = self.cells.lock(0);
        if g.gen() != gen {
            return false;
        }
        g.set_gen(gen.wrapping_add(1));
        drop(g);
        self.hz.wait_clear(&[0]);
        true
    }

    /// A control-plane modify to action `action` with value `v`, as `Table::modify_versioned`.
    pub fn modify(&self, action: u32, v: u64) {
        let g = self.cells.lock(0);
        self.hz.wait_clear(&[0]);
        g.write(&ActionData::new(action, v.to_le_bytes()));
        g.set_version(g.version().wrapping_add(1));
    }

    /// (action, value, version) of slot 0, read consistently.
    pub fn read(&self) -> (u32, u64, u64) {
        let mut out = ActionData::default();
        let (_, version) = self.cells.read(0, &mut out);
        let mut b = [0u8; 8];
        let n = out.params.len().min(8);
        b[..n].copy_from_slice(&out.params[..n]);
        (out.action, u64::from_le_bytes(b), version)
    }
}

/// One slot of an idle-timed table: its cell (deadline included), the slot allocator with its
/// limbo ([`crate::slots`], "Limbo") and the hazard words its drain waits for: a lock-free
/// timer restart (`Table::restart_unlocked`) against a batch removal that retires the slot and
/// drains the limbo before the slot's reuse.
pub struct TimerModel {
    cells: Cells,
    hz: std::sync::Arc<crate::hazard::Hazards>,
    slots: crate::slots::Slots,
}

impl TimerModel {
    /// Slot 0 allocated and holding a live entry of deadline `deadline`, in the timer wheel at
    /// that deadline; returns its generation.
    pub fn new(deadline: u64) -> (TimerModel, u32) {
        let hz = std::sync::Arc::new(crate::hazard::Hazards::new(true));
        let mut slots = crate::slots::Slots::new(1).expect("slots");
        slots.bind_hazards(hz.clone());
        let m = TimerModel {
            cells: Cells::new(1, 8, 8, true).expect("cells"),
            hz,
            slots,
        };
        assert_eq!(m.slots.alloc_in(0), Some(0));
        let gen = m.init(deadline);
        m.cells.cell(0).sched.store(deadline, SeqCst);
        (m, gen)
    }

    /// A fresh entry of deadline `deadline` in slot 0; returns its generation.
    pub fn init(&self, deadline: u64) -> u32 {
        let g = self.cells.lock(0);
        let gen = g.gen().wrapping_add(1) | 1;
        g.set_gen(gen);
        g.write(&ActionData::new(1, [0; 8]));
        self.cells.cell(0).deadline.store(deadline, SeqCst);
        gen
    }

    /// The lock-free restart by the owner of hazard word `i` of the entry of generation `gen`,
    /// to deadline `deadline`, as `Table::restart_unlocked` does it (up to the wheel). `None`:
    /// it would take the lock; `Some(None)`: a stale handle; `Some(Some(link))`: stored, and
    /// `link` when it saw the entry scheduled later than its new deadline (or not at all) and
    /// links it into the wheel itself.
    pub fn restart(&self, i: usize, gen: u32, deadline: u64) -> Option<Option<bool>> {
        self.hz.protect(i, 0);
        let r = match self.cells.gen_profile_unlocked(0) {
            None => None,
            Some((g, _)) if g != gen => Some(None),
            Some(_) => {
                self.cells.cell(0).deadline.store(deadline, Relaxed);
                self.hz.light_fence();
                Some(Some(deadline < self.cells.cell(0).sched.load(Relaxed)))
            }
        };
        self.hz.clear(i);
        r
    }

    /// The timer wheel's sweep at `now` of the entry, as `Table::expire` does it: out of the
    /// wheel ("not scheduled"), the heavy fence, its deadline read. True when the sweep keeps
    /// it (deadline past `now`: linked again), false when it is due (a victim, whose removal
    /// checks the deadline again under the cell lock).
    pub fn sweep(&self, now: u64) -> bool {
        self.cells.cell(0).sched.store(crate::cell::NEVER, SeqCst);
        self.hz.heavy_fence();
        self.cells.cell(0).deadline.load(SeqCst) > now
    }

    /// A batch removal's share for the entry of generation `gen`: its free announced, the
    /// entry killed, the slot retired; false if it was not live.
    pub fn retire(&self, gen: u32) -> bool {
        let g = self.cells.lock(0);
        if g.gen() != gen {
            return false;
        }
        self.slots.freeing();
        g.set_gen(gen.wrapping_add(1));
        self.cells
            .cell(0)
            .deadline
            .store(crate::cell::NEVER, SeqCst);
        drop(g);
        self.slots.retire(0);
        true
    }

    /// The end of the batch: [`crate::slots::Slots::drain`].
    pub fn drain(&self) -> usize {
        self.slots.drain()
    }

    /// An allocation from free list `st`.
    pub fn alloc_in(&self, st: usize) -> Option<u32> {
        self.slots.alloc_in(st)
    }

    /// Slot 0's deadline.
    pub fn deadline(&self) -> u64 {
        self.cells.cell(0).deadline.load(SeqCst)
    }
}
