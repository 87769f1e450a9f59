"""The one least-squares kernel on real rows (law school, 600 encoded rows), checked against
closed forms rather than recorded values: the weighted normal equations, the ridge path's
agreement with the exact one, column-by-column solves, and the minimum-norm solution of a
rank-deficient design."""

from __future__ import annotations

import numpy as np
import pytest

from fairengine.solvers.least_squares import LeastSquares
from tests.methods.game_goldens import law_rows


@pytest.fixture(scope="module")
def law():
    z, y, a = law_rows()
    keep = np.ptp(z, axis=0) > 0  # constant columns make the design rank-deficient
    return z[:, keep], y, a


def test_ridge_and_exact_paths_agree_and_solve_the_weighted_normal_equations(law) -> None:
    z, y, a = law
    w = np.where(a == a[0], 3.0, 0.5)
    exact = LeastSquares(z, ridge=None)
    ridged = LeastSquares(z, ridge=1e-10)
    for weight in (None, w):
        beta = exact.coef(y, weight)
        design = np.column_stack([z, np.ones(len(z))])
        ww = np.ones(len(y)) if weight is None else weight
        gradient = design.T @ (ww * (design @ beta - y))
        assert np.max(np.abs(gradient)) < 1e-8 * np.abs(design.T @ (ww * y)).max()
        np.testing.assert_allclose(ridged.coef(y, weight), beta, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(exact.fitted(y, weight), design @ beta, atol=1e-12)


def test_factor_cache_follows_the_weights_and_columns_are_independent(law) -> None:
    z, y, a = law
    ls = LeastSquares(z)
    targets = np.column_stack([y, y**2, a.astype(float)])
    for weight in (None, 1.0 + (a == a[0]), None):  # the cached factor must follow the weights
        both = ls.coef(targets, weight)
        np.testing.assert_array_equal(both, LeastSquares(z).coef(targets, weight))
        for j in range(targets.shape[1]):  # (one column at a time: other BLAS kernels)
            np.testing.assert_allclose(both[:, j], ls.coef(targets[:, j], weight), rtol=1e-6)
    with pytest.raises(ValueError, match="numeric ridge"):
        LeastSquares(z, ridge=None).solve(np.ones(z.shape[1] + 1))


def test_minimum_norm_on_a_rank_deficient_design(law) -> None:
    """A duplicated column: the exact path splits its coefficient evenly (minimum norm)."""
    z, y, _ = law
    doubled = np.column_stack([z, z[:, :1]])
    beta = LeastSquares(doubled, ridge=None).coef(y)
    assert beta[0] == pytest.approx(beta[z.shape[1]], rel=1e-6)
    fitted = LeastSquares(z, ridge=None).fitted(y)
    np.testing.assert_allclose(LeastSquares(doubled, ridge=None).fitted(y), fitted, atol=1e-9)
