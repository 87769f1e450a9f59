"""The Fair regression page under AppTest, on law school with a private cache."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.dashboard.boxes import evidence_shown, page_errors

APP = str(Path(__file__).resolve().parents[2] / "dashboard" / "app.py")


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("FAIRENGINE_CACHE", str(tmp_path / "cache"))
    # fits run in the shared worker pool; wait for them inline and redo every change live
    monkeypatch.setenv("FAIRENGINE_RUN_WAIT", "600")
    monkeypatch.setenv("FAIRENGINE_CHEAP_SECONDS", "1e9")


def open_page(dataset: str = "law_school") -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params["dataset"] = dataset
    at.run()
    at.switch_page("views/fair_regression.py").run()
    assert not at.exception
    return at


def test_page_shows_charts_metrics_and_download() -> None:
    at = open_page()
    assert not page_errors(at)
    assert evidence_shown(at)  # the held-out checks and the baselines, at the top
    assert len(at.get("plotly_chart")) == 3  # frontier, CDFs, group losses
    assert len(at.get("download_button")) == 1
    # bytes, not deferred callables: Streamlit drops a deferred download's file after two script
    # runs anywhere on the server (a 404 on a busy server)
    assert not any(b.proto.HasField("deferred_file_id") for b in at.get("download_button"))
    labels = [m.label for m in at.metric]
    assert "SP disparity (test)" in labels and "Worst group loss, scaled (test)" in labels
    assert any(label.startswith("MSE in") for label in labels)  # the shared evaluation


def test_knobs_rerun_and_sweep_draws_the_frontier() -> None:
    at = open_page()
    at.selectbox(key="w.fr.constraint").set_value("bounded_group_loss").run()
    assert not at.exception and not page_errors(at)
    at.selectbox(key="w.fr.constraint").set_value("statistical_parity").run()
    at.slider(key="w.fr.n_levels").set_value(20).run()
    at.button(key="runner.sweep.fair_regression").click().run()
    assert not at.exception and not page_errors(at)
    assert len(at.get("plotly_chart")) == 3


def test_classification_task_gets_a_readable_message() -> None:
    at = open_page("german_credit")
    assert at.error and "real-valued target" in at.error[0].value.replace("\\", "")
    assert len(at.get("plotly_chart")) == 0
