//! Statements (P4_16 §11) and local declarations.

use super::expr::RV;
use super::{err_at, Bind, LResult, Lw};
use crate::ir::*;
use p4_front::ast::{self, ExprKind, StmtKind};
use p4_front::check::{CallTarget, MemberInfo, Type};

impl<'a> Lw<'a> {
    /// Lowers a block's statements, appending to `out`.
    pub fn block(&mut self, b: &ast::Block, out: &mut Vec<Stmt>) -> LResult<()> {
        for s in &b.stmts {
            self.stmt(s, out)?;
        }
        Ok(())
    }

    pub fn stmt(&mut self, s: &ast::Stmt, out: &mut Vec<Stmt>) -> LResult<()> {
        self.enter(s.span)?;
        let r = self.stmt_inner(s, out);
        self.leave();
        r
    }

    fn stmt_inner(&mut self, s: &ast::Stmt, out: &mut Vec<Stmt>) -> LResult<()> {
        match &s.kind {
            StmtKind::Assign(lhs, rhs) => self.assign_stmt(lhs, rhs, None, out),
            StmtKind::OpAssign(op, lhs, rhs) => self.assign_stmt(lhs, rhs, Some(*op), out),
            StmtKind::Call(e) => {
                self.call(e, out, false)?;
                Ok(())
            }
            StmtKind::Empty => Ok(()),
            StmtKind::Block(b) => self.block(b, out),
            StmtKind::If {
                cond,
                then,
                otherwise,
            } => {
                let c = self.scalar_expr(cond, out)?;
                // A branch a constant condition rules out is no use of the actions it calls
                // for P4Info's order (p4c's front end removes it first).
                let known = c.as_const().map(|v| !matches!(v, Val::U(0)));
                let mut t = Vec::new();
                self.cp_order.uncounted += u32::from(known == Some(false));
                let r = self.stmt(then, &mut t);
                self.cp_order.uncounted -= u32::from(known == Some(false));
                r?;
                let mut e = Vec::new();
                if let Some(o) = otherwise {
                    self.cp_order.uncounted += u32::from(known == Some(true));
                    let r = self.stmt(o, &mut e);
                    self.cp_order.uncounted -= u32::from(known == Some(true));
                    r?;
                }
                match c.as_const() {
                    Some(Val::U(0)) => out.extend(e),
                    Some(_) => out.extend(t),
                    None => out.push(Stmt::If(c, t, e)),
                }
                Ok(())
            }
            StmtKind::Switch { expr, cases } => self.switch(expr, cases, out),
            StmtKind::Exit => {
                out.push(Stmt::Exit);
                Ok(())
            }
            StmtKind::Return(v) => {
                if let Some(v) = v {
                    let Some((loc, t)) = self.fctx.ret.clone() else {
                        return err_at(s.span, "return with a value outside a function");
                    };
                    let rv = self.expr(v, out)?;
                    self.assign(&loc, &t, rv, out, v.span)?;
                }
                out.push(Stmt::Return);
                Ok(())
            }
            StmtKind::Decl(d) => self.local_stmt_decl(d, out),
            StmtKind::For {
                init,
                cond,
                update,
                body,
            } => {
                for i in init {
                    self.stmt(i, out)?;
                }
                let mut cpre = Vec::new();
                let c = match cond {
                    Some(c) => self.scalar_expr(c, &mut cpre)?,
                    None => Expr::bool(true),
                };
                self.loop_depth += 1;
                let mut b = Vec::new();
                let r = self.stmt(body, &mut b);
                let mut u = Vec::new();
                let r2 = update.iter().try_for_each(|x| self.stmt(x, &mut u));
                self.loop_depth -= 1;
                r?;
                r2?;
                if cpre.is_empty() {
                    out.push(Stmt::Loop {
                        cond: c,
                        body: b,
                        update: u,
                    });
                } else {
                    let mut body2 = cpre;
                    body2.push(Stmt::If(c, Vec::new(), vec![Stmt::Break]));
                    body2.extend(b);
                    out.push(Stmt::Loop {
                        cond: Expr::bool(true),
                        body: body2,
                        update: u,
                    });
                }
                Ok(())
            }
            StmtKind::ForIn {
                var, range, body, ..
            } => self.for_in(s, var, range, body, out),
            StmtKind::Break => {
                out.push(Stmt::Break);
                Ok(())
            }
            StmtKind::Continue => {
                out.push(Stmt::Continue);
                Ok(())
            }
        }
    }

    fn assign_stmt(
        &mut self,
        lhs: &ast::Expr,
        rhs: &ast::Expr,
        op: Option<ast::BinOp>,
        out: &mut Vec<Stmt>,
    ) -> LResult<()> {
        let lv = self.lvalue(lhs, out)?;
        if let Some((bt, hi, lo)) = lv.slice {
            let mut p2 = Vec::new();
            let mut x = self.scalar_expr(rhs, &mut p2)?;
            let loc = if p2.is_empty() {
                lv.loc
            } else {
                let l = self.freeze(lv.loc, out, lhs.span)?;
                out.extend(p2);
                l
            };
            if let Some(op) = op {
                let cur = Expr::Slice(Box::new(Expr::load(&loc, bt)), bt, hi, lo);
                x = self.bin_expr(op, Ty::bits(hi - lo + 1), cur, x, lhs.span)?;
            }
            out.push(Stmt::AssignSlice(loc, bt, hi, lo, x));
            return Ok(());
        }
        let (loc, t) = (lv.loc, lv.ty);
        let mut p2 = Vec::new();
        let rv = self.expr(rhs, &mut p2)?;
        let loc = if p2.is_empty() {
            loc
        } else {
            let l = self.freeze(loc, out, lhs.span)?;
            out.extend(p2);
            l
        };
        match op {
            None => self.assign(&loc, &t, rv, out, lhs.span),
            Some(op) => {
                let Some(ty) = self.scalar(&t) else {
                    return err_at(lhs.span, "compound assignment to a non-scalar");
                };
                let y = self.as_scalar(rv, rhs.span)?;
                let x = self.bin_expr(op, ty, Expr::load(&loc, ty), y, lhs.span)?;
                out.push(Stmt::Assign(loc, ty, x));
                Ok(())
            }
        }
    }

    /// `a op b` of scalars of type `ty` for compound assignments.
    fn bin_expr(
        &mut self,
        op: ast::BinOp,
        ty: Ty,
        a: Expr,
        b: Expr,
        span: p4_front::source::Span,
    ) -> LResult<Expr> {
        use ast::BinOp as A;
        let o = match op {
            A::Mul => BinOp::Mul,
            A::Div => BinOp::Div,
            A::Mod => BinOp::Mod,
            A::Add => BinOp::Add,
            A::Sub => BinOp::Sub,
            A::AddSat => BinOp::AddSat,
            A::SubSat => BinOp::SubSat,
            A::Shl => BinOp::Shl,
            A::Shr => BinOp::Shr,
            A::BitAnd => BinOp::And,
            A::BitXor => BinOp::Xor,
            A::BitOr => BinOp::Or,
            A::And => return Ok(Expr::And(Box::new(a), Box::new(b))),
            A::Or => return Ok(Expr::Or(Box::new(a), Box::new(b))),
            _ => {
                return err_at(
                    span,
                    format!("operator {} in a compound assignment", op.symbol()),
                )
            }
        };
        Ok(Expr::Bin(o, ty, Box::new(a), Box::new(b)))
    }

    fn switch(
        &mut self,
        expr: &ast::Expr,
        cases: &[ast::SwitchCase],
        out: &mut Vec<Stmt>,
    ) -> LResult<()> {
        // `switch (t.apply().action_run)`: labels are actions of t.
        let mut table: Option<TableId> = None;
        if let ExprKind::Member(base, _) = &expr.kind {
            if matches!(self.ck.members.get(&expr.id), Some(MemberInfo::ActionRun)) {
                if let Some(ci) = self.ck.calls.get(&base.id) {
                    if let CallTarget::TableApply(d) = ci.target {
                        if let Some(Bind::Table(t)) = self.lookup(d) {
                            table = Some(*t);
                        }
                    }
                }
            }
        }
        let sel = self.scalar_expr(expr, out)?;
        let mut arms: Vec<(Vec<u64>, usize)> = Vec::new();
        let mut bodies: Vec<Vec<Stmt>> = Vec::new();
        let mut default = None;
        let mut pending: Vec<u64> = Vec::new();
        let mut pending_default = false;
        for c in cases {
            match &c.label {
                ast::SwitchLabel::Default(_) => pending_default = true,
                ast::SwitchLabel::Expr(le) => {
                    let v = match table {
                        Some(t) => {
                            let d = self.ck.resolved.get(&le.id).copied();
                            let Some(d) = d else {
                                return err_at(le.span, "unknown action in switch label");
                            };
                            let f = self.action_fn(d, le.span)?;
                            match self.p.tables[t as usize].action_of(f) {
                                Some(i) => u64::from(i),
                                None => u64::MAX,
                            }
                        }
                        None => match self.ck.value_of(le.id) {
                            Some(v) => {
                                let v = v.clone();
                                let ty = self.ty_of(le);
                                match self.const_value(&v, &ty, le.span)? {
                                    RV::Scalar(x) => x.as_const().map_or(0, |c| c.low()),
                                    _ => return err_at(le.span, "switch label must be a scalar"),
                                }
                            }
                            None => return err_at(le.span, "switch label must be a constant"),
                        },
                    };
                    pending.push(v);
                }
            }
            if let Some(b) = &c.body {
                let mut body = Vec::new();
                self.block(b, &mut body)?;
                let idx = bodies.len();
                bodies.push(body);
                if !pending.is_empty() {
                    arms.push((std::mem::take(&mut pending), idx));
                }
                if pending_default {
                    default = Some(idx);
                    pending_default = false;
                }
            }
        }
        out.push(Stmt::Switch {
            sel,
            cases: arms,
            bodies,
            default,
        });
        Ok(())
    }

    fn for_in(
        &mut self,
        s: &ast::Stmt,
        var: &ast::Ident,
        range: &ast::Expr,
        body: &ast::Stmt,
        out: &mut Vec<Stmt>,
    ) -> LResult<()> {
        let Some(d) = self.ck.decl_by_span.get(&var.span).copied() else {
            return err_at(var.span, "unresolved loop variable");
        };
        let vt = self.decl(d).ty.clone();
        let w = self.words(&vt, var.span)?;
        let vl = Loc::at(self.alloc_state(w, var.span)?);
        self.bind(d, Bind::Var(vl.clone(), vt.clone()));
        match &range.kind {
            ExprKind::Range(lo, hi) => {
                let Some(ty) = self.scalar(&vt) else {
                    return err_at(range.span, "range loop over a non-scalar");
                };
                let lo = self.scalar_expr(lo, out)?;
                let hi = self.scalar_expr(hi, out)?;
                let hit = self.alloc_temp(ty.words(), range.span)?;
                let done = self.alloc_temp(1, range.span)?;
                out.push(Stmt::Assign(Loc::at(hit), ty, hi));
                out.push(Stmt::Assign(vl.clone(), ty, lo));
                let empty = Expr::Cmp(
                    CmpOp::Gt,
                    ty,
                    Box::new(Expr::load(&vl, ty)),
                    Box::new(Expr::Load(hit, ty)),
                );
                out.push(Stmt::Assign(Loc::at(done), Ty::BOOL, empty));
                self.loop_depth += 1;
                let mut b = Vec::new();
                let r = self.stmt(body, &mut b);
                self.loop_depth -= 1;
                r?;
                let at_end = Expr::Cmp(
                    CmpOp::Eq,
                    ty,
                    Box::new(Expr::load(&vl, ty)),
                    Box::new(Expr::Load(hit, ty)),
                );
                let inc = Expr::Bin(
                    BinOp::Add,
                    ty,
                    Box::new(Expr::load(&vl, ty)),
                    Box::new(Expr::Const(1, ty)),
                );
                out.push(Stmt::Loop {
                    cond: Expr::Un(UnOp::Not, Ty::BOOL, Box::new(Expr::Load(done, Ty::BOOL))),
                    body: b,
                    update: vec![Stmt::If(
                        at_end,
                        vec![Stmt::Assign(Loc::at(done), Ty::BOOL, Expr::bool(true))],
                        vec![Stmt::Assign(vl, ty, inc)],
                    )],
                });
                Ok(())
            }
            _ => {
                // Iterating over a list or a header stack: unrolled.
                let rv = self.expr(range, out)?;
                let rt = self.ty_of(range);
                let items: Vec<RV> = match rv {
                    RV::List(items) => items,
                    RV::Place(loc, Type::Stack(et, n)) => {
                        let ew = self.words(&et, range.span)?;
                        (0..n)
                            .map(|i| self.rv_at(loc.plus(1 + i * ew), (*et).clone()))
                            .collect()
                    }
                    _ => {
                        return err_at(s.span, format!("cannot iterate over a value of type {rt}"))
                    }
                };
                // Unrolled inside a one-iteration loop so that `break` and `continue` work.
                let idx = self.alloc_temp(1, s.span)?;
                let mut cases = Vec::new();
                let mut bodies = Vec::new();
                for (i, it) in items.into_iter().enumerate() {
                    let mut b = Vec::new();
                    self.assign(&vl, &vt, it, &mut b, s.span)?;
                    cases.push((vec![i as u64], bodies.len()));
                    bodies.push(b);
                }
                let n = bodies.len() as u64;
                self.loop_depth += 1;
                let mut b = Vec::new();
                let r = self.stmt(body, &mut b);
                self.loop_depth -= 1;
                r?;
                let mut full = vec![Stmt::Switch {
                    sel: Expr::Load(idx, Ty::bits(32)),
                    cases,
                    bodies,
                    default: None,
                }];
                full.extend(b);
                out.push(Stmt::Assign(
                    Loc::at(idx),
                    Ty::bits(32),
                    Expr::Const(0, Ty::bits(32)),
                ));
                out.push(Stmt::Loop {
                    cond: Expr::Cmp(
                        CmpOp::Lt,
                        Ty::bits(32),
                        Box::new(Expr::Load(idx, Ty::bits(32))),
                        Box::new(Expr::Const(n, Ty::bits(32))),
                    ),
                    body: full,
                    update: vec![Stmt::Assign(
                        Loc::at(idx),
                        Ty::bits(32),
                        Expr::Bin(
                            BinOp::Add,
                            Ty::bits(32),
                            Box::new(Expr::Load(idx, Ty::bits(32))),
                            Box::new(Expr::Const(1, Ty::bits(32))),
                        ),
                    )],
                });
                Ok(())
            }
        }
    }

    /// A local constant or variable declared by a statement.
    fn local_stmt_decl(&mut self, d: &ast::Decl, out: &mut Vec<Stmt>) -> LResult<()> {
        let Some(id) = self.ck.decl_by_span.get(&d.span).copied() else {
            return err_at(d.span, "unresolved declaration");
        };
        match &d.kind {
            ast::DeclKind::Const(c) => {
                let t = self.decl(id).ty.clone();
                match self.decl(id).value.clone() {
                    Some(v) => self.bind(id, Bind::Const(v, t)),
                    None => {
                        // A constant whose value depends on a constructor parameter: a variable.
                        let w = self.words(&t, d.span)?;
                        let loc = Loc::at(self.alloc_state(w, d.span)?);
                        let rv = self.expr(&c.value, out)?;
                        self.assign(&loc, &t, rv, out, d.span)?;
                        self.bind(id, Bind::Var(loc, t));
                    }
                }
                Ok(())
            }
            ast::DeclKind::Variable(v) => {
                let t = self.decl(id).ty.clone();
                let w = self.words(&t, d.span)?;
                let loc = Loc::at(self.alloc_state(w, d.span)?);
                self.bind(id, Bind::Var(loc.clone(), t.clone()));
                match &v.init {
                    Some(init) => {
                        let rv = self.expr(init, out)?;
                        self.assign(&loc, &t, rv, out, d.span)?;
                    }
                    None => out.push(Stmt::Zero { dst: loc, words: w }),
                }
                Ok(())
            }
            ast::DeclKind::Instantiation(_) => {
                let mut init = Vec::new();
                self.local_decl(d, &mut init)?;
                out.extend(init);
                Ok(())
            }
            _ => err_at(d.span, "declaration not supported inside a block"),
        }
    }
}
