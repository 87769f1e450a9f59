"""The comparison proxies of the ``multiaccurate_proxy`` method [OURS]: logistic regression,
its thresholded labels, and the constant group share."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.utils.validation import check_is_fitted, validate_data

from fairengine.methods.multiaccurate_proxy.auditor import as_2d
from fairengine.methods.params import StrOptions, seed, validate_params
from fairengine.methods.sensitive import sensitive_request

#: The comparison proxies :class:`BaselineProxy` fits (``"true"`` is the caller's: it needs z).
BASELINES = ("regression", "thresholded", "constant")


class BaselineProxy(BaseEstimator):
    """Comparison proxies [OURS]: ``"regression"`` (logistic-regression probabilities ≈ E[z_k | x],
    one model per group), ``"thresholded"`` (1[P̂(z_k = 1 | x) > 0.5]) or ``"constant"``
    (ẑ_k ≡ mean(z_k)); the ``"true"`` proxy needs z and is the caller's. The interface of
    :class:`MultiaccurateProxy`; ``kind`` is validated in :meth:`fit`, ``random_state`` is handed to
    the logistic regressions.

    Attributes
    ----------
    mean_ : ndarray (K,)
        mean(z_k) on the fit rows.
    models_ : list
        Per group, the fitted ``LogisticRegression`` or, when z_k is constant on the fit rows,
        that constant (a float).
    """

    _parameter_constraints: dict = {
        "kind": [StrOptions(set(BASELINES))],
        "random_state": ["random_state"],
    }

    def __init__(
        self, kind: str = "regression", random_state: int | np.random.RandomState | None = 0
    ) -> None:
        self.kind, self.random_state = kind, random_state

    __metadata_request__fit = sensitive_request()

    def fit(self, X: np.ndarray, sensitive_features: np.ndarray | None = None) -> BaselineProxy:
        """Fit one model per group column of the protected attribute ``sensitive_features``
        (n,) or (n, K) (its y: a missing one gets the y check)."""
        validate_params(self)
        X, z = validate_data(self, X, sensitive_features, multi_output=True, y_numeric=True)
        z = as_2d(z)
        self.mean_ = z.mean(axis=0)
        self.models_ = []
        if self.kind in ("regression", "thresholded"):
            state = seed(self.random_state)
            for k in range(z.shape[1]):
                if z[:, k].min() == z[:, k].max():
                    self.models_.append(float(z[0, k]))
                else:
                    model = LogisticRegression(max_iter=500, C=1.0, random_state=state)
                    self.models_.append(model.fit(X, z[:, k].astype(int)))
        return self

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """ẑ(x) (n, K)."""
        check_is_fitted(self, "mean_")
        X = validate_data(self, X, reset=False)
        n = len(X)
        if self.kind == "constant":
            return np.tile(self.mean_, (n, 1))
        cols = [
            np.full(n, m) if isinstance(m, float) else m.predict_proba(X)[:, 1]
            for m in self.models_
        ]
        p = np.column_stack(cols)
        return (p > 0.5).astype(float) if self.kind == "thresholded" else p

    def predict(self, X: np.ndarray) -> np.ndarray:
        """ẑ(x), as :meth:`predict_proba`."""
        return self.predict_proba(X)
