"""Hostile names from a saved comparison (metric names, model names) on the Compare page, and a
hostile uploaded column name on the max-entropy page, reach Markdown only escaped (AppTest): no
string the frontend renders as Markdown holds the outside host unescaped, so no image, link or
autolink can form, and each name is shown as its own characters."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dashboard.components.state import TASK_KEY
from fairengine.audit import audit
from fairengine.audit.comparison import build_comparison
from fairengine.data import load_dataset
from fairengine.frontier import FrontierStore, sweep
from fairengine.textsafe import md_text
from tests.dashboard.test_hostile_text import assert_escaped
from tests.hostile_text import KITCHEN_SINK

APP = str(Path(__file__).resolve().parents[2] / "dashboard" / "app.py")
#: A metric name and a model name a crafted comparison could hold.
METRIC = "![m](https://example.com/m.png) [metric](https://example.com/l) www.example.com"
MODEL = "<img src=https://example.com/i.png> [model](https://example.com/x)"


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("FAIRENGINE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("FAIRENGINE_RUN_WAIT", "600")  # fits run inline, in the job pool
    monkeypatch.setenv("FAIRENGINE_CHEAP_SECONDS", "1e9")


def _hostile_comparison(task, store: FrontierStore, metric: str | None = None) -> bytes:
    """A comparison of ``task`` saved by the engine, its outside model renamed (and measured by
    ``metric`` instead of its fairness metric), as a crafted file could be."""
    rng = np.random.default_rng(0)
    scores = np.clip(0.35 * task.y + 0.65 * rng.random(len(task.y)), 0, 1)
    train, test = task.split()
    frontier = sweep("reweighing", train, test, {"strength": [0.0, 1.0]}, store=store)
    data = build_comparison(task, [frontier], [audit(task, scores=scores, name="m")], []).to_dict()
    outside = data["outside"][0]
    outside["name"] = MODEL
    if metric is not None:
        old = outside["fairness_metric"]
        outside["fairness_metric"] = metric
        for values in outside["metrics"].values():
            values[metric] = values.pop(old)
    return json.dumps(data).encode()


def _opened(task, raw: bytes) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    at.session_state[TASK_KEY] = task
    at.switch_page("views/compare.py").run()
    at.file_uploader(key="cmp_open_comparison").set_value(
        ("saved.json", raw, "application/json")
    ).run()
    assert not at.exception
    return at


def test_a_hostile_saved_comparison_shows_its_names_as_text(tmp_path) -> None:
    task = load_dataset("german_credit")
    at = _opened(task, _hostile_comparison(task, FrontierStore(tmp_path / "cache")))
    checked = assert_escaped(at, MODEL)
    assert any("Your model" in s for s in checked)  # its details are on the page


def test_a_saved_comparison_with_a_hostile_metric_name_is_refused_in_words(tmp_path) -> None:
    """A metric name this fairengine does not declare is refused at load, and the refusal
    quotes it only escaped."""
    task = load_dataset("german_credit")
    at = _opened(task, _hostile_comparison(task, FrontierStore(tmp_path / "cache"), METRIC))
    assert_escaped(at)
    assert any("does not know" in e.value for e in at.error)


def _hostile_upload() -> bytes:
    rows = 2000
    rng = np.random.default_rng(1)
    frame = pd.DataFrame(
        {
            KITCHEN_SINK: rng.choice(["a", "b", "c"], rows),
            "sex": rng.choice(["f", "m"], rows),
            "y": rng.choice([0, 1], rows),
        }
    )
    buffer = io.StringIO()
    frame.to_csv(buffer, index=False)
    return buffer.getvalue().encode()


def test_a_hostile_column_name_on_the_max_entropy_page_is_text() -> None:
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    at.radio(key="w.source").set_value("upload").run()
    at.file_uploader[0].set_value(("t.csv", _hostile_upload(), "text/csv")).run()
    at.selectbox(key="w.target").set_value("y").run()
    at.multiselect(key="w.sensitive").set_value(["sex"]).run()
    assert not at.exception
    at.switch_page("views/maxent.py").run()
    errors = [e.value for e in at.error if not e.value.startswith("**Check failed:**")]
    assert not at.exception and not errors, errors  # (a failed check on random labels is fine)
    captions = [c.value for c in at.caption if c.value.startswith("Domain")]
    assert captions and md_text(KITCHEN_SINK) in captions[0]  # the domain's columns
    assert_escaped(at, KITCHEN_SINK)
