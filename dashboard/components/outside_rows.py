"""The rows an outside model saw, on the Compare page: the engine's split as a download
(:func:`render_split_download`), the question "which rows was it trained on?"
(:func:`trained_on_input`), and the task without the model's own columns (:func:`adopt_task`,
:func:`render_stale_notice`).
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from dashboard.components import cached
from dashboard.components.state import seed_widget, selection, set_task
from fairengine.audit.overlap import TrainedOn, ids_from_table, trained_on_rows
from fairengine.data import DataError, Task, read_table
from fairengine.data.registry import DATASETS
from fairengine.data.split import ROW_COLUMN, split_table
from fairengine.frontier import task_key
from fairengine.textsafe import md_text

#: Session key of the columns set aside for an outside model (the task they apply to).
STALE_KEY = "cmp_outside_stale"
ROW_NUMBER = "row number (0 = first data row)"
QUESTION = {
    "Not said": "unknown",
    "None of this table's rows": "none",
    "The engine's training rows": "engine",
    "These ids (a file)": "ids",
}


def source_table(task: Task) -> pd.DataFrame:
    """The table the task was built from (every column, ids included), or the task's own rows
    when it cannot be found again (a task made elsewhere)."""
    table = None
    try:
        if selection("source", "bundled") == "upload" and "upload.bytes" in st.session_state:
            table = cached.uploaded_frame()
        elif task.name in DATASETS:
            table = cached.bundled_frame(task.name)
    except DataError:
        table = None
    if table is None or not task.frame.index.isin(table.index).all():
        return task.frame
    return table


@st.cache_data(show_spinner=False, max_entries=8)
def id_columns(_table: pd.DataFrame, key: str) -> list[str]:
    """Columns that can identify rows: integer or text values, none missing, none repeated
    (cached per table: ``key`` names it)."""
    del key
    return [
        str(name)
        for name, values in _table.items()
        if values.dtype.kind in "iuOSU" and values.notna().all() and values.is_unique
    ]


def _table_key(task: Task) -> str:
    """Names the task's table (the bundled dataset or the upload) for the caches."""
    upload = st.session_state.get("upload.id")
    return f"{selection('source', 'bundled')}:{task.name}:{upload}:{task.fingerprint}"


def _id_choice(task: Task, label: str, key: str) -> pd.Series | None:
    """The id column of the task's table the user picks (None: row numbers)."""
    table = source_table(task)
    choice = st.selectbox(label, [ROW_NUMBER, *id_columns(table, _table_key(task))], key=key)
    return None if choice == ROW_NUMBER else table[choice]


@st.cache_data(show_spinner=False, max_entries=8)
def _split_csv(
    _task: Task, table_key: str, _id_values: pd.Series | None, id_name: str | None
) -> tuple[bytes, int, int]:
    """The split table as CSV and its numbers of training and test rows (cached per task and
    id column)."""
    del table_key, id_name
    ids = split_table(_task, id_values=_id_values)
    counts = ids["part"].value_counts()
    return ids.to_csv(index=False).encode(), int(counts.get("train", 0)), int(counts.get("test", 0))


def render_split_download(task: Task) -> None:
    """The "Download the train and test row ids" button (the split every method uses)."""
    id_values = _id_choice(task, "Identify rows by", "cmp_split_ids_by")
    id_name = None if id_values is None else str(id_values.name)
    try:
        data, n_train, n_test = _split_csv(task, _table_key(task), id_values, id_name)
    except DataError as exc:
        st.error(md_text(exc))
        return
    st.download_button(
        "Download the train and test row ids",
        data=data,
        file_name=f"{task.name}-split-ids.csv",
        mime="text/csv",
        key="cmp_split_ids",
        on_click="ignore",
        help=f"{n_train:,} training rows and {n_test:,} test rows: "
        "train your model on the training rows only, so its audit is on rows it never saw.",
    )


def trained_on_input(task: Task) -> tuple[TrainedOn, str] | None:
    """Ask which rows the model was trained on; the answer resolved on ``task``'s rows and a
    token naming it (None while the ids are still to be given, or refused: the error is shown)."""
    options = list(QUESTION)
    key = seed_widget("cmp_out_trained", options[0], options)  # kept across a page that stops
    words = st.radio("Which rows was it trained on?", options, key=key, horizontal=True)
    answer = QUESTION[words]
    if answer == "unknown":
        st.warning(
            "Not said: the audit is valid only if the model never saw the test rows. Download "
            "the row ids above and train it on the training rows, or say what it was trained on.",
            icon=":material/warning:",
        )
    if answer != "ids":
        return trained_on_rows(task, answer), answer
    upload = st.file_uploader(
        "Ids of the rows it was trained on (CSV or Parquet: one id column, or the ids file "
        "downloaded above)",
        type=["csv", "parquet", "txt", "gz"],
        key="cmp_out_trained_file",
    )
    id_values = _id_choice(task, "The ids are the table's", "cmp_out_trained_by")
    if upload is None:
        return None
    try:
        id_name = None if id_values is None else str(id_values.name)
        ids = ids_from_table(read_table(upload.getvalue()), id_name or ROW_COLUMN)
        trained = trained_on_rows(task, ids, id_values=id_values)
    except DataError as exc:
        st.error(f"The ids could not be used: {md_text(exc)}", icon=":material/error:")
        return None
    digest = hashlib.sha256(np.packbits(trained.seen).tobytes()).hexdigest()[:16]
    return trained, f"ids:{digest}:{trained.n_ids}"


# -- the task without the model's columns ---------------------------------------------------------


def adopt_task(task: Task, outside_task: Task) -> bool:
    """Make ``outside_task`` (``task`` without the columns an outside model holds) the session's
    task, kept as the Data page's feature selection; remember what was set aside. Returns
    whether the task changed (the page must run again on it)."""
    if outside_task.fingerprint == task.fingerprint:
        return False
    train, test = cached.split_task(task, task.fingerprint)
    dropped = [c for c in task.features if c not in outside_task.features]
    st.session_state[STALE_KEY] = {
        "fingerprint": outside_task.fingerprint,
        "columns": dropped,
        "key": task_key(train, test),
    }
    for name, value in (("all_features", False), ("features", list(outside_task.features))):
        st.session_state[f"sel.{name}"] = value
        st.session_state.pop(f"w.{name}", None)
    set_task(outside_task)
    return True


def render_stale_notice(task: Task, store: Any) -> None:
    """Say which frontiers were fitted with a column now set aside for an outside model: they
    are not on this plane (it shows only points fitted without it) until swept again."""
    found = st.session_state.get(STALE_KEY)
    if not found or found["fingerprint"] != task.fingerprint:
        return
    stale = store.points(found["key"])
    columns = md_text(", ".join(repr(c) for c in found["columns"]))
    methods = sorted({p.method for p in stale})
    fitted = (
        f" The {len(stale)} point(s) of {len(methods)} method(s) fitted with it are set aside, "
        "not shown: sweep them again above to compare on the same features."
        if stale
        else ""
    )
    st.info(
        f"Column(s) {columns} hold your model's predictions or row ids, so they are no longer a "
        f"feature of any method.{fitted}",
        icon=":material/info:",
    )
