"""What every session of this server shares: the job pool, the run store, this session's id and
address in the pool, and the run key a page's slot last drew. The pages' modules import these
from here, never from one another.
"""

from __future__ import annotations

import uuid

import streamlit as st

from dashboard.components import cached
from dashboard.components.deploy import limits
from dashboard.components.jobs import JobPool
from fairengine.frontier.runs import RunStore

#: Session key of the session's id in the job pool.
SESSION_KEY = "_session_id"


@st.cache_resource(show_spinner=False)
def job_pool() -> JobPool:
    """The process pool shared by every session of this server."""
    return JobPool(queue_limit=limits().queue_limit)


def run_store() -> RunStore:
    """Complete runs: the user's cache (writable) and the shipped demo runs (read-only)."""
    store = cached.frontier_store()
    return _run_store(str(store.root), tuple(str(p) for p in store.read_only))


@st.cache_resource(show_spinner=False)
def _run_store(root: str, read_only: tuple[str, ...]) -> RunStore:
    return RunStore(root, read_only=read_only)


def session_id() -> str:
    """This session's id in the job pool."""
    return st.session_state.setdefault(SESSION_KEY, uuid.uuid4().hex)


def client_address() -> str | None:
    """The visitor's address (every tab of theirs shares it; None on localhost or where
    Streamlit does not know it): the pool limits the jobs of one address."""
    try:
        address = st.context.ip_address
    except Exception:  # outside a browser session (tests, bare mode)
        return None
    return address if isinstance(address, str) and address else None


def slot_state(slot: str) -> dict:
    """What :func:`.runner.run_panel` keeps about one slot of this session."""
    return st.session_state.setdefault(f"runner.state.{slot}", {})


def result_key(slot: str) -> str | None:
    """Run key of the result :func:`.runner.run_panel` last returned for ``slot`` in this
    session (what :mod:`.shared` shares between sessions)."""
    return slot_state(slot).get("key")
