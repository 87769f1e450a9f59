"""Exact metrics of the randomized predictor Q on a split.

Every number is an expectation over Q computed from the per-predictor values — never from one
sampled prediction and never from the averaged prediction. The losses are
:func:`fairengine.metrics.scaled_loss` and its per-group form, on targets scaled to [0, 1].
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from fairengine import metrics
from fairengine.methods.fair_regression.estimator import FairRegressor

#: Thresholds kept in the plotted CDF table (a BGL or unbinned mixture has one
#: threshold per distinct prediction, i.e. per row; the KS point itself is always kept).
MAX_CDF_POINTS = 500


def split_metrics(
    regressor: FairRegressor,
    Z: np.ndarray,
    y: np.ndarray,
    codes: np.ndarray,
    n_groups: int,
) -> tuple[dict[str, float], np.ndarray]:
    """``scaled_loss``, ``sp_ks``, ``scaled_max_group_loss`` of Q on one split (the method's own
    metrics, on the [0, 1]-scaled target; the shared evaluation adds ``loss`` / ``max_group_loss``
    in the target's units), and the group losses."""
    target = np.clip(regressor.scale(y), 0.0, 1.0)
    values, q, loss = regressor.component_predictions(Z), regressor.weights_, regressor.loss
    group = metrics.scaled_group_losses(values, q, target, codes, loss, n_groups)
    return {
        "scaled_loss": metrics.scaled_loss(values, q, target, codes, loss),
        "sp_ks": regressor.ks_disparity(Z, codes),
        "scaled_max_group_loss": metrics.scaled_max_group_loss(group, codes),
    }, group


def deterministic_metrics(
    pred: np.ndarray, y: np.ndarray, codes: np.ndarray, loss: str, n_groups: int
) -> tuple[dict[str, float], np.ndarray]:
    """The same metrics for one deterministic predictor on the [0, 1] scale (a baseline)."""
    values, q = pred[:, None], np.ones(1)
    group = metrics.scaled_group_losses(values, q, y, codes, loss, n_groups)
    return {
        "scaled_loss": metrics.scaled_loss(values, q, y, codes, loss),
        "sp_ks": metrics.sp_ks(None, pred, codes),
        "scaled_max_group_loss": metrics.scaled_max_group_loss(group, codes),
    }, group


def cdf_table(
    regressor: FairRegressor,
    Z: np.ndarray,
    codes: np.ndarray,
    names: list[str],
) -> tuple[pd.DataFrame, dict[str, object]]:
    """Long table (group, threshold, cdf) of the exact mixture CDFs with an ``overall`` row per
    threshold, and where the KS gap is attained (group, threshold, gap).

    The KS point is computed on every distinct threshold; the table (for the chart only) keeps
    at most :data:`MAX_CDF_POINTS` of them, evenly spread in rank plus the KS point, so a
    result stays small however many rows a split has."""
    t, group_cdf, overall = regressor.group_cdfs(Z, codes)
    diff = np.abs(group_cdf - overall)
    a, j = np.unravel_index(int(np.argmax(diff)), diff.shape)
    shown = _thin(len(t), int(j))
    frames = [
        pd.DataFrame({"group": name, "threshold": t[shown], "cdf": group_cdf[g][shown]})
        for g, name in enumerate(names)
        if g < len(group_cdf)
    ]
    frames.append(pd.DataFrame({"group": "overall", "threshold": t[shown], "cdf": overall[shown]}))
    ks = {
        "group": names[a],
        "threshold": float(t[j]),
        "gap": float(diff[a, j]),
        "group_cdf": float(group_cdf[a, j]),
        "overall_cdf": float(overall[j]),
    }
    return pd.concat(frames, ignore_index=True), ks


def _thin(n: int, keep: int) -> np.ndarray:
    """At most :data:`MAX_CDF_POINTS` threshold positions of ``n``, evenly spread, with ``keep``."""
    if n <= MAX_CDF_POINTS:
        return np.arange(n)
    spread = np.linspace(0, n - 1, MAX_CDF_POINTS - 1).round().astype(int)
    return np.union1d(spread, [keep])
