"""The estimators' own parameter validation: scikit-learn's conventions and messages, without
importing scikit-learn's private ``_param_validation``."""

from __future__ import annotations

import ast
from numbers import Integral, Real
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import BaseEstimator
from sklearn.linear_model import LogisticRegression

import fairengine
from fairengine.methods.balanced_filtering import BalancedFilter
from fairengine.methods.params import (
    HasMethods,
    Interval,
    InvalidParameterError,
    Options,
    StrOptions,
    validate_params,
)


class Toy(BaseEstimator):
    _parameter_constraints = {
        "alpha": [Interval(Real, 0, 1, closed="both")],
        "depth": [Interval(Integral, 1, None, closed="left"), None],
        "mode": [StrOptions({"b", "a"})],
        "level": [Options(int, {1, 2})],
        "learner": [HasMethods(["fit", "predict"])],
        "flag": ["boolean"],
        "weights": ["array-like", None],
        "random_state": ["random_state"],
        "anything": "no_validation",
    }

    def __init__(
        self,
        alpha=0.5,
        depth=None,
        mode="a",
        level=1,
        learner=None,
        flag=False,
        weights=None,
        random_state=None,
        anything=None,
    ):
        self.alpha, self.depth, self.mode, self.level = alpha, depth, mode, level
        self.learner = LogisticRegression() if learner is None else learner
        self.flag, self.weights, self.random_state, self.anything = (
            flag,
            weights,
            random_state,
            anything,
        )


@pytest.mark.parametrize(
    "good",
    [
        {},
        {"alpha": 0, "depth": 3},
        {"alpha": np.float64(1.0), "depth": np.int64(1)},
        {"flag": np.bool_(True), "weights": [1.0, 2.0], "random_state": np.random.RandomState(0)},
        {"random_state": 2**32 - 1, "level": 2, "anything": object()},
    ],
)
def test_valid_values_pass(good) -> None:
    validate_params(Toy(**good))


INVALID = [
    ({"alpha": 1.5}, "The 'alpha' parameter of Toy must be a float in the range [0.0, 1.0]."),
    ({"alpha": float("nan")}, "must be a float in the range [0.0, 1.0]. Got nan instead."),
    ({"alpha": "0.5"}, "Got '0.5' instead."),
    ({"depth": 0}, "must be an int in the range [1, inf) or None. Got 0 instead."),
    ({"depth": 2.0}, "must be an int in the range [1, inf) or None. Got 2.0 instead."),
    ({"mode": "c"}, "must be a str among {'a', 'b'}. Got 'c' instead."),
    ({"level": 3}, "must be a int among {1, 2}"),
    ({"learner": "svm"}, "must be an object implementing 'fit' and 'predict'."),
    ({"flag": 1}, "must be a bool. Got 1 instead."),
    ({"weights": "abc"}, "must be an array-like or None."),
    ({"random_state": -1}, "must be an int in the range [0, 4294967295], an instance of"),
    ({"random_state": np.random.default_rng(0)}, "'numpy.random.RandomState' or None."),
]


@pytest.mark.parametrize(
    ("bad", "message"),
    INVALID,
    ids=[f"{next(iter(bad))}-{i}" for i, (bad, _) in enumerate(INVALID)],
)
def test_invalid_values_name_parameter_rule_and_value(bad, message) -> None:
    with pytest.raises(InvalidParameterError) as caught:
        validate_params(Toy(**bad))
    assert message in str(caught.value)
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, TypeError)


def test_interval_rejects_wrong_declarations() -> None:
    with pytest.raises(ValueError, match="wrong order"):
        Interval(Real, 1, 0, closed="both")
    with pytest.raises(ValueError, match="closed"):
        Interval(Real, 0, 1, closed="open")


def test_estimator_fit_uses_the_knob_constraints() -> None:
    X = np.random.default_rng(0).normal(size=(40, 2))
    with pytest.raises(InvalidParameterError, match=r"'alpha' parameter of BalancedFilter"):
        BalancedFilter(alpha=1.5).fit(X, (X[:, 0] > 0).astype(int))


def test_no_module_imports_scikit_learn_parameter_internals() -> None:
    """A floor of scikit-learn promises its public API only."""
    package = Path(fairengine.__file__).parent
    offenders = []
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and "_param_validation" in (node.module or ""):
                offenders.append(str(path.relative_to(package)))
    assert offenders == []
