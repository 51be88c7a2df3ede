//! Statements (spec §11) and parser-state statements (spec §12.4).

use super::{PResult, Parser};
use crate::ast::*;
use crate::lexer::{Keyword, TokenKind as T};

impl Parser<'_> {
    /// `[annotations] { statements and declarations }`
    pub(super) fn block(&mut self) -> PResult<Block> {
        let lo = self.lo();
        let annotations = self.annotations()?;
        self.block_rest(annotations, lo, false)
    }

    fn block_rest(&mut self, annotations: Annotations, lo: u32, in_parser: bool) -> PResult<Block> {
        self.expect(&T::LBrace)?;
        self.push_scope();
        let r = (|| {
            let mut stmts = Vec::new();
            while !self.at(&T::RBrace) {
                stmts.push(self.statement_or_decl(in_parser)?);
            }
            self.bump();
            Ok(stmts)
        })();
        self.pop_scope();
        Ok(Block {
            annotations,
            stmts: r?,
            span: self.span_from(lo),
        })
    }

    /// A statement or a local declaration. In a parser state (`in_parser`) only assignments,
    /// calls, declarations, blocks, `if` and empty statements are allowed.
    pub(super) fn statement_or_decl(&mut self, in_parser: bool) -> PResult<Stmt> {
        self.nested(|p| p.statement_or_decl_inner(in_parser))
    }

    fn statement_or_decl_inner(&mut self, in_parser: bool) -> PResult<Stmt> {
        let lo = self.lo();
        let annos = self.annotations()?;
        if self.at_kw(Keyword::Const) {
            let d = self.const_decl(annos)?;
            return Ok(self.decl_stmt(DeclKind::Const(d), lo));
        }
        if self.at(&T::LBrace) {
            let b = self.block_rest(annos, lo, in_parser)?;
            return Ok(Stmt {
                kind: StmtKind::Block(b),
                span: self.span_from(lo),
            });
        }
        if self.at_kw(Keyword::For) && !in_parser {
            return self.for_stmt(lo);
        }
        if !annos.is_empty() || self.decl_ahead()? {
            let ty = self.type_ref()?;
            let kind = if self.at(&T::LParen) {
                DeclKind::Instantiation(self.instantiation_rest(annos, ty)?)
            } else {
                DeclKind::Variable(self.variable_rest(annos, ty, true)?)
            };
            return Ok(self.decl_stmt(kind, lo));
        }
        self.statement_inner(in_parser)
    }

    fn decl_stmt(&mut self, kind: DeclKind, lo: u32) -> Stmt {
        let span = self.span_from(lo);
        Stmt {
            kind: StmtKind::Decl(Box::new(Decl { kind, span })),
            span,
        }
    }

    /// Whether a declaration starts here: a type followed by a name (`T x`), or an
    /// instantiation `T(args) x`.
    fn decl_ahead(&mut self) -> PResult<bool> {
        match self.peek() {
            T::Keyword(
                Keyword::Bit
                | Keyword::Int
                | Keyword::Varbit
                | Keyword::Bool
                | Keyword::Error
                | Keyword::String
                | Keyword::MatchKind
                | Keyword::Tuple
                | Keyword::List,
            ) => Ok(true),
            T::Ident(_) | T::Dot => self.lookahead(|p| {
                p.type_ref()?;
                if p.is_name_at(0) {
                    return Ok(());
                }
                p.args()?;
                if p.is_name_at(0) {
                    Ok(())
                } else {
                    p.reject()
                }
            }),
            _ => Ok(false),
        }
    }

    /// A statement that is not a declaration (p4c `statement`).
    fn statement(&mut self, in_parser: bool) -> PResult<Stmt> {
        self.nested(|p| p.statement_inner(in_parser))
    }

    fn statement_inner(&mut self, in_parser: bool) -> PResult<Stmt> {
        let lo = self.lo();
        let kind = match self.peek() {
            T::Semi => {
                self.bump();
                StmtKind::Empty
            }
            T::LBrace | T::At | T::Pragma => {
                let annos = self.annotations()?;
                if self.at_kw(Keyword::For) && !in_parser {
                    return self.for_stmt(lo);
                }
                StmtKind::Block(self.block_rest(annos, lo, in_parser)?)
            }
            T::Keyword(Keyword::If) => {
                self.bump();
                self.expect(&T::LParen)?;
                let cond = self.expr_gt()?;
                self.expect(&T::RParen)?;
                let then = Box::new(self.statement(in_parser)?);
                let otherwise = if self.eat_kw(Keyword::Else) {
                    Some(Box::new(self.statement(in_parser)?))
                } else {
                    None
                };
                StmtKind::If {
                    cond,
                    then,
                    otherwise,
                }
            }
            T::Keyword(
                k @ (Keyword::Switch
                | Keyword::Return
                | Keyword::Exit
                | Keyword::Break
                | Keyword::Continue
                | Keyword::For),
            ) if in_parser => {
                return Err(self.err_here(format!(
                    "`{}` statements are not allowed in a parser",
                    k.as_str()
                )));
            }
            T::Keyword(Keyword::Switch) => return self.switch_stmt(),
            T::Keyword(Keyword::For) => return self.for_stmt(lo),
            T::Keyword(Keyword::Return) => {
                self.bump();
                let e = if self.at(&T::Semi) {
                    None
                } else {
                    Some(self.expr_gt()?)
                };
                self.expect(&T::Semi)?;
                StmtKind::Return(e)
            }
            T::Keyword(Keyword::Exit) => {
                self.bump();
                self.expect(&T::Semi)?;
                StmtKind::Exit
            }
            T::Keyword(Keyword::Break) => {
                self.bump();
                self.expect(&T::Semi)?;
                StmtKind::Break
            }
            T::Keyword(Keyword::Continue) => {
                self.bump();
                self.expect(&T::Semi)?;
                StmtKind::Continue
            }
            _ => {
                let s = self.assign_or_call()?;
                self.expect(&T::Semi)?;
                s
            }
        };
        Ok(Stmt {
            kind,
            span: self.span_from(lo),
        })
    }

    /// `lhs = e`, `lhs op= e` or `call(args)`, without the `;`.
    fn assign_or_call(&mut self) -> PResult<StmtKind> {
        let lhs = self.expr_gt()?;
        // p4c's `lvalue`: the target of an assignment, or the callee of a call statement.
        let target = match &lhs.kind {
            ExprKind::Call { callee, .. } if !self.at(&T::Assign) => callee,
            _ => &lhs,
        };
        if !is_lvalue(target) {
            // Point at the first token that cannot continue an l-value, as p4c does.
            let at = first_non_lvalue(&lhs);
            let i = self.toks.partition_point(|t| t.span.lo < at);
            self.pos = i.min(self.end);
            return Err(self.err_here("expected an assignment or a method call"));
        }
        let op = match self.peek() {
            T::Assign => {
                self.bump();
                let rhs = self.expr_gt()?;
                return Ok(StmtKind::Assign(lhs, rhs));
            }
            T::PlusAssign => BinOp::Add,
            T::MinusAssign => BinOp::Sub,
            T::MulAssign => BinOp::Mul,
            T::DivAssign => BinOp::Div,
            T::ModAssign => BinOp::Mod,
            T::AndAssign => BinOp::BitAnd,
            T::OrAssign => BinOp::BitOr,
            T::XorAssign => BinOp::BitXor,
            T::ShlAssign => BinOp::Shl,
            T::ShrAssign => BinOp::Shr,
            T::AddSatAssign => BinOp::AddSat,
            T::SubSatAssign => BinOp::SubSat,
            _ => {
                if matches!(lhs.kind, ExprKind::Call { .. }) {
                    return Ok(StmtKind::Call(lhs));
                }
                return Err(self.err_here("expected `=` or a call"));
            }
        };
        self.bump();
        let rhs = self.expr_gt()?;
        Ok(StmtKind::OpAssign(op, lhs, rhs))
    }

    /// `switch (e) { label: { ... } label: ... default: { ... } }` (spec §11.7).
    fn switch_stmt(&mut self) -> PResult<Stmt> {
        let lo = self.lo();
        self.expect_kw(Keyword::Switch)?;
        self.expect(&T::LParen)?;
        let expr = self.expr_gt()?;
        self.expect(&T::RParen)?;
        self.expect(&T::LBrace)?;
        let mut cases = Vec::new();
        while !self.at(&T::RBrace) {
            let clo = self.lo();
            let label = if self.at_kw(Keyword::Default) && matches!(self.peek_at(1), T::Colon) {
                SwitchLabel::Default(self.bump().span)
            } else {
                SwitchLabel::Expr(self.expr_gt()?)
            };
            self.expect(&T::Colon)?;
            let body = if matches!(self.peek(), T::LBrace | T::At | T::Pragma) {
                Some(self.block()?)
            } else {
                None
            };
            cases.push(SwitchCase {
                label,
                body,
                span: self.span_from(clo),
            });
        }
        self.bump();
        Ok(Stmt {
            kind: StmtKind::Switch { expr, cases },
            span: self.span_from(lo),
        })
    }

    /// `for (init; cond; update) body` or `for ([T] x in range) body` (spec §11.8).
    /// Annotations before `for` or on the loop variable are accepted and dropped.
    fn for_stmt(&mut self, lo: u32) -> PResult<Stmt> {
        self.expect_kw(Keyword::For)?;
        self.expect(&T::LParen)?;
        self.push_scope();
        let r = self.for_rest();
        self.pop_scope();
        Ok(Stmt {
            kind: r?,
            span: self.span_from(lo),
        })
    }

    fn for_rest(&mut self) -> PResult<StmtKind> {
        let is_in = self.lookahead(|p| {
            p.annotations()?;
            if p.is_name_at(0) && matches!(p.peek_at(1), T::Keyword(Keyword::In)) {
                return Ok(());
            }
            p.type_ref()?;
            p.name()?;
            if p.at_kw(Keyword::In) {
                Ok(())
            } else {
                p.reject()
            }
        })?;
        if is_in {
            self.annotations()?;
            if self.is_name_at(0) && matches!(self.peek_at(1), T::Keyword(Keyword::In)) {
                return Err(self.err_here("the loop variable needs a type: `for (T x in ...)`"));
            }
            let ty = Some(self.type_ref()?);
            let var = self.name()?;
            self.declare_object(&var);
            self.expect_kw(Keyword::In)?;
            let rlo = self.lo();
            let mut range = self.expr_gt()?;
            if self.eat(&T::Range) {
                let hi = self.expr_gt()?;
                let span = self.span_from(rlo);
                range = self.mk(ExprKind::Range(Box::new(range), Box::new(hi)), span)?;
            }
            self.expect(&T::RParen)?;
            let body = Box::new(self.statement(false)?);
            return Ok(StmtKind::ForIn {
                ty,
                var,
                range,
                body,
            });
        }
        let mut init = Vec::new();
        if !self.at(&T::Semi) {
            loop {
                let lo = self.lo();
                let annos = self.annotations()?;
                let kind = if !annos.is_empty() || self.decl_ahead()? {
                    let ty = self.type_ref()?;
                    let d = self.variable_rest(annos, ty, false)?;
                    let span = self.span_from(lo);
                    StmtKind::Decl(Box::new(Decl {
                        kind: DeclKind::Variable(d),
                        span,
                    }))
                } else {
                    self.assign_or_call()?
                };
                init.push(Stmt {
                    kind,
                    span: self.span_from(lo),
                });
                if !self.eat(&T::Comma) {
                    break;
                }
            }
        }
        self.expect(&T::Semi)?;
        let cond = if self.at(&T::Semi) {
            None
        } else {
            Some(self.expr_gt()?)
        };
        self.expect(&T::Semi)?;
        let mut update = Vec::new();
        if !self.at(&T::RParen) {
            loop {
                let lo = self.lo();
                let kind = self.assign_or_call()?;
                update.push(Stmt {
                    kind,
                    span: self.span_from(lo),
                });
                if !self.eat(&T::Comma) {
                    break;
                }
            }
        }
        self.expect(&T::RParen)?;
        let body = Box::new(self.statement(false)?);
        Ok(StmtKind::For {
            init,
            cond,
            update,
            body,
        })
    }
}

/// The byte offset of the first token of `e` that cannot be part of an l-value.
fn first_non_lvalue(e: &Expr) -> u32 {
    match &e.kind {
        ExprKind::Binary(_, l, _)
        | ExprKind::Ternary(l, ..)
        | ExprKind::Mask(l, _)
        | ExprKind::Range(l, _) => {
            if is_lvalue(l) {
                l.span.hi
            } else {
                first_non_lvalue(l)
            }
        }
        ExprKind::Member(b, _)
        | ExprKind::Index(b, _)
        | ExprKind::Slice(b, ..)
        | ExprKind::PlusSlice(b, ..) => first_non_lvalue(b),
        // After `lvalue(args)` only `;` may follow.
        ExprKind::Call { callee, .. } if is_lvalue(callee) => e.span.hi,
        ExprKind::Call { callee, .. } => first_non_lvalue(callee),
        _ => e.span.lo,
    }
}

/// p4c's `lvalue`: a name, `this`, or members, indexes and slices of one; also `T.m` for a
/// type `T` (as in `T.apply`).
fn is_lvalue(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Path(_) | ExprKind::This => true,
        ExprKind::Member(b, _) => is_lvalue(b) || matches!(b.kind, ExprKind::Type(_)),
        ExprKind::Index(b, _) | ExprKind::Slice(b, ..) | ExprKind::PlusSlice(b, ..) => is_lvalue(b),
        _ => false,
    }
}
