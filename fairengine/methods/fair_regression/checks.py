"""The fair-regression method's evidence.

Design notes: ``docs/methods/fair_regression.md``."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from fairengine import metrics
from fairengine.methods.evidence import Baselines, Check, Evidence, check_allowance, qualify_status
from fairengine.methods.evidence_fits import Learner

if TYPE_CHECKING:
    from fairengine.data import Task

#: The test metric each constraint bounds by ε.
DISPARITY = {"statistical_parity": "sp_ks", "bounded_group_loss": "scaled_max_group_loss"}


def learner(result: Any, train: Task) -> Learner:
    loss, base = str(result.knobs["loss_function"]), str(result.knobs["base_estimator"])

    def fit_predict(train: Task, test: Task):
        from fairengine.data.encoding import FeatureEncoder
        from fairengine.methods.fair_regression.baselines import unconstrained

        encoder = FeatureEncoder().fit(train.X)
        y = np.asarray(train.y, dtype=float)
        low, high = float(y.min()), float(y.max())
        span = high - low if high > low else 1.0
        fitted = unconstrained(
            encoder.transform(train.X),
            np.clip((y - low) / span, 0, 1),
            train.groups,
            loss=loss,
            base=base,
        )
        return tuple(
            low + span * np.asarray(fitted.predict(encoder.transform(t.X)), dtype=float)
            for t in (train, test)
        )

    return Learner(f"{base} regression ({loss} loss)", ("fair_regression", loss, base), fit_predict)


def fairness_metric(result: Any) -> str:
    return "sp_ks" if result.knobs["constraint"] == "statistical_parity" else "max_group_loss"


def disparity_allowance(name: str, test: Task) -> float:
    """How far above ε the test disparity may be from sampling alone: for the KS distance the
    95 % quantile of its null (every group's predictions from one distribution) at the test
    groups' sizes (:func:`~fairengine.metrics.ks_null_quantile`); for the worst group's scaled
    loss (values in [0, 1]) two standard errors of a mean at its largest variance, 1/√n of the
    smallest test group."""
    counts = np.bincount(np.asarray(test.groups, dtype=np.int64))
    counts = counts[counts > 0]
    if name == "sp_ks":
        return metrics.ks_null_quantile(counts)
    return 1.0 / math.sqrt(max(int(counts.min()) if counts.size else 1, 1))


def held_out_disparity(result: Any, test: Task) -> Check | None:
    """The test disparity against ε plus its sampling allowance (:func:`disparity_allowance`):
    ok within, fail beyond (the data show the promise does not hold)."""
    name = DISPARITY[result.knobs["constraint"]]
    value = result.metrics.get("test", {}).get(name)
    if value is None or not math.isfinite(float(value)):
        return None
    eps, value = float(result.knobs["eps"]), float(value)
    allowance = disparity_allowance(name, test)
    train_value = float(result.metrics.get("train", {}).get(name, math.nan))
    numbers = {
        "test_disparity": value,
        "train_disparity": train_value,
        "eps": eps,
        "allowance": allowance,
    }
    words = "KS disparity" if name == "sp_ks" else "worst group's scaled loss"
    noise = (
        "the 95 % quantile of the KS distance between equally distributed groups of these sizes"
        if name == "sp_ks"
        else "two standard errors of the smallest group's mean loss"
    )
    said = f"On the test rows the {words} is {value:.3f}"
    if value <= eps:
        text = f"{said} ≤ ε = {eps:g}."
    elif value <= eps + allowance:
        text = (
            f"{said}: above ε = {eps:g} by less than the sampling allowance {allowance:.3f} "
            f"({noise}), so consistent with ε."
        )
    else:
        text = (
            f"{said}, above ε = {eps:g} plus the sampling allowance {allowance:.3f} ({noise}; "
            f"train {train_value:.3f}): the constraint does not hold on new rows."
        )
    level = "ok" if value <= eps + allowance else "fail"
    return Check("held_out_disparity", level, text, numbers)


def convergence(result: Any) -> Check | None:
    summary = result.artifacts.get("summary") or {}
    status = summary.get("status")
    if status not in ("not_converged", "infeasible"):
        return None
    level = "fail" if status == "infeasible" else "warn"
    return Check(
        "not_converged",
        level,
        str(summary.get("message_fit", summary.get("message"))),
        {"gap": float(summary.get("gap", math.nan))},
    )


def promise(result: Any, train: Task, test: Task, baselines: Baselines | None) -> list[Check]:
    held_out = held_out_disparity(result, test)
    checks = [held_out, convergence(result)]
    qualify_status(result.artifacts, "message", held_out, where="summary")
    return [c for c in checks if c is not None]


EVIDENCE = Evidence(
    learner=learner,
    fairness_metric=fairness_metric,
    promise=promise,
    promise_checks=("held_out_disparity",),
)


def fidelity_oracle(result: Any) -> bool:
    """The fidelity matrix's oracle for this method's promise: the promise measured on the run's
    numbers, reading no check's verdict (only the sampling allowance a check derived from the
    rows); see :func:`fairengine.frontier.fidelity.oracle_promise_held`."""
    value = result.metrics["test"][DISPARITY[result.knobs["constraint"]]]
    return value <= result.knobs["eps"] + check_allowance(result, "held_out_disparity")
