"""The max-entropy method's evidence.

Design notes: ``docs/methods/maxent.md``."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from fairengine.methods.evidence import Baselines, Check, Evidence
from fairengine.methods.evidence_fits import Learner

if TYPE_CHECKING:
    from fairengine.data import Task

#: How far below τ a generated sample's rate may fall from sampling alone: about two standard
#: errors of a ratio of group shares on the default 5,000 generated rows.
RATE_ALLOWANCE = 0.05
#: A rate below this share of its target is far short: p* matched many marginals that correlate
#: with the protected attribute and moved away from the fair prior.
FAR_SHORT = 0.9
#: Largest |E_p*[φ] − θ| of a fit that reached its target marginals.
MARGINAL_TOLERANCE = 1e-3


def learner(result: Any, train: Task) -> Learner:
    """The run's downstream classifier on the raw training rows, Z among its inputs."""
    from fairengine.methods.maxent.classifier import CLASSIFIER_WORDS

    classifier, n_bins = str(result.knobs["classifier"]), int(result.knobs["n_bins"])
    feature_set = str(result.knobs.get("domain", "all"))

    def fit_predict(train: Task, test: Task):
        from fairengine.methods.maxent.evaluation import raw_predictions

        return raw_predictions(train, test, n_bins, classifier, feature_set)

    words = CLASSIFIER_WORDS.get(classifier, classifier)
    return Learner(
        f"{words} on the raw rows, with the protected attribute",
        ("maxent_raw_z", classifier, n_bins, feature_set),
        fit_predict,
    )


def rate_targets(knobs: dict[str, Any]) -> dict[str, float]:
    """The data rates a run's knobs aim at: the statistical rate τ (the prior's, Theorem 4.1),
    the representation rate of its θ (τ for θ^w, 1 for θ^b, min/max of the custom share; none
    for θ^d, which keeps the data's own)."""
    tau = float(knobs["tau"])
    theta = str(knobs.get("theta", "reweighted"))
    targets = {"statistical": tau}
    if theta == "reweighted":
        targets["representation"] = tau
    elif theta == "balanced":
        targets["representation"] = 1.0
    elif theta == "custom":
        share = float(knobs.get("protected_share", 0.5))
        targets["representation"] = min(share, 1 - share) / max(share, 1 - share)
    return targets


def _short(rates: dict[str, float], targets: dict[str, float]) -> list[str]:
    """The rates (by name) below their targets by more than :data:`RATE_ALLOWANCE`."""
    return [n for n, t in targets.items() if rates[n] < t - RATE_ALLOWANCE]


def _rates(metrics: dict[str, Any]) -> dict[str, Any]:
    """A split's generated-data rates by name (None where the split lacks one)."""
    return {
        "representation": metrics.get("representation_rate"),
        "statistical": metrics.get("data_statistical_rate"),
    }


def rates_reach_targets(metrics: dict[str, float], knobs: dict[str, Any]) -> bool:
    """Whether a split's generated-data rates reach the knobs' targets (the check's rule)."""
    return not _short(_rates(metrics), rate_targets(knobs))


def data_rates(result: Any) -> Check | None:
    """Whether the generated data's representation and statistical rates reach their targets;
    far short (below :data:`FAR_SHORT` of a target), why and what to do."""
    rates = _rates(result.metrics.get("train", {}))
    if any(v is None or not math.isfinite(v) for v in rates.values()):
        return None
    targets = rate_targets(result.knobs)
    numbers = {f"{n}_rate": float(v) for n, v in rates.items()}
    numbers.update({f"{n}_target": t for n, t in targets.items()})
    numbers["allowance"] = RATE_ALLOWANCE
    achieved = ", ".join(f"{n} {v:.3f}" for n, v in rates.items())
    aims = ", ".join(f"{n} {t:.3g}" for n, t in targets.items())
    short = _short(rates, targets)
    if not short:
        return Check(
            "data_rates_vs_tau",
            "ok",
            f"The generated data reach their targets ({aims}): {achieved}.",
            numbers,
        )
    far = [n for n in short if rates[n] < FAR_SHORT * targets[n]]
    sentence = (
        f"The generated data fall short of the {' and '.join(short)} rate targets "
        f"({aims}): {achieved}."
    )
    if far:
        d = (result.artifacts.get("summary") or {}).get("d")
        many = f"{d} coordinates" if d else "many coordinates"
        sentence += (
            f" The {' and '.join(far)} rate is below {FAR_SHORT:g} of its target: matching the "
            f"marginals of {many}, many of which correlate with the protected attribute, pulls "
            "the distribution away from the fair prior. Choose a smaller domain (Domain: "
            "'paper', fewer columns or fewer bins per numeric column)."
        )
    return Check("data_rates_vs_tau", "warn", sentence, numbers)


def convergence(result: Any) -> Check | None:
    summary = result.artifacts.get("summary") or {}
    error = summary.get("max_marginal_error")
    if error is None or error <= MARGINAL_TOLERANCE:
        return None
    return Check(
        "not_converged",
        "warn",
        f"The max-entropy fit stopped with its marginals {error:.4f} away from their targets θ.",
        {"max_marginal_error": float(error)},
    )


def promise(result: Any, train: Task, test: Task, baselines: Baselines | None) -> list[Check]:
    return [c for c in (data_rates(result), convergence(result)) if c is not None]


EVIDENCE = Evidence(learner=learner, promise=promise, promise_checks=("data_rates_vs_tau",))


def fidelity_oracle(result: Any) -> bool:
    """The fidelity matrix's oracle for this method's promise: the promise measured on the run's
    numbers, reading no check's verdict (only the sampling allowance a check derived from the
    rows); see :func:`fairengine.frontier.fidelity.oracle_promise_held`."""
    return rates_reach_targets(result.metrics["test"], result.knobs)
