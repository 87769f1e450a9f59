"""Fair regression by reductions: Agarwal, Dudík & Wu, ICML 2019.

Public API: :class:`FairRegressor` (Algorithms 1–2), :class:`FairRegressionModel`
(exportable), the losses and discretisation helpers (:func:`pointwise_loss`,
:func:`discretized_loss`, :func:`cost_matrix`, :func:`grid`), the reductions
(:class:`ParityReduction`, :class:`GroupLossReduction`) and their constraint objects
(:class:`StatisticalParity`, :class:`BoundedGroupLoss`), the baselines (:func:`unconstrained`,
:class:`SEO`), :func:`convex_envelope`, and the registered method ``fair_regression``. The
cached ε sweep is :func:`fairengine.sweeps.fair_regression.eps_points` (above the methods).
"""

from fairengine.methods.fair_regression.method import EPS_GRID, FAIR_REGRESSION
from fairengine.methods.registry import lazy_attributes

#: Names imported from their submodule on first use, so that registering the method (a listing, a
#: cached sweep) does not load the algorithm and its libraries.
_LAZY = {
    "SEO": "baselines",
    "unconstrained": "baselines",
    "BoundedGroupLoss": "constraints",
    "StatisticalParity": "constraints",
    "FairRegressor": "estimator",
    "convex_envelope": "baselines",
    "Component": "learners",
    "cost_matrix": "losses",
    "discretized_loss": "losses",
    "grid": "losses",
    "pointwise_loss": "losses",
    "FairRegressionModel": "model",
    "GroupLossReduction": "reductions",
    "ParityReduction": "reductions",
    "parity_gamma": "constraints",
}


__all__ = ["EPS_GRID", "FAIR_REGRESSION", *_LAZY]
__getattr__ = lazy_attributes(__name__, _LAZY)
