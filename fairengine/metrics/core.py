"""Row validation (:func:`prepare_rows`), the per-group weighted mean behind every rate
(:func:`group_means`) and the engine's one mapping of a rate to the rows it averages over
(:data:`RATE_KINDS`, :func:`rate_base`, :data:`RATE_SIGN`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Rows:
    """Validated inputs: float arrays (None if not given), codes 0..G-1, labels, weights."""

    y_true: np.ndarray | None
    y_pred: np.ndarray | None
    codes: np.ndarray
    group_labels: Sequence  # the sorted labels as found; ``labels`` is their pandas Index
    weight: np.ndarray

    @property
    def n_groups(self) -> int:
        return len(self.group_labels)

    @property
    def labels(self) -> pd.Index:
        import pandas as pd

        return pd.Index(self.group_labels)


def as_column(name: str, values, n: int | None) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one value per row (1-D), got shape {arr.shape}")
    if n is not None and arr.size != n:
        raise ValueError(f"{name} has {arr.size} rows but groups has {n}; pass one value per row")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinite values; drop or impute those rows")
    return arr


def prepare_rows(y_true, y_pred, groups, sample_weight=None) -> Rows:
    """Validate lengths and values, factorize ``groups`` (sorted labels) and drop 0-weight rows."""
    import pandas as pd  # lazy: metric names load without pandas

    if groups is None:  # overall metrics may be called without groups
        ref = y_pred if y_pred is not None else y_true
        if ref is None:
            raise ValueError("groups is required (one group label per row)")
        groups = np.zeros(len(ref), dtype=int)
    small = _small_codes(groups)
    if small is not None:  # a task's group codes: the same codes and labels, without pandas
        codes, labels = small
    else:
        series = (
            groups
            if isinstance(groups, pd.Series)
            else pd.Series(groups if isinstance(groups, np.ndarray) else list(groups), dtype=None)
        )
        try:
            codes, labels = pd.factorize(series, sort=True)
        except TypeError:  # labels of mixed, unorderable types
            codes, labels = pd.factorize(series, sort=False)
    n = len(codes)
    if n == 0:
        raise ValueError("groups is empty: metrics need at least one row")
    if (codes < 0).any():
        raise ValueError("groups contains missing values (NaN/None); drop or label those rows")
    yt = None if y_true is None else as_column("y_true", y_true, n)
    yp = None if y_pred is None else as_column("y_pred", y_pred, n)
    w = np.ones(n) if sample_weight is None else as_column("sample_weight", sample_weight, n)
    if (w < 0).any() or w.sum() <= 0:
        raise ValueError("sample_weight must be non-negative with a positive sum")
    totals = np.bincount(codes, weights=w, minlength=len(labels))
    if (totals == 0).any():  # drop groups of 0-weight rows; other 0-weight rows are inert
        keep = totals[codes] > 0
        kept_labels, codes = np.unique(codes[keep], return_inverse=True)
        labels, w = pd.Index(labels[kept_labels]), w[keep]
        yt, yp = (None if a is None else a[keep] for a in (yt, yp))
    return Rows(yt, yp, codes.astype(np.intp), labels, w)


def _small_codes(groups) -> tuple[np.ndarray, np.ndarray] | None:
    """``pd.factorize(groups, sort=True)`` of a 1-D array of non-negative integers below a few
    times its length (a task's group codes) by counting, a few times faster on the
    bootstrap's thousands of calls; None for any other labels."""
    if not isinstance(groups, np.ndarray) or groups.ndim != 1 or groups.dtype.kind not in "iu":
        return None
    if groups.size == 0 or groups.min() < 0 or groups.max() > 4 * groups.size + 1024:
        return None
    present = np.bincount(groups) > 0
    position = np.cumsum(present) - 1
    return position[groups].astype(np.intp), np.flatnonzero(present).astype(groups.dtype)


def check_unit(name: str, arr: np.ndarray, *, binary: bool = False) -> None:
    ok = np.isin(arr, (0.0, 1.0)).all() if binary else ((arr >= 0) & (arr <= 1)).all()
    if not ok:
        raise ValueError(f"{name} must be {'0/1 labels' if binary else 'in [0, 1]'}")


def classification_rows(y_true, y_pred, groups, sample_weight) -> Rows:
    rows = prepare_rows(y_true, y_pred, groups, sample_weight)
    check_unit("y_true", rows.y_true, binary=True)
    check_unit("y_pred", rows.y_pred)
    return rows


def group_means(values: np.ndarray, rows: Rows, mask: np.ndarray | None = None) -> np.ndarray:
    """Weighted mean of ``values`` per group over rows where ``mask``; NaN if a group has none.

    mean_z = sum_{i: z_i = z, mask_i} w_i v_i / sum_{i: z_i = z, mask_i} w_i
    """
    w = rows.weight if mask is None else rows.weight * mask
    den = np.bincount(rows.codes, weights=w, minlength=rows.n_groups)
    num = np.bincount(rows.codes, weights=w * values, minlength=rows.n_groups)
    return np.divide(num, den, out=np.full(rows.n_groups, np.nan), where=den > 0)


def spread(rates: np.ndarray) -> float:
    """max - min over groups with a defined rate (NaN if no group has one)."""
    rates = rates[~np.isnan(rates)]
    return float(rates.max() - rates.min()) if rates.size else float("nan")


def min_max_ratio(rates: np.ndarray) -> float:
    """min / max over groups; 1.0 when every rate is 0 (0/0: nobody is favoured)."""
    top = rates.max()
    return float(rates.min() / top) if top > 0 else 1.0


def correct(rows: Rows) -> np.ndarray:
    """P(y_hat = y) per row, y p + (1 - y)(1 - p): the indicator 1[y_hat = y] if p is 0/1."""
    return rows.y_true * rows.y_pred + (1 - rows.y_true) * (1 - rows.y_pred)


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
