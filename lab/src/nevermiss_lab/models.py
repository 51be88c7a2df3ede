"""Automatic performance models of P4 components (paper 004, Scholz et al., ANCS 2021).

Written from the facts in /work/shared/reference/modeling.md (cited as §B.x below), not from the
framework's code. The pipeline:

* §B.2 function templates (`TEMPLATES`), each with a rank ψ = its parameter count, fitted with
  `scipy.optimize.curve_fit` at its default settings (p0 = ones, no bounds, Levenberg–Marquardt);
  a template whose fit fails is dropped, never raised (`fit_template`).
* §B.3 the γ floor on fitted parameters (`apply_gamma`), the error metrics (`smape`, `mape`, `emd`)
  and the comparison rule between two fits (`better`): within a margin the lower ψ wins.
* §B.4 piecewise ("n-split") models: every index for the brute-forced part counts (default n = 2),
  a second-derivative heuristic for the others (`split_candidates`), and `fit_best` choosing among
  1..max_parts parts by the same comparison rule.

Errors are fractions (sMAPE ∈ [0, 1]); labels print them in % as η. The model's output is never
clipped here (errors are computed on the unclipped function, §B.2); clipping is a plotting matter
(`plots_models`).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field, replace
from itertools import combinations
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
from scipy.optimize import OptimizeWarning, curve_fit
from scipy.stats import wasserstein_distance

from .errors import LabError

ArrayLike = Sequence[float] | np.ndarray | float

# --------------------------------------------------------------------------------------------
# §B.2 function templates
# --------------------------------------------------------------------------------------------

_LETTERS = "abcdefghij"


@dataclass(frozen=True)
class Template:
    """A function template (prototype, rank ψ) of §B.2.

    `func(x, *p)` takes exactly `rank` parameters; `pattern` is the formula with `{a}`, `{b}`, …
    placeholders, in parameter order."""

    name: str
    func: Callable[..., np.ndarray]
    rank: int
    pattern: str

    @property
    def formula(self) -> str:
        """The human-readable formula with letter parameters, e.g. `a·x + b`."""
        return self.pattern.format(**{c: c for c in _LETTERS[: self.rank]})

    def format(self, params: Sequence[float], digits: int = 4) -> str:
        """The formula with the values substituted (`digits` significant digits; negative values in
        parentheses)."""
        vals = {}
        for c, v in zip(_LETTERS, params):
            s = f"{v:.{digits}g}"
            vals[c] = f"({s})" if v < 0 else s
        return self.pattern.format(**vals)

    def __call__(self, x: ArrayLike, *p: float) -> np.ndarray:
        return self.func(np.asarray(x, dtype=float), *p)


def _poly(x: np.ndarray, p: Sequence[float]) -> np.ndarray:
    """Horner: p[0]·x^(n-1) + … + p[n-1]; always an array shaped like x."""
    out = np.zeros_like(x, dtype=float) + p[0]
    for c in p[1:]:
        out = out * x + c
    return out


def _poly_pattern(letters: str) -> str:
    deg = len(letters) - 1
    terms = []
    for i, c in enumerate(letters):
        power = deg - i
        terms.append("{%s}" % c + ("" if power == 0 else "·x" if power == 1 else f"·x^{power}"))
    return " + ".join(terms)


def _make_poly(deg: int) -> tuple[Callable[..., np.ndarray], str]:
    def f(x: np.ndarray, *p: float) -> np.ndarray:
        return _poly(x, p)

    return f, _poly_pattern(_LETTERS[: deg + 1])


def _make_inv_poly(deg: int) -> tuple[Callable[..., np.ndarray], str]:
    def f(x: np.ndarray, a: float, *p: float) -> np.ndarray:
        return a / _poly(x, p)

    return f, "{a} / (" + _poly_pattern(_LETTERS[1 : deg + 2]) + ")"


def _exp_full(x: np.ndarray, a: float, b: float, c: float, d: float, e: float) -> np.ndarray:
    return a * np.power(b, c * x + d) + e


def _inv_exp_full(x: np.ndarray, a: float, b: float, c: float, d: float, e: float, f: float) -> np.ndarray:
    return a / (b * np.power(c, d * x + e) + f)


def _make_log(fn: Callable[[np.ndarray], np.ndarray], tag: str, full: bool, inverse: bool) -> tuple[Callable[..., np.ndarray], str]:
    # log: a·L(b·x) + c; full: a·L(b·x + c) + d; inverse: a / (the same with the next letters)
    if not full and not inverse:
        def f(x: np.ndarray, a: float, b: float, c: float) -> np.ndarray:
            return a * fn(b * x) + c
        return f, "{a}·%s({b}·x) + {c}" % tag
    if full and not inverse:
        def f(x: np.ndarray, a: float, b: float, c: float, d: float) -> np.ndarray:  # type: ignore[misc]
            return a * fn(b * x + c) + d
        return f, "{a}·%s({b}·x + {c}) + {d}" % tag
    if not full:
        def f(x: np.ndarray, a: float, b: float, c: float, d: float) -> np.ndarray:  # type: ignore[misc]
            return a / (b * fn(c * x) + d)
        return f, "{a} / ({b}·%s({c}·x) + {d})" % tag

    def f(x: np.ndarray, a: float, b: float, c: float, d: float, e: float) -> np.ndarray:  # type: ignore[misc]
        return a / (b * fn(c * x + d) + e)
    return f, "{a} / ({b}·%s({c}·x + {d}) + {e})" % tag


def _gaussian(x: np.ndarray, a: float, b: float, c: float) -> np.ndarray:
    # As the framework writes it: -((x-b)^2)/2*c^2 multiplies by c² (§B.2), so c acts as 1/σ.
    return a * np.exp(-((x - b) ** 2) / 2 * c**2)


def _build_templates() -> dict[str, Template]:
    t: dict[str, Template] = {}

    def add(name: str, fp: tuple[Callable[..., np.ndarray], str], rank: int) -> None:
        t[name] = Template(name, fp[0], rank, fp[1])

    poly_names = ["const", "lin", "quad", "cubic", "poly_4", "poly_5"]
    for deg, name in enumerate(poly_names):
        add(name, _make_poly(deg), deg + 1)
    for deg, name in enumerate(poly_names):
        add("inv_" + name, _make_inv_poly(deg), deg + 2)
    add("exp_full", (_exp_full, "{a}·{b}^({c}·x + {d}) + {e}"), 5)
    add("inv_exp_full", (_inv_exp_full, "{a} / ({b}·{c}^({d}·x + {e}) + {f})"), 6)
    for tag, fn, base in (("ln", np.log, "log_np"), ("log10", np.log10, "log10"), ("log2", np.log2, "log2")):
        add(base, _make_log(fn, tag, False, False), 3)
        add("inv_" + base, _make_log(fn, tag, False, True), 4)
        if base == "log_np":
            add("log_np_full", _make_log(fn, tag, True, False), 4)
            add("inv_log_np_full", _make_log(fn, tag, True, True), 5)
    add("gaussian", (_gaussian, "{a}·exp(-((x - {b})^2)/2·{c}^2)"), 3)
    return t


TEMPLATES: dict[str, Template] = _build_templates()
"""All templates of §B.2 by name, in the fixed order in which `best_fit` compares them:
const, lin, quad, cubic, poly_4, poly_5, inv_const … inv_poly_5, exp_full, inv_exp_full, log_np,
inv_log_np, log_np_full, inv_log_np_full, log10, inv_log10, log2, inv_log2, gaussian."""


def get_templates(names: Iterable[str | Template] | None = None) -> list[Template]:
    """The templates to fit: all of `TEMPLATES` for None, else the named ones (or `Template`
    objects, for plugins) in the order given. Raises `LabError` naming an unknown name."""
    if names is None:
        return list(TEMPLATES.values())
    out: list[Template] = []
    for n in names:
        if isinstance(n, Template):
            out.append(n)
        elif n in TEMPLATES:
            out.append(TEMPLATES[n])
        else:
            raise LabError(f"unknown model template {n!r}; known: {', '.join(TEMPLATES)}")
    if not out:
        raise LabError("no model templates selected")
    return out


# --------------------------------------------------------------------------------------------
# §B.3 error metrics, γ floor, comparison rule
# --------------------------------------------------------------------------------------------


def smape(y: ArrayLike, y_hat: ArrayLike) -> float:
    """The framework's "sMAPE" (§B.3): Σ|y − ŷ| / Σ(|y| + |ŷ|), in [0, 1], no factor 2.
    0 when both sums are 0 (a perfect fit of all-zero data)."""
    y, y_hat = np.asarray(y, float), np.asarray(y_hat, float)
    num = float(np.sum(np.abs(y - y_hat)))
    den = float(np.sum(np.abs(y) + np.abs(y_hat)))
    if den == 0.0:
        return 0.0 if num == 0.0 else math.inf
    return num / den


def mape(y: ArrayLike, y_hat: ArrayLike) -> float:
    """MAPE as a fraction: mean(|y − ŷ| / |y|); a point with y = 0 counts 0 if ŷ = 0, else ∞."""
    y, y_hat = np.asarray(y, float), np.asarray(y_hat, float)
    diff = np.abs(y - y_hat)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(diff == 0, 0.0, diff / np.abs(y))
    return float(np.mean(rel))


def emd(y: ArrayLike, y_hat: ArrayLike) -> float:
    """Earth mover's distance between the measured and modelled values
    (`scipy.stats.wasserstein_distance`), in the unit of y."""
    return float(wasserstein_distance(np.atleast_1d(np.asarray(y, float)), np.atleast_1d(np.asarray(y_hat, float))))


METRICS: dict[str, Callable[[ArrayLike, ArrayLike], float]] = {"sMAPE": smape, "MAPE": mape, "EMD": emd}
"""Error metrics by the framework's `comp_method` name (§B.3); `FitConfig.metric` may also be a
callable (a plugin) with the same signature."""


def relative_errors(y: ArrayLike, y_hat: ArrayLike) -> np.ndarray:
    """Per-point |y − ŷ| / |y| in % (the framework's error plots, §B.3); NaN where y = 0."""
    y, y_hat = np.asarray(y, float), np.asarray(y_hat, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(y == 0, np.nan, 100.0 * np.abs(y - y_hat) / np.abs(y))


def apply_gamma(params: ArrayLike, gamma: float = 1e-5) -> np.ndarray:
    """The minimum parameter (§B.3): every |p| < γ becomes ±γ with p's sign; 0 (and −0) become −γ.
    γ = 0 leaves the parameters unchanged."""
    p = np.array(params, dtype=float, ndmin=1)
    small = np.abs(p) < gamma
    return np.where(small, np.where(p > 0, gamma, -gamma), p)


def better(err1: float, rank1: float, err2: float, rank2: float, kappa: float = 0.005, kappa_rel: float = 0.05) -> bool:
    """The framework's `__lt__` (§B.3): True when fit 1 is preferred over fit 2.

    margin = max(min(err1·κ_rel, err2·κ_rel), κ); if |err1 − err2| < margin the lower rank ψ wins
    and, at equal ψ, the lower error; otherwise the lower error. Equal fits return False (the
    incumbent stays). The rule is not transitive, so a "best" depends on the comparison order."""
    margin = max(min(err1 * kappa_rel, err2 * kappa_rel), kappa)
    if abs(err1 - err2) < margin:
        if rank1 != rank2:
            return rank1 < rank2
        return err1 < err2
    return err1 < err2


@dataclass(frozen=True)
class FitConfig:
    """The adjustable parameters of a model (§B.3), with the code's defaults.

    * `gamma` γ, the minimum parameter magnitude (1e-5).
    * `kappa` κ, the absolute comparison margin (0.005 = 0.5 percentage points).
    * `kappa_rel` κ_rel, the relative margin: 0.05 in the framework's function signatures, 0.005
      in its throughput/latency plot scripts; the paper's text speaks of "up to κ = 10 %", a value
      the code never uses (§B.3) — pass 0.10 to follow the paper.
    * `metric`: 'sMAPE' (default), 'MAPE', 'EMD', or a callable (y, ŷ) → float.
    * `maxfev`: curve_fit's evaluation limit (None: scipy's default, 200·(ψ+1) for LM).
    * `p0`: start values per template name (default: all ones, §B.2).
    """

    gamma: float = 1e-5
    kappa: float = 0.005
    kappa_rel: float = 0.05
    metric: str | Callable[[ArrayLike, ArrayLike], float] = "sMAPE"
    maxfev: int | None = None
    p0: Mapping[str, Sequence[float]] = field(default_factory=dict)

    def metric_fn(self) -> Callable[[ArrayLike, ArrayLike], float]:
        """The error function; raises `LabError` for an unknown metric name."""
        if callable(self.metric):
            return self.metric
        try:
            return METRICS[self.metric]
        except KeyError:
            raise LabError(f"unknown error metric {self.metric!r}; known: {', '.join(METRICS)}") from None

    @property
    def metric_name(self) -> str:
        return self.metric if isinstance(self.metric, str) else getattr(self.metric, "__name__", "custom")

    def prefers(self, err1: float, rank1: float, err2: float, rank2: float) -> bool:
        """`better` with this configuration's κ and κ_rel."""
        return better(err1, rank1, err2, rank2, self.kappa, self.kappa_rel)


DEFAULT_CONFIG = FitConfig()

# --------------------------------------------------------------------------------------------
# One template on one domain
# --------------------------------------------------------------------------------------------

_PERCENT_METRICS = {"sMAPE", "MAPE"}


def _fmt_err(err: float, metric: str) -> str:
    return f"η={err * 100:.2f}%" if metric in _PERCENT_METRICS else f"η={err:.4g}"


@dataclass
class Fit:
    """One fitted template on one domain [x_min, x_max] of `n_points` measured points: parameters
    after the γ floor, error on those points (unclipped), rank ψ."""

    template: str
    params: tuple[float, ...]
    error: float
    rank: int
    x_min: float
    x_max: float
    n_points: int
    metric: str = "sMAPE"
    template_obj: Template | None = field(default=None, repr=False, compare=False)

    @property
    def tmpl(self) -> Template:
        if self.template_obj is not None:
            return self.template_obj
        return TEMPLATES[self.template]

    def predict(self, x: ArrayLike) -> np.ndarray:
        """The template with these parameters at x (any x, not only the domain); ≥ 1-d array."""
        with np.errstate(all="ignore"):
            return np.atleast_1d(self.tmpl(np.atleast_1d(np.asarray(x, float)), *self.params))

    def formula(self, digits: int = 4) -> str:
        """The formula with the fitted values, e.g. `2.5·x + 3`."""
        return self.tmpl.format(self.params, digits)

    def describe(self) -> str:
        """`<name> <formula> η=<err>% ψ=<rank>` (the framework's model labels, §B.5)."""
        return f"{self.template} {self.formula()} {_fmt_err(self.error, self.metric)} ψ={self.rank}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "template": self.template,
            "formula": self.tmpl.formula,
            "params": list(self.params),
            "x_min": self.x_min,
            "x_max": self.x_max,
            "n_points": self.n_points,
            "error": self.error,
            "rank": self.rank,
            "metric": self.metric,
        }


def fit_template(x: ArrayLike, y: ArrayLike, template: str | Template, config: FitConfig = DEFAULT_CONFIG) -> Fit | None:
    """Fits one template with `curve_fit` (§B.2) and returns it, or None when it is dropped.

    Dropped: an `OptimizeWarning` (e.g. covariance not estimable, as with no more points than
    parameters) — except const on a single point; a RuntimeError (maxfev reached), ValueError,
    TypeError (more parameters than points), or any other arithmetic error; non-finite
    parameters, predictions or error. The γ floor is applied before the error is computed."""
    t = template if isinstance(template, Template) else get_templates([template])[0]
    xa, ya = np.asarray(x, float).ravel(), np.asarray(y, float).ravel()
    if xa.size == 0 or xa.size != ya.size:
        return None
    p0 = np.array(config.p0.get(t.name, np.ones(t.rank)), float)
    kwargs: dict[str, Any] = {}
    if config.maxfev is not None:
        kwargs["maxfev"] = config.maxfev
    single_const = t.name == "const" and xa.size == 1
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # overflow / log of negatives: judged below
            warnings.simplefilter("ignore" if single_const else "error", OptimizeWarning)
            with np.errstate(all="ignore"):
                popt, _ = curve_fit(t.func, xa, ya, p0=p0, **kwargs)
                params = apply_gamma(popt, config.gamma)
                y_hat = t.func(xa, *params)
                err = config.metric_fn()(ya, y_hat)
    except (OptimizeWarning, RuntimeError, ValueError, TypeError, ArithmeticError):
        return None
    if not (np.all(np.isfinite(params)) and np.all(np.isfinite(y_hat)) and math.isfinite(err)):
        return None
    return Fit(
        template=t.name,
        params=tuple(float(v) for v in params),
        error=float(err),
        rank=t.rank,
        x_min=float(xa.min()),
        x_max=float(xa.max()),
        n_points=int(xa.size),
        metric=config.metric_name,
        template_obj=None if TEMPLATES.get(t.name) is t else t,
    )


def fit_all(x: ArrayLike, y: ArrayLike, templates: Iterable[str | Template] | None = None, config: FitConfig = DEFAULT_CONFIG) -> list[Fit]:
    """Every template that fits (in template order); failed templates are left out."""
    fits = []
    for t in get_templates(templates):
        f = fit_template(x, y, t, config)
        if f is not None:
            fits.append(f)
    return fits


def best_of(fits: Iterable[Fit], config: FitConfig = DEFAULT_CONFIG) -> Fit | None:
    """The best fit by the comparison rule (§B.3), comparing each in turn against the incumbent
    (the first fit starts as incumbent); None for no fits."""
    best: Fit | None = None
    for f in fits:
        if best is None or config.prefers(f.error, f.rank, best.error, best.rank):
            best = f
    return best


def best_fit(x: ArrayLike, y: ArrayLike, templates: Iterable[str | Template] | None = None, config: FitConfig = DEFAULT_CONFIG) -> Fit | None:
    """The best single template on (x, y), or None when none fits."""
    return best_of(fit_all(x, y, templates, config), config)


# --------------------------------------------------------------------------------------------
# Models of one or more parts
# --------------------------------------------------------------------------------------------


@dataclass
class Model:
    """A model of n ≥ 1 parts on consecutive, non-overlapping domains (§B.4), sorted by x.

    `error` and `rank` are the parts' errors and ranks averaged with weights = points per part.
    `extra` is free for callers (kept by `to_dict`)."""

    parts: list[Fit]
    error: float
    rank: float
    metric: str = "sMAPE"
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, parts: Sequence[Fit]) -> Model:
        """A model from its parts, with the point-weighted error and rank."""
        n = sum(p.n_points for p in parts)
        err = sum(p.error * p.n_points for p in parts) / n
        rank = sum(p.rank * p.n_points for p in parts) / n
        return cls(list(parts), err, rank, parts[0].metric)

    @property
    def n_parts(self) -> int:
        return len(self.parts)

    @property
    def boundaries(self) -> list[tuple[float, float]]:
        """(x_min, x_max) of each part."""
        return [(p.x_min, p.x_max) for p in self.parts]

    def splits(self) -> list[float]:
        """The last x of every part but the last (where one part ends and the next begins)."""
        return [p.x_max for p in self.parts[:-1]]

    def part_index(self, x: ArrayLike) -> np.ndarray:
        """Which part models each x: the first part whose x_max ≥ x (so a gap between two parts'
        samples belongs to the right one), the first part below the data, the last above it."""
        xa = np.atleast_1d(np.asarray(x, float))
        uppers = np.array([p.x_max for p in self.parts[:-1]])
        return np.searchsorted(uppers, xa, side="left")

    def predict(self, x: ArrayLike) -> np.ndarray:
        """The model at x (unclipped), always a ≥ 1-d float array: each x by its part (`part_index`)."""
        xa = np.atleast_1d(np.asarray(x, float))
        out = np.empty(xa.shape, float)
        idx = self.part_index(xa)
        for i, p in enumerate(self.parts):
            sel = idx == i
            if np.any(sel):
                out[sel] = p.predict(xa[sel])
        return out

    def describe(self) -> str:
        """One line: `<name> <formula> η=<err>% ψ=<rank>` for one part; for n parts
        `n-split: [x_min, x_max] <part> | … η=<err>% ψ=<rank>`."""
        if len(self.parts) == 1:
            return self.parts[0].describe()
        body = " | ".join(f"[{p.x_min:.4g}, {p.x_max:.4g}] {p.template} {p.formula()}" for p in self.parts)
        return f"{len(self.parts)}-split: {body} {_fmt_err(self.error, self.metric)} ψ={self.rank:.3g}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: parts (template, formula, params, domain, error, rank), totals, `describe`."""
        return {
            "n_parts": len(self.parts),
            "error": self.error,
            "rank": self.rank,
            "metric": self.metric,
            "describe": self.describe(),
            "parts": [p.to_dict() for p in self.parts],
            "extra": dict(self.extra),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Model:
        """The inverse of `to_dict` for models of built-in templates."""
        parts = [
            Fit(p["template"], tuple(p["params"]), p["error"], p["rank"], p["x_min"], p["x_max"], p["n_points"], p.get("metric", "sMAPE"))
            for p in d["parts"]
        ]
        return cls(parts, d["error"], d["rank"], d.get("metric", "sMAPE"), dict(d.get("extra", {})))


class _Segments:
    """Best fit per index range [lo, hi) of sorted data, memoised (split searches reuse ranges)."""

    def __init__(self, x: np.ndarray, y: np.ndarray, templates: list[Template], config: FitConfig) -> None:
        self.x, self.y, self.templates, self.config = x, y, templates, config
        self.cache: dict[tuple[int, int], Fit | None] = {}

    def best(self, lo: int, hi: int) -> Fit | None:
        key = (lo, hi)
        if key not in self.cache:
            self.cache[key] = best_fit(self.x[lo:hi], self.y[lo:hi], self.templates, self.config)
        return self.cache[key]

    def model(self, splits: Sequence[int]) -> Model | None:
        """The model for split indices s₁ < s₂ < …: domains x[0:s₁+1], x[s₁+1:s₂+1], …, x[s_last+1:]
        (§B.4); None when a domain has no fitting template."""
        edges = [0] + [s + 1 for s in splits] + [len(self.x)]
        parts = []
        for lo, hi in zip(edges, edges[1:]):
            f = self.best(lo, hi)
            if f is None:
                return None
            parts.append(f)
        return Model.of(parts)


def _sorted_xy(x: ArrayLike, y: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    xa, ya = np.asarray(x, float).ravel(), np.asarray(y, float).ravel()
    if xa.size != ya.size:
        raise ValueError(f"x and y differ in length ({xa.size} vs {ya.size})")
    if xa.size == 0:
        raise ValueError("no points to model")
    if not (np.all(np.isfinite(xa)) and np.all(np.isfinite(ya))):
        raise ValueError("x and y must be finite")
    order = np.argsort(xa, kind="stable")
    return xa[order], ya[order]


def derivative(x: ArrayLike, y: ArrayLike, r: int = 2) -> np.ndarray:
    """The framework's right-sided absolute slope (§B.4): d[i] = |y[i+1+r] − y[i+1]| / (x[i+1+r] −
    x[i+1]) for i = 0 … len(y) − 2 − r (empty when too short). Non-finite values (equal x) → 0."""
    xa, ya = np.asarray(x, float), np.asarray(y, float)
    n = len(ya) - 1 - r
    if n <= 0:
        return np.zeros(0)
    i = np.arange(n)
    with np.errstate(all="ignore"):
        d = np.abs(ya[i + 1 + r] - ya[i + 1]) / (xa[i + 1 + r] - xa[i + 1])
    return np.where(np.isfinite(d), d, 0.0)


def quantize(a: ArrayLike, window: int = 2, edge: int = 2) -> np.ndarray:
    """The framework's "quantize" (§B.4): a value stays only where it is the maximum of its ±window
    neighbourhood (and > 0), else 0; the `edge` values at each end become 0."""
    v = np.asarray(a, float)
    out = np.zeros_like(v)
    for i in range(len(v)):
        w = v[max(0, i - window) : i + window + 1]
        if v[i] > 0 and v[i] >= w.max():
            out[i] = v[i]
    if edge > 0:
        out[:edge] = 0.0
        out[-edge:] = 0.0
    return out


def k_maxima(a: ArrayLike, k: int = 10, j: int = 0) -> list[int]:
    """The indices of the k largest positive values (ties: lower index first), each with its j
    surrounding indices on either side, sorted, within the array (the framework's
    `get_k_maxima`, §B.4)."""
    v = np.asarray(a, float)
    pos = [i for i in np.argsort(-v, kind="stable") if v[i] > 0][:k]
    out: set[int] = set()
    for i in pos:
        for d in range(-j, j + 1):
            if 0 <= i + d < len(v):
                out.add(int(i + d))
    return sorted(out)


def split_candidates(x: ArrayLike, y: ArrayLike, *, log_x: bool = False, r: int = 2, k: int = 10, j: int = 0, offset: int | None = None) -> list[int]:
    """Candidate split indices from the second-derivative heuristic (§B.4), for sorted x.

    1st derivative `derivative(x', y, r)` with x' = log10(x) on a logarithmic axis; 2nd derivative
    `derivative(x', d1, r)`; normalised by its maximum; `quantize` (±2, two points at each end
    zeroed); `k_maxima(k, j)`. modeling.md does not say how an index of the second derivative maps
    to a data index; here it is shifted by `offset` (default r + 2, where a kink at data point m
    peaks: d2[m−2−r] compares the slopes just left and right of m), then limited to 0 … len(x)−2.
    A split index s means the domains x[0:s+1] and x[s+1:]."""
    xa, ya = np.asarray(x, float), np.asarray(y, float)
    if log_x:
        if np.any(xa <= 0):
            raise ValueError("a logarithmic x axis needs x > 0")
        xa = np.log10(xa)
    d1 = derivative(xa, ya, r)
    d2 = derivative(xa, d1, r)
    if d2.size == 0 or d2.max() <= 0:
        return []
    q = quantize(d2 / d2.max())
    shift = r + 2 if offset is None else offset
    n = len(xa)
    return sorted({min(max(i + shift, 0), n - 2) for i in k_maxima(q, k, j)})


def fit_parts(
    x: ArrayLike,
    y: ArrayLike,
    n_parts: int,
    *,
    templates: Iterable[str | Template] | None = None,
    config: FitConfig = DEFAULT_CONFIG,
    candidates: Iterable[int] | None = None,
    _segments: _Segments | None = None,
) -> Model | None:
    """The best model of exactly `n_parts` parts (§B.4): every combination of n−1 split indices
    from `candidates` (default: all, 0 … len−2, i.e. brute force) — each domain its best
    template, combinations compared by the rule of §B.3 on the point-weighted error and rank, in
    lexicographic order. None when no combination fits (e.g. too few candidates)."""
    if n_parts < 1:
        raise ValueError("n_parts must be ≥ 1")
    if _segments is None:
        xs, ys = _sorted_xy(x, y)
        _segments = _Segments(xs, ys, get_templates(templates), config)
    n = len(_segments.x)
    if n_parts == 1:
        return _segments.model([])
    pool = range(n - 1) if candidates is None else sorted({int(c) for c in candidates if 0 <= int(c) <= n - 2})
    best: Model | None = None
    for splits in combinations(pool, n_parts - 1):
        m = _segments.model(splits)
        if m is not None and (best is None or config.prefers(m.error, m.rank, best.error, best.rank)):
            best = m
    return best


def fit_best(
    x: ArrayLike,
    y: ArrayLike,
    *,
    max_parts: int = 1,
    log_x: bool = False,
    templates: Iterable[str | Template] | None = None,
    config: FitConfig | None = None,
    bruteforce: Iterable[int] = (2,),
    k: int = 10,
    j: int = 0,
    r: int = 2,
    **overrides: Any,
) -> Model:
    """The best model with 1 … max_parts parts (§B.4), chosen by the rule of §B.3 comparing each
    part count in turn (1 first) against the incumbent.

    A part count in `bruteforce` (default {2}) tries every split; the others use
    `split_candidates(log_x, r, k, j)`. `log_x` affects only that heuristic (the fit is on x as
    given). Keyword `overrides` (gamma, kappa, kappa_rel, metric, maxfev, p0) replace fields of
    `config`. The points are sorted by x. Raises ValueError for bad input or when no template
    fits the whole data set."""
    cfg = config or DEFAULT_CONFIG
    if overrides:
        cfg = replace(cfg, **overrides)
    xs, ys = _sorted_xy(x, y)
    seg = _Segments(xs, ys, get_templates(templates), cfg)
    best = fit_parts(xs, ys, 1, config=cfg, _segments=seg)
    if best is None:
        raise ValueError("no model template fitted the data")
    brute = set(bruteforce)
    heuristic: list[int] | None = None
    for n in range(2, max_parts + 1):
        if n > len(xs):
            break
        if n in brute:
            m = fit_parts(xs, ys, n, config=cfg, _segments=seg)
        else:
            if heuristic is None:
                heuristic = split_candidates(xs, ys, log_x=log_x, r=r, k=k, j=j)
            m = fit_parts(xs, ys, n, config=cfg, candidates=heuristic, _segments=seg)
        if m is not None and cfg.prefers(m.error, m.rank, best.error, best.rank):
            best = m
    return best


# --------------------------------------------------------------------------------------------
# CPU cycles (§B.4)
# --------------------------------------------------------------------------------------------


def cycles_per_packet(freq_ghz: ArrayLike, cores: ArrayLike, mpps: ArrayLike) -> Any:
    """CPU cycles per packet = freq_GHz × 1000 × cores / Mpps (§B.4); a float for scalar inputs,
    else an array. Meaningful only where the DUT is saturated (the framework requires loss > 0.1);
    raises ValueError for a non-positive packet rate."""
    m = np.asarray(mpps, float)
    if np.any(m <= 0):
        raise ValueError("packet rate must be > 0 Mpps")
    out = np.asarray(freq_ghz, float) * 1000.0 * np.asarray(cores, float) / m
    return float(out) if out.ndim == 0 else out
