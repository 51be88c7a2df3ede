//! Interpreter fallbacks by site (`nevermiss run --fallbacks`; docs/jit.md, "Fallbacks"): which
//! statements, expressions and parser `select`s generated code left to the interpreter, and
//! how many times each ran.
//!
//! With `Config::fallback_sites`, each helper call of generated code (`Helpers::stmt`, `eval`,
//! `select`) adds one to the count of the IR node it was given, keyed by the node's address in
//! the switch's program (which generated code holds and never outlives);
//! [`crate::Switch::fallback_sites`] finds each address again in the program and names it.

use p4_ir::ir::{Datum, Expr, FnKind, Loc, Program, State, Stmt, Transition, XArg};
use std::collections::HashMap;

/// One IR node generated code passed to a helper.
#[derive(Clone, Copy)]
pub(crate) enum Site {
    Stmt(*const Stmt),
    Expr(*const Expr),
    Select(*const State),
}

/// Fallbacks counted by site: (kind, the node's address) → count.
#[derive(Default, Debug)]
pub struct SiteCounts(HashMap<(u8, usize), u64>);

impl SiteCounts {
    pub(crate) fn add(&mut self, s: Site) {
        let k = match s {
            Site::Stmt(p) => (0, p as usize),
            Site::Expr(p) => (1, p as usize),
            Site::Select(p) => (2, p as usize),
        };
        *self.0.entry(k).or_default() += 1;
    }

    pub(crate) fn merge(&mut self, other: SiteCounts) {
        for (k, n) in other.0 {
            *self.0.entry(k).or_default() += n;
        }
    }
}

/// One fallback site and how many times packets took it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FallbackSite {
    /// Packets' calls into the interpreter at this site.
    pub count: u64,
    /// Where it is: the P4 source position when the IR has one (`file:line:col`, extern calls),
    /// then the function, action, control, parser state or table it is part of.
    pub place: String,
    /// What the construct is, and the IR node (p4-ir's `dump` form) the interpreter ran.
    pub what: String,
}

/// Names every counted site of `counts` in `prog`, most taken first (ties by place).
pub(crate) fn describe(prog: &Program, counts: &SiteCounts) -> Vec<FallbackSite> {
    let mut fd = Finder {
        counts,
        found: HashMap::new(),
    };
    for f in &prog.functions {
        let kind = match f.kind {
            FnKind::Action => "action",
            FnKind::Function => "function",
            FnKind::Control => "control",
        };
        fd.stmts(&f.body, &format!("{kind} {}", f.name));
    }
    for ps in &prog.parsers {
        fd.stmts(&ps.init, &format!("parser {}", ps.name));
        for st in &ps.states {
            let place = format!("parser {} state {}", ps.name, st.name);
            fd.stmts(&st.body, &place);
            fd.note((2, st as *const State as usize), &place, || {
                "select on keys wider than 64 bits or a value set".into()
            });
            if let Transition::Select { keys, .. } = &st.next {
                keys.iter().for_each(|e| fd.exprs(e, &place));
            }
        }
    }
    for t in &prog.tables {
        let place = format!("table {}", t.name);
        fd.stmts(&t.key_pre, &place);
        for a in &t.actions {
            fd.stmts(&a.copy_in, &place);
            fd.stmts(&a.copy_out, &place);
        }
        t.keys.iter().for_each(|k| fd.exprs(&k.expr, &place));
    }
    let mut out: Vec<FallbackSite> = counts
        .0
        .iter()
        .map(|(k, &count)| {
            let (place, what) = fd
                .found
                .get(k)
                .cloned()
                .unwrap_or_else(|| ("(not found in the program)".into(), String::new()));
            FallbackSite { count, place, what }
        })
        .collect();
    out.sort_by(|a, b| {
        b.count
            .cmp(&a.count)
            .then_with(|| a.place.cmp(&b.place))
            .then_with(|| a.what.cmp(&b.what))
    });
    out
}

/// Finds the counted sites' nodes in a program, with their place and description.
struct Finder<'a> {
    counts: &'a SiteCounts,
    found: HashMap<(u8, usize), (String, String)>,
}

impl Finder<'_> {
    fn note(&mut self, k: (u8, usize), place: &str, what: impl FnOnce() -> String) {
        if self.counts.0.contains_key(&k) {
            self.found.insert(k, (place.to_string(), what()));
        }
    }

    fn exprs(&mut self, e: &Expr, place: &str) {
        each_expr(e, &mut |e| {
            self.note((1, e as *const Expr as usize), place, || expr_what(e))
        });
    }

    fn stmts(&mut self, ss: &[Stmt], place: &str) {
        p4_ir::visit::nested(ss, &mut |s| {
            let at = match s {
                Stmt::Extern(x) if !x.what.is_empty() => format!("{}: {place}", x.what),
                _ => place.to_string(),
            };
            self.note((0, s as *const Stmt as usize), &at, || stmt_what(s));
            stmt_exprs(s, &mut |e| {
                self.note((1, e as *const Expr as usize), place, || expr_what(e))
            });
        });
    }
}

/// What a statement the interpreter ran is, and its IR.
fn stmt_what(s: &Stmt) -> String {
    let kind = match s {
        Stmt::Extern(x) => format!("extern {:?}", x.op),
        Stmt::Assign(_, t, _) | Stmt::AssignSlice(_, t, ..) if t.is_wide() => {
            format!("assignment of a bit<{}> value", t.width)
        }
        Stmt::Assign(..) | Stmt::AssignSlice(..) => "assignment".into(),
        Stmt::ApplyTable { .. } => "table apply (key with calls or wider than 64 bits)".into(),
        Stmt::Extract { .. } => "extract (varbit, or fields not whole bytes)".into(),
        Stmt::ExtractNext { .. } => "extract into a header stack's next".into(),
        Stmt::Lookahead { .. } => "lookahead".into(),
        Stmt::Advance(_) => "advance".into(),
        Stmt::Shift { .. } => "header stack push/pop".into(),
        Stmt::Emit(_) => "emit".into(),
        Stmt::Copy { .. } | Stmt::Zero { .. } => "copy or zeroing at a run-time index".into(),
        other => format!("{:?}", std::mem::discriminant(other)),
    };
    format!("{kind}: {}", p4_ir::dump::stmt_line(s))
}

/// What an expression the interpreter evaluated is, and its IR.
fn expr_what(e: &Expr) -> String {
    let kind = match e {
        Expr::Bin(op, t, ..) => format!("{op:?} on bit<{}>", t.width),
        Expr::Cmp(op, t, ..) => format!("{op:?} on bit<{}>", t.width),
        Expr::Un(op, t, _) => format!("{op:?} on bit<{}>", t.width),
        Expr::Cast(to, from, _) => format!("cast bit<{}> to bit<{}>", from.width, to.width),
        Expr::Slice(..) => "slice".into(),
        Expr::Concat(..) => "concatenation".into(),
        Expr::Mux(..) => "?:".into(),
        _ => "expression".into(),
    };
    let mut ir = p4_ir::dump::expr(e);
    if ir.len() > 160 {
        let cut = (0..=160)
            .rev()
            .find(|&i| ir.is_char_boundary(i))
            .unwrap_or(0);
        ir.truncate(cut);
        ir.push('…');
    }
    format!("{kind} (wider than 64 bits): {ir}")
}

/// Calls `f` with every expression of `s` itself (not of the statements nested in it) and every
/// expression nested in those.
fn stmt_exprs(s: &Stmt, f: &mut dyn FnMut(&Expr)) {
    let loc = |l: &Loc, f: &mut dyn FnMut(&Expr)| {
        for d in &l.dyn_idx {
            each_expr(&d.index, f);
        }
    };
    match s {
        Stmt::Assign(l, _, e) | Stmt::AssignSlice(l, _, _, _, e) => {
            loc(l, f);
            each_expr(e, f);
        }
        Stmt::Copy { dst, src, .. } => {
            loc(dst, f);
            loc(src, f);
        }
        Stmt::Zero { dst, .. } | Stmt::Lookahead { dst, .. } => loc(dst, f),
        Stmt::SetValid { hdr, .. } => loc(hdr, f),
        Stmt::If(c, ..) => each_expr(c, f),
        Stmt::Switch { sel, .. } => each_expr(sel, f),
        Stmt::Loop { cond, .. } => each_expr(cond, f),
        Stmt::Extern(x) => {
            for a in &x.args {
                match a {
                    XArg::Val(e) => each_expr(e, f),
                    XArg::Out(l, _) | XArg::Agg(l, _) => loc(l, f),
                    XArg::Data(ds) => ds.iter().for_each(|d| datum(d, f)),
                    XArg::Str(_) | XArg::None => {}
                }
            }
            if let Some((l, _)) = &x.ret {
                loc(l, f);
            }
        }
        Stmt::Extract { hdr, varbit_bits } => {
            loc(&hdr.loc, f);
            varbit_bits.iter().for_each(|e| each_expr(e, f));
        }
        Stmt::ExtractNext {
            stack, varbit_bits, ..
        } => {
            loc(&stack.loc, f);
            varbit_bits.iter().for_each(|e| each_expr(e, f));
        }
        Stmt::Advance(e) => each_expr(e, f),
        Stmt::Verify(a, b) => {
            each_expr(a, f);
            each_expr(b, f);
        }
        Stmt::Emit(h) => loc(&h.loc, f),
        Stmt::Shift { stack, .. } => loc(&stack.loc, f),
        Stmt::Break
        | Stmt::Continue
        | Stmt::Call { .. }
        | Stmt::CallParser { .. }
        | Stmt::ApplyTable { .. }
        | Stmt::Return
        | Stmt::Exit => {}
    }
}

fn datum(d: &Datum, f: &mut dyn FnMut(&Expr)) {
    match d {
        Datum::Bits(e) => each_expr(e, f),
        Datum::Varbit(l, _) => l.dyn_idx.iter().for_each(|x| each_expr(&x.index, f)),
        Datum::IfValid(l, d) => {
            l.dyn_idx.iter().for_each(|x| each_expr(&x.index, f));
            datum(d, f);
        }
    }
}

/// Calls `f` with `e` and every expression nested in it.
fn each_expr(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    f(e);
    match e {
        Expr::Const(..) | Expr::Big(..) | Expr::Load(..) => {}
        Expr::LoadDyn(l, _) => l.dyn_idx.iter().for_each(|d| each_expr(&d.index, f)),
        Expr::Un(_, _, a) | Expr::Cast(_, _, a) | Expr::Slice(a, _, _, _) => each_expr(a, f),
        Expr::Bin(_, _, a, b)
        | Expr::Cmp(_, _, a, b)
        | Expr::And(a, b)
        | Expr::Or(a, b)
        | Expr::Concat(a, b, _, _) => {
            each_expr(a, f);
            each_expr(b, f);
        }
        Expr::Mux(c, a, b, _) => {
            each_expr(c, f);
            each_expr(a, f);
            each_expr(b, f);
        }
    }
}
