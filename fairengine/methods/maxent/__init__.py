"""Max-entropy debiasing (seed 001): Celis, Keswani & Vishnoi, ICML 2020.

Public API: :func:`reweighting_weights` (Algorithm 1), :class:`MaxEntDebiaser` (the fair
max-entropy distribution p*), :class:`MaxEntModel` (exportable), :class:`DualOracle`,
:func:`solve_dual`, :func:`domain_from_task`, :func:`kl_to_empirical`, and the registered method
``maxent``.
"""

from fairengine.methods.maxent.debiaser import MaxEntDebiaser, group_rates
from fairengine.methods.maxent.domain import Domain, Feature, domain_from_task, readable_rows
from fairengine.methods.maxent.evaluation import kl_to_empirical
from fairengine.methods.maxent.method import MAXENT, fit_generator
from fairengine.methods.maxent.model import MaxEntModel
from fairengine.methods.maxent.oracle import DualOracle, DualState
from fairengine.methods.maxent.reweighting import (
    prior_weights,
    reweighting_weights,
    target_marginals,
)
from fairengine.methods.maxent.solver import DualNotConverged, DualSolution, solve_dual

__all__ = [
    "MAXENT",
    "Domain",
    "DualNotConverged",
    "DualOracle",
    "DualSolution",
    "DualState",
    "Feature",
    "MaxEntDebiaser",
    "MaxEntModel",
    "domain_from_task",
    "fit_generator",
    "group_rates",
    "kl_to_empirical",
    "prior_weights",
    "readable_rows",
    "reweighting_weights",
    "solve_dual",
    "target_marginals",
]
