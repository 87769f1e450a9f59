"""A first guess of a new table's roles: the target and a sensitive attribute, or a question.

Design notes: docs/howto/upload.md, "The first guess of the roles".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pandas as pd

from fairengine.data.identifiers import find_identifiers, name_parts
from fairengine.data.validate import MAX_GROUPS_PER_COLUMN, MAX_INTEGER_CLASSES, MIN_GROUP_SIZE

#: Name parts of columns that hold a protected attribute, in ranks: race and ethnicity (with the
#: indicator names of US surveys: ``afam``, ``black``, ``nwhite``, ``hispan``...), then sex, then
#: national origin, religion, disability, family status and age. The first hint a column matches
#: ranks it.
SENSITIVE_HINTS: tuple[str, ...] = (
    "race", "racial", "colour", "color", "skin", "ethnic", "ethn", "afam", "afram", "black",
    "white", "nonwhite", "nwhite", "asian", "hispan", "latino", "latina", "minority", "indigen",
    "aborig", "sex", "gender", "female", "male", "woman", "women", "national", "origin",
    "foreign", "immigra", "migrant", "citizen", "religion", "relig", "caste", "disab", "handicap",
    "marital", "pregnan", "orientation", "age", "agegroup", "agecat",
)  # fmt: skip
#: Name parts of columns that hold an outcome to predict: decisions (approve, deny, reject,
#: default), events (recidivism, churn, fraud), generic labels, and amounts earned (regression).
OUTCOME_HINTS: tuple[str, ...] = (
    "outcome", "label", "target", "y", "class", "deny", "denied", "denial", "approve",
    "approved", "approval", "reject", "rejected", "accept", "accepted", "granted", "default",
    "defaulted", "released", "hired", "admit", "admitted", "passed", "survived", "recid",
    "decision", "result", "response", "churn", "fraud", "arrested", "convicted", "ui",
    "income", "wage", "wages", "earnings", "salary",
)  # fmt: skip
#: Most values of a column offered as a sensitive attribute without a name hint.
FEW_VALUES = 10
#: Each value of a two-valued target candidate holds at least this share of the rows.
MIN_VALUE_SHARE = 0.05
#: Shortest hint that also matches the start of a name part.
_PREFIX_LENGTH = 4


@dataclass(frozen=True)
class RoleGuess:
    """The guessed roles and why, in words; a role is None / empty when the guess asks, and its
    candidates (best first) are what the page lists first."""

    target: str | None
    sensitive: tuple[str, ...]
    target_reason: str = ""
    sensitive_reason: str = ""
    target_candidates: tuple[str, ...] = ()
    sensitive_candidates: tuple[str, ...] = ()
    #: The table's identifier columns (never candidates; not features by default).
    identifiers: tuple[str, ...] = ()

    def sentence(self, quote: Callable[[str], str] = repr) -> str:
        """One line saying what was guessed and why, or what to choose among which candidates;
        ``quote`` renders a column name (the dashboard escapes it for Markdown)."""
        parts, asks = [], []
        if self.target is not None:
            parts.append(f"the target {quote(self.target)} ({self.target_reason})")
        else:
            asks.append(_ask("target", self.target_candidates, self.target_reason, quote))
        if self.sensitive:
            names = " and ".join(quote(c) for c in self.sensitive)
            parts.append(f"the sensitive attribute {names} ({self.sensitive_reason})")
        else:
            asks.append(
                _ask("sensitive attribute", self.sensitive_candidates, self.sensitive_reason, quote)
            )
        guessed = f"Guessed {' and '.join(parts)}. " if parts else ""
        return f"{guessed}{''.join(a + ' ' for a in asks)}Change them below."


def _ask(role: str, candidates: Sequence[str], reason: str, quote: Callable[[str], str]) -> str:
    listed = ", ".join(quote(c) for c in candidates[:6]) + (", …" if len(candidates) > 6 else "")
    offered = f" Candidates, listed first: {listed}." if candidates else ""
    return f"Choose the {role}: {reason}.{offered}"


def hint_rank(name: str, hints: Sequence[str]) -> int | None:
    """Position of the first hint ``name`` matches on one of its parts, or None."""
    parts = name_parts(name)
    for rank, hint in enumerate(hints):
        for part in parts:
            if part == hint or (len(hint) >= _PREFIX_LENGTH and part.startswith(hint)):
                return rank
    return None


def guess_roles(frame: pd.DataFrame) -> RoleGuess:
    """Guess the target and one sensitive attribute of ``frame``, or ask (see the module)."""
    columns = [str(c) for c in frame.columns]
    counts = {c: frame[c].value_counts(dropna=True) for c in columns}
    framed = frame.set_axis(columns, axis=1)
    identifiers = tuple(f.column for f in find_identifiers(framed, columns))
    usable = [c for c in columns if c not in identifiers]
    target, target_reason, targets = _guess_target(framed, usable, counts)
    rest = [c for c in usable if c != target]
    sensitive, sensitive_reason, sensitives = _guess_sensitive(rest, counts)
    return RoleGuess(
        target, sensitive, target_reason, sensitive_reason, targets, sensitives, identifiers
    )


def _guess_target(
    frame: pd.DataFrame, columns: list[str], counts: dict[str, pd.Series]
) -> tuple[str | None, str, tuple[str, ...]]:
    """The target, why (or why it asks), and the candidates best first."""
    protected = [c for c in columns if hint_rank(c, SENSITIVE_HINTS) is not None]
    binary = [
        c
        for c in columns
        if c not in protected
        and len(counts[c]) == 2
        and counts[c].min() >= MIN_VALUE_SHARE * counts[c].sum()
    ]
    numeric = [
        c
        for c in columns
        if c not in protected and c not in binary and _many_valued_number(frame[c], counts[c])
    ]

    def score(column: str) -> tuple[int, int, int]:
        rank = hint_rank(column, OUTCOME_HINTS)
        return (
            rank if rank is not None else len(OUTCOME_HINTS),
            0 if column in binary else 1,
            -columns.index(column),
        )

    named = sorted(
        (c for c in binary + numeric if hint_rank(c, OUTCOME_HINTS) is not None), key=score
    )
    candidates = tuple(dict.fromkeys([*named, *sorted(binary, key=score), *numeric]))
    named_binary = [c for c in named if c in binary]
    named_numeric = [c for c in named if c in numeric]
    if len(named_binary) == 1:
        return named_binary[0], "two values, named like an outcome", candidates
    if not named_binary and len(named_numeric) == 1 and len(binary) != 1:
        return named_numeric[0], "a number with many values, named like an outcome", candidates
    if not named and len(binary) == 1:
        two_valued = [c for c in protected if len(counts[c]) == 2]
        return binary[0], _only_binary_reason(two_valued), candidates
    if len(named) > 1:
        return None, f"{', '.join(map(repr, named[:3]))} are all named like an outcome", candidates
    if named:
        return (
            None,
            f"{named[0]!r} is named like an outcome, {binary[0]!r} has two values",
            candidates,
        )
    if binary:
        return None, "several columns have two values and none is named like an outcome", candidates
    return None, "no column has two values, each on at least 5% of the rows", candidates


def _only_binary_reason(protected: list[str]) -> str:
    reason = "the only column with two values that is not a protected attribute or an identifier"
    return reason + (f"; {', '.join(map(repr, protected[:3]))} named like one" if protected else "")


def _many_valued_number(column: pd.Series, counts: pd.Series) -> bool:
    numeric = pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column)
    return numeric and len(counts) > MAX_INTEGER_CLASSES


def _guess_sensitive(
    columns: list[str], counts: dict[str, pd.Series]
) -> tuple[tuple[str, ...], str, tuple[str, ...]]:
    def splittable(column: str) -> bool:
        return int(counts[column].min()) >= MIN_GROUP_SIZE

    named = sorted(
        (
            c
            for c in columns
            if hint_rank(c, SENSITIVE_HINTS) is not None
            and hint_rank(c, OUTCOME_HINTS) is None
            and 2 <= len(counts[c]) <= MAX_GROUPS_PER_COLUMN
        ),
        key=lambda c: (not splittable(c), hint_rank(c, SENSITIVE_HINTS)),
    )
    few = [
        c
        for c in columns
        if c not in named
        and hint_rank(c, OUTCOME_HINTS) is None
        and 2 <= len(counts[c]) <= FEW_VALUES
        and splittable(c)
    ]
    candidates = tuple([*named, *few])
    if named:
        others = f"; also {', '.join(map(repr, named[1:4]))}" if len(named) > 1 else ""
        return (named[0],), f"named like a protected attribute{others}", candidates
    return (), "no column is named like a protected attribute", candidates
