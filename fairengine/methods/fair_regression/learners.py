"""Base learners of the oracles and their exportable form (linear coefficients or tree arrays).

Design notes: ``docs/methods/fair_regression.md``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.base import clone
from sklearn.ensemble import GradientBoostingClassifier, GradientBoostingRegressor
from sklearn.linear_model import LogisticRegression

from fairengine.methods.fair_regression.losses import LOGISTIC_C
from fairengine.models import trees
from fairengine.solvers.least_squares import InterceptLeastSquares

_RIDGE = 1e-8
#: Gradient-boosting settings (the authors used XGBoost with depth 4 and 200 trees; smaller here);
#: ``random_state`` comes from the estimator's.
GB_PARAMS = {"n_estimators": 50, "max_depth": 3, "learning_rate": 0.1}


@dataclass
class Component:
    """One regressor f_t of the randomized predictor Q.

    Attributes
    ----------
    kind : {"linear", "trees", "estimator"}
    link : {"identity", "logit"}
    arrays : dict of ndarray
        ``coef`` and ``intercept`` (linear) or the concatenated tree arrays (trees).
    estimator : object, optional
        The fitted scikit-learn regressor of an ``"estimator"`` component.
    """

    kind: str
    link: str
    arrays: dict[str, np.ndarray] = field(default_factory=dict)
    estimator: Any = None

    def raw(self, Z: np.ndarray) -> np.ndarray:
        a = self.arrays
        if self.kind == "linear":
            return Z @ a["coef"] + float(a["intercept"][0])
        if self.kind == "estimator":
            return np.asarray(self.estimator.predict(Z), float).ravel()
        return _trees_predict(a, Z)

    def predict(self, Z: np.ndarray) -> np.ndarray:
        """f(z) in [0, 1]."""
        s = self.raw(np.asarray(Z, float))
        if self.link == "logit":
            s = 0.5 + s / (2.0 * LOGISTIC_C)
        return np.clip(s, 0.0, 1.0)


def linear(coef: Any, intercept: Any, link: str = "identity") -> Component:
    """The linear component z · coef + intercept (through ``link``), as float arrays."""
    arrays = {"coef": np.asarray(coef, float), "intercept": np.asarray(intercept, float).ravel()}
    return Component("linear", link, arrays)


def constant(value: float, n_features: int) -> Component:
    """The linear component predicting ``value`` everywhere."""
    return linear(np.zeros(n_features), [float(value)])


class LinearLeastSquares:
    """Weighted least squares with an intercept on the solvers'
    :class:`~fairengine.solvers.least_squares.InterceptLeastSquares`: the Gram matrix is
    factorised once per weight vector, so each LS-oracle call on new targets is one solve."""

    def __init__(self, Z: np.ndarray) -> None:
        self._ls = InterceptLeastSquares(Z, ridge=_RIDGE)

    def fit(self, target: np.ndarray, weight: np.ndarray | None = None) -> Component:
        beta = self._ls.coef(target, weight)
        return linear(beta[:-1], beta[-1:])


def fit_regressor(
    Z: np.ndarray,
    target: np.ndarray,
    weight: np.ndarray | None,
    base: Any,
    loss: str = "squared_error",
    random_state: int = 0,
) -> Component:
    """Weighted regression of ``target`` on Z (the LS oracle; BGL oracle for square/absolute)."""
    if isinstance(base, str) and base == "linear":
        if loss == "absolute_error":
            return _linear_lad(Z, target, weight)
        return LinearLeastSquares(Z).fit(target, weight)
    if isinstance(base, str):
        model = GradientBoostingRegressor(loss=loss, random_state=random_state, **GB_PARAMS)
    else:
        model = clone(base)
    if weight is None:
        model.fit(Z, target)
    else:
        model.fit(Z, target, sample_weight=weight)
    return as_component(model, Z)


def as_component(model: Any, Z: np.ndarray) -> Component:
    """A fitted scikit-learn regressor as a Component: arrays for the known types (linear models,
    gradient boosting), the estimator itself otherwise."""
    if isinstance(model, GradientBoostingRegressor):
        return _trees_component(model, Z, "identity", model.predict)
    coef, intercept = getattr(model, "coef_", None), getattr(model, "intercept_", None)
    if (
        coef is not None
        and intercept is not None
        and np.ndim(coef) == 1
        and np.size(intercept) == 1
        and type(model).__module__.startswith("sklearn.linear_model")
    ):
        return linear(np.array(coef, float), [float(np.ravel(intercept)[0])])
    return Component("estimator", "identity", {}, model)


def fit_classifier(
    Z: np.ndarray,
    labels: np.ndarray,
    weight: np.ndarray,
    base: str,
    random_state: int = 0,
) -> Component:
    """Weighted probabilistic classifier mapped back through the logit link (LR oracle)."""
    keep = weight > 0
    Z, labels, weight = Z[keep], labels[keep], weight[keep]
    if len(np.unique(labels)) < 2:  # one class: the constant score at the end of [0, 1]
        return constant(float(labels[0]) if len(labels) else 0.5, Z.shape[1])
    if base == "linear":
        model = LogisticRegression(C=1e4, max_iter=1000)
        model.fit(Z, labels, sample_weight=weight)
        return linear(model.coef_.ravel(), model.intercept_, "logit")
    model = GradientBoostingClassifier(random_state=random_state, **GB_PARAMS)
    model.fit(Z, labels, sample_weight=weight)
    return _trees_component(model, Z, "logit", model.decision_function)


def _linear_lad(Z: np.ndarray, target: np.ndarray, weight: np.ndarray | None) -> Component:
    """Weighted least absolute deviations as an LP (HiGHS) — the absolute-loss BGL oracle."""
    from sklearn.linear_model import QuantileRegressor

    model = QuantileRegressor(quantile=0.5, alpha=0.0, solver="highs")
    model.fit(Z, target, sample_weight=weight)
    return linear(model.coef_, [float(model.intercept_)])


def _trees_component(model, Z: np.ndarray, link: str, raw) -> Component:
    """A fitted scikit-learn gradient-boosting model as arrays (the shared tree codec, no pickle);
    ``offset`` is its initial raw prediction, recovered on one row."""
    arrays = trees.forest_arrays([estimator[0] for estimator in model.estimators_])
    arrays["value"] = arrays["value"][:, 0]
    arrays["learning_rate"] = np.array([float(model.learning_rate)])
    arrays["offset"] = np.zeros(1)
    probe = Z[:1]
    arrays["offset"] = np.array([float(raw(probe)[0] - _trees_predict(arrays, probe)[0])])
    return Component("trees", link, arrays)


def _trees_predict(a: dict[str, np.ndarray], Z: np.ndarray) -> np.ndarray:
    """offset + learning_rate · Σ_trees leaf value, walking the trees as scikit-learn does."""
    total = trees.leaf_values(a, Z)[:, :, 0].sum(axis=1)
    return float(a["offset"][0]) + float(a["learning_rate"][0]) * total
