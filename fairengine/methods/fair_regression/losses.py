"""Losses ℓ: [0,1] × [0,1] → [0,1], 1-Lipschitz (Agarwal et al. 2019 §2.1, Examples 1–2), their
discretisation, and the row-block evaluation of the (n, N) cost tables with numpy's exact sums.

All take targets and predictions already scaled to [0, 1]; predictions u ≥ 1 count as 1 (the
paper's convention ℓ(y, u) := ℓ(y, 1) for u ≥ 1). Design notes: ``docs/methods/fair_regression.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from fairengine.metrics.regression import LOGISTIC_C

LOSSES = ("square", "absolute", "logistic")


def _log1pexp(x: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, x)


def logistic_terms(u: np.ndarray, C: float = LOGISTIC_C) -> tuple[np.ndarray, np.ndarray]:
    """(ℓ(0, u), ℓ(1, u)) of Example 2: log(1 + exp(∓C(2u − 1))) / (2 log(1 + e^C))."""
    s = C * (2.0 * np.asarray(u, float) - 1.0)
    norm = 2.0 * float(_log1pexp(np.array(C)))
    return _log1pexp(s) / norm, _log1pexp(-s) / norm


def pointwise_loss(y: np.ndarray, u: np.ndarray, loss: str) -> np.ndarray:
    """ℓ(y, u) elementwise (broadcasting), u clipped to [0, 1].

    ``"square"``: (y − u)²/2 (Example 1, **with** the 1/2). ``"absolute"``: |y − u|.
    ``"logistic"``: y ℓ(1, u) + (1 − y) ℓ(0, u), Example 2 for y ∈ {0, 1}.
    [spec erratum] for fractional y the soft-label cross-entropy is used everywhere.
    """
    y = np.asarray(y, float)
    u = np.clip(np.asarray(u, float), 0.0, 1.0)
    if loss == "square":
        return 0.5 * (y - u) ** 2
    if loss == "absolute":
        return np.abs(y - u)
    if loss == "logistic":
        l0, l1 = logistic_terms(u)
        return y * l1 + (1.0 - y) * l0
    raise ValueError(f"unknown loss {loss!r}; choose one of {', '.join(LOSSES)}")


def group_loss_bound(constraint: str, loss: str, eps: float) -> float | None:
    """Bounded group loss's bound ζ = ε on the scale of the reported group losses (the scaled
    metrics): 2ζ for the square loss (ℓ carries the 1/2, the mean squared error does not), ζ for
    the absolute loss. None under statistical parity, and for the logistic loss (Example 2's ℓ
    is not the reported log loss)."""
    if constraint != "bounded_group_loss" or loss == "logistic":
        return None
    return eps * (2.0 if loss == "square" else 1.0)


def grid(n_levels: int) -> np.ndarray:
    """𝒵 = {j/N : j = 1..N}, built as j/N, not j·α ([spec erratum] §3.1: exact grid values)."""
    return np.arange(1, n_levels + 1) / n_levels


def bins(u: np.ndarray, n_levels: int) -> np.ndarray:
    """k = #{z ∈ 𝒵 : z ≤ u} ∈ {0..N}, i.e. ⌊u⌋_α = k α, after clipping u to [0, 1]."""
    return np.searchsorted(grid(n_levels), np.clip(np.asarray(u, float), 0.0, 1.0), side="right")


def representatives(n_levels: int) -> np.ndarray:
    """rep(k) = ⌊u⌋_α + α/2 for k < N and 1 for k = N (midpoint convention)."""
    return np.minimum((np.arange(n_levels + 1) + 0.5) / n_levels, 1.0)


def discretized_loss(y: np.ndarray, u: np.ndarray, loss: str, n_levels: int) -> np.ndarray:
    """ℓ_α(y, u) = ℓ(y, ⌊u⌋_α + α/2) (Eq. 5) with exact y."""
    return pointwise_loss(y, representatives(n_levels)[bins(u, n_levels)], loss)


def cost_matrix(y: np.ndarray, loss: str, n_levels: int) -> np.ndarray:
    """c(y_i, z_j) = N (ℓ(y, z + α/2) − ℓ(y, z − α/2)) (Eq. 9), shape (n, N), in [−1, 1].

    Computed from the definition with the u ≥ 1 convention, so the telescoping identity (15)
    holds exactly at u = 1 ([spec erratum] §2.4: c(y, 1) = (1 − y)/2 − α/8 for square loss).
    """
    z = grid(n_levels)
    alpha = 1.0 / n_levels
    y = np.asarray(y, float)[:, None]
    upper = pointwise_loss(y, np.minimum(z + alpha / 2, 1.0)[None, :], loss)
    lower = pointwise_loss(y, (z - alpha / 2)[None, :], loss)
    return n_levels * (upper - lower)


#: Rows per block of the row-wise passes.
BLOCK_ROWS = 4096
#: Entries of the largest range summed by numpy in one call (a power of two ≥ 128).
LEAF = 1 << 17


def row_blocks(n: int, rows: int = BLOCK_ROWS) -> Iterator[slice]:
    """Slices of consecutive rows covering 0..n."""
    for start in range(0, n, rows):
        yield slice(start, min(start + rows, n))


def pairwise_sum(entries: Callable[[int, int], np.ndarray], size: int, leaf: int = LEAF) -> float:
    """Σ of a virtual flat array of ``size`` float64 entries, ``entries(a, b)`` giving [a, b),
    summed exactly as ``np.add.reduce`` sums the materialised array."""
    return _total(entries, 0, int(size), leaf)


def _total(entries: Callable[[int, int], np.ndarray], start: int, n: int, leaf: int) -> float:
    """numpy's pairwise recursion on [start, start + n) (a module function, not a recursive
    closure: a closure referring to itself is a reference cycle that would keep the tables'
    owner alive until the garbage collector runs)."""
    if n <= leaf:
        return np.add.reduce(entries(start, start + n)) if n else np.float64(0.0)
    half = n // 2
    half -= half % 8
    return _total(entries, start, half, leaf) + _total(entries, start + half, n - half, leaf)


def table_entries(
    rows: Callable[[slice], np.ndarray], n_cols: int
) -> Callable[[int, int], np.ndarray]:
    """``entries(a, b)`` of the row-major flattening of a table given by row blocks."""

    def entries(a: int, b: int) -> np.ndarray:
        first, last = a // n_cols, -(-b // n_cols)
        block = np.ravel(rows(slice(first, last)))
        offset = first * n_cols
        return block[a - offset : b - offset]

    return entries


def table_mean(rows: Callable[[slice], np.ndarray], shape: tuple[int, int]) -> float:
    """``np.mean`` of the (n, N) table whose row blocks ``rows(slice)`` gives, bit for bit."""
    size = shape[0] * shape[1]
    return pairwise_sum(table_entries(rows, shape[1]), size) / size


def table_std(rows: Callable[[slice], np.ndarray], shape: tuple[int, int]) -> float:
    """``np.std`` (ddof = 0) of the table, bit for bit: numpy's two passes (mean, then the sum
    of squared deviations), each in row blocks."""
    size = shape[0] * shape[1]
    mean = table_mean(rows, shape)

    def squares(block: slice) -> np.ndarray:
        x = rows(block) - mean
        return np.multiply(x, x, out=x)

    return float(np.sqrt(pairwise_sum(table_entries(squares, shape[1]), size) / size))
