"""A fit's peak traced memory ≤ 3× its encoded training matrix for fair regression,
balanced filtering and noisy groups, with the same numbers as before (the row-block rewrites are
checked here against the full-table computations they replace; the fits against their goldens in
``test_golden_cases.py`` and ``test_noisy_groups_golden.py``).

Peaks are measured with :mod:`tracemalloc` on the full Adult training split (34k rows, as
``bench/bench_scaling.py`` at 1×), with fewer iterations than the defaults where the peak does not
depend on them. No assertion depends on time.
"""

from __future__ import annotations

import gc
import tracemalloc

import numpy as np
import pytest

from fairengine.data import FeatureEncoder, from_frame, load_dataset
from fairengine.methods import get_method
from fairengine.methods.balanced_filtering import oblique as bf_tree
from fairengine.methods.fair_regression import losses
from fairengine.methods.fair_regression.game import ACCURACY_MUL, augmented_nu
from fairengine.methods.fair_regression.losses import grid
from fairengine.methods.fair_regression.reductions import ParityReduction
from fairengine.solvers.least_squares import InterceptLeastSquares, LeastSquares

LIMIT = 3.0


@pytest.fixture(scope="module")
def law():
    task = load_dataset("law_school")
    rows = np.sort(np.random.default_rng(0).choice(len(task.y), 6000, replace=False))
    task = task.subset(rows)
    z = FeatureEncoder().fit(task.X).transform(task.X)
    y = (task.y - task.y.min()) / (task.y.max() - task.y.min())
    return z, y, np.unique(task.groups, return_inverse=True)[1]


@pytest.mark.parametrize("loss", ["square", "absolute", "logistic"])
def test_row_block_tables_are_numpys_full_table_numbers_bit_for_bit(law, loss, monkeypatch) -> None:
    """m = mean|c|, the prefix sums, the targets and the automatic ν equal the full-table numpy
    computations exactly (small blocks and leaves, so the recursion and the blocks are used)."""
    monkeypatch.setattr(losses, "LEAF", 1 << 10)
    monkeypatch.setattr(losses, "BLOCK_ROWS", 333)
    z, y, codes = law
    problem = ParityReduction(z, y, codes, 0.05, loss=loss, n_levels=23, oracle="ls",
                              base="linear")  # fmt: skip
    cost = problem.cost
    np.testing.assert_array_equal(problem.cost_prefix, np.cumsum(cost, axis=1))
    scale = max(float(np.mean(np.abs(cost))), 1e-12)  # the authors' m, bit for bit
    assert problem.objective_scale() == scale
    response = problem.best_response(np.zeros(problem.dim))
    h = response.payload.predict(z)[:, None] >= grid(23)[None, :]
    weighted = np.abs(cost) / scale * np.where(cost > 0, h, ~h)
    assert augmented_nu(problem, response) == ACCURACY_MUL * np.std(weighted) / np.sqrt(cost.size)
    lam = np.random.default_rng(1).exponential(size=problem.dim)
    full = problem.cost_prefix + np.cumsum(problem.constraint.group_weights(lam), axis=1)[codes]
    best = np.argmin(full, axis=1)
    k = np.where(full[np.arange(len(y)), best] < 0.0, best + 1, 0)
    np.testing.assert_array_equal(problem.targets(lam), (np.arange(24) + 0.5)[k].clip(0, 23) / 23)


def test_pairwise_sum_is_numpys_sum_on_any_length() -> None:
    rng = np.random.default_rng(2)
    for size in (0, 5, 127, 129, 1000, 70_001):
        a = rng.normal(size=size) * rng.choice([1.0, 1e8], size=size)
        assert losses.pairwise_sum(lambda s, e, a=a: a[s:e], size, leaf=256) == np.add.reduce(a)


def test_intercept_least_squares_solves_the_same_problem_without_a_design_copy(law) -> None:
    z, y, _ = law
    w = np.random.default_rng(3).uniform(0.2, 2.0, size=len(y))
    reference, lean = LeastSquares(z, ridge=1e-8), InterceptLeastSquares(z, ridge=1e-8)

    def lean_fitted(target, weight):
        beta = lean.coef(target, weight)
        return z @ beta[:-1] + beta[-1]

    for weight in (None, w):
        fitted = reference.fitted(y, weight)
        np.testing.assert_allclose(lean_fitted(y, weight), fitted, rtol=1e-9, atol=1e-9)
        both = np.column_stack([y, y**2])
        np.testing.assert_allclose(lean_fitted(both, weight), reference.fitted(both, weight),
                                   rtol=1e-9, atol=1e-9)  # fmt: skip
    assert not hasattr(lean, "design") and lean.rows is z  # X itself, no [X, 1] copy


def test_halfspace_votes_in_blocks_equal_the_full_table(law, monkeypatch) -> None:
    z, _, _ = law
    rng = np.random.default_rng(4)
    coefs = rng.normal(size=(40, z.shape[1]))
    coefs, intercepts = np.vstack([coefs, coefs[:5]]), rng.normal(size=45)
    intercepts[40:] = intercepts[:5]
    rows = np.nonzero(rng.random(len(z)) < 0.6)[0]
    stacked = np.column_stack([coefs, intercepts])
    unique, counts = np.unique(stacked, axis=0, return_counts=True)
    votes = (z[rows] @ unique[:, :-1].T + unique[:, -1] > 0).astype(float)
    monkeypatch.setattr(bf_tree, "VOTE_BLOCK", 700)
    got = bf_tree.tree_node_probability(coefs, intercepts, z, rows)
    np.testing.assert_array_equal(got, votes @ counts / counts.sum())
    np.testing.assert_array_equal(bf_tree.tree_node_probability(coefs, intercepts, z[rows]), got)


@pytest.fixture(scope="module")
def adult():
    frame = load_dataset("adult", sensitive="sex").frame
    classification = from_frame(frame, target="income", sensitive=["sex"], name="adult",
                                positive_label=">50K").split(random_state=0)  # fmt: skip
    frame = frame.assign(income=(frame["income"].astype(str) == ">50K").astype(float))
    regression = from_frame(frame, target="income", sensitive=["sex"], kind="regression",
                            name="adult").split(random_state=0)  # fmt: skip
    return {"classification": classification, "regression": regression}


def peak_ratio(method: str, train, test, **knobs) -> float:
    """Peak traced memory of ``Method.run`` / the encoded training matrix (as the bench)."""
    matrix = FeatureEncoder().fit(train.X).transform(train.X).nbytes
    gc.collect()
    tracemalloc.start()
    try:
        result = get_method(method).run(train, test, **knobs)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.metrics["test"]  # a real, scored run
    return peak / matrix


@pytest.mark.parametrize(
    ("method", "kind", "knobs"),
    [
        ("fair_regression", "regression", {"max_iter": 8}),
        ("balanced_filtering", "classification", {}),
        ("noisy_groups", "classification", {"n_steps": 100}),
    ],
)
def test_peak_fit_memory_is_at_most_three_encoded_matrices(adult, method, kind, knobs) -> None:
    train, test = adult[kind]
    assert peak_ratio(method, train, test, **knobs) <= LIMIT
