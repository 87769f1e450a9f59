"""Base learners of the oracles and their exportable form (linear coefficients or tree arrays).

A fitted learner becomes a :class:`Component`: a raw score s(z) (linear, or a sum of regression
trees) and a link to [0, 1]: ``"identity"`` (f = clip(s, 0, 1)) for regressors, ``"logit"``
(f = clip(½ + s/(2C), 0, 1), the inverse of Example 2's p = σ(C(2f − 1)); spec §3.3c) for
probabilistic classifiers whose s is the log-odds.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import cho_solve
from sklearn.ensemble import GradientBoostingClassifier, GradientBoostingRegressor
from sklearn.linear_model import LogisticRegression

from fairengine.methods.fair_regression.losses import LOGISTIC_C

BASE_ESTIMATORS = ("linear", "gradient_boosting")
_RIDGE = 1e-8
#: Gradient-boosting settings (the authors used XGBoost with depth 4 and 200 trees; smaller here).
GB_PARAMS = {"n_estimators": 50, "max_depth": 3, "learning_rate": 0.1, "random_state": 0}


@dataclass
class Component:
    """One regressor f_t of the randomized predictor Q.

    Attributes
    ----------
    kind : {"linear", "trees"}
    link : {"identity", "logit"}
    arrays : dict of ndarray
        ``coef`` and ``intercept`` (linear) or the concatenated tree arrays (trees).
    """

    kind: str
    link: str
    arrays: dict[str, np.ndarray] = field(default_factory=dict)

    def raw(self, Z: np.ndarray) -> np.ndarray:  # noqa: N803
        a = self.arrays
        if self.kind == "linear":
            return Z @ a["coef"] + float(a["intercept"][0])
        return _trees_predict(a, Z)

    def predict(self, Z: np.ndarray) -> np.ndarray:  # noqa: N803
        """f(z) in [0, 1]."""
        s = self.raw(np.asarray(Z, float))
        if self.link == "logit":
            s = 0.5 + s / (2.0 * LOGISTIC_C)
        return np.clip(s, 0.0, 1.0)


def constant(value: float, n_features: int) -> Component:
    return Component(
        "linear", "identity", {"coef": np.zeros(n_features), "intercept": np.array([float(value)])}
    )


class LinearLeastSquares:
    """Weighted least squares with an intercept; the Gram matrix is factorised once per weight
    vector, so each LS-oracle call on new targets is one solve (spec §4.4 Table 1 target)."""

    def __init__(self, Z: np.ndarray) -> None:  # noqa: N803
        self.design = np.hstack([np.asarray(Z, float), np.ones((len(Z), 1))])
        self._factor: tuple[bytes, np.ndarray, np.ndarray] | None = None

    def fit(self, target: np.ndarray, weight: np.ndarray | None = None) -> Component:
        w = np.ones(len(self.design)) if weight is None else np.asarray(weight, float)
        key = w.tobytes()
        if self._factor is None or self._factor[0] != key:
            weighted = self.design * w[:, None]
            gram = self.design.T @ weighted
            gram[np.diag_indices_from(gram)] += _RIDGE * max(np.trace(gram) / len(gram), 1e-12)
            self._factor = (key, np.linalg.cholesky(gram), weighted)
        _, chol, weighted = self._factor
        rhs = weighted.T @ np.asarray(target, float)
        beta = cho_solve((chol, True), rhs)
        return Component("linear", "identity", {"coef": beta[:-1], "intercept": beta[-1:]})


def fit_regressor(
    Z: np.ndarray,
    target: np.ndarray,
    weight: np.ndarray | None,
    base: str,  # noqa: N803
    loss: str = "squared_error",
) -> Component:
    """Weighted regression of ``target`` on Z (the LS oracle; BGL oracle for square/absolute)."""
    if base == "linear":
        if loss == "absolute_error":
            return _linear_lad(Z, target, weight)
        return LinearLeastSquares(Z).fit(target, weight)
    model = GradientBoostingRegressor(loss=loss, **GB_PARAMS)
    model.fit(Z, target, sample_weight=weight)
    return _trees_component(model, Z, "identity", model.predict)


def fit_classifier(
    Z: np.ndarray,
    labels: np.ndarray,
    weight: np.ndarray,
    base: str,  # noqa: N803
) -> Component:
    """Weighted probabilistic classifier mapped back through the logit link (LR oracle)."""
    keep = weight > 0
    Z, labels, weight = Z[keep], labels[keep], weight[keep]  # noqa: N806
    if len(np.unique(labels)) < 2:  # one class: the constant score at the end of [0, 1]
        return constant(float(labels[0]) if len(labels) else 0.5, Z.shape[1])
    if base == "linear":
        model = LogisticRegression(C=1e4, max_iter=1000)
        model.fit(Z, labels, sample_weight=weight)
        return Component(
            "linear",
            "logit",
            {
                "coef": model.coef_.ravel().astype(float),
                "intercept": model.intercept_.astype(float),
            },
        )
    model = GradientBoostingClassifier(**GB_PARAMS)
    model.fit(Z, labels, sample_weight=weight)
    return _trees_component(model, Z, "logit", model.decision_function)


def _linear_lad(Z: np.ndarray, target: np.ndarray, weight: np.ndarray | None) -> Component:  # noqa: N803
    """Weighted least absolute deviations as an LP (HiGHS) — the absolute-loss BGL oracle."""
    from sklearn.linear_model import QuantileRegressor

    model = QuantileRegressor(quantile=0.5, alpha=0.0, solver="highs")
    model.fit(Z, target, sample_weight=weight)
    return Component(
        "linear",
        "identity",
        {"coef": model.coef_.astype(float), "intercept": np.array([float(model.intercept_)])},
    )


def _trees_component(model, Z: np.ndarray, link: str, raw) -> Component:  # noqa: N803
    """Flatten a fitted scikit-learn gradient-boosting model into arrays (no pickle)."""
    trees = [estimator[0].tree_ for estimator in model.estimators_]
    sizes = np.array([t.node_count for t in trees])
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    left = np.concatenate(
        [
            np.where(t.children_left >= 0, t.children_left + o, -1)
            for t, o in zip(trees, offsets, strict=True)
        ]
    )
    right = np.concatenate(
        [
            np.where(t.children_right >= 0, t.children_right + o, -1)
            for t, o in zip(trees, offsets, strict=True)
        ]
    )
    arrays = {
        "roots": offsets.astype(np.int64),
        "left": left.astype(np.int64),
        "right": right.astype(np.int64),
        "feature": np.concatenate([t.feature for t in trees]).astype(np.int64),
        "threshold": np.concatenate([t.threshold for t in trees]).astype(float),
        "value": np.concatenate([t.value[:, 0, 0] for t in trees]).astype(float),
        "learning_rate": np.array([float(model.learning_rate)]),
        "offset": np.zeros(1),
    }
    probe = Z[:1]
    arrays["offset"] = np.array([float(raw(probe)[0] - _trees_predict(arrays, probe)[0])])
    return Component("trees", link, arrays)


def _trees_predict(a: dict[str, np.ndarray], Z: np.ndarray) -> np.ndarray:  # noqa: N803
    total = np.zeros(len(Z))
    rows = np.arange(len(Z))
    for root in a["roots"]:
        node = np.full(len(Z), root)
        while True:
            inner = a["left"][node] >= 0
            if not inner.any():
                break
            f = a["feature"][node[inner]]
            go_left = Z[rows[inner], f] <= a["threshold"][node[inner]]
            node[inner] = np.where(go_left, a["left"][node[inner]], a["right"][node[inner]])
        total += a["value"][node]
    return float(a["offset"][0]) + float(a["learning_rate"][0]) * total
