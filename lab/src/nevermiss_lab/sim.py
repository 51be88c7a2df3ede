"""paper 003 sweeps (Cascone et al., CCR 2018) as independent `nevermiss sim sweep` points.

A `Grid` is one paper 003 sweep: traces × keys × N × Q × Q_len × W (the opp-sim groups of the
reference, §A.8: `haz-*` for the hazard detector of §4, `opp`/`opp-dim` for the locking scheme of §5).
`split` cuts grids into `SimPoint`s along the dimensions named in `by` (default: one point per trace
and key); each point is one run of `nevermiss sim sweep` over its slice, into its own directory
`OUT/points/<id>/` (`hazards.csv`, `lock.csv`, `max_n.csv`, `results.json`, `command.txt`,
`stdout.txt`, `stderr.txt`). The hazard detector computes every N in one pass, so hazard points are
never split along N; lock points may be (`by` containing `"n"`), and "maximum N" is then computed
here from the gathered lock rows exactly as the binary does (`max_n_rows`, opp-sim
`parse_max_budget`, reference §A.7).

`run_sweep` runs the points on any `cluster.TaskExecutor` and gathers the CSVs into three tables
(`hazards`, `lock`, `max_n`: lists of typed dicts, each row prefixed by its trace label) written as
`OUT/hazards.csv`, `OUT/lock.csv`, `OUT/max_n.csv`, plus `OUT/points.csv` (id, status, wall time,
message). Rows are sorted by (trace, key in grid order, then the numeric columns), so a Dask run and
an in-process run give byte-identical tables. A failed point (bad trace, exit code ≠ 0, timeout) is
listed in `SweepTables.failed` and `points.csv`; the other points' rows are kept.
"""

from __future__ import annotations

import csv
import json
import math
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

from . import binary as nmbin
from .cluster import TaskExecutor, TaskResult
from .errors import LabError, PointFailed, SpecError

#: The paper's flow keys in its order (opp-sim `keys_ccr`, reference §A.3).
PAPER_KEYS = ("global", "5tuple", "ipdst", "ipdst16", "ipsrc+ipdst")
#: Dimensions a grid may be split along.
DIMS = ("trace", "key", "q", "qlen", "w", "n")
#: A row of a gathered table: `trace` (the trace's label), then the binary's CSV columns, typed.
Row = dict[str, Any]


@dataclass(frozen=True)
class Trace:
    """A trace of a sweep: `label` names it in the tables; `spec` is the `--trace` argument (a pcap,
    `a.pcap+b.pcap`, or `synthetic:...`). Paths in it must exist on the worker that runs it."""

    label: str
    spec: str


@dataclass(frozen=True)
class Grid:
    """One sweep: every trace × key × N (× Q × Q_len × W for the locking scheme, §5).
    `hazards`/`lock` select the hazard detector (§4) and the locking scheme (§5)."""

    traces: tuple[Trace, ...]
    keys: tuple[str, ...] = PAPER_KEYS
    ns: tuple[int, ...] = tuple(range(1, 31))
    queues: tuple[int, ...] = (1, 4, 8, 16)
    qlens: tuple[str, ...] = ("inf", "10", "100")
    w_bits: tuple[int, ...] = (4,)
    hazards: bool = True
    lock: bool = True
    tolerances: tuple[float, ...] = (0.0, 0.001, 0.01)
    batch: int = 100_000
    max_batches: int | None = None
    extra: tuple[str, ...] = ()  # further `sim sweep` flags, e.g. ("--opp-sampling",)


@dataclass(frozen=True)
class SimPoint:
    """One run of `nevermiss sim sweep` over a slice of a grid (picklable: it runs on a worker)."""

    id: str
    trace: Trace
    keys: tuple[str, ...]
    ns: tuple[int, ...]
    queues: tuple[int, ...] = ()
    qlens: tuple[str, ...] = ()
    w_bits: tuple[int, ...] = ()
    hazards: bool = False
    lock: bool = False
    max_n_here: bool = True  # the point holds every N of its lock slice: trust its max_n.csv
    tolerances: tuple[float, ...] = (0.0, 0.001, 0.01)
    batch: int = 100_000
    max_batches: int | None = None
    extra: tuple[str, ...] = ()

    def args(self, out: Path, threads: int) -> list[str]:
        """The `nevermiss` arguments of this point, writing into `out`."""
        a = ["sim", "sweep", "-t", self.trace.spec, "-k", ",".join(self.keys), "-N", _ints(self.ns)]
        if self.lock:
            a += ["-Q", _ints(self.queues), "--qlen", ",".join(str(x) for x in self.qlens), "-W", _ints(self.w_bits)]
            a += ["--tolerances", ",".join(repr(t) for t in self.tolerances)]
        if not self.hazards:
            a.append("--no-hazards")
        if not self.lock:
            a.append("--no-lock")
        a += ["--batch", str(self.batch)]
        if self.max_batches is not None:
            a += ["--max-batches", str(self.max_batches)]
        a += [*self.extra, "--threads", str(threads), "-q", "-o", str(out)]
        return a


@dataclass(frozen=True)
class PointTask:
    """A point with where and how to run it."""

    point: SimPoint
    dir: str
    binary: str
    threads: int
    timeout_s: float


@dataclass
class SweepTables:
    """The gathered tables (sorted; see the module documentation) and the points that failed."""

    hazards: list[Row] = field(default_factory=list)
    lock: list[Row] = field(default_factory=list)
    max_n: list[Row] = field(default_factory=list)
    points: list[Row] = field(default_factory=list)  # id, trace, status, wall_s, message
    failed: list[Row] = field(default_factory=list)
    traces: dict[str, dict[str, Any]] = field(default_factory=dict)  # label → results.json "traces"


def _ints(v: Iterable[int]) -> str:
    return ",".join(str(int(x)) for x in v)


def _safe(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9.+_-]", "_", s)


def _unique(points: list[SimPoint], name: str, grid: int) -> str:
    """A point id (file-name safe), suffixed by its grid's index if an earlier grid has the name."""
    name = _safe(name)
    taken = {p.id for p in points}
    return name if name not in taken else f"{name}.g{grid}"


def split(grids: Sequence[Grid], by: Sequence[str] = ("trace", "key")) -> list[SimPoint]:
    """The points of `grids`: one per combination of the dimensions in `by` (from `DIMS`; `trace` is
    always split). Hazard rows get their own points when the lock slice is split along Q, Q_len, W or
    N (the detector does not depend on them). A `SpecError` if two grids overlap (same trace label,
    key and N for hazards, or same configuration for the lock) or a dimension is unknown."""
    bad = [d for d in by if d not in DIMS]
    if bad:
        raise SpecError(f"cannot split a sweep along {bad}: the dimensions are {list(DIMS)}")
    seen_h: set[tuple[str, str, int]] = set()
    seen_l: set[tuple[str, str, int, int, str, int]] = set()
    points: list[SimPoint] = []
    for gi, g in enumerate(grids):
        for t in g.traces:
            if g.hazards:
                for k in g.keys:
                    for n in g.ns:
                        if (t.label, k, n) in seen_h:
                            raise SpecError(f"two grids both compute hazards of {t.label}, key {k}, N={n}")
                        seen_h.add((t.label, k, n))
            if g.lock:
                for k in g.keys:
                    for n in g.ns:
                        for q in g.queues:
                            for ql in g.qlens:
                                for w in g.w_bits:
                                    c = (t.label, k, n, q, ql, w)
                                    if c in seen_l:
                                        raise SpecError(f"two grids both run the locking scheme for {c}")
                                    seen_l.add(c)
            lock_split = any(d in by for d in ("q", "qlen", "w", "n"))
            key_groups = [(k,) for k in g.keys] if "key" in by else [tuple(g.keys)]
            for keys in key_groups:
                ktag = "+".join(keys) if "key" in by else "keys"
                common = dict(trace=t, keys=keys, tolerances=g.tolerances, batch=g.batch,
                              max_batches=g.max_batches, extra=g.extra)
                if g.hazards and (lock_split or not g.lock):
                    points.append(SimPoint(id=_unique(points, f"{t.label}.haz.{ktag}", gi), ns=g.ns, hazards=True,
                                           **common))  # type: ignore[arg-type]
                if g.lock:
                    qs = [(q,) for q in g.queues] if "q" in by else [tuple(g.queues)]
                    qls = [(x,) for x in g.qlens] if "qlen" in by else [tuple(g.qlens)]
                    ws = [(w,) for w in g.w_bits] if "w" in by else [tuple(g.w_bits)]
                    nss = [(n,) for n in g.ns] if "n" in by else [tuple(g.ns)]
                    for q in qs:
                        for ql in qls:
                            for w in ws:
                                for ns in nss:
                                    tag = ".".join(x for x in [
                                        ktag,
                                        f"q{'-'.join(map(str, q))}" if "q" in by else "",
                                        f"ql{'-'.join(map(str, ql))}" if "qlen" in by else "",
                                        f"w{'-'.join(map(str, w))}" if "w" in by else "",
                                        f"n{ns[0]}" if "n" in by else "",
                                    ] if x)
                                    points.append(SimPoint(
                                        id=_unique(points, f"{t.label}.lock.{tag}", gi), ns=ns, queues=q,
                                        qlens=tuple(str(x) for x in ql), w_bits=w, lock=True,
                                        hazards=g.hazards and not lock_split, max_n_here="n" not in by,
                                        **common,  # type: ignore[arg-type]
                                    ))
    return points


def _typed(s: str) -> Any:
    """A CSV cell as the binary wrote it → bool, int, float, None (empty) or str (`inf`, keys)."""
    if s == "":
        return None
    if s in ("true", "false"):
        return s == "true"
    if re.fullmatch(r"-?\d+", s):
        return int(s)
    if s not in ("inf", "-inf", "nan") and re.fullmatch(r"-?[\d.]+([eE][-+]?\d+)?", s):
        try:
            return float(s)
        except ValueError:
            return s
    return s


def _text(v: Any) -> str:
    """A typed cell back to CSV text (deterministic)."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v)
    return str(v)


def read_csv(path: Path) -> list[Row]:
    """A CSV the binary wrote, as typed dicts (see `_typed`)."""
    with path.open(newline="") as f:
        return [{k: _typed(v) for k, v in r.items()} for r in csv.DictReader(f)]


def run_point(task: PointTask) -> dict[str, Any]:
    """Runs one point into its directory and returns its rows (`hazards`, `lock`, `max_n`, each
    prefixed by the trace label) and the trace statistics; raises `PointFailed` (exit code, stderr)
    if the binary fails or its outputs are unreadable. Runs on the worker."""
    p, d = task.point, Path(task.dir)
    d.mkdir(parents=True, exist_ok=True)
    for old in ("hazards.csv", "lock.csv", "max_n.csv", "results.json"):
        (d / old).unlink(missing_ok=True)
    args = p.args(d, task.threads)
    (d / "command.txt").write_text(" ".join(["nevermiss", *args]) + "\n")
    t0 = time.monotonic()
    try:
        done = nmbin.run(args, binary=Path(task.binary), timeout=task.timeout_s)
    except PointFailed as e:
        (d / "stderr.txt").write_text(e.stderr)
        raise PointFailed(f"point {p.id} (trace {p.trace.label}): {e}", exit_code=e.exit_code, stderr=e.stderr) from e
    (d / "stdout.txt").write_text(done.stdout)
    (d / "stderr.txt").write_text(done.stderr)
    out: dict[str, Any] = {"id": p.id, "wall_s": round(time.monotonic() - t0, 3)}
    try:
        for name in ("hazards", "lock", "max_n"):
            f = d / f"{name}.csv"
            rows = read_csv(f) if f.exists() else []
            if name == "max_n" and not p.max_n_here:
                rows = []
            out[name] = [{"trace": p.trace.label, **r} for r in rows]
        results = json.loads((d / "results.json").read_text())
        out["traces"] = results.get("traces", [])
    except (OSError, ValueError) as e:
        raise PointFailed(f"point {p.id}: unreadable output in {d}: {e}") from e
    return out


def _num(v: Any) -> float:
    """Sort key of a cell: numbers as themselves, `inf` as infinity, missing as -1."""
    if v is None:
        return -1.0
    if isinstance(v, (int, float)):
        return float(v)
    try:
        return float(v)
    except ValueError:
        return math.inf


def sort_rows(rows: list[Row], traces: Sequence[str], keys: Sequence[str]) -> list[Row]:
    """Rows in a deterministic order: trace and key in the given order (unknown ones after, by
    name), then N, Q, Q_len (inf last), W, drop tolerance."""

    def order(r: Row) -> tuple[Any, ...]:
        t, k = r.get("trace"), r.get("key")
        return (
            traces.index(t) if t in traces else len(traces), str(t),
            keys.index(k) if k in keys else len(keys), str(k),
            _num(r.get("n")), _num(r.get("q")), _num(r.get("qlen")), _num(r.get("w_bits")),
            _num(r.get("drop_tolerance")),
        )

    return sorted(rows, key=order)


def max_n_rows(lock: list[Row], tolerances: Sequence[float]) -> list[Row]:
    """"Maximum N for a target throughput" (opp-sim `parse_max_budget`, reference §A.7; the binary's
    `max_n_rows`): per trace, key, Q, finite Q_len and W, and per tolerance, the largest N whose
    max-over-batches drop fraction is ≤ the tolerance (smaller N need not pass), with its latency
    and queue columns; `max_n` None when no N passes."""
    groups: list[tuple[Any, ...]] = []
    for r in lock:
        if isinstance(r["qlen"], int):
            g = (r["trace"], r["key"], r["q"], r["qlen"], r["w_bits"])
            if g not in groups:
                groups.append(g)
    out: list[Row] = []
    for trace, key, q, ql, w in groups:
        cand = [r for r in lock if (r["trace"], r["key"], r["q"], r["qlen"], r["w_bits"]) == (trace, key, q, ql, w)]
        for tol in tolerances:
            ok = [r for r in cand if r["drop_max"] is not None and r["drop_max"] <= tol]
            best = max(ok, key=lambda r: r["n"]) if ok else None
            out.append({
                "trace": trace, "key": key, "q": q, "qlen": ql, "w_bits": w,
                "target_throughput": 1.0 - tol, "drop_tolerance": tol,
                "max_n": best["n"] if best else None,
                "latency_p99_max": best["latency_p99_max"] if best else None,
                "queue_max_p99_max": best["queue_max_p99_max"] if best else None,
                "queue_sum_p99_max": best["queue_sum_p99_max"] if best else None,
            })
    return out


def write_table(rows: list[Row], path: Path) -> Path:
    """Writes rows (dicts with the same columns) as CSV; an empty table is a header-less file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        if rows:
            w = csv.writer(f, lineterminator="\n")
            cols = list(rows[0])
            w.writerow(cols)
            for r in rows:
                w.writerow([_text(r.get(c)) for c in cols])
    return path


def run_sweep(
    grids: Sequence[Grid],
    out: Path,
    executor: TaskExecutor,
    *,
    binary: Path | None = None,
    by: Sequence[str] = ("trace", "key"),
    timeout_s: float = 3600.0,
    progress: bool = True,
    desc: str = "sim sweep",
) -> SweepTables:
    """Runs every point of `grids` (see `split`) on `executor` into `out/points/<id>/`, gathers and
    writes the tables (see the module documentation) and returns them. Never raises for a failed
    point; a `LabError` only if the binary is missing or `grids` are inconsistent."""
    exe = nmbin.find_binary(binary)
    points = split(grids, by)
    threads = max(1, executor.threads_per_task)
    tasks = [PointTask(p, str((out / "points" / p.id).resolve()), str(exe), threads, timeout_s) for p in points]
    results: list[TaskResult[dict[str, Any]]] = executor.map(run_point, tasks, desc=desc, progress=progress)
    trace_order = list(dict.fromkeys(t.label for g in grids for t in g.traces))
    key_order = list(dict.fromkeys([*PAPER_KEYS, *(k for g in grids for k in g.keys)]))
    tables = SweepTables()
    lock_for_max_n: list[Row] = []
    tolerances: list[float] = []
    for p, r in zip(points, results):
        status: Row = {"id": p.id, "trace": p.trace.label, "status": "ok" if r.ok else "failed",
                       "exit_code": r.exit_code if not r.ok else 0,
                       "wall_s": (r.value or {}).get("wall_s"), "message": r.error or ""}
        tables.points.append(status)
        if not r.ok or r.value is None:
            tables.failed.append(status)
            continue
        v = r.value
        tables.hazards += v["hazards"]
        tables.lock += v["lock"]
        tables.max_n += v["max_n"]
        if not p.max_n_here:
            lock_for_max_n += v["lock"]
            tolerances += [t for t in p.tolerances if t not in tolerances]
        for t in v.get("traces", []):
            tables.traces.setdefault(p.trace.label, t)
    if lock_for_max_n:
        tables.max_n += max_n_rows(lock_for_max_n, tolerances)
    tables.hazards = sort_rows(tables.hazards, trace_order, key_order)
    tables.lock = sort_rows(tables.lock, trace_order, key_order)
    tables.max_n = sort_rows(tables.max_n, trace_order, key_order)
    out.mkdir(parents=True, exist_ok=True)
    write_table(tables.hazards, out / "hazards.csv")
    write_table(tables.lock, out / "lock.csv")
    write_table(tables.max_n, out / "max_n.csv")
    write_table(tables.points, out / "points.csv")
    return tables


def rows(table: list[Row], **match: Any) -> list[Row]:
    """The rows of `table` whose columns equal every `match` value (Q_len compared as text)."""
    def eq(a: Any, b: Any) -> bool:
        return a == b or str(a) == str(b)

    return [r for r in table if all(eq(r.get(k), v) for k, v in match.items())]


def one(table: list[Row], column: str, **match: Any) -> Any:
    """`column` of the single row matching `match`, or None when there is none."""
    found = rows(table, **match)
    if len(found) > 1:
        raise LabError(f"{len(found)} rows match {match}")
    return found[0].get(column) if found else None


def trace_info(trace: Trace, binary: Path | None = None, timeout_s: float = 600.0) -> dict[str, Any]:
    """`nevermiss sim info` of a trace (the paper's Table 1 quantities): packets kept, mean IP length,
    mean read cycles, the global-key FDH plateau 1/mean(ceil(len/80)) (reference §A.5) and distinct
    keys per 1M packets (`distinct_per`, the window the binary used, and `distinct`: key → count).
    Raises `PointFailed` if the binary fails, `LabError` if its output cannot be read."""
    out = nmbin.run(["sim", "info", "-t", trace.spec], binary=nmbin.find_binary(binary), timeout=timeout_s).stdout
    info: dict[str, Any] = {"trace": trace.label, "spec": trace.spec, "distinct": {}}
    m = re.search(r"kept (\d+)", out)
    m2 = re.search(r"mean IP length ([\d.]+) B\s+mean read cycles ([\d.]+)\s+"
                   r"global-key FDH plateau 1/mean ([\d.]+)", out)
    m3 = re.search(r"distinct keys per (\d+) packets", out)
    if not (m and m2 and m3):
        raise LabError(f"`nevermiss sim info -t {trace.spec}`: unexpected output:\n{out}")
    info.update(kept=int(m.group(1)), mean_ip_len=float(m2.group(1)), mean_read_cycles=float(m2.group(2)),
                plateau=float(m2.group(3)), distinct_per=int(m3.group(1)))
    for line in out[m3.end():].splitlines():
        k = re.match(r"\s+(\S+)\s+([\d.]+)\s+\(whole trace (\d+)\)", line)
        if k:
            info["distinct"][k.group(1)] = float(k.group(2))
    return info
