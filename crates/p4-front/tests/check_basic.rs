//! Checker unit tests: small programs that must be accepted or rejected (with the expected
//! message fragment). Each program is self-contained (a small prelude stands in for core.p4).

use p4_front::check::{self, Arch, CallTarget, Value};
use p4_front::parser;

const PRELUDE: &str = r#"
error { NoError, PacketTooShort, NoMatch }
extern packet_in {
    void extract<T>(out T hdr);
    void extract<T>(out T hdr, in bit<32> bits);
    T lookahead<T>();
    void advance(in bit<32> bits);
}
extern packet_out { void emit<T>(in T hdr); }
extern void verify(in bool check, in error toSignal);
action NoAction() {}
match_kind { exact, ternary, lpm }
extern bool static_assert(bool check, string message);
extern bool static_assert(bool check);
"#;

fn run(src: &str) -> Result<check::Checked, Vec<String>> {
    let text = format!("{PRELUDE}\n{src}");
    let prog = match parser::parse_str(&text) {
        Ok(p) => p,
        Err(d) => panic!("parse error: {}\n{text}", d.message),
    };
    check::check(&prog).map_err(|ds| ds.into_iter().map(|d| d.message).collect())
}

#[track_caller]
fn ok(src: &str) -> check::Checked {
    match run(src) {
        Ok(c) => c,
        Err(e) => panic!(
            "expected the program to be accepted, got:\n{}",
            e.join("\n")
        ),
    }
}

#[track_caller]
fn bad(src: &str, fragment: &str) {
    match run(src) {
        Ok(_) => panic!("expected an error containing {fragment:?}, the program was accepted"),
        Err(e) => assert!(
            e.iter().any(|m| m.contains(fragment)),
            "expected an error containing {fragment:?}, got:\n{}",
            e.join("\n")
        ),
    }
}

const HDRS: &str = r#"
header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header ipv4_t { bit<4> version; bit<4> ihl; bit<8> tos; bit<16> len; bit<32> src; bit<32> dst; }
struct headers_t { eth_t eth; ipv4_t ipv4; }
struct meta_t { bit<9> port; bit<32> x; bool flag; }
"#;

fn with_hdrs(s: &str) -> String {
    format!("{HDRS}\n{s}")
}

#[test]
fn accepts_a_simple_pipeline() {
    let c = ok(&with_hdrs(
        r#"
parser P(packet_in pkt, out headers_t h, inout meta_t m) {
    state start {
        pkt.extract(h.eth);
        transition select(h.eth.type) {
            0x0800: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 { pkt.extract(h.ipv4); transition accept; }
}
control C(inout headers_t h, inout meta_t m) {
    action set_port(bit<9> port) { m.port = port; }
    action drop() { m.flag = true; }
    table fwd {
        key = { h.ipv4.dst: lpm; h.eth.type: exact @name("etype"); }
        actions = { set_port; drop; }
        default_action = drop();
        size = 1024;
    }
    apply {
        if (h.ipv4.isValid()) {
            switch (fwd.apply().action_run) {
                set_port: { m.x = m.x + 1; }
                default: {}
            }
        }
    }
}
parser PT(packet_in pkt, out headers_t h, inout meta_t m);
control CT(inout headers_t h, inout meta_t m);
package Top(PT p, CT c);
Top(P(), C()) main;
"#,
    ));
    assert_eq!(c.arch, Arch::Unknown);
    assert!(c.main.is_some());
    assert_eq!(c.main_blocks.len(), 2);
    let t = c.tables.values().next().expect("one table");
    assert_eq!(t.keys.len(), 2);
    assert_eq!(t.keys[0].match_kind, "lpm");
    assert_eq!(t.keys[1].name, "etype");
    assert_eq!(t.size, Some(1024));
    assert_eq!(t.actions.len(), 2);
}

#[test]
fn int_literals_adopt_the_width_of_the_other_operand() {
    let c = ok(r#"
control C(inout bit<8> x) {
    apply { x = x + 1; x = 3; }
}
"#);
    // Both literals got the width of `x` (type widths like the `8` of `bit<8>` stay `int`).
    let eight = |v: i32| Value::Bits {
        value: v.into(),
        width: 8,
        signed: false,
    };
    let has = |v: i32| c.values.values().any(|x| *x == eight(v));
    assert!(has(1) && has(3), "{:?}", c.values);
}

#[test]
fn constants_fold_with_widths() {
    let c = ok(r#"
const bit<8> A = 250;
const bit<8> B = A + 10;
const int C = 1 << 70;
const bit<4> D = (bit<4>)0x1f;
const bool E = A > 3;
"#);
    let val = |n: &str| {
        c.decls
            .iter()
            .find(|d| d.name == n)
            .and_then(|d| d.value.clone())
    };
    assert_eq!(
        val("B"),
        Some(Value::Bits {
            value: 4.into(),
            width: 8,
            signed: false
        })
    );
    assert_eq!(
        val("C"),
        Some(Value::Int(num_bigint::BigInt::from(1) << 70))
    );
    assert_eq!(
        val("D"),
        Some(Value::Bits {
            value: 15.into(),
            width: 4,
            signed: false
        })
    );
    assert_eq!(val("E"), Some(Value::Bool(true)));
}

#[test]
fn rejects_width_mismatch() {
    bad(
        "control C(inout bit<8> x, in bit<16> y) { apply { x = x + y; } }",
        "different widths",
    );
    bad(
        "control C(inout bit<8> x, in bit<16> y) { apply { x = y; } }",
        "type mismatch",
    );
    bad(
        "control C(inout bit<8> x, in int<8> y) { apply { x = x + y; } }",
        "cannot operate",
    );
}

#[test]
fn bool_is_not_bit1() {
    bad(
        "control C(inout bit<1> x) { apply { if (x) { x = 0; } } }",
        "type mismatch",
    );
    ok("control C(inout bit<1> x) { apply { if ((bool)x) { x = 0; } } }");
}

#[test]
fn undeclared_names() {
    bad(
        "control C(inout bit<8> x) { apply { x = y; } }",
        "y: declaration not found",
    );
    bad(
        "control C(inout T x) { apply { } }",
        "T: declaration not found",
    );
}

#[test]
fn in_parameters_are_read_only() {
    bad(
        "control C(in bit<8> x) { apply { x = 1; } }",
        "cannot write to an in parameter",
    );
    bad(
        "const bit<8> K = 1; control C() { apply { K = 2; } }",
        "cannot write to a constant",
    );
}

#[test]
fn out_arguments_must_be_lvalues() {
    bad(
        "extern void f(out bit<8> x); control C(inout bit<8> y) { apply { f(y + 1); } }",
        "left-value",
    );
}

#[test]
fn enums_and_errors() {
    ok(r#"
enum E { A, B }
enum bit<8> S { X = 1, Y = 2 }
control C(inout bit<8> v, inout error e) {
    apply {
        E a = E.A;
        if (a == E.B) { v = S.X; }
        v = (bit<8>)S.Y + 1;
        S s = (S)v;
        e = error.NoMatch;
    }
}
"#);
    bad(
        "enum E { A } control C() { apply { E a = E.Q; } }",
        "invalid enum tag",
    );
    bad(
        "enum bit<8> S { X = 1 } control C(inout S s) { apply { s = 1; } }",
        "type mismatch",
    );
    bad(
        "control C(inout error e) { apply { e = error.Nope; } }",
        "invalid enum tag",
    );
}

#[test]
fn slices() {
    ok("control C(inout bit<8> x, inout bit<4> y) { apply { y = x[7:4]; x[3:0] = y; } }");
    bad(
        "control C(inout bit<8> x, inout bit<4> y) { apply { y = x[8:5]; } }",
        "greater than width",
    );
    bad(
        "control C(inout bit<8> x, in bit<8> i) { apply { x[i:0] = 0; } }",
        "must be constants",
    );
}

#[test]
fn generics_infer_from_arguments() {
    ok(r#"
extern void g<T>(in T a, in T b);
control C(inout bit<8> x) { apply { g(x, 1); g(x, x); } }
"#);
    bad(
        "extern void g<T>(in T a); control C() { apply { g(1); } }",
        "could not infer a width",
    );
}

#[test]
fn overloads_by_count_and_names() {
    let c = ok(r#"
extern void h(in bit<8> a);
extern void h(in bit<8> a, in bit<8> b);
extern void k(in bit<8> a, in bool b = true);
control C() { apply { h(1); h(1, 2); k(1); k(a = 1); k(b = false, a = 2); } }
"#);
    let n = c
        .calls
        .values()
        .filter(|ci| matches!(ci.target, CallTarget::ExternFunction(_)))
        .count();
    assert_eq!(n, 5);
    bad(
        "extern void h(in bit<8> a); control C() { apply { h(1, 2, 3); } }",
        "too many arguments",
    );
    bad(
        "extern void h(in bit<8> a); control C() { apply { h(b = 1); } }",
        "no parameter named b",
    );
}

#[test]
fn table_rules() {
    let hdr = "control C(inout bit<8> x) { action a(bit<8> v) { x = v; } action b() {} @defaultonly action d() {}";
    ok(&format!("{hdr} table t {{ key = {{ x: exact; }} actions = {{ a; b; }} default_action = a(3); }} apply {{ t.apply(); }} }}"));
    bad(
        &format!("{hdr} table t {{ key = {{ x: exact; }} actions = {{ a; }} default_action = b(); }} apply {{ }} }}"),
        "not in the table's actions list",
    );
    bad(
        &format!("{hdr} table t {{ key = {{ x: exact; }} actions = {{ a; }} default_action = a; }} apply {{ }} }}"),
        "must be bound",
    );
    bad(
        &format!("{hdr} table t {{ key = {{ x: fuzzy; }} actions = {{ a; }} }} apply {{ }} }}"),
        "fuzzy: declaration not found",
    );
    bad(
        &format!(
            "{hdr} table t {{ key = {{ x: exact; }} actions = {{ a; }} size = x; }} apply {{ }} }}"
        ),
        "size must be",
    );
    bad(
        &format!("{hdr} table t {{ key = {{ x: exact; }} actions = {{ a; @defaultonly b; }} const entries = {{ 1: b(); }} }} apply {{ }} }}"),
        "@defaultonly",
    );
    bad(
        &format!("{hdr} table t {{ key = {{ x: exact; }} actions = {{ @tableonly a; b; }} default_action = a(1); }} apply {{ }} }}"),
        "@tableonly",
    );
    bad(
        &format!("{hdr} table t {{ key = {{ x: exact; }} actions = {{ a; }} const entries = {{ (1, 2): a(1); }} }} apply {{ }} }}"),
        "keyset",
    );
}

#[test]
fn switch_on_action_run_labels_must_be_table_actions() {
    bad(
        r#"control C(inout bit<8> x) {
    action a() {} action b() {}
    table t { key = { x: exact; } actions = { a; } }
    apply { switch (t.apply().action_run) { b: {} } }
}"#,
        "not an action of table t",
    );
    bad(
        r#"control C(inout bit<8> x) {
    action a() {}
    table t { key = { x: exact; } actions = { a; } }
    apply { if (t.apply().action_run == t.apply().action_run) {} }
}"#,
        "only allowed in switch",
    );
}

#[test]
fn parser_rules() {
    bad(
        "parser P(packet_in p) { state start { transition nowhere; } }",
        "nowhere: no such parser state",
    );
    bad(
        "parser P(packet_in p) { state begin { transition accept; } }",
        "no 'start' state",
    );
    bad(
        "parser P(packet_in p, in bit<8> x) { state start { transition select(x) { 8w1 .. 8w3: accept; true: reject; } } }",
        "type mismatch",
    );
    bad("parser P(packet_in p) { state accept { transition accept; } state start { transition accept; } }", "built-in");
}

#[test]
fn directionless_extern_args_must_be_constant() {
    bad(
        "extern void m(bit<8> slot); control C(inout bit<8> x) { apply { m(x); } }",
        "must be a compile-time constant",
    );
}

#[test]
fn no_panic_on_deep_nesting() {
    // As deep as the parser allows (its limit counts parentheses too), in a default-size
    // test thread: the checker must finish without overflowing the stack.
    let mut e = String::from("x");
    for _ in 0..126 {
        e = format!("({e} + 8w1)");
    }
    let mut s = String::from("x = 1;");
    for _ in 0..120 {
        s = format!("if (x == 1) {{ {s} }}");
    }
    let src = format!("control C(inout bit<8> x) {{ apply {{ x = {e}; {s} }} }}");
    let text = format!("{PRELUDE}\n{src}");
    let prog = parser::parse_str(&text).expect("parses");
    assert!(check::check(&prog).is_ok());
}

#[test]
fn summary_lists_tables() {
    let src = r#"
control C(inout bit<8> x) {
    action a(bit<8> v) { x = v; }
    table t { key = { x: exact; } actions = { a; } size = 16; }
    apply { t.apply(); }
}
control CT(inout bit<8> x);
package Top(CT c);
Top(C()) main;
"#;
    let text = format!("{PRELUDE}\n{src}");
    let prog = parser::parse_str(&text).expect("parses");
    let c = check::check(&prog).expect("checks");
    let s = check::summary(&prog, &c);
    assert!(s.contains("table t"), "{s}");
    assert!(s.contains("x: exact"), "{s}");
    assert!(s.contains("size: 16"), "{s}");
    assert!(s.contains("a(bit<8> v)"), "{s}");
}
