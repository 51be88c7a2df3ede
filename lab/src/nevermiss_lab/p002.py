"""`nevermiss-lab reproduce 002`: paper 002 (Stubbe et al., Computer Communications 2024) on
nevermiss's P4Runtime server.

Runs `nevermiss bench p4rt` (server, gRPC client and a traffic worker in one process) through the
spec runner, then writes `reports/002/report.md` with the update delays of a modify (d_control,
d_data, d_all; p50/p99/p99.99/max) beside the paper's per API as ratios, the insert rate by
batch size, and the packets that saw the default action during the modifies (the paper's
non-atomic modify), a section on what differs, and the figures: the percentile distribution of
the delays (from the bench's HdrHistogram logs) and the insert rate vs batch size.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from . import plots
from .cluster import TaskExecutor
from .errors import LabError
from .hdr import percentile_distribution, read_log
from .papers import published
from .report import fmt, ratio, table
from .runner import point_status, run_spec
from .spec import Spec

#: Small counts: a few seconds of measuring.
QUICK: dict[str, Any] = {
    "inserts": 3000,
    "batches": "1,10,100,1000",
    "modifies": 5000,
    "rate": 1_000_000,
    "runs": 3,
}
#: The bench's defaults (100 000 inserts per batch size, 10 000 modifies, 1 Mpps, 5 runs).
FULL: dict[str, Any] = {}

#: The measures of a modify: JSON key, HdrHistogram log, label.
DELAYS = [
    ("d_control_ns", "modify.d_control.hlog", "d_control"),
    ("d_data_ns", "modify.d_data.hlog", "d_data"),
    ("d_all_ns", "modify.d_all.hlog", "d_all"),
]
WRITE_LOG = ("modify_latency_ns", "modify.write.hlog", "client Write (modify)")
PCTS = [("p50", "p50"), ("p99", "p99"), ("p99_99", "p99.99"), ("max", "max")]
#: The percentile records of the bench's JSON the report reads.
PERCENTILE_KEYS = ("d_control_ns", "d_data_ns", "d_all_ns", "modify_latency_ns", "write_latency_ns")
#: The paper's APIs, in its order of latency.
APIS = ["vendor_cpp", "p4runtime_cpp", "p4runtime_python"]


def spec(quick: bool) -> Spec:
    """The bench run behind the report."""
    return Spec(
        name="paper002-quick" if quick else "paper002",
        command="bench-p4rt",
        description="paper 002 update delays, insert rates, default action during modifies",
        args=dict(QUICK if quick else FULL),
        timeout_s=600 if quick else 3600,
    )


def load(point: Path) -> dict[str, Any]:
    """The bench's JSON report of a finished point; a `LabError` naming the file if it is missing
    or lacks what the report needs."""
    path = point / "out.json"
    try:
        bench: dict[str, Any] = json.loads(path.read_text())
    except OSError as e:
        raise LabError(f"{path}: {e.strerror or e}") from e
    except ValueError as e:
        raise LabError(f"{path}: not valid JSON ({e})") from e
    if not isinstance(bench, dict):
        raise LabError(f"{path}: not a `nevermiss bench p4rt` report")
    for key in ("inserts", "packets", "packets_dropped", "modifies", "runs", "rate_pps", *PERCENTILE_KEYS):
        if key not in bench:
            raise LabError(f"{path}: no `{key}`: not a `nevermiss bench p4rt` report")
    for key in PERCENTILE_KEYS:
        p = bench[key]
        if not isinstance(p, dict) or any(not isinstance(p.get(k), int) for k in ("p50", "p99", "p99_99", "max", "n")):
            raise LabError(f"{path}: `{key}` is not a percentile record (p50, p99, p99_99, max, n)")
    for r in bench["inserts"]:
        if not isinstance(r, dict) or not {"batch", "entries", "entries_per_s", "in_flight"} <= set(r):
            raise LabError(f"{path}: `inserts` holds {r!r}, not an insert rate")
    return bench


def us(ns: float | None) -> float | None:
    return None if ns is None else ns / 1e3


def _pct(p: dict[str, Any], key: str) -> float | None:
    """A percentile in µs, None when no update was measured."""
    return us(float(p[key])) if p.get("n") else None


def delay_rows(bench: dict[str, Any]) -> list[list[object]]:
    """nevermiss's own percentiles: one row per measure."""
    rows: list[list[object]] = []
    for key, _, label in [*DELAYS, WRITE_LOG, ("write_latency_ns", "", "client Write (single insert)")]:
        p = bench[key]
        rows.append([label, *(_pct(p, k) for k, _ in PCTS), p.get("n", 0)])
    return rows


def paper_rows(bench: dict[str, Any]) -> list[list[object]]:
    """One row per measure × percentile: nevermiss's value, then each API's published d_all
    (generic kernel) and nevermiss / paper. The paper gives medians and maxima; its d_control is
    like its d_all (§5.3); its d_data is not separable (black box)."""
    paper = published("002")["d_all"]["apis"]
    rows: list[list[object]] = []
    for key, _, label in DELAYS:
        for k, name in PCTS:
            here = _pct(bench[key], k)
            row: list[object] = [f"{label} {name}", here]
            for api in APIS:
                pub = paper[api]["generic"].get(k) if label != "d_data" else None
                row += [pub, ratio(here, pub)]
            rows.append(row)
    return rows


def insert_rows(bench: dict[str, Any]) -> list[list[object]]:
    """Insert rate by batch size: median and range over runs, and the cited Tofino range."""
    ir = published("002")["insert_rate"]
    rows: list[list[object]] = []
    for r in bench["inserts"]:
        runs = r.get("runs_entries_per_s") or [r["entries_per_s"]]
        rows.append([f"batch {r['batch']}", float(r["entries_per_s"]), float(min(runs)), float(max(runs)),
                     r["in_flight"], f"{ir['entries_per_s_min']:,}–{ir['entries_per_s_max']:,}",
                     ratio(float(r["entries_per_s"]), float(ir["entries_per_s_max"]))])
    return rows


def default_rows(bench: dict[str, Any]) -> list[list[object]]:
    """The non-atomic modify: the paper's occurrences of the default action beside the packets
    nevermiss dropped (no entry or the default action) during the modifies."""
    d = published("002")["default_action"]
    s = published("002")["setup"]
    share = ", ".join(f"{k}: {v:.0%}" for k, v in d["share_by_packets"].items())
    dropped, packets = int(bench["packets_dropped"]), int(bench["packets"])
    return [
        ["modifies", f"{s['modify_rate_hz']} per s for {s['measured_s']} s", bench["modifies"] * bench["runs"]],
        ["packets sent during the modifies", f"{s['data_mpps']} Mpps", packets],
        ["packets that saw the default action", f"{d['occurrences_per_experiment']:,} times per experiment, "
         f"{d['packets_min']}–{d['packets_max']} packets each ({share})", dropped],
        ["share of packets that saw it", "—", dropped / packets if packets else None],
    ]


def figures(bench: dict[str, Any], hdr_dir: Path, out: Path) -> list[Path]:
    """The report's figures (PNG and PDF); returns the PNG paths."""
    made: list[Path] = []
    paper = published("002")["d_all"]["apis"]
    # 1. Percentile distribution of the delays (paper 002 Fig. 5 style).
    fig, ax = plots.figure()
    style = plots.styles()
    drawn = 0
    for _, log_name, label in [*DELAYS, WRITE_LOG]:
        log = read_log(hdr_dir / log_name)
        pts = [(p, v) for p, v in percentile_distribution(log.total) if p < 100.0]
        if not pts:
            next(style)
            continue
        xs = [1.0 / (1.0 - p / 100.0) for p, _ in pts]
        ax.plot(xs, [max(v, 1) / 1e3 for _, v in pts], label=f"nevermiss {label}", markevery=0.1, **next(style))
        drawn += 1
    if drawn == 0:
        raise LabError(f"{hdr_dir}: the delay logs hold no values")
    # The paper's d_all (Tofino, generic kernel): its median at the 50th percentile and its
    # highest value at the right edge, hollow.
    right = ax.get_xlim()[1]
    for api, marker in zip(APIS, ["o", "s", "^"]):
        v = paper[api]["generic"]
        ax.plot([2.0, right], [v["p50"], v["max"]], **plots.paper_style("0.0", marker),
                label=f"paper d_all p50 and max, {paper[api]['label']}")
    ax.set_yscale("log")
    plots.percentile_axis(ax)
    ax.set_xlabel("percentile [%]")
    ax.set_ylabel("delay [µs]")
    ax.set_title(f"Modify delays, {bench['rate_pps']:,} packets/s (paper 002 Fig. 5); hollow: paper", fontsize=9)
    ax.legend(fontsize=6, loc="lower right")
    fixed = (f"{bench['modifies']:,} modifies per run, {bench['runs']} runs, traffic {bench['rate_pps']:,} packets/s, "
             "server and client in one process on 127.0.0.1; the paper: a Tofino switch and its CPU")
    made.append(plots.save(fig, out / "delay-percentiles", fixed=fixed)[0])

    # 2. Insert rate vs batch size, with the Tofino range the paper cites.
    ins = sorted(bench["inserts"], key=lambda r: r["batch"])
    if ins:
        ir = published("002")["insert_rate"]
        fig, ax = plots.figure()
        st = next(plots.styles())
        xs = [r["batch"] for r in ins]
        med = [r["entries_per_s"] for r in ins]
        lo = [m - min(r.get("runs_entries_per_s") or [m]) for r, m in zip(ins, med)]
        hi = [max(r.get("runs_entries_per_s") or [m]) - m for r, m in zip(ins, med)]
        ax.errorbar(xs, med, yerr=[lo, hi], capsize=3, label="nevermiss (median, min–max of runs)", **st)
        ax.axhspan(ir["entries_per_s_min"], ir["entries_per_s_max"], facecolor="none", edgecolor="0.5",
                   hatch="///", linewidth=0.0, label="Tofino, cited in paper 002 §3")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("batch size [updates per Write]")
        ax.set_ylabel("insert rate [entries/s]")
        ax.set_title("P4Runtime insert rate vs batch size; hatched: the range paper 002 cites", fontsize=9)
        ax.legend(fontsize=8)
        made.append(plots.save(fig, out / "insert-rate-vs-batch", fixed=(
            f"{bench['runs']} runs per batch size, one client over 127.0.0.1, an exact table; "
            "no traffic during the inserts"))[0])
    return made


def differences(bench: dict[str, Any]) -> str:
    """What differs from the paper's setup, with this run's numbers where they matter."""
    paper = published("002")
    gap_ns = 1e9 / bench["rate_pps"]
    per_us_100g = paper["impacted_packets_per_us"]["rows"][100]
    d_all = _pct(bench["d_all_ns"], "p50")
    write = _pct(bench["modify_latency_ns"], "p50")
    fw = paper["forwarders"]
    at_100g = "—" if d_all is None else f"{d_all * per_us_100g:,.0f}"
    apis = paper["d_all"]["apis"]
    dropped = int(bench["packets_dropped"])
    n_data, n_ctl = int(bench["d_data_ns"].get("n", 0)), int(bench["d_control_ns"].get("n", 0))
    theirs = ", ".join(f"{apis[a]['generic']['p50']} µs ({apis[a]['label']}) about "
                       f"{apis[a]['generic']['p50'] * per_us_100g:,}" for a in APIS)
    return (
        "\n## What differs and why\n\n"
        "- **Where the update travels.** paper 002 sends each modify from a separate load generator "
        "over a 1 Gbit/s link to the switch's control-plane CPU (Xeon D-1548), whose DPDK-based control "
        "application calls the vendor driver, which writes the Tofino's table over PCIe; packets on both "
        "planes are timestamped outside the switch by one hardware timestamper (black box). Here the "
        "client, the server and the data plane are one process on the same shared 2 vCPUs: the Write "
        "travels over TCP on 127.0.0.1, and the times are the server's own clock (white box).\n"
        "- **Where d_all starts.** The paper's clock starts when the modify reaches the switch's port, so "
        "its d_all includes the control plane's packet reception (its Fig. 4: 5–106 µs median round trip "
        f"for DPDK to Python forwarders, e.g. {fw['dpdk_l2fwd']['generic']['p50']} µs for l2fwd). "
        "nevermiss's d_control starts when the server has the decoded Write, so it excludes TCP, HTTP/2 "
        "and protobuf decoding; the client's Write latency (request sent to response received, "
        f"p50 {fmt(write)} µs here) bounds the whole path, both directions included.\n"
        "- **What d_data means here.** nevermiss's d_data runs from the change being visible to the first "
        "packet whose lookup hit the entry at its new version, recorded by the worker itself. With "
        f"traffic at {bench['rate_pps']:,} packets/s the next packet is due within {gap_ns:,.0f} ns, so "
        "d_data's median is about half a gap plus the lookup; its tail is the worker being descheduled "
        f"on the shared cores. This run has a d_data for {n_data:,} of {n_ctl:,} modifies: the others were "
        "superseded by the next modify before any packet hit the route (the worker was off its CPU for "
        "longer than a Write takes), so d_all covers those modifies only. The paper cannot separate d_data (the ASIC's part, PCIe write and table "
        "update) from d_all and reports d_control as behaving like d_all, because every API's call "
        "blocks until the ASIC holds the change (§5.3); the tables above therefore compare nevermiss's "
        "d_control with the paper's d_all too.\n"
        "- **Load.** The paper sends 100 modifies per second against 8.9 Mpps of 64 B packets, to stay "
        "clear of overload. The bench sends its modifies back to back (each Write waits for the previous "
        "response), against a worker pacing packets in software; the control plane is never idle, "
        "and the tail percentiles include every other process on this machine (no NOHZ, no isolated "
        "cores, which the paper found to help medians and hurt tails).\n"
        "- **Atomicity.** The Tofino applied the default action to 1–3 packets in about 9,500 modifies "
        "per experiment (a modify looks like delete + insert). nevermiss's modify replaces the entry's "
        "action in place in the table's sequence-locked cell: a packet sees the old or the new action, "
        "never a miss or the default, so the design expects no such packet; the bench counts every "
        f"dropped packet (no entry or the default) to check it, and this run counted {dropped:,} of "
        f"{int(bench['packets']):,}.\n"
        "- **Insert rates.** paper 002 measures modifies only; the 30,000–80,000 entries/s it cites "
        "(§3) are a Tofino's, limited by a slow control CPU and PCIe. nevermiss's figures are a client "
        "and server sharing two cores, so batching mostly saves the per-Write gRPC cost"
        + (" (each Write built and encoded as it was sent).\n"
           if any(r.get("built_in_loop") for r in bench["inserts"])
           else " (the Writes of a run built and encoded before the clock started: the rate is the "
                "server's and the transport's).\n")
        + f"- **What it means for packets.** At 100 Gbit/s (Table 1: {per_us_100g} packets per µs), a "
        f"d_all of {fmt(d_all)} µs (nevermiss's median) spans about {at_100g} packets; the paper's "
        f"{theirs}.\n"
    )


def render(bench: dict[str, Any], pngs: list[Path], quick: bool, wall_s: float | None,
           meta: dict[str, Any]) -> str:
    """The markdown report."""
    paper = published("002")
    apis = paper["d_all"]["apis"]
    mach = meta.get("machine", {})
    ins = bench["inserts"]
    per_batch = ins[0]["entries"] if ins else 0
    lines = [
        "# paper 002 on nevermiss: data-plane updates through P4Runtime\n",
        f"Paper: {paper['source']}. Measured here with `nevermiss bench p4rt` "
        f"({'quick run' if quick else 'full run, the bench defaults'}: {per_batch:,} inserts per batch size, "
        f"{bench['modifies']:,} modifies per run under {bench['rate_pps']:,} packets/s, {bench['runs']} runs; "
        f"bench wall time {fmt(wall_s)} s; {mach.get('cpus', '?')} CPUs, {mach.get('cpu_model', 'unknown CPU')}; "
        f"`{meta.get('version', 'nevermiss')}`). Delays are in µs over every modify of every run.\n",
        f"## Update delay of a modify ({paper['d_all']['section']})\n",
        "nevermiss, every modify of every run (d_all = d_control + d_data; a modify no packet used "
        "before the next one has no d_data):\n",
        table(["measure", "p50 µs", "p99 µs", "p99.99 µs", "max µs", "updates"], delay_rows(bench)),
        "\nBeside the paper's d_all (generic kernel, DPDK control applications). The paper gives "
        "medians and maxima only; its d_control is like its d_all (§5.3), its d_data is not published "
        "(black box); its p50 is the median its Discussion quotes (the per-API paragraphs call the same "
        "numbers best cases), its max the highest latency it reports. Ratio = nevermiss / paper.\n",
        table(["measure", "nevermiss µs",
               *[h for api in APIS for h in (f"{apis[api]['label']} µs", "ratio")]], paper_rows(bench)),
        "\nThe paper's d_all per API and kernel (NOHZ: tickless, isolated cores):\n",
        table(["API", "generic p50 µs", "generic max µs", "NOHZ p50 µs", "NOHZ max µs"],
              [[apis[a]["label"], apis[a]["generic"]["p50"], apis[a]["generic"]["max"], apis[a]["nohz"]["p50"],
                apis[a]["nohz"]["max"]] for a in APIS]),
        f"\nBeyond p99.9 every API's latency rises by {paper['d_all']['p999_rise_us'][0]}–"
        f"{paper['d_all']['p999_rise_us'][1]} µs (§5.2).\n",
        f"\n## Insert rate by batch size ({paper['insert_rate']['section']})\n",
        table(["batch", "entries/s", "min of runs", "max of runs", "Writes in flight", "paper (Tofino)",
               "nevermiss / 80,000"], insert_rows(bench)),
        f"\n## Default action during modifies ({paper['default_action']['section']})\n",
        table(["measure", "paper (Tofino)", "nevermiss"], default_rows(bench)),
        "\n## Figures\n",
        *[f"![{p.stem}]({p.name})\n" for p in pngs],
        differences(bench),
    ]
    return "\n".join(lines)


def summary(bench: dict[str, Any]) -> dict[str, Any]:
    """The measured figures of the report as JSON (µs and entries/s)."""
    return {
        "delays_us": {label: {name: _pct(bench[key], k) for k, name in PCTS} | {"n": bench[key].get("n", 0)}
                      for key, _, label in [*DELAYS, WRITE_LOG]},
        "insert_entries_per_s": {str(r["batch"]): r["entries_per_s"] for r in bench["inserts"]},
        "packets": bench["packets"],
        "packets_default_action": bench["packets_dropped"],
        "modifies": bench["modifies"] * bench["runs"],
    }


def reproduce(out_dir: Path, quick: bool, binary: Path, executor: TaskExecutor | None = None,
              progress: bool = True) -> Path:
    """Runs the bench and writes `out_dir/report.md`, figures, `summary.json` and the raw outputs
    (under `out_dir/runs/`); returns the report's path."""
    folder = run_spec(spec(quick), out_dir / "runs", exe=binary, executor=executor, progress=progress)
    points = sorted((folder / "points").iterdir())
    if not points:
        raise LabError(f"{folder}: no points")
    point = points[0]
    bench = load(point)
    t0 = time.monotonic()
    pngs = figures(bench, point / "hdr", out_dir)
    status = point_status(point) or {}
    try:
        meta: dict[str, Any] = json.loads((folder / "meta.json").read_text())
    except (OSError, ValueError):
        meta = {}
    report = out_dir / "report.md"
    report.write_text(render(bench, pngs, quick, status.get("wall_s"), meta))
    (out_dir / "summary.json").write_text(json.dumps(summary(bench), indent=1))
    if progress:
        print(f"nevermiss-lab: report and figures in {time.monotonic() - t0:.1f} s")
    return report
