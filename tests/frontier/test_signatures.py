"""Cached and shipped entries that cannot be forged: a store serves only what this install signed
(with a key kept outside the cache) or what the package lists as shipped, however intact a
file's checksums are."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import stat
from pathlib import Path

import pytest

from fairengine.data import load_dataset
from fairengine.export import read_manifest, result_metadata, save_model
from fairengine.frontier import FrontierStore, task_key, trust
from fairengine.frontier.demo import demo_root, list_shipped
from fairengine.frontier.runcodec import decode_run, encode_run
from fairengine.frontier.runs import RUNS_DIR, RunStore, compute_and_store, run_key
from fairengine.frontier.store import SUFFIX as POINT_SUFFIX
from fairengine.methods import get_method

#: What a forged run would put on a page: an outside image and a link.
PLANTED_TEXT = "![x](https://example.com/planted.png) [click](https://example.com/p)"


@pytest.fixture(scope="module")
def split():
    return load_dataset("german_credit").split()


@pytest.fixture
def key_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh key for this test, outside its caches."""
    path = tmp_path / "config" / "signing.key"
    monkeypatch.setenv(trust.KEY_ENV, str(path))
    return path


def _forged(result, key: str) -> bytes:
    """A run file of ``result`` with the planted text in its artifacts: every checksum valid,
    no signature (what someone who can write the cache folder could plant)."""
    artifacts = {**result.artifacts, "summary": {"columns": [PLANTED_TEXT]}}
    return encode_run(dataclasses.replace(result, artifacts=artifacts), key)


def test_the_key_is_made_once_outside_the_cache_and_only_its_owner_may_read_it(key_file) -> None:
    key = trust.signing_key()
    assert len(key) == trust.KEY_BYTES and key_file.read_bytes() == key
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(key_file.parent.stat().st_mode) == 0o700
    assert trust.signing_key() == key  # made once


def test_a_key_others_can_read_is_refused_and_the_cache_is_kept(key_file, tmp_path, split) -> None:
    train, test = split
    store = RunStore(tmp_path / "cache")
    result = compute_and_store(store, "reweighing", train, test, {"strength": 0.5})
    path = next((tmp_path / "cache" / RUNS_DIR).rglob("*.fairrun"))
    os.chmod(key_file, 0o644)
    trust._KEYS.clear()
    with pytest.raises(PermissionError, match="chmod 600"):
        trust.signing_key()
    assert (
        RunStore(tmp_path / "cache").get(task_key(train, test), "reweighing", result.knobs) is None
    )
    assert path.exists()  # a key problem never deletes entries
    os.chmod(key_file, 0o600)
    assert store.get(task_key(train, test), "reweighing", result.knobs) is not None
    trust._KEYS.clear()


@pytest.mark.parametrize("where", ["cache", "shipped folder"])
def test_a_planted_run_with_valid_checksums_is_refused(
    key_file, tmp_path, split, where, monkeypatch
) -> None:
    train, test = split
    tkey = task_key(train, test)
    mine = RunStore(tmp_path / "mine")
    result = compute_and_store(mine, "reweighing", train, test, {"strength": 0.5})
    key = run_key(tkey, "reweighing", result.knobs)
    root = tmp_path / ("cache" if where == "cache" else "assets")
    planted = RunStore(root).path(tkey, "reweighing", key)
    planted.parent.mkdir(parents=True)
    planted.write_bytes(_forged(result, key))
    decode_run(planted.read_bytes(), key)  # the forgery is an intact run file
    store = RunStore(root) if where == "cache" else RunStore(tmp_path / "cache", read_only=(root,))
    assert store.get(tkey, "reweighing", result.knobs) is None
    # signed with another install's key: refused too
    other = key_file.with_name("other.key")
    other.write_bytes(os.urandom(trust.KEY_BYTES))
    os.chmod(other, 0o600)
    monkeypatch.setenv(trust.KEY_ENV, str(other))
    planted.write_bytes(trust.signed(_forged(result, key)))
    monkeypatch.setenv(trust.KEY_ENV, str(key_file))
    assert store.get(tkey, "reweighing", result.knobs) is None
    # where the store is the cache, the run is computed again and served, signed
    if where == "cache":
        again = compute_and_store(store, "reweighing", train, test, {"strength": 0.5})
        served = store.get(tkey, "reweighing", again.knobs)
        assert served is not None and "summary" not in served.artifacts


def test_a_planted_frontier_point_is_refused_and_dropped_from_the_cache(
    key_file, tmp_path, split
) -> None:
    train, test = split
    tkey = task_key(train, test)
    result = get_method("reweighing").run(train, test, strength=0.5)
    store = FrontierStore(tmp_path / "cache")
    path = store.put(tkey, result, result_metadata(result, train, test))
    assert store.get(tkey, "reweighing", result.knobs) is not None
    metadata = result_metadata(result, train, test)
    metadata["metrics"]["test"]["error"] = 0.0  # a better point than any method found
    metadata["store"] = read_manifest(path)["metadata"]["store"]
    save_model(result.model, path, metadata=metadata)  # intact checksums, no signature
    store = FrontierStore(tmp_path / "cache")
    assert store.get(tkey, "reweighing", result.knobs) is None
    assert not path.exists()  # dropped, so the sweep computes it again
    assert len(store.notices) == 1 and "not signed by this install" in store.notices[0]
    assert store.points(tkey) == []


def _shipped_entry(tmp_path: Path) -> tuple[Path, Path, dict]:
    """A copy of one shipped frontier point at its place in a copy of the demo folder."""
    source = next(demo_root().glob(f"*/*/*{POINT_SUFFIX}"))
    relative = source.relative_to(demo_root())
    root = tmp_path / "frontiers"
    copy = root / relative
    copy.parent.mkdir(parents=True)
    copy.write_bytes(source.read_bytes())
    return root, copy, read_manifest(copy)["metadata"]


def test_shipped_files_are_trusted_and_a_tampered_one_is_refused(key_file, tmp_path) -> None:
    root, copy, meta = _shipped_entry(tmp_path)
    store = FrontierStore(tmp_path / "cache", read_only=(root,))
    tkey, method, knobs = meta["store"]["task_key"], meta["method"], meta["knobs"]
    point = store.get(tkey, method, knobs)
    assert point is not None and store.load(point) is not None
    # the same entry with another metric, checksums recomputed: not the shipped bytes
    model = store.load(point)
    meta["metrics"]["test"] = {name: 0.0 for name in meta["metrics"]["test"]}
    save_model(model, copy, metadata=meta)
    before = copy.read_bytes()
    store = FrontierStore(tmp_path / "cache", read_only=(root,))
    assert store.get(tkey, method, knobs) is None and store.points(tkey) == []
    assert copy.read_bytes() == before  # a read-only root is never modified
    # one changed byte is refused as well
    data = bytearray(_shipped_entry(tmp_path / "again")[1].read_bytes())
    data[len(data) // 2] ^= 1
    copy.write_bytes(bytes(data))
    assert FrontierStore(tmp_path / "cache", read_only=(root,)).get(tkey, method, knobs) is None


def test_the_package_lists_exactly_the_shipped_files(tmp_path) -> None:
    """Every file in assets/frontiers is listed with its digest (so every shipped run and point
    loads) and nothing else is: ``fairengine precompute --list-only`` was run on what is
    committed."""
    listed = trust.shipped_digests()
    on_disk = {
        path.relative_to(demo_root()).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in demo_root().rglob("*")
        if path.is_file() and path.suffix in (".fairmodel", ".fairrun")
    }
    assert listed == on_disk and len(listed) > 100


def test_listing_a_damaged_demo_folder_fails_and_lists_nothing(tmp_path, monkeypatch) -> None:
    root, copy, _ = _shipped_entry(tmp_path)
    target = tmp_path / "shipped_digests.json"
    monkeypatch.setattr(trust, "SHIPPED_DIGESTS", target)
    monkeypatch.setattr(trust, "_SHIPPED", {})
    assert list_shipped(root, log=lambda _: None) == 1
    assert target.is_file() and len(trust.shipped_digests()) == 1
    copy.write_bytes(copy.read_bytes()[:-100])
    with pytest.raises(ValueError):
        list_shipped(root, log=lambda _: None)
    assert len(trust.shipped_digests()) == 1  # the earlier list stands


def test_a_key_that_cannot_be_made_keeps_every_entry(
    key_file, tmp_path, split, monkeypatch
) -> None:
    train, test = split
    tkey = task_key(train, test)
    result = get_method("reweighing").run(train, test, strength=0.5)
    path = FrontierStore(tmp_path / "cache").put(tkey, result, result_metadata(result, train, test))
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    monkeypatch.setenv(trust.KEY_ENV, str(blocked / "signing.key"))
    store = FrontierStore(tmp_path / "cache")
    assert store.get(tkey, "reweighing", result.knobs) is None
    assert path.exists() and any("cannot be made or read" in n for n in store.notices)
    monkeypatch.setenv(trust.KEY_ENV, str(key_file))
    assert FrontierStore(tmp_path / "cache").get(tkey, "reweighing", result.knobs) is not None
