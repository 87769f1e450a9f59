"""Suite-wide fixtures."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest

# Pages compute the runs one knob step away in the background after showing a result. In the
# suite that is CPU no test looks at, beside the tests that do (tests/dashboard/test_prefetch.py
# turns it on for itself); the browser tests' servers inherit the setting.
os.environ.setdefault("FAIRENGINE_PREFETCH", "0")


@pytest.fixture(autouse=True)
def _restore_main_module() -> Iterator[None]:
    """Streamlit's AppTest leaves the page script as ``sys.modules["__main__"]``; a later test in
    the same process that spawns workers (dask's nanny, a spawn-context pool) would then re-run
    that script in every child. Put the real main module back after each test."""
    main = sys.modules.get("__main__")
    yield
    if main is not None and sys.modules.get("__main__") is not main:
        sys.modules["__main__"] = main
