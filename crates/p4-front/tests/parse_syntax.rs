//! The parser builds the right tree for P4_16's hard spots.

use p4_front::ast::*;
use p4_front::parser::{dump_tokens, parse, parse_str};
use p4_front::printer::{print_expr, print_program};
use p4_front::source::Unit;

// ---------------------------------------------------------------------------------------------
// Helpers

/// An expression as an S-expression, showing the tree shape.
fn sx(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Binary(op, a, b) => format!("({} {} {})", op.symbol(), sx(a), sx(b)),
        ExprKind::Unary(op, a) => {
            let o = match op {
                UnOp::Not => "!",
                UnOp::BitNot => "~",
                UnOp::Neg => "neg",
                UnOp::Plus => "pos",
            };
            format!("({o} {})", sx(a))
        }
        ExprKind::Ternary(c, a, b) => format!("(? {} {} {})", sx(c), sx(a), sx(b)),
        ExprKind::Cast(t, a) => format!("(cast {} {})", p4_front::printer::print_type(t), sx(a)),
        ExprKind::Member(a, m) => format!("(. {} {})", sx(a), m.name),
        ExprKind::Index(a, i) => format!("([] {} {})", sx(a), sx(i)),
        ExprKind::Slice(a, h, l) => format!("(slice {} {} {})", sx(a), sx(h), sx(l)),
        ExprKind::PlusSlice(a, b, w) => format!("(+: {} {} {})", sx(a), sx(b), sx(w)),
        ExprKind::Call {
            callee,
            type_args,
            args,
        } => {
            let mut s = format!("(call {}", sx(callee));
            if !type_args.is_empty() {
                let ts: Vec<String> = type_args
                    .iter()
                    .map(p4_front::printer::print_type)
                    .collect();
                s.push_str(&format!(" <{}>", ts.join(",")));
            }
            for a in args {
                match &a.name {
                    Some(n) => s.push_str(&format!(" {}={}", n.name, sx(&a.value))),
                    None => s.push_str(&format!(" {}", sx(&a.value))),
                }
            }
            s.push(')');
            s
        }
        ExprKind::Mask(a, b) => format!("(&&& {} {})", sx(a), sx(b)),
        ExprKind::Range(a, b) => format!("(.. {} {})", sx(a), sx(b)),
        ExprKind::List { items, has_dots } => {
            let v: Vec<String> = items.iter().map(sx).collect();
            format!(
                "(list {}{})",
                v.join(" "),
                if *has_dots { " ..." } else { "" }
            )
        }
        ExprKind::StructInit { fields, has_dots } => {
            let v: Vec<String> = fields
                .iter()
                .map(|(n, e)| format!("{}={}", n.name, sx(e)))
                .collect();
            format!(
                "(struct {}{})",
                v.join(" "),
                if *has_dots { " ..." } else { "" }
            )
        }
        ExprKind::Type(t) => format!("(type {})", p4_front::printer::print_type(t)),
        _ => print_expr(e),
    }
}

fn prog(src: &str) -> Program {
    match parse_str(src) {
        Ok(p) => p,
        Err(d) => panic!("{src}\n-> {} at {:?}", d.message, d.span),
    }
}

/// The initializer of the last top-level constant `x` in `decls` + `const T x = expr;`.
fn expr_in(decls: &str, ty: &str, expr: &str) -> String {
    let p = prog(&format!("{decls}\nconst {ty} x = {expr};"));
    match &p.decls.last().unwrap().kind {
        DeclKind::Const(c) => sx(&c.value),
        _ => unreachable!(),
    }
}

fn ex(expr: &str) -> String {
    expr_in("", "bit<8>", expr)
}

/// The statements of `control c() { apply { body } }` after `decls`.
fn stmts(decls: &str, body: &str) -> Vec<Stmt> {
    let p = prog(&format!("{decls}\ncontrol c() {{ apply {{ {body} }} }}"));
    match &p.decls.last().unwrap().kind {
        DeclKind::Control(c) => c.apply.stmts.clone(),
        _ => unreachable!(),
    }
}

fn err(src: &str) -> String {
    match parse_str(src) {
        Ok(_) => panic!("expected an error: {src}"),
        Err(d) => d.message,
    }
}

// ---------------------------------------------------------------------------------------------
// Expressions

#[test]
fn precedence_follows_p4_not_c() {
    // Bitwise operators bind tighter than comparisons in P4.
    assert_eq!(ex("a & b == c"), "(== (& a b) c)");
    assert_eq!(ex("a | b < c"), "(< (| a b) c)");
    assert_eq!(ex("a + b * c"), "(+ a (* b c))");
    assert_eq!(ex("a << 1 + 2"), "(<< a (+ 1 2))");
    assert_eq!(ex("a || b && c"), "(|| a (&& b c))");
    assert_eq!(ex("a - b - c"), "(- (- a b) c)");
    assert_eq!(ex("a ++ b |+| c |-| d"), "(|-| (|+| (++ a b) c) d)");
    assert_eq!(ex("!a.b"), "(! (. a b))");
    assert_eq!(ex("-x[3:0]"), "(neg (slice x 3 0))");
    assert_eq!(ex("~x[b +: 8]"), "(~ (+: x b 8))");
    assert_eq!(ex("c ? a : b ? d : e"), "(? c a (? b d e))");
    assert_eq!(ex("c || d ? a + 1 : b"), "(? (|| c d) (+ a 1) b)");
}

#[test]
fn shift_right_is_two_adjacent_gt() {
    assert_eq!(ex("a >> 2"), "(>> a 2)");
    assert_eq!(ex("a > b"), "(> a b)");
    assert_eq!(ex("a >= b"), "(>= a b)");
    assert!(parse_str("const bit<8> x = a > > 2;").is_err());
}

#[test]
fn literals() {
    assert_eq!(ex("8w255"), "8w255");
    assert_eq!(ex("4s3"), "4s3");
    assert_eq!(ex("0xFF_FF"), "0xffff");
    assert_eq!(ex("16w0b1010"), "16w0b1010");
    assert_eq!(ex("\"a\\\"b\""), "\"a\\\"b\"");
    assert_eq!(ex("true"), "true");
}

#[test]
fn type_arguments_versus_less_than() {
    let decls = "extern T f<T>(in T x); typedef bit<8> B;";
    assert_eq!(
        expr_in(decls, "bit<8>", "f<bit<8>>(x)"),
        "(call f <bit<8>> x)"
    );
    assert_eq!(expr_in(decls, "bit<8>", "f<B>(x)"), "(call f <B> x)");
    // `b` is not a type: comparisons.
    assert_eq!(expr_in(decls, "bool", "a < b > (c)"), "(> (< a b) c)");
    assert_eq!(
        expr_in(decls, "bool", "a < B.minSizeInBits()"),
        "(< a (call (. B minSizeInBits)))"
    );
    assert_eq!(
        expr_in(decls, "bool", "a < 3 && b > 4"),
        "(&& (< a 3) (> b 4))"
    );
    // Method call with type arguments on a member.
    assert_eq!(
        expr_in(decls, "bit<8>", "p.lookahead<bit<16>>()"),
        "(call (. p lookahead) <bit<16>>)"
    );
}

#[test]
fn casts_need_a_known_type() {
    let decls = "typedef bit<8> T; struct S { bit<8> f; }";
    assert_eq!(
        expr_in(decls, "bit<8>", "(bit<8>) x + 1"),
        "(+ (cast bit<8> x) 1)"
    );
    assert_eq!(expr_in(decls, "bit<8>", "(T) -1"), "(cast T (neg 1))");
    assert_eq!(expr_in(decls, "bit<8>", "(x) - 1"), "(- x 1)");
    assert_eq!(expr_in(decls, "S", "(S){ f = 1 }"), "(cast S (struct f=1))");
    assert_eq!(
        expr_in(decls, "bit<8>", "(bit<8>)(bit<4>)x"),
        "(cast bit<8> (cast bit<4> x))"
    );
    assert_eq!(
        expr_in(decls, "bool", "(error.NoError == e)"),
        "(== (. (type error) NoError) e)"
    );
}

#[test]
fn type_names_in_expressions() {
    let decls = "enum E { A } header H { bit<8> f; } extern C<T> { C(bit<32> n); }";
    assert_eq!(expr_in(decls, "E", "E.A"), "(. E A)");
    assert_eq!(
        expr_in(decls, "int", "H.minSizeInBits()"),
        "(call (. H minSizeInBits))"
    );
    assert_eq!(
        expr_in(decls, "int", "bit<8>.maxSizeInBytes()"),
        "(call (. (type bit<8>) maxSizeInBytes))"
    );
    assert_eq!(
        expr_in(decls, "error", "error.NoMatch"),
        "(. (type error) NoMatch)"
    );
    assert_eq!(
        expr_in(decls, "bit<8>", "C<bit<8>>(5).read()"),
        "(call (. (call (type C<bit<8>>) 5) read))"
    );
    assert_eq!(expr_in(decls, "bit<8>", ".x"), ".x");
}

#[test]
fn lists_structs_and_defaults() {
    assert_eq!(ex("{a, b,}"), "(list a b)");
    assert_eq!(ex("{}"), "(list )");
    assert_eq!(ex("{a = 1, b = 2,}"), "(struct a=1 b=2)");
    assert_eq!(ex("{a = 1, ...}"), "(struct a=1 ...)");
    assert_eq!(ex("{1, ...}"), "(list 1 ...)");
    assert_eq!(ex("{...}"), "(list  ...)");
    assert_eq!(ex("..."), "...");
    assert_eq!(ex("{#}"), "{#}");
    assert!(err("const S x = {1, ..., 2};").contains("`...` must be the last"));
}

#[test]
fn arguments() {
    assert_eq!(ex("f(x = 1, y = _, _)"), "(call f x=1 y=_ _)");
    assert_eq!(ex("hs.next.f"), "(. (. hs next) f)");
    assert_eq!(ex("hs.push_front(2)"), "(call (. hs push_front) 2)");
    assert_eq!(ex("t.apply().hit"), "(. (call (. t apply)) hit)");
}

// ---------------------------------------------------------------------------------------------
// Types and declarations

fn const_type(src: &str) -> String {
    let p = prog(src);
    match &p.decls.last().unwrap().kind {
        DeclKind::Const(c) => p4_front::printer::print_type(&c.ty),
        DeclKind::Typedef(t) => p4_front::printer::print_type(&t.ty),
        DeclKind::Instantiation(i) => p4_front::printer::print_type(&i.ty),
        k => panic!("{k:?}"),
    }
}

#[test]
fn types() {
    assert_eq!(const_type("const bit x = 1;"), "bit<1>");
    assert_eq!(const_type("const bit<(W + 1)> x = 1;"), "bit<(W + 1)>");
    assert_eq!(const_type("const int<W> x = 1;"), "int<W>");
    assert_eq!(const_type("typedef varbit<32> V;"), "varbit<32>");
    assert_eq!(
        const_type("typedef tuple<bit<8>, bool> V;"),
        "tuple<bit<8>, bool>"
    );
    assert_eq!(const_type("typedef list<bit<8>> V;"), "list<bit<8>>");
    assert_eq!(const_type("header H {} typedef H[4] V;"), "H[4]");
    assert_eq!(const_type("header H {} typedef H V[4];"), "H[4]");
    assert_eq!(
        const_type("extern R<T, U> { R(bit<32> n); } R<bit<32>, bit<16>>(1024) r;"),
        "R<bit<32>, bit<16>>"
    );
    assert_eq!(
        const_type("extern R<T> { R(); } R<R<bit<8>>>() r;"),
        "R<R<bit<8>>>"
    );
}

#[test]
fn declarations_of_every_kind() {
    let src = r#"
error { A, B }
match_kind { exact, ternary, }
typedef struct Point { int<32> x; int<32> y; } Pt;
type bit<9> Port;
enum E { X, Y, }
enum bit<8> SE { X = 1, Y = 2 }
header H { bit<8> f; }
header_union U { H a; H b; }
struct S<T> { T t; }
extern Ck<T> { Ck(); abstract T hash(in T x); T get<W>(in W w); }
extern void mark(inout S<bit<8>> s);
extern Fwd;
parser P<H>(packet_in p, out H h);
control C(inout H h);
package Pkg<H>(P<H> p, C c = C());
const bit<8> K = 1;
action a(inout bit<8> x, bit<8> y) { x = y; }
bit<8> f<T>(in T x) { return 1; }
Ck<bit<8>>() ck = { bit<8> hash(in bit<8> x) { return this.get<bit<8>>(x); } };
parser p(packet_in pk, out H h)(bit<8> n) {
    value_set<bit<8>>(4) pvs;
    bit<8> v = 0;
    state start { pk.extract(h); transition select(h.f, v) { (1, _): accept; (pvs, 2 &&& 3): s2; default: reject; } }
    state s2 { transition accept; }
}
control c(inout H h) {
    table t {
        key = { h.f: exact @name("f"); }
        actions = { a; @defaultonly NoAction; }
        const entries = { priority = 10: (1 .. 2) : a(1); const 3 : NoAction(); }
        default_action = NoAction();
        size = 1024;
    }
    apply { t.apply(); }
}
"#;
    let p = prog(src);
    let kinds: Vec<&str> = p
        .decls
        .iter()
        .map(|d| match d.kind {
            DeclKind::Const(_) => "const",
            DeclKind::Variable(_) => "var",
            DeclKind::Typedef(_) => "typedef",
            DeclKind::Header(_) => "header",
            DeclKind::HeaderUnion(_) => "union",
            DeclKind::Struct(_) => "struct",
            DeclKind::Enum(_) => "enum",
            DeclKind::Error(_) => "error",
            DeclKind::MatchKind(_) => "match_kind",
            DeclKind::Extern(_) => "extern",
            DeclKind::ExternFunction(_) => "extern_fn",
            DeclKind::ParserType(_) => "parser_type",
            DeclKind::ControlType(_) => "control_type",
            DeclKind::PackageType(_) => "package",
            DeclKind::Parser(_) => "parser",
            DeclKind::Control(_) => "control",
            DeclKind::Action(_) => "action",
            DeclKind::Function(_) => "function",
            DeclKind::Table(_) => "table",
            DeclKind::Instantiation(_) => "instance",
            DeclKind::ValueSet(_) => "value_set",
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "error",
            "match_kind",
            "struct",
            "typedef",
            "typedef",
            "enum",
            "enum",
            "header",
            "union",
            "struct",
            "extern",
            "extern_fn",
            "parser_type",
            "control_type",
            "package",
            "const",
            "action",
            "function",
            "instance",
            "parser",
            "control"
        ]
    );
    let DeclKind::Extern(x) = &p.decls[10].kind else {
        panic!()
    };
    assert!(x.methods[0].ret.is_none() && x.methods[1].is_abstract);
    assert_eq!(x.methods[2].type_params[0].name, "W");
    let DeclKind::Instantiation(i) = &p.decls[18].kind else {
        panic!()
    };
    assert_eq!(i.initializer.as_ref().map(|v| v.len()), Some(1));
    let DeclKind::Parser(pd) = &p.decls[19].kind else {
        panic!()
    };
    assert_eq!(pd.ctor_params.len(), 1);
    assert_eq!(pd.locals.len(), 2);
    let Some(Transition::Select { cases, .. }) = &pd.states[0].transition else {
        panic!()
    };
    let keys: Vec<String> = cases.iter().map(|c| sx(&c.keyset)).collect();
    assert_eq!(keys, ["(list 1 _)", "(list pvs (&&& 2 3))", "default"]);
    let DeclKind::Control(cd) = &p.decls[20].kind else {
        panic!()
    };
    let DeclKind::Table(t) = &cd.locals[0].kind else {
        panic!()
    };
    let TablePropertyKind::Key(keys) = &t.properties[0].kind else {
        panic!()
    };
    assert_eq!(keys[0].match_kind.name.name, "exact");
    assert_eq!(keys[0].annotations[0].name.name, "name");
    let TablePropertyKind::Actions(acts) = &t.properties[1].kind else {
        panic!()
    };
    assert_eq!(acts[1].annotations[0].name.name, "defaultonly");
    assert!(t.properties[2].is_const);
    let TablePropertyKind::Entries(es) = &t.properties[2].kind else {
        panic!()
    };
    assert_eq!(es[0].priority.as_ref().map(sx), Some("10".into()));
    assert_eq!(sx(&es[0].keyset), "(list (.. 1 2))");
    assert!(es[1].is_const);
    assert!(es[1].action.args.as_ref().is_some_and(|a| a.is_empty()));
}

#[test]
fn keywords_usable_as_names() {
    let s = stmts("", "bit<8> apply = 1; bit<8> key = 2; bit<8> state = 3; bit<8> type = 4; bit<8> priority = 5; apply = key + state;");
    assert_eq!(s.len(), 6);
    let StmtKind::Assign(l, r) = &s[5].kind else {
        panic!()
    };
    assert_eq!((sx(l), sx(r)), ("apply".into(), "(+ key state)".into()));
}

// ---------------------------------------------------------------------------------------------
// Statements

#[test]
fn declarations_versus_statements() {
    let decls = "extern E { E(); void m(); } control Sub(); header H { bit<8> f; }";
    let s = stmts(
        decls,
        "H h; H[2] hs; E() e; e.m(); Sub.apply(); h.f = 1; hs[0].f = 2; bit<8> arr[4];",
    );
    let shapes: Vec<&str> = s
        .iter()
        .map(|s| match &s.kind {
            StmtKind::Decl(d) => match d.kind {
                DeclKind::Variable(_) => "var",
                DeclKind::Instantiation(_) => "inst",
                _ => "decl",
            },
            StmtKind::Call(_) => "call",
            StmtKind::Assign(..) => "assign",
            _ => "other",
        })
        .collect();
    assert_eq!(
        shapes,
        ["var", "var", "inst", "call", "call", "assign", "assign", "var"]
    );
    let StmtKind::Decl(d) = &s[7].kind else {
        panic!()
    };
    let DeclKind::Variable(v) = &d.kind else {
        panic!()
    };
    assert_eq!(p4_front::printer::print_type(&v.ty), "bit<8>[4]");
}

#[test]
fn statement_targets_must_be_lvalues() {
    assert_eq!(
        err("control c() { apply { t.apply()(1); } }"),
        "expected an assignment or a method call, found `(`"
    );
    assert_eq!(
        err("control c() { apply { f(x) = 1; } }"),
        "expected an assignment or a method call, found `=`"
    );
    assert_eq!(
        err("control c() { apply { a + b; } }"),
        "expected an assignment or a method call, found `+`"
    );
    assert_eq!(
        err("control c() { apply { (a + b).c = 1; } }"),
        "expected an assignment or a method call, found `+`"
    );
    let s = stmts("", "(a).b = 1; a[1][2:0] = 2; this.m();");
    assert_eq!(s.len(), 3);
}

#[test]
fn types_are_not_values() {
    assert!(err("control C<H>(in H h) { apply { bool b = h > H; } }")
        .contains("type `H` cannot be used as a value"));
    assert!(err("extern E { m(); }").contains("expected a return type"));
    assert!(err("type struct S { } T;").contains("expected"));
    assert!(err("error { A, }").contains("expected a name"));
}

#[test]
fn compound_assignment() {
    let s = stmts("", "x += 1; x >>= 2; x |+|= 3; x <<= 4;");
    let ops: Vec<BinOp> = s
        .iter()
        .map(|s| match &s.kind {
            StmtKind::OpAssign(op, ..) => *op,
            k => panic!("{k:?}"),
        })
        .collect();
    assert_eq!(ops, [BinOp::Add, BinOp::Shr, BinOp::AddSat, BinOp::Shl]);
}

#[test]
fn switch_statements() {
    let s = stmts(
        "",
        "switch (t.apply().action_run) { a: b: { x = 1; } default: {} } switch (x) { 1: {} 2: }",
    );
    let StmtKind::Switch { cases, .. } = &s[0].kind else {
        panic!()
    };
    assert_eq!(cases.len(), 3);
    assert!(cases[0].body.is_none());
    assert!(matches!(cases[2].label, SwitchLabel::Default(_)));
    let StmtKind::Switch { cases, .. } = &s[1].kind else {
        panic!()
    };
    assert!(matches!(&cases[0].label, SwitchLabel::Expr(e) if sx(e) == "1"));
}

#[test]
fn for_loops() {
    let s = stmts(
        "",
        "for (bit<8> i = 0, bit<8> j = 1; i < 4; i = i + 1, j += 1) { } for (bit<8> v in 1 .. n) ; for (H h in hs) { break; continue; } for (;;) {}",
    );
    let StmtKind::For {
        init, cond, update, ..
    } = &s[0].kind
    else {
        panic!()
    };
    assert_eq!((init.len(), update.len()), (2, 2));
    assert_eq!(cond.as_ref().map(sx), Some("(< i 4)".into()));
    let StmtKind::ForIn { ty, range, .. } = &s[1].kind else {
        panic!()
    };
    assert!(ty.is_some());
    assert_eq!(sx(range), "(.. 1 n)");
    let StmtKind::ForIn { ty, var, .. } = &s[2].kind else {
        panic!()
    };
    assert!(ty.is_some() && var.name == "h");
    assert!(err("control c() { apply { for (h in hs) {} } }").contains("needs a type"));
    let StmtKind::For {
        init, cond, update, ..
    } = &s[3].kind
    else {
        panic!()
    };
    assert!(init.is_empty() && cond.is_none() && update.is_empty());
}

#[test]
fn parser_states_reject_control_statements() {
    assert!(err("parser p() { state s { return; } }").contains("not allowed in a parser"));
    assert!(
        err("parser p() { state s { transition select(x) { 1: accept; } ; } }")
            .contains("expected `}`")
    );
}

// ---------------------------------------------------------------------------------------------
// Annotations

fn annos(src: &str) -> Vec<(String, String)> {
    let p = prog(src);
    let a = match &p.decls[0].kind {
        DeclKind::Const(c) => &c.annotations,
        _ => unreachable!(),
    };
    a.iter()
        .map(|a| {
            let b = match &a.body {
                AnnotationBody::Empty => "empty".to_string(),
                AnnotationBody::Expressions(es) => {
                    format!("exprs {}", es.iter().map(sx).collect::<Vec<_>>().join(" "))
                }
                AnnotationBody::KeyValues(kv) => {
                    format!(
                        "kv {}",
                        kv.iter()
                            .map(|(k, v)| format!("{}={}", k.name, sx(v)))
                            .collect::<Vec<_>>()
                            .join(" ")
                    )
                }
                AnnotationBody::StructuredExpressions(es) => {
                    format!("sexprs {}", es.iter().map(sx).collect::<Vec<_>>().join(" "))
                }
                AnnotationBody::Unparsed(s) => format!("raw {s}"),
            };
            (a.name.name.clone(), b)
        })
        .collect()
}

#[test]
fn annotation_bodies() {
    let a = annos(
        "@hidden @name(\".x\") @match(ternary) @pkginfo(arch = \"v1\", x) @kv[a = 1, b = \"s\",] @l[1, 2] @e[] @weird(1 2 (3)) @const()\nconst bit<8> x = 1;",
    );
    let want = [
        ("hidden", "empty"),
        ("name", "exprs \".x\""),
        ("match", "exprs ternary"),
        ("pkginfo", "raw arch = \"v1\", x"),
        ("kv", "kv a=1 b=\"s\""),
        ("l", "sexprs 1 2"),
        ("e", "sexprs "),
        ("weird", "raw 1 2 (3)"),
        ("const", "exprs "),
    ];
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    assert_eq!(a, want);
    let a = annos(
        "@pragma tableOnly\n@pragma deprecated \"use x\"\n@pragma p 1 2\nconst bit<8> x = 1;",
    );
    assert_eq!(a[0], ("tableOnly".into(), "empty".into()));
    assert_eq!(a[1], ("deprecated".into(), "exprs \"use x\"".into()));
    assert_eq!(a[2], ("p".into(), "raw 1 2".into()));
    assert!(err("@kv[a = 1, 5] const bit<8> x = 1;")
        .contains("either expressions or key-value pairs, not both"));
}

// ---------------------------------------------------------------------------------------------
// Ids, spans, errors, printing

/// Every expression id in `p`, in no particular order.
fn all_ids(p: &Program) -> Vec<u32> {
    // The printer visits every node; re-parse its output to make sure ids are per-parse and
    // dense, then count the nodes by walking with the debug representation.
    let dbg = format!("{p:?}");
    dbg.match_indices("id: NodeId(")
        .map(|(i, _)| {
            let rest = &dbg[i + "id: NodeId(".len()..];
            rest[..rest.find(')').unwrap()].parse().unwrap()
        })
        .collect()
}

#[test]
fn node_ids_are_dense() {
    let src = "struct T { bit<8> a; } const bit<8> x = f<bit<8>>((T){a = 1}.a + (x < y ? 1 : 2));
               control c() { apply { if (a < b) { bit<(2+3)> z = {1, 2}[0]; } } }";
    let p = prog(src);
    let mut ids = all_ids(&p);
    ids.sort_unstable();
    let want: Vec<u32> = (0..p.node_count).collect();
    assert_eq!(ids, want);
}

#[test]
fn spans_point_at_the_source() {
    let src = "const bit<8> x = a + b;";
    let p = prog(src);
    let DeclKind::Const(c) = &p.decls[0].kind else {
        panic!()
    };
    let s = c.value.span;
    assert_eq!(&src[s.lo as usize..s.hi as usize], "a + b");
    assert_eq!(&src[c.name.span.lo as usize..c.name.span.hi as usize], "x");
    let d = parse_str("control c() { apply { x = 1 } }").unwrap_err();
    assert_eq!(d.message, "expected `;`, found `}`");
    assert_eq!(d.span.map(|s| s.lo), Some(28));
}

#[test]
fn error_messages() {
    assert_eq!(
        err("const bit<8> x = 1"),
        "expected `;`, found end of input"
    );
    assert_eq!(err("const bit<8> x = $;"), "unexpected character `$`");
    assert_eq!(
        err("const string s = \"abc;"),
        "unterminated string literal"
    );
    assert_eq!(err("const bit<8> x = 0x;"), "integer literal has no digits");
    assert_eq!(err("const bit<8> x = 0b12;"), "malformed integer literal");
    assert!(err("}").contains("expected"));
}

#[test]
fn unit_entry_point_and_token_dump() {
    let u = Unit::from_string("t.p4", "const bit<8> x = 8w1;");
    assert_eq!(parse(&u).unwrap().decls.len(), 1);
    let toks = p4_front::lexer::lex(&u.text).unwrap();
    let dump = dump_tokens(&toks, &u.text);
    assert_eq!(dump.lines().count(), toks.len());
    assert!(dump.lines().next().unwrap().contains("keyword const"));
    assert!(dump.contains("int 8w1"));
}

#[test]
fn printer_round_trips() {
    let src = r#"
struct T { bit<8> a; }
const bit<8> x = (bit<8>)(-(-y)) + (a - (b - c)) * (d + e) >> 2;
const bool b = !(a && b) || (c ? d : e) == f;
const T t = (T){ a = 1, ... };
control c() {
    apply {
        if (a) if (b) x = 1; else x = 2;
        for (bit<8> i in 0 .. 3) x[i +: 2] = +(+y);
    }
}
"#;
    let once = print_program(&prog(src));
    let twice = print_program(&prog(&once));
    assert_eq!(once, twice);
    assert!(
        once.contains("(bit<8>)-(-y) + (a - (b - c)) * (d + e) >> 2"),
        "{once}"
    );
    assert!(once.contains("+(+y)"), "{once}");
    let src = "@pragma odd ( x\n@pragma even ( x )\nconst bit<8> x = 1;";
    let once = print_program(&prog(src));
    assert_eq!(once, "@pragma odd ( x\n@even(x) const bit<8> x = 1;\n");
    assert_eq!(print_program(&prog(&once)), once);
}
