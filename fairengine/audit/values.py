"""An outside model's values, checked: one per row of the task, of the right type and range.

Three kinds of values are accepted, each checked in words (:class:`~fairengine.data.DataError`):

* ``"predictions"`` — hard predictions: for classification 0/1, true/false or the target's own
  values (``">50K"``), coded 1 where they equal the task's positive label; for regression
  finite numbers.
* ``"scores"`` — P(y = 1) of a classifier, numbers in [0, 1]: the audit thresholds them.
* ``"probabilities"`` — P(ŷ = 1) of a *randomized* classifier (a fairengine model file): its
  metrics are its expected metrics, no threshold.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from fairengine.data.errors import DataError

if TYPE_CHECKING:
    from fairengine.data import Task

KINDS = ("predictions", "scores", "probabilities")
_TRUE = {"1", "1.0", "true", "yes"}
_FALSE = {"0", "0.0", "false", "no"}


def aligned(task: Task, values: Any, what: str) -> pd.Series:
    """``values`` as a Series in the task's row order: a Series indexed like ``task.frame`` is
    reindexed; anything else must have one value per row, in order."""
    n = len(task.frame)
    if isinstance(values, pd.Series) and values.index.equals(task.frame.index):
        return values
    if isinstance(values, pd.Series) and not isinstance(values.index, pd.RangeIndex):
        missing = task.frame.index.difference(values.index)
        if len(missing):
            raise DataError(
                f"The {what} have no value for {len(missing):,} of the table's {n:,} rows "
                f"(first missing row: {missing[0]!s:.40}). Give one value per row."
            )
        return values.reindex(task.frame.index)
    array = np.asarray(values, dtype=object).ravel()
    if len(array) != n:
        raise DataError(
            f"The {what} have {len(array):,} values but the table has {n:,} rows. Give exactly "
            "one value per row, in the table's order."
        )
    return pd.Series(array, index=task.frame.index)


def _missing_check(series: pd.Series, what: str) -> None:
    missing = series.isna().to_numpy()
    if missing.any():
        first = int(np.argmax(missing))
        raise DataError(
            f"The {what} are missing for {int(missing.sum()):,} row(s) (first: row {first + 1}). "
            "Every row needs a value."
        )


def _numbers(series: pd.Series, what: str) -> np.ndarray:
    if pd.api.types.is_bool_dtype(series):
        return series.to_numpy(dtype=float)
    parsed = pd.to_numeric(series, errors="coerce")
    wrong = parsed.isna().to_numpy()
    if wrong.any():
        first = int(np.argmax(wrong))
        raise DataError(
            f"The {what} must be numbers; row {first + 1} has {str(series.iloc[first])[:30]!r}."
        )
    array = parsed.to_numpy(dtype=float)
    if not np.all(np.isfinite(array)):
        raise DataError(f"The {what} must be finite numbers; some are infinite.")
    return array


def _labels(series: pd.Series, task: Task, what: str) -> np.ndarray:
    """Hard classification predictions coded 0/1."""
    text = series.astype(str).str.strip()
    positive = set(task.positive_values) or {str(task.positive_label)}
    known = set(task.frame[task.target].astype(str).unique())
    if set(text) <= known:
        return text.isin(positive).to_numpy(dtype=float)
    lowered = text.str.lower()
    if lowered.isin(_TRUE | _FALSE).all():
        return lowered.isin(_TRUE).to_numpy(dtype=float)
    unknown = sorted(set(text) - known)
    raise DataError(
        f"The {what} must be 0/1, true/false or values of the target {task.target!r} "
        f"({', '.join(sorted(known)[:6])}); found {', '.join(map(repr, unknown[:3]))}. For "
        "scores between 0 and 1 choose scores instead of predictions."
    )


def checked_values(task: Task, values: Any, kind: str) -> np.ndarray:
    """One float per row of ``task`` (its order): hard predictions coded 0/1 (or regression
    values), scores in [0, 1] or randomized probabilities in [0, 1]; DataError otherwise."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}; got {kind!r}.")
    what = {"predictions": "predictions", "scores": "scores", "probabilities": "probabilities"}
    what = what[kind]
    series = aligned(task, values, what)
    _missing_check(series, what)
    if kind == "predictions" and task.kind == "classification":
        return _labels(series, task, what)
    if kind != "predictions" and task.kind != "classification":
        raise DataError(
            f"Scores apply to classification tasks; the target {task.target!r} makes this a "
            "regression task. Give the model's predicted values as predictions."
        )
    array = _numbers(series, what)
    if kind != "predictions" and (array.min() < 0 or array.max() > 1):
        raise DataError(
            f"The {what} must be probabilities between 0 and 1; they range from "
            f"{array.min():.4g} to {array.max():.4g}. Rescale them (e.g. a sigmoid of a "
            "decision score) or give hard 0/1 predictions."
        )
    return array


def guess_kind(task: Task, values: Any) -> str:
    """``"predictions"`` for 0/1, true/false or target values (or any regression values),
    ``"scores"`` for other numbers of a classification task."""
    if task.kind != "classification":
        return "predictions"
    series = aligned(task, values, "values").dropna()
    numbers = pd.to_numeric(series, errors="coerce")
    if numbers.isna().any() or pd.api.types.is_bool_dtype(series):
        return "predictions"
    hard = set(np.unique(numbers.to_numpy(dtype=float))) <= {0.0, 1.0}
    return "predictions" if hard else "scores"
