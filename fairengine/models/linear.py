"""Linear classifiers and randomized mixtures of them (the output of reductions approaches)."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import expit

from fairengine.data.encoding import FeatureEncoder
from fairengine.models import schemas
from fairengine.models.base import Arrays, Model, State, register_model


@register_model
class LinearClassifier(Model):
    """A logistic-regression classifier: P(y = 1 | x) = sigmoid(coef · z(x) + intercept).

    Parameters
    ----------
    encoder : FeatureEncoder
    coef : ndarray of shape (n_encoded_features,)
    intercept : float
    """

    model_type = "linear_classifier"
    state_schema = schemas.LINEAR_CLASSIFIER
    kind = "classification"

    def __init__(self, encoder: FeatureEncoder, coef: np.ndarray, intercept: float) -> None:
        super().__init__(encoder)
        self.coef = np.asarray(coef, dtype=float).ravel()
        self.intercept = float(intercept)

    @classmethod
    def from_sklearn(cls, encoder: FeatureEncoder, estimator: Any) -> LinearClassifier:
        """Wrap a fitted binary scikit-learn linear classifier (classes 0 and 1)."""
        classes = list(getattr(estimator, "classes_", [0, 1]))
        coef = np.asarray(estimator.coef_, dtype=float).ravel()
        intercept = float(np.ravel(estimator.intercept_)[0])
        if classes == [1]:  # degenerate fit on one class: constant 1
            return cls(encoder, np.zeros_like(coef), 50.0)
        if classes == [0]:
            return cls(encoder, np.zeros_like(coef), -50.0)
        return cls(encoder, coef, intercept)

    def decision_function(self, X: Any) -> np.ndarray:
        return self.encode(X) @ self.coef + self.intercept

    def _score(self, Z: np.ndarray) -> np.ndarray:
        return expit(Z @ self.coef + self.intercept)

    def _state(self) -> State:
        return {"intercept": self.intercept}, {"coef": self.coef}

    @classmethod
    def _from_state(cls, encoder: FeatureEncoder, meta: dict[str, Any], arrays: Arrays) -> Model:
        return cls(encoder, arrays["coef"], float(meta["intercept"]))


@register_model
class RandomizedClassifier(Model):
    """A randomized classifier Q: draw h_j with probability w_j, predict h_j(x) (hard 0/1).

    ``predict_score`` is the exact P(Q(x) = 1) = sum_j w_j h_j(x); ``predict`` draws one
    classifier per row with a seeded generator, so equal seeds give equal predictions.

    Parameters
    ----------
    encoder : FeatureEncoder
    coefs : ndarray of shape (n_components, n_encoded_features)
    intercepts : ndarray of shape (n_components,)
    weights : ndarray of shape (n_components,)
        Non-negative, summing to 1.
    """

    model_type = "randomized_classifier"
    state_schema = schemas.RANDOMIZED_CLASSIFIER
    randomized = True  # predict draws (seeded by random_state)
    kind = "classification"

    def __init__(
        self,
        encoder: FeatureEncoder,
        coefs: np.ndarray,
        intercepts: np.ndarray,
        weights: np.ndarray,
    ) -> None:
        super().__init__(encoder)
        self.coefs = np.atleast_2d(np.asarray(coefs, dtype=float))
        self.intercepts = np.asarray(intercepts, dtype=float).ravel()
        weights = np.clip(np.asarray(weights, dtype=float).ravel(), 0.0, None)
        if len(weights) != len(self.intercepts) or weights.sum() <= 0:
            raise ValueError("A randomized classifier needs one positive weight per component.")
        self.weights = weights / weights.sum()

    def _component_predictions(self, Z: np.ndarray) -> np.ndarray:
        return (Z @ self.coefs.T + self.intercepts > 0.0).astype(float)

    def _score(self, Z: np.ndarray) -> np.ndarray:
        # weights sum to 1 only up to rounding; keep probabilities in [0, 1]
        return np.clip(self._component_predictions(Z) @ self.weights, 0.0, 1.0)

    def metric_predictions(self, X: Any) -> np.ndarray:
        return self.predict_score(X)

    def metric_predictions_encoded(self, Z: np.ndarray) -> np.ndarray:
        return self._score(Z)

    def predict(self, X: Any, random_state: int | None = 0) -> np.ndarray:
        hard = self._component_predictions(self.encode(X))
        rng = np.random.default_rng(random_state)
        pick = rng.choice(len(self.weights), size=len(hard), p=self.weights)
        return hard[np.arange(len(hard)), pick].astype(np.int64)

    def _state(self) -> State:
        return {}, {"coefs": self.coefs, "intercepts": self.intercepts, "weights": self.weights}

    @classmethod
    def _from_state(cls, encoder: FeatureEncoder, meta: dict[str, Any], arrays: Arrays) -> Model:
        return cls(encoder, arrays["coefs"], arrays["intercepts"], arrays["weights"])
