"""The practical statistical-parity game of fair regression (Agarwal et al. 2019, §3.2) on real
data.

The paper's subsampled tasks (2,000 rows, 50/50 split, seed 4): law school and adult, plus
communities & crime. The BEFORE behaviour was a two-point mixture of the best constant and the
unconstrained fit (its loss is the chord between them) that "converged" after one round.
"""

from __future__ import annotations

import numpy as np
import pytest

from fairengine.data import Task, from_frame, load_dataset
from fairengine.data.encoding import FeatureEncoder
from fairengine.methods.fair_regression import FairRegressor, ParityReduction
from fairengine.methods.fair_regression.game import (
    augmented_nu,
    lp_step,
    smooth_multipliers,
)
from fairengine.methods.fair_regression.losses import grid


# -- exact pieces ------------------------------------------------------------------------------
def test_lp_step_duals_certify_the_lp_value() -> None:
    """Strong duality of the LP step: min_{Q,ξ} Q·o + Bξ = min_h o_h + λ_LP·g_h, ||λ_LP||₁ ≤ B."""
    rng = np.random.default_rng(0)
    for _ in range(5):
        objective, g, bound = rng.random(7), rng.normal(size=(7, 12)) * 0.3, 4.0
        q, lam = lp_step(objective, g, bound)
        primal = q @ objective + bound * max(0.0, (q @ g).max())
        assert np.all(lam >= 0) and lam.sum() <= bound + 1e-9
        assert q.sum() == pytest.approx(1.0) and np.all(q >= 0)
        assert primal == pytest.approx(np.min(objective + g @ lam), abs=1e-9)


def test_smooth_multipliers_keep_affine_multipliers() -> None:
    z = grid(10)
    net = np.vstack([0.3 - 0.2 * z, -0.1 + 0.05 * z])  # (groups, N), both signs
    lam = np.concatenate([np.maximum(net, 0).ravel(), np.maximum(-net, 0).ravel()])
    out = smooth_multipliers(lam, 2, 10)
    assert np.all(out >= 0)
    np.testing.assert_allclose(out[:20] - out[20:], net.ravel(), atol=1e-12)


def test_augmented_nu_is_the_authors_formula_on_explicit_augmented_rows() -> None:
    rng = np.random.default_rng(1)
    x = rng.normal(size=(60, 2))
    a = (x[:, 0] > 0).astype(int)
    y = np.clip(0.5 + 0.2 * x[:, 0] + 0.1 * rng.normal(size=60), 0, 1)
    problem = ParityReduction(x, y, a, 0.05, loss="square", n_levels=8, oracle="ls", base="linear")
    first = problem.best_response(np.zeros(problem.dim))
    f = first.payload.predict(x)
    rows = []  # one augmented row per (i, z): weight |c|, label 1{c ≤ 0}, h = 1{f ≥ z}
    for i in range(60):
        for j, z in enumerate(grid(8)):
            c = problem.cost[i, j]
            rows.append(abs(c) * abs(float(c <= 0) - float(f[i] >= z)))
    rows = np.array(rows) / np.mean(np.abs(problem.cost))  # weights normalised to mean 1
    expected = 0.5 * np.std(rows) / np.sqrt(len(rows))
    assert augmented_nu(problem, first) == pytest.approx(expected, rel=1e-12)


# -- real data ---------------------------------------------------------------------------------
def _paper_subsample(task: Task, rows: int = 2000) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """2,000 random rows, 50/50 split (seed 4); the encoded training part."""
    frame = task.frame.sample(min(len(task.frame), rows), random_state=4)
    small = from_frame(frame, target=task.target, sensitive=list(task.sensitive),
                       kind="regression", name=task.name)  # fmt: skip
    train, test = small.split(test_size=0.5, random_state=4)
    z = FeatureEncoder().fit_transform(train.X)
    return z, np.asarray(train.y, float), np.asarray(train.groups)


@pytest.fixture(scope="module")
def law():
    return _paper_subsample(load_dataset("law_school"))


@pytest.fixture(scope="module")
def communities():
    return _paper_subsample(load_dataset("communities_crime"))


@pytest.fixture(scope="module")
def adult():
    frame = load_dataset("adult").frame.copy()
    frame["income"] = (frame["income"].astype(str) == ">50K").astype(float)
    task = from_frame(frame, target="income", sensitive=["sex"], kind="regression", name="adult")
    return _paper_subsample(task)


def _chord(z, y, a, loss: str):
    """(loss of the best constant, loss and disparity of the unconstrained fit): the BEFORE
    frontier was the straight line between them."""
    free = FairRegressor(eps=1.0, loss=loss, n_levels=40).fit(z, y, a)
    return free.constant_objective_, free.game_.objective(), free.ks_disparity(z, a)


@pytest.mark.parametrize("name", ["law", "communities"])
def test_square_loss_frontier_beats_the_constant_unconstrained_chord(name, request) -> None:
    z, y, a = request.getfixturevalue(name)
    const, free, free_disp = _chord(z, y, a, "square")
    for eps, margin in ((0.01, 0.0), (0.04, 0.01), (0.1, 0.02)):
        q = FairRegressor(eps=eps, n_levels=40).fit(z, y, a)
        disp, loss = q.ks_disparity(z, a), q.game_.objective()
        assert disp <= eps + 1e-9
        chord = const + (free - const) * disp / free_disp
        assert loss < chord * (1 - margin), (eps, loss, chord)
        assert q.status_ == "converged" and q.game_.n_iter > 1
        # ν (automatic, on the augmented rows) is far below the whole achievable gain
        assert q.game_.nu * q.objective_scale_ < 0.2 * (const - free)


def test_law_school_mixture_uses_fair_regressors_not_only_the_two_ends(law) -> None:
    z, y, a = law
    q = FairRegressor(eps=0.04, n_levels=40).fit(z, y, a)
    values = q.component_predictions(z)
    unconstrained = FairRegressor(eps=1.0, n_levels=40).fit(z, y, a).component_predictions(z)
    middle = [
        w
        for w, v in zip(q.weights_, values.T, strict=True)
        if np.ptp(v) > 0 and not np.array_equal(v, unconstrained[:, 0])
    ]
    assert sum(middle) > 0.3  # most of the weight is on neither end of the old chord


@pytest.mark.parametrize("eps", [0.01, 0.1, 0.2])
def test_adult_logistic_converges_below_the_cap(adult, eps: float) -> None:
    z, y, a = adult
    q = FairRegressor(eps=eps, loss="logistic", n_levels=40, max_iter=50).fit(z, y, a)
    assert q.status_ == "converged", q.message_
    assert q.game_.n_iter < 50
    assert q.ks_disparity(z, a) <= eps + 1e-9


def test_adult_lr_oracle_converges_below_the_cap(adult) -> None:
    """Adult with the logistic-regression oracle, the slowest game to settle, converges before
    the iteration cap."""
    z, y, a = adult
    q = FairRegressor(eps=0.02, loss="logistic", oracle="lr", n_levels=40).fit(z, y, a)
    assert q.status_ == "converged", q.message_
    assert q.ks_disparity(z, a) <= 0.02 + 1e-9


def test_hitting_the_cap_is_reported(law) -> None:
    z, y, a = law
    q = FairRegressor(eps=0.01, n_levels=40, max_iter=2).fit(z, y, a)
    assert q.status_ == "not_converged" and q.game_.n_iter == 2
    assert q.message_.startswith("Stopped after 2 iterations")
    assert q.ks_disparity(z, a) <= 0.01 + 1e-9  # the LP mixture is still feasible
