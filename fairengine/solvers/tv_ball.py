"""Exact Euclidean projection onto {p in simplex : ½||p - c||_1 <= radius} (the ball of Wang et
al. 2020's DRO adversary): p_i = max(0, c_i + soft(v_i - ν - c_i, μ)), the monotone scalar
equations sum p = 1 (ν) and ||p - c||_1 = 2·radius (μ >= 0) solved by nested ``brentq``."""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq

from fairengine.solvers.projections import project_simplex

_XTOL = 1e-14


def _point(v: np.ndarray, c: np.ndarray, nu: float, mu: float) -> np.ndarray:
    """max(0, c + sign(d)·max(|d| − μ, 0)) with d = v − ν − c, in place on two arrays
    (copysign(a, d) is sign(d)·a exactly for a >= 0, signed zeros included)."""
    d = v - nu
    d -= c
    a = np.abs(d)
    a -= mu
    np.maximum(a, 0.0, out=a)
    np.copysign(a, d, out=a)
    a += c
    return np.maximum(a, 0.0, out=a)


def _nu(v: np.ndarray, c: np.ndarray, mu: float) -> float:
    lo = float(np.min(v - c)) - mu - 1.0  # every p_i >= c_i + 1: sum > 1
    hi = float(np.max(v)) + mu + 1.0  # every p_i = 0 or c_i with d < -mu: sum = 0
    return brentq(lambda nu: _point(v, c, nu, mu).sum() - 1.0, lo, hi, xtol=_XTOL, rtol=1e-15)


def project_tv_ball(v: np.ndarray, center: np.ndarray, radius: float) -> np.ndarray:
    """Euclidean projection of ``v`` onto {p in simplex : ½||p - center||_1 <= radius}.

    Parameters
    ----------
    v : ndarray of shape (n,)
    center : ndarray of shape (n,)
        A point of the simplex (non-negative, summing to 1).
    radius : float
        Total-variation radius γ >= 0 (the l1 radius is 2γ).

    Examples
    --------
    >>> project_tv_ball(np.array([1.0, 0, 0]), np.array([0.5, 0.5, 0]), 0.1).round(6).tolist()
    [0.6, 0.4, 0.0]
    """
    v = np.asarray(v, dtype=float).ravel()
    c = np.asarray(center, dtype=float).ravel()
    if radius < 0:
        raise ValueError("radius must be non-negative")
    if v.shape != c.shape:
        raise ValueError("v and center must have the same shape")
    if radius == 0:
        return c.copy()
    p = project_simplex(v)
    if np.abs(p - c).sum() <= 2.0 * radius + 1e-12:
        return p

    def excess(mu: float) -> float:
        return np.abs(_point(v, c, _nu(v, c, mu), mu) - c).sum() - 2.0 * radius

    if excess(0.0) <= 0.0:  # on the sphere up to rounding
        return p
    hi = float(np.max(v - c) - np.min(v - c)) + 1.0  # every |d_i| <= mu: p = c
    mu = brentq(excess, 0.0, hi, xtol=_XTOL, rtol=1e-15)
    return _point(v, c, _nu(v, c, mu), mu)
