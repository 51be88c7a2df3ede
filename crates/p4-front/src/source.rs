//! Source text and positions.
//!
//! A [`Unit`] is the preprocessed text of one program (all includes expanded) plus a map from each
//! output line back to the file and line it came from. A [`Span`] is a half-open byte range into
//! [`Unit::text`]; [`Unit::locate`] turns a byte offset into `file:line:col`.

/// Half-open byte range `[lo, hi)` into a [`Unit`]'s text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    pub lo: u32,
    pub hi: u32,
}

impl Span {
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

// ---------------------------------------------------------------------------------------------
// TEMPORARY (wt/parser only): the minimal part of `Unit` the parser needs to compile.
// The real `Unit` (with a line map and `locate`) comes from the source.rs owner; drop this on merge.

/// The preprocessed text of one program.
#[derive(Clone, Debug, Default)]
pub struct Unit {
    pub text: String,
}

impl Unit {
    /// A unit holding `text` as is, named `name`.
    pub fn from_string(_name: &str, text: &str) -> Unit {
        Unit {
            text: text.to_string(),
        }
    }
}
