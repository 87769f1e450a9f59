"""FrontierStore: keys, round trips, atomic and concurrent writes, corruption, read-only roots."""

from __future__ import annotations

import logging
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import fairengine
from fairengine.data import load_dataset
from fairengine.export import load_model, result_metadata
from fairengine.frontier import CachedPoint, FrontierStore, point_key, sweep, task_key
from fairengine.methods import get_method

KNOBS = {"strength": 0.5, "C": 1.0}


def german(random_state: int = 0):
    return load_dataset("german_credit").split(random_state=random_state)


@pytest.fixture(scope="module")
def split():
    return german()


@pytest.fixture(scope="module")
def run(split):
    train, test = split
    return get_method("reweighing").run(train, test, **KNOBS)


@pytest.fixture(scope="module")
def tkey(split):
    return task_key(*split)


def put(store: FrontierStore, tkey: str, run, split) -> Path:
    return store.put(tkey, run, result_metadata(run, *split))


def entry_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    return {str(p): (p.read_bytes(), p.stat().st_mtime_ns) for p in entry_files(root)}


# ---------------------------------------------------------------------------------- keys


def test_task_key_is_sha256_of_both_fingerprints(split):
    import hashlib

    train, test = split
    expected = hashlib.sha256((train.fingerprint + test.fingerprint).encode()).hexdigest()
    assert task_key(train, test) == expected
    assert task_key(test, train) != expected


def test_same_knobs_same_key_and_every_ingredient_changes_it(tmp_path, tkey, monkeypatch):
    store = FrontierStore(tmp_path)
    key = store.key(tkey, "reweighing", KNOBS)
    assert key == store.key(tkey, "reweighing", {"C": 1.0, "strength": 0.5})  # order-free
    assert len(key) == 64 and int(key, 16) >= 0
    other_task = task_key(*german(random_state=1))
    different = {
        store.key(tkey, "reweighing", {"strength": 0.25, "C": 1.0}),
        store.key(tkey, "reweighing", {"strength": 0.5 + 1e-12, "C": 1.0}),
        store.key(tkey, "fairlearn_eg", KNOBS),
        store.key(other_task, "reweighing", KNOBS),
    }
    monkeypatch.setattr(fairengine, "__version__", "999.0.0")
    different.add(store.key(tkey, "reweighing", KNOBS))
    assert key not in different
    assert len(different) == 4 + 1


def test_layout(tmp_path, tkey, run, split):
    store = FrontierStore(tmp_path)
    path = put(store, tkey, run, split)
    key = store.key(tkey, "reweighing", KNOBS)
    assert path == tmp_path / tkey[:20] / "reweighing" / f"{key[:32]}.fairmodel"


def test_default_root_from_environment_or_platform_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("FAIRENGINE_CACHE", str(tmp_path / "cache"))
    assert FrontierStore().root == tmp_path / "cache"
    monkeypatch.delenv("FAIRENGINE_CACHE")
    import platformdirs

    assert FrontierStore().root == Path(platformdirs.user_cache_dir("fairengine"))


# ---------------------------------------------------------------------------- round trip


def test_put_get_round_trip(tmp_path, tkey, run, split):
    store = FrontierStore(tmp_path)
    assert store.get(tkey, "reweighing", KNOBS) is None
    path = put(store, tkey, run, split)
    point = store.get(tkey, "reweighing", KNOBS)
    assert isinstance(point, CachedPoint)
    assert point.path == path
    assert point.knobs == run.knobs
    assert point.metrics == run.metrics  # floats survive JSON exactly
    assert point.elapsed == run.elapsed
    assert point.point_id == store.key(tkey, "reweighing", KNOBS)[:12]
    assert point.manifest["metadata"]["train"]["fingerprint"] == split[0].fingerprint
    test_x = split[1].X
    np.testing.assert_array_equal(point.model().predict(test_x), run.model.predict(test_x))
    np.testing.assert_array_equal(
        load_model(path).predict_score(test_x), run.model.predict_score(test_x)
    )


def test_points_methods_and_clear(tmp_path, tkey, run, split):
    store = FrontierStore(tmp_path)
    train, test = split
    unconstrained = get_method("reweighing").run(train, test, strength=0.0, C=1.0)
    put(store, tkey, run, split)
    put(store, tkey, unconstrained, split)
    other_split = german(random_state=1)
    other_key = task_key(*other_split)
    put(store, other_key, run, other_split)
    (tmp_path / "unrelated.txt").write_text("not ours")

    points = store.points(tkey)
    assert [p.knobs["strength"] for p in points] == [0.0, 0.5]  # sorted by knob values
    assert {p.key for p in points} == {
        store.key(tkey, "reweighing", {"strength": s, "C": 1.0}) for s in (0.0, 0.5)
    }
    assert store.points(tkey, "fairlearn_eg") == []
    assert store.methods(tkey) == ["reweighing"]
    assert store.methods("0" * 64) == []

    assert store.clear(tkey) == 2
    assert store.points(tkey) == [] and len(store.points(other_key)) == 1
    assert store.clear() == 1
    assert [p.name for p in entry_files(tmp_path)] == ["unrelated.txt"]


def test_entries_of_another_engine_version_are_neither_served_nor_listed(
    tmp_path, tkey, run, split, monkeypatch
):
    store = FrontierStore(tmp_path)
    monkeypatch.setattr(fairengine, "__version__", "0.0.1-old")
    put(store, tkey, run, split)
    assert store.get(tkey, "reweighing", KNOBS) is not None
    assert len(store.points(tkey)) == 1
    monkeypatch.undo()
    assert store.get(tkey, "reweighing", KNOBS) is None
    assert store.points(tkey) == [] and store.methods(tkey) == []
    assert store.clear() == 1


# ------------------------------------------------------------------------ atomic writes


def test_no_temp_files_left_after_writes(tmp_path, tkey, run, split):
    store = FrontierStore(tmp_path)
    for _ in range(5):
        put(store, tkey, run, split)
    files = entry_files(tmp_path)
    assert len(files) == 1 and files[0].suffix == ".fairmodel"


def test_half_written_file_is_detected_deleted_and_logged(tmp_path, tkey, run, split, caplog):
    store = FrontierStore(tmp_path)
    path = put(store, tkey, run, split)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])  # what a crashed non-atomic writer would leave
    with caplog.at_level(logging.WARNING, logger="fairengine.frontier"):
        assert store.get(tkey, "reweighing", KNOBS) is None
    assert not path.exists()
    assert any("damaged" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("damage", ["truncate", "flip_middle", "flip_manifest", "empty", "garbage"])
def test_corrupt_entry_is_recomputed_by_sweep(tmp_path, split, damage):
    train, test = split
    store = FrontierStore(tmp_path)
    grid = {"strength": [0.0, 0.5]}
    first = sweep("reweighing", train, test, grid, store=store)
    tkey = first.task_key
    path = store.get(tkey, "reweighing", KNOBS).path
    data = bytearray(path.read_bytes())
    if damage == "truncate":
        data = data[:-40]
    elif damage == "flip_middle":
        for i in range(len(data) // 2, len(data) // 2 + 8):
            data[i] ^= 0xFF
    elif damage == "flip_manifest":
        for i in range(100, 104):  # inside manifest.json's compressed bytes
            data[i] ^= 0xFF
    elif damage == "empty":
        data = bytearray()
    else:
        data = bytearray(b"\x80\x04not a zip at all")
    path.write_bytes(bytes(data))

    assert store.get(tkey, "reweighing", KNOBS) is None
    assert not path.exists()
    path.write_bytes(bytes(data))  # damage it again: sweep must recover on its own
    again = sweep("reweighing", train, test, grid, store=store)
    assert again.points["cached"].tolist() == [True, True, False, False]
    assert store.get(tkey, "reweighing", KNOBS) is not None
    cols = list(first.metric_names)
    assert again.points[cols].equals(first.points[cols])


# -------------------------------------------------------------------- concurrent writers


def _writer(root: str, n: int) -> int:
    train, test = german()
    result = get_method("reweighing").run(train, test, **KNOBS)
    store = FrontierStore(root)
    tkey = task_key(train, test)
    meta = result_metadata(result, train, test)
    for _ in range(n):
        assert store.put(tkey, result, meta).is_file()
    return n


class _Count(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


def _reader(root: str, stop_flag: str) -> tuple[int, int, int]:
    train, test = german()
    store = FrontierStore(root)
    tkey = task_key(train, test)
    counter = _Count()
    logging.getLogger("fairengine.frontier").addHandler(counter)
    hits = misses = 0
    deadline = time.monotonic() + 120
    while True:
        stop = Path(stop_flag).exists() or time.monotonic() > deadline
        point = store.get(tkey, "reweighing", KNOBS)
        if point is None:
            misses += 1
        else:
            point.model()  # a whole, valid file
            hits += 1
        if stop:  # one last read after the writers finished
            return hits, misses, counter.count


def test_two_concurrent_writers_and_a_reader(tmp_path):
    root = tmp_path / "store"
    stop = tmp_path / "stop"
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=3, mp_context=context) as pool:
        reader = pool.submit(_reader, str(root), str(stop))
        writers = [pool.submit(_writer, str(root), 60) for _ in range(2)]
        assert [w.result(timeout=300) for w in writers] == [60, 60]
        stop.touch()
        hits, misses, warnings = reader.result(timeout=300)
    assert warnings == 0  # the reader never saw a damaged file
    assert hits > 0
    files = entry_files(root)
    assert len(files) == 1 and files[0].suffix == ".fairmodel"
    train, test = german()
    point = FrontierStore(root).get(task_key(train, test), "reweighing", KNOBS)
    assert point is not None and point.metrics["test"]["error"] >= 0
    point.model()


# ------------------------------------------------------------------------ read-only roots


def test_read_only_roots_are_read_but_never_modified(tmp_path, tkey, run, split, caplog):
    shipped = tmp_path / "shipped"
    ro_writer = FrontierStore(shipped)
    put(ro_writer, tkey, run, split)
    train, test = split
    other = get_method("reweighing").run(train, test, strength=0.0, C=1.0)
    damaged = put(ro_writer, tkey, other, split)
    damaged.write_bytes(damaged.read_bytes()[:100])
    before = snapshot(shipped)

    store = FrontierStore(tmp_path / "user", read_only=[shipped])
    point = store.get(tkey, "reweighing", KNOBS)
    assert point is not None and point.path.is_relative_to(shipped)
    with caplog.at_level(logging.WARNING, logger="fairengine.frontier"):
        assert store.get(tkey, "reweighing", {"strength": 0.0, "C": 1.0}) is None
    assert any("read-only" in r.getMessage() for r in caplog.records)
    assert [p.key for p in store.points(tkey)] == [point.key]
    assert store.methods(tkey) == ["reweighing"]

    # The sweep recomputes the damaged point into the writable root only.
    frontier = sweep("reweighing", train, test, {"strength": [0.0, 0.5]}, store=store)
    assert frontier.points["cached"].tolist() == [False, False, True, True]
    assert store.clear() == 1
    assert snapshot(shipped) == before


def test_writable_root_wins_and_points_are_deduplicated(tmp_path, tkey, run, split):
    shipped, user = tmp_path / "shipped", tmp_path / "user"
    put(FrontierStore(shipped), tkey, run, split)
    put(FrontierStore(user), tkey, run, split)
    store = FrontierStore(user, read_only=[shipped])
    assert store.get(tkey, "reweighing", KNOBS).path.is_relative_to(user)
    points = store.points(tkey)
    assert len(points) == 1 and points[0].path.is_relative_to(user)


def test_method_version_is_part_of_the_key(monkeypatch) -> None:
    import dataclasses

    from fairengine.methods import registry

    knobs = get_method("reweighing").defaults()
    before = point_key("t" * 64, "reweighing", knobs)
    method = get_method("reweighing")
    bumped = dataclasses.replace(method, version=f"{method.version}.1")
    monkeypatch.setitem(registry._METHODS, "reweighing", bumped)
    assert point_key("t" * 64, "reweighing", knobs) != before


def test_run_result_of_a_cached_point_matches_the_computed_one(tmp_path, split):
    train, test = split
    store = FrontierStore(tmp_path)
    grid = {"strength": [0.0, 1.0]}
    first = sweep("reweighing", train, test, grid, store=store)
    again = sweep("reweighing", train, test, grid, store=store)
    for point_id in first.points["point_id"].unique():
        assert again.result(point_id) is None  # served from the store
        fresh, rebuilt = (
            first.run_result(point_id, train, test),
            again.run_result(point_id, train, test),
        )
        assert fresh is first.result(point_id)
        assert rebuilt.method == fresh.method and rebuilt.knobs == fresh.knobs
        assert rebuilt.metrics["test"] == pytest.approx(fresh.metrics["test"])
        assert [c.to_dict() for c in rebuilt.checks] == [c.to_dict() for c in fresh.checks]
        assert rebuilt.model.predict(test.X).tolist() == fresh.model.predict(test.X).tolist()
