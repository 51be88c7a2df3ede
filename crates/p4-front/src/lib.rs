//! P4_16 front end: source text to a checked program.
//!
//! The phases, one module each, in pipeline order:
//! [`preprocess`] (C-style `#include`/`#define`/`#if`) → [`lexer`] → [`parser`] (→ [`ast`]) → [`check`].
//! Lexing and parsing stop at the first error; the checker collects every error it finds.
//! Every token and node carries a [`source::Span`] into the preprocessed [`source::Unit`], which maps back
//! to the original file, line and column for [`diag`]nostics.

#![deny(missing_docs)]

pub mod ast;
pub mod check;
pub mod diag;
pub mod driver;
pub mod lexer;
pub mod parser;
pub mod pna_dialect;
pub mod preprocess;
pub mod printer;
pub mod source;
