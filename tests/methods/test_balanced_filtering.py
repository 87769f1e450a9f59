"""Balanced filtering (Deng et al. 2023): invariants and known answers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairengine import metrics
from fairengine.export import load_model, save_model
from fairengine.methods import get_method
from fairengine.methods.balanced_filtering import (
    BalancedFilter,
    acceptance_rate_of,
    beta_min,
    conditional_distribution_matrix,
    disclosivity,
    filter_rows,
    filtered_distribution,
    hull_distance,
    imbalance,
    sampling_probabilities,
)
from fairengine.methods.balanced_filtering.game import SplitGame, play_split_game, split_cost
from fairengine.methods.balanced_filtering.model import soft_matrix
from fairengine.methods.balanced_filtering.proxies import interpolated_weights
from fairengine.solvers import simplex_kkt_violation
from tests.solvers.certificates import in_convex_hull

CASE_A = np.array([[0.9, 0.1], [0.3, 0.7]])
CASE_B = np.array([[0.9, 0.1], [0.7, 0.3]])
HALF = np.array([0.5, 0.5])


def _synthetic(n: int, separation: float, seed: int = 0, rates=(0.7, 0.2, 0.1), d: int = 4):
    """Case D: x ~ N(mu_z * s, I), groups with base rates ``rates``."""
    rng = np.random.default_rng(seed)
    z = rng.choice(len(rates), size=n, p=rates)
    mu = rng.normal(size=(len(rates), d))
    X = mu[z] * separation + rng.normal(size=(n, d))
    return pd.DataFrame(X, columns=[f"x{i}" for i in range(d)]), z


# ---------------------------------------------------------------- definitions


def test_case_a_algorithm_1() -> None:
    q, rho = sampling_probabilities(CASE_A, HALF)
    np.testing.assert_allclose(q, [1 / 3, 2 / 3], atol=1e-9)
    np.testing.assert_allclose(rho, [0.5, 1.0], atol=1e-9)
    assert np.isclose(acceptance_rate_of(HALF, rho), 0.75)
    r = HALF @ CASE_A
    assert np.isclose(disclosivity(CASE_A, r), 0.3)
    assert np.isclose(imbalance(r), np.sqrt(0.02))
    np.testing.assert_allclose(filtered_distribution(CASE_A, HALF, rho), HALF, atol=1e-9)


def test_case_a_interpolation() -> None:
    # leaf 0: 9 of group 0 and 1 of group 1; leaf 1: 3 and 7
    leaves = np.repeat([0, 0, 1, 1], [9, 1, 3, 7])
    z = np.repeat([0, 1, 0, 1], [9, 1, 3, 7])
    rho = np.array([0.5, 1.0])
    A_eta, r_eta = soft_matrix(interpolated_weights(leaves, 2, 0.5), z, 2)
    np.testing.assert_allclose(A_eta, [[0.75, 0.25], [0.45, 0.55]])
    r = np.array([0.6, 0.4])
    assert np.isclose(disclosivity(A_eta, r), 0.15)
    after = filtered_distribution(A_eta, r_eta, rho)
    np.testing.assert_allclose(after, [0.55, 0.45])
    assert np.isclose(imbalance(after), 0.070711, atol=1e-6)
    assert np.isclose(acceptance_rate_of(r_eta, rho), 0.75)
    A1, r1 = soft_matrix(interpolated_weights(leaves, 2, 1.0), z, 2)
    assert np.isclose(disclosivity(A1, r), 0) and np.isclose(
        imbalance(filtered_distribution(A1, r1, rho)), np.sqrt(0.02)
    )


def test_case_b_relaxed_pitfall() -> None:
    q, rho = sampling_probabilities(CASE_B, HALF)
    np.testing.assert_allclose(q, [0, 1], atol=1e-9)
    np.testing.assert_allclose(rho, [0, 1], atol=1e-9)
    assert np.isclose(hull_distance(CASE_B), 0.282843, atol=1e-6)
    assert np.isclose(hull_distance(CASE_B, relaxed=True), 0.262613, atol=1e-6)
    q_relaxed, rho_relaxed = sampling_probabilities(CASE_B, HALF, relaxed=True, max_yield=False)
    np.testing.assert_allclose(q_relaxed, [0, 25 / 29], atol=1e-9)
    realised = filtered_distribution(CASE_B, HALF, rho_relaxed)
    assert np.isclose(imbalance(realised), 0.282843, atol=1e-6)
    _, rho_tie = sampling_probabilities(CASE_B, HALF, relaxed=True)  # LP on the normalised point
    np.testing.assert_allclose(rho_tie, [0, 1], atol=1e-9)


@pytest.mark.parametrize("seed", range(30))
def test_algorithm_1_invariants(seed) -> None:
    rng = np.random.default_rng(seed)
    k, n_leaves = int(rng.integers(2, 6)), int(rng.integers(1, 9))
    A = rng.dirichlet(np.ones(k) * 0.7, size=n_leaves)
    r_hat = rng.dirichlet(np.ones(n_leaves))
    target = np.full(k, 1 / k)
    for relaxed in (False, True):
        q, rho = sampling_probabilities(A, r_hat, relaxed=relaxed)
        assert q.min() >= -1e-12 and np.isclose(q.sum(), 1)
        assert rho.min() >= 0 and rho.max() <= 1 + 1e-12 and np.isclose(rho.max(), 1)
        after = filtered_distribution(A, r_hat, rho)
        np.testing.assert_allclose(after, q @ A, atol=1e-7)  # accepted = qA / sum q
        # the accepted distribution is the hull projection: KKT certificate
        assert simplex_kkt_violation(A, target, q) <= 1e-7
        assert np.isclose(imbalance(after), hull_distance(A), atol=1e-7)
        # acceptance = sum(q) / C with C = max q / r_hat
        assert np.isclose(acceptance_rate_of(r_hat, rho), 1 / np.max(q / r_hat), rtol=1e-6)
    # invariant 11: permuting groups permutes columns, metrics unchanged
    perm = rng.permutation(k)
    r = r_hat @ A
    assert np.isclose(disclosivity(A[:, perm], r[perm]), disclosivity(A, r))
    assert np.isclose(hull_distance(A[:, perm]), hull_distance(A), atol=1e-9)


def test_matrix_invariants_and_metric_agreement() -> None:
    rng = np.random.default_rng(3)
    leaves, z = rng.integers(0, 6, 500), rng.integers(0, 3, 500)
    A, r_hat = conditional_distribution_matrix(leaves, z, 3)
    np.testing.assert_allclose(A.sum(axis=1), 1)
    assert np.isclose(r_hat.sum(), 1)
    r = np.bincount(z) / 500
    np.testing.assert_allclose(r_hat @ A, r)
    assert np.isclose(metrics.disclosivity(None, leaves, z), disclosivity(A, r))
    accept = rng.uniform(size=500)
    share = np.bincount(z, weights=accept) / accept.sum()
    assert np.isclose(metrics.imbalance(None, None, z, sample_weight=accept), imbalance(share))
    tau = np.array([0.5, 0.3, 0.2])
    assert np.isclose(
        metrics.imbalance(None, None, z, sample_weight=accept, target=tau), imbalance(share, tau)
    )
    assert np.isclose(metrics.acceptance_rate(None, accept, z), accept.mean())
    assert metrics.is_lower_better("disclosivity") and not metrics.is_lower_better(
        "acceptance_rate"
    )


def test_beta_min_adult_table() -> None:
    rates = np.array([470, 1519, 4685, 406, 41762]) / 48842
    assert np.isclose(imbalance(rates), 0.7358, atol=1e-4)
    for alpha, expected in [(0.05, 0.6765), (0.2, 0.5088), (0.5, 0.1733), (0.7, 0.0)]:
        assert np.isclose(beta_min(alpha, rates), expected, atol=1e-4)
    assert np.isclose(beta_min(0.05, np.array([0.6, 0.4])), np.sqrt(2) * 0.05)


def test_lemma_2_stream_converges_to_target() -> None:
    """U in C(A): a large filtered stream is balanced."""
    A = np.array([[0.7, 0.2, 0.1], [0.1, 0.6, 0.3], [0.2, 0.1, 0.7]])
    r_hat = np.array([0.6, 0.3, 0.1])
    assert in_convex_hull(A, np.full(3, 1 / 3))
    q, rho = sampling_probabilities(A, r_hat)
    np.testing.assert_allclose(filtered_distribution(A, r_hat, rho), 1 / 3, atol=1e-8)
    rng = np.random.default_rng(0)
    n = 400_000
    leaves = rng.choice(3, size=n, p=r_hat)
    z = (rng.random(n)[:, None] > np.cumsum(A[leaves], axis=1)).sum(axis=1)
    keep = filter_rows(np.eye(3)[leaves], rho, random_state=1)
    kept = np.bincount(z[keep], minlength=3) / keep.sum()
    assert np.abs(kept - 1 / 3).max() <= 4 * np.sqrt(0.25 / keep.sum())


# ---------------------------------------------------------------- the game and the tree


def _case_c():
    x = np.repeat([0, 0, 1, 1], [40, 10, 20, 30]).astype(float)
    z = np.repeat([0, 1, 0, 1], [40, 10, 20, 30])
    return x, z


@pytest.mark.parametrize("alpha", [0.05, 0.1, 0.15])
def test_case_c_game_reaches_program_3_optimum(alpha) -> None:
    x, z = _case_c()
    r = np.array([0.6, 0.4])
    point = r  # one leaf: U' = R(root) = r
    cost = split_cost(r, point, HALF)
    np.testing.assert_allclose(cost, [0.08, -0.12], atol=1e-12)  # c in the spec (Q* = 0.02)
    game = SplitGame(r, r, cost, alpha)
    _, pbar = play_split_game(x[:, None], z, np.ones(100), game, n_rounds=300)
    p0, p1 = pbar[x == 0].mean(), pbar[x == 1].mean()
    np.testing.assert_allclose([p0, p1], [0.5 - 2.5 * alpha, 0.5 + 2.5 * alpha], atol=0.01)


def test_case_c_tree_one_split() -> None:
    x, z = _case_c()
    X = pd.DataFrame({"x": x})
    bf = BalancedFilter(alpha=0.2, epsilon=0.0, beta_stop=1e-6, min_leaf_mass=0.0, n_rounds=300)
    bf.fit(X, z)
    assert bf.n_leaves_ == 2
    rows = bf.A_[np.argsort(bf.A_[:, 0])]
    np.testing.assert_allclose(rows, [[0.4, 0.6], [0.8, 0.2]], atol=0.02)
    assert disclosivity(bf.A_, bf.base_rates_) <= 0.2 + 1e-9
    assert np.isclose(np.sort(bf.rho_)[-1], 1) and np.isclose(np.sort(bf.rho_)[0], 1 / 3, atol=0.05)
    assert np.isclose(acceptance_rate_of(bf.r_hat_, bf.rho_), 2 / 3, atol=0.03)


def test_alpha_zero_gives_one_leaf_and_base_rates() -> None:
    X, z = _synthetic(1500, 2.0)
    bf = BalancedFilter(alpha=0.0).fit(X, z)
    assert bf.n_leaves_ == 1
    np.testing.assert_allclose(bf.A_[0], bf.base_rates_)
    np.testing.assert_allclose(bf.rho_, [1.0])
    np.testing.assert_allclose(bf.acceptance_probability(X), 1.0)


@pytest.mark.parametrize("relaxed", [False, True])
def test_tree_respects_alpha_and_makes_progress(relaxed) -> None:
    X, z = _synthetic(3000, 2.0, seed=1)
    alpha = 0.25
    bf = BalancedFilter(alpha=alpha, relaxed=relaxed, n_rounds=60).fit(X, z)
    assert bf.n_leaves_ > 1
    assert disclosivity(bf.A_, bf.base_rates_) <= alpha + 1e-9  # every leaf, in-sample
    weights = bf.leaf_weights(X)
    np.testing.assert_allclose(weights.sum(axis=1), 1)
    assert weights.min() >= 0
    dists = [step["dist"] for step in bf.trace_]
    assert all(b <= (1 - bf.gamma) * a + 1e-12 for a, b in zip(dists, dists[1:], strict=False))
    after = filtered_distribution(bf.A_, bf.r_hat_, bf.rho_)
    assert imbalance(after) < imbalance(bf.base_rates_) - 0.05
    assert imbalance(after) >= beta_min(alpha, bf.base_rates_) - 1e-9  # invariant 8
    assert bf.rho_.max() == pytest.approx(1) and bf.rho_.min() >= 0
    flags = bf.filter(X, random_state=3)
    assert 0 < len(flags) < len(X)
    pd.testing.assert_frame_equal(flags, bf.filter(X, random_state=3))


@pytest.mark.parametrize("proxy", ["qp_dt", "qp_lr", "naive_dt", "naive_lr"])
def test_baselines_and_interpolation(proxy) -> None:
    X, z = _synthetic(2000, 1.5, seed=2)
    full = BalancedFilter(proxy=proxy).fit(X, z)
    noised = BalancedFilter(proxy=proxy, eta=1.0).fit(X, z)
    np.testing.assert_allclose(noised.rho_, full.rho_)  # rho kept from eta = 0 (pitfall P11)
    assert disclosivity(noised.A_, noised.base_rates_) < 1e-12
    np.testing.assert_allclose(
        filtered_distribution(noised.A_, noised.r_hat_, noised.rho_), noised.base_rates_
    )
    if proxy.startswith("naive"):
        live = full.r_hat_ > 0
        np.testing.assert_allclose(full.q_[live], 1 / live.sum())  # invariant 10
    half = BalancedFilter(proxy=proxy, eta=0.5).fit(X, z)
    assert (
        disclosivity(noised.A_, noised.base_rates_)
        <= disclosivity(half.A_, half.base_rates_)
        <= disclosivity(full.A_, full.base_rates_) + 1e-12
    )


def test_knobs_validated_once() -> None:
    with pytest.raises(ValueError, match="alpha"):
        BalancedFilter(alpha=2.0).fit(*_synthetic(200, 1.0))
    with pytest.raises(ValueError, match="proxy"):
        BalancedFilter(proxy="magic").fit(*_synthetic(200, 1.0))


# ---------------------------------------------------------------- method, export


@pytest.fixture(scope="module")
def german():
    from fairengine.data import load_dataset

    return load_dataset("german_credit", sensitive=["sex"]).split(random_state=0)


def test_method_run_contract(german) -> None:
    train, test = german
    method = get_method("balanced_filtering")
    assert (method.fairness_metric, method.performance_metric) == ("disclosivity", "imbalance")
    result = method.run(train, test, alpha=0.2, n_rounds=40)
    for split in ("train", "test"):
        assert {"disclosivity", "imbalance", "acceptance_rate", "n_leaves"} <= set(
            result.metrics[split]
        )
    for name in ("A", "r_hat", "q", "rho", "proportions_before", "proportions_after"):
        assert name in result.artifacts
    for name in ("proportions_after_test", "proportions_before_test", "leaves", "group_names"):
        assert name in result.artifacts
    assert len(result.artifacts["leaves"]) == result.metrics["train"]["n_leaves"]
    assert result.metrics["train"]["disclosivity"] <= 0.2 + 1e-9


@pytest.mark.parametrize("proxy", ["ab", "qp_dt", "qp_lr"])
def test_export_round_trip(german, tmp_path, proxy) -> None:
    train, test = german
    result = get_method("balanced_filtering").run(
        train, test, proxy=proxy, alpha=0.3, eta=0.2, n_rounds=30
    )
    path = save_model(result.model, tmp_path / "f.fairmodel")
    loaded = load_model(path)
    np.testing.assert_array_equal(loaded.predict_score(test.X), result.model.predict_score(test.X))
    np.testing.assert_array_equal(
        loaded.predict(test.X, random_state=5), result.model.predict(test.X, random_state=5)
    )
    np.testing.assert_array_equal(loaded.leaf(test.X, 2), result.model.leaf(test.X, 2))


def test_filter_keeps_its_training_arrays_and_rejects_unknown_ones(german, tmp_path) -> None:
    """The training-time arrays (for display) survive the file; a misspelt one is an error,
    not an empty table on the page."""
    from fairengine.methods.balanced_filtering.model import ProxyFilter

    train, test = german
    model = get_method("balanced_filtering").run(train, test, proxy="ab", alpha=0.3).model
    assert model.A.shape[0] == model.n_leaves and len(model.group_names) >= 2
    loaded = load_model(save_model(model, tmp_path / "f.fairmodel"))
    for name in ("A", "r_hat", "base_rates"):
        np.testing.assert_array_equal(getattr(loaded, name), getattr(model, name))
    assert loaded.group_names == model.group_names
    with pytest.raises(TypeError, match="r_hats"):
        ProxyFilter(model.encoder, "tree", model.arrays, model.rho, r_hats=model.r_hat)


def test_filter_stream_matches_frame_filter() -> None:
    from fairengine.methods.balanced_filtering import filter_stream

    X, z = _synthetic(1200, 2.0, seed=4)
    bf = BalancedFilter(alpha=0.3, n_rounds=40).fit(X, z)
    chunks = [X.iloc[i : i + 300] for i in range(0, 1200, 300)]
    kept = pd.concat(list(filter_stream(chunks, bf.leaf_weights, bf.rho_, random_state=7)))
    assert 0 < len(kept) < len(X)
    expected = bf.acceptance_probability(X).sum()
    assert abs(len(kept) - expected) <= 5 * np.sqrt(expected)


@pytest.mark.parametrize("seed", range(5))
def test_lemma_4_corrected_constant(seed) -> None:
    """J(p) = sum_k c_k m1_k = -M1 <R(V1) - R(V), U - U'> with the corrected Q* (invariant 12)."""
    rng = np.random.default_rng(seed)
    k = 4
    z = rng.integers(0, k, 300)
    w = rng.uniform(0.1, 1, 300)
    p = (rng.random(300) < 0.4).astype(float)
    row = np.bincount(z, weights=w, minlength=k) / w.sum()
    point, target = rng.dirichlet(np.ones(k)), np.full(k, 1 / k)
    m1 = np.bincount(z, weights=w * p, minlength=k) / w.sum()
    objective = split_cost(row, point, target) @ m1
    child = m1 / m1.sum()
    assert np.isclose(objective, -m1.sum() * (child - row) @ (target - point))


def test_tradeoff_curves_over_seeds(german) -> None:
    from fairengine.data import load_dataset
    from fairengine.methods.balanced_filtering import tradeoff_curves
    from fairengine.sweeps.balanced_filtering import tradeoff_points

    task = load_dataset("german_credit", sensitive=["sex"])
    points = tradeoff_points(
        task,
        curves=("(α, β) proxy", "QP decision tree"),
        alphas=(0.0, 0.2),
        etas=(0.0, 1.0),
        seeds=(0, 1, 2),
        n_rounds=20,
    )
    curves = tradeoff_curves(points)
    assert len(curves) == 2 * 2 * 2  # curves x levels x splits
    assert (curves["n_seeds"] == 3).all()
    assert (curves["imbalance_low"] <= curves["imbalance"]).all()
    assert (curves["imbalance"] <= curves["imbalance_high"]).all()
    zero = curves[(curves.curve == "(α, β) proxy") & (curves.level == 0.0)]
    assert np.allclose(zero["disclosivity"], 0) and np.allclose(zero["n_leaves"], 1)


def test_wide_split_search_keeps_paper_splits_and_goes_further() -> None:
    """Tier 1 (refitted best response, threshold candidates) runs only after the game's own
    splits stop passing the (1 - gamma) rule: same trace up to there, lower end, alpha kept."""
    from fairengine.data.encoding import FeatureEncoder
    from fairengine.methods.balanced_filtering.tree import GrowthSettings, grow_tree

    rates = (0.4, 0.25, 0.15, 0.1, 0.06, 0.04)
    X, z = _synthetic(3000, 0.5, seed=0, rates=rates, d=5)
    Z = FeatureEncoder().fit(X).transform(X)
    alpha, tau = 0.2, np.full(6, 1 / 6)
    traces = {}
    for wide in (False, True):
        settings = GrowthSettings(
            alpha=alpha, n_rounds=60, relaxed=True, wide_search=wide, progress="hull"
        )
        _, weights, traces[wide] = grow_tree(Z, z, 6, settings, tau)
        A, _ = soft_matrix(weights, z, 6)
        assert disclosivity(A, np.bincount(z) / len(z)) <= alpha + 1e-9
        dists = [step["dist"] for step in traces[wide]]
        assert all(b <= 0.9 * a + 1e-12 for a, b in zip(dists, dists[1:], strict=False))
    narrow, wide = traces[False], traces[True]
    assert [s["dist"] for s in wide[: len(narrow)]] == [s["dist"] for s in narrow]
    assert len(wide) > len(narrow)
    assert wide[-1]["dist"] < 0.75 * narrow[-1]["dist"]


def test_relaxed_progress_best_keeps_the_better_rule() -> None:
    from fairengine.data.encoding import FeatureEncoder
    from fairengine.methods.balanced_filtering.tree import GrowthSettings, grow_tree

    rates = (0.4, 0.25, 0.15, 0.1, 0.06, 0.04)
    X, z = _synthetic(2000, 0.5, seed=3, rates=rates, d=5)
    Z = FeatureEncoder().fit(X).transform(X)
    tau = np.full(6, 1 / 6)
    ends = {}
    for rule in ("hull", "relaxed", "best"):
        settings = GrowthSettings(alpha=0.2, n_rounds=40, relaxed=True, progress=rule)
        _, weights, trace = grow_tree(Z, z, 6, settings, tau)
        A, _ = soft_matrix(weights, z, 6)
        assert disclosivity(A, np.bincount(z) / len(z)) <= 0.2 + 1e-9
        ends[rule] = trace[-1]["dist"]
    assert ends["best"] == min(ends["hull"], ends["relaxed"])


def test_refitted_best_response_is_never_worse_on_the_csc_objective() -> None:
    from fairengine.solvers import PairedRegressionOracle
    from fairengine.solvers.oracles import best_intercept

    X, z = _synthetic(2000, 0.7, seed=4, rates=(0.5, 0.3, 0.2))
    X = X.to_numpy()
    w = np.ones(len(z))
    oracle = PairedRegressionOracle().fit(X, w, z, 3)
    rng = np.random.default_rng(0)
    for _ in range(10):
        unit = rng.normal(size=3)
        h = oracle.best_response_grouped(unit)
        b = best_intercept(X @ h.coef, w, unit[z])
        plain = metrics_csc(h.predict(X), w, unit[z])
        refit = metrics_csc(((X @ h.coef + b) > 0).astype(float), w, unit[z])
        assert refit <= plain + 1e-9


def metrics_csc(labels, weight, cost):
    from tests.solvers.certificates import csc_objective

    return csc_objective(labels, weight, cost)


# ---------------------------------------------------------------- real data: Adult (race)


def test_budget_ladder() -> None:
    from fairengine.methods.balanced_filtering.tree import budget_ladder

    assert budget_ladder(1.0, 0.2) == [1.0, 0.8, 0.6, 0.4, 0.2]
    assert budget_ladder(0.5, 0.2) == [0.5, 0.3, 0.1]
    assert budget_ladder(0.2, 0.0) == [0.2]
    assert budget_ladder(0.0, 0.2) == []


@pytest.fixture(scope="module")
def adult_race_sweep():
    """(alpha -> BalancedFilter at the paper setting) on a 20% stratified sample of Adult (race,
    K = 5): no leaf-mass floor, 5-row leaves, no budget ladder, grown to beta_stop."""
    from fairengine.data import load_dataset
    from fairengine.methods.balanced_filtering import PAPER_SETTING

    small, _ = load_dataset("adult", sensitive=["race"]).split(test_size=0.8, random_state=0)
    z = np.asarray(small.groups)
    return {
        a: BalancedFilter(alpha=a, n_rounds=40, **PAPER_SETTING).fit(small.X, z)
        for a in (0.0, 0.2, 0.6, 1.0)
    }


def test_paper_setting_is_the_defaults_but_the_protocol() -> None:
    """The paper's exact setting is one knob away: every knob but ``protocol`` has its default."""
    from fairengine.methods.balanced_filtering import PAPER_SETTING

    method, estimator = get_method("balanced_filtering"), BalancedFilter()
    assert method.knob("protocol").default == estimator.protocol == "generalising"
    assert PAPER_SETTING["protocol"] == "paper"
    for name, value in PAPER_SETTING.items():
        if name != "protocol":
            assert method.knob(name).default == value == getattr(estimator, name)


def test_adult_imbalance_decreases_in_alpha(adult_race_sweep) -> None:
    """Paper Fig. 2 (train), at the paper setting: the (alpha, beta) proxy's in-sample imbalance
    falls toward 0 as alpha grows, from the base rates (0.7358) at alpha = 0 (measured 0.736, 0.535,
    0.073, 0.038 at alpha = 0, 0.2, 0.6, 1). Every leaf stays alpha-disclosive and above
    beta_min, and every split passes the (1 - gamma) rule."""
    values = {}
    for alpha, bf in adult_race_sweep.items():
        after = filtered_distribution(bf.A_, bf.r_hat_, bf.rho_)
        values[alpha] = imbalance(after)
        assert disclosivity(bf.A_, bf.base_rates_) <= alpha + 1e-9
        assert values[alpha] >= beta_min(alpha, bf.base_rates_) - 1e-9
        dists = [r["dist"] for r in bf.trace_]
        assert all(b <= 0.9 * a + 1e-9 for a, b in zip(dists, dists[1:], strict=False))
    assert np.isclose(values[0.0], 0.7358, atol=0.01)
    assert values[0.0] > values[0.2] + 0.1 > values[0.6] + 0.2
    assert values[1.0] <= values[0.6] + 1e-9
    top = adult_race_sweep[1.0]
    assert values[1.0] < 0.1 and top.status_["code"] == "beta_stop" and top.status_["converged"]


def test_adult_status_says_why_growth_stopped(adult_race_sweep) -> None:
    zero = adult_race_sweep[0.0].status_
    assert zero["code"] == "alpha_zero" and not zero["converged"]
    for alpha in (0.2, 0.6, 1.0):
        bf = adult_race_sweep[alpha]
        status, last = bf.status_, bf.trace_[-1]
        assert status["code"] in ("no_progress", "beta_stop")
        if status["code"] == "no_progress":  # above beta_stop: the (1 - gamma) rule stopped it
            assert not status["converged"] and last["dist"] >= bf.beta_stop
            assert last["best_rejected"] > last["required"] == pytest.approx(0.9 * last["dist"])
            assert "1 − γ" in status["message"]


def test_status_converged_when_beta_stop_reached() -> None:
    X, z = _synthetic(1500, 3.0)
    bf = BalancedFilter(alpha=0.6, n_rounds=40, beta_stop=0.3).fit(X, z)
    assert bf.status_["code"] == "beta_stop" and bf.status_["converged"]
    assert bf.trace_[-1]["dist"] < 0.3


def test_axis_candidates_are_feasible_and_bounded() -> None:
    """[EXT] single-feature candidates: both children alpha_eff-disclosive and above the floor;
    the segment bound is never below the exact hull distance after the split."""
    from fairengine.methods.balanced_filtering.candidates import axis_candidates, segment_bound

    X, z = _synthetic(3000, 1.0)
    X = X.to_numpy()
    k, n = 3, len(z)
    onehot, rates = np.eye(k)[z], np.bincount(z) / n
    cands = axis_candidates(X, np.ones(n), onehot, n, rates, 0.15, 0.02)
    assert len(cands.feature) > 0
    assert np.abs(cands.rows - rates).max() <= 0.15 + 1e-9
    for i in range(0, len(cands.feature), max(len(cands.feature) // 10, 1)):
        side = X[:, cands.feature[i]] > cands.threshold[i]
        assert min(side.mean(), 1 - side.mean()) >= 0.02
        np.testing.assert_allclose(cands.rows[i, 1], onehot[side].mean(axis=0))
        point = rates  # the one-leaf tree's projection
        exact = hull_distance(np.vstack([cands.rows[i]]), np.full(k, 1 / k))
        assert segment_bound(cands.rows[i : i + 1], point, np.full(k, 1 / k))[0] >= exact - 1e-9


def test_the_leaf_floor_is_what_stops_the_tree(adult_race_sweep) -> None:
    """What stopped the pre-version-4 defaults (FLOOR_SETTING: 0.5% / 30-row leaves, budget
    ladder) on Adult (race) is the floor: same sample, alpha = 1, no ladder."""
    from fairengine.data import load_dataset
    from fairengine.methods.balanced_filtering import FLOOR_SETTING

    small, _ = load_dataset("adult", sensitive=["race"]).split(test_size=0.8, random_state=0)
    knobs = {**FLOOR_SETTING, "budget_step": 0.0}  # the floor alone (the ladder costs 5 trees)
    floor = BalancedFilter(alpha=1.0, n_rounds=40, **knobs).fit(small.X, small.groups)
    at = {
        name: imbalance(filtered_distribution(bf.A_, bf.r_hat_, bf.rho_))
        for name, bf in (("default", adult_race_sweep[1.0]), ("floor", floor))
    }
    assert at["default"] < at["floor"] - 0.05
    assert floor.status_["code"] == "no_progress" and not floor.status_["converged"]


def test_decision_tree_proxy_labels_match_sklearn_next_to_splits() -> None:
    """The decision-tree baseline walks the shared codec (fairengine.models.trees): its labels
    equal DecisionTreeClassifier.predict on Adult rows and on rows sitting on, and one float64
    ulp either side of, every split (scikit-learn compares float32 features)."""
    from sklearn.tree import DecisionTreeClassifier

    from fairengine.data import load_dataset
    from fairengine.data.encoding import FeatureEncoder
    from fairengine.methods.balanced_filtering.proxies import (
        classifier_labels,
        fit_classifier_proxy,
    )

    small, _ = load_dataset("adult", sensitive=["race"]).split(test_size=0.9, random_state=1)
    Z = FeatureEncoder().fit(small.X).transform(small.X)
    z = np.asarray(small.groups)
    arrays = fit_classifier_proxy("dt", Z, z, len(small.group_names), random_state=0)
    model = DecisionTreeClassifier(min_samples_leaf=20, random_state=0).fit(Z, z)
    inner = model.tree_.children_left >= 0
    feats, thr = model.tree_.feature[inner], model.tree_.threshold[inner]
    probe = np.repeat(Z[:1], 3 * len(thr), axis=0)
    for i, (f, t) in enumerate(zip(feats, thr, strict=True)):
        probe[3 * i : 3 * i + 3, f] = [np.nextafter(t, -np.inf), t, np.nextafter(t, np.inf)]
    rows = np.vstack([Z, probe])
    np.testing.assert_array_equal(classifier_labels(arrays, rows), model.predict(rows))
    # a float64 comparison (the walk this proxy had before) sends some probe rows elsewhere
    t = model.tree_
    node = np.zeros(len(rows), dtype=np.int64)
    for _ in range(t.max_depth):
        go_left = rows[np.arange(len(rows)), np.maximum(t.feature[node], 0)] <= t.threshold[node]
        step = np.where(go_left, t.children_left[node], t.children_right[node])
        node = np.where(t.children_left[node] >= 0, step, node)
    assert np.any(node != model.apply(rows))


def test_no_method_imports_the_frontier_or_sweep_layers() -> None:
    """The import graph is methods → (nothing above); frontier → methods; sweeps → both (the
    reason fairengine.sweeps is a package of its own)."""
    import ast
    from pathlib import Path

    import fairengine.methods

    root = Path(fairengine.methods.__file__).parent
    offenders = []
    for path in sorted(root.rglob("*.py")):
        package = ["fairengine", "methods", *path.relative_to(root).parent.parts]
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.ImportFrom):  # absolute or relative; `from x import y` too
                base = package[: len(package) - node.level + 1] if node.level else []
                module = ".".join([*base, *([node.module] if node.module else [])])
                names = [module] + [f"{module}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                if name.split(".")[:2] in (["fairengine", "frontier"], ["fairengine", "sweeps"]):
                    offenders.append(f"{path.relative_to(root)}:{node.lineno} {name}")
    assert not offenders, offenders


def test_estimator_contract_on_a_raw_adult_table() -> None:
    """scikit-learn conventions on the real input (a raw table with text columns): clone keeps
    the parameters, NotFittedError before fit, feature names / count recorded and checked."""
    from sklearn.base import clone
    from sklearn.exceptions import NotFittedError

    from fairengine.data import load_dataset

    small, _ = load_dataset("adult", sensitive=["race"]).split(test_size=0.95, random_state=2)
    bf = BalancedFilter(alpha=0.4, n_rounds=20, random_state=np.random.RandomState(3))
    copy = clone(bf)
    assert copy.get_params()["alpha"] == 0.4 and copy is not bf
    with pytest.raises(NotFittedError):
        copy.acceptance_probability(small.X)
    copy.fit(small.X, np.asarray(small.group_names)[small.groups])
    assert copy.n_features_in_ == small.X.shape[1]
    assert list(copy.feature_names_in_) == [str(c) for c in small.X.columns]
    assert copy.group_names_ == sorted(small.group_names)
    pi = copy.acceptance_probability(small.X)
    assert pi.shape == (len(small.X),) and ((pi >= 0) & (pi <= 1)).all()
    with pytest.raises(ValueError, match="feature names"):
        copy.acceptance_probability(small.X.iloc[:, ::-1])


def test_bank_near_balance_in_sample_at_alpha_02() -> None:
    """Paper Fig. 3 (Bank, job, K = 12, relaxed proxy): at alpha = 0.2 the paper's setting
    balances the sample in-sample down to the paper's stopping rule (imbalance 0.100 from the
    base rates' 0.252 on this 30% sample; 0.061 on the full 2/3 split, bench ``paper_setting``)."""
    from fairengine.data import load_dataset

    small, _ = load_dataset("bank_marketing", sensitive=["job"]).split(
        test_size=0.7, random_state=0
    )
    bf = BalancedFilter(alpha=0.2, relaxed=True, n_rounds=40, protocol="paper")
    bf.fit(small.X, small.groups)
    before = imbalance(bf.base_rates_)
    after = imbalance(filtered_distribution(bf.A_, bf.r_hat_, bf.rho_))
    assert before > 0.24 and after < 0.105 < before / 2
    assert disclosivity(bf.A_, bf.base_rates_) <= 0.2 + 1e-9
    assert bf.status_["code"] == "beta_stop" and bf.status_["converged"]


def test_an_empty_filtered_sample_is_reported_not_raised() -> None:
    """With tiny leaves q can sit on a leaf no held-out row reaches (seen on Adult, race, split
    1, alpha = 0.4: one 6-row leaf): the split's filtered sample is empty, its imbalance NaN, and
    the curves leave such points out of the mean (n_seeds / n_empty say so)."""
    import copy

    from fairengine.methods.balanced_filtering import tradeoff_curves
    from fairengine.methods.balanced_filtering.model import split_metrics

    X, z = _synthetic(800, 2.0)
    bf = BalancedFilter(alpha=0.5, n_rounds=20).fit(X, z)
    model = copy.copy(bf.model_)
    model.rho = np.zeros_like(bf.rho_)
    values, tables = split_metrics(model, X, z)
    assert values["acceptance_rate"] == 0 and np.isnan(values["imbalance"])
    assert np.isnan(tables["proportions_after"]).all()
    points = pd.DataFrame(
        {
            "curve": "c",
            "level": 0.4,
            "split": "test",
            "disclosivity": [0.1, 0.2, 0.3],
            "imbalance": [0.2, np.nan, 0.4],
            "acceptance_rate": [0.5, 0.0, 0.5],
            "n_leaves": 4.0,
        }
    )
    row = tradeoff_curves(points).iloc[0]
    assert row.n_seeds == 2 and row.n_empty == 1 and np.isclose(row.imbalance, 0.3)
    assert row.imbalance_low < 0.3 < row.imbalance_high


# ------------------------------------------- real data: vanished groups, generalising defaults


def test_a_group_vanishing_on_adult_is_maximal_imbalance_and_fails_a_check() -> None:
    """Adult (race), the paper's setting at alpha = 1 on split seed 7: the tree balances its
    training rows with leaves of a few rows, and on the test rows two groups get no accepted row
    in expectation. The test imbalance is then the maximum sqrt(1 - 1/K), not the small distance
    the remaining groups would give, and the filtered_group_rows check fails."""
    from fairengine.data import load_dataset
    from fairengine.methods.balanced_filtering import PAPER_SETTING
    from fairengine.metrics import MISSING_GROUP_ROWS, max_imbalance

    train, test = load_dataset("adult", sensitive=["race"]).split(test_size=1 / 3, random_state=7)
    result = get_method("balanced_filtering").run(train, test, alpha=1.0, **PAPER_SETTING)
    counts = result.artifacts["filtered_counts_test"]
    print("expected filtered test rows per group:", np.round(counts, 2))
    assert (counts < MISSING_GROUP_ROWS).any()
    assert result.metrics["test"]["imbalance"] == pytest.approx(max_imbalance(np.full(5, 0.2)))
    assert result.metrics["train"]["imbalance"] < 0.1  # in-sample the paper's rule is met
    check = next(c for c in result.checks if c.name == "filtered_group_rows_test")
    assert check.level == "fail" and check.numbers["expected_rows"] < MISSING_GROUP_ROWS
    assert "vanishes from the filtered test sample" in check.sentence


@pytest.mark.parametrize(("dataset", "sensitive"), [("adult", "race"), ("bank_marketing", "job")])
def test_defaults_generalise_on_real_data(dataset, sensitive) -> None:
    """The default (generalising) protocol: on split seed 7 (not a bench seed) the test imbalance
    is within 0.1 of the training imbalance at low and high alpha, every group keeps more than a
    few rows in both filtered samples, and the filter is better than keeping every row."""
    from fairengine.data import load_dataset

    method = get_method("balanced_filtering")
    train, test = load_dataset(dataset, sensitive=[sensitive]).split(
        test_size=1 / 3, random_state=7
    )
    for alpha in (0.3, 1.0):
        result = method.run(train, test, alpha=alpha)
        tr, te = result.metrics["train"]["imbalance"], result.metrics["test"]["imbalance"]
        print(f"{dataset} alpha={alpha}: train {tr:.3f} test {te:.3f}", result.knobs["protocol"])
        assert result.knobs["protocol"] == "generalising"
        assert abs(te - tr) <= 0.1
        assert te < result.baselines.constant["test"]["imbalance"]
        assert not [c for c in result.checks if c.name.startswith("filtered_group_rows")]
