//! Checking output packets against STF expectations.
//!
//! Rules (`shared/reference/conformance.md`, after p4c's BMv2 runner): per port, in order, the
//! number of packets that came out must equal the number of `expect` lines for that port; each
//! packet is compared with its expectation nibble by nibble on upper-case hex, `*` matching any
//! nibble; a packet longer than its expectation matches unless the expectation ends in `$`; a
//! shorter one never matches; packets on a port without expectations fail. An `expect PORT`
//! without data only requires that at least one packet comes out on that port (its count and
//! contents are then not checked).
//!
//! Guarantees: [`Expectations::check`] is deterministic (ports in ascending order, packets in
//! order) and reports the first failure as a [`Mismatch`] whose `Display` is a readable, multi-line
//! message with the differing nibble marked.

use std::collections::BTreeMap;
use std::fmt;

use crate::packet::Packet;
use crate::stf::{ExpectPattern, Statement, StfCommand};

/// One `expect` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expectation {
    /// The pattern; `None` for `expect PORT` without data.
    pub pattern: Option<ExpectPattern>,
    /// Line of the `expect` in the STF file (0 if not from a file).
    pub line: u32,
}

/// The expected output of a test, per port in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Expectations {
    ports: BTreeMap<u32, Vec<Expectation>>,
}

/// Why a test's output does not match.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mismatch {
    /// A port got a different number of packets than expected.
    Count {
        /// The port.
        port: u32,
        /// Packets expected.
        expected: usize,
        /// Packets that came out.
        got: usize,
        /// Per-packet summary (which matched, which differ, which are missing or unexpected).
        detail: String,
    },
    /// A packet does not match its expectation.
    Content {
        /// The port.
        port: u32,
        /// Index of the packet among the port's packets (from 0).
        index: usize,
        /// Line of the `expect`.
        line: u32,
        /// The expectation (upper-case hex, `*`, `$`).
        expected: String,
        /// The packet (upper-case hex).
        got: String,
        /// Index of the first differing nibble.
        nibble: usize,
    },
    /// `expect PORT` without data, and nothing came out on that port.
    NoPacket {
        /// The port.
        port: u32,
        /// Line of the `expect`.
        line: u32,
    },
}

/// Upper-case hex of a byte slice.
pub fn to_hex(data: &[u8]) -> String {
    const H: &[u8; 16] = b"0123456789ABCDEF";
    let mut s = String::with_capacity(data.len() * 2);
    for b in data {
        s.push(char::from(H[usize::from(b >> 4)]));
        s.push(char::from(H[usize::from(b & 15)]));
    }
    s
}

impl Expectations {
    /// No expectations.
    pub fn new() -> Expectations {
        Expectations::default()
    }

    /// The `expect` commands of an STF file, in order.
    pub fn from_statements(stmts: &[Statement]) -> Expectations {
        let mut e = Expectations::new();
        for s in stmts {
            if let StfCommand::Expect { port, pattern } = &s.command {
                e.push(*port, pattern.clone(), s.line);
            }
        }
        e
    }

    /// Adds an expectation for `port` after the ones already there.
    pub fn push(&mut self, port: u32, pattern: Option<ExpectPattern>, line: u32) {
        self.ports
            .entry(port)
            .or_default()
            .push(Expectation { pattern, line });
    }

    /// The expectations of one port.
    pub fn for_port(&self, port: u32) -> &[Expectation] {
        self.ports.get(&port).map_or(&[], Vec::as_slice)
    }

    /// Ports with expectations, ascending.
    pub fn ports(&self) -> impl Iterator<Item = u32> + '_ {
        self.ports.keys().copied()
    }

    /// Total number of expectations.
    pub fn len(&self) -> usize {
        self.ports.values().map(Vec::len).sum()
    }

    /// True when nothing is expected.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Checks output packets given per port (each port's packets in the order they came out).
    pub fn check<P: AsRef<[u8]>>(&self, actual: &BTreeMap<u32, Vec<P>>) -> Result<(), Mismatch> {
        let mut ports: Vec<u32> = self.ports.keys().chain(actual.keys()).copied().collect();
        ports.sort_unstable();
        ports.dedup();
        for port in ports {
            let exps = self.for_port(port);
            let got: &[P] = actual.get(&port).map_or(&[], Vec::as_slice);
            check_port(port, exps, got)?;
        }
        Ok(())
    }

    /// Checks output packets in the order they came out, grouped by their `port` field.
    pub fn check_packets(&self, out: &[Packet]) -> Result<(), Mismatch> {
        let mut by_port: BTreeMap<u32, Vec<&[u8]>> = BTreeMap::new();
        for p in out {
            by_port.entry(p.port).or_default().push(p.data());
        }
        self.check(&by_port)
    }
}

fn check_port<P: AsRef<[u8]>>(port: u32, exps: &[Expectation], got: &[P]) -> Result<(), Mismatch> {
    if let Some(any) = exps.iter().find(|e| e.pattern.is_none()) {
        return if got.is_empty() {
            Err(Mismatch::NoPacket {
                port,
                line: any.line,
            })
        } else {
            Ok(())
        };
    }
    if exps.len() != got.len() {
        return Err(Mismatch::Count {
            port,
            expected: exps.len(),
            got: got.len(),
            detail: count_detail(exps, got),
        });
    }
    for (index, (e, g)) in exps.iter().zip(got).enumerate() {
        let Some(pat) = &e.pattern else { continue };
        if let Some(nibble) = pat.first_difference(g.as_ref()) {
            return Err(Mismatch::Content {
                port,
                index,
                line: e.line,
                expected: pat.to_hex(),
                got: to_hex(g.as_ref()),
                nibble,
            });
        }
    }
    Ok(())
}

const DETAIL_ROWS: usize = 8;

fn count_detail<P: AsRef<[u8]>>(exps: &[Expectation], got: &[P]) -> String {
    let n = exps.len().max(got.len());
    let mut s = String::new();
    for i in 0..n.min(DETAIL_ROWS) {
        let line = match (exps.get(i), got.get(i)) {
            (Some(e), Some(g)) => {
                let ok = e.pattern.as_ref().is_none_or(|p| p.matches(g.as_ref()));
                format!(
                    "  #{i}: expect (line {}) {}",
                    e.line,
                    if ok { "matches" } else { "differs" }
                )
            }
            (Some(e), None) => format!(
                "  #{i}: expect (line {}) got nothing: {}",
                e.line,
                e.pattern
                    .as_ref()
                    .map_or(String::from("any"), |p| abbreviate(&p.to_hex()))
            ),
            (None, Some(g)) => format!(
                "  #{i}: unexpected packet {}",
                abbreviate(&to_hex(g.as_ref()))
            ),
            (None, None) => continue,
        };
        s.push_str(&line);
        s.push('\n');
    }
    if n > DETAIL_ROWS {
        s.push_str(&format!("  ... {} more\n", n - DETAIL_ROWS));
    }
    s
}

fn abbreviate(hex: &str) -> String {
    const MAX: usize = 64;
    if hex.len() <= MAX {
        hex.to_string()
    } else {
        format!("{}... ({} nibbles)", &hex[..MAX], hex.len())
    }
}

/// Nibbles shown before the difference; the window shown is at most `WINDOW` nibbles.
const BEFORE: usize = 24;
const WINDOW: usize = 80;

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mismatch::Count {
                port,
                expected,
                got,
                detail,
            } => {
                writeln!(f, "port {port}: expected {expected} packets, got {got}")?;
                f.write_str(detail.trim_end_matches('\n'))
            }
            Mismatch::NoPacket { port, line } => write!(
                f,
                "port {port}: expected a packet (expect on line {line}), got none"
            ),
            Mismatch::Content {
                port,
                index,
                line,
                expected,
                got,
                nibble,
            } => {
                let exp_nibbles = expected.trim_end_matches('$').len();
                let what = if *nibble >= got.len() {
                    format!(
                        "packet is shorter than expected: {} bytes, the expectation has {} nibbles",
                        got.len() / 2,
                        exp_nibbles
                    )
                } else if *nibble >= exp_nibbles {
                    format!(
                        "packet is longer than expected with `$`: {} bytes, expected {} nibbles",
                        got.len() / 2,
                        exp_nibbles
                    )
                } else {
                    format!("first difference at nibble {nibble} (byte {})", nibble / 2)
                };
                writeln!(
                    f,
                    "port {port}, packet #{index} (expect on line {line}): {what}"
                )?;
                let start = nibble.saturating_sub(BEFORE);
                let cut = |s: &str| -> String {
                    let chars: Vec<char> = s.chars().collect();
                    let end = (start + WINDOW).min(chars.len());
                    let mut out = String::new();
                    if start > 0 {
                        out.push_str("...");
                    }
                    if start < chars.len() {
                        out.extend(&chars[start..end]);
                    }
                    if end < chars.len() {
                        out.push_str("...");
                    }
                    out
                };
                writeln!(f, "  expected: {}", cut(expected))?;
                writeln!(f, "  got:      {}", cut(got))?;
                let pad = nibble - start + if start > 0 { 3 } else { 0 };
                write!(f, "            {}^", " ".repeat(pad))
            }
        }
    }
}

impl std::error::Error for Mismatch {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stf::parse_stf;

    fn exp(text: &str) -> Expectations {
        Expectations::from_statements(&parse_stf(text).unwrap())
    }

    fn out(v: &[(u32, &[u8])]) -> BTreeMap<u32, Vec<Vec<u8>>> {
        let mut m: BTreeMap<u32, Vec<Vec<u8>>> = BTreeMap::new();
        for (p, d) in v {
            m.entry(*p).or_default().push(d.to_vec());
        }
        m
    }

    #[test]
    fn pass_cases() {
        let e = exp("expect 1 00 11 2*\nexpect 1 ab\nexpect 2 01 $\npacket 0 00\n");
        assert_eq!(e.len(), 3);
        e.check(&out(&[
            (1, &[0, 0x11, 0x2f]),
            (1, &[0xab, 0xcd]),
            (2, &[1]),
        ]))
        .unwrap();
        // Lower-case patterns compare equal.
        exp("expect 3 aBcD")
            .check(&out(&[(3, &[0xab, 0xcd])]))
            .unwrap();
        // Nothing expected, nothing out.
        Expectations::new().check(&out(&[])).unwrap();
    }

    #[test]
    fn content_mismatch_message() {
        let e = exp("packet 0 00\nexpect 1 0011 2233 4455\n");
        let m = e
            .check(&out(&[(1, &[0, 0x11, 0x22, 0x43, 0x44, 0x55])]))
            .unwrap_err();
        match &m {
            Mismatch::Content {
                port: 1,
                index: 0,
                line: 2,
                nibble: 6,
                ..
            } => {}
            other => panic!("{other:?}"),
        }
        let s = m.to_string();
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(
            lines[0],
            "port 1, packet #0 (expect on line 2): first difference at nibble 6 (byte 3)"
        );
        assert_eq!(lines[1], "  expected: 001122334455");
        assert_eq!(lines[2], "  got:      001122434455");
        assert_eq!(lines[3].find('^'), lines[2].find("434455"));
    }

    #[test]
    fn long_packet_window() {
        let mut data = vec![0u8; 100];
        let pat = "00".repeat(100);
        data[60] = 0x0f;
        let mut e = Expectations::new();
        e.push(0, Some(ExpectPattern::parse(&pat).unwrap()), 9);
        let m = e.check(&out(&[(0, &data)])).unwrap_err();
        let s = m.to_string();
        let lines: Vec<&str> = s.lines().collect();
        let caret = lines[3].find('^').unwrap();
        assert_eq!(&lines[2][caret..caret + 1], "F");
        assert!(lines[1].starts_with("  expected: ..."));
        assert!(lines[1].ends_with("..."));
    }

    #[test]
    fn length_rules() {
        // Longer is fine without `$`.
        exp("expect 0 00").check(&out(&[(0, &[0, 1])])).unwrap();
        // Longer fails with `$`.
        let m = exp("expect 0 00 $")
            .check(&out(&[(0, &[0, 1])]))
            .unwrap_err();
        assert!(m.to_string().contains("longer than expected"), "{m}");
        // Shorter always fails.
        let m = exp("expect 0 0000").check(&out(&[(0, &[0])])).unwrap_err();
        assert!(m.to_string().contains("shorter than expected"), "{m}");
        match m {
            Mismatch::Content { nibble: 2, .. } => {}
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn count_rules() {
        // Missing packet.
        let m = exp("expect 0 00\nexpect 0 01")
            .check(&out(&[(0, &[0])]))
            .unwrap_err();
        assert!(matches!(
            m,
            Mismatch::Count {
                port: 0,
                expected: 2,
                got: 1,
                ..
            }
        ));
        let s = m.to_string();
        assert!(s.starts_with("port 0: expected 2 packets, got 1"), "{s}");
        assert!(s.contains("#1: expect (line 2) got nothing: 01"), "{s}");
        // Unexpected packet on a port without expectations.
        let m = exp("expect 0 00")
            .check(&out(&[(0, &[0]), (5, &[9])]))
            .unwrap_err();
        assert!(matches!(
            m,
            Mismatch::Count {
                port: 5,
                expected: 0,
                got: 1,
                ..
            }
        ));
        assert!(m.to_string().contains("unexpected packet 09"));
        // Order matters within a port.
        let m = exp("expect 0 00\nexpect 0 01")
            .check(&out(&[(0, &[1]), (0, &[0])]))
            .unwrap_err();
        assert!(matches!(m, Mismatch::Content { index: 0, .. }));
        // Order across ports does not.
        let e = exp("expect 0 00\nexpect 1 01");
        let pk = [
            Packet::from_bytes(&[1], 1, 0),
            Packet::from_bytes(&[0], 0, 0),
        ];
        e.check_packets(&pk).unwrap();
    }

    #[test]
    fn any_packet() {
        let e = exp("expect 4");
        e.check(&out(&[(4, &[1]), (4, &[2])])).unwrap();
        let m = e.check(&out(&[])).unwrap_err();
        assert_eq!(
            m.to_string(),
            "port 4: expected a packet (expect on line 1), got none"
        );
    }
}
