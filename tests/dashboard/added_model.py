"""The model type and the metric of the method defined only in ``test_added_method``: declared
there on its :class:`~fairengine.methods.base.Method` (``model_types``, ``metrics``), and found
through the method registry like a built-in method's. Importing this module registers the model
class; the test module imports it only when the method runs."""

from __future__ import annotations

from typing import Any

import numpy as np

from fairengine.data.encoding import FeatureEncoder
from fairengine.models.base import Arrays, Model, State, register_model
from fairengine.models.schema_rules import Schema, num_within
from fairengine.models.schemas import encoder_dims, with_encoder

MODEL_TYPE = "constant_rate"


@register_model
class ConstantRateModel(Model):
    """P(ŷ = 1) = ``rate`` for every row; its file state is the encoder and the rate."""

    model_type = MODEL_TYPE
    state_schema = Schema(with_encoder(rate=num_within(0.0, 1.0)), dims=encoder_dims)

    def __init__(self, encoder: FeatureEncoder, rate: float) -> None:
        super().__init__(encoder)
        self.rate = float(rate)

    def _score(self, Z: np.ndarray) -> np.ndarray:
        return np.full(len(Z), self.rate)

    def _state(self) -> State:
        return {"rate": self.rate}, {}

    @classmethod
    def _from_state(cls, encoder: FeatureEncoder, meta: dict[str, Any], arrays: Arrays) -> Model:
        return cls(encoder, meta["rate"])


def predicted_rate(y_true: np.ndarray, y_pred: np.ndarray, groups: np.ndarray) -> float:
    """Mean P(ŷ = 1) over the rows (``y_pred`` holds the model's probabilities)."""
    return float(np.mean(np.asarray(y_pred, dtype=float)))
