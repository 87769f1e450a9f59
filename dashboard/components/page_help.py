"""The "How to read this page" expander of each method page: what the numbers and charts show,
in words, next to the paper they come from. Each page's guide is declared in its chart module."""

from __future__ import annotations

import importlib
import importlib.util

import streamlit as st

from fairengine.methods import get_method
from fairengine.methods.base import Method
from fairengine.textsafe import md_text


def reading_guide(method_name: str) -> str:
    """The reading guide of a method's page: ``HOW_TO_READ`` in its chart module
    ``dashboard/components/<name>_charts.py`` (declared next to the charts it explains, found by
    name), else a guide written from the method's declaration."""
    module = f"dashboard.components.{method_name}_charts"
    if importlib.util.find_spec(module) is not None:
        guide = getattr(importlib.import_module(module), "HOW_TO_READ", None)
        if guide:
            return guide.strip()
    return declared_guide(get_method(method_name))


def declared_guide(method: Method) -> str:
    """A reading guide from the method's declaration: what it does, its knobs and its plane."""
    from fairengine.metrics import metric_info

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
