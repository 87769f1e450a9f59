"""The ``multiaccurate_proxy`` Method: learn a proxy ẑ for the sensitive groups, then a fair
classifier constrained through ẑ, scored on the TRUE groups.

Pipeline [OURS]: the training split is shuffled; the first ``max_rows`` rows are the Proxy
Learner's data (z and the tasks visible), the next ``max_rows`` the Downstream Learner's (z
hidden: it only sees ẑ). Tasks = the target, ``n_tasks`` binarised numeric features and f ≡ 0.
Metrics (train = the DL rows, test = up to ``max_rows`` test rows): ``error``,
``true_group_gap`` (max_k |γ_k − γ| on the true groups), ``proxy_group_gap`` (the same through
ẑ), the proxy's accuracy / AUC / MSE for the last group, and the auditor's multiaccuracy
violation in sample (the proxy's own rows, where α is a bound) and held out (that split's rows).
``artifacts["summary"]`` carries the proxy learner's ``status`` and a ``status_message`` for
people. Where α acts (the tree class) and why the linear class usually serves one value: the
"Design notes" of ``docs/methods/multiaccurate_proxy.md``.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np

from fairengine import metrics
from fairengine.methods.base import RANDOMIZED_PREDICTIONS, Method, RunResult
from fairengine.methods.multiaccurate_proxy.checks import EVIDENCE
from fairengine.methods.multiaccurate_proxy.knobs import KNOBS, SWEEP_GRIDS

# names of the pipeline that tests, benches and the page import from this module
from fairengine.methods.multiaccurate_proxy.pipeline import (  # noqa: F401
    PROXY_KNOBS,
    data_part,
    downstream_comparison,
    encoded,
    group_onehot,
    make_tasks,
    proxy_for,
    run_parts,
    split_rows,
)
from fairengine.methods.multiaccurate_proxy.status import (
    first_value,
    held_out_along_alpha,
    proxy_status,
)
from fairengine.methods.registry import register

if TYPE_CHECKING:  # for annotations: the algorithm loads on a run
    from fairengine.data import Task
    from fairengine.methods.multiaccurate_proxy.model import MultiaccurateProxyModel


def _run(train: Task, test: Task, **knobs: Any) -> RunResult:
    # one BLAS thread for the many small products of the games and audits (linear._ONE_THREAD)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        return _run_one_thread(train, test, **knobs)


def _gap_metrics(
    data: dict[str, Any], soft: np.ndarray, clf: Any, constraint: str, names: list, split: str
) -> tuple[dict[str, float], list[dict[str, Any]]]:
    """The downstream classifier's largest group gap on rows ``data``, on the true groups and
    through ẑ = ``soft``, and each group's gaps (rows of the ``group_gaps`` table)."""
    score = clf.predict_score(data["X"])
    true_gaps = metrics.group_gaps(data["z"], data["y"], score, constraint)
    proxy_gaps = metrics.group_gaps(soft, data["y"], score, constraint)
    rates = [
        {"split": split, "group": names[k], "true_gap": true_gaps[k], "proxy_gap": proxy_gaps[k]}
        for k in range(len(names))
    ]
    gaps = {
        "true_group_gap": metrics.true_group_gap(data["z"], data["y"], score, constraint),
        "proxy_group_gap": metrics.proxy_group_gap(soft, data["y"], score, constraint),
    }
    return gaps, rates


def _export_model(
    encoder: Any, clf: Any, estimator: Any, kind: str, names: list, d: int
) -> MultiaccurateProxyModel:
    """The exported model: the downstream mixture and the proxy (linear θ or trees)."""
    from fairengine.methods.multiaccurate_proxy.model import MultiaccurateProxyModel

    linear = getattr(estimator, "coef_", None)
    return MultiaccurateProxyModel(
        encoder,
        clf.coefs_,
        clf.intercepts_,
        clf.weights_,
        linear if linear is not None else np.zeros((0, d + 1)),
        kind,
        tuple(names),
        proxy_trees=getattr(estimator, "trees_", None),
    )


def _run_one_thread(train: Task, test: Task, **knobs: Any) -> RunResult:
    from fairengine.methods.multiaccurate_proxy.downstream import ProxyFairClassifier

    start = time.perf_counter()
    pl, dl, te, names = run_parts(train, test, knobs)
    estimator, proxy_seconds = proxy_for(train, knobs, pl, test)
    clf = ProxyFairClassifier(
        eps=knobs["eps"],
        constraint=knobs["constraint"],
        max_iter=knobs["dl_iter"],
        learner=knobs["dl_learner"],
    ).fit(dl["X"], dl["y"], _zhat(estimator, dl))
    elapsed = time.perf_counter() - start
    found = _evaluate(estimator, clf, (pl, dl, te), knobs, names)
    model = _export_model(encoded(train), clf, estimator, knobs["proxy"], names, pl["X"].shape[1])
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
        **_proxy_summary(estimator, knobs, pl["z"]),
        **found["along_alpha"],
    }
    inputs = {"train": encoded(train, train), "test": encoded(train, test)}  # for the evaluation
    artifacts = {**found["artifacts"], "summary": summary, "encoded_inputs": inputs}
    run_metrics = found["metrics"]
    return RunResult("multiaccurate_proxy", dict(knobs), run_metrics, model, artifacts, elapsed)


def _zhat(estimator: Any, data: dict[str, Any]) -> np.ndarray:
    """The soft groups the downstream learner sees on rows ``data`` (z itself for no proxy)."""
    return data["z"] if estimator is None else estimator.predict_proba(data["X"])


def _proxy_summary(estimator: Any, knobs: dict[str, Any], z: np.ndarray) -> dict[str, Any]:
    """The proxy's tolerance and, for Algorithm 4, its LP floor and reach, for the summary."""
    return {
        # the additive tolerance ε_k = α·mean(z_k) of the smallest group
        "tolerance": float(getattr(estimator, "alpha_", knobs["alpha"]))
        * float(z.mean(axis=0).min()),
        # Algorithm 4: LP floor of linear G over the audit vectors found, and θ̄ on them
        "floor_additive": first_value(estimator.lp_floor())
        if hasattr(estimator, "lp_floor")
        else None,
        "reached_additive": first_value(getattr(estimator, "reached_", None)),
    }


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
        gaps, split_rates = _gap_metrics(data, soft, clf, knobs["constraint"], names, split)
        rates += split_rates
        minority = quality[-1]  # the last group (e.g. "not White"): the hard-to-predict one
        if split == "test" and hasattr(estimator, "alpha_range_"):
            along_alpha = held_out_along_alpha(estimator, data, knobs["auditor"])
        run_metrics[split] = {  # error & co. come from the shared evaluation (Method.run)
            **gaps,
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
