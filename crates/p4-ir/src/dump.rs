//! The IR as text: one line per statement, nested blocks indented. For people, not machines.

use crate::ir::*;
use std::fmt::Write;

/// Renders a whole program.
pub fn dump(p: &Program) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "arch {:?}; frame {} words ({} zeroed per packet)",
        p.arch, p.frame_words, p.zero_words
    );
    for b in &p.blocks {
        let _ = writeln!(s, "block {} = {} {:?}", b.role, b.name, b.body);
        for prm in &b.params {
            let _ = writeln!(
                s,
                "  param {}: {} @ {:?}",
                prm.name, prm.type_name, prm.region
            );
        }
    }
    for (i, h) in p.headers.iter().enumerate() {
        let _ = write!(
            s,
            "header #{i} {} ({} words, {} bits):",
            h.name, h.words, h.fixed_bits
        );
        for f in &h.fields {
            let _ = write!(s, " {}@{}:{}", f.name, f.off, ty(f.ty));
            if let Some(m) = f.varbit {
                let _ = write!(s, "(varbit {m})");
            }
        }
        s.push('\n');
    }
    for (i, x) in p.externs.iter().enumerate() {
        let _ = writeln!(s, "extern #{i} {}: {:?}", x.name, x.kind);
    }
    for (i, t) in p.tables.iter().enumerate() {
        let _ = writeln!(
            s,
            "table #{i} {} size {}{}{}",
            t.name,
            t.size,
            if t.add_on_miss { " add_on_miss" } else { "" },
            match t.idle_timeout {
                IdleTimeout::None => "",
                IdleTimeout::NotifyControl => " notify_control",
                IdleTimeout::AutoDelete => " auto_delete",
            }
        );
        block(&mut s, &t.key_pre, 2);
        for k in &t.keys {
            let _ = writeln!(s, "  key {} {:?} = {}", k.name, k.kind, expr(&k.expr));
        }
        for (j, a) in t.actions.iter().enumerate() {
            let ps: Vec<String> = a
                .params
                .iter()
                .map(|p| {
                    format!(
                        "{}{}:{}@{}",
                        if p.is_ref { "@__ref " } else { "" },
                        p.name,
                        ty(p.ty),
                        p.slot
                    )
                })
                .collect();
            let _ = writeln!(
                s,
                "  action {j} {} = fn#{} ({})",
                a.name,
                a.func,
                ps.join(", ")
            );
        }
        if let Some((a, prm)) = &t.default_action {
            let _ = writeln!(
                s,
                "  default action {a} params {prm:02x?}{}",
                if t.default_const { " const" } else { "" }
            );
        }
        for e in &t.entries {
            let _ = writeln!(
                s,
                "  entry {:?} prio {} -> action {} {:02x?}",
                e.matches, e.priority, e.action, e.params
            );
        }
    }
    for (i, ps) in p.parsers.iter().enumerate() {
        let _ = writeln!(s, "parser #{i} {} start {}", ps.name, ps.start);
        block(&mut s, &ps.init, 2);
        for (j, st) in ps.states.iter().enumerate() {
            let _ = writeln!(s, "  state {j} {}:", st.name);
            block(&mut s, &st.body, 4);
            match &st.next {
                Transition::Go(t) => {
                    let _ = writeln!(s, "    -> {t:?}");
                }
                Transition::Select { keys, cases } => {
                    let ks: Vec<String> = keys.iter().map(expr).collect();
                    let _ = writeln!(s, "    select ({})", ks.join(", "));
                    for c in cases {
                        let _ = writeln!(s, "      {:?} -> {:?}", c.keysets, c.next);
                    }
                }
            }
        }
    }
    for (i, f) in p.functions.iter().enumerate() {
        let _ = writeln!(s, "fn #{i} {:?} {}:", f.kind, f.name);
        block(&mut s, &f.body, 2);
    }
    s
}

fn ty(t: Ty) -> String {
    format!("{}{}", if t.signed { "i" } else { "u" }, t.width)
}

fn loc(l: &Loc) -> String {
    let mut s = format!("@{}", l.off);
    for d in &l.dyn_idx {
        let _ = write!(s, "+[{}]*{}<{}", expr(&d.index), d.stride, d.count);
    }
    s
}

/// Renders an expression.
pub fn expr(e: &Expr) -> String {
    match e {
        Expr::Const(v, t) => format!("{v}{}", ty(*t)),
        Expr::Big(v, t) => format!("{v}{}", ty(*t)),
        Expr::Load(o, t) => format!("@{o}:{}", ty(*t)),
        Expr::LoadDyn(l, t) => format!("{}:{}", loc(l), ty(*t)),
        Expr::Un(op, _, a) => format!("{op:?}({})", expr(a)),
        Expr::Bin(op, t, a, b) => format!("({} {op:?}.{} {})", expr(a), ty(*t), expr(b)),
        Expr::Cmp(op, _, a, b) => format!("({} {op:?} {})", expr(a), expr(b)),
        Expr::And(a, b) => format!("({} && {})", expr(a), expr(b)),
        Expr::Or(a, b) => format!("({} || {})", expr(a), expr(b)),
        Expr::Mux(c, a, b, _) => format!("({} ? {} : {})", expr(c), expr(a), expr(b)),
        Expr::Cast(to, _, a) => format!("({}){}", ty(*to), expr(a)),
        Expr::Slice(a, _, h, l) => format!("{}[{h}:{l}]", expr(a)),
        Expr::Concat(a, b, _, _) => format!("({} ++ {})", expr(a), expr(b)),
    }
}

/// One statement's first line (without the statements nested in it), for messages.
pub fn stmt_line(st: &Stmt) -> String {
    let mut s = String::new();
    stmt(&mut s, st, 0);
    s.lines().next().unwrap_or("").to_string()
}

fn block(s: &mut String, ss: &[Stmt], ind: usize) {
    for st in ss {
        stmt(s, st, ind);
    }
}

fn stmt(s: &mut String, st: &Stmt, ind: usize) {
    let pad = " ".repeat(ind);
    match st {
        Stmt::Assign(l, t, e) => {
            let _ = writeln!(s, "{pad}{}:{} = {}", loc(l), ty(*t), expr(e));
        }
        Stmt::AssignSlice(l, _, h, lo, e) => {
            let _ = writeln!(s, "{pad}{}[{h}:{lo}] = {}", loc(l), expr(e));
        }
        Stmt::Copy { dst, src, words } => {
            let _ = writeln!(s, "{pad}copy {} <- {} ({words} words)", loc(dst), loc(src));
        }
        Stmt::Zero { dst, words } => {
            let _ = writeln!(s, "{pad}zero {} ({words} words)", loc(dst));
        }
        Stmt::SetValid { hdr, valid, others } => {
            let _ = writeln!(s, "{pad}valid {} = {valid} (others {others:?})", loc(hdr));
        }
        Stmt::If(c, a, b) => {
            let _ = writeln!(s, "{pad}if {}", expr(c));
            block(s, a, ind + 2);
            if !b.is_empty() {
                let _ = writeln!(s, "{pad}else");
                block(s, b, ind + 2);
            }
        }
        Stmt::Switch {
            sel,
            cases,
            bodies,
            default,
        } => {
            let _ = writeln!(
                s,
                "{pad}switch {} cases {cases:?} default {default:?}",
                expr(sel)
            );
            for (i, b) in bodies.iter().enumerate() {
                let _ = writeln!(s, "{pad}  body {i}:");
                block(s, b, ind + 4);
            }
        }
        Stmt::Loop { cond, body, update } => {
            let _ = writeln!(s, "{pad}while {}", expr(cond));
            block(s, body, ind + 2);
            let _ = writeln!(s, "{pad}update");
            block(s, update, ind + 2);
        }
        Stmt::Call {
            func,
            copy_in,
            copy_out,
        } => {
            let _ = writeln!(s, "{pad}call fn#{func}");
            block(s, copy_in, ind + 4);
            let _ = writeln!(s, "{pad}  out:");
            block(s, copy_out, ind + 4);
        }
        Stmt::CallParser {
            parser,
            copy_in,
            copy_out,
        } => {
            let _ = writeln!(s, "{pad}call parser#{parser}");
            block(s, copy_in, ind + 4);
            let _ = writeln!(s, "{pad}  out:");
            block(s, copy_out, ind + 4);
        }
        Stmt::ApplyTable {
            table,
            hit,
            action_run,
        } => {
            let _ = writeln!(s, "{pad}apply table#{table} hit {hit:?} run {action_run:?}");
        }
        Stmt::Extern(x) => {
            let _ = writeln!(
                s,
                "{pad}extern {:?} inst {:?} args {} ret {:?}",
                x.op,
                x.inst,
                x.args.len(),
                x.ret.as_ref().map(|r| loc(&r.0))
            );
        }
        Stmt::Extract { hdr, varbit_bits } => {
            let _ = writeln!(
                s,
                "{pad}extract {} hdr#{}{}",
                loc(&hdr.loc),
                hdr.layout,
                varbit_bits
                    .as_ref()
                    .map(|e| format!(" varbit {}", expr(e)))
                    .unwrap_or_default()
            );
        }
        Stmt::ExtractNext { stack, .. } => {
            let _ = writeln!(s, "{pad}extract next of stack {}", loc(&stack.loc));
        }
        Stmt::Lookahead { dst, .. } => {
            let _ = writeln!(s, "{pad}lookahead -> {}", loc(dst));
        }
        Stmt::Advance(e) => {
            let _ = writeln!(s, "{pad}advance {}", expr(e));
        }
        Stmt::Verify(c, e) => {
            let _ = writeln!(s, "{pad}verify {} else {}", expr(c), expr(e));
        }
        Stmt::Emit(h) => {
            let _ = writeln!(s, "{pad}emit {} hdr#{}", loc(&h.loc), h.layout);
        }
        Stmt::Shift { stack, by } => {
            let _ = writeln!(s, "{pad}shift stack {} by {by}", loc(&stack.loc));
        }
        Stmt::Break => {
            let _ = writeln!(s, "{pad}break");
        }
        Stmt::Continue => {
            let _ = writeln!(s, "{pad}continue");
        }
        Stmt::Return => {
            let _ = writeln!(s, "{pad}return");
        }
        Stmt::Exit => {
            let _ = writeln!(s, "{pad}exit");
        }
    }
}
