#!/usr/bin/env python3
"""The bench corpus of real programs (issue 28, docs/bench.md "Real programs"): each program's
`nevermiss run` rate on generator traffic relative to the add-on-miss example's, in one run.

Every round runs every program once, in turn, so a busy neighbour slows them alike; the figure
is the median over the rounds of each program's packets/s, and the ratio is that median over the
add-on-miss example's. The traffic is the same for all (no table entries, so most packets of the
other programs take their miss or drop path):
`--port 0=gen:two-phase,m=65536,r=100,count=COUNT,field=ipv4.dst --port 1=null`.

Programs of p4c and DASH are read from checkouts given by P4C_DIR and DASH_DIR (skipped when
unset); nothing of them is in this repository.

usage: scripts/corpus.py [--rounds 3] [--count 1000000] [--bin target/release/nevermiss]
                         [--engine jit] [--only NAME,...] [--json FILE]
Prints a Markdown table: program, architecture, Mpps (median, min-max), ratio to the example,
the interpreter fallbacks per packet (docs/jit.md), and the machine code's size.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def programs():
    """(name, arch, argv of the program, where it comes from), the example first."""
    out = [("add-on-miss example", "PNA", [str(ROOT / "examples/pna-add-on-miss.p4")],
            "examples/pna-add-on-miss.p4")]
    dash = os.environ.get("DASH_DIR")
    if dash:
        p = str(Path(dash) / "dash-pipeline/bmv2/dash_pipeline.p4")
        out.append(("DASH (PNA build)", "PNA",
                    [p, "-DTARGET_DPDK_PNA", "-DPNA_CONNTRACK", "-DDISABLE_128BIT_ARITHMETIC"],
                    "sonic-net/DASH dash-pipeline/bmv2"))
        out.append(("DASH (v1model build)", "v1model", [p, "-DTARGET_BMV2_V1MODEL"],
                    "sonic-net/DASH dash-pipeline/bmv2"))
    p4c = os.environ.get("P4C_DIR")
    if p4c:
        s = Path(p4c) / "testdata/p4_16_samples"
        for name, arch, rel in [
            ("ONOS fabric.p4", "v1model", "fabric_20190420/fabric.p4"),
            ("switch_p4_16.p4", "v1model", "switch_p4_16.p4"),
            ("pna-example-tcp-connection-tracking.p4", "PNA", "pna-example-tcp-connection-tracking.p4"),
            ("psa-example-digest-bmv2.p4", "PSA", "psa-example-digest-bmv2.p4"),
        ]:
            out.append((name, arch, [str(s / rel)], "p4c testdata/p4_16_samples"))
    return out


RATE = re.compile(r"total: .*?([0-9.]+) s, ([0-9]+) packets/s")
FALLBACKS = re.compile(r"([0-9.]+) per packet\)")
CODE = re.compile(r"([0-9.]+) KiB of machine code")


def run_once(binary, prog, count, engine):
    gen = f"0=gen:two-phase,m=65536,r=100,count={count},field=ipv4.dst"
    cmd = [binary, "run", *prog, "--engine", engine, "--port", gen, "--port", "1=null"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    text = p.stdout + p.stderr
    m = RATE.search(text)
    if p.returncode not in (0,) or not m:
        first = next((l for l in text.splitlines() if "error" in l), text.strip()[-300:])
        return {"error": first}
    f = FALLBACKS.search(text)
    c = CODE.search(text)
    return {
        "pps": int(m.group(2)),
        "fallbacks_per_packet": float(f.group(1)) if f else None,
        "code_kib": float(c.group(1)) if c else None,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--count", type=int, default=1000000)
    ap.add_argument("--bin", default=str(ROOT / "target/release/nevermiss"))
    ap.add_argument("--engine", default="jit", choices=["jit", "interp"])
    ap.add_argument("--only", default="", help="comma-separated substrings of program names")
    ap.add_argument("--json", help="write every run's figures here")
    a = ap.parse_args()
    if a.rounds < 1 or a.count < 1:
        ap.error("--rounds and --count must be positive")
    if not Path(a.bin).exists():
        ap.error(f"{a.bin} is not built (cargo build --release -p nevermiss)")
    progs = programs()
    if a.only:
        keep = [s.strip() for s in a.only.split(",") if s.strip()]
        progs = [progs[0]] + [p for p in progs[1:] if any(k in p[0] for k in keep)]
    runs = {p[0]: [] for p in progs}
    for r in range(a.rounds):
        for name, _, argv, _ in progs:
            res = run_once(a.bin, argv, a.count, a.engine)
            runs[name].append(res)
            print(f"round {r + 1}/{a.rounds} {name}: {res}", file=sys.stderr)
    base = statistics.median(x["pps"] for x in runs[progs[0][0]] if "pps" in x)
    print(f"| program | arch | Mpps (median, min–max of {a.rounds}) | / example | "
          "fallbacks per packet | machine code |")
    print("|---|---|---|---|---|---|")
    for name, arch, _, _ in progs:
        ok = [x for x in runs[name] if "pps" in x]
        if not ok:
            err = runs[name][0].get("error", "?")
            print(f"| {name} | {arch} | does not run: {err} | | | |")
            continue
        pps = [x["pps"] for x in ok]
        med = statistics.median(pps)
        fb = ok[0]["fallbacks_per_packet"]
        kib = ok[0]["code_kib"]
        print(f"| {name} | {arch} | {med / 1e6:.2f} ({min(pps) / 1e6:.2f}–{max(pps) / 1e6:.2f}) | "
              f"{med / base:.2f} | {'' if fb is None else f'{fb:.1f}'} | "
              f"{'' if kib is None else f'{kib:.0f} KiB'} |")
    if a.json:
        Path(a.json).write_text(json.dumps({"count": a.count, "engine": a.engine, "runs": runs},
                                           indent=1))


if __name__ == "__main__":
    main()
