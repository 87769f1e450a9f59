"""RunStore: complete runs (with artifacts) kept on disk as data, served by key, never executed."""

from __future__ import annotations

import contextlib
import dataclasses
import gzip
import io
import json
import logging
import os
import pickle
import stat
import struct
import sys
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairengine.data import load_dataset
from fairengine.export import safe
from fairengine.frontier import FrontierStore, runcodec, sweep, task_key
from fairengine.frontier.demo import DEFAULT_DATASET, demo_root, opening_task, shipped_knobs
from fairengine.frontier.runcodec import RunFileError, decode_run, encode_run, stored_key
from fairengine.frontier.runs import (
    LEGACY_SUFFIX,
    RUNS_DIR,
    SUFFIX,
    RunStore,
    compute_and_store,
    run_key,
)
from fairengine.frontier.trust import signed
from fairengine.methods import get_method, list_methods
from fairengine.methods.balanced_filtering.method import run_filter
from fairengine.methods.base import RunResult

from .run_equality import assert_same

#: Cheap but real settings of every registered method (and the dashboard's custom-target run).
CHEAP: dict[str, list[dict]] = {
    "reweighing": [{}],
    "fairlearn_eg": [{"max_iter": 10}],
    "threshold_optimizer": [{}],
    "balanced_filtering": [{"alpha": 0.1}],
    "maxent": [{"n_samples": 2000}],
    "noisy_groups": [
        {"n_steps": 100, "group_feature": "noisy"},
        {"n_steps": 30, "tuning": "grid"},  # the tuning table and the chosen setting
    ],
    "multiaccurate_proxy": [{"n_iter": 50, "max_rows": 1000}],
    "fair_regression": [{"n_levels": 20, "max_iter": 20}],
}


@pytest.fixture(scope="module")
def split():
    return load_dataset("german_credit").split()


@pytest.fixture(scope="module")
def adult():
    task = load_dataset("adult", sensitive="sex")
    rows = np.random.default_rng(0).choice(len(task.frame), 3000, replace=False)
    return task.subset(np.sort(rows)).split(random_state=0)


@pytest.fixture(scope="module")
def law_school():
    task = load_dataset("law_school")
    rows = np.random.default_rng(0).choice(len(task.frame), 1500, replace=False)
    return task.subset(np.sort(rows)).split(random_state=0)


@pytest.fixture(scope="module")
def stored(tmp_path_factory, split):
    """A real run stored in a fresh root: (store, task key, result, path)."""
    train, test = split
    store = RunStore(tmp_path_factory.mktemp("stored"))
    result = compute_and_store(store, "reweighing", train, test, {"strength": 0.5})
    tkey = task_key(train, test)
    return (
        store,
        tkey,
        result,
        store.path(tkey, "reweighing", run_key(tkey, "reweighing", result.knobs)),
    )


def test_a_stored_run_comes_back_whole_and_only_for_its_key(tmp_path: Path, split) -> None:
    train, test = split
    store = RunStore(tmp_path / "cache", read_only=(tmp_path / "shipped",))
    knobs = {"strength": 0.5}
    result = compute_and_store(store, "reweighing", train, test, knobs)
    tkey = task_key(train, test)
    again = store.get(tkey, "reweighing", result.knobs)
    assert again is not None
    assert_same(result, again)
    assert again.model.predict(test.X).tolist() == result.model.predict(test.X).tolist()
    assert store.get(tkey, "reweighing", {**result.knobs, "strength": 1.0}) is None
    assert store.get(tkey, "reweighing", result.knobs, extra={"target": (0.5, 0.5)}) is None
    assert run_key(tkey, "reweighing", result.knobs, {"target": None}) == run_key(
        tkey, "reweighing", result.knobs
    )
    # runs sit apart from the frontier points: the frontier store does not list them
    assert FrontierStore(tmp_path / "cache").points(tkey) == []
    assert store.notices == [] and store.size() > 0


# ----------------------------------------------------------------------------- planted files


class _Plant:
    """Unpickling this runs ``touch marker`` (what an attacker's cache file would do)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _evil_pickle(marker: Path) -> bytes:
    payload = pickle.dumps(("0" * 64, _Plant(marker)))
    assert not marker.exists()
    return payload


def _zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def _members(raw: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(raw)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def _forge(raw: bytes, *, manifest: dict | None = None, members: dict | None = None) -> bytes:
    """A run file with some members replaced and the manifest's checksums made to match."""
    parts = _members(raw)
    parts.update(members or {})
    head = json.loads(parts.pop("manifest.json"))
    head.pop("manifest_sha256")
    head["checksums"] = {name: runcodec._sha256(data) for name, data in sorted(parts.items())}
    head.update(manifest or {})
    head["manifest_sha256"] = runcodec._sha256(runcodec._dumps(head))
    return _zip({"manifest.json": runcodec._dumps(head), **parts})


def _npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=True)
    return buffer.getvalue()


def _huge_declared_size(raw: bytes) -> bytes:
    """``raw`` with the first member's uncompressed size in the zip directory set to 4 GiB - 2."""
    data = bytearray(raw)
    at = struct.unpack_from("<L", data, len(data) - 22 + 16)[0]  # the end record's offset
    assert data[at : at + 4] == b"PK\x01\x02"
    struct.pack_into("<L", data, at + 24, 0xFFFFFFFE)
    return bytes(data)


def _with_field(members: dict[str, bytes], name: str, node: dict) -> bytes:
    """``run.json`` with the node of field ``name`` replaced."""
    fields = json.loads(members["run.json"])["fields"]
    return json.dumps({"fields": {**fields, name: node}}).encode()


def _planted_files(raw: bytes, marker: Path) -> dict[str, bytes]:
    """Bad files planted under a run's path: none may run code, all must be misses."""
    evil = _evil_pickle(marker)
    valid = _members(raw)
    evil_array = np.empty(1, dtype=object)
    evil_array[0] = _Plant(marker)
    return {
        "an old-style gzip pickle": gzip.compress(evil),
        "a bare pickle": evil,
        "a pickled object array under valid checksums": _forge(
            raw,
            members={
                "arrays/0.npy": _npy(evil_array),
                "run.json": _with_field(valid, "artifacts", {"t": "array", "m": 0}),
            },
        ),
        "a pickle as the model file, under valid checksums": _forge(
            raw, members={"models/0.fairmodel": evil}
        ),
        "a member changed without its checksum": _zip(
            {**valid, "run.json": valid["run.json"].replace(b'"reweighing"', b'"reweighinG"')}
        ),
        "a whole file of another key": _forge(raw, manifest={"key": "0" * 64}),
        "a huge declared size": _huge_declared_size(raw),
        "another format version": _forge(raw, manifest={"format_version": 2}),
        "another format": _forge(raw, manifest={"format": "fairengine-model"}),
        "a class named by the file": _forge(
            raw,
            members={
                "run.json": _with_field(
                    valid, "elapsed", {"t": "dataclass", "name": "planted.Evil", "fields": {}}
                )
            },
        ),
        "an unused extra member": _forge(raw, members={"arrays/99.npy": _npy(np.zeros(3))}),
        "not a zip": b"not a zip at all",
    }


def _write_signed(path: Path, data: bytes) -> None:
    """Write ``data`` signed with this install's key where it can be (a zip archive without a
    comment), so that what refuses a forgery is the reader's own checks, not the signature."""
    with contextlib.suppress(ValueError):
        data = signed(data)
    path.write_bytes(data)


def _without_signature(raw: bytes) -> bytes:
    """A stored run file as it was before it was signed (its zip comment removed)."""
    with zipfile.ZipFile(io.BytesIO(raw)) as archive:
        comment = archive.comment
    return raw[: len(raw) - len(comment) - 2] + b"\0\0"


def test_planted_files_never_run_and_are_misses(tmp_path: Path, stored, caplog) -> None:
    store, tkey, result, path = stored
    raw = _without_signature(path.read_bytes())
    marker = tmp_path / "marker"
    shipped = RunStore(tmp_path / "shipped")
    planted = shipped.path(tkey, "reweighing", run_key(tkey, "reweighing", result.knobs))
    planted.parent.mkdir(parents=True)
    reader = RunStore(tmp_path / "empty", read_only=(shipped.root,))
    for what, data in _planted_files(raw, marker).items():
        _write_signed(planted, data)
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="fairengine.frontier"):
            assert reader.get(tkey, "reweighing", result.knobs) is None, what
        assert not marker.exists(), what
        assert "Skipping unreadable run" in caplog.text, what
        print(f"{what}: {caplog.records[0].getMessage().split(': ', 1)[1][:110]}")
    assert "planted" not in sys.modules
    # the same file, left as it was written, is served: the misses were the forgeries
    _write_signed(planted, raw)
    assert reader.get(tkey, "reweighing", result.knobs) is not None
    # an old-style file beside it is never even opened
    planted.with_name(planted.name.replace(SUFFIX, LEGACY_SUFFIX)).write_bytes(
        gzip.compress(_evil_pickle(marker))
    )
    planted.unlink()
    assert reader.get(tkey, "reweighing", result.knobs) is None and not marker.exists()


def test_a_file_over_the_size_limit_is_not_read(tmp_path: Path, stored, caplog) -> None:
    store, tkey, result, path = stored
    shipped = RunStore(tmp_path / "shipped")
    planted = shipped.path(tkey, "reweighing", run_key(tkey, "reweighing", result.knobs))
    planted.parent.mkdir(parents=True)
    with open(planted, "wb") as handle:  # sparse: no disk used
        handle.truncate(safe.MAX_FILE_BYTES + 1)
    with caplog.at_level(logging.WARNING, logger="fairengine.frontier"):
        assert (
            RunStore(tmp_path / "x", read_only=(shipped.root,)).get(
                tkey, "reweighing", result.knobs
            )
            is None
        )
    assert "the limit is" in caplog.text


def test_decode_checks_the_key_before_any_value(stored, monkeypatch) -> None:
    _, _, _, path = stored
    raw = path.read_bytes()
    built = []
    monkeypatch.setattr(runcodec.Decoder, "run", lambda self, tree: built.append(tree))
    with pytest.raises(RunFileError, match="holds key"):
        decode_run(raw, "f" * 64)
    assert built == []
    assert stored_key(raw).startswith(path.name[: -len(SUFFIX)])  # read from the manifest alone


# ----------------------------------------------------------------------------- codec


@runcodec.register_dataclass
@dataclasses.dataclass
class _Check:
    name: str
    passed: bool
    detail: dict


def _exotic_artifacts() -> dict:
    frame = pd.DataFrame(
        {
            "s": pd.Series(["a", None, "c"], dtype="str"),
            "S": pd.Series(["a", None, "c"], dtype="string"),
            "i": np.array([1, 2, 3], dtype=np.int32),
            "b": [True, False, True],
            "c": pd.Categorical(["x", "y", "x"], categories=["y", "x"], ordered=True),
            "n": pd.array([1, None, 3], dtype="Int64"),
            "o": pd.Series(["mixed", 1, None], dtype=object),
            "f": [np.nan, np.inf, -0.0],
        },
        index=pd.Index(["r1", "r2", "r3"], name="row"),
    )
    frame.attrs["note"] = "kept"
    twins = pd.DataFrame(np.eye(2), columns=["dup", "dup"], index=pd.RangeIndex(5, 9, 2, name="k"))
    return {
        "frame": frame,
        "twins": twins,
        "empty": pd.DataFrame(),
        "series": pd.Series([0.5, np.nan], index=pd.Index([3, 7]), name=("a", 1)),
        "cat_index": pd.Series([1, 2], index=pd.CategoricalIndex(["p", "q"])),
        "scalars": [np.float32(1.5), np.int64(-3), np.bool_(True), np.float64("nan"), 10**30],
        "floats": (float("nan"), float("inf"), -float("inf"), 0.1),
        "keys": {1: "one", (2, "b"): [None], None: {}, 2.5: ()},
        "names": np.array(["Female", "Male"]),
        "labels": np.array([["a", None], [np.nan, 3]], dtype=object),
        "grid": np.arange(24.0).reshape(2, 3, 4, order="F"),
        "bools": np.array([[True], [False]]),
        "check": _Check("margin", True, {"value": np.float64(0.25)}),
        "nested": {"a": [{"b": (1, [2.0, {"c": "d"}])}]},
    }


def test_the_codec_round_trips_every_supported_type(stored) -> None:
    _, _, result, _ = stored
    run = dataclasses.replace(result, artifacts=_exotic_artifacts(), elapsed=float("inf"))
    raw = encode_run(run, "k" * 64)
    back = decode_run(raw, "k" * 64)
    assert_same(run, back)
    assert back.artifacts["frame"].attrs == {"note": "kept"}
    fields = json.loads(_members(raw)["run.json"])["fields"]
    assert list(fields) == [f.name for f in dataclasses.fields(RunResult)]  # every field, generic
    print(f"exotic run: {len(raw):,} bytes, {len(_members(raw))} members")


@pytest.mark.parametrize(
    ("value", "named"),
    [
        ({1, 2}, "set"),
        (lambda: None, "function"),
        (pd.Series([[1], [2]], dtype=object), "item 0 is a list"),
        (pd.Series(pd.to_datetime(["2020-01-01"])), "datetime64"),
        (np.array([object()], dtype=object), "item 0 is a object"),
        (np.array([1 + 2j]), "complex128"),
        (pd.DataFrame({"a": [1]}, index=pd.MultiIndex.from_tuples([(1, 2)])), "MultiIndex"),
        (dataclasses.make_dataclass("Unregistered", ["x"])(1), "Unregistered"),
        (Path("/etc"), "PosixPath"),
        ({"a": {"b": [[[[[[[[[[[[[[1]]]]]]]]]]]]]]}}, "nested too deeply"),
    ],
)
def test_what_cannot_be_stored_is_a_clear_type_error(stored, value, named, tmp_path) -> None:
    _, tkey, result, _ = stored
    run = dataclasses.replace(result, artifacts={"thing": value})
    with pytest.raises(TypeError, match=named) as info:
        RunStore(tmp_path).put(tkey, run)
    print(info.value)
    assert not list(tmp_path.rglob(f"*{SUFFIX}"))


def test_a_run_that_cannot_be_stored_is_still_returned(split, tmp_path, caplog) -> None:
    train, test = split

    def with_a_set(train, test, **knobs):
        result = get_method("reweighing").run(train, test, **knobs)
        return dataclasses.replace(result, artifacts={"groups": {"a", "b"}})

    store = RunStore(tmp_path)
    with caplog.at_level(logging.WARNING, logger="fairengine.frontier"):
        result = compute_and_store(store, "reweighing", train, test, {}, function=with_a_set)
    assert result.artifacts == {"groups": {"a", "b"}}
    assert "Could not store the run" in caplog.text and store.size() == 0


def _cases() -> list[tuple[str, dict]]:
    return [(name, knobs) for name, settings in CHEAP.items() for knobs in settings]


def test_every_registered_method_is_covered() -> None:
    assert set(CHEAP) == set(list_methods())


@pytest.mark.parametrize(("method", "knobs"), _cases(), ids=[f"{m}-{i}" for m, i in _cases()])
def test_every_method_run_round_trips(method, knobs, adult, law_school, tmp_path) -> None:
    train, test = law_school if method == "fair_regression" else adult
    store = RunStore(tmp_path)
    result = compute_and_store(store, method, train, test, knobs)
    back = store.get(task_key(train, test), method, result.knobs)
    assert back is not None, f"{method} was not stored"
    assert_same(result, back)
    size = store.size()
    assert size < 2_000_000
    print(f"{method} {knobs}: {size:,} bytes")


def test_the_dashboards_custom_target_run_round_trips(adult, tmp_path) -> None:
    train, test = adult
    store = RunStore(tmp_path)
    extra = {"target": (0.3, 0.7)}
    result = compute_and_store(
        store, "balanced_filtering", train, test, {"alpha": 0.1}, extra, function=run_filter
    )
    back = store.get(task_key(train, test), "balanced_filtering", result.knobs, extra)
    assert back is not None
    assert_same(result, back)
    assert store.get(task_key(train, test), "balanced_filtering", result.knobs) is None


# ----------------------------------------------------------------------------- shared roots


def _chmod(path: Path, mode: int) -> None:
    path.mkdir(parents=True, exist_ok=True)
    os.chmod(path, mode)


def test_a_root_every_user_can_write_is_refused_with_a_notice(tmp_path, stored, split) -> None:
    _, tkey, result, path = stored
    shared = tmp_path / "shared"
    copy = RunStore(shared).path(tkey, "reweighing", path.stem)
    copy.parent.mkdir(parents=True)
    copy.write_bytes(path.read_bytes())
    assert RunStore(shared).get(tkey, "reweighing", result.knobs) is not None
    _chmod(shared, 0o777)
    store = RunStore(shared)
    assert store.get(tkey, "reweighing", result.knobs) is None
    assert len(store.notices) == 1 and "writable by every user" in store.notices[0]
    assert str(shared) in store.notices[0]
    print(store.notices[0])
    # it does not write there either, and a run still computes (it is just not kept)
    train, test = split
    again = compute_and_store(store, "reweighing", train, test, {"strength": 0.25})
    assert again.metrics and store.get(tkey, "reweighing", again.knobs) is None
    assert len(store.notices) == 1  # said once
    # a read-only root with the problem is skipped; the writable root still works
    mine = RunStore(tmp_path / "mine", read_only=(shared,))
    compute_and_store(mine, "reweighing", train, test, {"strength": 0.25})
    assert mine.get(tkey, "reweighing", again.knobs) is not None
    assert mine.get(tkey, "reweighing", result.knobs) is None and mine.notices
    # the sticky bit (like /tmp) makes it safe again: others cannot swap what is ours
    os.chmod(shared, 0o1777)
    assert RunStore(shared).get(tkey, "reweighing", result.knobs) is not None


def test_a_folder_below_the_root_is_checked_too(tmp_path, stored) -> None:
    _, tkey, result, path = stored
    root = tmp_path / "root"
    copy = RunStore(root).path(tkey, "reweighing", path.stem)
    copy.parent.mkdir(parents=True)
    copy.write_bytes(path.read_bytes())
    os.chmod(root / RUNS_DIR / tkey[:20], 0o777)
    store = RunStore(root)
    assert store.get(tkey, "reweighing", result.knobs) is None and store.notices
    os.chmod(root / RUNS_DIR / tkey[:20], 0o755)
    os.chmod(copy, 0o666)
    assert RunStore(root).get(tkey, "reweighing", result.knobs) is None
    os.chmod(copy, 0o644)
    assert RunStore(root).get(tkey, "reweighing", result.knobs) is not None


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs chown")
def test_a_root_owned_by_another_user_is_refused(tmp_path, stored) -> None:
    _, tkey, result, path = stored
    root = tmp_path / "theirs"
    copy = RunStore(root).path(tkey, "reweighing", path.stem)
    copy.parent.mkdir(parents=True)
    copy.write_bytes(path.read_bytes())
    os.chown(root, 65534, 65534)
    store = RunStore(root)
    assert store.get(tkey, "reweighing", result.knobs) is None
    assert "belongs to another user" in store.notices[0]


def test_the_frontier_store_refuses_such_roots_too(tmp_path, split) -> None:
    train, test = split
    shared = tmp_path / "shared"
    sweep("reweighing", train, test, {"strength": [0.0, 1.0]}, store=FrontierStore(shared))
    tkey = task_key(train, test)
    assert len(FrontierStore(shared).points(tkey)) == 2
    _chmod(shared, 0o777)
    store = FrontierStore(tmp_path / "mine", read_only=(shared,))
    assert store.points(tkey) == [] and store.get(tkey, "reweighing", {"strength": 0.0}) is None
    assert len(store.notices) == 1 and "writable by every user" in store.notices[0]
    frontier = sweep("reweighing", train, test, {"strength": [0.0]}, store=store)  # no crash
    assert frontier.points["point_id"].nunique() == 1 and len(store.points(tkey)) == 1
    os.chmod(shared, 0o755)
    os.chmod(shared / tkey[:20], 0o777)  # a task folder below a good root
    below = FrontierStore(shared)
    assert below.points(tkey) == [] and "writable by every user" in below.notices[0]


def test_the_store_never_makes_a_folder_it_would_refuse(tmp_path, split) -> None:
    train, test = split
    old = os.umask(0)
    try:
        store = RunStore(tmp_path / "fresh" / "cache")
        result = compute_and_store(store, "reweighing", train, test, {})
        points = FrontierStore(tmp_path / "points" / "cache")
        sweep("reweighing", train, test, {"strength": [0.0]}, store=points)
    finally:
        os.umask(old)
    tkey = task_key(train, test)
    assert store.get(tkey, "reweighing", result.knobs) is not None and store.notices == []
    assert len(points.points(tkey)) == 1 and points.notices == []
    made = [p for p in tmp_path.rglob("*") if p.is_dir()]
    assert len(made) >= 8
    assert not [p for p in made if stat.S_IMODE(p.stat().st_mode) & stat.S_IWOTH]


# ----------------------------------------------------------------------------- shipped runs


def test_the_shipped_runs_load_under_the_keys_the_pages_ask_for() -> None:
    """Every file under assets/frontiers/runs decodes under its own key; every method's default
    run on each of its demo tasks (and the default dataset) is there, and on the task its page
    opens on one run per slider position of its ``demo_knob``, as precompute writes them. Beside
    them only what those runs reuse (``@``-named entries: unconstrained fits, stored tables) of
    the same tasks."""
    runs = demo_root() / RUNS_DIR
    files = sorted(runs.rglob("*"))
    assert not [p for p in files if p.name.endswith(LEGACY_SUFFIX)]
    entries = [p for p in files if p.is_file()]
    for path in entries:
        raw = path.read_bytes()
        key = stored_key(raw)
        result = decode_run(raw, key)
        assert path.name == f"{key[:32]}{SUFFIX}" and path.parent.name == result.method
    store = RunStore(demo_root())
    expected = set()
    loaded = {}
    for name in list_methods():
        method = get_method(name)
        pairs = dict.fromkeys([*method.demo_tasks, (DEFAULT_DATASET, None)])
        for pair in pairs:
            if pair not in loaded:
                loaded[pair] = load_dataset(pair[0], sensitive=pair[1])
        usable = [pair for pair in pairs if loaded[pair].kind in method.kinds]
        for pair in usable:
            train, test = loaded[pair].split()
            tkey = task_key(train, test)
            for knobs in shipped_knobs(method, pair == opening_task(usable)):
                assert store.get(tkey, name, knobs) is not None, f"{name} on {pair} at {knobs}"
                expected.add(store.path(tkey, name, run_key(tkey, name, knobs)))
    reused = [p for p in entries if p.parent.name.startswith("@")]
    assert set(entries) - set(reused) == expected and store.notices == []
    assert {p.parent.parent for p in reused} <= {p.parent.parent for p in expected}
    size = sum(p.stat().st_size for p in entries)
    print(f"{len(expected)} shipped runs and {len(reused)} reused entries, {size:,} bytes")
