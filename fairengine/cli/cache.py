"""The command line's fast path: a sweep whose every point is already in the FrontierStore.

Design notes: docs/architecture.md, "The command line's fast path".
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import fairengine

if TYPE_CHECKING:
    import argparse

    from fairengine.frontier.result import PointRecord
    from fairengine.frontier.store import FrontierStore
    from fairengine.methods.base import Method

MEMO_FILE = "task_keys.json"
#: Entries kept in the memo (the oldest are dropped first).
MEMO_MAX = 512
_MEMO_VERSION = 1
#: Distributions whose behaviour enters a task key (reading, hashing, splitting the rows).
_LIBRARIES = ("numpy", "pandas", "pyarrow", "scikit-learn")
#: Engine sources that decide a task key: the data layer and the key functions.
_SOURCES = ("data", "frontier/keys.py")
_CHUNK = 1 << 20


def task_fingerprint(args: argparse.Namespace) -> str | None:
    """The memo key of the task the arguments describe, or None when it cannot be computed
    cheaply (no data source, an unreadable file): the caller then builds the task."""
    from fairengine.data.registry import get_info
    from fairengine.resources import assets_dir

    try:
        if (args.dataset is None) == (args.data is None):
            return None
        if args.dataset is not None:
            path = assets_dir() / "datasets" / get_info(args.dataset).filename
            source: dict[str, Any] = {"dataset": args.dataset}
        else:
            path = Path(args.data)
            source = {"file": str(path.expanduser().resolve())}
        content = _file_digest(path)
    except Exception:
        return None
    options = {
        "memo": _MEMO_VERSION,
        "source": source,
        "content": content,
        "target": args.target,
        "sensitive": list(args.sensitive) if args.sensitive else None,
        "features": list(args.features) if args.features else None,
        "kind": args.kind,
        "positive_label": args.positive_label,
        "drop_missing": bool(args.drop_missing),
        "merge_small_groups": bool(args.merge_small_groups),
        "test_size": repr(float(args.test_size)),
        "split_seed": int(args.split_seed),
        "engine": fairengine.__version__,
        "code": _code_digest(),
        "libraries": _library_versions(),
    }
    return hashlib.sha256(json.dumps(options, sort_keys=True).encode()).hexdigest()


def recall_task_key(root: Path, fingerprint: str) -> str | None:
    """The task key remembered for ``fingerprint`` under the store ``root``, if any."""
    key = _read_memo(root).get(fingerprint)
    return key if isinstance(key, str) and len(key) == 64 else None


def remember_task_key(root: Path, fingerprint: str, task_key: str) -> None:
    """Record ``task_key`` for ``fingerprint`` (atomically; a store that cannot be written is
    skipped silently: the memo only saves time)."""
    memo = _read_memo(root)
    if memo.get(fingerprint) == task_key:
        return
    memo.pop(fingerprint, None)
    memo[fingerprint] = task_key
    while len(memo) > MEMO_MAX:
        memo.pop(next(iter(memo)))
    with contextlib.suppress(OSError):
        root.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=root, prefix=f".{MEMO_FILE}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(memo, handle)
            os.replace(tmp, root / MEMO_FILE)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def cached_records(
    method: Method,
    settings: Sequence[Mapping[str, Any]],
    task_key: str,
    store: FrontierStore,
) -> list[PointRecord] | None:
    """The sweep's records if *every* setting is in ``store`` (as :func:`sweep` would serve
    them: equal settings once, grid order); None as soon as one is missing."""
    from fairengine.frontier.result import PointRecord
    from fairengine.frontier.store import point_key

    keyed: dict[str, dict[str, Any]] = {}
    for knobs in settings:
        keyed.setdefault(point_key(task_key, method.name, knobs), dict(knobs))
    records = []
    for key, knobs in keyed.items():
        cached = store.get(task_key, method.name, knobs)
        if cached is None:
            return None
        records.append(PointRecord.from_stored(key, knobs, cached))
    return records


def _read_memo(root: Path) -> dict[str, Any]:
    try:
        memo = json.loads((root / MEMO_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return memo if isinstance(memo, dict) else {}


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _code_digest() -> str:
    package = Path(fairengine.__file__).parent
    digest = hashlib.sha256()
    for name in _SOURCES:
        path = package / name
        files = sorted(path.glob("*.py")) if path.is_dir() else [path]
        for file in files:
            digest.update(file.name.encode() + b"\0" + file.read_bytes() + b"\0")
    return digest.hexdigest()


def _library_versions() -> dict[str, str | None]:
    from importlib import metadata

    versions: dict[str, str | None] = {}
    for name in _LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions
