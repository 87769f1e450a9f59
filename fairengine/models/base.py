"""Exportable models: raw rows in, predictions out, state as JSON + arrays (never pickle).

Every model class derives from :class:`Model` and is registered with :func:`register_model`;
a file names only registered classes. Design notes: docs/howto/export.md, "Model types".
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import numpy as np

if TYPE_CHECKING:  # the encoder needs scikit-learn: a cache lookup reads no model
    import pandas as pd

    from fairengine.data.encoding import FeatureEncoder
    from fairengine.models.columns import InputSchema
    from fairengine.models.schema_rules import Schema

Arrays = dict[str, np.ndarray]
State = tuple[dict[str, Any], Arrays]

_MODEL_TYPES: dict[str, type[Model]] = {}
M = TypeVar("M", bound="type[Model]")


def register_model(cls: M) -> M:
    """Class decorator: allow ``cls`` in model files under its ``model_type`` name."""
    _MODEL_TYPES[cls.model_type] = cls
    return cls


def unregister_model(name: str) -> None:
    """Forget the class registered as ``name`` (a type a test's method declared)."""
    _MODEL_TYPES.pop(name, None)


#: The engine's own model types (of no one method) → the module whose import registers it. A
#: method declares its own types on its :attr:`~fairengine.methods.base.Method.model_types`.
MODEL_MODULES: dict[str, str] = {
    "linear_classifier": "fairengine.models.linear",
    "randomized_classifier": "fairengine.models.linear",
    "group_threshold_classifier": "fairengine.models.group_thresholds",
}


def registered_model(name: str) -> type[Model] | None:
    """The class registered as ``name`` (None before its module is imported)."""
    return _MODEL_TYPES.get(name)


def registered_names() -> set[str]:
    """The type names of the classes registered so far."""
    return set(_MODEL_TYPES)


def _caller_level() -> int:
    """The ``stacklevel`` of the first caller outside fairengine (a warning points there)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(root):
        frame, level = frame.f_back, level + 1
    return level


class Model:
    """Base class of exportable models.

    A model owns its :class:`~fairengine.data.encoding.FeatureEncoder`, so it takes the raw feature
    columns of a table. Subclasses implement ``_score`` on encoded features and the state methods.

    Attributes
    ----------
    encoder : FeatureEncoder
        Fitted on the training features.
    kind : {"classification", "regression"}
    """

    model_type: ClassVar[str] = "model"
    kind: str = "classification"
    #: Whether the model predicts the task's target (False for e.g. a data filter), so the shared
    #: evaluation (:mod:`fairengine.methods.evaluation`) scores it.
    predicts_target: ClassVar[bool] = True
    #: Whether ``predict`` draws at random (seeded by ``random_state``); declared by the model
    #: class, read by the model card and ``fairengine inspect``.
    randomized: ClassVar[bool] = False
    #: What its outputs mean, for its model card (Markdown; ``{target}`` stands for the target's
    #: name). Empty: the card's words for a classifier (randomized or not).
    card_meaning: ClassVar[str] = ""
    #: The schema a model file's state and arrays must fit before this class is built from it
    #: (:class:`fairengine.models.schema_rules.Schema`); None: not loadable from a file.
    state_schema: ClassVar[Schema | None] = None

    #: The columns a model loaded from a file reads and knows (its training target and
    #: sensitive columns...), from the file's manifest; None for a model fitted in this process.
    input_schema: InputSchema | None = None

    def __init__(self, encoder: FeatureEncoder) -> None:
        self.encoder = encoder

    @property
    def features(self) -> list[str]:
        return list(self.encoder.columns_)

    def check_input(self, X: pd.DataFrame | np.ndarray) -> None:
        """For a model loaded from a file, the rule ``fairengine predict`` applies to a table's
        columns (:func:`fairengine.models.columns.check_columns`): columns it was trained with
        but does not read (target, sensitive attribute(s)) are ignored with an
        :class:`~fairengine.models.columns.IgnoredColumnsWarning`; missing or unknown columns
        raise :class:`~fairengine.models.columns.SchemaError`."""
        if self.input_schema is None or not hasattr(X, "columns"):
            return
        from fairengine.models import columns

        ignored = columns.check_columns(self.input_schema, list(X.columns), hint=columns.API_HINT)
        if ignored:
            note = columns.ignored_note(self.input_schema, ignored)
            warnings.warn(note, columns.IgnoredColumnsWarning, stacklevel=_caller_level())

    def encode(self, X: pd.DataFrame | np.ndarray) -> np.ndarray:
        self.check_input(X)
        return self.encoder.transform(X)

    def predict_score(self, X: pd.DataFrame) -> np.ndarray:
        """Classification: P(prediction = 1 | x) (for randomized models, over their randomness).
        Regression: the expected prediction."""
        return self._score(self.encode(X))

    def predict(self, X: pd.DataFrame, random_state: int | None = 0) -> np.ndarray:
        """Hard predictions (0/1 for classification)."""
        score = self.predict_score(X)
        return (score >= 0.5).astype(np.int64) if self.kind == "classification" else score

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        """Classification: columns P(prediction = 0), P(prediction = 1) per row; for a randomized
        classifier these are expected over its randomness (exact, no sampling)."""
        if self.kind != "classification":
            raise TypeError(
                f"{type(self).__name__} is a regression model: use predict_score (the expected "
                "prediction) or predict."
            )
        p = self.predict_score(X)
        return np.column_stack([1.0 - p, p])

    def metric_predictions(self, X: pd.DataFrame) -> np.ndarray:
        """What the metrics score: hard predictions of a deterministic model; for a randomized
        classifier P(prediction = 1), so the metrics are its exact expected metrics."""
        return self.predict(X)

    def metric_predictions_encoded(self, Z: np.ndarray) -> np.ndarray | None:
        """:meth:`metric_predictions` of rows already encoded by :meth:`encode` (the fit's own
        matrices, so the shared evaluation need not encode them again), or None when a subclass
        predicts in a way this base class cannot reproduce from ``Z``."""
        cls = type(self)
        if not (
            cls.metric_predictions is Model.metric_predictions
            and cls.predict is Model.predict
            and cls.predict_score is Model.predict_score
        ):
            return None
        score = self._score(Z)
        return (score >= 0.5).astype(np.int64) if self.kind == "classification" else score

    def _score(self, Z: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def get_state(self) -> State:
        """JSON-able metadata and named arrays that rebuild the model with :meth:`from_state`."""
        meta, arrays = self._state()
        return {"encoder": self.encoder.to_dict(), **meta}, arrays

    @classmethod
    def from_state(cls, meta: dict[str, Any], arrays: Arrays) -> Model:
        from fairengine.data.encoding import FeatureEncoder

        encoder = FeatureEncoder.from_dict(meta["encoder"])
        return cls._from_state(encoder, meta, arrays)

    def _state(self) -> State:
        raise NotImplementedError

    @classmethod
    def _from_state(cls, encoder: FeatureEncoder, meta: dict[str, Any], arrays: Arrays) -> Model:
        raise NotImplementedError
