"""Cached engine calls of the multiaccurate proxies page (the page itself computes nothing)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

import pandas as pd
import streamlit as st

from dashboard.components.cached import model_file  # noqa: F401  (one definition)
from fairengine.data import Task
from fairengine.methods import get_method
from fairengine.methods.multiaccurate_proxy import PROXIES
from fairengine.methods.multiaccurate_proxy.method import EPS_GRID

METHOD_NAME = "multiaccurate_proxy"


def frontiers(
    train: Task,
    test: Task,
    knobs: dict,
    store,
    progress: Callable[[int, int, dict], None] | None = None,
    eps: Sequence[float] = EPS_GRID,
) -> pd.DataFrame:
    """Points of the sweep ``eps`` × proxy (the other knobs fixed), cached in ``store``: the
    downstream frontier of every proxy."""
    from fairengine.frontier import sweep

    fixed = {k: [v] for k, v in knobs.items() if k not in ("eps", "proxy")}
    grid = {"proxy": list(PROXIES), "eps": list(eps), **fixed}
    return sweep(METHOD_NAME, train, test, grid, store=store, progress=progress).points


@st.cache_resource(show_spinner=False)
def _complete() -> tuple[OrderedDict, threading.Lock]:
    """Complete sweeps by (task, fixed knobs, store), shared by every session (a small LRU), and
    the lock its users hold (sessions run in threads of their own)."""
    return OrderedDict(), threading.Lock()


def cached_frontiers(
    train: Task, test: Task, knobs: dict, store, eps: Sequence[float] = EPS_GRID
) -> pd.DataFrame | None:
    """The sweep's points if every one is already in ``store`` (e.g. the shipped demo), else
    None — so the page can show them without a click and without computing.

    A complete sweep is read from the store once per server and then shared by every session
    (points are only ever added, so a complete sweep stays complete); an incomplete one is
    checked again on the next view (up to its first missing point)."""
    from fairengine.frontier import task_key

    tkey = task_key(train, test)
    fixed = sorted((k, v) for k, v in knobs.items() if k not in ("eps", "proxy"))
    memo_key = repr((tkey, fixed, repr(store), tuple(eps)))
    memo, lock = _complete()
    with lock:
        if memo_key in memo:
            memo.move_to_end(memo_key)
            return memo[memo_key]
    points = _read_complete(train, test, knobs, store, tkey, eps)
    if points is not None:
        with lock:
            memo[memo_key] = points
            while len(memo) > 16:
                memo.popitem(last=False)
    return points


def _read_complete(
    train: Task, test: Task, knobs: dict, store, tkey: str, eps_grid: Sequence[float]
) -> pd.DataFrame | None:
    method = get_method(METHOD_NAME)
    # which points exist, from the manifests (cheap); the sweep then reads them verified
    stored = {point.key for point in store.points(tkey, METHOD_NAME)}
    for proxy in PROXIES:
        for eps in eps_grid:
            settings = method.validate_knobs({**knobs, "proxy": proxy, "eps": eps})
            if store.key(tkey, METHOD_NAME, settings) not in stored:
                return None
    return frontiers(train, test, knobs, store, eps=eps_grid)


# ------------------------------------------------------------- spread across row splits

#: Row-split seeds (the ``random_state`` knob) of the spread shown on the page.
SPREAD_SEEDS = (0, 1, 2, 3, 4)
#: The pipelines compared across splits: the proxy the downstream learner is trained through.
SPREAD_PROXIES = ("multiaccurate", "thresholded", "regression", "true")


def spread_grid(knobs: dict) -> dict[str, list]:
    """The sweep of the spread: every compared proxy at every split seed, other knobs fixed."""
    fixed = {k: [v] for k, v in knobs.items() if k not in ("proxy", "random_state")}
    return {"proxy": list(SPREAD_PROXIES), "random_state": list(SPREAD_SEEDS), **fixed}


def spread(
    train: Task,
    test: Task,
    knobs: dict,
    store,
    progress: Callable[[int, int, dict], None] | None = None,
) -> pd.DataFrame:
    """Points of the spread sweep (cached in ``store``, shared with the Compare page)."""
    from fairengine.frontier import sweep

    return sweep(
        METHOD_NAME, train, test, spread_grid(knobs), store=store, progress=progress
    ).points


def cached_spread(train: Task, test: Task, knobs: dict, store) -> pd.DataFrame | None:
    """The spread's points if every one is already in ``store``, else None (nothing computed)."""
    from fairengine.frontier import task_key

    method = get_method(METHOD_NAME)
    tkey = task_key(train, test)
    stored = {point.key for point in store.points(tkey, METHOD_NAME)}
    for proxy in SPREAD_PROXIES:
        for seed in SPREAD_SEEDS:
            settings = method.validate_knobs({**knobs, "proxy": proxy, "random_state": seed})
            if store.key(tkey, METHOD_NAME, settings) not in stored:
                return None
    return spread(train, test, knobs, store)


def spread_summary(points: pd.DataFrame) -> pd.DataFrame:
    """Per proxy: mean and sd over the split seeds of the test true-group gap and test error."""
    test = points[points["split"] == "test"]
    grouped = test.groupby("proxy")[["true_group_gap", "error"]]
    table = grouped.agg(["mean", "std", "count"])
    table.columns = [f"{metric} {stat}" for metric, stat in table.columns]
    order = [p for p in SPREAD_PROXIES if p in table.index]
    return table.loc[order].reset_index()


# ------------------------------------------------------------- the α slider's range


def alpha_range_key(task_fingerprint: str, knobs: dict) -> str:
    """Session key of the α range learned for this task and these proxy knobs (not α)."""
    from fairengine.methods.multiaccurate_proxy.method import PROXY_KNOBS

    return repr((task_fingerprint, [(k, knobs.get(k)) for k in PROXY_KNOBS if k != "alpha"]))


def alpha_knob(knob, alpha_range: list[float] | None):
    """The α knob with the range the runs computed for these rows: [lowest reachable, OLS
    start], rounded outwards to the slider's 0.001 step (so its lower end is still reached);
    its lower end stands for α = 0, "the lowest reachable". None: the declared knob."""
    import dataclasses
    import math

    if not alpha_range:
        return knob
    low = math.ceil(alpha_range[0] * 1000) / 1000
    high = max(math.ceil(alpha_range[1] * 1000) / 1000, low + 0.001)
    return dataclasses.replace(knob, default=low, low=low, high=high, step=0.001, log=False)
