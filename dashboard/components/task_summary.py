"""The current task, shown in the sidebar of every page (its names are the visitor's: each goes
through :mod:`fairengine.textsafe`)."""

from __future__ import annotations

import streamlit as st

from dashboard.components.deploy import limits
from dashboard.components.state import current_task
from fairengine.textsafe import md_code, md_text


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
