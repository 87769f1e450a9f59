"""Hostile text from links and uploads reaches the pages only as escaped Markdown (AppTest).

Every Markdown body, label and help text on the page must hold the outside host only in escaped
form (``example\\.com``): an unescaped ``example.com`` would be a link, an image or an autolink.
Select boxes and multiselects show their options as plain text, so their options are not
Markdown and are not checked here (the browser test checks what they render)."""

from __future__ import annotations

import functools
import io
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from fairengine.textsafe import md_code, md_text
from tests.hostile_text import EVIL_HOST, KITCHEN_SINK, shown

APP = str(Path(__file__).resolve().parents[2] / "dashboard" / "app.py")

#: Group values of the hostile upload (each one a group of the sensitive column).
HOSTILE_GROUPS = ("<b>g1</b> [a](https://example.com/g) _x_", ":red[g2] $x$ www.example.com")


def markdown_strings(at: AppTest) -> list[str]:
    """Every string the frontend renders as Markdown: bodies, labels, help texts, radio
    options, expander and tab labels, in the main area and the sidebar."""
    found: list[str] = []
    for kind in ("markdown", "caption", "warning", "error", "info", "success", "title",
                 "subheader", "header", "latex"):  # fmt: skip
        found += [e.value for e in at.get(kind)]
    for kind in ("metric", "selectbox", "multiselect", "radio", "number_input", "slider",
                 "checkbox", "toggle", "button", "text_input", "expander", "tab"):  # fmt: skip
        for element in at.get(kind):
            proto = element.proto
            found += [getattr(proto, f, "") for f in ("label", "help", "body")]
            if kind == "radio":
                found += list(proto.options)
    for element in at.get("markdown") + at.get("caption"):
        found.append(getattr(element.proto, "help", ""))
    return [s for s in found if s]


def assert_escaped(at: AppTest, *expected: str) -> list[str]:
    """No Markdown string holds the outside host unescaped (except inside the code spans that
    ``md_code`` makes of ``expected``, where nothing is parsed); each of ``expected`` is shown
    (escaped) somewhere. Returns the strings checked."""
    strings = markdown_strings(at)
    assert strings
    spans = [md_code(text) for text in expected]
    outside = [functools.reduce(lambda s, span: s.replace(span, ""), spans, s) for s in strings]
    raw = [s for s in outside if EVIL_HOST in s or "www." in s.lower()]
    assert raw == [], raw
    joined = "\n".join(strings)
    for text in expected:
        assert md_text(text) in joined or md_code(text) in joined, text
    return strings


def _app(**params: str | list[str]) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception
    return at


def test_link_to_an_upload_quotes_the_name_as_text() -> None:
    at = _app(data="upload", name=KITCHEN_SINK)
    assert_escaped(at, KITCHEN_SINK)
    assert f"uploaded table ({KITCHEN_SINK})" in shown(at.warning[0].value)


def test_unknown_dataset_in_a_link_is_quoted_as_text() -> None:
    at = _app(dataset=KITCHEN_SINK)
    assert_escaped(at, repr(KITCHEN_SINK))
    assert f"Unknown dataset {KITCHEN_SINK!r}" in shown(at.warning[0].value)


@pytest.mark.parametrize("role", ["target", "sensitive"])
def test_invalid_role_in_a_link_is_quoted_as_text(role: str) -> None:
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["dataset"] = "german_credit"
    at.query_params[role] = KITCHEN_SINK
    at.switch_page("views/compare.py")  # not the Data page: the link's roles build the task
    at.run()
    assert not at.exception
    assert_escaped(at, KITCHEN_SINK)
    assert any("roles are not valid" in w.value for w in at.warning)


def _knob_app() -> None:
    from dashboard.components.knobs import knob_panel
    from fairengine.methods import get_method

    knob_panel(get_method("balanced_filtering"), key_prefix="w")


@pytest.mark.parametrize("knob", ["eta", "alpha", "proxy"])
def test_knob_value_in_a_link_is_quoted_as_text(knob: str) -> None:
    at = AppTest.from_function(_knob_app, default_timeout=30)
    at.query_params[knob] = KITCHEN_SINK
    at.run()
    assert not at.exception
    assert_escaped(at, KITCHEN_SINK)
    assert any("was ignored" in w.value for w in at.warning)


def hostile_csv() -> bytes:
    rows = 120
    frame = pd.DataFrame(
        {
            "age": [20 + i % 40 for i in range(rows)],
            KITCHEN_SINK: [HOSTILE_GROUPS[i % 2] for i in range(rows)],
            "`y` $z$": [("yes <i>", "no")[i % 3 > 0] for i in range(rows)],
        }
    )
    buffer = io.StringIO()
    frame.to_csv(buffer, index=False)
    return buffer.getvalue().encode()


def test_hostile_upload_names_and_values_are_text_on_every_page() -> None:
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    at.radio(key="w.source").set_value("upload").run()
    name = "![f](https://example.com/f.png) _t_.csv"
    at.file_uploader[0].set_value((name, hostile_csv(), "text/csv")).run()
    at.selectbox(key="w.target").set_value("`y` $z$").run()
    at.multiselect(key="w.sensitive").set_value([KITCHEN_SINK]).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    task = at.session_state["task"]
    assert task.sensitive == (KITCHEN_SINK,) and set(task.group_names) == set(HOSTILE_GROUPS)
    checked = assert_escaped(at, KITCHEN_SINK, *HOSTILE_GROUPS, name.rsplit(".", 1)[0])
    # The sidebar's code spans show the column names verbatim (nothing is parsed in them).
    sidebar = " ".join(m.value for m in at.sidebar.markdown)
    assert "``` `y` $z$ ```" in sidebar or "`` `y` $z$ ``" in sidebar
    for page in ("views/balanced_filtering.py", "views/compare.py"):
        at.switch_page(page).run()
        assert not at.exception
        checked += assert_escaped(at, KITCHEN_SINK)
    print(f"{len(checked)} Markdown strings checked")
