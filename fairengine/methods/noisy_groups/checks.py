"""The noisy-groups method's evidence: its promise — the rate constraints hold on the *true*
groups within the slack α — checked on the held-out test rows.

This is an audit only benchmark data allows: the method never sees true groups (only the noisy
ones), but the task has them, so the check reports the true-group violation on test rows and
says so. The selection status ("feasible") was decided on the training or validation rows with
noisy groups; its sentence is qualified by this held-out check. Also the sentence on how strong
a run's guarantee is (:func:`guarantee`, :attr:`Method.guarantee`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from fairengine import metrics
from fairengine.methods.evidence import (
    Baselines,
    Check,
    Evidence,
    check_allowance,
    qualify_status,
)
from fairengine.methods.evidence_fits import Learner
from fairengine.methods.noisy_groups.knobs import VALIDATION_FRACTION
from fairengine.methods.noisy_groups.rates import NOISE_COST

if TYPE_CHECKING:
    from fairengine.data import Task
    from fairengine.methods.base import RunResult


def extra_metrics(result: Any, task: Task, train: Task, pred: np.ndarray) -> dict[str, float]:
    """The true-group violation of ``pred`` with the run's constraint and slack."""
    options = {"constraint": result.knobs["constraint"], "slack": result.knobs["slack"]}
    hard = (np.asarray(pred, dtype=float) >= 0.5).astype(float)
    return {"true_violation": float(metrics.true_violation(task.y, hard, task.groups, **options))}


#: Knobs the unconstrained learner does not read: its fit is shared across them.
_UNCONSTRAINED_IGNORES = ("method", "slack", "constraint")


def learner(result: Any, train: Task) -> Learner:
    """The method's own learner without constraints (``method = "unconstrained"``, every other
    knob as the run's): the reference the constraint is judged against."""
    knobs = {k: v for k, v in result.knobs.items() if k not in _UNCONSTRAINED_IGNORES}

    def fit_predict(train: Task, test: Task) -> tuple[np.ndarray, np.ndarray]:
        from fairengine.methods.evaluation import model_inputs
        from fairengine.methods.registry import get_method

        run = get_method("noisy_groups").run_function
        fitted = run(train, test, **{**result.knobs, "method": "unconstrained"})
        return tuple(
            np.asarray(fitted.model.metric_predictions(model_inputs(fitted, split, task)), float)
            for split, task in (("train", train), ("test", test))
        )

    key = ("noisy_groups_unconstrained", *sorted((k, str(v)) for k, v in knobs.items()))
    return Learner("hinge-loss linear classifier of the method (no constraints)", key, fit_predict)


def base_rows(task: Task, constraint: str) -> int:
    """Fewest rows of a constrained rate's base (positives for TPR...) in any true group."""
    counts = []
    for kind in metrics.RATE_FAMILIES[constraint]:
        base = metrics.rate_base(kind, np.asarray(task.y, dtype=float))
        counts.append(np.bincount(np.asarray(task.groups, dtype=np.int64), weights=base))
    every = np.concatenate(counts)
    every = every[every > 0]
    return int(every.min()) if every.size else 0


def rate_allowance(test: Task, constraint: str) -> tuple[float, int]:
    """Two binomial standard errors (at their largest, p = 1/2) of a rate over the smallest true
    group's rate base on the test rows, and that base's row count: how far a held-out
    violation may exceed 0 from sampling alone."""
    n = base_rows(test, constraint)
    return 2 * 0.5 / math.sqrt(max(n, 1)), n


def held_out_constraint(result: Any, test: Task) -> Check | None:
    """The true-group violation on test against its sampling allowance: ok within, fail beyond
    (the data show the constraint does not hold on the true groups)."""
    value = result.metrics.get("test", {}).get("true_violation")
    if value is None or not math.isfinite(float(value)):
        return None
    value = float(value)
    train_value = float(result.metrics.get("train", {}).get("true_violation", math.nan))
    allowance, n = rate_allowance(test, result.knobs["constraint"])
    slack = float(result.knobs["slack"])
    numbers = {
        "test_true_violation": value,
        "train_true_violation": train_value,
        "slack": slack,
        "allowance": allowance,
        "smallest_base_rows": float(n),
    }
    audit = "(audit on the true groups, which only benchmark data has)"
    over = f"the sampling allowance {allowance:.3f} (two binomial standard errors over {n} rows)"
    level, sentence = "ok", f"every true-group rate is within the slack α = {slack:g} {audit}."
    if 0 < value <= allowance:
        sentence = (
            f"a true group's rate misses the slack α = {slack:g} by {value:+.3f}, within {over} "
            f"{audit}."
        )
    elif value > allowance:
        level = "fail"
        sentence = (
            f"a true group's rate misses the constraint by {value:+.3f} beyond the slack "
            f"α = {slack:g}, more than {over} {audit}: the fairness promise does not hold out of "
            "sample."
        )
    return Check("held_out_constraint", level, f"On the test rows {sentence}", numbers)


def few_rows_check(result: Any, test: Task) -> Check | None:
    """Warn when the test rows cannot tell whether the constraints hold: the held-out violation
    is above one standard error (half its allowance) but within the allowance, and that
    allowance (few rows in the smallest true group's rate base) is wider than the slack α
    itself. A violation within one standard error is consistent with the constraint, one
    beyond the allowance shown missed: neither needs this warning."""
    if "constraint" not in result.knobs or "slack" not in result.knobs:
        return None
    value = float(result.metrics.get("test", {}).get("true_violation", math.nan))
    allowance, n = rate_allowance(test, result.knobs["constraint"])
    slack = float(result.knobs["slack"])
    if not (allowance / 2 < value <= allowance and allowance > slack):
        return None
    return Check(
        "few_group_rows",
        "warn",
        f"On the test rows a true group's rate misses the slack by {value:+.3f}, but its group "
        f"has only {n} rows in a constrained rate's base: from sampling alone the rate moves by "
        f"up to {allowance:.3f}, more than the slack α = {slack:g}, so these rows can neither "
        "confirm nor refute the constraint. Use more rows per group, fewer groups or a larger "
        "slack.",
        {
            "smallest_base_rows": float(n),
            "allowance": allowance,
            "slack": slack,
            "test_true_violation": value,
        },
    )


def noise_check(result: Any) -> Check | None:
    """Warn when the noise, not only the row count, leaves too little information about some
    true group's rate: its estimate from the noisy groups (through the noise model) has a
    standard error above the slack α on the selection rows and at least :data:`NOISE_COST`
    times that of the same rows without noise. The method's own check then cannot confirm the
    constraints."""
    found = result.artifacts.get("noise_se")
    if not found or "slack" not in result.knobs:
        return None
    slack, se, plain = float(result.knobs["slack"]), found["se"], found["plain"]
    if not (se > slack and se >= NOISE_COST * plain):
        return None
    shown = "is unbounded" if not math.isfinite(se) else f"is {se:.3f}"
    return Check(
        "noise_too_strong",
        "warn",
        f"The group noise hides some true group: the standard error of its rate, estimated "
        f"from the noisy groups on the selection rows, {shown} (without noise: {plain:.3f}), "
        f"more than the slack α = {slack:g}. The noisy groups alone cannot confirm the "
        "constraints: the classifier may be more cautious than needed (up to predicting one "
        "class) or miss them on the true groups. Use less noise, more rows per group or a "
        "larger slack.",
        {"noise_standard_error": float(se), "plain_standard_error": float(plain), "slack": slack},
    )


def selection_check(result: Any) -> Check | None:
    """The best-iterate selection's own outcome (fallback = no iterate met its check)."""
    if result.artifacts.get("status") != "fallback":
        return None
    return Check(
        "not_converged",
        "warn",
        "No recorded iterate more accurate than predicting one class met the constraint check on "
        "the selection rows; the least-violating such one was kept.",
        {},
    )


def shows_noise_cost(result: Any, test: Task | None, held_out: Check | None) -> bool:
    """Whether the run shows what too strong a noise costs (see :func:`noise_check`): its
    held-out true-group violation above 0, or a nearly constant classifier. A run that kept
    its constraints on the true groups with a classifier that separates the classes paid
    nothing the user needs to act on."""
    from fairengine.methods.evaluation import model_inputs
    from fairengine.methods.evidence import near_constant

    if held_out is None or held_out.numbers.get("test_true_violation", 0.0) > 0:
        return True
    if getattr(result, "model", None) is None or test is None:
        return False
    pred = result.model.metric_predictions(model_inputs(result, "test", test))
    return near_constant(np.asarray(pred, dtype=float), test.groups)[0]


def promise(result: Any, train: Task, test: Task, baselines: Baselines | None) -> list[Check]:
    held_out = held_out_constraint(result, test)
    noise = noise_check(result)
    # The status sentence ("feasible") carries the first evidence against it: a broken held-out
    # constraint, else noise too strong for the selection rows to confirm the constraints.
    against = next((c for c in (held_out, noise) if c is not None and c.level != "ok"), None)
    qualify_status(result.artifacts, "status_message", against)
    if held_out is not None:
        result.artifacts["status_held_out"] = held_out.level
    if noise is not None and not shows_noise_cost(result, test, held_out):
        noise = None  # said in the status sentence; a warning only where the run shows its cost
    checks = (held_out, few_rows_check(result, test), noise, selection_check(result))
    return [c for c in checks if c is not None]


EVIDENCE = Evidence(
    learner=learner,
    extra_metrics=extra_metrics,
    extra_metrics_knobs=("constraint", "slack"),
    promise=promise,
    promise_checks=("held_out_constraint", "few_group_rows", "noise_too_strong"),
)


def fidelity_oracle(result: Any) -> bool:
    """The fidelity matrix's oracle for this method's promise: the promise measured on the run's
    numbers, reading no check's verdict (only the sampling allowance a check derived from the
    rows); see :func:`fairengine.frontier.fidelity.oracle_promise_held`."""
    return float(result.metrics["test"]["true_violation"]) <= check_allowance(
        result, "held_out_constraint"
    )


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
