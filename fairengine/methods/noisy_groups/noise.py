"""Synthetic group noise (the paper's flipping) and the noise model estimated from (G, Ĝ) pairs."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def add_group_noise(groups, noise: float, random_state: int | None = 0) -> np.ndarray:
    """The paper's noisy groups (Sec. 7): flip exactly int(noise·n) rows chosen uniformly at random
    without replacement, each to a different group drawn uniformly from the other observed groups.

    Examples
    --------
    >>> g = np.array([0, 0, 1, 1, 2, 2] * 10)
    >>> int((add_group_noise(g, 0.5, 0) != g).sum())
    30
    """
    groups = np.asarray(groups)
    if not 0.0 <= noise <= 1.0:
        raise ValueError("noise must be in [0, 1]")
    labels = np.unique(groups)
    noisy = groups.copy()
    if len(labels) < 2:
        return noisy
    rng = np.random.default_rng(random_state)
    rows = rng.choice(len(groups), size=int(noise * len(groups)), replace=False)
    codes = np.searchsorted(labels, groups[rows])
    shift = rng.integers(1, len(labels), size=len(rows))  # a different group, uniformly
    noisy[rows] = labels[(codes + shift) % len(labels)]
    return noisy


@dataclass(frozen=True)
class NoiseModel:
    """Noise quantities from an auxiliary sample of true and noisy groups (codes 0..m-1).

    Attributes
    ----------
    M : ndarray (m, m)
        P(G = j | Ĝ = k), columns sum to 1 (soft assignments' 𝒲).
    p_true, p_noisy : ndarray (m,)
        P(G = j), P(Ĝ = j).
    gamma_paper : ndarray (m,)
        P(Ĝ ≠ j | G = j), the paper's DRO radius (Sec. 5).
    gamma_safe : ndarray (m,)
        max(P(Ĝ ≠ j | G = j), P(G ≠ j | Ĝ = j)); equals the empirical TV(p_j, p̂_j) on the
        sample, so the true group distribution lies in the ball (generalized Lemma 1).
    """

    M: np.ndarray
    p_true: np.ndarray
    p_noisy: np.ndarray
    gamma_paper: np.ndarray
    gamma_safe: np.ndarray

    @property
    def flip(self) -> np.ndarray:
        """F[k, j] = P(Ĝ = k | G = j) (columns sum to 1; the identity column for a true group
        the sample does not have)."""
        joint = self.M * self.p_noisy[None, :]  # (j, k)
        m = len(self.p_true)
        out = np.eye(m)
        live = self.p_true > 0
        out[:, live] = (joint[live] / self.p_true[live, None]).T
        return out


def estimate_noise(true_groups, noisy_groups, n_groups: int | None = None) -> NoiseModel:
    """Estimate the noise model and the DRO radii γ from (G, Ĝ) code pairs."""
    g = np.asarray(true_groups, dtype=np.int64)
    h = np.asarray(noisy_groups, dtype=np.int64)
    m = int(n_groups or max(g.max(), h.max()) + 1)
    joint = np.zeros((m, m))
    np.add.at(joint, (g, h), 1.0)
    joint /= joint.sum()
    p_true, p_noisy = joint.sum(1), joint.sum(0)
    diag = np.diag(joint)
    with np.errstate(invalid="ignore", divide="ignore"):
        M = np.where(p_noisy > 0, joint / p_noisy, 0.0)
        miss_given_true = np.where(p_true > 0, 1.0 - diag / p_true, 0.0)
        miss_given_noisy = np.where(p_noisy > 0, 1.0 - diag / p_noisy, 0.0)
    empty = p_noisy == 0
    M[:, empty] = np.eye(m)[:, empty]
    safe = np.maximum(miss_given_true, miss_given_noisy)
    return NoiseModel(M, p_true, p_noisy, np.clip(miss_given_true, 0, 1), np.clip(safe, 0, 1))


def empirical_tv(true_groups, noisy_groups, j: int) -> float:
    """TV between the uniform distributions over true group j and noisy group j (same rows)."""
    g, h = np.asarray(true_groups) == j, np.asarray(noisy_groups) == j
    p = g / max(g.sum(), 1)
    q = h / max(h.sum(), 1)
    return 0.5 * float(np.abs(p - q).sum())
