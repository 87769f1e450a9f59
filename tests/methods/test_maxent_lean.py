"""Max-entropy: lean results and the memory-light paths give the same numbers.

Real data: a 4,000-row Adult sample (``tests.methods.golden_cases.splits``), widened with 40 noisy
numeric columns so the row keys need several words and almost every row is distinct (the shape
of the scaling benchmark's 113-column table). No assertion depends on time.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from scipy.special import logsumexp

from fairengine.data import from_frame
from fairengine.data.row_keys import RowIndex, pack, unique_rows
from fairengine.methods import get_method
from fairengine.methods.maxent.classifier import INPUT_DTYPE, classifier_scores, fit_classifier
from fairengine.methods.maxent.domain import domain_from_task, readable_rows
from fairengine.methods.maxent.oracle import DualOracle
from tests.methods.golden_cases import splits

EXTRA = 40


def _widen(task, seed: int):
    frame = task.frame.copy()
    rng = np.random.default_rng(seed)
    base = frame["age"].to_numpy(float)
    extra = {f"x{j:02d}": np.round(base * (1 + j % 3) + rng.normal(0, 5, len(frame))).astype(int)
             for j in range(EXTRA)}  # fmt: skip
    frame = frame.assign(**extra)
    return from_frame(frame, target=task.target, sensitive=list(task.sensitive), name="adult",
                      positive_label=task.positive_label)  # fmt: skip


@pytest.fixture(scope="module")
def wide():
    train, test = splits("adult")
    return _widen(train, 1), _widen(test, 2)


@pytest.fixture(scope="module")
def coded(wide):
    train, _ = wide
    domain = domain_from_task(train, 4)
    return domain, domain.codes(readable_rows(train, domain))


@pytest.fixture(scope="module")
def result(wide):
    train, test = wide
    return get_method("maxent").run(train, test, n_samples=1000, domain="all")


def _dense_encode(domain, codes):
    """The reference coding written out feature by feature (level k ≥ 1 ↦ e_k)."""
    out = np.zeros((len(codes), domain.d))
    for f, start in enumerate(domain.offsets[:-1]):
        hit = codes[:, f] > 0
        out[np.flatnonzero(hit), start + codes[hit, f].astype(int) - 1] = 1.0
    return out


def test_codes_are_compact_and_encode_matches_the_reference_coding(coded) -> None:
    domain, codes = coded
    assert codes.dtype == np.uint8 and len(domain.features) > 50
    dense = _dense_encode(domain, codes)
    for dtype in (float, np.float32, np.uint8):
        got = domain.encode(codes, dtype=dtype)
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(got, dense)
    only = domain.model_features
    np.testing.assert_array_equal(
        domain.encode(codes[:, only], only), dense[:, : domain.offsets[len(only)]]
    )
    w = np.random.default_rng(0).random(len(codes))
    np.testing.assert_allclose(domain.marginal_sums(codes, w), w @ dense, rtol=1e-12)
    np.testing.assert_array_equal(domain.marginal_sums(codes), dense.sum(axis=0))


def test_row_keys_on_a_wide_table(coded) -> None:
    """Several key words; hashed distinct rows equal np.unique's; a shuffled table is found."""
    domain, codes = coded
    assert pack(codes, domain.sizes).shape[1] >= 2
    rows, inverse, counts = np.unique(codes, axis=0, return_inverse=True, return_counts=True)
    got = unique_rows(codes, domain.sizes)
    np.testing.assert_array_equal(got[0], rows)
    np.testing.assert_array_equal(got[1], inverse.ravel())
    np.testing.assert_array_equal(got[2], counts)
    narrow = codes[:, -4:]  # one word; a table restored in another order is still searched
    table = np.unique(narrow, axis=0)
    shuffled = table[np.random.default_rng(0).permutation(len(table))]
    found = RowIndex(shuffled, domain.sizes[-4:]).find(np.vstack([table, table[:2] * 0 + 200]))
    np.testing.assert_array_equal(shuffled[found[: len(table)]], table)
    assert (found[len(table) :] == -1).all()


def test_blocked_uint8_oracle_matches_the_dense_formulas(coded) -> None:
    """Value, gradient and Hessian from uint8 points in blocks = the dense float64 formulas."""
    domain, codes = coded
    rows, inverse, _ = unique_rows(codes, domain.sizes)
    weights = np.bincount(inverse, minlength=len(rows)) / len(codes)
    dense = _dense_encode(domain, rows)
    theta = weights @ dense
    oracle = DualOracle(domain.sizes, domain.encode(rows, dtype=np.uint8), weights, 0.3, theta)
    oracle._step = 97  # many blocks
    lam = np.random.default_rng(1).normal(0, 0.3, domain.d)
    state = oracle(lam)
    b = np.log(weights) + dense @ lam
    r = np.exp(b - logsumexp(b))
    np.testing.assert_allclose(state.r, r, rtol=1e-11)
    m_w = r @ dense
    second = (dense * r[:, None]).T @ dense
    m_u = state.means[0]
    sigma_u = np.diag(m_u) - np.outer(m_u, m_u) * oracle._same_block
    pi = state.pi
    hess = pi * sigma_u + (1 - pi) * (second - np.outer(m_w, m_w))
    hess += pi * (1 - pi) * np.outer(m_u - m_w, m_u - m_w)
    np.testing.assert_allclose(state.grad + theta, pi * m_u + (1 - pi) * m_w, atol=1e-14)
    np.testing.assert_allclose(state.hess, hess, atol=1e-13)
    np.testing.assert_array_equal(state.hess, state.hess.T)
    again = oracle(lam, hessian=False)  # cached: the same state
    assert again is state


@pytest.mark.parametrize("kind", ["tree", "gnb"])
def test_block_scoring_of_uint8_inputs_matches_float64(coded, kind) -> None:
    domain, codes = coded
    only = domain.model_features
    X = domain.encode(codes[:, only], only)
    y = codes[:, domain.index("label")]
    params = fit_classifier(kind, X.astype(INPUT_DTYPE[kind]), y)
    small = domain.encode(codes[:, only], only, dtype=np.uint8)
    full = classifier_scores(params, X)
    np.testing.assert_array_equal(classifier_scores(params, small), full)
    if kind == "tree":  # the same P(y=1|x) scikit-learn gives
        from sklearn.tree import DecisionTreeClassifier

        tree = DecisionTreeClassifier(random_state=0).fit(X.astype(np.float32), y)
        np.testing.assert_array_equal(full, tree.predict_proba(X)[:, 1])


def test_wide_result_is_lean_and_unpickles_to_the_same_generator(result, wide) -> None:
    train, _ = wide
    size = len(pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
    generator = result.model.generator
    rows = generator.rows_
    assert rows.dtype == np.uint8 and generator.counts_.dtype.kind == "u"
    assert len(rows) > 0.95 * len(train.y)  # nearly every row distinct (noisy numeric columns)
    # codes take one byte each; no training matrix, dual state or Hessian is pickled
    assert size < rows.size + 40 * len(rows) + 300_000, size
    assert "encoded_inputs" not in result.artifacts
    clone = pickle.loads(pickle.dumps(result.model, protocol=pickle.HIGHEST_PROTOCOL)).generator
    assert "_state" not in vars(clone) and "_prior_state" not in vars(clone)
    np.testing.assert_array_equal(clone.sample_codes(300, 5), generator.sample_codes(300, 5))
    np.testing.assert_array_equal(
        clone.sample_codes(300, 5, prior=True), generator.sample_codes(300, 5, prior=True)
    )
    probe = generator.sample_codes(50, 7)
    np.testing.assert_array_equal(clone.log_probability(probe), generator.log_probability(probe))
    np.testing.assert_allclose(clone.prior_joint().sum(), 1.0, rtol=1e-12)


def test_cached_coded_splits_give_the_numbers_of_a_fresh_run(wide) -> None:
    """A sweep codes its splits once (C/τ-independent): a point run with warm caches equals the
    same point run from empty caches."""
    from fairengine.methods.maxent import evaluation, method

    train, test = wide
    knobs = {"C": 0.9, "tau": 0.8, "n_samples": 500}
    get_method("maxent").run(train, test, **{**knobs, "C": 0.2})  # the splits get cached
    method._WARM.clear()  # λ* warm starts move the solver's path (within tol): not under test
    warm = get_method("maxent").run(train, test, **knobs)
    assert any(key[0] == train.fingerprint for key in evaluation._SPLITS)
    for cache in (evaluation._SPLITS, method._BASELINES, method._WARM):
        cache.clear()
    fresh = get_method("maxent").run(train, test, **knobs)
    for split in ("train", "test"):  # NaN where a rate is undefined (a one-class classifier)
        assert warm.metrics[split].keys() == fresh.metrics[split].keys()
        np.testing.assert_array_equal(
            list(warm.metrics[split].values()), list(fresh.metrics[split].values())
        )
    np.testing.assert_array_equal(
        warm.artifacts["rates"].to_numpy(float), fresh.artifacts["rates"].to_numpy(float)
    )


def test_tree_on_distinct_rows_is_the_tree_on_every_row() -> None:
    """The unweighted tree fitted on distinct (inputs, label) rows with count weights is the tree
    fitted on every row (Adult codes with every row repeated up to 3 times)."""
    from fairengine.methods.maxent.evaluation import _classifier_data

    train, _ = splits("adult")
    domain = domain_from_task(train, 4)
    codes = domain.codes(readable_rows(train, domain))
    codes = codes[np.random.default_rng(3).integers(0, len(codes), 3 * len(codes))]
    only, y = domain.model_features, codes[:, domain.index("label")]
    X, y_fit, weights = _classifier_data(codes, domain, only, "tree")
    assert len(X) < len(codes) / 2 and weights.sum() == len(codes)
    full = domain.encode(codes[:, only], only, dtype=np.float32)
    every = fit_classifier("tree", full, y)
    distinct = fit_classifier("tree", X, y_fit, weights)
    assert sorted(every) == sorted(distinct)
    for key, value in every.items():
        np.testing.assert_array_equal(distinct[key], value, err_msg=key)
