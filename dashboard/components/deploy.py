"""Deployment limits, read in one place: the demo mode of a shared host (Streamlit Community Cloud).

Demo mode is on when the environment variable ``FAIRENGINE_DEMO`` is true (``1``, ``true``,
``yes``, ``on``) or, failing that, when ``.streamlit/secrets.toml`` (on Community Cloud: the app's
"Secrets" box) sets ``demo_mode = true``. It caps the work one visitor can start:

* an uploaded table is sampled down to :attr:`Limits.max_rows` rows (the bundled benchmarks, all
  under 50,000 rows, are never cut, so their shipped precomputed frontiers stay valid);
* a sweep started from the Compare page runs at most :attr:`Limits.max_sweep_points` points.

Outside demo mode uploads are sampled to 100,000 rows (to stay interactive) and sweeps are not
capped. Pages that hit a cap say so with ``st.warning``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

DEMO_ENV = "FAIRENGINE_DEMO"
DEMO_SECRET = "demo_mode"
_TRUE = ("1", "true", "yes", "on")

#: Rows of an uploaded table the dashboard works on (a random sample above this).
INTERACTIVE_ROWS = 100_000
DEMO_MAX_ROWS = 50_000
DEMO_MAX_SWEEP_POINTS = 10


@dataclass(frozen=True)
class Limits:
    demo: bool
    max_rows: int
    max_sweep_points: int | None  # None: no cap

    def note(self) -> str:
        """One sentence for the sidebar: what demo mode caps."""
        return (
            f"Demo mode: uploads are sampled to {self.max_rows:,} rows and sweeps run at most "
            f"{self.max_sweep_points} points. Install fairengine locally for full runs."
        )


def _secret_flag() -> bool:
    try:
        import streamlit as st

        return str(st.secrets.get(DEMO_SECRET, "")).strip().lower() in _TRUE
    except Exception:  # no secrets.toml (the usual local case) or not inside Streamlit
        return False


def demo_mode(environ: dict[str, str] | None = None) -> bool:
    """True when the environment variable, else the secret, switches demo mode on."""
    env = os.environ if environ is None else environ
    if DEMO_ENV in env:
        return env[DEMO_ENV].strip().lower() in _TRUE
    return _secret_flag()


def limits(environ: dict[str, str] | None = None) -> Limits:
    """The limits in force for this process (see the module docstring)."""
    if demo_mode(environ):
        return Limits(True, DEMO_MAX_ROWS, DEMO_MAX_SWEEP_POINTS)
    return Limits(False, INTERACTIVE_ROWS, None)
