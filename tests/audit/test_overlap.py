"""An outside model is audited on the test rows it never saw: the engine's split as row ids, and
the audit's question "which rows was it trained on?" (unknown, none, the engine's training rows,
these ids), with overlapping test rows left out or the audit refused."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.tree import DecisionTreeClassifier

from fairengine import metrics
from fairengine.audit import audit, postprocess
from fairengine.audit.overlap import MIN_UNSEEN_ROWS, ids_from_table
from fairengine.data import DataError, FeatureEncoder, from_frame, load_dataset, split_ids
from fairengine.data.split import split_table


@pytest.fixture(scope="module", params=[("german_credit", 0), ("compas", 3)])
def case(request):
    """A task, the engine's split seed, and a memorising model trained on the table's first
    rows, as an outside model trained "on the first N rows, as in production" would be."""
    name, seed = request.param
    task = load_dataset(name)
    n_first = len(task.frame) // 2
    encoder = FeatureEncoder().fit(task.X)
    first = task.frame.index[:n_first]
    tree = DecisionTreeClassifier(random_state=0).fit(
        encoder.transform(task.X.loc[first]), task.y[:n_first]
    )
    scores = tree.predict_proba(encoder.transform(task.X))[:, 1]
    return task, seed, first, scores


def test_split_ids_are_the_rows_of_task_split(case) -> None:
    task, seed, _, _ = case
    train_ids, test_ids = split_ids(task, 0.3, seed)
    train, test = task.split(0.3, seed)
    np.testing.assert_array_equal(train_ids, train.frame.index)
    np.testing.assert_array_equal(test_ids, test.frame.index)
    assert set(train_ids).isdisjoint(test_ids)
    assert sorted([*train_ids, *test_ids]) == list(task.frame.index)
    # by an id column of the table: the same rows under their ids
    ids = pd.Series([f"P{i:05d}" for i in range(len(task.frame))], index=task.frame.index)
    by_id = split_ids(task, 0.3, seed, id_values=ids)
    np.testing.assert_array_equal(by_id[1], ids.loc[test.frame.index])
    table = split_table(task, 0.3, seed, id_values=ids.rename("pid"))
    assert list(table.columns) == ["pid", "part"]
    assert list(table.loc[table["part"] == "test", "pid"]) == list(by_id[1])
    assert ids_from_table(table, "pid") == list(by_id[0])  # a split file read back: its train rows


def test_an_overlapping_audit_is_scored_on_the_unseen_test_rows_only(case) -> None:
    task, seed, first, scores = case
    _, test_ids = split_ids(task, 0.3, seed)
    unseen = np.setdiff1d(test_ids, first)
    assert 0 < len(unseen) < len(test_ids)  # some test rows are among the first rows
    blind = audit(task, scores=scores, random_state=seed)
    fixed = audit(task, scores=scores, random_state=seed, trained_on=first)
    position = task.frame.index.get_indexer(unseen)
    truth = metrics.error(task.y[position], (scores[position] >= 0.5).astype(float))
    assert fixed.metrics["test"]["error"] == pytest.approx(truth)
    # the memorising model looks better than it is when scored on rows it learned
    assert blind.metrics["test"]["error"] < fixed.metrics["test"]["error"] - 0.05
    assert fixed.task_key == blind.task_key  # same plane as every method
    assert fixed.metrics["train"] == blind.metrics["train"]
    excluded = len(test_ids) - len(unseen)
    assert any(f"{excluded:,} of the {len(test_ids):,} test rows" in n for n in fixed.notes)
    check = next(c for c in fixed.checks if c.name == "unseen_rows")
    assert check.level == "ok" and check.numbers["unseen_rows"] == len(unseen)
    assert int(fixed.groups.loc["overall", "n"]) == len(unseen)
    warned = next(c for c in blind.checks if c.name == "unseen_rows")
    assert warned.level == "warn" and "Valid only if the model never saw" in warned.sentence


def test_trained_on_the_engines_rows_or_none_keeps_every_test_row(case) -> None:
    task, seed, _, scores = case
    blind = audit(task, scores=scores, random_state=seed)
    for answer in ("engine", "none"):
        result = audit(task, scores=scores, random_state=seed, trained_on=answer)
        assert result.metrics == blind.metrics and not result.notes
        assert next(c for c in result.checks if c.name == "unseen_rows").level == "ok"


def test_too_few_unseen_test_rows_are_refused_saying_how_many(case) -> None:
    task, seed, _, scores = case
    _, test_ids = split_ids(task, 0.3, seed)
    with pytest.raises(DataError, match=f"Only 0 of the {len(test_ids):,} test rows"):
        audit(task, scores=scores, random_state=seed, trained_on=task.frame.index)
    keep = test_ids[: MIN_UNSEEN_ROWS - 1]
    seen = np.setdiff1d(task.frame.index, keep)
    with pytest.raises(DataError, match=f"Only {MIN_UNSEEN_ROWS - 1} of"):
        audit(task, scores=scores, random_state=seed, trained_on=seen)
    with pytest.raises(DataError, match="None of the 2 training ids matches"):
        audit(task, scores=scores, random_state=seed, trained_on=["x1", "x2"])


def test_ids_of_an_id_column_and_ids_of_other_data() -> None:
    frame = load_dataset("german_credit").frame.reset_index(drop=True)
    frame.index = frame.index + 1000  # a table whose row labels are not positions
    ids = pd.Series([f"C{i}" for i in range(len(frame))], index=frame.index, name="cid")
    task = from_frame(frame, target="credit", sensitive="sex")
    scores = np.linspace(0.0, 1.0, len(frame))
    train_ids, test_ids = split_ids(task, id_values=ids)
    given = [*test_ids[:40], "other-1", "other-2"]
    result = audit(task, scores=scores, trained_on=given, id_values=ids)
    assert int(result.groups.loc["overall", "n"]) == len(test_ids) - 40
    assert any("2 of the 42 training ids match no row" in n for n in result.notes)
    engine = audit(task, scores=scores, trained_on=list(train_ids), id_values=ids)
    assert engine.metrics == audit(task, scores=scores, trained_on="engine").metrics


def test_postprocessing_keeps_the_unseen_rows(case) -> None:
    task, seed, first, scores = case
    fixed = audit(task, scores=scores, random_state=seed, trained_on=first)
    post = postprocess(fixed, task, split=(0.3, seed))
    assert int(post.groups.loc["overall", "n"]) == int(fixed.groups.loc["overall", "n"])
    assert fixed.notes[0] in post.notes


def test_ids_file_shapes() -> None:
    """One column, a named id column, row numbers read as floats beside a gap, a split file."""
    assert ids_from_table(pd.DataFrame({"x": ["a", "b"]})) == ["a", "b"]
    both = pd.DataFrame({"cid": ["a", "b"], "other": [1, 2]})
    assert ids_from_table(both, "cid") == ["a", "b"]
    with pytest.raises(DataError, match="name the id column"):
        ids_from_table(both)
    assert ids_from_table(pd.DataFrame({"row": [3.0, None, 5.0]})) == [3, 5]
    split = pd.DataFrame({"row": [0, 1, 2], "part": ["train", "test", " Train"]})
    assert ids_from_table(split) == [0, 2]
