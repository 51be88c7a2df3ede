"""Running a spec's points and keeping every raw output.

Layout of a results folder (`RESULTS/<spec name>/`):

    spec.yaml          the spec as run (a changed spec in the same folder is refused)
    meta.json          binary path, its `--version` (text and fields: commit, rustc, features,
                       engines), the lab's version, machine description, start times
    points/<id>/       one directory per point: command.txt, stdout.txt, stderr.txt, the
                       command's outputs (out.json, hdr/*.hlog, sim/*.csv), status.json
    points.csv         id, sweep values, repetition, status, wall time, message

A point is finished when its `status.json` says `ok`; it is written last, after the outputs, by
rename, so an interrupted sweep resumes without redoing finished points and without trusting
half-written ones. Failed points are retried on the next run and listed in points.csv.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from . import binary as nmbin
from . import provenance
from .cluster import InProcessExecutor, TaskExecutor
from .errors import LabError, PointFailed, SpecError
from .spec import COMMANDS, Point, Spec, check_flags, flag_args, help_flags


@dataclass
class PointTask:
    """Everything one point's run needs (picklable: it may run on a Dask worker)."""

    id: str
    argv: list[str]
    dir: str
    timeout_s: float
    values: dict[str, Any] = field(default_factory=dict)
    rep: int = 0


def execute_point(task: PointTask) -> dict[str, Any]:
    """Runs one point into its directory; returns its status (never raises for a failed run)."""
    d = Path(task.dir)
    if d.exists():
        shutil.rmtree(d)  # a half-finished earlier attempt
    d.mkdir(parents=True)
    (d / "command.txt").write_text(" ".join(task.argv) + "\n")
    t0 = time.monotonic()
    status: dict[str, Any] = {"id": task.id, "values": task.values, "rep": task.rep}
    try:
        out = subprocess.run(
            task.argv, capture_output=True, text=True, timeout=task.timeout_s, check=False
        )
        (d / "stdout.txt").write_text(out.stdout)
        (d / "stderr.txt").write_text(out.stderr)
        if out.returncode == 0:
            status.update(status="ok", exit_code=0, message="")
        else:
            tail = " | ".join(out.stderr.strip().splitlines()[-3:])
            status.update(
                status="failed",
                exit_code=out.returncode,
                message=f"exited with {out.returncode}: {tail or '(no stderr)'}",
            )
    except subprocess.TimeoutExpired:
        status.update(status="failed", exit_code=None, message=f"timed out after {task.timeout_s} s")
    except OSError as e:
        status.update(status="failed", exit_code=None, message=f"cannot run: {e}")
    status["wall_s"] = round(time.monotonic() - t0, 3)
    tmp = d / "status.json.tmp"
    tmp.write_text(json.dumps(status, indent=1))
    os.replace(tmp, d / "status.json")
    return status


def point_status(d: Path) -> dict[str, Any] | None:
    """A point directory's status, or None if it never finished (or the file is unreadable)."""
    try:
        return json.loads((d / "status.json").read_text())
    except (OSError, ValueError):
        return None


def run_tasks(executor: TaskExecutor, tasks: list[PointTask], desc: str, progress: bool) -> list[dict[str, Any]]:
    """Runs point tasks as benchmark tasks (one per worker) and returns their statuses in task
    order; a task the executor lost (e.g. a killed Dask worker) gets a `failed` status.json."""
    statuses = []
    for t, r in zip(tasks, executor.map(execute_point, tasks, bench=True, desc=desc, progress=progress)):
        st = r.value if r.ok and r.value is not None else None
        if st is None:
            st = {"id": t.id, "values": t.values, "rep": t.rep, "status": "failed", "message": r.error, "wall_s": 0}
            Path(t.dir).mkdir(parents=True, exist_ok=True)
            (Path(t.dir) / "status.json").write_text(json.dumps(st, indent=1))
        statuses.append(st)
    return statuses


def resolve_program(spec: Spec, spec_dir: Path | None) -> str | None:
    """The spec's program as an absolute path (relative to the spec file, else the cwd)."""
    if spec.program is None:
        return None
    p = Path(spec.program)
    if not p.is_absolute() and spec_dir is not None and (spec_dir / p).exists():
        p = spec_dir / p
    if not p.exists():
        raise SpecError(f"field `program`: {spec.program}: no such file")
    return str(p.resolve())


def tasks_for(spec: Spec, out: Path, exe: Path, program: str | None) -> list[PointTask]:
    """One task per point of `spec`, writing into `out/points/<id>`."""
    words, outputs = COMMANDS[spec.command]
    tasks = []
    for pt in spec.points():
        d = out / "points" / pt.id
        argv = [str(exe), *words]
        if program is not None:
            argv += [program] if spec.command == "bench-component" else ["--program", program]
        argv += flag_args(spec.args) + flag_args(dict(pt.values))
        argv += [a.replace("{dir}", str(d)) for a in outputs]
        tasks.append(PointTask(pt.id, argv, str(d), spec.timeout_s, dict(pt.values), pt.rep))
    return tasks


def run_spec(
    spec: Spec,
    results: Path,
    *,
    spec_dir: Path | None = None,
    exe: Path | None = None,
    executor: TaskExecutor | None = None,
    progress: bool = True,
) -> Path:
    """Runs every unfinished point of `spec` into `results/<name>/` and returns that folder.

    Flags are checked against the command's `--help` before anything runs. Points run as
    benchmark tasks of `executor` (in-process by default). Finished points are skipped; failed
    ones are retried. Raises `LabError` if any point failed (after all ran)."""
    exe = exe or nmbin.find_binary()
    words, _ = COMMANDS[spec.command]
    help_out = subprocess.run([str(exe), *words, "--help"], capture_output=True, text=True, check=False)
    check_flags(spec, help_flags(help_out.stdout))
    program = resolve_program(spec, spec_dir)
    out = results / spec.name
    out.mkdir(parents=True, exist_ok=True)
    spec_file = out / "spec.yaml"
    text = yaml.safe_dump(spec.model_dump(), sort_keys=False)
    if spec_file.exists() and spec_file.read_text() != text:
        raise LabError(
            f"{out}: holds results of a different spec named `{spec.name}`; "
            "rename the spec or choose another results folder"
        )
    spec_file.write_text(text)
    meta_path = out / "meta.json"
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {"runs": []}
    prov = provenance.collect(exe)
    meta.update(binary=str(exe), version=prov["nevermiss"]["text"], build=prov["nevermiss"],
                lab=prov["lab"], machine=prov["machine"])
    meta["runs"].append({"started": time.strftime("%Y-%m-%dT%H:%M:%S%z")})
    meta_path.write_text(json.dumps(meta, indent=1))

    tasks = tasks_for(spec, out, exe, program)
    todo = [t for t in tasks if (point_status(Path(t.dir)) or {}).get("status") != "ok"]
    if progress and len(todo) < len(tasks):
        print(f"nevermiss-lab: {len(tasks) - len(todo)} of {len(tasks)} points already finished")
    run_tasks(executor or InProcessExecutor(), todo, spec.name, progress)
    write_points_csv(spec, out, tasks)
    failed = [t.id for t in tasks if (point_status(Path(t.dir)) or {}).get("status") != "ok"]
    if failed:
        first = point_status(Path(out / "points" / failed[0])) or {}
        raise PointFailed(
            f"{len(failed)} of {len(tasks)} points failed (see {out}/points.csv); "
            f"first: {failed[0]}: {first.get('message', 'no status')}"
        )
    return out


def write_points_csv(spec: Spec, out: Path, tasks: list[PointTask]) -> Path:
    """points.csv: one row per point with its values and status."""
    path = out / "points.csv"
    keys = list(spec.sweep)
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", *keys, "rep", "status", "wall_s", "message"])
        for t in tasks:
            st = point_status(Path(t.dir)) or {"status": "not run", "wall_s": "", "message": ""}
            w.writerow([t.id, *(t.values[k] for k in keys), t.rep, st["status"], st.get("wall_s", ""), st.get("message", "")])
    return path


def load_outputs(folder: Path) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(status, out.json) of every finished point of a results folder that has an out.json."""
    rows = []
    for d in sorted((folder / "points").iterdir()):
        st = point_status(d)
        if not st or st.get("status") != "ok" or not (d / "out.json").exists():
            continue
        try:
            rows.append((st, json.loads((d / "out.json").read_text())))
        except ValueError as e:
            raise LabError(f"{d / 'out.json'}: not valid JSON ({e})") from e
    return rows
