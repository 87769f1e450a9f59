"""Helpers for the hostile-file tests: real model files of every type, and forging tools.

``real_files()`` picks the smallest shipped demo model file of each model type (no fitting), so
the fuzz and hostile-class tests run on real state of every type at almost no cost.
``forge(members)`` rebuilds a zip whose manifest checksums are recomputed, as a deliberate forger
would, so the tests reach the checks behind the checksums.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path

from fairengine.data.registry import assets_dir
from fairengine.export.files import _dumps


def real_files() -> dict[str, Path]:
    """Model type → the smallest shipped demo model file of that type."""
    best: dict[str, Path] = {}
    for path in sorted((assets_dir() / "frontiers").glob("*/*/*.fairmodel")):
        with zipfile.ZipFile(path) as archive:
            model_type = json.loads(archive.read("manifest.json"))["model_type"]
        if model_type not in best or path.stat().st_size < best[model_type].stat().st_size:
            best[model_type] = path
    return best


def members_of(raw: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(raw)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def zip_bytes(
    members: dict[str, bytes] | list[tuple[str, bytes]], *, deflate: bool = True
) -> bytes:
    items = members.items() if isinstance(members, dict) else members
    buffer = io.BytesIO()
    method = zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED
    with zipfile.ZipFile(buffer, "w", compression=method) as archive:
        for name, data in items:
            archive.writestr(name, data)
    return buffer.getvalue()


def forge(
    members: dict[str, bytes], manifest: dict | None = None, *, raw_manifest: bytes | None = None
) -> bytes:
    """A zip of ``members`` with the manifest's checksums recomputed (``raw_manifest`` overrides
    the manifest bytes entirely)."""
    members = dict(members)
    if raw_manifest is None:
        manifest = dict(manifest or json.loads(members["manifest.json"]))
        manifest.pop("manifest_sha256", None)
        manifest["checksums"] = {
            n: hashlib.sha256(d).hexdigest()
            for n, d in sorted(members.items())
            if n != "manifest.json"
        }
        manifest["manifest_sha256"] = hashlib.sha256(_dumps(manifest)).hexdigest()
        raw_manifest = json.dumps(manifest).encode()
    members["manifest.json"] = raw_manifest
    return zip_bytes(members)


def npy_bytes(descr: str, shape: tuple, payload: bytes = b"") -> bytes:
    """A ``.npy`` file with a hand-written header (any declared shape / dtype)."""
    header = f"{{'descr': {descr!r}, 'fortran_order': False, 'shape': {shape!r}, }}"
    header = header + " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + payload
