"""The fair regression model's file state: its mixture's components (linear, boosted trees or
a stored estimator) and their weights.

Checked by :func:`fairengine.export.files.validate_state` before the model is built
(the vocabulary: :mod:`fairengine.models.schema_rules`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from fairengine.models.schema_rules import (
    BYTES,
    FINITE,
    INT,
    NUM,
    NUMERIC,
    STR,
    WEIGHTS,
    Dims,
    Group,
    Schema,
    arr,
    bounded_int,
    either,
    fail,
    invalid,
    list_of,
    obj,
    one_of,
    optional,
    tree_nodes,
)
from fairengine.models.schemas import encoder_dims, with_encoder

_COMPONENTS = {
    "linear": {
        "coef": arr("fiu", "n_features", rules=(FINITE,)),
        "intercept": arr("fiu", 1, rules=(FINITE,)),
    },
    "trees": {
        **tree_nodes("n_features").specs,
        "roots": arr("iu", "n_trees"),
        "value": arr("fiu", "n_nodes", rules=(FINITE,)),
        "learning_rate": arr("fiu", 1, rules=(FINITE,)),
        "offset": arr("fiu", 1, rules=(FINITE,)),
    },
    "estimator": {},
}


def _regression_groups(state: Any, arrays: Mapping[str, np.ndarray]) -> list[Group]:
    groups = []
    for t, component in enumerate(state["components"]):
        kind, names = component["kind"], component["arrays"]
        specs = _COMPONENTS[kind]
        if sorted(names) != sorted(specs):
            raise invalid(f"component {t} of kind {kind!r} lists arrays {names}"[:200])
        if kind == "estimator":
            specs = {"skops": BYTES}
        checks = tree_nodes("n_features").checks if kind == "trees" else ()
        groups.append(Group(f"f{t}_", specs, checks))
    stray = [n for n in arrays if re.fullmatch(r"f\d+_.*", n)]
    stray = [n for n in stray if int(n[1 : n.index("_")]) >= len(groups)]
    if stray:
        raise invalid(f"arrays {', '.join(stray[:5])} belong to no component")
    return groups


def _regression_checks(state: Any, arrays: Mapping[str, np.ndarray], dims: Dims) -> None:
    if state["y_min"] > state["y_max"]:
        fail("state.y_min", "at most y_max", state["y_min"])
    if state["base_estimator"] is None and "base_estimator_skops" not in arrays:
        raise invalid("the stored base estimator is missing")


SCHEMA = Schema(
    with_encoder(
        constraint=one_of("statistical_parity", "bounded_group_loss"),
        eps=either(NUM, list_of(NUM)),
        loss=STR,
        n_levels=bounded_int(1, 100_000),
        oracle=STR,
        base_estimator=optional(STR),
        max_iter=INT,
        random_state=optional(INT),
        mode=STR,
        y_min=NUM,
        y_max=NUM,
        group_labels=list_of(STR),
        components=list_of(
            obj(
                {
                    "kind": one_of("linear", "trees", "estimator"),
                    "link": one_of("identity", "logit"),
                    "arrays": list_of(STR),
                }
            )
        ),
    ),
    {"weights": arr("fiu", "n_components", rules=WEIGHTS)},
    {"base_estimator_skops": BYTES},
    patterns={r"f\d{1,6}_skops": BYTES, r"f\d{1,6}_[A-Za-z0-9_]+": NUMERIC},
    dims=lambda state: {**encoder_dims(state), "n_components": len(state["components"])},
    groups=_regression_groups,
    checks=(_regression_checks,),
)
