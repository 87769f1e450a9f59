"""Model files: one zip per model, self-describing, checksummed, never pickled.

Layout of a ``.fairmodel`` file (a zip archive)::

    manifest.json     format, format_version, model_type, engine_version, created, metadata
                      (method, knobs, metrics, task schema and fingerprint), and the SHA-256 of
                      every other member plus of the manifest itself (``manifest_sha256``)
    state.json        the model's JSON state (its encoder, scalars, structure)
    arrays/NAME.npy   its arrays, read with ``allow_pickle=False``
    card.md           optional model card (Markdown)

Loading checks, in order: a zip archive; only expected member names and sizes; the manifest's
format and version; every checksum; a model type from the registry of exportable classes.
Anything else raises :class:`ModelFileError`. Checksums catch corruption and naive edits; they
are not a signature against a deliberate forger, which is why nothing in the file is ever
executed or unpickled.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import io
import json
import os
import re
import tempfile
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from fairengine.models.base import Model, model_type_names, resolve_model_type

FORMAT = "fairengine-model"
FORMAT_VERSION = 1
SUFFIX = ".fairmodel"
#: Largest member we inflate (guards against zip bombs).
MAX_MEMBER_BYTES = 512 * 2**20
_ARRAY_NAME = re.compile(r"^arrays/[A-Za-z0-9_.-]{1,128}\.npy$")
_FIXED_MEMBERS = {"manifest.json", "state.json", "card.md"}


class ModelFileError(ValueError):
    """A model file that is not ours, is damaged or tampered with, or names an unknown type."""


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"Cannot store {type(value).__name__} in a model file's JSON.")


def _dumps(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, indent=1, default=_json_default).encode()


def model_bytes(model: Model, *, card: str | None = None, metadata: dict | None = None) -> bytes:
    """The bytes of a model file for ``model`` (what :func:`save_model` writes)."""
    from fairengine import __version__

    if not isinstance(model, Model) or type(model).model_type not in model_type_names():
        raise TypeError(f"{type(model).__name__} is not an exportable fairengine model.")
    state, arrays = model.get_state()
    members: dict[str, bytes] = {"state.json": _dumps(state)}
    for name, array in arrays.items():
        buffer = io.BytesIO()
        np.save(buffer, np.asarray(array), allow_pickle=False)
        members[f"arrays/{name}.npy"] = buffer.getvalue()
    if card is not None:
        members["card.md"] = card.encode()
    manifest = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "model_type": type(model).model_type,
        "engine_version": __version__,
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "metadata": json.loads(_dumps(metadata or {})),
        "checksums": {name: _sha256(data) for name, data in sorted(members.items())},
    }
    manifest["manifest_sha256"] = _sha256(_dumps(manifest))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("manifest.json", _dumps(manifest))
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def save_model(
    model: Model,
    path: str | os.PathLike[str],
    *,
    card: str | None = None,
    metadata: dict | None = None,
) -> Path:
    """Write ``model`` to one self-describing file, atomically (temp file + ``os.replace``).

    Parameters
    ----------
    model : Model
        A fitted fairengine model (any registered model type).
    path : path
        Target file; ``.fairmodel`` is the conventional suffix.
    card : str, optional
        A Markdown model card stored inside the file.
    metadata : dict, optional
        JSON-able description: method, knobs, metrics, task schema, fingerprint.
    """
    path = Path(path)
    data = model_bytes(model, card=card, metadata=metadata)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


class _Verified:
    """The verified members of a model file."""

    def __init__(self, manifest: dict[str, Any], members: dict[str, bytes]) -> None:
        self.manifest = manifest
        self.members = members


def _open(source: str | os.PathLike[str] | bytes, *, members: bool) -> _Verified:
    label = "The model file" if isinstance(source, bytes) else f"Model file '{Path(source).name}'"
    try:
        raw = source if isinstance(source, bytes) else Path(source).read_bytes()
    except OSError as exc:
        raise ModelFileError(f"{label} cannot be read: {exc}") from exc
    if raw[:2] == b"\x80\x04" or raw[:1] == b"\x80":
        raise ModelFileError(
            f"{label} is a Python pickle, not a fairengine model file. fairengine never loads "
            "pickles (they can run arbitrary code)."
        )
    try:
        archive = zipfile.ZipFile(io.BytesIO(raw))
    except zipfile.BadZipFile:
        raise ModelFileError(
            f"{label} is not a fairengine model file (not a zip archive)."
        ) from None
    except (NotImplementedError, EOFError, OSError, ValueError) as exc:  # e.g. a damaged header
        raise ModelFileError(f"{label} is damaged: {exc}") from exc
    with archive:
        infos = {info.filename: info for info in archive.infolist()}
        unexpected = [n for n in infos if n not in _FIXED_MEMBERS and not _ARRAY_NAME.match(n)]
        if unexpected or "manifest.json" not in infos:
            raise ModelFileError(
                f"{label} is not a fairengine model file (unexpected content: "
                f"{', '.join(unexpected) or 'no manifest.json'})."
            )
        if any(info.file_size > MAX_MEMBER_BYTES for info in infos.values()):
            raise ModelFileError(f"{label} has a member larger than {MAX_MEMBER_BYTES} bytes.")
        wanted = infos if members else {"manifest.json": infos["manifest.json"]}
        try:
            data = {name: archive.read(name) for name in wanted}
        except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, OSError,
                ValueError) as exc:  # fmt: skip
            raise ModelFileError(f"{label} is damaged: {exc}") from exc
    manifest = _check_manifest(data["manifest.json"], label)
    if members:
        _check_members(manifest, data, label)
    return _Verified(manifest, data)


def _check_manifest(raw: bytes, label: str) -> dict[str, Any]:
    try:
        manifest = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelFileError(f"{label} has an unreadable manifest: {exc}") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ModelFileError(f"{label} is not a fairengine model file (wrong format tag).")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise ModelFileError(
            f"{label} has format version {manifest.get('format_version')!r}; this fairengine "
            f"reads version {FORMAT_VERSION}. Re-export the model with this version."
        )
    claimed = manifest.pop("manifest_sha256", None)
    if claimed != _sha256(_dumps(manifest)):
        raise ModelFileError(f"{label} failed its checksum: the manifest was modified.")
    manifest["manifest_sha256"] = claimed
    if manifest.get("model_type") not in model_type_names():
        raise ModelFileError(
            f"{label} names an unknown model type {manifest.get('model_type')!r}; known types: "
            f"{', '.join(sorted(model_type_names()))}."
        )
    return manifest


def _check_members(manifest: dict[str, Any], data: dict[str, bytes], label: str) -> None:
    checksums = manifest.get("checksums", {})
    present = set(data) - {"manifest.json"}
    if set(checksums) != present:
        raise ModelFileError(
            f"{label} failed its checksum: members were added or removed "
            f"({', '.join(sorted(set(checksums) ^ present))})."
        )
    for name in sorted(present):
        if _sha256(data[name]) != checksums[name]:
            raise ModelFileError(f"{label} failed its checksum: {name} was modified.")


def read_manifest(path: str | os.PathLike[str] | bytes) -> dict[str, Any]:
    """The verified manifest of a model file (format, type, metadata) without building the model."""
    return _open(path, members=False).manifest


def verify_model(path: str | os.PathLike[str] | bytes) -> dict[str, Any]:
    """Check every member's checksum without rebuilding the model; returns the manifest.

    Raises
    ------
    ModelFileError
        As :func:`load_model` does.
    """
    return _open(path, members=True).manifest


def load_model(path: str | os.PathLike[str] | bytes) -> Model:
    """Rebuild a model from a file written by :func:`save_model`; verifies every checksum.

    Raises
    ------
    ModelFileError
        For a file that is not a fairengine model (including a pickle under our suffix), a
        damaged or modified file, or an unknown model type.
    """
    verified = _open(path, members=True)
    cls = resolve_model_type(verified.manifest["model_type"])
    try:
        state = json.loads(verified.members["state.json"])
        arrays = {
            name[len("arrays/") : -len(".npy")]: np.load(io.BytesIO(data), allow_pickle=False)
            for name, data in verified.members.items()
            if name.startswith("arrays/")
        }
        return cls.from_state(state, arrays)
    except (KeyError, ValueError, TypeError) as exc:
        raise ModelFileError(f"The model file's content does not rebuild a model: {exc}") from exc


def read_card(path: str | os.PathLike[str] | bytes) -> str | None:
    """The model card stored in a verified model file, if any."""
    card = _open(path, members=True).members.get("card.md")
    return None if card is None else card.decode()
