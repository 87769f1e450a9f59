"""The on-disk FrontierStore: every computed frontier point kept as a downloadable model file.

Design notes: docs/architecture.md, "The frontier store".
"""

from __future__ import annotations

import contextlib
import logging
import math
import operator
import os
import re
import stat
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import fairengine
from fairengine import settings
from fairengine.export import ModelFileError, load_model, model_bytes, read_manifest, verify_model
from fairengine.frontier.keys import point_key, task_key
from fairengine.frontier.trust import Roots, entry_problem, make_dirs, write_signed
from fairengine.methods.base import Method, RunResult

__all__ = ["CachedPoint", "FrontierStore", "point_key", "task_key"]

logger = logging.getLogger("fairengine.frontier")

CACHE_ENV = "FAIRENGINE_CACHE"
SUFFIX = ".fairmodel"
_TASK_DIR = 20
_FILE_KEY = 32
_METHOD_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")
_TASK_DIR_NAME = re.compile(r"^[0-9a-f]{20}$")
#: Temp files (of writers that were killed) older than this many seconds are removed.
TEMP_MAX_AGE = 600.0


@dataclass(frozen=True)
class CachedPoint:
    """One stored frontier point, read from its manifest (the model is loaded on demand).

    Attributes
    ----------
    key : str
        Full store key.
    method : str
    knobs : dict
        Every knob's value.
    metrics : dict
        ``{"train": {...}, "test": {...}}``.
    elapsed : float
        Fit seconds of the original run.
    path : pathlib.Path
        The model file (also a downloadable model).
    manifest : dict
        The verified manifest of the file.
    """

    key: str
    method: str
    knobs: dict[str, Any]
    metrics: dict[str, dict[str, float]]
    elapsed: float
    path: Path
    manifest: dict[str, Any] = field(repr=False)

    @property
    def point_id(self) -> str:
        """Short id (first 12 hex characters of the key), as in ``Frontier.points``."""
        return self.key[:12]

    def model(self) -> Any:
        """Load the point's model (verifying every checksum)."""
        return load_model(self.path)

    @property
    def evidence(self) -> dict[str, Any] | None:
        """The stored checks and baselines (``{"checks": [...], "baselines": {...}}``), or None
        for a point stored before results carried them."""
        found = self.manifest.get("metadata", {}).get("evidence")
        return found if isinstance(found, dict) else None


class FrontierStore(Roots):
    """On-disk cache of frontier points keyed by (task, method, knobs, engine version).

    Parameters
    ----------
    root : path, optional
        The writable root. Default: ``$FAIRENGINE_CACHE`` if set, else the platform cache
        directory (``platformdirs.user_cache_dir("fairengine")``).
    read_only : sequence of path
        Extra roots searched after ``root``, only ever read (e.g. the shipped demo frontiers in
        ``assets/frontiers/``).

    Examples
    --------
    >>> store = FrontierStore("/tmp/fairengine-cache")  # doctest: +SKIP
    >>> store.points(task_key(train, test), "reweighing")  # doctest: +SKIP
    """

    def __init__(
        self,
        root: str | os.PathLike[str] | None = None,
        *,
        read_only: Sequence[str | os.PathLike[str]] = (),
    ) -> None:
        if root is None:
            import platformdirs

            root = settings.current().cache or platformdirs.user_cache_dir("fairengine")
        super().__init__(root, read_only=read_only)

    def __repr__(self) -> str:
        extra = f", read_only={[str(p) for p in self.read_only]}" if self.read_only else ""
        return f"FrontierStore({str(self.root)!r}{extra})"

    # -- keys and paths -----------------------------------------------------------------------

    def key(self, task_key: str, method: str | Method, knobs: Mapping[str, Any]) -> str:
        """The full store key of a point (see :func:`point_key`)."""
        return point_key(task_key, method, knobs)

    def path(self, task_key: str, method: str, key: str, *, root: Path | None = None) -> Path:
        """Where the entry with ``key`` lives under ``root`` (default: the writable root)."""
        if not _METHOD_NAME.match(method):
            raise ValueError(f"Method name {method!r} cannot be used as a store directory.")
        base = self.root if root is None else root
        return base / task_key[:_TASK_DIR] / method / f"{key[:_FILE_KEY]}{SUFFIX}"

    # -- reading ------------------------------------------------------------------------------

    def get(
        self, task_key: str, method: str | Method, knobs: Mapping[str, Any]
    ) -> CachedPoint | None:
        """The stored point of ``method`` (a name, or a :class:`Method` not to look up), or None
        if absent, damaged or unreadable (never raises for those).

        A damaged entry in the writable root is deleted (and logged); one in a read-only root
        is skipped.
        """
        key = self.key(task_key, method, knobs)
        name = method if isinstance(method, str) else method.name
        for root in self._roots():
            path = self.path(task_key, name, key, root=root)
            if not is_regular_file(path) or not self._trusted(root, path):
                continue
            point = self._point(path, root, verify=True, key=key)
            if point is not None:
                return point
        return None

    def points(self, task_key: str, method: str | None = None) -> list[CachedPoint]:
        """Every stored point of a task (all methods, or one), from the manifests only.

        Only entries :meth:`get` would serve are listed (so none of an older engine version). The
        writable root is read first; an entry stored in several roots is listed once. Points are
        ordered by method, then knob values.
        """
        found: dict[str, CachedPoint] = {}
        for root in self._roots():
            if root is self.root:
                self._clean_temps(root / task_key[:_TASK_DIR])
            for path in self._entry_files(root, task_key, method):
                point = self._point(path, root, verify=False)
                # Same key as get() would compute: this task, this engine version.
                if (
                    point is not None
                    and point.key not in found
                    and point.key == self.key(task_key, point.method, point.knobs)
                ):
                    found[point.key] = point
        return sorted(found.values(), key=lambda p: (p.method, _sort_key(p.knobs), p.key))

    def methods(self, task_key: str) -> list[str]:
        """Names of the methods with at least one stored point (see :meth:`points`), sorted."""
        return sorted({point.method for point in self.points(task_key)})

    # -- writing ------------------------------------------------------------------------------

    def put(
        self,
        task_key: str,
        result: RunResult,
        metadata: Mapping[str, Any],
        *,
        knobs: Mapping[str, Any] | None = None,
        card: str | None = None,
        method: Method | None = None,
    ) -> Path:
        """Store a run as a model file (atomically) and return its path.

        Parameters
        ----------
        task_key : str
        result : RunResult
            The run; its ``model`` must be exportable.
        metadata : mapping
            What :func:`fairengine.export.result_metadata` returns (method, knobs, metrics, task
            schema); a ``store`` section is added.
        knobs : mapping, optional
            The knob values the point is keyed by (default ``result.knobs``).
        card : str, optional
            Markdown model card stored in the file.
        method : Method, optional
            The method of ``result`` when the caller holds it (its version is in the key);
            default: the registered method called ``result.method``.
        """
        knobs = dict(result.knobs if knobs is None else knobs)
        key = self.key(task_key, result.method if method is None else method, knobs)
        meta = dict(metadata)
        meta.setdefault("method", result.method)
        meta["knobs"] = knobs
        meta.setdefault("metrics", result.metrics)
        meta["store"] = {
            "key": key,
            "task_key": task_key,
            "engine_version": fairengine.__version__,
            "elapsed": float(result.elapsed),
        }
        path = self.path(task_key, result.method, key)
        if not self._trusted(self.root, path.parent):
            raise PermissionError(self.notices[-1])
        make_dirs(path.parent)
        self._clean_temps(path.parent.parent)
        return write_signed(path, model_bytes(result.model, card=card, metadata=meta))

    def load(self, point: CachedPoint) -> Any | None:
        """The point's model, or None if its file turns out damaged (then dropped with a notice).

        :meth:`points` reads manifests only; this verifies the signature and every checksum of
        the bytes it then loads.
        """
        root = next((r for r in self._roots() if point.path.is_relative_to(r)), None)
        return None if root is None else self._read(point.path, root, load_model)

    def clear(self, task_key: str | None = None) -> int:
        """Delete stored entries (of one task, or all) from the writable root; return how many.

        Only files of the store's own layout are removed, never anything else under the root,
        and never anything in a read-only root.
        """
        removed = 0
        try:
            if not self.root.is_dir():
                return 0
            if task_key is None:
                task_dirs = [d for d in self.root.iterdir() if _TASK_DIR_NAME.match(d.name)]
            else:
                task_dirs = [self.root / task_key[:_TASK_DIR]]
            for task_dir in (d for d in task_dirs if d.is_dir()):
                for method_dir in (d for d in task_dir.iterdir() if d.is_dir()):
                    for path in method_dir.iterdir():
                        # save_model's temp files: ".<name>.<random>.tmp" next to the target
                        temp = path.name.startswith(".") and path.name.endswith(".tmp")
                        if path.name.endswith(SUFFIX) or temp:
                            path.unlink(missing_ok=True)
                            removed += path.name.endswith(SUFFIX)
                    with contextlib.suppress(OSError):  # not empty, or already gone
                        method_dir.rmdir()
                with contextlib.suppress(OSError):
                    task_dir.rmdir()
        except OSError as exc:  # a read-only or foreign root: say so, never raise
            self._notice(
                f"Could not clear the frontier cache in {self.root} ({exc.strerror or exc}); "
                f"{removed} entr{'y' if removed == 1 else 'ies'} removed."
            )
        return removed

    # -- internals ----------------------------------------------------------------------------

    def _roots(self) -> list[Path]:
        """The roots to read: those no other user can write (see :mod:`.trust`)."""
        return [root for root in (self.root, *self.read_only) if self._trusted(root)]

    def _entry_files(self, root: Path, task_key: str, method: str | None) -> Iterator[Path]:
        task_dir = root / task_key[:_TASK_DIR]
        if not task_dir.is_dir():
            return iter(())
        pattern = f"{method}/*{SUFFIX}" if method is not None else f"*/*{SUFFIX}"
        paths = sorted(p for p in task_dir.glob(pattern) if is_regular_file(p))
        return iter(p for p in paths if self._trusted(root, p, below_only=True))

    def _clean_temps(self, task_dir: Path) -> None:
        """Remove temp files older than :data:`TEMP_MAX_AGE` (left by killed writers)."""
        cutoff = time.time() - TEMP_MAX_AGE
        with contextlib.suppress(OSError):
            for path in task_dir.glob("*/.*.tmp"):
                with contextlib.suppress(OSError):
                    info = path.lstat()
                    if stat.S_ISREG(info.st_mode) and info.st_mtime < cutoff:
                        path.unlink()

    def _read(self, path: Path, root: Path, parse: Callable[[bytes], Any]) -> Any | None:
        """``parse`` of the entry's bytes once they are signed by this install (or shipped);
        None for an entry that is gone, unreadable, foreign or damaged (then dropped)."""
        try:
            before, raw = read_regular_file(path)
        except FileNotFoundError:
            return None  # removed by a concurrent clear()
        except OSError as exc:
            logger.warning("Cannot read frontier cache entry %s: %s", path, exc)
            return None
        try:
            problem = entry_problem(root, path, raw)
            if problem is not None:
                raise _Unsigned(problem)
            return parse(raw)
        except Exception as exc:
            # Any failure to read an entry is a miss, never an error: besides ModelFileError a
            # damaged zip can raise zlib.error, EOFError or NotImplementedError from zipfile.
            self._discard(path, before, root is self.root, exc)
            return None

    def _point(self, path: Path, root: Path, *, verify: bool, key: str | None = None) -> Any:
        """The :class:`CachedPoint` of the entry at ``path`` (see :meth:`_read`), its checksums
        verified with ``verify``, holding ``key`` when one is given."""

        def parse(raw: bytes) -> CachedPoint:
            manifest = verify_model(raw) if verify else read_manifest(raw)
            point = _point_from_manifest(path, manifest)
            if key is not None and point.key != key:
                raise ModelFileError(f"holds key {point.key[:12]}, expected {key[:12]}")
            return point

        return self._read(path, root, parse)

    def _discard(self, path: Path, before: os.stat_result, writable: bool, exc: Exception) -> None:
        if isinstance(exc, PermissionError):  # the signing key is unusable: keep every entry
            if str(exc) not in self.notices:
                self._notice(str(exc))
            return
        if isinstance(exc, _Unsigned):  # one sentence for all of them: a cache may hold many
            kind = "frontier cache" if writable else "read-only frontier"
            logger.warning("Refused a %s entry (damaged, or not ours) %s: %s", kind, path, exc)
            text = (
                "Some cached results were not used: they are not signed by this install (written "
                "by an older version, or by someone else). They are recomputed when needed."
            )
            if text not in self.notices:
                self.notices.append(text)
        elif not writable:
            self._notice(f"Skipped a damaged read-only frontier entry {path.name}: {exc}")
        else:
            self._notice(
                f"Dropped a damaged frontier cache entry {path.name} ({exc}); it is recomputed "
                "when needed."
            )
        with contextlib.suppress(OSError):
            # Only delete the very file we read: a concurrent writer may have replaced it.
            if writable and _identity(path.stat()) == _identity(before):
                path.unlink()


#: What tells a file apart from one written in its place.
_identity = operator.attrgetter("st_ino", "st_size", "st_mtime_ns")


class _Unsigned(ModelFileError):
    """An entry neither signed with this install's key nor shipped (the reason as its text)."""


def _point_from_manifest(path: Path, manifest: dict[str, Any]) -> CachedPoint:
    meta = manifest["metadata"]
    store = meta["store"]
    metrics = meta["metrics"]
    if not isinstance(metrics, dict) or not isinstance(meta["knobs"], dict):
        raise ValueError("metadata without knobs or metrics")
    return CachedPoint(
        key=str(store["key"]),
        method=str(meta["method"]),
        knobs=dict(meta["knobs"]),
        # a metric the data leave undefined (a rate of a class never predicted) is NaN, which a
        # manifest stores as null
        metrics={
            s: {m: math.nan if v is None else float(v) for m, v in values.items()}
            for s, values in metrics.items()
        },
        elapsed=float(store.get("elapsed", meta.get("elapsed_seconds", 0.0))),
        path=path,
        manifest=manifest,
    )


def _sort_key(knobs: Mapping[str, Any]) -> tuple:
    return tuple(
        (name, 0, float(v), "")
        if isinstance(v, int | float) and not isinstance(v, bool)
        else (name, 1, 0.0, str(v))
        for name, v in sorted(knobs.items())
    )


def is_regular_file(path: Path) -> bool:
    """A regular file (not a FIFO, device, directory or dangling link); never opens it."""
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except OSError:
        return False


def read_regular_file(path: Path, *, max_bytes: int | None = None) -> tuple[os.stat_result, bytes]:
    """Stat and read a file, refusing (OSError) anything that is not a regular file, or that
    has more than ``max_bytes`` bytes (checked before reading).

    Opened non-blocking and checked with fstat, so a FIFO swapped in after the listing cannot
    block the reader.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{path} is not a regular file")
        if max_bytes is not None and info.st_size > max_bytes:
            raise OSError(f"{path} has {info.st_size:,} bytes; the limit is {max_bytes:,}")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read() if max_bytes is None else handle.read(max_bytes + 1)
        if max_bytes is not None and len(data) > max_bytes:  # grew after the fstat
            raise OSError(f"{path} has more than {max_bytes:,} bytes")
        return info, data
    finally:
        os.close(fd)
