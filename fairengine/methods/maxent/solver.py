"""Minimising the dual h with scipy's trust-region Newton, warm-startable."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from threadpoolctl import threadpool_limits

from fairengine.methods.maxent.oracle import DualOracle


class DualNotConverged(RuntimeError):
    """The dual solve stopped before the marginals matched θ (θ too close to the boundary?)."""


@dataclass
class DualSolution:
    """λ* and how it was found."""

    lam: np.ndarray
    value: float
    grad_norm: float
    n_iter: int


def solve_dual(
    oracle: DualOracle,
    lam0: np.ndarray | None = None,
    *,
    tol: float = 1e-9,
    max_iter: int = 200,
) -> DualSolution:
    """λ* = argmin h(λ) by ``trust-exact`` with the analytic gradient and Hessian.

    Replaces the paper's Algorithm 5 (box-constrained Newton, whose worst-case iteration count is
    ~1e6). Stops when ||∇h||_∞ = max |E_p[α] − θ| <= ``tol``.

    Parameters
    ----------
    oracle : DualOracle
    lam0 : ndarray, optional
        Warm start (e.g. λ* of a neighbouring C in a sweep); zeros by default.
    tol : float
        Largest allowed marginal error.
    max_iter : int
    """
    lam0 = np.zeros(oracle.d) if lam0 is None or len(lam0) != oracle.d else np.asarray(lam0)
    if oracle.d == 0:
        return DualSolution(lam0, oracle.value(lam0), 0.0, 0)
    # single-threaded BLAS: the M x d products are small, and threads only contend (bench)
    with threadpool_limits(limits=1, user_api="blas"):
        result = minimize(
            oracle.value,
            lam0,
            jac=oracle.grad,
            hess=oracle.hess,
            method="trust-exact",
            options={"gtol": tol, "maxiter": max_iter},
        )
    lam = np.asarray(result.x, dtype=float)
    grad_norm = float(np.abs(oracle.grad(lam)).max())
    if not np.isfinite(grad_norm) or grad_norm > max(tol * 10, 1e-7):
        raise DualNotConverged(
            f"The max-entropy dual did not converge (largest marginal error {grad_norm:.2e} after "
            f"{result.nit} iterations). The target marginals may be too close to 0 or 1."
        )
    return DualSolution(lam, float(oracle.value(lam)), grad_norm, int(result.nit))
