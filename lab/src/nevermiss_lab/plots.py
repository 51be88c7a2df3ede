"""Figures: matplotlib, written as PNG and PDF, readable in black and white (series differ by line
style and marker, not only by colour), every axis with its unit, a caption naming what was held
fixed, the machine, the date and the build; where a paper has the same figure, its values are
drawn beside ours as hollow markers (`paper_style`)."""

from __future__ import annotations

from itertools import cycle
from pathlib import Path
from typing import Iterator

import matplotlib

matplotlib.use("Agg")  # no display: figures are files
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator  # noqa: E402

__all__ = ["NullLocator", "figure", "log_ticks", "paper_style", "percentile_axis", "plt", "save", "styles"]

LINESTYLES = ["-", "--", ":", "-."]
MARKERS = ["o", "s", "^", "v", "D", "x", "+", "*"]
GRAYS = ["0.0", "0.35", "0.55", "0.7"]


def styles() -> Iterator[dict[str, str]]:
    """Endless distinct series styles: line style × marker × gray level (black-and-white safe)."""
    i = 0
    for _ in cycle([0]):
        yield {
            "linestyle": LINESTYLES[i % len(LINESTYLES)],
            "marker": MARKERS[i % len(MARKERS)],
            "color": GRAYS[(i // len(LINESTYLES)) % len(GRAYS)],
        }
        i += 1


def paper_style(color: str = "0.0", marker: str = "o") -> dict[str, object]:
    """How a paper's published values are drawn: hollow markers (white face) on a dotted line,
    so they read as "the paper's" beside the lab's filled ones in colour and in print."""
    return {"linestyle": ":", "marker": marker, "markerfacecolor": "white", "markeredgecolor": color,
            "color": color, "markersize": 6, "markeredgewidth": 1.2}


def figure(width: float = 6.0, height: float = 3.6) -> tuple[Figure, plt.Axes]:
    """A new figure with one axes, the lab's size and grid."""
    fig, ax = plt.subplots(figsize=(width, height))
    ax.grid(True, which="both", color="0.85", linewidth=0.6)
    return fig, ax


def save(fig: Figure, stem: Path, *, fixed: str) -> list[Path]:
    """Writes `stem.png` and `stem.pdf` (directories created) with a caption below the axes —
    `fixed` (what the figure held fixed), then the machine, the date and the nevermiss build
    (`provenance.caption`) — closes the figure, returns both paths."""
    from .provenance import caption

    stem.parent.mkdir(parents=True, exist_ok=True)
    text = caption(fixed)
    lines = text.count("\n") + 1
    height = fig.get_figheight()
    extra = 0.14 * lines + 0.08
    fig.set_figheight(height + extra)
    fig.text(0.01, 0.01, text, fontsize=6.5, color="0.25", va="bottom", ha="left", wrap=True)
    # Room for a suptitle above the axes, when the figure has one.
    top = 1.0 if getattr(fig, "_suptitle", None) is None else 1.0 - 0.35 / (height + extra)
    fig.tight_layout(rect=(0, extra / (height + extra), 1, top))
    paths = [stem.with_suffix(".png"), stem.with_suffix(".pdf")]
    for p in paths:
        fig.savefig(p, dpi=150)
    plt.close(fig)
    return paths


def percentile_axis(ax: plt.Axes) -> None:
    """A log x axis of 1 / (1 − percentile) labelled 0 %, 90 %, 99 %, … (HdrHistogram's
    percentile-distribution plots, as paper 002 draws them); call after plotting."""
    from matplotlib.ticker import NullFormatter, NullLocator

    ax.set_xscale("log")
    right = ax.get_xlim()[1]
    ticks, labels, k = [1.0], ["0%"], 1
    while 10.0**k <= right * 1.01:
        ticks.append(10.0**k)
        labels.append(f"{100 - 100 / 10**k:.{max(k - 2, 0)}f}%")
        k += 1
    ax.set_xticks(ticks)
    ax.set_xticklabels(labels)
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("percentile")


def log_ticks(ax: plt.Axes, axis: str = "y") -> None:
    """Labelled ticks at 1, 2 and 5 of every decade on a log (or symlog) axis, so that an axis
    spanning less than a decade still shows several values (matplotlib labels only the decades)."""
    fmt = FuncFormatter(lambda v, _: f"{v:g}")
    a = ax.yaxis if axis == "y" else ax.xaxis
    a.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    a.set_major_formatter(fmt)
    a.set_minor_locator(NullLocator())
