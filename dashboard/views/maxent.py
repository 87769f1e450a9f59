"""Max-entropy debiasing (Celis, Keswani & Vishnoi, ICML 2020): learn a fair max-entropy
distribution, sample from it, and see rates, the frontier over C, group outcomes and θ vs the
achieved marginals."""

from __future__ import annotations

import streamlit as st

from dashboard.components import maxent_charts
from dashboard.components.grid_sweep import GridSweep, grid_sweep
from dashboard.components.knobs import knob_panel
from dashboard.components.method_page import (
    fit,
    model_and_comparison,
    open_page,
    plane_figure,
)
from dashboard.components.services import result_key
from dashboard.components.shared import shared
from dashboard.components.tables import static_table
from fairengine.methods import get_method
from fairengine.metrics import metric_info
from fairengine.textsafe import md_text

METHOD = get_method("maxent")
task, train, test = open_page(
    METHOD,
    f"{METHOD.reference}. Learns the distribution p* closest to a fair prior "
    "q_C = C·uniform + (1 − C)·reweighted data that matches the target marginals θ, then "
    "samples debiased data from it and trains a classifier on the samples.",
)
knobs = knob_panel(METHOD, key_prefix="w.maxent")
if float(knobs["C"]) in (0.0, 1.0):
    st.warning(
        "C = 0: the prior lives on the data rows only. C = 1: the prior is uniform and ignores "
        "the data, so downstream accuracy collapses."
    )

result, knobs = fit(METHOD, (task, train, test), knobs, "Fitting the max-entropy distribution")

summary = result.artifacts["summary"]
for check in maxent_charts.rate_warnings(result):
    st.warning(md_text(check.sentence))
maxent_row = result.artifacts["rates"].loc["maxent"]
# The headline is the model the checks judge and the model file exports; the paper's Table 2
# protocol (average over the sample sets, Z as an input) follows, labelled as such. Three
# columns at most per row, so "mean ± sd" is never cut.
checked = st.columns(2)
for column, name in zip(checked, ("accuracy", METHOD.fairness_metric), strict=True):
    info = metric_info(name)
    column.metric(
        f"{info.label} (test, exported model)",
        f"{result.metrics['test'].get(name, float('nan')):.3f}",
        help="The classifier of the first sample set without the protected attribute: the "
        "model the checks below judge and the model file exports.",
    )
paper = {  # name: label, help
    "clf_sr_soft": (
        "Classifier statistical rate (soft), paper protocol",
        "Mean predicted P(y = 1) per group, smallest over largest (the paper's code), for the "
        "classifier trained on generated rows with the protected attribute as an input; mean ± "
        "standard deviation over the sample sets.",
    ),
    "clf_sr": (
        "Classifier statistical rate (hard), paper protocol",
        "The same from 0/1 predictions (Definition 2.2).",
    ),
    "clf_accuracy": (
        "Accuracy (test), paper protocol",
        "The paper's Table 2: classifiers trained on the generated rows with the protected "
        "attribute as an input, averaged over the sample sets.",
    ),
}
for column, (name, (label, words)) in zip(st.columns(3), paper.items(), strict=True):
    value = f"{maxent_row[name]:.3f} ± {maxent_row[f'{name}_sd']:.3f}"
    column.metric(label, value, help=words)
cols = st.columns(2)
cols[0].metric(
    "KL to the data",
    f"{maxent_row['kl_train']:.3f}",
    help=md_text(metric_info("kl_to_empirical").definition),
)
exponent = summary["log10_domain_size"]
cols[1].metric("Domain size |Ω|", f"{10 ** (exponent % 1):.1f}e{int(exponent)}")
st.caption(
    f"Domain '{md_text(summary['domain'])}': {', '.join(map(md_text, summary['columns']))}; "
    f"d = {summary['d']:,} "
    f"coordinates, {summary['distinct_rows']:,} distinct training rows, {summary['n_iter']:,} "
    f"Newton steps, largest marginal error {summary['max_marginal_error']:.1e}, "
    f"KL(p* ‖ q) = {summary['kl_to_prior']:.3f}. A share π = {summary['pi']:.3f} of the samples "
    "comes from the (tilted) uniform component; the rest are copies of training rows. The first "
    "row is the exported model (the classifier of the first set without the protected "
    "attribute), which the checks judge; the paper-protocol row averages the test rows over the "
    "sample sets, as the paper's Table 2."
)

rkey = result_key("maxent")  # figures of a result are built once for every session
art = result.artifacts
c1, c2 = st.columns(2)
c1.plotly_chart(shared(maxent_charts.rates_figure, rkey, art["rates"], knobs["tau"]), key="rates")
c2.plotly_chart(shared(maxent_charts.group_outcomes_figure, rkey, art["group_rates"]), key="groups")
st.plotly_chart(shared(maxent_charts.marginals_figure, rkey, art["marginals"]), key="marginals")
with st.expander("Before / after table (data and downstream classifier)"):
    static_table(result.artifacts["rates"])

st.subheader("Frontier over C")
points = grid_sweep(METHOD, train, test, knobs, GridSweep(axis="C", what="C"))
if points is not None:
    st.plotly_chart(plane_figure(METHOD, points, "C"), key="frontier")

d1, d2 = st.columns(2)
# Bytes, cached per run (built once per server), not deferred callables: Streamlit drops the
# file a deferred download builds on click after two script runs anywhere on the server, so on
# a busy server the browser's request for it could get a 404.
d1.download_button(
    "Download generated samples (CSV)",
    maxent_charts.samples_csv(result, str(rkey)),
    file_name="maxent_samples.csv",
    mime="text/csv",
    key="maxent_samples",
)
model_and_comparison(result, (train, test), key="maxent", place=d2)
