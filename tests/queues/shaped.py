"""Sends a burst of frames on one interface, or receives them on another with their arrival
times (stdlib only), for the shaped-link test of egress queues (crates/nevermiss/tests/ifports.rs),
run inside a testbed namespace (scripts/testbed.sh).

    python3 shaped.py send IFACE --count N --size B        # N frames of B bytes, EtherType 0x0b00
    python3 shaped.py recv IFACE --count N --timeout S     # prints "SECONDS HEX" per frame

The receiver keeps frames whose EtherType, top bit cleared (the test program's mark), is 0x0b00;
it stops after N of them, or S seconds after the last one arrived (or after it started, if none
did). Exit 0 either way; the caller counts.
"""

import argparse
import socket
import sys
import time

PACKET_OUTGOING = 4
ETHERTYPE = 0x0B00


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["send", "recv"])
    ap.add_argument("iface")
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--size", type=int, default=1000)
    ap.add_argument("--timeout", type=float, default=5.0)
    a = ap.parse_args()
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
    s.bind((a.iface, 0))
    if a.mode == "send":
        for i in range(a.count):
            f = bytes(12) + ETHERTYPE.to_bytes(2, "big") + i.to_bytes(4, "big")
            s.send(f + bytes(a.size - len(f)))
        return 0
    got = 0
    print("ready", flush=True)
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
        if addr[2] == PACKET_OUTGOING or len(data) < 14:
            continue
        if int.from_bytes(data[12:14], "big") & 0x7FFF != ETHERTYPE:
            continue
        now = time.monotonic()
        print(f"{now:.6f} {data[:20].hex()}", flush=True)
        got += 1
        deadline = now + a.timeout
    return 0


if __name__ == "__main__":
    sys.exit(main())
