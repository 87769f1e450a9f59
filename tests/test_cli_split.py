"""``fairengine split`` gives the engine's split as row ids, and ``fairengine audit
--trained-on / --trained-on-ids`` scores an outside model on the test rows it never saw."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from sklearn.tree import DecisionTreeClassifier

from fairengine.data import FeatureEncoder, from_frame, load_dataset, split_ids


@pytest.fixture
def cli(tmp_path):
    env = {**os.environ, "FAIRENGINE_CACHE": str(tmp_path / "cache")}

    def run(*args: object, status: int = 0) -> subprocess.CompletedProcess:
        proc = subprocess.run(
            [sys.executable, "-m", "fairengine", *map(str, args)],
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
        )
        assert proc.returncode == status, proc.stderr
        return proc

    return run


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    """German credit with a customer id and the scores of a memorising model trained on the
    first 500 rows (as "in production"), written as a CSV."""
    root = tmp_path_factory.mktemp("split")
    frame = load_dataset("german_credit").frame.reset_index(drop=True)
    task = from_frame(frame, target="credit", sensitive="sex")
    encoder = FeatureEncoder().fit(task.X)
    tree = DecisionTreeClassifier(random_state=0).fit(encoder.transform(task.X[:500]), task.y[:500])
    frame = frame.assign(
        cid=[f"C{i:04d}" for i in range(len(frame))],
        score=tree.predict_proba(encoder.transform(task.X))[:, 1],
    )
    frame.to_csv(root / "table.csv", index=False)
    return root, frame, task


def _data(root) -> list[object]:
    return ["--data", root / "table.csv", "--target", "credit", "--sensitive", "sex"]


def test_split_ids_by_row_number_and_by_id_column(cli, table, tmp_path) -> None:
    root, frame, task = table
    train_ids, test_ids = split_ids(task)
    printed = pd.read_csv(io.StringIO(cli("split", *_data(root), "--ids").stdout))
    assert list(printed.columns) == ["row", "part"] and len(printed) == len(frame)
    assert list(printed.loc[printed["part"] == "test", "row"]) == list(test_ids)
    out = tmp_path / "ids.json"
    said = cli("split", *_data(root), "--ids", "--id-column", "cid", "--out", out).stdout
    assert f"{len(train_ids):,} train and {len(test_ids):,} test ids written" in said
    document = json.loads(out.read_text())
    assert document["id_column"] == "cid"
    assert document["test"] == list(frame["cid"].iloc[test_ids])
    summary = json.loads(cli("split", *_data(root), "--json", "--test-size", "0.2").stdout)
    assert (summary["train"], summary["test"]) == (800, 200)
    err = cli("split", *_data(root), "--ids", "--id-column", "nope", status=2).stderr
    assert "no column 'nope'" in err


def test_audit_leaves_out_the_test_rows_the_model_was_trained_on(cli, table, tmp_path) -> None:
    root, frame, task = table
    _, test_ids = split_ids(task)
    first = tmp_path / "first.csv"
    pd.DataFrame({"cid": frame["cid"][:500]}).to_csv(first, index=False)
    args = [*_data(root), "--predictions-column", "score", "--json"]
    blind = json.loads(cli("audit", *args).stdout)
    fixed = json.loads(cli("audit", *args, "--trained-on-ids", first, "--id-column", "cid").stdout)
    unseen = test_ids[test_ids >= 500]
    y, score = task.y[unseen], frame["score"].to_numpy()[unseen]
    assert fixed["metrics"]["test"]["error"] == pytest.approx(np.mean((score >= 0.5) != y))
    assert blind["metrics"]["test"]["error"] < fixed["metrics"]["test"]["error"] - 0.05
    n_seen = len(test_ids) - len(unseen)
    assert any(f"{n_seen} of the {len(test_ids)} test rows" in n for n in fixed["notes"])
    checks = {c["name"]: c for c in blind["checks"]}
    assert checks["unseen_rows"]["level"] == "warn"
    text = cli("audit", *_data(root), "--predictions-column", "score").stdout
    assert "Valid only if the model never saw" in text
    # the split file itself: its train rows, i.e. the engine's training rows
    ids_file = tmp_path / "split.csv"
    cli("split", *_data(root), "--ids", "--out", ids_file)
    by_file = json.loads(cli("audit", *args, "--trained-on-ids", ids_file).stdout)
    engine = json.loads(cli("audit", *args, "--trained-on", "engine").stdout)
    assert by_file["metrics"] == engine["metrics"] == blind["metrics"]
    everything = tmp_path / "all.csv"
    pd.DataFrame({"row": range(len(frame))}).to_csv(everything, index=False)
    err = cli("audit", *args, "--trained-on-ids", everything, status=2).stderr
    assert f"Only 0 of the {len(test_ids)} test rows" in err
