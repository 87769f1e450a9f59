"""The three routes an outside model takes into an audit, each ending as values per row, checked
by kind (``"predictions"``, ``"scores"``, a randomized model's ``"probabilities"``): one per row
of the task, of the right type and range.

Design notes: docs/howto/audit.md, "How an outside model comes in", "How an audit scores a
model" and "Pipelines saved with skops".
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from fairengine.data.errors import DataError
from fairengine.models import skops_codec

if TYPE_CHECKING:
    from fairengine.data import Task

_ZIP_MAGIC = b"PK\x03\x04"
KINDS = ("predictions", "scores", "probabilities")
_TRUE = {"1", "1.0", "true", "yes"}
_FALSE = {"0", "0.0", "false", "no"}
#: Largest skops file read.
MAX_SKOPS_BYTES = 100 * 2**20
#: Preprocessing a pipeline may use (transforms are NumPy/Python code on checked arrays).
TRANSFORMERS: tuple[str, ...] = (
    "sklearn.pipeline.Pipeline",
    "sklearn.compose.ColumnTransformer",
    "sklearn.preprocessing.OneHotEncoder",
    "sklearn.preprocessing.OrdinalEncoder",
    "sklearn.preprocessing.StandardScaler",
    "sklearn.preprocessing.MinMaxScaler",
    "sklearn.impute.SimpleImputer",
    "sklearn.preprocessing.FunctionTransformer",  # only without a function (passthrough)
)
#: Final classifiers accepted on top of the model files' reviewed estimators.
CLASSIFIERS: tuple[str, ...] = (
    "sklearn.tree.DecisionTreeClassifier",
    "sklearn.ensemble.RandomForestClassifier",
    "sklearn.ensemble.ExtraTreesClassifier",
    "sklearn.ensemble.HistGradientBoostingClassifier",
    "sklearn.dummy.DummyClassifier",
    "sklearn.preprocessing.LabelEncoder",  # a classifier's class labels (searchsorted on them)
)


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
    series = aligned(task, values, kind)
    missing = series.isna().to_numpy()
    if missing.any():
        raise DataError(
            f"The {kind} are missing for {int(missing.sum()):,} row(s) (first: row "
            f"{int(np.argmax(missing)) + 1}). Every row needs a value."
        )
    if kind == "predictions" and task.kind == "classification":
        return _labels(series, task, kind)
    if kind != "predictions" and task.kind != "classification":
        raise DataError(
            f"Scores apply to classification tasks; the target {task.target!r} makes this a "
            "regression task. Give the model's predicted values as predictions."
        )
    array = _numbers(series, kind)
    if kind != "predictions" and (array.min() < 0 or array.max() > 1):
        raise DataError(
            f"The {kind} must be probabilities between 0 and 1; they range from "
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


def from_model_file(
    task: Task, source: str | os.PathLike[str] | bytes, label: str | None = None
) -> Outside:
    """Route (c): a fairengine model file or a skops file of a scikit-learn pipeline (a path,
    or the bytes of an upload named ``label``), predicting on the task's rows (the columns it
    reads must be in the table)."""
    from fairengine.export import load_model
    from fairengine.export.safe import ModelFileError, open_zip, read_regular

    if isinstance(source, bytes | bytearray):
        raw, label = bytes(source), label or "the model file"
    else:
        label = label or Path(source).name
        try:
            raw = read_regular(source, MAX_SKOPS_BYTES)
        except OSError as exc:
            raise DataError(
                f"Cannot read the model file {label!r}: {exc.strerror or exc}."
            ) from None
    if len(raw) > MAX_SKOPS_BYTES:
        raise DataError(f"{label!r} is larger than {MAX_SKOPS_BYTES // 2**20} MB.")
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


def load_pipeline(raw: bytes, label: str = "the model file") -> Any:
    """The estimator in a skops file's bytes, refused (DataError, in words) unless every type
    in it is trusted and every part passes :func:`check_pipeline`."""
    import skops.io as sio

    from fairengine.export.safe import ModelFileError, check_skops

    try:  # the zip read within its declared sizes before skops' own zip code sees it
        check_skops(raw, f"The skops file {label!r}")
    except ModelFileError as exc:
        raise DataError(f"{exc} Only skops files that scikit-learn writes are loaded.") from None
    try:
        untrusted = set(sio.get_untrusted_types(data=raw)) - set(skops_codec.TRUSTED_TYPES)
    except Exception as exc:  # not a skops archive: skops raises many kinds
        raise DataError(f"{label!r} is not a skops file: {str(exc)[:200]}") from None
    if untrusted:
        raise DataError(
            f"{label!r} holds types fairengine does not load: "
            f"{', '.join(sorted(untrusted)[:5])}. Only scikit-learn estimators of the reviewed "
            "types are loaded, never code or pickles."
        )
    try:
        model = sio.loads(raw, trusted=list(skops_codec.TRUSTED_TYPES))
    except Exception as exc:
        raise DataError(f"{label!r} could not be loaded: {str(exc)[:200]}") from None
    try:
        check_pipeline(model)
    except ValueError as exc:
        raise DataError(f"{label!r} is refused: {exc}.") from None
    return model


def check_pipeline(model: Any, where: str = "model") -> None:
    """Raise ValueError naming the part unless ``model`` is a pipeline of reviewed
    transformers ending in a reviewed estimator (or such an estimator alone)."""
    if skops_codec.class_name(model) == "sklearn.pipeline.Pipeline":
        steps = list(model.steps)
        for label, step in steps[:-1]:
            _check_transformer(step, f"{where}.{label}")
        label, last = steps[-1]
        check_pipeline(last, f"{where}.{label}")
        return
    if not (hasattr(model, "predict") and not hasattr(model, "transform")):
        raise ValueError(f"{where} is a {type(model).__name__}, not a final estimator")
    skops_codec.check(model, also=skops_codec.classes(CLASSIFIERS))


def _check_transformer(step: Any, where: str) -> None:
    if isinstance(step, str) and step in ("drop", "passthrough"):
        return
    name = skops_codec.class_name(step)
    if type(step) not in skops_codec.classes(TRANSFORMERS):
        raise ValueError(f"{where} is a {type(step).__name__} ({name}), not a reviewed transformer")
    if name.endswith("FunctionTransformer") and (step.func or step.inverse_func):
        raise ValueError(f"{where} is a FunctionTransformer with a function")
    if name.endswith("Pipeline"):
        for label, inner in step.steps:
            _check_transformer(inner, f"{where}.{label}")
    if name.endswith("ColumnTransformer"):
        fitted = getattr(step, "transformers_", step.transformers)
        for label, inner, _ in fitted:
            _check_transformer(inner, f"{where}.{label}")
        for label, inner in (getattr(step, "_name_to_fitted_passthrough", None) or {}).items():
            _check_transformer(inner, f"{where}.{label}")


def pipeline_values(model: Any, task: Task) -> tuple[np.ndarray, str]:
    """The model's values on the task's rows and their kind: P(positive) scores of a
    classifier, predicted values of a regressor."""
    columns = [str(c) for c in getattr(model, "feature_names_in_", [])]
    if not columns:
        raise DataError(
            "The pipeline does not record its input column names: fit it on a pandas DataFrame "
            "with the table's column names."
        )
    lacking = [c for c in columns if c not in task.frame.columns or c == task.target]
    if lacking:
        raise DataError(
            f"The model reads column(s) the table lacks: {', '.join(map(repr, lacking[:10]))}"
            + (" (the target is never a model input)" if task.target in lacking else "")
            + "."
        )
    X = task.frame.loc[:, columns]
    try:
        if task.kind != "classification":
            return np.asarray(model.predict(X), dtype=float), "predictions"
        column = _positive_column(model, task)
        return np.asarray(model.predict_proba(X), dtype=float)[:, column], "scores"
    except (ValueError, TypeError, KeyError) as exc:
        raise DataError(f"The model could not predict the table's rows: {str(exc)[:300]}") from None


def _positive_column(model: Any, task: Task) -> int:
    classes = [str(c) for c in getattr(model, "classes_", [])]
    wanted = set(task.positive_values) or {str(task.positive_label)}
    for candidates in (wanted, {"1", "True", "1.0"}):
        hits = [i for i, c in enumerate(classes) if c in candidates]
        if len(hits) == 1 and len(classes) == 2:
            return hits[0]
    raise DataError(
        f"The model's classes ({', '.join(classes[:5])}) do not include the task's positive "
        f"label {task.positive_label!r}: it must be a binary classifier of {task.target!r}."
    )
