"""What a ``noisy_groups`` run reports beyond its metrics: per-group rates, Theorem 1's bound,
the tuning table and the readable status lines (how the best iterate was chosen, why a classifier
is trivial)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from fairengine import metrics
from fairengine.methods.noisy_groups.noise import empirical_tv
from fairengine.methods.noisy_groups.rates import corrected_se_bound, violations
from fairengine.metrics.noisy_groups import constraint_list

if TYPE_CHECKING:
    import pandas as pd

    from fairengine.methods.noisy_groups.estimator import RobustFairClassifier


def noise_se(method: str, y, noisy, constraint: str, noise) -> dict[str, float] | None:
    """Soft assignments and DRO, on the selection rows: the largest standard error a true
    group's rate estimated from the noisy groups can have (``se``) and, for that constraint,
    the same without noise (``plain``;
    :func:`~fairengine.methods.noisy_groups.rates.corrected_se_bound`). None for the other
    approaches. Read by the ``noise_too_strong`` check."""
    if method not in ("soft", "dro") or noise is None:
        return None
    se, plain = corrected_se_bound(y, noisy, constraint, noise.flip)
    worst = int(np.argmax(se))
    return {"se": float(se[worst]), "plain": float(plain[worst])}


def group_rates(y, pred, mask) -> dict[str, float]:
    """TPR, FPR and selection rate of ``pred`` on the rows in ``mask``, through the engine's one
    rate mapping (:func:`fairengine.metrics.rate_base`); NaN where the rate's base is empty."""
    pred = np.asarray(pred, dtype=float)
    out = {}
    for kind in metrics.RATE_KINDS:
        base = mask & (metrics.rate_base(kind, y) == 1)
        out[kind] = float(pred[base].mean()) if base.any() else float("nan")
    return out


def tuning_table(res, chosen: int) -> pd.DataFrame:
    """One row per grid setting: its rates, validation error and exact worst-case violation."""
    import pandas as pd

    return pd.DataFrame(
        {
            "learning_rate": [g[0] for g in res.settings],
            "lambda_learning_rate": [g[1] for g in res.settings],
            "adversary_learning_rate": [g[2] for g in res.settings],
            "validation_error": res.val_errors,
            "validation_worst_violation": res.val_violations,
            "chosen": [i == chosen for i in range(len(res.settings))],
        }
    )


#: What a soft-assignment selection was checked against, per ``robust_eval`` (DRO: its margin
#: check is :data:`DRO_MARGIN_TEXT`).
CHECK_TEXT = {
    "margin": "the label-aware worst case and the paper's adversary W with a 95% sampling margin",
    "paper": "the paper's adversary",
    "exact": "the exact worst case",
}
DRO_MARGIN_TEXT = "the noise-corrected group rates with a one-standard-error margin"


def status_message(clf: RobustFairClassifier, robust_eval: str) -> str:
    """One readable line on how the best iterate was chosen."""
    n = len(clf.candidates_)
    check = {"naive": "the noisy-group constraints", "unconstrained": "no constraints"}.get(
        clf.method,
        DRO_MARGIN_TEXT
        if clf.method == "dro" and robust_eval == "margin"
        else CHECK_TEXT[robust_eval],
    )
    where = (
        "the held-out 25% of the training rows"
        if getattr(clf, "validation_errors_", None) is not None
        else "the training rows"
    )
    if clf.selection_status_ == "fallback":
        return (
            f"No recorded iterate (of {n}) more accurate than predicting one class met {check} "
            f"on {where}; the least-violating such one (by rank) was kept, so the constraints "
            "may not hold."
        )
    return f"Best of {n} recorded iterates, checked against {check} on {where}."


def trivial_message(method: str, pred, classes) -> str | None:
    """None unless ``pred`` gives every row the same class; then a readable reason (why the
    hinge relaxation ends there: "Design notes" in docs/methods/noisy_groups.md)."""
    pred = np.asarray(pred)
    if len(pred) == 0 or not np.all(pred == pred[0]):
        return None
    label = str(pred[0])
    if method == "unconstrained":
        return f"The selected classifier predicts {label!r} for every training row."
    return (
        f"The selected classifier predicts {label!r} for every training row (a trivial "
        "classifier). The paper's hinge-relaxed rate constraints are hardly ever below 1, so "
        "with the paper code's β (0 for soft assignments, 1 for DRO) the multipliers stay large "
        "and their penalty pulls every row of the rate's base to a positive score; when the "
        "positive class is the majority (german_credit: 70%) training ends at the all-positive "
        "classifier. Not a knob fault: the unconstrained approach shows what this data allows; "
        "on Adult the approaches learn."
    )


def empirical_tvs(groups, noisy, m: int) -> np.ndarray:
    """TV(p_j, p̂_j) between the uniform laws over true and noisy group j (same rows)."""
    return np.array([empirical_tv(groups, noisy, j) for j in range(m)])


def theorem1_table(y, pred, groups, noisy, constraint: str, slack: float, names) -> pd.DataFrame:
    """Per (rate, group): the observed true- and noisy-group violations and Theorem 1's bound.

    Theorem 1 in h-units, E_{p_j} h <= E_{p̂_j} h + TV(p_j, p̂_j), with the empirical TV between
    the uniform laws over true and noisy group j. In rate units (literal Lipschitz-1
    form): violation_j <= (b̂_j · noisy violation_j + 2·TV_j) / b_j for TPR/FPR, with b_j =
    P(Y=1 | G=j) (TPR) or P(Y=0 | G=j) (FPR), and violation_j <= noisy violation_j + TV_j for DP.
    """
    import pandas as pd

    y, pred = np.asarray(y), np.asarray(pred)
    m = len(names)
    true_v = violations(y, pred, groups, constraint, slack, m)
    noisy_v = violations(y, pred, noisy, constraint, slack, m)
    rows = []
    for c, (kind, j) in enumerate(constraint_list(constraint, m)):
        tv = empirical_tv(groups, noisy, j)
        if kind == "ppr":
            bound = noisy_v[c] + tv
        else:
            base = metrics.rate_base(kind, y)  # P(Y=1 | G=j) for TPR, P(Y=0 | G=j) for FPR
            b_true = float(np.mean(base[groups == j])) if (groups == j).any() else 0.0
            b_noisy = float(np.mean(base[noisy == j])) if (noisy == j).any() else 0.0
            bound = (b_noisy * noisy_v[c] + 2.0 * tv) / b_true if b_true > 0 else float("inf")
        rows.append(
            {
                "rate": kind,
                "group": str(names[j]),
                "true_violation": float(true_v[c]),
                "noisy_violation": float(noisy_v[c]),
                "tv": tv,
                "bound": float(bound),
            }
        )
    return pd.DataFrame(rows)
