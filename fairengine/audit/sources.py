"""The three routes an outside model takes into an audit, each ending as values per row, checked
by kind (``"predictions"``, ``"scores"``, a randomized model's ``"probabilities"``): one per row
of the task, of the right type and range.

Design notes: docs/howto/audit.md, "How an outside model comes in" and "How an audit scores a
model".
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from fairengine.data.errors import DataError

if TYPE_CHECKING:
    from fairengine.data import Task

_ZIP_MAGIC = b"PK\x03\x04"
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
    what = kind
    series = aligned(task, values, what)
    missing = series.isna().to_numpy()
    if missing.any():
        raise DataError(
            f"The {what} are missing for {int(missing.sum()):,} row(s) (first: row "
            f"{int(np.argmax(missing)) + 1}). Every row needs a value."
        )
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


@dataclass(frozen=True)
class Outside:
    """An outside model's values on a task: ``values`` one float per row of ``task`` (checked
    for ``kind``), ``source`` in words."""

    task: Task
    values: np.ndarray
    kind: str
    source: str


def without_column(task: Task, column: str, why: str) -> Task:
    """``task`` without feature ``column`` (frame and features), with a note saying ``why``."""
    features = tuple(f for f in task.features if f != column)
    if not features:
        raise DataError(
            f"Column {column!r} is the table's only feature; add the model's input columns."
        )
    note = f"Column {column!r} is not a feature of any method: {why}."
    return replace(
        task,
        frame=task.frame.drop(columns=[column]),
        features=features,
        notes=(*task.notes, note),
    )


def from_column(task: Task, column: str, kind: str | None = None) -> Outside:
    """Route (a): the values of ``column`` of the task's table."""
    if column not in task.features and (column == task.target or column in task.sensitive):
        role = "the target" if column == task.target else "a sensitive column"
        raise DataError(
            f"Column {column!r} is {role}, not the model's predictions. Choose another."
        )
    if column not in task.features:
        shown = ", ".join(map(repr, task.features[:12]))
        raise DataError(
            f"The table has no feature column {column!r} for the model's predictions (constant "
            f"columns are ignored). Its feature columns: {shown}."
        )
    values = task.frame[column]
    kind = kind or guess_kind(task, values)
    reduced = without_column(task, column, "it holds the outside model's " + kind)
    return Outside(reduced, checked_values(task, values, kind), kind, f"column {column!r}")


def from_file(
    task: Task, source: Any, id_column: str, column: str | None = None, kind: str | None = None
) -> Outside:
    """Route (b): a CSV/Parquet file (path, bytes or a DataFrame) of ``id_column`` and one
    prediction column (``column``, or the only other column)."""
    from fairengine.data import read_table

    table = source if isinstance(source, pd.DataFrame) else read_table(source)
    table = table.rename(columns=str)
    if id_column not in table.columns:
        raise DataError(
            f"The predictions file has no id column {id_column!r}. Its columns: "
            f"{', '.join(map(repr, table.columns[:12]))}."
        )
    others = [c for c in table.columns if c != id_column]
    if column is None and len(others) != 1:
        raise DataError(
            f"The predictions file has {len(others)} columns besides {id_column!r}: name the "
            "one that holds the predictions."
        )
    column = column or others[0]
    if column not in table.columns:
        raise DataError(f"The predictions file has no column {column!r}.")
    ids = table[id_column].astype(str)
    if ids.duplicated().any():
        raise DataError(
            f"The id {ids[ids.duplicated()].iloc[0][:40]!r} appears twice in the predictions "
            "file; each row needs one prediction."
        )
    keys, reduced, keyed_by = _table_keys(task, id_column)
    by_id = pd.Series(table[column].to_numpy(), index=ids.to_numpy())
    matched = keys.isin(by_id.index)
    if not matched.any():
        raise DataError(
            f"No id of the predictions file matches the table's {keyed_by} (file: "
            f"{ids.iloc[0][:30]!r}..., table: {keys.iloc[0][:30]!r}...). Check the id column."
        )
    if not matched.all():
        missing = keys[~matched]
        raise DataError(
            f"{len(missing):,} row(s) of the table have no prediction in the file (first id: "
            f"{missing.iloc[0][:40]!r}). Every row needs one."
        )
    values = pd.Series(by_id.reindex(keys.to_numpy()).to_numpy(), index=task.frame.index)
    kind = kind or guess_kind(task, values)
    if (extra := len(ids) - len(keys)) > 0:
        note = f"{extra:,} prediction(s) in the file match no row of the table ({keyed_by}); "
        reduced = replace(reduced, notes=(*reduced.notes, note + "they were ignored."))
    source_words = f"column {column!r} of a predictions file keyed by {id_column!r}"
    return Outside(reduced, checked_values(task, values, kind), kind, source_words)


def _table_keys(task: Task, id_column: str) -> tuple[pd.Series, Task, str]:
    """The table's ids as text, the task without the id column, and what the ids are."""
    if id_column in task.features or id_column in task.identifiers:  # identifiers: no feature
        keys = task.frame[id_column].astype(str)
        if keys.duplicated().any():
            raise DataError(f"The table's id column {id_column!r} has repeated values.")
        reduced = (
            task
            if id_column in task.identifiers
            else without_column(task, id_column, "it identifies rows")
        )
        return keys.reset_index(drop=True), reduced, f"column {id_column!r}"
    if id_column in task.frame.columns:
        raise DataError(f"Column {id_column!r} is a role of the task, not a row id.")
    keys = pd.Series(task.frame.index.astype(str), dtype=object)
    return keys, task, "row numbers (the table has no such column; 0 = first data row)"


# -- model files ----------------------------------------------------------------------------------


def from_model_file(
    task: Task, source: str | os.PathLike[str] | bytes, label: str | None = None
) -> Outside:
    """Route (c): a fairengine model file or a skops file of a scikit-learn pipeline (a path,
    or the bytes of an upload named ``label``), predicting on the task's rows (the columns it
    reads must be in the table)."""
    from fairengine.audit.trusted import MAX_SKOPS_BYTES, load_pipeline, pipeline_values
    from fairengine.export import load_model
    from fairengine.export.safe import ModelFileError, open_zip

    raw, label = _model_bytes(source, label, MAX_SKOPS_BYTES)
    if raw[:4] != _ZIP_MAGIC:
        raise DataError(
            f"{label!r} is not a fairengine model file nor a skops file (both are zip "
            "archives). Pickled models are never loaded: save the pipeline with skops.io.dump."
        )
    try:  # the zip's directory within the model files' limits, never zipfile's unbounded read
        with open_zip(raw, repr(label)) as archive:
            names = {member.filename for member in archive.infolist()}
    except ModelFileError as exc:
        raise DataError(str(exc)) from None
    if not {"manifest.json", "state.json"} <= names:
        values, kind = pipeline_values(load_pipeline(raw, label), task)
        return Outside(task, checked_values(task, values, kind), kind, f"model file {label!r}")
    model = load_model(raw)
    needed = [c for c in model.features if c not in task.frame.columns or c == task.target]
    if needed:
        raise DataError(
            f"The model in {label!r} reads column(s) the table lacks: "
            f"{', '.join(map(repr, needed[:10]))}."
        )
    if getattr(model, "kind", None) != task.kind:
        raise DataError(
            f"The model in {label!r} is a {model.kind} model; this is a {task.kind} task."
        )
    frame = task.frame.loc[:, list(model.features)]  # the table may hold columns it never saw
    values = np.asarray(model.metric_predictions(frame), dtype=float)
    hard = task.kind != "classification" or set(np.unique(values)) <= {0.0, 1.0}
    kind = "predictions" if hard else "probabilities"  # a randomized classifier's P(ŷ = 1)
    return Outside(task, checked_values(task, values, kind), kind, f"model file {label!r}")


def _model_bytes(source: Any, label: str | None, limit: int) -> tuple[bytes, str]:
    from fairengine.export.safe import read_regular

    if isinstance(source, bytes | bytearray):
        raw, label = bytes(source), label or "the model file"
    else:
        label = label or Path(source).name
        try:
            raw = read_regular(source, limit)
        except OSError as exc:
            raise DataError(
                f"Cannot read the model file {label!r}: {exc.strerror or exc}."
            ) from None
    if len(raw) > limit:
        raise DataError(f"{label!r} is larger than {limit // 2**20} MB.")
    return raw, label
