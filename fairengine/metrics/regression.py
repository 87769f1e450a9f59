"""Regression metrics: losses (overall and worst group) and statistical parity as a KS distance
between prediction CDFs."""

from __future__ import annotations

import numpy as np

from fairengine.metrics.core import (
    Rows,
    as_column,
    check_unit,
    correct,
    group_means,
    prepare_rows,
)

LOSSES = ("square", "absolute", "zero_one", "log")
_LOG_EPS = 1e-15


def _pointwise_loss(rows: Rows, kind: str) -> np.ndarray:
    y, p = rows.y_true, rows.y_pred
    if kind == "square":
        return (y - p) ** 2
    if kind == "absolute":
        return np.abs(y - p)
    if kind == "zero_one":
        check_unit("y_true", y, binary=True)
        check_unit("y_pred", p)
        return 1 - correct(rows)
    if kind == "log":
        check_unit("y_true", y)
        check_unit("y_pred", p)
        q = np.clip(p, _LOG_EPS, 1 - _LOG_EPS)
        return -(y * np.log(q) + (1 - y) * np.log1p(-q))
    raise ValueError(f"unknown loss {kind!r}; choose one of {LOSSES}")


def loss(y_true, y_pred, groups=None, *, loss: str = "square", sample_weight=None) -> float:
    """Weighted mean loss sum_i w_i l(y_i, f_i) / sum_i w_i.

    Parameters
    ----------
    loss : {"square", "absolute", "zero_one", "log"}
        (y - f)^2 (no 1/2: Agarwal et al.'s l = (y - f)^2 / 2 is half of it), |y - f|, the
        expected 0-1 loss 1 - P(y_hat = y) (= ``error``), or the log loss -y log f - (1 - y)
        log(1 - f) with the probability f clipped to [1e-15, 1 - 1e-15].
    """
    rows = prepare_rows(y_true, y_pred, groups, sample_weight)
    return float(np.average(_pointwise_loss(rows, loss), weights=rows.weight))


def max_group_loss(y_true, y_pred, groups, *, loss: str = "square", sample_weight=None) -> float:
    """Worst group's mean loss, max_z E[l(Y, f) | Z = z] (Agarwal et al.'s bounded group loss)."""
    rows = prepare_rows(y_true, y_pred, groups, sample_weight)
    return float(np.max(group_means(_pointwise_loss(rows, loss), rows)))


def prediction_cdfs(
    y_pred, groups, *, sample_weight=None, thresholds=None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Weighted empirical CDFs F_z(t) = P(f <= t | Z = z) and F(t) = P(f <= t).

    Returns ``(thresholds, group_cdfs, overall_cdf)`` with ``group_cdfs`` of shape (groups,
    thresholds), rows in sorted group-label order. ``thresholds`` defaults to the sorted distinct
    predictions, on which the KS distance is exact.
    """
    rows = prepare_rows(None, y_pred, groups, sample_weight)
    # Row i adds its weight to F(t) for every t >= f_i, i.e. from bin searchsorted(t, f_i) on.
    if thresholds is None:
        t, bins = np.unique(rows.y_pred, return_inverse=True)
    else:
        t = np.sort(as_column("thresholds", thresholds, None))
        bins = np.searchsorted(t, rows.y_pred, side="left")
    mass = np.bincount(
        rows.codes * (t.size + 1) + bins,
        weights=rows.weight,
        minlength=rows.n_groups * (t.size + 1),
    ).reshape(rows.n_groups, t.size + 1)
    cum = np.cumsum(mass, axis=1)[:, : t.size]
    totals = mass.sum(axis=1)
    return t, cum / totals[:, None], cum.sum(axis=0) / totals.sum()


def ks_distance_from_cdfs(group_cdfs, overall_cdf) -> float:
    """max_z sup_t |F_z(t) - F(t)| from CDFs evaluated on a common threshold grid.

    The hook for randomized predictors: pass their exact mixture CDFs (e.g. averaged per-predictor
    CDFs of Agarwal et al.'s Q), which no sample of predictions gives.
    """
    g, o = np.atleast_2d(np.asarray(group_cdfs, float)), np.asarray(overall_cdf, float)
    if o.ndim != 1 or g.shape[1] != o.size:
        raise ValueError(f"group_cdfs {g.shape} and overall_cdf {o.shape} need the same thresholds")
    return float(np.max(np.abs(g - o)))


def sp_ks(y_true, y_pred, groups, *, sample_weight=None) -> float:
    """Regression statistical parity: max_z sup_t |P(f <= t | z) - P(f <= t)| (Agarwal et al. 2019,
    Def. 1).

    Exact over the union of prediction values. Equal to the spec's survival form
    sup_t |P(f >= t | z) - P(f >= t)|. ``y_true`` is ignored.
    """
    _, group_cdf, overall_cdf = prediction_cdfs(y_pred, groups, sample_weight=sample_weight)
    return ks_distance_from_cdfs(group_cdf, overall_cdf)


def ks_null_quantile(group_sizes, level: float = 0.95) -> float:
    """How large :func:`sp_ks` grows from sampling alone on groups of these sizes: the
    ``level`` quantile of max_z sup_t |F_z − F| when every group's predictions come from one
    distribution (the two-sample Kolmogorov null of each group against the other rows, whose
    distance to the pooled CDF is scaled by their share; a Bonferroni split over the groups)."""
    from scipy.special import kolmogi  # lazy: metric names load without scipy

    sizes = np.asarray([s for s in np.ravel(group_sizes) if s > 0], dtype=float)
    total = sizes.sum()
    if sizes.size < 2:
        return 0.0
    c = float(kolmogi((1 - level) / sizes.size))
    rest = total - sizes
    return float(np.max(rest / total * c * np.sqrt(1 / sizes + 1 / rest)))


# -- fair regression's objective losses (Agarwal et al. 2019) on the [0, 1]-scaled target ---------
#: Fair regression's training losses and the :func:`loss` each is reported with: the square and
#: absolute losses as they are, the logistic loss as the log loss of p = σ(C(2u − 1)).
OBJECTIVE_LOSS = {"square": "square", "absolute": "absolute", "logistic": "log"}
#: C of the scaled logistic loss (Agarwal et al. 2019, Example 2; the authors' code uses 5).
LOGISTIC_C = 5.0


def _objective_predictions(values: np.ndarray, objective: str) -> np.ndarray:
    if objective != "logistic":
        return values
    from scipy.special import expit  # lazy: metric names load without scipy

    return expit(LOGISTIC_C * (2 * values - 1))


def scaled_loss(values, weights, y, codes, objective: str) -> float:
    """Expected loss of the mixture Q = Σ_t q_t f_t: Σ_t q_t · mean_i l(y_i, f_t(x_i)).

    ``values`` (n, T) are the predictors' values on the [0, 1]-scaled target ``y`` (one column per
    predictor, ``weights`` q of shape (T,)); ``objective`` is fair regression's loss (a key of
    :data:`OBJECTIVE_LOSS`). Exact: an expectation over Q, never the loss of one averaged or
    sampled prediction. ``codes`` are the rows' groups (validated only).
    """
    name, total = OBJECTIVE_LOSS[objective], 0.0
    for q, column in zip(weights, np.asarray(values).T, strict=True):
        total += q * loss(y, _objective_predictions(column, objective), codes, loss=name)
    return float(total)


def scaled_group_losses(values, weights, y, codes, objective: str, n_groups: int) -> np.ndarray:
    """Per-group :func:`scaled_loss` (n_groups,), 0 for a group without rows."""
    name, group = OBJECTIVE_LOSS[objective], np.zeros(n_groups)
    codes = np.asarray(codes)
    for q, column in zip(weights, np.asarray(values).T, strict=True):
        pred = _objective_predictions(column, objective)
        for a in range(n_groups):
            mask = codes == a
            if mask.any():
                group[a] += q * loss(y[mask], pred[mask], loss=name)
    return group


def scaled_max_group_loss(group_losses, codes) -> float:
    """Largest per-group scaled loss (Agarwal et al.'s bounded group loss) over the groups that
    have rows, from :func:`scaled_group_losses`."""
    group_losses = np.asarray(group_losses, dtype=float)
    present = np.bincount(np.asarray(codes), minlength=group_losses.size) > 0
    return float(group_losses[present].max())
