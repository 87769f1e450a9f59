"""The session's task outside the Data page: built from the kept selections when another page
opens first (a shared link such as ``/compare?dataset=compas&sensitive=race``; the Data page
builds it from its widgets), and shown in the sidebar of every page (its names are the
visitor's: each goes through :mod:`fairengine.textsafe`).
"""

from __future__ import annotations

import streamlit as st

from dashboard.components import cached
from dashboard.components.deploy import limits
from dashboard.components.state import (
    DEFAULT_DATASET,
    TASK_KEY,
    current_task,
    selection,
    set_task,
)
from fairengine.data import DataError, Task
from fairengine.data.registry import DATASETS, default_features
from fairengine.textsafe import md_code, md_text


@st.cache_resource(show_spinner=False, max_entries=32)
def bundled_task(name: str, target: str, sensitive: tuple[str, ...], kind: str | None) -> Task:
    """The task of a bundled dataset with these roles, built once for every session of the
    server (keyed by names only: no hashing of the table, no copy per session)."""
    info = DATASETS[name]
    frame = cached.bundled_frame(name)
    return cached.build_task(
        frame,
        target=target,
        sensitive=sensitive,
        features=default_features(info, frame, target, sensitive),
        kind=kind,
        positive_label=info.positive_labels.get(target),
        name=name,
    )


def ensure_task() -> None:
    """Load the selected (or default) bundled dataset once per session if no task exists yet."""
    if TASK_KEY in st.session_state or selection("source", "bundled") != "bundled":
        return
    name = selection("dataset", DEFAULT_DATASET)
    info = DATASETS.get(name, DATASETS[DEFAULT_DATASET])
    target = selection("target") or info.target
    sensitive = tuple(selection("sensitive") or info.sensitive)
    kind = selection("kind")
    try:
        task = bundled_task(info.name, target, sensitive, None if kind in (None, "auto") else kind)
    except DataError as exc:
        st.session_state["url_warning"] = f"The link's roles are not valid: {md_text(exc)}"
        set_task(None)
        return
    set_task(task)


def render_task_summary() -> None:
    task = current_task()
    with st.sidebar:
        if (caps := limits()).demo:
            st.caption(md_text(caps.note()))
        st.markdown("#### Current task")
        if task is None:
            st.caption("No valid task yet: choose data and roles on the **Data** page.")
            return
        info = task.summary()
        target = md_code(task.target)
        if task.kind == "classification":
            target += f" (1 = {md_text(info['positive_label'])})"
        groups = ", ".join(md_text(g) for g in info["groups"])
        st.markdown(
            f"**{md_text(task.name)}** · {info['rows']:,} rows · {md_text(task.kind)}  \n"
            f"Target: {target}  \n"
            f"Sensitive: {', '.join(md_code(c) for c in task.sensitive)} "
            f"({task.n_groups:,} groups)  \n"
            f"Features: {info['features']:,}",
            help=f"Groups: {groups}\n\nFingerprint: {md_text(task.fingerprint)}",
        )
