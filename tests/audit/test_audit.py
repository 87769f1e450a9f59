"""Auditing an outside model: the three routes, the shared evaluation on the methods' test rows,
the checks, the errors in words, post-processing and the cost table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairengine import metrics
from fairengine.audit import (
    audit,
    cost_of_fairness,
    from_column,
    from_file,
    from_model_file,
    postprocess,
)
from fairengine.data import DataError, from_frame, load_dataset
from fairengine.frontier import sweep, task_key


@pytest.fixture(scope="module")
def task():
    return load_dataset("german_credit")


@pytest.fixture(scope="module")
def pipeline(task):
    """A scikit-learn pipeline trained on the first 400 rows (raw columns, sensitive included)."""
    from sklearn.compose import make_column_transformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    X = task.frame.drop(columns=[task.target])
    numeric = list(X.select_dtypes("number").columns)
    text = [c for c in X.columns if c not in numeric]
    model = make_pipeline(
        make_column_transformer(
            (OneHotEncoder(handle_unknown="ignore"), text), (StandardScaler(), numeric)
        ),
        LogisticRegression(max_iter=500),
    )
    return model.fit(X.iloc[:400], task.frame[task.target].iloc[:400])


@pytest.fixture(scope="module")
def skops_file(pipeline, tmp_path_factory):
    import skops.io as sio

    path = tmp_path_factory.mktemp("models") / "pipeline.skops"
    sio.dump(pipeline, path)
    return path


def _scores(pipeline, task) -> np.ndarray:
    X = task.frame.drop(columns=[task.target])
    return pipeline.predict_proba(X)[:, list(pipeline.classes_).index("good")]


def test_scores_are_scored_on_the_methods_test_rows(task, pipeline) -> None:
    scores = _scores(pipeline, task)
    result = audit(task, scores=scores, threshold=0.6, name="bank model")
    train, test = task.split()  # the split every method's run uses
    pred = (scores[test.frame.index] >= 0.6).astype(float)
    assert result.task_key == task_key(train, test)
    assert result.metrics["test"]["error"] == pytest.approx(metrics.error(test.y, pred))
    assert result.metrics["test"]["dp_diff"] == pytest.approx(
        metrics.dp_diff(test.y, pred, test.groups)
    )
    groups = result.groups
    for col in ("selection_rate", "accuracy"):  # intervals around the point estimates
        assert (groups[f"{col}_low"] <= groups[col] + 1e-12).all()
        assert (groups[col] <= groups[f"{col}_high"] + 1e-12).all()
    at = result.curve[(result.curve.group == "overall") & np.isclose(result.curve.threshold, 0.6)]
    assert at["error"].iloc[0] == pytest.approx(result.metrics["test"]["error"])
    female = result.curve[result.curve.group == "female"].sort_values("threshold")
    assert np.all(np.diff(female["tpr"].to_numpy()) <= 1e-12)  # TPR falls as the bar rises
    assert {c.name for c in result.checks} >= {"constant_predictions", "no_better_than_constant"}


def test_a_constant_model_is_flagged(task) -> None:
    result = audit(task, predictions=np.ones(len(task.frame)), name="approve all")
    levels = {c.name: c.level for c in result.checks}
    assert levels["constant_predictions"] == "fail"
    assert levels["no_better_than_constant"] in ("fail", "warn")
    assert result.baselines is not None and result.baselines.unconstrained["test"]["error"] > 0


def test_column_route_leaves_the_column_out_of_every_methods_features(task, pipeline) -> None:
    frame = task.frame.assign(bank_score=_scores(pipeline, task))
    with_column = from_frame(frame, target="credit", sensitive="sex")
    outside = from_column(with_column, "bank_score")
    assert outside.kind == "scores" and "bank_score" not in outside.task.features
    assert "bank_score" not in outside.task.frame.columns
    assert any("bank_score" in note for note in outside.task.notes)
    result = audit(outside, name="col")
    direct = audit(task, scores=_scores(pipeline, task))
    assert result.task_key == task_key(*outside.task.split()) == direct.task_key
    assert result.metrics == direct.metrics
    assert result.source == "column 'bank_score'" and direct.source == ""
    assert any("bank_score" in note for note in result.notes)  # the route's notes travel along
    for values in ({"scores": outside.values}, {"predictions": outside.values}):
        with pytest.raises(ValueError, match="none with an Outside"):
            audit(outside, **values)  # an Outside carries its values
    with pytest.raises(ValueError, match="exactly one"):
        audit(task)
    with pytest.raises(DataError, match="target"):
        from_column(with_column, "credit")


def test_file_route_matches_rows_by_id_in_any_order(task, pipeline) -> None:
    frame = task.frame.assign(applicant=[f"A{i:04d}" for i in range(len(task.frame))])
    with_ids = from_frame(frame, target="credit", sensitive="sex")
    labels = np.where(_scores(pipeline, task) >= 0.5, "good", "bad")
    file = pd.DataFrame({"applicant": frame["applicant"], "decision": labels}).sample(
        frac=1.0, random_state=1
    )
    outside = from_file(with_ids, file, "applicant")
    assert outside.kind == "predictions" and "applicant" not in outside.task.features
    result = audit(outside)
    direct = audit(task, scores=_scores(pipeline, task), threshold=0.5)
    assert result.metrics["test"] == pytest.approx(direct.metrics["test"])
    extra = pd.concat([file, pd.DataFrame({"applicant": ["Z1"], "decision": ["bad"]})])
    assert any("match no row" in n for n in from_file(with_ids, extra, "applicant").task.notes)
    with pytest.raises(DataError, match="no prediction"):
        from_file(with_ids, file.iloc[1:], "applicant")
    with pytest.raises(DataError, match="appears twice"):
        from_file(with_ids, pd.concat([file, file.iloc[:1]]), "applicant")
    with pytest.raises(DataError, match="No id"):
        from_file(with_ids, file.assign(applicant="x" + file["applicant"]), "applicant")


def test_file_route_without_an_id_column_keys_by_row_number(task, tmp_path) -> None:
    path = tmp_path / "preds.csv"
    values = (np.arange(len(task.frame)) % 3 == 0).astype(int)
    pd.DataFrame({"row": np.arange(len(task.frame)), "p": values}).to_csv(path, index=False)
    outside = from_file(task, path, "row")
    assert np.array_equal(outside.values, values)
    assert outside.task.fingerprint == task.fingerprint  # the task is unchanged


def test_skops_route_equals_the_pipelines_own_scores(task, pipeline, skops_file) -> None:
    outside = from_model_file(task, skops_file)
    assert outside.kind == "scores"
    assert np.allclose(outside.values, _scores(pipeline, task))
    uploaded = from_model_file(task, skops_file.read_bytes(), "upload.skops")  # a page's upload
    assert np.array_equal(uploaded.values, outside.values) and "upload.skops" in uploaded.source


def test_skops_refuses_unreviewed_parts_and_missing_columns(task, pipeline, tmp_path) -> None:
    import skops.io as sio
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer
    from sklearn.svm import SVC

    X = task.frame.drop(columns=[task.target])[["age", "duration_months"]]
    y = task.frame[task.target]
    svc = tmp_path / "svc.skops"
    sio.dump(SVC().fit(X, y), svc)
    with pytest.raises(DataError, match="SVC"):
        from_model_file(task, svc)
    logged = tmp_path / "log.skops"
    sio.dump(make_pipeline(FunctionTransformer(np.log1p), SVC()).fit(X, y), logged)
    with pytest.raises(DataError, match="does not load|refused"):
        from_model_file(task, logged)
    pickled = tmp_path / "model.pkl"
    pickled.write_bytes(b"\x80\x04K\x01.")
    with pytest.raises(DataError, match="never loaded"):
        from_model_file(task, pickled)
    fewer = task.frame.drop(columns=["age"])
    small = from_frame(fewer, target="credit", sensitive="sex")
    path = tmp_path / "p.skops"
    sio.dump(pipeline, path)
    with pytest.raises(DataError, match="'age'"):
        from_model_file(small, path)


def test_fairengine_model_file_reproduces_the_methods_own_test_metrics(task, tmp_path) -> None:
    from fairengine.export import save_model
    from fairengine.methods import get_method

    train, test = task.split()
    result = get_method("reweighing").run(train, test, strength=1.0)
    path = tmp_path / "rw.fairmodel"
    save_model(result.model, path)
    audited = audit(from_model_file(task, path), name="exported")
    for name in ("error", "dp_diff", "eo_diff"):
        assert audited.metrics["test"][name] == pytest.approx(result.metrics["test"][name])


@pytest.mark.parametrize(
    ("values", "kind", "words"),
    [
        (np.zeros(10), "predictions", "10 values but the table has 1,000 rows"),
        (["high"] * 1000, "scores", "must be numbers"),
        (np.linspace(-1, 2, 1000), "scores", "between 0 and 1"),
        ([0.5] * 999 + [None], "scores", "missing for 1 row"),
        (["maybe"] * 1000, "predictions", "0/1, true/false or values of the target"),
    ],
)
def test_wrong_values_are_refused_in_words(task, values, kind, words) -> None:
    with pytest.raises(DataError, match=words):
        audit(task, **{kind: values})


def test_postprocessing_an_outside_model_reaches_parity(task, pipeline) -> None:
    from fairengine.methods.evidence import rate_tolerance

    result = audit(task, scores=_scores(pipeline, task), name="bank")
    post = postprocess(result, task, {"constraint": "demographic_parity"})
    _, test = task.split()
    assert post.kind == "probabilities"
    assert post.metrics["test"]["dp_diff"] <= 3 * rate_tolerance(test)
    assert any("sensitive attribute at prediction time" in n for n in post.notes)
    hard = audit(task, predictions=(_scores(pipeline, task) >= 0.5).astype(int))
    with pytest.raises(DataError, match="scores"):
        postprocess(hard, task)


def test_cost_table_lists_only_fairer_points_cheapest_first(task, pipeline) -> None:
    result = audit(task, scores=_scores(pipeline, task), name="bank")
    train, test = task.split()
    frontier = sweep("reweighing", train, test, {"strength": [0.0, 0.5, 1.0]})
    table = cost_of_fairness(result, [frontier], per_method=2)
    here_error, here_fair = result.point()
    assert len(table) <= 2
    assert (table["fairness"] < here_fair).all() and (table["fairness_gain"] > 0).all()
    assert np.allclose(table["error_cost"], table["performance"] - here_error)
    assert list(table["error_cost"]) == sorted(table["error_cost"])
    records = frontier.to_records()
    fairer = [r for r in records if r["metrics"]["test"]["dp_diff"] < here_fair]
    assert len(cost_of_fairness(result, [records], per_method=10)) == len(fairer)
