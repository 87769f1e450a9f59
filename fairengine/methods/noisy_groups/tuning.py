"""The paper's hyperparameter protocol (App. F.1), ``tuning="grid"`` (experimental).

Each setting of :data:`SOFT_GRID` (η_θ, η_λ, η_w: a star around the paper's selected values, one
step along Table 1's grid each) is fitted and its best iterate chosen by the paper's rule; the
setting is then chosen on held-out rows (noisy groups only) by the approach's robust check
(``check="exact"`` by default, ``"paper"`` for comparison) and then by error, else the
least-violating setting (:func:`~fairengine.methods.noisy_groups.game.select_best`). Per split,
as a user with one data set can run it. Why it is not the default: "Design notes" in
docs/methods/noisy_groups.md (benches ``ng_adult_tuned``, ``ng_credit_tuned``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from fairengine.methods.noisy_groups.estimator import RobustFairClassifier, select_best

#: (learning_rate η_θ, lambda_learning_rate η_λ, adversary_learning_rate η_w) — a star around the
#: paper's selected (0.01, 1.0, 0.01) along the Table 1 grids.
SOFT_GRID: tuple[tuple[float, float, float], ...] = (
    (0.01, 1.0, 0.01),
    (0.1, 1.0, 0.01),
    (0.01, 0.5, 0.01),
    (0.01, 2.0, 0.01),
    (0.01, 1.0, 0.1),
    (0.01, 1.0, 0.001),
)
CHECKS = ("exact", "paper", "margin")


@dataclass
class TuningResult:
    """The chosen fit and, per grid setting, its validation error and worst robust violation."""

    best: RobustFairClassifier
    setting: tuple[float, float, float]
    status: str  # "feasible": some setting met the robust check on validation; else "fallback"
    settings: list[tuple[float, float, float]] = field(default_factory=list)
    val_errors: list[float] = field(default_factory=list)
    val_violations: list[float] = field(default_factory=list)


def choose(
    fits: Sequence[RobustFairClassifier],
    grid: Sequence[tuple[float, float, float]],
    X_val,
    y_val,
    noisy_val,
    check: str = "exact",
) -> TuningResult:
    """Choose among fitted grid settings on (``X_val``, ``y_val``, ``noisy_val``): the lowest
    validation error among settings meeting the ``check`` constraints, else the least violating."""
    if check not in CHECKS:
        raise ValueError(f"check must be one of {CHECKS}; got {check!r}")
    if not fits or len(fits) != len(grid):
        raise ValueError("need one fitted classifier per grid setting (and at least one)")
    y_val = np.asarray(y_val).ravel()
    errors = [float(np.mean(clf.predict(X_val) != y_val)) for clf in fits]
    viols = [np.asarray(clf.robust_violations(X_val, y_val, noisy_val)[check]) for clf in fits]
    viol = np.vstack(viols)
    best = select_best(np.asarray(errors), viol)
    status = "feasible" if (viol.max(axis=1) <= 1e-12).any() else "fallback"
    return TuningResult(
        fits[best],
        tuple(grid[best]),
        status,
        [tuple(g) for g in grid],
        errors,
        [float(v.max()) for v in viols],
    )


def tune(
    make: Callable[[float, float, float], RobustFairClassifier],
    fit: Callable[[RobustFairClassifier], RobustFairClassifier],
    X_val,
    y_val,
    noisy_val,
    grid: Sequence[tuple[float, float, float]] = SOFT_GRID,
    check: str = "exact",
) -> TuningResult:
    """Fit ``make(η_θ, η_λ, η_adv)`` for each grid setting with ``fit`` (best iterate on train)
    and :func:`choose` the setting on the validation data by ``check`` then error."""
    if not grid:
        raise ValueError("the hyperparameter grid is empty")
    fits = [fit(make(*setting)) for setting in grid]
    return choose(fits, grid, X_val, y_val, noisy_val, check)
