"""Audit an outside model on the plane: its values scored like every method's point.

>>> from fairengine.audit import audit, from_model_file  # doctest: +SKIP
>>> result = audit(task, scores=probabilities, threshold=0.5, name="production")  # doctest: +SKIP
>>> result = audit(from_model_file(task, "model.skops"), name="v2")  # doctest: +SKIP

See :mod:`fairengine.audit.core` (scoring and checks), :mod:`fairengine.audit.sources` (a column,
a predictions file, a model file), :mod:`fairengine.audit.cost` (what it would cost to be fairer)
and :mod:`fairengine.audit.comparison` (saved comparisons).
"""

from fairengine.audit.core import AuditResult, audit, audit_values, postprocess
from fairengine.audit.cost import cost_of_fairness
from fairengine.audit.overlap import TrainedOn, trained_on_rows
from fairengine.audit.sources import Outside, from_column, from_file, from_model_file

__all__ = [
    "AuditResult",
    "Outside",
    "TrainedOn",
    "audit",
    "audit_values",
    "cost_of_fairness",
    "from_column",
    "from_file",
    "from_model_file",
    "postprocess",
    "trained_on_rows",
]
