//! Diagnostics: errors, warnings and notes with source spans, rendered rustc/gcc style.
//!
//! ```text
//! prog.p4:3:5: error: undeclared name `x`
//!   bit<8> y = x;
//!              ^
//! prog.p4:1:1: note: declared here
//!   ...
//! ```
//!
//! [`render`] never panics and prints no color codes. A diagnostic whose position lies in text
//! that is not part of a [`Unit`] (a preprocessing error: the unit does not exist yet) carries its
//! [`Location`] itself in [`Diagnostic::location`].

use crate::source::{Location, Span, Unit};
use std::fmt::Write as _;

/// How serious a [`Diagnostic`] is; rendered as `error`, `warning` or `note`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Severity {
    /// The program is rejected (the command exits 1).
    Error,
    /// The program is accepted; something is likely wrong.
    Warning,
    /// A remark that explains another diagnostic.
    Note,
}

impl std::fmt::Display for Severity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        })
    }
}

/// A remark attached to a [`Diagnostic`], optionally pointing at another place.
#[derive(Clone, Debug)]
pub struct Note {
    /// The place it points at, if any.
    pub span: Option<Span>,
    /// The remark, lowercase, no trailing period.
    pub message: String,
}

/// A message about the program, at a position of its preprocessed text, rendered rustc-style by
/// [`render`] (`file:line:col: error: message`, the source line and an underline).
#[derive(Clone, Debug)]
pub struct Diagnostic {
    /// Error, warning or note.
    pub severity: Severity,
    /// Lowercase, no trailing period.
    pub message: String,
    /// Where in the [`Unit`] text; `None` for a diagnostic about the whole program.
    pub span: Option<Span>,
    /// Remarks rendered after it, in order.
    pub notes: Vec<Note>,
    /// A location resolved in advance; when set, [`render`] uses it instead of `span` (used by the
    /// preprocessor, whose errors point into text that never became a unit).
    pub location: Option<Location>,
}

impl Diagnostic {
    /// A diagnostic of `severity` at `span`, with no notes.
    pub fn new(severity: Severity, span: Option<Span>, msg: impl Into<String>) -> Self {
        Diagnostic {
            severity,
            message: msg.into(),
            span,
            notes: Vec::new(),
            location: None,
        }
    }

    /// An error at `span`.
    pub fn error(span: Span, msg: impl Into<String>) -> Self {
        Self::new(Severity::Error, Some(span), msg)
    }

    /// A warning at `span`.
    pub fn warning(span: Span, msg: impl Into<String>) -> Self {
        Self::new(Severity::Warning, Some(span), msg)
    }

    /// A stand-alone note (e.g. a remark the checker wants to print on its own).
    pub fn note(span: Span, msg: impl Into<String>) -> Self {
        Self::new(Severity::Note, Some(span), msg)
    }

    /// An error about the whole program, with no position.
    pub fn error_global(msg: impl Into<String>) -> Self {
        Self::new(Severity::Error, None, msg)
    }

    /// A diagnostic at a location resolved in advance (see [`Diagnostic::location`]).
    pub fn at(severity: Severity, location: Location, msg: impl Into<String>) -> Self {
        let mut d = Self::new(severity, None, msg);
        d.location = Some(location);
        d
    }

    /// The same diagnostic with a note added at the end.
    pub fn with_note(mut self, span: Option<Span>, msg: impl Into<String>) -> Self {
        self.notes.push(Note {
            span,
            message: msg.into(),
        });
        self
    }

    /// Whether it rejects the program ([`Severity::Error`]).
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl std::fmt::Display for Diagnostic {
    /// The message alone, prefixed by its pre-resolved location if it has one.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(loc) = &self.location {
            write!(f, "{loc}: ")?;
        }
        write!(f, "{}: {}", self.severity, self.message)
    }
}

impl std::error::Error for Diagnostic {}

/// Renders `d` as text:
/// `file:line:col: severity: message`, then the source line indented by two spaces and a line
/// of `^` under the span, then each note the same way (`note: message` alone for a note without
/// a span). Every line ends with `\n`. Never panics.
pub fn render(unit: &Unit, d: &Diagnostic) -> String {
    let mut out = String::new();
    let severity = d.severity.to_string();
    if let Some(loc) = &d.location {
        // A pre-located diagnostic: its span (if any) need not refer to `unit`; underline the
        // word or quoted string at the location.
        header_and_snippet(&mut out, loc, word_width(loc), &severity, &d.message);
    } else if let Some(span) = d.span {
        let (loc, width) = unit.locate_span(span);
        header_and_snippet(&mut out, &loc, width, &severity, &d.message);
    } else {
        // About the whole program: named by its file, so a user with several knows which.
        match unit.main_file() {
            Some(file) => {
                let _ = writeln!(out, "{file}: {severity}: {}", d.message);
            }
            None => {
                let _ = writeln!(out, "{severity}: {}", d.message);
            }
        }
    }
    for note in &d.notes {
        match note.span {
            Some(span) if d.location.is_none() => {
                let (loc, width) = unit.locate_span(span);
                header_and_snippet(&mut out, &loc, width, "note", &note.message);
            }
            _ => {
                let _ = writeln!(out, "note: {}", note.message);
            }
        }
    }
    out
}

/// Renders every diagnostic of `ds` in order.
pub fn render_all(unit: &Unit, ds: &[Diagnostic]) -> String {
    ds.iter().map(|d| render(unit, d)).collect()
}

/// Width in characters of the identifier, number or quoted string starting at `loc.col`, else 1.
fn word_width(loc: &Location) -> u32 {
    let mut chars = loc
        .line_text
        .chars()
        .skip(loc.col.saturating_sub(1) as usize)
        .peekable();
    let word = |c: char| c.is_alphanumeric() || c == '_';
    match chars.next() {
        Some(q @ ('"' | '<')) => {
            let close = if q == '"' { '"' } else { '>' };
            let inner = chars.clone().take_while(|&c| c != close).count();
            let closed = chars.nth(inner).is_some();
            (inner + 1 + usize::from(closed)) as u32
        }
        Some(c) if word(c) => 1 + chars.take_while(|&c| word(c)).count() as u32,
        _ => 1,
    }
}

fn header_and_snippet(out: &mut String, loc: &Location, width: u32, severity: &str, msg: &str) {
    let _ = writeln!(out, "{loc}: {severity}: {msg}");
    if loc.line_text.is_empty() && loc.col <= 1 {
        return;
    }
    let line = loc.line_text.as_str();
    let _ = writeln!(out, "  {line}");
    // Keep tabs from the source line so the carets line up in a terminal.
    let pad: String = line
        .chars()
        .take(loc.col.saturating_sub(1) as usize)
        .map(|c| if c == '\t' { '\t' } else { ' ' })
        .collect();
    let avail = (line.chars().count() as u32 + 1)
        .saturating_sub(loc.col)
        .max(1);
    let width = width.clamp(1, avail) as usize;
    let _ = writeln!(out, "  {pad}{}", "^".repeat(width));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_error_with_underline() {
        let u = Unit::from_string("prog.p4", "header h {\n    bit<8> x = yy;\n}\n");
        let lo = u.text.find("yy").unwrap() as u32;
        let d = Diagnostic::error(Span::new(lo, lo + 2), "undeclared name `yy`");
        assert_eq!(
            render(&u, &d),
            "prog.p4:2:16: error: undeclared name `yy`\n      bit<8> x = yy;\n                 ^^\n"
        );
    }

    #[test]
    fn render_notes_and_tabs() {
        let u = Unit::from_string("t.p4", "\tfoo bar\nbaz\n");
        let d = Diagnostic::warning(Span::new(5, 8), "unused")
            .with_note(Some(Span::new(9, 12)), "see here")
            .with_note(None, "just a remark");
        assert_eq!(
            render(&u, &d),
            "t.p4:1:6: warning: unused\n  \tfoo bar\n  \t    ^^^\nt.p4:2:1: note: see here\n  baz\n  ^^^\nnote: just a remark\n"
        );
    }

    #[test]
    fn render_span_past_line_end_and_out_of_range() {
        let u = Unit::from_string("t.p4", "ab\ncd");
        // spans lines: underline to end of the first line only
        let r = render(&u, &Diagnostic::error(Span::new(1, 4), "m"));
        assert_eq!(r, "t.p4:1:2: error: m\n  ab\n   ^\n");
        // out of range: clamped to the end, never panics
        let r = render(&u, &Diagnostic::error(Span::new(100, 50), "m"));
        assert!(r.starts_with("t.p4:2:3: error: m\n"), "{r}");
        let r = render(&u, &Diagnostic::error_global("whole"));
        assert_eq!(r, "t.p4: error: whole\n");
        let r = render(&Unit::default(), &Diagnostic::error_global("whole"));
        assert_eq!(r, "error: whole\n");
    }

    #[test]
    fn render_prelocated() {
        let loc = Location {
            file: "x.p4".into(),
            line: 7,
            col: 3,
            line_text: "# error boom".into(),
        };
        let d = Diagnostic::at(Severity::Error, loc, "boom")
            .with_note(None, "in file included from a.p4:1");
        let r = render(&Unit::default(), &d);
        assert_eq!(r, "x.p4:7:3: error: boom\n  # error boom\n    ^^^^^\nnote: in file included from a.p4:1\n");
        assert_eq!(d.to_string(), "x.p4:7:3: error: boom");
    }
}
