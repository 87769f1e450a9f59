"""The paper's baseline proxies: classifiers of z from x, hard labels as proxy groups.

Design notes: ``docs/methods/balanced_filtering.md``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from fairengine.models import trees

if TYPE_CHECKING:  # for annotations: the algorithm loads on a run
    from sklearn.tree import DecisionTreeClassifier

#: proxy names: (alpha, beta) tree, and naive / QP over logistic regression and a decision tree
PROXIES = ("ab", "qp_dt", "qp_lr", "naive_dt", "naive_lr")


def fit_classifier_proxy(
    kind: str,
    Z: np.ndarray,
    z: np.ndarray,
    n_groups: int,
    random_state: int = 0,
    min_samples_leaf: int = 20,
) -> dict[str, np.ndarray]:
    """Fit a multinomial logistic regression (``"lr"``) or decision tree (``"dt"``) for z.

    Defaults [EXT] (the paper gives none): ``LogisticRegression(max_iter=1000)``,
    ``DecisionTreeClassifier(min_samples_leaf=20)``. Proxy range = the K groups.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.tree import DecisionTreeClassifier
    from threadpoolctl import threadpool_limits

    if kind == "lr":
        with threadpool_limits(limits=1, user_api="blas"):
            model = LogisticRegression(max_iter=1000).fit(Z, z)
        coef = np.zeros((n_groups, Z.shape[1]))
        intercept = np.full(n_groups, -np.inf)
        if len(model.classes_) == 2:  # binary: one score for class 1 vs class 0
            coef[model.classes_[1]] = model.coef_[0]
            intercept[model.classes_[1]] = model.intercept_[0]
            intercept[model.classes_[0]] = 0.0
        else:
            coef[model.classes_] = model.coef_
            intercept[model.classes_] = model.intercept_
        intercept = np.where(np.isfinite(intercept), intercept, -1e300)
        return {"kind": np.array(0), "coef": coef, "intercept": intercept}
    if kind == "dt":
        model = DecisionTreeClassifier(
            min_samples_leaf=min_samples_leaf, random_state=random_state
        ).fit(Z, z)
        return tree_proxy_arrays(model)
    raise ValueError(f"unknown classifier proxy {kind!r}")


def tree_proxy_arrays(model: DecisionTreeClassifier) -> dict[str, np.ndarray]:
    """A fitted decision-tree proxy as arrays: the shared codec's nodes
    (:func:`fairengine.models.trees.tree_arrays`) plus each node's predicted group ``label``
    (the argmax of its class distribution, as ``DecisionTreeClassifier.predict``)."""
    arrays = trees.tree_arrays(model)
    label = np.asarray(model.classes_)[np.argmax(arrays["value"], axis=1)].astype(np.int64)
    return {
        "kind": np.array(1),
        **{key: arrays[key] for key in ("left", "right", "feature", "threshold")},
        "label": label,
    }


def merge_rare_labels(
    arrays: dict[str, np.ndarray], labels: np.ndarray, n_groups: int, min_mass: float
) -> dict[str, np.ndarray]:
    """Map predicted groups holding less than ``min_mass`` of the training rows to the most
    frequent predicted group (stored as ``label_map``).

    The same minimum leaf mass as the (alpha, beta) tree [EXT]: without it a classifier that
    predicts a group for a handful of rows makes naive/QP sampling keep almost nothing
    (rho of every other group -> 0), a degenerate point the paper's curves never show.
    """
    mass = np.bincount(labels, minlength=n_groups) / max(len(labels), 1)
    label_map = np.arange(n_groups)
    rare = (mass > 0) & (mass < min_mass)
    label_map[rare] = int(np.argmax(mass))
    return {**arrays, "label_map": label_map}


def classifier_labels(arrays: dict[str, np.ndarray], Z: np.ndarray) -> np.ndarray:
    """The proxy's predicted group per row (after ``label_map``, if the proxy has one)."""
    labels = _raw_labels(arrays, Z)
    return arrays["label_map"][labels] if "label_map" in arrays else labels


def _raw_labels(arrays: dict[str, np.ndarray], Z: np.ndarray) -> np.ndarray:
    if int(arrays["kind"]) == 0:
        return np.argmax(Z @ arrays["coef"].T + arrays["intercept"], axis=1)
    # the one scikit-learn tree walk (float32 features, as DecisionTreeClassifier.predict)
    return arrays["label"][trees.apply(arrays, Z)[:, 0]]


def interpolated_weights(labels: np.ndarray, n_leaves: int, eta: float) -> np.ndarray:
    """P(zhat_eta = j | x): keep the label with probability 1 - eta, else uniform (App. A.1.1)."""
    weights = np.full((len(labels), n_leaves), eta / n_leaves)
    weights[np.arange(len(labels)), labels] += 1.0 - eta
    return weights


def naive_rho(r_hat: np.ndarray) -> np.ndarray:
    """Naive sampling: the same number of points from each non-empty predicted group,
    q_j = 1 / l', rho_j proportional to 1 / r_hat_j, scaled to max 1."""
    rho = np.where(r_hat > 0, 1.0 / np.maximum(r_hat, 1e-300), 0.0)
    return rho / rho.max()
