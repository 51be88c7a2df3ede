//! Architecture detection (from the `main` package) and the PNA rules nevermiss enforces
//! (PNA spec §"Tables with add-on-miss capability", §"Table entry idle timeout",
//! §"Restrictions on where externs may be used"; see the project's PNA notes).

use super::consteval::Value;
use super::scope::{EntityKind, ParamInfo};
use super::types::{same, DeclId, Type};
use super::{Arch, CallArg, CallTarget, Checker, PnaDialect};
use crate::ast::{self, DeclKind, Direction, ExprKind};
use std::collections::{HashMap, HashSet};

impl<'a> Checker<'a> {
    /// Detects the architecture and records the blocks passed to `main`.
    pub fn check_main(&mut self) {
        let Some(main) = self.out.main else { return };
        let ty = self.decl(main).ty.clone();
        let o = match &ty {
            Type::Package(o) => o.clone(),
            Type::Error => return,
            _ => {
                let sp = self.decl(main).name_span;
                self.err(sp, "main: must be a package declaration");
                return;
            }
        };
        let pkg = self.decl(o.decl).clone();
        self.out.arch = match o.name.as_str() {
            "V1Switch" => Arch::V1Model,
            "PSA_Switch" => Arch::Psa,
            "PNA_NIC" => match pkg.ctor_params.len() {
                4 => Arch::Pna(PnaDialect::V06FourBlock),
                3 => Arch::Pna(PnaDialect::V07ThreeBlock),
                _ => Arch::Unknown,
            },
            _ => Arch::Unknown,
        };
        let Some(inst) = self.out.instances.get(&main).cloned() else {
            return;
        };
        let Some(ast_inst) = self.find_top_instantiation(self.decl(main).span) else {
            return;
        };
        let mut blocks = Vec::new();
        self.collect_blocks(
            &pkg.ctor_params,
            &inst.args,
            &ast_inst.args,
            "",
            0,
            &mut blocks,
        );
        self.out.main_blocks = blocks;
    }

    fn find_top_instantiation(&self, span: crate::source::Span) -> Option<&'a ast::Instantiation> {
        self.prog.decls.iter().find_map(|d| match &d.kind {
            DeclKind::Instantiation(i) if d.span == span => Some(i),
            _ => None,
        })
    }

    fn collect_blocks(
        &self,
        params: &[ParamInfo],
        map: &[CallArg],
        args: &'a [ast::Arg],
        prefix: &str,
        depth: u32,
        out: &mut Vec<(String, DeclId)>,
    ) {
        if depth > 8 {
            return;
        }
        for (p, ca) in params.iter().zip(map) {
            let CallArg::Arg(i) = ca else { continue };
            let Some(arg) = args.get(*i) else { continue };
            let e = &arg.value;
            let pname = format!("{prefix}{}", p.name);
            match &e.kind {
                ExprKind::Call { args: inner, .. } => {
                    let Some(ci) = self.out.calls.get(&e.id) else {
                        continue;
                    };
                    if let CallTarget::Instantiate(d) = ci.target {
                        match self.decl(d).kind {
                            EntityKind::Parser | EntityKind::Control => out.push((pname, d)),
                            EntityKind::PackageType => {
                                let ps = self.decl(d).ctor_params.clone();
                                self.collect_blocks(
                                    &ps,
                                    &ci.args,
                                    inner,
                                    &format!("{pname}."),
                                    depth + 1,
                                    out,
                                );
                            }
                            _ => {}
                        }
                    }
                }
                ExprKind::Path(_) => {
                    let Some(&d) = self.out.resolved.get(&e.id) else {
                        continue;
                    };
                    if self.decl(d).kind != EntityKind::Instance {
                        continue;
                    }
                    let Some(ii) = self.out.instances.get(&d) else {
                        continue;
                    };
                    match &ii.ty {
                        Type::Parser(o) | Type::Control(o) => out.push((pname, o.decl)),
                        Type::Package(o) => {
                            let ps = self.decl(o.decl).ctor_params.clone();
                            if let Some(ai) = self.find_top_instantiation(self.decl(d).span) {
                                self.collect_blocks(
                                    &ps,
                                    &ii.args,
                                    &ai.args,
                                    &format!("{pname}."),
                                    depth + 1,
                                    out,
                                );
                            }
                        }
                        _ => {}
                    }
                }
                _ => {}
            }
        }
    }

    /// Architecture-specific rules, run after the whole program was checked.
    /// Control-plane names (spec §18.3.2): two different tables or actions must not get the
    /// same fully-qualified name (`@name(".x")` is absolute, `@name("x")` and plain names are
    /// relative to the enclosing control).
    pub fn control_plane_names(&mut self) {
        // Only actions reachable from a table reach the control plane.
        let used: HashSet<DeclId> = self
            .out
            .tables
            .values()
            .flat_map(|t| {
                t.actions
                    .iter()
                    .map(|a| a.action)
                    .chain(t.default_action.as_ref().map(|d| d.action))
            })
            .collect();
        let mut seen: HashMap<(bool, String), DeclId> = HashMap::new();
        for i in 0..self.out.decls.len() {
            let id = DeclId(i as u32);
            let d = self.decl(id);
            let is_table = d.kind == EntityKind::Table;
            if !(is_table || d.kind == EntityKind::Action && used.contains(&id)) {
                continue;
            }
            let span = d.name_span;
            let prefix = match d.parent {
                Some(p) if matches!(self.decl(p).kind, EntityKind::Control) => {
                    format!("{}.", self.decl(p).name)
                }
                _ => String::new(),
            };
            let name = match self.cp_names.get(&id) {
                Some(n) if n.starts_with('.') => n[1..].to_string(),
                Some(n) => format!("{prefix}{n}"),
                None => format!("{prefix}{}", d.name),
            };
            let key = (is_table, name);
            if let Some(&other) = seen.get(&key) {
                if other != id {
                    self.err(span, format!("{}: conflicting control plane name", key.1));
                }
            } else {
                seen.insert(key, id);
            }
        }
    }

    pub fn arch_rules(&mut self) {
        match self.out.arch {
            Arch::Pna(dialect) => self.pna_rules(dialect),
            Arch::Psa => self.psa_rules(),
            _ => {}
        }
    }

    /// PSA (as implemented by P4-DPDK, nevermiss's reference): a table cannot combine an action
    /// profile/selector implementation with direct counters or meters.
    fn psa_rules(&mut self) {
        let mut tables: Vec<DeclId> = self.out.tables.keys().copied().collect();
        tables.sort();
        for t in tables {
            let ti = &self.out.tables[&t];
            let has = |n: &[&str]| {
                ti.properties
                    .iter()
                    .any(|(p, _, _)| n.contains(&p.as_str()))
            };
            if has(&["psa_implementation"]) && has(&["psa_direct_counter", "psa_direct_meter"]) {
                let (sp, n) = (self.decl(t).name_span, self.decl(t).name.clone());
                self.err(sp, format!("implementation property cannot co-exist with direct counter and direct meter property for table {n}"));
            }
        }
    }

    /// Whether the expression with this id is compile-time known (by its recorded facts).
    fn is_ctk_node(&self, node: crate::ast::NodeId) -> bool {
        if self.out.values.contains_key(&node) {
            return true;
        }
        match self.out.resolved.get(&node) {
            Some(d) => {
                let info = self.decl(*d);
                match info.kind {
                    EntityKind::Variable => false,
                    EntityKind::Param => info.dir == Direction::None,
                    _ => true,
                }
            }
            None => false,
        }
    }

    fn pna_rules(&mut self, dialect: PnaDialect) {
        // Which tables use each action (in `actions` or as default).
        let mut users: HashMap<DeclId, Vec<DeclId>> = HashMap::new();
        let mut tables: Vec<DeclId> = self.out.tables.keys().copied().collect();
        tables.sort();
        for t in &tables {
            let ti = &self.out.tables[t];
            let mut acts: Vec<DeclId> = ti.actions.iter().map(|a| a.action).collect();
            if let Some(d) = &ti.default_action {
                acts.push(d.action);
            }
            acts.sort();
            acts.dedup();
            for a in acts {
                users.entry(a).or_default().push(*t);
            }
        }
        // Direct counters / meters and their owner tables; implementation + direct resources.
        let mut owners: HashMap<DeclId, Vec<DeclId>> = HashMap::new();
        for t in &tables {
            let ti = self.out.tables[t].clone();
            let mut has_impl = false;
            let mut has_direct = false;
            for (name, node, _) in &ti.properties {
                match name.as_str() {
                    "pna_implementation" | "implementation" | "psa_implementation" => {
                        has_impl = true
                    }
                    "psa_direct_counter" | "psa_direct_meter" => has_direct = true,
                    "pna_direct_counter" | "pna_direct_meter" => {
                        has_direct = true;
                        if let Some(&inst) = self.out.resolved.get(node) {
                            owners.entry(inst).or_default().push(*t);
                        }
                    }
                    _ => {}
                }
            }
            if has_impl && has_direct {
                let sp = self.decl(*t).name_span;
                let n = self.decl(*t).name.clone();
                self.err(sp, format!("implementation property cannot co-exist with direct counter and direct meter property for table {n}"));
            }
        }
        let blocks = self.out.main_blocks.clone();
        let main_control_pos = match dialect {
            PnaDialect::V06FourBlock => 2,
            PnaDialect::V07ThreeBlock => 1,
        };
        let calls = self.extern_calls.clone();
        let mut direct_in_action: HashMap<(DeclId, String), HashSet<DeclId>> = HashMap::new();
        for c in &calls {
            let base = c.name.rsplit('.').next().unwrap_or(&c.name).to_string();
            match c.name.as_str() {
                "add_entry" | "add_entry_if" => self.pna_add_entry(c, &users),
                "set_entry_expire_time"
                | "restart_expire_timer"
                | "set_entry_expire_time_if"
                | "update_expire_info" => {
                    let ok = c.action.is_some_and(|a| {
                        users.get(&a).is_some_and(|ts| {
                            ts.iter().any(|t| self.out.tables[t].idle_timeout.is_some())
                        })
                    });
                    if !ok {
                        self.err(
                            c.span,
                            format!("{base} must only be called from within an action of a table with an idle timeout ('pna_idle_timeout' or 'idle_timeout_with_auto_delete')"),
                        );
                    }
                }
                "mirror_packet" => {
                    for i in 0..2 {
                        if let Some(node) = self.call_arg_node(c.call, i) {
                            if !self.is_ctk_node(node) {
                                self.err(c.span, "mirror_packet: the slot and session ids must be compile-time constants");
                            }
                        }
                    }
                    let in_main = match c.block {
                        Some(b) => blocks
                            .iter()
                            .position(|(_, d)| *d == b)
                            .is_none_or(|pos| pos == main_control_pos),
                        None => true,
                    };
                    if !in_main {
                        let bn = c
                            .block
                            .map(|b| self.decl(b).name.clone())
                            .unwrap_or_default();
                        self.err(
                            c.span,
                            format!(
                                "mirror_packet cannot be used in {bn}: only in the main control"
                            ),
                        );
                    }
                    if let Some(v) = self.call_arg_value(c.call, 1) {
                        if v.as_int().is_some_and(|x| x == &0.into()) {
                            self.err(
                                c.span,
                                "mirror session id 0 is reserved for use by the architecture",
                            );
                        }
                    }
                }
                n if n.starts_with("DirectCounter.") || n.starts_with("DirectMeter.") => {
                    let kind = if n.starts_with("DirectCounter.") {
                        "DirectCounter"
                    } else {
                        "DirectMeter"
                    };
                    let iname = c
                        .instance
                        .map(|i| self.decl(i).name.clone())
                        .unwrap_or_default();
                    let Some(a) = c.action else {
                        self.err(c.span, format!("{base} method of {iname} extern must only be called from within an action"));
                        continue;
                    };
                    let Some(inst) = c.instance else { continue };
                    let set = direct_in_action.entry((a, kind.to_string())).or_default();
                    set.insert(inst);
                    if set.len() > 1 {
                        self.err(c.span, format!("{base} method for different {kind} instances called within the same action"));
                    }
                    let owned_by = owners.get(&inst).cloned().unwrap_or_default();
                    for t in users.get(&a).cloned().unwrap_or_default() {
                        if !owned_by.contains(&t) {
                            let tn = self.decl(t).name.clone();
                            self.err(
                                c.span,
                                format!("{base} method of {iname} extern can only be invoked from within an action of its owner table, not of {tn}"),
                            );
                        }
                    }
                }
                _ => {}
            }
        }
    }

    /// The compile-time value of argument `index` (by parameter position) of a call.
    fn call_arg_value(&self, call: crate::ast::NodeId, index: usize) -> Option<Value> {
        let node = self.call_arg_node(call, index)?;
        self.out.values.get(&node).cloned()
    }

    fn call_arg_node(&self, call: crate::ast::NodeId, index: usize) -> Option<crate::ast::NodeId> {
        let ci = self.out.calls.get(&call)?;
        let CallArg::Arg(i) = ci.args.get(index)? else {
            return None;
        };
        self.call_args.get(&call).and_then(|v| v.get(*i).copied())
    }

    fn pna_add_entry(&mut self, c: &super::ExternCall, users: &HashMap<DeclId, Vec<DeclId>>) {
        let Some(a) = c.action else {
            self.err(
                c.span,
                "add_entry must only be called from within an action",
            );
            return;
        };
        let an = self.decl(a).name.clone();
        let aom: Vec<DeclId> = users
            .get(&a)
            .map(|ts| {
                ts.iter()
                    .copied()
                    .filter(|t| self.out.tables[t].add_on_miss)
                    .collect()
            })
            .unwrap_or_default();
        if aom.is_empty() {
            self.err(
                c.span,
                format!("add_entry must only be called from within an action of a table with 'add_on_miss' property equal to true ({an} is not)"),
            );
            return;
        }
        // Parameter positions: add_entry(action_name, action_params, ...); add_entry_if has a leading bool.
        let off = usize::from(c.name == "add_entry_if");
        let name_val = self.call_arg_value(c.call, off);
        let params_node = self.call_arg_node(c.call, off + 1);
        for t in aom {
            let ti = self.out.tables[&t].clone();
            let tn = self.decl(t).name.clone();
            if ti.default_action.as_ref().map(|d| d.action) != Some(a) {
                self.err(c.span, format!("add_entry is not called from a default action: {an} is not the default action of table {tn}"));
                continue;
            }
            for k in &ti.keys {
                if k.match_kind != "exact" {
                    self.err(k.span, format!("table {tn} has add_on_miss = true, so all its keys must be exact (found {})", k.match_kind));
                }
            }
            let Some(Value::String(target)) = &name_val else {
                self.err(
                    c.span,
                    "add_entry: the action name must be a string literal",
                );
                continue;
            };
            let found = ti.actions.iter().find(|x| {
                self.decl(x.action).name == *target || self.out.qualified_name(x.action) == *target
            });
            let Some(x) = found.cloned() else {
                self.err(
                    c.span,
                    format!("add_entry: action name {target} is not any action in table {tn}"),
                );
                continue;
            };
            if x.action == a {
                self.err(
                    c.span,
                    format!("add_entry: action {target} cannot be the default action {an}"),
                );
                continue;
            }
            if x.default_only {
                self.err(
                    c.span,
                    format!("add_entry: action {target} is @defaultonly in table {tn}"),
                );
                continue;
            }
            // action_params must match the action's directionless parameters.
            let want: Vec<ParamInfo> = self
                .decl(x.action)
                .params
                .iter()
                .filter(|p| p.dir == Direction::None)
                .cloned()
                .collect();
            if let Some(node) = params_node {
                let got = self.out.type_of(node).cloned().unwrap_or(Type::Error);
                let ok = match &got {
                    Type::Error => true,
                    Type::Agg(ag) => {
                        ag.fields.len() == want.len()
                            && ag.fields.iter().zip(&want).all(|(f, p)| loose(&f.1, &p.ty))
                    }
                    Type::Tuple(ts) | Type::ListExpr(ts) => {
                        ts.len() == want.len() && ts.iter().zip(&want).all(|(t, p)| loose(t, &p.ty))
                    }
                    t => want.len() == 1 && loose(t, &want[0].ty),
                };
                if !ok {
                    let names: Vec<String> = want
                        .iter()
                        .map(|p| format!("{} {}", p.ty, p.name))
                        .collect();
                    self.err(
                        c.span,
                        format!("add_entry: action_params of type {got} do not match the parameters of {target} ({})", names.join(", ")),
                    );
                }
            }
        }
    }
}

/// Type equality up to `type` new types (action data of add_entry, PNA).
fn loose(a: &Type, b: &Type) -> bool {
    same(a.strip_newtype(), b.strip_newtype())
}
