"""The Balanced filtering page under AppTest, on german_credit (sex) with a private cache."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from tests.dashboard.boxes import evidence_shown, page_errors
from tests.hostile_text import shown

APP = str(Path(__file__).resolve().parents[2] / "dashboard" / "app.py")


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("FAIRENGINE_CACHE", str(tmp_path / "cache"))
    # fits run in the shared worker pool; wait for them inline and redo every change live
    monkeypatch.setenv("FAIRENGINE_RUN_WAIT", "600")
    monkeypatch.setenv("FAIRENGINE_CHEAP_SECONDS", "1e9")


def _values(data) -> np.ndarray:
    """A plotly trace array: a list, or a typed array ({"dtype", "bdata"} base64)."""
    if isinstance(data, dict):
        return np.frombuffer(base64.b64decode(data["bdata"]), dtype=data["dtype"])
    return np.asarray(data, dtype=float)


def open_page(**params: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params.update({"dataset": "german_credit", **params})
    at.run()
    at.switch_page("views/balanced_filtering.py").run()
    assert not at.exception
    return at


def test_run_shows_heatmap_proportions_table_and_downloads() -> None:
    at = open_page()
    assert at.title[0].value == "Balanced filtering"
    assert len(at.get("plotly_chart")) == 2  # the first view fits at once, no button
    assert evidence_shown(at)  # the held-out checks and the filter's references, at the top
    at.slider(key="w.bf.alpha").set_value(0.3)
    at.run()
    assert not at.exception and not page_errors(at)
    assert len(at.get("plotly_chart")) == 2  # heatmap of A, proportions before/after
    assert len(at.get("download_button")) == 2
    # bytes, not deferred callables: Streamlit drops a deferred download's file after two script
    # runs anywhere on the server (a 404 on a busy server)
    assert not any(b.proto.HasField("deferred_file_id") for b in at.get("download_button"))
    assert [m.label for m in at.metric][:2] == ["Disclosivity (train)", "Imbalance β (train)"]
    assert float(at.metric[0].value) <= 0.3 + 1e-9
    at.toggle(key="w.bf.minus").set_value(True).run()
    assert not at.exception


def test_curves_and_custom_target() -> None:
    at = open_page()
    at.slider(key="w.bf.alpha").set_value(0.2)
    at.radio(key="w.bf.tmode").set_value("custom").run()
    at.run()
    assert not at.exception and not page_errors(at)
    at.multiselect(key="w.bf.curves").set_value(["QP decision tree", "Naive regression"])
    at.number_input(key="w.bf.seeds").set_value(2)
    at.button(key="runner.sweep.balanced_filtering").click().run()
    assert not at.exception
    charts = at.get("plotly_chart")
    assert len(charts) == 3
    traces = json.loads(charts[0].proto.spec)["data"]  # the trade-off comes first
    bands = [t for t in traces if t.get("fill") == "toself"]
    lines = [t for t in traces if t.get("mode") == "lines+markers"]
    assert len(bands) == len(lines) == 4  # 2 curves x (train, test), a 95% band under each line
    dots = [t for t in traces if t.get("mode") == "markers" and "(each split)" in t["name"]]
    assert len(dots) == 4 and all(len(_values(t["y"])) == 2 * 6 for t in dots)  # 2 seeds x 6 η
    assert len({t["line"]["dash"] for t in lines}) == 2  # curves differ in dash, not only colour


def test_early_stop_is_a_visible_warning() -> None:
    at = open_page()
    at.slider(key="w.bf.alpha").set_value(0.0)
    at.run()
    assert not at.exception
    assert any("α = 0" in shown(w.value) for w in at.warning)


def test_paper_toggle_switches_to_the_paper_setting() -> None:
    at = open_page()
    at.toggle(key="w.bf.paper").set_value(True).run()
    assert any(
        "protocol = paper" in shown(c.value) and "min_leaf_rows = 5" in shown(c.value)
        for c in at.caption
    )
    at.run()
    assert not at.exception and not page_errors(at)
    assert [m.label for m in at.metric][1:3] == ["Imbalance β (train)", "Imbalance β (test)"]


def test_adult_race_opens_on_the_shipped_paper_curves() -> None:
    """The page opens on the paper's figure: the shipped default curves (5 splits, train and
    test, 95% bands, every split's own point) are drawn without pressing anything; at the
    default (generalising) protocol the imbalance falls from the base rates as α grows and the
    test curve stays within 0.1 of the training curve."""
    at = open_page(dataset="adult", sensitive="race")
    assert not page_errors(at)
    assert at.button(key="bf_curves").disabled  # nothing to compute: read from the store
    charts = at.get("plotly_chart")
    assert len(charts) == 3  # the curves first, then the single filter's heatmap and proportions
    traces = json.loads(charts[0].proto.spec)["data"]
    lines = {(t["name"], t["xaxis"]): t for t in traces if t.get("mode") == "lines+markers"}
    assert len(lines) == 4 and len([t for t in traces if t.get("fill") == "toself"]) == 4
    assert len([t for t in traces if "(each split)" in t.get("name", "")]) == 4
    train, test = (_values(lines[("(α, β) proxy", axis)]["y"]) for axis in ("x", "x2"))
    assert train[0] > 0.7 and train[-1] < train[0] - 0.2
    assert np.all(np.abs(test - train) <= 0.1)
    assert any("in-sample" in c.value and "test split" in c.value for c in at.caption)


def test_add_to_comparison_stores_the_filter_on_its_own_plane() -> None:
    at = open_page()
    at.run()
    at.button(key="bf_add").click().run()
    assert not at.exception
    assert any("Added to the comparison" in s.value for s in at.success)
    at.switch_page("views/compare.py").run()
    assert not at.exception and not page_errors(at)
    assert at.selectbox(key="w.cmp_x").value in ("disclosivity", "imbalance", "acceptance_rate")
    assert len(at.selectbox(key="w.cmp_point").options) == 1
