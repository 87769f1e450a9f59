"""``fairengine predict`` and ``load_model(...).predict`` apply one rule to a table's columns.

A table may still hold the target and the sensitive column(s) the model was trained with: both
paths ignore them and say so (a note on stderr, an ``IgnoredColumnsWarning`` in Python), and
predict exactly as on the model's own columns. Unknown columns are refused by both with the same
message; ``--id-columns`` copies columns to the output. A file that does not record its training
columns says so when it refuses them. Checked with a real model file exported from a real fit.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairengine.cli import main
from fairengine.data import load_dataset
from fairengine.export import load_model, model_bytes, read_manifest
from fairengine.models.columns import (
    IgnoredColumnsWarning,
    SchemaError,
    check_columns,
    ignored_note,
    input_schema,
)

TARGET, SENSITIVE = "credit", "sex"  # german_credit's


@pytest.fixture(scope="module")
def model_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("model") / "credit.fairmodel"
    argv = ["run", "reweighing", "--dataset", "german_credit", "--no-cache", "--out", str(path)]
    assert main(argv) == 0
    return path


@pytest.fixture(scope="module")
def table(model_file) -> pd.DataFrame:
    """Rows of the training data with every column (features, target, sensitive)."""
    return load_dataset("german_credit").frame.sample(120, random_state=3).reset_index(drop=True)


@pytest.fixture(scope="module")
def expected(model_file, table) -> np.ndarray:
    """Predictions on the model's own columns only."""
    model = load_model(model_file)
    assert TARGET not in model.features and SENSITIVE not in model.features
    return model.predict(table[model.features])


def _cli(model_file: Path, frame: pd.DataFrame, tmp_path: Path, capsys, *extra: str):
    """Run ``fairengine predict`` on ``frame``: (exit status, output frame or None, stderr)."""
    data, out = tmp_path / "in.csv", tmp_path / "out.csv"
    frame.to_csv(data, index=False)
    status = main(["predict", str(model_file), "--data", str(data), "--out", str(out), *extra])
    err = capsys.readouterr().err
    return status, (pd.read_csv(out) if status == 0 else None), err


def _columns(model_file: Path, table: pd.DataFrame, roles: tuple[str, ...]) -> pd.DataFrame:
    features = load_model(model_file).features
    return table[[*features, *roles]]


ROLES = {
    "target only": (TARGET,),
    "sensitive only": (SENSITIVE,),
    "both": (TARGET, SENSITIVE),
}


@pytest.mark.parametrize("roles", list(ROLES.values()), ids=list(ROLES))
def test_cli_ignores_training_target_and_sensitive_with_a_note(
    roles, model_file, table, expected, tmp_path, capsys
) -> None:
    status, out, err = _cli(model_file, _columns(model_file, table, roles), tmp_path, capsys)
    assert status == 0, err
    np.testing.assert_array_equal(out["prediction"], expected)
    assert "ignored column(s) the model was trained with as target/sensitive" in err
    for name in roles:
        assert name in err
    assert ({TARGET, SENSITIVE} - set(roles)).isdisjoint(err.split(":")[-1].split())


@pytest.mark.parametrize("roles", list(ROLES.values()), ids=list(ROLES))
def test_api_ignores_training_target_and_sensitive_with_a_warning(
    roles, model_file, table, expected
) -> None:
    model = load_model(model_file)
    frame = _columns(model_file, table, roles)
    with pytest.warns(IgnoredColumnsWarning, match="trained with as target/sensitive") as caught:
        prediction = model.predict(frame)
    np.testing.assert_array_equal(prediction, expected)
    assert all(name in str(caught[0].message) for name in roles)


def test_own_columns_need_no_note(model_file, table, expected, tmp_path, capsys) -> None:
    status, out, err = _cli(model_file, _columns(model_file, table, ()), tmp_path, capsys)
    assert status == 0 and "ignored" not in err
    np.testing.assert_array_equal(out["prediction"], expected)


def test_unknown_column_is_refused_by_both(model_file, table, tmp_path, capsys) -> None:
    frame = table.assign(nickname="x")
    status, _, err = _cli(model_file, frame, tmp_path, capsys)
    assert status == 2
    assert "extra column(s) the model does not know: nickname" in err and "--allow-extra" in err
    assert SENSITIVE not in err.split("does not know:")[1].split("(")[0]
    with pytest.raises(SchemaError, match=r"does not know: nickname \(select the model's columns"):
        load_model(model_file).predict(frame)
    status, out, _ = _cli(model_file, frame, tmp_path, capsys, "--allow-extra")
    assert status == 0 and len(out) == len(frame)


def test_missing_feature_is_refused_by_both(model_file, table, tmp_path, capsys) -> None:
    frame = table.drop(columns=["age"])
    status, _, err = _cli(model_file, frame, tmp_path, capsys)
    assert status == 2 and "missing column(s) the model needs: age" in err
    with pytest.raises(SchemaError, match="missing column.*age"):
        load_model(model_file).predict(frame)


def test_id_columns_pass_through_beside_ignored_columns(
    model_file, table, expected, tmp_path, capsys
) -> None:
    frame = table.assign(applicant=[f"A{i:03d}" for i in range(len(table))])
    status, out, err = _cli(model_file, frame, tmp_path, capsys, "--id-columns", "applicant", "sex")
    assert status == 0, err
    assert list(out.columns) == ["applicant", "sex", "prediction"]
    np.testing.assert_array_equal(out["applicant"], frame["applicant"])
    np.testing.assert_array_equal(out["sex"], frame["sex"])
    np.testing.assert_array_equal(out["prediction"], expected)
    assert "credit (target)" in err and "sex (sensitive)" not in err  # sex is copied, not ignored
    status, _, err = _cli(model_file, table, tmp_path, capsys, "--id-columns", "applicant")
    assert status == 2 and "--id-columns not in the input: applicant" in err


def test_file_without_training_columns_says_so(model_file, table, tmp_path, capsys) -> None:
    """A file written without its training metadata does not know which columns were the target
    and the sensitive attribute: it refuses them as unknown, and says why."""
    bare = tmp_path / "bare.fairmodel"
    bare.write_bytes(model_bytes(load_model(model_file), metadata={}))
    assert "train" not in read_manifest(bare)["metadata"]
    frame = _columns(model_file, table, (SENSITIVE,))
    status, _, err = _cli(bare, frame, tmp_path, capsys)
    assert status == 2 and "does not know: sex" in err
    assert "does not record which columns were its target and sensitive" in err
    with pytest.raises(SchemaError, match="does not record which columns"):
        load_model(bare).predict(frame)


def test_training_features_the_model_does_not_read_are_ignored(model_file, table) -> None:
    """A model that reads fewer columns than its training table held (e.g. max-entropy's paper
    columns) ignores the others, naming them, rather than calling them unknown."""
    model = load_model(model_file)
    manifest = read_manifest(model_file)
    manifest["metadata"]["train"]["features"].append("telephone_book")
    schema = input_schema(model, manifest)
    assert schema.roles["telephone_book"] == "unused" and schema.roles[SENSITIVE] == "sensitive"
    columns = [*table.columns, "telephone_book"]
    ignored = check_columns(schema, columns)
    assert set(ignored) == {TARGET, SENSITIVE, "telephone_book"}
    note = ignored_note(schema, ignored)
    assert "credit (target), sex (sensitive)" in note
    assert "training column(s) this model does not read: telephone_book" in note
    with pytest.raises(SchemaError, match="does not know: telephone_book"):
        check_columns(input_schema(model, read_manifest(model_file)), columns)
