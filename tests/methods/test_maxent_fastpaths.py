"""Max-entropy: the fast paths give the numbers of the plain ones on real data.

The Hessian from contingency tables equals the dense one; uint8 tree scoring reaches the leaves of
the shared codec; hashed multi-word row keys find the rows a dictionary finds.

Real data: the 13-column Adult sample of ``tests.methods.golden_cases`` and the same rows widened
with 40 noisy binned numeric columns (the shape of the scaling benchmark's wide table). The
structured sums run in another order (and with r instead of (√r)²), so the comparison is to
1e-12 relative, not bitwise; the fitted generator then gives the same samples and classifier.
No assertion depends on time.
"""

from __future__ import annotations

import numpy as np
import pytest

from fairengine.data import row_keys as keys
from fairengine.methods.maxent.classifier import fit_classifier
from fairengine.methods.maxent.debiaser import MaxEntDebiaser, distinct_rows
from fairengine.methods.maxent.domain import domain_from_task, readable_rows
from fairengine.methods.maxent.oracle import (
    DualOracle,
    PairMoments,
    feature_groups,
    use_pair_moments,
)
from fairengine.methods.maxent.reweighting import prior_weights
from fairengine.models import trees
from tests.methods.golden_cases import splits
from tests.methods.test_maxent_lean import _widen


@pytest.fixture(scope="module", params=["adult", "wide"])
def table(request):
    train, _ = splits("adult")
    if request.param == "wide":
        train = _widen(train, 1)
    domain = domain_from_task(train, 4)
    codes = domain.codes(readable_rows(train, domain))
    z, y = codes[:, domain.index("protected")], codes[:, domain.index("label")]
    rows, weights, _ = distinct_rows(codes, prior_weights(z, y, 1.0, "reweighted"), domain.sizes)
    return train, domain, rows, weights


def _dense_second(domain, rows, r):
    points = domain.encode(rows)
    return (points * r[:, None]).T @ points


def test_groups_cover_the_features_in_order() -> None:
    sizes = np.array([4, 4, 4, 4, 9, 2, 2, 70, 3])
    groups = feature_groups(sizes, 64)
    assert groups[0][0] == 0 and groups[-1][1] == len(sizes)
    assert all(a[1] == b[0] for a, b in zip(groups[:-1], groups[1:], strict=True))
    for a, b in groups:  # a group stays within the cells, or is one feature alone
        assert b - a == 1 or np.prod(sizes[a:b]) <= 64
    assert (7, 8) in groups  # 70 levels: alone


def test_pair_moments_match_the_dense_second_moment(table) -> None:
    _, domain, rows, weights = table
    r = np.random.default_rng(3).random(len(rows)) * weights
    r /= r.sum()
    dense = _dense_second(domain, rows, r)
    got = PairMoments(rows, domain.sizes).second_moment(r)
    np.testing.assert_allclose(got, dense, rtol=1e-12, atol=1e-300)
    np.testing.assert_array_equal(got, got.T)
    np.testing.assert_array_equal(got == 0, dense == 0)  # structural zeros stay exact zeros
    # integer weights: every sum is exact, so the tables give the dense result bitwise
    counts = np.random.default_rng(4).integers(0, 5, len(rows)).astype(float)
    np.testing.assert_array_equal(
        PairMoments(rows, domain.sizes).second_moment(counts), _dense_second(domain, rows, counts)
    )


def test_the_cost_model_picks_the_tables_at_the_benchmark_size(table) -> None:
    _, domain, _, _ = table
    assert use_pair_moments(34_000, domain.sizes)  # the 1x / wide scaling tables' distinct rows
    assert not use_pair_moments(50, domain.sizes)  # a few rows: the dense update


def _choose(monkeypatch, tables: bool) -> None:
    monkeypatch.setattr(
        "fairengine.methods.maxent.oracle.use_pair_moments", lambda *args, **kwargs: tables
    )


def test_oracle_hessian_with_codes_matches_the_dense_hessian(table, monkeypatch) -> None:
    _, domain, rows, weights = table
    theta = domain.marginal_sums(rows, weights) / weights.sum()
    points = domain.encode(rows, dtype=np.uint8)
    lam = np.random.default_rng(5).normal(0, 0.3, domain.d)
    _choose(monkeypatch, True)
    for C in (0.0, 0.4):
        dense = DualOracle(domain.sizes, points, weights, C, theta)(lam)
        tables = DualOracle(domain.sizes, points, weights, C, theta, codes=rows)(lam)
        assert tables.value == dense.value
        np.testing.assert_array_equal(tables.grad, dense.grad)
        np.testing.assert_allclose(tables.hess, dense.hess, rtol=1e-12, atol=1e-15)


def test_fit_with_table_hessians_gives_the_dense_fit(table, monkeypatch) -> None:
    train, domain, _, _ = table
    _choose(monkeypatch, True)
    fast = MaxEntDebiaser(C=0.5).fit(train, domain)
    _choose(monkeypatch, False)
    dense = MaxEntDebiaser(C=0.5).fit(train, domain)
    assert fast.n_iter_ == dense.n_iter_
    np.testing.assert_allclose(fast.lambda_, dense.lambda_, rtol=0, atol=1e-11)
    np.testing.assert_array_equal(fast.sample_codes(3000, 0), dense.sample_codes(3000, 0))
    assert fast.representation_rate_ == pytest.approx(dense.representation_rate_, rel=1e-12)


def test_uint8_tree_walk_reaches_the_codecs_leaves(table) -> None:
    _, domain, rows, weights = table
    only = domain.model_features
    X = domain.encode(rows[:, only], only, dtype=np.float32)
    params = fit_classifier("tree", X, rows[:, domain.index("label")], weights * len(rows))
    small = domain.encode(rows[:, only], only, dtype=np.uint8)
    leaves = trees.apply(params, X.astype(np.float64))[:, 0]  # every cell converted (float64)
    np.testing.assert_array_equal(trees.apply(params, small)[:, 0], leaves)
    np.testing.assert_array_equal(trees.apply(params, X)[:, 0], leaves)


def test_hashed_row_keys_find_what_a_dictionary_finds(table, monkeypatch) -> None:
    _, domain, rows, _ = table
    rng = np.random.default_rng(6)
    order = rng.permutation(len(rows))
    stored = rows[order[: len(rows) // 2]]  # half the rows, in no particular order
    queries = np.vstack([rows, rows[:3] * 0 + 250])  # the other half, and rows off the domain
    expected = {r.tobytes(): i for i, r in enumerate(keys.pack(stored, domain.sizes))}
    words = keys.pack(np.where(queries < domain.sizes, queries, 0), domain.sizes)
    want = np.array([expected.get(w.tobytes(), -1) for w in words])
    want[len(rows) :] = -1
    np.testing.assert_array_equal(keys.RowIndex(stored, domain.sizes).find(queries), want)
    # every row hashed alike: the colliding table falls back to the dictionary, same answer
    monkeypatch.setattr(keys, "_hash", lambda w: np.zeros(len(w), dtype=np.int64))
    if keys.pack(stored, domain.sizes).shape[1] > 1:
        index = keys.RowIndex(stored, domain.sizes)
        assert index._index is not None
        np.testing.assert_array_equal(index.find(queries), want)
