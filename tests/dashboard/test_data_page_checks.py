"""Data page on real public tables: identifiers and leaked columns named with a one-click change,
and a role guess that asks with its candidates first."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.hostile_text import shown

APP = str(Path(__file__).resolve().parents[2] / "dashboard" / "app.py")
TABLES = Path(__file__).parents[1] / "data" / "real_tables"


@pytest.fixture
def app() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    assert not at.exception
    return at


def _upload(at: AppTest, name: str) -> AppTest:
    at.radio(key="w.source").set_value("upload").run()
    at.file_uploader[0].set_value((name, (TABLES / name).read_bytes(), "text/csv")).run()
    assert not at.exception
    return at


def _button(at: AppTest, label: str):
    (button,) = [b for b in at.button if shown(b.label) == label]
    return button


def test_a_leaked_column_is_named_and_left_out_in_one_click(app: AppTest) -> None:
    _upload(app, "mroz.csv")
    # no column is named like a protected attribute and three like an outcome: the page asks
    assert app.selectbox(key="w.target").value is None
    assert app.selectbox(key="w.target").options[:3] == ["income", "wageh", "wagew"]
    assert any("Choose the target" in shown(i.value) for i in app.info)
    app.selectbox(key="w.target").set_value("work").run()
    assert app.multiselect(key="w.sensitive").options[:1] == ["city"]
    app.multiselect(key="w.sensitive").set_value(["city"]).run()
    task = app.session_state["task"]
    assert task.leaks == ("hoursw", "hearnw") and "Unnamed: 0" not in task.features
    infos = [shown(i.value) for i in app.info]
    assert any(i.startswith("Column 'hoursw' alone predicts the target 'work'") for i in infos)
    assert any(i.startswith("Column 'Unnamed: 0' is an identifier (row numbers") for i in infos)
    _button(app, "Leave 'hoursw' out of the features").click().run()
    task = app.session_state["task"]
    assert "hoursw" not in task.features and task.leaks == ("hearnw",)
    _button(app, "Use 'hoursw' as a feature again").click().run()
    assert "hoursw" in app.session_state["task"].features


def test_an_identifier_is_kept_in_one_click_and_left_out_again(app: AppTest) -> None:
    _upload(app, "respiratory.csv")
    assert app.selectbox(key="w.target").value == "outcome"
    assert app.multiselect(key="w.sensitive").value == ["sex"]
    task = app.session_state["task"]
    assert task.identifiers == ("Unnamed: 0", "id")
    assert any("'id' looks like an identifier" in shown(i.value) for i in app.info)
    _button(app, "Keep 'id' as a feature").click().run()
    task = app.session_state["task"]
    assert "id" in task.features and task.identifiers == ("Unnamed: 0",)
    _button(app, "Leave 'id' out again").click().run()
    assert "id" not in app.session_state["task"].features
