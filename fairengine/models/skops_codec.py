"""scikit-learn estimators that have no array codec, stored through skops (never pickle).

Design notes: docs/howto/export.md, "Estimators stored through skops".
"""

from __future__ import annotations

import functools
import importlib
from typing import Any

import numpy as np

from fairengine.models import trees

#: Types trusted on top of skops' defaults (scikit-learn estimators, NumPy, builtins): the tree
#: structures of scikit-learn's tree ensembles. Extend deliberately, one reviewed type at a time.
TRUSTED_TYPES: tuple[str, ...] = (
    "sklearn.tree._tree.Tree",
    "sklearn.ensemble._hist_gradient_boosting.predictor.TreePredictor",
)

#: Most tree nodes an estimator may hold over all its trees (a tree's nodes take 64 bytes or
#: more, so this is about the content a model file may declare).
MAX_TREE_NODES = 4_000_000

#: Estimator classes a stored estimator may consist of, besides every class of
#: ``sklearn.linear_model``: their predictions are NumPy arithmetic on arrays whose shapes
#: :func:`check` checks, or walks of trees it checks. Others (e.g. ``SVR``, whose libsvm code
#: reads its support vectors by unchecked counts) are refused at export and at load.
REVIEWED: tuple[str, ...] = (
    "sklearn.tree.DecisionTreeRegressor",
    "sklearn.tree.ExtraTreeRegressor",
    "sklearn.ensemble.RandomForestRegressor",
    "sklearn.ensemble.ExtraTreesRegressor",
    "sklearn.ensemble.GradientBoostingRegressor",
    "sklearn.ensemble.HistGradientBoostingRegressor",
    "sklearn.ensemble._hist_gradient_boosting.binning._BinMapper",
    "sklearn.dummy.DummyRegressor",
)


@functools.cache
def classes(names: tuple[str, ...]) -> frozenset[type]:
    """The classes of these dotted names (imported on first use)."""
    return frozenset(_class(name) for name in names)


def _class(name: str) -> type:
    module, _, qualname = name.rpartition(".")
    return getattr(importlib.import_module(module), qualname)


class ExportRefused(TypeError):
    """An estimator that fairengine will not write into a model file."""


def class_name(obj: Any) -> str:
    """The dotted name of ``obj``'s class (``sklearn.pipeline.Pipeline``)."""
    return f"{type(obj).__module__}.{type(obj).__qualname__}"


def dump(estimator: Any) -> np.ndarray:
    """The skops bytes of ``estimator`` as a uint8 array; raises :class:`ExportRefused`."""
    import skops.io as sio

    name = class_name(estimator)
    if type(estimator).__module__.split(".")[0] != "sklearn":
        raise ExportRefused(
            f"Cannot export a {name}: model files store array codecs and scikit-learn estimators "
            "(through skops) only, never pickles. Use a scikit-learn estimator."
        )
    try:
        check(estimator)
    except ValueError as exc:
        raise ExportRefused(f"Cannot export a {name}: {exc}") from None
    try:
        data = sio.dumps(estimator)
    except Exception as exc:  # skops cannot represent it
        raise ExportRefused(f"Cannot export a {name}: skops cannot store it ({exc}).") from exc
    untrusted = sorted(set(sio.get_untrusted_types(data=data)) - set(TRUSTED_TYPES))
    if untrusted:
        raise ExportRefused(
            f"Cannot export a {name}: it contains types outside fairengine's trusted list "
            f"({', '.join(untrusted)}); model files never hold code that loading would run."
        )
    return np.frombuffer(data, dtype=np.uint8).copy()


def load(array: np.ndarray) -> Any:
    """The estimator stored by :func:`dump`, checked by :func:`check` before it is returned; a
    type outside the trusted list or content that fails the check raises ValueError."""
    import skops.io as sio
    from skops.io.exceptions import UntrustedTypesFoundException

    try:
        estimator = sio.loads(
            np.asarray(array, dtype=np.uint8).tobytes(), trusted=list(TRUSTED_TYPES)
        )
    except UntrustedTypesFoundException as exc:
        raise ValueError(f"the stored estimator holds untrusted types: {exc}") from exc
    check(estimator)
    return estimator


def check(estimator: Any, also: frozenset[type] = frozenset()) -> None:
    """Raise ValueError, naming the attribute, unless every part of ``estimator`` is safe to
    predict with: each estimator in it of a reviewed type (:data:`REVIEWED` or
    ``sklearn.linear_model``) and, when fitted, on the same ``n_features_in_`` columns as the
    outer one; each tree passing :func:`fairengine.models.trees.check_arrays` on those columns
    (children after their parent, one parent each, features in range, finite thresholds and
    values); linear coefficients of those columns. Walks estimators' attributes, lists, tuples,
    dicts and object arrays, each object once. ``also``: further reviewed estimator classes (the
    audit of an outside classifier, :mod:`fairengine.audit.sources`)."""
    from sklearn.base import BaseEstimator

    if not isinstance(estimator, BaseEstimator):
        raise ValueError(f"the stored object is a {type(estimator).__name__}, not an estimator")
    n_features = getattr(estimator, "n_features_in_", None)
    stack: list[tuple[Any, str]] = [(estimator, type(estimator).__name__)]
    seen: set[int] = set()
    nodes = path = 0  # over every tree: nodes, and nodes one row walks
    while stack:
        obj, where = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, BaseEstimator):
            _check_estimator(obj, where, n_features, also)
            stack.extend((v, f"{where}.{k}") for k, v in vars(obj).items())
        elif isinstance(obj, list | tuple) or (isinstance(obj, np.ndarray) and obj.dtype == object):
            items = obj.ravel() if isinstance(obj, np.ndarray) else obj
            stack.extend((v, f"{where}[{i}]") for i, v in enumerate(items))
        elif isinstance(obj, dict):
            stack.extend((v, f"{where}[{k!r}]") for k, v in obj.items())
        elif class_name(obj) in TRUSTED_TYPES:
            if not isinstance(n_features, int) or n_features < 1:
                raise ValueError(f"{where} is a fitted tree in an estimator without a width")
            try:
                size, depths = _check_tree(obj, n_features)
            except ValueError as exc:
                raise ValueError(f"{where} is not a valid tree: {exc}") from None
            nodes, path = nodes + size, path + int(depths.sum())
            if nodes > MAX_TREE_NODES or path > trees.MAX_PATH_NODES:
                raise ValueError(
                    f"its trees hold over {MAX_TREE_NODES:,} nodes or a row walks over "
                    f"{trees.MAX_PATH_NODES:,} of them (at {where}); use fewer or shallower trees"
                )


def _check_estimator(
    obj: Any, where: str, n_features: Any, also: frozenset[type] = frozenset()
) -> None:
    reviewed = type(obj) in classes(REVIEWED) or type(obj) in also
    if not (reviewed or class_name(obj).startswith("sklearn.linear_model.")):
        raise ValueError(
            f"it holds a {type(obj).__name__} (at {where}), whose stored arrays fairengine "
            "cannot check; use a linear model or a tree ensemble of scikit-learn"
        )
    width = getattr(obj, "n_features_in_", None)
    if width is not None and (type(width) is not int or width != n_features or width < 1):
        raise ValueError(f"{where}.n_features_in_ is {width!r}, not the model's {n_features!r}")
    if hasattr(obj, "coef_") and hasattr(obj, "intercept_"):
        coef, intercept = np.asarray(obj.coef_), np.asarray(obj.intercept_)
        rows = 1 if coef.ndim == 1 else coef.shape[0]
        if (
            coef.dtype.kind not in "fiu"
            or coef.ndim not in (1, 2)
            or coef.shape[-1] != width
            or intercept.dtype.kind not in "fiu"
            or intercept.size not in (1, rows)
            or not (np.all(np.isfinite(coef)) and np.all(np.isfinite(intercept)))
        ):
            raise ValueError(
                f"{where} has coefficients of shape {coef.shape} and intercepts of shape "
                f"{intercept.shape}, not finite numbers for its {width} features"
            )
    gradient_boosting = _class("sklearn.ensemble.GradientBoostingRegressor")
    if type(obj) is gradient_boosting and hasattr(obj, "estimators_"):
        stages = obj.estimators_  # scikit-learn adds stage k's tree into column k unchecked
        if not (isinstance(stages, np.ndarray) and stages.ndim == 2 and stages.shape[1] == 1):
            raise ValueError(f"{where}.estimators_ is not one column of trees")


def _finite_split(threshold: np.ndarray) -> np.ndarray:
    """A threshold of +inf sends every number left and missing values by the node's flag (the
    split on missing values scikit-learn writes): checked as the largest finite number, which
    routes the same way."""
    threshold = np.asarray(threshold, dtype=float)
    return np.where(threshold == np.inf, np.finfo(float).max, threshold)


def _check_tree(tree: Any, n_features: int) -> tuple[int, np.ndarray]:
    """(nodes, depths) of ``tree`` (a ``Tree`` or a ``TreePredictor``) once it walks rows of
    ``n_features`` columns within its nodes and the depth limits of
    :func:`fairengine.models.trees.check_structure`; raises ValueError."""
    if type(tree) is _class(TRUSTED_TYPES[0]):  # a Tree's nodes are read up to node_count
        if not 1 <= tree.node_count <= tree.capacity:
            raise ValueError(f"{tree.node_count} nodes declared, {tree.capacity} stored")
        arrays = {
            "left": tree.children_left,
            "right": tree.children_right,
            "feature": tree.feature,
            "threshold": _finite_split(tree.threshold),
            "value": tree.value.reshape(tree.node_count, -1),
        }
        depths = trees.check_arrays(arrays, min(n_features, tree.n_features))
        if depths[0] > tree.max_depth:  # decision_path allocates max_depth + 1 a row
            raise ValueError(f"deeper than its max_depth {tree.max_depth}")
        return tree.node_count, depths
    from sklearn.ensemble._hist_gradient_boosting.common import PREDICTOR_RECORD_DTYPE

    nodes = tree.nodes
    if (
        not isinstance(nodes, np.ndarray)
        or nodes.ndim != 1
        or nodes.dtype != PREDICTOR_RECORD_DTYPE
    ):
        raise ValueError("its nodes are not a list of HistGradientBoosting node records")
    leaf = nodes["is_leaf"] != 0
    arrays = {
        "left": np.where(leaf, -1, nodes["left"].astype(np.int64)),
        "right": np.where(leaf, -1, nodes["right"].astype(np.int64)),
        "feature": nodes["feature_idx"],
        "threshold": _finite_split(nodes["num_threshold"]),
        "value": nodes["value"],
    }
    depths = trees.check_arrays(arrays, n_features)
    if np.any(~leaf & (nodes["is_categorical"] != 0)):  # read through the preprocessor's maps
        raise ValueError("a categorical split (fairengine encodes categories before fitting)")
    return len(nodes), depths
