//! Source text and positions.
//!
//! A [`Unit`] is the preprocessed text of one program (all includes expanded) plus a map from each
//! output line back to the file and line it came from. A [`Span`] is a half-open byte range into
//! [`Unit::text`]; [`Unit::locate`] turns a byte offset into `file:line:col`.

/// Half-open byte range `[lo, hi)` into a [`Unit`]'s text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    /// The first byte.
    pub lo: u32,
    /// One past the last byte.
    pub hi: u32,
}

impl Span {
    /// The span `[lo, hi)`.
    pub const fn new(lo: u32, hi: u32) -> Span {
        Span { lo, hi }
    }
    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span {
            lo: self.lo.min(other.lo),
            hi: self.hi.max(other.hi),
        }
    }
}

/// Where a byte of [`Unit::text`] came from, as a person reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// The file name as the user or the `#include` named it (or as a `#line` directive renamed it).
    pub file: String,
    /// 1-based line number (after `#line` renumbering).
    pub line: u32,
    /// 1-based column, counted in characters of [`Location::line_text`].
    pub col: u32,
    /// The original source line, without its line terminator.
    pub line_text: String,
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.col)
    }
}

/// One `#line` directive: from byte `from` of the file on, lines are renumbered by `delta`
/// and, if `name` is set, reported under that name.
#[derive(Clone, Debug)]
pub(crate) struct Remap {
    pub(crate) from: u32,
    pub(crate) delta: i64,
    pub(crate) name: Option<String>,
}

/// The text of one physical source file, shared by all its inclusions.
#[derive(Clone, Debug)]
pub(crate) struct SourceText {
    pub(crate) text: String,
    /// Byte offset of the start of each line; `line_starts[0] == 0`.
    pub(crate) line_starts: Vec<u32>,
}

impl SourceText {
    pub(crate) fn new(text: String) -> SourceText {
        let line_starts = line_starts(&text);
        SourceText { text, line_starts }
    }
}

/// 0-based line holding byte `pos` (clamped), given the line starts.
pub(crate) fn line_of(starts: &[u32], pos: u32) -> usize {
    starts.partition_point(|&s| s <= pos).saturating_sub(1)
}

/// The text of 0-based line `line`, without `\n` or `\r\n`; empty if out of range.
pub(crate) fn line_text<'a>(text: &'a str, starts: &[u32], line: usize) -> &'a str {
    let Some(&lo) = starts.get(line) else {
        return "";
    };
    let hi = starts.get(line + 1).map_or(text.len(), |&h| h as usize);
    let s = text.get(lo as usize..hi).unwrap_or("");
    let s = s.strip_suffix('\n').unwrap_or(s);
    s.strip_suffix('\r').unwrap_or(s)
}

pub(crate) fn line_starts(text: &str) -> Vec<u32> {
    let mut v = vec![0u32];
    v.extend(
        text.bytes()
            .enumerate()
            .filter(|&(_, b)| b == b'\n')
            .map(|(i, _)| i as u32 + 1),
    );
    v
}

/// One inclusion of a file: its name as included, its text and its `#line` renumberings.
#[derive(Clone, Debug)]
pub(crate) struct FileEntry {
    pub(crate) name: String,
    /// Index into [`Unit::sources`].
    pub(crate) source: u32,
    pub(crate) remaps: Vec<Remap>,
}

/// A run of output text that came from one place. Output bytes `[out, next piece's out)` map to
/// the source bytes starting at `src` of file `file`: one to one if `exact`, else every byte maps to
/// the macro use at `src..src+len`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Piece {
    pub(crate) out: u32,
    pub(crate) file: u32,
    pub(crate) src: u32,
    pub(crate) len: u32,
    pub(crate) exact: bool,
}

/// A preprocessed program: its text (all includes expanded, macros replaced) and the map from
/// every byte of that text back to the file, line and column it came from.
///
/// Guarantees: [`Unit::locate`] and [`Unit::slice`] never panic, whatever the position; every
/// byte of a line that no macro touched maps to its exact original column; a byte produced by a
/// macro expansion maps to the start of the macro use.
#[derive(Clone, Debug, Default)]
pub struct Unit {
    /// The preprocessed text the lexer reads.
    pub text: String,
    pub(crate) sources: Vec<SourceText>,
    pub(crate) files: Vec<FileEntry>,
    /// Sorted by `out`, strictly increasing.
    pub(crate) pieces: Vec<Piece>,
    pub(crate) warnings: Vec<crate::diag::Diagnostic>,
}

impl Unit {
    /// A unit that is its own single file, without preprocessing (for tests and fuzzing).
    pub fn from_string(name: &str, text: &str) -> Unit {
        Unit {
            text: text.to_string(),
            sources: vec![SourceText::new(text.to_string())],
            files: vec![FileEntry {
                name: name.to_string(),
                source: 0,
                remaps: Vec::new(),
            }],
            pieces: vec![Piece {
                out: 0,
                file: 0,
                src: 0,
                len: 0,
                exact: true,
            }],
            warnings: Vec::new(),
        }
    }

    /// The name of the file the unit was made from (its first file), unless it has none or is
    /// the placeholder `<input>`.
    pub fn main_file(&self) -> Option<&str> {
        let name = self.files.first()?.name.as_str();
        (!name.is_empty() && name != "<input>").then_some(name)
    }

    /// The warnings the preprocessor produced (`#warning`, macro redefinitions); each carries
    /// its location.
    pub fn warnings(&self) -> &[crate::diag::Diagnostic] {
        &self.warnings
    }

    /// The text of `span`, clamped to the text and to character boundaries; never panics.
    pub fn slice(&self, span: Span) -> &str {
        let lo = floor_char(&self.text, span.lo as usize);
        let hi = floor_char(&self.text, (span.hi as usize).max(lo));
        &self.text[lo..hi.max(lo)]
    }

    /// The file, line and column that byte `pos` of [`Unit::text`] came from. Positions past the
    /// end are clamped; never panics.
    pub fn locate(&self, pos: u32) -> Location {
        self.origin(pos).0
    }

    /// Where `span` starts, and how many characters of that source line to underline (at least 1).
    pub fn locate_span(&self, span: Span) -> (Location, u32) {
        let (loc, exact_file) = self.origin(span.lo);
        let width = match exact_file {
            // The span starts in a run copied from source: underline as far as the run and the
            // source line reach.
            Some(OriginKind::Exact { piece_end }) => {
                let end = (span.hi.max(span.lo)).min(piece_end);
                let text = self.slice(Span::new(span.lo, end));
                let text = text.split('\n').next().unwrap_or("");
                text.chars().count() as u32
            }
            // A macro expansion: underline the macro use (on its first line).
            Some(OriginKind::Expansion { len }) => {
                let start = loc.col.saturating_sub(1) as usize;
                let rest: String = loc.line_text.chars().skip(start).collect();
                let bytes = (len as usize).min(rest.len());
                rest[..floor_char(&rest, bytes)].chars().count() as u32
            }
            None => 1,
        };
        let avail = (loc.line_text.chars().count() as u32 + 1).saturating_sub(loc.col);
        (loc, width.min(avail).max(1))
    }

    fn origin(&self, pos: u32) -> (Location, Option<OriginKind>) {
        let pos = pos.min(self.text.len() as u32);
        let idx = self.pieces.partition_point(|p| p.out <= pos);
        let Some(piece) = idx.checked_sub(1).and_then(|i| self.pieces.get(i)) else {
            let file = self
                .files
                .first()
                .map(|f| f.name.clone())
                .unwrap_or_default();
            return (
                Location {
                    file,
                    line: 1,
                    col: 1,
                    line_text: String::new(),
                },
                None,
            );
        };
        let Some(entry) = self.files.get(piece.file as usize) else {
            return (
                Location {
                    file: String::new(),
                    line: 1,
                    col: 1,
                    line_text: String::new(),
                },
                None,
            );
        };
        let Some(src) = self.sources.get(entry.source as usize) else {
            return (
                Location {
                    file: entry.name.clone(),
                    line: 1,
                    col: 1,
                    line_text: String::new(),
                },
                None,
            );
        };
        let (spos, kind) = if piece.exact {
            let piece_end = self
                .pieces
                .get(idx)
                .map_or(self.text.len() as u32, |p| p.out);
            (
                piece.src.saturating_add(pos - piece.out),
                OriginKind::Exact { piece_end },
            )
        } else {
            (piece.src, OriginKind::Expansion { len: piece.len })
        };
        (
            location_at(entry, &src.text, &src.line_starts, spos),
            Some(kind),
        )
    }
}

/// The location of byte `spos` of `text` (with line starts `starts`), one inclusion of which is
/// `entry`. Never panics.
pub(crate) fn location_at(entry: &FileEntry, text: &str, starts: &[u32], spos: u32) -> Location {
    let spos = floor_char(text, spos as usize) as u32;
    let line = line_of(starts, spos);
    let lt = line_text(text, starts, line);
    let line_start = starts.get(line).copied().unwrap_or(0) as usize;
    let in_line = (spos as usize).saturating_sub(line_start).min(lt.len());
    let col = lt[..floor_char(lt, in_line)].chars().count() as u32 + 1;
    let (file, line_no) = present(entry, spos, line as u32 + 1);
    Location {
        file,
        line: line_no,
        col,
        line_text: lt.to_string(),
    }
}

#[derive(Clone, Copy)]
enum OriginKind {
    Exact { piece_end: u32 },
    Expansion { len: u32 },
}

/// The reported file name and 1-based line of byte `pos` (physical 1-based line `line`) of a
/// file, after its `#line` renumberings.
pub(crate) fn present(entry: &FileEntry, pos: u32, line: u32) -> (String, u32) {
    let mut name = &entry.name;
    let mut delta = 0i64;
    for r in &entry.remaps {
        if r.from > pos {
            break;
        }
        delta = r.delta;
        if let Some(n) = &r.name {
            name = n;
        }
    }
    let line = (i64::from(line) + delta).clamp(1, i64::from(u32::MAX)) as u32;
    (name.clone(), line)
}

/// The largest character boundary `<= i` (and `<= s.len()`).
pub(crate) fn floor_char(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_string_locates_lines_and_columns() {
        let u = Unit::from_string("a.p4", "ab\n\tcé d\r\nx");
        assert_eq!(
            u.locate(0),
            Location {
                file: "a.p4".into(),
                line: 1,
                col: 1,
                line_text: "ab".into()
            }
        );
        let l = u.locate(4);
        assert_eq!((l.line, l.col, l.line_text.as_str()), (2, 2, "\tcé d"));
        // 'd' is after a 2-byte char: byte 8, char column 5
        let l = u.locate(8);
        assert_eq!((l.line, l.col), (2, 5));
        let l = u.locate(11);
        assert_eq!((l.line, l.col, l.line_text.as_str()), (3, 1, "x"));
        // clamped
        let l = u.locate(1000);
        assert_eq!((l.line, l.col), (3, 2));
    }

    #[test]
    fn slice_never_panics() {
        let u = Unit::from_string("a", "héllo");
        assert_eq!(u.slice(Span::new(0, 1)), "h");
        assert_eq!(u.slice(Span::new(2, 3)), "é");
        assert_eq!(u.slice(Span::new(1, 3)), "é");
        assert_eq!(u.slice(Span::new(5, 2)), "");
        assert_eq!(u.slice(Span::new(3, 99)), "llo");
        let l = u.locate(2); // inside 'é'
        assert_eq!(l.col, 2);
    }

    #[test]
    fn empty_unit() {
        let u = Unit::default();
        assert_eq!(u.locate(5).line, 1);
        assert_eq!(u.slice(Span::new(0, 3)), "");
        let u = Unit::from_string("e", "");
        assert_eq!(u.locate(0).col, 1);
        assert_eq!(u.locate_span(Span::new(0, 0)).1, 1);
    }
}
