"""Free what a closed tab's session holds: its uploaded files, its session state and its jobs.

Streamlit drops a session whose tab closed from a time-limited cache without shutting it down, so
its uploaded files and state stay. Every script run notes its session (:func:`note_session`); a
daemon thread frees the sessions without a connection for :func:`grace_seconds`
(:func:`sweep_once`) and cancels their unfinished jobs.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import threading
import time
from dataclasses import dataclass
from typing import Any

import streamlit as st

from dashboard.components.deploy import demo_mode

#: Seconds between two looks at the known sessions.
SWEEP_EVERY = 10.0
#: Seconds without a connection after which a demo session's memory is freed (a reconnect
#: after a network blip comes well within it).
DEMO_GRACE = 30.0


@dataclass
class _Seen:
    state: Any  # the session's SafeSessionState
    since: float | None = None  # when it was first seen without a connection


def grace_seconds() -> float:
    """How long a session may stay without a connection before its memory is freed:
    :data:`DEMO_GRACE` in demo mode, else just within Streamlit's own time for reconnecting
    (after it the session can no longer be found to free it)."""
    from streamlit import config

    ttl = float(config.get_option("server.disconnectedSessionTTL"))
    return min(DEMO_GRACE, 0.9 * ttl) if demo_mode() else 0.9 * ttl


@st.cache_resource(show_spinner=False)
def _known() -> dict[str, _Seen]:
    """Sessions seen by a script run, by Streamlit's session id; the sweeper starts with it."""
    known: dict[str, _Seen] = {}
    threading.Thread(target=_sweep, args=(known,), name="fairengine-sessions", daemon=True).start()
    return known


def note_session() -> None:
    """Note the session of this script run (once per run; cheap)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is not None:
        known = _known()
        if ctx.session_id not in known:
            known[ctx.session_id] = _Seen(ctx.session_state)


def _sweep(known: dict[str, _Seen]) -> None:
    while True:
        time.sleep(SWEEP_EVERY)
        with contextlib.suppress(Exception):  # the runtime is shutting down
            sweep_once(known, time.time())


def sweep_once(known: dict[str, _Seen], now: float) -> list[str]:
    """Free the sessions without a connection for :func:`grace_seconds`; returns their ids."""
    from streamlit.runtime import Runtime

    runtime = Runtime.instance()
    grace, freed = grace_seconds(), []
    for session_id, seen in list(known.items()):
        if runtime.is_active_session(session_id):
            seen.since = None
        elif seen.since is None:
            seen.since = now
        elif now - seen.since >= grace:
            runtime.uploaded_file_mgr.remove_session_files(session_id)
            _cancel_jobs(seen.state)
            _clear(seen.state)
            del known[session_id]
            freed.append(session_id)
    if freed:
        _return_memory()
    return freed


def _cancel_jobs(state: Any) -> None:
    """Cancel the unfinished jobs of the session whose state is ``state`` (its pool session id,
    :func:`.services.session_id`)."""
    from dashboard.components.services import SESSION_KEY, job_pool

    if SESSION_KEY not in state.filtered_state:
        return  # it never submitted a job
    pool = job_pool()
    for job in pool.active(state.filtered_state[SESSION_KEY]):
        pool.cancel(job)


def _clear(state: Any) -> None:
    """Empty a session's state: its values, and its widgets' values and metadata (a widget's
    ``format_func`` holds its page's globals, e.g. an upload, until the session goes). Streamlit
    offers no public call for another session's state: its ``SessionState.clear`` is used where
    present, else every value is deleted by key."""
    inner = getattr(state, "_state", None)
    if callable(getattr(inner, "clear", None)):
        with state._lock:
            inner.clear()
        return
    for key in list(state.filtered_state):
        with contextlib.suppress(Exception):  # a widget's value Streamlit keeps
            del state[key]


def _return_memory() -> None:
    """Collect what the freed state leaves in reference cycles, and hand the freed heap pages
    back to the system (glibc keeps them otherwise)."""
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)
