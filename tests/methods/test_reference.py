"""The method contract and the two reference methods."""

from __future__ import annotations

import numpy as np
import pytest
from fairlearn.reductions import DemographicParity, ExponentiatedGradient

from fairengine.data import DataError, load_dataset
from fairengine.methods import KnobError, get_method, list_methods
from fairengine.methods._linear import encode_train, logistic_regression
from fairengine.methods.base import Knob
from fairengine.methods.reweighing import reweighing_weights


@pytest.fixture(scope="module")
def german():
    return load_dataset("german_credit").split(random_state=0)


def test_registry_lists_reference_methods() -> None:
    assert {"reweighing", "fairlearn_eg"} <= set(list_methods())
    with pytest.raises(ValueError, match="Unknown method 'nope'.*reweighing"):
        get_method("nope")


def test_knob_validation() -> None:
    knob = Knob("eps", 0.1, 0.001, 0.5, log=True)
    assert knob.validate("0.2") == 0.2
    with pytest.raises(KnobError, match=r"must be in \[0.001, 0.5\]"):
        knob.validate(0.9)
    with pytest.raises(KnobError, match="must be a number"):
        knob.validate("abc")
    assert Knob("n", 5, 1, 10, integer=True).validate("7") == 7
    with pytest.raises(KnobError, match="integer"):
        Knob("n", 5, 1, 10, integer=True).validate(2.5)
    choice = Knob("constraint", "a", choices=("a", "b"))
    assert choice.validate("b") == "b"
    with pytest.raises(KnobError, match="one of a, b"):
        choice.validate("c")
    method = get_method("reweighing")
    assert method.validate_knobs({"strength": "0.5"}) == {"strength": 0.5, "C": 1.0}
    with pytest.raises(KnobError, match="no knob 'alpha'"):
        method.validate_knobs({"alpha": 1})


def test_reweighing_weights_make_group_and_label_independent() -> None:
    rng = np.random.default_rng(0)
    groups = rng.integers(0, 3, 5000)
    y = (rng.random(5000) < 0.2 + 0.2 * groups).astype(int)
    w = reweighing_weights(groups, y, 1.0)
    for g in range(3):
        weighted_rate = np.average(y[groups == g], weights=w[groups == g])
        assert weighted_rate == pytest.approx(y.mean(), abs=1e-12)
    np.testing.assert_allclose(reweighing_weights(groups, y, 0.0), 1.0)
    half = reweighing_weights(groups, y, 0.5)
    np.testing.assert_allclose(half, (1.0 + w) / np.mean(1.0 + w))


def test_reweighing_strength_zero_is_unconstrained_logistic_regression(german) -> None:
    train, test = german
    result = get_method("reweighing").run(train, test, strength=0.0)
    encoder, Z = encode_train(train)
    plain = logistic_regression(1.0).fit(Z, train.y)
    np.testing.assert_array_equal(
        result.model.predict(test.X), plain.predict(encoder.transform(test.X))
    )
    assert set(result.metrics) == {"train", "test"}
    assert 0.0 <= result.metrics["test"]["dp_diff"] <= 1.0
    assert result.metrics["test"]["error"] == pytest.approx(1 - result.metrics["test"]["accuracy"])


def test_reweighing_reduces_disparity_on_adult() -> None:
    train, test = load_dataset("adult").split()
    method = get_method("reweighing")
    plain = method.run(train, test, strength=0.0).metrics["train"]["dp_diff"]
    full = method.run(train, test, strength=1.0).metrics["train"]["dp_diff"]
    assert full < plain - 0.05


def test_fairlearn_eg_wraps_fairlearn_exactly(german) -> None:
    train, test = german
    result = get_method("fairlearn_eg").run(train, test, eps=0.05, max_iter=20)
    encoder, Z = encode_train(train)
    reference = ExponentiatedGradient(
        logistic_regression(1.0),
        constraints=DemographicParity(difference_bound=0.05),
        eps=0.05,
        max_iter=20,
    ).fit(Z, train.y, sensitive_features=train.groups)
    expected = reference._pmf_predict(encoder.transform(test.X))[:, 1]
    np.testing.assert_allclose(result.model.predict_score(test.X), expected, atol=1e-12)
    assert result.metrics["train"]["dp_diff"] <= 0.05 + 0.05


def test_method_refuses_wrong_task_kind() -> None:
    train, test = load_dataset("communities_crime").split()
    with pytest.raises(DataError, match="classification"):
        get_method("reweighing").run(train, test)
