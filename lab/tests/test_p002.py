"""`nevermiss-lab reproduce 002 --quick`: the report holds the delay, insert-rate and default-action
rows with parseable, plausible numbers beside the paper's, the figures and the bench's HdrHistogram
logs exist and agree with its JSON; a failing or lying binary gives a one-line error."""

from __future__ import annotations

import json
import re
import stat
from pathlib import Path

import pytest

from nevermiss_lab import cli
from nevermiss_lab.hdr import read_log
from nevermiss_lab.p002 import QUICK


def numbers(cell: str) -> list[float]:
    return [float(x.replace(",", "")) for x in re.findall(r"(?<![\w.])-?[\d,]*\.?\d+(?:e[+-]?\d+)?", cell)]


def cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def test_reproduce_002_quick(tmp_path: Path, nm: Path) -> None:
    assert cli.main(["--binary", str(nm), "reproduce", "002", "--quick", "--out", str(tmp_path), "-q"]) == 0
    out = tmp_path / "002"
    text = (out / "report.md").read_text()
    for stem in ["delay-percentiles", "insert-rate-vs-batch"]:
        for ext in ("png", "pdf"):
            assert (out / f"{stem}.{ext}").stat().st_size > 1000, stem
    rows = {cells(line)[0]: cells(line)[1:] for line in text.splitlines() if line.startswith("| ")}
    modifies = QUICK["modifies"] * QUICK["runs"]

    # nevermiss's own percentiles: ordered, in µs, every modify has a d_control.
    for measure in ["d_control", "d_data", "d_all", "client Write (modify)"]:
        p50, p99, p9999, mx, n = (numbers(c)[0] for c in rows[measure])
        assert 0 <= p50 <= p99 <= p9999 <= mx < 10_000_000, (measure, rows[measure])
        assert 0 < n <= modifies, (measure, n)
    assert numbers(rows["d_control"][4])[0] == modifies
    assert 0.01 < numbers(rows["d_control"][0])[0] < 100_000
    assert numbers(rows["d_all"][4])[0] == numbers(rows["d_data"][4])[0]

    # Beside the paper: its d_all medians and maxima per API, ratios that match.
    for measure, paper in [("d_all p50", [22, 262, 590]), ("d_all max", [237, 475, 1442]),
                           ("d_control p50", [22, 262, 590])]:
        r = rows[measure]
        here = numbers(r[0])[0]
        for i, pub in enumerate(paper):
            assert numbers(r[1 + 2 * i]) == [pub], (measure, r)
            assert numbers(r[2 + 2 * i])[0] == pytest.approx(here / pub, rel=0.01), (measure, r)
    assert rows["d_data p50"][1] == "—" and rows["d_all p99"][1] == "—"

    # Insert rate per batch size: median within the runs' range, cited Tofino range beside it.
    for b in QUICK["batches"].split(","):
        med, lo, hi, in_flight = (numbers(c)[0] for c in rows[f"batch {b}"][:4])
        assert 100 < lo <= med <= hi < 100_000_000, (b, rows[f"batch {b}"])
        assert in_flight == 1
        assert numbers(rows[f"batch {b}"][4]) == [30_000, 80_000]

    # The non-atomic modify: the paper's 9,500 occurrences; none here.
    paper, here = rows["packets that saw the default action"]
    assert numbers(paper)[0] == 9500
    assert numbers(here) == [0]
    assert numbers(rows["modifies"][1]) == [modifies]
    assert numbers(rows["packets sent during the modifies"][1])[0] > 0
    assert "## What differs and why" in text

    # The bench's logs are in the results folder, and hold as many values as the report counts.
    point = out / "runs" / "paper002-quick" / "points" / "rep0"
    assert (point / "out.json").is_file() and (point / "command.txt").read_text().count("--hdr-dir") == 1
    log = read_log(point / "hdr" / "modify.d_control.hlog")
    assert len(log.intervals) == QUICK["runs"] and log.total.get_total_count() == modifies
    summary = json.loads((out / "summary.json").read_text())
    assert summary["packets_default_action"] == 0
    assert summary["delays_us"]["d_all"]["n"] == read_log(point / "hdr" / "modify.d_all.hlog").total.get_total_count()


def _fake(tmp_path: Path, nm: Path, body: str) -> Path:
    """A stand-in binary: `--version` and `--help` from the real one, `body` for a run."""
    f = tmp_path / "fake-nevermiss"
    f.write_text(
        "#!/bin/sh\n"
        f'case "$*" in *--version*|*--help*) exec "{nm}" "$@";; esac\n'
        + body
    )
    f.chmod(f.stat().st_mode | stat.S_IXUSR)
    return f


def test_failing_binary_is_one_clear_error(tmp_path: Path, nm: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fake = _fake(tmp_path, nm, 'echo "p4rt: the server could not bind" >&2\nexit 3\n')
    code = cli.main(["--binary", str(fake), "reproduce", "002", "--quick", "--out", str(tmp_path), "-q"])
    err = capsys.readouterr().err
    assert code == 1
    assert err.startswith("nevermiss-lab: error:") and "exited with 3" in err and "could not bind" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "002" / "report.md").exists()


@pytest.mark.parametrize("written, want", [
    ('{"inserts": [', "not valid JSON"),
    ('{"inserts": []}', "not a `nevermiss bench p4rt` report"),
])
def test_unreadable_output_is_one_clear_error(tmp_path: Path, nm: Path, capsys: pytest.CaptureFixture[str],
                                              written: str, want: str) -> None:
    # Exits 0 but writes a truncated or foreign JSON where --json points.
    quoted = written.replace('"', '\\"')
    fake = _fake(tmp_path, nm, f'while [ $# -gt 0 ]; do [ "$1" = --json ] && printf "{quoted}" > "$2"; shift; done\nexit 0\n')
    code = cli.main(["--binary", str(fake), "reproduce", "002", "--quick", "--out", str(tmp_path), "-q"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("nevermiss-lab: error:") and "out.json" in err and want in err, err
    assert "Traceback" not in err
