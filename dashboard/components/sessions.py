"""Close a closed tab's session: its uploaded files, its session state and its jobs.

Streamlit keeps the session of a closed tab for a reconnect, then drops it from a time-limited
cache without shutting it down, so its uploaded files stay. Every script run notes its session
(:func:`note_session`); the server's sweeper (:func:`swept`) closes the sessions without a
connection for :func:`grace_seconds` (:func:`sweep_once`) and cancels their unfinished jobs.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import gc
import time
from collections.abc import AsyncIterator
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
class Seen:
    """A session seen by a script run: its id in the job pool (None before its first job) and
    since when it has been without a connection."""

    pool_session: str | None = None
    since: float | None = None


KNOWN: dict[str, Seen] = {}  # by Streamlit's session id


def grace_seconds() -> float:
    """How long a session may stay without a connection before it is closed:
    :data:`DEMO_GRACE` in demo mode, else just within Streamlit's own time for reconnecting
    (two sweeps before it, after which Streamlit no longer finds the session to close it)."""
    ttl = float(st.get_option("server.disconnectedSessionTTL"))
    within = max(0.0, min(0.9 * ttl, ttl - 2 * SWEEP_EVERY))
    return min(DEMO_GRACE, within) if demo_mode() else within


def note_session() -> None:
    """Note the session of this script run (once per run; cheap)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    from dashboard.components.services import SESSION_KEY

    ctx = get_script_run_ctx()
    if ctx is not None:
        KNOWN.setdefault(ctx.session_id, Seen()).pool_session = st.session_state.get(SESSION_KEY)


@contextlib.asynccontextmanager
async def swept(app: Any) -> AsyncIterator[None]:
    """Lifespan of the server (``st.App``): sweep :data:`KNOWN` every :data:`SWEEP_EVERY`
    seconds on the server's event loop, where Streamlit closes sessions."""
    from streamlit import runtime

    async def sweep() -> None:
        while True:
            await asyncio.sleep(SWEEP_EVERY)
            with contextlib.suppress(Exception):  # the runtime is shutting down
                if sweep_once(KNOWN, time.time(), runtime.get_instance()):
                    await asyncio.to_thread(_return_memory)

    task = asyncio.create_task(sweep())
    try:
        yield
    finally:
        task.cancel()


def sweep_once(known: dict[str, Seen], now: float, runtime: Any) -> list[str]:
    """Close the sessions without a connection for :func:`grace_seconds` (Streamlit's
    ``Runtime.close_session`` frees their state and uploaded files) and cancel their jobs;
    returns their ids."""
    from dashboard.components.services import job_pool

    grace, freed = grace_seconds(), []
    for session_id, seen in list(known.items()):
        if runtime.is_active_session(session_id):
            seen.since = None
        elif seen.since is None:
            seen.since = now
        elif now - seen.since >= grace:
            runtime.close_session(session_id)
            if seen.pool_session is not None:  # it submitted jobs: the pool exists
                pool = job_pool()
                for job in pool.active(seen.pool_session):
                    pool.cancel(job)
            del known[session_id]
            freed.append(session_id)
    return freed


def _return_memory() -> None:
    """Collect what the closed sessions leave in reference cycles, and hand the freed heap
    pages back to the system (glibc keeps them otherwise)."""
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)
