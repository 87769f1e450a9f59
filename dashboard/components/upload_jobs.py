"""What the Compare page reads from a visitor's files, as calls for the job pool: every byte of
an upload is parsed, and every outside model predicts, in a job's process (its limits, the queue,
Cancel), so a hostile file costs its own job and nobody else's page. Each call returns plain
data, never an object the file described. The pool's warm parent imports this module (no
Streamlit).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from fairengine import settings
from fairengine.data import Task


def file_cpu_seconds() -> float:
    """Processor seconds one file's job may use (``$FAIRENGINE_FILE_CPU_SECONDS``, 120 by
    default: reading the largest file the upload limit lets through and predicting on a
    demo-sized table take a small share of it)."""
    return settings.current().file_cpu_seconds


def table_columns(raw: bytes) -> list[str]:
    """The column names of a predictions file (CSV or Parquet)."""
    from fairengine.data import read_table

    return [str(column) for column in read_table(raw).columns]


def outside_values(
    task: Task,
    raw: bytes,
    label: str,
    route: str,
    *,
    id_column: str | None = None,
    column: str | None = None,
    kind: str | None = None,
) -> dict[str, Any]:
    """An outside model's values on ``task`` from a model file (``route="model"``) or a
    predictions file (``route="file"``, keyed by ``id_column``): the values, their kind, where
    they came from, and the features and notes of the task they are scored on."""
    from fairengine.audit.sources import from_file, from_model_file

    if route == "model":
        outside = from_model_file(task, raw, label)
    else:
        outside = from_file(task, raw, id_column or "", column, kind)
    return {
        "values": np.asarray(outside.values, dtype=float),
        "kind": str(outside.kind),
        "source": str(outside.source),
        "features": tuple(str(f) for f in outside.task.features),
        "notes": tuple(str(n) for n in outside.task.notes),
    }


def scored_task(task: Task, found: dict[str, Any]) -> Task:
    """``task`` as :func:`outside_values` scored it: without the features it dropped (an id
    column), with its notes."""
    features = tuple(found["features"])
    dropped = [f for f in task.features if f not in features]
    return replace(
        task, frame=task.frame.drop(columns=dropped), features=features, notes=found["notes"]
    )


def comparison_contents(raw: bytes, train: Task, test: Task) -> dict[str, Any]:
    """A saved comparison, validated for this data: when it was made, its point ids, its pins
    and its outside models (the validated records, rebuilt with
    :meth:`fairengine.audit.AuditResult.from_dict` by the page)."""
    from fairengine.audit.comparison import load_comparison

    comparison = load_comparison(raw, train=train, test=test)
    comparison.audits()  # every outside model rebuilds here, or the job fails in words
    return {
        "created": str(comparison.created),
        "point_ids": sorted({str(p["point_id"]) for p in comparison.points}),
        "pins": [str(p["id"]) for p in comparison.pins],
        "outside": list(comparison.outside),
    }
