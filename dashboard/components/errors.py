"""One place that turns an exception into a readable message (never a redacted box, never a
traceback for a visitor).

The entry point runs every page inside :func:`guarded`: a :class:`DataError` is shown in words
(through :func:`~fairengine.textsafe.md_text`, as it may quote the visitor's values); any other
exception shows a short message with an error id, and the server log gets the traceback under
the same id. ``FAIRENGINE_DEBUG`` shows the full report on the page, never in demo mode.
Streamlit's control flow (``st.stop``, ``st.rerun``, ``st.switch_page``) and
:class:`~dashboard.components.state.PageDone` pass through.
"""

from __future__ import annotations

import contextlib
import logging
import platform
import secrets
import traceback
from collections.abc import Iterator

import streamlit as st

from dashboard.components.deploy import demo_mode
from dashboard.components.job_state import JobFailed, ServerBusy
from dashboard.components.state import PageDone
from fairengine import settings
from fairengine.data import DataError
from fairengine.textsafe import md_text

logger = logging.getLogger("fairengine.dashboard")


@contextlib.contextmanager
def guarded(where: str = "this page") -> Iterator[None]:
    """Run a block; show any exception other than Streamlit's control flow as a message."""
    try:
        yield
    except PageDone:
        raise
    except DataError as exc:
        st.error(f"There is a problem with the data: {md_text(exc)}")
    except Exception as exc:
        show_unexpected(exc, where)


def show_error(exc: BaseException, what: str, where: str) -> None:
    """``exc`` after ``what`` ("The model could not be added") in words when it is the user's
    or the pool's (data, memory, time, a busy server), else as :func:`show_unexpected` in
    ``where``."""
    if isinstance(exc, DataError | ValueError | JobFailed | ServerBusy):
        st.error(f"{md_text(what)}: {md_text(exc)}", icon=":material/error:")
    else:
        show_unexpected(exc, where)


def show_unexpected(exc: BaseException, where: str = "this page") -> str:
    """Log ``exc`` with its traceback under a new id and show a short message with that id;
    returns the id. The report (versions and traceback) is on the page only when
    ``FAIRENGINE_DEBUG`` is on and demo mode off."""
    error_id = secrets.token_hex(4)  # names this error in the page and in the log
    logger.exception(
        "Unexpected error %s in %s (%s)",
        error_id,
        where,
        versions(),
        exc_info=(type(exc), exc, exc.__traceback__),
    )
    st.error(
        f"Something went wrong in {md_text(where)} (error id {md_text(error_id)}). Your data "
        "and choices are kept; change a setting or open another page to go on. If it happens "
        f"again, please report it and quote the error id {md_text(error_id)}."
    )
    if settings.current().debug and not demo_mode():
        lines = [versions(), "", *traceback.format_exception(type(exc), exc, exc.__traceback__)]
        with st.expander("Report (details for a bug report)"):
            text = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
            st.code(text, language="text")
    return error_id


def versions() -> str:
    """fairengine, Streamlit and Python versions and the platform, for the log and the report."""
    import fairengine

    return (
        f"fairengine {fairengine.__version__}, streamlit {st.__version__}, "
        f"Python {platform.python_version()} on {platform.platform()}"
    )
