"""The one sweep panel of every method page: a grid the method declares (``Method.sweep_grids``,
the same one ``fairengine sweep`` runs), the page's other knobs fixed, run in the shared worker
pool (:func:`dashboard.components.runner.sweep_panel`) unless every point is already stored.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
import streamlit as st

from dashboard.components import cached, runner
from dashboard.components.deploy import demo_thin
from fairengine.data import Task
from fairengine.frontier import sweep, task_key
from fairengine.frontier.sweep import sweep_settings
from fairengine.lru import LRU
from fairengine.methods.base import Method
from fairengine.methods.registry import portable
from fairengine.textsafe import md_text


@dataclass(frozen=True)
class GridSweep:
    """What a page sweeps and how it words it.

    Attributes
    ----------
    axis : str
        The knob the sweep is over (the one thinned in demo mode).
    what : str
        Its words in the button ("Sweep ε"), the progress ("Sweeping ε") and the caption.
    grid : str
        The method's named grid (``"page"`` by default).
    values : mapping
        Values that replace the grid's for some knobs (e.g. the approaches the visitor chose).
    button, label, note : str
        Override the button's words, the progress words, and the caption shown before the
        sweep ran.
    """

    axis: str
    what: str
    grid: str = "page"
    values: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    button: str = ""
    label: str = ""
    note: str = ""


def sweep_request(method: Method, knobs: Mapping[str, Any], spec: GridSweep) -> dict[str, list]:
    """The sweep a page asks for: the knobs of the method's named grid over their values (or
    ``spec.values``), every other knob fixed at ``knobs``."""
    swept = {name: list(values) for name, values in method.grid(spec.grid).items()}
    swept.update({name: list(values) for name, values in spec.values.items()})
    return {**swept, **{name: [v] for name, v in knobs.items() if name not in swept}}


def grid_sweep(
    method: Method, train: Task, test: Task, knobs: Mapping[str, Any], spec: GridSweep
) -> pd.DataFrame | None:
    """The points (train and test rows) of the page's sweep once all are stored, else None
    (the sweep button, its progress or a caption drawn instead)."""
    swept = tuple({**method.grid(spec.grid), **spec.values})
    grid = sweep_request(method, knobs, spec)
    per_value = math.prod(len(grid[name]) for name in swept) // len(grid[spec.axis])
    grid[spec.axis] = list(demo_thin(grid[spec.axis], spec.what, per_value=per_value))
    store = cached.frontier_store()
    points = stored_points(method, train, test, grid)
    if points is not None:
        return points
    slot = method.name if spec.grid == "page" else f"{method.name}_{spec.grid}"
    n_points = math.prod(len(grid[name]) for name in swept)
    if runner.sweep_panel(
        slot,
        spec.label or f"Sweeping {spec.what}",
        f"{spec.grid}{task_key(train, test)}{sorted(grid.items())}",
        sweep,
        portable(method),
        train,
        test,
        grid,
        store=store,
        button=spec.button or f"Sweep {spec.what}",
        n_points=n_points,
    ):
        return sweep(method.name, train, test, grid, store=store).points
    st.caption(
        spec.note
        or f"Sweeps {spec.what} over {md_text(', '.join(map(str, grid[spec.axis])))} with the "
        "other knobs fixed; points are cached and appear on the Compare page too."
    )
    return None


@st.cache_resource(show_spinner=False)
def _complete() -> tuple[LRU, threading.Lock]:
    """Complete sweeps by (task, grid, store), shared by every session (a small LRU), and the
    lock its users hold (sessions run in threads of their own)."""
    return LRU(16), threading.Lock()


def stored_points(
    method: Method, train: Task, test: Task, grid: Mapping[str, list]
) -> pd.DataFrame | None:
    """The sweep's points if every one is already stored, else None — so the page shows them
    without a click and without computing.

    A complete sweep is read once per server and then shared by every session (points are only
    ever added, so a complete sweep stays complete); an incomplete one is checked again on the
    next view, from the stores' manifests (cheap)."""
    store = cached.frontier_store()
    tkey = task_key(train, test)
    memo_key = repr((tkey, method.name, sorted(grid.items()), repr(store)))
    memo, lock = _complete()
    with lock:
        if memo_key in memo:
            return memo.get(memo_key)
    stored = {point.key for point in store.points(tkey, method.name)}
    try:
        settings = sweep_settings(method, train, test, grid)
    except ValueError:  # a knob out of range: the sweep button says so in words
        return None
    if any(store.key(tkey, method.name, knobs) not in stored for knobs in settings):
        return None
    points = sweep(method.name, train, test, grid, store=store).points
    with lock:
        return memo.put(memo_key, points)
