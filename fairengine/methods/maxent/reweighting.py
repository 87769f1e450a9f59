"""Algorithm 1 reweighting, the priors q_C^w / q_C^d and the marginal targets θ."""

from __future__ import annotations

import numpy as np

PRIORS = ("reweighted", "empirical")
TARGETS = ("reweighted", "balanced", "data", "custom")


def reweighting_weights(z: np.ndarray, y: np.ndarray, tau: float = 1.0) -> np.ndarray:
    """Algorithm 1 weights w over rows (Celis et al. 2020, §3.1), summing to 1.

    w(alpha) = c(y) / c(y, z) / W with c(y, 0) = #(y, 0) / tau and c(y, 1) = #(y, 1), so the
    group Z = 0 gets total mass tau / (1 + tau): the representation rate of w is exactly tau and
    its statistical rate exactly 1 (Lemma 7.2), while the label marginal is kept.

    Parameters
    ----------
    z : array of {0, 1}
        Protected attribute Z per row (Z = 0 is down-weighted).
    y : array of {0, 1}
        Label Y per row.
    tau : float
        Representation rate τ in (0, 1] (Theorem 4.1 allows τ = 0, which divides by zero; §7.18).

    Returns
    -------
    ndarray
        One weight per row (a row repeated n times gets n times the weight of one copy).

    Examples
    --------
    >>> w = reweighting_weights([0, 0, 1, 1, 1, 1], [0, 1, 0, 1, 1, 1], tau=1.0)
    >>> float(w[[0, 1]].sum() / w[2:].sum())
    1.0
    """
    z = np.asarray(z, dtype=np.int64)
    y = np.asarray(y, dtype=np.int64)
    if not 0.0 < tau <= 1.0:
        raise ValueError(f"tau must be in (0, 1], got {tau}.")
    if not (np.isin(z, (0, 1)).all() and np.isin(y, (0, 1)).all()):
        raise ValueError("Algorithm 1 needs binary z and y coded 0/1.")
    cell = 2 * y + z
    count = np.bincount(cell, minlength=4).astype(float)
    if (count == 0).any():
        raise ValueError(
            "Every (label, group) cell needs at least one row to reweight the data (the "
            "paper's Algorithm 1); rows per cell, label by group: "
            f"{count.reshape(2, 2).tolist()}."
        )
    c_y = np.bincount(y, minlength=2).astype(float)
    c_yz = count * np.tile([1.0 / tau, 1.0], 2)  # c(y, 0) = #(y, 0) / tau
    weights = c_y[y] / c_yz[cell]
    return weights / weights.sum()


def prior_weights(z: np.ndarray, y: np.ndarray, tau: float, prior: str) -> np.ndarray:
    """Weights w of the data component of q_C = C u + (1 - C) w (Eq. 1; Appendix B for q^d).

    ``prior="reweighted"`` gives Algorithm 1's weights (q_C^w), ``"empirical"`` the plain
    frequencies n_alpha / N (q_C^d).
    """
    if prior == "reweighted":
        return reweighting_weights(z, y, tau)
    if prior == "empirical":
        return np.full(len(np.asarray(z)), 1.0 / len(np.asarray(z)))
    raise ValueError(f"prior must be one of {PRIORS}, got {prior!r}.")


def target_marginals(
    points: np.ndarray,
    z: np.ndarray,
    y: np.ndarray,
    *,
    target: str,
    tau: float,
    protected: int,
    protected_share: float = 0.5,
) -> np.ndarray:
    """The expectation vector theta the max-entropy distribution must match.

    Parameters
    ----------
    points : ndarray (n, d)
        Reference-coded rows.
    target : {"reweighted", "balanced", "data", "custom"}
        θ^w (mean under Algorithm 1's weights), θ^b (data mean with P(Z=1) = 1/2), θ^d (data
        mean), or the data mean with P(Z=1) = ``protected_share``.
    protected : int
        Coordinate of Z in ``points``.
    """
    if target == "reweighted":
        return reweighting_weights(z, y, tau) @ points
    theta = points.mean(axis=0)
    if target == "data":
        return theta
    share = {"balanced": 0.5, "custom": protected_share}.get(target)
    if share is None:
        raise ValueError(f"target must be one of {TARGETS}, got {target!r}.")
    if not 0.0 < share < 1.0:
        raise ValueError(f"The protected share must be in (0, 1), got {share}.")
    theta[protected] = share
    return theta
