#!/usr/bin/env bash
# The test command: sets everything up, then runs every check and test of the project.
# Env: P4C_DIR=<checkout of p4lang/p4c>  also runs the p4c conformance suites (skipped when unset).
#      NEVERMISS_FUZZ_SECS=<n>            time budget of the bounded fuzz run (default 20).
set -euo pipefail
cd "$(dirname "$0")/.."
# One full run gains nothing from incremental caches, and they cost ~3 GB of disk
# (CI machines have little to spare). Export CARGO_INCREMENTAL=1 to keep them.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
bash scripts/setup.sh

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --locked --workspace --all-targets -q -- -D warnings
# The diagnostic build of `nevermiss bench` (TSC stamps per stage, docs/bench.md "Stages").
cargo clippy --locked -p nevermiss --all-targets --features stage-stamps -q -- -D warnings
echo "== cargo test"
NEVERMISS_REQUIRE_CLIENTS=1 cargo test --locked --workspace -q
cargo test --locked -p nevermiss-tables -p nevermiss-bench --features stage-stamps --lib -q -- stage
if [ -n "${P4C_DIR:-}" ]; then
    echo "== p4c conformance ($P4C_DIR)"
    ./target/release/nevermiss conformance --p4c "$P4C_DIR"
fi
echo "== install (scripts/install-test.sh: the Debian package in a scratch root, the lab with pip)"
if [ "$(id -u)" = 0 ]; then
    bash scripts/install-test.sh
else
    echo "skipped: dpkg --root and chroot need root"
fi
echo "== the lab (pytest lab/tests)"
.venv/lab/bin/python -m pytest -q lab/tests
echo "== the main job (scripts/demo.sh)"
bash scripts/demo.sh
