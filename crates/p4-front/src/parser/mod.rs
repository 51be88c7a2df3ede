//! The P4_16 parser: tokens to [`ast::Program`] (spec Appendix "P4 grammar", v1.2.4).
//!
//! A hand-written recursive-descent parser with bounded backtracking. It stops at the first error.
//!
//! P4's grammar is context sensitive: whether `X<` opens type arguments and whether `(X) e` is a
//! cast depend on whether `X` names a type. Like p4c, the parser keeps a scoped table of the
//! names declared so far (types, type parameters, and the objects that shadow them), fed by every
//! declaration it reads, including those that came from include files. Elsewhere it decides by
//! looking ahead: `T x`, `T(args) x;` are declarations whatever `T` is.
//!
//! Guarantees: never panics; nesting deeper than [`MAX_DEPTH`] is an error, not a stack overflow;
//! total work is linear in the input up to a fixed backtracking budget (exceeding it is an error);
//! [`ast::NodeId`]s are dense and [`ast::Program::node_count`] counts them.

mod decl;
mod expr;
mod stmt;

use crate::ast::{self, Expr, ExprKind, Ident, NodeId, Path, TypeKind, TypeRef};
use crate::diag::Diagnostic;
use crate::lexer::{lex, Keyword, Token, TokenKind};
use crate::source::{Span, Unit};
use std::collections::HashMap;

pub use crate::lexer::dump_tokens;
pub(crate) use expr::precedence as expr_precedence;

/// Deepest nesting of expressions, types and statements accepted.
pub const MAX_DEPTH: u32 = 256;

/// Parses a preprocessed unit.
pub fn parse(unit: &Unit) -> Result<ast::Program, Diagnostic> {
    parse_str(&unit.text)
}

/// Parses preprocessed program text.
pub fn parse_str(text: &str) -> Result<ast::Program, Diagnostic> {
    let tokens = lex(text)?;
    let mut p = Parser::new(&tokens, text);
    p.program()
}

type PResult<T> = Result<T, Diagnostic>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sym {
    Type,
    Object,
}

pub(crate) struct Parser<'a> {
    toks: &'a [Token],
    text: &'a str,
    pos: usize,
    /// Index of the token treated as the end of input (normally the `Eof` token; lowered while
    /// parsing a `@pragma` body).
    end: usize,
    next_id: u32,
    depth: u32,
    /// Tokens consumed by attempts that were then undone.
    wasted: usize,
    budget: usize,
    /// Set by errors no backtracking may hide (too deep, too much backtracking).
    fatal: bool,
    /// `> ` inside `bit<...>` widths ends the expression (p4c's `nonGrtExpression`).
    no_gt: bool,
    scopes: Vec<HashMap<String, Sym>>,
    /// Height of each expression tree built so far, by [`NodeId`].
    heights: Vec<u16>,
}

impl<'a> Parser<'a> {
    fn new(toks: &'a [Token], text: &'a str) -> Parser<'a> {
        Parser {
            toks,
            text,
            pos: 0,
            end: toks.len().saturating_sub(1),
            next_id: 0,
            depth: 0,
            wasted: 0,
            budget: 100_000 + 32 * toks.len(),
            fatal: false,
            no_gt: false,
            scopes: vec![HashMap::new()],
            heights: Vec::new(),
        }
    }

    fn program(&mut self) -> PResult<ast::Program> {
        let mut decls = Vec::new();
        loop {
            match self.peek() {
                TokenKind::Eof => break,
                TokenKind::Semi => {
                    self.bump();
                }
                _ => self.top_decl(&mut decls)?,
            }
        }
        if self.pos < self.toks.len().saturating_sub(1) {
            return Err(self.err_here("expected a declaration"));
        }
        Ok(ast::Program {
            decls,
            node_count: self.next_id,
        })
    }

    // -----------------------------------------------------------------------------------------
    // Token access

    fn tok(&self, i: usize) -> &'a Token {
        let idx = i.min(self.end);
        &self.toks[idx]
    }

    fn peek(&self) -> &'a TokenKind {
        if self.pos >= self.end {
            &TokenKind::Eof
        } else {
            &self.toks[self.pos].kind
        }
    }

    fn peek_at(&self, n: usize) -> &'a TokenKind {
        let i = self.pos + n;
        if i >= self.end {
            &TokenKind::Eof
        } else {
            &self.toks[i].kind
        }
    }

    fn span(&self) -> Span {
        self.tok(self.pos).span
    }

    fn lo(&self) -> u32 {
        self.span().lo
    }

    /// End of the last consumed token.
    fn prev_hi(&self) -> u32 {
        if self.pos == 0 {
            0
        } else {
            self.toks[(self.pos - 1).min(self.toks.len() - 1)].span.hi
        }
    }

    fn span_from(&self, lo: u32) -> Span {
        Span::new(lo, self.prev_hi().max(lo))
    }

    fn bump(&mut self) -> &'a Token {
        let t = self.tok(self.pos);
        if self.pos < self.end {
            self.pos += 1;
        }
        t
    }

    fn at(&self, k: &TokenKind) -> bool {
        self.peek() == k
    }

    fn at_kw(&self, k: Keyword) -> bool {
        matches!(self.peek(), TokenKind::Keyword(x) if *x == k)
    }

    fn eat(&mut self, k: &TokenKind) -> bool {
        if self.at(k) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn eat_kw(&mut self, k: Keyword) -> bool {
        if self.at_kw(k) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, k: &TokenKind) -> PResult<Span> {
        if self.at(k) {
            Ok(self.bump().span)
        } else {
            Err(self.err_here(format!("expected `{k}`")))
        }
    }

    fn expect_kw(&mut self, k: Keyword) -> PResult<Span> {
        if self.at_kw(k) {
            Ok(self.bump().span)
        } else {
            Err(self.err_here(format!("expected `{}`", k.as_str())))
        }
    }

    /// Whether the token at `pos + n` starts right where the one before it ends.
    fn adjacent(&self, n: usize) -> bool {
        let i = self.pos + n;
        i > 0 && i < self.end && self.toks[i].span.lo == self.toks[i - 1].span.hi
    }

    /// Whether the token at `pos` starts on a later line than the previous one ends.
    fn on_new_line(&self) -> bool {
        if self.pos == 0 || self.pos >= self.toks.len() {
            return true;
        }
        let a = self.toks[self.pos - 1].span.hi as usize;
        let b = self.toks[self.pos].span.lo as usize;
        self.text.get(a..b).is_none_or(|s| s.contains('\n'))
    }

    fn describe(&self) -> String {
        let t = self.tok(self.pos);
        match &t.kind {
            TokenKind::Eof => "end of input".to_string(),
            _ => {
                let s = self
                    .text
                    .get(t.span.lo as usize..t.span.hi as usize)
                    .unwrap_or("");
                let mut short: String = s.chars().take(24).collect();
                if short.len() < s.len() {
                    short.push_str("...");
                }
                format!("`{short}`")
            }
        }
    }

    /// An error at the current token: "`msg`, found `tok`".
    fn err_here(&self, msg: impl Into<String>) -> Diagnostic {
        let msg = msg.into();
        if let TokenKind::Unexpected(c) = self.peek() {
            return Diagnostic::error(
                self.span(),
                format!("unexpected character `{}`", c.escape_debug()),
            );
        }
        Diagnostic::error(self.span(), format!("{msg}, found {}", self.describe()))
    }

    fn fatal_err(&mut self, span: Span, msg: &str) -> Diagnostic {
        self.fatal = true;
        Diagnostic::error(span, msg)
    }

    // -----------------------------------------------------------------------------------------
    // Depth and backtracking

    /// Runs `f` one nesting level deeper; fails once [`MAX_DEPTH`] is exceeded.
    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        if self.depth >= MAX_DEPTH {
            let sp = self.span();
            return Err(self.fatal_err(sp, "nesting is too deep (more than 256 levels)"));
        }
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        r
    }

    /// Runs `f`; if it fails with an ordinary error, undoes everything it consumed and returns
    /// `Ok(None)`. Fatal errors pass through.
    fn attempt<T>(&mut self, f: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<Option<T>> {
        let (pos, id, depth, no_gt) = (self.pos, self.next_id, self.depth, self.no_gt);
        match f(self) {
            Ok(v) => Ok(Some(v)),
            Err(e) if self.fatal => Err(e),
            Err(_) => {
                self.wasted += self.pos.saturating_sub(pos) + 1;
                self.pos = pos;
                self.next_id = id;
                self.heights.truncate(id as usize);
                self.depth = depth;
                self.no_gt = no_gt;
                if self.wasted > self.budget {
                    let sp = self.span();
                    return Err(self.fatal_err(
                        sp,
                        "program is too complex to parse (too much backtracking)",
                    ));
                }
                Ok(None)
            }
        }
    }

    /// Runs `f` only to look ahead: always undoes what it consumed; `Ok(true)` if it succeeded.
    fn lookahead(&mut self, f: impl FnOnce(&mut Self) -> PResult<()>) -> PResult<bool> {
        let (pos, id, depth, no_gt) = (self.pos, self.next_id, self.depth, self.no_gt);
        let r = f(self);
        let ok = match r {
            Ok(()) => true,
            Err(e) if self.fatal => return Err(e),
            Err(_) => false,
        };
        self.wasted += self.pos.saturating_sub(pos) + 1;
        self.pos = pos;
        self.next_id = id;
        self.heights.truncate(id as usize);
        self.depth = depth;
        self.no_gt = no_gt;
        if self.wasted > self.budget {
            let sp = self.span();
            return Err(self.fatal_err(
                sp,
                "program is too complex to parse (too much backtracking)",
            ));
        }
        Ok(ok)
    }

    /// A throwaway error used to reject an attempt.
    fn reject<T>(&self) -> PResult<T> {
        Err(Diagnostic::error(self.span(), "rejected"))
    }

    // -----------------------------------------------------------------------------------------
    // Names and the symbol table

    fn push_scope(&mut self) {
        self.scopes.push(HashMap::new());
    }

    fn pop_scope(&mut self) {
        if self.scopes.len() > 1 {
            self.scopes.pop();
        }
    }

    fn declare(&mut self, name: &str, sym: Sym) {
        if let Some(s) = self.scopes.last_mut() {
            s.insert(name.to_string(), sym);
        }
    }

    fn declare_type(&mut self, name: &Ident) {
        self.declare(&name.name, Sym::Type);
    }

    fn declare_object(&mut self, name: &Ident) {
        self.declare(&name.name, Sym::Object);
    }

    /// Whether `name` currently denotes a type (innermost declaration wins).
    fn is_type_name(&self, name: &str, global: bool) -> bool {
        if global {
            return self.scopes[0].get(name) == Some(&Sym::Type);
        }
        for s in self.scopes.iter().rev() {
            if let Some(k) = s.get(name) {
                return *k == Sym::Type;
            }
        }
        false
    }

    /// Whether the tokens at `pos + n` name a type: `T` or `.T` with `T` a known type.
    fn type_name_at(&self, n: usize) -> bool {
        match self.peek_at(n) {
            TokenKind::Ident(s) => self.is_type_name(s, false),
            TokenKind::Dot => {
                matches!(self.peek_at(n + 1), TokenKind::Ident(s) if self.is_type_name(s, true))
            }
            _ => false,
        }
    }

    /// Whether the token at `pos + n` starts a type for sure: a type keyword or a known type name.
    fn type_start_at(&self, n: usize) -> bool {
        match self.peek_at(n) {
            TokenKind::Keyword(
                Keyword::Bit
                | Keyword::Int
                | Keyword::Varbit
                | Keyword::Bool
                | Keyword::Error
                | Keyword::MatchKind
                | Keyword::String
                | Keyword::Tuple
                | Keyword::List,
            ) => true,
            _ => self.type_name_at(n),
        }
    }

    fn ident_at(&self, n: usize) -> Option<&'a str> {
        match self.peek_at(n) {
            TokenKind::Ident(s) => Some(s),
            TokenKind::Keyword(k) if is_name_keyword(*k) => Some(k.as_str()),
            _ => None,
        }
    }

    /// p4c's `name`: an identifier or one of the keywords usable as a name.
    fn is_name_at(&self, n: usize) -> bool {
        self.ident_at(n).is_some()
    }

    fn name(&mut self) -> PResult<Ident> {
        match self.ident_at(0) {
            Some(s) => {
                let span = self.bump().span;
                Ok(Ident {
                    name: s.to_string(),
                    span,
                })
            }
            None => Err(self.err_here("expected a name")),
        }
    }

    /// A name usable as an expression (p4c's `nonTypeName`): not `list`.
    fn is_expr_name_at(&self, n: usize) -> bool {
        !matches!(self.peek_at(n), TokenKind::Keyword(Keyword::List)) && self.is_name_at(n)
    }

    /// `x` or `.x`
    fn path(&mut self) -> PResult<Path> {
        let lo = self.lo();
        let global = self.eat(&TokenKind::Dot);
        let name = self.name()?;
        Ok(Path {
            global,
            name,
            span: self.span_from(lo),
        })
    }

    /// A new expression node with the next id. Records an error if the tree becomes higher
    /// than [`MAX_DEPTH`] (loops such as `a + b + c ...` build height without recursing), so that
    /// no tree is too deep to drop or walk recursively.
    fn mk(&mut self, kind: ExprKind, span: Span) -> PResult<Expr> {
        let h = 1 + self.kind_height(&kind);
        if h > MAX_DEPTH {
            return Err(self.fatal_err(
                span,
                "expression is nested too deeply (more than 256 levels)",
            ));
        }
        let id = NodeId(self.next_id);
        self.next_id += 1;
        self.heights.push(h as u16);
        Ok(Expr { id, kind, span })
    }

    pub(crate) fn height(&self, e: &Expr) -> u32 {
        self.heights.get(e.id.0 as usize).copied().unwrap_or(0) as u32
    }

    /// Height of a type's tree (its width and size expressions included).
    pub(crate) fn type_height(&self, t: &TypeRef) -> u32 {
        1 + match &t.kind {
            TypeKind::Bit(e) | TypeKind::SignedInt(e) | TypeKind::Varbit(e) => self.height(e),
            TypeKind::Specialized(_, args) | TypeKind::Tuple(args) => {
                args.iter().map(|a| self.type_height(a)).max().unwrap_or(0)
            }
            TypeKind::Stack(t, e) => self.type_height(t).max(self.height(e)),
            TypeKind::List(t) => self.type_height(t),
            _ => 0,
        }
    }

    fn kind_height(&self, k: &ExprKind) -> u32 {
        let h = |e: &Expr| self.height(e);
        match k {
            ExprKind::Type(t) => self.type_height(t),
            ExprKind::Member(e, _) | ExprKind::Unary(_, e) => h(e),
            ExprKind::Cast(t, e) => self.type_height(t).max(h(e)),
            ExprKind::Index(a, b)
            | ExprKind::Binary(_, a, b)
            | ExprKind::Mask(a, b)
            | ExprKind::Range(a, b) => h(a).max(h(b)),
            ExprKind::Slice(a, b, c)
            | ExprKind::PlusSlice(a, b, c)
            | ExprKind::Ternary(a, b, c) => h(a).max(h(b)).max(h(c)),
            ExprKind::Call {
                callee,
                type_args,
                args,
            } => {
                let t = type_args
                    .iter()
                    .map(|t| self.type_height(t))
                    .max()
                    .unwrap_or(0);
                args.iter()
                    .map(|a| h(&a.value))
                    .max()
                    .unwrap_or(0)
                    .max(t)
                    .max(h(callee))
            }
            ExprKind::List { items, .. } => items.iter().map(h).max().unwrap_or(0),
            ExprKind::StructInit { fields, .. } => {
                fields.iter().map(|(_, e)| h(e)).max().unwrap_or(0)
            }
            _ => 0,
        }
    }
}

/// Keywords p4c accepts where a name is expected (`nonTypeName`, `name`).
fn is_name_keyword(k: Keyword) -> bool {
    matches!(
        k,
        Keyword::Apply
            | Keyword::Key
            | Keyword::Actions
            | Keyword::State
            | Keyword::Entries
            | Keyword::Type
            | Keyword::Priority
            | Keyword::List
    )
}
