"""Session state shared by the pages: the current task and the user's selections.

Streamlit forgets a widget's value when the page that drew it is not shown, so every selection is
kept under a plain key (``sel.*``) and each widget (key ``w.*``) is seeded from it.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Collection, Iterator
from typing import Any
from urllib.parse import parse_qsl, urlencode

import streamlit as st

from fairengine.data import Task, list_datasets
from fairengine.textsafe import md_text

DEFAULT_DATASET = "adult"
TASK_KEY = "task"


#: The query parameter and value that mark a link made from an uploaded table.
UPLOAD_PARAM = ("data", "upload")


def init_from_query_params() -> None:
    """On a session's first run, take the data and roles from the URL (``?dataset=compas``).

    A link made from an upload (``?data=upload&name=arrests.csv&target=…``) cannot bring the
    table back: the session opens on the upload box saying so, and keeps the link's roles for
    when the same file is uploaded again. The link's values are the sender's: the warnings quote
    them through :func:`~fairengine.textsafe.md_text`, so a link cannot put a link or an image on
    the page.
    """
    if st.session_state.get("_initialised"):
        return
    st.session_state["_initialised"] = True
    params = st.query_params
    st.session_state["_url"] = {key: params.get(key) for key in params}
    name = params.get("dataset")
    if params.get(UPLOAD_PARAM[0]) == UPLOAD_PARAM[1]:
        file_name = params.get("name")
        named = f" ({md_text(file_name)})" if file_name else ""
        st.session_state["sel.source"] = "upload"
        st.session_state["url_warning"] = (
            f"This link refers to an uploaded table{named}, which is not kept on the server. "
            "Upload it again to continue."
        )
        st.session_state["upload.link"] = {
            "name": file_name,
            "target": params.get("target"),
            "sensitive": params.get_all("sensitive"),
        }
    elif name in [info.name for info in list_datasets()]:
        st.session_state["sel.source"] = "bundled"
        st.session_state["sel.dataset"] = name
    elif name:
        st.session_state["url_warning"] = (
            f"Unknown dataset {md_text(repr(name))} in the link; "
            f"opened {DEFAULT_DATASET!r} instead."
        )
    for role in ("target", "kind"):
        if params.get(role):
            st.session_state[f"sel.{role}"] = params.get(role)
    if params.get_all("sensitive"):
        st.session_state["sel.sensitive"] = params.get_all("sensitive")


class PageLinks:
    """Middleware of the dashboard's server: a browser's request for a page's address
    (``/compare?dataset=compas``) is redirected to ``/?page=compare&dataset=compas``, which
    :func:`follow_page_link` opens on that page; the address bar then shows the page's address
    again. Streamlit's frontend, loaded at a page's address, first looks for its server one
    folder down (``/compare/_stcore/health`` and ``/compare/_stcore/host-config``: two 404s in
    the browser's console); loaded at ``/`` it looks there only.

    Parameters
    ----------
    app : ASGI application
        Streamlit's server.
    paths : collection of str
        The pages' URL paths.
    """

    def __init__(self, app: Any, paths: Collection[str]) -> None:
        self.app, self.paths = app, frozenset(paths)

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        base = st.get_option("server.baseUrlPath").strip("/")
        root = f"/{base}/" if base else "/"
        path = scope.get("path", "") if scope["type"] == "http" else ""
        page = path[len(root) :].strip("/") if path.startswith(root) else None
        if page in self.paths and scope["method"] in ("GET", "HEAD"):
            query = parse_qsl(scope["query_string"].decode("latin-1"), keep_blank_values=True)
            location = root + "?" + urlencode([("page", page), *query])
            headers = [(b"location", location.encode("latin-1")), (b"content-length", b"0")]
            await send({"type": "http.response.start", "status": 307, "headers": headers})
            await send({"type": "http.response.body", "body": b""})
            return
        await self.app(scope, receive, send)


def follow_page_link(pages: list, current: Any) -> None:
    """Open the page that a ``?page=<url path>`` link names (where :class:`PageLinks` sends a
    page's address), with the link's other query parameters; a name of no page is dropped."""
    wanted = st.query_params.get("page")
    if wanted is None:
        return
    target = next((page for page in pages if page.url_path == wanted), None)
    if target is None or target.url_path == current.url_path:
        del st.query_params["page"]
        return
    params = {key: st.query_params.get_all(key) for key in st.query_params if key != "page"}
    st.switch_page(target, query_params=params)


def roles_from_link(file_name: str) -> None:
    """After an upload of ``file_name``: if the session was opened from a link to an upload of
    that name, select the link's roles (the page checks them against the table's columns)."""
    link = st.session_state.get("upload.link") or {}
    if link.get("name") == file_name:
        if link.get("target"):
            st.session_state["sel.target"] = link["target"]
        if link.get("sensitive"):
            st.session_state["sel.sensitive"] = list(link["sensitive"])


def data_params(
    *,
    dataset: str | None = None,
    target: str | None = None,
    sensitive: list[str] | tuple[str, ...] = (),
) -> dict[str, Any]:
    """Query parameters that describe the data on screen: a bundled dataset (``dataset=…``) or
    an uploaded table (``data=upload&name=<file name>``, which a link cannot carry), with the
    roles chosen so far; until a link's upload is given again, the link's name and roles."""
    params: dict[str, Any] = {}
    if selection("source", "bundled") == "upload":
        params[UPLOAD_PARAM[0]] = UPLOAD_PARAM[1]
        if "upload.name" not in st.session_state:  # still waiting for the link's file
            link = st.session_state.get("upload.link") or {}
            name, target, sensitive = link.get("name"), link.get("target"), link.get("sensitive")
        else:
            name = st.session_state["upload.name"]
        if name:
            params["name"] = name
    else:
        params["dataset"] = dataset or selection("dataset", DEFAULT_DATASET)
    if target:
        params["target"] = target
    if sensitive:
        params["sensitive"] = list(sensitive)
    return params


def task_params(task: Task) -> dict[str, Any]:
    """Query parameters that reopen ``task`` (:func:`data_params` with its roles)."""
    return data_params(dataset=task.name, target=task.target, sensitive=task.sensitive)


def url_param(name: str, default: Any = None) -> Any:
    """A query parameter of the link the session was opened with (pages use it as a default,
    since a page that runs first may rewrite the address bar)."""
    value = st.session_state.get("_url", {}).get(name)
    return default if value is None else value


def selection(name: str, default: Any = None) -> Any:
    return st.session_state.get(f"sel.{name}", default)


def seed_widget(name: str, default: Any, valid: list[Any] | None = None) -> str:
    """Key of the widget for selection ``name``, seeded from the kept value (or ``default``),
    which it keeps in turn. A kept value not among ``valid`` (e.g. a column of another dataset)
    is replaced by ``default``; for a multiselect's list, invalid entries are dropped."""
    key = f"w.{name}"
    value = st.session_state.get(key, st.session_state.get(f"sel.{name}", default))
    if valid is not None:
        if isinstance(value, list):
            value = [v for v in value if v in valid]
        elif value not in valid:
            value = default
    if key not in st.session_state or st.session_state[key] != value:
        st.session_state[key] = value
    st.session_state[f"sel.{name}"] = value
    return key


def reset_selections(*names: str) -> None:
    for name in names:
        st.session_state.pop(f"sel.{name}", None)


class PageDone(Exception):
    """Raised by :func:`stop_page`; the entry point catches it and still draws the sidebar."""


_IN_APP: contextvars.ContextVar[bool] = contextvars.ContextVar("fairengine_in_app", default=False)


@contextlib.contextmanager
def running_pages() -> Iterator[None]:
    """Run pages inside this block so that :func:`stop_page` ends only the page."""
    token = _IN_APP.set(True)
    try:
        yield
    except PageDone:
        pass
    finally:
        _IN_APP.reset(token)


def stop_page() -> None:
    """End the current page early. Unlike ``st.stop`` the entry point still draws the sidebar;
    a page run on its own (as AppTest's ``switch_page`` does) falls back to ``st.stop``."""
    if _IN_APP.get():
        raise PageDone
    st.stop()


def current_task() -> Task | None:
    return st.session_state.get(TASK_KEY)


def set_task(task: Task | None) -> None:
    st.session_state[TASK_KEY] = task


def require_task() -> Task:
    """The current task, or end the page with a pointer to the Data page (a method page then
    asks :func:`dashboard.components.runner.require` whether its method runs on it)."""
    task = current_task()
    if task is None:
        if warning := st.session_state.get("url_warning"):
            st.warning(warning)  # e.g. a link made from an upload; the Data page shows it too
        st.info("Choose a dataset and its roles on the Data page first.")
        label = (
            "Upload the table again on the Data page"
            if selection("source") == "upload"
            else "Go to the Data page"
        )
        st.page_link("views/data.py", label=label, icon=":material/table_view:")
        stop_page()
    return task
