//! Copy elision: a control applied from exactly one place, or a control or top-level action
//! that every one of its call sites passes the same argument words, works on those words in
//! place instead of on copies of them.
//!
//! P4_16 §6.8 gives `inout` arguments copy-in/copy-out semantics, and lowering gives every
//! control instance its own frame words for its parameters: applying a sub-control copies the
//! caller's headers and metadata in and back out (ONOS fabric.p4 copies its 111-word headers
//! struct twice per sub-control, ten times per packet). When the callee is applied from one
//! place only and an `inout` argument is a fixed location that no other argument of the call
//! overlaps, copying in, running the callee on the copy and copying back is the same as
//! running it on the argument itself: during the call nothing but the callee runs, the callee
//! reaches the caller's words only through its parameters, and the copy-out runs on every way
//! out of a control (also after `exit`, §12.4). So the parameter's words are renamed to the
//! argument's everywhere in the program (the callee, its actions, tables and nested calls) and
//! both copies are dropped. The renamed words are then read by nothing, which also takes them
//! off a packet's start (`nevermiss_jit::Compiled::zero_ranges`).
//!
//! The same holds for a callee called from several places (calls and tables' action lists)
//! when every one of them copies the same argument words in and out of the parameter: each
//! call runs alone, on the same words. A control reaches nothing but its parameters; an action
//! or function declared inside a control could also name the argument's words directly (the
//! control's own parameters), so among actions and functions only top-level ones
//! (`Function::top_level`, which reach the frame only through their parameters) are renamed
//! from several places (SONiC DASH's `drop`/`deny(inout headers_t, inout metadata_t)`,
//! referenced by a dozen tables, copied its 136-word metadata in and out at each).
//!
//! Lowering allocates a parameter's words once, for one instance (`Lower::alloc_state`), so
//! renaming them cannot touch another variable. Both engines run the same renamed program.

use crate::ir::*;
use crate::offsets::map_offsets;

/// Elides the copies of every `inout` argument it can (see the module); returns how many
/// parameter regions were renamed.
pub fn inout_copies(p: &mut Program) -> usize {
    let mut renamed = 0;
    // Each rename may expose another (a nested call copying from a renamed region), and each
    // one changes offsets everywhere: one at a time, until none is left.
    while let Some((func, pair)) = find(p) {
        drop_copies(p, func, &pair);
        let (param, arg, words) = (pair.param, pair.arg, pair.words);
        map_offsets(p, &mut |o: &mut u32| {
            if (param..param + words).contains(o) {
                *o = *o - param + arg;
            }
        });
        renamed += 1;
    }
    renamed
}

/// One `inout` argument: the callee's parameter words, the caller's argument words.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Pair {
    param: u32,
    arg: u32,
    words: u32,
    /// A scalar (`Assign` of a `Load`) of this type, or a `Copy` of `words` words.
    scalar: Option<Ty>,
}

impl Pair {
    /// Whether `s` copies `dst` ← `src` as this pair does.
    fn copies(&self, s: &Stmt, dst: u32, src: u32) -> bool {
        match (s, self.scalar) {
            (
                Stmt::Copy {
                    dst: d,
                    src: r,
                    words,
                },
                None,
            ) => d.fixed() == Some(dst) && r.fixed() == Some(src) && *words == self.words,
            (Stmt::Assign(d, t, Expr::Load(o, lt)), Some(ty)) => {
                d.fixed() == Some(dst) && *o == src && *t == ty && *lt == ty
            }
            _ => false,
        }
    }

    fn is_copy_in(&self, s: &Stmt) -> bool {
        self.copies(s, self.param, self.arg)
    }

    fn is_copy_out(&self, s: &Stmt) -> bool {
        self.copies(s, self.arg, self.param)
    }

    fn span(&self, at: u32) -> (u32, u32) {
        (at, at + self.words)
    }
}

/// The first elidable argument: of a control applied from exactly one place, or of a control
/// or top-level action or function whose every site (calls and table action lists) copies the
/// same argument in and out. Both sides must be per-packet state words (`Program::zero_words`):
/// temporaries are shared between functions.
fn find(p: &Program) -> Option<(FnId, Pair)> {
    let refs = references(p);
    let sites = sites(p);
    for (func, at) in sites.iter().enumerate() {
        let Some(f) = p.functions.get(func) else {
            continue;
        };
        let n = at.len() as u32;
        let ok = match f.kind {
            FnKind::Control => n >= 1 && refs.get(func) == Some(&n),
            // An action's other references (`add_entry`) run it through its tables' lists.
            FnKind::Action | FnKind::Function => n >= 1 && f.top_level,
        };
        if !ok {
            continue;
        }
        let Some(&(first_in, _)) = at.first() else {
            continue;
        };
        'pair: for pair in first_in.iter().filter_map(pair_of) {
            for &(copy_in, copy_out) in at {
                if !elidable_at(p, &pair, copy_in, copy_out) {
                    continue 'pair;
                }
            }
            return Some((func as FnId, pair));
        }
    }
    None
}

/// Whether one call site copies `pair` in and out, with nothing else of its copies touching
/// either side.
fn elidable_at(p: &Program, pair: &Pair, copy_in: &[Stmt], copy_out: &[Stmt]) -> bool {
    if !copy_in.iter().any(|s| pair.is_copy_in(s)) || !copy_out.iter().any(|s| pair.is_copy_out(s))
    {
        return false;
    }
    // Every word the call's copies touch, but those of the pair itself: a parameter or
    // argument overlapping any of them stays a copy.
    let (pa, ar) = (pair.span(pair.param), pair.span(pair.arg));
    let overlapped = copy_in
        .iter()
        .chain(copy_out)
        .filter(|s| !pair.is_copy_in(s) && !pair.is_copy_out(s))
        .flat_map(touched)
        .any(|o| overlaps(o, pa) || overlaps(o, ar));
    !(overlapped || overlaps(pa, ar) || pa.1 > p.zero_words || ar.1 > p.zero_words)
}

/// Each function's sites that copy arguments: its `Call` statements' and its entries in
/// tables' action lists' copy-in and copy-out, by function.
fn sites(p: &Program) -> Vec<Vec<(&[Stmt], &[Stmt])>> {
    let mut at: Vec<Vec<(&[Stmt], &[Stmt])>> = vec![Vec::new(); p.functions.len()];
    for_each_call(p, &mut |func, copy_in, copy_out| {
        if let Some(v) = at.get_mut(func as usize) {
            v.push((copy_in, copy_out));
        }
    });
    for t in &p.tables {
        for a in &t.actions {
            if let Some(v) = at.get_mut(a.func as usize) {
                v.push((&a.copy_in, &a.copy_out));
            }
        }
    }
    at
}

/// Drops `pair`'s copies at every site of `func` ([`sites`]).
fn drop_copies(p: &mut Program, func: FnId, pair: &Pair) {
    fn walk(ss: &mut [Stmt], func: FnId, pair: &Pair) {
        for s in ss {
            match s {
                Stmt::Call {
                    func: g,
                    copy_in,
                    copy_out,
                } => {
                    if *g == func {
                        copy_in.retain(|s| !pair.is_copy_in(s));
                        copy_out.retain(|s| !pair.is_copy_out(s));
                    }
                    walk(copy_in, func, pair);
                    walk(copy_out, func, pair);
                }
                Stmt::If(_, a, b) => {
                    walk(a, func, pair);
                    walk(b, func, pair);
                }
                Stmt::Switch { bodies, .. } => bodies.iter_mut().for_each(|b| walk(b, func, pair)),
                Stmt::Loop { body, update, .. } => {
                    walk(body, func, pair);
                    walk(update, func, pair);
                }
                Stmt::CallParser {
                    copy_in, copy_out, ..
                } => {
                    walk(copy_in, func, pair);
                    walk(copy_out, func, pair);
                }
                _ => {}
            }
        }
    }
    for f in &mut p.functions {
        walk(&mut f.body, func, pair);
    }
    for ps in &mut p.parsers {
        walk(&mut ps.init, func, pair);
        for st in &mut ps.states {
            walk(&mut st.body, func, pair);
        }
    }
    for t in &mut p.tables {
        walk(&mut t.key_pre, func, pair);
        for a in &mut t.actions {
            if a.func == func {
                a.copy_in.retain(|s| !pair.is_copy_in(s));
                a.copy_out.retain(|s| !pair.is_copy_out(s));
            }
            walk(&mut a.copy_in, func, pair);
            walk(&mut a.copy_out, func, pair);
        }
    }
}

/// A copy-in statement as a pair (a whole copy or a scalar load between fixed locations).
fn pair_of(s: &Stmt) -> Option<Pair> {
    match s {
        Stmt::Copy { dst, src, words } => Some(Pair {
            param: dst.fixed()?,
            arg: src.fixed()?,
            words: *words,
            scalar: None,
        }),
        Stmt::Assign(dst, t, Expr::Load(o, lt)) if t == lt && !t.is_wide() => Some(Pair {
            param: dst.fixed()?,
            arg: *o,
            words: 1,
            scalar: Some(*t),
        }),
        _ => None,
    }
}

/// The word ranges a copy-in or copy-out statement reads or writes (everything for others).
fn touched(s: &Stmt) -> Vec<(u32, u32)> {
    let all = vec![(0, u32::MAX)];
    match pair_of(s) {
        Some(p) => vec![p.span(p.param), p.span(p.arg)],
        None => match s {
            Stmt::Zero { dst, words } => dst.fixed().map_or(all, |d| vec![(d, d + words)]),
            Stmt::Assign(dst, t, e) if !t.is_wide() => match (dst.fixed(), loads(e)) {
                (Some(d), Some(mut v)) => {
                    v.push((d, d + 1));
                    v
                }
                _ => all,
            },
            _ => all,
        },
    }
}

/// The fixed words expression `e` reads, or `None` when it reads through a run-time index.
fn loads(e: &Expr) -> Option<Vec<(u32, u32)>> {
    let mut v = Vec::new();
    fn walk(e: &Expr, v: &mut Vec<(u32, u32)>) -> bool {
        match e {
            Expr::Const(..) | Expr::Big(..) => true,
            Expr::Load(o, t) => {
                v.push((*o, *o + t.words()));
                true
            }
            Expr::LoadDyn(..) => false,
            Expr::Un(_, _, a) | Expr::Cast(_, _, a) | Expr::Slice(a, _, _, _) => walk(a, v),
            Expr::Bin(_, _, a, b)
            | Expr::Cmp(_, _, a, b)
            | Expr::And(a, b)
            | Expr::Or(a, b)
            | Expr::Concat(a, b, _, _) => walk(a, v) && walk(b, v),
            Expr::Mux(c, a, b, _) => walk(c, v) && walk(a, v) && walk(b, v),
        }
    }
    walk(e, &mut v).then_some(v)
}

fn overlaps(a: (u32, u32), b: (u32, u32)) -> bool {
    a.0 < b.1 && b.0 < a.1
}

/// How many places name each function: calls, table actions, `add_entry`s, blocks.
fn references(p: &Program) -> Vec<u32> {
    let mut refs = vec![0u32; p.functions.len()];
    let mut count = |f: FnId| {
        if let Some(r) = refs.get_mut(f as usize) {
            *r += 1;
        }
    };
    for b in &p.blocks {
        if let BlockBody::Control(f) = b.body {
            count(f);
        }
    }
    for t in &p.tables {
        for a in &t.actions {
            count(a.func);
        }
    }
    crate::visit::program(p, &mut |s| match s {
        Stmt::Call { func, .. } => count(*func),
        Stmt::Extern(x) => {
            if let XOp::AddEntry { func, .. } = x.op {
                count(func);
            }
        }
        _ => {}
    });
    refs
}

/// What [`for_each_call`] calls: a `Call` statement's function, copy-in and copy-out.
type CallVisit<'p, 'a> = dyn FnMut(FnId, &'p [Stmt], &'p [Stmt]) + 'a;

/// Calls `f` with every `Call` statement's function and copies.
fn for_each_call<'p>(p: &'p Program, f: &mut CallVisit<'p, '_>) {
    crate::visit::program(p, &mut |s| {
        if let Stmt::Call {
            func,
            copy_in,
            copy_out,
        } = s
        {
            f(*func, copy_in, copy_out);
        }
    });
}
