"""Each method's promise: one definition, its promise checks (``Method.promise_held``: none at
fail), and the fidelity matrix's oracle (``promise_oracle``), which measures the promise on
rows the run never saw without reading any check's verdict."""

from __future__ import annotations

import dataclasses

import pytest

from fairengine.data import load_dataset
from fairengine.frontier.fidelity import (
    MAX_TEST_ROWS,
    Cell,
    judge,
    oracle_promise_held,
    promise_oracle,
    sample,
)
from fairengine.methods import get_method, list_methods
from fairengine.methods.base import RunResult
from fairengine.methods.evidence import Check


def _result(method: str, knobs: dict, test: dict, train: dict | None = None, checks=()):
    metrics = {"test": test, "train": train or {}}
    return RunResult(method=method, knobs=knobs, metrics=metrics, model=None, checks=checks)


def _run(method, dataset: str, seed: int, rows: int = 1500):
    train, test = load_dataset(dataset).split(random_state=seed)
    return method.run(sample(train, rows, seed)[0], sample(test, rows, seed)[0])


def test_each_promise_of_the_oracle_is_checked_by_the_method() -> None:
    promising = [m for m in list_methods() if promise_oracle(m) is not None]
    assert len(promising) == 5
    for name in promising:
        assert get_method(name).evidence.promise_checks, name
    bare = [m for m in list_methods() if not get_method(m).evidence.promise_checks]
    assert bare  # the reference methods make no promise of their own: always held
    failed = (Check("no_better_than_constant", "fail", "worse than constant", {}),)
    assert get_method(bare[0]).promise_held(_result(bare[0], {}, {"error": 1.0}, checks=failed))


@pytest.mark.parametrize(("level", "held"), [("ok", True), ("warn", True), ("fail", False)])
def test_a_failed_promise_check_and_only_that_breaks_the_promise(level: str, held: bool) -> None:
    method = get_method("fair_regression")
    knobs = {"constraint": "statistical_parity", "eps": 0.05}
    promise = Check("held_out_disparity", level, "the test disparity", {"allowance": 0.0})
    other = Check("no_better_than_constant", "fail", "not a promise check", {})
    result = _result("fair_regression", knobs, {"sp_ks": 0.2}, checks=(promise, other))
    assert method.promise_held(result) is held


@pytest.mark.parametrize(
    ("name", "dataset"),
    [
        ("fair_regression", "law_school"),
        ("fair_regression", "communities_crime"),
        ("balanced_filtering", "law_school"),
        ("balanced_filtering", "adult"),
        ("maxent", "german_credit"),
        ("noisy_groups", "german_credit"),
        ("multiaccurate_proxy", "compas"),
        ("multiaccurate_proxy", "adult"),
    ],
)
@pytest.mark.parametrize("seed", [1, 2])
def test_the_promise_from_the_checks_agrees_with_the_oracle_on_the_runs_rows(
    name: str, dataset: str, seed: int
) -> None:
    """On the run's own test rows the oracle's rule is the one the checks apply (the old
    ``Method.promise``), so both verdicts agree; the bundled data hold kept and missed ones."""
    method = get_method(name)
    result = _run(method, dataset, seed)
    assert method.promise_held(result) is promise_oracle(name)(result)


def test_the_oracle_sees_a_missed_promise_that_blind_checks_do_not_report() -> None:
    """A balanced filter misses β on law school's test rows: its checks flag the cell; with the
    promise checks removed the oracle still finds the promise missed and the cell is no longer
    explained, so the matrix fails on checks that are blind."""
    method = get_method("balanced_filtering")
    blind = dataclasses.replace(
        method, evidence=dataclasses.replace(method.evidence, promise=lambda *args: [])
    )
    train, test = load_dataset("law_school").split(random_state=11)
    train, (test, fresh) = sample(train, 2000, 11)[0], sample(test, MAX_TEST_ROWS, 11)
    assert fresh is not None  # the oracle measures on rows the run never saw
    verdicts = {}
    for label, each in (("checked", method), ("blind", blind)):
        result = each.run(train, test)
        held = oracle_promise_held(each, train, result, fresh)
        assert not held
        verdicts[label] = judge(result, each, Cell(each.name, "law_school", 11, "", ""), held)
    assert verdicts["checked"].verdict == "flagged"
    assert "held_out_imbalance" in verdicts["checked"].reasons
    assert "promise" in verdicts["blind"].missed
    assert verdicts["blind"].verdict in ("silent", "other")
