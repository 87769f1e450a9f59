"""Downstream fair learner with soft group weights (the DL program is [TEXT]): the
exponentiated-gradient reduction (:func:`fairengine.solvers.solve_game`) over the proxy-weighted
moments of :class:`ProxyParity`. Why its default best response is the paired regression: "Design
notes" in ``docs/methods/multiaccurate_proxy.md``.
"""

from __future__ import annotations

from numbers import Real
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.linear_model import LogisticRegression
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, has_fit_parameter, validate_data
from threadpoolctl import threadpool_limits

from fairengine.methods.multiaccurate_proxy.knobs import CONSTRAINTS, KNOBS
from fairengine.methods.params import (
    HasMethods,
    Interval,
    generator,
    knob_constraints,
    validate_params,
)
from fairengine.methods.sensitive import sensitive_request
from fairengine.metrics.proxy import group_gaps, normalised
from fairengine.solvers import solve_game
from fairengine.solvers.expgrad import ACCURACY_MUL
from fairengine.solvers.moments import Reduction, TwoSidedConstraint
from fairengine.solvers.oracles import PairedRegressionOracle, best_intercept


class ProxyParity(TwoSidedConstraint):
    """|γ_k(h) − γ(h)| ≤ ε for every soft group k (2K constraints, λ⁺ then λ⁻), group vs
    overall with soft group weights Ẑ (the proxy's probabilities):

    * ``"equal_error"``: γ_k(h) = Σ Ẑ_ik 1[h(x_i) ≠ y_i] / Σ Ẑ_ik, γ = mean error (Eq. (4));
    * ``"demographic_parity"``: γ_k(h) = Σ Ẑ_ik h(x_i) / Σ Ẑ_ik, γ = mean h.

    Predictions are P(h = 1) on the loaded rows. The signed weights are the λ-part of the cost
    difference c1 − c0 of labelling row i 1: Σ_k (λ⁺_k − λ⁻_k)(Ẑ_ik/Σ_j Ẑ_jk − 1/n), times
    (1 − 2y_i) for equal error. λ̂ is not netted (:meth:`project` is the identity).

    Parameters
    ----------
    eps : float
        ε.
    kind : {"equal_error", "demographic_parity"}
    """

    def __init__(self, eps: float, kind: str) -> None:
        if kind not in CONSTRAINTS:
            raise ValueError(f"constraint must be one of {CONSTRAINTS}; got {kind!r}")
        self.slack, self.kind = float(eps), kind

    def load(self, y: np.ndarray, soft_groups: np.ndarray) -> ProxyParity:
        """Binary labels (0/1) and soft group weights (n,) or (n, K) of the training rows."""
        self.y, self.soft = np.asarray(y, float), np.asarray(soft_groups, float)
        weights = normalised(self.soft)
        # Ẑ_ik/ΣẐ_k − 1/n: how much row i moves γ_k − γ (0 for an empty group)
        self.share = np.where(weights.sum(axis=0) > 0, weights - 1.0 / len(self.y), 0.0)
        self.n_groups = self.share.shape[1]
        self.eps = np.full(self.n_groups, self.slack)
        return self

    @property
    def dim(self) -> int:
        return 2 * self.n_groups

    def moment_names(self) -> list[str]:
        return [f"{self.kind}[k={k}]" for k in range(self.n_groups)]

    def gamma(self, predictions: np.ndarray) -> np.ndarray:
        return group_gaps(self.soft, self.y, predictions, self.kind)

    def signed_weights(self, lam: np.ndarray) -> np.ndarray:
        extra = self.share @ self.net(lam)
        return extra if self.kind == "demographic_parity" else extra * (1 - 2 * self.y)


def measurable_gap(error: float, n: int, bound: float, group_rows: float) -> float:
    """The smallest duality gap the fitting rows can tell from 0: ACCURACY_MUL × (the error's
    standard error √(e(1 − e)/n) plus B times a group rate's, 0.5/√(rows of the smallest soft
    group)); the reasoning is in the design notes."""
    error_se = np.sqrt(max(error * (1 - error), 1e-12) / max(n, 1))
    rate_se = 0.5 / np.sqrt(max(group_rows, 1.0))
    return float(ACCURACY_MUL * (error_se + bound * rate_se))


class ProxyFairClassifier(ClassifierMixin, BaseEstimator):
    """Fair classifier from soft group weights: ``fit(X, y, sensitive_features)``, ``predict``.

    A scikit-learn binary classifier: arguments stored verbatim and validated in :meth:`fit`
    (constraints from the method's ``constraint``, ``eps``, ``dl_learner`` and ``dl_iter``
    knobs), ``classes_`` (any two labels; the second is the positive class), ``predict_proba``
    of shape (n, 2), ``NotFittedError`` before fit. ``sensitive_features`` defaults to one group
    (every row weight 1), where the constraints are void.

    Parameters
    ----------
    eps : float
        ε, the bound on |γ_k − γ|.
    constraint : {"equal_error", "demographic_parity"}
    bound : float, optional
        B, the ℓ1 bound on the multipliers (default 1/ε, as fairlearn).
    max_iter : int
    random_state : int, RandomState, Generator or None
        Default seed of :meth:`predict`'s draws.
    learner : {"regression", "logistic"} or scikit-learn classifier
        The CSC heuristic of each best response: the paired regression on [x, 1] thresholded
        exactly (the ``"linear"`` auditor's halfspaces), a weighted logistic regression, or any
        classifier whose ``fit`` takes ``sample_weight`` (cloned, fitted on label 1[c1 < c0]
        with weight |c1 − c0|, as ``"logistic"``). Linear classifiers (``coef_`` of one row)
        are kept as halfspaces, others in ``estimators_`` (the exportable model stores
        halfspaces: the method uses the string learners).

    Attributes
    ----------
    coefs_, intercepts_, weights_ : the mixture Q of halfspaces.
    estimators_ : list
        Per component, the fitted non-linear classifier, or None for a halfspace.
    classes_ : ndarray (2,)
    n_features_in_ : int
    feature_names_in_ : ndarray of str
    """

    def __init__(
        self,
        eps: float = 0.05,
        constraint: str = "equal_error",
        bound: float | None = None,
        max_iter: int = 30,
        random_state: int = 0,
        learner: str = "regression",
    ) -> None:
        self.eps, self.constraint, self.bound = eps, constraint, bound
        self.max_iter, self.random_state, self.learner = max_iter, random_state, learner

    _parameter_constraints: dict = knob_constraints(
        [k for k in KNOBS if k.name in ("constraint", "eps", "dl_learner", "dl_iter")],
        rename={"dl_learner": "learner", "dl_iter": "max_iter"},
        domains={"eps": (0.0, None, "neither"), "max_iter": (1, None, "left")},
        extra={
            "learner": [HasMethods(["fit", "predict"])],
            "bound": [Interval(Real, 0, None, closed="neither"), None],
            "random_state": ["random_state"],
        },
    )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.non_deterministic = True  # predict draws h ~ Q per row (seeded, position-dependent)
        return tags

    def _fit_one(self, X: np.ndarray, diff: np.ndarray) -> tuple[Any, Any]:
        """One CSC best response: (coef, intercept) of a halfspace, or (fitted classifier, None)
        for a non-linear scikit-learn ``learner``."""
        if self.learner == "regression":
            half = self._oracle.best_response(diff)
            score = X @ half.coef
            return half.coef.copy(), best_intercept(score, np.ones(len(score)), diff)
        label = (diff < 0).astype(int)
        if label.min() == label.max():
            return np.zeros(X.shape[1]), (10.0 if label[0] == 1 else -10.0)
        if isinstance(self.learner, str):  # "logistic"
            model: Any = LogisticRegression(max_iter=300)
        else:
            model = clone(self.learner)
        model.fit(X, label, sample_weight=np.abs(diff) * len(X))
        coef, intercept = getattr(model, "coef_", None), getattr(model, "intercept_", None)
        if coef is not None and intercept is not None and np.shape(coef) == (1, X.shape[1]):
            return np.asarray(coef[0], float).copy(), float(np.ravel(intercept)[0])
        return model, None

    @staticmethod
    def _hard(X: np.ndarray, payload: tuple[Any, Any]) -> np.ndarray:
        """0/1 predictions of one component (a halfspace or a fitted classifier of 0/1)."""
        first, intercept = payload
        if intercept is None:
            return (np.asarray(first.predict(X)) == 1).astype(float)
        return (X @ first + intercept > 0).astype(float)

    __metadata_request__fit = sensitive_request()

    def fit(self, X: Any, y: Any, sensitive_features: Any = None) -> ProxyFairClassifier:
        """Fit Q on rows X, binary labels y and soft group weights ``sensitive_features`` (n,)
        or (n, K) (None: one group)."""
        validate_params(self)
        if not isinstance(self.learner, str) and not has_fit_parameter(
            self.learner, "sample_weight"
        ):
            raise ValueError(
                f"learner {type(self.learner).__name__} does not accept sample_weight in fit; "
                "each best response is a weighted classification"
            )
        X, y = validate_data(self, X, y)
        check_classification_targets(y)
        y_type = type_of_target(y, input_name="y", raise_unknown=True)
        if y_type != "binary":
            raise ValueError(
                "Only binary classification is supported. The type of the target is "
                f"{y_type}." + (" y has only one class." if y_type == "unary" else "")
            )
        self.classes_, codes = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError("y has only one class; ProxyFairClassifier needs two classes.")
        soft = np.ones((len(y), 1)) if sensitive_features is None else sensitive_features
        soft = np.asarray(soft, float)
        if len(soft) != len(y):
            raise ValueError(f"sensitive_features has {len(soft)} rows, X and y have {len(y)}")
        # one BLAS thread: many small products (design notes)
        with threadpool_limits(limits=1, user_api="blas"):
            return self._fit(X, codes.astype(float), soft)

    def _fit(self, X: np.ndarray, y: np.ndarray, soft_groups: np.ndarray) -> ProxyFairClassifier:
        X, y = np.asarray(X, float), np.asarray(y, float)
        n = len(y)
        constraint = ProxyParity(self.eps, self.constraint).load(y, soft_groups)
        if self.learner == "regression":
            self._oracle = PairedRegressionOracle().fit(X, np.ones(n))
        own_cost = (1 - 2 * y) / n  # the error's cost difference c1 − c0 of labelling a row 1
        reduction = Reduction(
            constraint,
            learner=lambda signed: self._fit_one(X, own_cost + signed),
            predict=lambda payload: self._hard(X, payload),
            objective=lambda h: float(np.mean(h != y)),
        )
        result = solve_game(
            reduction,
            constraint,
            bound=self.bound or 1.0 / self.eps,
            nu=1e-3,
            max_iter=self.max_iter,
        )
        keep = result.weights > 0
        self.weights_ = result.weights[keep] / result.weights[keep].sum()
        chosen = [r for r, k in zip(result.responses, keep, strict=True) if k]
        self.estimators_ = [r.payload[0] if r.payload[1] is None else None for r in chosen]
        d = X.shape[1]
        self.coefs_ = np.array(
            [np.zeros(d) if r.payload[1] is None else r.payload[0] for r in chosen]
        ).reshape(len(chosen), d)
        self.intercepts_ = np.array(
            [0.0 if r.payload[1] is None else r.payload[1] for r in chosen], dtype=float
        )
        self.game_ = result
        self.n_iter_ = int(result.n_iter)
        first = result.responses[0].objective if result.responses else 0.5
        #: whether the game's gap is within what the rows can measure (:func:`measurable_gap`)
        self.converged_ = bool(
            result.converged
            or result.gap
            <= measurable_gap(first, n, result.bound, float(soft_groups.sum(axis=0).min()))
        )
        self._oracle = None
        return self

    def predict_score(self, X: Any) -> np.ndarray:
        """P(h(x) = classes_[1]) under the mixture Q, shape (n,)."""
        check_is_fitted(self, "weights_")
        X = np.asarray(validate_data(self, X, reset=False), float)
        hard = (X @ self.coefs_.T + self.intercepts_ > 0).astype(float)
        for t, estimator in enumerate(getattr(self, "estimators_", ())):
            if estimator is not None:
                hard[:, t] = self._hard(X, (estimator, None))
        return hard @ self.weights_

    def predict_proba(self, X: Any) -> np.ndarray:
        """(P(h = classes_[0]), P(h = classes_[1])) under Q, shape (n, 2)."""
        p = self.predict_score(X)
        return np.column_stack([1.0 - p, p])

    def predict(self, X: Any, random_state: Any = None) -> np.ndarray:
        """One draw h ~ Q per row (seeded by ``random_state``, default the estimator's)."""
        p = self.predict_score(X)
        rng = generator(self.random_state if random_state is None else random_state)
        return self.classes_[(rng.random(len(p)) < p).astype(np.int64)]
