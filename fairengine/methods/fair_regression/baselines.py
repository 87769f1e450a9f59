"""Baselines of Agarwal et al. 2019, §6 (unconstrained regression and SEO), and the convex
envelope of the (disparity, loss) points a mixture of fitted predictors can reach."""

from __future__ import annotations

from typing import Any

import numpy as np

from fairengine.methods.fair_regression.learners import Component, LinearLeastSquares
from fairengine.methods.fair_regression.losses import row_blocks
from fairengine.methods.fair_regression.reductions import GroupLossReduction


def unconstrained(
    Z: np.ndarray, y: np.ndarray, codes: np.ndarray, *, loss: str, base: str
) -> Component:
    """argmin_f loss(f) over the same class: the BGL best response at λ = 0."""
    problem = GroupLossReduction(Z, y, codes, 1.0, loss=loss, base=base)
    return problem.best_response(np.zeros(problem.dim)).payload


class SEO:
    """Zero-correlation least squares (Johnson et al. 2016, the paper's SEO baseline).

    [spec erratum] §4.2: the authors' code (OLS with A's coefficient dropped) is not exactly
    zero-correlation. Here X is centred within each group (residualised on [1, A]) before OLS,
    so the predictions are exactly uncorrelated with A on the training data; prediction uses
    the training group means of X, hence A at prediction time.
    """

    def fit(self, Z: np.ndarray, y: np.ndarray, codes: np.ndarray) -> SEO:
        n_groups = int(codes.max()) + 1
        counts = np.bincount(codes, minlength=n_groups)[:, None]
        self.means_ = (
            np.vstack([np.bincount(codes, weights=col, minlength=n_groups) for col in Z.T]).T
            / counts
        )
        self.component_ = LinearLeastSquares(self._centred(Z, codes)).fit(y)
        return self

    def _centred(self, Z: np.ndarray, codes: np.ndarray) -> np.ndarray:
        """Z − (training mean of the row's group), written in row blocks into one array (no
        (n, d) temporary of the gathered means)."""
        Z = np.asarray(Z, float)
        codes = np.clip(codes, 0, len(self.means_) - 1)
        out = np.empty_like(Z)
        for rows in row_blocks(len(Z)):
            np.subtract(Z[rows], self.means_[codes[rows]], out=out[rows])
        return out

    def predict(self, Z: np.ndarray, codes: np.ndarray) -> np.ndarray:
        """Predictions in row blocks (no centred copy of Z alive)."""
        Z = np.asarray(Z, float)
        out = np.empty(len(Z))
        for rows in row_blocks(len(Z)):
            out[rows] = self.component_.predict(self._centred(Z[rows], codes[rows]))
        return out


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
