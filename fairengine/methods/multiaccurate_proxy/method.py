"""The ``multiaccurate_proxy`` Method: learn a proxy ẑ for the sensitive groups, then a fair
classifier constrained through ẑ, scored on the TRUE groups. The pipeline, its metrics and where
α acts: ``docs/methods/multiaccurate_proxy.md``."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np

from fairengine import metrics
from fairengine.methods.base import RANDOMIZED_PREDICTIONS, Method, RunResult
from fairengine.methods.multiaccurate_proxy.checks import EVIDENCE
from fairengine.methods.multiaccurate_proxy.knobs import KNOBS, SWEEP_GRIDS
from fairengine.methods.multiaccurate_proxy.pipeline import (
    encoded,
    fit_downstream,
    proxy_for,
    run_parts,
)
from fairengine.methods.registry import register

if TYPE_CHECKING:  # for annotations: the algorithm loads on a run
    from fairengine.data import Task


def _first_value(values: Any) -> float | None:
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


def _run(train: Task, test: Task, **knobs: Any) -> RunResult:
    from threadpoolctl import threadpool_limits

    from fairengine.methods.multiaccurate_proxy.model import MultiaccurateProxyModel

    start = time.perf_counter()
    with threadpool_limits(limits=1, user_api="blas"):  # many small products
        pl, dl, te, names = run_parts(train, test, knobs)
        estimator, proxy_seconds = proxy_for(train, knobs, pl, test)
        clf = fit_downstream(knobs, dl, _zhat(estimator, dl))
        elapsed = time.perf_counter() - start
        found = _evaluate(estimator, clf, (pl, dl, te), knobs, names)
    linear = getattr(estimator, "coef_", None)
    model = MultiaccurateProxyModel(  # the downstream mixture and the proxy (linear θ or trees)
        encoded(train),
        clf.coefs_,
        clf.intercepts_,
        clf.weights_,
        linear if linear is not None else np.zeros((0, pl["X"].shape[1] + 1)),
        knobs["proxy"],
        tuple(names),
        proxy_trees=getattr(estimator, "trees_", None),
    )
    summary = {
        "tasks": pl["task_names"] if knobs["task_mode"] == "sampled" else ["(class mode)"],
        "audit_tasks": pl["task_names"],
        "n_proxy_rows": len(pl["y"]),
        "n_downstream_rows": len(dl["y"]),
        "converged": clf.converged_,
        "alpha_reached": found["alpha_reached"],
        **proxy_status(estimator, knobs, pl["z"]),
        "proxy_seconds": proxy_seconds,
        "group_names": names,
        # the additive tolerance ε_k = α·mean(z_k) of the smallest group
        "tolerance": float(getattr(estimator, "alpha_", knobs["alpha"]))
        * float(pl["z"].mean(axis=0).min()),
        # Algorithm 4: LP floor of linear G over the audit vectors found, and θ̄ on them
        "floor_additive": _first_value(estimator.lp_floor())
        if hasattr(estimator, "lp_floor")
        else None,
        "reached_additive": _first_value(getattr(estimator, "reached_", None)),
        **found["along_alpha"],
    }
    inputs = {"train": encoded(train, train), "test": encoded(train, test)}  # for the evaluation
    artifacts = {**found["artifacts"], "summary": summary, "encoded_inputs": inputs}
    return RunResult(
        "multiaccurate_proxy", dict(knobs), found["metrics"], model, artifacts, elapsed
    )


def _zhat(estimator: Any, data: dict[str, Any]) -> np.ndarray:
    """The soft groups the downstream learner sees on rows ``data`` (z itself for no proxy)."""
    return data["z"] if estimator is None else estimator.predict_proba(data["X"])


def _evaluate(
    estimator: Any, clf: Any, parts: tuple, knobs: dict[str, Any], names: list[str]
) -> dict[str, Any]:
    """The audits, proxy quality and group gaps on the proxy, downstream and test rows
    ``parts``: the run's metrics per split, its tables and trace, the in-sample α reached and
    Algorithm 4 along α on the test rows."""
    import pandas as pd

    from fairengine.methods.multiaccurate_proxy.auditor import audit, proxy_quality
    from fairengine.metrics import (
        multiaccuracy_violation_held_out,
        multiaccuracy_violation_in_sample,
    )

    run_metrics, audits, rates, quality, along_alpha = {}, [], [], [], {}
    for split, data in zip(("proxy", "train", "test"), parts, strict=True):
        soft = _zhat(estimator, data)
        named = {"group_names": names, "task_names": data["task_names"]}
        table = audit(data["X"], data["z"], soft, data["tasks"], knobs["auditor"], **named)
        audits.append(table.assign(split=split))
        quality += [
            {"split": split, "group": names[k], **proxy_quality(data["z"][:, k], soft[:, k])}
            for k in range(len(names))
        ]
        if split == "proxy":  # Algorithm 4: every region found on the rows of its game
            alpha_reached = multiaccuracy_violation_in_sample(table, estimator)
            continue
        score, constraint = clf.predict_score(data["X"]), knobs["constraint"]
        true_gaps, proxy_gaps = (
            metrics.group_gaps(groups, data["y"], score, constraint) for groups in (data["z"], soft)
        )
        rates += [
            {"split": split, "group": name, "true_gap": true_gaps[k], "proxy_gap": proxy_gaps[k]}
            for k, name in enumerate(names)
        ]
        minority = quality[-1]  # the last group (e.g. "not White"): the hard-to-predict one
        if split == "test" and hasattr(estimator, "alpha_range_"):
            along_alpha = held_out_along_alpha(estimator, data, knobs["auditor"])
        run_metrics[split] = {  # error & co. come from the shared evaluation (Method.run)
            "true_group_gap": metrics.true_group_gap(data["z"], data["y"], score, constraint),
            "proxy_group_gap": metrics.proxy_group_gap(soft, data["y"], score, constraint),
            "multiaccuracy_violation_in_sample": alpha_reached,
            "multiaccuracy_violation_held_out": multiaccuracy_violation_held_out(table),
            # proxy_quality computes these with metrics.proxy_accuracy / proxy_auc / proxy_mse
            "proxy_accuracy": minority["accuracy"],
            "proxy_auc": minority["auc"],
            "proxy_mse": minority["mse"],
        }
    trace = getattr(estimator, "trace_", None)
    artifacts = {
        "audit": pd.concat(audits, ignore_index=True),
        "group_gaps": pd.DataFrame(rates),
        "proxy_quality": pd.DataFrame(quality),
        "trace": None if trace is None else np.asarray(trace),
    }
    return {
        "metrics": run_metrics,
        "artifacts": artifacts,
        "alpha_reached": alpha_reached,
        "along_alpha": along_alpha,
    }


MULTIACCURATE_PROXY = register(
    Method(
        name="multiaccurate_proxy",
        title="Multiaccurate proxies",
        seed="004",
        kinds=("classification",),
        knobs=KNOBS,
        fairness_metric="true_group_gap",
        performance_metric="error",
        run_function=_run,
        description="Pre-processing for missing sensitive features: learn a proxy ẑ that is "
        "multiaccurate on the error regions of downstream classifiers, then train a fair "
        "classifier through ẑ; scored on the true groups.",
        reference="Diana, Gill, Kearns, Kenthapadi, Roth & Sharifi-Malvajerdi, FAccT 2022",
        paper="Multiaccurate Proxies for Downstream Fairness",
        model_types={"multiaccurate_proxy": "fairengine.methods.multiaccurate_proxy.model"},
        version="10",  # 10: groups named column = value; regression proxy a separate check
        requirements=(RANDOMIZED_PREDICTIONS,),
        sweep_grids=SWEEP_GRIDS,
        demo_tasks=(("adult", ("race",)), ("adult", ("sex",))),
        evidence=EVIDENCE,
        main_knob="alpha",
        demo_knob="eps",
    )
)
