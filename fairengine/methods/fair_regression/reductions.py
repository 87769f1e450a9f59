"""Agarwal et al.'s two constrained problems as best responses for
:func:`~fairengine.solvers.solve_game`.

Design notes: ``docs/methods/fair_regression.md``."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import sparse
from scipy.optimize import linprog
from scipy.special import expit

from fairengine.methods.fair_regression.constraints import (
    BoundedGroupLoss,
    StatisticalParity,
)
from fairengine.methods.fair_regression.learners import (
    Component,
    LinearLeastSquares,
    constant,
    fit_classifier,
    fit_regressor,
    linear,
)
from fairengine.methods.fair_regression.losses import (
    LOGISTIC_C,
    cost_matrix,
    discretized_loss,
    grid,
    pointwise_loss,
    representatives,
    row_blocks,
    table_mean,
)
from fairengine.solvers.expgrad import Response

LR_WEIGHTS = ("corrected", "paper")


class ParityReduction:
    """Statistical parity with slack ε_a at every z ∈ 𝒵 (problem (11)).

    Constraint vector g = [γ − ε; −γ − ε] (2|A|N entries, λ^+ then λ^−) from
    :attr:`constraint` (a :class:`StatisticalParity`); objective loss_α(f̲).

    Parameters
    ----------
    Z : ndarray (n, d)
        Encoded features.
    y : ndarray (n,)
        Targets in [0, 1].
    codes : ndarray (n,)
        Group codes 0..|A|−1.
    eps : ndarray (|A|,)
        ε^_a.
    loss, n_levels, oracle, lr_weights
        See :class:`~fairengine.methods.fair_regression.FairRegressor`.
    base
        :class:`~fairengine.methods.fair_regression.FairRegressor`'s ``base_estimator``.
    random_state : int
        Seed of the base learners (the ``"gradient_boosting"`` shortcut; cloned estimators keep
        their own ``random_state``).
    """

    def __init__(
        self,
        Z: Any,
        y: Any,
        codes: Any,
        eps: Any,
        *,
        loss: str,
        n_levels: int,
        oracle: str = "ls",
        base: Any = "linear",
        lr_weights: str = "corrected",
        random_state: int = 0,
    ) -> None:
        self.Z, self.y, self.codes = np.asarray(Z, float), np.asarray(y, float), codes
        self.constraint = StatisticalParity(eps, n_levels).load(codes)
        self.p = self.constraint.p
        self.loss, self.n_levels = loss, n_levels
        self.oracle, self.base = oracle, base
        self.lr_weights, self.random_state = lr_weights, random_state
        self._scale: float | None = None
        # Σ_{j ≤ k} c(Y_i, z_j): λ-independent, so computed once per fit; the only
        # (n, N) table a fit keeps, filled in row blocks (no second table alive)
        self.cost_prefix = np.empty((len(self.y), n_levels))
        for block in row_blocks(len(self.y)):
            np.cumsum(self.cost_rows(block), axis=1, out=self.cost_prefix[block])
        self.dim = self.constraint.dim
        self._ls = (
            LinearLeastSquares(self.Z) if self.base == "linear" and self.oracle == "ls" else None
        )

    @property
    def cost(self) -> np.ndarray:
        """c(Y_i, z_j), (n, N): recomputed (bit for bit) when asked — the game needs it twice per
        fit, the targets only its prefix sums — so a fit holds one (n, N) table, not two."""
        return cost_matrix(self.y, self.loss, self.n_levels)

    def cost_rows(self, rows: slice) -> np.ndarray:
        """The rows ``rows`` of :attr:`cost` (the same numbers, elementwise)."""
        return cost_matrix(self.y[rows], self.loss, self.n_levels)

    def objective_scale(self) -> float:
        """m = mean |c(Y_i, z_j)|, the authors' weight normalisation (err = cost^/m): ``np.mean``
        of :attr:`cost`, bit for bit, in row blocks, once per fit."""
        if self._scale is None:
            shape = (len(self.y), self.n_levels)
            mean = table_mean(lambda rows: np.abs(self.cost_rows(rows)), shape)
            self._scale = max(float(mean), 1e-12)
        return self._scale

    def respond(self, component: Component) -> Response:
        f = component.predict(self.Z)
        objective = float(np.mean(discretized_loss(self.y, f, self.loss, self.n_levels)))
        return Response(objective, self.constraint.values(f), component)

    def best_constant(self) -> Response:
        """The constant on the grid with the least loss_α: γ ≡ 0, so always feasible."""
        prefix = self.cost_prefix.mean(axis=0) / self.n_levels
        k = int(np.argmin(np.r_[0.0, prefix]))
        return self.respond(constant(representatives(self.n_levels)[k], self.Z.shape[1]))

    def costs(self, lam: np.ndarray) -> np.ndarray:
        """c_λ(Y_i, A_i, z_j) = c(Y_i, z_j) + N λ_{A_i,z}/p_{A_i} − N Σ_a λ_{a,z} (Eq. 12): the
        loss's costs plus the constraint's signed weights."""
        return self.cost + self.constraint.signed_weights(lam)

    def targets(self, lam: np.ndarray) -> np.ndarray:
        """U_i ∈ argmin_u g_λ(Y_i, A_i, u) via prefix sums (smallest k on ties): the costs' prefix
        sums of the fit plus those of the row group's λ-terms, an (|A|, N) table per call."""
        shift = np.cumsum(self.constraint.group_weights(lam), axis=1)
        k = np.empty(len(self.y), dtype=np.intp)
        for rows in row_blocks(len(self.y)):  # row-wise argmins: blocks give the same k
            prefix = self.cost_prefix[rows] + shift[self.codes[rows]]
            best = np.argmin(prefix, axis=1)
            lowest = np.take_along_axis(prefix, best[:, None], axis=1)[:, 0]
            k[rows] = np.where(lowest < 0.0, best + 1, 0)  # k = 0: the empty prefix wins ties
        return representatives(self.n_levels)[k]

    def best_response(self, lam: np.ndarray) -> Response:
        if self.oracle == "cs":
            return self.respond(self._cost_sensitive(lam))
        u = self.targets(lam)
        if self.oracle == "ls":
            component = (
                self._ls.fit(u)
                if self._ls is not None
                else fit_regressor(self.Z, u, None, self.base, random_state=self.random_state)
            )
        else:  # "lr": two copies, labels 0/1; W_{i,2} = σ(C(2U − 1)) [spec erratum] §3.3c
            w1 = expit(LOGISTIC_C * (2 * u - 1)) if self.lr_weights == "corrected" else u
            n = len(u)
            component = fit_classifier(
                np.vstack([self.Z, self.Z]),
                np.r_[np.zeros(n), np.ones(n)],
                np.r_[1 - w1, w1],
                self.base,
                random_state=self.random_state,
            )
        return self.respond(component)

    def _cost_sensitive(self, lam: np.ndarray) -> Component:
        """CS oracle: weighted hinge LP over h(x, z) = 1{β·x + b ≥ z}, |β_j| ≤ 1 (Appendix G;
        [spec erratum] the printed LP drops W_i and z_i), solved with HiGHS."""
        c = self.costs(lam)
        n, d = self.Z.shape
        rows, cols = np.nonzero(np.abs(c) > 1e-12)
        weight = np.abs(c[rows, cols])
        label = np.where(c[rows, cols] <= 0, 1.0, -1.0)
        z = grid(self.n_levels)[cols]
        m = len(rows)
        if m == 0:
            return constant(0.0, d)
        alpha = 1.0 / self.n_levels
        # −Y (β·x + b) − t ≤ −α/2 − Y z
        a_x = sparse.csr_matrix(-label[:, None] * self.Z[rows])
        a_b = sparse.csr_matrix(-label[:, None])
        a_t = -sparse.identity(m, format="csr")
        a_ub = sparse.hstack([a_x, a_b, a_t], format="csr")
        b_ub = -alpha / 2 - label * z
        objective = np.r_[np.zeros(d + 1), weight]
        bounds = [(-1.0, 1.0)] * d + [(-2.0, 2.0)] + [(0.0, None)] * m
        result = linprog(objective, A_ub=a_ub, b_ub=b_ub, bounds=bounds, method="highs")
        beta = result.x[: d + 1] if result.status == 0 else np.zeros(d + 1)
        return linear(beta[:d], beta[d:])


class GroupLossReduction:
    """Bounded group loss γ^BGL_a(Q) ≤ ζ_a (problem (13)); g = γ^BGL − ζ (|A| entries) from
    :attr:`constraint` (a :class:`BoundedGroupLoss`).

    The best response is one weighted risk minimisation with w_i = 1/n + λ_{A_i}/n_{A_i} (§5).
    """

    def __init__(self, Z, y, codes, zeta, *, loss, base, random_state=0):
        self.Z, self.y, self.codes = np.asarray(Z, float), np.asarray(y, float), codes
        self.constraint = BoundedGroupLoss(zeta, loss).load(self.y, codes)
        self.zeta = self.constraint.zeta
        self.loss, self.base, self.random_state = loss, base, random_state
        self.dim = self.constraint.dim
        self._ls = LinearLeastSquares(self.Z) if base == "linear" and loss == "square" else None

    def respond(self, component: Component) -> Response:
        f = component.predict(self.Z)
        objective = float(pointwise_loss(self.y, f, self.loss).mean())
        return Response(objective, self.constraint.values(f), component)

    def weights(self, lam: np.ndarray) -> np.ndarray:
        """w_i = 1/n + λ_{A_i}/n_{A_i}: the risk's 1/n plus the signed weights."""
        return 1.0 / len(self.y) + self.constraint.signed_weights(lam)

    def best_response(self, lam: np.ndarray) -> Response:
        w = self.weights(lam)
        w = w / w.mean()  # same argmin, well-scaled for the learners
        if self.loss == "square":
            component = (
                self._ls.fit(self.y, w)
                if self._ls is not None
                else fit_regressor(self.Z, self.y, w, self.base, random_state=self.random_state)
            )
        elif self.loss == "absolute":
            component = fit_regressor(
                self.Z, self.y, w, self.base, loss="absolute_error", random_state=self.random_state
            )
        else:  # soft labels: copies with labels 1 and 0, weights w y and w (1 − y)
            n = len(self.y)
            component = fit_classifier(
                np.vstack([self.Z, self.Z]),
                np.r_[np.ones(n), np.zeros(n)],
                np.r_[w * self.y, w * (1 - self.y)],
                self.base,
                random_state=self.random_state,
            )
        return self.respond(component)
