"""Pareto sets: which points of a two-metric scatter no other point beats on both axes."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike


def pareto_mask(
    x: ArrayLike, y: ArrayLike, *, minimize: Sequence[bool] = (True, True)
) -> np.ndarray:
    """Non-dominated points of a two-objective scatter, in O(n log n).

    A point is dominated when another point is at least as good on both axes and strictly
    better on at least one ("good" is smaller on a minimised axis, larger on a maximised one).

    Parameters
    ----------
    x, y : array-like of float, shape (n,)
        The two objectives (e.g. a fairness gap and an error rate).
    minimize : pair of bool
        For each axis, whether smaller is better. Default: minimise both.

    Returns
    -------
    numpy.ndarray of bool, shape (n,)
        True for the points on the Pareto front. Exact duplicates of a front point are all on
        the front (neither is strictly better); a point with a NaN coordinate never is, and
        never dominates another point.

    Examples
    --------
    >>> pareto_mask([0.1, 0.2, 0.3], [0.3, 0.1, 0.2]).tolist()
    [True, True, False]
    >>> pareto_mask([0.1, 0.2], [0.7, 0.9], minimize=(True, False)).tolist()
    [True, True]
    """
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.ndim != 1 or x.shape != y.shape:
        raise ValueError(f"x and y must be 1-D and of equal length; got {x.shape} and {y.shape}.")
    flags = tuple(bool(m) for m in minimize)
    if len(flags) != 2:
        raise ValueError(f"minimize must be a pair of booleans; got {minimize!r}.")
    # Flip maximised axes so that both are minimised.
    x, y = (x if flags[0] else -x), (y if flags[1] else -y)
    mask = np.zeros(x.shape, dtype=bool)
    valid = np.flatnonzero(~(np.isnan(x) | np.isnan(y)))
    if valid.size == 0:
        return mask
    xs, ys = x[valid], y[valid]
    order = np.lexsort((ys, xs))  # by x, then y
    xs, ys = xs[order], ys[order]
    # Start index of each run of equal x; within a run the first point has the smallest y.
    new_run = np.empty(xs.size, dtype=bool)
    new_run[0] = True
    new_run[1:] = xs[1:] != xs[:-1]
    run_start = np.maximum.accumulate(np.where(new_run, np.arange(xs.size), 0))
    # Smallest y among points with strictly smaller x (none for the first run).
    running_min = np.minimum.accumulate(ys)
    best_before = np.full(xs.size, np.inf)
    has_before = run_start > 0
    best_before[has_before] = running_min[run_start[has_before] - 1]
    # Not dominated: the best y of its x-run (ties with it allowed), and strictly better than
    # every point further left (an equal y further left would dominate it).
    front = (ys == ys[run_start]) & (~has_before | (ys < best_before))
    mask[valid[order[front]]] = True
    return mask
