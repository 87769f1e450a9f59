"""The multiaccurate-proxy method's evidence: its promises checked on the held-out test rows
(held-out multiaccuracy, the paper's claim against the thresholded and regression proxies, the
convergence of both learners); what each check measures: ``docs/methods/multiaccurate_proxy.md``."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from fairengine import metrics
from fairengine.lru import LRU
from fairengine.methods.evidence import Baselines, Check, Evidence, check_allowance, qualify_status

if TYPE_CHECKING:
    from fairengine.data import Task

#: The simpler proxies the paper's claim is compared against.
COMPARED = ("thresholded", "regression")
_COMPARISONS: LRU[dict[str, dict[str, Any]]] = LRU(8)


def extra_metrics(result: Any, task: Task, train: Task, pred: np.ndarray) -> dict[str, float]:
    """The true-group gap of ``pred`` on ``task`` with the run's grouping and constraint."""
    from fairengine.methods.multiaccurate_proxy.pipeline import group_onehot

    onehot, _ = group_onehot(train, result.knobs["grouping"])
    constraint = result.knobs["constraint"]
    return {"true_group_gap": metrics.true_group_gap(onehot[task.groups], task.y, pred, constraint)}


def held_out_multiaccuracy(result: Any, test: Task) -> Check | None:
    """The held-out audit of ẑ against α plus its sampling allowance: two sampling errors of the
    held-out violation (the run's estimate, else at most 1/√n per error for terms in [−1, 1]).
    Ok within, fail beyond: Algorithm 4 certifies α in sample only."""
    if result.knobs["proxy"] not in ("multiaccurate", "multiaccurate_tree"):
        return None
    test_value = result.metrics.get("test", {}).get("multiaccuracy_violation_held_out")
    if test_value is None or not math.isfinite(float(test_value)):
        return None
    summary = result.artifacts.get("summary") or {}
    alpha = float(summary.get("alpha_used", result.knobs["alpha"]))
    error = float(summary.get("held_out_error", 1.0 / math.sqrt(max(len(test.y), 1))))
    allowance, value = 2 * error, float(test_value)
    in_sample = float(result.metrics["test"].get("multiaccuracy_violation_in_sample", math.nan))
    numbers = {"held_out": value, "in_sample": in_sample, "alpha": alpha, "allowance": allowance}
    level = "ok" if value <= alpha + allowance else "fail"
    if level == "ok":
        words = (
            f"The proxy is multiaccurate on the test rows too: violation {value:.3f} ≤ "
            f"α = {alpha:.3g} plus the sampling allowance {allowance:.3f} (two sampling "
            "errors of the held-out violation)."
        )
    else:
        words = (
            f"On the test rows the proxy's multiaccuracy violation is {value:.3f}, above α = "
            f"{alpha:.3g} plus the sampling allowance {allowance:.3f} (on its own rows "
            f"{in_sample:.3f}): the guarantee holds in sample only."
        )
    return Check("held_out_multiaccuracy", level, words, numbers)


def held_out_along_alpha(result: Any) -> Check | None:
    """Algorithm 4: does the served α's proxy do no worse on the test rows than the
    least-squares start (the top of α's range), within the sampling error of the held-out
    violation, and is α's range wide enough to matter out of sample?"""
    summary = result.artifacts.get("summary") or {}
    if result.knobs["proxy"] != "multiaccurate" or "held_out_start" not in summary:
        return None
    served = result.metrics.get("test", {}).get("multiaccuracy_violation_held_out")
    if served is None or not math.isfinite(float(served)):
        return None
    start, error = float(summary["held_out_start"]), float(summary["held_out_error"])
    low, high = (float(v) for v in summary["alpha_range"])
    steps = float(summary.get("alpha_steps", 0))
    numbers = {"held_out": float(served), "held_out_start": start, "sampling_error": error}
    numbers.update(alpha_low=low, alpha_high=high, alpha_steps=steps)
    served_words = (
        f"On the {int(summary['held_out_rows']):,} test rows the proxy's multiaccuracy violation "
        f"is {float(served):.3f} at α = {float(summary['alpha_used']):.3f} and {start:.3f} at "
        f"the least-squares start (α = {high:.3f}); its sampling error is about ±{error:.3f}."
    )
    level = "warn" if float(served) > start + 2 * error else "ok"
    if level == "warn":
        words = (
            "Here the smaller α gives a larger held-out violation, by more than twice that "
            "error: the game's in-sample gains did not carry over to these rows. Prefer a "
            "larger α or more proxy rows."
        )
    elif high <= low:  # a property of the rows, the same for every α: context, not a warning
        words = (
            "α has a single value on these rows: no round of the game beat the least-squares "
            "proxy on the proxy rows kept out of it by more than their sampling error, so no "
            "setting of α would change the proxy out of sample, and the least-squares proxy is "
            "served."
        )
    elif high - low < 2 * error:
        words = (
            f"α's whole range ({low:.3f}–{high:.3f}) is narrower than twice that error, so no "
            "setting of α changes the proxy measurably out of sample."
        )
    else:
        words = "The smaller α does no worse out of sample."
    return Check("held_out_along_alpha", level, f"{served_words} {words}", numbers)


def compared_scores(result: Any, train: Task, test: Task) -> dict[str, dict[str, Any]]:
    """Test true-group gaps and scores of the same pipeline with the :data:`COMPARED` proxies
    (cached)."""
    from fairengine.methods.multiaccurate_proxy.pipeline import downstream_comparison

    knobs = {k: v for k, v in result.knobs.items() if k not in ("proxy", "alpha")}
    key = (train.fingerprint, test.fingerprint, tuple(sorted(knobs.items())))
    compare = {**knobs, "alpha": 0.0}
    return _COMPARISONS.compute(key, lambda: downstream_comparison(train, test, compare, COMPARED))


def proxy_claim(result: Any, train: Task, test: Task) -> list[Check]:
    """The paper's claim and its plain rival, by paired bootstraps on the same test rows: the
    multiaccurate proxy's downstream true-group gap against the thresholded (classification)
    proxy's — fail when the interval of how much worse lies above 0 — and against the plain
    regression proxy's, said plainly: as well, or (warn) shown worse."""
    from fairengine.methods.evaluation import predictions_on_test
    from fairengine.methods.multiaccurate_proxy.pipeline import group_onehot

    if result.knobs["proxy"] not in ("multiaccurate", "multiaccurate_tree"):
        return []
    score = predictions_on_test(result, test)
    onehot = group_onehot(train, result.knobs["grouping"])[0][test.groups]
    constraint = result.knobs["constraint"]
    own_gap = metrics.true_group_gap(onehot, test.y, score, constraint)
    found = compared_scores(result, train, test)
    numbers = {"true_group_gap": own_gap}
    for proxy in COMPARED:
        other = np.asarray(found[proxy]["score"], dtype=float)

        def worse_by(rows: np.ndarray, other: np.ndarray = other) -> float:
            gap = metrics.true_group_gap
            return gap(onehot[rows], test.y[rows], score[rows], constraint) - gap(
                onehot[rows], test.y[rows], other[rows], constraint
            )

        low, high = metrics.paired_bootstrap_ci(worse_by, test.groups)
        numbers[f"{proxy}_gap"] = float(found[proxy]["true_group_gap"])
        numbers[f"{proxy}_worse_by_low"], numbers[f"{proxy}_worse_by_high"] = low, high
    return [_against(proxy, numbers) for proxy in COMPARED]


def _against(proxy: str, numbers: dict[str, float]) -> Check:
    """One comparison's check: ``thresholded`` is the paper's claim, ``regression`` its plain
    rival (paired bootstrap 95 % interval of how much worse this proxy's gap is)."""
    own, other = numbers["true_group_gap"], numbers[f"{proxy}_gap"]
    low, high = numbers[f"{proxy}_worse_by_low"], numbers[f"{proxy}_worse_by_high"]
    keys = ("true_group_gap", f"{proxy}_gap", f"{proxy}_worse_by_low", f"{proxy}_worse_by_high")
    kept = {k: numbers[k] for k in keys}
    gaps = (
        f"On the test rows the downstream true-group gap is {own:.3f} with this proxy and "
        f"{other:.3f} with the {proxy} proxy (this one worse by {low:+.3f} to {high:+.3f}, "
        "paired bootstrap 95 % interval on the same rows)"
    )
    if proxy == "thresholded":
        name, level = "proxy_vs_simple_proxies", "fail" if low > 0 else "ok"
        words = (
            "the paper's claim, that a multiaccurate proxy beats the thresholded classification "
            "proxy downstream, does not hold on this split"
            if low > 0
            else "not shown worse than the thresholded classification proxy, as the paper claims"
        )
    else:
        name, level = "regression_proxy_as_good", "warn" if low > 0 else "ok"
        words = "on this table the plain regression proxy does " + (
            "better" if low > 0 else f"about as well{' or better' if own > other else ''}"
        )
    return Check(name, level, f"{gaps}: {words}.", kept)


def convergence(result: Any) -> list[Check]:
    summary = result.artifacts.get("summary") or {}
    checks = []
    if summary.get("status") in ("max_iter", "below_floor"):
        rounds = {"proxy_rounds": float(summary.get("proxy_rounds", 0))}
        # the proxy learner's status sentence without the held-out qualification
        words = str(summary.get("status_message_fit", summary.get("status_message", "")))
        checks.append(Check("not_converged", "warn", words, rounds))
    if summary.get("converged") is False:
        words = (
            "The downstream fair classifier's game stopped at its iteration cap with a duality "
            "gap larger than the fitting rows can measure: more downstream rounds (T_DL) may "
            "change the classifier."
        )
        checks.append(Check("downstream_not_converged", "warn", words, {}))
    return checks


def promise(result: Any, train: Task, test: Task, baselines: Baselines | None) -> list[Check]:
    held_out = held_out_multiaccuracy(result, test)
    checks = [
        held_out,
        held_out_along_alpha(result),
        *proxy_claim(result, train, test),
        *convergence(result),
    ]
    qualify_status(result.artifacts, "status_message", held_out, where="summary")
    return [c for c in checks if c is not None]


EVIDENCE = Evidence(
    extra_metrics=extra_metrics,
    extra_metrics_knobs=("grouping", "constraint"),
    promise=promise,
    promise_checks=("held_out_multiaccuracy", "proxy_vs_simple_proxies"),
)


def fidelity_oracle(result: Any) -> bool:
    """The fidelity matrix's oracle for this method's promise: the promise measured on the run's
    numbers, reading no check's verdict (only the sampling allowance a check derived from the
    rows); see :func:`fairengine.frontier.fidelity.oracle_promise_held`."""
    if result.knobs["proxy"] not in ("multiaccurate", "multiaccurate_tree"):
        return True
    compared = next((c for c in result.checks if c.name == "proxy_vs_simple_proxies"), None)
    gaps = {} if compared is None else compared.numbers
    alpha = (result.artifacts.get("summary") or {}).get("alpha_used", result.knobs["alpha"])
    held_out = result.metrics["test"]["multiaccuracy_violation_held_out"]
    within = held_out <= alpha + check_allowance(result, "held_out_multiaccuracy")
    return within and all(v <= 0 for n, v in gaps.items() if n.endswith("_worse_by_low"))
