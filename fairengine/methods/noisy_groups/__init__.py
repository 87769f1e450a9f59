"""Robust fairness with noisy protected groups: Wang et al., NeurIPS 2020.

Public API: :func:`add_group_noise`, :func:`estimate_noise` / :class:`NoiseModel`,
:class:`RobustFairClassifier` (naive, DRO, soft assignments, unconstrained; the paper's
adversaries by default, :mod:`~fairengine.methods.noisy_groups.adversaries`),
:class:`RobustFairModel` (exportable), the paper's weaker checks (``robust_eval="paper"``) and
the margin check (the default, ``robust_eval="margin"``) in
:mod:`~fairengine.methods.noisy_groups.rates` (the exact worst cases of the ``robust_violation``
certificate are in :mod:`fairengine.metrics.noisy_groups`), and the registered method
``noisy_groups``.
"""

from fairengine.methods.noisy_groups.method import NOISY_GROUPS
from fairengine.methods.registry import lazy_attributes

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


__all__ = ["NOISY_GROUPS", *_LAZY]
__getattr__ = lazy_attributes(__name__, _LAZY)
