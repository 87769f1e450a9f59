"""The Compare page's "Your model" panel: audit an outside model (a column of the table, a
predictions file keyed by row id, or a model file) and draw it on the plane beside the methods,
with its per-group table, its checks and what it would cost to be fairer.

The engine audits (:mod:`fairengine.audit`); a visitor's file is read, and a model file
predicts, in a job of the pool (:mod:`.upload_jobs`), with its progress and Cancel."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dashboard.components.charts import DARK_EDGE, labelled_marker
from dashboard.components.comparison import show_verdicts
from dashboard.components.errors import show_error
from dashboard.components.evidence import show_checks
from dashboard.components.outside_rows import adopt_task, render_split_download, trained_on_input
from dashboard.components.runner import job_value
from dashboard.components.upload_jobs import (
    file_cpu_seconds,
    outside_values,
    scored_task,
    table_columns,
)
from fairengine.audit import AuditResult, Outside, audit, cost_of_fairness, postprocess
from fairengine.audit.comparison import unique_names
from fairengine.audit.sources import from_column
from fairengine.data import Task
from fairengine.methods import get_method
from fairengine.methods.threshold_optimizer import CONSTRAINT_WORDS, SENSITIVE_AT_PREDICTION
from fairengine.metrics import metric_label
from fairengine.textsafe import md_text, plot_text

#: Session keys: the outside models added (their task's fingerprint and the list of each one's
#: values, number, name and trained-on answer), their audits by number, the models of an
#: opened comparison, the last post-processed model, and the columns of the last predictions
#: file (its upload id, its column names).
SOURCE_KEY, AUDITS_KEY, SAVED_KEY = "cmp_outside", "cmp_outside_audits", "cmp_outside_saved"
POST_KEY, COLUMNS_KEY = "cmp_outside_post", "cmp_outside_columns"
ROUTES = ("A column of the table", "A predictions file", "A model file")
KINDS = {"Guess from the values": None, "Predictions (0 or 1)": "predictions",
         "Scores (probability of 1)": "scores"}  # fmt: skip
#: Each outside model's marker on the plane, in the order drawn (then again from the first).
OUTSIDE_MARKERS = (
    ("diamond", "#d62728"), ("star", "#9467bd"), ("square", "#8c564b"),
    ("triangle-up", "#e377c2"), ("pentagon", "#17becf"), ("cross", "#bcbd22"),
)  # fmt: skip


def _fail(exc: Exception) -> None:
    show_error(exc, "The model could not be added", "the model audit")


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
    kind = KINDS[st.selectbox("The values are", list(KINDS), key="cmp_out_column_kind")]
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
    status, value = job_value(
        "outside.columns",
        "Reading the predictions file",
        f"columns:{upload.file_id}",
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
    columns = None if upload is None else _file_columns(upload)
    if columns is None:
        return None
    id_column = st.selectbox("Row id column", columns, key="cmp_out_id")
    others = [c for c in columns if c != id_column] or columns
    column = st.selectbox("Prediction column", others, key="cmp_out_pred")
    kind = KINDS[st.selectbox("The values are", list(KINDS), key="cmp_out_file_kind")]
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
        "outside.values",
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
    return Outside(scored_task(task, found), found["values"], found["kind"], found["source"])


def _models(task: Task) -> list[dict[str, Any]]:
    """The outside models added on this task, in the order added."""
    found = st.session_state.get(SOURCE_KEY)
    return found["models"] if found and found["fingerprint"] == task.fingerprint else []


def _add_model(task: Task, outside: Outside, name: str, trained: Any) -> bool:
    """Add ``outside`` to the list under a name no other model has; every model moves onto its
    task (without each column an outside model holds). Returns whether the task changed."""
    models = _models(task)
    number = max((m["number"] for m in models), default=0) + 1
    name = unique_names([*(m["name"] for m in models), name or "my model"])[-1]
    models = [{**m, "outside": replace(m["outside"], task=outside.task)} for m in models]
    models.append({"outside": outside, "number": number, "name": name, "trained": trained})
    st.session_state[SOURCE_KEY] = {"fingerprint": outside.task.fingerprint, "models": models}
    return adopt_task(task, outside.task)


def _audited(entry: dict[str, Any], threshold: float) -> AuditResult | None:
    """The audit of the model's values at ``threshold`` under its name on the test rows it
    never saw (its ``trained`` answer and token), computed once each."""
    if entry["trained"] is None:  # asked for ids that are not given yet
        return None
    outside, (trained, token) = entry["outside"], entry["trained"]
    key = (outside.task.fingerprint, round(threshold, 4), entry["name"], token)
    cache = st.session_state.setdefault(AUDITS_KEY, {})
    found = cache.get(entry["number"])
    if found is None or found[0] != key:
        try:
            result = audit(outside, threshold=threshold, name=entry["name"], trained_on=trained)
        except Exception as exc:
            _fail(exc)
            return None
        found = cache[entry["number"]] = (key, result)
    return found[1]


def _model_rows(models: list[dict[str, Any]]) -> list[AuditResult]:
    """Each added model's name (to rename), threshold and Remove; returns their audits."""
    audits = []
    for entry in list(models):
        n = entry["number"]
        st.markdown(f"**{md_text(entry['name'])}**")
        c1, c2 = st.columns([3, 1])
        name = c1.text_input("Name", value=entry["name"], key=f"cmp_out_rename_{n}").strip()
        if c2.button("Remove", key=f"cmp_out_remove_{n}"):
            models[:] = [m for m in models if m["number"] != n]
            st.session_state.get(AUDITS_KEY, {}).pop(n, None)
            st.rerun()
        if name and name != entry["name"]:
            others = [m["name"] for m in models if m is not entry]
            entry["name"] = unique_names([*others, name])[-1]
            if entry["name"] != name:
                st.caption(
                    f"Another model is named {md_text(repr(name))}: this one is "
                    f"{md_text(repr(entry['name']))}."
                )
        outside = entry["outside"]
        st.caption(f"Added: {md_text(outside.kind)} from {md_text(outside.source)}.")
        threshold = 0.5
        if outside.kind == "scores":
            label = "Threshold: scores at or above it predict 1"
            threshold = st.slider(label, 0.0, 1.0, 0.5, 0.01, key=f"cmp_out_threshold_{n}")
        if (audited := _audited(entry, threshold)) is not None:
            audits.append(audited)
    return audits


def render_outside_panel(task: Task) -> list[AuditResult]:
    """The "Your models" expander: add, rename and remove outside models; returns their audits
    in the order added (those that could be audited)."""
    models = _models(task)
    with st.expander("Your models: put outside models on this plane", expanded=bool(models)):
        st.caption(
            "Audit models you already have, e.g. a candidate beside the one in production: each "
            "is scored by the same evaluation on the same test rows as every method, with "
            "per-group intervals and its own checks."
        )
        render_split_download(task)
        st.session_state.setdefault("cmp_out_name", "my model")
        name = st.text_input("Name on the plane", key="cmp_out_name").strip()
        route = st.radio("Its predictions come from", ROUTES, horizontal=True, key="cmp_out_route")
        make = {ROUTES[0]: _column_route, ROUTES[1]: _file_route, ROUTES[2]: _model_route}[route]
        build = make(task)
        st.caption(
            "The question below is about the model you add next (and, until then, the "
            "last one added)."
        )
        trained = trained_on_input(task)
        clicked = st.button(
            "Add to the plane", key="cmp_out_add", disabled=build is None or trained is None
        )
        try:
            outside = _built(task, build, clicked)
        except Exception as exc:
            _fail(exc)
        else:
            if outside is not None and _add_model(task, outside, name, trained):
                st.rerun()  # the methods' features changed: the plane is another one
            models = _models(task)
        if models and trained is not None:
            models[-1]["trained"] = trained
        return _model_rows(models)


def render_postprocess(task: Task, audits: Sequence[AuditResult]) -> AuditResult | None:
    """Offer fairlearn's ThresholdOptimizer on the scores of one outside model, chosen among
    those with scores (post-processing, :func:`fairengine.audit.postprocess`); returns the
    post-processed model to draw beside it."""
    entries = {m["name"]: m for m in _models(task)}
    scored = {a.name: a for a in audits if a.kind == "scores" and a.name in entries}
    if not scored:
        return None
    if not st.checkbox(
        "Also post-process one with fairlearn's ThresholdOptimizer",
        key="cmp_out_post",
        help="Group-specific thresholds on your model's scores, fitted on the training rows. "
        + SENSITIVE_AT_PREDICTION,
    ):
        return None
    chosen = st.selectbox("Post-process", list(scored), key="cmp_out_post_of")
    audited, entry = scored[chosen], entries[chosen]
    st.caption(f"ThresholdOptimizer: {md_text(SENSITIVE_AT_PREDICTION)}")
    constraint = st.selectbox(
        "Post-processing constraint",
        tuple(CONSTRAINT_WORDS),
        format_func=CONSTRAINT_WORDS.get,
        key="cmp_out_post_constraint",
    )
    key = (entry["number"], audited.task_key, entry["trained"][1], audited.name)
    key += (audited.threshold, constraint)
    cache = st.session_state.setdefault(POST_KEY, {})
    if key not in cache:
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
    """Each outside model as a labelled marker of its own shape and colour on (x, y); returns
    the names of those that lack one of the plane's metrics (not drawn)."""
    missing = []
    for i, result in enumerate(audits):
        symbol, color = OUTSIDE_MARKERS[i % len(OUTSIDE_MARKERS)]
        xy = tuple(result.metrics.get(split, {}).get(a) for a in (x, y))
        if any(v is None or not math.isfinite(v) for v in xy):
            missing.append(result.name)
            continue
        name = plot_text(result.name)
        marker = {"symbol": symbol, "size": 16, "color": color, "line": DARK_EDGE}
        axes = (metric_label(x), metric_label(y))
        labelled_marker(fig, name, xy, axes, name=f"your model: {name}", marker=marker)
    return missing


# -- its details ----------------------------------------------------------------------------------


def cost_table(result: AuditResult, points: Sequence[Any]) -> pd.DataFrame:
    """What it would cost the outside model to be fairer, in the page's words."""
    records = [
        {
            "method": p.method,
            "point_id": p.point_id,
            "knobs": dict(p.knobs),
            "metrics": p.metrics,
            "checks": (p.evidence or {}).get("checks"),
        }
        for p in points
    ]
    cost = cost_of_fairness(result, [records])
    if cost.empty:
        return cost
    fair, perf = metric_label(result.fairness_metric), metric_label(result.performance_metric)
    return pd.DataFrame(
        {
            "method": [get_method(m).title for m in cost["method"]],
            "point": cost["point_id"],
            "knobs": cost["knobs"],
            fair: cost["fairness"],
            f"{fair} gain": cost["fairness_gain"],
            perf: cost["performance"],
            f"{perf} cost": cost["error_cost"],
            "checks": cost["checks"].replace(
                {"": "not stored", "ok": "all held", "warn": "warning", "fail": "failed"}
            ),
        }
    )


def curve_figure(result: AuditResult) -> go.Figure:
    """Per group, the true and false positive rates on the test rows at every threshold (the
    ROC-like curve of the scores), with the chosen threshold marked."""
    fig = go.Figure()
    for group, part in result.curve.groupby("group", sort=False):
        for rate, dash in (("tpr", "solid"), ("fpr", "dot")):
            fig.add_scatter(
                x=part["threshold"],
                y=part[rate],
                mode="lines",
                name=plot_text(f"{group}: {rate.upper()}"),
                line={"dash": dash},
            )
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


def show_outside(audits: Sequence[AuditResult], points: Sequence[Any], tau: float = 0.8) -> None:
    """One outside model's per-group table with intervals and four-fifths verdicts at ``tau``,
    its checks and the cost table (the one chosen, when there are several)."""
    by_name = {a.name: a for a in audits}
    chosen = next(iter(by_name))
    if len(by_name) > 1:
        chosen = st.selectbox("Details of", list(by_name), key="cmp_out_details")
    result = by_name[chosen]
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
    show_verdicts(result.groups, tau)
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
