"""The one run model of every method page: where a result comes from and when it is computed.

:func:`run_panel` returns the result to draw for a page's knobs: from the in-process memo or the
run store when computed before, else from a job in the shared pool (live when the page's last fit
was cheap, else on **Run**), keeping the last result and polling the job meanwhile.
:func:`sweep_panel` does the same for a sweep, one call per point (:func:`sweep_calls`). See
"The dashboard's run model" in ``docs/architecture.md``; demo caps come from :mod:`.deploy`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from concurrent import futures
from dataclasses import dataclass
from typing import Any

import streamlit as st

from dashboard.components import prefetch
from dashboard.components.deploy import demo_knobs, limits
from dashboard.components.evidence import show_evidence
from dashboard.components.job_state import Job, ServerBusy
from dashboard.components.jobs import discard
from dashboard.components.services import (
    client_address,
    job_pool,
    run_store,
    session_id,
    slot_state,
)
from dashboard.components.state import stop_page
from dashboard.components.waiting import (
    POLL,
    poll_seconds,
    seconds_left,
    slow_down,
    waiting,
    waiting_text,
)
from fairengine import settings
from fairengine.data import DataError, Task
from fairengine.data.registry import DATASETS
from fairengine.frontier import sweep, task_key
from fairengine.frontier.runs import compute_and_store, run_key
from fairengine.frontier.sweep import sweep_settings
from fairengine.lru import LRU
from fairengine.methods import get_method
from fairengine.methods.base import Method, RunResult
from fairengine.methods.registry import portable
from fairengine.textsafe import md_text


@st.cache_resource(show_spinner=False)
def _memo() -> LRU:
    """Recent results by run key, shared by sessions."""
    return LRU(24)


def _wait(job: Job) -> None:
    """Give a just-submitted job a moment, so a quick one is drawn without polling."""
    futures.wait([job.future], timeout=settings.current().run_wait)


def show_job(job_id: int, slot: str) -> None:
    """Progress of a pending job and its Cancel, in a fragment polled every
    :func:`poll_seconds` (the rest of the page stays as it is); reruns the page when the job
    ends. A poll reads only what the job last reported: no store, no dataset."""
    pool = job_pool()
    job = pool.get(job_id)
    age = None if job is None else time.time() - job.submitted
    every = POLL if job is None else poll_seconds(pool.queue_position(job), pool.workers, age)

    @st.fragment(run_every=every)
    def _poll() -> None:
        pool = job_pool()
        job = pool.get(job_id)
        if job is None or job.done or slow_down(job, every):
            st.rerun()
        fraction, text = waiting_text(waiting(pool, job))
        if fraction is None:
            st.info(text, icon=":material/hourglass_top:")
        else:
            st.progress(fraction, text=text)
        if st.button("Cancel", key=f"runner.cancel.{slot}", icon=":material/cancel:"):
            pool.cancel(job)
            st.session_state[f"runner.cancelled.{slot}"] = job.key
            st.rerun()

    _poll()


def _submit(
    label: str,
    key: str,
    function: Callable[..., Any] | None,
    *args: Any,
    parts: list[tuple[Callable[..., Any], tuple, dict[str, Any]]] | None = None,
    **kwargs: Any,
) -> Job | None:
    """Submit a job for this session (``parts``: a job of several calls, see
    :meth:`JobPool.submit_parts`); None (and the pool's words on the page) when the server is
    busy."""
    pool, session, client = job_pool(), session_id(), client_address()
    try:
        if parts is not None:
            return pool.submit_parts(session, label, key, parts, client=client)
        return pool.submit(session, label, key, function, *args, client=client, **kwargs)
    except ServerBusy as exc:
        st.warning(md_text(exc), icon=":material/hourglass_disabled:")
        return None


def demo_notice(changed: Sequence[str]) -> None:
    """Say which knob values this demo lowered (nothing when none was)."""
    if changed:
        st.warning(
            f"This demo runs smaller fits: {md_text('; '.join(changed))}. Install fairengine "
            "locally for the full range."
        )


@dataclass(frozen=True)
class _Fit:
    """One fit a page asks :func:`run_panel` for: what to compute and under which keys."""

    slot: str
    method: str
    train: Task
    test: Task
    knobs: Mapping[str, Any]
    extra: Mapping[str, Any] | None
    function: Callable[..., RunResult] | None
    label: str
    key: str
    tkey: str


def run_panel(
    slot: str,
    method: str,
    train: Task,
    test: Task,
    knobs: Mapping[str, Any],
    *,
    label: str,
    extra: Mapping[str, Any] | None = None,
    function: Callable[..., RunResult] | None = None,
) -> RunResult:
    """The result to draw for ``knobs`` (see the module docstring); draws the run controls and,
    at the top of the result, its checks and baselines (:mod:`.evidence`).

    Ends the page (after drawing the progress) when there is nothing to show yet. In demo mode
    a knob value beyond its demo range (e.g. from an old session) is lowered, with a notice.
    """
    if limits().demo:
        knobs, changed = demo_knobs(get_method(method).knobs, knobs)
        demo_notice(changed)
    tkey = task_key(train, test)
    key = run_key(tkey, method, knobs, extra)
    fit = _Fit(slot, method, train, test, knobs, extra, function, label, key, tkey)
    state = slot_state(slot)
    # the pool (and its worker processes) starts with the first job, not with a page view
    job = _current_job(state, key)
    result = _memo().get(key)
    if result is None and (result := run_store().get(tkey, method, knobs, extra)) is not None:
        _memo().put(key, result)
    for notice in run_store().notices:  # a cache folder not used: others could write it
        st.caption(":material/folder_off: " + md_text(notice))
    last = state.get("result") if state.get("tkey") == tkey else None
    if result is None and job is not None:
        result, job = _outcome(fit, state, job)
    if result is None and job is None:
        job = _start(fit, state, last)
        if job is not None:
            result, job = _outcome(fit, state, job)
    if result is None:
        return _previous(fit, job, last)
    state.pop("job", None)
    state.update(key=key, tkey=tkey, result=result)
    if isinstance(portable(get_method(method)), str):  # a fresh process finds the method by name
        prefetch.after_result(slot, method, train, test, knobs, extra, function)
    return show_evidence(result, train, test)


def _current_job(state: dict, key: str) -> Job | None:
    """The job this slot submitted, if it is still for ``key``; a queued job for knobs the
    visitor has left is cancelled."""
    job = job_pool().get(state["job"]) if "job" in state else None
    if job is not None and job.key != key:
        if job.started is None:
            job_pool().cancel(job)
        state.pop("job", None)
        job = None
    return job


def _outcome(fit: _Fit, state: dict, job: Job) -> tuple[RunResult | None, Job | None]:
    """The job's result once done; its error in words (never retried on its own); the job
    while it still runs."""
    status, value = job.outcome()
    if status == "done":
        _memo().put(fit.key, value)
        return value, None
    if status in ("error", "cancelled"):
        state.pop("job", None)
        if status == "error":
            state["failed"] = fit.key
            st.error(f"{fit.label} failed: {md_text(value)}")
        return None, None
    return None, job


def _start(fit: _Fit, state: dict, last: RunResult | None) -> Job | None:
    """Submit the fit: at once when the last one was cheap (or there is none), else when the
    visitor presses **Run**; not after a failure or a Cancel of these knobs. None when nothing
    was submitted (or the server is busy: then only **Run** tries again)."""
    cancelled = st.session_state.get(f"runner.cancelled.{fit.slot}") == fit.key
    failed = state.get("failed") == fit.key
    auto = not (cancelled or failed) and (
        last is None or last.elapsed <= settings.current().cheap_seconds
    )
    pressed = not auto and st.button(
        "Run",
        key=f"runner.run.{fit.slot}",
        type="primary",
        icon=":material/play_arrow:",
        help="Fit with the current knobs (in the shared worker pool; the page stays usable).",
    )
    if not (auto or pressed):
        return None
    st.session_state.pop(f"runner.cancelled.{fit.slot}", None)
    job = _submit(
        fit.label,
        fit.key,
        compute_and_store,
        run_store(),
        portable(get_method(fit.method)),
        fit.train,
        fit.test,
        dict(fit.knobs),
        dict(fit.extra) if fit.extra else None,
        fit.function,
        estimate=None if last is None else float(last.elapsed),
    )
    if job is None:
        state["failed"] = fit.key
        return None
    state["job"] = job.id
    _wait(job)
    return job


def _previous(fit: _Fit, job: Job | None, last: RunResult | None) -> RunResult:
    """While there is no result for these knobs: the job's progress and the previous result,
    marked as such; the page ends when there is none."""
    if job is not None:
        show_job(job.id, fit.slot)
    if last is None:
        if job is None:  # failed or cancelled: only Run starts it again
            st.info("Press **Run** to fit with these knobs.")
        stop_page()
    if job is None:
        st.warning(
            f"Knobs changed — press **Run** to update (the last fit took "
            f"{md_text(seconds_left(last.elapsed))}). The result below is for the previous knobs.",
            icon=":material/update:",
        )
    else:
        st.caption("Showing the previous result until the new one is ready.")
    return show_evidence(last, fit.train, fit.test)


def job_value(
    slot: str,
    label: str,
    key: str,
    function: Callable[..., Any],
    *args: Any,
    start: bool,
    retry: bool = False,
    cpu_seconds: float | None = None,
    **kwargs: Any,
) -> tuple[str, Any]:
    """Run ``function(*args, **kwargs)`` in the pool for ``slot`` when ``start`` (or while its
    job for ``key`` is unfinished): ``("done", value)`` once, ``("error", exception)`` (said on
    the page by the caller), ``("pending", None)`` with the progress and Cancel drawn,
    ``("cancelled", None)`` after a Cancel of ``key``, ``("busy", None)`` with the pool's words
    on the page, or ``("idle", None)``. A cancelled or failed ``key`` is not started again
    until ``retry`` (the visitor asked again). For work on a visitor's file: ``cpu_seconds``
    caps its processor time."""
    state = slot_state(f"job.{slot}")
    if retry:
        st.session_state.pop(f"runner.cancelled.{slot}", None)
        state.pop("failed", None)
    job = _current_job(state, key)
    if job is None:
        if st.session_state.get(f"runner.cancelled.{slot}") == key:
            st.caption(f"{md_text(label)}: cancelled.")
            return "cancelled", None
        if state.get("failed", (None,))[0] == key:  # said again, not run again
            return "error", state["failed"][1]
        if not start:
            return "idle", None
        job = _submit(label, key, function, *args, cpu_seconds=cpu_seconds, **kwargs)
        if job is None:
            return "busy", None
        state["job"] = job.id
        _wait(job)
    status, value = job.outcome()
    if status == "pending":
        show_job(job.id, slot)
    else:
        state.pop("job", None)
    if status == "error":
        state["failed"] = (key, value)
    if status == "cancelled":
        st.caption(f"{md_text(label)}: cancelled.")
    return status, value


def sweep_panel(
    slot: str,
    label: str,
    sweep_key: str,
    function: Callable[..., Any],
    *args: Any,
    button: str,
    n_points: int,
    parts: list[tuple[Callable[..., Any], tuple, dict[str, Any]]] | None = None,
    **kwargs: Any,
) -> bool:
    """A button that runs a sweep in the pool (``function(*args, **kwargs)``, which fills the
    frontier store and reports its progress); True once it has finished for ``sweep_key`` in
    this session, so the page draws the points from the store. Draws progress and Cancel while
    it runs. ``parts``: the job's calls (e.g. several methods' sweeps, each already within the
    demo's points per sweep), one job run on every idle worker, instead of ``function``'s."""
    state = slot_state(f"sweep.{slot}")
    if sweep_key in state.setdefault("done", []):
        return True
    job = _current_job(state, sweep_key)
    cap = limits().max_sweep_points
    if job is None and parts is None and cap is not None and n_points > cap:
        st.warning(
            f"This demo runs at most {cap:d} points per sweep; this one needs {n_points:d}. Pick "
            "fewer of its choices above (e.g. seeds or curves), or install fairengine locally "
            "for the full sweep."
        )
        return False
    if job is None and st.button(md_text(button), key=f"runner.sweep.{slot}"):
        calls = parts if parts is not None else sweep_calls(function, args, kwargs)
        # one call per point (or per part), on every idle worker
        if calls is not None and (parts is not None or len(calls) > 1):
            job = _submit(label, sweep_key, None, parts=calls)
        else:
            job = _submit(label, sweep_key, discard, function, *args, with_progress=True, **kwargs)
        if job is not None:
            state["job"] = job.id
            _wait(job)
    status, value = ("idle", None) if job is None else job.outcome()
    if status in ("done", "error", "cancelled"):  # failed or cancelled: the button comes back
        state.pop("job", None)
        job = None
        if status == "done":
            state["done"].append(sweep_key)
            return True
        if status == "error":
            st.error(f"{md_text(label)} failed: {md_text(value)}")
        else:
            st.caption(f"{md_text(label)} cancelled; points finished so far stay cached.")
    if job is not None:
        show_job(job.id, f"sweep.{slot}")
    else:
        st.caption(
            f"{n_points:,} points, run in the shared worker pool; cached points are not recomputed."
        )
    return False


def sweep_calls(
    function: Callable[..., Any], args: Sequence[Any], kwargs: Mapping[str, Any]
) -> list[tuple[Callable[..., Any], tuple, dict[str, Any]]] | None:
    """A :func:`fairengine.frontier.sweep` call ``sweep(method, train, test, grid, **kwargs)``
    split into one call per distinct point (each a sweep of that point alone, filling the same
    store), for :meth:`JobPool.submit_parts`; None for any other function or a grid that does
    not validate (the sweep then runs whole and reports the problem in words)."""
    if function is not sweep or len(args) != 4 or "progress" in kwargs:
        return None
    method, train, test, grid = args
    try:
        settings = sweep_settings(method, train, test, grid)
    except Exception:
        return None
    return [(discard, (sweep, method, train, test, [knobs]), dict(kwargs)) for knobs in settings]


def offer_dataset(dataset: str, sensitive: tuple[str, ...] | None, reason: str) -> None:
    """One button that opens ``dataset`` (the method's paper dataset) and reruns the page."""
    info = DATASETS[dataset]
    label = f"Open {info.title}" + (f" ({md_text(', '.join(sensitive))})" if sensitive else "")
    if st.button(label, key=f"runner.open.{dataset}", type="primary", help=reason):
        for name in ("target", "sensitive", "kind", "positive_label", "features"):
            st.session_state.pop(f"sel.{name}", None)
            st.session_state.pop(f"w.{name}", None)
        st.session_state["sel.source"] = "bundled"
        st.session_state["sel.dataset"] = dataset
        st.session_state.pop("w.dataset", None)
        if sensitive:
            st.session_state["sel.sensitive"] = list(sensitive)
        st.session_state.pop("task", None)
        st.rerun()


def require(method: Method, task: Task) -> None:
    """End the page when ``method`` cannot run on the task (:meth:`Method.check`): say why in
    its words and offer the method's paper dataset in one click."""
    try:
        method.check(task)
    except DataError as exc:
        st.error(md_text(exc))
        if method.demo_tasks:
            dataset, sensitive = method.demo_tasks[0]
            reason = (
                "The paper's dataset for this method. Its result is precomputed: it shows at once."
            )
            offer_dataset(dataset, sensitive, reason)
        stop_page()
