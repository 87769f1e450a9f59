"""Evidence on results: typed checks and baselines, idempotent, stored and recomputed alike."""

from __future__ import annotations

import json

import numpy as np
import pytest

from fairengine.data import load_dataset
from fairengine.frontier import FrontierStore, sweep
from fairengine.methods import get_method
from fairengine.methods.base import stored_result
from fairengine.methods.evidence import (
    Baselines,
    Check,
    attach_evidence,
    constant_check,
    evidence_dict,
    evidence_from_dict,
)


@pytest.fixture(scope="module")
def split():
    return load_dataset("german_credit").split(random_state=11)


@pytest.fixture(scope="module")
def result(split):
    return get_method("reweighing").run(*split)


def test_check_level_is_validated_and_round_trips() -> None:
    with pytest.raises(ValueError, match="level"):
        Check("x", "bad", "words")
    check = Check("x", "warn", "words", {"a": 0.5, "b": float("nan")})
    back = Check.from_dict(json.loads(json.dumps(check.to_dict())))
    assert back.name == "x" and back.level == "warn" and back.numbers["a"] == 0.5
    assert np.isnan(back.numbers["b"])


def test_baselines_are_the_constant_and_the_unconstrained_model_on_the_same_rows(
    result, split
) -> None:
    train, test = split
    base = result.baselines
    majority = float(np.mean(train.y) > 0.5)
    assert base.constant["test"]["error"] == pytest.approx(np.mean(test.y != majority))
    assert base.constant["train"]["dp_diff"] == 0.0
    # strength 0 is the unconstrained model of the same learner: the same metrics
    plain = get_method("reweighing").run(train, test, strength=0.0)
    for split_name in ("train", "test"):
        for name, value in base.unconstrained[split_name].items():
            assert plain.metrics[split_name][name] == pytest.approx(value, abs=1e-9)
    assert Baselines.from_dict(base.to_dict()).unconstrained == base.unconstrained


def test_attach_is_idempotent(result, split) -> None:
    first = evidence_dict(result)
    attach_evidence(result, *split, get_method(result.method))
    assert evidence_dict(result) == first


def test_constant_predictions_fail_and_varied_ones_pass() -> None:
    assert constant_check(np.ones(100), "classification").level == "fail"
    assert constant_check(np.r_[np.ones(995), np.zeros(5)], "classification").level == "warn"
    assert constant_check(np.r_[np.ones(50), np.zeros(50)], "classification").level == "ok"
    assert constant_check(np.full(10, 3.0), "regression").level == "fail"


def test_a_constant_model_is_no_better_than_the_constant_predictor(split) -> None:
    """Noisy groups' soft assignments at α = 0.02 on german_credit end at the all-positive
    classifier: both generic checks say so (and the status sentence is qualified by the
    held-out check)."""
    run = get_method("noisy_groups").run(*split, method="soft", slack=0.02)
    levels = {c.name: c.level for c in run.checks}
    assert levels["constant_predictions"] == "fail"
    assert levels["no_better_than_constant"] == "fail"


def test_stored_points_carry_the_same_evidence(split, tmp_path) -> None:
    store = FrontierStore(tmp_path)
    grid = {"strength": [0.5]}
    computed = sweep("reweighing", *split, grid, store=store).to_records()[0]
    cached = sweep("reweighing", *split, grid, store=store)
    record = cached.to_records()[0]
    assert record["cached"] and record["checks"] == computed["checks"]
    assert record["baselines"] == computed["baselines"]
    point = record["point_id"]
    checks = cached.run_result(point, *split).checks
    assert [c.name for c in checks] == [c["name"] for c in computed["checks"]]
    # a run stored without evidence gets it recomputed from its model and metrics
    rebuilt = stored_result(get_method("reweighing"), record["knobs"], record["metrics"],
                            cached.model(point), *split)  # fmt: skip
    assert evidence_dict(rebuilt)["checks"] == computed["checks"]
    assert evidence_from_dict(evidence_dict(rebuilt))[1].learner == rebuilt.baselines.learner


def test_noisy_groups_feasible_status_is_qualified_by_the_held_out_check() -> None:
    """Adult, 3 race groups, soft assignments, TPR, α = 0.05 at noise 0.1 on an untuned split
    (a split where a train-feasible fit breaks its constraint on test rows): whatever the
    selection status says, a held-out violation shows in the checks and in the status
    sentence."""
    task = load_dataset("adult", sensitive=["race"])
    train, test = task.split(random_state=12)
    keep = np.random.default_rng(0).choice(len(train.y), 6000, replace=False)
    run = get_method("noisy_groups").run(train.subset(np.sort(keep)), test, slack=0.05)
    check = next(c for c in run.checks if c.name == "held_out_constraint")
    assert check.numbers["test_true_violation"] == pytest.approx(
        run.metrics["test"]["true_violation"]
    )
    assert (check.level == "ok") == (run.metrics["test"]["true_violation"] <= 0)
    if check.level != "ok":
        assert "Held-out check" in run.artifacts["status_message"]
