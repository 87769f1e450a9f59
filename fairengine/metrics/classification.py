"""Classification metrics: accuracy, error and the group rate gaps and ratios of a (randomized)
0/1 prediction."""

from __future__ import annotations

import numpy as np

from fairengine.metrics.core import (
    _check_unit,
    _classification,
    _correct,
    _group_means,
    _prepare,
    _ratio,
    _Rows,
    _spread,
    rate_base,
)


def accuracy(y_true, y_pred, groups=None, *, sample_weight=None) -> float:
    """Weighted accuracy sum_i w_i P(y_hat_i = y_i) / sum_i w_i (``groups`` only checked)."""
    rows = _classification(y_true, y_pred, groups, sample_weight)
    return float(np.average(_correct(rows), weights=rows.weight))


def error(y_true, y_pred, groups=None, *, sample_weight=None) -> float:
    """Weighted error rate, 1 - accuracy."""
    return 1.0 - accuracy(y_true, y_pred, groups, sample_weight=sample_weight)


def dp_diff(y_true, y_pred, groups, *, sample_weight=None) -> float:
    """Demographic parity difference max_z E[y_hat | z] - min_z E[y_hat | z].

    ``y_pred`` may be 0/1 (selection rates) or scores (mean score); ``y_true`` is ignored.
    Equals fairlearn's ``demographic_parity_difference`` for hard predictions.
    """
    rows = _prepare(None, y_pred, groups, sample_weight)
    return _spread(_group_means(rows.y_pred, rows))


def _tpr_fpr(rows: _Rows) -> tuple[np.ndarray, np.ndarray]:
    return tuple(  # type: ignore[return-value]
        _group_means(rows.y_pred, rows, rate_base(kind, rows.y_true)) for kind in ("tpr", "fpr")
    )


def tpr_diff(y_true, y_pred, groups, *, sample_weight=None) -> float:
    """max_z TPR_z - min_z TPR_z, TPR_z = E[y_hat | y = 1, z]; groups without positives skipped."""
    rows = _classification(y_true, y_pred, groups, sample_weight)
    gap = _spread(_tpr_fpr(rows)[0])
    if np.isnan(gap):
        raise ValueError("tpr_diff needs at least one row with y_true == 1")
    return gap


def eo_diff(y_true, y_pred, groups, *, sample_weight=None) -> float:
    """Equalized-odds difference max(TPR gap, FPR gap), gap = max - min over groups.

    Equals fairlearn's ``equalized_odds_difference`` (agg="worst_case") when every group has
    positives and negatives; a group lacking one of them is skipped for that rate.
    """
    rows = _classification(y_true, y_pred, groups, sample_weight)
    return float(np.nanmax([_spread(rate) for rate in _tpr_fpr(rows)]))


def statistical_rate(y_true, y_pred, groups, *, label: int = 1, sample_weight=None) -> float:
    """Statistical rate min_z P(y_hat=label | z) / max_z P(y_hat=label | z) (Celis et al. 2020,
    Def. 2.2).

    With probabilities ``y_pred`` = P(y_hat = 1), P(y_hat = label | z) is the mean predicted
    probability in group z, as in the reference code. 1.0 when every group's rate is 0.
    """
    if label not in (0, 1):
        raise ValueError(f"label must be 0 or 1, got {label!r}")
    rows = _prepare(None, y_pred, groups, sample_weight)
    _check_unit("y_pred", rows.y_pred)
    return _ratio(_group_means(rows.y_pred if label == 1 else 1 - rows.y_pred, rows))
