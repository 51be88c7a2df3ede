//! Every subcommand with random flag values from each flag's domain and just outside it, and
//! with its standard output closed early (issue 9): never exit 101, never a panic message; a
//! value outside the domain is exit 2 with a message naming the flag; a value inside it runs.

use proptest::prelude::*;
use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn ex(name: &str) -> String {
    root().join("examples").join(name).display().to_string()
}

/// A small trace for the simulator's commands (made once).
fn trace() -> &'static str {
    static T: OnceLock<String> = OnceLock::new();
    T.get_or_init(|| {
        let p = std::env::temp_dir().join(format!("nevermiss-flags-{}.pcap", std::process::id()));
        let o = Command::new(env!("CARGO_BIN_EXE_nevermiss"))
            .args([
                "sim",
                "gen",
                "--size",
                "64",
                "--flows",
                "500",
                "--packets",
                "3000",
            ])
            .arg("-o")
            .arg(&p)
            .output()
            .unwrap();
        assert!(o.status.success());
        p.display().to_string()
    })
}

/// A subcommand that finishes in well under a second, and a flag of it.
struct Case {
    base: Vec<String>,
    flag: &'static str,
    /// How the flag is named in messages (clap uses the long name).
    named: &'static str,
}

fn case(base: &[&str], flag: &'static str, named: &'static str) -> Case {
    Case {
        base: base.iter().map(|s| s.to_string()).collect(),
        flag,
        named,
    }
}

fn run_base() -> Vec<String> {
    vec![
        "run".into(),
        ex("pna-add-on-miss.p4"),
        "--port".into(),
        "0=gen:two-phase,m=64,r=1,count=100".into(),
    ]
}

/// (case, values inside the domain, values just outside it).
fn cases() -> Vec<(Case, BoxedStrategy<String>, BoxedStrategy<String>)> {
    let run: Vec<String> = run_base();
    let run: Vec<&str> = run.iter().map(String::as_str).collect();
    let mut run_cores = run.clone();
    run_cores.extend(["--cores", "1", "--no-pin"]);
    let aom = ex("pna-add-on-miss.p4");
    let aom_stf = ex("pna-add-on-miss.stf");
    let stf = ["stf", aom.as_str(), aom_stf.as_str()];
    let t = trace();
    let lock = ["sim", "lock", "-t", t, "-N", "4", "--batch", "1000"];
    let hazards = ["sim", "hazards", "-t", t, "--batch", "1000"];
    let gen_out = std::env::temp_dir()
        .join(format!("nevermiss-flags-gen-{}.pcap", std::process::id()))
        .display()
        .to_string();
    let gen = [
        "sim",
        "gen",
        "--size",
        "64",
        "--packets",
        "100",
        "-o",
        gen_out.as_str(),
    ];
    let bench = ["bench", "--quick", "--mode", "latency", "-q"];
    let num = |r: std::ops::RangeInclusive<u64>| r.prop_map(|n| n.to_string()).boxed();
    let words =
        |w: &'static [&'static str]| proptest::sample::select(w).prop_map(str::to_string).boxed();
    let junk = || "[a-z]{1,6}".prop_map(|s| format!("{s}x")).boxed();
    vec![
        (
            case(&run, "--batch", "--batch"),
            num(1..=256),
            prop_oneof![
                Just("0".to_string()),
                num(257..=100_000),
                Just("-1".into()),
                junk()
            ]
            .boxed(),
        ),
        (
            case(&run, "--max-packets", "--max-packets"),
            num(1..=1_000_000),
            prop_oneof![
                Just("0".to_string()),
                Just("-5".into()),
                Just("2^63".into()),
                junk()
            ]
            .boxed(),
        ),
        (
            case(&run, "--stats-every", "--stats-every"),
            (1u64..5000).prop_map(|n| format!("{n}ms")).boxed(),
            prop_oneof![
                Just("0".to_string()),
                Just("0ms".into()),
                Just("-1s".into()),
                Just("3parsecs".into())
            ]
            .boxed(),
        ),
        (
            case(&run, "--tick", "--tick"),
            (1u64..100).prop_map(|n| format!("{n}us")).boxed(),
            prop_oneof![Just("0ns".to_string()), junk()].boxed(),
        ),
        (
            case(&run, "--host-port", "--host-port"),
            num(0..=u64::from(u32::MAX)),
            prop_oneof![Just("-1".to_string()), Just("4294967296".into()), junk()].boxed(),
        ),
        (
            case(&run, "--expire-profile", "--expire-profile"),
            (0u64..256, 1u64..100_000)
                .prop_map(|(i, d)| format!("{i}={d}ms"))
                .boxed(),
            prop_oneof![
                num(256..=1000).prop_map(|i| format!("{i}=1s")).boxed(),
                Just("1=".to_string()).boxed(),
                Just("1=0s".to_string()).boxed(),
                junk()
            ]
            .boxed(),
        ),
        (
            case(&run, "--prefetch-tables", "--prefetch-tables"),
            num(0..=8),
            prop_oneof![Just("-1".to_string()), junk()].boxed(),
        ),
        (
            case(&run, "--clock", "--clock"),
            words(&["wall", "packet"]),
            junk(),
        ),
        (
            case(&run_cores, "--rss", "--rss"),
            words(&[
                "default",
                "ipv4.src",
                "ipv4.src,ipv4.dst",
                "l4.dst",
                "@26:4",
            ]),
            prop_oneof![Just("ipv9.src".to_string()), Just("@3".into()), junk()].boxed(),
        ),
        (
            case(&stf, "--host-port", "--host-port"),
            num(0..=100),
            prop_oneof![Just("-1".to_string()), junk()].boxed(),
        ),
        (
            case(&stf, "--tick", "--tick"),
            (1u64..1000).prop_map(|n| format!("{n}ms")).boxed(),
            prop_oneof![Just("0s".to_string()), junk()].boxed(),
        ),
        (
            case(&lock, "--qlen", "--qlen"),
            prop_oneof![num(1..=1000), Just("inf".to_string()).boxed()].boxed(),
            prop_oneof![Just("0".to_string()), Just("-1".into()), junk()].boxed(),
        ),
        (
            case(&lock, "-Q", "--queues"),
            num(1..=16),
            prop_oneof![Just("0".to_string()), junk()].boxed(),
        ),
        (
            case(&lock, "-W", "--width"),
            num(0..=16),
            prop_oneof![num(17..=255), junk()].boxed(),
        ),
        (
            case(&hazards, "-N", "--stages"),
            (1u64..=30).prop_map(|n| format!("1..{n}")).boxed(),
            prop_oneof![Just("0".to_string()), Just("5..2".into()), junk()].boxed(),
        ),
        (
            case(&hazards, "--chunk", "--chunk"),
            num(1..=1500),
            prop_oneof![Just("0".to_string()), Just("-80".into()), junk()].boxed(),
        ),
        (
            case(&gen, "--tcp", "--tcp"),
            (0u64..=100)
                .prop_map(|n| format!("{}", n as f64 / 100.0))
                .boxed(),
            prop_oneof![
                Just("1.5".to_string()),
                Just("-0.1".into()),
                Just("nan".into())
            ]
            .boxed(),
        ),
        (
            case(&gen, "--zipf", "--zipf"),
            (0u64..=30)
                .prop_map(|n| format!("{}", n as f64 / 10.0))
                .boxed(),
            prop_oneof![Just("-1".to_string()), Just("inf".into()), junk()].boxed(),
        ),
        (
            case(&gen, "--flows", "--flows"),
            num(1..=100_000),
            prop_oneof![Just("0".to_string()), junk()].boxed(),
        ),
        (
            case(&bench, "--m", "--m"),
            words(&["2^10", "1024", "2048"]),
            prop_oneof![Just("2^9".to_string()), Just("2^23".into()), junk()].boxed(),
        ),
        (
            case(&bench, "--rates", "--rates"),
            words(&["1", "10", "1,100"]),
            prop_oneof![Just("0".to_string()), junk()].boxed(),
        ),
        (
            case(&bench, "--runs", "--runs"),
            num(1..=2),
            prop_oneof![Just("0".to_string()), Just("-2".into()), junk()].boxed(),
        ),
    ]
}

/// Runs the binary; returns (exit code, stderr). With `close_stdout` the reader of its standard
/// output goes away at once.
fn nevermiss(args: &[String], close_stdout: bool) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_nevermiss"))
        .args(args)
        .stdout(if close_stdout {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (child.wait().unwrap().code(), err)
}

fn no_panic(code: Option<i32>, err: &str, what: &[String]) -> Result<(), TestCaseError> {
    prop_assert!(
        code != Some(101) && code.is_some(),
        "{what:?}: exit {code:?}: {err}"
    );
    prop_assert!(!err.contains("panicked"), "{what:?}: {err}");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn a_value_inside_a_flags_domain_runs_and_one_outside_is_named(
        pick in any::<prop::sample::Index>(),
        seed in any::<u64>(),
        close in any::<bool>(),
    ) {
        let all = cases();
        let (c, good, bad) = &all[pick.index(all.len())];
        let mut runner = proptest::test_runner::TestRunner::new_with_rng(
            ProptestConfig::default(),
            proptest::test_runner::TestRng::from_seed(
                proptest::test_runner::RngAlgorithm::ChaCha,
                &{
                    let mut s = [0u8; 32];
                    s[..8].copy_from_slice(&seed.to_le_bytes());
                    s
                },
            ),
        );
        let g = good.new_tree(&mut runner).unwrap().current();
        let b = bad.new_tree(&mut runner).unwrap().current();
        let mut args = c.base.clone();
        args.extend([c.flag.to_string(), g.clone()]);
        let (code, err) = nevermiss(&args, close);
        no_panic(code, &err, &args)?;
        prop_assert_eq!(code, Some(0), "{:?} (inside the domain): {}", args, err);
        let mut args = c.base.clone();
        args.extend([c.flag.to_string(), b.clone()]);
        let (code, err) = nevermiss(&args, close);
        no_panic(code, &err, &args)?;
        prop_assert_eq!(code, Some(2), "{:?} (outside the domain): {}", args, err);
        prop_assert!(err.contains(c.named), "{:?}: the message does not name {}: {}", args, c.named, err);
    }
}

#[test]
fn every_subcommand_survives_a_closed_stdout() {
    let big = std::env::temp_dir().join(format!("nevermiss-flags-big-{}.p4", std::process::id()));
    let gen = Command::new("python3")
        .arg(root().join("scripts/gen-large-p4.py"))
        .arg("300")
        .output()
        .unwrap();
    std::fs::write(&big, gen.stdout).unwrap();
    let big = big.display().to_string();
    let t = trace();
    let gen_out = std::env::temp_dir()
        .join(format!(
            "nevermiss-flags-closed-{}.pcap",
            std::process::id()
        ))
        .display()
        .to_string();
    let sweep_out = std::env::temp_dir()
        .join(format!("nevermiss-flags-sweep-{}", std::process::id()))
        .display()
        .to_string();
    let mut runs: Vec<Vec<String>> = vec![
        run_base(),
        vec![
            "stf".into(),
            ex("pna-add-on-miss.p4"),
            ex("pna-add-on-miss.stf"),
            "--verbose".into(),
        ],
        vec![
            "bench".into(),
            "--quick".into(),
            "--runs".into(),
            "1".into(),
        ],
        vec!["--help".into()],
        vec!["--version".into()],
    ];
    for dump in ["preprocessed", "tokens", "ast", "summary", "ir"] {
        runs.push(vec![
            "check".into(),
            big.clone(),
            "--dump".into(),
            dump.into(),
        ]);
    }
    for sim in [
        vec!["info", "-t", t],
        vec!["hazards", "-t", t, "--batch", "1000"],
        vec!["lock", "-t", t, "-N", "8", "--batch", "1000", "--batches"],
        vec![
            "sweep",
            "-t",
            t,
            "--batch",
            "1000",
            "-N",
            "1..4",
            "-o",
            sweep_out.as_str(),
        ],
        vec![
            "gen",
            "--size",
            "64",
            "--packets",
            "100",
            "-o",
            gen_out.as_str(),
        ],
    ] {
        let mut a = vec!["sim".to_string()];
        a.extend(sim.iter().map(|s| s.to_string()));
        runs.push(a);
    }
    for args in runs {
        let (code, err) = nevermiss(&args, true);
        assert!(code == Some(0), "{args:?}: exit {code:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}
