"""The command line's fast path: a sweep whose every point is already in the FrontierStore.

Design notes: docs/architecture.md, "The command line's fast path".
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import fairengine

if TYPE_CHECKING:
    import argparse

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


def task_fingerprint(args: argparse.Namespace) -> str | None:
    """The memo key of the task the arguments describe, or None when it cannot be computed
    cheaply (no data source, an unreadable file): the caller then builds the task."""
    from fairengine.data.registry import get_info
    from fairengine.resources import assets_dir, package_versions

    try:
        if (args.dataset is None) == (args.data is None):
            return None
        if args.dataset is not None:
            path = assets_dir() / "datasets" / get_info(args.dataset).filename
            source: dict[str, Any] = {"dataset": args.dataset}
        else:
            path = Path(args.data)
            source = {"file": str(path.expanduser().resolve())}
        with open(path, "rb") as handle:
            content = hashlib.file_digest(handle, "sha256").hexdigest()
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
        "libraries": package_versions(_LIBRARIES),
    }
    return hashlib.sha256(json.dumps(options, sort_keys=True).encode()).hexdigest()


def cached_sweep(
    args: argparse.Namespace, method: Method, grid: dict[str, list[str]]
) -> list[dict[str, Any]] | None:
    """The sweep's records when *every* point is already in the store (as :func:`sweep` would
    serve them: equal settings once, grid order), without building the task (no pandas,
    scikit-learn or method algorithm imported, so a listing starts at once); None otherwise."""
    from fairengine.cli.shared import open_store
    from fairengine.frontier import expand_grid
    from fairengine.frontier.result import PointRecord, plain_records
    from fairengine.frontier.store import point_key

    store = open_store(args)
    fingerprint = None if store is None else task_fingerprint(args)
    if fingerprint is None:
        return None
    tkey = _read_memo(store.root).get(fingerprint)
    if not (isinstance(tkey, str) and len(tkey) == 64):
        return None
    keyed: dict[str, dict[str, Any]] = {}
    for combo in expand_grid(grid):
        knobs = method.validate_knobs(combo)
        keyed.setdefault(point_key(tkey, method.name, knobs), dict(knobs))
    records = []
    for key, knobs in keyed.items():
        cached = store.get(tkey, method.name, knobs)
        if cached is None:
            return None
        records.append(PointRecord.from_stored(key, knobs, cached))
    axes = (method.fairness_metric, method.performance_metric)
    return plain_records(method.name, records, axes, [k.name for k in method.knobs])


def remember_task_key(args: argparse.Namespace, store: FrontierStore | None, task_key: str) -> None:
    """Record ``task_key`` for these data options beside ``store``, so the next fully cached
    sweep need not build the task (atomically; a store that cannot be written is skipped
    silently: the memo only saves time)."""
    fingerprint = None if store is None else task_fingerprint(args)
    if fingerprint is None:
        return
    root, memo = store.root, _read_memo(store.root)
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
        finally:  # gone once replaced; a failure leaves no temporary file
            Path(tmp).unlink(missing_ok=True)


def _read_memo(root: Path) -> dict[str, Any]:
    try:
        memo = json.loads((root / MEMO_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return memo if isinstance(memo, dict) else {}


def _code_digest() -> str:
    package = Path(fairengine.__file__).parent
    digest = hashlib.sha256()
    for name in _SOURCES:
        path = package / name
        files = sorted(path.glob("*.py")) if path.is_dir() else [path]
        for file in files:
            digest.update(file.name.encode() + b"\0" + file.read_bytes() + b"\0")
    return digest.hexdigest()
