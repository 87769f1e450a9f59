"""Fewer animation frames while a page waits (many visitors on few cores): a browser without a
GPU renders Streamlit's shimmering skeletons and stale-element fades in software. :func:`draw`
keeps the skeletons, still grey, without the shimmer, and stops the fade.
"""

from __future__ import annotations

#: CSS of :func:`calm_css`; ``data-testid`` selectors of Streamlit 1.67's frontend.
CSS = """
[data-testid="stSkeleton"], [data-testid="stSkeletonElement"], [data-testid="stAppSkeleton"],
[data-testid="stAppSkeleton"] * { animation: none !important; }
[data-testid="stElementContainer"] { transition: none !important; }
"""


def calm_css() -> str:
    """The ``<style>`` element (minified) that :func:`draw` adds to the page."""
    return "<style>" + " ".join(line.strip() for line in CSS.strip().splitlines()) + "</style>"


def draw() -> None:
    """Add :func:`calm_css` to the page (``st.html`` puts a style-only element out of the flow)."""
    import streamlit as st

    st.html(calm_css())
