"""The Max-entropy debiasing page under AppTest, on german_credit with a private cache."""

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


def open_page(dataset: str = "german_credit") -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params["dataset"] = dataset
    at.run()
    at.switch_page("views/maxent.py").run()
    assert not at.exception
    return at


def test_page_shows_charts_metrics_and_downloads() -> None:
    at = open_page()
    assert not page_errors(at)
    assert evidence_shown(at)  # the held-out checks and the baselines, at the top
    assert len(at.get("plotly_chart")) == 3  # rates, group outcomes, marginals
    assert len(at.get("download_button")) == 2
    # bytes, not deferred callables: Streamlit drops a deferred download's file after two script
    # runs anywhere on the server (a 404 on a busy server)
    assert not any(b.proto.HasField("deferred_file_id") for b in at.get("download_button"))
    labels = [m.label for m in at.metric]
    assert "Classifier statistical rate (soft), paper protocol" in labels
    assert "Classifier statistical rate (hard), paper protocol" in labels
    assert "KL to the data" in labels
    # the headline is the model the checks judge and the file exports, labelled as such
    assert labels[0] == "Accuracy (test, exported model)"
    assert labels[1].startswith("Statistical rate") and labels[1].endswith("exported model)")
    # no value is cut: three columns at most per row carry "mean ± sd"
    assert all("…" not in m.value for m in at.metric)
    assert at.selectbox(key="w.maxent.domain").value == "paper"
    assert at.slider(key="w.maxent.n_sample_sets").value == 5
    assert at.slider(key="w.maxent.C").value == 0.5


def test_knobs_rerun_and_custom_share_appears() -> None:
    at = open_page()
    assert not any(s.key == "w.maxent.protected_share" for s in at.slider)
    at.selectbox(key="w.maxent.theta").set_value("custom").run()
    at.slider(key="w.maxent.C").set_value(0.8).run()
    assert not at.exception and not page_errors(at)
    assert at.slider(key="w.maxent.protected_share").value == 0.5


def test_sweep_over_c_draws_the_frontier() -> None:
    at = open_page()
    at.slider(key="w.maxent.n_samples").set_value(1000).run()
    at.button(key="runner.sweep.maxent").click().run()
    assert not at.exception and not page_errors(at)
    assert len(at.get("plotly_chart")) == 4


def test_wide_balanced_fit_shows_the_far_short_warning() -> None:
    at = open_page("adult")
    at.selectbox(key="w.maxent.domain").set_value("all").run()
    at.selectbox(key="w.maxent.theta").set_value("balanced").run()
    assert not at.exception and not at.error
    warnings = " ".join(w.value for w in at.warning)
    assert "correlate with the protected attribute" in warnings and "smaller domain" in warnings


def test_unsupported_task_gets_a_readable_message() -> None:
    at = open_page("compas")  # race: six groups
    assert at.error and "exactly two groups" in at.error[0].value
    assert len(at.get("plotly_chart")) == 0


def test_add_to_comparison_puts_the_run_on_the_compare_page() -> None:
    at = open_page()
    at.button(key="maxent_add").click().run()
    assert not at.exception
    assert any("Added to the comparison" in s.value for s in at.success)
    at.switch_page("views/compare.py").run()
    assert not at.exception and not page_errors(at)
    assert at.multiselect(key="w.cmp_methods").value == ["maxent"]
    assert at.selectbox(key="w.cmp_x").value == "error"  # the downstream classifier's plane
    points = at.selectbox(key="w.cmp_point")
    assert len(points.options) == 1
