//! Which of the two `pna.p4` dialects a program is written for (see `docs/p4include.md`).
//!
//! p4c's programs and P4-DPDK use the pre-0.7 dialect (four blocks, `PreControlT`, `istd.direction`,
//! `bool add_entry`); the PNA spec v0.7+ has three blocks and `AddEntryErrorStatus_t`. The two cannot
//! both be declared, so the driver picks one before preprocessing, from the program's own text:
//! 1. the number of arguments of the `PNA_NIC(...)` instantiation (4 → old, 3 → new) decides;
//! 2. failing that, identifiers that exist in only one dialect are counted;
//! 3. failing that, the old dialect (the one p4c's corpus uses) is chosen.
//!
//! `p4include/pna.p4` reads the choice from the macro [`DIALECT_MACRO`]; `-D NEVERMISS_PNA_DIALECT=3`
//! (or `=4`) on the command line overrides the detection.

/// The preprocessor macro `p4include/pna.p4` selects its dialect by.
pub const DIALECT_MACRO: &str = "NEVERMISS_PNA_DIALECT";

pub use crate::check::PnaDialect;

/// The value of [`DIALECT_MACRO`] that selects a dialect.
pub fn macro_value(d: PnaDialect) -> &'static str {
    match d {
        PnaDialect::V06FourBlock => "4",
        PnaDialect::V07ThreeBlock => "3",
    }
}

/// Identifiers declared only by the pre-0.7 dialect.
const OLD_MARKERS: &[&str] = &[
    "PreControlT",
    "pna_pre_input_metadata_t",
    "pna_pre_output_metadata_t",
    "PNA_Direction_t",
    "NET_TO_HOST",
    "HOST_TO_NET",
    "loopedback",
    "idle_timeout_with_auto_delete",
    "recirculate",
];

/// Identifiers declared only by the v0.7+ dialect.
const NEW_MARKERS: &[&str] = &[
    "AUTO_DELETE",
    "pna_idle_timeout",
    "add_entry_if",
    "is_net_port",
    "is_host_port",
    "recirculated",
    "AddEntryErrorStatus_t",
    "ADD_ENTRY_SUCCESS",
    "ADD_ENTRY_NOT_DONE",
    "update_expire_info",
    "set_entry_expire_time_if",
];

/// Decides the dialect of a program from its source text (comments are ignored).
pub fn detect(source: &str) -> PnaDialect {
    let words = identifiers(source);
    if let Some(n) = pna_nic_arity(&words) {
        if n == 4 {
            return PnaDialect::V06FourBlock;
        }
        if n == 3 {
            return PnaDialect::V07ThreeBlock;
        }
    }
    let count = |markers: &[&str]| {
        words
            .iter()
            .filter(|w| matches!(w, Word::Ident(i) if markers.contains(i)))
            .count()
    };
    if count(NEW_MARKERS) > count(OLD_MARKERS) {
        PnaDialect::V07ThreeBlock
    } else {
        PnaDialect::V06FourBlock
    }
}

#[derive(Debug, PartialEq)]
enum Word<'a> {
    Ident(&'a str),
    Punct(u8),
}

/// A rough tokenization: identifiers and single punctuation bytes, with comments and strings skipped.
fn identifiers(s: &str) -> Vec<Word<'_>> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                i += 1;
            }
            i += 2;
        } else if c == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Word::Ident(&s[start..i]));
        } else {
            if !c.is_ascii_whitespace() {
                out.push(Word::Punct(c));
            }
            i += 1;
        }
    }
    out
}

/// The number of top-level arguments of the first `PNA_NIC(...)` followed by an instance name.
fn pna_nic_arity(words: &[Word<'_>]) -> Option<usize> {
    for (i, w) in words.iter().enumerate() {
        if *w != Word::Ident("PNA_NIC") || words.get(i + 1) != Some(&Word::Punct(b'(')) {
            continue;
        }
        let (mut depth, mut args, mut empty) = (0usize, 1usize, true);
        for (j, w) in words.iter().enumerate().skip(i + 1) {
            match w {
                Word::Punct(b'(') => depth += 1,
                Word::Punct(b')') => {
                    depth -= 1;
                    if depth == 0 {
                        // An instantiation is followed by its name; a declaration `package PNA_NIC<..>(..);` is not.
                        if matches!(words.get(j + 1), Some(Word::Ident(_))) {
                            return Some(if empty { 0 } else { args });
                        }
                        break;
                    }
                }
                Word::Punct(b',') if depth == 1 => args += 1,
                _ => {}
            }
            if depth >= 1 && j > i + 1 {
                empty = false;
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_block_instantiation_is_old() {
        let p = "PNA_NIC(MainParserImpl(), PreControlImpl(), MainControlImpl(), MainDeparserImpl()) main;";
        assert_eq!(detect(p), PnaDialect::V06FourBlock);
    }

    #[test]
    fn three_block_instantiation_is_new() {
        let p = "// PNA_NIC(a(), b(), c(), d()) old;\nPNA_NIC(MainParserImpl(), MainControlImpl(), MainDeparserImpl()) main;";
        assert_eq!(detect(p), PnaDialect::V07ThreeBlock);
    }

    #[test]
    fn markers_decide_without_instantiation() {
        assert_eq!(
            detect("x = add_entry_if(true, \"a\", p, 0); AUTO_DELETE"),
            PnaDialect::V07ThreeBlock
        );
        assert_eq!(
            detect("if (istd.direction == PNA_Direction_t.NET_TO_HOST) {}"),
            PnaDialect::V06FourBlock
        );
        assert_eq!(
            detect("/* AUTO_DELETE */ \"is_net_port\""),
            PnaDialect::V06FourBlock
        );
    }

    #[test]
    fn garbage_does_not_panic() {
        for s in [
            "PNA_NIC(",
            "PNA_NIC(((",
            "\"unterminated",
            "/* open",
            "PNA_NIC()) x",
        ] {
            let _ = detect(s);
        }
    }
}
