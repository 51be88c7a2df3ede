//! The cost model of papers/000 §IV and the packet classes of §VI.
//!
//! - Eq. 3 (throughput-optimized): `c_avg = f/r − f/r_baseline`, the average processing cost
//!   per packet from packet rates `r` (packets/s) and the counter frequency `f` (ticks/s).
//! - Eq. 4 (latency-optimized): `c_i = f · (l_i − l_baseline)`; with latencies already in
//!   ticks this is `t_i − t_baseline`, computed on medians as Table IIIa does.

use nevermiss_runtime::TableOps;
use serde::Serialize;

/// Eq. 3: average cost per packet in ticks, from a packet rate and the baseline's rate.
/// `None` if a rate is not positive.
pub fn eq3_ticks(f_hz: f64, r: f64, r_baseline: f64) -> Option<f64> {
    (r > 0.0 && r_baseline > 0.0 && f_hz > 0.0).then(|| f_hz / r - f_hz / r_baseline)
}

/// Eq. 3 in nanoseconds per packet (`f` = 1e9).
pub fn eq3_ns(r: f64, r_baseline: f64) -> Option<f64> {
    eq3_ticks(1e9, r, r_baseline)
}

/// Eq. 4 on medians: `t_class − t_baseline` in ticks (may be negative: noise).
pub fn eq4_ticks(t_class: f64, t_baseline: f64) -> f64 {
    t_class - t_baseline
}

/// Ticks to nanoseconds at `f_hz` ticks per second.
pub fn ticks_to_ns(ticks: f64, f_hz: f64) -> f64 {
    if f_hz > 0.0 {
        ticks * 1e9 / f_hz
    } else {
        f64::NAN
    }
}

/// What a packet did, from its table operation flags and its phase (papers/000 §V-c).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// Baseline program: no table applied.
    Forward,
    /// Phase 1: miss, add-on-miss insert succeeded.
    Insert,
    /// Phase 2: a lookup that hit, without writing the entry.
    Hit,
    /// Phase 2: a hit whose action wrote the entry back (data-plane update).
    HitUpdate,
    /// Phase 2: every r-th packet, a new key inserted (Table IIIb).
    NewKeyInsert,
    /// An insert that failed because the table was full.
    InsertFailed,
    /// Anything else (no table in a table program, a lost insert race, …).
    Other,
}

impl Class {
    /// Every class, in report order.
    pub const ALL: [Class; 7] = [
        Class::Forward,
        Class::Insert,
        Class::Hit,
        Class::HitUpdate,
        Class::NewKeyInsert,
        Class::InsertFailed,
        Class::Other,
    ];

    /// The class's name in reports, JSON and HdrHistogram tags.
    pub fn name(self) -> &'static str {
        match self {
            Class::Forward => "forward",
            Class::Insert => "insert",
            Class::Hit => "hit",
            Class::HitUpdate => "hit-update",
            Class::NewKeyInsert => "new-key-insert",
            Class::InsertFailed => "insert-failed",
            Class::Other => "other",
        }
    }

    /// A phase-2 packet that is not a lookup: a new-key insert, a failed insert or anything
    /// unclassified (what `--samples` keeps besides its stride, as papers/000 Fig. 5 shows
    /// every phase-2 insertion).
    pub fn is_rare(self) -> bool {
        matches!(
            self,
            Class::NewKeyInsert | Class::InsertFailed | Class::Other
        )
    }

    /// Index into [`Class::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// Classifies one packet: `ops` from `Worker::last_ops`, `phase1` whether it was one of
    /// the first `m` packets, `baseline` whether the program is the forwarder.
    #[inline]
    pub fn of(ops: TableOps, phase1: bool, baseline: bool) -> Class {
        if ops.is_empty() {
            return if baseline {
                Class::Forward
            } else {
                Class::Other
            };
        }
        if ops.contains(TableOps::INSERT_FULL) {
            return Class::InsertFailed;
        }
        if ops.contains(TableOps::INSERT) {
            return if phase1 {
                Class::Insert
            } else {
                Class::NewKeyInsert
            };
        }
        if ops.contains(TableOps::HIT) {
            return if ops.contains(TableOps::UPDATE) {
                Class::HitUpdate
            } else {
                Class::Hit
            };
        }
        Class::Other
    }
}

/// The median and range of one figure over repeated runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Spread {
    /// The median over the runs.
    pub median: f64,
    /// The smallest value over the runs.
    pub min: f64,
    /// The largest value over the runs.
    pub max: f64,
}

impl Spread {
    /// Median (mean of the middle two for an even count), min and max of `v`; `None` if empty
    /// or any value is NaN.
    pub fn of(v: &[f64]) -> Option<Spread> {
        if v.is_empty() || v.iter().any(|x| x.is_nan()) {
            return None;
        }
        let mut s = v.to_vec();
        s.sort_by(f64::total_cmp);
        let n = s.len();
        let median = if n % 2 == 1 {
            s[n / 2]
        } else {
            (s[n / 2 - 1] + s[n / 2]) / 2.0
        };
        Some(Spread {
            median,
            min: s[0],
            max: s[n - 1],
        })
    }

    /// Every figure mapped by `f` (which must be monotonic increasing to keep min ≤ max).
    pub fn map(self, f: impl Fn(f64) -> f64) -> Spread {
        Spread {
            median: f(self.median),
            min: f(self.min),
            max: f(self.max),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eq3_matches_the_paper() {
        // papers/000 §VI: baseline 6.76 Mpps, insertion-only phase 1.38 Mpps at 2.1 GHz.
        let c = eq3_ticks(2.1e9, 1.38e6, 6.76e6).unwrap();
        let expect = 2.1e9 / 1.38e6 - 2.1e9 / 6.76e6;
        assert!((c - expect).abs() < 1e-6);
        assert!((c - 1211.12).abs() < 0.1, "{c}");
        // Same rate as the baseline: zero cost; faster than the baseline: negative.
        assert_eq!(eq3_ticks(1e9, 5e6, 5e6), Some(0.0));
        assert!(eq3_ticks(1e9, 6e6, 5e6).unwrap() < 0.0);
        assert_eq!(eq3_ticks(1e9, 0.0, 5e6), None);
        assert_eq!(eq3_ns(1e6, 2e6), Some(500.0));
    }

    #[test]
    fn eq4_and_units() {
        // Table IIIa: insertion 4000 ns vs baseline 3500 ns → 500 ns = 1100 cycles at 2.2 GHz.
        let d = eq4_ticks(4000.0 * 2.2, 3500.0 * 2.2);
        assert!((d - 1100.0).abs() < 1e-9);
        assert!((ticks_to_ns(d, 2.2e9) - 500.0).abs() < 1e-9);
        assert!(eq4_ticks(1.0, 2.0) < 0.0);
        assert!(ticks_to_ns(1.0, 0.0).is_nan());
    }

    #[test]
    fn classification() {
        use TableOps as T;
        assert_eq!(Class::of(T::NONE, true, true), Class::Forward);
        assert_eq!(Class::of(T::NONE, false, false), Class::Other);
        assert_eq!(Class::of(T::MISS | T::INSERT, true, false), Class::Insert);
        assert_eq!(
            Class::of(T::MISS | T::INSERT, false, false),
            Class::NewKeyInsert
        );
        assert_eq!(Class::of(T::HIT, false, false), Class::Hit);
        assert_eq!(
            Class::of(T::HIT | T::UPDATE, false, false),
            Class::HitUpdate
        );
        assert_eq!(
            Class::of(T::MISS | T::INSERT_FULL, true, false),
            Class::InsertFailed
        );
        assert_eq!(
            Class::of(T::MISS | T::INSERT_OTHER, true, false),
            Class::Other
        );
        assert_eq!(Class::of(T::MISS, false, false), Class::Other);
        for (i, c) in Class::ALL.iter().enumerate() {
            assert_eq!(c.index(), i);
        }
    }

    #[test]
    fn spreads() {
        let s = Spread::of(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.median, s.min, s.max), (2.0, 1.0, 3.0));
        assert_eq!(Spread::of(&[4.0, 1.0, 2.0, 3.0]).unwrap().median, 2.5);
        assert!(Spread::of(&[]).is_none());
        assert!(Spread::of(&[f64::NAN]).is_none());
        let d = s.map(|x| x * 2.0);
        assert_eq!(d.max, 6.0);
    }
}
