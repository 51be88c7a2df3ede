//! `Worker::process_batch` (parse a group, prefetch its tables, then run the controls) and
//! `Worker::process_batch_ahead` (the same, prefetching the next packets' headers) give the
//! same outputs and the same table contents as running the packets one by one — also when
//! packets of one batch insert and then hit the same key, or update the same entry; and the
//! interpreter, packet by packet, gives those outputs and contents too.

mod common;
use common::build;

use nevermiss_io::gen::{KeyField, TwoPhaseConfig, TwoPhaseGen};
use nevermiss_io::{Batch, Packet};
use nevermiss_runtime::{Config, Engine, Switch, Worker};
use p4_front::driver::Options;
use std::path::PathBuf;
use std::sync::Arc;

fn switch(name: &str) -> Arc<Switch> {
    switch_on(name, Engine::Jit)
}

fn switch_on(name: &str, engine: Engine) -> Arc<Switch> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(format!("{name}.p4"));
    let opts = Options {
        defines: vec![("FLOW_TABLE_SIZE".into(), "1024".into())],
        ..Options::default()
    };
    let config = Config {
        engine,
        ..Config::default()
    };
    build(&path, &opts, config).unwrap_or_else(|e| panic!("{e}"))
}

/// Generator frames with few keys (so a batch often carries one key several times), some
/// turned into TCP, some truncated or scrambled.
fn packets() -> Vec<Packet> {
    let cfg = TwoPhaseConfig {
        m: 300,
        r: 4,
        count: 3000,
        field: KeyField {
            offset: 30,
            width: 4,
        },
        ..TwoPhaseConfig::default()
    };
    let mut gen = TwoPhaseGen::new(cfg).unwrap();
    let mut b = Batch::with_capacity(64);
    let mut out = Vec::new();
    let mut x = 0x1234_5678_9abc_def0u64;
    while !gen.is_done() {
        b.clear();
        gen.fill(&mut b);
        for p in b.iter() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let mut d = p.data().to_vec();
            match x % 16 {
                0 => d[23] = 6,
                1 => {
                    let n = d.len();
                    d.truncate((x as usize >> 8) % n)
                }
                2 => {
                    let n = d.len();
                    d[(x as usize >> 8) % n] ^= (x >> 32) as u8
                }
                _ => {}
            }
            out.push(Packet::from_bytes(
                &d,
                (x >> 40) as u32 % 2,
                out.len() as u64 * 1000,
            ));
        }
    }
    out
}

fn entries(sw: &Switch) -> Vec<String> {
    let mut v: Vec<String> = sw
        .tables()
        .flat_map(|t| t.iter())
        .map(|e| format!("{e:?}"))
        .collect();
    v.sort();
    v
}

/// STF lines that give the exact tables of the v1model and PSA examples entries for some of the
/// IPv4 destinations (and Ethernet addresses) the packets carry, so batches hit and miss.
fn setup(name: &str, pkts: &[Packet]) -> String {
    let mut dsts: Vec<u32> = pkts
        .iter()
        .filter_map(|p| p.data().get(30..34))
        .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    dsts.sort_unstable();
    dsts.dedup();
    let mut out = String::new();
    for (i, d) in dsts
        .iter()
        .enumerate()
        .filter(|(i, _)| i % 2 == 0)
        .take(100)
    {
        let line = match name {
            "psa-host-routes" => format!(
                "add IngressImpl.hosts hdr.ipv4.dst_addr:{d} forward(port:{}, next_hop_mac:{})\n",
                i % 3 + 1,
                i
            ),
            "v1model-router" => format!(
                "add IngressImpl.ipv4_lpm hdr.ipv4.dst_addr:{d}/32 set_next_hop(next_hop:{}, port:{})\n",
                i % 2 + 1,
                i % 3 + 1
            ),
            _ => String::new(),
        };
        out.push_str(&line);
    }
    if name == "v1model-router" {
        out.push_str(
            "add IngressImpl.next_hop_mac meta.next_hop:1 set_dmac(dmac:0x0000000001aa)\n",
        );
        out.push_str(
            "add IngressImpl.next_hop_mac meta.next_hop:2 set_dmac(dmac:0x0000000002bb)\n",
        );
    }
    out
}

#[test]
fn batches_match_packet_by_packet() {
    let pkts = packets();
    for name in [
        "pna-add-on-miss",
        "pna-dataplane-update",
        "pna-tcp-conntrack",
        "pna-forwarder",
        "v1model-l2-learning",
        "v1model-router",
        "psa-host-routes",
    ] {
        let entries_stf = setup(name, &pkts);
        let one = switch(name);
        nevermiss_runtime::stf::run_stf(one.clone(), &entries_stf)
            .unwrap_or_else(|e| panic!("{e:?}"));
        let mut w = Worker::new(one.clone(), 0);
        let mut want = Vec::new();
        for p in &pkts {
            want.push(w.process(p.data(), p.port, p.ts_ns).as_slice().to_vec());
        }
        // The reference: the interpreter, packet by packet. The compiled engine's batch loops
        // (one set-up per batch, `PnaPass`) and its packets alone must give what it gives.
        let interp = switch_on(name, Engine::Interp);
        nevermiss_runtime::stf::run_stf(interp.clone(), &entries_stf)
            .unwrap_or_else(|e| panic!("{e:?}"));
        let mut wi = Worker::new(interp.clone(), 0);
        for (i, p) in pkts.iter().enumerate() {
            let o = wi.process(p.data(), p.port, p.ts_ns).as_slice().to_vec();
            assert_eq!(o, want[i], "{name}: packet {i}, interpreter against jit");
        }
        assert_eq!(
            entries(&interp),
            entries(&one),
            "{name}: table contents, interpreter"
        );
        // Batch 0: batches of changing sizes, so that a worker's batch states grow (and move)
        // after it set them up for generated code (`Exec::bind`).
        for batch in [32, 7, 100, 0] {
            let many = switch(name);
            nevermiss_runtime::stf::run_stf(many.clone(), &entries_stf)
                .unwrap_or_else(|e| panic!("{e:?}"));
            let mut w = Worker::new(many.clone(), 0);
            let mut got = Vec::new();
            let chunks: Vec<&[Packet]> = if batch > 0 {
                pkts.chunks(batch).collect()
            } else {
                let mut v = Vec::new();
                let mut rest = &pkts[..];
                for n in [2, 5, 33, 9, 64, 1, 3].into_iter().cycle() {
                    if rest.is_empty() {
                        break;
                    }
                    let (a, b) = rest.split_at(n.min(rest.len()));
                    v.push(a);
                    rest = b;
                }
                v
            };
            let mut start = 0;
            for (c, chunk) in chunks.into_iter().enumerate() {
                let base = got.len();
                // Told of none, one batch or two batches of the packets that follow (whose
                // headers it then prefetches): the same outputs.
                start += chunk.len();
                let rest = &pkts[start..];
                let ahead = &rest[..rest.len().min(c % 3 * chunk.len())];
                w.process_batch_ahead(
                    chunk,
                    ahead,
                    |p| p.ts_ns,
                    |i, outs| {
                        assert_eq!(i, got.len() - base, "outputs come in packet order");
                        got.push(outs.as_slice().to_vec());
                    },
                );
            }
            assert_eq!(got.len(), want.len());
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(g, w, "{name}, batch {batch}: packet {i}");
            }
            assert_eq!(
                entries(&many),
                entries(&one),
                "{name}, batch {batch}: table contents"
            );
        }
        if matches!(
            name,
            "pna-add-on-miss" | "pna-dataplane-update" | "psa-host-routes" | "v1model-l2-learning"
        ) {
            assert!(
                !one.prefetched_tables().is_empty(),
                "{name} prefetches its exact tables"
            );
        }
        if matches!(
            name,
            "pna-add-on-miss" | "pna-dataplane-update" | "psa-host-routes" | "v1model-router"
        ) {
            assert!(!entries(&one).is_empty(), "{name} has entries");
        }
        // Some packets hit, some miss: the batches exercised both.
        if name == "psa-host-routes" {
            let delivered = want.iter().filter(|o| !o.is_empty()).count();
            assert!(
                delivered > 100 && delivered < want.len() - 100,
                "{delivered}"
            );
        }
    }
}

/// `maintain` warms the insert path only while inserts are rare, through a shadow switch: the
/// real table is never touched.
#[test]
fn warming_leaves_the_real_switch_alone() {
    let sw = switch("pna-add-on-miss");
    let pkts = packets();
    let mut w = Worker::new(sw.clone(), 0);
    for p in &pkts[..600] {
        w.process(p.data(), p.port, p.ts_ns);
        w.maintain();
    }
    let before = entries(&sw);
    let stats = sw.table(0).unwrap().stats();
    let warmed = w.warmings();
    // Only hits from now on: replay the packets that hit.
    let mut hits = 0;
    for p in pkts[..600].iter().cycle().take(5000) {
        w.process(p.data(), p.port, p.ts_ns);
        if w.last_ops().contains(nevermiss_runtime::TableOps::HIT) {
            hits += 1;
        }
        w.maintain();
    }
    assert!(hits > 1000);
    assert!(
        w.warmings() > warmed + 10,
        "rare inserts: warmed {}",
        w.warmings()
    );
    assert_eq!(entries(&sw), before, "the real table is unchanged");
    let after = sw.table(0).unwrap().stats();
    assert_eq!(after.inserts, stats.inserts);
    assert_eq!(after.misses, stats.misses, "every replayed packet hit");
    // Switched off by the configuration.
    let cfg = Config {
        warm_insert_every: 0,
        ..Config::default()
    };
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/pna-add-on-miss.p4");
    let off = build(&path, &Options::default(), cfg).unwrap();
    let mut w = Worker::new(off, 0);
    for p in pkts[..600].iter().cycle().take(3000) {
        w.process(p.data(), p.port, p.ts_ns);
        w.maintain();
    }
    assert_eq!(w.warmings(), 0);
}
