"""Validation of a table and the roles chosen for its columns.

Every check raises :class:`DataError` with a message that names the column and says what to do.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

import numpy as np
import pandas as pd

from fairengine.data.errors import DataError
from fairengine.data.groups import MERGED_GROUP, group_keys
from fairengine.data.identifiers import find_identifiers
from fairengine.data.io import MAX_COLUMNS

#: Most rows a task may have (the engine's memory budget on a laptop).
MAX_ROWS = 2_000_000
#: Most distinct values a sensitive column may have before we ask the user to bin it.
MAX_GROUPS_PER_COLUMN = 30
#: Largest magnitude accepted in a numeric feature or regression target: beyond it squares and
#: sums in standardisation and the solvers overflow (1e308 is the float limit).
MAX_MAGNITUDE = 1e15
#: Most intersectional groups accepted.
MAX_GROUPS = 100
#: Smallest group accepted: fewer rows cannot be split into train and test and still be measured.
MIN_GROUP_SIZE = 10
#: A numeric target with more distinct values than this (or any non-integer value) is a
#: regression target when the kind is not given.
MAX_INTEGER_CLASSES = 10

_POSITIVE_TOKENS = (
    "1", "1.0", "true", "yes", "y", "positive", "pos", "good", ">50k", "pass", "approved",
    "default", "recid", "high",
)  # fmt: skip


@dataclass(frozen=True)
class CheckedRoles:
    """A table whose roles passed the checks: restricted to the used columns and the identifier
    columns, rows kept."""

    frame: pd.DataFrame
    target: str
    sensitive: tuple[str, ...]
    features: tuple[str, ...]
    notes: tuple[str, ...]
    #: Identifier columns left out of the features (:mod:`fairengine.data.identifiers`).
    identifiers: tuple[str, ...] = ()

    def group_levels(
        self, *, merge_small_groups: bool = False, min_group_size: int | None = None
    ) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Sorted group names and the names merged into :data:`MERGED_GROUP`."""
        minimum = MIN_GROUP_SIZE if min_group_size is None else int(min_group_size)
        counts = group_keys(self.frame, self.sensitive).value_counts()
        label = " x ".join(repr(c) for c in self.sensitive)
        if len(counts) > MAX_GROUPS:
            raise DataError(
                f"The sensitive column(s) {label} define {len(counts)} groups "
                f"(limit {MAX_GROUPS}). Choose fewer sensitive columns or bin their values."
            )
        small = counts[counts < minimum]
        merged: tuple[str, ...] = ()
        if len(small) and merge_small_groups:
            merged = tuple(sorted(small.index))
            counts = counts.drop(small.index)
            counts[MERGED_GROUP] = int(small.sum())
            small = counts[counts < minimum]
        if len(counts) < 2:
            only = counts.index[0] if len(counts) else "none"
            raise DataError(
                f"The sensitive column(s) {label} have a single group ({only!r}). Fairness needs "
                "at least two groups: choose another sensitive column."
            )
        if MERGED_GROUP in small.index:
            raise DataError(
                f"Sensitive column(s) {label}: even merged, the small groups have only "
                f"{int(small[MERGED_GROUP])} rows (fewer than {minimum}). Bin the column into "
                "broader values or choose another sensitive column."
            )
        if len(small):
            listed = ", ".join(f"{name!r} ({n} rows)" for name, n in small.items())
            raise DataError(
                f"Sensitive column(s) {label}: group(s) {listed} have fewer than {minimum} rows, "
                "too few to split into train and test. Merge small groups (the 'merge small "
                "groups' option), bin the column, or choose another sensitive column."
            )
        return tuple(sorted(counts.index)), merged


def check_roles(
    df: pd.DataFrame,
    *,
    target: str,
    sensitive: str | Sequence[str],
    features: Sequence[str] | None,
    drop_missing: bool = False,
    max_rows: int | None = None,
    keep: Sequence[str] = (),
    leave_out: Sequence[str] = (),
) -> CheckedRoles:
    """Check the table and the roles; return the table restricted to the used columns.

    Without ``features``, every other column is a feature except constant columns, identifiers
    (:func:`fairengine.data.identifiers.identifier`) not listed in ``keep``, and the columns in
    ``leave_out``; ``leave_out`` also leaves columns out of given ``features``."""
    if not isinstance(df, pd.DataFrame):
        raise DataError(f"Expected a pandas DataFrame, got {type(df).__name__}.")
    limit = MAX_ROWS if max_rows is None else int(max_rows)
    _check_shape(df, limit)
    sens = (sensitive,) if isinstance(sensitive, str) else tuple(sensitive)
    columns = [str(c) for c in df.columns]
    _check_role_names(columns, target, sens, features)
    frame = df.copy()
    frame.columns = columns
    notes: list[str] = [str(n) for n in df.attrs.get("notes", ())]
    used = list(dict.fromkeys([target, *sens, *(features if features is not None else columns)]))
    for col in used:
        plain = _plain_values(frame[col], col, notes)
        if plain is not frame[col]:
            frame[col] = plain
    frame = _handle_missing(frame, [target, *sens], drop_missing, notes)
    others = [c for c in frame.columns if c != target and c not in sens]
    found = find_identifiers(frame, others)
    if features is None:
        kept = set(keep)
        features = [c for c in others if c not in {f.column for f in found} - kept]
    features = [c for c in features if c not in set(leave_out)]
    feats = _choose_features(frame, target, sens, features, notes)
    for ident in found:  # one note per identifier column: left out, or a feature as chosen
        chosen = (
            "It is a feature, as chosen." if ident.column in feats else "Left out of the features."
        )
        notes.append(f"{ident.sentence()} {chosen}")
    _check_sensitive(frame, sens)
    for col in feats:
        _check_magnitude(frame[col], f"Feature {col!r}")
    left_out = tuple(f.column for f in found if f.column not in feats)
    # identifiers stay in the frame, never as features: they name rows (audits, split ids)
    frame = frame.loc[:, [target, *sens, *(f for f in feats if f not in sens), *left_out]]
    return CheckedRoles(frame, target, sens, feats, tuple(notes), left_out)


def _check_role_names(
    columns: list[str], target: str, sens: tuple[str, ...], features: Sequence[str] | None
) -> None:
    """Every role names an existing column; the sensitive columns are distinct, not the target."""
    if not sens:
        raise DataError("Choose at least one sensitive column.")
    for role, names in (("target", [target]), ("sensitive", sens), ("feature", features or [])):
        for col in names:
            if col not in columns:
                raise DataError(
                    f"Unknown {role} column {col!r}. Available columns: {_list(columns)}."
                )
    if len(set(sens)) != len(sens):
        raise DataError(f"A sensitive column is listed twice: {list(sens)}.")
    if target in sens:
        raise DataError(
            f"Column {target!r} is both the target and a sensitive column. Choose a different "
            "target or sensitive attribute."
        )


def _check_shape(df: pd.DataFrame, limit: int) -> None:
    if df.shape[1] == 0 or df.shape[0] == 0:
        raise DataError("The table is empty: it needs a header row and at least one data row.")
    duplicated = sorted(n for n, c in Counter(map(str, df.columns)).items() if c > 1)
    if duplicated:
        raise DataError(
            f"Duplicate column names: {_list(duplicated)}. Rename them so every name is unique."
        )
    if df.shape[1] > MAX_COLUMNS:
        raise DataError(
            f"The table has {df.shape[1]:,} columns, more than the limit of {MAX_COLUMNS:,}. "
            "Keep the columns you need (target, sensitive attributes and features)."
        )
    if len(df) > limit:
        raise DataError(
            f"The table has {len(df):,} rows, more than the limit of {limit:,}. "
            "Use a random sample of the rows."
        )


def _plain_values(column: pd.Series, name: str, notes: list[str]) -> pd.Series:
    """The column with plain values: lists/structures refused, decimals as floats, bytes as text.

    Only object columns are inspected (one pass over their values).
    """
    if column.dtype != object:
        return column
    present = column.dropna()
    types = set(map(type, present))
    nested = [t for t in types if issubclass(t, list | tuple | dict | set | np.ndarray)]
    if nested:
        first = repr(next(v for v in present if isinstance(v, tuple(nested))))
        first = first if len(first) <= 40 else first[:37] + "..."
        row = _row_of(column, present.index[present.map(type).isin(nested)][0])
        raise DataError(
            f"Column {name!r} holds nested values (e.g. {first} in {row}), not plain "
            "numbers or text. Flatten it into plain columns, or leave it out of the roles."
        )
    if types and all(issubclass(t, Decimal) for t in types):
        notes.append(f"Column {name!r} holds decimal numbers; they are used as floats.")
        return pd.to_numeric(column.map(lambda v: v if pd.isna(v) else float(v)))
    if any(issubclass(t, bytes | bytearray) for t in types):
        notes.append(
            f"Column {name!r} holds raw bytes; they are read as UTF-8 text (invalid bytes are "
            "shown as \\xNN escapes)."
        )
        return column.map(
            lambda v: (
                bytes(v).decode("utf-8", "backslashreplace")
                if isinstance(v, bytes | bytearray)
                else v
            )
        )
    return column


def _check_magnitude(column: pd.Series, what: str) -> None:
    """Refuse infinite values and magnitudes over :data:`MAX_MAGNITUDE` in a numeric column."""
    if not pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column):
        return
    values = column.to_numpy(dtype=float, na_value=np.nan)
    with np.errstate(invalid="ignore"):
        bad = np.abs(values) > MAX_MAGNITUDE
    if not bad.any():
        return
    position = int(np.argmax(bad))
    value = values[position]
    row = _row_of(column, column.index[position])
    if np.isinf(value):
        raise DataError(
            f"{what} has an infinite value ({value}) in {row}. Replace infinite values with "
            "missing values or finite numbers, or remove those rows."
        )
    raise DataError(
        f"{what} has values as large as {value:.3g} (in {row}), beyond ±{MAX_MAGNITUDE:.0e}: "
        "the arithmetic of the methods overflows. Rescale the column (e.g. to thousands or a "
        "logarithm) or remove those rows."
    )


def _row_of(column: pd.Series, label: object) -> str:
    position = column.index.get_loc(label)
    if isinstance(position, int | np.integer):
        return f"row {int(position) + 1}"
    return f"row with index {label!r}"


def _handle_missing(
    frame: pd.DataFrame, required: list[str], drop: bool, notes: list[str]
) -> pd.DataFrame:
    missing = frame[required].isna()
    if not missing.to_numpy().any():
        return frame
    per_column = missing.sum()
    rows = int(missing.any(axis=1).sum())
    listed = ", ".join(f"{c!r} ({n})" for c, n in per_column.items() if n)
    if not drop:
        raise DataError(
            f"Missing values in the target/sensitive column(s) {listed}: {rows} row(s) in all. "
            "Drop those rows (the option to drop rows with a missing target or sensitive value) "
            "or fill them in.",
            api_hint="from_frame(..., drop_missing=True); --drop-missing on the command line",
        )
    notes.append(f"Dropped {rows} row(s) with a missing value in {listed}.")
    kept = frame.loc[~missing.any(axis=1)]
    if kept.empty:
        raise DataError(f"Every row has a missing value in {listed}; nothing is left.")
    return kept


def _choose_features(
    frame: pd.DataFrame,
    target: str,
    sens: tuple[str, ...],
    features: Sequence[str],
    notes: list[str],
) -> tuple[str, ...]:
    candidates = list(dict.fromkeys(features))
    if target in candidates:
        raise DataError(
            f"The target {target!r} cannot also be a feature. Remove it from the features."
        )
    constant = [c for c in candidates if frame[c].nunique(dropna=False) <= 1]
    if constant:
        notes.append(f"Ignored constant column(s) {_list(constant)}: they carry no information.")
    kept = tuple(c for c in candidates if c not in constant)
    if not kept:
        raise DataError(
            "No usable feature columns: every other column is constant, an identifier or already "
            "used as target/sensitive. Add columns with information to the table, or keep an "
            "identifier column as a feature."
        )
    return kept


def _check_sensitive(frame: pd.DataFrame, sens: tuple[str, ...]) -> None:
    for col in sens:
        n = frame[col].nunique()
        if n > MAX_GROUPS_PER_COLUMN:
            hint = (
                " It looks numeric: bin it into a few ranges (e.g. age < 25 / 25+)."
                if pd.api.types.is_numeric_dtype(frame[col])
                else " Merge rare values or choose another column."
            )
            raise DataError(
                f"Sensitive column {col!r} has {n} distinct values (limit "
                f"{MAX_GROUPS_PER_COLUMN}).{hint}"
            )


def infer_kind(column: pd.Series, name: str, kind: str | None, *, one_vs_rest: bool = False) -> str:
    """Infer or check the task kind from the target column.

    With ``one_vs_rest`` (positive values chosen among several classes) a target with more than
    two classes is a classification target.
    """
    values = column.dropna()
    n_unique = values.nunique()
    if n_unique < 2:
        only = str(values.iloc[0]) if len(values) else "no values"
        raise DataError(
            f"The target {name!r} is constant ({only}): there is nothing to predict. "
            "Choose another target column."
        )
    numeric = pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)
    if kind is None:
        if n_unique == 2 or one_vs_rest:
            kind = "classification"
        elif numeric and (n_unique > MAX_INTEGER_CLASSES or not _all_integer(values)):
            kind = "regression"
        else:
            kind = "classification"
    if kind == "classification":
        if n_unique > 2 and not one_vs_rest:
            listed = values_in_words(values.astype(str).unique())
            hint = ", set the task kind to regression" if numeric else ""
            raise DataError(
                f"The target {name!r} has {listed}; the methods need a target with two "
                "values. Choose which values count as positive (one-vs-rest: the others count "
                f"as negative){hint}, or choose a column with two values as the target.",
                api_hint="from_frame(..., positive_label=[values counted as positive])",
            )
        return kind
    if kind == "regression":
        if not numeric:
            raise DataError(
                f"The regression target {name!r} is not numeric (e.g. {values.iloc[0]!r}). "
                "Choose a numeric column or set the kind to classification."
            )
        _check_magnitude(values, f"The regression target {name!r}")
        return kind
    raise DataError(f"Unknown task kind {kind!r}: use 'classification' or 'regression'.")


def resolve_positive_values(
    column: pd.Series, name: str, positive: Sequence[object]
) -> tuple[str, ...]:
    """One-vs-rest: the chosen positive values (as text, in order of appearance), checked."""
    present = [str(v) for v in pd.unique(column.dropna())]
    wanted = {str(v) for v in positive}
    unknown = sorted(wanted - set(present))
    if unknown:
        raise DataError(
            f"Positive value(s) {_list(unknown)} do not occur in the target {name!r}; its values "
            f"are {_list(present)}."
        )
    chosen = tuple(v for v in present if v in wanted)
    if not chosen or len(chosen) == len(present):
        raise DataError(
            f"Choose some but not all values of the target {name!r} as positive (one-vs-rest): "
            f"{'none' if not chosen else 'all'} of {_list(present)} were chosen."
        )
    return chosen


def resolve_positive_label(column: pd.Series, name: str, positive_label: object) -> object:
    """The target value coded as 1: the given one, one that reads as positive, or the rarer one."""
    values = list(pd.unique(column.dropna()))
    if positive_label is not None:
        for value in values:
            if str(value) == str(positive_label):
                return value
        raise DataError(
            f"Positive label {positive_label!r} does not occur in the target {name!r}; "
            f"its values are {_list(map(str, values))}."
        )
    for value in values:
        if str(value).strip().lower() in _POSITIVE_TOKENS:
            return value
    counts = column.value_counts()
    return counts.index[-1] if counts.iloc[0] != counts.iloc[-1] else sorted(values, key=str)[-1]


def values_in_words(values: Sequence[object], shown: int = 6) -> str:
    """``"7 values: 0, 1, 2, 3, 4, 5, …"``: the count, then every value (sorted, numbers in
    numeric order) or the first ``shown`` and an ellipsis, so the list never contradicts the
    count."""
    distinct = sorted({str(v) for v in values}, key=_natural_key)
    listed = ", ".join(distinct[:shown]) + (", …" if len(distinct) > shown else "")
    return f"{len(distinct)} values: {listed}"


def _natural_key(text: str) -> tuple[int, float, str]:
    try:
        return (0, float(text), text)
    except ValueError:
        return (1, 0.0, text)


def _all_integer(values: pd.Series) -> bool:
    array = values.to_numpy(dtype=float)
    return bool(np.all(np.isfinite(array)) and np.all(array == np.round(array)))


def _list(names: object) -> str:
    items = [repr(n) if isinstance(n, str) else str(n) for n in names]  # type: ignore[attr-defined]
    return ", ".join(items[:20]) + (f" and {len(items) - 20} more" if len(items) > 20 else "")
