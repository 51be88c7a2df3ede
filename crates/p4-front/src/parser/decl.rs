//! Declarations: top level, parser and control locals, tables, externs (spec §7, §10–§14).

use super::{PResult, Parser};
use crate::ast::*;
use crate::lexer::{Keyword, TokenKind as T};

/// Where a local declaration appears.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Ctx {
    Parser,
    Control,
}

impl Parser<'_> {
    /// One top-level declaration (a `typedef` of an inline struct yields two).
    pub(super) fn top_decl(&mut self, out: &mut Vec<Decl>) -> PResult<()> {
        let lo = self.lo();
        let annos = self.annotations()?;
        let kind = match self.peek() {
            T::Keyword(Keyword::Const) => DeclKind::Const(self.const_decl(annos)?),
            T::Keyword(Keyword::Extern) => match self.extern_decl(annos)? {
                Some(k) => k,
                None => return Ok(()),
            },
            T::Keyword(Keyword::Action) => DeclKind::Action(self.action_decl(annos)?),
            T::Keyword(Keyword::Parser) => self.parser_decl(annos, lo)?,
            T::Keyword(Keyword::Control) => self.control_decl(annos, lo)?,
            T::Keyword(Keyword::Package) => {
                self.bump();
                let name = self.name()?;
                self.declare_type(&name);
                self.push_scope();
                let type_params = self.opt_type_params()?;
                let params = self.params()?;
                self.pop_scope();
                let span = self.span_from(lo);
                self.expect(&T::Semi)?;
                DeclKind::PackageType(TypeProto {
                    annotations: annos,
                    name,
                    type_params,
                    params,
                    span,
                })
            }
            T::Keyword(
                Keyword::Header | Keyword::HeaderUnion | Keyword::Struct | Keyword::Enum,
            ) => self.derived_type_decl(annos)?,
            T::Keyword(Keyword::Typedef | Keyword::Type) => {
                let (inner, kind) = self.typedef_decl(annos, lo)?;
                if let Some(d) = inner {
                    out.push(d);
                }
                kind
            }
            T::Keyword(Keyword::Error | Keyword::MatchKind) => {
                let is_error = self.at_kw(Keyword::Error);
                // A trailing comma is allowed for `match_kind` only (spec "Optional trailing commas").
                if !annos.is_empty() {
                    return Err(self.err_here("annotations are not allowed here"));
                }
                self.bump();
                self.expect(&T::LBrace)?;
                let mut names = Vec::new();
                loop {
                    if !is_error && !names.is_empty() && self.at(&T::RBrace) {
                        break;
                    }
                    names.push(self.name()?);
                    if !self.eat(&T::Comma) {
                        break;
                    }
                }
                self.expect(&T::RBrace)?;
                if is_error {
                    DeclKind::Error(names)
                } else {
                    DeclKind::MatchKind(names)
                }
            }
            T::Ident(_) | T::Dot | T::Keyword(Keyword::Void) => self.fn_or_instance(annos, lo)?,
            _ if self.type_start_at(0) => self.fn_or_instance(annos, lo)?,
            _ => return Err(self.err_here("expected a declaration")),
        };
        out.push(Decl {
            kind,
            span: self.span_from(lo),
        });
        Ok(())
    }

    /// A function declaration or an instantiation, after its annotations.
    fn fn_or_instance(&mut self, annos: Annotations, lo: u32) -> PResult<DeclKind> {
        let ty = self.type_or_void()?;
        if self.at(&T::LParen) && !matches!(ty.kind, TypeKind::Void) {
            return Ok(DeclKind::Instantiation(self.instantiation_rest(annos, ty)?));
        }
        let proto = self.proto_rest(annos, false, Some(ty), lo)?;
        let body = self.block();
        self.pop_scope();
        Ok(DeclKind::Function(FunctionDecl { proto, body: body? }))
    }

    /// `const T name = e;`
    pub(super) fn const_decl(&mut self, annotations: Annotations) -> PResult<ConstDecl> {
        self.expect_kw(Keyword::Const)?;
        let ty = self.type_ref()?;
        let name = self.name()?;
        let ty = self.declarator(ty)?;
        self.expect(&T::Assign)?;
        let value = self.expr()?;
        self.expect(&T::Semi)?;
        self.declare_object(&name);
        Ok(ConstDecl {
            annotations,
            ty,
            name,
            value,
        })
    }

    /// C-style array dimensions after a declared name: `T x[4]` is `T[4] x` (p4c `declarator`).
    pub(super) fn declarator(&mut self, ty: TypeRef) -> PResult<TypeRef> {
        self.dimensions(ty)
    }

    /// `name [dims] [= e]` after a variable's type, then `;` if `semi`.
    pub(super) fn variable_rest(
        &mut self,
        annotations: Annotations,
        ty: TypeRef,
        semi: bool,
    ) -> PResult<VariableDecl> {
        let name = self.name()?;
        let ty = self.declarator(ty)?;
        let init = if self.eat(&T::Assign) {
            Some(self.expr()?)
        } else {
            None
        };
        if semi {
            self.expect(&T::Semi)?;
        }
        self.declare_object(&name);
        Ok(VariableDecl {
            annotations,
            ty,
            name,
            init,
        })
    }

    /// `(args) name [= { abstract method bodies }];` after an instantiated type.
    pub(super) fn instantiation_rest(
        &mut self,
        annotations: Annotations,
        ty: TypeRef,
    ) -> PResult<Instantiation> {
        let args = self.args()?;
        let name = self.name()?;
        let ty = self.declarator(ty)?;
        let initializer = if self.eat(&T::Assign) {
            self.expect(&T::LBrace)?;
            self.push_scope();
            let mut decls = Vec::new();
            let r = self.nested(|p| {
                while !p.at(&T::RBrace) {
                    let lo = p.lo();
                    let annos = p.annotations()?;
                    let ty = p.type_or_void()?;
                    let kind = if p.at(&T::LParen) && !matches!(ty.kind, TypeKind::Void) {
                        DeclKind::Instantiation(p.instantiation_rest(annos, ty)?)
                    } else {
                        let proto = p.proto_rest(annos, false, Some(ty), lo)?;
                        let body = p.block();
                        p.pop_scope();
                        DeclKind::Function(FunctionDecl { proto, body: body? })
                    };
                    decls.push(Decl {
                        kind,
                        span: p.span_from(lo),
                    });
                }
                p.expect(&T::RBrace)
            });
            self.pop_scope();
            r?;
            Some(decls)
        } else {
            None
        };
        self.expect(&T::Semi)?;
        self.declare_object(&name);
        Ok(Instantiation {
            annotations,
            ty,
            args,
            name,
            initializer,
        })
    }

    /// `name <T> (params)` after a return type. Leaves a new scope (holding the type and value
    /// parameters) open: the caller pops it after the body or `;`.
    fn proto_rest(
        &mut self,
        annotations: Annotations,
        is_abstract: bool,
        ret: Option<TypeRef>,
        lo: u32,
    ) -> PResult<FunctionProto> {
        let name = self.name()?;
        self.declare_object(&name);
        self.push_scope();
        let type_params = self.opt_type_params()?;
        let params = self.params()?;
        Ok(FunctionProto {
            annotations,
            is_abstract,
            ret,
            name,
            type_params,
            params,
            span: self.span_from(lo),
        })
    }

    /// `( p1, p2 )`; each parameter is declared in the current scope.
    pub(super) fn params(&mut self) -> PResult<Vec<Param>> {
        self.expect(&T::LParen)?;
        let mut params = Vec::new();
        if self.eat(&T::RParen) {
            return Ok(params);
        }
        loop {
            let lo = self.lo();
            let annotations = self.annotations()?;
            let direction = if self.eat_kw(Keyword::In) {
                Direction::In
            } else if self.eat_kw(Keyword::Out) {
                Direction::Out
            } else if self.eat_kw(Keyword::InOut) {
                Direction::InOut
            } else {
                Direction::None
            };
            let ty = self.type_ref()?;
            let name = self.name()?;
            let ty = self.declarator(ty)?;
            let default = if self.eat(&T::Assign) {
                Some(self.expr()?)
            } else {
                None
            };
            self.declare_object(&name);
            params.push(Param {
                annotations,
                direction,
                ty,
                name,
                default,
                span: self.span_from(lo),
            });
            if !self.eat(&T::Comma) {
                break;
            }
        }
        self.expect(&T::RParen)?;
        Ok(params)
    }

    fn opt_ctor_params(&mut self) -> PResult<Vec<Param>> {
        if self.at(&T::LParen) {
            self.params()
        } else {
            Ok(Vec::new())
        }
    }

    /// `extern` object, function, or forward declaration (which yields no node).
    fn extern_decl(&mut self, annotations: Annotations) -> PResult<Option<DeclKind>> {
        let lo = self.lo();
        self.expect_kw(Keyword::Extern)?;
        let is_object = self.is_name_at(0)
            && match self.peek_at(1) {
                T::LBrace | T::Semi => true,
                T::Lt => self.lookahead(|p| {
                    p.bump();
                    p.bump();
                    loop {
                        p.name()?;
                        if !p.eat(&T::Comma) {
                            break;
                        }
                    }
                    p.expect(&T::Gt)?;
                    if p.at(&T::LBrace) {
                        Ok(())
                    } else {
                        p.reject()
                    }
                })?,
                _ => false,
            };
        if !is_object {
            let ret = self.type_or_void()?;
            let proto = self.proto_rest(annotations, false, Some(ret), lo);
            self.pop_scope();
            let proto = proto?;
            self.expect(&T::Semi)?;
            return Ok(Some(DeclKind::ExternFunction(proto)));
        }
        let name = self.name()?;
        self.declare_type(&name);
        if self.eat(&T::Semi) {
            return Ok(None);
        }
        self.push_scope();
        let r = self.extern_body(annotations, name);
        self.pop_scope();
        r.map(|d| Some(DeclKind::Extern(d)))
    }

    fn extern_body(&mut self, annotations: Annotations, name: Ident) -> PResult<ExternDecl> {
        let type_params = self.opt_type_params()?;
        self.expect(&T::LBrace)?;
        let mut methods = Vec::new();
        while !self.at(&T::RBrace) {
            let lo = self.lo();
            let annos = self.annotations()?;
            let is_abstract = self.eat_kw(Keyword::Abstract);
            let proto =
                if !is_abstract && self.is_name_at(0) && matches!(self.peek_at(1), T::LParen) {
                    // Constructor.
                    if self.ident_at(0) != Some(name.name.as_str()) {
                        return Err(
                            self.err_here("expected a return type (only the constructor has none)")
                        );
                    }
                    let cname = self.name()?;
                    self.push_scope();
                    let params = self.params();
                    self.pop_scope();
                    FunctionProto {
                        annotations: annos,
                        is_abstract: false,
                        ret: None,
                        name: cname,
                        type_params: Vec::new(),
                        params: params?,
                        span: self.span_from(lo),
                    }
                } else {
                    let ret = self.type_or_void()?;
                    let p = self.proto_rest(annos, is_abstract, Some(ret), lo);
                    self.pop_scope();
                    p?
                };
            self.expect(&T::Semi)?;
            methods.push(proto);
        }
        self.expect(&T::RBrace)?;
        Ok(ExternDecl {
            annotations,
            name,
            type_params,
            methods,
        })
    }

    /// `action name(params) { body }`
    pub(super) fn action_decl(&mut self, annotations: Annotations) -> PResult<ActionDecl> {
        self.expect_kw(Keyword::Action)?;
        let name = self.name()?;
        self.push_scope();
        let r = (|| {
            let params = self.params()?;
            let body = self.block()?;
            Ok((params, body))
        })();
        self.pop_scope();
        let (params, body) = r?;
        Ok(ActionDecl {
            annotations,
            name,
            params,
            body,
        })
    }

    /// `parser P<T>(params);` or `parser P(params)(ctor params) { locals states }`.
    fn parser_decl(&mut self, annotations: Annotations, lo: u32) -> PResult<DeclKind> {
        self.expect_kw(Keyword::Parser)?;
        let name = self.name()?;
        self.declare_type(&name);
        self.push_scope();
        let r = self.parser_decl_rest(annotations, name, lo);
        self.pop_scope();
        r
    }

    fn parser_decl_rest(
        &mut self,
        annotations: Annotations,
        name: Ident,
        lo: u32,
    ) -> PResult<DeclKind> {
        let type_params = self.opt_type_params()?;
        let params = self.params()?;
        if self.eat(&T::Semi) {
            let span = self.span_from(lo);
            return Ok(DeclKind::ParserType(TypeProto {
                annotations,
                name,
                type_params,
                params,
                span,
            }));
        }
        let ctor_params = self.opt_ctor_params()?;
        self.expect(&T::LBrace)?;
        let mut locals = Vec::new();
        let mut states = Vec::new();
        while !self.at(&T::RBrace) {
            let lo = self.lo();
            let annos = self.annotations()?;
            if self.at_kw(Keyword::State) {
                states.push(self.parser_state(annos, lo)?);
            } else if !states.is_empty() {
                return Err(self.err_here("expected `state` or `}`"));
            } else {
                locals.push(self.local_decl(annos, lo, Ctx::Parser)?);
            }
        }
        self.expect(&T::RBrace)?;
        Ok(DeclKind::Parser(ParserDecl {
            annotations,
            name,
            type_params,
            params,
            ctor_params,
            locals,
            states,
        }))
    }

    fn parser_state(&mut self, annotations: Annotations, lo: u32) -> PResult<ParserState> {
        self.expect_kw(Keyword::State)?;
        let name = self.name()?;
        self.expect(&T::LBrace)?;
        self.push_scope();
        let r = (|| {
            let mut stmts = Vec::new();
            while !self.at(&T::RBrace) && !self.at_kw(Keyword::Transition) {
                stmts.push(self.statement_or_decl(true)?);
            }
            let transition = if self.at_kw(Keyword::Transition) {
                Some(self.transition()?)
            } else {
                None
            };
            self.expect(&T::RBrace)?;
            Ok((stmts, transition))
        })();
        self.pop_scope();
        let (stmts, transition) = r?;
        Ok(ParserState {
            annotations,
            name,
            stmts,
            transition,
            span: self.span_from(lo),
        })
    }

    fn transition(&mut self) -> PResult<Transition> {
        self.expect_kw(Keyword::Transition)?;
        if !self.at_kw(Keyword::Select) {
            let target = self.path()?;
            self.expect(&T::Semi)?;
            return Ok(Transition::Direct(target));
        }
        let lo = self.lo();
        self.bump();
        self.expect(&T::LParen)?;
        let mut exprs = Vec::new();
        if !self.at(&T::RParen) {
            loop {
                exprs.push(self.expr_gt()?);
                if !self.eat(&T::Comma) {
                    break;
                }
            }
        }
        self.expect(&T::RParen)?;
        self.expect(&T::LBrace)?;
        let mut cases = Vec::new();
        while !self.at(&T::RBrace) {
            let lo = self.lo();
            let annotations = self.annotations()?;
            let keyset = self.keyset()?;
            self.expect(&T::Colon)?;
            let next = self.path()?;
            self.expect(&T::Semi)?;
            cases.push(SelectCase {
                annotations,
                keyset,
                next,
                span: self.span_from(lo),
            });
        }
        self.expect(&T::RBrace)?;
        Ok(Transition::Select {
            exprs,
            cases,
            span: self.span_from(lo),
        })
    }

    /// `control C<T>(params);` or `control C(params)(ctor params) { locals apply { ... } }`.
    fn control_decl(&mut self, annotations: Annotations, lo: u32) -> PResult<DeclKind> {
        self.expect_kw(Keyword::Control)?;
        let name = self.name()?;
        self.declare_type(&name);
        self.push_scope();
        let r = self.control_decl_rest(annotations, name, lo);
        self.pop_scope();
        r
    }

    fn control_decl_rest(
        &mut self,
        annotations: Annotations,
        name: Ident,
        lo: u32,
    ) -> PResult<DeclKind> {
        let type_params = self.opt_type_params()?;
        let params = self.params()?;
        if self.eat(&T::Semi) {
            let span = self.span_from(lo);
            return Ok(DeclKind::ControlType(TypeProto {
                annotations,
                name,
                type_params,
                params,
                span,
            }));
        }
        let ctor_params = self.opt_ctor_params()?;
        self.expect(&T::LBrace)?;
        let mut locals = Vec::new();
        while !self.at_kw(Keyword::Apply) {
            let lo = self.lo();
            let annos = self.annotations()?;
            if self.at(&T::RBrace) {
                return Err(self.err_here("expected `apply`"));
            }
            locals.push(self.local_decl(annos, lo, Ctx::Control)?);
        }
        self.bump();
        let apply = self.block()?;
        self.expect(&T::RBrace)?;
        Ok(DeclKind::Control(ControlDecl {
            annotations,
            name,
            type_params,
            params,
            ctor_params,
            locals,
            apply,
        }))
    }

    /// A parser or control local: constant, variable, instantiation, and `value_set` (parsers)
    /// or action and table (controls).
    fn local_decl(&mut self, annos: Annotations, lo: u32, ctx: Ctx) -> PResult<Decl> {
        let kind = match self.peek() {
            T::Keyword(Keyword::Const) => DeclKind::Const(self.const_decl(annos)?),
            T::Keyword(Keyword::Action) if ctx == Ctx::Control => {
                DeclKind::Action(self.action_decl(annos)?)
            }
            T::Keyword(Keyword::Table) if ctx == Ctx::Control => {
                DeclKind::Table(self.table_decl(annos)?)
            }
            T::Keyword(Keyword::ValueSet) if ctx == Ctx::Parser => {
                self.bump();
                self.expect(&T::Lt)?;
                let elem_ty = self.type_ref()?;
                self.expect(&T::Gt)?;
                self.expect(&T::LParen)?;
                let size = self.expr_gt()?;
                self.expect(&T::RParen)?;
                let name = self.name()?;
                self.expect(&T::Semi)?;
                self.declare_object(&name);
                DeclKind::ValueSet(ValueSetDecl {
                    annotations: annos,
                    elem_ty,
                    size,
                    name,
                })
            }
            _ => {
                let ty = self.type_ref()?;
                if self.at(&T::LParen) {
                    DeclKind::Instantiation(self.instantiation_rest(annos, ty)?)
                } else {
                    DeclKind::Variable(self.variable_rest(annos, ty, true)?)
                }
            }
        };
        Ok(Decl {
            kind,
            span: self.span_from(lo),
        })
    }

    /// `table t { properties }` (spec §14.2).
    fn table_decl(&mut self, annotations: Annotations) -> PResult<TableDecl> {
        self.expect_kw(Keyword::Table)?;
        let name = self.name()?;
        self.expect(&T::LBrace)?;
        let mut properties = Vec::new();
        while !self.at(&T::RBrace) {
            properties.push(self.table_property()?);
        }
        self.expect(&T::RBrace)?;
        Ok(TableDecl {
            annotations,
            name,
            properties,
        })
    }

    fn table_property(&mut self) -> PResult<TableProperty> {
        let lo = self.lo();
        let annotations = self.annotations()?;
        let is_const = self.eat_kw(Keyword::Const);
        let assign_next = matches!(self.peek_at(1), T::Assign);
        let kind = if self.at_kw(Keyword::Key) && assign_next {
            self.bump();
            self.bump();
            self.expect(&T::LBrace)?;
            let mut keys = Vec::new();
            while !self.at(&T::RBrace) {
                let lo = self.lo();
                let expr = self.expr_gt()?;
                self.expect(&T::Colon)?;
                let mk = self.name()?;
                let match_kind = Path {
                    global: false,
                    span: mk.span,
                    name: mk,
                };
                let annotations = self.annotations()?;
                self.expect(&T::Semi)?;
                keys.push(KeyElement {
                    annotations,
                    expr,
                    match_kind,
                    span: self.span_from(lo),
                });
            }
            self.expect(&T::RBrace)?;
            TablePropertyKind::Key(keys)
        } else if self.at_kw(Keyword::Actions) && assign_next {
            self.bump();
            self.bump();
            self.expect(&T::LBrace)?;
            let mut actions = Vec::new();
            while !self.at(&T::RBrace) {
                let lo = self.lo();
                let annos = self.annotations()?;
                actions.push(self.action_ref(annos, lo)?);
                self.expect(&T::Semi)?;
            }
            self.expect(&T::RBrace)?;
            TablePropertyKind::Actions(actions)
        } else if self.at_kw(Keyword::Entries) && assign_next {
            self.bump();
            self.bump();
            self.expect(&T::LBrace)?;
            let mut entries = Vec::new();
            while !self.at(&T::RBrace) {
                entries.push(self.entry()?);
            }
            self.expect(&T::RBrace)?;
            TablePropertyKind::Entries(entries)
        } else {
            let name = self.name()?;
            self.expect(&T::Assign)?;
            let value = self.expr_gt()?;
            self.expect(&T::Semi)?;
            TablePropertyKind::Other { name, value }
        };
        Ok(TableProperty {
            annotations,
            is_const,
            kind,
            span: self.span_from(lo),
        })
    }

    /// `a` or `a(args)` in an actions list or an entry.
    fn action_ref(&mut self, annotations: Annotations, lo: u32) -> PResult<ActionRef> {
        let name = self.path()?;
        let args = if self.at(&T::LParen) {
            Some(self.args()?)
        } else {
            None
        };
        Ok(ActionRef {
            annotations,
            name,
            args,
            span: self.span_from(lo),
        })
    }

    /// `[const] [priority = p :] keyset : action [annotations] ;`
    fn entry(&mut self) -> PResult<Entry> {
        let lo = self.lo();
        let is_const = self.eat_kw(Keyword::Const);
        let priority = if self.at_kw(Keyword::Priority) && matches!(self.peek_at(1), T::Assign) {
            self.bump();
            self.bump();
            let p = self.expr_gt()?;
            self.expect(&T::Colon)?;
            Some(p)
        } else {
            None
        };
        let keyset = self.keyset()?;
        self.expect(&T::Colon)?;
        let alo = self.lo();
        let action = self.action_ref(Vec::new(), alo)?;
        let annotations = self.annotations()?;
        self.expect(&T::Semi)?;
        Ok(Entry {
            annotations,
            is_const,
            priority,
            keyset,
            action,
            span: self.span_from(lo),
        })
    }

    /// `header`, `header_union`, `struct` or `enum` declaration.
    fn derived_type_decl(&mut self, annotations: Annotations) -> PResult<DeclKind> {
        let kw = match self.peek() {
            T::Keyword(k) => *k,
            _ => return Err(self.err_here("expected a type declaration")),
        };
        self.bump();
        if kw == Keyword::Enum {
            return Ok(DeclKind::Enum(self.enum_rest(annotations)?));
        }
        let name = self.name()?;
        self.declare_type(&name);
        self.push_scope();
        let r = (|| {
            let type_params = self.opt_type_params()?;
            self.expect(&T::LBrace)?;
            let mut fields = Vec::new();
            while !self.at(&T::RBrace) {
                let lo = self.lo();
                let annotations = self.annotations()?;
                let ty = self.type_ref()?;
                let name = self.name()?;
                let ty = self.declarator(ty)?;
                self.expect(&T::Semi)?;
                fields.push(Field {
                    annotations,
                    ty,
                    name,
                    span: self.span_from(lo),
                });
            }
            self.expect(&T::RBrace)?;
            Ok((type_params, fields))
        })();
        self.pop_scope();
        let (type_params, fields) = r?;
        let d = StructDecl {
            annotations,
            name,
            type_params,
            fields,
        };
        Ok(match kw {
            Keyword::Header => DeclKind::Header(d),
            Keyword::HeaderUnion => DeclKind::HeaderUnion(d),
            _ => DeclKind::Struct(d),
        })
    }

    /// After `enum`: `N { A, B }` or `bit<8> N { A = 1, B = 2 }` (trailing comma allowed).
    fn enum_rest(&mut self, annotations: Annotations) -> PResult<EnumDecl> {
        let underlying = if self.is_name_at(0) && matches!(self.peek_at(1), T::LBrace) {
            None
        } else {
            Some(self.type_ref()?)
        };
        let name = self.name()?;
        self.declare_type(&name);
        self.expect(&T::LBrace)?;
        let mut members = Vec::new();
        loop {
            if !members.is_empty() && self.at(&T::RBrace) {
                break;
            }
            let annotations = self.annotations()?;
            let name = self.name()?;
            let value = if underlying.is_some() {
                self.expect(&T::Assign)?;
                Some(self.expr_gt()?)
            } else {
                None
            };
            members.push(EnumMember {
                annotations,
                name,
                value,
            });
            if !self.eat(&T::Comma) {
                break;
            }
        }
        self.expect(&T::RBrace)?;
        Ok(EnumDecl {
            annotations,
            underlying,
            name,
            members,
        })
    }

    /// `typedef T N;`, `type T N;`, and `typedef struct S { ... } N;` (which also yields the
    /// inline declaration).
    fn typedef_decl(
        &mut self,
        annotations: Annotations,
        lo: u32,
    ) -> PResult<(Option<Decl>, DeclKind)> {
        let is_new_type = self.at_kw(Keyword::Type);
        self.bump();
        let mut inner = None;
        let ty = if !is_new_type
            && matches!(
                self.peek(),
                T::Keyword(
                    Keyword::Header | Keyword::HeaderUnion | Keyword::Struct | Keyword::Enum
                )
            ) {
            let ilo = self.lo();
            let kind = self.derived_type_decl(Vec::new())?;
            let d = Decl {
                kind,
                span: self.span_from(ilo),
            };
            let Some(n) = d.name().cloned() else {
                return Err(self.err_here("expected a named type declaration"));
            };
            inner = Some(d);
            TypeRef {
                kind: TypeKind::Named(Path {
                    global: false,
                    span: n.span,
                    name: n,
                }),
                span: self.span_from(ilo),
            }
        } else {
            self.type_ref()?
        };
        let name = self.name()?;
        let ty = self.declarator(ty)?;
        self.expect(&T::Semi)?;
        self.declare_type(&name);
        let _ = lo;
        Ok((
            inner,
            DeclKind::Typedef(TypedefDecl {
                annotations,
                is_new_type,
                ty,
                name,
            }),
        ))
    }
}
