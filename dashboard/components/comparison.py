""""Add to comparison": put a method page's current single run on the Compare page's chart."""

from __future__ import annotations

import streamlit as st

from dashboard.components import cached
from fairengine.data import Task
from fairengine.export import result_metadata
from fairengine.frontier import task_key
from fairengine.methods.base import RunResult


def remember_for_compare(method: str, point_id: str | None = None) -> None:
    """Make sure the Compare page's method filter shows ``method`` (and select ``point_id``)."""
    shown = st.session_state.get("sel.cmp_methods")
    if isinstance(shown, list) and method not in shown:
        st.session_state["sel.cmp_methods"] = [*shown, method]
        st.session_state.pop("w.cmp_methods", None)
    if point_id is not None:
        st.session_state["sel.cmp_point"] = point_id
        st.session_state.pop("w.cmp_point", None)


def add_to_comparison(result: RunResult, train: Task, test: Task, *, key: str) -> None:
    """A button that stores ``result`` in the frontier cache as one more point of its method."""
    if not st.button(
        "Add to comparison",
        key=key,
        icon=":material/add_chart:",
        help="Store this run in the frontier cache so the Compare & export page plots it beside "
        "every other method on this task.",
    ):
        return
    store = cached.frontier_store()
    tkey = task_key(train, test)
    store.put(tkey, result, result_metadata(result, train, test))
    point = store.get(tkey, result.method, result.knobs)
    remember_for_compare(result.method, point.point_id if point else None)
    st.success("Added to the comparison.")
    st.page_link("views/compare.py", label="Open Compare & export", icon=":material/show_chart:")
