"""RobustFairModel: the exportable linear classifier fitted by :class:`RobustFairClassifier`."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from fairengine.data.encoding import FeatureEncoder
from fairengine.methods.noisy_groups.schema import SCHEMA
from fairengine.models.base import Arrays, Model, State, register_model
from fairengine.models.linear import LinearClassifier


@register_model
class RobustFairModel(LinearClassifier):
    """θ·z(x) + b > 0 predicts 1 (the paper's convention, score exactly 0 predicts 0).

    ``predict_score`` is sigmoid(θ·z + b), a display score only (the training loss is the hinge).
    ``group_column``: when the noisy group was a feature, the name of its column (group names).
    A table without that column is scored as an unknown group: its one-hot block is all zeros
    apart from the "other" category, whose weight is 0 (no row of it was seen in training).
    """

    model_type = "noisy_groups"
    state_schema = SCHEMA

    def __init__(
        self,
        encoder: FeatureEncoder,
        coef: np.ndarray,
        intercept: float,
        meta=None,
        group_column: str | None = None,
    ) -> None:
        super().__init__(encoder, coef, intercept)
        self.meta = dict(meta or {})
        self.group_column = group_column

    def encode(self, X: Any) -> np.ndarray:
        if (
            self.group_column is not None
            and isinstance(X, pd.DataFrame)
            and self.group_column not in X.columns
        ):
            X = X.assign(**{self.group_column: None})
        return super().encode(X)

    def predict(self, X: Any, random_state: int | None = 0) -> np.ndarray:
        return (self.decision_function(X) > 0.0).astype(np.int64)

    def _state(self) -> State:
        meta = {"intercept": self.intercept, "knobs": self.meta, "group_column": self.group_column}
        return meta, {"coef": self.coef}

    @classmethod
    def _from_state(cls, encoder: FeatureEncoder, meta: dict[str, Any], arrays: Arrays) -> Model:
        return cls(
            encoder,
            arrays["coef"],
            float(meta["intercept"]),
            meta.get("knobs"),
            group_column=meta.get("group_column"),
        )
