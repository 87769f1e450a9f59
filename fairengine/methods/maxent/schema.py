"""The max-entropy model's file state: its domain, dual solution, stored rows and classifier,
bounded so that rebuilding it stays small.

Checked by :func:`fairengine.export.files.validate_state` before the model is built
(the vocabulary: :mod:`fairengine.models.schema_rules`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from fairengine.models.schema_rules import (
    FINITE,
    NON_NEGATIVE,
    NUM,
    NUMERIC,
    PROBABILITY,
    STR,
    WEIGHTS,
    Dims,
    Group,
    Schema,
    arr,
    fail,
    invalid,
    list_of,
    nonneg_int,
    num_within,
    obj,
    one_of,
    tree_nodes,
    with_prefix,
    within,
)
from fairengine.models.schemas import with_encoder

#: Largest domain a max-entropy model file may describe: coordinates d (rebuilding the model
#: holds a d x d table), cells of the padded (features x largest level count) layout, and cells of
#: the reference-coded stored rows (rows x d bytes). Real domains are far smaller (at most ~9
#: levels per categorical column).
MAX_MAXENT_COORDINATES = 8192
MAX_MAXENT_LEVEL_CELLS = 1 << 24
MAX_MAXENT_ROW_CELLS = 1 << 28


def _domain(value: Any, path: str) -> None:
    feature = obj(
        {
            "name": STR,
            "role": one_of("feature", "label", "protected"),
            "levels": list_of(STR),
            "edges": list_of(NUM),
        }
    )
    obj({"features": list_of(feature)})(value, path)
    features = value["features"]
    for i, f in enumerate(features):
        edges, n = f["edges"], len(f["levels"])
        where = f"{path}.features[{i}]"
        if n < 1 or (edges and (len(edges) != n - 1 or np.any(np.diff(edges) <= 0))):
            fail(where, "levels and increasing inner bin edges (one fewer)", f)
        if f["role"] != "feature" and n != 2:
            fail(where, "a binary label or protected attribute", f)
    roles = [f["role"] for f in features]
    if roles.count("label") != 1 or roles.count("protected") != 1:
        fail(f"{path}.features", "one label and one protected attribute", roles)
    sizes = [len(f["levels"]) for f in features]
    d = sum(sizes) - len(sizes)
    if d > MAX_MAXENT_COORDINATES or len(sizes) * max(sizes) > MAX_MAXENT_LEVEL_CELLS:
        fail(path, f"at most {MAX_MAXENT_COORDINATES:,} coordinates", d)


def _maxent_dims(state: Any) -> Dims:
    features = state["domain"]["features"]
    sizes = [len(f["levels"]) for f in features]
    model = [len(f["levels"]) - 1 for f in features if f["role"] == "feature"]
    return {"d": sum(sizes) - len(sizes), "d_model": sum(model), "n_domain_features": len(sizes)}


def _maxent_rows(state: Any, arrays: Mapping[str, np.ndarray], dims: Dims) -> None:
    """Each stored row's codes are levels of their feature; the coded rows fit the limit."""
    rows = arrays["rows"]
    sizes = np.array([len(f["levels"]) for f in state["domain"]["features"]], dtype=np.int64)
    if rows.size and (rows.min() < 0 or np.any(rows.max(axis=0) >= sizes)):
        raise invalid("array 'rows' holds codes outside their feature's levels")
    if len(rows) * dims["d"] > MAX_MAXENT_ROW_CELLS:
        raise invalid(
            f"array 'rows' codes {len(rows) * dims['d']:,} cells; the limit is "
            f"{MAX_MAXENT_ROW_CELLS:,}"
        )


_MAXENT_TREE = with_prefix(
    tree_nodes("d_model", prob=arr("fiu", "n_nodes", rules=(PROBABILITY,))), "clf_"
)
_MAXENT_CLASSIFIERS = {
    "tree": _MAXENT_TREE,
    "small_tree": _MAXENT_TREE,
    "logistic": Group("clf_", {"coef": arr("fiu", "d_model", rules=(FINITE,)),
                               "intercept": arr("fiu", 1, rules=(FINITE,))}),
    "gnb": Group("clf_", {"mean": arr("fiu", 2, "d_model", rules=(FINITE,)),
                          "var": arr("fiu", 2, "d_model", rules=(within(1e-300, np.inf),)),
                          "log_prior": arr("fiu", 2, rules=(within(-np.inf, 0.0), FINITE))}),
    "constant": Group("clf_", {"constant": arr("fiu", 1, rules=(PROBABILITY,))}),
}  # fmt: skip


def _maxent_groups(state: Any, arrays: Mapping[str, np.ndarray]) -> list[Group]:
    names = state["classifier_arrays"]
    kind = "constant" if names == ["constant"] else state["classifier"]
    group = _MAXENT_CLASSIFIERS.get(kind)
    if group is None or sorted(names) != sorted(group.specs):
        raise invalid(f"classifier {kind!r} with arrays {names}"[:200])
    return [group]


SCHEMA = Schema(
    with_encoder(
        domain=_domain,
        C=num_within(0.0, 1.0),
        tau=NUM,
        prior=STR,
        n_bins=nonneg_int,
        n_iter=nonneg_int,
        classifier=one_of(*sorted(_MAXENT_CLASSIFIERS.keys() - {"constant"})),
        classifier_arrays=list_of(STR),
    ),
    {
        "lambda": arr("fiu", "d", rules=(FINITE,)),
        "theta": arr("fiu", "d", rules=(PROBABILITY,)),
        "rows": arr("iu", "n_rows", "n_domain_features"),
        "weights": arr("fiu", "n_rows", rules=WEIGHTS),
        "counts": arr("fiu", "n_rows", rules=(NON_NEGATIVE,)),
    },
    patterns={r"clf_[A-Za-z0-9_]+": NUMERIC},
    dims=_maxent_dims,
    groups=_maxent_groups,
    checks=(_maxent_rows,),
)
