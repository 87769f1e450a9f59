"""The unconstrained baseline fit kept in the run store: a later process reuses it, results stay
identical, and only an intact file of the same rows and learner is ever served."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fairengine.data import load_dataset
from fairengine.export.files import load_model, model_bytes
from fairengine.frontier import task_key
from fairengine.frontier.runs import FITS_METHOD, RunStore, _key_knobs, compute_and_store, run_key
from fairengine.lru import LRU
from fairengine.methods import evidence_fits, fitted
from fairengine.methods.maxent import evaluation as maxent_evaluation
from fairengine.methods.maxent import method as maxent_method

from .run_equality import assert_same

KNOBS = {"strength": 0.5}
LOGISTIC = ("logistic", 1.0)


@pytest.fixture(scope="module")
def split():
    return load_dataset("german_credit").split()


@pytest.fixture
def fits(monkeypatch: pytest.MonkeyPatch) -> list[tuple]:
    """Every unconstrained logistic fit actually computed (not served by a cache), by key; the
    in-process cache starts empty, as in a fresh dashboard job."""
    computed: list[tuple] = []
    real = evidence_fits.logistic_learner

    def counting(C: float = 1.0) -> evidence_fits.Learner:
        learner = real(C)

        def fit_predict(train, test):
            computed.append(learner.key)
            return learner.fit_predict(train, test)

        return evidence_fits.Learner(learner.label, learner.key, fit_predict)

    monkeypatch.setattr(evidence_fits, "logistic_learner", counting)
    monkeypatch.setattr(fitted, "_FITS", LRU(fitted._FITS.size))
    return computed


def _fresh_process() -> None:
    fitted._FITS.clear()  # what a new job process starts with


def _fresh_maxent() -> None:
    """What a new job process starts with, for max-entropy (no warm start, no cached rows)."""
    _fresh_process()
    for cache in (maxent_method._BASELINES, maxent_method._WARM, maxent_evaluation._SPLITS):
        cache.clear()


def _shown(result) -> dict:
    """Everything of a run but its timing, its model as a model file keeps it."""
    state, arrays = load_model(model_bytes(result.model)).get_state()
    fields = ("method", "knobs", "metrics", "artifacts", "baselines", "checks")
    return {
        **{f: getattr(result, f) for f in fields},
        "model": (state, dict(sorted(arrays.items()))),
    }


def _fit_path(store: RunStore, train, test, key: tuple = LOGISTIC) -> Path:
    tkey = task_key(train, test)
    return store.path(tkey, FITS_METHOD, run_key(tkey, FITS_METHOD, _key_knobs(key)))


def _evidence_of(result) -> tuple:
    return result.metrics, result.baselines.to_dict(), [c.to_dict() for c in result.checks]


def test_a_second_job_reuses_the_stored_fit_and_gets_the_same_result(
    tmp_path: Path, split, fits: list
) -> None:
    train, test = split
    store = RunStore(tmp_path)
    first = compute_and_store(store, "reweighing", train, test, KNOBS)
    assert fits == [LOGISTIC]
    assert _fit_path(store, train, test).is_file()
    _fresh_process()
    second = compute_and_store(store, "reweighing", train, test, {"strength": 0.8})
    assert fits == [LOGISTIC]  # served from the store: no refit
    _fresh_process()
    again = compute_and_store(None, "reweighing", train, test, KNOBS)  # no store at all
    assert len(fits) == 2
    assert _evidence_of(first) == _evidence_of(again)
    assert second.baselines.to_dict() == first.baselines.to_dict()
    assert second.metrics != first.metrics  # the knob still acts


def test_the_stored_predictions_are_the_fitted_ones(tmp_path: Path, split, fits: list) -> None:
    train, test = split
    store = RunStore(tmp_path)
    learner = evidence_fits.logistic_learner(1.0)
    with evidence_fits.stored_fits(store):
        value = evidence_fits.unconstrained_predictions(learner, train, test)
    stored = store.get_fit(train, test, LOGISTIC)
    assert stored is not None
    for a, b in zip(value, stored, strict=True):
        np.testing.assert_array_equal(np.asarray(a, dtype=float), b)


def test_another_task_or_learner_never_hits(tmp_path: Path, split, fits: list) -> None:
    train, test = split
    store = RunStore(tmp_path)
    with evidence_fits.stored_fits(store):
        evidence_fits.unconstrained_predictions(evidence_fits.logistic_learner(1.0), train, test)
    assert store.get_fit(train, test, LOGISTIC) is not None
    assert store.get_fit(train, test, ("logistic", 0.5)) is None
    other_train, other_test = load_dataset("german_credit").split(random_state=1)
    assert store.get_fit(other_train, other_test, LOGISTIC) is None
    assert store.get_fit(test, train, LOGISTIC) is None  # the roles of the rows count too
    assert len(fits) == 1


def test_a_tampered_fit_file_is_refused_and_refitted(
    tmp_path: Path, split, fits: list, caplog: pytest.LogCaptureFixture
) -> None:
    train, test = split
    store = RunStore(tmp_path)
    first = compute_and_store(store, "reweighing", train, test, KNOBS)
    path = _fit_path(store, train, test)
    raw = bytearray(path.read_bytes())
    at = raw.index(b"arrays/")  # a byte inside a stored array's member
    raw[at + 200] ^= 0xFF
    path.write_bytes(bytes(raw))
    assert store.get_fit(train, test, LOGISTIC) is None
    _fresh_process()
    again = compute_and_store(store, "reweighing", train, test, KNOBS)
    assert fits == [LOGISTIC, LOGISTIC]  # refitted, not served from the damaged file
    assert _evidence_of(again) == _evidence_of(first)
    assert "Skipping unreadable run" in caplog.text


def test_a_foreign_fit_file_is_refused(tmp_path: Path, split, fits: list) -> None:
    """A valid file of another learner, put where this learner's fit belongs, is not served."""
    train, test = split
    store = RunStore(tmp_path)
    with evidence_fits.stored_fits(store):
        evidence_fits.unconstrained_predictions(evidence_fits.logistic_learner(0.5), train, test)
    foreign = _fit_path(store, train, test, ("logistic", 0.5))
    target = _fit_path(store, train, test)
    target.write_bytes(foreign.read_bytes())
    assert store.get_fit(train, test, LOGISTIC) is None


def test_stored_arrays_of_the_wrong_rows_are_refused(tmp_path: Path, split, fits: list) -> None:
    train, test = split
    store = RunStore(tmp_path)
    store.put_fit(train, test, LOGISTIC, (np.zeros(len(train.y)), np.zeros(3)))
    assert store.get_fit(train, test, LOGISTIC) is None
    store.put_fit(train, test, LOGISTIC, (np.zeros(len(train.y)), np.full(len(test.y), np.nan)))
    assert store.get_fit(train, test, LOGISTIC) is None


def test_maxent_reuses_its_stored_comparison_rows_with_an_identical_result(
    tmp_path: Path, split, fits: list, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Max-entropy's raw-data and reweighing rows depend on the rows, not on C: a second job
    at another C reads them from the store; a job at the same C gives the very same run."""
    train, test = split
    computed: list[int] = []
    real = maxent_method._baselines

    def counting(*args, **kwargs):
        computed.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(maxent_method, "_baselines", counting)
    _fresh_maxent()
    store = RunStore(tmp_path)
    knobs = {"n_samples": 2000, "C": 0.5}
    first = compute_and_store(store, "maxent", train, test, knobs)
    _fresh_maxent()
    other = compute_and_store(store, "maxent", train, test, {**knobs, "C": 0.3})
    assert len(computed) == 1  # the second job read the rows
    assert other.metrics != first.metrics
    _fresh_maxent()
    again = compute_and_store(store, "maxent", train, test, knobs)
    _fresh_maxent()
    plain = compute_and_store(None, "maxent", train, test, knobs)  # nothing stored at all
    assert len(computed) == 2
    for run in (again, plain):
        assert_same(_shown(run), _shown(first))


def test_sweep_points_reuse_the_fit_kept_beside_the_frontier_store(
    tmp_path: Path, split, fits: list
) -> None:
    """Each point of a page's sweep runs in a call of its own: the baseline is fitted once."""
    from fairengine.frontier import FrontierStore, sweep

    train, test = split
    store = FrontierStore(tmp_path)
    first = sweep("reweighing", train, test, {"strength": [0.25]}, store=store)
    _fresh_process()
    second = sweep("reweighing", train, test, {"strength": [0.75]}, store=store)
    assert fits == [LOGISTIC]
    assert RunStore(tmp_path).get_fit(train, test, LOGISTIC) is not None
    assert len(first.points) and len(second.points)
