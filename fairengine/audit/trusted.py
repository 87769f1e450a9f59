"""A scikit-learn pipeline saved with skops, loaded for an audit with an explicit trusted list.

Design notes: docs/howto/audit.md, "Pipelines saved with skops".
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import numpy as np

from fairengine.data.errors import DataError
from fairengine.models import skops_codec

if TYPE_CHECKING:
    from fairengine.data import Task

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


@functools.cache
def _types(names: tuple[str, ...]) -> frozenset[type]:
    return frozenset(skops_codec._class(name) for name in names)


def load_pipeline(raw: bytes, label: str = "the model file") -> Any:
    """The estimator in a skops file's bytes, refused (DataError, in words) unless every type
    in it is trusted and every part passes :func:`check_pipeline`."""
    import skops.io as sio

    from fairengine.export.safe import ModelFileError, check_skops

    if len(raw) > MAX_SKOPS_BYTES:
        raise DataError(f"{label!r} is larger than {MAX_SKOPS_BYTES // 2**20} MB.")
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
    name = f"{type(model).__module__}.{type(model).__qualname__}"
    if name == "sklearn.pipeline.Pipeline":
        steps = list(model.steps)
        for label, step in steps[:-1]:
            _check_transformer(step, f"{where}.{label}")
        label, last = steps[-1]
        check_pipeline(last, f"{where}.{label}")
        return
    if not (hasattr(model, "predict") and not hasattr(model, "transform")):
        raise ValueError(f"{where} is a {type(model).__name__}, not a final estimator")
    skops_codec.check(model, also=_types(CLASSIFIERS))


def _check_transformer(step: Any, where: str) -> None:
    if isinstance(step, str) and step in ("drop", "passthrough"):
        return
    name = f"{type(step).__module__}.{type(step).__qualname__}"
    if type(step) not in _types(TRANSFORMERS):
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
