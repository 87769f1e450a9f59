"""Run files: a whole :class:`~fairengine.methods.base.RunResult` as data, never pickled.

Design notes: docs/architecture.md, "Run files".
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import re
import zipfile
from collections.abc import Iterator
from typing import Any

from fairengine.export import safe
from fairengine.frontier.runbuild import Decoder
from fairengine.frontier.runnodes import Encoder, RunFileError, register_dataclass, run_fields
from fairengine.methods.base import RunResult
from fairengine.models import schema_rules

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "RunFileError",
    "decode_run",
    "encode_run",
    "register_dataclass",
    "stored_key",
]

FORMAT = "fairengine-run"
FORMAT_VERSION = 1
_MEMBER = re.compile(r"^(arrays/[0-9]{1,6}\.npy|models/[0-9]{1,6}\.fairmodel)$")
_SHA256 = re.compile(r"[0-9a-f]{64}")


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _dumps(value: Any, *, sort_keys: bool = True) -> bytes:
    """Compact JSON; the run's own dicts keep their order (``sort_keys=False``)."""
    return json.dumps(value, sort_keys=sort_keys, separators=(",", ":"), allow_nan=False).encode()


def encode_run(result: RunResult, key: str) -> bytes:
    """The bytes of a run file holding ``result`` under ``key``.

    Raises
    ------
    TypeError
        If any field holds something a run file cannot store (the message says where), or the
        run is beyond the limits a reader accepts.
    """
    from fairengine import __version__

    if type(result) is not RunResult:
        raise TypeError(f"encode_run stores a RunResult, not a {type(result).__name__}.")
    encoder = Encoder()
    fields = {f.name: encoder.node(getattr(result, f.name), f.name) for f in run_fields()}
    members = {"run.json": _dumps({"fields": fields}, sort_keys=False), **encoder.members}
    _check_limits(members)
    manifest: dict[str, Any] = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "key": key,
        "method": result.method,
        "engine_version": __version__,
        "checksums": {name: _sha256(data) for name, data in sorted(members.items())},
    }
    manifest["manifest_sha256"] = _sha256(_dumps(manifest))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("manifest.json", _dumps(manifest))
        for name, data in members.items():  # model files are zips already: stored as they are
            stored = zipfile.ZIP_STORED if name.startswith("models/") else zipfile.ZIP_DEFLATED
            archive.writestr(name, data, compress_type=stored)
    data = buffer.getvalue()
    if len(data) > safe.MAX_FILE_BYTES:
        raise TypeError(f"The run is too large to store ({len(data):,} bytes).")
    return data


def _check_limits(members: dict[str, bytes]) -> None:
    """Refuse to write what :func:`decode_run` would refuse to read."""
    total = sum(len(data) for data in members.values())
    if len(members) + 1 > safe.MAX_MEMBERS or total > safe.MAX_TOTAL_BYTES:
        raise TypeError(
            f"The run is too large to store ({len(members)} arrays and models, {total:,} bytes)."
        )
    for name, data in members.items():
        if len(data) > safe.MAX_MEMBER_BYTES:
            raise TypeError(f"The run is too large to store ({name} has {len(data):,} bytes).")
    depth = safe.json_depth(members["run.json"])
    if depth > safe.MAX_JSON_DEPTH or len(members["run.json"]) > safe.MAX_JSON_BYTES:
        raise TypeError(
            f"The run is nested too deeply or too large to store as JSON (depth {depth})."
        )


# ----------------------------------------------------------------------------- reading

_MANIFEST = schema_rules.obj(
    {
        "format": schema_rules.STR,
        "format_version": schema_rules.INT,
        "key": schema_rules.STR,
        "method": schema_rules.STR,
        "engine_version": schema_rules.STR,
        "checksums": schema_rules.obj({}, extra=schema_rules.STR),
        "manifest_sha256": schema_rules.STR,
    }
)


_RULES = safe.ManifestRules(FORMAT, FORMAT_VERSION, "run", _MANIFEST, _dumps, RunFileError)


def _check_manifest(raw: bytes, label: str) -> dict[str, Any]:
    manifest = safe.check_manifest(raw, label, _RULES)
    for name, digest in manifest["checksums"].items():
        if not (name == "run.json" or _MEMBER.match(name)) or not _SHA256.fullmatch(digest):
            raise RunFileError(f"{label} lists an unexpected member {name[:64]!r}.")
    return manifest


@contextlib.contextmanager
def _open(raw: bytes, label: str) -> Iterator[tuple[zipfile.ZipFile, dict, dict[str, Any]]]:
    """The open archive, its checked member infos and its verified manifest."""
    if raw[:1] == b"\x80" or raw[:2] == b"\x1f\x8b":
        raise RunFileError(f"{label} is a pickle or gzip file; run files never are.")
    with safe.open_zip(raw, label) as archive:
        infos = safe.check_infos(archive.infolist(), label)
        if "manifest.json" not in infos:
            raise RunFileError(f"{label} is not a fairengine run file (no manifest.json).")
        manifest = _check_manifest(safe.read_member(archive, infos["manifest.json"], label), label)
        yield archive, infos, manifest


def stored_key(raw: bytes, *, label: str = "The run file") -> str:
    """The key a run file is stored under, from its verified manifest (nothing else is read)."""
    with _open(raw, label) as (_, _, manifest):
        return manifest["key"]


def decode_run(raw: bytes, key: str, *, label: str = "The run file") -> RunResult:
    """The run stored in ``raw``, once the file is verified and holds ``key``.

    Raises
    ------
    RunFileError, ModelFileError
        For anything that is not an intact run file of ``key`` (see the module docstring).
    """
    with _open(raw, label) as (archive, infos, manifest):
        if manifest["key"] != key:
            raise RunFileError(f"{label} holds key {manifest['key'][:12]!r}, not {key[:12]!r}.")
        present = set(infos) - {"manifest.json"}
        if present != set(manifest["checksums"]) or "run.json" not in present:
            raise RunFileError(f"{label} failed its checksum: members were added or removed.")
        members = {name: safe.read_member(archive, infos[name], label) for name in sorted(present)}
    for name, data in members.items():
        if _sha256(data) != manifest["checksums"][name]:
            raise RunFileError(f"{label} failed its checksum: {name} was modified.")
    tree = safe.load_json(members.pop("run.json"), f"{label}'s run.json")
    decoder = Decoder(members, label)
    result = decoder.run(tree)
    if decoder.members:
        raise RunFileError(f"{label} holds members no value uses ({len(decoder.members)}).")
    if result.method != manifest["method"]:
        raise RunFileError(f"{label} holds a run of another method.")
    return result
