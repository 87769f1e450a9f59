"""Fair regression by reductions (Agarwal, Dudík & Wu, ICML 2019): a randomized regressor under
statistical parity (KS distance of prediction CDFs) or bounded group loss; frontier, CDFs, group
losses, export."""

from __future__ import annotations

import streamlit as st

from dashboard.components import fair_regression_charts
from dashboard.components.grid_sweep import GridSweep, grid_sweep
from dashboard.components.knobs import knob_panel
from dashboard.components.method_page import fit, model_and_comparison, open_page
from dashboard.components.services import result_key
from dashboard.components.shared import shared
from dashboard.components.tables import static_table
from fairengine.methods import get_method
from fairengine.methods.fair_regression.losses import group_loss_bound
from fairengine.sweeps.fair_regression import mark_envelope
from fairengine.textsafe import md_text

METHOD = get_method("fair_regression")
task, train, test = open_page(
    METHOD,
    f"{METHOD.reference}. Exponentiated gradient over Lagrange multipliers; each round one "
    "ordinary regression fit. The result Q is randomized: every prediction draws one of its "
    "regressors, and parity holds for that distribution (never for the averaged prediction).",
)
knobs = knob_panel(METHOD, key_prefix="w.fr")
result, knobs = fit(METHOD, (task, train, test), knobs, "Fitting the regressor")

summary = result.artifacts["summary"]
# "converged" is about the training rows: green only when the held-out disparity check held too
held_out = {c.name: c.level for c in result.checks}.get("held_out_disparity", "ok")
if summary["status"] == "converged" and held_out == "ok":
    st.success(md_text(summary["message"]))
elif summary["status"] == "converged":
    st.caption(md_text(summary["message"]))  # the failed check's box above says what failed
elif summary["status"] == "infeasible":
    st.error(md_text(summary["message"]))
else:  # not converged: the iteration cap T was hit, so the result is the best found so far
    st.warning(
        md_text(summary["message"]) + " Q is the best mixture found within the iteration cap T."
    )
test_metrics = result.metrics["test"]
cols = st.columns(5)
cols[0].metric("SP disparity (test)", f"{test_metrics['sp_ks']:.3f}")
cols[1].metric("Loss, scaled target (test)", f"{test_metrics['scaled_loss']:.4f}")
cols[2].metric("Worst group loss, scaled (test)", f"{test_metrics['scaled_max_group_loss']:.4f}")
cols[3].metric(f"MSE in {md_text(task.target)} units (test)", f"{test_metrics['loss']:.4g}")
cols[4].metric("Predictors in Q", f"{summary['support']}")
st.caption(
    f"The paper's losses are on the target scaled to [0, 1] (y − {summary['y_min']:g}) / "
    f"{summary['y_max'] - summary['y_min']:g}: mean squared error, absolute error, or log loss. "
    "The bound ζ is on the paper's loss ℓ ((y − u)²/2 for square loss). The MSE in the "
    "target's units is the shared evaluation the Compare page plots for every regressor."
)

st.subheader("Frontier over ε")
points = grid_sweep(METHOD, train, test, knobs, GridSweep(axis="eps", what="ε"))
if points is not None:  # the convex envelope of the training points, marked
    points = mark_envelope(points)
rkey = result_key("fair_regression")  # figures are built once for every session
charts = fair_regression_charts
art = result.artifacts
st.plotly_chart(  # the sweep's points are all there or none: one bit besides the run
    shared(
        charts.frontier_figure,
        (rkey, points is None),
        result.metrics["test"],
        art["baselines"],
        points,
        "test",
    ),
    key="fr_frontier",
)
c1, c2 = st.columns(2)
c1.plotly_chart(
    shared(charts.cdf_figure, rkey, art["group_cdfs"], art["ks"]["test"], "test", task.target),
    key="fr_cdfs",
)
bound = group_loss_bound(knobs["constraint"], knobs["loss_function"], knobs["eps"])
c2.plotly_chart(
    shared(charts.group_loss_figure, rkey, art["group_losses"], "test", bound),
    key="fr_group_losses",
)
with st.expander("Baselines and the mixture Q"):
    static_table(result.artifacts["baselines"])
    weights = ", ".join(f"{float(w):.4f}" for w in result.artifacts["weights"])
    st.caption(f"Weights of the mixture Q over its classifiers: {weights}.")

model_and_comparison(
    result, (train, test), key="fr", label="Download model file (randomized predictor)"
)
