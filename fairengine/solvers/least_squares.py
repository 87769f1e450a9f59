"""The engine's one least-squares kernel.

Design notes: docs/architecture.md, "The least-squares kernel".
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_solve


class LeastSquares:
    """Weighted least squares on a fixed design, factorised once per weight vector.

    Parameters
    ----------
    X : ndarray (n, d)
        Rows.
    intercept : bool
        Append a column of ones (the intercept is the last coefficient).
    ridge : float or None
        Relative Tikhonov term of the normal equations; None = exact minimum-norm ``lstsq``.

    Examples
    --------
    >>> ls = LeastSquares(np.array([[0.0], [1.0], [2.0]]))
    >>> ls.coef(np.array([1.0, 3.0, 5.0])).round(6).tolist()
    [2.0, 1.0]
    """

    def __init__(
        self,
        X: np.ndarray,
        *,
        intercept: bool = True,
        ridge: float | None = 1e-8,
    ) -> None:
        X = np.asarray(X, float)
        self.design = np.hstack([X, np.ones((len(X), 1))]) if intercept else X
        self.ridge = None if ridge is None else float(ridge)
        self._factor: tuple[bytes | None, np.ndarray, np.ndarray] | None = None

    def weighted_design(self, weight: np.ndarray | None = None) -> np.ndarray:
        """W d (d itself for unit weights); cached with the factor on the normal-equation path."""
        if self.ridge is not None:
            return self._factorise(weight)[1]
        return self.design if weight is None else self.design * np.asarray(weight, float)[:, None]

    def _factorise(self, weight: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        key = None if weight is None else np.asarray(weight, float).tobytes()
        if self._factor is None or self._factor[0] != key:
            w = np.ones(len(self.design)) if weight is None else np.asarray(weight, float)
            weighted = self.design * w[:, None]
            gram = self.design.T @ weighted
            gram[np.diag_indices_from(gram)] += self.ridge * max(np.trace(gram) / len(gram), 1e-12)
            self._factor = (key, np.linalg.cholesky(gram), weighted)
        return self._factor[1], self._factor[2]

    def solve(self, rhs: np.ndarray, weight: np.ndarray | None = None) -> np.ndarray:
        """β = (dᵀ W d + ridge)⁻¹ rhs for a given right-hand side dᵀ W t (normal equations)."""
        if self.ridge is None:
            raise ValueError("solve(rhs) needs the normal equations: a numeric ridge, not None")
        chol, _ = self._factorise(weight)
        return cho_solve((chol, True), rhs)

    def coef(self, target: np.ndarray, weight: np.ndarray | None = None) -> np.ndarray:
        """β for target(s) t of shape (n,) or (n, k)."""
        target = np.asarray(target, float)
        if self.ridge is not None:
            _, weighted = self._factorise(weight)
            return self.solve(weighted.T @ target, weight)
        if weight is None:
            return np.linalg.lstsq(self.design, target, rcond=None)[0]
        root = np.sqrt(np.asarray(weight, float))
        scaled = target * (root if target.ndim == 1 else root[:, None])
        return np.linalg.lstsq(self.design * root[:, None], scaled, rcond=None)[0]

    def fitted(self, target: np.ndarray, weight: np.ndarray | None = None) -> np.ndarray:
        """d β: the fitted values on the design's rows."""
        return self.design @ self.coef(target, weight)


#: Rows per block of the weighted Gram products of :class:`InterceptLeastSquares`.
GRAM_BLOCK = 8192


class InterceptLeastSquares:
    """``LeastSquares(X, ridge=ridge)`` (the normal equations, ``intercept=True``) without
    materialising [X, 1] or a weighted copy: the Gram matrix is assembled from XᵀWX (in row
    blocks of :data:`GRAM_BLOCK`), XᵀW1 and 1ᵀW1; memory X plus O(GRAM_BLOCK · d). The
    coefficients agree with :class:`LeastSquares` up to floating-point rounding.

    Examples
    --------
    >>> ls = InterceptLeastSquares(np.array([[0.0], [1.0], [2.0]]))
    >>> ls.coef(np.array([1.0, 3.0, 5.0])).round(6).tolist()
    [2.0, 1.0]
    """

    def __init__(self, X: np.ndarray, *, ridge: float = 1e-8) -> None:
        self.rows = np.asarray(X, float)
        self.ridge = float(ridge)
        self._factor: tuple[bytes | None, np.ndarray] | None = None

    def _cholesky(self, weight: np.ndarray | None) -> np.ndarray:
        key = None if weight is None else np.asarray(weight, float).tobytes()
        if self._factor is None or self._factor[0] != key:
            X, d = self.rows, self.rows.shape[1]
            w = np.ones(len(X)) if weight is None else np.asarray(weight, float)
            gram = np.empty((d + 1, d + 1))
            if weight is None:
                gram[:d, :d] = X.T @ X
            else:
                gram[:d, :d] = 0.0
                for start in range(0, len(X), GRAM_BLOCK):
                    block = X[start : start + GRAM_BLOCK]
                    gram[:d, :d] += block.T @ (block * w[start : start + GRAM_BLOCK, None])
            gram[:d, d] = gram[d, :d] = X.T @ w
            gram[d, d] = w.sum()
            gram[np.diag_indices_from(gram)] += self.ridge * max(np.trace(gram) / (d + 1), 1e-12)
            self._factor = (key, np.linalg.cholesky(gram))
        return self._factor[1]

    def coef(self, target: np.ndarray, weight: np.ndarray | None = None) -> np.ndarray:
        """β (last entry the intercept) for target(s) t of shape (n,) or (n, k)."""
        target = np.asarray(target, float)
        chol = self._cholesky(weight)
        if weight is not None:
            w = np.asarray(weight, float)
            target = target * (w if target.ndim == 1 else w[:, None])
        rhs = np.concatenate([self.rows.T @ target, target.sum(axis=0, keepdims=True)])
        return cho_solve((chol, True), rhs)
