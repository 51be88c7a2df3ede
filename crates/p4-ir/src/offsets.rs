//! Every frame word offset a [`Program`] holds, visited mutably: what moving temporaries
//! ([`crate::relocate`]) and renaming a parameter's words ([`crate::elide`]) are made of.

use crate::ir::*;

/// Applies `f` to every frame word offset `p` holds: locations of statements, expressions and
/// table keys, action parameter slots, checksum states and the blocks' parameter regions.
pub fn map_offsets(p: &mut Program, f: &mut dyn FnMut(&mut u32)) {
    for func in &mut p.functions {
        reloc_stmts(&mut func.body, f);
    }
    for ps in &mut p.parsers {
        reloc_stmts(&mut ps.init, f);
        for st in &mut ps.states {
            reloc_stmts(&mut st.body, f);
            if let Transition::Select { keys, .. } = &mut st.next {
                for k in keys {
                    reloc_expr(k, f);
                }
            }
        }
    }
    for t in &mut p.tables {
        reloc_stmts(&mut t.key_pre, f);
        for k in &mut t.keys {
            reloc_expr(&mut k.expr, f);
        }
        for a in &mut t.actions {
            for prm in &mut a.params {
                f(&mut prm.slot);
            }
            reloc_stmts(&mut a.copy_in, f);
            reloc_stmts(&mut a.copy_out, f);
        }
    }
    for x in &mut p.externs {
        match &mut x.kind {
            ExternKind::Checksum { state, .. } | ExternKind::InternetChecksum { state } => f(state),
            _ => {}
        }
    }
    for b in &mut p.blocks {
        for prm in &mut b.params {
            if let Some(r) = &mut prm.region {
                f(r);
            }
        }
    }
}

fn reloc_loc(l: &mut Loc, f: &mut dyn FnMut(&mut u32)) {
    f(&mut l.off);
    for d in &mut l.dyn_idx {
        reloc_expr(&mut d.index, f);
    }
}

fn reloc_expr(e: &mut Expr, f: &mut dyn FnMut(&mut u32)) {
    match e {
        Expr::Const(..) | Expr::Big(..) => {}
        Expr::Load(o, _) => f(o),
        Expr::LoadDyn(l, _) => reloc_loc(l, f),
        Expr::Un(_, _, a) | Expr::Cast(_, _, a) | Expr::Slice(a, _, _, _) => reloc_expr(a, f),
        Expr::Bin(_, _, a, b)
        | Expr::Cmp(_, _, a, b)
        | Expr::And(a, b)
        | Expr::Or(a, b)
        | Expr::Concat(a, b, _, _) => {
            reloc_expr(a, f);
            reloc_expr(b, f);
        }
        Expr::Mux(c, a, b, _) => {
            reloc_expr(c, f);
            reloc_expr(a, f);
            reloc_expr(b, f);
        }
    }
}

fn reloc_datum(d: &mut Datum, f: &mut dyn FnMut(&mut u32)) {
    match d {
        Datum::Bits(x) => reloc_expr(x, f),
        Datum::Varbit(l, _) => reloc_loc(l, f),
        Datum::IfValid(l, d) => {
            reloc_loc(l, f);
            reloc_datum(d, f);
        }
    }
}

fn reloc_stmts(ss: &mut [Stmt], f: &mut dyn FnMut(&mut u32)) {
    for s in ss {
        reloc_stmt(s, f);
    }
}

fn reloc_stack(s: &mut StackRef, f: &mut dyn FnMut(&mut u32)) {
    reloc_loc(&mut s.loc, f);
}

fn reloc_stmt(s: &mut Stmt, f: &mut dyn FnMut(&mut u32)) {
    match s {
        Stmt::Assign(l, _, e) | Stmt::AssignSlice(l, _, _, _, e) => {
            reloc_loc(l, f);
            reloc_expr(e, f);
        }
        Stmt::Copy { dst, src, .. } => {
            reloc_loc(dst, f);
            reloc_loc(src, f);
        }
        Stmt::Zero { dst, .. } => reloc_loc(dst, f),
        Stmt::SetValid { hdr, .. } => reloc_loc(hdr, f),
        Stmt::If(c, a, b) => {
            reloc_expr(c, f);
            reloc_stmts(a, f);
            reloc_stmts(b, f);
        }
        Stmt::Switch { sel, bodies, .. } => {
            reloc_expr(sel, f);
            for b in bodies {
                reloc_stmts(b, f);
            }
        }
        Stmt::Loop { cond, body, update } => {
            reloc_expr(cond, f);
            reloc_stmts(body, f);
            reloc_stmts(update, f);
        }
        Stmt::Call {
            copy_in, copy_out, ..
        }
        | Stmt::CallParser {
            copy_in, copy_out, ..
        } => {
            reloc_stmts(copy_in, f);
            reloc_stmts(copy_out, f);
        }
        Stmt::ApplyTable {
            hit, action_run, ..
        } => {
            if let Some(h) = hit {
                f(h);
            }
            if let Some(a) = action_run {
                f(a);
            }
        }
        Stmt::Extern(x) => {
            for a in &mut x.args {
                match a {
                    XArg::Val(e) => reloc_expr(e, f),
                    XArg::Out(l, _) | XArg::Agg(l, _) => reloc_loc(l, f),
                    XArg::Data(es) => {
                        for e in es {
                            reloc_datum(e, f);
                        }
                    }
                    XArg::Str(_) | XArg::None => {}
                }
            }
            if let Some((l, _)) = &mut x.ret {
                reloc_loc(l, f);
            }
        }
        Stmt::Extract { hdr, varbit_bits } => {
            reloc_loc(&mut hdr.loc, f);
            if let Some(e) = varbit_bits {
                reloc_expr(e, f);
            }
        }
        Stmt::ExtractNext {
            stack, varbit_bits, ..
        } => {
            reloc_stack(stack, f);
            if let Some(e) = varbit_bits {
                reloc_expr(e, f);
            }
        }
        Stmt::Shift { stack, .. } => reloc_stack(stack, f),
        Stmt::Lookahead { dst, .. } => reloc_loc(dst, f),
        Stmt::Advance(e) => reloc_expr(e, f),
        Stmt::Verify(a, b) => {
            reloc_expr(a, f);
            reloc_expr(b, f);
        }
        Stmt::Emit(h) => reloc_loc(&mut h.loc, f),
        Stmt::Break | Stmt::Continue | Stmt::Return | Stmt::Exit => {}
    }
}
