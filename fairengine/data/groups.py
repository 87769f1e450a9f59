"""Group membership from one or several sensitive columns."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

#: Separator between the values of several sensitive columns in an intersectional group name.
GROUP_SEPARATOR = " & "
#: Name of the group that collects groups smaller than the minimum size when merging is asked for.
MERGED_GROUP = "other (merged)"


def group_keys(
    frame: pd.DataFrame, sensitive: Sequence[str], merged: Sequence[str] = ()
) -> pd.Series:
    """Group name of each row: the sensitive values joined by :data:`GROUP_SEPARATOR`.

    With several sensitive columns, a value that contains the separator (or starts with a double
    quote) is quoted CSV-style (``"a & b"``, inner quotes doubled), so distinct combinations
    always get distinct names; other values are unchanged. Names listed in ``merged`` are
    replaced by :data:`MERGED_GROUP`.
    """
    parts = [frame[c].astype(str).str.strip() for c in sensitive]
    if len(parts) > 1:
        parts = [_quoted(part) for part in parts]
    keys = parts[0]
    for part in parts[1:]:
        keys = keys + GROUP_SEPARATOR + part
    if len(merged):
        keys = keys.where(~keys.isin(list(merged)), MERGED_GROUP)
    return keys.rename("group")


def group_label(sensitive: Sequence[str], name: str) -> str:
    """A group's name for people: each sensitive column with its value, ``afam = yes`` (several
    columns joined by :data:`GROUP_SEPARATOR`: ``sex = F & race = B``). The merged group, and a
    name whose values cannot be told apart (a quoted value holding the separator), keep their
    name."""
    values = [] if name == MERGED_GROUP else name.split(GROUP_SEPARATOR)
    if len(values) != len(sensitive):
        return name
    return GROUP_SEPARATOR.join(
        f"{col} = {value}" for col, value in zip(sensitive, values, strict=True)
    )


def _quoted(part: pd.Series) -> pd.Series:
    ambiguous = part.str.contains(GROUP_SEPARATOR, regex=False) | part.str.startswith('"')
    if not ambiguous.any():
        return part
    return part.where(~ambiguous, '"' + part.str.replace('"', '""', regex=False) + '"')
