"""The noisy-groups side of the descent–ascent game (:mod:`fairengine.solvers.descent_ascent`):
the hinge-relaxed group rates at one score vector, the hinge loss and λ's signal
(:class:`HingeGame`), the recorder of candidate iterates, and their robust 0-1 checks on one data
set (y, noisy-group codes): what the multipliers may ascend on and what the best iterate is
selected by.

``make_evaluator(clf, y, noisy)`` returns ``evaluate(yhat, tables, keys, theta=, scores=)`` ->
``{"exact": viol, "paper": viol, "margin": viol}`` (per constraint, α included, > 0 = violated).
``theta`` and ``scores`` (the iterate and its scores on these rows) let the noise-corrected
checks rate each row under every noisy group it may carry when the classifier reads the noisy
group as a feature (``group_columns``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from scipy.stats import rankdata

from fairengine.methods.noisy_groups.knobs import ROBUST_EVALS
from fairengine.methods.noisy_groups.rates import (
    NOISE_COST,
    CorrectedRates,
    SampledCheck,
    corrected_se_bound,
    sa_margin_violations,
    sa_table_violations,
    sample_tv_ball,
    violations,
)
from fairengine.metrics import rate_base
from fairengine.metrics.noisy_groups import dro_violations, sa_worst
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


# ------------------------------------------------------------------ the robust 0-1 checks
#: DRO's margin check: standard errors added to the noise-corrected true-group violations
#: (:func:`~fairengine.methods.noisy_groups.rates.corrected_violations`). One standard error: on
#: Adult it kept the true-group constraints on the test rows at a lower error than 1.645 (the
#: soft check's one-sided 95%), and no margin broke them.
DRO_MARGIN_Z = 1.0


def group_block(X: np.ndarray, noisy: np.ndarray, m: int, group_columns: Any):
    """(columns, values): ``group_columns`` and, per noisy group k, those columns' value on its
    rows (zeros for a group absent from X); None when the noisy group is no feature."""
    if group_columns is None:
        return None
    cols = np.asarray(group_columns, dtype=np.int64).ravel()
    values = np.zeros((m, len(cols)))
    for k in range(m):
        rows = np.flatnonzero(noisy == k)
        if len(rows):
            values[k] = X[rows[0], cols]
    return cols, values


def corrected_check(clf: Any, y: np.ndarray, noisy: np.ndarray, margin_rows=None):
    """DRO's margin check beside the paper's random p̃: (yhat, θ, scores) -> the noise-corrected
    true-group violations (through the auxiliary sample's P(Ĝ | G);
    :func:`~fairengine.methods.noisy_groups.rates.corrected_violations`, each row rated under
    every noisy group when the classifier reads it, ``clf.group_block_``) plus
    :data:`DRO_MARGIN_Z` standard errors of ``margin_rows`` rows (None: of these rows; the fit
    passes the held-out rows' count, so the iterates follow the boundary the selection applies).
    None without an auxiliary sample (the margin check is then the paper's)."""
    if clf.noise_model_ is None:
        return None
    alpha = float(clf.slack)
    z = DRO_MARGIN_Z * np.sqrt(len(y) / margin_rows if margin_rows else 1.0)
    block = clf.group_block_
    corrected = CorrectedRates(y, noisy, clf.constraint, clf.noise_model_.flip)

    def check(yhat: np.ndarray, theta=None, scores=None) -> np.ndarray:
        by_group = None
        if block is not None and theta is not None and scores is not None:
            cols, values = block
            shift = values @ theta[cols]  # each noisy group's part of the score
            by_group = (scores + shift[:, None] - shift[noisy] > 0.0).astype(float)
        return corrected(yhat, alpha, z, by_group)[0]

    return check


def soft_joint_check(clf: Any, y: np.ndarray, noisy: np.ndarray):
    """Soft assignments' held-out margin check also takes DRO's noise-corrected violations
    (:func:`corrected_check`, one standard error) on all their training rows — the fitted and the
    held-out ones, so the standard error is half that of the held-out rows alone — for the
    constraints whose rate the noisy groups determine: where the noise costs less than
    :data:`~fairengine.methods.noisy_groups.rates.NOISE_COST` times a rate's standard error
    (elsewhere -inf, left to the worst-case checks). It catches iterates that break a small
    group on new rows which the label-aware and W checks pass (seen on Adult, 3 races, noise
    0.1). None without a noise model."""
    label = corrected_check(clf, y, noisy)
    if label is None:
        return None
    se, plain = corrected_se_bound(y, noisy, clf.constraint, clf.noise_model_.flip)
    live = se < NOISE_COST * plain

    def check(yhat: np.ndarray, theta=None, scores=None) -> np.ndarray:
        return np.where(live, label(yhat, theta, scores), -np.inf)

    return check


def _dro_evaluator(clf: Any, y: np.ndarray, noisy: np.ndarray, margin_rows=None):
    constraint, alpha = clf.constraint, float(clf.slack)
    samples = []
    for j in range(clf.n_groups_):
        center = (noisy == j) / max((noisy == j).sum(), 1)
        draws = sample_tv_ball(center, float(clf.gamma_[j]), random_state=clf._seed + 7919 * j)
        samples.append(np.vstack([center, draws]))
    label = corrected_check(clf, y, noisy, margin_rows)
    sampled = SampledCheck(y, constraint, samples)

    def dro(yhat, tables, keys=ROBUST_EVALS, theta=None, scores=None):
        out = {}
        if "paper" in keys or "margin" in keys:
            paper = sampled(yhat, alpha)
            out["paper"] = out["margin"] = paper
            if "margin" in keys and label is not None:
                out["margin"] = np.maximum(paper, label(yhat, theta, scores))
        if "exact" in keys:
            out["exact"] = dro_violations(y, yhat, noisy, constraint, alpha, clf.gamma_)
        return {k: out[k] for k in keys}

    return dro


def _soft_evaluator(clf: Any, y: np.ndarray, noisy: np.ndarray):
    constraint, alpha, m = clf.constraint, float(clf.slack), clf.n_groups_
    p_noisy = np.bincount(noisy, minlength=m) / max(len(noisy), 1)
    M = clf.noise_model_.M
    checks = {
        "exact": lambda yhat, tables: sa_worst(y, yhat, noisy, constraint, alpha, M, p_noisy)[0],
        "paper": lambda yhat, tables: sa_table_violations(
            y, yhat, noisy, constraint, alpha, tables, m
        ),
        "margin": lambda yhat, tables: sa_margin_violations(
            y, yhat, noisy, constraint, alpha, tables, M, p_noisy
        ),
    }

    def soft(yhat, tables, keys=ROBUST_EVALS, theta=None, scores=None):
        return {k: checks[k](yhat, tables) for k in keys}

    return soft


def make_evaluator(clf: Any, y: np.ndarray, noisy: np.ndarray, margin_rows: int | None = None):
    """evaluate(yhat, tables, keys, theta=, scores=) -> {"exact": viol, "paper": viol,
    "margin": viol} of ``clf``'s approach on data (y, Ĝ codes); ``margin_rows``: DRO's corrected
    check's margin in standard errors of that many rows (None: of these rows)."""
    if clf.method == "unconstrained":
        return lambda yhat, tables, keys=ROBUST_EVALS, theta=None, scores=None: {
            k: np.zeros(1) for k in keys
        }
    if clf.method == "naive":
        constraint, alpha, m = clf.constraint, float(clf.slack), clf.n_groups_

        def naive(yhat, tables, keys=ROBUST_EVALS, theta=None, scores=None):
            v = violations(y, yhat, noisy, constraint, alpha, m)
            return {k: v for k in keys}

        return naive
    if clf.method == "dro":
        return _dro_evaluator(clf, y, noisy, margin_rows)
    return _soft_evaluator(clf, y, noisy)
