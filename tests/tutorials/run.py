"""Runs p4lang/tutorials' exercises, their solutions in place, with nevermiss in BMv2's place
(docs/drop-in.md), non-interactively: each exercise's own `utils/run_exercise.py` (Mininet,
its topology, its runtime JSON pushed over P4Runtime) with BMV2_SWITCH_EXE's equivalent `-b`
set to nevermiss-simple-switch-grpc, driven through the Mininet CLI's stdin with the steps its
README gives (its send/receive scripts, ping, iperf), and judged by what those print.

    TUTORIALS_DIR=... python3 tests/tutorials/run.py --switch BIN --p4c P4C_BM2_SS [EXERCISE...]

Run as root with Debian's Python (`/usr/bin/python3`, which has Mininet) and PYTHONPATH holding
p4runtime, grpcio, protobuf and scapy (crates/nevermiss/tests/tutorials.rs uses .venv/ptf's).
The tutorials are copied into a scratch directory first; nothing of them is changed. Prints one
line per exercise (`PASS name` or `FAIL name: why`) and a JSON summary last; exit 0 when all
the exercises run passed.
"""

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

# Per exercise: the Mininet CLI commands (the README's steps) and the check of the
# transcript plus the files the steps wrote. `py` runs an exercise's script with Debian's
# Python, unbuffered (so that a receiver killed at the end has printed what it got).
PY = "/usr/bin/python3 -u"


def wait_for(path, text, secs=60):
    """A step that waits (up to `secs`) until the file `path` of the exercise holds `text`: a
    receiver's "sniffing on eth0", a controller's line; on a loaded machine starting Python
    with scapy takes seconds, and a fixed sleep may end before it."""
    return "sh for i in $(seq %d); do grep -q '%s' %s && break; sleep 1; done" % (secs, text, path)


def ping_ok(out, n):
    return len(re.findall(r"\b%d received" % n, out))


# ecn's and mri's README: h2 receives h1's messages while iperf from h11 to h22 fills the
# 0.5 Mbit/s link s1-s2, so s1's queue toward it fills.
CONGESTED = [
    "h2 %s receive.py > h2.log 2>&1 &" % PY,
    "h22 iperf -s -u > /dev/null 2>&1 &",
    wait_for("h2.log", "sniffing"),
    "h1 %s send.py 10.0.2.2 'P4 is cool' 12 > h1.log 2>&1 &" % PY,
    "h11 iperf -c 10.0.2.22 -t 10 -u -b 2M > h11.log 2>&1",
    "sh sleep 3",
]

def counts(log, counter):
    """The packet counts flowcache's controller printed for `counter` (`s1 NAME 2: N packets`)."""
    return [int(n) for n in re.findall(r"^s\d %s \d+: (\d+) packets" % re.escape(counter), log, re.M)]


def first_requests(d):
    """The echo requests s1 sent toward s2 (the `--pcap` capture of its port 2, as BMv2 names
    it), as (seq, ttl, tos)."""
    from scapy.all import ICMP, IP, rdpcap
    try:
        pkts = rdpcap(os.path.join(d, "pcaps", "s1-eth2_out.pcap"))
    except (OSError, Exception):
        return []
    return [(p[ICMP].seq, p[IP].ttl, p[IP].tos) for p in pkts
            if ICMP in p and p[ICMP].type == 8 and p[IP].dst == "10.0.2.2"]


def flowcache_check(out, d):
    """flowcache's README: with its controller running, the first packet of a flow goes to the
    controller in a PacketIn (counted by egressPktInCounter), which sends it on in a PacketOut
    unchanged and installs an entry; the flow's later packets take the entry (TTL decremented,
    DSCP 5, the host's MAC) and the pings are answered; an entry left idle times out (an
    IdleTimeoutNotification) and the controller deletes it. A packet sent on in a PacketOut
    keeps the gateway's MAC as destination, so its host ignores it: of each ping's 5 requests
    the first two go unanswered (request, then reply, each the first of its flow), on BMv2 as
    here."""
    log = read(d, "ctrl.log")
    received = [int(n) for n in re.findall(r"(\d+) received", out)]
    problems = []
    if len(received) != 3 or min(received) < 3:
        problems.append("pings answered: %s of 5 each" % received)
    if "Received PacketIn" not in log:
        problems.append("the controller got no PacketIn")
    if not any(n > 0 for n in counts(log, "MyEgress.egressPktInCounter")):
        problems.append("egressPktInCounter never counted")
    reqs = first_requests(d)
    # The first request crossed s1 in a PacketOut (as h1 sent it), the next through the entry.
    if len(reqs) < 2 or reqs[0] != (1, 64, 0) or reqs[1] != (2, 63, 20):
        problems.append("s1's port 2 sent the requests %s, not seq 1 as sent (PacketOut) then "
                        "seq 2 rewritten (the entry)" % reqs[:3])
    if "Deleted flow_cache entry" not in log:
        problems.append("no idle entry was timed out and deleted")
    if "Traceback" in log or "gRPC Error" in log:
        problems.append("the controller failed")
    return not problems or "%s; controller: %s" % ("; ".join(problems), log[-600:])


# link_monitor's probe path (send.py's egress_spec list): (switch, port) of each hop in order.
PROBE_PATH = [(1, 4), (4, 1), (2, 4), (3, 1), (1, 3), (3, 2), (2, 3), (4, 2), (1, 1)]


def link_monitor_check(out, d):
    """link_monitor's README: receive.py prints each probe's hops (`Switch S - Port P: U Mbps`);
    the hops are the probe's path, and while iperf runs from h1 to h4, the utilisation the
    probes report on the link it loads (s1's port 4, toward s4) agrees with what iperf reports
    (the median probe within 30%: a probe measures about a second, iperf its whole run)."""
    log = read(d, "recv.log")
    probes = [re.findall(r"^Switch (\d+) - Port (\d+): ([\d.e+-]+) Mbps$", block, re.M)
              for block in log.split("\n\n")]
    probes = [p for p in probes if p]
    if len(probes) < 2:
        return "h1 received %d probes: %r" % (len(probes), log[-300:])
    # receive.py prints the hops last to first.
    paths = [[(int(s), int(p)) for s, p, _ in reversed(hops)] for hops in probes]
    if any(path != PROBE_PATH for path in paths):
        return "probe hops %s, not the path %s" % (
            [p for p in paths if p != PROBE_PATH][0], PROBE_PATH)
    m = re.findall(r"([\d.]+) ([KMG])bits/sec", read(d, "iperf.log"))
    if not m:
        return "no iperf result: %r" % read(d, "iperf.log")[-300:]
    scale = {"K": 1e-3, "M": 1.0, "G": 1e3}
    iperf = float(m[-1][0]) * scale[m[-1][1]]
    # The first probe through a port measures from time 0 and is left out; the probes that
    # crossed s1's port 4 while the iperf ran (above 1 Mbit/s) must agree with it, at least 3.
    busy = sorted(float(u) for hops in probes[1:] for s, p, u in hops
                  if (s, p) == ("1", "4") and float(u) > 1.0)
    if len(busy) < 3 or not (0.7 * iperf <= busy[len(busy) // 2] <= 1.3 * iperf):
        return "the probes saw %s Mbit/s on s1's port 4 during the iperf, iperf %.2f Mbit/s" % (
            ["%.1f" % u for u in busy], iperf)
    return True


EXERCISES = {
    "basic": {
        "steps": ["h1 ping -c 3 -W 2 h2", "h1 ping -c 3 -W 2 h3", "h2 ping -c 3 -W 2 h3"],
        "check": lambda out, d: ping_ok(out, 3) == 3 or "pings failed",
    },
    "ecn": {
        "steps": CONGESTED,
        "check": lambda out, d: (
            ("tos       = 0x3" in read(d, "h2.log")) or
            "no packet marked CE (tos 0x3) at h2: tos seen %s" % sorted(
                set(re.findall(r"tos\s+= (0x\w+)", read(d, "h2.log"))))),
    },
    "mri": {
        "steps": CONGESTED,
        "check": lambda out, d: (
            any(int(q) > 0 for q in re.findall(r"qdepth\s+= (\d+)", read(d, "h2.log"))) or
            "no switch trace with a queue depth above 0 at h2: %s" % sorted(
                set(re.findall(r"qdepth\s+= (\d+)", read(d, "h2.log"))))),
    },
    "basic_tunnel": {
        "steps": [
            "h2 %s receive.py > h2.log 2>&1 &" % PY,
            wait_for("h2.log", "sniffing"),
            "h1 %s send.py 10.0.2.2 'P4 is cool' --dst_id 2 > h1.log 2>&1" % PY,
            "sh sleep 2",
        ],
        "check": lambda out, d: (
            ("P4 is cool" in read(d, "h2.log") and "dst_id" in read(d, "h2.log")) or
            "the tunnelled message did not reach h2"),
    },
    "load_balance": {
        "steps": [
            "h2 %s receive.py > h2.log 2>&1 &" % PY,
            "h3 %s receive.py > h3.log 2>&1 &" % PY,
            wait_for("h2.log", "sniffing"),
            wait_for("h3.log", "sniffing"),
            "h1 %s send.py 10.0.0.1 'P4 is cool' > h1.log 2>&1" % PY,
            "sh sleep 2",
        ],
        "check": lambda out, d: (
            ("P4 is cool" in read(d, "h2.log") + read(d, "h3.log")) or
            "the message to the virtual address reached neither h2 nor h3"),
    },
    "multicast": {
        "steps": ["h1 ping -c 3 -W 2 h2", "h1 ping -c 3 -W 2 h3", "h2 ping -c 3 -W 2 h3"],
        "check": lambda out, d: ping_ok(out, 3) == 3 or "pings failed",
    },
    "p4runtime": {
        "steps": [
            "sh timeout 15 %s mycontroller.py > ctrl.log 2>&1 &" % PY,
            "sh sleep 5",
            "h1 ping -c 3 -W 2 h2",
            "sh sleep 11",
        ],
        "check": lambda out, d: (
            (ping_ok(out, 3) == 1 and "Traceback" not in read(d, "ctrl.log")) or
            "ping through the controller's tunnels failed: %s" % read(d, "ctrl.log")[-300:]),
    },
    "qos": {
        "steps": [
            "h2 %s receive.py > h2.log 2>&1 &" % PY,
            wait_for("h2.log", "sniffing"),
            "h1 %s send.py --p=UDP --des=10.0.2.2 --m='P4 is cool' --dur=3 > h1.log 2>&1" % PY,
            "h1 %s send.py --p=TCP --des=10.0.2.2 --m='P4 is cool' --dur=3 > h1.log 2>&1" % PY,
            "sh sleep 2",
        ],
        "check": lambda out, d: (
            ({"0xb9", "0xb1"} <= set(re.findall(r"tos\s+= (0x\w+)", read(d, "h2.log")))) or
            "h2 did not see tos 0xb9 (UDP) and 0xb1 (TCP): %s" % sorted(
                set(re.findall(r"tos\s+= (0x\w+)", read(d, "h2.log"))))),
    },
    "source_routing": {
        "steps": [
            "h2 %s receive.py > h2.log 2>&1 &" % PY,
            wait_for("h2.log", "sniffing"),
            "h1 printf '2 3 2 2 1\\nq\\n' | %s send.py 10.0.2.2 > h1.log 2>&1" % PY,
            "sh sleep 2",
        ],
        "check": lambda out, d: (
            ("ttl       = 59" in read(d, "h2.log")) or
            "h2 did not get the looped packet with ttl 59: %s" % sorted(
                set(re.findall(r"ttl\s+= (\d+)", read(d, "h2.log"))))),
    },
    "firewall": {
        # Out (h1 to h3) is allowed, in (h3 to h1) is not, as the README's iperf steps show.
        "steps": [
            "h3 iperf -s > /dev/null 2>&1 &",
            "h1 iperf -s > /dev/null 2>&1 &",
            "sh sleep 1",
            "h1 timeout -s KILL 10 iperf -c 10.0.3.3 -t 2 > out.log 2>&1",
            "h3 timeout -s KILL 10 iperf -c 10.0.1.1 -t 2 > in.log 2>&1",
        ],
        "check": lambda out, d: (
            ("bits/sec" in read(d, "out.log") and "bits/sec" not in read(d, "in.log")) or
            "h1 to h3: %r; h3 to h1: %r" % (read(d, "out.log")[-200:], read(d, "in.log")[-200:])),
    },
    "flowcache": {
        # The controller pushes the program, then answers PacketIns; the pings start once it
        # runs (its SetForwardingPipelineConfig would drop earlier ones), the wait at the end
        # outlasts the entries' 3 s idle timeout and its 5 s notification poll, and the
        # controller is stopped before Mininet stops the switches under it.
        "steps": [
            "sh timeout 120 %s mycontroller.py > ctrl.log 2>&1 & echo $! > ctrl.pid" % PY,
            wait_for("ctrl.log", "SEND_TO_PORT_IN_OPERAND0"),
            "sh sleep 3",
            "h1 ping -c 5 -W 3 h2",
            "h1 ping -c 5 -W 3 h3",
            "h2 ping -c 5 -W 3 h3",
            "sh sleep 14",
            "sh kill $(cat ctrl.pid)",
            "sh sleep 1",
        ],
        "check": flowcache_check,
    },
    "link_monitor": {
        # The README's steps, with `iperf h1 h4` as the two iperf commands it runs: Mininet's
        # CLI `iperf` waits for a second result line from the server that iperf 2.1 (Debian's)
        # does not print for its connect-only probe, and never returns. The probes start
        # before the iperf (the first one through a port has no previous time to measure from).
        # The iperf is held to 20 Mbit/s: unlimited, it fills s1's egress queue (tail drops
        # take probes too) and h1's ACKs outrun receive.py (scapy, in Python, on a loaded
        # 2-core machine), so few probes arrive during it and each of those averages over the
        # seconds since the last one that did, idle time included.
        "steps": [
            "h1 %s receive.py > recv.log 2>&1 &" % PY,
            wait_for("recv.log", "sniffing"),
            "h1 timeout 60 %s send.py > send.log 2>&1 &" % PY,
            "sh for i in $(seq 60); do [ $(grep -c Sent send.log) -ge 2 ] && break; sleep 1; done",
            "h4 iperf -s > /dev/null 2>&1 &",
            "sh sleep 1",
            "h1 iperf -c 10.0.4.4 -t 8 -b 20M > iperf.log 2>&1",
            "sh sleep 3",
        ],
        "check": link_monitor_check,
    },
    "calc": {
        # calc.py echoes each expression after its prompt, then prints the switch's result.
        "steps": ["h1 printf '1+1\\n7&12\\n9-5\\n6^3\\nquit\\n' | %s calc.py > calc.log 2>&1"
                  % PY],
        "check": lambda out, d: (
            re.findall(r"^(\d+)$", read(d, "calc.log"), re.M) == ["2", "4", "4", "5"] or
            "calc.py printed %r" % read(d, "calc.log")[-300:]),
    },
}


def cleanup():
    """After a run killed on its timeout: what its Mininet left behind, as `mn -c` removes it but
    narrower: the host and switch shells (`mininet:hN`, `mininet:sN`), the switches'
    processes, and the links named sN-ethM."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if re.search(r"mininet:[hs]\d+\b|simple-switch-grpc .*-i \d+@s\d+-eth", cmdline):
            try:
                os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    for name in re.findall(r"^\d+: (s\d+-eth\d+)[@:]", links, re.M):
        subprocess.run(["ip", "link", "del", name], capture_output=True)


def make_var(ex, name):
    """A variable the exercise's Makefile sets (`NAME = value`), or None."""
    for line in read(ex, "Makefile").splitlines():
        m = re.match(r"\s*%s\s*=\s*(\S+)" % name, line)
        if m:
            return m.group(1)
    return None


def topology(ex):
    """The exercise's topology file: its Makefile's TOPO, else topology.json."""
    return make_var(ex, "TOPO") or "topology.json"


def read(d, name):
    try:
        with open(os.path.join(d, name), errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def run_one(name, tut, switch, p4c, timeout):
    ex = os.path.join(tut, "exercises", name)
    spec = EXERCISES[name]
    # The solution in place of the skeleton (the exercise's Makefile builds *.p4).
    for f in os.listdir(os.path.join(ex, "solution")):
        shutil.copy(os.path.join(ex, "solution", f), os.path.join(ex, f))
    os.makedirs(os.path.join(ex, "build"), exist_ok=True)
    os.makedirs(os.path.join(ex, "logs"), exist_ok=True)
    os.makedirs(os.path.join(ex, "pcaps"), exist_ok=True)
    # Every program is built, as the Makefile builds them; DEFAULT_PROG (or the only one) is the
    # switches' default.
    progs = sorted(f for f in os.listdir(ex) if f.endswith(".p4"))
    for prog in progs:
        b = prog[:-3]
        c = subprocess.run([p4c, "--p4v", "16", "--p4runtime-files",
                            "build/%s.p4.p4info.txtpb" % b, "-o", "build/%s.json" % b, prog],
                           cwd=ex, capture_output=True, text=True)
        if c.returncode != 0:
            return "p4c-bm2-ss %s failed: %s" % (prog, c.stderr[-500:])
    default = make_var(ex, "DEFAULT_PROG") or (progs[0] if len(progs) == 1 else None)
    if default is None:
        return "several programs %s and no DEFAULT_PROG" % progs
    base = default[:-3]
    topo = topology(ex)
    cmd = [sys.executable, "../../utils/run_exercise.py", "-t", topo,
           "-j", "build/%s.json" % base, "-b", switch]
    stdin = "\n".join(spec["steps"]) + "\n"
    p = subprocess.Popen(cmd, cwd=ex, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = p.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        cleanup()
        return "timed out after %d s: %s" % (timeout, out[-500:])
    with open(os.path.join(ex, "transcript.txt"), "w") as f:
        f.write(out)
    verdict = spec["check"](out, ex)
    if verdict is True:
        return None
    return "%s (transcript %s)" % (verdict, os.path.join(ex, "transcript.txt"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--switch", required=True, help="nevermiss-simple-switch-grpc")
    ap.add_argument("--p4c", required=True, help="p4c-bm2-ss")
    ap.add_argument("--timeout", type=int, default=180)
    ap.add_argument("--keep", action="store_true", help="keep the scratch copy")
    ap.add_argument("exercises", nargs="*")
    a = ap.parse_args()
    src = os.environ.get("TUTORIALS_DIR")
    if not src:
        print("TUTORIALS_DIR is not set", file=sys.stderr)
        return 2
    names = a.exercises or sorted(EXERCISES)
    unknown = [n for n in names if n not in EXERCISES]
    if unknown:
        print("no check for %s (known: %s)" % (unknown, sorted(EXERCISES)), file=sys.stderr)
        return 2
    # PI's p4.tmp.p4config_pb2 for the controllers (shim/sitecustomize.py).
    shim = os.path.join(os.path.dirname(os.path.abspath(__file__)), "shim")
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [shim] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    scratch = tempfile.mkdtemp(prefix="nevermiss-tutorials-")
    tut = os.path.join(scratch, "tutorials")
    shutil.copytree(src, tut, ignore=shutil.ignore_patterns(".git"))
    results = {}
    try:
        for n in names:
            why = run_one(n, tut, os.path.abspath(a.switch), a.p4c, a.timeout)
            results[n] = why
            print(("PASS %s" % n) if why is None else ("FAIL %s: %s" % (n, why)), flush=True)
    finally:
        if not a.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    passed = sum(1 for v in results.values() if v is None)
    print(json.dumps({"passed": passed, "run": len(results),
                      "failed": {k: v for k, v in results.items() if v is not None}}))
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
