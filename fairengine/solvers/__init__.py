"""Shared optimisation pieces of the game-style methods: projections and dual players, the
exponentiated-gradient game with its constraint objects, descent–ascent, the candidate recorder
of every game loop, cost-sensitive oracles, the one least-squares kernel and small exact QPs
(design notes: docs/architecture.md, "Design notes")."""

from fairengine.solvers.candidates import CandidateRecorder
from fairengine.solvers.expgrad import (
    ExponentiatedGradientPlayer,
    GameResult,
    Response,
    solve_game,
)
from fairengine.solvers.least_squares import LeastSquares
from fairengine.solvers.moments import Constraint, Reduction, TwoSidedConstraint
from fairengine.solvers.oracles import Halfspace, PairedRegressionOracle
from fairengine.solvers.projections import (
    ProjectedGradientAscent,
    project_l1_ball,
    project_orthant_ball,
    project_simplex,
)
from fairengine.solvers.qp import (
    cone_least_squares,
    max_yield_weights,
    simplex_kkt_violation,
    simplex_least_squares,
)
from fairengine.solvers.tv_ball import project_tv_ball

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
    "max_yield_weights",
    "project_l1_ball",
    "project_orthant_ball",
    "project_simplex",
    "project_tv_ball",
    "simplex_kkt_violation",
    "simplex_least_squares",
]
