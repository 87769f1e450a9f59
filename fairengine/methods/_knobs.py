"""Knobs shared by several method declarations (they import no learner)."""

from __future__ import annotations

from fairengine.methods.base import Knob

#: Regularisation knob shared by the methods that fit a logistic regression.
C_KNOB = Knob(
    "C",
    1.0,
    1e-3,
    1e3,
    None,
    log=True,
    label="Inverse regularisation C",
    help="Inverse L2 regularisation strength.",
)
