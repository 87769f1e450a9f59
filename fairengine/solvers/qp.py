"""Small exact QP / LP helpers (rows <= ~100): least squares over the simplex or the cone
(Deng et al. 2023, Algorithm 1: q = argmin ||qA - U|| over the simplex) and the weights of
largest yield that reach a point of the hull."""

from __future__ import annotations

import numpy as np
from scipy.optimize import linprog, minimize, nnls

from fairengine.solvers.least_squares import LeastSquares

_PENALTY = 1e4


def cone_least_squares(A: np.ndarray, target: np.ndarray) -> np.ndarray:
    """q >= 0 minimising ||q A - target||_2, exactly (Lawson-Hanson NNLS)."""
    A = np.asarray(A, float)
    q, _ = nnls(A.T, np.asarray(target, float).ravel())
    return q


def simplex_kkt_violation(A: np.ndarray, target: np.ndarray, q: np.ndarray) -> float:
    """max_j <target - qA, a_j - qA>: <= 0 (up to rounding) iff qA is the hull projection (the
    solver-independent optimality certificate of min ||qA - U|| over the simplex)."""
    A = np.asarray(A, float)
    point = np.asarray(q, float) @ A
    residual = np.asarray(target, float) - point
    return float(np.max((A - point) @ residual))


def _polish(A: np.ndarray, target: np.ndarray, support: np.ndarray) -> np.ndarray | None:
    """Exact equality-constrained least squares on ``support``; None if infeasible (q < 0)."""
    rows = A[support]
    m = len(rows)
    # KKT system of min ||q rows - t||^2 s.t. sum q = 1
    kkt = np.zeros((m + 1, m + 1))
    kkt[:m, :m] = 2 * rows @ rows.T
    kkt[:m, m] = kkt[m, :m] = 1.0
    rhs = np.append(2 * rows @ target, 1.0)
    solution = LeastSquares(kkt, intercept=False, ridge=None).coef(rhs)  # min-norm if singular
    q_support = solution[:m]
    if np.any(q_support < -1e-12):
        return None
    q = np.zeros(len(A))
    q[support] = np.maximum(q_support, 0.0)
    return q / q.sum()


def simplex_least_squares(
    A: np.ndarray,
    target: np.ndarray,
    *,
    tol: float = 1e-10,
) -> np.ndarray:
    """Stochastic q minimising ||q A - target||_2: the projection of ``target`` onto the hull of
    the rows of ``A``.

    An NNLS with the constraint sum q = 1 as a heavily weighted extra equation finds the support;
    the equality-constrained least squares on that support gives q exactly; the KKT certificate
    (:func:`simplex_kkt_violation`) confirms it, with SLSQP as the fallback.

    Parameters
    ----------
    A : ndarray of shape (l, K)
        Rows spanning the hull.
    target : ndarray of shape (K,)
    tol : float
        KKT tolerance.

    Returns
    -------
    ndarray of shape (l,)
        q >= 0, sum q = 1. Not unique when the rows are affinely dependent; any optimum is
        returned (the projection qA itself is unique).
    """
    A = np.asarray(A, float)
    target = np.asarray(target, float).ravel()
    n_rows = len(A)
    if n_rows == 1:
        return np.ones(1)
    stacked = np.vstack([A.T, _PENALTY * np.ones(n_rows)])
    q0, _ = nnls(stacked, np.append(target, _PENALTY))
    candidates = []
    support = q0 > 1e-9 * max(q0.max(), 1e-300)
    if support.any():
        polished = _polish(A, target, np.nonzero(support)[0])
        if polished is not None:
            candidates.append(polished)
    if q0.sum() > 0:
        candidates.append(q0 / q0.sum())
    for q in candidates:
        if simplex_kkt_violation(A, target, q) <= tol:
            return q
    start = candidates[0] if candidates else np.full(n_rows, 1.0 / n_rows)
    result = minimize(
        lambda q: float(np.sum((q @ A - target) ** 2)),
        start,
        jac=lambda q: 2 * (q @ A - target) @ A.T,
        bounds=[(0.0, None)] * n_rows,
        constraints=[
            {"type": "eq", "fun": lambda q: q.sum() - 1.0, "jac": lambda q: np.ones_like(q)}
        ],
        method="SLSQP",
        options={"ftol": 1e-15, "maxiter": 500},
    )
    q = np.maximum(result.x, 0.0)
    return q / q.sum()


def max_yield_weights(
    A: np.ndarray,
    mass: np.ndarray,
    point: np.ndarray,
) -> np.ndarray | None:
    """Among stochastic q with q A = ``point``, the one minimising t = max_j q_j / mass_j (an LP,
    HiGHS): rho = q / mass with the largest acceptance rate 1/t (Deng et al. 2023). None when
    ``point`` is outside the hull of the rows with mass > 0.
    """
    A = np.asarray(A, float)
    mass = np.asarray(mass, float)
    n_rows, k = A.shape
    c = np.zeros(n_rows + 1)
    c[-1] = 1.0
    a_ub = np.hstack([np.eye(n_rows), -mass[:, None]])
    a_eq = np.vstack([np.hstack([A.T, np.zeros((k, 1))]), np.append(np.ones(n_rows), 0.0)[None, :]])
    b_eq = np.append(np.asarray(point, float), 1.0)
    result = linprog(
        c,
        A_ub=a_ub,
        b_ub=np.zeros(n_rows),
        A_eq=a_eq,
        b_eq=b_eq,
        bounds=[(0, None)] * (n_rows + 1),
        method="highs",
    )
    if result.status != 0:
        return None
    q = np.maximum(result.x[:n_rows], 0.0)
    return q / q.sum()
