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
from fairengine.methods.base import RunResult
from fairengine.methods.multiaccurate_proxy import PROXIES
from fairengine.methods.multiaccurate_proxy.method import EPS_GRID

METHOD_NAME = "multiaccurate_proxy"


@st.cache_resource(show_spinner=False, max_entries=16)
def run(_train: Task, _test: Task, key: str, knobs: tuple[tuple[str, object], ...]) -> RunResult:
    """One run of ``multiaccurate_proxy`` (keyed by the task fingerprint and the knob values)."""
    del key
    return get_method(METHOD_NAME).run(_train, _test, **dict(knobs))


def frontiers(
    train: Task,
    test: Task,
    knobs: dict,
    store,
    progress: Callable[[int, int, dict], None] | None = None,
    eps: Sequence[float] = EPS_GRID,
) -> pd.DataFrame:
    """Points of the sweep ``eps`` × proxy (the other knobs fixed), cached in ``store``: the
    downstream frontier of every proxy (spec §5 plot 4)."""
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
