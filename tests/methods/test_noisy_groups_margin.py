"""noisy_groups (Wang et al. 2020): soft assignments' margin check (``robust_eval="margin"``,
the default) — the partition worst case it rests on, its place between the
paper's and the exact check, and its effect on real (Adult) rows."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linprog

from fairengine.methods.noisy_groups import RobustFairClassifier, add_group_noise
from fairengine.methods.noisy_groups.method import with_noisy_group
from fairengine.methods.noisy_groups.noise import estimate_noise
from fairengine.methods.noisy_groups.rates import (
    sa_label_violations,
    sa_margin_violations,
    sa_partition_worst,
    sa_table_violations,
    violations,
)
from fairengine.metrics.noisy_groups import constraint_list, sa_worst


def _instance(seed: int, n: int = 500):
    rng = np.random.default_rng(seed)
    g = rng.choice(3, size=n, p=[0.6, 0.25, 0.15])
    h = add_group_noise(g, 0.3, seed)
    y = (rng.random(n) < 0.25 + 0.1 * g).astype(int)
    yhat = (rng.random(n) < 0.2 + 0.5 * y - 0.1 * g).astype(int)
    nm = estimate_noise(g, h, 3)
    return y, yhat, h, nm.M, np.bincount(h, minlength=3) / n


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("constraint", ["tpr", "eo", "dp"])
def test_finest_partition_is_the_exact_worst_case(seed, constraint):
    y, yhat, h, M, p = _instance(seed)
    exact = sa_worst(y, yhat, h, constraint, 0.05, M, p)[0]
    finest = sa_partition_worst(y, yhat, h, 2 * yhat + y, constraint, 0.05, M, p)
    np.testing.assert_allclose(finest, exact, atol=1e-12)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("constraint", ["tpr", "eo", "dp"])
def test_label_aware_check_lies_between_the_prior_and_the_exact_check(seed, constraint):
    y, yhat, h, M, p = _instance(seed)
    exact = sa_worst(y, yhat, h, constraint, 0.05, M, p)[0]
    label = sa_label_violations(y, yhat, h, constraint, 0.05, M, p)
    prior_tables = [np.tile(M[j], (4, 1)) for _, j in constraint_list(constraint, 3)]
    prior = sa_table_violations(y, yhat, h, constraint, 0.05, prior_tables, 3)
    assert np.all(prior <= label + 1e-12) and np.all(label <= exact + 1e-12)
    assert np.any(label < exact - 1e-3)  # strictly weaker than the exact check somewhere


@pytest.mark.parametrize("seed", range(3))
def test_label_aware_tpr_matches_a_charnes_cooper_lp(seed):
    """min over a[k, y'] in [0, q[k, y']], Σ_y' a[k, y'] = budget_k of Σ_k a[k,1]·TPR_k / Σ_k
    a[k,1] (z = t·a, t = 1/denominator), solved by HiGHS."""
    y, yhat, h, M, p = _instance(seed)
    n, overall = len(y), yhat[y == 1].mean()
    q = np.array([[np.sum((h == k) & (y == c)) / n for c in (0, 1)] for k in range(3)])
    tpr = np.array([yhat[(h == k) & (y == 1)].mean() for k in range(3)])
    label = sa_label_violations(y, yhat, h, "tpr", 0.05, M, p)
    for j in range(3):
        budget = M[j] * p
        # variables: z[k, 0], z[k, 1] for k = 0..2, then t
        cost = np.zeros(7)
        cost[[1, 3, 5]] = tpr
        a_eq = np.zeros((4, 7))
        a_eq[0, [1, 3, 5]] = 1.0  # denominator = 1
        for k in range(3):
            a_eq[1 + k, [2 * k, 2 * k + 1]] = 1.0
            a_eq[1 + k, 6] = -budget[k]
        b_eq = np.array([1.0, 0.0, 0.0, 0.0])
        a_ub = np.zeros((6, 7))
        for k in range(3):
            for c in (0, 1):
                a_ub[2 * k + c, 2 * k + c] = 1.0
                a_ub[2 * k + c, 6] = -q[k, c]
        lp = linprog(cost, a_ub, np.zeros(6), a_eq, b_eq, bounds=[(0, None)] * 7, method="highs")
        assert lp.status == 0
        assert label[j] == pytest.approx(overall - lp.fun - 0.05, abs=1e-9)


def test_margin_check_is_at_least_both_of_its_parts():
    y, yhat, h, M, p = _instance(0)
    tables = [np.tile(M[j], (4, 1)) for _, j in constraint_list("eo", 3)]
    margin = sa_margin_violations(y, yhat, h, "eo", 0.03, tables, M, p)
    assert np.all(margin >= sa_table_violations(y, yhat, h, "eo", 0.03, tables, 3) + 1e-6)
    assert np.all(margin >= sa_label_violations(y, yhat, h, "eo", 0.03, M, p) - 1e-12)


# --------------------------------------------------------------- real data (Adult rows)
@pytest.fixture(scope="module")
def adult_fits():
    """One split of Adult (3 races, the noisy group a feature): 10,000 training and 10,000 test
    rows, noise 0.2, T = 300 — soft assignments (all checks recorded) and naive."""
    from bench.bench_noisy_groups import adult_race3
    from fairengine.data.encoding import FeatureEncoder

    task = adult_race3()
    order = np.random.default_rng(0).permutation(len(task.y))
    train, test = np.sort(order[:10_000]), np.sort(order[10_000:20_000])
    noisy = add_group_noise(task.groups, 0.2, 0)
    frame = with_noisy_group(task.X, task.group_names, noisy)
    z = FeatureEncoder().fit(frame.iloc[train]).transform(frame)
    y, g = task.y, task.groups
    common = {"constraint": "tpr", "slack": 0.05, "n_steps": 300, "random_state": 0}
    soft = RobustFairClassifier("soft", **common).fit(
        z[train], y[train], noisy[train], g[train], noisy[train]
    )
    naive = RobustFairClassifier("naive", beta=1.0, **common).fit(z[train], y[train], noisy[train])
    return soft, naive, z[test], y[test], g[test]


def test_margin_selection_is_useful_and_within_the_slack_on_the_true_groups(adult_fits):
    soft, naive, z, y, g = adult_fits
    assert soft.robust_eval_ == "margin"  # the default
    pred = soft.predict(z)
    assert np.mean(pred != naive.predict(z)) > 0.005  # not naive
    assert np.mean(pred != y) < np.mean(y) - 0.02  # well below the all-negatives error
    true_margin = violations(y, pred, g, "tpr", 0.05, 3).max()
    assert true_margin <= 0.01  # within slack + 0.01 on the TRUE groups (test rows)
    # the paper's W check alone passes an iterate that breaks the true groups on these rows
    paper = soft.select("paper").predict(z)
    assert violations(y, paper, g, "tpr", 0.05, 3).max() > true_margin
    soft.select("margin")


def test_margin_check_bounds_the_paper_check_on_every_candidate(adult_fits):
    soft = adult_fits[0]
    by_eval = soft.candidate_violations_by_eval_
    assert np.all(by_eval["margin"] >= by_eval["paper"])
    assert soft.selection_status_ in ("feasible", "fallback")
