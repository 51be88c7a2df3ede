"""Figures: matplotlib, written as PNG and PDF, readable in black and white (series differ by line
style and marker, not only by colour)."""

from __future__ import annotations

from itertools import cycle
from pathlib import Path
from typing import Iterator

import matplotlib

matplotlib.use("Agg")  # no display: figures are files
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

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


def figure(width: float = 6.0, height: float = 3.6) -> tuple[Figure, plt.Axes]:
    """A new figure with one axes, the lab's size and grid."""
    fig, ax = plt.subplots(figsize=(width, height))
    ax.grid(True, which="both", color="0.85", linewidth=0.6)
    return fig, ax


def save(fig: Figure, stem: Path) -> list[Path]:
    """Writes `stem.png` and `stem.pdf` (directories created), closes the figure, returns both paths."""
    stem.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    paths = [stem.with_suffix(".png"), stem.with_suffix(".pdf")]
    for p in paths:
        fig.savefig(p, dpi=150)
    plt.close(fig)
    return paths


def percentile_axis(ax: plt.Axes) -> None:
    """A log x axis of 1 / (1 − percentile) labelled 0 %, 90 %, 99 %, … (HdrHistogram's
    percentile-distribution plots, as papers/002 draws them); call after plotting."""
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
