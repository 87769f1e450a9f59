"""The engine's train/test split as row ids: which rows every method trains on and is scored on.

Every method's run, the Compare plane and the audit of an outside model use
:meth:`Task.split` with the same ``test_size`` and ``random_state``. An outside model audited on
rows it was trained on looks better than it is, so the split is given out as ids the user can
train on: a row's id is its value in the table's id column when one is named (``id_values``:
that column of the table the task was built from, indexed like it), else its row number
(0 = the first data row, which is the index of a table read by :func:`read_table`).

>>> train_ids, test_ids = split_ids(task)  # doctest: +SKIP
>>> model.fit(table.loc[train_ids], y.loc[train_ids])  # never sees a test row  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from fairengine.data.errors import DataError

if TYPE_CHECKING:
    from fairengine.data.task import Task

#: Column names of a split table: the row number (when no id column is named) and the part.
ROW_COLUMN, PART_COLUMN = "row", "part"


def row_ids(task: Task, id_values: pd.Series | None = None) -> pd.Series:
    """Each row of ``task`` (in its order) identified: its value in ``id_values`` or its row
    number. Raises :class:`DataError` when ids are missing or repeated."""
    if id_values is None:
        if not task.frame.index.is_unique:
            raise DataError(
                "The table's row labels repeat, so rows have no number: name an id column."
            )
        return pd.Series(task.frame.index, index=task.frame.index, name=ROW_COLUMN)
    name = str(id_values.name) if id_values.name is not None else "id"
    if not id_values.index.is_unique or not task.frame.index.isin(id_values.index).all():
        raise DataError(
            f"The id column {name!r} does not come from the table the task was built from."
        )
    ids = id_values.loc[task.frame.index]
    if ids.isna().any():
        raise DataError(f"The id column {name!r} has missing values: every row needs an id.")
    if ids.duplicated().any():
        repeated = str(ids[ids.duplicated()].iloc[0])[:40]
        raise DataError(
            f"The id {repeated!r} appears twice in column {name!r}: ids must be unique."
        )
    return ids.rename(name)


def held_out_rows(
    strata: np.ndarray | int, share: float, rng: np.random.Generator | int
) -> tuple[np.ndarray, np.ndarray]:
    """A fit's own validation split inside its training rows: (kept rows, held-out rows), each
    sorted, drawn with ``rng`` (a generator, which is advanced, or a seed).

    Parameters
    ----------
    strata : array or int
        Each row's stratum: a seeded ``share`` of each stratum's rows is held out (rounded, at
        least one row of each stratum kept). Or the number of rows n: ``int(share * n)`` rows
        (at least one) are held out, the first of one permutation of the n rows.
    share : float
        The share of the rows held out.
    rng : numpy Generator or int
        The random stream, or its seed.
    """
    rng = np.random.default_rng(rng)
    if np.ndim(strata) == 0:
        order = rng.permutation(int(strata))
        n_held = max(1, int(share * len(order)))
        return np.sort(order[n_held:]), np.sort(order[:n_held])
    held = []
    for k in np.unique(strata):
        rows = np.nonzero(strata == k)[0]
        n_held = min(int(round(share * len(rows))), len(rows) - 1)
        held.append(rng.choice(rows, n_held, replace=False))
    mask = np.zeros(len(strata), dtype=bool)
    mask[np.concatenate(held)] = True
    return np.nonzero(~mask)[0], np.nonzero(mask)[0]


def split_ids(
    task: Task,
    test_size: float = 0.3,
    random_state: int = 0,
    *,
    id_values: pd.Series | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The ids of the training rows and of the test rows of ``task.split(test_size,
    random_state)``, each in table order: row numbers, or the values of ``id_values`` (a column
    of the table the task was built from, e.g. ``table["customer_id"]``).

    Train an outside model on the first array only, and its audit
    (:func:`fairengine.audit.audit`, ``trained_on="engine"``) is scored on rows it never saw.
    """
    ids = row_ids(task, id_values)
    train, test = task.split(test_size=test_size, random_state=random_state)
    return ids.loc[train.frame.index].to_numpy(), ids.loc[test.frame.index].to_numpy()


def split_table(
    task: Task,
    test_size: float = 0.3,
    random_state: int = 0,
    *,
    id_values: pd.Series | None = None,
) -> pd.DataFrame:
    """:func:`split_ids` as one table in the table's row order: the id column (``"row"`` for
    row numbers) and ``"part"`` (``"train"`` or ``"test"``); what ``fairengine split --ids``
    and the dashboard's download write."""
    ids = row_ids(task, id_values)
    train, _ = task.split(test_size=test_size, random_state=random_state)
    part = np.where(task.frame.index.isin(train.frame.index), "train", "test")
    return pd.DataFrame({ids.name: ids.to_numpy(), PART_COLUMN: part})
