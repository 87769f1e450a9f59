"""The noisy-groups side of the descent–ascent game (:mod:`fairengine.solvers.descent_ascent`):
the hinge-relaxed group rates at one score vector, the hinge loss and λ's signal
(:class:`HingeGame`), and the recorder of candidate iterates with their robust checks."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from scipy.stats import rankdata

from fairengine.methods.noisy_groups.knobs import ROBUST_EVALS
from fairengine.metrics import rate_base
from fairengine.solvers.descent_ascent import CandidateRecorder, LambdaPlayer

if TYPE_CHECKING:
    from fairengine.methods.noisy_groups.estimator import RobustFairClassifier


class RelaxedRates:
    """The hinge-relaxed ψ̃ at one score vector s = X̃θ (TPR/PPR: U_all − L_j(ω);
    FPR: U_j(ω) − L_all), with everything that depends on s alone computed once: the bounds
    U = max(0, 1 + s), L = min(1, s), their derivatives (on first use) and the overall terms.
    The λ-step, the next θ-step and the DRO adversary's step all read the same instance, and each
    asks only for what it needs (values, the θ-gradient, or ∂/∂ω)."""

    def __init__(self, s: np.ndarray, bases: dict) -> None:
        self.s = s
        self.bases = bases  # kind -> (base indicator, max(#base, 1))
        self.upper, self.lower = np.maximum(0.0, 1.0 + s), np.minimum(1.0, s)
        self._derivatives = None
        self._overall: dict[str, float] = {}

    def derivatives(self) -> tuple[np.ndarray, np.ndarray]:
        if self._derivatives is None:
            s = self.s
            self._derivatives = (s > -1.0).astype(float), (s < 1.0).astype(float)
        return self._derivatives

    def _parts(self, kind: str, w: np.ndarray):
        base, n_base = self.bases[kind]
        if kind not in self._overall:
            bound = self.lower if kind == "fpr" else self.upper
            self._overall[kind] = (base @ bound) / n_base
        overall = self._overall[kind]
        wb = w * base
        den = max(wb.sum(), 1e-12)
        if kind == "fpr":
            group = (wb @ self.upper) / den
            return group - overall, group, wb, den, base, n_base
        group = (wb @ self.lower) / den
        return overall - group, group, wb, den, base, n_base

    def value(self, kind: str, w: np.ndarray) -> float:
        """ψ̃ of constraint ``kind`` with group weights ω = ``w``."""
        return self._parts(kind, w)[0]

    def grad(self, kind: str, w: np.ndarray) -> np.ndarray:
        """∇_θ ψ̃ as a row-coefficient vector (∇_θ = X̃ᵀ·coef)."""
        _, _, wb, den, base, n_base = self._parts(kind, w)
        d_upper, d_lower = self.derivatives()
        if kind == "fpr":
            return wb * d_upper / den - base * d_lower / n_base
        return base * d_upper / n_base - wb * d_lower / den

    def dw(self, kind: str, w: np.ndarray) -> np.ndarray:
        """∂ψ̃/∂ω."""
        _, group, _, den, base, _ = self._parts(kind, w)
        if kind == "fpr":
            return base * (self.upper - group) / den
        return -base * (self.lower - group) / den


def rate_bases(y: np.ndarray) -> dict:
    """Per rate kind: (its base indicator over the rows, max(#base, 1))."""
    out = {}
    for kind in ("tpr", "fpr", "ppr"):
        base = rate_base(kind, y)
        out[kind] = (base, max(base.sum(), 1.0))
    return out


class Record(CandidateRecorder):
    """The candidate iterates of a fit: each one's θ, step, 0-1 error, share predicted positive,
    relaxed constraint, adversary tables and robust checks on the fitting rows and, with
    ``held`` = (X̃_val, y_val, evaluate_val), on the held-out rows (their margin check also
    takes ``joint``, a check of both row sets together, when given)."""

    def __init__(self, steps: tuple[int, int], y: np.ndarray, evaluate, held=None, joint=None):
        super().__init__(*steps)  # (every, n_steps)
        self.y, self.evaluate, self.held, self.joint = y, evaluate, held, joint
        self.tables, self.relaxed = [], []
        self.err, self.pos, self.val_err, self.val_pos = [], [], [], []
        self.viol = {k: [] for k in ROBUST_EVALS}
        self.val_viol = {k: [] for k in ROBUST_EVALS}

    def add(self, t: int, theta: np.ndarray, state, relaxed: np.ndarray, tables) -> None:
        super().add(t, theta, state, relaxed, tables)
        s = state.s
        yhat = (s > 0.0).astype(float)
        self.err.append(float(np.mean(yhat != self.y)))
        self.pos.append(float(np.mean(yhat)))
        self.tables.append([np.array(w, copy=True) for w in tables])
        for key, v in self.evaluate(yhat, tables, theta=theta, scores=s).items():
            self.viol[key].append(v)
        self.relaxed.append(float(np.max(relaxed)) if len(relaxed) else 0.0)
        if self.held is not None:
            Xv, y_val, evaluate_val = self.held
            sv = Xv @ theta
            yv = (sv > 0.0).astype(float)
            self.val_err.append(float(np.mean(yv != y_val)))
            self.val_pos.append(float(np.mean(yv)))
            out = evaluate_val(yv, tables, theta=theta, scores=sv)
            if self.joint is not None and "margin" in out:  # on fitted + held-out rows
                both = self.joint(np.append(yhat, yv), theta, np.append(s, sv))
                out["margin"] = np.maximum(out["margin"], both)
            for key, v in out.items():
                self.val_viol[key].append(v)

    def store(self, clf: RobustFairClassifier) -> None:
        """Set ``clf``'s candidate attributes (``validation_*`` None without held-out rows)."""
        clf.candidates_ = np.vstack(self.theta)
        clf.candidate_steps_ = np.asarray(self.step)
        clf.candidate_errors_ = np.asarray(self.err)
        clf.candidate_positive_rates_ = np.asarray(self.pos)
        # 0-1 error of the better constant classifier on the fitting and the selection rows
        rows = [self.y] + ([self.held[1]] if self.held is not None else [self.y])
        clf.constant_errors_ = tuple(float(min(np.mean(r), 1 - np.mean(r))) for r in rows)
        clf.candidate_violations_by_eval_ = {k: np.vstack(v) for k, v in self.viol.items()}
        clf.candidate_relaxed_ = np.asarray(self.relaxed)
        clf.candidate_tables_ = self.tables  # soft: the adversary's W at each candidate
        held = self.held is not None
        clf.validation_errors_ = np.asarray(self.val_err) if held else None
        clf.validation_positive_rates_ = np.asarray(self.val_pos) if held else None
        clf.validation_violations_by_eval_ = (
            {k: np.vstack(v) for k, v in self.val_viol.items()} if held else None
        )


class HingeGame:
    """The hinge loss mean(max(0, 1 − σ·s)) (σ = ±1 labels) over the rows, the relaxed rates as
    the game's state, and λ's signal: the relaxed constraint values, or with ``signal_key`` the
    0-1 check ``evaluate`` computes under that key (the proxy Lagrangian)."""

    def __init__(self, y: np.ndarray, evaluate, signal_key: str | None) -> None:
        self.sigma = 2.0 * y - 1.0
        self.n = len(y)
        self.bases = rate_bases(y)
        self.evaluate, self.signal_key = evaluate, signal_key

    def state(self, scores: np.ndarray) -> RelaxedRates:
        return RelaxedRates(scores, self.bases)  # X̃θ once per iterate: shared by every player

    def loss_coef(self, state: RelaxedRates) -> np.ndarray:
        active = self.sigma * state.s < 1.0
        return -(self.sigma * active) / self.n

    def signal(self, state: RelaxedRates, values: np.ndarray, theta: np.ndarray, tables: list):
        if self.signal_key is None:
            return values
        yhat = (state.s > 0.0).astype(float)
        out = self.evaluate(yhat, tables, (self.signal_key,), theta=theta, scores=state.s)
        return out[self.signal_key]


LAMBDA_BOUND = 1.0  # R of Λ = {λ >= 0, ||λ||_1 <= R} (the code's value)
#: R when soft assignments' λ ascends on a 0-1 check (``lambda_signal``): one unit of λ on the
#: relaxed penalty is too weak to reach the 0-1 boundary (design notes in the method's docs).
SIGNAL_LAMBDA_BOUND = 5.0


def lambda_player(clf: Any, size: int, signal_key: str | None) -> LambdaPlayer:
    """λ's player: Adam for soft assignments on the relaxed constraints (``"auto"``), the
    larger radius when soft assignments' λ follows a 0-1 check."""
    soft = clf.method == "soft"
    bound = SIGNAL_LAMBDA_BOUND if signal_key and soft else LAMBDA_BOUND
    use_adam = clf.lambda_optimizer == "adam" or (
        clf.lambda_optimizer == "auto" and soft and signal_key is None
    )
    return LambdaPlayer(size, clf.lambda_learning_rate, bound, use_adam)


def select_best(objective, viol, rank_objectives: bool = False) -> int:
    """Best candidate (Cotter et al. ALT'19 heuristic, as in the paper code).

    Each constraint's violation max(0, g) is ranked across candidates (ties share the lowest
    rank, so every candidate meeting a constraint has rank 1 for it); a candidate scores its
    largest rank (and its objective's rank if ``rank_objectives``); the smallest score wins, ties
    broken by the lowest objective. With ``rank_objectives=False`` (default, the paper's rule)
    this is the lowest-objective feasible candidate whenever one exists.
    """
    objective = np.asarray(objective, dtype=float)
    viol = np.asarray(viol, dtype=float).reshape(len(objective), -1)
    score = rankdata(objective, method="min") if rank_objectives else np.zeros(len(objective))
    for column in viol.T:
        score = np.maximum(score, rankdata(np.maximum(0.0, np.round(column, 12)), method="min"))
    best = np.flatnonzero(score == score.min())
    return int(best[np.argmin(objective[best])])


def is_feasible(viol) -> np.ndarray:
    """Per candidate: every constraint value <= 0 (to 1e-12)."""
    return np.max(np.atleast_2d(viol), axis=1) <= 1e-12
