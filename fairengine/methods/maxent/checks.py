"""The max-entropy method's evidence.

* Its unconstrained reference is the same downstream classifier (tree or naive Bayes) trained on
  the raw training rows — the paper's "raw data" row — so the generic checks compare the
  debiased classifier with the raw one on accuracy and on the classifier's statistical rate.
* Its promise on the generated data: the data's representation rate and statistical rate reach
  τ (within a sampling allowance of :data:`RATE_ALLOWANCE` for the finite sample).
* Convergence: the fitted distribution's marginals match their targets θ.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from fairengine.methods.evidence import Baselines, Check, Evidence, Learner

if TYPE_CHECKING:
    from fairengine.data import Task

#: How far below τ a generated sample's rate may fall from sampling alone: about two standard
#: errors of a ratio of group shares on the default 5,000 generated rows.
RATE_ALLOWANCE = 0.05
#: Largest |E_p*[φ] − θ| of a fit that reached its target marginals.
MARGINAL_TOLERANCE = 1e-3


def learner(result: Any, train: Task) -> Learner:
    """The run's downstream classifier on the raw training rows."""
    classifier, n_bins = str(result.knobs["classifier"]), int(result.knobs["n_bins"])

    def fit_predict(train: Task, test: Task):
        from fairengine.methods.maxent.method import raw_predictions

        return raw_predictions(train, test, n_bins, classifier)

    words = {"tree": "decision tree", "gnb": "Gaussian naive Bayes"}.get(classifier, classifier)
    return Learner(f"{words} on the raw rows", ("maxent_raw", classifier, n_bins), fit_predict)


def data_rates(result: Any) -> Check | None:
    """Whether the generated data's representation and statistical rates reach τ."""
    values = result.metrics.get("train", {})
    rr, sr = values.get("representation_rate"), values.get("data_statistical_rate")
    if rr is None or sr is None or not (math.isfinite(rr) and math.isfinite(sr)):
        return None
    tau = float(result.knobs["tau"])
    numbers = {"representation_rate": float(rr), "statistical_rate": float(sr), "tau": tau,
               "allowance": RATE_ALLOWANCE}  # fmt: skip
    rates = (("representation", rr), ("statistical", sr))
    short = [n for n, v in rates if v < tau - RATE_ALLOWANCE]
    if not short:
        return Check("data_rates_vs_tau", "ok",
                     f"The generated data reach τ = {tau:g}: representation rate {rr:.3f}, "
                     f"statistical rate {sr:.3f}.", numbers)  # fmt: skip
    return Check(
        "data_rates_vs_tau", "warn",
        f"The generated data fall short of τ = {tau:g} on the {' and '.join(short)} rate "
        f"(representation {rr:.3f}, statistical {sr:.3f}).", numbers,
    )  # fmt: skip


def convergence(result: Any) -> Check | None:
    summary = result.artifacts.get("summary") or {}
    error = summary.get("max_marginal_error")
    if error is None or error <= MARGINAL_TOLERANCE:
        return None
    return Check("not_converged", "warn",
                 f"The max-entropy fit stopped with its marginals {error:.4f} away from their "
                 "targets θ.", {"max_marginal_error": float(error)})  # fmt: skip


def promise(result: Any, train: Task, test: Task, baselines: Baselines | None) -> list[Check]:
    return [c for c in (data_rates(result), convergence(result)) if c is not None]


EVIDENCE = Evidence(learner=learner, promise=promise)
