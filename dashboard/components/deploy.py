"""Deployment limits, read in one place: the demo mode of a shared host (Streamlit Community Cloud).

Demo mode (``FAIRENGINE_DEMO``, else the secret ``demo_mode``) caps the work one visitor can start:
rows of an upload, knobs' demo ranges (:func:`demo_knobs`), points per sweep, waiting jobs and the
upload size (:func:`apply_upload_limit`); see ``docs/howto/deploy.md``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import streamlit as st
from streamlit import config

from dashboard.components.jobs import QUEUE_LIMIT
from fairengine import settings
from fairengine.textsafe import md_text

DEMO_SECRET = "demo_mode"
_TRUE = ("1", "true", "yes", "on")

#: Rows of an uploaded table the dashboard works on (a random sample above this).
INTERACTIVE_ROWS = 100_000
#: Demo mode: rows; points of one sweep (a frontier of every proxy of a method page, e.g. 6
#: proxies × 4 ε values); jobs that may wait, all visitors together; largest upload in MB (a
#: table it samples anyway, a model or comparison file, without 200 MB per session).
DEMO_MAX_ROWS = 50_000
DEMO_MAX_SWEEP_POINTS = 24
DEMO_QUEUE_LIMIT = 8
DEMO_UPLOAD_MB = 50


@dataclass(frozen=True)
class Limits:
    demo: bool
    max_rows: int
    max_sweep_points: int | None  # None: no cap
    queue_limit: int = QUEUE_LIMIT

    def note(self) -> str:
        """One sentence for the sidebar: what demo mode caps."""
        return (
            f"Demo mode: uploads are at most {DEMO_UPLOAD_MB} MB and sampled to "
            f"{self.max_rows:,} rows, knobs that set the work "
            f"of a fit have smaller ranges, and sweeps run at most {self.max_sweep_points} "
            "points. Install fairengine locally for full runs."
        )


def _secret_flag() -> bool:
    try:
        return str(st.secrets.get(DEMO_SECRET, "")).strip().lower() in _TRUE
    except Exception:  # no secrets.toml (the usual local case) or not inside Streamlit
        return False


def demo_mode() -> bool:
    """True when ``$FAIRENGINE_DEMO``, else the secret, switches demo mode on."""
    demo = settings.current().demo
    return _secret_flag() if demo is None else demo


def limits() -> Limits:
    """The limits in force for this process (see the module docstring); the queue limit is
    ``$FAIRENGINE_QUEUE_LIMIT`` when set."""
    demo = demo_mode()
    queue = settings.current().queue_limit or (DEMO_QUEUE_LIMIT if demo else QUEUE_LIMIT)
    if demo:
        return Limits(True, DEMO_MAX_ROWS, DEMO_MAX_SWEEP_POINTS, queue)
    return Limits(False, INTERACTIVE_ROWS, None, queue)


def apply_upload_limit() -> int:
    """In demo mode lower Streamlit's ``server.maxUploadSize`` to :data:`DEMO_UPLOAD_MB` (never
    raise it); returns the limit in force, in MB."""
    current = int(config.get_option("server.maxUploadSize"))
    if demo_mode() and current > DEMO_UPLOAD_MB:
        # Streamlit's own setter: the upload handler and every uploader read the option anew.
        config.set_option("server.maxUploadSize", DEMO_UPLOAD_MB)
        return DEMO_UPLOAD_MB
    return current


def demo_knobs(knobs: Sequence, values: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``values`` with every knob of ``knobs`` brought into its demo range (see
    ``Knob.demo_value``), and the words for each value that changed (empty: none did)."""
    by_name = {knob.name: knob for knob in knobs}
    limited, changed = dict(values), []
    for name, value in values.items():
        knob = by_name.get(name)
        if knob is None:
            continue
        new = knob.demo_value(value)
        if new != value:
            limited[name] = new
            changed.append(f"{knob.display_label} {value} → {new}")
    return limited, changed


def demo_thin(values: Sequence, what: str = "", *, per_value: int = 1) -> tuple:
    """``values`` thinned evenly (first and last kept) so that ``per_value`` points each fit the
    demo's points per sweep, and a caption naming the kept ``what`` values when any was dropped;
    unchanged outside demo mode or when they fit."""
    values, cap = tuple(values), limits().max_sweep_points
    if cap is None or len(values) * per_value <= cap:
        return values
    keep = max(1, cap // per_value)
    step = (len(values) - 1) / max(1, keep - 1)
    kept = tuple(values[round(i * step)] for i in range(keep))
    if what:
        st.caption(
            f"Demo mode: the sweep uses {keep:d} of the {len(values)} {md_text(what)} values "
            f"({md_text(', '.join(map(str, kept)))}), at most {cap:d} points per sweep."
        )
    return kept
