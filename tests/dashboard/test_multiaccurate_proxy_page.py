"""The Multiaccurate proxies page under AppTest, on a small table with a private cache."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "dashboard" / "app.py")


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("FAIRENGINE_CACHE", str(tmp_path / "cache"))


def test_page_shows_metrics_charts_and_download() -> None:
    at = AppTest.from_file(APP, default_timeout=240)
    at.query_params["dataset"] = "german_credit"
    at.run()
    at.switch_page("views/multiaccurate_proxy.py").run()
    assert not at.exception and not at.error
    assert len(at.get("plotly_chart")) == 2
    assert len(at.get("download_button")) == 1
    labels = [m.label for m in at.metric]
    assert "True-group violation (test)" in labels
    at.selectbox(key="w.map.proxy").set_value("thresholded").run()
    assert not at.exception and not at.error
