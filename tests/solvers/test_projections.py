"""Projections against brute force (a generic constrained minimiser / dense sampling)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from fairengine.solvers import project_l1_ball, project_orthant_ball, project_simplex


def _brute(v, constraints, bounds=None):
    result = minimize(
        lambda x: float(np.sum((x - v) ** 2)),
        np.zeros_like(v),
        jac=lambda x: 2 * (x - v),
        constraints=constraints,
        bounds=bounds,
        method="SLSQP",
        options={"ftol": 1e-14, "maxiter": 500},
    )
    return result.x


@pytest.mark.parametrize("seed", range(10))
def test_simplex_projection_matches_brute_force(seed) -> None:
    rng = np.random.default_rng(seed)
    v = rng.normal(size=6) * 2
    total = float(rng.uniform(0.5, 3))
    x = project_simplex(v, total)
    assert x.min() >= 0 and np.isclose(x.sum(), total)
    brute = _brute(v, [{"type": "eq", "fun": lambda y: y.sum() - total}], [(0, None)] * 6)
    np.testing.assert_allclose(x, brute, atol=1e-6)


@pytest.mark.parametrize("seed", range(10))
def test_l1_ball_projection_matches_brute_force(seed) -> None:
    rng = np.random.default_rng(seed)
    v = rng.normal(size=5) * 2
    radius = float(rng.uniform(0.2, 4))
    x = project_l1_ball(v, radius)
    assert np.abs(x).sum() <= radius + 1e-9
    # brute force over the split x = a - b with a, b >= 0, sum(a + b) <= radius
    result = minimize(
        lambda ab: float(np.sum((ab[:5] - ab[5:] - v) ** 2)),
        np.zeros(10),
        constraints=[{"type": "ineq", "fun": lambda ab: radius - ab.sum()}],
        bounds=[(0, None)] * 10,
        method="SLSQP",
        options={"ftol": 1e-14, "maxiter": 500},
    )
    np.testing.assert_allclose(x, result.x[:5] - result.x[5:], atol=1e-5)


def test_l1_ball_inside_is_identity() -> None:
    v = np.array([0.1, -0.2, 0.3])
    np.testing.assert_array_equal(project_l1_ball(v, 1.0), v)


@pytest.mark.parametrize("seed", range(10))
def test_orthant_ball_projection_is_nearest(seed) -> None:
    rng = np.random.default_rng(seed)
    v = rng.normal(size=4) * 3
    radius = float(rng.uniform(0.5, 3))
    x = project_orthant_ball(v, radius)
    assert x.min() >= 0 and np.linalg.norm(x) <= radius + 1e-12
    # no feasible sample is closer
    samples = np.abs(rng.normal(size=(20000, 4)))
    samples *= (radius * rng.random((20000, 1)) ** 0.25) / np.linalg.norm(samples, axis=1)[:, None]
    assert np.linalg.norm(x - v) <= np.linalg.norm(samples - v, axis=1).min() + 1e-12
