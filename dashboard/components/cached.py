"""Engine calls behind Streamlit caches: pages call these, not the engine's heavy parts.

What is derived from a bundled dataset is cached for every session of the server; what is
derived from a visitor's upload is kept in that session only (:func:`_remembered`, recognised by
identity), so it goes when Streamlit drops the session.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd
import streamlit as st

from fairengine import settings
from fairengine.data import Task, from_frame, read_table
from fairengine.data.registry import load_frame
from fairengine.data.roles import RoleGuess, guess_roles
from fairengine.lru import LRU
from fairengine.metrics import group_table, task_group_table


@st.cache_data(show_spinner=False, max_entries=16)
def bundled_frame(name: str) -> pd.DataFrame:
    return load_frame(name)


#: Session key of the values derived from the session's upload.
UPLOAD_MEMO = "_upload_memo"
#: Values kept per kind (each may be as large as the table): the current upload, and a task
#: and split to go back to after a change of roles.
UPLOAD_ENTRIES = {"frame": 1, "sample": 1, "roles": 1, "task": 2, "split": 2}


def _from_upload(value: Any) -> bool:
    """Whether ``value`` (a frame or a task) was derived from the session's upload here."""
    memo = st.session_state.get(UPLOAD_MEMO, {})
    return any(value is entry[1] for kept in memo.values() for entry in kept.values())


def _remembered(kind: str, key: tuple, inputs: tuple, compute: Callable[[], Any]) -> Any:
    """``compute()`` once per ``key`` and identical ``inputs`` in this session's upload memo (an
    LRU per kind of ``key -> (inputs, value)``; inputs are held so that their identity stays
    theirs)."""
    memo = st.session_state.setdefault(UPLOAD_MEMO, {}).setdefault(kind, LRU(UPLOAD_ENTRIES[kind]))
    found = memo.get(key)
    if found is not None and all(a is b for a, b in zip(found[0], inputs, strict=True)):
        return found[1]
    return memo.put(key, (inputs, compute()))[1]


def _spun(words: str, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``function(*args, **kwargs)`` under a spinner saying ``words``."""
    with st.spinner(words):
        return function(*args, **kwargs)


def uploaded_frame() -> pd.DataFrame:
    """Read the session's upload (CSV or Parquet, in its chosen text encoding when detection
    refused it) once per session; raises DataError with a readable message."""
    data, file_name = st.session_state["upload.bytes"], st.session_state["upload.name"]
    encoding = st.session_state.get("upload.encoding", "auto")
    encoding = None if encoding == "auto" else encoding
    key = (id(data), file_name, encoding)  # a re-upload under another name re-reads
    return _remembered(
        "frame",
        key,
        (data,),
        lambda: _spun("Reading the file…", read_table, data, encoding=encoding),
    )


def sample_rows(frame: pd.DataFrame, n: int) -> pd.DataFrame:
    """A seeded random sample of ``n`` rows (original order kept)."""
    return _remembered(
        "sample", (id(frame), n), (frame,), lambda: frame.sample(n=n, random_state=0).sort_index()
    )


def role_guess(frame: pd.DataFrame) -> RoleGuess:
    """The first guess of a new table's roles (:func:`fairengine.data.roles.guess_roles`)."""
    if _from_upload(frame):
        return _remembered("roles", (id(frame),), (frame,), lambda: guess_roles(frame))
    return _bundled_role_guess(frame)


_bundled_role_guess = st.cache_data(show_spinner=False, max_entries=8)(guess_roles)


def build_task(
    frame: pd.DataFrame,
    *,
    target: str,
    sensitive: tuple[str, ...],
    features: tuple[str, ...] | None,
    kind: str | None,
    positive_label: str | tuple[str, ...] | None,
    name: str,
    drop_missing: bool = False,
    merge_small_groups: bool = False,
    keep: tuple[str, ...] = (),
    leave_out: tuple[str, ...] = (),
) -> Task:
    """:func:`fairengine.data.from_frame` with these roles and table settings, cached per table
    and arguments: in the session for an upload, for every session for a bundled dataset."""
    roles = {
        "target": target,
        "sensitive": sensitive,
        "features": features,
        "kind": kind,
        "positive_label": positive_label,
        "name": name,
        "drop_missing": drop_missing,
        "merge_small_groups": merge_small_groups,
        "keep": keep,
        "leave_out": leave_out,
    }
    if _from_upload(frame):
        key = (id(frame), repr(sorted(roles.items())))
        return _remembered(
            "task", key, (frame,), lambda: _spun("Checking the roles…", from_frame, frame, **roles)
        )
    return _build_task(frame, **roles)


#: :func:`fairengine.data.from_frame` for the bundled datasets, cached for every session.
_build_task = st.cache_data(show_spinner="Checking the roles…", max_entries=32)(from_frame)


@st.cache_data(show_spinner=False, max_entries=32)
def group_overview(_task: Task, fingerprint: str) -> pd.DataFrame:
    """Group sizes and base rates (with bootstrap intervals) of a task; keyed by fingerprint.
    No classifier columns (scoring the label against itself would show accuracy 1)."""
    del fingerprint
    task = _task
    table = group_table(
        task.y, task.y, task.groups, group_names=list(task.group_names), kind=task.kind, ci=0.95
    )
    rate = "base_rate" if task.kind == "classification" else "mean_target"
    return table[["n", "share", rate, f"{rate}_low", f"{rate}_high"]]


def frontier_store():
    """The user's frontier cache, with the shipped demo frontiers as a read-only fallback."""
    return _frontier_store(settings.current().cache)


@st.cache_resource(show_spinner=False)
def _frontier_store(root: str | None):
    from fairengine.frontier import FrontierStore
    from fairengine.frontier.demo import demo_root

    return FrontierStore(root, read_only=(demo_root(),))


def split_task(task: Task, fingerprint: str) -> tuple[Task, Task]:
    """The default train/test split of a task (the same one the CLI and precompute use)."""
    if _from_upload(task):
        return _remembered("split", (fingerprint,), (task,), task.split)
    return _split_task(task, fingerprint)


@st.cache_resource(show_spinner=False, max_entries=16)
def _split_task(_task: Task, fingerprint: str) -> tuple[Task, Task]:
    del fingerprint
    return _task.split()


@st.cache_resource(show_spinner=False, max_entries=64)
def point_model(path: str, mtime: float):
    """A cached point's model, loaded (and verified) once per file version."""
    del mtime
    from fairengine.export import load_model

    return load_model(path)


@st.cache_data(show_spinner=False, max_entries=64)
def point_groups(_model, _test: Task, key: str, reference: str | None, tau: float) -> pd.DataFrame:
    """Per-group test metrics with bootstrap intervals of one point (keyed by point and data),
    disparities against group ``reference`` at the four-fifths threshold ``tau``."""
    del key
    predictions = _model.metric_predictions(_test.X)
    return task_group_table(_test, predictions, ci=0.95, reference=reference, tau=tau)


@st.cache_data(show_spinner=False, max_entries=16)
def model_file(_result, _train: Task, _test: Task, key: str) -> bytes:
    """A run's model file with its model card and metadata (keyed by ``key``)."""
    del key
    from fairengine.export import model_bytes, model_card, result_metadata
    from fairengine.methods import get_method

    return model_bytes(
        _result.model,
        card=model_card(_result, _train, _test, method=get_method(_result.method), for_file=True),
        metadata=result_metadata(_result, _train, _test),
    )
