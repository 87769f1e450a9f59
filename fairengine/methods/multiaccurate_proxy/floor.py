"""The feasibility floor of linear G [OURS]: the least max additive violation any linear proxy
can reach against given audit vectors (a linear program), which Algorithm 4 reports when α is out
of reach."""

from __future__ import annotations

import numpy as np
from scipy.optimize import linprog


def multiaccuracy_floor(
    X: np.ndarray,
    z: np.ndarray,
    vectors: np.ndarray,
) -> tuple[float, np.ndarray]:
    """The feasibility floor of linear G [OURS]: the LP

    min_θ max_a |a·(z − [X, 1]θ)|/n  s.t.  Σ_i [x_i, 1]·θ = Σ_i z_i

    over the audit vectors ``vectors`` (rows a ∈ {0,1}^n, e.g. a = 1[h ≠ y_j] for a finite H).
    Returns (the minimal max additive violation, θ). No linear proxy does better on these
    vectors; Algorithm 4 with a large C approaches it.
    """
    X, z = np.asarray(X, float), np.asarray(z, float)
    n = len(X)
    Xa = np.column_stack([X, np.ones(n)])
    A = np.asarray(vectors, float)
    return floor_lp(A @ Xa / n, A @ z / n, Xa.sum(axis=0), float(z.sum()))


def floor_lp(
    region_x: np.ndarray, region_z: np.ndarray, s: np.ndarray, total: float
) -> tuple[float, np.ndarray]:
    """:func:`multiaccuracy_floor` from the regions' moments: min_θ max_a |b_a − M_a·θ| s.t.
    s·θ = total, with M = A[X, 1]/n, b = Az/n, s = Σ_i [x_i, 1]."""
    d = region_x.shape[1]
    # variables (θ, t): minimise t with ±(b − Mθ) ≤ t
    c = np.append(np.zeros(d), 1.0)
    ones = np.ones((len(region_x), 1))
    a_ub = np.vstack([np.hstack([-region_x, -ones]), np.hstack([region_x, -ones])])
    b_ub = np.concatenate([-region_z, region_z])
    a_eq = np.append(s, 0.0)[None, :]
    bounds = [(None, None)] * d + [(0, None)]
    res = linprog(c, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=[total], bounds=bounds, method="highs")
    if res.status != 0:
        raise ValueError(f"floor LP failed: {res.message}")
    return float(res.x[-1]), res.x[:d]
