"""The dual Hessian's data term Σ_i r_i α_i α_iᵀ from level codes: weighted contingency tables.

Design notes: ``docs/methods/maxent.md``."""

from __future__ import annotations

import numpy as np

#: Joint levels of a group of consecutive features (a pair's table has ≤ max_cells² cells).
#: 256 (four 4-level columns) was the fastest of 64, 256 and 1024 on both the wide table and the
#: 13-column one (numbers in bench/RESULTS.md): smaller groups mean more pairs, larger ones
#: tables that leave the L2 cache.
MAX_CELLS = 256
#: Cost model (seconds): a dense float64 FMA of the blocked rank-k update, one scatter-add of
#: a pair's bincount (key included), one cell of a pair's table (zeroing, Eᵀ T E) and the fixed
#: cost of a pair (numpy calls); measured on the 2-core bench machine, single-threaded BLAS
#: (bench/bench_scaling.py's 13-column and wide tables).
_FMA, _SCATTER, _CELL, _PAIR = 6e-11, 3e-9, 3e-10, 2.5e-5


def feature_groups(sizes: np.ndarray, max_cells: int = MAX_CELLS) -> list[tuple[int, int]]:
    """(first, end) features of each group: consecutive features whose joint levels ≤
    ``max_cells`` (a feature with more levels forms a group of its own)."""
    groups, start, cells = [], 0, 1
    for f, size in enumerate(int(s) for s in sizes):
        if f > start and cells * size > max_cells:
            groups.append((start, f))
            start, cells = f, 1
        cells *= size
    if len(sizes):
        groups.append((start, len(sizes)))
    return groups


def use_pair_moments(n_rows: int, sizes: np.ndarray, max_cells: int = MAX_CELLS) -> bool:
    """Whether :class:`PairMoments` is expected to be faster than the dense update."""
    sizes = np.asarray(sizes, dtype=np.int64)
    d = int((sizes - 1).sum())
    groups = feature_groups(sizes, max_cells)
    cells = np.array([float(np.prod(sizes[a:b])) for a, b in groups])
    widths = np.array([float((sizes[a:b] - 1).sum()) for a, b in groups])
    upper = np.triu(np.ones((len(groups), len(groups))))  # the pairs g ≤ h
    table_cells = (upper * np.outer(cells, cells)).sum()
    lifts = (upper * (np.outer(widths * cells, cells) + np.outer(widths, cells * widths))).sum()
    tables = upper.sum() * (n_rows * _SCATTER + _PAIR) + table_cells * _CELL + lifts * _FMA
    return bool(tables < n_rows * d * (d + 1) / 2 * _FMA)


class PairMoments:
    """Σ_i r_i α_i α_iᵀ (d, d) of reference-coded rows given as level codes (M, F).

    Parameters
    ----------
    codes : ndarray (M, F)
        Level codes of the rows, 0 ≤ codes[:, f] < sizes[f].
    sizes : array of int
        |U_f| per feature; feature f owns coordinates offsets[f] .. offsets[f] + |U_f| − 2.
    max_cells : int
        Joint levels per group.
    """

    def __init__(self, codes: np.ndarray, sizes: np.ndarray, max_cells: int = MAX_CELLS) -> None:
        sizes = np.asarray(sizes, dtype=np.int64)
        codes = np.asarray(codes)
        offsets = np.concatenate([[0], np.cumsum(sizes - 1)])
        self.d = int(offsets[-1])
        self.codes: list[np.ndarray] = []  # each group's joint code per row (uint8 mostly)
        self.cells: list[int] = []
        self.lift: list[np.ndarray] = []  # E_g (cells, d_g): joint level ↦ its 0/1 coordinates
        self.span: list[slice] = []
        for a, b in feature_groups(sizes, max_cells):
            part = sizes[a:b]
            joint = np.zeros(len(codes), dtype=np.intp)
            for f in range(a, b):
                joint = joint * int(sizes[f]) + codes[:, f].astype(np.intp)
            levels = np.stack(np.unravel_index(np.arange(int(np.prod(part))), part), axis=1)
            lift = np.zeros((len(levels), int(offsets[b] - offsets[a])))
            for j, f in enumerate(range(a, b)):
                on = np.flatnonzero(levels[:, j] > 0)
                lift[on, offsets[f] - offsets[a] + levels[on, j] - 1] = 1.0
            self.codes.append(joint.astype(np.min_scalar_type(len(levels) - 1)))  # compact
            self.cells.append(len(levels))
            self.lift.append(lift)
            self.span.append(slice(int(offsets[a]), int(offsets[b])))

    def second_moment(self, r: np.ndarray) -> np.ndarray:
        """Σ_i r_i α_i α_iᵀ for row weights ``r`` (M,)."""
        r = np.asarray(r, dtype=float)
        out = np.zeros((self.d, self.d))
        key = np.empty(len(r), dtype=np.intp)
        n = len(self.codes)
        for g in range(n):
            lift_g, span_g = self.lift[g], self.span[g]
            own = np.bincount(self.codes[g], weights=r, minlength=self.cells[g])
            out[span_g, span_g] = lift_g.T @ (own[:, None] * lift_g)
            scaled: dict[int, np.ndarray] = {}  # joint code x the partner's cells
            for h in range(g + 1, n):
                cells = self.cells[h]
                if cells not in scaled:
                    scaled[cells] = self.codes[g].astype(np.intp) * cells
                np.add(scaled[cells], self.codes[h], out=key)
                table = np.bincount(key, weights=r, minlength=self.cells[g] * self.cells[h])
                block = lift_g.T @ table.reshape(self.cells[g], self.cells[h]) @ self.lift[h]
                out[span_g, self.span[h]] = block
                out[self.span[h], span_g] = block.T
        return out
