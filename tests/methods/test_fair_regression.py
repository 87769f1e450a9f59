"""Fair regression by reductions (Agarwal et al. 2019): exact identities, known answers,
guarantees."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from fairengine import metrics
from fairengine.data import from_frame, load_dataset
from fairengine.export import load_model, save_model
from fairengine.methods import KnobError, get_method
from fairengine.methods.fair_regression import (
    FairRegressor,
    GroupLossReduction,
    ParityReduction,
    convex_envelope,
    cost_matrix,
    discretized_loss,
    grid,
    parity_gamma,
    pointwise_loss,
)
from fairengine.methods.fair_regression.losses import LOGISTIC_C, bins, logistic_terms
from fairengine.solvers import ExponentiatedGradientPlayer, solve_game
from fairengine.solvers.expgrad import Response, best_lambda_value
from fairengine.sweeps.fair_regression import eps_points

LOSS_NAMES = ("square", "absolute", "logistic")


def _synthetic(n: int = 600, seed: int = 0):
    rng = np.random.default_rng(seed)
    a = (rng.random(n) < 0.35).astype(int)
    X = rng.normal(size=(n, 3))
    X[:, 0] += 1.2 * a
    y = np.clip(0.45 + 0.12 * X[:, 0] + 0.05 * X[:, 1] + 0.05 * rng.normal(size=n), 0, 1)
    return X, y, a


# -- §6 exact identities ---------------------------------------------------------------------------
@pytest.mark.parametrize("loss", LOSS_NAMES)
def test_telescoping_identity_and_cost_range(loss: str) -> None:
    n_levels = 16
    rng = np.random.default_rng(1)
    y = np.r_[rng.random(200), 0.0, 1.0]
    u = np.r_[rng.random(200), 1.0, 0.5]
    u[:20] = grid(n_levels)[rng.integers(0, n_levels, 20)]  # exact grid values
    c = cost_matrix(y, loss, n_levels)
    h = u[:, None] >= grid(n_levels)[None, :]
    lhs = discretized_loss(y, u, loss, n_levels) - pointwise_loss(y, 0.5 / n_levels, loss)
    np.testing.assert_allclose(lhs, (c * h).sum(axis=1) / n_levels, atol=1e-13)
    assert np.all(np.abs(c) <= 1 + 1e-12)
    assert np.all(
        np.abs(pointwise_loss(y, u, loss) - discretized_loss(y, u, loss, n_levels))
        <= 0.5 / n_levels + 1e-12
    )


def test_square_cost_closed_form_and_top_level_convention() -> None:
    n_levels = 10
    y = np.linspace(0, 1, 11)
    c = cost_matrix(y, "square", n_levels)
    z = grid(n_levels)
    np.testing.assert_allclose(c[:, :-1], z[None, :-1] - y[:, None], atol=1e-12)
    np.testing.assert_allclose(c[:, -1], (1 - y) / 2 - 0.1 / 8, atol=1e-12)


def test_grid_is_exact_at_grid_values() -> None:
    assert bins(np.array([0.3, 0.29999, 1.0, 0.0]), 40).tolist() == [12, 11, 40, 0]


def _random_problem(seed: int = 0, n_levels: int = 8):
    X, y, a = _synthetic(300, seed)
    a = a + (np.arange(300) % 5 == 0)  # three groups
    problem = ParityReduction(
        X, y, a, 0.05, loss="square", n_levels=n_levels, oracle="ls", base="linear"
    )
    return problem, X, y, a


def test_lagrangian_identity_37() -> None:
    problem, X, y, a = _random_problem()
    rng = np.random.default_rng(2)
    lam = rng.random(problem.dim)
    f = rng.random(len(y))
    h = f[:, None] >= grid(problem.n_levels)[None, :]
    k = bins(f, problem.n_levels)
    gamma = parity_gamma(k, a, problem.p, problem.n_levels)
    net = (lam[: problem.dim // 2] - lam[problem.dim // 2 :]).reshape(gamma.shape)
    cost = np.mean((problem.cost * h).sum(axis=1)) / problem.n_levels
    rhs = np.mean((problem.costs(lam) * h).sum(axis=1)) / problem.n_levels
    assert cost + np.sum(net * gamma) == pytest.approx(rhs, abs=1e-12)


def test_targets_minimise_g_lambda_by_brute_force() -> None:
    problem, *_ = _random_problem(3)
    lam = np.random.default_rng(4).random(problem.dim) * 2
    u = problem.targets(lam)
    costs = problem.costs(lam) / problem.n_levels
    candidates = np.linspace(0, 1, 2001)
    g = (costs[:, None, :] * (candidates[None, :, None] >= grid(problem.n_levels))).sum(axis=2)
    at_u = (costs * (u[:, None] >= grid(problem.n_levels))).sum(axis=1)
    np.testing.assert_allclose(at_u, g.min(axis=1), atol=1e-12)


def test_gamma_matches_brute_force_and_its_identities() -> None:
    problem, X, y, a = _random_problem(5)
    f = np.random.default_rng(6).random(len(y))
    gamma = parity_gamma(bins(f, problem.n_levels), a, problem.p, problem.n_levels)
    for g in range(problem.constraint.n_groups):
        for j, z in enumerate(grid(problem.n_levels)):
            expected = np.mean(f[a == g] >= z) - np.mean(f >= z)
            assert gamma[g, j] == pytest.approx(expected, abs=1e-12)
    np.testing.assert_allclose(problem.p @ gamma, 0, atol=1e-12)
    assert np.all(np.abs(gamma) <= (1 - problem.p)[:, None] + 1e-12)


def test_eg_player_stays_inside_the_l1_ball() -> None:
    player = ExponentiatedGradientPlayer(6, bound=3.0, eta=5.0)
    rng = np.random.default_rng(0)
    for _ in range(50):
        lam = player.update(rng.normal(size=6) * 10)
        assert np.all(lam >= 0) and lam.sum() <= 3.0 * (1 + 1e-12)  # < B up to rounding
    assert best_lambda_value(1.0, np.array([-0.1, 0.2]), 3.0) == pytest.approx(1.6)
    assert best_lambda_value(1.0, np.array([-0.1, -0.2]), 3.0) == pytest.approx(1.0)


def test_group_loss_oracle_weights() -> None:
    X, y, a = _synthetic(100)
    problem = GroupLossReduction(X, y, a, 0.1, loss="square", base="linear")
    lam = np.array([0.3, 1.7])
    n_a = np.bincount(a)
    np.testing.assert_allclose(problem.weights(lam), 1 / 100 + lam[a] / n_a[a])


def test_corrected_lr_weights_recover_the_target_score() -> None:
    """§3.3c: argmin_u W1 ℓ(0,u) + W2 ℓ(1,u) is U with W2 = σ(C(2U−1)), not with W2 = U."""
    u_grid = np.linspace(0, 1, 100001)
    l0, l1 = logistic_terms(u_grid)
    for target in (0.1, 0.35, 0.9):
        w2 = 1 / (1 + np.exp(-LOGISTIC_C * (2 * target - 1)))
        assert u_grid[np.argmin((1 - w2) * l0 + w2 * l1)] == pytest.approx(target, abs=1e-4)
        wrong = u_grid[np.argmin((1 - target) * l0 + target * l1)]
        assert abs(wrong - target) > 0.05


# -- known answers ---------------------------------------------------------------------------------
def _two_levels(n: int = 400, p1: float = 0.65, y0: float = 0.2, y1: float = 0.75):
    a = (np.arange(n) < p1 * n).astype(int)
    y = np.where(a == 1, y1, y0)
    return a[:, None].astype(float), y, a


def test_known_answer_eps_zero_and_unconstrained() -> None:
    X, y, a = _two_levels()
    p0, p1 = 0.35, 0.65
    n_levels = 20
    fair = FairRegressor(eps=0.0, n_levels=n_levels, max_iter=30).fit(X, y, a)
    optimum = p0 * p1 * (0.75 - 0.2) ** 2 / 2
    loss = np.dot(
        fair.weights_,
        [np.mean(pointwise_loss(y, v, "square")) for v in fair.component_predictions(X).T],
    )
    assert loss == pytest.approx(optimum, abs=1 / n_levels + 2 * fair.game_.nu)
    assert fair.ks_disparity(X, a) <= 1e-12
    free = FairRegressor(eps=1.0, n_levels=n_levels).fit(X, y, a)
    assert free.ks_disparity(X, a) == pytest.approx(max(p0, p1))


def test_ks_by_hand_and_exact_mixture_cdf() -> None:
    groups = np.array([0, 0, 1, 1])
    assert metrics.sp_ks(None, np.array([0.1, 0.2, 0.3, 0.4]), groups) == pytest.approx(0.5)
    X, y, a = _synthetic(400)
    q = FairRegressor(eps=0.03, n_levels=20, max_iter=30).fit(X, y, a)
    assert len(q.weights_) >= 2 and q.weights_.sum() == pytest.approx(1.0)
    thresholds = np.linspace(0, 1, 21)
    exact = q.predict_cdf(X, thresholds).mean(axis=0)
    draws = np.mean(
        [[np.mean(q.predict(X, random_state=s) <= t) for t in thresholds] for s in range(200)],
        axis=0,
    )
    np.testing.assert_allclose(draws, exact, atol=0.01)
    averaged = q.component_predictions(X) @ q.weights_
    assert metrics.sp_ks(None, averaged, a) != pytest.approx(q.ks_disparity(X, a), abs=1e-3)


@pytest.mark.parametrize("eps", [0.01, 0.05, 0.15])
def test_training_disparity_within_eps_plus_theorem_slack(eps: float) -> None:
    X, y, a = _synthetic(800, 7)
    q = FairRegressor(eps=eps, n_levels=20, max_iter=40).fit(X, y, a)
    game = q.game_
    assert q.ks_disparity(X, a) <= eps + (2 + 2 * game.nu) / game.bound + 1e-9
    assert q.ks_disparity(X, a) <= eps + 1e-9  # the LP step makes it hold exactly in practice


def test_frontier_roughly_monotone_and_ends_at_unconstrained() -> None:
    X, y, a = _synthetic(800, 8)
    losses = []
    for eps in (0.01, 0.05, 0.2, 1.0):
        q = FairRegressor(eps=eps, n_levels=20, max_iter=30).fit(X, y, a)
        losses.append(q.game_.objective())
    assert all(b <= a + 2e-3 for a, b in zip(losses, losses[1:], strict=False))


@pytest.mark.parametrize("oracle", ["lr", "cs"])
def test_other_oracles_respect_the_constraint(oracle: str) -> None:
    X, y, a = _synthetic(150, 9)
    q = FairRegressor(eps=0.1, n_levels=10, oracle=oracle, max_iter=8).fit(X, y, a)
    assert q.ks_disparity(X, a) <= 0.1 + 1e-9
    assert q.predict(X).shape == (150,)


def test_paper_mode_meets_theorem_4_on_exact_oracle_case() -> None:
    X, y, a = _two_levels(100, 0.6, 0.2, 0.8)
    q = FairRegressor(eps=0.1, n_levels=10, mode="paper", bound=2.0, nu=0.2, max_iter=4000)
    q.fit(X, y, a)
    assert q.weights_.sum() == pytest.approx(1.0)
    assert q.game_.converged and q.game_.gap <= 0.2  # ~100 iterations with η = ν/(8B)
    assert q.ks_disparity(X, a) <= 0.1 + (2 + 2 * 0.2) / 2.0 + 1e-9
    constant = q.constant_objective_  # every constant is feasible (§6.9)
    assert q.game_.objective() <= constant + 2 * 0.2 + 1e-9


# -- bounded group loss ----------------------------------------------------------------------------
def _constants_case(n: int = 400):
    a = (np.arange(n) < 0.4 * n).astype(int)
    y = np.where(a == 1, 0.3, 0.7)
    return np.zeros((n, 0)), y, a


def test_bgl_constants_closed_form() -> None:
    X, y, a = _constants_case()
    zeta = 0.03
    q = FairRegressor("bounded_group_loss", eps=zeta, max_iter=200, bound=50).fit(X, y, a)
    mu0, mu1, p0 = 0.3, 0.7, 0.4  # group 1 (a=1) has mean 0.3 here
    mean = p0 * mu0 + (1 - p0) * mu1
    best = float(np.clip(mean, mu1 - np.sqrt(2 * zeta), mu0 + np.sqrt(2 * zeta)))
    values = q.component_predictions(X)
    group = (
        np.array(
            [
                [np.mean(pointwise_loss(y[a == g], v[a == g], "square")) for g in (0, 1)]
                for v in values.T
            ]
        ).T
        @ q.weights_
    )
    assert group.max() <= zeta + 5e-3
    loss = np.mean(pointwise_loss(y, best, "square"))
    assert q.game_.objective() == pytest.approx(loss, abs=5e-3)


def test_bgl_matches_fairlearn() -> None:
    from fairlearn.reductions import BoundedGroupLoss, ExponentiatedGradient, SquareLoss
    from sklearn.linear_model import LinearRegression

    X, y, a = _synthetic(500, 11)
    y = np.clip(y + 0.08 * a * np.random.default_rng(0).normal(size=len(y)), 0, 1)
    zeta = 0.0035  # paper units (y − u)²/2; fairlearn's (y − u)² bound is 2ζ
    ours = FairRegressor("bounded_group_loss", eps=zeta, max_iter=50).fit(X, y, a)
    ours_group = np.array(
        [
            [np.mean(pointwise_loss(y[a == g], v[a == g], "square")) for g in (0, 1)]
            for v in ours.component_predictions(X).T
        ]
    ).T
    ours_group = ours_group @ ours.weights_
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = ExponentiatedGradient(
            LinearRegression(),
            BoundedGroupLoss(SquareLoss(0, 1), upper_bound=2 * zeta),
            eps=0.01,
            max_iter=50,
        ).fit(X, y, sensitive_features=a)
    preds = np.column_stack([np.clip(p.predict(X), 0, 1) for p in theirs.predictors_])
    weights = np.asarray(theirs.weights_)
    theirs_group = (
        np.array([[np.mean((y[a == g] - v[a == g]) ** 2) / 2 for g in (0, 1)] for v in preds.T]).T
        @ weights
    )
    np.testing.assert_allclose(ours_group, theirs_group, atol=5e-4)


def test_bgl_infeasible_bound_gives_a_message() -> None:
    rng = np.random.default_rng(0)
    a = (np.arange(400) % 2).astype(int)
    y = np.where(a == 1, rng.integers(0, 2, 400).astype(float), 0.5)
    q = FairRegressor("bounded_group_loss", eps=0.01, max_iter=30).fit(np.zeros((400, 0)), y, a)
    assert q.status_ in ("infeasible", "not_converged")
    assert "ζ" in q.message_
    assert q.predict(np.zeros((5, 0))).shape == (5,)


# -- method, export, frontier ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def law_small():
    frame = load_dataset("law_school").frame.sample(1500, random_state=0)
    task = from_frame(frame, target="ugpa_scaled", sensitive=["race"], kind="regression")
    return task.split(random_state=0)


def test_run_reports_exact_metrics_and_artifacts(law_small, tmp_path) -> None:
    train, test = law_small
    result = get_method("fair_regression").run(train, test, eps=0.05, n_levels=20, max_iter=20)
    for split in ("train", "test"):
        assert set(result.metrics[split]) == {
            "scaled_loss", "sp_ks", "scaled_max_group_loss",  # the method's, [0, 1] scale
            "loss", "max_group_loss",  # the shared evaluation, target units
        }  # fmt: skip
        lo, hi = result.model.regressor.y_min_, result.model.regressor.y_max_
        if result.model.regressor.loss == "square":
            assert result.metrics[split]["loss"] == pytest.approx(
                result.metrics[split]["scaled_loss"] * (hi - lo) ** 2, rel=0.05
            )
    assert result.metrics["train"]["sp_ks"] <= 0.05 + 1e-9
    z = result.model.encode(train.X)
    assert result.metrics["train"]["sp_ks"] == pytest.approx(
        result.model.regressor.ks_disparity(z, train.groups)
    )
    arts = result.artifacts
    assert {"unconstrained", "seo"} <= set(arts["baselines"]["baseline"])
    assert {"overall", *map(str, train.group_names)} <= set(arts["group_cdfs"]["group"])
    assert arts["ks"]["train"]["gap"] == pytest.approx(result.metrics["train"]["sp_ks"])
    path = save_model(result.model, tmp_path / "q.fairmodel")
    loaded = load_model(path)
    np.testing.assert_array_equal(loaded.predict(test.X, 3), result.model.predict(test.X, 3))
    thresholds = np.linspace(1.5, 4, 7) / 4
    np.testing.assert_allclose(
        loaded.predict_cdf(test.X, thresholds), result.model.predict_cdf(test.X, thresholds)
    )


def test_cs_oracle_refuses_large_tasks(law_small) -> None:
    train, test = law_small
    big = load_dataset("law_school").split(random_state=0)[0]
    with pytest.raises(KnobError, match="2,000"):
        get_method("fair_regression").run(big, test, oracle="cs")
    del train


def test_convex_envelope() -> None:
    x = np.array([0.0, 0.1, 0.2, 0.3, 0.25])
    y = np.array([1.0, 0.9, 0.5, 0.45, 0.6])
    assert convex_envelope(x, y).tolist() == [True, False, True, True, False]


def test_eps_points_are_cached_and_mark_the_envelope(law_small, tmp_path) -> None:
    from fairengine.frontier import FrontierStore

    train, test = law_small
    store = FrontierStore(tmp_path)
    points = eps_points(train, test, (0.01, 0.1, 1.0), store=store, n_levels=20, max_iter=10)
    assert set(points["split"]) == {"train", "test"} and points["envelope"].any()
    again = eps_points(train, test, (0.01, 0.1, 1.0), store=store, n_levels=20, max_iter=10)
    assert again["cached"].all()
    assert isinstance(points, pd.DataFrame)


def test_solve_game_on_a_two_point_game() -> None:
    """A toy game: h_0 infeasible & cheap, h_1 feasible & dear; Q mixes them to g = 0."""
    options = [Response(0.0, np.array([0.5])), Response(1.0, np.array([-0.5]))]

    def best(lam: np.ndarray) -> Response:
        return min(options, key=lambda r: r.objective + lam @ r.constraints)

    result = solve_game(best, 1, bound=10.0, nu=1e-6, max_iter=30)
    assert result.constraints()[0] <= 1e-9
    assert result.objective() == pytest.approx(0.5, abs=1e-6)


def test_solve_game_refuses_a_misspelt_keyword() -> None:
    """The game's settings are explicit keywords: a misspelt one is an error, not ignored."""
    options = [Response(0.0, np.array([0.5])), Response(1.0, np.array([-0.5]))]

    def best(lam: np.ndarray) -> Response:
        return min(options, key=lambda r: r.objective + lam @ r.constraints)

    assert solve_game(best, 1, bound=10.0, nu=0.0, max_iter=7, lp_step=False).n_iter == 7
    with pytest.raises(TypeError):
        solve_game(best, 1, bound=10.0, nu=0.0, max_iters=7)


@pytest.mark.parametrize(
    ("constraint", "loss", "expected"),
    [
        ("bounded_group_loss", "square", 0.2),  # ℓ = (y − u)²/2: the MSE bound is 2ζ
        ("bounded_group_loss", "absolute", 0.1),
        ("bounded_group_loss", "logistic", None),
        ("statistical_parity", "square", None),
    ],
)
def test_group_loss_bound_is_on_the_reported_losses_scale(constraint, loss, expected) -> None:
    from fairengine.methods.fair_regression.losses import group_loss_bound, pointwise_loss

    assert group_loss_bound(constraint, loss, 0.1) == expected
    if expected is not None:  # a group whose ℓ equals ζ reports exactly the bound
        y, u = np.zeros(1), np.full(1, np.sqrt(0.2) if loss == "square" else 0.1)
        reported = (y - u) ** 2 if loss == "square" else np.abs(y - u)
        assert pointwise_loss(y, u, loss)[0] == pytest.approx(0.1)
        assert reported[0] == pytest.approx(expected)
