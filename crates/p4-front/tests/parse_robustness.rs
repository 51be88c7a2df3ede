//! Bad input never panics, overflows the stack or hangs the lexer and parser; big input is fast.

use p4_front::lexer::lex;
use p4_front::parser::{parse_str, MAX_DEPTH};
use p4_front::printer::print_program;
use proptest::prelude::*;
use std::time::{Duration, Instant};

/// Parses on a thread with a small (1 MiB) stack and fails the test on overflow or after `limit`.
fn parse_small_stack(text: String, limit: Duration) -> Result<String, String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || {
            let r = parse_str(&text)
                .map(|p| print_program(&p))
                .map_err(|d| d.message);
            let _ = tx.send(r);
        })
        .expect("spawn");
    rx.recv_timeout(limit).expect("parser hung or crashed")
}

fn deep_inputs() -> Vec<(&'static str, String)> {
    let n = 5000;
    vec![
        (
            "parens",
            format!("const bit<8> x = {}1{};", "(".repeat(n), ")".repeat(n)),
        ),
        ("unary", format!("const bit<8> x = {}1;", "-".repeat(n))),
        (
            "unary-spaced",
            format!("const bit<8> x = {}1;", "~ ".repeat(n)),
        ),
        (
            "blocks",
            format!("control c() {{ apply {}{} }}", "{".repeat(n), "}".repeat(n)),
        ),
        (
            "ifs",
            format!("control c() {{ apply {{ {} ; }} }}", "if (true) ".repeat(n)),
        ),
        (
            "else-ifs",
            format!(
                "control c() {{ apply {{ if (a) ; {} }} }}",
                "else if (a) ; ".repeat(n)
            ),
        ),
        (
            "tuple-types",
            format!("const {}bit{} x = 1;", "tuple<".repeat(n), ">".repeat(n)),
        ),
        (
            "widths",
            format!("const bit<{}1{}> x = 1;", "(".repeat(n), ")".repeat(n)),
        ),
        (
            "casts",
            format!("const bit<8> x = {}1;", "(bit<8>)".repeat(n)),
        ),
        (
            "binary-chain",
            format!("const bit<8> x = {}1;", "1 + ".repeat(100_000)),
        ),
        (
            "right-nested",
            format!("const bit<8> x = {}1{};", "1 + (".repeat(n), ")".repeat(n)),
        ),
        (
            "members",
            format!("const bit<8> x = a{};", ".b".repeat(100_000)),
        ),
        (
            "calls",
            format!("const bit<8> x = f{};", "(1)".repeat(100_000)),
        ),
        (
            "indexes",
            format!("const bit<8> x = a{};", "[1]".repeat(100_000)),
        ),
        (
            "ternaries",
            format!("const bit<8> x = {}c;", "a ? b : ".repeat(n)),
        ),
        (
            "annotation",
            format!("@a({}{}) const bit<8> x = 1;", "(".repeat(n), ")".repeat(n)),
        ),
        (
            "lists",
            format!("const bit<8> x = {}{};", "{".repeat(n), "}".repeat(n)),
        ),
        (
            "stack-types",
            format!("struct S {{ bit<8>{} x; }}", "[1]".repeat(100_000)),
        ),
        (
            "declarator",
            format!("struct S {{ bit<8> x{}; }}", "[1]".repeat(100_000)),
        ),
        ("initializers", "E() e = { ".repeat(n)),
        (
            "type-args",
            format!("const bool x = {}b;", "a < T < ".repeat(3000)),
        ),
        (
            "typed-lt",
            format!("struct T {{}} const bool x = {}b;", "a < T < ".repeat(3000)),
        ),
        (
            "specialized",
            format!("const {}bit{} x = 1;", "X<".repeat(n), ">".repeat(n)),
        ),
    ]
}

#[test]
fn deep_nesting_is_an_error_not_an_overflow() {
    for (name, text) in deep_inputs() {
        eprintln!("deep input: {name}");
        let t0 = Instant::now();
        let r = parse_small_stack(text, Duration::from_secs(20));
        let msg = r.expect_err(name);
        assert!(
            msg.contains("too deep") || msg.contains("too complex") || msg.contains("expected"),
            "{name}: {msg}"
        );
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "{name} took {:?}",
            t0.elapsed()
        );
    }
}

#[test]
fn nesting_up_to_the_limit_is_fine() {
    let n = (MAX_DEPTH / 4) as usize;
    let ok = [
        format!("const bit<8> x = {}1{};", "(".repeat(n), ")".repeat(n)),
        format!("const bit<8> x = {}1;", "1 + ".repeat(2 * n)),
        format!("control c() {{ apply {}{} }}", "{".repeat(n), "}".repeat(n)),
    ];
    for text in ok {
        parse_small_stack(text, Duration::from_secs(20)).expect("within limits");
    }
}

/// A P4-like program of about `lines` lines.
fn big_program(lines: usize) -> String {
    let mut s = String::from(
        "header h_t { bit<8> a; bit<16> b; bit<32> c; }\nstruct hs { h_t h; }\nextern packet_in { void extract<T>(out T hdr); }\n",
    );
    let mut i = 0;
    while s.lines().count() < lines {
        i += 1;
        s.push_str(&format!(
            "control c{i}(inout hs hdr, inout bit<32> m) {{
    action a{i}(bit<8> v) {{ hdr.h.a = v; m = m + (bit<32>)v; }}
    table t{i} {{
        key = {{ hdr.h.a : exact; hdr.h.b : ternary; }}
        actions = {{ a{i}; NoAction; }}
        const entries = {{
            (1, 0x10 &&& 0xF0) : a{i}(1);
            (2, _) : a{i}(2);
        }}
        size = 1024;
    }}
    apply {{
        if (hdr.h.isValid() && hdr.h.a > 8w3) {{
            t{i}.apply();
            hdr.h.c = hdr.h.c |+| (hdr.h.b ++ 16w0) >> 2;
        }} else {{
            bit<8> x = hdr.h.a[7:4] ++ 4w0;
            switch (t{i}.apply().action_run) {{ a{i}: {{ m = 0; }} default: {{}} }}
        }}
    }}
}}
"
        ));
    }
    s
}

#[test]
fn a_5000_line_program_parses_quickly() {
    let text = big_program(5000);
    assert!(text.lines().count() >= 4900);
    parse_str(&text).expect("parses");
    if let Some(n) = std::env::var("PARSE_BENCH_ITERS")
        .ok()
        .and_then(|s| s.parse::<u32>().ok())
    {
        for _ in 0..n {
            let _ = parse_str(&text);
        }
    }
    let t0 = Instant::now();
    let p = parse_str(&text).expect("parses");
    let dt = t0.elapsed();
    eprintln!(
        "5000 lines: {} decls, {} nodes, parsed in {dt:?}",
        p.decls.len(),
        p.node_count
    );
    // Generous bound (shared CI machines); typically a few milliseconds.
    assert!(dt < Duration::from_secs(1), "took {dt:?}");
}

/// Fragments of P4 source to build random token streams from.
const VOCAB: &[&str] = &[
    "control",
    "parser",
    "state",
    "transition",
    "select",
    "apply",
    "table",
    "key",
    "actions",
    "entries",
    "action",
    "extern",
    "struct",
    "header",
    "enum",
    "typedef",
    "type",
    "const",
    "if",
    "else",
    "switch",
    "return",
    "exit",
    "for",
    "in",
    "out",
    "inout",
    "bit",
    "int",
    "varbit",
    "tuple",
    "list",
    "error",
    "default",
    "_",
    "this",
    "true",
    "false",
    "priority",
    "value_set",
    "package",
    "match_kind",
    "void",
    "abstract",
    "x",
    "T",
    "H",
    "f",
    "accept",
    "8w5",
    "0x1F",
    "4s3",
    "\"s\"",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    "<",
    ">",
    ">>",
    "<<",
    "=",
    "==",
    ";",
    ":",
    ",",
    ".",
    "..",
    "...",
    "&&&",
    "&&",
    "||",
    "+",
    "-",
    "*",
    "/",
    "|+|",
    "|-|",
    "++",
    "?",
    "!",
    "~",
    "@",
    "@pragma",
    "{#}",
    "+:",
    "+=",
    "\n",
];

fn token_soup() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(VOCAB), 0..200).prop_map(|v| v.join(" "))
}

/// A declaration prefix that puts `T` and `H` in the type table, so that casts and type
/// arguments get exercised.
const PRELUDE: &str = "struct T { bit<8> a; } header H { bit<8> b; } ";

proptest! {
    // 400 cases each by default (about a second); set PROPTEST_CASES for a longer run.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(400),
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_tokens_never_panic(s in token_soup()) {
        let _ = parse_str(&s);
        let text = format!("{PRELUDE}{s}");
        if let Ok(p) = parse_str(&text) {
            let once = print_program(&p);
            let again = parse_str(&once).expect("printed program reparses");
            prop_assert_eq!(once, print_program(&again));
        }
    }

    #[test]
    fn random_statements_never_panic(s in token_soup()) {
        let text = format!("{PRELUDE} control c() {{ apply {{ {s} }} }}");
        let _ = parse_str(&text);
        let text = format!("{PRELUDE} parser p() {{ state start {{ {s} }} }}");
        let _ = parse_str(&text);
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        let s = String::from_utf8_lossy(&bytes);
        let _ = lex(&s);
        let _ = parse_str(&s);
    }

    #[test]
    fn random_ascii_never_panics(s in "[ -~\n]{0,300}") {
        let _ = parse_str(&s);
    }
}

/// The Debug form of `p` without spans and ids: equal trees give equal strings.
fn shape(p: &p4_front::ast::Program) -> String {
    let d = format!("{p:?}");
    let mut out = String::with_capacity(d.len());
    let mut rest = d.as_str();
    loop {
        let a = rest.find("Span {");
        let b = rest.find("NodeId(");
        let (i, close) = match (a, b) {
            (Some(a), Some(b)) if a < b => (a, '}'),
            (Some(a), None) => (a, '}'),
            (_, Some(b)) => (b, ')'),
            (None, None) => break,
        };
        out.push_str(&rest[..i]);
        let j = rest[i..].find(close).map_or(rest.len(), |j| i + j + 1);
        rest = &rest[j..];
    }
    out.push_str(rest);
    out.replace("node_count", "")
}

/// Random expressions over every operator, sometimes parenthesised.
fn expression() -> impl Strategy<Value = String> {
    let leaf = prop::sample::select(vec![
        "a", "b", "hdr.f", "1", "8w5", "4s3", "0x1F", "true", "\"s\"", "T.min()", "error.E", "{#}",
        "this", "f()",
    ])
    .prop_map(str::to_string);
    leaf.prop_recursive(6, 64, 4, |inner| {
        let bin = prop::sample::select(vec![
            "*", "/", "%", "+", "-", "|+|", "|-|", "<<", ">>", "<=", ">=", "<", ">", "==", "!=",
            "&", "^", "|", "++", "&&", "||",
        ]);
        prop_oneof![
            (inner.clone(), bin, inner.clone(), any::<(bool, bool)>()).prop_map(
                |(a, op, b, (pa, pb))| {
                    let a = if pa { format!("({a})") } else { a };
                    let b = if pb { format!("({b})") } else { b };
                    format!("{a} {op} {b}")
                }
            ),
            (
                prop::sample::select(vec!["!", "~", "-", "+"]),
                inner.clone()
            )
                .prop_map(|(op, a)| format!("{op}({a})")),
            (inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(c, a, b)| format!("({c}) ? {a} : ({b})")),
            inner.clone().prop_map(|a| format!("({a}).g")),
            (inner.clone(), inner.clone()).prop_map(|(a, i)| format!("({a})[{i}]")),
            (inner.clone(), inner.clone()).prop_map(|(a, i)| format!("({a})[{i}:0]")),
            (inner.clone(), inner.clone()).prop_map(|(a, i)| format!("({a})[{i} +: 2]")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("f({a}, x = {b})")),
            inner.clone().prop_map(|a| format!("f<bit<8>, T>({a})")),
            inner.clone().prop_map(|a| format!("(bit<8>)({a})")),
            inner.clone().prop_map(|a| format!("(T)({a})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("{{{a}, {b}}}")),
            (inner.clone(), inner).prop_map(|(a, b)| format!("{{ f = {a}, g = {b}, ... }}")),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(300),
        ..ProptestConfig::default()
    })]

    /// Printing keeps the tree: parse(print(parse(s))) has the shape of parse(s).
    #[test]
    fn printing_preserves_expression_trees(e in expression()) {
        let src = format!("typedef bit<8> T; const bit<8> x = {e};");
        let p = parse_str(&src).map_err(|d| TestCaseError::fail(format!("{src}: {}", d.message)))?;
        let printed = print_program(&p);
        let again = parse_str(&printed).map_err(|d| TestCaseError::fail(format!("{printed}: {}", d.message)))?;
        prop_assert_eq!(shape(&p), shape(&again), "{}", printed);
    }
}
