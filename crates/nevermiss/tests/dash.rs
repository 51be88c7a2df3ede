//! SONiC DASH's `dash-pipeline` as its own sources are (issue 28). Env-gated on `DASH_DIR`, a
//! checkout of github sonic-net/DASH (nothing of DASH is in this repository; skipped when
//! unset): both builds as DASH's Makefile compiles them — v1model (`-DTARGET_BMV2_V1MODEL`,
//! p4c-bm2-ss) and PNA (`-DTARGET_DPDK_PNA -DPNA_CONNTRACK -DDISABLE_128BIT_ARITHMETIC`,
//! p4c-dpdk) — pass `nevermiss check`, get a P4Info with DASH's structured annotations, and run
//! over generated traffic on both engines. With `P4C_BM2_SS` (a p4c-bm2-ss binary) and
//! `P4C_DPDK` (p4c-dpdk) each build's P4Info is compared with p4c's, byte for byte.
//!
//! Without DASH: the constructs DASH needed, through the binary, on this repository's programs.

use nevermiss_p4rt::format::parse_p4info_text;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_nevermiss"))
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("nevermiss-dash-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("run nevermiss")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// A `##` that forms no token (DASH's `push_vxlan_tunnel_ ## id ## (`) is a warning with the
/// macro use's place, and the program checks.
#[test]
fn check_warns_about_a_failed_paste_and_goes_on() {
    let f = root().join("tests/p4/ok/v1model-macro-paste.p4");
    let o = run(&["check", p(&f)]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{e}");
    assert!(
        e.contains(
            "v1model-macro-paste.p4:30:1: warning: pasting \"set_outer\" and \"(\" does not give a valid preprocessing token"
        ),
        "{e}"
    );
    assert!(
        e.contains("v1model-macro-paste.p4:30:1: warning: pasting \".\" and \"outer\""),
        "{e}"
    );
    assert!(
        e.contains("v1model-macro-paste.p4:31:1: warning: pasting \"set_inner\" and \"(\""),
        "{e}"
    );
    // One warning per paste and macro use, not one per `##` of the expansion.
    assert_eq!(e.matches("warning:").count(), 4, "{e}");
}

/// DASH's two builds: (name, defines).
const BUILDS: [(&str, &[&str]); 2] = [
    ("v1model", &["-DTARGET_BMV2_V1MODEL"]),
    (
        "pna",
        &[
            "-DTARGET_DPDK_PNA",
            "-DPNA_CONNTRACK",
            "-DDISABLE_128BIT_ARITHMETIC",
        ],
    ),
];

fn dash_pipeline() -> Option<PathBuf> {
    let Some(dir) = std::env::var_os("DASH_DIR") else {
        eprintln!("DASH_DIR not set: skipping the SONiC DASH tests");
        return None;
    };
    let f = PathBuf::from(dir).join("dash-pipeline/bmv2/dash_pipeline.p4");
    assert!(f.is_file(), "DASH_DIR has no {}", f.display());
    Some(f)
}

fn with_defines<'a>(args: &[&'a str], defines: &[&'a str]) -> Vec<&'a str> {
    args.iter().chain(defines).copied().collect()
}

#[test]
fn dash_builds_check_get_a_p4info_and_run() {
    let Some(dash) = dash_pipeline() else { return };
    for (build, defines) in BUILDS {
        let o = run(&with_defines(&["check", p(&dash)], defines));
        assert_eq!(o.status.code(), Some(0), "{build}: {}", stderr(&o));

        let out = tmp(&format!("dash-{build}.txtpb"));
        let o = run(&with_defines(&["p4info", p(&dash), "-o", p(&out)], defines));
        assert_eq!(o.status.code(), Some(0), "{build}: {}", stderr(&o));
        let p4info = parse_p4info_text(&std::fs::read_to_string(&out).unwrap()).unwrap();
        assert!(
            p4info.tables.len() > 30,
            "{build}: {} tables",
            p4info.tables.len()
        );
        assert!(
            p4info.actions.len() > 30,
            "{build}: {} actions",
            p4info.actions.len()
        );
        // DASH's SAI generator reads its `@SaiTable[...]` and `@SaiVal[...]` from the P4Info.
        let sai_tables = p4info
            .tables
            .iter()
            .filter(|t| {
                t.preamble
                    .as_ref()
                    .unwrap()
                    .structured_annotations
                    .iter()
                    .any(|a| a.name == "SaiTable")
            })
            .count();
        assert!(
            sai_tables > 20,
            "{build}: {sai_tables} tables with @SaiTable"
        );
        let sai_keys = p4info
            .tables
            .iter()
            .flat_map(|t| &t.match_fields)
            .filter(|m| m.structured_annotations.iter().any(|a| a.name == "SaiVal"))
            .count();
        assert!(sai_keys > 20, "{build}: {sai_keys} keys with @SaiVal");

        for engine in ["jit", "interp"] {
            let o = run(&with_defines(
                &[
                    "run",
                    p(&dash),
                    "--engine",
                    engine,
                    "--port",
                    "0=gen:two-phase,m=4096,r=100,count=20000,field=ipv4.dst",
                ],
                defines,
            ));
            let text = String::from_utf8_lossy(&o.stdout);
            assert_eq!(o.status.code(), Some(0), "{build} {engine}: {}", stderr(&o));
            assert!(
                text.contains("total: 20000 packets in"),
                "{build} {engine}: {text}"
            );
        }
    }
}

/// Each build's P4Info against p4c's, run as DASH's Makefile runs it: the v1model build
/// against p4c-bm2-ss's (`P4C_BM2_SS` names the binary), the PNA build against p4c-dpdk's
/// (`P4C_DPDK`); p4c finds its own `p4include`. Byte for byte.
#[test]
fn dash_p4info_equals_p4cs() {
    let Some(dash) = dash_pipeline() else { return };
    let compilers = [
        ("P4C_BM2_SS", BUILDS[0], &["-o", "dash.json"][..]),
        (
            "P4C_DPDK",
            BUILDS[1],
            &["--arch", "pna", "-o", "dash.spec"][..],
        ),
    ];
    for (var, (build, defines), extra) in compilers {
        let Some(p4c) = std::env::var_os(var) else {
            eprintln!("{var} not set: skipping the comparison of DASH's {build} P4Info with p4c's");
            continue;
        };
        let theirs = tmp(&format!("dash_{build}_p4c.txt"));
        let o = Command::new(p4c)
            .args(defines)
            .args(extra.iter().map(|a| match *a {
                "dash.json" | "dash.spec" => tmp(a).into_os_string(),
                a => a.into(),
            }))
            .arg("--p4runtime-files")
            .arg(&theirs)
            .arg(&dash)
            .output()
            .expect("run p4c");
        assert!(o.status.success(), "{var}: {}", stderr(&o));
        let ours = tmp(&format!("dash_{build}_nevermiss.txt"));
        let o = run(&with_defines(
            &["p4info", p(&dash), "-o", p(&ours)],
            defines,
        ));
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let (a, b) = (
            std::fs::read_to_string(&ours).unwrap(),
            std::fs::read_to_string(&theirs).unwrap(),
        );
        if a != b {
            let (i, (x, y)) = a
                .lines()
                .zip(b.lines())
                .enumerate()
                .find(|(_, (x, y))| x != y)
                .unwrap_or((a.lines().count().min(b.lines().count()), ("", "")));
            panic!(
                "DASH's {build} P4Info differs from {var}'s at line {}: ours `{x}`, p4c `{y}` ({} vs {} lines)",
                i + 1,
                a.lines().count(),
                b.lines().count()
            );
        }
        eprintln!("DASH's {build} P4Info equals {var}'s ({} bytes)", a.len());
    }
}
