"""The α-proxy audit of Diana et al. 2022 (Definition 1) and its auditor, the CSC(H) best
response over error regions, with the helpers both proxy games share (the Section 5 tasks, the
groups to fit and their tolerances) and the proxy-quality measures.

Formulas carry the tags of ``shared/specs/004_multiaccurate_proxies.md``: [TEXT] stated in the
paper, [RECON] reconstructed by the spec, [OURS] a fairengine design choice. Notation: ``X`` (n, d)
encoded features, ``z`` (n, K) true 0/1 group memberships, ``tasks`` (n, m) 0/1 labels of m
downstream tasks, ``zhat`` (n, K) real-valued proxy.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.tree import DecisionTreeClassifier

from fairengine.methods.multiaccurate_proxy.knobs import AUDITORS
from fairengine.metrics import proxy_accuracy, proxy_auc, proxy_mse
from fairengine.solvers.least_squares import LeastSquares
from fairengine.solvers.oracles import best_intercept


def group_error_rate(weights: np.ndarray, errors: np.ndarray) -> float:
    """Claim 1 [RECON]: Pr[h ≠ y | z_k = 1] = E[z_k e] / E[z_k]; defined for real weights too.

    Examples
    --------
    >>> group_error_rate(np.array([0.9, 0.6, 0.1]), np.array([0.0, 1.0, 0.0]))
    0.375
    """
    weights = np.asarray(weights, float)
    total = weights.sum()
    return float(weights @ np.asarray(errors, float) / total) if total > 0 else float("nan")


def ratio_violation(z: np.ndarray, zhat: np.ndarray, errors: np.ndarray) -> float:
    """Definition 1 [RECON]: |γ_k(z) − γ_k(ẑ)| for one group and one error vector."""
    return abs(group_error_rate(z, errors) - group_error_rate(zhat, errors))


def as_2d(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a, float)
    return a[:, None] if a.ndim == 1 else a


class Auditor:
    """Heuristic CSC(H) best response over error regions {x : h(x) ≠ y_j} [RECON, Eq. (7)]:
    ``"linear"`` halfspaces (the Kearns et al. regression heuristic, then the exact best threshold),
    ``"tree"`` a weighted depth-``depth`` decision tree, ``"finite"`` exact brute force over the
    columns of ``candidates`` (n, |H|), for tests and small problems. The constants h ≡ 0 and
    h ≡ 1 are always candidates. A lower bound on the true maximum over H, exact for ``"finite"``;
    a stateless oracle, not an estimator: its arguments are checked at construction."""

    def __init__(
        self,
        kind: str = "linear",
        depth: int = 2,
        random_state: int = 0,
        candidates: np.ndarray | None = None,
    ) -> None:
        if kind not in (*AUDITORS, "finite"):
            raise ValueError(f"auditor must be one of {AUDITORS}; got {kind!r}")
        if kind == "finite" and candidates is None:
            raise ValueError("the 'finite' auditor needs candidates (n, |H|)")
        self.kind, self.depth, self.random_state = kind, depth, random_state
        self.candidates = candidates
        self._least_squares: LeastSquares | None = None
        self._X: np.ndarray | None = None

    def csc(
        self,
        X: np.ndarray,
        diff: np.ndarray,
        fitted: np.ndarray | None = None,
        order: np.ndarray | None = None,
    ) -> np.ndarray:
        """CSC(H) heuristic: h ∈ {0,1}^n (approximately) minimising Σ_i h_i ``diff``_i.

        ``fitted`` (the regression fit of ``diff`` on [x, 1]) may be passed in when the caller
        already has it (one matrix product for many cost vectors), and with it ``order``, the
        descending order of −``fitted`` (the linear auditor's score)."""
        n = len(diff)
        ones = np.ones(n)
        if self.kind == "finite":
            pool = np.column_stack([self.candidates, np.zeros(n), ones])
            return pool[:, int(np.argmin(diff @ pool))].astype(float)
        if self.kind == "linear":
            score = -(fitted if fitted is not None else self.fit_costs(X, diff[:, None])[:, 0])
            return (score + best_intercept(score, ones, diff, order) > 0).astype(float)
        label = (diff < 0).astype(int)
        if label.min() == label.max():
            h = label.astype(float)
        else:
            tree = DecisionTreeClassifier(max_depth=self.depth, random_state=self.random_state)
            h = tree.fit(X, label, sample_weight=np.abs(diff) * n).predict(X).astype(float)
        return min((h, np.zeros(n), ones), key=lambda c: float(c @ diff))

    def fit_costs(self, X: np.ndarray, costs: np.ndarray) -> np.ndarray:
        """Least-squares fit of each cost column on [x, 1] (the regression heuristic), its
        kernel (a slightly ridged Gram, factorised once) cached per X."""
        if self._X is not X or self._least_squares is None:
            self._X = X
            self._least_squares = LeastSquares(X, ridge=1e-8)
        return self._least_squares.fitted(costs)

    def best(self, X: np.ndarray, r: np.ndarray, tasks: np.ndarray) -> list[tuple]:
        """Per task j: (signed viol, σ, h) of the most violated error region found."""
        n = len(r)
        tasks = as_2d(tasks)
        cost = r[:, None] * (1.0 - 2.0 * tasks) / n
        base = r @ tasks / n
        fitted = self.fit_costs(X, cost) if self.kind == "linear" else None
        out = []
        for j in range(tasks.shape[1]):
            best = (0.0, 1, np.zeros(n))
            # one sort per task: the score of σ = −1 is minus that of σ = +1
            ascending = None if fitted is None else np.argsort(fitted[:, j], kind="stable")
            for sigma in (1, -1):
                diff = -sigma * cost[:, j]  # CSC cost of labelling 1 (maximise σ·viol)
                pre = None if fitted is None else -sigma * fitted[:, j]
                order = (
                    None if ascending is None else (ascending if sigma == -1 else ascending[::-1])
                )
                h = self.csc(X, diff, pre, order)
                viol = float(base[j] + h @ cost[:, j])
                if abs(viol) > abs(best[0]):
                    best = (viol, sigma, h)
            out.append(best)
        return out


def audit(
    X: np.ndarray,
    z: np.ndarray,
    zhat: np.ndarray,
    tasks: np.ndarray,
    auditor: str | Auditor = "linear",
    group_names: list[str] | None = None,
    task_names: list[str] | None = None,
) -> pd.DataFrame:
    """The α-proxy audit (Definition 1, in-sample): one row per (group, task).

    Columns: ``additive`` (max |Σ(z−ẑ)1[h≠y]|/n found), ``true_rate`` / ``proxy_rate`` (γ_k of
    that h from z and from ẑ), ``violation`` (their absolute gap, the ratio violation), and
    ``mean_gap`` (Σẑ/Σz − 1). The maximum over h is a heuristic lower bound.
    """
    z, zhat, tasks = as_2d(z), as_2d(zhat), as_2d(tasks)
    aud = auditor if isinstance(auditor, Auditor) else Auditor(auditor)
    group_names = group_names or [str(k) for k in range(z.shape[1])]
    task_names = task_names or [f"task{j}" for j in range(tasks.shape[1])]
    rows = []
    for k in range(z.shape[1]):
        found = aud.best(X, z[:, k] - zhat[:, k], tasks)
        for j, (viol, _, h) in enumerate(found):
            # check both constants too, in ratio units (the auditor maximises additive units)
            best = None
            for cand in (h, np.zeros(len(h)), np.ones(len(h))):
                err = np.abs(cand - tasks[:, j])
                t, p = group_error_rate(z[:, k], err), group_error_rate(zhat[:, k], err)
                # an empty proxy group (Σẑ_k ≤ 0) has no rate: count it as the worst gap, 1
                gap = abs(t - p) if zhat[:, k].sum() > 0 else 1.0
                if best is None or gap > best[2]:
                    best = (t, p, gap)
            total = z[:, k].sum()
            rows.append(
                {
                    "group": group_names[k],
                    "task": task_names[j],
                    "additive": abs(viol),
                    "true_rate": best[0],
                    "proxy_rate": best[1],
                    "violation": best[2],
                    "mean_gap": zhat[:, k].sum() / total - 1 if total > 0 else np.nan,
                }
            )
    return pd.DataFrame(rows)


def proxy_quality(z: np.ndarray, zhat: np.ndarray) -> dict[str, float]:
    """How well ẑ_k *predicts* z_k [OURS]: accuracy of 1[ẑ > 0.5], AUC of ẑ
    and mean squared error — the quantities a classification proxy optimises, which the paper
    argues are not what downstream fairness needs — and ``share``, the fraction with ẑ > 0.5
    (a thresholded proxy that labels almost nobody acts like the constant proxy)."""
    z, zhat = np.asarray(z, float), np.asarray(zhat, float)
    return {
        "accuracy": proxy_accuracy(z, zhat),
        "auc": proxy_auc(z, zhat),
        "mse": proxy_mse(z, zhat),
        "share": float(np.mean(zhat > 0.5)),
    }


def class_tasks(n: int) -> np.ndarray:
    """Section 5 [TEXT + RECON]: no task labels, one all-zero column f ≡ 0, whose error regions
    {h(x) = 1} make the numerator constraints plain multiaccuracy over the auditor's class (design
    notes)."""
    return np.zeros((n, 1))


def note_regions(seen: dict[bytes, np.ndarray], found: list[tuple], tasks: np.ndarray) -> None:
    """Add the error regions 1[h ≠ y_j] of an auditor's answer ``found`` (:meth:`Auditor.best`)
    to ``seen``, keyed by their bits (each distinct region once)."""
    for j, (_, _, h) in enumerate(found):
        errors = np.abs(h - tasks[:, j])
        seen.setdefault(np.packbits(errors.astype(bool)).tobytes(), errors)


def make_auditor(auditor: str | Auditor, depth: int, random_state: int) -> Auditor:
    if isinstance(auditor, Auditor):
        return auditor
    return Auditor(auditor, depth=depth, random_state=random_state)


def groups_to_fit(z: np.ndarray) -> tuple[list[int], dict[int, float]]:
    """Groups to learn and their tolerance per unit of α: ε_k = α·mean(z_k);
    a complementary pair (z_0 + z_1 ≡ 1) learns group 0 only, at the tighter tolerance."""
    means = z.mean(axis=0)
    if z.shape[1] == 2 and np.allclose(z.sum(axis=1), 1.0):
        return [0], {0: float(means.min())}
    return list(range(z.shape[1])), {k: float(means[k]) for k in range(z.shape[1])}
