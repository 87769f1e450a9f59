"""Suite-wide fixtures."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def _restore_main_module() -> Iterator[None]:
    """Streamlit's AppTest leaves the page script as ``sys.modules["__main__"]``; a later test in
    the same process that spawns workers (dask's nanny, a spawn-context pool) would then re-run
    that script in every child. Put the real main module back after each test."""
    main = sys.modules.get("__main__")
    yield
    if main is not None and sys.modules.get("__main__") is not main:
        sys.modules["__main__"] = main
