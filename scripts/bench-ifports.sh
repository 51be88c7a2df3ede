#!/usr/bin/env bash
# Forwarding through veth pairs (docs/io.md "Interface ports, measured"): `nevermiss gen` sends
# from nm-h0 at the highest rate it can and counts what arrives on nm-h1; between them, each of
# RUNS runs (default 5): the forwarder and the add-on-miss example (routed to port 1) on 1 and 2
# cores (AF_XDP and AF_PACKET each; two cores: AF_XDP one socket per worker and queue, AF_PACKET
# fanout), and a plain kernel bridge as the floor; gen with one sender and with two (`--cores
# 2`: one per CPU, so on transmit queues 0 and 1, which reach the switch's receive queues 0 and
# 1). Then the latency at half of each rate.
# Needs root; builds a flat testbed of veths with two queues (scripts/testbed.sh up --flat
# --queues 2 0 1) and removes it.
#   sudo scripts/bench-ifports.sh [RUNS] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-5}"
secs="${2:-2}"
nm=./target/release/nevermiss
tmp=$(mktemp -d)
sw_pid=""
stop_switch() {
    if [ -n "$sw_pid" ]; then
        kill -TERM "$sw_pid" 2>/dev/null || true
        wait "$sw_pid" 2>/dev/null || true
        sw_pid=""
    fi
}
cleanup() {
    stop_switch
    ip link del nmbr0 2>/dev/null || true
    scripts/testbed.sh down 0 1
    rm -rf "$tmp"
}
trap cleanup EXIT
scripts/testbed.sh down 0 1
scripts/testbed.sh up --flat --queues 2 0 1 >/dev/null
echo 'add MainControlImpl.ipv4_lpm hdr.ipv4.dst_addr:0/0 forward(port:1, next_hop_mac:0x020000000002)' >"$tmp/fw.entries"
# The add-on-miss example answers on the port a packet came in on, so it is measured
# reflecting on port 0 (gen receives on nm-h0, where it sends).
gen() { # RATE RX SENDERS -> "received/s lost p50 p99"
    "$nm" gen --tx nm-h0 --rx "$2" --cores "$3" --rate "$1" --duration "${secs}s" --json "$tmp/g.json" >/dev/null 2>&1
    python3 - "$tmp/g.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rate = d["frames_received"] / d["send_s"]
lat = d.get("latency_ns", {})
print(f'{rate:.0f} {d["frames_lost"]} {lat.get("p50", 0)} {lat.get("p99", 0)}')
PY
}
start_switch() {
    if [ $# -gt 0 ]; then
        "$@" >"$tmp/run.out" 2>&1 &
        sw_pid=$!
        sleep 1.5
    fi
}
median() { python3 -c 'import sys,statistics; v=[float(x) for x in sys.argv[1:]]; print(f"{statistics.median(v):.0f} (runs {min(v):.0f}-{max(v):.0f})")' "$@"; }
measure() { # NAME RX SENDERS START_CMD...
    local name="$1" rx="$2" senders="$3"
    shift 3
    local rates=()
    for _ in $(seq "$runs"); do
        start_switch "$@"
        read -r r lost p50 p99 < <(gen max "$rx" "$senders")
        rates+=("$r")
        stop_switch
    done
    local med
    med=$(median "${rates[@]}")
    local half
    half=$(python3 -c "import sys; print(int(float(sys.argv[1].split()[0])/2))" "$med")
    start_switch "$@"
    read -r r lost p50 p99 < <(gen "$half" "$rx" "$senders")
    stop_switch
    python3 -c 'import sys; n,s,m,h,l,a,b=sys.argv[1:]; print(f"{n:<40} gen x{s}: {m} frames/s received at max; at {h}/s: lost {l}, latency p50 {float(a)/1e3:.1f} us, p99 {float(b)/1e3:.1f} us")' \
        "$name" "$senders" "$med" "$half" "$lost" "$p50" "$p99"
}
ports() { echo "--port 0=if:nm-s0,backend=$1 --port 1=if:nm-s1,backend=$1"; }
fw=("$nm" run examples/pna-forwarder.p4 --entries "$tmp/fw.entries")
aom=("$nm" run examples/pna-add-on-miss.p4)
# shellcheck disable=SC2046
{
measure "forwarder, AF_XDP, 1 core" nm-h1 1 "${fw[@]}" $(ports af_xdp)
measure "forwarder, AF_XDP, 1 core" nm-h1 2 "${fw[@]}" $(ports af_xdp)
measure "forwarder, AF_XDP, 2 cores" nm-h1 2 "${fw[@]}" $(ports af_xdp) --cores 2
measure "forwarder, AF_PACKET, 1 core" nm-h1 1 "${fw[@]}" $(ports af_packet)
measure "forwarder, AF_PACKET, 2 cores" nm-h1 1 "${fw[@]}" $(ports af_packet) --cores 2
measure "forwarder, AF_PACKET, 2 cores" nm-h1 2 "${fw[@]}" $(ports af_packet) --cores 2
measure "add-on-miss (reflects), AF_XDP, 1 core" nm-h0 1 "${aom[@]}" $(ports af_xdp)
measure "add-on-miss (reflects), AF_XDP, 2 cores" nm-h0 2 "${aom[@]}" $(ports af_xdp) --cores 2
measure "add-on-miss (reflects), AF_PACKET, 1 core" nm-h0 1 "${aom[@]}" $(ports af_packet)
measure "add-on-miss (reflects), AF_PACKET, 2 cores" nm-h0 2 "${aom[@]}" $(ports af_packet) --cores 2
}
ip link add nmbr0 type bridge
ip link set nm-s0 master nmbr0
ip link set nm-s1 master nmbr0
ip link set nmbr0 up
measure "kernel bridge (floor)" nm-h1 1
measure "kernel bridge (floor)" nm-h1 2
