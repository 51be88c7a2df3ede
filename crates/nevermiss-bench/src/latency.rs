//! Latency-optimized mode (papers/000 §IV-c): batch size 1 on one core, TSC ticks around each
//! packet's `Worker::process`, classified by what the packet did to the table.
//!
//! Packets are generated into a reused 256-packet batch between timed regions, so generation
//! is never inside a measurement and memory does not grow with the packet count.

use crate::error::BenchError;
use crate::model::Class;
use crate::scenario::Scenario;
use crate::tsc;
use hdrhistogram::Histogram;
use nevermiss_io::{Batch, TwoPhaseConfig, TwoPhaseGen};
use nevermiss_runtime::run::table_reports;
use nevermiss_runtime::{Switch, Worker};
use nevermiss_tables::stamp;
use std::sync::Arc;

/// Which packets of a run to keep as per-packet samples (`--samples`): every `every`-th
/// packet by index, and of the phase-2 packets that are not lookups (new-key inserts, failed
/// inserts, anything unclassified) every `rare_every`-th.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SampleRule {
    /// Stride over all packets (≥ 1).
    pub every: u64,
    /// Stride over the rare phase-2 packets (≥ 1).
    pub rare_every: u64,
}

/// One packet's measurement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sample {
    /// Packet number in the run, from 0 (phase 1 is `0..m`).
    pub index: u64,
    /// What the packet did to the table.
    pub class: Class,
    /// TSC ticks from just before the worker processed the packet to just after (the timer's own
    /// overhead included; `Machine::timer_overhead_ticks` measures it).
    pub ticks: u64,
}

/// Where the packets of one class that passed one set of stamped stages spent their ticks
/// (built with the `stage-stamps` feature: `nevermiss_tables::stamp`).
pub struct StageHists {
    /// The packets' class.
    pub class: Class,
    /// The stages passed: bit `i` is `stamp::ALL[i]`.
    pub passed: u16,
    /// Per stage of `stamp::ALL`, the ticks from the stamp before it (the packet's start for
    /// the first) to it, for the stages passed; then from the last stamp to the packet's end
    /// (index `STAGES`); then the packet's ticks (index `STAGES + 1`).
    pub hists: Vec<Histogram<u64>>,
}

impl StageHists {
    fn new(class: Class, passed: u16) -> StageHists {
        StageHists {
            class,
            passed,
            hists: (0..stamp::STAGES + 2).map(|_| new_hist()).collect(),
        }
    }

    /// The histograms of `all` for `class` and `passed`, added empty if there are none.
    fn find_or_add(all: &mut Vec<StageHists>, class: Class, passed: u16) -> &mut StageHists {
        let k = match all
            .iter()
            .position(|s| s.class == class && s.passed == passed)
        {
            Some(k) => k,
            None => {
                all.push(StageHists::new(class, passed));
                all.len() - 1
            }
        };
        &mut all[k]
    }

    /// Adds `other`'s packets to those of its class and stages in `all` (another run's).
    pub fn merge_into(all: &mut Vec<StageHists>, other: &StageHists) {
        StageHists::find_or_add(all, other.class, other.passed).merge(other);
    }

    /// Adds `other`'s packets (the same class and stages).
    pub fn merge(&mut self, other: &StageHists) {
        for (a, b) in self.hists.iter_mut().zip(&other.hists) {
            // Both grow as needed (`record`), so adding never fails for lack of range.
            let _ = a.add(b);
        }
    }

    /// Packets counted.
    pub fn packets(&self) -> u64 {
        self.hists.last().map_or(0, Histogram::len)
    }

    /// The packets' median ticks.
    pub fn median(&self) -> u64 {
        self.hists.last().map_or(0, |h| h.value_at_quantile(0.5))
    }

    /// Records one packet timed from `t0` to `t1` with stamps `st` (0: not passed).
    fn record_packet(all: &mut Vec<StageHists>, class: Class, t0: u64, t1: u64, st: &[u64]) {
        let mut order: Vec<(u64, usize)> = st
            .iter()
            .enumerate()
            .filter(|&(_, &t)| t != 0)
            .map(|(i, &t)| (t, i))
            .collect();
        order.sort_unstable();
        let passed = order.iter().fold(0u16, |m, &(_, i)| m | 1 << i);
        let h = &mut StageHists::find_or_add(all, class, passed).hists;
        let mut prev = t0;
        for &(t, i) in &order {
            record(&mut h[i], t.saturating_sub(prev));
            prev = t;
        }
        record(&mut h[stamp::STAGES], t1.saturating_sub(prev));
        record(&mut h[stamp::STAGES + 1], t1.saturating_sub(t0));
    }
}

/// One latency run's per-class histograms of ticks per packet ([`Class::ALL`] order).
pub struct LatencyRun {
    /// Per class, the ticks per packet of the run's packets of that class.
    pub hists: Vec<Histogram<u64>>,
    /// Per class and set of stages passed, where the ticks went (empty unless built with the
    /// `stage-stamps` feature).
    pub stages: Vec<StageHists>,
    /// The packets a [`SampleRule`] kept, in packet order (empty without one).
    pub samples: Vec<Sample>,
    /// Entries in the table afterwards (0 for the baseline).
    pub table_entries: u64,
    /// Inserts that failed because the table was full.
    pub inserts_full: u64,
}

impl LatencyRun {
    /// Packets of `c`.
    pub fn count(&self, c: Class) -> u64 {
        self.hists[c.index()].len()
    }
}

/// A histogram of ticks: 3 significant digits, grows to any value (see [`record`]).
pub fn new_hist() -> Histogram<u64> {
    Histogram::new(3).expect("3 significant digits is a valid precision")
}

/// Records `ticks`, growing the histogram as needed (`saturating_record` alone would clamp
/// to the current range without growing it).
#[inline]
pub fn record(h: &mut Histogram<u64>, ticks: u64) {
    if h.record(ticks).is_err() {
        h.saturating_record(ticks);
    }
}

/// Runs the two-phase workload `gen` through a new worker of `sw`, one packet at a time, and
/// records each packet's ticks under its class (phase 1 is the first `gen_cfg.m` packets).
/// With a `rule`, the packets it selects are also kept one by one (outside the timed region).
pub fn run_once(
    sw: &Arc<Switch>,
    scenario: Scenario,
    gen_cfg: &TwoPhaseConfig,
    rule: Option<SampleRule>,
) -> Result<LatencyRun, BenchError> {
    let mut gen = TwoPhaseGen::new(gen_cfg.clone())?;
    let mut w = Worker::new(sw.clone(), 0);
    let mut hists: Vec<Histogram<u64>> = Class::ALL.iter().map(|_| new_hist()).collect();
    let baseline = scenario.is_baseline();
    let m = gen_cfg.m;
    let mut batch = Batch::with_capacity(nevermiss_io::BATCH_MAX);
    let mut idx = 0u64;
    let mut samples = Vec::new();
    let mut rare = 0u64;
    let mut stages = Vec::new();
    while !gen.is_done() {
        batch.clear();
        gen.fill(&mut batch);
        for p in batch.iter() {
            let data = p.data();
            if stamp::ENABLED {
                let _ = stamp::take();
            }
            let t0 = tsc::start();
            w.process(data, p.port, p.ts_ns);
            let t1 = tsc::stop();
            let c = Class::of(w.last_ops(), idx < m, baseline);
            let ticks = t1.saturating_sub(t0);
            record(&mut hists[c.index()], ticks);
            if stamp::ENABLED {
                StageHists::record_packet(&mut stages, c, t0, t1, &stamp::take());
            }
            if let Some(rule) = rule {
                let mut keep = idx.is_multiple_of(rule.every);
                if idx >= m && c.is_rare() {
                    keep |= rare.is_multiple_of(rule.rare_every);
                    rare += 1;
                }
                if keep {
                    samples.push(Sample {
                        index: idx,
                        class: c,
                        ticks,
                    });
                }
            }
            // Idle time between packets (outside the timed region), as a polling core has.
            w.maintain();
            idx += 1;
        }
    }
    let reps = table_reports(sw);
    Ok(LatencyRun {
        hists,
        stages,
        samples,
        table_entries: reps.iter().map(|t| t.entries as u64).sum(),
        inserts_full: reps.iter().map(|t| t.stats.inserts_full).sum(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::build_switch;

    /// A packet's stage ticks are the gaps between its stamps in time order, from the packet's
    /// start to its end; packets are grouped by class and the stages they passed.
    #[test]
    fn stage_ticks_are_the_gaps_between_stamps() {
        let mut all = Vec::new();
        let mut st = [0u64; stamp::STAGES];
        st[stamp::Stage::LookupIn as usize] = 110;
        st[stamp::Stage::LookupOut as usize] = 150;
        StageHists::record_packet(&mut all, Class::Hit, 100, 200, &st);
        StageHists::record_packet(&mut all, Class::Hit, 100, 200, &st);
        st[stamp::Stage::AddIn as usize] = 170;
        StageHists::record_packet(&mut all, Class::Insert, 100, 230, &st);
        assert_eq!(all.len(), 2);
        let med = |s: &StageHists, i: usize| s.hists[i].value_at_quantile(0.5);
        let hit = &all[0];
        assert_eq!(
            (hit.class, hit.passed, hit.packets()),
            (Class::Hit, 0b11, 2)
        );
        assert_eq!(
            (med(hit, 0), med(hit, 1), med(hit, stamp::STAGES)),
            (10, 40, 50)
        );
        assert_eq!(hit.median(), 100);
        let ins = &all[1];
        assert_eq!(
            (ins.passed, med(ins, 2), med(ins, stamp::STAGES)),
            (0b111, 20, 60)
        );
        let mut twice = StageHists::new(Class::Insert, 0b111);
        twice.merge(ins);
        twice.merge(ins);
        assert_eq!(twice.packets(), 2);
    }

    /// Values beyond the first bucket (2048) are kept, not clamped.
    #[test]
    fn large_values_are_recorded() {
        let mut h = new_hist();
        for v in [5u64, 3000, 1_000_000, 10_000_000_000] {
            record(&mut h, v);
        }
        assert_eq!(h.len(), 4);
        assert!(
            h.value_at_quantile(0.5) >= 2990,
            "{}",
            h.value_at_quantile(0.5)
        );
        assert!(h.max() >= 9_990_000_000);
        assert!(h.min() <= 5);
    }

    #[test]
    fn classes_follow_the_two_phases() {
        let cfg = TwoPhaseConfig {
            m: 64,
            r: 10,
            count: 64 + 200,
            ..TwoPhaseConfig::default()
        };
        let sw = build_switch(
            &Scenario::AddOnMiss.default_program(),
            256,
            nevermiss_runtime::Engine::Jit,
        )
        .unwrap();
        let run = run_once(&sw, Scenario::AddOnMiss, &cfg, None).unwrap();
        assert_eq!(run.count(Class::Insert), 64);
        assert!(run.samples.is_empty());
        assert_eq!(run.count(Class::NewKeyInsert), 20);
        assert_eq!(run.count(Class::Hit), 180);
        assert_eq!(run.table_entries, 84);
        assert_eq!(run.count(Class::Other) + run.count(Class::Forward), 0);

        let sw = build_switch(
            &Scenario::Update.default_program(),
            256,
            nevermiss_runtime::Engine::Jit,
        )
        .unwrap();
        let run = run_once(&sw, Scenario::Update, &cfg, None).unwrap();
        assert_eq!(run.count(Class::HitUpdate), 180);
        assert_eq!(run.count(Class::Hit), 0);

        let sw = build_switch(
            &Scenario::Forward.default_program(),
            256,
            nevermiss_runtime::Engine::Jit,
        )
        .unwrap();
        let run = run_once(&sw, Scenario::Forward, &cfg, None).unwrap();
        assert_eq!(run.count(Class::Forward), 264);

        // A table too small: the failed inserts are their own class.
        let sw = build_switch(
            &Scenario::AddOnMiss.default_program(),
            16,
            nevermiss_runtime::Engine::Jit,
        )
        .unwrap();
        let run = run_once(&sw, Scenario::AddOnMiss, &cfg, None).unwrap();
        assert!(run.count(Class::InsertFailed) > 0);
        assert_eq!(run.inserts_full, run.count(Class::InsertFailed));
    }

    /// Samples: every 7th packet, and every 3rd of the 20 phase-2 new-key inserts (the
    /// strides count separately, so a packet both rules pick is kept once).
    #[test]
    fn samples_follow_the_rule_in_packet_order() {
        let cfg = TwoPhaseConfig {
            m: 64,
            r: 10,
            count: 64 + 200,
            ..TwoPhaseConfig::default()
        };
        let sw = build_switch(
            &Scenario::AddOnMiss.default_program(),
            256,
            nevermiss_runtime::Engine::Jit,
        )
        .unwrap();
        let rule = SampleRule {
            every: 7,
            rare_every: 3,
        };
        let run = run_once(&sw, Scenario::AddOnMiss, &cfg, Some(rule)).unwrap();
        let idx: Vec<u64> = run.samples.iter().map(|s| s.index).collect();
        assert!(idx.windows(2).all(|w| w[0] < w[1]), "{idx:?}");
        let strided = (0..264u64).filter(|i| i % 7 == 0).count();
        let new_keys: Vec<&Sample> = run
            .samples
            .iter()
            .filter(|s| s.class == Class::NewKeyInsert)
            .collect();
        // The 20 new keys are packets 64 + 10k + 9; the 1st, 4th, … (7 of them) are kept by
        // the rare rule, others only when the stride hits them.
        let rare_kept = (0..20u64).filter(|k| k % 3 == 0).count();
        assert!(new_keys.len() >= rare_kept, "{new_keys:?}");
        assert!(run.samples.len() <= strided + rare_kept);
        assert!(run.samples.len() >= strided);
        for s in &run.samples {
            assert!(s.ticks > 0);
            let want = if s.index < 64 {
                Class::Insert
            } else if (s.index - 64) % 10 == 9 {
                Class::NewKeyInsert
            } else {
                Class::Hit
            };
            assert_eq!(s.class, want, "{s:?}");
        }
    }
}
