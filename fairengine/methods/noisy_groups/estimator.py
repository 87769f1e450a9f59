"""RobustFairClassifier: a linear classifier under rate constraints on noisy groups (seed 003).

Approaches (spec §3.0–3.4), all a projected gradient descent–ascent on the hinge Lagrangian
f̃(θ) + Σ_c λ_c ψ̃_c(θ; ω_c) with hinge-relaxed group rates weighted by ω_c:

* ``naive``: ω = 1(Ĝ = j) (problem 2);
* ``dro``: ω = p̃_c, updated by projected gradient ascent onto the TV ball ∩ simplex of radius
  γ_j around p̂_j (Algorithm 2, exact projection; γ defaults to the safe radius from auxiliary data);
* ``soft``: ω_i = w(j | ŷ_i, y_i, Ĝ_i) at the adversary's exact best response over 𝒲(θ)
  (Algorithm 4 with the closed-form greedy w-step);
* ``unconstrained``: no constraints.

Best iterate (paper's rule): among recorded iterates (θ = 0 included) the lowest 0-1 error among
those satisfying the method's 0-1 constraints, else the least-violating one, on the training data
or on a validation set of (X, y, Ĝ) passed as ``eval_set`` (true groups are never used). The
constraints checked are the noisy-group ones for naive and the robust ones for DRO and soft, by
``robust_eval``:

* ``"exact"`` (default, safe): the exact worst case over the TV ball / over 𝒲(θ) (closed forms);
* ``"paper"`` (paper-code parity, optimistic): DRO takes the worst of p̂_j and 20 random p̃ in the
  TV ball; soft assignments evaluate g_j at the algorithm's current assignment W only. Both are
  lower bounds of the exact worst case; only with them are the paper's non-trivial DRO results
  reachable (spec §3.3, "Consequence"; pitfall 4).

Both evaluations are recorded for every candidate, so :meth:`RobustFairClassifier.select` can
switch between them without refitting.
"""

from __future__ import annotations

import numpy as np

from fairengine.methods.noisy_groups.noise import NoiseModel, estimate_noise
from fairengine.methods.noisy_groups.rates import (
    CONSTRAINTS,
    constraint_list,
    dro_sampled_violations,
    dro_violations,
    sa_table_violations,
    sa_worst,
    sample_tv_ball,
    violations,
)
from fairengine.solvers.projections import project_simplex
from fairengine.solvers.tv_ball import project_tv_ball

METHODS = ("naive", "dro", "soft", "unconstrained")
ROBUST_EVALS = ("exact", "paper")
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
        η_θ (Adam) and η_p̃.
    random_state : int
        Seeds the paper-parity DRO evaluation's random p̃ (θ starts at 0).
    adversary_every : int
        DRO only: update p̃ every this many steps (1 = Algorithm 2 exactly).
    robust_eval : {"exact", "paper"}
        Robust 0-1 evaluation used for best-iterate selection (see the module docstring).
    beta : float
        Extra slack β of the hinge-relaxed constraints during training (α + β; the 0-1
        constraints of the selection keep α). The paper code uses 1.0 (naive, DRO) and 0 (soft).
    lambda_learning_rate : float
        η_λ (projected gradient ascent on λ, ||λ||₁ <= 1).
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
        robust_eval: str = "exact",
        beta: float = 0.0,
        lambda_learning_rate: float = 1.0,
    ) -> None:
        self.method = method
        self.constraint = constraint
        self.slack = slack
        self.gamma = gamma
        self.n_steps = n_steps
        self.learning_rate = learning_rate
        self.random_state = random_state
        self.adversary_every = adversary_every
        self.robust_eval = robust_eval
        self.beta = beta
        self.lambda_learning_rate = lambda_learning_rate

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

    def _evaluator(self, y: np.ndarray, noisy: np.ndarray):
        """evaluate(yhat, tables) -> {"exact": viol, "paper": viol} on data (y, Ĝ codes)."""
        method, constraint, m = self.method, self.constraint, self.n_groups_
        alpha = float(self.slack)
        if method == "unconstrained":
            return lambda yhat, tables: {"exact": np.zeros(1), "paper": np.zeros(1)}
        if method == "naive":

            def naive(yhat, tables):
                v = violations(y, yhat, noisy, constraint, alpha, m)
                return {"exact": v, "paper": v}

            return naive
        if method == "dro":
            seed = 0 if self.random_state is None else int(self.random_state)
            samples = []
            for j in range(m):
                center = (noisy == j) / max((noisy == j).sum(), 1)
                draws = sample_tv_ball(center, float(self.gamma_[j]), random_state=seed + 7919 * j)
                samples.append(np.vstack([center, draws]))

            def dro(yhat, tables):
                return {
                    "exact": dro_violations(y, yhat, noisy, constraint, alpha, self.gamma_),
                    "paper": dro_sampled_violations(y, yhat, constraint, alpha, samples),
                }

            return dro
        p_noisy = np.bincount(noisy, minlength=m) / max(len(noisy), 1)
        M = self.noise_model_.M  # noqa: N806

        def soft(yhat, tables):
            return {
                "exact": sa_worst(y, yhat, noisy, constraint, alpha, M, p_noisy)[0],
                "paper": sa_table_violations(y, yhat, noisy, constraint, alpha, tables, m),
            }

        return soft

    def fit(self, X, y, noisy_groups, aux_true=None, aux_noisy=None, *, eval_set=None):  # noqa: N803
        """Fit on (X, y, Ĝ); ``aux_true``/``aux_noisy``: an auxiliary sample of true and noisy
        groups (noise model and safe γ). ``eval_set=(X_val, y_val, Ĝ_val)``: select the best
        iterate on this validation data instead of the training data (no true groups needed)."""
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}; got {self.method!r}")
        if self.constraint not in CONSTRAINTS:
            raise ValueError(f"constraint must be one of {CONSTRAINTS}; got {self.constraint!r}")
        if self.robust_eval not in ROBUST_EVALS:
            raise ValueError(f"robust_eval must be one of {ROBUST_EVALS}; got {self.robust_eval!r}")
        X = np.asarray(X, dtype=float)  # noqa: N806
        y = np.asarray(y, dtype=float).ravel()
        noisy_raw = np.asarray(noisy_groups)
        labels = [noisy_raw] + [np.asarray(a) for a in (aux_true, aux_noisy) if a is not None]
        if eval_set is not None:
            labels.append(np.asarray(eval_set[2]))
        self.classes_ = np.unique(np.concatenate(labels))
        noisy = np.searchsorted(self.classes_, noisy_raw)
        m = len(self.classes_)
        self.n_groups_ = m
        n, d = X.shape
        self.noise_model_ = self._noise_model(aux_true, aux_noisy, m)
        alpha, beta = float(self.slack), float(self.beta)
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
            M = self.noise_model_.M  # noqa: N806
        evaluate = self._evaluator(y, noisy)
        if eval_set is not None:
            X_val = np.asarray(eval_set[0], dtype=float)  # noqa: N806
            y_val = np.asarray(eval_set[1], dtype=float).ravel()
            noisy_val = np.searchsorted(self.classes_, np.asarray(eval_set[2]))
            evaluate_val = self._evaluator(y_val, noisy_val)
            Xv = np.hstack([X_val, np.ones((len(y_val), 1))])  # noqa: N806

        Xt = np.hstack([X, np.ones((n, 1))])  # noqa: N806
        sigma = 2.0 * y - 1.0
        theta = np.zeros(d + 1)
        lam = np.zeros(len(pairs))
        weights = [c.copy() for c in centers]
        # the soft adversary's current table w(j | c, k) (starts at w0 = P(G=j | Ĝ=k))
        tables = [np.tile(M[j], (4, 1)) for _, j in pairs] if method == "soft" else []
        mom, vel = np.zeros(d + 1), np.zeros(d + 1)
        b1, b2, eps, lr = 0.9, 0.999, 1e-8, float(self.learning_rate)
        eta_lam = float(self.lambda_learning_rate)
        record_every = max(1, self.n_steps // 50)
        cand_theta, cand_err, cand_viol = [], [], {"exact": [], "paper": []}
        cand_relaxed = []
        val_err, val_viol = [], {"exact": [], "paper": []}

        def record(theta: np.ndarray, relaxed: np.ndarray) -> None:
            yhat = (Xt @ theta > 0.0).astype(float)
            cand_theta.append(theta.copy())
            cand_err.append(float(np.mean(yhat != y)))
            for key, v in evaluate(yhat, tables).items():
                cand_viol[key].append(v)
            cand_relaxed.append(float(np.max(relaxed)) if len(relaxed) else 0.0)
            if eval_set is not None:
                yv = (Xv @ theta > 0.0).astype(float)
                val_err.append(float(np.mean(yv != y_val)))
                for key, v in evaluate_val(yv, tables).items():
                    val_viol[key].append(v)

        def relaxed_values(s: np.ndarray) -> np.ndarray:
            return np.array(
                [_surrogate(k, Xt, y, s, weights[c])[0] for c, (k, _) in enumerate(pairs)]
            ) - (alpha + beta)

        record(theta, relaxed_values(Xt @ theta) if pairs else np.zeros(0))
        for t in range(1, self.n_steps + 1):
            s = Xt @ theta
            if method == "soft":  # w-step: exact best response over 𝒲(θ) (closed form)
                _, weights, tables = sa_worst(
                    y, (s > 0.0).astype(float), noisy, self.constraint, alpha, M, p_noisy,
                    return_tables=True,
                )  # fmt: skip
            active = sigma * s < 1.0
            coef = -(sigma * active) / n
            dws = []
            for c, (kind, _) in enumerate(pairs):
                _, g, dw = _surrogate(kind, Xt, y, s, weights[c])
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
            relaxed = np.zeros(0)
            if pairs:
                relaxed = relaxed_values(Xt @ theta)
                lam = _project_lambda(lam + eta_lam * relaxed)
            if t % record_every == 0 or t == self.n_steps:
                record(theta, relaxed)

        self.candidates_ = np.vstack(cand_theta)
        self.candidate_errors_ = np.asarray(cand_err)
        self.candidate_violations_by_eval_ = {k: np.vstack(v) for k, v in cand_viol.items()}
        self.candidate_relaxed_ = np.asarray(cand_relaxed)
        if eval_set is not None:
            self.validation_errors_ = np.asarray(val_err)
            self.validation_violations_by_eval_ = {k: np.vstack(v) for k, v in val_viol.items()}
        else:
            self.validation_errors_ = None
            self.validation_violations_by_eval_ = None
        self.lambda_ = lam
        self.select(self.robust_eval)
        return self

    def select(self, robust_eval: str | None = None) -> RobustFairClassifier:
        """(Re)choose the best iterate under ``robust_eval`` without refitting (sets ``coef_``,
        ``intercept_``, ``best_index_``, ``robust_eval``)."""
        robust_eval = self.robust_eval if robust_eval is None else robust_eval
        if robust_eval not in ROBUST_EVALS:
            raise ValueError(f"robust_eval must be one of {ROBUST_EVALS}; got {robust_eval!r}")
        self.robust_eval = robust_eval
        on_validation = self.validation_errors_ is not None
        objective = self.validation_errors_ if on_validation else self.candidate_errors_
        viol = (
            self.validation_violations_by_eval_ if on_validation
            else self.candidate_violations_by_eval_
        )[robust_eval]  # fmt: skip
        best = (
            int(np.argmin(objective)) if self.method == "unconstrained"
            else select_best(objective, viol)
        )  # fmt: skip
        self.candidate_violations_ = viol
        self.best_index_ = best
        self.coef_ = self.candidates_[best][:-1].copy()
        self.intercept_ = float(self.candidates_[best][-1])
        return self
