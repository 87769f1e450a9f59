"""Noisy protected groups' metrics (Wang et al. 2020): one-sided rate-constraint violations on
the true groups, on the observed noisy groups and in the worst case over the noise model (the
TV ball's closed forms, the worst soft group assignment). Cells c = 2·ŷ + y: 0 = TN, 1 = FN,
2 = FP, 3 = TP."""

from __future__ import annotations

import numpy as np

from fairengine.metrics.core import RATE_KINDS, RATE_SIGN, rate_base

#: Rates of each one-sided constraint family of Wang et al. 2020 (F.1), in the order of
#: :func:`rate_violations`: TPR for every group, then (equalized odds) FPR for every group.
RATE_FAMILIES: dict[str, tuple[str, ...]] = {"tpr": ("tpr",), "eo": ("tpr", "fpr"), "dp": ("ppr",)}
CONSTRAINTS = tuple(RATE_FAMILIES)
TN, FN, FP, TP = 0, 1, 2, 3


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
    """Max one-sided rate-constraint violation over the groups ``groups`` (any labels): the max
    of :func:`rate_violations` (Wang et al. 2020, F.1)."""
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


# ------------------------------------------------------------ exact worst-case evaluators


def constraint_list(constraint: str, n_groups: int) -> list[tuple[str, int]]:
    """The (rate, group) pairs of a constraint family, in the order of
    :func:`fairengine.metrics.rate_violations`."""
    if constraint not in CONSTRAINTS:
        raise ValueError(f"constraint must be one of {CONSTRAINTS}; got {constraint!r}")
    return [(rate, j) for rate in RATE_FAMILIES[constraint] for j in range(n_groups)]


def ratio_or_zero(num: float, den: float) -> float:
    """num / den, 0 when den <= 0 (0/0 := 0)."""
    return num / den if den > 0 else 0.0


class RateBases:
    """The base rows of ``kinds`` (positives for TPR, negatives for FPR, all rows for PPR) over
    labels ``y``, with their counts: what every rate of these rows needs before a decision."""

    def __init__(self, y, kinds: tuple[str, ...] = RATE_KINDS) -> None:
        y = np.asarray(y, dtype=float)
        self.base = {kind: rate_base(kind, y) for kind in kinds}
        self.count = {kind: float(b.sum()) for kind, b in self.base.items()}

    def overall(self, yhat: np.ndarray) -> dict[str, float]:
        """Each kind's rate of the decisions ``yhat`` (floats) over all rows (0/0 := 0)."""
        return {
            kind: ratio_or_zero(float((b * yhat).sum()), self.count[kind])
            for kind, b in self.base.items()
        }


def overall_rates(y, yhat, kinds: tuple[str, ...] = RATE_KINDS) -> dict[str, float]:
    """TPR, FPR and PPR (or only ``kinds``) of all rows."""
    return RateBases(y, kinds).overall(np.asarray(yhat, dtype=float))


def rate_gap(kind: str, overall: dict[str, float], rate: float, slack: float) -> float:
    """The one-sided constraint value: RATE_SIGN · (overall − group rate) − α (exact in IEEE:
    −(a − b) is b − a)."""
    return RATE_SIGN[kind] * (overall[kind] - rate) - slack


def weighted_rate(kind: str, y, yhat, weights) -> float:
    """TPR, FPR or PPR of the rows weighted by ``weights`` (0/0 := 0)."""
    y, yhat, w = (np.asarray(a, dtype=float) for a in (y, yhat, weights))
    base = w * rate_base(kind, y)
    return ratio_or_zero(float((base * yhat).sum()), float(base.sum()))


def cell_masses(y, yhat, groups, n_groups: int) -> np.ndarray:
    """q[c, k] = (1/n)·#{i : Ĝ_i = k, cell_i = c} (c = 2ŷ + y)."""
    cells = 2 * np.asarray(yhat, dtype=np.int64) + np.asarray(y, dtype=np.int64)
    index = n_groups * cells + np.asarray(groups, dtype=np.int64)
    q = np.bincount(index, minlength=4 * n_groups).reshape(4, n_groups).astype(float)
    return q / max(len(cells), 1)


# ------------------------------------------------------------------------------------- DRO


def dro_worst_rate(kind: str, y, yhat, noisy, j: int, gamma: float) -> float:
    """Exact worst rate over the TV ball {p̃ : TV(p̃, p̂_j) <= γ} (closed forms).

    p̂_j is uniform over noisy group j; p̃ may put mass on any row. Worst means smallest TPR or
    PPR, largest FPR.
    """
    y, yhat, mask = np.asarray(y), np.asarray(yhat), np.asarray(noisy) == j
    n_j = max(int(mask.sum()), 1)
    pos, neg = y == 1, y == 0
    tp = float((mask & pos & (yhat == 1)).sum()) / n_j
    fn = float((mask & pos & (yhat == 0)).sum()) / n_j
    fp = float((mask & neg & (yhat == 1)).sum()) / n_j
    tn = float((mask & neg & (yhat == 0)).sum()) / n_j
    if kind == "tpr":
        if (pos & (yhat == 0)).any():
            return ratio_or_zero(max(0.0, tp - gamma), tp + fn)
        return 1.0 if tp > gamma else 0.0
    if kind == "fpr":
        if (neg & (yhat == 1)).any():
            return min(1.0, ratio_or_zero(fp + gamma, fp + tn)) if fp + tn > 0 else 1.0
        return 0.0
    if (yhat == 0).any():
        return max(0.0, tp + fp - gamma)
    return 1.0


def dro_violations(y, yhat, noisy, constraint, slack, gammas) -> np.ndarray:
    """Exact worst-case (robust) 0-1 constraint values of the DRO problem (3)."""
    overall = overall_rates(y, yhat)
    gammas = np.asarray(gammas, dtype=float)
    return np.asarray(
        [
            rate_gap(kind, overall, dro_worst_rate(kind, y, yhat, noisy, j, gammas[j]), slack)
            for kind, j in constraint_list(constraint, len(gammas))
        ]
    )


# ---------------------------------------------------------------------- soft assignments

#: Order in which the adversary fills cells for its worst case.
_ORDER = {"tpr": (FN, FP, TN, TP), "fpr": (FP, TP, FN, TN), "ppr": (TN, FN, FP, TP)}


def sa_worst_assignment(kind: str, q: np.ndarray, budget: np.ndarray) -> np.ndarray:
    """Worst column j of w as cell masses a[c, k] <= q[c, k], sum_c a[c, k] = budget[k].

    ``budget[k]`` = P(G=j | Ĝ=k)·P(Ĝ=k): the adversary decides which share of each cell of noisy
    group k belongs to true group j; filling cells greedily in the order FN → negatives → TP
    minimises TPR_j (FP → positives → TN maximises FPR_j; ŷ=0 first minimises PPR_j).
    """
    a = np.zeros_like(q)
    for k in range(q.shape[1]):
        left = float(budget[k])
        for c in _ORDER[kind]:
            take = min(q[c, k], max(left, 0.0))
            a[c, k] = take
            left -= take
    return a


def assignment_rate(kind: str, a: np.ndarray) -> float:
    s = a.sum(axis=1)
    if kind == "tpr":
        return ratio_or_zero(s[TP], s[TP] + s[FN])
    if kind == "fpr":
        return ratio_or_zero(s[FP], s[FP] + s[TN])
    return ratio_or_zero(s[FP] + s[TP], s.sum())


def sa_worst(y, yhat, noisy, constraint, slack, M, p_noisy, *, return_tables=False):
    """Exact robust constraint values max_{w ∈ 𝒲(θ)} g_j(θ, w) and the per-row weights
    w(j | ŷ_i, y_i, Ĝ_i) of each constraint's worst case (Algorithm 4's w-step, closed form).

    With ``return_tables`` a third item holds each constraint's table w(j | c, k), shape (4, m̂).
    """
    m = M.shape[0]
    q = cell_masses(y, yhat, noisy, M.shape[1])
    overall = overall_rates(y, yhat)
    cells = 2 * np.asarray(yhat, dtype=np.int64) + np.asarray(y, dtype=np.int64)
    noisy = np.asarray(noisy, dtype=np.int64)
    values, weights, tables = [], [], []
    for kind, j in constraint_list(constraint, m):
        a = sa_worst_assignment(kind, q, M[j] * p_noisy)
        with np.errstate(invalid="ignore", divide="ignore"):
            w = np.where(q > 0, a / q, 0.0)
        values.append(rate_gap(kind, overall, assignment_rate(kind, a), slack))
        weights.append(w[cells, noisy])
        tables.append(w)
    if return_tables:
        return np.asarray(values), weights, tables
    return np.asarray(values), weights


def robust_violation(method: str, y, pred, noisy, constraint: str, slack: float, noise) -> float:
    """Exact worst-case violation of ``pred`` over the noise model (Wang et al. 2020).

    ``method`` "soft": over 𝒲(θ), every soft assignment of true groups consistent with the noise
    model ``noise`` (its matrix ``M``); otherwise over the TV balls of radius ``noise.gamma_safe``
    around each noisy group. ``noisy`` are the observed group codes; ≤ 0 certifies the one-sided
    constraints of :func:`true_violation` for the true groups.
    """
    y, pred = np.asarray(y, dtype=float), np.asarray(pred, dtype=float)
    if method == "soft":
        p_noisy = np.bincount(noisy, minlength=noise.M.shape[1]) / max(len(noisy), 1)
        return float(np.max(sa_worst(y, pred, noisy, constraint, slack, noise.M, p_noisy)[0]))
    return float(np.max(dro_violations(y, pred, noisy, constraint, slack, noise.gamma_safe)))
