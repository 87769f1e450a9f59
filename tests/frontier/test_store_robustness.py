"""FrontierStore against odd files: FIFOs, orphan temp files, read-only roots, and
entries whose manifest reads but whose model is damaged."""

from __future__ import annotations

import os
import stat
import time
import zipfile
from pathlib import Path

import pytest

from fairengine.data import load_dataset
from fairengine.export import result_metadata
from fairengine.frontier import FrontierStore, task_key
from fairengine.frontier import store as store_module
from fairengine.frontier.trust import signed
from fairengine.methods import get_method

KNOBS = {"strength": 0.5, "C": 1.0}


@pytest.fixture(scope="module")
def split():
    return load_dataset("german_credit").split()


@pytest.fixture(scope="module")
def run(split):
    return get_method("reweighing").run(*split, **KNOBS)


@pytest.fixture(scope="module")
def tkey(split):
    return task_key(*split)


def put(store: FrontierStore, tkey: str, run, split) -> Path:
    return store.put(tkey, run, result_metadata(run, *split))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifo_named_like_an_entry_is_ignored_without_blocking(tmp_path, tkey, run, split):
    store = FrontierStore(tmp_path)
    path = put(store, tkey, run, split)
    fifo = path.with_name("0" * 32 + ".fairmodel")
    os.mkfifo(fifo)
    # a FIFO in place of the very entry get() looks for, too
    other = FrontierStore(tmp_path / "other")
    os.makedirs(other.path(tkey, "reweighing", other.key(tkey, "reweighing", KNOBS)).parent)
    os.mkfifo(other.path(tkey, "reweighing", other.key(tkey, "reweighing", KNOBS)))
    assert [p.path for p in store.points(tkey)] == [path]  # returns: the FIFO is never opened
    assert other.get(tkey, "reweighing", KNOBS) is None
    assert other.points(tkey) == []
    assert stat.S_ISFIFO(fifo.stat().st_mode)  # left alone: not ours to delete


def test_old_temp_files_are_cleaned_recent_ones_kept(tmp_path, tkey, run, split):
    store = FrontierStore(tmp_path)
    path = put(store, tkey, run, split)
    old = path.with_name(f".{path.name}.abc123.tmp")
    fresh = path.with_name(f".{path.name}.def456.tmp")
    old.write_bytes(b"partial")
    fresh.write_bytes(b"partial")
    past = time.time() - store_module.TEMP_MAX_AGE - 60
    os.utime(old, (past, past))
    store.points(tkey)
    assert not old.exists() and fresh.exists()  # a live writer's temp file is not touched


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores permissions")
def test_clear_on_read_only_root_gives_a_notice(tmp_path, tkey, run, split):
    store = FrontierStore(tmp_path)
    path = put(store, tkey, run, split)
    method_dir = path.parent
    method_dir.chmod(0o500)
    try:
        assert store.clear() == 0
        assert store.notices and "Could not clear" in store.notices[-1]
    finally:
        method_dir.chmod(0o700)


def test_clear_on_read_only_root_gives_a_notice_even_as_root(tmp_path, tkey, monkeypatch):
    store = FrontierStore(tmp_path)
    (tmp_path / tkey[:20] / "reweighing").mkdir(parents=True)
    (tmp_path / tkey[:20] / "reweighing" / ("a" * 32 + ".fairmodel")).write_bytes(b"x")

    def refuse(self, missing_ok=False):
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "unlink", refuse)
    assert store.clear() == 0
    assert "Permission denied" in store.notices[-1]


def test_entry_with_damaged_model_is_dropped_with_a_notice(tmp_path, tkey, run, split):
    store = FrontierStore(tmp_path)
    path = put(store, tkey, run, split)
    # keep the manifest readable, damage a data member: points() lists it, load() must not raise
    with zipfile.ZipFile(path) as archive:
        members = {i.filename: archive.read(i) for i in archive.infolist()}
    victim = next(name for name in members if not name.startswith("manifest"))
    members[victim] = members[victim][::-1]
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    path.write_bytes(signed(path.read_bytes()))  # ours, but damaged: load() is what finds it
    (point,) = store.points(tkey)
    assert store.load(point) is None
    assert not path.exists()
    assert "Dropped a damaged frontier cache entry" in store.notices[-1]
