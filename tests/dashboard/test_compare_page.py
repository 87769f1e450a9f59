"""The Compare & export page under AppTest, on german_credit with a private cache."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from fairengine.data import load_dataset
from fairengine.frontier import FrontierStore, sweep, task_key
from tests.dashboard.boxes import page_errors

APP = str(Path(__file__).resolve().parents[2] / "dashboard" / "app.py")


@pytest.fixture
def cache(tmp_path, monkeypatch) -> FrontierStore:
    monkeypatch.setenv("FAIRENGINE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("FAIRENGINE_RUN_WAIT", "600")  # sweeps run in the pool; await them inline
    store = FrontierStore(tmp_path / "cache")
    train, test = load_dataset("german_credit").split()
    sweep("reweighing", train, test, {"strength": [0.0, 0.5, 1.0]}, store=store)
    return store


def open_compare(**params: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"dataset": "german_credit", **params})
    at.run()
    at.switch_page("views/compare.py").run()
    assert not at.exception
    return at


def test_shows_cached_frontier_and_point_detail(cache: FrontierStore) -> None:
    at = open_compare()
    assert not page_errors(at)
    assert len(at.get("plotly_chart")) == 2  # the frontier and the chosen point's groups
    points = at.selectbox(key="w.cmp_point")
    assert len(points.options) == 3
    assert at.selectbox(key="w.cmp_x").value == "error"
    assert at.selectbox(key="w.cmp_y").value == "dp_diff"
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels == [
        "Download the train and test row ids",
        "Download model file",
        "Download model card",
    ]
    assert at.query_params["point"] == points.value
    assert at.query_params["dataset"] == "german_credit"


def test_axes_split_and_selection_reproduce_from_url(cache: FrontierStore) -> None:
    at = open_compare()
    at.selectbox(key="w.cmp_y").set_value("eo_diff").run()
    at.radio(key="w.cmp_split").set_value("train").run()
    train, test = load_dataset("german_credit").split()
    ids = [p.point_id for p in cache.points(task_key(train, test))]
    other = next(i for i in ids if i != at.selectbox(key="w.cmp_point").value)
    at.selectbox(key="w.cmp_point").set_value(other).run()
    assert at.selectbox(key="w.cmp_point").value == other
    params = dict(at.query_params)
    assert params["y"] == "eo_diff" and params["split"] == "train"

    shared = open_compare(**{k: v for k, v in params.items() if k != "dataset"})
    assert shared.selectbox(key="w.cmp_y").value == "eo_diff"
    assert shared.radio(key="w.cmp_split").value == "train"
    assert shared.selectbox(key="w.cmp_point").value == at.selectbox(key="w.cmp_point").value


def test_compute_a_frontier_from_the_page(cache: FrontierStore) -> None:
    at = open_compare()
    at.selectbox(key="run_method").set_value("reweighing").run()
    at.text_input(key="run_values_reweighing_strength").set_value("0.25, 0.75").run()
    at.button(key="runner.sweep.compare").click().run()
    assert not at.exception and not page_errors(at)
    assert len(at.selectbox(key="w.cmp_point").options) == 5
    train, test = load_dataset("german_credit").split()
    assert len(cache.points(task_key(train, test), "reweighing")) == 5


def test_empty_cache_says_what_to_do(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("FAIRENGINE_CACHE", str(tmp_path / "empty"))
    at = open_compare()
    assert any("No frontier is cached" in i.value for i in at.info)


def test_axes_show_labels_and_methods_off_the_plane_get_a_note(cache: FrontierStore) -> None:
    train, test = load_dataset("german_credit").split()
    sweep("balanced_filtering", train, test, {"alpha": [0.1]}, store=cache)
    at = open_compare()
    x_axis = at.selectbox(key="w.cmp_x")
    assert x_axis.value == "error"  # the shared plane, not the first method's own axes
    assert "Error rate (lower is better)" in x_axis.options
    notes = " ".join(c.value for c in at.caption)
    assert "Balanced filtering" in notes and "does not predict the target" in notes
    assert len(at.selectbox(key="w.cmp_point").options) == 3  # no empty/"nan" entries

    at.selectbox(key="w.cmp_x").set_value("disclosivity").run()
    at.selectbox(key="w.cmp_y").set_value("imbalance").run()
    assert not at.exception
    notes = " ".join(c.value for c in at.caption)
    assert "Reweighing" in notes  # now reweighing is the one without points
    assert len(at.selectbox(key="w.cmp_point").options) == 1


def test_blank_plane_says_why(cache: FrontierStore) -> None:
    at = open_compare()
    at.multiselect(key="w.cmp_methods").set_value([]).run()
    assert not at.exception
    assert any("No method is selected" in w.value for w in at.warning)


def test_filter_keeps_a_method_just_swept(cache: FrontierStore) -> None:
    at = open_compare()
    assert at.multiselect(key="w.cmp_methods").value == ["reweighing"]
    at.selectbox(key="run_method").set_value("fairlearn_eg").run()
    at.selectbox(key="run_knob_fairlearn_eg").set_value("eps").run()
    at.text_input(key="run_values_fairlearn_eg_eps").set_value("0.05").run()
    at.slider(key="run_fixed.fairlearn_eg.max_iter").set_value(10).run()
    at.button(key="runner.sweep.compare").click().run()
    assert not at.exception and not page_errors(at)
    assert set(at.multiselect(key="w.cmp_methods").value) == {"reweighing", "fairlearn_eg"}
    assert len(at.selectbox(key="w.cmp_point").options) == 4


def test_link_made_from_an_upload_says_the_table_is_missing(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("FAIRENGINE_CACHE", str(tmp_path / "cache"))
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"name": "my_table", "data": "upload", "x": "error"})
    at.run()  # the Data page opens first here; a browser opening /compare shows it there
    assert any("uploaded table (my\\_table)" in w.value for w in at.warning)  # escaped name
    assert at.session_state["task"] is None  # not silently Adult
    at.switch_page("views/compare.py").run()
    assert not at.exception
    assert any("Data page first" in i.value for i in at.info)
