//! Throughput-optimized mode (papers/000 §IV-b): batches of 32 (configurable) on 1..N pinned
//! workers sharing one switch; packets are generated into memory before the clock starts and
//! spread over the workers by software RSS (`nevermiss_io::rss`). Phase 1 (the first `m`
//! packets) and phase 2 are timed separately on the same switch.

use crate::error::BenchError;
use nevermiss_io::rss::{spread, Rss};
use nevermiss_io::{Batch, Packet, TwoPhaseConfig, TwoPhaseGen};
use nevermiss_runtime::run::{per_second as pps, table_reports, Clock};
use nevermiss_runtime::workers::{run_in_memory, WorkerOptions};
use nevermiss_runtime::Switch;
use std::sync::Arc;
use std::time::Duration;

/// The workload of one throughput point, generated once and copied for every run.
pub struct Workload {
    /// Phase 1's packets (first uses of `[0, m)`, the inserts), one queue per core.
    pub phase1: Vec<Vec<Packet>>,
    /// Phase 2's packets (keys seen before, and new ones at rate `r`), one queue per core.
    pub phase2: Vec<Vec<Packet>>,
}

impl Workload {
    /// Generates `cfg`'s packets and spreads each phase over `cores` queues.
    pub fn generate(cfg: &TwoPhaseConfig, cores: usize) -> Result<Workload, BenchError> {
        let mut gen = TwoPhaseGen::new(cfg.clone())?;
        let total =
            usize::try_from(cfg.count).map_err(|_| BenchError::Internal("count too large"))?;
        let m = usize::try_from(cfg.m.min(cfg.count)).unwrap_or(total);
        let mut all = Vec::with_capacity(total);
        let mut b = Batch::with_capacity(nevermiss_io::BATCH_MAX);
        while !gen.is_done() {
            b.clear();
            gen.fill(&mut b);
            all.extend(b.iter().map(|p| Packet::from_bytes(p.data(), p.port, 0)));
        }
        let phase2 = all.split_off(m);
        let rss = Rss::default();
        Ok(Workload {
            phase1: spread(all, &rss, cores),
            phase2: spread(phase2, &rss, cores),
        })
    }

    fn len(q: &[Vec<Packet>]) -> u64 {
        q.iter().map(|v| v.len() as u64).sum()
    }

    /// Packets in phase 1 and phase 2.
    pub fn lens(&self) -> (u64, u64) {
        (Self::len(&self.phase1), Self::len(&self.phase2))
    }
}

/// What one run measured.
#[derive(Clone, Debug)]
pub struct ThroughputRun {
    /// Wall time of phase 1, from the workers' common start to the last worker's last packet.
    pub phase1: Duration,
    /// Wall time of phase 2, measured as phase 1's.
    pub phase2: Duration,
    /// Packets run in phase 1.
    pub packets1: u64,
    /// Packets run in phase 2.
    pub packets2: u64,
    /// CPU time of all workers over both phases (thread CPU time).
    pub cpu: Duration,
    /// Entries in the switch's tables after the run (summed over tables).
    pub table_entries: u64,
    /// Inserts that failed because a table was full (summed over tables).
    pub inserts_full: u64,
}

impl ThroughputRun {
    /// Packets/s of phase 1.
    pub fn pps1(&self) -> f64 {
        pps(self.packets1, self.phase1)
    }
    /// Packets/s of phase 2.
    pub fn pps2(&self) -> f64 {
        pps(self.packets2, self.phase2)
    }
    /// Packets/s of both phases together.
    pub fn pps_total(&self) -> f64 {
        pps(self.packets1 + self.packets2, self.phase1 + self.phase2)
    }
    /// Worker CPU time per packet (ns): unlike packets/s, not inflated when another process of
    /// this machine takes a worker's CPU for a while (the host's contention still shows).
    pub fn cpu_ns_per_packet(&self) -> f64 {
        let n = self.packets1 + self.packets2;
        if n == 0 {
            0.0
        } else {
            self.cpu.as_secs_f64() * 1e9 / n as f64
        }
    }
}

/// Runs both phases of `w` through `sw` (which should be fresh) with `batch`-packet batches.
pub fn run_once(
    sw: &Arc<Switch>,
    w: &Workload,
    batch: usize,
    pin: bool,
) -> Result<ThroughputRun, BenchError> {
    let opts = WorkerOptions {
        batch,
        pin,
        clock: Clock::Packet,
        stop: None,
    };
    let (n1, n2) = w.lens();
    let r1 = if n1 > 0 {
        run_in_memory(sw, w.phase1.clone(), &opts)?
    } else {
        Default::default()
    };
    let r2 = if n2 > 0 {
        run_in_memory(sw, w.phase2.clone(), &opts)?
    } else {
        Default::default()
    };
    let reps = table_reports(sw);
    Ok(ThroughputRun {
        phase1: r1.elapsed,
        phase2: r2.elapsed,
        packets1: r1.packets_in,
        packets2: r2.packets_in,
        cpu: r1
            .per_worker
            .iter()
            .chain(&r2.per_worker)
            .map(|w| w.cpu_time)
            .sum(),
        table_entries: reps.iter().map(|t| t.entries as u64).sum(),
        inserts_full: reps.iter().map(|t| t.stats.inserts_full).sum(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{build_switch, Scenario};

    #[test]
    fn both_phases_run_every_packet() {
        let cfg = TwoPhaseConfig {
            m: 128,
            r: 10,
            count: 128 + 300,
            ..TwoPhaseConfig::default()
        };
        let w = Workload::generate(&cfg, 2).unwrap();
        assert_eq!(w.lens(), (128, 300));
        assert_eq!(w.phase1.len(), 2);
        let sw = build_switch(
            &Scenario::AddOnMiss.default_program(),
            512,
            nevermiss_runtime::Engine::Jit,
        )
        .unwrap();
        let r = run_once(&sw, &w, 32, false).unwrap();
        assert_eq!((r.packets1, r.packets2), (128, 300));
        assert_eq!(r.table_entries, 128 + 30);
        assert_eq!(r.inserts_full, 0);
        assert!(r.pps_total() > 0.0);
        assert!(r.cpu_ns_per_packet() > 0.0);
    }
}
