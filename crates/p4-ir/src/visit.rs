//! Walking a program's statements: each one, the statements nested in it included (the
//! branches of `if` and `switch`, loop bodies and updates, calls' copy-in and copy-out).

use crate::ir::*;

/// Calls `f` with every statement of `ss` and every statement nested in them, each before the
/// ones nested in it.
pub fn nested<'a>(ss: &'a [Stmt], f: &mut dyn FnMut(&'a Stmt)) {
    for s in ss {
        f(s);
        match s {
            Stmt::If(_, a, b) => {
                nested(a, f);
                nested(b, f);
            }
            Stmt::Switch { bodies, .. } => bodies.iter().for_each(|b| nested(b, f)),
            Stmt::Loop { body, update, .. } => {
                nested(body, f);
                nested(update, f);
            }
            Stmt::Call {
                copy_in, copy_out, ..
            }
            | Stmt::CallParser {
                copy_in, copy_out, ..
            } => {
                nested(copy_in, f);
                nested(copy_out, f);
            }
            _ => {}
        }
    }
}

/// [`nested`] over every statement list of `p`: functions, parsers' states, tables' key
/// computations and their actions' copy-in and copy-out.
pub fn program<'a>(p: &'a Program, f: &mut dyn FnMut(&'a Stmt)) {
    for func in &p.functions {
        nested(&func.body, f);
    }
    for ps in &p.parsers {
        nested(&ps.init, f);
        for st in &ps.states {
            nested(&st.body, f);
        }
    }
    for t in &p.tables {
        nested(&t.key_pre, f);
        for a in &t.actions {
            nested(&a.copy_in, f);
            nested(&a.copy_out, f);
        }
    }
}
