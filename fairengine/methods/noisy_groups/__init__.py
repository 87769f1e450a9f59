"""Robust fairness with noisy protected groups: Wang et al., NeurIPS 2020.

Public API: :func:`add_group_noise`, :func:`estimate_noise` / :class:`NoiseModel`,
:class:`RobustFairClassifier` (naive, DRO, soft assignments, unconstrained; the paper's
adversaries by default, :mod:`~fairengine.methods.noisy_groups.adversaries`),
:class:`RobustFairModel` (exportable), the paper's weaker checks (``robust_eval="paper"``) and
the margin check (the default, ``robust_eval="margin"``) in
:mod:`~fairengine.methods.noisy_groups.rates` (which also re-exports the exact worst-case
evaluators of the ``robust_violation`` certificate, defined in
:mod:`fairengine.metrics.noisy_groups`), and the registered method ``noisy_groups``.
"""

from fairengine.methods.noisy_groups.method import NOISY_GROUPS
from fairengine.methods.registry import lazy_attributes

__all__ = [
    "ADVERSARIES",
    "METHODS",
    "NOISY_GROUPS",
    "NoiseModel",
    "ROBUST_EVALS",
    "RobustFairClassifier",
    "RobustFairModel",
    "add_group_noise",
    "estimate_noise",
    "select_best",
]


#: Names imported from their submodule on first use, so that registering the method (a listing, a
#: cached sweep) does not load the algorithm and its libraries.
_LAZY = {
    "ADVERSARIES": "estimator",
    "METHODS": "estimator",
    "ROBUST_EVALS": "estimator",
    "RobustFairClassifier": "estimator",
    "select_best": "game",
    "RobustFairModel": "model",
    "NoiseModel": "noise",
    "add_group_noise": "noise",
    "estimate_noise": "noise",
}


__getattr__ = lazy_attributes(__name__, _LAZY)
