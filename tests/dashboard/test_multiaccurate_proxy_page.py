"""The Multiaccurate proxies page under AppTest, on a small table with a private cache."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.dashboard.boxes import evidence_shown, page_errors, page_warnings

APP = str(Path(__file__).resolve().parents[2] / "dashboard" / "app.py")


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("FAIRENGINE_CACHE", str(tmp_path / "cache"))
    # fits run in the shared worker pool; wait for them inline and redo every change live
    monkeypatch.setenv("FAIRENGINE_RUN_WAIT", "600")
    monkeypatch.setenv("FAIRENGINE_CHEAP_SECONDS", "1e9")


def _plain(markdown: str) -> str:
    """A message as people read it: the page escapes every Markdown character of the engine's
    words (fairengine.textsafe.md_text)."""
    return markdown.replace("\\", "")


def test_page_shows_metrics_charts_sweep_and_download() -> None:
    at = AppTest.from_file(APP, default_timeout=240)
    at.query_params["dataset"] = "german_credit"
    at.run()
    at.switch_page("views/multiaccurate_proxy.py").run()
    assert not at.exception and not page_errors(at)
    # audit heatmap, group gaps, Algorithm-4 trace, frontier (current run only), quality
    assert len(at.get("plotly_chart")) == 5
    assert evidence_shown(at)  # the held-out checks and the baselines, at the top
    assert len(at.get("download_button")) == 1
    # bytes, not deferred callables: Streamlit drops a deferred download's file after two script
    # runs anywhere on the server (a 404 on a busy server)
    assert not any(b.proto.HasField("deferred_file_id") for b in at.get("download_button"))
    labels = [m.label for m in at.metric]
    assert "True-group violation (test)" in labels
    # the two audits are separate metrics, and the proxy learner's status is visible
    assert "Multiaccuracy violation, in-sample (proxy rows)" in labels
    assert "Multiaccuracy violation, held-out (test rows)" in labels
    # the default α (the lowest the linear proxy reaches on these rows) is certified; on these
    # rows no round of the game beats least squares on the kept-out rows, so α has a single
    # value: no slider, a note giving the measured reasons (the LP floor, the kept-out rows),
    # and the least-squares start (round 1) is served
    status = [_plain(c.value) for c in at.caption if "Algorithm 4 certifies" in _plain(c.value)]
    assert status and "the lowest it reaches on these rows (α = 0 asks for that)" in status[0]
    assert "at round 1:" in status[0] and "LP floor" in status[0]
    assert "α acts on the tree class" in status[0]
    assert not [s for s in at.slider if str(s.key).startswith("w.map.alpha.")]
    assert any("a single value on these rows" in c.value for c in at.caption)
    # groups are named by column and value, never "not <value>"
    groups = [_plain(c.value) for c in at.caption if _plain(c.value).startswith("Groups: ")]
    assert groups and "sex = " in groups[0] and "not " not in groups[0].split(".")[0]
    at.button(key="runner.sweep.multiaccurate_proxy").click().run()
    assert not at.exception and not page_errors(at)
    assert len(at.get("plotly_chart")) == 5
    at.selectbox(key="w.map.proxy").set_value("thresholded").run()
    assert not at.exception and not page_errors(at)
    assert len(at.get("plotly_chart")) == 4  # no algorithm trace for a baseline proxy
    assert not page_warnings(at)  # no game, no status
    at.selectbox(key="w.map.proxy").set_value("multiaccurate").run()
    assert not at.exception and not page_errors(at)
    assert not [s for s in at.slider if str(s.key).startswith("w.map.alpha.")]
    # the spread across row splits: a button, then mean ± sd per proxy
    at.button(key="runner.sweep.multiaccurate_proxy_spread").click().run()
    assert not at.exception and not page_errors(at)
    assert len(at.get("plotly_chart")) == 6


def test_tree_proxy_has_the_alpha_control_and_its_held_out_curve() -> None:
    """On the tree proxy α acts: a slider, and a sweep along α drawing the in-sample and the
    held-out multiaccuracy side by side."""
    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params["dataset"] = "german_credit"
    at.run()
    at.switch_page("views/multiaccurate_proxy.py").run()
    at.selectbox(key="w.map.proxy").set_value("multiaccurate_tree").run()
    assert not at.exception and not page_errors(at)
    assert [s for s in at.slider if str(s.key).startswith("w.map.alpha.")]
    charts = len(at.get("plotly_chart"))
    at.button(key="runner.sweep.multiaccurate_proxy_alpha").click().run()
    assert not at.exception and not page_errors(at)
    assert len(at.get("plotly_chart")) == charts + 1
    figure = at.get("plotly_chart")[-1].proto.spec
    assert "held-out (test rows)" in figure and "in-sample (proxy rows)" in figure
