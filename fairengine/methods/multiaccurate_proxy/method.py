"""The ``multiaccurate_proxy`` Method: learn a proxy ẑ for the sensitive groups, then a fair
classifier constrained through ẑ, scored on the TRUE groups.

Pipeline [OURS, spec §4 reproduction plan]: the training split is shuffled; the first
``max_rows`` rows are the Proxy Learner's data (z and the tasks visible), the next ``max_rows``
the Downstream Learner's (z hidden: it only sees ẑ). Tasks = the target plus
``n_tasks`` binarised numeric features 1[column > train median] [OURS: the paper's tasks are
unknown]. Metrics (train = the DL rows, test = up to ``max_rows`` test rows): ``error`` (the
mixture's expected error), ``true_violation`` (max_k |γ_k − γ| on the true groups) and
``multiaccuracy_violation`` (max ratio violation of ẑ found by the auditor over the tasks).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pandas as pd

from fairengine.data import Task
from fairengine.data.encoding import FeatureEncoder
from fairengine.methods.base import Knob, Method, RunResult
from fairengine.methods.multiaccurate_proxy.downstream import (
    CONSTRAINTS,
    ProxyFairClassifier,
    group_gaps,
)
from fairengine.methods.multiaccurate_proxy.model import MultiaccurateProxyModel
from fairengine.methods.multiaccurate_proxy.proxy import (
    AUDITORS,
    PROXIES,
    BaselineProxy,
    MultiaccurateProxy,
    audit,
    multiaccuracy_violation,
)
from fairengine.methods.registry import register

KNOBS = (
    Knob(
        "proxy",
        "multiaccurate",
        choices=PROXIES,
        help="ẑ — multiaccurate (Alg. 4), the true "
        "groups (oracle), regression E[z|x], thresholded classifier, or constant mean(z).",
    ),
    Knob(
        "alpha",
        0.02,
        0.001,
        0.5,
        None,
        log=True,
        help="α — target ratio violation (auditor tolerance α·mean(z_k), spec §3.1 Change 1).",
    ),
    Knob("C", 10.0, 0.1, 1000.0, None, log=True, help="C — bound on the auditor's multiplier."),
    Knob("n_iter", 100, 10, 2000, 10, integer=True, help="T — rounds of Algorithm 4."),
    Knob(
        "learning_rate",
        0.01,
        0.0001,
        1.0,
        None,
        log=True,
        help="η₀ — OGD step η₀/√t (spec: 0.003–0.03; large steps chatter).",
    ),
    Knob(
        "auditor",
        "linear",
        choices=AUDITORS,
        help="H — the audited class: halfspaces (regression heuristic) or depth-2 trees.",
    ),
    Knob("constraint", "equal_error", choices=CONSTRAINTS, help="Downstream fairness notion."),
    Knob(
        "eps",
        0.05,
        0.001,
        1.0,
        None,
        log=True,
        help="ε — downstream bound |γ_k − γ| ≤ ε measured through ẑ.",
    ),
    Knob(
        "n_tasks",
        3,
        0,
        10,
        1,
        integer=True,
        help="m − 1 — binarised numeric features used as "
        "extra proxy-training tasks (plus the target).",
    ),
    Knob(
        "max_rows",
        2000,
        200,
        50000,
        100,
        integer=True,
        help="Rows for the proxy learner and for the downstream learner (each).",
    ),
    Knob(
        "grouping",
        "largest_vs_rest",
        choices=("largest_vs_rest", "all"),
        help="K — groups: "
        "the largest group vs the rest (e.g. White vs non-White), or one column per group.",
    ),
    Knob(
        "dl_iter",
        10,
        2,
        100,
        1,
        integer=True,
        help="T_DL — exponentiated-gradient rounds of "
        "the downstream learner (one weighted logistic regression each).",
    ),
    Knob("random_state", 0, 0, 10_000, 1, integer=True, help="Seed of the row split."),
)


def make_tasks(
    train: Task, frame: pd.DataFrame, y: np.ndarray, n_tasks: int
) -> tuple[np.ndarray, list[str]]:
    """The target plus 1[column > train median] for the first ``n_tasks`` non-constant
    numeric features [OURS]."""
    columns, names = [y.astype(float)], [str(train.target)]
    numeric = train.X.select_dtypes("number")
    for col in numeric.columns:
        if len(names) > n_tasks:
            break
        cut = float(numeric[col].median())
        flags = (numeric[col] > cut).astype(float)
        if 0 < flags.mean() < 1:
            columns.append((pd.to_numeric(frame[col]) > cut).to_numpy(float))
            names.append(f"{col}>{cut:g}")
    return np.column_stack(columns), names


def _run(train: Task, test: Task, **knobs: Any) -> RunResult:
    start = time.perf_counter()
    rng = np.random.default_rng(knobs["random_state"])
    rows = knobs["max_rows"]
    order = rng.permutation(train.frame.shape[0])
    pl_rows = order[:rows]
    dl_rows = order[rows : 2 * rows] if len(order) > rows + 200 else order[:rows]
    test_rows = np.sort(rng.permutation(test.frame.shape[0])[:rows])
    encoder = FeatureEncoder().fit(train.X)
    names = [str(g) for g in train.group_names]
    if knobs["grouping"] == "all":
        onehot = np.eye(len(names))
    else:
        largest = int(np.argmax(np.bincount(train.groups, minlength=len(names))))
        onehot = np.zeros((len(names), 2))
        onehot[:, 1] = 1.0
        onehot[largest] = (1.0, 0.0)
        names = [names[largest], f"not {names[largest]}"]
    K = len(names)  # noqa: N806

    def part(task: Task, idx: np.ndarray) -> dict[str, Any]:
        X = encoder.transform(task.X.iloc[idx])  # noqa: N806
        y = task.y[idx].astype(float)
        tasks, task_names = make_tasks(train, task.X.iloc[idx], y, knobs["n_tasks"])
        return {
            "X": X,
            "y": y,
            "z": onehot[task.groups[idx]],
            "tasks": tasks,
            "task_names": task_names,
        }

    pl, dl, te = part(train, pl_rows), part(train, dl_rows), part(test, test_rows)
    kind = knobs["proxy"]
    estimator: MultiaccurateProxy | BaselineProxy | None = None
    if kind == "multiaccurate":
        estimator = MultiaccurateProxy(
            alpha=knobs["alpha"],
            C=knobs["C"],
            n_iter=knobs["n_iter"],
            learning_rate=knobs["learning_rate"],
            auditor=knobs["auditor"],
            random_state=knobs["random_state"],
        ).fit(pl["X"], pl["z"], pl["tasks"])
    elif kind != "true":
        estimator = BaselineProxy(kind).fit(pl["X"], pl["z"])

    def zhat(data: dict[str, Any]) -> np.ndarray:
        return data["z"] if estimator is None else estimator.predict_proba(data["X"])

    clf = ProxyFairClassifier(
        eps=knobs["eps"], constraint=knobs["constraint"], max_iter=knobs["dl_iter"]
    ).fit(dl["X"], dl["y"], zhat(dl))
    elapsed = time.perf_counter() - start
    metrics, audits, rates = {}, [], []
    for split, data in (("proxy", pl), ("train", dl), ("test", te)):
        table = audit(
            data["X"],
            data["z"],
            zhat(data),
            data["tasks"],
            knobs["auditor"],
            group_names=names,
            task_names=data["task_names"],
        )
        audits.append(table.assign(split=split))
        if split == "proxy":
            continue
        score = clf.predict_proba(data["X"])
        true_gaps = group_gaps(data["z"], data["y"], score, knobs["constraint"])
        proxy_gaps = group_gaps(zhat(data), data["y"], score, knobs["constraint"])
        metrics[split] = {
            "error": float(np.mean(np.abs(score - data["y"]))),
            "true_violation": float(np.max(np.abs(true_gaps))),
            "proxy_violation": float(np.max(np.abs(proxy_gaps))),
            "multiaccuracy_violation": multiaccuracy_violation(table),
        }
        rates += [
            {
                "split": split,
                "group": names[k],
                "true_gap": true_gaps[k],
                "proxy_gap": proxy_gaps[k],
            }
            for k in range(K)
        ]
    d = pl["X"].shape[1]
    model = MultiaccurateProxyModel(
        encoder,
        clf.coefs_,
        clf.intercepts_,
        clf.weights_,
        estimator.coef_ if isinstance(estimator, MultiaccurateProxy) else np.zeros((0, d + 1)),
        kind,
        tuple(names),
    )
    artifacts: dict[str, Any] = {
        "audit": pd.concat(audits, ignore_index=True),
        "group_gaps": pd.DataFrame(rates),
        "trace": estimator.trace_ if isinstance(estimator, MultiaccurateProxy) else None,
        "summary": {
            "tasks": pl["task_names"],
            "n_proxy_rows": len(pl_rows),
            "n_downstream_rows": len(dl_rows),
            "converged": clf.game_.converged,
        },
    }
    return RunResult("multiaccurate_proxy", dict(knobs), metrics, model, artifacts, elapsed)


MULTIACCURATE_PROXY = register(
    Method(
        name="multiaccurate_proxy",
        title="Multiaccurate proxies",
        seed="004",
        kinds=("classification",),
        knobs=KNOBS,
        fairness_metric="true_violation",
        performance_metric="error",
        run_function=_run,
        description="Pre-processing for missing sensitive features: learn a proxy ẑ that is "
        "multiaccurate on the error regions of downstream classifiers, then train a fair "
        "classifier through ẑ; scored on the true groups.",
        reference="Diana, Gill, Kearns, Kenthapadi, Roth & Sharifi-Malvajerdi, FAccT 2022",
        demo_grid={"eps": (0.02, 0.1), "proxy": PROXIES, "max_rows": (800,), "dl_iter": (5,)},
        demo_tasks=(("adult", ("race",)),),
    )
)
