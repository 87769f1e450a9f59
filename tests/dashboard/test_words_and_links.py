"""Words for people and shareable views: knob labels, citations, knobs in the URL, a lost upload,
demo-mode limits."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from fairengine.methods import get_method, list_methods
from tests.hostile_text import shown

APP = str(Path(__file__).resolve().parents[2] / "dashboard" / "app.py")
#: A paper's symbol or a word: every label must be readable, not the code name.
_CODE_NAME = re.compile(r"^[a-z]+(_[a-z0-9]+)+$")


def test_every_knob_has_words_and_help() -> None:
    for name in list_methods():
        for knob in get_method(name).knobs:
            where = f"{name}.{knob.name}"
            assert knob.label, f"{where} has no label"
            assert knob.label != knob.name and not _CODE_NAME.match(knob.label), where
            assert knob.display_label == knob.label
            assert knob.help, f"{where} has no help text"


def test_paper_methods_cite_author_venue_year_not_a_seed_number() -> None:
    for name in list_methods():
        method = get_method(name)
        if method.seed is None:
            continue
        assert re.search(r"[A-Z][a-z]+.*, [A-Za-z]+ 20\d\d", method.reference), method.reference
        assert "seed" not in method.reference.lower()


def test_model_card_cites_the_paper_without_seed_jargon() -> None:
    from fairengine.data import load_dataset
    from fairengine.export import model_card
    from fairengine.methods.base import RunResult

    method = get_method("maxent")
    task = load_dataset("german_credit")
    result = RunResult(method="maxent", knobs=method.defaults(), metrics={}, model=None)
    card = model_card(result, task, task, method=method)
    assert f"**Reference:** {method.reference}" in card
    assert "(seed" not in card


def _knob_app(method_name: str, share: bool) -> None:
    import streamlit as st

    from dashboard.components.knobs import knob_panel, share_knobs
    from fairengine.data import load_dataset
    from fairengine.methods import get_method

    method = get_method(method_name)
    values = method.validate_knobs(knob_panel(method, key_prefix=f"w.{method_name}"))
    st.session_state["values"] = values
    if share:
        share_knobs(method, values, load_dataset("german_credit"))


def test_knobs_are_restored_from_the_link_and_written_back() -> None:
    at = AppTest.from_function(_knob_app, args=("balanced_filtering", True), default_timeout=30)
    at.query_params["alpha"] = "0.4"
    at.query_params["relaxed"] = "true"
    at.query_params["proxy"] = "not-a-proxy"  # invalid: ignored, the default stays
    at.query_params["max_depth"] = "99"  # out of range: ignored
    at.run()
    assert not at.exception
    values = at.session_state["values"]
    method = get_method("balanced_filtering")
    assert values["alpha"] == 0.4 and values["relaxed"] is True
    assert values["proxy"] == method.knob("proxy").default
    assert values["max_depth"] == method.knob("max_depth").default
    ignored = " ".join(w.value for w in at.warning)
    assert "Proxy ẑ was ignored" in ignored and "Maximum tree height was ignored" in ignored
    # The widget shows the label in words, seeded from the link.
    slider = at.slider(key="w.balanced_filtering.alpha")
    assert slider.label == "Disclosivity budget α" and slider.value == 0.4
    # The address bar now holds the task and exactly the non-default knobs.
    params = {k: at.query_params[k] for k in at.query_params}
    assert params["dataset"] == "german_credit"
    assert params["alpha"] == "0.4" and params["relaxed"] == "True"
    assert "proxy" not in params and "max_depth" not in params and "gamma" not in params
    # A later change of the knob reaches the link; the link does not pull the widget back.
    slider.set_value(0.6).run()
    assert at.session_state["values"]["alpha"] == 0.6
    assert at.query_params["alpha"] == "0.6"


def test_link_without_knobs_gives_defaults() -> None:
    at = AppTest.from_function(_knob_app, args=("maxent", False), default_timeout=30)
    at.run()
    assert at.session_state["values"] == get_method("maxent").defaults()


def test_a_link_to_an_upload_says_the_table_is_gone_and_offers_upload() -> None:
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["data"] = "upload"
    at.query_params["name"] = "my_table.csv"
    at.run()
    assert not at.exception
    warnings = " ".join(w.value for w in at.warning)
    assert "uploaded table (my_table.csv)" in shown(warnings) and "Upload it again" in warnings
    assert at.radio(key="w.source").value == "upload"
    assert len(at.get("file_uploader")) == 1
    assert at.session_state["task"] is None  # no other data opened in its place


@pytest.mark.parametrize(
    ("environ", "demo"),
    [({}, False), ({"FAIRENGINE_DEMO": "1"}, True), ({"FAIRENGINE_DEMO": "off"}, False)],
)
def test_demo_mode_flag_sets_the_caps(environ: dict[str, str], demo: bool, monkeypatch) -> None:
    from dashboard.components.deploy import DEMO_MAX_ROWS, INTERACTIVE_ROWS, limits

    monkeypatch.delenv("FAIRENGINE_DEMO", raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    caps = limits()
    assert caps.demo is demo
    assert caps.max_rows == (DEMO_MAX_ROWS if demo else INTERACTIVE_ROWS)
    assert (caps.max_sweep_points is not None) is demo


def test_demo_row_cap_keeps_every_bundled_dataset_whole() -> None:
    """The shipped precomputed frontiers are keyed by the full bundled tasks."""
    from dashboard.components.deploy import DEMO_MAX_ROWS
    from fairengine.data.registry import DATASETS, load_frame

    assert max(len(load_frame(name)) for name in DATASETS) <= DEMO_MAX_ROWS


def test_every_method_page_has_a_reading_guide() -> None:
    from dashboard.components.method_page import reading_guide

    views = Path(APP).parent / "views"
    pages = [name for name in list_methods() if (views / f"{name}.py").is_file()]
    assert len(pages) >= 5
    for name in pages:
        assert len(reading_guide(name).split()) > 60, name
        assert "open_page(" in (views / f"{name}.py").read_text(), name  # draws the guide


def test_demo_mode_is_named_in_the_sidebar(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAIRENGINE_DEMO", "true")
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["dataset"] = "german_credit"
    at.run()
    assert not at.exception
    notes = shown(" ".join(c.value for c in at.sidebar.caption))
    assert "Demo mode" in notes and "50,000 rows" in notes and "24 points" in notes


@pytest.mark.parametrize(
    ("base", "path", "query", "location"),
    [
        ("", "/compare", b"dataset=adult&s=a&s=b%20c", "/?page=compare&dataset=adult&s=a&s=b+c"),
        ("fe", "/fe/maxent/", b"", "/fe/?page=maxent"),
        ("", "/", b"dataset=adult", None),  # the root: Streamlit's
        ("", "/_stcore/health", b"", None),
        ("", "/nosuch", b"", None),  # no page: Streamlit's "page not found"
        ("fe", "/compare", b"", None),  # outside the base path
    ],
)  # fmt: skip
def test_a_pages_address_redirects_to_the_root_naming_the_page(base, path, query, location) -> None:
    """The server's middleware sends a page's address to ``/?page=...`` with every parameter,
    so that Streamlit's frontend loads at the root (see ``docs/architecture.md``)."""
    import asyncio

    from streamlit import config

    from dashboard.components.state import PageLinks

    sent: list[dict] = []
    passed: list[str] = []

    async def streamlit(scope, receive, send) -> None:
        passed.append(scope["path"])

    async def send(message: dict) -> None:
        sent.append(message)

    links = PageLinks(streamlit, paths=("data", "compare", "maxent"))
    scope = {"type": "http", "method": "GET", "path": path, "query_string": query}
    original = config.get_option("server.baseUrlPath")
    try:
        config.set_option("server.baseUrlPath", base)
        asyncio.run(links(scope, None, send))
    finally:
        config.set_option("server.baseUrlPath", original)
    if location is None:
        assert passed == [path] and sent == []
    else:
        assert passed == [] and sent[0]["status"] == 307
        assert dict(sent[0]["headers"])[b"location"] == location.encode()
