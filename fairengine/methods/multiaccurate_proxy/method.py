"""The ``multiaccurate_proxy`` Method: learn a proxy ẑ for the sensitive groups, then a fair
classifier constrained through ẑ, scored on the TRUE groups.

Pipeline [OURS]: the training split is shuffled; the first ``max_rows`` rows are the Proxy
Learner's data (z and the tasks visible), the next ``max_rows`` the Downstream Learner's (z
hidden: it only sees ẑ). Tasks = the target plus ``n_tasks`` binarised numeric features
1[column > train median] (our choice: the paper's tasks are unknown). Metrics (train = the DL rows,
test = up to ``max_rows`` test rows): ``error`` (the mixture's expected error),
``true_group_gap`` (max_k |γ_k − γ| on the true groups), ``proxy_group_gap`` (the same through
ẑ), the proxy's accuracy / AUC / MSE for predicting the last group (e.g. "not White"), and two
multiaccuracy audits (max ratio violation of ẑ found by the auditor over the tasks):

* ``multiaccuracy_violation_in_sample``: on the proxy learner's own rows, where Algorithm 4's
  α guarantee lives — for Algorithm 4 the three quarters of them in its game (the same value in
  both splits: it is a property of the proxy);
* ``multiaccuracy_violation_held_out``: on that split's rows, which the proxy never saw; it also
  contains the auditor's own overfitting to the noise of z on those rows.

``artifacts["summary"]`` carries the proxy learner's ``status`` ("converged", "max_iter",
"below_floor", or "n/a" for proxies without a game) and a ``status_message`` for people.

Besides Algorithm 4 the method offers Algorithm 2 (``multiaccurate_tree``) and Section 5
(``task_mode="class"``); the downstream learner is paired regression by default, and two
complementary groups are learned with one fit. Algorithm 4 runs in the preconditioned metric
with early stopping and a status. Its path is shared by every α (α acts on the range the run
reports, ``summary["alpha_range"]``; α = 0, the default, is the lowest reachable). A quarter of
the proxy rows is kept out of Algorithm 4's game; α only moves along candidates whose violation
falls on the game's rows and, by more than its sampling error, on those kept-out rows (on the
bundled data usually none does: α has a single value, least squares on every proxy row), and
the ``held_out_along_alpha`` check compares the served proxy with the least-squares start on
the test rows. The in-sample violation counts every error region found, the tasks include
f ≡ 0, and the default downstream constraint is statistical parity at ε = 0.01 (binds on every
bundled classification dataset).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np

from fairengine import metrics
from fairengine.methods.base import Method, RunResult
from fairengine.methods.multiaccurate_proxy.checks import EVIDENCE
from fairengine.methods.multiaccurate_proxy.knobs import KNOBS, SWEEP_GRIDS
from fairengine.methods.multiaccurate_proxy.promise import promise_held
from fairengine.methods.registry import register

if TYPE_CHECKING:  # for annotations: the algorithm loads on a run
    import pandas as pd

    from fairengine.data import Task
    from fairengine.methods.multiaccurate_proxy.model import MultiaccurateProxyModel


#: The knobs that change the proxy (the rest only change the downstream learner).
PROXY_KNOBS = (
    "proxy",
    "alpha",
    "C",
    "n_iter",
    "learning_rate",
    "tree_depth",
    "auditor",
    "task_mode",
    "n_tasks",
    "max_rows",
    "grouping",
    "random_state",
)


def make_tasks(
    train: Task, frame: pd.DataFrame, y: np.ndarray, n_tasks: int
) -> tuple[np.ndarray, list[str]]:
    """The target, 1[column > train median] for the first ``n_tasks`` non-constant numeric
    features [OURS], and the all-zero labelling f ≡ 0, whose error regions {h(x) = 1} are the
    ones statistical parity needs the proxy to be multiaccurate on [TEXT]."""
    import pandas as pd

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
    columns.append(np.zeros(len(y)))
    names.append("f ≡ 0 (regions h = 1)")
    return np.column_stack(columns), names


_ENCODERS: dict[str, Any] = {}


def _split(train: Task, test: Task, knobs: dict[str, Any]):
    """Proxy-learner rows, downstream rows, test rows, the encoder and the group one-hot map."""
    from fairengine.data.encoding import FeatureEncoder

    rng = np.random.default_rng(knobs["random_state"])
    rows = knobs["max_rows"]
    order = rng.permutation(train.frame.shape[0])
    pl_rows = order[:rows]
    dl_rows = order[rows : 2 * rows] if len(order) > rows + 200 else order[:rows]
    test_rows = np.sort(rng.permutation(test.frame.shape[0])[:rows])
    encoder = _ENCODERS.get(train.fingerprint)
    if encoder is None:  # fitted once per training split (a third of a run's time on Adult)
        encoder = FeatureEncoder().fit(train.X)
        _ENCODERS[train.fingerprint] = encoder
        while len(_ENCODERS) > _PROXY_CACHE_SIZE:
            _ENCODERS.pop(next(iter(_ENCODERS)))
    onehot, names = group_onehot(train, knobs["grouping"])
    return pl_rows, dl_rows, test_rows, encoder, onehot, names


def _part(
    train: Task, task: Task, idx: np.ndarray, encoder: Any, onehot: np.ndarray, n_tasks: int
) -> dict[str, Any]:
    """Rows ``idx`` of ``task``: encoded X, y, the group one-hots z and the proxy tasks."""
    y = task.y[idx].astype(float)
    tasks, task_names = make_tasks(train, task.X.iloc[idx], y, n_tasks)
    return {
        "X": encoder.transform(task.X.iloc[idx]),
        "y": y,
        "z": onehot[task.groups[idx]],
        "tasks": tasks,
        "task_names": task_names,
    }


def downstream_comparison(
    train: Task, test: Task, knobs: dict[str, Any], proxies: tuple[str, ...]
) -> dict[str, dict[str, float]]:
    """For each proxy of ``proxies``, the same pipeline as a run of ``knobs`` (same rows, same
    downstream knobs) down to the downstream classifier only: its true-group gap and expected
    error on every test row. The proxies' fits are shared with the runs (:func:`proxy_for`)."""
    from threadpoolctl import threadpool_limits

    from fairengine.methods.multiaccurate_proxy.downstream import ProxyFairClassifier

    pl_rows, dl_rows, _, encoder, onehot, _ = _split(train, test, knobs)
    pl = _part(train, train, pl_rows, encoder, onehot, knobs["n_tasks"])
    dl = _part(train, train, dl_rows, encoder, onehot, knobs["n_tasks"])
    out = {}
    with threadpool_limits(limits=1, user_api="blas"):
        test_x, test_z, test_y = encoder.transform(test.X), onehot[test.groups], test.y
        for proxy in proxies:
            estimator, _ = proxy_for(train, {**knobs, "proxy": proxy}, pl)
            soft = dl["z"] if estimator is None else estimator.predict_proba(dl["X"])
            clf = ProxyFairClassifier(
                eps=knobs["eps"],
                constraint=knobs["constraint"],
                max_iter=knobs["dl_iter"],
                learner=knobs["dl_learner"],
            ).fit(dl["X"], dl["y"], soft)
            score = clf.predict_score(test_x)
            gap = metrics.true_group_gap(test_z, test_y, score, knobs["constraint"])
            error = float(np.mean(score * (1 - test_y) + (1 - score) * test_y))
            out[proxy] = {"true_group_gap": gap, "error": error}
    return out


def group_onehot(train: Task, grouping: str) -> tuple[np.ndarray, list[str]]:
    """(map from a task's group code to its one-hot row over the groups the method treats,
    their names): every group (``"all"``), or the largest training group against the rest."""
    names = [str(g) for g in train.group_names]
    if grouping == "all":
        return np.eye(len(names)), names
    largest = int(np.argmax(np.bincount(train.groups, minlength=len(names))))
    onehot = np.zeros((len(names), 2))
    onehot[:, 1] = 1.0
    onehot[largest] = (1.0, 0.0)
    return onehot, [names[largest], f"not {names[largest]}"]


def fit_proxy(X: np.ndarray, z: np.ndarray, tasks: np.ndarray, knobs: dict[str, Any]):
    """The proxy estimator of ``knobs["proxy"]`` fitted on the proxy learner's data (None for
    the true groups)."""
    from fairengine.methods.multiaccurate_proxy.proxy import (
        BaselineProxy,
        GeneralMultiaccurateProxy,
        MultiaccurateProxy,
    )

    kind = knobs["proxy"]
    fit_tasks = None if knobs["task_mode"] == "class" else tasks
    if kind == "multiaccurate":
        return MultiaccurateProxy(
            alpha=knobs["alpha"],
            C=knobs["C"],
            n_iter=knobs["n_iter"],
            learning_rate=knobs["learning_rate"],
            auditor=knobs["auditor"],
            auditor_depth=3 if fit_tasks is None else 2,
            random_state=knobs["random_state"],
        ).fit(X, z, fit_tasks)
    if kind == "multiaccurate_tree":
        return GeneralMultiaccurateProxy(
            alpha=knobs["alpha"],
            C=knobs["C"],
            n_iter=knobs["n_iter"],
            max_depth=knobs["tree_depth"],
            auditor=knobs["auditor"],
            auditor_depth=3 if fit_tasks is None else 2,
            random_state=knobs["random_state"],
        ).fit(X, z, fit_tasks)
    if kind == "true":
        return None
    return BaselineProxy(kind).fit(X, z)


#: Fitted proxies of recent runs: a sweep over the downstream knobs (ε, constraint) refits only
#: the downstream learner [OURS; in-process, small].
_PROXY_CACHE: dict[tuple, Any] = {}
_PROXY_CACHE_SIZE = 8


def _cached_proxy(key: tuple, fit: Any) -> tuple[Any, float]:
    """(estimator, seconds its fit took)."""
    if key not in _PROXY_CACHE:
        if len(_PROXY_CACHE) >= _PROXY_CACHE_SIZE:
            _PROXY_CACHE.pop(next(iter(_PROXY_CACHE)))
        start = time.perf_counter()
        estimator = fit()
        _PROXY_CACHE[key] = (estimator, time.perf_counter() - start)
    return _PROXY_CACHE[key]


def proxy_for(train: Task, knobs: dict[str, Any], pl: dict[str, Any]) -> tuple[Any, float]:
    """(the proxy of ``knobs`` fitted on the proxy rows ``pl``, seconds its fit took), cached.

    Only Algorithm 2's fit depends on α: Algorithm 4's game does not (α only picks a point of
    its path), so its fit is shared by every α, as are the comparison proxies'; the thresholded
    proxy is the regression proxy's fit, thresholded.
    """
    import copy

    kind = knobs["proxy"]
    shared = dict(knobs) if kind == "multiaccurate_tree" else {**knobs, "alpha": 0.0}
    if kind == "thresholded":
        shared["proxy"] = "regression"
    key = (train.fingerprint, *(shared[k] for k in PROXY_KNOBS))
    estimator, seconds = _cached_proxy(
        key, lambda: fit_proxy(pl["X"], pl["z"], pl["tasks"], shared)
    )
    if kind == "multiaccurate":
        estimator = estimator.at_alpha(knobs["alpha"])
    elif kind == "thresholded":
        estimator = copy.copy(estimator)
        estimator.kind = "thresholded"
    return estimator, seconds


def _first(values: Any) -> float | None:
    if values is None or not np.isfinite(values).any():
        return None
    return float(np.nanmax(values))


def _proxy_status(estimator: Any, knobs: dict[str, Any], z: np.ndarray) -> dict[str, Any]:
    """The proxy learner's outcome for the summary: ``status`` and a ``status_message`` that
    says plainly whether α was reached on the proxy rows and, if not, why; for Algorithm 4 also
    ``alpha_used`` (α, or the lowest reachable when α = 0) and ``alpha_range``, the α on which
    the slider acts on these rows."""
    from fairengine.methods.multiaccurate_proxy.proxy import MultiaccurateProxy

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
    return {"status": status, "status_message": message, "proxy_rounds": rounds,
            "alpha_used": float(alpha)}  # fmt: skip


def _algorithm4_status(estimator: Any, knobs: dict[str, Any], mean: float) -> dict[str, Any]:
    status, rounds = estimator.status_, int(estimator.n_iter_.max())
    alpha, (low, high) = float(estimator.alpha_), estimator.alpha_range_
    reached = estimator.reached_ratio_
    asked = "α = 0 (the lowest reachable)" if knobs["alpha"] <= 0 else f"α = {alpha:g}"
    held = estimator.n_validation_
    span = (
        f"On these rows α acts between {low:.3f} (the lowest the linear proxy reaches in "
        f"T = {knobs['n_iter']} rounds while its violation on {held:,} proxy rows kept out of "
        f"the game also falls) and {high:.3f} (the least-squares start; any larger α returns it)."
        if low < high
        else f"On these rows α has the single value {low:.3f}: no round of the game lowered "
        f"the violation on the {held:,} proxy rows kept out of it by more than its sampling "
        f"error (±{estimator.kept_out_error_:.3f}), so least squares on every proxy row is "
        "served for every α (the game's in-sample gains would not carry over to other rows)."
    )
    if status == "converged":
        message = (
            f"Algorithm 4 certifies {asked} at round {rounds}: against every error region the "
            f"auditor found on the proxy rows, the ratio violation is {reached:.3f}. {span}"
        )
    else:
        floor = float(np.nanmax(estimator.floor_)) / mean
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
    }


def held_out_along_alpha(estimator: Any, data: dict[str, Any], auditor: str) -> dict[str, Any]:
    """Algorithm 4 on held-out rows ``data`` (the test rows): the multiaccuracy violation of the
    least-squares start (the top of α's range) beside the served proxy's, and the sampling error
    of such a violation, sqrt(mean((z − ẑ)²)/n)/mean(z_k) for the smallest group (a bound on the
    standard error of the ratio violation of any one region), for the check along α."""
    from fairengine.methods.multiaccurate_proxy.proxy import audit

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
    # one BLAS thread for the many small products of the games and audits (proxy._ONE_THREAD)
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
    import pandas as pd

    from fairengine.methods.multiaccurate_proxy.downstream import ProxyFairClassifier
    from fairengine.methods.multiaccurate_proxy.proxy import audit, proxy_quality
    from fairengine.metrics import (
        multiaccuracy_violation_held_out,
        multiaccuracy_violation_in_sample,
    )

    start = time.perf_counter()
    pl_rows, dl_rows, test_rows, encoder, onehot, names = _split(train, test, knobs)
    K = len(names)

    def part(task: Task, idx: np.ndarray) -> dict[str, Any]:
        return _part(train, task, idx, encoder, onehot, knobs["n_tasks"])

    pl, dl, te = part(train, pl_rows), part(train, dl_rows), part(test, test_rows)
    kind = knobs["proxy"]
    z_scale = float(pl["z"].mean(axis=0).min())
    estimator, proxy_seconds = proxy_for(train, knobs, pl)

    def zhat(data: dict[str, Any]) -> np.ndarray:
        return data["z"] if estimator is None else estimator.predict_proba(data["X"])

    clf = ProxyFairClassifier(
        eps=knobs["eps"],
        constraint=knobs["constraint"],
        max_iter=knobs["dl_iter"],
        learner=knobs["dl_learner"],
    ).fit(dl["X"], dl["y"], zhat(dl))
    elapsed = time.perf_counter() - start
    metrics, audits, rates, quality, along_alpha = {}, [], [], [], {}
    for split, data in (("proxy", pl), ("train", dl), ("test", te)):
        soft = zhat(data)
        named = {"group_names": names, "task_names": data["task_names"]}
        table = audit(data["X"], data["z"], soft, data["tasks"], knobs["auditor"], **named)
        audits.append(table.assign(split=split))
        quality += [
            {"split": split, "group": names[k], **proxy_quality(data["z"][:, k], soft[:, k])}
            for k in range(K)
        ]
        if split == "proxy":  # Algorithm 4: every region found on the rows of its game
            alpha_reached = multiaccuracy_violation_in_sample(table, estimator)
            continue
        gaps, split_rates = _gap_metrics(data, soft, clf, knobs["constraint"], names, split)
        rates += split_rates
        minority = quality[-1]  # the last group (e.g. "not White"): the hard-to-predict one
        if split == "test" and hasattr(estimator, "alpha_range_"):
            along_alpha = held_out_along_alpha(estimator, data, knobs["auditor"])
        metrics[split] = {  # error & co. come from the shared evaluation (Method.run)
            **gaps,
            "multiaccuracy_violation_in_sample": alpha_reached,
            "multiaccuracy_violation_held_out": multiaccuracy_violation_held_out(table),
            # proxy_quality computes these with metrics.proxy_accuracy / proxy_auc / proxy_mse
            "proxy_accuracy": minority["accuracy"],
            "proxy_auc": minority["auc"],
            "proxy_mse": minority["mse"],
        }
    model = _export_model(encoder, clf, estimator, kind, names, pl["X"].shape[1])
    trace = getattr(estimator, "trace_", None)
    artifacts: dict[str, Any] = {
        "audit": pd.concat(audits, ignore_index=True),
        "group_gaps": pd.DataFrame(rates),
        "proxy_quality": pd.DataFrame(quality),
        "trace": None if trace is None else np.asarray(trace),
        "summary": {
            "tasks": pl["task_names"] if knobs["task_mode"] == "sampled" else ["(class mode)"],
            "audit_tasks": pl["task_names"],
            "n_proxy_rows": len(pl_rows),
            "n_downstream_rows": len(dl_rows),
            "converged": clf.game_.converged,
            "alpha_reached": alpha_reached,
            **_proxy_status(estimator, knobs, pl["z"]),
            "proxy_seconds": proxy_seconds,
            "group_names": names,
            # the additive tolerance ε_k = α·mean(z_k) of the smallest group
            "tolerance": float(getattr(estimator, "alpha_", knobs["alpha"])) * z_scale,
            # Algorithm 4: LP floor of linear G over the audit vectors found, and θ̄ on them
            "floor_additive": _first(getattr(estimator, "floor_", None)),
            "reached_additive": _first(getattr(estimator, "reached_", None)),
            **along_alpha,
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
        fairness_metric="true_group_gap",
        performance_metric="error",
        run_function=_run,
        description="Pre-processing for missing sensitive features: learn a proxy ẑ that is "
        "multiaccurate on the error regions of downstream classifiers, then train a fair "
        "classifier through ẑ; scored on the true groups.",
        reference="Diana, Gill, Kearns, Kenthapadi, Roth & Sharifi-Malvajerdi, FAccT 2022",
        paper="Multiaccurate Proxies for Downstream Fairness",
        version="8",  # 8: a kept step must beat the kept-out rows' sampling error
        sweep_grids=SWEEP_GRIDS,
        demo_tasks=(("adult", ("race",)), ("adult", ("sex",))),
        evidence=EVIDENCE,
        main_knob="alpha",
        promise=promise_held,
    )
)
