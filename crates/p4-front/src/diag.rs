//! Diagnostics.
//!
//! TEMPORARY (wt/parser only): the minimal part of `Diagnostic` the parser needs to compile.
//! The real module (severities, notes, rendering) comes from the diag.rs owner; drop this on merge.

use crate::source::Span;

/// One error, pointing at a span of the preprocessed unit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub message: String,
    pub span: Option<Span>,
}

impl Diagnostic {
    /// An error at `span`.
    pub fn error(span: Span, msg: impl Into<String>) -> Self {
        Diagnostic {
            message: msg.into(),
            span: Some(span),
        }
    }
}
