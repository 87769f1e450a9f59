"""Definitions of Deng et al. 2023: A, base rates, disclosivity, imbalance, hull distance, beta_min.

The formulas live once in :mod:`fairengine.metrics`; this module re-exports them under the
contract names and adds the geometry the algorithms need.
"""

from __future__ import annotations

import numpy as np

from fairengine.metrics import conditional_distribution_matrix
from fairengine.metrics import distribution_imbalance as imbalance
from fairengine.metrics import matrix_disclosivity as disclosivity
from fairengine.solvers import cone_least_squares, simplex_least_squares

__all__ = [
    "base_rates",
    "beta_min",
    "conditional_distribution_matrix",
    "disclosivity",
    "hull_distance",
    "hull_projection",
    "imbalance",
    "uniform_target",
]


#: A group with fewer expected rows than this in a filtered sample is too thin to stand for the
#: group: the evidence warns (and the generalising protocol does not choose such a tree); below
#: :data:`fairengine.metrics.MISSING_GROUP_ROWS` the group has vanished.
FEW_GROUP_ROWS = 5.0


def uniform_target(n_groups: int) -> np.ndarray:
    """U = (1/K, ..., 1/K) ([spec erratum] Def. 1 prints 1/k)."""
    return np.full(n_groups, 1.0 / n_groups)


def checked_target(target: np.ndarray | None, n_groups: int) -> np.ndarray:
    """``target`` as a distribution over the groups (uniform for None); ValueError otherwise."""
    if target is None:
        return uniform_target(n_groups)
    tau = np.asarray(target, dtype=float).ravel()
    if tau.size != n_groups or (tau < 0).any() or not np.isclose(tau.sum(), 1.0):
        raise ValueError(f"target must be a distribution over the {n_groups} groups (sums to 1)")
    return tau


def base_rates(z: np.ndarray, n_groups: int, sample_weight: np.ndarray | None = None) -> np.ndarray:
    """r_k = P(z = k), the empirical (weighted) group shares."""
    counts = np.bincount(np.asarray(z, dtype=np.int64), weights=sample_weight, minlength=n_groups)
    return counts / counts.sum()


def hull_projection(
    A: np.ndarray,
    target: np.ndarray | None = None,
    *,
    relaxed: bool = False,
) -> tuple[np.ndarray, np.ndarray, float]:
    """(q, U', dist): the nearest point U' = qA of C(A) (or of the cone, ``relaxed``) to U.

    Def. 6/13: dist(U, C(A)) = min_{p in C(A)} ||p - U||. With ``relaxed`` (Section 5
    item 3) sum q = 1 is dropped: q = NNLS(A^T, U) and dist is the cone distance, which drives
    the relaxed tree's growth; the realised imbalance is still ||qA / sum q - U|| (pitfall P10).
    """
    A = np.atleast_2d(np.asarray(A, dtype=float))
    tau = checked_target(target, A.shape[1])
    q = cone_least_squares(A, tau) if relaxed else simplex_least_squares(A, tau)
    point = q @ A
    return q, point, float(np.linalg.norm(point - tau))


def hull_distance(
    A: np.ndarray,
    target: np.ndarray | None = None,
    *,
    relaxed: bool = False,
) -> float:
    """dist(U, C(A)): distance from the target to the convex hull of A's rows (Def. 6)."""
    return hull_projection(A, target, relaxed=relaxed)[2]


def beta_min(alpha: float, rates: np.ndarray, target: np.ndarray | None = None) -> float:
    """Oracle lower bound on the imbalance of any alpha-disclosive proxy.

    min ||p - U|| over p in the simplex with |p - r|_inf <= alpha: p = clip(U - nu, lo, hi), the
    scalar nu found by bisection so that sum p = 1.
    """
    r = np.asarray(rates, dtype=float)
    tau = checked_target(target, r.size)
    lo, hi = np.maximum(0.0, r - alpha), np.minimum(1.0, r + alpha)
    a, b = -2.0, 2.0
    for _ in range(200):
        nu = 0.5 * (a + b)
        if np.clip(tau - nu, lo, hi).sum() > 1.0:
            a = nu
        else:
            b = nu
    p = np.clip(tau - 0.5 * (a + b), lo, hi)
    return float(np.linalg.norm(p - tau))
