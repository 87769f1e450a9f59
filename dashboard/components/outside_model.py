"""The Compare page's "Your model" panel: audit an outside model (a column of the table, a
predictions file keyed by row id, or a model file) and draw it on the plane beside the methods,
with its per-group table, its checks and what it would cost to be fairer.

The engine does the work (:mod:`fairengine.audit`); this module only collects the inputs, keeps
the audited model in the session and draws it. A visitor's file is read, and a model file
predicts, in a job of the pool (:mod:`.upload_jobs`), never in the page's thread; the page shows
the job's progress and Cancel meanwhile. Errors from the engine are shown in words."""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dashboard.components.errors import show_unexpected
from dashboard.components.evidence import show_checks
from dashboard.components.jobs import JobFailed, ServerBusy
from dashboard.components.outside_rows import adopt_task, render_split_download, trained_on_input
from dashboard.components.runner import job_value
from dashboard.components.upload_jobs import (
    file_cpu_seconds,
    outside_values,
    scored_task,
    table_columns,
)
from fairengine.audit import AuditResult, Outside, audit_outside, cost_of_fairness
from fairengine.audit.sources import from_column
from fairengine.data import Task
from fairengine.data.errors import DataError
from fairengine.methods import get_method
from fairengine.metrics import metric_label
from fairengine.textsafe import md_text, plot_text

#: Session keys: the outside model's values (per task), its audits, and the models of an
#: opened comparison.
SOURCE_KEY, AUDITS_KEY, SAVED_KEY = "cmp_outside", "cmp_outside_audits", "cmp_outside_saved"
#: Session key of the outside model post-processed by ThresholdOptimizer (one, the last asked).
POST_KEY = "cmp_outside_post"
#: Session key of the columns of the last predictions file (its upload id, its column names).
COLUMNS_KEY = "cmp_outside_columns"
#: Job slots (:func:`.runner.job_value`) of reading a predictions file's columns, and of
#: reading a file into the outside model's values.
COLUMNS_SLOT, VALUES_SLOT = "outside.columns", "outside.values"
ROUTES = ("A column of the table", "A predictions file", "A model file")
KINDS = {"Guess from the values": None, "Predictions (0 or 1)": "predictions",
         "Scores (probability of 1)": "scores"}  # fmt: skip
OUTSIDE_COLOR = "#d62728"


def _fail(exc: Exception) -> None:
    if isinstance(exc, DataError | ValueError | JobFailed | ServerBusy):  # the pool's in words
        st.error(f"The model could not be added: {md_text(exc)}", icon=":material/error:")
    else:
        show_unexpected(exc, "the model audit")


def _kind_input(key: str) -> str | None:
    words = st.selectbox("The values are", list(KINDS), key=key)
    return KINDS[words]


#: What "Add to the plane" asks of a route: a call on the page's own table, or a job on a
#: visitor's file (its key, the upload, and :func:`.upload_jobs.outside_values`'s route and
#: options).
Build = Callable[[], Outside] | tuple[str, Any, str, dict[str, Any]]


def _column_route(task: Task) -> Build | None:
    column = st.selectbox(
        "Column holding the model's predictions or scores",
        list(task.features),
        index=None,
        placeholder="Choose a column",
        key="cmp_out_column",
    )
    kind = _kind_input("cmp_out_column_kind")
    if column is None:
        return None
    st.caption(
        f"Adding it takes {md_text(repr(column))} out of every method's features (no method may "
        "learn from your model's output): frontiers fitted with it are set aside until swept "
        "again."
    )
    return lambda: from_column(task, column, kind)


def _file_columns(upload: Any) -> list[str] | None:
    """The predictions file's column names, read in a job once per upload (None meanwhile, or
    when the file cannot be read: then the error is on the page)."""
    found = st.session_state.get(COLUMNS_KEY)
    if found and found[0] == upload.file_id:
        return found[1]
    key = f"columns:{upload.file_id}"
    status, value = job_value(
        COLUMNS_SLOT,
        "Reading the predictions file",
        key,
        table_columns,
        upload.getvalue(),
        start=True,
        cpu_seconds=file_cpu_seconds(),
    )
    if status == "error":
        _fail(value)
    if status != "done":
        return None
    st.session_state[COLUMNS_KEY] = (upload.file_id, value)
    return value


def _file_route(task: Task) -> Build | None:
    upload = st.file_uploader(
        "Predictions file (CSV or Parquet): one row id column and one prediction column",
        type=["csv", "parquet", "txt", "gz"],
        key="cmp_out_file",
    )
    if upload is None:
        return None
    columns = _file_columns(upload)
    if columns is None:
        return None
    id_column = st.selectbox("Row id column", columns, key="cmp_out_id")
    others = [c for c in columns if c != id_column] or columns
    column = st.selectbox("Prediction column", others, key="cmp_out_pred")
    kind = _kind_input("cmp_out_file_kind")
    key = f"values:{upload.file_id}:{task.fingerprint}:{id_column}:{column}:{kind}"
    options = {"id_column": id_column, "column": column, "kind": kind}
    return key, upload, "file", options


def _model_route(task: Task) -> Build | None:
    upload = st.file_uploader(
        "Model file: a fairengine model (.fairmodel) or a scikit-learn pipeline saved with "
        "skops (.skops). Pickles are never loaded.",
        type=["fairmodel", "skops", "zip"],
        key="cmp_out_model",
    )
    if upload is None:
        return None
    key = f"values:{upload.file_id}:{task.fingerprint}:model"
    return key, upload, "model", {}


def _built(task: Task, build: Build | None, clicked: bool) -> Outside | None:
    """The outside model "Add to the plane" asked for: at once from the table's column; from
    a file once its job is done (its progress and Cancel are drawn meanwhile)."""
    if callable(build):
        return build() if clicked else None
    if build is None:
        return None
    key, upload, route, options = build
    raw = upload.getvalue() if clicked else b""  # read only to submit the job
    status, found = job_value(
        VALUES_SLOT,
        "Reading your model",
        key,
        outside_values,
        task,
        raw,
        upload.name,
        route,
        start=clicked,
        retry=clicked,
        cpu_seconds=file_cpu_seconds(),
        **options,
    )
    if status == "error":
        raise found
    if status != "done":
        return None
    values = found["values"]
    return Outside(scored_task(task, found), values, found["kind"], found["source"])


def _current(task: Task) -> dict[str, Any] | None:
    found = st.session_state.get(SOURCE_KEY)
    return found if found and found["fingerprint"] == task.fingerprint else None


def _audited(
    entry: dict[str, Any], threshold: float, name: str, trained: tuple[Any, str]
) -> AuditResult | None:
    """The audit of the stored values at ``threshold`` under ``name`` on the test rows the
    model never saw (``trained``: the answer and its token; computed once each)."""
    key = (entry["token"], round(threshold, 4), name, trained[1])
    cache = st.session_state.setdefault(AUDITS_KEY, {})
    if key not in cache:
        try:
            cache.clear()
            cache[key] = audit_outside(
                entry["outside"], threshold=threshold, name=name, trained_on=trained[0]
            )
        except Exception as exc:
            _fail(exc)
            return None
    return cache[key]


def render_outside_panel(task: Task) -> AuditResult | None:
    """The "Your model" expander; returns the audited outside model (None before one is added)."""
    entry = _current(task)
    with st.expander("Your model: put an outside model on this plane", expanded=entry is not None):
        st.caption(
            "Audit a model you already have: it is scored by the same evaluation on the same "
            "test rows as every method, with per-group intervals and its own checks."
        )
        render_split_download(task)
        # seeded from the added model: the widget is forgotten on a run that stops before it
        st.session_state.setdefault(
            "cmp_out_name", entry.get("name", "my model") if entry else "my model"
        )
        name = st.text_input("Name on the plane", key="cmp_out_name").strip()
        route = st.radio("Its predictions come from", ROUTES, horizontal=True, key="cmp_out_route")
        make = {ROUTES[0]: _column_route, ROUTES[1]: _file_route, ROUTES[2]: _model_route}[route]
        build = make(task)
        trained = trained_on_input(task)
        clicked = st.button("Add to the plane", key="cmp_out_add", disabled=build is None)
        try:
            outside = _built(task, build, clicked)
        except Exception as exc:
            _fail(exc)
        else:
            if outside is not None:
                entry = {"fingerprint": outside.task.fingerprint, "outside": outside,
                         "token": uuid.uuid4().hex, "name": name}  # fmt: skip
                st.session_state[SOURCE_KEY] = entry
                if adopt_task(task, outside.task):
                    st.rerun()  # the methods' features changed: the plane is another one
        if entry is None:
            return None
        entry["name"] = name
        threshold = _threshold_input(entry["outside"])
        if st.button("Remove it from the plane", key="cmp_out_remove"):
            st.session_state.pop(SOURCE_KEY, None)
            return None
    return None if trained is None else _audited(entry, threshold, name or "my model", trained)


def _threshold_input(outside: Outside) -> float:
    st.caption(f"Added: {md_text(outside.kind)} from {md_text(outside.source)}.")
    if outside.kind != "scores":
        return 0.5
    return st.slider(
        "Threshold: scores at or above it predict 1",
        0.0,
        1.0,
        0.5,
        0.01,
        key="cmp_out_threshold",
    )


def render_postprocess(task: Task, audited: AuditResult | None) -> AuditResult | None:
    """Offer fairlearn's ThresholdOptimizer on the outside model's scores (post-processing,
    :func:`fairengine.audit.postprocess`); returns the post-processed model to draw beside it."""
    from fairengine.methods.threshold_optimizer import CONSTRAINT_WORDS, SENSITIVE_AT_PREDICTION

    entry = _current(task)
    if audited is None or entry is None or audited.kind != "scores":
        return None
    if not st.checkbox(
        "Also post-process it with fairlearn's ThresholdOptimizer",
        key="cmp_out_post",
        help="Group-specific thresholds on your model's scores, fitted on the training rows. "
        + SENSITIVE_AT_PREDICTION,
    ):
        return None
    st.caption(f"ThresholdOptimizer: {md_text(SENSITIVE_AT_PREDICTION)}")
    constraint = st.selectbox(
        "Post-processing constraint",
        tuple(CONSTRAINT_WORDS),
        format_func=CONSTRAINT_WORDS.get,
        key="cmp_out_post_constraint",
    )
    key = (entry["token"], audited.name, audited.threshold, constraint)
    cache = st.session_state.setdefault(POST_KEY, {})
    if key not in cache:
        from fairengine.audit import postprocess

        try:
            cache.clear()
            cache[key] = postprocess(audited, entry["outside"].task, {"constraint": constraint})
        except Exception as exc:
            _fail(exc)
            return None
    return cache[key]


# -- on the plane ---------------------------------------------------------------------------------


def saved_audits(task: Task) -> list[AuditResult]:
    """The outside models of a comparison opened on this task."""
    found = st.session_state.get(SAVED_KEY)
    return list(found["audits"]) if found and found["fingerprint"] == task.fingerprint else []


def add_outside_points(
    fig: go.Figure, audits: Sequence[AuditResult], x: str, y: str, split: str
) -> list[str]:
    """Each outside model as a labelled red diamond on (x, y); returns the names of those that
    lack one of the plane's metrics (not drawn)."""
    missing = []
    for result in audits:
        values = result.metrics.get(split, {})
        px, py = values.get(x), values.get(y)
        if px is None or py is None or not (math.isfinite(px) and math.isfinite(py)):
            missing.append(result.name)
            continue
        name = plot_text(result.name)
        fig.add_trace(
            go.Scatter(
                x=[px], y=[py], mode="markers+text", name=f"your model: {name}",
                text=[name], textposition="top center",
                marker={"symbol": "diamond", "size": 16, "color": OUTSIDE_COLOR,
                        "line": {"color": "#1f2633", "width": 1}},
                hovertemplate=f"<b>{name}</b><br>{plot_text(metric_label(x))}: %{{x:.4f}}"
                f"<br>{plot_text(metric_label(y))}: %{{y:.4f}}<extra></extra>",
            )
        )  # fmt: skip
    return missing


# -- its details ----------------------------------------------------------------------------------


def point_records(points: Sequence[Any]) -> list[dict[str, Any]]:
    """The cached points as the records :func:`cost_of_fairness` reads."""
    records = []
    for point in points:
        evidence = point.evidence or {}
        records.append({
            "method": point.method, "point_id": point.point_id, "knobs": dict(point.knobs),
            "metrics": point.metrics, "checks": evidence.get("checks"),
        })  # fmt: skip
    return records


def cost_table(result: AuditResult, points: Sequence[Any]) -> pd.DataFrame:
    """What it would cost the outside model to be fairer, in the page's words."""
    cost = cost_of_fairness(result, [point_records(points)])
    if cost.empty:
        return cost
    fair, perf = metric_label(result.fairness_metric), metric_label(result.performance_metric)
    return pd.DataFrame({
        "method": [get_method(m).title for m in cost["method"]],
        "point": cost["point_id"], "knobs": cost["knobs"],
        fair: cost["fairness"], f"{fair} gain": cost["fairness_gain"],
        perf: cost["performance"], f"{perf} cost": cost["error_cost"],
        "checks": cost["checks"].replace({"": "not stored", "ok": "all held", "warn": "warning",
                                          "fail": "failed"}),
    })  # fmt: skip


def curve_figure(result: AuditResult) -> go.Figure:
    """Per group, the true and false positive rates on the test rows at every threshold (the
    ROC-like curve of the scores), with the chosen threshold marked."""
    fig = go.Figure()
    for group, part in result.curve.groupby("group", sort=False):
        for rate, dash in (("tpr", "solid"), ("fpr", "dot")):
            fig.add_trace(
                go.Scatter(
                    x=part["threshold"], y=part[rate], mode="lines",
                    name=plot_text(f"{group}: {rate.upper()}"), line={"dash": dash},
                )
            )  # fmt: skip
    if result.threshold is not None:
        fig.add_vline(x=result.threshold, line={"dash": "dash", "color": "#59636e"})
    fig.update_layout(
        title={"text": "True and false positive rate per group at each threshold", "x": 0},
        xaxis_title="threshold (scores at or above it predict 1)",
        yaxis_title="rate on the test rows",
        height=380,
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
    )
    return fig


def show_outside(result: AuditResult, points: Sequence[Any]) -> None:
    """The outside model's per-group table with intervals, its checks and the cost table."""
    st.subheader(f"Your model: {md_text(result.name)}")
    perf, fair = result.point("test")
    st.caption(
        f"{md_text(result.kind)} from {md_text(result.source or 'a saved comparison')}"
        + (f", threshold {result.threshold:g}" if result.threshold is not None else "")
        + f". Test rows: {md_text(metric_label(result.performance_metric))} {perf:.4f}, "
        f"{md_text(metric_label(result.fairness_metric))} {fair:.4f}."
    )
    for note in result.notes:
        st.caption(md_text(note))
    show_checks(result.checks)
    st.markdown("**Per group on the test rows (95% bootstrap intervals)**")
    st.dataframe(result.groups, key="cmp_out_groups")
    if result.curve is not None:
        st.plotly_chart(curve_figure(result), key="cmp_out_curve")
    st.markdown("**What would it cost to be fairer?**")
    cost = cost_table(result, points)
    if cost.empty:
        st.info(
            "No cached point of any method is fairer than this model on "
            f"{md_text(metric_label(result.fairness_metric))}: add a frontier above to compare."
        )
        return
    st.caption(
        "The points of each method nearest your model that improve "
        f"{md_text(metric_label(result.fairness_metric))}, cheapest first; a negative cost means "
        "the point is also more accurate."
    )
    st.dataframe(cost, hide_index=True, key="cmp_out_cost")
