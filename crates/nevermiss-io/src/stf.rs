//! p4c's STF test files (the format read by p4c's `backends/bmv2/bmv2stf.py` and
//! `tools/stf/stf_parser.py`; summarized in `shared/reference/conformance.md`).
//!
//! One command per line; `#` starts a comment; command words are case-insensitive. The grammar
//! accepted here (`Q` = qualified name `id(.id | [n])*`, identifiers may contain `$`, or a
//! `"quoted name"`; `N` = number: decimal, `0x`, `0b`, `0o`, any width; hex/binary/octal digits may be
//! `*` wildcards where a key allows them):
//!
//! ```text
//! packet PORT HEX...                     expect PORT [HEX|*...] [$]
//! add Q [PRIORITY] (Q:KEY)* Q(ARGS) [= ID]   setdefault Q Q(ARGS)
//! KEY  = N | N/LEN | N&&&N                ARGS = [ID:N (, ID:N)*]
//! check_counter ID(ID|N) [packets|bytes (==|!=|<|<=|>|>=) N]
//! remove all      no_packet      wait
//! mirroring_add N N   mirroring_add_mc N N   mirroring_delete N   mirroring_get N
//! mc_mgrp_create N    mc_node_create N N+    mc_node_update N N+  mc_node_associate N N
//! counter_read Q N    counter_write Q N N N  register_read Q N    register_write Q N N
//! register_reset Q    meter_get_rates Q N    meter_set_rates Q N RATE+
//! meter_array_set_rates Q RATE+           RATE = DECIMAL[.DIGITS]:N
//! ```
//!
//! The BMv2 CLI commands (second block) are kept as [`StfCommand::Other`] after their syntax has
//! been checked. Guarantees: parsing never panics; every error names the line and column and what
//! was expected.

use std::fmt;

use num_bigint::BigUint;
use num_traits::{One, ToPrimitive, Zero};

/// A parse error: 1-based line and column, and a message of the form "expected X, found Y".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StfError {
    /// 1-based line.
    pub line: u32,
    /// 1-based column (in characters).
    pub col: u32,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for StfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.col, self.message)
    }
}

impl std::error::Error for StfError {}

/// The base a number was written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Radix {
    /// Decimal (no prefix).
    Dec,
    /// `0x`.
    Hex,
    /// `0b`.
    Bin,
    /// `0o`.
    Oct,
}

impl Radix {
    /// Bits per digit; `None` for decimal.
    pub fn bits_per_digit(self) -> Option<u32> {
        match self {
            Radix::Dec => None,
            Radix::Hex => Some(4),
            Radix::Bin => Some(1),
            Radix::Oct => Some(3),
        }
    }
}

/// A number as written in an STF file, of any width.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Number {
    /// The text as written.
    pub text: String,
    /// Its base.
    pub radix: Radix,
    /// Its value, with wildcard digits read as 0.
    pub value: BigUint,
    /// Number of digits written after the prefix (wildcards included).
    pub digits: u32,
    /// For numbers with `*` digits: the bits that were written as real digits (1) rather than
    /// wildcards (0), over `digits * bits_per_digit` bits. `None` when there is no wildcard.
    pub care: Option<BigUint>,
}

impl Number {
    /// Parses `0x..`, `0b..`, `0o..` or decimal; `allow_wild` permits `*` digits (not in decimal).
    pub fn parse(text: &str, allow_wild: bool) -> Result<Number, String> {
        let lower = text.get(..2).map(str::to_ascii_lowercase);
        let (radix, body) = match lower.as_deref() {
            Some("0x") => (Radix::Hex, &text[2..]),
            Some("0b") => (Radix::Bin, &text[2..]),
            Some("0o") => (Radix::Oct, &text[2..]),
            _ => (Radix::Dec, text),
        };
        let base: u32 = match radix {
            Radix::Dec => 10,
            Radix::Hex => 16,
            Radix::Bin => 2,
            Radix::Oct => 8,
        };
        if body.is_empty() {
            return Err(format!("expected digits after `{text}`"));
        }
        // Validate, then convert in one go (linear for hex/binary/octal; a digit-at-a-time
        // accumulation would be quadratic on very long numbers).
        let max_digit = char::from_digit(base - 1, base).unwrap_or('0');
        let mut val_digits = String::with_capacity(body.len());
        let mut care_digits = String::with_capacity(body.len());
        let mut wild = false;
        for c in body.chars() {
            if c == '*' {
                if radix == Radix::Dec || !allow_wild {
                    return Err(format!(
                        "wildcard `*` not allowed in `{text}`{}",
                        if radix == Radix::Dec {
                            " (decimal number)"
                        } else {
                            ""
                        }
                    ));
                }
                wild = true;
                val_digits.push('0');
                care_digits.push('0');
            } else if c.is_digit(base) {
                val_digits.push(c);
                care_digits.push(max_digit);
            } else {
                return Err(format!(
                    "`{c}` is not a {} digit in `{text}`",
                    match radix {
                        Radix::Dec => "decimal",
                        Radix::Hex => "hexadecimal",
                        Radix::Bin => "binary",
                        Radix::Oct => "octal",
                    }
                ));
            }
        }
        let parse = |d: &str| BigUint::parse_bytes(d.as_bytes(), base).unwrap_or_default();
        let value = parse(&val_digits);
        let care = wild.then(|| parse(&care_digits));
        let digits = u32::try_from(val_digits.len()).unwrap_or(u32::MAX);
        Ok(Number {
            text: text.to_string(),
            radix,
            value,
            digits,
            care,
        })
    }

    /// Bits covered by the digits written (`digits * bits_per_digit`); `None` for decimal.
    pub fn written_bits(&self) -> Option<u32> {
        self.radix
            .bits_per_digit()
            .map(|b| b.saturating_mul(self.digits))
    }

    /// True when some digit is a `*` wildcard.
    pub fn has_wildcards(&self) -> bool {
        self.care.is_some()
    }

    /// The value as `u64`, if it fits and has no wildcards.
    pub fn to_u64(&self) -> Option<u64> {
        if self.has_wildcards() {
            return None;
        }
        self.value.to_u64()
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

fn ones(bits: u32) -> BigUint {
    (BigUint::one() << bits) - BigUint::one()
}

/// The value of a key in an `add` command, as written. Which match kind applies is decided by
/// the table; the conversions follow p4c's BMv2 runner (`bmv2stf.py`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyValue {
    /// A number without wildcards.
    Exact(Number),
    /// A number with `*` digits (the mask has 1s for the digits written), or `v&&&m`.
    Ternary {
        /// Value (wildcard digits are 0).
        value: Number,
        /// Mask.
        mask: BigUint,
    },
    /// `v/len`.
    Lpm {
        /// Value.
        value: Number,
        /// Prefix length in bits.
        prefix_len: u32,
    },
}

impl KeyValue {
    /// The value (for ternary and lpm forms, the value part).
    pub fn value(&self) -> &BigUint {
        match self {
            KeyValue::Exact(n) => &n.value,
            KeyValue::Ternary { value, .. } | KeyValue::Lpm { value, .. } => &value.value,
        }
    }

    /// As value and mask for a ternary key of `field_bits` bits. As BMv2's runner does, a plain
    /// hexadecimal/binary/octal number's mask covers the digits written (`0x0a` gives mask `0xff`);
    /// a plain decimal number gets the full mask; `v/len` gives the prefix mask.
    pub fn to_ternary(&self, field_bits: u32) -> (BigUint, BigUint) {
        let full = ones(field_bits);
        match self {
            KeyValue::Exact(n) => {
                let m = match n.written_bits() {
                    Some(b) => ones(b) & &full,
                    None => full,
                };
                (n.value.clone(), m)
            }
            KeyValue::Ternary { value, mask } => (value.value.clone(), mask & &full),
            KeyValue::Lpm { value, prefix_len } => {
                let len = (*prefix_len).min(field_bits);
                let m = ones(len) << (field_bits - len);
                (value.value.clone(), m)
            }
        }
    }

    /// As value and prefix length for an lpm key of `field_bits` bits: a plain number is a full
    /// match; trailing `*` digits shorten the prefix by their bits; `v/len` is taken as written.
    /// `None` when wildcards are not a suffix (no prefix describes them) or for `v&&&m` masks
    /// that are not prefixes.
    pub fn to_lpm(&self, field_bits: u32) -> Option<(BigUint, u32)> {
        match self {
            KeyValue::Exact(n) => Some((n.value.clone(), field_bits)),
            KeyValue::Lpm { value, prefix_len } => Some((value.value.clone(), *prefix_len)),
            KeyValue::Ternary { value, mask } => {
                let full = ones(field_bits);
                let m = mask & &full;
                // A prefix mask is 1...10...0 over the field.
                let zeros = m.trailing_zeros().unwrap_or(u64::from(field_bits)) as u32;
                let len = field_bits.saturating_sub(zeros);
                let want = if len == 0 {
                    BigUint::zero()
                } else {
                    ones(len) << zeros
                };
                (m == want).then(|| (value.value.clone(), len))
            }
        }
    }
}

impl fmt::Display for KeyValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyValue::Exact(n) => write!(f, "{n}"),
            KeyValue::Ternary { value, .. } if value.has_wildcards() => write!(f, "{value}"),
            KeyValue::Ternary { value, mask } => write!(f, "{}&&&0x{mask:x}", value),
            KeyValue::Lpm { value, prefix_len } => write!(f, "{value}/{prefix_len}"),
        }
    }
}

/// One `name:value` of an `add` command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyMatch {
    /// The key field's name as written (a full name or a suffix of one).
    pub name: String,
    /// Its value.
    pub value: KeyValue,
}

/// `action(arg:value, ...)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActionCall {
    /// The action's name as written (full name or suffix).
    pub name: String,
    /// Arguments by name, in the order written.
    pub args: Vec<(String, Number)>,
}

/// A packet expectation: nibbles to compare (`None` = `*` wildcard) and whether the length must
/// match exactly (`$`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ExpectPattern {
    /// Expected nibbles, most significant first; `None` matches any nibble.
    pub nibbles: Vec<Option<u8>>,
    /// `$` at the end: the packet must not be longer than the pattern.
    pub exact_len: bool,
}

impl ExpectPattern {
    /// Parses pattern text such as `0011 22** 33 $` (spaces ignored).
    pub fn parse(text: &str) -> Result<ExpectPattern, String> {
        let mut nibbles = Vec::new();
        let mut exact_len = false;
        for c in text.chars() {
            if exact_len && !c.is_whitespace() {
                return Err(format!("expected end of line after `$`, found `{c}`"));
            }
            match c {
                '*' => nibbles.push(None),
                '$' => exact_len = true,
                c if c.is_whitespace() => {}
                c => match c.to_digit(16) {
                    Some(d) => nibbles.push(Some(d as u8)),
                    None => return Err(format!("expected hex digit, `*` or `$`, found `{c}`")),
                },
            }
        }
        Ok(ExpectPattern { nibbles, exact_len })
    }

    /// The pattern as upper-case hex with `*` wildcards and a trailing `$` if exact.
    pub fn to_hex(&self) -> String {
        let mut s: String = self
            .nibbles
            .iter()
            .map(|n| match n {
                Some(d) => char::from_digit(u32::from(*d), 16)
                    .unwrap_or('?')
                    .to_ascii_uppercase(),
                None => '*',
            })
            .collect();
        if self.exact_len {
            s.push('$');
        }
        s
    }

    /// Compares a packet: the index of the first nibble that differs, if any. A packet shorter than
    /// the pattern differs at its end; a longer one differs at the pattern's end only with `$`.
    pub fn first_difference(&self, pkt: &[u8]) -> Option<usize> {
        let got = pkt.len() * 2;
        for (i, want) in self.nibbles.iter().enumerate() {
            if i >= got {
                return Some(i);
            }
            let b = pkt[i / 2];
            let nib = if i % 2 == 0 { b >> 4 } else { b & 0xf };
            if let Some(w) = want {
                if *w != nib {
                    return Some(i);
                }
            }
        }
        if self.exact_len && got != self.nibbles.len() {
            return Some(self.nibbles.len());
        }
        None
    }

    /// True when the packet matches.
    pub fn matches(&self, pkt: &[u8]) -> bool {
        self.first_difference(pkt).is_none()
    }
}

impl fmt::Display for ExpectPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

/// Counter kind in `check_counter`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CountType {
    /// `packets`.
    Packets,
    /// `bytes`.
    Bytes,
}

/// Comparison in `check_counter`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    /// `==`.
    Eq,
    /// `!=`.
    Ne,
    /// `<`.
    Lt,
    /// `<=`.
    Le,
    /// `>`.
    Gt,
    /// `>=`.
    Ge,
}

/// A counter reference in `check_counter`: an entry id (as given by `add ... = ID`) or an index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CounterRef {
    /// `$ID` or `ID`: an entry named by `add ... = ID`.
    Id(String),
    /// An index.
    Index(Number),
}

/// One STF command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StfCommand {
    /// `packet PORT HEX`: inject a packet.
    Packet {
        /// Ingress port.
        port: u32,
        /// The bytes.
        data: Vec<u8>,
    },
    /// `expect PORT [PATTERN]`: a packet must come out on the port. `None` = any packet.
    Expect {
        /// Egress port.
        port: u32,
        /// What it must look like (`None` when no data was given).
        pattern: Option<ExpectPattern>,
    },
    /// `add TABLE [PRIORITY] KEY:VALUE... ACTION(ARGS) [= ID]`.
    Add {
        /// The table's name (full name or suffix).
        table: String,
        /// STF priority (a larger value wins; BMv2's runner uses 10000 − priority).
        priority: Option<u64>,
        /// Key values in the order written.
        keys: Vec<KeyMatch>,
        /// The action.
        action: ActionCall,
        /// Name given with `= ID`, for `check_counter`.
        id: Option<String>,
    },
    /// `setdefault TABLE ACTION(ARGS)`.
    SetDefault {
        /// The table's name.
        table: String,
        /// The default action.
        action: ActionCall,
    },
    /// `check_counter NAME(REF) [packets|bytes OP VALUE]`; without a condition, `packets == 0`
    /// is implied by p4c's parser.
    CheckCounter {
        /// The counter's name.
        name: String,
        /// Which cell.
        target: CounterRef,
        /// The condition, if written.
        check: Option<(CountType, CmpOp, Number)>,
    },
    /// `remove all`: delete every entry added.
    RemoveAll,
    /// `no_packet`: no packet is expected (p4c's parser makes it an `expect` without port).
    NoPacket,
    /// `wait`: let the switch process what was sent so far.
    Wait,
    /// A BMv2 CLI command passed through unchanged (`mirroring_add`, `mc_node_create`, ...),
    /// after its syntax was checked.
    Other {
        /// The command word, lower-case.
        command: String,
        /// The rest of the line, trimmed, without comment.
        rest: String,
    },
}

/// A command and the line it is on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Statement {
    /// 1-based line number.
    pub line: u32,
    /// The command.
    pub command: StfCommand,
}

/// The marker of a header line that carries the options a test needs (docs/runtime.md).
pub const HEADER_MARKER: &str = "# nevermiss-options:";

/// The options an STF file asks for: the whitespace-separated words after
/// [`HEADER_MARKER`] on every such line before the first command (p4c's runners see them
/// as comments).
pub fn stf_header_options(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix(HEADER_MARKER) {
            out.extend(rest.split_whitespace().map(str::to_string));
        } else if !t.is_empty() && !t.starts_with('#') {
            break;
        }
    }
    out
}

/// Parses a whole STF file; stops at the first error.
pub fn parse_stf(text: &str) -> Result<Vec<Statement>, StfError> {
    let mut out = Vec::new();
    for (i, line) in text.split('\n').enumerate() {
        let lineno = u32::try_from(i + 1).unwrap_or(u32::MAX);
        if let Some(command) = parse_line(line, lineno)? {
            out.push(Statement {
                line: lineno,
                command,
            });
        }
    }
    Ok(out)
}

/// Parses a whole STF file, collecting every error instead of stopping at the first.
pub fn parse_stf_all(text: &str) -> (Vec<Statement>, Vec<StfError>) {
    let mut out = Vec::new();
    let mut errs = Vec::new();
    for (i, line) in text.split('\n').enumerate() {
        let lineno = u32::try_from(i + 1).unwrap_or(u32::MAX);
        match parse_line(line, lineno) {
            Ok(Some(command)) => out.push(Statement {
                line: lineno,
                command,
            }),
            Ok(None) => {}
            Err(e) => errs.push(e),
        }
    }
    (out, errs)
}

/// The BMv2 CLI commands passed through, with their argument grammar.
const PASSTHROUGH: &[(&str, &[Arg])] = &[
    ("mirroring_add", &[Arg::Num, Arg::Num]),
    ("mirroring_add_mc", &[Arg::Num, Arg::Num]),
    ("mirroring_delete", &[Arg::Num]),
    ("mirroring_get", &[Arg::Num]),
    ("mc_mgrp_create", &[Arg::Num]),
    ("mc_node_create", &[Arg::Num, Arg::Nums]),
    ("mc_node_update", &[Arg::Num, Arg::Nums]),
    ("mc_node_associate", &[Arg::Num, Arg::Num]),
    ("counter_read", &[Arg::Name, Arg::Num]),
    ("counter_write", &[Arg::Name, Arg::Num, Arg::Num, Arg::Num]),
    ("register_read", &[Arg::Name, Arg::Num]),
    ("register_write", &[Arg::Name, Arg::Num, Arg::Num]),
    ("register_reset", &[Arg::Name]),
    ("meter_get_rates", &[Arg::Name, Arg::Num]),
    ("meter_set_rates", &[Arg::Name, Arg::Num, Arg::Rates]),
    ("meter_array_set_rates", &[Arg::Name, Arg::Rates]),
];

#[derive(Clone, Copy, Debug)]
enum Arg {
    Num,
    /// One or more numbers.
    Nums,
    Name,
    /// One or more `RATE:BURST`.
    Rates,
}

/// The known command words, for error messages.
const COMMANDS: &str = "packet, expect, add, setdefault, check_counter, remove, no_packet, wait, \
    or a BMv2 CLI command (mirroring_*, mc_*, counter_*, register_*, meter_*)";

/// A character cursor over one line.
struct Cur {
    chars: Vec<char>,
    pos: usize,
    line: u32,
}

fn is_id_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || c == '$'
}

fn is_id_char(c: char) -> bool {
    is_id_start(c) || c.is_ascii_digit()
}

impl Cur {
    fn new(src: &str, line: u32) -> Cur {
        // Drop the comment (a `#` outside a quoted name) and a trailing carriage return.
        let mut quoted = false;
        let cut = src.char_indices().find_map(|(i, c)| match c {
            '"' => {
                quoted = !quoted;
                None
            }
            '#' if !quoted => Some(i),
            _ => None,
        });
        let code = match cut {
            Some(i) => &src[..i],
            None => src,
        };
        let code = code.strip_suffix('\r').unwrap_or(code);
        Cur {
            chars: code.chars().collect(),
            pos: 0,
            line,
        }
    }

    fn err_at(&self, pos: usize, message: String) -> StfError {
        StfError {
            line: self.line,
            col: u32::try_from(pos + 1).unwrap_or(u32::MAX),
            message,
        }
    }

    fn skip_ws(&mut self) {
        while self.pos < self.chars.len() && self.chars[self.pos].is_whitespace() {
            self.pos += 1;
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn at_end(&mut self) -> bool {
        self.skip_ws();
        self.pos >= self.chars.len()
    }

    /// Describes what is at the cursor, for "found ..." in messages.
    fn found(&mut self) -> String {
        self.skip_ws();
        if self.pos >= self.chars.len() {
            return "end of line".into();
        }
        let tok: String = self.chars[self.pos..]
            .iter()
            .take_while(|c| !c.is_whitespace())
            .take(24)
            .collect();
        format!("`{tok}`")
    }

    fn expected(&mut self, what: &str) -> StfError {
        self.skip_ws();
        let f = self.found();
        self.err_at(self.pos, format!("expected {what}, found {f}"))
    }

    fn eat(&mut self, c: char) -> bool {
        self.skip_ws();
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect_char(&mut self, c: char, what: &str) -> Result<(), StfError> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(self.expected(what))
        }
    }

    fn expect_end(&mut self) -> Result<(), StfError> {
        if self.at_end() {
            Ok(())
        } else {
            Err(self.expected("end of line"))
        }
    }

    /// A run of characters satisfying `f`, starting at the cursor (no whitespace skipping).
    fn take_while(&mut self, f: impl Fn(char) -> bool) -> String {
        let start = self.pos;
        while self.pos < self.chars.len() && f(self.chars[self.pos]) {
            self.pos += 1;
        }
        self.chars[start..self.pos].iter().collect()
    }

    /// An identifier (letters, digits, `_`, `$`; not starting with a digit) or a quoted name.
    fn ident(&mut self, what: &str) -> Result<String, StfError> {
        self.skip_ws();
        match self.peek() {
            Some('"') => {
                let start = self.pos;
                self.pos += 1;
                let s = self.take_while(|c| c != '"');
                if self.peek() != Some('"') {
                    return Err(self.err_at(start, "unterminated quoted name".into()));
                }
                self.pos += 1;
                if s.is_empty() {
                    return Err(self.err_at(start, format!("expected {what}, found `\"\"`")));
                }
                Ok(s)
            }
            Some(c) if is_id_start(c) => Ok(self.take_while(is_id_char)),
            _ => Err(self.expected(what)),
        }
    }

    /// A qualified name: `id ( [n] )? ( . id ( [n] )? )*`.
    fn qualified(&mut self, what: &str) -> Result<String, StfError> {
        let mut s = self.ident(what)?;
        loop {
            if self.peek() == Some('[') {
                self.pos += 1;
                let n = self.take_while(|c| c.is_ascii_digit());
                if n.is_empty() {
                    return Err(self.expected("an index after `[`"));
                }
                if self.peek() != Some(']') {
                    return Err(self.expected("`]`"));
                }
                self.pos += 1;
                s.push('[');
                s.push_str(&n);
                s.push(']');
            } else if self.peek() == Some('.')
                && self
                    .chars
                    .get(self.pos + 1)
                    .is_some_and(|&c| is_id_start(c) || c == '"')
            {
                self.pos += 1;
                s.push('.');
                s.push_str(&self.ident("a name after `.`")?);
            } else {
                return Ok(s);
            }
        }
    }

    /// A number token (starts with a digit; letters, digits and `*` follow).
    fn number(&mut self, what: &str, allow_wild: bool) -> Result<Number, StfError> {
        self.skip_ws();
        let start = self.pos;
        if !self.peek().is_some_and(|c| c.is_ascii_digit()) {
            return Err(self.expected(what));
        }
        let text = self.take_while(|c| c.is_ascii_alphanumeric() || c == '*' || c == '_');
        Number::parse(&text, allow_wild).map_err(|m| self.err_at(start, m))
    }

    fn u32_number(&mut self, what: &str) -> Result<u32, StfError> {
        self.skip_ws();
        let start = self.pos;
        let n = self.number(what, false)?;
        n.value
            .to_u32()
            .ok_or_else(|| self.err_at(start, format!("{what} `{}` is too large", n.text)))
    }

    /// `name(arg:value, ...)`.
    fn action(&mut self) -> Result<ActionCall, StfError> {
        let name = self.qualified("an action name")?;
        self.expect_char('(', "`(` after the action name")?;
        let mut args = Vec::new();
        if !self.eat(')') {
            loop {
                let a = self.ident("an action parameter name or `)`")?;
                self.expect_char(':', "`:` after the parameter name")?;
                let v = self.number("a number (parameter value)", false)?;
                args.push((a, v));
                if self.eat(')') {
                    break;
                }
                self.expect_char(',', "`,` or `)` in the argument list")?;
            }
        }
        Ok(ActionCall { name, args })
    }

    fn key_value(&mut self) -> Result<KeyValue, StfError> {
        self.skip_ws();
        let start = self.pos;
        let v = self.number("a key value", true)?;
        if self.peek() == Some('/') {
            self.pos += 1;
            if v.has_wildcards() {
                return Err(self.err_at(start, "a prefix value cannot also have `*` digits".into()));
            }
            let lstart = self.pos;
            let len = self.number("a prefix length after `/`", false)?;
            let len = len
                .value
                .to_u32()
                .ok_or_else(|| self.err_at(lstart, "prefix length is too large".into()))?;
            return Ok(KeyValue::Lpm {
                value: v,
                prefix_len: len,
            });
        }
        if self.chars[self.pos..].starts_with(&['&', '&', '&']) {
            self.pos += 3;
            if v.has_wildcards() {
                return Err(self.err_at(start, "a `&&&` value cannot also have `*` digits".into()));
            }
            let m = self.number("a mask after `&&&`", false)?;
            return Ok(KeyValue::Ternary {
                value: v,
                mask: m.value,
            });
        }
        match v.care.clone() {
            Some(mask) => Ok(KeyValue::Ternary { value: v, mask }),
            None => Ok(KeyValue::Exact(v)),
        }
    }

    fn rest_text(&self, from: usize) -> String {
        self.chars[from.min(self.chars.len())..]
            .iter()
            .collect::<String>()
            .trim()
            .to_string()
    }
}

/// Parses one line; `Ok(None)` for blank and comment-only lines.
pub fn parse_line(src: &str, line: u32) -> Result<Option<StfCommand>, StfError> {
    let mut c = Cur::new(src, line);
    if c.at_end() {
        return Ok(None);
    }
    let wstart = c.pos;
    if !c.peek().is_some_and(is_id_start) {
        return Err(c.expected(&format!("a command ({COMMANDS})")));
    }
    let word = c.take_while(is_id_char).to_ascii_lowercase();
    let cmd = match word.as_str() {
        "packet" => c.packet()?,
        "expect" => c.expect()?,
        "add" => c.add()?,
        "setdefault" => c.setdefault()?,
        "check_counter" => c.check_counter()?,
        "remove" => c.remove()?,
        "no_packet" => c.alone(StfCommand::NoPacket)?,
        "wait" => c.alone(StfCommand::Wait)?,
        _ => c.passthrough(word, wstart)?,
    };
    Ok(Some(cmd))
}

/// The commands, one method each (after the command word).
impl Cur {
    /// `packet PORT HEX…`: whole bytes.
    fn packet(&mut self) -> Result<StfCommand, StfError> {
        let (port, dstart) = self.port()?;
        let text = self.rest_text(dstart);
        let mut nibbles = Vec::with_capacity(text.len());
        for (i, ch) in self.chars[dstart..].iter().enumerate() {
            if ch.is_whitespace() {
                continue;
            }
            match ch.to_digit(16) {
                Some(d) => nibbles.push(d as u8),
                None => {
                    return Err(self.err_at(
                        dstart + i,
                        format!("expected a hex digit in the packet data, found `{ch}`"),
                    ))
                }
            }
        }
        if nibbles.is_empty() {
            return Err(self.expected("packet data (hex digits)"));
        }
        if nibbles.len() % 2 != 0 {
            return Err(self.err_at(
                dstart,
                format!(
                    "packet data has an odd number of hex digits ({}): expected whole bytes",
                    nibbles.len()
                ),
            ));
        }
        let data = nibbles.chunks(2).map(|p| (p[0] << 4) | p[1]).collect();
        Ok(StfCommand::Packet { port, data })
    }

    /// `expect PORT [PATTERN]`: hex digits and `*`, an optional final `$`.
    fn expect(&mut self) -> Result<StfCommand, StfError> {
        let (port, dstart) = self.port()?;
        let text = self.rest_text(dstart);
        let mut seen_dollar = false;
        for (i, ch) in self.chars[dstart..].iter().enumerate() {
            if ch.is_whitespace() {
                continue;
            }
            if seen_dollar {
                return Err(self.err_at(
                    dstart + i,
                    format!("expected end of line after `$`, found `{ch}`"),
                ));
            }
            if *ch == '$' {
                seen_dollar = true;
            } else if *ch != '*' && !ch.is_ascii_hexdigit() {
                return Err(self.err_at(
                    dstart + i,
                    format!(
                        "expected a hex digit, `*` or `$` in the expected packet, found `{ch}`"
                    ),
                ));
            }
        }
        let pattern = if text.is_empty() {
            None
        } else {
            Some(ExpectPattern::parse(&text).map_err(|m| self.err_at(dstart, m))?)
        };
        Ok(StfCommand::Expect { port, pattern })
    }

    /// The port of `packet`/`expect` and where the data after it starts.
    fn port(&mut self) -> Result<(u32, usize), StfError> {
        self.skip_ws();
        let port = self.u32_number("a port number")?;
        if !self.at_end() && self.pos > 0 && !self.chars[self.pos - 1].is_whitespace() {
            return Err(self.expected("a space after the port number"));
        }
        Ok((port, self.pos))
    }

    /// `add TABLE [PRIORITY] KEY:VALUE… ACTION(ARGS) [= ID]`.
    fn add(&mut self) -> Result<StfCommand, StfError> {
        let table = self.qualified("a table name")?;
        self.skip_ws();
        let priority = self.priority()?;
        let mut keys = Vec::new();
        // Keys are `name:value`; the action is `name(`.
        loop {
            self.skip_ws();
            let save = self.pos;
            let name = self.qualified(if keys.is_empty() {
                "a key (`field:value`)"
            } else {
                "a key (`field:value`) or an action call"
            })?;
            self.skip_ws();
            match self.peek() {
                Some(':') => {
                    self.pos += 1;
                    let value = self.key_value()?;
                    keys.push(KeyMatch { name, value });
                }
                Some('(') => {
                    self.pos = save;
                    break;
                }
                _ => {
                    return Err(self.expected(&format!(
                        "`:` after key `{name}` or `(` after an action name"
                    )))
                }
            }
        }
        if keys.is_empty() {
            return Err(self.expected("at least one key (`field:value`) before the action"));
        }
        let action = self.action()?;
        let id = if self.eat('=') {
            Some(self.ident("an entry name after `=`")?)
        } else {
            None
        };
        self.expect_end()?;
        Ok(StfCommand::Add {
            table,
            priority,
            keys,
            action,
            id,
        })
    }

    /// An entry's priority, when digits follow the table name: a decimal number.
    fn priority(&mut self) -> Result<Option<u64>, StfError> {
        if !self.peek().is_some_and(|ch| ch.is_ascii_digit()) {
            return Ok(None);
        }
        let pstart = self.pos;
        let p = self.number("a priority", false)?;
        if p.radix != Radix::Dec {
            return Err(self.err_at(
                pstart,
                format!("expected a decimal priority, found `{}`", p.text),
            ));
        }
        let p = p
            .value
            .to_u64()
            .ok_or_else(|| self.err_at(pstart, "priority is too large".into()))?;
        Ok(Some(p))
    }

    /// `setdefault TABLE ACTION(ARGS)`.
    fn setdefault(&mut self) -> Result<StfCommand, StfError> {
        let table = self.qualified("a table name")?;
        let action = self.action()?;
        self.expect_end()?;
        Ok(StfCommand::SetDefault { table, action })
    }

    /// `check_counter NAME(INDEX|ID) [packets|bytes OP N]`.
    fn check_counter(&mut self) -> Result<StfCommand, StfError> {
        let name = self.ident("a counter name")?;
        self.expect_char('(', "`(` after the counter name")?;
        self.skip_ws();
        let target = if self.peek().is_some_and(|ch| ch.is_ascii_digit()) {
            CounterRef::Index(self.number("a counter index", false)?)
        } else {
            CounterRef::Id(self.ident("an entry name or index")?)
        };
        self.expect_char(')', "`)`")?;
        let check = if self.at_end() {
            None
        } else {
            Some(self.counter_check()?)
        };
        self.expect_end()?;
        Ok(StfCommand::CheckCounter {
            name,
            target,
            check,
        })
    }

    /// A counter check: `packets` or `bytes`, a comparison and a number.
    fn counter_check(&mut self) -> Result<(CountType, CmpOp, Number), StfError> {
        let kind = self.ident("`packets` or `bytes`")?;
        let kind = match kind.to_ascii_lowercase().as_str() {
            "packets" => CountType::Packets,
            "bytes" => CountType::Bytes,
            _ => {
                self.pos -= kind.chars().count();
                return Err(self.expected("`packets` or `bytes`"));
            }
        };
        self.skip_ws();
        let rest: String = self.chars[self.pos..].iter().take(2).collect();
        let (op, n) = if rest.starts_with("==") {
            (CmpOp::Eq, 2)
        } else if rest.starts_with("!=") {
            (CmpOp::Ne, 2)
        } else if rest.starts_with("<=") {
            (CmpOp::Le, 2)
        } else if rest.starts_with(">=") {
            (CmpOp::Ge, 2)
        } else if rest.starts_with('<') {
            (CmpOp::Lt, 1)
        } else if rest.starts_with('>') {
            (CmpOp::Gt, 1)
        } else {
            return Err(self.expected("a comparison (==, !=, <, <=, >, >=)"));
        };
        self.pos += n;
        let v = self.number("a number", false)?;
        Ok((kind, op, v))
    }

    /// `remove all`.
    fn remove(&mut self) -> Result<StfCommand, StfError> {
        let w = self.ident("`all`")?;
        if !w.eq_ignore_ascii_case("all") {
            self.pos -= w.chars().count();
            return Err(self.expected("`all` (removing single entries is not supported by STF)"));
        }
        self.expect_end()?;
        Ok(StfCommand::RemoveAll)
    }

    /// A command without arguments.
    fn alone(&mut self, cmd: StfCommand) -> Result<StfCommand, StfError> {
        self.expect_end()?;
        Ok(cmd)
    }

    /// A command nevermiss checks but does not run (`PASSTHROUGH`, with its grammar); `word`
    /// started at `wstart`.
    fn passthrough(&mut self, word: String, wstart: usize) -> Result<StfCommand, StfError> {
        let Some((_, grammar)) = PASSTHROUGH.iter().find(|(w, _)| *w == word) else {
            return Err(self.err_at(
                wstart,
                format!("expected a command ({COMMANDS}), found `{word}`"),
            ));
        };
        let rest_start = self.pos;
        for a in grammar.iter() {
            match a {
                Arg::Num => {
                    self.number("a number", false)?;
                }
                Arg::Nums => {
                    self.number("a number", false)?;
                    while !self.at_end() {
                        self.number("a number", false)?;
                    }
                }
                Arg::Name => {
                    self.qualified("a name")?;
                }
                Arg::Rates => self.rates()?,
            }
            if self.pos < self.chars.len() && !self.chars[self.pos].is_whitespace() {
                return Err(self.expected("a space"));
            }
        }
        self.expect_end()?;
        Ok(StfCommand::Other {
            command: word,
            rest: self.rest_text(rest_start),
        })
    }

    /// Meter rates to the end of the line: `RATE:BURST…`, `RATE = digits[.digits]`.
    fn rates(&mut self) -> Result<(), StfError> {
        loop {
            self.skip_ws();
            if !self.peek().is_some_and(|ch| ch.is_ascii_digit()) {
                return Err(self.expected("a rate (`RATE:BURST`, e.g. `0.0001:5`)"));
            }
            self.take_while(|ch| ch.is_ascii_digit());
            if self.peek() == Some('.') {
                self.pos += 1;
                if self.take_while(|ch| ch.is_ascii_digit()).is_empty() {
                    return Err(self.expected("digits after `.`"));
                }
            }
            if self.peek() != Some(':') {
                return Err(self.expected("`:` between rate and burst size"));
            }
            self.pos += 1;
            if self.peek().is_none_or(|ch| ch.is_whitespace()) {
                return Err(self.expected("a burst size after `:`"));
            }
            self.number("a burst size", false)?;
            if self.at_end() {
                return Ok(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(s: &str) -> StfCommand {
        parse_line(s, 1).unwrap().unwrap()
    }

    fn err(s: &str) -> StfError {
        parse_line(s, 7).unwrap_err()
    }

    #[test]
    fn packets_and_expects() {
        assert_eq!(
            one("packet 0 0001 02 ab  # hi"),
            StfCommand::Packet {
                port: 0,
                data: vec![0, 1, 2, 0xab]
            }
        );
        match one("EXPECT 01 00 1* ** $") {
            StfCommand::Expect {
                port: 1,
                pattern: Some(p),
            } => {
                assert_eq!(p.to_hex(), "001***$");
                assert!(p.exact_len);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            one("expect 5"),
            StfCommand::Expect {
                port: 5,
                pattern: None
            }
        );
        assert_eq!(parse_line("   # only a comment", 1).unwrap(), None);
        // A `#` inside a quoted name is part of it (p4testgen quotes names like
        // `ingress.tables.!@#$%^&*()_+=-prefix^simple_table_1`).
        match parse_line(r#"add "t.!@#$x" k:1 "a"() # comment"#, 1).unwrap() {
            Some(StfCommand::Add { table, .. }) => assert_eq!(table, "t.!@#$x"),
            other => panic!("{other:?}"),
        }
        assert_eq!(parse_line("", 1).unwrap(), None);
    }

    #[test]
    fn add_commands() {
        match one("add ex1 100 extra$0.h:0x25** hdr.x[1].y:0b1*0 act1(val:0x25, v2 : 7) = A") {
            StfCommand::Add {
                table,
                priority,
                keys,
                action,
                id,
            } => {
                assert_eq!(table, "ex1");
                assert_eq!(priority, Some(100));
                assert_eq!(keys[0].name, "extra$0.h");
                assert_eq!(
                    keys[0].value.to_ternary(16),
                    (BigUint::from(0x2500u32), BigUint::from(0xff00u32))
                );
                assert_eq!(
                    keys[0].value.to_lpm(16),
                    Some((BigUint::from(0x2500u32), 8))
                );
                assert_eq!(keys[1].name, "hdr.x[1].y");
                assert_eq!(
                    keys[1].value.to_ternary(3),
                    (BigUint::from(0b100u32), BigUint::from(0b101u32))
                );
                assert_eq!(keys[1].value.to_lpm(3), None);
                assert_eq!(action.name, "act1");
                assert_eq!(action.args.len(), 2);
                assert_eq!(action.args[1].0, "v2");
                assert_eq!(action.args[1].1.to_u64(), Some(7));
                assert_eq!(id.as_deref(), Some("A"));
            }
            other => panic!("{other:?}"),
        }
        match one("add pipe_Check_src_ip 0 key.field0:0x010a/16 pipe_Reject()") {
            StfCommand::Add { keys, action, .. } => {
                assert_eq!(
                    keys[0].value,
                    KeyValue::Lpm {
                        value: Number::parse("0x010a", false).unwrap(),
                        prefix_len: 16
                    }
                );
                assert_eq!(
                    keys[0].value.to_ternary(32).1,
                    BigUint::from(0xffff_0000u32)
                );
                assert!(action.args.is_empty());
            }
            other => panic!("{other:?}"),
        }
        match one("add t k:5&&&0xf0 a()") {
            StfCommand::Add { keys, priority, .. } => {
                assert_eq!(priority, None);
                assert_eq!(
                    keys[0].value.to_ternary(8),
                    (BigUint::from(5u32), BigUint::from(0xf0u32))
                );
                assert_eq!(keys[0].value.to_lpm(8), Some((BigUint::from(5u32), 4)));
            }
            other => panic!("{other:?}"),
        }
        // Exact numbers of any width.
        match one("add t k:0x0123456789abcdef0123456789abcdef01 a(x:340282366920938463463374607431768211456)") {
            StfCommand::Add { keys, action, .. } => {
                assert_eq!(keys[0].value.value().bits(), 129);
                assert_eq!(action.args[0].1.value, BigUint::one() << 128u32);
                assert_eq!(keys[0].value.to_lpm(136).unwrap().1, 136);
            }
            other => panic!("{other:?}"),
        }
        // Plain hex on a ternary key: mask covers the digits written (as BMv2's runner does).
        let k = KeyValue::Exact(Number::parse("0x0a", false).unwrap());
        assert_eq!(k.to_ternary(16).1, BigUint::from(0xffu32));
        let k = KeyValue::Exact(Number::parse("10", false).unwrap());
        assert_eq!(k.to_ternary(16).1, BigUint::from(0xffffu32));
    }

    #[test]
    fn other_commands() {
        assert_eq!(
            one("setdefault pipe_t pipe_Reject(rej:0, bar:1)"),
            StfCommand::SetDefault {
                table: "pipe_t".into(),
                action: ActionCall {
                    name: "pipe_Reject".into(),
                    args: vec![
                        ("rej".into(), Number::parse("0", false).unwrap()),
                        ("bar".into(), Number::parse("1", false).unwrap())
                    ]
                }
            }
        );
        assert_eq!(one("wait"), StfCommand::Wait);
        assert_eq!(one("no_packet"), StfCommand::NoPacket);
        assert_eq!(one("remove all"), StfCommand::RemoveAll);
        assert_eq!(
            one("mc_node_create 257 6 8 # x"),
            StfCommand::Other {
                command: "mc_node_create".into(),
                rest: "257 6 8".into()
            }
        );
        assert_eq!(
            one("meter_array_set_rates cIngress.meter0 0.000006:7 0.00008:9"),
            StfCommand::Other {
                command: "meter_array_set_rates".into(),
                rest: "cIngress.meter0 0.000006:7 0.00008:9".into()
            }
        );
        match one("check_counter cntDum(10) packets == 2") {
            StfCommand::CheckCounter {
                name,
                target: CounterRef::Index(i),
                check: Some((CountType::Packets, CmpOp::Eq, v)),
            } => {
                assert_eq!(name, "cntDum");
                assert_eq!(i.to_u64(), Some(10));
                assert_eq!(v.to_u64(), Some(2));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            one("check_counter c($A)"),
            StfCommand::CheckCounter {
                name: "c".into(),
                target: CounterRef::Id("$A".into()),
                check: None
            }
        );
    }

    #[test]
    fn errors_have_positions() {
        let cases: &[(&str, u32, &str)] = &[
            ("frobnicate 1", 1, "expected a command"),
            ("packet x 00", 8, "expected a port number"),
            ("packet 0 0g", 11, "expected a hex digit"),
            ("packet 0 012", 10, "odd number"),
            ("packet 0", 9, "expected packet data"),
            ("expect 0 00 $ 11", 15, "after `$`"),
            ("expect 99999999999 00", 8, "too large"),
            ("add t k:1 a(", 13, "expected an action parameter name"),
            ("add t k:1 a(x:1", 16, "`,` or `)`"),
            ("add t k:0x1g a()", 9, "not a hexadecimal digit"),
            ("add t k:1* a()", 9, "wildcard"),
            ("add t a()", 7, "at least one key"),
            ("add t k=1 a()", 8, "`:` after key `k`"),
            ("add t k:1 a() junk", 15, "expected end of line"),
            ("add t 0x10 k:1 a()", 7, "decimal priority"),
            ("setdefault t", 13, "expected an action name"),
            ("setdefault t a", 15, "`(` after the action name"),
            ("mirroring_add 1", 16, "expected a number"),
            ("mc_node_create 1", 17, "expected a number"),
            ("meter_set_rates m 1 0.5", 24, "`:` between rate"),
            ("check_counter c(1) frames == 1", 20, "`packets` or `bytes`"),
            ("check_counter c(1) packets ~ 1", 28, "a comparison"),
            ("remove some", 8, "`all`"),
            ("wait now", 6, "expected end of line"),
            ("add \"t k:1 a()", 5, "unterminated"),
            ("add t k:0x/4 a()", 9, "digits after"),
        ];
        for (src, col, msg) in cases {
            let e = err(src);
            assert_eq!(e.line, 7);
            assert!(e.message.contains(msg), "{src}: {e}");
            assert_eq!(e.col, *col, "{src}: {e}");
        }
        assert_eq!(
            err("wait now").to_string(),
            "7:6: expected end of line, found `now`"
        );
    }

    #[test]
    fn whole_file() {
        let text = "# test\nadd t k:1 a()\n\npacket 0 00\r\nexpect 1 00 $\nbogus\nwait\n";
        let e = parse_stf(text).unwrap_err();
        assert_eq!(e.line, 6);
        let (ok, errs) = parse_stf_all(text);
        assert_eq!(ok.len(), 4);
        assert_eq!(ok[1].line, 4);
        assert_eq!(errs.len(), 1);
    }

    #[test]
    fn very_long_numbers_are_fast() {
        let t = std::time::Instant::now();
        let hex = format!(
            "add t k:0x{}** a(x:{})",
            "f".repeat(200_000),
            "9".repeat(20_000)
        );
        match one(&hex) {
            StfCommand::Add { keys, action, .. } => {
                assert_eq!(keys[0].value.value().bits(), 800_008);
                assert!(action.args[0].1.value.bits() > 66_000);
            }
            other => panic!("{other:?}"),
        }
        assert!(t.elapsed().as_secs() < 5);
        let n = Number::parse("0b1*0", true).unwrap();
        assert_eq!(
            (n.value.clone(), n.care.clone()),
            (BigUint::from(4u32), Some(BigUint::from(5u32)))
        );
        assert_eq!(n.written_bits(), Some(3));
        let o = Number::parse("0O7*", true).unwrap();
        assert_eq!(o.care, Some(BigUint::from(0o70u32)));
        assert!(Number::parse("0x", false).is_err());
        assert!(Number::parse("0o8", false).is_err());
    }

    #[test]
    fn pattern_compare() {
        let p = ExpectPattern::parse("0A1* $").unwrap();
        assert_eq!(p.first_difference(&[0x0a, 0x1f]), None);
        assert_eq!(p.first_difference(&[0x0a, 0x2f]), Some(2));
        assert_eq!(p.first_difference(&[0x0a]), Some(2));
        assert_eq!(p.first_difference(&[0x0a, 0x1f, 0]), Some(4));
        let q = ExpectPattern::parse("0a1").unwrap();
        assert!(q.matches(&[0x0a, 0x1f, 0x00]));
        assert!(!q.matches(&[]));
        assert!(ExpectPattern::parse("").unwrap().matches(&[1, 2]));
    }
}
