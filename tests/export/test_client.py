"""Using exported models: raw-frame predictions of every type, ``fairengine predict`` / ``inspect``
(in process and end to end from a directory outside the repository), the lazy import, the card's
"How to use this file" section and the encoder's privacy rule."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import fairengine
from fairengine.cli import main
from fairengine.data import from_frame, load_dataset
from fairengine.export import load_model, model_bytes, model_card, read_manifest, result_metadata
from fairengine.export.client import SchemaError, predict_file
from fairengine.methods import get_method
from fairengine.models.columns import input_schema
from tests.export.hostile import real_files

FILES = real_files()
ROOT = Path(fairengine.__file__).resolve().parents[1]


def _rows(path: Path, n: int = 300) -> pd.DataFrame:
    """Raw rows of the bundled dataset a shipped model file was trained on."""
    train = read_manifest(path)["metadata"]["train"]
    frame = load_dataset(train["name"]).frame
    return frame.sample(n, random_state=1).reset_index(drop=True)


@pytest.mark.parametrize("model_type", sorted(FILES))
def test_every_model_type_predicts_raw_frames(model_type) -> None:
    path = FILES[model_type]
    model = load_model(path)
    frame = _rows(path)  # all columns, raw: the model picks its own
    prediction = model.predict(frame)
    assert prediction.shape == (len(frame),) and np.isfinite(prediction).all()
    np.testing.assert_array_equal(
        model.predict(frame, random_state=5), model.predict(frame, random_state=5)
    )
    score = model.predict_score(frame)
    if model.kind == "classification":
        assert set(np.unique(prediction)) <= {0, 1}
        proba = model.predict_proba(frame)
        np.testing.assert_allclose(proba.sum(axis=1), 1.0)
        np.testing.assert_allclose(proba[:, 1], score)
        assert ((score >= 0) & (score <= 1)).all()
    else:
        with pytest.raises(TypeError, match="regression"):
            model.predict_proba(frame)
    if model.randomized:  # draws average to the expected probabilities
        draws = np.mean([model.predict(frame, random_state=s) for s in range(40)], axis=0)
        assert np.abs(draws - score).mean() < 0.1


@pytest.fixture(scope="module")
def eg_file() -> Path:
    return FILES["randomized_classifier"]


def test_predict_checks_columns_and_types(eg_file, tmp_path) -> None:
    frame = _rows(eg_file, 50)
    bad = frame.drop(columns=["education"]).assign(nickname="x")
    bad["age"] = bad["age"].astype(object)
    bad.loc[7, "age"] = "old"
    bad.to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(SchemaError, match="missing column.*education.*extra column.*nickname"):
        predict_file(eg_file, tmp_path / "bad.csv", tmp_path / "out.csv")
    bad.assign(education=frame["education"]).to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(SchemaError, match=r"Mistyped column\(s\): age .*row 8 has 'old'"):
        predict_file(eg_file, tmp_path / "bad.csv", tmp_path / "out.csv", allow_extra=True)
    assert not (tmp_path / "out.csv").exists()  # no half-written output
    assert main(["predict", str(eg_file), "--data", str(tmp_path / "bad.csv")]) == 2


def test_predict_streams_parquet_in_chunks(eg_file, tmp_path) -> None:
    frame = _rows(eg_file, 500).assign(row_id=np.arange(500) * 7)
    frame.to_parquet(tmp_path / "rows.parquet")
    n = predict_file(
        eg_file, tmp_path / "rows.parquet", tmp_path / "out.parquet",
        proba=True, id_columns=["row_id"], chunk_rows=120,
    )  # fmt: skip
    out = pd.read_parquet(tmp_path / "out.parquet")
    assert n == 500 and list(out.columns) == ["row_id", "prediction", "probability"]
    np.testing.assert_array_equal(out["row_id"], frame["row_id"])
    model = load_model(eg_file)  # a loaded model refuses the unknown row_id, as predict does
    np.testing.assert_allclose(
        out["probability"], model.predict_score(frame.drop(columns="row_id"))
    )
    schema = input_schema(load_model(eg_file), read_manifest(eg_file))
    assert "income" in schema.known and "age" in schema.numeric and "race" in schema.text


def test_inspect_prints_manifest_schema_metrics(eg_file, capsys) -> None:
    assert main(["inspect", str(eg_file), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["model_type"] == "randomized_classifier" and info["randomized"]
    assert info["checksums"]["status"] == "ok" and "state.json" in info["checksums"]["verified"]
    assert info["metrics"]["test"]["accuracy"] > 0.8
    assert "native_country" in info["schema"]["text"]


#: fairengine.methods modules any model may import: the package, the method contract and registry.
SHARED = {"fairengine.methods", "fairengine.methods.base", "fairengine.methods.registry",
          "fairengine.methods.params", "fairengine.methods.evidence",
          "fairengine.methods.evidence_fits", "fairengine.methods.fitted",
          "fairengine.methods.sensitive"}  # fmt: skip
#: Model type -> the method package its predictor lives in (None: fairengine.models only).
PACKAGES = {
    "linear_classifier": None,
    "randomized_classifier": None,
    "balanced_filter": "balanced_filtering",
    "maxent": "maxent",
    "fair_regression": "fair_regression",
    "noisy_groups": "noisy_groups",
    "multiaccurate_proxy": "multiaccurate_proxy",
    "group_threshold_classifier": None,  # fairengine.models: no method package, no fairlearn
}

_IMPORTS = """
import json, os, sys
import fairengine.export
before = set(sys.modules)
report = {
    "export": sorted(m for m in before if m.startswith("fairengine.methods")),
    "heavy": sorted(m for m in before if m.split(".")[0] in ("fairlearn", "streamlit")),
}
for model_type, path in json.loads(sys.argv[1]).items():
    read, write = os.pipe()
    if os.fork() == 0:  # a fresh copy of the interpreter per file: nothing loaded by another
        fairengine.export.load_model(path)
        new = set(sys.modules) - before
        loaded = {
            "load": sorted(m for m in new if m.startswith("fairengine.")),
            "heavy": sorted(m for m in new if m.split(".")[0] in ("fairlearn", "streamlit")),
        }
        os.write(write, json.dumps(loaded).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        report[model_type] = json.loads(pipe.read())
    os.wait()
print(json.dumps(report))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forks one interpreter per model file")
def test_client_import_pulls_in_no_method_fairlearn_or_streamlit() -> None:
    """Each model type loaded in its own (forked) interpreter: ``import fairengine.export``
    imports no method, and loading a file imports only its own method package (no other method,
    not the reweighing baseline, not fairlearn or streamlit)."""
    assert set(PACKAGES) == set(FILES), "a new model type needs its entry here"
    files = json.dumps({model_type: str(path) for model_type, path in FILES.items()})
    done = subprocess.run(
        [sys.executable, "-c", _IMPORTS, files], capture_output=True, text=True, check=True,
        cwd=ROOT,
    )  # fmt: skip
    report = json.loads(done.stdout)
    assert report["export"] == [] and report["heavy"] == [], report
    for model_type, package in PACKAGES.items():
        assert report[model_type]["heavy"] == [], (model_type, report[model_type])
        loaded = {m for m in report[model_type]["load"] if m.startswith("fairengine.methods")}
        own = f"fairengine.methods.{package}"
        others = {m for m in loaded - SHARED if m != own and not m.startswith(own + ".")}
        assert not others, (model_type, others)
        if package is not None:
            assert f"{own}.model" in loaded


@pytest.fixture(scope="module")
def named_credit():
    """400 German-credit rows with two identifier-like columns (a name and a reference), chosen
    as features (by default a task leaves them out; here the encoder must drop them)."""
    frame = load_dataset("german_credit").frame.sample(400, random_state=0).reset_index(drop=True)
    names = [f"Person{i:04d}Q" for i in range(len(frame))]
    frame = frame.assign(full_name=names, ref=[f"ID-{i}" for i in range(len(frame))])
    features = [c for c in frame.columns if c not in ("credit", "age_group")]
    task = from_frame(frame, target="credit", sensitive=["age_group"], features=features)
    train, test = task.split(random_state=0)
    return names, train, test


@pytest.mark.parametrize(
    ("method", "knobs"), [("reweighing", {"strength": 1.0}), ("maxent", {"n_samples": 500})]
)
def test_identifier_like_columns_are_dropped_not_stored(named_credit, method, knobs) -> None:
    names, train, test = named_credit
    result = get_method(method).run(train, test, **knobs)
    card = model_card(result, train, test, method=get_method(result.method))
    raw = model_bytes(result.model, card=card, metadata=result_metadata(result, train, test))
    with zipfile.ZipFile(io.BytesIO(raw)) as archive:
        blob = b"".join(archive.read(n) for n in archive.namelist())
    assert not any(n.encode() in blob for n in names) and b"ID-1" not in blob
    assert b"Person0" not in blob  # not even a prefix (maxent's domain kept 8 values per column)
    model = load_model(raw)
    assert model.encoder.dropped_ == ["full_name", "ref"]
    assert "full_name" not in model.features
    if method == "maxent":  # the domain leaves them out; ordinary text columns stay in it
        assert {"full_name", "ref"}.isdisjoint(model.domain.columns)
        assert "purpose" in model.domain.columns
    model.predict(test.X.drop(columns=["full_name", "ref"]))  # not needed to predict
    assert "dropped, with no value stored: `full_name`, `ref`" in card


def test_card_says_how_to_use_the_file() -> None:
    train, test = load_dataset("german_credit").split(random_state=3)
    result = get_method("reweighing").run(train, test, strength=0.5)
    card = model_card(
        result, train, test, method=get_method(result.method), file_name="credit.fairmodel"
    )
    section = card[card.index("## How to use this file") : card.index("## Caveats")]
    assert 'load_model("credit.fairmodel")' in section and "model.predict(frame)" in section
    # the wheel route: a recipient needs no checkout of the repository
    assert f"pip install fairengine-{fairengine.__version__}-py3-none-any.whl" in section
    assert "repository)" not in section and "-e ." not in section
    assert "fairengine predict credit.fairmodel --data" in section
    assert "`prediction` is 1 when the model predicts `credit` = good" in section
    assert "`duration_months`" in section and "`purpose`" in section
    assert "Not for." in section


def test_predict_end_to_end_outside_the_repository(tmp_path) -> None:
    """The dashboard's export path (the Compare page's download: card with the group table,
    the stored metadata), then `python -m fairengine predict` run from a temp directory."""
    from dashboard.components.cached import model_file
    from fairengine.methods.base import RunResult

    path = FILES["randomized_classifier"]
    meta = read_manifest(path)["metadata"]
    train, test = load_dataset(meta["train"]["name"]).split()
    model = load_model(path)
    result = RunResult(
        method=meta["method"], knobs=meta["knobs"], metrics=meta["metrics"], model=model
    )
    exported = tmp_path / "downloaded.fairmodel"
    exported.write_bytes(model_file(result, train, test, f"e2e-{path.stem}"))
    rows = test.frame.sample(2500, random_state=0).reset_index(drop=True)
    rows.insert(0, "applicant", np.arange(len(rows)) + 1000)
    rows.to_csv(tmp_path / "applicants.csv", index=False)
    assert not tmp_path.resolve().is_relative_to(ROOT)
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
    }  # the code under test, even if installed elsewhere
    command = [sys.executable, "-m", "fairengine"]
    run = subprocess.run(
        [*command, "predict", "downloaded.fairmodel", "--data", "applicants.csv", "--out",
         "predictions.csv", "--proba", "--id-columns", "applicant", "--chunk-size", "1000"],
        cwd=tmp_path, env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    out = pd.read_csv(tmp_path / "predictions.csv")
    assert list(out.columns) == ["applicant", "prediction", "probability"]
    np.testing.assert_array_equal(out["applicant"], rows["applicant"])
    np.testing.assert_allclose(
        out["probability"], model.predict_score(rows.drop(columns="applicant")), atol=1e-12
    )
    assert set(out["prediction"]) <= {0, 1}
    assert abs(out["prediction"].mean() - out["probability"].mean()) < 0.03
    inspect = subprocess.run(
        [*command, "inspect", "downloaded.fairmodel"], cwd=tmp_path, env=env,
        capture_output=True, text=True,
    )  # fmt: skip
    assert inspect.returncode == 0 and "checksums: ok" in inspect.stdout
    assert "How to use this file" in fairengine.export.read_card(exported)


def test_predict_regression_to_stdout(tmp_path, capsys) -> None:
    path = FILES["fair_regression"]
    frame = _rows(path, 80)
    frame.to_csv(tmp_path / "rows.csv", index=False)
    assert main(["predict", str(path), "--data", str(tmp_path / "rows.csv"), "--proba"]) == 0
    out = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert list(out.columns) == ["prediction", "expected_prediction"] and len(out) == 80
    np.testing.assert_allclose(out["expected_prediction"], load_model(path).predict_score(frame))


def test_predict_file_refuses_a_misspelt_keyword(eg_file, tmp_path) -> None:
    """The prediction settings are explicit keywords: a misspelt one is an error, not ignored."""
    credit_csv = tmp_path / "rows.csv"
    _rows(eg_file, 250).to_csv(credit_csv, index=False)
    out = tmp_path / "a.csv"
    assert (
        predict_file(eg_file, credit_csv, out, proba=True, chunk_rows=100, allow_extra=True) == 250
    )
    with pytest.raises(TypeError):
        predict_file(eg_file, credit_csv, out, chunk_row=100)
