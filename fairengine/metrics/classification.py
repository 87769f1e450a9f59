"""Classification metrics: accuracy, error and the group rate gaps and ratios of a (randomized)
0/1 prediction, and the audit rates by group with their differences and ratios to a reference
group."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from fairengine.metrics.core import (
    Rows,
    check_unit,
    classification_rows,
    correct,
    group_means,
    min_max_ratio,
    prepare_rows,
    rate_base,
    spread,
)

if TYPE_CHECKING:
    import pandas as pd


def accuracy(y_true, y_pred, groups=None, *, sample_weight=None) -> float:
    """Weighted accuracy sum_i w_i P(y_hat_i = y_i) / sum_i w_i (``groups`` only checked)."""
    rows = classification_rows(y_true, y_pred, groups, sample_weight)
    return float(np.average(correct(rows), weights=rows.weight))


def error(y_true, y_pred, groups=None, *, sample_weight=None) -> float:
    """Weighted error rate, 1 - accuracy."""
    return 1.0 - accuracy(y_true, y_pred, groups, sample_weight=sample_weight)


def dp_diff(y_true, y_pred, groups, *, sample_weight=None) -> float:
    """Demographic parity difference max_z E[y_hat | z] - min_z E[y_hat | z].

    ``y_pred`` may be 0/1 (selection rates) or scores (mean score); ``y_true`` is ignored.
    Equals fairlearn's ``demographic_parity_difference`` for hard predictions.
    """
    rows = prepare_rows(None, y_pred, groups, sample_weight)
    return spread(group_means(rows.y_pred, rows))


def _tpr_fpr(rows: Rows) -> tuple[np.ndarray, np.ndarray]:
    return tuple(  # type: ignore[return-value]
        group_means(rows.y_pred, rows, rate_base(kind, rows.y_true)) for kind in ("tpr", "fpr")
    )


def tpr_diff(y_true, y_pred, groups, *, sample_weight=None) -> float:
    """max_z TPR_z - min_z TPR_z, TPR_z = E[y_hat | y = 1, z]; groups without positives skipped."""
    rows = classification_rows(y_true, y_pred, groups, sample_weight)
    gap = spread(_tpr_fpr(rows)[0])
    if np.isnan(gap):
        raise ValueError("tpr_diff needs at least one row with y_true == 1")
    return gap


def eo_diff(y_true, y_pred, groups, *, sample_weight=None) -> float:
    """Equalized-odds difference max(TPR gap, FPR gap), gap = max - min over groups.

    Equals fairlearn's ``equalized_odds_difference`` (agg="worst_case") when every group has
    positives and negatives; a group lacking one of them is skipped for that rate.
    """
    rows = classification_rows(y_true, y_pred, groups, sample_weight)
    return float(np.nanmax([spread(rate) for rate in _tpr_fpr(rows)]))


def statistical_rate(y_true, y_pred, groups, *, label: int = 1, sample_weight=None) -> float:
    """Statistical rate min_z P(y_hat=label | z) / max_z P(y_hat=label | z) (Celis et al. 2020,
    Def. 2.2).

    With probabilities ``y_pred`` = P(y_hat = 1), P(y_hat = label | z) is the mean predicted
    probability in group z, as in the reference code. 1.0 when every group's rate is 0.
    """
    if label not in (0, 1):
        raise ValueError(f"label must be 0 or 1, got {label!r}")
    rows = prepare_rows(None, y_pred, groups, sample_weight)
    check_unit("y_pred", rows.y_pred)
    return min_max_ratio(group_means(rows.y_pred if label == 1 else 1 - rows.y_pred, rows))


# ---- the audit rates (Aequitas' bias audit, fairlearn's MetricFrame): one definition each.
#: Each group rate of a (randomized) 0/1 prediction p as per-row ``(value, base)``: the group's
#: rate is Σ w·base·value / Σ w·base over its rows (:func:`_group_means`), i.e. the ratio of two
#: confusion counts (expected counts for a randomized p). Labels, directions and definitions are
#: declared in :data:`fairengine.metrics.registry.GROUP_RATES`.
RATE_TERMS: dict[str, Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]] = {
    "selection_rate": lambda y, p: (p, np.ones_like(y)),
    "tpr": lambda y, p: (p, y),
    "fnr": lambda y, p: (1 - p, y),
    "tnr": lambda y, p: (1 - p, 1 - y),
    "fpr": lambda y, p: (p, 1 - y),
    "ppv": lambda y, p: (y, p),
    "fdr": lambda y, p: (1 - y, p),
    "npv": lambda y, p: (1 - y, 1 - p),
    "for": lambda y, p: (y, 1 - p),
}


def _rates(rows: Rows, rate: str) -> np.ndarray:
    """Rate ``rate`` per group (NaN for a group with no row in its base)."""
    value, base = RATE_TERMS[rate](rows.y_true, rows.y_pred)
    return group_means(value, rows, base)


def audit_rates(y_true, y_pred, groups, *, sample_weight=None) -> pd.DataFrame:
    """Every audit rate (:data:`RATE_TERMS`) by group: one row per group label (sorted), one
    column per rate; NaN where a group has no row in the rate's base (e.g. FPR without
    negatives). The one computation behind the ``*_diff`` / ``*_ratio`` metrics."""
    import pandas as pd  # lazy: metric names load without pandas

    rows = classification_rows(y_true, y_pred, groups, sample_weight)
    return pd.DataFrame({r: _rates(rows, r) for r in RATE_TERMS}, index=rows.labels)


def reference_index(labels, weights: np.ndarray, reference=None) -> int:
    """Position of the reference group among ``labels``: ``reference`` itself, or the group of
    largest total weight when None (the largest group, as Aequitas' default ``majority``)."""
    if reference is None:
        return int(np.argmax(weights))
    matches = [i for i, label in enumerate(labels) if label == reference]
    if not matches:
        raise ValueError(f"reference group {reference!r} is not one of {list(labels)}")
    return matches[0]


def ratios_to(rates: np.ndarray, ref: int) -> np.ndarray:
    """Each group's rate over the reference group's (Aequitas' disparity); 0/0 counts as 1
    (both groups at 0: nobody is favoured), x/0 as inf, NaN where a rate is undefined."""
    rates = np.asarray(rates, dtype=float)
    top = rates[ref]
    with np.errstate(divide="ignore", invalid="ignore"):
        out = rates / top
    out[(rates == 0) & (top == 0)] = 1.0
    return out


def folded_ratio(ratio: np.ndarray) -> np.ndarray:
    """min(r, 1/r): 1 at parity, towards 0 the further from it in either direction, so the
    four-fifths rule τ ≤ r ≤ 1/τ reads folded ≥ τ."""
    ratio = np.asarray(ratio, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(ratio > 1, 1 / ratio, ratio)


def worst_ratio(ratios) -> float:
    """A ``<rate>_ratio`` metric's value from each group's ratio to the reference group: the
    smallest folded ratio min(r, 1/r) over the groups with a defined ratio; NaN when none has."""
    folded = folded_ratio(ratios)
    folded = folded[~np.isnan(folded)]
    return float(folded.min()) if folded.size else float("nan")


def _rate_diff(rate: str) -> Callable[..., float]:
    def metric(y_true, y_pred, groups, *, sample_weight=None) -> float:
        rows = classification_rows(y_true, y_pred, groups, sample_weight)
        return spread(_rates(rows, rate))

    metric.__name__ = metric.__qualname__ = f"{rate}_diff"
    metric.__doc__ = (
        f"max_z {rate}_z − min_z {rate}_z over groups with a defined {rate} "
        "(:data:`RATE_TERMS`); NaN when no group has one."
    )
    return metric


def _rate_ratio(rate: str) -> Callable[..., float]:
    def metric(y_true, y_pred, groups, *, reference=None, sample_weight=None) -> float:
        rows = classification_rows(y_true, y_pred, groups, sample_weight)
        weights = np.bincount(rows.codes, weights=rows.weight, minlength=rows.n_groups)
        ref = reference_index(rows.labels, weights, reference)
        return worst_ratio(ratios_to(_rates(rows, rate), ref))

    metric.__name__ = metric.__qualname__ = f"{rate}_ratio"
    metric.__doc__ = (
        f"Worst disparity of {rate} to the reference group: min over groups of min(r, 1/r), "
        f"r = {rate}_z / {rate}_ref (Aequitas' disparity); ``reference`` is a group label, the "
        "largest group by default. The four-fifths rule passes when it is ≥ 0.8."
    )
    return metric


fpr_diff = _rate_diff("fpr")
fnr_diff = _rate_diff("fnr")
tnr_diff = _rate_diff("tnr")
ppv_diff = _rate_diff("ppv")
npv_diff = _rate_diff("npv")
fdr_diff = _rate_diff("fdr")
for_diff = _rate_diff("for")
selection_rate_ratio = _rate_ratio("selection_rate")
tpr_ratio = _rate_ratio("tpr")
fnr_ratio = _rate_ratio("fnr")
tnr_ratio = _rate_ratio("tnr")
fpr_ratio = _rate_ratio("fpr")
ppv_ratio = _rate_ratio("ppv")
fdr_ratio = _rate_ratio("fdr")
npv_ratio = _rate_ratio("npv")
for_ratio = _rate_ratio("for")
