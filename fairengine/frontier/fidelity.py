"""The fidelity matrix: does a method show its effect on held-out rows, or say that it did not?

Design notes (what effect, flagged, other, n/a and silent mean): docs/architecture.md, "The
fidelity matrix".
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fairengine.metrics import is_lower_better

#: Split seeds no other test or bench uses (a floor, not a target).
SEEDS = (11, 12, 13)
#: Train / test rows a cell runs on (stratified sample of the split, for time).
MAX_TRAIN_ROWS = 2000
MAX_TEST_ROWS = 2000


#: The checks that answer each shortfall of :func:`shows_effect` (besides the promise's own).
RELEVANT = {
    "error": ("no_better_than_constant", "constant_predictions"),
    "fairness": ("fairness_vs_unconstrained", "baseline_constant", "constant_predictions"),
}


@dataclass
class Cell:
    """One cell's outcome: ``verdict`` ("effect", "flagged", "other", "silent", "n/a"), the
    checks that fired (``flags``, "level:name"), the shortfalls (``missed``: "error",
    "fairness", "promise", "balance") and the numbers."""

    method: str
    dataset: str
    seed: int
    setting: str
    verdict: str
    flags: list[str] = field(default_factory=list)
    #: whether the effect shows on test, whatever the checks say (the matrix before checks)
    effect: bool = False
    numbers: dict[str, float] = field(default_factory=dict)
    missed: list[str] = field(default_factory=list)
    #: the fired checks relevant to a shortfall (or failed), with their sentences
    reasons: dict[str, str] = field(default_factory=dict)


def sample(task: Any, rows: int, seed: int) -> tuple[Any, Any | None]:
    """``task`` on at most ``rows`` rows drawn without replacement (all rows if fewer), and
    ``task`` on the rows left out (None when none are)."""
    n = len(task.y)
    if n <= rows:
        return task, None
    keep = np.zeros(n, dtype=bool)
    keep[np.random.default_rng(seed).choice(n, size=rows, replace=False)] = True
    return task.subset(np.flatnonzero(keep)), task.subset(np.flatnonzero(~keep))


def _test_value(result: Any, name: str) -> float:
    value = result.metrics.get("test", {}).get(name)
    return math.nan if value is None else float(value)


def promise_oracle(name: str) -> Callable[[Any], bool] | None:
    """The fidelity matrix's oracle for method ``name``'s promise: the ``fidelity_oracle`` of its
    package's ``checks`` module (what the method promises, measured on a run's numbers without
    any check's verdict), None for a method that promises nothing beyond its checks."""
    try:
        checks = importlib.import_module(f"fairengine.methods.{name}.checks")
    except ImportError:
        return None
    return getattr(checks, "fidelity_oracle", None)


def oracle_promise_held(method: Any, train: Any, result: Any, fresh: Any | None) -> bool:
    """The oracle: whether ``result`` (``method`` fitted on ``train``) kept its promise, judged
    by :func:`promise_oracle` on ``fresh`` rows the run never saw (the same fit, as the knobs
    fix its seed, measured there), or on its own test rows when there are none."""
    oracle = promise_oracle(method.name)
    if oracle is None:
        return True
    return oracle(result if fresh is None else method.run(train, fresh, **result.knobs))


def shows_effect(
    result: Any, fairness_metric: str, *, promise_held: bool = True
) -> tuple[bool, dict[str, float], list[str]]:
    """Whether the result shows its effect on the test rows (see the module doc), the numbers
    it was judged on and what fell short ("error", "fairness", "promise"; "balance" for a
    filter); ``promise_held``: the oracle's verdict on its promise."""
    base = result.baselines
    if base is None:
        return False, {}, ["promise"]
    if "imbalance" in base.constant.get("test", {}):  # a filter
        value, pool = _test_value(result, "imbalance"), base.constant["test"]["imbalance"]
        numbers = {"test_imbalance": value, "pool_imbalance": pool}
        missed = [] if value < pool else ["balance"]
        missed += [] if promise_held else ["promise"]
        return not missed, numbers, missed
    perf = "error" if "error" in base.constant["test"] else "loss"
    value = _test_value(result, perf)
    const = base.constant["test"][perf]
    # the test value as the fairness check compared it (same rows as the baseline's), if any
    checked = [c for c in result.checks if c.name == "fairness_vs_unconstrained"]
    fair = (
        float(checked[0].numbers["test_value"]) if checked else _test_value(result, fairness_metric)
    )
    reference = base.unconstrained["test"].get(fairness_metric, math.nan)
    better = fair < reference if is_lower_better(fairness_metric) else fair > reference
    numbers = {
        perf: value,
        f"constant_{perf}": const,
        fairness_metric: fair,
        f"unconstrained_{fairness_metric}": reference,
    }
    missed = [] if value < const else ["error"]
    missed += [] if better else ["fairness"]
    missed += [] if promise_held else ["promise"]
    return not missed, numbers, missed


def run_cell(
    method_name: str,
    dataset: str,
    seed: int,
    knobs: Mapping[str, Any] | None = None,
    setting: str = "defaults",
    rows: int = MAX_TRAIN_ROWS,
) -> Cell:
    """Run one cell and judge it; a task the method refuses (``DataError``: e.g. max-entropy
    needs two groups) is the verdict "n/a" with the reason."""
    from fairengine.data import DataError, load_dataset
    from fairengine.methods import get_method

    method = get_method(method_name)
    task = load_dataset(dataset)
    train, test = task.split(random_state=seed)
    train, test = sample(train, rows, seed)[0], sample(test, MAX_TEST_ROWS, seed)
    try:
        result = method.run(train, test[0], **dict(knobs or {}))
    except DataError as exc:
        return Cell(method_name, dataset, seed, setting, "n/a", [str(exc)])
    held = oracle_promise_held(method, train, result, test[1])
    return judge(result, method, Cell(method_name, dataset, seed, setting, "silent"), held)


def judge(result: Any, method: Any, cell: Cell, promise_held: bool = True) -> Cell:
    """``cell`` with its verdict on ``result`` of ``method`` (see the module doc): effect, else
    flagged when a check relevant to a shortfall fired (or any failed), else other / silent;
    ``promise_held``: the oracle's verdict (:func:`oracle_promise_held`)."""
    fairness = (
        method.evidence.fairness_metric(result)
        if (method.evidence and method.evidence.fairness_metric)
        else method.fairness_metric
    )
    cell.effect, cell.numbers, cell.missed = shows_effect(
        result, fairness, promise_held=promise_held
    )
    fired = [c for c in result.checks if c.level != "ok"]
    cell.flags = [f"{c.level}:{c.name}" for c in fired]
    promise = tuple(method.evidence.promise_checks) if method.evidence else ()
    wanted = set(promise) if {"promise", "balance"} & set(cell.missed) else set()
    for shortfall in cell.missed:
        wanted.update(RELEVANT.get(shortfall, ()))
    relevant = [c for c in fired if c.level == "fail" or c.name in wanted]
    cell.reasons = {c.name: c.sentence for c in relevant}
    if cell.effect and not any(c.level == "fail" for c in fired):
        cell.verdict = "effect"
    else:
        cell.verdict = "flagged" if relevant else ("other" if fired else "silent")
    return cell


def cells(
    methods: list[str] | None = None, seeds: tuple[int, ...] = SEEDS
) -> Iterator[tuple[str, str, int]]:
    """Every (method, dataset, seed) of the matrix: each method on each bundled dataset of a
    kind it supports."""
    from fairengine.data.registry import list_datasets
    from fairengine.methods import get_method, list_methods

    for name in methods or list_methods():
        method = get_method(name)
        for info in list_datasets():
            if info.kind in method.kinds:
                for seed in seeds:
                    yield name, info.name, seed
