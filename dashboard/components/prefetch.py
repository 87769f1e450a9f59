"""Speculative neighbours: once a method page shows its result, the runs one knob step away are
computed as background jobs, so that moving a knob by one step is served from the run store.

:func:`after_result` (called by :func:`~dashboard.components.runner.run_panel`) submits at most
:func:`prefetch_jobs` settings one widget step away, each as the page's own
:func:`~fairengine.frontier.runs.compute_and_store` call (a visitor asking for that setting takes
the job over); waiting jobs that no longer neighbour the page are dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from dashboard.components import services
from dashboard.components.deploy import demo_mode
from dashboard.components.jobs import JobPool
from fairengine import settings
from fairengine.data import Task
from fairengine.frontier import task_key
from fairengine.frontier.runs import RunStore, compute_and_store, run_key
from fairengine.methods.base import Knob, KnobError, Method
from fairengine.methods.knob_steps import neighbours

#: Background jobs one page view may start (outside demo mode): both neighbours of two knobs.
PREFETCH_JOBS = 4


def prefetch_jobs() -> int:
    """``$FAIRENGINE_PREFETCH`` (0 = off), else :data:`PREFETCH_JOBS`, or 0 in demo mode."""
    value = settings.current().prefetch
    if value is None:
        return 0 if demo_mode() else PREFETCH_JOBS
    return value


def _order(
    knobs: Mapping[str, Knob], values: Mapping, previous: Mapping | None, main: str | None
) -> list[str]:
    """Knob names in the order their neighbours are wanted: changed since ``previous``, the
    ``main`` knob, the sliders in view, those in the Advanced expander, the rest."""
    changed = [n for n in knobs if previous is not None and previous.get(n, values[n]) != values[n]]
    first = changed + ([main] if main in knobs and main not in changed else [])
    sliders = [n for n in knobs if knobs[n].kind in ("int", "float") and n not in first]
    sliders.sort(key=lambda n: knobs[n].advanced)  # stable: the page's order within each
    return first + sliders + [n for n in knobs if n not in first and n not in sliders]


def _widgets(
    method: Method, values: Mapping[str, Any], drawn: Mapping[str, tuple[Knob, Any]]
) -> dict[str, tuple[Knob, Any]]:
    """Per knob shown: (the knob as its widget moves, the widget's value): the widget the page
    ``drawn`` for it when it holds this value or has a range of the page's own (e.g.
    multiaccurate proxies' α over the range its runs reached), else the declared knob (in demo
    mode its demo range). A knob without a widget, while the page drew others, takes no step."""
    declared = {knob.name: knob for knob in method.knobs}
    out = {}
    for name in values:
        if name not in declared or (drawn and name not in drawn):
            continue
        knob = declared[name].for_demo() if demo_mode() else declared[name]
        widget, chosen = drawn.get(name, (None, None))
        own_range = widget is not None and (widget.low, widget.high) != (knob.low, knob.high)
        if widget is not None and (chosen == values[name] or own_range):
            out[name] = (widget, chosen)
        else:
            out[name] = (knob, values[name])
    return out


def neighbour_settings(
    method: Method,
    values: Mapping[str, Any],
    previous: Mapping | None,
    limit: int,
    drawn: Mapping[str, tuple[Knob, Any]] | None = None,
) -> list[dict[str, Any]]:
    """At most ``limit`` validated settings of ``method`` one widget step away from ``values``
    (``drawn``: the widgets the page drew, see :func:`_widgets`), the knob changed last first,
    in the direction it moved (see :func:`_order`)."""
    widgets = _widgets(method, values, drawn or {})
    knobs = {name: knob for name, (knob, _) in widgets.items()}
    found: list[dict[str, Any]] = []
    for name in _order(knobs, values, previous, method.main_knob):
        knob, at = widgets[name]
        steps = list(neighbours(knob, at))
        before = None if previous is None else previous.get(name)
        number = isinstance(before, int | float) and not isinstance(before, bool)
        if number and before > values[name]:
            steps.reverse()  # moved down last time: down first
        for value in steps:
            try:
                setting = method.validate_knobs({**values, name: value})
            except (KnobError, ValueError, TypeError):
                continue
            if setting not in found and setting != values:
                found.append(setting)
            if len(found) >= limit:
                return found
    return found


def stored(store: RunStore, tkey: str, method: str, key: str) -> bool:
    """True if the run store (writable or shipped) holds a run file under ``key``."""
    return any(
        store.path(tkey, method, key, root=root).is_file()
        for root in (store.root, *store.read_only)
    )


def submit_neighbours(
    pool: JobPool,
    store: RunStore,
    session: str,
    run: tuple[str, Task, Task, Mapping | None, Callable | None],
    settings: list[dict[str, Any]],
) -> list[str]:
    """Submit a background job for each of ``settings`` not stored yet (``run``: method name,
    train, test, extra, function, as the page runs them); drop the session's waiting
    background jobs for other settings. Returns the keys submitted (or already running)."""
    method, train, test, extra, function = run
    tkey = task_key(train, test)
    wanted = {run_key(tkey, method, knobs, extra): knobs for knobs in settings}
    for job in pool.active(session):
        if job.background and job.started is None and job.key not in wanted:
            pool.cancel(job)
    submitted = []
    for key, knobs in wanted.items():
        if stored(store, tkey, method, key):
            continue
        args = (store, method, train, test, dict(knobs), dict(extra) if extra else None, function)
        pool.submit_background(session, key, compute_and_store, *args)
        submitted.append(key)
    return submitted


def after_result(
    slot: str,
    method: str,
    train: Task,
    test: Task,
    knobs: Mapping[str, Any],
    extra: Mapping[str, Any] | None = None,
    function: Callable[..., Any] | None = None,
) -> None:
    """A page has drawn its result for ``knobs``: compute the settings one knob step away in
    the background, once per knob setting and session."""
    limit = prefetch_jobs()
    if limit <= 0:
        return
    import streamlit as st

    from dashboard.components.knobs import drawn_knobs
    from fairengine.methods import get_method

    drawn = dict(drawn_knobs())
    drawn_knobs().clear()  # read once: the next page run draws its own
    memo = st.session_state.setdefault(f"prefetch.{slot}", {})
    setting = services.result_key(slot)  # the task, method, knobs and extras shown
    if memo.get("setting") == setting:
        return
    previous = memo.get("knobs")
    memo.update(setting=setting, knobs=dict(knobs))
    found = neighbour_settings(get_method(method), knobs, previous, limit, drawn)
    run = (method, train, test, extra, function)
    pool, store = services.job_pool(), services.run_store()
    submit_neighbours(pool, store, services.session_id(), run, found)
