"""The balanced-filtering method's evidence. A filter predicts no target, so its references
are filters too:

Design notes: ``docs/methods/balanced_filtering.md``."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from fairengine import metrics
from fairengine.methods.evidence import (
    Baselines,
    Check,
    Evidence,
    check_allowance,
    qualify_status,
    rate_tolerance,
)

if TYPE_CHECKING:
    from fairengine.data import Task


#: How much worse the test imbalance may be than the training one before the filter is said not
#: to carry over (warn); three times as much, or three sampling tolerances, is a fail.
GAP_ALLOWANCE = 0.05


def _tau(result: Any, n_groups: int) -> np.ndarray:
    tau = result.artifacts.get("target")
    return np.full(n_groups, 1.0 / n_groups) if tau is None else np.asarray(tau, dtype=float)


def _filter_metrics(z: np.ndarray, accept: np.ndarray, tau: np.ndarray, proxy: np.ndarray):
    ones = np.ones(len(z))
    return {
        "disclosivity": float(metrics.disclosivity(None, proxy, z, sample_weight=ones)),
        "imbalance": float(metrics.imbalance(None, None, z, sample_weight=accept, target=tau)),
        "acceptance_rate": float(metrics.acceptance_rate(None, accept, z)),
    }


def filter_baselines(result: Any, train: Task, test: Task) -> Baselines:
    n_groups = len(train.group_names)
    tau = _tau(result, n_groups)
    shares = np.bincount(train.groups, minlength=n_groups) / len(train.groups)
    rho = np.where(shares > 0, tau / np.where(shares > 0, shares, 1.0), 0.0)
    rho = rho / rho.max()
    constant, unconstrained = {}, {}
    for split, task in (("train", train), ("test", test)):
        z = np.asarray(task.groups, dtype=np.int64)
        constant[split] = _filter_metrics(z, np.ones(len(z)), tau, np.zeros(len(z), np.int64))
        unconstrained[split] = _filter_metrics(z, rho[z], tau, z)
    return Baselines(
        learner="acceptance by the sensitive attribute itself (ρ_k ∝ τ_k / P(z = k))",
        constant=constant,
        unconstrained=unconstrained,
        constant_label="keep every row (the unfiltered pool)",
        unconstrained_label="filter on the sensitive attribute (fully disclosive)",
    )


def imbalance_allowance(result: Any, test: Task) -> float:
    """Two standard errors of a perfectly balanced sample's imbalance from sampling alone:
    over m kept test rows the group shares' squared distance to τ has mean (1 − Σ τ²)/m."""
    counts = result.artifacts.get("filtered_counts_test")
    kept = float(np.sum(counts)) if counts is not None else float(len(test.y))
    tau = _tau(result, len(test.group_names))
    return 2 * math.sqrt(max(1 - float(np.sum(tau**2)), 0.0) / max(kept, 1.0))


def held_out_imbalance(result: Any, test: Task, baselines: Baselines | None) -> list[Check]:
    test_value = float(result.metrics.get("test", {}).get("imbalance", math.nan))
    train_value = float(result.metrics.get("train", {}).get("imbalance", math.nan))
    pool = math.nan if baselines is None else baselines.constant["test"]["imbalance"]
    best = math.nan if baselines is None else baselines.unconstrained["test"]["imbalance"]
    beta = float(result.knobs.get("beta_stop", math.nan))
    tol = rate_tolerance(test)
    allowance = imbalance_allowance(result, test)
    numbers = {
        "test_imbalance": test_value,
        "train_imbalance": train_value,
        "pool_imbalance": pool,
        "disclosive_imbalance": best,
        "beta_stop": beta,
        "tolerance": tol,
        "allowance": allowance,
    }
    within = f"β_stop = {beta:g} plus the sampling allowance {allowance:.3f}"
    is_value = f"On the test rows the filtered sample's imbalance is {test_value:.3f}"
    level, sentence = "ok", f"{is_value}, within {within} (pool {pool:.3f})."
    if not math.isfinite(test_value):  # no gap check follows: the gap is NaN too
        level, sentence = "fail", "No test row is accepted: the filter's held-out sample is empty."
    elif math.isfinite(pool) and test_value >= pool:
        level = "fail"
        sentence = (
            f"On the test rows the filtered sample's imbalance {test_value:.3f} is no better "
            f"than keeping every row ({pool:.3f})."
        )
    elif test_value > beta + allowance and best > beta + allowance:
        level = "warn"
        sentence = (
            f"{is_value}, above {within}; filtering on the sensitive attribute itself reaches "
            f"only {best:.3f} there, so no filter reaches β_stop on these rows (pool {pool:.3f}). "
            "A larger β_stop states what is reachable."
        )
    elif test_value > beta + allowance:
        level = "fail"
        sentence = (
            f"{is_value}, above {within} (two standard errors over the kept rows; pool {pool:.3f})."
        )
    checks = [Check("held_out_imbalance", level, sentence, numbers)]
    gap = test_value - train_value
    if math.isfinite(gap) and gap > GAP_ALLOWANCE:
        level = "fail" if gap > max(3 * GAP_ALLOWANCE, 3 * tol) else "warn"
        checks.append(
            Check(
                "train_test_gap",
                level,
                f"The imbalance is {train_value:.3f} on the training rows but {test_value:.3f} "
                "on the test rows: the filter fits its training rows and does not carry over.",
                numbers,
            )
        )
    return checks


def filtered_group_rows(result: Any) -> list[Check]:
    """One check per split whose filtered sample keeps a group at fewer than a few rows."""
    # imported here: registering the method must not load the solvers (scipy) behind it
    from fairengine.methods.balanced_filtering.definitions import FEW_GROUP_ROWS

    names = list(result.artifacts.get("group_names") or [])
    checks = []
    for split in ("train", "test"):
        counts = result.artifacts.get(f"filtered_counts_{split}")
        if counts is None or not np.sum(counts) > 0:
            continue  # an empty sample is reported by held_out_imbalance
        counts = np.asarray(counts, dtype=float)
        k = int(np.argmin(counts))
        low = float(counts[k])
        if low >= FEW_GROUP_ROWS:
            continue
        group = names[k] if k < len(names) else f"group {k}"
        numbers = {
            "group_index": float(k),
            "expected_rows": low,
            "few_rows": FEW_GROUP_ROWS,
            "kept_rows": float(np.sum(counts)),
        }
        if low < metrics.MISSING_GROUP_ROWS:
            level, words = "fail", "vanishes from"
        else:
            level, words = "warn", "keeps only a few rows in"
        checks.append(
            Check(
                f"filtered_group_rows_{split}",
                level,
                f"The group {group} {words} the filtered {split} sample ({low:.1f} of "
                f"{np.sum(counts):.0f} expected rows), so that sample cannot show it is balanced; "
                "its imbalance counts the group as missing when it is below half a row. A larger "
                "leaf floor or the generalising protocol keeps every group.",
                numbers,
            )
        )
    return checks


def convergence(result: Any) -> Check | None:
    status = result.artifacts.get("status") or {}
    if status.get("converged", True):
        return None
    return Check("not_converged", "warn", str(status.get("message_fit", status.get("message"))), {})


def promise(result: Any, train: Task, test: Task, baselines: Baselines | None) -> list[Check]:
    checks = held_out_imbalance(result, test, baselines) + filtered_group_rows(result)
    stopped = convergence(result)
    worst = next((c for c in checks if c.level != "ok"), None)
    qualify_status(result.artifacts, "message", worst, where="status")
    return checks + ([stopped] if stopped is not None else [])


EVIDENCE = Evidence(
    promise=promise,
    filter_baselines=filter_baselines,
    promise_checks=(
        "held_out_imbalance",
        "train_test_gap",
        "filtered_group_rows_train",
        "filtered_group_rows_test",
    ),
)


def fidelity_oracle(result: Any) -> bool:
    """The fidelity matrix's oracle for this method's promise: the promise measured on the run's
    numbers, reading no check's verdict (only the sampling allowance a check derived from the
    rows); see :func:`fairengine.frontier.fidelity.oracle_promise_held`."""
    test, train = result.metrics["test"]["imbalance"], result.metrics["train"]["imbalance"]
    beta = result.knobs["beta_stop"] + check_allowance(result, "held_out_imbalance")
    return test <= beta and test - train <= GAP_ALLOWANCE
