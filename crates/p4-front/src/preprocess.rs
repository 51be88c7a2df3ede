//! The C preprocessor that P4_16 programs are written against (P4_16 spec §6.2 "Preprocessing":
//! `#include`, `#define`, `#undef`, `#if`/`#ifdef`/`#ifndef`/`#elif`/`#else`/`#endif`, `#line`,
//! `#error`, `#warning`, `#pragma`), with the semantics of ISO C §6.10 as implemented by `cpp`.
//!
//! Guarantees:
//! - the output [`Unit`] maps every output byte back to the file and line it came from; a token
//!   that no macro touched maps to its exact column, a token produced by a macro expansion maps to
//!   the start of the macro use;
//! - comments are replaced by blanks (newlines kept) and never looked for inside string literals;
//! - a macro is never expanded inside its own expansion (hide sets, after Prosser's algorithm);
//! - bad input (any bytes) never panics or hangs: it yields one [`Diagnostic`] that carries its
//!   own [`crate::source::Location`], since the unit does not exist yet;
//! - `#include` nests at most [`MAX_INCLUDE_DEPTH`] levels; macro arguments nest at most 128
//!   levels; macro expansions produce at most 2^20 tokens per line and 2^22 in all.

use crate::diag::{Diagnostic, Severity};
use crate::source::{self, FileEntry, Location, Piece, Remap, SourceText, Unit};
use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// How the preprocessor finds include files and which macros are predefined.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Searched in order after [`default_include_dir`], for `#include <x>` and `#include "x"`.
    pub include_dirs: Vec<PathBuf>,
    /// `-D NAME=VALUE`: `(NAME, VALUE)`; pass `"1"` for a plain `-D NAME`. `NAME` may be
    /// function-like: `("F(x)", "x")`.
    pub defines: Vec<(String, String)>,
}

/// `#include` nesting limit: deeper nesting (usually an include cycle) is an error.
pub const MAX_INCLUDE_DEPTH: usize = 64;
const MAX_ARG_NESTING: u32 = 128;
const MAX_EXPANSION_TOKENS: u64 = 1 << 20;
const MAX_TOTAL_EXPANSION_TOKENS: u64 = 1 << 22;
const MAX_EXPR_DEPTH: u32 = 512;

/// The project's `p4include/` directory: `$NEVERMISS_P4INCLUDE` if set; else, for an installed
/// binary (`PREFIX/bin/nevermiss`, as the Debian package puts it), `PREFIX/share/nevermiss/p4include`
/// when it exists; else the `p4include/` of the source tree this crate was built from, when it
/// exists; else the Debian package's `/usr/share/nevermiss/p4include` (where the binary cannot
/// name its own path: no `/proc`).
pub fn default_include_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("NEVERMISS_P4INCLUDE").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    let installed = std::env::current_exe().ok().and_then(|exe| {
        let d = exe.parent()?.parent()?.join("share/nevermiss/p4include");
        d.is_dir().then_some(d)
    });
    if let Some(d) = installed {
        return d;
    }
    let tree = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../p4include"));
    match std::fs::canonicalize(&tree) {
        Ok(d) => d,
        Err(_) if Path::new(PACKAGED_INCLUDE_DIR).is_dir() => PathBuf::from(PACKAGED_INCLUDE_DIR),
        Err(_) => tree,
    }
}

/// Where the Debian package installs `p4include/` (`scripts/deb.sh`).
const PACKAGED_INCLUDE_DIR: &str = "/usr/share/nevermiss/p4include";

/// Preprocesses the file at `path`.
pub fn preprocess(path: &Path, opts: &Options) -> Result<Unit, Diagnostic> {
    let name = path.to_string_lossy().into_owned();
    let bytes = std::fs::read(path).map_err(|e| {
        Diagnostic::error_global(format!("cannot read `{name}`: {}", io_message(&e)))
    })?;
    let canon = std::fs::canonicalize(path).ok();
    run(&name, decode(&bytes), canon, opts)
}

/// Preprocesses `text` as the main file called `name`; `#include "x"` looks for `x` next to
/// `name` first.
pub fn preprocess_str(name: &str, text: &str, opts: &Options) -> Result<Unit, Diagnostic> {
    let canon = std::fs::canonicalize(name).ok();
    run(name, strip_bom(text.to_string()), canon, opts)
}

fn run(
    name: &str,
    text: String,
    canon: Option<PathBuf>,
    opts: &Options,
) -> Result<Unit, Diagnostic> {
    let mut pp = Pp::new(opts);
    let main_src = pp.add_source(text, canon);
    pp.push_frame(name.to_string(), main_src, None, true);
    if !opts.defines.is_empty() {
        let mut cmd = String::new();
        for (n, v) in &opts.defines {
            // One define per line; a newline inside the value would start a new line.
            cmd.push_str(&format!(
                "#define {} {}\n",
                n.replace('\n', " "),
                v.replace('\n', " ")
            ));
        }
        let src = pp.add_source(cmd, None);
        pp.push_frame("<command-line>".to_string(), src, None, false);
    }
    pp.run()?;
    Ok(pp.finish())
}

fn decode(bytes: &[u8]) -> String {
    strip_bom(String::from_utf8_lossy(bytes).into_owned())
}

fn strip_bom(mut s: String) -> String {
    if s.starts_with('\u{feff}') {
        s.drain(..3);
    }
    s
}

fn io_message(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".to_string(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        _ => {
            let s = e.to_string();
            let mut c = s.chars();
            match c.next() {
                Some(f) => f.to_lowercase().chain(c).collect(),
                None => s,
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Tokens

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Ident,
    Number,
    Str,
    Char,
    Punct,
    Other,
    /// Stands for an empty macro argument next to `##`; removed after substitution.
    Placemarker,
}

/// Where a token came from: source bytes `lo..hi` of file `file` (0-based physical `line`), or,
/// if `expanded`, the macro use at `lo..hi` that produced it.
#[derive(Clone, Copy, Debug)]
struct Origin {
    file: u32,
    lo: u32,
    hi: u32,
    line: u32,
    expanded: bool,
}

/// A hide set: ids of the macros a token must not expand (sorted).
type Hide = Option<Rc<[u32]>>;

#[derive(Clone, Debug)]
struct Tok {
    kind: Kind,
    buf: Rc<str>,
    lo: u32,
    hi: u32,
    /// Preceded by whitespace (or the start of a line).
    space: bool,
    /// Starts a new context (a macro expansion or a substituted argument): the emitter adds a
    /// space if it would otherwise paste with the previous token.
    boundary: bool,
    /// Painted: never to be expanded again.
    no_expand: bool,
    hide: Hide,
    origin: Origin,
}

impl Tok {
    fn s(&self) -> &str {
        self.buf
            .get(self.lo as usize..self.hi as usize)
            .unwrap_or("")
    }
    fn is(&self, p: &str) -> bool {
        self.kind == Kind::Punct && self.s() == p
    }
    fn synth(kind: Kind, text: &str, like: &Tok) -> Tok {
        Tok {
            kind,
            buf: Rc::from(text),
            lo: 0,
            hi: text.len() as u32,
            space: like.space,
            boundary: like.boundary,
            no_expand: false,
            hide: like.hide.clone(),
            origin: like.origin,
        }
    }
}

fn hs_contains(h: &Hide, id: u32) -> bool {
    h.as_ref().is_some_and(|v| v.binary_search(&id).is_ok())
}

fn hs_union(a: &Hide, b: &Hide) -> Hide {
    match (a, b) {
        (None, x) | (x, None) => x.clone(),
        (Some(x), Some(y)) => {
            if Rc::ptr_eq(x, y) {
                return a.clone();
            }
            let mut v: Vec<u32> = x.iter().chain(y.iter()).copied().collect();
            v.sort_unstable();
            v.dedup();
            Some(Rc::from(v))
        }
    }
}

/// `h` plus macro `id`.
fn hs_add(h: &Hide, id: u32) -> Hide {
    if hs_contains(h, id) {
        return h.clone();
    }
    let mut v: Vec<u32> = h.as_deref().unwrap_or(&[]).to_vec();
    let at = v.partition_point(|&x| x < id);
    v.insert(at, id);
    Some(Rc::from(v))
}

fn hs_intersect(a: &Hide, b: &Hide) -> Hide {
    match (a, b) {
        (Some(x), Some(y)) => {
            let v: Vec<u32> = x
                .iter()
                .copied()
                .filter(|i| y.binary_search(i).is_ok())
                .collect();
            if v.is_empty() {
                None
            } else {
                Some(Rc::from(v))
            }
        }
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------
// Lexer: C preprocessing tokens (ISO C §6.4), one logical line at a time.

struct RawLine {
    toks: Vec<Tok>,
    /// Byte offset of the end of the line (its `\n`, or the end of the file).
    end: u32,
    /// Byte offset where the next line starts.
    next: u32,
}

impl RawLine {
    fn is_directive(&self) -> bool {
        self.toks.first().is_some_and(|t| t.is("#"))
    }
}

struct Lexer {
    buf: Rc<str>,
    starts: Rc<[u32]>,
    file: u32,
    pos: usize,
    line: usize,
    /// An unterminated block comment, found at this offset.
    error: Option<u32>,
}

const PUNCT1: &[u8] = b"[](){}.&*+-~!/%<>^|?:;=,#";

/// Length of the longest C punctuator at the start of `b` (which starts with one of [`PUNCT1`]).
fn punct_len(b: &[u8]) -> usize {
    let c1 = b.get(1).copied().unwrap_or(0);
    let c2 = b.get(2).copied().unwrap_or(0);
    match (b[0], c1, c2) {
        (b'.', b'.', b'.') | (b'<', b'<', b'=') | (b'>', b'>', b'=') => 3,
        (b'-', b'>' | b'-' | b'=', _)
        | (b'+', b'+' | b'=', _)
        | (b'<', b'<' | b'=', _)
        | (b'>', b'>' | b'=', _)
        | (b'&', b'&' | b'=', _)
        | (b'|', b'|' | b'=', _)
        | (b'#', b'#', _)
        | (b'=' | b'!' | b'*' | b'/' | b'%' | b'^', b'=', _) => 2,
        _ => 1,
    }
}

/// A fast hasher for short identifier keys (FNV-1a); no denial-of-service concern here.
#[derive(Clone, Copy, Default)]
struct Fnv(u64);

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
}

type FnvMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<Fnv>>;

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b == b'$'
}
fn is_ident_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$'
}

impl Lexer {
    fn new(buf: Rc<str>, starts: Rc<[u32]>, file: u32) -> Lexer {
        Lexer {
            buf,
            starts,
            file,
            pos: 0,
            line: 0,
            error: None,
        }
    }

    fn bytes(&self) -> &[u8] {
        self.buf.as_bytes()
    }

    /// Length of a backslash-newline (allowing trailing blanks, as gcc does) at `i`, else 0.
    fn splice_len(&self, i: usize) -> usize {
        let b = self.bytes();
        if b.get(i) != Some(&b'\\') {
            return 0;
        }
        let mut j = i + 1;
        while matches!(b.get(j), Some(b' ' | b'\t' | b'\r')) {
            j += 1;
        }
        if b.get(j) == Some(&b'\n') {
            j + 1 - i
        } else {
            0
        }
    }

    fn skip_splices(&self, mut i: usize) -> usize {
        loop {
            let n = self.splice_len(i);
            if n == 0 {
                return i;
            }
            i += n;
        }
    }

    fn line_at(&mut self, pos: u32) -> u32 {
        while self.line + 1 < self.starts.len() && self.starts[self.line + 1] <= pos {
            self.line += 1;
        }
        self.line as u32
    }

    /// The next logical line (backslash-newlines joined, comments removed), or `None` at the end.
    fn next_line(&mut self) -> Option<RawLine> {
        let n = self.bytes().len();
        if self.pos >= n {
            return None;
        }
        let mut toks = Vec::with_capacity(16);
        let mut space = true;
        loop {
            let i = self.pos;
            let Some(&c) = self.bytes().get(i) else {
                return Some(RawLine {
                    toks,
                    end: n as u32,
                    next: n as u32,
                });
            };
            match c {
                b'\n' => {
                    self.pos = i + 1;
                    return Some(RawLine {
                        toks,
                        end: i as u32,
                        next: i as u32 + 1,
                    });
                }
                b' ' | b'\t' | b'\r' | 0x0b | 0x0c => {
                    self.pos += 1;
                    space = true;
                }
                b'\\' if self.splice_len(i) > 0 => self.pos += self.splice_len(i),
                b'/' => {
                    let j = self.skip_splices(i + 1);
                    match self.bytes().get(j) {
                        Some(b'/') => {
                            self.skip_line_comment(j + 1);
                            space = true;
                        }
                        Some(b'*') => {
                            match self.buf[j + 1..].find("*/") {
                                Some(k) => self.pos = j + 1 + k + 2,
                                None => {
                                    self.error.get_or_insert(i as u32);
                                    self.pos = n;
                                }
                            }
                            space = true;
                        }
                        _ => {
                            let t = self.token(space);
                            toks.push(t);
                            space = false;
                        }
                    }
                }
                _ => {
                    let t = self.token(space);
                    toks.push(t);
                    space = false;
                }
            }
        }
    }

    /// Skips a `//` comment body from `j` up to (not including) its newline; a backslash-newline
    /// continues the comment, as in C.
    fn skip_line_comment(&mut self, mut j: usize) {
        let n = self.bytes().len();
        loop {
            match self.buf[j..].find('\n') {
                None => {
                    self.pos = n;
                    return;
                }
                Some(k) => {
                    let nl = j + k;
                    let b = self.bytes();
                    let mut e = nl;
                    while e > j && matches!(b[e - 1], b' ' | b'\t' | b'\r') {
                        e -= 1;
                    }
                    if e > j && b[e - 1] == b'\\' {
                        j = nl + 1;
                        continue;
                    }
                    self.pos = nl;
                    return;
                }
            }
        }
    }

    /// Lexes the token at `self.pos` (not whitespace, not a comment).
    fn token(&mut self, space: bool) -> Tok {
        let start = self.pos;
        let n = self.bytes().len();
        let c = self.bytes()[start];
        let mut spliced = false;
        let (kind, end) = if is_ident_start(c) {
            let mut j = start + 1;
            loop {
                let k = self.skip_splices(j);
                match self.bytes().get(k) {
                    Some(&d) if is_ident_char(d) => {
                        spliced |= k != j;
                        j = k + 1;
                    }
                    _ => break,
                }
            }
            (Kind::Ident, j)
        } else if c.is_ascii_digit()
            || (c == b'.'
                && self
                    .bytes()
                    .get(self.skip_splices(start + 1))
                    .is_some_and(u8::is_ascii_digit))
        {
            let mut j = start + 1;
            let mut prev = c;
            loop {
                let k = self.skip_splices(j);
                let Some(&d) = self.bytes().get(k) else { break };
                let ok = d.is_ascii_alphanumeric()
                    || d == b'_'
                    || d == b'.'
                    || ((d == b'+' || d == b'-') && matches!(prev, b'e' | b'E' | b'p' | b'P'));
                if !ok {
                    break;
                }
                spliced |= k != j;
                prev = d;
                j = k + 1;
            }
            (Kind::Number, j)
        } else if c == b'"' || c == b'\'' {
            let mut j = start + 1;
            let end = loop {
                let k = self.skip_splices(j);
                spliced |= k != j;
                match self.bytes().get(k) {
                    None | Some(b'\n') => break Err(k),
                    Some(b'\\') => {
                        let k2 = self.skip_splices(k + 1);
                        spliced |= k2 != k + 1;
                        j = match self.bytes().get(k2) {
                            None | Some(b'\n') => k2,
                            Some(_) => k2 + 1,
                        };
                    }
                    Some(&q) if q == c => break Ok(k + 1),
                    Some(_) => j = k + 1,
                }
            };
            match end {
                Ok(e) => (if c == b'"' { Kind::Str } else { Kind::Char }, e),
                Err(mut e) => {
                    // An unterminated literal is, as in gcc, one token up to the end of the line:
                    // nothing in it is expanded or taken as a comment. (P4 strings may span
                    // lines; the P4 lexer sees the joined text.)
                    while e > start + 1 && self.bytes()[e - 1] == b'\r' {
                        e -= 1;
                    }
                    (Kind::Other, e)
                }
            }
        } else if PUNCT1.contains(&c) {
            let len = punct_len(&self.bytes()[start..]);
            (Kind::Punct, start + len)
        } else {
            let ch = self.buf[start..].chars().next().map_or(1, char::len_utf8);
            (Kind::Other, (start + ch).min(n))
        };
        // Keep `end` on a character boundary (a multi-byte char can follow a splice).
        let end = source::floor_char(&self.buf, end).max(start + 1);
        self.pos = end;
        let line = self.line_at(start as u32);
        let origin = Origin {
            file: self.file,
            lo: start as u32,
            hi: end as u32,
            line,
            expanded: false,
        };
        let (buf, lo, hi) = if spliced {
            let mut s = String::with_capacity(end - start);
            let mut i = start;
            while i < end {
                let k = self.splice_len(i);
                if k > 0 {
                    i += k;
                    continue;
                }
                let ch = self.buf[i..].chars().next().unwrap_or(' ');
                s.push(ch);
                i += ch.len_utf8();
            }
            let len = s.len() as u32;
            (Rc::from(s), 0, len)
        } else {
            (self.buf.clone(), start as u32, end as u32)
        };
        Tok {
            kind,
            buf,
            lo,
            hi,
            space,
            boundary: false,
            no_expand: false,
            hide: None,
            origin,
        }
    }
}

/// Lexes `s` completely; `None` if it contains an unterminated comment.
fn lex_all(s: &str) -> Option<Vec<Tok>> {
    let starts: Rc<[u32]> = Rc::from(source::line_starts(s));
    let mut lx = Lexer::new(Rc::from(s), starts, 0);
    let mut toks = Vec::new();
    while let Some(line) = lx.next_line() {
        toks.extend(line.toks);
    }
    if lx.error.is_some() {
        return None;
    }
    Some(toks)
}

// ---------------------------------------------------------------------------------------------
// Macros

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Builtin {
    Line,
    File,
}

#[derive(Debug)]
struct Macro {
    id: u32,
    /// `None` for an object-like macro.
    params: Option<Vec<Rc<str>>>,
    variadic: bool,
    body: Vec<Tok>,
    /// For each body token, the parameter it names.
    param_of: Vec<Option<usize>>,
    builtin: Option<Builtin>,
}

impl Macro {
    fn same_definition(&self, other: &Macro) -> bool {
        self.params == other.params
            && self.variadic == other.variadic
            && self.body.len() == other.body.len()
            && self
                .body
                .iter()
                .zip(&other.body)
                .enumerate()
                .all(|(i, (a, b))| a.s() == b.s() && (i == 0 || a.space == b.space))
    }
}

// ---------------------------------------------------------------------------------------------
// Output with its source map

struct Emitter {
    out: String,
    pieces: Vec<Piece>,
    cur_file: u32,
    cur_line: u32,
    /// Offset just after the last emitted token in its file, if output and source are in step.
    sync: Option<u32>,
    last_expanded: bool,
    /// The last token was a number (which `+`, `-`, `.` could extend, as in `1e+5`).
    last_number: bool,
}

fn would_paste(a: char, b: char) -> bool {
    let id = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '$' || !c.is_ascii();
    let op = |c: char| {
        matches!(
            c,
            '+' | '-'
                | '*'
                | '/'
                | '%'
                | '<'
                | '>'
                | '='
                | '!'
                | '&'
                | '|'
                | '^'
                | '~'
                | '?'
                | ':'
                | '.'
                | '#'
        )
    };
    (id(a) && id(b))
        || (a.is_ascii_digit() && b == '.')
        || (a == '.' && b.is_ascii_digit())
        || (op(a) && op(b))
}

fn blank(b: u8) -> char {
    if b == b'\t' {
        '\t'
    } else {
        ' '
    }
}

impl Emitter {
    fn new() -> Emitter {
        Emitter {
            out: String::new(),
            pieces: Vec::new(),
            cur_file: u32::MAX,
            cur_line: 0,
            sync: None,
            last_expanded: false,
            last_number: false,
        }
    }

    fn at_line_start(&self) -> bool {
        self.out.is_empty() || self.out.ends_with('\n')
    }

    /// Appends `t`; `src`/`starts` are the text and line starts of `t`'s origin file.
    fn emit(&mut self, t: &Tok, src: &str, starts: &[u32]) {
        let o = t.origin;
        let text = t.s();
        let sync = self.sync.filter(|&s| {
            !o.expanded && o.file == self.cur_file && s <= o.lo && o.line >= self.cur_line
        });
        if let Some(s) = sync {
            self.copy_gap(src.get(s as usize..o.lo as usize).unwrap_or(""));
        } else if self.cur_file != o.file || o.line > self.cur_line || self.out.is_empty() {
            if self.cur_file == o.file && o.line > self.cur_line {
                for _ in 0..(o.line - self.cur_line) {
                    self.out.push('\n');
                }
            } else if !self.at_line_start() {
                self.out.push('\n');
            }
            // Indent as in the source, so that the column is the same.
            let ls = starts.get(o.line as usize).copied().unwrap_or(0) as usize;
            let prefix = src.get(ls..(o.lo as usize).max(ls)).unwrap_or("");
            self.out.extend(prefix.bytes().map(blank));
        } else if !self.at_line_start() {
            let paste_risk = (t.boundary || o.expanded != self.last_expanded)
                && match (self.out.chars().next_back(), text.chars().next()) {
                    (Some(a), Some(b)) => {
                        would_paste(a, b) || (self.last_number && matches!(b, '+' | '-' | '.'))
                    }
                    _ => false,
                };
            if t.space || paste_risk {
                self.out.push(' ');
            }
        }
        let out = self.out.len() as u32;
        let exact = !o.expanded && src.get(o.lo as usize..o.hi as usize) == Some(text);
        if exact {
            self.piece_exact(out, o.file, o.lo);
        } else {
            self.piece(Piece {
                out,
                file: o.file,
                src: o.lo,
                len: o.hi.saturating_sub(o.lo),
                exact: false,
            });
        }
        self.out.push_str(text);
        self.cur_file = o.file;
        self.cur_line = o.line;
        if !o.expanded && (!exact || t.kind == Kind::Str) {
            // A token that spans lines (a P4 string, or one with backslash-newlines).
            self.cur_line = source::line_of(starts, o.hi.saturating_sub(1)) as u32;
        }
        self.last_number = t.kind == Kind::Number;
        self.sync = if exact { Some(o.hi) } else { None };
        self.last_expanded = o.expanded;
    }

    /// Copies the source between two tokens: verbatim if it is only whitespace, else its
    /// newlines plus blanks for the last line's part (comments, directives, skipped lines vanish).
    fn copy_gap(&mut self, gap: &str) {
        if gap
            .bytes()
            .all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        {
            self.out.push_str(gap);
            return;
        }
        match gap.rfind('\n') {
            None => self.out.extend(gap.bytes().map(blank)),
            Some(last) => {
                let nl = gap.bytes().filter(|&b| b == b'\n').count();
                self.out.extend(std::iter::repeat_n('\n', nl));
                self.out.extend(gap[last + 1..].bytes().map(blank));
            }
        }
    }

    fn piece_exact(&mut self, out: u32, file: u32, src: u32) {
        if let Some(p) = self.pieces.last() {
            if p.exact
                && p.file == file
                && out >= p.out
                && src >= p.src
                && out - p.out == src - p.src
            {
                return;
            }
        }
        self.piece(Piece {
            out,
            file,
            src,
            len: 0,
            exact: true,
        });
    }

    fn piece(&mut self, p: Piece) {
        if let Some(last) = self.pieces.last_mut() {
            if !p.exact
                && !last.exact
                && last.file == p.file
                && last.src == p.src
                && last.len == p.len
            {
                return;
            }
            if last.out == p.out {
                *last = p;
                return;
            }
        }
        self.pieces.push(p);
    }
}

// ---------------------------------------------------------------------------------------------
// The preprocessor

#[derive(Clone, Debug)]
struct Cond {
    /// The enclosing region is active.
    parent_active: bool,
    /// Some branch has been taken (so later `#elif`/`#else` are inactive).
    taken: bool,
    active: bool,
    seen_else: bool,
    directive: &'static str,
    origin: Origin,
}

struct Frame {
    file: u32,
    source: u32,
    /// Directory searched first for `#include "x"`.
    dir: PathBuf,
    lexer: Lexer,
    conds: Vec<Cond>,
    /// A line read ahead while looking for a macro's `(`.
    pending: Option<RawLine>,
    /// `file:line` of the `#include` that opened this file.
    included_from: Option<String>,
}

struct Pp {
    search: Vec<PathBuf>,
    macros: FnvMap<Rc<str>, Rc<Macro>>,
    name_ids: FnvMap<Rc<str>, u32>,
    texts: Vec<Rc<str>>,
    starts: Vec<Rc<[u32]>>,
    canon: Vec<Option<PathBuf>>,
    by_path: HashMap<PathBuf, u32>,
    files: Vec<FileEntry>,
    stack: Vec<Frame>,
    once: HashSet<u32>,
    emitter: Emitter,
    warnings: Vec<Diagnostic>,
    /// The failed pastes already warned about: (file, offset of the macro use, message).
    bad_pastes: HashSet<(u32, u32, String)>,
    in_if: bool,
    arg_depth: u32,
    expanded: u64,
    total_expanded: u64,
}

type Res<T> = Result<T, Diagnostic>;

impl Pp {
    fn new(opts: &Options) -> Pp {
        let mut search = vec![default_include_dir()];
        search.extend(opts.include_dirs.iter().cloned());
        let mut pp = Pp {
            search,
            macros: FnvMap::default(),
            name_ids: FnvMap::default(),
            texts: Vec::new(),
            starts: Vec::new(),
            canon: Vec::new(),
            by_path: HashMap::new(),
            files: Vec::new(),
            stack: Vec::new(),
            once: HashSet::new(),
            emitter: Emitter::new(),
            warnings: Vec::new(),
            bad_pastes: HashSet::new(),
            in_if: false,
            arg_depth: 0,
            expanded: 0,
            total_expanded: 0,
        };
        for (name, b) in [("__LINE__", Builtin::Line), ("__FILE__", Builtin::File)] {
            let id = pp.name_id(name);
            let m = Macro {
                id,
                params: None,
                variadic: false,
                body: Vec::new(),
                param_of: Vec::new(),
                builtin: Some(b),
            };
            pp.macros.insert(Rc::from(name), Rc::new(m));
        }
        pp
    }

    fn name_id(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.name_ids.get(name) {
            return id;
        }
        let id = self.name_ids.len() as u32;
        self.name_ids.insert(Rc::from(name), id);
        id
    }

    fn add_source(&mut self, text: String, canon: Option<PathBuf>) -> u32 {
        let id = self.texts.len() as u32;
        self.starts.push(Rc::from(source::line_starts(&text)));
        self.texts.push(Rc::from(text));
        if let Some(c) = &canon {
            self.by_path.insert(c.clone(), id);
        }
        self.canon.push(canon);
        id
    }

    fn push_frame(&mut self, name: String, source: u32, included_from: Option<String>, user: bool) {
        let file = self.files.len() as u32;
        let dir = if user {
            Path::new(&name)
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default()
        } else {
            PathBuf::new()
        };
        self.files.push(FileEntry {
            name,
            source,
            remaps: Vec::new(),
        });
        let lexer = Lexer::new(
            self.texts[source as usize].clone(),
            self.starts[source as usize].clone(),
            file,
        );
        self.stack.push(Frame {
            file,
            source,
            dir,
            lexer,
            conds: Vec::new(),
            pending: None,
            included_from,
        });
    }

    fn finish(self) -> Unit {
        let mut text = self.emitter.out;
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        let sources = self
            .texts
            .iter()
            .zip(&self.starts)
            .map(|(t, s)| SourceText {
                text: t.to_string(),
                line_starts: s.to_vec(),
            })
            .collect();
        Unit {
            text,
            sources,
            files: self.files,
            pieces: self.emitter.pieces,
            warnings: self.warnings,
        }
    }

    // --- locations and diagnostics ---

    fn location(&self, o: &Origin) -> Location {
        let entry = &self.files[o.file as usize];
        let src = entry.source as usize;
        source::location_at(entry, &self.texts[src], &self.starts[src], o.lo)
    }

    fn diag(&self, severity: Severity, o: &Origin, msg: impl Into<String>) -> Diagnostic {
        let mut d = Diagnostic::at(severity, self.location(o), msg);
        // One note per include site; a site repeated back to back (a recursive include) is one note with a count.
        let sites: Vec<String> = self
            .stack
            .iter()
            .rev()
            .filter_map(|f| f.included_from.as_ref().map(|i| i.to_string()))
            .collect();
        let mut i = 0;
        while i < sites.len() {
            let run = sites[i..].iter().take_while(|s| **s == sites[i]).count();
            let times = if run > 1 {
                format!(" ({run} times)")
            } else {
                String::new()
            };
            d = d.with_note(None, format!("in file included from {}{times}", sites[i]));
            i += run;
        }
        d
    }

    fn error(&self, o: &Origin, msg: impl Into<String>) -> Diagnostic {
        self.diag(Severity::Error, o, msg)
    }

    fn skipping(&self) -> bool {
        self.stack
            .last()
            .and_then(|f| f.conds.last())
            .is_some_and(|c| !c.active)
    }

    // --- driving ---

    fn run(&mut self) -> Res<()> {
        while !self.stack.is_empty() {
            match self.next_text_line(false)? {
                Some(line) => self.text_line(line)?,
                None => self.end_file()?,
            }
        }
        Ok(())
    }

    fn end_file(&mut self) -> Res<()> {
        if let Some(c) = self.stack.last().and_then(|f| f.conds.last()) {
            return Err(self.error(&c.origin, format!("unterminated #{}", c.directive)));
        }
        self.stack.pop();
        Ok(())
    }

    /// The next line of the current file, or `None` at its end.
    fn read_line(&mut self) -> Res<Option<RawLine>> {
        let Some(f) = self.stack.last_mut() else {
            return Ok(None);
        };
        if let Some(l) = f.pending.take() {
            return Ok(Some(l));
        }
        let line = f.lexer.next_line();
        if let Some(at) = f.lexer.error.take() {
            let o = Origin {
                file: f.file,
                lo: at,
                hi: at + 2,
                line: 0,
                expanded: false,
            };
            return Err(self.error(&o, "unterminated comment"));
        }
        Ok(line)
    }

    /// The next active non-directive line of the current file (directives on the way are
    /// carried out), or `None` at the end of the file.
    fn next_text_line(&mut self, in_args: bool) -> Res<Option<RawLine>> {
        loop {
            let Some(line) = self.read_line()? else {
                return Ok(None);
            };
            if line.is_directive() {
                self.directive(line, in_args)?;
                continue;
            }
            if line.toks.is_empty() || self.skipping() {
                continue;
            }
            return Ok(Some(line));
        }
    }

    fn text_line(&mut self, line: RawLine) -> Res<()> {
        self.expanded = 0;
        let mut q: VecDeque<Tok> = line.toks.into();
        let mut out = Vec::with_capacity(q.len());
        self.expand(&mut q, true, &mut out)?;
        for t in &out {
            let src = self.files[t.origin.file as usize].source as usize;
            self.emitter.emit(t, &self.texts[src], &self.starts[src]);
        }
        Ok(())
    }

    // --- macro expansion ---

    /// Expands macros in `q` into `out`. With `pull`, a function-like macro's `(` and arguments
    /// may come from the following lines of the current file.
    fn expand(&mut self, q: &mut VecDeque<Tok>, pull: bool, out: &mut Vec<Tok>) -> Res<()> {
        while let Some(mut t) = q.pop_front() {
            if t.kind != Kind::Ident || t.no_expand {
                out.push(t);
                continue;
            }
            if self.in_if && t.s() == "defined" {
                // The operand of `defined` is not expanded.
                match q.front_mut() {
                    Some(n) if n.kind == Kind::Ident => n.no_expand = true,
                    Some(n) if n.is("(") => {
                        if let Some(m) = q.get_mut(1).filter(|m| m.kind == Kind::Ident) {
                            m.no_expand = true;
                        }
                    }
                    _ => {}
                }
                out.push(t);
                continue;
            }
            let Some(m) = self.macros.get(t.s()).cloned() else {
                out.push(t);
                continue;
            };
            if hs_contains(&t.hide, m.id) {
                t.no_expand = true;
                out.push(t);
                continue;
            }
            if let Some(b) = m.builtin {
                out.push(self.builtin(b, &t));
                continue;
            }
            let body = match &m.params {
                None => {
                    let hs = hs_add(&t.hide, m.id);
                    self.subst(&m, &[], hs, &t, &t)?
                }
                Some(_) => {
                    if q.is_empty() && pull {
                        self.pull_for_paren(q)?;
                    }
                    if !q.front().is_some_and(|n| n.is("(")) {
                        out.push(t);
                        continue;
                    }
                    q.pop_front();
                    let (args, rparen) = self.collect_args(&m, &t, q, pull)?;
                    let hs = hs_add(&hs_intersect(&t.hide, &rparen.hide), m.id);
                    self.subst(&m, &args, hs, &t, &rparen)?
                }
            };
            self.expanded += body.len() as u64 + 1;
            self.total_expanded += body.len() as u64 + 1;
            if self.expanded > MAX_EXPANSION_TOKENS {
                return Err(self.error(
                    &t.origin,
                    "macro expansion too large (more than 1048576 tokens in one line)",
                ));
            }
            if self.total_expanded > MAX_TOTAL_EXPANSION_TOKENS {
                return Err(self.error(
                    &t.origin,
                    "macro expansion too large (more than 4194304 tokens in the program)",
                ));
            }
            // The token after the macro use starts a new context, too.
            if let Some(n) = q.front_mut() {
                n.boundary = true;
            }
            for b in body.into_iter().rev() {
                q.push_front(b);
            }
        }
        Ok(())
    }

    /// Reads ahead for a function-like macro's `(`: the next non-empty line, unless it is a
    /// directive or the end of the file.
    fn pull_for_paren(&mut self, q: &mut VecDeque<Tok>) -> Res<()> {
        loop {
            let Some(line) = self.read_line()? else {
                return Ok(());
            };
            if line.is_directive() {
                if let Some(f) = self.stack.last_mut() {
                    f.pending = Some(line);
                }
                return Ok(());
            }
            if !line.toks.is_empty() {
                q.extend(line.toks);
                return Ok(());
            }
        }
    }

    fn collect_args(
        &mut self,
        m: &Macro,
        name: &Tok,
        q: &mut VecDeque<Tok>,
        pull: bool,
    ) -> Res<(Vec<Vec<Tok>>, Tok)> {
        let nparams = m.params.as_ref().map_or(0, Vec::len);
        let mut args: Vec<Vec<Tok>> = vec![Vec::new()];
        let mut depth = 0u32;
        let rparen = loop {
            if q.is_empty() && pull {
                if let Some(line) = self.next_text_line(true)? {
                    q.extend(line.toks);
                }
            }
            let Some(t) = q.pop_front() else {
                return Err(self.error(
                    &name.origin,
                    format!("unterminated argument list invoking macro \"{}\"", name.s()),
                ));
            };
            if t.is("(") {
                depth += 1;
            } else if t.is(")") {
                if depth == 0 {
                    break t;
                }
                depth -= 1;
            } else if t.is(",") && depth == 0 && !(m.variadic && args.len() == nparams) {
                args.push(Vec::new());
                continue;
            }
            if let Some(a) = args.last_mut() {
                a.push(t);
            }
        };
        if nparams == 0 && args.len() == 1 && args[0].is_empty() {
            args.clear();
        }
        if args.len() + 1 == nparams && m.variadic {
            args.push(Vec::new());
        }
        if args.len() < nparams {
            let msg = format!(
                "macro \"{}\" requires {} arguments, but only {} given",
                name.s(),
                nparams,
                args.len()
            );
            return Err(self.error(&name.origin, msg));
        }
        if args.len() > nparams {
            let msg = format!(
                "macro \"{}\" passed {} arguments, but takes just {}",
                name.s(),
                args.len(),
                nparams
            );
            return Err(self.error(&name.origin, msg));
        }
        Ok((args, rparen))
    }

    fn expand_arg(&mut self, arg: &[Tok], at: &Origin) -> Res<Vec<Tok>> {
        if self.arg_depth >= MAX_ARG_NESTING {
            return Err(self.error(at, "macro arguments nested too deeply"));
        }
        self.arg_depth += 1;
        let mut q: VecDeque<Tok> = arg.iter().cloned().collect();
        let mut out = Vec::with_capacity(arg.len());
        let r = self.expand(&mut q, false, &mut out);
        self.arg_depth -= 1;
        r.map(|()| out)
    }

    /// The replacement of one macro use (ISO C §6.10.3.1–3): arguments substituted (expanded
    /// unless next to `#`/`##`), `#` stringified, `##` pasted; every token gets hide set `hs`.
    fn subst(
        &mut self,
        m: &Macro,
        args: &[Vec<Tok>],
        hs: Hide,
        name: &Tok,
        rparen: &Tok,
    ) -> Res<Vec<Tok>> {
        let use_origin = if name.origin.expanded {
            name.origin
        } else {
            let same_line = !rparen.origin.expanded
                && rparen.origin.file == name.origin.file
                && rparen.origin.line == name.origin.line;
            let hi = if same_line {
                rparen.origin.hi.max(name.origin.hi)
            } else {
                name.origin.hi
            };
            Origin {
                hi,
                expanded: true,
                ..name.origin
            }
        };
        let function_like = m.params.is_some();
        let nparams = m.params.as_ref().map_or(0, Vec::len);
        let body = &m.body;
        let pm = |like: &Tok| Tok::synth(Kind::Placemarker, "", like);
        let mut expanded: Vec<Option<Vec<Tok>>> = vec![None; args.len()];
        let mut res: Vec<Tok> = Vec::with_capacity(body.len());
        let mut boundary_next = false;
        let mut i = 0;
        while i < body.len() {
            let b = &body[i];
            let stringify_at = |j: usize| {
                function_like
                    && body[j].is("#")
                    && m.param_of.get(j + 1).copied().flatten().is_some()
            };
            if stringify_at(i) {
                let p = m.param_of[i + 1].unwrap_or(0);
                let mut t = Tok::synth(
                    Kind::Str,
                    &stringify(args.get(p).map_or(&[], Vec::as_slice)),
                    b,
                );
                t.boundary = boundary_next;
                boundary_next = false;
                res.push(t);
                i += 2;
                continue;
            }
            if b.is("##") && i + 1 < body.len() {
                i += 1;
                let rhs: Vec<Tok> = if let Some(p) = m.param_of[i] {
                    let arg = args.get(p).map_or(&[][..], Vec::as_slice);
                    // GNU `, ## __VA_ARGS__`: drop the comma if there are no variable arguments.
                    if m.variadic && p + 1 == nparams && res.last().is_some_and(|t| t.is(",")) {
                        if arg.is_empty() {
                            res.pop();
                        } else {
                            res.extend(arg.iter().cloned());
                        }
                        i += 1;
                        boundary_next = true;
                        continue;
                    }
                    if arg.is_empty() {
                        vec![pm(&body[i])]
                    } else {
                        arg.to_vec()
                    }
                } else if stringify_at(i) {
                    let p = m.param_of[i + 1].unwrap_or(0);
                    i += 1;
                    vec![Tok::synth(
                        Kind::Str,
                        &stringify(args.get(p).map_or(&[], Vec::as_slice)),
                        &body[i - 1],
                    )]
                } else {
                    vec![body[i].clone()]
                };
                i += 1;
                let lhs = res.pop().unwrap_or_else(|| pm(b));
                let mut rhs = rhs.into_iter();
                let first = rhs.next().unwrap_or_else(|| pm(b));
                match self.paste(&lhs, &first, &use_origin) {
                    Some(pasted) => res.push(pasted),
                    None => {
                        res.push(lhs);
                        let mut kept = first;
                        kept.boundary = true;
                        res.push(kept);
                    }
                }
                res.extend(rhs);
                boundary_next = true;
                continue;
            }
            if let Some(p) = m.param_of[i] {
                let next_is_paste = body.get(i + 1).is_some_and(|t| t.is("##"));
                let arg = args.get(p).map_or(&[][..], Vec::as_slice);
                let mut toks = if next_is_paste {
                    if arg.is_empty() {
                        vec![pm(b)]
                    } else {
                        arg.to_vec()
                    }
                } else {
                    if expanded[p].is_none() {
                        expanded[p] = Some(self.expand_arg(arg, &name.origin)?);
                    }
                    expanded[p].clone().unwrap_or_default()
                };
                if let Some(f) = toks.first_mut() {
                    f.space = b.space;
                    f.boundary = true;
                }
                res.extend(toks);
                boundary_next = true;
                i += 1;
                continue;
            }
            let mut t = b.clone();
            t.boundary = boundary_next;
            boundary_next = false;
            res.push(t);
            i += 1;
        }
        res.retain(|t| t.kind != Kind::Placemarker);
        for t in &mut res {
            t.origin = use_origin;
            t.hide = hs_union(&t.hide, &hs);
        }
        if let Some(f) = res.first_mut() {
            f.space = name.space;
            f.boundary = true;
        }
        Ok(res)
    }

    /// `lhs ## rhs` (ISO C §6.10.3.3): the one token their spellings make together. When they make
    /// no single preprocessing token the behaviour is undefined; GNU cpp keeps both tokens, apart,
    /// and goes on (as p4c runs it, `-x assembler-with-cpp`, silently; for C it reports the paste).
    /// nevermiss does the same and warns once per paste and macro use: `None`, both tokens kept.
    fn paste(&mut self, lhs: &Tok, rhs: &Tok, at: &Origin) -> Option<Tok> {
        if lhs.kind == Kind::Placemarker {
            return Some(rhs.clone());
        }
        if rhs.kind == Kind::Placemarker {
            return Some(lhs.clone());
        }
        let text = format!("{}{}", lhs.s(), rhs.s());
        if let Some([t]) = lex_all(&text).as_deref() {
            if t.hi as usize == text.len() {
                let mut r = Tok::synth(t.kind, &text, lhs);
                r.hide = hs_intersect(&lhs.hide, &rhs.hide);
                return Some(r);
            }
        }
        let msg = format!(
            "pasting \"{}\" and \"{}\" does not give a valid preprocessing token",
            lhs.s(),
            rhs.s()
        );
        if self.bad_pastes.insert((at.file, at.lo, msg.clone())) {
            let d = self.diag(Severity::Warning, at, msg);
            self.warnings.push(d);
        }
        None
    }

    fn builtin(&self, b: Builtin, t: &Tok) -> Tok {
        let o = t.origin;
        let entry = &self.files[o.file as usize];
        let line = source::line_of(&self.starts[entry.source as usize], o.lo) as u32 + 1;
        let (file, line) = source::present(entry, o.lo, line);
        let mut r = match b {
            Builtin::Line => Tok::synth(Kind::Number, &line.to_string(), t),
            Builtin::File => Tok::synth(Kind::Str, &quote(&file), t),
        };
        r.origin.expanded = true;
        r.boundary = true;
        r
    }

    // --- directives (ISO C §6.10) ---

    fn directive(&mut self, line: RawLine, in_args: bool) -> Res<()> {
        let toks = &line.toks;
        let Some(name_tok) = toks.get(1) else {
            return Ok(());
        }; // the null directive
        let name = match name_tok.kind {
            Kind::Ident => name_tok.s(),
            Kind::Number => "line",
            _ if self.skipping() => return Ok(()),
            _ => {
                return Err(self.error(
                    &name_tok.origin,
                    format!("invalid preprocessing directive #{}", name_tok.s()),
                ))
            }
        };
        let hash = toks[0].origin;
        let rest = &toks[2.min(toks.len())..];
        // `# 33 "file"` is a line marker: the number is the first operand.
        let rest = if name_tok.kind == Kind::Number {
            &toks[1..]
        } else {
            rest
        };
        match name {
            "if" => return self.dir_if("if", rest, hash),
            "ifdef" => return self.dir_if("ifdef", rest, hash),
            "ifndef" => return self.dir_if("ifndef", rest, hash),
            "elif" => return self.dir_else("elif", rest, hash),
            "else" => return self.dir_else("else", rest, hash),
            "endif" => return self.dir_else("endif", rest, hash),
            "elifdef" => return self.dir_else("elifdef", rest, hash),
            "elifndef" => return self.dir_else("elifndef", rest, hash),
            _ => {}
        }
        if self.skipping() {
            return Ok(());
        }
        match name {
            "define" => self.dir_define(rest, hash),
            "undef" => {
                let n = self.macro_name(rest, "undef", &hash)?;
                self.macros.remove(n.s());
                Ok(())
            }
            "include" if in_args => {
                Err(self.error(&hash, "#include inside macro arguments is not supported"))
            }
            "include" => self.dir_include(rest, &line, hash),
            "line" => self.dir_line(rest, &line, &hash),
            "error" => Err(self.error(&hash, directive_message(rest, "#error"))),
            "warning" => {
                let d = self.diag(
                    Severity::Warning,
                    &hash,
                    directive_message(rest, "#warning"),
                );
                self.warnings.push(d);
                Ok(())
            }
            "pragma" => {
                if rest.first().is_some_and(|t| t.s() == "once") {
                    if let Some(f) = self.stack.last() {
                        self.once.insert(f.source);
                    }
                } else if !in_args {
                    // Passed through unchanged, on a line of its own.
                    for t in toks {
                        let src = self.files[t.origin.file as usize].source as usize;
                        self.emitter.emit(t, &self.texts[src], &self.starts[src]);
                    }
                }
                Ok(())
            }
            "ident" | "sccs" => Ok(()),
            _ => Err(self.error(
                &name_tok.origin,
                format!("invalid preprocessing directive #{name}"),
            )),
        }
    }

    fn macro_name<'t>(&self, rest: &'t [Tok], directive: &str, at: &Origin) -> Res<&'t Tok> {
        match rest.first() {
            None => Err(self.error(at, format!("no macro name given in #{directive} directive"))),
            Some(t) if t.kind != Kind::Ident => {
                Err(self.error(&t.origin, "macro names must be identifiers"))
            }
            Some(t) if t.s() == "defined" => {
                Err(self.error(&t.origin, "\"defined\" cannot be used as a macro name"))
            }
            Some(t) => Ok(t),
        }
    }

    fn dir_if(&mut self, name: &'static str, rest: &[Tok], hash: Origin) -> Res<()> {
        let parent_active = !self.skipping();
        let active = if !parent_active {
            false
        } else if name == "if" {
            self.eval_if(rest, &hash, "#if")?
        } else {
            let n = self.macro_name(rest, name, &hash)?;
            self.macros.contains_key(n.s()) == (name == "ifdef")
        };
        let c = Cond {
            parent_active,
            taken: active || !parent_active,
            active,
            seen_else: false,
            directive: name,
            origin: hash,
        };
        if let Some(f) = self.stack.last_mut() {
            f.conds.push(c);
        }
        Ok(())
    }

    fn dir_else(&mut self, name: &'static str, rest: &[Tok], hash: Origin) -> Res<()> {
        let Some(c) = self.stack.last().and_then(|f| f.conds.last()).cloned() else {
            let msg = if name == "endif" {
                "#endif without #if".to_string()
            } else {
                format!("#{name} without #if")
            };
            return Err(self.error(&hash, msg));
        };
        if name == "endif" {
            if let Some(f) = self.stack.last_mut() {
                f.conds.pop();
            }
            return Ok(());
        }
        if c.seen_else {
            return Err(self.error(&hash, format!("#{name} after #else")));
        }
        let mut c = c;
        match name {
            "else" => {
                c.active = c.parent_active && !c.taken;
                c.taken = true;
                c.seen_else = true;
            }
            _ => {
                c.active = if c.taken {
                    false
                } else if name == "elif" {
                    self.eval_if(rest, &hash, "#elif")?
                } else {
                    let n = self.macro_name(rest, name, &hash)?;
                    self.macros.contains_key(n.s()) == (name == "elifdef")
                };
                c.taken |= c.active;
            }
        }
        if let Some(f) = self.stack.last_mut() {
            if let Some(top) = f.conds.last_mut() {
                *top = c;
            }
        }
        Ok(())
    }

    fn eval_if(&mut self, rest: &[Tok], hash: &Origin, what: &str) -> Res<bool> {
        if rest.is_empty() {
            return Err(self.error(hash, format!("{what} with no expression")));
        }
        self.in_if = true;
        let mut q: VecDeque<Tok> = rest.iter().cloned().collect();
        let mut toks = Vec::new();
        let r = self.expand(&mut q, false, &mut toks);
        self.in_if = false;
        r?;
        let mut ev = Eval {
            toks: &toks,
            pos: 0,
            macros: &self.macros,
            depth: 0,
        };
        match ev.run() {
            Ok(v) => Ok(v.v != 0),
            Err((at, msg)) => {
                let o = toks.get(at).map_or(*hash, |t| t.origin);
                Err(self.error(&o, msg))
            }
        }
    }

    fn dir_define(&mut self, rest: &[Tok], hash: Origin) -> Res<()> {
        let name = self.macro_name(rest, "define", &hash)?.clone();
        let mut i = 1;
        let mut params = None;
        let mut variadic = false;
        if rest.get(1).is_some_and(|t| t.is("(") && !t.space) {
            let mut ps: Vec<Rc<str>> = Vec::new();
            i = 2;
            let mut expect_name = true;
            loop {
                let Some(t) = rest.get(i) else {
                    return Err(self.error(&name.origin, "missing ')' in macro parameter list"));
                };
                i += 1;
                if t.is(")") && (!expect_name || ps.is_empty()) {
                    break;
                }
                if expect_name && t.is("...") {
                    variadic = true;
                    ps.push(Rc::from("__VA_ARGS__"));
                    if !rest.get(i).is_some_and(|t| t.is(")")) {
                        return Err(self.error(
                            &t.origin,
                            "missing ')' after \"...\" in macro parameter list",
                        ));
                    }
                    i += 1;
                    break;
                }
                if expect_name && t.kind == Kind::Ident {
                    if ps.iter().any(|p| &**p == t.s()) {
                        return Err(self.error(
                            &t.origin,
                            format!("duplicate macro parameter \"{}\"", t.s()),
                        ));
                    }
                    ps.push(Rc::from(t.s()));
                    expect_name = false;
                    // GNU named variadic parameter: `args...`
                    if rest.get(i).is_some_and(|t| t.is("...")) {
                        variadic = true;
                        if !rest.get(i + 1).is_some_and(|t| t.is(")")) {
                            return Err(self.error(
                                &t.origin,
                                "missing ')' after \"...\" in macro parameter list",
                            ));
                        }
                        i += 2;
                        break;
                    }
                    continue;
                }
                if !expect_name && t.is(",") {
                    expect_name = true;
                    continue;
                }
                return Err(self.error(
                    &t.origin,
                    format!("expected parameter name, found \"{}\"", t.s()),
                ));
            }
            params = Some(ps);
        }
        let mut body: Vec<Tok> = rest[i.min(rest.len())..].to_vec();
        if let Some(f) = body.first_mut() {
            f.space = false;
        }
        let param_of: Vec<Option<usize>> = body
            .iter()
            .map(|t| {
                let ps = params.as_ref()?;
                if t.kind != Kind::Ident {
                    return None;
                }
                ps.iter().position(|p| &**p == t.s())
            })
            .collect();
        if let (Some(f), Some(l)) = (body.first(), body.last()) {
            if f.is("##") || l.is("##") {
                let at = if f.is("##") { f } else { l };
                return Err(self.error(
                    &at.origin,
                    "'##' cannot appear at either end of a macro expansion",
                ));
            }
        }
        if params.is_some() {
            for (j, t) in body.iter().enumerate() {
                if t.is("#") && param_of.get(j + 1).copied().flatten().is_none() {
                    return Err(self.error(&t.origin, "'#' is not followed by a macro parameter"));
                }
            }
        }
        let id = self.name_id(name.s());
        let m = Macro {
            id,
            params,
            variadic,
            body,
            param_of,
            builtin: None,
        };
        if let Some(old) = self.macros.get(name.s()) {
            if old.builtin.is_some() || !old.same_definition(&m) {
                let d = self.diag(
                    Severity::Warning,
                    &name.origin,
                    format!("\"{}\" redefined", name.s()),
                );
                self.warnings.push(d);
            }
        }
        self.macros.insert(Rc::from(name.s()), Rc::new(m));
        Ok(())
    }

    fn dir_include(&mut self, rest: &[Tok], line: &RawLine, hash: Origin) -> Res<()> {
        let bad = || "#include expects \"FILENAME\" or <FILENAME>";
        let Some(first) = rest.first() else {
            return Err(self.error(&hash, bad()));
        };
        let (name, quoted, at) = if first.kind == Kind::Str {
            (
                first.s()[1..first.s().len() - 1].to_string(),
                true,
                first.origin,
            )
        } else if first.is("<") && !first.origin.expanded {
            // A header name: the raw text up to `>` on this line.
            let f = &self.files[first.origin.file as usize];
            let text = &self.texts[f.source as usize];
            let raw = text
                .get(first.origin.hi as usize..line.end as usize)
                .unwrap_or("");
            match raw.find('>') {
                Some(k) => (raw[..k].to_string(), false, first.origin),
                None => return Err(self.error(&first.origin, "missing terminating > character")),
            }
        } else {
            let mut q: VecDeque<Tok> = rest.iter().cloned().collect();
            let mut toks = Vec::new();
            self.expand(&mut q, false, &mut toks)?;
            match toks.first() {
                Some(t) if t.kind == Kind::Str => {
                    (t.s()[1..t.s().len() - 1].to_string(), true, first.origin)
                }
                Some(t) if t.is("<") => {
                    let mut s = String::new();
                    let mut closed = false;
                    for (k, t) in toks[1..].iter().enumerate() {
                        if t.is(">") {
                            closed = true;
                            break;
                        }
                        if k > 0 && t.space {
                            s.push(' ');
                        }
                        s.push_str(t.s());
                    }
                    if !closed {
                        return Err(self.error(&first.origin, "missing terminating > character"));
                    }
                    (s, false, first.origin)
                }
                _ => return Err(self.error(&first.origin, bad())),
            }
        };
        if name.is_empty() {
            return Err(self.error(&at, "empty filename in #include"));
        }
        let Some(frame) = self.stack.last() else {
            return Ok(());
        };
        let mut dirs: Vec<PathBuf> = Vec::new();
        if quoted {
            dirs.push(frame.dir.clone());
        }
        dirs.extend(self.search.iter().cloned());
        let found = if Path::new(&name).is_absolute() {
            Some(PathBuf::from(&name)).filter(|p| p.is_file())
        } else {
            dirs.iter().map(|d| d.join(&name)).find(|p| p.is_file())
        };
        let Some(path) = found else {
            let searched: Vec<String> = dirs
                .iter()
                .map(|d| {
                    if d.as_os_str().is_empty() {
                        ".".into()
                    } else {
                        d.display().to_string()
                    }
                })
                .collect();
            return Err(self
                .error(&at, format!("include file \"{name}\" not found"))
                .with_note(None, format!("searched: {}", searched.join(", "))));
        };
        let canon = std::fs::canonicalize(&path).ok();
        let known = canon.as_ref().and_then(|c| self.by_path.get(c)).copied();
        if known.is_some_and(|s| self.once.contains(&s)) {
            return Ok(());
        }
        if self.stack.len() > MAX_INCLUDE_DEPTH {
            let mut d = self.error(
                &at,
                format!("#include nested more than {MAX_INCLUDE_DEPTH} levels deep"),
            );
            if let Some(s) = known {
                if let Some(k) = self.stack.iter().position(|f| f.source == s) {
                    let chain: Vec<&str> = self.stack[k..]
                        .iter()
                        .map(|f| self.files[f.file as usize].name.as_str())
                        .collect();
                    d = d.with_note(
                        None,
                        format!(
                            "include cycle: {} -> {}",
                            chain.join(" -> "),
                            path.display()
                        ),
                    );
                }
            }
            return Err(d);
        }
        let source = match known {
            Some(s) => s,
            None => match std::fs::read(&path) {
                Ok(bytes) => self.add_source(decode(&bytes), canon),
                Err(e) => {
                    let msg = format!(
                        "cannot read include file \"{}\": {}",
                        path.display(),
                        io_message(&e)
                    );
                    return Err(self.error(&at, msg));
                }
            },
        };
        let loc = self.location(&hash);
        let from = format!("{}:{}", loc.file, loc.line);
        self.push_frame(
            path.to_string_lossy().into_owned(),
            source,
            Some(from),
            true,
        );
        Ok(())
    }

    fn dir_line(&mut self, rest: &[Tok], line: &RawLine, hash: &Origin) -> Res<()> {
        let mut q: VecDeque<Tok> = rest.iter().cloned().collect();
        let mut toks = Vec::new();
        self.expand(&mut q, false, &mut toks)?;
        let Some(num) = toks.first() else {
            return Err(self.error(hash, "#line directive requires a line number"));
        };
        let n: Option<u32> =
            if num.kind == Kind::Number && num.s().bytes().all(|b| b.is_ascii_digit()) {
                num.s().parse().ok()
            } else {
                None
            };
        let Some(n) = n else {
            return Err(self.error(
                &num.origin,
                format!("\"{}\" after #line is not a positive integer", num.s()),
            ));
        };
        let name = match toks.get(1) {
            None => None,
            Some(t) if t.kind == Kind::Str => Some(unescape(&t.s()[1..t.s().len() - 1])),
            Some(t) => {
                return Err(self.error(
                    &t.origin,
                    format!("invalid filename \"{}\" in #line", t.s()),
                ))
            }
        };
        let Some(f) = self.stack.last() else {
            return Ok(());
        };
        let next_line = source::line_of(&self.starts[f.source as usize], line.next) as i64 + 1;
        let (file, next) = (f.file as usize, line.next);
        self.files[file].remaps.push(Remap {
            from: next,
            delta: i64::from(n) - next_line,
            name,
        });
        Ok(())
    }
}

/// The message of `#error`/`#warning`: its tokens as written, single-spaced.
fn directive_message(rest: &[Tok], default: &str) -> String {
    let mut s = String::new();
    for (k, t) in rest.iter().enumerate() {
        if k > 0 && t.space {
            s.push(' ');
        }
        s.push_str(t.s());
    }
    if s.is_empty() {
        default.to_string()
    } else {
        s
    }
}

/// `#x`: the spelling of `arg` as a string literal (ISO C §6.10.3.2).
fn stringify(arg: &[Tok]) -> String {
    let mut s = String::from("\"");
    for (k, t) in arg.iter().enumerate() {
        if k > 0 && t.space {
            s.push(' ');
        }
        if matches!(t.kind, Kind::Str | Kind::Char) {
            for c in t.s().chars() {
                if c == '"' || c == '\\' {
                    s.push('\\');
                }
                s.push(c);
            }
        } else {
            s.push_str(t.s());
        }
    }
    s.push('"');
    s
}

fn quote(s: &str) -> String {
    let mut q = String::from("\"");
    for c in s.chars() {
        if c == '"' || c == '\\' {
            q.push('\\');
        }
        q.push(c);
    }
    q.push('"');
    q
}

fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(n) = chars.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// `#if` expressions (ISO C §6.10.1, §6.6): intmax_t/uintmax_t arithmetic.

#[derive(Clone, Copy, Debug)]
struct Val {
    v: i64,
    unsigned: bool,
}

impl Val {
    fn int(v: i64) -> Val {
        Val { v, unsigned: false }
    }
}

struct Eval<'a> {
    toks: &'a [Tok],
    pos: usize,
    macros: &'a FnvMap<Rc<str>, Rc<Macro>>,
    depth: u32,
}

type EvalRes<T> = Result<T, (usize, String)>;

fn binary_prec(op: &str) -> Option<u8> {
    Some(match op {
        "||" => 1,
        "&&" => 2,
        "|" => 3,
        "^" => 4,
        "&" => 5,
        "==" | "!=" => 6,
        "<" | ">" | "<=" | ">=" => 7,
        "<<" | ">>" => 8,
        "+" | "-" => 9,
        "*" | "/" | "%" => 10,
        _ => return None,
    })
}

impl Eval<'_> {
    fn run(&mut self) -> EvalRes<Val> {
        let v = self.comma(true)?;
        match self.toks.get(self.pos) {
            None => Ok(v),
            Some(t) if t.is(")") => Err((self.pos, "missing '(' in expression".into())),
            Some(t) => Err((
                self.pos,
                format!("missing binary operator before token \"{}\"", t.s()),
            )),
        }
    }

    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn peek_punct(&self) -> Option<&str> {
        self.peek().filter(|t| t.kind == Kind::Punct).map(Tok::s)
    }

    fn comma(&mut self, eval: bool) -> EvalRes<Val> {
        let mut v = self.cond(eval)?;
        while self.peek_punct() == Some(",") {
            self.pos += 1;
            v = self.cond(eval)?;
        }
        Ok(v)
    }

    fn cond(&mut self, eval: bool) -> EvalRes<Val> {
        self.depth += 1;
        if self.depth > MAX_EXPR_DEPTH {
            return Err((self.pos, "#if expression nested too deeply".into()));
        }
        let c = self.binary(1, eval)?;
        let r = if self.peek_punct() == Some("?") {
            self.pos += 1;
            let a = self.comma(eval && c.v != 0)?;
            if self.peek_punct() != Some(":") {
                return Err((self.pos, "'?' without following ':'".into()));
            }
            self.pos += 1;
            let b = self.cond(eval && c.v == 0)?;
            let unsigned = a.unsigned || b.unsigned;
            Val {
                v: if c.v != 0 { a.v } else { b.v },
                unsigned,
            }
        } else {
            c
        };
        self.depth -= 1;
        Ok(r)
    }

    fn binary(&mut self, min: u8, eval: bool) -> EvalRes<Val> {
        let mut lhs = self.unary(eval)?;
        loop {
            let Some(op) = self.peek_punct() else {
                return Ok(lhs);
            };
            let Some(prec) = binary_prec(op) else {
                return Ok(lhs);
            };
            if prec < min {
                return Ok(lhs);
            }
            let op_at = self.pos;
            let op = op.to_string();
            self.pos += 1;
            if self.peek().is_none() {
                return Err((op_at, format!("operator '{op}' has no right operand")));
            }
            let rhs_eval = match op.as_str() {
                "&&" => eval && lhs.v != 0,
                "||" => eval && lhs.v == 0,
                _ => eval,
            };
            let rhs = self.binary(prec + 1, rhs_eval)?;
            lhs = apply(&op, lhs, rhs, eval).map_err(|m| (op_at, m))?;
        }
    }

    fn unary(&mut self, eval: bool) -> EvalRes<Val> {
        self.depth += 1;
        if self.depth > MAX_EXPR_DEPTH {
            return Err((self.pos, "#if expression nested too deeply".into()));
        }
        let r = self.unary_inner(eval);
        self.depth -= 1;
        r
    }

    fn unary_inner(&mut self, eval: bool) -> EvalRes<Val> {
        let at = self.pos;
        let toks = self.toks;
        let Some(t) = toks.get(at) else {
            return Err((at.saturating_sub(1), "#if with no expression".into()));
        };
        match t.kind {
            Kind::Punct => {
                let op = t.s();
                self.pos += 1;
                match op {
                    "(" => {
                        let v = self.comma(eval)?;
                        if self.peek_punct() != Some(")") {
                            return Err((at, "missing ')' in expression".into()));
                        }
                        self.pos += 1;
                        Ok(v)
                    }
                    "+" => self.unary(eval),
                    "-" => {
                        let v = self.unary(eval)?;
                        Ok(Val {
                            v: v.v.wrapping_neg(),
                            ..v
                        })
                    }
                    "~" => {
                        let v = self.unary(eval)?;
                        Ok(Val { v: !v.v, ..v })
                    }
                    "!" => {
                        let v = self.unary(eval)?;
                        Ok(Val::int(i64::from(v.v == 0)))
                    }
                    _ => Err((
                        at,
                        format!("token \"{op}\" is not valid in preprocessor expressions"),
                    )),
                }
            }
            Kind::Number => {
                self.pos += 1;
                parse_int(t.s()).map_err(|m| (at, m))
            }
            Kind::Char => {
                self.pos += 1;
                parse_char(t.s()).map_err(|m| (at, m))
            }
            Kind::Ident if t.s() == "defined" => {
                self.pos += 1;
                let paren = self.peek_punct() == Some("(");
                if paren {
                    self.pos += 1;
                }
                let Some(n) = toks.get(self.pos).filter(|n| n.kind == Kind::Ident) else {
                    return Err((at, "operator \"defined\" requires an identifier".into()));
                };
                let defined = self.macros.contains_key(n.s());
                self.pos += 1;
                if paren {
                    if self.peek_punct() != Some(")") {
                        return Err((at, "missing ')' after \"defined\"".into()));
                    }
                    self.pos += 1;
                }
                Ok(Val::int(i64::from(defined)))
            }
            // Identifiers left after expansion (and `true`/`false`) are 0.
            Kind::Ident => {
                self.pos += 1;
                Ok(Val::int(0))
            }
            _ => Err((
                at,
                format!(
                    "token \"{}\" is not valid in preprocessor expressions",
                    t.s()
                ),
            )),
        }
    }
}

fn apply(op: &str, a: Val, b: Val, eval: bool) -> Result<Val, String> {
    let unsigned = a.unsigned || b.unsigned;
    let (x, y) = (a.v, b.v);
    let (ux, uy) = (x as u64, y as u64);
    let arith = |v: i64| Val { v, unsigned };
    let boolean = |c: bool| Val::int(i64::from(c));
    Ok(match op {
        "*" => arith(x.wrapping_mul(y)),
        "/" | "%" => {
            if y == 0 {
                if eval {
                    return Err("division by zero in #if".into());
                }
                return Ok(arith(0));
            }
            let v = match (op, unsigned) {
                ("/", true) => (ux / uy) as i64,
                ("%", true) => (ux % uy) as i64,
                ("/", false) => x.wrapping_div(y),
                _ => x.wrapping_rem(y),
            };
            arith(v)
        }
        "+" => arith(x.wrapping_add(y)),
        "-" => arith(x.wrapping_sub(y)),
        "<<" | ">>" => {
            // The result has the left operand's type.
            let left = op == "<<";
            let (left, n) = if !b.unsigned && y < 0 {
                (!left, y.unsigned_abs())
            } else {
                (left, uy)
            };
            let v = if left {
                if n >= 64 {
                    0
                } else {
                    x.wrapping_shl(n as u32)
                }
            } else if a.unsigned {
                if n >= 64 {
                    0
                } else {
                    (ux >> n) as i64
                }
            } else if n >= 64 {
                if x < 0 {
                    -1
                } else {
                    0
                }
            } else {
                x >> n
            };
            Val {
                v,
                unsigned: a.unsigned,
            }
        }
        "<" => boolean(if unsigned { ux < uy } else { x < y }),
        ">" => boolean(if unsigned { ux > uy } else { x > y }),
        "<=" => boolean(if unsigned { ux <= uy } else { x <= y }),
        ">=" => boolean(if unsigned { ux >= uy } else { x >= y }),
        "==" => boolean(x == y),
        "!=" => boolean(x != y),
        "&" => arith(x & y),
        "^" => arith(x ^ y),
        "|" => arith(x | y),
        "&&" => boolean(x != 0 && y != 0),
        "||" => boolean(x != 0 || y != 0),
        _ => {
            return Err(format!(
                "token \"{op}\" is not valid in preprocessor expressions"
            ))
        }
    })
}

/// A C integer constant: decimal, `0x` hex, `0b` binary or `0` octal, with `u`/`l`/`ll` suffixes.
fn parse_int(s: &str) -> Result<Val, String> {
    let lower = s.to_ascii_lowercase();
    let (radix, digits) = if let Some(d) = lower.strip_prefix("0x") {
        (16, d)
    } else if let Some(d) = lower.strip_prefix("0b") {
        (2, d)
    } else if lower.len() > 1 && lower.starts_with('0') {
        (8, &lower[1..])
    } else {
        (10, lower.as_str())
    };
    let end = digits
        .find(|c: char| !c.is_digit(radix))
        .unwrap_or(digits.len());
    let (num, suffix) = digits.split_at(end);
    let suffix_ok = matches!(suffix, "" | "u" | "l" | "ul" | "lu" | "ll" | "ull" | "llu");
    if radix == 10 && (suffix.starts_with('.') || suffix.starts_with('e'))
        || radix == 16 && suffix.starts_with('.')
    {
        return Err("floating constant in preprocessor expression".into());
    }
    if !suffix_ok {
        return Err(format!(
            "invalid suffix \"{suffix}\" on integer constant \"{s}\""
        ));
    }
    if num.is_empty() && radix != 8 {
        return Err(format!("invalid integer constant \"{s}\""));
    }
    let v = if num.is_empty() {
        0
    } else {
        u64::from_str_radix(num, radix)
            .map_err(|_| format!("integer constant \"{s}\" is too large"))?
    };
    let unsigned = suffix.contains('u') || v > i64::MAX as u64;
    Ok(Val {
        v: v as i64,
        unsigned,
    })
}

/// A character constant (`'a'`, `'\n'`, `'\x41'`, `'\101'`) as an `int`.
fn parse_char(s: &str) -> Result<Val, String> {
    let inner = s
        .strip_prefix('\'')
        .and_then(|r| r.strip_suffix('\''))
        .unwrap_or("");
    let mut chars = inner.chars();
    let v = match (chars.next(), chars.clone().next()) {
        (Some('\\'), Some(e)) => {
            chars.next();
            let rest: String = chars.collect();
            match e {
                'n' => 10,
                't' => 9,
                'r' => 13,
                'a' => 7,
                'b' => 8,
                'f' => 12,
                'v' => 11,
                'x' => i64::from_str_radix(&rest, 16)
                    .map_err(|_| format!("invalid character constant {s}"))?,
                '0'..='7' => i64::from_str_radix(&format!("{e}{rest}"), 8)
                    .map_err(|_| format!("invalid character constant {s}"))?,
                c => c as i64,
            }
        }
        (Some(c), None) => c as i64,
        _ => return Err(format!("invalid character constant {s}")),
    };
    Ok(Val::int(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_constants() {
        assert_eq!(parse_int("0x1F").unwrap().v, 31);
        assert_eq!(parse_int("017").unwrap().v, 15);
        assert_eq!(parse_int("0").unwrap().v, 0);
        assert_eq!(parse_int("0b101").unwrap().v, 5);
        assert!(parse_int("10uL").unwrap().unsigned);
        assert!(parse_int("18446744073709551615").unwrap().unsigned);
        assert!(parse_int("18446744073709551616").is_err());
        assert!(parse_int("8w5").is_err());
        assert!(parse_int("1.5").is_err());
        assert!(parse_int("09").is_err());
        assert_eq!(parse_char("'a'").unwrap().v, 97);
        assert_eq!(parse_char("'\\n'").unwrap().v, 10);
        assert_eq!(parse_char("'\\x41'").unwrap().v, 65);
    }

    #[test]
    fn lexer_tokens() {
        let toks = lex_all("a1 += 0x1Fe+3 \"s\\\"\" ... <<= 8w255 @ é").unwrap();
        let v: Vec<&str> = toks.iter().map(Tok::s).collect();
        assert_eq!(
            v,
            [
                "a1",
                "+=",
                "0x1Fe+3",
                "\"s\\\"\"",
                "...",
                "<<=",
                "8w255",
                "@",
                "é"
            ]
        );
        assert!(lex_all("/* x").is_none());
        assert_eq!(lex_all("\"abc FOO // x").unwrap().len(), 1);
    }

    /// Every non-blank output byte of an exact piece equals the source byte it maps to.
    fn check_exact(u: &Unit) -> Result<(), String> {
        for (i, p) in u.pieces.iter().enumerate() {
            if !p.exact {
                continue;
            }
            let end = u.pieces.get(i + 1).map_or(u.text.len(), |n| n.out as usize);
            let src = &u.sources[u.files[p.file as usize].source as usize].text;
            for (k, b) in u.text.as_bytes()[p.out as usize..end].iter().enumerate() {
                if b.is_ascii_whitespace() {
                    continue;
                }
                let sb = src.as_bytes().get(p.src as usize + k);
                if sb != Some(b) {
                    return Err(format!(
                        "output byte {} ({:?}) maps to {:?}",
                        p.out as usize + k,
                        *b as char,
                        sb
                    ));
                }
            }
        }
        Ok(())
    }

    #[test]
    fn exact_pieces_match_source() {
        let src = "#define A(x) x+1\n#define B 2\nint a = A(B) ; /* c\n */ b\t= \"s // t\" ;\n#if 1\nc é\\\nd\n#endif\n// x\n  e A(\n 3) f\n";
        let u = preprocess_str("x.p4", src, &Options::default()).unwrap();
        check_exact(&u).unwrap();
        assert!(u.text.contains("int a = 2 +1 ;"), "{}", u.text);
    }

    #[test]
    #[ignore = "set NEVERMISS_CPP_COMPARE to a directory of .p4 files"]
    fn exact_pieces_match_source_in_samples() {
        let Ok(dir) = std::env::var("NEVERMISS_CPP_COMPARE") else {
            return;
        };
        let inc = std::env::var("NEVERMISS_CPP_INCLUDE")
            .map(|d| vec![PathBuf::from(d)])
            .unwrap_or_default();
        let mut n = 0;
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "p4") {
                if let Ok(u) = preprocess(
                    &p,
                    &Options {
                        include_dirs: inc.clone(),
                        defines: vec![],
                    },
                ) {
                    check_exact(&u).unwrap_or_else(|m| panic!("{}: {m}", p.display()));
                    n += 1;
                }
            }
        }
        println!("{n} files checked");
    }

    #[test]
    fn paste_avoidance() {
        assert!(would_paste('-', '-'));
        assert!(would_paste('a', '1'));
        assert!(!would_paste('(', '('));
        assert!(!would_paste('a', ')'));
    }
}
