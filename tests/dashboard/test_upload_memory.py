"""An upload's memory belongs to its session: no cache of the server keeps the table, its
tasks or splits after the visitor has gone, a closed tab's uploaded files and state are freed,
and demo mode lowers the upload limit."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from streamlit.runtime.caching.cache_data_api import _data_caches
from streamlit.runtime.caching.cache_resource_api import _resource_caches
from streamlit.testing.v1 import AppTest

from dashboard.components import services, sessions
from dashboard.components.deploy import DEMO_UPLOAD_MB, apply_upload_limit

APP = str(Path(__file__).resolve().parents[2] / "dashboard" / "app.py")


def _table(rows: int) -> bytes:
    lines = [
        f"{20 + i % 40};{'f' if i % 3 else 'm'};{i % 997 / 997:.6f};{'yes' if i % 4 else 'no'}"
        for i in range(rows)
    ]
    return "\n".join(["age;gender;score;approved", *lines]).encode()


def _cached_bytes() -> int:
    """Bytes held by every Streamlit cache of the server, all sessions' included."""
    families = [*_data_caches.get_stats().values(), *_resource_caches.get_stats().values()]
    return sum(stat.byte_length for family in families for stat in family)


@pytest.mark.parametrize("rows", [20_000, 60_000])
def test_an_uploaded_table_stays_out_of_the_servers_caches(rows: int) -> None:
    data = _table(rows)
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    before = _cached_bytes()
    at.radio(key="w.source").set_value("upload").run()
    at.file_uploader[0].set_value(("people.csv", data, "text/csv")).run()
    assert not at.exception and not at.error
    assert at.session_state["task"].frame.shape[0] == rows
    grown = _cached_bytes() - before
    print(f"{len(data):,} bytes uploaded; the server's caches grew by {grown:,} bytes")
    assert grown < len(data) / 4  # the table, its task and split live in the session only
    memo = at.session_state["_upload_memo"]
    assert memo["frame"] and memo["task"]


class _Pool:
    """The worker pool as the sweeper sees it: one unfinished job per pool session."""

    def __init__(self) -> None:
        self.cancelled: list[str] = []

    def active(self, session: str) -> list[str]:
        return [f"job of {session}"]

    def cancel(self, job: str) -> None:
        self.cancelled.append(job)


class _Runtime:
    """Streamlit's runtime as the sweeper uses it."""

    def __init__(self, active: set[str]) -> None:
        self.active, self.closed = active, []

    def is_active_session(self, session_id: str) -> bool:
        return session_id in self.active

    def close_session(self, session_id: str) -> None:
        self.closed.append(session_id)


def test_the_sweeper_calls_the_runtime_as_streamlit_defines_it() -> None:
    from streamlit.runtime import Runtime

    for name in ("is_active_session", "close_session"):
        assert list(inspect.signature(getattr(Runtime, name)).parameters) == ["self", "session_id"]


@pytest.mark.parametrize("demo", ["1", "0"])
def test_a_closed_tabs_session_is_closed_after_the_grace(monkeypatch, demo) -> None:
    monkeypatch.setenv("FAIRENGINE_DEMO", demo)
    runtime = _Runtime(active={"open"})
    pool = _Pool()
    monkeypatch.setattr(services, "job_pool", lambda: pool)
    known = {
        "closed": sessions.Seen("s1"),
        "open": sessions.Seen("s2"),
        "no jobs": sessions.Seen(None),
    }
    grace = sessions.grace_seconds()
    assert grace == (30.0 if demo == "1" else 100.0)  # Streamlit keeps a closed tab 120 s
    assert sessions.sweep_once(known, 1000.0, runtime) == []  # first seen without a connection
    assert sessions.sweep_once(known, 1000.0 + grace - 1, runtime) == []  # a reconnect may come
    assert sessions.sweep_once(known, 1000.0 + grace, runtime) == ["closed", "no jobs"]
    assert runtime.closed == ["closed", "no jobs"]  # Streamlit frees its state and files
    assert pool.cancelled == ["job of s1"]  # its fits and file reads stop with it
    assert list(known) == ["open"]


def test_demo_mode_lowers_the_upload_limit_and_never_raises_it(monkeypatch) -> None:
    from streamlit import config

    original = config.get_option("server.maxUploadSize")
    try:
        monkeypatch.setenv("FAIRENGINE_DEMO", "0")
        config.set_option("server.maxUploadSize", 200)
        assert apply_upload_limit() == 200
        monkeypatch.setenv("FAIRENGINE_DEMO", "1")
        assert apply_upload_limit() == DEMO_UPLOAD_MB
        assert config.get_option("server.maxUploadSize") == DEMO_UPLOAD_MB
        config.set_option("server.maxUploadSize", 10)
        assert apply_upload_limit() == 10
    finally:
        config.set_option("server.maxUploadSize", original)
