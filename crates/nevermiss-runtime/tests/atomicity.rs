//! Atomicity of control-plane writes as packets see them (P4Runtime §12.2, papers/002 §V): with
//! workers processing packets without pause,
//! - an entry modified back and forth between two actions is never missed: no packet takes the
//!   default action (papers/002 measured 1–3 such packets per modify on a Tofino);
//! - a DATAPLANE_ATOMIC batch of 1000 inserts is seen whole or not at all by every batch of
//!   packets a worker runs;
//! - a ROLLBACK_ON_ERROR batch that fails leaves nothing behind.
//!
//! The program is tests/p4/two-actions.p4: port 1 or 2 for an entry's action, port 3 for a miss.

mod common;
use common::build;

use nevermiss_io::Packet;
use nevermiss_runtime::control::{
    ActionCall, Atomicity, Change, ControlError, EntryAction, EntryKey, Op, TableEntry,
};
use nevermiss_runtime::{Config, Switch, Worker};
use nevermiss_tables::FieldMatch;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

fn switch() -> Arc<Switch> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/p4/two-actions.p4");
    build(&path, &Default::default(), Config::default()).unwrap_or_else(|e| panic!("{e}"))
}

fn action(sw: &Switch, name: &str) -> u32 {
    sw.prog().tables[0]
        .actions
        .iter()
        .position(|a| a.name.ends_with(name))
        .unwrap() as u32
}

fn entry(sw: &Switch, key: u32, act: &str) -> TableEntry {
    TableEntry {
        key: EntryKey {
            matches: vec![FieldMatch::Exact(key.to_be_bytes().to_vec())],
            priority: 0,
        },
        action: Some(EntryAction::Call(ActionCall {
            action: action(sw, act),
            params: vec![],
        })),
        ..TableEntry::default()
    }
}

fn packet(key: u32, seq: u32) -> Vec<u8> {
    let mut p = key.to_be_bytes().to_vec();
    p.extend(seq.to_be_bytes());
    p
}

/// Output counts per port 1, 2, 3 of a worker.
#[derive(Default, Debug, Clone, Copy)]
struct Seen {
    ports: [u64; 4],
}

#[test]
fn a_modify_changes_what_packets_do() {
    let sw = switch();
    sw.write_one(&Change::Entry(Op::Insert, 0, entry(&sw, 7, "to_one")))
        .unwrap();
    let mut wk = Worker::new(sw.clone(), 0);
    let port = |wk: &mut Worker| wk.process(&packet(7, 0), 0, 0).as_slice()[0].0;
    assert_eq!(port(&mut wk), 1);
    sw.write_one(&Change::Entry(Op::Modify, 0, entry(&sw, 7, "to_two")))
        .unwrap();
    let e = sw.read_entry(0, &entry(&sw, 7, "to_two").key).unwrap();
    assert_eq!(e.action, entry(&sw, 7, "to_two").action.unwrap());
    assert_eq!(port(&mut wk), 2);
}

/// A small control-plane table's code is re-specialised to its entries after every write
/// (docs/jit.md, "Re-specialising a table's code"): inserts, modifies, deletes and re-inserts,
/// one by one and in batches of every atomicity, show at once, under both engines.
#[test]
fn a_specialised_table_follows_every_write() {
    use nevermiss_runtime::Engine;
    for engine in [Engine::Jit, Engine::Interp] {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/p4/two-actions.p4");
        let config = Config {
            engine,
            ..Config::default()
        };
        let sw = build(&path, &Default::default(), config).unwrap_or_else(|e| panic!("{e}"));
        let mut wk = Worker::new(sw.clone(), 0);
        // Every write's code compiled before the packets run (a write within
        // `RESPEC_INTERVAL` of the last compilation leaves it to a later one).
        let mut port = |k: u32| {
            sw.specialise_now();
            wk.process(&packet(k, 0), 0, 0).as_slice()[0].0
        };
        let jit = engine == Engine::Jit;
        sw.specialise_now();
        assert!(!sw.spec_active(0), "an empty table needs no code");
        assert_eq!((port(7), port(8)), (3, 3));
        sw.write_one(&Change::Entry(Op::Insert, 0, entry(&sw, 7, "to_one")))
            .unwrap();
        sw.specialise_now();
        assert_eq!(sw.spec_active(0), jit);
        assert_eq!((port(7), port(8)), (1, 3));
        sw.write_one(&Change::Entry(Op::Modify, 0, entry(&sw, 7, "to_two")))
            .unwrap();
        assert_eq!((port(7), port(8)), (2, 3));
        for (i, atomicity) in [
            Atomicity::ContinueOnError,
            Atomicity::RollbackOnError,
            Atomicity::DataplaneAtomic,
        ]
        .into_iter()
        .enumerate()
        {
            let r = sw.write(
                &[
                    Change::Entry(Op::Insert, 0, entry(&sw, 8, "to_one")),
                    Change::Entry(Op::Modify, 0, entry(&sw, 7, "to_one")),
                ],
                atomicity,
            );
            assert!(r.iter().all(|r| r.is_ok()), "{i}: {r:?}");
            assert_eq!((port(7), port(8)), (1, 1), "{i}");
            sw.write_one(&Change::Entry(Op::Delete, 0, entry(&sw, 8, "to_one")))
                .unwrap();
            assert_eq!((port(7), port(8)), (1, 3), "{i}");
            sw.write_one(&Change::Entry(Op::Delete, 0, entry(&sw, 7, "to_one")))
                .unwrap();
            sw.specialise_now();
            assert!(!sw.spec_active(0));
            assert_eq!((port(7), port(8)), (3, 3), "{i}");
            sw.write_one(&Change::Entry(Op::Insert, 0, entry(&sw, 7, "to_two")))
                .unwrap();
            assert_eq!((port(7), port(8)), (2, 3), "{i}");
        }
        // A failed batch rolled back: the code is that of the table before it.
        let r = sw.write(
            &[
                Change::Entry(Op::Modify, 0, entry(&sw, 7, "to_one")),
                Change::Entry(Op::Delete, 0, entry(&sw, 9, "to_one")),
            ],
            Atomicity::RollbackOnError,
        );
        assert!(r.iter().all(|r| r.is_err()));
        assert_eq!((port(7), port(8)), (2, 3));
        // More than 16 entries: the general apply only.
        for k in 100..116 {
            sw.write_one(&Change::Entry(Op::Insert, 0, entry(&sw, k, "to_one")))
                .unwrap();
        }
        sw.specialise_now();
        assert!(!sw.spec_active(0));
        assert_eq!((port(7), port(115), port(8)), (2, 1, 3));
        sw.write_one(&Change::Entry(Op::Delete, 0, entry(&sw, 115, "to_one")))
            .unwrap();
        sw.specialise_now();
        assert_eq!(sw.spec_active(0), jit);
        assert_eq!((port(7), port(114), port(115)), (2, 1, 3));
        assert_eq!(sw.spec_compilations() > 0, jit);
        // Writes in quick succession (within `RESPEC_INTERVAL` the code is not compiled again
        // at once): packets see each write straight away all the same.
        for (k, action, want) in [(7, "to_one", 1), (7, "to_two", 2), (7, "to_one", 1)] {
            sw.write_one(&Change::Entry(Op::Modify, 0, entry(&sw, k, action)))
                .unwrap();
            assert_eq!(wk.process(&packet(k, 0), 0, 0).as_slice()[0].0, want);
        }
    }
}

/// The writer goes on until the workers have seen what the test needs (at least `min` rounds) or
/// this long has passed: on a loaded 2-core machine the workers may not run at all during a
/// fixed number of writes.
const DEADLINE: std::time::Duration = std::time::Duration::from_secs(60);

#[test]
fn modifies_between_two_actions_never_show_the_default() {
    let sw = switch();
    sw.write_one(&Change::Entry(Op::Insert, 0, entry(&sw, 7, "to_one")))
        .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let running = Arc::new(AtomicU64::new(0));
    // Outputs per port of all workers, published every 256 packets.
    let shared: Arc<[AtomicU64; 4]> = Arc::new(Default::default());
    let workers: Vec<_> = (0..2)
        .map(|w| {
            let (sw, stop, running, shared) =
                (sw.clone(), stop.clone(), running.clone(), shared.clone());
            std::thread::spawn(move || {
                let mut wk = Worker::new(sw, w);
                let mut seen = Seen::default();
                let mut published = Seen::default();
                let mut seq = 0u32;
                let pkt = packet(7, 0);
                while !stop.load(Ordering::Relaxed) {
                    if seq == 1000 {
                        running.fetch_add(1, Ordering::Relaxed);
                    }
                    seq = seq.wrapping_add(1);
                    for (port, _) in wk.process(&pkt, 0, u64::from(seq)).as_slice() {
                        seen.ports[(*port as usize).min(3)] += 1;
                    }
                    if seq.is_multiple_of(256) {
                        for p in 0..4 {
                            shared[p]
                                .fetch_add(seen.ports[p] - published.ports[p], Ordering::Relaxed);
                        }
                        published = seen;
                    }
                }
                seen
            })
        })
        .collect();
    // Both workers are running before the first modify.
    while running.load(Ordering::Relaxed) < 2 {
        std::thread::yield_now();
    }
    let start = std::time::Instant::now();
    let mut modifies = 0u64;
    // At least 20 000 modifies, and on until packets took both actions.
    while modifies < 20_000
        || (start.elapsed() < DEADLINE
            && (shared[1].load(Ordering::Relaxed) == 0 || shared[2].load(Ordering::Relaxed) == 0))
    {
        let act = if modifies.is_multiple_of(2) {
            "to_two"
        } else {
            "to_one"
        };
        sw.write_one(&Change::Entry(Op::Modify, 0, entry(&sw, 7, act)))
            .unwrap();
        modifies += 1;
    }
    stop.store(true, Ordering::Relaxed);
    let mut total = Seen::default();
    for w in workers {
        let s = w.join().unwrap();
        for p in 0..4 {
            total.ports[p] += s.ports[p];
        }
    }
    assert!(total.ports[1] > 0 && total.ports[2] > 0, "{total:?}");
    assert_eq!(
        total.ports[3], 0,
        "packets saw the default action during {modifies} modifies: {total:?}"
    );
}

#[test]
fn a_dataplane_atomic_batch_is_seen_whole_or_not_at_all() {
    let sw = switch();
    let keys: Vec<u32> = (0..1000).collect();
    let stop = Arc::new(AtomicBool::new(false));
    let running = Arc::new(AtomicU64::new(0));
    // Batches that saw every insert and batches that saw none, of all workers.
    let shared: Arc<[AtomicU64; 2]> = Arc::new(Default::default());
    let workers: Vec<_> = (0..2)
        .map(|w| {
            let (sw, stop, keys, running, shared) = (
                sw.clone(),
                stop.clone(),
                keys.clone(),
                running.clone(),
                shared.clone(),
            );
            std::thread::spawn(move || {
                let mut wk = Worker::new(sw, w);
                let mut mixed = 0u64;
                let mut batches = 0u64;
                let mut whole = 0u64;
                let mut round = 0usize;
                while !stop.load(Ordering::Relaxed) {
                    if round == 100 {
                        running.fetch_add(1, Ordering::Relaxed);
                    }
                    // 32 packets over keys spread through the whole batch of inserts.
                    let pkts: Vec<Packet> = (0..32)
                        .map(|i| {
                            let k = keys[(round * 32 + i * 31) % keys.len()];
                            Packet::from_bytes(&packet(k, i as u32), 0, 0)
                        })
                        .collect();
                    round += 1;
                    let (mut hit, mut miss) = (0, 0);
                    wk.process_batch(
                        &pkts,
                        |_| 0,
                        |_, out| {
                            for (port, _) in out.as_slice() {
                                if *port == 3 {
                                    miss += 1;
                                } else {
                                    hit += 1;
                                }
                            }
                        },
                    );
                    batches += 1;
                    if hit > 0 && miss > 0 {
                        mixed += 1;
                    }
                    if miss == 0 {
                        whole += 1;
                        shared[0].fetch_add(1, Ordering::Relaxed);
                    }
                    if hit == 0 {
                        shared[1].fetch_add(1, Ordering::Relaxed);
                    }
                }
                (mixed, batches, whole)
            })
        })
        .collect();
    while running.load(Ordering::Relaxed) < 2 {
        std::thread::yield_now();
    }
    let start = std::time::Instant::now();
    let mut round = 0;
    // At least 20 rounds, and on until some batches saw the whole write and some saw none of it.
    while round < 20
        || (start.elapsed() < DEADLINE
            && (shared[0].load(Ordering::Relaxed) == 0 || shared[1].load(Ordering::Relaxed) == 0))
    {
        round += 1;
        let changes: Vec<Change> = keys
            .iter()
            .map(|k| Change::Entry(Op::Insert, 0, entry(&sw, *k, "to_one")))
            .collect();
        let r = sw.write(&changes, Atomicity::DataplaneAtomic);
        assert!(r.iter().all(|x| x.is_ok()), "round {round}");
        assert_eq!(sw.table(0).unwrap().len(), keys.len());
        // Let the workers see the whole batch for a moment.
        std::thread::sleep(std::time::Duration::from_millis(1));
        let deletes: Vec<Change> = keys
            .iter()
            .map(|k| {
                let mut e = entry(&sw, *k, "to_one");
                e.action = None;
                Change::Entry(Op::Delete, 0, e)
            })
            .collect();
        let r = sw.write(&deletes, Atomicity::DataplaneAtomic);
        assert!(r.iter().all(|x| x.is_ok()));
        assert_eq!(sw.table(0).unwrap().len(), 0);
    }
    stop.store(true, Ordering::Relaxed);
    let (mut mixed, mut batches, mut whole) = (0, 0, 0);
    for w in workers {
        let (m, b, h) = w.join().unwrap();
        mixed += m;
        batches += b;
        whole += h;
    }
    assert!(
        whole > 0 && whole < batches,
        "{whole} of {batches} batches saw every insert"
    );
    assert_eq!(
        mixed, 0,
        "{mixed} of {batches} packet batches saw part of a dataplane-atomic write"
    );
}

#[test]
fn a_failed_rollback_batch_leaves_nothing_behind() {
    let sw = switch();
    sw.write_one(&Change::Entry(Op::Insert, 0, entry(&sw, 5, "to_one")))
        .unwrap();
    for atomicity in [Atomicity::RollbackOnError, Atomicity::DataplaneAtomic] {
        let changes = vec![
            Change::Entry(Op::Insert, 0, entry(&sw, 1, "to_one")),
            Change::Entry(Op::Modify, 0, entry(&sw, 5, "to_two")),
            Change::Entry(Op::Insert, 0, entry(&sw, 2, "to_one")),
            // Already there: the batch fails here.
            Change::Entry(Op::Insert, 0, entry(&sw, 1, "to_two")),
        ];
        let r = sw.write(&changes, atomicity);
        assert!(matches!(r[3], Err(ControlError::AlreadyExists(_))), "{r:?}");
        assert!(r[..3]
            .iter()
            .all(|x| matches!(x, Err(ControlError::Aborted(_)))));
        assert_eq!(sw.table(0).unwrap().len(), 1, "{atomicity:?}");
        let e = sw
            .read_entry(
                0,
                &EntryKey {
                    matches: vec![FieldMatch::Exact(5u32.to_be_bytes().to_vec())],
                    priority: 0,
                },
            )
            .unwrap();
        assert_eq!(
            e.action,
            EntryAction::Call(ActionCall {
                action: action(&sw, "to_one"),
                params: vec![]
            }),
            "the modify was undone"
        );
    }
    // Without atomicity, each update stands on its own.
    let changes = vec![
        Change::Entry(Op::Insert, 0, entry(&sw, 1, "to_one")),
        Change::Entry(Op::Insert, 0, entry(&sw, 1, "to_two")),
    ];
    let r = sw.write(&changes, Atomicity::ContinueOnError);
    assert!(r[0].is_ok() && matches!(r[1], Err(ControlError::AlreadyExists(_))));
    assert_eq!(sw.table(0).unwrap().len(), 2);
}

/// papers/002's d_data probe: after a modify, the first packet that uses the entry fires the
/// probe, under both engines.
#[test]
fn the_first_packet_after_a_modify_fires_the_update_probe() {
    for engine in [
        nevermiss_runtime::Engine::Jit,
        nevermiss_runtime::Engine::Interp,
    ] {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/p4/two-actions.p4");
        let config = Config {
            track_updates: true,
            engine,
            ..Config::default()
        };
        let sw = build(&path, &Default::default(), config).unwrap();
        sw.write_one(&Change::Entry(Op::Insert, 0, entry(&sw, 7, "to_one")))
            .unwrap();
        let mut wk = Worker::new(sw.clone(), 0);
        wk.process(&packet(7, 0), 0, 0);
        let _ = sw.take_update_probes(true);
        let mut fired = 0;
        for i in 0..20u32 {
            let act = if i % 2 == 0 { "to_two" } else { "to_one" };
            sw.write_one(&Change::Entry(Op::Modify, 0, entry(&sw, 7, act)))
                .unwrap();
            wk.process(&packet(7, i), 0, 0);
            fired += sw
                .take_update_probes(true)
                .iter()
                .filter(|p| p.seen_ns.is_some())
                .count();
        }
        assert_eq!(fired, 20, "{engine:?}");
    }
}
