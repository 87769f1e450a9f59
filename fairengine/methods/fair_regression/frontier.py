"""ε frontiers: a cached sweep plus the lower convex envelope on training data (spec §4.2)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from fairengine.data import Task


def convex_envelope(disparity: Any, loss: Any) -> np.ndarray:
    """Points on the lower-left convex envelope of (disparity, loss), both minimised.

    The authors' ``convex_env_train``: sort by disparity, keep points whose loss decreases,
    drop non-convex interior points. Mixing two Q's is linear in loss and at most linear in
    disparity, so the envelope is attainable (spec §4.2 [DERIVED]).

    Examples
    --------
    >>> convex_envelope([0.0, 0.1, 0.2, 0.3], [1.0, 0.9, 0.5, 0.45]).tolist()
    [True, False, True, True]
    """
    x, y = np.asarray(disparity, float), np.asarray(loss, float)
    order = np.lexsort((y, x))
    hull: list[int] = []
    best = np.inf
    for i in order:
        if not np.isfinite(x[i]) or not np.isfinite(y[i]) or y[i] >= best:
            continue
        best = y[i]
        while len(hull) >= 2:
            a, b = hull[-2], hull[-1]
            cross = (x[b] - x[a]) * (y[i] - y[a]) - (y[b] - y[a]) * (x[i] - x[a])
            if cross <= 0:  # b lies on or above the chord a–i
                hull.pop()
            else:
                break
        hull.append(i)
    mask = np.zeros(len(x), dtype=bool)
    mask[hull] = True
    return mask


def eps_frontier(
    train: Task,
    test: Task,
    eps_grid: Sequence[float],
    *,
    store: Any = None,
    n_jobs: int = 1,
    **knobs: Any,
) -> pd.DataFrame:
    """Sweep ε through :func:`fairengine.frontier.sweep` (cached in ``store``) and mark the
    convex envelope of the training points; test points inherit the train selection."""
    from fairengine.frontier import sweep

    grid = {"eps": list(eps_grid), **{k: [v] for k, v in knobs.items()}}
    points = sweep("fair_regression", train, test, grid, store=store, n_jobs=n_jobs).points
    points = points.copy()
    on_train = points["split"] == "train"
    mask = convex_envelope(points.loc[on_train, "sp_ks"], points.loc[on_train, "scaled_loss"])
    chosen = set(points.loc[on_train, "point_id"][mask])
    points["envelope"] = points["point_id"].isin(chosen)
    return points
