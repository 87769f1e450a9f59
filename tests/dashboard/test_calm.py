"""The page-wide style that stops Streamlit's waiting animations (dashboard/components/calm.py)."""

from __future__ import annotations

import re
from pathlib import Path

import streamlit
from streamlit.elements.html import _html_only_style_tags

from dashboard.components.calm import CSS, calm_css

FRONTEND = Path(streamlit.__file__).parent / "static" / "static" / "js"


def test_style_only_so_it_takes_no_space() -> None:
    html = calm_css()
    assert html.startswith("<style>") and html.endswith("</style>")
    # st.html sends style-only HTML to the event container, outside the page's flow
    assert _html_only_style_tags(html)
    assert "\n" not in html


def test_every_selector_names_an_element_of_the_installed_frontend() -> None:
    """A renamed test id after a Streamlit upgrade would silently bring the shimmer back."""
    bundle = "\n".join(p.read_text(errors="replace") for p in FRONTEND.glob("*.js"))
    test_ids = set(re.findall(r'\[data-testid="([A-Za-z]+)"\]', CSS))
    assert {"stSkeleton", "stAppSkeleton", "stElementContainer"} <= test_ids
    for test_id in test_ids:
        assert f"`{test_id}`" in bundle or f'"{test_id}"' in bundle, test_id


def test_stops_animations_and_transitions() -> None:
    rules = dict(re.findall(r"([^{}]+)\{([^}]*)\}", CSS))
    skeleton = next(body for sel, body in rules.items() if '"stSkeleton"' in sel)
    assert "animation: none !important" in skeleton
    container = next(body for sel, body in rules.items() if '"stElementContainer"' in sel)
    assert "transition: none !important" in container


def test_app_draws_it_on_every_page() -> None:
    source = (Path(__file__).resolve().parents[2] / "dashboard" / "app.py").read_text()
    # before the pages run, so that no page (and no early stop) can skip it
    assert source.index("calm.draw()") < source.index("navigation.run()")
