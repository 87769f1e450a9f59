"""Compare & export starts full: "Sweep every method", and the outside-model and
open-comparison panels before any sweep (AppTest, private caches)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dashboard.components.knob_sweep import every_method_settings
from dashboard.components.state import TASK_KEY
from fairengine.data import load_dataset
from fairengine.frontier import FrontierStore, task_key
from fairengine.methods import get_method
from tests.dashboard.boxes import page_errors

APP = str(Path(__file__).resolve().parents[2] / "dashboard" / "app.py")


def _upload(rows: int = 1000):
    """german_credit as an uploaded table would be: not a bundled task the page opens on."""
    task = load_dataset("german_credit")
    return replace(task, frame=task.frame.iloc[:rows].reset_index(drop=True), name="my_upload")


@pytest.fixture
def empty_cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("FAIRENGINE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("FAIRENGINE_RUN_WAIT", "600")  # sweeps run in the pool; await them inline
    return tmp_path / "cache"


def _open(task=None, **params: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=600)
    at.query_params.update(params)
    at.run()
    if task is not None:
        at.session_state[TASK_KEY] = task
    at.switch_page("views/compare.py").run()
    assert not at.exception
    return at


def _expanders(at: AppTest) -> list[str]:
    return [e.label for e in at.expander]


@pytest.mark.parametrize("where", ["upload", "compas_race"])
def test_fresh_task_offers_every_method_and_the_outside_panels(empty_cache, where) -> None:
    at = _open(_upload()) if where == "upload" else _open(dataset="compas", sensitive="race")
    assert not page_errors(at)
    assert at.button(key="runner.sweep.compare_every").proto.label == "Sweep every method"
    labels = _expanders(at)
    assert any(label.startswith("Your model") for label in labels), labels
    assert "Open a saved comparison" in labels
    assert at.get("plotly_chart") == []  # nothing swept yet: no plane


def test_sweep_every_method_fills_the_plane(empty_cache, monkeypatch) -> None:
    monkeypatch.setenv("FAIRENGINE_DEMO", "1")  # a few points per method: CI-sized
    task = _upload(400)
    at = _open(task)
    at.button(key="runner.sweep.compare_every").click().run()
    assert not at.exception and not page_errors(at)
    train, test = task.split()
    store = FrontierStore(empty_cache)
    swept = {p.method for p in store.points(task_key(train, test))}
    offered = set(at.multiselect(key="w.cmp_methods").options)
    classifiers = {"reweighing", "fairlearn_eg", "threshold_optimizer", "balanced_filtering"}
    assert classifiers <= swept, swept
    assert offered == {get_method(m).title for m in swept}  # every swept frontier is offered
    assert set(at.multiselect(key="w.cmp_methods").value) == swept
    plans, skipped = every_method_settings(train, test)
    assert set(plans) == swept  # each method that can run on the task, at its default grid
    for name, settings in plans.items():
        assert len(store.points(task_key(train, test), name)) == len(settings)
    captions = " ".join(c.value for c in at.caption)
    assert all(title in captions for title in skipped)  # the others say why they were not
    assert len(at.get("plotly_chart")) == 2  # the plane and the chosen point's groups
