"""Tables for comparing cached frontiers of several methods on one task (the Compare page)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from fairengine import metrics
from fairengine.data import Task
from fairengine.frontier.pareto import pareto_mask


def knob_label(knobs: dict[str, Any]) -> str:
    """``eps=0.02, max_iter=50`` — knobs in a short readable form."""
    parts = []
    for name, value in knobs.items():
        shown = f"{value:.4g}" if isinstance(value, float) else str(value)
        parts.append(f"{name}={shown}")
    return ", ".join(parts)


def comparison_table(points: Sequence[Any]) -> pd.DataFrame:
    """One row per (cached point, split): method, point_id, knobs, every metric.

    ``points`` are :class:`~fairengine.frontier.CachedPoint` objects (anything with ``method``,
    ``point_id``, ``knobs`` and ``metrics``).
    """
    rows = []
    for point in points:
        for split, values in point.metrics.items():
            rows.append(
                {
                    "method": point.method,
                    "point_id": point.point_id,
                    "split": split,
                    "knobs": knob_label(point.knobs),
                    **{k: float(v) for k, v in values.items()},
                }
            )
    return pd.DataFrame(rows)


def metric_columns(table: pd.DataFrame) -> list[str]:
    """The metric columns of a comparison table, in the registry's order."""
    known = [m for m in metrics.ALL_METRIC_NAMES if m in table.columns]
    return known


def mark_pareto(table: pd.DataFrame, x: str, y: str) -> pd.DataFrame:
    """Add ``pareto`` (within each method and split) and ``pareto_all`` (across methods).

    Directions come from :func:`fairengine.metrics.is_lower_better`.
    """
    table = table.copy()
    minimize = (metrics.is_lower_better(x), metrics.is_lower_better(y))
    table["pareto"] = False
    table["pareto_all"] = False
    if table.empty or x not in table or y not in table:
        return table
    for _, index in table.groupby("split").groups.items():
        part = table.loc[index]
        table.loc[index, "pareto_all"] = pareto_mask(part[x], part[y], minimize=minimize)
    for _, index in table.groupby(["split", "method"]).groups.items():
        part = table.loc[index]
        table.loc[index, "pareto"] = pareto_mask(part[x], part[y], minimize=minimize)
    return table


def group_metrics(model: Any, task: Task, *, ci: float = 0.95) -> pd.DataFrame:
    """Per-group metrics of a model on a task, with bootstrap intervals."""
    predictions = np.asarray(model.metric_predictions(task.X))
    return metrics.group_table(
        task.y,
        predictions,
        task.groups,
        group_names=list(task.group_names),
        kind=task.kind,
        ci=ci,
    )
