"""Whole runs (model, metrics and the page's artifacts) cached on disk, next to the frontiers.

Design notes: docs/architecture.md, "The run store".
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from fairengine.data import Task
from fairengine.export import safe
from fairengine.frontier.keys import point_key, task_key
from fairengine.frontier.runcodec import decode_run, encode_run
from fairengine.frontier.store import is_regular_file, read_regular_file
from fairengine.frontier.trust import Roots, entry_problem, make_dirs, write_signed
from fairengine.methods.base import Method, RunResult
from fairengine.methods.evidence_fits import stored_fits

__all__ = ["RUNS_DIR", "SUFFIX", "RunStore", "compute_and_store", "run_key"]

logger = logging.getLogger("fairengine.frontier")

RUNS_DIR = "runs"
SUFFIX = ".fairrun"
#: The store's name for unconstrained-baseline fits (``runs/<task>/@unconstrained/``): not a
#: method name, so no run is ever stored under it.
FITS_METHOD = "@unconstrained"
#: The same for tables of a run that depend on the rows but not on the knobs (``@tables``).
TABLES_METHOD = "@tables"
SPLITS = ("train", "test")
#: The suffix of the gzip-pickled runs older engines wrote: never read, removed when replaced.
LEGACY_SUFFIX = ".run.gz"


def run_key(
    tkey: str, method: str, knobs: Mapping[str, Any], extra: Mapping[str, Any] | None = None
) -> str:
    """Store key of a run: the frontier point key of ``knobs``, with each ``extra`` setting
    added under ``"@name"`` (so an extra never collides with a knob)."""
    settings = dict(knobs)
    for name, value in (extra or {}).items():
        if value is not None:
            settings[f"@{name}"] = value
    return point_key(tkey, method, settings)


class RunStore(Roots):
    """Complete runs on disk: a writable root plus read-only roots (the shipped demo runs).

    Parameters
    ----------
    root : path
        The writable frontier-store root; runs live in its ``runs/`` folder.
    read_only : sequence of path
        Frontier-store roots that are only read (e.g. ``assets/frontiers``).
    """

    def __repr__(self) -> str:
        return f"RunStore({str(self.root)!r}, read_only={[str(p) for p in self.read_only]})"

    def path(self, tkey: str, method: str, key: str, *, root: Path | None = None) -> Path:
        base = self.root if root is None else root
        return base / RUNS_DIR / tkey[:20] / method / f"{key[:32]}{SUFFIX}"

    def get(
        self,
        tkey: str,
        method: str,
        knobs: Mapping[str, Any],
        extra: Mapping[str, Any] | None = None,
    ) -> RunResult | None:
        """The stored run, or None if absent, unreadable or not trusted (never raises for those)."""
        key = run_key(tkey, method, knobs, extra)
        for root in (self.root, *self.read_only):
            path = self.path(tkey, method, key, root=root)
            if not self._trusted(root, path) or not is_regular_file(path):
                continue
            try:
                _, raw = read_regular_file(path, max_bytes=safe.MAX_FILE_BYTES)
                problem = entry_problem(root, path, raw)
                if problem is not None:
                    logger.warning("Skipping unreadable run %s: %s", path, problem)
                    continue
                return decode_run(raw, key, label=f"Run file {path.name}")
            except Exception as exc:  # any damage is a miss, never an error
                logger.warning("Skipping unreadable run %s: %s", path, exc)
        return None

    def put(
        self,
        tkey: str,
        result: RunResult,
        knobs: Mapping[str, Any] | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> Path:
        """Store ``result`` atomically (temp file + ``os.replace``) and return its path.

        Raises
        ------
        TypeError
            If the run holds something a run file cannot store (nothing is written).
        PermissionError
            If the root is one another user could write (see :mod:`.trust`).
        """
        knobs = dict(result.knobs if knobs is None else knobs)
        key = run_key(tkey, result.method, knobs, extra)
        data = encode_run(result, key)
        path = self.path(tkey, result.method, key)
        if not self._trusted(self.root, path.parent):
            raise PermissionError(self.notices[-1])
        make_dirs(path.parent)
        write_signed(path, data)
        path.with_name(f"{key[:32]}{LEGACY_SUFFIX}").unlink(missing_ok=True)
        return path

    def get_fit(self, train: Task, test: Task, key: tuple) -> tuple[np.ndarray, np.ndarray] | None:
        """The stored (train, test) predictions of the unconstrained learner ``key`` on these
        rows, or None if absent, unreadable or not of these rows (never raises for those)."""
        artifacts = self._entry(train, test, FITS_METHOD, key)
        if artifacts is None:
            return None
        value = tuple(artifacts.get(name) for name in SPLITS)
        for array, n in zip(value, (len(train.y), len(test.y)), strict=True):
            shaped = isinstance(array, np.ndarray) and array.dtype == np.float64
            if not (shaped and array.shape == (n,) and np.all(np.isfinite(array))):
                logger.warning("Skipping a stored unconstrained fit that does not match its rows.")
                return None
        return value  # type: ignore[return-value]

    def put_fit(
        self, train: Task, test: Task, key: tuple, value: tuple[np.ndarray, np.ndarray]
    ) -> None:
        """Keep the unconstrained learner's predictions (a store that cannot be written is
        logged, never an error: the fit is only not reused)."""
        arrays = {name: np.asarray(v, dtype=float) for name, v in zip(SPLITS, value, strict=True)}
        self._keep(train, test, FITS_METHOD, key, arrays, "the unconstrained fit")

    def get_table(self, train: Task, test: Task, key: tuple) -> dict | None:
        """A stored table of these rows under ``key`` (:func:`~fairengine.methods.evidence.
        stored_table`), or None if absent, unreadable or not trusted."""
        value = (self._entry(train, test, TABLES_METHOD, key) or {}).get("value")
        return value if isinstance(value, dict) else None

    def put_table(self, train: Task, test: Task, key: tuple, value: dict) -> None:
        """Keep a table of these rows under ``key`` (failures are logged, never raised)."""
        self._keep(train, test, TABLES_METHOD, key, {"value": value}, "a table of the run")

    def _entry(self, train: Task, test: Task, method: str, key: tuple) -> dict | None:
        """The artifacts of the store's own entry ``key`` under ``method`` for these rows."""
        stored = self.get(task_key(train, test), method, _key_knobs(key))
        return None if stored is None or stored.method != method else stored.artifacts

    def _keep(
        self, train: Task, test: Task, method: str, key: tuple, artifacts: dict, what: str
    ) -> None:
        knobs = _key_knobs(key)
        try:
            self.put(task_key(train, test), RunResult(method, knobs, {}, None, artifacts), knobs)
        except (OSError, TypeError, ValueError) as exc:
            logger.warning("Could not store %s: %s", what, exc)

    def size(self) -> int:
        """Total bytes of the runs in the writable root."""
        base = self.root / RUNS_DIR
        return sum(p.stat().st_size for p in base.rglob(f"*{SUFFIX}")) if base.is_dir() else 0


def _key_knobs(key: tuple) -> dict[str, str]:
    """A learner's or table's key as the one setting of its entry (floats by repr: 1 and 1.0
    of a float knob agree, 0.1 and 0.1000000000000001 differ)."""
    parts = [repr(float(v)) if isinstance(v, float) else v for v in key]
    return {"key": json.dumps(parts, default=str)}


def compute_and_store(
    store: RunStore | None,
    method: str | Method,
    train: Task,
    test: Task,
    knobs: Mapping[str, Any],
    extra: Mapping[str, Any] | None = None,
    function: Callable[..., RunResult] | None = None,
) -> RunResult:
    """Compute one run and keep it in ``store`` (a store that cannot be written never fails
    the run).

    ``function(train, test, **knobs, **extra)`` computes it; by default the registered
    method's ``run`` (which takes no extras). The run is stored under every knob's validated
    value (defaults filled in), as the pages look it up.
    """
    from fairengine.methods import get_method

    declared = get_method(method) if isinstance(method, str) else method
    knobs = declared.validate_knobs(dict(knobs))  # keyed by every knob's value
    with stored_fits(store):  # the unconstrained baseline is fitted once per rows and learner
        if function is None:
            result = declared.run(train, test, **knobs)
        else:
            result = function(train, test, **dict(knobs), **dict(extra or {}))
    if store is not None:
        try:
            store.put(task_key(train, test), result, knobs, extra)
        except (OSError, TypeError, ValueError) as exc:
            logger.warning("Could not store the run of %s: %s", declared.name, exc)
    return result
