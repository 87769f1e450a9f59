"""RobustFairClassifier: a linear classifier under rate constraints on noisy groups (seed 003).

Approaches (spec §3.0–3.4), all a projected gradient descent–ascent on the hinge Lagrangian
f̃(θ) + Σ_c λ_c ψ̃_c(θ; ω_c) with hinge-relaxed group rates weighted by ω_c:

* ``naive``: ω = 1(Ĝ = j) (problem 2);
* ``dro``: ω = p̃_c, updated by projected gradient ascent onto the TV ball ∩ simplex of radius
  γ_j around p̂_j (Algorithm 2, exact projection; γ defaults to the safe radius from auxiliary data);
* ``soft``: ω_i = w(j | ŷ_i, y_i, Ĝ_i) at the adversary's exact best response over 𝒲(θ)
  (Algorithm 4 with the closed-form greedy w-step);
* ``unconstrained``: no constraints.

Best iterate (paper's rule, train data only): among recorded iterates (θ = 0 included) the lowest
0-1 training error among those satisfying the method's 0-1 constraints on train (noisy groups for
naive, exact worst cases for DRO and soft), else the least-violating one.
"""

from __future__ import annotations

import numpy as np

from fairengine.methods.noisy_groups.noise import NoiseModel, estimate_noise
from fairengine.methods.noisy_groups.rates import (
    CONSTRAINTS,
    constraint_list,
    dro_violations,
    sa_worst,
    violations,
)
from fairengine.solvers.projections import project_simplex
from fairengine.solvers.tv_ball import project_tv_ball

METHODS = ("naive", "dro", "soft", "unconstrained")
LAMBDA_BOUND = 1.0  # R of Λ = {λ >= 0, ||λ||_1 <= R} (the code's value)


def _project_lambda(lam: np.ndarray) -> np.ndarray:
    lam = np.maximum(lam, 0.0)
    return lam if lam.sum() <= LAMBDA_BOUND else project_simplex(lam, LAMBDA_BOUND)


def select_best(objective, viol) -> int:
    """Paper's rule: lowest objective among feasible candidates, else the least max violation."""
    objective = np.asarray(objective, dtype=float)
    worst = np.max(np.atleast_2d(viol), axis=1) if len(objective) else np.array([])
    feasible = np.flatnonzero(worst <= 1e-12)
    if len(feasible):
        return int(feasible[np.argmin(objective[feasible])])
    return int(np.argmin(worst))


def _surrogate(kind: str, Xt, y, s, w):  # noqa: N803
    """Relaxed ψ̃ value, its gradient as a row-coefficient vector (∇θ = X̃ᵀ·coef) and ∂/∂ω.

    TPR/PPR: U_all - L_j(ω); FPR: U_j(ω) - L_all (spec §3.0 hinge relaxations).
    """
    upper, lower = np.maximum(0.0, 1.0 + s), np.minimum(1.0, s)
    d_upper, d_lower = (s > -1.0).astype(float), (s < 1.0).astype(float)
    base = {"tpr": y, "fpr": 1.0 - y, "ppr": np.ones_like(y)}[kind]
    n_base = max(base.sum(), 1.0)
    wb = w * base
    den = max(wb.sum(), 1e-12)
    if kind == "fpr":
        group = (wb @ upper) / den
        overall = (base @ lower) / n_base
        value = group - overall
        grad = wb * d_upper / den - base * d_lower / n_base
        dw = base * (upper - group) / den
    else:
        overall = (base @ upper) / n_base
        group = (wb @ lower) / den
        value = overall - group
        grad = base * d_upper / n_base - wb * d_lower / den
        dw = -base * (lower - group) / den
    return value, grad, dw


class RobustFairClassifier:
    """Linear classifier with group rate constraints robust to noisy group labels.

    Parameters
    ----------
    method : {"naive", "dro", "soft", "unconstrained"}
    constraint : {"tpr", "eo", "dp"}
        Equality of opportunity, equalized odds or demographic parity (one-sided, spec §2.3).
    slack : float
        α of the rate constraints.
    gamma : float or array, optional
        DRO TV radius γ_j; None = the safe radius estimated from the auxiliary sample.
    n_steps : int
        T gradient steps (full batch).
    learning_rate : float
        η_θ (Adam); η_λ = 1 and η_p̃ = ``learning_rate`` as well.
    random_state : int
        Seeds nothing random in the algorithm itself (θ starts at 0); kept for the contract.
    adversary_every : int
        DRO only: update p̃ every this many steps (1 = Algorithm 2 exactly).
    """

    def __init__(
        self,
        method: str = "naive",
        constraint: str = "tpr",
        slack: float = 0.05,
        gamma=None,
        n_steps: int = 500,
        learning_rate: float = 0.01,
        random_state: int | None = 0,
        adversary_every: int = 1,
    ) -> None:
        self.method = method
        self.constraint = constraint
        self.slack = slack
        self.gamma = gamma
        self.n_steps = n_steps
        self.learning_rate = learning_rate
        self.random_state = random_state
        self.adversary_every = adversary_every

    # ------------------------------------------------------------------ prediction
    def decision_function(self, X) -> np.ndarray:  # noqa: N803
        return np.asarray(X, dtype=float) @ self.coef_ + self.intercept_

    def predict(self, X) -> np.ndarray:  # noqa: N803
        return (self.decision_function(X) > 0.0).astype(np.int64)

    # ------------------------------------------------------------------ fitting
    def _noise_model(self, aux_true, aux_noisy, m: int) -> NoiseModel | None:
        if aux_true is None or aux_noisy is None:
            return None
        g = np.searchsorted(self.classes_, np.asarray(aux_true))
        h = np.searchsorted(self.classes_, np.asarray(aux_noisy))
        return estimate_noise(g, h, m)

    def fit(self, X, y, noisy_groups, aux_true=None, aux_noisy=None):  # noqa: N803
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}; got {self.method!r}")
        if self.constraint not in CONSTRAINTS:
            raise ValueError(f"constraint must be one of {CONSTRAINTS}; got {self.constraint!r}")
        X = np.asarray(X, dtype=float)  # noqa: N806
        y = np.asarray(y, dtype=float).ravel()
        noisy_raw = np.asarray(noisy_groups)
        labels = [noisy_raw] + [np.asarray(a) for a in (aux_true, aux_noisy) if a is not None]
        self.classes_ = np.unique(np.concatenate(labels))
        noisy = np.searchsorted(self.classes_, noisy_raw)
        m = len(self.classes_)
        n, d = X.shape
        self.noise_model_ = self._noise_model(aux_true, aux_noisy, m)
        alpha = float(self.slack)
        method = self.method
        pairs = constraint_list(self.constraint, m) if method != "unconstrained" else []
        centers = [(noisy == j) / max((noisy == j).sum(), 1) for _, j in pairs]

        if method == "dro":
            if self.gamma is None:
                if self.noise_model_ is None:
                    raise ValueError("DRO without gamma needs aux_true and aux_noisy.")
                gammas = self.noise_model_.gamma_safe
            else:
                gammas = np.broadcast_to(np.asarray(self.gamma, dtype=float), (m,)).copy()
            self.gamma_ = np.asarray(gammas, dtype=float)
        if method == "soft":
            if self.noise_model_ is None:
                raise ValueError("Soft group assignments need aux_true and aux_noisy.")
            p_noisy = np.bincount(noisy, minlength=m) / n

        def evaluate(yhat: np.ndarray):
            if method == "naive":
                return violations(y, yhat, noisy, self.constraint, alpha, m), None
            if method == "dro":
                return dro_violations(y, yhat, noisy, self.constraint, alpha, self.gamma_), None
            if method == "soft":
                return sa_worst(
                    y, yhat, noisy, self.constraint, alpha, self.noise_model_.M, p_noisy
                )
            return np.zeros(1), None

        Xt = np.hstack([X, np.ones((n, 1))])  # noqa: N806
        sigma = 2.0 * y - 1.0
        theta = np.zeros(d + 1)
        lam = np.zeros(len(pairs))
        weights = [c.copy() for c in centers]
        mom, vel = np.zeros(d + 1), np.zeros(d + 1)
        b1, b2, eps, lr = 0.9, 0.999, 1e-8, float(self.learning_rate)
        record_every = max(1, self.n_steps // 50)
        cand_theta, cand_err, cand_viol = [], [], []

        def record(theta: np.ndarray) -> None:
            yhat = (Xt @ theta > 0.0).astype(float)
            cand_theta.append(theta.copy())
            cand_err.append(float(np.mean(yhat != y)))
            cand_viol.append(evaluate(yhat)[0])

        record(theta)
        for t in range(1, self.n_steps + 1):
            s = Xt @ theta
            if method == "soft":  # w-step: exact best response over 𝒲(θ) (closed form)
                weights = evaluate((s > 0.0).astype(float))[1]
            active = sigma * s < 1.0
            coef = -(sigma * active) / n
            values, dws = np.zeros(len(pairs)), []
            for c, (kind, _) in enumerate(pairs):
                value, g, dw = _surrogate(kind, Xt, y, s, weights[c])
                values[c] = value - alpha
                coef += lam[c] * g
                dws.append(dw)
            grad = Xt.T @ coef
            mom = b1 * mom + (1 - b1) * grad
            vel = b2 * vel + (1 - b2) * grad**2
            theta = theta - lr * (mom / (1 - b1**t)) / (np.sqrt(vel / (1 - b2**t)) + eps)
            if method == "dro" and t % max(1, int(self.adversary_every)) == 0:
                for c, (_, j) in enumerate(pairs):
                    step = weights[c] + lr * lam[c] * dws[c]
                    weights[c] = project_tv_ball(step, centers[c], float(self.gamma_[j]))
            if pairs:
                s_new = Xt @ theta
                new = np.array(
                    [_surrogate(k, Xt, y, s_new, weights[c])[0] for c, (k, _) in enumerate(pairs)]
                )
                lam = _project_lambda(lam + 1.0 * (new - alpha))
            if t % record_every == 0 or t == self.n_steps:
                record(theta)

        objective = np.asarray(cand_err)
        viol = np.vstack(cand_viol)
        best = (
            int(np.argmin(objective)) if method == "unconstrained" else select_best(objective, viol)
        )
        self.candidates_ = np.vstack(cand_theta)
        self.candidate_errors_ = objective
        self.candidate_violations_ = viol
        self.best_index_ = best
        self.coef_ = cand_theta[best][:-1].copy()
        self.intercept_ = float(cand_theta[best][-1])
        self.lambda_ = lam
        self.n_groups_ = m
        return self
