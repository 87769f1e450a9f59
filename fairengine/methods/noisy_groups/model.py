"""RobustFairModel: the exportable linear classifier fitted by :class:`RobustFairClassifier`."""

from __future__ import annotations

from typing import Any

import numpy as np

from fairengine.data.encoding import FeatureEncoder
from fairengine.models.base import Arrays, Model, State, register_model
from fairengine.models.linear import LinearClassifier


@register_model
class RobustFairModel(LinearClassifier):
    """θ·z(x) + b > 0 predicts 1 (the paper's convention, score exactly 0 predicts 0).

    ``predict_score`` is sigmoid(θ·z + b), a display score only (the training loss is the hinge).
    """

    model_type = "noisy_groups"

    def __init__(
        self, encoder: FeatureEncoder, coef: np.ndarray, intercept: float, meta=None
    ) -> None:
        super().__init__(encoder, coef, intercept)
        self.meta = dict(meta or {})

    def predict(self, X: Any, random_state: int | None = 0) -> np.ndarray:  # noqa: N803
        return (self.decision_function(X) > 0.0).astype(np.int64)

    def _state(self) -> State:
        return {"intercept": self.intercept, "knobs": self.meta}, {"coef": self.coef}

    @classmethod
    def _from_state(cls, encoder: FeatureEncoder, meta: dict[str, Any], arrays: Arrays) -> Model:
        return cls(encoder, arrays["coef"], float(meta["intercept"]), meta.get("knobs"))
