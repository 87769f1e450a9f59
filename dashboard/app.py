"""fairengine dashboard: ``streamlit run dashboard/app.py``.

Streamlit runs this file as every session's script (:func:`main`): it sets the page up, applies a
shared link's query parameters, routes between the pages with ``st.navigation`` and shows the
current task in the sidebar. ``streamlit run`` first imports it for the server (``app``, an
``st.App``): Streamlit's own, plus the redirect of a page's address
(:class:`~dashboard.components.state.PageLinks`) and the sweep of closed tabs
(:func:`~dashboard.components.sessions.swept`).
"""

from __future__ import annotations

import gc
import sys
import time
from pathlib import Path

import streamlit as st

# The folder holding dashboard/: a clone's root (which also holds fairengine/, so a clone runs
# without installing it) or the installed package's private fairengine/_bundle.
ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # `streamlit run` puts dashboard/ on the path, not the project root
    sys.path.insert(0, str(ROOT))

from dashboard.components import calm, sessions  # noqa: E402
from dashboard.components.deploy import apply_upload_limit  # noqa: E402
from dashboard.components.errors import guarded  # noqa: E402
from dashboard.components.state import (  # noqa: E402
    PageLinks,
    follow_page_link,
    init_from_query_params,
    running_pages,
)
from fairengine.methods import get_method, list_methods  # noqa: E402
from fairengine.resources import favicon  # noqa: E402

PAGES = ROOT / "dashboard" / "views"  # not "pages/": that name turns on the legacy page router
#: URL paths of the pages other than the method pages.
OTHER_PAGES = ("data", "compare", "about")


def method_names() -> list[str]:
    """The registered methods with a page: a view module ``views/<method>.py``, else a page
    generated from the method's declaration (``Method.page``)."""
    return [n for n in list_methods() if (PAGES / f"{n}.py").is_file() or get_method(n).page]


def method_pages() -> list:
    """The page of every method of :func:`method_names` (its url path: the method's name)."""
    pages = []
    for name in method_names():
        view = PAGES / f"{name}.py"
        if view.is_file():
            source = view
        else:  # loaded only for a method without a view
            from dashboard.components.method_page import generated_page

            source = generated_page(name)
        title = get_method(name).title
        pages.append(st.Page(source, title=title, icon=":material/tune:", url_path=name))
    return pages


@st.cache_resource(show_spinner=False)
def _last_collection() -> list[float]:
    return [time.monotonic()]


def collect_garbage(every: float = 60.0) -> None:
    """A full garbage collection at most every ``every`` seconds per server, instead of
    Streamlit's ``runner.postScriptGC`` (off in .streamlit/config.toml) after every run."""
    last = _last_collection()
    if time.monotonic() - last[0] >= every:
        last[0] = time.monotonic()
        gc.collect()


@st.cache_resource(show_spinner=False)
def _warm_up() -> bool:
    """Once per server: the heavy imports in the background (dashboard/components/warmup.py)."""
    from dashboard.components.warmup import start

    return start() is not None


def main() -> None:
    """One script run of a session."""
    # here, not at the top: the server's import of this file creates no Streamlit cache
    from dashboard.components.task_loader import ensure_task, render_task_summary

    # A bundled icon: ":material/..." page icons are fetched from fonts.gstatic.com (offline app).
    st.set_page_config(page_title="fairengine", page_icon=str(favicon()), layout="wide")
    calm.draw()  # no shimmer frames while a page waits (dashboard/components/calm.py)
    apply_upload_limit()  # demo mode: smaller uploads, before any uploader is drawn
    init_from_query_params()
    with guarded("loading the task"):
        ensure_task()
    data = st.Page(PAGES / "data.py", title="Data", icon=":material/table_view:", default=True)
    sections = {"Data": [data]}
    if methods := method_pages():
        sections["Methods"] = methods
    sections["Compare"] = [
        st.Page(PAGES / "compare.py", title="Compare & export", icon=":material/show_chart:")
    ]
    sections["Help"] = [st.Page(PAGES / "about.py", title="About", icon=":material/info:")]
    navigation = st.navigation(sections)
    follow_page_link([page for pages in sections.values() for page in pages], navigation)
    st.sidebar.markdown("**fairengine** · fairness–accuracy trade-offs")
    # A page that ends early still leaves the sidebar to be drawn; any exception a page lets out
    # is shown as a readable message with a report, never Streamlit's redacted error box.
    with running_pages(), guarded(f"the {navigation.title} page"):
        navigation.run()
    with guarded("the sidebar"):
        render_task_summary()
    collect_garbage()
    sessions.note_session()  # a closed tab's uploads and state are freed
    _warm_up()


if __name__ == "__main__":  # a session's script run (Streamlit names the script's module so)
    main()
else:  # `streamlit run` imports this file for its server
    from starlette.middleware import Middleware

    links = Middleware(PageLinks, paths=(*OTHER_PAGES, *method_names()))
    app = st.App(__file__, middleware=[links], lifespan=sessions.swept)
