"""The Compare page's reference group and τ under AppTest: they drive the ratio axes of the plane
(methods' points and outside models), the four-fifths verdicts in words, the group tables and
the report; every number is the metric's own definition with that reference."""

from __future__ import annotations

import base64
import re
from html import unescape

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest, app_test

from fairengine import metrics
from fairengine.audit.core import positional
from fairengine.export import load_model
from fairengine.frontier import task_key
from fairengine.textsafe import md_text
from tests.dashboard.boxes import page_errors
from tests.dashboard.test_compare_outside import (
    _add,
    _download,
    _groups,
    _KeptMedia,
    _outside_traces,
    _plane,
    _scored_task,
    _without_scores,
    open_compare,
)


@pytest.fixture
def scored(tmp_path, monkeypatch):
    """german_credit with a model's scores, its groups sex × age group (four: with two groups
    the worst folded ratio min(r, 1/r) is the same whichever is the reference), and a frontier
    fitted with the scores among the features and one without."""
    from fairengine.data.task import from_frame
    from fairengine.frontier import FrontierStore, sweep

    monkeypatch.setenv("FAIRENGINE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("FAIRENGINE_RUN_WAIT", "600")
    store = FrontierStore(tmp_path / "cache")
    frame = _scored_task().frame.drop(columns=["model_text"])
    task = from_frame(frame, target="credit", sensitive=["sex", "age_group"], positive_label="good")
    sweep("reweighing", *task.split(), {"strength": [0.0, 0.5, 1.0]}, store=store)
    sweep("reweighing", *_without_scores(task).split(), {"strength": [0.0, 1.0]}, store=store)
    return task, store


def _array(values) -> list:
    """A trace's coordinates: a list, or plotly's typed array ``{"dtype", "bdata"}``."""
    if isinstance(values, dict):
        return np.frombuffer(base64.b64decode(values["bdata"]), dtype=values["dtype"]).tolist()
    return list(values or ())


LARGEST, OTHER = "male & 25+", "female & 25+"


def _point_values(at: AppTest, axis: str = "y") -> dict[str, float]:
    """Point id -> its coordinate ``axis`` on the plane (the methods' markers)."""
    found = {}
    for trace in _plane(at)["data"]:
        for pid, value in zip(
            _array(trace.get("customdata")), _array(trace.get(axis)), strict=False
        ):
            found[pid[0] if isinstance(pid, list) else pid] = value
    return found


def _want(store, task, name: str, reference: str) -> dict[str, float]:
    """``name`` of every cached point on the test rows with ``reference``: the metric itself."""
    train, test = task.split()
    code = list(test.group_names).index(reference)
    out = {}
    for point in store.points(task_key(train, test)):
        pred = np.asarray(load_model(point.path).metric_predictions(test.X), dtype=float)
        out[point.point_id] = metrics.METRICS[name](test.y, pred, test.groups, reference=code)
    return out


def _verdicts(at: AppTest, label: str) -> list[tuple[float, str]]:
    """(value, "passes"/"fails") of metric ``label`` in each point's label of the picker."""
    found = []
    for option in at.selectbox(key="w.cmp_point").options:
        match = re.search(rf"{re.escape(label)} ([0-9.]+) \((passes|fails) τ = ", option)
        assert match, option
        found.append((float(match.group(1)), match.group(2)))
    return found


def test_reference_and_tau_drive_plane_verdicts_and_group_table(scored) -> None:
    task, store = scored
    at = open_compare(task)
    ref = at.selectbox(key="w.cmp_reference")
    assert ref.value == LARGEST and ref.options[0].startswith("sex, age_group = female & 25+ (")
    assert "the largest" in ref.options[2] and at.slider(key="w.cmp_tau").value == 0.8
    at.selectbox(key="w.cmp_y").set_value("fpr_ratio").run()
    assert not at.exception and not page_errors(at)
    to_male = _point_values(at)
    assert to_male == pytest.approx(_want(store, task, "fpr_ratio", LARGEST), abs=1e-9)

    at.selectbox(key="w.cmp_reference").set_value(OTHER).run()
    assert not at.exception and not page_errors(at)
    to_female = _point_values(at)
    assert to_female == pytest.approx(_want(store, task, "fpr_ratio", OTHER), abs=1e-9)
    assert to_female != pytest.approx(to_male)
    label = metrics.metric_label("fpr_ratio")
    verdicts = _verdicts(at, label)
    assert sorted(v for v, _ in verdicts) == pytest.approx(sorted(to_female.values()), abs=1e-4)
    assert all((word == "passes") == (v >= 0.8) for v, word in verdicts)
    rows = next(d.value for d in at.dataframe if {"metric", "train", "test"} <= set(d.value))
    row = rows[rows["metric"] == label].iloc[0]  # the selected point's metrics, to that group
    assert row["test"] == pytest.approx(to_female[at.selectbox(key="w.cmp_point").value])
    groups = _groups(at)  # the selected point's table: ratios to the chosen group
    assert groups.loc[OTHER, "fpr_ratio"] == 1.0 and groups.loc[OTHER, "ppv_ratio"] == 1.0
    ratio = groups.loc[LARGEST, "fpr"] / groups.loc[OTHER, "fpr"]
    assert groups.loc[LARGEST, "fpr_ratio"] == pytest.approx(ratio)
    assert bool(groups.loc[LARGEST, "fpr_pass"]) == (min(ratio, 1 / ratio) >= 0.8)
    words = next(t.value for t in at.table if "False positive rate ratio" in t.value.columns)
    words = words.set_index("group")["False positive rate ratio"]  # the table read as an audit
    assert words[md_text(OTHER)] == "1.000 pass"
    verdict = "pass" if min(ratio, 1 / ratio) >= 0.8 else "**fail**"
    assert words[md_text(LARGEST)] == f"{ratio:.3f} {verdict}"

    at.slider(key="w.cmp_tau").set_value(0.99).run()  # strict: nearly every ratio fails
    groups = _groups(at)
    assert bool(groups.loc[LARGEST, "fpr_pass"]) == (min(ratio, 1 / ratio) >= 0.99)
    assert all((word == "passes") == (v >= 0.99) for v, word in _verdicts(at, label))
    assert any("τ = 0.99" in c.value and md_text(OTHER) in c.value for c in at.caption)
    mine = to_female[at.selectbox(key="w.cmp_point").value]  # the selected point, in words
    said = f"The selected point {'passes' if mine >= 0.99 else 'fails'} τ = 0.99 on {label}"
    assert any(f"{said} ({mine:.4f})" in c.value for c in at.caption)


def test_outside_models_and_the_report_follow_the_reference(scored, monkeypatch) -> None:
    monkeypatch.setattr(app_test, "MemoryMediaFileStorage", _KeptMedia)
    task, _ = scored
    at = open_compare(task)
    _add(at, "A column of the table", "candidate")
    at.selectbox(key="cmp_out_column").set_value("model_score").run()
    at.button(key="cmp_out_add").click().run()
    at.selectbox(key="w.cmp_y").set_value("ppv_ratio").run()
    at.selectbox(key="w.cmp_reference").set_value(OTHER).run()
    at.slider(key="w.cmp_tau").set_value(0.9).run()
    assert not at.exception and not page_errors(at)
    plane = _without_scores(task)
    test = positional(plane).split()[1]
    scores = task.frame["model_score"].to_numpy()[test.frame.index]
    pred = (scores >= 0.5).astype(float)
    code = list(test.group_names).index(OTHER)
    want = metrics.METRICS["ppv_ratio"](test.y, pred, test.groups, reference=code)
    assert _outside_traces(at)[0]["y"][0] == pytest.approx(want, abs=1e-12)
    outside = _groups(at)  # its table (shown after the point's): ratios to OTHER at τ 0.9
    assert outside.loc[OTHER, "ppv_ratio"] == 1.0
    ratio = outside.loc[LARGEST, "ppv_ratio"]
    assert bool(outside.loc[LARGEST, "ppv_pass"]) == (min(ratio, 1 / ratio) >= 0.9)

    at.button(key="cmp_prepare_report").click().run()
    html = _download(at, "Download report").decode()
    text = " ".join(unescape(re.sub(r"<[^>]+>", " ", html.split("<body>")[1])).split())
    assert f"reference group {OTHER} (chosen for this comparison)" in text
    assert "τ = 0.90" in text and "between 0.90 and 1.11" in text
    assert "candidate" in text
