"""Test oracles of the solvers' results: optimality certificates and brute-force references
the engine itself never needs."""

from __future__ import annotations

import numpy as np
from scipy.optimize import linprog


def in_convex_hull(A: np.ndarray, point: np.ndarray, *, tol: float = 1e-9) -> bool:
    """Whether ``point`` is a convex combination of the rows of ``A`` (an LP, HiGHS)."""
    A = np.asarray(A, float)
    n_rows = len(A)
    result = linprog(
        np.zeros(n_rows),
        A_eq=np.vstack([A.T, np.ones(n_rows)]),
        b_eq=np.append(np.asarray(point, float), 1.0),
        bounds=[(0, None)] * n_rows,
        method="highs",
        options={"primal_feasibility_tolerance": tol},
    )
    return bool(result.status == 0)


def tv_ball_linear_max(a: np.ndarray, center: np.ndarray, radius: float) -> np.ndarray:
    """A maximiser of sum_i p_i a_i over the TV ball ∩ simplex (greedy, exact).

    Remove up to ``radius`` of mass from the smallest a_i (at most center_i each) and put it,
    spread uniformly over the ties, on argmax a ("best response").
    """
    a = np.asarray(a, dtype=float).ravel()
    p = np.asarray(center, dtype=float).ravel().copy()
    top = np.flatnonzero(a == a.max())
    budget = float(radius)
    moved = 0.0
    for i in np.argsort(a, kind="stable"):
        if budget <= 0 or a[i] >= a.max():
            break
        take = min(p[i], budget)
        p[i] -= take
        budget -= take
        moved += take
    p[top] += moved / len(top)
    return p


def csc_objective(labels: np.ndarray, weight: np.ndarray, cost_diff: np.ndarray) -> float:
    """sum_j w_j h_j d_j: the CSC objective up to the constant sum_j w_j c_j^0."""
    return float(np.sum(np.asarray(weight) * np.asarray(labels) * np.asarray(cost_diff)))
