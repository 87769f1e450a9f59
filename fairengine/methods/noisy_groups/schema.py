"""The noisy-groups model's file state: a linear classifier and the knobs it was fitted with.

Checked by :func:`fairengine.export.files.validate_state` before the model is built
(the vocabulary: :mod:`fairengine.models.schema_rules`)."""

from __future__ import annotations

from fairengine.models.schema_rules import (
    NUM,
    SCALAR,
    STR,
    Schema,
    obj,
    optional,
)
from fairengine.models.schemas import ENCODER, LINEAR, encoder_dims

SCHEMA = Schema(
    obj(
        {"encoder": ENCODER, "intercept": NUM},
        {"knobs": optional(obj({}, extra=SCALAR)), "group_column": optional(STR)},
    ),
    LINEAR,
    dims=encoder_dims,
)
