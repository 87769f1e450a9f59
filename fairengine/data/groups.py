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

    Names listed in ``merged`` are replaced by :data:`MERGED_GROUP`.
    """
    parts = [frame[c].astype(str).str.strip() for c in sensitive]
    keys = parts[0]
    for part in parts[1:]:
        keys = keys + GROUP_SEPARATOR + part
    if len(merged):
        keys = keys.where(~keys.isin(list(merged)), MERGED_GROUP)
    return keys.rename("group")
