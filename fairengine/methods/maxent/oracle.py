"""The dual's value, gradient and Hessian in log space, polynomial in N and d (the Hessian's data
term from weighted contingency tables where faster), and its minimisation by scipy's trust-region
Newton, warm-startable.

Design notes: ``docs/methods/maxent.md``."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import minimize
from scipy.special import logsumexp
from threadpoolctl import threadpool_limits

#: Joint levels of a group of consecutive features (a pair's table has ≤ max_cells² cells).
MAX_CELLS = 256
#: Cost model (seconds; design notes): a dense FMA of the rank-k update, one scatter-add of a
#: pair's bincount, one cell of a pair's table and the fixed cost of a pair.
_FMA, _SCATTER, _CELL, _PAIR = 6e-11, 3e-9, 3e-10, 2.5e-5


def feature_groups(sizes: np.ndarray, max_cells: int = MAX_CELLS) -> list[tuple[int, int]]:
    """(first, end) features of each group: consecutive features whose joint levels ≤
    ``max_cells`` (a feature with more levels forms a group of its own)."""
    groups, start, cells = [], 0, 1
    for f, size in enumerate(int(s) for s in sizes):
        if f > start and cells * size > max_cells:
            groups.append((start, f))
            start, cells = f, 1
        cells *= size
    if len(sizes):
        groups.append((start, len(sizes)))
    return groups


def use_pair_moments(n_rows: int, sizes: np.ndarray, max_cells: int = MAX_CELLS) -> bool:
    """Whether :class:`PairMoments` is expected to be faster than the dense update."""
    sizes = np.asarray(sizes, dtype=np.int64)
    d = int((sizes - 1).sum())
    groups = feature_groups(sizes, max_cells)
    cells = np.array([float(np.prod(sizes[a:b])) for a, b in groups])
    widths = np.array([float((sizes[a:b] - 1).sum()) for a, b in groups])
    upper = np.triu(np.ones((len(groups), len(groups))))  # the pairs g ≤ h
    table_cells = (upper * np.outer(cells, cells)).sum()
    lifts = (upper * (np.outer(widths * cells, cells) + np.outer(widths, cells * widths))).sum()
    tables = upper.sum() * (n_rows * _SCATTER + _PAIR) + table_cells * _CELL + lifts * _FMA
    return bool(tables < n_rows * d * (d + 1) / 2 * _FMA)


class PairMoments:
    """Σ_i r_i α_i α_iᵀ (d, d) of reference-coded rows given as level codes (M, F).

    Parameters
    ----------
    codes : ndarray (M, F)
        Level codes of the rows, 0 ≤ codes[:, f] < sizes[f].
    sizes : array of int
        |U_f| per feature; feature f owns coordinates offsets[f] .. offsets[f] + |U_f| − 2.
    max_cells : int
        Joint levels per group.
    """

    def __init__(self, codes: np.ndarray, sizes: np.ndarray, max_cells: int = MAX_CELLS) -> None:
        sizes = np.asarray(sizes, dtype=np.int64)
        codes = np.asarray(codes)
        offsets = np.concatenate([[0], np.cumsum(sizes - 1)])
        self.d = int(offsets[-1])
        self.codes: list[np.ndarray] = []  # each group's joint code per row (uint8 mostly)
        self.cells: list[int] = []
        self.lift: list[np.ndarray] = []  # E_g (cells, d_g): joint level ↦ its 0/1 coordinates
        self.span: list[slice] = []
        for a, b in feature_groups(sizes, max_cells):
            part = sizes[a:b]
            joint = np.zeros(len(codes), dtype=np.intp)
            for f in range(a, b):
                joint = joint * int(sizes[f]) + codes[:, f].astype(np.intp)
            levels = np.stack(np.unravel_index(np.arange(int(np.prod(part))), part), axis=1)
            lift = np.zeros((len(levels), int(offsets[b] - offsets[a])))
            for j, f in enumerate(range(a, b)):
                on = np.flatnonzero(levels[:, j] > 0)
                lift[on, offsets[f] - offsets[a] + levels[on, j] - 1] = 1.0
            self.codes.append(joint.astype(np.min_scalar_type(len(levels) - 1)))  # compact
            self.cells.append(len(levels))
            self.lift.append(lift)
            self.span.append(slice(int(offsets[a]), int(offsets[b])))

    def second_moment(self, r: np.ndarray) -> np.ndarray:
        """Σ_i r_i α_i α_iᵀ for row weights ``r`` (M,)."""
        r = np.asarray(r, dtype=float)
        out = np.zeros((self.d, self.d))
        key = np.empty(len(r), dtype=np.intp)
        n = len(self.codes)
        for g in range(n):
            lift_g, span_g = self.lift[g], self.span[g]
            own = np.bincount(self.codes[g], weights=r, minlength=self.cells[g])
            out[span_g, span_g] = lift_g.T @ (own[:, None] * lift_g)
            scaled: dict[int, np.ndarray] = {}  # joint code x the partner's cells
            for h in range(g + 1, n):
                cells = self.cells[h]
                if cells not in scaled:
                    scaled[cells] = self.codes[g].astype(np.intp) * cells
                np.add(scaled[cells], self.codes[h], out=key)
                table = np.bincount(key, weights=r, minlength=self.cells[g] * self.cells[h])
                block = lift_g.T @ table.reshape(self.cells[g], self.cells[h]) @ self.lift[h]
                out[span_g, self.span[h]] = block
                out[self.span[h], span_g] = block.T
        return out


@dataclass
class DualState:
    """Everything the oracle computes at one λ.

    Attributes
    ----------
    value : float
        h(λ).
    grad : ndarray (d,)
        E_{p_λ}[α] − θ.
    hess : ndarray (d, d) or None
        Cov_{p_λ}(α) (only when asked for).
    pi : float
        Mass of the uniform component, π = C g_u / (C g_u + (1 − C) g_w).
    rho : list of ndarray
        Per-feature level probabilities of P_U (softmax of [0, λ_f]).
    r : ndarray (M,)
        Row probabilities of P_W.
    log_g : float
        log g_q(λ) = log Σ_α q(α) e^{<α, λ>}.
    """

    value: float
    grad: np.ndarray
    hess: np.ndarray | None
    pi: float
    rho: list[np.ndarray]
    r: np.ndarray
    log_g: float
    #: E_{P_U}[α] and E_{P_W}[α]: what the Hessian needs besides r (not part of the result).
    means: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)


class DualOracle:
    """h, ∇h and ∇²h of the max-entropy dual for the prior q_C = C u + (1 − C) w.

    Parameters
    ----------
    sizes : array of int
        |U_f| per feature (reference coding: feature f owns |U_f| − 1 coordinates).
    points : ndarray (M, d)
        Distinct reference-coded data rows, any numeric dtype (``np.uint8`` keeps a wide table
        small: the products run on float64 blocks of rows converted on the fly).
    weights : ndarray (M,)
        Prior weights w on those rows (summing to 1).
    C : float
        Prior mixing weight C in [0, 1] (Eq. 1).
    theta : ndarray (d,)
        Target marginals θ.
    codes : ndarray (M, F), optional
        The same rows as level codes: the Hessian's data term is then built from weighted
        contingency tables (:class:`PairMoments`) where :func:`use_pair_moments` expects that
        to be faster than the dense rank-k update over ``points``.
    """

    def __init__(
        self,
        sizes: np.ndarray,
        points: np.ndarray,
        weights: np.ndarray,
        C: float,
        theta: np.ndarray,
        codes: np.ndarray | None = None,
    ) -> None:
        self.sizes = np.asarray(sizes, dtype=np.int64)
        self.offsets = np.concatenate([[0], np.cumsum(self.sizes - 1)])
        self.points = np.asarray(points)
        # rows per block: a block converted to float64 stays around 4 MB
        self._step = max(256, (1 << 19) // max(self.points.shape[1], 1))
        weights = np.asarray(weights, dtype=float)
        with np.errstate(divide="ignore"):
            self.logw = np.log(weights / weights.sum())
        self.C = float(C)
        self.theta = np.asarray(theta, dtype=float)
        self.log_size = float(np.log(self.sizes).sum())
        # a padded (F, max |U_f|) layout of [0, λ_f] so the softmaxes run as one array operation
        self._feature = np.repeat(np.arange(len(self.sizes)), self.sizes - 1)
        self._level = np.arange(self.d) - self.offsets[self._feature] + 1
        width = int(self.sizes.max()) if len(self.sizes) else 1
        self._padding = np.where(np.arange(width)[None, :] < self.sizes[:, None], 0.0, -np.inf)
        self._same_block = self._feature[:, None] == self._feature[None, :]
        self._cache: tuple[bytes, DualState] | None = None
        self._codes = codes
        self._moments: PairMoments | None = None  # built on the first Hessian, if chosen
        self._moments_decided = codes is None

    def _pair_moments(self) -> PairMoments | None:
        if not self._moments_decided:  # the cost model is asked once, not on every Hessian
            codes = self._codes
            if use_pair_moments(len(codes), self.sizes):
                self._moments = PairMoments(codes, self.sizes)
            self._moments_decided = True
        return self._moments

    @property
    def d(self) -> int:
        return int(self.offsets[-1])

    def __call__(self, lam: np.ndarray, hessian: bool = True) -> DualState:
        lam = np.asarray(lam, dtype=float)
        key = lam.tobytes()
        cached = self._cache
        if cached is not None and cached[0] == key:
            state = cached[1]
            if hessian and state.hess is None:  # value and gradient at λ already known
                state.hess = self._hessian(state)
            return state
        state = self._evaluate(lam)
        if hessian:
            state.hess = self._hessian(state)
        self._cache = (key, state)
        return state

    def value(self, lam: np.ndarray) -> float:
        return self(lam, hessian=False).value

    def grad(self, lam: np.ndarray) -> np.ndarray:
        return self(lam, hessian=False).grad

    def hess(self, lam: np.ndarray) -> np.ndarray:
        return self(lam).hess

    def _blocks(self) -> list[slice]:
        return [slice(lo, lo + self._step) for lo in range(0, len(self.points), self._step)]

    def _block(self, rows: slice) -> np.ndarray:
        return self.points[rows].astype(float, copy=False)

    def _evaluate(self, lam: np.ndarray) -> DualState:
        d = self.d
        # uniform part: a product of per-feature softmaxes over [0, λ_f] (reference level first)
        a = self._padding.copy()
        a[self._feature, self._level] = lam
        log_z = logsumexp(a, axis=1)
        probs = np.exp(a - log_z[:, None])
        rho = [probs[f, :size] for f, size in enumerate(self.sizes)]
        m_u = probs[self._feature, self._level]
        log_gu = float(np.sum(log_z - np.log(self.sizes)))
        # data part: the rows tilted by e^{<α, λ>}, a block of rows at a time
        if self.C < 1.0:
            b = self.logw.copy()
            for rows in self._blocks():
                b[rows] += self._block(rows) @ lam
            log_gw = logsumexp(b)
            r = np.exp(b - log_gw)
            m_w = np.zeros(d)
            for rows in self._blocks():
                m_w += r[rows] @ self._block(rows)
        else:
            log_gw, r, m_w = -np.inf, np.zeros(len(self.points)), np.zeros(d)
        log_a = np.log(self.C) if self.C > 0 else -np.inf
        log_b = np.log1p(-self.C) if self.C < 1 else -np.inf
        log_a, log_b = log_a + log_gu, log_b + log_gw
        log_g = float(np.logaddexp(log_a, log_b))
        pi = float(np.exp(log_a - log_g))
        mean = pi * m_u + (1.0 - pi) * m_w
        return DualState(
            value=log_g - float(self.theta @ lam),
            grad=mean - self.theta,
            hess=None,
            pi=pi,
            rho=rho,
            r=r,
            log_g=log_g,
            means=(m_u, m_w),
        )

    def _hessian(self, state: DualState) -> np.ndarray:
        """Cov_{p_λ}(α) from a state's r and component means."""
        m_u, m_w = state.means
        pi, r = state.pi, state.r
        # P_U is a product: its covariance is block-diagonal, diag(m_f) - m_f m_f^T per block
        sigma_u = np.diag(m_u) - np.outer(m_u, m_u) * self._same_block
        second = np.zeros((self.d, self.d))
        moments = self._pair_moments() if self.C < 1.0 else None
        if moments is not None:
            second = moments.second_moment(r)
        elif self.C < 1.0:
            root = np.sqrt(r)
            for rows in self._blocks():  # Σ_rows (√r α)(√r α)ᵀ, a block of rows at a time
                block = self._block(rows) * root[rows, None]
                second += block.T @ block  # AᵀA: a symmetric rank-k update, half a product
        sigma_w = second - np.outer(m_w, m_w)
        gap = m_u - m_w
        return pi * sigma_u + (1.0 - pi) * sigma_w + pi * (1.0 - pi) * np.outer(gap, gap)


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
    """λ* = argmin h(λ) by ``trust-exact`` with the analytic gradient and Hessian (instead of the
    paper's Algorithm 5, design notes); stops when ||∇h||_∞ = max |E_p[α] − θ| <= ``tol``.

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
