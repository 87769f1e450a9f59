"""Simplex / cone least squares: KKT certificates, known answers, LP helpers."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from fairengine.solvers import (
    cone_least_squares,
    max_yield_weights,
    simplex_kkt_violation,
    simplex_least_squares,
)
from tests.solvers.certificates import in_convex_hull


def _slsqp(A, t):
    n = len(A)
    return minimize(
        lambda q: float(np.sum((q @ A - t) ** 2)),
        np.full(n, 1 / n),
        constraints=[{"type": "eq", "fun": lambda q: q.sum() - 1}],
        bounds=[(0, None)] * n,
        method="SLSQP",
        options={"ftol": 1e-15, "maxiter": 1000},
    ).x


@pytest.mark.parametrize("seed", range(40))
def test_simplex_least_squares_is_optimal(seed) -> None:
    rng = np.random.default_rng(seed)
    n_rows, k = rng.integers(1, 9), rng.integers(2, 6)
    A = rng.dirichlet(np.ones(k) * 0.5, size=n_rows)
    target = np.full(k, 1 / k)
    q = simplex_least_squares(A, target)
    assert q.min() >= 0 and np.isclose(q.sum(), 1)
    assert simplex_kkt_violation(A, target, q) <= 1e-9
    best = _slsqp(A, target)
    assert np.linalg.norm(q @ A - target) <= np.linalg.norm(best @ A - target) + 1e-8


@pytest.mark.parametrize("seed", range(20))
def test_cone_least_squares_kkt(seed) -> None:
    rng = np.random.default_rng(seed)
    A = rng.dirichlet(np.ones(4), size=rng.integers(1, 7))
    target = np.full(4, 0.25)
    q = cone_least_squares(A, target)
    residual = target - q @ A
    gradient = A @ residual  # <U - qA, a_j>
    assert q.min() >= 0
    assert gradient.max() <= 1e-9
    np.testing.assert_allclose(gradient[q > 1e-12], 0, atol=1e-9)


def test_membership_and_max_yield() -> None:
    A = np.array([[0.9, 0.1], [0.3, 0.7], [0.5, 0.5]])
    assert in_convex_hull(A, [0.5, 0.5])
    assert not in_convex_hull(A[:1], [0.5, 0.5])
    mass = np.array([0.25, 0.25, 0.5])
    q = max_yield_weights(A, mass, np.array([0.5, 0.5]))
    # optimal q = (a, 2a, 1 - 3a) minimises max(8a, 2 - 6a): a = 1/7, yield 1/t = 7/8
    np.testing.assert_allclose(q, [1 / 7, 2 / 7, 4 / 7], atol=1e-7)
    np.testing.assert_allclose(q @ A, [0.5, 0.5], atol=1e-9)
    assert max_yield_weights(A[:1], mass[:1], np.array([0.5, 0.5])) is None
