"""`nevermiss-lab reproduce 004 --quick`: every component gets a fitted model with a small error,
the composed programs are predicted, and the figures exist."""

from __future__ import annotations

import json
import re
from pathlib import Path

from nevermiss_lab import cli, components


def test_reproduce_004_quick(tmp_path: Path, nm: Path) -> None:
    assert cli.main(["--binary", str(nm), "reproduce", "004", "--quick", "--out", str(tmp_path), "-q"]) == 0
    out = tmp_path / "004"
    text = (out / "report.md").read_text()
    models = json.loads((out / "models.json").read_text())
    assert set(models) == set(components.COMPONENTS)
    for comp, m in models.items():
        assert 0 <= m["error"] < 0.25, (comp, m["describe"])
        assert (out / f"model-{comp}.png").exists() and (out / f"model-{comp}.pdf").exists()
    # Each of tables, applies and writes costs more at its largest value than at its smallest.
    for comp in ["tables", "applies", "header-writes", "parsed-headers"]:
        xs = components.COMPONENTS[comp][2]
        ys = []
        for x in (xs[0], xs[-1]):
            rep = json.loads((out / "runs" / "points" / f"{comp}-{x}" / "out.json").read_text())
            ys.append(rep["eq4_ns"]["median"])
        assert ys[1] > ys[0], (comp, ys)
    rows = [l for l in text.splitlines() if l.startswith("| ") and any(c.name in l for c in components.composed_programs())]
    assert len(rows) == 3
    for r in rows:
        measured, predicted, err = (float(v.replace(",", "")) for v in r.split("|")[3:6])
        assert measured > 0 and predicted > 0 and 0 <= err < 100, r
    assert re.search(r"Median prediction error: [\d.]+ %", text)


def test_p4_programs_of_every_component_are_valid(tmp_path: Path, nm: Path) -> None:
    import subprocess

    for comp, (_, _, quick, _) in components.COMPONENTS.items():
        p = components.params_for(comp, quick[-1])
        f = tmp_path / f"{comp}.p4"
        f.write_text(components.program(p))
        r = subprocess.run([str(nm), "check", str(f)], capture_output=True, text=True)
        assert r.returncode == 0, (comp, r.stderr)

