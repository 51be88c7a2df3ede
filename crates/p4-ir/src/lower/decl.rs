//! Elaboration: `main`, parser and control instances, their locals, tables, extern instances,
//! parser states, and the callables (actions and functions) with their parameter slots.

use super::expr::{big_of, val_of};
use super::{err_at, Bind, BlockInst, FnCtx, LResult, Lw, Node};
use crate::ir::*;
use p4_front::ast::{self, DeclKind, Direction, ExprKind};
use p4_front::check::{CallArg, CallTarget, DeclId, EntityKind, ObjType, ParamInfo, Type, Value};
use p4_front::source::Span;
use std::collections::HashMap;

/// Parameter slots of a lowered callable.
#[derive(Clone, Debug)]
pub(crate) struct FnSig {
    pub params: Vec<(Loc, Type, Direction)>,
    pub ret: Option<(Loc, Type)>,
}

impl<'a> Lw<'a> {
    pub(super) fn run(&mut self) -> LResult<()> {
        let ck = self.ck;
        let Some(main) = ck.main else {
            return Err(p4_front::diag::Diagnostic::error_global(
                p4_front::driver::NO_MAIN,
            ));
        };
        self.cp_program();
        // Top-level extern instances (and named parser/control instances used by main).
        for d in &self.ast.decls {
            if let DeclKind::Instantiation(_) = &d.kind {
                let Some(id) = ck.decl_by_span.get(&d.span).copied() else {
                    continue;
                };
                if id == main {
                    continue;
                }
                let mut init = Vec::new();
                self.local_decl(d, &mut init)?;
            }
        }
        let Some(Node::Decl(md)) = self.nodes.get(&main).copied() else {
            return err_at(Span::new(0, 0), "main: declaration not found");
        };
        let DeclKind::Instantiation(mi) = &md.kind else {
            return err_at(md.span, "main: not an instantiation");
        };
        let Some(info) = ck.instances.get(&main) else {
            return err_at(md.span, "main: unresolved instantiation");
        };
        let Type::Package(pkg) = &info.ty else {
            return err_at(md.span, "main: not a package");
        };
        let mut blocks: Vec<(String, DeclId, Vec<Bind>, Span)> = Vec::new();
        let params = ck.decl(pkg.decl).ctor_params.clone();
        self.collect_main(&params, &info.args, &mi.args, "", &mut blocks, 0)?;
        // Parameter regions shared between blocks by type.
        let mut shared: HashMap<String, Vec<Loc>> = HashMap::new();
        for (bi, (role, decl, ctor, span)) in blocks.into_iter().enumerate() {
            self.cp_order.block = bi as u32;
            let dinfo = ck.decl(decl);
            let mut seen: HashMap<String, usize> = HashMap::new();
            let mut fixed = Vec::with_capacity(dinfo.params.len());
            for p in &dinfo.params {
                if is_packet_type(&p.ty) {
                    fixed.push(None);
                    continue;
                }
                let key = format!("{}", p.ty);
                let k = seen.entry(key.clone()).or_insert(0);
                let regions = shared.entry(key).or_default();
                if *k >= regions.len() {
                    let w = self.words(&p.ty, p.span)?;
                    regions.push(Loc::at(self.alloc_state(w, p.span)?));
                }
                fixed.push(Some(regions[*k].clone()));
                *k += 1;
            }
            let name = dinfo.name.clone();
            let inst = self.instantiate(decl, ctor, name.clone(), Some(fixed), &[], span)?;
            let bi = self.insts[inst as usize].clone();
            let mut bparams = Vec::new();
            for (p, r) in dinfo.params.iter().zip(&bi.params) {
                let layout = match r {
                    Some(_) => Some(self.layout(&p.ty, p.span)?),
                    None => None,
                };
                bparams.push(BlockParam {
                    name: p.name.clone(),
                    type_name: type_name(&p.ty),
                    region: r.as_ref().map(|l| l.off),
                    layout,
                });
            }
            self.p.blocks.push(Block {
                role,
                name,
                body: bi.body,
                params: bparams,
            });
        }
        self.cp_no_action()?;
        self.p.control_plane.actions = self.cp_order.order(&self.p.functions);
        Ok(())
    }

    /// The blocks given to the main package (nested packages flattened as `outer.inner`).
    fn collect_main(
        &mut self,
        params: &[ParamInfo],
        map: &[CallArg],
        args: &'a [ast::Arg],
        prefix: &str,
        out: &mut Vec<(String, DeclId, Vec<Bind>, Span)>,
        depth: u32,
    ) -> LResult<()> {
        if depth > 8 {
            return err_at(Span::new(0, 0), "main: packages nested too deeply");
        }
        for (p, ca) in params.iter().zip(map) {
            let CallArg::Arg(i) = ca else { continue };
            let Some(arg) = args.get(*i) else { continue };
            let e = &arg.value;
            let role = format!("{prefix}{}", p.name);
            match &e.kind {
                ExprKind::Call { args: inner, .. } => {
                    let Some(ci) = self.ck.calls.get(&e.id) else {
                        return err_at(e.span, "unresolved block instantiation");
                    };
                    let CallTarget::Instantiate(d) = ci.target else {
                        // An extern given to the package (e.g. PSA's PacketReplicationEngine).
                        continue;
                    };
                    match self.decl(d).kind {
                        EntityKind::Parser | EntityKind::Control => {
                            let dparams = self.decl(d).ctor_params.clone();
                            let ctor = self.ctor_args(&dparams, &ci.args.clone(), inner)?;
                            out.push((role, d, ctor, e.span));
                        }
                        EntityKind::PackageType => {
                            let ps = self.decl(d).ctor_params.clone();
                            let m = ci.args.clone();
                            self.collect_main(&ps, &m, inner, &format!("{role}."), out, depth + 1)?;
                        }
                        _ => return err_at(e.span, "expected a parser, control or package"),
                    }
                }
                ExprKind::Path(_) => {
                    let d = self.ck.resolved.get(&e.id).copied();
                    // A package instance declared at the top level.
                    if let Some(d) = d {
                        if let (Some(Node::Decl(pd)), Some(info)) =
                            (self.nodes.get(&d).copied(), self.ck.instances.get(&d))
                        {
                            if let (DeclKind::Instantiation(pi), Type::Package(pk)) =
                                (&pd.kind, &info.ty)
                            {
                                let ps = self.decl(pk.decl).ctor_params.clone();
                                let m = info.args.clone();
                                self.collect_main(
                                    &ps,
                                    &m,
                                    &pi.args,
                                    &format!("{role}."),
                                    out,
                                    depth + 1,
                                )?;
                                continue;
                            }
                        }
                    }
                    match d.and_then(|d| self.lookup(d).cloned()) {
                        Some(Bind::PendingBlock(decl, ctor, _)) => {
                            out.push((role, decl, ctor, e.span))
                        }
                        _ => return err_at(e.span, "expected a parser or control instance"),
                    }
                }
                _ => return err_at(e.span, "expected a parser or control instance"),
            }
        }
        Ok(())
    }

    /// Bindings for constructor parameters from the arguments of an instantiation.
    pub fn ctor_args(
        &mut self,
        params: &[ParamInfo],
        map: &[CallArg],
        args: &[ast::Arg],
    ) -> LResult<Vec<Bind>> {
        let mut out = Vec::with_capacity(params.len());
        for (i, p) in params.iter().enumerate() {
            let b = match map.get(i) {
                Some(CallArg::Arg(j)) => match args.get(*j) {
                    Some(a) => self.ctor_arg(p, &a.value)?,
                    None => Bind::Const(Value::Int(0.into()), p.ty.clone()),
                },
                Some(CallArg::Default(_)) => match &p.default {
                    Some(v) => Bind::Const(v.clone(), p.ty.clone()),
                    None => Bind::Const(Value::Int(0.into()), p.ty.clone()),
                },
                _ => Bind::Const(Value::Int(0.into()), p.ty.clone()),
            };
            out.push(b);
        }
        Ok(out)
    }

    fn ctor_arg(&mut self, p: &ParamInfo, e: &ast::Expr) -> LResult<Bind> {
        if let Some(v) = self.ck.value_of(e.id) {
            return Ok(Bind::Const(v.clone(), p.ty.clone()));
        }
        match &e.kind {
            ExprKind::Call { args, .. } => {
                let Some(ci) = self.ck.calls.get(&e.id).cloned() else {
                    return err_at(e.span, "unresolved constructor argument");
                };
                match ci.target {
                    CallTarget::Instantiate(d) => {
                        let dparams = self.decl(d).ctor_params.clone();
                        let ctor = self.ctor_args(&dparams, &ci.args, args)?;
                        Ok(Bind::PendingBlock(d, ctor, p.name.clone()))
                    }
                    CallTarget::ExternCtor(c) => {
                        let t = self.ty_of(e);
                        let Type::Extern(o) = &t else {
                            return err_at(e.span, "expected an extern instance");
                        };
                        let cparams = self.decl(c).params.clone();
                        let vals = self.ctor_values(&cparams, &ci.args, args)?;
                        let name = self.qualify(&p.name);
                        let id = self.make_extern(
                            o,
                            &vals,
                            name,
                            ExternSite::Argument,
                            Vec::new(),
                            e.span,
                        )?;
                        Ok(Bind::Extern(id))
                    }
                    _ => err_at(e.span, "unsupported constructor argument"),
                }
            }
            ExprKind::Path(_) => {
                let d = self.ck.resolved.get(&e.id).copied();
                match d.and_then(|d| self.lookup(d).cloned()) {
                    Some(b) => Ok(b),
                    None => err_at(e.span, "unsupported constructor argument"),
                }
            }
            _ => err_at(
                e.span,
                "constructor argument must be a compile-time constant",
            ),
        }
    }

    /// Compile-time values of an extern constructor's arguments, by parameter name.
    fn ctor_values(
        &mut self,
        params: &[ParamInfo],
        map: &[CallArg],
        args: &[ast::Arg],
    ) -> LResult<Vec<(String, Option<Value>)>> {
        let mut out = Vec::with_capacity(params.len());
        for (i, p) in params.iter().enumerate() {
            let v = match map.get(i) {
                Some(CallArg::Arg(j)) => match args.get(*j) {
                    Some(a) => match self.ck.value_of(a.value.id) {
                        Some(v) => Some(v.clone()),
                        None => match &a.value.kind {
                            ExprKind::Path(_) => self.ck.resolved.get(&a.value.id).and_then(|d| {
                                match self.lookup(*d) {
                                    Some(Bind::Const(v, _)) => Some(v.clone()),
                                    _ => self.decl(*d).value.clone(),
                                }
                            }),
                            _ => None,
                        },
                    },
                    None => None,
                },
                Some(CallArg::Default(_)) => p.default.clone(),
                _ => None,
            };
            out.push((p.name.clone(), v));
        }
        Ok(out)
    }

    /// Instantiates a parser or control declaration; `externs` binds its apply parameters of
    /// extern type (parameter index, instance).
    pub fn instantiate(
        &mut self,
        decl: DeclId,
        ctor: Vec<Bind>,
        path: String,
        fixed: Option<Vec<Option<Loc>>>,
        externs: &[(usize, ExternId)],
        span: Span,
    ) -> LResult<u32> {
        self.enter(span)?;
        let r = self.instantiate_inner(decl, ctor, path, fixed, externs, span);
        self.leave();
        r
    }

    fn instantiate_inner(
        &mut self,
        decl: DeclId,
        ctor: Vec<Bind>,
        path: String,
        fixed: Option<Vec<Option<Loc>>>,
        externs: &[(usize, ExternId)],
        span: Span,
    ) -> LResult<u32> {
        let info = self.decl(decl);
        let Some(Node::Decl(d)) = self.nodes.get(&decl).copied() else {
            return err_at(span, format!("{}: declaration not found", info.name));
        };
        let saved_path = std::mem::replace(&mut self.path, path);
        let saved_inst = self.cur_inst;
        let saved_fctx = std::mem::take(&mut self.fctx);
        let saved_loop = std::mem::replace(&mut self.loop_depth, 0);
        self.scopes.push(HashMap::new());
        let r = self.instance_body(decl, d, ctor, fixed, externs, span);
        let scope = self.scopes.pop().unwrap_or_default();
        self.path = saved_path;
        self.cur_inst = saved_inst;
        self.fctx = saved_fctx;
        self.loop_depth = saved_loop;
        let idx = r?;
        self.inst_scopes.push(scope);
        self.insts[idx as usize].scope = self.inst_scopes.len() as u32 - 1;
        Ok(idx)
    }

    fn instance_body(
        &mut self,
        decl: DeclId,
        d: &'a ast::Decl,
        ctor: Vec<Bind>,
        fixed: Option<Vec<Option<Loc>>>,
        externs: &[(usize, ExternId)],
        span: Span,
    ) -> LResult<u32> {
        let info = self.decl(decl);
        // Constructor parameters; blocks given as arguments are instantiated now, except those
        // with extern apply parameters: they wait for their first apply.
        for (p, b) in info.ctor_params.iter().zip(ctor) {
            let b = match b {
                Bind::PendingBlock(bd, bc, name) if !self.has_extern_params(bd) => {
                    let path = self.block_path(&name);
                    Bind::Block(self.instantiate(bd, bc, path, None, &[], span)?)
                }
                other => other,
            };
            self.bind(p.decl, b);
        }
        let mut regions = Vec::with_capacity(info.params.len());
        for (i, p) in info.params.iter().enumerate() {
            if is_packet_type(&p.ty) {
                self.bind(p.decl, Bind::Packet);
                regions.push(None);
                continue;
            }
            if matches!(p.ty, Type::Extern(_)) {
                // An extern passed by the caller (P4_16 §7.2.12: parsers and controls may take
                // extern instances as apply parameters): calls go to the caller's instance.
                let Some((_, x)) = externs.iter().find(|(j, _)| *j == i) else {
                    return err_at(
                        p.span,
                        format!(
                            "{}: an extern parameter needs an extern instance as its argument",
                            p.name
                        ),
                    );
                };
                self.bind(p.decl, Bind::Extern(*x));
                regions.push(None);
                continue;
            }
            let loc = match fixed.as_ref().and_then(|f| f.get(i).cloned().flatten()) {
                Some(l) => l,
                None => {
                    let w = self.words(&p.ty, p.span)?;
                    Loc::at(self.alloc_state(w, p.span)?)
                }
            };
            self.bind(p.decl, Bind::Var(loc.clone(), p.ty.clone()));
            regions.push(Some(loc));
        }
        let idx = self.insts.len() as u32;
        let is_parser = matches!(d.kind, DeclKind::Parser(_));
        let body = if is_parser {
            let pid = self.p.parsers.len() as ParserId;
            self.p.parsers.push(Parser {
                name: self.path.clone(),
                init: Vec::new(),
                states: Vec::new(),
                start: 0,
            });
            BlockBody::Parser(pid)
        } else {
            let fid = self.p.functions.len() as FnId;
            self.p.functions.push(Function {
                name: self.path.clone(),
                kind: FnKind::Control,
                body: Vec::new(),
                annotations: Vec::new(),
                params: Vec::new(),
                top_level: false,
            });
            BlockBody::Control(fid)
        };
        self.insts.push(BlockInst {
            decl,
            body,
            params: regions,
            scope: 0,
            externs: externs.to_vec(),
        });
        self.cur_inst = Some(idx);
        match (&d.kind, body) {
            (DeclKind::Parser(p), BlockBody::Parser(pid)) => {
                let mut init = Vec::new();
                for l in &p.locals {
                    self.local_decl(l, &mut init)?;
                }
                self.parser_states(p, pid, init)?;
            }
            (DeclKind::Control(c), BlockBody::Control(fid)) => {
                let mut body = Vec::new();
                for l in &c.locals {
                    self.local_decl(l, &mut body)?;
                }
                self.block(&c.apply, &mut body)?;
                self.p.functions[fid as usize].body = body;
            }
            _ => return err_at(span, "expected a parser or control declaration"),
        }
        Ok(idx)
    }

    /// A local declaration of a parser/control (or a top-level instance): binds it and appends
    /// its initialization to `init`.
    pub fn local_decl(&mut self, d: &ast::Decl, init: &mut Vec<Stmt>) -> LResult<()> {
        let Some(id) = self.ck.decl_by_span.get(&d.span).copied() else {
            return Ok(());
        };
        self.cp_order.declared(self.cur_inst, id);
        match &d.kind {
            DeclKind::Const(c) => {
                let t = self.decl(id).ty.clone();
                match self.decl(id).value.clone() {
                    Some(v) => self.bind(id, Bind::Const(v, t)),
                    None => {
                        let w = self.words(&t, d.span)?;
                        let loc = Loc::at(self.alloc_state(w, d.span)?);
                        let rv = self.expr(&c.value, init)?;
                        self.assign(&loc, &t, rv, init, d.span)?;
                        self.bind(id, Bind::Var(loc, t));
                    }
                }
            }
            DeclKind::Variable(v) => {
                let t = self.decl(id).ty.clone();
                let w = self.words(&t, d.span)?;
                let loc = Loc::at(self.alloc_state(w, d.span)?);
                self.bind(id, Bind::Var(loc.clone(), t.clone()));
                if let Some(e) = &v.init {
                    let rv = self.expr(e, init)?;
                    self.assign(&loc, &t, rv, init, d.span)?;
                }
            }
            DeclKind::Instantiation(inst) => {
                let Some(info) = self.ck.instances.get(&id) else {
                    return err_at(
                        d.span,
                        format!("{}: unresolved instantiation", inst.name.name),
                    );
                };
                let ty = info.ty.clone();
                let map = info.args.clone();
                let ctor = info.ctor;
                match &ty {
                    Type::Extern(o) => {
                        let params = match ctor {
                            Some(c) => self.decl(c).params.clone(),
                            None => Vec::new(),
                        };
                        let vals = self.ctor_values(&params, &map, &inst.args)?;
                        let name = self.cp_name(&inst.name.name, &inst.annotations);
                        let anns = self.cp_annotations(&inst.annotations);
                        let x =
                            self.make_extern(o, &vals, name, ExternSite::Declared, anns, d.span)?;
                        self.bind(id, Bind::Extern(x));
                    }
                    Type::Control(o) | Type::Parser(o) => {
                        let dparams = self.decl(o.decl).ctor_params.clone();
                        let cargs = self.ctor_args(&dparams, &map, &inst.args)?;
                        if (self.cur_inst.is_none() && self.path.is_empty())
                            || self.has_extern_params(o.decl)
                        {
                            // Top level: instantiated when `main` uses it. With extern apply
                            // parameters: instantiated by its first apply, which names them.
                            let local = Self::name_annotation(&inst.annotations)
                                .unwrap_or_else(|| inst.name.name.clone());
                            self.bind(id, Bind::PendingBlock(o.decl, cargs, local));
                        } else {
                            // An instance's `@name` names the tables and externs inside it
                            // (`@name("c") compute() c_0;` → `ingress.c.t`, as p4c names them).
                            let local = Self::name_annotation(&inst.annotations)
                                .unwrap_or_else(|| inst.name.name.clone());
                            let path = self.block_path(&local);
                            let b = self.instantiate(o.decl, cargs, path, None, &[], d.span)?;
                            self.bind(id, Bind::Block(b));
                        }
                    }
                    Type::Package(_) => {}
                    other => {
                        return err_at(
                            d.span,
                            format!("cannot instantiate a value of type {other}"),
                        )
                    }
                }
            }
            DeclKind::Table(t) => {
                let tid = self.table(id, t, d.span)?;
                self.bind(id, Bind::Table(tid));
            }
            DeclKind::ValueSet(v) => {
                let size = self.const_u32(&v.size).unwrap_or(0);
                let et = self.decl(id).ty.clone();
                let widths = match &et {
                    Type::ValueSet(inner) => self.flat_widths(inner, d.span)?,
                    other => self.flat_widths(other, d.span)?,
                };
                let vid = self.p.value_sets.len() as ValueSetId;
                let name = self.cp_name(&v.name.name, &v.annotations);
                let elem = match &et {
                    Type::ValueSet(inner) => self.cp_type(inner),
                    other => self.cp_type(other),
                };
                let annotations = self.cp_annotations(&v.annotations);
                self.p.value_sets.push(ValueSet {
                    name,
                    size,
                    widths,
                    elem,
                    annotations,
                });
                self.bind(id, Bind::ValueSet(vid));
            }
            DeclKind::Action(_) | DeclKind::Function(_) => {}
            _ => {}
        }
        Ok(())
    }

    /// Widths of the scalars a value of this type is made of.
    fn flat_widths(&mut self, t: &Type, span: Span) -> LResult<Vec<u32>> {
        if let Some(s) = self.scalar(t) {
            return Ok(vec![s.width]);
        }
        match t {
            Type::Agg(a) => {
                let mut v = Vec::new();
                for (_, ft) in &a.fields {
                    v.extend(self.flat_widths(ft, span)?);
                }
                Ok(v)
            }
            Type::Tuple(ts) => {
                let mut v = Vec::new();
                for ft in ts {
                    v.extend(self.flat_widths(ft, span)?);
                }
                Ok(v)
            }
            other => err_at(
                span,
                format!("value sets of type {other} are not supported"),
            ),
        }
    }

    // ------------------------------------------------------------------ callables

    /// The lowered function of an action in the current instance.
    pub fn action_fn(&mut self, d: DeclId, span: Span) -> LResult<FnId> {
        self.callable(d, &[], span).map(|(f, _)| f)
    }

    /// The lowered function of an action or function (per instance when declared inside a
    /// parser or control), and its parameter slots.
    pub fn callable(&mut self, d: DeclId, targs: &[Type], span: Span) -> LResult<(FnId, FnSig)> {
        let info = self.decl(d);
        let per_inst = info
            .parent
            .is_some_and(|p| matches!(self.decl(p).kind, EntityKind::Control | EntityKind::Parser));
        let inst = if per_inst { self.cur_inst } else { None };
        if info.kind == EntityKind::Action && !per_inst {
            self.cp_order.used(d);
        }
        let tkey: String = targs.iter().map(|t| format!("{t},")).collect();
        let key = (inst, d, tkey);
        if let Some(f) = self.fn_cache.get(&key) {
            let f = *f;
            return Ok((f, self.sigs[&f].clone()));
        }
        let Some(Node::Decl(ad)) = self.nodes.get(&d).copied() else {
            return err_at(span, format!("{}: declaration not found", info.name));
        };
        let subst: Vec<(DeclId, Type)> = info
            .type_params
            .iter()
            .copied()
            .zip(targs.iter().cloned())
            .collect();
        let fid = self.p.functions.len() as FnId;
        let kind = if info.kind == EntityKind::Action {
            FnKind::Action
        } else {
            FnKind::Function
        };
        let name = match &ad.kind {
            DeclKind::Action(a) if per_inst => self.cp_name(&a.name.name, &a.annotations),
            DeclKind::Action(a) => match Self::name_annotation(&a.annotations) {
                Some(n) => n.trim_start_matches('.').to_string(),
                None => a.name.name.clone(),
            },
            _ => self.qualify(&info.name),
        };
        let (annotations, params) = match &ad.kind {
            DeclKind::Action(a) => (
                self.cp_annotations(&a.annotations),
                self.cp_params(&a.params, &info.params),
            ),
            _ => (Vec::new(), Vec::new()),
        };
        self.p.functions.push(Function {
            name,
            kind,
            body: Vec::new(),
            annotations,
            params,
            top_level: !per_inst,
        });
        if kind == FnKind::Action {
            self.cp_order.function(fid, inst, d);
        }
        self.fn_cache.insert(key, fid);
        self.scopes.push(HashMap::new());
        let r = self.callable_body(d, ad, &subst, fid, span);
        self.scopes.pop();
        let sig = r?;
        Ok((fid, sig))
    }

    fn callable_body(
        &mut self,
        d: DeclId,
        ad: &'a ast::Decl,
        subst: &[(DeclId, Type)],
        fid: FnId,
        span: Span,
    ) -> LResult<FnSig> {
        self.enter(span)?;
        let info = self.decl(d);
        let mut params = Vec::with_capacity(info.params.len());
        for p in &info.params {
            let t = p4_front::check::types::substitute(&p.ty, subst);
            let w = self.words(&t, p.span)?;
            let loc = Loc::at(self.alloc_state(w, p.span)?);
            self.bind(p.decl, Bind::Var(loc.clone(), t.clone()));
            params.push((loc, t, p.dir));
        }
        let rt = p4_front::check::types::substitute(&info.ret, subst);
        let ret = if matches!(rt, Type::Void) || info.kind == EntityKind::Action {
            None
        } else {
            let w = self.words(&rt, span)?;
            Some((Loc::at(self.alloc_state(w, span)?), rt))
        };
        let sig = FnSig {
            params,
            ret: ret.clone(),
        };
        self.sigs.insert(fid, sig.clone());
        let saved = std::mem::replace(
            &mut self.fctx,
            FnCtx {
                ret,
                subst: subst.to_vec(),
            },
        );
        let saved_loop = std::mem::replace(&mut self.loop_depth, 0);
        let mut body = Vec::new();
        let r = match &ad.kind {
            DeclKind::Action(a) => {
                // Calls inside an action are no uses P4Info's order counts (p4c inlines them).
                self.cp_order.uncounted += 1;
                let r = self.block(&a.body, &mut body);
                self.cp_order.uncounted -= 1;
                r
            }
            DeclKind::Function(f) => self.block(&f.body, &mut body),
            _ => err_at(ad.span, "expected an action or function"),
        };
        self.fctx = saved;
        self.loop_depth = saved_loop;
        self.leave();
        r?;
        self.p.functions[fid as usize].body = body;
        Ok(sig)
    }

    // ------------------------------------------------------------------ parsers

    fn parser_states(
        &mut self,
        p: &ast::ParserDecl,
        pid: ParserId,
        init: Vec<Stmt>,
    ) -> LResult<()> {
        let names: Vec<&str> = p.states.iter().map(|s| s.name.name.as_str()).collect();
        let target = |n: &str| -> Option<Target> {
            match n {
                "accept" => Some(Target::Accept),
                "reject" => Some(Target::Reject),
                _ => names
                    .iter()
                    .position(|x| *x == n)
                    .map(|i| Target::State(i as u32)),
            }
        };
        let Some(start) = names.iter().position(|n| *n == "start") else {
            return err_at(
                p.name.span,
                format!("{}: parser has no start state", p.name.name),
            );
        };
        let mut states = Vec::with_capacity(p.states.len());
        for st in &p.states {
            let mut body = Vec::new();
            for s in &st.stmts {
                self.stmt(s, &mut body)?;
            }
            let next = match &st.transition {
                None => Transition::Go(Target::Reject),
                Some(ast::Transition::Direct(path)) => match target(&path.name.name) {
                    Some(t) => Transition::Go(t),
                    None => return err_at(path.span, format!("{}: unknown state", path.name.name)),
                },
                Some(ast::Transition::Select { exprs, cases, .. }) => {
                    let mut keys = Vec::with_capacity(exprs.len());
                    let mut key_tys = Vec::with_capacity(exprs.len());
                    for e in exprs {
                        let t = self.ty_of(e);
                        if self.scalar(&t).is_none() {
                            // A struct or tuple select key: its scalars in order.
                            let rv = self.expr(e, &mut body)?;
                            for item in self.data_items(rv, &t, e.span)? {
                                let Datum::Bits(x) = item else {
                                    return err_at(e.span, "varbit select keys are not supported");
                                };
                                key_tys.push(x.ty());
                                keys.push(x);
                            }
                            continue;
                        }
                        key_tys.push(self.scalar_of(e)?);
                        keys.push(self.scalar_expr(e, &mut body)?);
                    }
                    let mut out = Vec::with_capacity(cases.len());
                    for c in cases {
                        let Some(next) = target(&c.next.name.name) else {
                            return err_at(
                                c.next.span,
                                format!("{}: unknown state", c.next.name.name),
                            );
                        };
                        let keysets = self.keysets(&c.keyset, &key_tys)?;
                        out.push(SelectCase { keysets, next });
                    }
                    Transition::Select { keys, cases: out }
                }
            };
            states.push(State {
                name: st.name.name.clone(),
                body,
                next,
            });
        }
        let ps = &mut self.p.parsers[pid as usize];
        ps.init = init;
        ps.states = states;
        ps.start = start as u32;
        Ok(())
    }

    /// The keysets of one select case, one per key.
    fn keysets(&mut self, ks: &ast::Expr, tys: &[Ty]) -> LResult<Vec<KeySet>> {
        if let ExprKind::List { items, .. } = &ks.kind {
            if items.len() == tys.len() && tys.len() > 1 {
                let mut v = Vec::with_capacity(items.len());
                for (it, t) in items.iter().zip(tys) {
                    v.push(self.keyset(it, *t)?);
                }
                return Ok(v);
            }
        }
        if tys.len() > 1 {
            match &ks.kind {
                ExprKind::Default | ExprKind::DontCare => {
                    // Built one by one: `vec![KeySet::Any; n]` clones an `Any`, whose
                    // optimised clone valgrind reports as a jump on uninitialised bytes.
                    return Ok(tys.iter().map(|_| KeySet::Any).collect());
                }
                _ => {
                    // A value set (or a struct constant) matching all keys jointly.
                    let k = self.keyset(ks, Ty::bits(64))?;
                    if let KeySet::Set(_) = k {
                        return Ok(vec![k]);
                    }
                    return err_at(ks.span, "keyset does not match the number of select keys");
                }
            }
        }
        Ok(vec![self.keyset(
            ks,
            tys.first().copied().unwrap_or(Ty::bits(64)),
        )?])
    }

    fn keyset(&mut self, e: &ast::Expr, t: Ty) -> LResult<KeySet> {
        match &e.kind {
            ExprKind::Default | ExprKind::DontCare => Ok(KeySet::Any),
            ExprKind::Mask(v, m) => Ok(KeySet::Mask(self.kval(v, t)?, self.kval(m, t)?)),
            ExprKind::Range(lo, hi) => Ok(KeySet::Range(self.kval(lo, t)?, self.kval(hi, t)?)),
            ExprKind::Path(_) => {
                if let Some(d) = self.ck.resolved.get(&e.id) {
                    if let Some(Bind::ValueSet(v)) = self.lookup(*d) {
                        return Ok(KeySet::Set(*v));
                    }
                }
                Ok(KeySet::Value(self.kval(e, t)?))
            }
            _ => Ok(KeySet::Value(self.kval(e, t)?)),
        }
    }

    /// A keyset / entry constant as bits of width `t`.
    pub fn kval(&mut self, e: &ast::Expr, t: Ty) -> LResult<Val> {
        if let Some(v) = self.ck.value_of(e.id).cloned() {
            return self.val_bits(&v, t, e.span);
        }
        // A value known only in this instance (a constructor parameter).
        let mut pre = Vec::new();
        let rv = self.expr(e, &mut pre)?;
        if pre.is_empty() {
            if let super::expr::RV::Scalar(x) = rv {
                if let Some(v) = x.as_const() {
                    return Ok(Val::from_big(crate::ops::mask_big(&v.to_big(), t.width)));
                }
            }
        }
        err_at(e.span, "expected a compile-time constant")
    }

    pub fn val_bits(&mut self, v: &Value, t: Ty, span: Span) -> LResult<Val> {
        match v {
            Value::Bool(b) => Ok(Val::U(u64::from(*b))),
            Value::Error(_) | Value::Enum { .. } => match self.enum_code(v) {
                Some(c) => Ok(Val::U(c & crate::ops::mask(t.width))),
                None => err_at(span, "unsupported constant"),
            },
            _ => match v.as_int() {
                Some(i) => Ok(val_of(i, t.width)),
                None => err_at(span, format!("unsupported constant {v}")),
            },
        }
    }

    // ------------------------------------------------------------------ tables

    fn table(&mut self, id: DeclId, td: &ast::TableDecl, span: Span) -> LResult<TableId> {
        let outer = std::mem::replace(&mut self.cp_order.in_table, true);
        let r = self.table_inner(id, td, span);
        self.cp_order.in_table = outer;
        r
    }

    /// A table (P4_16 spec §14.2): its keys, actions, default action, direct externs and
    /// implementation, size, idle timeout and constant entries, each from its helper below.
    fn table_inner(&mut self, id: DeclId, td: &ast::TableDecl, span: Span) -> LResult<TableId> {
        let Some(info) = self.ck.tables.get(&id) else {
            return err_at(span, format!("{}: unresolved table", td.name.name));
        };
        let name = self.cp_name(&td.name.name, &td.annotations);
        let tid = self.p.tables.len() as TableId;
        let default_declared = td.properties.iter().any(|p| {
            matches!(&p.kind, ast::TablePropertyKind::Other { name, .. } if name.name == "default_action")
        });
        let annotations = self.cp_annotations(&td.annotations);
        self.p.tables.push(Table {
            name: name.clone(),
            key_pre: Vec::new(),
            keys: Vec::new(),
            actions: Vec::new(),
            default_action: None,
            default_const: false,
            entries: Vec::new(),
            entries_const: false,
            size: 1024,
            add_on_miss: info.add_on_miss,
            idle_timeout: IdleTimeout::None,
            direct_counter: None,
            direct_meter: None,
            implementation: None,
            annotations,
            declared_size: info.size,
            default_declared,
        });
        let (key_pre, keys) = self.table_keys(info, td)?;
        let actions = self.table_actions(info, td)?;
        if !default_declared {
            // The default is `NoAction` (P4_16 §14.2.1.3): a use of it, for P4Info's order.
            if let Some(d) = self.no_action_decl() {
                self.cp_order.used(d);
            }
        }
        {
            let t = &mut self.p.tables[tid as usize];
            t.key_pre = key_pre;
            t.keys = keys;
            t.actions = actions;
        }
        self.table_default_action(tid, info)?;
        // Size and PNA properties.
        let size = info
            .size
            .unwrap_or(if info.add_on_miss { 65_536 } else { 1024 });
        let idle = match info.idle_timeout.as_deref() {
            Some("AUTO_DELETE") | Some("idle_timeout_with_auto_delete") => IdleTimeout::AutoDelete,
            Some(_) => IdleTimeout::NotifyControl,
            None => IdleTimeout::None,
        };
        let (dc, dm, imp) = self.table_externs(td, &name)?;
        // Constant entries.
        let ast_entries: Vec<&ast::Entry> = td
            .properties
            .iter()
            .filter_map(|p| match &p.kind {
                ast::TablePropertyKind::Entries(es) => Some(es.iter()),
                _ => None,
            })
            .flatten()
            .collect();
        let entries = self.const_entries(tid, info, &ast_entries, td)?;
        let t = &mut self.p.tables[tid as usize];
        t.size = size;
        t.idle_timeout = idle;
        t.direct_counter = dc;
        t.direct_meter = dm;
        t.implementation = imp;
        t.entries = entries;
        t.entries_const = info.entries_const;
        Ok(tid)
    }

    /// A table's `key` (§14.2.1.1): each field's expression (with the statements computing
    /// it), match kind, control-plane name and type.
    fn table_keys(
        &mut self,
        info: &p4_front::check::TableInfo,
        td: &ast::TableDecl,
    ) -> LResult<(Vec<Stmt>, Vec<TableKey>)> {
        let ast_keys: Vec<&ast::KeyElement> = td
            .properties
            .iter()
            .filter_map(|p| match &p.kind {
                ast::TablePropertyKind::Key(ks) => Some(ks.iter()),
                _ => None,
            })
            .flatten()
            .collect();
        let mut key_pre = Vec::new();
        let mut keys = Vec::new();
        for (k, ak) in info.keys.iter().zip(&ast_keys) {
            let kind = match k.match_kind.as_str() {
                "exact" => MatchKind::Exact,
                "lpm" => MatchKind::Lpm,
                "ternary" => MatchKind::Ternary,
                "range" => MatchKind::Range,
                "optional" => MatchKind::Optional,
                "selector" => MatchKind::Selector,
                other => return err_at(k.span, format!("match kind {other} is not supported")),
            };
            let x = self.scalar_expr(&ak.expr, &mut key_pre)?;
            let ty = self.cp_type(&k.ty);
            keys.push(TableKey {
                name: k.name.clone(),
                expr: x,
                kind,
                ty,
                annotations: self.cp_annotations(&ak.annotations),
            });
        }
        Ok((key_pre, keys))
    }

    /// A table's `actions` (§14.2.1.2), each with the arguments the table binds.
    fn table_actions(
        &mut self,
        info: &p4_front::check::TableInfo,
        td: &ast::TableDecl,
    ) -> LResult<Vec<TableAction>> {
        let ast_actions: Vec<&ast::ActionRef> = td
            .properties
            .iter()
            .filter_map(|p| match &p.kind {
                ast::TablePropertyKind::Actions(a) => Some(a.iter()),
                _ => None,
            })
            .flatten()
            .collect();
        let mut actions = Vec::new();
        for (ta, aa) in info.actions.iter().zip(&ast_actions) {
            actions.push(self.table_action(ta, aa)?);
        }
        Ok(actions)
    }

    /// One action of a table: arguments the `actions` list gives for directed parameters
    /// are bound (copied in and out); the directionless ones are the control plane's (§14.2.1.2).
    fn table_action(
        &mut self,
        ta: &p4_front::check::TableAction,
        aa: &ast::ActionRef,
    ) -> LResult<TableAction> {
        let (f, sig) = self.callable(ta.action, &[], aa.span)?;
        let ainfo = self.decl(ta.action);
        let refs = self.ref_params(ta.action);
        let mut params = Vec::new();
        let mut copy_in = Vec::new();
        let mut copy_out = Vec::new();
        let aargs: &[ast::Arg] = aa.args.as_deref().unwrap_or(&[]);
        // Control-plane parameter names: `@name` wins (p4c's P4Info and STF names).
        let ast_params: Vec<&ast::Param> = match self.nodes.get(&ta.action) {
            Some(Node::Decl(d)) => match &d.kind {
                ast::DeclKind::Action(a) => a.params.iter().collect(),
                _ => Vec::new(),
            },
            None => Vec::new(),
        };
        for (i, (p, (loc, pt, dir))) in ainfo.params.iter().zip(&sig.params).enumerate() {
            match ta.args.get(i) {
                Some(CallArg::Arg(j)) if *dir != Direction::None => {
                    let Some(a) = aargs.get(*j) else { continue };
                    self.bind_arg(loc, pt, *dir, &a.value, &mut copy_in, &mut copy_out)?;
                }
                _ => {
                    let Some(s) = self.scalar(pt) else {
                        return err_at(
                            p.span,
                            format!("{}: action parameters must be scalars", p.name),
                        );
                    };
                    params.push(ActionParam {
                        name: ast_params
                            .get(i)
                            .and_then(|ap| Self::name_annotation(&ap.annotations))
                            .unwrap_or_else(|| p.name.clone()),
                        ty: s,
                        slot: loc.off,
                        is_ref: refs.contains(&p.name),
                    });
                }
            }
        }
        let fname = self.p.functions[f as usize].name.clone();
        Ok(TableAction {
            name: fname,
            func: f,
            params,
            copy_in,
            copy_out,
            default_only: ta.default_only,
            table_only: ta.table_only,
            annotations: self.cp_annotations(&aa.annotations),
        })
    }

    /// A table's `default_action` with its arguments, or `NoAction` when the table declares
    /// none and lists it (§14.2.1.3).
    fn table_default_action(
        &mut self,
        tid: TableId,
        info: &p4_front::check::TableInfo,
    ) -> LResult<()> {
        if let Some(da) = &info.default_action {
            let (f, _) = self.callable(da.action, &[], da.span)?;
            let Some(ai) = self.p.tables[tid as usize].action_of(f) else {
                return err_at(da.span, "default action is not in the table's actions");
            };
            let params = self.p.tables[tid as usize].actions[ai as usize]
                .params
                .clone();
            let vals = self.default_args(da.expr, da.action, &params, da.span)?;
            let t = &mut self.p.tables[tid as usize];
            t.default_action = Some((ai, pack(&params, &vals)));
            t.default_const = da.is_const;
        } else {
            // No default_action: NoAction (P4_16 §14.2.1.3).
            let t = &mut self.p.tables[tid as usize];
            if let Some(i) = t
                .actions
                .iter()
                .position(|a| a.name == "NoAction" && a.params.is_empty())
            {
                t.default_action = Some((i as u32, Vec::new()));
            }
        }
        Ok(())
    }

    /// A table's direct counter, direct meter and implementation (v1model's `counters`/
    /// `meters`/`implementation`, PSA's and PNA's `*_direct_counter`, `*_direct_meter`,
    /// `*_implementation`): each an instance, or constructed in place.
    fn table_externs(
        &mut self,
        td: &ast::TableDecl,
        table: &str,
    ) -> LResult<(Option<ExternId>, Option<ExternId>, Option<ExternId>)> {
        let mut dc = None;
        let mut dm = None;
        let mut imp = None;
        for p in &td.properties {
            let ast::TablePropertyKind::Other { name, value } = &p.kind else {
                continue;
            };
            let pname = name.name.as_str();
            let slot = match pname {
                "counters" | "pna_direct_counter" | "psa_direct_counter" => &mut dc,
                "meters" | "pna_direct_meter" | "psa_direct_meter" => &mut dm,
                "implementation" | "pna_implementation" | "psa_implementation" => &mut imp,
                _ => continue,
            };
            *slot = self.property_extern(value, &p.annotations, table, pname)?;
        }
        Ok((dc, dm, imp))
    }

    /// The extern a table property names: an instance, or one constructed in place (named by
    /// the property's `@name`, else after the table and the property: p4c refuses an anonymous
    /// one, "not supported by P4Runtime").
    fn property_extern(
        &mut self,
        value: &ast::Expr,
        panns: &ast::Annotations,
        table: &str,
        pname: &str,
    ) -> LResult<Option<ExternId>> {
        Ok(match &value.kind {
            ExprKind::Path(_) => match self
                .ck
                .resolved
                .get(&value.id)
                .and_then(|d| self.lookup(*d))
            {
                Some(Bind::Extern(x)) => Some(*x),
                _ => None,
            },
            ExprKind::Call { args, .. } => {
                let ci = self.ck.calls.get(&value.id).cloned();
                match (ci, self.ty_of(value)) {
                    (Some(ci), Type::Extern(o)) => {
                        let params = match ci.target {
                            CallTarget::ExternCtor(c) => self.decl(c).params.clone(),
                            _ => Vec::new(),
                        };
                        let vals = self.ctor_values(&params, &ci.args, args)?;
                        let n = match Self::name_annotation(panns) {
                            Some(n) => n.trim_start_matches('.').to_string(),
                            None => format!("{table}.{pname}"),
                        };
                        let anns = self.cp_annotations(panns);
                        let site = ExternSite::TableProperty;
                        Some(self.make_extern(&o, &vals, n, site, anns, value.span)?)
                    }
                    _ => None,
                }
            }
            _ => None,
        })
    }

    /// Names of an action's parameters annotated `@__ref` (data-plane writable).
    fn ref_params(&self, action: DeclId) -> Vec<String> {
        match self.nodes.get(&action) {
            Some(Node::Decl(ast::Decl {
                kind: DeclKind::Action(a),
                ..
            })) => a
                .params
                .iter()
                .filter(|p| p.annotations.iter().any(|x| x.name.name == "__ref"))
                .map(|p| p.name.name.clone())
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Copy-in / copy-out of one argument bound to a parameter slot.
    pub fn bind_arg(
        &mut self,
        loc: &Loc,
        pt: &Type,
        dir: Direction,
        a: &ast::Expr,
        copy_in: &mut Vec<Stmt>,
        copy_out: &mut Vec<Stmt>,
    ) -> LResult<()> {
        match dir {
            Direction::In | Direction::None => {
                let rv = self.expr(a, copy_in)?;
                self.assign(loc, pt, rv, copy_in, a.span)
            }
            Direction::Out | Direction::InOut => {
                if matches!(a.kind, ExprKind::DontCare) {
                    self.invalidate(loc, pt, copy_in, a.span)?;
                    return Ok(());
                }
                let mut lv = self.lvalue(a, copy_in)?;
                lv.loc = self.freeze(lv.loc, copy_in, a.span)?;
                if dir == Direction::InOut {
                    let cur = self.lv_read(&lv);
                    self.assign(loc, pt, cur, copy_in, a.span)?;
                } else {
                    self.invalidate(loc, pt, copy_in, a.span)?;
                }
                let rv = self.rv_at(loc.clone(), pt.clone());
                self.lv_write(&lv, rv, copy_out, a.span)
            }
        }
    }

    /// Values of the directionless parameters of a table's default action.
    fn default_args(
        &mut self,
        expr: p4_front::ast::NodeId,
        action: DeclId,
        params: &[ActionParam],
        span: Span,
    ) -> LResult<Vec<Val>> {
        let Some(e) = self.find_expr(expr) else {
            return Ok(params.iter().map(|_| Val::U(0)).collect());
        };
        let ExprKind::Call { args, .. } = &e.kind else {
            return Ok(params.iter().map(|_| Val::U(0)).collect());
        };
        let Some(ci) = self.ck.calls.get(&e.id).cloned() else {
            return err_at(span, "unresolved default action");
        };
        let ainfo = self.decl(action);
        let mut vals = Vec::new();
        for (i, p) in ainfo.params.iter().enumerate() {
            let Some(ap) = params.iter().find(|x| x.name == p.name) else {
                continue;
            };
            let v = match ci.args.get(i) {
                Some(CallArg::Arg(j)) => match args.get(*j) {
                    Some(a) => self.kval(&a.value, ap.ty)?,
                    None => Val::U(0),
                },
                Some(CallArg::Default(_)) => match &p.default {
                    Some(v) => self.val_bits(v, ap.ty, span)?,
                    None => Val::U(0),
                },
                _ => Val::U(0),
            };
            vals.push(v);
        }
        Ok(vals)
    }

    /// The AST expression with this id among the table properties (default actions).
    fn find_expr(&self, id: p4_front::ast::NodeId) -> Option<&'a ast::Expr> {
        fn walk(d: &ast::Decl, id: p4_front::ast::NodeId) -> Option<&ast::Expr> {
            match &d.kind {
                DeclKind::Table(t) => t.properties.iter().find_map(|p| match &p.kind {
                    ast::TablePropertyKind::Other { value, .. } if value.id == id => Some(value),
                    _ => None,
                }),
                DeclKind::Control(c) => c.locals.iter().find_map(|l| walk(l, id)),
                _ => None,
            }
        }
        self.ast.decls.iter().find_map(|d| walk(d, id))
    }

    fn const_entries(
        &mut self,
        tid: TableId,
        info: &p4_front::check::TableInfo,
        ast_entries: &[&ast::Entry],
        td: &ast::TableDecl,
    ) -> LResult<Vec<ConstEntry>> {
        if info.entries.is_empty() {
            return Ok(Vec::new());
        }
        let kinds: Vec<MatchKind> = self.p.tables[tid as usize]
            .keys
            .iter()
            .map(|k| k.kind)
            .collect();
        let widths: Vec<Ty> = self.p.tables[tid as usize]
            .keys
            .iter()
            .map(|k| k.expr.ty())
            .collect();
        let has_prio = kinds.iter().any(|k| {
            matches!(
                k,
                MatchKind::Ternary | MatchKind::Range | MatchKind::Optional
            )
        });
        let largest_wins = td
            .properties
            .iter()
            .find_map(|p| match &p.kind {
                ast::TablePropertyKind::Other { name, value }
                    if name.name == "largest_priority_wins" =>
                {
                    self.ck.value_of(value.id).and_then(Value::as_bool)
                }
                _ => None,
            })
            .unwrap_or(true);
        let n = info.entries.len() as u64;
        let mut out = Vec::with_capacity(info.entries.len());
        let mut max_explicit = 0u64;
        let mut explicit: Vec<Option<u64>> = Vec::with_capacity(info.entries.len());
        // BMv2's `@priority(n)` annotation: the smallest value wins; entries without one get
        // their position (1-based).
        let annotated: Vec<Option<u64>> = ast_entries
            .iter()
            .map(|ae| {
                ae.annotations
                    .iter()
                    .find(|a| a.name.name == "priority")
                    .and_then(|a| match &a.body {
                        ast::AnnotationBody::Expressions(es) => es
                            .first()
                            .and_then(|x| self.ck.value_of(x.id))
                            .and_then(Value::as_u64)
                            .or_else(|| {
                                es.first().and_then(|x| match &x.kind {
                                    ExprKind::Int { value, .. } => u64::try_from(value).ok(),
                                    _ => None,
                                })
                            }),
                        ast::AnnotationBody::Unparsed(t) => t.trim().parse().ok(),
                        _ => None,
                    })
            })
            .collect();
        let use_annotation = annotated.iter().any(Option::is_some);
        for (i, te) in info.entries.iter().enumerate() {
            let p = if use_annotation {
                Some(annotated[i].unwrap_or(i as u64 + 1))
            } else {
                te.priority
                    .and_then(|p| self.ck.value_of(p).and_then(Value::as_u64))
            };
            if let Some(p) = p {
                max_explicit = max_explicit.max(p);
            }
            explicit.push(p);
        }
        let largest_wins = largest_wins && !use_annotation;
        for (i, (te, ae)) in info.entries.iter().zip(ast_entries).enumerate() {
            let items: Vec<&ast::Expr> = match &ae.keyset.kind {
                ExprKind::List { items, .. } if kinds.len() != 1 || items.len() == 1 => {
                    items.iter().collect()
                }
                _ => vec![&ae.keyset],
            };
            let mut matches = Vec::with_capacity(kinds.len());
            for (k, (kind, w)) in kinds.iter().zip(&widths).enumerate() {
                let Some(ks) = items.get(k).copied() else {
                    matches.push(EntryMatch::Any);
                    continue;
                };
                matches.push(self.entry_match(ks, *kind, *w)?);
            }
            let (f, _) = self.callable(te.action, &[], ae.span)?;
            let Some(ai) = self.p.tables[tid as usize].action_of(f) else {
                return err_at(ae.span, "entry action is not in the table's actions");
            };
            let params = self.p.tables[tid as usize].actions[ai as usize]
                .params
                .clone();
            let ainfo = self.decl(te.action);
            let mut vals = Vec::new();
            for (j, p) in ainfo.params.iter().enumerate() {
                let Some(ap) = params.iter().find(|x| x.name == p.name) else {
                    continue;
                };
                vals.push(match te.args.get(j) {
                    Some(id) => match self.ck.value_of(*id).cloned() {
                        Some(v) => self.val_bits(&v, ap.ty, ae.span)?,
                        None => return err_at(ae.span, "entry action arguments must be constants"),
                    },
                    None => Val::U(0),
                });
            }
            let priority = if !has_prio {
                0
            } else {
                let p = match explicit[i] {
                    Some(p) if largest_wins => p,
                    Some(p) => max_explicit + 1 - p,
                    None => n - i as u64,
                };
                p.clamp(1, u64::from(u32::MAX)) as u32
            };
            out.push(ConstEntry {
                matches,
                priority,
                action: ai,
                params: pack(&params, &vals),
            });
        }
        Ok(out)
    }

    fn entry_match(&mut self, ks: &ast::Expr, kind: MatchKind, t: Ty) -> LResult<EntryMatch> {
        Ok(match &ks.kind {
            ExprKind::Default | ExprKind::DontCare => EntryMatch::Any,
            ExprKind::Mask(v, m) => {
                let (v, m) = (self.kval(v, t)?, self.kval(m, t)?);
                if kind == MatchKind::Lpm {
                    let mb = m.to_big();
                    EntryMatch::Lpm(v, mb.count_ones() as u32)
                } else {
                    EntryMatch::Ternary(v, m)
                }
            }
            ExprKind::Range(lo, hi) => EntryMatch::Range(self.kval(lo, t)?, self.kval(hi, t)?),
            _ => {
                let v = self.kval(ks, t)?;
                match kind {
                    MatchKind::Lpm => EntryMatch::Lpm(v, t.width),
                    _ => EntryMatch::Exact(v),
                }
            }
        })
    }

    // ------------------------------------------------------------------ externs

    /// Creates an extern instance.
    pub fn make_extern(
        &mut self,
        o: &ObjType,
        vals: &[(String, Option<Value>)],
        name: String,
        site: ExternSite,
        annotations: Annotations,
        span: Span,
    ) -> LResult<ExternId> {
        let get = |n: &str| vals.iter().find(|v| v.0 == n).and_then(|v| v.1.clone());
        let nth = |i: usize| vals.get(i).and_then(|v| v.1.clone());
        let u32_of = |v: Option<Value>| v.and_then(|v| v.as_u64()).unwrap_or(0).min(1 << 24) as u32;
        let member = |v: Option<Value>| match v {
            Some(Value::Enum {
                member: Some(m), ..
            }) => m.to_ascii_lowercase(),
            _ => String::new(),
        };
        let counter_kind = |m: String| match m.as_str() {
            "bytes" => CounterKind::Bytes,
            "packets_and_bytes" => CounterKind::PacketsAndBytes,
            _ => CounterKind::Packets,
        };
        let algo = |m: String| match m.as_str() {
            "identity" => HashAlgo::Identity,
            "crc16" => HashAlgo::Crc16,
            "crc16_custom" => HashAlgo::Crc16Custom,
            "crc32" => HashAlgo::Crc32,
            "crc32_custom" => HashAlgo::Crc32Custom,
            "crc64" => HashAlgo::Crc64,
            "csum16" | "ones_complement16" => HashAlgo::Csum16,
            "xor16" => HashAlgo::Xor16,
            "random" => HashAlgo::Random,
            _ => HashAlgo::TargetDefault,
        };
        let kind = match o.name.as_str() {
            "counter" | "Counter" => ExternKind::Counter {
                size: u32_of(nth(0)),
                kind: counter_kind(member(nth(1))),
            },
            "direct_counter" | "DirectCounter" => ExternKind::DirectCounter {
                kind: counter_kind(member(nth(0))),
            },
            "meter" | "Meter" => ExternKind::Meter {
                size: u32_of(nth(0)),
                bytes: member(nth(1)) == "bytes",
            },
            "direct_meter" | "DirectMeter" => ExternKind::DirectMeter {
                bytes: member(nth(0)) == "bytes",
            },
            "register" | "Register" => {
                let t = o.args.first().cloned().unwrap_or(Type::Bit(32));
                let layout = self.layout(&t, span)?;
                let words = layout.words(&self.p.headers);
                let mut init = vec![0u64; words as usize];
                if let (Some(v), Some(s)) = (get("initial_value"), self.scalar(&t)) {
                    if let Some(b) = big_of(&v) {
                        crate::ops::big_to_words(&crate::ops::mask_big(&b, s.width), &mut init);
                    }
                }
                ExternKind::Register {
                    size: u32_of(nth(0)),
                    layout,
                    init,
                }
            }
            "Hash" => ExternKind::Hash {
                algo: algo(member(nth(0))),
            },
            "Checksum" | "Checksum16" => ExternKind::Checksum {
                algo: if o.name == "Checksum16" {
                    HashAlgo::Csum16
                } else {
                    algo(member(nth(0)))
                },
                state: self.alloc_state(4, span)?,
            },
            "InternetChecksum" => ExternKind::InternetChecksum {
                state: self.alloc_state(1, span)?,
            },
            "Random" => {
                let t = o.args.first().cloned().unwrap_or(Type::Bit(32));
                let ty = self.scalar(&t).unwrap_or(Ty::bits(32));
                let lo = nth(0).and_then(|v| v.as_u64()).unwrap_or(0);
                let hi = nth(1)
                    .and_then(|v| v.as_u64())
                    .unwrap_or(crate::ops::mask(ty.width));
                ExternKind::Random { lo, hi, ty }
            }
            "Digest" => {
                let t = o.args.first().cloned().unwrap_or(Type::Bit(32));
                ExternKind::Digest {
                    layout: self.layout(&t, span)?,
                }
            }
            "action_profile" | "ActionProfile" => ExternKind::ActionProfile {
                size: u32_of(nth(0)),
            },
            "action_selector" | "ActionSelector" => ExternKind::ActionSelector {
                algo: algo(member(nth(0))),
                size: u32_of(nth(1)),
            },
            other => {
                return err_at(
                    span,
                    format!("extern {other} is not supported by the runtime"),
                )
            }
        };
        let id = self.p.externs.len() as ExternId;
        let type_args = o.args.iter().map(|t| self.cp_type(t)).collect();
        self.p.externs.push(ExternInst {
            name,
            kind,
            site,
            type_args,
            annotations,
        });
        Ok(id)
    }
}

/// Packs parameter values: each `ceil(w/8)` bytes, big-endian, in order.
pub fn pack(params: &[ActionParam], vals: &[Val]) -> Vec<u8> {
    let mut out = Vec::new();
    for (p, v) in params
        .iter()
        .zip(vals.iter().chain(std::iter::repeat(&Val::U(0))))
    {
        let n = p.ty.bytes();
        let b = crate::ops::mask_big(&v.to_big(), p.ty.width).to_bytes_be();
        let b = if b == [0] { Vec::new() } else { b };
        let start = out.len();
        out.resize(start + n, 0);
        let k = b.len().min(n);
        out[start + n - k..start + n].copy_from_slice(&b[b.len() - k..]);
    }
    out
}

/// Whether a type is `packet_in` / `packet_out`.
impl Lw<'_> {
    /// Whether a parser or control declaration has apply parameters of extern type (other than
    /// `packet_in`/`packet_out`).
    pub(crate) fn has_extern_params(&self, decl: DeclId) -> bool {
        self.decl(decl)
            .params
            .iter()
            .any(|p| matches!(p.ty, Type::Extern(_)) && !is_packet_type(&p.ty))
    }
}

pub(crate) fn is_packet_type(t: &Type) -> bool {
    matches!(t, Type::Extern(o) if o.name == "packet_in" || o.name == "packet_out")
}

/// The name of a type as the architecture refers to it.
fn type_name(t: &Type) -> String {
    match t {
        Type::Agg(a) => a.name.clone(),
        other => format!("{other}"),
    }
}
