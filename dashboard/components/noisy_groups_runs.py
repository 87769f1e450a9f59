"""Cached engine calls of the noisy groups page (the page itself computes nothing)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pandas as pd

from dashboard.components.cached import model_file  # noqa: F401  (one definition)
from fairengine.data import Task
from fairengine.methods.base import RunResult
from fairengine.methods.noisy_groups.method import VALIDATION_FRACTION

#: Noise levels of the page's sweep (the paper's Figures 1–3).
NOISE_GRID = (0.1, 0.2, 0.3, 0.4, 0.5)
SWEEP_METHODS = ("naive", "dro", "soft")


def guarantee_text(method: str, robust_eval: str, result: RunResult) -> str:
    """How strong the guarantee of this run is, in words (the page's caption)."""
    certified = result.metrics["test"]["robust_violation"] <= 0.0
    ball = (
        "every assignment of true groups consistent with the noise model"
        if method == "soft"
        else "every noise pattern in the TV ball (safe radius)"
    )
    worst = f"Worst case = the exact maximum over {ball}."
    if method in ("naive", "unconstrained"):
        check = "Selected on the noisy groups only."
    elif robust_eval == "paper":
        check = "Selected as checked against the paper's adversary (not a guarantee)."
    elif robust_eval == "margin":
        used = result.artifacts.get("selection_used", result.knobs.get("selection"))
        rows = (
            f"on {VALIDATION_FRACTION:.0%} of the training rows held out"
            if used == "validation" else "on the training rows"
        )  # fmt: skip
        against = (
            "the label-aware worst case (every assignment consistent with the noise model that "
            "follows the label and the noisy group, not the decision) and the paper's adversary "
            "W with a 95% sampling margin"
            if method == "soft"
            else "the true-group rates estimated from the noisy groups through the noise model, "
            "with a margin of one standard error, and the paper's adversary"
        )
        check = f"Selected as checked against {against}, {rows} — not a guarantee."
    else:
        check = "Selected with the exact worst case on train."
    verdict = (
        f" On test the constraints are guaranteed against {ball}."
        if certified
        else " The worst case exceeds 0: no guarantee against every noise pattern."
    )
    return f"{worst} {check}{verdict}"


def noise_sweep(
    train: Task,
    test: Task,
    knobs: dict,
    store,
    methods: Sequence[str] = SWEEP_METHODS,
    progress: Callable[[int, int, dict], None] | None = None,
) -> pd.DataFrame:
    """Frontier points (train and test rows) of every method in ``methods`` at every noise level
    of :data:`NOISE_GRID`, the other knobs fixed; cached in ``store`` (the frontier engine)."""
    from fairengine.frontier import sweep

    fixed = {k: [v] for k, v in knobs.items() if k not in ("noise", "method")}
    grid = {"method": list(methods), "noise": list(NOISE_GRID), **fixed}
    return sweep("noisy_groups", train, test, grid, store=store, progress=progress).points
