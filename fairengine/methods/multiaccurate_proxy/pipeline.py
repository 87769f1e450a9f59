"""The ``multiaccurate_proxy`` pipeline's data: the split of the training rows between the Proxy
Learner and the Downstream Learner, the proxy tasks, the group one-hots, the proxy fit (cached
across runs that differ only downstream, and Algorithm 4's in the run store: :func:`stored_proxy`)
and the downstream comparison of every proxy."""

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
    from fairengine.methods.multiaccurate_proxy.linear import MultiaccurateProxy


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
    from fairengine.methods.multiaccurate_proxy.general import (
        BaselineProxy,
        GeneralMultiaccurateProxy,
    )
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


def proxy_for(
    train: Task, knobs: dict[str, Any], pl: dict[str, Any], test: Task | None = None
) -> tuple[Any, float]:
    """(the proxy of ``knobs`` fitted on the proxy rows ``pl``, seconds its fit took), cached.

    Only Algorithm 2's fit depends on α: Algorithm 4's game does not (α only picks a point of
    its path), so its fit is shared by every α, as are the comparison proxies'; the thresholded
    proxy is the regression proxy's fit, thresholded. Algorithm 4's fit, the costly one, is
    also kept in the run store when ``test`` is given (:func:`stored_proxy`): a fresh process reuses
    it.
    """
    import copy

    kind = knobs["proxy"]
    shared = dict(knobs) if kind == "multiaccurate_tree" else {**knobs, "alpha": 0.0}
    if kind == "thresholded":
        shared["proxy"] = "regression"
    key = (train.fingerprint, *(shared[k] for k in PROXY_KNOBS))

    def fit() -> tuple[Any, float]:
        start = time.perf_counter()
        estimator = fit_proxy(pl["X"], pl["z"], pl["tasks"], shared)
        return estimator, time.perf_counter() - start

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


#: Bumped when the stored state's layout changes (older entries are then never read).
STATE_FORMAT = 1
#: The constructor parameters of the proxy, stored as plain values.
_PARAMS = (
    "alpha", "C", "n_iter", "learning_rate", "auditor", "radius", "random_state",
    "auditor_depth", "precondition", "early_stop", "validation",
)  # fmt: skip
#: What the fit leaves besides the parameters (the rest is set by ``_select`` from these).
_FITTED = (
    "n_features_in_", "paths_", "scales_", "n_groups_", "n_validation_", "kept_out_error_",
    "_chain", "refitted_", "_candidate_ratio", "_candidate_held_out", "alpha_range_",
    "held_out_range_", "n_alpha_steps_",
)  # fmt: skip


def proxy_state(proxy: MultiaccurateProxy, seconds: float) -> dict[str, Any]:
    """The fitted state of ``proxy`` (whose fit took ``seconds``) as plain data."""
    state = {name: getattr(proxy, name) for name in (*_PARAMS, *_FITTED)}
    state["paths_"] = {
        int(k): {**vars(entry), "regions": tuple(entry.regions)}
        for k, entry in proxy.paths_.items()
    }
    state["scales_"] = {int(k): float(v) for k, v in proxy.scales_.items()}
    state["_chain"] = [int(i) for i in proxy._chain]
    return {"format": STATE_FORMAT, "seconds": float(seconds), "state": state}


def _float_array(value: Any, shape: tuple[int | None, ...]) -> bool:
    """A float64 array of ``shape`` (None: any length on that axis)."""
    if not isinstance(value, np.ndarray) or value.dtype != np.float64 or value.ndim != len(shape):
        return False
    return all(want is None or got == want for got, want in zip(value.shape, shape, strict=True))


def _valid_path(entry: Any, width: int, length: int) -> bool:
    """One group's stored game: its path of ``length`` candidates of ``width`` coefficients,
    their trace and audited violations, and the error regions found."""
    if not isinstance(entry, dict) or set(entry) != {"path", "trace", "audited", "regions"}:
        return False
    regions = entry["regions"]
    return (
        _float_array(entry["path"], (length, width))
        and bool(np.all(np.isfinite(entry["path"])))
        and _float_array(entry["trace"], (length,))
        and _float_array(entry["audited"], (length,))
        and isinstance(regions, tuple)
        and len(regions) == 4
        and _float_array(regions[0], (None, width))
        and _float_array(regions[1], (len(regions[0]),))
        and _float_array(regions[2], (width,))
        and isinstance(regions[3], float)
    )


def valid_state(value: Any) -> bool:
    """Whether a stored entry is a proxy state of this format with consistent shapes and types
    (the run file's checksums were verified before; this refuses an entry of another layout)."""
    if not isinstance(value, dict) or value.get("format") != STATE_FORMAT:
        return False
    state = value.get("state")
    if not isinstance(state, dict) or set(state) != {*_PARAMS, *_FITTED}:
        return False
    counts = (state["n_features_in_"], state["n_groups_"], state["n_validation_"])
    if not isinstance(value.get("seconds"), float) or not all(type(c) is int for c in counts):
        return False
    ratio, chain = state["_candidate_ratio"], state["_chain"]
    length = len(ratio) if isinstance(ratio, np.ndarray) else -1
    paths, scales = state["paths_"], state["scales_"]
    return (
        _float_array(ratio, (length,))
        and _float_array(state["_candidate_held_out"], (length,))
        and isinstance(chain, list)
        and bool(chain)
        and all(isinstance(i, int) and 0 <= i < length for i in chain)
        and isinstance(paths, dict)
        and bool(paths)
        and isinstance(scales, dict)
        and set(scales) == set(paths)
        and all(isinstance(s, float) and s > 0 for s in scales.values())
        and all(_valid_path(e, state["n_features_in_"] + 1, length) for e in paths.values())
    )


def proxy_from_state(value: dict[str, Any]) -> tuple[MultiaccurateProxy, float]:
    """(the proxy a :func:`valid_state` entry describes, selected at its own α, the seconds its
    fit took). Raises ``ValueError`` or ``TypeError`` for parameters the proxy refuses."""
    from fairengine.methods.multiaccurate_proxy.linear import GroupPath, MultiaccurateProxy
    from fairengine.methods.params import validate_params

    state = value["state"]
    proxy = MultiaccurateProxy(**{name: state[name] for name in _PARAMS})
    validate_params(proxy)
    for name in _FITTED:
        setattr(proxy, name, state[name])
    if not isinstance(proxy.auditor, str) or proxy.n_groups_ < 2:
        raise ValueError("A stored proxy names an auditor object or has fewer than two groups.")
    proxy.paths_ = {k: GroupPath(**entry) for k, entry in state["paths_"].items()}
    return proxy._select(proxy.alpha), value["seconds"]


def stored_proxy(
    train: Task, test: Task, key: tuple, fit: Callable[[], tuple[Any, float]]
) -> tuple[Any, float]:
    """(the proxy of ``key`` on these rows, the seconds its fit took): read from the run store
    (inside :func:`~fairengine.methods.evidence_fits.stored_fits`) when it holds an entry that
    :func:`valid_state` accepts and :func:`proxy_from_state` can build, else ``fit()`` (then
    kept there)."""
    from fairengine.methods import get_method
    from fairengine.methods.evidence_fits import stored_table

    version = get_method("multiaccurate_proxy").version
    full_key = ("multiaccurate_proxy.proxy", version, STATE_FORMAT, *key)
    found: list[tuple[Any, float]] = []

    def compute() -> dict[str, Any]:
        found.append(fit())
        return proxy_state(*found[-1])

    def usable(value: Any) -> bool:
        if not valid_state(value):
            return False
        try:
            found.append(proxy_from_state(value))
        except (ValueError, TypeError, KeyError, IndexError, AttributeError):
            return False
        return True

    stored_table(train, test, full_key, compute, usable)
    return found[-1]
