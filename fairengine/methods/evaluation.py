"""Scoring a fitted model on a task with the shared metrics (one place for every method)."""

from __future__ import annotations

import numpy as np

from fairengine import metrics
from fairengine.data import Task

CLASSIFICATION_METRICS = ("accuracy", "error", "dp_diff", "eo_diff", "tpr_diff", "statistical_rate")
REGRESSION_METRICS = ("loss", "sp_ks", "max_group_loss")


def task_metrics(task: Task, score: np.ndarray) -> dict[str, float]:
    """The standard metrics of ``task.kind`` for predictions ``score``.

    For classification ``score`` is P(prediction = 1) per row: hard 0/1 predictions, or the
    probability of a randomized classifier, whose metrics are then its expected metrics.
    """
    names = CLASSIFICATION_METRICS if task.kind == "classification" else REGRESSION_METRICS
    return {name: float(metrics.METRICS[name](task.y, score, task.groups)) for name in names}


def score_splits(model, train: Task, test: Task) -> dict[str, dict[str, float]]:
    """``{"train": metrics, "test": metrics}`` of a :class:`~fairengine.models.Model`."""
    return {
        split: task_metrics(part, model.metric_predictions(part.X))
        for split, part in (("train", train), ("test", test))
    }
