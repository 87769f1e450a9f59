"""Target leakage: a feature that alone predicts the target almost perfectly.

Design notes: docs/howto/upload.md, "Target leakage".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

#: Held-out AUC from which one feature alone is said to leak a binary target.
MIN_AUC = 0.99
#: Share of held-out rows whose value decides a binary target, from which it is said to leak.
MIN_SHARE = 0.99
#: Held-out R² (or squared correlation) from which one feature is said to leak a numeric target.
MIN_R2 = 0.99
#: The rarer class needs this share of the rows for a decided share to mean anything.
MIN_MINORITY = 0.02
#: Rows read per column at most (a seeded sample of larger tables).
MAX_ROWS = 20_000
#: Quantile bins of a numeric column with more distinct values than this.
BINS = 64


@dataclass(frozen=True)
class Leak:
    """A feature that alone predicts the target: the statistic and its held-out value."""

    column: str
    statistic: str
    value: float

    def sentence(self, target: str) -> str:
        return (
            f"Column {self.column!r} alone predicts the target {target!r} almost perfectly "
            f"({self.statistic} {self.value:.3f} on held-out rows): it probably records the "
            "outcome itself. Leave it out of the features unless it is known before the outcome."
        )


def find_leaks(
    frame: pd.DataFrame,
    features: Sequence[str],
    y: np.ndarray,
    kind: str,
    random_state: int = 0,
) -> tuple[Leak, ...]:
    """The features of ``frame`` that alone predict ``y`` (coded 0/1, or numbers for
    regression) almost perfectly, in feature order (see the module)."""
    rng = np.random.default_rng(random_state)
    rows = np.arange(len(frame))
    if len(rows) > MAX_ROWS:
        rows = np.sort(rng.choice(rows, MAX_ROWS, replace=False))
    if len(rows) < 20:
        return ()
    target = np.asarray(y, dtype=float)[rows]
    if not np.all(np.isfinite(target)) or np.ptp(target) == 0:
        return ()
    half = rng.permutation(len(rows)) % 2
    found = []
    for name in features:
        column = frame[name].iloc[rows]
        leak = _column_leak(str(name), column, target, half, kind)
        if leak is not None:
            found.append(leak)
    return tuple(found)


def _column_leak(
    name: str, column: pd.Series, y: np.ndarray, half: np.ndarray, kind: str
) -> Leak | None:
    numbers = _numbers(column)
    codes = _codes(column, numbers)
    score = _held_out_means(codes, y, half)
    if kind == "classification":
        auc = max(_auc(y, score), _ranked_auc(y, numbers))
        if auc >= MIN_AUC:
            return Leak(name, "AUC", auc)
        minority = min(y.mean(), 1 - y.mean())
        decided = float(np.mean((score >= 0.5) == (y == 1)))
        if minority >= MIN_MINORITY and decided >= MIN_SHARE:
            return Leak(name, "share of rows decided by the value", decided)
        return None
    r2 = _r2(y, score)
    if numbers is not None:
        r2 = max(r2, _squared_correlation(y, numbers))
    return Leak(name, "R²", r2) if r2 >= MIN_R2 else None


def _numbers(column: pd.Series) -> np.ndarray | None:
    """The column as floats (missing as NaN) when it is numeric and not boolean."""
    if not pd.api.types.is_numeric_dtype(column.dtype) or pd.api.types.is_bool_dtype(column.dtype):
        return None
    return column.to_numpy(dtype=float, na_value=np.nan)


def _codes(column: pd.Series, numbers: np.ndarray | None) -> np.ndarray:
    """An int code per row: its value, or its quantile bin for numbers with many values;
    missing values share one code."""
    if numbers is not None:
        present = numbers[np.isfinite(numbers)]
        if len(np.unique(present)) > BINS and len(present):
            edges = np.unique(np.quantile(present, np.linspace(0, 1, BINS + 1)[1:-1]))
            codes = np.searchsorted(edges, numbers, side="right")
            return np.where(np.isfinite(numbers), codes, len(edges) + 1)
    try:
        codes, _ = pd.factorize(column, use_na_sentinel=False)
    except TypeError:  # unhashable values: by their text
        codes, _ = pd.factorize(column.astype(str), use_na_sentinel=False)
    return np.asarray(codes)


def _held_out_means(codes: np.ndarray, y: np.ndarray, half: np.ndarray) -> np.ndarray:
    """Each row's prediction from the other half: the mean target of its code there (the other
    half's mean when the code does not occur there)."""
    size = int(codes.max()) + 1
    score = np.empty(len(y))
    for part in (0, 1):
        other = half != part
        sums = np.bincount(codes[other], weights=y[other], minlength=size)
        counts = np.bincount(codes[other], minlength=size)
        means = np.where(counts > 0, sums / np.maximum(counts, 1), y[other].mean())
        score[half == part] = means[codes[half == part]]
    return score


def _auc(y: np.ndarray, score: np.ndarray) -> float:
    """Area under the ROC curve of ``score`` for the 0/1 ``y`` (ties count half)."""
    positives = y == 1
    n_pos, n_neg = int(positives.sum()), int((~positives).sum())
    if n_pos == 0 or n_neg == 0:
        return 0.5
    ranks = pd.Series(score).rank(method="average").to_numpy()
    return float((ranks[positives].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def _ranked_auc(y: np.ndarray, numbers: np.ndarray | None) -> float:
    """The AUC of the raw numbers in either direction (missing ranked in the middle)."""
    if numbers is None:
        return 0.5
    filled = np.where(np.isfinite(numbers), numbers, np.nanmedian(numbers))
    auc = _auc(y, filled)
    return max(auc, 1 - auc)


def _r2(y: np.ndarray, prediction: np.ndarray) -> float:
    total = float(np.sum((y - y.mean()) ** 2))
    return 1 - float(np.sum((y - prediction) ** 2)) / total if total > 0 else 0.0


def _squared_correlation(y: np.ndarray, numbers: np.ndarray) -> float:
    """The larger squared Pearson and Spearman correlation of the present numbers with ``y``."""
    present = np.isfinite(numbers)
    if present.mean() < MIN_SHARE or np.ptp(numbers[present]) == 0:
        return 0.0
    a, b = numbers[present], y[present]
    pearson = np.corrcoef(a, b)[0, 1]
    spearman = np.corrcoef(pd.Series(a).rank().to_numpy(), pd.Series(b).rank().to_numpy())[0, 1]
    return float(np.nan_to_num(max(pearson**2, spearman**2)))
