"""What a ``multiaccurate_proxy`` run says about its proxy learner: the status of Algorithm 4 or 2
and a message for people, and Algorithm 4 on held-out rows along α."""

from __future__ import annotations

from typing import Any

import numpy as np

from fairengine import metrics


def first_value(values: Any) -> float | None:
    if values is None or not np.isfinite(values).any():
        return None
    return float(np.nanmax(values))


def proxy_status(estimator: Any, knobs: dict[str, Any], z: np.ndarray) -> dict[str, Any]:
    """The proxy learner's outcome for the summary: ``status`` and a ``status_message`` that
    says plainly whether α was reached on the proxy rows and, if not, why; for Algorithm 4 also
    ``alpha_used`` (α, or the lowest reachable when α = 0) and ``alpha_range``, the α on which
    the slider acts on these rows."""
    from fairengine.methods.multiaccurate_proxy.linear import MultiaccurateProxy

    if knobs["proxy"] not in ("multiaccurate", "multiaccurate_tree"):
        return {"status": "n/a", "status_message": "", "proxy_rounds": 0}
    mean = float(z.mean(axis=0).min())
    if isinstance(estimator, MultiaccurateProxy):
        return _algorithm4_status(estimator, knobs, mean)
    # Algorithm 2 runs its T rounds; judge its output by the auditor's last value
    alpha = knobs["alpha"]
    tolerance = alpha * mean
    viol = float(np.nanmax(estimator.trace_[:, -1]))
    rounds = int(estimator.trace_.shape[1])
    if viol <= tolerance:
        status = "converged"
        message = (
            f"Algorithm 2 ran {rounds} rounds: the auditor finds no violation above the "
            f"tolerance α·mean(z) = {tolerance:.4f} on the proxy rows."
        )
    else:
        status = "max_iter"
        message = (
            f"Algorithm 2 did not reach α = {alpha:g} on the proxy rows: after {rounds} rounds "
            f"the auditor still finds an additive violation of {viol:.4f} > tolerance "
            f"{tolerance:.4f} (ratio ≈ {viol / mean:.3f}). More rounds (T) or a larger α."
        )
    return dict(status=status, status_message=message, proxy_rounds=rounds, alpha_used=float(alpha))


def _algorithm4_status(estimator: Any, knobs: dict[str, Any], mean: float) -> dict[str, Any]:
    status, rounds = estimator.status_, int(estimator.n_iter_.max())
    alpha, (low, high) = float(estimator.alpha_), estimator.alpha_range_
    reached = estimator.reached_ratio_
    asked = (
        f"α = {alpha:.3f}, the lowest it reaches on these rows (α = 0 asks for that)"
        if knobs["alpha"] <= 0
        else f"α = {alpha:g}"
    )
    held = estimator.n_validation_
    floor = float(np.nanmax(estimator.lp_floor())) / mean
    span = (
        f"On these rows α acts between {low:.3f} (the lowest the linear proxy reaches in "
        f"T = {knobs['n_iter']} rounds while its violation on {held:,} proxy rows kept out of "
        f"the game also falls) and {high:.3f} (the least-squares start; any larger α returns it)."
        if low < high
        else f"On these rows α has the single value {low:.3f}, for two measured reasons: no "
        f"linear proxy does much better against the error regions the auditor found (their LP "
        f"floor is {floor:.3f}), and no round of the game lowered the violation on the {held:,} "
        "proxy rows kept out of it by more than its sampling error "
        f"(±{estimator.kept_out_error_:.3f}): its in-sample gains do not carry over to other "
        "rows. So least squares on every proxy row is served for every α; α acts on the tree "
        "class (Algorithm 2)."
    )
    if status == "converged":
        message = (
            f"Algorithm 4 certifies {asked} at round {rounds}: against every error region the "
            f"auditor found on the proxy rows, the ratio violation is {reached:.3f}. {span}"
        )
    else:
        message = (
            f"Algorithm 4 did not reach {asked} on the proxy rows: its best proxy in "
            f"T = {knobs['n_iter']} rounds has ratio violation {reached:.3f}. {span} "
        )
        if status == "below_floor":
            message += (
                f"No linear proxy can do better than {floor:.3f} against the error regions the "
                "auditor found (LP floor), so this α is out of reach here: choose α ≥ "
                f"{low:.3f}, give the proxy more rows, or audit a smaller class."
            )
        else:
            message += f"Choose α ≥ {low:.3f}, or more rounds (T) or a larger C may get closer."
    return {
        "status": status,
        "status_message": message,
        "proxy_rounds": rounds,
        "alpha_used": alpha,
        "alpha_range": [float(low), float(high)],
        "lp_floor": floor,
    }


def held_out_along_alpha(estimator: Any, data: dict[str, Any], auditor: str) -> dict[str, Any]:
    """Algorithm 4 on held-out rows ``data`` (the test rows): the multiaccuracy violation of the
    least-squares start (the top of α's range) beside the served proxy's, and the sampling error
    of such a violation, sqrt(mean((z − ẑ)²)/n)/mean(z_k) for the smallest group (a bound on the
    standard error of the ratio violation of any one region), for the check along α."""
    from fairengine.methods.multiaccurate_proxy.auditor import audit

    low, high = estimator.alpha_range_
    start = estimator.at_alpha(high)
    table = audit(data["X"], data["z"], start.predict_proba(data["X"]), data["tasks"], auditor)
    resid = data["z"] - estimator.predict_proba(data["X"])
    means = np.maximum(data["z"].mean(axis=0), 1.0 / max(len(resid), 1))
    error = np.sqrt(np.mean(resid**2, axis=0) / max(len(resid), 1)) / means
    return {
        "held_out_start": metrics.multiaccuracy_violation(table),
        "held_out_error": float(np.max(error)),
        "held_out_rows": len(resid),
        "validation_range": [float(v) for v in estimator.held_out_range_],
        "n_validation_rows": int(estimator.n_validation_),
        "alpha_steps": int(estimator.n_alpha_steps_),
    }
