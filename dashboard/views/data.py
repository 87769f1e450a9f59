"""Data page: pick a bundled dataset or upload a table, choose the roles, look at the groups.

File, column and value names of an upload, and the messages that quote them, reach Markdown
(messages, labels, help) only through :mod:`fairengine.textsafe`. Select boxes and multiselects
show their options as plain text, so columns are offered there unescaped.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard.components import cached
from dashboard.components.charts import group_rates_figure, group_sizes_figure
from dashboard.components.deploy import limits
from dashboard.components.state import (
    DEFAULT_DATASET,
    data_params,
    reset_selections,
    roles_from_link,
    seed_widget,
    set_task,
    stop_page,
)
from fairengine.data import DataError
from fairengine.data.io import MAX_FILE_BYTES
from fairengine.data.registry import DATASETS, default_features
from fairengine.data.roles import RoleGuess
from fairengine.data.validate import MIN_GROUP_SIZE, resolve_positive_label
from fairengine.textsafe import md_text

_ROLE_KEYS = (
    "target", "sensitive", "all_features", "features", "kind", "positive_label", "positive_values",
    "keep_columns", "leave_out",
)  # fmt: skip
#: Text encodings offered when detection refuses an upload.
_ENCODINGS = [
    "auto", "utf-8", "cp1252", "latin-1", "shift_jis", "cp932", "euc-jp", "gbk", "big5",
    "euc-kr", "cp1251", "cp1250", "iso-8859-2", "utf-16",
]  # fmt: skip
#: Most target values offered for a one-vs-rest choice.
_MAX_ONE_VS_REST = 50

st.title("Data")
st.caption(
    "Choose a bundled benchmark or upload your own table, then say which column to predict and "
    "which columns are sensitive. Every page works on the task defined here."
)

if warning := st.session_state.pop("url_warning", None):
    st.warning(warning)


def _on_new_data() -> None:
    reset_selections(*_ROLE_KEYS)
    for key in _ROLE_KEYS:
        st.session_state.pop(f"w.{key}", None)


def _encoding_choice() -> None:
    """The file's text encoding, kept under a plain key (it must survive runs without it)."""
    st.session_state["w.encoding"] = st.session_state.get("upload.encoding", "auto")

    def _keep() -> None:
        st.session_state["upload.encoding"] = st.session_state["w.encoding"]

    st.selectbox(
        "Text encoding of the file",
        _ENCODINGS,
        key="w.encoding",
        on_change=_keep,
        help="Detection reads UTF-8, UTF-16 with a byte-order mark and Windows-1252. Choose the "
        "file's encoding if it is another one.",
    )


source = st.radio(
    "Source",
    ["bundled", "upload"],
    format_func={"bundled": "Bundled benchmark", "upload": "Upload a file"}.get,
    horizontal=True,
    key=seed_widget("source", "bundled", ["bundled", "upload"]),
    on_change=_on_new_data,
)


frame: pd.DataFrame | None = None
name = "uploaded"
info = None
if source == "bundled":
    names = list(DATASETS)
    name = st.selectbox(
        "Dataset",
        names,
        format_func=lambda n: f"{DATASETS[n].title} — {DATASETS[n].description}",
        key=seed_widget("dataset", DEFAULT_DATASET, names),
        on_change=_on_new_data,
    )
    info = DATASETS[name]
    st.caption(f"Source: {md_text(info.source)}. Licence: {md_text(info.licence)}.")
    frame = cached.bundled_frame(name)
else:
    upload = st.file_uploader(
        "Upload a CSV or Parquet file",
        type=["csv", "tsv", "txt", "parquet", "pq", "gz", "zip"],
        help=f"Delimiter and encoding are detected. Limit {MAX_FILE_BYTES // 2**20} MB.",
        key="w.upload",
    )
    if upload is not None and upload.file_id != st.session_state.get("upload.id"):
        st.session_state["upload.id"] = upload.file_id
        st.session_state["upload.name"] = upload.name
        st.session_state["upload.bytes"] = upload.getvalue()
        st.session_state.pop("upload.encoding", None)
        _on_new_data()
        roles_from_link(upload.name)  # a link to this upload named its roles
    if "upload.bytes" in st.session_state:
        name = st.session_state["upload.name"].rsplit(".", 1)[0] or "uploaded"
        try:
            frame = cached.uploaded_frame()
        except DataError as exc:
            st.error(
                f"Could not read **{md_text(st.session_state['upload.name'])}**: {md_text(exc)}"
            )
            if "encoding" in str(exc):
                _encoding_choice()
        else:
            if st.session_state.get("upload.encoding", "auto") != "auto":
                _encoding_choice()
            if upload is None:
                st.caption(
                    f"Using the uploaded file **{md_text(st.session_state['upload.name'])}**."
                )
    else:
        st.info("Upload a table with one row per person and a header row to start.")
    del upload  # the page's callbacks keep its globals as long as the session: not the file

if frame is None:
    set_task(None)
    st.query_params.from_dict(data_params())  # the address names the upload, never Adult
    stop_page()

columns = [str(c) for c in frame.columns]
max_rows = limits().max_rows  # demo mode caps uploads harder (bundled tables are all smaller)
if len(frame) > max_rows:
    st.warning(
        f"This table has {len(frame):,} rows. The dashboard works on a random sample of "
        f"{max_rows:,} rows to stay interactive; the `fairengine` CLI runs on every row."
    )
    frame = cached.sample_rows(frame, max_rows)


# A bundled dataset opens on its documented roles; a new table on the engine's guess
# (fairengine/data/roles.py), said in one line while the roles are the guessed ones. When the
# guess asks, the select boxes list its candidates first.
guess = (
    RoleGuess(info.target, tuple(info.sensitive)) if info is not None else cached.role_guess(frame)
)
guess_line = st.empty()
left, right = st.columns(2)
with left:
    target_options = list(dict.fromkeys([*guess.target_candidates, *columns]))
    target = st.selectbox(
        "Target (what to predict)",
        target_options,
        key=seed_widget("target", guess.target, target_options),
        placeholder="Choose the column to predict",
    )
with right:
    others = [c for c in dict.fromkeys([*guess.sensitive_candidates, *columns]) if c != target]
    sensitive = st.multiselect(
        "Sensitive attribute(s)",
        others,
        key=seed_widget("sensitive", [c for c in guess.sensitive if c != target], others),
        help="Several columns define intersectional groups (e.g. sex & race).",
        placeholder="Choose the column(s) that define the groups",
    )
st.query_params.from_dict(data_params(target=target, sensitive=sensitive))
if info is None and target == guess.target and tuple(sensitive) == guess.sensitive:
    guess_line.info(md_text(guess.sentence()))
if target is None:
    set_task(None)
    st.info("Choose the target, the column to predict, to continue.")
    stop_page()

kind_options = ["auto", "classification", "regression"]
with st.expander("More roles: task kind, positive label, features, missing values"):
    c1, c2 = st.columns(2)
    kind_choice = c1.selectbox(
        "Task kind",
        kind_options,
        key=seed_widget("kind", "auto", kind_options),
        help="Auto: a two-valued target is classification; a numeric one with many values is "
        "regression.",
    )
    values = frame[target].dropna().astype(str).unique()
    positive_label = None
    if kind_choice != "regression" and len(values) == 2:
        known = info.positive_labels.get(target) if info is not None else None
        try:
            default_pos = str(
                known if known is not None else resolve_positive_label(frame[target], target, None)
            )
        except DataError:
            default_pos = sorted(values)[-1]
        label_options = sorted(values)
        positive_label = c2.selectbox(
            "Positive label (coded 1)",
            label_options,
            key=seed_widget("positive_label", default_pos, label_options),
        )
    elif kind_choice != "regression" and 2 < len(values) <= _MAX_ONE_VS_REST:
        value_options = sorted(values)
        chosen = c2.multiselect(
            "Treat these values as positive (one-vs-rest)",
            value_options,
            key=seed_widget("positive_values", [], value_options),
            help=f"{md_text(repr(target))} has {len(values)} values; the methods need a binary "
            "target. The chosen values are coded 1, all others 0. Leave empty for a regression "
            "target.",
        )
        if chosen:
            positive_label = tuple(chosen)
    all_features = st.checkbox(
        "Use every other column as a feature",
        key=seed_widget("all_features", True),
        help="Identifier columns (row numbers, index columns, ids) are left out; so are, for "
        "bundled data, columns that encode the target or the sensitive attribute.",
    )
    features = None
    if not all_features:
        candidates = [c for c in columns if c != target and c not in sensitive]
        chosen = [c for c in candidates if c not in guess.identifiers]
        features = st.multiselect(
            "Features",
            candidates,
            key=seed_widget("features", chosen, candidates),
        )
    drop_missing = st.checkbox(
        "Drop rows with a missing target or sensitive value",
        key=seed_widget("drop_missing", False),
    )
    merge_small = st.checkbox(
        f"Merge groups smaller than {MIN_GROUP_SIZE} rows into one group",
        key=seed_widget("merge_small", False),
    )

if not sensitive:
    set_task(None)
    st.info("Choose at least one sensitive attribute, the column(s) that define the groups.")
    stop_page()
if features is None and info is not None:
    features = list(default_features(info, frame, target, sensitive))

try:
    task = cached.build_task(
        frame,
        target=target,
        sensitive=tuple(sensitive),
        features=None if features is None else tuple(features),
        kind=None if kind_choice == "auto" else kind_choice,
        positive_label=positive_label,
        name=name,
        drop_missing=drop_missing,
        merge_small_groups=merge_small,
        keep=tuple(st.session_state.get("sel.keep_columns") or ()),
        leave_out=tuple(st.session_state.get("sel.leave_out") or ()),
    )
except DataError as exc:
    set_task(None)
    st.error(md_text(exc))
    stop_page()

set_task(task)


def _toggle(selection: str, column: str) -> None:
    """Add ``column`` to the kept list ``selection`` (keep_columns / leave_out), or remove it."""
    chosen = list(st.session_state.get(f"sel.{selection}") or ())
    st.session_state[f"sel.{selection}"] = (
        [c for c in chosen if c != column] if column in chosen else [*chosen, column]
    )


for note in task.notes:
    st.info(md_text(note))
# One click per column the engine left out or flagged: keep an identifier, leave out a leak.
toggles = [(c, "leave_out", f"Leave {c!r} out of the features") for c in task.leaks]
toggles += [
    (c, "leave_out", f"Use {c!r} as a feature again")
    for c in st.session_state.get("sel.leave_out") or ()
]
if features is None:  # chosen features already say which identifiers to keep
    kept = [c for c in st.session_state.get("sel.keep_columns") or () if c in task.features]
    toggles += [(c, "keep_columns", f"Keep {c!r} as a feature") for c in task.identifiers]
    toggles += [(c, "keep_columns", f"Leave {c!r} out again") for c in kept]
for column, selection, label in toggles:
    key = f"toggle.{selection}.{label.split()[0]}.{column}"
    st.button(md_text(label), key=key, on_click=_toggle, args=(selection, column))

m1, m2, m3, m4 = st.columns(4)
m1.metric("Rows", f"{len(task.frame):,}")
m2.metric("Features", len(task.features))
m3.metric("Groups", task.n_groups)
if task.kind == "classification":
    positive = " or ".join(map(md_text, task.positive_values)) or md_text(task.positive_label)
    m4.metric(f"P({md_text(task.target)} = {positive})", f"{task.y.mean():.3f}")
else:
    m4.metric(f"Mean {md_text(task.target)}", f"{task.y.mean():.3f}")

overview = cached.group_overview(task, task.fingerprint)
groups_tab, preview_tab = st.tabs(["Groups", "Preview"])
with groups_tab:
    g1, g2 = st.columns(2)
    g1.plotly_chart(group_sizes_figure(overview), key="chart.sizes")
    g2.plotly_chart(group_rates_figure(overview, task.kind), key="chart.rates")
    st.dataframe(overview, key="table.groups")
with preview_tab:
    st.caption(
        f"First 200 of {len(task.frame):,} rows (target, sensitive, features, then identifiers)."
    )
    st.dataframe(task.frame.head(200), key="table.preview")
