"""The fair-regression method's evidence.

* Its unconstrained reference is the same regression learner fitted without constraint (the
  best response at λ = 0, as the method's own baseline row), on the target's original scale.
* Its promise: the test disparity — the KS statistical-parity distance, or the worst group's
  scaled loss for bounded group loss — within ε; a sampling allowance of 1/√n of the smallest
  test group separates "within ε up to noise" (warn) from "beyond ε" (fail).
* Convergence: the game's status ("not_converged", "infeasible").
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from fairengine.methods.evidence import Baselines, Check, Evidence, Learner, qualify_status

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
            encoder.transform(train.X), np.clip((y - low) / span, 0, 1), train.groups,
            loss=loss, base=base,
        )  # fmt: skip
        return tuple(
            low + span * np.asarray(fitted.predict(encoder.transform(t.X)), dtype=float)
            for t in (train, test)
        )

    return Learner(f"{base} regression ({loss} loss)", ("fair_regression", loss, base), fit_predict)


def fairness_metric(result: Any) -> str:
    return "sp_ks" if result.knobs["constraint"] == "statistical_parity" else "max_group_loss"


def held_out_disparity(result: Any, test: Task) -> Check | None:
    name = DISPARITY[result.knobs["constraint"]]
    value = result.metrics.get("test", {}).get(name)
    if value is None or not math.isfinite(float(value)):
        return None
    eps, value = float(result.knobs["eps"]), float(value)
    counts = np.bincount(np.asarray(test.groups, dtype=np.int64))
    allowance = 1.0 / math.sqrt(max(int(counts[counts > 0].min()), 1))
    train_value = float(result.metrics.get("train", {}).get(name, math.nan))
    numbers = {"test_disparity": value, "train_disparity": train_value, "eps": eps,
               "allowance": allowance}  # fmt: skip
    words = "KS disparity" if name == "sp_ks" else "worst group's scaled loss"
    if value <= eps:
        return Check(
            "held_out_disparity",
            "ok",
            f"On the test rows the {words} is {value:.3f} ≤ ε = {eps:g}.",
            numbers,
        )
    level = "warn" if value <= eps + allowance else "fail"
    return Check(
        "held_out_disparity",
        level,
        f"On the test rows the {words} is {value:.3f}, above ε = {eps:g} (train {train_value:.3f})"
        + (f", within the sampling allowance {allowance:.3f}." if level == "warn" else "."),
        numbers,
    )


def convergence(result: Any) -> Check | None:
    summary = result.artifacts.get("summary") or {}
    status = summary.get("status")
    if status not in ("not_converged", "infeasible"):
        return None
    level = "fail" if status == "infeasible" else "warn"
    return Check("not_converged", level, str(summary.get("message_fit", summary.get("message"))),
                 {"gap": float(summary.get("gap", math.nan))})  # fmt: skip


def promise(result: Any, train: Task, test: Task, baselines: Baselines | None) -> list[Check]:
    held_out = held_out_disparity(result, test)
    checks = [held_out, convergence(result)]
    qualify_status(result.artifacts, "message", held_out, where="summary")
    return [c for c in checks if c is not None]


EVIDENCE = Evidence(learner=learner, fairness_metric=fairness_metric, promise=promise)
