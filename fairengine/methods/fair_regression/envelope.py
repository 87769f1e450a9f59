"""The lower-left convex envelope of (disparity, loss) points: the trade-offs a mixture of the
fitted predictors can reach. The cached ε sweep that marks it sits above the methods
(:func:`fairengine.sweeps.fair_regression.eps_points`)."""

from __future__ import annotations

from typing import Any

import numpy as np


def convex_envelope(disparity: Any, loss: Any) -> np.ndarray:
    """Points on the lower-left convex envelope of (disparity, loss), both minimised.

    The authors' ``convex_env_train``: sort by disparity, keep points whose loss decreases,
    drop non-convex interior points. Mixing two Q's is linear in loss and at most linear in
    disparity, so the envelope is attainable.

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
