//! `pipelines`: action profiles, tables, conditionals and action calls, and the graph of next
//! nodes between them turned back into structured statements.
//!
//! BMv2 runs a pipeline by following next nodes from `init_table` until a `null` next node
//! (`Pipeline::apply`). The graph p4c writes for a P4 control is acyclic; each node's branches
//! meet again at its immediate post-dominator, so the pipeline becomes, node by node, the node's
//! statement, an `if`/`switch` over its branches (each emitted up to that meeting point), then
//! the meeting point. A node reached by several branches that do not meet before it is emitted
//! in each (the program stays the same; its size is bounded).

use crate::expr::Cx;
use crate::json::{Result, J};
use crate::Builder;
use num_bigint::BigInt;
use num_traits::{One, Signed, Zero};
use p4_ir::*;
use std::collections::HashMap;

/// Most statements the structuring may emit for one pipeline (nodes repeated included).
const MAX_EMITTED: usize = 200_000;

/// A table's keys as its JSON gives them: the IR keys, and per key its JSON match type and,
/// for a field sliced by a contiguous mask, the slice's low bit and the mask.
struct TableKeys {
    keys: Vec<TableKey>,
    slices: Vec<Option<(u32, BigInt)>>,
    kinds: Vec<String>,
}

impl TableKeys {
    /// Key field `k` of a constant entry (`match_key`); `None` when the entry can never match
    /// (bits outside a sliced key's mask: BMv2 compares the whole field under the mask).
    fn entry_match(&self, k: usize, m: &J<'_>) -> Result<Option<EntryMatch>> {
        let mt = m.str_of("match_type")?;
        if mt != self.kinds[k] {
            return Err(m.err(format!(
                "match type {mt}, the table's key is {}",
                self.kinds[k]
            )));
        }
        let w = self.keys[k].expr.ty().width;
        let conv = |x: BigInt| -> Option<BigInt> {
            match &self.slices[k] {
                // A sliced key: BMv2 compares the whole field under the mask; bits of
                // the entry outside it never match.
                Some((lo, mask)) => {
                    if !(&x & !mask.clone()).is_zero() && !x.is_negative() {
                        None
                    } else {
                        Some((x & mask) >> *lo)
                    }
                }
                None => Some(x),
            }
        };
        let v = |x: BigInt| p4_ir::Val::from_big(x.to_biguint().unwrap_or_default());
        let em = match mt {
            "valid" => EntryMatch::Exact(p4_ir::Val::U(u64::from(m.get("key")?.bool()?))),
            "exact" => match conv(m.get("key")?.hexstr()?) {
                Some(x) => EntryMatch::Exact(v(x)),
                None => return Ok(None),
            },
            "lpm" => {
                let plen = m.get("prefix_length")?.u32()?;
                let x = m.get("key")?.hexstr()?;
                match &self.slices[k] {
                    Some(_) => {
                        return Err(m.unsupported("an lpm key on a masked field"));
                    }
                    None => EntryMatch::Lpm(v(x), plen.min(w)),
                }
            }
            "ternary" | "optional" => {
                let x = m.get("key")?.hexstr()?;
                let mm = m.get("mask")?.hexstr()?;
                match (conv(x & &mm), conv(mm)) {
                    (Some(x), Some(mm)) => EntryMatch::Ternary(v(x), v(mm)),
                    _ => return Ok(None),
                }
            }
            "range" => {
                let lo = m.get("start")?.hexstr()?;
                let hi = m.get("end")?.hexstr()?;
                if self.slices[k].is_some() {
                    return Err(m.unsupported("a range key on a masked field"));
                }
                EntryMatch::Range(v(lo), v(hi))
            }
            other => return Err(m.unsupported(format!("entries of match type {other}"))),
        };
        Ok(Some(em))
    }
}

/// A table's implementation: `simple`, or an action profile (`indirect`) or selector
/// (`indirect_ws`, whose selector fields become `Selector` keys).
fn table_implementation(
    t: &J<'_>,
    profiles: &HashMap<String, Profile>,
    keys: &mut Vec<TableKey>,
) -> Result<Option<ExternId>> {
    let ttype = t
        .opt("type")
        .map(|x| x.str())
        .transpose()?
        .unwrap_or("simple");
    match ttype {
        "simple" => Ok(None),
        "indirect" | "indirect_ws" => {
            let Some(pn) = t.opt("action_profile") else {
                return Err(t.unsupported("an indirect table without \"action_profile\""));
            };
            let pn = pn.str()?;
            let Some(p) = profiles.get(pn) else {
                return Err(t.err(format!("unknown action profile {pn}")));
            };
            if ttype == "indirect_ws" && p.selector.is_empty() {
                return Err(t.err(format!("action profile {pn} has no selector")));
            }
            for (e, n) in &p.selector {
                keys.push(TableKey {
                    name: n.clone(),
                    expr: e.clone(),
                    kind: MatchKind::Selector,
                    ty: CpType::Bit(e.ty().width),
                    annotations: Vec::new(),
                });
            }
            Ok(Some(p.id))
        }
        other => Err(t.unsupported(format!("tables of type {other}"))),
    }
}

/// The index of action `id` among a table's actions.
fn action_index(action_ids: &[i64], table: &str, id: i64, at: &J<'_>) -> Result<u32> {
    action_ids
        .iter()
        .position(|x| *x == id)
        .map(|i| i as u32)
        .ok_or_else(|| at.err(format!("action {id} is not an action of table {table}")))
}

/// How a table's next node is chosen.
enum Next {
    /// `__HIT__` / `__MISS__`.
    HitMiss(Option<usize>, Option<usize>),
    /// By the action that ran (IR action index → next), and when no action ran.
    Actions(Vec<Option<usize>>, Option<usize>),
}

enum Node {
    Table {
        id: TableId,
        next: Next,
    },
    Cond {
        cond: Expr,
        pre: Vec<Stmt>,
        t: Option<usize>,
        f: Option<usize>,
    },
    /// An action called directly, its parameters set first.
    Call {
        func: FnId,
        next: Option<usize>,
        copy_in: Vec<Stmt>,
    },
}

/// An action profile of a pipeline: its extern and, for a selector, its input fields.
struct Profile {
    id: ExternId,
    selector: Vec<(Expr, String)>,
}

impl<'a> Builder<'a> {
    /// Every pipeline, as a control function, by name.
    pub(crate) fn pipelines_all(&mut self, root: &J<'a>) -> Result<()> {
        for pl in root.list("pipelines")? {
            let name = pl.str_of("name")?.to_string();
            let f = self.pipeline(&pl)?;
            self.pipeline_fns.insert(name, f);
        }
        Ok(())
    }

    fn pipeline(&mut self, pl: &J<'a>) -> Result<FnId> {
        let name = pl.str_of("name")?.to_string();
        // Action profiles.
        let mut profiles: HashMap<String, Profile> = HashMap::new();
        for ap in pl.list("action_profiles")? {
            let pname = ap.str_of("name")?.to_string();
            let size = match ap.opt("max_size") {
                Some(s) => s.u32()?,
                None => 1024,
            };
            let (kind, selector) = match ap.opt("selector") {
                Some(sel) => {
                    let an = sel.str_of("algo")?;
                    let Some(algo) = crate::externs::algo(an) else {
                        return Err(sel.unsupported(format!("the selector algorithm {an}")));
                    };
                    let mut inputs = Vec::new();
                    for i in sel.list("input")? {
                        inputs.push(self.key_field(&i.get("value")?)?);
                    }
                    (ExternKind::ActionSelector { size, algo }, inputs)
                }
                None => (ExternKind::ActionProfile { size }, Vec::new()),
            };
            let id = self.add_extern(pname.clone(), kind);
            self.profiles.insert(pname.clone(), id);
            profiles.insert(pname, Profile { id, selector });
        }
        // Node names.
        let tables = pl.list("tables")?;
        let conds = pl.list("conditionals")?;
        let calls = pl.list("action_calls")?;
        let mut index: HashMap<String, usize> = HashMap::new();
        for (k, j) in tables.iter().chain(&conds).chain(&calls).enumerate() {
            let n = j.str_of("name")?.to_string();
            if index.insert(n.clone(), k).is_some() {
                return Err(j.err(format!("two nodes of pipeline {name} are called {n}")));
            }
        }
        let next_of = |j: Option<J<'a>>| -> Result<Option<usize>> {
            match j {
                None => Ok(None),
                Some(j) => {
                    let n = j.str()?;
                    index
                        .get(n)
                        .copied()
                        .map(Some)
                        .ok_or_else(|| j.err(format!("unknown control node {n}")))
                }
            }
        };
        let mut nodes: Vec<Node> = Vec::new();
        for t in &tables {
            let nt = t.get("next_tables")?;
            if let Some((func, copy_in, next)) = self.hidden_call(t)? {
                nodes.push(Node::Call {
                    func,
                    next: next_of(next)?,
                    copy_in,
                });
                continue;
            }
            let (id, actions) = self.table(t, &profiles)?;
            let next = if nt.v.get("__HIT__").is_some() || nt.v.get("__MISS__").is_some() {
                Next::HitMiss(next_of(nt.opt("__HIT__"))?, next_of(nt.opt("__MISS__"))?)
            } else {
                let mut per = Vec::new();
                for an in &actions {
                    match nt.v.get(an.as_str()) {
                        Some(_) => per.push(next_of(nt.opt(an))?),
                        None => {
                            return Err(nt.err(format!("no next node for action {an}")));
                        }
                    }
                }
                // No action runs only on a miss of a table without a default action (BMv2
                // then goes to `base_default_next`); with one, a miss runs it.
                let none = match &self.p.tables[id as usize].default_action {
                    Some((ai, _)) => per.get(*ai as usize).copied().flatten(),
                    None => next_of(t.opt("base_default_next"))?,
                };
                Next::Actions(per, none)
            };
            nodes.push(Node::Table { id, next });
        }
        for c in &conds {
            let mut pre = Vec::new();
            let cond = self.boolean(&c.get("expression")?, &Cx::default(), &mut pre)?;
            nodes.push(Node::Cond {
                cond,
                pre,
                t: next_of(c.opt("true_next"))?,
                f: next_of(c.opt("false_next"))?,
            });
        }
        for c in &calls {
            let aid = c.int_of("action_id")?;
            let Some(a) = self.actions.get(&aid) else {
                return Err(c.err(format!("no action has the id {aid}")));
            };
            if !a.params.is_empty() {
                return Err(c.err(format!(
                    "action {} called from a control has parameters",
                    a.name
                )));
            }
            let func = a.func;
            nodes.push(Node::Call {
                func,
                next: next_of(c.opt("next_node"))?,
                copy_in: Vec::new(),
            });
        }
        let first = next_of(pl.opt("init_table"))?;
        let body = self.structured(&nodes, first, pl)?;
        Ok(self.add_fn(name, FnKind::Control, body))
    }

    /// p4c's table for an action called from a control (JSON_format.md, "Note 1": a `tbl_*`
    /// table without keys, entries or anything attached, whose default action is constant):
    /// it always misses and runs that action, so it becomes a call of the action — the
    /// function, the statements setting its parameters from the default entry's data, and the
    /// next node (its `__MISS__` one, or the action's). Such tables are `@hidden` in p4c's
    /// P4Info, so the control plane never sees them.
    #[allow(clippy::type_complexity)]
    fn hidden_call(&mut self, t: &J<'a>) -> Result<Option<(FnId, Vec<Stmt>, Option<J<'a>>)>> {
        let plain = t.str_of("name")?.starts_with("tbl_")
            && t.list("key")?.is_empty()
            && t.list("entries")?.is_empty()
            && t.opt("type")
                .map(|x| x.str())
                .transpose()?
                .unwrap_or("simple")
                == "simple"
            && !t.bool_or("with_counters", false)?
            && !t.bool_or("support_timeout", false)?
            && t.opt("direct_meters").is_none();
        let Some(d) = t.opt("default_entry").filter(|_| plain) else {
            return Ok(None);
        };
        if !d.bool_or("action_const", false)? || !d.bool_or("action_entry_const", false)? {
            return Ok(None);
        }
        let aid = d.int_of("action_id")?;
        let Some(a) = self.actions.get(&aid).cloned() else {
            return Err(d.err(format!("no action has the id {aid}")));
        };
        let data = d.get("action_data")?.arr()?;
        if data.len() != a.params.len() {
            return Err(d.err(format!(
                "action {} takes {} parameters, not {}",
                a.name,
                a.params.len(),
                data.len()
            )));
        }
        let mut copy_in = Vec::new();
        for (x, p) in data.iter().zip(&a.params) {
            let v = x.hexstr()?;
            copy_in.push(Stmt::Assign(
                Loc::at(p.slot),
                p.ty,
                crate::expr::constant(&v, p.ty),
            ));
        }
        let nt = t.get("next_tables")?;
        let next = if nt.v.get("__MISS__").is_some() {
            nt.opt("__MISS__")
        } else {
            match nt.v.get(a.name.as_str()) {
                Some(_) => nt.opt(&a.name),
                None => return Err(nt.err(format!("no next node for action {}", a.name))),
            }
        };
        // An action p4c synthesized from statements of an apply block is named after its
        // source line, outside any control ("prog79"); it is `@hidden` in p4c's P4Info. An
        // action the program declares keeps its control-qualified name and stays listed.
        self.hide_synthesized(&a.name, a.func);
        Ok(Some((a.func, copy_in, next)))
    }

    /// Marks `@hidden` the action `name` (function `func`) when p4c synthesized it: its name
    /// is not control-qualified ("prog79" from an apply block's statements, "switch_0_case" for
    /// a `switch` on a value), and it is `@hidden` in p4c's P4Info.
    fn hide_synthesized(&mut self, name: &str, func: FnId) {
        if !name.contains('.') && name != "NoAction" {
            let f = &mut self.p.functions[func as usize];
            if !has_hidden(&f.annotations) {
                f.annotations.push(hidden());
            }
        }
    }

    /// One table (JSON_format.md, "pipelines": `tables`); returns its id and its actions'
    /// names (in the IR table's order).
    fn table(
        &mut self,
        t: &J<'a>,
        profiles: &HashMap<String, Profile>,
    ) -> Result<(TableId, Vec<String>)> {
        let name = t.str_of("name")?.to_string();
        let mut keys = self.table_keys(t)?;
        let implementation = table_implementation(t, profiles, &mut keys.keys)?;
        let (actions, action_ids) = self.table_actions(t, &name)?;
        // A table the program declares has its control's name in front; one p4c made (the
        // `switch_0_table` of a `switch` on a value, whose actions are `switch_0_case*`) has
        // not, and is `@hidden` in p4c's P4Info with its actions.
        let synthesized = !name.contains('.');
        if synthesized {
            for a in &actions {
                self.hide_synthesized(&a.name, a.func);
            }
        }
        let action_names: Vec<String> = actions.iter().map(|a| a.name.clone()).collect();
        // Default entry.
        let mut default_action = None;
        let mut default_const = false;
        if let Some(d) = t.opt("default_entry") {
            let ai = action_index(&action_ids, &name, d.int_of("action_id")?, &d)?;
            let data = self.action_data(&actions[ai as usize], &d.get("action_data")?)?;
            default_action = Some((ai, data));
            default_const = d.bool_or("action_const", false)?;
        }
        let ej = t.list("entries")?;
        let entries = self.const_entries(&ej, &keys, &actions, &action_ids, &name)?;
        let size = match t.opt("max_size") {
            Some(s) => u64::from(s.u32()?).max(1),
            None => (ej.len() as u64).max(1),
        };
        let (direct_counter, direct_meter) = self.table_direct(t, &name)?;
        let idle_timeout = if t.bool_or("support_timeout", false)? {
            IdleTimeout::NotifyControl
        } else {
            IdleTimeout::None
        };
        let id = self.p.tables.len() as TableId;
        self.p.tables.push(Table {
            name: name.clone(),
            key_pre: Vec::new(),
            keys: keys.keys,
            actions,
            default_action,
            default_const,
            entries,
            entries_const: !ej.is_empty(),
            size,
            add_on_miss: false,
            idle_timeout,
            direct_counter,
            direct_meter,
            implementation,
            annotations: if synthesized {
                vec![hidden()]
            } else {
                Vec::new()
            },
            declared_size: Some(size),
            // p4c writes the default entry a table has, declared or not.
            default_declared: true,
        });
        if self.tables.insert(name.clone(), id).is_some() {
            return Err(t.err(format!("table {name} is declared twice")));
        }
        Ok((id, action_names))
    }

    /// A table's `key`: per field its expression, match kind and control-plane name.
    fn table_keys(&mut self, t: &J<'a>) -> Result<TableKeys> {
        let mut keys = TableKeys {
            keys: Vec::new(),
            slices: Vec::new(),
            kinds: Vec::new(),
        };
        for k in t.list("key")? {
            let mt = k.str_of("match_type")?;
            let (key, slice) = self.table_key(&k, mt)?;
            keys.keys.push(key);
            keys.slices.push(slice);
            keys.kinds.push(mt.to_string());
        }
        Ok(keys)
    }

    /// One key field of match type `mt`; a field with a contiguous mask that is not the whole
    /// field is keyed on the slice (returned with its low bit and the mask).
    fn table_key(&mut self, k: &J<'a>, mt: &str) -> Result<(TableKey, Option<(u32, BigInt)>)> {
        let kind = match mt {
            "exact" | "valid" => MatchKind::Exact,
            "lpm" => MatchKind::Lpm,
            "ternary" => MatchKind::Ternary,
            "range" => MatchKind::Range,
            "optional" => MatchKind::Optional,
            other => return Err(k.unsupported(format!("the match type {other}"))),
        };
        let target = k.get("target")?;
        let (mut expr, default_name) = if mt == "valid" {
            let hn = target.str()?;
            let i = self.inst_index(hn, &target)?;
            let inst = &self.lay.insts[i];
            let e = if inst.metadata {
                Expr::Const(1, Ty::bits(1))
            } else {
                Expr::Load(inst.loc, Ty::bits(1))
            };
            (e, hn.to_string())
        } else {
            self.key_field(&target)?
        };
        let mut slice = None;
        if let Some(m) = k.opt("mask") {
            let mask = m.hexstr()?;
            let t0 = expr.ty();
            let full = (BigInt::one() << t0.width) - 1;
            let mask = mask & &full;
            match contiguous(&mask) {
                Some((hi, 0)) if hi + 1 == t0.width => {}
                Some((hi, lo)) => {
                    // p4c writes a key `f[hi:lo]` as `f` with a mask: key on the slice
                    // (the width the control plane uses for it).
                    expr = Expr::Slice(Box::new(expr), t0, hi, lo);
                    slice = Some((lo, mask));
                }
                None if mask.is_zero() => {
                    return Err(m.unsupported("a key masked to nothing"));
                }
                None => {
                    let c = crate::expr::constant(&mask, t0);
                    expr = Expr::Bin(BinOp::And, t0, Box::new(expr), Box::new(c));
                }
            }
        }
        let kname = match k.opt("name") {
            Some(n) => n.str()?.to_string(),
            None => default_name,
        };
        let ty = CpType::Bit(expr.ty().width);
        let key = TableKey {
            name: kname,
            expr,
            kind,
            ty,
            annotations: Vec::new(),
        };
        Ok((key, slice))
    }

    /// A table's actions (`action_ids`, or older JSON's `actions` by name) and their ids.
    fn table_actions(&mut self, t: &J<'a>, name: &str) -> Result<(Vec<TableAction>, Vec<i64>)> {
        let ids: Vec<i64> = match t.opt("action_ids") {
            Some(ids) => ids.arr()?.iter().map(|x| x.int()).collect::<Result<_>>()?,
            None => {
                let mut v = Vec::new();
                for an in t.list("actions")? {
                    let n = an.str()?;
                    let Some((id, _)) = self.actions.iter().find(|(_, a)| a.name == n) else {
                        return Err(an.err(format!("unknown action {n}")));
                    };
                    v.push(*id);
                }
                v
            }
        };
        // A direct meter writes its color into its target on a hit, before the action
        // (BMv2's `MatchTableAbstract::apply_action`).
        let meter = self.direct_meter_read(t, name)?;
        let mut actions = Vec::new();
        let mut action_ids = Vec::new();
        for id in ids {
            let Some(a) = self.actions.get(&id).cloned() else {
                return Err(t.err(format!("no action has the id {id}")));
            };
            action_ids.push(id);
            actions.push(TableAction {
                name: a.name.clone(),
                func: a.func,
                params: a.params.clone(),
                copy_in: meter.clone().into_iter().collect(),
                copy_out: Vec::new(),
                default_only: false,
                table_only: false,
                annotations: Vec::new(),
            });
        }
        Ok((actions, action_ids))
    }

    /// A table's constant `entries`, with BMv2's priorities (the smaller wins) turned into the
    /// IR's (the larger wins); an entry whose key has bits outside a sliced key's mask never
    /// matches in BMv2 and is left out.
    fn const_entries(
        &mut self,
        ej: &[J<'a>],
        keys: &TableKeys,
        actions: &[TableAction],
        action_ids: &[i64],
        table: &str,
    ) -> Result<Vec<ConstEntry>> {
        let has_prio = keys.keys.iter().any(|k| {
            matches!(
                k.kind,
                MatchKind::Ternary | MatchKind::Range | MatchKind::Optional
            )
        });
        let mut prios = Vec::new();
        for e in ej {
            prios.push(match e.opt("priority") {
                Some(p) => p.int()?,
                None => 0,
            });
        }
        let max_prio = prios.iter().copied().max().unwrap_or(0);
        let mut entries = Vec::new();
        'entry: for (e, prio) in ej.iter().zip(&prios) {
            let mk = e.get("match_key")?.arr()?;
            if mk.len() != keys.kinds.len() {
                return Err(e.err(format!(
                    "the entry has {} key fields, the table {}",
                    mk.len(),
                    keys.kinds.len()
                )));
            }
            let mut matches = Vec::new();
            for (k, m) in mk.iter().enumerate() {
                match keys.entry_match(k, m)? {
                    Some(em) => matches.push(em),
                    None => continue 'entry,
                }
            }
            let ae = e.get("action_entry")?;
            let ai = action_index(action_ids, table, ae.int_of("action_id")?, &ae)?;
            let params = self.action_data(&actions[ai as usize], &ae.get("action_data")?)?;
            // BMv2: the smaller priority wins; the IR's larger.
            let priority = if has_prio {
                (max_prio + 1 - prio).clamp(1, i64::from(u32::MAX)) as u32
            } else {
                0
            };
            entries.push(ConstEntry {
                matches,
                priority,
                action: ai,
                params,
            });
        }
        Ok(entries)
    }

    /// A table's direct counter (`with_counters`) and direct meter (`direct_meters`).
    fn table_direct(&self, t: &J<'a>, name: &str) -> Result<(Option<ExternId>, Option<ExternId>)> {
        let direct_counter = if t.bool_or("with_counters", false)? {
            let found = self.direct_counter_of(name);
            match found {
                Some(c) => Some(c),
                None => {
                    return Err(t.err(format!(
                        "table {name} counts, but no direct counter is bound to it"
                    )))
                }
            }
        } else {
            None
        };
        let direct_meter = match t.opt("direct_meters") {
            Some(m) => {
                let mn = m.str()?;
                match self.meters.get(mn) {
                    Some(mi) if mi.direct.is_some() => Some(mi.id),
                    _ => return Err(m.err(format!("unknown direct meter {mn}"))),
                }
            }
            None => None,
        };
        Ok((direct_counter, direct_meter))
    }

    /// A key field (`["header", "field"]`, `$valid$` included) and its default name.
    fn key_field(&mut self, target: &J<'a>) -> Result<(Expr, String)> {
        let h = target.at(0)?.str()?;
        let f = target.at(1)?.str()?;
        let i = self.inst_index(h, target)?;
        let inst = &self.lay.insts[i];
        let name = format!("{h}.{f}");
        if f == "$valid$" {
            return Ok((
                if inst.metadata {
                    Expr::Const(1, Ty::bits(1))
                } else {
                    Expr::Load(inst.loc, Ty::bits(1))
                },
                name,
            ));
        }
        let Some((off, t)) = self.field_place(h, f) else {
            return Err(target.err(format!("unknown fixed-width field {h}.{f}")));
        };
        Ok((Expr::Load(off, t), name))
    }

    /// The statement a direct meter of table `name` adds before each of its actions.
    fn direct_meter_read(&mut self, t: &J<'a>, name: &str) -> Result<Option<Stmt>> {
        let Some(m) = t.opt("direct_meters") else {
            return Ok(None);
        };
        let mn = m.str()?;
        let Some(mi) = self.meters.get(mn).cloned() else {
            return Err(m.err(format!("unknown meter array {mn}")));
        };
        let Some((bound, (h, f))) = mi.direct else {
            return Err(m.err(format!("{mn} is not a direct meter")));
        };
        if bound != name {
            return Err(m.err(format!("direct meter {mn} is bound to table {bound}")));
        }
        let Some((off, ty)) = self.field_place(&h, &f) else {
            return Err(m.err(format!("the meter's target {h}.{f} is not a field")));
        };
        Ok(Some(crate::prims::xcall(
            XOp::DirectMeterRead { colors: [0, 1, 2] },
            Some(mi.id),
            Vec::new(),
            Some((Loc::at(off), ty)),
            format!("direct meter {mn}"),
        )))
    }

    fn direct_counter_of(&self, table: &str) -> Option<ExternId> {
        let root = self.root.clone();
        let cs = root.list("counter_arrays").ok()?;
        cs.iter().find_map(|c| {
            let direct = c.bool_or("is_direct", false).ok()?;
            let binding = c.opt("binding")?.str().ok()?;
            if direct && binding == table {
                self.counters.get(c.str_of("name").ok()?).copied()
            } else {
                None
            }
        })
    }

    /// Action data (hexstrings, one per parameter) packed as the IR packs parameters.
    fn action_data(&self, a: &TableAction, dj: &J<'a>) -> Result<Vec<u8>> {
        let items = dj.arr()?;
        if items.len() != a.params.len() {
            return Err(dj.err(format!(
                "action {} takes {} parameters, not {}",
                a.name,
                a.params.len(),
                items.len()
            )));
        }
        let mut vals = Vec::new();
        for (x, p) in items.iter().zip(&a.params) {
            let v = x.hexstr()?;
            let b = ops::from_bigint(&v, p.ty.width);
            vals.push(p4_ir::Val::from_big(b));
        }
        Ok(p4_ir::pack(&a.params, &vals))
    }

    /// The pipeline's graph as structured statements.
    fn structured(
        &mut self,
        nodes: &[Node],
        first: Option<usize>,
        at: &J<'a>,
    ) -> Result<Vec<Stmt>> {
        let n = nodes.len();
        let end = n;
        let succ = |k: usize| -> Vec<usize> {
            let mut v: Vec<usize> = match &nodes[k] {
                Node::Table { next, .. } => match next {
                    Next::HitMiss(h, m) => vec![h.unwrap_or(end), m.unwrap_or(end)],
                    Next::Actions(per, none) => {
                        let mut v: Vec<usize> = per.iter().map(|x| x.unwrap_or(end)).collect();
                        v.push(none.unwrap_or(end));
                        v
                    }
                },
                Node::Cond { t, f, .. } => vec![t.unwrap_or(end), f.unwrap_or(end)],
                Node::Call { next, .. } => vec![next.unwrap_or(end)],
            };
            v.sort_unstable();
            v.dedup();
            v
        };
        let Some(first) = first else {
            return Ok(Vec::new());
        };
        // Postorder (iterative DFS) with a cycle check.
        let mut state = vec![0u8; n + 1]; // 0 new, 1 on the stack, 2 done
        let mut post: Vec<usize> = Vec::new();
        let mut stack: Vec<(usize, Vec<usize>)> = vec![(first, succ(first))];
        state[first] = 1;
        while let Some((k, rest)) = stack.last_mut() {
            match rest.pop() {
                Some(s) if s == end => {}
                Some(s) => match state[s] {
                    0 => {
                        state[s] = 1;
                        let ss = succ(s);
                        stack.push((s, ss));
                    }
                    1 => {
                        return Err(at.unsupported(
                            "a pipeline whose next nodes form a cycle (a loop in a control)",
                        ))
                    }
                    _ => {}
                },
                None => {
                    state[*k] = 2;
                    post.push(*k);
                    stack.pop();
                }
            }
        }
        // Ranks: reverse postorder, the end last.
        let mut rank = vec![usize::MAX; n + 1];
        for (r, k) in post.iter().rev().enumerate() {
            rank[*k] = r;
        }
        rank[end] = post.len();
        let mut ipdom = vec![end; n + 1];
        for &k in &post {
            let mut it = succ(k).into_iter();
            let mut d = it.next().unwrap_or(end);
            for s in it {
                let (mut a, mut b) = (d, s);
                while a != b {
                    if rank[a] < rank[b] {
                        a = ipdom[a];
                    } else {
                        b = ipdom[b];
                    }
                }
                d = a;
            }
            ipdom[k] = d;
        }
        let mut out = Vec::new();
        let mut budget = MAX_EMITTED;
        self.emit(nodes, &ipdom, first, end, end, &mut out, &mut budget, at)?;
        Ok(out)
    }

    #[allow(clippy::too_many_arguments)]
    fn emit(
        &mut self,
        nodes: &[Node],
        ipdom: &[usize],
        mut k: usize,
        stop: usize,
        end: usize,
        out: &mut Vec<Stmt>,
        budget: &mut usize,
        at: &J<'a>,
    ) -> Result<()> {
        while k != stop && k != end {
            if *budget == 0 {
                return Err(at.unsupported(
                    "a pipeline whose branches rejoin too rarely (its structured form is too large)",
                ));
            }
            *budget -= 1;
            let p = ipdom[k];
            match &nodes[k] {
                Node::Cond { cond, pre, t, f } => {
                    out.extend(pre.iter().cloned());
                    let mut a = Vec::new();
                    let mut b = Vec::new();
                    self.emit(nodes, ipdom, t.unwrap_or(end), p, end, &mut a, budget, at)?;
                    self.emit(nodes, ipdom, f.unwrap_or(end), p, end, &mut b, budget, at)?;
                    out.push(Stmt::If(cond.clone(), a, b));
                }
                Node::Call { func, copy_in, .. } => out.push(Stmt::Call {
                    func: *func,
                    copy_in: copy_in.clone(),
                    copy_out: Vec::new(),
                }),
                Node::Table { id, next } => match next {
                    Next::HitMiss(h, m) => {
                        let (h, m) = (h.unwrap_or(end), m.unwrap_or(end));
                        if h == m {
                            out.push(apply(*id, None, None));
                        } else {
                            let slot = self.alloc_temp(1, at)?;
                            out.push(apply(*id, Some(slot), None));
                            let mut a = Vec::new();
                            let mut b = Vec::new();
                            self.emit(nodes, ipdom, h, p, end, &mut a, budget, at)?;
                            self.emit(nodes, ipdom, m, p, end, &mut b, budget, at)?;
                            out.push(Stmt::If(Expr::Load(slot, Ty::BOOL), a, b));
                        }
                    }
                    Next::Actions(per, none) => {
                        let none = none.unwrap_or(end);
                        let mut targets: Vec<usize> =
                            per.iter().map(|x| x.unwrap_or(end)).collect();
                        targets.push(none);
                        let mut distinct = targets.clone();
                        distinct.sort_unstable();
                        distinct.dedup();
                        if distinct.len() <= 1 {
                            out.push(apply(*id, None, None));
                        } else {
                            let slot = self.alloc_temp(1, at)?;
                            out.push(apply(*id, None, Some(slot)));
                            let mut cases = Vec::new();
                            let mut bodies = Vec::new();
                            let mut default = None;
                            for d in distinct {
                                let mut body = Vec::new();
                                self.emit(nodes, ipdom, d, p, end, &mut body, budget, at)?;
                                let bi = bodies.len();
                                bodies.push(body);
                                let labels: Vec<u64> = per
                                    .iter()
                                    .enumerate()
                                    .filter(|(_, x)| x.unwrap_or(end) == d)
                                    .map(|(i, _)| i as u64)
                                    .collect();
                                if !labels.is_empty() {
                                    cases.push((labels, bi));
                                }
                                if d == none {
                                    default = Some(bi);
                                }
                            }
                            out.push(Stmt::Switch {
                                sel: Expr::Load(slot, Ty::bits(64)),
                                cases,
                                bodies,
                                default,
                            });
                        }
                    }
                },
            }
            k = p;
        }
        Ok(())
    }
}

fn apply(table: TableId, hit: Option<u32>, action_run: Option<u32>) -> Stmt {
    Stmt::ApplyTable {
        table,
        hit,
        action_run,
    }
}

/// `(hi, lo)` when the mask's ones are one contiguous run.
fn contiguous(mask: &BigInt) -> Option<(u32, u32)> {
    if mask.is_zero() || mask.is_negative() {
        return None;
    }
    let lo = mask.trailing_zeros()? as u32;
    let run = mask >> lo;
    let ones = run.bits() as u32;
    if run != (BigInt::one() << ones) - 1 {
        return None;
    }
    Some((lo + ones - 1, lo))
}

/// The `@hidden` annotation (p4c's, for what it synthesized).
fn hidden() -> p4_ir::control_plane::Annotation {
    p4_ir::control_plane::Annotation {
        name: "hidden".into(),
        body: p4_ir::control_plane::AnnotationBody::Empty,
    }
}

fn has_hidden(anns: &[p4_ir::control_plane::Annotation]) -> bool {
    anns.iter().any(|x| x.name == "hidden")
}
