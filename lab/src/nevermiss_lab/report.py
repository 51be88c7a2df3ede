"""Markdown reports: tables of measured values beside the papers' published ones."""

from __future__ import annotations

from typing import Sequence


def fmt(v: object, digits: int = 3) -> str:
    """A table cell: floats with `digits` significant digits, None as an em dash."""
    if v is None:
        return "—"
    if isinstance(v, float):
        if v != v:  # NaN
            return "—"
        return f"{v:.{digits}g}" if abs(v) < 10 ** digits else f"{v:,.0f}"
    if isinstance(v, int):
        return f"{v:,}" if abs(v) >= 10_000 else str(v)
    return str(v)


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A GitHub markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        lines.append("| " + " | ".join(fmt(c) for c in r) + " |")
    return "\n".join(lines) + "\n"


def ratio(measured: float | None, published: float | None) -> float | None:
    """measured / published, or None when either is missing or the published value is 0."""
    if measured is None or published is None or published == 0:
        return None
    return measured / published
