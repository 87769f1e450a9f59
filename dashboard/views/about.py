"""About page: what fairengine is, the papers behind it, and how to use the dashboard."""

from __future__ import annotations

import streamlit as st

from fairengine import __version__
from fairengine.data import list_datasets

PAPERS = [
    (
        "Balanced filtering with non-disclosive proxies",
        "Deng, Diana, Kearns, Roth — Balanced Filtering via Non-Disclosive Proxies",
        "Collect a sample balanced across groups without using group membership at collection "
        "time: a proxy that reveals little more than base rates (disclosivity α) drives filtering.",
    ),
    (
        "Max-entropy debiasing",
        "Celis, Keswani, Vishnoi — Data preprocessing to mitigate bias: a maximum entropy based "
        "approach (ICML 2020)",
        "Learn a maximum-entropy distribution close to a reweighted prior (weight C) whose "
        "marginals meet a representation rate τ, and sample debiased data from it.",
    ),
    (
        "Fair regression by reductions",
        "Agarwal, Dudík, Wu — Fair Regression: Quantitative Definitions and Reduction-based "
        "Algorithms (ICML 2019)",
        "Statistical parity (KS distance of prediction CDFs) and bounded group loss for "
        "regression, by reduction to cost-sensitive classification.",
    ),
    (
        "Fairness with noisy protected groups",
        "Wang, Guo, Narasimhan, Cotter, Gupta, Jordan — Robust Optimization for Fairness with "
        "Noisy Protected Groups (NeurIPS 2020)",
        "Keep fairness constraints on the true groups when only noisy group labels are observed: "
        "distributionally robust and soft-assignment approaches.",
    ),
    (
        "Multiaccurate proxies",
        "Diana, Gill, Kearns, Kenthapadi, Roth, Sharifi-Malvajerdi — Multiaccurate Proxies for "
        "Downstream Fairness (FAccT 2022)",
        "Learn a proxy for the sensitive attribute that is multiaccurate over a class of tasks, "
        "so downstream fair learners trained with it stay fair on the true groups.",
    ),
]

st.title("About fairengine")
st.markdown(
    f"Version {__version__}. fairengine lets an analyst explore fairness–accuracy trade-offs "
    "with five recent algorithms that the common toolkits do not offer. Choose a dataset and "
    "its roles on the **Data** page; method pages, frontiers and model export build on that task."
)
st.subheader("The papers")
for title, citation, summary in PAPERS:
    st.markdown(f"**{title}** — {summary}  \n*{citation}*")

st.subheader("Bundled datasets")
st.dataframe(
    [
        {
            "name": d.name,
            "title": d.title,
            "rows": d.rows,
            "kind": d.kind,
            "target": d.target,
            "sensitive": ", ".join(d.sensitive),
            "licence": d.licence,
        }
        for d in list_datasets()
    ],
    hide_index=True,
)
st.subheader("Sharing a view")
st.markdown(
    "The address bar carries the dataset and roles, e.g. `?dataset=compas&sensitive=race`: "
    "copy it to share the view. Nothing you upload leaves this server; uploads are kept only in "
    "your session."
)
