"""papers/003 sweeps: a sim sweep on a 2-worker Dask LocalCluster gives byte-identical tables to the
in-process run; a failing point (a trace that does not exist) is reported as a failed point with a
clear message while the others finish; `p003.reproduce(quick=True)` writes the report, figures and
plausible numbers. Skips when the nevermiss binary is absent (conftest's `nm`)."""

from __future__ import annotations

import csv
import json
import math
import re
from pathlib import Path
from typing import Iterator

import pytest

from nevermiss_lab import cluster, p003, sim
from nevermiss_lab.errors import PointFailed

ROOT = Path(__file__).resolve().parents[2]
DIST = ROOT / "data" / "trace-stats"


def small_grids() -> list[sim.Grid]:
    """Two small synthetic traces (3 batches of 10k packets), two keys, N 1..8, Q {1, 4},
    Q_len {inf, 10}, W {2, 4}, plus a one-key grid with another W: a few seconds in all."""
    chi = sim.Trace("CHI15", f"synthetic:dist={DIST / 'chi-15_pkt_size_pmf.dat'},flows=2000,zipf=1.0,"
                             "packets=30k,seed=1")
    fb = sim.Trace("FB", f"synthetic:dist={DIST / 'fb_pkt_size_pmf.dat'},flows=500,zipf=1.2,packets=30k,seed=2")
    return [
        sim.Grid(traces=(chi, fb), keys=("global", "5tuple"), ns=tuple(range(1, 9)), queues=(1, 4),
                 qlens=("inf", "10"), w_bits=(2, 4), batch=10_000),
        sim.Grid(traces=(fb,), keys=("ipdst",), ns=(1, 2, 4, 8), queues=(2,), qlens=("100",), w_bits=(0,),
                 hazards=False, batch=10_000),
    ]


@pytest.fixture(scope="module")
def dask_ex() -> Iterator[cluster.DaskExecutor]:
    with cluster.open_executor(None, 2) as ex:
        yield ex  # type: ignore[misc]


def csv_bytes(folder: Path) -> dict[str, bytes]:
    return {n: (folder / n).read_bytes() for n in ("hazards.csv", "lock.csv", "max_n.csv")}


def test_dask_sweep_gives_the_same_tables_as_in_process(
    tmp_path: Path, nm: Path, dask_ex: cluster.DaskExecutor
) -> None:
    local = sim.run_sweep(small_grids(), tmp_path / "local", cluster.InProcessExecutor(), binary=nm, progress=False)
    assert dask_ex.parallelism == 2
    dask = sim.run_sweep(small_grids(), tmp_path / "dask", dask_ex, binary=nm, progress=False)
    assert not local.failed and not dask.failed
    assert csv_bytes(tmp_path / "local") == csv_bytes(tmp_path / "dask")
    assert (local.hazards, local.lock, local.max_n) == (dask.hazards, dask.lock, dask.max_n)
    # traces × keys × N hazard rows; traces × keys × N × Q × Q_len × W lock rows (+ the second grid).
    assert len(local.hazards) == 2 * 2 * 8
    assert len(local.lock) == 2 * 2 * 8 * 2 * 2 * 2 + 4
    assert len(local.max_n) == (2 * 2 * 2 * 2 + 1) * 3  # finite Q_len only, 3 tolerances
    assert [p["id"] for p in local.points] == [p["id"] for p in dask.points]
    # Sorted: trace in grid order, then key in the paper's order, then N.
    order = [(r["trace"], r["key"], r["n"]) for r in local.hazards]
    assert order[0] == ("CHI15", "global", 1) and order[-1] == ("FB", "5tuple", 8)
    assert all(0.0 <= r["fdh_p99"] <= 1.0 for r in local.hazards)
    assert all(0.0 <= r["thrpt_min"] <= 1.0 and 0.0 <= r["drop_max"] <= 1.0 for r in local.lock)
    # Finer points (one per N) and "maximum N" computed here agree with the binary's own.
    fine = sim.run_sweep(small_grids(), tmp_path / "fine", dask_ex, binary=nm, by=("trace", "key", "q", "n"),
                         progress=False)
    assert len(fine.points) == 2 * 2 * 2 * 8 + 4 + 4 and not fine.failed
    assert csv_bytes(tmp_path / "fine") == csv_bytes(tmp_path / "local")


def test_a_failing_point_is_reported_and_the_others_finish(
    tmp_path: Path, nm: Path, dask_ex: cluster.DaskExecutor
) -> None:
    missing = tmp_path / "no-such-trace.pcap"
    grid = sim.Grid(
        traces=(sim.Trace("BAD", str(missing)), sim.Trace("OK", "synthetic:size=300,flows=50,packets=20k,seed=1")),
        keys=("global", "5tuple"), ns=(1, 2, 3), queues=(1,), qlens=("10",), batch=10_000,
    )
    for name, ex in (("local", cluster.InProcessExecutor()), ("dask", dask_ex)):
        t = sim.run_sweep([grid], tmp_path / name, ex, binary=nm, progress=False)  # type: ignore[arg-type]
        assert [f["id"] for f in t.failed] == ["BAD.lock.global", "BAD.lock.5tuple"]
        for f in t.failed:
            assert f["status"] == "failed" and f["exit_code"] == 2
            assert str(missing) in f["message"] and "No such file" in f["message"], f["message"]
            assert f["message"].startswith(f"point {f['id']} (trace BAD): `nevermiss sim sweep")
        assert {r["trace"] for r in t.hazards + t.lock + t.max_n} == {"OK"}
        assert len(t.lock) == 2 * 3 and len(t.hazards) == 2 * 3
        with (tmp_path / name / "points.csv").open() as f:
            status = {r["id"]: r["status"] for r in csv.DictReader(f)}
        assert status == {"BAD.lock.global": "failed", "BAD.lock.5tuple": "failed",
                          "OK.lock.global": "ok", "OK.lock.5tuple": "ok"}
    # The executors turn any exception into a failed result, in task order.
    bad = sim.PointTask(sim.SimPoint(id="x", trace=grid.traces[1], keys=("global",), ns=(1,), hazards=True),
                        str(tmp_path / "x"), str(tmp_path / "no-binary"), 1, 10.0)
    for ex in (cluster.InProcessExecutor(), dask_ex):
        r = ex.map(sim.run_point, [bad], progress=False)
        assert len(r) == 1 and not r[0].ok and "cannot run" in (r[0].error or "")
        r2 = ex.map(abs, [-3, "x", 4], progress=False)
        assert [x.value for x in r2] == [3, None, 4] and "TypeError" in (r2[1].error or "")


def test_reproduce_quick_writes_the_report(tmp_path: Path, nm: Path) -> None:
    report = p003.reproduce(tmp_path, quick=True, binary=nm, progress=False)
    text = report.read_text()
    for heading in ("## Table 1", "## Fig. 3", "## Fig. 8", "## Queueing latency", "## Figs. 5–7",
                    "### 100% throughput", "### 99.9% throughput", "### 99% throughput", "## What differs and why"):
        assert heading in text, heading
    assert "not available here" in text and "synthetic" in text
    assert "## Failed points" not in text
    # Published numbers beside measured ones (paper column first).
    rows = {
        "fdh": r"^\| CHI15 \| global \| 2 \| 0\.029 \| ([\d.e-]+) \| ([\d.e-]+) \|",
        "fdh_fb": r"^\| FB \| global \| 30 \| 0\.365 \| ([\d.e-]+) \| ([\d.e-]+) \|",
        "thrpt": r"^\| CHI15 \| global \| 20 \| 0\.5150 \| ([\d.]+) \| ([\d.]+) \|",
        "lat": r"^\| CHI15 \| global \| 8 \| inf \| 282 \| ([\d.,]+) \|",
        "maxn": r"^\| CHI15 \| global \| 4 \| 100 \| 8 \| (\d+) \| ([\d.]+) \| 282 \| ([\d.,]+) \|",
        "maxn_fb": r"^\| FB \| global \| 1 \| 100 \| 2 \| (\d+) \|",
    }
    got = {}
    for name, pat in rows.items():
        m = re.search(pat, text, re.M)
        assert m, (name, pat)
        got[name] = [float(g.replace(",", "")) for g in m.groups()]
    assert 0.0 < got["fdh"][0] < 0.1 and 0.5 < got["fdh"][1] < 1.5
    assert abs(got["fdh_fb"][0] - 0.355) < 0.01  # 1/mean(ceil(len/80)) of the FB distribution
    assert 0.45 < got["thrpt"][0] <= 0.65
    assert 1 <= got["maxn"][0] <= 30 and 1 <= got["maxn_fb"][0] <= 30
    for stem in ("fig3-fdh-global", "fig3-fdh-flows", "fig5-maxn-global", "fig6-maxn-keys", "fig7-queues",
                 "fig8-throughput", "latency-vs-n", "drops-vs-n"):
        for ext in (".png", ".pdf"):
            f = tmp_path / f"{stem}{ext}"
            assert f.is_file() and f.stat().st_size > 5000, f
        assert f"]({stem}.png)" in text
    # The gathered tables: plausible ranges and the paper's closed forms.
    infos = json.loads((tmp_path / "traces.json").read_text())
    haz = sim.read_csv(tmp_path / "sweep" / "hazards.csv")
    lock = sim.read_csv(tmp_path / "sweep" / "lock.csv")
    mx = sim.read_csv(tmp_path / "sweep" / "max_n.csv")
    assert {r["trace"] for r in haz} == {*p003.FLOW_TRACES, "FB", p003.WORST}
    assert all(0.0 <= r["fdh_p99"] <= 1.0 and r["batches"] == 2 for r in haz)
    assert all(r["fdh_p99"] == 0.0 for r in haz if r["n"] == 1)
    for tr in (*p003.FLOW_TRACES, "FB"):  # global-key plateau = 1/mean read cycles (§A.5)
        assert math.isclose(sim.one(haz, "fdh_p99", trace=tr, key="global", n=30), infos[tr]["plateau"], rel_tol=0.03)
    assert all(0.0 <= r["thrpt_min"] <= 1.0 and 0.0 <= r["drop_max"] <= 1.0 and r["latency_p99_max"] >= 0 for r in lock)
    assert all(r["drop_max"] == 0.0 for r in lock if r["qlen"] == "inf")
    for n in (1, 2, 5, 30):  # worst case: one 64 B packet per cycle, global state → 1/N
        got = sim.one(lock, "thrpt_min", trace=p003.WORST, key="global", n=n, q=4, qlen="inf")
        assert math.isclose(got, 1 / n, rel_tol=0.01)
    assert all(r["max_n"] is None or 1 <= r["max_n"] <= 30 for r in mx)
    assert {r["qlen"] for r in mx} == {10, 100}
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["fdh_global_n30"]["CHI15"]["paper"] == 0.094
    with (tmp_path / "sweep" / "points.csv").open() as f:
        assert all(r["status"] == "ok" for r in csv.DictReader(f))


def test_point_failed_is_raised_by_run_point(tmp_path: Path, nm: Path) -> None:
    p = sim.SimPoint(id="bad", trace=sim.Trace("BAD", "synthetic:size=64,packets=5k"), keys=("global",), ns=(1, 2),
                     hazards=True)
    with pytest.raises(PointFailed, match="fewer than one batch") as e:
        sim.run_point(sim.PointTask(p, str(tmp_path / "bad"), str(nm), 1, 60.0))
    assert e.value.exit_code == 1
    assert (tmp_path / "bad" / "command.txt").read_text().startswith("nevermiss sim sweep -t synthetic:size=64")
