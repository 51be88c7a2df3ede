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
# cargo-deb: the Debian package (scripts/deb.sh; the test command installs and runs it,
# scripts/install-test.sh), pinned.
if [ "$(cargo deb --version 2>/dev/null)" != "cargo-deb 3.8.0" ]; then
    cargo install --locked -q cargo-deb --version 3.8.0
fi
# openssl: the TLS test makes its certificates with it; iproute2: the interface-port testbed
# (scripts/testbed.sh: namespaces and veth pairs); libxdp1: the AF_XDP back end (loaded at run
# time; without it interface ports use AF_PACKET); valgrind: the memcheck test of generated code
# (crates/nevermiss/tests/memcheck.rs); mininet: nevermiss as a Mininet switch
# (mininet/nevermiss_mininet.py, crates/nevermiss/tests/mininet.rs; Debian's Python has it);
# libpcap0.8: scapy's capture filters (the P4 tutorials' receive.py scripts, tests/tutorials/);
# ethtool: the tutorials' hosts turn checksum offload off with it (else TCP leaves a veth unsummed)
apt_install pkg-config openssl iproute2 libxdp1 valgrind mininet libpcap0.8 ethtool

# The P4Runtime protocol's descriptors (crates/nevermiss-p4rt/build.rs compiles them): from the
# PyPI packages that carry them, pinned in crates/nevermiss-p4rt/p4runtime-pins.txt; never .proto
# files in the repository. (Without this the build makes them itself, in its OUT_DIR; here they
# are made once for every build profile.)
protos() {
    local venv=.venv/protos want
    want=$(grep -v '^#' crates/nevermiss-p4rt/p4runtime-pins.txt | grep . | tr '\n' ' ' | sed 's/ $//')
    if [ ! -f "$venv/p4runtime.fds" ] || [ "$(cat "$venv/pins" 2>/dev/null)" != "$want" ]; then
        rm -rf "$venv"
        python3 -m venv "$venv"
        # shellcheck disable=SC2086
        "$venv/bin/pip" install -q --disable-pip-version-check --no-deps $want
        "$venv/bin/python" scripts/p4runtime-fds.py "$venv/p4runtime.fds" >/dev/null
        echo "$want" > "$venv/pins"
    fi
}
protos

# The P4Runtime clients the tests drive `nevermiss serve` with, each in its own virtualenv (their
# protobuf versions conflict), pinned in scripts/clients/*.txt.
client_venv() {
    local name=$1 venv=.venv/$1 req=scripts/clients/$1.txt
    if [ ! -x "$venv/bin/python" ] || ! cmp -s "$req" "$venv/pins"; then
        rm -rf "$venv"
        python3 -m venv "$venv"
        "$venv/bin/pip" install -q --disable-pip-version-check -r "$req"
        cp "$req" "$venv/pins"
    fi
}
client_venv p4runtime-shell
client_venv finsy
# scapy for the interface-port tests (crates/nevermiss/tests/ifports.rs crafts and sniffs frames
# with it), in the same way.
client_venv scapy
# PyPI ptf (the P4 testing framework), p4runtime and grpcio for the PTF suite of `nevermiss serve`
# (crates/nevermiss/tests/ptf.rs: tests/ptf/, and p4c's PTF tests with P4C_DIR).
client_venv ptf

# The lab (lab/: nevermiss-lab) in .venv/lab: its pinned dependencies, then the package itself
# (editable, so the checkout's code is what runs).
lab_venv() {
    local venv=.venv/lab req=lab/requirements.txt
    if [ ! -x "$venv/bin/python" ] || ! cmp -s "$req" "$venv/pins"; then
        rm -rf "$venv"
        python3 -m venv "$venv"
        "$venv/bin/pip" install -q --disable-pip-version-check -r "$req"
        cp "$req" "$venv/pins"
    fi
    if ! "$venv/bin/python" -c "import nevermiss_lab" 2>/dev/null \
        || [ "$("$venv/bin/python" -c 'import nevermiss_lab, pathlib; print(pathlib.Path(nevermiss_lab.__file__).resolve().parents[2])')" != "$(pwd)/lab" ]; then
        "$venv/bin/pip" install -q --disable-pip-version-check --no-deps -e lab
    fi
}
lab_venv

cargo build --release --locked -q -p nevermiss
