"""Euclidean projections onto the convex sets the dual players and the QPs live on, and the
projected-gradient dual player."""

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


class ProjectedGradientAscent:
    """No-regret multipliers of a Lagrangian game: online projected gradient ascent (Zinkevich
    2003), lambda_{t+1} = Proj(lambda_t + eta0 / sqrt(t) * g_t) onto {lambda >= 0,
    ||lambda||_2 <= lambda_max} (Deng et al. 2023, Algorithm 5).

    Parameters
    ----------
    dim : int
        Number of constraints (multipliers).
    step : float
        eta0, the base step; the step at round t is eta0 / sqrt(t).
    radius : float
        lambda_max, the l2 radius of the multiplier set (``inf`` for the plain orthant).

    Attributes
    ----------
    lambda_ : ndarray of shape (dim,)
        Current multipliers (start at 0).
    t_ : int
        Rounds played.

    Examples
    --------
    >>> player = ProjectedGradientAscent(2, step=1.0, radius=10.0)
    >>> player.update(np.array([1.0, -1.0])).tolist()
    [1.0, 0.0]
    """

    def __init__(self, dim: int, step: float = 1.0, radius: float = np.inf) -> None:
        if step <= 0:
            raise ValueError("step must be positive")
        self.step = float(step)
        self.radius = float(radius)
        self.lambda_ = np.zeros(int(dim))
        self.t_ = 0

    def update(self, gradient: np.ndarray) -> np.ndarray:
        """Take one ascent step along ``gradient`` (the constraint values) and project."""
        self.t_ += 1
        eta = self.step / np.sqrt(self.t_)
        self.lambda_ = project_orthant_ball(
            self.lambda_ + eta * np.asarray(gradient, float), self.radius
        )
        return self.lambda_
