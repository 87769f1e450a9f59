"""The current task, shown in the sidebar of every page."""

from __future__ import annotations

import streamlit as st

from dashboard.components.deploy import limits
from dashboard.components.state import current_task


def render_task_summary() -> None:
    task = current_task()
    with st.sidebar:
        if (caps := limits()).demo:
            st.caption(caps.note())
        st.markdown("#### Current task")
        if task is None:
            st.caption("No valid task yet: choose data and roles on the **Data** page.")
            return
        info = task.summary()
        target = f"`{task.target}`"
        if task.kind == "classification":
            target += f" (1 = {info['positive_label']})"
        groups = ", ".join(map(str, info["groups"]))
        st.markdown(
            f"**{task.name}** · {info['rows']:,} rows · {task.kind}  \n"
            f"Target: {target}  \n"
            f"Sensitive: {', '.join(f'`{c}`' for c in task.sensitive)} "
            f"({task.n_groups} groups)  \n"
            f"Features: {info['features']}",
            help=f"Groups: {groups}\n\nFingerprint: {task.fingerprint}",
        )
