"""`nevermiss-lab reproduce 001 --quick`: the report compares the two learning variants at every flow
rate with parseable numbers (add-on-miss misses exactly once per flow, the digest variant at least
once and more on average), the raw outputs and the figures exist, and the slides' data loads."""

from __future__ import annotations

import json
from pathlib import Path

from nevermiss_lab import cli, p001
from nevermiss_lab.papers import published


def cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def num(c: str) -> float:
    return float(c.replace(",", ""))


def test_reproduce_001_quick(tmp_path: Path, nm: Path) -> None:
    assert cli.main(["--binary", str(nm), "reproduce", "001", "--quick", "--out", str(tmp_path), "-q"]) == 0
    out = tmp_path / "001"
    text = (out / "report.md").read_text()
    for stem in ["ttfh-percentiles", "entry-percentiles", "misses-vs-rate"]:
        for ext in ("png", "pdf"):
            assert (out / f"{stem}.{ext}").stat().st_size > 1000, stem
    # The per-flow table: one row per rate and series.
    rows = {}
    for line in text.splitlines():
        c = cells(line) if line.startswith("| ") else []
        if len(c) == 13 and c[0].replace(",", "").isdigit():
            rows[(int(num(c[0])), c[1])] = c
    rates = p001.RATES_QUICK
    assert set(rows) == {(r, s[0]) for r in rates for s in p001.SERIES}, sorted(rows)
    for r in rates:
        a, d = rows[(r, "add-on-miss")], rows[(r, "digest")]
        flows = num(a[2])
        assert flows == p001.QUICK["flows"] * p001.QUICK["runs"]
        # Add-on-miss: one miss per flow (mean, median, p99, max), first hit one interval (1 ms) later.
        assert [num(x) for x in a[3:7]] == [1, 1, 1, 1], a
        assert num(a[7]) == 0 and num(a[8]) == 1 and num(a[9]) == 1, a
        # Digest: every flow misses at least once, so more than one miss per flow on average.
        assert num(d[3]) > 1 and num(d[4]) >= 1, d
        assert num(d[10]) > num(a[10]) > 0, (a, d)
    # Ratios digest / add-on-miss: above 1.
    ratio_rows = [cells(l) for l in text.split("## Digest / add-on-miss")[1].split("##")[0].splitlines() if l.startswith("| ") and l[2].isdigit()]
    assert len(ratio_rows) == 2 * len(rates)
    assert all(num(c[2]) > 1 for c in ratio_rows), ratio_rows
    # The raw outputs are kept, and learn.json holds what the report shows.
    learn = json.loads((out / "learn.json").read_text())
    for r in rates:
        v = learn["digest"][str(r)]
        assert v["digest"]["entries_inserted"] == flows and v["flows_hit_at_end"] == flows
        assert abs(v["misses_per_flow_mean"] - num(rows[(r, "digest")][3])) < 0.01 * v["misses_per_flow_mean"] + 0.01
    points = list((out / "runs" / "paper001-quick" / "points").iterdir())
    assert len(points) == len(rates)
    for p in points:
        assert (p / "out.json").exists() and (p / "stdout.txt").exists()
        assert (p / "hdr" / "digest.time-to-first-hit.hlog").exists()
    assert "## Beside the slides" in text and "Never Miss Twice" in text


def test_paper001_data() -> None:
    d = published("001")
    assert d["digest_sleep_s"] == 1.0 and d["misses_per_flow_add_on_miss"] == 1
    assert "no measurement of the digest path" in d["note"]
