"""Row-block evaluation of the (n, N) cost tables with numpy's exact sums.

Design notes: ``docs/methods/fair_regression.md``."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

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
