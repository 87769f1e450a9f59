"""The ``multiaccurate_proxy`` pipeline's data: the split of the training rows between the Proxy
Learner and the Downstream Learner, the proxy tasks, the group one-hots, the proxy fit (cached
across runs that differ only downstream) and the downstream comparison of every proxy."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from fairengine import metrics
from fairengine.lru import LRU

if TYPE_CHECKING:  # for annotations: the algorithm loads on a run
    import pandas as pd

    from fairengine.data import Task


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


def encoded(train: Task, task: Task | None = None) -> Any:
    """The feature encoder fitted on ``train`` (``task`` None), or every row of ``task`` encoded
    by it (n, d); each computed once per task in this process (shared by a sweep's points and
    the checks)."""
    from fairengine.data.encoding import FeatureEncoder
    from fairengine.methods.fitted import fitted_once

    if task is None:
        return fitted_once(
            ("multiaccurate encoder", train.fingerprint), lambda: FeatureEncoder().fit(train.X)
        )
    key = ("multiaccurate encoded", train.fingerprint, task.fingerprint)
    return fitted_once(key, lambda: encoded(train).transform(task.X))


def split_rows(train: Task, test: Task, knobs: dict[str, Any]):
    """Proxy-learner rows, downstream rows, test rows, the encoder and the group one-hot map."""
    rng = np.random.default_rng(knobs["random_state"])
    rows = knobs["max_rows"]
    order = rng.permutation(train.frame.shape[0])
    pl_rows = order[:rows]
    dl_rows = order[rows : 2 * rows] if len(order) > rows + 200 else order[:rows]
    test_rows = np.sort(rng.permutation(test.frame.shape[0])[:rows])
    onehot, names = group_onehot(train, knobs["grouping"])
    return pl_rows, dl_rows, test_rows, encoded(train), onehot, names


def data_part(
    train: Task, task: Task, idx: np.ndarray, onehot: np.ndarray, n_tasks: int
) -> dict[str, Any]:
    """Rows ``idx`` of ``task``: encoded X, y, the group one-hots z and the proxy tasks."""
    y = task.y[idx].astype(float)
    tasks, task_names = make_tasks(train, task.X.iloc[idx], y, n_tasks)
    return {
        "X": encoded(train, task)[idx],
        "y": y,
        "z": onehot[task.groups[idx]],
        "tasks": tasks,
        "task_names": task_names,
    }


def run_parts(train: Task, test: Task, knobs: dict[str, Any]) -> tuple:
    """(proxy-learner rows, downstream rows, test rows (each as :func:`data_part`), the group
    names): they depend only on the rows and on the seed, row cap, task count and grouping, so
    a sweep builds them once per task. Read-only."""
    from fairengine.methods.fitted import fitted_once

    def build() -> tuple:
        pl_rows, dl_rows, test_rows, _, onehot, names = split_rows(train, test, knobs)
        rows = ((train, pl_rows), (train, dl_rows), (test, test_rows))
        return (*(data_part(train, t, i, onehot, knobs["n_tasks"]) for t, i in rows), names)

    knob_key = tuple(knobs[k] for k in ("random_state", "max_rows", "n_tasks", "grouping"))
    return fitted_once(
        ("multiaccurate parts", train.fingerprint, test.fingerprint, *knob_key), build
    )


def fit_downstream(knobs: dict[str, Any], dl: dict[str, Any], soft: np.ndarray) -> Any:
    """The downstream fair classifier of ``knobs`` on the downstream rows ``dl``, seeing the soft
    groups ``soft``."""
    from fairengine.methods.multiaccurate_proxy.downstream import ProxyFairClassifier

    return ProxyFairClassifier(
        eps=knobs["eps"],
        constraint=knobs["constraint"],
        max_iter=knobs["dl_iter"],
        learner=knobs["dl_learner"],
    ).fit(dl["X"], dl["y"], soft)


def downstream_comparison(
    train: Task, test: Task, knobs: dict[str, Any], proxies: tuple[str, ...]
) -> dict[str, dict[str, float]]:
    """For each proxy of ``proxies``, the same pipeline as a run of ``knobs`` (same rows, same
    downstream knobs) down to the downstream classifier only: its true-group gap and expected
    error on every test row, and its scores (P(ŷ = 1) per test row). The proxies' fits are
    shared with the runs (:func:`proxy_for`)."""
    from threadpoolctl import threadpool_limits

    pl, dl, _, _ = run_parts(train, test, knobs)
    onehot, _ = group_onehot(train, knobs["grouping"])
    out = {}
    with threadpool_limits(limits=1, user_api="blas"):
        test_x, test_z, test_y = encoded(train, test), onehot[test.groups], test.y
        for proxy in proxies:
            estimator, _ = proxy_for(train, {**knobs, "proxy": proxy}, pl, test)
            soft = dl["z"] if estimator is None else estimator.predict_proba(dl["X"])
            score = fit_downstream(knobs, dl, soft).predict_score(test_x)
            gap = metrics.true_group_gap(test_z, test_y, score, knobs["constraint"])
            error = float(np.mean(score * (1 - test_y) + (1 - score) * test_y))
            out[proxy] = {"true_group_gap": gap, "error": error, "score": score}
    return out


def group_onehot(train: Task, grouping: str) -> tuple[np.ndarray, list[str]]:
    """(map from a task's group code to its one-hot row over the groups the method treats,
    their names as column = value): every group (``"all"``), or the largest training group
    against the rest (the other group when there are two)."""
    from fairengine.methods.fitted import fitted_once

    return fitted_once(
        ("multiaccurate groups", train.fingerprint, grouping), lambda: _onehot(train, grouping)
    )


def _onehot(train: Task, grouping: str) -> tuple[np.ndarray, list[str]]:
    from fairengine.data.groups import group_label

    names = [group_label(train.sensitive, str(g)) for g in train.group_names]
    if grouping == "all":
        return np.eye(len(names)), names
    largest = int(np.argmax(np.bincount(train.groups, minlength=len(names))))
    onehot = np.zeros((len(names), 2))
    onehot[:, 1] = 1.0
    onehot[largest] = (1.0, 0.0)
    if len(names) == 2:
        return onehot, [names[largest], names[1 - largest]]
    if len(train.sensitive) == 1:
        return onehot, [names[largest], f"{train.sensitive[0]} ≠ {train.group_names[largest]}"]
    return onehot, [names[largest], f"not ({names[largest]})"]


def fit_proxy(X: np.ndarray, z: np.ndarray, tasks: np.ndarray, knobs: dict[str, Any]):
    """The proxy estimator of ``knobs["proxy"]`` fitted on the proxy learner's data (None for
    the true groups)."""
    from fairengine.methods.multiaccurate_proxy.baseline import BaselineProxy
    from fairengine.methods.multiaccurate_proxy.general import GeneralMultiaccurateProxy
    from fairengine.methods.multiaccurate_proxy.linear import MultiaccurateProxy

    kind = knobs["proxy"]
    fit_tasks = None if knobs["task_mode"] == "class" else tasks
    game = {name: knobs[name] for name in ("alpha", "C", "n_iter", "auditor", "random_state")}
    game["auditor_depth"] = 3 if fit_tasks is None else 2
    if kind == "multiaccurate":
        proxy = MultiaccurateProxy(learning_rate=knobs["learning_rate"], **game)
        return proxy.fit(X, z, fit_tasks)
    if kind == "multiaccurate_tree":
        proxy = GeneralMultiaccurateProxy(max_depth=knobs["tree_depth"], **game)
        return proxy.fit(X, z, fit_tasks)
    if kind == "true":
        return None
    return BaselineProxy(kind).fit(X, z)


#: Fitted proxies of recent runs: a sweep over the downstream knobs (ε, constraint) refits only
#: the downstream learner [OURS; in-process, small].
_PROXY_CACHE: LRU[tuple[Any, float]] = LRU(8)


def _timed(fit: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    estimator = fit()
    return estimator, time.perf_counter() - start


def proxy_for(
    train: Task, knobs: dict[str, Any], pl: dict[str, Any], test: Task | None = None
) -> tuple[Any, float]:
    """(the proxy of ``knobs`` fitted on the proxy rows ``pl``, seconds its fit took), cached.

    Only Algorithm 2's fit depends on α: Algorithm 4's game does not (α only picks a point of
    its path), so its fit is shared by every α, as are the comparison proxies'; the thresholded
    proxy is the regression proxy's fit, thresholded. Algorithm 4's fit, the costly one, is
    also kept in the run store when ``test`` is given (:mod:`.stored`): a fresh process reuses
    it.
    """
    import copy

    from fairengine.methods.multiaccurate_proxy.stored import stored_proxy

    kind = knobs["proxy"]
    shared = dict(knobs) if kind == "multiaccurate_tree" else {**knobs, "alpha": 0.0}
    if kind == "thresholded":
        shared["proxy"] = "regression"
    key = (train.fingerprint, *(shared[k] for k in PROXY_KNOBS))

    def fit() -> tuple[Any, float]:
        return _timed(lambda: fit_proxy(pl["X"], pl["z"], pl["tasks"], shared))

    if kind == "multiaccurate" and test is not None:
        estimator, seconds = _PROXY_CACHE.compute(
            key, lambda: stored_proxy(train, test, key[1:], fit)
        )
    else:
        estimator, seconds = _PROXY_CACHE.compute(key, fit)
    if kind == "multiaccurate":
        estimator = estimator.at_alpha(knobs["alpha"])
    elif kind == "thresholded":
        estimator = copy.copy(estimator)
        estimator.kind = "thresholded"
    return estimator, seconds
