//! `nevermiss bench` through the binary with tiny parameters: the Table III sections are
//! printed, the JSON parses and its packet counts add up to the two-phase workload, the
//! HdrHistogram logs decode, and bad flags exit 2 with a message. No timing is asserted.

use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_nevermiss"))
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("nevermiss-bench-cli-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

fn run(args: &[&str]) -> Output {
    bin()
        .arg("bench")
        .args(args)
        .output()
        .expect("run nevermiss")
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a u64: {v}"))
}

fn per_run(p: &Value, class: &str) -> Vec<u64> {
    p["classes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["class"] == class)
        .map(|c| {
            c["count_per_run"]
                .as_array()
                .unwrap()
                .iter()
                .map(u)
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn tiny_bench_report_json_and_logs() {
    let json = tmp("bench.json");
    let hdr = tmp("hdr");
    let o = run(&[
        "--quick",
        "--m",
        "2^10",
        "--count",
        "3000",
        "--rates",
        "10,100",
        "--sizes",
        "2^10,2^11",
        "--cores",
        "1",
        "--runs",
        "2",
        "--no-pin",
        "--quiet",
        "--json",
        json.to_str().unwrap(),
        "--hdr-dir",
        hdr.to_str().unwrap(),
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{out}\n{err}");
    for s in [
        "Table III (a) Operations",
        "insertion (phase 1)",
        "lookup (hit)",
        "update (hit + write)",
        "resolution",
        "Table III (b) Insertions with different rates",
        "r=10",
        "r=100",
        "throughput-optimized",
        "Eq. 3",
        "Eq. 4",
        "Table size sweep",
        "Table III on trimmed means",
    ] {
        assert!(out.contains(s), "missing `{s}` in:\n{out}");
    }

    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["schema"], 1);
    assert!(v["machine"]["tsc_hz"].as_f64().unwrap() > 0.0);
    assert!(u(&v["machine"]["nproc"]) >= 1);
    let m = 1024u64;
    let lat = v["latency"].as_array().unwrap();
    // baseline, add-on-miss and update operations, two rates, one extra size.
    assert_eq!(lat.len(), 6, "{lat:?}");
    let base = v["baseline_latency_ticks"].as_f64().unwrap();
    for p in lat {
        let (scen, r) = (p["scenario"].as_str().unwrap(), u(&p["r"]));
        let pm = u(&p["m"]);
        let phase2 = u(&p["phase2_packets"]);
        let new_keys = u(&p["new_keys"]);
        assert_eq!(u(&p["runs"]), 2);
        match scen {
            "forward" => {
                assert_eq!(per_run(p, "forward"), vec![pm + phase2; 2]);
                assert_eq!(p["classes"].as_array().unwrap().len(), 1);
            }
            "add-on-miss" => {
                // Phase 1: every packet an insert; phase 2: hits plus one new key every r-th.
                assert_eq!(per_run(p, "insert"), vec![pm; 2], "{p}");
                assert_eq!(new_keys, phase2.checked_div(r).unwrap_or(0));
                let nk = per_run(p, "new-key-insert");
                assert_eq!(nk, if r == 0 { vec![] } else { vec![new_keys; 2] });
                assert_eq!(per_run(p, "hit"), vec![phase2 - new_keys; 2]);
                let entries: Vec<u64> = p["table_entries_per_run"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(u)
                    .collect();
                assert_eq!(entries, vec![pm + new_keys; 2]);
            }
            "update" => {
                assert_eq!(pm, m);
                assert_eq!(per_run(p, "insert"), vec![m; 2]);
                assert_eq!(per_run(p, "hit-update"), vec![phase2; 2]);
                assert!(per_run(p, "hit").is_empty());
            }
            s => panic!("unexpected scenario {s}"),
        }
        for c in p["classes"].as_array().unwrap() {
            assert_ne!(c["class"], "insert-failed");
            assert_ne!(c["class"], "other");
            let count = u(&c["count"]);
            let sum: u64 = c["count_per_run"].as_array().unwrap().iter().map(u).sum();
            assert_eq!(count, sum);
            if scen != "forward" {
                // Eq. 4: class median minus the baseline median.
                let d = c["eq4_ticks"]["median"].as_f64().unwrap();
                let med = c["median_ticks"]["median"].as_f64().unwrap();
                assert!((d - (med - base)).abs() <= 1.0, "{c}");
                assert!(c["eq4_ns"]["median"].is_number());
                // The same on trimmed means: class − baseline, the interval around the value.
                let dt = &c["eq4_trimmed_ticks"];
                let (t, bt) = (
                    c["trimmed_ticks"]["value"].as_f64().unwrap(),
                    v["baseline_trimmed_ticks"]["value"].as_f64().unwrap(),
                );
                assert!(
                    (dt["value"].as_f64().unwrap() - (t - bt)).abs() < 1e-6,
                    "{c}"
                );
                assert!(dt["lo"].as_f64().unwrap() <= dt["value"].as_f64().unwrap());
                assert!(dt["hi"].as_f64().unwrap() >= dt["value"].as_f64().unwrap());
            }
            // A trimmed mean lies between the class's smallest and largest ticks.
            let t = c["trimmed_ticks"]["value"].as_f64().unwrap();
            assert!(t >= u(&c["merged"]["min"]) as f64 && t <= u(&c["merged"]["max"]) as f64);
            let pc = &c["merged"];
            assert!(u(&pc["median"]) <= u(&pc["p99"]));
            assert!(u(&pc["p99"]) <= u(&pc["p999"]));
            assert!(u(&pc["p999"]) <= u(&pc["max"]));
        }
    }
    // Table III's ratios, each a trimmed-mean delta over the lookup's, with its goal; only
    // those whose denominator's interval stays above zero are given.
    for r in v["table3_ratios"].as_array().unwrap() {
        let e = &r["estimate"];
        let (x, lo, hi) = (
            e["value"].as_f64().unwrap(),
            e["lo"].as_f64().unwrap(),
            e["hi"].as_f64().unwrap(),
        );
        assert!(lo <= x && x <= hi, "{r}");
        assert!(r["goal_max"].as_f64().unwrap() >= 1.1);
        let delta = |scen: &str, rate: u64, class: &str| {
            lat.iter()
                .find(|p| p["scenario"] == scen && u(&p["m"]) == m && u(&p["r"]) == rate)
                .and_then(|p| {
                    p["classes"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .find(|c| c["class"] == class)
                })
                .map(|c| c["eq4_trimmed_ticks"]["value"].as_f64().unwrap())
                .unwrap()
        };
        let want = match r["name"].as_str().unwrap() {
            "insert / lookup" => delta("add-on-miss", 0, "insert") / delta("add-on-miss", 0, "hit"),
            "update / lookup" => delta("update", 0, "hit-update") / delta("add-on-miss", 0, "hit"),
            "rare insert / insert" => {
                delta("add-on-miss", 100, "new-key-insert")
                    / delta("add-on-miss", 10, "new-key-insert")
            }
            other => panic!("unexpected ratio {other}"),
        };
        assert!((x - want).abs() < 1e-9, "{r}: want {want}");
    }
    let thr = v["throughput"].as_array().unwrap();
    // cores=1: forward, add-on-miss, update, two rates; size 2^11: forward and add-on-miss.
    assert_eq!(thr.len(), 7, "{thr:?}");
    for p in thr {
        let pm = u(&p["m"]);
        assert_eq!(u(&p["phase1_packets"]), pm);
        assert_eq!(u(&p["phase2_packets"]), 3000);
        assert_eq!(u(&p["cores"]), 1);
        assert!(p["pps_total"]["median"].as_f64().unwrap() > 0.0);
        let entries: Vec<u64> = p["table_entries_per_run"]
            .as_array()
            .unwrap()
            .iter()
            .map(u)
            .collect();
        if p["scenario"] == "forward" {
            assert!(p["eq3"].is_null());
            assert_eq!(entries, vec![0, 0]);
        } else {
            assert!(p["eq3"]["total"]["ticks"]["median"].is_number(), "{p}");
            assert_eq!(entries, vec![pm + u(&p["new_keys"]); 2]);
        }
    }

    // The logs: one per scenario × class, each interval a run, counts matching the JSON.
    let logs = v["hdr_logs"].as_array().unwrap();
    assert!(logs.len() >= 5, "{logs:?}");
    for l in logs {
        let f = hdr.join(l["file"].as_str().unwrap());
        let ivs = nevermiss_bench::hdr::read_log(&f).unwrap();
        assert_eq!(ivs.len() as u64, u(&l["intervals"]));
        let (scen, class) = (
            l["scenario"].as_str().unwrap(),
            l["class"].as_str().unwrap(),
        );
        let want: u64 = lat
            .iter()
            .filter(|p| p["scenario"] == scen)
            .map(|p| per_run(p, class).iter().sum::<u64>())
            .sum();
        let got: u64 = ivs.iter().map(|(_, h)| h.len()).sum();
        assert_eq!(got, want, "{scen}.{class}");
        assert!(ivs
            .iter()
            .all(|(t, _)| t.starts_with('m') && t.contains("-run")));
    }
    assert!(hdr.join("add-on-miss.insert.hlog").is_file());
    assert!(hdr.join("add-on-miss.new-key-insert.hlog").is_file());
    assert!(hdr.join("update.hit-update.hlog").is_file());
}

/// `--samples`: per-packet rows in packet order, every K-th packet of the first run of every
/// latency point plus the (thinned) phase-2 inserts; phase 1 holds inserts, phase 2 lookups
/// (hits, or hit-updates for the update program) and the new-key inserts at every r-th packet.
#[test]
fn samples_csv_holds_the_packets_in_order_with_their_phase_and_class() {
    let json = tmp("samples.json");
    let csv = tmp("samples.csv");
    let (every, max) = (13u64, 50u64);
    let o = run(&[
        "--mode",
        "latency",
        "--scenario",
        "all",
        "--m",
        "2^10",
        "--count",
        "3000",
        "--rates",
        "10,100",
        "--sizes",
        "2^10",
        "--new-keys",
        "10",
        "--runs",
        "2",
        "--no-pin",
        "--quiet",
        "--json",
        json.to_str().unwrap(),
        "--samples",
        csv.to_str().unwrap(),
        "--samples-every",
        &every.to_string(),
        "--samples-max",
        &max.to_string(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("scenario,m,r,index,phase,class,ticks"));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert!(rows.iter().all(|r| r.len() == 7), "{text}");
    assert_eq!(rows.len() as u64, u(&v["samples_rows"]));
    let lat = v["latency"].as_array().unwrap();
    // forward, add-on-miss and update operations, two rates.
    assert_eq!(lat.len(), 5);
    let mut seen = 0;
    let mut thinned = false;
    for p in lat {
        let scen = p["scenario"].as_str().unwrap();
        let (m, r) = (u(&p["m"]), u(&p["r"]));
        let packets = m + u(&p["phase2_packets"]);
        let mine: Vec<&Vec<&str>> = rows
            .iter()
            .filter(|x| x[0] == scen && x[1] == m.to_string() && x[2] == r.to_string())
            .collect();
        seen += mine.len();
        let idx: Vec<u64> = mine.iter().map(|x| x[3].parse().unwrap()).collect();
        assert!(
            idx.windows(2).all(|w| w[0] < w[1]),
            "{scen} r={r}: not in order"
        );
        assert!(idx.iter().all(|&i| i < packets));
        // Every K-th packet is there.
        let strided = idx.iter().filter(|&&i| i % every == 0).count() as u64;
        assert_eq!(strided, packets.div_ceil(every), "{scen} r={r}");
        let new_keys = u(&p["new_keys"]);
        let rare = mine.iter().filter(|x| x[5] == "new-key-insert").count() as u64;
        let off_stride = mine.len() as u64 - strided;
        if r == 0 {
            assert_eq!(rare, 0);
            assert_eq!(off_stride, 0, "{scen}: only the stride without inserts");
        } else if new_keys > max {
            // Thinned evenly to at most `max` (plus those the stride keeps anyway).
            thinned = true;
            let kept = new_keys.div_ceil(new_keys.div_ceil(max));
            assert!(kept <= max);
            assert!(
                rare >= kept && rare <= kept + strided,
                "r={r}: {rare} of {new_keys}"
            );
            assert!(off_stride <= kept);
        } else {
            // Few enough: every one.
            assert_eq!(rare, new_keys, "r={r}");
        }
        for x in &mine {
            let (i, phase, class) = (x[3].parse::<u64>().unwrap(), x[4], x[5]);
            assert!(x[6].parse::<u64>().unwrap() > 0, "{x:?}");
            assert_eq!(phase, if i < m { "1" } else { "2" }, "{x:?}");
            let want = match (scen, phase) {
                ("forward", _) => "forward",
                (_, "1") => "insert",
                ("update", _) => "hit-update",
                _ if r > 0 && (i - m) % r == r - 1 => "new-key-insert",
                _ => "hit",
            };
            assert_eq!(class, want, "{scen} r={r} {x:?}");
        }
        let classes: std::collections::BTreeSet<&str> = mine.iter().map(|x| x[5]).collect();
        let want: &[&str] = match (scen, r) {
            ("forward", _) => &["forward"],
            ("update", _) => &["hit-update", "insert"],
            (_, 0) => &["hit", "insert"],
            _ => &["hit", "insert", "new-key-insert"],
        };
        assert_eq!(
            classes.into_iter().collect::<Vec<_>>(),
            want,
            "{scen} r={r}"
        );
    }
    assert_eq!(seen, rows.len(), "rows of no point");
    assert!(thinned, "r=10 has 300 new keys, more than --samples-max");
}

#[test]
fn bad_flags_exit_2_with_a_message() {
    let cases: &[(&[&str], &str)] = &[
        (&["--rates", "0"], "rate"),
        (&["--m", "100"], "2^10..2^22"),
        (&["--m", "2^23"], "2^10..2^22"),
        (&["--sizes", "3000"], "powers of two"),
        (&["--cores", "0"], "at least 1"),
        (&["--cores", "4096"], "cpus are available"),
        (&["--runs", "0"], "--runs"),
        (&["--batch", "0"], "--batch"),
        (&["--scenario", "nope"], "unknown scenario"),
        (&["--m", "lots"], "not a number"),
        (&["--program", "/nonexistent/prog.p4"], "no such file"),
        (&["--json", "/nonexistent-dir/x/out.json"], "--json"),
        (
            &["--hdr-dir", "/proc/nevermiss-bench"],
            "/proc/nevermiss-bench",
        ),
        (&["--samples", "/nonexistent-dir/s.csv"], "--samples"),
        (
            &["--samples", "s.csv", "--samples-every", "0"],
            "at least 1",
        ),
        (&["--samples-max", "5"], "--samples"),
        (
            &[
                "--mode",
                "throughput",
                "--samples",
                "s.csv",
                "--samples-every",
                "3",
            ],
            "latency mode",
        ),
    ];
    for (args, want) in cases {
        let mut a = vec!["--quick", "--quiet", "--runs", "1", "--count", "100"];
        a.extend_from_slice(args);
        let o = run(&a);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("error"), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: want `{want}` in {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn bench_p4rt_inserts_and_modifies_through_the_server() {
    let json = tmp("p4rt.json");
    let o = run(&[
        "p4rt",
        "--inserts",
        "300",
        "--batches",
        "1,100",
        "--in-flight",
        "3",
        "--modifies",
        "40",
        "--rate",
        "20000",
        "--runs",
        "1",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(text.contains("3 Writes in flight"), "{text}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let inserts = v["inserts"].as_array().unwrap();
    assert_eq!(inserts.len(), 2);
    for r in inserts {
        assert_eq!(u(&r["entries"]), 300);
        assert_eq!(u(&r["in_flight"]), 3);
        assert!(r["entries_per_s"].as_f64().unwrap() > 0.0);
    }
    assert_eq!(u(&v["modifies"]), 40);
    assert_eq!(u(&v["packets_dropped"]), 0, "a modify is atomic");
    for (args, want) in [
        (vec!["p4rt", "--in-flight", "0"], "--in-flight"),
        (vec!["p4rt", "--batches", "0"], "--batches"),
        (vec!["p4rt", "--rate", "x"], "--rate"),
    ] {
        let o = run(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

/// `bench p4rt --hdr-dir`: one log per measure, one tagged interval per run, as many values as
/// the JSON counts (every modify's d_control and Write latency, every single-update insert).
#[test]
fn bench_p4rt_writes_hdr_logs() {
    let json = tmp("p4rt-hdr.json");
    let dir = tmp("p4rt-hdr");
    let o = run(&[
        "p4rt",
        "--inserts",
        "150",
        "--batches",
        "1,10",
        "--modifies",
        "30",
        "--rate",
        "20000",
        "--runs",
        "2",
        "-q",
        "--json",
        json.to_str().unwrap(),
        "--hdr-dir",
        dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let n = |key: &str| u(&v[key]["n"]);
    let want = [
        ("modify.d_control.hlog", n("d_control_ns")),
        ("modify.d_data.hlog", n("d_data_ns")),
        ("modify.d_all.hlog", n("d_all_ns")),
        ("modify.write.hlog", n("modify_latency_ns")),
        ("insert.write.hlog", n("write_latency_ns")),
    ];
    assert_eq!(n("d_control_ns"), 60, "30 modifies × 2 runs");
    assert_eq!(n("modify_latency_ns"), 60);
    assert_eq!(n("write_latency_ns"), 300, "150 single inserts × 2 runs");
    let logs = v["hdr_logs"].as_array().unwrap();
    assert_eq!(logs.len(), want.len(), "{logs:?}");
    for (file, count) in want {
        let ivs = nevermiss_bench::hdr::read_log(&dir.join(file)).unwrap();
        assert_eq!(ivs.len(), 2, "{file}: one interval per run");
        let prefix = if file.starts_with("insert") {
            "batch1-run"
        } else {
            "run"
        };
        assert!(ivs.iter().all(|(t, _)| t.starts_with(prefix)), "{file}");
        let got: u64 = ivs.iter().map(|(_, h)| h.len()).sum();
        assert_eq!(got, count, "{file}");
        let l = logs.iter().find(|l| l["file"] == file).unwrap();
        assert_eq!(u(&l["values"]), count);
        assert_eq!(u(&l["intervals"]), 2);
    }
    // Delays are positive nanoseconds (d_all includes d_control).
    let all = nevermiss_bench::hdr::read_log(&dir.join("modify.d_all.hlog")).unwrap();
    assert!(all.iter().all(|(_, h)| h.is_empty() || h.max() > 0));
    // Several Writes in flight: no per-Write insert latency, so no insert log.
    let dir2 = tmp("p4rt-hdr-inflight");
    let o = run(&[
        "p4rt",
        "--inserts",
        "50",
        "--batches",
        "1",
        "--in-flight",
        "2",
        "--modifies",
        "5",
        "--rate",
        "20000",
        "--runs",
        "1",
        "-q",
        "--hdr-dir",
        dir2.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(dir2.join("modify.d_control.hlog").is_file());
    assert!(!dir2.join("insert.write.hlog").exists());
    // An unusable directory fails before measuring, exit 2 naming it.
    let file = tmp("p4rt-not-a-dir");
    std::fs::write(&file, b"x").unwrap();
    let o = run(&["p4rt", "--hdr-dir", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("p4rt-not-a-dir"));
}

/// `bench component`: any program against the baseline on the same packets; entries are
/// loaded before every run; the JSON holds both sides; bad entries and bad specs exit 2.
#[test]
fn bench_component_measures_a_program_against_the_baseline() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let prog = root.join("examples/pna-forwarder.p4");
    let entries = root.join("examples/pna-forwarder.entries");
    let json = tmp("component.json");
    let hdr = tmp("component-hdr");
    let out = run(&[
        "component",
        prog.to_str().unwrap(),
        "--entries",
        entries.to_str().unwrap(),
        "--gen",
        "two-phase,m=64,count=3000",
        "--runs",
        "2",
        "--no-pin",
        "-q",
        "--json",
        json.to_str().unwrap(),
        "--hdr-dir",
        hdr.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("Eq. 4 cost") && text.contains("Eq. 3 cost"),
        "{text}"
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(u(&v["schema"]), 1);
    // Two entries loaded into the program's lpm table, none into the forwarder.
    assert_eq!(u(&v["program"]["table_entries"]), 2);
    assert_eq!(u(&v["baseline"]["table_entries"]), 0);
    assert_eq!(u(&v["program"]["packets_per_run"]), 3000);
    for side in ["program", "baseline"] {
        assert!(v[side]["latency_median_ticks"]["median"].as_f64().unwrap() > 0.0);
        assert!(v[side]["pps"]["median"].as_f64().unwrap() > 0.0);
    }
    assert!(v["eq4_ticks"]["median"].is_number());
    assert!(v["eq3_ticks"]["median"].is_number());
    for f in ["program.packet.hlog", "baseline.packet.hlog"] {
        let h = hdr.join(f);
        let body = std::fs::read_to_string(&h).unwrap();
        assert_eq!(
            body.lines().filter(|l| l.starts_with("Tag=run")).count(),
            2,
            "{body}"
        );
    }

    // An entry naming a table the program lacks: exit 2 naming the file and line.
    let bad = tmp("bad.entries");
    std::fs::write(&bad, "add NoSuch.table k:1 a()\n").unwrap();
    let out = run(&[
        "component",
        prog.to_str().unwrap(),
        "--entries",
        bad.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.entries:1"), "{err}");
    let out = run(&[
        "component",
        prog.to_str().unwrap(),
        "--gen",
        "two-phase,size=7",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--gen"));
}

/// `bench learn`: both variants run through the in-process server and controller. What is
/// guaranteed (and asserted): with one worker processing a flow's packets in order and a table
/// sized for every flow, add-on-miss misses exactly once per flow (its first packet inserts
/// the entry; entries never expire); the digest variant misses at least once per flow (the
/// first packet's digest cannot have been answered yet), and every flow's entry exists once
/// the controller has drained its lists. How many packets the controller's round trip costs
/// depends on the machine and is not asserted.
#[test]
fn bench_learn_add_on_miss_and_digest() {
    let json = tmp("learn.json");
    let hdr = tmp("learn-hdr");
    let flows = 40u64;
    let runs = 2u64;
    let o = run(&[
        "learn",
        "--flows",
        &flows.to_string(),
        "--flow-rate",
        "400",
        "--packets",
        "12",
        "--interval",
        "2ms",
        "--tick",
        "5ms",
        "--runs",
        &runs.to_string(),
        "-q",
        "--json",
        json.to_str().unwrap(),
        "--hdr-dir",
        hdr.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.stderr.is_empty(), "-q prints no progress");
    for s in [
        "add-on-miss (",
        "digest (",
        "time to first hit",
        "digest / add-on-miss",
    ] {
        assert!(text.contains(s), "`{s}` missing in\n{text}");
    }
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(u(&v["flows"]), flows);
    let variants = v["variants"].as_array().unwrap();
    assert_eq!(variants.len(), 2);
    let (aom, dig) = (&variants[0], &variants[1]);
    assert_eq!(aom["variant"], "add-on-miss");
    assert_eq!(dig["variant"], "digest");
    for r in variants {
        assert_eq!(u(&r["flows"]), flows * runs);
        assert_eq!(u(&r["packets"]), flows * runs * 12);
        assert_eq!(
            u(&r["flows_hit_at_end"]),
            flows * runs,
            "every flow hits: {r}"
        );
        assert_eq!(u(&r["misses_after_first_hit"]), 0, "{r}");
        assert_eq!(r["runs"].as_array().unwrap().len(), runs as usize);
        // The histogram covers every flow and adds up to the misses.
        let h = r["misses_histogram"].as_array().unwrap();
        let n: u64 = h.iter().map(|x| u(&x[1])).sum();
        let m: u64 = h.iter().map(|x| u(&x[0]) * u(&x[1])).sum();
        assert_eq!((n, m), (flows * runs, u(&r["misses"])), "{r}");
    }
    // Add-on-miss: exactly one miss per flow, and its next packet (one interval later) hits.
    assert_eq!(
        aom["misses_histogram"],
        serde_json::json!([[1, flows * runs]])
    );
    assert_eq!(u(&aom["insert_failures"]), 0);
    assert_eq!(u(&aom["flows_without_hit"]), 0);
    let ttfh = &aom["time_to_first_hit_ns"];
    assert_eq!((u(&ttfh["p50"]), u(&ttfh["max"])), (2_000_000, 2_000_000));
    assert_eq!(u(&aom["time_to_entry_ns"]["n"]), flows * runs);
    assert!(aom["digest"].is_null());
    // Digest: at least one miss per flow; every flow's entry inserted exactly once, the other
    // digests of a flow refused as ALREADY_EXISTS.
    let h = dig["misses_histogram"].as_array().unwrap();
    assert!(u(&h[0][0]) >= 1, "{h:?}");
    let d = &dig["digest"];
    assert_eq!(u(&d["entries_inserted"]), flows * runs, "{d}");
    assert_eq!(u(&d["other_errors"]), 0, "{d}");
    assert_eq!(u(&d["unknown_keys"]), 0, "{d}");
    assert_eq!(u(&d["digests_packed"]), u(&dig["misses"]));
    assert!(u(&d["digests_received"]) <= u(&d["digests_packed"]), "{d}");
    assert_eq!(
        u(&d["entries_inserted"]) + u(&d["already_exists"]),
        u(&d["digests_received"]),
        "{d}"
    );
    assert!(u(&d["lists_received"]) >= flows * runs && u(&d["writes"]) >= flows * runs);
    assert_eq!(u(&d["write_latency_ns"]["n"]), u(&d["writes"]));
    // Every flow that hit took at least one interval per miss before.
    let t = &dig["time_to_first_hit_ns"];
    assert!(
        u(&t["p50"]) >= 2_000_000 && u(&t["p50"]).is_multiple_of(2_000_000),
        "{t}"
    );
    // The logs: one interval per run.
    for (variant, measures) in [
        (
            "add-on-miss",
            &["misses", "time-to-first-hit", "time-to-entry"][..],
        ),
        (
            "digest",
            &[
                "misses",
                "time-to-first-hit",
                "time-to-entry",
                "digest-wait",
                "write-latency",
            ][..],
        ),
    ] {
        for m in measures {
            let p = hdr.join(format!("{variant}.{m}.hlog"));
            let log = nevermiss_bench::hdr::read_log(&p).unwrap();
            assert_eq!(log.len(), runs as usize, "{}", p.display());
            assert_eq!(log[0].0, "rate400-run0");
        }
    }
    let aom_misses = nevermiss_bench::hdr::read_log(&hdr.join("add-on-miss.misses.hlog")).unwrap();
    assert!(aom_misses
        .iter()
        .all(|(_, h)| h.len() == flows && h.max() == 1));
}

#[test]
fn bench_learn_bad_flags_exit_2() {
    for (args, want) in [
        (vec!["learn", "--variant", "both,x"], "unknown variant"),
        (vec!["learn", "--flows", "0"], "--flows"),
        (vec!["learn", "--flows", "2^21"], "--flows"),
        (vec!["learn", "--flow-rate", "fast"], "--flow-rate"),
        (vec!["learn", "--interval", "0"], "--interval"),
        (vec!["learn", "--interval", "10parsecs"], "--interval"),
        (vec!["learn", "--tick", "100us"], "--tick"),
        (vec!["learn", "--max-list-size", "-1"], "--max-list-size"),
        (vec!["learn", "--packets", "2^20"], "packets per run"),
        (vec!["learn", "--interval", "60s"], "a run would last"),
        (vec!["learn", "--json", "/nonexistent-dir/x.json"], "--json"),
        (
            vec!["learn", "--hdr-dir", "/proc/nevermiss-learn"],
            "--hdr-dir",
        ),
    ] {
        let o = run(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: want `{want}` in {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
}
