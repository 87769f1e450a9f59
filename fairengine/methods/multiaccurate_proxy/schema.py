"""The multiaccurate proxy model's file state: a mixture of linear downstream classifiers and
its proxy (linear coefficients or packed regression trees).

Checked by :func:`fairengine.export.files.validate_state` before the model is built
(the vocabulary: :mod:`fairengine.models.schema_rules`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from fairengine.models.schema_rules import (
    FINITE,
    STR,
    Dims,
    Schema,
    arr,
    invalid,
    list_of,
)
from fairengine.models.schemas import MIXTURE, encoder_dims, with_encoder


def _packed_trees(state: Any, arrays: Mapping[str, np.ndarray], dims: Dims) -> None:
    """The multiaccurate proxy's regression trees (K, T, 5, size): rows feature, threshold,
    left, right, value of each tree, each a tree of the shared codec."""
    packed = arrays.get("proxy_trees")
    if packed is None or packed.size == 0:
        return
    from fairengine.models import trees

    k, t, _, size = packed.shape
    try:
        if not np.all(np.isfinite(packed)):
            raise ValueError("values that are not finite numbers")
        for tree in packed.reshape(k * t, 5, size):
            node = {"feature": tree[0], "threshold": tree[1], "left": tree[2], "right": tree[3]}
            trees.check_arrays({**node, "value": tree[4]}, dims["n_features"])
    except ValueError as exc:
        raise invalid(f"the arrays proxy_trees do not fit together ({exc})") from None


SCHEMA = Schema(
    with_encoder(proxy=STR, group_names=list_of(STR)),
    {**MIXTURE, "proxy_coef": arr("fiu", "n_proxies", "n_features_1", rules=(FINITE,))},
    {"proxy_trees": arr("fiu", "n_proxies", "n_trees", 5, "size")},
    dims=encoder_dims,
    checks=(_packed_trees,),
)
