"""What a multiaccurate proxy promises (:attr:`Method.promise`): audited on held-out rows it is
multiaccurate to within α, and the downstream classifier's true-group gap is no larger than with
any simple proxy it was compared with. The simple proxies promise nothing of the kind."""

from __future__ import annotations

import math

from fairengine.methods.base import RunResult


def promise_held(result: RunResult) -> bool:
    """For a multiaccurate proxy: held-out multiaccuracy violation ≤ the α used, and its
    true-group gap ≤ every simple proxy's (check ``proxy_vs_simple_proxies``); True otherwise."""
    knobs = result.knobs
    if knobs["proxy"] not in ("multiaccurate", "multiaccurate_tree"):
        return True
    named = {c.name: c for c in result.checks}
    compared = named.get("proxy_vs_simple_proxies")
    gaps = compared.numbers if compared is not None else {}
    own = gaps.get("true_group_gap", math.nan)
    others = [v for n, v in gaps.items() if n != "true_group_gap"]
    alpha = (result.artifacts.get("summary") or {}).get("alpha_used", knobs["alpha"])
    held_out = result.metrics["test"]["multiaccuracy_violation_held_out"]
    return held_out <= alpha and all(own <= v for v in others)
