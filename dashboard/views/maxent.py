"""Max-entropy debiasing (Celis, Keswani & Vishnoi, ICML 2020): learn a fair max-entropy
distribution, sample from it, and see rates, the frontier over C, group outcomes and θ vs the
achieved marginals."""

from __future__ import annotations

import streamlit as st

from dashboard.components import cached, maxent_charts, maxent_runs, runner
from dashboard.components.comparison import add_to_comparison
from dashboard.components.knobs import knob_widget, share_knobs
from dashboard.components.page_help import how_to_read
from dashboard.components.shared import shared
from dashboard.components.state import require_task, stop_page
from dashboard.components.tables import static_table
from fairengine.data import DataError
from fairengine.frontier import sweep, task_key
from fairengine.methods import get_method
from fairengine.methods.maxent.domain import check_task
from fairengine.metrics import metric_info
from fairengine.textsafe import md_text

METHOD = get_method("maxent")
st.title(METHOD.title)
st.caption(
    f"{METHOD.reference}. Learns the distribution p* closest to a fair prior "
    "q_C = C·uniform + (1 − C)·reweighted data that matches the target marginals θ, then "
    "samples debiased data from it and trains a classifier on the samples."
)
how_to_read(METHOD.name)
task = require_task()
try:
    check_task(task)
except DataError as exc:
    st.error(md_text(exc))
    runner.offer_demo(METHOD)
    stop_page()

train, test = cached.split_task(task, task.fingerprint)
left, middle, right = st.columns(3)
knobs = {}
with left:
    knobs["C"] = knob_widget(METHOD.knob("C"), key="w.maxent.C", url=True)
    knobs["tau"] = knob_widget(METHOD.knob("tau"), key="w.maxent.tau", url=True)
with middle:
    knobs["prior"] = knob_widget(METHOD.knob("prior"), key="w.maxent.prior", url=True)
    knobs["theta"] = knob_widget(METHOD.knob("theta"), key="w.maxent.theta", url=True)
    if knobs["theta"] == "custom":
        knobs["protected_share"] = knob_widget(
            METHOD.knob("protected_share"), key="w.maxent.protected_share", url=True
        )
    knobs["domain"] = knob_widget(METHOD.knob("domain"), key="w.maxent.domain", url=True)
with right:
    knobs["n_samples"] = knob_widget(METHOD.knob("n_samples"), key="w.maxent.n_samples", url=True)
    knobs["n_sample_sets"] = knob_widget(
        METHOD.knob("n_sample_sets"), key="w.maxent.n_sample_sets", url=True
    )
    knobs["n_bins"] = knob_widget(METHOD.knob("n_bins"), key="w.maxent.n_bins", url=True)
    knobs["classifier"] = knob_widget(
        METHOD.knob("classifier"), key="w.maxent.classifier", url=True
    )
knobs = METHOD.validate_knobs(knobs)
share_knobs(METHOD, knobs, task)
if knobs["C"] in (0.0, 1.0):
    st.warning(
        "C = 0: the prior lives on the data rows only. C = 1: the prior is uniform and ignores "
        "the data, so downstream accuracy collapses."
    )

key = task.fingerprint
result = runner.run_panel(
    "maxent", "maxent", train, test, knobs, label="Fitting the max-entropy distribution"
)
knobs = dict(result.knobs)  # the knobs of the result shown (the last ones while a fit runs)

summary = result.artifacts["summary"]
for check in maxent_runs.rate_warnings(result):
    st.warning(md_text(check.sentence))
maxent_row = result.artifacts["rates"].loc["maxent"]
cols = st.columns(5)
cols[0].metric(
    "Classifier statistical rate (soft)",
    f"{maxent_row['clf_sr_soft']:.3f} ± {maxent_row['clf_sr_soft_sd']:.3f}",
    help="Mean predicted P(y = 1) per group, smallest over largest (the paper's code), for the "
    "classifier trained on generated rows with the protected attribute as an input; mean ± "
    "standard deviation over the sample sets.",
)
cols[1].metric(
    "Classifier statistical rate (hard)",
    f"{maxent_row['clf_sr']:.3f} ± {maxent_row['clf_sr_sd']:.3f}",
    help="The same from 0/1 predictions (Definition 2.2).",
)
cols[2].metric(
    "Accuracy (test)", f"{maxent_row['clf_accuracy']:.3f} ± {maxent_row['clf_accuracy_sd']:.3f}"
)
cols[3].metric(
    "KL to the data",
    f"{maxent_row['kl_train']:.3f}",
    help=md_text(metric_info("kl_to_empirical").definition),
)
exponent = summary["log10_domain_size"]
cols[4].metric("Domain size |Ω|", f"{10 ** (exponent % 1):.1f}e{int(exponent)}")
st.caption(
    f"Domain '{summary['domain']}': {', '.join(summary['columns'])}; d = {summary['d']} "
    f"coordinates, {summary['distinct_rows']:,} distinct training rows, {summary['n_iter']} "
    f"Newton steps, largest marginal error {summary['max_marginal_error']:.1e}, "
    f"KL(p* ‖ q) = {summary['kl_to_prior']:.3f}. A share π = {summary['pi']:.3f} of the samples "
    "comes from the (tilted) uniform component; the rest are copies of training rows. The "
    "figures above average the test rows over the sample sets, as the paper's Table 2; the "
    "exported model is the classifier of the first set without the protected attribute (scored "
    "on the Compare page)."
)

rkey = runner.result_key("maxent")  # figures of a result are built once for every session
art = result.artifacts
c1, c2 = st.columns(2)
c1.plotly_chart(shared(maxent_charts.rates_figure, rkey, art["rates"], knobs["tau"]), key="rates")
c2.plotly_chart(shared(maxent_charts.group_outcomes_figure, rkey, art["group_rates"]), key="groups")
st.plotly_chart(shared(maxent_charts.marginals_figure, rkey, art["marginals"]), key="marginals")
with st.expander("Before / after table (data and downstream classifier)"):
    static_table(result.artifacts["rates"])

st.subheader("Frontier over C")
grid = {**{k: [v] for k, v in knobs.items() if k != "C"}, "C": list(maxent_runs.C_GRID)}
if runner.sweep_panel(
    "maxent",
    "Sweeping C",
    f"{task_key(train, test)}{sorted(knobs.items())}",
    sweep,
    "maxent",
    train,
    test,
    grid,
    store=cached.frontier_store(),
    button="Sweep C",
    n_points=len(maxent_runs.C_GRID),
):
    points = maxent_runs.frontier_over_c(train, test, knobs, cached.frontier_store())
    st.plotly_chart(
        maxent_charts.frontier_over_c_figure(points, "statistical_rate", "accuracy"),
        key="frontier",
    )
else:
    st.caption(
        f"Sweeps C over {', '.join(map(str, maxent_runs.C_GRID))} with the other knobs fixed; "
        "points are cached and appear on the Compare page too."
    )

d1, d2 = st.columns(2)
# Bytes, cached per run (built once per server), not deferred callables: Streamlit drops the
# file a deferred download builds on click after two script runs anywhere on the server, so on
# a busy server the browser's request for it could get a 404.
d1.download_button(
    "Download generated samples (CSV)",
    maxent_runs.samples_csv(result, f"{key}{sorted(knobs.items())}"),
    file_name="maxent_samples.csv",
    mime="text/csv",
    key="maxent_samples",
)
d2.download_button(
    "Download model file",
    maxent_runs.model_file(result, train, test, f"{key}{sorted(knobs.items())}"),
    file_name="maxent.fairmodel",
    mime="application/zip",
    key="maxent_model",
)
add_to_comparison(result, train, test, key="maxent_add")
