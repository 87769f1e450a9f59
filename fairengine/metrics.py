"""Group metrics shared by every method, page and benchmark: one definition of each.

Every metric is ``metric(y_true, y_pred, groups, *, sample_weight=None, **options) -> float``.
Conventions shared by all of them:

* Inputs may be lists, numpy arrays or pandas Series and are aligned by position; ``groups`` holds
  any hashable labels, treated as categories. Rows with weight 0 count as absent (a group whose
  rows all have weight 0 is not a group).
* Every rate is a weighted mean, computed per group by one helper (``_group_means``).
* Classification: ``y_true`` in {0, 1}; ``y_pred`` is a hard 0/1 prediction or the probability
  that a randomized classifier predicts 1. Rates are then the expected rates of that randomized
  classifier (the usual rates for hard predictions).
* A conditional rate (TPR: rows with y = 1; FPR: rows with y = 0) skips groups with no eligible
  rows. fairlearn reports 0 for such a group instead, so the two can differ only there.
* ``*_diff`` metrics are max - min over groups; ``*_rate`` ratios are min / max over groups.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

LOSSES = ("square", "absolute", "zero_one", "log")
_LOG_EPS = 1e-15
_BOOT_CHUNK = 2_000_000  # resampled cells per block: bounds bootstrap memory to ~50 MB


@dataclass(frozen=True)
class _Rows:
    """Validated inputs: float arrays (None if not given), codes 0..G-1, labels, weights."""

    y_true: np.ndarray | None
    y_pred: np.ndarray | None
    codes: np.ndarray
    labels: pd.Index
    weight: np.ndarray

    @property
    def n_groups(self) -> int:
        return len(self.labels)


def _column(name: str, values, n: int | None) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one value per row (1-D), got shape {arr.shape}")
    if n is not None and arr.size != n:
        raise ValueError(f"{name} has {arr.size} rows but groups has {n}; pass one value per row")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinite values; drop or impute those rows")
    return arr


def _prepare(y_true, y_pred, groups, sample_weight=None) -> _Rows:
    """Validate lengths and values, factorize ``groups`` (sorted labels) and drop 0-weight rows."""
    import pandas as pd  # lazy: metric names load without pandas

    if groups is None:  # overall metrics may be called without groups
        ref = y_pred if y_pred is not None else y_true
        if ref is None:
            raise ValueError("groups is required (one group label per row)")
        groups = np.zeros(len(ref), dtype=int)
    series = (
        groups
        if isinstance(groups, pd.Series)
        else pd.Series(groups if isinstance(groups, np.ndarray) else list(groups), dtype=None)
    )
    n = len(series)
    if n == 0:
        raise ValueError("groups is empty: metrics need at least one row")
    try:
        codes, labels = pd.factorize(series, sort=True)
    except TypeError:  # labels of mixed, unorderable types
        codes, labels = pd.factorize(series, sort=False)
    if (codes < 0).any():
        raise ValueError("groups contains missing values (NaN/None); drop or label those rows")
    yt = None if y_true is None else _column("y_true", y_true, n)
    yp = None if y_pred is None else _column("y_pred", y_pred, n)
    w = np.ones(n) if sample_weight is None else _column("sample_weight", sample_weight, n)
    if (w < 0).any() or w.sum() <= 0:
        raise ValueError("sample_weight must be non-negative with a positive sum")
    totals = np.bincount(codes, weights=w, minlength=len(labels))
    if (totals == 0).any():  # drop groups of 0-weight rows; other 0-weight rows are inert
        keep = totals[codes] > 0
        kept_labels, codes = np.unique(codes[keep], return_inverse=True)
        labels, w = pd.Index(labels[kept_labels]), w[keep]
        yt, yp = (None if a is None else a[keep] for a in (yt, yp))
    return _Rows(yt, yp, codes.astype(np.intp), pd.Index(labels), w)


def _check_unit(name: str, arr: np.ndarray, *, binary: bool = False) -> None:
    ok = np.isin(arr, (0.0, 1.0)).all() if binary else ((arr >= 0) & (arr <= 1)).all()
    if not ok:
        raise ValueError(f"{name} must be {'0/1 labels' if binary else 'in [0, 1]'}")


def _classification(y_true, y_pred, groups, sample_weight) -> _Rows:
    rows = _prepare(y_true, y_pred, groups, sample_weight)
    _check_unit("y_true", rows.y_true, binary=True)
    _check_unit("y_pred", rows.y_pred)
    return rows


def _group_means(values: np.ndarray, rows: _Rows, mask: np.ndarray | None = None) -> np.ndarray:
    """Weighted mean of ``values`` per group over rows where ``mask``; NaN if a group has none.

    mean_z = sum_{i: z_i = z, mask_i} w_i v_i / sum_{i: z_i = z, mask_i} w_i
    """
    w = rows.weight if mask is None else rows.weight * mask
    den = np.bincount(rows.codes, weights=w, minlength=rows.n_groups)
    num = np.bincount(rows.codes, weights=w * values, minlength=rows.n_groups)
    return np.divide(num, den, out=np.full(rows.n_groups, np.nan), where=den > 0)


def _spread(rates: np.ndarray) -> float:
    """max - min over groups with a defined rate (NaN if no group has one)."""
    rates = rates[~np.isnan(rates)]
    return float(rates.max() - rates.min()) if rates.size else float("nan")


def _ratio(rates: np.ndarray) -> float:
    """min / max over groups; 1.0 when every rate is 0 (0/0: nobody is favoured)."""
    top = rates.max()
    return float(rates.min() / top) if top > 0 else 1.0


def _correct(rows: _Rows) -> np.ndarray:
    """P(y_hat = y) per row, y p + (1 - y)(1 - p): the indicator 1[y_hat = y] if p is 0/1."""
    return rows.y_true * rows.y_pred + (1 - rows.y_true) * (1 - rows.y_pred)


def _pointwise_loss(rows: _Rows, kind: str) -> np.ndarray:
    y, p = rows.y_true, rows.y_pred
    if kind == "square":
        return (y - p) ** 2
    if kind == "absolute":
        return np.abs(y - p)
    if kind == "zero_one":
        _check_unit("y_true", y, binary=True)
        _check_unit("y_pred", p)
        return 1 - _correct(rows)
    if kind == "log":
        _check_unit("y_true", y)
        _check_unit("y_pred", p)
        q = np.clip(p, _LOG_EPS, 1 - _LOG_EPS)
        return -(y * np.log(q) + (1 - y) * np.log1p(-q))
    raise ValueError(f"unknown loss {kind!r}; choose one of {LOSSES}")


def accuracy(y_true, y_pred, groups=None, *, sample_weight=None) -> float:
    """Weighted accuracy sum_i w_i P(y_hat_i = y_i) / sum_i w_i (``groups`` only checked)."""
    rows = _classification(y_true, y_pred, groups, sample_weight)
    return float(np.average(_correct(rows), weights=rows.weight))


def error(y_true, y_pred, groups=None, *, sample_weight=None) -> float:
    """Weighted error rate, 1 - accuracy."""
    return 1.0 - accuracy(y_true, y_pred, groups, sample_weight=sample_weight)


def loss(y_true, y_pred, groups=None, *, loss: str = "square", sample_weight=None) -> float:
    """Weighted mean loss sum_i w_i l(y_i, f_i) / sum_i w_i.

    Parameters
    ----------
    loss : {"square", "absolute", "zero_one", "log"}
        (y - f)^2 (no 1/2: Agarwal et al.'s l = (y - f)^2 / 2 is half of it), |y - f|, the expected
        0-1
        loss 1 - P(y_hat = y) (= ``error``), or the log loss -y log f - (1 - y) log(1 - f) with the
        probability f clipped to [1e-15, 1 - 1e-15].
    """
    rows = _prepare(y_true, y_pred, groups, sample_weight)
    return float(np.average(_pointwise_loss(rows, loss), weights=rows.weight))


def max_group_loss(y_true, y_pred, groups, *, loss: str = "square", sample_weight=None) -> float:
    """Worst group's mean loss, max_z E[l(Y, f) | Z = z] (Agarwal et al.'s bounded group loss)."""
    rows = _prepare(y_true, y_pred, groups, sample_weight)
    return float(np.max(_group_means(_pointwise_loss(rows, loss), rows)))


def dp_diff(y_true, y_pred, groups, *, sample_weight=None) -> float:
    """Demographic parity difference max_z E[y_hat | z] - min_z E[y_hat | z].

    ``y_pred`` may be 0/1 (selection rates) or scores (mean score); ``y_true`` is ignored.
    Equals fairlearn's ``demographic_parity_difference`` for hard predictions.
    """
    rows = _prepare(None, y_pred, groups, sample_weight)
    return _spread(_group_means(rows.y_pred, rows))


#: The engine's conditional rates of a (randomized) 0/1 prediction ŷ: true-positive rate, false-
#: positive rate and selection (positive-prediction) rate. :func:`rate_base` maps a kind to the
#: rows it averages ŷ over and :data:`RATE_SIGN` to its direction in the one-sided "no group
#: worse off than overall" constraints: the one rate mapping of the engine.
RATE_KINDS = ("tpr", "fpr", "ppr")
#: +1: a group's rate below the overall rate is a violation (TPR, selection); −1: above (FPR).
RATE_SIGN: dict[str, float] = {"tpr": 1.0, "fpr": -1.0, "ppr": 1.0}


def rate_base(kind: str, y_true) -> np.ndarray:
    """The rows a rate averages ŷ over, as 0/1 weights: y (TPR), 1 − y (FPR), every row (PPR).

    A rate is then Σ_i w_i b_i ŷ_i / Σ_i w_i b_i with b = ``rate_base(kind, y)``.
    """
    y = np.asarray(y_true, dtype=float)
    if kind == "tpr":
        return y
    if kind == "fpr":
        return 1.0 - y
    if kind == "ppr":
        return np.ones_like(y)
    raise ValueError(f"rate kind must be one of {RATE_KINDS}; got {kind!r}")


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


def representation_rate(y_true, y_pred, groups, *, sample_weight=None) -> float:
    """Representation rate min_z P(Z=z) / max_z P(Z=z) (Celis et al. 2020 §2.2, Def. 2.1).

    Uses only ``groups`` and ``sample_weight``; ``y_true`` and ``y_pred`` are ignored.
    """
    rows = _prepare(None, None, groups, sample_weight)
    return _ratio(np.bincount(rows.codes, weights=rows.weight, minlength=rows.n_groups))


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


def prediction_cdfs(
    y_pred, groups, *, sample_weight=None, thresholds=None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Weighted empirical CDFs F_z(t) = P(f <= t | Z = z) and F(t) = P(f <= t).

    Returns ``(thresholds, group_cdfs, overall_cdf)`` with ``group_cdfs`` of shape (groups,
    thresholds), rows in sorted group-label order. ``thresholds`` defaults to the sorted distinct
    predictions, on which the KS distance is exact.
    """
    rows = _prepare(None, y_pred, groups, sample_weight)
    # Row i adds its weight to F(t) for every t >= f_i, i.e. from bin searchsorted(t, f_i) on.
    if thresholds is None:
        t, bins = np.unique(rows.y_pred, return_inverse=True)
    else:
        t = np.sort(_column("thresholds", thresholds, None))
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


_TABLE_COLUMNS = {
    "classification": ("base_rate", "selection_rate", "accuracy", "tpr", "fpr"),
    "regression": ("mean_target", "mean_prediction", "mse", "mae"),
}


def _table_terms(rows: _Rows, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """Per-row terms (n, k): table column c = sum num[:, c] / sum den[:, c]."""
    y, p, w = rows.y_true, rows.y_pred, rows.weight
    if kind == "classification":
        values = [y, p, _correct(rows), p, p]
        masks = [1.0, rate_base("ppr", y), 1.0, rate_base("tpr", y), rate_base("fpr", y)]
    else:
        values, masks = [y, p, (y - p) ** 2, np.abs(y - p)], [1.0] * 4
    den = np.column_stack([w * m for m in masks])
    return np.column_stack(values) * den, den


def _resample_counts(rng: np.random.Generator, starts, sizes, n: int, n_boot: int):
    """Yield blocks (b, n) of row multiplicities: each group's rows resampled with replacement.

    ``starts``/``sizes`` describe contiguous groups of a row order (one group of n rows when not
    stratified); a bootstrap resample is exactly these multiplicities used as weights.
    """
    owner_start, owner_size = np.repeat(starts, sizes), np.repeat(sizes, sizes)
    block = max(1, _BOOT_CHUNK // n)
    for lo in range(0, n_boot, block):
        b = min(block, n_boot - lo)
        picks = owner_start + (rng.random((b, n)) * owner_size).astype(np.intp)
        picks += np.arange(b)[:, None] * n
        yield np.bincount(picks.ravel(), minlength=b * n).reshape(b, n)


def _bootstrap_sums(rng: np.random.Generator, terms: np.ndarray, keys, n_boot: int) -> np.ndarray:
    """Column sums (n_boot, k) of ``terms`` over resamples of its rows with replacement.

    Rows equal in every array of ``keys`` have equal terms, so a resample matters only through
    how often each distinct row is drawn: Multinomial(n, m_j / n), exact and cheap when few
    rows are distinct (hard predictions); otherwise rows are resampled one by one.
    """
    import pandas as pd  # lazy: metric names load without pandas

    n = len(terms)
    cls = np.zeros(n, dtype=np.int64)
    for key in keys:  # class id of each row's combination of key values
        codes, uniques = pd.factorize(key)
        cls = pd.factorize(cls * len(uniques) + codes)[0]
    n_cls = int(cls.max()) + 1
    if n_cls * 8 > n:
        blocks = _resample_counts(rng, [0], [n], n, n_boot)
        return np.vstack([c.astype(float) @ terms for c in blocks])
    first = np.empty(n_cls, dtype=np.intp)
    first[cls[::-1]] = np.arange(n)[::-1]
    return rng.multinomial(n, np.bincount(cls) / n, size=n_boot).astype(float) @ terms[first]


def _percentiles(stats: np.ndarray, level: float) -> np.ndarray:
    with warnings.catch_warnings():  # an all-NaN column (rate never defined) gives NaN bounds
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanquantile(stats, [(1 - level) / 2, (1 + level) / 2], axis=0)


def group_table(
    y_true,
    y_pred,
    groups,
    *,
    group_names=None,
    kind: str = "classification",
    sample_weight=None,
    ci: float | None = None,
    n_boot: int = 200,
    random_state=0,
) -> pd.DataFrame:
    """Per-group summary, one row per group (index = group name) and an ``"overall"`` row last.

    Columns: ``n`` (rows with positive weight), ``share`` (weighted share), then for
    classification ``base_rate`` (mean y), ``selection_rate``, ``accuracy``, ``tpr``, ``fpr``,
    for regression ``mean_target``, ``mean_prediction``, ``mse``, ``mae``; each by the same
    definitions as the metrics above (``tpr``/``fpr`` are NaN for a group without positives /
    negatives).
    ``group_names`` maps labels to names (a mapping, or a sequence indexed by integer code).
    With ``ci=level`` each rate column gets ``<col>_low``/``<col>_high``: a percentile bootstrap
    resampling rows within each group (the overall row combines the same group resamples).
    """
    import pandas as pd  # lazy: metric names load without pandas

    if kind not in _TABLE_COLUMNS:
        raise ValueError(f"kind must be 'classification' or 'regression', got {kind!r}")
    rows = (_classification if kind == "classification" else _prepare)(
        y_true, y_pred, groups, sample_weight
    )
    num, den = _table_terms(rows, kind)
    g, k = rows.n_groups, num.shape[1]
    sums = np.stack([np.bincount(rows.codes, weights=col, minlength=g) for col in (*num.T, *den.T)])
    sums = np.column_stack([sums, sums.sum(axis=1)])  # (2k, groups + overall)
    with np.errstate(invalid="ignore", divide="ignore"):
        rates = sums[:k] / sums[k:]
    names = list(rows.labels)
    if group_names is not None:
        names = [
            group_names.get(z, z) if isinstance(group_names, Mapping) else group_names[int(z)]
            for z in names
        ]
    sizes = np.bincount(rows.codes, weights=rows.weight > 0, minlength=g).astype(int)
    weights = np.bincount(rows.codes, weights=rows.weight, minlength=g)
    table = pd.DataFrame(
        {
            "n": np.append(sizes, sizes.sum()),
            "share": np.append(weights / weights.sum(), 1.0),
            **dict(zip(_TABLE_COLUMNS[kind], rates, strict=True)),
        },
        index=pd.Index([*names, "overall"], name="group"),
    )
    if ci is not None:
        rng = np.random.default_rng(random_state)
        boot = np.zeros((n_boot, 2 * k, g + 1))
        terms = np.hstack([num, den])
        for z in range(g):
            mask = rows.codes == z
            keys = (rows.y_true[mask], rows.y_pred[mask], rows.weight[mask])
            boot[:, :, z] = _bootstrap_sums(rng, terms[mask], keys, n_boot)
        boot[:, :, g] = boot[:, :, :g].sum(axis=2)
        with np.errstate(invalid="ignore", divide="ignore"):
            low, high = _percentiles(boot[:, :k] / boot[:, k:], ci)
        for j, col in enumerate(_TABLE_COLUMNS[kind]):
            table[f"{col}_low"], table[f"{col}_high"] = low[j], high[j]
    return table


def bootstrap_ci(
    metric: Callable[..., float] | str,
    y_true,
    y_pred,
    groups,
    *,
    n_boot: int = 200,
    level: float = 0.95,
    random_state=0,
    stratify: bool = True,
    sample_weight=None,
    **metric_options,
) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of ``metric`` (a callable or a ``METRICS`` name).

    Each resample draws rows with replacement, within each group when ``stratify`` (so no group
    vanishes), and is passed to the metric as integer multiplicities times ``sample_weight``,
    which is exactly the metric of the resampled table (``groups`` arrive as integer codes).
    Reproducible for a given ``random_state``.
    """
    fn = METRICS[metric] if isinstance(metric, str) else metric
    if not 0 < level < 1 or n_boot < 1:
        raise ValueError("level must be in (0, 1) and n_boot >= 1")
    rows = _prepare(y_true, y_pred, groups, sample_weight)
    n = rows.codes.size
    order = np.argsort(rows.codes, kind="stable") if stratify else np.arange(n)
    sizes = np.bincount(rows.codes) if stratify else np.array([n])
    starts = np.cumsum(sizes) - sizes
    rng = np.random.default_rng(random_state)
    stats = []
    for block in _resample_counts(rng, starts, sizes, n, n_boot):
        for counts in block:
            w = np.empty(n)
            w[order] = counts * rows.weight[order]
            stats.append(
                fn(rows.y_true, rows.y_pred, rows.codes, sample_weight=w, **metric_options)
            )
    low, high = _percentiles(np.asarray(stats, dtype=float), level)
    return float(low), float(high)


# -- Deng et al. 2023: proxies and filtering -------------------------------------------------------
# The matrix-level primitives below are the single definitions; the metrics wrap them and
# ``fairengine.methods.balanced_filtering`` re-exports them under the contract names.


def conditional_distribution_matrix(
    leaves, z, n_groups: int, *, n_leaves: int | None = None, sample_weight=None
) -> tuple[np.ndarray, np.ndarray]:
    """A[j, k] = P(z = k | proxy = j) and r_hat[j] = P(proxy = j) (Deng et al. 2023 §3, Alg. 1).

    ``leaves`` and ``z`` are integer codes per row; ``sample_weight`` gives soft memberships (a
    randomised proxy contributes one weighted row per leaf). A leaf without mass gets r_hat = 0
    and the overall base rates as its row, so it never adds disclosivity.
    """
    leaves = np.asarray(leaves, dtype=np.int64).ravel()
    z = np.asarray(z, dtype=np.int64).ravel()
    if leaves.shape != z.shape:
        raise ValueError("leaves and z need one value per row")
    w = np.ones(len(z)) if sample_weight is None else _column("sample_weight", sample_weight, None)
    n_leaves = int(leaves.max()) + 1 if n_leaves is None else int(n_leaves)
    joint = np.bincount(leaves * n_groups + z, weights=w, minlength=n_leaves * n_groups)
    joint = joint.reshape(n_leaves, n_groups)
    total = joint.sum()
    if total <= 0:
        raise ValueError("sample_weight must have a positive sum")
    mass = joint.sum(axis=1)
    base = joint.sum(axis=0) / total
    A = np.where(mass[:, None] > 0, joint / np.maximum(mass, 1e-300)[:, None], base)
    return A, mass / total


def matrix_disclosivity(A, base_rates, mass=None) -> float:
    """max_{j,k} |A[j, k] - r_k| over leaves with mass > 0 (Deng et al. 2023 Def. 5)."""
    A = np.atleast_2d(np.asarray(A, dtype=float))
    if mass is not None:
        A = A[np.asarray(mass, dtype=float) > 0]
    if A.size == 0:
        return 0.0
    return float(np.max(np.abs(A - np.asarray(base_rates, dtype=float)[None, :])))


#: A group with fewer rows than this in a sample (the expected count when the rows carry their
#: acceptance probabilities) is missing from it: the sample says nothing about that group.
MISSING_GROUP_ROWS = 0.5


def max_imbalance(target) -> float:
    """The largest imbalance any distribution can have: max_k ||e_k - tau||_2 (all mass on one
    group), sqrt(1 - 1/K) for the uniform target."""
    tau = np.asarray(target, dtype=float).ravel()
    return float(np.sqrt(np.max((1.0 - tau) ** 2 - tau**2) + np.sum(tau**2)))


def distribution_imbalance(proportions, target=None) -> float:
    """||p - tau||_2, tau = uniform 1/K by default (Deng et al. 2023 Def. 2; [spec erratum] 1/K not
    1/k).

    A group the target asks for (tau_k > 0) that is missing from the sample (p_k = 0) makes the
    imbalance maximal (:func:`max_imbalance`): a balanced-looking distance must not hide a group
    that vanished, and ||p - tau|| alone can be small with one group at 0.
    """
    p = np.asarray(proportions, dtype=float).ravel()
    tau = np.full(p.size, 1.0 / p.size) if target is None else np.asarray(target, float).ravel()
    if tau.shape != p.shape:
        raise ValueError(f"target has {tau.size} entries but there are {p.size} groups")
    if np.any((p <= 0) & (tau > 0)):
        return max_imbalance(tau)
    return float(np.linalg.norm(p - tau))


def group_counts(groups, *, sample_weight=None) -> np.ndarray:
    """Rows of each group (sorted labels) in a sample, weighted by ``sample_weight`` (each row's
    acceptance probability gives the expected count of the filtered sample)."""
    rows = _prepare(None, None, groups)
    w = rows.weight if sample_weight is None else _column("sample_weight", sample_weight, None)
    if w.size != rows.codes.size or (w < 0).any() or w.sum() <= 0:
        raise ValueError("sample_weight must be one non-negative value per row, positive sum")
    return np.bincount(rows.codes, weights=w, minlength=rows.n_groups)


def disclosivity(y_true, y_pred, groups, *, sample_weight=None) -> float:
    """Disclosivity of a proxy: max_{j,k} |P(z=k | proxy=j) - P(z=k)| (Deng et al. 2023 Def. 5).

    ``y_pred`` is each row's proxy value (leaf id), ``groups`` its sensitive group z; ``y_true`` is
    ignored. A randomised proxy passes one row per (row, leaf) with weight P(leaf | x).
    """
    import pandas as pd  # lazy: metric names load without pandas

    rows = _prepare(None, y_pred, groups, sample_weight)
    leaves = pd.factorize(rows.y_pred, sort=True)[0]
    A, mass = conditional_distribution_matrix(
        leaves, rows.codes, rows.n_groups, sample_weight=rows.weight
    )
    return matrix_disclosivity(A, mass @ A, mass)


def imbalance(y_true, y_pred, groups, *, sample_weight=None, target=None) -> float:
    """L2 distance of the (weighted) group proportions to ``target`` (Deng et al. 2023 Def. 2).

    ``sample_weight`` = each row's acceptance probability gives the imbalance of the filtered
    sample (weights are expected row counts); without it, of the data itself. ``target`` is a
    distribution over the sorted group labels (uniform by default). Every group of ``groups``
    counts: one with fewer than :data:`MISSING_GROUP_ROWS` (expected) rows is missing, and a
    missing group makes the imbalance maximal (:func:`distribution_imbalance`).
    """
    return count_imbalance(group_counts(groups, sample_weight=sample_weight), target)


def count_imbalance(counts, target=None) -> float:
    """:func:`distribution_imbalance` of a sample given its (expected) rows per group: a group
    with fewer than :data:`MISSING_GROUP_ROWS` rows is missing, which makes it maximal."""
    counts = np.asarray(counts, dtype=float).ravel()
    counts = np.where(counts < MISSING_GROUP_ROWS, 0.0, counts)
    if counts.sum() <= 0:
        return max_imbalance(np.full(counts.size, 1.0 / counts.size) if target is None else target)
    return distribution_imbalance(counts / counts.sum(), target)


def acceptance_rate(y_true, y_pred, groups=None, *, sample_weight=None) -> float:
    """Share of candidates kept: weighted mean of the acceptance probabilities (or 0/1 flags)
    ``y_pred`` (Deng et al. 2023 Alg. 1: sum(q) / C in expectation)."""
    rows = _prepare(None, y_pred, groups, sample_weight)
    _check_unit("y_pred", rows.y_pred)
    return float(np.average(rows.y_pred, weights=rows.weight))


#: Rates of each one-sided constraint family of Wang et al. 2020 (F.1), in the order of
#: :func:`rate_violations`: TPR for every group, then (equalized odds) FPR for every group.
RATE_FAMILIES: dict[str, tuple[str, ...]] = {"tpr": ("tpr",), "eo": ("tpr", "fpr"), "dp": ("ppr",)}


def rate_violations(
    y_true, y_pred, groups, *, constraint: str = "tpr", slack: float = 0.0, n_groups: int
) -> np.ndarray:
    """One-sided rate-constraint values per (rate, group), positive = violated (Wang et al. 2020,
    F.1).

    ``groups`` are codes 0..n_groups-1; values are ordered rate by rate (see
    :data:`RATE_FAMILIES`), group by group: TPR_all - TPR_j - slack, FPR_j - FPR_all - slack,
    PPR_all - PPR_j - slack. A group lacking the rate's base rows (e.g. no positives for TPR)
    counts as -slack.
    """
    if constraint not in RATE_FAMILIES:
        raise ValueError(f"constraint must be tpr, eo or dp; got {constraint!r}")
    y, p = (np.asarray(a, dtype=float).ravel() for a in (y_true, y_pred))
    g = np.asarray(groups).ravel()
    out = []
    for rate in RATE_FAMILIES[constraint]:
        base, sign = rate_base(rate, y), RATE_SIGN[rate]
        overall = float(base @ p / base.sum()) if base.sum() > 0 else 0.0
        for j in range(n_groups):
            b = base * (g == j)
            has_rows = b.sum() > 0
            out.append(sign * (overall - float(b @ p / b.sum())) - slack if has_rows else -slack)
    return np.asarray(out, dtype=float)


def true_violation(y_true, y_pred, groups, *, constraint: str = "tpr", slack: float = 0.0) -> float:
    """Max one-sided rate-constraint violation over groups (Wang et al. 2020, F.1): ``tpr``:
    max_j TPR_all - TPR_j - slack; ``eo``: also FPR_j - FPR_all - slack; ``dp``: PPR_all - PPR_j
    - slack. Pass the true groups (any labels); a group lacking the rate's base rows counts as
    -slack. The max of :func:`rate_violations`."""
    _, codes = np.unique(np.asarray(groups).ravel(), return_inverse=True)
    values = rate_violations(
        y_true, y_pred, codes, constraint=constraint, slack=slack, n_groups=int(codes.max()) + 1
    )
    return float(max(values.max(), -float(slack)))


def noisy_violation(
    y_true, y_pred, groups, *, constraint: str = "tpr", slack: float = 0.0
) -> float:
    """:func:`true_violation` computed on the observed noisy groups Ĝ (pass them as ``groups``)."""
    return true_violation(y_true, y_pred, groups, constraint=constraint, slack=slack)


METRICS: dict[str, Callable[..., float]] = {
    f.__name__: f
    for f in (accuracy, error, loss, dp_diff, tpr_diff, eo_diff, sp_ks, max_group_loss)
    + (representation_rate, statistical_rate)
    + (disclosivity, imbalance, acceptance_rate)
}
"""The metrics with the shared signature ``metric(y_true, y_pred, groups, **options)``."""

CLASSIFICATION = ("classification",)
REGRESSION = ("regression",)
ANY_KIND = ("classification", "regression")


@dataclass(frozen=True)
class MetricInfo:
    """One declared metric: the single place its name, meaning and direction are defined.

    Attributes
    ----------
    name : str
        The key methods report in ``RunResult.metrics``.
    label : str
        Words for people (axis titles, tables).
    lower_is_better : bool
    kinds : tuple of str
        Task kinds the metric applies to.
    definition : str
        One line: what is computed, on which rows.
    standard : bool
        Part of the shared evaluation of every predicting model of its kind (the Compare plane);
        method-specific metrics are False.
    """

    name: str
    label: str
    lower_is_better: bool
    kinds: tuple[str, ...]
    definition: str
    standard: bool = False

    @property
    def function(self) -> Callable[..., float] | None:
        """The shared-signature function, for metrics that have one."""
        return METRICS.get(self.name)

    @property
    def direction(self) -> str:
        return "lower is better" if self.lower_is_better else "higher is better"


def _declare(*infos: MetricInfo) -> dict[str, MetricInfo]:
    out: dict[str, MetricInfo] = {}
    for info in infos:
        if info.name in out:
            raise ValueError(f"metric {info.name!r} declared twice")
        out[info.name] = info
    return out


REGISTRY: dict[str, MetricInfo] = _declare(
    # ---- the shared evaluation of classifiers (every predicting method of the kind)
    MetricInfo("error", "Error rate", True, CLASSIFICATION,
               "Share of rows whose prediction differs from the label (expected, for randomized "
               "classifiers).", True),
    MetricInfo("accuracy", "Accuracy", False, CLASSIFICATION, "1 − error.", True),
    MetricInfo("dp_diff", "Demographic parity difference", True, CLASSIFICATION,
               "Largest minus smallest selection rate P(ŷ = 1 | group).", True),
    MetricInfo("eo_diff", "Equalized odds difference", True, CLASSIFICATION,
               "Larger of the TPR gap and the FPR gap across groups.", True),
    MetricInfo("tpr_diff", "True positive rate difference", True, CLASSIFICATION,
               "Largest minus smallest P(ŷ = 1 | y = 1, group).", True),
    MetricInfo("statistical_rate", "Statistical rate (classifier)", False, CLASSIFICATION,
               "Smallest over largest selection rate P(ŷ = 1 | group) of the classifier.", True),
    # ---- the shared evaluation of regressors
    MetricInfo("loss", "Mean squared error", True, REGRESSION,
               "Mean (y − f(x))² in the target's own units (expected over a randomized "
               "predictor's mixture).", True),
    MetricInfo("sp_ks", "Statistical parity (KS distance)", True, REGRESSION,
               "Largest KS distance between a group's prediction CDF and the overall one.", True),
    MetricInfo("max_group_loss", "Worst group's mean squared error", True, REGRESSION,
               "Largest per-group mean (y − f(x))², target units.", True),
    MetricInfo("scaled_loss", "Training objective's loss (target scaled to [0, 1])", True,
               REGRESSION,
               "Fair regression's chosen loss (square, absolute or logistic) on the target "
               "min–max scaled to [0, 1], expected over Q (as Agarwal et al. 2019 report it)."),
    MetricInfo("scaled_max_group_loss", "Worst group's objective loss (scaled target)", True,
               REGRESSION, "Largest per-group scaled_loss (bounded group loss, Agarwal et al.)."),
    # ---- data (generated or reweighted samples; Celis et al. 2020)
    MetricInfo("representation_rate", "Representation rate (data)", False, ANY_KIND,
               "Smallest over largest group share of the (generated or reweighted) data."),
    MetricInfo("data_statistical_rate", "Statistical rate (data)", False, CLASSIFICATION,
               "Smallest over largest P(y = 1 | group) in the generated data (Celis et al. 2020)."),
    MetricInfo("kl_to_empirical", "KL divergence to the data", True, ANY_KIND,
               "KL(P_gen ‖ P_data + ε) of the generated rows' empirical distribution to the "
               "split's, with ε = 1e-7 added to every point that occurs in either and the sum "
               "renormalised (Celis et al. 2020, footnote 6, with ε on the occurring points "
               "instead of the whole domain): 0 for the data itself; a generated row absent from "
               "the data costs about log(1/ε) ≈ 16 per unit of mass."),
    # ---- filtering (Deng et al. 2023)
    MetricInfo("disclosivity", "Disclosivity", True, ANY_KIND,
               "max over proxy leaves and groups of |P(group | leaf) − P(group)|."),
    MetricInfo("imbalance", "Imbalance after filtering", True, ANY_KIND,
               "L2 distance of the accepted sample's group proportions to the target."),
    MetricInfo("acceptance_rate", "Acceptance rate", False, ANY_KIND,
               "Expected share of candidates the filter keeps."),
    MetricInfo("n_leaves", "Proxy leaves", True, ANY_KIND,
               "Number of leaves of the non-disclosive proxy tree."),
    # ---- noisy protected groups (Wang et al. 2020): one-sided constraint values minus the slack
    MetricInfo("true_violation", "Constraint violation on the true groups", True,
               CLASSIFICATION,
               "Largest one-sided rate-constraint value (overall rate − group rate − slack) on "
               "the true groups; ≤ 0 means every constraint holds."),
    MetricInfo("noisy_violation", "Constraint violation on the noisy groups", True,
               CLASSIFICATION,
               "The same one-sided constraint value on the observed noisy groups."),
    MetricInfo("robust_violation", "Worst-case violation over the noise model", True,
               CLASSIFICATION,
               "The exact worst case of the one-sided constraint values over every noise pattern "
               "the noise model allows (TV ball, or every consistent soft assignment): ≤ 0 "
               "certifies the constraints for the true groups."),
    # ---- multiaccurate proxies (Diana et al. 2022): two-sided group gaps of the downstream classif
    MetricInfo("true_group_gap", "Fairness gap on the true groups", True, CLASSIFICATION,
               "Largest |γ_k − γ| of the downstream classifier on the true groups: a group's "
               "rate minus the overall rate for its constraint (positive rate or error rate)."),
    MetricInfo("proxy_group_gap", "Fairness gap through the proxy", True, CLASSIFICATION,
               "The same gap measured with the proxy's soft group memberships."),
    MetricInfo("multiaccuracy_violation_in_sample", "Multiaccuracy violation (proxy rows)", True,
               ANY_KIND,
               "Largest audited |E[(ẑ − z)·h(x)]| relative to the group's share, on the rows the "
               "proxy was fitted on (what Algorithm 4 certifies against α)."),
    MetricInfo("multiaccuracy_violation_held_out", "Multiaccuracy violation (held-out rows)",
               True, ANY_KIND,
               "The same audit on the split's rows, which the proxy never saw."),
    MetricInfo("proxy_accuracy", "Proxy accuracy", False, ANY_KIND,
               "Accuracy of the proxy's thresholded prediction of the hardest group."),
    MetricInfo("proxy_auc", "Proxy AUC", False, ANY_KIND,
               "Area under the ROC curve of the proxy for the hardest group."),
    MetricInfo("proxy_mse", "Proxy squared error", True, ANY_KIND,
               "Mean (ẑ − z)² of the proxy for the hardest group."),
)  # fmt: skip
"""Every metric any method reports, declared once (DESIGN.md "Metric names")."""

ALL_METRIC_NAMES: tuple[str, ...] = tuple(REGISTRY)
HIGHER_IS_BETTER: frozenset[str] = frozenset(
    name for name, info in REGISTRY.items() if not info.lower_is_better
)


def metric_info(name: str) -> MetricInfo:
    """The declaration of metric ``name``; ``ValueError`` naming the known ones otherwise."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown metric {name!r}; known: {', '.join(ALL_METRIC_NAMES)}") from None


def metric_label(name: str) -> str:
    """Words for people, e.g. ``dp_diff`` -> "Demographic parity difference"; unknown names as
    they are."""
    info = REGISTRY.get(name)
    return info.label if info is not None else name


def standard_metrics(kind: str) -> tuple[str, ...]:
    """The shared evaluation's metrics for a task kind, in declaration order."""
    return tuple(n for n, i in REGISTRY.items() if i.standard and kind in i.kinds)


def undeclared(names) -> list[str]:
    """The names in ``names`` that the registry does not declare (should be empty)."""
    return [n for n in names if n not in REGISTRY]


def is_lower_better(name: str) -> bool:
    """Whether smaller values of metric ``name`` (any of ``ALL_METRIC_NAMES``) are better."""
    return metric_info(name).lower_is_better
