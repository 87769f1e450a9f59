"""The "Your model" panel asks which rows the outside model was trained on and scores it only on
the test rows it never saw; the engine's split is a download; a column holding the model's
predictions leaves every method's features, and frontiers fitted with it leave the plane."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest, app_test

from fairengine.data import load_dataset, split_ids
from fairengine.data.split import split_table
from fairengine.frontier import FrontierStore, sweep, task_key
from tests.dashboard.test_compare_outside import (
    APP,
    _add,
    _download,
    _errors,
    _groups,
    _KeptMedia,
    _outside_traces,
    _plane,
    _without_scores,
    open_compare,
    scored,
)

__all__ = ["scored"]  # the fixture, shared with the panel's other tests


def _column_model(at, trained: str = "Not said"):
    _add(at, "A column of the table")
    at.selectbox(key="cmp_out_column").set_value("model_score").run()
    at.radio(key="w.cmp_out_trained").set_value(trained).run()
    at.button(key="cmp_out_add").click().run()
    assert not at.exception
    return at


def _ids_file(at, rows) -> None:
    at.radio(key="w.cmp_out_trained").set_value("These ids (a file)").run()
    data = pd.DataFrame({"row": list(rows)}).to_csv(index=False).encode()
    at.file_uploader(key="cmp_out_trained_file").set_value(("ids.csv", data, "text/csv")).run()


def _plane_ids(at) -> set[str]:
    """The point ids drawn on the Compare plane."""
    ids = set()
    for trace in _plane(at)["data"]:
        for value in trace.get("customdata") or ():
            ids.add(value[0] if isinstance(value, list) else value)
    return {i for i in ids if isinstance(i, str)}


def test_the_prediction_column_leaves_the_methods_and_their_old_frontiers_the_plane(
    scored,
) -> None:
    task, store = scored
    stale = {p.point_id for p in store.points(task_key(*task.split()))}
    fresh = {p.point_id for p in store.points(task_key(*_without_scores(task).split()))}
    assert len(stale) == 3 and len(fresh) == 2 and not stale & fresh
    at = open_compare(task)
    assert _plane_ids(at) == stale  # before: fitted with model_score among the features
    _column_model(at)
    plane = at.session_state["task"]
    assert "model_score" not in plane.features
    assert plane.fingerprint == _without_scores(task).fingerprint
    assert at.session_state["sel.features"] == list(plane.features)  # the Data page keeps it
    assert _plane_ids(at) == fresh  # after: only points fitted without it, none of the stale
    notice = next(i.value for i in at.info if "no longer a feature" in i.value)
    assert "model\\_score" in notice and "The 3 point(s) of 1 method(s) fitted" in notice
    assert len(_outside_traces(at)) == 1
    assert any("is not a feature of any method" in c.value for c in at.caption)


def test_not_said_warns_and_ids_leave_out_the_test_rows_the_model_saw(scored) -> None:
    task, _ = scored
    n_test = len(task.split()[1].frame)
    at = _column_model(open_compare(task))
    warnings = [w.value for w in at.warning]
    assert any("Valid only if the model never saw" in w for w in warnings)  # the check
    assert _groups(at).loc["overall", "n"] == n_test
    # the model behind model_score was fitted on the first half of the rows
    first_half = range(len(task.frame) // 2)
    _ids_file(at, first_half)
    assert not at.exception and not _errors(at)
    _, test_ids = (part.frame.index for part in task.split())
    unseen = int((test_ids >= len(task.frame) // 2).sum())
    assert _groups(at).loc["overall", "n"] == unseen
    note = f"{n_test - unseen:,} of the {n_test:,} test rows are among the rows the model"
    assert any(note in c.value for c in at.caption)
    assert not any("Valid only if" in w.value for w in at.warning)
    assert len(_outside_traces(at)) == 1
    at.radio(key="w.cmp_out_trained").set_value("The engine's training rows").run()
    assert _groups(at).loc["overall", "n"] == n_test


def test_too_few_unseen_rows_are_refused_in_words(scored) -> None:
    task, _ = scored
    at = _column_model(open_compare(task))
    _ids_file(at, range(len(task.frame)))
    assert not at.exception
    errors = _errors(at)
    assert any("Only 0 of the 300 test rows" in e for e in errors), errors
    assert not _outside_traces(at)


def test_downloaded_split_ids_are_the_engines_and_read_back_as_its_training_rows(
    scored, monkeypatch
) -> None:
    monkeypatch.setattr(app_test, "MemoryMediaFileStorage", _KeptMedia)
    task, _ = scored
    at = _column_model(open_compare(task))
    plane = at.session_state["task"]
    data = _download(at, "Download the train and test row ids")
    table = pd.read_csv(io.BytesIO(data))
    pd.testing.assert_frame_equal(table, split_table(plane), check_dtype=False)
    assert split_table(plane).equals(split_table(task))  # the split ignores the features
    at.radio(key="w.cmp_out_trained").set_value("These ids (a file)").run()
    at.file_uploader(key="cmp_out_trained_file").set_value(("split.csv", data, "text/csv")).run()
    assert not at.exception and not _errors(at)
    assert _groups(at).loc["overall", "n"] == (table["part"] == "test").sum()
    held = [m.value for m in (*at.success, *at.caption) if "held on the test rows" in m.value]
    assert any("unseen rows" in m for m in held)  # the check "unseen_rows" held


@pytest.mark.parametrize("route", ["A model file"])
def test_question_is_asked_before_adding(scored, route) -> None:
    task, _ = scored
    at = open_compare(task)
    _add(at, route)
    assert at.radio(key="w.cmp_out_trained").value == "Not said"
    assert [o for o in at.radio(key="w.cmp_out_trained").options] == [
        "Not said",
        "None of this table's rows",
        "The engine's training rows",
        "These ids (a file)",
    ]


def test_an_uploaded_tables_id_column_names_the_rows(tmp_path, monkeypatch) -> None:
    """An upload with a customer id: the split download and the trained-on ids use it."""
    monkeypatch.setattr(app_test, "MemoryMediaFileStorage", _KeptMedia)
    monkeypatch.setenv("FAIRENGINE_CACHE", str(tmp_path / "cache"))
    frame = load_dataset("german_credit").frame.reset_index(drop=True)
    frame.insert(0, "customer", [f"K-{(i * 7919) % 100_000:05d}" for i in range(len(frame))])
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.radio(key="w.source").set_value("upload").run()
    upload = ("loans.csv", frame.to_csv(index=False).encode(), "text/csv")
    at.file_uploader[0].set_value(upload).run()
    at.selectbox(key="w.target").set_value("credit").run()
    at.multiselect(key="w.sensitive").set_value(["sex"]).run()
    task = at.session_state["task"]
    store = FrontierStore(tmp_path / "cache")
    sweep("reweighing", *task.split(), {"strength": [0.0, 1.0]}, store=store)
    at.switch_page("views/compare.py").run()
    assert not at.exception
    at.selectbox(key="cmp_split_ids_by").set_value("customer").run()
    table = pd.read_csv(io.BytesIO(_download(at, "Download the train and test row ids")))
    train_ids, test_ids = split_ids(task, id_values=frame["customer"])
    assert list(table.columns) == ["customer", "part"]
    assert list(table.loc[table["part"] == "test", "customer"]) == list(test_ids)

    _add(at, "A predictions file")
    preds = pd.DataFrame({"row": range(len(frame)), "p": np.linspace(0, 1, len(frame))})
    at.file_uploader(key="cmp_out_file").set_value(
        ("preds.csv", preds.to_csv(index=False).encode(), "text/csv")
    ).run()
    at.radio(key="w.cmp_out_trained").set_value("These ids (a file)").run()
    at.selectbox(key="cmp_out_trained_by").set_value("customer").run()
    seen = pd.DataFrame({"customer": frame["customer"][:500]}).to_csv(index=False).encode()
    at.file_uploader(key="cmp_out_trained_file").set_value(("seen.csv", seen, "text/csv")).run()
    at.button(key="cmp_out_add").click().run()
    assert not at.exception and not _errors(at)
    unseen = sum(i not in set(frame["customer"][:500]) for i in test_ids)
    assert _groups(at).loc["overall", "n"] == unseen < len(test_ids)
