"""A spec's points on a 2-worker Dask LocalCluster give the same results as in-process."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from nevermiss_lab import cluster, spec
from nevermiss_lab.runner import run_spec


def table(folder: Path) -> list[tuple[str, int, int]]:
    """(point, packets counted, table entries) of every point: deterministic bench outputs."""
    rows = []
    for d in sorted((folder / "points").iterdir()):
        out = json.loads((d / "out.json").read_text())
        for p in out["latency"]:
            for c in p["classes"]:
                rows.append((f"{d.name}/{p['scenario']}/{c['class']}", c["count"], sum(p["table_entries_per_run"])))
    return rows


def test_dask_and_in_process_runs_give_the_same_table(tmp_path: Path, nm: Path) -> None:
    s = spec.parse({
        "name": "small",
        "command": "bench",
        "args": {"mode": "latency", "scenario": "add-on-miss", "m": "2^10", "sizes": "2^10", "runs": 1, "count": 2048},
        "sweep": {"rates": [1, 10, 100]},
    })
    local = run_spec(s, tmp_path / "local", exe=nm, executor=cluster.InProcessExecutor(), progress=False)
    with cluster.open_executor(None, 2) as ex:
        dask = run_spec(s, tmp_path / "dask", exe=nm, executor=ex, progress=False)
    assert table(local) == table(dask)
    assert len(table(local)) >= 3
    with (dask / "points.csv").open() as f:
        assert [r["status"] for r in csv.DictReader(f)] == ["ok", "ok", "ok"]


def gathered(folder: Path, name: str) -> list[list[str]]:
    """One table of every point's `sim/<name>`, each row prefixed by its point, sorted."""
    rows = []
    for d in sorted((folder / "points").iterdir()):
        with (d / "sim" / name).open() as f:
            r = list(csv.reader(f))
        rows += [[d.name, *row] for row in r[1:]]
    return sorted(rows)


def test_a_sim_sweep_on_dask_matches_the_in_process_run(tmp_path: Path, nm: Path) -> None:
    s = spec.parse({
        "name": "sim",
        "command": "sim-sweep",
        "args": {"trace": "synthetic:size=300,flows=100,packets=20000,seed=1", "stages": "1..6",
                 "queues": "1,4", "qlen": "inf,10", "batch": 10000},
        "sweep": {"key": ["global", "5tuple", "ipdst"], "width": [2, 4]},
    })
    local = run_spec(s, tmp_path / "local", exe=nm, executor=cluster.InProcessExecutor(), progress=False)
    with cluster.open_executor(None, 2) as ex:
        dask = run_spec(s, tmp_path / "dask", exe=nm, executor=ex, progress=False)
    for name in ("hazards.csv", "lock.csv"):
        a, b = gathered(local, name), gathered(dask, name)
        assert a == b and len(a) > 20, name
    # FDH is a fraction; the global key (one flow) has hazards at N > 1.
    fdh = [float(r[5]) for r in gathered(local, "hazards.csv")]
    assert all(0.0 <= v <= 1.0 for v in fdh) and max(fdh) > 0
