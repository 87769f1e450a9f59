"""Compare & export: every cached frontier of the current task on one chart; pick a point,
see its knobs and per-group metrics, download its model file and model card."""

from __future__ import annotations

import streamlit as st

from dashboard.components import cached
from dashboard.components.charts import frontier_figure
from dashboard.components.frontier_runner import render_add_frontier
from dashboard.components.state import (
    keep,
    require_task,
    seed_widget,
    stop_page,
    url_param,
)
from fairengine.data.registry import DATASETS
from fairengine.export import model_bytes, model_card, read_manifest, result_metadata
from fairengine.frontier import task_key
from fairengine.frontier.compare import comparison_table, mark_pareto, metric_columns
from fairengine.methods import get_method
from fairengine.methods.base import RunResult

st.title("Compare & export")
task = require_task()

train, test = cached.split_task(task, task.fingerprint)
store = cached.frontier_store()
key = task_key(train, test)
points = store.points(key)
st.caption(
    f"Frontiers cached for **{task.name}** ({task.target} | {', '.join(task.sensitive)}), "
    f"train {len(train.frame):,} / test {len(test.frame):,} rows. Points on the outlined Pareto "
    "set are not beaten on both axes by any other point."
)

render_add_frontier(train, test, store)
if not points:
    st.info("No frontier is cached for this task yet: add one above, or run `fairengine sweep`.")
    stop_page()

table = comparison_table(points)
available = metric_columns(table)
methods = sorted(table["method"].unique())
default_method = get_method(methods[0])
default_x = url_param("x", default_method.performance_metric)
default_y = url_param("y", default_method.fairness_metric)

c1, c2, c3, c4 = st.columns([2, 2, 1, 3])
x = c1.selectbox("x axis", available, key=seed_widget("cmp_x", default_x, available))
y = c2.selectbox("y axis", available, key=seed_widget("cmp_y", default_y, available))
split = c3.radio(
    "Data",
    ["test", "train"],
    key=seed_widget("cmp_split", url_param("split", "test"), ["test", "train"]),
)
shown = c4.multiselect("Methods", methods, key=seed_widget("cmp_methods", methods, methods))
for name in ("cmp_x", "cmp_y", "cmp_split", "cmp_methods"):
    keep(name)

view = mark_pareto(table[table["method"].isin(shown)], x, y)
view = view[view["split"] == split]
ids = list(dict.fromkeys(view["point_id"]))
labels = {
    pid: f"{row.method} · {row.knobs} · {x} {getattr(row, x):.4f} · {y} {getattr(row, y):.4f}"
    for pid, row in zip(view["point_id"], view.itertuples(), strict=True)
}

# A click on the chart selects a point; so does the picker below (keyboard-friendly, and what a
# shared link restores).
chart_event = st.session_state.get("cmp_chart")
clicked = None
if chart_event and chart_event.get("selection", {}).get("points"):
    clicked = chart_event["selection"]["points"][0].get("customdata")
    if isinstance(clicked, list):
        clicked = clicked[0]
if clicked in ids and clicked != st.session_state.get("sel.cmp_point"):
    st.session_state["sel.cmp_point"] = clicked
    st.session_state["w.cmp_point"] = clicked
requested = url_param("point")
default_point = requested if requested in ids else (ids[0] if ids else None)
if not ids:
    st.warning("No points for the chosen methods.")
    stop_page()
selected = st.selectbox(
    "Selected point",
    ids,
    format_func=labels.get,
    key=seed_widget("cmp_point", default_point, ids),
)
keep("cmp_point")

st.plotly_chart(
    frontier_figure(view, x, y, selected),
    key="cmp_chart",
    on_select="rerun",
    selection_mode="points",
)
view_params = {"x": x, "y": y, "split": split, "point": selected}
view_params["method"] = view.loc[view["point_id"] == selected, "method"].iloc[0]
if task.name in DATASETS:
    roles = {"target": task.target, "sensitive": list(task.sensitive)}
    view_params = {"dataset": task.name, **roles, **view_params}
st.query_params.from_dict(view_params)

point = next(p for p in points if p.point_id == selected)
model = cached.point_model(str(point.path), point.path.stat().st_mtime)
left, right = st.columns([1, 2])
with left:
    st.subheader(f"{get_method(point.method).title}")
    st.caption(f"Point `{point.point_id}`")
    st.table({"knob": list(point.knobs), "value": [str(v) for v in point.knobs.values()]})
    st.table(
        {
            "metric": list(point.metrics.get("test", {})),
            "train": [
                f"{point.metrics['train'].get(m, float('nan')):.4f}"
                for m in point.metrics.get("test", {})
            ],
            "test": [f"{v:.4f}" for v in point.metrics.get("test", {}).values()],
        }
    )
with right:
    st.subheader("Per group (test data, 95% bootstrap intervals)")
    groups = cached.point_groups(model, test, f"{point.point_id}:{test.fingerprint}")
    st.dataframe(groups, key="cmp_groups")

result = RunResult(method=point.method, knobs=point.knobs, metrics=point.metrics, model=model)
card = model_card(result, train, test, group_table=groups)
metadata = read_manifest(point.path)["metadata"] or result_metadata(result, train, test)
d1, d2 = st.columns(2)
d1.download_button(
    "Download model file",
    data=model_bytes(model, card=card, metadata=metadata),
    file_name=f"{task.name}-{point.method}-{point.point_id}.fairmodel",
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
