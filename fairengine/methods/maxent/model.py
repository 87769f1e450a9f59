"""MaxEntModel: the exportable result of a max-entropy run (generator + downstream classifier).

Design notes: ``docs/methods/maxent.md``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from fairengine.data.encoding import FeatureEncoder
from fairengine.methods.maxent.classifier import Params, classifier_scores
from fairengine.methods.maxent.debiaser import MaxEntDebiaser
from fairengine.methods.maxent.domain import Domain
from fairengine.methods.maxent.schema import SCHEMA
from fairengine.models.base import Arrays, Model, State, register_model


def column_encoder(columns: list[str], dropped: Sequence[str] = ()) -> FeatureEncoder:
    """A pass-through encoder that only records the input columns (the domain does the coding)
    and the identifier-like columns left out of the domain (``dropped``: named, no value stored,
    not needed to predict — as the shared encoder records them)."""
    return FeatureEncoder.from_dict(
        {
            "dropped": list(dropped),
            "max_categories": 0,
            "scale": False,
            "columns": [c for c in columns if c not in set(dropped)],
            "numeric": [],
            "categorical": [],
            "median": [],
            "center": [],
            "scale_values": [],
        }
    )


@register_model
class MaxEntModel(Model):
    """A fitted max-entropy generator and the classifier trained on its samples.

    Parameters
    ----------
    columns : list of str
        The task's feature columns (the model's inputs).
    generator : MaxEntDebiaser
        Fitted.
    classifier : str
        One of :data:`~fairengine.methods.maxent.classifier.CLASSIFIERS`.
    classifier_params : dict of ndarray
        From :func:`~fairengine.methods.maxent.classifier.fit_classifier`, on the domain's
        reference-coded model features (label and protected attribute excluded).
    dropped : sequence of str
        Identifier-like columns the domain left out
        (:func:`~fairengine.methods.maxent.domain.identifier_columns`): not inputs of the model.
    """

    model_type = "maxent"
    state_schema = SCHEMA
    kind = "classification"

    def __init__(
        self,
        columns: list[str],
        generator: MaxEntDebiaser,
        classifier: str,
        classifier_params: Params,
        dropped: Sequence[str] = (),
    ) -> None:
        super().__init__(column_encoder(columns, dropped))
        self.generator = generator
        self.classifier = classifier
        self.classifier_params = classifier_params

    @property
    def domain(self) -> Domain:
        return self.generator.domain_

    def encode(self, X: pd.DataFrame | np.ndarray) -> np.ndarray:
        self.check_input(X)
        only = self.domain.model_features
        if not isinstance(X, pd.DataFrame):
            X = pd.DataFrame(np.asarray(X), columns=self.features)
        return self.domain.encode(self.domain.codes(X, only), only)

    def _score(self, Z: np.ndarray) -> np.ndarray:
        return classifier_scores(self.classifier_params, Z)

    def probability(self, rows: pd.DataFrame | np.ndarray) -> np.ndarray:
        """Exact p*(α) of readable rows (every domain column) or level codes."""
        return self.generator.probability(rows)

    def sample(self, n: int, random_state: int | None = 0) -> pd.DataFrame:
        """n exact draws from p*, as readable rows."""
        return self.generator.sample(n, random_state)

    def _state(self) -> State:
        g = self.generator
        meta = {
            "domain": g.domain_.to_dict(),
            "C": float(g.C),
            "tau": float(g.tau),
            "prior": g.prior,
            "n_bins": int(g.n_bins),
            "n_iter": int(g.n_iter_),
            "classifier": self.classifier,
            "classifier_arrays": sorted(self.classifier_params),
        }
        arrays = {
            "lambda": g.lambda_,
            "theta": g.theta_,
            "rows": g.rows_,
            "weights": g.weights_,
            "counts": g.counts_,
        }
        arrays.update({f"clf_{k}": v for k, v in self.classifier_params.items()})
        return meta, arrays

    @classmethod
    def _from_state(cls, encoder: FeatureEncoder, meta: dict[str, Any], arrays: Arrays) -> Model:
        generator = MaxEntDebiaser(
            C=float(meta["C"]),
            tau=float(meta["tau"]),
            prior=str(meta["prior"]),
            target_marginals=np.asarray(arrays["theta"], dtype=float),
            n_bins=int(meta["n_bins"]),
        )
        generator.restore(
            Domain.from_dict(meta["domain"]),
            rows=arrays["rows"],
            weights=arrays["weights"],
            counts=arrays["counts"],
            theta=arrays["theta"],
            lam=arrays["lambda"],
            n_iter=int(meta["n_iter"]),
        )
        params = {k: np.asarray(arrays[f"clf_{k}"]) for k in meta["classifier_arrays"]}
        dropped = list(getattr(encoder, "dropped_", []))
        return cls(list(encoder.columns_), generator, str(meta["classifier"]), params, dropped)
