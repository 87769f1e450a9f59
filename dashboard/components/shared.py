"""Page work that does not depend on the session, done once for every session of the server
(``st.cache_resource``): a page's figures, tables and captions, functions of a result (named by
its run key) and a few display choices. See "Work shared between sessions" in
docs/architecture.md.
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
