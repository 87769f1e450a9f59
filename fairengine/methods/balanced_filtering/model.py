"""The exportable filter: proxy (tree or baseline classifier) + rho, as JSON + arrays; and its
scores on a split with the shared metrics."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from fairengine import metrics
from fairengine.data import Task
from fairengine.data.encoding import FeatureEncoder
from fairengine.methods.balanced_filtering.definitions import conditional_distribution_matrix
from fairengine.methods.balanced_filtering.oblique import tree_leaf_weights
from fairengine.methods.balanced_filtering.proxies import classifier_labels, interpolated_weights
from fairengine.methods.balanced_filtering.sampling import filter_rows, filtered_distribution
from fairengine.methods.balanced_filtering.schema import SCHEMA
from fairengine.models.base import Arrays, Model, State, register_model

_TREE_KEYS = ("children", "start", "count", "blend", "share", "coefs", "intercepts")
_CLASSIFIER_KEYS = {
    0: ("kind", "coef", "intercept"),
    1: ("kind", "left", "right", "feature", "threshold", "label"),
}


def soft_matrix(weights: np.ndarray, z: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """(A, r_hat) of a randomised proxy from its leaf weights (rows, leaves) (soft A)."""
    rows, leaves = np.nonzero(weights > 0)
    return conditional_distribution_matrix(
        leaves, z[rows], n_groups, n_leaves=weights.shape[1], sample_weight=weights[rows, leaves]
    )


@register_model
class ProxyFilter(Model):
    """A fitted balanced filter: raw rows in, acceptance probabilities / accept flags out.

    Parameters
    ----------
    encoder : FeatureEncoder
    proxy : {"tree", "classifier"}
    arrays : dict of ndarray
        The proxy's arrays (see ``ObliqueTree.arrays`` and ``fit_classifier_proxy``).
    rho : ndarray (l,)
        Acceptance probability of each leaf.
    eta : float
        Interpolation of classifier proxies (ignored for trees).
    A, r_hat, base_rates : ndarray, optional
        What the fit saw, kept for display: training-time conditional matrix, leaf masses and
        base rates.
    group_names : list of str, optional
        The groups' names.
    """

    model_type = "balanced_filter"
    state_schema = SCHEMA
    randomized = True  # predict draws (seeded by random_state)
    predicts_target = False  # a data filter: no shared classifier metrics
    kind = "classification"
    card_meaning = (
        "`prediction` is an accept flag of the balanced data filter (1 = keep the row), drawn "
        "at random; `probability` (`--proba`, `predict_score`) is the row's acceptance "
        "probability. It is a data filter, not a prediction of {target}."
    )

    def __init__(
        self,
        encoder: FeatureEncoder,
        proxy: str,
        arrays: dict[str, np.ndarray],
        rho: np.ndarray,
        *,
        eta: float = 0.0,
        A: np.ndarray | None = None,
        r_hat: np.ndarray | None = None,
        base_rates: np.ndarray | None = None,
        group_names: list[str] | None = None,
    ) -> None:
        super().__init__(encoder)
        if proxy not in ("tree", "classifier"):
            raise ValueError(f"unknown proxy type {proxy!r}")
        self.proxy = proxy
        self.arrays = {k: np.asarray(v) for k, v in arrays.items()}
        self.rho = np.asarray(rho, dtype=float)
        self.eta = float(eta)
        # the display arrays of the fit (empty when not given)
        n = len(self.rho)
        self.A = np.zeros((n, 0)) if A is None else np.asarray(A, float)
        self.r_hat = np.zeros(n) if r_hat is None else np.asarray(r_hat, float)
        self.base_rates = np.zeros(0) if base_rates is None else np.asarray(base_rates, float)
        self.group_names = list(group_names or [])

    @property
    def n_leaves(self) -> int:
        return len(self.rho)

    def leaf_weights_encoded(self, Z: np.ndarray) -> np.ndarray:
        if self.proxy == "tree":
            return tree_leaf_weights(self.arrays, Z)
        labels = classifier_labels(self.arrays, Z)
        return interpolated_weights(labels, self.n_leaves, self.eta)

    def leaf_weights(self, X: Any) -> np.ndarray:
        """P(zhat(x) = L): (rows, leaves), each row summing to 1."""
        return self.leaf_weights_encoded(self.encode(X))

    def leaf(self, X: Any, random_state: int | None = 0) -> np.ndarray:
        """One proxy group per row, drawn from ``leaf_weights`` (seeded)."""
        weights = self.leaf_weights(X)
        u = np.random.default_rng(random_state).random(len(weights))[:, None]
        return np.minimum((np.cumsum(weights, axis=1) < u).sum(axis=1), self.n_leaves - 1)

    def _score(self, Z: np.ndarray) -> np.ndarray:
        return np.clip(self.leaf_weights_encoded(Z) @ self.rho, 0.0, 1.0)

    def metric_predictions(self, X: Any) -> np.ndarray:
        return self.predict_score(X)

    def predict(self, X: Any, random_state: int | None = 0) -> np.ndarray:
        """Accept flags (0/1) of Algorithm 2 with a seeded generator."""
        return filter_rows(self.leaf_weights(X), self.rho, random_state).astype(np.int64)

    def filter(self, X: pd.DataFrame, random_state: int | None = 0) -> pd.DataFrame:
        """The accepted rows of ``X``."""
        keep = self.predict(X, random_state).astype(bool)
        return X.iloc[np.nonzero(keep)[0]] if hasattr(X, "iloc") else np.asarray(X)[keep]

    def _state(self) -> State:
        keys = _TREE_KEYS if self.proxy == "tree" else _CLASSIFIER_KEYS[int(self.arrays["kind"])]
        if self.proxy == "classifier" and "label_map" in self.arrays:  # rare groups merged
            keys = (*keys, "label_map")
        arrays = {f"proxy_{k}": self.arrays[k] for k in keys}
        arrays.update({"rho": self.rho, "A": self.A, "r_hat": self.r_hat})
        arrays["base_rates"] = self.base_rates
        meta = {"proxy": self.proxy, "eta": self.eta, "group_names": self.group_names}
        return meta, arrays

    @classmethod
    def _from_state(cls, encoder: FeatureEncoder, meta: dict[str, Any], arrays: Arrays) -> Model:
        proxy_arrays = {k[6:]: v for k, v in arrays.items() if k.startswith("proxy_")}
        return cls(
            encoder,
            str(meta["proxy"]),
            proxy_arrays,
            arrays["rho"],
            eta=float(meta["eta"]),
            A=arrays["A"],
            r_hat=arrays["r_hat"],
            base_rates=arrays["base_rates"],
            group_names=[str(g) for g in meta["group_names"]],
        )


def split_metrics(
    model: ProxyFilter, X: pd.DataFrame, z: np.ndarray, target: np.ndarray | None = None
) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """Metrics and the split's own A, r_hat, proportions before/after (expected, soft weights).

    Disclosivity uses the split's own base rates (pitfall P12). When no row of the split can be
    accepted (every row falls in leaves with rho = 0: with tiny leaves, q may put all its mass on
    a leaf no held-out row reaches) the filtered sample is empty: its imbalance and proportions
    are NaN and the acceptance rate 0.
    """
    weights = model.leaf_weights(X)
    rows, leaves = np.nonzero(weights > 0)
    pi = np.clip(weights @ model.rho, 0.0, 1.0)
    empty = not pi.sum() > 0
    values = {
        "disclosivity": metrics.disclosivity(
            None, leaves, z[rows], sample_weight=weights[rows, leaves]
        ),
        "imbalance": math.nan
        if empty
        else metrics.imbalance(None, None, z, sample_weight=pi, target=target),
        "acceptance_rate": metrics.acceptance_rate(None, pi, z),
        "n_leaves": metrics.n_leaves(model),
    }
    n_groups = len(model.base_rates)
    A, r_hat = soft_matrix(weights, z, n_groups)
    tables = {
        "A": A,
        "r_hat": r_hat,
        "proportions_before": np.bincount(z, minlength=n_groups) / len(z),
        "proportions_after": np.full(n_groups, np.nan)
        if empty
        else filtered_distribution(A, r_hat, model.rho),
        "acceptance": pi,
        # expected rows of each group in the filtered sample (the vanished-group check)
        "filtered_counts": np.bincount(z, weights=pi, minlength=n_groups),
    }
    return values, tables


def task_split_metrics(model: ProxyFilter, task: Task, target=None):
    """:func:`split_metrics` on a Task's features and groups."""
    return split_metrics(model, task.X, np.asarray(task.groups, dtype=np.int64), target)
