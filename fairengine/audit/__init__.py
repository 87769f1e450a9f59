"""Audit an outside model on the plane: its values scored like every method's point.

>>> from fairengine.audit import audit, from_model_file, audit_outside  # doctest: +SKIP
>>> result = audit(task, scores=probabilities, threshold=0.5, name="production")  # doctest: +SKIP
>>> result = audit_outside(from_model_file(task, "model.skops"), name="v2")  # doctest: +SKIP

See :mod:`fairengine.audit.core` (scoring and checks), :mod:`fairengine.audit.sources` (a column,
a predictions file, a model file), :mod:`fairengine.audit.cost` (what it would cost to be fairer)
and :mod:`fairengine.audit.comparison` (saved comparisons).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from fairengine.audit.core import AuditResult, audit, audit_values
from fairengine.audit.cost import cost_of_fairness
from fairengine.audit.overlap import TrainedOn, trained_on_rows
from fairengine.audit.postprocess import postprocess
from fairengine.audit.sources import Outside, from_column, from_file, from_model_file

__all__ = [
    "AuditResult",
    "Outside",
    "TrainedOn",
    "audit",
    "audit_outside",
    "audit_values",
    "cost_of_fairness",
    "from_column",
    "from_file",
    "from_model_file",
    "postprocess",
    "trained_on_rows",
]

if TYPE_CHECKING:
    import pandas as pd


def audit_outside(
    outside: Outside,
    *,
    threshold: float = 0.5,
    name: str = "outside model",
    test_size: float = 0.3,
    random_state: int = 0,
    trained_on: str | Iterable[Any] = "unknown",
    id_values: pd.Series | None = None,
) -> AuditResult:
    """:func:`audit` of the values one of the three routes produced (on its task); ``trained_on``
    and ``id_values`` as for :func:`audit`."""
    result = audit_values(
        outside.task,
        outside.values,
        outside.kind,
        threshold,
        name,
        (test_size, random_state),
        trained=trained_on_rows(outside.task, trained_on, id_values=id_values),
    )
    result.source = outside.source
    result.notes = (*outside.task.notes, *result.notes)
    return result
