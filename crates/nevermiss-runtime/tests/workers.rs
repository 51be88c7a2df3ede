//! Several workers on one switch: the add-on-miss table ends up the same as with one worker,
//! and workers inserting the same keys at once never insert one twice nor lose one.

mod common;
use common::build;

use nevermiss_io::gen::{KeyField, TwoPhaseConfig, TwoPhaseGen, TwoPhaseKeys};
use nevermiss_io::rss::{spread, Rss};
use nevermiss_io::{Batch, Packet};
use nevermiss_runtime::run::RunError;
use nevermiss_runtime::workers::{available_cpus, run_in_memory, WorkerOptions};
use nevermiss_runtime::{Config, Switch};
use p4_front::driver::Options;
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;

fn add_on_miss(size: usize) -> Arc<Switch> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/pna-add-on-miss.p4");
    let opts = Options {
        defines: vec![("FLOW_TABLE_SIZE".into(), size.to_string())],
        ..Options::default()
    };
    build(&path, &opts, Config::default()).unwrap_or_else(|e| panic!("{e}"))
}

fn packets(cfg: &TwoPhaseConfig) -> Vec<Packet> {
    let mut gen = TwoPhaseGen::new(cfg.clone()).unwrap();
    let mut batch = Batch::with_capacity(32);
    let mut out = Vec::new();
    while !gen.is_done() {
        batch.clear();
        gen.fill(&mut batch);
        out.extend(
            batch
                .iter()
                .map(|p| Packet::from_bytes(p.data(), p.port, p.ts_ns)),
        );
    }
    out
}

fn stored_keys(sw: &Switch) -> Vec<u64> {
    sw.table(0)
        .unwrap()
        .iter()
        .iter()
        .map(|e| u64::from(u32::from_be_bytes([e.key[0], e.key[1], e.key[2], e.key[3]])))
        .collect()
}

fn cfg() -> TwoPhaseConfig {
    TwoPhaseConfig {
        m: 4000,
        r: 5,
        count: 20_000,
        field: KeyField {
            offset: 30,
            width: 4,
        },
        ..TwoPhaseConfig::default()
    }
}

/// Two workers fed by RSS: every packet processed once, the table holds exactly the distinct
/// keys, each inserted once, every other packet a hit.
#[test]
fn rss_spread_two_phase_on_two_workers() {
    let cfg = cfg();
    let keys: HashSet<u64> = TwoPhaseKeys::new(&cfg).unwrap().map(|e| e.key).collect();
    let sw = add_on_miss(16_384);
    let queues = spread(packets(&cfg), &Rss::default(), 2);
    assert!(
        queues.iter().all(|q| q.len() > 5_000),
        "rss spreads the keys"
    );
    let opts = WorkerOptions {
        pin: false,
        ..WorkerOptions::default()
    };
    let rep = run_in_memory(&sw, queues, &opts).unwrap();
    assert_eq!(rep.packets_in, cfg.count);
    assert_eq!(rep.packets_out, cfg.count, "every packet goes back out");
    assert_eq!(rep.per_worker.len(), 2);
    assert!(rep.per_worker.iter().all(|w| w.packets > 0));
    let stored = stored_keys(&sw);
    assert_eq!(stored.len(), keys.len());
    assert_eq!(stored.into_iter().collect::<HashSet<_>>(), keys);
    let st = sw.table(0).unwrap().stats();
    assert_eq!(st.inserts, keys.len() as u64);
    assert_eq!(st.hits, cfg.count - keys.len() as u64);
    assert_eq!(st.inserts_full, 0);
}

/// Four workers each get every packet (rotated, so they meet on the same keys at different
/// moments and, often, at the same moment): each key is inserted exactly once overall; every
/// other packet hits.
#[test]
fn overlapping_inserts_from_every_worker() {
    let cfg = TwoPhaseConfig {
        m: 3000,
        r: 3,
        count: 9000,
        ..cfg()
    };
    let keys: HashSet<u64> = TwoPhaseKeys::new(&cfg).unwrap().map(|e| e.key).collect();
    for round in 0..3 {
        let sw = add_on_miss(16_384);
        let all = packets(&cfg);
        let workers = 4;
        let queues: Vec<Vec<Packet>> = (0..workers)
            .map(|w| {
                let mut q = all.clone();
                // Workers 0 and 1 race in lockstep; 2 and 3 start elsewhere in the stream.
                q.rotate_left((w / 2) * all.len() / 3 + round * 17);
                q
            })
            .collect();
        let opts = WorkerOptions {
            pin: false,
            batch: 1 + round * 15,
            ..WorkerOptions::default()
        };
        let rep = run_in_memory(&sw, queues, &opts).unwrap();
        assert_eq!(rep.packets_in, workers as u64 * cfg.count);
        let stored = stored_keys(&sw);
        assert_eq!(stored.len(), keys.len(), "no duplicate, no lost entry");
        assert_eq!(stored.into_iter().collect::<HashSet<_>>(), keys);
        let st = sw.table(0).unwrap().stats();
        assert_eq!(st.inserts, keys.len() as u64, "each key inserted once");
        assert_eq!(st.inserts_full, 0);
        assert_eq!(st.hits + st.misses, workers as u64 * cfg.count);
    }
}

/// Asking to pin more workers than there are CPUs is an error, not an oversubscribed run.
#[test]
fn more_pinned_workers_than_cpus_is_an_error() {
    let sw = add_on_miss(1024);
    let n = available_cpus().len() + 1;
    let e = run_in_memory(&sw, vec![Vec::new(); n], &WorkerOptions::default()).unwrap_err();
    assert!(matches!(e, RunError::TooFewCpus { .. }), "{e}");
    assert!(e.to_string().contains("cpus"), "{e}");
    // Empty queues are fine.
    let rep = run_in_memory(
        &sw,
        vec![Vec::new(); 2],
        &WorkerOptions {
            pin: false,
            ..WorkerOptions::default()
        },
    )
    .unwrap();
    assert_eq!(rep.packets_in, 0);
}
