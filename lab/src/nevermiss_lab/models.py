"""Automatic performance models of P4 components (papers/004; facts in modeling.md §B.2–B.4).

A model is the best of a set of function templates fitted with `scipy.optimize.curve_fit`,
judged by an error metric (the framework's "sMAPE" = Σ|y−ŷ| / Σ(|y|+|ŷ|) by default) with a
preference for fewer parameters (rank ψ) when errors are within a margin; piecewise models
split the x range at points found by brute force (2 parts) or by the second-derivative
heuristic (3+ parts) and are judged by point-weighted averages of error and ψ.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
from scipy.optimize import OptimizeWarning, curve_fit

#: Parameters with |p| < γ are replaced by ±γ (sign kept, 0 → −γ): modeling.md §B.3.
GAMMA = 1e-5
#: Absolute margin κ of the comparison (0.5 percentage points): §B.3.
KAPPA = 0.005
#: Relative margin κ_rel: 0.05 in the framework's function signatures (0.005 in two of its
#: plot scripts; the paper may say 10 %): §B.3. Configurable on every call.
KAPPA_REL = 0.05


@dataclass(frozen=True)
class Template:
    """A function template: name, formula, f(x, *params), rank ψ (= parameter count)."""

    name: str
    formula: str
    f: Callable[..., Any]
    rank: int


def _poly(n: int) -> Callable[..., Any]:
    def f(x: Any, *p: float) -> Any:
        return sum(p[i] * x**i for i in range(n + 1))

    return f


def _inv(g: Callable[..., Any]) -> Callable[..., Any]:
    def f(x: Any, a: float, *p: float) -> Any:
        return a / g(x, *p)

    return f


POLY_NAMES = ["const", "lin", "quad", "cubic", "poly_4", "poly_5"]
POLY_FORMULAS = ["a", "a+b·x", "a+b·x+c·x²", "a+b·x+c·x²+d·x³", "poly₄(x)", "poly₅(x)"]


def _templates() -> dict[str, Template]:
    t: dict[str, Template] = {}
    for n, (name, formula) in enumerate(zip(POLY_NAMES, POLY_FORMULAS)):
        t[name] = Template(name, formula, _poly(n), n + 1)
        t["inv_" + name] = Template("inv_" + name, f"a / ({formula})", _inv(_poly(n)), n + 2)

    def exp_full(x: Any, a: float, b: float, c: float, d: float, e: float) -> Any:
        return a * np.power(b, c * x + d) + e

    def log_np(x: Any, a: float, b: float, c: float) -> Any:
        return a * np.log(b * x) + c

    def log_np_full(x: Any, a: float, b: float, c: float, d: float) -> Any:
        return a * np.log(b * x + c) + d

    def log10(x: Any, a: float, b: float, c: float) -> Any:
        return a * np.log10(b * x) + c

    def log2(x: Any, a: float, b: float, c: float) -> Any:
        return a * np.log2(b * x) + c

    def gaussian(x: Any, a: float, b: float, c: float) -> Any:
        # As the framework writes it: the exponent is multiplied by c², not divided (§B.2).
        return a * np.exp(-((x - b) ** 2) / 2 * c**2)

    for name, formula, f, rank in [
        ("exp_full", "a·b^(c·x+d)+e", exp_full, 5),
        ("log_np", "a·ln(b·x)+c", log_np, 3),
        ("log_np_full", "a·ln(b·x+c)+d", log_np_full, 4),
        ("log10", "a·log10(b·x)+c", log10, 3),
        ("log2", "a·log2(b·x)+c", log2, 3),
    ]:
        t[name] = Template(name, formula, f, rank)
        t["inv_" + name] = Template("inv_" + name, f"a / ({formula})", _inv(f), rank + 1)
    t["gaussian"] = Template("gaussian", "a·exp(-(x-b)²/2·c²)", gaussian, 3)
    return t


TEMPLATES: dict[str, Template] = _templates()
#: A small default set for quick fits (polynomials to cubic, logs, inverse linear).
DEFAULT = ["const", "lin", "quad", "cubic", "log_np", "log_np_full", "inv_lin", "exp_full"]


def floor_params(p: Sequence[float], gamma: float = GAMMA) -> list[float]:
    """The γ floor: |p| < γ becomes γ with p's sign; exactly 0 becomes −γ (§B.3)."""
    return [(math.copysign(gamma, v) if v != 0 else -gamma) if abs(v) < gamma else float(v) for v in p]


def error(y: np.ndarray, yhat: np.ndarray, method: str = "sMAPE") -> float:
    """'sMAPE' = Σ|y−ŷ| / Σ(|y|+|ŷ|) (the framework's aggregated form, in [0, 1]); 'MAPE' =
    mean |y−ŷ|/|y|; 'EMD' = Wasserstein distance between the two value sets."""
    y, yhat = np.asarray(y, float), np.asarray(yhat, float)
    if method == "sMAPE":
        den = float(np.sum(np.abs(y) + np.abs(yhat)))
        return 0.0 if den == 0 else float(np.sum(np.abs(y - yhat)) / den)
    if method == "MAPE":
        return float(np.mean(np.abs(y - yhat) / np.abs(y)))
    if method == "EMD":
        from scipy.stats import wasserstein_distance

        return float(wasserstein_distance(y, yhat))
    raise ValueError(f"unknown error metric `{method}` (sMAPE, MAPE, EMD)")


@dataclass
class Part:
    """One fitted template over [lo, hi] of x."""

    template: str
    params: list[float]
    lo: float
    hi: float
    error: float
    n: int

    def __call__(self, x: Any) -> Any:
        return TEMPLATES[self.template].f(np.asarray(x, float), *self.params)


@dataclass
class Model:
    """A fitted model: one or more parts; error and rank ψ weighted by points per part."""

    parts: list[Part]
    error: float
    rank: float
    method: str = "sMAPE"
    extra: dict[str, Any] = field(default_factory=dict)

    def predict(self, x: Any) -> np.ndarray:
        """ŷ at x: each x by the part whose range holds it (beyond the ends, the nearest part)."""
        xs = np.atleast_1d(np.asarray(x, float))
        out = np.empty_like(xs)
        for i, v in enumerate(xs):
            part = self.parts[-1]
            for p in self.parts:
                if v <= p.hi:
                    part = p
                    break
            out[i] = float(part(v))
        return out

    def splits(self) -> list[float]:
        """The x values where one part ends and the next begins (last x of each part)."""
        return [p.hi for p in self.parts[:-1]]

    def describe(self) -> str:
        """`<templates> η=<err>% ψ=<rank>` as the framework labels its models."""
        names = " | ".join(
            f"{p.template} {TEMPLATES[p.template].formula} [{p.lo:g}..{p.hi:g}]" for p in self.parts
        )
        return f"{names} η={self.error * 100:.2f}% ψ={self.rank:g}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "error": self.error,
            "rank": self.rank,
            "method": self.method,
            "parts": [p.__dict__ for p in self.parts],
            "describe": self.describe(),
        }


def better(a: Model, b: Model, kappa: float = KAPPA, kappa_rel: float = KAPPA_REL) -> bool:
    """Whether `a` is preferred to `b` (§B.3): within margin = max(min(e_a·κ_rel, e_b·κ_rel), κ)
    the lower rank wins (then the lower error); outside it the lower error."""
    margin = max(min(a.error * kappa_rel, b.error * kappa_rel), kappa)
    if abs(a.error - b.error) < margin:
        if a.rank != b.rank:
            return a.rank < b.rank
        return a.error < b.error
    return a.error < b.error


def fit_template(name: str, x: np.ndarray, y: np.ndarray, *, method: str = "sMAPE",
                 gamma: float = GAMMA, maxfev: int = 20_000) -> Part | None:
    """`name` fitted to (x, y), or None when the fit fails (OptimizeWarning, no convergence,
    bad values, non-finite results): the template is dropped (§B.2)."""
    t = TEMPLATES[name]
    x, y = np.asarray(x, float), np.asarray(y, float)
    if len(x) == 1 and name == "const":
        params = [float(y[0])]
    else:
        if len(x) < t.rank:
            return None
        with warnings.catch_warnings():
            warnings.simplefilter("error", OptimizeWarning)
            warnings.simplefilter("ignore", RuntimeWarning)
            try:
                popt, _ = curve_fit(t.f, x, y, p0=np.ones(t.rank), maxfev=maxfev)
            except (OptimizeWarning, RuntimeError, ValueError, TypeError, ZeroDivisionError, OverflowError):
                return None
        params = floor_params(list(popt), gamma)
    with np.errstate(all="ignore"):
        yhat = np.asarray(t.f(x, *params), float) * np.ones_like(x)
    if not np.all(np.isfinite(yhat)):
        return None
    return Part(name, params, float(x[0]), float(x[-1]), error(y, yhat, method), len(x))


def fit_single(x: Sequence[float], y: Sequence[float], templates: Sequence[str] = DEFAULT, *,
               method: str = "sMAPE", kappa: float = KAPPA, kappa_rel: float = KAPPA_REL,
               gamma: float = GAMMA) -> Model | None:
    """The best single-part model over `templates` by `better`, or None if every fit failed."""
    xa, ya = np.asarray(x, float), np.asarray(y, float)
    best: Model | None = None
    for name in templates:
        p = fit_template(name, xa, ya, method=method, gamma=gamma)
        if p is None:
            continue
        m = Model([p], p.error, TEMPLATES[name].rank, method)
        if best is None or better(m, best, kappa, kappa_rel):
            best = m
    return best


def _combine(parts: list[Part], method: str) -> Model:
    n = sum(p.n for p in parts)
    err = sum(p.error * p.n for p in parts) / n
    rank = sum(TEMPLATES[p.template].rank * p.n for p in parts) / n
    return Model(parts, err, rank, method)


def candidate_splits(x: np.ndarray, y: np.ndarray, log_x: bool = False, r: int = 2, k: int = 10,
                     j: int = 1, recentre: bool = True) -> list[int]:
    """Split indices from the second-derivative heuristic (§B.4): right-sided slopes with step r
    (on log10 x if log_x), twice; normalised; kept only where maximal within ±2 (two points at
    each end zeroed); the top-k indices, each with j neighbours.

    Each right-sided slope at i describes points i+1..i+1+r, so the second derivative's peak
    lies about 2·(1 + r/2) points before the kink; `recentre` (nevermiss's choice; the
    framework has j = 0 and no shift) moves the candidates onto the kink."""
    xs = np.log10(x) if log_x else np.asarray(x, float)

    def slope(v: np.ndarray) -> np.ndarray:
        d = np.zeros(len(v))
        for i in range(len(v) - 1 - r):
            dx = xs[i + 1 + r] - xs[i + 1]
            d[i] = abs(v[i + 1 + r] - v[i + 1]) / dx if dx else 0.0
        return d

    d2 = slope(slope(np.asarray(y, float)))
    if d2.max() > 0:
        d2 = d2 / d2.max()
    q = np.zeros(len(d2))
    for i in range(len(d2)):
        w = d2[max(0, i - 2): i + 3]
        if d2[i] > 0 and d2[i] == w.max():
            q[i] = d2[i]
    q[:2] = 0
    q[-2:] = 0
    shift = 2 * (1 + r // 2) if recentre else 0
    top = [int(i) + shift for i in np.argsort(-q)[:k] if q[i] > 0]
    out: set[int] = set()
    for i in top:
        for o in range(-j, j + 1):
            if 0 <= i + o < len(x) - 1:
                out.add(i + o)
    return sorted(out)


def fit_parts(x: Sequence[float], y: Sequence[float], n: int, templates: Sequence[str] = DEFAULT, *,
              log_x: bool = False, bruteforce: Sequence[int] = (2,), min_points: int = 2,
              method: str = "sMAPE", kappa: float = KAPPA, kappa_rel: float = KAPPA_REL) -> Model | None:
    """The best n-part model: split indices by brute force if n ∈ `bruteforce`, else from
    `candidate_splits`; a split at i gives x[0:i+1] and x[i+1:] (§B.4)."""
    xa, ya = np.asarray(x, float), np.asarray(y, float)
    if n == 1:
        return fit_single(xa, ya, templates, method=method, kappa=kappa, kappa_rel=kappa_rel)
    cands = list(range(len(xa) - 1)) if n in bruteforce else candidate_splits(xa, ya, log_x)
    best: Model | None = None
    import itertools

    for combo in itertools.combinations(cands, n - 1):
        bounds = [-1, *combo, len(xa) - 1]
        parts: list[Part] = []
        ok = True
        for a, b in zip(bounds, bounds[1:]):
            seg_x, seg_y = xa[a + 1: b + 1], ya[a + 1: b + 1]
            if len(seg_x) < min_points:
                ok = False
                break
            m = fit_single(seg_x, seg_y, templates, method=method, kappa=kappa, kappa_rel=kappa_rel)
            if m is None:
                ok = False
                break
            parts.extend(m.parts)
        if not ok:
            continue
        model = _combine(parts, method)
        if best is None or better(model, best, kappa, kappa_rel):
            best = model
    return best


def fit_best(x: Sequence[float], y: Sequence[float], *, max_parts: int = 1,
             templates: Sequence[str] = DEFAULT, log_x: bool = False, method: str = "sMAPE",
             kappa: float = KAPPA, kappa_rel: float = KAPPA_REL) -> Model:
    """The best model over 1..max_parts parts (§B.4); `ValueError` if nothing could be fitted."""
    best: Model | None = None
    for n in range(1, max_parts + 1):
        m = fit_parts(x, y, n, templates, log_x=log_x, method=method, kappa=kappa, kappa_rel=kappa_rel)
        if m is not None and (best is None or better(m, best, kappa, kappa_rel)):
            best = m
    if best is None:
        raise ValueError("no template could be fitted to these points")
    return best


def cycles_per_packet(freq_ghz: float, cores: int, mpps: float) -> float:
    """§B.4: cycles per packet = f[GHz] × 1000 × cores / Mpps."""
    return freq_ghz * 1000.0 * cores / mpps
