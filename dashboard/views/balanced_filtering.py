"""Balanced filtering (seed 000): learn a non-disclosive proxy for the sensitive attribute and
acceptance probabilities that balance a filtered sample; see A, proportions and trade-offs."""

from __future__ import annotations

from functools import partial

import streamlit as st

from dashboard.components import balanced_filtering_charts as bf
from dashboard.components import cached, runner
from dashboard.components.comparison import add_to_comparison
from dashboard.components.knobs import knob_widget, knob_widgets
from dashboard.components.state import require_task, stop_page
from fairengine.methods import get_method
from fairengine.methods.balanced_filtering import CURVES, PAPER_SETTING, tradeoff_curves
from fairengine.methods.balanced_filtering.frontier import curve_grid, tradeoff_points
from fairengine.methods.balanced_filtering.method import MAX_GROUPS, run_filter

METHOD = get_method("balanced_filtering")
st.title("Balanced filtering")
st.caption(
    f"{METHOD.reference} (seed 000). A proxy ẑ(x) — a randomised tree whose leaves reveal at most "
    "α about the sensitive group — and per-leaf acceptance probabilities ρ: keeping each candidate "
    "with probability ρ of its leaf gives a sample close to the target group distribution. "
    "The label y is never used."
)
task = require_task()
groups = list(task.group_names)
if not 2 <= len(groups) <= MAX_GROUPS:
    st.error(
        f"Balanced filtering needs 2 to {MAX_GROUPS} sensitive groups, but "
        f"{', '.join(task.sensitive)} has {len(groups)}. Choose another sensitive attribute on the "
        "Data page, or merge rare groups."
    )
    runner.offer_demo(METHOD)
    stop_page()
if task.kind == "regression":
    st.info("This is a regression task: filtering never uses the target, so it works unchanged.")

train, test = cached.split_task(task, task.fingerprint)
st.caption(f"Sensitive attribute: **{', '.join(task.sensitive)}** ({len(groups)} groups).")
knobs = {"alpha": knob_widget(METHOD.knob("alpha"), key="w.bf.alpha")}
with st.expander("Advanced"):
    knobs.update(knob_widgets(METHOD, key_prefix="w.bf", skip=("alpha",)))
    target_mode = st.radio(
        "Target distribution", ["uniform", "custom"], horizontal=True, key="w.bf.tmode"
    )
    target = None
    if target_mode == "custom":
        cols = st.columns(min(len(groups), 6))
        raw = [
            cols[i % len(cols)].number_input(g, 0.0, 1.0, 1.0 / len(groups), 0.01, key=f"w.bf.t{i}")
            for i, g in enumerate(groups)
        ]
        if sum(raw) <= 0:
            st.error("The custom target needs at least one positive share.")
            stop_page()
        target = tuple(float(v) / sum(raw) for v in raw)
        st.caption("Shares renormalised to sum 1: " + ", ".join(f"{v:.3f}" for v in target))
paper = st.toggle(
    "Paper setting (no leaf floor)",
    key="w.bf.paper",
    help="The paper's protocol (γ = 0.1, height 20, stop below β = 0.1) with no leaf-mass floor "
    "(5 rows) and no budget ladder: the in-sample imbalance "
    "falls toward 0 as α → 1 (Adult, race: 0 at α = 1), while the test imbalance shows the "
    "overfitting. Overrides those knobs in Advanced.",
)
if paper:
    knobs.update(PAPER_SETTING)
    st.caption(
        "Paper setting: "
        + ", ".join(f"{k} = {v:g}" for k, v in PAPER_SETTING.items())
        + ". Compare the train and test imbalance below: tiny leaves fit the training rows."
    )
knobs = METHOD.validate_knobs(knobs)
run_key = (task.fingerprint, tuple(sorted(knobs.items())), target)
result = runner.run_panel(
    "balanced_filtering",
    METHOD.name,
    train,
    test,
    knobs,
    extra={"target": target} if target is not None else None,
    function=run_filter if target is not None else None,
    label="Fitting the proxy and the sampling probabilities",
)
knobs = dict(result.knobs)  # the knobs of the result shown (the last ones while a fit runs)
run_key = (task.fingerprint, tuple(sorted(knobs.items())), target)

m_train, m_test = result.metrics["train"], result.metrics["test"]
cols = st.columns(5)
cols[0].metric(
    "Disclosivity (train)", f"{m_train['disclosivity']:.3f}", help=f"budget α = {knobs['alpha']}"
)
cols[1].metric("Imbalance β (train)", f"{m_train['imbalance']:.3f}")
cols[2].metric("Imbalance β (test)", f"{m_test['imbalance']:.3f}")
cols[3].metric("Acceptance rate (test)", f"{m_test['acceptance_rate']:.3f}")
cols[4].metric("Proxy leaves", int(m_train["n_leaves"]))
if m_train["acceptance_rate"] > 0:
    st.caption(
        f"To collect 1,000 balanced rows you need about "
        f"{1000 / m_train['acceptance_rate']:,.0f} candidates."
    )

art = result.artifacts
status = art.get("status", {})
if not status.get("converged", True):
    st.warning(status["message"])
c1, c2 = st.columns(2)
with c1:
    minus = st.toggle("Show A − base rates", key="w.bf.minus")
    st.plotly_chart(
        bf.heatmap_figure(art["A"], art["base_rates"], art["group_names"], minus_base=minus),
        key="bf_heatmap",
    )
with c2:
    st.plotly_chart(bf.proportions_figure(result), key="bf_proportions")

st.subheader("Proxy leaves")
st.dataframe(art["leaves"].round(4), hide_index=True, key="bf_leaves")

st.subheader("Trade-off curves")
c1, c2 = st.columns([3, 1])
chosen = c1.multiselect("Proxies", list(CURVES), default=list(CURVES)[:3], key="w.bf.curves")
n_seeds = c2.number_input(
    "Seeds (splits)",
    1,
    20,
    3,
    key="w.bf.seeds",
    help="Each seed is a fresh train/test split; bands are 95% t-intervals over seeds "
    "(paper: 20 seeds). Seed 0 is the split above.",
)
fixed = {k: v for k, v in knobs.items() if k not in ("proxy", "alpha", "eta", "relaxed")}
if runner.sweep_panel(
    "balanced_filtering",
    "Sweeping α and η",
    f"{run_key}{tuple(chosen)}{int(n_seeds)}",
    tradeoff_points,
    task,
    curves=tuple(chosen),
    alphas=bf.PAGE_ALPHAS,
    etas=bf.PAGE_ETAS,
    seeds=tuple(range(int(n_seeds))),
    test_size=0.3,
    store=cached.frontier_store(),
    button="Compute curves",
    n_points=int(n_seeds) * len(curve_grid(tuple(chosen), bf.PAGE_ALPHAS, bf.PAGE_ETAS, **fixed)),
    **fixed,
):
    points = bf.curve_points(task, knobs, cached.frontier_store(), tuple(chosen), int(n_seeds))
    st.plotly_chart(bf.tradeoff_figure(tradeoff_curves(points), result), key="bf_tradeoff")
else:
    st.caption(
        "Sweeps α for the tree proxies and the interpolation η for the baselines, over several "
        "splits; points are cached and appear on the Compare page too."
    )

seed = int(knobs["random_state"])
d1, d2 = st.columns(2)
d1.download_button(
    "Download filter (model file)",
    partial(bf.model_file, result, train, test, str(run_key)),
    file_name="balanced_filter.fairmodel",
    mime="application/zip",
    key="bf_model",
)
d2.download_button(
    "Download accepted-row flags (test, CSV)",
    partial(bf.accepted_csv, result, test, str(run_key), seed),
    file_name="accepted_rows.csv",
    mime="text/csv",
    key="bf_flags",
)
add_to_comparison(result, train, test, key="bf_add")
