"""The "How to read this page" expander of each method page: what the numbers and charts show,
in words, next to the paper they come from. A page's guide is Markdown in
``dashboard/guides/<method>.md`` (also shown in the docs), else written from the method's
declaration."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from fairengine.methods import get_method
from fairengine.metrics import metric_info
from fairengine.textsafe import md_text

#: The pages' reading guides, written by the dashboard's authors (never data).
GUIDES = Path(__file__).resolve().parents[1] / "guides"


def guide_text(method_name: str) -> str | None:
    """The written guide of a method's page (None when it has none)."""
    path = GUIDES / f"{method_name}.md"
    return path.read_text(encoding="utf-8").strip() if path.is_file() else None


def reading_guide(method_name: str) -> str:
    """The reading guide of a method's page: its written guide, else one from its declaration:
    what it does, its knobs and its plane."""
    if guide := guide_text(method_name):
        return guide
    method = get_method(method_name)
    knobs = "; ".join(f"*{md_text(k.display_label)}*: {md_text(k.help)}" for k in method.knobs)
    performance = metric_info(method.performance_metric).label
    fairness = metric_info(method.fairness_metric).label
    return (
        f"**The question.** {md_text(method.description)}\n\n"
        f"- **Knobs.** {knobs}.\n"
        f"- **Numbers.** {md_text(performance)} and {md_text(fairness)} on the test rows; the "
        "checks and baselines above say whether the result keeps its promise on held-out rows.\n"
        "- **Sweep.** Each point is one fit with the other knobs fixed; its points appear on "
        "the Compare page too."
    )


def how_to_read(method_name: str) -> None:
    """A collapsed "How to read this page" expander with the method's reading guide and citation."""
    method = get_method(method_name)
    with st.expander("How to read this page", icon=":material/help:"):
        st.markdown(reading_guide(method_name))
        if method.reference:
            st.caption(f"Paper: {method.reference}.")
