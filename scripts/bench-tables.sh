#!/usr/bin/env bash
# Runs the nevermiss-tables benchmarks several times and prints, per benchmark, the median of the
# per-run medians and their min–max (docs/tables.md, "Measured"; the machine is noisy, so quote
# these, never one run).
#
# usage: scripts/bench-tables.sh [RUNS=5] [FILTER]
#   FILTER  criterion name filter for benches/lookup.rs (e.g. `exact_batch32`); `none` skips it
# env:
#   BENCH_BINS="lookup=PATH scaling=PATH"  run these prebuilt bench binaries instead of building
#                                          (to compare two builds: run the script once per build)
#   NEVERMISS_SCALING_REPS                 repetitions inside one scaling run (default 3 here)
# Output: one line per benchmark: name, median ns per operation, [min – max] over the runs.
# Criterion settings are shortened (NEVERMISS_BENCH_QUICK=1): 5 runs take about 6–8 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-5}
FILTER=${2:-}
if ! [[ "$RUNS" =~ ^[1-9][0-9]*$ ]]; then
    echo "bench-tables: RUNS must be a positive integer, got '$RUNS'" >&2
    exit 2
fi
if [[ -n "${BENCH_BINS:-}" ]]; then
    for kv in $BENCH_BINS; do
        case "$kv" in
            lookup=*) LOOKUP=${kv#lookup=} ;;
            scaling=*) SCALING=${kv#scaling=} ;;
            *) echo "bench-tables: bad BENCH_BINS entry '$kv'" >&2; exit 2 ;;
        esac
    done
else
    BUILD=$(cargo bench -p nevermiss-tables --no-run --message-format=json 2>/dev/null |
        python3 -c '
import json, sys
for line in sys.stdin:
    try: m = json.loads(line)
    except ValueError: continue
    if m.get("reason") == "compiler-artifact" and m.get("executable") and "bench" in m["target"]["kind"]:
        print(m["target"]["name"] + "=" + m["executable"])
')
    for kv in $BUILD; do
        case "$kv" in
            lookup=*) LOOKUP=${kv#lookup=} ;;
            scaling=*) SCALING=${kv#scaling=} ;;
        esac
    done
fi
: "${LOOKUP:?bench-tables: no lookup bench binary}" "${SCALING:?bench-tables: no scaling bench binary}"

OUT=$(mktemp -d /tmp/bench-tables.XXXXXX)
echo "bench-tables: $RUNS runs, raw results in $OUT" >&2
for ((i = 1; i <= RUNS; i++)); do
    if [[ "$FILTER" != none ]]; then
        CRIT="$OUT/criterion-$i"
        mkdir -p "$CRIT"
        # shellcheck disable=SC2086
        CRITERION_HOME="$CRIT" NEVERMISS_BENCH_QUICK=1 "$LOOKUP" --bench $FILTER \
            >"$OUT/lookup-$i.log" 2>&1
    fi
    NEVERMISS_SCALING_REPS=${NEVERMISS_SCALING_REPS:-3} "$SCALING" --bench >"$OUT/scaling-$i.log" 2>&1
    echo "bench-tables: run $i/$RUNS done ($(uptime | sed 's/.*load/load/'))" >&2
done

python3 - "$OUT" "$RUNS" <<'EOF'
import glob, json, os, re, statistics, sys
out, runs = sys.argv[1], int(sys.argv[2])
vals = {}
for i in range(1, runs + 1):
    for est in glob.glob(f"{out}/criterion-{i}/**/new/estimates.json", recursive=True):
        d = os.path.dirname(est)
        bj = json.load(open(os.path.join(d, "benchmark.json")))
        thr = bj.get("throughput") or {}
        n = thr.get("Elements") or thr.get("Bytes") or 1
        ns = json.load(open(est))["median"]["point_estimate"] / n
        vals.setdefault(bj["full_id"], []).append(ns)
    for line in open(f"{out}/scaling-{i}.log"):
        m = re.match(r"RESULT (\S+) ns_per_pkt_per_worker=([\d.]+) mpps=([\d.]+)", line)
        if m:
            vals.setdefault(m[1] + " (ns/pkt/worker)", []).append(float(m[2]))
            vals.setdefault(m[1] + " (Mpps)", []).append(float(m[3]))
        m = re.match(r"RATIO (\S+) two_over_one=([\d.]+)", line)
        if m:
            vals.setdefault(m[1] + " (2 workers / 1 worker)", []).append(float(m[2]))
w = max((len(k) for k in vals), default=10)
print(f"{'benchmark':<{w}}  median   [min – max] over {runs} runs (ns per operation unless noted)")
for k in sorted(vals):
    v = vals[k]
    print(f"{k:<{w}}  {statistics.median(v):8.2f} [{min(v):.2f} – {max(v):.2f}] n={len(v)}")
EOF
