//! Statements (P4_16 spec §11) and parser states / transitions / select (§12).

use super::consteval::Value;
use super::scope::{DeclInfo, EntityKind};
use super::types::{same, DeclId, Type};
use super::{BlockKind, Checker, Ctx};
use crate::ast::{self, DeclKind, Expr, ExprKind, Stmt, StmtKind, SwitchLabel};
use std::collections::{HashMap, HashSet};

impl<'a> Checker<'a> {
    /// A block statement: a new scope.
    pub fn block(&mut self, b: &ast::Block) {
        self.check_annotations(&b.annotations);
        self.scoped(|c| {
            for s in &b.stmts {
                c.stmt(s);
            }
        });
    }

    pub fn stmt(&mut self, s: &Stmt) {
        if !self.enter(s.span) {
            return;
        }
        self.stmt_inner(s);
        self.leave();
    }

    /// One statement (P4_16 spec §11): each kind has its helper below.
    fn stmt_inner(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Assign(l, r) => self.assign_stmt(l, r),
            StmtKind::OpAssign(op, l, r) => self.op_assign_stmt(s, *op, l, r),
            StmtKind::Call(e) => self.call_stmt(e),
            StmtKind::Empty => {}
            StmtKind::Block(b) => self.block(b),
            StmtKind::If {
                cond,
                then,
                otherwise,
            } => self.if_stmt(cond, then, otherwise.as_deref()),
            StmtKind::Switch { expr, cases } => self.switch_stmt(s, expr, cases),
            StmtKind::Exit => self.exit_stmt(s),
            StmtKind::Return(v) => self.return_stmt(s, v.as_ref()),
            StmtKind::Decl(d) => self.decl_stmt(d),
            StmtKind::For {
                init,
                cond,
                update,
                body,
            } => self.for_stmt(init, cond.as_ref(), update, body),
            StmtKind::ForIn {
                ty,
                var,
                range,
                body,
            } => self.for_in_stmt(ty.as_ref(), var, range, body),
            StmtKind::Break | StmtKind::Continue => self.loop_jump_stmt(s),
        }
    }

    /// Whether the statement being checked is in a parser state.
    fn in_parser_state(&self) -> bool {
        self.ctx.block_kind == BlockKind::Parser && self.ctx.in_state
    }

    /// `l = r;` (§11.1): `l` an l-value, not of type `int` or `string`; `r` of its type.
    fn assign_stmt(&mut self, l: &Expr, r: &Expr) {
        let lt = self.check_expr(l, None);
        let lv = self.check_lvalue(l);
        if lv && !lt.is_error() {
            if matches!(lt, Type::Int | Type::String) {
                self.err(l.span, format!("cannot assign to a value of type {lt}"));
            }
            self.check_expr_expect(r, &lt, "assignment");
        } else {
            self.check_expr(r, None);
        }
    }

    /// `l op= r;` (as p4c accepts it): `l op r` defined on the operands' types.
    fn op_assign_stmt(&mut self, s: &Stmt, op: ast::BinOp, l: &Expr, r: &Expr) {
        let lt = self.check_expr(l, None);
        self.check_lvalue(l);
        let rt = if matches!(op, ast::BinOp::Shl | ast::BinOp::Shr) {
            self.check_expr(r, None)
        } else {
            self.check_expr(r, Some(&lt))
        };
        if lt.is_error() || rt.is_error() {
            return;
        }
        let ok = match op {
            ast::BinOp::Shl | ast::BinOp::Shr => {
                lt.is_fixed_int()
                    && (rt.underlying_int().is_fixed_int()
                        && matches!(rt.underlying_int(), Type::Bit(_))
                        || matches!(rt, Type::Int))
            }
            ast::BinOp::And | ast::BinOp::Or => {
                matches!(lt, Type::Bool) && matches!(rt, Type::Bool)
            }
            _ => {
                lt.is_fixed_int() && self.assignable(&rt, lt.underlying_int())
                    || same(&lt, &rt) && lt.is_fixed_int()
            }
        };
        if !ok {
            self.err(
                s.span,
                format!("{}=: cannot be applied to {lt} and {rt}", op.symbol()),
            );
        } else if matches!(rt, Type::Int) {
            let to = lt.underlying_int().clone();
            if !matches!(op, ast::BinOp::Shl | ast::BinOp::Shr) {
                self.coerce(r, &rt, &to, "operand");
            }
        }
    }

    /// An expression statement (§11.2): a method or function call.
    fn call_stmt(&mut self, e: &Expr) {
        self.check_expr(e, None);
        if !matches!(e.kind, ExprKind::Call { .. }) {
            self.err(
                e.span,
                "expression statement must be a method or function call",
            );
        }
    }

    /// `if (cond) then else otherwise` (§11.6): a boolean condition; each branch its scope.
    fn if_stmt(&mut self, cond: &Expr, then: &Stmt, otherwise: Option<&Stmt>) {
        self.check_expr_expect(cond, &Type::Bool, "condition");
        self.scoped(|c| c.stmt(then));
        if let Some(o) = otherwise {
            self.scoped(|c| c.stmt(o));
        }
    }

    /// `exit` (§11.4): not in parsers, nor in functions.
    fn exit_stmt(&mut self, s: &Stmt) {
        if self.ctx.block_kind == BlockKind::Parser
            && self.ctx.action.is_none()
            && self.ctx.function.is_none()
        {
            self.err(s.span, "exit statements are not allowed in parsers");
        } else if self.ctx.function.is_some() {
            self.err(s.span, "exit statements are not allowed in functions");
        }
    }

    /// `return` (§11.5): with a value of the function's return type in a function returning
    /// one, without one elsewhere; not in parsers.
    fn return_stmt(&mut self, s: &Stmt, v: Option<&Expr>) {
        if let Some(ret) = self.ctx.ret.clone() {
            match (v, &ret) {
                (None, Type::Void) => {}
                (None, t) => self.err(
                    s.span,
                    format!("return with no expression in a function returning {t}"),
                ),
                (Some(e), Type::Void) => {
                    self.check_expr(e, None);
                    self.err(s.span, "return expression in function with void return");
                }
                (Some(e), t) => {
                    self.check_expr_expect(e, t, "return value");
                }
            }
        } else if self.ctx.block_kind == BlockKind::Parser && self.ctx.action.is_none() {
            self.err(s.span, "return statements are not allowed in parsers");
            if let Some(e) = v {
                self.check_expr(e, None);
            }
        } else if let Some(e) = v {
            self.check_expr(e, None);
            self.err(s.span, "return with a value is only allowed in functions");
        }
    }

    /// A declaration in a block (§11.3): constants and variables, instantiations only in
    /// parser states; a name may not shadow a parameter of the enclosing action, function or
    /// block.
    fn decl_stmt(&mut self, d: &ast::Decl) {
        match &d.kind {
            DeclKind::Const(_) | DeclKind::Variable(_) => {}
            DeclKind::Instantiation(_) if self.in_parser_state() => {}
            DeclKind::Instantiation(_) => {
                self.err(d.span, "invalid declaration. instantiations cannot be in a control apply block, action or function");
                return;
            }
            _ => {
                self.err(d.span, "declaration not allowed in a statement block");
                return;
            }
        }
        let parent = self.ctx.action.or(self.ctx.function).or(self.ctx.block);
        if let Some(n) = d.name() {
            let decls = &self.out.decls;
            let shadowed = self.scopes.lookup(&n.name, false, |x| {
                decls[x.0 as usize].kind == EntityKind::Param
            });
            if let Some(&p) = shadowed.first() {
                if self.decl(p).parent == parent
                    || Some(self.decl(p).parent) == Some(self.ctx.block)
                {
                    self.err(
                        n.span,
                        format!(
                            "declaration of '{}' shadows a parameter '{}'",
                            n.name, n.name
                        ),
                    );
                }
            }
        }
        self.decl_any(d, parent);
    }

    /// `for (init; cond; update) body` (spec v1.2.4 §11.8): one scope, a boolean condition.
    fn for_stmt(&mut self, init: &[Stmt], cond: Option<&Expr>, update: &[Stmt], body: &Stmt) {
        self.scoped(|c| {
            for i in init {
                c.stmt(i);
            }
            if let Some(cond) = cond {
                c.check_expr_expect(cond, &Type::Bool, "loop condition");
            }
            for u in update {
                c.stmt(u);
            }
            c.ctx.loop_depth += 1;
            c.scoped(|c| c.stmt(body));
            c.ctx.loop_depth -= 1;
        })
    }

    /// `for (T x in range) body` (spec v1.2.4 §11.8): `x` declared in a scope of its own, of
    /// type `T` or the range's element type.
    fn for_in_stmt(
        &mut self,
        ty: Option<&ast::TypeRef>,
        var: &ast::Ident,
        range: &Expr,
        body: &Stmt,
    ) {
        self.scoped(|c| {
            let declared = ty.map(|t| c.resolve_type(t));
            let elem = c.range_elem(range, declared.as_ref());
            let vt = declared.unwrap_or(elem);
            let mut info = DeclInfo::new(
                EntityKind::Variable,
                &var.name,
                var.span,
                var.span,
                c.ctx.block,
            );
            info.ty = vt;
            let id = c.new_decl(info);
            c.bind(id);
            c.ctx.loop_depth += 1;
            c.scoped(|c| c.stmt(body));
            c.ctx.loop_depth -= 1;
        })
    }

    /// The element type of a `for`-`in` range: `lo..hi` (its bounds converted to the declared
    /// type, if any), a header stack, a list or a tuple.
    fn range_elem(&mut self, range: &Expr, declared: Option<&Type>) -> Type {
        match &range.kind {
            ExprKind::Range(lo, hi) => {
                let want = declared.cloned();
                let tl = self.check_expr(lo, want.as_ref());
                let th = self.check_expr(hi, want.as_ref());
                let t = match &want {
                    Some(w) => {
                        self.coerce(lo, &tl, w, "range bound");
                        self.coerce(hi, &th, w, "range bound");
                        w.clone()
                    }
                    None if matches!(tl, Type::Int) => th.clone(),
                    None => tl.clone(),
                };
                self.set_type(range.id, Type::Set(Box::new(t.clone())));
                t
            }
            _ => {
                let t = self.check_expr(range, None);
                match t {
                    Type::Stack(e, _) | Type::List(e) => *e,
                    Type::Tuple(ts) | Type::ListExpr(ts) => {
                        ts.first().cloned().unwrap_or(Type::Error)
                    }
                    Type::Error => Type::Error,
                    t => {
                        self.err(
                            range.span,
                            format!("cannot iterate over a value of type {t}"),
                        );
                        Type::Error
                    }
                }
            }
        }
    }

    /// `break`, `continue` (spec v1.2.4 §11.8): only in a loop.
    fn loop_jump_stmt(&mut self, s: &Stmt) {
        if self.ctx.loop_depth == 0 {
            let k = if matches!(s.kind, StmtKind::Break) {
                "break"
            } else {
                "continue"
            };
            self.err(s.span, format!("{k} statement outside of a loop"));
        }
    }

    /// `switch` (§11.7): not in parsers; on a table's `action_run` or a value.
    fn switch_stmt(&mut self, s: &Stmt, expr: &Expr, cases: &[ast::SwitchCase]) {
        if self.in_parser_state() {
            self.err(s.span, "switch statements are not allowed in parsers");
        }
        self.allow_action_run =
            matches!(&expr.kind, ExprKind::Member(_, m) if m.name == "action_run");
        let t = self.check_expr(expr, None);
        self.allow_action_run = false;
        let mut seen_default = false;
        let mut seen: Vec<(String, ast::Expr)> = Vec::new();
        let mut seen_vals: Vec<Value> = Vec::new();
        for (i, c) in cases.iter().enumerate() {
            match &c.label {
                SwitchLabel::Default(sp) => {
                    if seen_default {
                        self.err(*sp, "switch has multiple 'default' labels");
                    }
                    seen_default = true;
                }
                SwitchLabel::Expr(l) => {
                    if seen_default {
                        self.err(
                            l.span,
                            "switch label follows 'default' label, which is not allowed",
                        );
                    }
                    match &t {
                        Type::ActionRun(tbl) => self.action_label(*tbl, l, &mut seen),
                        Type::Error => {
                            self.check_expr(l, None);
                        }
                        t => {
                            let ok = matches!(
                                t.underlying_int(),
                                Type::Bit(_) | Type::Signed(_) | Type::Int
                            ) || matches!(
                                t,
                                Type::Enum(_) | Type::ErrorT | Type::Bool | Type::NewType(_)
                            );
                            if !ok {
                                self.check_expr(l, None);
                                if i == 0 {
                                    self.err(
                                        expr.span,
                                        format!("switch expression of type {t} is not supported"),
                                    );
                                }
                                continue;
                            }
                            let lt = self.check_expr_expect(l, t, "switch label");
                            if lt.is_error() {
                                continue;
                            }
                            match self.value_of(l.id) {
                                Some(v) => {
                                    if seen_vals.contains(&v) {
                                        self.err(l.span, format!("duplicate case label {v}"));
                                    }
                                    seen_vals.push(v);
                                }
                                None => {
                                    self.err(l.span, "switch label must be a compile-time constant")
                                }
                            }
                        }
                    }
                }
            }
            if let Some(b) = &c.body {
                self.block(b);
            }
        }
    }

    fn action_label(&mut self, tbl: DeclId, l: &Expr, seen: &mut Vec<(String, Expr)>) {
        let ExprKind::Path(p) = &l.kind else {
            self.check_expr(l, None);
            self.err(l.span, "switch label on action_run must be an action name");
            return;
        };
        let decls = &self.out.decls;
        let found = self.scopes.lookup(&p.name.name, p.global, |d| {
            decls[d.0 as usize].kind == EntityKind::Action
        });
        let Some(&a) = found.first() else {
            self.err(p.span, format!("{}: declaration not found", p.name.name));
            return;
        };
        self.out.resolved.insert(l.id, a);
        self.set_type(l.id, Type::Action(a));
        if seen.iter().any(|(n, _)| *n == p.name.name) {
            self.err(l.span, format!("duplicate case label {}", p.name.name));
        }
        seen.push((p.name.name.clone(), l.clone()));
        let in_table = self
            .out
            .tables
            .get(&tbl)
            .map(|t| t.actions.iter().any(|x| x.action == a))
            .unwrap_or(true);
        if !in_table {
            let tn = self.decl(tbl).name.clone();
            self.err(
                l.span,
                format!("{}: not an action of table {tn}", p.name.name),
            );
        }
    }

    // -----------------------------------------------------------------------------------------
    // Parsers (spec §12)

    pub fn parser_body(&mut self, p: &ast::ParserDecl, id: DeclId) {
        for l in &p.locals {
            let in_parser_ok = matches!(
                l.kind,
                DeclKind::Const(_)
                    | DeclKind::Variable(_)
                    | DeclKind::Instantiation(_)
                    | DeclKind::ValueSet(_)
            );
            if !in_parser_ok {
                let name = l.name().map(|n| n.name.clone()).unwrap_or_default();
                self.err(
                    l.span,
                    format!("{name}: declaration not allowed in a parser"),
                );
                continue;
            }
            self.decl_any(l, Some(id));
        }
        // States are visible everywhere in the parser (forward references allowed).
        let mut states: HashMap<String, DeclId> = HashMap::new();
        for st in &p.states {
            let n = &st.name.name;
            if n == "accept" || n == "reject" {
                self.err(
                    st.name.span,
                    format!("invalid parser state: {n} should not be implemented, it is built-in"),
                );
                continue;
            }
            if states.contains_key(n) {
                self.err(st.name.span, format!("{n}: duplicate state"));
                continue;
            }
            let mut info = DeclInfo::new(EntityKind::State, n, st.span, st.name.span, Some(id));
            info.ty = Type::State;
            let sid = self.new_decl(info);
            states.insert(n.clone(), sid);
        }
        if !states.contains_key("start") {
            self.err(
                p.name.span,
                format!("parser {} has no 'start' state", p.name.name),
            );
        }
        let saved = std::mem::replace(&mut self.states, states);
        let mut edges: HashMap<String, Vec<String>> = HashMap::new();
        for st in &p.states {
            self.check_annotations(&st.annotations);
            if let Some(ast::Transition::Select { cases, .. }) = &st.transition {
                for c in cases {
                    self.check_annotations(&c.annotations);
                }
            }
            let ctx = Ctx {
                in_state: true,
                ..self.ctx.clone()
            };
            let targets = self.with_ctx(ctx, |c| {
                c.scoped(|c| {
                    for s in &st.stmts {
                        c.stmt(s);
                    }
                    match &st.transition {
                        None => vec!["reject".to_string()],
                        Some(ast::Transition::Direct(path)) => {
                            c.state_ref(path);
                            vec![path.name.name.clone()]
                        }
                        Some(ast::Transition::Select { exprs, cases, .. }) => {
                            c.select(exprs, cases);
                            cases.iter().map(|k| k.next.name.name.clone()).collect()
                        }
                    }
                })
            });
            edges.entry(st.name.name.clone()).or_insert(targets);
        }
        // Reachability (warnings) and termination (error when nothing reaches accept/reject).
        let mut reach: HashSet<String> = HashSet::new();
        let mut stack = vec!["start".to_string()];
        while let Some(s) = stack.pop() {
            if !reach.insert(s.clone()) {
                continue;
            }
            if let Some(ts) = edges.get(&s) {
                stack.extend(ts.iter().cloned());
            }
        }
        if self.states.contains_key("start")
            && !reach.contains("accept")
            && !reach.contains("reject")
        {
            self.err(
                p.name.span,
                format!(
                    "parser {}: parser never reaches accept or reject state",
                    p.name.name
                ),
            );
        }
        for st in &p.states {
            if !reach.contains(&st.name.name) && self.states.contains_key(&st.name.name) {
                self.warn(
                    st.name.span,
                    format!("{}: state is unreachable", st.name.name),
                );
            }
        }
        self.states = saved;
    }

    fn state_ref(&mut self, p: &ast::Path) {
        let n = &p.name.name;
        if n == "accept" || n == "reject" {
            return;
        }
        if !self.states.contains_key(n) {
            self.err(p.span, format!("{n}: no such parser state"));
        }
    }

    fn select(&mut self, exprs: &[Expr], cases: &[ast::SelectCase]) {
        let keys: Vec<Type> = exprs
            .iter()
            .map(|e| {
                let t = self.check_expr(e, None);
                let scalar = |t: &Type| {
                    matches!(
                        t.strip_newtype().underlying_int(),
                        Type::Bit(_)
                            | Type::Signed(_)
                            | Type::Bool
                            | Type::Enum(_)
                            | Type::ErrorT
                            | Type::Error
                    )
                };
                let ok = scalar(&t)
                    || matches!(&t, Type::Tuple(ts) | Type::ListExpr(ts) if ts.iter().all(scalar));
                if !ok {
                    if matches!(t, Type::Int) {
                        self.err(e.span, "select expression: could not infer a width");
                    } else {
                        self.err(
                            e.span,
                            format!("select expression of type {t} is not supported"),
                        );
                    }
                    Type::Error
                } else {
                    t
                }
            })
            .collect();
        for c in cases {
            self.keyset(&c.keyset, &keys);
            self.state_ref(&c.next);
        }
    }

    /// A select label / table entry keyset against the key types (spec §12.7, §8.14).
    pub fn keyset(&mut self, ks: &Expr, keys: &[Type]) {
        match &ks.kind {
            ExprKind::Default | ExprKind::DontCare => self.set_type(ks.id, Type::DontCare),
            ExprKind::List { items, .. }
                if keys.len() == 1 && items.len() == 1 && !is_composite(&keys[0]) =>
            {
                // `(k)`: a parenthesized single keyset.
                self.keyset_elem(&items[0], &keys[0]);
                let t = self.type_of(items[0].id);
                self.set_type(ks.id, t);
            }
            ExprKind::List { items, .. } if keys.len() != 1 => {
                if items.len() != keys.len() {
                    for i in items {
                        self.check_expr(i, None);
                    }
                    self.err(
                        ks.span,
                        format!(
                            "keyset has {} components, but the select has {} expressions",
                            items.len(),
                            keys.len()
                        ),
                    );
                    self.set_type(ks.id, Type::Error);
                    return;
                }
                let mut ts = Vec::new();
                for (i, k) in items.iter().zip(keys) {
                    self.keyset_elem(i, k);
                    ts.push(self.type_of(i.id));
                }
                self.set_type(ks.id, Type::Tuple(ts));
            }
            _ if keys.len() == 1 => self.keyset_elem(ks, &keys[0]),
            _ => {
                let t = self.check_expr(ks, None);
                match &t {
                    Type::ValueSet(_) | Type::Error => {}
                    _ => self.err(
                        ks.span,
                        format!("keyset must have {} components", keys.len()),
                    ),
                }
            }
        }
    }

    fn keyset_elem(&mut self, e: &Expr, key: &Type) {
        match &e.kind {
            ExprKind::Default | ExprKind::DontCare => self.set_type(e.id, Type::DontCare),
            ExprKind::List { items, .. } if is_composite(key) => {
                let comps = components(key);
                if comps.len() != items.len() {
                    for i in items {
                        self.check_expr(i, None);
                    }
                    self.err(
                        e.span,
                        format!(
                            "keyset has {} components, but the key has {}",
                            items.len(),
                            comps.len()
                        ),
                    );
                    self.set_type(e.id, Type::Error);
                    return;
                }
                for (i, k) in items.iter().zip(&comps) {
                    self.keyset_elem(i, k);
                }
                self.set_type(e.id, key.clone());
            }
            ExprKind::Mask(v, m) | ExprKind::Range(v, m) => {
                let is_mask = matches!(e.kind, ExprKind::Mask(..));
                let k = if is_mask {
                    key.underlying_int().clone()
                } else {
                    key.clone()
                };
                let kk = if is_mask {
                    k.clone()
                } else {
                    key.underlying_int().clone()
                };
                let tv = self.check_expr(v, Some(&kk));
                let tm = self.check_expr(m, Some(&kk));
                if !key.is_error() {
                    let numeric = kk.is_fixed_int() || matches!(kk, Type::Int);
                    if !numeric {
                        self.err(
                            e.span,
                            format!(
                                "{} is not defined on keys of type {key}",
                                if is_mask { "&&&" } else { ".." }
                            ),
                        );
                    } else {
                        self.coerce(v, &tv, &kk, "keyset");
                        self.coerce(m, &tm, &kk, "keyset");
                    }
                }
                for x in [v, m] {
                    if !self.is_ctk(x) {
                        let what = if is_mask { "mask" } else { "range boundaries" };
                        self.err(x.span, format!("{what} must be compile-time constants"));
                    }
                }
                if let (Some(a), Some(b)) = (self.value_of(v.id), self.value_of(m.id)) {
                    self.set_value(e.id, Value::List(vec![a, b]));
                }
                self.set_type(e.id, Type::Set(Box::new(key.clone())));
            }
            _ => {
                let t = self.check_expr(e, Some(key));
                match &t {
                    Type::ValueSet(et) => {
                        if !key.is_error() && !self.assignable(et, key) && !same(et, key) {
                            let matches_tuple = match (et.as_ref(), key) {
                                (Type::Agg(a), Type::Tuple(ts) | Type::ListExpr(ts)) => {
                                    a.fields.len() == ts.len()
                                }
                                (Type::Agg(a), k) => {
                                    a.fields.len() == 1 && self.assignable(&a.fields[0].1, k)
                                }
                                _ => false,
                            };
                            if !matches_tuple {
                                self.err(
                                    e.span,
                                    format!(
                                        "value set of type {et} cannot match a key of type {key}"
                                    ),
                                );
                            }
                        }
                    }
                    _ => {
                        // p4c also accepts run-time select labels; only masks and ranges must be constant.
                        self.coerce(e, &t, key, "keyset");
                        if self.contains_user_call(e, 0) {
                            self.err(e.span, "no function calls allowed in this context");
                        }
                    }
                }
            }
        }
    }
}

/// Whether every path through the block ends in `return` (or `exit`) (spec §10).
pub fn block_returns(b: &ast::Block) -> bool {
    b.stmts.iter().any(|s| stmt_returns(s, 0))
}

fn stmt_returns(s: &Stmt, depth: u32) -> bool {
    if depth > 200 {
        return true;
    }
    match &s.kind {
        StmtKind::Return(_) | StmtKind::Exit => true,
        StmtKind::Block(b) => b.stmts.iter().any(|x| stmt_returns(x, depth + 1)),
        StmtKind::If {
            then,
            otherwise: Some(o),
            ..
        } => stmt_returns(then, depth + 1) && stmt_returns(o, depth + 1),
        StmtKind::Switch { cases, .. } => {
            cases
                .iter()
                .any(|c| matches!(c.label, SwitchLabel::Default(_)))
                && cases.iter().all(|c| {
                    c.body
                        .as_ref()
                        .is_none_or(|b| b.stmts.iter().any(|x| stmt_returns(x, depth + 1)))
                })
        }
        _ => false,
    }
}

/// Whether a key type has components a keyset can list (`select({a, b})`, struct keys).
fn is_composite(t: &Type) -> bool {
    matches!(t, Type::Tuple(_) | Type::ListExpr(_))
        || matches!(t, Type::Agg(a) if a.kind == super::types::AggKind::Struct)
}

fn components(t: &Type) -> Vec<Type> {
    match t {
        Type::Tuple(ts) | Type::ListExpr(ts) => ts.clone(),
        Type::Agg(a) => a.fields.iter().map(|f| f.1.clone()).collect(),
        _ => vec![t.clone()],
    }
}
