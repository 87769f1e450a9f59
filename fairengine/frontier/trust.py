"""Which cache folders and entries this process may read: no folder another user can write,
no entry this install did not sign (or the package does not ship).

Design notes: docs/architecture.md, "Which cache folders and entries are read".
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import secrets
import stat
import tempfile
from collections.abc import Sequence
from pathlib import Path

from fairengine import settings


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


class Roots:
    """A store's writable root and read-only roots, each read only where no other user can
    plant files; ``notices`` holds the sentences about what was not used (for the user, each
    once, newest last)."""

    def __init__(
        self, root: str | os.PathLike[str], *, read_only: Sequence[str | os.PathLike[str]] = ()
    ) -> None:
        self.root = Path(root).expanduser()
        if isinstance(read_only, str | os.PathLike):
            read_only = (read_only,)
        roots = (Path(r).expanduser() for r in read_only)
        self.read_only = tuple(p for p in roots if p.resolve() != self.root.resolve())
        self.notices: list[str] = []

    def _trusted(self, root: Path, path: Path | None = None, *, below_only: bool = False) -> bool:
        """Whether ``root`` may be read (it and every folder above it, both as written and with
        symbolic links resolved, pass :func:`_problem`; not checked with ``below_only``), and
        ``path`` below it (every folder from ``root`` down to it, and itself); if not, say so
        once."""
        folders: list[Path] = []
        if not below_only:
            starts = (Path(root).expanduser().absolute(), Path(root).expanduser().resolve())
            folders = list(dict.fromkeys(p for start in starts for p in (start, *start.parents)))
        problem = next(filter(None, map(_problem, folders)), None)
        if problem is None and path is not None:
            try:
                parts = Path(path).relative_to(root).parts
                below = (Path(root).joinpath(*parts[: i + 1]) for i in range(len(parts)))
                problem = next(filter(None, map(_problem, below)), None)
            except ValueError:
                problem = f"{path} is not inside {root}"
        if problem is None:
            return True
        text = (
            f"Cached results in {root} are not used: {problem}, so another user could plant "
            "files there. Use a folder only you can write (set FAIRENGINE_CACHE)."
        )
        if text not in self.notices:
            self._notice(text)
        return False

    def _notice(self, text: str) -> None:
        logging.getLogger("fairengine.frontier").warning("%s", text)
        self.notices.append(text)


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


# -- signatures ------------------------------------------------------------------------------------

#: Where the signing key is kept (a file of 32 random bytes): this variable, else
#: ``signing.key`` in the platform's config folder (``platformdirs.user_config_dir``).
KEY_ENV = "FAIRENGINE_KEY_FILE"
KEY_BYTES = 32
#: The shipped demo files' digests, ``{"files": {"<path below the demo folder>": sha256}}``.
SHIPPED_DIGESTS = Path(__file__).resolve().parent / "shipped_digests.json"
_SIGNATURE_TAG = b"fairengine-hmac-sha256:"
_SIGNATURE_BYTES = len(_SIGNATURE_TAG) + 64
_EOCD = b"PK\x05\x06"
_EOCD_BYTES = 22
_KEYS: dict[Path, bytes] = {}
_SHIPPED: dict[str, dict[str, str]] = {}


def signing_key() -> bytes:
    """This install's signing key, created (``0600``, in a ``0700`` folder) on first use.

    Raises
    ------
    PermissionError
        If the key cannot be made or read, or is not a regular file of this user's that only
        this user can read and write (the message says what to do).
    """
    import platformdirs

    configured = settings.current().key_file
    folder = platformdirs.user_config_dir("fairengine")
    path = Path(configured).expanduser() if configured else Path(folder) / "signing.key"
    if path in _KEYS:
        return _KEYS[path]
    try:
        if not path.exists():
            _create_key(path)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:  # a read-only home, a link: say what to do, never a damaged entry
        raise PermissionError(
            f"The signing key {path} cannot be made or read ({exc.strerror or exc}): set "
            f"{KEY_ENV} to a file only you can write, outside the cache folder."
        ) from None
    try:
        info = os.fstat(fd)
        loose = hasattr(os, "geteuid") and (
            info.st_uid != os.geteuid() or info.st_mode & (stat.S_IRWXG | stat.S_IRWXO)
        )
        if not stat.S_ISREG(info.st_mode) or loose:
            raise PermissionError(
                f"The signing key {path} must be a file only you can read and write "
                f"(chmod 600 {path}), or set {KEY_ENV} to another file."
            )
        key = os.read(fd, KEY_BYTES + 1)
    finally:
        os.close(fd)
    if len(key) != KEY_BYTES:
        raise PermissionError(f"The signing key {path} is damaged: delete it to make a new one.")
    _KEYS[path] = key
    return key


def _create_key(path: Path) -> None:
    """Write a new key atomically: a concurrent first use keeps whichever key landed first."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, secrets.token_bytes(KEY_BYTES))
    finally:
        os.close(fd)
    try:
        os.link(tmp, path)  # fails if another process made the key meanwhile: keep theirs
    except FileExistsError:
        pass
    finally:
        tmp.unlink(missing_ok=True)


def _mac(data: bytes) -> bytes:
    return hmac.new(signing_key(), data, hashlib.sha256).hexdigest().encode("ascii")


def signed(data: bytes) -> bytes:
    """The zip archive ``data`` (as written, without a comment) with its signature as comment.

    Raises
    ------
    ValueError
        If ``data`` does not end with a zip end record without a comment.
    """
    end = len(data) - _EOCD_BYTES
    if end < 0 or data[end : end + 4] != _EOCD or data[-2:] != b"\0\0":
        raise ValueError("Only a zip archive without a comment can be signed.")
    comment = _SIGNATURE_TAG + _mac(data)
    return data[:-2] + len(comment).to_bytes(2, "little") + comment


def _unsigned(raw: bytes) -> tuple[bytes, bytes] | None:
    """(the archive as it was signed, the signature) of a signed entry, else None."""
    end = len(raw) - _SIGNATURE_BYTES - _EOCD_BYTES
    if end < 0 or raw[end : end + 4] != _EOCD:
        return None
    comment = raw[-_SIGNATURE_BYTES:]
    length = int.from_bytes(raw[end + _EOCD_BYTES - 2 : end + _EOCD_BYTES], "little")
    if length != _SIGNATURE_BYTES or not comment.startswith(_SIGNATURE_TAG):
        return None
    body = raw[: end + _EOCD_BYTES - 2] + b"\0\0"
    return body, comment[len(_SIGNATURE_TAG) :]


def write_signed(path: Path, data: bytes) -> Path:
    """Write the zip archive ``data`` to ``path``, signed, atomically (temp file in the same
    folder, then ``os.replace``), and return ``path``."""
    path = Path(path)
    payload = signed(data)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def entry_problem(root: Path, path: Path, raw: bytes) -> str | None:
    """Why the entry ``path`` (below ``root``) with bytes ``raw`` may not be used, or None: it
    is neither signed with this install's key nor a shipped file (see above).

    Raises
    ------
    PermissionError
        If the signing key cannot be used (see :func:`signing_key`).
    """
    try:
        relative = Path(path).relative_to(root).as_posix()
    except ValueError:
        relative = None
    shipped = shipped_digests().get(relative or "")
    if shipped is not None and shipped == hashlib.sha256(raw).hexdigest():
        return None
    found = _unsigned(raw)
    if found is None:
        return f"{Path(path).name} is not signed by this install"
    body, mac = found
    if not hmac.compare_digest(mac, _mac(body)):
        return f"{Path(path).name} has an invalid signature (damaged, or signed by another key)"
    return None


def shipped_digests() -> dict[str, str]:
    """The shipped demo files' digests (empty if the package lists none)."""
    if "files" not in _SHIPPED:
        try:
            document = json.loads(SHIPPED_DIGESTS.read_text(encoding="utf-8"))
            _SHIPPED["files"] = {str(k): str(v) for k, v in document["files"].items()}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            _SHIPPED["files"] = {}
    return _SHIPPED["files"]


def write_shipped_digests(root: Path, suffixes: tuple[str, ...]) -> int:
    """List every entry below ``root`` ending in one of ``suffixes`` in
    :data:`SHIPPED_DIGESTS` (replacing the list); return how many files are listed."""
    files = {
        path.relative_to(root).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(Path(root).rglob("*"))
        if path.is_file() and path.name.endswith(suffixes)
    }
    document = {"format": "fairengine-shipped-digests", "format_version": 1, "files": files}
    text = json.dumps(document, indent=0, sort_keys=True) + "\n"
    tmp = SHIPPED_DIGESTS.with_name(f".{SHIPPED_DIGESTS.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, SHIPPED_DIGESTS)
    _SHIPPED.clear()
    return len(files)
