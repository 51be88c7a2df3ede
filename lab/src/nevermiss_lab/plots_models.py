"""Figures of fitted performance models (paper 004; modeling.md §B.5): the model over the measured
points with one labelled curve per part, and the per-point relative error.

The model's output may be clipped for drawing (the framework clips to [0, 14.88] Mpps for
throughput and [0, 2·max(y)] for cycles per packet, §B.2); its error is always that of the
unclipped function."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from .models import Model, relative_errors
from .plots import figure, save, styles

#: 10 GbE line rate at 64 B: the framework's clipping maximum for throughput models (§B.2).
LINE_RATE_MPPS = 14.88


def clip_range(kind: str, y: Sequence[float] | np.ndarray) -> tuple[float, float]:
    """The framework's drawing range: 'throughput' → [0, 14.88] Mpps, 'cycles' → [0, 2·max(y)]."""
    if kind == "throughput":
        return (0.0, LINE_RATE_MPPS)
    if kind == "cycles":
        return (0.0, 2.0 * float(np.max(y)))
    raise ValueError(f"unknown clip kind {kind!r} (throughput, cycles)")


def _grid(lo: float, hi: float, log_x: bool, n: int) -> np.ndarray:
    if hi <= lo:
        return np.array([lo])
    if log_x and lo > 0:
        return np.geomspace(lo, hi, n)
    return np.linspace(lo, hi, n)


def model_figure(
    x: Sequence[float] | np.ndarray,
    y: Sequence[float] | np.ndarray,
    model: Model,
    *,
    log_x: bool = False,
    clip: tuple[float, float] | None = None,
    xlabel: str = "x",
    ylabel: str = "y",
    title: str | None = None,
    points_label: str = "measured",
    grid_points: int = 200,
) -> tuple[Figure, Axes]:
    """Measured points (markers) and each part of `model` drawn over its own domain, labelled
    `split i/n [x_min, x_max]: <name> <formula> η ψ` (one part: `model.describe()`); dotted
    vertical lines where parts meet; the title line gives the combined η and ψ."""
    fig, ax = figure()
    style = styles()
    pt = next(style)
    ax.plot(np.asarray(x, float), np.asarray(y, float), linestyle="none", marker=pt["marker"], color=pt["color"], label=points_label)
    n = model.n_parts
    for i, part in enumerate(model.parts):
        g = _grid(part.x_min, part.x_max, log_x, grid_points)
        v = part.predict(g)
        if clip is not None:
            v = np.clip(v, *clip)
        st = next(style)
        label = part.describe() if n == 1 else f"split {i + 1}/{n} [{part.x_min:.4g}, {part.x_max:.4g}]: {part.describe()}"
        ax.plot(g, v, linestyle=st["linestyle"], color=st["color"], label=label)
    for b in model.splits():
        ax.axvline(b, color="0.5", linestyle=":", linewidth=0.8)
    if log_x:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    head = f"{title} — " if title else ""
    err = f"η={model.error * 100:.2f}%" if model.metric in ("sMAPE", "MAPE") else f"η={model.error:.4g}"
    ax.set_title(f"{head}{n}-part model, {err}, ψ={model.rank:.3g}", fontsize=9)
    ax.legend(fontsize=6)
    return fig, ax


def error_figure(
    x: Sequence[float] | np.ndarray,
    y: Sequence[float] | np.ndarray,
    model: Model,
    *,
    log_x: bool = False,
    xlabel: str = "x",
    title: str | None = None,
) -> tuple[Figure, Axes]:
    """Per-point relative error |y − ŷ| / |y| in % of the unclipped model (points with y = 0 are
    left out); the legend gives the combined error (d=…)."""
    fig, ax = figure()
    st = next(styles())
    xa = np.asarray(x, float)
    rel = relative_errors(y, model.predict(xa))
    names = "+".join(p.template for p in model.parts)
    ax.plot(xa, rel, label=f"{names} d={model.error * 100:.2f}%", **st)
    if log_x:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("relative error [%]")
    if title:
        ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    return fig, ax


def plot_model(
    x: Sequence[float] | np.ndarray,
    y: Sequence[float] | np.ndarray,
    model: Model,
    stem: Path,
    *,
    log_x: bool = False,
    clip: tuple[float, float] | None = None,
    xlabel: str = "x",
    ylabel: str = "y",
    title: str | None = None,
    fixed: str = "",
) -> list[Path]:
    """Writes `stem.{png,pdf}` (`model_figure`) and `stem-error.{png,pdf}` (`error_figure`),
    captioned with `fixed` (what the measurements held fixed); returns the four paths."""
    fig, _ = model_figure(x, y, model, log_x=log_x, clip=clip, xlabel=xlabel, ylabel=ylabel, title=title)
    held = fixed or "the measurements behind the model"
    paths = save(fig, stem, fixed=held)
    fig, _ = error_figure(x, y, model, log_x=log_x, xlabel=xlabel, title=title)
    paths += save(fig, stem.with_name(stem.name + "-error"), fixed=held)
    return paths
