"""Constraints as objects and one least-squares kernel.

* The games reproduce their recorded fits to rounding (``tests/methods/game_goldens.py``, which
  says what the golden guards): fair regression SP (practical LS / LR, paper), BGL (practical,
  paper, logistic), the proxy-fair classifier (equal error / DP, both learners) and the
  multiaccurate proxies that share the least-squares kernel.
* A constraint written only in this file runs through the generic solver unchanged.
"""

from __future__ import annotations

import numpy as np
import pytest

from fairengine.data import load_dataset
from fairengine.data.encoding import FeatureEncoder
from fairengine.methods.fair_regression import FairRegressor
from fairengine.methods.fair_regression.constraints import BoundedGroupLoss, StatisticalParity
from fairengine.methods.fair_regression.losses import bins, pointwise_loss
from fairengine.methods.multiaccurate_proxy import ProxyParity
from fairengine.solvers import Constraint, Reduction, solve_game
from fairengine.solvers.oracles import Halfspace, PairedRegressionOracle, best_intercept
from tests.methods import game_goldens
from tests.methods.golden_cases import ROUNDING


@pytest.fixture(scope="module")
def goldens() -> tuple[dict, dict]:
    saved = np.load(game_goldens.PATH)
    return {k: saved[k] for k in saved.files}, game_goldens.fit_all()


def test_games_reproduce_their_recorded_fits(goldens) -> None:
    saved, now = goldens
    assert set(saved) == set(now)
    for key, expected in saved.items():
        got = now[key]
        assert got.shape == expected.shape, key
        np.testing.assert_allclose(got, expected, **ROUNDING, err_msg=key)


# -- the constraint protocol: signed weights are the Lagrangian's λ-part of the costs ------------
@pytest.fixture(scope="module")
def law():
    return game_goldens.law_rows()


@pytest.fixture(scope="module")
def adult():
    return game_goldens.adult_rows()


def _lams(dim: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.exponential(size=dim) * s for s in (0.1, 1.0, 20.0)]


def test_parity_signed_weights_match_the_constraint_values(law) -> None:
    """λ·(g(f) + ε) = (1/(nN)) Σ_i Σ_z 1[f_i ≥ z] c^λ_{i,z} (Eq. 12's λ-part), on real rows."""
    z, y, a = law
    _, codes = np.unique(a, return_inverse=True)
    n_levels = 20
    parity = StatisticalParity(0.03, n_levels).load(codes)
    assert parity.dim == len(parity.names) == 2 * parity.n_groups * n_levels
    f = FairRegressor(eps=1.0, n_levels=n_levels, max_iter=2).fit(z, y, a).predict(z)
    above = bins(f, n_levels)[:, None] >= np.arange(1, n_levels + 1)[None, :]
    for lam in _lams(parity.dim, 0):
        lhs = lam @ (parity.values(f) + parity.bound)
        rhs = np.sum(above * parity.signed_weights(lam)) / (len(f) * n_levels)
        assert lhs == pytest.approx(rhs, rel=1e-10, abs=1e-12)
        # netting λ⁺ against λ⁻ changes neither the costs nor lowers L(h, ·)
        projected = parity.project(lam)
        np.testing.assert_allclose(
            parity.signed_weights(projected), parity.signed_weights(lam), atol=1e-9
        )
        assert projected @ parity.values(f) >= lam @ parity.values(f) - 1e-12


def test_group_loss_signed_weights_match_the_constraint_values(law) -> None:
    z, y, a = law
    _, codes = np.unique(a, return_inverse=True)
    target = (y - y.min()) / (y.max() - y.min())
    bgl = BoundedGroupLoss(0.004, "square").load(target, codes)
    assert len(bgl.names) == bgl.dim == len(bgl.bound) == len(np.unique(codes))
    f = np.clip(target + 0.1 * np.sin(np.arange(len(y))), 0, 1)
    losses = pointwise_loss(target, f, "square")
    for lam in _lams(bgl.dim, 1):
        assert lam @ (bgl.values(f) + bgl.bound) == pytest.approx(
            bgl.signed_weights(lam) @ losses, rel=1e-12
        )


@pytest.mark.parametrize("kind", ["equal_error", "demographic_parity"])
def test_proxy_signed_weights_match_the_constraint_values(adult, kind: str) -> None:
    """λ·(g(h) − g(0)) = Σ_i h_i s_i: the signed weights are the λ-part of c1 − c0."""
    x, y, soft = adult
    proxy = ProxyParity(0.02, kind).load(y, soft)
    assert len(proxy.names) == proxy.dim == len(proxy.bound) == 2 * soft.shape[1]
    h = (x[:, 0] > np.median(x[:, 0])).astype(float)
    for lam in _lams(proxy.dim, 2):
        lhs = lam @ (proxy.values(h) - proxy.values(np.zeros_like(h)))
        assert lhs == pytest.approx(proxy.signed_weights(lam) @ h, rel=1e-10, abs=1e-14)


# -- a new constraint, defined only here, through the unchanged generic solver --------------------
class SelectionCap(Constraint):
    """Toy: every group's selection rate P(h = 1 | A = a) ≤ cap (one-sided, |A| constraints)."""

    def __init__(self, cap: float) -> None:
        self.cap = cap

    def load(self, codes: np.ndarray) -> SelectionCap:
        self.codes = np.asarray(codes)
        self.sizes = np.bincount(self.codes).astype(float)
        return self

    @property
    def dim(self) -> int:
        return len(self.sizes)

    @property
    def names(self) -> list[str]:
        return [f"selection[a={a}]" for a in range(self.dim)]

    @property
    def bound(self) -> np.ndarray:
        return np.full(self.dim, self.cap)

    def gamma(self, predictions: np.ndarray) -> np.ndarray:
        return np.bincount(self.codes, weights=predictions, minlength=self.dim) / self.sizes

    def signed_weights(self, lam: np.ndarray) -> np.ndarray:
        return (np.asarray(lam, float) / self.sizes)[self.codes]


def test_an_incomplete_constraint_cannot_be_built() -> None:
    class NoWeights(SelectionCap):
        signed_weights = Constraint.signed_weights  # the abstract one

    with pytest.raises(TypeError, match="signed_weights"):
        NoWeights(0.1)


def test_a_constraint_defined_in_the_test_runs_through_the_generic_solver() -> None:
    """Adult (sex, 1,500 rows): cap every group's selection rate at 0.12 with the paired-regression
    CSC learner; the unconstrained halfspace selects far more men, the game's mixture meets the
    cap and still beats predicting 0 for everybody."""
    task = load_dataset("adult", sensitive=["sex"])
    rows = task.frame.sample(1500, random_state=1).index
    small = task.subset(np.flatnonzero(task.frame.index.isin(rows)))
    x = FeatureEncoder().fit_transform(small.X)
    y = np.asarray(small.y, float)
    _, codes = np.unique(np.asarray(small.groups), return_inverse=True)
    cap = SelectionCap(0.12).load(codes)
    oracle = PairedRegressionOracle().fit(x, np.ones(len(y)))
    own = (1 - 2 * y) / len(y)

    def learn(signed: np.ndarray) -> Halfspace:
        half = oracle.best_response(own + signed)
        return Halfspace(half.coef, best_intercept(x @ half.coef, np.ones(len(y)), own + signed))

    reduction = Reduction(cap, learn, lambda h: h.predict(x), lambda p: float(np.mean(p != y)))
    free = reduction(np.zeros(cap.dim))
    assert free.constraints.max() > 0.05  # the cap binds
    result = solve_game(reduction, cap, bound=20.0, nu=1e-3, max_iter=40)
    assert result.constraints().max() <= 0.01
    assert len(result.responses) > 1  # a genuine mixture
    assert free.objective < result.objective() < float(np.mean(y))
