#!/usr/bin/env python3
"""Counts long functions in the workspace's non-test Rust code, per crate.

Usage: scripts/fn-lengths.py [--list N] [--crate NAME]...

Reads crates/*/src/**/*.rs (not tests/, benches/, examples/, and not the bodies of
`#[cfg(test)]` items), finds every `fn` with a body and counts its lines from the line
of `fn` to the line of its closing brace. Prints, per crate, how many functions are over
200 and over 100 lines, and (with --list N) every function over N lines, longest first.
Also counts `Result<_, String>` in library crates (every crate but the binary).
"""
import argparse
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def blank(src: str) -> str:
    """The source with comments, strings and char literals replaced by spaces (newlines kept)."""
    out = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif src.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if src.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif src.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif c == "r" and re.match(r'r#*"', src[i:i + 10]) and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_")):
            m = re.match(r'r(#*)"', src[i:])
            end = '"' + m.group(1)
            j = src.find(end, i + len(m.group(0)))
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            j += 1
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif c == "'":
            # a char literal ('a', '\n', '\u{..}') or a lifetime ('a)
            m = re.match(r"'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'", src[i:])
            if m:
                out.append(" " * len(m.group(0)))
                i += len(m.group(0))
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def match_brace(text: str, open_at: int) -> int:
    depth = 0
    for j in range(open_at, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return len(text) - 1


def test_ranges(text: str):
    """Byte ranges of items under #[cfg(test)] (test modules and test-only functions)."""
    ranges = []
    for m in re.finditer(r"#\[cfg\(test\)\]", text):
        k = m.end()
        # the item's body: the first `{` (or a `;` that ends an item without a body)
        b = re.search(r"[{;]", text[k:])
        if not b or text[k + b.start()] == ";":
            continue
        start = k + b.start()
        ranges.append((m.start(), match_brace(text, start)))
    return ranges


FN = re.compile(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)")


def functions(path: pathlib.Path):
    text = blank(path.read_text())
    skip = test_ranges(text)
    for m in FN.finditer(text):
        if any(a <= m.start() <= b for a, b in skip):
            continue
        # the body's `{` after the signature (skip fns without body: `;` first at depth 0)
        j, depth = m.end(), 0
        while j < len(text):
            ch = text[j]
            if ch in "(<[":
                depth += 1
            elif ch in ")>]":
                depth -= 1 if not (ch == ">" and text[j - 1] == "-") else 0
            elif ch == ";" and depth <= 0:
                j = -1
                break
            elif ch == "{" and depth <= 0:
                break
            j += 1
        if j < 0 or j >= len(text):
            continue
        end = match_brace(text, j)
        first = text.count("\n", 0, m.start()) + 1
        last = text.count("\n", 0, end) + 1
        yield m.group(1), first, last - first + 1


def string_results(path: pathlib.Path) -> int:
    text = blank(path.read_text())
    skip = test_ranges(text)
    return sum(
        1 for m in re.finditer(r"Result<[^;{]*?,\s*String\s*>", text)
        if not any(a <= m.start() <= b for a, b in skip)
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--list", type=int, default=0, metavar="N", help="list every function over N lines")
    ap.add_argument("--crate", action="append", default=[], help="only these crates")
    ap.add_argument("--root", type=pathlib.Path, default=ROOT, help="the checkout to measure (default: this one)")
    args = ap.parse_args()
    root = args.root.resolve()
    crates = sorted(p for p in (root / "crates").iterdir() if (p / "src").is_dir())
    if args.crate:
        crates = [c for c in crates if c.name in args.crate]
    total = [0, 0, 0]
    long = []
    print(f"{'crate':<20} {'>200':>5} {'>100':>5} {'Result<_, String>':>18}")
    for c in crates:
        over200 = over100 = 0
        strings = 0
        for f in sorted((c / "src").rglob("*.rs")):
            for name, line, n in functions(f):
                if n > 100:
                    over100 += 1
                if n > 200:
                    over200 += 1
                if args.list and n > args.list:
                    long.append((n, f"{f.relative_to(root)}:{line}", name))
            if c.name != "nevermiss":
                strings += string_results(f)
        lib = "" if c.name != "nevermiss" else " (binary)"
        shown = strings if c.name != "nevermiss" else "-"
        print(f"{c.name:<20} {over200:>5} {over100:>5} {shown:>18}{lib}")
        total[0] += over200
        total[1] += over100
        total[2] += strings
    print(f"{'total':<20} {total[0]:>5} {total[1]:>5} {total[2]:>18}")
    for n, where, name in sorted(long, reverse=True):
        print(f"{n:5}  {name:<32} {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
