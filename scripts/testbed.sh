#!/usr/bin/env bash
# A testbed of veth pairs for interface ports (docs/io.md): `up` creates, for each port number
# N of PORTS (default "0 1"), a network namespace nm-hN holding the host end hN (address
# 10.0.N.1/24) and, in the root namespace, the switch end nm-sN, all up. With --flat the host
# ends stay in the root namespace as nm-hN (no addresses), so that one process (`nevermiss gen
# --tx nm-h0 --rx nm-h1`) can use several. With --queues Q both ends of every pair get Q receive
# and Q transmit queues (default 1): a frame sent on one end's transmit queue i arrives on the
# other end's receive queue i, and the kernel picks the transmit queue by the flow's hash (or,
# for a sender bypassing the qdisc such as `nevermiss gen`, by the sending CPU), so AF_XDP
# workers of `nevermiss run --cores Q` each get their share. `up` of a port that is already up
# in that shape leaves it as it is (in another shape: made anew). `down` removes them (whatever
# exists of them). Run as root. Traffic stays on this machine; IPv6 is off on every end (no
# stray frames).
#
#   scripts/testbed.sh up [--flat] [--queues Q] [PORTS...]   # then: nevermiss run PROG -i 0@nm-s0 -i 1@nm-s1
#   scripts/testbed.sh down [PORTS...]
set -euo pipefail
cmd="${1:-}"
shift || true
flat=0
queues=1
while [ $# -gt 0 ]; do
    case "$1" in
    --flat) flat=1; shift ;;
    --queues)
        queues="${2:-}"
        if ! [[ "$queues" =~ ^[1-9][0-9]*$ ]]; then
            echo "testbed: --queues needs a positive number" >&2
            exit 2
        fi
        shift 2
        ;;
    *) break ;;
    esac
done
q=(numtxqueues "$queues" numrxqueues "$queues")
ports=("$@")
[ ${#ports[@]} -eq 0 ] && ports=(0 1)
case "$cmd" in
up)
    for n in "${ports[@]}"; do
        # Already there as asked (a second `up`): keep it, so a switch running on it goes on.
        # There in another shape (flat vs namespace, another queue count): made anew.
        if ip link show "nm-s$n" >/dev/null 2>&1; then
            have=$(ls -d "/sys/class/net/nm-s$n/queues/rx-"* 2>/dev/null | wc -l)
            if [ "$flat" = 1 ]; then
                ip link show "nm-h$n" >/dev/null 2>&1 && shape=ok || shape=other
            else
                ip -n "nm-h$n" link show "h$n" >/dev/null 2>&1 && shape=ok || shape=other
            fi
            if [ "$shape" = ok ] && [ "$have" = "$queues" ]; then
                echo "port $n: already up (switch end nm-s$n)"
                continue
            fi
            echo "port $n: nm-s$n exists in another shape; making it anew" >&2
        fi
        ip link del "nm-s$n" 2>/dev/null || true
        ip netns del "nm-h$n" 2>/dev/null || true
        if [ "$flat" = 1 ]; then
            ip link add "nm-s$n" "${q[@]}" type veth peer name "nm-h$n" "${q[@]}"
            for end in "nm-s$n" "nm-h$n"; do
                sysctl -qw "net.ipv6.conf.$end.disable_ipv6=1" || true
                ip link set "$end" up
            done
            echo "port $n: switch end nm-s$n, host end nm-h$n"
            continue
        fi
        ip netns add "nm-h$n"
        ip netns exec "nm-h$n" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 || true
        ip link add "nm-s$n" "${q[@]}" type veth peer name "h$n" netns "nm-h$n" "${q[@]}"
        # No IPv6 chatter (router solicitations, MLD) on the switch end.
        sysctl -qw "net.ipv6.conf.nm-s$n.disable_ipv6=1" || true
        ip link set "nm-s$n" up
        ip -n "nm-h$n" addr add "10.0.$n.1/24" dev "h$n"
        ip -n "nm-h$n" link set "h$n" up
        ip -n "nm-h$n" link set lo up
        echo "port $n: switch end nm-s$n, host end h$n in namespace nm-h$n (10.0.$n.1/24)"
    done
    ;;
down)
    for n in "${ports[@]}"; do
        ip link del "nm-s$n" 2>/dev/null || true
        ip netns del "nm-h$n" 2>/dev/null || true
    done
    ;;
*)
    echo "usage: scripts/testbed.sh up [--flat] [--queues Q] [PORT...] | down [PORT...]" >&2
    exit 2
    ;;
esac
