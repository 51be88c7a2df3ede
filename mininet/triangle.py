"""Three nevermiss switches in a triangle, a host on each, routes installed by a P4Runtime
controller (mininet/router_controller.py, examples/v1model-router.p4), pings between every
pair of hosts. Run as root with Debian's `mininet` (/usr/bin/python3);
crates/nevermiss/tests/mininet.rs runs it.

    h1 -- s1 ---(cost 3)--- s2 -- h2          s1-s2 costs 3, the other links 1, so the
           \\               /                  controller routes h1 <-> h2 through s3:
            \\--- s3 ------/                   a ping between them crosses all three switches
                  |                            (TTL 64 - 3 = 61 on arrival), the other pairs two
                  h3

    python3 mininet/triangle.py --nevermiss target/release/nevermiss \\
        --controller-python .venv/p4runtime-shell/bin/python

The switches start without a program; the controller pushes it. Prints a JSON report (per
pair: received, TTL seen) and exits 0 when every ping was answered with the TTL its route
gives. Mininet's hosts, links and the switches are removed at the end, also on failure.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from mininet.log import setLogLevel  # noqa: E402
from mininet.net import Mininet  # noqa: E402
from mininet.topo import Topo  # noqa: E402

from nevermiss_mininet import NevermissSwitch  # noqa: E402

ROOT = os.path.dirname(HERE)
PROGRAM = os.path.join(ROOT, "examples", "v1model-router.p4")

# (switch, port, switch, port, cost)
LINKS = [(1, 2, 2, 2, 3), (1, 3, 3, 2, 1), (2, 3, 3, 3, 1)]


def names(tag):
    return {"s": lambda i: "s%s%d" % (tag, i), "h": lambda i: "h%s%d" % (tag, i)}


class Triangle(Topo):
    """Switches s1..s3 (a tag in their names keeps them apart from another run's), host hi on
    port 1 of si (10.0.i.i/24, gateway 10.0.i.254 at si's MAC), the links of LINKS."""

    def build(self, tag="", exe=None, grpc_base=50051, log_dir=None):
        n = names(tag)
        for i in (1, 2, 3):
            self.addSwitch(n["s"](i), cls=NevermissSwitch, exe=exe, grpc_port=grpc_base + i,
                           device_id=i, log_file=os.path.join(log_dir, "s%d.log" % i))
            h = self.addHost(n["h"](i), ip="10.0.%d.%d/24" % (i, i),
                             mac="08:00:00:00:0%d:%d%d" % (i, i, i))
            self.addLink(h, n["s"](i), port2=1)
        for a, pa, b, pb, _ in LINKS:
            self.addLink(n["s"](a), n["s"](b), port1=pa, port2=pb)


def switch_mac(i):
    return "00:00:00:00:0%d:00" % i


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nevermiss", required=True)
    ap.add_argument("--controller-python", required=True,
                    help="a Python with p4runtime-shell (.venv/p4runtime-shell/bin/python)")
    ap.add_argument("--grpc-base", type=int, default=50050,
                    help="switch i serves P4Runtime on 127.0.0.1:BASE+i")
    ap.add_argument("--count", type=int, default=3)
    ap.add_argument("--tag", default=str(os.getpid() % 1000),
                    help="in the switches' and hosts' names (sTAG1, hTAG1, ...), so that runs "
                    "side by side do not collide (default: from the process id)")
    a = ap.parse_args()
    setLogLevel("warning")
    tag = a.tag
    n = names(tag)
    work = tempfile.mkdtemp(prefix="nevermiss-triangle-")
    p4info = os.path.join(work, "router.p4info.txtpb")
    devcfg = os.path.join(work, "router.devcfg")
    subprocess.run([a.nevermiss, "p4info", PROGRAM, "-o", p4info, "--device-config", devcfg],
                   check=True)
    topo = Triangle(tag=tag, exe=a.nevermiss, grpc_base=a.grpc_base, log_dir=work)
    net = Mininet(topo=topo, controller=None, autoSetMacs=False, waitConnected=False)
    report = {"logs": work, "pairs": {}}
    ok = False
    try:
        net.start()
        plan = {
            "switches": {n["s"](i): {"grpc": "127.0.0.1:%d" % (a.grpc_base + i),
                                     "device_id": i, "mac": switch_mac(i)} for i in (1, 2, 3)},
            "hosts": {n["h"](i): {"ip": "10.0.%d.%d" % (i, i),
                                  "mac": "08:00:00:00:0%d:%d%d" % (i, i, i),
                                  "switch": n["s"](i), "port": 1} for i in (1, 2, 3)},
            "links": [[n["s"](x), px, n["s"](y), py, c] for x, px, y, py, c in LINKS],
        }
        for i in (1, 2, 3):
            h = net.get(n["h"](i))
            h.cmd("ip route add default via 10.0.%d.254 dev %s" % (i, h.defaultIntf()))
            h.cmd("ip neigh replace 10.0.%d.254 lladdr %s dev %s"
                  % (i, switch_mac(i), h.defaultIntf()))
        plan_path = os.path.join(work, "topology.json")
        with open(plan_path, "w") as f:
            json.dump(plan, f, indent=1)
        c = subprocess.run([a.controller_python, os.path.join(HERE, "router_controller.py"),
                            plan_path, p4info, devcfg], capture_output=True, text=True,
                           timeout=120)
        report["controller"] = (c.stdout + c.stderr).strip().splitlines()[-12:]
        if c.returncode != 0:
            raise RuntimeError("the controller failed: %s" % (c.stdout + c.stderr)[-2000:])
        ok = True
        # h1 <-> h2 through s3: three switches, TTL 61; the other pairs two, TTL 62.
        for x, y, ttl in [(1, 2, 61), (2, 1, 61), (1, 3, 62), (3, 2, 62)]:
            out = net.get(n["h"](x)).cmd("ping -c %d -W 2 -i 0.3 10.0.%d.%d" % (a.count, y, y))
            m = re.search(r"(\d+) received", out)
            got = int(m.group(1)) if m else 0
            ttls = sorted(set(int(t) for t in re.findall(r"ttl=(\d+)", out)))
            report["pairs"]["h%d->h%d" % (x, y)] = {"received": got, "ttl": ttls, "want_ttl": ttl}
            ok = ok and got == a.count and ttls == [ttl]
    finally:
        net.stop()
    report["ok"] = ok
    print(json.dumps(report))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
