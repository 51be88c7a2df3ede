//! Tests of the preprocessor, the source map and diagnostic rendering.

use p4_front::diag::{render, Diagnostic, Severity};
use p4_front::preprocess::{preprocess, preprocess_str, Options};
use p4_front::source::{Span, Unit};
use std::path::{Path, PathBuf};

fn pp(text: &str) -> Unit {
    match preprocess_str("t.p4", text, &Options::default()) {
        Ok(u) => u,
        Err(d) => panic!("unexpected error: {}", render(&Unit::default(), &d)),
    }
}

fn pp_err(text: &str) -> Diagnostic {
    match preprocess_str("t.p4", text, &Options::default()) {
        Ok(u) => panic!("expected an error, got {:?}", u.text),
        Err(d) => d,
    }
}

/// The output with whitespace collapsed.
fn norm(u: &Unit) -> String {
    u.text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn out(text: &str) -> String {
    norm(&pp(text))
}

/// A fresh temporary directory holding `files`.
fn tree(tag: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nevermiss-pp-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (name, text) in files {
        let p = dir.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

/// Position of the `n`th occurrence of `needle` in the unit text.
fn pos(u: &Unit, needle: &str, n: usize) -> u32 {
    u.text
        .match_indices(needle)
        .nth(n)
        .unwrap_or_else(|| panic!("{needle:?} not in {:?}", u.text))
        .0 as u32
}

// ---------------------------------------------------------------------------------------------
// Plain text, comments, source map

#[test]
fn untouched_text_maps_exactly() {
    let src = "header h_t {\n\tbit<8> f; // c\n}\n/* a\n b */ control c() { apply {} }\n";
    let u = pp(src);
    for needle in ["header", "bit", "f;", "}", "control", "apply"] {
        let p = pos(&u, needle, 0);
        let l = u.locate(p);
        let line = src.lines().nth(l.line as usize - 1).unwrap();
        assert_eq!(l.line_text, line);
        let col_byte = line.char_indices().nth(l.col as usize - 1).unwrap().0;
        assert!(line[col_byte..].starts_with(needle), "{needle}: {l:?}");
    }
    // comments become blanks; line count is kept
    assert!(!u.text.contains("//") && !u.text.contains("/*"));
    assert_eq!(u.text.lines().count(), src.lines().count());
    assert_eq!(u.locate(pos(&u, "control", 0)).col, 7);
}

#[test]
fn comments_not_in_strings() {
    assert_eq!(
        out("x = \"a // b /* c */\"; // gone\n"),
        "x = \"a // b /* c */\";"
    );
    assert_eq!(out("a/**/b\n"), "a b");
    assert_eq!(out("a // x \\\n still comment\nb\n"), "a b");
}

#[test]
fn unterminated_literals_like_cpp() {
    // As in cpp, an unterminated quote runs to the end of its line: nothing in it is expanded or a
    // comment; the next line is lexed afresh. P4 strings spanning lines come through intact.
    let u = pp("#define FOO bar\nx(\"abc FOO // c\nFOO d\" FOO)\n/* \"x */ y\n");
    assert_eq!(norm(&u), "x(\"abc FOO // c bar d\" FOO) y");
    assert_eq!(u.text.lines().next().unwrap(), "x(\"abc FOO // c");
    assert_eq!(out("#if 0\ndon't\n#endif\nok\n"), "ok");
    assert_eq!(pp_err("#error don't FOO\n").message, "don't FOO");
}

#[test]
fn line_continuation() {
    assert_eq!(out("#define X 1 + \\\n 2\nX\n"), "1 + 2");
    assert_eq!(out("ab\\\ncd\n"), "abcd");
}

#[test]
fn non_utf8_and_bom() {
    let dir = tree("bytes", &[]);
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("b.p4");
    std::fs::write(&p, b"\xef\xbb\xbfa \xff\xfe b\n").unwrap();
    let u = preprocess(&p, &Options::default()).unwrap();
    assert_eq!(norm(&u), "a \u{fffd}\u{fffd} b");
    assert_eq!(u.locate(0).col, 1);
}

// ---------------------------------------------------------------------------------------------
// #define, expansion

#[test]
fn object_and_function_macros() {
    assert_eq!(
        out("#define N 10\n#define ADD(a, b) ((a) + (b))\nx = ADD(N, 2);\n"),
        "x = ((10) + (2));"
    );
    // a function-like macro without ( is not expanded
    assert_eq!(out("#define F(x) x\nF + 1\n"), "F + 1");
    // arguments with nested parentheses and commas
    assert_eq!(
        out("#define F(a, b) [a|b]\nF((1, 2), f(3, 4))\n"),
        "[(1, 2)|f(3, 4)]"
    );
    // zero-parameter macro
    assert_eq!(out("#define Z() zed\nZ() Z ( )\n"), "zed zed");
    // empty argument
    assert_eq!(out("#define F(a) <a>\nF()\n"), "< >");
}

#[test]
fn arguments_span_lines() {
    let u = pp("#define F(a, b) a + b\nx = F(1,\n  2);\ny\n");
    assert_eq!(norm(&u), "x = 1 + 2 ; y");
    // `y` is still on its own line with its own location
    assert_eq!(u.locate(pos(&u, "y", 0)).line, 4);
    // name and ( on different lines
    assert_eq!(out("#define F(a) [a]\nF\n(7)\n"), "[7]");
}

#[test]
fn no_recursion() {
    assert_eq!(out("#define foo foo\nfoo\n"), "foo");
    assert_eq!(out("#define a b\n#define b a\na b\n"), "a b");
    assert_eq!(out("#define f(x) x + f(x)\nf(1)\n"), "1 + f(1)");
    // the classic example from ISO C §6.10.3.5
    let src = "#define x 3\n#define f(a) f(x * (a))\n#undef x\n#define x 2\n#define g f\n#define z z[0]\n\
               #define h g(~\n#define m(a) a(w)\n#define w 0,1\n#define t(a) a\n#define p() int\n\
               #define q(x) x\n#define r(x,y) x ## y\n#define str(x) # x\n\
               f(y+1) + f(f(z)) % t(t(g)(0) + t)(1);\ng(x+(3,4)-w) | h 5) & m\n(f)^m(m);\n";
    assert_eq!(
        out(src),
        "f(2 * (y+1)) + f(2 * (f(2 * (z[0])))) % f(2 * (0)) + t(1); \
         f(2 * (2 +(3,4)-0,1)) | f(2 * (~ 5)) & f(2 * (0,1)) ^m(0,1);"
    );
}

#[test]
fn stringify_and_paste() {
    assert_eq!(
        out("#define S(x) #x\nS(a  +  \"q\\n\")\n"),
        "\"a + \\\"q\\\\n\\\"\""
    );
    assert_eq!(
        out("#define CAT(a, b) a ## b\nCAT(foo, bar) CAT(, x) CAT(y, ) CAT(8w, 5)\n"),
        "foobar x y 8w5"
    );
    assert_eq!(out("#define X(n) hdr_ ## n ## _t\nX(ipv4)\n"), "hdr_ipv4_t");
    // arguments of ## are not expanded; others are
    assert_eq!(out("#define A 1\n#define C(x) x ## 2 x\nC(A)\n"), "A2 1");
    // str(x) with expansion through a helper
    assert_eq!(
        out("#define _S(x) #x\n#define S(x) _S(x)\n#define V 42\nS(V)\n"),
        "\"42\""
    );
}

/// A `##` whose two sides make no single token (ISO C leaves it undefined): GNU cpp, as p4c runs
/// it, keeps both tokens apart and goes on; so does nevermiss, with one warning per paste and use.
/// A failed paste ends its chain: the right side is pasted on with the next `##` (`hdr.u0_e`).
#[test]
fn failed_paste_keeps_both_tokens() {
    let u = pp("#define P(a, b) a ## b\nP(+, /) P(/, /)\n");
    assert_eq!(norm(&u), "+ / / /", "{:?}", u.text);
    assert_eq!(u.warnings().len(), 2);
    let w = &u.warnings()[0];
    assert_eq!(w.severity, Severity::Warning);
    assert_eq!(
        w.message,
        "pasting \"+\" and \"/\" does not give a valid preprocessing token"
    );
    let loc = w.location.as_ref().unwrap();
    assert_eq!((loc.line, loc.col), (2, 1));
    let u = pp(concat!(
        "#define D(u, o) action a_ ## u ## (inout x) { hdr. ## u ## _e = hdr. ## o ## _e; }\n",
        "D(u0, c)\nD(u1, u0)\n",
    ));
    assert_eq!(
        norm(&u),
        // As `cpp -x assembler-with-cpp` prints it (the space before an argument stays).
        "action a_u0 (inout x) { hdr.u0_e = hdr. c_e; } action a_u1 (inout x) { hdr.u1_e = hdr. u0_e; }"
    );
    let msgs: Vec<&str> = u.warnings().iter().map(|w| w.message.as_str()).collect();
    assert_eq!(msgs.len(), 6, "{msgs:?}");
    assert!(msgs[0].contains("\"a_u0\" and \"(\""), "{msgs:?}");
}

#[test]
fn variadic() {
    assert_eq!(
        out("#define V(f, ...) f(__VA_ARGS__)\nV(g, 1, 2, 3) V(h)\n"),
        "g(1, 2, 3) h()"
    );
    assert_eq!(
        out("#define E(fmt, ...) p(fmt, ## __VA_ARGS__)\nE(a) E(a, b)\n"),
        "p(a) p(a, b)"
    );
    assert_eq!(out("#define N(args...) [args]\nN(1, 2)\n"), "[1, 2]");
}

#[test]
fn paste_avoidance_in_output() {
    assert_eq!(out("#define M -1\nx = -M;\n"), "x = - -1;");
    assert_eq!(out("#define E\na E b\n"), "a b");
    assert_eq!(out("#define I(x) x\nI(a)I(b)\n"), "a b");
}

#[test]
fn undef_and_redefine() {
    let u = pp("#define A 1\n#undef A\nA\n#define B 1\n#define B 2\nB\n");
    assert_eq!(norm(&u), "A 2");
    assert_eq!(u.warnings().len(), 1);
    assert_eq!(u.warnings()[0].severity, Severity::Warning);
    assert!(u.warnings()[0].message.contains("\"B\" redefined"));
    // an identical redefinition is fine
    assert!(pp("#define A (1)\n#define A  (1)\n").warnings().is_empty());
}

#[test]
fn builtins_and_defines() {
    assert_eq!(out("a\n__LINE__ __FILE__\n"), "a 2 \"t.p4\"");
    assert_eq!(out("#define L __LINE__\n\nL\n"), "3");
    let opts = Options {
        include_dirs: vec![],
        defines: vec![
            ("X".into(), "1".into()),
            ("Y".into(), "".into()),
            ("F(a)".into(), "a+a".into()),
        ],
    };
    let u = preprocess_str("t.p4", "X [Y] F(2)\n#if X\nyes\n#endif\n", &opts).unwrap();
    assert_eq!(norm(&u), "1 [ ] 2 +2 yes");
    // positions are still right after the command-line defines
    assert_eq!(u.locate(pos(&u, "yes", 0)).line, 3);
    assert_eq!(u.locate(pos(&u, "yes", 0)).file, "t.p4");
}

#[test]
fn macro_errors() {
    let d = pp_err("#define F(a, b) a\nF(1)\n");
    assert_eq!(
        d.message,
        "macro \"F\" requires 2 arguments, but only 1 given"
    );
    let d = pp_err("#define F(a) a\nF(1, 2)\n");
    assert_eq!(
        d.message,
        "macro \"F\" passed 2 arguments, but takes just 1"
    );
    let d = pp_err("#define F(a) a\nF(1, \n");
    assert!(
        d.message.starts_with("unterminated argument list"),
        "{}",
        d.message
    );
    assert!(pp_err("#define F(a, a) a\n")
        .message
        .contains("duplicate macro parameter"));
    assert!(pp_err("#define F(a) # b\n")
        .message
        .contains("'#' is not followed by a macro parameter"));
    assert!(pp_err("#define F ## a\n")
        .message
        .contains("'##' cannot appear"));
    assert!(pp_err("#define defined 1\n")
        .message
        .contains("\"defined\" cannot be used"));
    assert!(pp_err("#define 3 1\n")
        .message
        .contains("macro names must be identifiers"));
    assert!(pp_err("#define\n").message.contains("no macro name given"));
    assert!(pp_err("#define F(a\n").message.contains("missing ')'"));
}

#[test]
fn expansion_blowup_is_an_error() {
    let mut src = String::from("#define a0 x x\n");
    for i in 1..40 {
        src.push_str(&format!("#define a{i} a{} a{}\n", i - 1, i - 1));
    }
    src.push_str("a39\n");
    let d = pp_err(&src);
    assert!(d.message.contains("too large"), "{}", d.message);
    // many lines, each within the per-line budget, still hit the total budget
    let mut src = String::from("#define a0 x x\n");
    for i in 1..17 {
        src.push_str(&format!("#define a{i} a{} a{}\n", i - 1, i - 1));
    }
    src.push_str(&"a16\n".repeat(100));
    let d = pp_err(&src);
    assert!(d.message.contains("in the program"), "{}", d.message);
    let deep = format!(
        "#define F(x) x\n{}1{}\n",
        "F(".repeat(1000),
        ")".repeat(1000)
    );
    assert!(pp_err(&deep).message.contains("nested too deeply"));
}

// ---------------------------------------------------------------------------------------------
// Conditionals

#[test]
fn conditionals() {
    let src =
        "#define A\n#ifdef A\na\n#else\nna\n#endif\n#ifndef B\nnb\n#elif 1\nx\n#else\ny\n#endif\n\
               #if 0\n#error not here\n#bogus\n#elif defined(A) && !defined B\nc\n#endif\n";
    assert_eq!(out(src), "a nb c");
    assert_eq!(
        out("#if 0\n#if 1\nx\n#else\ny\n#endif\n#else\nz\n#endif\n"),
        "z"
    );
    assert_eq!(out("#if 1\n#elif 1/0\n#endif\nok\n"), "ok");
    assert_eq!(out("#if 0\n'\n\"\n#endif\nok\n"), "ok");
}

#[test]
fn if_expressions() {
    let t = |e: &str| out(&format!("#if {e}\nT\n#else\nF\n#endif\n")) == "T";
    assert!(t("1 + 2 * 3 == 7"));
    assert!(t("(1 << 4) == 0x10 && 017 == 15"));
    assert!(t("-1 < 0"));
    assert!(!t("-1 < 0u"));
    assert!(t("10 / 3 == 3 && 10 % 3 == 1"));
    assert!(t("~0 == -1 && !0 && (1 ? 2 : 3) == 2"));
    assert!(t("(0, 1)"));
    assert!(t("UNDEFINED == 0"));
    assert!(t("0 || 1 / 1"));
    assert!(t("0 && 1 / 0 || 1"));
    assert!(t("1L == 1ul && 0xffffffffffffffff == -1"));
    assert!(t("'a' == 97"));
    assert!(t(
        "(2 ^ 3) == 1 && (6 & 3) == 2 && (4 | 1) == 5 && 5 >= 5 && 4 <= 5 && 5 > 4 && 5 != 4"
    ));
    assert!(t("defined __LINE__"));
    assert!(out("#define E 2+2\n#if E == 4\nT\n#endif\n") == "T");
    assert!(out("#define D defined(X)\n#define X\n#if D\nT\n#endif\n") == "T");
}

#[test]
fn if_errors() {
    assert_eq!(
        pp_err("#if 1 / 0\n#endif\n").message,
        "division by zero in #if"
    );
    assert_eq!(
        pp_err("#if 1 % 0\n#endif\n").message,
        "division by zero in #if"
    );
    assert!(pp_err("#if\n#endif\n")
        .message
        .contains("#if with no expression"));
    assert!(pp_err("#if (1\n#endif\n").message.contains("missing ')'"));
    assert!(pp_err("#if 1 2\n#endif\n")
        .message
        .contains("missing binary operator"));
    assert!(pp_err("#if 1 +\n#endif\n")
        .message
        .contains("no right operand"));
    assert!(pp_err("#if \"s\"\n#endif\n")
        .message
        .contains("not valid in preprocessor expressions"));
    assert!(pp_err("#if 8w1\n#endif\n")
        .message
        .contains("invalid suffix"));
    assert!(pp_err("#if 1.0\n#endif\n").message.contains("floating"));
    assert!(pp_err("#if defined\n#endif\n")
        .message
        .contains("requires an identifier"));
    let deep = format!("#if {}1{}\n#endif\n", "(".repeat(5000), ")".repeat(5000));
    assert!(pp_err(&deep).message.contains("nested too deeply"));
}

#[test]
fn conditional_structure_errors() {
    let d = pp_err("a\n#ifdef X\nb\n");
    assert_eq!(d.message, "unterminated #ifdef");
    assert_eq!(d.location.as_ref().map(|l| (l.line, l.col)), Some((2, 1)));
    assert_eq!(pp_err("#endif\n").message, "#endif without #if");
    assert_eq!(pp_err("#else\n").message, "#else without #if");
    assert_eq!(
        pp_err("#if 1\n#else\n#else\n#endif\n").message,
        "#else after #else"
    );
    assert_eq!(
        pp_err("#if 1\n#else\n#elif 1\n#endif\n").message,
        "#elif after #else"
    );
    assert!(pp_err("#ifdef\n#endif\n")
        .message
        .contains("no macro name given in #ifdef"));
    assert!(pp_err("/* never closed\n")
        .message
        .contains("unterminated comment"));
}

// ---------------------------------------------------------------------------------------------
// Other directives

#[test]
fn error_directive() {
    let d = pp_err("a\n  #  error this is \"bad\"   !\n");
    assert_eq!(d.message, "this is \"bad\" !");
    assert_eq!(d.severity, Severity::Error);
    let r = render(&Unit::default(), &d);
    assert!(
        r.starts_with(
            "t.p4:2:3: error: this is \"bad\" !\n    #  error this is \"bad\"   !\n    ^\n"
        ),
        "{r}"
    );
    assert_eq!(pp_err("#error\n").message, "#error");
}

#[test]
fn warning_directive() {
    let u = pp("#warning careful now\nx\n");
    assert_eq!(norm(&u), "x");
    assert_eq!(u.warnings()[0].message, "careful now");
    assert_eq!(u.warnings()[0].location.as_ref().unwrap().line, 1);
}

#[test]
fn line_directive() {
    let u = pp(
        "a\n#line 100 \"other.p4\"\nb\nc\n#line 7\nd\n# 50 \"marker.p4\" 2\ne\n__LINE__ __FILE__\n",
    );
    let at = |s: &str| {
        let l = u.locate(pos(&u, s, 0));
        (l.file, l.line)
    };
    assert_eq!(at("a"), ("t.p4".into(), 1));
    assert_eq!(at("b"), ("other.p4".into(), 100));
    assert_eq!(at("c"), ("other.p4".into(), 101));
    assert_eq!(at("d"), ("other.p4".into(), 7));
    assert_eq!(at("e"), ("marker.p4".into(), 50));
    assert!(norm(&u).ends_with("e 51 \"marker.p4\""), "{}", norm(&u));
    // the source line shown is the physical line
    assert_eq!(u.locate(pos(&u, "b", 0)).line_text, "b");
    assert!(pp_err("#line x\n")
        .message
        .contains("is not a positive integer"));
}

#[test]
fn pragma_and_null_directive() {
    let u = pp("a\n#pragma foo bar\n#\nb\n");
    assert_eq!(
        u.text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>(),
        ["a", "#pragma foo bar", "b"]
    );
    assert_eq!(u.locate(pos(&u, "foo", 0)).line, 2);
    assert!(pp_err("#bogus\n")
        .message
        .contains("invalid preprocessing directive #bogus"));
    assert!(pp_err("# register x\n")
        .message
        .contains("invalid preprocessing directive #register"));
}

// ---------------------------------------------------------------------------------------------
// #include

#[test]
fn includes_and_locations() {
    let dir = tree(
        "inc",
        &[
            ("main.p4", "#include \"sub/a.p4\"\n#include <sys.p4>\nmain_decl;\n#define M(x) x\nafter M(1);\n"),
            ("sub/a.p4", "// a\n#include \"b.p4\"\na_decl;\n"),
            ("sub/b.p4", "\n\nb_decl;\n"),
            ("sysdir/sys.p4", "#ifndef SYS\n#define SYS\nsys_decl;\n#endif\n"),
        ],
    );
    let opts = Options {
        include_dirs: vec![dir.join("sysdir")],
        defines: vec![],
    };
    let u = preprocess(&dir.join("main.p4"), &opts).unwrap();
    assert_eq!(norm(&u), "b_decl; a_decl; sys_decl; main_decl; after 1;");
    let at = |s: &str| {
        let l = u.locate(pos(&u, s, 0));
        (l.file, l.line, l.col)
    };
    let d = dir.display().to_string();
    assert_eq!(at("b_decl"), (format!("{d}/sub/b.p4"), 3, 1));
    assert_eq!(at("a_decl"), (format!("{d}/sub/a.p4"), 3, 1));
    assert_eq!(at("sys_decl"), (format!("{d}/sysdir/sys.p4"), 3, 1));
    assert_eq!(at("main_decl"), (format!("{d}/main.p4"), 3, 1));
    // after a macro expansion, later tokens keep exact columns; the expansion maps to the use
    assert_eq!(at("after"), (format!("{d}/main.p4"), 5, 1));
    assert_eq!(at("1;").2, 7);
}

#[test]
fn directives_inside_macro_arguments() {
    let src = "#define F(a, b) [a b]\nF(1,\n#if 1\n yes\n#else\n no\n#endif\n)\nafter\n";
    assert_eq!(out(src), "[1 yes] after");
    let d = pp_err("#define F(a) a\nF(\n#include \"x.p4\"\n)\n");
    assert!(
        d.message.contains("#include inside macro arguments"),
        "{}",
        d.message
    );
    // a function-like macro name at the end of a line followed by a directive is not a call
    assert_eq!(out("#define F(a) a\nF\n#define G 1\n(G)\n"), "F (1)");
}

#[test]
fn file_macro_in_include() {
    let dir = tree(
        "file",
        &[
            ("main.p4", "#include \"i.p4\"\n__FILE__\n"),
            ("i.p4", "__FILE__ __LINE__\n"),
        ],
    );
    let u = preprocess(&dir.join("main.p4"), &Options::default()).unwrap();
    let (i, m) = (dir.join("i.p4"), dir.join("main.p4"));
    assert_eq!(
        norm(&u),
        format!("\"{}\" 1 \"{}\"", i.display(), m.display())
    );
}

#[test]
fn default_include_dir_is_used_first() {
    let d = p4_front::preprocess::default_include_dir();
    assert!(d.ends_with("p4include"), "{}", d.display());
}

#[test]
fn include_guard_and_pragma_once() {
    let dir = tree(
        "guard",
        &[
            (
                "main.p4",
                "#include \"g.p4\"\n#include \"g.p4\"\n#include \"o.p4\"\n#include \"o.p4\"\nend\n",
            ),
            ("g.p4", "#ifndef G\n#define G\nguarded\n#endif\n"),
            ("o.p4", "#pragma once\nonce\n"),
        ],
    );
    let u = preprocess(&dir.join("main.p4"), &Options::default()).unwrap();
    assert_eq!(norm(&u), "guarded once end");
}

#[test]
fn include_errors_point_into_the_right_file() {
    let dir = tree(
        "incerr",
        &[
            ("main.p4", "first\n#include \"a.p4\"\n"),
            ("a.p4", "a\n#define F(x) x\nF(1)\n#include \"missing.p4\"\n"),
            ("e.p4", "#include \"e2.p4\"\n"),
            ("e2.p4", "ok\n\n  #error stop here\n"),
            ("cyc.p4", "#include \"cyc.p4\"\n"),
        ],
    );
    let d = preprocess(&dir.join("main.p4"), &Options::default()).unwrap_err();
    assert_eq!(d.message, "include file \"missing.p4\" not found");
    let l = d.location.clone().unwrap();
    assert_eq!(
        (l.file.as_str(), l.line, l.col),
        (dir.join("a.p4").to_str().unwrap(), 4, 10)
    );
    let r = render(&Unit::default(), &d);
    let main = dir.join("main.p4");
    let expected_head = format!(
        "{}:4:10: error: include file \"missing.p4\" not found\n  #include \"missing.p4\"\n           ^^^^^^^^^^^^\n",
        dir.join("a.p4").display()
    );
    assert!(r.starts_with(&expected_head), "{r}");
    assert!(
        r.contains(&format!(
            "note: in file included from {}:2\n",
            main.display()
        )),
        "{r}"
    );
    assert!(r.contains("note: searched: "), "{r}");

    let d = preprocess(&dir.join("e.p4"), &Options::default()).unwrap_err();
    let l = d.location.clone().unwrap();
    assert_eq!(
        (l.file, l.line, l.col),
        (dir.join("e2.p4").display().to_string(), 3, 3)
    );
    assert_eq!(d.message, "stop here");

    let d = preprocess(&dir.join("cyc.p4"), &Options::default()).unwrap_err();
    assert!(
        d.message.contains("nested more than 64 levels"),
        "{}",
        d.message
    );
    assert!(d
        .notes
        .iter()
        .any(|n| n.message.starts_with("include cycle")));

    let d = preprocess(&dir.join("nope.p4"), &Options::default()).unwrap_err();
    assert!(d.message.starts_with("cannot read"), "{}", d.message);
    assert!(pp_err("#include\n").message.contains("#include expects"));
    assert!(pp_err("#include <a.p4\n")
        .message
        .contains("missing terminating >"));
    assert!(pp_err("#include \"\"\n").message.contains("empty filename"));
}

#[test]
fn include_search_order_and_macro_names() {
    let dir = tree(
        "order",
        &[
            ("main.p4", "#include \"x.p4\"\n#include <x.p4>\n#define H <y.p4>\n#include H\n#define Q \"x.p4\"\n#include Q\n"),
            ("x.p4", "local\n"),
            ("d1/x.p4", "d1\n"),
            ("d1/y.p4", "y1\n"),
            ("d2/x.p4", "d2\n"),
            ("d2/y.p4", "y2\n"),
        ],
    );
    let opts = Options {
        include_dirs: vec![dir.join("d1"), dir.join("d2")],
        defines: vec![],
    };
    let u = preprocess(&dir.join("main.p4"), &opts).unwrap();
    assert_eq!(norm(&u), "local d1 y1 local");
}

#[test]
fn errors_after_include_and_expansion_map_back() {
    // A diagnostic made later (e.g. by the parser) on the unit: positions after an include and
    // after a macro expansion map back to the main file's lines.
    let dir = tree(
        "later",
        &[
            (
                "main.p4",
                "#include \"h.p4\"\n#define T bit<8>\nT f;\n  oops;\n",
            ),
            ("h.p4", "header h {}\n"),
        ],
    );
    let u = preprocess(&dir.join("main.p4"), &Options::default()).unwrap();
    let p = pos(&u, "oops", 0);
    let d = Diagnostic::error(Span::new(p, p + 4), "unexpected `oops`");
    let r = render(&u, &d);
    assert_eq!(
        r,
        format!(
            "{}:4:3: error: unexpected `oops`\n    oops;\n    ^^^^\n",
            dir.join("main.p4").display()
        )
    );
    // a token made by expansion points at the macro use
    let p = pos(&u, "bit", 0);
    let r = render(&u, &Diagnostic::error(Span::new(p, p + 3), "in macro"));
    assert_eq!(
        r,
        format!(
            "{}:3:1: error: in macro\n  T f;\n  ^\n",
            dir.join("main.p4").display()
        )
    );
    let p = pos(&u, "f;", 0);
    assert_eq!(u.locate(p).col, 3);
    let p = pos(&u, "header", 0);
    assert_eq!(u.locate(p).file, dir.join("h.p4").display().to_string());
}

#[test]
fn expansion_underlines_whole_use() {
    let u = pp("#define ADD(a,b) a+b\nx = ADD(1, 2);\n");
    let p = pos(&u, "1 +", 0);
    let r = render(&u, &Diagnostic::error(Span::new(p, p + 1), "m"));
    assert_eq!(r, "t.p4:2:5: error: m\n  x = ADD(1, 2);\n      ^^^^^^^^^\n");
}

// ---------------------------------------------------------------------------------------------
// Robustness and speed

fn best_of_5(src: &str) -> (Unit, std::time::Duration) {
    let mut e = std::time::Duration::MAX;
    let mut u = Unit::default();
    for _ in 0..5 {
        let t = std::time::Instant::now();
        u = pp(src);
        e = e.min(t.elapsed());
    }
    (u, e)
}

#[test]
fn big_programs_are_fast() {
    // Typical P4: declarations, comments, a few constants from #define.
    let mut src =
        String::from("#ifndef PROG\n#define PROG\n#define TABLE_SIZE 1024\n#define ETH 0x0800\n");
    for i in 0..500 {
        src.push_str(&format!(
            "/* block {i} */\nheader h{i}_t {{\n    bit<48> dst; // destination\n    bit<16> etype;\n}}\n\
             action a{i}(bit<9> port) {{ meta.port = port; }}\n\
             table t{i} {{\n    key = {{ hdr.h{i}.etype : exact; }}\n    actions = {{ a{i}; }}\n    size = TABLE_SIZE;\n}}\n"
        ));
    }
    src.push_str("#endif\n");
    let (u, typical) = best_of_5(&src);
    assert!(u.text.contains("size = 1024;"));
    // Every line a macro use, nested, plus comments.
    let mut heavy = String::from("#define W 32\n#define FIELD(n) bit<W> n;\n");
    for i in 0..5000 {
        heavy.push_str(&format!(
            "header h{i}_t {{ FIELD(f{i}) bit<8> g; /* c */ }} // {i}\n"
        ));
    }
    let (u, macro_heavy) = best_of_5(&heavy);
    assert!(u.text.contains("header h4999_t { bit<32> f4999; bit<8> g;"));
    println!(
        "5000 lines: typical ({} bytes) {typical:?}, macro on every line ({} bytes) {macro_heavy:?}",
        src.len(),
        heavy.len()
    );
    // generous bound (debug builds, shared machine); see the report for release numbers
    assert!(typical.as_millis() < 2000 && macro_heavy.as_millis() < 2000);
}

mod props {
    use super::*;
    use proptest::prelude::*;

    fn check(text: &str) {
        if let Ok(u) = preprocess_str("f.p4", text, &Options::default()) {
            for p in (0..=u.text.len() as u32 + 2).step_by(7) {
                let l = u.locate(p);
                assert!(l.line >= 1 && l.col >= 1);
                let _ = u.slice(Span::new(p, p + 5));
                let _ = render(&u, &Diagnostic::error(Span::new(p, p + 3), "m"));
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            check(&String::from_utf8_lossy(&bytes));
        }

        #[test]
        fn random_pp_text_never_panics(parts in proptest::collection::vec(prop_oneof![
            Just("#define "), Just("#define F(a, ...) "), Just("#undef "), Just("#if "), Just("#ifdef "), Just("#elif "),
            Just("#else\n"), Just("#endif\n"), Just("#line 5 \"x\"\n"), Just("#include \"nope\"\n"), Just("#error e\n"),
            Just("#pragma once\n"), Just("F"), Just("("), Just(")"), Just(","), Just("#"), Just("##"), Just("__VA_ARGS__"),
            Just("__LINE__"), Just("defined"), Just("1"), Just("0x"), Just("/"), Just("*"), Just("\""), Just("'"),
            Just("\\"), Just("\n"), Just(" "), Just("/*"), Just("*/"), Just("//"), Just("é"), Just("X"), Just("&&"),
            Just("?"), Just(":"), Just("-"), Just("<"), Just(">"),
        ], 0..80)) {
            check(&parts.concat());
        }

        #[test]
        fn random_unit_positions(text in ".{0,200}", lo in 0u32..300, len in 0u32..50) {
            let u = Unit::from_string("s", &text);
            let _ = u.locate(lo);
            let _ = u.slice(Span::new(lo, lo + len));
            let _ = u.slice(Span::new(lo + len, lo));
            let _ = render(&u, &Diagnostic::error(Span::new(lo, lo + len), "m").with_note(Some(Span::new(len, lo)), "n"));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Comparison with gcc's cpp over p4c's sample programs (run by hand, see the report)

/// Tokens of a preprocessed text, for comparing outputs that differ only in spacing.
fn tokens(text: &str) -> Vec<String> {
    let mut v = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            continue;
        }
        let mut s = String::new();
        if c.is_alphanumeric() || c == '_' {
            while let Some(&d) = chars.peek() {
                if d.is_alphanumeric() || d == '_' {
                    s.push(d);
                    chars.next();
                } else {
                    break;
                }
            }
        } else if c == '"' {
            s.push(c);
            chars.next();
            while let Some(d) = chars.next() {
                s.push(d);
                if d == '\\' {
                    if let Some(e) = chars.next() {
                        s.push(e);
                    }
                } else if d == '"' {
                    break;
                }
            }
        } else {
            s.push(c);
            chars.next();
        }
        v.push(s);
    }
    v
}

#[test]
#[ignore = "prints the preprocessed NEVERMISS_PP_DUMP file"]
fn dump() {
    let Ok(f) = std::env::var("NEVERMISS_PP_DUMP") else {
        return;
    };
    let inc = std::env::var("NEVERMISS_CPP_INCLUDE")
        .map(|d| vec![PathBuf::from(d)])
        .unwrap_or_default();
    match preprocess(
        Path::new(&f),
        &Options {
            include_dirs: inc,
            defines: vec![],
        },
    ) {
        Ok(u) => print!("{}", u.text),
        Err(d) => print!("{}", render(&Unit::default(), &d)),
    }
}

#[test]
#[ignore = "needs gcc's cpp and p4c's samples: NEVERMISS_CPP_COMPARE=<dir of .p4 files> NEVERMISS_CPP_INCLUDE=<dir>"]
fn compare_with_cpp() {
    let Ok(dir) = std::env::var("NEVERMISS_CPP_COMPARE") else {
        return;
    };
    let inc = std::env::var("NEVERMISS_CPP_INCLUDE").unwrap_or_default();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "p4"))
        .collect();
    files.sort();
    let (mut same, mut differ, mut both_fail, mut only_cpp_fails, mut only_we_fail) =
        (0, 0, 0, 0, 0);
    let mut same_words = 0;
    let mut total_ours = std::time::Duration::ZERO;
    for f in &files {
        let cpp = std::process::Command::new("cpp")
            .args(["-P", "-undef", "-nostdinc", "-I", &inc])
            .arg(f)
            .output()
            .unwrap();
        let t = std::time::Instant::now();
        let ours = preprocess(
            f,
            &Options {
                include_dirs: vec![PathBuf::from(&inc)],
                defines: vec![],
            },
        );
        total_ours += t.elapsed();
        match (cpp.status.success(), ours) {
            (true, Ok(u)) => {
                let theirs = String::from_utf8_lossy(&cpp.stdout);
                // cpp passes `#pragma` lines through too; compare token streams.
                let words = |s: &str| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();
                if words(&theirs) == words(&u.text) {
                    same_words += 1;
                } else {
                    println!("SPACING {}", f.display());
                }
                if tokens(&theirs) == tokens(&u.text) {
                    same += 1;
                } else {
                    differ += 1;
                    println!("DIFFER {}", f.display());
                }
            }
            (false, Err(_)) => both_fail += 1,
            (false, Ok(_)) => {
                only_cpp_fails += 1;
                println!("CPP-ONLY-FAILS {}", f.display());
            }
            (true, Err(d)) => {
                only_we_fail += 1;
                println!(
                    "WE-FAIL {}: {}",
                    f.display(),
                    render(&Unit::default(), &d).lines().next().unwrap_or("")
                );
            }
        }
    }
    println!(
        "files {} same-tokens {same} (same-words {same_words}) differ {differ} both-fail {both_fail} only-cpp-fails {only_cpp_fails} only-we-fail {only_we_fail}; ours took {total_ours:?}",
        files.len()
    );
    let _ = Path::new(&dir);
}
