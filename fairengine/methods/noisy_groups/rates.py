"""0-1 rate constraints and the method's checks beyond their exact worst cases (those are defined
with the metric that reports them, :mod:`fairengine.metrics.noisy_groups`).

Constraints with slack α (one-sided, as in the paper), per group j:

* ``tpr`` (equality of opportunity): TPR_all - TPR_j - α <= 0;
* ``eo`` (equalized odds): the TPR constraints and FPR_j - FPR_all - α <= 0;
* ``dp`` (demographic parity): PPR_all - PPR_j - α <= 0.

Cells c = (ŷ, y): 0 = TN, 1 = FN, 2 = FP, 3 = TP.
"""

from __future__ import annotations

import numpy as np

from fairengine.metrics import RATE_FAMILIES, RATE_SIGN, rate_base, rate_violations
from fairengine.metrics.noisy_groups import (
    RateBases,
    constraint_list,
    overall_rates,
    weighted_rate,
)
from fairengine.metrics.noisy_groups import rate_gap as _gap
from fairengine.metrics.noisy_groups import ratio_or_zero as _ratio


def violations(y, yhat, groups, constraint: str, slack: float, n_groups: int) -> np.ndarray:
    """0-1 constraint values (positive = violated) on the given (true or noisy) group codes, in
    the order of :func:`constraint_list` (:func:`fairengine.metrics.rate_violations`).

    A group without rows of the rate's base (e.g. no positives for TPR) counts as -α.
    """
    return rate_violations(y, yhat, groups, constraint=constraint, slack=slack, n_groups=n_groups)


# ------------------------------------------------------------ paper-parity (weak) evaluators
#: Random p̃ per group of the paper code's DRO evaluation (``generate_rand_vec_l1_ball``).
PAPER_SAMPLES = 20


def sample_tv_ball(center, gamma: float, n_samples: int = PAPER_SAMPLES, random_state=0):
    """``n_samples`` random points of {p̃ in the simplex : TV(p̃, center) <= γ}, rows of an array.

    The paper code's generator: a uniformly random direction on the l1 sphere of radius 2γ
    (Dirichlet(1) magnitudes with random signs) added to the center and clipped at 0. The code
    does not renormalise; here the clipped point is renormalised and, if that left the ball,
    pulled back towards the center along the segment (the ball and the simplex are convex), so
    every sample is a feasible p̃ (``dro_eval="sampled"``).
    """
    center = np.asarray(center, dtype=float)
    rng = np.random.default_rng(random_state)
    n = len(center)
    out = np.empty((n_samples, n))
    for s in range(n_samples):
        step = rng.dirichlet(np.ones(n)) * 2.0 * gamma * rng.choice((-1.0, 1.0), size=n)
        p = np.maximum(center + step, 0.0)
        p = p / p.sum() if p.sum() > 0 else center.copy()
        tv = 0.5 * float(np.abs(p - center).sum())
        if tv > gamma:
            p = center + (max(gamma, 0.0) / tv) * (p - center)
        out[s] = p
    return out


def dro_sampled_violations(y, yhat, constraint, slack, samples) -> np.ndarray:
    """The paper code's weak DRO evaluation: per constraint (rate, j), the worst rate over the
    rows of ``samples[j]`` (the center p̂_j and random p̃ in its TV ball). A lower bound on
    :func:`dro_violations` (every sample lies in the ball)."""
    return SampledCheck(y, constraint, samples)(yhat, slack)


class SampledCheck:
    """:func:`dro_sampled_violations` on fixed rows: what does not depend on the decisions (each
    constraint's base rows and its samples' mass on them) is computed once, for the check of
    every iterate of a fit. The products keep every row, so the sums are those of the plain
    function bit for bit."""

    def __init__(self, y, constraint: str, samples) -> None:
        y = np.asarray(y, dtype=float)
        self.bases = RateBases(y, RATE_FAMILIES[constraint])
        self.parts = []
        for kind, j in constraint_list(constraint, len(samples)):
            den = samples[j] @ self.bases.base[kind]
            self.parts.append((kind, samples[j], den > 0, np.where(den > 0, den, 1.0)))

    def __call__(self, yhat, slack: float) -> np.ndarray:
        yhat = np.asarray(yhat, dtype=float)
        overall = self.bases.overall(yhat)
        out = []
        for kind, sample, live, safe in self.parts:
            num = sample @ (self.bases.base[kind] * yhat)
            rates = np.where(live, num / safe, 0.0)
            worst = float(rates.min() if RATE_SIGN[kind] > 0 else rates.max())
            out.append(_gap(kind, overall, worst, slack))
        return np.asarray(out)


def sa_table_violations(y, yhat, noisy, constraint, slack, tables, n_groups) -> np.ndarray:
    """The paper code's SA evaluation: g_j at a given assignment table w(j | c, k) (the current
    W of the algorithm, not the worst case over 𝒲(θ)). A table that lies in 𝒲(θ) gives a lower
    bound of :func:`sa_worst`; a stale W (from an earlier θ) need not lie in 𝒲(θ) and is then no
    bound at all."""
    y, yhat = np.asarray(y), np.asarray(yhat)
    cells = 2 * yhat.astype(np.int64) + y.astype(np.int64)
    noisy = np.asarray(noisy, dtype=np.int64)
    overall = overall_rates(y, yhat)
    out = []
    for c, (kind, _) in enumerate(constraint_list(constraint, n_groups)):
        w = tables[c][cells, noisy]
        rate = weighted_rate(kind, y, yhat, w)
        out.append(_gap(kind, overall, min(rate, 1.0), slack))  # the code caps the W-term at 1
    return np.asarray(out)


# ------------------------------------------------- soft assignments on a partition of the rows


def _fill(coef: np.ndarray, cap: np.ndarray, budget: float) -> np.ndarray:
    """Fractional knapsack: spend ``budget`` on the cells in increasing ``coef`` (at most
    ``cap`` each; cells with an infinite coefficient are empty and never used)."""
    take = np.zeros_like(cap)
    left = float(budget)
    for c in np.argsort(coef, kind="stable"):
        if left <= 0.0 or not np.isfinite(coef[c]):
            break
        take[c] = min(cap[c], left)
        left -= take[c]
    return take


#: Dinkelbach iterations of :func:`sa_partition_worst` per constraint (it stops earlier once the
#: rate no longer moves by 1e-12).
DINKELBACH_STEPS = 50


def sa_partition_worst(
    y,
    yhat,
    noisy,
    cells,
    constraint: str,
    slack: float,
    M,
    p_noisy,
) -> np.ndarray:
    """Worst-case constraint values over the soft assignments that see a row only through its
    noisy group and a partition cell: w(j | cell, k) in [0, 1] with
    Σ_cell w(j | cell, k)·P(cell | Ĝ = k) = P(G = j | Ĝ = k) (the paper's 𝒲(θ) with the cells
    (ŷ, y) replaced by ``cells``, integer codes per row).

    ``cells = 2·ŷ + y`` gives the exact worst case (:func:`sa_worst`); a coarser partition gives
    a subset of 𝒲(θ), hence a value between the prior assignment w(j | ·, k) = P(G = j | Ĝ = k)
    (one cell) and the exact worst case. ``cells = y`` is the label-aware check
    (:func:`sa_label_violations`).

    Each constraint's worst rate is a linear-fractional program; Dinkelbach's iteration solves
    it, every step a fractional knapsack per noisy group (fill the cells with the most adverse
    value per unit mass up to the budget P(G = j | Ĝ = k)·P(Ĝ = k)), started at the prior
    (at most :data:`DINKELBACH_STEPS` iterations). An
    assignment that gives group j no row of the rate's base (0/0) has no rate; the worst case is
    the infimum over the assignments that do.
    """
    y = np.asarray(y, dtype=float)
    yhat = np.asarray(yhat, dtype=float)
    noisy = np.asarray(noisy, dtype=np.int64)
    cells = np.asarray(cells, dtype=np.int64)
    M = np.asarray(M, dtype=float)
    m, m_hat = M.shape
    n_cells = int(cells.max()) + 1 if len(cells) else 1
    index = n_cells * noisy + cells

    def per_cell(values: np.ndarray) -> np.ndarray:
        sums = np.bincount(index, weights=values, minlength=m_hat * n_cells)
        return sums.reshape(m_hat, n_cells) / max(len(y), 1)

    q = per_cell(np.ones(len(y)))
    safe_q = np.where(q > 0, q, 1.0)
    sizes = q.sum(axis=1)
    overall = overall_rates(y, yhat)
    out = []
    for kind, j in constraint_list(constraint, m):
        base = rate_base(kind, y)
        num, den = per_cell(base * yhat) / safe_q, per_cell(base) / safe_q  # per unit mass
        budget = M[j] * np.asarray(p_noisy, dtype=float)[:m_hat]
        share = np.divide(budget, sizes, out=np.zeros(m_hat), where=sizes > 0)
        a = q * np.minimum(share, 1.0)[:, None]  # the prior assignment
        rate = _ratio(float((a * num).sum()), float((a * den).sum()))
        for _ in range(DINKELBACH_STEPS):
            coef = np.where(q > 0, RATE_SIGN[kind] * (num - rate * den), np.inf)
            a = np.vstack([_fill(coef[k], q[k], budget[k]) for k in range(m_hat)])
            mass = float((a * den).sum())
            if mass <= 0.0:  # N = D = 0 here, so N - rate·D >= 0 everywhere: rate is the infimum
                break  # over the assignments with a base (0/0 is no rate)
            new = _ratio(float((a * num).sum()), mass)
            done = abs(new - rate) <= 1e-12
            rate = new
            if done:
                break
        out.append(_gap(kind, overall, rate, slack))
    return np.asarray(out)


def sa_label_violations(y, yhat, noisy, constraint: str, slack: float, M, p_noisy) -> np.ndarray:
    """The label-aware worst case: over the assignments w(j | y, Ĝ) consistent with the noise
    model that may follow the label and the noisy group but not the classifier's decision (the
    partition (Ĝ, Y) of 𝒲(θ); the exact check's partition is (Ĝ, Y, Ŷ))."""
    y = np.asarray(y)
    return sa_partition_worst(y, yhat, noisy, y.astype(np.int64), constraint, slack, M, p_noisy)


#: z of the margin check: a one-sided 95% normal bound.
MARGIN_Z = 1.645


def weighted_rate_se(kind: str, y, yhat, weights) -> float:
    """Standard error of :func:`weighted_rate`: √(r(1 − r)/n_eff) with Kish's effective size
    n_eff = (Σ w)² / Σ w² over the rate's base rows (r clipped to [0.01, 0.99]; n_eff >= 1)."""
    y, yhat, w = (np.asarray(a, dtype=float) for a in (y, yhat, weights))
    base = np.clip(w, 0.0, None) * rate_base(kind, y)
    total = float(base.sum())
    rate = min(max(_ratio(float(base @ yhat), total), 0.01), 0.99)
    n_eff = total**2 / max(float(base @ base), 1e-300) if total > 0 else 1.0
    return float(np.sqrt(rate * (1.0 - rate) / max(n_eff, 1.0)))


def sa_margin_violations(
    y,
    yhat,
    noisy,
    constraint: str,
    slack: float,
    tables,
    M,
    p_noisy,
) -> np.ndarray:
    """The margin check of soft assignments (``robust_eval="margin"``): per constraint the larger
    of the label-aware worst case (:func:`sa_label_violations`) and the paper's check at the
    adversary's table W (:func:`sa_table_violations`) plus :data:`MARGIN_Z` standard errors of
    the W-weighted group rate (:func:`weighted_rate_se`). The label-aware value is a worst case
    computed afresh over a subset of 𝒲(θ) (between the prior assignment and the exact check); the
    W value is one point of 𝒲(θ) found by the algorithm on the same rows as the iterate, so it
    gets a one-sided 95% sampling margin against that in-sample optimism."""
    y, yhat = np.asarray(y, dtype=float), np.asarray(yhat, dtype=float)
    noisy = np.asarray(noisy, dtype=np.int64)
    M = np.asarray(M, dtype=float)
    cells = 2 * yhat.astype(np.int64) + y.astype(np.int64)
    pairs = constraint_list(constraint, M.shape[0])
    table = sa_table_violations(y, yhat, noisy, constraint, slack, tables, M.shape[0])
    label = sa_label_violations(y, yhat, noisy, constraint, slack, M, p_noisy)
    se = np.array(
        [
            weighted_rate_se(kind, y, yhat, np.asarray(tables[c])[cells, noisy])
            for c, (kind, _) in enumerate(pairs)
        ]
    )
    return np.maximum(label, table + MARGIN_Z * se)


#: ``noise_too_strong`` warns when the noise multiplies a rate's standard error by at least this.
NOISE_COST = 2.0


def corrected_violations(
    y, yhat, noisy, constraint: str, slack: float, flip, z: float = 0.0, yhat_by_group=None
) -> np.ndarray:
    """The noise-corrected constraint values of :func:`corrected_violations_se`."""
    return corrected_violations_se(y, yhat, noisy, constraint, slack, flip, z, yhat_by_group)[0]


def corrected_violations_se(
    y, yhat, noisy, constraint: str, slack: float, flip, z: float = 0.0, yhat_by_group=None
) -> tuple[np.ndarray, np.ndarray]:
    """Noise-corrected 0-1 constraint values: each true group's rate estimated from the noisy
    groups' counts through the inverse of ``flip[k, j]`` = P(Ĝ = k | G = j), plus ``z`` standard
    errors (delta method) in the adverse direction. Unbiased when the noise does not depend on
    the features and the label given the true group. ``yhat_by_group`` (shape (m, n)): each
    row's decision with its noisy-group feature set to k, for a classifier that reads the noisy
    group (each row is then rated under every noisy group it may carry; "Design notes" in
    docs/methods/noisy_groups.md). Returns the values and each constraint's standard error (0
    where not estimable)."""
    return CorrectedRates(y, noisy, constraint, flip)(yhat, slack, z, yhat_by_group)


class CorrectedRates:
    """:func:`corrected_violations_se` on fixed rows (y, Ĝ) and flip matrix: the inverse of the
    flip matrix and each constraint's estimated true-group base count are computed once, for the
    check of every iterate of a fit."""

    def __init__(self, y, noisy, constraint: str, flip) -> None:
        y = np.asarray(y, dtype=float)
        self.noisy = np.asarray(noisy, dtype=np.int64)
        self.flip = np.asarray(flip, dtype=float)
        self.m = self.flip.shape[0]
        self.inv = np.linalg.pinv(self.flip)
        self.bases = RateBases(y, RATE_FAMILIES[constraint])
        self.pairs = constraint_list(constraint, self.m)
        self.counts = {
            kind: self.inv @ np.bincount(self.noisy, weights=base, minlength=self.m)
            for kind, base in self.bases.base.items()
        }
        # each rate's base rows and their noisy groups: the other rows add exact zeros to the
        # (sequential) sums of np.bincount, so leaving them out changes no bit
        self.rows = {kind: np.flatnonzero(base) for kind, base in self.bases.base.items()}
        self.row_groups = {kind: self.noisy[rows] for kind, rows in self.rows.items()}

    def __call__(self, yhat, slack: float, z: float = 0.0, yhat_by_group=None) -> tuple:
        """(values, standard errors) of the decisions ``yhat`` (see
        :func:`corrected_violations_se`)."""
        yhat = np.asarray(yhat, dtype=float)
        overall = self.bases.overall(yhat)
        inv, m = self.inv, self.m
        out, ses = [], []
        for kind, j in self.pairs:
            rows, groups, b = self.rows[kind], self.row_groups[kind], self.counts[kind]
            member = yhat if yhat_by_group is None else self.flip[:, j] @ np.asarray(yhat_by_group)
            if b[j] <= 0.5:  # no estimable base rows: the group cannot be checked, count it as met
                out.append(-slack)
                ses.append(0.0)
                continue
            member = member[rows]
            t = inv @ np.bincount(groups, weights=member, minlength=m)
            rate = min(max(t[j] / b[j], 0.0), 1.0)
            resid = np.bincount(groups, weights=(member - rate) ** 2, minlength=m)
            se = float(np.sqrt(inv[j] ** 2 @ resid)) / b[j]
            out.append(_gap(kind, overall, rate, slack) + z * se)
            ses.append(se)
        return np.asarray(out), np.asarray(ses)


def corrected_se_bound(y, noisy, constraint: str, flip) -> tuple[np.ndarray, np.ndarray]:
    """Per constraint: the largest standard error the noise-corrected rate of
    :func:`corrected_violations` can have on these rows (every base row's decision 0.5 away
    from the rate) — how much the noisy groups say about each true group's rate, whatever the
    classifier (inf where the group's base is not estimable) — and that of a rate over the
    group's (estimated) base rows without noise, 0.5/√b_j; their ratio is what the noise costs."""
    y, noisy = np.asarray(y, dtype=float), np.asarray(noisy, dtype=np.int64)
    m = np.shape(flip)[0]
    inv = np.linalg.pinv(np.asarray(flip, dtype=float))
    out, plain = [], []
    for kind, j in constraint_list(constraint, m):
        counts = np.bincount(noisy, weights=rate_base(kind, y), minlength=m)
        b = float(inv[j] @ counts)
        out.append(0.5 * float(np.sqrt(inv[j] ** 2 @ counts)) / b if b > 0.5 else np.inf)
        plain.append(0.5 / np.sqrt(b) if b > 0.5 else np.inf)
    return np.asarray(out), np.asarray(plain)
