"""Max-entropy debiasing: Celis, Keswani & Vishnoi, ICML 2020.

Public API: :func:`reweighting_weights` (Algorithm 1), :class:`MaxEntDebiaser` (the fair
max-entropy distribution p*), :class:`MaxEntModel` (exportable), :class:`DualOracle`,
:func:`solve_dual`, :func:`domain_from_task`, and the registered method ``maxent``; its metrics
(:func:`~fairengine.metrics.dataset.kl_to_empirical` and the data rates) are in
:mod:`fairengine.metrics`.
"""

from fairengine.methods.maxent.method import MAXENT, fit_generator
from fairengine.methods.registry import lazy_attributes

#: Names imported from their submodule on first use, so that registering the method (a listing, a
#: cached sweep) does not load the algorithm and its libraries.
_LAZY = {
    "MaxEntDebiaser": "debiaser",
    "group_rates": "debiaser",
    "Domain": "domain",
    "Feature": "domain",
    "domain_from_task": "domain",
    "readable_rows": "domain",
    "MaxEntModel": "model",
    "DualOracle": "oracle",
    "DualState": "oracle",
    "prior_weights": "reweighting",
    "reweighting_weights": "reweighting",
    "target_marginals": "reweighting",
    "DualNotConverged": "oracle",
    "DualSolution": "oracle",
    "solve_dual": "oracle",
}
__all__ = ["MAXENT", "fit_generator", *_LAZY]


__getattr__ = lazy_attributes(__name__, _LAZY)
