"""One evaluation for every method: every classification method on Adult/sex on one
plane, each reported error / dp_diff recomputed independently from its exported model file."""

from __future__ import annotations

import numpy as np
import pytest

from fairengine import metrics
from fairengine.data import load_dataset
from fairengine.export import load_model, save_model
from fairengine.methods import get_method, list_methods
from fairengine.models.linear import RandomizedClassifier

#: Cheap but real settings per method (the suite's time budget); every classification method.
CHEAP: dict[str, dict] = {
    "reweighing": {},
    "fairlearn_eg": {"max_iter": 10},
    "threshold_optimizer": {},
    "balanced_filtering": {"alpha": 0.1},
    "maxent": {"n_samples": 2000},
    "noisy_groups": {"n_steps": 100, "group_feature": "noisy"},  # model reads a simulated column
    "multiaccurate_proxy": {"n_iter": 50, "max_rows": 1000},
}
PREDICTING = [m for m in CHEAP if m != "balanced_filtering"]


@pytest.fixture(scope="module")
def adult():
    task = load_dataset("adult", sensitive="sex")
    rows = np.random.default_rng(0).choice(len(task.frame), 4000, replace=False)
    return task.subset(np.sort(rows)).split(random_state=0)


@pytest.fixture(scope="module")
def results(adult):
    train, test = adult
    return {name: get_method(name).run(train, test, **knobs) for name, knobs in CHEAP.items()}


def test_every_classification_method_is_covered() -> None:
    applicable = {m for m in list_methods() if "classification" in get_method(m).kinds}
    assert applicable == set(CHEAP)


def test_every_reported_name_is_declared(results) -> None:
    for name, result in results.items():
        for split in ("train", "test"):
            assert metrics.undeclared(result.metrics[split]) == [], name
        method = get_method(name)
        assert metrics.undeclared([method.fairness_metric, method.performance_metric]) == []


def test_predicting_methods_share_the_plane_and_filters_do_not(results) -> None:
    shared = metrics.standard_metrics("classification")
    for name in PREDICTING:
        for split in ("train", "test"):
            values = results[name].metrics[split]
            assert set(shared) <= set(values), name
            # only predictive values may be undefined: for a model predicting one class only
            # (precision without a predicted positive is undefined in every group)
            undefined = {m for m in shared if not np.isfinite(values[m])}
            by_prediction = {
                f"{r}_{a}" for r in ("ppv", "fdr", "npv", "for") for a in ("diff", "ratio")
            }
            assert undefined <= by_prediction, (name, undefined)
            assert not undefined or values["dp_diff"] == 0, name
    filt = results["balanced_filtering"].metrics["test"]
    assert not set(shared) & set(filt)
    assert {"disclosivity", "imbalance"} <= set(filt)


def _expected_positive(model, X) -> np.ndarray:
    """P(ŷ = 1 | x) of a loaded model, without fairengine's scoring code: the mixture
    probability for a randomized classifier (a mixture, or group thresholds drawn at random),
    the hard prediction otherwise."""
    if isinstance(model, RandomizedClassifier) or model.model_type == "group_threshold_classifier":
        return np.asarray(model.predict_score(X), dtype=float)
    return np.asarray(model.predict(X), dtype=float)


@pytest.mark.parametrize("name", PREDICTING)
def test_reported_metrics_equal_the_exported_models(name, results, adult, tmp_path) -> None:
    train, test = adult
    result = results[name]
    path = save_model(result.model, tmp_path / f"{name}.fairmodel")
    model = load_model(path)
    for split, task in (("train", train), ("test", test)):
        extra = (result.artifacts.get("extra_inputs") or {}).get(split) or {}
        p = _expected_positive(model, task.X.assign(**extra))
        y = np.asarray(task.y, dtype=float)
        g = np.asarray(task.groups)
        error = float(np.mean(y * (1 - p) + (1 - y) * p))
        rates = [p[g == k].mean() for k in np.unique(g)]
        reported = result.metrics[split]
        assert reported["error"] == pytest.approx(error, abs=1e-12), (name, split)
        assert reported["dp_diff"] == pytest.approx(max(rates) - min(rates), abs=1e-12)


def test_regression_metrics_are_expectations_over_the_exported_mixture(tmp_path) -> None:
    task = load_dataset("law_school")
    rows = np.random.default_rng(1).choice(len(task.frame), 2000, replace=False)
    train, test = task.subset(np.sort(rows)).split(random_state=0)
    result = get_method("fair_regression").run(train, test, eps=0.05, n_levels=20, max_iter=20)
    model = load_model(save_model(result.model, tmp_path / "q.fairmodel"))
    y, g = np.asarray(test.y, dtype=float), np.asarray(test.groups)
    weights, predictions = model.prediction_mixture(test.X)
    assert weights.sum() == pytest.approx(1.0)
    expected_loss = sum(w * np.mean((y - predictions[:, t]) ** 2) for t, w in enumerate(weights))
    reported = result.metrics["test"]
    assert metrics.undeclared([*result.metrics["train"], *reported]) == []
    assert reported["loss"] == pytest.approx(expected_loss, rel=1e-10)
    # Monte Carlo over the randomized predictor agrees with the exact expectation
    draws = [np.mean((y - model.predict(test.X, random_state=s)) ** 2) for s in range(200)]
    assert np.mean(draws) == pytest.approx(expected_loss, rel=0.02)
    # sp_ks from the model's exact mixture CDFs (P(f(x) <= t) per row, averaged per group)
    thresholds = np.unique(predictions)
    cdf = model.predict_cdf(test.X, thresholds)
    overall = cdf.mean(axis=0)
    gaps = [np.abs(cdf[g == k].mean(axis=0) - overall).max() for k in np.unique(g)]
    assert reported["sp_ks"] == pytest.approx(max(gaps), abs=1e-9)
