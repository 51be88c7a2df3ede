//! The P4_16 lexer (spec §6.4 "Lexical constructs").
//!
//! [`lex`] turns preprocessed text into [`Token`]s, each with the byte [`Span`] it covers, ending
//! with one [`TokenKind::Eof`]. It stops at the first error (an unterminated comment or string, a
//! malformed integer literal). Guarantees: it never panics, runs in time linear in the input, and
//! every span lies on `char` boundaries of the input.
//!
//! Deliberate choices, shared with the parser:
//! - `>` is always a single token; the parser reads two adjacent `>` as the shift `>>`, so that
//!   `bit<8>>` can close two type-argument lists. `>=` and `>>=` are single tokens.
//! - Type identifiers are plain [`TokenKind::Ident`]s; the parser tells types from other names.
//! - A character that starts no token becomes [`TokenKind::Unexpected`]: it is legal inside an
//!   annotation body (§18) and an error anywhere else, which the parser reports.
//! - A line whose first non-blank character is `#` (a leftover preprocessor line marker) is skipped.

use crate::diag::Diagnostic;
use crate::source::Span;
use num_bigint::BigInt;
use std::fmt;

/// One token and the bytes it covers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    /// What the token is.
    pub kind: TokenKind,
    /// The bytes it covers in the preprocessed text.
    pub span: Span,
}

/// A reserved word of P4_16 (spec Appendix "P4 reserved keywords"), plus `_`-free contextual ones
/// that p4c reserves (`list`, `priority`, `for`, `break`, `continue`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Keyword {
    /// `abstract`: an abstract method of an extern, which an instance implements (P4_16 §7.2.10.2.1).
    Abstract,
    /// `action`: an action declaration (P4_16 §14.1).
    Action,
    /// `actions`: a table's list of actions (P4_16 §14.2.1.2).
    Actions,
    /// `apply`: a control's body, or a table or block invocation (P4_16 §14, §14.2.2).
    Apply,
    /// `bool` (P4_16 §7.1.4).
    Bool,
    /// `bit<W>`, an unsigned bit-string (P4_16 §7.1.6.2).
    Bit,
    /// `break` in a `for` loop (P4_16 §12.8 of the spec after v1.2.5; p4c reserves it).
    Break,
    /// `const`: a constant declaration (P4_16 §11.1), a `const` table property or entry.
    Const,
    /// `continue` in a `for` loop (as `break`).
    Continue,
    /// `control`: a control block or control type (P4_16 §14).
    Control,
    /// `default`: a select's or switch's default case, or a keyset matching anything.
    Default,
    /// `else` of an `if` (P4_16 §12.6).
    Else,
    /// `entries`: a table's constant entries (P4_16 §14.2.1.4).
    Entries,
    /// `enum`: an enumeration type (P4_16 §7.2.1).
    Enum,
    /// `error`: the error type and its member declarations (P4_16 §7.1.2).
    Error,
    /// `exit` (P4_16 §12.5).
    Exit,
    /// `extern`: an extern object or function declaration (P4_16 §7.2.10).
    Extern,
    /// `false`.
    False,
    /// `for` (a loop; P4_16 §12.8 of the spec after v1.2.5).
    For,
    /// `header`: a header type (P4_16 §7.2.2).
    Header,
    /// `header_union` (P4_16 §7.2.4).
    HeaderUnion,
    /// `if` (P4_16 §12.6).
    If,
    /// `in`: a parameter direction (P4_16 §6.8); also `for (x in range)`.
    In,
    /// `inout`: a parameter direction (P4_16 §6.8).
    InOut,
    /// `int` and `int<W>` (P4_16 §7.1.6.3, §7.1.6.5).
    Int,
    /// `key`: a table's key property (P4_16 §14.2.1.1).
    Key,
    /// `list<T>` (P4_16 §7.2.7).
    List,
    /// `match_kind`: match kind declarations (P4_16 §7.1.3).
    MatchKind,
    /// `out`: a parameter direction (P4_16 §6.8).
    Out,
    /// `package`: a package type (P4_16 §7.2.13).
    Package,
    /// `parser`: a parser or parser type (P4_16 §13.2).
    Parser,
    /// `priority` of a table entry (P4_16 §14.2.1.4.1).
    Priority,
    /// `return` (P4_16 §12.4).
    Return,
    /// `select` (P4_16 §13.6).
    Select,
    /// `state`: a parser state (P4_16 §13.4).
    State,
    /// `string` (P4_16 §7.1.5).
    String,
    /// `struct` (P4_16 §7.2.5).
    Struct,
    /// `switch` (P4_16 §12.7).
    Switch,
    /// `table` (P4_16 §14.2).
    Table,
    /// `this`: the enclosing extern instance in an abstract method's body (P4_16 §7.2.10.2.1).
    This,
    /// `transition` (P4_16 §13.5).
    Transition,
    /// `true`.
    True,
    /// `tuple<...>` (P4_16 §7.2.6).
    Tuple,
    /// `type`: a new type (P4_16 §7.6).
    Type,
    /// `typedef` (P4_16 §7.5).
    Typedef,
    /// `value_set` (P4_16 §13.11).
    ValueSet,
    /// `varbit<W>` (P4_16 §7.1.6.4).
    Varbit,
    /// `void` (P4_16 §7.1.1).
    Void,
}

/// Sorted by spelling (for binary search).
const KEYWORDS: &[(&str, Keyword)] = &[
    ("abstract", Keyword::Abstract),
    ("action", Keyword::Action),
    ("actions", Keyword::Actions),
    ("apply", Keyword::Apply),
    ("bit", Keyword::Bit),
    ("bool", Keyword::Bool),
    ("break", Keyword::Break),
    ("const", Keyword::Const),
    ("continue", Keyword::Continue),
    ("control", Keyword::Control),
    ("default", Keyword::Default),
    ("else", Keyword::Else),
    ("entries", Keyword::Entries),
    ("enum", Keyword::Enum),
    ("error", Keyword::Error),
    ("exit", Keyword::Exit),
    ("extern", Keyword::Extern),
    ("false", Keyword::False),
    ("for", Keyword::For),
    ("header", Keyword::Header),
    ("header_union", Keyword::HeaderUnion),
    ("if", Keyword::If),
    ("in", Keyword::In),
    ("inout", Keyword::InOut),
    ("int", Keyword::Int),
    ("key", Keyword::Key),
    ("list", Keyword::List),
    ("match_kind", Keyword::MatchKind),
    ("out", Keyword::Out),
    ("package", Keyword::Package),
    ("parser", Keyword::Parser),
    ("priority", Keyword::Priority),
    ("return", Keyword::Return),
    ("select", Keyword::Select),
    ("state", Keyword::State),
    ("string", Keyword::String),
    ("struct", Keyword::Struct),
    ("switch", Keyword::Switch),
    ("table", Keyword::Table),
    ("this", Keyword::This),
    ("transition", Keyword::Transition),
    ("true", Keyword::True),
    ("tuple", Keyword::Tuple),
    ("type", Keyword::Type),
    ("typedef", Keyword::Typedef),
    ("value_set", Keyword::ValueSet),
    ("varbit", Keyword::Varbit),
    ("void", Keyword::Void),
];

impl Keyword {
    /// The keyword as written.
    pub fn as_str(self) -> &'static str {
        KEYWORDS
            .iter()
            .find(|(_, k)| *k == self)
            .map(|(s, _)| *s)
            .unwrap_or("?")
    }

    /// The keyword spelled `s`, if any.
    pub fn lookup(s: &str) -> Option<Keyword> {
        KEYWORDS
            .binary_search_by(|(w, _)| (*w).cmp(s))
            .ok()
            .map(|i| KEYWORDS[i].1)
    }
}

/// What a token is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TokenKind {
    /// An identifier (also a type identifier: the parser decides).
    Ident(String),
    /// A reserved word.
    Keyword(Keyword),
    /// An integer literal; `width` is `Some((w, signed))` for `8w5` / `4s3` (spec §6.4.3.2);
    /// `radix` is the base it was written in (2, 8, 10 or 16).
    Int {
        /// Its value.
        value: BigInt,
        /// `Some((width, signed))` for a width-prefixed literal.
        width: Option<(u32, bool)>,
        /// The base it was written in: 2, 8, 10 or 16.
        radix: u32,
    },
    /// A string literal with its escapes decoded (`\"`, `\\`, `\n`, `\t`, `\r`; any other
    /// `\c` is kept as the two characters).
    Str(String),
    /// `_`
    DontCare,
    /// `@pragma`: an annotation running to the end of the line.
    Pragma,
    /// `&&&`
    Mask,
    /// `...`
    Dots,
    /// `..`
    Range,
    /// `<<`
    Shl,
    /// `&&`
    AndAnd,
    /// `||`
    OrOr,
    /// `==`
    EqEq,
    /// `!=`
    NotEq,
    /// `>=`
    Ge,
    /// `<=`
    Le,
    /// `++`
    PlusPlus,
    /// `+=`
    PlusAssign,
    /// `-=`
    MinusAssign,
    /// `*=`
    MulAssign,
    /// `/=`
    DivAssign,
    /// `%=`
    ModAssign,
    /// `&=`
    AndAssign,
    /// `|=`
    OrAssign,
    /// `^=`
    XorAssign,
    /// `<<=`
    ShlAssign,
    /// `>>=`
    ShrAssign,
    /// `|+|=`
    AddSatAssign,
    /// `|-|=`
    SubSatAssign,
    /// `+`
    Plus,
    /// `{#}`
    Invalid,
    /// `|+|`
    AddSat,
    /// `-`
    Minus,
    /// `|-|`
    SubSat,
    /// `*`
    Star,
    /// `/`
    Slash,
    /// `%`
    Percent,
    /// `|`
    Pipe,
    /// `&`
    Amp,
    /// `^`
    Caret,
    /// `~`
    Tilde,
    /// `(`
    LParen,
    /// `)`
    RParen,
    /// `[`
    LBracket,
    /// `]`
    RBracket,
    /// `{`
    LBrace,
    /// `}`
    RBrace,
    /// `<`
    Lt,
    /// `>`; two adjacent ones are the shift `>>`, which the parser reads.
    Gt,
    /// `!`
    Bang,
    /// `:`
    Colon,
    /// `+:`
    PlusColon,
    /// `,`
    Comma,
    /// `?`
    Question,
    /// `.`
    Dot,
    /// `=`
    Assign,
    /// `;`
    Semi,
    /// `@`: an annotation follows (P4_16 §20).
    At,
    /// A character that starts no token.
    Unexpected(char),
    /// The end of the input; every token list ends with exactly one.
    Eof,
}

impl TokenKind {
    /// A short name for `--dump tokens`.
    fn class(&self) -> &'static str {
        match self {
            TokenKind::Ident(_) => "ident",
            TokenKind::Keyword(_) => "keyword",
            TokenKind::Int { .. } => "int",
            TokenKind::Str(_) => "string",
            TokenKind::Unexpected(_) => "unexpected",
            TokenKind::Eof => "eof",
            _ => "punct",
        }
    }
}

impl fmt::Display for TokenKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            TokenKind::Ident(s) => return write!(f, "{s}"),
            TokenKind::Keyword(k) => k.as_str(),
            TokenKind::Int {
                value, width: None, ..
            } => return write!(f, "{value}"),
            TokenKind::Int {
                value,
                width: Some((w, signed)),
                ..
            } => return write!(f, "{w}{}{value}", if *signed { 's' } else { 'w' }),
            TokenKind::Str(s) => return write!(f, "{s:?}"),
            TokenKind::Unexpected(c) => return write!(f, "{c}"),
            TokenKind::DontCare => "_",
            TokenKind::Pragma => "@pragma",
            TokenKind::Mask => "&&&",
            TokenKind::Dots => "...",
            TokenKind::Range => "..",
            TokenKind::Shl => "<<",
            TokenKind::AndAnd => "&&",
            TokenKind::OrOr => "||",
            TokenKind::EqEq => "==",
            TokenKind::NotEq => "!=",
            TokenKind::Ge => ">=",
            TokenKind::Le => "<=",
            TokenKind::PlusPlus => "++",
            TokenKind::PlusAssign => "+=",
            TokenKind::MinusAssign => "-=",
            TokenKind::MulAssign => "*=",
            TokenKind::DivAssign => "/=",
            TokenKind::ModAssign => "%=",
            TokenKind::AndAssign => "&=",
            TokenKind::OrAssign => "|=",
            TokenKind::XorAssign => "^=",
            TokenKind::ShlAssign => "<<=",
            TokenKind::ShrAssign => ">>=",
            TokenKind::AddSatAssign => "|+|=",
            TokenKind::SubSatAssign => "|-|=",
            TokenKind::Plus => "+",
            TokenKind::Invalid => "{#}",
            TokenKind::AddSat => "|+|",
            TokenKind::Minus => "-",
            TokenKind::SubSat => "|-|",
            TokenKind::Star => "*",
            TokenKind::Slash => "/",
            TokenKind::Percent => "%",
            TokenKind::Pipe => "|",
            TokenKind::Amp => "&",
            TokenKind::Caret => "^",
            TokenKind::Tilde => "~",
            TokenKind::LParen => "(",
            TokenKind::RParen => ")",
            TokenKind::LBracket => "[",
            TokenKind::RBracket => "]",
            TokenKind::LBrace => "{",
            TokenKind::RBrace => "}",
            TokenKind::Lt => "<",
            TokenKind::Gt => ">",
            TokenKind::Bang => "!",
            TokenKind::Colon => ":",
            TokenKind::PlusColon => "+:",
            TokenKind::Comma => ",",
            TokenKind::Question => "?",
            TokenKind::Dot => ".",
            TokenKind::Assign => "=",
            TokenKind::Semi => ";",
            TokenKind::At => "@",
            TokenKind::Eof => "end of input",
        };
        f.write_str(s)
    }
}

/// Splits `text` into tokens; the last token is always [`TokenKind::Eof`].
pub fn lex(text: &str) -> Result<Vec<Token>, Diagnostic> {
    if text.len() >= u32::MAX as usize {
        return Err(Diagnostic::error(
            Span::new(0, 0),
            "input is too large (4 GiB or more)",
        ));
    }
    let mut lx = Lexer {
        text,
        bytes: text.as_bytes(),
        pos: 0,
        line_start: true,
        out: Vec::with_capacity(text.len() / 5 + 1),
    };
    lx.run()?;
    Ok(lx.out)
}

/// One token per line, `lo..hi kind text`, for `nevermiss check --dump tokens`.
pub fn dump_tokens(tokens: &[Token], text: &str) -> String {
    let mut out = String::new();
    for t in tokens {
        let slice = text
            .get(t.span.lo as usize..t.span.hi as usize)
            .unwrap_or("");
        out.push_str(&format!(
            "{}..{} {} {}\n",
            t.span.lo,
            t.span.hi,
            t.kind.class(),
            slice.escape_debug()
        ));
    }
    out
}

struct Lexer<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    /// Only blanks since the last newline (or the start): a `#` here starts a skipped line.
    line_start: bool,
    out: Vec<Token>,
}

/// `IDENT_CHAR[b]`: whether byte `b` can continue an identifier.
const IDENT_CHAR: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        t[i] = b.is_ascii_alphanumeric() || b == b'_';
        i += 1;
    }
    t
};

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_ident_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

impl<'a> Lexer<'a> {
    fn at(&self, i: usize) -> u8 {
        self.bytes.get(i).copied().unwrap_or(0)
    }

    fn starts_with(&self, s: &str) -> bool {
        self.bytes[self.pos..].starts_with(s.as_bytes())
    }

    fn push(&mut self, kind: TokenKind, lo: usize) {
        self.out.push(Token {
            kind,
            span: Span::new(lo as u32, self.pos as u32),
        });
        self.line_start = false;
    }

    fn err(&self, lo: usize, hi: usize, msg: impl Into<String>) -> Diagnostic {
        Diagnostic::error(Span::new(lo as u32, hi as u32), msg)
    }

    fn run(&mut self) -> Result<(), Diagnostic> {
        while self.pos < self.bytes.len() {
            let b = self.bytes[self.pos];
            let lo = self.pos;
            match b {
                b'\n' => {
                    self.pos += 1;
                    self.line_start = true;
                }
                b' ' | b'\t' | b'\r' | 0x0b | 0x0c => {
                    let bytes = self.bytes;
                    let mut i = lo + 1;
                    while i < bytes.len() && matches!(bytes[i], b' ' | b'\t' | b'\r') {
                        i += 1;
                    }
                    self.pos = i;
                }
                b'#' if self.line_start => {
                    while self.pos < self.bytes.len() && self.bytes[self.pos] != b'\n' {
                        self.pos += 1;
                    }
                }
                b'/' if self.at(lo + 1) == b'/' => {
                    while self.pos < self.bytes.len() && self.bytes[self.pos] != b'\n' {
                        self.pos += 1;
                    }
                    self.line_start = false;
                }
                b'/' if self.at(lo + 1) == b'*' => {
                    match self.text[lo + 2..].find("*/") {
                        Some(i) => self.pos = lo + 2 + i + 2,
                        None => return Err(self.err(lo, lo + 2, "unterminated comment")),
                    }
                    self.line_start = false;
                }
                b'"' => self.string()?,
                b'0'..=b'9' => self.number()?,
                _ if is_ident_start(b) => {
                    let bytes = self.bytes;
                    let mut i = lo + 1;
                    while i < bytes.len() && IDENT_CHAR[bytes[i] as usize] {
                        i += 1;
                    }
                    self.pos = i;
                    let word = &self.text[lo..i];
                    // Keywords are 2 to 12 lowercase letters and `_`.
                    let maybe_kw = b.is_ascii_lowercase() && (2..=12).contains(&word.len());
                    let kind = if word == "_" {
                        TokenKind::DontCare
                    } else if let Some(k) = maybe_kw.then(|| Keyword::lookup(word)).flatten() {
                        TokenKind::Keyword(k)
                    } else {
                        TokenKind::Ident(word.to_string())
                    };
                    self.push(kind, lo);
                }
                _ => self.punct(),
            }
        }
        let end = self.bytes.len() as u32;
        self.out.push(Token {
            kind: TokenKind::Eof,
            span: Span::new(end, end),
        });
        Ok(())
    }

    fn punct(&mut self) {
        use TokenKind as T;
        let lo = self.pos;
        let (b1, b2, b3) = (self.at(lo + 1), self.at(lo + 2), self.at(lo + 3));
        let with_eq = |plain: T, assign: T| if b1 == b'=' { (assign, 2) } else { (plain, 1) };
        let (kind, len) = match self.bytes[lo] {
            b'|' => match (b1, b2, b3) {
                (b'+', b'|', b'=') => (T::AddSatAssign, 4),
                (b'-', b'|', b'=') => (T::SubSatAssign, 4),
                (b'+', b'|', _) => (T::AddSat, 3),
                (b'-', b'|', _) => (T::SubSat, 3),
                (b'|', _, _) => (T::OrOr, 2),
                (b'=', _, _) => (T::OrAssign, 2),
                _ => (T::Pipe, 1),
            },
            b'&' => match (b1, b2) {
                (b'&', b'&') => (T::Mask, 3),
                (b'&', _) => (T::AndAnd, 2),
                (b'=', _) => (T::AndAssign, 2),
                _ => (T::Amp, 1),
            },
            b'.' => match (b1, b2) {
                (b'.', b'.') => (T::Dots, 3),
                (b'.', _) => (T::Range, 2),
                _ => (T::Dot, 1),
            },
            b'<' => match (b1, b2) {
                (b'<', b'=') => (T::ShlAssign, 3),
                (b'<', _) => (T::Shl, 2),
                (b'=', _) => (T::Le, 2),
                _ => (T::Lt, 1),
            },
            b'>' => match (b1, b2) {
                (b'>', b'=') => (T::ShrAssign, 3),
                (b'=', _) => (T::Ge, 2),
                _ => (T::Gt, 1),
            },
            b'{' if b1 == b'#' && b2 == b'}' => (T::Invalid, 3),
            b'{' => (T::LBrace, 1),
            b'=' => with_eq(T::Assign, T::EqEq),
            b'!' => with_eq(T::Bang, T::NotEq),
            b'+' => match b1 {
                b'+' => (T::PlusPlus, 2),
                b'=' => (T::PlusAssign, 2),
                b':' => (T::PlusColon, 2),
                _ => (T::Plus, 1),
            },
            b'-' => with_eq(T::Minus, T::MinusAssign),
            b'*' => with_eq(T::Star, T::MulAssign),
            b'/' => with_eq(T::Slash, T::DivAssign),
            b'%' => with_eq(T::Percent, T::ModAssign),
            b'^' => with_eq(T::Caret, T::XorAssign),
            b'~' => (T::Tilde, 1),
            b'(' => (T::LParen, 1),
            b')' => (T::RParen, 1),
            b'[' => (T::LBracket, 1),
            b']' => (T::RBracket, 1),
            b'}' => (T::RBrace, 1),
            b':' => (T::Colon, 1),
            b',' => (T::Comma, 1),
            b'?' => (T::Question, 1),
            b';' => (T::Semi, 1),
            b'@' if self.starts_with("@pragma") && !is_ident_char(self.at(lo + 7)) => {
                (T::Pragma, 7)
            }
            b'@' => (T::At, 1),
            _ => {
                // Any other character, taken whole (it may be multi-byte).
                let c = self.text[lo..].chars().next().unwrap_or('\u{fffd}');
                (T::Unexpected(c), c.len_utf8())
            }
        };
        self.pos += len;
        self.push(kind, lo);
    }

    fn string(&mut self) -> Result<(), Diagnostic> {
        let lo = self.pos;
        self.pos += 1;
        let mut value = String::new();
        loop {
            let Some(c) = self.text[self.pos..].chars().next() else {
                return Err(self.err(lo, lo + 1, "unterminated string literal"));
            };
            self.pos += c.len_utf8();
            match c {
                '"' => break,
                '\\' => {
                    let Some(e) = self.text[self.pos..].chars().next() else {
                        return Err(self.err(lo, lo + 1, "unterminated string literal"));
                    };
                    self.pos += e.len_utf8();
                    match e {
                        '"' => value.push('"'),
                        '\\' => value.push('\\'),
                        'n' => value.push('\n'),
                        't' => value.push('\t'),
                        'r' => value.push('\r'),
                        other => {
                            value.push('\\');
                            value.push(other);
                        }
                    }
                }
                other => value.push(other),
            }
        }
        self.push(TokenKind::Str(value), lo);
        Ok(())
    }

    /// `[0-9][0-9_]*`, `0x..`/`0d..`/`0o..`/`0b..`, optionally after a width `Nw` / `Ns`
    /// (spec §6.4.3.2 "Integer literals").
    fn number(&mut self) -> Result<(), Diagnostic> {
        let lo = self.pos;
        let mut i = lo;
        while self.at(i).is_ascii_digit() {
            i += 1;
        }
        let mut width = None;
        let mut start = lo;
        let c = self.at(i);
        if (c == b'w' || c == b's') && self.at(i + 1).is_ascii_digit() {
            let digits = &self.text[lo..i];
            let w: u32 = digits
                .parse()
                .map_err(|_| self.err(lo, i, "integer width is too large"))?;
            width = Some((w, c == b's'));
            i += 1;
            start = i;
        }
        let radix = if self.at(start) == b'0' {
            match self.at(start + 1) {
                b'x' | b'X' => 16,
                b'd' | b'D' => 10,
                b'o' | b'O' => 8,
                b'b' | b'B' => 2,
                _ => 0,
            }
        } else {
            0
        };
        let (digits_lo, radix) = if radix != 0 {
            (start + 2, radix)
        } else {
            (start, 10)
        };
        let mut j = digits_lo;
        while (self.at(j) as char).is_digit(radix) || self.at(j) == b'_' {
            j += 1;
        }
        // A literal runs on through letters and digits: `0x1G`, `0b2`, `12ab` are malformed.
        let mut end = j;
        while is_ident_char(self.at(end)) {
            end += 1;
        }
        if end > j {
            return Err(self.err(lo, end, "malformed integer literal"));
        }
        self.pos = j;
        let digits: String = self.text[digits_lo..j]
            .chars()
            .filter(|c| *c != '_')
            .collect();
        if digits.is_empty() {
            return Err(self.err(lo, j, "integer literal has no digits"));
        }
        let value = BigInt::parse_bytes(digits.as_bytes(), radix)
            .ok_or_else(|| self.err(lo, j, "malformed integer literal"))?;
        self.push(
            TokenKind::Int {
                value,
                width,
                radix,
            },
            lo,
        );
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(s: &str) -> Vec<TokenKind> {
        lex(s).unwrap().into_iter().map(|t| t.kind).collect()
    }

    fn int(v: i64, width: Option<(u32, bool)>) -> TokenKind {
        int_r(v, width, 10)
    }

    fn int_r(v: i64, width: Option<(u32, bool)>, radix: u32) -> TokenKind {
        TokenKind::Int {
            value: BigInt::from(v),
            width,
            radix,
        }
    }

    #[test]
    fn keywords_are_sorted() {
        assert!(KEYWORDS.windows(2).all(|w| w[0].0 < w[1].0));
        for (w, k) in KEYWORDS {
            assert_eq!(Keyword::lookup(w), Some(*k));
            assert_eq!(k.as_str(), *w);
        }
        assert_eq!(Keyword::lookup("hdr"), None);
    }

    #[test]
    fn integers() {
        assert_eq!(kinds("8w5")[0], int(5, Some((8, false))));
        assert_eq!(kinds("4s3")[0], int(3, Some((4, true))));
        assert_eq!(kinds("0x1F")[0], int_r(31, None, 16));
        assert_eq!(kinds("16w0xFF_FF")[0], int_r(65535, Some((16, false)), 16));
        assert_eq!(kinds("0b1010")[0], int_r(10, None, 2));
        assert_eq!(kinds("0o17")[0], int_r(15, None, 8));
        assert_eq!(kinds("0d99")[0], int(99, None));
        assert_eq!(kinds("1_000")[0], int(1000, None));
        assert_eq!(kinds("8w0b11")[0], int_r(3, Some((8, false)), 2));
        assert!(lex("99999999999w1").is_err());
    }

    #[test]
    fn operators() {
        use TokenKind as T;
        assert_eq!(
            kinds("&&& .. ... |+| |-| ++ >>= > > {#} +: @"),
            vec![
                T::Mask,
                T::Range,
                T::Dots,
                T::AddSat,
                T::SubSat,
                T::PlusPlus,
                T::ShrAssign,
                T::Gt,
                T::Gt,
                T::Invalid,
                T::PlusColon,
                T::At,
                T::Eof
            ]
        );
        assert_eq!(kinds("a>>b")[1..3], [T::Gt, T::Gt]);
    }

    #[test]
    fn strings_and_comments() {
        assert_eq!(
            kinds(r#""a\"b\\c\n""#)[0],
            TokenKind::Str("a\"b\\c\n".into())
        );
        assert_eq!(kinds("/* x */ a // y\n b").len(), 3);
        assert!(lex("\"abc").is_err());
        assert!(lex("/* abc").is_err());
        assert_eq!(
            kinds("# 1 \"foo.p4\"\nx"),
            vec![TokenKind::Ident("x".into()), TokenKind::Eof]
        );
        assert_eq!(kinds("@pragma x")[0], TokenKind::Pragma);
        assert_eq!(kinds("é")[0], TokenKind::Unexpected('é'));
    }
}
