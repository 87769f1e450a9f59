"""The Compare page's "Your model" panel, report and saved comparisons under AppTest: an outside
model added by each route becomes a labelled point with a group table, checks and a cost table;
bad values give an error in words; the report and the comparison file carry what is shown."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.testing.v1 import AppTest, app_test

from dashboard.components.state import TASK_KEY
from fairengine.audit.comparison import load_comparison
from fairengine.audit.sources import from_column
from fairengine.data import load_dataset
from fairengine.frontier import FrontierStore, sweep, task_key
from fairengine.textsafe import plot_text
from tests.dashboard.boxes import page_errors

APP = str(Path(__file__).resolve().parents[2] / "dashboard" / "app.py")
HOSTILE = "<b>prod</b> *model* [x](javascript:alert(1))"


def _scored_task():
    """german_credit with a real model's scores (fitted on the numeric columns of the first
    half of the rows) and a text column that is no prediction at all."""
    task = load_dataset("german_credit")
    frame = task.frame.copy()
    numeric = frame[[c for c in task.features if frame[c].dtype.kind in "if"]]
    y = task.y
    half = len(frame) // 2
    model = LogisticRegression(max_iter=1000).fit(numeric.iloc[:half], y[:half])
    frame["model_score"] = model.predict_proba(numeric)[:, 1]
    frame["model_text"] = np.where(frame["model_score"] > 0.5, "yes please", "no thanks")
    features = (*task.features, "model_score", "model_text")
    return replace(task, frame=frame, features=features, name="scored_credit")


def _without_scores(task):
    """The task once its ``model_score`` column holds the outside model: no method's feature."""
    return from_column(task, "model_score").task


@pytest.fixture
def scored(tmp_path, monkeypatch):
    """The scored task with a frontier fitted with ``model_score`` among the features (three
    points) and one fitted without it (two points)."""
    monkeypatch.setenv("FAIRENGINE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("FAIRENGINE_RUN_WAIT", "600")  # files are read in the pool: await inline
    store = FrontierStore(tmp_path / "cache")
    task = _scored_task()
    train, test = task.split()
    sweep("reweighing", train, test, {"strength": [0.0, 0.5, 1.0]}, store=store)
    sweep("reweighing", *_without_scores(task).split(), {"strength": [0.0, 1.0]}, store=store)
    return task, store


class _KeptMedia(MemoryMediaFileStorage):
    """AppTest's media storage, keeping every file so a test can read a download's bytes."""

    files: dict[str, bytes] = {}

    def load_and_get_id(self, *args, **kwargs) -> str:
        file_id = super().load_and_get_id(*args, **kwargs)
        _KeptMedia.files[file_id] = self._files_by_id[file_id].content
        return file_id


def _download(at: AppTest, label: str) -> bytes:
    """The bytes the download button ``label`` hands the browser."""
    button = next(b for b in at.get("download_button") if b.proto.label == label)
    return _KeptMedia.files[Path(button.proto.url).stem]


def open_compare(task) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.session_state[TASK_KEY] = task
    at.switch_page("views/compare.py").run()
    assert not at.exception
    return at


def _plane(at: AppTest) -> dict:
    chart = next(c for c in at.get("plotly_chart") if c.proto.id and "cmp_chart" in c.proto.id)
    return json.loads(chart.proto.spec)


def _outside_traces(at: AppTest) -> list[dict]:
    return [t for t in _plane(at)["data"] if str(t.get("name", "")).startswith("your model")]


def _add(at: AppTest, route: str, name: str = "my model") -> AppTest:
    at.text_input(key="cmp_out_name").set_value(name)
    at.radio(key="cmp_out_route").set_value(route).run()
    return at


def _frame(at: AppTest, columns: set[str]) -> pd.DataFrame | None:
    """The last table on the page with all of ``columns``."""
    found = [d.value for d in at.dataframe if columns <= set(d.value.columns)]
    return found[-1] if found else None


def _groups(at: AppTest) -> pd.DataFrame:
    found = _frame(at, {"accuracy", "accuracy_low", "accuracy_high", "selection_rate_low"})
    assert found is not None
    return found


def _cost(at: AppTest) -> pd.DataFrame | None:
    return _frame(at, {"method", "point", "knobs", "checks"})


def _errors(at: AppTest) -> list[str]:
    """The page's errors, leaving out failed held-out checks (results, not errors)."""
    return [e.value for e in at.error if not e.value.startswith("**Check failed:**")]


def test_column_of_scores_becomes_a_point_with_groups_checks_and_cost(scored) -> None:
    task, _ = scored
    at = open_compare(task)
    _add(at, "A column of the table", HOSTILE)
    at.selectbox(key="cmp_out_column").set_value("model_score").run()
    at.button(key="cmp_out_add").click().run()
    assert not at.exception and not page_errors(at)
    traces = _outside_traces(at)
    assert len(traces) == 1
    label = traces[0]["text"][0]
    assert "<b>" not in label and "prod" in label  # the name is drawn as text, not markup
    assert at.slider(key="cmp_out_threshold_1").value == 0.5  # scores: a threshold to pick
    groups = _groups(at)
    assert set(groups.index) == {*task.group_names, "overall"}
    assert groups.loc["overall", "n"] == len(task.split()[1].frame)  # the methods' test rows
    assert (groups["accuracy_low"] <= groups["accuracy"]).all()
    assert (groups["accuracy"] <= groups["accuracy_high"]).all()
    assert any("check" in (m.value or "").lower() for m in [*at.success, *at.warning, *at.caption])
    assert any("cmp_out_curve" in (c.proto.id or "") for c in at.get("plotly_chart"))
    x0, y0 = traces[0]["x"][0], traces[0]["y"][0]
    at.slider(key="cmp_out_threshold_1").set_value(0.9).run()  # few accepted: a new point
    moved = _outside_traces(at)[0]
    assert (moved["x"][0], moved["y"][0]) != (x0, y0)


def test_cost_table_lists_fairer_points_only(scored) -> None:
    task, _ = scored
    at = open_compare(task)
    _add(at, "A column of the table")
    at.selectbox(key="cmp_out_column").set_value("model_score").run()
    at.button(key="cmp_out_add").click().run()
    trace = _outside_traces(at)[0]
    fairness_here = trace["y"][0]  # the default plane: error × demographic parity difference
    cost = _cost(at)
    if cost is not None:
        fair_col = next(c for c in cost.columns if c.endswith(" gain"))
        assert (cost[fair_col] > 0).all()
        assert (cost[fair_col.removesuffix(" gain")] < fairness_here).all()
    else:
        assert any("No cached point" in i.value for i in at.info)


def test_text_column_is_an_error_in_words(scored) -> None:
    task, _ = scored
    at = open_compare(task)
    _add(at, "A column of the table")
    at.selectbox(key="cmp_out_column").set_value("model_text").run()
    at.button(key="cmp_out_add").click().run()
    assert not at.exception
    errors = _errors(at)
    assert errors and "could not be added" in errors[0]
    assert "Traceback" not in errors[0] and "error id" not in errors[0]
    assert not _outside_traces(at)


def _predictions_csv(task, rows: slice) -> bytes:
    scores = task.frame["model_score"].to_numpy()[rows]
    ids = np.arange(len(task.frame))[rows]
    return pd.DataFrame({"row": ids, "p": scores}).to_csv(index=False).encode()


def test_predictions_file_keyed_by_row_number(scored) -> None:
    task, _ = scored
    at = open_compare(task)
    _add(at, "A predictions file", "from file")
    at.file_uploader(key="cmp_out_file").set_value(
        ("preds.csv", _predictions_csv(task, slice(None)), "text/csv")
    ).run()
    at.selectbox(key="cmp_out_id").set_value("row").run()
    at.button(key="cmp_out_add").click().run()
    assert not at.exception and not _errors(at)
    assert len(_outside_traces(at)) == 1
    assert set(_groups(at).index) == {*task.group_names, "overall"}


def test_predictions_file_with_missing_rows_is_an_error_in_words(scored) -> None:
    task, _ = scored
    at = open_compare(task)
    _add(at, "A predictions file")
    at.file_uploader(key="cmp_out_file").set_value(
        ("short.csv", _predictions_csv(task, slice(0, 700)), "text/csv")
    ).run()
    at.selectbox(key="cmp_out_id").set_value("row").run()
    at.button(key="cmp_out_add").click().run()
    assert not at.exception
    errors = _errors(at)
    assert errors and "300 row" in errors[0] and "no prediction" in errors[0]
    assert not _outside_traces(at)


def test_model_file_route_and_a_non_model_file(scored) -> None:
    task, store = scored
    train, test = task.split()
    point = store.points(task_key(train, test))[-1]
    at = open_compare(task)
    _add(at, "A model file", "fairengine file")
    at.file_uploader(key="cmp_out_model").set_value(
        ("point.fairmodel", point.path.read_bytes(), "application/zip")
    ).run()
    at.button(key="cmp_out_add").click().run()
    assert not at.exception and not _errors(at)
    trace = _outside_traces(at)[0]
    # the same model as the cached point: the same place on the plane
    assert trace["x"][0] == pytest.approx(point.metrics["test"]["error"])
    assert trace["y"][0] == pytest.approx(point.metrics["test"]["dp_diff"])
    at.file_uploader(key="cmp_out_model").set_value(
        ("model.skops", b"\x80\x04pickled, not a model", "application/octet-stream")
    ).run()
    at.button(key="cmp_out_add").click().run()
    assert not at.exception
    assert any("never loaded" in e for e in _errors(at))


def _skops_pipeline(task) -> bytes:
    """A scikit-learn pipeline (scaling, one-hot encoding, logistic regression) fitted on a
    DataFrame of the table's columns and saved with skops."""
    import skops.io as sio
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    numeric, text = ["duration_months", "credit_amount", "age"], ["checking_status", "savings"]
    prepare = ColumnTransformer(
        [("num", StandardScaler(), numeric), ("cat", OneHotEncoder(handle_unknown="ignore"), text)]
    )
    pipeline = Pipeline([("prepare", prepare), ("model", LogisticRegression(max_iter=1000))])
    pipeline.fit(task.frame[numeric + text], task.frame[task.target])
    return sio.dumps(pipeline)


def test_skops_pipeline_route_scores_at_a_threshold(scored) -> None:
    task, _ = scored
    at = open_compare(task)
    _add(at, "A model file", "pipeline")
    at.file_uploader(key="cmp_out_model").set_value(
        ("pipeline.skops", _skops_pipeline(task), "application/zip")
    ).run()
    at.button(key="cmp_out_add").click().run()
    assert not at.exception and not _errors(at)
    assert len(_outside_traces(at)) == 1
    assert at.slider(key="cmp_out_threshold_1").value == 0.5  # a classifier's scores
    assert set(_groups(at).index) == {*task.group_names, "overall"}


def _report(at: AppTest) -> tuple[str, bytes]:
    at.button(key="cmp_prepare_report").click().run()
    assert not at.exception and not _errors(at)
    assert len(at.get("download_button")) == 5  # split ids, model, card, report, comparison
    return _download(at, "Download report").decode(), _download(at, "Download comparison")


def test_report_holds_plane_pins_and_escaped_name(scored, monkeypatch) -> None:
    monkeypatch.setattr(app_test, "MemoryMediaFileStorage", _KeptMedia)
    task, _ = scored
    at = open_compare(task)
    _add(at, "A column of the table", HOSTILE)
    at.selectbox(key="cmp_out_column").set_value("model_score").run()
    at.button(key="cmp_out_add").click().run()
    html, _ = _report(at)
    assert 'id="plane"' in html or "id='plane'" in html
    assert "&lt;b&gt;prod&lt;/b&gt;" in html and "<b>prod</b>" not in html
    assert "outside: " in html  # the outside model is a trace of the plane
    selected = at.selectbox(key="w.cmp_point").value
    assert selected in html
    assert "http://" not in html.split("<body>")[1].split("<script")[0]


def test_comparison_round_trip_restores_outside_model_and_pins(scored, monkeypatch) -> None:
    monkeypatch.setattr(app_test, "MemoryMediaFileStorage", _KeptMedia)
    task, store = scored
    plane = _without_scores(task)  # the plane once the column holds the model
    train, test = plane.split()
    ids = [p.point_id for p in store.points(task_key(train, test))]
    at = open_compare(task)
    _add(at, "A column of the table", "shared model")
    at.selectbox(key="cmp_out_column").set_value("model_score").run()
    at.button(key="cmp_out_add").click().run()
    at.multiselect(key="cmp_pinned").set_value(ids[:2]).run()
    _, data = _report(at)
    saved = load_comparison(data, train=train, test=test)
    assert {p["id"] for p in saved.pins} >= {*ids[:2], "shared model"}
    assert [a.name for a in saved.audits()] == ["shared model"]

    fresh = open_compare(plane)
    fresh.file_uploader(key="cmp_open_comparison").set_value(
        ("shared.json", data, "application/json")
    ).run()
    assert not fresh.exception and not _errors(fresh)
    assert [t["text"][0] for t in _outside_traces(fresh)] == ["shared model"]
    assert set(fresh.multiselect(key="cmp_pinned").value) >= set(ids[:2])

    plain = load_dataset("german_credit")  # the same rows without the model's columns
    sweep("reweighing", *plain.split(), {"strength": [0.0]}, store=store)
    other = open_compare(plain)
    other.file_uploader(key="cmp_open_comparison").set_value(
        ("shared.json", data, "application/json")
    ).run()
    assert not other.exception
    assert any("saved for other data" in e for e in _errors(other))
    broken = open_compare(plane)
    broken.file_uploader(key="cmp_open_comparison").set_value(
        ("broken.json", b'{"format": "fairengine-comparison", "points": 3}', "application/json")
    ).run()
    assert not broken.exception
    assert any("cannot be opened" in e for e in _errors(broken))


def test_scores_can_be_post_processed_by_threshold_optimizer(scored) -> None:
    """Post-processing on the plane: ThresholdOptimizer on the outside model's scores is a
    second labelled point, said to need the sensitive attribute at prediction time, and it
    narrows the training rows' gap it equalizes."""
    task, _ = scored
    at = open_compare(task)
    _add(at, "A column of the table")
    at.selectbox(key="cmp_out_column").set_value("model_score").run()
    at.button(key="cmp_out_add").click().run()
    assert len(_outside_traces(at)) == 1
    at.checkbox(key="cmp_out_post").check().run()
    assert not at.exception and not page_errors(at)
    traces = _outside_traces(at)
    assert len(traces) == 2
    post = traces[1]
    assert "ThresholdOptimizer" in post["name"] and "my model" in post["name"]
    assert any("sensitive attribute at prediction time" in c.value for c in at.caption)
    # the default plane's y is the demographic parity difference on the test rows
    print("outside", traces[0]["x"][0], traces[0]["y"][0], "post", post["x"][0], post["y"][0])
    assert post["y"][0] < traces[0]["y"][0]
    at.selectbox(key="cmp_out_post_constraint").set_value("equalized_odds").run()
    assert "(equalized odds)" in _outside_traces(at)[1]["name"]


def test_an_outside_model_before_any_sweep_shows_its_audit(tmp_path, monkeypatch) -> None:
    """On a task with nothing swept, "Your model" audits a column: its group table shows."""
    monkeypatch.setenv("FAIRENGINE_CACHE", str(tmp_path / "empty"))
    task = _scored_task()
    at = open_compare(task)
    assert at.get("plotly_chart") == []  # no frontier yet
    _add(at, "A column of the table", "candidate")
    at.selectbox(key="cmp_out_column").set_value("model_score").run()
    at.button(key="cmp_out_add").click().run()
    assert not at.exception and not _errors(at)
    groups = _groups(at)
    assert set(groups.index) == {*task.group_names, "overall"}
    assert groups.loc["overall", "n"] == len(task.split()[1].frame)


def test_several_models_added_renamed_removed_on_one_plane_and_in_the_comparison(
    scored, monkeypatch
) -> None:
    """A candidate (a column of scores) beside the model in production (a predictions file):
    both drawn with their own marker, a repeated name suffixed, renamed, one removed; the
    downloaded comparison and report hold every model on the plane."""
    monkeypatch.setattr(app_test, "MemoryMediaFileStorage", _KeptMedia)
    task, _ = scored
    at = open_compare(task)
    _add(at, "A column of the table", "candidate")
    at.selectbox(key="cmp_out_column").set_value("model_score").run()
    at.button(key="cmp_out_add").click().run()
    production = (task.frame["model_score"] >= 0.7).astype(int)  # a stricter model: 0/1
    table = pd.DataFrame({"row": np.arange(len(production)), "p": production})
    preds = ("preds.csv", table.to_csv(index=False).encode(), "text/csv")
    for name in ("candidate", "spare"):
        _add(at, "A predictions file", name)
        at.file_uploader(key="cmp_out_file").set_value(preds).run()
        at.selectbox(key="cmp_out_id").set_value("row").run()
        at.button(key="cmp_out_add").click().run()
        assert not at.exception and not _errors(at)
    assert [t["text"][0] for t in _outside_traces(at)] == ["candidate", "candidate (2)", "spare"]
    at.text_input(key="cmp_out_rename_2").set_value(HOSTILE).run()
    at.button(key="cmp_out_remove_3").click().run()
    assert not at.exception and not _errors(at)
    traces = _outside_traces(at)
    assert [t["text"][0] for t in traces] == ["candidate", plot_text(HOSTILE)]
    assert traces[0]["marker"]["symbol"] != traces[1]["marker"]["symbol"]
    assert (traces[0]["x"][0], traces[0]["y"][0]) != (traces[1]["x"][0], traces[1]["y"][0])
    at.selectbox(key="cmp_out_details").set_value(HOSTILE).run()
    details = [h.value for h in at.subheader if h.value.startswith("Your model:")]
    assert len(details) == 1 and "prod" in details[0] and "candidate" not in details[0]
    html, data = _report(at)
    saved = json.loads(data)
    assert [o["name"] for o in saved["outside"]] == ["candidate", HOSTILE]
    assert [o["kind"] for o in saved["outside"]] == ["scores", "predictions"]
    assert "&lt;b&gt;prod&lt;/b&gt;" in html and "<b>prod</b>" not in html
    assert "candidate" in html
