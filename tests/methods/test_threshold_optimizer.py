"""fairlearn's ThresholdOptimizer as a reference method: it keeps its constraint on held-out
rows, and its model (and model file) needs the sensitive column to predict."""

from __future__ import annotations

import numpy as np
import pytest

from fairengine import metrics
from fairengine.data import load_dataset
from fairengine.export import ModelFileError, load_model, model_card, result_metadata, save_model
from fairengine.lru import LRU
from fairengine.methods import get_method, list_methods
from fairengine.methods.threshold_optimizer import _label_tolerance


@pytest.fixture(scope="module")
def adult():
    task = load_dataset("adult", sensitive="sex")
    rows = np.random.default_rng(0).choice(len(task.frame), 8000, replace=False)
    return task.subset(np.sort(rows)).split(random_state=0)


@pytest.mark.parametrize(
    ("knobs", "metric", "bound"),
    [
        ({"constraint": "demographic_parity"}, "dp_diff", 0.0),
        ({"constraint": "demographic_parity", "tol": 0.1}, "dp_diff", 0.1),
        ({"constraint": "equalized_odds"}, "eo_diff", 0.0),
    ],
)
def test_constraint_holds_on_held_out_rows(adult, knobs, metric, bound) -> None:
    train, test = adult
    result = get_method("threshold_optimizer").run(train, test, **knobs)
    p = result.model.predict_score(test.frame)
    measured = metrics.METRICS[metric](test.y, p, test.groups)
    assert measured == pytest.approx(result.metrics["test"][metric])
    # the constraint plus two standard errors of the compared rate on the held-out rows
    assert measured <= bound + 2 * _label_tolerance(test, metric), measured
    unconstrained = result.baselines.unconstrained["test"][metric]
    assert measured < unconstrained  # it moved the metric it targets
    checks = {c.name: c for c in result.checks}
    assert checks["held_out_constraint"].level == "ok"
    assert result.metrics["test"]["error"] < result.baselines.constant["test"]["error"]


def test_it_needs_the_sensitive_column_to_predict(adult, tmp_path) -> None:
    from fairengine.models.columns import SchemaError, check_columns, input_schema

    train, test = adult
    result = get_method("threshold_optimizer").run(train, test)
    assert "sex" in result.model.features
    with pytest.raises(ValueError, match="sensitive column"):
        result.model.predict_score(test.X)
    card = model_card(result, train, test, method=get_method(result.method))
    assert "sensitive attribute at prediction time" in card
    path = tmp_path / "to.fairmodel"
    save_model(result.model, path, card=card, metadata=result_metadata(result, train, test))
    loaded = load_model(path)
    assert np.allclose(loaded.predict_score(test.frame), result.model.predict_score(test.frame))
    with pytest.raises(SchemaError, match="sex"):
        check_columns(input_schema(loaded), list(test.X.columns))
    drawn = loaded.predict(test.frame, random_state=3)
    assert set(np.unique(drawn)) <= {0, 1}
    assert abs(drawn.mean() - loaded.predict_score(test.frame).mean()) < 0.03


def test_a_rule_outside_its_ranges_is_refused(adult) -> None:
    """The state schema refuses probabilities outside [0, 1] and unknown operations before a
    model is built (a forged file with valid checksums meets the same check)."""
    train, test = adult
    model = get_method("threshold_optimizer").run(train, test).model
    state, arrays = model.get_state()
    validate_state = type(model).state_schema.check  # what load_model runs before building
    validate_state(state, arrays)
    for name, value in (("rule_p0", 2.0), ("rule_op1", 0.5), ("rule_t0", np.inf)):
        forged = {**arrays, name: np.full_like(arrays[name], value)}
        with pytest.raises(ModelFileError, match=name):
            validate_state(state, forged)
    missing = {k: v for k, v in arrays.items() if k != "rule_p1"}
    with pytest.raises(ModelFileError, match="rule_p1"):
        validate_state(state, missing)


def test_registered_beside_the_other_reference_methods() -> None:
    names = list_methods()
    assert names.index("fairlearn_eg") < names.index("threshold_optimizer")
    method = get_method("threshold_optimizer")
    assert method.seed is None and "sensitive attribute at prediction time" in method.description


@pytest.mark.parametrize("dataset", ["german_credit", "compas"])
@pytest.mark.parametrize("constraint", ["demographic_parity", "true_positive_rate_parity"])
def test_trade_off_curves_fitted_once_pick_what_fairlearn_picks(dataset, constraint) -> None:
    """Every tolerance picked on the curves kept from one fit equals fairlearn's own fit."""
    from fairengine.methods._linear import encode_train, fitted_logistic
    from fairengine.methods.threshold_optimizer import fit_rule

    train, _ = load_dataset(dataset).split()
    scores = fitted_logistic(train, 1.0).predict_proba(encode_train(train)[1])[:, 1]
    for objective in ("accuracy_score", "balanced_accuracy_score"):
        rules = []
        for tol in (0.0, 0.02, 0.05, 0.1, 0.2):
            knobs = {"constraint": constraint, "objective": objective, "tol": tol}
            fresh, _ = fit_rule(scores, train.y, train.groups, train.n_groups, knobs)
            key = (train.fingerprint, 1.0)
            kept, _ = fit_rule(scores, train.y, train.groups, train.n_groups, knobs, curves_key=key)
            for field in fresh.arrays:
                np.testing.assert_array_equal(kept.arrays[field], fresh.arrays[field])
            rules.append(fresh)
        first, last = rules[0].arrays, rules[-1].arrays  # the tolerance moved the thresholds
        assert any(not np.array_equal(first[f], last[f]) for f in first)


def test_a_sweep_fits_the_encoding_and_base_model_once(monkeypatch) -> None:
    """Five tolerances, one logistic regression fit and one encoder fit (baselines included),
    and the same points as runs with nothing shared."""
    from fairengine.data.encoding import FeatureEncoder
    from fairengine.frontier import sweep
    from fairengine.methods import _linear, fitted

    train, test = load_dataset("german_credit").split(random_state=3)
    counts = {"fit": 0, "encode": 0}
    fit, encode = _linear._SingleThreadLogisticRegression.fit, FeatureEncoder.fit

    def counted(name, function):
        def wrapper(*args, **kwargs):
            counts[name] += 1
            return function(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(_linear._SingleThreadLogisticRegression, "fit", counted("fit", fit))
    monkeypatch.setattr(FeatureEncoder, "fit", counted("encode", encode))
    monkeypatch.setattr(fitted, "_FITS", LRU(fitted._FITS.size))
    tols = [0.0, 0.02, 0.05, 0.1, 0.2]
    frontier = sweep("threshold_optimizer", train, test, {"tol": tols})
    assert counts == {"fit": 1, "encode": 1}
    method = get_method("threshold_optimizer")
    for tol in (0.0, 0.1):
        monkeypatch.setattr(fitted, "_FITS", LRU(fitted._FITS.size))
        alone = method.run(train, test, tol=tol)
        point = frontier.points.query("split == 'test' and tol == @tol").iloc[0]
        assert point["error"] == alone.metrics["test"]["error"]
        assert point["dp_diff"] == alone.metrics["test"]["dp_diff"]
