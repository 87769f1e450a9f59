"""The paper code's adversaries, re-implemented from their description.

* :class:`SoftTable` — soft group assignments (Algorithm 4 as run in the paper's experiments):
  ONE assignment table W[k, c, j] = w(j | cell c, noisy group k) shared by every constraint. Each
  outer step takes a few Adam ascent steps on the relaxed Lagrangian w.r.t. W, each followed by a
  Dykstra projection (a fixed number of rounds) onto 𝒲(θ) = {Σ_c W[k,c,j]·P(c | Ĝ=k) =
  P(G=j | Ĝ=k), Σ_j W[k,c,j] = 1, W >= 0}. The θ-step sees hinge-relaxed group rates built from
  cell sums, with a "+1" in the denominator (the code's guard against 0/0).
* The adversary players of :func:`fairengine.solvers.descent_ascent.descent_ascent`, one per
  approach: :class:`FixedWeights` (naive: each noisy group's uniform law), :class:`TVBallPaper`
  and :class:`TVBallExact` (DRO: Adam on p̃ per noisy group / projected ascent per constraint,
  in the TV ball), :class:`SoftTableAdversary` (soft assignments, the paper's W) and
  :class:`SoftBestResponse` (soft assignments, the exact best response over 𝒲(θ)).
  Adam on an ascent direction (:class:`~fairengine.solvers.descent_ascent.AdamAscent`) is the
  code's optimiser for λ, p̃ and W.

Cells c = 2·ŷ + y: 0 = TN, 1 = FN, 2 = FP, 3 = TP.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fairengine.metrics import RATE_KINDS, rate_base
from fairengine.metrics.noisy_groups import FN, FP, TN, TP, sa_worst
from fairengine.solvers.descent_ascent import AdamAscent
from fairengine.solvers.tv_ball import project_tv_ball

#: Cells of each rate's denominator ("base") and numerator ("positive"), read
#: off the engine's one rate mapping (:func:`fairengine.metrics.rate_base`) at each cell's label
#: y = c mod 2: TPR (FN, TP) / (TP,), FPR (TN, FP) / (FP,), PPR all cells / (FP, TP).
_CELLS = np.array([TN, FN, FP, TP])
BASE_CELLS = {
    kind: tuple(int(c) for c in _CELLS[rate_base(kind, _CELLS % 2) == 1]) for kind in RATE_KINDS
}
POS_CELLS = {kind: tuple(c for c in cells if c // 2 == 1) for kind, cells in BASE_CELLS.items()}
#: Adam ascent steps on W per outer step, Dykstra rounds per projection (the code's values).
W_STEPS = 5
DYKSTRA_ROUNDS = 20


def cell_shares(y, yhat, noisy, n_groups: int) -> np.ndarray:
    """v[k, c] = P(cell c | Ĝ = k) of the hard predictions (0 for an empty noisy group)."""
    cells = 2 * np.asarray(yhat, dtype=np.int64) + np.asarray(y, dtype=np.int64)
    index = 4 * np.asarray(noisy, dtype=np.int64) + cells
    counts = np.bincount(index, minlength=4 * n_groups).reshape(n_groups, 4).astype(float)
    sizes = counts.sum(axis=1, keepdims=True)
    return np.divide(counts, sizes, out=np.zeros_like(counts), where=sizes > 0)


def project_table(W, v, M, rounds: int = DYKSTRA_ROUNDS) -> np.ndarray:
    """Dykstra's alternating projections of W[k, c, j] onto the affine group constraints
    Σ_c W[k,c,j] v[k,c] = M[j,k], the row sums Σ_j W[k,c,j] = 1 and W >= 0 (``rounds`` rounds,
    like the paper code: approximately feasible, not exactly)."""
    W = np.array(W, dtype=float)
    norms = (v**2).sum(axis=1)  # (k,)
    live = norms > 0
    target = M.T  # (k, j)
    incs = [np.zeros_like(W) for _ in range(3)]
    # what every round reads, computed once (the same values, fewer array operations per round)
    live_k, safe_norms, v_kc1 = live[:, None], np.where(live, norms, 1.0)[:, None], v[:, :, None]

    def groups(x):
        gap = np.einsum("kcj,kc->kj", x, v) - target
        gap = np.where(live_k, gap / safe_norms, 0.0)
        return x - v_kc1 * gap[:, None, :]

    def rows(x):
        return x - (x.sum(axis=2, keepdims=True) - 1.0) / x.shape[2]

    def positive(x):
        return np.maximum(x, 0.0)

    for _ in range(rounds):
        for i, proj in enumerate((groups, rows, positive)):
            rolled = W - incs[i]
            W = proj(rolled)
            incs[i] = W - rolled
    return W


def _sums(values: np.ndarray, index: np.ndarray, m: int) -> np.ndarray:
    """out[k, y'] = Σ_{i: Ĝ_i = k, y_i = y'} values_i (``index`` = 2·Ĝ + y)."""
    return np.bincount(index, weights=values, minlength=2 * m).reshape(m, 2)


class SoftTable:
    """The paper code's soft-assignment adversary: one table W[k, c, j], Adam + Dykstra.

    ``constraint_list``: the (rate, j) pairs; ``M`` = P(G=j | Ĝ=k) (columns sum to 1).
    """

    def __init__(self, y, noisy, pairs, M, learning_rate: float, steps: int = W_STEPS):
        self.y = np.asarray(y, dtype=np.int64)
        self.noisy = np.asarray(noisy, dtype=np.int64)
        self.pairs = list(pairs)
        self.M = np.asarray(M, dtype=float)
        self.m = self.M.shape[1]
        self.n_true = self.M.shape[0]
        self.W = np.zeros((self.m, 4, self.n_true))  # the code starts from 0
        self.opt = AdamAscent(self.W.shape, learning_rate)
        self.steps = int(steps)
        self._cache = None
        self.index = 2 * self.noisy + self.y
        self.n_pos = max(float(self.y.sum()), 1.0)
        self.n_neg = max(float((1 - self.y).sum()), 1.0)

    # ------------------------------------------------------------ relaxed constraint pieces
    def _pieces(self, s: np.ndarray):
        """Per-row surrogate values and derivatives, and their (k, y) sums (cached for the
        last score vector: the W steps, the θ-step and the λ-step share them)."""
        if self._cache is not None and self._cache[0] is s:
            return self._cache[1]
        self._cache = (s, self._compute_pieces(s))
        return self._cache[1]

    def _compute_pieces(self, s: np.ndarray):
        lower, upper = np.minimum(1.0, s), np.maximum(0.0, 1.0 + s)
        ramp1, ramp0 = np.clip(1.0 + s, 0.0, 1.0), np.clip(1.0 - s, 0.0, 1.0)
        d_lower, d_upper = (s < 1.0).astype(float), (s > -1.0).astype(float)
        d_ramp1 = ((s > -1.0) & (s < 0.0)).astype(float)
        d_ramp0 = -((s > 0.0) & (s < 1.0)).astype(float)
        y, idx, m = self.y, self.index, self.m
        return {
            "lower": (_sums(lower, idx, m), d_lower),
            "upper": (_sums(upper, idx, m), d_upper),
            "ramp": ((_sums(ramp0, idx, m), d_ramp0), (_sums(ramp1, idx, m), d_ramp1)),
            "overall_upper": (float(upper @ y) / self.n_pos, d_upper * y / self.n_pos),
            "overall_lower": (float(lower @ (1 - y)) / self.n_neg, d_lower * (1 - y) / self.n_neg),
            "overall_upper_all": (float(upper.mean()), d_upper / len(s)),
        }

    def _ratio(self, kind: str, j: int, W, pieces):
        """N/D of constraint (kind, j): values and the pieces to differentiate them."""
        bound = pieces["upper" if kind == "fpr" else "lower"][0]
        num = sum(float(W[:, c, j] @ bound[:, c % 2]) for c in POS_CELLS[kind])
        den = 1.0 + sum(
            float(W[:, c, j] @ pieces["ramp"][c // 2][0][:, c % 2]) for c in BASE_CELLS[kind]
        )
        return num, den

    def constraints(self, s: np.ndarray, slack: float, W=None):
        """Relaxed constraint values ψ̃_c(θ, W) (ratio form with the +1 guard)."""
        W = self.W if W is None else W
        pieces = self._pieces(s)
        return np.array([self._value(kind, j, W, pieces) for kind, j in self.pairs]) - slack

    def _value(self, kind, j, W, pieces) -> float:
        num, den = self._ratio(kind, j, W, pieces)
        if kind == "fpr":
            return num / den - pieces["overall_lower"][0]
        overall = pieces["overall_upper" if kind == "tpr" else "overall_upper_all"][0]
        return overall - num / den

    def theta_coef(self, s: np.ndarray, lam: np.ndarray) -> np.ndarray:
        """Row coefficients of ∇_θ Σ_c λ_c ψ̃_c (∇_θ = X̃ᵀ · coef), W fixed."""
        pieces = self._pieces(s)
        coef = np.zeros(len(s))
        y, k = self.y, self.noisy
        for c_idx, (kind, j) in enumerate(self.pairs):
            if lam[c_idx] == 0.0:
                continue
            num, den = self._ratio(kind, j, self.W, pieces)
            d_bound = pieces["upper" if kind == "fpr" else "lower"][1]
            d_num = np.zeros(len(s))
            for c in POS_CELLS[kind]:
                d_num += (y == c % 2) * self.W[k, c, j] * d_bound
            d_den = np.zeros(len(s))
            for c in BASE_CELLS[kind]:
                d_den += (y == c % 2) * self.W[k, c, j] * pieces["ramp"][c // 2][1]
            d_ratio = (d_num * den - num * d_den) / den**2
            if kind == "fpr":
                g = d_ratio - pieces["overall_lower"][1]
            else:
                g = pieces["overall_upper" if kind == "tpr" else "overall_upper_all"][1] - d_ratio
            coef += lam[c_idx] * g
        return coef

    def _table_grad(self, s: np.ndarray, lam: np.ndarray) -> np.ndarray:
        """∇_W Σ_c λ_c ψ̃_c(θ, W)."""
        pieces = self._pieces(s)
        grad = np.zeros_like(self.W)
        for c_idx, (kind, j) in enumerate(self.pairs):
            if lam[c_idx] == 0.0:
                continue
            num, den = self._ratio(kind, j, self.W, pieces)
            bound = pieces["upper" if kind == "fpr" else "lower"][0]
            sign = 1.0 if kind == "fpr" else -1.0
            for c in BASE_CELLS[kind]:
                d_num = bound[:, c % 2] if c in POS_CELLS[kind] else 0.0
                d_den = pieces["ramp"][c // 2][0][:, c % 2]
                grad[:, c, j] += lam[c_idx] * sign * (d_num * den - num * d_den) / den**2
        return grad

    def step(self, s: np.ndarray, lam: np.ndarray) -> None:
        """The adversary's move: ``steps`` Adam ascent steps on W, each projected onto 𝒲(θ)."""
        v = cell_shares(self.y, s > 0.0, self.noisy, self.m)
        for _ in range(self.steps):
            self.W = project_table(self.opt.step(self.W, self._table_grad(s, lam)), v, self.M)

    def tables(self) -> list[np.ndarray]:
        """Each constraint's table w(j | c, k) as (4, m̂) (the layout of ``rates.sa_worst``)."""
        return [self.W[:, :, j].T.copy() for _, j in self.pairs]


class FixedWeights:
    """Naive: constraint c = (kind, j) weighs the rows by ``weights[c]`` (noisy group j's uniform
    law), fixed; the relaxed constraint values carry the slack ``offset`` (α + β)."""

    def __init__(self, pairs: list, weights: list, offset: float) -> None:
        self.pairs, self.weights, self.offset = pairs, weights, offset
        self._tables: list = []

    def respond(self, state, lam: np.ndarray) -> None:
        return None

    def add_theta_coef(self, coef: np.ndarray, state, lam: np.ndarray) -> None:
        for c, (kind, _) in enumerate(self.pairs):
            coef += lam[c] * state.grad(kind, self.weights[c])

    def constraints(self, state) -> np.ndarray:
        values = [state.value(k, self.weights[c]) for c, (k, _) in enumerate(self.pairs)]
        return np.array(values) - self.offset

    def move(self, t: int, state, lam: np.ndarray) -> None:
        return None

    def tables(self) -> list:
        return self._tables


class TVBallPaper(FixedWeights):
    """DRO as in the paper's experiments: one p̃ per noisy group j, moved every ``every`` steps by
    Adam (rate ``learning_rate``) on Σ_c λ_c ∂ψ̃_c/∂p̃ over that group's constraints, projected
    onto the TV ball of radius ``gammas[j]`` around ``centers[j]`` (the code's θ → λ → p̃ order).
    Until its first move each constraint weighs the rows by its noisy group's uniform law."""

    def __init__(
        self, pairs: list, centers: list, gammas, every: int, learning_rate: float, offset: float
    ) -> None:
        super().__init__(pairs, [centers[j].copy() for _, j in pairs], offset)
        self.centers, self.gammas, self.every = centers, gammas, max(1, int(every))
        self.learning_rate = float(learning_rate)
        self.p_tilde = [c.copy() for c in centers]
        self.opts = [AdamAscent(len(c), learning_rate) for c in centers]

    def move(self, t: int, state, lam: np.ndarray) -> None:
        if t % self.every:
            return
        for j, center in enumerate(self.centers):
            grad_p = np.zeros(len(center))
            for c, (kind, jc) in enumerate(self.pairs):
                if jc == j and lam[c] > 0:
                    grad_p += lam[c] * state.dw(kind, self.p_tilde[j])
            if grad_p.any():
                step = self.opts[j].step(self.p_tilde[j], grad_p)
                self.p_tilde[j] = project_tv_ball(step, center, float(self.gammas[j]))
        self.weights = [self.p_tilde[j] for _, j in self.pairs]


class TVBallExact(TVBallPaper):
    """DRO with plain projected ascent per constraint: ω_c += ``learning_rate`` · λ_c ∂ψ̃_c/∂ω_c
    at the iterate θ's step started from, projected onto its noisy group's TV ball."""

    def add_theta_coef(self, coef: np.ndarray, state, lam: np.ndarray) -> None:
        self.dws = []
        for c, (kind, _) in enumerate(self.pairs):
            coef += lam[c] * state.grad(kind, self.weights[c])
            self.dws.append(state.dw(kind, self.weights[c]))

    def move(self, t: int, state, lam: np.ndarray) -> None:
        if t % self.every:
            return
        for c, (_, j) in enumerate(self.pairs):
            step = self.weights[c] + self.learning_rate * lam[c] * self.dws[c]
            self.weights[c] = project_tv_ball(step, self.centers[j], float(self.gammas[j]))


class SoftTableAdversary:
    """Soft assignments with the paper's one table W (:class:`SoftTable`): a few Adam + Dykstra
    steps on W before each θ step."""

    def __init__(self, table: SoftTable, offset: float) -> None:
        self.table, self.offset = table, offset

    def respond(self, state, lam: np.ndarray) -> None:
        self.table.step(state.s, lam)

    def add_theta_coef(self, coef: np.ndarray, state, lam: np.ndarray) -> None:
        coef += self.table.theta_coef(state.s, lam)

    def constraints(self, state) -> np.ndarray:
        return self.table.constraints(state.s, self.offset)

    def move(self, t: int, state, lam: np.ndarray) -> None:
        return None

    def tables(self) -> list:
        return self.table.tables()


class SoftBestResponse(FixedWeights):
    """Soft assignments with the exact best response over 𝒲(θ) before each θ step:
    ``worst(scores)`` returns (per-constraint row weights, per-constraint tables)."""

    def __init__(self, pairs: list, start: tuple[list, list], offset: float, worst) -> None:
        super().__init__(pairs, start[0], offset)
        self._tables, self.worst = start[1], worst

    def respond(self, state, lam: np.ndarray) -> None:
        self.weights, self._tables = self.worst(state.s)


def dro_radii(clf: Any) -> np.ndarray:
    """DRO's TV radius per group: ``gamma`` (broadcast), else the noise model's safe one."""
    if clf.gamma is None:
        if clf.noise_model_ is None:
            raise ValueError("DRO without gamma needs aux_true and aux_noisy.")
        return np.asarray(clf.noise_model_.gamma_safe, dtype=float)
    gammas = np.broadcast_to(np.asarray(clf.gamma, dtype=float), (clf.n_groups_,))
    return np.asarray(gammas.copy(), dtype=float)


def make_adversary(clf: Any, y: np.ndarray, noisy: np.ndarray, pairs: list):
    """The adversary player of ``clf``'s approach (a fitting RobustFairClassifier: its groups,
    noise model and parameters) over the constraints ``pairs``; sets ``gamma_`` for DRO."""
    m, offset = clf.n_groups_, float(clf.slack) + float(clf.beta)
    centers = [(noisy == j) / max((noisy == j).sum(), 1) for j in range(m)]
    weights = [centers[j].copy() for _, j in pairs]
    paper = clf.adversary == "paper"
    if clf.method == "dro":
        clf.gamma_ = dro_radii(clf)
        kind = TVBallPaper if paper else TVBallExact
        rate = clf.adversary_learning_rate if paper else clf.learning_rate
        return kind(pairs, centers, clf.gamma_, clf.adversary_every, rate, offset)
    if clf.method != "soft":
        return FixedWeights(pairs, weights, offset)
    if clf.noise_model_ is None:
        raise ValueError("Soft group assignments need aux_true and aux_noisy.")
    M = clf.noise_model_.M
    if paper:
        table = SoftTable(y, noisy, pairs, M, clf.adversary_learning_rate)
        return SoftTableAdversary(table, offset)
    p_noisy = np.bincount(noisy, minlength=m) / len(y)
    alpha, constraint = float(clf.slack), clf.constraint

    def worst(s: np.ndarray) -> tuple[list, list]:  # best response over 𝒲(θ), closed form
        yhat = (s > 0.0).astype(float)
        _, w, tables = sa_worst(y, yhat, noisy, constraint, alpha, M, p_noisy, return_tables=True)
        return w, tables

    start = (weights, [np.tile(M[j], (4, 1)) for _, j in pairs])
    return SoftBestResponse(pairs, start, offset, worst)
