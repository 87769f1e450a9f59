"""Fair regression by reductions (seed 002): Agarwal, Dudík & Wu, ICML 2019.

Public API: :class:`FairRegressor` (Algorithms 1–2), :class:`FairRegressionModel`
(exportable), the losses and discretisation helpers (:func:`pointwise_loss`,
:func:`discretized_loss`, :func:`cost_matrix`, :func:`grid`), the reductions
(:class:`ParityReduction`, :class:`GroupLossReduction`) and their constraint objects
(:class:`StatisticalParity`, :class:`BoundedGroupLoss`), the baselines (:func:`unconstrained`,
:class:`SEO`), :func:`convex_envelope`, and the registered method ``fair_regression``. The
cached ε sweep is :func:`fairengine.sweeps.fair_regression.eps_frontier` (above the methods).
"""

from fairengine.methods.fair_regression.baselines import SEO, unconstrained
from fairengine.methods.fair_regression.constraints import BoundedGroupLoss, StatisticalParity
from fairengine.methods.fair_regression.estimator import FairRegressor
from fairengine.methods.fair_regression.frontier import convex_envelope
from fairengine.methods.fair_regression.learners import Component
from fairengine.methods.fair_regression.losses import (
    cost_matrix,
    discretized_loss,
    grid,
    pointwise_loss,
)
from fairengine.methods.fair_regression.method import EPS_GRID, FAIR_REGRESSION
from fairengine.methods.fair_regression.model import FairRegressionModel
from fairengine.methods.fair_regression.reductions import (
    GroupLossReduction,
    ParityReduction,
    parity_gamma,
)

__all__ = [
    "EPS_GRID",
    "FAIR_REGRESSION",
    "SEO",
    "BoundedGroupLoss",
    "Component",
    "FairRegressionModel",
    "FairRegressor",
    "GroupLossReduction",
    "ParityReduction",
    "StatisticalParity",
    "convex_envelope",
    "cost_matrix",
    "discretized_loss",
    "grid",
    "parity_gamma",
    "pointwise_loss",
    "unconstrained",
]
