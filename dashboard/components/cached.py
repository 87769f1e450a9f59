"""Engine calls behind Streamlit caches: pages call these, not the engine's heavy parts."""

from __future__ import annotations

import os

import pandas as pd
import streamlit as st

from fairengine.data import DataError, TableOptions, Task, from_frame, read_table
from fairengine.data.registry import load_frame
from fairengine.data.roles import RoleGuess, guess_roles
from fairengine.metrics import group_table


@st.cache_data(show_spinner=False, max_entries=16)
def bundled_frame(name: str) -> pd.DataFrame:
    return load_frame(name)


@st.cache_data(show_spinner="Reading the file…", max_entries=4)
def uploaded_frame(data: bytes, file_name: str, encoding: str | None = None) -> pd.DataFrame:
    """Read an upload (CSV or Parquet); raises DataError with a readable message.

    ``encoding`` names a CSV file's text encoding when detection refuses it.
    """
    del file_name  # part of the cache key only, so a re-upload under another name re-reads
    return read_table(data, encoding=encoding)


@st.cache_data(show_spinner=False, max_entries=4)
def sample_rows(frame: pd.DataFrame, n: int) -> pd.DataFrame:
    """A seeded random sample of ``n`` rows (original order kept)."""
    return frame.sample(n=n, random_state=0).sort_index()


@st.cache_data(show_spinner=False, max_entries=8)
def role_guess(frame: pd.DataFrame) -> RoleGuess:
    """The first guess of a new table's roles (:func:`fairengine.data.roles.guess_roles`)."""
    return guess_roles(frame)


@st.cache_data(show_spinner="Checking the roles…", max_entries=32)
def build_task(
    frame: pd.DataFrame,
    *,
    target: str,
    sensitive: tuple[str, ...],
    features: tuple[str, ...] | None,
    kind: str | None,
    positive_label: str | tuple[str, ...] | None,
    options: TableOptions,
) -> Task:
    """:func:`fairengine.data.from_frame` with these roles and table ``options`` (its name,
    missing values, small groups), cached per table and arguments."""
    return from_frame(
        frame,
        target=target,
        sensitive=list(sensitive),
        features=None if features is None else list(features),
        kind=kind,  # type: ignore[arg-type]
        positive_label=positive_label,
        options=options,
    )


@st.cache_data(show_spinner=False, max_entries=32)
def group_overview(_task: Task, fingerprint: str) -> pd.DataFrame:
    """Group sizes and base rates (with bootstrap intervals) of a task; keyed by fingerprint.

    Only what describes the data: no classifier columns (scoring the label against itself would
    show accuracy 1 and TPR 1)."""
    del fingerprint
    task = _task
    table = group_table(
        task.y, task.y, task.groups, group_names=list(task.group_names), kind=task.kind, ci=0.95
    )
    rate = "base_rate" if task.kind == "classification" else "mean_target"
    return table[["n", "share", rate, f"{rate}_low", f"{rate}_high"]]


__all__ = ["DataError", "build_task", "bundled_frame", "group_overview", "uploaded_frame"]


def frontier_store():
    """The user's frontier cache, with the shipped demo frontiers as a read-only fallback."""
    return _frontier_store(os.environ.get("FAIRENGINE_CACHE"))


@st.cache_resource(show_spinner=False)
def _frontier_store(root: str | None):
    from fairengine.frontier import FrontierStore
    from fairengine.frontier.demo import demo_root

    return FrontierStore(root, read_only=(demo_root(),))


@st.cache_resource(show_spinner=False, max_entries=16)
def split_task(_task: Task, fingerprint: str) -> tuple[Task, Task]:
    """The default train/test split of a task (the same one the CLI and precompute use)."""
    del fingerprint
    return _task.split()


@st.cache_resource(show_spinner=False, max_entries=64)
def point_model(path: str, mtime: float):
    """A cached point's model, loaded (and verified) once per file version."""
    del mtime
    from fairengine.export import load_model

    return load_model(path)


@st.cache_data(show_spinner=False, max_entries=64)
def point_groups(_model, _test: Task, key: str) -> pd.DataFrame:
    """Per-group test metrics with bootstrap intervals of one point (keyed by point and data)."""
    del key
    from fairengine.frontier.compare import group_metrics

    return group_metrics(_model, _test)


@st.cache_data(show_spinner=False, max_entries=16)
def model_file(_result, _train: Task, _test: Task, key: str) -> bytes:
    """A run's model file with its model card and metadata (keyed by ``key``)."""
    del key
    from fairengine.export import model_bytes, model_card, result_metadata

    return model_bytes(
        _result.model,
        card=model_card(_result, _train, _test),
        metadata=result_metadata(_result, _train, _test),
    )
