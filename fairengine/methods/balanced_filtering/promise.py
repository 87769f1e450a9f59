"""What a balanced filter promises (:attr:`Method.promise`): the filtered test sample is
balanced to within the stopping target β, and no more unbalanced than the training sample
beyond the allowance its checks grant."""

from __future__ import annotations

from fairengine.methods.balanced_filtering.checks import GAP_ALLOWANCE
from fairengine.methods.base import RunResult


def promise_held(result: RunResult) -> bool:
    """Test imbalance ≤ β (``beta_stop``) plus the sampling allowance of the kept test rows (the
    held-out check's; 0 without it) and test − train imbalance ≤ the gap allowance."""
    test, train = result.metrics["test"], result.metrics["train"]
    gap = test["imbalance"] - train["imbalance"]
    check = next((c for c in result.checks if c.name == "held_out_imbalance"), None)
    allowance = 0.0 if check is None else float(check.numbers.get("allowance", 0.0))
    return test["imbalance"] <= result.knobs["beta_stop"] + allowance and gap <= GAP_ALLOWANCE
