"""The practical statistical-parity game of Agarwal et al. 2019, with the authors' query schedule.

Design notes: ``docs/methods/fair_regression.md``."""

from __future__ import annotations

from typing import Any

import numpy as np

from fairengine.methods.fair_regression.losses import grid, table_std
from fairengine.solvers.expgrad import (
    ACCURACY_MUL,
    CHECK_GROWTH,
    FIRST_CHECK,
    SHRINK,
    ExponentiatedGradientPlayer,
    GameResult,
    Response,
    certified_gap,
    iterate_average,
    keep_response,
    lp_mixture,
    pool_matrix,
    response_pool,
    support,
)
from fairengine.solvers.least_squares import LeastSquares

#: Multiples of λ̂ and λ_LP queried each round (the authors' ``eval_gap``).
MULTIPLIERS = (1.0, 2.0, 5.0, 10.0)
#: fairlearn's ``_MIN_ITER``; the authors' code uses 0.
MIN_ITER = 5
#: Rounds over which the LP value must stall (by < ν) before stopping.
PATIENCE = 5


def augmented_nu(problem, response: Response) -> float:
    """ν on the augmented rows (i, z_j) with weights |c_ij|/m and labels 1{c_ij ≤ 0} (the table
    W|h₀ − Y'| in row blocks, :func:`~fairengine.methods.fair_regression.losses.table_std`)."""
    f = response.payload.predict(problem.Z)
    z = grid(problem.n_levels)
    scale = problem.objective_scale()

    def weighted(rows: slice) -> np.ndarray:
        cost = problem.cost_rows(rows)
        h = f[rows, None] >= z[None, :]
        wrong = np.where(cost > 0, h, ~h)
        return np.abs(cost) / scale * wrong

    shape = (len(f), problem.n_levels)
    return float(ACCURACY_MUL * table_std(weighted, shape) / np.sqrt(shape[0] * shape[1]))


def smooth_multipliers(lam: np.ndarray, n_groups: int, n_levels: int) -> np.ndarray:
    """λ̃: the net multipliers λ⁺ − λ⁻ of each group least-squares fitted by a + b·z, split back
    into (λ⁺, λ⁻) ≥ 0."""
    half = len(lam) // 2
    net = (lam[:half] - lam[half:]).reshape(n_groups, n_levels)
    z = grid(n_levels)
    design = np.column_stack([np.ones_like(z), z])
    coef = LeastSquares(design, intercept=False, ridge=None).coef(net.T)
    fitted = (design @ coef).T.ravel()
    return np.concatenate([np.maximum(fitted, 0.0), np.maximum(-fitted, 0.0)])


def lp_step(objective: np.ndarray, g: np.ndarray, bound: float) -> tuple[np.ndarray, np.ndarray]:
    """:func:`~fairengine.solvers.expgrad.lp_mixture`; if HiGHS fails, the response of least
    penalised objective and λ_LP = 0."""
    found = lp_mixture(objective, g, bound)
    if found is None:  # pragma: no cover - the LP is always feasible (Q = any, ξ large)
        q = np.zeros(len(objective))
        q[int(np.argmin(objective + bound * np.maximum(g.max(axis=1), 0)))] = 1.0
        return q, np.zeros(g.shape[1])
    return found


def _gap(
    q: np.ndarray, lam: np.ndarray, objective: np.ndarray, g: np.ndarray, bound: float
) -> float:
    """The gap (Q, λ) certifies, L_low the best predictor found so far at λ."""
    return certified_gap(q, lam, objective, g, bound, float(np.min(objective + g @ lam)))


class _Oracle:
    """The problem's best responses to game-unit multipliers, kept in one pool, counted."""

    def __init__(self, problem: Any) -> None:
        self.problem = problem
        self.scale = problem.objective_scale()
        self.pool = response_pool()
        self.calls = 0

    def __call__(self, lam: np.ndarray) -> int:
        self.calls += 1
        response = self.problem.best_response(self.scale * lam)  # engine λ = m × game λ
        return keep_response(self.pool, response, self.scale)


def _explore(
    query: _Oracle, q_eg: np.ndarray, lam_hat: np.ndarray, bound: float, tolerance: float
) -> None:
    """One round's extra best responses: to multiples of λ̂ (the authors' eval_gap, stopping
    once the gap already exceeds ν), then to multiples of the LP's λ and of its smoothed form."""
    constraint = query.problem.constraint
    for mul in MULTIPLIERS:
        query(mul * lam_hat)
        if _gap(q_eg, lam_hat, *pool_matrix(query.pool), bound) > tolerance:
            break
    _, lam_lp = lp_step(*pool_matrix(query.pool), bound)
    smooth = smooth_multipliers(lam_lp, constraint.n_groups, constraint.n_levels)
    for mul in MULTIPLIERS:
        query(mul * lam_lp)
        query(mul * smooth)


def play_parity_game(
    problem,
    *,
    bound: float,
    nu: float | None,
    max_iter: int,
) -> GameResult:
    """Run the practical loop on a :class:`ParityReduction`.

    Parameters
    ----------
    problem : ParityReduction
        Its best responses and its constraint object (:attr:`ParityReduction.constraint`).
    bound : float
        B on the authors' scale (1/ε by default).
    nu : float or None
        ν on the authors' scale; None = automatic (:func:`augmented_nu`).
    max_iter : int
        T, the cap on rounds.
    """
    constraint = problem.constraint  # a StatisticalParity: dim, project, groups × levels
    query = _Oracle(problem)
    pool = query.pool
    first = query(np.zeros(constraint.dim))
    keep_response(pool, problem.best_constant(), query.scale)
    tolerance = augmented_nu(problem, pool.candidates[first]) if nu is None else float(nu)
    player = ExponentiatedGradientPlayer(constraint.dim, bound, 2.0 / bound)
    lam_sum = np.zeros(constraint.dim)
    counts: dict[int, float] = {}
    gaps: list[float] = []
    lp_values: list[float] = []
    last_check, last_gap = FIRST_CHECK, np.inf
    converged = False
    t = 0
    q_lp = np.ones(1)
    lam_lp = np.zeros(constraint.dim)
    for t in range(1, int(max_iter) + 1):
        lam = player.lambda_
        index = query(lam)
        counts[index] = counts.get(index, 0.0) + 1.0
        lam_sum += lam
        lam_hat = constraint.project(lam_sum / t)
        q_eg = iterate_average(counts, len(pool.candidates))
        _explore(query, q_eg, lam_hat, bound, tolerance)
        objective, g = pool_matrix(pool)
        q_lp, lam_lp = lp_step(objective, g, bound)
        gap_t = min(
            _gap(q_eg, lam_hat, objective, g, bound), _gap(q_lp, lam_lp, objective, g, bound)
        )
        gaps.append(gap_t)
        lp_values.append(float(q_lp @ objective) + bound * max(0.0, float((q_lp @ g).max())))
        stalled = len(lp_values) > PATIENCE and lp_values[-PATIENCE - 1] - lp_values[-1] < tolerance
        if gap_t <= tolerance and t >= MIN_ITER and stalled:
            converged = True
            break
        if t >= last_check * CHECK_GROWTH:
            if min(gaps) > SHRINK * last_gap:
                player.eta *= SHRINK
            last_check, last_gap = t, min(gaps)
        player.update(pool.column("g")[index])
    responses, weights = support(pool.candidates, q_lp)
    return GameResult(
        responses=responses,
        weights=weights,
        lambda_hat=lam_lp,
        gap=float(gaps[-1]) if gaps else 0.0,
        converged=converged,
        n_iter=t,
        n_oracle_calls=query.calls,
        nu=tolerance,
        bound=float(bound),
        gaps=gaps,
    )
