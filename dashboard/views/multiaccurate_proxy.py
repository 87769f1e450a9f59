"""Multiaccurate proxies (seed 004): learn a proxy ẑ for hidden sensitive groups, train a fair
classifier through it, and score it on the TRUE groups; audit table, group gaps, export."""

from __future__ import annotations

import io
import tempfile
from pathlib import Path

import plotly.express as px
import streamlit as st

from dashboard.components import cached
from dashboard.components.knobs import knob_widget
from dashboard.components.state import current_task, stop_page
from fairengine.data import DataError
from fairengine.export import save_model
from fairengine.methods import KnobError, get_method

METHOD = get_method("multiaccurate_proxy")
st.title(METHOD.title)
st.caption(
    f"{METHOD.reference}. The proxy is trained to be multiaccurate on the error regions of "
    "downstream classifiers (Algorithm 4, linear); the downstream learner never sees the true "
    "groups. The auditor is a heuristic, so audited violations are lower bounds, and the "
    "guarantee covers only the audited class and tasks."
)
task = current_task()
if task is None:
    st.info("Choose a dataset and its roles on the Data page first.")
    st.page_link("views/data.py", label="Go to the Data page", icon=":material/table_view:")
    stop_page()
if task.kind != "classification":
    st.error(
        f"Multiaccurate proxies need a binary target, but {task.target!r} makes this a "
        f"{task.kind} task. Pick a classification target on the Data page."
    )
    stop_page()

train, test = cached.split_task(task, task.fingerprint)
left, middle, right = st.columns(3)
knobs = {}
with left:
    knobs["proxy"] = knob_widget(METHOD.knob("proxy"), key="w.map.proxy")
    knobs["eps"] = knob_widget(METHOD.knob("eps"), key="w.map.eps")
with middle:
    knobs["alpha"] = knob_widget(METHOD.knob("alpha"), key="w.map.alpha")
    knobs["constraint"] = knob_widget(METHOD.knob("constraint"), key="w.map.constraint")
with right:
    knobs["auditor"] = knob_widget(METHOD.knob("auditor"), key="w.map.auditor")
    knobs["max_rows"] = knob_widget(METHOD.knob("max_rows"), key="w.map.max_rows")
knobs = METHOD.validate_knobs(knobs)


@st.cache_resource(max_entries=8, show_spinner=False)
def _run(key: str, items: tuple):
    return METHOD.run(train, test, **dict(items))


try:
    with st.spinner("Learning the proxy and the downstream classifier…"):
        result = _run(task.fingerprint, tuple(sorted(knobs.items())))
except (DataError, KnobError, ValueError) as exc:
    st.error(str(exc))
    stop_page()

test_metrics = result.metrics["test"]
cols = st.columns(4)
cols[0].metric("True-group violation (test)", f"{test_metrics['true_violation']:.3f}")
cols[1].metric("Violation through ẑ (test)", f"{test_metrics['proxy_violation']:.3f}")
cols[2].metric("Multiaccuracy violation (test)", f"{test_metrics['multiaccuracy_violation']:.3f}")
cols[3].metric("Error (test)", f"{test_metrics['error']:.4f}")

gaps = result.artifacts["group_gaps"]
long = gaps.melt(id_vars=["split", "group"], value_vars=["true_gap", "proxy_gap"])
st.plotly_chart(
    px.bar(
        long[long["split"] == "test"],
        x="group",
        y="value",
        color="variable",
        barmode="group",
        title="γ_k − γ on test: true groups vs through the proxy",
    ),
    key="map_gaps",
)
audit_table = result.artifacts["audit"]
st.plotly_chart(
    px.bar(
        audit_table,
        x="task",
        y="violation",
        color="split",
        facet_col="group",
        barmode="group",
        title="Audit: max ratio violation |γ_k(z) − γ_k(ẑ)| per task",
    ).add_hline(y=knobs["alpha"], line_dash="dot"),
    key="map_audit",
)
with st.expander("Audit table"):
    st.dataframe(audit_table.round(4))

with tempfile.TemporaryDirectory() as tmp:
    path = save_model(result.model, Path(tmp) / "model.fairmodel")
    payload = io.BytesIO(path.read_bytes()).getvalue()
st.download_button(
    "Download model file (downstream classifier + proxy)",
    payload,
    file_name="multiaccurate_proxy.fairmodel",
    mime="application/zip",
    key="map_model",
)
