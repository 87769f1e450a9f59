"""Each method's promise and guarantee sentence, declared next to it (``Method.promise``,
``Method.guarantee``) and read through the registry by the fidelity matrix and the pages."""

from __future__ import annotations

import pytest

from fairengine.frontier.fidelity import promise_held
from fairengine.methods import get_method, list_methods
from fairengine.methods.base import RunResult


def _result(method: str, knobs: dict, test: dict, train: dict | None = None) -> RunResult:
    metrics = {"test": test, "train": train or {}}
    return RunResult(method=method, knobs=knobs, metrics=metrics, model=None)


def test_each_paper_method_declares_a_promise() -> None:
    for name in ("balanced_filtering", "maxent", "fair_regression", "noisy_groups"):
        assert get_method(name).promise is not None, name
    assert get_method("multiaccurate_proxy").promise is not None


def test_a_method_without_a_promise_holds_it_whatever_its_numbers() -> None:
    bare = [m for m in list_methods() if get_method(m).promise is None]
    assert bare  # the reference methods make none
    assert promise_held(_result(bare[0], {}, {"error": 1.0}))


@pytest.mark.parametrize(("violation", "held"), [(-0.01, True), (0.0, True), (0.01, False)])
def test_noisy_groups_promise_is_the_true_group_violation(violation: float, held: bool) -> None:
    result = _result("noisy_groups", {}, {"true_violation": violation})
    assert promise_held(result) is held


@pytest.mark.parametrize(
    ("constraint", "metric"),
    [("statistical_parity", "sp_ks"), ("bounded_group_loss", "scaled_max_group_loss")],
)
def test_fair_regression_promise_reads_its_constraints_disparity(
    constraint: str, metric: str
) -> None:
    knobs = {"constraint": constraint, "eps": 0.05}
    assert promise_held(_result("fair_regression", knobs, {metric: 0.05}))
    assert not promise_held(_result("fair_regression", knobs, {metric: 0.051}))


def test_balanced_filtering_promise_needs_beta_and_a_small_train_test_gap() -> None:
    knobs = {"beta_stop": 0.1}
    assert promise_held(
        _result("balanced_filtering", knobs, {"imbalance": 0.08}, {"imbalance": 0.08})
    )
    assert not promise_held(
        _result("balanced_filtering", knobs, {"imbalance": 0.12}, {"imbalance": 0.12})
    )


def test_noisy_groups_guarantee_sentence_says_whether_the_worst_case_is_covered() -> None:
    guarantee = get_method("noisy_groups").guarantee
    assert guarantee is not None
    knobs = {"method": "dro", "robust_eval": "exact"}
    covered = guarantee(_result("noisy_groups", knobs, {"robust_violation": -0.01}))
    exceeded = guarantee(_result("noisy_groups", knobs, {"robust_violation": 0.02}))
    assert "guaranteed against every noise pattern in the TV ball" in covered
    assert "no guarantee against every noise pattern" in exceeded
    soft = guarantee(_result("noisy_groups", {**knobs, "method": "soft"}, {"robust_violation": 0}))
    assert "every assignment of true groups consistent with the noise model" in soft
