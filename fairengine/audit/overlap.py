"""Which rows an outside model was trained on: it is scored only on test rows it never saw.

Design notes: docs/howto/audit.md, "Rows the outside model was trained on".
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from fairengine.data.errors import DataError
from fairengine.data.split import PART_COLUMN, ROW_COLUMN, row_ids
from fairengine.methods.evidence import Check

if TYPE_CHECKING:
    from fairengine.data import Task

#: The answers in words; anything else given as ``trained_on`` is a collection of ids.
ANSWERS = ("unknown", "none", "engine")
#: Fewest unseen test rows an audit is scored on (below it the error's interval is too wide to
#: compare the model with anything).
MIN_UNSEEN_ROWS = 30


@dataclass(frozen=True)
class TrainedOn:
    """The answer to "which rows was the model trained on?".

    ``answer`` is one of :data:`ANSWERS` or ``"ids"``; for ids, ``seen`` marks each row of the
    task (by position) the model was trained on and ``n_ids`` / ``n_unmatched`` count the ids
    given and those that match no row (rows of other data)."""

    answer: str = "unknown"
    seen: np.ndarray | None = None
    n_ids: int = 0
    n_unmatched: int = 0


def trained_on_rows(
    task: Task,
    answer: str | Iterable[Any] | TrainedOn = "unknown",
    *,
    id_values: pd.Series | None = None,
) -> TrainedOn:
    """Resolve ``answer`` (one of :data:`ANSWERS`, or ids) on ``task``'s rows; ids are the values
    of ``id_values`` (a column of the table the task was built from) or row numbers."""
    if isinstance(answer, TrainedOn):
        return answer
    if isinstance(answer, str):
        if answer not in ANSWERS:
            raise ValueError(
                f"trained_on must be one of {ANSWERS} or a list of ids; got {answer!r}."
            )
        return TrainedOn(answer)
    given = pd.Index(pd.Series(list(answer), dtype=object).astype(str)).unique()
    keys = row_ids(task, id_values).astype(str)
    seen = keys.isin(given).to_numpy()
    if len(given) and not seen.any():
        by = "row numbers (0 = first data row)" if id_values is None else f"column {keys.name!r}"
        raise DataError(
            f"None of the {len(given):,} training ids matches a row of the table (ids are "
            f"matched to its {by}; first id given: {given[0][:40]!r}). Check the id column."
        )
    return TrainedOn("ids", seen, len(given), len(given) - int(seen.sum()))


def ids_from_table(table: pd.DataFrame, id_column: str | None = None) -> list[Any]:
    """The training ids of a file: its ``id_column`` (else ``"row"``, else its only column); in
    a split file (with a ``"part"`` column) the rows marked ``"train"``."""
    table = table.rename(columns=str)
    if PART_COLUMN in table.columns:
        table = table[table[PART_COLUMN].astype(str).str.strip().str.lower() == "train"]
    others = [c for c in table.columns if c != PART_COLUMN]
    column = next((c for c in (id_column, ROW_COLUMN) if c in others), None)
    if column is None and len(others) == 1:
        column = others[0]
    if column is None:
        raise DataError(
            f"The ids file has columns {', '.join(map(repr, others[:12]))}: name the id column "
            "(or give a file with one column)."
        )
    ids = table[column].dropna()
    if ids.dtype.kind == "f" and (ids == ids.round()).all():  # ints read as floats beside a gap
        ids = ids.astype("int64")
    return ids.tolist()


def unseen_test_rows(
    trained: TrainedOn, test: Task, train_positions: np.ndarray
) -> tuple[np.ndarray, Check, tuple[str, ...]]:
    """The positions (within ``test``) of the test rows the model never saw, the check that
    says on which rows it is scored and why, and the notes.

    ``test.frame.index`` holds the test rows' positions in the task (a positional split)."""
    n_test = len(test.frame)
    keep = np.ones(n_test, dtype=bool)
    numbers: dict[str, float] = {"test_rows": float(n_test)}
    if trained.answer == "unknown":
        sentence = (
            f"Valid only if the model never saw these {n_test:,} test rows: which rows it was "
            "trained on was not said, and on rows it learned from its error looks lower than it "
            "is. Say what it was trained on (none of this table, these ids, or the engine's "
            "training rows)."
        )
        return keep, Check("unseen_rows", "warn", sentence, numbers), ()
    notes: tuple[str, ...] = ()
    if trained.answer == "ids":
        keep = ~trained.seen[np.asarray(test.frame.index)]
        n_kept = int(keep.sum())
        if n_kept < n_test:
            notes += (
                f"{n_test - n_kept:,} of the {n_test:,} test rows are among the rows the model "
                f"was trained on and are left out: its test metrics are on the {n_kept:,} it "
                "never saw.",
            )
        if trained.n_unmatched:
            notes += (
                f"{trained.n_unmatched:,} of the {trained.n_ids:,} training ids match no row of "
                "this table (the model was also trained on other data).",
            )
        _refuse_if_too_few(test, keep)
    seen_words = {
        "none": "on none of this table's rows",
        "engine": f"on the engine's {len(train_positions):,} training rows",
        "ids": f"on {trained.n_ids:,} given ids",
    }[trained.answer]
    numbers.update(unseen_rows=float(keep.sum()), excluded_rows=float(n_test - keep.sum()))
    sentence = f"Scored on {int(keep.sum()):,} test rows it never saw: it was trained {seen_words}."
    return keep, Check("unseen_rows", "ok", sentence, numbers), notes


def _refuse_if_too_few(test: Task, keep: np.ndarray) -> None:
    n_kept, n_test = int(keep.sum()), len(keep)
    if n_kept < MIN_UNSEEN_ROWS:
        raise DataError(
            f"Only {n_kept:,} of the {n_test:,} test rows were not used to train the model, fewer "
            f"than the {MIN_UNSEEN_ROWS} an audit needs: its scores there would say nothing. "
            "Train it on the engine's training rows (`fairengine split --ids`) and audit again."
        )
    present = np.bincount(np.asarray(test.groups)[keep], minlength=test.n_groups)
    if (empty := np.flatnonzero(present == 0)).size:
        raise DataError(
            f"No test row of group {test.group_names[empty[0]]!r} is left that the model was not "
            f"trained on ({n_kept:,} of {n_test:,} test rows remain), so its per-group metrics "
            "cannot be scored. Train it on the engine's training rows and audit again."
        )
