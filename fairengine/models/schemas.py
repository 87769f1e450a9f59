"""The state schema of every model type, checked before a model is built from a file.

Design notes: docs/howto/export.md, "State schemas".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from fairengine.models import schema_rules
from fairengine.models.schema_rules import NUM, PROBABILITY, STR, Schema, arr, list_of, obj, within


def ENCODER(value: Any, path: str) -> None:
    """A fitted :class:`~fairengine.data.encoding.FeatureEncoder`'s state."""
    obj(
        {
            "max_categories": schema_rules.INT,
            "scale": schema_rules.BOOL,
            "columns": list_of(STR),
            "numeric": list_of(STR),
            "categorical": list_of(schema_rules.pair(STR, list_of(STR))),
            "median": list_of(NUM),
            "center": list_of(NUM),
            "scale_values": list_of(NUM),
        },
        {"dropped": list_of(STR)},
    )(value, path)
    columns = set(value["columns"])
    n = len(value["numeric"])
    if not (len(value["median"]) == len(value["center"]) == len(value["scale_values"]) == n):
        schema_rules.fail(f"{path}.median", f"{n} values (one per numeric column)", value["median"])
    if any(s == 0 for s in value["scale_values"]):
        schema_rules.fail(f"{path}.scale_values", "non-zero", value["scale_values"])
    named = [*value["numeric"], *(c for c, _ in value["categorical"])]
    if len(set(named)) != len(named) or not set(named) <= columns:
        schema_rules.fail(f"{path}.numeric", "distinct columns listed in columns", named)


def encoder_dims(state: Mapping[str, Any]) -> schema_rules.Dims:
    """``n_features``, the width the encoder's ``transform`` outputs (one per numeric column and,
    per categorical column, one per kept category plus one for "other"), and ``n_features_1``
    (one more, with an intercept)."""
    encoder = state["encoder"]
    width = len(encoder["numeric"]) + sum(len(cats) + 1 for _, cats in encoder["categorical"])
    return {"n_features": width, "n_features_1": width + 1}


def with_encoder(**keys: schema_rules.Check) -> schema_rules.Check:
    """A state of the encoder and ``keys`` (each with its check), nothing else."""
    return obj({"encoder": ENCODER, **keys})


# --- linear models and mixtures of them

#: A linear model's arrays (its intercept is in the state).
LINEAR = {"coef": arr("fiu", "n_features", rules=(schema_rules.FINITE,))}
#: A mixture of linear models' arrays.
MIXTURE = {
    "coefs": arr("fiu", "n_components", "n_features", rules=(schema_rules.FINITE,)),
    "intercepts": arr("fiu", "n_components", rules=(schema_rules.FINITE,)),
    "weights": arr("fiu", "n_components", rules=schema_rules.WEIGHTS),
}


def _signs(a: np.ndarray, dims: Mapping[str, int]) -> str | None:
    return None if np.all(np.isin(a, (-1.0, 1.0))) else "values other than -1 and 1"


_GROUP_RULE = {
    **{f"rule_{k}": arr("fiu", "n_groups", rules=(PROBABILITY,)) for k in ("p0", "p1")},
    **{f"rule_{k}": arr("fiu", "n_groups", rules=(_signs,)) for k in ("op0", "op1")},
    **{f"rule_{k}": arr("fiu", "n_groups", rules=(within(-1.0, 2.0),)) for k in ("t0", "t1")},
    **{f"rule_{k}": arr("fiu", "n_groups", rules=(PROBABILITY,)) for k in ("p_ignore", "constant")},
}

# --- the engine's own model types (fairengine.models)

LINEAR_CLASSIFIER = Schema(with_encoder(intercept=NUM), LINEAR, dims=encoder_dims)
RANDOMIZED_CLASSIFIER = Schema(with_encoder(), MIXTURE, dims=encoder_dims)
GROUP_THRESHOLD_CLASSIFIER = Schema(
    with_encoder(
        intercept=NUM,
        sensitive=list_of(STR),
        group_names=list_of(STR),
        group_values=list_of(list_of(STR)),
        merged_groups=list_of(STR),
    ),
    {**LINEAR, **_GROUP_RULE},
    dims=lambda state: {**encoder_dims(state), "n_groups": len(state["group_names"])},
)


def probe_frame(encoder_state: Mapping[str, Any]) -> Any:
    """One synthetic row for the encoder's columns: numeric medians, the first kept category,
    missing elsewhere (used to check that a rebuilt model predicts at all)."""
    import pandas as pd

    numeric = dict(zip(encoder_state["numeric"], encoder_state["median"], strict=True))
    categorical = {c: (cats[0] if cats else None) for c, cats in encoder_state["categorical"]}
    row = {c: numeric.get(c, categorical.get(c)) for c in encoder_state["columns"]}
    frame = pd.DataFrame([row])
    for c in encoder_state["columns"]:
        if c not in numeric:
            frame[c] = frame[c].astype(object)
    return frame
