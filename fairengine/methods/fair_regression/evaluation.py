"""Exact metrics of the randomized predictor Q on a split.

Every number is an expectation over Q computed from the per-predictor values — never from one
sampled prediction and never from the averaged prediction. Losses use the engine's
:func:`fairengine.metrics.loss` on targets scaled to [0, 1]: ``square`` = (y − u)² (no 1/2),
``absolute``, and for the logistic loss the log loss of p = σ(C(2u − 1)) (the paper's reported
metric).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import expit

from fairengine import metrics
from fairengine.methods.fair_regression.estimator import FairRegressor
from fairengine.methods.fair_regression.losses import LOGISTIC_C

METRIC_LOSS = {"square": "square", "absolute": "absolute", "logistic": "log"}
#: Thresholds kept in the plotted CDF table (a BGL or unbinned mixture has one
#: threshold per distinct prediction, i.e. per row; the KS point itself is always kept).
MAX_CDF_POINTS = 500


def _metric_values(values: np.ndarray, loss: str) -> np.ndarray:
    return expit(LOGISTIC_C * (2 * values - 1)) if loss == "logistic" else values


def mixture_losses(
    values: np.ndarray,
    weights: np.ndarray,
    y: np.ndarray,
    codes: np.ndarray,
    loss: str,
    n_groups: int,
) -> tuple[float, np.ndarray]:
    """(overall loss, per-group losses) of the mixture Σ q_t f_t, values of shape (n, T)."""
    name = METRIC_LOSS[loss]
    overall, group = 0.0, np.zeros(n_groups)
    for q, column in zip(weights, values.T, strict=True):
        pred = _metric_values(column, loss)
        overall += q * metrics.loss(y, pred, codes, loss=name)
        for a in range(n_groups):
            mask = codes == a
            if mask.any():
                group[a] += q * metrics.loss(y[mask], pred[mask], loss=name)
    return float(overall), group


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
    values = regressor.component_predictions(Z)
    overall, group = mixture_losses(
        values, regressor.weights_, target, codes, regressor.loss, n_groups
    )
    present = np.bincount(codes, minlength=n_groups) > 0
    return {
        "scaled_loss": overall,
        "sp_ks": regressor.sp_ks(Z, codes),
        "scaled_max_group_loss": float(group[present].max()),
    }, group


def deterministic_metrics(
    pred: np.ndarray, y: np.ndarray, codes: np.ndarray, loss: str, n_groups: int
) -> tuple[dict[str, float], np.ndarray]:
    """The same metrics for one deterministic predictor on the [0, 1] scale (a baseline)."""
    overall, group = mixture_losses(pred[:, None], np.ones(1), y, codes, loss, n_groups)
    present = np.bincount(codes, minlength=n_groups) > 0
    return {
        "scaled_loss": overall,
        "sp_ks": metrics.sp_ks(None, pred, codes),
        "scaled_max_group_loss": float(group[present].max()),
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
