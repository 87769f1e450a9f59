"""Shared optimisation pieces reused by the game-style methods.

* :mod:`~fairengine.solvers.projections` -- simplex, l1 ball, orthant ∩ l2 ball; the dual
  player of online projected gradient ascent.
* :mod:`~fairengine.solvers.candidates` -- the one candidate recorder of every game loop (the
  descent–ascent iterates, exponentiated gradient's best responses).
* :mod:`~fairengine.solvers.expgrad` -- the exponentiated-gradient game.
* :mod:`~fairengine.solvers.moments` -- constraints as objects for that game (fairlearn's
  ``Moment`` idea): the constraint protocol and the generic best response (``Reduction``).
* :mod:`~fairengine.solvers.oracles` -- weighted cost-sensitive classification oracles.
* :mod:`~fairengine.solvers.least_squares` -- the one (weighted, ridged or exact) least-squares
  kernel of the engine.
* :mod:`~fairengine.solvers.descent_ascent` -- projected gradient descent–ascent: θ, λ and an
  adversary as players (noisy groups).
* :mod:`~fairengine.solvers.tv_ball` -- exact TV-ball ∩ simplex projection (Wang et al. 2020).
* :mod:`~fairengine.solvers.qp` -- exact simplex / cone least squares, hull LPs.
"""

from fairengine.solvers.candidates import CandidateRecorder
from fairengine.solvers.expgrad import (
    ExponentiatedGradientPlayer,
    GameResult,
    Response,
    solve_game,
)
from fairengine.solvers.least_squares import LeastSquares
from fairengine.solvers.moments import Constraint, Reduction, TwoSidedConstraint
from fairengine.solvers.oracles import Halfspace, PairedRegressionOracle, csc_objective
from fairengine.solvers.projections import (
    ProjectedGradientAscent,
    project_l1_ball,
    project_orthant_ball,
    project_simplex,
)
from fairengine.solvers.qp import (
    cone_least_squares,
    in_convex_hull,
    max_yield_weights,
    simplex_kkt_violation,
    simplex_least_squares,
)
from fairengine.solvers.tv_ball import project_tv_ball, tv_ball_linear_max

__all__ = [
    "CandidateRecorder",
    "Constraint",
    "Reduction",
    "TwoSidedConstraint",
    "ExponentiatedGradientPlayer",
    "GameResult",
    "Response",
    "solve_game",
    "Halfspace",
    "LeastSquares",
    "PairedRegressionOracle",
    "ProjectedGradientAscent",
    "cone_least_squares",
    "csc_objective",
    "in_convex_hull",
    "max_yield_weights",
    "project_l1_ball",
    "project_orthant_ball",
    "project_simplex",
    "project_tv_ball",
    "simplex_kkt_violation",
    "simplex_least_squares",
    "tv_ball_linear_max",
]
