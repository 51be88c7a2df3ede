//! Checks against the paper's definitions on synthetic traces (reference A.5, A.9).

use nevermiss_sim::model::{schedule, ModelConfig};
use nevermiss_sim::sweep::{self, Prepared};
use nevermiss_sim::synth::{SizePmf, SynthSpec};
use nevermiss_sim::{HashMode, KeySpec, LockConfig, TraceSource};
use std::path::PathBuf;

/// The packet-size distributions shipped in the repository (`data/trace-stats`).
fn trace_stats() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/trace-stats")
}

fn pmf_files() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(trace_stats())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "dat"))
        .collect();
    v.sort();
    assert!(
        v.len() >= 6,
        "expected the paper's distributions, found {v:?}"
    );
    v
}

#[test]
fn fdh_plateau_is_one_over_mean_read_cycles() {
    // Global key, N >= 20: every packet of <= 1520 B is a hazard, so FDH (hazard cycles over
    // cycles) = packets / cycles = 1 / mean(ceil(len/80)).
    for f in pmf_files() {
        let pmf = SizePmf::load(&f).unwrap();
        let expect = 1.0 / pmf.mean_cycles(80);
        let spec = SynthSpec {
            sizes: nevermiss_sim::synth::SizeSource::Dist(f.clone()),
            flows: 1000,
            packets: 500_000,
            seed: 11,
            ..Default::default()
        };
        let t = spec
            .generate("t", &[KeySpec::Global], HashMode::Crc16)
            .unwrap();
        let p = Prepared::new(t, &ModelConfig::default());
        assert_eq!(p.schedule.batches.len(), 5);
        let b = sweep::run_hazards(&[p], &KeySpec::Global, HashMode::Crc16, 30, &|_| {});
        let rows = sweep::hazard_rows(&KeySpec::Global, &b, 30);
        for r in &rows[19..] {
            let got = r.fdh_p99.unwrap();
            assert!(
                (got - expect).abs() / expect < 0.01,
                "{}: N={} fdh {got} expected {expect}",
                f.display(),
                r.n
            );
        }
        // N = 1 never has a hazard
        assert_eq!(rows[0].fdh_p99, Some(0.0));
    }
}

fn mix_file() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nevermiss-sim-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("mix.dat");
    // 40 % minimum-size, 60 % 1500 B: mean read cycles 0.4 + 0.6 * 19 = 11.8
    std::fs::write(&f, "# test mix\n64 0.4\n1500 0.6\n").unwrap();
    f
}

#[test]
fn infinite_queue_throughput_follows_mean_cycles_over_n() {
    let f = mix_file();
    let mean = SizePmf::load(&f).unwrap().mean_cycles(80);
    let src: TraceSource = format!(
        "synthetic:dist={},flows=500,packets=400000,seed=5",
        f.display()
    )
    .parse()
    .unwrap();
    let t = src.load(&[KeySpec::Global], HashMode::Crc16).unwrap();
    let p = [Prepared::new(t, &ModelConfig::default())];
    for n in 1..=30u32 {
        let cfg = LockConfig {
            n,
            queues: 4,
            qlen: None,
            w_bits: 4,
        };
        let b = sweep::run_lock(&p, &KeySpec::Global, &cfg, &|_| {});
        let row = sweep::lock_row(&KeySpec::Global, &cfg, &b);
        let got = row.thrpt_min.unwrap();
        let expect = (mean / f64::from(n)).min(1.0);
        // Near the knee (N close to the mean read cycles) queueing noise lowers the minimum.
        let tol = if (f64::from(n) - mean).abs() < 2.0 {
            0.05
        } else {
            0.01
        };
        assert!(
            (got - expect).abs() <= tol,
            "N={n}: throughput {got}, expected {expect}"
        );
        assert_eq!(row.drop_max, Some(0.0));
    }
}

#[test]
fn pcap_round_trip_gives_identical_results() {
    let f = mix_file();
    let spec: SynthSpec = format!(
        "dist={},flows=300,zipf=1.1,packets=20000,seed=9,dsts=50",
        f.display()
    )
    .parse()
    .unwrap();
    let keys = nevermiss_sim::keys::paper_keys();
    let mem = spec.generate("m", &keys, HashMode::Exact).unwrap();
    let out = f.with_file_name("rt.pcap");
    assert_eq!(spec.write_pcap(&out).unwrap(), 20_000);
    let disk = TraceSource::Files(vec![out.clone()])
        .load(&keys, HashMode::Exact)
        .unwrap();
    assert_eq!(mem.lens, disk.lens);
    assert_eq!(mem.ts_ns, disk.ts_ns);
    for (a, b) in mem.keys.iter().zip(&disk.keys) {
        assert_eq!(a.crc, b.crc, "{}", a.spec);
        assert_eq!(a.distinct, b.distinct, "{}", a.spec);
    }
    assert_eq!(disk.stats.kept, 20_000);
    let mut m = ModelConfig::default();
    m.batch.size = 5000;
    let s = schedule(&mem, &m);
    assert_eq!(s.batches.len(), 4);
}
