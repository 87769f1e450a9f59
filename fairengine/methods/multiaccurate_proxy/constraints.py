"""The proxy-fair classifier's constraints as a :class:`~fairengine.solvers.Constraint`.

Group vs overall, with soft group weights Ẑ (the proxy's probabilities): ±(γ_k(h) − γ(h)) ≤ ε,

* ``"equal_error"``: γ_k(h) = Σ Ẑ_ik 1[h(x_i) ≠ y_i] / Σ Ẑ_ik, γ = mean error (Eq. (4));
* ``"demographic_parity"``: γ_k(h) = Σ Ẑ_ik h(x_i) / Σ Ẑ_ik, γ = mean h.
"""

from __future__ import annotations

import numpy as np

from fairengine.metrics.proxy import group_gaps, normalised
from fairengine.solvers.moments import TwoSidedConstraint

CONSTRAINTS = ("equal_error", "demographic_parity")


class ProxyParity(TwoSidedConstraint):
    """|γ_k(h) − γ(h)| ≤ ε for every soft group k (2K constraints, λ⁺ then λ⁻).

    Predictions are P(h = 1) on the loaded rows. The signed weights are the λ-part of the cost
    difference c1 − c0 of labelling row i 1: Σ_k (λ⁺_k − λ⁻_k)(Ẑ_ik/Σ_j Ẑ_jk − 1/n), times
    (1 − 2y_i) for equal error. λ̂ is not netted (:meth:`project` is the identity), as the
    proxy-fair game has always played it.

    Parameters
    ----------
    eps : float
        ε.
    kind : {"equal_error", "demographic_parity"}
    """

    def __init__(self, eps: float, kind: str) -> None:
        if kind not in CONSTRAINTS:
            raise ValueError(f"constraint must be one of {CONSTRAINTS}; got {kind!r}")
        self.slack, self.kind = float(eps), kind

    def load(self, y: np.ndarray, soft_groups: np.ndarray) -> ProxyParity:
        """Binary labels (0/1) and soft group weights (n,) or (n, K) of the training rows."""
        self.y, self.soft = np.asarray(y, float), np.asarray(soft_groups, float)
        weights = normalised(self.soft)
        # Ẑ_ik/ΣẐ_k − 1/n: how much row i moves γ_k − γ (0 for an empty group)
        self.share = np.where(weights.sum(axis=0) > 0, weights - 1.0 / len(self.y), 0.0)
        self.n_groups = self.share.shape[1]
        self.eps = np.full(self.n_groups, self.slack)
        return self

    @property
    def dim(self) -> int:
        return 2 * self.n_groups

    def moment_names(self) -> list[str]:
        return [f"{self.kind}[k={k}]" for k in range(self.n_groups)]

    def gamma(self, predictions: np.ndarray) -> np.ndarray:
        return group_gaps(self.soft, self.y, predictions, self.kind)

    def signed_weights(self, lam: np.ndarray) -> np.ndarray:
        extra = self.share @ self.net(lam)
        return extra if self.kind == "demographic_parity" else extra * (1 - 2 * self.y)
