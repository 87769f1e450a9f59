"""fairlearn's ThresholdOptimizer on an outside model's scores: the post-processed point.

The rule is fitted on the outside model's training-row scores (the same fairlearn fit as the
``threshold_optimizer`` method, :func:`fairengine.methods.threshold_optimizer.fit_rule`) and
scored on the test rows like every point. Like that method it reads the sensitive attribute at
prediction time; the result's notes say so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fairengine.audit.core import AuditResult, audit_values, positional
from fairengine.data.errors import DataError

if TYPE_CHECKING:
    from fairengine.data import Task


def postprocess(
    result: AuditResult,
    task: Task,
    knobs: dict[str, Any] | None = None,
    split: tuple[float, int] = (0.3, 0),
) -> AuditResult:
    """The outside model of ``result`` (scores) post-processed by ThresholdOptimizer with the
    method's knobs (``constraint``, ``objective``, ``tol``), audited on the same rows."""
    import numpy as np

    from fairengine.frontier.keys import task_key
    from fairengine.methods.threshold_optimizer import (
        CONSTRAINT_WORDS,
        SENSITIVE_AT_PREDICTION,
        THRESHOLD_OPTIMIZER,
        fit_rule,
    )
    from fairengine.models.group_thresholds import apply_rule

    if result.kind != "scores" or "train" not in result.values:
        raise DataError("Post-processing needs the outside model's scores (not hard predictions).")
    asked = {k: v for k, v in (knobs or {}).items() if k != "C"}
    values = THRESHOLD_OPTIMIZER.validate_knobs(asked)
    train, test = positional(task).split(test_size=split[0], random_state=split[1])
    if task_key(train, test) != result.task_key:
        raise DataError("The task is not the one the outside model was audited on.")
    rule, single = fit_rule(result.values["train"], train.y, train.groups, train.n_groups, values)
    probabilities = np.empty(len(task.frame))
    for part in (train, test):
        split_name = "train" if part is train else "test"
        scores = result.values[split_name]
        probabilities[part.frame.index] = apply_rule(rule, scores, part.groups)
    name = f"{result.name} + ThresholdOptimizer ({CONSTRAINT_WORDS[values['constraint']]})"
    post = audit_values(
        task, probabilities, "probabilities", None, name, split, trained=result.trained_on
    )
    post.source = f"{result.source}, post-processed"
    unfitted = [
        f"Group {train.group_names[g]!r} has a single label in the training rows: it "
        "keeps the plain threshold 1/2."
        for g in single
    ]
    post.notes = (*result.notes, SENSITIVE_AT_PREDICTION, *unfitted)
    return post
