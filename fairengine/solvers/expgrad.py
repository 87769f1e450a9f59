"""The Lagrangian game min_Q max_{λ ≥ 0, ||λ||_1 ≤ B} objective(Q) + λ · g(Q) with an
exponentiated-gradient dual player (Agarwal et al. 2019, Algorithms 1–2; fairlearn's
``ExponentiatedGradient``).

Design notes: docs/architecture.md, "Constraints of the exponentiated-gradient game".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy.optimize import linprog
from scipy.special import logsumexp

from fairengine.solvers.candidates import CandidateRecorder

if TYPE_CHECKING:
    from fairengine.solvers.moments import Constraint

#: fairlearn / authors' code schedule: from round 5 a check every ×1.6 rounds, shrink η by 0.8.
FIRST_CHECK, CHECK_GROWTH, SHRINK = 5, 1.6, 0.8
#: ν = this · std(per-row error of h_0)/√n in practical mode: a duality gap below the sampling
#: error of the error itself changes nothing measurable (the authors' / fairlearn's
#: ``_ACCURACY_MUL``).
ACCURACY_MUL = 0.5
#: Minimum improvement for a new best response to replace a cached one.
_TIE = 1e-12


class ExponentiatedGradientPlayer:
    """Multipliers λ = B · exp(θ) / (1 + Σ exp(θ)) with θ += η g (Agarwal et al. 2019 Alg. 1);
    the "1 +" is a phantom zero coordinate, so ||λ||_1 < B strictly.

    Parameters
    ----------
    dim : int
        Number of constraints (2|A|N for statistical parity, |A| for bounded group loss).
    bound : float
        B, the ℓ1 bound on λ.
    eta : float
        η, the step size.

    Examples
    --------
    >>> player = ExponentiatedGradientPlayer(2, bound=1.0, eta=1.0)
    >>> player.lambda_.round(3).tolist()
    [0.333, 0.333]
    """

    def __init__(self, dim: int, bound: float, eta: float) -> None:
        if bound <= 0 or eta <= 0:
            raise ValueError("bound and eta must be positive")
        self.bound = float(bound)
        self.eta = float(eta)
        self.theta_ = np.zeros(int(dim))

    @property
    def lambda_(self) -> np.ndarray:
        log_norm = logsumexp(np.append(self.theta_, 0.0))
        return self.bound * np.exp(self.theta_ - log_norm)

    def update(self, constraints: np.ndarray) -> np.ndarray:
        """θ += η g(h_t); returns the new λ."""
        self.theta_ = self.theta_ + self.eta * np.asarray(constraints, float)
        return self.lambda_


@dataclass
class Response:
    """One best response h: its objective, its constraint vector g(h) (feasible iff ≤ 0), and
    the predictor itself (``payload``)."""

    objective: float
    constraints: np.ndarray
    payload: Any = None


@dataclass
class GameResult:
    """Output of :func:`solve_game`.

    Attributes
    ----------
    responses : list of Response
        Distinct best responses found (the support candidates of Q).
    weights : ndarray
        Q over ``responses`` (≥ 0, sums to 1).
    lambda_hat : ndarray
        The dual player's average multipliers λ̂.
    gap : float
        Duality gap max(ν̄, ν_) of the returned Q.
    converged : bool
        Whether gap ≤ ν was reached.
    n_iter, n_oracle_calls : int
    gaps : list of float
        Gap per iteration.
    """

    responses: list[Response]
    weights: np.ndarray
    lambda_hat: np.ndarray
    gap: float
    converged: bool
    n_iter: int
    n_oracle_calls: int
    nu: float
    bound: float
    gaps: list[float] = field(default_factory=list)

    def objective(self) -> float:
        return float(
            sum(w * r.objective for w, r in zip(self.weights, self.responses, strict=True))
        )

    def constraints(self) -> np.ndarray:
        return np.sum(
            [w * r.constraints for w, r in zip(self.weights, self.responses, strict=True)], axis=0
        )


def best_lambda_value(objective: float, constraints: np.ndarray, bound: float) -> float:
    """L(Q, Best_λ(Q)) = objective + B · max(0, max_j g_j(Q)) (Agarwal et al. 2019 Appendix F)."""
    return float(objective + bound * max(0.0, float(np.max(constraints))))


def response_pool() -> CandidateRecorder:
    """The recorder of a game's best responses: each distinct one (objective and every g_j
    within ``_TIE``) once, with its objective in game units and its g (:func:`keep_response`)."""
    return CandidateRecorder(tie=_TIE)


def keep_response(pool: CandidateRecorder, response: Response, scale: float = 1.0) -> int:
    """Keep ``response`` in ``pool`` with objective / ``scale`` (the objective's unit in the
    game: 1 for :func:`solve_game`, the authors' weight normalisation m for fair regression's
    practical parity loop) and its g; the index of the kept copy."""
    return pool.keep(response, objective=response.objective / scale, g=response.constraints)


def pool_matrix(pool: CandidateRecorder) -> tuple[np.ndarray, np.ndarray]:
    """(objective of every kept response, their g stacked row by row)."""
    return pool.column("objective"), pool.column("g")


def iterate_average(counts: dict[int, float], size: int) -> np.ndarray:
    """Q_EG over ``size`` pooled responses: how often each was the best response, normalised."""
    q = np.zeros(size)
    q[list(counts)] = list(counts.values())
    return q / q.sum()


def support(responses: list[Response], weights: np.ndarray) -> tuple[list[Response], np.ndarray]:
    """The responses with positive weight, and those weights renormalised to sum to 1."""
    keep = weights > 0
    kept = weights[keep]
    return [r for r, k in zip(responses, keep, strict=True) if k], kept / kept.sum()


def lp_mixture(
    objective: np.ndarray, g: np.ndarray, bound: float
) -> tuple[np.ndarray, np.ndarray] | None:
    """min_{Q ∈ Δ, ξ ≥ 0} Q · objective + B ξ s.t. Q · g_j ≤ ξ (HiGHS): Q and the dual
    multipliers λ_LP ≥ 0 of the constraints (||λ_LP||₁ ≤ B); None if HiGHS fails."""
    m, k = g.shape
    result = linprog(
        np.append(objective, bound),
        A_ub=np.hstack([g.T, -np.ones((k, 1))]),
        b_ub=np.zeros(k),
        A_eq=np.append(np.ones(m), 0.0)[None, :],
        b_eq=[1.0],
        bounds=[(0, None)] * (m + 1),
        method="highs",
    )
    if result.status != 0:
        return None
    q = np.maximum(result.x[:m], 0.0)
    return q / q.sum(), np.maximum(-np.asarray(result.ineqlin.marginals), 0.0)


def certified_gap(
    q: np.ndarray, lam: np.ndarray, objective: np.ndarray, g: np.ndarray, bound: float, low: float
) -> float:
    """max(L(Q, Best_λ(Q)) − L(Q, λ), L(Q, λ) − ``low``): the duality gap the pair (Q, λ)
    certifies, ``low`` a lower bound on min_h L(h, λ); Q over the first pooled responses (the
    later ones get weight 0)."""
    q = np.append(q, np.zeros(len(objective) - len(q)))
    obj_q, g_q = float(q @ objective), q @ g
    value = float(obj_q + np.dot(lam, g_q))  # L(Q, λ) = objective(Q) + λ · g(Q)
    return max(best_lambda_value(obj_q, g_q, bound) - value, value - low)


def _round_gaps(
    pool: CandidateRecorder,
    counts: dict[int, float],
    lam_hat: np.ndarray,
    low: Response,
    bound: float,
    practical: bool,
    lp_step: bool,
) -> list[tuple[float, np.ndarray]]:
    """The (gap, Q) pairs a round of :func:`solve_game` certifies at λ̂: the iterate average
    and (practical mode) the LP mixture; ``low`` is the best response to λ̂."""
    objective, g = pool_matrix(pool)
    low_value = float(low.objective + np.dot(lam_hat, low.constraints))
    if practical:
        low_value = min(low_value, float(np.min(objective + g @ lam_hat)))
    mixtures = [iterate_average(counts, len(pool))]
    if practical and lp_step and len(pool) > 1:
        found = lp_mixture(objective, g, bound)
        if found is not None:
            mixtures.append(found[0])
    return [(certified_gap(q, lam_hat, objective, g, bound, low_value), q) for q in mixtures]


def solve_game(
    best_response: Callable[[np.ndarray], Response],
    constraint: Constraint | int,
    *,
    bound: float,
    nu: float | Callable[[Response], float],
    max_iter: int = 50,
    mode: str = "practical",
    eta: float | None = None,
    lp_step: bool = True,
    initial: tuple[Response, ...] = (),
) -> GameResult:
    """Play the learner's best responses against exponentiated-gradient multipliers until the
    duality gap is at most ν or T rounds.

    Parameters
    ----------
    best_response : callable
        λ (shape ``(dim,)``) -> :class:`Response` minimising L(h, λ) (exactly or heuristically);
        e.g. a :class:`~fairengine.solvers.moments.Reduction`.
    constraint : Constraint or int
        The constraint object, or only the number of constraints (no projection). Practical
        mode measures the gap at ``constraint.project(λ̂)``, a dual point with
        L(Q, project(λ̂)) ≥ L(Q, λ̂) for every Q (fairlearn's ``project_lambda``: net λ^+
        against λ^−).
    bound : float
        B, the ℓ1 bound on λ.
    nu : float or callable
        ν, the gap tolerance; a callable gets the first best response h_0 (automatic ν).
    max_iter : int
        T, the iteration cap (the paper's box has none).
    mode : {"practical", "paper"}
        ``"paper"``: Algorithm 1/2 as printed, Q = uniform average of the iterates, fixed η.
        ``"practical"``: the authors' / fairlearn loop (η_0 = 2/B, 0.8/1.6 shrink schedule,
        LP step, best-gap Q).
    eta : float, optional
        η; required for ``"paper"`` (ν/(8B) for SP, ν/(2B) for BGL), default 2/B otherwise.
    lp_step : bool
        Practical mode: also try the LP mixture over the responses found so far.
    initial : tuple of Response
        Practical mode: known predictors offered to the LP step from the start (e.g. the best
        constant, always feasible under statistical parity).

    Returns
    -------
    GameResult
    """
    if mode not in ("practical", "paper"):
        raise ValueError(f"mode must be 'practical' or 'paper', got {mode!r}")
    practical = mode == "practical"
    plain = isinstance(constraint, int | np.integer)
    dim = int(constraint) if plain else constraint.dim
    # the paper measures the gap at the plain λ̂
    project = constraint.project if practical and not plain else None
    bound = float(bound)
    pool = response_pool()
    counts, gaps = dict[int, float](), list[float]()
    best: tuple[float, np.ndarray, np.ndarray] | None = None
    first = best_response(np.zeros(dim))
    keep_response(pool, first)
    if practical:
        for response in initial:
            keep_response(pool, response)
    tolerance = float(nu(first) if callable(nu) else nu)
    if eta is None:
        if not practical:
            raise ValueError("mode='paper' needs an explicit eta (ν/(8B) or ν/(2B))")
        eta = 2.0 / bound
    player = ExponentiatedGradientPlayer(dim, bound, eta)
    lam_sum = np.zeros(dim)
    lam_hat = lam_sum
    last_check, last_gap = FIRST_CHECK, np.inf
    converged, t = False, 0
    for t in range(1, max_iter + 1):
        lam = player.lambda_
        response = best_response(lam)
        index = keep_response(pool, response)
        counts[index] = counts.get(index, 0.0) + 1.0
        lam_sum += lam
        lam_hat = lam_sum / t if project is None else project(lam_sum / t)
        low = best_response(lam_hat)  # the second oracle call of Algorithm 1: L_low at λ̂
        keep_response(pool, low)
        gap_t = np.inf
        for gap, q in _round_gaps(pool, counts, lam_hat, low, bound, practical, lp_step):
            gap_t = min(gap_t, gap)
            if best is None or gap <= best[0]:  # keep the pair with the smallest gap so far
                best = (gap, q.copy(), lam_hat.copy())
        gaps.append(float(gap_t))
        if gap_t <= tolerance:
            converged = True
            break
        if practical and t >= last_check * CHECK_GROWTH:
            if gap_t > SHRINK * last_gap:
                player.eta *= SHRINK
            last_check, last_gap = t, gap_t
        player.update(response.constraints)
    assert best is not None
    if not practical:  # Algorithms 1-2 return the uniform average of the iterates
        best = (gaps[-1], iterate_average(counts, len(pool)), lam_hat)
    gap, weights, lam_best = best
    weights = np.append(weights, np.zeros(len(pool) - len(weights)))
    responses, weights = support(pool.candidates, weights)
    return GameResult(
        responses=responses,
        weights=weights,
        lambda_hat=lam_best,
        gap=float(gap),
        converged=converged,
        n_iter=t,
        n_oracle_calls=1 + 2 * t,  # h_0, then two best responses a round
        nu=tolerance,
        bound=bound,
        gaps=gaps,
    )
