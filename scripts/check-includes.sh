#!/usr/bin/env bash
# Checks nevermiss's p4include/ against the P4 community's test programs.
#
#   scripts/check-includes.sh [--p4c DIR] [--compare] [-D NAME=VALUE]... [-v]
#
# 0. Preprocesses nevermiss's own corpus: every tests/p4/ok/*.p4 and every
#    tests/p4/bad/{parse,check}-*.p4 must preprocess, every tests/p4/bad/pre-*.p4
#    must fail to.
# 1. Preprocesses every testdata/p4_16_samples/*.p4 of a local p4c copy
#    (default: $P4C_DIR, else /work/p4c) with `cpp -P -undef -nostdinc`
#    and nevermiss's p4include/ on the include path, and reports each program
#    that fails.  A program that also fails with p4c's own include files (or
#    that includes an architecture nevermiss does not provide) is counted
#    separately and does not make the check fail.
# 2. With --compare, also compares the declarations of each nevermiss include
#    file with those of the corresponding p4c file, after preprocessing both
#    and normalising whitespace, and prints every declaration that differs.
#    The differences are expected to be exactly the deviations listed in
#    docs/p4include.md.
#
# Steps 1 and 2 are skipped (with a note) when there is no local p4c copy.
#
# Exit status: 0 when the corpus behaves and every program that p4c's includes
# can preprocess is preprocessed with ours too (and, with --compare, the
# comparison ran), 1 otherwise, 2 on a usage or setup error.
#
# Nothing from p4c is copied into the repository: the programs and p4c's
# include files are read from the local copy at run time.

set -u

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ours="$here/p4include"
p4c="${P4C_DIR:-/work/p4c}"
compare=0
verbose=0
defs=()

while [ $# -gt 0 ]; do
    case "$1" in
        --p4c) p4c="$2"; shift 2 ;;
        --compare) compare=1; shift ;;
        -D) defs+=("-D$2"); shift 2 ;;
        -D*) defs+=("$1"); shift ;;
        -v) verbose=1; shift ;;
        -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
        *) echo "check-includes: unknown argument: $1" >&2; exit 2 ;;
    esac
done

samples="$p4c/testdata/p4_16_samples"
theirs="$p4c/p4include"
if ! command -v cpp >/dev/null 2>&1; then
    echo "check-includes: cpp (the C preprocessor) is not installed" >&2; exit 2
fi

# Architecture files that nevermiss deliberately does not provide.
unsupported='ebpf_model\.p4|ubpf_model\.p4|xdp_model\.p4|tc/pna\.p4'

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
status=0

# 0. nevermiss's own corpus.
corpus_n=0; corpus_bad=0
for f in "$here"/tests/p4/ok/*.p4 "$here"/tests/p4/bad/*.p4; do
    [ -f "$f" ] || continue
    corpus_n=$((corpus_n + 1))
    name="${f#"$here"/}"
    if cpp -P -undef -nostdinc -I "$ours" "${defs[@]}" "$f" -o /dev/null 2> "$tmp/err"; then
        case "$(basename "$f")" in
            pre-*) echo "corpus: $name: preprocessed, but must fail"; corpus_bad=$((corpus_bad + 1)) ;;
        esac
    else
        case "$(basename "$f")" in
            pre-*) ;;
            *) echo "corpus: $name: $(grep -m1 -i 'error' "$tmp/err")"; corpus_bad=$((corpus_bad + 1)) ;;
        esac
    fi
done
echo "corpus: $corpus_n programs, $corpus_bad wrong"
[ $corpus_bad -eq 0 ] || status=1

if [ ! -d "$samples" ]; then
    echo "samples: skipped, no p4c test programs at $samples (set P4C_DIR or --p4c)"
    [ $compare = 1 ] && echo "compare: skipped, no p4c include files"
    exit $status
fi

# 1. p4c's test programs.
total=0; ok=0; fail_ours=0; fail_both=0; unsup=0
fail_list="$tmp/fail"; : > "$fail_list"
for f in "$samples"/*.p4; do
    [ -f "$f" ] || continue          # dangling symlinks in the test data
    total=$((total + 1))
    if cpp -P -undef -nostdinc -I "$ours" "${defs[@]}" "$f" -o /dev/null 2> "$tmp/err"; then
        ok=$((ok + 1))
        continue
    fi
    name="$(basename "$f")"
    if grep -Eq "#[[:space:]]*include[[:space:]]*[<\"]($unsupported)[>\"]" "$f"; then
        unsup=$((unsup + 1))
        [ $verbose = 1 ] && echo "unsupported architecture: $name"
        continue
    fi
    if [ -d "$theirs" ] && ! cpp -P -undef -nostdinc -I "$theirs" "${defs[@]}" "$f" -o /dev/null 2>/dev/null; then
        fail_both=$((fail_both + 1))
        echo "fails with p4c's includes too: $name: $(grep -m1 -i 'error' "$tmp/err")"
        continue
    fi
    fail_ours=$((fail_ours + 1))
    echo "$name: $(grep -m1 -i 'error' "$tmp/err")" >> "$fail_list"
done

if [ -s "$fail_list" ]; then
    echo "programs that fail to preprocess with nevermiss's includes only:"
    sed 's/^/  /' "$fail_list"
fi
echo "samples: $total, preprocessed: $ok, failed with ours only: $fail_ours," \
     "failed with p4c's too: $fail_both, unsupported architecture: $unsup"

[ $fail_ours -eq 0 ] || status=1

if [ $compare = 1 ]; then
    if [ ! -d "$theirs" ]; then
        echo "check-includes: no p4c include files at $theirs" >&2; exit 2
    fi
    cat > "$tmp/declcmp.py" <<'PY'
import re, subprocess, sys

TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[A-Za-z_][A-Za-z0-9_]*|0x[0-9a-fA-F]+|\d+'
                   r'|&&&|[<>=!]=|&&|\|\||[{}()<>\[\];,.:=@+\-*/&|^~!?]')

def split(tokens):
    """Top-level declarations (or extern members) as token lists."""
    out, cur, depth = [], [], 0
    for t in tokens:
        cur.append(t)
        if t in '({[':
            depth += 1
        elif t in ')}]':
            depth -= 1
        if depth == 0 and t in (';', '}'):
            if cur != [';']:
                out.append(cur)
            cur = []
    if cur:
        out.append(cur)
    return out

def decls(text):
    res = set()
    for d in split(TOKEN.findall(text)):
        if 'extern' in d and '{' in d and '(' not in d[:d.index('{')]:
            head = ' '.join(d[:d.index('{')])
            res.add(head + ' {}')
            for m in split(d[d.index('{') + 1:-1]):
                res.add(head + ' :: ' + ' '.join(m))
        else:
            res.add(' '.join(d))
    return res

def pp(path, inc, defs):
    args = ['cpp', '-P', '-undef', '-nostdinc', '-I', inc] + defs + [path]
    return subprocess.run(args, capture_output=True, text=True, check=True).stdout

ours_inc, theirs_inc = sys.argv[1], sys.argv[2]
pairs = [
    ('core.p4', 'core.p4', []),
    ('v1model.p4', 'v1model.p4', []),
    ('v1model.p4', 'v1model.p4', ['-DV1MODEL_VERSION=20200408']),
    ('bmv2/psa.p4', 'bmv2/psa.p4', []),
    ('dpdk/psa.p4', 'dpdk/psa.p4', []),
    ('pna.p4', 'pna.p4', []),
    ('pna.p4', 'bmv2/pna.p4', ['-DNEVERMISS_PNA_DIALECT=3']),
    ('dpdk/pna.p4', 'dpdk/pna.p4', []),
    ('bmv2/pna.p4', 'bmv2/pna.p4', []),
]
core = decls(pp(ours_inc + '/core.p4', ours_inc, []))
for o, t, d in pairs:
    a = decls(pp(ours_inc + '/' + o, ours_inc, d))
    b = decls(pp(theirs_inc + '/' + t, theirs_inc, d))
    # p4c's psa.p4 files do not include core.p4; ours do.
    only_ours = sorted(x for x in a - b if x not in core)
    only_theirs = sorted(b - a)
    print(f'== {o} {" ".join(d)} vs p4c {t}: {len(a)} declarations, '
          f'{len(only_ours)} only in ours, {len(only_theirs)} only in p4c\'s')
    for x in only_ours:
        print('  + ' + x)
    for x in only_theirs:
        print('  - ' + x)
PY
    command -v python3 >/dev/null 2>&1 || { echo "check-includes: --compare needs python3" >&2; exit 2; }
    python3 "$tmp/declcmp.py" "$ours" "$theirs" || status=2
fi

exit $status
