"""Sends and receives raw Ethernet frames on one interface (stdlib only), for the interface-port
tests (crates/nevermiss/tests/ifports.rs), run inside a testbed namespace (scripts/testbed.sh).

    python3 xfer.py IFACE --count N [--timeout S] < frames.hex

Reads frames to send from stdin (one hex string per line), opens an AF_PACKET socket on IFACE,
sends them, then prints every frame received on IFACE (not the ones sent from it) as a hex line,
until N have arrived or S seconds (default 5) have passed. Exit 0 either way; the caller counts.
"""

import argparse
import socket
import sys
import time

PACKET_OUTGOING = 4


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("iface")
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--timeout", type=float, default=5.0)
    ap.add_argument("--gap", type=float, default=0.0, help="seconds between sent frames")
    a = ap.parse_args()
    frames = [bytes.fromhex(line.strip()) for line in sys.stdin if line.strip()]
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
    s.bind((a.iface, 0))
    for f in frames:
        s.send(f)
        if a.gap:
            time.sleep(a.gap)
    got = 0
    deadline = time.monotonic() + a.timeout
    while got < a.count:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        s.settimeout(left)
        try:
            data, addr = s.recvfrom(65535)
        except socket.timeout:
            break
        if addr[2] == PACKET_OUTGOING:
            continue
        print(data.hex(), flush=True)
        got += 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
