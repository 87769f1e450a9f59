"""The downstream classifier of the paper's evaluation, stored as plain arrays (no pickle).

Design notes: ``docs/methods/maxent.md``."""

from __future__ import annotations

import numpy as np

from fairengine.models import trees

CLASSIFIERS = ("small_tree", "logistic", "tree", "gnb")
#: The bounds of the depth-bounded tree: at least as accurate as the constant predictor on the
#: bundled datasets' generated data (bench/bench_maxent.py), where the unbounded tree is not.
SMALL_TREE = {"max_depth": 8, "min_samples_leaf": 100}
#: The classifiers in words (knob help, baseline labels).
CLASSIFIER_WORDS = {
    "logistic": "logistic regression",
    "small_tree": f"decision tree (depth ≤ {SMALL_TREE['max_depth']}, "
    f"≥ {SMALL_TREE['min_samples_leaf']} rows a leaf)",
    "tree": "unbounded decision tree (the paper's protocol)",
    "gnb": "Gaussian naive Bayes",
}
#: dtype of the 0/1 inputs each classifier is fitted on: scikit-learn's trees work in float32
#: (a float64 matrix would be copied to float32), the others in float64.
INPUT_DTYPE = {"tree": np.float32, "small_tree": np.float32, "gnb": np.float64,
               "logistic": np.float64}  # fmt: skip
#: Input cells scored at a time (bounds the float copies of a block of rows).
_SCORE_CELLS = 1 << 20

Params = dict[str, np.ndarray]


def fit_classifier(
    kind: str,
    X: np.ndarray,
    y: np.ndarray,
    sample_weight: np.ndarray | None = None,
) -> Params:
    """Fit one of :data:`CLASSIFIERS` (:data:`CLASSIFIER_WORDS`); return its arrays.

    ``sample_weight``: how many rows each row of ``X`` stands for (distinct rows and their counts
    give the same classifier as every row: the losses and impurities are sums over rows)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import GaussianNB
    from sklearn.tree import DecisionTreeClassifier

    y = np.asarray(y, dtype=np.int64)
    if len(np.unique(y)) < 2:  # one class only: a constant classifier
        return {"constant": np.array([float(y[0]) if len(y) else 0.0])}
    if kind in ("tree", "small_tree"):
        bounds = SMALL_TREE if kind == "small_tree" else {}
        if bounds and sample_weight is not None:  # counts of distinct rows: a leaf's rows
            share = bounds["min_samples_leaf"] / float(np.sum(sample_weight))
            bounds = {"max_depth": bounds["max_depth"], "min_weight_fraction_leaf": share}
        tree = DecisionTreeClassifier(random_state=0, **bounds)
        tree.fit(X, y, sample_weight=sample_weight)
        arrays = trees.tree_arrays(tree)  # the shared codec (one tree: no "roots" stored)
        value = arrays.pop("value")
        del arrays["roots"]
        return {**arrays, "prob": value[:, 1] / value.sum(axis=1)}
    if kind == "logistic":
        model = LogisticRegression(max_iter=1000).fit(X, y, sample_weight=sample_weight)
        return {"coef": model.coef_[0], "intercept": model.intercept_}
    if kind == "gnb":
        gnb = GaussianNB().fit(X, y, sample_weight=sample_weight)
        return {"mean": gnb.theta_, "var": gnb.var_, "log_prior": np.log(gnb.class_prior_)}
    raise ValueError(f"classifier must be one of {CLASSIFIERS}, got {kind!r}.")


def classifier_scores(params: Params, X: np.ndarray) -> np.ndarray:
    """P(y = 1 | x) of a classifier stored by :func:`fit_classifier`, for 0/1 inputs ``X`` of any
    numeric dtype, scored a block of rows at a time (no full-size float copy)."""
    if "constant" in params:
        return np.full(len(X), float(params["constant"][0]))
    X = np.asarray(X)
    step = max(256, _SCORE_CELLS // max(X.shape[1] if X.ndim == 2 else 1, 1))
    return np.concatenate(
        [_block_scores(params, X[lo : lo + step]) for lo in range(0, len(X), step)] or [np.zeros(0)]
    )


def _block_scores(params: Params, X: np.ndarray) -> np.ndarray:
    if "left" in params:  # the shared codec reads only the cells its nodes test (uint8 stays)
        return params["prob"][trees.apply(params, X)[:, 0]]
    X = np.asarray(X, dtype=float)
    if "coef" in params:
        from scipy.special import expit

        return expit(X @ params["coef"] + params["intercept"][0])
    mean, var = params["mean"], params["var"]
    joint = params["log_prior"] - 0.5 * (
        np.log(2 * np.pi * var).sum(axis=1)
        + (((X[:, None, :] - mean[None]) ** 2) / var[None]).sum(axis=2)
    )
    return np.exp(joint[:, 1] - np.logaddexp(joint[:, 0], joint[:, 1]))
