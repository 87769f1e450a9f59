"""noisy_groups (Wang et al. 2020): TV projection, closed-form worst cases, Theorem 1, methods,
export."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linprog

from fairengine.methods.noisy_groups import (
    RobustFairClassifier,
    add_group_noise,
    estimate_noise,
    select_best,
)
from fairengine.methods.noisy_groups.noise import empirical_tv
from fairengine.methods.noisy_groups.rates import (
    dro_sampled_violations,
    sa_table_violations,
    sample_tv_ball,
    violations,
)
from fairengine.metrics.noisy_groups import (
    assignment_rate,
    cell_masses,
    dro_violations,
    dro_worst_rate,
    sa_worst,
    sa_worst_assignment,
)
from fairengine.solvers import project_tv_ball
from tests.solvers.certificates import tv_ball_linear_max


# ------------------------------------------------------------------------ TV-ball projection
@pytest.mark.parametrize(
    ("v", "c", "r", "expected"),
    [
        ((1, 0, 0), (0.5, 0.5, 0), 0.1, (0.6, 0.4, 0)),
        ((0.6, 0.1, 0.3), (0.5, 0.5, 0), 0.1, (0.5, 0.4, 0.1)),
        ((0.2, 0.2, 0.2, 0.4), (0.25,) * 4, 0.05, (0.7 / 3, 0.7 / 3, 0.7 / 3, 0.3)),
        ((0.9, 0.05, 0.05, 0), (0, 0, 0.5, 0.5), 0.5, (0.5, 0, 0.275, 0.225)),
    ],
)
def test_tv_projection_known_answers(v, c, r, expected):
    p = project_tv_ball(np.array(v, float), np.array(c, float), r)
    np.testing.assert_allclose(p, expected, atol=1e-9)


def _qp_reference(v, c, r):
    """Projection by an LP-free reference: Dykstra between simplex and the l1 ball around c."""
    from fairengine.solvers import project_l1_ball, project_simplex

    x, p_inc, q_inc = v.copy(), np.zeros_like(v), np.zeros_like(v)
    for _ in range(5000):
        y = project_simplex(x + p_inc)
        p_inc = x + p_inc - y
        x_new = c + project_l1_ball(y + q_inc - c, 2 * r)
        q_inc = y + q_inc - x_new
        x = x_new
    return x


@pytest.mark.parametrize("seed", range(8))
def test_tv_projection_is_feasible_and_optimal(seed):
    rng = np.random.default_rng(seed)
    n = 12
    c = rng.dirichlet(np.ones(n) * 0.5)
    v = c + rng.normal(0, 0.3, n)
    r = float(rng.uniform(0.02, 0.4))
    p = project_tv_ball(v, c, r)
    assert p.min() >= 0 and p.sum() == pytest.approx(1, abs=1e-10)
    assert 0.5 * np.abs(p - c).sum() <= r + 1e-9
    np.testing.assert_allclose(p, _qp_reference(v, c, r), atol=1e-4)  # Dykstra: slow tail
    # first-order optimality against the LP over the ball: <v - p, q - p> <= 0 for every q in B
    a = v - p
    lin = _ball_lp_max(a, c, r)
    assert lin <= a @ p + 1e-8


def _ball_lp_max(a, c, r):
    """max_q a·q over {q >= 0, sum q = 1, ||q - c||_1 <= 2r} by linprog (variables q, u)."""
    n = len(a)
    cost = np.concatenate([-a, np.zeros(n)])
    eye = np.eye(n)
    a_ub = np.block([[eye, -eye], [-eye, -eye], [np.zeros((1, n)), np.ones((1, n))]])
    b_ub = np.concatenate([c, -c, [2 * r]])
    a_eq = np.concatenate([np.ones(n), np.zeros(n)])[None]
    res = linprog(cost, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=[1.0], method="highs")
    return -res.fun


@pytest.mark.parametrize("seed", range(10))
def test_greedy_linear_max_equals_linprog(seed):
    rng = np.random.default_rng(seed)
    n = 15
    c = rng.dirichlet(np.ones(n))
    a = rng.integers(0, 4, n).astype(float)
    r = float(rng.uniform(0.01, 0.6))
    p = tv_ball_linear_max(a, c, r)
    assert 0.5 * np.abs(p - c).sum() <= r + 1e-12 and p.sum() == pytest.approx(1)
    assert a @ p == pytest.approx(_ball_lp_max(a, c, r), abs=1e-9)


# ------------------------------------------------------------------ closed-form worst cases
def _dro_lp_worst(kind, y, yhat, noisy, j, gamma):
    """Charnes–Cooper LP: min TPR (max FPR) over the TV ball around p̂_j; variables z, u, t."""
    n = len(y)
    c = (noisy == j) / (noisy == j).sum()
    base = y if kind == "tpr" else 1 - y
    num = base * yhat
    sign = 1.0 if kind == "tpr" else -1.0
    cost = np.concatenate([sign * num, np.zeros(n), [0.0]])
    eye, zero = np.eye(n), np.zeros((n, n))
    a_ub = np.vstack(
        [
            np.hstack([eye, -eye, -c[:, None]]),  # z - t c <= u
            np.hstack([-eye, -eye, c[:, None]]),  # t c - z <= u
            np.concatenate([np.zeros(n), np.ones(n), [-2 * gamma]])[None],
        ]
    )
    b_ub = np.zeros(2 * n + 1)
    a_eq = np.vstack(
        [
            np.concatenate([np.ones(n), np.zeros(n), [-1.0]]),  # sum z = t
            np.concatenate([base, np.zeros(n), [0.0]]),  # denominator = 1
        ]
    )
    del zero
    res = linprog(cost, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=[0.0, 1.0], method="highs")
    return sign * res.fun


def test_dro_example_a():
    y = np.array([1, 1, 1, 1, 0, 1, 0, 0, 0, 0])
    yhat = np.array([1, 1, 1, 0, 1, 0, 0, 1, 0, 0])
    noisy = np.array([0] * 5 + [1] * 5)
    for gamma, expected in ((0.0, 0.75), (0.1, 0.625), (0.3, 0.375), (0.6, 0.0)):
        assert dro_worst_rate("tpr", y, yhat, noisy, 0, gamma) == pytest.approx(expected)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("kind", ["tpr", "fpr"])
def test_dro_closed_form_equals_linprog(seed, kind):
    rng = np.random.default_rng(seed)
    n = 14
    y = rng.integers(0, 2, n)
    yhat = rng.integers(0, 2, n)
    y[:2], yhat[:2] = (1, 0), (0, 1)  # an FN and an FP exist
    noisy = rng.integers(0, 2, n)
    noisy[2:4] = (0, 0)
    base = y if kind == "tpr" else 1 - y
    if not (base * (noisy == 0)).any():
        pytest.skip("no base rows in group 0")
    gamma = float(rng.uniform(0, 0.5))
    assert dro_worst_rate(kind, y, yhat, noisy, 0, gamma) == pytest.approx(
        _dro_lp_worst(kind, y, yhat, noisy, 0, gamma), abs=1e-7
    )


def _sa_lp_worst(kind, q, budget):
    """Charnes–Cooper LP over column j: z = t·a, 0 <= z <= t q, sum_c z[c,k] = t budget[k]."""
    cells, m = q.shape
    nvar = cells * m + 1
    idx = lambda c, k: c * m + k  # noqa: E731
    num, den = ((3,), (3, 1)) if kind == "tpr" else ((2,), (2, 0))
    sign = 1.0 if kind == "tpr" else -1.0
    cost = np.zeros(nvar)
    for k in range(m):
        for c in num:
            cost[idx(c, k)] = sign
    a_eq, b_eq = [], []
    row = np.zeros(nvar)
    for k in range(m):
        for c in den:
            row[idx(c, k)] = 1
    a_eq.append(row), b_eq.append(1.0)
    for k in range(m):
        row = np.zeros(nvar)
        for c in range(cells):
            row[idx(c, k)] = 1
        row[-1] = -budget[k]
        a_eq.append(row), b_eq.append(0.0)
    a_ub, b_ub = [], []
    for k in range(m):
        for c in range(cells):
            row = np.zeros(nvar)
            row[idx(c, k)], row[-1] = 1, -q[c, k]
            a_ub.append(row), b_ub.append(0.0)
    res = linprog(cost, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq, method="highs")
    return sign * res.fun


def test_sa_example_b():
    q = np.array([[0.1, 0.2], [0.1, 0.1], [0.1, 0.1], [0.2, 0.1]])
    M = np.array([[0.8, 0.2], [0.2, 0.8]])
    p_noisy = q.sum(0)
    worst = [assignment_rate("tpr", sa_worst_assignment("tpr", q, M[j] * p_noisy)) for j in (0, 1)]
    np.testing.assert_allclose(worst, [1 / 3, 0.0], atol=1e-12)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("kind", ["tpr", "fpr"])
def test_sa_closed_form_equals_linprog(seed, kind):
    rng = np.random.default_rng(seed)
    q = rng.dirichlet(np.ones(12)).reshape(4, 3)
    M = rng.dirichlet(np.ones(3), size=3).T
    budget = M[0] * q.sum(0)
    greedy = assignment_rate(kind, sa_worst_assignment(kind, q, budget))
    assert greedy == pytest.approx(_sa_lp_worst(kind, q, budget), abs=1e-8)


# ------------------------------------------------------------------------------ noise
def test_add_group_noise_flips_exact_count_to_other_groups():
    g = np.repeat([0, 1, 2], [600, 300, 100])
    noisy = add_group_noise(g, 0.3, 1)
    assert (noisy != g).sum() == 300
    assert set(np.unique(noisy)) <= {0, 1, 2}
    np.testing.assert_array_equal(noisy, add_group_noise(g, 0.3, 1))


def test_noise_model_and_safe_gamma_equals_empirical_tv():
    rng = np.random.default_rng(0)
    g = rng.choice(3, size=3000, p=[0.6, 0.3, 0.1])
    h = add_group_noise(g, 0.3, 0)
    nm = estimate_noise(g, h, 3)
    np.testing.assert_allclose(nm.M.sum(0), 1)
    assert nm.gamma_paper == pytest.approx(0.3, abs=0.05)
    for j in range(3):
        assert nm.gamma_safe[j] == pytest.approx(empirical_tv(g, h, j), abs=1e-12)
    assert nm.gamma_safe[2] > 0.5  # the minority group: the paper's radius is too small


# ---------------------------------------------------------------------------- Theorem 1
@pytest.mark.parametrize("seed", range(5))
def test_theorem1_bound_on_samples(seed):
    """g_j(θ) <= ĝ_j(θ) + TV(p_j, p̂_j) for the DP and TPR h (|h(a) - h(b)| <= 1)."""
    rng = np.random.default_rng(seed)
    n = 2000
    g = rng.choice(3, size=n, p=[0.5, 0.3, 0.2])
    h_groups = add_group_noise(g, 0.3, seed)
    y = rng.integers(0, 2, n)
    yhat = rng.integers(0, 2, n)
    alpha = 0.05
    ppr, tpr = yhat.mean(), yhat[y == 1].mean()
    h_dp = ppr - yhat - alpha
    h_tpr = 0.5 * (-(yhat * y) - y * (alpha - tpr))
    for h in (h_dp, h_tpr):
        assert np.ptp(h) <= 1.0
        for j in range(3):
            true_j, noisy_j = h[g == j].mean(), h[h_groups == j].mean()
            assert true_j <= noisy_j + empirical_tv(g, h_groups, j) + 1e-12


# --------------------------------------------------------------------------- approaches
def _synthetic(n, seed, noise):
    rng = np.random.default_rng(seed)
    g = rng.choice(3, size=n, p=[0.6, 0.3, 0.1])
    x = rng.normal(size=(n, 3)) + np.array([[0.5, 0, 0], [0, 0.5, 0], [-0.5, 0, 0.5]])[g]
    logits = x @ np.array([1.5, 1.0, 1.0]) + np.array([0.0, -1.0, -1.5])[g] - 0.5
    y = (rng.random(n) < 1 / (1 + np.exp(-logits))).astype(int)
    return x, y, g, add_group_noise(g, noise, seed)


def test_select_best_paper_rule():
    assert select_best([0.10, 0.20, 0.15], [[0.05], [0.0], [0.01]]) == 1
    assert select_best([0.10, 0.20], [[0.05], [0.01]]) == 1


@pytest.mark.parametrize("constraint", ["tpr", "eo", "dp"])
def test_naive_satisfies_noisy_constraints_on_train(constraint):
    x, y, g, h = _synthetic(1500, 0, 0.2)
    clf = RobustFairClassifier("naive", constraint, 0.05, n_steps=150, learning_rate=0.05)
    clf.fit(x, y, h)
    yhat = clf.predict(x)
    assert np.max(violations(y, yhat, h, constraint, 0.05, 3)) <= 1e-12
    assert np.mean(yhat != y) < y.mean()  # not the trivial classifier


def test_robust_methods_keep_the_true_constraints_on_synthetic_data():
    """Noise 0.2, paper adversaries and selection: DRO and soft stay within the slack on the
    true groups on average (the 10% minority group is the hard one)."""
    robust = {"dro": [], "soft": []}
    for seed in range(2):
        x, y, g, h = _synthetic(1500, seed, 0.2)
        aux = np.arange(500)
        for m in robust:
            clf = RobustFairClassifier(m, "tpr", 0.05, n_steps=200, eval_every=10)
            clf.fit(x, y, h, aux_true=g[aux], aux_noisy=h[aux])
            robust[m].append(np.max(violations(y, clf.predict(x), g, "tpr", 0.05, 3)))
            assert np.mean(clf.predict(x) != y) < 0.5
    for m, values in robust.items():
        assert np.mean(values) <= 0.0, m


def test_soft_worst_case_is_above_true_violation_in_sample():
    """w* (the in-sample true posterior) is in 𝒲(θ): robust >= true for every prediction."""
    rng = np.random.default_rng(3)
    x, y, g, h = _synthetic(1000, 3, 0.3)
    nm = estimate_noise(g, h, 3)
    p_noisy = np.bincount(h, minlength=3) / len(h)
    for _ in range(5):
        yhat = rng.integers(0, 2, len(y))
        robust, _ = sa_worst(y, yhat, h, "eo", 0.05, nm.M, p_noisy)
        assert np.all(robust >= violations(y, yhat, g, "eo", 0.05, 3) - 1e-12)
    assert cell_masses(y, yhat, h, 3).sum() == pytest.approx(1)


def test_dro_without_noise_is_naive_and_needs_gamma():
    x, y, g, _ = _synthetic(400, 1, 0.0)
    with pytest.raises(ValueError):
        RobustFairClassifier("dro").fit(x, y, g)
    a = RobustFairClassifier("dro", gamma=0.0, n_steps=40).fit(x, y, g)
    b = RobustFairClassifier("naive", n_steps=40).fit(x, y, g)
    np.testing.assert_allclose(a.coef_, b.coef_)


# ------------------------------------------------------------------------ method + export
def test_method_run_and_export_round_trip(tmp_path):
    from fairengine.data import load_dataset
    from fairengine.export import load_model, save_model
    from fairengine.methods import get_method
    from fairengine.metrics import standard_metrics

    train, test = load_dataset("german_credit").split(random_state=3)
    result = get_method("noisy_groups").run(train, test, method="dro", n_steps=40, noise=0.2)
    for split in ("train", "test"):
        assert set(result.metrics[split]) == {
            "noisy_violation", "true_violation", "robust_violation",  # the method's
            *standard_metrics("classification"),  # the shared evaluation's
        }  # fmt: skip
    path = save_model(result.model, tmp_path / "m.fairmodel")
    loaded = load_model(path)
    np.testing.assert_array_equal(loaded.predict(test.X), result.model.predict(test.X))


def test_the_paper_protocol_is_one_knob_setting_the_variants():
    """``protocol="paper"`` runs exactly as its variant knobs set by hand, and records them; the
    default protocol leaves every variant at its default."""
    from fairengine.data import load_dataset
    from fairengine.methods import get_method
    from fairengine.methods.noisy_groups.knobs import PAPER_PROTOCOL

    train, test = load_dataset("german_credit").split(random_state=3)
    method = get_method("noisy_groups")
    run = method.run_function
    knobs = {"method": "soft", "n_steps": 20}
    paper = run(train, test, **method.validate_knobs({**knobs, "protocol": "paper"}))
    by_hand = run(train, test, **method.validate_knobs({**knobs, **PAPER_PROTOCOL}))
    assert paper.knobs == {**by_hand.knobs, "protocol": "paper"}
    assert paper.metrics == by_hand.metrics and paper.artifacts["tuning"] is not None
    np.testing.assert_array_equal(paper.model.coef, by_hand.model.coef)
    defaults = method.validate_knobs({})
    assert defaults["protocol"] == "recommended"
    assert all(defaults[name] != value for name, value in PAPER_PROTOCOL.items())


# ------------------------------------------------------- paper-parity options
@pytest.mark.parametrize("seed", range(6))
def test_sampled_dro_is_in_the_ball_and_below_the_exact_worst_case(seed):
    rng = np.random.default_rng(seed)
    n = 300
    g = rng.choice(3, size=n, p=[0.6, 0.3, 0.1])
    h = add_group_noise(g, 0.3, seed)
    y, yhat = rng.integers(0, 2, n), rng.integers(0, 2, n)
    gammas = rng.uniform(0.01, 0.5, 3)
    samples = []
    for j in range(3):
        center = (h == j) / (h == j).sum()
        draws = sample_tv_ball(center, gammas[j], random_state=seed)
        assert draws.min() >= 0 and np.allclose(draws.sum(axis=1), 1)
        assert (0.5 * np.abs(draws - center).sum(axis=1) <= gammas[j] + 1e-12).all()
        assert (0.5 * np.abs(draws - center).sum(axis=1) > 0).all()  # they do move
        samples.append(np.vstack([center, draws]))
    for constraint in ("tpr", "eo", "dp"):
        sampled = dro_sampled_violations(y, yhat, constraint, 0.05, samples)
        exact = dro_violations(y, yhat, h, constraint, 0.05, gammas)
        naive = violations(y, yhat, h, constraint, 0.05, 3)
        assert np.all(sampled <= exact + 1e-12)
        assert np.all(sampled >= naive - 1e-12)  # the center is one of the samples


def test_sa_current_table_at_the_best_response_equals_the_exact_worst_case():
    rng = np.random.default_rng(4)
    x, y, g, h = _synthetic(800, 4, 0.3)
    nm = estimate_noise(g, h, 3)
    p_noisy = np.bincount(h, minlength=3) / len(h)
    yhat = rng.integers(0, 2, len(y))
    exact, _, tables = sa_worst(y, yhat, h, "eo", 0.05, nm.M, p_noisy, return_tables=True)
    np.testing.assert_allclose(sa_table_violations(y, yhat, h, "eo", 0.05, tables, 3), exact)
    # the independent assignment w0 = P(G=j | Ĝ=k) is in 𝒲(θ): never above the worst case
    w0 = [np.tile(nm.M[j], (4, 1)) for j in (0, 1, 2, 0, 1, 2)]
    assert np.all(sa_table_violations(y, yhat, h, "eo", 0.05, w0, 3) <= exact + 1e-12)


def test_robust_eval_only_changes_the_selection():
    x, y, g, h = _synthetic(1200, 5, 0.3)
    kw = {"aux_true": g[:400], "aux_noisy": h[:400]}
    common = {"n_steps": 60, "learning_rate": 0.05, "beta": 1.0, "eval_every": 5}
    exact = RobustFairClassifier("dro", robust_eval="exact", **common).fit(x, y, h, **kw)
    paper = RobustFairClassifier("dro", robust_eval="paper", **common).fit(x, y, h, **kw)
    np.testing.assert_array_equal(exact.candidates_, paper.candidates_)
    by_eval = exact.candidate_violations_by_eval_
    assert np.all(by_eval["paper"] <= by_eval["exact"] + 1e-12)
    if exact.selection_status_ == "feasible":  # then the paper's check never picks worse error
        assert (
            paper.candidate_errors_[paper.best_index_] <= exact.candidate_errors_[exact.best_index_]
        )
    paper.select("exact")
    np.testing.assert_array_equal(paper.coef_, exact.coef_)
    with pytest.raises(ValueError):
        paper.select("sampled")


def test_beta_zero_is_the_default_and_a_huge_beta_switches_the_constraints_off():
    x, y, g, h = _synthetic(800, 6, 0.2)
    default = RobustFairClassifier("naive", n_steps=50, learning_rate=0.05).fit(x, y, h)
    zero = RobustFairClassifier("naive", n_steps=50, learning_rate=0.05, beta=0.0).fit(x, y, h)
    np.testing.assert_array_equal(default.candidates_, zero.candidates_)
    loose = RobustFairClassifier("naive", n_steps=50, learning_rate=0.05, beta=50.0).fit(x, y, h)
    free = RobustFairClassifier("unconstrained", n_steps=50, learning_rate=0.05).fit(x, y, h)
    np.testing.assert_allclose(loose.candidates_, free.candidates_)
    assert np.all(loose.lambda_ == 0)
    assert not np.allclose(zero.candidates_, free.candidates_)


def test_validation_selection_uses_only_the_eval_set():
    x, y, g, h = _synthetic(1500, 7, 0.3)
    fit, val = np.arange(1000), np.arange(1000, 1500)
    kw = {"aux_true": g[:300], "aux_noisy": h[:300]}
    clf = RobustFairClassifier("soft", n_steps=60, learning_rate=0.05, beta=1.0)
    clf.fit(x[fit], y[fit], h[fit], eval_set=(x[val], y[val], h[val]), **kw)
    errors, viol = clf.validation_errors_, clf.candidate_violations_
    assert len(errors) == len(clf.candidates_) and viol.shape[0] == len(errors)
    assert clf.best_index_ == select_best(errors, viol)
    expected = np.mean(
        (np.hstack([x[val], np.ones((500, 1))]) @ clf.candidates_[clf.best_index_] > 0) != y[val]
    )
    assert errors[clf.best_index_] == pytest.approx(expected)


def test_method_never_uses_test_groups_and_validation_split(tmp_path):
    from dataclasses import replace

    from fairengine.data import load_dataset
    from fairengine.methods import get_method

    train, test = load_dataset("german_credit").split(random_state=3)
    shuffled = replace(test, frame=test.frame.copy())
    col = test.sensitive[0]
    shuffled.frame[col] = np.random.default_rng(0).permutation(test.frame[col].to_numpy())
    method = get_method("noisy_groups")
    knobs = {"method": "soft", "n_steps": 30, "selection": "validation", "beta": 1.0}
    a, b = method.run(train, test, **knobs), method.run(train, shuffled, **knobs)
    np.testing.assert_array_equal(a.model.coef, b.model.coef)
    assert a.metrics["train"] == b.metrics["train"]


def test_beta_rules_and_noisy_group_feature_export(tmp_path):
    from fairengine.data import load_dataset
    from fairengine.export import load_model, save_model
    from fairengine.methods import get_method
    from fairengine.methods.noisy_groups.method import BETA_GRID, NOISY_COLUMN

    train, test = load_dataset("german_credit").split(random_state=3)
    method = get_method("noisy_groups")
    relaxed = method.run(train, test, method="naive", n_steps=30, beta_rule="paper_relaxed")
    assert relaxed.artifacts["beta_used"] in BETA_GRID
    chosen = method.run(train, test, method="naive", n_steps=30, beta_rule="select")
    assert chosen.artifacts["beta_used"] in BETA_GRID
    result = method.run(train, test, method="naive", n_steps=30, group_feature="noisy", beta=1)
    assert NOISY_COLUMN in result.model.features
    loaded = load_model(save_model(result.model, tmp_path / "m.fairmodel"))
    np.testing.assert_array_equal(loaded.predict(test.X), result.model.predict(test.X))
    with_group = test.X.assign(**{NOISY_COLUMN: test.group_names[0]})
    np.testing.assert_array_equal(loaded.predict(with_group), result.model.predict(with_group))
    bound = result.artifacts["bound"]
    assert set(bound.columns) >= {"true_violation", "noisy_violation", "tv", "bound"}
    assert np.all(bound["true_violation"] <= bound["bound"] + 1e-9)  # Theorem 1 on test
