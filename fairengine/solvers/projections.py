"""Euclidean projections onto the convex sets the dual players and the QPs live on."""

from __future__ import annotations

import numpy as np


def project_simplex(v: np.ndarray, total: float = 1.0) -> np.ndarray:
    """Euclidean projection of ``v`` onto the scaled simplex {x >= 0, sum x = total}.

    Sort-and-threshold algorithm (Held et al. 1974; Duchi et al. 2008): x = max(v - nu, 0) with
    the scalar nu chosen so that the entries sum to ``total``.

    Parameters
    ----------
    v : ndarray of shape (n,)
    total : float
        Positive sum of the result.

    Returns
    -------
    ndarray of shape (n,)

    Examples
    --------
    >>> project_simplex(np.array([0.5, 0.5, 1.0])).round(3).tolist()
    [0.25, 0.25, 0.5]
    """
    v = np.asarray(v, dtype=float).ravel()
    if total <= 0:
        raise ValueError("total must be positive")
    u = np.sort(v)[::-1]
    cumulative = np.cumsum(u) - total
    index = np.arange(1, v.size + 1)
    rho = np.nonzero(u - cumulative / index > 0)[0][-1]
    nu = cumulative[rho] / (rho + 1)
    return np.maximum(v - nu, 0.0)


def project_l1_ball(v: np.ndarray, radius: float = 1.0) -> np.ndarray:
    """Euclidean projection of ``v`` onto the l1 ball {x : ||x||_1 <= radius}.

    Inside the ball ``v`` is returned unchanged; outside, sign(v) * P_simplex(|v|, radius).
    """
    v = np.asarray(v, dtype=float).ravel()
    if radius < 0:
        raise ValueError("radius must be non-negative")
    if radius == 0:
        return np.zeros_like(v)
    if np.abs(v).sum() <= radius:
        return v.copy()
    return np.sign(v) * project_simplex(np.abs(v), radius)


def project_orthant_ball(v: np.ndarray, radius: float = np.inf) -> np.ndarray:
    """Euclidean projection onto {x >= 0, ||x||_2 <= radius}.

    Clipping onto the orthant and then scaling into the ball is the exact projection onto the
    intersection (the auditor's feasible set in Algorithm 3).
    """
    x = np.maximum(np.asarray(v, dtype=float).ravel(), 0.0)
    norm = float(np.linalg.norm(x))
    if np.isfinite(radius) and norm > radius:
        x *= radius / norm
    return x
