#!/usr/bin/env bash
# The Debian package of nevermiss, made with cargo-deb (crates/nevermiss/Cargo.toml,
# [package.metadata.deb]): the binary, p4include/, man pages made from the command line
# (`nevermiss man`, clap_mangen), bash/zsh/fish completions (`nevermiss completions`,
# clap_complete), a systemd unit for `nevermiss serve` with its flags in /etc/default/nevermiss,
# and the examples. Prints the package's path: target/debian/nevermiss_VERSION-1_ARCH.deb.
#
#   scripts/deb.sh            # builds (release) if needed, then packages
#   sudo dpkg -i target/debian/nevermiss_*.deb
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v cargo-deb >/dev/null 2>&1; then
    echo "deb: cargo-deb not found: scripts/setup.sh installs it (cargo install cargo-deb)" >&2
    exit 2
fi
cargo build --release --locked -q -p nevermiss
target=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
assets="$target/release/deb-assets"
rm -rf "$assets"
mkdir -p "$assets/man" "$assets/completions"
"$target/release/nevermiss" man "$assets/man"
gzip -9n "$assets"/man/*.1
"$target/release/nevermiss" completions bash >"$assets/completions/nevermiss.bash"
"$target/release/nevermiss" completions zsh >"$assets/completions/_nevermiss"
"$target/release/nevermiss" completions fish >"$assets/completions/nevermiss.fish"
# --no-build: the build above is the one packaged (cargo-deb would build it the same way).
rm -f "$target"/debian/nevermiss_*.deb
# Stripped, as Debian ships binaries (the release profile keeps line tables for backtraces).
cargo deb -p nevermiss --no-build --locked --strip -q >&2
ls "$target"/debian/nevermiss_*.deb
