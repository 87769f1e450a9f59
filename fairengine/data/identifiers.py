"""Identifier columns: row numbers, index columns and ids, which are never features by default.

Design notes: docs/howto/upload.md, "Identifier columns".
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

#: A text (or name-hinted) column needs at least this many distinct values to be an identifier.
ID_MIN_DISTINCT = 20
#: A text column with distinct values on more than this share of its rows is an identifier.
ID_DISTINCT_SHARE = 0.5
#: A column named like an identifier needs distinct values on at least this share of its rows:
#: a person id over an 8-year panel has one value per 8 rows (12.5 %).
NAMED_DISTINCT_SHARE = 0.05
#: Row numbers with gaps span at most this many times the rows (half the rows removed).
SEQUENCE_SPAN = 2.0
#: Name parts of identifier columns (matched on whole parts, see :func:`name_parts`).
ID_NAME_HINTS: tuple[str, ...] = (
    "id", "ids", "nr", "no", "num", "number", "key", "index", "idx", "uuid", "guid", "code",
    "serial", "seqn", "rownames", "rowname", "rowid",
)  # fmt: skip
#: Entities whose id is written as one part (``persnum``, ``hhid``, ``caseno``, ``intnum``).
ID_ENTITIES: tuple[str, ...] = (
    "p", "pers", "person", "case", "hh", "household", "house", "fam", "family", "row", "obs",
    "client", "cust", "customer", "pat", "patient", "subj", "subject", "student", "user",
    "member", "firm", "int", "interview", "loan", "app", "applicant", "acct", "account", "rec",
    "record", "emp", "employee", "resp", "respondent", "child", "school", "unit",
)  # fmt: skip
_ID_SUFFIXES = ("id", "num", "nr", "no", "code", "key")
_TRAILING_HINTS = frozenset({"no", "nr", "num", "number"})
#: Index columns written by pandas, R and spreadsheets (an empty header is read as
#: ``Unnamed: 0``); ``X`` is R's name for an empty header read back, so only with row numbers.
_INDEX_NAME = re.compile(r"^(unnamed: ?\d+|rownames|row\.names|row_names|\.\.\.\d+|index|level_0)$")
_R_INDEX_NAME = re.compile(r"^x(\.\d+)?$")


@dataclass(frozen=True)
class Identifier:
    """A column recognised as an identifier: ``certain`` or a warning, and why in words."""

    column: str
    certain: bool
    reason: str

    def sentence(self) -> str:
        """What was found and what follows, in one sentence (the column quoted)."""
        if self.certain:
            return f"Column {self.column!r} is an identifier ({self.reason})."
        return (
            f"Column {self.column!r} looks like an identifier ({self.reason}); keep it if it is "
            "a real feature."
        )


def name_parts(name: str) -> tuple[str, ...]:
    """The lower-case parts of a column name, split at non-letters, camelCase humps and digits."""
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", str(name))
    return tuple(p for p in re.split(r"[^0-9a-zA-Z]+|(?<=\D)(?=\d)", spaced.lower()) if p)


def named_like_identifier(name: str) -> bool:
    """Whether a part of ``name`` is an identifier hint or an entity's id written as one part.

    The number words (:data:`_TRAILING_HINTS`) count only as the last word: ``case_no`` and
    ``person_number`` name ids, ``num_rooms`` and ``number_of_children`` name counts."""
    parts = [p for p in name_parts(name) if not p.isdigit()]
    for position, part in enumerate(parts):
        if part in _TRAILING_HINTS and position < len(parts) - 1:
            continue
        if part in ID_NAME_HINTS:
            return True
        for suffix in _ID_SUFFIXES:
            if part.endswith(suffix) and part[: -len(suffix)] in ID_ENTITIES:
                return True
    return False


def identifier(column: pd.Series, name: object = None) -> Identifier | None:
    """The identifier rule (see the module) on one column; None when it is not one."""
    label = str(column.name if name is None else name)
    present = column.dropna()
    n = len(present)
    if n == 0:
        return None
    if pd.api.types.is_numeric_dtype(column.dtype) and not pd.api.types.is_bool_dtype(column.dtype):
        values = _integers(present)
        if values is None:  # fractional numbers are measurements, never identifiers
            return None
        distinct = len(pd.unique(values))
    else:
        values = None
        distinct = _distinct(present)
        if _barely_repeats(distinct, n):
            return Identifier(
                label, True, "text whose values barely repeat: names, ids or free text"
            )
    unique = distinct == n and len(present) == len(column)
    lowered = label.strip().lower()
    if values is not None and unique and n >= ID_MIN_DISTINCT and _sequence(values):
        first, last = int(values.min()), int(values.max())
        gaps = "" if last - first + 1 == n else ", with gaps"
        return Identifier(label, True, f"row numbers {first}..{last}{gaps}")
    if _INDEX_NAME.match(lowered) and distinct > ID_DISTINCT_SHARE * n:
        return Identifier(label, True, "an index column written by pandas, R or a spreadsheet")
    if _R_INDEX_NAME.match(lowered) and values is not None and unique and _sequence(values):
        return Identifier(label, True, "an index column written by R")
    if (
        named_like_identifier(label)
        and distinct >= ID_MIN_DISTINCT
        and distinct >= NAMED_DISTINCT_SHARE * n
    ):
        if unique:
            return Identifier(label, True, "named like an identifier, one value per row")
        return Identifier(
            label,
            False,
            f"named like an identifier, {distinct:,} values over {n:,} rows, "
            f"about {n / distinct:.1f} rows each",
        )
    return None


def find_identifiers(frame: pd.DataFrame, columns: Iterable[str]) -> tuple[Identifier, ...]:
    """The identifiers among ``columns`` of ``frame``, in their order."""
    found = (identifier(frame[c], c) for c in columns)
    return tuple(f for f in found if f is not None)


def text_identifier(present: np.ndarray) -> bool:
    """The rule's text case on a column's non-missing values as strings: at least
    :data:`ID_MIN_DISTINCT` distinct values, on more than :data:`ID_DISTINCT_SHARE` of them."""
    if len(present) < ID_MIN_DISTINCT:
        return False
    return _barely_repeats(len(pd.unique(present)), len(present))


def _barely_repeats(distinct: int, n: int) -> bool:
    return distinct >= ID_MIN_DISTINCT and distinct > ID_DISTINCT_SHARE * n


def _sequence(values: np.ndarray) -> bool:
    """Distinct integers that start at 0 or 1 or rise with the rows, spanning at most
    :data:`SEQUENCE_SPAN` times their count."""
    first, last = int(values.min()), int(values.max())
    if last - first + 1 > SEQUENCE_SPAN * len(values):
        return False
    return first in (0, 1) or bool(np.all(np.diff(values) > 0))


def _integers(present: pd.Series) -> np.ndarray | None:
    """The values as int64 when every one is a whole number, else None."""
    values = present.to_numpy(dtype=float)
    if not np.all(np.abs(values) < 2.0**53) or not np.all(values == np.round(values)):
        return None
    return values.astype(np.int64)


def _distinct(present: pd.Series) -> int:
    """Distinct values of a non-numeric column (as text when they cannot be hashed)."""
    try:
        return int(present.nunique())
    except TypeError:  # lists or other unhashable values
        return int(present.astype(str).nunique())
