"""Build the task from the kept selections when a page other than Data opens first.

A shared link such as ``/compare?dataset=compas&sensitive=race`` must show that task without a
visit to the Data page; the Data page itself always rebuilds the task from its widgets.
"""

from __future__ import annotations

import streamlit as st

from dashboard.components import cached
from dashboard.components.state import DEFAULT_DATASET, TASK_KEY, selection, set_task
from fairengine.data import DataError
from fairengine.data.registry import DATASETS, default_features


def ensure_task() -> None:
    """Load the selected (or default) bundled dataset once per session if no task exists yet."""
    if TASK_KEY in st.session_state or selection("source", "bundled") != "bundled":
        return
    name = selection("dataset", DEFAULT_DATASET)
    info = DATASETS.get(name, DATASETS[DEFAULT_DATASET])
    frame = cached.bundled_frame(info.name)
    target = selection("target") or info.target
    sensitive = tuple(selection("sensitive") or info.sensitive)
    kind = selection("kind")
    try:
        task = cached.build_task(
            frame,
            name=info.name,
            target=target,
            sensitive=sensitive,
            features=default_features(info, frame, target, sensitive),
            kind=None if kind in (None, "auto") else kind,
            positive_label=info.positive_labels.get(target),
            drop_missing=False,
            merge_small_groups=False,
        )
    except DataError as exc:
        st.session_state["url_warning"] = f"The link's roles are not valid: {exc}"
        set_task(None)
        return
    set_task(task)
