"""Two hosts, one nevermiss switch between them (NevermissSwitch), a shaped link: pings across
and reports the loss as JSON on stdout (exit 0 when every ping was answered). Run as root with
Debian's `mininet` (/usr/bin/python3); crates/nevermiss/tests/mininet.rs runs it.

    python3 mininet/ping.py --nevermiss target/release/nevermiss --program P4_OR_JSON [--count N]
"""

import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from mininet.link import TCLink  # noqa: E402
from mininet.log import setLogLevel  # noqa: E402
from mininet.net import Mininet  # noqa: E402
from mininet.topo import Topo  # noqa: E402

from nevermiss_mininet import NevermissSwitch  # noqa: E402


class TwoHosts(Topo):
    """h1 -- s1 -- h2 (ports 1 and 2), the link to h2 shaped to 10 Mbit/s."""

    def build(self, tag="", program=None, exe=None, grpc_port=None, log_file=None):
        s = self.addSwitch("s%s" % tag, cls=NevermissSwitch, program=program, exe=exe,
                           grpc_port=grpc_port, log_file=log_file)
        h1 = self.addHost("h%sa" % tag, ip="10.0.1.1/24", mac="08:00:00:00:01:11")
        h2 = self.addHost("h%sb" % tag, ip="10.0.1.2/24", mac="08:00:00:00:01:22")
        self.addLink(h1, s, port2=1)
        self.addLink(h2, s, port2=2, cls=TCLink, bw=10)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nevermiss", required=True)
    ap.add_argument("--program", required=True)
    ap.add_argument("--count", type=int, default=3)
    ap.add_argument("--grpc-port", type=int, default=50051)
    ap.add_argument("--log", default=None)
    a = ap.parse_args()
    setLogLevel("warning")
    # Names unique to this process (interfaces live in the root namespace).
    tag = str(os.getpid() % 10000)
    topo = TwoHosts(tag=tag, program=a.program, exe=a.nevermiss, grpc_port=a.grpc_port,
                    log_file=a.log)
    net = Mininet(topo=topo, controller=None, autoSetMacs=False, waitConnected=False)
    result = {"sent": a.count}
    try:
        net.start()
        h1, h2 = net.get("h%sa" % tag), net.get("h%sb" % tag)
        out = h1.cmd("ping -c %d -W 2 -i 0.2 %s" % (a.count, h2.IP()))
        m = re.search(r"(\d+) received", out)
        result["received"] = int(m.group(1)) if m else 0
        m = re.search(r"= [\d.]+/([\d.]+)/", out)
        result["rtt_avg_ms"] = float(m.group(1)) if m else None
        result["output"] = out.strip().splitlines()[-2:]
    finally:
        net.stop()
    print(json.dumps(result))
    return 0 if result.get("received") == a.count else 1


if __name__ == "__main__":
    sys.exit(main())
