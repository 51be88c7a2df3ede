#!/usr/bin/env bash
# Installs what nevermiss needs on a fresh machine (Debian, Rust via rustup already present) and builds it.
# Idempotent; safe to run repeatedly. Every dependency comes from the project's own files.
set -euo pipefail
cd "$(dirname "$0")/.."

need() { command -v "$1" >/dev/null 2>&1; }
apt_install() {
    # Debian packages the project needs; installed only when missing.
    local missing=()
    for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
    if [ ${#missing[@]} -gt 0 ]; then
        if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
        $SUDO apt-get update -qq && $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
}

if ! need cargo; then
    echo "setup: cargo not found: install Rust (rustup) first" >&2
    exit 2
fi
for comp in rustfmt clippy; do
    if ! rustup component list --installed 2>/dev/null | grep -q "^$comp"; then
        rustup component add "$comp"
    fi
done
apt_install pkg-config
cargo build --release --locked -q -p nevermiss
