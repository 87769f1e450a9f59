"""Rows of level codes as mixed-radix integer keys: distinct rows and counts by hashing.

Design notes: docs/architecture.md, "Row keys".
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: Largest product of sizes packed into one int64 word.
_WORD = 1 << 62
#: Code cells packed per block (bounds the int64 copy of compact codes).
_CELLS = 1 << 18


def _word_columns(sizes: np.ndarray) -> list[tuple[int, int, np.ndarray]]:
    """(first column, end column, radix multipliers) of each word: a word's product < 2⁶²."""
    groups, start, radix = [], 0, 1
    for j, size in enumerate(int(s) for s in sizes):
        if radix * size > _WORD:
            groups.append((start, j))
            start, radix = j, 1
        radix *= size
    groups.append((start, len(sizes)))
    out = []
    for a, b in groups:
        mult = np.ones(b - a, dtype=np.int64)
        for j in range(b - a - 2, -1, -1):
            mult[j] = mult[j + 1] * int(sizes[a + j + 1])
        out.append((a, b, mult))
    return out


def pack(codes: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Words (n, W) of mixed-radix keys, W = 1 unless Π sizes > 2⁶²; row order = word order.

    Needs 0 ≤ codes[:, f] < sizes[f] (see :func:`fitted_sizes`). One integer matrix product per
    word (exact: every partial sum stays below 2⁶²)."""
    codes = np.asarray(codes)
    n = len(codes)
    groups = _word_columns(np.asarray(sizes, dtype=np.int64))
    words = np.empty((n, len(groups)), dtype=np.int64)
    step = max(1, _CELLS // max(codes.shape[1], 1))  # rows per block: no (n, F) int64 copy
    for w, (a, b, mult) in enumerate(groups):
        for lo in range(0, n, step):
            block = codes[lo : lo + step, a:b].astype(np.int64, copy=False)
            words[lo : lo + step, w] = block @ mult if b > a else 0
    return words


def fitted_sizes(codes: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """``sizes`` raised where a code reaches it (never for a Domain's own codes)."""
    sizes = np.asarray(sizes, dtype=np.int64)
    codes = np.asarray(codes)
    return np.maximum(sizes, codes.max(axis=0, initial=0) + 1) if codes.size else sizes


def first_rows(factor: np.ndarray) -> np.ndarray:
    """The first row of each code of :func:`pandas.factorize` (codes appear in increasing order,
    so the running maximum steps up exactly at each code's first row)."""
    if len(factor) == 0:
        return np.zeros(0, dtype=np.int64)
    top = np.maximum.accumulate(factor)
    return np.flatnonzero(np.r_[True, top[1:] > top[:-1]])


def _row_ids(words: np.ndarray) -> np.ndarray:
    """One id per distinct row of ``words``, numbered in order of first appearance (hashing)."""
    ids = pd.factorize(words[:, 0])[0].astype(np.int64)
    for w in range(1, words.shape[1]):  # combine word by word: ids, word ids < n, so no overflow
        other = pd.factorize(words[:, w])[0].astype(np.int64)
        ids = pd.factorize(ids * (int(other.max(initial=0)) + 1) + other)[0].astype(np.int64)
    return ids


def unique_rows(codes: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(distinct rows, inverse, counts) exactly as ``np.unique(codes, axis=0, return_inverse=True,
    return_counts=True)``: rows in lexicographic order, in the dtype of ``codes``."""
    codes = np.asarray(codes)
    if len(codes) == 0:
        width = codes.shape[1]
        return np.zeros((0, width), np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    words = pack(codes, fitted_sizes(codes, sizes))
    ids = _row_ids(words)
    first = first_rows(ids)  # first row of each id, ids in order of appearance
    order = np.lexsort(words[first].T[::-1])  # sort the M distinct rows only
    rank = np.empty(len(first), dtype=np.int64)
    rank[order] = np.arange(len(first))
    inverse = rank[ids]
    counts = np.bincount(inverse, minlength=len(first))
    return codes[first[order]], inverse, counts


#: Odd 64-bit multipliers of the row hash (fixed: a table's hashes are reproducible).
_HASH = np.random.default_rng(18).integers(1, 1 << 62, size=64, dtype=np.int64) * 2 + 1


def _hash(words: np.ndarray) -> np.ndarray:
    """One int64 per row of several key words (wrapping arithmetic: a hash, not a key)."""
    out = np.zeros(len(words), dtype=np.int64)
    with np.errstate(over="ignore"):
        for w in range(words.shape[1]):
            out = (out ^ (out >> 29)) * _HASH[w % len(_HASH)] + words[:, w]
    return out


class RowIndex:
    """Position of rows in a table of distinct rows in lexicographic order (``unique_rows``'s).

    ``find(codes)`` returns each row's position in the table, −1 when absent.
    """

    def __init__(self, rows: np.ndarray, sizes: np.ndarray) -> None:
        self.sizes = fitted_sizes(rows, sizes)
        self._words = pack(rows, self.sizes)
        self._single = self._words.shape[1] == 1
        # several words: one 64-bit hash per row (checked against the words on every hit);
        # keys not in order (hashes, or a table restored from a file): a sorted copy is searched
        self._keys = self._words[:, 0] if self._single else _hash(self._words)
        self._order = None
        if np.any(self._keys[1:] < self._keys[:-1]):  # unsorted (restored) table or hashes
            self._order = np.argsort(self._keys, kind="stable")
            self._keys = self._keys[self._order]
        self._index: dict[bytes, int] | None = None  # hashes that collide: a dictionary
        if not self._single and np.any(self._keys[1:] == self._keys[:-1]):
            self._index = {row.tobytes(): i for i, row in enumerate(self._words)}

    def find(self, codes: np.ndarray) -> np.ndarray:
        codes = np.asarray(codes)
        if len(self._words) == 0 or len(codes) == 0:
            return np.full(len(codes), -1, dtype=np.int64)
        inside = np.all((codes >= 0) & (codes < self.sizes), axis=1)  # else never in the table
        words = pack(np.where(inside[:, None], codes, 0), self.sizes)
        if self._index is not None:
            index = self._index
            found = np.array([index.get(r.tobytes(), -1) for r in np.ascontiguousarray(words)])
            return np.where(inside, found, -1).astype(np.int64)
        keys, query = self._keys, words[:, 0] if self._single else _hash(words)
        at = np.minimum(np.searchsorted(keys, query), len(keys) - 1)
        position = at if self._order is None else self._order[at]
        hit = keys[at] == query
        if not self._single:  # a hash hit is a row only if every word agrees
            hit &= np.all(self._words[position] == words, axis=1)
        return np.where(inside & hit, position, -1).astype(np.int64)


class RowCounts:
    """Distinct rows of a table with their counts, looked up by key (built once per split).

    ``lookup(codes)`` returns each row's count in the table (0 when absent).
    """

    def __init__(self, codes: np.ndarray, sizes: np.ndarray) -> None:
        self.sizes = fitted_sizes(codes, sizes)
        rows, _, counts = unique_rows(codes, self.sizes)
        self.total = int(counts.sum())
        self._index = RowIndex(rows, self.sizes)
        self._counts = counts

    @property
    def n_distinct(self) -> int:
        """Number of distinct rows (the table's support)."""
        return len(self._counts)

    def lookup(self, codes: np.ndarray) -> np.ndarray:
        found = self._index.find(codes)
        if len(self._counts) == 0:
            return np.zeros(len(found), dtype=np.int64)
        return np.where(found >= 0, self._counts[np.maximum(found, 0)], 0)
