//! STF parsing: p4c's own STF files (when `P4C_DIR` is set), malformed input, and matcher properties.

use std::collections::BTreeMap;
use std::path::PathBuf;

use nevermiss_io::stf::{parse_line, parse_stf, ExpectPattern, StfCommand};
use nevermiss_io::Expectations;
use proptest::prelude::*;

/// Every STF file of p4c's `testdata/p4_16_samples` parses. Skipped (with a note) unless `P4C_DIR`
/// names a p4c checkout (or a directory holding its `testdata/`).
#[test]
fn p4c_stf_corpus_parses() {
    let Some(dir) = std::env::var_os("P4C_DIR") else {
        eprintln!("P4C_DIR not set: skipping p4c STF corpus");
        return;
    };
    let samples = PathBuf::from(dir).join("testdata/p4_16_samples");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&samples)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", samples.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "stf"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no .stf files in {}", samples.display());
    let mut failures = Vec::new();
    let mut counts: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut bmv2 = 0;
    for f in &files {
        let text = match std::fs::read_to_string(f) {
            Ok(t) => t,
            Err(e) => {
                failures.push(format!("{}: {e}", f.display()));
                continue;
            }
        };
        if f.to_string_lossy().ends_with("-bmv2.stf") {
            bmv2 += 1;
        }
        match parse_stf(&text) {
            Ok(stmts) => {
                for s in stmts {
                    let k = match s.command {
                        StfCommand::Packet { .. } => "packet",
                        StfCommand::Expect { .. } => "expect",
                        StfCommand::Add { .. } => "add",
                        StfCommand::SetDefault { .. } => "setdefault",
                        StfCommand::CheckCounter { .. } => "check_counter",
                        StfCommand::RemoveAll => "remove",
                        StfCommand::NoPacket => "no_packet",
                        StfCommand::Wait => "wait",
                        StfCommand::Other { .. } => "other",
                    };
                    *counts.entry(k).or_default() += 1;
                }
            }
            Err(e) => failures.push(format!("{}:{e}", f.display())),
        }
    }
    eprintln!(
        "p4c STF corpus: {} files ({} *-bmv2.stf), {} parsed; commands: {:?}",
        files.len(),
        bmv2,
        files.len() - failures.len(),
        counts
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn small_file_end_to_end() {
    let text = "\
# a test
add ingress.t 10 hdr.ethernet.dstAddr:0x0000000000** ingress.fwd(port:2)
setdefault t drop()
mc_mgrp_create 1
packet 0 000000000001 000000000002 0800
expect 2 000000000001 ************ 0800 $
packet 0 000000000003 000000000002 0800
";
    let stmts = parse_stf(text).unwrap();
    assert_eq!(stmts.len(), 6);
    assert_eq!(stmts[4].line, 6);
    let e = Expectations::from_statements(&stmts);
    let mut out: BTreeMap<u32, Vec<Vec<u8>>> = BTreeMap::new();
    out.entry(2).or_default().push(
        [
            &[0, 0, 0, 0, 0, 1][..],
            &[9, 9, 9, 9, 9, 9][..],
            &[8, 0][..],
        ]
        .concat(),
    );
    e.check(&out).unwrap();
    out.get_mut(&2).unwrap()[0].push(0);
    let m = e.check(&out).unwrap_err();
    assert!(m.to_string().contains("longer than expected"), "{m}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, failure_persistence: None, ..ProptestConfig::default() })]

    /// Arbitrary text never panics, and errors point inside the input.
    #[test]
    fn arbitrary_lines_never_panic(s in "\\PC{0,80}") {
        if let Err(e) = parse_line(&s, 1) {
            prop_assert!(e.col >= 1);
            prop_assert!(e.col as usize <= s.chars().count() + 1, "{} for {:?}", e, s);
            prop_assert!(!e.message.is_empty());
        }
    }

    /// Lines made of STF-ish tokens (more likely to get deep into the grammar) never panic.
    #[test]
    fn stf_like_lines_never_panic(toks in proptest::collection::vec(prop_oneof![
        Just("add"), Just("packet"), Just("expect"), Just("setdefault"), Just("check_counter"),
        Just("mc_node_create"), Just("meter_set_rates"), Just("remove"), Just("wait"), Just("t"),
        Just("a.b[3].c"), Just(":"), Just("("), Just(")"), Just(","), Just("0x1*"), Just("0b1*0"),
        Just("0o7"), Just("12"), Just("/"), Just("&&&"), Just("$"), Just("*"), Just("="),
        Just("=="), Just("packets"), Just("0.5:3"), Just("\"q\""), Just("\""), Just(" "), Just("#"),
        Just("0x"), Just("ff"), Just("é"), Just("\t"), Just("[")], 0..14)) {
        let line: String = toks.concat();
        let _ = parse_line(&line, 3);
        let spaced = toks.join(" ");
        let _ = parse_line(&spaced, 3);
    }

    /// A packet always matches the pattern made from its own hex, and with `$`;
    /// masking nibbles with `*` keeps it matching; changing one nibble breaks it.
    #[test]
    fn pattern_self_match(data in proptest::collection::vec(any::<u8>(), 1..64),
                          stars in proptest::collection::vec(any::<bool>(), 128),
                          flip in any::<prop::sample::Index>()) {
        let hex: String = data.iter().map(|b| format!("{b:02x}")).collect();
        let p = ExpectPattern::parse(&hex).unwrap();
        prop_assert!(p.matches(&data));
        let exact = ExpectPattern::parse(&format!("{hex}$")).unwrap();
        prop_assert!(exact.matches(&data));
        let mut longer = data.clone();
        longer.push(0);
        prop_assert!(p.matches(&longer));
        prop_assert!(!exact.matches(&longer));
        prop_assert!(!p.matches(&data[..data.len() - 1]));
        let starred: String = hex.chars().enumerate()
            .map(|(i, c)| if stars[i % stars.len()] { '*' } else { c }).collect();
        prop_assert!(ExpectPattern::parse(&starred).unwrap().matches(&data));
        let i = flip.index(data.len() * 2);
        let mut changed = data.clone();
        changed[i / 2] ^= if i % 2 == 0 { 0x10 } else { 0x01 };
        prop_assert_eq!(p.first_difference(&changed), Some(i));
    }
}
