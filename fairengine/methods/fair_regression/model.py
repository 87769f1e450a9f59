"""FairRegressionModel: the exportable randomized regressor Q (state = JSON + arrays).

Design notes: ``docs/methods/fair_regression.md``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from fairengine.data.encoding import FeatureEncoder
from fairengine.methods.fair_regression.estimator import FairRegressor
from fairengine.methods.fair_regression.learners import Component
from fairengine.methods.fair_regression.schema import SCHEMA
from fairengine.models import skops_codec
from fairengine.models.base import Arrays, Model, State, register_model

_KNOBS = (
    "constraint",
    "eps",
    "loss",
    "n_levels",
    "oracle",
    "base_estimator",
    "max_iter",
    "random_state",
    "mode",
)


@register_model
class FairRegressionModel(Model):
    """A fitted :class:`FairRegressor` behind the task's feature encoder.

    ``predict(X, random_state)`` draws one f_t ~ Q per row (the randomized predictor, never the
    average); ``predict_score`` is the expected prediction Σ q_t f_t(x) (for display only: it
    carries no parity guarantee); ``predict_cdf(X, thresholds)`` is the exact mixture CDF.
    Predictions are on the target's original scale.
    """

    model_type = "fair_regression"
    state_schema = SCHEMA
    randomized = True  # predict draws (seeded by random_state)
    kind = "regression"
    card_meaning = (
        "`prediction` is one draw of the randomized fair regressor (each row picks one of its "
        "regressors at random); `expected_prediction` (`--proba`, `predict_score`) is the "
        "expected value of {target} over those draws."
    )

    def __init__(self, encoder: FeatureEncoder, regressor: FairRegressor) -> None:
        super().__init__(encoder)
        self.regressor = regressor

    def _score(self, Z: np.ndarray) -> np.ndarray:
        r = self.regressor
        return r.y_min_ + (r.y_max_ - r.y_min_) * (r.component_predictions(Z) @ r.weights_)

    def predict(self, X: pd.DataFrame, random_state: int | None = 0) -> np.ndarray:
        return self.regressor.predict(self.encode(X), random_state=random_state)

    def prediction_mixture(self, X: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """(weights q_t, predictions of every f_t on the target's scale, shape (n, T)): what the
        shared evaluation scores, so loss and sp_ks are exact expectations over Q."""
        return self.prediction_mixture_encoded(self.encode(X))

    def prediction_mixture_encoded(self, Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`prediction_mixture` of rows already encoded (the fit's own matrices)."""
        r = self.regressor
        values = r.component_predictions(Z)
        return np.asarray(r.weights_, float), r.y_min_ + (r.y_max_ - r.y_min_) * values

    def predict_cdf(self, X: pd.DataFrame, thresholds: Any) -> np.ndarray:
        return self.regressor.predict_cdf(self.encode(X), thresholds)

    def _state(self) -> State:
        r = self.regressor
        eps = np.asarray(r.eps, float)
        meta: dict[str, Any] = {k: getattr(r, k) for k in _KNOBS if k != "eps"}
        arrays = {"weights": r.weights_}
        if not isinstance(r.base_estimator, str):  # the unfitted base learner, through skops
            meta["base_estimator"] = None
            arrays["base_estimator_skops"] = skops_codec.dump(r.base_estimator)
        meta.update(
            eps=eps.tolist(),
            y_min=float(r.y_min_),
            y_max=float(r.y_max_),
            group_labels=[str(g) for g in r.group_labels_],
            components=[
                {"kind": c.kind, "link": c.link, "arrays": sorted(c.arrays)} for c in r.predictors_
            ],
        )
        for t, component in enumerate(r.predictors_):
            arrays.update({f"f{t}_{k}": v for k, v in component.arrays.items()})
            if component.kind == "estimator":
                arrays[f"f{t}_skops"] = skops_codec.dump(component.estimator)
        return meta, arrays

    @classmethod
    def _from_state(cls, encoder: FeatureEncoder, meta: dict[str, Any], arrays: Arrays) -> Model:
        knobs = {k: meta[k] for k in _KNOBS if k != "eps"}
        if knobs["base_estimator"] is None:
            knobs["base_estimator"] = skops_codec.load(arrays["base_estimator_skops"])
        eps = meta["eps"]
        regressor = FairRegressor(eps=eps if isinstance(eps, list) else float(eps), **knobs)
        regressor.predictors_ = [
            Component(
                c["kind"],
                c["link"],
                {k: np.asarray(arrays[f"f{t}_{k}"]) for k in c["arrays"]},
                skops_codec.load(arrays[f"f{t}_skops"]) if c["kind"] == "estimator" else None,
            )
            for t, c in enumerate(meta["components"])
        ]
        regressor.weights_ = np.asarray(arrays["weights"], float)
        regressor.y_min_, regressor.y_max_ = float(meta["y_min"]), float(meta["y_max"])
        regressor.group_labels_ = np.asarray(meta["group_labels"])
        regressor.n_groups_ = len(regressor.group_labels_)
        return cls(encoder, regressor)
