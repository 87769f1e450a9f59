"""Noisy protected groups' metrics (Wang et al. 2020): one-sided rate-constraint violations on
the true groups, on the observed noisy groups and in the worst case over the noise model."""

from __future__ import annotations

import numpy as np

from fairengine.metrics.core import RATE_SIGN, rate_base

#: Rates of each one-sided constraint family of Wang et al. 2020 (F.1), in the order of
#: :func:`rate_violations`: TPR for every group, then (equalized odds) FPR for every group.
RATE_FAMILIES: dict[str, tuple[str, ...]] = {"tpr": ("tpr",), "eo": ("tpr", "fpr"), "dp": ("ppr",)}


def rate_violations(
    y_true, y_pred, groups, *, constraint: str = "tpr", slack: float = 0.0, n_groups: int
) -> np.ndarray:
    """One-sided rate-constraint values per (rate, group), positive = violated (Wang et al. 2020,
    F.1).

    ``groups`` are codes 0..n_groups-1; values are ordered rate by rate (see
    :data:`RATE_FAMILIES`), group by group: TPR_all - TPR_j - slack, FPR_j - FPR_all - slack,
    PPR_all - PPR_j - slack. A group lacking the rate's base rows (e.g. no positives for TPR)
    counts as -slack.
    """
    if constraint not in RATE_FAMILIES:
        raise ValueError(f"constraint must be tpr, eo or dp; got {constraint!r}")
    y, p = (np.asarray(a, dtype=float).ravel() for a in (y_true, y_pred))
    g = np.asarray(groups).ravel()
    out = []
    for rate in RATE_FAMILIES[constraint]:
        base, sign = rate_base(rate, y), RATE_SIGN[rate]
        overall = float(base @ p / base.sum()) if base.sum() > 0 else 0.0
        for j in range(n_groups):
            b = base * (g == j)
            has_rows = b.sum() > 0
            out.append(sign * (overall - float(b @ p / b.sum())) - slack if has_rows else -slack)
    return np.asarray(out, dtype=float)


def true_violation(y_true, y_pred, groups, *, constraint: str = "tpr", slack: float = 0.0) -> float:
    """Max one-sided rate-constraint violation over groups (Wang et al. 2020, F.1): ``tpr``:
    max_j TPR_all - TPR_j - slack; ``eo``: also FPR_j - FPR_all - slack; ``dp``: PPR_all - PPR_j
    - slack. Pass the true groups (any labels); a group lacking the rate's base rows counts as
    -slack. The max of :func:`rate_violations`."""
    _, codes = np.unique(np.asarray(groups).ravel(), return_inverse=True)
    values = rate_violations(
        y_true, y_pred, codes, constraint=constraint, slack=slack, n_groups=int(codes.max()) + 1
    )
    return float(max(values.max(), -float(slack)))


def noisy_violation(
    y_true, y_pred, groups, *, constraint: str = "tpr", slack: float = 0.0
) -> float:
    """:func:`true_violation` computed on the observed noisy groups Ĝ (pass them as ``groups``)."""
    return true_violation(y_true, y_pred, groups, constraint=constraint, slack=slack)


def robust_violation(method: str, y, pred, noisy, constraint: str, slack: float, noise) -> float:
    """Exact worst-case violation of ``pred`` over the noise model (Wang et al. 2020).

    ``method`` "soft": over 𝒲(θ), every soft assignment of true groups consistent with the noise
    model ``noise`` (its matrix ``M``); otherwise over the TV balls of radius ``noise.gamma_safe``
    around each noisy group. ``noisy`` are the observed group codes; ≤ 0 certifies the one-sided
    constraints of :func:`true_violation` for the true groups.
    """
    from fairengine.methods.noisy_groups.rates import dro_violations, sa_worst  # the evaluators

    y, pred = np.asarray(y, dtype=float), np.asarray(pred, dtype=float)
    if method == "soft":
        p_noisy = np.bincount(noisy, minlength=noise.M.shape[1]) / max(len(noisy), 1)
        return float(np.max(sa_worst(y, pred, noisy, constraint, slack, noise.M, p_noisy)[0]))
    return float(np.max(dro_violations(y, pred, noisy, constraint, slack, noise.gamma_safe)))
