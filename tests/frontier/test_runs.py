"""RunStore: complete runs (with artifacts) kept on disk and served by key."""

from __future__ import annotations

import gzip
from pathlib import Path

import pandas as pd
import pytest

from fairengine.data import load_dataset
from fairengine.frontier import FrontierStore, task_key
from fairengine.frontier.runs import RunStore, compute_and_store, run_key


@pytest.fixture(scope="module")
def split():
    return load_dataset("german_credit").split()


def test_a_stored_run_comes_back_whole_and_only_for_its_key(tmp_path: Path, split) -> None:
    train, test = split
    store = RunStore(tmp_path / "cache", read_only=(tmp_path / "shipped",))
    knobs = {"strength": 0.5}
    result = compute_and_store(store, "reweighing", train, test, knobs)
    tkey = task_key(train, test)
    again = store.get(tkey, "reweighing", result.knobs)
    assert again is not None and again.metrics == result.metrics
    assert again.model.predict(test.X).tolist() == result.model.predict(test.X).tolist()
    assert store.get(tkey, "reweighing", {**result.knobs, "strength": 1.0}) is None
    assert store.get(tkey, "reweighing", result.knobs, extra={"target": (0.5, 0.5)}) is None
    assert run_key(tkey, "reweighing", result.knobs, {"target": None}) == run_key(
        tkey, "reweighing", result.knobs
    )
    # runs sit apart from the frontier points: the frontier store does not list them
    assert FrontierStore(tmp_path / "cache").points(tkey) == []


def test_damaged_or_foreign_files_are_misses(tmp_path: Path, split) -> None:
    train, test = split
    shipped = RunStore(tmp_path / "shipped")
    result = compute_and_store(shipped, "reweighing", train, test, {"strength": 0.0})
    tkey = task_key(train, test)
    store = RunStore(tmp_path / "cache", read_only=(tmp_path / "shipped",))
    assert store.get(tkey, "reweighing", result.knobs) is not None  # from the read-only root
    path = shipped.path(tkey, "reweighing", run_key(tkey, "reweighing", result.knobs))
    path.write_bytes(b"not a gzip file")
    assert store.get(tkey, "reweighing", result.knobs) is None
    with gzip.open(path, "wb") as handle:  # a whole file filed under the wrong key
        handle.write(__import__("pickle").dumps(("0" * 64, result)))
    assert store.get(tkey, "reweighing", result.knobs) is None
    assert isinstance(result.artifacts, dict) and not isinstance(result.metrics, pd.DataFrame)
