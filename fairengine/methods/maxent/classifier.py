"""The downstream classifier of the paper's evaluation, stored as plain arrays (no pickle).

Seed 001 §5 trains a decision tree (gini, ``random_state=0``) or Gaussian naive Bayes on the
generated data. Both are fitted with scikit-learn and kept as arrays, so a model file can rebuild
them and predict exactly as scikit-learn does (trees through :mod:`fairengine.models.trees`).
"""

from __future__ import annotations

import numpy as np

from fairengine.models import trees

CLASSIFIERS = ("tree", "gnb")
#: dtype of the 0/1 inputs each classifier is fitted on: scikit-learn's trees work in float32
#: (a float64 matrix would be copied to float32), Gaussian naive Bayes in float64.
INPUT_DTYPE = {"tree": np.float32, "gnb": np.float64}
#: Input cells scored at a time (bounds the float copies of a block of rows).
_SCORE_CELLS = 1 << 20

Params = dict[str, np.ndarray]


def fit_classifier(
    kind: str,
    X: np.ndarray,
    y: np.ndarray,
    sample_weight: np.ndarray | None = None,  # noqa: N803
) -> Params:
    """Fit a decision tree (``"tree"``) or Gaussian naive Bayes (``"gnb"``); return its arrays."""
    from sklearn.naive_bayes import GaussianNB
    from sklearn.tree import DecisionTreeClassifier

    y = np.asarray(y, dtype=np.int64)
    if len(np.unique(y)) < 2:  # one class only: a constant classifier
        return {"constant": np.array([float(y[0]) if len(y) else 0.0])}
    if kind == "tree":
        tree = DecisionTreeClassifier(random_state=0).fit(X, y, sample_weight=sample_weight)
        arrays = trees.tree_arrays(tree)  # the shared codec (one tree: no "roots" stored)
        value = arrays.pop("value")
        del arrays["roots"]
        return {**arrays, "prob": value[:, 1] / value.sum(axis=1)}
    if kind == "gnb":
        gnb = GaussianNB().fit(X, y, sample_weight=sample_weight)
        return {"mean": gnb.theta_, "var": gnb.var_, "log_prior": np.log(gnb.class_prior_)}
    raise ValueError(f"classifier must be one of {CLASSIFIERS}, got {kind!r}.")


def classifier_scores(params: Params, X: np.ndarray) -> np.ndarray:  # noqa: N803
    """P(y = 1 | x) of a classifier stored by :func:`fit_classifier`.

    ``X`` may hold the 0/1 inputs in any numeric dtype (uint8 keeps a split small); rows are
    scored a block at a time, each converted as the classifier reads it (float32 → float64 for
    a tree, as scikit-learn; float64 for naive Bayes), so scoring makes no full-size copy."""
    if "constant" in params:
        return np.full(len(X), float(params["constant"][0]))
    X = np.asarray(X)  # noqa: N806
    step = max(256, _SCORE_CELLS // max(X.shape[1] if X.ndim == 2 else 1, 1))
    return np.concatenate(
        [_block_scores(params, X[lo : lo + step]) for lo in range(0, len(X), step)]
        or [np.zeros(0)]
    )


def _block_scores(params: Params, X: np.ndarray) -> np.ndarray:  # noqa: N803
    if "left" in params:  # the shared codec reads only the cells its nodes test (uint8 stays)
        return params["prob"][trees.apply(params, X)[:, 0]]
    X = np.asarray(X, dtype=float)  # noqa: N806
    mean, var = params["mean"], params["var"]
    joint = params["log_prior"] - 0.5 * (
        np.log(2 * np.pi * var).sum(axis=1)
        + (((X[:, None, :] - mean[None]) ** 2) / var[None]).sum(axis=2)
    )
    return np.exp(joint[:, 1] - np.logaddexp(joint[:, 0], joint[:, 1]))
