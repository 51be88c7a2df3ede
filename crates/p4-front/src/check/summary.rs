//! A human-readable summary of a checked program (`nevermiss check --dump summary`): the
//! architecture and `main`, parsers and controls with their parameters, extern instances,
//! actions and tables (keys with match kinds, actions, default action, size, add-on-miss, idle
//! timeout, entries).

use super::scope::ParamInfo;
use super::types::DeclId;
use super::{Arch, CallArg, Checked, PnaDialect};
use crate::ast::{self, DeclKind, Direction, Expr, ExprKind};
use std::fmt::Write;

/// Renders the summary. Deterministic: declarations in source order.
pub fn summary(program: &ast::Program, checked: &Checked) -> String {
    let mut s = String::new();
    let arch = match checked.arch {
        Arch::V1Model => "v1model",
        Arch::Psa => "psa",
        Arch::Pna(PnaDialect::V06FourBlock) => "pna (four blocks: pre-v0.7 dialect)",
        Arch::Pna(PnaDialect::V07ThreeBlock) => "pna (three blocks: v0.7+ dialect)",
        Arch::Unknown => "unknown",
    };
    let _ = writeln!(s, "architecture: {arch}");
    if let Some(m) = checked.main {
        let _ = writeln!(s, "main: {} {}", checked.decl(m).ty, checked.decl(m).name);
        for (p, d) in &checked.main_blocks {
            let _ = writeln!(
                s,
                "  {p} = {} {}",
                checked.decl(*d).kind.describe(),
                checked.decl(*d).name
            );
        }
    } else {
        let _ = writeln!(s, "main: none");
    }
    for d in &program.decls {
        match &d.kind {
            DeclKind::Parser(p) => {
                let Some(id) = checked.decl_by_span.get(&d.span).copied() else {
                    continue;
                };
                let _ = writeln!(
                    s,
                    "\nparser {}({}){}",
                    p.name.name,
                    params(&checked.decl(id).params),
                    ctor(&checked.decl(id).ctor_params)
                );
                locals(&mut s, &p.locals, checked, "  ");
                let states: Vec<&str> = p.states.iter().map(|st| st.name.name.as_str()).collect();
                let _ = writeln!(s, "  states: {}", states.join(", "));
            }
            DeclKind::Control(c) => {
                let Some(id) = checked.decl_by_span.get(&d.span).copied() else {
                    continue;
                };
                let _ = writeln!(
                    s,
                    "\ncontrol {}({}){}",
                    c.name.name,
                    params(&checked.decl(id).params),
                    ctor(&checked.decl(id).ctor_params)
                );
                locals(&mut s, &c.locals, checked, "  ");
            }
            DeclKind::Action(_) | DeclKind::Instantiation(_) => {
                let mut one = String::new();
                locals(&mut one, std::slice::from_ref(d), checked, "");
                if !one.is_empty() {
                    s.push('\n');
                    s.push_str(&one);
                }
            }
            _ => {}
        }
    }
    s
}

fn params(ps: &[ParamInfo]) -> String {
    ps.iter()
        .map(|p| {
            let dir = match p.dir {
                Direction::None => "",
                Direction::In => "in ",
                Direction::Out => "out ",
                Direction::InOut => "inout ",
            };
            format!("{dir}{} {}", p.ty, p.name)
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn ctor(ps: &[ParamInfo]) -> String {
    if ps.is_empty() {
        String::new()
    } else {
        format!("({})", params(ps))
    }
}

fn locals(s: &mut String, decls: &[ast::Decl], checked: &Checked, ind: &str) {
    for d in decls {
        let Some(id) = checked.decl_by_span.get(&d.span).copied() else {
            continue;
        };
        match &d.kind {
            DeclKind::Instantiation(i) => {
                let args: Vec<String> = i.args.iter().map(|a| expr_text(&a.value)).collect();
                let _ = writeln!(
                    s,
                    "{ind}instance {} {}({})",
                    checked.decl(id).ty,
                    i.name.name,
                    args.join(", ")
                );
            }
            DeclKind::Action(a) => {
                let _ = writeln!(
                    s,
                    "{ind}action {}({})",
                    a.name.name,
                    params(&checked.decl(id).params)
                );
            }
            DeclKind::Table(_) => table(s, id, checked, ind),
            _ => {}
        }
    }
}

fn action_name(checked: &Checked, a: DeclId) -> String {
    checked.decl(a).name.clone()
}

fn table(s: &mut String, id: DeclId, checked: &Checked, ind: &str) {
    let d = checked.decl(id);
    let _ = writeln!(s, "{ind}table {}", d.name);
    let Some(t) = checked.tables.get(&id) else {
        return;
    };
    let keys: Vec<String> = t
        .keys
        .iter()
        .map(|k| format!("{}: {} ({})", k.name, k.match_kind, k.ty))
        .collect();
    let _ = writeln!(
        s,
        "{ind}  key: {}",
        if keys.is_empty() {
            "none".to_string()
        } else {
            keys.join(", ")
        }
    );
    let acts: Vec<String> = t
        .actions
        .iter()
        .map(|a| {
            let mut x = action_name(checked, a.action);
            let dirless: Vec<String> = checked
                .decl(a.action)
                .params
                .iter()
                .zip(&a.args)
                .filter(|(_, c)| matches!(c, CallArg::Omitted))
                .map(|(p, _)| format!("{} {}", p.ty, p.name))
                .collect();
            if !dirless.is_empty() {
                x.push_str(&format!("({})", dirless.join(", ")));
            }
            if a.default_only {
                x.push_str(" @defaultonly");
            }
            if a.table_only {
                x.push_str(" @tableonly");
            }
            x
        })
        .collect();
    let _ = writeln!(s, "{ind}  actions: {}", acts.join(", "));
    match &t.default_action {
        Some(da) => {
            let _ = writeln!(
                s,
                "{ind}  default_action: {}{}",
                action_name(checked, da.action),
                if da.is_const { " (const)" } else { "" }
            );
        }
        None => {
            let _ = writeln!(s, "{ind}  default_action: NoAction (implicit)");
        }
    }
    if let Some(n) = t.size {
        let _ = writeln!(s, "{ind}  size: {n}");
    }
    if t.add_on_miss {
        let _ = writeln!(s, "{ind}  add_on_miss: true");
    }
    if let Some(it) = &t.idle_timeout {
        let _ = writeln!(s, "{ind}  idle_timeout: {it}");
    }
    if !t.entries.is_empty() {
        let _ = writeln!(
            s,
            "{ind}  entries: {}{}",
            t.entries.len(),
            if t.entries_const { " (const)" } else { "" }
        );
    }
    for (n, _, v) in &t.properties {
        if matches!(
            n.as_str(),
            "size"
                | "add_on_miss"
                | "pna_idle_timeout"
                | "psa_idle_timeout"
                | "idle_timeout_with_auto_delete"
                | "support_timeout"
        ) {
            continue;
        }
        match v {
            Some(v) => {
                let _ = writeln!(s, "{ind}  {n}: {v}");
            }
            None => {
                let _ = writeln!(s, "{ind}  {n}");
            }
        }
    }
}

/// Text of an expression with structure-expression fields sorted by name (to compare arguments).
pub fn canonical_text(e: &Expr) -> String {
    match &e.kind {
        ExprKind::StructInit { fields, .. } => {
            let mut fs: Vec<String> = fields
                .iter()
                .map(|(n, x)| format!("{} = {}", n.name, canonical_text(x)))
                .collect();
            fs.sort();
            format!("{{{}}}", fs.join(", "))
        }
        _ => expr_text(e),
    }
}

/// Source-like text of an expression (used for key names and messages).
pub fn expr_text(e: &Expr) -> String {
    let mut s = String::new();
    write_expr(&mut s, e, 0);
    s
}

fn write_expr(s: &mut String, e: &Expr, depth: u32) {
    if depth > 64 {
        s.push_str("...");
        return;
    }
    let d = depth + 1;
    match &e.kind {
        ExprKind::Bool(b) => {
            let _ = write!(s, "{b}");
        }
        ExprKind::Int { value, width, .. } => match width {
            Some((w, sg)) => {
                let _ = write!(s, "{w}{}{value}", if *sg { "s" } else { "w" });
            }
            None => {
                let _ = write!(s, "{value}");
            }
        },
        ExprKind::String(x) => {
            let _ = write!(s, "{x:?}");
        }
        ExprKind::Path(p) => {
            if p.global {
                s.push('.');
            }
            s.push_str(&p.name.name);
        }
        ExprKind::Type(_) => s.push_str("<type>"),
        ExprKind::Member(b, m) => {
            write_expr(s, b, d);
            s.push('.');
            s.push_str(&m.name);
        }
        ExprKind::Index(b, i) => {
            write_expr(s, b, d);
            s.push('[');
            write_expr(s, i, d);
            s.push(']');
        }
        ExprKind::Slice(b, h, l) => {
            write_expr(s, b, d);
            s.push('[');
            write_expr(s, h, d);
            s.push(':');
            write_expr(s, l, d);
            s.push(']');
        }
        ExprKind::PlusSlice(b, l, w) => {
            write_expr(s, b, d);
            s.push('[');
            write_expr(s, l, d);
            s.push_str(" +: ");
            write_expr(s, w, d);
            s.push(']');
        }
        ExprKind::Dots => s.push_str("..."),
        ExprKind::Call { callee, args, .. } => {
            write_expr(s, callee, d);
            s.push('(');
            for (i, a) in args.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                if let Some(n) = &a.name {
                    s.push_str(&n.name);
                    s.push_str(" = ");
                }
                write_expr(s, &a.value, d);
            }
            s.push(')');
        }
        ExprKind::Unary(op, x) => {
            s.push_str(match op {
                ast::UnOp::Not => "!",
                ast::UnOp::BitNot => "~",
                ast::UnOp::Neg => "-",
                ast::UnOp::Plus => "+",
            });
            write_expr(s, x, d);
        }
        ExprKind::Binary(op, a, b) => {
            write_expr(s, a, d);
            let _ = write!(s, " {} ", op.symbol());
            write_expr(s, b, d);
        }
        ExprKind::Ternary(c, a, b) => {
            write_expr(s, c, d);
            s.push_str(" ? ");
            write_expr(s, a, d);
            s.push_str(" : ");
            write_expr(s, b, d);
        }
        ExprKind::Cast(_, x) => {
            s.push_str("(cast)");
            write_expr(s, x, d);
        }
        ExprKind::List { items, .. } => {
            s.push('{');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                write_expr(s, x, d);
            }
            s.push('}');
        }
        ExprKind::StructInit { fields, .. } => {
            s.push('{');
            for (i, (n, x)) in fields.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                s.push_str(&n.name);
                s.push_str(" = ");
                write_expr(s, x, d);
            }
            s.push('}');
        }
        ExprKind::Invalid => s.push_str("{#}"),
        ExprKind::Mask(a, b) => {
            write_expr(s, a, d);
            s.push_str(" &&& ");
            write_expr(s, b, d);
        }
        ExprKind::Range(a, b) => {
            write_expr(s, a, d);
            s.push_str(" .. ");
            write_expr(s, b, d);
        }
        ExprKind::Default => s.push_str("default"),
        ExprKind::DontCare => s.push('_'),
        ExprKind::This => s.push_str("this"),
    }
}
