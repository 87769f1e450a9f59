"""What a noisy-groups run promises (:attr:`Method.guarantee`): the sentence on how strong its
guarantee is."""

from __future__ import annotations

from fairengine.methods.base import RunResult
from fairengine.methods.noisy_groups.knobs import VALIDATION_FRACTION


def guarantee(result: RunResult) -> str:
    """How strong the guarantee of this run is, in words (its page's caption)."""
    method, robust_eval = result.knobs["method"], result.knobs["robust_eval"]
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
            if used == "validation"
            else "on the training rows"
        )
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
