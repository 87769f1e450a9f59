"""Engine calls behind Streamlit caches: pages call these, not the engine's heavy parts."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from fairengine.data import DataError, Task, from_frame, read_table
from fairengine.data.registry import load_frame
from fairengine.metrics import group_table


@st.cache_data(show_spinner=False, max_entries=16)
def bundled_frame(name: str) -> pd.DataFrame:
    return load_frame(name)


@st.cache_data(show_spinner="Reading the file…", max_entries=4)
def uploaded_frame(data: bytes, file_name: str) -> pd.DataFrame:
    """Read an upload (CSV or Parquet); raises DataError with a readable message."""
    del file_name  # part of the cache key only, so a re-upload under another name re-reads
    return read_table(data)


@st.cache_data(show_spinner="Checking the roles…", max_entries=32)
def build_task(
    frame: pd.DataFrame,
    *,
    name: str,
    target: str,
    sensitive: tuple[str, ...],
    features: tuple[str, ...] | None,
    kind: str | None,
    positive_label: str | None,
    drop_missing: bool,
    merge_small_groups: bool,
) -> Task:
    return from_frame(
        frame,
        target=target,
        sensitive=list(sensitive),
        features=None if features is None else list(features),
        kind=kind,  # type: ignore[arg-type]
        name=name,
        positive_label=positive_label,
        drop_missing=drop_missing,
        merge_small_groups=merge_small_groups,
    )


@st.cache_data(show_spinner=False, max_entries=32)
def group_overview(_task: Task, fingerprint: str) -> pd.DataFrame:
    """Group sizes and base rates (with bootstrap intervals) of a task; keyed by fingerprint."""
    del fingerprint
    task = _task
    return group_table(
        task.y, task.y, task.groups, group_names=list(task.group_names), kind=task.kind, ci=0.95
    )


__all__ = ["DataError", "build_task", "bundled_frame", "group_overview", "uploaded_frame"]
