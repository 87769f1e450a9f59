"""The protected attribute as every estimator's ``fit`` takes it: ``sensitive_features=``.

Design notes (metadata routing, older names): docs/architecture.md, "The protected attribute in
fit".
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.utils.metadata_routing import UNUSED


def sensitive_request(*aliases: str) -> dict[str, Any]:
    """An estimator's ``__metadata_request__fit``: ``sensitive_features`` requested by default,
    its older names for the protected attribute (``aliases``) never routed."""
    return {"sensitive_features": True, **dict.fromkeys(aliases, UNUSED)}


def resolve_sensitive(
    sensitive_features: Any, value: Any, alias: str, *, required: bool = True, where: str = ""
) -> Any:
    """The protected attribute given as ``sensitive_features`` or under the older name
    ``alias`` (its value ``value``), whichever was given; ``where`` describes the older place
    in the error when it is not an argument (e.g. a column of the rows).

    Raises
    ------
    ValueError
        When both are given with different values.
    TypeError
        When neither is given and ``required``.
    """
    if sensitive_features is None:
        if value is None and required:
            raise TypeError(
                "fit needs the protected attribute: pass sensitive_features= with one value per "
                "row of X."
            )
        return value
    if value is not None and not _same_values(sensitive_features, value):
        raise ValueError(
            f"fit got the protected attribute twice with different values: as "
            f"sensitive_features= and {where or f'as {alias}= (its older name)'}. Pass it once, "
            "as sensitive_features=."
        )
    return sensitive_features


def _same_values(a: Any, b: Any) -> bool:
    """Whether two array-likes hold the same values in the same shape (missing equal missing)."""
    left, right = np.asarray(a), np.asarray(b)
    if left.shape != right.shape:
        return False
    try:
        return bool(np.array_equal(left, right, equal_nan=True))
    except TypeError:  # object or string values: NaN-aware comparison is not defined for them
        return bool(np.array_equal(left.astype(str), right.astype(str)))
