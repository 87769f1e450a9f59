"""The one evaluation path: every predicting model is scored here, the same way, on the same rows.

Design notes: docs/architecture.md, "The one evaluation path".
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fairengine import metrics
from fairengine.data import Task

CLASSIFICATION_METRICS = metrics.standard_metrics("classification")
REGRESSION_METRICS = metrics.standard_metrics("regression")


def task_metrics(task: Task, score: np.ndarray) -> dict[str, float]:
    """The standard metrics of ``task.kind`` for predictions ``score``.

    For classification ``score`` is P(prediction = 1) per row: hard 0/1 predictions, or the
    probability of a randomized classifier, whose metrics are then its expected metrics.
    """
    names = CLASSIFICATION_METRICS if task.kind == "classification" else REGRESSION_METRICS
    return {name: float(metrics.METRICS[name](task.y, score, task.groups)) for name in names}


def mixture_metrics(task: Task, weights: np.ndarray, predictions: np.ndarray) -> dict[str, float]:
    """Regression metrics of a randomized predictor that uses column t of ``predictions`` with
    probability ``weights[t]``: expected (group) squared error and the mixture-CDF KS distance."""
    w = np.asarray(weights, dtype=float)
    P = np.asarray(predictions, dtype=float).reshape(len(task.y), -1)
    if P.shape[1] != w.size:
        raise ValueError(f"{w.size} mixture weights for {P.shape[1]} prediction columns")
    y = np.asarray(task.y, dtype=float)
    codes = np.unique(np.asarray(task.groups), return_inverse=True)[1]
    used = w > 0
    expected = ((y[:, None] - P[:, used]) ** 2) @ w[used]  # E_Q[(y − f(x))²] per row
    group_loss = np.bincount(codes, expected) / np.bincount(codes)
    thresholds = np.unique(P[:, used])
    group_cdfs, overall = 0.0, 0.0
    for t, q in enumerate(w):
        if q > 0:
            _, gc, oc = metrics.prediction_cdfs(P[:, t], codes, thresholds=thresholds)
            group_cdfs, overall = group_cdfs + q * gc, overall + q * oc
    return {
        "loss": float(expected.mean()),
        "sp_ks": metrics.ks_distance_from_cdfs(group_cdfs, overall),
        "max_group_loss": float(group_loss.max()),
    }


def predicts(model: Any, task: Task) -> bool:
    """Whether ``model`` predicts ``task``'s target (so the shared evaluation applies)."""
    return (
        model is not None
        and getattr(model, "predicts_target", False)
        and getattr(model, "kind", None) == task.kind
        and hasattr(model, "metric_predictions")
    )


def model_inputs(result: Any, split: str, task: Task) -> Any:
    """The feature frame ``result.model`` is scored on for ``split``: ``task.X`` plus the
    columns the method recorded in ``artifacts["extra_inputs"][split]`` (if any)."""
    extra = (result.artifacts.get("extra_inputs") or {}).get(split)
    return task.X.assign(**extra) if extra else task.X


#: Transient artifact: the encoded split matrices a method hands to the evaluation.
ENCODED_INPUTS = "encoded_inputs"


def _split_metrics(model: Any, task: Task, X: Any, *, encoded: bool = False) -> dict | None:
    """The shared metrics of ``model`` on ``task`` for its inputs ``X``: the feature frame, or
    with ``encoded`` the rows already encoded by ``model.encode`` (the same numbers; None when
    the model cannot score encoded rows)."""
    suffix = "_encoded" if encoded else ""
    mixture = getattr(model, f"prediction_mixture{suffix}", None)
    if task.kind == "regression" and mixture is not None:
        return mixture_metrics(task, *mixture(X))
    if encoded and hasattr(model, "prediction_mixture"):
        return None
    scorer = getattr(model, f"metric_predictions{suffix}", None)
    values = scorer(X) if scorer is not None else None
    return None if values is None else task_metrics(task, np.asarray(values, dtype=float))


def shared_encoding(model: Any, task: Task) -> np.ndarray | None:
    """``model.encode(task.X)`` kept per encoder object and rows (read-only): the points of a
    sweep share one fitted encoder, so the evaluation and the evidence encode each split once
    per task instead of at every point. None for a model that encodes in its own way or was
    loaded from a file (its input checks apply)."""
    from fairengine.methods.fitted import fitted_once
    from fairengine.models.base import Model

    encoder = getattr(model, "encoder", None)
    if encoder is None or not isinstance(model, Model) or type(model).encode is not Model.encode:
        return None
    if model.input_schema is not None:  # loaded from a file: its input checks apply
        return None

    def encode() -> np.ndarray:
        Z = np.asarray(model.encode(task.X))
        Z.flags.writeable = False
        return Z

    return fitted_once(("encoded rows", encoder, task.fingerprint), encode)


def predictions_on_test(result: Any, test: Task) -> np.ndarray:
    """What the metrics score of ``result.model`` on the test rows (P(ŷ = 1) per row for a
    classifier), from the shared encoding when the model can score it."""
    model = result.model
    if "test" not in (result.artifacts.get("extra_inputs") or {}):
        Z = shared_encoding(model, test)
        scorer = getattr(model, "metric_predictions_encoded", None)
        values = scorer(Z) if Z is not None and scorer is not None else None
        if values is not None:
            return np.asarray(values, dtype=float)
    return np.asarray(model.metric_predictions(model_inputs(result, "test", test)), dtype=float)


def evaluate_result(result: Any, train: Task, test: Task) -> Any:
    """Put the shared metrics of ``result.model`` into ``result.metrics`` (see the module doc)."""
    encoded = result.artifacts.pop(ENCODED_INPUTS, None) or {}
    if not predicts(result.model, train):
        return result
    for split, task in (("train", train), ("test", test)):
        shared, extra = None, result.artifacts.get("extra_inputs") or {}
        if split not in extra:
            Z = encoded.get(split)
            Z = shared_encoding(result.model, task) if Z is None else Z
            shared = None if Z is None else _split_metrics(result.model, task, Z, encoded=True)
        if shared is None:
            shared = _split_metrics(result.model, task, model_inputs(result, split, task))
        result.metrics[split] = {**result.metrics.get(split, {}), **shared}
    return result
