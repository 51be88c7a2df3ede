//! Lowering: a checked P4_16 program ([`p4_front::check::Checked`] plus its AST) to the IR.
//!
//! The program is elaborated from `main`: every parser and control instance (including those
//! applied directly, P4_16 §15.1, each call site being an instance) gets its own copy of its
//! locals, tables and extern instances; every callable (action, function, control body) gets
//! static frame slots for its parameters and locals (P4 forbids recursion, so one set per
//! instance suffices). Calls copy arguments in and out exactly as P4_16 §6.8 prescribes;
//! expressions with side effects (calls, table applies) are hoisted into statements in
//! evaluation order, keeping `&&`, `||` and `?:` short-circuiting.
//!
//! The architecture's blocks share their parameters where they have the same type (the
//! headers, the user metadata, `standard_metadata_t`, PNA's output metadata), so passing the
//! packet from block to block copies nothing.
//!
//! Lowering never panics; anything it cannot express is an error naming the construct.

mod call;
mod control_plane;
mod decl;
pub use decl::pack;
mod expr;
pub mod source;
mod stmt;

use crate::ir::*;
use p4_front::ast;
use p4_front::check::{AggKind, Checked, DeclId, Type, Value};
use p4_front::diag::Diagnostic;
use p4_front::source::Span;
use std::collections::HashMap;

/// Offsets at or above this are temporaries, relocated after the state region at the end
/// ([`relocate`]); every front end that builds a [`Program`] allocates them this way.
pub const TEMP_BASE: u32 = 1 << 30;
/// Largest frame accepted (words).
const MAX_FRAME_WORDS: u32 = 1 << 24;
/// Deepest nesting of instances / calls lowered.
const MAX_DEPTH: u32 = 64;

/// Lowers a compiled program.
pub fn lower(c: &p4_front::driver::Compiled) -> Result<Program, Diagnostic> {
    let mut lw = Lw::new(&c.program, &c.checked);
    lw.unit = Some(&c.unit);
    lw.run()?;
    Ok(lw.finish())
}

/// Lowers a parsed and checked program.
pub fn lower_program(ast: &ast::Program, ck: &Checked) -> Result<Program, Diagnostic> {
    let mut lw = Lw::new(ast, ck);
    lw.run()?;
    Ok(lw.finish())
}

/// An error of lowering: a message at a place in the source.
pub(crate) type LResult<T> = Result<T, Diagnostic>;

pub(crate) fn err_at<T>(span: Span, msg: impl Into<String>) -> LResult<T> {
    Err(Diagnostic::error(span, msg))
}

/// An AST node a declaration id stands for.
#[derive(Clone, Copy)]
pub(crate) enum Node<'a> {
    Decl(&'a ast::Decl),
}

/// What a name is bound to while lowering.
#[derive(Clone, Debug)]
pub(crate) enum Bind {
    /// A value in the frame.
    Var(Loc, Type),
    /// A compile-time value.
    Const(Value, Type),
    Extern(ExternId),
    Table(TableId),
    /// An instantiated control or parser.
    Block(u32),
    /// A control/parser given as a constructor argument but not yet instantiated.
    PendingBlock(DeclId, Vec<Bind>, String),
    ValueSet(ValueSetId),
    /// A `packet_in` / `packet_out` parameter.
    Packet,
}

/// An instantiated parser or control: what runs, and its parameter regions.
#[derive(Clone, Debug)]
pub(crate) struct BlockInst {
    pub decl: DeclId,
    pub body: BlockBody,
    /// One per apply parameter (`None` for packet_in / packet_out).
    pub params: Vec<Option<Loc>>,
    /// Scope index (into `Lw::inst_scopes`) holding the instance's bindings.
    pub scope: u32,
    /// The extern instances bound to apply parameters of extern type (parameter index,
    /// instance), fixed by the instance's first apply.
    pub externs: Vec<(usize, ExternId)>,
}

/// The function being lowered (for `return`).
#[derive(Clone, Debug, Default)]
pub(crate) struct FnCtx {
    /// Where `return e` stores its value.
    pub ret: Option<(Loc, Type)>,
    /// Type arguments of the generic function being lowered.
    pub subst: Vec<(DeclId, Type)>,
}

pub(crate) struct Lw<'a> {
    pub ast: &'a ast::Program,
    pub ck: &'a Checked,
    pub nodes: HashMap<DeclId, Node<'a>>,
    pub p: Program,
    pub state_words: u32,
    pub temp_words: u32,
    /// Scope stack: global at 0, then the instance being lowered, then callables.
    pub scopes: Vec<HashMap<DeclId, Bind>>,
    /// Saved scopes of instances (so actions of an instance can be lowered later).
    pub inst_scopes: Vec<HashMap<DeclId, Bind>>,
    pub insts: Vec<BlockInst>,
    /// Current instance (index into `insts`), for caching actions per instance.
    pub cur_inst: Option<u32>,
    /// Naming path of the current instance.
    pub path: String,
    pub fn_cache: HashMap<(Option<u32>, DeclId, String), FnId>,
    pub headers_by_key: HashMap<String, HeaderId>,
    pub fctx: FnCtx,
    pub depth: u32,
    /// Error member name → code.
    pub error_codes: HashMap<String, u64>,
    /// Nesting of loops being lowered.
    pub loop_depth: u32,
    /// Parameter slots of each lowered callable.
    pub sigs: HashMap<FnId, decl::FnSig>,
    /// Word offset of each field of each header layout (fields of struct type included).
    pub header_starts: HashMap<HeaderId, Vec<u32>>,
    /// Control-plane named types by name (index into `ControlPlane::types`).
    pub cp_types: HashMap<String, crate::control_plane::TypeId>,
    /// The order P4Info lists actions in (p4c's), as lowering meets them.
    pub cp_order: control_plane::ActionOrder,
    /// The preprocessed source, when known: extern calls carry their position
    /// (`ExternCall::what`, named by `nevermiss run --fallbacks`).
    pub unit: Option<&'a p4_front::source::Unit>,
}

impl<'a> Lw<'a> {
    fn new(ast: &'a ast::Program, ck: &'a Checked) -> Lw<'a> {
        let arch = match ck.arch {
            p4_front::check::Arch::V1Model => Arch::V1Model,
            p4_front::check::Arch::Psa => Arch::Psa,
            p4_front::check::Arch::Pna(p4_front::check::PnaDialect::V06FourBlock) => Arch::PnaV06,
            p4_front::check::Arch::Pna(p4_front::check::PnaDialect::V07ThreeBlock) => Arch::PnaV07,
            p4_front::check::Arch::Unknown => Arch::V1Model,
        };
        let mut lw = Lw {
            ast,
            ck,
            nodes: HashMap::new(),
            p: Program::empty(arch),
            state_words: 0,
            temp_words: 0,
            scopes: vec![HashMap::new()],
            inst_scopes: Vec::new(),
            insts: Vec::new(),
            cur_inst: None,
            path: String::new(),
            fn_cache: HashMap::new(),
            headers_by_key: HashMap::new(),
            fctx: FnCtx::default(),
            depth: 0,
            error_codes: HashMap::new(),
            loop_depth: 0,
            sigs: HashMap::new(),
            header_starts: HashMap::new(),
            cp_types: HashMap::new(),
            cp_order: Default::default(),
            unit: None,
        };
        for (i, n) in errors::NAMES.iter().enumerate() {
            lw.error_codes.insert(n.to_string(), i as u64);
        }
        lw.index_ast();
        lw
    }

    /// Maps declaration ids to their AST nodes, and numbers the error members.
    fn index_ast(&mut self) {
        let ast = self.ast;
        for d in &ast.decls {
            self.index_decl(d);
        }
    }

    fn index_decl(&mut self, d: &'a ast::Decl) {
        if let Some(id) = self.ck.decl_by_span.get(&d.span) {
            self.nodes.entry(*id).or_insert(Node::Decl(d));
        }
        match &d.kind {
            ast::DeclKind::Error(members) => {
                for m in members {
                    if !self.error_codes.contains_key(&m.name) {
                        self.error_codes
                            .insert(m.name.clone(), self.p.errors.len() as u64);
                        self.p.errors.push(m.name.clone());
                    }
                }
            }
            ast::DeclKind::Parser(p) => {
                for l in &p.locals {
                    self.index_decl(l);
                }
                for st in &p.states {
                    for s in &st.stmts {
                        self.index_stmt(s);
                    }
                }
            }
            ast::DeclKind::Control(c) => {
                for l in &c.locals {
                    self.index_decl(l);
                }
                self.index_block(&c.apply);
            }
            ast::DeclKind::Action(a) => self.index_block(&a.body),
            ast::DeclKind::Function(f) => self.index_block(&f.body),
            ast::DeclKind::Instantiation(i) => {
                if let Some(init) = &i.initializer {
                    for d in init {
                        self.index_decl(d);
                    }
                }
            }
            _ => {}
        }
    }

    fn index_block(&mut self, b: &'a ast::Block) {
        for s in &b.stmts {
            self.index_stmt(s);
        }
    }

    fn index_stmt(&mut self, s: &'a ast::Stmt) {
        match &s.kind {
            ast::StmtKind::Decl(d) => self.index_decl(d),
            ast::StmtKind::Block(b) => self.index_block(b),
            ast::StmtKind::If {
                then, otherwise, ..
            } => {
                self.index_stmt(then);
                if let Some(o) = otherwise {
                    self.index_stmt(o);
                }
            }
            ast::StmtKind::Switch { cases, .. } => {
                for c in cases {
                    if let Some(b) = &c.body {
                        self.index_block(b);
                    }
                }
            }
            ast::StmtKind::For {
                init, update, body, ..
            } => {
                for s in init.iter().chain(update) {
                    self.index_stmt(s);
                }
                self.index_stmt(body);
            }
            ast::StmtKind::ForIn { body, .. } => self.index_stmt(body),
            _ => {}
        }
    }

    fn finish(mut self) -> Program {
        let zero = self.state_words;
        self.p.zero_words = zero;
        self.p.frame_words = zero + self.temp_words;
        relocate(&mut self.p, zero);
        crate::elide::inout_copies(&mut self.p);
        self.p
    }

    // ------------------------------------------------------------------ allocation

    /// Allocates `words` words of per-packet state (zeroed for every packet).
    pub fn alloc_state(&mut self, words: u32, span: Span) -> LResult<u32> {
        let off = self.state_words;
        self.state_words = self.state_words.saturating_add(words);
        if self.state_words + self.temp_words > MAX_FRAME_WORDS {
            return err_at(span, "program needs too much per-packet state");
        }
        Ok(off)
    }

    /// Allocates `words` words of temporaries (not zeroed).
    pub fn alloc_temp(&mut self, words: u32, span: Span) -> LResult<u32> {
        let off = TEMP_BASE + self.temp_words;
        self.temp_words = self.temp_words.saturating_add(words.max(1));
        if self.state_words + self.temp_words > MAX_FRAME_WORDS {
            return err_at(span, "program needs too much per-packet state");
        }
        Ok(off)
    }

    // ------------------------------------------------------------------ scopes

    pub fn bind(&mut self, d: DeclId, b: Bind) {
        if let Some(s) = self.scopes.last_mut() {
            s.insert(d, b);
        }
    }

    pub fn lookup(&self, d: DeclId) -> Option<&Bind> {
        self.scopes.iter().rev().find_map(|s| s.get(&d))
    }

    pub fn decl(&self, d: DeclId) -> &'a p4_front::check::DeclInfo {
        self.ck.decl(d)
    }

    // ------------------------------------------------------------------ types

    /// The run-time scalar type of a checker type, if it is a scalar.
    pub fn scalar(&self, t: &Type) -> Option<Ty> {
        Some(match t {
            Type::Bit(w) => Ty::bits(*w),
            Type::Signed(w) => Ty::int(*w),
            Type::Bool => Ty::BOOL,
            Type::ErrorT | Type::MatchKind => Ty::CODE,
            Type::Enum(e) => match &e.underlying {
                Some(u) => return self.scalar(u),
                None => Ty::CODE,
            },
            Type::NewType(n) => return self.scalar(&n.underlying),
            Type::Var(d, _) => {
                let t = self.fctx.subst.iter().find(|(v, _)| v == d)?.1.clone();
                return self.scalar(&t);
            }
            _ => return None,
        })
    }

    /// The run-time layout of a checker type.
    pub fn layout(&mut self, t: &Type, span: Span) -> LResult<Layout> {
        if let Some(s) = self.scalar(t) {
            return Ok(Layout::Scalar(s));
        }
        Ok(match t {
            Type::Var(d, _) => {
                let Some(t2) = self
                    .fctx
                    .subst
                    .iter()
                    .find(|(v, _)| v == d)
                    .map(|x| x.1.clone())
                else {
                    return err_at(span, format!("unresolved type variable {t}"));
                };
                return self.layout(&t2, span);
            }
            Type::Varbit(w) => Layout::Varbit(*w),
            Type::Agg(a) => match a.kind {
                AggKind::Header => Layout::Header(self.header(t, span)?),
                AggKind::Struct => {
                    let mut fs = Vec::with_capacity(a.fields.len());
                    let mut off = 0u32;
                    for (n, ft) in &a.fields {
                        let l = self.layout(ft, span)?;
                        let w = l.words(&self.p.headers);
                        fs.push((n.clone(), off, l));
                        off = off.saturating_add(w);
                    }
                    Layout::Struct(fs)
                }
                AggKind::HeaderUnion => {
                    let mut ms = Vec::with_capacity(a.fields.len());
                    let mut off = 0u32;
                    for (n, ft) in &a.fields {
                        let h = self.header(ft, span)?;
                        ms.push((n.clone(), off, h));
                        off += self.p.headers[h as usize].words;
                    }
                    Layout::Union(ms)
                }
            },
            Type::Stack(e, n) => {
                let el = self.layout(e, span)?;
                let ew = el.words(&self.p.headers);
                Layout::Stack {
                    elem: Box::new(el),
                    size: *n,
                    elem_words: ew,
                }
            }
            Type::Tuple(ts) | Type::ListExpr(ts) => {
                let mut fs = Vec::with_capacity(ts.len());
                let mut off = 0u32;
                for (i, ft) in ts.iter().enumerate() {
                    let l = self.layout(ft, span)?;
                    let w = l.words(&self.p.headers);
                    fs.push((i.to_string(), off, l));
                    off = off.saturating_add(w);
                }
                Layout::Struct(fs)
            }
            Type::StructExpr(fs0) => {
                let mut fs = Vec::with_capacity(fs0.len());
                let mut off = 0u32;
                for (n, ft) in fs0 {
                    let l = self.layout(ft, span)?;
                    let w = l.words(&self.p.headers);
                    fs.push((n.clone(), off, l));
                    off = off.saturating_add(w);
                }
                Layout::Struct(fs)
            }
            Type::Void | Type::DontCare => Layout::Struct(Vec::new()),
            other => {
                return err_at(
                    span,
                    format!("values of type {other} are not supported here"),
                )
            }
        })
    }

    /// Words a value of type `t` takes.
    pub fn words(&mut self, t: &Type, span: Span) -> LResult<u32> {
        Ok(self.layout(t, span)?.words(&self.p.headers))
    }

    /// The header layout of a header type (interned).
    pub fn header(&mut self, t: &Type, span: Span) -> LResult<HeaderId> {
        let Type::Agg(a) = t else {
            return err_at(span, format!("expected a header type, found {t}"));
        };
        let key = format!("{}#{}", a.decl.0, t);
        if let Some(h) = self.headers_by_key.get(&key) {
            return Ok(*h);
        }
        let mut fields = Vec::with_capacity(a.fields.len());
        let mut off = 1u32;
        let mut bits = 0u64;
        let mut starts = Vec::with_capacity(a.fields.len());
        for (n, ft) in &a.fields {
            starts.push(off);
            match ft {
                Type::Varbit(w) => {
                    fields.push(FieldLayout {
                        name: n.clone(),
                        off,
                        ty: Ty::bits(*w),
                        varbit: Some(*w),
                    });
                    off += 1 + w.div_ceil(64).max(1);
                }
                _ => self.header_scalars(n, ft, &mut fields, &mut off, &mut bits, span)?,
            }
        }
        let id = self.p.headers.len() as HeaderId;
        self.p.headers.push(HeaderLayout {
            name: a.name.clone(),
            fields,
            words: off,
            fixed_bits: bits,
        });
        self.headers_by_key.insert(key, id);
        self.header_starts.insert(id, starts);
        Ok(id)
    }

    /// The scalars of a header field (a struct-typed field contributes its scalars in order).
    fn header_scalars(
        &mut self,
        n: &str,
        ft: &Type,
        fields: &mut Vec<FieldLayout>,
        off: &mut u32,
        bits: &mut u64,
        span: Span,
    ) -> LResult<()> {
        if let Some(s) = self.scalar(ft) {
            fields.push(FieldLayout {
                name: n.to_string(),
                off: *off,
                ty: s,
                varbit: None,
            });
            *off += s.words();
            *bits += u64::from(s.width);
            return Ok(());
        }
        match ft {
            Type::Agg(a) if a.kind == AggKind::Struct => {
                for (sn, st) in &a.fields {
                    self.header_scalars(&format!("{n}.{sn}"), st, fields, off, bits, span)?;
                }
                Ok(())
            }
            _ => err_at(span, format!("header field {n} has unsupported type {ft}")),
        }
    }

    /// Offset and type of field `i` of an aggregate type (struct, header, union, tuple).
    pub fn field_of(&mut self, t: &Type, i: usize, span: Span) -> LResult<(u32, Type)> {
        let fields: Vec<Type> = match t {
            Type::Agg(a) => a.fields.iter().map(|f| f.1.clone()).collect(),
            Type::Tuple(ts) | Type::ListExpr(ts) => ts.clone(),
            Type::StructExpr(fs) => fs.iter().map(|f| f.1.clone()).collect(),
            _ => return err_at(span, format!("{t} has no fields")),
        };
        let Some(ft) = fields.get(i).cloned() else {
            return err_at(span, format!("{t} has no field {i}"));
        };
        if let Type::Agg(a) = t {
            if a.kind == AggKind::Header {
                let h = self.header(t, span)?;
                let off = self
                    .header_starts
                    .get(&h)
                    .and_then(|v| v.get(i))
                    .copied()
                    .unwrap_or(1);
                return Ok((off, ft));
            }
        }
        let mut off = 0;
        for f in &fields[..i] {
            off += self.words(f, span)?;
        }
        Ok((off, ft))
    }

    /// Code of a non-serializable enum member / error member value.
    pub fn enum_code(&mut self, v: &Value) -> Option<u64> {
        match v {
            Value::Error(name) => Some(self.error_code(name)),
            Value::Enum { repr: Some(r), .. } => r.as_int().map(|i| {
                let (_, m) = i.to_u64_digits();
                let lo = m.first().copied().unwrap_or(0);
                if i.sign() == num_bigint::Sign::Minus {
                    lo.wrapping_neg()
                } else {
                    lo
                }
            }),
            Value::Enum {
                decl,
                member: Some(m),
                repr: None,
            } => {
                let t = &self.ck.decl(*decl).ty;
                let members = match t {
                    Type::Enum(e) => e.members.clone(),
                    _ => return None,
                };
                let name = match t {
                    Type::Enum(e) => e.name.clone(),
                    _ => String::new(),
                };
                if !self.p.enums.iter().any(|(n, _)| *n == name) {
                    self.p.enums.push((name, members.clone()));
                }
                members.iter().position(|x| x == m).map(|i| i as u64)
            }
            _ => None,
        }
    }

    /// The code of an error member (new members get the next code).
    pub fn error_code(&mut self, name: &str) -> u64 {
        if let Some(c) = self.error_codes.get(name) {
            return *c;
        }
        let c = self.p.errors.len() as u64;
        self.p.errors.push(name.to_string());
        self.error_codes.insert(name.to_string(), c);
        c
    }

    /// Enters one level of nesting (instances, calls); errors when too deep.
    pub fn enter(&mut self, span: Span) -> LResult<()> {
        if self.depth >= MAX_DEPTH {
            return err_at(span, "program nests instances or calls too deeply");
        }
        self.depth += 1;
        Ok(())
    }

    /// `file:line:col` of `span` in the source, or nothing when the source is not known.
    pub fn here(&self, span: Span) -> String {
        self.unit
            .map(|u| u.locate(span.lo).to_string())
            .unwrap_or_default()
    }

    pub fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// The `@name("...")` annotation's value, if any.
    pub fn name_annotation(anns: &ast::Annotations) -> Option<String> {
        for a in anns {
            if a.name.name == "name" {
                if let ast::AnnotationBody::Expressions(es) = &a.body {
                    if let Some(ast::ExprKind::String(s)) = es.first().map(|e| &e.kind) {
                        return Some(s.clone());
                    }
                }
                if let ast::AnnotationBody::Unparsed(s) = &a.body {
                    return Some(s.trim().trim_matches('"').to_string());
                }
            }
        }
        None
    }

    /// The control-plane name of a declaration `local` inside the current instance, honouring
    /// `@name` (absolute when it starts with `.`).
    pub fn cp_name(&self, local: &str, anns: &ast::Annotations) -> String {
        match Self::name_annotation(anns) {
            Some(n) if n.starts_with('.') => n.trim_start_matches('.').to_string(),
            Some(n) => self.qualify(&n),
            None => self.qualify(local),
        }
    }

    /// The path of a block instance named `local` here (`.name`: absolute, as `@name` allows).
    pub fn block_path(&self, local: &str) -> String {
        match local.strip_prefix('.') {
            Some(abs) => abs.to_string(),
            None => self.qualify(local),
        }
    }

    pub fn qualify(&self, local: &str) -> String {
        if self.path.is_empty() {
            local.to_string()
        } else {
            format!("{}.{local}", self.path)
        }
    }
}

/// Moves temporaries (offsets ≥ [`TEMP_BASE`]) to just after the state region, which ends at
/// `base` (every location, table key and slot, extern state and block region of the program).
pub fn relocate(p: &mut Program, base: u32) {
    crate::offsets::map_offsets(p, &mut |o: &mut u32| {
        if *o >= TEMP_BASE {
            *o = *o - TEMP_BASE + base;
        }
    });
}
