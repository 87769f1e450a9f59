"""The audit compares an outside model with the unconstrained reference by paired tests on the
same test rows: the reference's own predictions are never flagged, and a model that turns a
tenth of the reference's right answers wrong is (McNemar's p in the numbers)."""

from __future__ import annotations

import numpy as np
import pytest

from fairengine.audit import audit
from fairengine.audit.core import positional
from fairengine.data import load_dataset
from fairengine.methods.evidence_fits import default_learner, unconstrained_predictions


def _reference(task):
    """The reference's predictions on every row of the audit's split (train and test)."""
    train, test = positional(task).split()
    fitted = unconstrained_predictions(default_learner(None, train), train, test)
    values = np.empty(len(task.y))
    values[np.asarray(train.frame.index)] = fitted[0]
    values[np.asarray(test.frame.index)] = fitted[1]
    return values


@pytest.mark.parametrize(("dataset", "sensitive"), [("german_credit", None), ("adult", "sex")])
def test_the_reference_itself_passes_and_a_worse_model_is_warned(dataset, sensitive) -> None:
    task = load_dataset(dataset, sensitive=sensitive)
    if len(task.y) > 8000:
        task = task.subset(np.sort(np.random.default_rng(0).choice(len(task.y), 8000, False)))
    same = audit(task, predictions=_reference(task), trained_on="none")
    error = {c.name: c for c in same.checks}["error_vs_reference"]
    assert error.level == "ok" and error.numbers["p_worse"] >= 0.05
    fair = {c.name: c for c in same.checks}["dp_diff_vs_reference"]
    assert fair.level == "ok" and fair.numbers["worse_by_low"] <= 0 <= fair.numbers["worse_by_high"]

    worse = _reference(task)
    right = np.flatnonzero(worse == task.y)
    flipped = np.random.default_rng(1).choice(right, len(task.y) // 10, replace=False)
    worse[flipped] = 1 - worse[flipped]
    flagged = {c.name: c for c in audit(task, predictions=worse, trained_on="none").checks}
    error = flagged["error_vs_reference"]
    assert error.level == "warn" and error.numbers["p_worse"] < 0.05
    assert "paired test" in error.sentence
