"""Multiaccurate proxies (seed 004): the α-proxy audit, Algorithm 4 and the comparison proxies.

Diana, Gill, Kearns, Kenthapadi, Roth & Sharifi-Malvajerdi, "Multiaccurate Proxies for Downstream
Fairness", FAccT 2022. The seed text is truncated and its math stripped; the formulas below follow
``shared/specs/004_multiaccurate_proxies.md`` and carry its tags: [TEXT] stated in the paper,
[RECON] reconstructed by the spec, [OURS] a fairengine design choice.

Notation: ``X`` (n, d) encoded features, ``z`` (n, K) true 0/1 group memberships, ``tasks``
(n, m) 0/1 labels of m downstream tasks, ``zhat`` (n, K) real-valued proxy.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.tree import DecisionTreeClassifier

from fairengine.solvers.oracles import best_intercept

AUDITORS = ("linear", "tree")


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


def _as_2d(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a, float)
    return a[:, None] if a.ndim == 1 else a


class Auditor:
    """Heuristic CSC(H) best response over error regions {x : h(x) ≠ y_j} (spec §3.0).

    For residual r = z_k − ẑ_k the additive violation of h on task j is
    viol_j(h) = b_j + Σ_i h_i c_ij with b_j = Σ r_i y_ij / n and c_ij = r_i (1 − 2 y_ij) / n
    [RECON, Eq. (7)]. For each sign σ the auditor maximises σ·viol_j with

    * ``"linear"`` [OURS, spec §3.0(b)]: the Kearns et al. regression heuristic — a least-squares
      fit of c_j on x (pseudo-inverse cached once) — followed by the exact best threshold of the
      fitted score (:func:`~fairengine.solvers.oracles.best_intercept`), so halfspaces;
    * ``"tree"`` [OURS, spec §3.0(a)]: a weighted depth-``depth`` decision tree on the reduction
      label 1[cost < 0], weight |cost|.

    The constants h ≡ 0 and h ≡ 1 are always candidates (the best-threshold step includes them).
    The result is a lower bound on the true maximum over H (heuristic oracle).
    """

    def __init__(self, kind: str = "linear", depth: int = 2, random_state: int = 0) -> None:
        if kind not in AUDITORS:
            raise ValueError(f"auditor must be one of {AUDITORS}; got {kind!r}")
        self.kind, self.depth, self.random_state = kind, depth, random_state
        self._pinv: np.ndarray | None = None
        self._X: np.ndarray | None = None

    def _design(self, X: np.ndarray) -> np.ndarray:  # noqa: N803
        if self._X is not X:
            self._X = X
            self._pinv = np.linalg.pinv(np.column_stack([X, np.ones(len(X))]))
        return self._pinv  # type: ignore[return-value]

    def best(self, X: np.ndarray, r: np.ndarray, tasks: np.ndarray) -> list[tuple]:  # noqa: N803
        """Per task j: (signed viol, σ, h) of the most violated error region found."""
        n = len(r)
        tasks = _as_2d(tasks)
        cost = r[:, None] * (1.0 - 2.0 * tasks) / n
        base = r @ tasks / n
        ones = np.ones(n)
        out = []
        if self.kind == "linear":
            pinv = self._design(X)
            fitted = np.column_stack([X, ones]) @ (pinv @ cost)
        for j in range(tasks.shape[1]):
            best = (0.0, 1, np.zeros(n))
            for sigma in (1, -1):
                diff = -sigma * cost[:, j]  # CSC cost of labelling 1 (maximise σ·viol)
                if self.kind == "linear":
                    score = sigma * fitted[:, j]
                    h = (score + best_intercept(score, ones, diff) > 0).astype(float)
                else:
                    label = (diff < 0).astype(int)
                    if label.min() == label.max():
                        h = label.astype(float)
                    else:
                        tree = DecisionTreeClassifier(
                            max_depth=self.depth, random_state=self.random_state
                        ).fit(X, label, sample_weight=np.abs(diff) * n)
                        h = tree.predict(X).astype(float)
                    candidates = (h, np.zeros(n), ones)
                    h = min(candidates, key=lambda c: float(c @ diff))
                viol = float(base[j] + h @ cost[:, j])
                if abs(viol) > abs(best[0]):
                    best = (viol, sigma, h)
            out.append(best)
        return out


def audit(
    X: np.ndarray,  # noqa: N803
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
    z, zhat, tasks = _as_2d(z), _as_2d(zhat), _as_2d(tasks)
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


def multiaccuracy_violation(table: pd.DataFrame) -> float:
    """Max ratio violation of an :func:`audit` table (the α the proxy reached, heuristically)."""
    return float(table["violation"].max()) if len(table) else 0.0


class MultiaccurateProxy:
    """Linear multiaccurate proxy, Algorithm 4 (projected OGD vs the auditor's best response).

    Run separately for each group k [TEXT]. Learner: ẑ_k(x) = θ·[x, 1], online projected gradient
    descent on L(θ, λ) = MSE(θ) + λ·Σ_i (z_i − θ·x_i) 1[h(x_i) ≠ y_ij]/n, warm-started at OLS;
    output the average of the iterates [TEXT: "return an average over θ"]. Auditor: deterministic
    best response λ = σ·C on the most violated (h, j) [RECON]. With the spec's recommended
    changes [OURS, §3.1 REVIEW]: (1) tolerance ε_k = α·mean(z_k): λ = 0 when no violation exceeds
    ε_k; (2) the mean constraint Σẑ = Σz is enforced exactly by projecting each iterate onto
    {θ : s·θ = Σz}, s = Σ_i x_i (then θ̄ satisfies it too), after the ℓ2-ball projection
    ‖θ‖ ≤ B. Step η_t = learning_rate/√t (spec: 0.003–0.03/√t; large steps chatter).

    Parameters
    ----------
    alpha : float
        Target ratio violation α (fed in as the additive tolerance α·mean(z_k)).
    C : float
        Dual bound on the numerator multipliers (≳ the optimal dual norm).
    n_iter : int
        T, rounds of the game.
    learning_rate : float
        η_0 in η_t = η_0/√t.
    auditor : {"linear", "tree"}
    radius : float
        B, the radius of Θ.
    random_state : int

    Attributes
    ----------
    coef_ : ndarray (K, d + 1)
        θ̄_k per group (last column: intercept).
    trace_ : ndarray (K, T)
        Max additive violation found per round.
    """

    def __init__(
        self,
        alpha: float = 0.05,
        C: float = 10.0,  # noqa: N803
        n_iter: int = 200,
        learning_rate: float = 0.01,
        auditor: str = "linear",
        radius: float = 10.0,
        random_state: int = 0,
    ) -> None:
        self.alpha, self.C, self.n_iter = alpha, C, n_iter
        self.learning_rate, self.auditor, self.radius = learning_rate, auditor, radius
        self.random_state = random_state

    def fit(self, X: np.ndarray, z: np.ndarray, tasks: np.ndarray) -> MultiaccurateProxy:  # noqa: N803
        X = np.asarray(X, float)  # noqa: N806
        z, tasks = _as_2d(z), _as_2d(tasks)
        n = len(X)
        Xa = np.column_stack([X, np.ones(n)])  # noqa: N806
        s = Xa.sum(axis=0)
        aud = Auditor(self.auditor, random_state=self.random_state)
        coefs, traces = [], []
        for k in range(z.shape[1]):
            zk = z[:, k]
            target, eps = zk.sum(), self.alpha * zk.mean()

            def project(theta: np.ndarray, target: float = target) -> np.ndarray:
                norm = np.linalg.norm(theta)
                if norm > self.radius:
                    theta = theta * (self.radius / norm)
                return theta - ((s @ theta - target) / (s @ s)) * s

            theta = project(np.linalg.lstsq(Xa, zk, rcond=None)[0])
            total = np.zeros_like(theta)
            trace = []
            for t in range(1, self.n_iter + 1):
                total += theta
                g = Xa @ theta
                found = aud.best(X, zk - g, tasks)
                j = int(np.argmax([abs(v) for v, _, _ in found]))
                viol, sigma, h = found[j]
                trace.append(abs(viol))
                grad = (2.0 / n) * (Xa.T @ (g - zk))
                if abs(viol) > eps:
                    errors = np.abs(h - tasks[:, j])
                    grad -= np.sign(viol) * self.C * (Xa.T @ errors) / n
                theta = project(theta - self.learning_rate / np.sqrt(t) * grad)
            coefs.append(total / self.n_iter)
            traces.append(trace)
        self.coef_ = np.array(coefs)
        self.trace_ = np.array(traces)
        return self

    def predict_proba(self, X: np.ndarray) -> np.ndarray:  # noqa: N803
        """ẑ(x) (n, K): real-valued, may leave [0, 1] (clipping would break the guarantee)."""
        X = np.asarray(X, float)  # noqa: N806
        return np.column_stack([X, np.ones(len(X))]) @ self.coef_.T

    def audit(
        self,
        X: np.ndarray,  # noqa: N803
        z: np.ndarray,
        tasks: np.ndarray,
        **names: list[str] | None,
    ) -> pd.DataFrame:
        return audit(X, z, self.predict_proba(X), tasks, self.auditor, **names)


# ---------------------------------------------------------------- comparison proxies (spec §4)

PROXIES = ("multiaccurate", "true", "regression", "thresholded", "constant")


class BaselineProxy:
    """Comparison proxies [OURS, spec §4 (i), (iv)–(vi)].

    * ``"regression"``: logistic-regression probabilities ≈ E[z_k | x] (one model per group);
    * ``"thresholded"``: the classification proxy 1[P̂(z_k = 1 | x) > 0.5];
    * ``"constant"``: ẑ_k ≡ mean(z_k).
    (``"true"`` needs z at prediction time and is handled by the caller.)
    """

    def __init__(self, kind: str, random_state: int = 0) -> None:
        self.kind, self.random_state = kind, random_state

    def fit(self, X: np.ndarray, z: np.ndarray) -> BaselineProxy:  # noqa: N803
        z = _as_2d(z)
        self.mean_ = z.mean(axis=0)
        self.models_ = []
        if self.kind in ("regression", "thresholded"):
            for k in range(z.shape[1]):
                if z[:, k].min() == z[:, k].max():
                    self.models_.append(float(z[0, k]))
                else:
                    model = LogisticRegression(max_iter=500, C=1.0)
                    self.models_.append(model.fit(X, z[:, k].astype(int)))
        return self

    def predict_proba(self, X: np.ndarray) -> np.ndarray:  # noqa: N803
        n = len(X)
        if self.kind == "constant":
            return np.tile(self.mean_, (n, 1))
        cols = [
            np.full(n, m) if isinstance(m, float) else m.predict_proba(X)[:, 1]
            for m in self.models_
        ]
        p = np.column_stack(cols)
        return (p > 0.5).astype(float) if self.kind == "thresholded" else p
