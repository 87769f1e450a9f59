"""Robust fairness with noisy protected groups (Wang et al., NeurIPS 2020): naive, DRO and soft
assignments on synthetically flipped groups; error and true- vs noisy-group violations, Theorem 1's
TV bound, a sweep over the noise level (the paper's Figures 1–3) and the model file."""

from __future__ import annotations

import streamlit as st

from dashboard.components import noisy_groups_charts
from dashboard.components.grid_sweep import GridSweep, grid_sweep
from dashboard.components.knobs import knob_panel
from dashboard.components.method_page import fit, model_and_comparison, open_page
from dashboard.components.services import result_key
from dashboard.components.shared import shared
from dashboard.components.state import stop_page
from dashboard.components.tables import static_table
from fairengine.data import DataError
from fairengine.methods import KnobError, get_method
from fairengine.methods.noisy_groups.knobs import EXPERIMENTAL
from fairengine.metrics import metric_info
from fairengine.textsafe import md_text

METHOD = get_method("noisy_groups")
task, train, test = open_page(
    METHOD,
    f"{METHOD.reference}. Group labels are flipped at the chosen noise rate; the classifier only "
    "sees the noisy groups, and its constraint violation is measured on the true ones.",
)
# the experimental variants stay in the API and the CLI (docs: "Design notes")
knobs = knob_panel(METHOD, key_prefix="w.ng", columns=4, skip=EXPERIMENTAL)
try:
    knobs = METHOD.validate_knobs(knobs)
except (DataError, KnobError, ValueError) as exc:
    st.error(md_text(exc))
    stop_page()
result, knobs = fit(METHOD, (task, train, test), knobs, "Fitting")

art = result.artifacts
if art["status"] == "fallback":
    st.warning(md_text(art["status_message"]))
if art.get("trivial_message"):
    st.warning(md_text(art["trivial_message"]))
test_metrics = result.metrics["test"]
tiles = {
    "error": "Error (test)",
    "true_violation": "True-group violation (test)",
    "noisy_violation": "Noisy-group violation (test)",
    "robust_violation": "Worst-case violation (test)",
}
for col, (name, label) in zip(st.columns(len(tiles)), tiles.items(), strict=True):
    help_text = md_text(metric_info(name).explained)  # definition and unit from the registry
    col.metric(label, f"{test_metrics[name]:.3f}", help=help_text)
st.caption(
    "Violation = max over groups of the one-sided rate gap minus the slack α (≤ 0 is fair). "
    + md_text(METHOD.guarantee(result))
)
constraint = knobs["constraint"]
rkey = result_key("noisy_groups")  # the figure is built once for every session
st.plotly_chart(
    shared(noisy_groups_charts.rates_figure, rkey, art["group_rates"], constraint), key="ng_rates"
)
st.markdown("**Theorem 1: true-group violation vs the TV-distance bound (test)**")
static_table(noisy_groups_charts.bound_table(art["bound"]), index=False)
st.caption(
    "Theorem 1 (literal form): each true-group violation is at most the noisy-group violation "
    "plus the TV distance between the true and noisy group, in rate units "
    "((P(Y|Ĝ)·noisy + 2·TV)/P(Y|G) for TPR/FPR, noisy + TV for DP)."
)

st.subheader("Sweep over the noise level")
approaches = METHOD.grid("page")["method"]
methods = st.multiselect("Approaches", approaches, default=approaches, key="ng_sweep_methods")
try:
    points = grid_sweep(
        METHOD,
        train,
        test,
        knobs,
        GridSweep(
            axis="noise",
            what="the noise level",
            values={"method": tuple(methods or ["naive"])},
            button="Sweep noise level",
            note="Runs each approach at noise "
            f"{', '.join(map(str, METHOD.grid('page')['noise']))} with the other knobs fixed; "
            "points are cached and appear on the Compare page too.",
        ),
    )
except (DataError, KnobError, ValueError) as exc:
    points = None
    st.error(md_text(exc))
if points is not None:
    s1, s2, s3 = st.columns(3)
    s1.plotly_chart(
        noisy_groups_charts.violation_vs_noise(points, knobs["slack"]), key="ng_sweep_violation"
    )
    s2.plotly_chart(noisy_groups_charts.error_vs_noise(points), key="ng_sweep_error")
    s3.plotly_chart(noisy_groups_charts.noisy_vs_true(points), key="ng_sweep_scatter")

with st.expander("Noise model and radii"):
    static_table(
        noisy_groups_charts.noise_model_table(art, train.group_names), index=False, digits=4
    )

model_and_comparison(
    result, (train, test), key="ng", label="Download model file (linear classifier)"
)
