"""Compare & export: every cached frontier of the current task on one chart; pick a point,
see its knobs and per-group metrics, download its model file and model card."""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from dashboard.components import cached
from dashboard.components.charts import frontier_figure, group_metrics_figure
from dashboard.components.compare_export import render_downloads, render_open
from dashboard.components.comparison import (
    RATIO_AXES,
    checks_summary,
    draw_four_fifths,
    failed_checks,
    largest_group,
    plane_references,
    point_result,
    referenced_metrics,
    referenced_table,
    render_reference,
    show_verdicts,
    stored_checks,
    verdict_words,
)
from dashboard.components.evidence import show_checks
from dashboard.components.knob_sweep import render_knob_sweep, render_sweep_every_method
from dashboard.components.outside_model import (
    add_outside_points,
    render_outside_panel,
    render_postprocess,
    saved_audits,
    show_outside,
)
from dashboard.components.outside_rows import render_stale_notice
from dashboard.components.state import (
    require_task,
    seed_widget,
    stop_page,
    task_params,
    url_param,
)
from fairengine.audit.core import referenced
from fairengine.export import model_bytes, model_card, read_manifest, result_metadata
from fairengine.frontier import task_key
from fairengine.frontier.compare import (
    comparison_table,
    default_plane,
    mark_pareto,
    metric_columns,
    plane_notes,
)
from fairengine.methods import get_method
from fairengine.metrics import metric_info, metric_label
from fairengine.textsafe import md_code, md_text

st.title("Compare & export")
task = require_task()

train, test = cached.split_task(task, task.fingerprint)
store = cached.frontier_store()
key = task_key(train, test)
points = store.points(key)
st.caption(
    f"Frontiers cached for **{md_text(task.name)}** "
    f"({md_text(task.target)} | {md_text(', '.join(task.sensitive))}), "
    f"train {len(train.frame):,} / test {len(test.frame):,} rows. Every predicting method is "
    "scored by the same evaluation on the same held-out rows; points on the outlined Pareto set "
    "are not beaten on both axes by any other point."
)


def _outside_panels(ids: list[str]) -> list:
    """The panels Your model, its post-processing and Open a saved comparison (pins among
    ``ids``); returns the outside models and saved audits to draw on the plane, their ratios
    and verdicts against the page's reference group and τ."""
    audited = render_outside_panel(task)
    post_processed = render_postprocess(task, audited)
    with st.expander("Open a saved comparison"):
        saved_pins = render_open(task, train, test, ids)
        if saved_pins and st.session_state.get("cmp_pins_from") != saved_pins:
            st.session_state["cmp_pins_from"] = saved_pins
            st.session_state["cmp_pinned"] = saved_pins[:3]
    shown = [a for a in (*audited, post_processed, *saved_audits(task)) if a is not None]
    return [referenced(a, reference, tau, train) for a in shown]


render_sweep_every_method(train, test, store)
render_knob_sweep(train, test, store)
render_stale_notice(task, store)
reference, tau = render_reference(test) if task.kind == "classification" else (None, 0.8)
if not points:
    st.info(
        "No frontier is cached for this task yet: sweep every method or add one frontier above, "
        "or run `fairengine sweep`."
    )
    if audits := _outside_panels([]):
        show_outside(audits, points, tau)
    stop_page()

table = comparison_table(points)
available = metric_columns(table)
methods = sorted(table["method"].unique())
titles = {m: get_method(m).title for m in methods}
plane_x, plane_y = default_plane(table, task.kind)


def _axis_label(name: str) -> str:
    return f"{metric_label(name)} ({metric_info(name).direction})"


def _axis(column: DeltaGenerator, name: str, default: str) -> str:
    """The select box of axis ``name``: the link's metric, else the plane's ``default``."""
    linked = url_param(name, default)
    key = seed_widget(f"cmp_{name}", linked if linked in available else default, available)
    return column.selectbox(f"{name} axis", available, format_func=_axis_label, key=key)


c1, c2, c3 = st.columns([2, 2, 1])
x, y = _axis(c1, "x", plane_x), _axis(c2, "y", plane_y)
split = c3.radio(
    "Data",
    ["test", "train"],
    key=seed_widget("cmp_split", url_param("split", "test"), ["test", "train"]),
)
# Methods that appeared since the filter was last drawn (a sweep, "Add to comparison", another
# task) are added to the selection, so a new frontier is never filtered away.
offered = st.session_state.get("cmp_offered", [])
if new_methods := [m for m in methods if m not in offered]:
    current = st.session_state.get("w.cmp_methods", st.session_state.get("sel.cmp_methods"))
    if current is not None:
        chosen = [m for m in current if m in methods] + new_methods
        st.session_state["w.cmp_methods"] = st.session_state["sel.cmp_methods"] = chosen
st.session_state["cmp_offered"] = methods
shown = st.multiselect(  # full width: every method's whole title shows in its chip
    "Methods",
    methods,
    format_func=titles.get,
    key=seed_widget("cmp_methods", methods, methods),
)
if reference is not None:
    split_task = test if split == "test" else train
    table = referenced_table(table, points, split_task, split, (x, y), reference)

if x == y:
    st.info(
        f"Both axes show {md_text(metric_label(x))}: choose a different metric for one of them."
    )
notes = plane_notes(table, x, y, shown)
if notes:
    st.caption(
        "Not on this plane: "
        + "; ".join(f"**{titles[m]}**: {md_text(why)}" for m, why in notes.items())
        + "."
    )

view = mark_pareto(table[table["method"].isin(shown)], x, y)
view = view[view["split"] == split]
view = view.assign(failed_checks=view["point_id"].map(failed_checks(points)).fillna(""))
has_axes = x in view and y in view
view = view[view[x].notna() & view[y].notna()] if has_axes else view.iloc[0:0]
ids = list(dict.fromkeys(view["point_id"]))
if not ids:
    if not shown:
        st.warning("No method is selected: pick one or more in the Methods filter.")
    else:
        st.warning(
            f"None of the selected methods has {md_text(split)} points with both "
            f"{md_text(metric_label(x))} and {md_text(metric_label(y))}. Try the plane "
            f"{md_text(metric_label(plane_x))} × {md_text(metric_label(plane_y))}, or another "
            "method."
        )
    stop_page()
labels = {  # a select box shows its options as plain text: no Markdown escapes
    row["point_id"]: f"{titles[row['method']]} · {row['knobs']} · "
    + " · ".join(f"{metric_label(a)} {row[a]:.4f}{verdict_words(a, row[a], tau)}" for a in (x, y))
    for _, row in view.iterrows()
}

# A click on the chart selects a point; so does the picker below (keyboard-friendly, and what a
# shared link restores).
clicks = (st.session_state.get("cmp_chart") or {}).get("selection", {}).get("points")
clicked = clicks[0].get("customdata") if clicks else None
clicked = clicked[0] if isinstance(clicked, list) else clicked
if clicked in ids and clicked != st.session_state.get("sel.cmp_point"):
    st.session_state["sel.cmp_point"] = clicked
    st.session_state["w.cmp_point"] = clicked
requested = url_param("point")
default_point = requested if requested in ids else ids[0]
selected = st.selectbox(
    "Selected point",
    ids,
    format_func=labels.get,
    key=seed_widget("cmp_point", default_point, ids),
)

audits = _outside_panels(ids)

show_baselines = st.toggle(
    "Show baselines",
    value=True,
    key="cmp_baselines",
    help="The constant predictor and the unconstrained model, fitted on the same training rows "
    "and scored on the same rows as every point: a point is only worth its trade-off against "
    "them.",
)
references = plane_references(points, train, test, x, y, split) if show_baselines else {}
ratio_axes = [a for a in (x, y) if a in RATIO_AXES]
if ratio_axes and references and reference != largest_group(test if split == "test" else train):
    references = {}  # their stored ratios are to the largest group
    st.caption("The baselines' ratios are stored against the largest group only: not drawn here.")
elif show_baselines and not references:
    st.caption("No baseline carries both metrics of this plane.")
n_failed = int((view.drop_duplicates("point_id")["failed_checks"] != "").sum())
if n_failed:
    st.caption(
        f"{n_failed} point(s) are crossed out in red: at least one of their held-out checks "
        "failed (hover a cross for the checks' names; select the point for the sentences)."
    )
figure = frontier_figure(view, x, y, selected, titles, references)
draw_four_fifths(figure, view, (x, y), (reference, tau), selected)
if off_plane := add_outside_points(figure, audits, x, y, split):
    st.caption(
        f"Not on this plane: {md_text(', '.join(off_plane))} (no {md_text(metric_label(x))} or "
        f"{md_text(metric_label(y))} for it)."
    )
st.plotly_chart(
    figure,
    key="cmp_chart",
    on_select="rerun",
    selection_mode="points",
)
# the data (a bundled dataset, or an upload that the page opened from the link asks for again)
view_params = {**task_params(task), "x": x, "y": y, "split": split, "point": selected}
view_params["method"] = view.loc[view["point_id"] == selected, "method"].iloc[0]
st.query_params.from_dict(view_params)

point = next(p for p in points if p.point_id == selected)
try:
    model = cached.point_model(str(point.path), point.path.stat().st_mtime)
except Exception:
    model = store.load(point)
if model is None:
    st.warning(
        md_text(
            store.notices[-1] if store.notices else f"The model file of point {selected} is gone."
        )
        + " Choose another point, or add the frontier again to recompute it."
    )
    stop_page()


result = point_result(point.key, point, model, train, test)
st.markdown("**Checks of the selected point on the test rows**")
show_checks(result.checks)

groups = cached.point_groups(model, test, f"{point.point_id}:{test.fingerprint}", reference, tau)
left, right = st.columns([1, 2])
with left:
    st.subheader(titles[point.method])
    st.caption(f"Point {md_code(point.point_id)}")
    st.table(
        {
            "knob": [md_text(k) for k in point.knobs],
            "value": [md_text(v) for v in point.knobs.values()],
        }
    )
    by_split = referenced_metrics(point.metrics, groups, reference, train)
    names = list(by_split.get("test", by_split.get("train", {})))
    rows = {s: [by_split.get(s, {}).get(m, math.nan) for m in names] for s in ("train", "test")}
    number = st.column_config.NumberColumn(format="%.4f")
    st.dataframe(
        pd.DataFrame({"metric": [metric_label(m) for m in names], **rows}),
        hide_index=True,
        column_config={"train": number, "test": number},
        key="cmp_metrics",
    )
with right:
    st.subheader("Per group on the test data (95% bootstrap intervals)")
    st.plotly_chart(group_metrics_figure(groups, task.kind), key="cmp_groups_chart")
    show_verdicts(groups, tau)
    with st.expander("Per-group table"):
        st.dataframe(groups, key="cmp_groups")

with st.expander("Pin points side by side"):
    pinned = st.multiselect(
        "Points to compare (up to 3)",
        ids,
        format_func=labels.get,
        max_selections=3,
        key="cmp_pinned",
    )
    by_id, columns = {p.point_id: p for p in points}, {}
    for p in (by_id[pid] for pid in pinned):
        checks = result.checks if p.point_id == selected else stored_checks(p)
        values = {f"knob · {k}": str(v) for k, v in p.knobs.items()}
        values["checks"] = checks_summary(checks)
        values |= {metric_label(m): f"{v:.4f}" for m, v in p.metrics.get(split, {}).items()}
        columns[f"{titles[p.method]} · {p.point_id}"] = values
    if columns:
        st.dataframe(pd.DataFrame(columns), key="cmp_pinned_table")

if audits:
    show_outside(audits, points, tau)

# The card is built here, on download (the shipped demo files keep the card they were
# precomputed with), and names the file the user gets.
file_name = f"{task.name}-{point.method}-{point.point_id}.fairmodel"
card = model_card(
    result,
    train,
    test,
    method=get_method(point.method),
    group_table=groups,
    file_name=file_name,
    for_file=True,
)
metadata = read_manifest(point.path)["metadata"] or result_metadata(result, train, test)
d1, d2 = st.columns(2)
d1.download_button(
    "Download model file",
    data=model_bytes(model, card=card, metadata=metadata),
    file_name=file_name,
    mime="application/zip",
    key="cmp_download_model",
    on_click="ignore",
)
d2.download_button(
    "Download model card",
    data=card,
    file_name=f"{task.name}-{point.method}-{point.point_id}.md",
    mime="text/markdown",
    key="cmp_download_card",
    on_click="ignore",
)
st.caption(
    "Load the file anywhere with `fairengine.export.load_model(path)`: it needs only the "
    "runtime requirements, verifies its checksums and never unpickles."
)

st.subheader("Report and comparison file")
render_downloads(
    task,
    points,
    audits,
    list(dict.fromkeys([selected, *pinned, *(a.name for a in audits)])),
    reference=reference,
    tau=tau,
)
