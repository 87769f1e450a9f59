"""Robust fairness with noisy protected groups (seed 003): naive, DRO and soft assignments on
synthetically flipped groups; error and true- vs noisy-group violations, per-group TPR."""

from __future__ import annotations

import plotly.express as px
import streamlit as st

from dashboard.components import cached
from dashboard.components.knobs import knob_widget
from dashboard.components.state import current_task, stop_page
from fairengine.data import DataError
from fairengine.methods import KnobError, get_method

METHOD = get_method("noisy_groups")
st.title(METHOD.title)
st.caption(
    f"{METHOD.reference}. Group labels are flipped at the chosen noise rate; the classifier only "
    "sees the noisy groups, and its constraint violation is measured on the true ones."
)
task = current_task()
if task is None:
    st.info("Choose a dataset and its roles on the Data page first.")
    stop_page()
if task.kind != "classification":
    st.error(
        f"Noisy groups needs a binary target, but {task.target!r} makes this a {task.kind} task. "
        "On the Data page pick a classification dataset."
    )
    stop_page()


@st.cache_resource(show_spinner=False, max_entries=32)
def _run(_train, _test, key: str, knobs: tuple):
    return METHOD.run(_train, _test, **dict(knobs))


train, test = cached.split_task(task, task.fingerprint)
left, middle, right = st.columns(3)
knobs = {}
with left:
    knobs["method"] = knob_widget(METHOD.knob("method"), key="w.ng.method")
    knobs["constraint"] = knob_widget(METHOD.knob("constraint"), key="w.ng.constraint")
with middle:
    knobs["noise"] = knob_widget(METHOD.knob("noise"), key="w.ng.noise")
    knobs["slack"] = knob_widget(METHOD.knob("slack"), key="w.ng.slack")
with right:
    knobs["gamma"] = knob_widget(METHOD.knob("gamma"), key="w.ng.gamma")
    knobs["n_steps"] = knob_widget(METHOD.knob("n_steps"), key="w.ng.n_steps")
try:
    knobs = METHOD.validate_knobs(knobs)
    with st.spinner("Fitting…"):
        result = _run(train, test, task.fingerprint, tuple(sorted(knobs.items())))
except (DataError, KnobError, ValueError) as exc:
    st.error(str(exc))
    stop_page()

test_metrics = result.metrics["test"]
cols = st.columns(3)
cols[0].metric("Error (test)", f"{test_metrics['error']:.3f}")
cols[1].metric("True-group violation (test)", f"{test_metrics['true_violation']:.3f}")
cols[2].metric("Noisy-group violation (test)", f"{test_metrics['noisy_violation']:.3f}")
st.caption("Violation = max over groups of the one-sided rate gap minus the slack α (≤ 0 is fair).")
rates = result.artifacts["group_rates"]
figure = px.bar(
    rates[rates["split"] == "test"],
    x="group",
    y="tpr",
    color="groups",
    barmode="group",
    title="Per-group true positive rate on test: true vs noisy groups",
)
st.plotly_chart(figure, key="ng_rates")
with st.expander("Noise model and radii"):
    st.write({
        "gamma (safe, per group)": result.artifacts["gamma_safe"],
        "gamma (paper, per group)": result.artifacts["gamma_paper"],
        "best iterate": result.artifacts["best_index"],
    })  # fmt: skip
