#!/usr/bin/env bash
# What a user installs, installed as a user would and used (the test command runs this):
# 1. the Debian package (scripts/deb.sh), installed with `dpkg -i` into a scratch root (dpkg
#    --root: its own package database, nothing of this machine's touched), the shared libraries
#    its Depends name copied in, and run there under chroot: `nevermiss --version`, and one of
#    the packaged examples' STF tests, which finds its include files in the package's
#    /usr/share/nevermiss/p4include (no source tree in the root); the man pages, completions and
#    the systemd unit are where the package says;
# 2. the lab as docs/lab.md installs it, `pip install ./lab` into a scratch virtualenv (its
#    dependencies resolved from lab/pyproject.toml), whose `nevermiss-lab --version` runs the
#    packaged binary.
# Needs root (dpkg --root, chroot). Cleans up after itself, also on failure.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ]; then
    echo "install-test: needs root (dpkg --root, chroot)" >&2
    exit 2
fi
scratch=$(mktemp -d /tmp/nevermiss-install.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
root="$scratch/root"

echo "== the Debian package"
deb=$(bash scripts/deb.sh)
echo "$deb"
dpkg-deb --info "$deb" | sed -n 's/^ \(Package\|Version\|Architecture\|Depends\|Recommends\):/  \1:/p'
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
touch "$root/var/lib/dpkg/status" "$root/var/lib/dpkg/available"
# The scratch root has no other packages: its Depends (libc6, libgcc-s1) are this machine's
# libraries, copied in below, so dpkg's dependency check is the one thing forced.
dpkg --root="$root" --force-depends -i "$deb" >/dev/null
dpkg --root="$root" -L nevermiss >"$scratch/files"
for f in /usr/bin/nevermiss /usr/share/nevermiss/p4include/core.p4 /usr/share/nevermiss/p4include/bmv2/pna.p4 \
    /usr/share/man/man1/nevermiss.1.gz /usr/share/man/man1/nevermiss-run.1.gz \
    /usr/share/bash-completion/completions/nevermiss /usr/share/zsh/vendor-completions/_nevermiss \
    /usr/share/fish/vendor_completions.d/nevermiss.fish /usr/lib/systemd/system/nevermiss.service \
    /etc/default/nevermiss /usr/share/doc/nevermiss/examples/v1model-router.stf; do
    grep -qx "$f" "$scratch/files" || { echo "install-test: the package lacks $f" >&2; exit 1; }
    [ -e "$root$f" ] || { echo "install-test: $f was not installed" >&2; exit 1; }
done
echo "  $(wc -l <"$scratch/files") paths installed"
# The libraries the binary links (its Depends), and nothing else of this machine.
for lib in $(ldd "$root/usr/bin/nevermiss" | grep -o '/[^ ]*'); do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
done
chroot "$root" /usr/bin/nevermiss --version
examples=/usr/share/doc/nevermiss/examples
chroot "$root" /usr/bin/nevermiss stf --verbose "$examples/v1model-router.p4" "$examples/v1model-router.stf"
chroot "$root" /usr/bin/nevermiss check "$examples/pna-add-on-miss.p4"
zcat "$root/usr/share/man/man1/nevermiss-serve.1.gz" | grep -q "P4Runtime"
# The unit runs the packaged binary with the flags of /etc/default/nevermiss (no systemd runs
# here to start it; the flags it would pass are checked by running them: below).
unit="$root/usr/lib/systemd/system/nevermiss.service"
grep -qx 'ExecStart=/usr/bin/nevermiss serve $NEVERMISS_SERVE_ARGS' "$unit"
grep -qx 'EnvironmentFile=-/etc/default/nevermiss' "$unit"
grep -qx 'WantedBy=multi-user.target' "$unit"
# shellcheck disable=SC1091
args=$(. "$root/etc/default/nevermiss" && echo "$NEVERMISS_SERVE_ARGS")
# shellcheck disable=SC2086
chroot "$root" /usr/bin/nevermiss serve ${args/127.0.0.1:9559/127.0.0.1:0} --duration 300ms >/dev/null

echo "== the lab: pip install ./lab"
python3 -m venv "$scratch/lab"
"$scratch/lab/bin/pip" install -q --disable-pip-version-check ./lab
NEVERMISS_BIN="$root/usr/bin/nevermiss" "$scratch/lab/bin/nevermiss-lab" --version
"$scratch/lab/bin/python" -c 'import nevermiss_lab.p000, nevermiss_lab.p003, nevermiss_lab.cluster'
echo "install-test: ok"
