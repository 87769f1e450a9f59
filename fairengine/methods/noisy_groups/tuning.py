"""The paper's hyperparameter protocol (App. F.1).

For each setting of a small grid of learning rates (η_θ, η_λ, η_w / η_p̃; Table 1) a
:class:`~fairengine.methods.noisy_groups.estimator.RobustFairClassifier` is fitted on the training
rows and its best iterate chosen there by the paper's rule; the setting is then chosen on a
validation split (noisy groups only — never true groups, §4.4) by the approach's robust constraint
check and then by validation error: the lowest validation error among settings whose selected
iterate meets every robust constraint on validation, else the least-violating setting (the same
rank heuristic, :func:`~fairengine.methods.noisy_groups.game.select_best`).

Choices the paper leaves open (say so, and why):

* per split, not "on average over 10 splits" (the paper's F.1.4 wording; the code tunes per split,
  and a per-split rule is what a user with one data set can run);
* the validation check is the EXACT worst case by default (``check="exact"``: over every
  assignment consistent with P(G | Ĝ) for soft assignments, the TV ball for DRO). The paper's own
  check on validation (the code uses the TRUE groups there, a leak the spec rejects) has no
  noisy-group analogue for soft assignments but the W table recorded with the iterate, and that
  table was measured to pass settings that break the true-group constraints;
  ``check="paper"`` is kept for comparison;
* the grid is a star around the paper's selected values (η_θ = η_w = 0.01, η_λ = 1; "neither the
  largest nor the smallest of all values tried"): each rate moved one step along Table 1's grid —
  6 settings instead of 36, so the protocol stays affordable (:data:`SOFT_GRID`).

Measured by the benches ``ng_adult_tuned`` and ``ng_credit_tuned`` (bench/RESULTS.md): tuning
by the exact check keeps the true-group constraints at every noise level on Adult at the price
of a higher error (on Credit, the all-negatives error); tuning by the paper's W check lowers the
error and breaks the constraints. Neither meets "error ≤ .22 and violation ≤ +.01" at every
level, so tuning stays an option (``tuning="grid"``, default ``"none"``): it costs 6 fits and is
the choice when the true-group guarantee matters more than error.
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
        fits[best], tuple(grid[best]), status, [tuple(g) for g in grid], errors,
        [float(v.max()) for v in viols],
    )  # fmt: skip


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
