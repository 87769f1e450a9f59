"""The dual player and the paired-regression CSC oracle."""

from __future__ import annotations

import itertools

import numpy as np

from fairengine.solvers import PairedRegressionOracle, ProjectedGradientAscent
from tests.solvers.certificates import csc_objective


def test_dual_player_stays_feasible_and_ascends() -> None:
    player = ProjectedGradientAscent(3, step=2.0, radius=1.5)
    for _ in range(50):
        lam = player.update(np.array([1.0, -1.0, 0.5]))
        assert lam.min() >= 0 and np.linalg.norm(lam) <= 1.5 + 1e-12
    assert lam[1] == 0 and lam[0] > lam[2] > 0


def test_oracle_is_exact_on_cells() -> None:
    # One-hot cells: the weighted regression predicts each cell's mean cost, so labelling the
    # cells with negative mean is the exact CSC best response over cell functions.
    rng = np.random.default_rng(0)
    cells = rng.integers(0, 4, size=400)
    X = np.eye(4)[cells][:, 1:]
    weight = rng.uniform(0.1, 1, size=400)
    cost = rng.normal(size=400) + np.array([0.5, -0.4, 0.2, -1.0])[cells]
    h = PairedRegressionOracle(ridge=0).fit(X, weight).best_response(cost)
    labels = h.predict(X)
    best = min(
        csc_objective(np.array(assign)[cells], weight, cost)
        for assign in itertools.product((0, 1), repeat=4)
    )
    assert np.isclose(csc_objective(labels, weight, cost), best)


def test_grouped_fast_path_equals_general() -> None:
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 3))
    z = rng.integers(0, 3, size=200)
    w = rng.uniform(size=200)
    s = np.array([0.3, -0.2, 0.1])
    oracle = PairedRegressionOracle().fit(X, w, z, 3)
    a, b = oracle.best_response(s[z]), oracle.best_response_grouped(s)
    np.testing.assert_allclose(a.coef, b.coef)
    assert np.isclose(a.intercept, b.intercept)


def test_best_intercept_is_exact_over_thresholds() -> None:
    from fairengine.solvers.oracles import best_intercept

    rng = np.random.default_rng(2)
    for trial in range(20):
        scores = rng.integers(0, 15, size=60).astype(float)  # ties on purpose
        weight = rng.uniform(0.1, 1, size=60)
        cost = rng.normal(size=60) + (0.3 if trial % 2 else -0.3)
        b = best_intercept(scores, weight, cost)
        got = csc_objective((scores + b > 0).astype(float), weight, cost)
        cuts = np.concatenate([np.unique(scores) - 0.5, [scores.max() + 1]])
        brute = min(csc_objective((scores > c).astype(float), weight, cost) for c in cuts)
        assert np.isclose(got, brute)
        # never worse than the regression's own threshold (0) or labelling nobody
        assert got <= csc_objective((scores - 7 > 0).astype(float), weight, cost) + 1e-12
        assert got <= 1e-12
