"""Robust fairness with noisy protected groups (seed 003): Wang et al., NeurIPS 2020.

Public API: :func:`add_group_noise`, :func:`estimate_noise` / :class:`NoiseModel`,
:class:`RobustFairClassifier` (naive, DRO, soft assignments, unconstrained; the paper's
adversaries by default, :mod:`~fairengine.methods.noisy_groups.adversaries`),
:class:`RobustFairModel` (exportable), the exact worst-case evaluators (the ``robust_violation``
certificate) and the paper's weaker checks (``robust_eval="paper"``, the default selection) in
:mod:`~fairengine.methods.noisy_groups.rates`, and the registered method ``noisy_groups``.
"""

from fairengine.methods.noisy_groups.estimator import (
    ADVERSARIES,
    METHODS,
    ROBUST_EVALS,
    RobustFairClassifier,
    select_best,
)
from fairengine.methods.noisy_groups.method import NOISY_GROUPS
from fairengine.methods.noisy_groups.model import RobustFairModel
from fairengine.methods.noisy_groups.noise import NoiseModel, add_group_noise, estimate_noise

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
