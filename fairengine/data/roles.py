"""A first guess of a new table's roles: a two-valued target and a sensitive attribute.

The guess only opens a table on a task that can run; the user checks and changes it. The rule:

* **Target**: a column with exactly two values (the methods need a binary target), never one
  named like a protected attribute. A column named like an outcome (:data:`OUTCOME_HINTS`) is
  preferred, then the last two-valued column (tables usually put the outcome last). A count or
  score with many values is never guessed; without a two-valued column there is no guess.
* **Sensitive attribute**: a column named like a protected attribute
  (:data:`SENSITIVE_HINTS`, earlier hints first) with 2 to :data:`MAX_GROUPS_PER_COLUMN` values;
  else a column with a few values (2 to :data:`FEW_VALUES`) whose groups all have at least
  :data:`MIN_GROUP_SIZE` rows, said to be a guess by size only. Columns whose groups are all big
  enough to split are preferred.

Names are matched on their parts, case-insensitively: ``Skin_Colour``, ``skinColour`` and
``skin colour`` all have the parts ``skin`` and ``colour``. A hint of four letters or more also
matches the start of a part (``ethnic`` matches ``ethnicity``, ``recid`` matches
``recidivism``); a shorter hint matches a whole part only (``age`` matches ``age_group`` but not
``agent`` or ``page``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pandas as pd

from fairengine.data.validate import MAX_GROUPS_PER_COLUMN, MIN_GROUP_SIZE

#: Name parts of columns that hold a protected attribute, most specific first: the first hint
#: that a column matches ranks it (race and colour before sex, sex before age).
SENSITIVE_HINTS: tuple[str, ...] = (
    "race", "colour", "color", "skin", "ethnic", "sex", "gender", "national", "origin",
    "citizen", "immigra", "religion", "relig", "caste", "disab", "handicap", "marital",
    "pregnan", "orientation", "age", "agegroup", "agecat",
)  # fmt: skip
#: Name parts of columns that hold an outcome to predict.
OUTCOME_HINTS: tuple[str, ...] = (
    "released", "outcome", "label", "target", "y", "class", "default", "approved", "hired",
    "income", "recid", "admit", "admitted", "accepted", "granted", "passed", "survived",
    "decision", "result", "response", "churn", "fraud", "arrested", "convicted",
)  # fmt: skip
#: Most values of a column guessed as sensitive without a name hint.
FEW_VALUES = 10
#: Shortest hint that also matches the start of a name part.
_PREFIX_LENGTH = 4


@dataclass(frozen=True)
class RoleGuess:
    """The guessed roles and why, in words; ``target`` None when no column fits."""

    target: str | None
    sensitive: tuple[str, ...]
    target_reason: str = ""
    sensitive_reason: str = ""

    def sentence(self, quote: Callable[[str], str] = repr) -> str:
        """One line saying what was guessed and why; ``quote`` renders a column name (the
        dashboard escapes it for Markdown)."""
        parts = []
        if self.target is not None:
            parts.append(f"the target {quote(self.target)} ({self.target_reason})")
        if self.sensitive:
            names = " and ".join(quote(c) for c in self.sensitive)
            parts.append(f"the sensitive attribute {names} ({self.sensitive_reason})")
        if not parts:
            return (
                "No column looks like a two-valued target or a sensitive attribute: choose "
                "them below."
            )
        missing = ""
        if self.target is None:
            missing = " No column has exactly two values to predict: choose the target."
        elif not self.sensitive:
            missing = " No column looks like a sensitive attribute: choose one."
        return f"Guessed {' and '.join(parts)}.{missing} Change them below."


def name_parts(name: str) -> tuple[str, ...]:
    """The lower-case parts of a column name, split at non-letters and camelCase humps."""
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", str(name))
    return tuple(p for p in re.split(r"[^0-9a-zA-Z]+|(?<=\D)(?=\d)", spaced.lower()) if p)


def hint_rank(name: str, hints: Sequence[str]) -> int | None:
    """Position of the first hint ``name`` matches on one of its parts, or None."""
    parts = name_parts(name)
    for rank, hint in enumerate(hints):
        for part in parts:
            if part == hint or (len(hint) >= _PREFIX_LENGTH and part.startswith(hint)):
                return rank
    return None


def guess_roles(frame: pd.DataFrame) -> RoleGuess:
    """Guess a two-valued target and one sensitive attribute of ``frame`` (see the module)."""
    columns = [str(c) for c in frame.columns]
    counts = {c: frame[c].value_counts(dropna=True) for c in columns}
    target, target_reason = _guess_target(columns, counts)
    sensitive, sensitive_reason = _guess_sensitive([c for c in columns if c != target], counts)
    return RoleGuess(target, sensitive, target_reason, sensitive_reason)


def _guess_target(columns: list[str], counts: dict[str, pd.Series]) -> tuple[str | None, str]:
    binary = [c for c in columns if len(counts[c]) == 2 and hint_rank(c, SENSITIVE_HINTS) is None]
    if not binary:
        return None, ""
    named = [c for c in binary if hint_rank(c, OUTCOME_HINTS) is not None]
    if named:
        best = min(named, key=lambda c: (hint_rank(c, OUTCOME_HINTS), -columns.index(c)))
        return best, "two values, named like an outcome"
    return binary[-1], "the last column with two values"


def _guess_sensitive(
    columns: list[str], counts: dict[str, pd.Series]
) -> tuple[tuple[str, ...], str]:
    def splittable(column: str) -> bool:
        return int(counts[column].min()) >= MIN_GROUP_SIZE

    named = [
        c
        for c in columns
        if hint_rank(c, SENSITIVE_HINTS) is not None
        and 2 <= len(counts[c]) <= MAX_GROUPS_PER_COLUMN
    ]
    if named:
        best = min(named, key=lambda c: (not splittable(c), hint_rank(c, SENSITIVE_HINTS)))
        return (best,), "named like a protected attribute"
    few = [c for c in columns if 2 <= len(counts[c]) <= FEW_VALUES and splittable(c)]
    if few:
        return (few[0],), (
            f"{len(counts[few[0]])} values; not named like a protected attribute, so check it"
        )
    return (), ""
