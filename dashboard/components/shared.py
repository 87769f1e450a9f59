"""Page work that does not depend on the session, done once for every session of the server.

A page's figures, tables and captions are functions of a result (named by its run key) and a
few display choices. :func:`shared` computes such a value once per ``(function, key)`` and hands
the same object to every session (``st.cache_resource``), so a visitor opening a page someone
has opened before costs the server only cache hits, and a job finishing in one session does not
rebuild anything for the others.

The key must determine the value: pass the run key of the result (:func:`.services.result_key`)
and every display choice the function reads. Callers must not mutate the value returned
(``st.plotly_chart`` only reads a figure). Per-user data (an upload) is safe here because its
run key contains the task's fingerprint, a hash of the table itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import streamlit as st

T = TypeVar("T")

#: Values kept at once (figures of a few hundred results; each is a small plotly spec).
MAX_ENTRIES = 512


@st.cache_resource(show_spinner=False, max_entries=MAX_ENTRIES)
def _shared(name: str, key: str, _function: Callable[..., Any], _args: tuple, _kwargs: dict) -> Any:
    del name, key  # the cache key
    return _function(*_args, **_kwargs)


def shared(function: Callable[..., T], key: Any, *args: Any, **kwargs: Any) -> T:
    """``function(*args, **kwargs)``, computed once per (``function``, ``key``) for all sessions.

    ``key`` (any value with a stable ``repr``) must determine the result.
    """
    name = f"{function.__module__}.{function.__qualname__}"
    return _shared(name, repr(key), function, args, kwargs)
