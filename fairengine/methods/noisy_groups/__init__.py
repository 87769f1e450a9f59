"""Robust fairness with noisy protected groups (seed 003): Wang et al., NeurIPS 2020.

Public API: :func:`add_group_noise`, :func:`estimate_noise` / :class:`NoiseModel`,
:class:`RobustFairClassifier` (naive, DRO, soft assignments, unconstrained),
:class:`RobustFairModel` (exportable), the exact worst-case evaluators (and the paper code's weak
ones, ``robust_eval="paper"``) in :mod:`~fairengine.methods.noisy_groups.rates`, and the
registered method ``noisy_groups``.
"""

from fairengine.methods.noisy_groups.estimator import (
    METHODS,
    ROBUST_EVALS,
    RobustFairClassifier,
    select_best,
)
from fairengine.methods.noisy_groups.method import NOISY_GROUPS
from fairengine.methods.noisy_groups.model import RobustFairModel
from fairengine.methods.noisy_groups.noise import NoiseModel, add_group_noise, estimate_noise

__all__ = [
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
