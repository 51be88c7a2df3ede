#!/usr/bin/env python3
"""Lists import circles among the files of each crate (non-test code).

Usage: scripts/mod-cycles.py [--crate NAME]... [--edges]

A file imports another when its code names a path into it: `crate::a::b`, `super::x`,
`self::x` (in a `mod.rs`/`lib.rs`), or a `use` tree listing it (`use crate::{a, b::c}`).
Paths resolve to the deepest file that exists (`crate::a::b::Item` is `a/b.rs` when it
exists, else `a.rs` or `a/mod.rs`). A circle is a strongly connected set of two or more
files; a parent naming its own child modules (`mod x;`) is not an import. Prints, per
crate, every circle with its files; exits 0 whatever it finds (it measures, it does not judge).
"""
import argparse
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from importlib import import_module  # noqa: E402

fnl = import_module("fn-lengths")


def module_of(src: pathlib.Path, path: pathlib.Path):
    """The module path (list of names) of a file under `src`."""
    rel = path.relative_to(src).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return parts


def file_of(modules, parts):
    """The deepest module among `parts`' prefixes that is a file."""
    for k in range(len(parts), -1, -1):
        if tuple(parts[:k]) in modules:
            return modules[tuple(parts[:k])]
    return None


def expand_use(tree: str, prefix):
    """Every path of a `use` tree (without the trailing item names' braces)."""
    tree = tree.strip()
    out = []
    m = re.match(r"^(.*?)::\s*\{(.*)\}$", tree, re.S)
    if m:
        head = [p for p in m.group(1).replace(" ", "").split("::") if p]
        body = m.group(2)
        depth, cur, items = 0, "", []
        for ch in body:
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            if ch == "," and depth == 0:
                items.append(cur)
                cur = ""
            else:
                cur += ch
        items.append(cur)
        for it in items:
            if it.strip():
                out += expand_use(it, prefix + head)
        return out
    tree = re.sub(r"\s+as\s+\w+$", "", tree)
    return [prefix + [p for p in tree.replace(" ", "").split("::") if p]]


def resolve(parts, here, is_dir_module):
    """A path as written in module `here` to an absolute module path, or None if external."""
    if not parts:
        return None
    base = list(here) if is_dir_module else list(here[:-1]) if here else []
    if parts[0] == "crate":
        return parts[1:]
    if parts[0] == "self":
        return list(here) + parts[1:]
    if parts[0] == "super":
        cur = list(here)
        while parts and parts[0] == "super":
            cur = cur[:-1]
            parts = parts[1:]
        return cur + parts
    return None


def graph(crate: pathlib.Path):
    src = crate / "src"
    files = [f for f in sorted(src.rglob("*.rs"))]
    modules = {tuple(module_of(src, f)): f for f in files}
    edges = {f: set() for f in files}
    for f in files:
        text = fnl.blank(f.read_text())
        for a, b in fnl.test_ranges(text):
            text = text[:a] + re.sub(r"[^\n]", " ", text[a:b + 1]) + text[b + 1:]
        here = module_of(src, f)
        is_dir = f.name in ("mod.rs", "lib.rs", "main.rs")
        paths = []
        for m in re.finditer(r"\buse\s+([^;]+);", text):
            paths += expand_use(m.group(1), [])
        for m in re.finditer(r"\b((?:crate|super|self)(?:\s*::\s*\w+)+)", text):
            paths.append([p for p in m.group(1).replace(" ", "").split("::") if p])
        for p in paths:
            absolute = resolve(p, here, is_dir)
            if absolute is None:
                continue
            target = file_of(modules, absolute)
            if target is None or target == f:
                continue
            # a parent naming its children is the module tree, not an import
            if modules.get(tuple(module_of(src, target)[:-1])) == f and is_dir and \
                    module_of(src, target)[:-1] == here and len(p) == 2 and p[0] == "self":
                continue
            edges[f].add(target)
    return edges


def sccs(edges):
    """Tarjan's strongly connected components."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(comp)

    sys.setrecursionlimit(10000)
    for v in edges:
        if v not in index:
            visit(v)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--crate", action="append", default=[], help="only these crates")
    ap.add_argument("--edges", action="store_true", help="also print the imports inside each circle")
    ap.add_argument("--root", type=pathlib.Path, default=ROOT, help="the checkout to measure (default: this one)")
    args = ap.parse_args()
    root = args.root.resolve()
    crates = sorted(p for p in (root / "crates").iterdir() if (p / "src").is_dir())
    if args.crate:
        crates = [c for c in crates if c.name in args.crate]
    total = 0
    for c in crates:
        edges = graph(c)
        circles = sorted((sorted(comp) for comp in sccs(edges) if len(comp) > 1), key=len, reverse=True)
        print(f"{c.name}: {len(circles)} circle(s)" + (", largest " + str(len(circles[0])) if circles else ""))
        for comp in circles:
            names = [str(f.relative_to(c / "src")) for f in comp]
            print(f"  {len(comp)} files: {' '.join(names)}")
            if args.edges:
                s = set(comp)
                for f in comp:
                    for t in sorted(edges[f] & s):
                        print(f"    {f.relative_to(c / 'src')} -> {t.relative_to(c / 'src')}")
        total += len(circles)
    print(f"total: {total} circle(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
