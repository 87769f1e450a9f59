"""What a multiaccurate proxy promises (:attr:`Method.promise`): audited on held-out rows it is
multiaccurate to within α, and the downstream classifier's true-group gap is no larger than with
the thresholded classification proxy (the paper's claim). The simple proxies promise nothing of
the kind."""

from __future__ import annotations

from fairengine.methods.base import RunResult


def promise_held(result: RunResult) -> bool:
    """For a multiaccurate proxy: held-out multiaccuracy violation ≤ the α used plus its
    sampling allowance, and its true-group gap not shown worse than the thresholded proxy's
    (the lower end of the paired interval of check ``proxy_vs_simple_proxies`` ≤ 0); True
    otherwise."""
    knobs = result.knobs
    if knobs["proxy"] not in ("multiaccurate", "multiaccurate_tree"):
        return True
    named = {c.name: c for c in result.checks}
    compared = named.get("proxy_vs_simple_proxies")
    gaps = compared.numbers if compared is not None else {}
    worse = [v for n, v in gaps.items() if n.endswith("_worse_by_low")]
    held = named.get("held_out_multiaccuracy")
    allowance = 0.0 if held is None else float(held.numbers.get("allowance", 0.0))
    alpha = (result.artifacts.get("summary") or {}).get("alpha_used", knobs["alpha"])
    held_out = result.metrics["test"]["multiaccuracy_violation_held_out"]
    return held_out <= alpha + allowance and all(v <= 0 for v in worse)
