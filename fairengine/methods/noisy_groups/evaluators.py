"""The 0-1 robust checks of :class:`~fairengine.methods.noisy_groups.estimator.RobustFairClassifier`
on one data set (y, noisy-group codes): what its multipliers may ascend on and what its best
iterate is selected by.

``make_evaluator(clf, y, noisy)`` returns ``evaluate(yhat, tables, keys, theta=, scores=)`` ->
``{"exact": viol, "paper": viol, "margin": viol}`` (per constraint, α included, > 0 = violated).
``theta`` and ``scores`` (the iterate and its scores on these rows) let the noise-corrected
checks rate each row under every noisy group it may carry when the classifier reads the noisy
group as a feature (``group_columns``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

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
from fairengine.metrics.noisy_groups import dro_violations, sa_worst

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
