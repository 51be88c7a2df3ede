//! Expressions (spec §8), types (spec §7), arguments, keysets (spec §12.6) and annotations
//! (spec §18).

use super::{PResult, Parser};
use crate::ast::*;
use crate::lexer::{Keyword, TokenKind as T};
use num_bigint::BigInt;

/// Binary operator precedence, loosest first (spec §8 / p4c): `||`, `&&`, `== !=`,
/// `< > <= >=`, `|`, `^`, `&`, `<< >>`, `++ + - |+| |-|`, `* / %`.
pub(crate) fn precedence(op: BinOp) -> u8 {
    match op {
        BinOp::Or => 1,
        BinOp::And => 2,
        BinOp::Eq | BinOp::Ne => 3,
        BinOp::Lt | BinOp::Gt | BinOp::Le | BinOp::Ge => 4,
        BinOp::BitOr => 5,
        BinOp::BitXor => 6,
        BinOp::BitAnd => 7,
        BinOp::Shl | BinOp::Shr => 8,
        BinOp::Concat | BinOp::Add | BinOp::Sub | BinOp::AddSat | BinOp::SubSat => 9,
        BinOp::Mul | BinOp::Div | BinOp::Mod => 10,
    }
}

impl Parser<'_> {
    // -----------------------------------------------------------------------------------------
    // Expressions

    /// A full expression.
    pub(super) fn expr(&mut self) -> PResult<Expr> {
        self.nested(|p| p.ternary())
    }

    /// An expression in a position where `>` may not appear unparenthesised.
    fn expr_no_gt(&mut self) -> PResult<Expr> {
        let saved = self.no_gt;
        self.no_gt = true;
        let r = self.expr();
        self.no_gt = saved;
        r
    }

    /// An expression inside brackets: `>` is an operator again.
    pub(super) fn expr_gt(&mut self) -> PResult<Expr> {
        let saved = self.no_gt;
        self.no_gt = false;
        let r = self.expr();
        self.no_gt = saved;
        r
    }

    fn ternary(&mut self) -> PResult<Expr> {
        let lo = self.lo();
        let cond = self.binary(1)?;
        if !self.eat(&T::Question) {
            return Ok(cond);
        }
        let a = self.expr_gt()?;
        self.expect(&T::Colon)?;
        let b = self.nested(|p| p.ternary())?;
        let span = self.span_from(lo);
        self.mk(
            ExprKind::Ternary(Box::new(cond), Box::new(a), Box::new(b)),
            span,
        )
    }

    /// The binary operator at the current position and how many tokens it spans.
    fn peek_binop(&self) -> Option<(BinOp, usize)> {
        let op = match self.peek() {
            T::OrOr => BinOp::Or,
            T::AndAnd => BinOp::And,
            T::EqEq => BinOp::Eq,
            T::NotEq => BinOp::Ne,
            T::Lt => BinOp::Lt,
            T::Le => BinOp::Le,
            T::Ge => BinOp::Ge,
            T::Gt if self.no_gt => return None,
            T::Gt if matches!(self.peek_at(1), T::Gt) && self.adjacent(1) => {
                return Some((BinOp::Shr, 2))
            }
            T::Gt => BinOp::Gt,
            T::Pipe => BinOp::BitOr,
            T::Caret => BinOp::BitXor,
            T::Amp => BinOp::BitAnd,
            T::Shl => BinOp::Shl,
            T::PlusPlus => BinOp::Concat,
            T::Plus => BinOp::Add,
            T::Minus => BinOp::Sub,
            T::AddSat => BinOp::AddSat,
            T::SubSat => BinOp::SubSat,
            T::Star => BinOp::Mul,
            T::Slash => BinOp::Div,
            T::Percent => BinOp::Mod,
            _ => return None,
        };
        Some((op, 1))
    }

    /// Precedence climbing; all binary operators are left-associative.
    fn binary(&mut self, min_prec: u8) -> PResult<Expr> {
        let lo = self.lo();
        let mut lhs = self.unary()?;
        while let Some((op, n)) = self.peek_binop() {
            let prec = precedence(op);
            if prec < min_prec {
                break;
            }
            for _ in 0..n {
                self.bump();
            }
            let rhs = self.nested(|p| p.binary(prec + 1))?;
            let span = self.span_from(lo);
            lhs = self.mk(ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)), span)?;
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> PResult<Expr> {
        self.nested(|p| p.unary_inner())
    }

    fn unary_inner(&mut self) -> PResult<Expr> {
        let lo = self.lo();
        let op = match self.peek() {
            T::Bang => Some(UnOp::Not),
            T::Tilde => Some(UnOp::BitNot),
            T::Minus => Some(UnOp::Neg),
            T::Plus => Some(UnOp::Plus),
            _ => None,
        };
        if let Some(op) = op {
            self.bump();
            let e = self.unary()?;
            let span = self.span_from(lo);
            return self.mk(ExprKind::Unary(op, Box::new(e)), span);
        }
        // `(T) e`: a cast when `T` is certainly a type and an operand follows.
        if self.at(&T::LParen) && self.type_start_at(1) {
            let ty = self.attempt(|p| {
                p.bump();
                let ty = p.type_ref()?;
                p.expect(&T::RParen)?;
                if !p.operand_start() {
                    return p.reject();
                }
                Ok(ty)
            })?;
            if let Some(ty) = ty {
                let e = self.unary()?;
                let span = self.span_from(lo);
                return self.mk(ExprKind::Cast(ty, Box::new(e)), span);
            }
        }
        self.postfix()
    }

    /// Whether the current token can start an operand (after a cast's `)`).
    fn operand_start(&self) -> bool {
        match self.peek() {
            T::Ident(_)
            | T::Int { .. }
            | T::Str(_)
            | T::LParen
            | T::LBrace
            | T::Invalid
            | T::Bang
            | T::Tilde
            | T::Minus
            | T::Plus
            | T::Dots
            | T::Dot => true,
            T::Keyword(k) => {
                matches!(
                    k,
                    Keyword::True
                        | Keyword::False
                        | Keyword::This
                        | Keyword::Error
                        | Keyword::Bit
                        | Keyword::Int
                        | Keyword::Varbit
                        | Keyword::Bool
                        | Keyword::String
                        | Keyword::MatchKind
                        | Keyword::Tuple
                        | Keyword::List
                ) || self.is_expr_name_at(0)
            }
            _ => false,
        }
    }

    fn postfix(&mut self) -> PResult<Expr> {
        let lo = self.lo();
        let mut e = self.primary()?;
        loop {
            match self.peek() {
                T::Dot => {
                    self.bump();
                    let m = self.name()?;
                    let span = self.span_from(lo);
                    e = self.mk(ExprKind::Member(Box::new(e), m), span)?;
                }
                T::LBracket => {
                    self.bump();
                    let a = self.expr_gt()?;
                    let kind = if self.eat(&T::Colon) {
                        let b = self.expr_gt()?;
                        ExprKind::Slice(Box::new(e), Box::new(a), Box::new(b))
                    } else if self.eat(&T::PlusColon) {
                        let b = self.expr_gt()?;
                        ExprKind::PlusSlice(Box::new(e), Box::new(a), Box::new(b))
                    } else {
                        ExprKind::Index(Box::new(e), Box::new(a))
                    };
                    self.expect(&T::RBracket)?;
                    let span = self.span_from(lo);
                    e = self.mk(kind, span)?;
                }
                T::LParen => {
                    let args = self.args()?;
                    let span = self.span_from(lo);
                    e = self.mk(
                        ExprKind::Call {
                            callee: Box::new(e),
                            type_args: Vec::new(),
                            args,
                        },
                        span,
                    )?;
                }
                T::Lt if self.real_type_arg_at(1) => {
                    let targs = self.attempt(|p| {
                        let targs = p.type_args()?;
                        if !p.at(&T::LParen) {
                            return p.reject();
                        }
                        Ok(targs)
                    })?;
                    let Some(type_args) = targs else { break };
                    let args = self.args()?;
                    let span = self.span_from(lo);
                    e = self.mk(
                        ExprKind::Call {
                            callee: Box::new(e),
                            type_args,
                            args,
                        },
                        span,
                    )?;
                }
                _ => break,
            }
        }
        Ok(e)
    }

    /// Whether the token at `pos + n` can start the first type argument of a call, where `<`
    /// might instead be less-than (p4c's `realTypeArg`).
    fn real_type_arg_at(&self, n: usize) -> bool {
        matches!(self.peek_at(n), T::DontCare | T::Keyword(Keyword::Void)) || self.type_start_at(n)
    }

    fn primary(&mut self) -> PResult<Expr> {
        let lo = self.lo();
        let span = self.span();
        let kind = match self.peek() {
            T::Int {
                value,
                width,
                radix,
            } => {
                self.bump();
                ExprKind::Int {
                    value: value.clone(),
                    width: *width,
                    radix: *radix,
                }
            }
            T::Str(s) => {
                self.bump();
                ExprKind::String(s.clone())
            }
            T::Keyword(Keyword::True) => {
                self.bump();
                ExprKind::Bool(true)
            }
            T::Keyword(Keyword::False) => {
                self.bump();
                ExprKind::Bool(false)
            }
            T::Keyword(Keyword::This) => {
                self.bump();
                ExprKind::This
            }
            T::Dots => {
                self.bump();
                ExprKind::Dots
            }
            T::Invalid => {
                self.bump();
                ExprKind::Invalid
            }
            T::LBrace => return self.brace_expr(),
            T::LParen => {
                self.bump();
                let mut e = self.expr_gt()?;
                self.expect(&T::RParen)?;
                e.span = self.span_from(lo);
                return Ok(e);
            }
            T::Keyword(Keyword::Error) => {
                self.bump();
                if !self.at(&T::Dot) {
                    return Err(self.err_here("expected `.` after `error`"));
                }
                ExprKind::Type(TypeRef {
                    kind: TypeKind::Error,
                    span,
                })
            }
            T::Keyword(
                Keyword::Bit
                | Keyword::Int
                | Keyword::Varbit
                | Keyword::Bool
                | Keyword::String
                | Keyword::MatchKind
                | Keyword::Tuple
                | Keyword::List,
            ) => {
                // Only as the object of a member access: `bit<8>.minSizeInBits()`.
                let ty = self.type_ref()?;
                if !self.at(&T::Dot) {
                    return Err(self.err_here("expected `.` after a type in an expression"));
                }
                ExprKind::Type(ty)
            }
            T::Dot | T::Ident(_) => return self.name_expr(),
            T::Keyword(_) if self.is_expr_name_at(0) => return self.name_expr(),
            _ => return Err(self.err_here("expected an expression")),
        };
        let span = self.span_from(lo);
        self.mk(kind, span)
    }

    /// `x`, `.x`, and a type name used as an expression: `T`, `T<args>` (p4c `namedType`).
    fn name_expr(&mut self) -> PResult<Expr> {
        let lo = self.lo();
        let is_type = self.type_name_at(0);
        let path = self.path()?;
        if is_type && self.at(&T::Lt) {
            let args = self.type_args()?;
            let span = self.span_from(lo);
            let ty = TypeRef {
                kind: TypeKind::Specialized(path, args),
                span,
            };
            return self.mk(ExprKind::Type(ty), span);
        }
        if is_type && !matches!(self.peek(), T::Dot | T::LParen) {
            // p4c: a type name in an expression is only `T.member` or `T(args)`.
            return Err(self.err_here(format!(
                "type `{}` cannot be used as a value; expected `.` or `(` after it",
                path.name.name
            )));
        }
        let span = path.span;
        self.mk(ExprKind::Path(path), span)
    }

    /// `{ e1, e2 }`, `{ f = e, ... }`, `{ ... }`, with an optional trailing comma.
    fn brace_expr(&mut self) -> PResult<Expr> {
        let lo = self.lo();
        self.expect(&T::LBrace)?;
        let saved = self.no_gt;
        self.no_gt = false;
        let r = self.brace_body(lo);
        self.no_gt = saved;
        r
    }

    fn brace_body(&mut self, lo: u32) -> PResult<Expr> {
        let is_struct = self.is_name_at(0) && matches!(self.peek_at(1), T::Assign);
        let mut has_dots = false;
        let kind = if is_struct {
            let mut fields = Vec::new();
            loop {
                if self.at(&T::RBrace) {
                    break;
                }
                if self.eat(&T::Dots) {
                    has_dots = true;
                    self.eat(&T::Comma);
                    break;
                }
                let name = self.name()?;
                self.expect(&T::Assign)?;
                let value = self.expr()?;
                fields.push((name, value));
                if !self.eat(&T::Comma) {
                    break;
                }
            }
            ExprKind::StructInit { fields, has_dots }
        } else {
            let mut items = Vec::new();
            loop {
                if self.at(&T::RBrace) {
                    break;
                }
                if self.at(&T::Dots) && matches!(self.peek_at(1), T::RBrace | T::Comma) {
                    self.bump();
                    has_dots = true;
                    self.eat(&T::Comma);
                    break;
                }
                items.push(self.expr()?);
                if !self.eat(&T::Comma) {
                    break;
                }
            }
            ExprKind::List { items, has_dots }
        };
        if has_dots && !self.at(&T::RBrace) {
            return Err(self.err_here("`...` must be the last element; expected `}`"));
        }
        self.expect(&T::RBrace)?;
        let span = self.span_from(lo);
        self.mk(kind, span)
    }

    /// `( args )`: positional, named `n = e`, and `_`.
    pub(super) fn args(&mut self) -> PResult<Vec<Arg>> {
        self.expect(&T::LParen)?;
        let saved = self.no_gt;
        self.no_gt = false;
        let r = self.args_body();
        self.no_gt = saved;
        r
    }

    fn args_body(&mut self) -> PResult<Vec<Arg>> {
        let mut args = Vec::new();
        if self.eat(&T::RParen) {
            return Ok(args);
        }
        loop {
            let lo = self.lo();
            let name = if self.is_name_at(0) && matches!(self.peek_at(1), T::Assign) {
                let n = self.name()?;
                self.bump();
                Some(n)
            } else {
                None
            };
            let value = self.expr_or_dont_care()?;
            args.push(Arg {
                name,
                value,
                span: self.span_from(lo),
            });
            if !self.eat(&T::Comma) {
                break;
            }
        }
        self.expect(&T::RParen)?;
        Ok(args)
    }

    /// An expression, or `_` where a don't-care is allowed.
    fn expr_or_dont_care(&mut self) -> PResult<Expr> {
        if self.at(&T::DontCare) {
            let span = self.bump().span;
            return self.mk(ExprKind::DontCare, span);
        }
        self.expr()
    }

    // -----------------------------------------------------------------------------------------
    // Keysets (spec §12.6, §14.2.1.4)

    /// A keyset: a simple keyset, or a tuple `(k1, k2)` (as [`ExprKind::List`]).
    pub(super) fn keyset(&mut self) -> PResult<Expr> {
        if self.at(&T::LParen) {
            let lo = self.lo();
            let tuple = self.attempt(|p| {
                p.bump();
                let mut items = vec![p.simple_keyset()?];
                while p.eat(&T::Comma) {
                    items.push(p.simple_keyset()?);
                }
                p.expect(&T::RParen)?;
                let reduced = items.len() == 1
                    && matches!(
                        items[0].kind,
                        ExprKind::Mask(..)
                            | ExprKind::Range(..)
                            | ExprKind::Default
                            | ExprKind::DontCare
                    );
                if (items.len() < 2 && !reduced) || !p.at(&T::Colon) {
                    return p.reject();
                }
                Ok(items)
            })?;
            if let Some(items) = tuple {
                let span = self.span_from(lo);
                return self.mk(
                    ExprKind::List {
                        items,
                        has_dots: false,
                    },
                    span,
                );
            }
        }
        self.simple_keyset()
    }

    fn simple_keyset(&mut self) -> PResult<Expr> {
        let lo = self.lo();
        if self.at_kw(Keyword::Default) {
            let span = self.bump().span;
            return self.mk(ExprKind::Default, span);
        }
        if self.at(&T::DontCare) {
            let span = self.bump().span;
            return self.mk(ExprKind::DontCare, span);
        }
        let e = self.expr()?;
        let kind = if self.eat(&T::Mask) {
            ExprKind::Mask(Box::new(e), Box::new(self.expr()?))
        } else if self.eat(&T::Range) {
            ExprKind::Range(Box::new(e), Box::new(self.expr()?))
        } else {
            return Ok(e);
        };
        let span = self.span_from(lo);
        self.mk(kind, span)
    }

    // -----------------------------------------------------------------------------------------
    // Types (spec §7)

    /// A type (p4c `typeRef`): base types, named and specialized types, tuples, lists and
    /// header stacks / arrays `T[n]`.
    pub(super) fn type_ref(&mut self) -> PResult<TypeRef> {
        let t = self.nested(|p| p.type_ref_inner())?;
        self.check_type_height(&t)?;
        Ok(t)
    }

    /// Fails if `t` (e.g. `T[1][2]...`) is higher than [`super::MAX_DEPTH`].
    pub(super) fn check_type_height(&mut self, t: &TypeRef) -> PResult<()> {
        if self.type_height(t) > super::MAX_DEPTH {
            return Err(self.fatal_err(t.span, "type is nested too deeply (more than 256 levels)"));
        }
        Ok(())
    }

    fn type_ref_inner(&mut self) -> PResult<TypeRef> {
        let lo = self.lo();
        let kind = match self.peek() {
            T::Keyword(Keyword::Bool) => {
                self.bump();
                TypeKind::Bool
            }
            T::Keyword(Keyword::Error) => {
                self.bump();
                TypeKind::Error
            }
            T::Keyword(Keyword::MatchKind) => {
                self.bump();
                TypeKind::MatchKind
            }
            T::Keyword(Keyword::String) => {
                self.bump();
                TypeKind::String
            }
            T::Keyword(Keyword::Int) => {
                self.bump();
                if self.at(&T::Lt) {
                    TypeKind::SignedInt(Box::new(self.width()?))
                } else {
                    TypeKind::Int
                }
            }
            T::Keyword(Keyword::Bit) => {
                let span = self.bump().span;
                if self.at(&T::Lt) {
                    TypeKind::Bit(Box::new(self.width()?))
                } else {
                    let one = self.mk(
                        ExprKind::Int {
                            value: BigInt::from(1),
                            width: None,
                            radix: 10,
                        },
                        span,
                    )?;
                    TypeKind::Bit(Box::new(one))
                }
            }
            T::Keyword(Keyword::Varbit) => {
                self.bump();
                TypeKind::Varbit(Box::new(self.width()?))
            }
            T::Keyword(Keyword::Tuple) => {
                self.bump();
                TypeKind::Tuple(self.type_args()?)
            }
            T::Keyword(Keyword::List) => {
                self.bump();
                self.expect(&T::Lt)?;
                let t = self.type_arg()?;
                self.expect(&T::Gt)?;
                TypeKind::List(Box::new(t))
            }
            T::Ident(_) | T::Dot => {
                let global = self.eat(&T::Dot);
                let name = match self.peek() {
                    T::Ident(s) => {
                        let span = self.bump().span;
                        Ident {
                            name: s.clone(),
                            span,
                        }
                    }
                    _ => return Err(self.err_here("expected a type name")),
                };
                let path = Path {
                    global,
                    name,
                    span: self.span_from(lo),
                };
                if self.at(&T::Lt) {
                    TypeKind::Specialized(path, self.type_args()?)
                } else {
                    TypeKind::Named(path)
                }
            }
            _ => return Err(self.err_here("expected a type")),
        };
        let ty = TypeRef {
            kind,
            span: self.span_from(lo),
        };
        self.dimensions(ty)
    }

    /// `[n]` suffixes wrapping `ty` in [`TypeKind::Stack`]s, outermost last; fails as soon as
    /// the type grows higher than [`super::MAX_DEPTH`].
    pub(super) fn dimensions(&mut self, mut ty: TypeRef) -> PResult<TypeRef> {
        let mut h = self.type_height(&ty);
        while self.at(&T::LBracket) {
            self.bump();
            let size = self.expr_gt()?;
            self.expect(&T::RBracket)?;
            h = h.max(self.height(&size)) + 1;
            let span = ty.span.to(self.span_from(ty.span.lo));
            if h > super::MAX_DEPTH {
                return Err(
                    self.fatal_err(span, "type is nested too deeply (more than 256 levels)")
                );
            }
            ty = TypeRef {
                kind: TypeKind::Stack(Box::new(ty), Box::new(size)),
                span,
            };
        }
        Ok(ty)
    }

    /// `<W>` of `bit<W>`, `int<W>`, `varbit<W>`: an expression without unparenthesised `>`.
    fn width(&mut self) -> PResult<Expr> {
        self.expect(&T::Lt)?;
        let e = self.expr_no_gt()?;
        self.expect(&T::Gt)?;
        Ok(e)
    }

    /// `void` or a type (p4c `typeOrVoid`).
    pub(super) fn type_or_void(&mut self) -> PResult<TypeRef> {
        if self.at_kw(Keyword::Void) {
            let span = self.bump().span;
            return Ok(TypeRef {
                kind: TypeKind::Void,
                span,
            });
        }
        self.type_ref()
    }

    /// A type argument: a type, `void` or `_`.
    fn type_arg(&mut self) -> PResult<TypeRef> {
        if self.at(&T::DontCare) {
            let span = self.bump().span;
            return Ok(TypeRef {
                kind: TypeKind::DontCare,
                span,
            });
        }
        self.type_or_void()
    }

    /// `< T1, T2 >` (possibly empty).
    pub(super) fn type_args(&mut self) -> PResult<Vec<TypeRef>> {
        self.expect(&T::Lt)?;
        let mut args = Vec::new();
        if self.eat(&T::Gt) {
            return Ok(args);
        }
        loop {
            args.push(self.type_arg()?);
            if !self.eat(&T::Comma) {
                break;
            }
        }
        self.expect(&T::Gt)?;
        Ok(args)
    }

    /// Optional `<T, U>` type parameters; each is declared as a type in the current scope.
    pub(super) fn opt_type_params(&mut self) -> PResult<Vec<Ident>> {
        let mut params = Vec::new();
        if !self.eat(&T::Lt) {
            return Ok(params);
        }
        loop {
            let n = self.name()?;
            self.declare_type(&n);
            params.push(n);
            if !self.eat(&T::Comma) {
                break;
            }
        }
        self.expect(&T::Gt)?;
        Ok(params)
    }

    // -----------------------------------------------------------------------------------------
    // Annotations (spec §18)

    /// Zero or more annotations, including `@pragma` lines.
    pub(super) fn annotations(&mut self) -> PResult<Annotations> {
        let mut out = Vec::new();
        loop {
            let lo = self.lo();
            if self.eat(&T::At) {
                let name = self.annotation_name()?;
                let body = if self.at(&T::LParen) {
                    self.paren_annotation_body()?
                } else if self.at(&T::LBracket) {
                    self.structured_annotation_body()?
                } else {
                    AnnotationBody::Empty
                };
                out.push(Annotation {
                    name,
                    body,
                    span: self.span_from(lo),
                });
            } else if self.eat(&T::Pragma) {
                let name = self.annotation_name()?;
                let start = self.pos;
                while !self.at(&T::Eof) && !self.on_new_line() {
                    self.bump();
                }
                let stop = self.pos;
                let body = self.unstructured_body(start, stop, true)?;
                out.push(Annotation {
                    name,
                    body,
                    span: self.span_from(lo),
                });
            } else {
                break;
            }
        }
        Ok(out)
    }

    fn annotation_name(&mut self) -> PResult<Ident> {
        let name = match self.peek() {
            T::Ident(s) => s.clone(),
            T::Keyword(k) => k.as_str().to_string(),
            T::DontCare => "_".to_string(),
            _ => return Err(self.err_here("expected an annotation name")),
        };
        let span = self.bump().span;
        Ok(Ident { name, span })
    }

    /// `( tokens )` with balanced parentheses.
    fn paren_annotation_body(&mut self) -> PResult<AnnotationBody> {
        let open = self.pos;
        self.expect(&T::LParen)?;
        let mut depth = 1usize;
        loop {
            match self.peek() {
                T::Eof => return Err(self.err_here("unclosed annotation body; expected `)`")),
                T::LParen => depth += 1,
                T::RParen => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
            self.bump();
        }
        let close = self.pos;
        let body = self.unstructured_body(open + 1, close, false)?;
        self.pos = close;
        self.expect(&T::RParen)?;
        Ok(body)
    }

    /// The tokens `[start, stop)` as an expression list if they parse as one, else raw text.
    fn unstructured_body(
        &mut self,
        start: usize,
        stop: usize,
        pragma: bool,
    ) -> PResult<AnnotationBody> {
        let saved = (self.pos, self.end, self.no_gt);
        self.pos = start;
        self.end = stop;
        self.no_gt = false;
        let parsed = self.attempt(|p| {
            let mut items = Vec::new();
            if p.at(&T::Eof) {
                return Ok(items);
            }
            loop {
                items.push(p.expr()?);
                if !p.eat(&T::Comma) {
                    break;
                }
            }
            if !p.at(&T::Eof) {
                return p.reject();
            }
            Ok(items)
        });
        self.pos = saved.0;
        self.end = saved.1;
        self.no_gt = saved.2;
        let parsed = parsed?;
        if pragma && start == stop {
            return Ok(AnnotationBody::Empty);
        }
        Ok(match parsed {
            Some(items) => AnnotationBody::Expressions(items),
            None => {
                let lo = self.toks[start].span.lo as usize;
                let hi = self.toks[stop - 1].span.hi as usize;
                AnnotationBody::Unparsed(self.text.get(lo..hi).unwrap_or("").to_string())
            }
        })
    }

    /// `[ e1, e2 ]` or `[ k1 = e1, k2 = e2 ]`, optional trailing comma (P4_16 §18.2: a body is
    /// an expression list or a key-value list, never both).
    fn structured_annotation_body(&mut self) -> PResult<AnnotationBody> {
        self.expect(&T::LBracket)?;
        let saved = self.no_gt;
        self.no_gt = false;
        let at_pair = |p: &Self| p.is_name_at(0) && matches!(p.peek_at(1), T::Assign);
        let mixed = "a structured annotation holds either expressions or key-value pairs, not both";
        let kv = at_pair(self);
        let body = if kv {
            let mut items = Vec::new();
            while !self.at(&T::RBracket) {
                if !at_pair(self) && !matches!(self.peek_at(1), T::Assign) {
                    return Err(self.err_here(mixed));
                }
                let k = self.name()?;
                self.expect(&T::Assign)?;
                let v = self.expr()?;
                items.push((k, v));
                if !self.eat(&T::Comma) {
                    break;
                }
            }
            AnnotationBody::KeyValues(items)
        } else {
            let mut items = Vec::new();
            while !self.at(&T::RBracket) {
                if at_pair(self) {
                    return Err(self.err_here(mixed));
                }
                items.push(self.expr()?);
                if !self.eat(&T::Comma) {
                    break;
                }
            }
            AnnotationBody::StructuredExpressions(items)
        };
        self.no_gt = saved;
        self.expect(&T::RBracket)?;
        Ok(body)
    }
}
