"""Scoring a fitted filter on a split with the shared metrics."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from fairengine import metrics
from fairengine.data import Task
from fairengine.methods.balanced_filtering.estimator import soft_matrix
from fairengine.methods.balanced_filtering.model import ProxyFilter
from fairengine.methods.balanced_filtering.sampling import filtered_distribution


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
