"""Fewer animation frames while a page waits (many visitors on few cores).

Streamlit draws a shimmering skeleton for every element whose code is still loading (each chart
while the plotly bundle compiles, each widget's chunk on a first visit) and fades stale elements. A
browser without a GPU renders every such frame in software, and a busy server makes the waits, and
so the frames, longer: with six pages computing, pages kept many shimmering skeletons running for
seconds (bench ``load_seventh_visitor``; bench/RESULTS.md). :func:`calm_css` (drawn once per script
run by ``dashboard/app.py``, through ``st.html`` with only a ``<style>``, which takes no space on
the page) keeps the skeletons, still grey, without the shimmer, and stops the stale-element fade.
The very first skeleton of a visit (``stAppSkeleton``, before the script's first message) cannot be
reached from the script; the rule is there for the reruns that show it again.
"""

from __future__ import annotations

#: CSS of :func:`calm_css`; ``data-testid`` selectors of Streamlit 1.67's frontend.
CSS = """
[data-testid="stSkeleton"], [data-testid="stSkeletonElement"], [data-testid="stAppSkeleton"],
[data-testid="stAppSkeleton"] * { animation: none !important; }
[data-testid="stElementContainer"] { transition: none !important; }
"""


def calm_css() -> str:
    """The ``<style>`` element (minified) that :mod:`dashboard.app` adds to every page."""
    return "<style>" + " ".join(line.strip() for line in CSS.strip().splitlines()) + "</style>"


def draw() -> None:
    """Add :func:`calm_css` to the page (``st.html`` puts a style-only element out of the flow)."""
    import streamlit as st

    st.html(calm_css())
