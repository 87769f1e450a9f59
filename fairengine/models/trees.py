"""scikit-learn decision trees as plain arrays (exportable without pickle), predicting exactly as
``DecisionTree*.predict`` does.

Design notes: docs/howto/export.md, "Trees as arrays".
"""

from __future__ import annotations

from typing import Any

import numpy as np

Arrays = dict[str, np.ndarray]

#: Deepest tree read from a file, and most nodes one row may visit across all the trees of a
#: model (the sum of their depths): a row's prediction walks one path per tree, so this bounds
#: the work per row. Real forests stay well below both (``bench/bench_untrusted.py`` records
#: unlimited forests on the bundled data); a forged chain of nodes does not.
MAX_TREE_DEPTH = 256
MAX_PATH_NODES = 50_000


def _tree(model: Any) -> Any:
    return getattr(model, "tree_", model)


def tree_arrays(model: Any) -> Arrays:
    """One fitted tree (a ``DecisionTree*`` or its ``tree_``) as arrays: ``left``, ``right``,
    ``feature``, ``threshold`` and ``value`` (node_count, n_outputs · n_classes)."""
    return forest_arrays([model])


def forest_arrays(models: list[Any]) -> Arrays:
    """Several fitted trees as one set of arrays (see the module notes)."""
    trees = [_tree(m) for m in models]
    sizes = np.array([t.node_count for t in trees], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)

    def shifted(children: str) -> np.ndarray:
        return np.concatenate(
            [
                np.where(getattr(t, children) >= 0, getattr(t, children) + o, -1)
                for t, o in zip(trees, offsets, strict=True)
            ]
        ).astype(np.int64)

    return {
        "roots": offsets,
        "left": shifted("children_left"),
        "right": shifted("children_right"),
        "feature": np.concatenate([t.feature for t in trees]).astype(np.int64),
        "threshold": np.concatenate([t.threshold for t in trees]).astype(np.float64),
        "value": np.concatenate([t.value.reshape(t.node_count, -1) for t in trees]).astype(float),
    }


def apply(arrays: Arrays, X: Any) -> np.ndarray:
    """Leaf index of every row in every tree, shape (n, n_trees) (global node indices).

    Each tested cell is compared as scikit-learn's ``predict`` compares it: converted to float32,
    then to float64. A numeric array is converted only where a node reads it, and only rows still
    in an inner node are walked, so a wide 0/1 (e.g. uint8) matrix is scored without a float copy
    of every cell; other inputs (frames, lists) are converted to float32 first."""
    if not (isinstance(X, np.ndarray) and X.dtype.kind in "biuf"):
        X = np.asarray(X, dtype=np.float32)
    left, right = arrays["left"], arrays["right"]
    feature, threshold = arrays["feature"], arrays["threshold"]
    roots = np.asarray(arrays.get("roots", np.zeros(1, np.int64)), dtype=np.int64)
    node = np.broadcast_to(roots[None, :], (len(X), len(roots))).copy()
    flat = node.reshape(-1)  # a view: row i's trees at i * n_trees …
    row_of = np.repeat(np.arange(len(X)), len(roots))
    active = np.arange(flat.size)
    while active.size:
        here = flat[active]
        inner = left[here] >= 0
        active, here = active[inner], here[inner]
        if not active.size:
            break
        values = X[row_of[active], feature[here]].astype(np.float32).astype(np.float64)
        flat[active] = np.where(values <= threshold[here], left[here], right[here])
    return node


def leaf_values(arrays: Arrays, X: Any) -> np.ndarray:
    """``value`` rows of every row's leaf in every tree, shape (n, n_trees, value width)."""
    value = arrays["value"]
    return (value[:, None] if value.ndim == 1 else value)[apply(arrays, X)]


def check_structure(
    left: np.ndarray,
    right: np.ndarray,
    roots: np.ndarray | None = None,
) -> np.ndarray:
    """Raise ValueError unless ``left`` / ``right`` (integer-valued, one entry per node) form
    trees that :func:`apply` walks in at most one step per node, none deeper than
    :data:`MAX_TREE_DEPTH` and together no deeper than :data:`MAX_PATH_NODES`; returns the
    depth of each tree. ``roots`` (default: node 0): each tree's first node (see
    docs/howto/export.md, "Trees as arrays", for the rules)."""
    n = len(left)
    if len(right) != n:
        raise ValueError(f"{len(left)} left but {len(right)} right children")
    if n == 0:
        raise ValueError("a tree with no nodes")
    for children in (left, right):
        if not np.array_equal(children, np.round(children)):
            raise ValueError("child indices that are not whole numbers")
    left, right = np.asarray(left, dtype=np.int64), np.asarray(right, dtype=np.int64)
    leaf = left == -1
    if not np.array_equal(leaf, right == -1):
        raise ValueError("a node with one child")
    nodes = np.arange(n)
    inner = ~leaf
    if np.any((left[inner] <= nodes[inner]) | (right[inner] <= nodes[inner])) or np.any(
        (left[inner] >= n) | (right[inner] >= n)
    ):
        raise ValueError("a child index before its parent or past the last node")
    children = np.concatenate([left[inner], right[inner]])
    if np.bincount(children, minlength=n).max(initial=0) > 1:
        raise ValueError("a node with two parents")
    roots = np.zeros(1, np.int64) if roots is None else np.asarray(roots)
    if roots.ndim != 1 or not np.array_equal(roots, np.round(roots)):
        raise ValueError("roots that are not node indices")
    roots = roots.astype(np.int64)
    if np.any((roots < 0) | (roots >= n)) or len(np.unique(roots)) != len(roots):
        raise ValueError("roots out of range or repeated")
    is_child = np.zeros(n, dtype=bool)
    is_child[children] = True
    if np.any(is_child[roots]):
        raise ValueError("a root that is another node's child")
    return _depths(left, right, roots)


def _depths(left: np.ndarray, right: np.ndarray, roots: np.ndarray) -> np.ndarray:
    """Depth of each tree (whose structure passed :func:`check_structure`); ValueError past
    the limits, found within :data:`MAX_TREE_DEPTH` + 1 levels."""
    depths = np.zeros(len(roots), dtype=np.int64)
    level, tree = roots, np.arange(len(roots))
    for depth in range(1, MAX_TREE_DEPTH + 2):
        inner = left[level] != -1
        level, tree = level[inner], tree[inner]
        if not level.size:
            break
        if depth > MAX_TREE_DEPTH:
            raise ValueError(f"a tree deeper than {MAX_TREE_DEPTH} levels")
        depths[tree] = depth
        level, tree = np.concatenate([left[level], right[level]]), np.concatenate([tree, tree])
    if depths.sum() > MAX_PATH_NODES:
        raise ValueError(
            f"trees whose depths add up to {int(depths.sum()):,} nodes a row walks; the limit "
            f"is {MAX_PATH_NODES:,}"
        )
    return depths


def check_arrays(arrays: Arrays, n_features: int) -> np.ndarray:
    """Raise ValueError unless the codec's arrays (see :func:`forest_arrays`; ``value`` and
    ``roots`` optional) describe trees :func:`apply` can walk on ``n_features`` columns: the
    structure and depths of :func:`check_structure`, equal lengths, every inner node testing a
    feature below ``n_features`` against a finite threshold, finite values. Returns the depth
    of each tree."""
    left, right = arrays["left"], arrays["right"]
    feature, threshold = arrays["feature"], arrays["threshold"]
    n = len(left)
    if any(np.ndim(a) != 1 or len(a) != n for a in (right, feature, threshold)):
        raise ValueError("node arrays of different lengths")
    depths = check_structure(left, right, arrays.get("roots"))
    inner = np.asarray(left) != -1
    f = np.asarray(feature)[inner]
    if not np.array_equal(f, np.round(f)) or np.any((f < 0) | (f >= n_features)):
        raise ValueError(f"an inner node tests a feature outside 0 … {n_features - 1}")
    if not np.all(np.isfinite(np.asarray(threshold, dtype=float)[inner])):
        raise ValueError("an inner node with a threshold that is not a finite number")
    if "value" in arrays:
        value = np.asarray(arrays["value"])
        if len(value) != n or not np.all(np.isfinite(value)):
            raise ValueError("leaf values that are not one finite row per node")
    return depths
