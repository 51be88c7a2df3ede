#!/usr/bin/env bash
# Instructions per packet of `nevermiss bench`'s throughput phases, counted by valgrind's
# callgrind (repeatable on a shared machine, unlike timings): the forwarder, and the add-on-miss
# program's phase 1 (every packet inserts) and phase 2 (every packet hits), one core, batch 32,
# only `Worker::process_batch` counted (the packets are generated beforehand); then the latency
# mode's forwarder (one packet at a time through `Worker::process`, as its TSC figures are taken).
#
# usage: scripts/callgrind-bench.sh [M=2^16] [ENGINE=jit] [SCENARIO=add-on-miss]
# Prints one line per phase: instructions per packet. Keeps the profiles in $OUT (default a
# temporary folder) for `callgrind_annotate`.
set -euo pipefail
cd "$(dirname "$0")/.."
M=${1:-2^16}
ENGINE=${2:-jit}
SCENARIO=${3:-add-on-miss}
BIN=${NEVERMISS:-./target/release/nevermiss}
OUT=${OUT:-$(mktemp -d)}
command -v valgrind >/dev/null || { echo "callgrind-bench: valgrind is not installed" >&2; exit 2; }
[ -x "$BIN" ] || { echo "callgrind-bench: $BIN not built (cargo build --release -p nevermiss)" >&2; exit 2; }
m=$(python3 -c "import sys; v=sys.argv[1]; print(2**int(v[2:]) if v.startswith('2^') else int(v))" "$M")
count=$((2 * m))
# One dump before each run of the in-memory workers: dump k+1 holds run k's packets.
valgrind --tool=callgrind --callgrind-out-file="$OUT/cg" --toggle-collect='*Worker::process_batch*' \
    --dump-before='*workers::run_in_memory*' \
    "$BIN" bench --mode throughput --scenario "$SCENARIO" --m "$M" --rates 100 --sizes "$M" \
    --cores 1 --runs 1 --count "$count" --engine "$ENGINE" -q >/dev/null 2>"$OUT/valgrind.log"
ir() { grep -m1 '^summary' "$1" | awk '{print $2}'; }
per() { python3 -c "import sys; print(f'{int(sys.argv[1]) / int(sys.argv[2]):8.0f}')" "$1" "$2"; }
echo "engine $ENGINE, m = $m (phase 1: $m packets, phase 2: $count), instructions per packet:"
echo "  forwarder            $(per "$(ir "$OUT/cg.3")" "$count")"
echo "  $SCENARIO phase 1    $(per "$(ir "$OUT/cg.4")" "$m")"
# Phase 2 is the last part (no dump after it) when the scenario has no rates run (update).
p2="$OUT/cg.5"
[ -e "$p2" ] || p2="$OUT/cg"
echo "  $SCENARIO phase 2    $(per "$(ir "$p2")" "$count")"
# Latency mode: dump k+1 holds the k-th latency run, the first one the baseline forwarder's
# (`--m` phase-1 packets and `--count` phase-2 packets, each one call of `Worker::process`).
lat_m=1024
lat_count=262144
valgrind --tool=callgrind --callgrind-out-file="$OUT/lat" --toggle-collect='*Worker::process' \
    --dump-before='*latency::run_once*' \
    "$BIN" bench --mode latency --scenario "$SCENARIO" --m "$lat_m" --rates 1 --sizes "$lat_m" \
    --runs 1 --count "$lat_count" --engine "$ENGINE" -q >/dev/null 2>>"$OUT/valgrind.log"
echo "  forwarder, latency   $(per "$(ir "$OUT/lat.2")" $((lat_m + lat_count)))   (one packet at a time)"
echo "profiles: $OUT/cg.3 (forwarder), $OUT/cg.4, $p2, $OUT/lat.2 (latency-mode forwarder) (callgrind_annotate FILE)"
