#!/usr/bin/env bash
# The main job: set everything up, then check the bundled programs (examples/ and the own corpus
# tests/p4/ok/) and print a summary of each: tables, actions, externs, blocks.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
status=0
shopt -s nullglob
for p in examples/*.p4 tests/p4/ok/*.p4; do
    echo "== nevermiss check --dump summary $p"
    ./target/release/nevermiss check --dump summary "$p" || status=1
done
exit $status
