"""Balanced filtering (Deng, Diana, Kearns & Roth, arXiv 2023): learn a non-disclosive proxy for the
sensitive attribute and acceptance probabilities that balance a filtered sample; see A, proportions
and trade-offs."""

from __future__ import annotations

import streamlit as st

from dashboard.components import balanced_filtering_charts as bf
from dashboard.components import cached, runner
from dashboard.components.knobs import knob_panel, knob_widget
from dashboard.components.method_page import fit, model_and_comparison, open_page
from dashboard.components.services import result_key
from dashboard.components.shared import shared
from dashboard.components.tables import static_table
from fairengine.methods import get_method
from fairengine.methods.balanced_filtering import CURVES, PAPER_SETTING
from fairengine.methods.balanced_filtering.method import DEMO_SEEDS, run_filter
from fairengine.sweeps.balanced_filtering import tradeoff_points
from fairengine.textsafe import md_text

METHOD = get_method("balanced_filtering")
task, train, test = open_page(
    METHOD,
    f"{METHOD.reference}. A proxy ẑ(x) — a randomised tree whose leaves reveal at most "
    "α about the sensitive group — and per-leaf acceptance probabilities ρ: keeping each candidate "
    "with probability ρ of its leaf gives a sample close to the target group distribution. "
    "The label y is never used.",
)
if task.kind == "regression":
    st.info("This is a regression task: filtering never uses the target, so it works unchanged.")
st.caption(
    f"Sensitive attribute: **{md_text(', '.join(task.sensitive))}** "
    f"({len(task.group_names)} groups)."
)
chosen_target: dict = {}  # the target distribution, chosen in the Advanced expander
knobs = knob_panel(
    METHOD,
    key_prefix="w.bf",
    skip=("alpha",),
    advanced_extra=lambda: chosen_target.update(target=bf.target_widget(task.group_names)),
)
target = chosen_target.get("target")
paper = st.toggle(
    "The paper's exact setting",
    key="w.bf.paper",
    help="The default (generalising protocol) holds out 30% of the training rows and uses them "
    "to choose the tree's smallest leaf and number of leaves, so the test imbalance stays close "
    "to the training one. This toggle switches to the paper's setting instead: γ = 0.1, height "
    "20, grown until the hull distance is below β = 0.1, no leaf-mass floor (leaves of 5 rows or "
    "more) — better in-sample, much worse on the test rows. Overrides those knobs in Advanced.",
)
if paper:
    knobs.update(PAPER_SETTING)
    st.caption(
        "Paper's setting: "
        + ", ".join(
            f"{md_text(k)} = {md_text(v)}" if isinstance(v, str) else f"{md_text(k)} = {v:g}"
            for k, v in PAPER_SETTING.items()
        )
        + ". Compare the train and test curves below with the default's."
    )
curve_knobs = METHOD.validate_knobs(knobs)  # alpha is swept: its slider sits with the run

st.subheader("Disclosivity–imbalance trade-off")
st.caption(
    "The paper's Figures 1–2: each point is a filter fitted at one α (tree proxies) or η "
    "(baselines); the line is the mean over train/test splits, the band its 95% t-interval and "
    "the small dots the splits themselves. **Train** (in-sample) and **test** (held-out rows) "
    "side by side. With the default (generalising) protocol the tree stops where held-out "
    "training rows stop getting more balanced, so train and test stay close; with the paper's "
    "setting the in-sample imbalance falls toward 0 through leaves of a few rows while the test "
    'imbalance stays high (the paper: "a more modest improvement"). A filtered sample from '
    "which a group vanished counts as the largest possible imbalance, √(1 − 1/K) for K groups. "
    "The lines are plain means, not smoothed: each α grows its own tree, so nothing makes them "
    "fall steadily with α (with the paper's setting, the budget ladder in Advanced makes the "
    "in-sample curve of each split non-increasing in α; the test curve has no such guarantee). "
    f"On Adult (race) the two tree curves over {len(DEMO_SEEDS)} splits ship with the app."
)
c1, c2 = st.columns([3, 1])
chosen = c1.multiselect("Proxies", list(CURVES), default=list(bf.DEFAULT_CURVES), key="w.bf.curves")
n_seeds = c2.number_input(
    "Seeds (splits)",
    1,
    20,
    len(DEMO_SEEDS),
    key="w.bf.seeds",
    help="Each seed is a fresh train/test split; bands are 95% t-intervals over seeds "
    "(paper: 20 seeds). Seed 0 is the split of the single run below.",
)
curves_key = (task.fingerprint, tuple(sorted(curve_knobs.items())), tuple(chosen), int(n_seeds))
store = cached.frontier_store()
store_key = f"{task.fingerprint}|{store!r}"
stored = bool(chosen) and bf.curves_stored(task, store, store_key, *curves_key[1:])
curves, n_points = bf.curve_args(curve_knobs, chosen, n_seeds)
if stored:  # complete in the store (the shipped demo curves): read once, no progress bar
    st.button("Compute curves", key="bf_curves", disabled=True, help="Every point is stored.")
ready = stored or (
    bool(chosen)
    and runner.sweep_panel(  # in the shared worker pool, with progress and Cancel
        "balanced_filtering",
        "Sweeping α and η",
        str(curves_key),
        tradeoff_points,
        task,
        store=store,
        button="Compute curves",
        n_points=n_points,
        **curves,
    )
)
if ready:  # every point is stored: read, averaged and drawn once for every session
    figure, gap = shared(
        bf.tradeoff_view, (store_key, curves_key), task, curve_knobs, store, *curves_key[2:]
    )
    st.plotly_chart(figure, key="bf_tradeoff")
    if gap:
        st.caption(md_text(gap))
else:
    st.caption(
        "Not computed yet for this task and these knobs: **Compute curves** sweeps α for the "
        "tree proxies and η for the baselines over the chosen splits (points are cached and "
        "appear on the Compare page too). Shipped curves: Adult with sensitive attribute race, "
        "default knobs."
    )

st.subheader("One filter")
knobs["alpha"] = knob_widget(METHOD.knob("alpha"), key="w.bf.alpha", url=True)
result, knobs = fit(
    METHOD,
    (task, train, test),
    knobs,
    "Fitting the proxy and the sampling probabilities",
    extra={"target": target} if target is not None else None,
    function=run_filter if target is not None else None,
)

m_train, m_test = result.metrics["train"], result.metrics["test"]
cols = st.columns(5)
cols[0].metric(
    "Disclosivity (train)", f"{m_train['disclosivity']:.3f}", help=f"budget α = {knobs['alpha']:g}"
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
rkey = result_key("balanced_filtering")  # figures are built once for every session
status = art.get("status", {})
if not status.get("converged", True) or status.get("empty_splits"):
    st.warning(md_text(status["message"]))  # may name groups
c1, c2 = st.columns(2)
with c1:
    minus = st.toggle("Show A − base rates", key="w.bf.minus")
    st.plotly_chart(
        shared(
            bf.heatmap_figure,
            (rkey, minus),
            art["A"],
            art["base_rates"],
            art["group_names"],
            minus_base=minus,
        ),
        key="bf_heatmap",
    )
with c2:
    st.plotly_chart(shared(bf.proportions_figure, rkey, result), key="bf_proportions")

st.subheader("Proxy leaves")
st.caption(
    "Each leaf's rule is the path of splits that leads to it. A split is named by the feature "
    "that weighs most in it and its threshold in the table's units; ≈ marks a split that also "
    "weighs other features (its share of the weight is given) or mixes thresholds, where the "
    "threshold holds with the other features at their means. Training rows (expected): the "
    "leaf's share of each training row summed, rounded to whole rows."
)
static_table(art["leaves"], index=False)

seed = int(knobs["random_state"])
d1, d2 = st.columns(2)
d2.download_button(  # bytes, not a deferred callable (see model_and_comparison)
    "Download accepted-row flags (test, CSV)",
    bf.accepted_csv(result, test, str(rkey), seed),  # cached per run and seed
    file_name="accepted_rows.csv",
    mime="text/csv",
    key="bf_flags",
)
model_and_comparison(
    result,
    (train, test),
    key="bf",
    label="Download filter (model file)",
    file_name="balanced_filter.fairmodel",
    place=d1,
)
