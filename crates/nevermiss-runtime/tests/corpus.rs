//! Every PNA and v1model program of the project's corpus (tests/p4/ok) runs random packets
//! without panicking.

mod common;

use nevermiss_runtime::{Config, Switch, Worker};
use std::path::PathBuf;
use std::sync::Arc;

#[test]
fn corpus_programs_run_random_packets() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/p4/ok");
    let mut ran = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let f = e.unwrap().path();
        if f.extension().and_then(|x| x.to_str()) != Some("p4") {
            continue;
        }
        let Ok(prog) = common::load(&f, &Default::default()) else {
            continue;
        };
        let Ok(sw) = Switch::new(prog, Config::default()) else {
            continue;
        };
        ran += 1;
        let mut w = Worker::new(Arc::new(sw), 3);
        let mut x: u64 = 0x1234_5678_9abc_def1;
        let mut buf = Vec::new();
        for i in 0..400u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            buf.clear();
            let mut y = x;
            for _ in 0..(x % 160) {
                y = y.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                buf.push((y >> 56) as u8);
            }
            if i % 2 == 0 && buf.len() > 24 {
                buf[12] = 0x08;
                buf[13] = 0x00;
                buf[14] = 0x45;
            }
            let out = w.process(&buf, (x >> 9) as u32 % 4, i);
            assert!(out.len() <= 64, "{}: runaway replication", f.display());
        }
    }
    assert!(ran >= 10, "only {ran} corpus programs ran");
}
