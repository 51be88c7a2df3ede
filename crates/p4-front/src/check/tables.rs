//! Tables (P4_16 spec §14.2): keys, action lists, default actions, entries, size and the
//! architecture-specific properties nevermiss uses (PNA `add_on_miss`, idle timeouts).

use super::consteval::Value;
use super::scope::{DeclId, DeclInfo, EntityKind, ParamInfo};
use super::types::Type;
use super::{CallArg, Checker, Ctx, DefaultAction, TableAction, TableEntry, TableInfo, TableKey};
use crate::ast::{self, DeclKind, Direction, Expr, ExprKind, TablePropertyKind};
use crate::source::Span;
use std::collections::HashSet;

/// How the arguments of an action reference bind its parameters.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Bind {
    /// In an `actions` list: exactly the directional parameters.
    List,
    /// `default_action` / entries: all parameters; directionless ones compile-time known.
    Full,
}

impl<'a> Checker<'a> {
    pub fn decl_table(&mut self, t: &ast::TableDecl, span: Span, parent: Option<DeclId>) -> DeclId {
        let mut info = DeclInfo::new(EntityKind::Table, &t.name.name, span, t.name.span, parent);
        info.annotations = Self::annotation_names(&t.annotations);
        let id = self.new_decl(info);
        self.decl_mut(id).ty = Type::Table(id);
        let mut ti = TableInfo {
            decl: id,
            keys: Vec::new(),
            actions: Vec::new(),
            default_action: None,
            entries: Vec::new(),
            entries_const: false,
            size: None,
            add_on_miss: false,
            idle_timeout: None,
            properties: Vec::new(),
        };
        let ctx = Ctx {
            in_table: true,
            ..self.ctx.clone()
        };
        self.with_ctx(ctx, |c| c.table_properties(t, &mut ti));
        self.out.tables.insert(id, ti);
        self.bind(id);
        id
    }

    fn table_properties(&mut self, t: &ast::TableDecl, ti: &mut TableInfo) {
        let mut seen: HashSet<String> = HashSet::new();
        let mut has_actions = false;
        let mut has_key = false;
        // Pass 1: everything but default_action and entries (they refer to the others).
        for p in &t.properties {
            self.check_annotations(&p.annotations);
            let pname = match &p.kind {
                TablePropertyKind::Key(_) => "key".to_string(),
                TablePropertyKind::Actions(_) => "actions".to_string(),
                TablePropertyKind::Entries(_) => "entries".to_string(),
                TablePropertyKind::Other { name, .. } => name.name.clone(),
            };
            if !seen.insert(pname.clone()) {
                self.err(p.span, format!("{pname}: duplicate table property"));
                continue;
            }
            match &p.kind {
                TablePropertyKind::Key(elems) => {
                    has_key = true;
                    for k in elems {
                        self.table_key(k, ti);
                    }
                }
                TablePropertyKind::Actions(refs) => {
                    has_actions = true;
                    for r in refs {
                        self.table_action(r, ti);
                    }
                }
                TablePropertyKind::Entries(_) => {}
                TablePropertyKind::Other { name, value } => {
                    if name.name != "default_action" {
                        self.table_other(&name.name, value, ti);
                    }
                }
            }
        }
        if !has_actions {
            self.err(
                t.name.span,
                format!("table {}: does not have an 'actions' property", t.name.name),
            );
        }
        // Pass 2 (in source order: default_action must follow actions, entries must follow key).
        let mut has_default = false;
        let mut seen_actions = false;
        let mut seen_key = false;
        for p in &t.properties {
            match &p.kind {
                TablePropertyKind::Actions(_) => seen_actions = true,
                TablePropertyKind::Key(_) => seen_key = true,
                TablePropertyKind::Other { name, value } if name.name == "default_action" => {
                    has_default = true;
                    if !seen_actions && has_actions {
                        self.err(
                            p.span,
                            format!(
                                "{} has no action list before its default_action",
                                t.name.name
                            ),
                        );
                    }
                    self.default_action(value, p.is_const, p.span, ti);
                }
                TablePropertyKind::Entries(_) if !seen_key && has_key => {
                    self.err(p.span, "entries list must be after table key");
                }
                TablePropertyKind::Entries(es) => {
                    if (!has_key || ti.keys.is_empty()) && !es.is_empty() {
                        self.err(
                            p.span,
                            format!(
                                "entries cannot be specified for a table with no key {}",
                                t.name.name
                            ),
                        );
                        continue;
                    }
                    ti.entries_const = p.is_const;
                    for e in es {
                        self.table_entry(e, ti);
                    }
                    self.check_priorities(es, ti);
                }
                _ => {}
            }
        }
        if !has_default {
            let decls = &self.out.decls;
            let na = self.scopes.lookup("NoAction", true, |d| {
                decls[d.0 as usize].kind == EntityKind::Action
            });
            match na.first() {
                None => self.err(
                    t.name.span,
                    "declaration of the action NoAction not found; did you include core.p4?",
                ),
                Some(&d) if !self.decl(d).params.is_empty() => self.err(
                    t.name.span,
                    "expected an action with no parameters; did you include core.p4?",
                ),
                Some(_) => {}
            }
        }
    }

    fn table_key(&mut self, k: &ast::KeyElement, ti: &mut TableInfo) {
        self.check_annotations(&k.annotations);
        if let ExprKind::Path(p) = &k.expr.kind {
            if p.name.name == self.decl(ti.decl).name {
                self.err(
                    k.expr.span,
                    format!("{}: cannot refer to the containing table", p.name.name),
                );
            }
        }
        let t = self.check_expr(&k.expr, None);
        let has_name = k.annotations.iter().any(|a| a.name.name == "name");
        if !has_name && !self.simple_key(&k.expr, 0) {
            self.err(
                k.expr.span,
                format!(
                    "{}: complex key expression requires a @name annotation",
                    super::summary::expr_text(&k.expr)
                ),
            );
        }
        let ok = matches!(
            t.strip_newtype().underlying_int(),
            Type::Bit(_)
                | Type::Signed(_)
                | Type::Bool
                | Type::Enum(_)
                | Type::ErrorT
                | Type::Error
                | Type::Varbit(_)
        );
        if !ok {
            if matches!(t, Type::Int) {
                self.err(k.expr.span, "table key: could not infer a width");
            } else {
                self.err(k.expr.span, format!("key type {t} is not supported"));
            }
        }
        let decls = &self.out.decls;
        let mk = self
            .scopes
            .lookup(&k.match_kind.name.name, k.match_kind.global, |_| true);
        let match_kind = match mk.first() {
            Some(&d) if decls[d.0 as usize].kind == EntityKind::MatchKindMember => {
                k.match_kind.name.name.clone()
            }
            Some(_) => {
                self.err(
                    k.match_kind.span,
                    format!("{}: value must be a match_kind", k.match_kind.name.name),
                );
                String::new()
            }
            None => {
                self.err(
                    k.match_kind.span,
                    format!("{}: declaration not found", k.match_kind.name.name),
                );
                String::new()
            }
        };
        let name = k
            .annotations
            .iter()
            .find(|a| a.name.name == "name")
            .and_then(|a| match &a.body {
                ast::AnnotationBody::Expressions(es) => es.first().and_then(|e| match &e.kind {
                    ExprKind::String(s) => Some(s.clone()),
                    _ => None,
                }),
                _ => None,
            })
            .or_else(|| self.key_name(&k.expr, 0))
            .unwrap_or_else(|| super::summary::expr_text(&k.expr));
        ti.keys.push(TableKey {
            expr: k.expr.id,
            match_kind,
            ty: t,
            name,
            span: k.span,
        });
    }

    /// The control-plane name p4c gives a key without `@name` (its front end's
    /// `KeyNameGenerator`; P4Runtime spec §"Match fields"): paths as written (a leading `.`
    /// kept), `a.b`, `a[i]`, `a[h:l]`, `a & b`, constants in the base they were written in
    /// without their width, and `h.isValid()` of a header or header union as `h.$valid$`.
    /// `None` for anything else (such keys need a `@name`).
    pub(crate) fn key_name(&self, e: &Expr, depth: u32) -> Option<String> {
        if depth > 64 {
            return None;
        }
        let d = depth + 1;
        match &e.kind {
            ExprKind::Path(p) => Some(if p.global {
                format!(".{}", p.name.name)
            } else {
                p.name.name.clone()
            }),
            // A sized constant as p4c folds it: its value within its width (`8w0x3648` is 0x48).
            ExprKind::Int {
                value,
                radix,
                width: Some((w, false)),
            } if value.sign() != num_bigint::Sign::Minus && value.bits() > u64::from(*w) => {
                let mask = (num_bigint::BigInt::from(1u8) << *w) - 1u8;
                Some(ast::int_text(&(value & mask), *radix))
            }
            ExprKind::Int { value, radix, .. } => Some(ast::int_text(value, *radix)),
            ExprKind::Member(b, m) => {
                let base_ty = self.out.type_of(b.id);
                let fname = if m.name == "isValid"
                    && base_ty.is_some_and(|t| t.is_header() || t.is_union())
                {
                    "$valid$".to_string()
                } else {
                    // A field with `@name` is called by it; a global one (`.x`) drops the base.
                    match base_ty.and_then(|t| self.field_name_annotation(t, &m.name)) {
                        Some(n) if n.starts_with('.') => return Some(n[1..].to_string()),
                        Some(n) => n,
                        None => m.name.clone(),
                    }
                };
                Some(format!("{}.{fname}", self.key_name(b, d)?))
            }
            ExprKind::Index(b, i) => Some(format!(
                "{}[{}]",
                self.key_name(b, d)?,
                self.key_name(i, d)?
            )),
            ExprKind::Slice(b, h, l) => Some(format!(
                "{}[{}:{}]",
                self.key_name(b, d)?,
                self.key_name(h, d)?,
                self.key_name(l, d)?
            )),
            ExprKind::Binary(ast::BinOp::BitAnd, a, b) => Some(format!(
                "{} & {}",
                self.key_name(a, d)?,
                self.key_name(b, d)?
            )),
            ExprKind::Call { callee, args, .. } if args.is_empty() => {
                let m = self.key_name(callee, d)?;
                m.ends_with("$valid$").then_some(m)
            }
            _ => None,
        }
    }

    /// The `@name` of field `field` of a struct-like type, if it has one.
    fn field_name_annotation(&self, t: &Type, field: &str) -> Option<String> {
        let Type::Agg(a) = t else { return None };
        let span = self.out.decls.get(a.decl.0 as usize)?.span;
        let decl = self.prog.decls.iter().find(|d| d.span == span)?;
        let (DeclKind::Struct(sd) | DeclKind::Header(sd) | DeclKind::HeaderUnion(sd)) = &decl.kind
        else {
            return None;
        };
        let f = sd.fields.iter().find(|f| f.name.name == field)?;
        f.annotations
            .iter()
            .find(|a| a.name.name == "name")
            .and_then(|a| match &a.body {
                ast::AnnotationBody::Expressions(es) => es.first().and_then(|e| match &e.kind {
                    ExprKind::String(s) => Some(s.clone()),
                    _ => None,
                }),
                _ => None,
            })
    }

    /// Key expressions that get a control-plane name automatically (p4c's rules).
    fn simple_key(&self, e: &Expr, depth: u32) -> bool {
        if depth > 64 {
            return true;
        }
        if self.value_of(e.id).is_some() {
            return true;
        }
        match &e.kind {
            ExprKind::Path(_) => true,
            ExprKind::Member(b, _)
            | ExprKind::Index(b, _)
            | ExprKind::Slice(b, _, _)
            | ExprKind::PlusSlice(b, _, _) => self.simple_key(b, depth + 1),
            ExprKind::Binary(ast::BinOp::BitAnd, a, b) => {
                (self.simple_key(a, depth + 1) && self.value_of(b.id).is_some())
                    || (self.simple_key(b, depth + 1) && self.value_of(a.id).is_some())
            }
            ExprKind::Call { callee, args, .. } => {
                args.is_empty()
                    && matches!(&callee.kind, ExprKind::Member(b, m) if m.name == "isValid" && self.simple_key(b, depth + 1))
            }
            _ => false,
        }
    }

    /// Resolves an action name (actions only).
    fn lookup_action(&mut self, p: &ast::Path) -> Option<DeclId> {
        let decls = &self.out.decls;
        let acts = self.scopes.lookup(&p.name.name, p.global, |d| {
            decls[d.0 as usize].kind == EntityKind::Action
        });
        if let Some(&a) = acts.first() {
            return Some(a);
        }
        let any = self.scopes.lookup(&p.name.name, p.global, |_| true);
        if any.is_empty() {
            self.err(p.span, format!("{}: declaration not found", p.name.name));
        } else {
            self.err(p.span, format!("{} is not an action", p.name.name));
        }
        None
    }

    fn table_action(&mut self, r: &ast::ActionRef, ti: &mut TableInfo) {
        self.check_annotations(&r.annotations);
        let Some(a) = self.lookup_action(&r.name) else {
            if let Some(args) = &r.args {
                for x in args {
                    self.check_expr(&x.value, None);
                }
            }
            return;
        };
        if ti.actions.iter().any(|x| x.action == a) {
            self.err(
                r.span,
                format!("{}: duplicate action in the actions list", r.name.name.name),
            );
        }
        let args = self.bind_action(a, r.args.as_deref(), Bind::List, r.span);
        if let Some(xs) = &r.args {
            self.list_args
                .insert(r.span, xs.iter().map(|x| x.value.clone()).collect());
        }
        let anns = Self::annotation_names(&r.annotations);
        let default_only = anns.iter().any(|n| n == "defaultonly");
        let table_only = anns.iter().any(|n| n == "tableonly");
        if default_only && table_only {
            self.err(
                r.span,
                format!(
                    "{}: cannot be both @defaultonly and @tableonly",
                    r.name.name.name
                ),
            );
        }
        ti.actions.push(TableAction {
            action: a,
            args: args.unwrap_or_default(),
            default_only,
            table_only,
            span: r.span,
        });
    }

    /// Binds the arguments of an action reference; `None` if they do not check.
    fn bind_action(
        &mut self,
        a: DeclId,
        args: Option<&[ast::Arg]>,
        mode: Bind,
        span: Span,
    ) -> Option<Vec<CallArg>> {
        let info = self.decl(a).clone();
        let name = info.name.clone();
        let params: Vec<ParamInfo> = match mode {
            Bind::List => info
                .params
                .iter()
                .filter(|p| p.dir != Direction::None)
                .cloned()
                .collect(),
            Bind::Full => info.params.clone(),
        };
        let args = args.unwrap_or(&[]);
        if mode == Bind::List {
            let dirless: Vec<&ParamInfo> = info
                .params
                .iter()
                .filter(|p| p.dir == Direction::None)
                .collect();
            if args.len() > params.len() && args.iter().all(|x| x.name.is_none()) {
                let extra = dirless
                    .get(args.len() - params.len() - 1)
                    .or(dirless.first());
                if let Some(p) = extra {
                    self.err(
                        span,
                        format!(
                            "{name}: parameter {} cannot be bound: it is set by the control plane",
                            p.name
                        ),
                    );
                } else {
                    self.err(span, format!("{name}: too many arguments"));
                }
                for x in args {
                    self.check_expr(&x.value, None);
                }
                return None;
            }
            if let Some(n) = args
                .iter()
                .filter_map(|x| x.name.as_ref())
                .find(|n| dirless.iter().any(|p| p.name == n.name))
            {
                self.err(
                    n.span,
                    format!(
                        "{name}: parameter {} cannot be bound: it is set by the control plane",
                        n.name
                    ),
                );
                return None;
            }
            if args.len() < params.len() && args.iter().all(|x| x.name.is_none()) {
                self.err(
                    span,
                    format!(
                        "{name}: parameter {} must be bound",
                        params[args.len()].name
                    ),
                );
                for x in args {
                    self.check_expr(&x.value, None);
                }
                return None;
            }
        }
        let ctx = Ctx {
            in_table: false,
            ..self.ctx.clone()
        };
        let r = self.with_ctx(ctx, |c| {
            c.match_call(
                &params,
                &[],
                &[],
                args,
                span,
                &name,
                mode == Bind::Full,
                false,
            )
        });
        for x in args {
            if self.contains_table_apply(&x.value, 0) {
                self.err(x.value.span, "table invocation in action argument");
            }
        }
        let (_, map) = r?;
        if mode == Bind::List {
            // Expand to all parameters; directionless ones come from the control plane.
            let mut full = Vec::new();
            let mut it = map.into_iter();
            for p in &info.params {
                if p.dir == Direction::None {
                    full.push(CallArg::Omitted);
                } else {
                    full.push(it.next().unwrap_or(CallArg::Omitted));
                }
            }
            return Some(full);
        }
        Some(map)
    }

    fn table_other(&mut self, name: &str, value: &Expr, ti: &mut TableInfo) {
        let t = match name {
            "add_on_miss"
            | "idle_timeout_with_auto_delete"
            | "support_timeout"
            | "largest_priority_wins" => self.check_expr_expect(value, &Type::Bool, name),
            _ => self.check_expr(value, None),
        };
        let v = self.value_of(value.id);
        match name {
            "size" => match v.as_ref().and_then(|v| v.as_int().cloned()) {
                Some(n) => match u64::try_from(&n) {
                    Ok(n) => ti.size = Some(n),
                    Err(_) => self.err(
                        value.span,
                        format!("size must be a non-negative integer, found {n}"),
                    ),
                },
                None => {
                    let ctk_number = self.is_ctk(value)
                        && matches!(
                            t.underlying_int(),
                            Type::Int | Type::Bit(_) | Type::Signed(_)
                        );
                    if !t.is_error() && !ctk_number {
                        self.err(value.span, "size must be a constant numeric expression");
                    }
                }
            },
            "add_on_miss" => match v {
                Some(Value::Bool(b)) => ti.add_on_miss = b,
                _ if t.is_error() => {}
                _ => self.err(value.span, "add_on_miss must be a boolean constant"),
            },
            "pna_idle_timeout" | "psa_idle_timeout" => match v {
                Some(Value::Enum {
                    member: Some(m), ..
                }) => {
                    if m != "NO_TIMEOUT" {
                        ti.idle_timeout = Some(m);
                    }
                }
                _ if t.is_error() => {}
                _ => self.err(value.span, format!("{name} must be a constant enum value")),
            },
            "idle_timeout_with_auto_delete" | "support_timeout" => match v {
                Some(Value::Bool(true)) => ti.idle_timeout = Some(name.to_string()),
                Some(Value::Bool(false)) => {}
                _ if t.is_error() => {}
                _ => self.err(value.span, format!("{name} must be a boolean constant")),
            },
            "priority_delta"
                if !t.is_error() && v.as_ref().and_then(|v| v.as_int().cloned()).is_none() =>
            {
                self.err(value.span, "priority_delta must be a constant integer");
            }
            _ => {}
        }
        ti.properties
            .push((name.to_string(), value.id, self.value_of(value.id)));
    }

    fn default_action(&mut self, value: &Expr, is_const: bool, span: Span, ti: &mut TableInfo) {
        let (path, args, callee_id) = match &value.kind {
            ExprKind::Path(p) => (p, None, value.id),
            ExprKind::Call { callee, args, .. } => match &callee.kind {
                ExprKind::Path(p) => (p, Some(args.as_slice()), callee.id),
                _ => {
                    self.check_expr(value, None);
                    self.err(value.span, "default_action must be an action");
                    return;
                }
            },
            _ => {
                self.check_expr(value, None);
                self.err(value.span, "default_action must be an action");
                return;
            }
        };
        let Some(a) = self.lookup_action(path) else {
            return;
        };
        self.out.resolved.insert(callee_id, a);
        self.set_type(callee_id, Type::Action(a));
        self.set_type(value.id, Type::Action(a));
        let name = path.name.name.clone();
        let listed = ti.actions.iter().find(|x| x.action == a).cloned();
        match &listed {
            None => self.err(
                value.span,
                format!("{name}: default action is not in the table's actions list"),
            ),
            Some(x) if x.table_only => self.err(
                value.span,
                format!("{name}: action marked @tableonly cannot be the default action"),
            ),
            Some(_) => {}
        }
        let params = self.decl(a).params.clone();
        match args {
            None => {
                if let Some(p) = params.iter().find(|p| p.dir == Direction::None) {
                    self.err(
                        value.span,
                        format!("{name}: parameter {} must be bound", p.name),
                    );
                } else if let (Some(p), Some(x)) = (params.first(), &listed) {
                    let _ = (p, x);
                }
            }
            Some(args) => {
                if let Some(x) = &listed {
                    self.same_bound_args(a, x, args);
                }
                if let Some(map) = self.bind_action(a, Some(args), Bind::Full, value.span) {
                    let target = super::CallTarget::Action(a);
                    self.out.calls.insert(
                        value.id,
                        super::CallInfo {
                            target,
                            type_args: vec![],
                            args: map,
                        },
                    );
                }
            }
        }
        ti.default_action = Some(DefaultAction {
            action: a,
            expr: value.id,
            is_const,
            span,
        });
    }

    /// The directional arguments of a default action must be those of the actions list.
    fn same_bound_args(&mut self, a: DeclId, listed: &TableAction, args: &[ast::Arg]) {
        let Some(list_args) = self.list_args.get(&listed.span).cloned() else {
            return;
        };
        let params = self.decl(a).params.clone();
        for (i, p) in params.iter().enumerate() {
            if p.dir == Direction::None {
                continue;
            }
            let (Some(CallArg::Arg(li)), Some(arg)) = (listed.args.get(i), args.get(i)) else {
                continue;
            };
            if let Some(l) = list_args.get(*li) {
                let (x, y) = (
                    super::summary::canonical_text(l),
                    super::summary::canonical_text(&arg.value),
                );
                if x != y {
                    self.err(
                        arg.value.span,
                        format!("{y}: argument does not match declaration in actions list: {x}"),
                    );
                }
            }
        }
    }

    fn table_entry(&mut self, e: &ast::Entry, ti: &mut TableInfo) {
        self.check_annotations(&e.annotations);
        self.check_annotations(&e.action.annotations);
        let keys: Vec<(Type, String)> = ti
            .keys
            .iter()
            .map(|k| (k.ty.clone(), k.match_kind.clone()))
            .collect();
        let mut key_nodes = Vec::new();
        match &e.keyset.kind {
            ExprKind::List { items, .. } if keys.len() != 1 || items.len() != 1 => {
                if items.len() != keys.len() {
                    for i in items {
                        self.check_expr(i, None);
                    }
                    self.err(
                        e.keyset.span,
                        "size of entry keyset must match the table key set size",
                    );
                } else {
                    for (i, (kt, mk)) in items.iter().zip(&keys) {
                        self.entry_key(i, kt, mk);
                        key_nodes.push(i.id);
                    }
                    let ts = items.iter().map(|i| self.type_of(i.id)).collect();
                    self.set_type(e.keyset.id, Type::Tuple(ts));
                }
            }
            _ => {
                if keys.len() != 1 {
                    if !matches!(e.keyset.kind, ExprKind::Default | ExprKind::DontCare) {
                        self.check_expr(&e.keyset, None);
                        self.err(
                            e.keyset.span,
                            "size of entry keyset must match the table key set size",
                        );
                    }
                } else {
                    let (kt, mk) = &keys[0];
                    self.entry_key(&e.keyset, kt, mk);
                    key_nodes.push(e.keyset.id);
                }
            }
        }
        if let Some(p) = &e.priority {
            let t = self.check_expr(p, None);
            match self.value_of(p.id).and_then(|v| v.as_int().cloned()) {
                Some(v) if v >= 0.into() => {}
                Some(v) => self.err(p.span, format!("priority must be non-negative, found {v}")),
                None if !t.is_error() => {
                    self.err(p.span, "entry priority must be a compile-time constant")
                }
                None => {}
            }
        }
        let Some(a) = self.lookup_action(&e.action.name) else {
            return;
        };
        match ti.actions.iter().find(|x| x.action == a) {
            None => self.err(
                e.action.span,
                format!(
                    "{}: action is not in the table's actions list",
                    e.action.name.name.name
                ),
            ),
            Some(x) if x.default_only => self.err(
                e.action.span,
                format!(
                    "{}: action marked @defaultonly cannot be used in entries",
                    e.action.name.name.name
                ),
            ),
            Some(_) => {}
        }
        let args = e.action.args.as_deref().unwrap_or(&[]);
        if let Some(x) = ti.actions.iter().find(|x| x.action == a).cloned() {
            self.same_bound_args(a, &x, args);
        }
        if self
            .bind_action(a, Some(args), Bind::Full, e.action.span)
            .is_some()
        {
            ti.entries.push(TableEntry {
                keys: key_nodes,
                action: a,
                args: args.iter().map(|x| x.value.id).collect(),
                priority: e.priority.as_ref().map(|p| p.id),
                span: e.span,
            });
        }
    }

    fn entry_key(&mut self, k: &Expr, kt: &Type, mk: &str) {
        if let (ExprKind::Mask(_, m), "lpm") = (&k.kind, mk) {
            self.keyset_elem_pub(k, kt);
            if let (Some(v), Some((w, _))) = (
                self.value_of(m.id).and_then(|v| v.as_int().cloned()),
                kt.int_width(),
            ) {
                // A prefix mask: ones followed by zeros.
                let inv = (num_bigint::BigInt::from(1) << w) - 1u32 - &v;
                let ok = v >= num_bigint::BigInt::from(0)
                    && (&inv & (&inv + 1u32)) == num_bigint::BigInt::from(0);
                if !ok {
                    self.err(k.span, "invalid mask for LPM key");
                }
            }
            return;
        }
        if let (ExprKind::Mask(..), "optional") = (&k.kind, mk) {
            self.keyset_elem_pub(k, kt);
            self.err(
                k.span,
                "invalid key expression for an optional match key: only a value or _ is allowed",
            );
            return;
        }
        match (&k.kind, mk) {
            (ExprKind::Mask(..), "exact") => {
                self.keyset_elem_pub(k, kt);
                self.warn(k.span, "mask used for an exact match key");
            }
            (ExprKind::Range(..), m) if m != "range" && !m.is_empty() => {
                self.keyset_elem_pub(k, kt);
                self.err(k.span, format!("range keyset used for a {m} match key"));
            }
            _ => self.keyset_elem_pub(k, kt),
        }
    }

    fn keyset_elem_pub(&mut self, k: &Expr, kt: &Type) {
        self.keyset(k, std::slice::from_ref(kt));
    }

    /// Entry priorities are only meaningful with ternary / range / optional keys; when some
    /// entries give one, all must. Exact-only entries must not repeat a key.
    fn check_priorities(&mut self, es: &[ast::Entry], ti: &TableInfo) {
        let needs = ti
            .keys
            .iter()
            .any(|k| matches!(k.match_kind.as_str(), "ternary" | "range" | "optional"));
        if !needs {
            if let Some(e) = es.iter().find(|e| e.priority.is_some()) {
                self.err(
                    e.span,
                    "table key match type does not require priorities, but some are specified",
                );
            }
        } else if es.first().is_some_and(|e| e.priority.is_none()) {
            if let Some(e) = es.iter().find(|e| e.priority.is_some()) {
                self.err(
                    e.span,
                    "entry has a priority, but the first entry of the table does not",
                );
            }
        }
        if ti.keys.iter().all(|k| k.match_kind == "exact") {
            let mut seen: Vec<Vec<Value>> = Vec::new();
            for e in &ti.entries {
                let vals: Option<Vec<Value>> = e.keys.iter().map(|k| self.value_of(*k)).collect();
                if let Some(v) = vals {
                    if seen.contains(&v) {
                        self.err(e.span, "duplicate entry keys");
                    }
                    seen.push(v);
                }
            }
        }
    }
}
