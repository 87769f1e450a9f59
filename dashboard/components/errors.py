"""One place that turns an engine exception into a readable message (never a redacted box).

The entry point runs every page inside :func:`guarded`: a :class:`DataError` is shown in words
(it always says what to do); any other exception shows a short message and a "Report" expander
with the traceback and versions to paste into a bug report. Streamlit's own control flow
(``st.stop``, ``st.rerun``, ``st.switch_page``) raises ``BaseException`` subclasses that are not
caught here, and the pages' own :class:`~dashboard.components.state.PageDone` is re-raised.
"""

from __future__ import annotations

import contextlib
import logging
import platform
import traceback
from collections.abc import Iterator

import streamlit as st

from dashboard.components.state import PageDone
from fairengine.data import DataError

logger = logging.getLogger("fairengine.dashboard")


@contextlib.contextmanager
def guarded(where: str = "this page") -> Iterator[None]:
    """Run a block; show any exception other than Streamlit's control flow as a message."""
    try:
        yield
    except PageDone:
        raise
    except DataError as exc:
        st.error(f"There is a problem with the data: {exc}")
    except Exception as exc:  # noqa: BLE001 - the point is to catch everything else
        logger.exception("Unexpected error in %s", where)
        show_unexpected(exc, where)


def show_unexpected(exc: BaseException, where: str = "this page") -> None:
    """A short message, plus the full report (traceback, versions) in an expander."""
    st.error(
        f"Something went wrong in {where}: {type(exc).__name__}: {_first_line(exc)}. "
        "Your data and choices are kept; change a setting or open another page to go on. "
        "If it happens again, please report it with the details below."
    )
    with st.expander("Report (details for a bug report)"):
        st.code(report_text(exc), language="text")


def report_text(exc: BaseException) -> str:
    import fairengine

    lines = [
        f"fairengine {fairengine.__version__}, streamlit {st.__version__}, "
        f"Python {platform.python_version()} on {platform.platform()}",
        "",
        *traceback.format_exception(type(exc), exc, exc.__traceback__),
    ]
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    line = text[0] if text else "(no message)"
    return line if len(line) <= 300 else line[:297] + "..."
