"""The Task: one table with its roles (target, sensitive attributes, features) and kind."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property, partial
from typing import Literal

import numpy as np
import pandas as pd

from fairengine.data.errors import DataError
from fairengine.data.groups import group_keys
from fairengine.data.leakage import find_leaks
from fairengine.data.validate import (
    check_roles,
    infer_kind,
    resolve_positive_label,
    resolve_positive_values,
)

Kind = Literal["classification", "regression"]


@dataclass(frozen=True, eq=False)
class Task:
    """A prediction task on one table: which column is the target, which are sensitive, and which
    are features.

    Build it with :func:`from_frame` or :func:`fairengine.load_dataset`, which validate the roles;
    the constructor itself trusts its inputs.

    Attributes
    ----------
    name : str
        Dataset name ("adult", "uploaded", ...).
    frame : pandas.DataFrame
        The rows, restricted to the target, sensitive and feature columns, then the identifier
        columns (``identifiers``, never features: they name the rows).
    target : str
        Target column. For classification ``y`` is 1 where it equals ``positive_label``.
    sensitive : tuple of str
        Sensitive columns. Several columns define intersectional groups.
    features : tuple of str
        Feature columns (the model inputs).
    kind : {"classification", "regression"}
    positive_label : object
        The target value coded as 1 (classification only).
    group_names : tuple of str
        Name of each group; ``groups`` holds indices into it. Fixed at construction, so the
        train and test parts of a split share the same codes.
    notes : tuple of str
        Things the validation changed and the user should know (dropped rows or columns).
    positive_values : tuple of str
        One-vs-rest classification of a target with several classes: the values coded as 1
        (``positive_label`` then names them for display). Empty for a two-valued target.
    identifiers : tuple of str
        Identifier columns of the table (row numbers, index columns, ids) left out of the
        features (:mod:`fairengine.data.identifiers`), kept at the end of ``frame``.
    leaks : tuple of str
        Features that alone predict the target almost perfectly (:mod:`fairengine.data.leakage`),
        found when the task was built; kept by :meth:`subset` and :meth:`split`.
    """

    name: str
    frame: pd.DataFrame
    target: str
    sensitive: tuple[str, ...]
    features: tuple[str, ...]
    kind: Kind
    positive_label: object = None
    group_names: tuple[str, ...] = ()
    merged_groups: tuple[str, ...] = field(default=())
    notes: tuple[str, ...] = ()
    positive_values: tuple[str, ...] = ()
    identifiers: tuple[str, ...] = ()
    leaks: tuple[str, ...] = ()

    @property
    def X(self) -> pd.DataFrame:
        """The feature columns."""
        return self.frame.loc[:, list(self.features)]

    @cached_property
    def y(self) -> np.ndarray:
        """Target as an array: 0/1 ints for classification, floats for regression."""
        column = self.frame[self.target]
        if self.kind == "classification" and self.positive_values:
            return column.astype(str).isin(self.positive_values).to_numpy(dtype=np.int64)
        if self.kind == "classification":
            return (column.astype(str) == str(self.positive_label)).to_numpy(dtype=np.int64)
        return column.to_numpy(dtype=np.float64)

    @cached_property
    def group_labels(self) -> pd.Series:
        """Each row's group name (intersection of the sensitive columns)."""
        return group_keys(self.frame, self.sensitive, self.merged_groups)

    @cached_property
    def groups(self) -> np.ndarray:
        """Each row's group as an int code into ``group_names``."""
        codes = pd.Index(self.group_names).get_indexer(self.group_labels)
        return np.asarray(codes, dtype=np.int64)

    @property
    def n_groups(self) -> int:
        return len(self.group_names)

    @cached_property
    def fingerprint(self) -> str:
        """SHA-256 over the content (row order included) and the roles."""
        roles = {
            "target": self.target,
            "sensitive": list(self.sensitive),
            "features": list(self.features),
            "kind": self.kind,
            "positive_label": None if self.positive_label is None else str(self.positive_label),
            "groups": list(self.group_names),
            "merged": list(self.merged_groups),
        }
        if self.positive_values:  # only then: earlier tasks keep their fingerprints
            roles["positive_values"] = list(self.positive_values)
        digest = hashlib.sha256(json.dumps(roles, sort_keys=True).encode())
        columns = [self.target, *self.sensitive, *self.features]
        hashed = pd.util.hash_pandas_object(self.frame[columns], index=False)
        digest.update(hashed.to_numpy().tobytes())
        return digest.hexdigest()

    def subset(
        self, rows: np.ndarray | Sequence[int], *, columns: Sequence[str] | None = None
    ) -> Task:
        """A task on some rows (positions) of this one, with the same roles and group codes.
        ``y`` and ``groups`` are row by row, so those this task has computed are taken at
        ``rows`` instead of being computed again from the rows' frame (a bootstrap makes
        thousands of subsets). ``columns``: keep only these columns of the frame (then what
        reads another column fails), e.g. none for a task read through ``y`` and ``groups``."""
        rows = np.asarray(rows)
        frame = self.frame if columns is None else self.frame.loc[:, list(columns)]
        part = replace(self, frame=frame.iloc[rows], notes=())
        for name in ("y", "groups"):
            if name in self.__dict__:
                part.__dict__[name] = self.__dict__[name][rows]
        return part

    def split(self, test_size: float = 0.3, random_state: int = 0) -> tuple[Task, Task]:
        """Split into train and test parts, stratified on group x label.

        For regression, or when a group x label cell has fewer than two rows, the split is
        stratified on the groups alone. Each part's frame keeps this frame's row labels (the row
        numbers of a table read from a file): :func:`fairengine.data.split_ids` gives them out.
        """
        if not 0.0 < test_size < 1.0:
            raise ValueError(f"test_size must be in (0, 1), got {test_size}.")
        strata = self.groups * 2 + self.y if self.kind == "classification" else self.groups
        if np.bincount(strata).min(initial=2) < 2 or len(np.unique(strata)) < 2:
            strata = self.groups
        counts = np.bincount(strata)
        if counts[counts > 0].min() < 2:
            strata = None
        from sklearn.model_selection import train_test_split  # lazy: listings import no sklearn

        positions = np.arange(len(self.frame))
        split = partial(train_test_split, positions, test_size=test_size, random_state=random_state)
        try:
            train, test = split(stratify=strata)
        except ValueError:
            # More strata than test (or train) rows in a small table: split without them rather
            # than fail; the groups were checked to have at least MIN_GROUP_SIZE rows each.
            train, test = ([], []) if strata is None else split(stratify=None)
        if len(train) == 0 or len(test) == 0:
            raise DataError(
                f"The table's {len(positions)} rows are too few to split into train and test."
            )
        return self.subset(np.sort(train)), self.subset(np.sort(test))

    def summary(self) -> dict[str, object]:
        """A small JSON-able description (for the sidebar, the CLI and model cards)."""
        return {
            "name": self.name,
            "rows": len(self.frame),
            "kind": self.kind,
            "target": self.target,
            "positive_label": None if self.positive_label is None else str(self.positive_label),
            "sensitive": list(self.sensitive),
            "features": len(self.features),
            "groups": list(self.group_names),
            "fingerprint": self.fingerprint[:12],
        }


def from_frame(
    df: pd.DataFrame,
    *,
    target: str,
    sensitive: str | Sequence[str],
    features: Sequence[str] | None = None,
    kind: Kind | None = None,
    positive_label: object = None,
    name: str = "uploaded",
    drop_missing: bool = False,
    merge_small_groups: bool = False,
    min_group_size: int | None = None,
    max_rows: int | None = None,
    keep: tuple[str, ...] = (),
    leave_out: tuple[str, ...] = (),
) -> Task:
    """Validate a table and its roles and build a :class:`Task`.

    Parameters
    ----------
    df : pandas.DataFrame
        The table.
    target : str
        The column to predict.
    sensitive : str or sequence of str
        Sensitive column(s); several columns give intersectional groups.
    features : sequence of str, optional
        Model inputs. Default: every other column but identifiers (row numbers, index columns,
        ids: ``Task.identifiers``). Constant feature columns are dropped. Both are noted in
        ``Task.notes``, as are the features that leak the target (``Task.leaks``).
    kind : {"classification", "regression"}, optional
        Inferred when omitted: a target with two values is a classification target, a numeric
        target with many values a regression target.
    positive_label : optional
        For classification, the target value coded as 1. Default: a value that reads as
        positive (``1``, ``True``, ``"yes"``, ``">50K"``, ...), else the rarer value. A list (or
        tuple/set) of values makes a one-vs-rest task of a target with several classes: those
        values are coded 1, every other value 0 (``Task.positive_values``).
    name : str
        Name shown in the dashboard and stored in model files.
    drop_missing : bool
        Drop rows with a missing target or sensitive value instead of raising.
    merge_small_groups : bool
        Merge groups smaller than ``min_group_size`` into one group instead of raising.
    min_group_size : int, optional
        Smallest group accepted (default :data:`fairengine.data.validate.MIN_GROUP_SIZE`).
    max_rows : int, optional
        Row limit (default :data:`fairengine.data.validate.MAX_ROWS`).
    keep : tuple of str
        Identifier columns kept as features anyway (without ``features``, identifiers are
        left out: ``Task.identifiers``).
    leave_out : tuple of str
        Columns left out of the features (e.g. a leaked column named in ``Task.leaks``).

    Raises
    ------
    DataError
        With a message that names the column and says what to do.
    """
    checked = check_roles(
        df,
        target=target,
        sensitive=sensitive,
        features=features,
        drop_missing=drop_missing,
        max_rows=max_rows,
        keep=keep,
        leave_out=leave_out,
    )
    frame = checked.frame
    y = frame[target]
    one_vs_rest = isinstance(positive_label, list | tuple | set | frozenset)
    kind = infer_kind(y, target, kind, one_vs_rest=one_vs_rest)
    values: tuple[str, ...] = ()
    if kind == "classification" and one_vs_rest:
        values = resolve_positive_values(y, target, list(positive_label))  # type: ignore[arg-type]
        label: object = " | ".join(values)
    elif kind == "classification":
        label = resolve_positive_label(y, target, positive_label)
    else:
        label = None
    group_names, merged = checked.group_levels(
        merge_small_groups=merge_small_groups, min_group_size=min_group_size
    )
    task = Task(
        name=name,
        frame=frame,
        target=target,
        sensitive=checked.sensitive,
        features=checked.features,
        kind=kind,
        positive_label=label,
        group_names=group_names,
        merged_groups=merged,
        notes=checked.notes,
        positive_values=values,
        identifiers=checked.identifiers,
    )
    leaks = find_leaks(frame, task.features, task.y, kind)
    if not leaks:
        return task
    notes = (*task.notes, *(leak.sentence(target) for leak in leaks))
    return replace(task, leaks=tuple(leak.column for leak in leaks), notes=notes)
