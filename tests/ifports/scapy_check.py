"""Crafts frames with scapy, sends them into the switch through a testbed's host ends and checks,
field by field, what comes out of the host ends (crates/nevermiss/tests/ifports.rs runs it with
.venv/scapy/bin/python, as root, on a flat testbed: scripts/testbed.sh up --flat).

    python scapy_check.py add-on-miss --host nm-h0 [--keys N]
        for examples/pna-add-on-miss.p4 on the switch end of --host: N keys, each sent twice;
        the first comes back with outcome 2 (inserted), the second with outcome 1 and the
        first one's IPv4 source as the value; nothing else changed.
    python scapy_check.py l2 --host0 nm-h0 --host1 nm-h1 --mac0 M --mac1 M
        for examples/v1model-l2-learning.p4 on ports 0 and 1, with dmac entries sending MAC0 to
        port 0 and MAC1 to port 1, and group 1 flooding: unknown destinations from host 0 are
        flooded to host 1 only, known ones reach their host only, all unchanged.

Prints `ok: ...` per check and `N checks passed`; the first failed check prints `FAIL: ...`
and exits 1. Frames are received with scapy's L2 socket, which does not return the frames it
sent itself; each socket is opened before anything is sent, so nothing is missed.
"""

import argparse
import socket
import sys

from scapy.all import IP, UDP, Ether, Raw, conf, sniff

TIMEOUT = 5.0
L2_TYPE = 0x88B5


class Checks:
    def __init__(self) -> None:
        self.passed = 0

    def check(self, cond: bool, what: str) -> None:
        if not cond:
            print(f"FAIL: {what}", flush=True)
            sys.exit(1)
        self.passed += 1
        print(f"ok: {what}", flush=True)


def collect(sock, count: int, keep, timeout: float = TIMEOUT):
    """Up to `count` frames arriving on `sock` that `keep` accepts, within `timeout` s."""
    return list(sniff(opened_socket=sock, count=count, timeout=timeout, lfilter=keep, store=True))


def add_on_miss(a, c: Checks) -> None:
    s = conf.L2socket(iface=a.host)
    ours = lambda p: UDP in p and p[UDP].dport == 4791  # noqa: E731

    def frame(src: str, k: int):
        return (
            Ether(dst="02:00:00:00:00:02", src="02:00:00:00:00:01")
            / IP(src=src, dst=f"10.9.{k >> 8}.{k & 0xFF}", id=k, ttl=64)
            / UDP(sport=1024, dport=4791)
            / Raw(bytes(5))
        )

    for rnd, src in enumerate(["10.0.0.1", "10.0.0.2"]):
        sent = [frame(src, k) for k in range(a.keys)]
        for f in sent:
            s.send(f)
        got = collect(s, a.keys, ours)
        c.check(len(got) == a.keys, f"round {rnd + 1}: {len(got)} of {a.keys} frames answered")
        by_dst = {p[IP].dst: p for p in got}
        c.check(len(by_dst) == a.keys, f"round {rnd + 1}: one answer per key")
        for f in sent:
            back = by_dst.get(f[IP].dst)
            if back is None:
                c.check(False, f"an answer for {f[IP].dst}")
            raw, want = bytes(back), bytes(f)
            c.check(
                len(raw) == len(want) and raw[:42] == want[:42],
                f"{f[IP].dst}: Ethernet, IPv4 and UDP headers unchanged",
            )
            c.check(
                back[Ether].src == "02:00:00:00:00:01" and back[IP].src == src
                and back[UDP].sport == 1024,
                f"{f[IP].dst}: fields as sent",
            )
            result = bytes(back[UDP].payload)
            if rnd == 0:
                c.check(result == bytes([0, 0, 0, 0, 2]), f"{f[IP].dst}: miss, inserted (outcome 2)")
            else:
                value = socket.inet_aton("10.0.0.1")
                c.check(
                    result == value + bytes([1]),
                    f"{f[IP].dst}: hit (outcome 1) with the inserter's source 10.0.0.1",
                )
    s.close()


def l2(a, c: Checks) -> None:
    s0 = conf.L2socket(iface=a.host0)
    s1 = conf.L2socket(iface=a.host1)
    ours = lambda p: p[Ether].type == L2_TYPE  # noqa: E731

    def frame(dst: str, src: str, i: int):
        return Ether(dst=dst, src=src, type=L2_TYPE) / Raw(f"nevermiss scapy frame {i:02}".encode() + bytes(30))

    # Host 0 to unknown destinations: flooded to host 1 only. Then to host 1's address: there.
    unknown = [frame(f"02:00:00:00:0c:{i:02x}", a.mac0, i) for i in range(4)]
    known = [frame(a.mac1, a.mac0, 10 + i) for i in range(3)]
    for f in unknown + known:
        s0.send(f)
    at1 = collect(s1, len(unknown) + len(known), ours)
    c.check(
        [bytes(p) for p in at1] == [bytes(f) for f in unknown + known],
        f"host 1 got the {len(unknown)} flooded and {len(known)} forwarded frames, unchanged, in order",
    )
    c.check(all(p[Ether].dst == f[Ether].dst for p, f in zip(at1, unknown + known)), "destinations kept")
    back = collect(s0, 1, ours, timeout=0.5)
    c.check(not back, "nothing went back to host 0")
    # Host 1 to host 0's address: reaches host 0 only.
    to0 = [frame(a.mac0, a.mac1, 20 + i) for i in range(3)]
    for f in to0:
        s1.send(f)
    at0 = collect(s0, len(to0), ours)
    c.check([bytes(p) for p in at0] == [bytes(f) for f in to0], "host 0 got host 1's frames, unchanged")
    c.check(all(p[Ether].src == a.mac1 for p in at0), "sources kept")
    extra = collect(s1, 1, ours, timeout=0.5)
    c.check(not extra, "nothing went back to host 1")
    s0.close()
    s1.close()


def main() -> int:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="case", required=True)
    aom = sub.add_parser("add-on-miss")
    aom.add_argument("--host", required=True)
    aom.add_argument("--keys", type=int, default=16)
    sw = sub.add_parser("l2")
    sw.add_argument("--host0", required=True)
    sw.add_argument("--host1", required=True)
    sw.add_argument("--mac0", default="02:00:00:00:0a:01")
    sw.add_argument("--mac1", default="02:00:00:00:0b:01")
    a = ap.parse_args()
    if a.case == "add-on-miss" and not 1 <= a.keys <= 65535:
        ap.error("--keys must be 1..65535")
    conf.verb = 0
    c = Checks()
    if a.case == "add-on-miss":
        add_on_miss(a, c)
    else:
        l2(a, c)
    print(f"{c.passed} checks passed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
