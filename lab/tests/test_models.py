"""The papers/004 fitting library on synthetic data with known answers (modeling.md §B.2–B.4)."""

from __future__ import annotations

import numpy as np
import pytest

from nevermiss_lab import models as M

X = np.arange(1, 21, dtype=float)


@pytest.mark.parametrize(
    "name,params",
    [
        ("const", [7.0]),
        ("lin", [3.0, 2.0]),
        ("quad", [1.0, 0.5, 0.2]),
        ("cubic", [2.0, 1.0, 0.5, 0.05]),
        ("log_np", [5.0, 2.0, 1.0]),
        ("inv_lin", [100.0, 1.0, 0.5]),
    ],
)
def test_each_template_is_recovered(name: str, params: list[float]) -> None:
    y = M.TEMPLATES[name].f(X, *params) * np.ones_like(X)
    part = M.fit_template(name, X, y)
    assert part is not None and part.error < 1e-6
    assert np.allclose(part(X), y, rtol=1e-4)
    # Light noise (±0.5 %): still the same shape, error of the order of the noise.
    rng = np.random.default_rng(1)
    noisy = y * (1 + rng.uniform(-0.005, 0.005, len(X)))
    part = M.fit_template(name, X, noisy)
    assert part is not None and part.error < 0.005


def test_the_rank_preference_chooses_the_simpler_model_within_kappa() -> None:
    y = 3.0 + 2.0 * X
    m = M.fit_best(X, y, templates=["lin", "quad", "cubic"])
    assert m.parts[0].template == "lin" and m.rank == 2
    # Outside the margin the lower error wins: quadratic data is not called linear.
    y = 1.0 + 0.5 * X + 0.5 * X**2
    m = M.fit_best(X, y, templates=["lin", "quad", "cubic"])
    assert m.parts[0].template == "quad"
    a = M.Model([], error=0.100, rank=2)
    b = M.Model([], error=0.103, rank=4)
    assert M.better(a, b) and not M.better(b, a)  # within max(0.1·0.05, 0.005): rank
    c = M.Model([], error=0.02, rank=5)
    assert M.better(c, a)  # 8 points apart: error


def test_smape_and_gamma_floor() -> None:
    assert M.error(np.array([1.0, 2.0]), np.array([1.0, 2.0])) == 0.0
    # Σ|y−ŷ| / Σ(|y|+|ŷ|) = (1 + 1) / (2 + 4 + 1 + 3) = 0.2
    assert M.error(np.array([2.0, 4.0]), np.array([1.0, 3.0])) == pytest.approx(0.2)
    assert M.error(np.array([2.0, 4.0]), np.array([1.0, 3.0]), "MAPE") == pytest.approx((0.5 + 0.25) / 2)
    assert M.floor_params([0.0, 5e-6, -5e-6, 0.5]) == [-1e-5, 1e-5, -1e-5, 0.5]


def test_a_failing_template_is_dropped_not_raised() -> None:
    x = np.linspace(-5, 5, 11)
    assert M.fit_template("log_np", x, x * 2) is None or np.isfinite(M.fit_template("log_np", x, x * 2).error)
    m = M.fit_best(x, 2 * x + 1, templates=["log_np", "lin"])
    assert m.parts[0].template == "lin"
    with pytest.raises(ValueError):
        M.fit_best([1.0, 2.0], [1.0, 2.0], templates=["cubic"])


def test_a_two_part_split_is_found_exactly() -> None:
    # A cache-boundary step: flat, then growing; the kink after x = 10 (index 9).
    y = np.where(X <= 10, 5.0, 5.0 + 3 * (X - 10))
    m = M.fit_best(X, y, max_parts=2, templates=["const", "lin", "quad"])
    assert len(m.parts) == 2 and m.error < 1e-6
    assert abs(m.splits()[0] - 10) <= 1
    assert m.rank == pytest.approx((10 * 1 + 10 * 2) / 20)


def test_the_heuristic_finds_three_segments() -> None:
    x = np.arange(1, 31, dtype=float)
    y = np.concatenate([np.full(10, 5.0), 5 + 2 * np.arange(1, 11), np.full(10, 25.0)])
    m = M.fit_parts(x, y, 3, templates=["const", "lin"])
    assert m is not None and len(m.parts) == 3 and m.error < 1e-6
    s = m.splits()
    assert abs(s[0] - 10) <= 1 and abs(s[1] - 20) <= 1
    assert np.allclose(m.predict(x), y)


def test_cycles_per_packet() -> None:
    assert M.cycles_per_packet(2.2, 1, 6.76) == pytest.approx(2200 / 6.76)
