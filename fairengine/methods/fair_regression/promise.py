"""What fair regression promises (:attr:`Method.promise`): its constraint's disparity on the
test rows is within the budget ε."""

from __future__ import annotations

from fairengine.methods.base import RunResult


def promise_held(result: RunResult) -> bool:
    """Statistical parity: the KS distance ``sp_ks`` ≤ ε; bounded group loss: the scaled largest
    group loss ≤ ε."""
    knobs = result.knobs
    name = "sp_ks" if knobs["constraint"] == "statistical_parity" else "scaled_max_group_loss"
    return result.metrics["test"][name] <= knobs["eps"]
