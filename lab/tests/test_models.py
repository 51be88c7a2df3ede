"""The papers/004 fitting library (nevermiss_lab.models) on synthetic data with known answers
(modeling.md §B.2 templates, §B.3 γ/κ/κ_rel and the comparison rule, §B.4 split models)."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from nevermiss_lab import models as M
from nevermiss_lab.errors import LabError

X = np.linspace(1.0, 20.0, 30)

# Generating parameters per template (all 23 of §B.2).
CASES: dict[str, list[float]] = {
    "const": [7.0],
    "lin": [3.0, 2.0],
    "quad": [0.5, 1.0, 2.0],
    "cubic": [0.05, 0.5, 1.0, 2.0],
    "poly_4": [0.002, 0.05, 0.5, 1.0, 2.0],
    "poly_5": [1e-4, 0.002, 0.05, 0.5, 1.0, 2.0],
    "inv_const": [10.0, 2.0],
    "inv_lin": [100.0, 1.0, 0.5],
    "inv_quad": [100.0, 0.1, 1.0, 0.5],
    "inv_cubic": [100.0, 0.01, 0.1, 1.0, 0.5],
    "inv_poly_4": [100.0, 0.001, 0.01, 0.1, 1.0, 0.5],
    "inv_poly_5": [100.0, 1e-4, 0.001, 0.01, 0.1, 1.0, 0.5],
    "exp_full": [2.0, 2.0, 0.3, 1.0, 3.0],
    "inv_exp_full": [100.0, 2.0, 2.0, 0.3, 1.0, 3.0],
    "log_np": [5.0, 2.0, 1.0],
    "inv_log_np": [100.0, 2.0, 3.0, 1.0],
    "log_np_full": [5.0, 2.0, 1.0, 3.0],
    "inv_log_np_full": [100.0, 2.0, 3.0, 1.0, 1.0],
    "log10": [5.0, 2.0, 1.0],
    "inv_log10": [100.0, 2.0, 3.0, 1.0],
    "log2": [5.0, 2.0, 1.0],
    "inv_log2": [100.0, 2.0, 3.0, 1.0],
    "gaussian": [5.0, 10.0, 0.3],
}

RANKS = {
    "const": 1, "lin": 2, "quad": 3, "cubic": 4, "poly_4": 5, "poly_5": 6,
    "inv_const": 2, "inv_lin": 3, "inv_quad": 4, "inv_cubic": 5, "inv_poly_4": 6, "inv_poly_5": 7,
    "exp_full": 5, "inv_exp_full": 6, "log_np": 3, "inv_log_np": 4, "log_np_full": 4,
    "inv_log_np_full": 5, "log10": 3, "inv_log10": 4, "log2": 3, "inv_log2": 4, "gaussian": 3,
}


def _identifiable(name: str, p: tuple[float, ...] | list[float]) -> tuple[float, ...]:
    """The parameter combinations a template's data determine (most templates of §B.2 are
    over-parametrised, e.g. a·ln(b·x) + c = a·ln x + (a·ln b + c))."""
    logs: dict[str, Callable[[float], float]] = {"np": math.log, "10": math.log10, "2": math.log2}
    if name in ("const", "lin", "quad", "cubic", "poly_4", "poly_5"):
        return tuple(p)
    if name.startswith("inv_") and name[4:] in ("const", "lin", "quad", "cubic", "poly_4", "poly_5"):
        return tuple(v / p[0] for v in p[1:])
    if name == "exp_full":
        a, b, c, d, e = p
        return (a * b**d, c * math.log(b), e)
    if name == "inv_exp_full":
        a, b, c, d, e, f = p
        return (f / a, b * c**e / a, d * math.log(c))
    if name == "gaussian":
        return (p[0], p[1], abs(p[2]))
    full = name.endswith("_full")
    base = name.removeprefix("inv_").removesuffix("_full")
    lg = logs[base.removeprefix("log_").removeprefix("log")]
    if not name.startswith("inv_"):
        if full:
            a, b, c, d = p
            return (a, c / b, a * lg(b) + d)
        a, b, c = p
        return (a, a * lg(b) + c)
    if full:
        a, b, c, d, e = p
        return (b / a, d / c, (b * lg(c) + e) / a)
    a, b, c, d = p
    return (b / a, (b * lg(c) + d) / a)


# --------------------------------------------------------------------------------------------
# §B.2 templates
# --------------------------------------------------------------------------------------------


def test_registry_has_every_template_with_its_rank_and_formula() -> None:
    assert {n: t.rank for n, t in M.TEMPLATES.items()} == RANKS
    assert list(M.TEMPLATES)[:6] == ["const", "lin", "quad", "cubic", "poly_4", "poly_5"]
    assert M.TEMPLATES["lin"].formula == "a·x + b"
    assert M.TEMPLATES["inv_lin"].formula == "a / (b·x + c)"
    assert M.TEMPLATES["exp_full"].formula == "a·b^(c·x + d) + e"
    assert M.TEMPLATES["log_np_full"].formula == "a·ln(b·x + c) + d"
    assert M.TEMPLATES["inv_log10"].formula == "a / (b·log10(c·x) + d)"
    assert M.TEMPLATES["lin"].format([2.5, -3.0]) == "2.5·x + (-3)"
    for t in M.TEMPLATES.values():  # each takes exactly ψ parameters
        assert np.all(np.isfinite(t(X, *([1.0] * t.rank))))
    assert [t.name for t in M.get_templates(["quad", "lin"])] == ["quad", "lin"]
    with pytest.raises(LabError, match="unknown model template 'cubicle'"):
        M.get_templates(["lin", "cubicle"])


def test_gaussian_multiplies_by_c_squared_as_the_framework_writes_it() -> None:
    # a·exp(-((x-b)^2)/2·c^2): at x = b + 1, c = 2 the exponent is −1/2·4 = −2 (not −1/8).
    assert M.TEMPLATES["gaussian"](np.array([4.0]), 3.0, 3.0, 2.0)[0] == pytest.approx(3.0 * math.exp(-2.0))


@pytest.mark.parametrize("name", list(CASES))
def test_each_template_is_recovered_from_its_own_data(name: str) -> None:
    true = CASES[name]
    y = M.TEMPLATES[name](X, *true)
    fit = M.fit_template(X, y, name)
    assert fit is not None and fit.template == name and fit.rank == RANKS[name]
    assert fit.error < 1e-9
    assert np.allclose(_identifiable(name, fit.params), _identifiable(name, true), rtol=1e-4, atol=1e-8)
    assert np.allclose(fit.predict(X), y, rtol=1e-7)
    assert (fit.x_min, fit.x_max, fit.n_points) == (1.0, 20.0, 30)
    # Lightly noisy (0.2 % Gaussian, seeded): error of the order of the noise, and the curve
    # within the noise of the true one (sMAPE < 0.2 %; least squares weighs large y most).
    rng = np.random.default_rng(7)
    noisy = y * (1 + rng.normal(0, 0.002, len(X)))
    fit = M.fit_template(X, noisy, name)
    assert fit is not None and fit.error < 0.003
    assert M.smape(y, fit.predict(X)) < 0.002


@pytest.mark.parametrize(
    "name,chosen",
    [
        ("const", {"const"}),
        ("lin", {"lin"}),
        ("quad", {"quad"}),
        ("cubic", {"cubic"}),
        ("inv_lin", {"inv_lin"}),
        ("exp_full", {"exp_full"}),
        ("gaussian", {"gaussian"}),
        ("inv_log_np", {"inv_log_np", "inv_log10", "inv_log2"}),
        ("log_np", {"log_np", "log10", "log2"}),  # the same family: a·log_B(b·x) + c
    ],
)
def test_all_templates_choose_the_generating_family(name: str, chosen: set[str]) -> None:
    y = M.TEMPLATES[name](X, *CASES[name])
    m = M.fit_best(X, y)
    assert m.n_parts == 1 and m.parts[0].template in chosen and m.error < 1e-9


def test_fitting_all_templates_on_30_points_is_fast() -> None:
    y = 3.0 + 2.0 * X
    t0 = time.perf_counter()
    fits = M.fit_all(X, y)
    assert time.perf_counter() - t0 < 1.0
    assert len(fits) >= 15  # most templates can express a line


# --------------------------------------------------------------------------------------------
# Dropped templates (§B.2)
# --------------------------------------------------------------------------------------------


def test_a_failing_template_is_dropped_not_raised() -> None:
    x = np.linspace(-5, 5, 11)  # ln(b·x) is undefined for half the points whatever b's sign
    y = 2 * x + 1
    for name in ("log_np", "log10", "log2"):
        assert M.fit_template(x, y, name) is None
    assert [f.template for f in M.fit_all(x, y, ["log_np", "lin", "log2"])] == ["lin"]
    assert M.fit_best(x, y, templates=["log_np", "lin"]).parts[0].template == "lin"
    # More parameters than points (TypeError) and as many (OptimizeWarning: no covariance).
    assert M.fit_template([1.0, 2.0], [1.0, 2.0], "quad") is None
    assert M.fit_template([1.0, 2.0], [1.0, 2.0], "lin") is None
    assert M.fit_template([1.0], [4.0], "lin") is None
    # … except const on a single point.
    one = M.fit_template([1.0], [4.0], "const")
    assert one is not None and one.params == (4.0,) and one.error == 0.0
    # maxfev exhausted (RuntimeError).
    y = M.TEMPLATES["exp_full"](X, *CASES["exp_full"])
    assert M.fit_template(X, y, "exp_full", M.FitConfig(maxfev=5)) is None
    assert M.fit_template(X, y, "exp_full", M.FitConfig(maxfev=5000)) is not None
    # Plugins that raise or return non-finite values.
    def boom(x: np.ndarray, a: float) -> np.ndarray:
        raise ValueError("no")

    raising = M.Template("boom", boom, 1, "{a}")
    infinite = M.Template("inf", lambda x, a: np.full_like(x, np.inf), 1, "∞·{a}")
    assert M.fit_template(X, X, raising) is None and M.fit_template(X, X, infinite) is None
    with pytest.raises(ValueError, match="no model template fitted"):
        M.fit_best(X, X, templates=[raising, infinite])
    with pytest.raises(ValueError, match="no model template fitted"):
        M.fit_best([1.0, 2.0], [1.0, 2.0], templates=["cubic"])


def test_p0_is_configurable() -> None:
    x = np.linspace(0, 100, 40)
    y = M.TEMPLATES["gaussian"](x, 5.0, 60.0, 0.1)
    from_ones = M.fit_template(x, y, "gaussian")  # p0 = ones starts far from the peak
    assert from_ones is None or from_ones.error > 0.5
    fit = M.fit_template(x, y, "gaussian", M.FitConfig(p0={"gaussian": [4.0, 55.0, 0.2]}))
    assert fit is not None and fit.error < 1e-9
    assert np.allclose(_identifiable("gaussian", fit.params), (5.0, 60.0, 0.1), rtol=1e-6)


# --------------------------------------------------------------------------------------------
# §B.3 γ floor, error metrics, comparison rule
# --------------------------------------------------------------------------------------------


def test_gamma_floor() -> None:
    got = M.apply_gamma([0.0, 5e-6, -5e-6, -0.0, 1e-5, -1e-5, 0.5, -2.0])
    assert got.tolist() == [-1e-5, 1e-5, -1e-5, -1e-5, 1e-5, -1e-5, 0.5, -2.0]
    assert M.apply_gamma([0.05, -0.05, 0.0], gamma=0.1).tolist() == [0.1, -0.1, -0.1]
    assert M.apply_gamma([0.0, 1e-9], gamma=0.0).tolist() == [0.0, 1e-9]
    # A line fitted to constant data: the slope (≈ 0) becomes ±γ and the error is that of the
    # floored parameters (so more parameters cost error).
    y = np.full(30, 5.0)
    fit = M.fit_template(X, y, "lin")
    assert fit is not None and abs(fit.params[0]) == 1e-5
    assert fit.error == pytest.approx(M.smape(y, fit.params[0] * X + fit.params[1]), rel=1e-12)
    assert fit.error > 0
    big = M.fit_template(X, y, "lin", M.FitConfig(gamma=1e-3))
    assert big is not None and abs(big.params[0]) == 1e-3 and big.error > 50 * fit.error
    assert M.fit_template(X, y, "const").params == (5.0,)


def test_smape_mape_emd_by_hand() -> None:
    # Σ|y−ŷ| / Σ(|y|+|ŷ|) = (1 + 1) / (2 + 4 + 1 + 3) = 0.2
    assert M.smape([2.0, 4.0], [1.0, 3.0]) == pytest.approx(0.2)
    assert M.smape([10.0, 20.0, 30.0], [11.0, 18.0, 30.0]) == pytest.approx(3 / 119)
    assert M.smape([1.0, -1.0], [0.0, 0.0]) == pytest.approx(1.0)
    assert M.smape([3.0, 4.0], [3.0, 4.0]) == 0.0 and M.smape([0.0, 0.0], [0.0, 0.0]) == 0.0
    assert M.mape([2.0, 4.0], [1.0, 3.0]) == pytest.approx((0.5 + 0.25) / 2)
    assert M.emd([1.0, 2.0, 3.0], [1.0, 2.0, 4.0]) == pytest.approx(1 / 3)
    rel = M.relative_errors([2.0, 4.0, 0.0], [1.0, 3.0, 0.0])
    assert rel[:2].tolist() == [50.0, 25.0] and math.isnan(rel[2])
    # The metric is configurable and used for the fit's error.
    y = 3.0 + 2.0 * X
    y_bad = y.copy()
    y_bad[0] = 2 * y[0]
    c = M.fit_template(X, y_bad, "const", M.FitConfig(metric="MAPE"))
    assert c is not None and c.error == pytest.approx(M.mape(y_bad, np.full(30, c.params[0])))
    e = M.fit_template(X, y, "lin", M.FitConfig(metric="EMD"))
    assert e is not None and e.error < 1e-9 and "η=" in e.describe() and "%" not in e.describe()
    with pytest.raises(LabError, match="unknown error metric"):
        M.fit_template(X, y, "lin", M.FitConfig(metric="RMSE"))


def test_comparison_rule_by_hand() -> None:
    # margin = max(min(0.100·0.05, 0.103·0.05), 0.005) = 0.005 > |Δ| = 0.003: the lower ψ wins.
    assert M.better(0.100, 2, 0.103, 4) and not M.better(0.103, 4, 0.100, 2)
    assert M.better(0.103, 2, 0.100, 4)
    # margin = max(0.20·0.05, 0.005) = 0.01 > 0.009: rank; 0.015 > 0.01: error.
    assert M.better(0.209, 2, 0.200, 4) and not M.better(0.200, 4, 0.209, 2)
    assert M.better(0.200, 4, 0.215, 2) and not M.better(0.215, 2, 0.200, 4)
    # Equal ψ inside the margin: lower error; equal everything: the incumbent stays.
    assert M.better(0.100, 2, 0.101, 2) and not M.better(0.101, 2, 0.100, 2)
    assert not M.better(0.1, 2, 0.1, 2)
    # The margin uses the smaller error: min(0.5, 0.5255)·0.05 = 0.025 < 0.0255, so error decides.
    assert not M.better(0.5255, 2, 0.5, 4) and M.better(0.5, 4, 0.5255, 2)
    # The paper's κ_rel = 10 % widens the margin to 0.02: rank again.
    assert not M.better(0.200, 4, 0.215, 2, kappa_rel=0.10)
    # κ = 0: only the relative margin (5e-5 here) stays, so 0.001 apart is decided by error.
    assert not M.better(0.001, 4, 0.002, 2) and M.better(0.001, 4, 0.002, 2, kappa=0.0)


def test_rank_preference_chooses_the_simpler_model_within_kappa() -> None:
    rng = np.random.default_rng(3)
    y = (3.0 + 2.0 * X) * (1 + rng.normal(0, 0.003, len(X)))
    lin = M.fit_template(X, y, "lin")
    cubic = M.fit_template(X, y, "cubic")
    assert lin is not None and cubic is not None
    assert cubic.error < lin.error < cubic.error + 0.005  # the cubic fits (over-fits) as well
    for order in (["lin", "quad", "cubic"], ["cubic", "quad", "lin"]):
        m = M.fit_best(X, y, templates=order)
        assert m.parts[0].template == "lin" and m.rank == 2
    # Outside the margin the lower error wins: clearly quadratic data is not called linear.
    yq = 1.0 + 0.5 * X + 0.5 * X**2
    assert M.fit_template(X, yq, "lin").error > 0.02  # type: ignore[union-attr]
    assert M.fit_best(X, yq, templates=["lin", "quad", "cubic"]).parts[0].template == "quad"


def test_kappa_is_configurable() -> None:
    y = 10.0 + X + 0.02 * X**2
    lin_err = M.fit_template(X, y, "lin").error  # type: ignore[union-attr]
    assert 0.006 < lin_err < 0.02  # outside κ = 0.005, inside κ = 0.02
    assert M.fit_best(X, y, templates=["lin", "quad"]).parts[0].template == "quad"
    assert M.fit_best(X, y, templates=["lin", "quad"], kappa=0.02).parts[0].template == "lin"
    cfg = M.FitConfig(kappa=0.0, kappa_rel=0.10)  # the paper's 10 %: margin 0.1·min(err) ≈ 0
    assert M.fit_best(X, y, templates=["lin", "quad"], config=cfg).parts[0].template == "quad"


# --------------------------------------------------------------------------------------------
# §B.4 split models
# --------------------------------------------------------------------------------------------

XS = np.arange(1.0, 31.0)
CACHE_STEP = np.where(XS <= 12, 5.0, 5.0 + 3.0 * (XS - 12))  # flat, then growing after x = 12


def test_two_split_brute_force_finds_the_kink() -> None:
    m = M.fit_parts(XS, CACHE_STEP, 2, templates=["const", "lin", "quad"])
    assert m is not None and m.n_parts == 2 and m.error < 1e-9
    assert abs(m.splits()[0] - 12) <= 1
    assert [p.template for p in m.parts] == ["const", "lin"]
    # Split after x = 12: 12 points const (ψ 1), 18 points lin (ψ 2).
    assert m.splits() == [12.0] and m.rank == pytest.approx((12 * 1 + 18 * 2) / 30)
    assert np.allclose(m.predict(XS), CACHE_STEP)
    best = M.fit_best(XS, CACHE_STEP, max_parts=2, templates=["const", "lin", "quad"])
    assert best.n_parts == 2 and best.splits() == [12.0]
    assert M.fit_best(XS, CACHE_STEP, max_parts=1, templates=["const", "lin", "quad"]).n_parts == 1


def test_two_split_brute_force_tries_a_single_point_first_part() -> None:
    # Index 0 is a split too: x[0:1] is one point, which only const can fit (§B.2's exception).
    y = np.concatenate([[40.0], 3.0 + 2.0 * XS[1:]])
    m = M.fit_parts(XS, y, 2, templates=["const", "lin"])
    assert m is not None and m.splits() == [1.0] and m.error < 1e-9
    assert [(p.template, p.n_points) for p in m.parts] == [("const", 1), ("lin", 29)]


def test_two_split_brute_force_finds_a_jump_between_two_slopes() -> None:
    y = np.where(XS <= 17, 2.0 * XS, 50.0 + 0.5 * XS)
    m = M.fit_best(XS, y, max_parts=2, templates=["const", "lin"])
    assert m.n_parts == 2 and m.splits() == [17.0]
    assert [p.template for p in m.parts] == ["lin", "lin"]
    # The first line's intercept 0 is floored to −γ, which costs a little error (§B.3).
    assert m.parts[0].params[0] == pytest.approx(2.0) and m.parts[0].params[1] == -1e-5
    assert m.parts[0].error == pytest.approx(M.smape(y[:17], 2.0 * XS[:17] - 1e-5), rel=1e-6)
    assert 0 < m.error < 1e-6 and np.allclose(m.parts[1].params, (0.5, 50.0))
    # A part's last x belongs to it: 17 is on the first line, 18 on the second.
    assert m.predict([17.0, 18.0]) == pytest.approx([34.0, 59.0], rel=1e-6)


def test_heuristic_pieces() -> None:
    # d[i] = |y[i+3] − y[i+1]| / (x[i+3] − x[i+1]) for r = 2.
    x = np.arange(6.0)
    assert M.derivative(x, [0, 0, 0, 1, 2, 3]).tolist() == [0.5, 1.0, 1.0]
    assert M.derivative(x, [0, 0, 0, 1, 2, 3], r=1).tolist() == [0.0, 1.0, 1.0, 1.0]
    q = M.quantize([0, 1, 3, 2, 0, 5, 1, 0, 0])
    assert q.tolist() == [0, 0, 3, 0, 0, 5, 0, 0, 0]
    assert M.quantize([9, 0, 0, 0, 0, 0, 0, 0, 9]).tolist() == [0] * 9  # ends zeroed
    assert M.k_maxima(q, k=1) == [5] and M.k_maxima(q, k=10) == [2, 5]
    assert M.k_maxima(q, k=1, j=1) == [4, 5, 6]


X3 = np.arange(40.0)
THREE = np.piecewise(
    X3, [X3 <= 12, (X3 > 12) & (X3 <= 27), X3 > 27], [10.0, lambda v: 10.0 - 0.5 * (v - 12), 2.5]
)


def test_heuristic_three_parts_on_three_segments() -> None:
    cands = M.split_candidates(X3, THREE)
    assert len(cands) == 2 and abs(cands[0] - 12) <= 1 and abs(cands[1] - 27) <= 1
    m = M.fit_parts(X3, THREE, 3, templates=["const", "lin"], candidates=cands)
    assert m is not None and m.n_parts == 3 and m.error < 1e-9
    s = m.splits()
    assert abs(s[0] - 12) <= 1 and abs(s[1] - 27) <= 1
    assert [p.template for p in m.parts] == ["const", "lin", "const"]
    # fit_best: 1, 2 (brute force) and 3 (heuristic) parts; the exact 3-part model wins.
    best = M.fit_best(X3, THREE, max_parts=3, templates=["const", "lin", "quad"])
    assert best.n_parts == 3 and best.error < 1e-9
    assert abs(best.splits()[0] - 12) <= 1 and abs(best.splits()[1] - 27) <= 1
    assert np.allclose(best.predict(X3), THREE)
    # Lightly noisy (0.5 %): still three parts, splits within one sample.
    rng = np.random.default_rng(0)
    noisy = THREE * (1 + rng.normal(0, 0.005, len(X3)))
    best = M.fit_best(X3, noisy, max_parts=3, templates=["const", "lin", "quad"])
    assert best.n_parts == 3 and best.error < 0.005
    assert abs(best.splits()[0] - 12) <= 1 and abs(best.splits()[1] - 27) <= 1


def test_heuristic_on_a_logarithmic_axis() -> None:
    # Table entries on a log axis: flat to 10², falling linearly in log10(x) to 10⁴, then flat.
    x = np.array([m * 10.0**e for e in range(7) for m in (1, 2, 5)])
    y = np.where(x <= 1e2, 100.0, np.where(x <= 1e4, 100.0 - 20.0 * np.log10(x / 1e2), 60.0))
    cands = M.split_candidates(x, y, log_x=True)
    assert [x[i] for i in cands] == [1e2, 1e4]
    m = M.fit_best(x, y, max_parts=3, log_x=True, templates=["const", "log10"], bruteforce=())
    assert m.n_parts == 3 and m.error < 1e-9 and m.splits() == [1e2, 1e4]
    assert [p.template for p in m.parts] == ["const", "log10", "const"]
    with pytest.raises(ValueError, match="x > 0"):
        M.split_candidates(np.array([0.0, 1, 2, 3, 4, 5, 6, 7]), np.arange(8.0), log_x=True)


# --------------------------------------------------------------------------------------------
# Model objects
# --------------------------------------------------------------------------------------------


def test_model_predict_describe_and_json() -> None:
    m = M.fit_best(XS, CACHE_STEP, max_parts=2, templates=["const", "lin"])
    # Beyond the ends the nearest part; between samples of two parts the right one.
    assert m.predict(-100.0)[0] == pytest.approx(5.0)
    assert m.predict(100.0)[0] == pytest.approx(5.0 + 3.0 * 88)
    assert m.predict(12.5)[0] == pytest.approx(5.0 + 3.0 * 0.5)
    assert m.predict([1.0, 30.0]).shape == (2,)
    assert m.describe().startswith("2-split: [1, 12] const 5 | [13, 30] lin 3·x + (-31)")
    assert m.describe().endswith("η=0.00% ψ=1.6")
    one = M.fit_best(X, 3.0 + 2.0 * X, templates=["lin"])
    assert one.describe() == "lin 2·x + 3 η=0.00% ψ=2"
    d = json.loads(json.dumps(m.to_dict()))
    assert d["n_parts"] == 2 and d["parts"][1]["template"] == "lin" and d["parts"][1]["x_min"] == 13.0
    assert d["describe"] == m.describe()
    back = M.Model.from_dict(d)
    assert np.allclose(back.predict(XS), m.predict(XS)) and back.rank == m.rank


def test_combined_error_and_rank_are_weighted_by_points() -> None:
    a = M.Fit("lin", (1.0, 0.0), 0.1, 2, 0.0, 9.0, 10)
    b = M.Fit("const", (3.0,), 0.4, 1, 10.0, 39.0, 30)
    m = M.Model.of([a, b])
    assert m.error == pytest.approx((10 * 0.1 + 30 * 0.4) / 40)
    assert m.rank == pytest.approx((10 * 2 + 30 * 1) / 40)
    assert m.predict([-1.0, 9.0, 9.5, 50.0]).tolist() == [-1.0, 9.0, 3.0, 3.0]


def test_input_checks_and_sorting() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        M.fit_best([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="finite"):
        M.fit_best([1.0, np.nan, 3.0], [1.0, 2.0, 3.0])
    perm = np.random.default_rng(5).permutation(len(XS))
    m = M.fit_best(XS[perm], CACHE_STEP[perm], max_parts=2, templates=["const", "lin"])
    assert m.splits() == [12.0]


def test_cycles_per_packet() -> None:
    assert M.cycles_per_packet(2.0, 1, 10.0) == pytest.approx(200.0)
    assert M.cycles_per_packet(2.2, 4, 6.76) == pytest.approx(2.2 * 1000 * 4 / 6.76)
    assert np.allclose(M.cycles_per_packet(2.0, np.array([1, 2]), np.array([4.0, 4.0])), [500.0, 1000.0])
    with pytest.raises(ValueError):
        M.cycles_per_packet(2.0, 1, 0.0)


def test_plot_model_writes_both_figures(tmp_path: Path) -> None:
    from nevermiss_lab import plots_models

    m = M.fit_best(XS, CACHE_STEP, max_parts=2, templates=["const", "lin"])
    paths = plots_models.plot_model(XS, CACHE_STEP, m, tmp_path / "step", clip=plots_models.clip_range("cycles", CACHE_STEP))
    assert [p.name for p in paths] == ["step.png", "step.pdf", "step-error.png", "step-error.pdf"]
    assert all(p.stat().st_size > 1000 for p in paths)
    fig, ax = plots_models.model_figure(XS, CACHE_STEP, m)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[0] == "measured" and labels[1].startswith("split 1/2 [1, 12]: const") and labels[2].startswith("split 2/2")
    assert plots_models.clip_range("throughput", CACHE_STEP) == (0.0, 14.88)
