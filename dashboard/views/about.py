"""About page: what fairengine is, the papers behind it, and how to use the dashboard."""

from __future__ import annotations

import streamlit as st

from fairengine import __version__
from fairengine.data import list_datasets
from fairengine.methods import get_method, list_methods
from fairengine.textsafe import md_text

st.title("About fairengine")
st.markdown(
    f"Version {__version__}. fairengine lets an analyst explore fairness–accuracy trade-offs "
    "with recent algorithms that the common toolkits do not offer. Choose a dataset and "
    "its roles on the **Data** page; method pages, frontiers and model export build on that task."
)
st.subheader("The papers")
for method in (get_method(name) for name in list_methods()):
    if method.paper:  # each method's own declaration: its title, what it does, its paper
        st.markdown(
            f"**{md_text(method.title)}** — {md_text(method.description)}  \n"
            f"*{md_text(method.paper)}* ({md_text(method.reference)})"
        )

st.subheader("Bundled datasets")
columns = ("name", "title", "rows", "kind", "target", "sensitive", "licence")
rows = [{c: getattr(d, c) for c in columns} for d in list_datasets()]
st.dataframe([{**r, "sensitive": ", ".join(r["sensitive"])} for r in rows], hide_index=True)
st.subheader("Sharing a view")
st.markdown(
    "The address bar carries the dataset and roles, e.g. `?dataset=compas&sensitive=race`: "
    "copy it to share the view. Nothing you upload leaves this server; uploads are kept only in "
    "your session."
)
