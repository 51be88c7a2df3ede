//! The examples under examples/: their STF tests, the add-on-miss semantics the issue asks for
//! (two-phase workload, full table, expiry, data-plane updates), digests, and robustness
//! against random packets.

mod common;
use common::build;

use nevermiss_io::gen::{KeyField, TwoPhaseConfig, TwoPhaseGen, TwoPhaseKeys};
use nevermiss_io::Batch;
use nevermiss_runtime::{stf::run_stf, Config, Engine, Switch, Worker};
use p4_front::driver::Options;
use proptest::prelude::*;
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

fn example(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name)
}

fn switch(name: &str, config: Config) -> Arc<Switch> {
    build(&example(&format!("{name}.p4")), &Options::default(), config)
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Runs the example's STF test under both engines.
fn run_example(name: &str, config: Config) {
    for engine in [Engine::Jit, Engine::Interp] {
        let sw = switch(
            name,
            Config {
                engine,
                ..config.clone()
            },
        );
        let stf = example(&format!("{name}.stf"));
        let text = std::fs::read_to_string(&stf).unwrap();
        if let Err(e) = run_stf(sw, &text) {
            panic!("{} ({}): {e}", stf.display(), engine.name());
        }
    }
}

fn host_port_1() -> Config {
    Config {
        host_ports: vec![1],
        ..Config::default()
    }
}

#[test]
fn stf_pna_add_on_miss() {
    run_example("pna-add-on-miss", Config::default());
}

#[test]
fn stf_pna_forwarder() {
    run_example("pna-forwarder", Config::default());
}

#[test]
fn stf_pna_tcp_conntrack() {
    run_example("pna-tcp-conntrack", host_port_1());
}

#[test]
fn stf_v1model_l2_learning() {
    run_example("v1model-l2-learning", Config::default());
}

#[test]
fn stf_v1model_router() {
    run_example("v1model-router", Config::default());
}

/// The data-plane update example: the hit action writes its `@__ref` parameter back into the entry.
#[test]
fn stf_pna_dataplane_update() {
    run_example("pna-dataplane-update", Config::default());
}

/// Frame of the add-on-miss examples: Ethernet, IPv4 (src, dst), UDP, result (5 bytes).
fn aom_frame(src: u32, dst: u32) -> Vec<u8> {
    let mut f = hex("020000000002020000000001080045000021000000004011000000000000000000000040012b7000d00000000000000");
    f[26..30].copy_from_slice(&src.to_be_bytes());
    f[30..34].copy_from_slice(&dst.to_be_bytes());
    f
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

/// After the paper's two-phase workload the table holds exactly the distinct keys sent, each
/// inserted once (checked through the table's read interface and its counters).
#[test]
fn add_on_miss_two_phase_inserts_each_key_once() {
    let sw = switch("pna-add-on-miss", Config::default());
    let cfg = TwoPhaseConfig {
        m: 3000,
        r: 7,
        count: 12_000,
        field: KeyField {
            offset: 30,
            width: 4,
        },
        ..TwoPhaseConfig::default()
    };
    let keys: HashSet<u64> = TwoPhaseKeys::new(&cfg).unwrap().map(|e| e.key).collect();
    let mut gen = TwoPhaseGen::new(cfg.clone()).unwrap();
    let mut w = Worker::new(sw.clone(), 0);
    let mut batch = Batch::with_capacity(32);
    let mut n = 0u64;
    let mut outcomes = [0u64; 4];
    while !gen.is_done() {
        batch.clear();
        gen.fill(&mut batch);
        for p in batch.iter() {
            let out = w.process(p.data(), p.port, n * 1000);
            assert_eq!(out.len(), 1, "every packet goes back out");
            let (port, data) = &out.as_slice()[0];
            assert_eq!(*port, p.port);
            outcomes[usize::from(data[46]).min(3)] += 1;
            n += 1;
        }
    }
    assert_eq!(n, cfg.count);
    let t = &sw.table(0).unwrap();
    let stored: HashSet<u64> = t
        .iter()
        .iter()
        .map(|e| u64::from(u32::from_be_bytes([e.key[0], e.key[1], e.key[2], e.key[3]])))
        .collect();
    assert_eq!(stored, keys, "the table holds exactly the keys sent");
    let st = t.stats();
    assert_eq!(st.inserts, keys.len() as u64, "no key inserted twice");
    assert_eq!(st.inserts_full, 0);
    assert_eq!(st.hits, cfg.count - keys.len() as u64);
    assert_eq!(outcomes[2], keys.len() as u64);
    assert_eq!(outcomes[1], cfg.count - keys.len() as u64);
}

/// A full table: add_entry reports failure (outcome 3), the failure is counted, the packet
/// still goes out, and existing entries keep working.
#[test]
fn add_on_miss_full_table_fails_gracefully() {
    let opts = Options {
        defines: vec![("FLOW_TABLE_SIZE".into(), "4".into())],
        ..Options::default()
    };
    let sw = build(&example("pna-add-on-miss.p4"), &opts, Config::default()).unwrap();
    let mut w = Worker::new(sw.clone(), 0);
    let mut outcome = |src: u32, dst: u32| {
        let out = w.process(&aom_frame(src, dst), 0, 0);
        assert_eq!(out.len(), 1);
        let d = &out.as_slice()[0].1;
        (d[46], u32::from_be_bytes([d[42], d[43], d[44], d[45]]))
    };
    for k in 0..4 {
        assert_eq!(outcome(100 + k, k).0, 2);
    }
    assert_eq!(outcome(200, 10).0, 3);
    assert_eq!(outcome(201, 11).0, 3);
    assert_eq!(outcome(202, 2), (1, 102));
    let st = sw.table(0).unwrap().stats();
    assert_eq!((st.inserts, st.inserts_full), (4, 2));
    assert_eq!(sw.table(0).unwrap().len(), 4);
}

/// Data-plane updates: an `@__ref` parameter written by the hit action is stored back into
/// the entry (one atomic update per packet; the entry's version, which counts control-plane
/// modifies, stays). Exercised on the
/// add-on-miss program with its hit action made to increment its parameter.
#[test]
fn dataplane_update_semantics() {
    use p4_ir::{BinOp, Expr, Loc, Stmt, Ty};
    let mut prog = common::load(&example("pna-add-on-miss.p4"), &Options::default()).unwrap();
    let t = &mut prog.tables[0];
    let hit = t
        .actions
        .iter_mut()
        .find(|a| a.name.ends_with("flow_hit"))
        .unwrap();
    hit.params[0].is_ref = true;
    let slot = hit.params[0].slot;
    let f = hit.func as usize;
    prog.functions[f].body.insert(
        0,
        Stmt::Assign(
            Loc::at(slot),
            Ty::bits(32),
            Expr::Bin(
                BinOp::Add,
                Ty::bits(32),
                Box::new(Expr::Load(slot, Ty::bits(32))),
                Box::new(Expr::Const(1, Ty::bits(32))),
            ),
        ),
    );
    let sw = Arc::new(Switch::new(prog, Config::default()).unwrap());
    let mut w = Worker::new(sw.clone(), 0);
    let mut value = |src: u32| {
        let out = w.process(&aom_frame(src, 7), 0, 0);
        let d = &out.as_slice()[0].1;
        (d[46], u32::from_be_bytes([d[42], d[43], d[44], d[45]]))
    };
    assert_eq!(value(1000), (2, 0));
    assert_eq!(value(5), (1, 1001));
    assert_eq!(value(5), (1, 1002));
    assert_eq!(value(5), (1, 1003));
    let t = &sw.table(0).unwrap();
    let e = &t.iter()[0];
    assert_eq!(e.data.params.as_slice(), &1003u32.to_be_bytes());
    assert_eq!(e.version, 0);
    assert_eq!(t.stats().updates, 3);
}

/// TCP connection tracker: connections expire by their profile's idle time (AUTO_DELETE); an
/// ACK moves a connection to the established profile.
#[test]
fn conntrack_expiry_profiles() {
    let ms = 1_000_000u64;
    let sw = switch(
        "pna-tcp-conntrack",
        Config {
            host_ports: vec![1],
            expire_profiles_ns: Some(vec![1000 * ms, 5 * ms, 50 * ms, 2 * ms]),
            ..Config::default()
        },
    );
    let syn_out = hex("0200000000020200000000010800450000280000400040060000 0a000001c0000209 12340050 00000001 00000000 5002ffff 00000000".replace(' ', "").as_str());
    let synack_in = hex("0200000000010200000000020800450000280000400040060000 c00002090a000001 00501234 00000064 00000002 5012ffff 00000000".replace(' ', "").as_str());
    let ack_out = hex("0200000000020200000000010800450000280000400040060000 0a000001c0000209 12340050 00000002 00000065 5010ffff 00000000".replace(' ', "").as_str());
    let mut w = Worker::new(sw.clone(), 0);
    let t = &sw.table(0).unwrap();
    // Opened at t=0 with the NEW profile (5 ms): the answer at 3 ms gets through.
    assert_eq!(w.process(&syn_out, 1, 0).len(), 1);
    assert_eq!(w.process(&synack_in, 0, 3 * ms).as_slice()[0].0, 1);
    // The SYN+ACK (an ACK) set the ESTABLISHED profile (50 ms) at 3 ms.
    sw.expire(20 * ms);
    assert_eq!(
        t.len(),
        1,
        "established connections survive the new-connection timeout"
    );
    assert_eq!(w.process(&ack_out, 1, 30 * ms).len(), 1);
    // Idle for longer than 50 ms: deleted.
    sw.expire(200 * ms);
    assert_eq!(t.len(), 0);
    assert!(t.stats().expirations >= 1);
    assert_eq!(
        w.process(&synack_in, 0, 201 * ms).len(),
        0,
        "expired: dropped"
    );
    // A new connection that is never answered expires after 5 ms.
    assert_eq!(w.process(&syn_out, 1, 300 * ms).len(), 1);
    sw.expire(310 * ms);
    assert_eq!(t.len(), 0);
}

/// The L2 learning switch reports unknown source addresses with digests.
#[test]
fn l2_learning_sends_digests() {
    let sw = switch("v1model-l2-learning", Config::default());
    let mut w = Worker::new(sw.clone(), 0);
    w.process(&hex("00000000000b00000000000a08000102"), 3, 0);
    w.process(&hex("00000000000a00000000000b08000102"), 2, 0);
    let d = sw.take_digests();
    assert_eq!(d.len(), 2);
    // src_addr (48 bits) then port (9 bits): 57 bits, right-aligned in 8 bytes (as BMv2).
    let v = u64::from_be_bytes(d[0].data[..8].try_into().unwrap());
    assert_eq!(v, (0x0a << 9) | 3);
    let v = u64::from_be_bytes(d[1].data[..8].try_into().unwrap());
    assert_eq!(v, (0x0b << 9) | 2);
}

/// NOTIFY_CONTROL tables keep idle entries and notify the control plane.
#[test]
fn notify_control_notifies() {
    let src = std::fs::read_to_string(example("pna-add-on-miss.p4"))
        .unwrap()
        .replace(
            "add_on_miss = true;",
            "add_on_miss = true;\n        pna_idle_timeout = PNA_IdleTimeout_t.NOTIFY_CONTROL;",
        );
    let dir = std::env::temp_dir().join(format!("nevermiss-notify-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("notify.p4");
    std::fs::write(&p, src).unwrap();
    let sw = build(
        &p,
        &Options::default(),
        Config {
            expire_profiles_ns: Some(vec![1_000_000]),
            ..Config::default()
        },
    )
    .unwrap();
    let mut w = Worker::new(sw.clone(), 0);
    w.process(&aom_frame(1, 2), 0, 0);
    sw.expire(10_000_000);
    assert_eq!(
        sw.table(0).unwrap().len(),
        1,
        "NOTIFY_CONTROL keeps the entry"
    );
    let n = sw.take_notifications();
    assert_eq!(n.len(), 1);
    assert_eq!(n[0].entry.key, 2u32.to_be_bytes());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Timer restarts and `@__ref` updates in an AUTO_DELETE table (both without the entry's lock
/// where `membarrier(2)` exists; docs/tables.md): an entry hit within its idle time lives on
/// and counts its packets; left idle longer, the sweep deletes it, and its key's next packet
/// adds it again. Under both engines.
#[test]
fn restarted_timers_keep_entries_alive() {
    let ms = 1_000_000u64;
    let src = std::fs::read_to_string(example("pna-dataplane-update.p4"))
        .unwrap()
        .replace(
            "hdr.result.outcome = 1;\n    }",
            "hdr.result.outcome = 1;\n        restart_expire_timer();\n    }",
        )
        .replace(
            "add_on_miss = true;",
            "add_on_miss = true;\n        pna_idle_timeout = PNA_IdleTimeout_t.AUTO_DELETE;",
        );
    assert!(src.contains("restart_expire_timer();") && src.contains("AUTO_DELETE"));
    let dir = std::env::temp_dir().join(format!("nevermiss-restart-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("restart.p4");
    std::fs::write(&p, src).unwrap();
    for engine in [Engine::Jit, Engine::Interp] {
        let config = Config {
            engine,
            expire_profiles_ns: Some(vec![5 * ms]),
            ..Config::default()
        };
        let sw = build(&p, &Options::default(), config).unwrap();
        let t = sw.table(0).unwrap();
        let mut w = Worker::new(sw.clone(), 0);
        let mut send = |at: u64| {
            let out = w.process(&aom_frame(1, 7), 0, at);
            let d = &out.as_slice()[0].1;
            (d[46], u32::from_be_bytes([d[42], d[43], d[44], d[45]]))
        };
        let e = engine.name();
        assert_eq!(send(0), (2, 1), "{e}: added");
        for (i, at) in [3u64, 6, 9, 12].into_iter().enumerate() {
            assert_eq!(send(at * ms), (1, 2 + i as u32), "{e}: hit at {at} ms");
            sw.expire(at * ms + ms);
            assert_eq!(
                t.len(),
                1,
                "{e}: restarted at {at} ms, alive at {} ms",
                at + 1
            );
        }
        // Restarted last at 12 ms: deadline 17 ms.
        sw.expire(16 * ms);
        assert_eq!(t.len(), 1, "{e}: alive at 16 ms");
        sw.expire(18 * ms);
        assert_eq!(t.len(), 0, "{e}: idle past its deadline");
        assert_eq!(send(19 * ms), (2, 1), "{e}: added again");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

const EXAMPLES: &[&str] = &[
    "pna-add-on-miss",
    "pna-forwarder",
    "pna-tcp-conntrack",
    "v1model-l2-learning",
    "v1model-router",
];

fn all_switches() -> &'static Vec<Arc<Switch>> {
    static S: OnceLock<Vec<Arc<Switch>>> = OnceLock::new();
    S.get_or_init(|| {
        EXAMPLES
            .iter()
            .map(|n| {
                let sw = switch(n, host_port_1());
                // Some state so that table hits happen too.
                if let Ok(text) = std::fs::read_to_string(example(&format!("{n}.stf"))) {
                    let _ = run_stf(sw.clone(), &text);
                }
                sw
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Random bytes (and random corruptions of a valid frame) never make any example panic;
    /// outputs go to ports and are at most a little longer than the input.
    #[test]
    fn random_packets_never_panic(
        bytes in proptest::collection::vec(any::<u8>(), 0..160),
        port in 0u32..4,
        flip in proptest::collection::vec((0usize..64, any::<u8>()), 0..6),
    ) {
        let mut valid = aom_frame(0x0a000001, 0x0a000101);
        for (i, b) in &flip {
            if *i < valid.len() {
                valid[*i] ^= b;
            }
        }
        for sw in all_switches() {
            let mut w = Worker::new(sw.clone(), 7);
            for pkt in [&bytes, &valid] {
                let out = w.process(pkt, port, 1);
                for (_, d) in out.as_slice() {
                    prop_assert!(d.len() <= pkt.len() + 64);
                }
            }
        }
    }
}
