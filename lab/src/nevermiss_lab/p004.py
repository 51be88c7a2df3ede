"""`nevermiss-lab reproduce 004`: paper 004's automatic component models on nevermiss.

For each component of `components.COMPONENTS`, programs scaled in one parameter are measured
with `nevermiss bench component` against the generated baseline (Eq. 4: median TSC ticks per
packet minus the baseline's, in ns), a model is fitted automatically (`models.fit_best`, up to
2 parts for the table-size components, whose cache boundaries paper 004 found), and the cost
of composed programs is predicted from the component models and compared with their measured
cost. Writes `report.md`, one figure per component, `models.json` and the raw outputs.

The insertion-rate component is measured by its mean cost per packet instead of the median: a
run's median is a lookup's as long as fewer than half its packets insert, so it would not see
the inserts at all. The mean is taken from the bench's HdrHistogram logs (one interval per run),
over the packets within `MEAN_CAP` × the run's median (slower ones are the process being
descheduled, milliseconds on a shared machine, and are counted), program minus baseline per run
pair, median over the pairs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from . import components as C
from . import models as M
from . import plots
from .errors import LabError, PointFailed
from .hdr import capped_mean, read_log
from .report import table
from .cluster import InProcessExecutor, TaskExecutor
from .runner import PointTask, point_status, run_tasks

TABLE_COMPONENTS = {"tables", "exact-entries", "lpm-entries", "ternary-entries", "applies", "action-data",
                    "key-width", "insertion-rate"}
#: Components measured by the mean cost per packet (see the module documentation).
MEAN_COMPONENTS = {"insertion-rate"}
#: Packets slower than this many times their run's median are left out of a mean.
MEAN_CAP = 100.0
#: Components whose model may have two parts (table sizes: cache levels; key width: the
#: switch's 64-bit fast path).
SPLIT_COMPONENTS = {"exact-entries", "lpm-entries", "ternary-entries", "key-width"}
#: Axis labels of the parameters.
X_LABELS = {
    "key_width": "exact key width [bits]",
    "inserts_per_10k": f"insertions per {C.INSERT_RATE_PER:,} phase-2 packets (r = {C.INSERT_RATE_PER:,} / x)",
}


def _task(out: Path, exe: Path, name: str, p: C.Params, baseline: Path, quick: bool) -> PointTask:
    d = out / "points" / name
    src = out / "programs"
    src.mkdir(parents=True, exist_ok=True)
    prog, ent = src / f"{name}.p4", src / f"{name}.entries"
    count = 20_000 if quick else 200_000
    count = max(count, p.entries if p.tables and not p.add_on_miss else 0)
    prog.write_text(C.program(p, count))
    ent.write_text(C.entries(p))
    # Means move more from run to run than medians: more run pairs for them.
    runs = (5 if quick else 9) if p.add_on_miss else (3 if quick else 5)
    argv = [str(exe), "bench", "component", str(prog), "--entries", str(ent), "--baseline", str(baseline),
            "--gen", C.gen_spec(p, count), "--runs", str(runs),
            "--mode", "latency", "--no-stages", "--json", str(d / "out.json"), "--hdr-dir", str(d / "hdr"), "-q"]
    return PointTask(name, argv, str(d), 600.0 if quick else 3600.0, {"program": name}, 0)


def _report(out: Path, name: str) -> dict[str, Any] | None:
    d = out / "points" / name
    st = point_status(d)
    if not st or st.get("status") != "ok":
        return None
    rep: dict[str, Any] = json.loads((d / "out.json").read_text())
    return rep


def _cost_ns(out: Path, name: str) -> float | None:
    """Eq. 4 on medians, ns."""
    rep = _report(out, name)
    v = rep.get("eq4_ns") if rep else None
    return float(v["median"]) if v else None


def mean_cost_ns(out: Path, name: str) -> tuple[float, int] | None:
    """The mean cost per packet over the baseline, ns: per run pair the program's mean minus
    the baseline's (each over its packets within `MEAN_CAP` × the run's median), the median
    over the pairs; and the packets left out (all runs, both sides)."""
    rep = _report(out, name)
    if rep is None:
        return None
    d = out / "points" / name / "hdr"
    prog, base = read_log(d / "program.packet.hlog"), read_log(d / "baseline.packet.hlog")
    if len(prog.intervals) != len(base.intervals):
        raise LabError(f"{d}: {len(prog.intervals)} program runs but {len(base.intervals)} baseline runs")
    diffs, dropped = [], 0
    for (_, hp), (_, hb) in zip(prog.intervals, base.intervals):
        mp, dp = capped_mean(hp, MEAN_CAP)
        mb, db = capped_mean(hb, MEAN_CAP)
        diffs.append(mp - mb)
        dropped += dp + db
    return float(np.median(diffs)) * 1e9 / rep["machine"]["tsc_hz"], dropped


def component_cost_ns(out: Path, comp: str, name: str) -> float | None:
    """The cost a component's model is fitted to: the mean for `MEAN_COMPONENTS`, else Eq. 4."""
    if comp in MEAN_COMPONENTS:
        v = mean_cost_ns(out, name)
        return v[0] if v else None
    return _cost_ns(out, name)


def _detail_sections(runs: Path, sweep: dict[str, list[tuple[int, str]]], fitted: dict[str, M.Model]) -> list[str]:
    """The report's tables of the key-width and insertion-rate points."""
    out: list[str] = []
    kw = []
    for x, name in sweep.get("key-width", []):
        rep = _report(runs, name)
        kw.append([x, C.gen_spec(C.params_for("key-width", x), 1).split("field=")[1],
                   rep["program"]["table_entries"] if rep else None, _cost_ns(runs, name)])
    if kw:
        out += [
            "\n### Key width\n\n"
            f"One exact table of {C.KEY_WIDTH_ENTRIES} entries keyed on a `bit<W>` field of a header parsed after "
            "the result header (bytes 47 on); the generator writes the key into the field's low-order bytes "
            "(`field=OFFSET:WIDTH`), so every packet hits. Cost: Eq. 4, median of runs.\n",
            table(["key bits", "generator field", "entries", "Eq. 4 ns"], kw),
        ]
    ir = []
    for x, name in sweep.get("insertion-rate", []):
        p = C.params_for("insertion-rate", x)
        rep = _report(runs, name)
        mean = mean_cost_ns(runs, name)
        ir.append([x, C.insert_every(p) or "none",
                   rep["program"]["table_entries"] - p.entries if rep else None,
                   mean[0] if mean else None, _cost_ns(runs, name), mean[1] if mean else None])
    if ir:
        out += [
            "\n### Insertion rate\n\n"
            f"An add-on-miss table (PNA `add_entry` in its default action) with the m = {C.INSERT_RATE_ENTRIES} "
            "phase-1 keys preloaded (phase 1 hits), then every r-th phase-2 packet a key never seen, "
            f"x = {C.INSERT_RATE_PER:,} / r insertions per {C.INSERT_RATE_PER:,} phase-2 packets. The model is "
            "fitted to the mean cost per packet (program minus baseline per run pair, median over the pairs; "
            f"packets slower than {MEAN_CAP:g}× their run's median left out as descheduled); the median "
            "(Eq. 4) is shown beside it: it is a lookup's until half the packets insert. Keys inserted are "
            "the program's table entries after a run minus the m preloaded.\n",
            table(["x per 10^4", "r", "keys inserted", "mean ns", "median ns (Eq. 4)", "packets left out"], ir),
        ]
        m = fitted.get("insertion-rate")
        if m is not None and len(m.parts) == 1 and m.parts[0].template == "lin":
            slope, icpt = m.parts[0].params[0], m.parts[0].params[1]
            out.append(
                f"\nFrom the linear model: one insertion costs {slope * C.INSERT_RATE_PER:.0f} ns more than "
                f"the lookup it replaces (slope × {C.INSERT_RATE_PER:,}), on top of {icpt:.0f} ns per packet "
                "for the add-on-miss table itself.\n"
            )
    return out


def reproduce(out_dir: Path, quick: bool, binary: Path, executor: TaskExecutor | None = None,
              progress: bool = True) -> Path:
    """Measures, fits, predicts; returns the report's path."""
    runs = out_dir / "runs"
    baseline = runs / "programs" / "baseline.p4"
    baseline.parent.mkdir(parents=True, exist_ok=True)
    baseline.write_text(C.program(C.Params()))
    tasks: list[PointTask] = []
    sweep: dict[str, list[tuple[int, str]]] = {}
    for comp, (_, full, quick_vals, _) in C.COMPONENTS.items():
        for x in quick_vals if quick else full:
            name = f"{comp}-{x}"
            sweep.setdefault(comp, []).append((x, name))
            tasks.append(_task(runs, binary, name, C.params_for(comp, x), baseline, quick))
    composed = C.composed_programs()
    for c in composed:
        tasks.append(_task(runs, binary, f"composed-{c.name}", c.params, baseline, quick))
    todo = [t for t in tasks if (point_status(Path(t.dir)) or {}).get("status") != "ok"]
    statuses = run_tasks(executor or InProcessExecutor(), todo, "paper 004 components", progress)
    failed = [st for st in statuses if st["status"] != "ok"]

    fitted: dict[str, M.Model] = {}
    rows = []
    pngs = []
    for comp, pts in sweep.items():
        _, _, _, log_x = C.COMPONENTS[comp]
        xy = [(x, component_cost_ns(runs, comp, n)) for x, n in pts]
        xy = [(x, y) for x, y in xy if y is not None]
        if len(xy) < 2:
            rows.append([comp, len(xy), None, None, None, None, "too few points"])
            continue
        xs = np.array([x for x, _ in xy], float)
        ys = np.array([y for _, y in xy], float)
        xfit = np.log10(xs) if log_x else xs
        parts = 2 if comp in SPLIT_COMPONENTS and len(xs) >= 5 else 1
        try:
            m = M.fit_best(xfit, ys, max_parts=parts, templates=["const", "lin", "quad", "log_np"] if not log_x else ["const", "lin", "quad"])
        except ValueError:
            rows.append([comp, len(xy), None, None, None, None, "no template fitted"])
            continue
        m.extra["log_x"] = log_x
        fitted[comp] = m
        metric = "mean" if comp in MEAN_COMPONENTS else "median"
        rows.append([comp, len(xy), metric, m.error * 100, m.rank, len(m.parts), m.describe()])
        fig, ax = plots.figure()
        style = plots.styles()
        what = f"mean ≤ {MEAN_CAP:g}× median, median of run pairs" if metric == "mean" else "Eq. 4, median of runs"
        ax.plot(xs, ys, linestyle="none", label=f"measured ({what})", **{k: v for k, v in next(style).items() if k != "linestyle"})
        # A linear fit over several decades (insertions per 10^4 packets) is drawn on a symlog
        # axis, with the model sampled densely near the small values.
        wide = not log_x and xs.max() >= 1000 * max(xs[xs > 0].min(initial=1.0), 1.0)
        grid = np.linspace(xfit.min(), xfit.max(), 200)
        if wide:
            grid = np.unique(np.concatenate([grid, np.geomspace(max(xs.min(), 0.1), xs.max(), 200)]))
        ax.plot(10**grid if log_x else grid, m.predict(grid), label=f"model η={m.error * 100:.1f}% ψ={m.rank:g}", markevery=0.1, **next(style))
        if log_x:
            ax.set_xscale("log")
        elif wide:
            ax.set_xscale("symlog", linthresh=1.0)
        pname = C.COMPONENTS[comp][0]
        ax.set_xlabel(X_LABELS.get(pname, pname.replace("_", " ")))
        ax.set_ylabel("cost per packet over the baseline [ns]")
        ax.set_title(f"{comp}: measured and fitted (paper 004's method)", fontsize=9)
        ax.legend(fontsize=8)
        count = 20_000 if quick else 200_000
        pngs.append(plots.save(fig, out_dir / f"model-{comp}", fixed=(
            f"every other parameter at the component's default; {count:,}+ generated packets per run, program and "
            "baseline runs alternating, one core, batch 1; paper 004 publishes t4p4s models in CPU cycles "
            "of its testbed, not values to set beside these"))[0])

    def model_at(comp: str, x: int) -> float | None:
        m = fitted.get(comp)
        if m is None:
            return None
        v = np.log10(x) if m.extra.get("log_x") else x
        return float(m.predict(v)[0])

    pred_rows = []
    errors = []
    for c in composed:
        measured = _cost_ns(runs, f"composed-{c.name}")
        terms = [model_at(comp, x) for comp, x in c.parts.items()]
        n_tab = sum(1 for comp in c.parts if comp in TABLE_COMPONENTS)
        one_table = model_at("tables", 1)
        pred = None
        if all(t is not None for t in terms) and (n_tab <= 1 or one_table is not None):
            pred = sum(t for t in terms if t is not None) - max(n_tab - 1, 0) * (one_table or 0.0)
        err = abs(pred - measured) / abs(measured) if pred is not None and measured else None
        if err is not None:
            errors.append(err)
        pred_rows.append([c.name, ", ".join(f"{k}={v}" for k, v in c.parts.items()), measured, pred,
                          None if err is None else err * 100])
    detail = _detail_sections(runs, sweep, fitted)
    (out_dir / "models.json").write_text(json.dumps({k: m.to_dict() for k, m in fitted.items()}, indent=1))
    lines = [
        "# paper 004 on nevermiss: automatic performance models of P4 components\n",
        f"{'Quick' if quick else 'Full'} run: every program measured with `nevermiss bench component` "
        "(latency mode, batch 1, TSC ticks per packet, median over runs, program and baseline alternating) "
        "against a generated baseline of the same skeleton; costs are Eq. 4 in ns. Models are fitted "
        "automatically (templates const/lin/quad/log, sMAPE, γ = 1e-5, κ = 0.005, κ_rel = 0.05; the "
        "table-size components may split in two parts, on log10 of the entry count, and the key width "
        "at its 64-bit boundary). The insertion-rate component is fitted to the mean cost per packet "
        f"(packets within {MEAN_CAP:g}× their run's median; see below), all others to medians.\n",
        "## Component models\n",
        table(["component", "points", "cost", "sMAPE %", "ψ", "parts", "model"], rows),
        *detail,
        "\n## Composed programs: predicted from the components vs measured\n",
        "Prediction: the sum of each component's model at its value, minus one single-table cost "
        "(`tables` at 1) for every table-carrying component beyond the first (each of their "
        "programs has a table of its own).\n",
        table(["program", "components", "measured ns", "predicted ns", "error %"], pred_rows),
        f"\nMedian prediction error: {np.median(errors) * 100:.1f} %\n" if errors else "\n",
        "\n## Beside the paper\n\n"
        "paper 004 modelled T4P4S (DPDK) and found the table-entry cost flat until the table outgrew a "
        "cache level, then a step (its piecewise fits with splitting points). nevermiss (its compiled "
        "engine by default) pays a near-constant cost per table, apply, header and field write, so most "
        "of its models are linear in the count; the table-size model here: "
        + (fitted["exact-entries"].describe() if "exact-entries" in fitted else "not fitted")
        + " (x = log10 of the entries: a 2-split whose first part is flat is the paper's cache-boundary "
        "shape; the quick run stops at 10^4 entries, the full run goes to 10^6).\n",
        "\n## Figures\n",
        *[f"![{p.stem}]({p.name})\n" for p in pngs],
    ]
    if failed:
        lines.append("\n## Failed points\n\n" + "\n".join(f"- {st['id']}: {st['message']}" for st in failed) + "\n")
    report = out_dir / "report.md"
    report.write_text("\n".join(lines))
    if failed and not fitted:
        raise PointFailed(f"all {len(failed)} component programs failed; first: {failed[0]['message']}")
    return report
