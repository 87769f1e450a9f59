"""What fair regression promises (:attr:`Method.promise`): its constraint's disparity on the
test rows is within the budget ε plus the sampling allowance of the test rows."""

from __future__ import annotations

import math

from fairengine.methods.base import RunResult


def promise_held(result: RunResult) -> bool:
    """Statistical parity: the KS distance ``sp_ks`` ≤ ε + allowance; bounded group loss: the
    scaled largest group loss ≤ ε + allowance (the allowance the check derived from the test
    rows, 0 when the result carries no check)."""
    knobs = result.knobs
    name = "sp_ks" if knobs["constraint"] == "statistical_parity" else "scaled_max_group_loss"
    check = next((c for c in result.checks if c.name == "held_out_disparity"), None)
    allowance = 0.0 if check is None else float(check.numbers.get("allowance", 0.0))
    allowance = allowance if math.isfinite(allowance) else 0.0
    return result.metrics["test"][name] <= knobs["eps"] + allowance
