"""What max-entropy debiasing promises (:attr:`Method.promise`): the generated data's rates
reach their targets (:func:`~fairengine.methods.maxent.checks.rates_reach_targets`)."""

from __future__ import annotations

from fairengine.methods.base import RunResult
from fairengine.methods.maxent.checks import rates_reach_targets


def promise_held(result: RunResult) -> bool:
    """The test rates reach the targets the knobs set."""
    return rates_reach_targets(result.metrics["test"], result.knobs)
