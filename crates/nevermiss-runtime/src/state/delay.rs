//! Update-delay probes (papers/002's d_data): how long after a control-plane change became
//! visible to the data plane the first packet used it.
//!
//! Every table has one [`Watch`]. When `Config::track_updates` is on, each control-plane insert
//! or modify of an entry arms its table's watch with the entry (slot, generation), the version
//! the change gave it and the time it became visible; the first worker whose lookup hits that
//! entry at that version or a later one records the time (one compare-and-swap decides which
//! worker), measured on [`crate::Switch::now_ns`]'s clock. Arming a watch retires the previous
//! one of the same table (fired or not), so with many updates in flight per table only the
//! last of each batch is measured; retired probes are collected by [`crate::Switch::take_update_probes`].
//!
//! Cost on the data plane: one relaxed load of a word that is zero unless a probe is armed,
//! per table hit; the armed case compares two words.

use nevermiss_tables::EntryHandle;
use std::sync::atomic::{AtomicU64, Ordering::*};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// A probe's outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Probe {
    /// The number the control plane gave the update (`Applied::probe`).
    pub id: u64,
    /// When the change became visible to the data plane (ns, `Switch::now_ns`).
    pub visible_ns: u64,
    /// When the first packet used it, if one did before the probe was retired.
    pub seen_ns: Option<u64>,
}

impl Probe {
    /// d_data: from visible to the first packet that used the change.
    pub fn d_data_ns(&self) -> Option<u64> {
        self.seen_ns.map(|s| s.saturating_sub(self.visible_ns))
    }
}

/// The switch's probes: the numbers given to updates, and the probes retired and not yet
/// collected (`Switch::take_update_probes`).
#[derive(Default)]
pub(crate) struct Probes {
    last: AtomicU64,
    retired: Mutex<Vec<Probe>>,
}

impl Probes {
    /// A new probe number (from 1).
    pub(crate) fn next_id(&self) -> u64 {
        self.last.fetch_add(1, Relaxed) + 1
    }

    /// Keeps a retired probe until it is collected.
    pub(crate) fn push(&self, p: Probe) {
        self.lock().push(p);
    }

    /// The retired probes, oldest first; none are kept.
    pub(crate) fn take(&self) -> Vec<Probe> {
        std::mem::take(&mut *self.lock())
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Probe>> {
        self.retired.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One table's probe.
#[derive(Default)]
pub(crate) struct Watch {
    /// `(slot + 1) << 32 | generation` of the watched entry; 0 = nothing armed.
    armed: AtomicU64,
    version: AtomicU64,
    id: AtomicU64,
    visible_ns: AtomicU64,
    /// 0 until a packet used the entry.
    seen_ns: AtomicU64,
    /// The control side: arming and retiring are serialized.
    ctl: Mutex<()>,
}

fn pack(h: EntryHandle) -> u64 {
    ((h.slot() as u64 + 1) << 32) | u64::from(h.generation())
}

impl Watch {
    /// Called by the data plane for every hit: records the first use of the watched entry.
    #[inline(always)]
    pub(crate) fn on_hit(&self, h: EntryHandle, version: u64, now: impl FnOnce() -> u64) {
        let a = self.armed.load(Relaxed);
        if a != 0 && a == pack(h) {
            self.fire(version, now);
        }
    }

    #[cold]
    fn fire(&self, version: u64, now: impl FnOnce() -> u64) {
        if version >= self.version.load(Acquire) && self.seen_ns.load(Acquire) == 0 {
            let t = now().max(1);
            if self.seen_ns.compare_exchange(0, t, AcqRel, Relaxed).is_ok()
                && version < self.version.load(Acquire)
            {
                // A re-arm ran between the check and the claim (it resets `seen_ns` after
                // storing the new version, and the claim read that reset): this hit used the
                // old data, so it is not the new probe's first use.
                let _ = self.seen_ns.compare_exchange(t, 0, AcqRel, Relaxed);
            }
        }
    }

    /// Arms the probe on entry `h` at `version`, visible since `visible_ns`; returns the probe
    /// it retires, if one was armed.
    pub(crate) fn arm(
        &self,
        id: u64,
        h: EntryHandle,
        version: u64,
        visible_ns: u64,
    ) -> Option<Probe> {
        let _g = self
            .ctl
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let old = self.retire_locked();
        self.version.store(version, Release);
        self.id.store(id, Relaxed);
        self.visible_ns.store(visible_ns, Relaxed);
        // After the version: a claim that reads this reset also sees the new version.
        self.seen_ns.store(0, Release);
        self.armed.store(pack(h), Release);
        old
    }

    /// Retires the armed probe if a packet has used it (or always, with `force`).
    pub(crate) fn harvest(&self, force: bool) -> Option<Probe> {
        let _g = self
            .ctl
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if self.armed.load(Relaxed) == 0 || (!force && self.seen_ns.load(Acquire) == 0) {
            return None;
        }
        self.retire_locked()
    }

    fn retire_locked(&self) -> Option<Probe> {
        if self.armed.swap(0, AcqRel) == 0 {
            return None;
        }
        let seen = self.seen_ns.load(Acquire);
        Some(Probe {
            id: self.id.load(Relaxed),
            visible_ns: self.visible_ns.load(Relaxed),
            seen_ns: (seen != 0).then_some(seen),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn handle(t: &nevermiss_tables::Table, k: u8) -> EntryHandle {
        t.read(&[nevermiss_tables::FieldMatch::Exact(vec![k])], 0)
            .unwrap()
            .id
    }

    #[test]
    fn first_use_at_the_new_version_fires_once() {
        use nevermiss_tables::*;
        let t = Table::new(TableSpec::new(
            "t",
            vec![KeySpec::new("k", 8, MatchKind::Exact)],
            4,
        ))
        .unwrap();
        t.insert(
            &[FieldMatch::Exact(vec![1])],
            0,
            ActionData::new(0, &[1u8][..]),
        )
        .unwrap();
        t.insert(
            &[FieldMatch::Exact(vec![2])],
            0,
            ActionData::new(0, &[1u8][..]),
        )
        .unwrap();
        let (h1, h2) = (handle(&t, 1), handle(&t, 2));
        let w = Watch::default();
        w.on_hit(h1, 0, || panic!("nothing armed"));
        assert_eq!(w.arm(7, h1, 1, 100), None);
        // The old version, another entry: nothing.
        w.on_hit(h1, 0, || 150);
        w.on_hit(h2, 5, || 150);
        assert_eq!(w.harvest(false), None);
        w.on_hit(h1, 1, || 180);
        w.on_hit(h1, 1, || 190);
        let p = w.harvest(false).unwrap();
        assert_eq!(p.id, 7);
        assert_eq!(p.d_data_ns(), Some(80));
        // Retired: later hits do nothing; a new probe retires an unfired one.
        w.on_hit(h1, 2, || panic!("retired"));
        assert_eq!(w.arm(8, h2, 0, 500), None);
        let old = w.arm(9, h1, 3, 600).unwrap();
        assert_eq!((old.id, old.seen_ns), (8, None));
        assert_eq!(w.harvest(true).map(|p| p.id), Some(9));
    }
}
