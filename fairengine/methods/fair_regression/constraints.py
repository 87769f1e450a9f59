"""The two constraints of fair regression (Agarwal et al. 2019) as
:class:`~fairengine.solvers.Constraint` objects: statistical parity (§4, problem (11)) and
bounded group loss (§5, problem (13)).

Design notes: ``docs/methods/fair_regression.md``."""

from __future__ import annotations

import numpy as np

from fairengine.methods.fair_regression.losses import bins, pointwise_loss
from fairengine.solvers.moments import Constraint, TwoSidedConstraint


def parity_gamma(k: np.ndarray, codes: np.ndarray, p: np.ndarray, n_levels: int) -> np.ndarray:
    """γ^_{a,z} = P̂[f ≥ z | a] − P̂[f ≥ z] (signed, group vs overall), (|A|, N); P̂[f ≥ z_j | a]
    from bin indices k by a bincount and a reverse cumsum (Appendix F), not a sort."""
    n_groups = len(p)
    counts = np.bincount(codes * (n_levels + 1) + k, minlength=n_groups * (n_levels + 1))
    counts = counts.reshape(n_groups, n_levels + 1).astype(float)
    at_least = np.cumsum(counts[:, ::-1], axis=1)[:, ::-1]  # [:, j] = #{k ≥ j}
    survival = at_least[:, 1:] / counts.sum(axis=1, keepdims=True)
    return survival - p @ survival


class StatisticalParity(TwoSidedConstraint):
    """|γ_{a,z}(f)| ≤ ε_a for every group a and level z ∈ 𝒵 = {α, 2α, …, 1} (problem (11)).

    g = [γ − ε; −γ − ε] (2|A|N entries, λ⁺ then λ⁻, group-major then level); predictions are
    f ∈ [0, 1], binned on the grid of N levels. The signed weights are the λ-part of the costs
    c_λ of Eq. (12), an (n, N) matrix: N λ_{A_i,z}/p_{A_i} − N Σ_a λ_{a,z} (net λ⁺ − λ⁻).
    :meth:`project` nets λ⁺ against λ⁻.

    Parameters
    ----------
    eps : float or array (|A|,)
        ε^_a.
    n_levels : int
        N.
    """

    def __init__(self, eps: float | np.ndarray, n_levels: int) -> None:
        self.slack, self.n_levels = eps, int(n_levels)

    def load(self, codes: np.ndarray) -> StatisticalParity:
        """Group codes 0..|A|−1 of the training rows."""
        self.codes = np.asarray(codes)
        self.n_groups = int(self.codes.max()) + 1
        self.p = np.bincount(self.codes, minlength=self.n_groups) / len(self.codes)
        self.group_eps = np.broadcast_to(np.asarray(self.slack, float), (self.n_groups,))
        self.eps = np.repeat(self.group_eps, self.n_levels)
        return self

    @property
    def dim(self) -> int:
        return 2 * self.n_groups * self.n_levels

    def moment_names(self) -> list[str]:
        return [
            f"a={a},z={j + 1}/{self.n_levels}"
            for a in range(self.n_groups)
            for j in range(self.n_levels)
        ]

    def gamma(self, predictions: np.ndarray) -> np.ndarray:
        k = bins(predictions, self.n_levels)
        return parity_gamma(k, self.codes, self.p, self.n_levels).ravel()

    def group_weights(self, lam: np.ndarray) -> np.ndarray:
        """The λ-part of c_λ per (group, level), (|A|, N): N λ_{a,z}/p_a − N Σ_a' λ_{a',z}."""
        net = self.net(lam).reshape(self.n_groups, self.n_levels)
        n = self.n_levels
        return n * (net / self.p[:, None]) - n * net.sum(axis=0)[None, :]

    def signed_weights(self, lam: np.ndarray) -> np.ndarray:
        return self.group_weights(lam)[self.codes]

    def project(self, lam: np.ndarray) -> np.ndarray:
        """(max(λ⁺ − λ⁻, 0), max(λ⁻ − λ⁺, 0)): the same best response and, as ε ≥ 0, a
        Lagrangian no smaller for every Q (the practical loop's ε Σ|λ⁺ − λ⁻|)."""
        net = self.net(lam)
        return np.concatenate([np.maximum(net, 0.0), np.maximum(-net, 0.0)])


class BoundedGroupLoss(Constraint):
    """γ^BGL_a(f) = E[ℓ(Y, f) | A = a] ≤ ζ_a (problem (13)); g = γ^BGL − ζ (|A| entries).

    The signed weights are λ_{A_i}/n_{A_i} per row, added to the risk minimiser's 1/n (§5).

    Parameters
    ----------
    zeta : float or array (|A|,)
        ζ^_a, in units of ℓ.
    loss : {"square", "absolute", "logistic"}
    """

    def __init__(self, zeta: float | np.ndarray, loss: str) -> None:
        self.slack, self.loss = zeta, loss

    def load(self, y: np.ndarray, codes: np.ndarray) -> BoundedGroupLoss:
        """Targets in [0, 1] and group codes of the training rows."""
        self.y, self.codes = np.asarray(y, float), np.asarray(codes)
        self.n_groups = int(self.codes.max()) + 1
        self.n_a = np.bincount(self.codes, minlength=self.n_groups).astype(float)
        self.zeta = np.broadcast_to(np.asarray(self.slack, float), (self.n_groups,))
        return self

    @property
    def dim(self) -> int:
        return self.n_groups

    @property
    def names(self) -> list[str]:
        return [f"loss[a={a}]" for a in range(self.n_groups)]

    @property
    def bound(self) -> np.ndarray:
        return self.zeta

    def group_losses(self, values: np.ndarray) -> np.ndarray:
        """Mean of pointwise losses ``values`` per group."""
        return np.bincount(self.codes, weights=values, minlength=self.n_groups) / self.n_a

    def gamma(self, predictions: np.ndarray) -> np.ndarray:
        return self.group_losses(pointwise_loss(self.y, predictions, self.loss))

    def signed_weights(self, lam: np.ndarray) -> np.ndarray:
        return (np.asarray(lam, float) / self.n_a)[self.codes]
