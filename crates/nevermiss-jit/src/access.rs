//! Which frame words a program can ever read, and which it can ever write (docs/jit.md, "clean
//! headers"): what lets the inline `extract` leave out the fields nothing reads.
//!
//! The walk is over the whole [`Program`] — every function, parser (states and `select` keys),
//! table (keys, selector keys, `key_pre`, the actions' copy-in/copy-out and parameter slots) — and
//! over what the runtime's architecture code touches itself (the glue's stores, the regions it
//! reads, sets and carries between passes). It does not depend on what generated code does itself
//! and what it leaves to the interpreter: a statement reads and writes the same words either way.
//! Where a location has run-time indices, every word it may address counts. Everything the
//! interpreter reads besides a statement's expressions counts too: the destination of a slice
//! assignment, the source of a copy (whole headers and structs: copy-in/copy-out included), an
//! extern's `out` and aggregate arguments and its instance's checksum state, a header stack's
//! words for `extract(next)` and push/pop.

use p4_ir::ir::*;

/// The words a program reads and writes, as half-open ranges of word offsets.
#[derive(Default)]
pub(crate) struct Access<'a> {
    pub reads: Vec<(u64, u64)>,
    pub writes: Vec<(u64, u64)>,
    /// `extract`s of a header at a fixed place (validity word, layout): kept apart from the
    /// writes, since the clean-header tracking knows what they write ([`crate::codegen`]).
    pub extracts: Vec<(u32, HeaderId)>,
    /// Every `emit`.
    pub emits: Vec<&'a HdrRef>,
}

/// The words location `l` may address for a value of `n` words: `[off, off + n)` for a fixed
/// location, else up to the last element every run-time index allows.
pub(crate) fn span(l: &Loc, n: u32) -> (u64, u64) {
    let extra: u64 = l
        .dyn_idx
        .iter()
        .map(|d| u64::from(d.stride) * u64::from(d.count.max(1) - 1))
        .sum();
    let start = u64::from(l.off);
    (start, start + extra + u64::from(n))
}

impl<'a> Access<'a> {
    /// The accesses of all of `prog`.
    pub(crate) fn of_program(prog: &'a Program) -> Access<'a> {
        let mut a = Access::default();
        for f in &prog.functions {
            a.stmts(prog, &f.body);
        }
        for p in &prog.parsers {
            a.stmts(prog, &p.init);
            for st in &p.states {
                a.stmts(prog, &st.body);
                if let Transition::Select { keys, .. } = &st.next {
                    for k in keys {
                        a.expr(k);
                    }
                }
            }
        }
        for t in &prog.tables {
            a.table(prog, t);
        }
        a
    }

    fn read(&mut self, l: &'a Loc, n: u32) {
        self.index(l);
        self.reads.push(span(l, n));
    }

    fn write(&mut self, l: &'a Loc, n: u32) {
        self.index(l);
        self.writes.push(span(l, n));
    }

    /// Read and written: in-out locations.
    fn both(&mut self, l: &'a Loc, n: u32) {
        self.read(l, n);
        self.write(l, n);
    }

    fn index(&mut self, l: &'a Loc) {
        for d in &l.dyn_idx {
            self.expr(&d.index);
        }
    }

    fn expr(&mut self, e: &'a Expr) {
        match e {
            Expr::Const(..) | Expr::Big(..) => {}
            Expr::Load(o, t) => {
                let o = u64::from(*o);
                self.reads.push((o, o + u64::from(t.words())));
            }
            Expr::LoadDyn(l, t) => self.read(l, t.words()),
            Expr::Un(_, _, a) | Expr::Cast(_, _, a) | Expr::Slice(a, ..) => self.expr(a),
            Expr::Bin(_, _, a, b)
            | Expr::Cmp(_, _, a, b)
            | Expr::And(a, b)
            | Expr::Or(a, b)
            | Expr::Concat(a, b, ..) => {
                self.expr(a);
                self.expr(b);
            }
            Expr::Mux(c, a, b, _) => {
                self.expr(c);
                self.expr(a);
                self.expr(b);
            }
        }
    }

    fn table(&mut self, prog: &'a Program, t: &'a Table) {
        self.stmts(prog, &t.key_pre);
        for k in &t.keys {
            self.expr(&k.expr);
        }
        for a in &t.actions {
            self.stmts(prog, &a.copy_in);
            self.stmts(prog, &a.copy_out);
            // Set by the lookup, read back by the `@__ref` write-back.
            for p in &a.params {
                let o = u64::from(p.slot);
                self.reads.push((o, o + u64::from(p.ty.words())));
                self.writes.push((o, o + u64::from(p.ty.words())));
            }
        }
    }

    fn stmts(&mut self, prog: &'a Program, ss: &'a [Stmt]) {
        for s in ss {
            self.stmt(prog, s);
        }
    }

    fn stmt(&mut self, prog: &'a Program, s: &'a Stmt) {
        let words = |h: HeaderId| prog.headers.get(h as usize).map_or(1, |hl| hl.words);
        match s {
            Stmt::Assign(l, t, e) => {
                self.expr(e);
                self.write(l, t.words());
            }
            Stmt::AssignSlice(l, t, _, _, e) => {
                self.expr(e);
                self.both(l, t.words());
            }
            Stmt::Copy { dst, src, words } => {
                self.read(src, *words);
                self.write(dst, *words);
            }
            Stmt::Zero { dst, words } => self.write(dst, *words),
            Stmt::SetValid { hdr, others, .. } => {
                self.write(hdr, 1);
                let (lo, hi) = span(hdr, 1);
                for o in others {
                    let d = i64::from(*o);
                    let lo = (lo as i64 + d).max(0) as u64;
                    let hi = (hi as i64 + d).max(0) as u64;
                    self.writes.push((lo, hi));
                }
            }
            Stmt::If(c, a, b) => {
                self.expr(c);
                self.stmts(prog, a);
                self.stmts(prog, b);
            }
            Stmt::Switch { sel, bodies, .. } => {
                self.expr(sel);
                for b in bodies {
                    self.stmts(prog, b);
                }
            }
            Stmt::Loop { cond, body, update } => {
                self.expr(cond);
                self.stmts(prog, body);
                self.stmts(prog, update);
            }
            Stmt::Call {
                copy_in, copy_out, ..
            }
            | Stmt::CallParser {
                copy_in, copy_out, ..
            } => {
                self.stmts(prog, copy_in);
                self.stmts(prog, copy_out);
            }
            Stmt::ApplyTable {
                table,
                hit,
                action_run,
            } => {
                for o in [hit, action_run].into_iter().flatten() {
                    let o = u64::from(*o);
                    self.writes.push((o, o + 1));
                }
                if let Some(t) = prog.tables.get(*table as usize) {
                    self.table(prog, t);
                }
            }
            Stmt::Extern(x) => self.extern_call(prog, x),
            Stmt::Extract { hdr, varbit_bits } => {
                if let Some(e) = varbit_bits {
                    self.expr(e);
                }
                match hdr.loc.fixed() {
                    Some(o) => self.extracts.push((o, hdr.layout)),
                    None => self.write(&hdr.loc, words(hdr.layout)),
                }
            }
            Stmt::ExtractNext {
                stack, varbit_bits, ..
            } => {
                if let Some(e) = varbit_bits {
                    self.expr(e);
                }
                self.both(&stack.loc, 1 + stack.size * stack.elem_words);
            }
            Stmt::Lookahead { dst, layout } => self.write(dst, layout.words(&prog.headers)),
            Stmt::Advance(e) => self.expr(e),
            Stmt::Verify(c, e) => {
                self.expr(c);
                self.expr(e);
            }
            Stmt::Emit(h) => {
                self.index(&h.loc);
                self.emits.push(h);
            }
            Stmt::Shift { stack, .. } => self.both(&stack.loc, 1 + stack.size * stack.elem_words),
            Stmt::Break | Stmt::Continue | Stmt::Return | Stmt::Exit => {}
        }
    }

    /// What serializing a data item reads.
    fn datum(&mut self, d: &'a Datum) {
        match d {
            Datum::Bits(e) => self.expr(e),
            Datum::Varbit(l, max) => self.read(l, 1 + max.div_ceil(64).max(1)),
            Datum::IfValid(l, d) => {
                self.read(l, 1);
                self.datum(d);
            }
        }
    }

    fn extern_call(&mut self, prog: &'a Program, x: &'a ExternCall) {
        for a in &x.args {
            match a {
                XArg::Val(e) => self.expr(e),
                XArg::Out(l, t) => self.both(l, t.words()),
                XArg::Data(items) => {
                    for d in items {
                        self.datum(d);
                    }
                }
                XArg::Agg(l, layout) => self.both(l, layout.words(&prog.headers)),
                XArg::Str(_) | XArg::None => {}
            }
        }
        if let Some((l, t)) = &x.ret {
            self.write(l, t.words());
        }
        // The instance's state in the frame.
        let state = match x.inst.and_then(|i| prog.externs.get(i as usize)) {
            Some(ExternInst {
                kind: ExternKind::Checksum { state, .. },
                ..
            }) => Some((*state, 2)),
            Some(ExternInst {
                kind: ExternKind::InternetChecksum { state },
                ..
            }) => Some((*state, 1)),
            _ => None,
        };
        if let Some((o, n)) = state {
            let o = u64::from(o);
            self.reads.push((o, o + n));
            self.writes.push((o, o + n));
        }
    }
}

/// Reads counted per frame word.
type Counts = std::collections::HashMap<u32, u32>;

/// Adds `reads` (word ranges) to `into`, for the words below `n`.
fn count(reads: &[(u64, u64)], n: usize, into: &mut Counts) {
    for &(lo, hi) in reads {
        for w in lo..hi.min(n as u64) {
            *into.entry(w as u32).or_default() += 1;
        }
    }
}

/// Who calls and applies what: each function's call sites (copy-in, copy-out), the functions
/// each function calls and the tables it applies, and the functions entered without a copy-in
/// (architecture blocks, table actions, `add_entry`'s actions).
struct CallGraph<'p> {
    sites: Vec<Vec<(&'p [Stmt], &'p [Stmt])>>,
    calls: Vec<Vec<FnId>>,
    applies: Vec<Vec<TableId>>,
    entered: Vec<bool>,
}

impl<'p> CallGraph<'p> {
    fn of(prog: &'p Program) -> CallGraph<'p> {
        let nf = prog.functions.len();
        let mut g = CallGraph {
            sites: vec![Vec::new(); nf],
            calls: vec![Vec::new(); nf],
            applies: vec![Vec::new(); nf],
            entered: vec![false; nf],
        };
        for b in &prog.blocks {
            if let BlockBody::Control(f) = b.body {
                g.enter(f);
            }
        }
        for (i, f) in prog.functions.iter().enumerate() {
            g.walk(&f.body, Some(i));
        }
        for p in &prog.parsers {
            g.walk(&p.init, None);
            for st in &p.states {
                g.walk(&st.body, None);
            }
        }
        for t in &prog.tables {
            g.walk(&t.key_pre, None);
            for a in &t.actions {
                g.enter(a.func);
                g.walk(&a.copy_in, None);
                g.walk(&a.copy_out, None);
            }
        }
        g
    }

    fn enter(&mut self, f: FnId) {
        if let Some(e) = self.entered.get_mut(f as usize) {
            *e = true;
        }
    }

    /// Records the calls, applies and `add_entry`s of `ss` (nested ones included), run by
    /// function `me`.
    fn walk(&mut self, ss: &'p [Stmt], me: Option<usize>) {
        p4_ir::visit::nested(ss, &mut |s| match s {
            Stmt::Call {
                func,
                copy_in,
                copy_out,
            } => {
                if let Some(v) = self.sites.get_mut(*func as usize) {
                    v.push((copy_in, copy_out));
                }
                if let Some(m) = me {
                    self.calls[m].push(*func);
                }
            }
            Stmt::ApplyTable { table, .. } => {
                if let Some(m) = me {
                    self.applies[m].push(*table);
                }
            }
            Stmt::Extern(x) => {
                if let XOp::AddEntry { func, .. } = x.op {
                    self.enter(func);
                }
            }
            _ => {}
        });
    }

    /// The words every call site of `f` writes whole in its copy-in (fixed destinations);
    /// none for a function entered otherwise or never called.
    fn copied_in(&self, f: usize) -> std::collections::BTreeSet<u32> {
        let mut common: Option<std::collections::BTreeSet<u32>> = None;
        if self.entered[f] {
            return Default::default();
        }
        for (copy_in, _) in &self.sites[f] {
            let mut w = std::collections::BTreeSet::new();
            for s in copy_in.iter() {
                let (dst, words) = match s {
                    Stmt::Copy { dst, words, .. } => (dst, *words),
                    Stmt::Assign(dst, t, _) => (dst, t.words()),
                    _ => continue,
                };
                if let Some(o) = dst.fixed() {
                    w.extend(o..o + words);
                }
            }
            common = Some(match common {
                None => w,
                Some(c) => c.intersection(&w).copied().collect(),
            });
        }
        common.unwrap_or_default()
    }
}

/// Frame words a packet's start need not zero although something reads them: the parameter
/// words of a function that every one of its call sites writes whole before the call (`inout`
/// and `in` arguments' copy-in), when every read of them is within that function's reach (its
/// body, the functions it calls, the tables it applies with their keys and actions) or in the
/// call sites' copy-out. Every read of such a word follows a copy-in of the same call, so its
/// value at the packet's start is never seen. Words in `arch` (which the runtime reads) and
/// functions entered otherwise (an architecture block, a table's action, `add_entry`) are left
/// out.
pub(crate) fn written_before_read(prog: &Program, arch: &[(u32, u32)]) -> Vec<bool> {
    let n = prog.frame_words as usize;
    let mut skip = vec![false; n];
    let graph = CallGraph::of(prog);
    let reads = Reads::of(prog);
    let in_arch = |w: u32| arch.iter().any(|&(o, l)| w >= o && w < o + l);
    for f in 0..prog.functions.len() {
        let words = graph.copied_in(f);
        if words.is_empty() {
            continue;
        }
        let inside = reads.within(prog, &graph, f);
        for w in words {
            if (w as usize) < n
                && !in_arch(w)
                && reads.total.get(&w).copied().unwrap_or(0) == inside.get(&w).copied().unwrap_or(0)
            {
                skip[w as usize] = true;
            }
        }
    }
    skip
}

/// A program's reads: per function, per table, and in all (per word).
struct Reads {
    functions: Vec<Vec<(u64, u64)>>,
    tables: Vec<Vec<(u64, u64)>>,
    total: Counts,
    n: usize,
}

impl Reads {
    fn of(prog: &Program) -> Reads {
        let n = prog.frame_words as usize;
        let functions = prog
            .functions
            .iter()
            .map(|f| {
                let mut a = Access::default();
                a.stmts(prog, &f.body);
                a.reads
            })
            .collect();
        let tables = prog
            .tables
            .iter()
            .map(|t| {
                let mut a = Access::default();
                a.table(prog, t);
                a.reads
            })
            .collect();
        let mut total = Counts::new();
        count(&Access::of_program(prog).reads, n, &mut total);
        Reads {
            functions,
            tables,
            total,
            n,
        }
    }

    /// The reads within `f`'s reach (see [`written_before_read`]) and in its call sites'
    /// copy-outs, per word.
    fn within(&self, prog: &Program, graph: &CallGraph, f: usize) -> Counts {
        let nf = prog.functions.len();
        let (mut seen_f, mut seen_t) = (vec![false; nf], vec![false; prog.tables.len()]);
        let mut stack = vec![f];
        let mut inside = Counts::new();
        while let Some(g) = stack.pop() {
            if std::mem::replace(&mut seen_f[g], true) {
                continue;
            }
            count(&self.functions[g], self.n, &mut inside);
            stack.extend(
                graph.calls[g]
                    .iter()
                    .map(|&c| c as usize)
                    .filter(|&c| c < nf),
            );
            for &t in &graph.applies[g] {
                let Some(td) = prog.tables.get(t as usize) else {
                    continue;
                };
                if std::mem::replace(&mut seen_t[t as usize], true) {
                    continue;
                }
                count(&self.tables[t as usize], self.n, &mut inside);
                stack.extend(
                    td.actions
                        .iter()
                        .map(|a| a.func as usize)
                        .filter(|&c| c < nf),
                );
            }
        }
        for (_, copy_out) in &graph.sites[f] {
            let mut a = Access::default();
            a.stmts(prog, copy_out);
            count(&a.reads, self.n, &mut inside);
        }
        inside
    }
}
