"""Which cache folders this process may read: none that another user can write.

A cache file is read as data (never executed), but a folder another user can write lets that
user plant or swap entries (forged frontier points, runs). So a store reads a root only if the
root, every folder above it, and every folder from it down to an entry, is

* owned by this process's user or by the superuser, and
* not writable by every user, unless it has the sticky bit (like ``/tmp``: there nobody may
  rename or delete what another user owns, and what they create themselves fails the owner
  check one level down).

Entry files are held to the same two rules. On systems without POSIX owners (Windows) every path
passes.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["make_dirs", "path_problem", "root_problem", "untrusted_notice"]


def _problem(path: Path) -> str | None:
    """Why ``path`` may not be trusted, as a phrase (``None`` if it may, or does not exist)."""
    if not hasattr(os, "geteuid"):
        return None
    try:
        info = path.stat()
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"{path} cannot be checked ({exc.strerror or exc})"
    if info.st_uid not in (os.geteuid(), 0):
        return f"{path} belongs to another user (uid {info.st_uid})"
    if info.st_mode & stat.S_IWOTH and not info.st_mode & stat.S_ISVTX:
        return f"{path} is writable by every user (mode {stat.S_IMODE(info.st_mode):o})"
    return None


def root_problem(root: Path) -> str | None:
    """Why the store root ``root`` may not be read, or None: the root and every folder above it
    (both as written and with symbolic links resolved) pass the rules of this module."""
    root = Path(root).expanduser()
    seen: set[Path] = set()
    for start in (root.absolute(), root.resolve()):
        for path in (start, *start.parents):
            if path in seen:
                continue
            seen.add(path)
            problem = _problem(path)
            if problem is not None:
                return problem
    return None


def path_problem(root: Path, path: Path) -> str | None:
    """Why ``path`` (below the trusted ``root``) may not be read, or None: every folder from
    ``root`` down to ``path``, and ``path`` itself, pass the rules of this module."""
    try:
        parts = Path(path).relative_to(root).parts
    except ValueError:
        return f"{path} is not inside {root}"
    current = Path(root)
    for part in parts:
        current = current / part
        problem = _problem(current)
        if problem is not None:
            return problem
    return None


def untrusted_notice(root: Path, problem: str) -> str:
    """The sentence a store reports for a root (or an entry below it) it does not use."""
    return (
        f"Cached results in {root} are not used: {problem}, so another user could plant files "
        "there. Use a folder only you can write (set FAIRENGINE_CACHE)."
    )


def make_dirs(path: Path) -> None:
    """Create ``path`` and its missing parents as ``0o755`` (less if the umask says so), so a
    store never makes a folder every user can write (one it would then refuse to read)."""
    missing = []
    current = Path(path)
    while not current.exists() and current != current.parent:
        missing.append(current)
        current = current.parent
    for folder in reversed(missing):
        folder.mkdir(mode=0o755, exist_ok=True)
