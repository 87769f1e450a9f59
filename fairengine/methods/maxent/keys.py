"""Rows of level codes as mixed-radix integer keys: distinct rows and counts by 1-D sorts.

A row of level codes (c_1, ..., c_F) with c_f < |U_f| is packed into the integer
Σ_f c_f Π_{g>f} |U_g| — its rank in lexicographic order — so the distinct rows of a table come from
one sort of int64 keys instead of a structured row sort (issue 18: ``np.unique(axis=0)`` was a
third of a max-entropy run). When |Omega| exceeds 2⁶² (wide tables) the columns are packed into
several words, each < 2⁶², whose lexicographic order is still the rows' order. Keys are absolute
(they depend on the domain's sizes only), so keys of samples and of data rows can be compared.
"""

from __future__ import annotations

import numpy as np

#: Largest product of sizes packed into one int64 word.
_WORD = 1 << 62


def pack(codes: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Words (n, W) of mixed-radix keys, W = 1 unless Π sizes > 2⁶²; row order = word order.

    Needs 0 ≤ codes[:, f] < sizes[f] (see :func:`fitted_sizes`)."""
    codes = np.asarray(codes, dtype=np.int64)
    n, width = codes.shape
    words: list[np.ndarray] = []
    key, radix = np.zeros(n, dtype=np.int64), 1
    for j in range(width):
        size = int(sizes[j])
        if radix * size > _WORD:
            words.append(key)
            key, radix = np.zeros(n, dtype=np.int64), 1
        key = key * size + codes[:, j]
        radix *= size
    words.append(key)
    return np.column_stack(words)


def fitted_sizes(codes: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """``sizes`` raised where a code reaches it (never for a Domain's own codes)."""
    sizes = np.asarray(sizes, dtype=np.int64)
    codes = np.asarray(codes, dtype=np.int64)
    return np.maximum(sizes, codes.max(axis=0, initial=0) + 1) if codes.size else sizes


def unique_rows(
    codes: np.ndarray, sizes: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(distinct rows, inverse, counts) exactly as ``np.unique(codes, axis=0, return_inverse=True,
    return_counts=True)``: rows in lexicographic order."""
    codes = np.asarray(codes, dtype=np.int64)
    words = pack(codes, fitted_sizes(codes, sizes))
    if len(codes) == 0:
        return codes.reshape(0, codes.shape[1]), np.zeros(0, np.int64), np.zeros(0, np.int64)
    if words.shape[1] == 1:
        _, first, inverse, counts = np.unique(
            words[:, 0], return_index=True, return_inverse=True, return_counts=True
        )
        return codes[first], inverse.ravel(), counts
    order = np.lexsort(words.T[::-1])
    ranked = words[order]
    starts = np.r_[True, np.any(ranked[1:] != ranked[:-1], axis=1)]
    inverse = np.empty(len(codes), dtype=np.int64)
    inverse[order] = np.cumsum(starts) - 1
    first = np.flatnonzero(starts)
    counts = np.diff(np.r_[first, len(codes)])
    return codes[order[first]], inverse, counts


class RowCounts:
    """Distinct rows of a table with their counts, looked up by key (built once per split).

    ``lookup(codes)`` returns each row's count in the table (0 when absent).
    """

    def __init__(self, codes: np.ndarray, sizes: np.ndarray) -> None:
        self.sizes = fitted_sizes(codes, sizes)
        rows, _, counts = unique_rows(codes, self.sizes)
        self.total = int(counts.sum())
        self._words = pack(rows, self.sizes)
        self._counts = counts

    def lookup(self, codes: np.ndarray) -> np.ndarray:
        if len(self._counts) == 0 or len(codes) == 0:
            return np.zeros(len(codes), dtype=np.int64)
        codes = np.asarray(codes, dtype=np.int64)
        inside = np.all((codes >= 0) & (codes < self.sizes), axis=1)  # else never in the data
        words = pack(np.where(inside[:, None], codes, 0), self.sizes)
        if words.shape[1] == 1:
            keys = self._words[:, 0]
            at = np.minimum(np.searchsorted(keys, words[:, 0]), len(keys) - 1)
            found = np.where(keys[at] == words[:, 0], at, -1)
        else:
            index = {row.tobytes(): i for i, row in enumerate(self._words)}
            found = np.array([index.get(r.tobytes(), -1) for r in np.ascontiguousarray(words)])
        found = np.where(inside, found, -1)
        return np.where(found >= 0, self._counts[np.maximum(found, 0)], 0)
