"""Specs, the runner and the CLI's errors: a bad spec is refused before anything runs, naming the
field; a failed point is marked failed while the others finish; a resumed sweep does not redo
finished points; an unreadable log or a missing binary is one clear line."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from nevermiss_lab import cli, hdr, spec
from nevermiss_lab.errors import LabError, PointFailed, SpecError
from nevermiss_lab.runner import run_spec

ROOT = Path(__file__).resolve().parents[2]


def write(tmp: Path, text: str) -> Path:
    p = tmp / "spec.yaml"
    p.write_text(text)
    return p


def test_specs_are_validated_with_the_field_named(tmp_path: Path) -> None:
    ok = spec.load(write(tmp_path, "name: a\ncommand: bench\nargs: {mode: latency}\nsweep: {rates: [1, 10]}\nrepetitions: 2\n"))
    assert [p.id for p in ok.points()] == ["rates=1_rep0", "rates=1_rep1", "rates=10_rep0", "rates=10_rep1"]
    cases = {
        "name: a\ncommand: benchx\n": "field `command`",
        "name: a\ncommand: bench\nrepetitions: 0\n": "field `repetitions`",
        "name: a\ncommand: bench\nsweep: {rates: []}\n": "field `sweep`",
        "name: a\ncommand: bench\nfoo: 1\n": "field `foo`",
        "name: a b\ncommand: bench\n": "field `name`",
        "name: a\ncommand: bench\nargs: {Mode: x}\n": "field `args`",
        "name: [a\n": "not valid YAML",
        "- 1\n": "a spec is a mapping",
    }
    for text, want in cases.items():
        with pytest.raises(SpecError) as e:
            spec.load(write(tmp_path, text))
        assert want in str(e.value), (text, str(e.value))
    with pytest.raises(SpecError, match="no such file|No such file"):
        spec.load(tmp_path / "absent.yaml")


def test_unknown_flags_fail_before_anything_runs(tmp_path: Path, nm: Path) -> None:
    s = spec.parse({"name": "x", "command": "bench", "args": {"no-such-flag": 1}})
    with pytest.raises(SpecError, match="`nevermiss bench` has no flag --no-such-flag"):
        run_spec(s, tmp_path, exe=nm, progress=False)
    assert not (tmp_path / "x").exists()
    s = spec.parse({"name": "x", "command": "bench", "args": {"json": "a"}})
    with pytest.raises(SpecError, match="sets --json itself"):
        run_spec(s, tmp_path, exe=nm, progress=False)


def test_a_failed_point_is_marked_and_a_resume_skips_finished_points(tmp_path: Path, nm: Path) -> None:
    # --m 7 is refused by nevermiss bench (not a size it accepts); 2^10 works.
    s = spec.parse({
        "name": "sweep",
        "command": "bench",
        "args": {"mode": "latency", "scenario": "add-on-miss", "rates": "1", "sizes": "2^10", "runs": 1, "count": 2048},
        "sweep": {"m": ["2^10", 7]},
    })
    with pytest.raises(PointFailed, match="1 of 2 points failed"):
        run_spec(s, tmp_path, exe=nm, progress=False)
    folder = tmp_path / "sweep"
    rows = (folder / "points.csv").read_text().splitlines()
    assert rows[0] == "id,m,rep,status,wall_s,message"
    assert rows[1].startswith("m=2^10_rep0,2^10,0,ok,")
    assert rows[2].startswith("m=7_rep0,7,0,failed,") and "exited with 2" in rows[2]
    good = folder / "points" / "m=2^10_rep0"
    out = json.loads((good / "out.json").read_text())
    assert out["config"]["m"] == 1024
    assert list((good / "hdr").glob("*.hlog"))
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["version"].startswith("nevermiss") and meta["machine"]["cpus"] >= 1
    # The exact build: commit (and dirty flag), rustc, features, engines; and the lab's version.
    for key in ("commit", "rustc", "features", "engines"):
        assert meta["build"][key], key
    assert meta["lab"].startswith("0.")
    # Resume: the finished point is not run again (its files keep their times).
    mtime = (good / "status.json").stat().st_mtime_ns
    with pytest.raises(PointFailed):
        run_spec(s, tmp_path, exe=nm, progress=False)
    assert (good / "status.json").stat().st_mtime_ns == mtime
    assert len(json.loads((folder / "meta.json").read_text())["runs"]) == 2
    # A different spec under the same name is refused, the results kept.
    s2 = spec.parse({**s.model_dump(), "repetitions": 3})
    with pytest.raises(LabError, match="different spec"):
        run_spec(s2, tmp_path, exe=nm, progress=False)
    assert (good / "out.json").exists()


def test_cli_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = write(tmp_path, "name: a\ncommand: nope\n")
    assert cli.main(["run", str(bad), "--results", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("nevermiss-lab: error:") and "field `command`" in err and "\n" not in err
    assert cli.main(["--binary", str(tmp_path / "none"), "table3"]) == 2
    err = capsys.readouterr().err
    assert "nevermiss binary was not found" in err and str(tmp_path / "none") in err


def test_unreadable_logs_are_a_clear_error(tmp_path: Path) -> None:
    p = tmp_path / "x.hlog"
    p.write_text("Tag=a,0.1,0.1,1.0,notbase64!!\n")
    with pytest.raises(LabError, match="x.hlog"):
        hdr.read_log(p)
    with pytest.raises(LabError, match="no such"):
        hdr.read_log(tmp_path / "absent.hlog")


def test_percentile_distribution_ends_at_the_maximum() -> None:
    from hdrh.histogram import HdrHistogram

    h = HdrHistogram(1, 10**6, 3)
    for v in range(1, 1001):
        h.record_value(v)
    d = hdr.percentile_distribution(h)
    assert d[0][0] == 0.0 and d[-1] == (100.0, 1000)
    ps = [p for p, _ in d]
    assert ps == sorted(ps)
    # Values 1..1000 uniformly: the value at percentile p is about 10·p.
    assert all(abs(v - 10 * p) <= 3 for p, v in d[1:]), d


def test_lab_version_names_the_lab_and_the_build(nm: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    assert cli.main(["--binary", str(nm), "--version"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("nevermiss-lab 0.") and f"nevermiss binary: {nm}" in out
    assert "commit: " in out and "rustc: " in out and "engines: " in out
