"""Multiaccurate proxies' metrics (Diana et al. 2022): two-sided group gaps of a downstream
classifier (on the true groups, or through a proxy's soft memberships), the multiaccuracy
violation of a proxy's audit, and how well a proxy predicts one group."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from fairengine.metrics.classification import accuracy

if TYPE_CHECKING:
    import pandas as pd


def normalised(weights: np.ndarray) -> np.ndarray:
    """Soft group weights (n,) or (n, K), each column scaled to sum 1 (an empty group: 0)."""
    weights = np.asarray(weights, float)
    weights = weights[:, None] if weights.ndim == 1 else weights
    totals = weights.sum(axis=0)
    # a group the proxy leaves empty (Σ ẑ_k ≤ 0) has no defined rate: weight 0, gap 0
    return np.where(totals > 1e-12, weights / np.where(totals > 1e-12, totals, 1.0), 0.0)


def group_gaps(
    soft_groups: np.ndarray, y: np.ndarray, score: np.ndarray, constraint: str
) -> np.ndarray:
    """γ_k − γ per group for predictions ``score`` = P(h = 1) (exact for a randomized h).

    ``constraint`` "demographic_parity": γ_k = Σ_i Ẑ_ik h(x_i) / Σ_i Ẑ_ik, γ = mean h;
    "equal_error": the same with the expected error 1[h(x_i) ≠ y_i] (Eq. (4)). ``soft_groups``
    are memberships (one-hot for true groups, a proxy's probabilities otherwise); a group
    without mass has gap 0.
    """
    score, y = np.asarray(score, float), np.asarray(y, float)
    stat = score if constraint == "demographic_parity" else y + score * (1 - 2 * y)
    weights = normalised(soft_groups)
    defined = weights.sum(axis=0) > 0
    return np.where(defined, weights.T @ stat - stat.mean(), 0.0)


def true_group_gap(
    groups_onehot: np.ndarray, y: np.ndarray, score: np.ndarray, constraint: str
) -> float:
    """max_k |γ_k − γ| on the true groups (one-hot ``groups_onehot``), see :func:`group_gaps`."""
    return float(np.max(np.abs(group_gaps(groups_onehot, y, score, constraint))))


def proxy_group_gap(
    soft_groups: np.ndarray, y: np.ndarray, score: np.ndarray, constraint: str
) -> float:
    """max_k |γ_k − γ| through a proxy's soft memberships ẑ, what the downstream learner sees."""
    return float(np.max(np.abs(group_gaps(soft_groups, y, score, constraint))))


def multiaccuracy_violation(table: pd.DataFrame) -> float:
    """Max ratio violation of an audit table (its ``violation`` column, one row per group and
    task; the α the proxy reached, heuristically: the auditor's search is a lower bound)."""
    return float(table["violation"].max()) if len(table) else 0.0


def multiaccuracy_violation_in_sample(table: pd.DataFrame, proxy: Any = None) -> float:
    """The multiaccuracy violation on the rows the proxy was fitted on: for a proxy that keeps
    every region its auditor found during its game (``reached_``; Algorithm 4), the largest
    violation over all of them (``reached_ratio_``), else :func:`multiaccuracy_violation` of the
    audit ``table`` of those rows."""
    if hasattr(proxy, "reached_"):
        return proxy.reached_ratio_
    return multiaccuracy_violation(table)


def multiaccuracy_violation_held_out(table: pd.DataFrame) -> float:
    """:func:`multiaccuracy_violation` of the audit of rows the proxy never saw."""
    return multiaccuracy_violation(table)


def proxy_accuracy(z: np.ndarray, zhat: np.ndarray) -> float:
    """Accuracy of 1[ẑ > 0.5] as a prediction of one group's membership z (0/1)."""
    z, zhat = np.asarray(z, float), np.asarray(zhat, float)
    return accuracy(z, (zhat > 0.5).astype(float))


def proxy_auc(z: np.ndarray, zhat: np.ndarray) -> float:
    """Area under the ROC curve of ẑ for one group's membership z; NaN when z is constant."""
    from sklearn.metrics import roc_auc_score  # lazy: metric names load without scikit-learn

    z, zhat = np.asarray(z, float), np.asarray(zhat, float)
    return float(roc_auc_score(z, zhat)) if 0 < z.mean() < 1 else float("nan")


def proxy_mse(z: np.ndarray, zhat: np.ndarray) -> float:
    """Mean (ẑ − z)² of the proxy for one group."""
    z, zhat = np.asarray(z, float), np.asarray(zhat, float)
    return float(np.mean((z - zhat) ** 2))
