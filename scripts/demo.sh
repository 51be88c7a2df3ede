#!/usr/bin/env bash
# The main job: set everything up, then check the bundled example programs and print their summaries.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
status=0
for p in examples/*.p4; do
    echo "== nevermiss check --dump summary $p"
    ./target/release/nevermiss check --dump summary "$p" || status=1
done
exit $status
