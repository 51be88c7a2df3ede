#!/usr/bin/env bash
# The main job: set everything up, then run the paper's add-on-miss program (examples/pna-add-on-miss.p4)
# over the built-in two-phase generator (papers/000 §V.c) and print what happened: per-port packets,
# per-table hits, misses, inserts, failed inserts (the table holds 65536 entries; the second phase's new
# keys overflow it on purpose), and packets per second. Extra arguments go to `nevermiss run`.
# Then papers/000's Table III as measured here beside the paper's figures (a few seconds, through
# the lab: nevermiss-lab table3), with one figure written and its path printed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
./target/release/nevermiss run examples/pna-add-on-miss.p4 \
    --port "0=gen:two-phase,m=65536,r=100,count=1000000,field=ipv4.dst" "$@"
echo
.venv/lab/bin/nevermiss-lab table3 --out reports/table3
