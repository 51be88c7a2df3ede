//! Printing an [`ast::Program`](crate::ast::Program) back as P4 source, for `--dump ast` and
//! round-trip tests.
//!
//! Guarantee: for any program produced by [`crate::parser::parse_str`], parsing the printed text
//! gives a program that prints identically (the printer is a fixed point after one round).
//! Parentheses are inserted from operator precedence; comments and original literal spellings
//! (hex, underscores) are not kept. Desugared forms print in their canonical spelling: `T x[4]`
//! as `T[4] x`, plain `bit` as `bit<1>`, `@pragma n ...` as `@n(...)`.

use crate::ast::*;
use crate::parser::expr_precedence as precedence;

/// The program as P4 source, one declaration after another.
pub fn print_program(p: &Program) -> String {
    let mut w = Printer {
        out: String::new(),
        indent: 0,
    };
    for d in &p.decls {
        w.decl(d);
        w.out.push('\n');
    }
    w.out
}

/// One expression as P4 source.
pub fn print_expr(e: &Expr) -> String {
    let mut w = Printer {
        out: String::new(),
        indent: 0,
    };
    w.expr(e);
    w.out
}

/// One type as P4 source.
pub fn print_type(t: &TypeRef) -> String {
    let mut w = Printer {
        out: String::new(),
        indent: 0,
    };
    w.ty(t);
    w.out
}

/// Whether the parentheses among `raw`'s tokens nest properly.
fn balanced(raw: &str) -> bool {
    let Ok(tokens) = crate::lexer::lex(raw) else {
        return false;
    };
    let mut depth = 0usize;
    for t in tokens {
        match t.kind {
            crate::lexer::TokenKind::LParen => depth += 1,
            crate::lexer::TokenKind::RParen if depth == 0 => return false,
            crate::lexer::TokenKind::RParen => depth -= 1,
            _ => {}
        }
    }
    depth == 0
}

struct Printer {
    out: String,
    indent: usize,
}

const PREC_TERNARY: u8 = 0;
const PREC_UNARY: u8 = 11;
const PREC_POSTFIX: u8 = 12;

fn expr_prec(e: &Expr) -> u8 {
    match &e.kind {
        ExprKind::Ternary(..) | ExprKind::Mask(..) | ExprKind::Range(..) => PREC_TERNARY,
        ExprKind::Binary(op, ..) => precedence(*op),
        ExprKind::Unary(..) | ExprKind::Cast(..) => PREC_UNARY,
        _ => PREC_POSTFIX,
    }
}

impl Printer {
    fn s(&mut self, s: &str) {
        self.out.push_str(s);
    }

    fn indentation(&self) -> String {
        format!("\n{}", "    ".repeat(self.indent))
    }

    fn nl(&mut self) {
        self.out.push('\n');
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
    }

    fn list<T>(&mut self, items: &[T], mut f: impl FnMut(&mut Self, &T)) {
        for (i, it) in items.iter().enumerate() {
            if i > 0 {
                self.s(", ");
            }
            f(self, it);
        }
    }

    // -----------------------------------------------------------------------------------------
    // Annotations

    fn annotations(&mut self, a: &Annotations) {
        for an in a {
            self.annotation(an);
            if !self.out.ends_with(&self.indentation()) {
                self.s(" ");
            }
        }
    }

    fn annotation(&mut self, a: &Annotation) {
        self.s("@");
        self.s(&a.name.name);
        match &a.body {
            AnnotationBody::Empty => {}
            AnnotationBody::Expressions(es) => {
                self.s("(");
                self.list(es, |w, e| w.expr(e));
                self.s(")");
            }
            AnnotationBody::KeyValues(kvs) => {
                self.s("[");
                self.list(kvs, |w, (k, v)| {
                    w.s(&k.name);
                    w.s(" = ");
                    w.expr(v);
                });
                self.s("]");
            }
            AnnotationBody::StructuredExpressions(es) => {
                self.s("[");
                self.list(es, |w, e| w.expr(e));
                self.s("]");
            }
            AnnotationBody::Unparsed(raw) if balanced(raw) => {
                self.s("(");
                self.s(raw);
                self.s(")");
            }
            AnnotationBody::Unparsed(raw) => {
                // Only a `@pragma` line can hold unbalanced parentheses; print it as one.
                self.out.truncate(self.out.len() - 1 - a.name.name.len());
                self.s("@pragma ");
                self.s(&a.name.name);
                self.s(" ");
                self.s(raw);
                self.nl();
            }
        }
    }

    // -----------------------------------------------------------------------------------------
    // Types

    fn ty(&mut self, t: &TypeRef) {
        match &t.kind {
            TypeKind::Bool => self.s("bool"),
            TypeKind::Error => self.s("error"),
            TypeKind::MatchKind => self.s("match_kind"),
            TypeKind::String => self.s("string"),
            TypeKind::Void => self.s("void"),
            TypeKind::Int => self.s("int"),
            TypeKind::Bit(w) => self.width("bit", w),
            TypeKind::SignedInt(w) => self.width("int", w),
            TypeKind::Varbit(w) => self.width("varbit", w),
            TypeKind::Named(p) => self.path(p),
            TypeKind::Specialized(p, args) => {
                self.path(p);
                self.s("<");
                self.list(args, |w, t| w.ty(t));
                self.s(">");
            }
            TypeKind::Stack(t, n) => {
                self.ty(t);
                self.s("[");
                self.expr(n);
                self.s("]");
            }
            TypeKind::Tuple(args) => {
                self.s("tuple<");
                self.list(args, |w, t| w.ty(t));
                self.s(">");
            }
            TypeKind::List(t) => {
                self.s("list<");
                self.ty(t);
                self.s(">");
            }
            TypeKind::DontCare => self.s("_"),
        }
    }

    fn width(&mut self, kw: &str, w: &Expr) {
        self.s(kw);
        self.s("<");
        match &w.kind {
            ExprKind::Int { .. } | ExprKind::Path(_) => self.expr(w),
            _ => {
                self.s("(");
                self.expr(w);
                self.s(")");
            }
        }
        self.s(">");
    }

    fn path(&mut self, p: &Path) {
        if p.global {
            self.s(".");
        }
        self.s(&p.name.name);
    }

    fn type_params(&mut self, tps: &[Ident]) {
        if !tps.is_empty() {
            self.s("<");
            self.list(tps, |w, i| w.s(&i.name));
            self.s(">");
        }
    }

    fn params(&mut self, ps: &[Param]) {
        self.s("(");
        self.list(ps, |w, p| {
            w.annotations(&p.annotations);
            match p.direction {
                Direction::None => {}
                Direction::In => w.s("in "),
                Direction::Out => w.s("out "),
                Direction::InOut => w.s("inout "),
            }
            w.ty(&p.ty);
            w.s(" ");
            w.s(&p.name.name);
            if let Some(d) = &p.default {
                w.s(" = ");
                w.expr(d);
            }
        });
        self.s(")");
    }

    // -----------------------------------------------------------------------------------------
    // Expressions

    fn expr(&mut self, e: &Expr) {
        self.expr_min(e, PREC_TERNARY);
    }

    /// Prints `e`, parenthesised if it binds looser than `min`.
    fn expr_min(&mut self, e: &Expr, min: u8) {
        if expr_prec(e) < min {
            self.s("(");
            self.expr_inner(e);
            self.s(")");
        } else {
            self.expr_inner(e);
        }
    }

    fn expr_inner(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Bool(b) => self.s(if *b { "true" } else { "false" }),
            ExprKind::Int {
                value,
                width,
                radix,
            } => {
                // In the base it was written in, so printing and parsing again gives the same tree.
                let v = crate::ast::int_text(value, *radix);
                let s = match width {
                    None => v,
                    Some((w, signed)) => format!("{w}{}{v}", if *signed { 's' } else { 'w' }),
                };
                self.s(&s);
            }
            ExprKind::String(s) => {
                self.s("\"");
                for c in s.chars() {
                    match c {
                        '"' => self.s("\\\""),
                        '\\' => self.s("\\\\"),
                        '\n' => self.s("\\n"),
                        '\t' => self.s("\\t"),
                        '\r' => self.s("\\r"),
                        c => self.out.push(c),
                    }
                }
                self.s("\"");
            }
            ExprKind::Path(p) => self.path(p),
            ExprKind::Type(t) => self.ty(t),
            ExprKind::Member(b, m) => {
                self.expr_min(b, PREC_POSTFIX);
                self.s(".");
                self.s(&m.name);
            }
            ExprKind::Index(b, i) => {
                self.expr_min(b, PREC_POSTFIX);
                self.s("[");
                self.expr(i);
                self.s("]");
            }
            ExprKind::Slice(b, h, l) => {
                self.expr_min(b, PREC_POSTFIX);
                self.s("[");
                self.expr(h);
                self.s(":");
                self.expr(l);
                self.s("]");
            }
            ExprKind::PlusSlice(b, base, w) => {
                self.expr_min(b, PREC_POSTFIX);
                self.s("[");
                self.expr(base);
                self.s(" +: ");
                self.expr(w);
                self.s("]");
            }
            ExprKind::Call {
                callee,
                type_args,
                args,
            } => {
                self.expr_min(callee, PREC_POSTFIX);
                if !type_args.is_empty() {
                    self.s("<");
                    self.list(type_args, |w, t| w.ty(t));
                    self.s(">");
                }
                self.args(args);
            }
            ExprKind::Unary(op, x) => {
                self.s(match op {
                    UnOp::Not => "!",
                    UnOp::BitNot => "~",
                    UnOp::Neg => "-",
                    UnOp::Plus => "+",
                });
                // `- -x` must not print as `--x`, nor `+ +x` as the `++` operator.
                if matches!(x.kind, ExprKind::Unary(..)) {
                    self.s("(");
                    self.expr(x);
                    self.s(")");
                } else {
                    self.expr_min(x, PREC_UNARY);
                }
            }
            ExprKind::Binary(op, l, r) => {
                let p = precedence(*op);
                self.expr_min(l, p);
                self.s(" ");
                self.s(op.symbol());
                self.s(" ");
                self.expr_min(r, p + 1);
            }
            ExprKind::Ternary(c, a, b) => {
                self.expr_min(c, 1);
                self.s(" ? ");
                self.expr(a);
                self.s(" : ");
                self.expr(b);
            }
            ExprKind::Cast(t, x) => {
                self.s("(");
                self.ty(t);
                self.s(")");
                self.expr_min(x, PREC_UNARY);
            }
            ExprKind::List { items, has_dots } => {
                self.s("{");
                self.list(items, |w, e| w.expr(e));
                if *has_dots {
                    self.s(if items.is_empty() { "..." } else { ", ..." });
                }
                self.s("}");
            }
            ExprKind::StructInit { fields, has_dots } => {
                self.s("{ ");
                self.list(fields, |w, (n, e)| {
                    w.s(&n.name);
                    w.s(" = ");
                    w.expr(e);
                });
                if *has_dots {
                    self.s(if fields.is_empty() { "..." } else { ", ..." });
                }
                self.s(" }");
            }
            ExprKind::Invalid => self.s("{#}"),
            ExprKind::Mask(a, b) => {
                self.expr_min(a, 1);
                self.s(" &&& ");
                self.expr_min(b, 1);
            }
            ExprKind::Range(a, b) => {
                self.expr_min(a, 1);
                self.s(" .. ");
                self.expr_min(b, 1);
            }
            ExprKind::Default => self.s("default"),
            ExprKind::DontCare => self.s("_"),
            ExprKind::This => self.s("this"),
            ExprKind::Dots => self.s("..."),
        }
    }

    fn args(&mut self, args: &[Arg]) {
        self.s("(");
        self.list(args, |w, a| {
            if let Some(n) = &a.name {
                w.s(&n.name);
                w.s(" = ");
            }
            w.expr(&a.value);
        });
        self.s(")");
    }

    /// A keyset: a tuple prints as `(k1, k2)` (a one-element tuple only when that reads back as
    /// one, i.e. for `(m &&& v)`, `(a .. b)`, `(default)`, `(_)`).
    fn keyset(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::List {
                items,
                has_dots: false,
            } if items.len() >= 2
                || (items.len() == 1
                    && matches!(
                        items[0].kind,
                        ExprKind::Mask(..)
                            | ExprKind::Range(..)
                            | ExprKind::Default
                            | ExprKind::DontCare
                    )) =>
            {
                self.s("(");
                self.list(items, |w, e| w.expr(e));
                self.s(")");
            }
            _ => self.expr(e),
        }
    }

    // -----------------------------------------------------------------------------------------
    // Declarations

    fn decl(&mut self, d: &Decl) {
        match &d.kind {
            DeclKind::Const(c) => {
                self.annotations(&c.annotations);
                self.s("const ");
                self.ty(&c.ty);
                self.s(" ");
                self.s(&c.name.name);
                self.s(" = ");
                self.expr(&c.value);
                self.s(";");
            }
            DeclKind::Variable(v) => {
                self.variable(v);
                self.s(";");
            }
            DeclKind::Typedef(t) => {
                self.annotations(&t.annotations);
                self.s(if t.is_new_type { "type " } else { "typedef " });
                self.ty(&t.ty);
                self.s(" ");
                self.s(&t.name.name);
                self.s(";");
            }
            DeclKind::Header(s) => self.struct_decl("header", s),
            DeclKind::HeaderUnion(s) => self.struct_decl("header_union", s),
            DeclKind::Struct(s) => self.struct_decl("struct", s),
            DeclKind::Enum(e) => {
                self.annotations(&e.annotations);
                self.s("enum ");
                if let Some(t) = &e.underlying {
                    self.ty(t);
                    self.s(" ");
                }
                self.s(&e.name.name);
                self.s(" {");
                self.indent += 1;
                for (i, m) in e.members.iter().enumerate() {
                    self.nl();
                    self.annotations(&m.annotations);
                    self.s(&m.name.name);
                    if let Some(v) = &m.value {
                        self.s(" = ");
                        self.expr(v);
                    }
                    if i + 1 < e.members.len() {
                        self.s(",");
                    }
                }
                self.indent -= 1;
                self.nl();
                self.s("}");
            }
            DeclKind::Error(ids) | DeclKind::MatchKind(ids) => {
                self.s(if matches!(d.kind, DeclKind::Error(_)) {
                    "error {"
                } else {
                    "match_kind {"
                });
                self.indent += 1;
                for (i, id) in ids.iter().enumerate() {
                    self.nl();
                    self.s(&id.name);
                    if i + 1 < ids.len() {
                        self.s(",");
                    }
                }
                self.indent -= 1;
                self.nl();
                self.s("}");
            }
            DeclKind::Extern(x) => {
                self.annotations(&x.annotations);
                self.s("extern ");
                self.s(&x.name.name);
                self.type_params(&x.type_params);
                self.s(" {");
                self.indent += 1;
                for m in &x.methods {
                    self.nl();
                    self.proto(m);
                    self.s(";");
                }
                self.indent -= 1;
                self.nl();
                self.s("}");
            }
            DeclKind::ExternFunction(f) => {
                self.annotations(&f.annotations);
                self.s("extern ");
                self.proto_sig(f);
                self.s(";");
            }
            DeclKind::ParserType(t) => self.type_proto("parser", t),
            DeclKind::ControlType(t) => self.type_proto("control", t),
            DeclKind::PackageType(t) => self.type_proto("package", t),
            DeclKind::Parser(p) => {
                self.annotations(&p.annotations);
                self.s("parser ");
                self.s(&p.name.name);
                self.type_params(&p.type_params);
                self.params(&p.params);
                if !p.ctor_params.is_empty() {
                    self.params(&p.ctor_params);
                }
                self.s(" {");
                self.indent += 1;
                for l in &p.locals {
                    self.nl();
                    self.decl(l);
                }
                for st in &p.states {
                    self.nl();
                    self.state(st);
                }
                self.indent -= 1;
                self.nl();
                self.s("}");
            }
            DeclKind::Control(c) => {
                self.annotations(&c.annotations);
                self.s("control ");
                self.s(&c.name.name);
                self.type_params(&c.type_params);
                self.params(&c.params);
                if !c.ctor_params.is_empty() {
                    self.params(&c.ctor_params);
                }
                self.s(" {");
                self.indent += 1;
                for l in &c.locals {
                    self.nl();
                    self.decl(l);
                }
                self.nl();
                self.s("apply ");
                self.block(&c.apply);
                self.indent -= 1;
                self.nl();
                self.s("}");
            }
            DeclKind::Action(a) => {
                self.annotations(&a.annotations);
                self.s("action ");
                self.s(&a.name.name);
                self.params(&a.params);
                self.s(" ");
                self.block(&a.body);
            }
            DeclKind::Function(f) => {
                self.proto(&f.proto);
                self.s(" ");
                self.block(&f.body);
            }
            DeclKind::Table(t) => self.table(t),
            DeclKind::Instantiation(i) => {
                self.annotations(&i.annotations);
                self.ty(&i.ty);
                self.args(&i.args);
                self.s(" ");
                self.s(&i.name.name);
                if let Some(init) = &i.initializer {
                    self.s(" = {");
                    self.indent += 1;
                    for d in init {
                        self.nl();
                        self.decl(d);
                    }
                    self.indent -= 1;
                    self.nl();
                    self.s("}");
                }
                self.s(";");
            }
            DeclKind::ValueSet(v) => {
                self.annotations(&v.annotations);
                self.s("value_set<");
                self.ty(&v.elem_ty);
                self.s(">(");
                self.expr(&v.size);
                self.s(") ");
                self.s(&v.name.name);
                self.s(";");
            }
        }
    }

    fn variable(&mut self, v: &VariableDecl) {
        self.annotations(&v.annotations);
        self.ty(&v.ty);
        self.s(" ");
        self.s(&v.name.name);
        if let Some(i) = &v.init {
            self.s(" = ");
            self.expr(i);
        }
    }

    fn struct_decl(&mut self, kw: &str, s: &StructDecl) {
        self.annotations(&s.annotations);
        self.s(kw);
        self.s(" ");
        self.s(&s.name.name);
        self.type_params(&s.type_params);
        self.s(" {");
        self.indent += 1;
        for f in &s.fields {
            self.nl();
            self.annotations(&f.annotations);
            self.ty(&f.ty);
            self.s(" ");
            self.s(&f.name.name);
            self.s(";");
        }
        self.indent -= 1;
        self.nl();
        self.s("}");
    }

    fn proto(&mut self, f: &FunctionProto) {
        self.annotations(&f.annotations);
        self.proto_sig(f);
    }

    /// A prototype without its annotations.
    fn proto_sig(&mut self, f: &FunctionProto) {
        if f.is_abstract {
            self.s("abstract ");
        }
        if let Some(r) = &f.ret {
            self.ty(r);
            self.s(" ");
        }
        self.s(&f.name.name);
        self.type_params(&f.type_params);
        self.params(&f.params);
    }

    fn type_proto(&mut self, kw: &str, t: &TypeProto) {
        self.annotations(&t.annotations);
        self.s(kw);
        self.s(" ");
        self.s(&t.name.name);
        self.type_params(&t.type_params);
        self.params(&t.params);
        self.s(";");
    }

    fn state(&mut self, st: &ParserState) {
        self.annotations(&st.annotations);
        self.s("state ");
        self.s(&st.name.name);
        self.s(" {");
        self.indent += 1;
        for s in &st.stmts {
            self.nl();
            self.stmt(s);
        }
        if let Some(t) = &st.transition {
            self.nl();
            self.s("transition ");
            match t {
                Transition::Direct(p) => {
                    self.path(p);
                    self.s(";");
                }
                Transition::Select { exprs, cases, .. } => {
                    self.s("select(");
                    self.list(exprs, |w, e| w.expr(e));
                    self.s(") {");
                    self.indent += 1;
                    for c in cases {
                        self.nl();
                        self.annotations(&c.annotations);
                        self.keyset(&c.keyset);
                        self.s(": ");
                        self.path(&c.next);
                        self.s(";");
                    }
                    self.indent -= 1;
                    self.nl();
                    self.s("}");
                }
            }
        }
        self.indent -= 1;
        self.nl();
        self.s("}");
    }

    fn table(&mut self, t: &TableDecl) {
        self.annotations(&t.annotations);
        self.s("table ");
        self.s(&t.name.name);
        self.s(" {");
        self.indent += 1;
        for p in &t.properties {
            self.nl();
            self.annotations(&p.annotations);
            if p.is_const {
                self.s("const ");
            }
            match &p.kind {
                TablePropertyKind::Key(keys) => {
                    self.s("key = {");
                    self.indent += 1;
                    for k in keys {
                        self.nl();
                        self.expr(&k.expr);
                        self.s(": ");
                        self.path(&k.match_kind);
                        for a in &k.annotations {
                            self.s(" ");
                            self.annotation(a);
                        }
                        self.s(";");
                    }
                    self.indent -= 1;
                    self.nl();
                    self.s("}");
                }
                TablePropertyKind::Actions(acts) => {
                    self.s("actions = {");
                    self.indent += 1;
                    for a in acts {
                        self.nl();
                        self.action_ref(a);
                        self.s(";");
                    }
                    self.indent -= 1;
                    self.nl();
                    self.s("}");
                }
                TablePropertyKind::Entries(entries) => {
                    self.s("entries = {");
                    self.indent += 1;
                    for e in entries {
                        self.nl();
                        if e.is_const {
                            self.s("const ");
                        }
                        if let Some(p) = &e.priority {
                            self.s("priority = ");
                            self.expr(p);
                            self.s(": ");
                        }
                        self.keyset(&e.keyset);
                        self.s(": ");
                        self.action_ref(&e.action);
                        for a in &e.annotations {
                            self.s(" ");
                            self.annotation(a);
                        }
                        self.s(";");
                    }
                    self.indent -= 1;
                    self.nl();
                    self.s("}");
                }
                TablePropertyKind::Other { name, value } => {
                    self.s(&name.name);
                    self.s(" = ");
                    self.expr(value);
                    self.s(";");
                }
            }
        }
        self.indent -= 1;
        self.nl();
        self.s("}");
    }

    fn action_ref(&mut self, a: &ActionRef) {
        self.annotations(&a.annotations);
        self.path(&a.name);
        if let Some(args) = &a.args {
            self.args(args);
        }
    }

    // -----------------------------------------------------------------------------------------
    // Statements

    fn block(&mut self, b: &Block) {
        self.annotations(&b.annotations);
        self.s("{");
        self.indent += 1;
        for s in &b.stmts {
            self.nl();
            self.stmt(s);
        }
        self.indent -= 1;
        self.nl();
        self.s("}");
    }

    fn stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Assign(..) | StmtKind::OpAssign(..) | StmtKind::Call(_) => {
                self.simple_stmt(s);
                self.s(";");
            }
            StmtKind::Empty => self.s(";"),
            StmtKind::Block(b) => self.block(b),
            StmtKind::If {
                cond,
                then,
                otherwise,
            } => {
                self.s("if (");
                self.expr(cond);
                self.s(") ");
                self.stmt(then);
                if let Some(o) = otherwise {
                    self.s(" else ");
                    self.stmt(o);
                }
            }
            StmtKind::Switch { expr, cases } => {
                self.s("switch (");
                self.expr(expr);
                self.s(") {");
                self.indent += 1;
                for c in cases {
                    self.nl();
                    match &c.label {
                        SwitchLabel::Default(_) => self.s("default"),
                        SwitchLabel::Expr(e) => self.expr(e),
                    }
                    self.s(":");
                    if let Some(b) = &c.body {
                        self.s(" ");
                        self.block(b);
                    }
                }
                self.indent -= 1;
                self.nl();
                self.s("}");
            }
            StmtKind::Exit => self.s("exit;"),
            StmtKind::Return(e) => {
                self.s("return");
                if let Some(e) = e {
                    self.s(" ");
                    self.expr(e);
                }
                self.s(";");
            }
            StmtKind::Decl(d) => self.decl(d),
            StmtKind::For {
                init,
                cond,
                update,
                body,
            } => {
                self.s("for (");
                self.list(init, |w, s| w.simple_stmt(s));
                self.s("; ");
                if let Some(c) = cond {
                    self.expr(c);
                }
                self.s("; ");
                self.list(update, |w, s| w.simple_stmt(s));
                self.s(") ");
                self.stmt(body);
            }
            StmtKind::ForIn {
                ty,
                var,
                range,
                body,
            } => {
                self.s("for (");
                if let Some(t) = ty {
                    self.ty(t);
                    self.s(" ");
                }
                self.s(&var.name);
                self.s(" in ");
                self.expr(range);
                self.s(") ");
                self.stmt(body);
            }
            StmtKind::Break => self.s("break;"),
            StmtKind::Continue => self.s("continue;"),
        }
    }

    /// An assignment, call or variable declaration without its `;` (as in `for` headers).
    fn simple_stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Assign(l, r) => {
                self.expr(l);
                self.s(" = ");
                self.expr(r);
            }
            StmtKind::OpAssign(op, l, r) => {
                self.expr(l);
                self.s(" ");
                self.s(op.symbol());
                self.s("= ");
                self.expr(r);
            }
            StmtKind::Call(e) => self.expr(e),
            StmtKind::Decl(d) => match &d.kind {
                DeclKind::Variable(v) => self.variable(v),
                _ => self.decl(d),
            },
            _ => self.stmt(s),
        }
    }
}
